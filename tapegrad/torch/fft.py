"""``torch.fft``: discrete Fourier transforms with PyTorch's ``n``/``s``, ``dim`` and ``norm``.

Differentiable through complex tensors (PyTorch's convention: the gradient of a real loss
is ``dL/dRe + i dL/dIm``); the transforms are three op records
(:mod:`tapegrad.ops.torch_more`), the resizing (``n``, ``s``) is a crop or zero-pad.

>>> import tapegrad.torch as torch
>>> torch.fft.rfft(torch.tensor([1.0, 0.0, 0.0, 0.0]))
tensor([1.+0.j, 1.+0.j, 1.+0.j])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import ops as core
from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from ..ops import torch_more as M
from . import _ops as O
from ._dtype import default_np, to_np
from ._tensor import _wrap

_NORMS = ("backward", "forward", "ortho")
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _norm(norm: str | None) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise hinted(RuntimeError(with_hint(f'Invalid normalization mode: "{norm}"',
                                          'norm is "backward", "forward" or "ortho"')))
    return norm


def _complex(x: Tensor) -> Tensor:
    d = x._data.dtype
    if d.kind == "c":
        return x
    target = np.complex128 if d == np.float64 else np.complex64
    if d.kind != "f":
        target = np.complex128 if default_np() == np.float64 else np.complex64
    return core.cast(x, dtype=target)


def _real(x: Tensor, fn: str) -> Tensor:
    d = x._data.dtype
    if d.kind == "c":
        raise hinted(RuntimeError(with_hint(
            f"{fn} expects a real input tensor, but got {O._scalar_type_name(d)}",
            "take .real first, or use the complex transform (fft)")))
    return x if d.kind == "f" else core.cast(x, dtype=default_np())


def _resize(x: Tensor, axis: int, size: int, fn: str) -> Tensor:
    if size < 1:
        raise hinted(RuntimeError(with_hint(
            f"Invalid number of data points ({size}) specified",
            f"{fn}: n (or s) must be at least 1")))
    n = x._data.shape[axis]
    if n == size:
        return x
    if n > size:
        return O.narrow(x, axis, 0, size)
    widths = [(0, 0)] * x._data.ndim
    widths[axis] = (0, size - n)
    return core.pad(x, tuple(widths))


def _axes(x: Tensor, s: Any, dim: Any, fn: str) -> tuple[list[int], list[int] | None]:
    nd = x._data.ndim
    if isinstance(dim, int):
        dim = [dim]
    if isinstance(s, int):
        s = [s]
    if dim is None:
        axes = list(range(nd)) if s is None else list(range(nd - len(s), nd))
    else:
        axes = [O._dim(d, nd) for d in dim]
        if len(set(axes)) != len(axes):
            raise hinted(RuntimeError(with_hint(f"{fn} dims must be unique", f"got {dim}")))
    if s is not None:
        s = list(s)
        if len(s) != len(axes):
            raise hinted(RuntimeError(with_hint(
                "When given, dim and shape arguments must have the same length",
                f"s has {len(s)} entries, dim {len(axes)}")))
        s = [x._data.shape[a] if v == -1 else int(v) for v, a in zip(s, axes)]
    return axes, s


def _c2c(input: Tensor, s: Any, dim: Any, norm: str | None, inverse: bool, fn: str) -> Tensor:
    x = O._check_tensor(input, fn)
    # a real signal: the 1-D transforms take PyTorch's two-sided r2c (FftR2CBackward0), the
    # N-D ones promote it to complex first (FftC2CBackward0), as PyTorch does
    real_in = x._data.dtype.kind != "c" and fn in ("fft", "ifft")
    if not real_in:
        x = _complex(x)
    if real_in and x._data.dtype.kind != "f":
        x = core.cast(x, dtype=default_np())
    axes, sizes = _axes(x, s, dim, fn)
    if sizes is not None:
        for a, n in zip(axes, sizes):
            x = _resize(x, a, n, fn)
    if not axes:
        return O.clone(_complex(x))
    nm = _norm(norm)
    if real_in:
        if inverse:  # ifft of a real signal: conj(fft) with the dual scale
            return O.conj(M.fft_r2c_full(x, axes=tuple(axes), norm=_DUAL[nm], inverse=False))
        return M.fft_r2c_full(x, axes=tuple(axes), norm=nm, inverse=False)
    return M.fft_c2c(x, axes=tuple(axes), norm=nm, inverse=inverse)


def _r2c(input: Tensor, s: Any, dim: Any, norm: str | None, fn: str) -> Tensor:
    x = _real(O._check_tensor(input, fn), fn)
    axes, sizes = _axes(x, s, dim, fn)
    if sizes is not None:
        for a, n in zip(axes, sizes):
            x = _resize(x, a, n, fn)
    return M.fft_r2c(x, axes=tuple(axes), norm=_norm(norm))


def _c2r(input: Tensor, s: Any, dim: Any, norm: str | None, fn: str) -> Tensor:
    x = _complex(O._check_tensor(input, fn))
    axes, sizes = _axes(x, s, dim, fn)
    if sizes is None:
        sizes = [x._data.shape[a] for a in axes]
        sizes[-1] = 2 * (sizes[-1] - 1)
    if sizes[-1] < 1:
        raise hinted(RuntimeError(with_hint(
            f"Invalid number of data points ({sizes[-1]}) specified",
            f"{fn}: give n, the length of the real output")))
    for i, (a, n) in enumerate(zip(axes, sizes)):
        x = _resize(x, a, n // 2 + 1 if i == len(axes) - 1 else n, fn)
    return M.fft_c2r(x, axes=tuple(axes), norm=_norm(norm), n=tuple(sizes))


# ----------------------------------------------------------------------------- one dimension
def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
        out: Any = None) -> Tensor:
    """The 1-D discrete Fourier transform along ``dim`` (complex result)."""
    return _c2c(input, None if n is None else [n], [dim], norm, False, "fft")


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Any = None) -> Tensor:
    """The inverse of :func:`fft`."""
    return _c2c(input, None if n is None else [n], [dim], norm, True, "ifft")


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Any = None) -> Tensor:
    """The FFT of a real signal: the ``n // 2 + 1`` non-negative frequencies."""
    return _r2c(input, None if n is None else [n], [dim], norm, "rfft")


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Any = None) -> Tensor:
    """The inverse of :func:`rfft` (real result of length ``n``, ``2 (m - 1)`` by default)."""
    return _c2r(input, None if n is None else [n], [dim], norm, "irfft")


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Any = None) -> Tensor:
    """The FFT of a Hermitian-symmetric signal given by its first half (real result)."""
    x = _complex(O._check_tensor(input, "hfft"))
    return _c2r(O.conj(x), None if n is None else [n], [dim], _DUAL[_norm(norm)], "hfft")


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Any = None) -> Tensor:
    """The inverse of :func:`hfft` (a real signal's half spectrum, conjugated)."""
    return O.conj(_r2c(input, None if n is None else [n], [dim], _DUAL[_norm(norm)], "ihfft"))


