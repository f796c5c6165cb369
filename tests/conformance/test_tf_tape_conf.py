"""Conformance: tape semantics, item-3 tools and error types on tapegrad.tf vs TensorFlow.

Each program in ``tests/tf_style/tf_programs.py`` runs on both; the results (values,
``None`` where TensorFlow gives ``None``, the structure of nests, exception
class names) must match.  Skipped without TensorFlow.
"""

from __future__ import annotations

import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_cases import CONVENTIONS, Convention
from tests.tf_style.tf_helpers import real_tf
from tests.tf_style.tf_programs import OWN_WORDING, PROGRAMS, run, same

NAMES = sorted(PROGRAMS)


@pytest.fixture(scope="module")
def rtf():  # type: ignore[no-untyped-def]
    return real_tf()


@pytest.mark.parametrize("name", NAMES)
def test_program_matches_tensorflow(rtf, name: str) -> None:  # type: ignore[no-untyped-def]
    ours = run(tg_tf, name)
    theirs = run(rtf, name)
    if name in OWN_WORDING:
        assert ours[0] == "raises" and theirs[0] == "raises"
        assert ours[1] == "TypeError"
        return
    assert same(ours, theirs), f"\ntapegrad:   {ours!r}\ntensorflow: {theirs!r}"
    if isinstance(ours, tuple) and ours[:1] == ("raises",):
        # str(e) is TensorFlow's, "{{function_node ...}}" prefix included; the hint is a note
        assert ours[2] == theirs[2], (ours[2], theirs[2])



def _conv_grads(tfm: object, c: Convention) -> list[object]:
    xs = [tfm.constant(a) for a in c.inputs]  # type: ignore[attr-defined]
    with tfm.GradientTape() as tape:  # type: ignore[attr-defined]
        for x in xs:
            tape.watch(x)
        y = c.fn(tfm, *xs)
    return [y.numpy(), [None if g is None else g.numpy() for g in tape.gradient(y, xs)]]


@pytest.mark.parametrize("c", CONVENTIONS, ids=[c.name for c in CONVENTIONS])
def test_convention_matches_tensorflow(rtf, c: Convention) -> None:  # type: ignore[no-untyped-def]
    ours = _conv_grads(tg_tf, c)
    theirs = _conv_grads(rtf, c)
    assert same(ours, theirs, rtol=1e-6, atol=1e-7), f"\n{ours!r}\n{theirs!r}"
