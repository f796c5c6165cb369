"""Bad input: a clear exception of the framework's type, and nothing changed."""

# tapegrad.grad returns Optional tensors; these tests know which are set
# mypy: disable-error-code="union-attr"

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad as tg


@pytest.mark.parametrize(
    "data",
    ["abc", ["1", "2"], [object(), 1.0], [[1.0, 2.0], [3.0]], {"a": 1.0}, None,
     np.array(["x"]), np.array([1, "a"], dtype=object)],
    ids=["str", "str-list", "object", "ragged", "dict", "none", "str-array", "object-array"],
)
def test_non_numeric_data_is_a_type_error(data: Any) -> None:
    with pytest.raises(TypeError, match="tensor"):
        tg.tensor(data)


def test_non_numeric_operand_is_a_type_error() -> None:
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError):
        x + "abc"
    with pytest.raises(TypeError):
        tg.exp("abc")
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])


BINARY: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("add", lambda a, b: a + b),
    ("radd", lambda a, b: b.numpy() + a),
    ("subtract", lambda a, b: a - b),
    ("multiply", lambda a, b: a * b),
    ("divide", lambda a, b: a / b),
    ("power", lambda a, b: a ** b),
    ("maximum", lambda a, b: tg.maximum(a, b)),
    ("minimum", lambda a, b: tg.minimum(a, b)),
    ("where", lambda a, b: tg.where(a > 0, a, b)),
    ("less", lambda a, b: a < b),
    ("clip", lambda a, b: tg.clip(a, b, None)),
]


@pytest.mark.parametrize("name,fn", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("sa,sb,dim", [((3,), (4,), 0), ((2, 3), (4,), 1), ((3, 4), (4, 5), 1)])
def test_shape_mismatch_names_both_shapes(name: str, fn: Callable[[Any, Any], Any],
                                          sa: tuple[int, ...], sb: tuple[int, ...],
                                          dim: int) -> None:
    a = tg.tensor(np.ones(sa), requires_grad=True)
    b = tg.tensor(np.ones(sb), requires_grad=True)
    with pytest.raises(RuntimeError) as ei:
        fn(a, b)
    msg = str(ei.value)
    assert "must match the size of tensor b" in msg
    assert f"at non-singleton dimension {dim}" in msg
    hint = getattr(ei.value, "__notes__", [])[0]   # PyTorch's message names sizes; the hint names both shapes
    assert str(list(sa)) in hint and str(list(sb)) in hint, hint
    assert a.grad is None and b.grad is None and a._vc[0] == 0


def test_shape_mismatch_matches_torch_wording() -> None:
    torch = pytest.importorskip("torch")
    for sa, sb in [((3,), (4,)), ((2, 3), (4,)), ((3, 4), (4, 5)), ((2, 1, 3), (4, 2))]:
        with pytest.raises(RuntimeError) as mine:
            tg.tensor(np.ones(sa)) * tg.tensor(np.ones(sb))
        with pytest.raises(RuntimeError) as theirs:
            torch.ones(sa) * torch.ones(sb)
        assert str(mine.value).splitlines()[0] == str(theirs.value)


def test_other_shape_errors_name_the_shapes() -> None:
    a = tg.tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"):
        a @ a
    with pytest.raises(RuntimeError, match=r"shape '\[4, 2\]' is invalid for input of size 6"):
        tg.reshape(a, (4, 2))
    with pytest.raises(RuntimeError, match=r"cannot broadcast shape \[2, 3\] to \[4, 3\]"):
        tg.broadcast_to(a, (4, 3))
    with pytest.raises(RuntimeError, match=r"Sizes of tensors must match except in dimension 0"):
        tg.concatenate([a, tg.tensor(np.ones((2, 4)))])
    with pytest.raises(RuntimeError, match="both arguments to matmul need to be at least 1D"):
        tg.matmul(a, tg.tensor(2.0))


def test_inplace_shape_mismatch_changes_nothing() -> None:
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = x * 1.0
    node = z.grad_fn
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        z += tg.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        z += tg.tensor(np.ones((2, 3)))
    np.testing.assert_array_equal(z.numpy(), [1.0, 2.0, 3.0])
    assert z._vc[0] == 0 and z.grad_fn is node
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 1.0])


@pytest.mark.parametrize("data", [[1, 2], [True, False], np.arange(3, dtype=np.int32)],
                         ids=["int64", "bool", "int32"])
def test_requires_grad_on_integers_raises(data: Any) -> None:
    msg = "Only Tensors of floating point and complex dtype can require gradients"
    with pytest.raises(RuntimeError, match=msg):
        tg.tensor(data, requires_grad=True)
    t = tg.tensor(data)
    with pytest.raises(RuntimeError, match=msg):
        t.requires_grad_()
    with pytest.raises(RuntimeError, match=msg):
        t.requires_grad = True
    assert not t.requires_grad


def test_wrong_grad_outputs_shape() -> None:
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    with pytest.raises(RuntimeError, match="but output"):
        tg.grad(y, x, grad_outputs=np.ones((2, 1)))
    with pytest.raises(RuntimeError, match="one grad_output per output"):
        tg.grad(y, x, grad_outputs=[np.ones(2), np.ones(2)])
    assert x.grad is None
    (g,) = tg.grad(y, x, grad_outputs=np.ones(2))  # graph still intact
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])


def test_grad_wrt_tensor_without_grad_raises() -> None:
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    c = tg.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        tg.grad((x * c).sum(), c)
    with pytest.raises(TypeError, match="inputs must be tensors"):
        tg.grad((x * c).sum(), [np.ones(2)])


def test_bad_axis_and_index() -> None:
    x = tg.tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(IndexError, match="Dimension out of range"):
        tg.sum(x, axis=2)
    with pytest.raises(IndexError, match=r"shape \[2, 3\]"):
        x[5]
    with pytest.raises(IndexError, match="out of bounds"):
        tg.cross_entropy(x, np.array([0, 3]))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        tg.mse_loss(x, x, reduction="avg")


def test_requires_grad_false_on_non_leaf_raises() -> None:
    x = tg.tensor([1.0], requires_grad=True)
    y = x * 2.0
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf"):
        y.requires_grad = False
    assert y.requires_grad
