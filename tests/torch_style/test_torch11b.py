"""torch11b: top-level nn.functional names and the adjoint views (``H``, ``mH``, ``adjoint``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad.torch as torch
import tapegrad.torch.nn.functional as F
from tapegrad.torch import _nn_top


@pytest.mark.parametrize("name", _nn_top.FUNCTIONAL_NAMES)
def test_top_level_alias_is_functional(name: str) -> None:
    assert getattr(torch, name) is getattr(F, name)
    assert name in torch.__all__


def test_top_level_values() -> None:
    x = torch.tensor([[-1.0, 0.5, 2.0], [3.0, -0.25, 0.0]], requires_grad=True)
    np.testing.assert_allclose(torch.selu(x).detach().numpy(), F.selu(x).detach().numpy())
    d = torch.pdist(x)
    np.testing.assert_allclose(d.detach().numpy(),
                               [np.linalg.norm(x.detach().numpy()[0] - x.detach().numpy()[1])],
                               rtol=1e-6)
    assert type(d.grad_fn).__name__ == "PdistBackward0"
    img = torch.arange(16.0).reshape(1, 4, 2, 2)
    up = torch.pixel_shuffle(img, 2)
    assert tuple(up.shape) == (1, 1, 4, 4)
    np.testing.assert_array_equal(torch.pixel_unshuffle(up, 2).numpy(), img.numpy())
    y = torch.threshold(x, 0.4, -9.0)
    np.testing.assert_array_equal(y.detach().numpy(),
                                  np.where(x.detach().numpy() > 0.4, x.detach().numpy(), -9.0))


def test_prelu_method() -> None:
    x = torch.tensor([[-2.0, 1.0], [0.5, -0.5]], requires_grad=True)
    w = torch.tensor([0.25], requires_grad=True)
    y = x.prelu(w)
    xn = x.detach().numpy()
    np.testing.assert_allclose(y.detach().numpy(), np.where(xn > 0, xn, 0.25 * xn))
    assert type(y.grad_fn).__name__ == "PreluKernelBackward0"
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [xn[xn <= 0].sum()])


def test_H_mH_adjoint_real() -> None:
    a = np.arange(24.0).reshape(2, 3, 4)
    x = torch.tensor(a, requires_grad=True)
    m = torch.tensor(a[0], requires_grad=True)
    np.testing.assert_array_equal(m.H.detach().numpy(), a[0].T)
    np.testing.assert_array_equal(x.mH.detach().numpy(), a.transpose(0, 2, 1))
    np.testing.assert_array_equal(x.adjoint().detach().numpy(), a.transpose(0, 2, 1))
    np.testing.assert_array_equal(torch.adjoint(x).detach().numpy(), a.transpose(0, 2, 1))
    for y in (m.H, x.mH, x.adjoint(), torch.adjoint(x)):
        assert type(y.grad_fn).__name__ == "TransposeBackward0"
        assert y._base is not None
    (x.mH * torch.tensor(a.transpose(0, 2, 1))).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), a)


def test_H_complex_conjugates() -> None:
    a = np.array([[1 + 2j, 3 - 1j, 0.5j], [2, 1j, -1]])
    z = torch.tensor(a)
    np.testing.assert_array_equal(z.H.numpy(), a.conj().T)
    np.testing.assert_array_equal(z.mH.numpy(), a.conj().T)
    zg = torch.tensor(a, requires_grad=True)
    assert type(zg.H.grad_fn).__name__ == "ConjBackward0"


def test_H_errors_and_zero_d() -> None:
    with pytest.raises(RuntimeError) as e:
        _ = torch.zeros(2, 3, 4).H
    assert str(e.value) == ("tensor.H is only supported on matrices (2-D tensors). Got 3-D "
                            "tensor. For batches of matrices, consider using tensor.mH")
    with pytest.raises(RuntimeError) as e:
        _ = torch.zeros(3).H
    assert str(e.value) == "tensor.H is only supported on matrices (2-D tensors). Got 1-D tensor."
    with pytest.raises(RuntimeError) as e:
        _ = torch.zeros(3).mH
    assert str(e.value) == ("tensor.mH is only supported on matrices or batches of matrices. "
                            "Got 1-D tensor.")
    with pytest.raises(RuntimeError) as e:
        torch.zeros(3).adjoint()
    assert str(e.value) == ("tensor.adjoint() is only supported on matrices or batches of "
                            "matrices. Got 1-D tensor.")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = torch.tensor(2.0).H
    assert float(s) == 2.0
    assert "deprecated on 0-D tensors" in str(w[0].message)


def test_tensor_split_tensor_argument_checks() -> None:
    x = torch.arange(6.0)
    with pytest.raises(RuntimeError) as e:
        torch.tensor_split(x, torch.tensor([1.0]))
    assert str(e.value) == ("tensor_split expected tensor_indices_or_sections to have dtype of "
                            "long, but got Float")
    with pytest.raises(RuntimeError) as e:
        torch.tensor_split(x, torch.tensor([[1]]))
    assert str(e.value) == ("tensor_split expected tensor_indices_or_sections to be a "
                            "zero-dimensional or one-dimensional tensor, but got a tensor with "
                            "2 dims")
    with pytest.raises(TypeError) as e:
        torch.tensor_split(x, 2.0)
    assert str(e.value).startswith("tensor_split() received an invalid combination of "
                                   "arguments - got (Tensor, float), but expected one of:")
    parts = torch.tensor_split(x, torch.tensor(4))
    assert [p.numpy().tolist() for p in parts] == [[0.0, 1.0], [2.0, 3.0], [4.0], [5.0]]
    parts = x.tensor_split(torch.tensor([1, 3]))
    assert [p.numpy().tolist() for p in parts] == [[0.0], [1.0, 2.0], [3.0, 4.0, 5.0]]
