"""``torch.tensor(nested_sequence)`` as PyTorch's ``internal_new_from_data`` converts it.

PyTorch (``torch/csrc/utils/tensor_new.cpp``) first takes the shape from the
first element at each level (``compute_sizes``), then infers the dtype from
every leaf (``infer_scalar_type``: Python floats give the default dtype, ints
int64, bools bool, tensors and NumPy values their own, combined with
PyTorch's type promotion), then stores each leaf (``recursive_store``),
checking every length.  Its errors follow from that order:

- ``ValueError: expected sequence of length 2 at dim 1 (got 1)`` (ragged);
- ``TypeError: 'list' object cannot be interpreted as an integer`` and
  ``TypeError: not a sequence`` (a list where a number belongs, and back);
- ``ValueError: only one element tensors can be converted to Python scalars``
  (a list of non-scalar tensors);
- ``ValueError: too many dimensions 'str'``, ``TypeError: new(): invalid
  data type 'str'`` and ``RuntimeError: Could not infer dtype of NoneType``.

A list holding 0-d tensors is converted through their values (as PyTorch
does), and a shape with a zero in it needs no leaf at all (``[[], [1]]``
gives a ``(2, 0)`` tensor).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from ._dtype import default_np

_MAX_DIMS = 64
_INT64 = (-(2**63), 2**63 - 1)


def _is_seq(x: Any) -> bool:
    """PyTorch's ``PySequence_Check`` (lists, tuples, strings, arrays), tensors excluded."""
    if isinstance(x, Tensor):
        return False
    return isinstance(x, (list, tuple, str, bytes, np.ndarray, range))


def compute_sizes(data: Any) -> list[int]:
    """The shape from the first element of each level (stops at a length of 0)."""
    sizes: list[int] = []
    seq = data
    while _is_seq(seq):
        if isinstance(seq, np.ndarray) and seq.ndim == 0:
            break
        n = len(seq)
        sizes.append(n)
        if len(sizes) > _MAX_DIMS:
            raise hinted(ValueError(with_hint(f"too many dimensions '{type(seq).__name__}'",
                                       "tensors hold numbers, not strings")))
        if n == 0:
            break
        seq = seq[0]
    return sizes


def _category(d: np.dtype) -> int:
    return {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}[d.kind]


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """PyTorch's ``promoteTypes`` (a float beats any integer, whatever their sizes)."""
    ca, cb = _category(a), _category(b)
    if ca == cb:
        return np.promote_types(a, b)
    hi, lo = (a, b) if ca > cb else (b, a)
    if hi.kind == "c" and lo.kind == "f" and lo.itemsize > hi.itemsize // 2:
        return np.dtype(np.complex128)
    return hi


def _default_complex() -> np.dtype:
    return np.dtype(np.complex128 if default_np() == np.float64 else np.complex64)


def infer_scalar_type(obj: Any) -> np.dtype:
    """PyTorch's ``infer_scalar_type``: the dtype ``torch.tensor(obj)`` gets."""
    if isinstance(obj, (np.ndarray, np.generic)):    # before float: np.float64 is a float
        return np.asarray(obj).dtype
    if isinstance(obj, bool):
        return np.dtype(np.bool_)
    if isinstance(obj, float):
        return default_np()
    if isinstance(obj, int):
        return np.dtype(np.int64)
    if isinstance(obj, complex):
        return _default_complex()
    if isinstance(obj, Tensor):
        return obj._data.dtype
    if isinstance(obj, (str, bytes)):
        raise hinted(TypeError(with_hint(f"new(): invalid data type '{type(obj).__name__}'",
                                  "tensors hold numbers: pass numbers or nested lists of them")))
    if _is_seq(obj):
        if len(obj) == 0:
            return default_np()
        out: np.dtype | None = None
        for item in obj:
            if item is obj:
                raise hinted(TypeError(with_hint("new(): self-referential lists are incompatible",
                                          "a list cannot contain itself")))
            d = infer_scalar_type(item)
            out = d if out is None else promote(out, d)
            if out == np.complex128:
                return out
        assert out is not None
        return out
    raise hinted(RuntimeError(with_hint(f"Could not infer dtype of {type(obj).__name__}",
                                 "torch.tensor takes numbers, nested lists of numbers, NumPy "
                                 "arrays or tensors")))


