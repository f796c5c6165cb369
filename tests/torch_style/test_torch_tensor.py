"""tapegrad.torch tensors: creation, dtypes, Size, printing, promotion, random numbers.

Expected strings and numbers were taken from PyTorch 2.13; these tests run
without PyTorch installed.
"""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest

import tapegrad
import tapegrad.torch as torch


# ----------------------------------------------------------------------------- creation
def test_tensor_dtype_inference() -> None:
    assert torch.tensor(1.5).dtype is torch.float32
    assert torch.tensor([1, 2]).dtype is torch.int64
    assert torch.tensor([True]).dtype is torch.bool
    assert torch.tensor([1, 2.0]).dtype is torch.float32
    assert torch.tensor(np.array([1.0])).dtype is torch.float64
    assert torch.tensor(np.array([1], dtype=np.int32)).dtype is torch.int32
    assert torch.tensor([1.0], dtype=torch.float64).dtype is torch.float64
    assert torch.tensor([1.0], dtype=torch.float16).dtype is torch.float16


def test_tensor_copies_and_as_tensor_shares() -> None:
    a = np.array([1.0, 2.0])
    t = torch.tensor(a)
    s = torch.as_tensor(a)
    f = torch.from_numpy(a)
    a[0] = 9.0
    assert t.tolist() == [1.0, 2.0]
    assert s.tolist() == [9.0, 2.0]
    assert f.tolist() == [9.0, 2.0]
    x = torch.tensor([1.0])
    assert torch.as_tensor(x) is x


def test_tensor_from_tensor_warns() -> None:
    x = torch.tensor([1.0])
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        y = torch.tensor(x)
    assert y is not x and y.tolist() == [1.0]


def test_from_numpy_rejects_lists() -> None:
    with pytest.raises(TypeError, match=r"expected np.ndarray \(got list\)"):
        torch.from_numpy([1.0])


def test_factories() -> None:
    assert torch.zeros(2, 3).shape == (2, 3)
    assert torch.zeros((2, 3)).shape == torch.Size([2, 3])
    assert torch.ones(2, dtype=torch.int64).tolist() == [1, 1]
    assert torch.full((2,), 7).dtype is torch.int64
    assert torch.full((2,), 7.0).dtype is torch.float32
    assert torch.full((1,), True).dtype is torch.bool
    assert torch.empty(3).shape == (3,)
    base = torch.ones(2, 3, dtype=torch.float64)
    for f in (torch.zeros_like, torch.ones_like, torch.empty_like):
        r = f(base)
        assert r.shape == base.shape and r.dtype is torch.float64
    assert torch.full_like(base, 2.0).tolist() == [[2.0] * 3] * 2
    assert torch.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert torch.eye(2, 3).shape == (2, 3)
    assert torch.zeros(2, requires_grad=True).requires_grad


def test_arange_linspace() -> None:
    assert torch.arange(4).tolist() == [0, 1, 2, 3]
    assert torch.arange(4).dtype is torch.int64
    assert torch.arange(1, 7, 2).tolist() == [1, 3, 5]
    assert torch.arange(0, 1, 0.25).dtype is torch.float32
    assert torch.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    # PyTorch's symmetric float32 formula (with fused multiply-adds)
    assert torch.linspace(-1, 1, 8)[3].item() == -0.14285710453987122
    assert torch.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert torch.linspace(0, 1, 1).tolist() == [0.0]
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        torch.arange(0, 1, 0)


def test_bad_sizes_and_data() -> None:
    with pytest.raises(RuntimeError, match=r"Trying to create tensor with negative dimension -1: \[-1\]"):
        torch.ones(-1)
    with pytest.raises(RuntimeError, match=r"^zeros: Dimension size must be non-negative\."):
        torch.zeros(-1)   # PyTorch 2.13's own text for zeros
    with pytest.raises(TypeError, match="must be tuple of ints"):
        torch.zeros(2.5)
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 1\)"):
        torch.tensor([[1, 2], [3]])
    # as PyTorch: a set has no dtype to infer
    with pytest.raises(TypeError, match="new\\(\\): invalid data type 'str'"):
        torch.tensor("abc")
    with pytest.raises(RuntimeError, match="Could not infer dtype of set"):
        torch.tensor({1, 2})


# ----------------------------------------------------------------------------- dtypes, Size
def test_dtype_objects() -> None:
    assert repr(torch.float32) == "torch.float32"
    assert str(torch.int64) == "torch.int64"
    assert torch.float is torch.float32 and torch.double is torch.float64
    assert torch.long is torch.int64 and torch.half is torch.float16
    assert torch.float32.is_floating_point and not torch.int64.is_floating_point
    assert torch.get_default_dtype() is torch.float32
    assert pickle.loads(pickle.dumps(torch.float64)) is torch.float64


def test_default_dtype_switch() -> None:
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.tensor(1.5).dtype is torch.float64
        assert torch.zeros(1).dtype is torch.float64
    finally:
        torch.set_default_dtype(torch.float32)
    assert torch.tensor(1.5).dtype is torch.float32


