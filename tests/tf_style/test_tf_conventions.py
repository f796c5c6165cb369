"""Item 4: TensorFlow's conventions at non-differentiable points."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad.tf as tf
from tests.tf_style.tf_cases import CONVENTIONS, Convention


def grads_of(tfm: object, c: Convention) -> list[np.ndarray | None]:
    xs = [tfm.constant(a) for a in c.inputs]  # type: ignore[attr-defined]
    with tfm.GradientTape() as tape:  # type: ignore[attr-defined]
        for x in xs:
            tape.watch(x)
        y = c.fn(tfm, *xs)
        assert not np.any(np.isnan(np.asarray(y.numpy()))) or c.name == "norm_at_zero" \
            or c.name.startswith("pow")
    return [None if g is None else np.asarray(g.numpy()) for g in tape.gradient(y, xs)]


@pytest.mark.parametrize("c", CONVENTIONS, ids=[c.name for c in CONVENTIONS])
def test_convention(c: Convention) -> None:
    gs = grads_of(tf, c)
    for g, e in zip(gs, c.expected):
        assert g is not None
        np.testing.assert_allclose(g, np.asarray(e, dtype=np.float32), rtol=1e-6, atol=1e-7)


def test_where_gives_no_nan_where_torch_would() -> None:
    x = tf.constant([0.0, 1.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.where(x > 0, tf.sqrt(x), 0.0)
    g = tape.gradient(y, x).numpy()
    assert not np.any(np.isnan(g)) and g[0] == 0.0
