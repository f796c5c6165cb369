"""Issue 16, PyTorch style, without PyTorch: ranges, keyword aliases, conversion errors.

The conformance suite compares these with real PyTorch; here they are pinned
by their definitions (exact fused multiply-adds against fractions, PyTorch's
documented lengths and messages) and by finite differences.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

import tapegrad.torch as torch
from tapegrad.testing import gradcheck
from tapegrad.torch._ranges import fma32, fma64


# ---------------------------------------------------------------------------- exact fma
def test_fma64_is_correctly_rounded() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=3000) * 10.0 ** rng.integers(-5, 5, 3000)
    b = rng.integers(0, 5000, 3000).astype(np.float64)
    c = rng.normal(size=3000) * 100
    exact = np.array([float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c)])
    np.testing.assert_array_equal(fma64(a, b, c), exact)
    # the plain expression rounds twice and differs somewhere
    assert np.any(a * b + c != exact)


def test_fma32_is_correctly_rounded() -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(size=3000).astype(np.float32)
    b = rng.integers(0, 3000, 3000).astype(np.float32)
    c = (rng.normal(size=3000) * 10).astype(np.float32)
    exact = np.array([np.float32(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
                      for x, y, z in zip(a, b, c)])
    np.testing.assert_array_equal(fma32(a, b, c), exact)


# ---------------------------------------------------------------------------- ranges
def test_textbook_range_lengths() -> None:
    assert torch.arange(-5.5, 1.0, 0.1).shape == (65,)
    # PyTorch sizes in double: ceil(0.30000000000000004 / 0.1) = 4 (TensorFlow, in float32: 3)
    assert torch.arange(1.0, 1.3, 0.1).shape == (4,)
    assert torch.arange(0, 10, 3).tolist() == [0, 3, 6, 9]
    x1, x2 = torch.meshgrid(torch.arange(-5.5, 1.0, 0.1), torch.arange(-3.0, 1.0, 0.1),
                            indexing="ij")
    assert x1.shape == x2.shape == (65, 40)
    assert float((x1 ** 2 + 2 * x2 ** 2)[0, 0]) == pytest.approx(5.5 ** 2 + 2 * 9.0, rel=1e-6)


def test_arange_values_are_one_rounding_from_exact() -> None:
    # the scalar tail of the kernel is fma(step, i, start) in double, then float32
    vals = torch.arange(0.0, 1.0, 0.1, dtype=torch.float64).numpy()
    exact = [float(Fraction(0.1) * i) for i in range(10)]
    np.testing.assert_array_equal(vals, exact)


def test_arange_int64_truncates_its_arguments_as_pytorch() -> None:
    assert torch.arange(0, 2.5, dtype=torch.int64).tolist() == [0, 1]
    assert torch.arange(-1.5, 3, 1.5, dtype=torch.int64).tolist() == [-1, 0, 1, 2]
    with pytest.raises(ValueError, match="step must be nonzero"):
        torch.arange(0, 3, 0.5, dtype=torch.int64)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent"):
        torch.arange(1, 0)
    with pytest.raises(RuntimeError, match="unsupported range: 0 -> inf"):
        torch.arange(float("inf"))


def test_linspace_is_symmetric_and_int_truncates() -> None:
    y = torch.linspace(-5.5, 1.0, 66).numpy()
    assert y[0] == np.float32(-5.5) and y[-1] == np.float32(1.0)
    assert torch.linspace(-5.5, 1.0, 5, dtype=torch.int64).tolist() == [-5, -3, -2, 0, 1]
    assert torch.linspace(0, 1, 0).shape == (0,)
    with pytest.raises(TypeError, match="linspace\\(\\) received an invalid combination"):
        torch.linspace(0, 1, 2.0)


def test_meshgrid_warns_without_indexing_and_is_differentiable() -> None:
    with pytest.warns(UserWarning, match="indexing argument"):
        torch.meshgrid(torch.arange(2.0), torch.arange(3.0))
    a = torch.tensor([1.0, 2.0], dtype=torch.float64)
    b = torch.tensor([0.5, -1.0, 3.0], dtype=torch.float64)

    def f(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        g1, g2 = torch.meshgrid(x, y, indexing="xy")
        return (g1 * g2 ** 2).sum()
    assert gradcheck(f, [a, b])


# ---------------------------------------------------------------------------- aliases
def test_numpy_keyword_aliases() -> None:
    x = torch.arange(6.0).reshape(2, 3)
    assert x.sum(axis=0).tolist() == [3.0, 5.0, 7.0]
    assert x.sum(axis=1, keepdims=True).shape == (2, 1)
    assert torch.cumsum(x, axis=1)[1].tolist() == [3.0, 7.0, 12.0]
    assert x.max(axis=1).values.tolist() == [2.0, 5.0]
    assert torch.randn(size=(2, 3)).shape == (2, 3)
    assert torch.zeros(size=(4,)).shape == (4,)
    assert torch.add(x1=x, x2=x).tolist() == (2 * x).tolist()
    assert x.permute(dims=(1, 0)).shape == (3, 2)
    assert x.transpose(dim0=0, dim1=1).shape == (3, 2)
    assert x.any(dim=1, keepdim=True).shape == (2, 1)
    assert x.sum(dim=1, dtype=torch.float64).dtype == torch.float64


def test_both_names_is_pytorchs_type_error() -> None:
    x = torch.ones(2, 3)
    with pytest.raises(TypeError, match="sum\\(\\) got an unexpected keyword argument 'axis'"):
        torch.sum(x, dim=0, axis=0)
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'keepdims'"):
        x.sum(0, keepdim=True, keepdims=True)
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'axis'"):
        x.std(1, axis=1)
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        torch.randn(2, size=(2, 3))


def test_python_level_functions_take_no_aliases() -> None:
    x = torch.ones(2, 4)
    with pytest.raises(TypeError):
        x.split(2, axis=1)
    with pytest.raises(TypeError):
        torch.nn.functional.softmax(x, axis=1)


def test_aliases_keep_the_graph() -> None:
    x = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    y = x.sum(axis=0, keepdims=True) * torch.softmax(x, axis=1)
    y.sum().backward()
    assert x.grad is not None and x.grad.shape == (2, 2)


def test_inner_of_matrices() -> None:
    a = torch.arange(6.0).reshape(2, 3)
    b = torch.arange(12.0).reshape(4, 3)
    np.testing.assert_allclose(torch.inner(a, b).numpy(), np.inner(a.numpy(), b.numpy()))


# ---------------------------------------------------------------------------- conversion
@pytest.mark.parametrize("data, exc, msg", [
    ([[1, 2], [3]], ValueError, r"expected sequence of length 2 at dim 1 \(got 1\)"),
    ([1, [2, 3]], TypeError, "'list' object cannot be interpreted as an integer"),
    ([[2, 3], 1], TypeError, "not a sequence"),
    ([1.0, None], RuntimeError, "Could not infer dtype of NoneType"),
    ({"a": 1}, RuntimeError, "Could not infer dtype of dict"),
    (["a", 1], ValueError, "too many dimensions 'str'"),
    ([1, "a"], TypeError, "new\\(\\): invalid data type 'str'"),
    ([2**63], ValueError, "Overflow when unpacking long long"),
])
def test_conversion_errors(data: object, exc: type, msg: str) -> None:
    with pytest.raises(exc, match=msg):
        torch.tensor(data)


def test_conversion_of_lists_with_tensors() -> None:
    t = torch.tensor([torch.tensor(1.0), 2.0])
    assert t.dtype == torch.float32 and t.tolist() == [1.0, 2.0]
    assert torch.tensor([torch.tensor(1), 2.5]).dtype == torch.float32
    assert torch.tensor([torch.tensor(1.0, dtype=torch.float64), 2]).dtype == torch.float64
    with pytest.raises(ValueError, match="only one element tensors"):
        torch.tensor([torch.ones(2), torch.ones(2)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.tensor([[], [1]]).shape == (2, 0)
