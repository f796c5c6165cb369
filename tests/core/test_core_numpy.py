"""NumPy interop: ufuncs and array functions on tensors dispatch to tapegrad ops."""

# tapegrad.grad returns Optional tensors; these tests know which are set
# mypy: disable-error-code="union-attr"

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.testing import gradcheck

A = np.array([[0.5, -1.2, 2.0], [1.5, 0.3, -0.7]])
B = np.array([[0.4, 1.1], [-0.9, 0.2], [1.3, -0.6]])
P = np.array([[0.5, 1.2, 2.0], [1.5, 0.3, 0.7]])

# (name, function applied to tensors through numpy, the same on arrays, inputs)
CALLS: list[tuple[str, Callable[..., Any], list[np.ndarray]]] = [
    ("exp", lambda a: np.exp(a), [A]),
    ("log", lambda a: np.log(a), [P]),
    ("sqrt", lambda a: np.sqrt(a), [P]),
    ("tanh", lambda a: np.tanh(a), [A]),
    ("sin_cos", lambda a: np.sin(a) * np.cos(a), [A]),
    ("square_abs", lambda a: np.square(a) + np.abs(a), [A]),
    ("negative", lambda a: np.negative(a), [A]),
    ("add_array", lambda a: np.add(a, B.T), [A]),
    ("multiply", lambda a, b: np.multiply(a, b), [A, P]),
    ("divide", lambda a, b: np.divide(a, b), [A, P]),
    ("power", lambda a: np.power(a, 3), [A]),
    ("maximum", lambda a, b: np.maximum(a, b), [A, P + 0.05]),
    ("sum_axis0", lambda a: np.sum(a, axis=0), [A]),
    ("sum_all", lambda a: np.sum(a * a), [A]),
    ("add_reduce", lambda a: np.add.reduce(a * a, axis=1), [A]),
    ("mean_keepdims", lambda a: np.mean(a * a, axis=1, keepdims=True), [A]),
    ("max", lambda a: np.max(a, axis=1), [A]),
    ("prod", lambda a: np.prod(a), [A]),
    ("var_std", lambda a: np.var(a, axis=0) + np.std(a), [A]),
    ("matmul", lambda a, b: np.matmul(a, b), [A, B]),
    ("matmul_operator_ndarray_left", lambda b: A @ b, [B]),
    ("dot", lambda a, b: np.dot(a, b), [A, B]),
    ("einsum", lambda a, b: np.einsum("ij,jk->ik", a, b), [A, B]),
    ("transpose", lambda a: np.transpose(a) * B, [A]),
    ("reshape", lambda a: np.reshape(a, (3, 2)) * B, [A]),
    ("concatenate", lambda a: np.concatenate([a, a * a], axis=1), [A]),
    ("stack", lambda a, b: np.stack([a, b]), [A, P]),
    ("where", lambda a: np.where(A > 0, a, 2.0 * a), [A]),
    ("clip", lambda a: np.clip(a * 1.0, -1.0, 1.0), [A]),
    ("cumsum", lambda a: np.cumsum(a, axis=1), [A]),
    ("take", lambda a: np.take(a, [0, 2, 2], axis=1), [A]),
    ("flip_pad", lambda a: np.pad(np.flip(a, 0), 1), [A]),
    ("expand_squeeze", lambda a: np.squeeze(np.expand_dims(a, 0)) * 2.0, [A]),
]


@pytest.mark.parametrize("name,fn,inputs", CALLS, ids=[c[0] for c in CALLS])
def test_numpy_call_on_tensor_is_recorded(name: str, fn: Callable[..., Any],
                                          inputs: list[np.ndarray]) -> None:
    xs = [tg.tensor(a, requires_grad=True) for a in inputs]
    out = fn(*xs)
    assert isinstance(out, tg.Tensor), f"{name} returned {type(out).__name__}"
    assert out.requires_grad and out.grad_fn is not None
    np.testing.assert_allclose(out.numpy(), fn(*inputs), rtol=1e-12)
    assert gradcheck(fn, [tg.tensor(a) for a in inputs], order=2)


def test_asarray_of_tensor() -> None:
    t = tg.tensor([[1.0, 2.0], [3.0, 4.0]])
    a = np.asarray(t)
    assert isinstance(a, np.ndarray)
    np.testing.assert_array_equal(a, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.array(t, dtype=np.float32), a.astype(np.float32))
    np.testing.assert_array_equal(np.asarray(t * 2), 2 * a)


def test_numpy_results_match_the_op_namespace() -> None:
    x = tg.tensor(A, requires_grad=True)
    y = tg.tensor(B, requires_grad=True)
    z = np.exp(x) @ y
    gx1, gy1 = tg.grad(np.sum(z, axis=0).sum(), [x, y])
    z2 = tg.matmul(tg.exp(x), y)
    gx2, gy2 = tg.grad(tg.sum(z2), [x, y])
    np.testing.assert_allclose(gx1.numpy(), gx2.numpy())
    np.testing.assert_allclose(gy1.numpy(), gy2.numpy())


def test_ufunc_with_out_falls_back_to_arrays() -> None:
    x = tg.tensor([1.0, 2.0])
    out = np.empty(2)
    res = np.multiply(x, 2.0, out=out)
    assert res is out
    np.testing.assert_array_equal(out, [2.0, 4.0])


def test_unmapped_numpy_function_works_on_the_data() -> None:
    x = tg.tensor([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(np.sort(x), [1.0, 2.0, 3.0])
    assert np.allclose(x, [3.0, 1.0, 2.0])
