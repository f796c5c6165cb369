"""Tracing: run a function once on concrete values and record a replayable program.

A :class:`TraceLevel` is one trace in progress (``tf.function``, ``torch.compile``).
It is a *catch-all* level on the dispatch stack (``_core/dispatch.py``): every op
called while it is innermost comes to :meth:`TraceLevel.process`, whether or
not its inputs are tracers, so ops on Variables and parameters are seen too.

Design (concrete-value tracing, as PyTorch's ``make_fx`` or JAX's ``jit`` of a
concrete trace): the Python body runs *once for real*; each op computes its
value on the plain path (so reverse-mode recording, tapes, ``backward()`` and
optimizer steps inside behave exactly as in eager code) and is also written
down as an instruction of a :class:`Program`:

- ``in``: the function's tensor inputs (tracers carry their *slot*);
- ``read``: a Variable, a parameter or a parameter's ``.grad`` read by
  reference (its value at that point of the program, at every replay);
- ``const``: any other tensor the function used (captured by value; a guard
  on its version counter makes a replay refuse if it was modified in place);
- ``op``: a primitive with its static attributes (including the ops of any
  backward pass run inside: the engine's VJPs are ops too, so a replay never
  walks a graph);
- side effects in program order: ``write`` (Variable assignment, in-place
  update of a parameter or buffer), ``setgrad`` (what ``backward()`` or
  ``p.grad = ...`` did to a ``.grad``) and ``effect`` (an opaque call run on
  every replay: ``tf.print``, an optimizer's fused update).

An op none of whose inputs is an input, a read or an earlier op's result is
*folded*: it was computed once while tracing and its value is a constant (the
backward of ``y * 1.0001`` needs no work at replay).  Instructions that
neither an output nor a side effect needs are *dropped*.  The rest is
compiled to one straight-line Python function of NumPy kernels
(:meth:`Program.source` shows it): elementwise ufuncs write into a dead
intermediate's buffer (``out=``) where no other value can see it, and each
value is released after its last use.

Replaying under an outer tape or with inputs that require grad runs the same
instructions through the ops (:meth:`Program.run_tensors`) so the caller's
graph records them: gradients of any order flow through a compiled function.

Reading a tracer's value (``item``, ``bool``, ``numpy``) calls the level's
``on_read`` policy: ``tf.function`` raises TensorFlow's error, ``torch.compile``
notes a *graph break* and the front-end runs that function eagerly.

While a function is traced, the arrays of its inputs, of every op's result and of
random draws are :class:`_TracedValue` views, which note any Python value taken from
them (a front-end reading ``t._data.tolist()`` for a shape, ``int(t)``, NumPy
computing a constant or a static attribute from them): the program would hold that
value, so that signature runs eagerly (the front-end warns).  A ``tf.while_loop``'s
condition and body are recorded once each; a value taken from a loop variable there
makes the loop not one program.  The kernels' own reads are not noted (they run again
at replay), and no array keeps the mark after the trace.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._core.dispatch import Level
from .._core.mode import STATE as _STATE
from .._core.node import FREED
from .._core.tensor import Tensor, make, set_style

__all__ = ["TraceLevel", "Program", "Instr", "current", "is_traced", "effect", "random_source", "note_break",
           "trace_call", "run_program", "same_program", "deferred_error", "name_op"]

IN, CONST, OP, READ, PARAM = 0, 1, 2, 3, 4
_KIND_NAMES = ("input", "const", "op", "read", "loop var")
# instructions that compute values (and may be dropped when nothing needs them)
_VALUE_KINDS = ("op", "read", "source")

# ops whose forward is exactly this ufunc of its inputs (no attributes): called directly
# at replay, and allowed to write into a dead input's buffer
_UFUNCS: dict[str, Any] = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "negative": np.negative,
    "square": np.square, "abs": np.abs, "sign": np.sign, "sin": np.sin, "cos": np.cos,
}
# ...and those written as Python operators when no buffer is reused (an ndarray operand
# calls the same ufunc; NumPy scalars, as in a chain of 0-d ops, take the scalar fast path)
_OPERATORS: dict[str, str] = {"add": "+", "subtract": "-", "multiply": "*", "negative": "-"}
# ufunc forwards that ignore floating-point warnings (np.errstate inside): called
# directly only under the replay's own errstate
_QUIET_UFUNCS: dict[str, Any] = {
    "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "tanh": np.tanh,
}


class _Lit:
    """A non-tensor argument of an op (a Python number, an ndarray, ``None``)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class _Loop:
    """A traced ``while_loop``: its condition and body as sub-programs over the loop
    variables (``params``, slots of kind ``PARAM``) and the values of the enclosing
    program they read (``caps``).  The ``while`` instruction's arguments are the
    initial values, then ``caps``; its results are ``outs``."""

    __slots__ = ("params", "caps", "cond", "cond_ref", "body", "body_refs", "outs",
                 "max_iter", "effects", "start", "end", "stack")

    def __init__(self, params: list[int], start: int, max_iter: int | None) -> None:
        self.params = params
        self.caps: list[int] = []
        self.cond: list[Instr] = []
        self.cond_ref: Any = None
        self.body: list[Instr] = []
        self.body_refs: list[Any] = []
        self.outs: list[int] = []
        self.max_iter = max_iter
        self.effects = False
        self.start = start
        self.end = start
        self.stack = -1  # the slot of the per-iteration loop variables (for a gradient)


class _LoopGrad:
    """The VJP of a traced loop for one output's cotangent (a ``while_grad`` instruction):
    the body's VJP program run backwards over the loop variables each iteration had (the
    forward ``while`` keeps them, as TensorFlow's loop accumulators do).  Arguments: the
    cotangent, the stack, the final loop variables, the captures; results: the cotangents
    of the float initial values and the float captures, in ``outs``."""

    __slots__ = ("loop", "j", "vjp", "prog", "fvars", "fcaps", "outs")

    def __init__(self, loop: _Loop, j: int, prog: Program, fvars: list[int], fcaps: list[int]
                 ) -> None:
        self.loop = loop
        self.j = j
        self.prog = prog
        self.vjp = prog.run
        self.fvars = fvars
        self.fcaps = fcaps
        self.outs: list[int] = []

    def run(self, g: Any, stack: list[Any], finals: Sequence[Any], caps: Sequence[Any]
            ) -> list[Any]:
        ct = [np.asarray(g) if k == self.j else np.zeros_like(np.asarray(finals[k]))
              for k in self.fvars]
        cc = [np.zeros_like(np.asarray(caps[k])) for k in self.fcaps]
        nf = len(self.fvars)
        for vs in reversed(stack):
            r = self.vjp(*vs, *caps, *ct)
            ct = [np.asarray(x) for x in r[:nf]]
            for k, x in enumerate(r[nf:]):
                cc[k] = cc[k] + np.asarray(x)
        return ct + cc

    def run_tensors(self, g: Tensor, stack: list[Any], finals: Sequence[Tensor],
                    caps: Sequence[Tensor]) -> list[Any]:
        """:meth:`run` through the ops (a tape outside records it: higher orders)."""
        from .. import ops

        ct: list[Any] = [g if k == self.j else ops.multiply(finals[k], 0.0)
                         for k in self.fvars]
        cc: list[Any] = [ops.multiply(caps[k], 0.0) for k in self.fcaps]
        nf = len(self.fvars)
        for vs in reversed(stack):
            r = self.prog.run_tensors([*vs, *caps, *ct], record_backward=True)
            ct = list(r[:nf])
            cc = [ops.add(a, b) for a, b in zip(cc, r[nf:])]
        return ct + cc


class _Region:
    """A loop being recorded: where its slots start and what it reads from outside."""

    __slots__ = ("start", "cap_t", "value_read")

    def __init__(self, start: int) -> None:
        self.start = start
        self.cap_t: dict[int, Tensor] = {}
        self.value_read = False  # a loop variable's value was taken as a Python value


# the traces running now (innermost last); ``None`` while one is suspended (its eager
# fallbacks and effects run as at replay: nothing they read is noted)
_WATCHING: list[TraceLevel | None] = []


def _note_loop_value() -> None:
    """A Python value was taken from an array that depends on the trace's inputs."""
    if _WATCHING:
        lv = _WATCHING[-1]
        if lv is not None:
            lv.note_loop_value()


def _propagating() -> bool:
    """Whether NumPy results computed from marked arrays are marked too: only while a
    front-end computes them in a trace (not in the ops' kernels, whose results the trace
    marks itself, nor after the trace, for an array that outlived it)."""
    if _WATCHING:
        lv = _WATCHING[-1]
        return lv is not None and not lv.quiet
    return False


def _plain(arr: Any) -> Any:
    """``arr`` without the trace's mark (what is stored beyond the trace)."""
    return arr.view(np.ndarray) if arr.__class__ is _TracedValue else arr


_SHAPE_ONLY = frozenset((np.zeros_like, np.ones_like, np.empty_like, np.shape, np.ndim,
                         np.size))


def _loop_result(r: Any) -> Any:
    if isinstance(r, np.ndarray):
        return r if r.__class__ is _TracedValue else r.view(_TracedValue)
    if isinstance(r, np.generic):
        return np.asarray(r).view(_TracedValue)
    if isinstance(r, (list, tuple)) and r and all(isinstance(x, np.ndarray) for x in r):
        return type(r)(_loop_result(x) for x in r)
    return r  # shapes, sizes, Python values


def _plain_result(r: Any) -> Any:
    if r.__class__ is _TracedValue:
        return r.view(np.ndarray)
    if isinstance(r, (list, tuple)) and any(x.__class__ is _TracedValue for x in r):
        return type(r)(_plain(x) for x in r)
    return r


class quiet_values:  # noqa: N801 - used as a context manager, like contextlib's
    """``with quiet_values():`` values read now from loop-variable tensors are checks on
    the trace's values (an index validated before it becomes an input of the op), not
    values the recorded program holds."""

    __slots__ = ("lv",)

    def __enter__(self) -> None:
        self.lv = _WATCHING[-1] if _WATCHING else None
        if self.lv is not None:
            self.lv.quiet += 1

    def __exit__(self, *exc: Any) -> None:
        if self.lv is not None:
            self.lv.quiet -= 1


class _TracedValue(np.ndarray):
    """The array of a traced value while it is traced: a tensor computed from the
    function's inputs, reads or random draws (and, while a ``tf.while_loop`` body is
    recorded, from its loop variables).  Taking a Python value from it (``tolist``,
    ``item``, ``int``, ``float``, ``bool``, an index, iterating, reading one element) is
    noted, and so is a constant that front-end code computed from it with NumPy: the
    recorded program would hold that value, so it would not hold for the next call (or
    iteration).  The ops' kernels read it freely (they run again at replay)."""

    __slots__ = ()

    def __array_wrap__(self, arr: Any, context: Any = None, return_scalar: bool = False
                       ) -> Any:
        if not _propagating():  # a kernel's temporaries, or an array that outlived its trace
            a = arr if arr.__class__ is np.ndarray else arr.view(np.ndarray)
            return a[()] if return_scalar else a
        # a reduction to one number stays an array (and keeps saying where it came from)
        return np.ndarray.__array_wrap__(self, arr, context, False)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        # NumPy functions (np.stack, np.argwhere, np.argmax, ...) on it: what they compute from
        # a traced value says so too (a constant made from it is a value the program
        # would hold; the arrays of ops' results are marked by TraceLevel.process)
        r = super().__array_function__(func, types, args, kwargs)
        if func in _SHAPE_ONLY or not _propagating():
            return _plain_result(r)
        return _loop_result(r)

    def _value_taken(self) -> np.ndarray:
        """``np.asarray(t)`` of the tensor (``Tensor.__array__``): its value, plain."""
        _note_loop_value()
        return self.view(np.ndarray)

    def tolist(self) -> Any:
        _note_loop_value()
        return np.ndarray.tolist(self)

    def item(self, *args: Any) -> Any:
        _note_loop_value()
        return np.ndarray.item(self, *args)

    def __int__(self) -> int:
        _note_loop_value()
        return int(self.view(np.ndarray))

    def __float__(self) -> float:
        _note_loop_value()
        return float(self.view(np.ndarray))

    def __complex__(self) -> complex:
        _note_loop_value()
        return complex(self.view(np.ndarray))

    def __index__(self) -> int:
        _note_loop_value()
        return self.view(np.ndarray).__index__()

    def __bool__(self) -> bool:
        _note_loop_value()
        return bool(self.view(np.ndarray))

    def __iter__(self) -> Any:
        _note_loop_value()
        return iter(self.view(np.ndarray))

    def __getitem__(self, key: Any) -> Any:
        r = np.ndarray.__getitem__(self, key)
        if not isinstance(r, np.ndarray):  # one element, as a NumPy scalar
            _note_loop_value()
        return r


