"""PyTorch's exceptions and messages from ``torch.autograd.functional`` and ``torch.func``
on bad input (texts as PyTorch 2.13 raises them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import tapegrad.torch as torch

AF = torch.autograd.functional
X = torch.tensor([1.0, 2.0, 3.0])

CASES: list[tuple[Callable[[], Any], type[Exception], str]] = [
    (lambda: AF.jvp(lambda v: v * 2, X, torch.ones(2)), RuntimeError,
     "v has invalid size: should be torch.Size([3]) but got torch.Size([2])."),
    (lambda: AF.vjp(lambda v: v.sum(), X, torch.ones(2)), RuntimeError,
     "v has invalid size: should be torch.Size([]) but got torch.Size([2])."),
    (lambda: AF.vjp(lambda a, b: (a, b), (X, X), (X,)), RuntimeError,
     "v is a tuple of invalid length: should be 2 but got 1."),
    (lambda: AF.jvp(lambda a, b: a * b, (X, X), (X, torch.ones(2))), RuntimeError,
     "Entry 1 in v has invalid size: should be torch.Size([3]) but got torch.Size([2])."),
    (lambda: AF.hessian(lambda v: v * 2, X), RuntimeError,
     "The Tensor returned by the function given to hessian should contain a single element"),
    (lambda: AF.hvp(lambda v: v, X, X), RuntimeError,
     "The Tensor returned by the function given to hvp should contain a single element"),
    (lambda: AF.vhp(lambda v: (v.sum(), v.sum()), X, X), RuntimeError,
     "The function given to vhp should return a single Tensor"),
    (lambda: AF.jacobian(lambda v: 3.0, X), TypeError,
     "The outputs of the user-provided function given to jacobian must be either a Tensor or "
     "a tuple of Tensors but the given outputs of the user-provided function has type "
     "<class 'float'>."),
    (lambda: AF.jacobian(lambda v: v, [X]), TypeError,
     "The inputs given to jacobian must be either a Tensor or a tuple of Tensors but the "
     "given inputs has type <class 'list'>."),
    (lambda: AF.jacobian(lambda v: (v, 1), X), TypeError,
     "The outputs of the user-provided function given to jacobian must be either a Tensor or "
     "a tuple of Tensors but the value at index 1 has type <class 'int'>."),
    (lambda: AF.jacobian(lambda v: torch.ones(2), X, strict=True, vectorize=True),
     RuntimeError, "Output 0 of the user-provided function does not require gradients."),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_functional_errors(i: int) -> None:
    fn, exc, msg = CASES[i]
    with pytest.raises(exc) as e:
        fn()
    assert str(e.value).startswith(msg), str(e.value)


def _ident(a: Any) -> Any:
    return a


V_CASES: list[tuple[Callable[[], Any], type[Exception], str]] = [
    (lambda: torch.vmap(_ident, in_dims=(0, 0))(torch.ones(2)), ValueError,
     "vmap(_ident, in_dims=(0, 0), ...)(<inputs>): in_dims is not compatible with the "
     "structure of `inputs`. in_dims has structure TreeSpec(tuple, None, [*,\n  *]) but "
     "inputs has structure TreeSpec(tuple, None, [*])."),
    (lambda: torch.vmap(_ident, in_dims=({"x": 0},))({"x": torch.ones(2), "y": torch.ones(2)}),
     ValueError, "in_dims has structure TreeSpec(tuple, None, [TreeSpec(dict, ['x'], [*])]) "
     "but inputs has structure TreeSpec(tuple, None, [TreeSpec(dict, ['x', 'y'], [*,\n    "
     "*])])."),
    (lambda: torch.vmap(_ident, in_dims=([0, 0],))((torch.ones(2), torch.ones(2))), ValueError,
     "in_dims has structure TreeSpec(tuple, None, [TreeSpec(list, None, [*,\n    *])])"),
    (lambda: torch.vmap(_ident, out_dims=(0, 0))(torch.ones(2)), ValueError,
     "vmap(_ident, ..., out_dims=(0, 0))(<inputs>): out_dims is not compatible with the "
     "structure of `outputs`. out_dims has structure TreeSpec(tuple, None, [*,\n  *]) but "
     "outputs has structure *."),
    (lambda: torch.vmap(_ident, out_dims=2)(torch.ones(2, 3)), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda: torch.vmap(lambda a: a.sum(), out_dims=1)(torch.ones(2, 3)), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    (lambda: torch.vmap(_ident, out_dims=None)(torch.ones(2, 3)), ValueError,
     "vmap(_ident, ...): `_ident` can not return a BatchedTensor when out_dim is None"),
    (lambda: torch.vmap(_ident, out_dims="x")(torch.ones(2)), ValueError,
     "vmap(_ident, ..., out_dims=x): `out_dims` must be an int, None or a python collection"),
    (lambda: torch.vmap(_ident, in_dims="x")(torch.ones(2)), ValueError,
     "vmap(_ident, in_dims=x, ...)(<inputs>): expected `in_dims` to be int or a (potentially "
     "nested) tuple matching the structure of inputs, got: <class 'str'>."),
    (lambda: torch.vmap(lambda: 1)(), ValueError,
     "vmap(<lambda>)(<inputs>): got no inputs. Maybe you forgot to add inputs"),
    (lambda: torch.vmap(lambda a, b: a, in_dims=(None, None))(torch.ones(2), torch.ones(2)),
     ValueError, "vmap: Expected at least one Tensor to vmap over"),
    (lambda: torch.vmap(_ident, chunk_size=1.5)(torch.ones(2)), TypeError,
     "can't multiply sequence by non-int of type 'float'"),
]


@pytest.mark.parametrize("i", range(len(V_CASES)))
def test_vmap_errors(i: int) -> None:
    fn, exc, msg = V_CASES[i]
    with pytest.raises(exc) as e:
        fn()
    assert msg in str(e.value), str(e.value)


def test_vmap_out_dims_that_work() -> None:
    x = torch.arange(6.0).reshape(2, 3)
    a, s = torch.vmap(lambda v: (v * 2, v.sum()), out_dims=(1, 0))(x)
    assert a.shape == (3, 2) and s.tolist() == [3.0, 12.0]
    assert torch.vmap(_ident, out_dims=(0,))(x).shape == (2, 3)
    assert torch.vmap(_ident, out_dims=-1)(x).shape == (3, 2)
    y, c = torch.vmap(lambda v: (v, torch.ones(2)), out_dims=(0, None))(x)
    assert y.shape == (2, 3) and c.tolist() == [1.0, 1.0]


def test_forward_ad_errors_and_copy_into_a_plain_tensor() -> None:
    import tapegrad.torch.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        d = fwAD.make_dual(torch.ones(2), torch.ones(2))
        with pytest.raises(AttributeError, match="'float' object has no attribute "
                                                 "'is_floating_point'"):
            fwAD.make_dual(torch.ones(2), 3.0)
        with pytest.raises(TypeError, match=r"_unpack_dual\(\): argument 'dual' \(position 1\) "
                                            "must be Tensor, not float"):
            fwAD.unpack_dual(3.0)
        with pytest.raises(RuntimeError, match="Making a dual Tensor based on a Tensor that "
                                               "already has a forward gradient"):
            fwAD.make_dual(d, torch.ones(2))
        z = torch.zeros(2, 2)
        z.copy_(d * 3)  # a plain tensor becomes dual, as in PyTorch
        assert fwAD.unpack_dual(z).tangent.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert fwAD.unpack_dual(3.0) == (3.0, None)


F_CASES: list[tuple[Callable[[], Any], type[Exception], str]] = [
    (lambda: torch.func.grad(lambda v: v.sum(), argnums=1)(X), RuntimeError,
     "Got argnum=1, but only 1 positional inputs"),
    (lambda: torch.func.grad(lambda v: v.sum(), argnums=())(X), RuntimeError,
     "argnums must be non-empty"),
    (lambda: torch.func.grad(lambda v: v.sum(), argnums=0.5)(X), RuntimeError,
     "argnums must be int or Tuple[int, ...], got: <class 'float'>"),
    (lambda: torch.func.jacrev(lambda v: v, argnums=(0, 0))(X), RuntimeError,
     "argnums elements must be unique, got (0, 0)"),
    (lambda: torch.func.jacrev(lambda v: v, chunk_size=-1)(X), ValueError,
     "jacrev: `chunk_size` should be greater than 0."),
    (lambda: torch.func.jacrev(lambda v: v)(torch.tensor([1, 2])), RuntimeError,
     "only Tensors of floating point dtype can require gradients"),
    (lambda: torch.func.jacfwd(lambda v: v)(torch.tensor([1, 2])), ValueError,
     "Expected primal to be floating point or complex, but got: torch.int64"),
    (lambda: torch.func.vjp(lambda v: 3, X), RuntimeError,
     "vjp(f, *primals): expected f(*primals) to return only tensors, got unsupported type "
     "<class 'int'>"),
    (lambda: torch.func.jvp(lambda v: 3, (X,), (X,)), RuntimeError,
     "jvp(f, primals, tangents): expected f(*primals) to return only tensors"),
    (lambda: torch.func.vjp(lambda v: {"a": v}, X)[1]((X,)), RuntimeError,
     "Expected pytree structure of cotangents to be the same as pytree structure of outputs "
     "to the function. cotangents: (*,), primal output: {'a': *}"),
    (lambda: torch.func.vjp(lambda v: (v, v), X)[1](X), RuntimeError,
     "cotangents: *, primal output: (*, *)"),
    (lambda: torch.func.vjp(lambda v: v, 3.0), ValueError,
     "Thing passed to transform API must be Tensor, got <class 'float'>"),
    (lambda: torch.func.jvp(lambda v: v, (3.0,), (1.0,)), RuntimeError,
     "jvp(f, primals, tangents): Expected primals to only contain Tensors, got <class "
     "'float'>"),
    (lambda: torch.func.jvp(lambda v: v, (X,), (torch.ones(2),)), RuntimeError,
     "Trying to set a forward gradient that has a different size than that of the original "
     "Tensor, this is not supported. Tensor is of size [3] while the given forward gradient "
     "is of size [2]."),
    (lambda: torch.func.jvp(lambda v: v, (X,), (X, X)), RuntimeError,
     "Got primals with structure TreeSpec(tuple, None, [*]) and tangents with structure "
     "TreeSpec(tuple, None, [*,\n  *])"),
    (lambda: torch.func.jvp(lambda v: v, (X,), (X,), has_aux=True), RuntimeError,
     "jvp(f, primals, tangents): output of function f should be a tuple: (output, aux)"),
    (lambda: torch.func.grad(lambda v: v.sum(), has_aux=True)(X), RuntimeError,
     "grad_and_value(f)(*args): output of function f should be a tuple: (output, aux)"),
    (lambda: torch.func.grad(lambda v: (v.sum(), 1), has_aux=True)(X), RuntimeError,
     "Expected tensors, got unsupported type <class 'int'>"),
]


@pytest.mark.parametrize("i", range(len(F_CASES)))
def test_func_errors(i: int) -> None:
    fn, exc, msg = F_CASES[i]
    with pytest.raises(exc) as e:
        fn()
    assert msg in str(e.value), str(e.value)


def test_kl_div_batchmean() -> None:
    a = torch.tensor([[0.2, 0.8], [0.5, 0.5]]).log()
    b = torch.tensor([[0.3, 0.7], [0.6, 0.4]])
    pointwise = (b * (b.log() - a)).numpy()
    want = pointwise.sum() / 2
    F = torch.nn.functional
    np_ = pytest.importorskip("numpy")
    np_.testing.assert_allclose(F.kl_div(a, b, reduction="batchmean").item(), want, rtol=1e-6)
    np_.testing.assert_allclose(
        torch.nn.KLDivLoss(reduction="batchmean", log_target=True)(a, b.log()).item(), want,
        rtol=1e-6)
    np_.testing.assert_allclose(F.kl_div(a[0], b[0], reduction="batchmean").item(),
                                pointwise[0].sum() / 2, rtol=1e-6)
    with pytest.warns(UserWarning, match="reduction: 'mean' divides the total loss"):
        F.kl_div(a, b)


S_X = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64)
S_Y = S_X * 2
STRICT: list[tuple[Callable[[], Any], str]] = [
    (lambda: AF.jacobian(lambda a, b: a * 2, (S_X, S_Y), strict=True),
     "Output 0 of the user-provided function is independent of input 1. This is not allowed "
     "in strict mode."),
    (lambda: AF.jvp(lambda a, b: a * 2, (S_X, S_Y), (S_X, S_Y), strict=True),
     "The output of the user-provided function is independent of input 1."),
    (lambda: AF.hessian(lambda a: a.sum(), S_X, strict=True),
     "While computing the hessian, found that the jacobian of the user-provided function with "
     "respect to input 0 is independent of the input."),
    (lambda: AF.hvp(lambda a: a.sum(), S_X, S_X, strict=True),
     "While computing the hessian, found that the jacobian of the user-provided function"),
    (lambda: AF.vhp(lambda a, b: (a ** 2).sum(), (S_X, S_Y), (S_X, S_Y), strict=True),
     "The output of the user-provided function is independent of input 1."),
]


@pytest.mark.parametrize("i", range(len(STRICT)))
def test_functional_strict_mode(i: int) -> None:
    fn, msg = STRICT[i]
    with pytest.raises(RuntimeError) as e:
        fn()
    assert msg in str(e.value), str(e.value)
    # the same calls without strict give zeros where an input is unused
    assert AF.hessian(lambda a: a.sum(), S_X).abs().sum().item() == 0.0
