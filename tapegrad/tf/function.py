"""``tf.function``: TensorFlow's trace semantics over the core's tracing interpreter.

The Python function runs only when a call needs a new trace; every other call
replays the recorded :class:`~tapegrad.autodiff.tracing.Program` (plain NumPy
kernels, no Python body, no per-op bookkeeping).  As in TensorFlow:

- one trace per input signature: tensors by shape and dtype, Python values by
  value, Variables by shape and dtype (another Variable of a traced spec gets the
  traced program bound to it); ``reduce_retracing=True`` (or the older
  ``experimental_relax_shapes``) generalizes shapes to ``None`` dimensions
  after the first retrace; ``input_signature`` fixes one signature
  (``tf.TensorSpec``) and refuses other inputs with TensorFlow's error;
- ``tf.Variable`` creation is allowed on the first trace only (TensorFlow
  traces a second time to check, and raises its ``ValueError`` when that
  trace creates variables again);
- ``tf.print``, ``Variable.assign*`` and optimizer updates run on every call,
  Python side effects (``print``, list appends) only while tracing;
- using a traced tensor as a Python ``bool`` or asking for ``.numpy()`` raises
  TensorFlow's graph-mode errors (AutoGraph converts ``if``/``while`` on
  tensors when ``tapegrad.tf.autograph`` is present);
- methods (``tf.Module``, Keras models) get one traced function per instance.

Known difference: a generalized signature (``None`` dimensions) holds one
program per concrete shape; the Python body runs again, with its ``print``
output suppressed and not counted by ``experimental_get_tracing_count``, for
a shape that the generalized trace has not seen.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
import itertools
import logging
import sys
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.mode import STATE as _STATE
from .._core.tensor import TF, Tensor, make
from ..autodiff import tracing
from . import _graph_errors as _ge
from . import _nest
from . import dtypes as _dt
from ._tensor import EagerTensor, SymbolicTensor, TensorShape, VariableBase, convert
from .data.spec import TensorSpec
from .errors import OpError as _OpError

__all__ = ["Function", "ConcreteFunction", "function", "get_logger"]

_VAR_MSG = ("tf.function only supports singleton tf.Variables created on the first call. Make "
            "sure the tf.Variable is only created once or created outside tf.function. See "
            "https://www.tensorflow.org/guide/function#creating_tfvariables for more "
            "information.")

_BOOL_MSG = (
    "Using a symbolic `tf.Tensor` as a Python `bool` is not allowed. You can attempt the "
    "following resolutions to the problem: If you are running in Graph mode, use Eager "
    "execution mode or decorate this function with @tf.function. If you are using "
    "AutoGraph, you can try decorating this function with @tf.function. If that does not "
    "work, then you may be using an unsupported feature or your source code may not be "
    "visible to AutoGraph. See https://github.com/tensorflow/tensorflow/blob/master/"
    "tensorflow/python/autograph/g3doc/reference/limitations.md#access-to-source-code for "
    "more information.")


class _StderrHandler(logging.Handler):
    """Writes to ``sys.stderr`` as it is at the time (redirections included)."""

    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(self.format(record) + "\n")


def get_logger() -> logging.Logger:
    """``tf.get_logger()``: the logger of TensorFlow's ``WARNING:tensorflow:...`` lines
    (``tf.get_logger().setLevel("ERROR")`` silences the retracing warning)."""
    log = logging.getLogger("tapegrad.tf")
    if not log.handlers:
        h = _StderrHandler()
        h.setFormatter(logging.Formatter("%(levelname)s:tensorflow:%(message)s"))
        log.addHandler(h)
        log.propagate = False
    return log


class _FrequentTracing:
    """TensorFlow's ``_FrequentTracingDetector``: warns (twice at most per function) when
    5 of the last calls (a history of 10) traced."""

    def __init__(self) -> None:
        self.calls_per_tracing: list[int] = []
        self.call_count = 0
        self.warnings = 0

    def with_tracing(self, name: str) -> None:
        self.call_count += 1
        self.calls_per_tracing.append(1)
        while self.calls_per_tracing and self.call_count - self.calls_per_tracing[0] > 10:
            self.call_count -= self.calls_per_tracing.pop(0)
        if self.warnings >= 2 or len(self.calls_per_tracing) < 5:
            return
        self.warnings += 1
        get_logger().warning(
            f"{len(self.calls_per_tracing)} out of the last {self.call_count} calls to {name} "
            "triggered tf.function retracing. Tracing is expensive and the excessive number "
            "of tracings could be due to (1) creating @tf.function repeatedly in a loop, (2) "
            "passing tensors with different shapes, (3) passing Python objects instead of "
            "tensors. For (1), please define your @tf.function outside of the loop. For (2), "
            "@tf.function has reduce_retracing=True option that can avoid unnecessary "
            "retracing. For (3), please refer to "
            "https://www.tensorflow.org/guide/function#controlling_retracing and "
            "https://www.tensorflow.org/api_docs/python/tf/function for  more details.")

    def without_tracing(self) -> None:
        if not self.calls_per_tracing:
            self.calls_per_tracing = [0]
        self.calls_per_tracing[-1] += 1
        self.call_count += 1


# one detector per Python function (a method's instances share it, as in TensorFlow)
_DETECTORS: weakref.WeakKeyDictionary[Any, _FrequentTracing] = weakref.WeakKeyDictionary()


def _detector(fn: Any) -> _FrequentTracing | None:
    try:
        d = _DETECTORS.get(fn)
        if d is None:
            d = _DETECTORS[fn] = _FrequentTracing()
    except TypeError:  # not weakly referenceable
        return None
    return d


def _on_read(t: Tensor, what: str) -> None:
    """TensorFlow's errors for reading a symbolic tensor's value inside ``tf.function``."""
    from .errors import OperatorNotAllowedInGraphError

    if what == "bool":
        raise hinted(OperatorNotAllowedInGraphError(with_hint(
            _BOOL_MSG, "inside tf.function a tensor has no value yet: use tf.cond / "
            "tf.where, or keep autograph=True")))
    raise hinted(AttributeError(with_hint(
        f"'SymbolicTensor' object has no attribute '{what}'",
        "inside tf.function a tensor has no value yet: return it, or use tf.print")))


# the names TensorFlow's graph gives the ops (what a traced tensor prints as: mul:0, ...)
_TF_OP_NAMES = {
    "multiply": "mul", "subtract": "sub", "divide": "truediv", "matmul": "MatMul",
    "sum": "Sum", "shape": "Shape", "relu": "Relu", "sin": "Sin", "cos": "Cos",
    "cast": "Cast", "reshape": "Reshape", "exp": "Exp", "power_tf": "pow", "negative": "Neg",
    "mean": "Mean", "concatenate": "concat", "getitem": "strided_slice",
    "sigmoid": "Sigmoid", "tanh": "Tanh", "square": "Square", "sqrt": "Sqrt",
    "maximum": "Maximum", "minimum": "Minimum", "where": "SelectV2", "greater": "Greater",
    "greater_equal": "GreaterEqual", "less": "Less", "less_equal": "LessEqual",
    "equal": "Equal", "not_equal": "NotEqual", "identity": "Identity", "softmax": "Softmax",
    "abs": "Abs", "log": "Log", "max": "Max", "min": "Min", "prod": "Prod",
    "clip": "clip_by_value", "floor_divide": "floordiv", "logical_and": "LogicalAnd",
    "getitem_dyn": "strided_slice",
    "logical_or": "LogicalOr", "logical_not": "LogicalNot", "rsqrt": "Rsqrt",
}


def _out_of_scope(lv: tracing.TraceLevel, t: Tensor) -> str:
    """TensorFlow's error for a tensor of a finished trace used in another one."""
    shape = t.__dict__.get("_sym_shape", tuple(t._data.shape))
    dims = "<unknown>" if shape is None else (
        "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")")
    name = f"<tf.Tensor '{lv.symbol(t)}:0' shape={dims} dtype={_dt.from_numpy(t._data.dtype).name}>"
    return (f"{name} is out of scope and cannot be used here. Use return values, explicit "
            "Python locals or TensorFlow collections to access it.\nPlease see "
            "https://www.tensorflow.org/guide/function#all_outputs_of_a_tffunction_must_be_"
            "return_values for more information.")