def _frontend_frame() -> str:
    """`` by NAME (module)`` for the innermost front-end function on the stack (below the
    core's frames): the one that took a traced value as a Python value."""
    import sys

    f: Any = sys._getframe(2)
    while f is not None:
        mod = f.f_globals.get("__name__", "")
        if not mod.startswith("tapegrad."):
            return ""  # the user's own code
        if not mod.startswith(_CORE):
            return f" by {f.f_code.co_name} ({mod})"
        f = f.f_back
    return ""


# the layers below the front-ends (their frames are not the one that read)
_CORE = ("tapegrad.autodiff", "tapegrad._core", "tapegrad.ops", "tapegrad.engine")


def _has_effects(instrs: Sequence[Instr]) -> bool:
    for ins in instrs:
        k = ins.kind
        if k == "while":
            if ins.obj.effects:
                return True
        elif k not in ("op", "read", "while_grad"):
            return True  # a side effect, or a random source (it advances the generator)
    return False


def _dce(instrs: list[Instr], needed: set[int], dropped: list[Instr] | None = None
         ) -> list[Instr]:
    """The instructions that the slots in ``needed`` or a side effect need (``needed`` grows
    by what they read)."""
    kept: list[Instr] = []
    for ins in reversed(instrs):
        k = ins.kind
        if (k in ("op", "read") and ins.out not in needed) or (
                k == "while" and not ins.obj.effects and ins.obj.stack not in needed
                and not any(o in needed for o in ins.obj.outs)) or (
                k == "while_grad" and not any(o in needed for o in ins.obj.outs)):
            if dropped is not None:
                dropped.append(ins)
            continue
        kept.append(ins)
        needed.update(ins.slots())
    kept.reverse()
    return kept


def _loop_slots(instrs: Sequence[Instr], acc: set[int]) -> set[int]:
    """Every slot read inside the loops among ``instrs`` (recursively)."""
    for ins in instrs:
        if ins.kind == "while":
            lp = ins.obj
            for sub in (lp.cond, lp.body):
                for j in sub:
                    acc.update(j.slots())
                _loop_slots(sub, acc)
            acc.update(r for r in [lp.cond_ref, *lp.body_refs] if r.__class__ is int)
    return acc


class Instr:
    """One instruction of a program (see the module docstring for the kinds)."""

    __slots__ = ("kind", "op", "args", "attrs", "out", "obj", "what", "fn", "bwd", "gm",
                 "name", "shape", "dtype", "when", "where")

    def __init__(self, kind: str, out: int = -1, op: Any = None, args: Sequence[Any] = (),
                 attrs: dict[str, Any] | None = None, obj: Any = None, what: str = "",
                 fn: Any = None, name: str = "") -> None:
        self.kind = kind
        self.out = out
        self.op = op
        self.args = tuple(args)
        self.attrs = attrs or {}
        self.obj = obj
        self.what = what
        self.fn = fn
        self.bwd = _STATE.in_backward > 0
        self.gm = _STATE.grad_enabled
        self.name = name or (op.name if op is not None else kind)
        self.shape: tuple[int, ...] | None = None
        self.dtype: Any = None
        # a side effect inside traced cond branches runs only when their predicates hold:
        # ((slot, polarity), ...)
        self.when: tuple[tuple[int, bool], ...] = ()
        self.where: Any = None  # a front-end's note of where the op was called (its site)

    def slots(self) -> list[int]:
        """The slots this instruction reads."""
        return [a for a in self.args if a.__class__ is int] + [w for w, _ in self.when]


def is_traced(t: Any) -> bool:
    """Whether ``t`` is a tracer of a trace in progress (``tf.function``,
    ``torch.compile``): its value differs between calls, so an op must take it as an
    input instead of its first value."""
    if not isinstance(t, Tensor):
        return False
    lv = t._lvl
    return lv is not None and lv.active and isinstance(lv, TraceLevel)


def current() -> TraceLevel | None:
    """The innermost active trace (``None`` when nothing is being traced)."""
    for lv in reversed(_STATE.levels):
        if isinstance(lv, TraceLevel):
            return lv
    return None


def effect(fn: Callable[..., Any], tensors: Sequence[Any] = (), name: str = "effect",
           invalidates: bool = True, writes: Sequence[Any] = ()) -> Any:
    """Run ``fn(*arrays)`` now and, while tracing, on every replay (in program order).

    ``tensors`` are passed as their arrays.  ``invalidates``: the call may change
    Variables, parameters or gradients, so later uses read them again; ``writes``:
    tensors it changes in place (never captured as constants).  Used for
    ``tf.print``, the optimizers' fused updates and batch norm's running statistics.
    """
    lv = current() if _STATE.levels else None
    if lv is None:
        return fn(*[t._data if isinstance(t, Tensor) else t for t in tensors])
    for t in writes:
        lv.written.add(id(t))
        lv.arr_slot.pop(id(t._data), None)
    return lv.effect(fn, tensors, name, invalidates or bool(writes))


