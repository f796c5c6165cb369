"""PyTorch's views: ``_base``, shared version counters, and in-place ops through views.

A view op (basic indexing, ``view``, ``t``, ``permute``, ``narrow``, ``expand``,
``unbind`` ...) returns a tensor whose array aliases its input's.  Here such a
result is marked as a view of its *root* (``_base``: the tensor that is no view;
a view of a view has the same root), shares the root's version counter, and
joins the root's :class:`Family` (weak references to its live views).  A tensor
that is no view and has none pays nothing: ``_vbase`` and ``_family`` are class
defaults (``None``) of the core tensor.

An in-place op on a member of a family (``Tensor._assign_result`` and the fills
call :meth:`Family.rebase`) rewrites the graph as PyTorch does:

- on a view: the root's node becomes ``CopySlices`` (the root's old value with
  the view's region replaced by the in-place result: :func:`tapegrad.ops.views.
  copy_slices`), so gradients reach both the root's history and the op's inputs;
- then every live view of the root (the modified one included) is re-derived from
  the root's new node as ``AsStridedBackward0`` (:func:`tapegrad.ops.views.
  take_flat`): a view made before the in-place op and used after it sees the new
  graph, which PyTorch gets by regenerating a view's ``grad_fn`` when its version
  changed.  (Here it is done at once: reading ``_node`` stays a plain slot.)

A view's geometry is its elements' flat positions in the root (:func:`index_map`,
from the two arrays' strides and addresses), cached per view.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided as _np_strided

from .._core import mode
from .._core.errors import hinted, with_hint
from .._core.registry import _result_node, get_acc
from .._core.tensor import Tensor, _move_retain, make
from ..autodiff.batching import BatchLevel
from ..autodiff.forward import JVPLevel
from ..ops.views import copy_slices, take_flat

_STATE = mode.STATE

VIEW_OF_LEAF = "a view of a leaf Variable that requires grad is being used in an in-place operation."
OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a "
           "single memory location. Please clone() the tensor before performing the operation.")
NO_GRAD_VIEW = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
    "to be tracked).")


def _multi_view(name: str, i: int) -> str:
    return (f"Output {i} of {name} is a view and is being modified inplace. This view is the "
            "output of a function that returns multiple views. Such functions do not allow the "
            "output views to be modified inplace. You should replace the inplace operation by "
            "an out-of-place one.")


class Family:
    """The live views of one root tensor (weakly held), and what in-place ops do to them."""

    __slots__ = ("views", "limit")

    def __init__(self) -> None:
        self.views: list[weakref.ref[Tensor]] = []
        self.limit = 16

    def add(self, v: Tensor) -> None:
        vs = self.views
        vs.append(weakref.ref(v))
        if len(vs) > self.limit:  # drop the dead ones now and then (amortized O(1))
            vs[:] = [r for r in vs if r() is not None]
            self.limit = max(16, 2 * len(vs))

    def check(self, t: Tensor, what: str) -> None:
        """PyTorch's refusals of an in-place op on view ``t``, before anything is written."""
        root = t._vbase
        if root is None:
            return
        full = t.__dict__.get("_vbidx")
        if full is not None:  # a vmap tracer's array is a stand-in: its batched value's map
            overlap = full[1]
        else:
            d = t._data
            overlap = any(s == 0 and n > 1 for n, s in zip(d.shape, d.strides))
        if overlap:
            raise hinted(RuntimeError(with_hint(
                    OVERLAP, f"{what} would write one value into several elements of an "
                    "expanded view; clone() it first")))
        if t.__dict__.get("_vover"):
            # PyTorch writes such elements once per alias, in its kernel's order
            raise hinted(NotImplementedError(with_hint(
                f"{what} on a view whose elements alias each other (unfold with step < size, "
                "as_strided with repeated positions) is not supported by tapegrad",
                "clone() the view first, or write out of place")))
        if not _STATE.grad_enabled:
            return
        if root._node is None and root._rg:
            raise hinted(RuntimeError(with_hint(
                VIEW_OF_LEAF, f"{what} on a view of a leaf that requires grad: wrap the update "
                "in `with torch.no_grad():`, or clone the leaf first")))
        if root._node is None and not root._rg and not t._rg:
            return
        multi = t.__dict__.get("_vmulti")
        if multi is not None:
            raise hinted(RuntimeError(with_hint(
                _multi_view(*multi), f"{what} on an output of {multi[0].lower()}(): "
                "use the out-of-place op, or clone() the output first")))
        if t.__dict__.get("_vnograd"):
            raise hinted(RuntimeError(with_hint(
                NO_GRAD_VIEW, f"{what} on a view made under no_grad of a tensor that requires "
                "grad")))

    def rebase(self, t: Tensor, node: Any, grad: bool) -> None:
        """``t`` (a member) was written in place; ``node`` made its new value (``None``: a
        value that does not depend on the graph), ``grad``: whether grad mode was on."""
        lv = t._lvl
        if lv is not None:
            if not lv.active:
                return
            if isinstance(lv, JVPLevel):
                if not self._rebase_dual(t, lv):
                    return
            elif lv.__class__ is not BatchLevel or not self._rebase_batch(t, lv):
                return
            # (then the graph recorded at this level, as for plain tensors; forward AD's
            # primals are views of their root's primal, rebased when they are written)
        root = t._vbase
        if root is None:
            root = t
        elif grad and (node is not None or root._node is not None or root._rg):
            m = index_map(t)
            if m is not None:
                edge = root._node
                if edge is None and root._rg:
                    edge = get_acc(root)
                rg = bool(root._rg or (node is not None and t._rg))
                res = _result_node(copy_slices, (edge, node), (), rg, {"idx": m[0]},
                                   root._data, root._style, None, None)
                if root._retains:
                    _move_retain(root, root._node, res._node)
                if t._retains and node is not None:  # PyTorch keeps none for t itself
                    _move_retain(t, node, None)
                root._node = res._node
                root._rg = rg
        self.regenerate(root, t)

    def _rebase_dual(self, t: Tensor, lv: JVPLevel) -> bool:
        """Forward AD: the root's tangent takes the view's new tangent in the view's region,
        and every live view's tangent is re-derived from the root's."""
        root = t._vbase
        if root is None:
            root = t
        else:
            m = index_map(t)
            if m is None:
                return False
            if root._lvl is not lv:
                _make_dual(root, lv)
            rt = root._tangent
            vt = t._tangent
            if rt is not None or vt is not None:
                if rt is None:
                    rt = np.zeros(root._data.shape, dtype=root._data.dtype)
                root._tangent = copy_slices(rt, 0.0 if vt is None else vt, idx=m[0])
        rt = root._tangent
        shape = root._data.shape
        for r in self.views:
            v = r()
            if v is None or v is root:
                continue
            m = index_map(v)
            if m is None:
                continue
            if v._lvl is not lv:
                if rt is None:
                    continue
                _make_dual(v, lv)
            v._tangent = None if rt is None else take_flat(
                rt, idx=m[0], shape=shape, overlap=m[1])
        return True

    def _rebase_batch(self, t: Tensor, lv: BatchLevel) -> bool:
        """``vmap``: the root's batched value takes the view's new one in the view's region;
        every live view's batched value is re-derived from the root's."""
        from ..ops import broadcast_to

        root = t._vbase
        if root is None:
            root = t
        elif root._lvl is not lv or "_vbidx" not in t.__dict__:
            return False
        rb = root._bval
        if not isinstance(rb, Tensor):
            return False
        if root is not t:
            full = t.__dict__["_vbidx"][0]
            tb = lv.value(t)
            if not isinstance(tb, Tensor):
                return False
            if tb._data.shape != full.shape:
                tb = broadcast_to(tb, full.shape)
            rb = root._bval = copy_slices(rb, tb, idx=full)
        shape = rb._data.shape
        for r in self.views:
            v = r()
            if v is None or v is root or v._lvl is not lv:
                continue
            m = v.__dict__.get("_vbidx")
            if m is not None:
                v._bval = take_flat(rb, idx=m[0], shape=shape, overlap=m[1])
        return True

    def regenerate(self, root: Tensor, written: Tensor | None = None) -> None:
        """Every live view of ``root`` re-derived from the root's node (``AsStridedBackward0``)."""
        edge = root._node
        if edge is None:
            if not root._rg:  # the root's value no longer depends on the graph: nor do views
                for r in self.views:
                    v = r()
                    if v is not None and v._node is not None and v._lvl is None:
                        if v._retains:
                            _move_retain(v, v._node, None)
                        v._node = None
                        v._rg = False
                return
            edge = get_acc(root)
        rg = root._rg
        shape = root._data.shape
        style = root._style
        for r in self.views:
            v = r()
            if v is None or v.__dict__.get("_vnograd"):
                continue
            m = index_map(v)
            if m is None:
                continue
            res = _result_node(take_flat, (edge,), (), rg,
                               {"idx": m[0], "shape": shape, "overlap": m[1]}, v._data, style,
                               None, None)
            if v._retains and v is not written:
                _move_retain(v, v._node, res._node)
            v._node = res._node
            v._rg = rg


