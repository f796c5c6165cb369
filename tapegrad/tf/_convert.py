"""Nested Python sequences to tensors, with TensorFlow's results and errors case by case.

TensorFlow's C++ converter (``py_seq_tensor.cc``) takes the shape from the
first element of each level and the dtype from the first leaf, then converts
every leaf with that leaf's converter; ``tf.convert_to_tensor`` first tries
auto-packing (``_autopacking_conversion_function``) when a tensor sits
anywhere in the nest.  What follows from that, and is reproduced here:

- ``tf.constant([t, 1.0])`` (a tensor first): ``ValueError: TypeError: Scalar
  tensor has no `len()```; a tensor further on: ``ValueError: Can't convert
  Python sequence with mixed types to Tensor.``;
- ``[True, 1.5]`` (a bool first, then another kind): mixed types;
- an int outside int64: ``ValueError: Can't convert Python sequence with
  out-of-range integer to Tensor.``;
- ``[[], [1]]``: a ``(2, 0)`` float32 tensor (no leaf is ever read);
- ``tf.convert_to_tensor`` of a nest holding tensors stacks it in the first
  tensor's dtype: numbers are converted to it (``TypeError: Cannot convert
  2.5 to EagerTensor of dtype int32``), another tensor dtype is Pack's
  ``InvalidArgumentError``, and so are tensors of different shapes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from . import dtypes as _dt
from .errors import InvalidArgumentError

MIXED = "Can't convert Python sequence with mixed types to Tensor."
OUT_OF_RANGE = "Can't convert Python sequence with out-of-range integer to Tensor."
_INT64 = (-(2**63), 2**63 - 1)


def _first_path(value: Any) -> tuple[list[int], Any]:
    """The shape from first elements, and the first leaf (None when a level is empty)."""
    shape: list[int] = []
    v = value
    while isinstance(v, (list, tuple)):
        shape.append(len(v))
        if not v:
            return shape, None
        v = v[0]
    return shape, v


def _leaves(value: Any) -> Any:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(reversed(v))
        else:
            yield v


def has_tensor(value: Any) -> bool:
    """True when a tensor sits anywhere in the nested lists/tuples ``value``."""
    return any(isinstance(v, Tensor) for v in _leaves(value))


def check_constant_sequence(value: Any) -> None:
    """``tf.constant`` refuses tensors inside a nested list (TensorFlow's two messages)."""
    if not isinstance(value, (list, tuple)) or not has_tensor(value):
        return
    from ._tensor import VariableBase

    _, first = _first_path(value)
    if isinstance(first, VariableBase):
        raise hinted(ValueError(with_hint("TypeError: object of type 'ResourceVariable' has no len()",
                                   "tf.constant takes Python values: use "
                                   "tf.convert_to_tensor([...]) for lists holding variables")))
    if isinstance(first, Tensor):
        raise hinted(ValueError(with_hint("TypeError: Scalar tensor has no `len()`",
                                   "tf.constant takes Python values: use tf.stack(list_of_tensors) "
                                   "or tf.convert_to_tensor")))
    raise hinted(ValueError(with_hint(MIXED, "tf.constant takes Python values: use tf.stack or "
                                      "tf.convert_to_tensor for lists holding tensors")))


NON_RECT = "Can't convert non-rectangular Python sequence to Tensor."
_NUMBER = (bool, int, float, complex, np.bool_, np.number)


def python_sequence(value: Any, npd: np.dtype | None) -> np.ndarray | None:
    """TensorFlow's checks for a nest of Python values; an array when they decide it.

    Walks the nest against the shape read from first elements: a list where
    a number belongs is "mixed types", a number (or another length) where a
    list belongs is "non-rectangular", a bool first leaf admits only bools, an
    unsupported first leaf is named, and an int outside int64 is "out-of-range".
    Returns the (empty) result for a nest without elements (``[[], [1]]``), or
    None to let NumPy convert a nest that passed.
    """
    shape, first = _first_path(value)
    if first is None and 0 in shape:
        return np.zeros(shape, dtype=np.float32 if npd is None else npd)
    if _plain_numbers(value, isinstance(first, bool)):
        try:
            arr = np.asarray(value)
        except (ValueError, TypeError):
            arr = None
        if arr is not None and arr.dtype.kind in "biuf" and list(arr.shape) == shape and (
                arr.dtype.kind not in "iu" or arr.dtype == np.int64 or arr.size == 0):
            return None  # rectangular plain numbers: nothing for TensorFlow to refuse
    first_str = isinstance(first, (str, bytes))
    if not isinstance(first, (*_NUMBER, np.ndarray, str, bytes)):
        raise hinted(ValueError(with_hint(
            f"Attempt to convert a value ({first!r}) with an unsupported type ({type(first)}) "
            "to a Tensor.", "pass numbers, nested lists of numbers, numpy arrays or tensors")))
    first_bool = isinstance(first, (bool, np.bool_))
    nd = len(shape)
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if depth < nd:
            if not isinstance(v, (list, tuple)) or len(v) != shape[depth]:
                raise hinted(ValueError(with_hint(NON_RECT,
                                           "every row of a nested list must have the same length")))
            stack.extend((x, depth + 1) for x in v)
            continue
        if isinstance(v, (list, tuple)):
            raise hinted(ValueError(with_hint(MIXED, "a list sits where the first row has a number")))
        if isinstance(v, np.ndarray):
            continue
        if first_str:
            if not isinstance(v, (str, bytes)):
                raise hinted(ValueError(with_hint(MIXED, f"{v!r} does not fit a sequence of strings")))
            continue
        if not isinstance(v, _NUMBER) or (first_bool and not isinstance(v, (bool, np.bool_))):
            raise hinted(ValueError(with_hint(MIXED, f"{v!r} does not fit a sequence of "
                                              f"{type(first).__name__}")))
        if type(v) is int and not _INT64[0] <= v <= _INT64[1]:
            raise hinted(ValueError(with_hint(OUT_OF_RANGE, "int64 holds -2**63 .. 2**63-1")))
    if first_str:
        raise hinted(ValueError(with_hint(
            f"Attempt to convert a value ({value!r}) with an unsupported type ({type(value)}) "
            "to a Tensor.", "tapegrad has no string tensors")))
    return None


def _plain_numbers(value: Any, bools: bool) -> bool:
    """Only Python floats and ints (or only bools) in the innermost lists (C-speed check)."""
    allowed = _BOOLS if bools else _FLOAT_INT
    t = type(value)
    if t is not list and t is not tuple:
        return t in allowed
    if value and type(value[0]) in (list, tuple):
        return all(_plain_numbers(x, bools) for x in value)
    return set(map(type, value)) <= allowed


_FLOAT_INT = frozenset({float, int})
_BOOLS = frozenset({bool})


def _nested_dtype(value: Any) -> np.dtype | None:
    """TensorFlow's ``_get_dtype_from_nested_lists``: the first tensor's dtype, depth first."""
    for v in value:
        if isinstance(v, Tensor):
            return v._data.dtype
        if isinstance(v, (list, tuple)):
            d = _nested_dtype(v)
            if d is not None:
                return d
    return None


def _stack(parts: list[Tensor]) -> Tensor:
    """``tf.stack`` as Pack checks it: one dtype, one shape."""
    from .. import ops

    d0, s0 = parts[0]._data.dtype, parts[0]._data.shape
    for i, p in enumerate(parts[1:], 1):
        if p._data.dtype != d0:
            raise hinted(InvalidArgumentError(None, None, with_hint(
                f"cannot compute Pack as input #{i}(zero-based) was expected to be a "
                f"{_dt.kernel_name(d0)} tensor but is a {_dt.kernel_name(p._data.dtype)} tensor "
                "[Op:Pack] name: packed", "tf.cast the tensors to one dtype first")))
        if p._data.shape != s0:
            a = ",".join(map(str, s0))
            b = ",".join(map(str, p._data.shape))
            raise hinted(InvalidArgumentError(None, None, with_hint(
                f"Shapes of all inputs must match: values[0].shape = [{a}] != values[{i}].shape "
                f"= [{b}] [Op:Pack] name: packed", "every element needs the same shape")))
    return ops.stack(parts)


def pack(value: Any, dtype: Any) -> Tensor:
    """``tf.convert_to_tensor`` of a nest holding tensors (TensorFlow's auto-packing).

    Recorded: gradients reach every tensor in the nest.
    """
    from ._tensor import convert, tft

    inferred = _nested_dtype(value)
    found = inferred if dtype is None else _dt.np_dtype(dtype)
    assert found is not None  # pack is called only for a nest holding a tensor
    npd: np.dtype = found

    def cast_nested(v: Any) -> Any:
        if isinstance(v, Tensor):
            from .. import ops

            t = convert(v)
            return t if t._data.dtype == npd else ops.cast(t, dtype=npd)
        if isinstance(v, (list, tuple)):
            return [cast_nested(x) for x in v]
        return v

    if dtype is not None and inferred is not None and npd != inferred:
        value = cast_nested(value)

    def helper(v: Any) -> Any:
        if all(isinstance(e, Tensor) for e in v):
            return _stack([convert(e) for e in v])
        out: list[Any] = []
        must = False
        for e in v:
            if isinstance(e, Tensor):
                if e._data.dtype != npd:
                    raise hinted(TypeError(with_hint(
                        f"Cannot convert a list containing a tensor of dtype "
                        f"{_dt.from_numpy(e._data.dtype)!r} to {_dt.from_numpy(npd)!r} (Tensor "
                        f"is: {e!r})", "tf.cast the tensor first")))
                out.append(convert(e))
                must = True
            elif isinstance(e, (list, tuple)):
                c = helper(e)
                must = must or isinstance(c, Tensor)
                out.append(c)
            else:
                out.append(e)
        if not must:
            return out
        return _stack([e if isinstance(e, Tensor) else tft(_constant(e, npd)) for e in out])

    result = helper(list(value))
    return result if isinstance(result, Tensor) else tft(_constant(result, npd))


def _constant(value: Any, npd: np.dtype) -> np.ndarray:
    from ._tensor import constant_array

    return np.asarray(constant_array(value, npd))