def _dims_text(shape: tuple[int | None, ...] | None) -> str:
    if shape is None:
        return "<unknown>"
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _on_show(lv: tracing.TraceLevel, t: Tensor) -> str:
    """A traced tensor prints as TensorFlow's symbolic tensor: ``Tensor("x:0", ...)``
    (no shape when its rank is unknown)."""
    shape = t.__dict__.get("_sym_shape", tuple(t._data.shape))
    dims = "" if shape is None else f"shape={_dims_text(shape)}, "
    return f'Tensor("{lv.symbol(t)}:0", {dims}dtype={_dt.from_numpy(t._data.dtype).name})'


def symbolic_repr(lv: tracing.TraceLevel, t: Tensor) -> str:
    """``repr`` of a traced tensor: ``<tf.Tensor 'add:0' shape=(2,) dtype=float32>``."""
    shape = t.__dict__.get("_sym_shape", tuple(t._data.shape))
    return (f"<tf.Tensor '{lv.symbol(t)}:0' shape={_dims_text(shape)} "
            f"dtype={_dt.from_numpy(t._data.dtype).name}>")


# ---------------------------------------------------------------------------- signatures
def _spec_text(shape: tuple[int | None, ...] | None, dtype: np.dtype) -> str:
    dims = "<unknown>" if shape is None else (
        "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")")
    return f"TensorSpec(shape={dims}, dtype=tf.{_dt.from_numpy(dtype).name}, name=None)"


_NUMBER = "number"
_SYMBOLIC: dict[type, type] = {EagerTensor: SymbolicTensor}
_UIDS = itertools.count(1)  # TensorFlow's __inference_f_N numbers
_SITE = _ge.site_recorder(tracing.trace_call.__code__)


def _runtime_error(e: BaseException) -> bool:
    """Errors that TensorFlow's graph raises when it runs (kernel errors), not while it is
    built: an op failing so while traced is recorded and fails only if it is needed."""
    return isinstance(e, _OpError)


_REDUCTIONS = frozenset(("sum", "mean", "max", "min", "prod", "all", "any", "logsumexp"))
_UNSET = object()


def _broadcast_dims(shapes: list[tuple[int | None, ...]]) -> tuple[int | None, ...]:
    n = max(len(x) for x in shapes)
    out: list[int | None] = []
    for i in range(n):
        ds = [x[i - n + len(x)] for x in shapes if i - n + len(x) >= 0]
        known = [d for d in ds if d is not None and d != 1]
        out.append(known[0] if known else (None if None in ds else 1))
    return tuple(out)


def _static_shape(op: Any, args: tuple[Any, ...], attrs: dict[str, Any], out: Tensor) -> None:
    """TensorFlow's static shape of ``out`` (``None`` where it depends on a dimension the
    generalized signature left open), kept as ``_sym_shape`` for ``.shape`` and printing."""
    try:
        _infer_shape(op, args, attrs, out)
    except Exception:  # noqa: BLE001 - an op these rules do not cover: its concrete shape
        pass


def _infer_shape(op: Any, args: tuple[Any, ...], attrs: dict[str, Any], out: Tensor) -> None:
    ts = [a for a in args if isinstance(a, Tensor)]
    syms = [a.__dict__.get("_sym_shape", _UNSET) for a in ts]
    if all(x is _UNSET for x in syms):
        return
    shapes: list[Any] = [tuple(a._data.shape) if x is _UNSET else x for a, x in zip(ts, syms)]
    concrete = tuple(out._data.shape)
    res: Any
    name = op.name
    if any(x is None for x in shapes):
        res = None if concrete else ()  # unknown rank in: unknown out (a scalar stays one)
    elif name in _REDUCTIONS and len(shapes) == 1:
        ax = attrs.get("axis")
        n = len(shapes[0])
        axes = set(range(n)) if ax is None else {
            int(a) % n for a in (ax if isinstance(ax, (tuple, list)) else (ax,))} if n else set()
        if attrs.get("keepdims"):
            res = tuple(1 if i in axes else d for i, d in enumerate(shapes[0]))
        else:
            res = tuple(d for i, d in enumerate(shapes[0]) if i not in axes)
    elif name == "matmul" and len(shapes) == 2 and len(shapes[0]) >= 2 and len(shapes[1]) >= 2:
        a, b = shapes
        res = _broadcast_dims([a[:-2], b[:-2]]) + (a[-2], b[-1]) if (a[:-2] or b[:-2]) \
            else (a[-2], b[-1])
    elif name == "reshape" and len(shapes) == 1:
        want = attrs.get("shape", concrete)
        res = tuple(None if int(w) == -1 and None in shapes[0] else c
                    for w, c in zip(want, concrete)) if len(want) == len(concrete) else concrete
    else:
        try:
            bc = np.broadcast_shapes(*[tuple(a._data.shape) for a in ts])
        except ValueError:
            bc = None
        if bc == concrete:  # elementwise
            res = _broadcast_dims(shapes)
        else:  # a size of an open dimension (and no known one) is open in the result
            open_ = {c for a, x in zip(ts, shapes) for c, d in zip(a._data.shape, x) if d is None}
            known = {d for x in shapes for d in x if d is not None}
            res = tuple(None if c in open_ and c not in known else c for c in concrete)
    if res is None or len(res) != len(concrete) or res != concrete:
        out.__dict__["_sym_shape"] = res
        lv = out.__dict__.get("_lvl")
        instrs = getattr(lv, "instrs", None)
        if instrs:  # the op just recorded: its static shape for ConcreteFunction.graph
            lv.__dict__.setdefault("tf_sym_shapes", {})[id(instrs[-1])] = (instrs[-1], res)


