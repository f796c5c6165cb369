"""A stand-in for a tracing level (``tf.function``'s), for testing the control-flow hook.

Like a tracer it calls every branch, so graph-mode checks run; then it gives what eager
code gives (a loop runs its body once per iteration).  ``calls`` lists the ops
it was handed, with the flat tuples it got.
"""

from __future__ import annotations

from typing import Any

from tapegrad._core.dispatch import Level
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