def test_size() -> None:
    s = torch.zeros(2, 3, 4).shape
    assert isinstance(s, tuple) and isinstance(s, torch.Size)
    assert repr(s) == "torch.Size([2, 3, 4])"
    assert repr(s[1:]) == "torch.Size([3, 4])"
    assert s.numel() == 24 and s == (2, 3, 4)
    t = torch.zeros(2, 3)
    assert t.size() == (2, 3) and t.size(1) == 3 and t.size(-1) == 3 and t.dim() == 2


def test_conversions() -> None:
    t = torch.tensor([1.5, 2.5])
    assert t.double().dtype is torch.float64 and t.long().tolist() == [1, 2]
    assert t.int().dtype is torch.int32 and t.bool().dtype is torch.bool
    assert t.to(torch.float16).dtype is torch.float16
    assert t.to("cpu") is t and t.cpu() is t and t.float() is t
    assert t.type() == "torch.FloatTensor"
    assert t.type(torch.float64).dtype is torch.float64
    assert str(t.device) == "cpu" and not t.is_cuda
    assert not torch.cuda.is_available()
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        t.cuda()


# ----------------------------------------------------------------------------- printing
@pytest.mark.parametrize("make,expected", [
    (lambda: torch.tensor([1.0, 2.0], requires_grad=True), "tensor([1., 2.], requires_grad=True)"),
    (lambda: torch.tensor(5.0), "tensor(5.)"),
    (lambda: torch.tensor([1, 2]), "tensor([1, 2])"),
    (lambda: torch.tensor([1.5, 2]), "tensor([1.5000, 2.0000])"),
    (lambda: torch.tensor([True]), "tensor([True])"),
    (lambda: torch.zeros(2, dtype=torch.float64), "tensor([0., 0.], dtype=torch.float64)"),
    (lambda: torch.zeros(2, dtype=torch.float16), "tensor([0., 0.], dtype=torch.float16)"),
    (lambda: torch.tensor(3, dtype=torch.int32), "tensor(3, dtype=torch.int32)"),
    (lambda: torch.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: torch.tensor([1e10, 1.0]), "tensor([1.0000e+10, 1.0000e+00])"),
    (lambda: torch.tensor([math.nan, 1.0]), "tensor([nan, 1.])"),
    (lambda: torch.tensor([math.inf, 1.5]), "tensor([   inf, 1.5000])"),
    (lambda: torch.tensor([]), "tensor([])"),
    (lambda: torch.zeros(0, 3), "tensor([], size=(0, 3))"),
    (lambda: torch.tensor([-0.0, 1.5]), "tensor([-0.0000, 1.5000])"),
    (lambda: torch.tensor([[1.123456, 2], [3, 4]], dtype=torch.float64),
     "tensor([[1.1235, 2.0000],\n        [3.0000, 4.0000]], dtype=torch.float64)"),
    (lambda: torch.tensor([1, 2], dtype=torch.uint8), "tensor([1, 2], dtype=torch.uint8)"),
    (lambda: torch.nn.Parameter(torch.tensor([1.0])),
     "Parameter containing:\ntensor([1.], requires_grad=True)"),
])
def test_repr(make: object, expected: str) -> None:
    t = make()  # type: ignore[operator]
    assert repr(t) == expected
    assert str(t) == expected


def test_repr_grad_fn_and_summary() -> None:
    w = torch.tensor(2.0, requires_grad=True)
    assert repr(w * w + 1) == "tensor(5., grad_fn=<AddBackward0>)"
    assert repr((w * w).sum()) == "tensor(4., grad_fn=<SumBackward0>)"
    s = repr(torch.arange(2000.0))
    assert s == ("tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
                 "        1.9990e+03])")
    r = repr(torch.arange(24.0).reshape(2, 3, 4))
    assert r.startswith("tensor([[[ 0.,  1.,  2.,  3.],\n         [ 4.,")
    assert "\n\n        [[12., 13., 14., 15.]," in r


def test_format() -> None:
    assert f"{torch.tensor(4.0)}" == "4.0"
    assert f"{torch.tensor(0.1)}" == "0.10000000149011612"  # the float32 value, as PyTorch
    assert f"{torch.tensor(3)}" == "3"
    assert f"{torch.tensor(2.5):.3f}" == "2.500"
    assert f"{torch.tensor([1.0, 2.0])}" == "tensor([1., 2.])"
    with pytest.raises(TypeError):
        f"{torch.tensor([1.0, 2.0]):.3f}"  # noqa: B018


def test_printoptions() -> None:
    with torch.printoptions(precision=2):
        assert repr(torch.tensor([1.12345])) == "tensor([1.12])"
    assert repr(torch.tensor([1.12345])) == "tensor([1.1235])"


def test_core_style_unaffected() -> None:
    t = tapegrad.tensor([1.0, 2.0])
    assert t.dtype == np.float64 and isinstance(t.shape, tuple)
    assert not isinstance(t.shape, torch.Size)