def _failed_op(prog: tracing.Program, tb: Any) -> tuple[Any, list[Any]]:
    """The instruction of ``prog`` whose line raised (traceback ``tb``), with the values
    of its arguments then (``(None, [])`` when not found)."""
    import re

    line = 0
    frame: Any = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith("<tapegrad program"):
            line, frame = tb.tb_lineno, tb.tb_frame
        tb = tb.tb_next
    src = prog.src.splitlines()
    if not 0 < line <= len(src):
        return None, []
    m = re.match(r"\s*(?:if .*:\s*)?\(?(\w+)", src[line - 1])
    if m is None:
        return None, []
    word = m.group(1)
    slot = int(word[1:]) if re.fullmatch(r"v\d+", word) else -1
    fn = prog._globals.get(word) if slot < 0 else None  # an effect's function
    todo = [prog.instrs]
    while todo:
        for ins in todo.pop():
            if ins.kind == "effect" and fn is not None and ins.fn is fn:
                return ins, []
            if ins.out == slot and ins.kind == "op":
                loc = frame.f_locals if frame is not None else {}
                vals = [(loc.get(f"v{a}", prog.const_vals.get(a)) if a.__class__ is int
                         else a.value) for a in ins.args]
                return ins, vals
            if ins.kind == "while":
                todo += [ins.obj.cond, ins.obj.body]
    return None, []


def _index_error(ins: Any, values: list[Any]) -> BaseException | None:
    """TensorFlow's kernel error for an index out of range at replay (GatherV2 with
    traced indices, a strided slice at a traced index)."""
    from .errors import InvalidArgumentError, kernel_message

    if ins is None or not values or not isinstance(values[0], np.ndarray):
        return None
    x = values[0]
    idx = [np.asarray(v) for v in values[1:]]
    if ins.name == "GatherV2" and idx:
        ax = int(ins.what or 0)
        n = x.shape[ax]
        i = idx[-1]
        if i.ndim == 0:
            msg = f"indices = {int(i)} is not in [0, {n})"
        else:
            bad = np.argwhere((i < 0) | (i >= n))
            if not bad.size:
                return None
            pos = tuple(int(p) for p in bad[0])
            msg = "indices" + "".join(f"[{p}]" for p in pos) + f" = {int(i[pos])} is not in " \
                f"[0, {n})"
        err = InvalidArgumentError(None, None, kernel_message(msg, "GatherV2", None))
    elif ins.op.name == "getitem_dyn" and len(idx) == 1 and idx[0].ndim == 0:
        v = int(idx[0])
        d = next((k for k, n in enumerate(x.shape) if not -n <= v < n), 0)
        err = InvalidArgumentError(None, None, kernel_message(
            f"slice index {v} of dimension {d} out of bounds.", "StridedSlice"))
        err.tf_node = "strided_slice"  # type: ignore[attr-defined]
    else:
        return None
    return err


def _leaf_key(x: Any) -> Any:
    if isinstance(x, VariableBase):
        # a Variable's signature is its shape and dtype (TensorFlow traces once for two
        # Variables of one spec); the last field keeps a program per Variable
        return ("V", tuple(x._data.shape), x._data.dtype.str, id(x))
    if isinstance(x, Tensor):
        return ("T", tuple(x._data.shape), x._data.dtype.str)
    if isinstance(x, (np.ndarray, np.generic)):  # NumPy values are tensors (TensorFlow)
        return ("T", tuple(np.shape(x)), x.dtype.str)
    try:
        hash(x)
    except TypeError:
        return ("O", id(x))
    # a Python literal matches by value, as TensorFlow's Literal type: 1, 1.0 and True are
    # one signature (the first call's trace serves the others)
    return ("P", _NUMBER if type(x) in (bool, int, float) else type(x), x)


def _relax(a: Any, b: Any) -> Any:
    """The most specific signature leaf that both ``a`` and ``b`` match (TensorFlow's supertype)."""
    if a[0] != "T" or b[0] != "T" or a[2] != b[2]:
        return None
    sa, sb = a[1], b[1]
    if sa is None or sb is None or len(sa) != len(sb):
        return ("T", None, a[2])
    return ("T", tuple(x if x == y else None for x, y in zip(sa, sb)), a[2])


def _matches(key: Any, leaf: Any) -> bool:
    if key == leaf:
        return True
    if key[0] == "V":
        return leaf[0] == "V" and key[1] == leaf[1] and key[2] == leaf[2]
    if key[0] != "T" or leaf[0] != "T" or key[2] != leaf[2]:
        return False
    ks, ls = key[1], leaf[1]
    if ks is None:
        return True
    return len(ks) == len(ls) and all(k is None or k == s for k, s in zip(ks, ls))


class _Trace:
    """One signature: its generalized key and its programs (one per concrete shape)."""

    def __init__(self, key: tuple[Any, ...]) -> None:
        self.key = key
        self.programs: dict[tuple[Any, ...], tracing.Program] = {}
        self.structure: Any = None
        self.eager = False
        self.tree: Any = None  # the call's structure and argument names, for its signature
        self.names: list[str] = []
        # a generalized signature's program that depends on no concrete size (two traces at
        # different shapes gave the same program): it runs every shape the key matches
        self.generic: tracing.Program | None = None
        self.specific = False  # those two traces differed: one program per shape
        self.out_shapes: list[list[Any]] = []  # each trace's output shapes (flat order)


