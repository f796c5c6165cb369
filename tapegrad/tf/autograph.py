"""``tf.autograph``: Python control flow on tensors converted to ``cond``/``while_loop``.

:func:`to_graph` rewrites a function's source as TensorFlow's AutoGraph does:
every ``if``, ``while`` and ``for`` statement becomes a call of an operator
(``if_stmt``, ``while_stmt``, ``for_stmt``) that receives the branches or the
loop body as nested functions over the variables the statement modifies (its
*state*).  At run time the operator looks at the condition or the iterable:

- a tensor: the statement runs as ``ops.control.cond`` / ``while_loop`` (one
  branch taken eagerly, or recorded by a tracing level through its hook;
  ``for x in tensor`` and ``for i in tf.range(n)`` loop over the first axis);
- anything else (Python bools, lists, ``range``, datasets): the statement runs
  as plain Python, unchanged.

``break``, ``continue`` and ``return`` inside converted statements become
flags (``break_``, ``continue_``, ``do_return``/``retval_``) that guard the
statements after them and join the loop condition, as in TensorFlow;
``and``/``or``/``not`` and ``x if c else y`` become their lazy tensor forms;
calls of other user functions are converted in turn (``recursive=True``).
TensorFlow's checks come with them: a variable set in only one branch of a
tensor ``if`` (``'y' must also be initialized in the else branch``), dtypes
that differ between branches or change in a loop, shapes that change in a
loop, a ``return`` inside a tensor loop.

>>> import tapegrad.tf as tf
>>> def collatz(n):
...     steps = 0
...     while n != 1:
...         if n % 2 == 0:
...             n = n // 2
...         else:
...             n = 3 * n + 1
...         steps += 1
...     return steps
>>> g = tf.autograph.to_graph(collatz)
>>> g(tf.constant(6)), g(6)
(<tf.Tensor: shape=(), dtype=int32, numpy=8>, 8)
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import sys
import textwrap
import threading
import types
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from .. import ops
from .._core.dispatch import control
from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor as _Core
from ..ops import control as _ctl
from . import _nest
from . import dtypes as _dt
from ._tensor import TensorShape, VariableBase, convert, read, tft
from .errors import OperatorNotAllowedInGraphError

__all__ = ["to_graph", "to_code", "experimental", "operator_not_allowed",
           "OperatorNotAllowedInGraphError"]

Fn = Callable[..., Any]


# ====================================================================== errors
def operator_not_allowed(task: str) -> OperatorNotAllowedInGraphError:
    """TensorFlow's error for using a symbolic tensor in Python (``task`` names the use).

    ``task`` is ``"Using a symbolic `tf.Tensor` as a Python `bool`"`` or
    ``"Iterating over a symbolic `tf.Tensor`"``; a tracing level raises this
    from ``Level.read`` for code that AutoGraph did not convert.

    >>> str(operator_not_allowed("Iterating over a symbolic `tf.Tensor`"))[:48]
    'Iterating over a symbolic `tf.Tensor` is not all'
    """
    return hinted(OperatorNotAllowedInGraphError(with_hint(
        f"{task} is not allowed. You can attempt the following resolutions to the problem: "
        "If you are running in Graph mode, use Eager execution mode or decorate this function "
        "with @tf.function. If you are using AutoGraph, you can try decorating this function "
        "with @tf.function. If that does not work, then you may be using an unsupported "
        "feature or your source code may not be visible to AutoGraph. See "
        "https://github.com/tensorflow/tensorflow/blob/master/tensorflow/python/autograph/"
        "g3doc/reference/limitations.md#access-to-source-code for more information.",
        "write the condition with tf.cond / tf.while_loop, or keep the code visible to "
        "AutoGraph (a def in a file, not exec'd text)")))


# ====================================================================== undefined values
class Undefined:
    """A variable that a converted statement may set but that has no value yet."""

    __slots__ = ("symbol_name",)

    def __init__(self, symbol_name: str) -> None:
        self.symbol_name = symbol_name

    def read(self) -> Any:
        raise hinted(UnboundLocalError(with_hint(
            f"'{self.symbol_name}' is used before assignment",
            "give the variable a value before the if/loop, on every path")))

    def __repr__(self) -> str:
        return self.symbol_name

    def __getattribute__(self, name: str) -> Any:
        if name in ("symbol_name", "read", "__class__", "__repr__", "__slots__"):
            return object.__getattribute__(self, name)
        return object.__getattribute__(self, "read")()

    def __getitem__(self, i: Any) -> Any:
        return self.read()


class UndefinedReturnValue:
    """The return value of a converted function that has not returned yet."""


def ld(v: Any) -> Any:
    """A load of a variable in converted code: an undefined variable raises."""
    if type(v) is Undefined:
        return v.read()
    return v


def undefined_if_unbound(scope: dict[str, Any], name: str) -> Any:
    """The value of ``name`` in ``scope`` (``locals()``), or an :class:`Undefined`."""
    return scope[name] if name in scope else Undefined(name)


def _undefined(v: Any) -> bool:
    return type(v) is Undefined or isinstance(v, UndefinedReturnValue)


def ret(value: Any, do_return: Any) -> Any:
    """The function's result: ``None`` when it never reached a ``return``."""
    if isinstance(value, UndefinedReturnValue) or type(value) is Undefined:
        return None
    return value


# ====================================================================== runtime operators
def _is_tensor(x: Any) -> bool:
    return isinstance(x, _Core)


def _verify_condition(c: Any, tag: str) -> Any:
    if isinstance(c, VariableBase):
        c = read(c)
    extra = "to check for None, use `is not None`"
    if c._data.dtype != np.bool_:
        raise hinted(ValueError(with_hint(
            f"condition of {tag} expected to be `tf.bool` scalar, got {c}; to use as boolean "
            f"Tensor, use `tf.cast`; {extra}", "compare (x > 0) or cast the condition to bool")))
    if c._data.size > 1:
        raise hinted(ValueError(with_hint(
            f"condition of {tag} expected to be `tf.bool` scalar, got {c}; {extra}",
            "reduce the condition to one value: tf.reduce_any / tf.reduce_all")))
    if c._data.ndim:
        c = ops.reshape(c, ())
    return c


def _tracing(name: str) -> bool:
    return control(name) is not None


def _to_tensor_leaf(v: Any) -> Any:
    from .control_flow import TensorArray

    if isinstance(v, TensorArray):
        return v._as_buffer()
    if isinstance(v, VariableBase):
        return read(v)
    if isinstance(v, _Core):
        return v
    return convert(v)


def _flatten_state(values: Sequence[Any]) -> tuple[list[Any], Any]:
    return _nest.flatten(list(values)), list(values)


def _pack_state(structure: Any, flat: Sequence[Any], templates: Sequence[Any] | None = None
                ) -> tuple[Any, ...]:
    from .control_flow import TensorArray, _flat_leaves

    vals = list(flat)
    if templates is None and len(vals) == len(structure) and _flat_leaves(structure):
        return tuple(vals)
    if templates is not None:
        vals = [t._from_buffer(v) if isinstance(t, TensorArray) and not isinstance(
            v, TensorArray) else v for t, v in zip(templates, vals)]
    return tuple(_nest.pack_sequence_as(structure, vals))