def _make_dual(t: Tensor, lv: JVPLevel) -> None:
    """Turn plain ``t`` into a dual tensor of ``lv`` without a tangent (as an in-place op
    with a dual operand does to its ``self``)."""
    prim = make(t._data, t._node, t._rg, t._style)
    prim._vc = t._vc
    t._lvl = lv
    t._primal = prim
    t._tangent = None


def _extent(a: np.ndarray) -> tuple[int, int]:
    lo = hi = 0
    for n, s in zip(a.shape, a.strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi


def _batch_map(r: Tensor, root: Tensor) -> bool:
    """Record where ``r``'s batched value lies in ``root``'s (both ``vmap`` tracers)."""
    rb, b = root._bval, r._bval
    if not (isinstance(rb, Tensor) and isinstance(b, Tensor)) or b._data.base is None:
        return False
    rd, d = rb._data, b._data
    if any(s == 0 and n > 1 for n, s in zip(rd.shape, rd.strides)):
        return False  # a root broadcast over the batch: no one place per element
    m = _index_map(d, rd)
    if m is None:
        return False
    # the overlap that matters is within one example's view
    r.__dict__["_vbidx"] = (m[0], any(s == 0 and n > 1 for n, s in zip(d.shape[1:],
                                                                         d.strides[1:])))
    return True


def index_map(v: Tensor) -> tuple[np.ndarray, bool] | None:
    """``(idx, overlap)``: the flat position in ``v._base`` of each element of view ``v``,
    and whether some position repeats; None when ``v`` no longer aliases its root.
    (For a ``vmap`` tracer: the positions within one example.)"""
    full = v.__dict__.get("_vbidx")
    if full is not None:
        return full[0][0], full[1]
    root = v._vbase
    rd = root._data
    vd = v._data
    cache = v.__dict__.get("_vidx")
    if cache is not None and cache[0] is rd and cache[1] is vd:
        return cache[2]
    res = _index_map(vd, rd)
    v.__dict__["_vidx"] = (rd, vd, res)
    return res


def _index_map(vd: np.ndarray, rd: np.ndarray) -> tuple[np.ndarray, bool] | None:
    item = rd.itemsize
    if vd.itemsize != item or vd.dtype != rd.dtype:
        return None
    overlap = any(s == 0 and n > 1 for n, s in zip(vd.shape, vd.strides))
    if vd.size == 0:
        return np.zeros(vd.shape, dtype=np.int64), overlap
    if rd.size == 0 or not np.may_share_memory(vd, rd):
        return None
    delta = vd.__array_interface__["data"][0] - rd.__array_interface__["data"][0]
    if delta % item or any(s % item for s in vd.strides + rd.strides):
        return None
    if rd.flags.c_contiguous:  # positions are byte offsets / itemsize
        idx = np.full(vd.shape, delta // item, dtype=np.int64)
        for k, (n, s) in enumerate(zip(vd.shape, vd.strides)):
            if s and n > 1:
                shp = [1] * vd.ndim
                shp[k] = n
                idx += (np.arange(n, dtype=np.int64) * (s // item)).reshape(shp)
    else:  # a shadow of the root's memory holding each element's logical position
        lo, hi = _extent(rd)
        buf = np.full((hi - lo) // item + 1, -1, dtype=np.int64)
        start = -lo // item
        shadow = _np_strided(buf[start:], rd.shape, tuple(s // item * 8 for s in rd.strides))
        shadow[...] = np.arange(rd.size, dtype=np.int64).reshape(rd.shape)
        off = start + delta // item
        vlo, vhi = _extent(vd)
        if off + vlo // item < 0 or off + vhi // item >= buf.size:
            return None
        idx = np.array(_np_strided(buf[off:], vd.shape, tuple(s // item * 8 for s in vd.strides)))
        if idx.size and idx.min() < 0:
            return None
    return idx, overlap


def mark(r: Any, x: Any, multi: tuple[str, int] | None = None) -> Any:
    """Make ``r`` (the result of a view op on ``x``) a view of ``x``'s root, if it aliases it."""
    if r is x or not isinstance(r, Tensor) or not isinstance(x, Tensor) or \
            r._vbase is not None:
        return r
    lv = r._lvl
    if lv is None:
        if x._lvl is not None:
            return r
        d = r._data
        b = d.base
        if b is None:
            return r
        xd = x._data
        # (numpy's base of a view is the array owning the memory: most views need no test)
        if b is not xd and b is not xd.base and not np.may_share_memory(d, xd):
            return r
        if d.dtype != xd.dtype:  # view(dtype): not a view PyTorch differentiates through
            return r
        root = x._vbase
        if root is None:
            root = x
    else:
        root = x._vbase
        if root is None:
            root = x
        if lv.__class__ is BatchLevel:
            # under vmap: the batched values alias; their map holds every example's
            if x._lvl is not lv or not _batch_map(r, root):
                return r
        else:
            if lv is not x._lvl or not isinstance(lv, JVPLevel):
                return r
            d = r._data
            if d.base is None or not np.may_share_memory(d, x._data):
                return r
    fam = root._family
    if fam is None:
        fam = root._family = Family()
    r._vbase = root
    r._family = fam
    r._vc = root._vc
    if multi is not None:
        r.__dict__["_vmulti"] = multi
    if not _STATE.grad_enabled:
        r.__dict__["_vnograd"] = True
    fam.add(r)
    if lv is not None and lv.__class__ is not BatchLevel:
        mark(r._primal, x._primal)  # a dual view's primal is a view of its base's primal
    return r


def _input(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if args:
        return args[0]
    return kwargs.get("input", kwargs.get("tensor", kwargs.get("self")))


def _one(fn: Callable[..., Any]) -> Callable[..., Any]:
    def view_fn(*args: Any, **kwargs: Any) -> Any:
        return mark(fn(*args, **kwargs), args[0] if args else _input(args, kwargs))

    view_fn.__name__ = getattr(fn, "__name__", "view")
    view_fn.__doc__ = fn.__doc__
    view_fn.__wrapped__ = fn  # type: ignore[attr-defined]
    return view_fn


def _many(fn: Callable[..., Any], name: str | None) -> Callable[..., Any]:
    def views_fn(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        input = _input(args, kwargs)
        if not isinstance(input, Tensor) or not isinstance(out, (tuple, list)):
            return out
        if len(out) > 1:
            for i, o in enumerate(out):
                mark(o, input, None if name is None else (name, i))
        elif len(out) == 1:
            mark(out[0], input)
        return out

    views_fn.__name__ = getattr(fn, "__name__", "views")
    views_fn.__doc__ = fn.__doc__
    views_fn.__wrapped__ = fn  # type: ignore[attr-defined]
    return views_fn


# ------------------------------------------------------------------ as_strided, unfold
_unfold_op = take_flat.renamed("UnfoldBackward0")


def _strided(x: Tensor, op: Any, idx: np.ndarray, overlap: bool, src: np.ndarray | None,
             shape: tuple[int, ...], strides: tuple[int, ...]) -> Tensor:
    """``op`` (a take_flat) of ``x`` at ``idx``; its array the strided view of ``src`` that
    holds the same values, when there is one (then the result is a view)."""
    r = op(x, idx=idx, shape=x._data.shape, overlap=overlap)
    if src is not None and r._lvl is None and x._lvl is None:
        d = _np_strided(src, shape, strides, writeable=bool(src.flags.writeable))
        r._data = d
        mark(r, x)
        if overlap and r._vbase is not None:
            r.__dict__["_vover"] = True
    return r


def as_strided(input: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
    """``input.as_strided(size, stride, storage_offset)``: the elements of ``input``'s storage
    (its root's elements, in row-major order) at ``offset + sum(i_k * stride_k)``."""
    x = input
    root = x._vbase if x._vbase is not None else x
    rd = root._data
    item = rd.itemsize
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise hinted(RuntimeError(with_hint(
            "mismatch in length of strides and shape", f"size {list(size)}, stride "
            f"{list(stride)}")))
    contiguous = rd.flags.c_contiguous and x._lvl is None
    if storage_offset is None:
        storage_offset = 0
        if root is not x and contiguous and x._data.size:
            storage_offset = (x._data.__array_interface__["data"][0]
                              - rd.__array_interface__["data"][0]) // item
    off = int(storage_offset)
    need = 0 if any(n == 0 for n in size) else off + sum((n - 1) * s for n, s in
                                                         zip(size, stride)) + 1
    if need > rd.size:
        raise hinted(RuntimeError(with_hint(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, "
            f"and itemsize {item} requiring a storage size of {need * item} are out of "
            f"bounds for storage of size {rd.size * item}",
            f"the storage has {rd.size} elements")))
    idx = np.full(size, off, dtype=np.int64)
    for k, (n, s) in enumerate(zip(size, stride)):
        if n > 1 and s:
            shp = [1] * len(size)
            shp[k] = n
            idx += (np.arange(n, dtype=np.int64) * s).reshape(shp)
    overlap = bool(idx.size) and np.unique(idx).size != idx.size
    if root is not x:  # positions in the root as positions in x
        m = index_map(x)
        if m is None:
            raise hinted(NotImplementedError(with_hint(
                "as_strided of a view whose base no longer shares its memory is not supported "
                "by tapegrad", "call as_strided on a contiguous tensor")))
        inv = np.full(rd.size, -1, dtype=np.int64)
        inv[m[0].reshape(-1)] = np.arange(m[0].size, dtype=np.int64)
        idx = inv[idx]
        if idx.size and idx.min() < 0:
            raise hinted(NotImplementedError(with_hint(
                "as_strided reading elements of the storage outside the tensor it is called "
                "on is not supported by tapegrad", "call it on the base tensor (x._base)")))
    src = rd.reshape(-1)[off:] if contiguous and rd.size else None
    return _strided(x, take_flat, idx, overlap, src, size, tuple(s * item for s in stride))


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """``input.unfold(dimension, size, step)``: the windows of ``size`` elements every
    ``step`` along ``dimension``, as a new last dim (a view, ``UnfoldBackward0``)."""
    from ._ops import _dim

    x = input
    shape = x._data.shape
    d = _dim(dimension, len(shape))
    n = shape[d] if shape else 1
    size, step = int(size), int(step)
    if size > n:
        raise hinted(RuntimeError(with_hint(
            f"maximum size for tensor at dimension {d} is {n} but size is {size}",
            "the window is longer than the dimension")))
    if step <= 0:
        raise hinted(RuntimeError(with_hint(f"step is {step} but must be > 0",
                                            "windows start every step elements")))
    windows = (n - size) // step + 1
    new = shape[:d] + (windows,) + shape[d + 1:] + (size,) if shape else (windows, size)

    def strides_of(st: tuple[int, ...]) -> tuple[int, ...]:
        if not st:
            return (0, 0)
        return st[:d] + (st[d] * step,) + st[d + 1:] + (st[d],)

    ar = np.arange(max(x._data.size, 1), dtype=np.int64).reshape(shape)
    idx = np.array(_np_strided(ar, new, strides_of(ar.strides)))
    src = x._data if x._data.size else None
    return _strided(x, _unfold_op, idx, step < size, src, new, strides_of(x._data.strides))


# the view methods and functions PyTorch has (those tapegrad.torch defines)
_ONE = ("__getitem__", "view", "view_as", "reshape", "reshape_as", "expand", "expand_as",
        "broadcast_to", "permute", "t", "transpose", "swapaxes", "swapdims", "unsqueeze",
        "squeeze", "flatten", "unflatten", "movedim", "moveaxis", "narrow", "select",
        "diagonal", "unfold", "as_strided", "view_as_real", "adjoint")
_MANY = {"unbind": "Unbind", "split": "Split", "chunk": "Split", "tensor_split": None,
         "hsplit": None, "vsplit": None, "dsplit": None, "split_with_sizes": "Split"}
_PROPS = ("T", "mT", "H", "mH")


def install(namespace: dict[str, Any]) -> None:
    """Wrap the view methods of ``torch.Tensor`` and the view functions of ``namespace``."""
    from ._tensor import TorchTensor

    cls: Any = TorchTensor
    for name in _ONE:
        fn = getattr(cls, name, None)
        if fn is not None and callable(fn):
            setattr(cls, name, _one(fn))
        fn = namespace.get(name)
        if fn is not None and callable(fn):
            namespace[name] = _one(fn)
    for name, what in _MANY.items():
        fn = getattr(cls, name, None)
        if fn is not None and callable(fn):
            setattr(cls, name, _many(fn, what))
        fn = namespace.get(name)
        if fn is not None and callable(fn):
            namespace[name] = _many(fn, what)
    for name in _PROPS:
        p = getattr(cls, name, None)
        if isinstance(p, property) and p.fget is not None:
            setattr(cls, name, property(_one(p.fget)))
    cls.as_strided = as_strided
    cls.unfold = unfold
    namespace["as_strided"] = as_strided
    cls._base = property(lambda self: self._vbase)
    cls._is_view = lambda self: self._vbase is not None