class Function:
    """A ``tf.function``-decorated callable (see the module docstring)."""

    def __init__(self, python_function: Callable[..., Any], input_signature: Any = None,
                 autograph: bool = True, jit_compile: Any = None,
                 reduce_retracing: bool = False, name: str | None = None,
                 instance: Any = None, **kwargs: Any) -> None:
        self._python_function = python_function
        self._instance = instance
        self._autograph = autograph
        self._jit_compile = jit_compile
        self._reduce_retracing = bool(reduce_retracing or kwargs.get("experimental_relax_shapes"))
        self._name = name or getattr(python_function, "__name__", "function")
        self._input_signature = None if input_signature is None else list(input_signature)
        self._fn = self._converted(python_function)
        target = python_function.__get__(instance) if instance is not None and hasattr(
            python_function, "__get__") else python_function
        self._target = self._converted(target) if instance is not None else self._fn
        self._sig = inspect.signature(target) if callable(target) else None
        # the parameter names when every parameter is plain positional-or-keyword: a call
        # with exactly that many positional arguments binds without inspect (hot path)
        self._plain_names: list[str] | None = None
        if self._sig is not None and all(
                p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
                for p in self._sig.parameters.values()):
            self._plain_names = list(self._sig.parameters)
        self._traces: list[_Trace] = []
        self._count = 0
        # signatures traced as part of another tf.function (counted, shown once)
        self._nested_seen: set[tuple[Any, ...]] = set()
        self._bound: weakref.WeakKeyDictionary[Any, Function] = weakref.WeakKeyDictionary()
        self._bound_ids: dict[int, Function] = {}
        self.last_trace: tracing.TraceLevel | None = None
        self.retrace_reasons: list[str] = []
        self.eager_reasons: list[str] = []
        # name and docstring of the function (not its __dict__: a Keras model's attributes)
        functools.update_wrapper(self, python_function, updated=())

    def _converted(self, fn: Any) -> Any:
        if not self._autograph:
            return fn
        from . import autograph as _ag

        try:
            return _ag.to_graph(fn)
        except Exception:  # noqa: BLE001 - AutoGraph could not convert: trace the original
            return fn

    # ------------------------------------------------------------------ descriptor
    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        try:
            f = self._bound.get(instance)
        except TypeError:
            f = self._bound_ids.get(id(instance))
        if f is None:
            f = Function(self._python_function, self._input_signature, self._autograph,
                         self._jit_compile, self._reduce_retracing, self._name, instance)
            try:
                self._bound[instance] = f
            except TypeError:
                self._bound_ids[id(instance)] = f
        return f

    # ------------------------------------------------------------------ public API
    @property
    def python_function(self) -> Callable[..., Any]:
        return self._python_function

    @property
    def input_signature(self) -> Any:
        return None if self._input_signature is None else tuple(self._input_signature)

    def experimental_get_tracing_count(self) -> int:
        """How many times the Python function has been traced."""
        return self._count

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from . import config

        if config.functions_run_eagerly():
            return self._target(*args, **kwargs)
        if _STATE.levels:
            # called inside another transform (vmap, jvp) or trace: its ops become part of
            # the caller's; inside a tf.function, as TensorFlow traces a nested function
            # once per signature, its Python side effects (print) show the first time only
            if tracing.current() is None:
                return self._target(*args, **kwargs)
            flat, _, _ = self._canonical(args, kwargs)
            key = tuple(_leaf_key(x) for x in flat)
            if key in self._nested_seen or self._lookup(list(key)) is not None:
                with contextlib.redirect_stdout(io.StringIO()):
                    return self._target(*args, **kwargs)
            self._count += 1
            self._nested_seen.add(key)
            return self._target(*args, **kwargs)
        flat, tree, names = self._canonical(args, kwargs)
        leaves = [_leaf_key(x) for x in flat]
        tr = self._lookup(leaves)
        if tr is None:
            tr = self._new_trace(leaves)
            tr.tree, tr.names = tree, names
        before = self._count
        out = self._call_trace(tr, flat, tree, names, leaves, dry=False)
        det = _detector(self._python_function)
        if det is not None:
            if self._count != before:
                fn = self._python_function
                if self._instance is not None and hasattr(fn, "__get__"):
                    fn = fn.__get__(self._instance)
                det.with_tracing(repr(fn))
            else:
                det.without_tracing()
        return out

    def get_concrete_function(self, *args: Any, **kwargs: Any) -> ConcreteFunction:
        """Trace (without running) for these inputs or ``tf.TensorSpec``s."""
        if not args and not kwargs and self._input_signature is not None:
            args = tuple(self._input_signature)
        flat, tree, names = self._canonical(args, kwargs, specs_ok=True)
        leaves: list[Any] = []
        dummies: list[Any] = []
        for x in flat:
            if isinstance(x, TensorSpec):
                shape = None if x.shape.rank is None else tuple(x.shape.as_list())
                leaves.append(("T", shape, _dt.np_dtype(x.dtype).str))
                dims = () if shape is None else tuple(1 if d is None else d for d in shape)
                dummies.append(make(np.zeros(dims, _dt.np_dtype(x.dtype)), None, False, TF))
            else:
                leaves.append(_leaf_key(x))
                dummies.append(x)
        tr = self._find_exact([k[:3] if k[0] == "V" else k for k in leaves])
        if tr is None:
            tr = self._new_trace(leaves, exact=True)
            tr.tree, tr.names = tree, names
        if not tr.programs:
            self._call_trace(tr, dummies, tree, names, [_leaf_key(d) for d in dummies],
                             dry=True)
        return ConcreteFunction(self, tr)

    def pretty_printed_concrete_signatures(self, verbose: bool = True) -> str:
        """Every traced signature, as TensorFlow prints them: the inputs (tensors as
        ``TensorSpec``, Python values as ``Literal``), the output type and the captured
        Variables; ``verbose=False``: one line ``(x: ...) -> ...`` per signature."""
        return ("\n\n" if verbose else "\n").join(
            _pretty_signature(self, tr, verbose) for tr in self._traces if tr.tree is not None)

    def __repr__(self) -> str:
        return f"<tapegrad.tf.function {self._name} at {id(self):#x}>"

    # ------------------------------------------------------------------ internals
    def _canonical(self, args: tuple[Any, ...], kwargs: dict[str, Any],
                   specs_ok: bool = False) -> tuple[list[Any], Any, list[str]]:
        """The call's leaves (signature order, defaults applied), its structure and arg names."""
        if self._input_signature is not None:
            return self._check_signature(args, kwargs, specs_ok)
        pn = self._plain_names
        if pn is not None and not kwargs and len(args) == len(pn):
            plain: tuple[tuple[Any, ...], dict[str, Any]] = (tuple(args), {})
            return _nest.flatten(plain), plain, list(pn)
        if self._sig is not None:
            try:
                b = self._sig.bind(*args, **kwargs)
                b.apply_defaults()
                struct = (tuple(b.args), dict(b.kwargs))
                names = list(b.arguments)
            except TypeError:
                struct = (args, kwargs)
                names = []
        else:
            struct = (args, kwargs)
            names = []
        flat = _nest.flatten(struct)
        return flat, struct, names

    def _check_signature(self, args: tuple[Any, ...], kwargs: dict[str, Any],
                         specs_ok: bool) -> tuple[list[Any], Any, list[str]]:
        sig = self._input_signature or []
        params = list(self._sig.parameters) if self._sig is not None else []
        shown = ", ".join(f"{p}: {s!r}" for p, s in zip(params, sig))

        def fail(why: str) -> BaseException:
            return hinted(TypeError(with_hint(
                f"Binding inputs to tf.function failed due to `{why}`. Received args: "
                f"{args!r} and kwargs: {kwargs!r} for signature: ({shown}).",
                "the inputs must match input_signature (shape, dtype, count)")))

        vals = list(args)
        for p in params[len(vals):len(sig)]:
            if p in kwargs:
                vals.append(kwargs[p])
        if len(vals) > len(sig) or len(args) + len(kwargs) > len(sig):
            raise fail("too many positional arguments")
        if len(vals) < len(sig):
            missing = params[len(vals)] if len(params) > len(vals) else "?"
            raise fail(f"missing a required argument: '{missing}'")
        flat: list[Any] = []
        for spec, v in zip(sig, vals):
            specs = _nest.flatten(spec)
            vs = _nest.flatten(v) if _nest.is_nested(spec) else [v]
            if len(specs) != len(vs):
                raise fail("Can not cast the input structure to the signature's")
            for sp, x in zip(specs, vs):
                if specs_ok and isinstance(x, TensorSpec):
                    flat.append(x)
                    continue
                if not isinstance(x, Tensor):
                    try:  # a Python value takes the spec's dtype (TensorFlow converts it so)
                        x = convert(x, dtype=sp.dtype)
                    except Exception:  # noqa: BLE001 - not as that dtype: TF's reason
                        try:
                            convert(x)
                        except Exception:  # noqa: BLE001 - not convertible at all
                            raise fail(f"Can not cast {x!r} to {sp!r}") from None
                        raise fail(f"Cannot convert {x!r} to EagerTensor of dtype "
                                   f"{_dt.as_dtype(sp.dtype).name}") from None
                elif isinstance(x, VariableBase):
                    x = convert(x)
                if _dt.np_dtype(sp.dtype) != x._data.dtype or not sp.shape.is_compatible_with(
                        x._data.shape):
                    raise fail(f"Can not cast {_spec_text(x._data.shape, x._data.dtype)} to "
                               f"{sp!r}")
                flat.append(x)
        struct: tuple[tuple[Any, ...], dict[str, Any]] = (tuple(flat), {})
        return flat, struct, params[:len(sig)]

    def _sig_key(self) -> tuple[Any, ...] | None:
        if self._input_signature is None:
            return None
        out: list[Any] = []
        for sp in _nest.flatten(self._input_signature):
            shape = None if sp.shape.rank is None else tuple(sp.shape.as_list())
            out.append(("T", shape, _dt.np_dtype(sp.dtype).str))
        return tuple(out)

    def _find_exact(self, leaves: list[Any]) -> _Trace | None:
        key = tuple(leaves)
        for tr in self._traces:
            if tr.key == key:
                return tr
        return None

    def _lookup(self, leaves: list[Any]) -> _Trace | None:
        exact = self._find_exact(leaves)
        if exact is not None:
            return exact
        for tr in self._traces:
            if len(tr.key) == len(leaves) and all(_matches(k, v) for k, v in zip(tr.key,
                                                                                leaves)):
                return tr
        return None

    def _new_trace(self, leaves: list[Any], exact: bool = False) -> _Trace:
        leaves = [k[:3] if k[0] == "V" else k for k in leaves]  # the spec, not the Variable
        key = self._sig_key()
        if key is None:
            key = tuple(leaves)
            if self._reduce_retracing and not exact:
                for tr in reversed(self._traces):
                    if len(tr.key) == len(leaves):
                        rel = [_relax(a, b) if a != b else a for a, b in zip(tr.key, leaves)]
                        if all(r is not None for r in rel):
                            key = tuple(rel)
                            break
        if self._traces:
            self.retrace_reasons.append(_why_retrace(self._traces[-1].key, key))
        tr = _Trace(key)
        self._traces.append(tr)
        return tr

    def _call_trace(self, tr: _Trace, flat: list[Any], tree: Any, names: list[str],
                    leaves: list[Any], dry: bool) -> Any:
        ckey = tuple(leaves)
        if tr.eager:
            if dry:
                return None
            a, k = _nest.pack_sequence_as(tree, flat)
            return self._run_eagerly(a, k)
        prog = tr.programs.get(ckey)
        if prog is None:
            prog = tr.generic
            if prog is None and tr.programs and any(k[0] == "V" for k in ckey):
                prog = self._rebound(tr, ckey, flat)
        tensors = [x for x in flat if isinstance(x, (Tensor, np.ndarray, np.generic))
                   and not isinstance(x, VariableBase)]
        if prog is not None and prog.check() is None:
            ts = [x if isinstance(x, Tensor) else make(np.asarray(x), None, False, TF)
                  for x in tensors]
            try:
                vals = _run(prog, ts)
            except (_OpError, IndexError) as e:
                raise self._replay_error(prog, e).with_traceback(e.__traceback__) from None
            return _nest.pack_sequence_as(tr.structure, vals)
        # a new concrete shape of a generalized signature, or a signature already traced
        # inside another tf.function: not a new trace
        hidden = bool(tr.programs) or (not tr.programs and ckey in self._nested_seen)
        first = self._count == 0 and not hidden
        result = self._trace(tr, flat, tree, names, ckey, dry, hidden, allow_create=first)
        if first and self.last_trace is not None and self.last_trace.created:
            # TensorFlow traces again to check that variables are created once only
            self._trace(tr, flat, tree, names, ckey, True, False, allow_create=False,
                        count=False)
            self._count += 1
        return result

    def _trace(self, tr: _Trace, flat: list[Any], tree: Any, names: list[str],
               ckey: tuple[Any, ...], dry: bool, hidden: bool, allow_create: bool,
               count: bool = True) -> Any:
        if count and not hidden:
            self._count += 1
        key_shapes = {i: k[1] for i, k in enumerate(tr.key) if k[0] == "T"}
        unknown = object()

        level: list[tracing.TraceLevel] = []

        def build(lv: tracing.TraceLevel) -> tuple[Any, Any]:
            level.append(lv)
            lv.tracer_classes = _SYMBOLIC
            lv.defer_errors = _runtime_error
            lv.site = _SITE
            lv.leak_text = _out_of_scope
            lv.op_names = _TF_OP_NAMES
            new: list[Any] = []
            ti = 0
            for i, x in enumerate(flat):
                if isinstance(x, (np.ndarray, np.generic)):
                    x = make(np.asarray(x), None, False, TF)
                if isinstance(x, Tensor) and not isinstance(x, VariableBase):
                    nm = names[ti] if ti < len(names) else f"args_{ti}"
                    t = lv.add_input(x, nm)
                    sym = key_shapes.get(i, unknown)
                    if sym is None:  # a generalized signature of unknown rank
                        t.__dict__["_sym_shape"] = None
                    elif sym is not unknown and sym != tuple(x._data.shape):
                        t.__dict__["_sym_shape"] = sym
                    new.append(t)
                    ti += 1
                else:
                    new.append(x)
            if any("_sym_shape" in t.__dict__ for t in new if isinstance(t, Tensor)):
                lv.shape_rule = _static_shape  # None dimensions flow to what is computed
            a, k = _nest.pack_sequence_as(tree, new)
            return tuple(a), dict(k)

        converted: list[Any] = [None]

        def flat_out(r: Any) -> tuple[list[Any], Any]:
            r = _outputs(r)
            converted[0] = r
            tr.structure = r
            flat_r = _nest.flatten(r)
            # every other tensor of the trace is symbolic once it ends (TensorFlow: "All
            # outputs of a tf.function must be return values")
            # (the caller gets copies of its outputs)
            level[0].leak_keep = {id(x) for x in flat}
            tr.out_shapes.append([tuple(t._data.shape) if isinstance(t, Tensor) else None
                                  for t in flat_r])
            return flat_r, None

        def on_create(v: Any) -> None:
            if not allow_create:
                raise hinted(ValueError(with_hint(
                    _VAR_MSG, "create the variable once, outside the function or guarded by "
                    "`if self.v is None:`")))

        from ._print import QuietStdout, deferred

        quiet = contextlib.redirect_stdout(QuietStdout()) if hidden else contextlib.nullcontext()
        uid = next(_UIDS)
        outer = _ge.outer_stack(1)  # where the function was called (TensorFlow's node stacks)
        try:
            with deferred(), quiet:  # tf.print output shown once the quiet part is over
                prog, result, lv = tracing.trace_call(
                    self._target, build, flat_out, str(self._name), dry=dry, on_read=_on_read,
                    on_create=on_create, on_show=_on_show)
        except Exception as e:  # noqa: BLE001 - TensorFlow's form of the error, or as it is
            new = self._traced_error(e, outer, uid)
            if new is e:
                raise
            raise new.with_traceback(e.__traceback__) from None
        self.last_trace = lv
        # the caller's results: new tensors (an input tracer returned as it is has its own
        # shape, not the generalized signature's (None,)); the trace's own are symbolic
        result = _nest.pack_sequence_as(converted[0], [
            _eager_copy(o) if isinstance(o, Tensor) else o
            for o in _nest.flatten(converted[0])])
        if prog is None:
            # not one program (random numbers drawn into raw arrays, ...): this signature
            # runs its Python function on every call, so every value is right
            what = lv.unsupported or (lv.breaks[0][0] if lv.breaks else "?")
            warnings.warn(f"tf.function({self._name}): {what} cannot be traced by tapegrad; "
                          "this signature runs eagerly", RuntimeWarning, stacklevel=4)
            tr.eager = True
            self.eager_reasons.append(what)
            return None if dry else result
        if hidden and tr.generic is None and not tr.specific and len(tr.programs) == 1:
            if tracing.same_program(next(iter(tr.programs.values())), prog):
                tr.generic = prog
            else:
                tr.specific = True
        tr.programs[ckey] = prog
        prog.__dict__["tf_outer"] = outer
        prog.__dict__["tf_sym_shapes"] = lv.__dict__.get("tf_sym_shapes", {})
        prog.__dict__["tf_uid"] = uid
        prog.__dict__["tf_vars"] = [x for x in flat if isinstance(x, VariableBase)]
        if dry:
            return None
        if prog.failed is not None:
            # an op that an output or a side effect needs failed (TensorFlow: when the
            # graph runs); the program is kept, so later calls fail as they run it
            exc, ins = prog.failed
            raise _ge.graph_execution_error(exc, outer + list(ins.where or ()),
                                            str(self._name), uid) from None
        return result

    def _rebound(self, tr: _Trace, ckey: tuple[Any, ...], flat: list[Any]
                 ) -> tracing.Program | None:
        """A program of this signature traced with other Variables of the same specs, bound
        to this call's Variables (TensorFlow: one trace for both)."""
        for key, p in tr.programs.items():
            if len(key) != len(ckey) or not all(
                    a == b or (a[0] == b[0] == "V" and a[1:3] == b[1:3])
                    for a, b in zip(key, ckey)):
                continue
            olds = p.__dict__.get("tf_vars")
            if olds is None:
                continue
            news = [x for x in flat if isinstance(x, VariableBase)]
            q = p.rebind({id(o): n for o, n in zip(olds, news) if o is not n})
            if q is None:
                return None
            q.__dict__["tf_vars"] = news
            tr.programs[ckey] = q
            return q
        return None

    def _run_eagerly(self, a: Any, k: Any) -> Any:
        """A signature that is not one program: its Python function, run as TensorFlow's
        graph would (op errors are the graph's run-time errors)."""
        from .autograph import IN_FUNCTION

        IN_FUNCTION.depth += 1
        try:
            return _outputs(self._target(*a, **k))
        except _OpError as e:
            if getattr(e, "ag_pass_through", False):
                raise
            new = _ge.graph_execution_error(e, _ge.outer_stack(1) + _ge.tb_frames(
                e.__traceback__), str(self._name), 0)
            raise new.with_traceback(e.__traceback__) from None
        finally:
            IN_FUNCTION.depth -= 1

    def _traced_error(self, e: BaseException, outer: list[Any], uid: int) -> BaseException:
        """``e``, raised while tracing, as TensorFlow raises it: an op error as the graph's
        run-time error, a Python error ``in user code:`` (AutoGraph on)."""
        from .errors import OpError

        if getattr(e, "ag_pass_through", False):
            return e  # a nested function's, already in TensorFlow's form (or raised as it is)
        if isinstance(e, OpError):
            return _ge.graph_execution_error(e, outer + _ge.tb_frames(e.__traceback__),
                                             str(self._name), uid)
        if not self._autograph:
            return e
        return _ge.in_user_code(e) or e

    def _replay_error(self, prog: tracing.Program, e: BaseException) -> BaseException:
        """An op error of a replay as TensorFlow's ``Graph execution error`` (an index out
        of range, NumPy's ``IndexError`` at replay, as the kernel's error); other errors
        as they are."""
        ins, values = _failed_op(prog, e.__traceback__)
        if not isinstance(e, _OpError):
            k = _index_error(ins, values)
            if k is None:
                return e
            e = k
        where = tuple(ins.where or ()) if ins is not None else ()
        return _ge.graph_execution_error(e, prog.__dict__.get("tf_outer", []) + list(where),
                                         str(self._name), prog.__dict__.get("tf_uid", 0))