def if_stmt(cond: Any, body: Fn, orelse: Fn, get_state: Fn, set_state: Fn,
            symbol_names: tuple[str, ...], live: tuple[str, ...]) -> None:
    """An ``if`` statement: Python when ``cond`` is not a tensor, ``cond`` otherwise."""
    if not _is_tensor(cond):
        if cond:
            body()
        else:
            orelse()
        return
    cond = _verify_condition(cond, "if statement")
    init = get_state()
    # both branches run when traced, or under vmap with a per-example condition
    traced = _tracing("cond") or _ctl.is_batched(cond)
    # the outputs: the state a later statement can read (a dead variable is not carried)
    outs = [i for i, n in enumerate(symbol_names) if n in live]
    branch_structs: dict[str, Any] = {}

    def branch(fn: Fn, label: str) -> Fn:
        def run(*_: Any) -> tuple[Any, ...]:
            set_state(init)
            fn()
            vals = get_state()
            for i in outs:
                v = vals[i]
                if isinstance(v, UndefinedReturnValue):
                    raise hinted(ValueError(with_hint(
                        f"the {label} branch must also have a return statement.",
                        "return a value on both paths of a tensor if")))
                if type(v) is Undefined:
                    raise hinted(ValueError(with_hint(
                        f"'{symbol_names[i]}' must also be initialized in the {label} branch",
                        "give the variable a value before the if, or in both branches")))
                if v is None:
                    raise hinted(ValueError(with_hint(
                        f"'{symbol_names[i]}' is None at the end of the {label} branch.",
                        "a tensor if cannot carry None")))
            picked = [vals[i] for i in outs]
            flat, struct = _flatten_state(picked)
            if traced:
                flat = [_to_tensor_leaf(v) for v in flat]
                _compare_branches(branch_structs, label, struct, flat, symbol_names, outs)
            branch_structs[label] = (struct, flat)
            return tuple(flat)

        return run

    flat_out = _ctl.cond(cond, branch(body, "main"), branch(orelse, "else"))
    label = "main" if "main" in branch_structs else "else"
    struct, _ = branch_structs[label]
    final = list(get_state()) if not traced else list(init)
    templates = _nest.flatten(struct) if traced else None  # TensorArrays from their buffers
    for i, v in zip(outs, _pack_state(struct, flat_out, templates)):
        final[i] = v
    if traced:
        for i, n in enumerate(symbol_names):
            if i not in outs:
                final[i] = Undefined(n)
    set_state(tuple(final))


def _compare_branches(seen: dict[str, Any], label: str, struct: Any, flat: list[Any],
                      names: tuple[str, ...], outs: list[int]) -> None:
    from .control_flow import structure_mismatch

    other = "else" if label == "main" else "main"
    if other not in seen:
        return
    ostruct, oflat = seen[other]
    main_s, else_s = (struct, ostruct) if label == "main" else (ostruct, struct)
    main_f, else_f = (flat, oflat) if label == "main" else (oflat, flat)
    for k, i in enumerate(outs):
        msg = structure_mismatch(main_s[k], else_s[k])
        if msg is not None:
            raise hinted(TypeError(with_hint(
                f"'{names[i]}' must have the same nested structure in the main and else "
                f"branches:\n\n{msg}", "give the variable the same structure in both branches")))
    for k, (a, b) in enumerate(zip(main_f, else_f)):
        if a._data.dtype != b._data.dtype:
            name = names[outs[_owner(main_s, k)]]
            raise hinted(TypeError(with_hint(
                f"'{name}' has dtype {_dt.as_dtype(a._data.dtype).name} in the main branch, but "
                f"dtype {_dt.as_dtype(b._data.dtype).name} in the else branch",
                "cast so that both branches give the same dtype")))


def _owner(struct: list[Any], k: int) -> int:
    """Which state variable the ``k``-th flat leaf belongs to."""
    n = 0
    for j, v in enumerate(struct):
        n += len(_nest.flatten(v))
        if k < n:
            return j
    return len(struct) - 1


# -- loops
class _LoopOptions(threading.local):
    def __init__(self) -> None:
        self.stack: list[dict[str, Any]] = []


_LOOP_OPTS = _LoopOptions()


def _check_loop_vars(names: Sequence[str], entry: Sequence[Any], exit_: Sequence[Any],
                     opts: dict[str, Any]) -> None:
    """TensorFlow's per-iteration check: same structure, dtype and (compatible) shape."""
    from .control_flow import TensorArray, structure_mismatch

    invariants = {id(v): s for v, s in opts.get("shape_invariants", ())}
    for name, a, b in zip(names, entry, exit_):
        if type(a) is _Core and type(b) is _Core and not invariants:  # the common case
            if a._data.dtype == b._data.dtype and a._data.shape == b._data.shape:
                continue
        if b is None:
            raise hinted(ValueError(with_hint(f"'{name}' is None at the end of the iteration.",
                                              "a tensor loop cannot carry None")))
        if _undefined(a) or _undefined(b):
            continue
        msg = structure_mismatch(a, b)
        if msg is not None:
            raise hinted(TypeError(with_hint(
                f"'{name}' does not have the same nested structure after one iteration.\n\n"
                f"{msg}", "keep each loop variable's structure across iterations")))
        for x, y in zip(_nest.flatten(a), _nest.flatten(b)):
            if isinstance(x, TensorArray) or isinstance(y, TensorArray):
                continue
            tx = x if _is_tensor(x) else convert(x)
            ty = y if _is_tensor(y) else convert(y)
            if tx._data.dtype != ty._data.dtype:
                raise hinted(TypeError(with_hint(
                    f"'{name}' has dtype {_dt.as_dtype(tx._data.dtype).name} before the loop, "
                    f"but dtype {_dt.as_dtype(ty._data.dtype).name} after one iteration",
                    "give the variable its loop dtype before the loop (e.g. 0.0, not 0)")))
            inv = invariants.get(id(x))
            sx, sy = tuple(tx._data.shape), tuple(ty._data.shape)
            if inv is None:
                if sx != sy:
                    raise hinted(ValueError(with_hint(
                        f"'{name}' has shape {TensorShape(list(sx))} before the loop, but shape "
                        f"{TensorShape(list(sy))} after one iteration. Use "
                        "tf.autograph.experimental.set_loop_options to set shape invariants.",
                        "set shape_invariants with None for the dimensions that change")))
            else:
                from .control_flow import _subshape

                allowed = inv if isinstance(inv, TensorShape) else TensorShape(inv)
                if not _subshape(sy, allowed):
                    raise hinted(ValueError(with_hint(
                        f"'{name}' has shape {TensorShape(list(sy))} after one iteration, which "
                        f"does not conform with the shape invariant {allowed}.",
                        "loosen the shape invariant")))


