"""TensorFlow's control flow: ``tf.cond``, ``tf.while_loop``, ``tf.switch_case``, ``tf.case``,
``tf.TensorArray``.

Each function checks its arguments as TensorFlow does, flattens the nests of
values it is given (``tf.nest`` order) and runs the style-neutral op of
``tapegrad.ops.control``: eagerly, only the branch taken runs (and a loop
runs as a Python loop of ordinary ops), so ``tf.GradientTape`` records exactly
what ran.  Eager TensorFlow does not compare the two branches of a ``cond``
nor the shapes of loop variables across iterations; inside a trace (a level
that records programs, ``tf.function``) every branch is traced, and then the
branches' structures and dtypes and the loop variables' shapes are checked
with TensorFlow's graph-mode errors.  Those errors name a loop variable by the
``_trace_name`` a tracing level gives its tensor (TensorFlow's graph name,
``x:0``), else ``loop_var_<i>:0``.

>>> import tapegrad.tf as tf
>>> x = tf.constant(3.0)
>>> with tf.GradientTape() as tape:
...     tape.watch(x)
...     i, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), (0, 1.0))
>>> float(y), float(tape.gradient(y, x))
(27.0, 27.0)
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import ops
from .._core.dispatch import control
from .._core.errors import hinted, with_hint
from .._core.mode import STATE as _STATE
from .._core.tensor import Tensor as _Core
from ..ops import control as _ctl
from . import _nest
from . import dtypes as _dt
from ._tensor import TensorShape, VariableBase, convert, read, tft
from .errors import InvalidArgumentError, OutOfRangeError

__all__ = ["cond", "while_loop", "switch_case", "case", "TensorArray"]

Fn = Callable[..., Any]


# ---------------------------------------------------------------- tf.nest's error text
def _type_name(x: Any) -> str:
    if isinstance(x, _Core):
        return "ResourceVariable" if isinstance(x, VariableBase) else "EagerTensor"
    return type(x).__name__


def _desc(x: Any) -> str:
    return f"type={_type_name(x)} str={x!s}"


def _dots(x: Any) -> str:
    """A structure with every leaf printed as ``.`` (TensorFlow's "Entire structure")."""
    if isinstance(x, Mapping):
        return "{" + ", ".join(f"{k!r}: {_dots(x[k])}" for k in x) + "}"
    if isinstance(x, tuple):
        inner = [_dots(v) for v in x]
        if hasattr(x, "_fields"):
            return type(x).__name__ + "(" + ", ".join(
                f"{f}={v}" for f, v in zip(x._fields, inner)) + ")"
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    if isinstance(x, list):
        return "[" + ", ".join(_dots(v) for v in x) + "]"
    return "."


def _first_difference(a: Any, b: Any) -> str | None:
    """TensorFlow's "More specifically" line for the first place ``a`` and ``b`` differ."""
    na, nb = _nest.is_nested(a), _nest.is_nested(b)
    if na != nb:
        seq, other = (a, b) if na else (b, a)
        return (f'Substructure "{_desc(seq)}" is a sequence, while substructure '
                f'"{_desc(other)}" is not')
    if not na:
        return None
    ta, tb = type(a), type(b)
    if ta is not tb and not (isinstance(a, Mapping) and isinstance(b, Mapping)):
        return (f"The two namedtuples don't have the same sequence type. First structure "
                f"{_desc(a)} has type {ta.__name__}, while second structure {_desc(b)} has type "
                f"{tb.__name__}")
    if isinstance(a, Mapping):
        ka, kb = _nest._sorted_keys(a), _nest._sorted_keys(b)
        if set(ka) != set(kb):
            return (f"The two dictionaries don't have the same set of keys. First structure has "
                    f"keys type=list str={ka}, while second structure has keys type=list "
                    f"str={kb}")
        pairs = [(a[k], b[k]) for k in ka]
    else:
        if len(a) != len(b):
            return (f"The two structures don't have the same number of elements. First "
                    f"structure: {_desc(a)}. Second structure: {_desc(b)}")
        pairs = list(zip(a, b))
    for x, y in pairs:
        d = _first_difference(x, y)
        if d is not None:
            return d
    return None


def structure_mismatch(a: Any, b: Any) -> str | None:
    """``tf.nest.assert_same_structure(a, b)``'s message, or ``None`` when they match."""
    d = _first_difference(a, b)
    if d is None:
        return None
    return ("The two structures don't have the same nested structure.\n\n"
            f"First structure: {_desc(a)}\n\nSecond structure: {_desc(b)}\n\n"
            f"More specifically: {d}\nEntire first structure:\n{_dots(a)}\n"
            f"Entire second structure:\n{_dots(b)}")


def _spec(x: Any) -> Any:
    """``tf.type_spec_from_value``: a TensorSpec for tensors and Python numbers."""
    from .data.spec import TensorSpec

    if isinstance(x, TensorArray):
        return x
    t = x if isinstance(x, _Core) else convert(x)
    return TensorSpec(tuple(t._data.shape), _dt.as_dtype(t._data.dtype))


# ---------------------------------------------------------------- values at a trace boundary
def _tracing(name: str) -> bool:
    """Whether a level that records programs (tracing) will take the op ``name``."""
    return control(name) is not None


def _to_flat_tensor(x: Any) -> Any:
    """A leaf as the tensor a trace carries (a TensorArray as its buffer of elements)."""
    if isinstance(x, TensorArray):
        return x._as_buffer()
    if isinstance(x, VariableBase):
        return read(x)
    if isinstance(x, _Core):
        return x
    return convert(x)


def _shape_text(shape: Sequence[int | None] | None) -> str:
    return str(TensorShape(None if shape is None else list(shape)))


def _name(t: Any, i: int) -> str:
    n = getattr(t, "_trace_name", None)
    if isinstance(n, str):
        return n
    from ..autodiff import tracing

    lv = t.__dict__.get("_lvl") if isinstance(t, _Core) else None
    if isinstance(lv, tracing.TraceLevel):  # a function's input keeps its name (x:0)
        s = t.__dict__.get("_slot")
        if s is not None and lv.kinds[s] == tracing.IN and lv.names[s]:
            return f"{lv.names[s]}:0"
    return f"loop_var_{i}:0"


class _Branch:
    """A branch function of no arguments seen by the core as ``() -> flat tuple``."""

    def __init__(self, fn: Fn, traced: bool, label: str, peers: list[_Branch],
                 op: str) -> None:
        self.fn = fn
        self.traced = traced
        self.label = label
        self.peers = peers
        self.op = op
        self.structure: Any = None
        self.flat: tuple[Any, ...] = ()
        self.ran = False

    def __call__(self, *args: Any) -> tuple[Any, ...]:
        out = self.fn()
        self.structure = out
        leaves = _nest.flatten(out)
        if self.traced:
            leaves = [None if v is None else _to_flat_tensor(v) for v in leaves]
            self.flat = tuple(v for v in leaves if v is not None)
            self._check()
        else:
            self.flat = tuple(leaves)
        self.ran = True
        return self.flat

    def _check(self) -> None:
        """Graph mode: this branch's outputs against those of a branch traced before it."""
        for other in self.peers:
            if other is self or not other.ran:
                continue
            a, b = other, self
            if len(a.flat) != len(b.flat):
                raise hinted(AssertionError(with_hint(
                    f"[{len(a.flat)}, {len(b.flat)}]",
                    f"the branches of {self.op} return different numbers of tensors")))
            details = structure_mismatch(a.structure, b.structure)
            if details is None:
                for x, y in zip(a.flat, b.flat):
                    if x._data.dtype != y._data.dtype:
                        details = f"{x!r} and {y!r} have different types"
                        break
            if details is not None:
                raise hinted(TypeError(with_hint(
                    f"{a.label} and {b.label} arguments to {self.op} must have the same number, "
                    "type, and overall structure of return values.\n\n"
                    f"{a.label} output: {a.structure!s}\n{b.label} output: {b.structure!s}\n\n"
                    f"Error details:\n{details}",
                    "every branch must return the same nest of tensors with the same dtypes "
                    "(shapes may differ)")))
            return

    def pack(self, flat: Sequence[Any]) -> Any:
        """The branch's structure with ``flat`` (the op's outputs) as its leaves."""
        if not self.traced:
            return _nest.pack_sequence_as(self.structure, list(flat))
        it = iter(flat)
        leaves = [None if v is None else next(it) for v in _nest.flatten(self.structure)]
        return _nest.pack_sequence_as(self.structure, leaves)


def _unpack_if_singleton(x: Any) -> Any:
    if isinstance(x, (list, tuple)) and len(x) == 1:
        return x[0]
    return x


# ---------------------------------------------------------------- tf.cond
def cond(pred: Any, true_fn: Fn | None = None, false_fn: Fn | None = None,
         name: str | None = None) -> Any:
    """``true_fn()`` if ``pred`` else ``false_fn()``, as ``tf.cond``.

    Eagerly only the branch taken runs and its result (any nest, Python values
    included) is returned as it is.  Inside a trace both branches are traced
    and must return the same structure and dtypes.

    >>> import tapegrad.tf as tf
    >>> x = tf.constant(2.0)
    >>> tf.cond(x > 1.0, lambda: x * 10.0, lambda: x)
    <tf.Tensor: shape=(), dtype=float32, numpy=20.0>
    """
    return _cond(pred, true_fn, false_fn, strict=True)


def _cond(pred: Any, true_fn: Fn | None, false_fn: Fn | None, strict: bool) -> Any:
    if true_fn is None:
        raise hinted(TypeError(with_hint("cond(): 'true_fn' argument required",
                                         "pass the function of the true branch")))
    if false_fn is None:
        raise hinted(TypeError(with_hint("cond(): 'false_fn' argument required",
                                         "pass the function of the false branch")))
    if not callable(true_fn):
        raise hinted(TypeError(with_hint("'true_fn' must be callable.",
                                         "pass a function (e.g. a lambda), not its value")))
    if not callable(false_fn):
        raise hinted(TypeError(with_hint("'false_fn' must be callable.",
                                         "pass a function (e.g. a lambda), not its value")))
    traced = _tracing("cond")
    if isinstance(pred, VariableBase):
        pred = read(pred)
    elif not isinstance(pred, _Core):
        pred = convert(pred)
    # both branches run when traced, or under vmap with a per-example predicate (pfor)
    both = traced or _ctl.is_batched(pred)
    peers: list[_Branch] = []
    tb = _Branch(true_fn, both, "true_fn", peers, "tf.cond")
    fb = _Branch(false_fn, both, "false_fn", peers, "tf.cond")
    peers += [tb, fb]
    flat = _ctl.cond(pred, tb, fb)
    # eagerly one branch ran; traced or under vmap both did, with equal structures
    taken = fb if (fb.ran and not tb.ran) else tb
    result = taken.pack(flat)
    return result if strict else _unpack_if_singleton(result)


# ---------------------------------------------------------------- tf.while_loop
def _loop_list(x: Any) -> list[Any]:
    """``list(x)`` as TensorFlow's eager loop takes it (a scalar tensor cannot be iterated)."""
    if isinstance(x, (list, tuple)):
        return list(x)
    if isinstance(x, _Core):
        if x._data.ndim == 0:
            raise hinted(TypeError(with_hint(
                "Cannot iterate over a scalar tensor.",
                "loop_vars (and the body's result) must be a list or tuple: write (x,)")))
        return list(x)
    return list(x)


def while_loop(cond: Fn, body: Fn, loop_vars: Any, shape_invariants: Any = None,
               parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
               maximum_iterations: Any = None, name: str | None = None) -> Any:
    """Repeat ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``, as ``tf.while_loop``.

    ``loop_vars`` is a tuple or list of tensors, Python numbers, TensorArrays
    or nests of them; the result has the structure the body returns.  Eagerly
    the loop variables may change shape (TensorFlow's eager loop does not
    check); inside a trace a shape must stay compatible with its entry shape
    or its entry in ``shape_invariants``.  ``back_prop=False`` stops
    gradients through the results inside a trace (eager TensorFlow ignores
    it, and so does tapegrad eagerly); ``parallel_iterations`` and
    ``swap_memory`` are accepted (one thread runs the loop).

    >>> import tapegrad.tf as tf
    >>> tf.while_loop(lambda i: i < 10, lambda i: (i + 3,), (tf.constant(0),))
    (<tf.Tensor: shape=(), dtype=int32, numpy=12>,)
    """
    if not callable(cond):
        raise hinted(TypeError(with_hint("'cond' must be callable.",
                                         "pass the loop condition as a function")))
    if not callable(body):
        raise hinted(TypeError(with_hint("'body' must be callable.",
                                         "pass the loop body as a function")))
    if parallel_iterations < 1:
        raise hinted(TypeError(with_hint("'parallel_iterations' must be a positive integer.",
                                         "use parallel_iterations=1 or more")))
    loop_vars = _nest.map_structure(lambda v: read(v) if isinstance(v, VariableBase) else v,
                                    loop_vars)
    empty = (len(loop_vars) == 0) if isinstance(loop_vars, (list, tuple, Mapping)) else \
        not bool(loop_vars)
    if empty:
        raise hinted(ValueError(with_hint("'loop_vars' must be provided.",
                                          "give the loop variables as a tuple: (x,)")))
    max_iter: int | None = None
    if maximum_iterations is not None:
        m = convert(maximum_iterations)
        if m._data.ndim != 0:
            raise hinted(ValueError(with_hint(
                f"'maximum_iterations' must be a scalar. Received shape: {m.shape}",
                "pass one number")))
        max_iter = int(m._data)
    if not isinstance(loop_vars, (list, tuple)):
        loop_vars = _loop_list(loop_vars)
    if _STATE.levels:  # under vmap the loop may select per example: numbers as TF tensors
        loop_vars = _nest.map_structure(
            lambda v: convert(v) if isinstance(v, (bool, int, float)) else v, loop_vars)
    traced = _tracing("while_loop")
    if traced:
        result = _traced_while(cond, body, loop_vars, shape_invariants, max_iter)
    else:
        result = _eager_while(cond, body, loop_vars, max_iter)
    if not back_prop and traced:  # eager TensorFlow ignores back_prop; graph mode stops it
        result = _nest.map_structure(_stop, result)
    return result


def _final(v: Any) -> Any:
    if isinstance(v, TensorArray):
        return v
    return convert(v)


_LEAF = (_Core, bool, int, float, np.ndarray, np.generic)


def _flat_leaves(xs: Sequence[Any]) -> bool:
    """Whether every item is a plain leaf (a tensor, number or TensorArray): no nest."""
    return all(isinstance(v, _LEAF) or type(v) is TensorArray for v in xs)


def _eager_while(cond: Fn, body: Fn, loop_vars: Sequence[Any], max_iter: int | None) -> Any:
    """TensorFlow's eager loop: structure checked after each iteration, shapes free."""
    from .data.spec import TensorSpec

    n = len(loop_vars)
    # the common case, a flat tuple/list of tensors and numbers, skips the nest machinery
    simple = max_iter is None and _flat_leaves(loop_vars)
    spec: Any = None
    state: dict[str, Any] = {"structure": loop_vars, "count": 0}

    def check(got: Any) -> None:
        nonlocal spec
        if spec is None:
            if max_iter is None:
                spec = [_nest.map_structure(_spec, v) for v in loop_vars]
            else:  # TensorFlow's eager loop carries (counter, loop_vars) when capped
                spec = [TensorSpec((), _dt.int32), _nest.map_structure(_spec, loop_vars)]
        msg = structure_mismatch(spec, got)
        if msg is not None:
            raise hinted(ValueError(with_hint(
                msg, "the body must return the loop variables in the structure they came in")))

    def c(*flat: Any) -> Any:
        if simple:
            return cond(*flat)
        return cond(*_nest.pack_sequence_as(state["structure"], list(flat)))

    def b(*flat: Any) -> tuple[Any, ...]:
        if simple:
            out = body(*flat)
            if isinstance(out, (list, tuple)) and len(out) == n and _flat_leaves(out):
                state["structure"] = out
                return tuple(out)
        else:
            out = body(*_nest.pack_sequence_as(state["structure"], list(flat)))
        state["count"] += 1
        check(_loop_list(out) if max_iter is None else [state["count"], out])
        state["structure"] = out
        return tuple(_nest.flatten(out))

    flat = _ctl.while_loop(c, b, tuple(_nest.flatten(loop_vars)), max_iter)
    return _nest.map_structure(_final, _nest.pack_sequence_as(state["structure"], list(flat)))


def _stop(v: Any) -> Any:
    if isinstance(v, TensorArray):
        return v
    return ops.identity(v.detach()) if isinstance(v, _Core) else v


def _traced_while(cond: Fn, body: Fn, loop_vars: Sequence[Any], shape_invariants: Any,
                  max_iter: int | None) -> Any:
    """Graph mode: tensors at the boundary, the body's outputs checked against the entry."""
    entry = list(loop_vars)
    leaves = _nest.flatten(entry)
    flat_in = tuple(_to_flat_tensor(v) for v in leaves)
    invariants: list[Any] = [None] * len(leaves)
    if shape_invariants is not None:
        inv = _nest.flatten(list(shape_invariants) if isinstance(shape_invariants, tuple)
                            else shape_invariants)
        invariants = [i if isinstance(i, TensorShape) else TensorShape(i) for i in inv]

    def rebuild(flat: Sequence[Any]) -> Any:
        vals = [leaf._from_buffer(t) if isinstance(leaf, TensorArray) else t
                for leaf, t in zip(leaves, flat)]
        return _nest.pack_sequence_as(entry, vals)

    def c(*flat: Any) -> Any:
        return cond(*rebuild(flat))

    def b(*flat: Any) -> tuple[Any, ...]:
        out = body(*rebuild(flat))
        as_list = _loop_list(out)
        msg = structure_mismatch(as_list, list(entry))
        if msg is not None:
            raise hinted(ValueError(with_hint(
                msg, "the body must return the loop variables in the structure they came in")))
        res = tuple(_to_flat_tensor(v) for v in _nest.flatten(as_list))
        for i, (x, y, inv) in enumerate(zip(flat_in, res, invariants)):
            nm = _name(x, i)
            if x._data.dtype != y._data.dtype:
                raise hinted(TypeError(with_hint(
                    f"Loop var {nm} enters the loop with type {_dt.as_dtype(x._data.dtype)!s} "
                    f"but has type {_dt.as_dtype(y._data.dtype)!s} after 1 iteration. {nm} type "
                    "should remain constant.", "cast inside the body to keep the dtype")))
            allowed = inv if inv is not None else TensorShape(list(x._data.shape))
            if not _subshape(y._data.shape, allowed):
                raise hinted(ValueError(with_hint(
                    f"Input tensor `{nm}` enters the loop with shape "
                    f"{_shape_text(x._data.shape)}, but has shape {_shape_text(y._data.shape)} "
                    "after one iteration. To allow the shape to vary across iterations, use the "
                    "`shape_invariants` argument of tf.while_loop to specify a less-specific "
                    "shape.", "pass shape_invariants with None for the dimensions that change")))
        return res

    flat = _ctl.while_loop(c, b, flat_in, max_iter)
    # graph mode returns the loop variables' own structure (a tuple stays a tuple)
    return _nest.pack_sequence_as(loop_vars, _nest.flatten(rebuild(flat)))


def _subshape(shape: Sequence[int], allowed: TensorShape) -> bool:
    dims = allowed.dims if allowed.rank is not None else None
    if dims is None:
        return True
    if len(dims) != len(shape):
        return False
    return all(d is None or d == s for d, s in zip(dims, shape))


# ---------------------------------------------------------------- tf.switch_case, tf.case
def _is_tf_tensor(x: Any) -> bool:
    return isinstance(x, _Core) and not isinstance(x, VariableBase)


def switch_case(branch_index: Any, branch_fns: Any, default: Fn | None = None,
                name: str = "switch_case") -> Any:
    """``branch_fns[branch_index]()``, as ``tf.switch_case``.

    ``branch_fns`` is a list of callables, a list of ``(int, callable)`` pairs
    or a dict; an index out of range runs ``default`` (or, with none, the
    last branch).

    >>> import tapegrad.tf as tf
    >>> tf.switch_case(tf.constant(1), [lambda: tf.constant(10), lambda: tf.constant(20)])
    <tf.Tensor: shape=(), dtype=int32, numpy=20>
    """
    if not _is_tf_tensor(branch_index):
        raise hinted(TypeError(with_hint(
            f"'branch_index' must be a Tensor, got {type(branch_index)}",
            "wrap the index: tf.constant(i)")))
    if branch_index._data.dtype.kind not in "iu":
        raise hinted(TypeError(with_hint(
            f"'branch_index' must be an integer Tensor, got {branch_index.dtype!s}",
            "cast the index to tf.int32")))
    if not branch_fns:
        raise hinted(ValueError(with_hint("Must provide at least one item in 'branch_fns'",
                                          "give at least one branch")))
    if not isinstance(branch_fns, (list, tuple, dict)):
        raise hinted(TypeError(with_hint("'branch_fns' must be a list, tuple, or dict",
                                         "give the branches as a list of functions")))
    pairs: Any = branch_fns.items() if isinstance(branch_fns, dict) else branch_fns
    if all(callable(fn) for fn in pairs):
        pairs = list(enumerate(pairs))
    pairs = list(pairs)
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise hinted(TypeError(with_hint(
                f"Each entry in 'branch_fns' must be a 2-tuple. Received {pair}.",
                "give (index, function) pairs or only functions")))
        key, fn = pair
        if not isinstance(key, int):
            raise hinted(TypeError(with_hint(f"key must be a Python `int`, got {type(key)}",
                                             "branch keys are Python ints 0..n-1")))
        if not callable(fn):
            raise hinted(TypeError(with_hint(f"fn for key {key} must be callable.",
                                             "pass functions, not their values")))
    keys = [p[0] for p in pairs]
    if min(keys) < 0 or max(keys) >= len(keys) or len(set(keys)) != len(keys):
        raise hinted(ValueError(with_hint(
            f"branch indices (keys) must form contiguous range of [0 to {len(keys)}) but found "
            "{" + ",".join(map(str, sorted(keys))) + "}", "number the branches 0, 1, ..., n-1")))
    actions = [p[1] for p in sorted(pairs, key=lambda p: p[0])]
    if default is not None:
        actions.append(default)
    both = _tracing("switch_case") or _ctl.is_batched(branch_index)
    peers: list[_Branch] = []
    branches = [_Branch(fn, both, f"branches[{i}]", peers, "tf.switch_case")
                for i, fn in enumerate(actions)]
    peers += branches
    # an index out of range runs the last entry: default if given, else the highest key
    flat = _ctl.switch_case(branch_index, branches)
    ran = [br for br in branches if br.ran]
    return ran[0].pack(flat)


def case(pred_fn_pairs: Any, default: Fn | None = None, exclusive: bool = False,
         strict: bool = False, name: str = "case") -> Any:
    """The function of the first ``(pred, fn)`` pair whose predicate is true, as ``tf.case``.

    With no ``default`` the last pair is the default, and TensorFlow's
    assertion fails when no predicate holds.  Singleton results are unpacked
    unless ``strict=True``.

    >>> import tapegrad.tf as tf
    >>> x = tf.constant(3.0)
    >>> tf.case([(x < 2.0, lambda: tf.constant(1)), (x < 4.0, lambda: tf.constant(2))],
    ...         default=lambda: tf.constant(3))
    <tf.Tensor: shape=(), dtype=int32, numpy=2>
    """
    if not isinstance(pred_fn_pairs, (list, tuple, dict)):
        raise hinted(TypeError(with_hint(
            f"'pred_fn_pairs' must be a list, tuple, or dict. Received: {type(pred_fn_pairs)}",
            "give a list of (predicate, function) pairs")))
    if isinstance(pred_fn_pairs, collections.OrderedDict):
        pairs = list(pred_fn_pairs.items())
    elif isinstance(pred_fn_pairs, dict):
        if not exclusive:
            raise hinted(ValueError(with_hint(
                "Unordered dictionaries are not supported for the 'pred_fn_pairs' argument "
                "when `exclusive=False` and eager mode is enabled.",
                "give a list of (predicate, function) pairs: its order decides")))
        pairs = list(pred_fn_pairs.items())
    else:
        pairs = list(pred_fn_pairs)
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise hinted(TypeError(with_hint(
                f"Each entry in 'pred_fn_pairs' must be a 2-tuple. Received {pair}.",
                "give (predicate, function) pairs")))
        pred, fn = pair
        if isinstance(pred, _Core):
            if pred._data.dtype != np.bool_:
                raise hinted(AttributeError(with_hint(
                    "Tensor.name is undefined when eager execution is enabled.",
                    "a predicate must be a boolean tensor (TensorFlow fails while naming it)")))
        else:
            raise hinted(TypeError(with_hint(f"pred must be a Tensor, got: {pred}",
                                             "wrap the predicate: tf.constant(flag)")))
        if not callable(fn):
            raise hinted(AttributeError(with_hint(
                "Tensor.name is undefined when eager execution is enabled.",
                "the second entry of each pair must be a function")))
    preds = [p for p, _ in pairs]
    actions = [f for _, f in pairs]
    if default is None:
        k = len(preds) - 1
        last_pred, last_action = preds[k], actions[k]
        preds, actions = preds[:k], actions[:k]

        def default_action() -> Any:
            if not _tracing("cond") and not _ctl.is_batched(last_pred) and \
                    not _ctl.truth(last_pred):
                shown = ", ".join(str(bool(np.asarray(p._data))) for p in preds + [last_pred])
                raise hinted(InvalidArgumentError(None, None, with_hint(
                    f"Expected '{last_pred!s}' to be true. Summarized data: b'Input error: "
                    f"None of conditions evaluated as True:'\n{shown}",
                    "give tf.case a default, or make sure one predicate holds")))
            return last_action()

        default = default_action
    chain: Fn = default
    for p, a in reversed(list(zip(preds, actions))):
        chain = _bind_cond(p, a, chain, strict)
    return chain()


def _bind_cond(p: Any, a: Fn, rest: Fn, strict: bool) -> Fn:
    return lambda: _cond(p, a, rest, strict)


# ---------------------------------------------------------------- tf.TensorArray
def _index(i: Any) -> int:
    if isinstance(i, _Core):
        if i._lvl is not None:
            i._lvl_read("item")
        return int(np.asarray(i._data))
    return int(i)


def _compatible(shape: TensorShape, dims: Sequence[int]) -> bool:
    return _subshape(dims, shape)


class _Store:
    """The storage that the TensorArrays returned by ``write`` share (TensorFlow's eager impl)."""

    def __init__(self, size: int) -> None:
        self.items: list[Any] = [None] * size
        self.read_before: list[int] = []


class TensorArray:
    """``tf.TensorArray``: a list of tensors of one dtype, for loops.

    As in eager TensorFlow, ``write``/``unstack``/``scatter``/``split``
    return a TensorArray (use it for what follows); elements never written
    read as zeros of ``element_shape``; with ``clear_after_read`` (the
    default) an element can be read once.  Reads and writes are recorded, so
    gradients flow from ``stack()``/``read()`` back to what was written.
    Passed through a traced ``while_loop`` or ``cond``, the array travels as
    one tensor of shape ``(size,) + element_shape`` (graph mode: fixed size,
    elements read any number of times).

    >>> import tapegrad.tf as tf
    >>> ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    >>> ta = ta.write(0, 10.0).write(1, 20.0)
    >>> ta.stack()
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([10., 20.], dtype=float32)>
    """

    def __init__(self, dtype: Any, size: Any = None, dynamic_size: bool | None = None,
                 clear_after_read: bool | None = None, tensor_array_name: str | None = None,
                 handle: Any = None, flow: Any = None, infer_shape: bool = True,
                 element_shape: Any = None, colocate_with_first_write_call: bool = True,
                 name: str | None = None) -> None:
        if handle is not None:
            raise hinted(ValueError(with_hint(
                "TensorArray handles are not supported when eager execution is enabled.",
                "create the TensorArray with a dtype and a size")))
        if size is None:
            raise hinted(ValueError(with_hint(
                "Size must be declared for TensorArrays when eager execution is enabled.",
                "pass size= (size=0, dynamic_size=True for a growing array)")))
        self._dtype = _dt.as_dtype(dtype)
        self._npd = _dt.np_dtype(self._dtype)
        self._dynamic_size = bool(dynamic_size)
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._infer_shape = infer_shape
        self._element_shape = [element_shape if isinstance(element_shape, TensorShape)
                               else TensorShape(element_shape)]
        self._store = _Store(_index(size))
        self._buffer: Any = None  # graph mode: one tensor (size, *element_shape)

    # -- views sharing the storage (what write returns)
    def _view(self, store: _Store | None = None, buffer: Any = None) -> TensorArray:
        new = object.__new__(TensorArray)
        new.__dict__.update(self.__dict__)
        if store is not None:
            new._store = store
        new._buffer = buffer
        return new

    @property
    def dtype(self) -> Any:
        return self._dtype

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape[0]

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    @property
    def flow(self) -> Any:
        return tft(np.zeros((), np.int32))

    @property
    def handle(self) -> Any:
        return None

    def identity(self) -> TensorArray:
        return self._view(self._store, self._buffer)

    def grad(self, source: Any, flow: Any = None, name: str | None = None) -> Any:
        raise hinted(NotImplementedError(with_hint(
            "TensorArray.grad is not supported when executing eagerly; eager's gradient "
            "implementation does not use/need this function to compute gradients of operations "
            "that use TensorArrays.", "use tf.GradientTape around the reads and writes")))

    def _len(self) -> int:
        if self._buffer is not None:
            return int(self._buffer._data.shape[0])
        return len(self._store.items)

    def _zeros(self) -> Any:
        shape = self.element_shape
        if not shape.is_fully_defined():
            raise hinted(ValueError(with_hint(
                f"Cannot convert a partially known TensorShape {shape} to a Tensor.",
                "write every element first, or give the TensorArray an element_shape")))
        return tft(np.zeros(tuple(int(d or 0) for d in shape.as_list()), self._npd))

    def _maybe_zero(self, ix: int) -> Any:
        items = self._store.items
        if items[ix] is None:
            items[ix] = self._zeros()
        return items[ix]

    # -- reading
    def read(self, index: Any, name: str | None = None) -> Any:
        """The element at ``index`` (zeros if never written)."""
        if self._buffer is not None:
            return ops.getitem(self._buffer, index if isinstance(index, _Core) and
                               index._lvl is not None else _index(index))
        i = _index(index)
        if i < 0:
            raise hinted(OutOfRangeError(None, None, with_hint(
                f"Reading from negative indices (index {i}) is not allowed.",
                "TensorArray indices start at 0")))
        n = self._len()
        if i >= n:
            raise hinted(OutOfRangeError(None, None, with_hint(
                f"Tried to read from index {i} but array size is: {n} ",
                f"read an index below {n}")))
        items = self._store.items
        value = items[i]
        if value is None:
            if i in self._store.read_before:
                raise hinted(InvalidArgumentError(None, None, with_hint(
                    f"Could not read index {i} twice because it was cleared after a previous "
                    "read (perhaps try setting clear_after_read = false?)",
                    "create the TensorArray with clear_after_read=False to read an element "
                    "more than once")))
            value = self._maybe_zero(i)
        if self._clear_after_read:
            items[i] = None
            self._store.read_before.append(i)
        return value

    def stack(self, name: str | None = None) -> Any:
        """All elements stacked along a new first axis."""
        if self._buffer is not None:
            return self._buffer
        items = self._store.items
        for ix in range(len(items)):
            self._maybe_zero(ix)
        if not items:
            shape = self.element_shape
            dims = tuple(int(d or 0) for d in shape.as_list()) if shape.is_fully_defined() else ()
            return tft(np.zeros((0, *dims), self._npd))
        return ops.stack(list(items), axis=0)

    def gather(self, indices: Any, name: str | None = None) -> Any:
        """The elements at ``indices``, stacked."""
        # a traced tensor's array keeps its mark (a value taken from it is noted)
        idx = indices._data if isinstance(indices, _Core) else np.asarray(indices)
        if self._buffer is not None:
            return ops.take(self._buffer, tft(idx.astype(np.int64)), axis=0)
        return ops.stack([self._maybe_zero(int(i)) for i in idx.reshape(-1)], axis=0)

    def concat(self, name: str | None = None) -> Any:
        """All elements joined along their first axis."""
        if self._buffer is not None:
            b = self._buffer
            if b._data.ndim < 2:
                raise hinted(InvalidArgumentError(None, None, with_hint(
                    "Concat saw a scalar shape at index 0 but requires at least vectors.",
                    "use stack() for scalar elements")))
            return ops.reshape(b, (-1,) + tuple(b._data.shape[2:]))
        parts = [self._maybe_zero(ix) for ix in range(self._len())]
        for ix, p in enumerate(parts):
            if p._data.ndim == 0:
                raise hinted(InvalidArgumentError(None, None, with_hint(
                    f"Concat saw a scalar shape at index {ix} but requires at least vectors.",
                    "use stack() for scalar elements")))
        return ops.concatenate(parts, axis=0)

    def size(self, name: str | None = None) -> Any:
        """The number of elements, an int32 tensor."""
        return tft(np.asarray(self._len(), np.int32))

    def close(self, name: str | None = None) -> None:
        del self._store.items[:]

    # -- writing
    def _check_value(self, value: Any) -> Any:
        if not isinstance(value, _Core):
            value = convert(value, dtype_hint=self._dtype)
        elif isinstance(value, VariableBase):
            value = read(value)
        else:
            value = convert(value)
        got = _dt.as_dtype(value._data.dtype)
        if got != self._dtype:
            raise hinted(InvalidArgumentError(None, None, with_hint(
                f"TensorArray dtype is {self._dtype.name} but Op is trying to write dtype "
                f"{got.name} ", f"cast the value to tf.{self._dtype.name} first")))
        shape = self.element_shape
        dims = value._data.shape
        if not _compatible(shape, dims):
            raise hinted(ValueError(with_hint(
                f"Incompatible shape for value ({_shape_text(dims)}), expected ({shape})",
                "every element of a TensorArray has the same shape")))
        if self._infer_shape and not shape.is_fully_defined():
            self._element_shape[0] = TensorShape(list(dims))
        return value

    def _write(self, index: int, value: Any) -> None:
        if index < 0:
            raise hinted(OutOfRangeError(None, None, with_hint(
                f"Writing to negative indices (index {index}) is not allowed.",
                "TensorArray indices start at 0")))
        items = self._store.items
        size = len(items)
        if index >= size:
            if not self._dynamic_size:
                raise hinted(OutOfRangeError(None, None, with_hint(
                    f"Tried to write to index {index} but array is not resizeable and size is: "
                    f"{size} ", "create the TensorArray with dynamic_size=True to grow it")))
            items.extend(None for _ in range(index - size + 1))
        items[index] = self._check_value(value)

    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        """Write ``value`` at ``index``; returns the TensorArray to use from now on."""
        if self._buffer is not None:
            return self._view(buffer=self._buffer_write(index, self._check_value(value)))
        self._write(_index(index), value)
        return self._view()

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        """The elements of ``value`` along its first axis become the array's elements."""
        v = self._check_like(value)
        if self._buffer is not None:
            return self._view(buffer=v)
        parts = [ops.getitem(v, i) for i in range(v._data.shape[0])] if v._data.ndim else []
        if len(parts) > self._len() and not self._dynamic_size:
            raise hinted(ValueError(with_hint(
                f"Cannot unstack {len(parts)} tensors into a TensorArray of static size "
                f"{self._len()} ", "create the TensorArray with that size or dynamic_size=True")))
        self._store.items[:] = parts
        return self._view()

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        """Write the rows of ``value`` at ``indices``."""
        v = self._check_like(value)
        idx = (indices._data if isinstance(indices, _Core) else np.asarray(indices)).reshape(-1)
        if self._buffer is not None:
            buf = self._buffer
            for k, i in enumerate(idx):
                buf = self._buffer_write(int(i), ops.getitem(v, k), buf)
            return self._view(buffer=buf)
        for k, i in enumerate(idx):
            self._write(int(i), ops.getitem(v, k))
        return self._view()

    def split(self, value: Any, lengths: Any, name: str | None = None) -> TensorArray:
        """Split ``value`` along its first axis into pieces of ``lengths``."""
        v = self._check_like(value)
        lens = lengths._data if isinstance(lengths, _Core) else np.asarray(lengths)
        if lens.ndim != 1:
            raise hinted(InvalidArgumentError(None, None, with_hint(
                f"Expected lengths to be a vector, received shape: {list(lens.shape)} ",
                "lengths is a list of sizes")))
        if v._data.ndim == 0:
            raise hinted(InvalidArgumentError(None, None, with_hint(
                f"Expected value to be at least a vector, but received shape: "
                f"{list(v._data.shape)} ", "split a vector or more")))
        total = int(lens.sum())
        if total != v._data.shape[0]:
            raise hinted(InvalidArgumentError(None, None, with_hint(
                f"Expected sum of lengths to be equal to values.shape[0], but sum of lengths is "
                f"{total} and value's shape is: {list(v._data.shape)} ",
                "the lengths must add up to the first dimension")))
        if not self._dynamic_size and lens.shape[0] != self._len():
            raise hinted(InvalidArgumentError(None, None, with_hint(
                f"TensorArray's size is not equal to the size of lengths ({self._len()} vs. "
                f"{lens.shape[0]}), and the TensorArray is not marked as dynamically "
                "resizeable.", "give one length per element")))
        if self._buffer is not None:
            raise hinted(NotImplementedError(with_hint(
                "TensorArray.split inside a traced loop", "split before the loop")))
        cuts = np.cumsum(lens)[:-1].tolist()
        self._store.items[:] = list(ops.split(v, cuts, axis=0))
        return self._view()

    def _check_like(self, value: Any) -> Any:
        v = value if isinstance(value, _Core) and not isinstance(value, VariableBase) else \
            convert(read(value) if isinstance(value, VariableBase) else value,
                    dtype_hint=self._dtype)
        got = _dt.as_dtype(v._data.dtype)
        if got != self._dtype:
            raise hinted(InvalidArgumentError(None, None, with_hint(
                f"TensorArray dtype is {self._dtype.name} but Op is trying to write dtype "
                f"{got.name} ", f"cast the value to tf.{self._dtype.name} first")))
        return v

    # -- graph mode: the whole array as one tensor
    def _as_buffer(self) -> Any:
        if self._buffer is not None:
            return self._buffer
        if self._dynamic_size:
            raise hinted(NotImplementedError(with_hint(
                "a TensorArray with dynamic_size=True cannot be a loop variable of a traced "
                "while_loop in tapegrad",
                "create it with a fixed size (the number of iterations) instead")))
        return self.stack()

    def _from_buffer(self, buf: Any) -> TensorArray:
        new = self._view(_Store(0), buffer=buf)
        new._element_shape = [TensorShape(list(buf._data.shape[1:]))]
        return new

    def _buffer_write(self, index: Any, value: Any, buf: Any = None) -> Any:
        buf = self._buffer if buf is None else buf
        n = int(buf._data.shape[0])
        rows = tft(np.arange(n).reshape((n,) + (1,) * (buf._data.ndim - 1)))
        idx = index if isinstance(index, _Core) else tft(np.asarray(_index(index)))
        mask = ops.equal(rows, ops.cast(idx, dtype=np.int64)) if idx._data.dtype != np.int64 \
            else ops.equal(rows, idx)
        return ops.where(mask, ops.expand_dims(value, 0), buf)

    def __repr__(self) -> str:
        return f"<tapegrad.tf.TensorArray object at {hex(id(self))}>"
