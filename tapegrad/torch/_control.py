"""``torch.cond``: structured control flow in the PyTorch style.

Eagerly only the branch taken runs (and ``backward`` goes through it, as in
PyTorch); under ``torch.compile`` and ``tf.function``-style tracing both branches
are recorded (the core's ``ops.control.cond``), and under ``vmap`` a per-example
predicate selects per example.  The result has the branches' structure: a tensor
when they return one, else a tuple.  Differences: the node is the taken branch's
own (PyTorch names one ``CondAutogradOpBackward``), and a branch may return its input
as it is (PyTorch refuses the aliasing with ``UncapturedHigherOrderOpError``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from ..ops import control as _control


def cond(pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
         operands: Sequence[Any] = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``.

    >>> import tapegrad.torch as torch
    >>> torch.cond(torch.tensor(True), lambda x: x * 2, lambda x: x - 1, (torch.ones(2),))
    tensor([2., 2.])
    """
    if not isinstance(operands, (tuple, list)):
        raise hinted(RuntimeError(with_hint(
            f"Expect operands to be a tuple of possibly nested dict/list/tuple that only "
            f"consists of tensor leaves, but got {operands}.",
            "pass the branch inputs as a tuple: torch.cond(pred, f, g, (x,))")))
    single: list[bool] = []

    def flat(fn: Callable[..., Any]) -> Callable[..., Any]:
        def branch(*args: Any) -> tuple[Any, ...]:
            r = fn(*args)
            single.append(isinstance(r, Tensor))
            return (r,) if isinstance(r, Tensor) else tuple(r)

        return branch

    out = _control.cond(pred, flat(true_fn), flat(false_fn), tuple(operands))
    return out[0] if single and single[0] else tuple(out)