def _eager_copy(t: Tensor) -> Tensor:
    """A traced output as the eager tensor the caller gets (gradients pass through)."""
    from .. import ops

    out = ops.identity(t)
    mask = t.__dict__.get("_keras_mask")
    if mask is not None:
        out.__dict__["_keras_mask"] = mask
    return out


def _outputs(r: Any) -> Any:
    """A function's results as TensorFlow returns them: every leaf but ``None`` a tensor
    (a Variable read at the end of the call, Python and NumPy values as constants)."""
    flat = _nest.flatten(r)
    if all(x is None or (isinstance(x, Tensor) and not isinstance(x, VariableBase))
           for x in flat):
        return r
    from .. import ops

    out: list[Any] = []
    for x in flat:
        if isinstance(x, VariableBase):
            x = ops.identity(convert(x))  # its value now, recorded as a read of it
        elif isinstance(x, (bool, int, float, complex, np.generic, np.ndarray)):
            x = convert(x)
        out.append(x)
    return _nest.pack_sequence_as(r, out)


def _why_retrace(old: tuple[Any, ...], new: tuple[Any, ...]) -> str:
    if len(old) != len(new):
        return f"the number of inputs changed ({len(old)} -> {len(new)})"
    for i, (a, b) in enumerate(zip(old, new)):
        if a != b:
            what = {"T": "tensor", "P": "Python value", "V": "Variable", "O": "object"}
            if a[0] == b[0] == "T":
                if a[2] != b[2]:
                    return f"input {i}: dtype {np.dtype(a[2]).name} -> {np.dtype(b[2]).name}"
                return f"input {i}: shape {a[1]} -> {b[1]}"
            if a[0] == b[0] == "P":
                return f"input {i}: Python value {a[2]!r} -> {b[2]!r} (traced by value)"
            return f"input {i}: {what.get(a[0], a[0])} -> {what.get(b[0], b[0])}"
    return "a guard failed (a captured tensor or a .grad changed)"


