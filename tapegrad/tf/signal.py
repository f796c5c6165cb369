"""``tf.signal``: FFTs over the innermost axes, ``fftshift``, ``frame`` and windows.

The transforms are the linear ops of :mod:`tapegrad.ops.fft` (gradients are the adjoint
transforms, as TensorFlow's ``fft_ops`` gradients).  ``fft_length`` crops or zero-pads
the input's innermost axes first, as TensorFlow does.

>>> import tapegrad.tf as tf
>>> tf.signal.rfft(tf.constant([1.0, 0.0, 0.0, 0.0]))
<tf.Tensor: shape=(3,), dtype=complex64, numpy=array([1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)>
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import ops
from .._core.tensor import Tensor
from ..ops.fft import fft_c2c, fft_c2r, fft_r2c, trailing
from . import dtypes as _dt
from ._ops import _int, _t
from ._ops_extra import roll
from ._ops_more import _attr_error
from ._tensor import tft

_CPLX_NAMES = "complex64, complex128"
_FLOAT_NAMES = "float, double"


def _check(t: Tensor, op: str, k: int, kinds: str, allowed: str, sig: str, attr: str) -> None:
    if t._data.dtype.kind not in kinds:
        from ._ops_more import _dt_list

        raise _attr_error(attr, t._data.dtype, allowed, op, sig,
                          f"attr={attr}:type,default=DT_COMPLEX64,allowed=[{_dt_list(allowed)}]"
                          if kinds == "c" else
                          f"attr=Treal:type,default=DT_FLOAT,allowed=[{_dt_list(allowed)}]; "
                          f"attr=Tcomplex:type,default=DT_COMPLEX64,allowed=[DT_COMPLEX64, "
                          f"DT_COMPLEX128]")
    if t._data.ndim < k:
        from ._ops import _invalid

        raise _invalid(f"Input must have rank of at least {k} but got: {t._data.ndim}",
                       f"{op} transforms the innermost {k} axes", op)


def _c2c(x: Any, k: int, inverse: bool, op: str) -> Tensor:
    t = _t(x)
    _check(t, op, k, "c", _CPLX_NAMES, "input:Tcomplex -> output:Tcomplex", "Tcomplex")
    return fft_c2c(t, axes=trailing(k), norm="backward", inverse=inverse)


def fft(input: Any, name: str | None = None) -> Tensor:
    """The DFT over the innermost axis (complex input).

    >>> import tapegrad.tf as tf
    >>> tf.signal.fft(tf.constant([1.0 + 0j, 0j]))
    <tf.Tensor: shape=(2,), dtype=complex128, numpy=array([1.+0.j, 1.+0.j])>
    """
    return _c2c(input, 1, False, "FFT")


def ifft(input: Any, name: str | None = None) -> Tensor:
    """The inverse DFT over the innermost axis (complex input)."""
    return _c2c(input, 1, True, "IFFT")


def fft2d(input: Any, name: str | None = None) -> Tensor:
    """The 2-D DFT over the two innermost axes."""
    return _c2c(input, 2, False, "FFT2D")


def ifft2d(input: Any, name: str | None = None) -> Tensor:
    """The inverse 2-D DFT over the two innermost axes."""
    return _c2c(input, 2, True, "IFFT2D")


def fft3d(input: Any, name: str | None = None) -> Tensor:
    """The 3-D DFT over the three innermost axes."""
    return _c2c(input, 3, False, "FFT3D")


def ifft3d(input: Any, name: str | None = None) -> Tensor:
    """The inverse 3-D DFT over the three innermost axes."""
    return _c2c(input, 3, True, "IFFT3D")


def _fit(t: Tensor, lengths: list[int]) -> Tensor:
    """Crop or zero-pad the innermost ``len(lengths)`` axes to ``lengths``."""
    k = len(lengths)
    nd = t._data.ndim
    shape = t._data.shape
    index = [slice(None)] * nd
    pw = [(0, 0)] * nd
    for j, n in enumerate(lengths):
        ax = nd - k + j
        if shape[ax] > n:
            index[ax] = slice(0, n)
        elif shape[ax] < n:
            pw[ax] = (0, n - shape[ax])
    if any(s != slice(None) for s in index):
        t = ops.getitem(t, tuple(index))
    if any(p != (0, 0) for p in pw):
        t = ops.pad(t, pw)
    return t


def _lengths(fft_length: Any, default: list[int], op: str) -> list[int]:
    if fft_length is None:
        return default
    v = fft_length._data if isinstance(fft_length, Tensor) else np.asarray(fft_length)
    return [int(i) for i in np.asarray(v).reshape(-1)]


def _r2c(x: Any, k: int, fft_length: Any, op: str) -> Tensor:
    t = _t(x)
    if t._data.dtype not in (np.float32, np.float64):
        raise ValueError(f"{op} requires tf.float32 or tf.float64 inputs, got: {str(t)}")
    _check(t, op, k, "f", _FLOAT_NAMES, "input:Treal, fft_length:int32 -> output:Tcomplex",
           "Treal")
    n = _lengths(fft_length, list(t._data.shape[t._data.ndim - k:]), op)
    return fft_r2c(_fit(t, n), axes=trailing(k), norm="backward")


def _c2r(x: Any, k: int, fft_length: Any, op: str) -> Tensor:
    t = _t(x)
    if t._data.dtype.kind != "c":
        raise ValueError(f"{op} requires tf.complex64 or tf.complex128 inputs, got: {str(t)}")
    _check(t, op, k, "c", _CPLX_NAMES, "input:Tcomplex, fft_length:int32 -> output:Treal",
           "Tcomplex")
    shape = list(t._data.shape[t._data.ndim - k:])
    n = _lengths(fft_length, shape[:-1] + [2 * (shape[-1] - 1)], op)
    return fft_c2r(_fit(t, n[:-1] + [n[-1] // 2 + 1]), axes=trailing(k), norm="backward",
                   n=tuple(n))


def rfft(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """The half spectrum (``n // 2 + 1`` frequencies) of a real signal's innermost axis."""
    return _r2c(input_tensor, 1, fft_length, "RFFT")


def irfft(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """The real signal of a half spectrum (length ``2 * (m - 1)`` by default)."""
    return _c2r(input_tensor, 1, fft_length, "IRFFT")


def rfft2d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """:func:`rfft` over the two innermost axes."""
    return _r2c(input_tensor, 2, fft_length, "RFFT2D")


def irfft2d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """:func:`irfft` over the two innermost axes."""
    return _c2r(input_tensor, 2, fft_length, "IRFFT2D")


def _shift_axes(t: Tensor, axes: Any) -> list[int]:
    if axes is None:
        return list(range(t._data.ndim))
    v = axes._data if isinstance(axes, Tensor) else axes
    return [int(a) for a in np.asarray(v).reshape(-1)]


def fftshift(x: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """Move the zero frequency to the centre (a roll by ``n // 2``)."""
    t = _t(x)
    ax = _shift_axes(t, axes)
    return roll(t, [t._data.shape[a] // 2 for a in ax], ax)


def ifftshift(x: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """The inverse of :func:`fftshift` (a roll by ``-(n // 2)``)."""
    t = _t(x)
    ax = _shift_axes(t, axes)
    return roll(t, [-(t._data.shape[a] // 2) for a in ax], ax)


def frame(signal: Any, frame_length: Any, frame_step: Any, pad_end: bool = False,
          pad_value: Any = 0, axis: int = -1, name: str | None = None) -> Tensor:
    """Overlapping frames of ``frame_length`` every ``frame_step`` along ``axis`` (a gather).

    >>> import tapegrad.tf as tf
    >>> tf.signal.frame(tf.range(5), 3, 2)
    <tf.Tensor: shape=(2, 3), dtype=int32, numpy=
    array([[0, 1, 2],
           [2, 3, 4]], dtype=int32)>
    """
    t = _t(signal)
    fl, fs = _int(frame_length), _int(frame_step)
    nd = t._data.ndim
    ax = int(axis) % nd
    n = t._data.shape[ax]
    if pad_end:
        count = -(-n // fs)
        need = max((count - 1) * fs + fl - n, 0)
        if need:
            pw = [(0, 0)] * nd
            pw[ax] = (0, need)
            t = ops.pad(t, pw, constant_values=float(pad_value))
    else:
        count = max(0, 1 + (n - fl) // fs) if n >= fl else 0
    idx = (np.arange(count) * fs)[:, None] + np.arange(fl)[None, :]
    return ops.getitem(t, (slice(None),) * ax + (idx.reshape(count, fl) if count else
                                                 np.zeros((0, fl), np.int64),))


def _window(length: Any, periodic: Any, dtype: Any, a: float, b: float) -> Tensor:
    n = _int(length)
    npd = _dt.np_dtype(dtype)
    if npd.kind != "f":
        raise ValueError(f"dtype must be a floating point type. Found {_dt.as_dtype(npd)!r}")
    if n == 1:
        return tft(np.ones(1, npd))
    even = 1 - n % 2
    denom = npd.type(n + int(bool(periodic)) * even - 1)
    count = np.arange(n).astype(npd)
    arg = (npd.type(2.0 * math.pi) * count / denom).astype(npd)
    return tft((npd.type(a) - npd.type(b) * np.cos(arg)).astype(npd))


def hann_window(window_length: Any, periodic: bool = True, dtype: Any = _dt.float32,
                name: str | None = None) -> Tensor:
    """``0.5 - 0.5 cos(2 pi n / N)`` (``N = length`` when periodic, else ``length - 1``)."""
    return _window(window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length: Any, periodic: bool = True, dtype: Any = _dt.float32,
                   name: str | None = None) -> Tensor:
    """``0.54 - 0.46 cos(2 pi n / N)``."""
    return _window(window_length, periodic, dtype, 0.54, 0.46)


def overlap_and_add(signal: Any, frame_step: Any, name: str | None = None) -> Tensor:
    """Sum frames ``(..., frames, frame_length)`` placed every ``frame_step`` samples
    (a scatter-add, so gradients gather back)."""
    from ..ops.shape import index_add

    t = _t(signal)
    if t._data.ndim < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {t._data.ndim}")
    step = _int(frame_step)
    *lead, nf, fl = t._data.shape
    n = (nf - 1) * step + fl if nf else 0
    pos = (np.arange(nf) * step)[:, None] + np.arange(fl)[None, :]
    moved = ops.moveaxis(ops.moveaxis(t, -1, 0), -1, 0)  # (nf, fl, *lead)
    out = index_add(moved, (pos,), (n,) + tuple(lead))
    return ops.moveaxis(out, 0, -1)


def _pow2(n: int) -> int:
    return 1 << max(int(n) - 1, 0).bit_length()


def stft(signals: Any, frame_length: Any, frame_step: Any, fft_length: Any = None,
         window_fn: Any = hann_window, pad_end: bool = False, name: str | None = None) -> Tensor:
    """Short-time Fourier transform: windowed frames, each ``rfft``'d (``fft_length``
    defaults to the power of two enclosing ``frame_length``).

    >>> import tapegrad.tf as tf
    >>> tf.signal.stft(tf.ones([16]), frame_length=8, frame_step=4).shape
    TensorShape([3, 5])
    """
    t = _t(signals)
    fl = _int(frame_length)
    n = _pow2(fl) if fft_length is None else _int(fft_length)
    framed = frame(t, fl, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed = ops.multiply(framed, window_fn(fl, dtype=_dt.as_dtype(framed._data.dtype)))
    return rfft(framed, [n])


def inverse_stft(stfts: Any, frame_length: Any, frame_step: Any, fft_length: Any = None,
                 window_fn: Any = hann_window, name: str | None = None) -> Tensor:
    """The signal of an STFT: ``irfft`` of each frame, windowed, overlapped and added."""
    t = _t(stfts)
    fl = _int(frame_length)
    n = _pow2(fl) if fft_length is None else _int(fft_length)
    frames = irfft(t, [n])
    if n > fl:
        frames = ops.getitem(frames, (Ellipsis, slice(0, fl)))
    elif n < fl:
        pw = [(0, 0)] * (frames._data.ndim - 1) + [(0, fl - n)]
        frames = ops.pad(frames, pw)
    if window_fn is not None:
        frames = ops.multiply(frames, window_fn(fl, dtype=_dt.as_dtype(frames._data.dtype)))
    return overlap_and_add(frames, frame_step)


def inverse_stft_window_fn(frame_step: Any, forward_window_fn: Any = hann_window,
                           name: str | None = None) -> Any:
    """The window that makes :func:`inverse_stft` invert :func:`stft` (TensorFlow's)."""
    step = _int(frame_step)

    def fn(frame_length: Any, dtype: Any) -> Tensor:
        fl = _int(frame_length)
        w = forward_window_fn(fl, dtype=dtype)._data
        sq = w * w
        pad = -(-fl // step) * step - fl
        sq = np.pad(sq, (0, pad)).reshape(-1, step)
        denom = np.tile(sq.sum(0, keepdims=True), (sq.shape[0], 1)).reshape(-1)[:fl]
        return tft((w / denom).astype(w.dtype))
    return fn


__all__ = ["fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "rfft", "irfft", "rfft2d",
           "irfft2d", "fftshift", "ifftshift", "frame", "hann_window", "hamming_window",
           "overlap_and_add", "stft", "inverse_stft", "inverse_stft_window_fn"]
