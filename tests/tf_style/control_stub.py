"""A stand-in for a tracing level (``tf.function``'s), for testing the control-flow hook.

Like a tracer it calls every branch, so graph-mode checks run; then it gives what eager
code gives (a loop runs its body once per iteration).  ``calls`` lists the ops
it was handed, with the flat tuples it got.
"""

from __future__ import annotations

from typing import Any

from tapegrad._core.dispatch import Level
from tapegrad._core.tensor import Tensor
from tapegrad.ops import control


class StubTrace(Level):
    """Records the control-flow ops it receives through ``dispatch.control``."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def control_cond(self, pred: Any, true_fn: Any, false_fn: Any, operands: Any) -> Any:
        self.calls.append(("cond", tuple(operands)))
        a = true_fn(*operands)
        b = false_fn(*operands)
        return a if control.truth(pred) else b

    def control_while_loop(self, cond_fn: Any, body_fn: Any, loop_vars: Any,
                           maximum_iterations: Any) -> Any:
        self.calls.append(("while_loop", tuple(loop_vars)))
        i, vs = 0, tuple(loop_vars)
        while control.truth(cond_fn(*vs)) and (maximum_iterations is None
                                               or i < maximum_iterations):
            vs = tuple(body_fn(*vs))
            i += 1
        return vs

    def control_switch_case(self, index: Any, fns: Any, operands: Any) -> Any:
        self.calls.append(("switch_case", tuple(operands)))
        outs = [f(*operands) for f in fns]
        k = int(index)
        return outs[k if 0 <= k < len(outs) else -1]

    def kinds(self) -> list[str]:
        return [k for k, _ in self.calls]


class SymbolicStub(StubTrace):
    """A stub tracer whose tensors refuse to give Python values, as symbolic tensors do.

    ``trace(x)`` makes a tracer of ``x``; ops on tracers compute on the values underneath
    and give tracers; ``bool()``/``.numpy()`` of a tracer raise TensorFlow's
    ``OperatorNotAllowedInGraphError``.  The control-flow handlers look underneath the
    predicate themselves (a real tracer records both branches instead).
    """

    def trace(self, x: Any) -> Any:
        from tapegrad._core.tensor import make

        t = make(x._data, None, False, x._style)
        t._lvl = self
        t.__dict__["_value"] = x
        return t

    def value(self, t: Any) -> Any:
        while isinstance(t, Tensor) and t._lvl is self:
            t = t.__dict__["_value"]
        return t

    def process(self, op: Any, args: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        out = op(*[self.value(a) for a in args], **attrs)
        if isinstance(out, (tuple, list)):
            return type(out)(self.trace(o) if isinstance(o, Tensor) else o for o in out)
        return self.trace(out) if isinstance(out, Tensor) else out

    def lower(self, t: Any) -> Any:
        return self.value(t)

    def detach(self, t: Any) -> Any:
        return self.trace(self.value(t).detach())

    def read(self, t: Any, what: str) -> None:
        from tapegrad.tf.autograph import operator_not_allowed

        raise operator_not_allowed("Using a symbolic `tf.Tensor` as a Python `bool`")

    def control_cond(self, pred: Any, true_fn: Any, false_fn: Any, operands: Any) -> Any:
        self.calls.append(("cond", tuple(operands)))
        a, b = true_fn(*operands), false_fn(*operands)
        return a if control.truth(self.value(pred)) else b

    def control_while_loop(self, cond_fn: Any, body_fn: Any, loop_vars: Any,
                           maximum_iterations: Any) -> Any:
        self.calls.append(("while_loop", tuple(loop_vars)))
        i, vs = 0, tuple(loop_vars)
        while control.truth(self.value(cond_fn(*vs))) and (
                maximum_iterations is None or i < maximum_iterations):
            vs = tuple(body_fn(*vs))
            i += 1
        return vs