def _scalar(obj: Any, dt: np.dtype) -> Any:
    """One leaf as PyTorch's ``store_scalar`` reads it into ``dt``."""
    if isinstance(obj, Tensor):
        if obj._data.size != 1:
            raise hinted(ValueError(with_hint("only one element tensors can be converted to Python "
                                       "scalars", "torch.stack(list_of_tensors) joins tensors")))
        if dt.kind in "iu" and obj._data.dtype.kind not in "biu":
            raise hinted(TypeError(with_hint("only integer tensors of a single element can be "
                                      "converted to an index",
                                      "cast the tensor first, e.g. t.long()")))
        obj = obj._data.reshape(()).item()
    elif isinstance(obj, np.ndarray):
        if obj.size != 1:
            raise hinted(ValueError(with_hint("only one element tensors can be converted to Python "
                                       "scalars", "np.stack the arrays first")))
        obj = obj.reshape(()).item()
    elif isinstance(obj, np.generic):
        obj = obj.item()
    if dt.kind in "iub":
        if isinstance(obj, (list, tuple, str, dict, set)) or obj is None:
            raise hinted(TypeError(with_hint(f"'{type(obj).__name__}' object cannot be interpreted as "
                                      "an integer", "nested lists must be rectangular")))
        if isinstance(obj, float) and not math.isfinite(obj) and dt.kind != "b":
            raise hinted(RuntimeError(with_hint(f"value cannot be converted to type {dt.name} "
                                         "without overflow", "integers cannot hold inf or nan")))
        if isinstance(obj, int) and dt == np.int64 and not _INT64[0] <= obj <= _INT64[1]:
            raise hinted(ValueError(with_hint("Overflow when unpacking long long",
                                       "int64 holds -2**63 .. 2**63-1; pass floats")))
        return obj
    if isinstance(obj, (list, tuple, str, dict, set)) or obj is None:
        raise hinted(TypeError(with_hint(f"must be real number, not {type(obj).__name__}",
                                  "nested lists must be rectangular")))
    return obj


def _store(obj: Any, sizes: list[int], dim: int, dt: np.dtype, out: list[Any]) -> None:
    if dim == len(sizes):
        out.append(_scalar(obj, dt))
        return
    if not _is_seq(obj):
        raise hinted(TypeError(with_hint("not a sequence", "nested lists must be rectangular")))
    n = sizes[dim]
    if len(obj) != n:
        raise hinted(ValueError(with_hint(f"expected sequence of length {n} at dim {dim} (got "
                                   f"{len(obj)})", "nested lists must be rectangular")))
    for item in obj:
        _store(item, sizes, dim + 1, dt, out)


_NUMBERS = frozenset({float, int, bool})


def _plain(data: Any) -> bool:
    """True when every leaf is a Python number in nested lists/tuples (NumPy's fast path).

    Each innermost list is checked with one ``set(map(type, ...))`` (C speed).
    """
    t = type(data)
    if t is not list and t is not tuple:
        return t in _NUMBERS
    if data and type(data[0]) in (list, tuple):
        return all(_plain(x) for x in data)
    return set(map(type, data)) <= _NUMBERS


def from_sequence(data: Any, dt: np.dtype | None) -> tuple[np.ndarray, bool]:
    """The array ``torch.tensor(data, dtype=dt)`` holds, for a list or tuple ``data``.

    The flag says whether the dtype is final; ``False`` (NumPy's fast path for
    plain Python numbers) leaves the caller to map NumPy's dtype to PyTorch's.
    """
    sizes = compute_sizes(data)
    if _plain(data):
        try:
            arr = np.array(data)
        except (ValueError, OverflowError):
            arr = None
        if arr is not None and arr.dtype != object and list(arr.shape) == sizes and (
                arr.dtype.kind not in "iu" or arr.dtype == np.int64 or arr.size == 0):
            return (arr, False) if dt is None else (arr.astype(dt), True)
    target = infer_scalar_type(data) if dt is None else dt
    if 0 in sizes:
        return np.zeros(sizes, dtype=target), True
    flat: list[Any] = []
    _store(data, sizes, 0, target, flat)
    return np.array(flat, dtype=target).reshape(sizes), True
