"""VJP fast paths: with grad mode off (a first-order backward pass) VJPs compute on
raw arrays; with ``create_graph`` they run as recorded ops.  Both must give the
same gradients, and the recorded path must stay right at higher orders."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.testing import gradcheck

RNG = np.random.default_rng(7)
A = RNG.standard_normal((5, 4))
B = RNG.standard_normal((4, 3))
V = RNG.standard_normal(4)
W = RNG.uniform(0.5, 1.5, (5, 4))

CASES: dict[str, tuple[Callable[..., Any], list[np.ndarray]]] = {
    "pow2_sum": (lambda a: tg.sum(a ** 2), [A]),
    "pow2_mean": (lambda a: tg.mean(a ** 2), [A]),
    "pow2_weighted": (lambda a, w: tg.sum((a ** 2) * w), [A, W]),
    "pow2_axis_sum": (lambda a: tg.sum(tg.sum(a ** 2, axis=1) ** 2), [A]),
    "pow3": (lambda a: tg.sum(a ** 3), [A]),
    "pow_neg1": (lambda w: tg.sum(w ** -1), [W]),
    "pow_half": (lambda w: tg.mean(w ** 0.5, axis=0).sum(), [W]),
    "pow_1": (lambda a: tg.sum((a ** 1) * a), [A]),
    "square": (lambda a: tg.mean(tg.square(a)), [A]),
    "tanh": (lambda a: tg.sum(tg.tanh(a) * a), [A]),
    "sigmoid": (lambda a: tg.sum(tg.sigmoid(a) * a), [A]),
    "relu": (lambda a, w: tg.sum(tg.relu(a) * w), [A, W]),
    "exp_neg": (lambda a: tg.sum(-tg.exp(a) * a), [A]),
    "softmax": (lambda a, w: tg.sum(tg.softmax(a, axis=1) * w), [A, W]),
    "log_softmax": (lambda a, w: tg.sum(tg.log_softmax(a, axis=0) * w), [A, W]),
    "cross_entropy": (lambda a: tg.cross_entropy(a, np.array([0, 3, 1, 2, 1])), [A]),
    "mean_axis_keep": (lambda a: tg.sum(tg.mean(a * a, axis=1, keepdims=True) * a), [A]),
    "mm_bias": (lambda a, b, v: tg.sum((a @ b + v[:3]) ** 2), [A, B, V]),
    "mv": (lambda a, v: tg.sum(tg.tanh(a @ v)), [A, V]),
    "vm": (lambda v, b: tg.sum(tg.sin(v @ b)), [V, B]),
    "inner": (lambda v: tg.sum(v @ v), [V]),
    # 0-d operands: ufuncs return NumPy scalars there
    "pow2_0d": (lambda s: s ** 2 * s, [np.array(1.3)]),
    "pow3_0d": (lambda s: s ** 3, [np.array(1.3)]),
    "tanh_0d": (lambda s: tg.tanh(s) * s, [np.array(0.4)]),
    "sigmoid_0d": (lambda s: tg.sigmoid(s) * s, [np.array(0.4)]),
    "exp_log_softmax_0d": (lambda s: tg.exp(s) * tg.log_softmax(tg.reshape(s, (1,)))[0], [np.array(0.4)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_raw_path_matches_recorded_path(name: str, dtype: Any) -> None:
    fn, arrays = CASES[name]
    xs = [tg.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    raw = tg.grad(fn(*xs), xs)  # grad mode off in backward: raw arrays
    rec = tg.grad(fn(*xs), xs, create_graph=True)  # recorded ops
    for r, c in zip(raw, rec):
        assert r is not None and c is not None
        assert r.dtype == c.dtype and r.shape == c.shape
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(r.numpy(), c.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_path_ops_second_order(name: str) -> None:
    fn, arrays = CASES[name]
    assert gradcheck(fn, [tg.tensor(a) for a in arrays], order=2)


@pytest.mark.parametrize("name", ["pow2_sum", "pow3", "tanh", "mv"])
def test_fast_path_ops_third_order(name: str) -> None:
    fn, arrays = CASES[name]
    assert gradcheck(fn, [tg.tensor(a) for a in arrays], order=3)


def test_pow2_broadcast_cotangent_overflow() -> None:
    # g * (2 x) with a huge repeated g: 2 g overflows, g * (2 x) does not
    x = tg.tensor(np.array([0.1, -0.2, 0.0], dtype=np.float32), requires_grad=True)
    seed = tg.tensor(np.float32(3e38))
    (gx,) = tg.grad(tg.sum(x ** 2), x, grad_outputs=seed)
    expected = np.float32(3e38) * (x.numpy() * np.float32(2))
    np.testing.assert_array_equal(gx.numpy(), expected)


def test_pow2_matches_finite_differences_float64() -> None:
    x = tg.tensor(RNG.standard_normal(6), requires_grad=True)
    (g,) = tg.grad(tg.mean(x ** 2), x)
    np.testing.assert_allclose(g.numpy(), 2 * x.numpy() / 6, rtol=1e-15)
    (g1,) = tg.grad(tg.sum(x ** 2), x, create_graph=True)
    (h,) = tg.grad(tg.sum(g1 * g1), x)  # d/dx sum((2x)^2) = 8x
    np.testing.assert_allclose(h.numpy(), 8 * x.numpy(), rtol=1e-15)


def test_tanh_double_backward_is_one_node() -> None:
    x = tg.tensor(RNG.standard_normal(3), requires_grad=True)
    (g,) = tg.grad(tg.sum(tg.tanh(x)), x, create_graph=True)
    assert g.grad_fn.op.key == "tanh_backward"  # one node (PyTorch: TanhBackwardBackward0)
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(g.numpy(), 1 - t * t, rtol=1e-14)
    (h,) = tg.grad(tg.sum(g), x)
    np.testing.assert_allclose(h.numpy(), -2 * t * (1 - t * t), rtol=1e-12)



def _xent_composite(z: Any, x: Any, axis: int) -> Any:
    return -tg.sum(z * tg.log_softmax(x, axis=axis), axis=axis)


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_cross_entropy_op_matches_composite(axis: int, dtype: Any) -> None:
    from tapegrad.ops import softmax_cross_entropy_with_logits as xent

    x = tg.tensor(A.astype(dtype), requires_grad=True)
    z = tg.tensor(np.abs(W).astype(dtype), requires_grad=True)  # unnormalised labels too
    fused, comp = xent(z, x, axis=axis), _xent_composite(z, x, axis)
    assert fused.grad_fn.op.key == "softmax_cross_entropy"  # one node
    np.testing.assert_array_equal(fused.numpy(), comp.numpy())
    u = tg.tensor(RNG.standard_normal(fused.shape).astype(dtype))
    for create in (False, True):
        gf = tg.grad(tg.sum(fused * u), [x, z], create_graph=create, retain_graph=True)
        gc = tg.grad(tg.sum(comp * u), [x, z], create_graph=create, retain_graph=True)
        for a, b in zip(gf, gc):
            tol = 1e-6 if dtype == np.float32 else 1e-14
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol)
    assert gradcheck(lambda z_, x_: xent(z_, x_, axis=axis), [tg.tensor(np.abs(W)), tg.tensor(A)],
                     order=3)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_integer_targets_one_pick_node(reduction: str) -> None:
    x3 = RNG.standard_normal((2, 4, 3))  # (N, C, d): class axis 1
    t3 = np.array([[0, 3, 1], [2, 2, 0]])

    def fn(x: Any) -> Any:
        return tg.sum(tg.cross_entropy(x, t3, axis=1, reduction=reduction) * 1.5)

    x = tg.tensor(x3, requires_grad=True)
    loss = tg.cross_entropy(x, t3, axis=1, reduction=reduction)
    assert loss.grad_fn.op.key == "nll_loss"  # one node
    lp = x3 - np.log(np.exp(x3).sum(axis=1, keepdims=True))
    picked = -np.take_along_axis(lp, t3[:, None, :], axis=1)[:, 0, :]
    want = {"mean": picked.mean(), "sum": picked.sum(), "none": picked}[reduction]
    np.testing.assert_allclose(loss.numpy(), want, rtol=1e-12)
    (g_raw,) = tg.grad(fn(x), x)
    (g_rec,) = tg.grad(fn(x), x, create_graph=True)
    np.testing.assert_allclose(g_raw.numpy(), g_rec.numpy(), rtol=1e-14, atol=1e-15)
    assert gradcheck(fn, [tg.tensor(x3)], order=2)


def test_cross_entropy_bad_reduction_and_target() -> None:
    x = tg.tensor(A, requires_grad=True)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        tg.cross_entropy(x, np.array([0, 1, 2, 3, 0]), reduction="avg")
    with pytest.raises(IndexError, match="out of bounds"):
        tg.cross_entropy(x, np.array([0, 1, 2, 4, 0]))
