"""TensorFlow-style tensors over the core :class:`~tapegrad.Tensor`.

Tensors made by ``tapegrad.tf`` carry ``_style = 2``; the hooks installed here
make them print, expose ``shape``/``dtype`` and behave under operators the way
TensorFlow's ``EagerTensor`` does.  This module also holds TensorFlow's
conversion rules (``tf.constant``/``tf.convert_to_tensor``: Python floats are
float32, Python ints int32; binary operators convert a Python operand to the
tensor's dtype and refuse mixed dtypes).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .._core.dispatch import copy_tracer
from .._core.errors import hinted, with_hint
from .._core.registry import get_acc
from .._core.tensor import TF, Tensor, make, register_style
from . import dtypes as _dt
from .errors import InvalidArgumentError, kernel_message

__all__ = ["TensorShape", "tft", "convert", "constant_array", "read", "binary_args"]


# ---------------------------------------------------------------------------- TensorShape
class TensorShape:
    """The shape of a tensor, as TensorFlow reports it.

    Equal to the matching tuple or list; ``as_list()`` gives a list, indexing
    gives ints.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> s = tf.ones([2, 3]).shape
    >>> s, s == (2, 3), s.as_list(), s[0]
    (TensorShape([2, 3]), True, [2, 3], 2)
    """

    __slots__ = ("_dims",)

    def __init__(self, dims: Any) -> None:
        if dims is None:
            self._dims: tuple[int | None, ...] | None = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif isinstance(dims, (int, np.integer)):
            self._dims = (int(dims),)
        else:
            self._dims = tuple(None if d is None else int(d) for d in dims)

    @property
    def rank(self) -> int | None:
        return None if self._dims is None else len(self._dims)

    ndims = rank

    @property
    def dims(self) -> list[int | None] | None:
        return None if self._dims is None else list(self._dims)

    def as_list(self) -> list[int | None]:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def num_elements(self) -> int | None:
        if self._dims is None or any(d is None for d in self._dims):
            return None
        return int(np.prod([int(d) for d in self._dims if d is not None], dtype=np.int64))

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d is not None for d in self._dims)

    def is_compatible_with(self, other: Any) -> bool:
        o = TensorShape(other)
        if self._dims is None or o._dims is None:
            return True
        if len(self._dims) != len(o._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, o._dims))

    def concatenate(self, other: Any) -> TensorShape:
        o = TensorShape(other)
        if self._dims is None or o._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + o._dims)

    def __add__(self, other: Any) -> TensorShape:
        return self.concatenate(other)

    def __radd__(self, other: Any) -> TensorShape:
        return TensorShape(other).concatenate(self)

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __iter__(self) -> Iterator[int | None]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key: Any) -> Any:
        if self._dims is None:
            return None if not isinstance(key, slice) else TensorShape(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TensorShape):
            return self._dims == other._dims
        if isinstance(other, (tuple, list)):
            try:
                return self._dims == tuple(None if d is None else int(d) for d in other)
            except (TypeError, ValueError):
                return False
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self) -> int:
        return hash(self._dims)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __repr__(self) -> str:
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({list(self._dims)})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"


def fmt_shape(shape: Sequence[int]) -> str:
    """TensorFlow's kernel-message shape format: ``[2,3]``."""
    return "[" + ",".join(str(int(s)) for s in shape) + "]"