def random_source(name: str) -> Callable[[Callable[..., Tensor]], Callable[..., Tensor]]:
    """Decorator for a function that draws new random numbers on every call: while
    tracing, its result is a *source* of the program (drawn again at each replay)."""
    import functools

    def deco(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Tensor:
            lv = current() if _STATE.levels else None
            if lv is None:
                return fn(*args, **kwargs)
            if any(_traced_arg(lv, a) for a in (*args, *kwargs.values())):
                # a shape, mean or bound computed from the inputs: drawn again at replay,
                # the source would hold this call's value
                lv.note_loop_value(f"{name} with an argument computed from the inputs")
            return lv.source(lambda: fn(*args, **kwargs), name)

        return wrapper

    return deco


def _traced_arg(lv: TraceLevel, a: Any) -> bool:
    if isinstance(a, Tensor):
        d = a.__dict__
        return d.get("_lvl") is lv and not d.get("_static") or \
            a._data.__class__ is _TracedValue
    if isinstance(a, (list, tuple)):
        return any(_traced_arg(lv, x) for x in a)
    return False


def deferred_error(exc: BaseException, like: Tensor) -> Tensor:
    """Inside a trace whose front-end defers run-time errors, a tensor whose op raises
    ``exc`` if its value is needed (``like``: its stand-in value); else ``exc`` is raised."""
    lv = current() if _STATE.levels else None
    if lv is None or lv.defer_errors is None or not lv.defer_errors(exc):
        raise exc
    return lv.deferred_error(exc, like)


def name_op(t: Tensor, name: str, what: str = "") -> Tensor:
    """Inside a trace, name the instruction that computed tracer ``t`` as a front-end's op
    (``GatherV2``; ``what``: a note for that front-end, e.g. its axis); returns ``t``."""
    lv = t.__dict__.get("_lvl")
    if isinstance(lv, TraceLevel):
        s = t.__dict__.get("_slot")
        for ins in reversed(lv.instrs):
            if ins.out == s and ins.kind == "op":
                ins.name, ins.what = name, what
                break
    return t


def note_break(what: str) -> None:
    """Tell the innermost trace (if any) that ``what`` cannot be recorded."""
    if _STATE.levels:
        lv = current()
        if lv is not None:
            lv.note_break(what)


def _user_frame() -> str:
    """``file:line`` of the innermost frame outside tapegrad (where a graph broke)."""
    import os

    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for fr in reversed(traceback.extract_stack()):
        if not os.path.abspath(fr.filename).startswith(pkg + os.sep):
            return f"{fr.filename}:{fr.lineno} ({fr.line})"
    return "?"


class TraceLevel(Level):
    """One trace in progress: records every op, read and side effect into a program."""

    catch_all = True

    def __init__(self, name: str = "f", dry: bool = False,
                 on_read: Callable[[Tensor, str], None] | None = None,
                 on_create: Callable[[Any], None] | None = None) -> None:
        self.name = name
        self.on_create = on_create
        self.on_show: Callable[[TraceLevel, Tensor], str | None] | None = None
        self.sym_counts: dict[str, int] = {}
        self.dry = dry  # a trace that must leave no effect (get_concrete_function)
        self.on_read = on_read
        self.instrs: list[Instr] = []
        self.arrs: list[Any] = []  # each slot's value while tracing
        self.kinds: list[int] = []
        self.styles: list[int] = []
        self.names: list[str] = []
        self.arr_slot: dict[int, int] = {}  # id(array) -> slot (non-tracer lookups)
        self.unmarked: dict[int, Any] = {}  # slot -> its array before it was marked
        self.input_ids: set[int] = set()  # the caller's input tensors (by id)
        self._orig: dict[int, Any] = {}  # id(marked array) -> its array, once unmarked
        self.tracers: list[Tensor] = []
        self.consts: dict[int, Tensor] = {}
        self.inputs: list[int] = []
        self.grad_arrays: dict[int, Tensor] = {}  # id(p.grad array) -> p
        self.grad_touched: set[int] = set()
        self.grad_guards: list[tuple[Tensor, bool]] = []
        self.written: set[int] = set()
        self.undo: list[tuple[Any, ...]] = []
        self.undone: set[tuple[int, str]] = set()
        self.created: list[Any] = []  # Variables created while tracing
        self.folded: list[str] = []
        self.breaks: list[tuple[str, str]] = []
        self.unsupported: str | None = None
        self.n_effects = 0
        self.n_invalidating = 0
        self.when: list[tuple[int, bool]] = []  # the traced cond branches we are inside
        self.taken = True  # whether those branches are the ones taken now
        self.regions: list[_Region] = []  # the while_loop bodies being recorded
        self.closed: list[tuple[int, int]] = []  # slot ranges of recorded loop bodies
        self.quiet = 0  # > 0: values read now are the kernels' own (not noted)
        self.outer_tapes = list(_STATE.tapes)  # tapes that were recording before the trace
        self.n_static = 0  # tracers marked by mark_static
        # set by a front-end (tf.function) before the trace ends: the tensors that leave it
        # (its outputs, the caller's inputs); every other tracer is marked ``_leaked`` when
        # released, so a value read from it later can raise (TensorFlow's symbolic tensor)
        self.leak_keep: set[int] | None = None
        # the front-end's text for such a tensor used in a later trace (its error)
        self.leak_text: Callable[[TraceLevel, Tensor], str] | None = None
        self.op_names: dict[str, str] = {}  # a front-end's names of ops in symbols
        # a front-end's class for its tracers (TensorFlow's SymbolicTensor), by the class of
        # the tensor; tracers get their own class back when released (unless leaked)
        self.tracer_classes: dict[type, type] | None = None
        # a front-end's policy for an op's error while tracing: True when the error is one
        # its graph raises at run time (only if the op's value is needed), so the op is
        # recorded with a stand-in value and the error kept (``deferred``)
        self.defer_errors: Callable[[BaseException], bool] | None = None
        self.deferred: dict[int, BaseException] = {}  # slot -> the error its op would raise
        # a front-end's note of the call site of each op (``Instr.where``)
        self.site: Callable[[], Any] | None = None
        # a front-end's static-shape rule, called with (op, args, attrs, out) for each op
        # recorded (tf.function's None dimensions of a generalized signature)
        self.shape_rule: Callable[[Any, tuple[Any, ...], dict[str, Any], Tensor], None] | None \
            = None

    # ------------------------------------------------------------------ slots
    def _new_slot(self, kind: int, arr: Any, style: int, name: str = "") -> int:
        s = len(self.arrs)
        self.arrs.append(arr)
        self.kinds.append(kind)
        self.styles.append(style)
        self.names.append(name)
        if isinstance(arr, np.ndarray):
            self.arr_slot[id(arr)] = s
        return s

    def _unmarked(self, s: int, orig: Any) -> None:
        """Slot ``s``'s array before it was marked (what a node saved, what a front-end
        wrapped) is the same value."""
        self.unmarked[s] = orig
        self.arr_slot[id(orig)] = s

    def _mark(self, t: Tensor, s: int) -> Tensor:
        d = t.__dict__
        d["_lvl"] = self
        d["_slot"] = s
        classes = self.tracer_classes
        if classes is not None:
            c = classes.get(t.__class__)
            if c is not None:
                t.__class__ = c
        self.tracers.append(t)
        return t

    def add_input(self, t: Tensor, name: str = "") -> Tensor:
        """A tracer for input tensor ``t`` (before the level is entered)."""
        from .. import ops

        first = id(t) not in self.input_ids
        self.input_ids.add(id(t))
        if first and t._rg and t._node is None and not _STATE.tapes:
            # a leaf that requires grad (PyTorch style): the tracer is the tensor itself,
            # so its .grad, is_leaf and hooks are its own while the function runs
            tr = t
        elif t._rg or t._node is not None or _STATE.tapes:
            tr = ops.identity(t)  # outer reverse mode reaches the input through it
        else:
            tr = make(t._data, None, False, t._style)
        tr._vc = t._vc
        orig = tr._data
        tr._data = orig.view(_TracedValue)  # a value taken from it is noted
        s = self._new_slot(IN, tr._data, t._style, name)
        self._unmarked(s, orig)
        self.inputs.append(s)
        return self._mark(tr, s)

    def ref(self, a: Tensor) -> int:
        """The slot of tensor ``a`` (capturing it as a read or a constant if it is new)."""
        d = a.__dict__
        if d.get("_lvl") is self:
            s = d["_slot"]
            if self.closed or self.regions:
                self._scoped(s, a)
            return s
        arr = a._data
        s = self.arr_slot.get(id(arr))
        if s is not None and (self.arrs[s] is arr or self.unmarked.get(s) is arr):
            if self.closed or self.regions:
                self._scoped(s, a)
            return s
        leaked = d.get("_leaked")
        if leaked and self.leak_text is not None:
            # a tensor of an earlier trace (kept in a global): TensorFlow's error
            from .._core.errors import hinted, with_hint

            err = hinted(TypeError(with_hint(
                leaked, "return the tensor from the function that computes it")))
            err.ag_pass_through = True  # type: ignore[attr-defined]  # as it is (TensorFlow)
            raise err
        return self._capture(a)

    def _scoped(self, s: int, a: Tensor) -> None:
        """Slot ``s`` used now: a capture of the loop bodies being recorded that it comes
        from outside of, and never a value of a loop body recorded before."""
        for lo, hi in self.closed:
            if lo <= s < hi:
                self._unsupported("a tensor computed inside a tf.while_loop body used "
                                  "outside the loop")
        for r in self.regions:
            if s < r.start and self.kinds[s] != CONST:
                r.cap_t.setdefault(s, a)

    def _state_of(self, a: Tensor) -> tuple[Any, str] | None:
        if getattr(a, "_is_variable", False) or id(a) in self.written:
            return a, "data"
        if a._node is None:
            acc = a._acc
            if acc is not None:
                v = acc.variable_ref()
                if v is not None and v is not a and getattr(v, "_is_variable", False) \
                        and v._data is a._data:
                    return v, "data"
            if a._rg:
                return a, "data"
        else:
            return a, "data"  # a tensor with an outer graph: read so gradients reach it
        p = self.grad_arrays.get(id(a._data))
        if p is not None and p._grad is not None and p._grad._data is a._data:
            return p, "grad"
        return None

    def _capture(self, a: Tensor) -> int:
        arr = a._data
        st = self._state_of(a)
        if st is None:
            if arr.__class__ is _TracedValue:
                # computed from a loop variable by NumPy, not by an op: its value is baked
                self.note_loop_value()
                arr = arr.view(np.ndarray)
                a._data = arr
            s = self._new_slot(CONST, arr, a._style)
            self.consts[s] = a
            return s
        obj, what = st
        s = self._new_slot(READ, arr, a._style)
        ins = Instr("read", s, obj=obj, what=what, name=f"read {what}")
        self._shape(ins, arr)
        self.instrs.append(ins)
        # what .grad looked like at the call's start matters only until an effect (an
        # optimizer's zero_grad) may have changed it
        if what == "grad":
            if id(obj) not in self.grad_touched and not self.n_invalidating:
                self.grad_guards.append((obj, True))
        elif obj._rg and not getattr(obj, "_is_variable", False) and obj._node is None:
            g = obj._grad
            if g is not None:
                self.grad_arrays[id(g._data)] = obj
            if id(obj) not in self.grad_touched and not self.n_invalidating:
                self.grad_guards.append((obj, g is not None))
                self.grad_touched.add(id(obj))
        return s

    @staticmethod
    def _shape(ins: Instr, arr: Any) -> None:
        a = np.asarray(arr)
        ins.shape = a.shape
        ins.dtype = a.dtype

    def _lit_or_ref(self, a: Any) -> tuple[Any, bool]:
        if isinstance(a, Tensor):
            s = self.ref(a)
            return s, self.kinds[s] != CONST
        if isinstance(a, (list, tuple)) and any(isinstance(x, Tensor) for x in a):
            self._unsupported("a list of tensors passed as one op argument")
        elif a.__class__ is _TracedValue:  # a loop variable's array as a constant argument
            self.note_loop_value()
        return _Lit(a), False

    def _unsupported(self, what: str) -> None:
        if self.unsupported is None:
            self.unsupported = what

    # ------------------------------------------------------------------ the Level interface
    def process(self, op: Any, args: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        refs: list[Any] = []
        live = False
        for a in args:
            r, lv = self._lit_or_ref(a)
            refs.append(r)
            live = live or lv
        for v in attrs.values():
            if isinstance(v, Tensor) and v.__dict__.get("_lvl") is self:
                self._unsupported(f"a traced tensor as the static attribute of {op.name}")
            elif v.__class__ is _TracedValue or isinstance(v, tuple) and any(
                    x.__class__ is _TracedValue for x in v):
                self.note_loop_value()  # a traced value's array as a static attribute
        self.quiet += 1  # the kernel reads traced values freely (it runs again at replay)
        failed: BaseException | None = None
        try:
            out = op._general(args, attrs)
        except Exception as e:  # noqa: BLE001 - deferred or raised again (_stand_in)
            out, failed = self._stand_in(op, args, attrs, e)
        finally:
            self.quiet -= 1
        if not live and failed is None:
            self.folded.append(op.name)
            return out
        static = False
        if self.n_static:  # computed from shapes only (tf.shape): its value may be read
            trs = [a for a in args if isinstance(a, Tensor) and a.__dict__.get("_lvl") is self]
            static = bool(trs) and all(a.__dict__.get("_static") for a in trs)
        arr = orig = out._data
        if static:
            out.__dict__["_static"] = True
            if arr.__class__ is _TracedValue:
                arr = out._data = arr.view(np.ndarray)
        elif arr.__class__ is not _TracedValue and isinstance(arr, np.ndarray):
            arr = out._data = arr.view(_TracedValue)  # a value taken from it is noted
        s = self._new_slot(OP, arr, out._style)
        if arr is not orig:
            self._unmarked(s, orig)
        ins = Instr("op", s, op=op, args=refs, attrs=attrs)
        self._shape(ins, arr)
        if self.site is not None:
            ins.where = self.site()
        self.instrs.append(ins)
        self._mark(out, s)
        if self.shape_rule is not None:
            self.shape_rule(op, args, attrs, out)
        if failed is not None:
            self.deferred[s] = failed
        elif self.deferred and any(r.__class__ is int and r in self.deferred for r in refs):
            self.deferred[s] = next(self.deferred[r] for r in refs
                                    if r.__class__ is int and r in self.deferred)
        return out

    def _stand_in(self, op: Any, args: tuple[Any, ...], attrs: dict[str, Any],
                  e: Exception) -> tuple[Tensor, BaseException | None]:
        """An op failed on the trace's values: inside a loop body recorded on values it
        never takes, or with an error the front-end's graph raises only at run time, it
        is recorded with a stand-in value (zeros of the shape it would have); otherwise
        ``e`` is raised."""
        # a loop body recorded on values it never takes now (its sub-program runs only
        # when the loop iterates); not a tf.cond branch: a replay runs both branches' ops
        idle = not self.taken and bool(self.regions) and not self.when
        deferrable = self.defer_errors is not None and self.defer_errors(e)
        if not idle and not deferrable:
            raise e
        style = next((a._style for a in args if isinstance(a, Tensor)), 0)
        # the kernel on stand-ins of its inputs (empty axes of size 1): the output's shape
        try:
            padded = tuple(make(np.zeros(tuple(d or 1 for d in a._data.shape), a._data.dtype),
                                None, False, a._style) if isinstance(a, Tensor) else a
                           for a in args)
            with np.errstate(all="ignore"):
                arr = np.zeros_like(np.asarray(op._general(padded, attrs)._data))
        except Exception:  # noqa: BLE001 - no shape to find: a scalar stands in
            dt = next((a._data.dtype for a in args if isinstance(a, Tensor)), np.float32)
            arr = np.zeros((), dt)
        return make(arr, None, False, style), (None if idle and not deferrable else e)

    def deferred_error(self, exc: BaseException, like: Tensor) -> Tensor:
        """A value whose op raises ``exc`` when it runs (a front-end's check that failed
        on constant inputs): recorded, and raised only if an output or a side effect
        needs it.  ``like`` is its trace-time stand-in (its shape and dtype)."""
        from .._core.registry import Op

        def fwd() -> Any:
            raise exc.with_traceback(None)

        op = Op("deferred_error", fwd, (), "DeferredErrorBackward")
        s = self._new_slot(OP, like._data, like._style)
        ins = Instr("op", s, op=op, args=(), name="deferred_error")
        self._shape(ins, like._data)
        if self.site is not None:
            ins.where = self.site()
        self.instrs.append(ins)
        self.deferred[s] = exc
        return self._mark(like, s)

    def mark_static(self, t: Tensor) -> Tensor:
        """Tracer ``t`` holds only the input shapes (``tf.shape``): reading its value is
        allowed and bakes it into the program (which then holds for those shapes only)."""
        if t.__dict__.get("_lvl") is self:
            t.__dict__["_static"] = True
            self.n_static += 1
            arr = t._data
            if arr.__class__ is _TracedValue:  # a shape, not a loop variable's value
                plain = arr.view(np.ndarray)
                s = t.__dict__["_slot"]
                self.arrs[s] = plain
                if self.arr_slot.pop(id(arr), None) is not None:
                    self.arr_slot[id(plain)] = s
                t._data = plain
        return t

    def lower(self, t: Tensor) -> Any:
        return make(t._data, t._node, t._rg, t._style)

    def detach(self, t: Tensor) -> Tensor:
        d = make(t._data, None, False, t._style)
        d._vc = t._vc
        return self._mark(d, t.__dict__["_slot"])

    def read(self, t: Tensor, what: str) -> None:
        if t.__dict__.get("_static"):
            return  # a value of the input shapes: read as the shapes are
        if t._data.__class__ is _TracedValue:
            self.note_loop_value()
        if self.on_read is not None:
            self.on_read(t, what)
        self.breaks.append((what, _user_frame()))

    def note_loop_value(self, what: str = "") -> None:
        """A Python value was taken from a traced tensor (by front-end code, for a static
        argument: ``int()`` of it, a shape or an index made from its values): the program
        would hold that value.  Inside a ``tf.while_loop`` body being recorded, that loop
        is not one program; elsewhere the function is not (it runs eagerly, so every
        value is right)."""
        if self.quiet:
            return
        if self.regions:
            self.regions[-1].value_read = True
        elif self.unsupported is None:
            self._unsupported(what or "a traced tensor's value taken as a Python value"
                              + _frontend_frame())


    def show(self, t: Tensor) -> str | None:
        """What printing tracer ``t`` shows: the front-end's ``on_show`` (TensorFlow's
        symbolic ``Tensor("x:0", ...)``), or ``None`` (its value) after a ``print`` read."""
        if self.on_show is not None:
            return self.on_show(self, t)
        self.read(t, "print")
        return None

    def symbol(self, t: Tensor) -> str:
        """A TensorFlow-style name for tracer ``t`` (``x``, ``add``, ``add_1``, ...)."""
        s = t.__dict__["_slot"]
        nm = self.names[s]
        if not nm:
            base = "Identity"
            for ins in reversed(self.instrs):
                if ins.out == s:
                    base = self.op_names.get(ins.name, ins.name)
                    break
            k = self.sym_counts.get(base, 0)
            self.sym_counts[base] = k + 1
            nm = base if k == 0 else f"{base}_{k}"
            self.names[s] = nm
        return nm

    def _save_undo(self, obj: Any, what: str) -> None:
        key = (id(obj), what)
        if key in self.undone:
            return
        self.undone.add(key)
        if what == "data":
            self.undo.append((obj, what, obj._data, obj._data.copy(), obj._vc[0]))
        else:
            g = obj._grad
            self.undo.append((obj, what, g, None if g is None else g._data.copy(), 0))

    def rollback(self) -> None:
        """Undo the trace's writes to Variables, parameters and gradients (a dry trace)."""
        for obj, what, ref, copy, vc in reversed(self.undo):
            if what == "data":
                obj._data = ref
                np.copyto(ref, copy)
                obj._vc[0] = vc
            else:
                obj._grad = ref
                if ref is not None and copy is not None:
                    np.copyto(ref._data, copy)

    def _as_dtype(self, result: Tensor, dtype: Any) -> Tensor:
        if result._data.dtype != dtype:
            from .. import ops

            return ops.cast(result, dtype=dtype)
        return result

    def assign(self, t: Tensor, result: Tensor) -> None:
        """``t`` takes ``result``'s value in place (an in-place op while tracing)."""
        result = self._as_dtype(result, t._data.dtype)
        s = self.ref(result)
        d = t.__dict__
        if d.get("_lvl") is self:
            old = d["_slot"]
            if self.kinds[old] == IN:  # the caller's tensor changes too
                self.instrs.append(Instr("write_in", obj=self.inputs.index(old), args=(s,),
                                         name="write input"))
            self._copy_into(t, result._data)
            d["_slot"] = s
            if self.regions:  # t now holds result's value: from a loop variable or not
                dep = result._data.__class__ is _TracedValue
                if (t._data.__class__ is _TracedValue) != dep:
                    t._data = t._data.view(_TracedValue if dep else np.ndarray)
            return
        self._save_undo(t, "data")
        self._side(Instr("write_inplace", obj=t, args=(s,), name="write in place"))
        self.written.add(id(t))
        if self.taken:
            self._copy_into(t, result._data)
        self.arr_slot.pop(id(t._data), None)  # later uses read the new value

    @staticmethod
    def _copy_into(t: Tensor, data: np.ndarray) -> None:
        if t._data.flags.writeable:
            np.copyto(t._data, data, casting="unsafe")
        else:
            t._data = _plain(data).astype(t._data.dtype)

    # ------------------------------------------------------------------ gradients
    def control_accumulate_grad(self, t: Tensor, g: Tensor, create_graph: bool) -> None:
        """What ``backward()`` does to ``t.grad`` (the engine's ``_accumulate``), recorded."""
        from .. import ops

        if id(t) in self.input_ids:
            # the .grad of this call's input: a replay would write the first call's tensor
            self._unsupported("backward() into the .grad of an input of the function")
        if not create_graph and g._node is not None:
            g = g.detach()
        self._save_undo(t, "grad")
        cur = t._grad
        if cur is None or create_graph or cur._node is not None:
            new = g if cur is None else ops.add(cur, g)
            new = self._as_dtype(new, t._data.dtype)
            s = self.ref(new)
            arr = np.array(new._data, copy=True)
            ng = make(arr, new._node if create_graph else None, new._rg if create_graph
                      else False, t._style)
            if self.kinds[s] != CONST:
                ng._data = arr.view(_TracedValue)
                self._unmarked(s, arr)
                self._mark(ng, s)
            self.instrs.append(Instr("setgrad", obj=t, args=(s,), name="set .grad"))
            t._grad = ng
        else:
            res = self._as_dtype(ops.add(cur, g), cur._data.dtype)
            s = self.ref(res)
            self.instrs.append(Instr("addgrad", obj=t, args=(s,), name="accumulate .grad"))
            cur._data += g._data
            cur._vc[0] += 1
            if cur.__dict__.get("_lvl") is self:
                cur.__dict__["_slot"] = s
            else:
                self.arr_slot.pop(id(cur._data), None)
        self.grad_touched.add(id(t))
        if t._grad is not None:
            self.grad_arrays[id(t._grad._data)] = t

    def control_set_grad(self, t: Tensor, value: Any) -> None:
        """``t.grad = value`` while tracing."""
        if id(t) in self.input_ids:
            self._unsupported("setting the .grad of an input of the function")
        self._save_undo(t, "grad")
        self.grad_touched.add(id(t))
        if value is None:
            self.instrs.append(Instr("setgrad", obj=t, args=(_Lit(None),), name="set .grad"))
            return
        s = self.ref(value)
        self.instrs.append(Instr("setgrad_alias", obj=t, args=(s,), name="set .grad"))
        self.grad_arrays[id(value._data)] = t

    # ------------------------------------------------------------------ Variables, effects
    def write_var(self, v: Any, new: Tensor) -> None:
        """Variable ``v`` is assigned ``new`` (rebinds its array, as ``Variable.assign``)."""
        self.ref(v)  # snapshots read before the write keep the old value
        s = self.ref(new)
        self._save_undo(v, "data")
        self._side(Instr("write_var", obj=v, args=(s,),
                         name=f"assign {getattr(v, 'name', '')}".rstrip()))
        self.written.add(id(v))
        if self.taken:
            v._set(_plain(new._data), False)  # later uses read the new value (a new array)
        else:
            self.arr_slot.pop(id(v._data), None)

    def effect(self, fn: Callable[..., Any], tensors: Sequence[Any], name: str,
               invalidates: bool) -> Any:
        refs: list[Any] = []
        for t in tensors:
            refs.append(self.ref(t) if isinstance(t, Tensor) else _Lit(t))
        ins = Instr("effect", fn=fn, args=refs, name=name)
        if self.site is not None:
            ins.where = self.site()
        self._side(ins)
        self.n_effects += 1
        if invalidates:  # later uses read Variables, parameters and gradients again
            self.n_invalidating += 1
            kinds = self.kinds
            self.arr_slot = {k: v for k, v in self.arr_slot.items() if kinds[v] == OP}
            self.grad_arrays = {}
        if self.dry or not self.taken:
            return None
        arrays = [_plain(t._data) if isinstance(t, Tensor) else t for t in tensors]
        with self.suspended():  # the effect's own ops are not part of the program
            return fn(*arrays)

    def _side(self, ins: Instr) -> None:
        ins.when = tuple(self.when)
        self.instrs.append(ins)

    # ------------------------------------------------------------------ control flow
    def _is_tracer(self, t: Any) -> bool:
        return isinstance(t, Tensor) and t.__dict__.get("_lvl") is self

    def _branch(self, fn: Callable[..., Any], operands: Sequence[Any], cond: int,
                polarity: bool, taken: bool) -> tuple[Any, ...]:
        self.when.append((cond, polarity))
        prev = self.taken
        self.taken = prev and taken
        try:
            out = fn(*operands)
        finally:
            self.when.pop()
            self.taken = prev
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    def _select(self, pred: Tensor, a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
        from .. import ops

        if len(a) != len(b):
            self._unsupported("tf.cond branches that return different structures")
            return a if bool(np.asarray(pred._data)) else b
        res: list[Any] = []
        for x, y in zip(a, b):
            if isinstance(x, Tensor) or isinstance(y, Tensor):
                xa, ya = np.asarray(x._data if isinstance(x, Tensor) else x), \
                    np.asarray(y._data if isinstance(y, Tensor) else y)
                if xa.shape != ya.shape or xa.dtype != ya.dtype:
                    self._unsupported("tf.cond branches whose outputs differ in shape or dtype")
                    res.append(x if bool(np.asarray(pred._data)) else y)
                    continue
                res.append(ops.where(pred, x, y))
            elif x is y or x == y:
                res.append(x)
            else:
                self._unsupported("tf.cond branches returning different Python values")
                res.append(x if bool(np.asarray(pred._data)) else y)
        return tuple(res)

    def control_cond(self, pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
                     operands: Sequence[Any]) -> tuple[Any, ...]:
        """``tf.cond`` while tracing: both branches are traced (as TensorFlow does); their
        outputs are selected by the predicate (``where``), so the gradient is the taken
        branch's; their side effects run only when their branch is taken."""
        operands = tuple(operands)
        if not self._is_tracer(pred):
            taken = bool(np.asarray(pred._data if isinstance(pred, Tensor) else pred))
            out = (true_fn if taken else false_fn)(*operands)
            return tuple(out) if isinstance(out, (tuple, list)) else (out,)
        from .. import ops

        p = pred if pred._data.dtype == np.bool_ else ops.cast(pred, dtype=np.bool_)
        ps = self.ref(p)
        taken = bool(np.asarray(p._data))
        a = self._branch(true_fn, operands, ps, True, taken)
        b = self._branch(false_fn, operands, ps, False, not taken)
        return self._select(p, a, b)

    def control_switch_case(self, branch_index: Any, branch_fns: Sequence[Callable[..., Any]],
                            operands: Sequence[Any]) -> tuple[Any, ...]:
        """``tf.switch_case`` while tracing: every branch traced, outputs selected (an index
        out of range runs the last branch, as TensorFlow's default)."""
        operands = tuple(operands)
        fns = list(branch_fns)
        if not self._is_tracer(branch_index):
            i = int(np.asarray(branch_index._data if isinstance(branch_index, Tensor)
                               else branch_index))
            out = fns[i if 0 <= i < len(fns) else -1](*operands)
            return tuple(out) if isinstance(out, (tuple, list)) else (out,)
        from .. import ops

        idx = int(np.asarray(branch_index._data))
        cur = idx if 0 <= idx < len(fns) else len(fns) - 1
        outs = []
        preds = []
        for i, fn in enumerate(fns[:-1]):
            p = ops.equal(branch_index, i)
            preds.append(p)
            outs.append(self._branch(fn, operands, self.ref(p), True, cur == i))
        # the last branch: none of the others
        none = None
        for p in preds:
            q = ops.logical_not(p)
            none = q if none is None else ops.logical_and(none, q)
        if none is None:
            res = self._branch(fns[-1], operands, self.ref(ops.equal(branch_index,
                                                                     branch_index)), True, True)
        else:
            res = self._branch(fns[-1], operands, self.ref(none), True, cur == len(fns) - 1)
        for p, o in zip(reversed(preds), reversed(outs)):
            res = self._select(p, o, res)
        return res

    def control_while_loop(self, cond_fn: Callable[..., Any], body_fn: Callable[..., Any],
                           loop_vars: Sequence[Any], maximum_iterations: Any) -> tuple[Any, ...]:
        """``tf.while_loop`` while tracing: one ``while`` instruction whose condition and
        body are sub-programs, each traced once (as TensorFlow traces them), run by replay
        until the condition is false.  Under a tape that the function itself created the
        loop is unrolled instead (a gradient inside the function through a loop whose
        condition depends on a traced tensor is not one program: that signature runs
        eagerly)."""
        vs = tuple(loop_vars)
        if isinstance(maximum_iterations, Tensor) and \
                maximum_iterations._data.__class__ is _TracedValue:
            self.note_loop_value()  # an enclosing loop's variable, as this loop's bound
        n = None if maximum_iterations is None else int(np.asarray(
            maximum_iterations._data if isinstance(maximum_iterations, Tensor)
            else maximum_iterations))
        st = _STATE
        inner_tape = st.grad_enabled and any(all(t is not o for o in self.outer_tapes)
                                             for t in st.tapes)
        if vs and all(isinstance(v, Tensor) for v in vs):
            return self._traced_loop(cond_fn, body_fn, vs, n, inner_tape)
        return self._unrolled_loop(cond_fn, body_fn, vs, n)

    def _unrolled_loop(self, cond_fn: Callable[..., Any], body_fn: Callable[..., Any],
                       vs: tuple[Any, ...], n: int | None) -> tuple[Any, ...]:
        it = 0
        while n is None or it < n:
            c = cond_fn(*vs)
            if self._is_tracer(c):
                self._unsupported("a gradient inside tf.function through a tf.while_loop "
                                  "whose condition depends on a traced tensor")
            if not bool(np.asarray(c._data if isinstance(c, Tensor) else c)):
                break
            out = body_fn(*vs)
            vs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            it += 1
        return vs

    def _hoist_reads(self, lp: _Loop, region: _Region) -> None:
        """The Variables a pure loop body reads become captures read before the loop (so
        that a tape's gradient reaches them through the loop's node)."""
        moved: dict[int, int] = {}
        for sub in (lp.cond, lp.body):
            keep = []
            for ins in sub:
                if ins.kind == "read" and ins.what == "data" and not ins.when:
                    moved[ins.out] = ins.out
                    self.instrs.append(ins)  # now read by the enclosing program, first
                    region.cap_t[ins.out] = ins.obj
                else:
                    keep.append(ins)
            sub[:] = keep
        if moved:
            lp.caps = sorted(set(lp.caps) | set(moved))

    def _grad_loop(self, lp: _Loop, init: list[int], vs: tuple[Tensor, ...],
                   args: list[Any], orig: list[Any]) -> tuple[Any, ...] | None:
        """The loop under a tape the function made: run now without recording, then each
        float result is one node (inputs: the initial values and captures) whose VJP runs
        the body's VJP backwards over the iterations kept by the forward loop (and is
        recorded as a ``while_grad`` instruction)."""
        from .._core.registry import Op

        n0 = len(vs)
        stack: list[tuple[Any, ...]] = []
        if self.taken:
            with self.suspended():
                final = _run_loop(lp, args, self.consts, (), False, effects=not self.dry,
                                  outer=False, stack=stack)
        else:
            final = list(args[:n0])
        floats = [k for k, t in enumerate(args) if t._data.dtype.kind == "f"]
        fvars = [k for k in floats if k < n0]
        fcaps = [k - n0 for k in floats if k >= n0]
        vjp_prog = self._body_vjp(lp, args, fvars, fcaps)
        if vjp_prog is None:  # the body's VJP is not one program: this signature is eager
            self._unsupported("a tf.while_loop body whose gradient cannot be traced")
            return None
        lp.stack = self._new_slot(OP, stack, 0)
        self.arrs[lp.stack] = stack
        outs: list[Any] = []
        for t in final:
            if t.__dict__.get("_lvl") is not None:
                t = self.lower(t)
            outs.append(t)
        ins = Instr("while", -1, args=init + lp.caps, obj=lp, name="while_loop")
        self._side(ins)
        lv = self
        results: list[Any] = []
        for j, t in enumerate(outs):
            arr = t._data
            if j in fvars:
                grad_op = Op("while_loop", lambda *a, _v=arr: _v, ("*",), "WhileBackward")
                grad_op.vjp = _make_loop_vjp(lv, lp, j, vjp_prog, fvars, fcaps, n0)
                with self.suspended():  # the node's inputs: the tensors the tapes watch
                    t = grad_op._general(tuple(orig), {})
            prev = self.arr_slot.get(id(arr))
            s = self._new_slot(OP, t._data, t._style)
            if prev is not None:
                self.arr_slot[id(arr)] = prev
            lp.outs.append(s)
            results.append(self._mark(t, s))
        ins.out = lp.outs[0] if lp.outs else -1
        return tuple(results)

    def _body_vjp(self, lp: _Loop, args: list[Any], fvars: list[int], fcaps: list[int]
                  ) -> Program | None:
        """A program ``(loop vars, captures, cotangents of the float vars) -> cotangents of
        the float vars and captures`` for one iteration of the body."""
        from .._core.mode import enable_grad
        from . import entry

        n0 = len(lp.params)
        consts = self.consts
        nf = len(fvars)

        def body(*a: Any) -> tuple[Any, ...]:
            ins, cots = list(a[:len(args)]), a[len(args):]
            env: dict[int, Any] = dict(zip(lp.params + lp.caps, ins))
            _interp(lp.body, env, consts)
            outs = [(env[r] if r in env else consts[r]) if r.__class__ is int else r.value
                    for r in lp.body_refs]
            srcs = [ins[k] for k in fvars] + [ins[n0 + k] for k in fcaps]
            pairs = [(outs[k], c) for k, c in zip(fvars, cots)
                     if isinstance(outs[k], Tensor) and (outs[k]._rg or outs[k]._node)]
            if not pairs:
                return tuple(ops_zeros(x) for x in srcs)
            gs = entry.grad([o for o, _ in pairs], srcs, [c for _, c in pairs],
                             create_graph=True, allow_unused=True, materialize_grads=True)
            return tuple(gs[:nf]) + tuple(gs[nf:])

        def build(lv: TraceLevel) -> tuple[Any, Any]:
            new = []
            for x in args:
                t = lv.add_input(make(np.array(x._data, copy=True), None, False, x._style))
                t._rg = x._data.dtype.kind == "f"
                new.append(t)
            for k in fvars:
                a = args[k]
                new.append(lv.add_input(make(np.zeros_like(a._data), None, False, a._style)))
            return tuple(new), {}

        with self.suspended(), enable_grad():
            saved_tapes = _STATE.tapes
            _STATE.tapes = ()  # the function's tapes do not see the body's VJP being traced
            try:
                vp, _, sub = trace_call(body, build, lambda r: (list(r), None),
                                        f"{self.name}_while_vjp")
            finally:
                _STATE.tapes = saved_tapes
        return vp

    def _plain(self, t: Tensor) -> Tensor:
        """``t`` as the loop's interpretation at trace time uses it (not a tracer)."""
        return self.lower(t) if t.__dict__.get("_lvl") is self else t

    def _record_loop(self, cond_fn: Callable[..., Any], body_fn: Callable[..., Any],
                     vals: Sequence[Tensor], n: int | None) -> tuple[_Loop, _Region]:
        """Record the condition and the body once on copies of ``vals`` (a loop with no
        ``body_refs`` could not be recorded); its captures are found, dead code dropped."""
        start = len(self.arrs)
        region = _Region(start)
        lp = _Loop([], start, n)
        saved = (self.instrs, self.when, self.taken)
        # the body is recorded on copies of the initial values; nothing it does (writes,
        # effects) happens now: the loop runs afterwards, from the recorded instructions
        self.instrs, self.when, self.taken = [], [], False
        self.regions.append(region)
        _WATCHING.append(self)
        n_tracers = len(self.tracers)
        try:
            params: list[Tensor] = []
            for v in vals:
                # the loop variables' arrays note any Python value taken from them (or
                # from what is computed from them): such a body is not one program
                t = make(np.array(v._data, copy=True).view(_TracedValue), None, False,
                         v._style)
                sym = v.__dict__.get("_sym_shape")
                if sym is not None:
                    t.__dict__["_sym_shape"] = sym
                s = self._new_slot(PARAM, t._data, v._style)
                lp.params.append(s)
                params.append(self._mark(t, s))
            c = cond_fn(*params)
            self.quiet += 1
            try:
                first = _truth(c)
            finally:
                self.quiet -= 1
            lp.cond_ref = self.ref(c) if isinstance(c, Tensor) else _Lit(np.asarray(bool(c)))
            lp.cond = self.instrs
            self.instrs = []
            try:
                out = body_fn(*params)
            except Exception:
                if first:
                    raise
                # TensorFlow traces the body symbolically; here it ran on values it never
                # takes (the loop does not run now): not one program
                self._unsupported("a tf.while_loop body that fails on its initial values")
                out = None
            if out is not None:
                out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
                if len(out) != len(vals) or not all(isinstance(o, Tensor) for o in out):
                    self._unsupported("a tf.while_loop body that does not return its "
                                      "loop variables as tensors")
                else:
                    lp.body_refs = [self.ref(o) for o in out]
            lp.body = self.instrs
        finally:
            self.instrs, self.when, self.taken = saved
            self.regions.pop()
            _WATCHING.pop()
            end = len(self.arrs)
            # what the recording made is plain again (a tensor the body kept, the slots)
            for k in range(start, end):
                a = self.arrs[k]
                if a.__class__ is _TracedValue:
                    self.arrs[k] = a.view(np.ndarray)
            for tr in self.tracers[n_tracers:]:
                if tr._data.__class__ is _TracedValue:
                    tr._data = tr._data.view(np.ndarray)
            lp.end = end
            self.closed.append((start, end))
            self.arr_slot = {k: v for k, v in self.arr_slot.items() if not start <= v < end}
        if not lp.body_refs:
            return lp, region
        lp.cond = _dce(lp.cond, {lp.cond_ref} if lp.cond_ref.__class__ is int else set())
        lp.body = _dce(lp.body, {r for r in lp.body_refs if r.__class__ is int})
        used: set[int] = set()
        for sub, refs in ((lp.cond, [lp.cond_ref]), (lp.body, lp.body_refs)):
            defined = set(lp.params)
            for ins in sub:
                for x in ins.slots():
                    if start <= x < end and x not in defined and self.kinds[x] != CONST:
                        self._unsupported("a tf.while_loop condition and body sharing a tensor")
                    used.add(x)
                if ins.kind == "while":
                    defined.update(ins.obj.outs)
                elif ins.out >= 0:
                    defined.add(ins.out)
            used.update(r for r in refs if r.__class__ is int)
        lp.caps = sorted(x for x in used if x < start and self.kinds[x] != CONST)
        return lp, region

    def _cap_args(self, lp: _Loop, region: _Region) -> list[Any]:
        out = []
        for x in lp.caps:
            ct = region.cap_t.get(x)
            out.append(self._plain(ct) if ct is not None else make(self.arrs[x], None, False,
                                                                    self.styles[x]))
        return out

    def _traced_loop(self, cond_fn: Callable[..., Any], body_fn: Callable[..., Any],
                     vs: tuple[Tensor, ...], n: int | None, grad: bool = False
                     ) -> tuple[Any, ...]:
        init = [self.ref(v) for v in vs]
        lp, region = self._record_loop(cond_fn, body_fn, vs, n)
        # not recorded, or recorded with a part that is not (an inner loop that ran
        # eagerly on the recording's values): the recording cannot give this call's values
        eager = not lp.body_refs or self.unsupported is not None
        if not eager and region.value_read:
            # the condition or body took a loop variable's value as a Python value (a
            # shape, an index read with int()): recorded once, the program would hold it
            self._unsupported("a tf.while_loop body that reads a loop variable's value "
                              "(an int() or a shape of it)")
            eager = True
        if eager:  # not recorded (unsupported): the loop's values, eagerly
            with self.suspended():
                return tuple(_ctl_eager_loop(cond_fn, body_fn, tuple(self._plain(v)
                                                                     for v in vs), n))
        lp.effects = _has_effects(lp.cond) or _has_effects(lp.body)
        if grad:  # a tape of the function records the loop: it must be differentiable
            if lp.effects:
                self._unsupported("a gradient inside tf.function through a tf.while_loop "
                                  "with side effects in its body")
            else:
                self._hoist_reads(lp, region)
        if any(i.kind == "write_in" for i in lp.cond + lp.body):
            self._unsupported("a tf.while_loop that writes into an input of the function")
        # run the loop now through the ops (an outer tape records every iteration)
        args = [self._plain(v) for v in vs] + self._cap_args(lp, region)
        if grad and not self.unsupported:
            orig = list(vs) + [region.cap_t.get(x, a) for x, a in zip(lp.caps, args[len(vs):])]
            res = self._grad_loop(lp, init, vs, args, orig)
            if res is not None:
                return res
            with self.suspended():
                return tuple(_ctl_eager_loop(cond_fn, body_fn, tuple(self._plain(v)
                                                                     for v in vs), n))
        if self.taken:
            with self.suspended():
                final = _run_loop(lp, args, self.consts, (), False, effects=not self.dry,
                                  outer=_STATE.grad_enabled)
        else:  # inside a tf.cond branch not taken now: the loop does not run
            final = args[:len(vs)]
        outs: list[Any] = []
        for t in final:
            if getattr(t, "_is_variable", False):
                t = _snapshot(t)
            elif t.__dict__.get("_lvl") is not None:
                t = self.lower(t)
            arr = t._data
            prev = self.arr_slot.get(id(arr))
            s = self._new_slot(OP, arr, t._style)
            if prev is not None:
                self.arr_slot[id(arr)] = prev
            if arr.__class__ is np.ndarray:  # a value taken from it is noted
                t._data = self.arrs[s] = arr.view(_TracedValue)
                self.arr_slot[id(t._data)] = s
            lp.outs.append(s)
            outs.append(self._mark(t, s))
        ins = Instr("while", lp.outs[0] if lp.outs else -1, args=init + lp.caps, obj=lp,
                    name="while_loop")
        # inside traced tf.cond branches the loop runs only when its branch is taken (its
        # results are then the initial values, which the branches' select discards)
        self._side(ins)
        return tuple(outs)

    def source(self, fn: Callable[[], Tensor], name: str) -> Tensor:
        """A tensor that ``fn()`` makes anew on every call (random numbers): its value now,
        and an instruction that calls ``fn`` at replay (so the generator advances as in
        eager code)."""
        with self.suspended():
            t = fn()
        if isinstance(t._data, np.ndarray):
            t._data = t._data.view(_TracedValue)  # a new value at every call
        s = self._new_slot(READ, t._data, t._style)
        ins = Instr("source", s, fn=fn, name=name)
        self._shape(ins, t._data)
        self.instrs.append(ins)
        return self._mark(t, s)

    def note_break(self, what: str) -> None:
        """Something that cannot be part of a program happened (random numbers drawn into
        raw arrays, a closure-driven optimizer): the function is not one program."""
        self.breaks.append((what, _user_frame()))

    def suspended(self) -> _Suspend:
        """A context in which nothing is traced (the code runs as at replay)."""
        return _Suspend(self)

    def var_created(self, v: Any) -> None:
        if self.on_create is not None:
            self.on_create(v)
        self.created.append(v)

    # ------------------------------------------------------------------ the end
    def finish(self, outputs: Sequence[Any]) -> Program:
        """The program that returns ``outputs`` (tensors or Python values)."""
        out_refs: list[Any] = []
        graph: list[bool] = []
        freed: list[bool] = []
        for o in outputs:
            if isinstance(o, Tensor):
                out_refs.append(self.ref(o))
                # an output that requires grad (PyTorch style) keeps a graph at replay; one a
                # tape recorded inside the function does not (that tape is gone)
                n = o._node
                graph.append(bool(o._rg))
                freed.append(n is not None and n.saved is FREED)
            else:
                out_refs.append(_Lit(o))
                graph.append(False)
                freed.append(False)
        self._unmark_slots()
        prog = Program(self, out_refs, graph, freed)
        self.release()
        return prog

    def let_go(self) -> None:
        """The trace is over: drop its values (every slot's trace-time array, the undo
        log).  A front-end keeps its last level for what it says (variables created,
        breaks); held, these arrays kept a Variable's array shared, so the first replay's
        optimizer step copied every parameter instead of updating it in place."""
        self.arrs = []
        self.instrs = []
        self.arr_slot = {}
        self.unmarked = {}
        self._orig = {}
        self.consts = {}
        self.grad_arrays = {}
        self.undo = []
        self.tracers = []
        self.regions = []

    def _unmark_slots(self) -> None:
        """The slots' arrays as the kernels made them (the trace is over)."""
        arrs = self.arrs
        unmarked = self.unmarked
        for k, a in enumerate(arrs):
            if a.__class__ is _TracedValue:
                o = unmarked.get(k)
                if o is None:
                    o = a.view(np.ndarray)
                self._orig[id(a)] = o
                arrs[k] = o

    def release(self) -> None:
        """Turn every tracer back into a plain tensor (the trace is over)."""
        self._unmark_slots()
        orig = self._orig
        keep = self.leak_keep
        text = self.leak_text
        back = {v: k for k, v in self.tracer_classes.items()} if self.tracer_classes else None
        for t in self.tracers:
            d = t.__dict__
            if keep is not None and id(t) not in keep and "_slot" in d:
                d["_leaked"] = text(self, t) if text is not None else ""
            elif back is not None:
                c = back.get(t.__class__)
                if c is not None:
                    t.__class__ = c
            d.pop("_lvl", None)
            d.pop("_slot", None)
            a = t._data
            if a.__class__ is _TracedValue:
                o = orig.get(id(a))
                t._data = o if o is not None else a.view(np.ndarray)
        self.tracers = []


def _snapshot(obj: Any) -> Any:
    """A state's value now, sharing its gradient accumulator (a Variable's read)."""
    from .._core.registry import get_acc

    if getattr(obj, "_is_variable", False) or (obj._rg and obj._node is None):
        snap = make(obj._data, None, obj._rg, obj._style)
        if obj._data.dtype.kind in "fc":
            snap._acc = obj._acc or get_acc(obj)
        snap._tv = obj._tv
        snap._vc = obj._vc
        return snap
    return obj


class _Suspend:
    def __init__(self, lv: TraceLevel) -> None:
        self.lv = lv
        self.saved: list[Any] = []

    def __enter__(self) -> None:
        self.saved = _STATE.levels
        _STATE.levels = []
        _WATCHING.append(None)

    def __exit__(self, *exc: object) -> None:
        _STATE.levels = self.saved
        _WATCHING.pop()


# ---------------------------------------------------------------------------- replay
def _winp(obj: Any, val: Any) -> None:
    if obj._data.flags.writeable:
        np.copyto(obj._data, val, casting="unsafe")
    else:
        obj._data = np.asarray(val).astype(obj._data.dtype)
    obj._vc[0] += 1


def _winput(arr: np.ndarray, val: Any) -> None:
    np.copyto(arr, val, casting="unsafe")


def _sgrad(obj: Any, val: Any) -> None:
    obj._grad = make(np.array(val, dtype=obj._data.dtype, copy=True), None, False, obj._style)


def _sgrad_own(obj: Any, val: Any) -> None:
    obj._grad = make(val, None, False, obj._style)


def _sgrad_alias(obj: Any, val: Any, style: int) -> None:
    obj._grad = make(np.asarray(val), None, False, style)


def _agrad(obj: Any, val: Any) -> None:
    g = obj._grad
    np.copyto(g._data, val, casting="unsafe")
    g._vc[0] += 1


class Program:
    """A recorded function: instructions, constants, guards, and its compiled replay."""

    def __init__(self, lv: TraceLevel, out_refs: list[Any], graph: list[bool],
                 freed: list[bool]) -> None:
        self.name = lv.name
        self.kinds = lv.kinds
        self.styles = lv.styles
        self.inputs = list(lv.inputs)
        self.input_names = [lv.names[s] for s in lv.inputs]
        self.outputs = out_refs
        self.out_graph = graph
        self.out_freed = freed
        self.folded = list(lv.folded)
        self.breaks = list(lv.breaks)
        self.unsupported = lv.unsupported
        self.created = list(lv.created)
        self.n_traced = len(lv.instrs)
        arrs = lv.arrs
        # constants written in place by the function are reads of it (at the start)
        head: list[Instr] = []
        self.const_vals: dict[int, Any] = {}
        self.const_t: dict[int, Tensor] = {}
        self.vc_guards: list[tuple[Tensor, int]] = []
        for s, t in lv.consts.items():
            if id(t) in lv.written:
                self.kinds[s] = READ
                ins = Instr("read", s, obj=t, what="data", name="read data")
                TraceLevel._shape(ins, arrs[s])
                head.append(ins)
            else:
                self.const_vals[s] = arrs[s]
                self.const_t[s] = t
                self.vc_guards.append((t, t._vc[0]))
        self.grad_guards = list(lv.grad_guards)
        instrs = head + lv.instrs
        # dead instructions: neither an output nor a side effect needs them
        needed = {r for r in out_refs if r.__class__ is int}
        self.dropped: list[Instr] = []
        self.instrs = _dce(instrs, needed, self.dropped)
        self.dropped.reverse()
        _loop_slots(self.instrs, needed)  # the constants the loops' bodies use
        self.used_consts = {s for s in needed if self.kinds[s] == CONST}
        self.vc_guards = [(t, v) for (t, v) in self.vc_guards
                          if any(self.const_t.get(s) is t for s in self.used_consts)]
        # an op kept (an output or a side effect needs it) that failed while tracing with
        # an error the front-end deferred: the call fails (TensorFlow's run-time error)
        self.failed: tuple[BaseException, Instr] | None = None
        if lv.deferred:
            for ins in self.instrs:
                if ins.kind == "op" and ins.out in lv.deferred:
                    self.failed = (lv.deferred[ins.out], ins)
                    break
        self.in_shapes = [np.shape(arrs[s]) for s in self.inputs]
        self.in_dtypes = [np.asarray(arrs[s]).dtype for s in self.inputs]
        self.src, self._globals = self._codegen(arrs)
        code = compile(self.src, f"<tapegrad program {self.name}>", "exec")
        exec(code, self._globals)
        self._code = code
        self.run: Callable[..., Any] = self._globals["_replay"]
        self.calls = 0
        self.needs_graph = any(g and not f for g, f in zip(graph, freed))
        # the backward's kernels ran under np.errstate(all="ignore") while tracing
        self.quiet = any(i.bwd for i in self.instrs if i.kind == "op")

    # ------------------------------------------------------------------ code generation
    def _codegen(self, arrs: list[Any]) -> tuple[str, dict[str, Any]]:
        g: dict[str, Any] = {"_winp": _winp, "_winput": _winput, "_sgrad": _sgrad,
                             "_sgrad_own": _sgrad_own, "_sgrad_alias": _sgrad_alias,
                             "_agrad": _agrad, "_np": np, "_while": _while}
        extra: list[str] = []
        src = self._gen(arrs, g, extra, self.instrs, self.inputs, self.outputs, "_replay", "",
                        True)
        return "".join(extra) + src, g

    def _gen(self, arrs: list[Any], g: dict[str, Any], extra: list[str],
             instrs: list[Instr], params: list[int], outputs: list[Any], fname_: str,
             prefix: str, reuse: bool) -> str:
        """The source of one function ``fname_(*params) -> outputs`` running ``instrs``; the
        loops among them become functions too (appended to ``extra``).  ``reuse``: let
        elementwise kernels write into dead intermediates (not inside a loop's body)."""
        names: dict[int, str] = {}
        nlit = [0]

        def lit(v: Any) -> str:
            if v is None or v.__class__ in (bool, int) or (v.__class__ is float and np.isfinite(v)):
                return repr(v)
            k = f"{prefix}L{nlit[0]}"
            nlit[0] += 1
            g[k] = v
            return k

        def name(r: Any) -> str:
            if r.__class__ is not int:
                return lit(r.value)
            n = names.get(r)
            if n is None:
                if self.kinds[r] == CONST:
                    n = f"c{r}"
                    g[n] = self.const_vals[r]
                else:
                    n = f"v{r}"
                names[r] = n
            return n

        # last use of each slot; escaping slots (outputs, side effects) are never reused
        last: dict[int, int] = {}
        escaped: set[int] = set()
        for i, ins in enumerate(instrs):
            for s in ins.slots():
                last[s] = i
            if ins.kind not in _VALUE_KINDS:
                escaped.update(ins.slots())
        for r in outputs:
            if r.__class__ is int:
                last[r] = len(instrs)
                escaped.add(r)
        # buffers another value can see (views of them) are never written into
        aliased: set[int] = set()
        for ins in instrs:
            if ins.kind == "op":
                a = arrs[ins.out]
                if isinstance(a, np.ndarray) and a.base is not None:
                    b = a
                    while isinstance(b, np.ndarray) and b.base is not None:
                        b = b.base
                    aliased.add(id(b))
                    for s in ins.slots():
                        aliased.add(id(arrs[s]))
        # an array that is the value of two slots (identity returns its input's array; an
        # op may return an input, a read or a constant as it is) is not owned either
        seen: dict[int, int] = {}
        for a in arrs:
            if isinstance(a, np.ndarray):
                seen[id(a)] = seen.get(id(a), 0) + 1
        owned = set()
        for ins in instrs if reuse else ():
            if ins.kind == "op":
                a = arrs[ins.out]
                if isinstance(a, np.ndarray) and a.base is None and a.flags.writeable \
                        and a.ndim > 0 and id(a) not in aliased and seen.get(id(a)) == 1:
                    owned.add(ins.out)
        lines = [f"def {fname_}(" + ", ".join(f"v{s}" for s in params) + "):"]
        for s in params:
            names[s] = f"v{s}"
        nobj = [0]
        objs: dict[int, str] = {}

        def objname(o: Any) -> str:
            k = objs.get(id(o))
            if k is None:
                k = f"{prefix}o{nobj[0]}"
                nobj[0] += 1
                objs[id(o)] = k
                g[k] = o
            return k

        nfn = [0]
        for i, ins in enumerate(instrs):
            k = ins.kind
            if k == "op":
                args = [name(a) for a in ins.args]
                uf = _UFUNCS.get(ins.op.name) if not ins.attrs else None
                if uf is not None and not isinstance(arrs[ins.out], np.ndarray):
                    pass
                if uf is not None:
                    fname = f"u_{ins.op.name}"
                    g[fname] = uf
                    target = None
                    if isinstance(arrs[ins.out], np.ndarray) and arrs[ins.out].ndim > 0:
                        outa = arrs[ins.out]
                        for a in ins.args:
                            if a.__class__ is int and a in owned and last.get(a) == i \
                                    and a not in escaped:
                                ia = arrs[a]
                                if ia.shape == outa.shape and ia.dtype == outa.dtype:
                                    target = a
                                    break
                    sym = _OPERATORS.get(ins.op.name)
                    if target is not None:
                        lines.append(f"    {name(ins.out)} = {fname}({', '.join(args)}, "
                                     f"out={name(target)})")
                    elif sym is not None and len(args) == 2:
                        # the same ufunc; NumPy scalars take their fast scalar path
                        lines.append(f"    {name(ins.out)} = {args[0]} {sym} {args[1]}")
                    elif sym is not None:
                        lines.append(f"    {name(ins.out)} = {sym}{args[0]}")
                    else:
                        lines.append(f"    {name(ins.out)} = {fname}({', '.join(args)})")
                else:
                    fname = f"{prefix}f{nfn[0]}"
                    nfn[0] += 1
                    fwd = ins.op.fwd
                    if ins.attrs:
                        import functools

                        g[fname] = functools.partial(fwd, **ins.attrs)
                    else:
                        g[fname] = fwd
                    call = f"{fname}({', '.join(args)})"
                    if not isinstance(arrs[ins.out], (np.ndarray, np.generic)):
                        call = f"_np.asarray({call})"
                    lines.append(f"    {name(ins.out)} = {call}")
            elif k == "read":
                attr = "_data" if ins.what == "data" else "_grad._data"
                lines.append(f"    {name(ins.out)} = {objname(ins.obj)}.{attr}")
            elif k == "write_inplace":
                lines.append(f"    _winp({objname(ins.obj)}, {name(ins.args[0])})")
            elif k == "write_in":
                lines.append(f"    _winput(v{self.inputs[ins.obj]}, {name(ins.args[0])})")
            elif k == "write_var":
                lines.append(f"    {objname(ins.obj)}._set({name(ins.args[0])}, False)")
            elif k == "setgrad":
                a = ins.args[0]
                if a.__class__ is not int:
                    lines.append(f"    {objname(ins.obj)}._grad = None")
                elif a in owned and last.get(a) == i and sum(
                        1 for j in instrs if a in j.slots()) == 1 and \
                        a not in {r for r in outputs if r.__class__ is int} and \
                        arrs[a].dtype == ins.obj._data.dtype:
                    lines.append(f"    _sgrad_own({objname(ins.obj)}, {name(a)})")
                else:
                    lines.append(f"    _sgrad({objname(ins.obj)}, {name(a)})")
            elif k == "setgrad_alias":
                lines.append(f"    _sgrad_alias({objname(ins.obj)}, {name(ins.args[0])}, "
                             f"{self.styles[ins.args[0]]})")
            elif k == "addgrad":
                lines.append(f"    _agrad({objname(ins.obj)}, {name(ins.args[0])})")
            elif k == "source":
                fname = f"{prefix}s{nfn[0]}"
                nfn[0] += 1
                g[fname] = ins.fn
                lines.append(f"    {name(ins.out)} = {fname}()._data")
            elif k == "while":
                lp = ins.obj
                wname = f"{prefix}w{nfn[0]}"
                nfn[0] += 1
                inner = lp.params + lp.caps
                extra.append(self._gen(arrs, g, extra, lp.cond, inner, [lp.cond_ref],
                                       f"{wname}_cond", f"{wname}c_", False))
                extra.append(self._gen(arrs, g, extra, lp.body, inner, lp.body_refs,
                                       f"{wname}_body", f"{wname}b_", False))
                n0 = len(lp.params)
                init = "".join(name(a) + ", " for a in ins.args[:n0])
                caps = "".join(name(a) + ", " for a in ins.args[n0:])
                outs_ = "".join(name(o) + ", " for o in lp.outs)
                fn_ = "_while"
                if lp.stack >= 0 and lp.stack in last:
                    fn_ = "_while_acc"
                    g["_while_acc"] = _while_acc
                    outs_ += name(lp.stack) + ", "
                call = (f"({outs_}) = {fn_}({wname}_cond, {wname}_body, ({init}), ({caps}), "
                        f"{lp.max_iter!r})")
                if ins.when:
                    test = " and ".join(name(w) if pol else f"not {name(w)}"
                                        for w, pol in ins.when)
                    lines.append(f"    if {test}:\n        {call}\n    else:\n"
                                 f"        ({outs_}) = ({init})")
                else:
                    lines.append(f"    {call}")
            elif k == "while_grad":
                wg = ins.obj
                wn = f"{prefix}g{nfn[0]}"
                nfn[0] += 1
                g[wn] = wg
                g["_while_grad"] = _while_grad
                n0 = len(wg.loop.params)
                a_ = [name(x) for x in ins.args]
                fin = "".join(x + ", " for x in a_[2:2 + n0])
                cps = "".join(x + ", " for x in a_[2 + n0:])
                outs_ = "".join(name(o) + ", " for o in wg.outs)
                lines.append(f"    ({outs_}) = _while_grad({wn}, {a_[0]}, {a_[1]}, ({fin}), "
                             f"({cps}))")
            elif k == "effect":
                fname = f"{prefix}e{nfn[0]}"
                nfn[0] += 1
                g[fname] = ins.fn
                lines.append(f"    {fname}({', '.join(name(a) for a in ins.args)})")
            if ins.when and k != "while" and len(lines) > 1 and lines[-1] is not lines[0]:
                test = " and ".join(name(w) if pol else f"not {name(w)}" for w, pol in ins.when)
                lines[-1] = f"    if {test}:\n    " + lines[-1]
            dead = [s for s in ins.slots() if last.get(s) == i and self.kinds[s] != CONST
                    and s not in params]
            if ins.kind in _VALUE_KINDS and ins.out not in last:
                dead.append(ins.out)
            if dead:
                lines.append("    del " + ", ".join(sorted({names[s] for s in dead if s in
                                                              names})))
        outs = [name(r) for r in outputs]
        lines.append("    return (" + "".join(o + ", " for o in outs) + ")")
        # a del of a name never bound (an unused read) would fail: filter empty dels
        src = "\n".join(line for line in lines if line.strip() != "del")
        return src + "\n"

    def rebind(self, mapping: dict[int, Any]) -> Program | None:
        """This program with the state objects (Variables) ``mapping`` names by id replaced
        by others of the same shape and dtype (``tf.function`` called with another
        Variable of a traced spec); ``None`` when that is not plain (opaque effects or a
        loop gradient may hold the objects)."""
        import copy

        def instrs(xs: list[Instr]) -> list[Instr] | None:
            out: list[Instr] = []
            for ins in xs:
                if ins.kind in ("effect", "while_grad", "source") or ins.when:
                    return None
                if ins.kind == "while":
                    lp = copy.copy(ins.obj)
                    c, b = instrs(lp.cond), instrs(lp.body)
                    if c is None or b is None or lp.stack >= 0:
                        return None
                    lp.cond, lp.body = c, b
                    ins = copy.copy(ins)
                    ins.obj = lp
                elif ins.obj is not None and id(ins.obj) in mapping:
                    new = mapping[id(ins.obj)]
                    if new._data.shape != ins.obj._data.shape or \
                            new._data.dtype != ins.obj._data.dtype:
                        return None
                    ins = copy.copy(ins)
                    ins.obj = new
                out.append(ins)
            return out

        if self.grad_guards or self.failed is not None:
            return None
        new_instrs = instrs(self.instrs)
        if new_instrs is None:
            return None
        p = copy.copy(self)
        p.__dict__ = {k: v for k, v in self.__dict__.items() if not k.startswith("_node_op")
                      and k not in ("_vjp_prog", "_pure1")}
        p.instrs = new_instrs
        p._globals = {k: mapping.get(id(v), v) for k, v in self._globals.items()}
        exec(self._code, p._globals)
        p.run = p._globals["_replay"]
        p.calls = 0
        return p

    # ------------------------------------------------------------------ running it
    def check(self) -> str | None:
        """Why this program cannot replay now (a guard failed), or ``None``."""
        for t, v in self.vc_guards:
            if t._vc[0] != v:
                return "a tensor the function captured was modified in place"
        for p, has in self.grad_guards:
            if (p._grad is not None) != has:
                return ".grad of a parameter the function used " + (
                    "is None now" if has else "exists now")
        return None

    def replay(self, arrays: Sequence[Any]) -> tuple[Any, ...]:
        """Run the compiled program on input arrays; returns the output values."""
        self.calls += 1
        return self.run(*arrays)

    def wrap(self, values: Sequence[Any]) -> list[Any]:
        """Output values as tensors of the styles the traced function returned."""
        res: list[Any] = []
        for r, v in zip(self.outputs, values):
            if r.__class__ is int:
                kind = self.kinds[r]
                arr = v if v.__class__ is np.ndarray else np.asarray(v)
                if kind in (CONST, READ):
                    arr = arr.copy()
                res.append(make(arr, None, False, self.styles[r]))
            else:
                res.append(v)
        return res

    def __call__(self, arrays: Sequence[Any]) -> list[Any]:
        return self.wrap(self.replay(arrays))

    def run_tensors(self, inputs: Sequence[Tensor], reads: Sequence[Tensor] | None = None,
                    record_backward: bool = False) -> list[Any]:
        """Replay through the ops on tensors, so that reverse mode records every op.

        ``record_backward``: also record the ops of a backward pass the function ran (a
        gradient computed inside ``tf.function`` is differentiable by an outer tape, as
        TensorFlow's graph gradients are; eager code records them under an outer tape too).
        ``reads``: tensors to use for the program's reads, in order (the VJP of a
        replayed call differentiates with respect to them)."""
        env: dict[int, Any] = dict(zip(self.inputs, inputs))
        read_iter = iter(reads) if reads is not None else None
        _interp(self.instrs, env, self.const_t, inputs, read_iter, record_backward)
        env.update(self.const_t)
        self.calls += 1
        res: list[Any] = []
        for r in self.outputs:
            if r.__class__ is int:
                t = env[r]
                if self.kinds[r] == CONST:
                    t = make(t._data.copy(), None, False, self.styles[r])
                res.append(t)
            else:
                res.append(r.value)
        return res

    # ------------------------------------------------------------------ seeing it
    def source(self) -> str:
        """The generated Python source of the replay."""
        return self.src

    def ops(self) -> list[Instr]:
        """The kept instructions, in order."""
        return list(self.instrs)

    def slot_kind(self, s: int) -> str:
        return _KIND_NAMES[self.kinds[s]]

    def __repr__(self) -> str:
        n_op = sum(1 for i in self.instrs if i.kind == "op")
        return (f"<tapegrad Program {self.name}: {len(self.inputs)} inputs, {n_op} ops, "
                f"{len(self.folded)} folded, {len(self.dropped)} dropped>")


def _ctl_eager_loop(cond_fn: Callable[..., Any], body_fn: Callable[..., Any],
                    vs: tuple[Any, ...], n: int | None) -> tuple[Any, ...]:
    it = 0
    while n is None or it < n:
        if not _truth(cond_fn(*vs)):
            break
        out = body_fn(*vs)
        vs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        it += 1
    return vs


# ---------------------------------------------------------------------------- interpreting
def _interp(instrs: Sequence[Instr], env: dict[int, Any], consts: dict[int, Any],
            inputs: Sequence[Tensor] = (), read_iter: Any = None, record_backward: bool = False,
            effects: bool = True, outer: bool | None = None) -> None:
    """Run ``instrs`` through the ops on tensors (``env``: slot -> tensor, filled in), so
    that reverse mode records every op (a loop runs its body once per iteration, as eager
    code: the tape keeps each iteration's values, as TensorFlow's loop accumulators do).
    ``effects=False``: opaque effects (``tf.print``, ...) are skipped (a dry trace)."""
    from .._core.registry import get_acc

    state = _STATE
    prev = state.grad_enabled
    if outer is None:
        outer = prev

    def val(a: Any) -> Any:
        if a.__class__ is int:
            v = env.get(a)
            return consts[a] if v is None else v
        return a.value

    try:
        for ins in instrs:
            k = ins.kind
            if ins.when and not all(bool(np.asarray(val(w)._data)) == pol
                                    for w, pol in ins.when):
                if k == "while":  # a loop in a branch not taken: its initial values
                    lp = ins.obj
                    env.update(zip(lp.outs, [val(a) for a in ins.args[:len(lp.params)]]))
                continue
            if k == "op":
                state.grad_enabled = outer and (ins.gm or (record_backward and ins.bwd))
                env[ins.out] = ins.op(*[val(a) for a in ins.args], **ins.attrs)
            elif k == "read" and read_iter is not None:
                env[ins.out] = next(read_iter)
            elif k == "read":
                obj = ins.obj
                if ins.what == "grad":
                    g = obj._grad
                    env[ins.out] = make(g._data, None, False, g._style)
                elif getattr(obj, "_is_variable", False) or (obj._rg and obj._node is None):
                    # _snapshot, inlined: this loop runs every instruction of every replay
                    snap = make(obj._data, None, obj._rg, obj._style)
                    if obj._data.dtype.kind in "fc":
                        snap._acc = obj._acc or get_acc(obj)
                    snap._tv = obj._tv
                    snap._vc = obj._vc
                    env[ins.out] = snap
                else:
                    env[ins.out] = obj
            elif k == "while":
                state.grad_enabled = outer
                lp = ins.obj
                stack: list[Any] | None = [] if lp.stack >= 0 else None
                outs = _run_loop(lp, [val(a) for a in ins.args], consts, inputs,
                                 record_backward, effects, outer, stack)
                env.update(zip(lp.outs, outs))
                if stack is not None:
                    env[lp.stack] = stack
            elif k == "while_grad":
                wg = ins.obj
                a = [val(x) for x in ins.args]
                n0 = len(wg.loop.params)
                state.grad_enabled = outer
                res = wg.run_tensors(a[0], a[1], a[2:2 + n0], a[2 + n0:])
                env.update(zip(wg.outs, res))
            elif k == "source":
                env[ins.out] = ins.fn()
            elif k == "write_inplace":
                _winp(ins.obj, val(ins.args[0])._data)
            elif k == "write_in":
                _winput(inputs[ins.obj]._data, val(ins.args[0])._data)
            elif k == "write_var":
                ins.obj._set(val(ins.args[0])._data, False)
            elif k == "setgrad":
                a = ins.args[0]
                if a.__class__ is not int:
                    ins.obj._grad = None
                else:
                    _sgrad(ins.obj, val(a)._data)
            elif k == "setgrad_alias":
                ins.obj._grad = val(ins.args[0])
            elif k == "addgrad":
                _agrad(ins.obj, val(ins.args[0])._data)
            elif k == "effect" and effects:
                ins.fn(*[v._data if isinstance(v, Tensor) else v
                         for v in (val(a) for a in ins.args)])
    finally:
        state.grad_enabled = prev


def _truth(c: Any) -> bool:
    return bool(np.asarray(c._data if isinstance(c, Tensor) else c))


def _run_loop(lp: _Loop, args: Sequence[Any], consts: dict[int, Any],
              inputs: Sequence[Tensor], record_backward: bool, effects: bool,
              outer: bool, stack: list[Any] | None = None) -> list[Any]:
    """A traced loop run through the ops (:func:`_interp`): the final loop variables."""
    n0 = len(lp.params)
    vs = list(args[:n0])
    base = dict(zip(lp.caps, args[n0:]))
    it = 0
    while lp.max_iter is None or it < lp.max_iter:
        env = dict(base)
        env.update(zip(lp.params, vs))
        _interp(lp.cond, env, consts, inputs, None, record_backward, effects, outer)
        r = lp.cond_ref
        c = (env.get(r) if r in env else consts[r]) if r.__class__ is int else r.value
        if not _truth(c):
            break
        if stack is not None:
            stack.append(tuple(vs))
        _interp(lp.body, env, consts, inputs, None, record_backward, effects, outer)
        vs = [(env[r] if r in env else consts[r]) if r.__class__ is int else r.value
              for r in lp.body_refs]
        it += 1
    # a loop variable that comes out as it went in (no iteration, or a body returning a
    # value of the enclosing program) is the identity of it, for reverse mode
    from .. import ops

    return [ops.identity(v) if isinstance(v, Tensor) and any(v is a for a in args) else v
            for v in vs]


def _while_acc(cond: Callable[..., Any], body: Callable[..., Any], vs: tuple[Any, ...],
               caps: tuple[Any, ...], n: int | None) -> tuple[Any, ...]:
    """:func:`_while` that also returns the loop variables of every iteration."""
    it = 0
    stack: list[Any] = []
    while n is None or it < n:
        if not cond(*vs, *caps)[0]:
            break
        stack.append(vs)
        vs = body(*vs, *caps)
        it += 1
    return (*vs, stack)


def _while_grad(wg: _LoopGrad, g: Any, stack: list[Any], finals: tuple[Any, ...],
                caps: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(wg.run(g, stack, finals, caps))


def ops_zeros(x: Tensor) -> Tensor:
    from .. import ops

    return ops.multiply(x, 0.0) if x._data.dtype.kind in "fc" else x


def _make_loop_vjp(lv: TraceLevel, lp: _Loop, j: int, vjp_prog: Program, fvars: list[int],
                   fcaps: list[int], n0: int) -> Callable[..., tuple[Any, ...]]:
    """The VJP of loop output ``j`` (a node made while tracing): the reverse loop now, on
    the trace's values, and a ``while_grad`` instruction that runs it at replay."""
    wg = _LoopGrad(lp, j, vjp_prog, fvars, fcaps)

    def vjp(g: Tensor, *xs: Any) -> tuple[Any, ...]:
        stack = [tuple(np.asarray(v._data) for v in vs) for vs in lv.arrs[lp.stack]]
        finals = [lv.arrs[o] for o in lp.outs]
        caps = [x._data for x in xs[n0:]]
        res = wg.run(g._data, stack, finals, caps)
        gs = lv.ref(g)
        ins = Instr("while_grad", -1, args=(gs, lp.stack, *lp.outs, *lp.caps), obj=wg,
                    name="while_loop_grad")
        out: list[Any] = [None] * len(xs)
        for k, r in zip(list(fvars) + [n0 + c for c in fcaps], res):
            t = make(np.asarray(r, dtype=xs[k]._data.dtype), None, False, g._style)
            s = lv._new_slot(OP, t._data, t._style)
            wg.outs.append(s)
            out[k] = lv._mark(t, s)
        ins.out = wg.outs[0] if wg.outs else -1
        lv._side(ins)
        return tuple(out)

    return vjp


def _while(cond: Callable[..., Any], body: Callable[..., Any], vs: tuple[Any, ...],
           caps: tuple[Any, ...], n: int | None) -> tuple[Any, ...]:
    """A traced loop at replay: ``cond``/``body`` are the compiled sub-programs."""
    it = 0
    while n is None or it < n:
        if not cond(*vs, *caps)[0]:
            break
        vs = body(*vs, *caps)
        it += 1
    return vs


# ---------------------------------------------------------------------------- comparing
def _same_value(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=True)))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(
            _same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, (bool, int, float, complex, str, bytes, type(None), np.generic, np.dtype,
                      slice, type)) and type(a) is type(b):
        try:
            return bool(a == b)
        except Exception:  # noqa: BLE001 - incomparable: not the same
            return False
    if callable(a) and callable(b):
        return _same_fn(a, b)
    if type(a) is type(b):  # a small value object (an index spec's slot): by its fields
        slots = getattr(type(a), "__slots__", None)
        if isinstance(slots, tuple) and slots and not hasattr(a, "__dict__"):
            return all(_same_value(getattr(a, k, None), getattr(b, k, None)) for k in slots)
    return False


def _same_fn(f: Any, g: Any) -> bool:
    """Two closures made by the same code over the same values (``tf.print``'s effect,
    a random source): the same instruction in two traces."""
    if f is g:
        return True
    import functools

    if isinstance(f, functools.partial) and isinstance(g, functools.partial):
        return _same_fn(f.func, g.func) and _same_value(f.args, g.args) and \
            _same_value(f.keywords, g.keywords)
    cf, cg = getattr(f, "__code__", None), getattr(g, "__code__", None)
    if cf is None or cf is not cg:
        return False
    a, b = f.__closure__ or (), g.__closure__ or ()
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        try:
            vx, vy = x.cell_contents, y.cell_contents
        except ValueError:
            return False
        if not _same_value(vx, vy):
            return False
    return _same_value(getattr(f, "__self__", None), getattr(g, "__self__", None))


def _same_instrs(p: Program, q: Program, a: Sequence[Instr], b: Sequence[Instr]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.kind != y.kind or x.op is not y.op or x.out != y.out or x.what != y.what \
                or x.obj is not y.obj and x.kind != "while" or x.when != y.when \
                or x.gm != y.gm or x.bwd != y.bwd or len(x.args) != len(y.args):
            return False
        for r, t in zip(x.args, y.args):
            if r.__class__ is int or t.__class__ is int:
                if r != t:
                    return False
            elif not _same_value(r.value, t.value):
                return False
        if not _same_value(x.attrs, y.attrs):
            return False
        if x.fn is not None or y.fn is not None:
            if not _same_fn(x.fn, y.fn):
                return False
        if x.kind == "while":
            lx, ly = x.obj, y.obj
            if (lx.params, lx.caps, lx.outs, lx.max_iter) != (ly.params, ly.caps, ly.outs,
                                                              ly.max_iter):
                return False
            refs = [lx.cond_ref, *lx.body_refs], [ly.cond_ref, *ly.body_refs]
            for r, t in zip(*refs):
                if (r.__class__ is int) != (t.__class__ is int) or (
                        r.__class__ is int and r != t) or (
                        r.__class__ is not int and not _same_value(r.value, t.value)):
                    return False
            if not (_same_instrs(p, q, lx.cond, ly.cond) and _same_instrs(p, q, lx.body,
                                                                            ly.body)):
                return False
    return True


def same_program(p: Program, q: Program) -> bool:
    """Whether two traces of one function (at different input shapes) recorded the same
    program: the same instructions, attributes, literals and constants.  Then nothing in
    it depends on those shapes (a shape baked in would differ), and it runs any shape."""
    if len(p.inputs) != len(q.inputs) or p.inputs != q.inputs or p.kinds != q.kinds:
        return False
    if len(p.outputs) != len(q.outputs):
        return False
    for r, t in zip(p.outputs, q.outputs):
        if (r.__class__ is int) != (t.__class__ is int):
            return False
        if r.__class__ is int:
            if r != t:
                return False
        elif not _same_value(r.value, t.value):
            return False
    if p.used_consts != q.used_consts or any(
            not _same_value(np.asarray(p.const_vals[s]), np.asarray(q.const_vals[s]))
            for s in p.used_consts):
        return False
    return _same_instrs(p, q, p.instrs, q.instrs)


def trace_call(fn: Callable[..., Any], build_args: Callable[[TraceLevel], tuple[Any, Any]],
               flatten_out: Callable[[Any], tuple[list[Any], Any]], name: str = "f",
               dry: bool = False, on_read: Callable[[Tensor, str], None] | None = None,
               on_create: Callable[[Any], None] | None = None,
               on_show: Callable[[TraceLevel, Tensor], str | None] | None = None,
               ) -> tuple[Program | None, Any, TraceLevel]:
    """Trace ``fn``: ``build_args(level)`` makes its ``(args, kwargs)`` with input tracers.

    Runs ``fn`` once on the concrete values (a dry trace undoes its writes to
    Variables, parameters and gradients, and runs no effect).  Returns
    ``(program, result, level)``; ``program`` is ``None`` when the trace could
    not become one program (``level.unsupported`` or ``level.breaks`` say why).
    The result's tracers are plain tensors again.
    """
    lv = TraceLevel(name, dry=dry, on_read=on_read, on_create=on_create)
    lv.on_show = on_show
    args, kwargs = build_args(lv)
    flat: list[Any] = []
    _WATCHING.append(lv)
    try:
        with lv:
            result = fn(*args, **kwargs)
            flat, _ = flatten_out(result)
    except BaseException:
        lv.release()
        if dry:
            lv.rollback()
        raise
    finally:
        _WATCHING.pop()
    for o in flat:  # a front-end's wrapper of a traced array, returned: plain again
        if isinstance(o, Tensor) and o._data.__class__ is _TracedValue:
            if o.__dict__.get("_lvl") is not lv and lv.arr_slot.get(id(o._data)) is None:
                # computed from traced values by NumPy, not by an op
                lv.note_loop_value("a tensor computed from a traced tensor's values outside "
                                   "the ops (by NumPy), returned")
            elif o.__dict__.get("_lvl") is lv:
                continue  # a tracer: plain again when the level releases it
            else:
                s = lv.arr_slot.get(id(o._data))
                u = lv.unmarked.get(s) if s is not None else None
                o._data = u if u is not None else o._data.view(np.ndarray)
                continue
            o._data = o._data.view(np.ndarray)
    if lv.unsupported is not None or lv.breaks:
        lv.release()
        if dry:
            lv.rollback()
        lv.let_go()
        return None, result, lv
    prog = lv.finish(flat)
    if dry:
        lv.rollback()
    lv.let_go()
    return prog, result, lv


def _node_op(prog: Program) -> Any:
    """The op that records a call of ``prog`` as one node (a pure program of one tensor
    output): forward = the compiled replay, VJP = a traced program (itself replayed)."""
    op = prog.__dict__.get("_node_op")
    if op is not None:
        return op
    from .._core.registry import Op

    n_in = len(prog.inputs)
    out_ref = prog.outputs[0]

    def fwd(*arrays: Any) -> Any:
        vals = prog.run(*arrays[:n_in])
        return np.asarray(vals[0])

    def vjp(g: Any, *xs: Any) -> tuple[Any, ...]:
        vp = prog.__dict__.get("_vjp_prog")
        if vp is None:
            vp = _trace_vjp(prog, list(xs), g)
            prog.__dict__["_vjp_prog"] = vp
        return tuple(run_program(vp, [*xs, g]))

    op = Op(f"compiled_{prog.name}", fwd, ("*",), "CompiledFunctionBackward")
    op.vjp = vjp
    prog.__dict__["_node_op"] = op
    _ = out_ref
    return op


def _trace_vjp(prog: Program, xs: list[Tensor], g: Tensor) -> Program:
    """Trace the VJP of a one-output program: ``(inputs, reads, g) -> their gradients``."""
    from .._core.mode import enable_grad
    from . import entry

    n_in = len(prog.inputs)
    floats = [x._data.dtype.kind in "fc" for x in xs]
    # TensorFlow differentiates through the gradients a function computed; PyTorch's
    # autograd.grad without create_graph gives none to differentiate
    tf_style = prog.styles[prog.outputs[0]] == 2

    def body(*a: Any) -> tuple[Any, ...]:
        ins, cot = list(a[:-1]), a[-1]
        out = prog.run_tensors(ins[:n_in], reads=ins[n_in:], record_backward=tf_style)[0]
        srcs = [t for t, f in zip(ins, floats) if f]
        gs = iter(entry.grad([out], srcs, [cot], create_graph=True, allow_unused=True))
        return tuple(next(gs) if f else None for f in floats)

    def build(lv: TraceLevel) -> tuple[Any, Any]:
        new = []
        for x, f in zip(xs, floats):
            t = lv.add_input(make(x._data, None, False, x._style))
            t._rg = f
            new.append(t)
        gt = lv.add_input(make(g._data, None, False, g._style))
        return (*new, gt), {}

    with enable_grad():
        vp, _, lv = trace_call(body, build, lambda r: (list(r), None), f"{prog.name}_vjp")
    if vp is None:  # pragma: no cover - a pure program's VJP is always one program
        raise RuntimeError(f"the VJP of {prog.name} could not be traced: {lv.unsupported}")
    return vp


def _pure_one_output(prog: Program) -> bool:
    ok = prog.__dict__.get("_pure1")
    if ok is None:
        ok = (len(prog.outputs) == 1 and prog.outputs[0].__class__ is int
              and prog.kinds[prog.outputs[0]] not in (CONST,)
              and all(i.kind == "op" or (i.kind == "read" and i.what == "data")
                      for i in prog.instrs))
        prog.__dict__["_pure1"] = ok
    return bool(ok)


def run_program(prog: Program, tensors: Sequence[Tensor]) -> list[Any]:
    """Run ``prog`` on input tensors: the compiled replay, or through the ops when the
    caller's reverse mode must record it (a tape, inputs that require grad, outputs that
    carried a graph when traced)."""
    st = _STATE
    if st.grad_enabled and (st.tapes or prog.needs_graph or any(
            t._rg or t._node is not None for t in tensors)):
        if _pure_one_output(prog) and not st.levels:
            # one node: the compiled forward now, a traced VJP program at backward time
            reads = [i.obj for i in prog.instrs if i.kind == "read"]
            srcs = list(tensors) + [_snapshot(r) for r in reads]
            res = _node_op(prog)(*srcs)
            set_style(res, prog.styles[prog.outputs[0]])
            return [res]
        return prog.run_tensors(tensors, record_backward=bool(st.tapes))
    if prog.quiet:
        with np.errstate(all="ignore"):
            return prog([t._data for t in tensors])
    return prog([t._data for t in tensors])