def _verify_init(names: Sequence[str], values: Sequence[Any], live: Sequence[str],
                 traced: bool) -> list[int]:
    """The state variables a tensor loop carries; TensorFlow's errors for bad ones."""
    carried = []
    for i, (n, v) in enumerate(zip(names, values)):
        if isinstance(v, UndefinedReturnValue):
            raise hinted(NotImplementedError(with_hint(
                "a return statement cannot be placed inside this TensorFlow loop; this may "
                "happen if a return statement depends on a static Python condition such as a "
                "hyperparameter", "set a result variable in the loop and return after it")))
        if type(v) is Undefined:
            if n in live:
                raise hinted(ValueError(with_hint(
                    f"'{n}' must be defined before the loop",
                    "give the variable a value before the loop")))
            if traced:  # a temporary of the body: not carried
                continue
        if v is None and traced:
            raise hinted(ValueError(with_hint(
                f"'{n}' is not allowed to be None before the loop",
                "give the variable a tensor value before the loop")))
        carried.append(i)
    return carried


def _run_tensor_loop(test: Fn, body: Fn, get_state: Fn, set_state: Fn,
                     names: tuple[str, ...], live: tuple[str, ...], opts: dict[str, Any],
                     extra: tuple[Any, ...] = (), extra_body: Fn | None = None) -> tuple[Any, ...]:
    """The loop as ``ops.control.while_loop`` over the carried state (plus ``extra`` vars)."""
    traced = _tracing("while_loop")
    init = list(get_state())
    if any(type(v) is Undefined and n in live for n, v in zip(names, init)) and not any(
            isinstance(v, UndefinedReturnValue) for v in init):
        # a variable first set inside the loop and used after it: TensorFlow stages one
        # iteration to find its type; here the loop runs in Python on this call's values
        # (inside tf.function that signature runs eagerly)
        from ..autodiff import tracing

        lv = tracing.current() if traced else None
        if lv is None:
            out = _python_loop(test, body, extra, extra_body)
        else:
            lv.unsupported = lv.unsupported or ("a loop that defines a variable used after it")
            with lv.suspended():
                out = _python_loop(test, body, extra, extra_body)
        if lv is not None or IN_FUNCTION.depth:
            _check_initialized(names, get_state(), live)
        return out
    if traced and _grows(init):
        # a TensorArray that grows, or whose element shape is not known yet, is no
        # fixed-shape loop variable: this loop runs in Python on this call's values, and
        # the signature runs eagerly
        from ..autodiff import tracing

        lv = tracing.current()
        if lv is not None:
            lv.unsupported = lv.unsupported or ("a loop carrying a TensorArray with "
                                                "dynamic_size=True or no element_shape")
            with lv.suspended():
                return _run_tensor_loop(test, body, get_state, set_state, names, live, opts,
                                        extra, extra_body)
    carried = _verify_init(names, init, live, traced)
    cnames = [names[i] for i in carried]
    n_extra = len(extra)
    holder: dict[str, Any] = {"struct": [init[i] for i in carried]}
    templates: list[Any] = []

    def load(flat: Sequence[Any]) -> list[Any]:
        ex, rest = list(flat[:n_extra]), flat[n_extra:]
        vals = list(_pack_state(holder["struct"], rest, templates if traced else None))
        state = list(get_state())
        for i, v in zip(carried, vals):
            state[i] = v
        set_state(tuple(state))
        return ex

    def c(*flat: Any) -> Any:
        ex = load(flat)
        r = test(*ex)
        if _is_tensor(r):
            r = _verify_condition(r, "while statement")
        elif traced:
            r = convert(bool(r))
        return r

    def b(*flat: Any) -> tuple[Any, ...]:
        ex = load(flat)
        entry = [get_state()[i] for i in carried]
        _LOOP_OPTS.stack.append(opts)
        try:
            new_ex = extra_body(*ex) if extra_body is not None else ()
            body()
        finally:
            _LOOP_OPTS.stack.pop()
        exit_ = [get_state()[i] for i in carried]
        _check_loop_vars(cnames, entry, exit_, opts)
        holder["struct"] = exit_
        leaves = _nest.flatten(list(exit_))
        if traced:
            leaves = [_to_tensor_leaf(v) for v in leaves]
        return tuple(new_ex) + tuple(leaves)

    leaves0 = _nest.flatten(holder["struct"])
    if traced:
        templates.extend(leaves0)
        leaves0 = [_to_tensor_leaf(v) for v in leaves0]
    flat = _ctl.while_loop(c, b, tuple(extra) + tuple(leaves0),
                           opts.get("maximum_iterations"))
    ex = load(flat)
    # as tf.while_loop does, the loop's Python numbers come out as tensors
    state = list(get_state())
    for i in carried:
        state[i] = _nest.map_structure(_as_tensor_if_number, state[i])
    set_state(tuple(state))
    if traced:
        state = list(get_state())
        for i, n in enumerate(names):
            if i not in carried:
                state[i] = Undefined(n)
        set_state(tuple(state))
    return tuple(ex)


class _InFunction(threading.local):
    depth = 0  # > 0: a tf.function signature running its Python function eagerly


IN_FUNCTION = _InFunction()


def _check_initialized(names: Sequence[str], state: Sequence[Any], live: Sequence[str]
                       ) -> None:
    """TensorFlow's run-time assertion for a variable first set inside a tensor loop that
    did not iterate (inside ``tf.function``)."""
    from .errors import InvalidArgumentError

    for n, v in zip(names, state):
        if n in live and type(v) is Undefined:
            err = hinted(InvalidArgumentError(None, None, with_hint(
                f"assertion failed: [loop must iterate at least once to initialize {n}]",
                f"give {n} a value before the loop")))
            err.tf_node = "Assert/Assert"  # type: ignore[attr-defined]
            raise err


def _python_loop(test: Fn, body: Fn, extra: tuple[Any, ...], extra_body: Fn | None
                 ) -> tuple[Any, ...]:
    ex = tuple(extra)
    while _truthy(test(*ex)):
        if extra_body is not None:
            ex = tuple(extra_body(*ex))
        body()
    return ex


def _grows(state: Sequence[Any]) -> bool:
    from .control_flow import TensorArray

    return any(isinstance(v, TensorArray) and v._buffer is None and (
        v._dynamic_size or (not v.element_shape.is_fully_defined() and any(
            x is None for x in v._store.items))) for v in _nest.flatten(list(state)))


def _as_tensor_if_number(v: Any) -> Any:
    if isinstance(v, (bool, int, float, complex, np.ndarray, np.generic)):
        return convert(v)
    return v


def while_stmt(test: Fn, body: Fn, get_state: Fn, set_state: Fn, symbol_names: tuple[str, ...],
               live: tuple[str, ...], opts: dict[str, Any]) -> None:
    """A ``while`` statement: a Python loop unless its condition is a tensor."""
    first = test()
    if not _is_tensor(first):
        c = first
        while c:  # a Python loop (a tensor condition later on is read as a Python bool)
            body()
            c = test()
        return
    _verify_condition(first, "while statement")
    _run_tensor_loop(test, body, get_state, set_state, symbol_names, live, opts)


