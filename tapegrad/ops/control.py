"""Structured control flow: ``cond``, ``while_loop``, ``switch_case`` (style-neutral).

Each op first asks the dispatch path whether an active level records
programs (``tapegrad._core.dispatch.control``); such a level (tracing) gets
the op with its branches or body as functions and returns the outputs.  With
none, the op runs eagerly: the predicate is evaluated, and only the branch
taken (or the loop body, once per iteration) runs, as ordinary ops, so the
tape records exactly the ops that ran and every gradient (first or higher
order, either front-end) is the gradient of what ran.

The functions given to these ops take and return *flat tuples of tensors*:
a branch or body is called as ``fn(*operands)`` (``fn(operands)``, the
tuple as one argument, is accepted too) and returns a tuple; the loop
condition returns a scalar boolean tensor (or a Python bool).  Nested
structures are the front-end's business (``tapegrad.tf.control_flow``
flattens and packs them).

Under ``vmap`` (the batching level) a predicate may differ per example.  Then
``cond`` runs both branches on the whole batch and selects per example
(``where``), ``switch_case`` runs every branch and selects, and
``while_loop`` runs the body while any example's condition holds, keeping
the loop variables of the examples whose condition is false unchanged
(``where`` again): the per-example results are those of running the op on
each example alone, as TensorFlow's ``tf.vectorized_map`` (pfor) converts
its ``cond`` and ``while_loop``.  Under forward mode (``jvp``) the predicate's
primal value decides and tangents flow through the branch that ran.

>>> import numpy as np
>>> import tapegrad as tg
>>> from tapegrad.ops import control
>>> x = tg.tensor(np.array(3.0), requires_grad=True)
>>> (y,) = control.cond(x > 0, lambda v: (v * v,), lambda v: (-v,), (x,))
>>> float(y), float(tg.grad(y, x)[0])
(9.0, 6.0)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._core.dispatch import control
from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor

__all__ = ["cond", "while_loop", "switch_case", "is_batched", "truth"]

Fn = Callable[..., Any]


# ------------------------------------------------------------------ predicates
def is_batched(t: Any) -> bool:
    """Whether ``t`` is (or carries, through forward-mode primals) a ``vmap`` batch.

    A batching tracer holds its batch in ``_bval``; a forward-mode tracer holds
    its primal in ``_primal`` (see ``tapegrad._core.dispatch``).
    """
    while isinstance(t, Tensor):
        lv = t._lvl
        if lv is None or not lv.active:
            return False
        d = t.__dict__
        if d.get("_bval") is not None:
            return True
        p = d.get("_primal")
        if p is None:
            return False
        t = p
    return False


def truth(pred: Any) -> bool:
    """The Python truth value of a scalar predicate (a tensor, array or Python value).

    A tracer's level is asked first (``Level.read``), so a level that cannot
    give values (``vmap``, tracing) raises its own error.
    """
    if pred is True or pred is False:
        return pred
    if isinstance(pred, Tensor):
        if pred._lvl is not None:
            pred._lvl_read("bool")
        arr = pred._data
    else:
        arr = np.asarray(pred)
    try:
        return bool(arr)
    except ValueError as e:  # numpy's "truth value of an array ... is ambiguous"
        raise hinted(ValueError(with_hint(
            str(e), f"the predicate must be a scalar; it has shape {arr.shape}: reduce it "
            "(reduce_any / reduce_all) first"))) from None


def _any_true(t: Any) -> bool:
    """Whether any example of a batched boolean ``t`` is true (every batch level below)."""
    while isinstance(t, Tensor) and t._lvl is not None and t._lvl.active:
        d = t.__dict__
        if d.get("_bval") is not None:
            t = t._lvl.value(t)  # the batch, dense
        elif d.get("_primal") is not None:
            t = d["_primal"]
        else:
            break
    if isinstance(t, Tensor):
        return bool(np.any(t._data))
    return bool(np.any(t))


def _arr(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


def _call(fn: Fn, args: Sequence[Any]) -> tuple[Any, ...]:
    out = fn(*args)
    if isinstance(out, list):
        return tuple(out)
    if not isinstance(out, tuple):
        raise hinted(TypeError(with_hint(
            f"a control-flow function must return a tuple of tensors, got {type(out).__name__}",
            "return (value,) for one output; the front-ends pack nests for you")))
    return out


def _select(pred: Any, a: Sequence[Any], b: Sequence[Any], what: str) -> tuple[Any, ...]:
    """``where(pred, a_i, b_i)`` for each output pair (the per-example choice under vmap)."""
    from .elementwise import where

    if len(a) != len(b):
        raise hinted(ValueError(with_hint(
            f"{what}: the branches return {len(a)} and {len(b)} outputs",
            "under vmap with a per-example predicate both branches run: they must return the "
            "same number of tensors")))
    out = []
    for x, y in zip(a, b):
        if x is y:
            out.append(x)
        elif _is_value(x) and _is_value(y):
            out.append(where(pred, x, y))
        else:
            raise hinted(TypeError(with_hint(
                f"{what}: cannot select per example between {type(x).__name__} and "
                f"{type(y).__name__} values", "under vmap with a per-example predicate every "
                "output or loop variable must be a tensor or a number")))
    return tuple(out)


def _is_value(x: Any) -> bool:
    return isinstance(x, (Tensor, bool, int, float, complex, np.ndarray, np.generic))


# ------------------------------------------------------------------ cond
def cond(pred: Any, true_fn: Fn, false_fn: Fn, operands: Sequence[Any] = ()) -> tuple[Any, ...]:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``; a tuple of tensors.

    Eagerly only the branch taken runs.  Under ``vmap`` with a per-example
    predicate both run and the results are selected per example.

    >>> import tapegrad as tg
    >>> from tapegrad.ops import control
    >>> control.cond(tg.tensor(False), lambda: (tg.tensor(1.0),), lambda: (tg.tensor(2.0),))
    (tensor(2.),)
    """
    operands = tuple(operands)
    handler = control("cond")
    if handler is not None:
        return tuple(handler(pred, _flat_fn(true_fn), _flat_fn(false_fn), operands))
    if is_batched(pred):
        return _select(pred, _call(true_fn, operands), _call(false_fn, operands), "cond")
    return _call(true_fn if truth(pred) else false_fn, operands)