# ----------------------------------------------------------------------------- several dimensions
def fft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
         norm: str | None = None, *, out: Any = None) -> Tensor:
    """The 2-D FFT over ``dim``."""
    return _c2c(input, s, list(dim), norm, False, "fft2")


def ifft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
          norm: str | None = None, *, out: Any = None) -> Tensor:
    """The 2-D inverse FFT over ``dim``."""
    return _c2c(input, s, list(dim), norm, True, "ifft2")


def rfft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
          norm: str | None = None, *, out: Any = None) -> Tensor:
    """The 2-D FFT of a real signal (the last ``dim`` halved)."""
    return _r2c(input, s, list(dim), norm, "rfft2")


def irfft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
           norm: str | None = None, *, out: Any = None) -> Tensor:
    """The inverse of :func:`rfft2`."""
    return _c2r(input, s, list(dim), norm, "irfft2")


def fftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
         norm: str | None = None, *, out: Any = None) -> Tensor:
    """The N-D FFT over ``dim`` (every dim, or the last ``len(s)``, by default)."""
    return _c2c(input, s, dim, norm, False, "fftn")


def ifftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
          norm: str | None = None, *, out: Any = None) -> Tensor:
    """The N-D inverse FFT."""
    return _c2c(input, s, dim, norm, True, "ifftn")


def rfftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
          norm: str | None = None, *, out: Any = None) -> Tensor:
    """The N-D FFT of a real signal (the last dim halved)."""
    return _r2c(input, s, dim, norm, "rfftn")


def irfftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
           norm: str | None = None, *, out: Any = None) -> Tensor:
    """The inverse of :func:`rfftn`."""
    return _c2r(input, s, dim, norm, "irfftn")


def hfft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
          norm: str | None = None, *, out: Any = None) -> Tensor:
    """The 2-D :func:`hfft` (real result)."""
    return hfftn(input, s, dim, norm)


def ihfft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
           norm: str | None = None, *, out: Any = None) -> Tensor:
    """The inverse of :func:`hfft2`."""
    return ihfftn(input, s, dim, norm)


def hfftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
          norm: str | None = None, *, out: Any = None) -> Tensor:
    """The N-D :func:`hfft`: ``irfftn`` of the conjugate with the dual scaling."""
    x = _complex(O._check_tensor(input, "hfftn"))
    return _c2r(O.conj(x), s, None if dim is None else list(dim), _DUAL[_norm(norm)], "hfftn")


def ihfftn(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None,
           norm: str | None = None, *, out: Any = None) -> Tensor:
    """The inverse of :func:`hfftn`: the conjugated half spectrum of the last dim, then the
    inverse c2c over the others (PyTorch's order)."""
    x = _real(O._check_tensor(input, "ihfftn"), "ihfftn")
    axes, sizes = _axes(x, s, None if dim is None else list(dim), "ihfftn")
    if sizes is not None:
        for a, n in zip(axes, sizes):
            x = _resize(x, a, n, "ihfftn")
    nm = _norm(norm)
    y = O.conj(M.fft_r2c(x, axes=(axes[-1],), norm=_DUAL[nm]))
    if len(axes) == 1:
        return y
    return M.fft_c2c(y, axes=tuple(axes[:-1]), norm=nm, inverse=True)


# ----------------------------------------------------------------------------- helpers
def _freq_dtype(dtype: Any) -> Any:
    return default_np() if dtype is None else to_np(dtype)


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an ``n``-point FFT (``[0, 1, ..., -1] / (d n)``)."""
    from ._tensor import _finish

    return _finish(np.fft.fftfreq(n, d).astype(_freq_dtype(dtype)), requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of :func:`rfft` (the non-negative ones)."""
    from ._tensor import _finish

    return _finish(np.fft.rfftfreq(n, d).astype(_freq_dtype(dtype)), requires_grad)


def _shift(input: Tensor, dim: Any, sign: int) -> Tensor:
    x = O._check_tensor(input, "fftshift")
    if dim is None:
        dims = list(range(x._data.ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
    dims = [O._dim(d, x._data.ndim) for d in dims]
    shifts = [sign * (x._data.shape[d] // 2) for d in dims]
    return O.roll(x, shifts, dims) if dims else x


def fftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The zero frequency moved to the centre."""
    return _shift(input, dim, 1)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The inverse of :func:`fftshift`."""
    return _shift(input, dim, -1)


_ = _wrap

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]