def for_stmt(iter_: Any, extra_test: Fn | None, body: Fn, get_state: Fn, set_state: Fn,
             symbol_names: tuple[str, ...], live: tuple[str, ...], opts: dict[str, Any]) -> None:
    """A ``for`` statement: over a tensor's first axis as a tensor loop, else in Python."""
    from .control_flow import TensorArray

    if isinstance(iter_, VariableBase):
        iter_ = read(iter_)
    if isinstance(iter_, TensorArray):
        iter_ = iter_.stack()
    if not _is_tensor(iter_):
        for v in iter_:
            if extra_test is not None and not _truthy(extra_test()):
                break
            body(v)
        return
    if iter_._data.ndim == 0:
        raise hinted(TypeError(with_hint("Cannot iterate over a scalar tensor.",
                                         "iterate over a tensor of rank 1 or more")))
    n: Any = int(iter_._data.shape[0])
    traced = _tracing("while_loop")
    if not traced:
        # eagerly the loop is the tensor loop with a Python counter: the same ops run
        i0: Any = 0
    else:
        from ..ops.shape import dim_size

        i0 = tft(np.asarray(0, np.int32))
        n = dim_size(iter_, 0)  # the traced length: the program loops as long as it is

    def test(i: Any) -> Any:
        more = i < n if not _is_tensor(i) else ops.less(i, n if _is_tensor(n) else
                                                       tft(np.asarray(n, np.int32)))
        if extra_test is None:
            return more
        if not _is_tensor(more) and not more:
            return False
        e = extra_test()
        if _is_tensor(more) or _is_tensor(e):
            from ._ops import logical_and

            return logical_and(convert(more), convert(e))
        return e

    def step(i: Any) -> tuple[Any, ...]:
        body(ops.getitem(iter_, i))
        return (i + 1,)

    _run_tensor_loop(test, lambda: None, get_state, set_state, symbol_names, live, opts,
                     extra=(i0,), extra_body=step)


def _truthy(v: Any) -> bool:
    return bool(v)  # a tracer's level decides whether its value may be read


def if_exp(cond: Any, if_true: Fn, if_false: Fn, expr_repr: str = "") -> Any:
    """``a if cond else b``: ``tf.cond`` when ``cond`` is a tensor."""
    if _is_tensor(cond):
        from .control_flow import cond as tf_cond

        return tf_cond(_verify_condition(cond, "if expression"), if_true, if_false)
    return if_true() if cond else if_false()


def and_(a: Fn, b: Fn) -> Any:
    """``a and b`` (lazy): ``tf.cond(a, b, lambda: a)`` when ``a`` is a tensor."""
    x = a()
    if _is_tensor(x):
        from .control_flow import cond as tf_cond

        return tf_cond(x, b, lambda: x)
    return x and b()


def or_(a: Fn, b: Fn) -> Any:
    """``a or b`` (lazy): ``tf.cond(a, lambda: a, b)`` when ``a`` is a tensor."""
    x = a()
    if _is_tensor(x):
        from .control_flow import cond as tf_cond

        return tf_cond(x, lambda: x, b)
    return x or b()


def not_(x: Any) -> Any:
    """``not x``: ``tf.logical_not`` of a tensor."""
    if _is_tensor(x):
        from ._ops import logical_not

        return logical_not(x)
    return not x


# ====================================================================== converted calls
_SKIP_MODULES = frozenset({"tapegrad", "numpy", "scipy", "tensorflow", "keras", "torch",
                           "pytest", "_pytest", "jax", "autograd", "mygrad"})


_OWN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _skip(fn: Any) -> bool:
    mod = getattr(fn, "__module__", None) or ""
    top = mod.split(".")[0]
    if top in _SKIP_MODULES or top in sys.stdlib_module_names:
        return True
    # tapegrad's own wrappers (tf.custom_gradient's) carry the user function's __module__
    code = getattr(fn, "__code__", None)
    return code is not None and os.path.abspath(code.co_filename).startswith(_OWN_DIR)


def converted_call(f: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> Any:
    """Call ``f``, converting it first when it is a user function AutoGraph may convert."""
    kwargs = kwargs or {}
    target = f
    if isinstance(f, types.MethodType) and inspect.isfunction(f.__func__):
        conv = _maybe_convert(f.__func__)
        if conv is not f.__func__:
            return conv(f.__self__, *args, **kwargs)
        return f(*args, **kwargs)
    if inspect.isfunction(target):
        return _maybe_convert(target)(*args, **kwargs)
    return f(*args, **kwargs)


def _maybe_convert(fn: Any) -> Any:
    if getattr(fn, "__autograph_do_not_convert__", False) or _skip(fn) or \
            getattr(fn, "__autograph_converted__", False) or fn.__name__ == "<lambda>":
        return fn
    try:
        return _convert(fn, recursive=True)
    except (OSError, TypeError, SyntaxError, _CannotConvert, UnsupportedLanguageElementError):
        return fn  # no source (a builtin, exec'd code): called as it is, as TensorFlow does


# ====================================================================== the converter
class _CannotConvert(Exception):
    pass


class UnsupportedLanguageElementError(NotImplementedError):
    """AutoGraph's error for Python it does not convert (``for``/``while`` with ``else``,
    generators)."""


def _check_supported(node: ast.AST) -> None:
    for n in ast.walk(node):
        if isinstance(n, (ast.For, ast.While)) and n.orelse:
            kind = "for" if isinstance(n, ast.For) else "while"
            raise hinted(UnsupportedLanguageElementError(with_hint(
                f"{kind}/else statement not yet supported",
                "set a flag before break and test it after the loop")))
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            raise hinted(UnsupportedLanguageElementError(with_hint(
                "generators are not supported", "return a list or a tensor instead")))


_CACHE: weakref.WeakKeyDictionary[Any, dict[bool, Any]] = weakref.WeakKeyDictionary()
_RUNTIME = types.SimpleNamespace(
    if_stmt=if_stmt, while_stmt=while_stmt, for_stmt=for_stmt, if_exp=if_exp, and_=and_,
    or_=or_, not_=not_, ld=ld, undefined_if_unbound=undefined_if_unbound, ret=ret,
    converted_call=converted_call, Undefined=Undefined,
    UndefinedReturnValue=UndefinedReturnValue)
_AG = "ag__"


def _stores(nodes: Iterable[ast.AST]) -> list[str]:
    """Names assigned in ``nodes`` (not inside nested functions, classes or comprehensions)."""
    out: list[str] = []

    def visit(n: ast.AST) -> None:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if not getattr(n, "_ag_generated", False):
                out.append(n.name)
            return
        if isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                          ast.GeneratorExp)):
            return
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.append(n.id)
        if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
            out.append(n.target.id)
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                out.append((a.asname or a.name).split(".")[0])
        for c in ast.iter_child_nodes(n):
            visit(c)

    for node in nodes:
        visit(node)
    seen: dict[str, None] = {}
    for n in out:
        seen.setdefault(n, None)
    return list(seen)


