"""Batching rules shared by many ops (see ``Op.defbatch`` and ``autodiff/batching.py``).

A rule receives ``batched`` (one bool per positional input) and the values;
a batched value carries the batch as its axis 0 and the rule's result must too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.tensor import Tensor


def reshape(v: Any, shape: tuple[int, ...]) -> Any:
    from .shape import _reshape

    return _reshape(v, shape=tuple(shape))


def move_batch(v: Any, rank: int) -> Any:
    """A batched value (batch on axis 0) reshaped to broadcast against rank-``rank`` operands."""
    d = v._data
    have = d.ndim - 1
    if have >= rank:
        return v
    return reshape(v, shape=(d.shape[0],) + (1,) * (rank - have) + d.shape[1:])


def elementwise(op: Any) -> Any:
    """The batching rule of a broadcasting elementwise op: align the batch axes, call ``op``."""

    def rule(batched: tuple[bool, ...], *values: Any, **attrs: Any) -> Any:
        rank = 0
        for v, b in zip(values, batched):
            nd = np.ndim(v._data if isinstance(v, Tensor) else v) - (1 if b else 0)
            if nd > rank:
                rank = nd
        vals = [move_batch(v, rank) if b else v for v, b in zip(values, batched)]
        return op(*vals, **attrs)

    # the op acts on each element alone: a structured batch (autodiff/batching.py's Diag)
    # stays structured through it
    rule.__dict__["diag_kind"] = "elementwise"
    return rule


def shift_axis(axis: Any, ndim: int) -> Any:
    """A logical axis (or tuple of them, or None) of a rank-``ndim`` example, on the batch."""
    if axis is None:
        return tuple(range(1, ndim + 1))
    if isinstance(axis, (tuple, list)):
        return tuple((a % ndim if ndim else 0) + 1 for a in axis)
    return (axis % ndim if ndim else 0) + 1


def diag_jvp(op: Any) -> Any:
    """The JVP of an elementwise op from its VJP (a diagonal Jacobian is its own transpose).

    For each input with a tangent, the VJP is called with that tangent as the
    cotangent and the values it saves (inputs, output, shapes); the products
    it returns (derivative times tangent, at the output's shape) are summed.
    """

    def rule(*txs: Any, out: Any, **attrs: Any) -> Any:
        from .elementwise import add

        n = len(txs) // 2
        ts, xs = txs[:n], txs[n:]
        saved = []
        for kind, idx in op.save_codes:
            saved.append(xs[idx] if kind == 0 else out if kind == 1 else np.shape(
                xs[idx]._data if isinstance(xs[idx], Tensor) else xs[idx]))
        res = None
        for i, t in enumerate(ts):
            if t is None:
                continue
            if op.needs:
                part = op.vjp(t, *saved, needs=tuple(j == i for j in range(n)), **attrs)[i]
            else:
                part = op.vjp(t, *saved, **attrs)[i]
            if part is not None:
                res = part if res is None else add(res, part)
        return res

    return rule


def reduction_loss(op: Any) -> Any:
    """The batching rule of a two-input loss with a ``reduction`` attribute."""
    ew = elementwise(op)

    def rule(batched: tuple[bool, ...], x: Any, y: Any, *, reduction: str, **kw: Any) -> Any:
        from .reduce import mean, sum

        per = ew(batched, x, y, reduction="none", **kw)
        axes = tuple(range(1, np.ndim(per._data)))
        if reduction == "mean":
            return mean(per, axis=axes)
        if reduction == "sum":
            return sum(per, axis=axes)
        return per

    return rule
