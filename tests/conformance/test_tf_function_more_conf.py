"""More ``tf.function`` scenarios on tapegrad and on real TensorFlow 2.21: pruning of
unused ops, error types and texts (``in user code:``, ``Graph execution error:``, static
shape errors), symbolic tensors and None dimensions, Variables as arguments, iterating over
tensors, zero-iteration loops, ``ConcreteFunction.graph``: trace counts, values,
gradients, exception types and ``str(e)`` (normalized: the function number, the test
runner's frames)."""

from __future__ import annotations

from typing import Any

import pytest

import tapegrad.tf as tg
from tests.tf_style import tf_function_more_cases as cases
from tests.tf_style.tf_helpers import real_tf

pytest.importorskip("tensorflow")


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _same(a: Any, b: Any, path: str = "") -> None:
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for k in a:
            _same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-6), path
    else:
        assert a == b, path


@pytest.mark.filterwarnings("ignore:tf.function.first_set_inside.:RuntimeWarning")
@pytest.mark.parametrize("name", sorted(cases.SCENARIOS))
def test_same_as_tensorflow(rtf: Any, name: str) -> None:
    mine, real = cases.SCENARIOS[name](tg), cases.SCENARIOS[name](rtf)
    _same(mine, real, name)