def _contains(nodes: Iterable[ast.AST], kinds: tuple[type, ...], loops: bool = True) -> bool:
    """Whether ``nodes`` hold a statement of ``kinds`` (not in nested functions; with
    ``loops=False``, not inside nested loops either: their break/continue are their own)."""
    def visit(n: ast.AST) -> bool:
        if isinstance(n, kinds):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return False
        if not loops and isinstance(n, (ast.For, ast.While, ast.AsyncFor)):
            return any(visit(c) for c in n.orelse)
        return any(visit(c) for c in ast.iter_child_nodes(n))

    return any(visit(n) for n in nodes)


def _conditional_returns(block: list[ast.stmt]) -> tuple[list[ast.stmt], bool]:
    """TensorFlow's ConditionalReturnRewriter: after ``if c: ...; return`` the statements that
    follow move into the ``else`` branch (and vice versa), so that both branches return.

    Returns the new block and whether it definitely returns.
    """
    results: list[ast.stmt] = []
    dest = results
    definitely = False
    for node in block:
        returns = False
        body_ret = orelse_ret = False
        if isinstance(node, ast.Return):
            returns = True
        elif isinstance(node, ast.If):
            node.body, body_ret = _conditional_returns(node.body)
            node.orelse, orelse_ret = _conditional_returns(node.orelse)
            returns = body_ret and orelse_ret
        elif isinstance(node, (ast.While, ast.For)):
            node.body, _ = _conditional_returns(node.body)
            node.orelse, _ = _conditional_returns(node.orelse)
        elif isinstance(node, ast.With):
            node.body, returns = _conditional_returns(node.body)
        elif isinstance(node, ast.Try):
            node.body, _ = _conditional_returns(node.body)
            node.orelse, _ = _conditional_returns(node.orelse)
            node.finalbody, _ = _conditional_returns(node.finalbody)
            for h in node.handlers:
                h.body, _ = _conditional_returns(h.body)
        definitely = definitely or returns
        dest.append(node)
        if isinstance(node, ast.If) and body_ret:
            dest = node.orelse
        elif isinstance(node, ast.If) and orelse_ret:
            dest = node.body
    return results, definitely


def _name(id_: str, store: bool = False) -> ast.Name:
    return ast.Name(id=id_, ctx=ast.Store() if store else ast.Load())


def _ag(attr: str) -> ast.Attribute:
    return ast.Attribute(value=_name(_AG), attr=attr, ctx=ast.Load())


def _call(func: ast.expr, args: list[ast.expr], keywords: list[ast.keyword] | None = None
          ) -> ast.Call:
    return ast.Call(func=func, args=args, keywords=keywords or [])


def _assign(name: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[_name(name, True)], value=value)


def _tuple(names: Sequence[str], store: bool = False) -> ast.Tuple:
    return ast.Tuple(elts=[_name(n, store) for n in names],
                     ctx=ast.Store() if store else ast.Load())


def _strs(names: Sequence[str]) -> ast.Tuple:
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


class _Loads(ast.NodeVisitor):
    """Every load of a name in a function, with its position, and those in nested scopes."""

    def __init__(self) -> None:
        self.loads: list[tuple[tuple[int, int], str]] = []
        self.nested: set[str] = set()
        self._depth = 0

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.loads.append(((node.lineno, node.col_offset), node.id))
            if self._depth:
                self.nested.add(node.id)

    def _scope(self, node: ast.AST) -> None:
        self._depth += 1
        self.generic_visit(node)
        self._depth -= 1

    visit_FunctionDef = _scope
    visit_AsyncFunctionDef = _scope
    visit_Lambda = _scope


