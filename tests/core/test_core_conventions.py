"""Gradients at the conventional (non-differentiable) points, and the tie options."""

# tapegrad.grad returns Optional tensors; these tests know which are set
# mypy: disable-error-code="union-attr"

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad as tg


def _grads(fn: Callable[..., tg.Tensor], *arrays: Any) -> list[np.ndarray]:
    xs = [tg.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
    out = fn(*xs)
    gs = tg.grad(out.sum(), xs, allow_unused=True)
    return [np.zeros_like(x.numpy()) if g is None else g.numpy() for x, g in zip(xs, gs)]


def _torch_grads(fn: Callable[..., Any], *arrays: Any) -> list[np.ndarray]:
    torch = pytest.importorskip("torch")
    xs = [torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
    gs = torch.autograd.grad(fn(torch, *xs).sum(), xs, allow_unused=True)
    return [np.zeros(x.shape) if g is None else g.numpy() for x, g in zip(xs, gs)]


# (name, tapegrad fn, torch fn, inputs, expected gradients)
POINTS: list[tuple[str, Callable[..., Any], Callable[..., Any], list[Any], list[Any]]] = [
    ("relu_at_0", lambda x: tg.relu(x), lambda t, x: t.relu(x), [[-1.0, 0.0, 2.0]],
     [[0.0, 0.0, 1.0]]),
    ("abs_at_0", lambda x: tg.abs(x), lambda t, x: t.abs(x), [[-1.0, 0.0, 2.0]],
     [[-1.0, 0.0, 1.0]]),
    ("sign_is_flat", lambda x: tg.sign(x), lambda t, x: t.sign(x), [[-1.0, 0.0, 2.0]],
     [[0.0, 0.0, 0.0]]),
    ("sqrt_at_0", lambda x: tg.sqrt(x), lambda t, x: t.sqrt(x), [[0.0, 4.0]], [[np.inf, 0.25]]),
    ("pow_half_at_0", lambda x: x ** 0.5, lambda t, x: x ** 0.5, [[0.0, 4.0]], [[np.inf, 0.25]]),
    ("pow_square_at_0", lambda x: x ** 2, lambda t, x: x ** 2, [[0.0, -1.0]], [[0.0, -2.0]]),
    ("pow_zero_base", lambda x, y: x ** y, lambda t, x, y: x ** y, [[0.0, 1.0], [0.0, 2.0]],
     [[0.0, 2.0], [0.0, 0.0]]),
    ("leaky_relu_at_0", lambda x: tg.leaky_relu(x, negative_slope=0.1),
     lambda t, x: t.nn.functional.leaky_relu(x, 0.1), [[-1.0, 0.0, 2.0]], [[0.1, 0.1, 1.0]]),
    ("elu_at_0", lambda x: tg.elu(x, alpha=1.5), lambda t, x: t.nn.functional.elu(x, alpha=1.5),
     [[-1.0, 0.0, 2.0]], [[1.5 * np.exp(-1.0), 1.5, 1.0]]),
    ("clip_at_bounds", lambda x: tg.clip(x, -0.5, 0.7), lambda t, x: t.clamp(x, -0.5, 0.7),
     [[-0.5, 0.2, 0.7, 1.0, -2.0]], [[1.0, 1.0, 1.0, 0.0, 0.0]]),
    ("clip_tensor_bounds_at_bounds", lambda x, lo, hi: tg.clip(x, lo, hi),
     lambda t, x, lo, hi: t.clamp(x, lo, hi), [[-0.5, 0.2, 0.7, 1.0], -0.5, 0.7],
     [[1.0, 1.0, 1.0, 0.0], 0.0, 1.0]),
    ("max_ties_split", lambda x: tg.max(x), lambda t, x: t.max(x), [[1.0, 3.0, 3.0, 3.0]],
     [[0.0, 1 / 3, 1 / 3, 1 / 3]]),
    ("max_axis_ties_split", lambda x: tg.max(x, axis=1),
     lambda t, x: t.amax(x, dim=1), [[[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]],
     [[[0.0, 0.5, 0.5], [0.5, 0.5, 0.0]]]),
    ("max_axis_ties_first", lambda x: tg.max(x, axis=1, ties="first"),
     lambda t, x: t.max(x, dim=1)[0], [[[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]],
     [[[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]]),
    ("max_neg_axis_keepdims_first", lambda x: tg.max(x, axis=-2, keepdims=True, ties="first"),
     lambda t, x: t.max(x, dim=-2, keepdim=True)[0], [[[1.0, 3.0], [1.0, 3.0], [0.0, 4.0]]],
     [[[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]]),
    ("min_ties_split", lambda x: tg.min(x), lambda t, x: t.min(x), [[-1.0, -1.0, 2.0]],
     [[0.5, 0.5, 0.0]]),
    ("min_axis_ties_first", lambda x: tg.min(x, axis=0, ties="first"),
     lambda t, x: t.min(x, dim=0)[0], [[[1.0, 0.0], [1.0, 0.0]]], [[[1.0, 1.0], [0.0, 0.0]]]),
    ("maximum_ties_half", lambda x, y: tg.maximum(x, y), lambda t, x, y: t.maximum(x, y),
     [[1.0, 2.0, 3.0], [1.0, 0.0, 3.0]], [[0.5, 1.0, 0.5], [0.5, 0.0, 0.5]]),
    ("minimum_ties_half", lambda x, y: tg.minimum(x, y), lambda t, x, y: t.minimum(x, y),
     [[1.0, 2.0, 3.0], [1.0, 0.0, 3.0]], [[0.5, 0.0, 0.5], [0.5, 1.0, 0.5]]),
    ("prod_one_zero", lambda x: tg.prod(x), lambda t, x: t.prod(x), [[0.0, 3.0, 2.0]],
     [[6.0, 0.0, 0.0]]),
    ("prod_two_zeros", lambda x: tg.prod(x), lambda t, x: t.prod(x), [[0.0, 0.0, 2.0]],
     [[0.0, 0.0, 0.0]]),
    ("prod_axis_zero", lambda x: tg.prod(x, axis=1), lambda t, x: t.prod(x, dim=1),
     [[[0.0, 3.0], [2.0, 5.0]]], [[[3.0, 0.0], [5.0, 2.0]]]),
    ("where_sqrt_nan", lambda x: tg.where(x > 0, tg.sqrt(x), 0.0),
     lambda t, x: t.where(x > 0, x.sqrt(), 0.0), [[0.0, 4.0]], [[np.nan, 0.25]]),
    ("where_log_untaken", lambda x: tg.where(x > 0, tg.log(x), 0.0),
     lambda t, x: t.where(x > 0, x.log(), 0.0), [[-1.0, 2.0]], [[0.0, 0.5]]),
]


@pytest.mark.parametrize("name,fn,tfn,inputs,expected", POINTS, ids=[p[0] for p in POINTS])
def test_conventional_points(name: str, fn: Callable[..., Any], tfn: Callable[..., Any],
                             inputs: list[Any], expected: list[Any]) -> None:
    got = _grads(fn, *inputs)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, np.asarray(e, dtype=np.float64), rtol=1e-12, atol=0,
                                   err_msg=name)


@pytest.mark.parametrize("name,fn,tfn,inputs,expected", POINTS, ids=[p[0] for p in POINTS])
def test_conventional_points_match_torch(name: str, fn: Callable[..., Any],
                                         tfn: Callable[..., Any], inputs: list[Any],
                                         expected: list[Any]) -> None:
    want = _torch_grads(tfn, *inputs)
    for g, e in zip(want, expected):
        np.testing.assert_allclose(g, np.asarray(e, dtype=np.float64), rtol=1e-12, atol=0,
                                   err_msg=f"{name}: the expected value is not PyTorch's")


def test_maximum_ties_first_gives_all_to_first_argument() -> None:
    gx, gy = _grads(lambda x, y: tg.maximum(x, y, ties="first"), [1.0, 2.0, 3.0], [1.0, 0.0, 4.0])
    np.testing.assert_array_equal(gx, [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(gy, [0.0, 0.0, 1.0])
    gx, gy = _grads(lambda x, y: tg.minimum(x, y, ties="first"), [1.0, 2.0, 3.0], [1.0, 0.0, 4.0])
    np.testing.assert_array_equal(gx, [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(gy, [0.0, 1.0, 0.0])


def test_max_ties_first_whole_tensor() -> None:
    (g,) = _grads(lambda x: tg.max(x, ties="first"), [[1.0, 3.0], [3.0, 0.0]])
    np.testing.assert_array_equal(g, [[0.0, 1.0], [0.0, 0.0]])


def test_sqrt_zero_safe_gives_zero_where_incoming_grad_is_zero() -> None:
    """TensorFlow's convention: ``where(x > 0, sqrt(x), 0)`` has gradient 0 (no NaN) at 0."""
    (g,) = _grads(lambda x: tg.where(x > 0, tg.sqrt(x, zero_safe=True), 0.0), [0.0, 4.0])
    np.testing.assert_array_equal(g, [0.0, 0.25])
    (g,) = _grads(lambda x: tg.sqrt(x, zero_safe=True), [0.0, 4.0])
    np.testing.assert_array_equal(g, [np.inf, 0.25])


def test_max_ties_second_order_is_zero() -> None:
    """The tie mask is piecewise constant: the second derivative of max is 0."""
    x = tg.tensor([1.0, 3.0, 3.0], requires_grad=True)
    (g,) = tg.grad(tg.max(x) * tg.max(x), x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), [0.0, 3.0, 3.0])
    (h,) = tg.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), [0.0, 1.0, 1.0])  # d/dx (max * mask) = mask * mask


def test_relu_second_derivative_is_zero() -> None:
    x = tg.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    (g,) = tg.grad((tg.relu(x) * x).sum(), x, create_graph=True)
    np.testing.assert_array_equal(g.numpy(), [-0.0, 0.0, 4.0])
    (h,) = tg.grad(g.sum(), x)
    np.testing.assert_array_equal(h.numpy(), [0.0, 0.0, 2.0])
