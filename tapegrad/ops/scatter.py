"""Scatter with max/min: ``out = x`` with ``out[index] = max(out[index], y)`` (repeats fold).

``tf.tensor_scatter_nd_max`` / ``_min`` are this primitive.  The derivative
is TensorFlow's (``_TensorScatterMinOrMaxGrad``): every element equal to the
result (the original element and each update that reached it) shares the
incoming gradient evenly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.registry import defop
from .._core.tensor import Tensor
from .elementwise import add, cast, divide, equal, multiply
from .shape import _getitem, index_add_zeros


@defop("scatter_extreme", saves=("x", "y", "out"))
def scatter_extreme(x: Any, y: Any, *, index: tuple[Any, ...], mode: str) -> Any:
    """``x`` with ``out[index] = max(out[index], y)`` (``mode='max'``) or min, repeats folded."""
    out = np.array(x, copy=True)
    (np.maximum if mode == "max" else np.minimum).at(out, index, np.asarray(y))
    return out


def _shares(x: Tensor, y: Tensor, out: Tensor, index: tuple[Any, ...]) -> tuple[Any, Any, Any]:
    """Indicators of the winners and, per output place, how many there are."""
    arr = out._data if isinstance(out, Tensor) else np.asarray(out)
    x_ind = cast(equal(x, out), dtype=arr.dtype)
    y_ind = cast(equal(y, _getitem(out, index=index)), dtype=arr.dtype)
    count = add(x_ind, index_add_zeros(y_ind, index=index, shape=tuple(arr.shape)))
    return x_ind, y_ind, count


@scatter_extreme.defvjp
def _(g: Tensor, x: Tensor, y: Tensor, out: Tensor, index: Any, mode: str) -> Any:
    # d out[p] = (x_ind[p] dx[p] + sum_{k -> p} y_ind[k] dy[k]) / count[p]
    x_ind, y_ind, count = _shares(x, y, out, index)
    share = divide(g, count)
    return multiply(share, x_ind), multiply(_getitem(share, index=index), y_ind)


@scatter_extreme.defjvp
def _(dx: Any, dy: Any, x: Tensor, y: Tensor, *, out: Tensor, index: Any, mode: str) -> Any:
    # the transpose of the VJP: winners' tangents averaged at each place
    x_ind, y_ind, count = _shares(x, y, out, index)
    total = None
    if dx is not None:
        total = multiply(dx, x_ind)
    if dy is not None:
        part = index_add_zeros(multiply(dy, y_ind), index=index, shape=tuple(np.shape(count)))
        total = part if total is None else add(total, part)
    return None if total is None else divide(total, count)
