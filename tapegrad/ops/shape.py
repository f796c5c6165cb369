"""Shape ops and indexing.  Shape arguments are static attributes."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.registry import defop
from .._core.tensor import Tensor
from ._raw import raw, wrap


def _shape_of(x: Any) -> tuple[int, ...]:
    return x._data.shape if isinstance(x, Tensor) else np.shape(x)


@defop("dim_size")
def _dim_size(x: Any, *, axis: int) -> Any:
    return np.asarray(np.shape(x)[axis], np.int32)


_dim_size.vjp = None  # type: ignore[assignment]  # an integer: never recorded


def dim_size(x: Any, axis: int = 0) -> Tensor:
    """The length of ``x`` along ``axis`` as an int32 tensor.

    An op (not a Python number), so that a trace keeps it: a traced loop over a
    tensor whose length differs between calls runs as many times as it is long.

    >>> import tapegrad as tg
    >>> from tapegrad.ops.shape import dim_size
    >>> dim_size(tg.tensor([[1.0, 2.0, 3.0]]), 1)
    tensor(3, dtype=torch.int32)
    """
    return _dim_size(x, axis=axis)


@defop("reshape", saves=("x_shape",))
def _reshape(x: Any, *, shape: tuple[int, ...]) -> Any:
    try:
        return np.reshape(x, shape)
    except ValueError:
        raise hinted(RuntimeError(
            with_hint(
                f"shape '{list(shape)}' is invalid for input of size {np.size(x)}",
                f"the input has shape {list(np.shape(x))}",
            )
        )) from None


@_reshape.defvjp
def _(g: Tensor, x_shape: tuple[int, ...], shape: Any) -> Any:  # reshape back
    return (_reshape(g, shape=x_shape),)


def reshape(x: Any, shape: Any) -> Tensor:
    """Reshape (one ``-1`` allowed)."""
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    return _reshape(x, shape=tuple(int(s) for s in shape))


@defop("transpose")
def _transpose(x: Any, *, axes: Any) -> Any:
    return np.transpose(x, axes)


@_transpose.defvjp
def _(g: Tensor, axes: Any) -> Any:  # inverse permutation
    if axes is None:
        return (_transpose(g, axes=None),)
    return (_transpose(g, axes=tuple(int(i) for i in np.argsort(axes))),)


def transpose(x: Any, axes: Any = None) -> Tensor:
    """Permute axes (reverse them when ``axes`` is None)."""
    if axes is not None:
        n = len(_shape_of(x))
        axes = tuple(int(a) % max(n, 1) for a in axes)
        if sorted(axes) != list(range(n)):
            raise hinted(RuntimeError(
                with_hint(
                    f"permute(sparse_coo): number of dimensions in the tensor input does not "
                    f"match the length of the desired ordering of dimensions i.e. input.dim() = "
                    f"{n} is not equal to len(dims) = {len(axes)}",
                    "axes must be a permutation of range(ndim)",
                )
            ))
    return _transpose(x, axes=axes)


permute = transpose


def moveaxis(x: Any, source: Any, destination: Any) -> Tensor:
    n = len(_shape_of(x))
    src = [int(a) % max(n, 1) for a in ((source,) if isinstance(source, int) else source)]
    dst = [int(a) % max(n, 1) for a in
           ((destination,) if isinstance(destination, int) else destination)]
    perm = [a for a in range(n) if a not in src]
    for d, s in sorted(zip(dst, src)):  # numpy's construction
        perm.insert(d, s)
    return transpose(x, perm)


def swapaxes(x: Any, a: int, b: int) -> Tensor:
    n = len(_shape_of(x))
    perm = list(range(n))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


_squeeze = _reshape.variant("squeeze")
_squeeze_all = _reshape.variant("squeeze_all")
_unsqueeze = _reshape.variant("unsqueeze")


def squeeze(x: Any, axis: Any = None) -> Tensor:
    """Remove size-1 axes (only those in ``axis`` when given; others are left as they are)."""
    shape = _shape_of(x)
    if axis is None:
        new = tuple(s for s in shape if s != 1)
        return _squeeze_all(x, shape=new)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    n = max(len(shape), 1)
    for a in axes:
        if not -n <= int(a) < n:
            raise hinted(IndexError(with_hint(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got "
                f"{int(a)})", f"the tensor has {len(shape)} dimensions")))
    axes = tuple(int(a) % n for a in axes)
    new = tuple(s for i, s in enumerate(shape) if not (i in axes and s == 1))
    return _squeeze(x, shape=new)


def expand_dims(x: Any, axis: Any) -> Tensor:
    """Insert a size-1 axis at ``axis``."""
    shape = _shape_of(x)
    new = np.expand_dims(np.empty(shape, dtype=np.uint8), axis).shape
    return _unsqueeze(x, shape=new)


@defop("broadcast_to", saves=("x_shape",))
def _broadcast_to(x: Any, *, shape: tuple[int, ...]) -> Any:
    try:
        return np.broadcast_to(x, shape)
    except ValueError:
        raise hinted(RuntimeError(
            with_hint(
                f"The expanded size of the tensor must match the existing size: cannot "
                f"broadcast shape {list(np.shape(x))} to {list(shape)}",
                "a dimension can only be expanded from size 1",
            )
        )) from None


@_broadcast_to.defvjp
def _(g: Tensor, x_shape: tuple[int, ...], shape: Any) -> Any:  # sum back over broadcast axes
    return (sum_to(g, shape=x_shape),)


def broadcast_to(x: Any, shape: Any) -> Tensor:
    """Broadcast (read-only view) to ``shape``."""
    shape = tuple(int(s) for s in shape)
    if _shape_of(x) == shape:
        return x if isinstance(x, Tensor) else _broadcast_to(x, shape=shape)
    return _broadcast_to(x, shape=shape)


@defop("sum_to", saves=("x_shape",))
def _sum_to(x: Any, *, shape: tuple[int, ...]) -> Any:
    x = np.asarray(x)
    lead = x.ndim - len(shape)
    if lead > 0:
        x = np.add.reduce(x, axis=tuple(range(lead)))
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and x.shape[i] != 1)
    if axes:
        x = np.add.reduce(x, axis=axes, keepdims=True)
    return x


@_sum_to.defvjp
def _(g: Tensor, x_shape: tuple[int, ...], shape: Any) -> Any:  # broadcast back
    return (_broadcast_to(g, shape=x_shape),)


def sum_to(x: Any, shape: Any) -> Tensor:
    """Sum ``x`` down to ``shape`` (the inverse of broadcasting); used by the engine."""
    shape = tuple(shape)
    if _shape_of(x) == shape:
        return x
    if isinstance(x, Tensor) and raw():
        return wrap(_sum_to.fwd(x._data, shape=shape), x)
    return _sum_to(x, shape=shape)


# ---------------------------------------------------------------- joining / splitting
def _check_join(xs: list[Any], axis: int, what: str) -> None:
    shapes = [_shape_of(x) for x in xs]
    if not xs:
        raise hinted(ValueError(with_hint(f"{what} expects a non-empty list of tensors", "pass tensors")))
    nd = len(shapes[0])
    for i, s in enumerate(shapes[1:], 1):
        ok = len(s) == nd and all(a == b for j, (a, b) in enumerate(zip(s, shapes[0]))
                                   if what == "stack" or j != axis)
        if not ok:
            raise hinted(RuntimeError(
                with_hint(
                    f"Sizes of tensors must match except in dimension {axis}. "
                    f"Expected size {list(shapes[0])} but got size {list(s)} for tensor number "
                    f"{i} in the list.",
                    f"{what}: tensor 0 has shape {list(shapes[0])}, tensor {i} has shape "
                    f"{list(s)}",
                )
            ))


@defop("concatenate")
def _concat(*xs: Any, axis: int, sizes: tuple[int, ...]) -> Any:
    return np.concatenate(xs, axis=axis)


@_concat.defvjp
def _(g: Tensor, axis: int, sizes: tuple[int, ...]) -> Any:  # slice g back into pieces
    out = []
    start = 0
    for s in sizes:
        idx = (slice(None),) * axis + (slice(start, start + s),)
        out.append(getitem(g, idx))
        start += s
    return tuple(out)


def concatenate(xs: Any, axis: int = 0) -> Tensor:
    """Join tensors along an existing axis."""
    xs = list(xs)
    nd = len(_shape_of(xs[0])) if xs else 0
    ax = int(axis) % max(nd, 1)
    _check_join(xs, ax, "cat")
    sizes = tuple(_shape_of(x)[ax] for x in xs)
    return _concat(*xs, axis=ax, sizes=sizes)


concat = concatenate


@defop("stack")
def _stack(*xs: Any, axis: int) -> Any:
    return np.stack(xs, axis=axis)


@_stack.defvjp
def _(g: Tensor, axis: int) -> Any:  # take each slice back
    n = g._data.shape[axis]
    return tuple(getitem(g, (slice(None),) * axis + (i,)) for i in range(n))


def stack(xs: Any, axis: int = 0) -> Tensor:
    """Join tensors along a new axis."""
    xs = list(xs)
    nd = len(_shape_of(xs[0])) + 1 if xs else 1
    ax = int(axis) % nd
    _check_join(xs, ax, "stack")
    return _stack(*xs, axis=ax)


def split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
    """numpy's split: ``sections`` equal parts, or split at the given indices."""
    shape = _shape_of(x)
    ax = int(axis) % max(len(shape), 1)
    n = shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if n % k:
            raise hinted(ValueError(
                with_hint("array split does not result in an equal division",
                          f"axis {ax} has size {n}, which {k} does not divide")
            ))
        bounds = [i * (n // k) for i in range(k + 1)]
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    return [getitem(x, (slice(None),) * ax + (slice(a, b),)) for a, b in zip(bounds, bounds[1:])]


# ---------------------------------------------------------------- indexing
def _norm_index(index: Any) -> Any:
    """Turn tensors inside an index into arrays; keep it hashable-agnostic."""
    if isinstance(index, Tensor):
        return index._data
    if isinstance(index, tuple):
        return tuple(_norm_index(i) for i in index)
    if isinstance(index, list):
        return np.asarray([i._data if isinstance(i, Tensor) else i for i in index]) \
            if index and not any(isinstance(i, (slice, type(None), type(Ellipsis))) for i in index) \
            else tuple(_norm_index(i) for i in index)
    return index


@defop("getitem", saves=("x_shape",))
def _getitem(x: Any, *, index: Any) -> Any:
    try:
        r = np.asarray(x)[index]
        if r.__class__ is not np.ndarray and _is_basic(index):
            # a 0-d view, not a copied scalar: writing into it writes into ``x`` (PyTorch's
            # ``x[i].mul_(2)``)
            items = index if isinstance(index, tuple) else (index,)
            if Ellipsis not in items:
                r = np.asarray(x)[items + (Ellipsis,)]
        return r
    except IndexError as exc:
        msg = str(exc).replace(" for axis ", " for dimension ")
        raise hinted(IndexError(with_hint(msg, f"the tensor has shape {list(np.shape(x))}"))) from None


@_getitem.defvjp
def _(g: Tensor, x_shape: tuple[int, ...], index: Any) -> Any:
    # scatter g back into zeros (repeated indices accumulate)
    return (index_add_zeros(g, index=index, shape=x_shape),)


_select = _getitem.variant("select")
_slice = _getitem.variant("slice")
_alias = _getitem.variant("alias")
_unsqueeze_idx = _getitem.variant("unsqueeze_idx")


def getitem(x: Any, index: Any) -> Tensor:
    """``x[index]``: basic slices, integer arrays and boolean masks."""
    if _has_tracer(index):  # a per-example index (vmap): the index is an input
        return getitem_dyn(x, index)
    index = _norm_index(index)
    if index is None or index is Ellipsis:
        index = (index,)
    if isinstance(index, (int, np.integer)):
        return _select(x, index=index)
    if isinstance(index, slice):
        return _slice(x, index=index)
    if isinstance(index, tuple) and _is_basic(index):
        # PyTorch applies basic indices one by one; the last one names the node
        op = _alias
        for i in index:
            if isinstance(i, (int, np.integer)):
                op = _select
            elif i is None:
                op = _unsqueeze_idx
            elif isinstance(i, slice) and i != slice(None):
                op = _slice
        return op(x, index=index)
    return _getitem(x, index=index)


@defop("index_add_zeros", saves=())
def index_add_zeros(g: Any, *, index: Any, shape: tuple[int, ...]) -> Any:
    g = np.asarray(g)
    out = np.zeros(shape, dtype=g.dtype)
    if _is_basic(index):
        out[index] += g
    else:
        np.add.at(out, index, g)
    return out


@index_add_zeros.defvjp
def _(g: Tensor, index: Any, shape: Any) -> Any:  # gather back
    return (_getitem(g, index=index),)


def _is_basic(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return all(isinstance(i, (int, np.integer, slice, type(None), type(Ellipsis))) for i in items)


@defop("setitem", needs=True)
def _setitem(x: Any, v: Any, *, index: Any) -> Any:
    out = np.array(x, copy=True)
    out[index] = v
    return out


@_setitem.defvjp
def _(g: Tensor, index: Any, needs: tuple[bool, ...]) -> Any:
    # x keeps g outside the written region; v gets g inside it
    gx = _setitem(g, 0.0, index=index) if needs[0] else None
    gv = _getitem(g, index=index) if needs[1] else None
    return gx, gv


def setitem(x: Any, index: Any, value: Any) -> Tensor:
    """A new tensor equal to ``x`` with ``x[index] = value`` (out of place)."""
    if _has_tracer(index):
        spec, idx = _split_index(index)
        return _setitem_dyn(x, value, *idx, spec=spec)
    return _setitem(x, value, index=_norm_index(index))


def take(x: Any, indices: Any, axis: int | None = None) -> Tensor:
    """Gather ``indices`` along ``axis`` (flattened input when None)."""
    # an index that a transform is tracing (tf.function, vmap) is an input of the op, not
    # a value taken from the first call
    idx = indices if _has_tracer(indices) else \
        indices._data if isinstance(indices, Tensor) else np.asarray(indices)
    if axis is None:
        return getitem(reshape(x, (-1,)), (idx,))
    n = len(_shape_of(x))
    ax = int(axis) % max(n, 1)
    if isinstance(idx, Tensor):
        return getitem(x, (slice(None),) * ax + (idx,))
    return _getitem(x, index=(slice(None),) * ax + (idx,))


def index_add(g: Any, index: Any, shape: tuple[int, ...]) -> Tensor:
    """``zeros(shape)`` with ``g`` added at ``index`` (repeated indices accumulate); the
    index may hold tensors that a transform traces (they are then inputs of the op)."""
    if _has_tracer(index):
        spec, idx = _split_index(index)
        return _index_add_dyn(g, *idx, spec=spec, shape=tuple(shape))
    return index_add_zeros(g, index=index, shape=tuple(shape))


@defop("pad", saves=("x_shape",))
def _pad(x: Any, *, pad_width: tuple[tuple[int, int], ...], value: float) -> Any:
    return np.pad(x, pad_width, mode="constant", constant_values=value)


@_pad.defvjp
def _(g: Tensor, x_shape: tuple[int, ...], pad_width: Any, value: float) -> Any:
    # the gradient of the un-padded region
    idx = tuple(slice(a, a + s) for (a, _), s in zip(pad_width, x_shape))
    return (_getitem(g, index=idx),)


def pad(x: Any, pad_width: Any, constant_values: float = 0.0) -> Tensor:
    """Constant padding, numpy's ``pad_width`` convention."""
    n = len(_shape_of(x))
    pw = np.broadcast_to(np.asarray(pad_width, dtype=int), (n, 2))
    if np.any(pw < 0):
        raise hinted(ValueError(with_hint("negative padding is not supported", "use slicing to crop")))
    pwt = tuple((int(a), int(b)) for a, b in pw)
    return _pad(x, pad_width=pwt, value=constant_values)


@defop("flip")
def _flip(x: Any, *, axis: Any) -> Any:
    return np.flip(x, axis=axis)


@_flip.defvjp
def _(g: Tensor, axis: Any) -> Any:  # flip back
    return (_flip(g, axis=axis),)


def flip(x: Any, axis: Any = None) -> Tensor:
    """Reverse the order of elements along ``axis`` (all axes when None)."""
    if axis is not None:
        n = len(_shape_of(x))
        axis = tuple(int(a) % max(n, 1) for a in ((axis,) if isinstance(axis, int) else axis))
    return _flip(x, axis=axis)


# ================================================================ forward-mode and batching rules
# Shape ops are linear: the tangent goes through the same op.  A batching rule gets batched
# values with the batch as axis 0 and puts it there in the result.
from ._batch import move_batch as _move_batch  # noqa: E402
from ._batch import shift_axis as _shift_axis  # noqa: E402

_reshape.defjvp(lambda dx, x, *, out, shape: _reshape(dx, shape=shape))
_transpose.defjvp(lambda dx, x, *, out, axes: _transpose(dx, axes=axes))
_broadcast_to.defjvp(lambda dx, x, *, out, shape: _broadcast_to(dx, shape=shape))
_sum_to.defjvp(lambda dx, x, *, out, shape: _sum_to(dx, shape=shape))
_getitem.defjvp(lambda dx, x, *, out, index: _getitem(dx, index=index))
index_add_zeros.defjvp(lambda dg, g, *, out, index, shape: index_add_zeros(
    dg, index=index, shape=shape))
_pad.defjvp(lambda dx, x, *, out, pad_width, value: _pad(dx, pad_width=pad_width, value=0.0))
_flip.defjvp(lambda dx, x, *, out, axis: _flip(dx, axis=axis))


@_setitem.defjvp
def _(dx: Any, dv: Any, x: Any, v: Any, *, out: Any, index: Any) -> Any:
    if dx is None:
        dx = np.zeros(_shape_of(x), dtype=out._data.dtype)
    return _setitem(dx, 0.0 if dv is None else dv, index=index)


def _jvp_join(op: Any) -> Any:
    def rule(*tx: Any, out: Any, **attrs: Any) -> Any:
        n = len(tx) // 2
        ts = [t if t is not None else np.zeros(_shape_of(x), dtype=out._data.dtype)
              for t, x in zip(tx[:n], tx[n:])]
        return op(*ts, **attrs)

    return rule


_concat.defjvp(_jvp_join(_concat))
_stack.defjvp(_jvp_join(_stack))


def _nb(v: Any, b: bool) -> int:
    """The logical rank of a value (its rank without the batch axis)."""
    return len(_shape_of(v)) - (1 if b else 0)


@_reshape.defbatch
def _reshape_batch(batched: tuple[bool, ...], x: Any, *, shape: tuple[int, ...]) -> Any:
    return _reshape(x, shape=(_shape_of(x)[0],) + tuple(shape))


# a one-hot batch (autodiff/batching.py's Diag) is reshaped example by example
_reshape_batch.__dict__["diag_kind"] = "reshape"


@_transpose.defbatch
def _(batched: tuple[bool, ...], x: Any, *, axes: Any) -> Any:
    n = _nb(x, True)
    perm = tuple(range(n - 1, -1, -1)) if axes is None else tuple(axes)
    return _transpose(x, axes=(0,) + tuple(a % max(n, 1) + 1 for a in perm))


@_broadcast_to.defbatch
def _(batched: tuple[bool, ...], x: Any, *, shape: tuple[int, ...]) -> Any:
    x = _move_batch(x, len(shape))
    return _broadcast_to(x, shape=(_shape_of(x)[0],) + tuple(shape))


@_sum_to.defbatch
def _(batched: tuple[bool, ...], x: Any, *, shape: tuple[int, ...]) -> Any:
    from .reduce import sum as _rsum

    xs = _shape_of(x)
    lead = len(xs) - 1 - len(shape)
    if lead > 0:
        x = _rsum(x, axis=tuple(range(1, 1 + lead)))
        xs = _shape_of(x)
    axes = tuple(i + 1 for i, s in enumerate(shape) if s == 1 and xs[i + 1] != 1)
    if axes:
        x = _rsum(x, axis=axes, keepdims=True)
    return x


def _batched_index(index: Any) -> Any:
    """``index`` of one example as an index of the batch, or None where that changes meaning."""
    items = index if isinstance(index, tuple) else (index,)
    adv = [k for k, i in enumerate(items)
           if not isinstance(i, (int, np.integer, slice, type(None), type(Ellipsis)))]
    if any(getattr(items[k], "dtype", None) is not None and items[k].dtype == bool
           for k in adv):
        return None
    if adv:  # beside an array index an int is an advanced index too
        adv = [k for k, i in enumerate(items)
               if not isinstance(i, (slice, type(None), type(Ellipsis)))]
        if adv[-1] - adv[0] != len(adv) - 1:
            return None  # separated advanced indices move their axes to the front
    return (slice(None),) + tuple(items)


def per_example(op: Any) -> Any:
    """The batching rule that runs ``op`` once per example and stacks the results."""

    def rule(batched: tuple[bool, ...], *values: Any, **attrs: Any) -> Any:
        n = next(_shape_of(v)[0] for v, b in zip(values, batched) if b)
        outs = [op(*[_getitem(v, index=i) if b else v for v, b in zip(values, batched)],
                   **attrs) for i in range(n)]
        return _stack(*outs, axis=0)

    return rule


@_getitem.defbatch
def _(batched: tuple[bool, ...], x: Any, *, index: Any) -> Any:
    bi = _batched_index(index)
    if bi is None:
        return per_example(_getitem)(batched, x, index=index)
    return _getitem(x, index=bi)


@index_add_zeros.defbatch
def _(batched: tuple[bool, ...], g: Any, *, index: Any, shape: tuple[int, ...]) -> Any:
    bi = _batched_index(index)
    if bi is None:
        return per_example(index_add_zeros)(batched, g, index=index, shape=shape)
    return index_add_zeros(g, index=bi, shape=(_shape_of(g)[0],) + tuple(shape))


@_setitem.defbatch
def _(batched: tuple[bool, ...], x: Any, v: Any, *, index: Any) -> Any:
    bi = _batched_index(index)
    if bi is None or not batched[0]:
        return per_example(_setitem)(batched, x, v, index=index)
    if batched[1]:
        return per_example(_setitem)(batched, x, v, index=index)
    return _setitem(x, v, index=bi)


@_pad.defbatch
def _(batched: tuple[bool, ...], x: Any, *, pad_width: Any, value: float) -> Any:
    return _pad(x, pad_width=((0, 0),) + tuple(pad_width), value=value)


@_flip.defbatch
def _(batched: tuple[bool, ...], x: Any, *, axis: Any) -> Any:
    return _flip(x, axis=_shift_axis(axis, _nb(x, True)))


def _batch_join(op: Any, new_axis: bool) -> Any:
    def rule(batched: tuple[bool, ...], *xs: Any, axis: int, **attrs: Any) -> Any:
        n = next(_shape_of(v)[0] for v, b in zip(xs, batched) if b)
        vals = [v if b else _broadcast_to(v, shape=(n,) + _shape_of(v))
                for v, b in zip(xs, batched)]
        return op(*vals, axis=axis + 1, **attrs)

    return rule


_concat.defbatch(_batch_join(_concat, False))
_stack.defbatch(_batch_join(_stack, True))


# ---------------------------------------------------------------- indexing by a tracer
# An index that holds a transform's tracer (a per-example index under vmap) cannot be a
# static attribute: its values are not known when the op is called.  These ops take the
# index tensors as inputs instead; their batching is the per-example loop.
class _Slot:
    """Where the k-th index tensor goes in an index ``spec``."""

    __slots__ = ("k",)

    def __init__(self, k: int) -> None:
        self.k = k

    def __repr__(self) -> str:
        return f"<index input {self.k}>"


def _fill(spec: Any, idx: tuple[Any, ...]) -> Any:
    if isinstance(spec, _Slot):
        return np.asarray(idx[spec.k])
    if isinstance(spec, tuple):
        return tuple(_fill(s, idx) for s in spec)
    return spec


def _split_index(index: Any) -> tuple[Any, list[Tensor]]:
    """``index`` with each tensor in it replaced by a :class:`_Slot`, and those tensors."""
    found: list[Tensor] = []

    def walk(i: Any) -> Any:
        if isinstance(i, Tensor):
            found.append(i)
            return _Slot(len(found) - 1)
        if isinstance(i, tuple):
            return tuple(walk(j) for j in i)
        if isinstance(i, list) and any(isinstance(j, Tensor) for j in i):
            from .. import ops

            found.append(ops.stack(i))
            return _Slot(len(found) - 1)
        return i

    return walk(index), found


def _has_tracer(index: Any) -> bool:
    if isinstance(index, Tensor):
        return index._lvl is not None and index._lvl.active
    if isinstance(index, (tuple, list)):
        return any(_has_tracer(i) for i in index)
    return False


@defop("index_add_dyn")
def _index_add_dyn(g: Any, *idx: Any, spec: Any, shape: tuple[int, ...]) -> Any:
    out = np.zeros(shape, dtype=np.asarray(g).dtype)
    np.add.at(out, _fill(spec, idx), g)
    return out


@defop("setitem_dyn", needs=True)
def _setitem_dyn(x: Any, v: Any, *idx: Any, spec: Any) -> Any:
    out = np.array(x, copy=True)
    out[_fill(spec, idx)] = v
    return out


def getitem_dyn(x: Any, index: Any) -> Tensor:
    """``x[index]`` where the index holds tensors that are transform tracers."""
    spec, idx = _split_index(index)
    return _getitem_dyn(x, *idx, spec=spec)


@defop("getitem_dyn", saves=("x",), needs=True)
def _getitem_dyn(x: Any, *idx: Any, spec: Any) -> Any:
    return np.asarray(x)[_fill(spec, idx)]


@_getitem_dyn.defvjp
def _(g: Tensor, *saved: Any, needs: tuple[bool, ...], spec: Any) -> Any:
    x, idx = saved[0], saved[1:]
    return (_index_add_dyn(g, *idx, spec=spec, shape=_shape_of(x)),) + (None,) * len(idx)


_getitem_dyn.save_all = True  # x and the index tensors (the VJP scatters with them)
_getitem_dyn.save_tensors = True


@_index_add_dyn.defvjp
def _(g: Tensor, *idx: Any, spec: Any, shape: Any) -> Any:
    return (_getitem_dyn(g, *idx, spec=spec),) + (None,) * len(idx)


_index_add_dyn.save_all = True
_index_add_dyn.save_from = 1  # type: ignore[attr-defined]
_index_add_dyn.save_tensors = True


@_setitem_dyn.defvjp
def _(g: Tensor, *idx: Any, needs: tuple[bool, ...], spec: Any) -> Any:
    gx = _setitem_dyn(g, 0.0, *idx, spec=spec) if needs[0] else None
    gv = _getitem_dyn(g, *idx, spec=spec) if needs[1] else None
    return (gx, gv) + (None,) * len(idx)


_setitem_dyn.save_all = True  # the index tensors only: x and v are not needed
_setitem_dyn.save_from = 2  # type: ignore[attr-defined]
_setitem_dyn.save_tensors = True

_getitem_dyn.defjvp(lambda *a, out, spec: _getitem_dyn(
    a[0], *a[len(a) // 2 + 1:], spec=spec) if a[0] is not None else None)
_index_add_dyn.defjvp(lambda *a, out, spec, shape: _index_add_dyn(
    a[0], *a[len(a) // 2 + 1:], spec=spec, shape=shape) if a[0] is not None else None)


@_setitem_dyn.defjvp
def _(*a: Any, out: Any, spec: Any) -> Any:
    n = len(a) // 2
    dx, dv = a[0], a[1]
    x, idx = a[n], a[n + 2:]
    if dx is None and dv is None:
        return None
    if dx is None:
        dx = np.zeros(_shape_of(x), dtype=out._data.dtype)
    return _setitem_dyn(dx, 0.0 if dv is None else dv, *idx, spec=spec)