class _Converter:
    """Rewrites one function's statements into AutoGraph's functional form."""

    def __init__(self, fn_node: ast.FunctionDef, recursive: bool) -> None:
        self.recursive = recursive
        self.counter = 0
        self.globals: set[str] = set()
        for n in ast.walk(fn_node):
            if isinstance(n, ast.Global):
                self.globals.update(n.names)
        loads = _Loads()
        for stmt in fn_node.body:
            loads.visit(stmt)
        args = fn_node.args.posonlyargs + fn_node.args.args
        self.first_arg = args[0].arg if args else None
        # the names a converted statement may leave undefined: loads of them go through ld
        self.assigned = set(_stores(fn_node.body)) - self.globals
        self.loads = loads.loads
        self.nested_loads = loads.nested

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"{base}_{self.counter}"

    # -- liveness (approximate, conservative): loaded after the statement, in an enclosing
    # loop, or in a nested function
    def live_after(self, node: ast.stmt, loops: list[ast.stmt]) -> set[str]:
        start = (node.lineno, node.col_offset)
        end = (getattr(node, "end_lineno", None) or 0, getattr(node, "end_col_offset", None) or 0)
        live = {n for pos, n in self.loads if pos > end} | self.nested_loads
        for lp in loops:
            lstart = (lp.lineno, lp.col_offset)
            lend = (lp.end_lineno or 0, lp.end_col_offset or 0)
            live |= {n for pos, n in self.loads
                     if lstart <= pos <= lend and not start <= pos <= end}
        return live

    # -- blocks
    def block(self, stmts: list[ast.stmt], ctx: dict[str, Any]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        stmts = list(stmts)
        i = 0
        while i < len(stmts):
            s = stmts[i]
            rest = stmts[i + 1:]
            out.extend(self.stmt(s, ctx))
            if isinstance(s, (ast.Return, ast.Break, ast.Continue)):
                return out  # what follows in this block never runs
            flags = self.flags_set(s, ctx)
            if flags and rest:
                guard: ast.expr = self.not_any(flags)
                g = ast.If(test=guard, body=rest, orelse=[])
                ast.copy_location(g, rest[0])
                g.end_lineno, g.end_col_offset = rest[-1].end_lineno, rest[-1].end_col_offset
                out.extend(self.stmt(g, ctx, generated=True))
                return out
            i += 1
        return out

    def flags_set(self, s: ast.stmt, ctx: dict[str, Any]) -> list[str]:
        """The flags statement ``s`` may set (so that what follows it must be guarded)."""
        if isinstance(s, (ast.Return,)):
            return []
        flags = []
        if ctx.get("returns") and _contains([s], (ast.Return,)):
            flags.append("do_return")
        loop = ctx.get("loop")
        if loop is not None and not isinstance(s, (ast.For, ast.While)):
            if loop.get("break") and _contains([s], (ast.Break,), loops=False):
                flags.append(loop["break"])
            if loop.get("continue") and _contains([s], (ast.Continue,), loops=False):
                flags.append(loop["continue"])
        if isinstance(s, (ast.For, ast.While)) and ctx.get("returns") and \
                _contains([s], (ast.Return,)):
            return ["do_return"]
        return flags

    def not_any(self, flags: list[str]) -> ast.expr:
        e: ast.expr = _call(_ag("not_"), [_name(flags[0])])
        for f in flags[1:]:
            e = _call(_ag("and_"), [ast.Lambda(args=_noargs(), body=e),
                                    ast.Lambda(args=_noargs(),
                                               body=_call(_ag("not_"), [_name(f)]))])
        return e

    # -- statements
    def stmt(self, s: ast.stmt, ctx: dict[str, Any], generated: bool = False) -> list[ast.stmt]:
        if isinstance(s, ast.Return):
            value = self.expr(s.value) if s.value is not None else ast.Constant(None)
            if not ctx.get("returns"):
                return [ast.copy_location(ast.Return(value=value), s)]
            out = [_assign("do_return", ast.Constant(True)), _assign("retval_", value)]
            return [ast.copy_location(o, s) for o in out]
        if isinstance(s, ast.Break) and ctx.get("loop") is not None:
            return [ast.copy_location(_assign(ctx["loop"]["break"], ast.Constant(True)), s)]
        if isinstance(s, ast.Continue) and ctx.get("loop") is not None:
            return [ast.copy_location(_assign(ctx["loop"]["continue"], ast.Constant(True)), s)]
        if isinstance(s, ast.If):
            return self.if_(s, ctx, generated)
        if isinstance(s, ast.While):
            return self.while_(s, ctx)
        if isinstance(s, ast.For):
            return self.for_(s, ctx)
        if isinstance(s, ast.FunctionDef):
            return [self.function(s)]
        if isinstance(s, (ast.With, ast.AsyncWith)):
            s.items = [ast.withitem(context_expr=self.expr(w.context_expr),
                                    optional_vars=w.optional_vars) for w in s.items]
            s.body = self.block(s.body, ctx)
            return [s]
        if isinstance(s, ast.Try):
            s.body = self.block(s.body, ctx)
            for h in s.handlers:
                h.body = self.block(h.body, ctx)
            s.orelse = self.block(s.orelse, ctx)
            s.finalbody = self.block(s.finalbody, ctx)
            return [s]
        if isinstance(s, ast.ClassDef):
            return [s]
        return [_ExprRewriter(self).visit(s)]

    def expr(self, e: ast.expr) -> ast.expr:
        return _ExprRewriter(self).visit(e)

    def _state_defs(self, names: list[str], k: int) -> tuple[list[ast.stmt], str, str]:
        get_n, set_n = f"get_state_{k}", f"set_state_{k}"
        inits: list[ast.stmt] = []
        for n in names:
            if n in self.globals:  # a global keeps its value (and may be unset: read lazily)
                continue
            inits.append(_assign(n, _call(_ag("undefined_if_unbound"),
                                          [_call(_name("locals"), []), ast.Constant(n)])))
        get_def = _gen(ast.FunctionDef(name=get_n, args=_noargs(), body=[
            ast.Return(value=_tuple(names))], decorator_list=[], returns=None))
        set_body: list[ast.stmt] = self.decls(names)
        if names:
            set_body.append(ast.Assign(targets=[_tuple(names, True)], value=_name("vars_")))
        else:
            set_body.append(ast.Pass())
        set_def = _gen(ast.FunctionDef(name=set_n, args=_args(["vars_"]), body=set_body,
                                  decorator_list=[], returns=None))
        return inits + [get_def, set_def], get_n, set_n

    def decls(self, names: list[str]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        local = [n for n in names if n not in self.globals]
        glob = [n for n in names if n in self.globals]
        if local:
            out.append(ast.Nonlocal(names=local))
        if glob:
            out.append(ast.Global(names=glob))
        return out

    def state_names(self, nodes: list[ast.stmt], extra: Sequence[str] = ()) -> list[str]:
        names = [n for n in _stores(nodes) if n != _AG]
        for e in extra:
            if e not in names:
                names.append(e)
        return names

    def if_(self, s: ast.If, ctx: dict[str, Any], generated: bool) -> list[ast.stmt]:
        k = self.counter = self.counter + 1
        body = self.block(s.body, ctx)
        orelse = self.block(s.orelse, ctx)
        names = self.state_names(body + orelse)
        live = self.live_after(s, ctx.get("loop_nodes", [])) if not generated else set(names)
        live |= {n for n in names if n in ("do_return", "retval_") or n.startswith(
            ("break_", "continue_"))}
        defs, get_n, set_n = self._state_defs(names, k)
        decl = self.decls(names)
        body_def = _gen(ast.FunctionDef(name=f"if_body_{k}", args=_noargs(),
                                   body=decl + (body or [ast.Pass()]), decorator_list=[],
                                   returns=None))
        else_def = _gen(ast.FunctionDef(name=f"else_body_{k}", args=_noargs(),
                                   body=decl + (orelse or [ast.Pass()]), decorator_list=[],
                                   returns=None))
        call = ast.Expr(value=_call(_ag("if_stmt"), [
            self.expr(s.test), _name(f"if_body_{k}"), _name(f"else_body_{k}"), _name(get_n),
            _name(set_n), _strs(names), _strs([n for n in names if n in live])]))
        out = defs + [body_def, else_def, call]
        _at_head(call, s)
        return [ast.copy_location(o, s) for o in out]

    def _loop_ctx(self, s: ast.stmt, ctx: dict[str, Any], k: int) -> dict[str, Any]:
        loop: dict[str, Any] = {}
        if _contains(s.body, (ast.Break,), loops=False):  # type: ignore[attr-defined]
            loop["break"] = f"break_{k}"
        if _contains(s.body, (ast.Continue,), loops=False):  # type: ignore[attr-defined]
            loop["continue"] = f"continue_{k}"
        inner = dict(ctx)
        inner["loop"] = loop
        inner["loops"] = True
        inner["loop_nodes"] = list(ctx.get("loop_nodes", [])) + [s]
        return inner

    def _loop_body(self, s: ast.stmt, inner: dict[str, Any]) -> list[ast.stmt]:
        loop = inner["loop"]
        body = list(s.body)  # type: ignore[attr-defined]
        stmts = self.block(body, inner)
        if loop.get("continue"):
            stmts = [_assign(loop["continue"], ast.Constant(False))] + stmts
        return stmts

    def _loop_guard(self, inner: dict[str, Any], ctx: dict[str, Any]) -> list[str]:
        flags = []
        if inner["loop"].get("break"):
            flags.append(inner["loop"]["break"])
        if ctx.get("returns") and inner.get("has_return"):
            flags.append("do_return")
        return flags

    def while_(self, s: ast.While, ctx: dict[str, Any]) -> list[ast.stmt]:
        k = self.counter = self.counter + 1
        inner = self._loop_ctx(s, ctx, k)
        inner["has_return"] = _contains(s.body, (ast.Return,))
        stmts = self._loop_body(s, inner)
        flags = self._loop_guard(inner, ctx)
        extra = list(flags)
        names = self.state_names(stmts, extra)
        if inner["loop"].get("continue"):
            names = [n for n in names if n != inner["loop"]["continue"]]
        live = self.live_after(s, ctx.get("loop_nodes", [])) | set(flags)
        defs, get_n, set_n = self._state_defs(names, k)
        test: ast.expr = self.expr(s.test)
        if flags:
            test = _call(_ag("and_"), [ast.Lambda(args=_noargs(), body=self.not_any(flags)),
                                       ast.Lambda(args=_noargs(), body=test)])
        body_def = _gen(ast.FunctionDef(name=f"loop_body_{k}", args=_noargs(),
                                   body=self.decls(names) + (stmts or [ast.Pass()]),
                                   decorator_list=[], returns=None))
        test_def = _gen(ast.FunctionDef(name=f"loop_test_{k}", args=_noargs(),
                                   body=[ast.Return(value=test)], decorator_list=[], returns=None))
        pre = [_assign(f, ast.Constant(False)) for f in flags if f != "do_return"]
        call = ast.Expr(value=_call(_ag("while_stmt"), [
            _name(f"loop_test_{k}"), _name(f"loop_body_{k}"), _name(get_n), _name(set_n),
            _strs(names), _strs([n for n in names if n in live]), ast.Dict(keys=[], values=[])]))
        out = pre + defs + [body_def, test_def, call]
        _at_head(call, s)
        return [ast.copy_location(o, s) for o in out]

    def for_(self, s: ast.For, ctx: dict[str, Any]) -> list[ast.stmt]:
        k = self.counter = self.counter + 1
        inner = self._loop_ctx(s, ctx, k)
        inner["has_return"] = _contains(s.body, (ast.Return,))
        itr = f"itr_{k}"
        assign_target = ast.Assign(targets=[s.target], value=_name(itr))
        ast.copy_location(assign_target, s)
        stmts = [assign_target] + self._loop_body(s, inner)
        flags = self._loop_guard(inner, ctx)
        names = self.state_names(stmts, flags)
        if inner["loop"].get("continue"):
            names = [n for n in names if n != inner["loop"]["continue"]]
        # a variable first set in the loop is carried only if read after it (a temporary, or
        # the loop target, is set again in every iteration)
        live = self.live_after(s, ctx.get("loop_nodes", [])) | set(flags)
        defs, get_n, set_n = self._state_defs(names, k)
        body_def = _gen(ast.FunctionDef(name=f"loop_body_{k}", args=_args([itr]),
                                   body=self.decls(names) + stmts, decorator_list=[],
                                   returns=None))
        extra_test: ast.expr = ast.Constant(None)
        out_defs: list[ast.stmt] = []
        if flags:
            out_defs.append(_gen(ast.FunctionDef(name=f"extra_test_{k}", args=_noargs(),
                                            body=[ast.Return(value=self.not_any(flags))],
                                            decorator_list=[], returns=None)))
            extra_test = _name(f"extra_test_{k}")
        pre = [_assign(f, ast.Constant(False)) for f in flags if f != "do_return"]
        call = ast.Expr(value=_call(_ag("for_stmt"), [
            self.expr(s.iter), extra_test, _name(f"loop_body_{k}"), _name(get_n), _name(set_n),
            _strs(names), _strs([n for n in names if n in live]), ast.Dict(keys=[], values=[])]))
        out = pre + defs + [body_def] + out_defs + [call]
        _at_head(call, s)
        return [ast.copy_location(o, s) for o in out]

    # -- functions
    def function(self, f: ast.FunctionDef) -> ast.FunctionDef:
        sub = _Converter(f, self.recursive)
        sub.counter = self.counter + 100
        new = sub.convert_function(f, strip_decorators=False)
        self.counter = sub.counter
        return new

    def convert_function(self, f: ast.FunctionDef, strip_decorators: bool = True
                         ) -> ast.FunctionDef:
        body = list(f.body)
        doc: list[ast.stmt] = []
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            doc, body = body[:1], body[1:]
        control = _contains(body, (ast.If, ast.While, ast.For))
        body, _ = _conditional_returns(body)
        nested_return = any(_contains([s], (ast.Return,)) for s in body
                            if isinstance(s, (ast.If, ast.While, ast.For, ast.With, ast.Try)))
        ctx: dict[str, Any] = {"returns": bool(nested_return)}
        new_body: list[ast.stmt]
        if nested_return:
            new_body = [_assign("do_return", ast.Constant(False)),
                        _assign("retval_", _call(_ag("UndefinedReturnValue"), []))]
            new_body += self.block(body, ctx)
            new_body.append(ast.Return(value=_call(_ag("ret"), [_name("retval_"),
                                                               _name("do_return")])))
        elif control or body:
            new_body = self.block(body, ctx)
        else:
            new_body = body
        f.body = doc + (new_body or [ast.Pass()])
        if strip_decorators:
            f.decorator_list = []
        else:
            f.decorator_list = [self.expr(d) for d in f.decorator_list]
        return f


def _at_head(call: ast.Expr, s: ast.stmt) -> None:
    """The operator call of a converted statement is at the statement's first line (the
    line a traceback shows, as TensorFlow's source map does)."""
    for n in ast.walk(call.value.func):  # type: ignore[attr-defined]
        n.lineno = n.end_lineno = s.lineno  # type: ignore[attr-defined]
        n.col_offset = n.end_col_offset = s.col_offset  # type: ignore[attr-defined]


def _gen(f: ast.FunctionDef) -> ast.FunctionDef:
    f._ag_generated = True  # type: ignore[attr-defined]
    return f


def _noargs() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                         kwarg=None, defaults=[])


def _args(names: list[str]) -> ast.arguments:
    a = _noargs()
    a.args = [ast.arg(arg=n) for n in names]
    return a


class _ExprRewriter(ast.NodeTransformer):
    """``and``/``or``/``not``, ``x if c else y`` and calls, in expressions."""

    def __init__(self, conv: _Converter) -> None:
        self.conv = conv

    def visit_Lambda(self, node: ast.Lambda) -> Any:
        node.body = self.visit(node.body)
        return node

    def visit_Name(self, node: ast.Name) -> Any:
        if isinstance(node.ctx, ast.Load) and node.id in self.conv.assigned:
            return ast.copy_location(_call(_ag("ld"), [node]), node)
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        values = [self.visit(v) for v in node.values]
        fn = "and_" if isinstance(node.op, ast.And) else "or_"
        e = values[-1]
        for v in reversed(values[:-1]):
            e = _call(_ag(fn), [ast.Lambda(args=_noargs(), body=v),
                                ast.Lambda(args=_noargs(), body=e)])
        return ast.copy_location(e, node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call(_ag("not_"), [self.visit(node.operand)]), node)
        return self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        return ast.copy_location(_call(_ag("if_exp"), [
            self.visit(node.test), ast.Lambda(args=_noargs(), body=self.visit(node.body)),
            ast.Lambda(args=_noargs(), body=self.visit(node.orelse)),
            ast.Constant(ast.unparse(node))]), node)

    def visit_Call(self, node: ast.Call) -> Any:
        node = self.generic_visit(node)  # type: ignore[assignment]
        if not self.conv.recursive:
            return node
        f = node.func
        if isinstance(f, ast.Name) and f.id == "super" and not node.args and \
                self.conv.first_arg is not None:
            # zero-argument super() needs the method's own frame: name its arguments, as
            # TensorFlow's converter does (the body now runs in nested functions)
            node.args = [_name("__class__"), _name(self.conv.first_arg)]
            return node
        if isinstance(f, ast.Name) and f.id in ("super", "locals", "globals", "vars", "eval",
                                                "exec", "print", "isinstance", "len", "range"):
            return node
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                f.value.id == _AG:
            return node
        kw_keys: list[ast.expr | None] = []
        kw_vals: list[ast.expr] = []
        for k in node.keywords:
            kw_keys.append(ast.Constant(k.arg) if k.arg is not None else None)
            kw_vals.append(k.value)
        return ast.copy_location(_call(_ag("converted_call"), [
            f, ast.Tuple(elts=list(node.args), ctx=ast.Load()),
            ast.Dict(keys=kw_keys, values=kw_vals)]), node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        return self.conv.function(node)


def _parse(fn: Any) -> ast.FunctionDef:
    # the function's own code (a functools.wraps wrapper's, not the function it wraps)
    src = textwrap.dedent(inspect.getsource(fn.__code__))
    try:
        tree = ast.parse(src)
    except SyntaxError as e:
        raise _CannotConvert(str(e)) from None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef) or node.name != fn.__code__.co_name:
        raise _CannotConvert(f"no def of {fn.__code__.co_name} at the start of its source")
    first = fn.__code__.co_firstlineno
    ast.increment_lineno(tree, first - 1)
    return node


def _source_of(fn: Any, recursive: bool) -> tuple[ast.Module, ast.FunctionDef]:
    node = _parse(fn)
    _check_supported(node)
    conv = _Converter(node, recursive)
    new = conv.convert_function(node)
    freevars = list(fn.__code__.co_freevars)
    factory_body: list[ast.stmt] = [_assign(v, ast.Constant(None)) for v in freevars + [_AG]]
    factory_body += [new, ast.Return(value=_name(new.name))]
    factory = ast.FunctionDef(name="__autograph_factory", args=_noargs(), body=factory_body,
                              decorator_list=[], returns=None)
    mod = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(mod)
    return mod, new


def _convert(fn: Any, recursive: bool = True) -> Any:
    cached = _CACHE.get(fn)
    if cached is not None and recursive in cached:
        return cached[recursive]
    mod, new = _source_of(fn, recursive)
    filename = fn.__code__.co_filename
    code = compile(mod, filename, "exec")
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in factory_code.co_consts if isinstance(c, types.CodeType)
                 and c.co_name == new.name)
    cells = []
    own = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    for name in inner.co_freevars:
        if name == _AG:
            cells.append(types.CellType(_RUNTIME))
        elif name in own:
            cells.append(own[name])
        else:  # pragma: no cover - the factory binds only these names
            raise _CannotConvert(name)
    out = types.FunctionType(inner, fn.__globals__, fn.__name__, fn.__defaults__, tuple(cells))
    out.__kwdefaults__ = fn.__kwdefaults__
    out.__doc__ = fn.__doc__
    out.__qualname__ = fn.__qualname__
    out.__module__ = fn.__module__
    out.__dict__.update(fn.__dict__)
    out.__autograph_converted__ = True  # type: ignore[attr-defined]
    _CACHE.setdefault(fn, {})[recursive] = out
    return out


