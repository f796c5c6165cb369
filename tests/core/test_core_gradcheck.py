"""The checker itself: a wrong VJP must fail it, at first and at second order."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad as tg
from tapegrad._core.registry import defop
from tapegrad.testing import GradcheckError, gradcheck, gradgradcheck

X = [tg.tensor(np.array([0.3, -1.1, 0.8, 2.0]))]


# right at every order, written in tapegrad ops
@defop("good_sin", saves=("x",))
def good_sin(x: Any) -> Any:
    return np.sin(x)


@good_sin.defvjp
def _(g: tg.Tensor, x: tg.Tensor) -> Any:  # d sin = cos dx
    return (g * tg.cos(x),)


# wrong at first order: the sign of the derivative is flipped
@defop("bad_sin_order1", saves=("x",))
def bad_sin_order1(x: Any) -> Any:
    return np.sin(x)


@bad_sin_order1.defvjp
def _(g: tg.Tensor, x: tg.Tensor) -> Any:
    return (g * -tg.cos(x),)


# right at first order but computed in numpy: the backward pass is not differentiable
@defop("numpy_vjp_sin", saves=("x",))
def numpy_vjp_sin(x: Any) -> Any:
    return np.sin(x)


@numpy_vjp_sin.defvjp
def _(g: tg.Tensor, x: tg.Tensor) -> Any:
    return (tg.tensor(g.numpy() * np.cos(x.numpy())),)


# right at first order, in tapegrad ops, but through a helper op whose own VJP is wrong:
# the second derivative is wrong
@defop("bad_cos", saves=("x",))
def bad_cos(x: Any) -> Any:
    return np.cos(x)


@bad_cos.defvjp
def _(g: tg.Tensor, x: tg.Tensor) -> Any:
    return (g * tg.sin(x),)  # should be -sin


@defop("bad_sin_order2", saves=("x",))
def bad_sin_order2(x: Any) -> Any:
    return np.sin(x)


@bad_sin_order2.defvjp
def _(g: tg.Tensor, x: tg.Tensor) -> Any:
    return (g * bad_cos(x),)


# right at orders 1 and 2, wrong at 3: the helper's helper is wrong
@defop("bad_neg_sin", saves=("x",))
def bad_neg_sin(x: Any) -> Any:
    return -np.sin(x)


@bad_neg_sin.defvjp
def _(g: tg.Tensor, x: tg.Tensor) -> Any:
    return (g * tg.cos(x),)  # should be -cos


@defop("cos3", saves=("x",))
def cos3(x: Any) -> Any:
    return np.cos(x)


@cos3.defvjp
def _(g: tg.Tensor, x: tg.Tensor) -> Any:
    return (g * bad_neg_sin(x),)


@defop("bad_sin_order3", saves=("x",))
def bad_sin_order3(x: Any) -> Any:
    return np.sin(x)


@bad_sin_order3.defvjp
def _(g: tg.Tensor, x: tg.Tensor) -> Any:
    return (g * cos3(x),)


# a binary op that forgets the second input's gradient
@defop("bad_mul", saves=("x", "y"), needs=True)
def bad_mul(x: Any, y: Any) -> Any:
    return np.multiply(x, y)


@bad_mul.defvjp
def _(g: tg.Tensor, x: tg.Tensor, y: tg.Tensor, needs: tuple[bool, ...]) -> Any:
    return g * y, None


def test_correct_op_passes_orders_1_to_3() -> None:
    assert gradcheck(good_sin, X, order=1)
    assert gradcheck(good_sin, X, order=2)
    assert gradcheck(good_sin, X, order=3)
    assert gradgradcheck(good_sin, X)


def test_wrong_first_derivative_fails_at_order_1() -> None:
    with pytest.raises(GradcheckError, match="order 1"):
        gradcheck(bad_sin_order1, X, order=1)
    assert gradcheck(bad_sin_order1, X, raise_exception=False) is False


def test_backward_outside_tapegrad_ops_fails_at_order_2() -> None:
    assert gradcheck(numpy_vjp_sin, X, order=1)
    with pytest.raises(GradcheckError):
        gradcheck(numpy_vjp_sin, X, order=2)


def test_wrong_second_derivative_fails_at_order_2() -> None:
    assert gradcheck(bad_sin_order2, X, order=1)
    with pytest.raises(GradcheckError):
        gradcheck(bad_sin_order2, X, order=2)


def test_wrong_third_derivative_fails_at_order_3() -> None:
    assert gradcheck(bad_sin_order3, X, order=2)
    with pytest.raises(GradcheckError):
        gradcheck(bad_sin_order3, X, order=3)


def test_missing_input_gradient_fails() -> None:
    a = tg.tensor(np.array([1.0, 2.0]))
    b = tg.tensor(np.array([0.5, -0.3]))
    with pytest.raises(GradcheckError):
        gradcheck(bad_mul, [a, b])
    assert gradcheck(bad_mul, [a, b.detach().numpy().astype(np.int64)])  # int input: constant


def test_wrong_vjp_inside_a_composition_fails() -> None:
    with pytest.raises(GradcheckError):
        gradcheck(lambda t: tg.exp(bad_sin_order1(t * 2.0)).sum(), X)


def test_gradcheck_with_several_outputs_and_float32() -> None:
    x32 = tg.tensor(np.array([0.3, -1.1, 0.8], dtype=np.float32))
    assert gradcheck(lambda t: [tg.sin(t), t * t], [x32], order=2)
    with pytest.raises(GradcheckError):
        gradcheck(lambda t: [tg.sin(t), bad_sin_order1(t)], [x32])
