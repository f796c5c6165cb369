"""The l2norm primitive: value, VJP (first and second order), JVP rule and batching rule."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.ops import norms

CASES = [(None, False), (None, True), ((0,), False), ((1,), True), ((0, 1), False)]


def _x(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(3, 4))


def _fd_jvp(axis: tuple[int, ...] | None, keepdims: bool, x: np.ndarray, dx: np.ndarray,
            eps: float = 1e-6) -> np.ndarray:
    f = lambda a: np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdims))  # noqa: E731
    return (f(x + eps * dx) - f(x - eps * dx)) / (2 * eps)


@pytest.mark.parametrize("axis,keepdims", CASES)
def test_value_and_vjp_against_finite_differences(axis: tuple[int, ...] | None,
                                                  keepdims: bool) -> None:
    x = _x()
    out = norms.l2norm(tg.tensor(x), axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(out.numpy(), np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims)))
    xt = tg.tensor(x, requires_grad=True)
    (g,) = tg.grad(tg.sum(norms.l2norm(xt, axis=axis, keepdims=keepdims)), xt)
    num = np.zeros_like(x)
    eps = 1e-6
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        f = lambda a: np.sum(np.sqrt(np.sum(a * a, axis=axis)))  # noqa: E731
        num[i] = (f(x + e) - f(x - e)) / (2 * eps)
    np.testing.assert_allclose(g.numpy(), num, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("axis,keepdims", CASES)
def test_jvp_rule_against_finite_differences(axis: tuple[int, ...] | None,
                                             keepdims: bool) -> None:
    x, dx = _x(1), _x(2)
    xt = tg.tensor(x)
    out = norms._l2norm(xt, axis=norms.norm_axis(axis, 2), keepdims=keepdims)
    t = norms._l2norm.jvp(tg.tensor(dx), xt, out=out, axis=norms.norm_axis(axis, 2),
                          keepdims=keepdims)
    np.testing.assert_allclose(t.numpy(), _fd_jvp(axis, keepdims, x, dx), rtol=1e-6, atol=1e-8)


def test_jvp_and_vjp_at_zero_are_zero_not_nan() -> None:
    z = tg.tensor(np.zeros((2, 3)), requires_grad=True)
    out = norms._l2norm(z, axis=(1,), keepdims=False)
    t = norms._l2norm.jvp(tg.tensor(np.ones((2, 3))), z, out=out, axis=(1,), keepdims=False)
    assert t.tolist() == [0.0, 0.0]
    (g,) = tg.grad(tg.sum(norms.l2norm(z, axis=1)), z)
    assert g.tolist() == [[0.0] * 3] * 2
    mixed = tg.tensor(np.array([[3.0, 4.0], [0.0, 0.0]]), requires_grad=True)
    (g,) = tg.grad(tg.sum(norms.l2norm(mixed, axis=1)), mixed)
    np.testing.assert_allclose(g.numpy(), [[0.6, 0.8], [0.0, 0.0]])


def test_second_order_matches_the_analytic_hessian() -> None:
    x = np.array([3.0, 4.0])
    xt = tg.tensor(x, requires_grad=True)
    (g,) = tg.grad(norms.l2norm(xt), xt, create_graph=True)
    hess = np.stack([tg.grad(g[i], xt, retain_graph=True)[0].numpy() for i in range(2)])
    n = np.linalg.norm(x)
    np.testing.assert_allclose(hess, (np.eye(2) - np.outer(x, x) / n ** 2) / n)


@pytest.mark.parametrize("axis,keepdims", CASES)
def test_batching_rule_equals_a_loop(axis: tuple[int, ...] | None, keepdims: bool) -> None:
    xb = np.random.default_rng(3).normal(size=(5, 3, 4))
    ax = norms.norm_axis(axis, 2)
    got = norms._l2norm.batch((True,), tg.tensor(xb), axis=ax, keepdims=keepdims)
    want = np.stack([np.sqrt(np.sum(b * b, axis=axis, keepdims=keepdims)) for b in xb])
    np.testing.assert_allclose(got.numpy(), want)


def test_a_wrong_rule_would_be_caught() -> None:
    x, dx = _x(1), _x(2)
    wrong = np.sum(x * dx) / np.sqrt(np.sum(x * x)) * 2  # twice the true tangent
    assert not np.allclose(wrong, _fd_jvp(None, False, x, dx))
