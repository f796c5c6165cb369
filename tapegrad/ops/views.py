"""The ops behind in-place writes through views (PyTorch's ``AsStridedBackward0``, ``CopySlices``).

A view is described by ``idx``: for each of its elements, the flat (row-major,
logical) position in its base that it aliases.  Three linear ops on that map:

- ``take_flat(x)``: the view's values, ``x.reshape(-1)[idx]`` (what a view of a
  base rewritten in place is, PyTorch's ``AsStridedBackward0``);
- ``put_flat(g)``: its adjoint, ``g`` added into zeros of the base's shape at ``idx``;
- ``copy_slices(base, src)``: ``base`` with the view's region replaced by ``src``
  (the new value of a base after an in-place op on one of its views, PyTorch's
  ``CopySlices``).

Each rule is written in these ops, so every derivative is differentiable again.

>>> import numpy as np
>>> from tapegrad.ops.views import copy_slices, take_flat
>>> from tapegrad import tensor
>>> b = tensor([1.0, 2.0, 3.0])
>>> idx = np.array([0, 2])
>>> take_flat(b, idx=idx, shape=(3,), overlap=False).numpy()
array([1., 3.])
>>> copy_slices(b, tensor([9.0, 8.0]), idx=idx).numpy()
array([9., 2., 8.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.registry import defop
from .._core.tensor import Tensor
from .elementwise import multiply
from .shape import _getitem, _reshape, _shape_of, per_example


@defop("take_flat")
def take_flat(x: Any, *, idx: np.ndarray, shape: tuple[int, ...], overlap: bool) -> Any:
    """The elements of ``x`` (of shape ``shape``) at flat positions ``idx``."""
    return np.asarray(x).reshape(-1)[idx]


@take_flat.defvjp
def _(g: Tensor, idx: np.ndarray, shape: tuple[int, ...], overlap: bool) -> Any:
    # d take = put the cotangent back where it was taken from
    return (put_flat(g, idx=idx, shape=shape, overlap=overlap),)


@defop("put_flat")
def put_flat(g: Any, *, idx: np.ndarray, shape: tuple[int, ...], overlap: bool) -> Any:
    """Zeros of ``shape`` with ``g`` added at flat positions ``idx`` (repeats accumulate)."""
    g = np.asarray(g)
    out = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=g.dtype)
    if overlap:
        np.add.at(out, idx.reshape(-1), np.broadcast_to(g, idx.shape).reshape(-1))
    else:
        out[idx] = g
    return out.reshape(shape)


@put_flat.defvjp
def _(g: Tensor, idx: np.ndarray, shape: tuple[int, ...], overlap: bool) -> Any:
    return (take_flat(g, idx=idx, shape=shape, overlap=overlap),)


@defop("copy_slices", needs=True)
def copy_slices(base: Any, src: Any, *, idx: np.ndarray) -> Any:
    """``base`` with its flat positions ``idx`` replaced by ``src`` (broadcast to ``idx``)."""
    out = np.array(base, copy=True, order="C")
    out.reshape(-1)[idx] = src
    return out


@copy_slices.defvjp
def _(g: Tensor, idx: np.ndarray, needs: tuple[bool, ...]) -> Any:
    # the base keeps g outside the region; the source gets g inside it
    gb = copy_slices(g, 0.0, idx=idx) if needs[0] else None
    gs = take_flat(g, idx=idx, shape=_shape_of(g), overlap=False) if needs[1] else None
    return gb, gs


take_flat.defjvp(lambda dx, x, *, out, idx, shape, overlap: take_flat(
    dx, idx=idx, shape=shape, overlap=overlap))
put_flat.defjvp(lambda dg, g, *, out, idx, shape, overlap: put_flat(
    dg, idx=idx, shape=shape, overlap=overlap))


@copy_slices.defjvp
def _(db: Any, ds: Any, base: Any, src: Any, *, out: Any, idx: np.ndarray) -> Any:
    if db is None:
        db = np.zeros(_shape_of(base), dtype=out._data.dtype)
    return copy_slices(db, 0.0 if ds is None else ds, idx=idx)


@take_flat.defbatch
def _(batched: tuple[bool, ...], x: Any, *, idx: np.ndarray, shape: tuple[int, ...],
      overlap: bool) -> Any:
    n = _shape_of(x)[0]
    return _getitem(_reshape(x, shape=(n, -1)), index=(slice(None), idx))


put_flat.defbatch(per_example(put_flat))
copy_slices.defbatch(per_example(copy_slices))


# ------------------------------------------------------------------ fills that keep the edge
@defop("fill")
def fill(x: Any, *, value: Any) -> Any:
    """``x``'s shape and dtype, full of ``value``: an in-place fill that stays recorded
    (PyTorch's ``fill_``/``zero_`` keep the edge to the old value, with a zero gradient)."""
    a = np.asarray(x)
    return np.full(a.shape, value, dtype=a.dtype)


@fill.defvjp
def _(g: Tensor, value: Any) -> Any:  # the new values do not depend on the old ones
    return (multiply(g, 0.0),)


fill.defjvp(lambda dx, x, *, out, value: multiply(dx, 0.0))
fill.defbatch(lambda batched, x, *, value: fill(x, value=value))
zero = fill.variant("zero")


@defop("fill_tensor", needs=True)
def fill_tensor(x: Any, v: Any) -> Any:
    """``x``'s shape and dtype, full of the 0-d ``v`` (``fill_(tensor)``: the gradient goes
    to ``v``, summed; ``x`` gets zero)."""
    a = np.asarray(x)
    return np.broadcast_to(np.asarray(v, dtype=a.dtype), a.shape).copy()


@fill_tensor.defvjp
def _(g: Tensor, needs: tuple[bool, ...]) -> Any:
    # the engine sums g to v's shape and casts it to v's dtype
    return (multiply(g, 0.0) if needs[0] else None, g if needs[1] else None)


@fill_tensor.defjvp
def _(dx: Any, dv: Any, x: Any, v: Any, *, out: Any) -> Any:
    if dv is None:
        return multiply(dx, 0.0)
    return fill_tensor(np.zeros(_shape_of(x), dtype=out._data.dtype), dv)


fill_tensor.defbatch(per_example(fill_tensor))
copy_into = fill_tensor.variant("copy_into")  # ``x.copy_(src)``: src broadcast and cast