# ---------------------------------------------------------------------------- the class
class EagerTensor(Tensor):
    """The class of TensorFlow-style tensors (TensorFlow's ``EagerTensor``): a subclass of
    the core :class:`tapegrad.Tensor` with TensorFlow's printing, shape and dtype objects,
    operand conversion and immutability.  ``isinstance(t, tf.Tensor)`` holds for it.

    >>> import tapegrad.tf as tf
    >>> type(tf.constant(1.0)).__name__
    'EagerTensor'
    """

    __slots__ = ()
    _style = TF

    def __repr__(self) -> str:
        sym = self._traced_text()
        return _repr(self) if sym is None else sym

    def __str__(self) -> str:
        sym = self._traced_text()
        return _str(self) if sym is None else sym

    def __format__(self, spec: str) -> str:
        return _format(self, spec)

    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._shape_tuple())

    @property
    def dtype(self) -> Any:
        return _dt.from_numpy(self._data.dtype)

    def numpy(self, force: bool = False) -> Any:
        if "_leaked" in self.__dict__:
            raise hinted(AttributeError(with_hint(
                "'SymbolicTensor' object has no attribute 'numpy'",
                "a tensor made inside tf.function has no value outside it: return it")))
        if self._lvl is not None:
            self._lvl_read("numpy")
        return _numpy(self, force)

    def get_shape(self) -> TensorShape:
        """TensorFlow's ``Tensor.get_shape()`` (same as ``.shape``)."""
        return TensorShape(self._data.shape)

    def set_shape(self, shape: Any) -> None:
        """TensorFlow's ``Tensor.set_shape``: eagerly a check that ``shape`` is compatible;
        inside ``tf.function`` it also fills in the dimensions the trace left open."""
        from ..autodiff import tracing

        want = shape if isinstance(shape, TensorShape) else TensorShape(shape)
        cur = self.shape
        if not tracing.is_traced(self):
            if not cur.is_compatible_with(want):
                raise hinted(ValueError(with_hint(
                    f"Tensor's shape {cur} is not compatible with supplied shape {want}.",
                    "set_shape only checks an eager tensor's shape: use tf.reshape")))
            return
        if want.rank is None:
            return
        if cur.rank is None:
            self.__dict__["_sym_shape"] = tuple(want.as_list())
            return
        if cur.rank != want.rank:
            raise hinted(ValueError(with_hint(
                f"Shapes must be equal rank, but are {cur.rank} and {want.rank}",
                "set_shape cannot change a tensor's rank: use tf.reshape")))
        a, b = cur.as_list(), want.as_list()

        def text(dims: list[int | None]) -> str:
            return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"

        for i, (x, y) in enumerate(zip(a, b)):
            if x is not None and y is not None and x != y:
                raise hinted(ValueError(with_hint(
                    f"Dimension {i} in both shapes must be equal, but are {x} and {y}. "
                    f"Shapes are {text(a)} and {text(b)}.",
                    "set_shape cannot change a known size: use tf.reshape")))
        merged = tuple(x if x is not None else y for x, y in zip(a, b))
        if merged != tuple(self._data.shape) or "_sym_shape" in self.__dict__:
            self.__dict__["_sym_shape"] = merged

    def ref(self) -> Reference:
        """A hashable reference to this tensor (TensorFlow's ``Tensor.ref()``)."""
        return Reference(self)

    experimental_ref = ref

    def _inplace(self, name: str, other: Any) -> Any:
        return _inplace(self, name, other)

    def __setitem__(self, index: Any, value: Any) -> None:
        _setitem(self, index, value)

    def __getitem__(self, index: Any) -> Tensor:
        try:
            return Tensor.__getitem__(self, index)
        except IndexError as exc:
            raise _index_error(self, index, exc) from None

    def __pow__(self, other: Any) -> Tensor:  # TensorFlow's Pow has its own gradient
        from ._ops import pow_operator

        return pow_operator(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        from ._ops import pow_operator

        return pow_operator(other, self)


EagerTensor.__module__ = "tapegrad.tf"


class SymbolicTensor(EagerTensor):
    """The class of a tensor while ``tf.function`` traces (TensorFlow's ``SymbolicTensor``):
    it prints as a graph tensor (``Tensor("add:0", shape=(2,), dtype=float32)``) and refuses
    Python iteration as TensorFlow does (AutoGraph converts ``for x in tensor`` statements;
    unpacking or ``list(t)`` raise).  Tracers get back :class:`EagerTensor` when the trace
    ends; one kept past its trace (leaked) stays symbolic.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        lv = self._lvl
        if lv is not None and lv.active and lv.catch_all:
            from .function import symbolic_repr

            return symbolic_repr(lv, self)
        return EagerTensor.__repr__(self)

    def __iter__(self) -> Iterator[Tensor]:
        if self._lvl is not None:
            import sys

            f: Any = sys._getframe(1)
            if f.f_code.co_name == "converted_call" and f.f_globals.get(
                    "__name__") == "tapegrad.tf.autograph":
                f = f.f_back  # list(t) in converted code: the user's call
            if not f.f_globals.get("__name__", "").startswith("tapegrad."):
                from .autograph import operator_not_allowed

                raise operator_not_allowed("Iterating over a symbolic `tf.Tensor`")
        return Tensor.__iter__(self)


SymbolicTensor.__module__ = "tapegrad.tf"


# ---------------------------------------------------------------------------- variables
class VariableBase(EagerTensor):
    """Marker base of ``tf.Variable`` (defined in :mod:`tapegrad.tf.variables`)."""

    __slots__ = ()
    _is_variable = True  # state that a trace reads by reference (autodiff/tracing.py)


def read(v: Any) -> Tensor:
    """The value of variable ``v`` as read now (TensorFlow's ReadVariableOp).

    The snapshot shares the variable's leaf accumulator, so gradients reach
    the variable, while ``assign`` (which rebinds the variable's array) does
    not change values already read.
    """
    if v._acc is None:  # not differentiable (integer): nothing to keep apart
        return v
    s = make(v._data, None, v._rg, TF)
    s._acc = v._acc
    s._tv = v._tv
    s._vc = v._vc
    if v._lvl is not None:  # a variable that is a ForwardAccumulator primal right now
        copy_tracer(v, s)
    return s


# ---------------------------------------------------------------------------- conversion
def tft(arr: np.ndarray) -> Tensor:
    """Wrap an ndarray as a TensorFlow-style constant (no copy)."""
    return make(arr, None, False, TF)


def _all_python(value: Any) -> bool:
    """True when no leaf of the nested list is a NumPy value or a tensor."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, (np.ndarray, np.generic, Tensor)):
            return False
    return True


def _infer_python(arr: np.ndarray) -> np.ndarray:
    """TensorFlow's dtype for Python data: float -> float32, int -> int32 (int64 if large)."""
    k = arr.dtype.kind
    if k == "f":
        return arr.astype(np.float32)
    if k in "iu":
        if arr.size == 0 or (arr.min() >= -(2**31) and arr.max() < 2**31):
            return arr.astype(np.int32)
        return arr.astype(np.int64)
    if k == "c":
        return arr.astype(np.complex128)
    return arr


def _cannot_convert(value: Any, npd: np.dtype) -> TypeError:
    return hinted(TypeError(
        with_hint(
            f"Cannot convert {value!r} to EagerTensor of dtype {npd.name}",
            "TensorFlow does not convert between kinds implicitly: write the value in the "
            f"tensor's kind, or tf.cast(x, tf.{npd.name}) explicitly",
        )
    ))


def _to_numeric(value: Any) -> np.ndarray:
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise hinted(ValueError(
            with_hint(
                f"Can't convert non-rectangular Python sequence to Tensor. ({exc})",
                "every row of a nested list must have the same length",
            )
        )) from None
    if arr.dtype.kind not in "biufc":
        raise _bad_element(value) or hinted(ValueError(
            with_hint(
                f"Attempt to convert a value ({value!r}) with an unsupported type "
                f"({type(value)}) to a Tensor.",
                "pass numbers, nested lists of numbers, numpy arrays or tensors",
            )
        ))
    return arr


def _bad_element(value: Any) -> ValueError | None:
    """TensorFlow's error for the element that cannot be converted (an int beyond int64, a
    non-number), rather than one about the whole list."""
    if not isinstance(value, (list, tuple)):
        return None
    stack = [value]
    while stack:
        d = stack.pop()
        if isinstance(d, (list, tuple)):
            stack.extend(reversed(d))
        elif isinstance(d, bool) or isinstance(d, (float, complex, np.generic, Tensor)):
            continue
        elif isinstance(d, int):
            if not -(1 << 63) <= d < (1 << 63):
                return hinted(ValueError(with_hint(
                    "Can't convert Python sequence with out-of-range integer to Tensor.",
                    f"{d} does not fit in int64; pass it as a float")))
        elif not isinstance(d, (str, bytes)):
            return hinted(ValueError(with_hint(
                f"Attempt to convert a value ({d!r}) with an unsupported type ({type(d)}) to a "
                "Tensor.", "tensors hold numbers (or strings); pass numbers")))
    return None


def constant_array(value: Any, dtype: Any = None) -> np.ndarray:
    """The array ``tf.constant(value, dtype)`` would hold (TensorFlow's inference)."""
    npd = None if dtype is None else _dt.np_dtype(dtype)
    if isinstance(value, Tensor):
        arr = value._data
        if npd is not None and arr.dtype != npd:
            raise hinted(TypeError(
                with_hint(
                    f"Expected tensor {value._data.tolist()!r} with dtype tf.{npd.name}, "
                    f"but got dtype tf.{arr.dtype.name}.",
                    f"use tf.cast(x, tf.{npd.name}) to change a tensor's dtype",
                )
            ))
        return arr
    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        if arr.dtype.kind not in "biufc":
            arr = _to_numeric(value)
        return arr if npd is None else arr.astype(npd)
    if isinstance(value, (list, tuple)) and not _all_python(value):
        arr = _to_numeric([constant_array(v) if isinstance(v, (Tensor, list, tuple)) else v
                           for v in value])
        return arr if npd is None else arr.astype(npd)
    if isinstance(value, (list, tuple)):
        from ._convert import python_sequence

        decided = python_sequence(value, npd)
        if decided is not None:
            return decided
    if type(value) is int and not -(2**63) <= value < 2**63:
        from ._convert import OUT_OF_RANGE

        raise hinted(ValueError(with_hint(OUT_OF_RANGE, "int64 holds -2**63 .. 2**63-1")))
    arr = _to_numeric(value)
    if npd is None:
        return _infer_python(arr)
    k, tk = arr.dtype.kind, npd.kind
    if (k == "f" and tk in "iub") or (k == "c" and tk != "c") or (k in "iu" and tk == "b"):
        raise _cannot_convert(value, npd)
    return arr.astype(npd)


def convert(value: Any, dtype: Any = None, dtype_hint: Any = None) -> Tensor:
    """``tf.convert_to_tensor``: tensors pass through, variables are read, data is converted.

    A list holding tensors is stacked (recorded, as TensorFlow's auto-packing).
    """
    if isinstance(value, Tensor):
        if isinstance(value, VariableBase):
            value = read(value)
        if dtype is not None:
            npd = _dt.np_dtype(dtype)
            if value._data.dtype != npd:
                raise hinted(ValueError(
                    with_hint(
                        f"Tensor conversion requested dtype {npd.name} for Tensor with dtype "
                        f"{value._data.dtype.name}: {value!r}",
                        f"use tf.cast(x, tf.{npd.name}) to change a tensor's dtype",
                    )
                ))
        if value._style != TF:
            # a core/PyTorch-style tensor: same node or accumulator (so gradients reach
            # the original), printed and combined the TensorFlow way
            if value._node is None and value._acc is None and value._data.dtype.kind in "fc":
                get_acc(value)
            t = make(value._data, value._node, value._rg, TF)
            t._acc = value._acc
            t._vc = value._vc
            if value._lvl is not None:
                copy_tracer(value, t)
            t._tv = value._tv
            return t
        return value
    if type(value).__name__ == "IndexedSlices":
        from ._indexing import IndexedSlices

        if isinstance(value, IndexedSlices):
            return convert(value.to_dense(), dtype)
    if isinstance(value, (list, tuple)):
        from ._convert import has_tensor, pack

        if has_tensor(value):
            return pack(value, dtype)
    if dtype is None and dtype_hint is not None:
        try:
            return tft(constant_array(value, dtype_hint))
        except (TypeError, ValueError):
            pass
    return tft(constant_array(value, dtype))


def convert_like(value: Any, npd: np.dtype, strict: bool) -> Tensor:
    """Convert a non-tensor operand for a binary op whose other operand has dtype ``npd``.

    NumPy values are cast; Python values are converted when TensorFlow allows
    it and otherwise (``strict=False``) keep their own dtype, so that the op
    reports the mismatch as TensorFlow does.
    """
    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        if arr.dtype.kind in "biufc":
            return tft(arr.astype(npd, copy=False))
    try:
        return tft(constant_array(value, npd))
    except TypeError:
        if strict:
            raise
    return tft(constant_array(value))


# TensorFlow's kernel names of the core ops used by operators.
OPNAMES: dict[str, str] = {
    "add": "AddV2", "subtract": "Sub", "multiply": "Mul", "divide": "RealDiv",
    "floor_divide": "FloorDiv", "remainder": "FloorMod", "power": "Pow", "matmul": "MatMul",
    "less": "Less", "less_equal": "LessEqual", "greater": "Greater",
    "greater_equal": "GreaterEqual", "equal": "Equal", "not_equal": "NotEqual",
    "logical_and": "LogicalAnd", "logical_or": "LogicalOr", "logical_xor": "LogicalXor",
    "maximum": "Maximum", "minimum": "Minimum", "squared_difference": "SquaredDifference",
    "atan2": "Atan2",
}


def _mismatch(a: Tensor, b: Tensor, op: str) -> Exception:
    da, db = a._data.dtype, b._data.dtype
    if op == "RealDiv":
        return hinted(TypeError(
            with_hint(
                f"`x` and `y` must have the same dtype, got tf.{da.name} != tf.{db.name}.",
                "TensorFlow never mixes dtypes: tf.cast one operand first",
            )
        ))
    from ._graph_errors import graph_trace

    if graph_trace() is not None:  # inside tf.function: the graph builder's TypeError
        x, y = ("a", "b") if op in ("MatMul", "BatchMatMulV2") else ("x", "y")
        return hinted(TypeError(with_hint(
            f"Input '{y}' of '{op}' Op has type {db.name} that does not match type {da.name} "
            f"of argument '{x}'.", "TensorFlow never mixes dtypes: tf.cast one operand first")))
    kernel = op
    if op in ("MatMul", "BatchMatMulV2") and da == np.float32:
        kernel = "_Mkl" + op   # oneDNN's kernel in TensorFlow's default x86 build
    return hinted(InvalidArgumentError(
        None, None,
        with_hint(
            f"cannot compute {kernel} as input #1(zero-based) was expected to be a "
            f"{_dt.kernel_name(da)} tensor but is a {_dt.kernel_name(db)} tensor "
            f"[Op:{op}] name: ",
            f"TensorFlow never mixes dtypes ({da.name} vs {db.name}): tf.cast one operand "
            "first",
        ),
    ))


def check_broadcast(a: Tensor, b: Tensor, op: str) -> None:
    sa, sb = a._data.shape, b._data.shape
    if sa != sb:
        try:
            np.broadcast_shapes(sa, sb)
        except ValueError:
            from ._graph_errors import broadcast_error

            ge = broadcast_error(a, b, op)  # inside tf.function: the graph builder's error
            if ge is not None:
                raise ge from None
            raise hinted(InvalidArgumentError(
                None, None,
                with_hint(
                    kernel_message(f"Incompatible shapes: {fmt_shape(sa)} vs. {fmt_shape(sb)}", op),
                    f"shapes {tuple(sa)} and {tuple(sb)} do not broadcast: each axis must "
                    "match or be 1",
                ),
            )) from None


def check_matmul(a: Tensor, b: Tensor) -> None:
    """TensorFlow's shape checks of ``tf.matmul``, with its eager messages.

    ``tf.matmul`` runs ``MatMul`` when neither operand has rank > 2, else
    ``BatchMatMulV2``; for float32 the default x86 build runs oneDNN's kernels
    (``_MklMatMul``, ``_MklBatchMatMulV2``), whose wording differs a little.
    """
    sa, sb = a._data.shape, b._data.shape
    batch = len(sa) > 2 or len(sb) > 2
    op = "BatchMatMulV2" if batch else "MatMul"
    mkl = a._data.dtype == np.float32
    kernel = ("__Mkl" if mkl else "") + op
    if len(sa) < 2 or len(sb) < 2:
        which = 0 if len(sa) < 2 else 1
        if batch:
            msg = f"In[{which}] ndims must be >= 2: {len((sa, sb)[which])}"
        elif mkl:
            msg = f"In[{which}] ndims must be >= 2"
        elif len(sa) == len(sb):
            msg = f"In[0] and In[1] ndims must be == 2: {len(sa)}"
        else:
            msg = f"In[0] and In[1] has different ndims: {fmt_shape(sa)} vs. {fmt_shape(sb)}"
        raise hinted(InvalidArgumentError(
            None, None,
            with_hint(
                kernel_message(msg, op, kernel=kernel),
                "tf.matmul needs operands of rank >= 2: use tf.reshape(v, [1, -1]) / "
                "[-1, 1], tf.tensordot(a, b, 1), or tf.linalg.matvec",
            ),
        ))
    try:
        np.broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:
        raise hinted(InvalidArgumentError(
            None, None,
            with_hint(
                kernel_message(f"In[0] and In[1] must have compatible batch dimensions: "
                               f"{fmt_shape(sa)} vs. {fmt_shape(sb)}", op, kernel=kernel),
                "the leading (batch) dimensions must broadcast",
            ),
        )) from None
    if sa[-1] != sb[-2]:
        from ._graph_errors import matmul_error

        ge = matmul_error(a, b)  # inside tf.function: the graph builder's error
        if ge is not None:
            raise ge
        tail = " 0 0" if batch and mkl else ""
        raise hinted(InvalidArgumentError(
            None, None,
            with_hint(
                kernel_message(f"Matrix size-incompatible: In[0]: {fmt_shape(sa)}, In[1]: "
                               f"{fmt_shape(sb)}{tail}", op, kernel=kernel),
                f"the inner dimensions differ: {sa[-1]} (columns of a) vs {sb[-2]} (rows of b)",
            ),
        ))


def binary_args(a: Any, b: Any, name: str, function: bool = False) -> tuple[Tensor, Tensor]:
    """TensorFlow's operand conversion and checks for a binary op (core name ``name``).

    Operators convert a Python operand to the tensor operand's dtype on either
    side; the function forms (``tf.add(x, y)``) convert ``x`` on its own
    first (``function=True``).
    """
    if name in _ARITH:
        _arith_checks(a, b, name)
    ca, cb = a.__class__, b.__class__
    if ca is EagerTensor or ca is Tensor or ca is SymbolicTensor:
        # fast paths (hot: every operator): two plain tensors of one dtype and shape, or a
        # tensor and a Python number its dtype can hold
        ad = a._data
        if cb is EagerTensor or cb is Tensor or cb is SymbolicTensor:
            bd = b._data
            if ad.dtype == bd.dtype and ad.shape == bd.shape and name != "matmul":
                return a, b
        elif (cb is float and ad.dtype.kind in "fc") or (cb is int and ad.dtype.kind in "fc"):
            return a, make(np.array(b, dtype=ad.dtype), None, False, TF)
    elif (cb is EagerTensor or cb is Tensor or cb is SymbolicTensor) and (
            ca is float or ca is int) and not function \
            and b._data.dtype.kind in "fc":
        return make(np.array(a, dtype=b._data.dtype), None, False, TF), b
    op = OPNAMES.get(name, name)
    strict = name == "power"
    if function and not isinstance(a, Tensor):
        a = convert(a)
    if isinstance(a, Tensor):
        if isinstance(a, VariableBase):
            a = read(a)
        if isinstance(b, Tensor):
            if isinstance(b, VariableBase):
                b = read(b)
        else:
            b = convert_like(b, a._data.dtype, strict)
    elif isinstance(b, Tensor):
        if isinstance(b, VariableBase):
            b = read(b)
        a = convert_like(a, b._data.dtype, strict)
    else:
        a = convert(a)
        b = convert_like(b, a._data.dtype, strict)
    if a._data.dtype != b._data.dtype:
        raise _mismatch(a, b, op)
    if name == "matmul":
        check_matmul(a, b)
    else:
        check_broadcast(a, b, op)
    return a, b


_WEAK_OK = frozenset(("add", "subtract", "multiply", "divide"))
_F64, _F32 = np.dtype(np.float64), np.dtype(np.float32)


_ARITH = frozenset({"add", "subtract", "multiply", "divide", "floor_divide", "remainder",
                    "power"})
_ALLOWED_T = ("bfloat16, half, float, double, uint8, uint16, uint32, uint64, int8, int16, "
              "int32, int64, complex64, complex128")


def _arith_checks(a: Any, b: Any, name: str) -> None:
    """TensorFlow's kernels have no bool arithmetic and raise on integer division by zero."""
    da = a._data if isinstance(a, Tensor) else None
    db = b._data if isinstance(b, Tensor) else None
    ka = da.dtype.kind if da is not None else ""
    kb = db.dtype.kind if db is not None else ""
    if ka != "b" and kb != "b" and name not in ("floor_divide", "remainder"):
        return  # the common case: nothing to check
    op = OPNAMES.get(name, name)
    if ka == "b" or kb == "b":
        raise hinted(InvalidArgumentError(None, None, with_hint(
            f"Value for attr 'T' of bool is not in the list of allowed values: {_ALLOWED_T}\n\t; "
            f"NodeDef: {{{{node {op}}}}}; Op<name={op}> [Op:{op}] name: ",
            "cast bools first (tf.cast(x, tf.int32)), or use tf.logical_or / tf.logical_and")))
    if name in ("floor_divide", "remainder"):
        kind_a = da.dtype.kind if da is not None else ("i" if isinstance(a, int) else "f")
        d = db if db is not None else np.asarray(b)
        if kind_a in "iu" and d.dtype.kind in "iu" and d.size and not np.all(d):
            raise hinted(InvalidArgumentError(None, None, with_hint(
                f"Integer division by zero [Op:{op}] name: ",
                "an integer tensor was divided by zero; use floats to get inf/nan instead")))


def _promote(a: Any, b: Any, name: str) -> tuple[Any, Any]:
    # A Python float beside a float64 tensor, or a float32 one within float32's range, is
    # passed as it is: NumPy converts it to the tensor's dtype exactly as TensorFlow's
    # conversion does, and no constant tensor is made (or saved) for it.
    if name in _WEAK_OK:
        ca = a.__class__
        cb = b.__class__
        if (ca is EagerTensor or ca is Tensor or ca is SymbolicTensor) and cb is float:
            dt = a._data.dtype
            if dt is _F64 or (dt is _F32 and -3.0e38 < b < 3.0e38):
                return a, b
        elif (cb is EagerTensor or cb is Tensor or cb is SymbolicTensor) and ca is float:
            dt = b._data.dtype
            if dt is _F64 or (dt is _F32 and -3.0e38 < a < 3.0e38):
                return a, b
    return binary_args(a, b, name)


# ---------------------------------------------------------------------------- printing
def numpy_value(t: Tensor) -> Any:
    """TensorFlow's ``_numpy()``: a NumPy scalar for 0-d tensors, else the array."""
    arr = t._data
    return arr[()] if arr.ndim == 0 else arr


def numpy_text(t: Tensor, is_repr: bool = False) -> str:
    v: Any = numpy_value(t)
    if is_repr:
        text = repr(v.item()) if isinstance(v, np.generic) else repr(v)
    else:
        text = str(v)
    if "\n" in text:
        text = "\n" + text
    return text


def _shape_str(t: Tensor) -> str:
    return str(TensorShape(t._data.shape))


def _repr(t: Tensor) -> str:
    return (f"<tf.Tensor: shape={_shape_str(t)}, dtype={t._data.dtype.name}, "
            f"numpy={numpy_text(t, True)}>")


def _str(t: Tensor) -> str:
    return f"tf.Tensor({numpy_text(t)}, shape={_shape_str(t)}, dtype={t._data.dtype.name})"


def _format(t: Tensor, spec: str) -> str:
    return numpy_value(t).__format__(spec)


def _numpy(t: Tensor, force: bool = False) -> Any:
    arr = t._data
    return arr[()] if arr.ndim == 0 else arr.copy()


def _inplace(t: Tensor, name: str, other: Any) -> Any:
    if isinstance(t, VariableBase):
        raise hinted(RuntimeError(
            with_hint(
                "`variable += value` with `tf.Variable`s is not supported. Use "
                "`variable.assign_add(value)` to modify the variable, or `out = variable + "
                "value` if you need to get a new output Tensor.",
                "variables change only through assign / assign_add / assign_sub",
            )
        ))
    # TensorFlow tensors are immutable: ``x += 1`` rebinds x to a new tensor
    return NotImplemented


def _setitem(t: Tensor, index: Any, value: Any) -> None:
    if isinstance(t, VariableBase):
        raise hinted(TypeError(
            with_hint(
                "'ResourceVariable' object does not support item assignment",
                "build the new value (e.g. with tf.tensor_scatter_nd_update) and "
                "v.assign(new_value)",
            )
        ))
    raise hinted(AttributeError(
        with_hint(
            "'tensorflow.python.framework.ops.EagerTensor' object has no attribute "
            "'__setitem__'",
            "TensorFlow tensors are immutable: build a new tensor (tf.where, "
            "tf.tensor_scatter_nd_update) or keep the value in a tf.Variable",
        )
    ))




class Reference:
    """``tensor.ref()``: a hashable handle to a tensor or variable (compared by identity)."""

    __slots__ = ("_wrapped",)

    def __init__(self, wrapped: Any) -> None:
        self._wrapped = wrapped

    def deref(self) -> Any:
        return self._wrapped

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reference) and other._wrapped is self._wrapped

    def __hash__(self) -> int:
        return id(self._wrapped)

    def __repr__(self) -> str:
        return f"<Reference wrapping {self._wrapped!r}>"


def install() -> None:
    """Make :class:`EagerTensor` the class of TensorFlow-style tensors. Idempotent."""
    EagerTensor._promote = staticmethod(_promote)
    register_style(TF, EagerTensor)


def _index_error(t: Tensor, index: Any, exc: IndexError) -> BaseException:
    """TensorFlow's error for an out-of-range integer index (``StridedSlice``'s)."""
    import re

    m = re.match(r"index (-?\d+) is out of bounds for (?:dimension|axis) (\d+) with size (\d+)",
                 str(exc))
    if m is None:
        return exc
    i, d, n = int(m.group(1)), int(m.group(2)), int(m.group(3))
    return hinted(InvalidArgumentError(None, None, with_hint(
        kernel_message(f"slice index {i + n if i < 0 else i} of dimension {d} out of bounds.",
                       "StridedSlice", "strided_slice/"),
        f"dimension {d} has size {n}: valid indices are {-n} to {n - 1}")))


def is_float(t: Tensor) -> bool:
    return t._data.dtype.kind in "fc"


_REAL_ONLY = ("half, bfloat16, float, double",
              "T:type,allowed=[DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE]")
# ops whose registration differs from the unary math ops': (allowed, signature, attrs)
_OP_DEFS: dict[str, tuple[str, str, str]] = {
    "Softmax": (_REAL_ONLY[0], "logits:T -> softmax:T", _REAL_ONLY[1]),
    "LogSoftmax": (_REAL_ONLY[0], "logits:T -> logsoftmax:T", _REAL_ONLY[1]),
    "Softplus": (_REAL_ONLY[0], "features:T -> activations:T", _REAL_ONLY[1]),
    "SoftmaxCrossEntropyWithLogits": (
        _REAL_ONLY[0], "features:T, labels:T -> loss:T, backprop:T", _REAL_ONLY[1]),
    "SparseSoftmaxCrossEntropyWithLogits": (
        _REAL_ONLY[0], "features:T, labels:Tlabels -> loss:T, backprop:T",
        _REAL_ONLY[1] + "; attr=Tlabels:type,default=DT_INT64,allowed=[DT_INT32, DT_INT64]"),
}


def ensure_float(t: Tensor, op: str) -> None:
    """Raise TensorFlow's error for a float-only kernel given a non-float tensor."""
    k = t._data.dtype.kind
    if k not in "fc":
        allowed, sig, attrs = _OP_DEFS.get(op, (
            "bfloat16, half, float, double, complex64, complex128", "x:T -> y:T",
            "T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_COMPLEX64, "
            "DT_COMPLEX128]"))
        raise hinted(InvalidArgumentError(
            None, None,
            with_hint(
                f"Value for attr 'T' of {_dt.kernel_name(t._data.dtype)} is not in the list of "
                f"allowed values: {allowed}\n\t; NodeDef: {{{{node {op}}}}}; Op<name={op}; "
                f"signature={sig}; attr={attrs}> [Op:{op}] name: ",
                f"{op} needs a floating tensor: tf.cast(x, tf.float32) first",
            ),
        ))

