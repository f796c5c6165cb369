"""Batching (``vmap``): a function of one example run on a whole batch at once.

A :class:`BatchLevel` is one ``vmap`` in progress.  Its tracers stand for one
example; each holds the whole batch (``_bval``, a tensor of the levels below
with the batch as axis 0).  An op on them runs the op's batching rule
(``Op.defbatch``) on the batched values, one level down; an op without a rule
runs once per example and the results are stacked, so every op works under
``vmap`` and the common ones run as one NumPy call.

A Jacobian maps over the standard basis (the rows of ``eye(n)``), which is
mostly zeros: ``jacrev``/``jacfwd`` pass a :class:`Basis`, whose tracer holds
a :class:`Diag` (example ``b`` is ``v`` at position ``b`` and ``z`` elsewhere)
instead of a dense batch.  Elementwise ops and reshapes keep it structured,
a matrix product with it is a scaled copy of rows or columns (no GEMM against
the zeros, when that gives the dense product's values); every other op gets
the dense batch (:meth:`Diag.dense`), so each op is as correct as without it.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np

from .._core import errors
from .._core.dispatch import Level, save_self
from .._core.mode import STATE as _STATE
from .._core.tensor import Tensor, make
from ..ops import _scratch

_ZERO = bytes(64)  # one zero element of any (non-object) dtype: the buffer fakes stride over


def _fake(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A read-only array of ``shape`` and ``dtype`` that costs nothing (a tracer's ``_data``)."""
    dt = np.dtype(dtype)
    if dt.hasobject or dt.itemsize > 64:
        return np.broadcast_to(np.zeros((), dtype=dt), shape)
    # zeros on an immutable buffer, every stride 0: read-only, as broadcast_to's, at a
    # sixth of its cost (one is made for every op a vmap runs)
    return np.ndarray(shape, dt, _ZERO, 0, (0,) * len(shape))


_LEAKED = (
    "vmap: a batched tensor was used after the vmap that made it returned"
)


class _Leaked(np.ndarray):
    """The array of a batched tensor that outlived its ``vmap``: computing with it raises."""

    def __array_ufunc__(self, *args: Any, **kwargs: Any) -> Any:
        raise errors.hinted(RuntimeError(errors.with_hint(
            _LEAKED, "return every tensor you need from the vmapped function instead of "
            "keeping it in an outer variable")))

    def __array_function__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__array_ufunc__()


def _plain(t: Any) -> bool:
    """Whether ``t`` is an array or a tensor that no transform or recording involves."""
    if isinstance(t, Tensor):
        return t._lvl is None and t._node is None and not t._rg
    return isinstance(t, np.ndarray)


def _concrete(t: Any) -> bool:
    """Whether ``t``'s values can be read: an array, or a tensor that is no tracer."""
    if isinstance(t, Tensor):
        return t._lvl is None
    return isinstance(t, np.ndarray)


def _records(*ts: Any) -> bool:
    """Whether an op on ``ts`` would be recorded (reverse mode, or a tape)."""
    st = _STATE
    if not st.grad_enabled:
        return False
    return bool(st.tapes) or any(
        isinstance(t, Tensor) and (t._rg or t._node is not None) for t in ts)


def _arr(t: Any) -> Any:
    return t._data if isinstance(t, Tensor) else t


