"""``tf.TensorSpec``: the shape and dtype of one component of a dataset element."""

from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from .._tensor import TensorShape

__all__ = ["TensorSpec"]


class TensorSpec:
    """A tensor's static description, printed as TensorFlow prints it.

    Parameters
    ----------
    shape : sequence of int or None
        ``None`` entries are unknown dimensions (a batch of unknown size).
    dtype : DType, default tf.float32
    name : str, optional

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> tf.TensorSpec(shape=(None, 3), dtype=tf.float32)
    TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)
    """

    def __init__(self, shape: Any, dtype: Any = None, name: str | None = None) -> None:
        self.shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
        self.dtype = _dt.float32 if dtype is None else _dt.as_dtype(dtype)
        self.name = name

    def is_compatible_with(self, other: Any) -> bool:
        """Same dtype and compatible shapes (``None`` matches any size)."""
        if isinstance(other, TensorSpec):
            return self.dtype == other.dtype and self.shape.is_compatible_with(other.shape)
        shape = getattr(other, "shape", None)
        dtype = getattr(other, "dtype", None)
        return (dtype is not None and _dt.as_dtype(dtype) == self.dtype
                and self.shape.is_compatible_with(TensorShape(tuple(shape or ()))))

    def _shape_text(self) -> str:
        dims = self.shape.as_list() if self.shape.rank is not None else None
        if dims is None:
            return "<unknown>"
        return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TensorSpec) and self.dtype == other.dtype
                and self.shape == other.shape and self.name == other.name)

    def __hash__(self) -> int:
        return hash((self._shape_text(), self.dtype.name, self.name))

    def __repr__(self) -> str:
        return (f"TensorSpec(shape={self._shape_text()}, dtype=tf.{self.dtype.name}, "
                f"name={self.name!r})")
