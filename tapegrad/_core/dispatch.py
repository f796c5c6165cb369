"""The one call path of every op while a transform is active.

An op call goes to the innermost active *interpreter* (a :class:`Level`) that
one of its tensor arguments belongs to; with none, it runs its plain path
(forward on arrays, reverse-mode recording when anything is tracked).  The
interpreters are forward mode (``tapegrad.autodiff.forward``), batching
(``tapegrad.autodiff.batching``) and, later, tracing; they live above
``ops`` and register nothing here: a level is any object with the
:class:`Level` interface pushed on the thread's stack.

A tensor that belongs to a level (a *tracer*) is an ordinary
:class:`~tapegrad._core.tensor.Tensor` of its style whose ``_lvl`` names the
level, plus the level's own fields (``_primal``/``_tangent`` for forward mode,
``_bval`` for batching).  Its ``_data`` has the tensor's *logical* shape and
dtype (the primal's data for forward mode, a read-only zero-stride array for
batching), so shape queries, broadcasting checks and the engine's bookkeeping
see what the user's function sees.  Because tracers are tensors, reverse-mode
recording applies to them at their own level: that is how ``grad`` composes
inside ``vmap`` and ``jvp`` (forward-over-reverse) without a special case.

Levels carry their depth on the stack, so a tensor of an outer level is a
constant to an inner one: nested ``jvp`` / ``vmap`` cannot confuse their
perturbations (JAX's levels, functorch's wrapper levels).
"""

from __future__ import annotations

from typing import Any

from typing_extensions import Self

from . import mode
from .tensor import Tensor

_STATE = mode.STATE


class Level:
    """One active interpreter on the thread's stack (a transform in progress)."""

    depth: int = -1
    active: bool = False
    #: a catch-all level (tracing) also receives the ops none of whose arguments is
    #: one of its tracers (ops on Variables, parameters and constants), when it is the
    #: innermost such level and deeper than the arguments' levels
    catch_all: bool = False

    def process(self, op: Any, args: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        """Run ``op`` on ``args``, some of which are this level's tracers."""
        raise NotImplementedError

    def lower(self, t: Tensor) -> Any:
        """What a tracer of this level stands for once the level has ended."""
        raise NotImplementedError

    def detach(self, t: Tensor) -> Tensor:
        """``t.detach()`` for a tracer of this level."""
        raise NotImplementedError

    def read(self, t: Tensor, what: str) -> None:
        """Called before a tracer's values are read (``item``, ``bool``, ...); may refuse."""

    def assign(self, t: Tensor, result: Tensor) -> None:
        """``t`` takes the value of ``result`` (a tracer of this level) in place."""
        raise NotImplementedError

    # -- the stack
    def __enter__(self) -> Self:
        levels = _STATE.levels
        self.depth = len(levels)
        self.active = True
        levels.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        levels = _STATE.levels
        self.active = False
        if levels and levels[-1] is self:
            levels.pop()
        elif self in levels:  # pragma: no cover - exited out of order
            levels.remove(self)


def level_of(t: Any) -> Level | None:
    """The active level a tensor is a tracer of (``None`` for a plain tensor)."""
    if isinstance(t, Tensor):
        lv = t._lvl
        if lv is not None and lv.active:
            return lv
    return None


def dispatch(op: Any, args: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
    """Run ``op`` through the innermost level among its arguments' levels."""
    top: Level | None = None
    stale = False
    for a in args:
        if isinstance(a, Tensor):
            lv = a._lvl
            if lv is not None:
                if lv.active:
                    if top is None or lv.depth > top.depth:
                        top = lv
                else:
                    stale = True
    for lv in reversed(_STATE.levels):
        if lv.catch_all:
            if top is None or lv.depth > top.depth:
                top = lv
            break
    if top is not None:
        return top.process(op, args, attrs)
    if stale:
        args = tuple(unwrap_stale(a) for a in args)
        return op(*args, **attrs)
    return op._general(args, attrs)


def unwrap_stale(a: Any) -> Any:
    """A tracer whose level has ended, replaced by what it stands for."""
    while isinstance(a, Tensor) and a._lvl is not None and not a._lvl.active:
        a = a._lvl.lower(a)
    return a


def save_self(res: Tensor) -> None:
    """A recorded tracer result saves itself, not its array, where its VJP uses ``out``."""
    node = res._node
    if node is None or not node.op.saves_out or not node.saved:
        return
    saved = list(node.saved)
    for j, (kind, _) in enumerate(node.op.save_codes):
        if kind == 1:
            saved[j] = res
    node.saved = tuple(saved)


_TRACER_FIELDS = ("_lvl", "_primal", "_tangent", "_bval", "_slot")


def copy_tracer(src: Tensor, dst: Tensor) -> Tensor:
    """Make ``dst`` (a snapshot or restyled view of ``src``) the same tracer as ``src``."""
    d = src.__dict__
    if d.get("_lvl") is not None:
        for k in _TRACER_FIELDS:
            if k in d:
                setattr(dst, k, d[k])
    return dst


def control(name: str) -> Any:
    """The innermost active level's handler for the structured control-flow op ``name``.

    Structured control flow (``cond``, ``while_loop``, ``switch_case`` in
    ``tapegrad.ops.control``) asks here first: a level that records programs
    (tracing) defines ``control_<name>`` to record the op with its branches or
    body as sub-programs; with no such level (eager code, or only forward-mode
    and batching levels) the op runs its eager path and this returns ``None``.
    """
    for lv in reversed(_STATE.levels):
        h = getattr(lv, "control_" + name, None)
        if h is not None:
            return h
    return None
