"""Discrete Fourier transforms over the trailing axes: complex-to-complex, real-to-complex
(the half spectrum) and complex-to-real.

Each is linear, so its VJP is the adjoint transform (in tapegrad ops, differentiable
again), its JVP the transform itself, and batching free (the axes count from the end).
Gradients follow the complex convention of :mod:`tapegrad.ops.complex` (TensorFlow's
``fft_ops`` gradients): ``fft``'s is ``N * ifft(g)``, ``ifft``'s ``fft(g) / N``;
``rfft``'s the real part of ``N * ifft`` of the zero-padded ``g``; ``irfft``'s
``rfft(g) / N`` with the interior frequencies doubled (they stand for two conjugate terms).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.registry import defop
from .._core.tensor import Tensor
from ._raw import data

__all__ = ["fft_c2c", "rfft_r2c", "irfft_c2r"]

_CPLX = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128,
         np.dtype(np.complex64): np.complex64, np.dtype(np.complex128): np.complex128}
_REAL = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}


def _axes(k: int) -> tuple[int, ...]:
    return tuple(range(-k, 0))


def _size(shape: tuple[int, ...], k: int) -> int:
    return int(np.prod(shape[len(shape) - k:])) if k else 1


@defop("fft_c2c", saves=("x_shape",))
def fft_c2c(x: Any, *, k: int, inverse: bool) -> Any:
    """The ``k``-dimensional (inverse) DFT over the last ``k`` axes, in ``x``'s dtype."""
    a = np.asarray(x)
    fn = np.fft.ifftn if inverse else np.fft.fftn
    return np.asarray(fn(a, axes=_axes(k)), dtype=_CPLX[a.dtype])


@fft_c2c.defvjp
def _(g: Tensor, x_shape: tuple[int, ...], k: int, inverse: bool) -> Any:
    # adjoint of F is conj(F) = N * ifft; of ifft = conj(F) / N it is F / N
    from .elementwise import multiply

    n = _size(x_shape, k)
    return (multiply(fft_c2c(g, k=k, inverse=not inverse), float(n) if not inverse else 1.0 / n),)


fft_c2c.defjvp(lambda dx, x, *, out, k, inverse: fft_c2c(dx, k=k, inverse=inverse))
fft_c2c.defbatch(lambda batched, x, *, k, inverse: fft_c2c(x, k=k, inverse=inverse))


@defop("rfft_r2c", saves=("x_shape",))
def rfft_r2c(x: Any, *, k: int) -> Any:
    """The half spectrum (last axis ``n // 2 + 1``) of real ``x`` over the last ``k`` axes."""
    a = np.asarray(x)
    return np.asarray(np.fft.rfftn(a, axes=_axes(k)), dtype=_CPLX[a.dtype])


@rfft_r2c.defvjp
def _(g: Tensor, x_shape: tuple[int, ...], k: int) -> Any:
    # d/dx of a real x: Re(N * ifft(g zero-padded to the full spectrum))
    from .complex import real
    from .elementwise import multiply
    from .shape import pad

    n_last = x_shape[-1]
    m = data(g).shape[-1]
    gp = pad(g, ((0, 0),) * (len(x_shape) - 1) + ((0, n_last - m),))
    return (real(multiply(fft_c2c(gp, k=k, inverse=True), float(_size(x_shape, k)))),)


rfft_r2c.defjvp(lambda dx, x, *, out, k: rfft_r2c(dx, k=k))
rfft_r2c.defbatch(lambda batched, x, *, k: rfft_r2c(x, k=k))


@defop("irfft_c2r")
def irfft_c2r(x: Any, *, k: int, n: int) -> Any:
    """The real signal (last axis ``n``) of the half spectrum ``x`` (last axis ``n//2 + 1``)."""
    a = np.asarray(x)
    s = tuple(np.shape(a)[len(np.shape(a)) - k:-1]) + (n,)
    return np.asarray(np.fft.irfftn(a, s=s, axes=_axes(k)), dtype=_REAL[a.dtype])


@irfft_c2r.defvjp
def _(g: Tensor, k: int, n: int) -> Any:
    # rfft(g) / N, the interior frequencies (two conjugate terms each) counted twice
    from .elementwise import multiply

    m = n // 2 + 1
    c = np.full(m, 2.0)
    c[0] = 1.0
    if n % 2 == 0:
        c[-1] = 1.0
    shape = data(g).shape
    total = float(_size(shape[:-1], k - 1) * n)
    dt = _REAL[np.dtype(_CPLX[data(g).dtype])]
    return (multiply(rfft_r2c(g, k=k), (c / total).astype(dt)),)


irfft_c2r.defjvp(lambda dx, x, *, out, k, n: irfft_c2r(dx, k=k, n=n))
irfft_c2r.defbatch(lambda batched, x, *, k, n: irfft_c2r(x, k=k, n=n))
