"""Property tests: random broadcastable shapes and random op compositions vs finite differences."""

# tapegrad.grad returns Optional tensors; these tests know which are set
# mypy: disable-error-code="union-attr"

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import mutually_broadcastable_shapes  # noqa: E402

import tapegrad as tg  # noqa: E402
from tapegrad.testing import gradcheck  # noqa: E402

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)

# binary ops, each with the input transform that keeps it differentiable
BINARY: dict[str, tuple[Callable[[Any, Any], Any], Callable[[np.ndarray], np.ndarray],
                        Callable[[np.ndarray], np.ndarray]]] = {
    "add": (lambda a, b: a + b, lambda v: v, lambda v: v),
    "subtract": (lambda a, b: a - b, lambda v: v, lambda v: v),
    "multiply": (lambda a, b: a * b, lambda v: v, lambda v: v),
    "divide": (lambda a, b: a / b, lambda v: v, lambda v: np.abs(v) + 0.5),
    "power": (lambda a, b: a ** b, lambda v: np.abs(v) + 0.5, lambda v: v),
    "maximum": (lambda a, b: tg.maximum(a, b), lambda v: v, lambda v: v + 0.37),
    "minimum": (lambda a, b: tg.minimum(a, b), lambda v: v, lambda v: v - 0.37),
    "where": (lambda a, b: tg.where(a > b, a * b, a - b), lambda v: v, lambda v: v + 0.37),
    "hypot": (lambda a, b: tg.sqrt(a * a + b * b + 0.1), lambda v: v, lambda v: v),
}


@st.composite
def binary_case(draw: Any) -> tuple[str, list[np.ndarray]]:
    name = draw(st.sampled_from(sorted(BINARY)))
    shapes = draw(mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    _, ta, tb = BINARY[name]
    a, b = (rng.uniform(-1.5, 1.5, s) for s in shapes.input_shapes)
    return name, [ta(a), tb(b)]


@SETTINGS
@given(binary_case())
def test_binary_ops_on_broadcastable_shapes(case: tuple[str, list[np.ndarray]]) -> None:
    name, arrays = case
    fn = BINARY[name][0]
    xs = [tg.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*xs)
    assert out.shape == np.broadcast_shapes(*(a.shape for a in arrays))
    gs = tg.grad(tg.sum(out * out), xs, allow_unused=True)
    for g, a in zip(gs, arrays):
        assert g is None or g.shape == a.shape  # summed back to each input's shape
    assert gradcheck(fn, [tg.tensor(a) for a in arrays], order=2)


UNARY: dict[str, Callable[[Any], Any]] = {
    "sin": tg.sin, "tanh": tg.tanh, "sigmoid": tg.sigmoid, "softplus": tg.softplus,
    "gelu": tg.gelu, "square": tg.square, "exp_small": lambda t: tg.exp(t * 0.3),
    "log_cosh": lambda t: tg.log(tg.cos(t * 0.5) + 2.0), "scale": lambda t: t * 1.7 - 0.2,
    "sqrt_pos": lambda t: tg.sqrt(t * t + 0.5), "elu": lambda t: tg.elu(t + 0.05),
    "cube": lambda t: t ** 3 * 0.3, "cumsum": lambda t: tg.cumsum(t, axis=-1) * 0.5,
    "flip": lambda t: tg.flip(t, axis=0) * t, "softmax": lambda t: tg.softmax(t, axis=-1),
    "log_softmax": lambda t: tg.log_softmax(t, axis=0),
    "normalize": lambda t: (t - tg.mean(t, axis=-1, keepdims=True)) * 0.9,
    "transpose_mul": lambda t: tg.transpose(t) * 0.5 if t.ndim == 2 else t,
    "pad_slice": lambda t: tg.pad(t, 1)[tuple(slice(1, -1) for _ in range(t.ndim))] * 2.0,
}
REDUCE: dict[str, Callable[[Any, int, bool], Any]] = {
    "sum": lambda t, ax, kd: tg.sum(t, axis=ax, keepdims=kd),
    "mean": lambda t, ax, kd: tg.mean(t, axis=ax, keepdims=kd),
    "logsumexp": lambda t, ax, kd: tg.logsumexp(t, axis=ax, keepdims=kd),
    "var": lambda t, ax, kd: tg.var(t, axis=ax, keepdims=kd),
    "prod": lambda t, ax, kd: tg.prod(t * 0.5 + 1.0, axis=ax, keepdims=kd),
    "max": lambda t, ax, kd: tg.max(t, axis=ax, keepdims=kd),
    "min": lambda t, ax, kd: tg.min(t, axis=ax, keepdims=kd),
}


@st.composite
def composition(draw: Any) -> tuple[list[str], str, int, bool, np.ndarray]:
    chain = draw(st.lists(st.sampled_from(sorted(UNARY)), min_size=1, max_size=4))
    red = draw(st.sampled_from(sorted(REDUCE)))
    shape = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    keepdims = draw(st.booleans())
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    # distinct values (no max/min ties anywhere along the chain's monotone steps)
    x = ((rng.permutation(n) - n / 2) * 0.3 + rng.uniform(-0.05, 0.05, n)).reshape(shape)
    return chain, red, axis, keepdims, x


def _compose(chain: list[str], red: str, axis: int, keepdims: bool) -> Callable[[Any], Any]:
    def f(t: Any) -> Any:
        for name in chain:
            t = UNARY[name](t)
        return REDUCE[red](t, axis, keepdims)

    return f


@SETTINGS
@given(composition())
def test_random_compositions_against_finite_differences(
        case: tuple[list[str], str, int, bool, np.ndarray]) -> None:
    chain, red, axis, keepdims, x = case
    fn = _compose(chain, red, axis, keepdims)
    with tg.no_grad():
        vals = fn(tg.tensor(x)).numpy()
    if red in ("max", "min"):
        # a tie created by the chain (e.g. square of +-v) makes max non-differentiable
        with tg.no_grad():
            inner = tg.tensor(x)
            for name in chain:
                inner = UNARY[name](inner)
        arr = np.sort(np.moveaxis(inner.numpy(), axis, -1), axis=-1)
        if arr.shape[-1] > 1 and np.min(np.abs(np.diff(arr, axis=-1))) < 1e-3:
            return
    assert np.all(np.isfinite(vals))
    assert gradcheck(fn, [tg.tensor(x)], order=2)


@SETTINGS
@given(st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple), st.data())
def test_sum_to_inverts_broadcast_to(shape: tuple[int, ...], data: Any) -> None:
    extra = data.draw(st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple))
    target = extra + tuple(data.draw(st.sampled_from([s, 2])) if s == 1 else s for s in shape)
    x = tg.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)
    y = tg.broadcast_to(x, target)
    assert y.shape == target
    (g,) = tg.grad(tg.sum(y * y), x)
    reps = int(np.prod(target)) // max(int(np.prod(shape)), 1)
    np.testing.assert_allclose(g.numpy(), 2 * reps * x.numpy())
