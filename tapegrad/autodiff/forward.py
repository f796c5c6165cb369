"""Forward mode: primal/tangent pairs pushed through each op's JVP rule.

A :class:`JVPLevel` is one forward-mode transform in progress (``jvp``,
``jacfwd``, PyTorch's ``forward_ad.dual_level``, TensorFlow's
``ForwardAccumulator``).  Its tracers hold a primal (a tensor of the levels
below) and a tangent; an op on them computes the primal result with the same
op one level down and the tangent with the op's JVP rule, itself written in
tapegrad ops, so forward mode nests with every transform (forward over
forward, forward over reverse, reverse over forward, batching).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core import errors
from .._core.dispatch import Level, save_self
from .._core.mode import STATE as _STATE
from .._core.tensor import Tensor, make

_FLOAT = frozenset("fc")


class JVPLevel(Level):
    """One forward-mode transform: its tracers carry a tangent."""

    def make(self, primal: Any, tangent: Any) -> Tensor:
        """A tracer of this level: ``primal`` with ``tangent`` (a dual tensor)."""
        from .. import ops

        if not isinstance(primal, Tensor):
            primal = make(np.asarray(primal))
        if tangent is not None and not isinstance(tangent, Tensor):
            tangent = make(np.asarray(tangent, dtype=primal._data.dtype), None, False,
                           primal._style)
        # the dual tensor is a view of the primal: gradients of outer reverse mode reach it
        t = ops.identity(primal) if (primal._rg or primal._node is not None) else \
            make(primal._data, None, False, primal._style)
        t._lvl = self
        t._primal = primal
        t._tangent = tangent
        t._vc = primal._vc
        return t

    def unpack(self, t: Any) -> tuple[Any, Any]:
        """``(primal, tangent)`` of ``t`` at this level (tangent ``None`` if it has none)."""
        if isinstance(t, Tensor) and t._lvl is self:
            return t._primal, t._tangent
        return t, None

    def lower(self, t: Tensor) -> Any:
        return t._primal

    def detach(self, t: Tensor) -> Tensor:
        return t._primal.detach()

    def assign(self, t: Tensor, result: Tensor) -> None:
        # the primal changes in place (its storage is shared), the tangent is the result's
        if t._lvl is self:
            t._primal._assign_result(result._primal, "in-place")
            t._data = t._primal._data
        else:  # a plain tensor becomes a dual one (PyTorch does the same)
            base = make(t._data, t._node, t._rg, t._style)
            base._vc = t._vc
            base._assign_result(result._primal, "in-place")
            t._data = base._data
            t._lvl = self
            t._primal = base
        t._tangent = result._tangent

    def process(self, op: Any, args: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        primals: list[Any] = []
        tangents: list[Any] = []
        any_t = False
        rg = False
        style = -1
        for a in args:
            if isinstance(a, Tensor) and a._lvl is self:
                primals.append(a._primal)
                tangents.append(a._tangent)
                if a._tangent is not None:
                    any_t = True
                if a._rg:
                    rg = True
                if style < 0:
                    style = a._style
            else:
                if isinstance(a, Tensor) and a._rg:
                    rg = True
                primals.append(a)
                tangents.append(None)
        out = op(*primals, **attrs)
        if not any_t or not isinstance(out, Tensor) or out._data.dtype.kind not in _FLOAT:
            if not (rg or _STATE.tapes) or not isinstance(out, Tensor):
                return out
            tangent = None
        else:
            if op.jvp is None:
                raise errors.hinted(NotImplementedError(
                    errors.with_hint(
                        f"Trying to use forward AD with {op.name} that does not support it "
                        "because it has not been implemented yet.",
                        f"the op {op.name!r} has no JVP rule (defjvp); use reverse mode "
                        "(jacrev, vjp) for it",
                    )
                ))
            tangent = op.jvp(*tangents, *primals, out=out, **attrs)
        return self._result(op, args, attrs, out, tangent, rg, style)

    def _result(self, op: Any, args: tuple[Any, ...], attrs: dict[str, Any], out: Tensor,
                tangent: Any, rg: bool, style: int) -> Tensor:
        """The tracer holding ``out`` and ``tangent``, recorded at this level if tracked."""
        if tangent is not None and not isinstance(tangent, Tensor):
            tangent = make(np.asarray(tangent, dtype=out._data.dtype), None, False, out._style)
        arrays = [a._data if isinstance(a, Tensor) else a for a in args]
        res = op._finish(args, arrays, attrs, out._data, rg, style if style >= 0 else 0)
        if tangent is not None and tangent._data.shape != out._data.shape:
            from .. import ops

            tangent = ops.broadcast_to(tangent, shape=out._data.shape)
        res._lvl = self
        res._primal = out
        res._tangent = tangent
        save_self(res)
        return res
