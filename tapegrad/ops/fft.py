"""Discrete Fourier transforms over any axes, with NumPy's ``norm`` ("backward",
"forward", "ortho"): complex-to-complex, real-to-complex (the half spectrum, or the full
one) and complex-to-real; one family for both front-ends (TensorFlow's transforms are
the trailing axes with ``norm="backward"``).

Each is linear, so its VJP is the adjoint transform (in tapegrad ops, differentiable
again), its JVP the transform itself, and its batching rule shifts the axes.  Gradients
follow the complex convention of :mod:`tapegrad.ops.complex` (both frameworks agree for
real losses): ``c2c``'s adjoint is the opposite transform with the dual scaling;
``r2c``'s the real part of the inverse of the zero-padded half spectrum; ``c2r``'s the
``r2c`` of the cotangent with the interior bins (two conjugate terms each) doubled.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.registry import defop
from .._core.tensor import Tensor
from .complex import real
from .elementwise import multiply

__all__ = ["fft_c2c", "fft_r2c", "fft_r2c_full", "fft_c2r", "trailing"]


def trailing(k: int) -> tuple[int, ...]:
    """The last ``k`` axes (TensorFlow's ``fft``, ``fft2d``, ``fft3d``)."""
    return tuple(range(-k, 0))


_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


@defop("fft_c2c")
def fft_c2c(x: Any, *, axes: tuple[int, ...], norm: Any, inverse: bool) -> Any:
    a = np.asarray(x)
    dt = np.complex128 if a.dtype in (np.float64, np.complex128) else np.complex64
    f = np.fft.ifftn if inverse else np.fft.fftn
    return f(a, axes=axes, norm=norm).astype(dt, copy=False)


@fft_c2c.defvjp
def _(g: Tensor, axes: tuple[int, ...], norm: str, inverse: bool) -> Any:
    # the adjoint of a DFT is the opposite transform with the dual scaling
    return (fft_c2c(g, axes=axes, norm=_DUAL[norm], inverse=not inverse),)


fft_c2c.defjvp(lambda dx, x, *, out, axes, norm, inverse: fft_c2c(
    dx, axes=axes, norm=norm, inverse=inverse))


@defop("fft_r2c", saves=("x_shape",))
def fft_r2c(x: Any, *, axes: tuple[int, ...], norm: Any) -> Any:
    a = np.asarray(x)
    dt = np.complex128 if a.dtype == np.float64 else np.complex64
    return np.fft.rfftn(a, axes=axes, norm=norm).astype(dt, copy=False)


def _pad_last(g: Any, axis: int, size: int) -> Any:
    """``g`` zero-padded along ``axis`` to ``size``."""
    from .shape import pad

    n = g._data.shape[axis] if isinstance(g, Tensor) else np.shape(g)[axis]
    if n >= size:
        return g
    widths = [(0, 0)] * (g._data.ndim if isinstance(g, Tensor) else np.ndim(g))
    widths[axis] = (0, size - n)
    return pad(g, tuple(widths))


@fft_r2c.defvjp
def _(g: Tensor, x_shape: tuple[int, ...], axes: tuple[int, ...], norm: str) -> Any:
    # (P F)^H = Re F^H P^T: the half spectrum zero-padded, the inverse c2c, the real part
    full = _pad_last(g, axes[-1], x_shape[axes[-1]])
    return (real(fft_c2c(full, axes=axes, norm=_DUAL[norm], inverse=True)),)


fft_r2c.defjvp(lambda dx, x, *, out, axes, norm: fft_r2c(dx, axes=axes, norm=norm))


@defop("fft_c2r")
def fft_c2r(x: Any, *, axes: tuple[int, ...], norm: Any, n: tuple[int, ...]) -> Any:
    a = np.asarray(x)
    dt = np.float64 if a.dtype == np.complex128 else np.float32
    return np.fft.irfftn(a, s=n, axes=axes, norm=norm).astype(dt, copy=False)


@fft_c2r.defvjp
def _(g: Tensor, axes: tuple[int, ...], norm: str, n: tuple[int, ...]) -> Any:
    # PyTorch's fft_c2r_backward: r2c of the cotangent, the bins that stand for two doubled
    from .shape import concatenate, getitem

    gi = fft_r2c(g, axes=axes, norm=_DUAL[norm])
    last = axes[-1]
    m = gi._data.shape[last]
    double = n[-1] - m
    if double <= 0:
        return (gi,)
    nd = gi._data.ndim

    def part(a: int, b: int) -> Any:
        idx = [slice(None)] * nd
        idx[last] = slice(a, b)
        return getitem(gi, tuple(idx))

    pieces = [part(0, 1), multiply(part(1, 1 + double), 2.0)]
    if 1 + double < m:
        pieces.append(part(1 + double, m))
    return (concatenate(pieces, axis=last),)


fft_c2r.defjvp(lambda dx, x, *, out, axes, norm, n: fft_c2r(dx, axes=axes, norm=norm, n=n))


def _fft_batch(op: Any) -> Any:
    def rule(batched: tuple[bool, ...], x: Any, **attrs: Any) -> Any:
        attrs["axes"] = tuple(a + 1 if a >= 0 else a for a in attrs["axes"])  # batch: axis 0
        return op(x, **attrs)

    return rule


for _op in (fft_c2c, fft_r2c, fft_c2r):
    _op.defbatch(_fft_batch(_op))
del _op


@defop("fft_r2c_full")
def fft_r2c_full(x: Any, *, axes: tuple[int, ...], norm: Any, inverse: bool) -> Any:
    """The full (two-sided) DFT of a real signal (PyTorch's ``fft`` of a real tensor)."""
    a = np.asarray(x)
    dt = np.complex128 if a.dtype == np.float64 else np.complex64
    f = np.fft.ifftn if inverse else np.fft.fftn
    return f(a, axes=axes, norm=norm).astype(dt, copy=False)


@fft_r2c_full.defvjp
def _(g: Tensor, axes: tuple[int, ...], norm: Any, inverse: bool) -> Any:
    # Re F^H: the opposite transform with the dual scaling, its real part
    return (real(fft_c2c(g, axes=axes, norm=_DUAL[norm], inverse=not inverse)),)


fft_r2c_full.defjvp(lambda dx, x, *, out, axes, norm, inverse: fft_r2c_full(
    dx, axes=axes, norm=norm, inverse=inverse))
fft_r2c_full.defbatch(_fft_batch(fft_r2c_full))
