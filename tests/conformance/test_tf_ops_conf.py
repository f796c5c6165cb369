"""Conformance: every op case run on tapegrad.tf and on real TensorFlow.

The same program (``case.fn(tf, *tensors)``) runs on both; forward values,
dtypes and ``tape.gradient`` results must agree (float64 and float32), and so
must the second derivatives from nested tapes.  Skipped without TensorFlow.
"""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_cases import CASES, TFCase
from tests.tf_style.tf_helpers import real_tf, run_case, run_case_second

IDS = [c.name for c in CASES]


@pytest.fixture(scope="module")
def rtf():  # type: ignore[no-untyped-def]
    return real_tf()


def _tol(dtype: type, case: TFCase) -> dict[str, float]:
    if dtype is np.float64:
        return {"rtol": 1e-9, "atol": 1e-12}
    return {"rtol": max(case.rtol32, 2e-6), "atol": 2e-6}


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_and_gradients_match_tensorflow(rtf, case: TFCase, dtype: type) -> None:  # type: ignore[no-untyped-def]
    arrays = case.astype(dtype)
    o_tg, g_tg = run_case(tg_tf, case.fn, arrays)
    o_tf, g_tf = run_case(rtf, case.fn, arrays)
    assert len(o_tg) == len(o_tf)
    for a, b in zip(o_tg, o_tf):
        assert a.shape == b.shape
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, **_tol(dtype, case))
    assert len(g_tg) == len(g_tf)
    for a, b in zip(g_tg, g_tf):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == b.dtype
            np.testing.assert_allclose(a, b, **_tol(dtype, case))


SECOND = [c for c in CASES if c.order >= 2] + [c for c in CASES if c.name == "moments"]


@pytest.mark.parametrize("case", SECOND, ids=[c.name for c in SECOND])
def test_second_derivatives_match_tensorflow(rtf, case: TFCase) -> None:  # type: ignore[no-untyped-def]
    arrays = case.astype(np.float64)
    a_tg = run_case_second(tg_tf, case.fn, arrays)
    a_tf = run_case_second(rtf, case.fn, arrays)
    for a, b in zip(a_tg, a_tf):
        if a is None or b is None:
            # one framework may prune a zero second derivative to None
            other = b if a is None else a
            if other is not None:
                np.testing.assert_allclose(other, 0.0, atol=1e-12)
            continue
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
