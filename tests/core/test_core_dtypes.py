"""dtypes: no float32 upcast by Python scalars, integers never differentiable, float16 works."""

# tapegrad.grad returns Optional tensors; these tests know which are set
# mypy: disable-error-code="union-attr"

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad as tg
from tests.core.op_cases import CASES, OpCase

SCALAR_OPS: list[tuple[str, Callable[[Any], Any]]] = [
    ("add", lambda x: x + 1.5), ("radd", lambda x: 1.5 + x), ("add_int", lambda x: x + 2),
    ("sub", lambda x: x - 0.5), ("rsub", lambda x: 0.5 - x), ("mul", lambda x: x * 2.5),
    ("rmul", lambda x: 3 * x), ("div", lambda x: x / 3.0), ("rdiv", lambda x: 3.0 / x),
    ("div_int", lambda x: x / 3), ("pow", lambda x: x ** 2.0), ("pow_int", lambda x: x ** 2),
    ("pow_neg_int", lambda x: x ** -1), ("rpow", lambda x: 2.0 ** x),
    ("maximum", lambda x: tg.maximum(x, 0.25)), ("minimum", lambda x: tg.minimum(0.25, x)),
    ("clip", lambda x: tg.clip(x, 0.0, 1.0)), ("where", lambda x: tg.where(x > 1, x, 0.0)),
    ("where_rev", lambda x: tg.where(x > 1, 0.0, x)),
    ("iadd", lambda x: _iop(x)), ("sigmoid", lambda x: tg.sigmoid(x)),
    ("relu", lambda x: tg.relu(x)), ("leaky", lambda x: tg.leaky_relu(x, negative_slope=0.1)),
    ("elu", lambda x: tg.elu(x, alpha=1.5)), ("gelu", lambda x: tg.gelu(x)),
    ("gelu_tanh", lambda x: tg.gelu(x, approximate="tanh")),
    ("softplus", lambda x: tg.softplus(x, beta=2.0)), ("mean", lambda x: tg.mean(x)),
    ("var", lambda x: tg.var(x, ddof=1)), ("std", lambda x: tg.std(x)),
    ("logsumexp", lambda x: tg.logsumexp(x)), ("softmax", lambda x: tg.softmax(x)),
    ("log_softmax", lambda x: tg.log_softmax(x)),
    ("cross_entropy", lambda x: tg.cross_entropy(tg.reshape(x, (1, 3)), np.array([1]))),
    ("mse", lambda x: tg.mse_loss(x, np.zeros(3, dtype=np.float32))),
    ("pad", lambda x: tg.pad(x, 1, constant_values=0.5)),
    ("prod", lambda x: tg.prod(x)), ("cumsum", lambda x: tg.cumsum(x)),
]


def _iop(x: Any) -> Any:
    z = x * 1.0
    z += 2.0
    z *= 0.5
    return z


@pytest.mark.parametrize("name,fn", SCALAR_OPS, ids=[s[0] for s in SCALAR_OPS])
def test_python_scalars_do_not_upcast_float32(name: str, fn: Callable[[Any], Any]) -> None:
    x = tg.tensor(np.array([0.5, 1.5, 2.5], dtype=np.float32), requires_grad=True)
    y = fn(x)
    assert y.dtype == np.float32, f"{name}: {y.dtype}"
    (g,) = tg.grad(tg.sum(y), x)
    assert g.dtype == np.float32, f"{name} gradient: {g.dtype}"
    (g2,) = tg.grad(tg.sum(fn(x)) * 1.0, x, create_graph=True)
    assert g2.dtype == np.float32


def test_gradient_dtype_follows_each_input() -> None:
    a = tg.tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    b = tg.tensor(np.array([3.0, 4.0], dtype=np.float64), requires_grad=True)
    y = a * b  # numpy rules in the core: float64 result
    assert y.dtype == np.float64
    ga, gb = tg.grad(y.sum(), [a, b])
    assert ga.dtype == np.float32 and gb.dtype == np.float64
    np.testing.assert_allclose(ga.numpy(), [3.0, 4.0])


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
def test_integer_and_bool_tensors_are_never_differentiable(dtype: Any) -> None:
    i = tg.tensor(np.array([1, 0, 1], dtype=dtype))
    x = tg.tensor([0.5, 1.5, 2.5], requires_grad=True)
    y = x * i
    assert y.requires_grad
    assert y.grad_fn.next_functions[1] == (None, 0)
    with pytest.raises(RuntimeError, match="does not require grad"):
        tg.grad(y.sum(), i)
    # ops whose result is integer or bool are never recorded
    for out in [x > 1.0, tg.cast(x, dtype=np.int64), tg.argmax(x), tg.floor(x) > 0,
                tg.equal(x, x)]:
        assert not out.requires_grad and out.grad_fn is None
    (g,) = tg.grad(y.sum(), x)
    np.testing.assert_array_equal(g.numpy(), np.array([1, 0, 1], dtype=np.float64))


def test_integer_tensor_with_python_float_follows_numpy() -> None:
    i = tg.tensor([1, 2])
    assert (i * 0.5).dtype == np.float64
    assert (i + 1).dtype == np.int64
    assert tg.mean(i).dtype == np.float64


def test_cast_back_to_float_gives_input_dtype_gradient() -> None:
    x = tg.tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    y = tg.cast(x, dtype=np.float64) ** 2
    (g,) = tg.grad(y.sum(), x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])


F16_SKIP: set[str] = set()
# cases that mix in a float64 constant array: numpy rules make the result float64
MIXED = {"rmatmul_list", "rmatmul_ndarray", "rsub_array", "pad", "flip_all"}
F16 = [c for c in CASES if c.f32 and c.name not in F16_SKIP]


@pytest.mark.parametrize("c", F16, ids=[c.name for c in F16])
def test_float16_forward_and_backward(c: OpCase) -> None:
    """float16 values and gradients agree with float64 to float16 precision."""
    fidx = [i for i, a in enumerate(c.inputs) if a.dtype.kind == "f"]
    res = {}
    for dt in (np.float64, np.float16):
        xs = [tg.tensor(a.astype(dt) if i in fidx else a, requires_grad=i in fidx)
              for i, a in enumerate(c.inputs)]
        out = c.fn(*xs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        s = tg.sum(tg.stack([tg.sum(o) for o in outs]))
        gs = tg.grad(s, [xs[i] for i in fidx], allow_unused=True)
        res[dt] = ([o.numpy() for o in outs], [None if g is None else g.numpy() for g in gs])
    (o64, g64), (o16, g16) = res[np.float64], res[np.float16]
    for a, b in zip(o16, o64):
        assert a.dtype == (np.float64 if c.name in MIXED else np.float16)
        np.testing.assert_allclose(a.astype(np.float64), b, rtol=2e-2, atol=2e-2 * (1 + np.abs(b).max()))
    for a, b in zip(g16, g64):
        if a is None or b is None:
            assert a is None and b is None
            continue
        assert a.dtype == np.float16
        np.testing.assert_allclose(a.astype(np.float64), b, rtol=3e-2,
                                   atol=3e-2 * (1 + np.abs(b).max()))


def test_float16_gradcheck_loose() -> None:
    from tapegrad.testing import gradcheck

    x = tg.tensor(np.array([0.3, -0.8, 1.1], dtype=np.float16))
    assert gradcheck(lambda t: tg.tanh(t) * t, [x], eps=1e-2, atol=5e-2, rtol=5e-2)
