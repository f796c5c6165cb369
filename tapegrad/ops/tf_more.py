"""Primitives of TensorFlow-only ops whose gradient convention is not the derivative of a
composite: ``dynamic_stitch``.

``dynamic_stitch`` writes ``data[m][i]`` to row ``indices[m][i]`` of the result, later
writes winning.  TensorFlow's gradient (``data_flow_grad._DynamicStitchGrads``) sends
every data row the cotangent of the row it was written to, overwritten or not; a gather
of the concatenated data would give the overwritten rows zero.  So the forward is its
own op with that VJP (gathers, differentiable again); its JVP is the stitch of the
tangents; batching moves the batch axis behind the row axis.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.registry import defop
from .._core.tensor import Tensor
from ._raw import data

__all__ = ["dynamic_stitch"]


def _stitch_np(xs: tuple[Any, ...], idx: tuple[np.ndarray, ...], n: int,
               inner: tuple[int, ...], dtype: Any) -> np.ndarray:
    out = np.zeros((n,) + inner, dtype=dtype)
    for x, i in zip(xs, idx):
        out[i.reshape(-1)] = np.asarray(x).reshape((-1,) + inner)
    return out


@defop("dynamic_stitch")
def dynamic_stitch(*xs: Any, idx: tuple[np.ndarray, ...], n: int,
                   inner: tuple[int, ...]) -> Any:
    """``merged[idx[m][i]] = xs[m][i]`` (later writes win, unwritten rows zero)."""
    return _stitch_np(xs, idx, n, inner, np.asarray(xs[0]).dtype)


@dynamic_stitch.defvjp
def _(g: Tensor, idx: tuple[np.ndarray, ...], n: int, inner: tuple[int, ...]) -> Any:
    # TensorFlow's rule: each data row gets the cotangent of its target row
    from .shape import take

    return tuple(take(g, i, axis=0) for i in idx)


@dynamic_stitch.defjvp
def _(*args: Any, out: Any, idx: tuple[np.ndarray, ...], n: int, inner: tuple[int, ...]) -> Any:
    k = len(idx)
    dxs, xs = args[:k], args[k:]
    from .elementwise import multiply

    ts = [multiply(x, 0.0) if d is None else d for d, x in zip(dxs, xs)]
    return dynamic_stitch(*ts, idx=idx, n=n, inner=inner)


@dynamic_stitch.defbatch
def _(batched: tuple[bool, ...], *xs: Any, idx: tuple[np.ndarray, ...], n: int,
      inner: tuple[int, ...]) -> Any:
    from .shape import broadcast_to, moveaxis

    b = next(data(x).shape[0] for x, f in zip(xs, batched) if f)
    moved = []
    for x, f in zip(xs, batched):
        if not f:
            x = broadcast_to(x, (b,) + tuple(data(x).shape))
        # (B, *idx_shape, *inner) -> (*idx_shape, *inner, B): the batch becomes an inner axis
        moved.append(moveaxis(x, 0, -1))
    out = dynamic_stitch(*moved, idx=idx, n=n, inner=inner + (b,))
    return moveaxis(out, -1, 0)
