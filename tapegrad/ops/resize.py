"""Resizing (``interpolate``): nearest and (bi/tri)linear, separable per axis.

Each spatial axis is resampled by one ``(out, in)`` matrix (a selection for
nearest, two weights per row for linear).  ``resample`` applies them, one
matmul per axis, as one op; being linear, its VJP is ``resample`` with the
transposed matrices and its JVP itself, so it is differentiable to any order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.registry import defop
from .._core.tensor import Tensor
from ._raw import data

__all__ = ["resize_matrix", "resize"]


def resize_matrix(n: int, o: int, mode: str, align_corners: bool, scale: float | None,
                  dtype: Any = np.float64) -> np.ndarray:
    """The ``(o, n)`` resampling matrix of one axis.

    ``mode``: ``"nearest"`` (PyTorch: ``floor(dst * scale)``), ``"nearest-exact"``
    (``floor((dst + 0.5) * scale)``) or ``"linear"`` (half-pixel centres unless
    ``align_corners``).  ``scale`` is in/out (PyTorch uses ``1 / scale_factor``
    when one was given).
    """
    s = (n / o) if scale is None else scale
    dst = np.arange(o, dtype=np.float64)
    a = np.zeros((o, n), dtype=np.float64)
    if mode in ("nearest", "nearest-exact"):
        near = np.floor((dst + (0.5 if mode == "nearest-exact" else 0.0)) * s).astype(np.int64)
        a[np.arange(o), np.minimum(near, n - 1)] = 1.0
        return a.astype(dtype)
    if align_corners:
        src = dst * ((n - 1) / (o - 1)) if o > 1 else np.zeros(o)
    else:
        src = np.maximum((dst + 0.5) * s - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n - 1)
    i1 = np.minimum(i0 + 1, n - 1)
    lam = src - i0
    np.add.at(a, (np.arange(o), i0), 1.0 - lam)
    np.add.at(a, (np.arange(o), i1), lam)
    return a.astype(dtype)


def _apply(x: np.ndarray, mats: tuple[np.ndarray, ...], axes: tuple[int, ...]) -> np.ndarray:
    for a, ax in zip(mats, axes):
        x = np.moveaxis(np.matmul(a, np.moveaxis(x, ax, -2)), -2, ax)
    return np.ascontiguousarray(x)


@defop("resample")
def _resample(x: Any, *, mats: tuple[Any, ...], axes: tuple[int, ...]) -> Any:
    """``x`` with axis ``axes[i]`` (counted from the end) multiplied by ``mats[i]``."""
    x = np.asarray(x)
    return _apply(x, tuple(np.asarray(m, dtype=x.dtype) for m in mats), axes)


@_resample.defvjp
def _(g: Tensor, mats: tuple[Any, ...], axes: tuple[int, ...]) -> Any:
    # linear: the adjoint multiplies by the transposed matrices
    return (_resample(g, mats=tuple(np.ascontiguousarray(np.transpose(m)) for m in mats),
                      axes=axes),)


@_resample.defjvp
def _(dx: Any, x: Any, *, out: Any, mats: tuple[Any, ...], axes: tuple[int, ...]) -> Any:
    return _resample(dx, mats=mats, axes=axes)


@_resample.defbatch
def _(batched: tuple[bool, ...], x: Any, *, mats: tuple[Any, ...],
      axes: tuple[int, ...]) -> Any:
    return _resample(x, mats=mats, axes=axes)  # axes count from the end: a batch is free


_OPS = {(m, n): _resample.variant(f"upsample_{m.replace('-', '_')}_{n}d")
        for m in ("nearest", "nearest-exact", "linear") for n in (1, 2, 3)}


def resize(x: Any, size: tuple[int, ...], mode: str, align_corners: bool = False,
           scales: tuple[float | None, ...] | None = None, channels_last: bool = False
           ) -> Tensor:
    """Resize the spatial axes of ``x`` (``(N, C, *S)``, or ``(N, *S, C)``) to ``size``.

    Examples
    --------
    >>> import numpy as np, tapegrad as tg
    >>> from tapegrad.ops.resize import resize
    >>> resize(tg.tensor(np.array([[[0.0, 1.0]]])), (4,), "linear")._data.round(2).tolist()
    [[[0.0, 0.25, 0.75, 1.0]]]
    """
    xs = data(x).shape
    nsp = len(size)
    first = 1 if channels_last else 2
    mats, axes = [], []
    for i in range(nsp):
        ax = first + i
        sc = None if scales is None else scales[i]
        mats.append(resize_matrix(xs[ax], int(size[i]), mode, align_corners, sc,
                                  data(x).dtype))
        axes.append(ax - len(xs))
    op = _OPS.get((mode, nsp), _resample)
    return op(x, mats=tuple(mats), axes=tuple(axes))