# ----------------------------------------------------------------------------- promotion
@pytest.mark.parametrize("fn,dtype", [
    (lambda f32, f64, i64, b: f32 * i64, "float32"),
    (lambda f32, f64, i64, b: f32 * f64, "float64"),
    (lambda f32, f64, i64, b: i64 * 2.5, "float32"),
    (lambda f32, f64, i64, b: f32 * 2.5, "float32"),
    (lambda f32, f64, i64, b: 2.5 * f32, "float32"),
    (lambda f32, f64, i64, b: i64 * 2, "int64"),
    (lambda f32, f64, i64, b: i64 / i64, "float32"),
    (lambda f32, f64, i64, b: b + 1, "int64"),
    (lambda f32, f64, i64, b: b + 1.5, "float32"),
    (lambda f32, f64, i64, b: f32 * torch.tensor(2.0, dtype=torch.float64), "float32"),
    (lambda f32, f64, i64, b: i64 * torch.tensor(2.0, dtype=torch.float64), "float64"),
    (lambda f32, f64, i64, b: f32.half() * 2.0, "float16"),
    (lambda f32, f64, i64, b: f32 > i64, "bool"),
    (lambda f32, f64, i64, b: torch.cat([f32, f64]), "float64"),
    (lambda f32, f64, i64, b: torch.add(i64, f32), "float32"),
    (lambda f32, f64, i64, b: f32 * np.float64(2.0), "float32"),
    (lambda f32, f64, i64, b: i64 * np.float32(1.5), "float32"),
    (lambda f32, f64, i64, b: f32 + np.array([1.0, 2.0]), "float64"),
])
def test_promotion(fn: object, dtype: str) -> None:
    f32 = torch.tensor([1.0, 2.0])
    f64 = torch.tensor([1.0, 2.0], dtype=torch.float64)
    i64 = torch.tensor([1, 2])
    b = torch.tensor([True, False])
    r = fn(f32, f64, i64, b)  # type: ignore[operator]
    assert str(r.dtype) == "torch." + dtype


def test_promotion_gradient_dtype() -> None:
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (w * torch.tensor([3, 4])).sum().backward()
    assert w.grad.dtype is torch.float32 and w.grad.tolist() == [3.0, 4.0]


def test_negative_int_power() -> None:
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed."):
        torch.tensor([2]) ** -1


# ----------------------------------------------------------------------------- numpy, item
def test_numpy_item_tolist() -> None:
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        t.numpy()
    assert t.detach().numpy().tolist() == [1.0, 2.0]
    assert t.numpy(force=True).tolist() == [1.0, 2.0]
    assert t.tolist() == [1.0, 2.0] and t.sum().item() == 3.0
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        t.item()
    plain = torch.tensor([1.0, 2.0])
    arr = plain.numpy()
    arr[0] = 5.0
    assert plain.tolist() == [5.0, 2.0]  # shares memory, as in PyTorch


def test_float_warns_once_for_requires_grad() -> None:
    from tapegrad.torch import _tensor

    _tensor._FLOAT_WARNED[0] = False
    x = torch.tensor([1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Converting a tensor with requires_grad=True to a scalar"):
        assert float(x) == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        float(x)


# ----------------------------------------------------------------------------- random numbers
def test_random_matches_pytorch_streams() -> None:
    torch.manual_seed(0)
    assert repr(torch.rand(3)) == "tensor([0.4963, 0.7682, 0.0885])"
    torch.manual_seed(0)
    assert repr(torch.randn(3, dtype=torch.float64)) == \
        "tensor([ 1.5410, -0.2934, -2.1788], dtype=torch.float64)"
    torch.manual_seed(0)
    assert torch.randint(0, 10, (5,)).tolist() == [4, 9, 3, 0, 3]
    torch.manual_seed(0)
    assert torch.randperm(5).tolist() == [4, 0, 1, 3, 2]
    torch.manual_seed(3)
    assert repr(torch.randn(2, 3)) == ("tensor([[ 0.8033,  0.1748,  0.0890],\n"
                                       "        [-0.6137,  0.0462, -1.3683]])")
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    assert repr(lin.bias) == "Parameter containing:\ntensor([-0.0114,  0.4578], requires_grad=True)"


def test_generator_state_roundtrip() -> None:
    g = torch.Generator().manual_seed(7)
    state = g.get_state()
    a = torch.rand(4, generator=g)
    g.set_state(state)
    assert torch.equal(a, torch.rand(4, generator=g))
    assert g.initial_seed() == 7


def test_random_bounds() -> None:
    torch.manual_seed(1)
    u = torch.rand(1000)
    assert float(u.min()) >= 0.0 and float(u.max()) < 1.0
    r = torch.randint(3, 7, (1000,))
    assert set(r.tolist()) == {3, 4, 5, 6}
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        torch.randint(5, 5, (2,))
    n = torch.randn(10000)
    assert abs(float(n.mean())) < 0.05 and abs(float(n.std()) - 1) < 0.05