def _target(entity: Any) -> tuple[Any, Any]:
    """The plain function behind ``entity`` and how to rebuild it (bound methods)."""
    if isinstance(entity, types.MethodType):
        return entity.__func__, lambda f: types.MethodType(f, entity.__self__)
    python_fn = getattr(entity, "python_function", None)  # a tf.function object
    if python_fn is not None and inspect.isfunction(python_fn):
        return python_fn, lambda f: f
    return entity, lambda f: f


def to_graph(entity: Any, recursive: bool = True,
             experimental_optional_features: Any = None) -> Any:
    """The AutoGraph-converted form of a function or method (``tf.autograph.to_graph``).

    Called eagerly it behaves as ``entity``; its ``if``/``while``/``for``
    statements on tensors run as ``cond``/``while_loop`` (recorded by a
    tracing level, e.g. ``tf.function``, through the control-flow hook).

    >>> import tapegrad.tf as tf
    >>> def f(x):
    ...     if x > 0:
    ...         x = x * 2.0
    ...     return x
    >>> tf.autograph.to_graph(f)(tf.constant(-3.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=-3.0>
    """
    fn, rebuild = _target(entity)
    if not inspect.isfunction(fn):
        raise hinted(ValueError(with_hint(
            f"Cannot apply autograph to a function that doesn't expose a __code__ object. If "
            f"this is a @tf.function, try passing f.python_function instead. Got {entity!r}",
            "pass a def function or a method")))
    if getattr(fn, "__autograph_do_not_convert__", False) or fn.__name__ == "<lambda>":
        return entity
    try:
        return rebuild(_convert(fn, recursive))
    except (OSError, TypeError) as e:
        raise hinted(ValueError(with_hint(
            f"Unable to locate the source code of {entity!r}. Note that functions defined in "
            "certain environments, like the interactive Python shell, do not expose their "
            f"source code. If that is the case, you should define them in a .py source file. "
            f"If you are certain the code is graph-compatible, wrap the call using "
            f"@tf.autograph.experimental.do_not_convert. Original error: {e}",
            "define the function in a file AutoGraph can read"))) from None


