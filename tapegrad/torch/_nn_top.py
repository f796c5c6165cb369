"""PyTorch's top-level names for ``nn.functional`` ops and the adjoint views.

PyTorch exposes many ``torch.nn.functional`` ops at the top level too
(``torch.selu``, ``torch.pdist``, ``torch.pixel_shuffle``, ``torch.conv2d``,
...) with the same leading arguments; here they are the same functions.  The
conjugate-transpose views ``Tensor.H`` / ``Tensor.mH`` / ``Tensor.adjoint()``
/ ``torch.adjoint`` are a transpose (``TransposeBackward0``) followed, for
complex tensors, by a conjugation (``ConjBackward0``), as in PyTorch.
"""

from __future__ import annotations

import warnings
from typing import Any

from .._core.errors import hinted
from .._core.tensor import Tensor

# the nn.functional names PyTorch also has at the top level with the same leading arguments
FUNCTIONAL_NAMES: tuple[str, ...] = (
    "selu", "celu", "rrelu", "threshold", "prelu", "hardshrink", "pdist", "pixel_shuffle",
    "pixel_unshuffle", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "avg_pool1d", "adaptive_avg_pool1d", "cosine_similarity",
    "pairwise_distance", "channel_shuffle", "bilinear", "max_pool1d", "max_pool2d",
    "max_pool3d", "relu_", "selu_", "celu_", "rrelu_", "threshold_",
)


def _is_complex(x: Tensor) -> bool:
    return bool(x._data.dtype.kind == "c")


def _conj_t(x: Tensor, d0: int, d1: int) -> Tensor:
    y: Tensor = x.transpose(d0, d1)
    return y.conj() if _is_complex(x) else y  # type: ignore[attr-defined]


def _zero_d(x: Tensor, what: str) -> Tensor:
    warnings.warn(f"{what} is deprecated on 0-D tensors. Consider using x.conj().",
                  UserWarning, stacklevel=3)
    return x.conj() if _is_complex(x) else x.view(())  # type: ignore[attr-defined]


def _H(self: Tensor) -> Tensor:
    """``x.H``: the conjugate transpose of a matrix."""
    if self.ndim == 0:
        return _zero_d(self, "Tensor.H")
    if self.ndim != 2:
        msg = f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor."
        if self.ndim > 2:
            msg += " For batches of matrices, consider using tensor.mH"
        raise hinted(RuntimeError(msg), "use x.mH (or x.adjoint()) for a batch of matrices")
    return _conj_t(self, 0, 1)


def _mH(self: Tensor, what: str = "tensor.mH") -> Tensor:
    if self.ndim == 0:
        return _zero_d(self, "Tensor.mH" if what == "tensor.mH" else "adjoint()")
    if self.ndim < 2:
        raise hinted(RuntimeError(f"{what} is only supported on matrices or batches of "
                                  f"matrices. Got {self.ndim}-D tensor."),
                     "a 1-D tensor has no matrix transpose; use x.conj()")
    return _conj_t(self, -2, -1)


def adjoint(input: Tensor) -> Tensor:
    """``torch.adjoint(x)``: the conjugate transpose of the last two dimensions (a view)."""
    return _mH(input, "tensor.adjoint()")


def install(namespace: dict[str, Any]) -> list[str]:
    """Put the top-level aliases in ``namespace`` and the adjoint views on the tensor class;
    returns the names added to ``namespace``."""
    from . import _tensor
    from .nn import functional as F

    cls: Any = _tensor.TorchTensor
    added = []
    for name in FUNCTIONAL_NAMES:
        if name not in namespace:
            namespace[name] = getattr(F, name)
            added.append(name)
    namespace["adjoint"] = adjoint
    added.append("adjoint")
    if "H" not in cls.__dict__:
        cls.H = property(_H)
        cls.mH = property(lambda self: _mH(self))
        cls.adjoint = lambda self: adjoint(self)

        def prelu(self: Tensor, weight: Tensor) -> Tensor:
            return F.prelu(self, weight)

        cls.prelu = prelu
    return added