class Diag:
    """A structured batch of ``size`` examples of ``v``'s shape (the Jacobian basis).

    Over the flat index ``k`` of an example, example ``b`` holds ``v[k]`` where
    ``k == b + off`` and ``z[k]`` elsewhere; the standard basis is ``v = 1``,
    ``z = 0`` (``off`` is where a chunk of it starts).  ``v`` and ``z`` are
    tensors of the levels below, so ops on them compose with every transform.
    An elementwise op applied to ``v`` and to ``z`` is the op applied to every
    element, so it keeps the batch exactly (NaN, infinities, signed zeros).
    """

    __slots__ = ("v", "z", "off", "size")

    def __init__(self, v: Tensor, z: Tensor, off: int, size: int) -> None:
        self.v = v
        self.z = z
        self.off = off
        self.size = size

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of one example."""
        return self.v._data.shape

    @property
    def dtype(self) -> np.dtype:
        return self.v._data.dtype

    def mask(self) -> np.ndarray:
        """Where each example holds ``v``: ``(size,) + shape`` booleans."""
        n = math.prod(self.shape)
        m = np.zeros((self.size, n), dtype=bool)
        m[np.arange(self.size), np.arange(self.off, self.off + self.size)] = True
        return m.reshape((self.size,) + self.shape)

    def dense(self) -> Tensor:
        """The batch as an ordinary batched tensor (the batch on axis 0)."""
        v, z = self.v, self.z
        if _concrete(v) and _concrete(z) and not _records(v, z):
            shape = self.shape
            n = math.prod(shape)
            out = np.empty((self.size, n), dtype=np.result_type(v._data, z._data))
            out[...] = z._data.reshape(n)
            cols = np.arange(self.off, self.off + self.size)
            out[np.arange(self.size), cols] = v._data.reshape(n)[cols]
            return make(out.reshape((self.size,) + shape), None, False, v._style)
        from .. import ops

        return ops.where(self.mask(), v, z)


class Basis:
    """The standard basis of a ``shape`` tensor (the rows of ``eye(n)``, each reshaped to
    ``shape``), rows ``off`` to ``off + size``: an input of :func:`~tapegrad.func.vmap` that
    its tracer holds structured (a :class:`Diag`).  ``shape`` and :meth:`array` are those of
    the dense array ``(size,) + shape``."""

    __slots__ = ("elem", "dtype", "style", "off", "size")

    def __init__(self, elem: tuple[int, ...], dtype: Any, style: int = 0, off: int = 0,
                 size: int | None = None) -> None:
        self.elem = tuple(elem)
        self.dtype = np.dtype(dtype)
        self.style = style
        self.off = off
        self.size = math.prod(self.elem) if size is None else size

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.size,) + self.elem

    def chunk(self, start: int, size: int) -> Basis:
        """Rows ``start`` to ``start + size`` of this basis."""
        return Basis(self.elem, self.dtype, self.style, self.off + start,
                     max(0, min(size, self.size - start)))

    def array(self) -> np.ndarray:
        n = math.prod(self.elem)
        return np.eye(n, dtype=self.dtype)[self.off:self.off + self.size].reshape(self.shape)

    def diag(self) -> Diag:
        return Diag(make(np.ones(self.elem, self.dtype), None, False, self.style),
                    make(np.zeros(self.elem, self.dtype), None, False, self.style),
                    self.off, self.size)


def basis_of(t: Any) -> Basis | None:
    """``t`` as a :class:`Basis` when it is exactly one: a plain floating tensor whose rows
    are the rows of ``eye(n)`` (a ``vmap`` over ``torch.eye(n)`` or ``tf.eye(n)``, as the
    frameworks' Jacobian tutorials write it), else None.  Bit for bit: ones and +0.0."""
    if not isinstance(t, Tensor) or t._lvl is not None or t._rg or t._node is not None:
        return None
    a = t._data
    if a.ndim < 2 or a.dtype.kind != "f":
        return None
    n = a.shape[0]
    if n < 2 or a.size != n * n:
        return None
    m = a.reshape(n, n)
    if m[0, 0] != 1 or m[0, 1] != 0 or m[1, 0] != 0:  # most batches stop here
        return None
    if not ((np.diagonal(m) == 1).all() and np.count_nonzero(m) == n
            and not np.signbit(m).any()):
        return None
    return Basis(a.shape[1:], a.dtype, t._style)


# ------------------------------------------------------------------ Diag through ops
# Each returns the result (a Diag, or a batched tensor) or None where the structure
# cannot give the dense batch's values exactly: the op then gets the dense batch.


def _diag_elementwise(op: Any, batched: tuple[bool, ...], values: list[Any],
                      attrs: dict[str, Any]) -> Any:
    first: Diag | None = None
    for val, b in zip(values, batched):
        if b:
            if val.__class__ is not Diag:
                return None  # a dense batch with it: the result is dense too
            if first is None:
                first = val
            elif val.off != first.off or val.shape != first.shape:
                return None
    assert first is not None
    shape = first.shape
    for val, b in zip(values, batched):
        if not b:
            s = np.shape(_arr(val))
            if s != shape and (len(s) > len(shape) or not _broadcasts_to(s, shape)):
                return None  # it would enlarge the examples (or fail: the dense op says how)
    vs = [x.v if b else x for x, b in zip(values, batched)]
    zs = [x.z if b else x for x, b in zip(values, batched)]
    if _direct(vs) and _direct(zs):  # plain arrays, nothing records: the op's forward
        style = next((x._style for x in vs if isinstance(x, Tensor)), 0)  # as the op's
        v = make(np.asarray(op.fwd(*[_arr(x) for x in vs], **attrs)), None, False, style)
        z = make(np.asarray(op.fwd(*[_arr(x) for x in zs], **attrs)), None, False, style)
    else:
        v = op(*vs, **attrs)
        z = op(*zs, **attrs)
    if not isinstance(v, Tensor) or v._data.shape != shape:
        return None
    return Diag(v, z, first.off, first.size)


def _direct(args: list[Any]) -> bool:
    """Whether an op on ``args`` is its forward on their arrays: no tracer among them, no
    level that records every op (tracing), nothing recorded (reverse mode, tapes)."""
    for a in args:
        if isinstance(a, Tensor) and a._lvl is not None:
            return False
    if _STATE.inference:  # a front-end marks what inference mode makes
        return False
    for lv in _STATE.levels:
        if lv.catch_all:
            return False
    return not _records(*args)


def _broadcasts_to(s: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    """Whether an array of shape ``s`` broadcasts against ``shape`` giving ``shape``."""
    return all(a == 1 or a == b for a, b in zip(s[::-1], shape[::-1]))


def _diag_reshape(op: Any, batched: tuple[bool, ...], values: list[Any],
                  attrs: dict[str, Any]) -> Any:
    d = values[0]
    if _direct([d.v, d.z]):
        shape = attrs["shape"]
        return Diag(make(d.v._data.reshape(shape), None, False, d.v._style),
                    make(d.z._data.reshape(shape), None, False, d.z._style), d.off, d.size)
    return Diag(op(d.v, **attrs), op(d.z, **attrs), d.off, d.size)


def _finite_real(a: Any) -> bool:
    """Whether ``a`` is real and has no infinity or NaN."""
    if a.dtype.kind != "f":
        return False
    if a.ndim == 2 and a.size >= 4096:
        # column sums (one BLAS pass, faster than isfinite): an infinity or NaN makes its
        # sum one; a sum that overflows only sends the caller to the dense path
        return bool(np.isfinite(np.ones(a.shape[0], a.dtype) @ a).all())
    return bool(np.isfinite(a).all())


def _diag_matmul(op: Any, batched: tuple[bool, ...], values: list[Any],
                 attrs: dict[str, Any]) -> Any:
    # a one-hot vector times a matrix is a scaled row of it (a matrix times one, a scaled
    # column): each dense sum has one nonzero term, so the values are the GEMM's, provided
    # the zeros are zeros and the other operand is finite (0 * inf is NaN in the GEMM).
    # Only for real arrays whose values can be read (no transform's tracers), else dense.
    # A one-hot column on the right or row on the left (TensorFlow's matvec) is the same.
    bx, by = batched
    d, other = (values[0], values[1]) if bx else (values[1], values[0])
    if d.__class__ is not Diag:
        return None
    v, z = d.v, d.z
    if not (_concrete(v) and _concrete(z) and _concrete(other)):
        return None
    o = _arr(other)
    shape = d.shape
    unit = 0  # where the result has a unit axis: -1 (X @ column), -2 (row @ Y)
    if len(shape) == 2 and o.ndim == 2 and by and shape[1] == 1:
        unit = -1
    elif len(shape) == 2 and o.ndim == 2 and bx and shape[0] == 1:
        unit = -2
    elif len(shape) != 1:
        return None
    n = shape[-1] if unit == -2 else shape[0]
    if o.ndim not in (1, 2) or o.shape[1 if by and o.ndim == 2 else 0] != n:
        return None
    vd = v._data.reshape(n)
    if vd.dtype.kind != "f" or z._data.any() or not _finite_real(o):
        return None
    sl = slice(d.off, d.off + d.size)
    if _records(v, other):  # the same values by ops, recorded for what differentiates them
        from .. import ops

        vt = ops.getitem(ops.reshape(v, (n,)) if unit else v, sl)
        if o.ndim == 1:
            return ops.multiply(vt, ops.getitem(other, sl))
        if bx:
            res = ops.multiply(ops.reshape(vt, (d.size, 1)), ops.getitem(other, sl))
        else:
            res = ops.transpose(ops.multiply(ops.getitem(other, (slice(None), sl)), vt))
        return ops.expand_dims(res, unit) if unit else res
    vs = vd[sl]
    if o.ndim == 1:  # inner products: one term each
        return make(np.asarray(vs * o[sl]), None, False, v._style)
    # the rows v_b Y[b, :] (e_b v_b @ Y), or the columns X[:, b] v_b (X @ e_b v_b), written
    # in the source's memory order into recycled memory (a fresh large array costs a page
    # fault per page, more than the product)
    src = o[sl] if bx else o[:, sl].T
    same = o.dtype == vs.dtype
    if src.size * vs.itemsize < _scratch.MIN_BYTES:  # small: plain NumPy
        out = src.copy(order="K") if same and (vs == 1).all() else vs[:, None] * src
    else:
        out = _scratch.empty(src.shape, vs.dtype if same else np.result_type(vs, o),
                             "F" if src.flags.f_contiguous and not src.flags.c_contiguous
                             else "C")
        if same and (vs == 1).all():
            np.copyto(out, src)  # the basis itself: the rows as they are (x * 1 is x)
        else:
            np.multiply(vs[:, None], src, out=out)
    if unit:
        out = np.expand_dims(out, unit)
    return make(out, None, False, v._style)


_DIAG_RULES = {"elementwise": _diag_elementwise, "reshape": _diag_reshape,
               "matmul": _diag_matmul}


class BatchLevel(Level):
    """One ``vmap``: its tracers carry a batch of ``size`` examples on axis 0."""

    def __init__(self, size: int, randomness: str = "error") -> None:
        self.size = size
        self.randomness = randomness
        # weak references to this level's tracers (a list: cheaper than a WeakSet per op)
        self._tracers: list[weakref.ref[Tensor]] = []

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        # a tracer still alive now was kept by the function: make using it an error
        refs, self._tracers = self._tracers, []
        for r in refs:
            t = r()
            if t is not None and t._data.__class__ is not _Leaked:
                t._data = t._data.view(_Leaked)

    def make(self, bval: Tensor | Diag | Basis) -> Tensor:
        """A tracer of this level standing for one example of ``bval`` (batch on axis 0;
        a :class:`Basis` or :class:`Diag` is held structured)."""
        if isinstance(bval, Basis):
            bval = bval.diag()
        if isinstance(bval, Diag):
            v = bval.v
            t = make(_fake(v._data.shape, v._data.dtype), None, False, v._style)
        else:
            d = bval._data
            t = make(_fake(d.shape[1:], d.dtype), None, False, bval._style)
        t._lvl = self
        t._bval = bval
        self._tracers.append(weakref.ref(t))
        return t

    def value(self, t: Any) -> Any:
        """The batched value of a tracer of this level (others as they are), dense."""
        if isinstance(t, Tensor) and t._lvl is self:
            b = t._bval
            if b.__class__ is Diag:
                b = t._bval = b.dense()
            return b
        return t

    def lower(self, t: Tensor) -> Any:
        raise errors.hinted(RuntimeError(
            errors.with_hint(
                "vmap: a batched tensor was used after the vmap that made it returned",
                "return every tensor you need from the vmapped function instead of keeping "
                "it in an outer variable",
            )
        ))

    def detach(self, t: Tensor) -> Tensor:
        b = t._bval
        if b.__class__ is Diag:
            return self.make(Diag(b.v.detach(), b.z.detach(), b.off, b.size))
        return self.make(b.detach())

    def assign(self, t: Tensor, result: Tensor) -> None:
        if t._lvl is not self:
            raise errors.hinted(RuntimeError(
                errors.with_hint(
                    "vmap: inplace arithmetic(self, *extra_args) is not possible because there "
                    "exists a Tensor `other` in extra_args that has more elements than `self`. "
                    "This happened due to `other` being vmapped over but `self` not being "
                    "vmapped over in a vmap. Please try to use out-of-place operators instead "
                    "of inplace arithmetic. If said operator is being called inside the PyTorch "
                    "framework, please file a bug report instead.",
                    "an unbatched tensor cannot hold a batched result in place",
                )
            ))
        t._bval = result._bval
        t._data = result._data

    def read(self, t: Tensor, what: str) -> None:
        if what == "bool":
            msg = ("vmap: It looks like you're attempting to use a Tensor in some "
                   "data-dependent control flow. We don't support that yet, please file an "
                   "issue at https://github.com/pytorch/pytorch/issues .")
        elif what == "item":
            msg = ("vmap: It looks like you're calling .item() on a Tensor. We don't support "
                   "vmap over calling .item() on a Tensor, please try to rewrite what you're "
                   "doing with other operations. If error is occurring somewhere inside "
                   "PyTorch internals, please file a bug report.")
        else:
            msg = "Cannot access data pointer of Tensor that doesn't have storage"
        raise errors.hinted(RuntimeError(
            errors.with_hint(
                msg,
                "inside vmap a tensor stands for a whole batch: use tensor ops (where, "
                "masks) instead of reading values",
            )
        ))

    def process(self, op: Any, args: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        values: list[Any] = []
        batched: list[bool] = []
        rg = False
        style = -1
        diag = False
        for a in args:
            if isinstance(a, Tensor) and a._lvl is self:
                b = a._bval
                if b.__class__ is Diag:
                    diag = True
                values.append(b)
                batched.append(True)
                if a._rg:
                    rg = True
                if style < 0:
                    style = a._style
            else:
                # a tracked plain input is recorded at this level too: a ``grad`` inside
                # this vmap differentiates with respect to it per example
                if isinstance(a, Tensor) and a._rg:
                    rg = True
                values.append(a)
                batched.append(False)
        rule = op.batch
        if diag:
            out = self._structured(op, rule, args, tuple(batched), values, attrs)
            if out.__class__ is Diag:
                return self._tracer(op, args, attrs, out.shape, out.dtype, out, rg, style)
        else:
            out = rule(tuple(batched), *values, **attrs) if rule is not None else \
                self._loop(op, tuple(batched), values, attrs)
        if not isinstance(out, Tensor):
            out = make(np.asarray(out))
        d = out._data
        if d.ndim == 0 or d.shape[0] != self.size:
            raise errors.hinted(RuntimeError(
                errors.with_hint(
                    f"vmap: the batching rule of {op.name} returned shape {list(d.shape)}, "
                    f"which has no batch of {self.size} on axis 0",
                    "a batching rule must keep the batch as axis 0 of its result",
                )
            ))
        # (as _tracer, inline: the hot path of every op under vmap)
        arrays = [a._data if isinstance(a, Tensor) else a for a in args]
        res = op._finish(args, arrays, attrs, _fake(d.shape[1:], d.dtype), rg,
                         style if style >= 0 else 0)
        res._lvl = self
        res._bval = out
        self._tracers.append(weakref.ref(res))
        save_self(res)
        return res

    def _tracer(self, op: Any, args: tuple[Any, ...], attrs: dict[str, Any],
                shape: tuple[int, ...], dtype: Any, out: Any, rg: bool, style: int) -> Tensor:
        """The tracer of ``op``'s result (batched value ``out``), recorded if tracked."""
        arrays = [a._data if isinstance(a, Tensor) else a for a in args]
        res = op._finish(args, arrays, attrs, _fake(shape, dtype), rg,
                         style if style >= 0 else 0)
        res._lvl = self
        res._bval = out
        self._tracers.append(weakref.ref(res))
        save_self(res)
        return res

    def _structured(self, op: Any, rule: Any, args: tuple[Any, ...],
                    batched: tuple[bool, ...], values: list[Any],
                    attrs: dict[str, Any]) -> Any:
        """``op`` on values some of which are a :class:`Diag`: by the structure where the
        op's rule declares one that applies (``diag_kind``), else on the dense batches."""
        kind = rule.__dict__.get("diag_kind") if rule is not None else None
        if kind is not None:
            out = _DIAG_RULES[kind](op, batched, values, attrs)
            if out is not None:
                return out
        for i, a in enumerate(args):
            if batched[i] and values[i].__class__ is Diag:
                values[i] = self.value(a)  # dense, kept on the tracer for its next use
        if rule is not None:
            return rule(batched, *values, **attrs)
        return self._loop(op, batched, values, attrs)

    def _loop(self, op: Any, batched: tuple[bool, ...], values: list[Any],
              attrs: dict[str, Any]) -> Tensor:
        """The rule of an op without one: run it per example and stack the results."""
        from ..ops.shape import per_example

        return per_example(op)(batched, *values, **attrs)


def randomness_error(name: str) -> RuntimeError:
    """PyTorch's error for a random op under ``vmap(randomness='error')``."""
    return errors.hinted(RuntimeError(
        errors.with_hint(
            "vmap: called random operation while in randomness error mode. Please either use "
            "the 'same' or 'different' randomness flags on vmap or perform the randomness "
            "operation out of vmap",
            f"{name} draws random numbers inside vmap",
        )
    ))


def active_batch_level() -> BatchLevel | None:
    """The innermost active ``vmap`` level, if any."""
    for lv in reversed(_STATE.levels):
        if isinstance(lv, BatchLevel):
            return lv
    return None


def vmap_randomness(name: str = "random") -> BatchLevel | None:
    """Called by random draws: the innermost ``vmap`` level when it wants a different draw per
    example (``randomness='different'``), ``None`` for one shared draw (``'same'``, or no
    ``vmap``); with ``randomness='error'`` (the default), PyTorch's error."""
    if not _STATE.levels:
        return None
    lv = active_batch_level()
    if lv is None or lv.randomness == "same":
        return None
    if lv.randomness == "error":
        raise randomness_error(name)
    return lv