def to_code(entity: Any, recursive: bool = True, experimental_optional_features: Any = None
            ) -> str:
    """The source of the converted function (``tf.autograph.to_code``)."""
    fn, _ = _target(entity)
    _, new = _source_of(fn, recursive)
    return ast.unparse(new) + "\n"


class _Experimental(types.SimpleNamespace):
    """``tf.autograph.experimental``."""


def do_not_convert(func: Any = None) -> Any:
    """Mark ``func`` so that AutoGraph calls it as it is (``tf.autograph.experimental``).

    >>> import tapegrad.tf as tf
    >>> @tf.autograph.experimental.do_not_convert
    ... def f(x):
    ...     return x
    >>> tf.autograph.to_graph(f) is f
    True
    """
    if func is None:
        return do_not_convert

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    wrapper.__autograph_do_not_convert__ = True  # type: ignore[attr-defined]
    return wrapper


def set_loop_options(parallel_iterations: Any = None, swap_memory: Any = None,
                     maximum_iterations: Any = None, shape_invariants: Any = None) -> None:
    """Options of the loop whose body calls this (``shape_invariants``: ``[(var, shape)]``)."""
    if not _LOOP_OPTS.stack:
        return
    opts = _LOOP_OPTS.stack[-1]
    if shape_invariants is not None:
        opts["shape_invariants"] = list(shape_invariants)
    if maximum_iterations is not None:
        opts.setdefault("maximum_iterations", int(maximum_iterations))


experimental = _Experimental(do_not_convert=do_not_convert, set_loop_options=set_loop_options,
                             Feature=types.SimpleNamespace(ALL="ALL", AUTO_CONTROL_DEPS="AUTO",
                                                           ASSERT_STATEMENTS="ASSERT",
                                                           BUILTIN_FUNCTIONS="BUILTIN",
                                                           EQUALITY_OPERATORS="EQ",
                                                           LISTS="LISTS", NAME_SCOPES="NS"))
