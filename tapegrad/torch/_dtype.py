"""PyTorch dtypes, ``torch.Size`` and PyTorch's type-promotion rules over NumPy dtypes."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint


class dtype:
    """A PyTorch dtype (``torch.float32``): a name over a NumPy dtype.

    Examples
    --------
    >>> import tapegrad.torch as torch
    >>> torch.float32, torch.float32.is_floating_point
    (torch.float32, True)
    """

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize")

    def __init__(self, name: str, np_dtype: Any) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.is_complex = self.np.kind == "c"
        self.is_signed = self.np.kind in "fci"
        self.itemsize = self.np.itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        return (_by_name, (self.name,))

    def to_complex(self) -> dtype:
        return {"float64": complex128, "float16": complex64}.get(self.name, complex64)

    def to_real(self) -> dtype:
        return {"complex128": float64, "complex64": float32}.get(self.name, self)


float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
complex64 = dtype("complex64", np.complex64)
complex128 = dtype("complex128", np.complex128)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
uint8 = dtype("uint8", np.uint8)
uint16 = dtype("uint16", np.uint16)
uint32 = dtype("uint32", np.uint32)
uint64 = dtype("uint64", np.uint64)
bool_ = dtype("bool", np.bool_)

ALL = [float16, float32, float64, complex64, complex128, int8, int16, int32, int64, uint8,
       uint16, uint32, uint64, bool_]
_FROM_NP: dict[np.dtype, dtype] = {d.np: d for d in ALL}
_BY_NAME: dict[str, dtype] = {d.name: d for d in ALL}
ALIASES = {
    "half": float16, "float": float32, "double": float64, "cfloat": complex64,
    "cdouble": complex128, "short": int16, "int": int32, "long": int64,
}

_DEFAULT = [float32]


def _by_name(name: str) -> dtype:
    return _BY_NAME[name]


def get_default_dtype() -> dtype:
    """The dtype of tensors made from Python floats (``torch.float32`` unless changed)."""
    return _DEFAULT[0]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (``torch.float32`` or ``torch.float64``)."""
    d = to_torch(d)
    if not d.is_floating_point:
        raise hinted(TypeError(with_hint("only floating-point types are supported as the default type",
                                  "pass torch.float32 or torch.float64")))
    _DEFAULT[0] = d


def default_np() -> np.dtype:
    return _DEFAULT[0].np


def to_torch(d: Any) -> dtype:
    """A torch dtype from a torch dtype, NumPy dtype or Python type."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return _DEFAULT[0]
    if d is int:
        return int64
    if d is bool:
        return bool_
    if d is complex:
        return complex64 if _DEFAULT[0] is not float64 else complex128
    try:
        return _FROM_NP[np.dtype(d)]
    except (TypeError, KeyError):
        raise hinted(TypeError(
            with_hint(f"cannot interpret {d!r} as a data type", "pass a torch dtype such as "
                      "torch.float32")
        )) from None


def to_np(d: Any) -> np.dtype:
    """The NumPy dtype for ``d`` (torch dtype, NumPy dtype, or None)."""
    if isinstance(d, dtype):
        return d.np
    return to_torch(d).np


def from_np(d: np.dtype) -> dtype:
    r = _FROM_NP.get(d)
    if r is None:
        r = to_torch(d)
    return r


class Size(tuple):
    """``torch.Size``: a tuple of ints that prints as ``torch.Size([2, 3])``.

    >>> import tapegrad.torch as torch
    >>> torch.zeros(2, 3).shape
    torch.Size([2, 3])
    """

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i: Any) -> Any:
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other: Any) -> Size:
        return Size(tuple(self) + tuple(other))


# ----------------------------------------------------------------------------- promotion
# categories: 0 bool, 1 integer, 2 floating, 3 complex
_CAT = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """PyTorch's ``promote_types``: like NumPy's except an integer with a float gives the float."""
    if a == b:
        return a
    ka, kb = _CAT[a.kind], _CAT[b.kind]
    if ka == 2 and kb < 2:
        return a
    if kb == 2 and ka < 2:
        return b
    if ka == 3 and kb < 2:
        return a
    if kb == 3 and ka < 2:
        return b
    return np.promote_types(a, b)


def _combine(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    # c10's combine_categories
    if higher is None:
        return lower
    if lower is None:
        return higher
    ch, cl = _CAT[higher.kind], _CAT[lower.kind]
    if ch == 3:
        return higher
    if cl == 3:
        if ch == 2:
            return np.dtype(np.complex128) if higher == np.float64 else np.dtype(np.complex64)
        return lower
    if ch == 2:
        return higher
    if ch == 0 or cl == 2:
        return promote_types(higher, lower)
    return higher


def _upd(cur: np.dtype | None, d: np.dtype) -> np.dtype:
    return d if cur is None else promote_types(cur, d)


def result_type(*operands: Any) -> np.dtype:
    """The dtype PyTorch gives an op on these operands (tensors, arrays, Python numbers).

    Dimensioned tensors decide first; 0-d tensors and then Python numbers only
    matter when they are of a higher category (bool < int < float < complex),
    and a Python float then means the default dtype.
    """
    from .._core.tensor import Tensor

    dim: np.dtype | None = None
    zero: np.dtype | None = None
    wrapped: np.dtype | None = None
    for o in operands:
        if isinstance(o, Tensor):
            d = o._data
            if d.ndim:
                dim = _upd(dim, d.dtype)
            else:
                zero = _upd(zero, d.dtype)
        elif isinstance(o, bool):
            wrapped = _upd(wrapped, np.dtype(np.bool_))
        elif isinstance(o, int):
            wrapped = _upd(wrapped, np.dtype(np.int64))
        elif isinstance(o, float):
            wrapped = _upd(wrapped, default_np())
        elif isinstance(o, complex):
            wrapped = _upd(wrapped, np.dtype(np.complex128 if default_np() == np.float64
                                              else np.complex64))
        elif isinstance(o, np.ndarray):
            if o.ndim:
                dim = _upd(dim, o.dtype)
            else:
                zero = _upd(zero, o.dtype)
        elif isinstance(o, np.generic):
            zero = _upd(zero, o.dtype)
        elif o is None:
            continue
        else:
            a = np.asarray(o)
            if a.dtype.kind == "f":
                a = a.astype(default_np())
            if a.ndim:
                dim = _upd(dim, a.dtype)
            else:
                zero = _upd(zero, a.dtype)
    r = _combine(dim, _combine(zero, wrapped))
    return r if r is not None else default_np()