class _Key:
    """A signature leaf's key as one leaf of the call's structure."""

    __slots__ = ("k",)

    def __init__(self, k: Any) -> None:
        self.k = k


def _leaf_text(key: Any) -> str:
    k = key.k if isinstance(key, _Key) else key
    if isinstance(k, tuple) and k and k[0] == "T":
        return _spec_text(k[1], np.dtype(k[2]))
    if isinstance(k, tuple) and k and k[0] == "P":
        return f"Literal[{k[2]!r}]"
    if isinstance(k, tuple) and k and k[0] == "V":
        return "TensorSpec(shape=(), dtype=tf.resource, name=None)"
    return f"Literal[{k!r}]"


def _struct_text(x: Any, leaf: Callable[[Any], str]) -> str:
    if isinstance(x, dict):
        return "Dict[" + ", ".join(f"[{k!r}, {_struct_text(x[k], leaf)}]"
                                   for k in _nest._sorted_keys(x)) + "]"
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return "Tuple[" + ", ".join(_struct_text(v, leaf) for v in x) + "]"
    if isinstance(x, list):
        return "List[" + ", ".join(_struct_text(v, leaf) for v in x) + "]"
    return leaf(x)


def _pretty_signature(f: Function, tr: _Trace, verbose: bool) -> str:
    """One concrete signature in TensorFlow's ``pretty_printed_concrete_signatures`` form."""
    args, kwargs = tr.tree
    packed_a, packed_k = _nest.pack_sequence_as((tuple(args), dict(kwargs)),
                                                [_Key(k) for k in tr.key])
    params = list(f._sig.parameters.values()) if f._sig is not None else []
    kinds = {p.name: p.kind.name for p in params}
    ins: list[tuple[str, str, str]] = []
    for i, v in enumerate(packed_a):
        nm = tr.names[i] if i < len(tr.names) else f"args_{i}"
        ins.append((nm, kinds.get(nm, "POSITIONAL_ONLY"), _struct_text(v, _leaf_text)))
    for nm, v in packed_k.items():
        ins.append((nm, kinds.get(nm, "KEYWORD_ONLY"), _struct_text(v, _leaf_text)))
    # output shapes: the trace's values, with the dimensions a generalized input left open
    # (a dimension of a relaxed input's size) as None
    relaxed: set[int] = set()
    unknown = False
    prog = next(iter(tr.programs.values()), None)
    shapes = iter(prog.in_shapes if prog is not None else [])
    for k in tr.key:
        if k[0] != "T":
            continue
        concrete = next(shapes, None)
        if k[1] is None:
            unknown = True
        elif concrete is not None:
            relaxed.update(c for d, c in zip(k[1], concrete) if d is None)

    pos = [0]

    def out_leaf(t: Any) -> str:
        i = pos[0]
        pos[0] += 1
        if isinstance(t, Tensor):
            shape: tuple[int | None, ...] | None = tuple(t._data.shape)
            seen = [s[i] for s in tr.out_shapes if i < len(s) and s[i] is not None]
            if unknown and shape:
                shape = None
            elif shape is not None and (relaxed or len(seen) > 1):
                # a dimension that differed between this signature's traces, or (one trace)
                # one of a relaxed input dimension's size, is left open
                shape = tuple(None if (d in relaxed and len(seen) < 2) or any(
                    len(o) != len(shape) or o[j] != d for o in seen) else d
                    for j, d in enumerate(shape))
            return _spec_text(shape, t._data.dtype)
        return f"Literal[{t!r}]"

    out = _struct_text(tr.structure, out_leaf)
    caps: list[str] = []
    if prog is not None:
        seen: set[int] = set()
        for ins_ in prog.instrs:
            if ins_.kind == "read" and isinstance(ins_.obj, VariableBase) and \
                    id(ins_.obj) not in seen:
                seen.add(id(ins_.obj))
                caps.append(f"  {id(ins_.obj)}: TensorSpec(shape=(), dtype=tf.resource, "
                            "name=None)")
    if not verbose:
        return "(" + ", ".join(f"{n}: {t}" for n, _, t in ins) + f") -> {out}"
    lines = ["Input Parameters:"]
    lines += [f"  {n} ({k}): {t}" for n, k, t in ins]
    lines += ["Output Type:", f"  {out}", "Captures:"]
    lines += caps or ["  None"]
    return "\n".join(lines)


