"""Batching (``vmap``): a function of one example run on a whole batch at once.

A :class:`BatchLevel` is one ``vmap`` in progress.  Its tracers stand for one
example; each holds the whole batch (``_bval``, a tensor of the levels below
with the batch as axis 0).  An op on them runs the op's batching rule
(``Op.defbatch``) on the batched values, one level down; an op without a rule
runs once per example and the results are stacked, so every op works under
``vmap`` and the common ones run as one NumPy call.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from .._core import errors
from .._core.dispatch import Level, save_self
from .._core.mode import STATE as _STATE
from .._core.tensor import Tensor, make

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


class BatchLevel(Level):
    """One ``vmap``: its tracers carry a batch of ``size`` examples on axis 0."""

    def __init__(self, size: int, randomness: str = "error") -> None:
        self.size = size
        self.randomness = randomness
        self._tracers: weakref.WeakSet[Tensor] = weakref.WeakSet()

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        # a tracer still alive now was kept by the function: make using it an error
        for t in list(self._tracers):
            t._data = t._data.view(_Leaked)
        self._tracers = weakref.WeakSet()

    def make(self, bval: Tensor) -> Tensor:
        """A tracer of this level standing for one example of ``bval`` (batch on axis 0)."""
        d = bval._data
        t = make(_fake(d.shape[1:], d.dtype), None, False, bval._style)
        t._lvl = self
        t._bval = bval
        self._tracers.add(t)
        return t

    def value(self, t: Any) -> Any:
        """The batched value of a tracer of this level (others as they are)."""
        if isinstance(t, Tensor) and t._lvl is self:
            return t._bval
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
        return self.make(t._bval.detach())

    def assign(self, t: Tensor, result: Tensor) -> None:
        if t._lvl is not self:
            raise errors.hinted(RuntimeError(
                errors.with_hint(
                    "vmap: inplace arithmetic(self, *extra_args) is not possible because there "
                    "exists a Tensor `other` in extra_args that has more elements than `self`. "
                    "This happened due to `other` being vmapped over but `self` not being "
                    "vmapped over in a vmap. Please try to use out-of-place operators instead "
                    "of inplace arithmetic.",
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
        for a in args:
            if isinstance(a, Tensor) and a._lvl is self:
                values.append(a._bval)
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
        arrays = [a._data if isinstance(a, Tensor) else a for a in args]
        res = op._finish(args, arrays, attrs, _fake(d.shape[1:], d.dtype), rg,
                         style if style >= 0 else 0)
        res._lvl = self
        res._bval = out
        self._tracers.add(res)
        save_self(res)
        return res

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
