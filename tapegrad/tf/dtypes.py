"""TensorFlow dtypes (``tf.float32`` ...) over NumPy dtypes.

A :class:`DType` prints as TensorFlow's does (``repr`` ``tf.float32``, ``str``
``<dtype: 'float32'>``) and compares equal to the matching NumPy dtype, NumPy
scalar type and dtype name, so ``x.dtype == tf.float32``,
``x.dtype == np.float32`` and ``x.dtype == "float32"`` all hold.

>>> import tapegrad.tf as tf
>>> tf.constant(1.0).dtype
tf.float32
>>> tf.float64.as_numpy_dtype
<class 'numpy.float64'>
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint

__all__ = [
    "DType", "as_dtype", "float16", "half", "float32", "float64", "double", "int8", "int16",
    "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool", "complex64", "complex128",
]


class DType:
    """A TensorFlow dtype: a name plus the NumPy dtype that stores it.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> tf.float32.is_floating, tf.int32.is_integer
    (True, True)
    >>> print(tf.float32)
    <dtype: 'float32'>
    """

    __slots__ = ("_np", "_name", "_kernel")

    def __init__(self, np_dtype: Any, kernel_name: str) -> None:
        self._np = np.dtype(np_dtype)
        self._name = self._np.name
        # the name TensorFlow's kernels use in messages ("float", "double", ...)
        self._kernel = kernel_name

    @property
    def name(self) -> str:
        return self._name

    @property
    def as_numpy_dtype(self) -> type:
        return self._np.type

    @property
    def base_dtype(self) -> DType:
        return self

    @property
    def real_dtype(self) -> DType:
        if self._np.kind == "c":
            return as_dtype(np.float32 if self._np == np.complex64 else np.float64)
        return self

    @property
    def is_floating(self) -> builtins.bool:
        return self._np.kind == "f"

    @property
    def is_integer(self) -> builtins.bool:
        return self._np.kind in "iu"

    @property
    def is_unsigned(self) -> builtins.bool:
        return self._np.kind == "u"

    @property
    def is_complex(self) -> builtins.bool:
        return self._np.kind == "c"

    @property
    def is_bool(self) -> builtins.bool:
        return self._np.kind == "b"

    @property
    def is_numpy_compatible(self) -> builtins.bool:
        return True

    @property
    def size(self) -> int:
        return int(self._np.itemsize)

    @property
    def min(self) -> Any:
        if self._np.kind == "f":
            return float(np.finfo(self._np).min)
        if self._np.kind in "iu":
            return int(np.iinfo(self._np).min)
        raise TypeError(f"Cannot find minimum value of {self}.")

    @property
    def max(self) -> Any:
        if self._np.kind == "f":
            return float(np.finfo(self._np).max)
        if self._np.kind in "iu":
            return int(np.iinfo(self._np).max)
        raise TypeError(f"Cannot find maximum value of {self}.")

    def is_compatible_with(self, other: Any) -> builtins.bool:
        return self == other

    def __repr__(self) -> str:
        return f"tf.{self._name}"

    def __str__(self) -> str:
        return f"<dtype: '{self._name}'>"

    def __eq__(self, other: object) -> builtins.bool:
        if isinstance(other, DType):
            return self._np == other._np
        if other is None:
            return False
        try:
            return self._np == as_dtype(other)._np
        except TypeError:
            return False

    def __ne__(self, other: object) -> builtins.bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self._name)

    def __reduce__(self) -> Any:
        return (as_dtype, (self._name,))


float16 = DType(np.float16, "half")
half = float16
float32 = DType(np.float32, "float")
float64 = DType(np.float64, "double")
double = float64
int8 = DType(np.int8, "int8")
int16 = DType(np.int16, "int16")
int32 = DType(np.int32, "int32")
int64 = DType(np.int64, "int64")
uint8 = DType(np.uint8, "uint8")
uint16 = DType(np.uint16, "uint16")
uint32 = DType(np.uint32, "uint32")
uint64 = DType(np.uint64, "uint64")
bool = DType(np.bool_, "bool")  # noqa: A001 - TensorFlow's name
complex64 = DType(np.complex64, "complex64")
complex128 = DType(np.complex128, "complex128")

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
        bool, complex64, complex128)
_BY_NP: dict[np.dtype, DType] = {d._np: d for d in _ALL}
_BY_NAME: dict[str, DType] = {d.name: d for d in _ALL}
_BY_NAME.update({"float": float32, "double": float64, "half": float16, "bool_": bool})


def as_dtype(type_value: Any) -> DType:
    """The :class:`DType` for a DType, NumPy dtype/type, or name.

    Examples
    --------
    >>> import numpy as np
    >>> import tapegrad.tf as tf
    >>> tf.as_dtype(np.float64)
    tf.float64
    >>> tf.as_dtype("int32")
    tf.int32
    """
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str):
        d = _BY_NAME.get(type_value)
        if d is not None:
            return d
    elif type_value is not None:
        if type_value is float:
            return float32
        if type_value is int:
            return int32
        try:
            npd = np.dtype(type_value)
        except TypeError:
            npd = None
        if npd is not None and npd in _BY_NP:
            return _BY_NP[npd]
    raise hinted(TypeError(
        with_hint(
            f"Cannot convert the argument `type_value`: {type_value!r} to a TensorFlow DType.",
            "pass a tf dtype such as tf.float32, a numpy dtype, or a name like 'float32'",
        )
    ))


def from_numpy(npd: np.dtype) -> DType:
    """The DType of a NumPy dtype (internal fast path)."""
    d = _BY_NP.get(npd)
    if d is None:
        return as_dtype(npd)
    return d


def np_dtype(dtype: Any) -> np.dtype:
    """The NumPy dtype for any accepted dtype spelling."""
    if isinstance(dtype, DType):
        return dtype._np
    return as_dtype(dtype)._np


def kernel_name(npd: np.dtype) -> str:
    """The dtype name TensorFlow's kernels print ("float", "double", "int32"...)."""
    d = _BY_NP.get(npd)
    return d._kernel if d is not None else str(npd)