def _flat_fn(fn: Fn, scalar: bool = False) -> Fn:
    """``fn`` callable both as ``fn(*operands)`` and as ``fn(operands)`` (the handler's choice).

    A loop condition (``scalar``) returns its predicate as it is; the others a tuple.
    """

    def flat(*args: Any) -> Any:
        if len(args) == 1 and isinstance(args[0], (tuple, list)):
            args = tuple(args[0])
        return fn(*args) if scalar else _call(fn, args)

    return flat


# ------------------------------------------------------------------ while_loop
def while_loop(cond_fn: Fn, body_fn: Fn, loop_vars: Sequence[Any],
               maximum_iterations: int | None = None) -> tuple[Any, ...]:
    """Run ``loop_vars = body_fn(*loop_vars)`` while ``cond_fn(*loop_vars)``; the final vars.

    ``maximum_iterations`` caps the number of iterations; as in TensorFlow's
    eager loop the condition is still evaluated once the cap is reached (the
    two tests are joined by ``logical_and``).  Under ``vmap`` with a
    per-example condition the body runs while any example's condition holds,
    and an example whose condition is false keeps its loop variables.

    >>> import tapegrad as tg
    >>> from tapegrad.ops import control
    >>> control.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2), (tg.tensor(0), tg.tensor(1.0)))
    (tensor(3), tensor(8.))
    """
    loop_vars = tuple(loop_vars)
    handler = control("while_loop")
    if handler is not None:
        return tuple(handler(_flat_fn(cond_fn, scalar=True), _flat_fn(body_fn), loop_vars,
                             maximum_iterations))
    count = 0
    n = len(loop_vars)
    while True:
        c = cond_fn(*loop_vars)
        if maximum_iterations is not None and count >= maximum_iterations:
            break
        if is_batched(c):
            if not _any_true(c):
                break
            new = _call(body_fn, loop_vars)
            _check_count(new, n)
            for a, b in zip(new, loop_vars):
                sa, sb = np.shape(_arr(a)), np.shape(_arr(b))
                if sa != sb:
                    raise hinted(ValueError(with_hint(
                        f"while_loop: a loop variable changes shape from {sb} to {sa} in a "
                        "loop whose condition differs per example",
                        "under vmap the examples that are done keep their values, so the loop "
                        "variables must keep their shapes")))
            loop_vars = _select(c, new, loop_vars, "while_loop")
        else:
            if not truth(c):
                break
            new = _call(body_fn, loop_vars)
            _check_count(new, n)
            loop_vars = new
        count += 1
    return loop_vars


def _check_count(new: tuple[Any, ...], n: int) -> None:
    if len(new) != n:
        raise hinted(ValueError(with_hint(
            f"while_loop: the body returned {len(new)} loop variables, but the loop has {n}",
            "return every loop variable from the body, in order")))


# ------------------------------------------------------------------ switch_case
def switch_case(branch_index: Any, branch_fns: Sequence[Fn],
                operands: Sequence[Any] = ()) -> tuple[Any, ...]:
    """``branch_fns[branch_index](*operands)``; an index out of range takes the last branch.

    The out-of-range rule is TensorFlow's (``tf.switch_case``).  Under
    ``vmap`` with a per-example index every branch runs and the results are
    selected per example.

    >>> import tapegrad as tg
    >>> from tapegrad.ops import control
    >>> fns = [lambda: (tg.tensor(10.0),), lambda: (tg.tensor(20.0),)]
    >>> control.switch_case(tg.tensor(7), fns)
    (tensor(20.),)
    """
    operands = tuple(operands)
    fns = list(branch_fns)
    if not fns:
        raise hinted(ValueError(with_hint("Must provide at least one item in 'branch_fns'",
                                          "give switch_case at least one branch")))
    handler = control("switch_case")
    if handler is not None:
        return tuple(handler(branch_index, [_flat_fn(f) for f in fns], operands))
    last = len(fns) - 1
    if is_batched(branch_index):
        from .elementwise import equal

        outs = [_call(f, operands) for f in fns]
        result = outs[last]
        # an index out of range counts as the last branch, so only 0..last-1 need a test
        for k in range(last - 1, -1, -1):
            result = _select(equal(branch_index, k), outs[k], result, "switch_case")
        return result
    if isinstance(branch_index, Tensor):
        if branch_index._lvl is not None:
            branch_index._lvl_read("item")
        k = int(np.asarray(branch_index._data))
    else:
        k = int(branch_index)
    if k < 0 or k > last:
        k = last
    return _call(fns[k], operands)
