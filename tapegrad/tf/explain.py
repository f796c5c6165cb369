"""Why is my gradient ``None``?  (``tapegrad.tf.explain``)

TensorFlow returns ``None`` silently for a source the tape cannot reach.
:func:`why_none` (also ``tape.explain(target, source)``) inspects the tape
and the recorded graph and says which of the usual causes applies:

- the source is not watched (a ``tf.constant``, a non-trainable variable, a
  tape made with ``watch_accessed_variables=False``, a variable never read
  inside the block);
- the source (or the target) was computed outside the tape's block, or while
  it was paused by ``stop_recording``;
- the source has an integer dtype;
- every path from the target to the source goes through ``tf.stop_gradient``;
- the target is an inner tape's gradient computed outside the outer tape's
  block (so the outer tape never recorded it);
- the target simply does not depend on the source.

Examples
--------
>>> import tapegrad.tf as tf
>>> x = tf.constant(3.0)
>>> with tf.GradientTape() as tape:
...     y = x * x
>>> print(tape.gradient(y, x))
None
>>> print(tf.explain.why_none(tape, y, x).splitlines()[0])
gradient(target, source) is None: the source is not watched by this tape.
"""

from __future__ import annotations

from typing import Any

from .._core.node import AccumulateGrad, Node
from .._core.tensor import Tensor
from . import _nest
from ._tensor import VariableBase

__all__ = ["why_none", "explain"]

_NONE = "gradient(target, source) is None: "


def _reach(roots: list[Node], owns: Any, through_stop: bool) -> set[Node]:
    """Nodes reachable from ``roots`` over nodes the tape owns (optionally not via stop_gradient)."""
    seen: set[Node] = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if n.__class__ is AccumulateGrad:
            continue
        if owns is not None and not owns(n):
            continue
        if not through_stop and n.op.name == "stop_gradient":
            continue
        for c in n.next:
            if c is not None and c not in seen:
                stack.append(c)
    return seen


def why_none(tape: Any, target: Any, source: Any) -> Any:
    """Explain why ``tape.gradient(target, source)`` is ``None`` (or say that it is not).

    ``source`` may be a nest; the answer then has the same structure.
    Returns a short text: the cause and the fix.

    >>> import tapegrad.tf as tf
    >>> x = tf.Variable(2.0)
    >>> with tf.GradientTape() as tape:
    ...     y = tf.stop_gradient(x) * 3.0
    >>> print(tf.explain.why_none(tape, y, x).splitlines()[0])
    gradient(target, source) is None: every path from the target to the source goes through tf.stop_gradient.
    """
    if isinstance(source, (list, tuple, dict)):
        return _nest.map_structure(lambda s: why_none(tape, target, s), source)
    from .tape import _key

    tok = tape._token if tape._token is not None else tape._spent
    if tok is None:
        if tape._used:
            return (_NONE + "this non-persistent tape was already used.\nA non-persistent "
                    "GradientTape computes one set of gradients; create it with "
                    "persistent=True to ask it again.")
        return (_NONE + "this tape has not recorded anything.\nUse it as `with "
                "tf.GradientTape() as tape:` around the computation.")
    if not isinstance(source, Tensor):
        return (_NONE + f"the source is a {type(source).__name__}, not a tensor.\nPass the "
                "tf.Variable or the watched tensor itself.")
    if source._data.dtype.kind not in "fc":
        return (_NONE + f"the source has the integer dtype {source._data.dtype.name}.\n"
                "Integer (and bool) tensors are never differentiable. Cast to a float dtype "
                "*before* the computation (x = tf.cast(x, tf.float32)), watch that tensor, and "
                "use it.")
    skey = _key(tok, source)
    if skey is None:
        return _NONE + _unwatched(tape, source)
    flat_t = [t for t in _nest.flatten(target) if isinstance(t, Tensor)]
    roots = [k for k in (_key(tok, t) for t in flat_t) if k is not None]
    if not roots:
        t0 = flat_t[0] if flat_t else target
        if isinstance(t0, Tensor) and "_tg_grad_of" in t0.__dict__:
            return (_NONE + "the target is a gradient that another tape returned while this "
                    "tape was not recording.\nTo differentiate a gradient, call "
                    "inner_tape.gradient(...) inside this (outer) tape's `with` block.")
        return (_NONE + "the target was not recorded by this tape.\nIt was computed outside "
                "the tape's `with` block (or under tape.stop_recording()), or from nothing "
                "the tape watches. Compute it inside the block.")
    owns = tok.owns
    if skey in _reach(roots, owns, through_stop=False):
        return ("gradient(target, source) is not None: the source is watched and the target "
                "depends on it through recorded ops.")
    if skey in _reach(roots, owns, through_stop=True):
        return (_NONE + "every path from the target to the source goes through "
                "tf.stop_gradient.\nstop_gradient cuts the gradient on purpose; remove it on "
                "the path you want to differentiate.")
    if skey in _reach(roots, None, through_stop=True):
        return (_NONE + "the target reaches the source only through ops this tape did not "
                "record (run outside its block or under stop_recording()).\nDo the whole "
                "computation inside the tape's block.")
    return (_NONE + "the target does not depend on the source (they are not connected).\n"
            "If that is expected, pass unconnected_gradients='zero' to get zeros instead of "
            "None.")


def _unwatched(tape: Any, source: Tensor) -> str:
    is_var = isinstance(source, VariableBase)
    if is_var and not source.trainable:  # type: ignore[attr-defined]
        return ("the source is a non-trainable variable (trainable=False).\nTapes watch "
                "only trainable variables by themselves: call tape.watch(v) inside the block.")
    if is_var and not tape._watch_accessed_variables:
        return ("the tape was created with watch_accessed_variables=False.\nCall "
                "tape.watch(v) inside the block for each variable you need.")
    if is_var:
        return ("the variable was not read inside the tape's `with` block.\nUse it inside "
                "the block (reads before or after the block are not recorded).")
    if "_tg_grad_of" in source.__dict__:
        return ("the source is the result of another tape's gradient() and this tape does "
                "not watch it.\ntape.watch(it) inside the block before using it, or compute "
                "it inside this tape's block.")
    if source._node is not None:
        return ("the source was computed outside this tape's `with` block (before it, or "
                "under stop_recording()), so the tape did not record it.\nCompute it inside "
                "the block, or call tape.watch(source) inside the block before using it.")
    return ("the source is not watched by this tape.\nA tf.constant (or any tensor not "
            "computed inside the block) is not watched automatically: call "
            "tape.watch(source) inside the block, before the ops that use it (or make it a "
            "tf.Variable).")


explain = why_none
