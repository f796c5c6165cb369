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


def _sources_that_are_targets(tf: object) -> list[object]:
    """A source that is also a target gets that target's output gradient, watched or not."""
    import numpy as np

    def show(g: object) -> object:
        return None if g is None else np.asarray(g.numpy()).tolist()  # type: ignore[attr-defined]

    t: object
    v = tf.Variable(2.0)  # type: ignore[attr-defined]
    x = tf.constant([3.0, 4.0])  # type: ignore[attr-defined]
    out = []
    with tf.GradientTape() as t:  # type: ignore[attr-defined]
        y = v  # no op reads v
    out.append(show(t.gradient(v, v)))  # type: ignore[attr-defined]
    with tf.GradientTape() as t:  # type: ignore[attr-defined]
        pass
    out.append(show(t.gradient(x, x, output_gradients=tf.constant([2.0, 5.0]))))  # type: ignore
    with tf.GradientTape() as t:  # type: ignore[attr-defined]
        y = x * 2  # x not watched: only the identity counts
    out.append(show(t.gradient([x, y], x)))  # type: ignore[attr-defined]
    with tf.GradientTape() as t:  # type: ignore[attr-defined]
        t.watch(x)  # type: ignore[attr-defined]
        y = x * 2
    out.append(show(t.gradient([x, y], x)))  # type: ignore[attr-defined]
    return out


def test_sources_that_are_targets_as_tensorflow(rtf) -> None:  # type: ignore[no-untyped-def]
    assert _sources_that_are_targets(tg_tf) == _sources_that_are_targets(rtf)