def _run(prog: tracing.Program, tensors: list[Tensor]) -> list[Any]:
    return tracing.run_program(prog, tensors)


def _tf_type_name(dt: np.dtype) -> str:
    """TensorFlow's C++ name of a dtype (``DataTypeString``): float, double, half, int32..."""
    name = _dt.from_numpy(dt).name
    return {"float32": "float", "float64": "double", "float16": "half"}.get(name, name)


class ConcreteFunction:
    """One traced signature of a :class:`Function` (``get_concrete_function``).

    A call binds its inputs as TensorFlow does: first to the structured
    signature (every parameter, Python values as ``Literal``s that must be
    equal), then, when that fails, to the flat signature (the tensor inputs
    only, positionally or by name); when both fail it raises TensorFlow's
    ``TypeError`` naming both reasons.
    """

    def __init__(self, parent: Function, trace: _Trace) -> None:
        self._parent = parent
        self._trace = trace

    # ------------------------------------------------------------------ the signature
    def _params(self) -> list[tuple[str, bool, Any]]:
        """(name, keyword-only, structure of signature keys) for each traced parameter."""
        tr = self._trace
        args, kwargs = tr.tree if tr.tree is not None else ((), {})
        packed_a, packed_k = _nest.pack_sequence_as((tuple(args), dict(kwargs)),
                                                    [_Key(k) for k in tr.key])
        out: list[tuple[str, bool, Any]] = []
        for i, v in enumerate(packed_a):
            out.append((tr.names[i] if i < len(tr.names) else f"args_{i}", False, v))
        for nm, v in packed_k.items():
            out.append((nm, True, v))
        return out

    def _flat_names(self) -> list[str]:
        """The tensor inputs' names: a parameter's own name, then ``name_1``, ``name_2``..."""
        names: list[str] = []
        for nm, _, v in self._params():
            n = 0
            for k in _nest.flatten(v):
                if isinstance(k, _Key) and k.k[0] == "T":
                    names.append(nm if n == 0 else f"{nm}_{n}")
                    n += 1
        return names

    @property
    def structured_input_signature(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        def spec(k: Any, name: str) -> Any:
            if k[0] == "T":
                return TensorSpec(None if k[1] is None else TensorShape(k[1]),
                                  _dt.from_numpy(np.dtype(k[2])), name=name)
            return k[-1] if k[0] == "P" else k

        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for nm, kw, v in self._params():
            if _nest.is_nested(v):
                leaves = _nest.flatten(v)
                s = _nest.pack_sequence_as(v, [spec(k.k, f"{nm}_{j}")
                                               for j, k in enumerate(leaves)])
            else:
                s = spec(v.k, nm)
            if kw:
                kwargs[nm] = s
            else:
                args.append(s)
        return tuple(args), kwargs

    @property
    def structured_outputs(self) -> Any:
        """The outputs' structure with the graph's output tensors (``Identity:0``, ...)."""
        outs = iter(self.graph.outputs)
        leaves = [next(outs) if isinstance(x, Tensor) else x
                  for x in _nest.flatten(self._trace.structure)]
        return _nest.pack_sequence_as(self._trace.structure, leaves)

    @property
    def graph(self) -> Any:
        """The program as TensorFlow's ``FuncGraph``: ``get_operations()`` (TensorFlow's
        op names and types), ``as_graph_def()``, ``inputs``, ``outputs``."""
        g = self.__dict__.get("_graph")
        if g is None:
            from ._func_graph import build

            shapes = [k[1] for k in self._trace.key if k[0] == "T"]
            g = self.__dict__["_graph"] = build(str(self._parent._name), self.program, shapes)
        return g

    @property
    def name(self) -> bytes:
        """TensorFlow's function name: ``b'__inference_f_N'``."""
        return f"__inference_{self._parent._name}_{self.program.__dict__.get('tf_uid', 0)}" \
            .encode()

    @property
    def variables(self) -> tuple[Any, ...]:
        """The Variables the function reads or assigns (in the order it first uses them)."""
        seen: dict[int, Any] = {}
        for ins in self.program.instrs:
            if ins.kind in ("read", "write_var") and isinstance(ins.obj, VariableBase):
                seen.setdefault(id(ins.obj), ins.obj)
        return tuple(seen.values())

    @property
    def inputs(self) -> list[Any]:
        """The graph's input tensors (the tensor arguments, then captured resources)."""
        return list(self.graph.inputs)

    @property
    def outputs(self) -> list[Any]:
        """The graph's output tensors (one ``Identity`` per output)."""
        return list(self.graph.outputs)

    @property
    def program(self) -> tracing.Program:
        """The recorded program (the first concrete one)."""
        return next(iter(self._trace.programs.values()))

    # ------------------------------------------------------------------ calling
    def _bind_structured(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """The flat inputs for a call bound to the structured signature; a ``TypeError``
        whose text is TensorFlow's reason when the call does not fit it."""
        params = self._params()
        sig = inspect.Signature([inspect.Parameter(
            nm, inspect.Parameter.KEYWORD_ONLY if kw else inspect.Parameter.POSITIONAL_OR_KEYWORD)
            for nm, kw, _ in params])
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(str(e)) from None
        flat: list[Any] = []
        for nm, _, keys in params:
            v = bound.arguments[nm]
            if _nest.is_nested(keys):
                ks = _nest.flatten(keys)
                vs = _nest.flatten(v) if _nest.is_nested(v) else [v]
                if len(ks) != len(vs):
                    raise TypeError(f"Can not cast {v!r} to "
                                    f"{_struct_text(keys, _leaf_text)}")
            else:
                ks, vs = [keys], [v]
            for k, x in zip(ks, vs):
                key = k.k
                if key[0] == "P":
                    if not _same_literal(x, key[2]):
                        raise TypeError(f"Can not cast {x!r} to Literal[{key[2]!r}]")
                    flat.append(x)
                elif key[0] == "T":
                    want = _spec_text(key[1], np.dtype(key[2]))
                    if not isinstance(x, Tensor):
                        try:
                            x = convert(x, dtype=_dt.from_numpy(np.dtype(key[2])))
                        except Exception:  # noqa: BLE001 - TensorFlow's reason
                            raise TypeError(f"Can not cast {x!r} to {want}") from None
                    elif isinstance(x, VariableBase):
                        x = convert(x)
                    shape = tuple(x._data.shape)
                    ok_shape = key[1] is None or (len(key[1]) == len(shape) and all(
                        d is None or d == s for d, s in zip(key[1], shape)))
                    if x._data.dtype.str != key[2] or not ok_shape:
                        raise TypeError(f"Can not cast {_spec_text(shape, x._data.dtype)} "
                                        f"to {want}")
                    flat.append(x)
                else:
                    flat.append(x)
        return flat

    def _bind_flat(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """The tensor inputs for a call bound to the flat signature (TensorFlow's
        ``_call_with_flat_signature``), literals filled in from the trace."""
        names = self._flat_names()
        summary = f"{self._parent._name}({', '.join(names)})"
        if len(args) > len(names):
            raise TypeError(f"{summary} takes {len(names)} positional arguments, got "
                            f"{len(args)}.")
        got = list(args)
        rest = dict(kwargs)
        for nm in names[len(got):]:
            if nm not in rest:
                specified = set(names[:len(got)]) | set(rest)
                missing = sorted(set(names) - specified)
                raise TypeError(f"{summary} missing required arguments: {', '.join(missing)}.")
            got.append(rest.pop(nm))
        if rest:
            for k in rest:
                if k in names[:len(args)]:
                    raise TypeError(f"{summary} got two values for '{k}'.")
            raise TypeError(f"{summary} got unexpected keyword arguments: "
                            f"{', '.join(sorted(rest))}.")
        for i, a in enumerate(got):
            if not isinstance(a, Tensor):
                raise TypeError(f"{summary}: expected argument #{i}(zero-based) to be a "
                                f"Tensor; got {type(a).__name__} ({a}).")
        it = iter(got)
        return [next(it) if k[0] == "T" else (k[2] if k[0] == "P" else None)
                for k in self._trace.key]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from .errors import InvalidArgumentError

        tr = self._trace
        f = self._parent
        try:
            flat = self._bind_structured(args, kwargs)
        except TypeError as e:
            why = str(e)
            try:
                flat = self._bind_flat(args, kwargs)
            except TypeError as e2:
                raise hinted(TypeError(with_hint(
                    f"Binding inputs to tf.function failed due to `{why}`. Received args: "
                    f"{args!r} and kwargs: {kwargs!r} for signature: "
                    f"{_pretty_signature(f, tr, False)}.\n"
                    f"Fallback to flat signature also failed due to: {e2}",
                    "call a concrete function with the inputs it was traced for"))) from None
        ti = 0
        for k, x in zip(tr.key, flat):
            if k[0] != "T":
                continue
            if isinstance(x, VariableBase):
                x = convert(x)
            if x._data.dtype.str != k[2]:
                want = _tf_type_name(np.dtype(k[2]))
                got = _tf_type_name(x._data.dtype)
                raise hinted(InvalidArgumentError(None, None, with_hint(
                    f"cannot compute __inference_{f._name} as input #{ti}"
                    f"(zero-based) was expected to be a {want} tensor but is a {got} tensor "
                    f"[Op:__inference_{f._name}]",
                    "a concrete function takes exactly its traced dtypes")))
            ti += 1
        flat = [convert(x) if isinstance(x, VariableBase) else x for x in flat]
        leaves = [_leaf_key(x) for x in flat]
        args0, kwargs0 = tr.tree if tr.tree is not None else ((), {})
        tree = _nest.pack_sequence_as((tuple(args0), dict(kwargs0)), flat)
        return f._call_trace(tr, flat, tree, tr.names, leaves, dry=False)

    def __str__(self) -> str:
        return "ConcreteFunction " + _pretty_signature(self._parent, self._trace, True)

    def __repr__(self) -> str:
        return (f"<ConcreteFunction {_pretty_signature(self._parent, self._trace, False)} "
                f"at 0x{id(self):X}>")


def _same_literal(a: Any, b: Any) -> bool:
    try:
        return bool(_leaf_key(a) == _leaf_key(b))
    except Exception:  # noqa: BLE001 - incomparable values are different literals
        return False


def function(func: Callable[..., Any] | None = None, input_signature: Any = None,
             autograph: bool = True, jit_compile: Any = None, reduce_retracing: bool = False,
             experimental_implements: Any = None, experimental_autograph_options: Any = None,
             experimental_attributes: Any = None, experimental_relax_shapes: Any = None,
             experimental_compile: Any = None, experimental_follow_type_hints: Any = None,
             name: str | None = None) -> Any:
    """``tf.function``: trace ``func`` once per input signature and replay the program.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> @tf.function
    ... def f(x):
    ...     print("tracing")
    ...     return x * x + 1.0
    >>> f(tf.constant(2.0)).numpy()
    tracing
    np.float32(5.0)
    >>> f(tf.constant(3.0)).numpy()   # same signature: replayed, no print
    np.float32(10.0)
    >>> f.experimental_get_tracing_count()
    1
    """
    relax = bool(reduce_retracing or experimental_relax_shapes)

    def deco(fn: Callable[..., Any]) -> Function:
        return Function(fn, input_signature, autograph, jit_compile, relax, name)

    if func is None:
        return deco
    return deco(func)
