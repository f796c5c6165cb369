"""``tf.linalg``: the matrix functions of the op set.

>>> import tapegrad.tf as tf
>>> tf.linalg.matvec(tf.eye(2), tf.constant([1.0, 2.0])).numpy()
array([1., 2.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from .._core.tensor import Tensor
from ._ops import einsum, eye, matmul, matrix_transpose, matvec, norm, tensordot
from ._tensor import convert

__all__ = ["einsum", "eye", "matmul", "matrix_transpose", "matvec", "norm", "tensordot",
           "adjoint", "trace", "diag_part"]

adjoint = matrix_transpose


def trace(x: Any, name: str | None = None) -> Tensor:
    """Sum of the main diagonal of the last two axes.

    >>> import tapegrad.tf as tf
    >>> float(tf.linalg.trace(tf.eye(3)))
    3.0
    """
    return einsum("...ii->...", convert(x))


def diag_part(input: Any, name: str = "diag_part", k: int = 0) -> Tensor:
    """The main diagonal of the last two axes.

    >>> import tapegrad.tf as tf
    >>> tf.linalg.diag_part(tf.eye(2)).numpy()
    array([1., 1.], dtype=float32)
    """
    return einsum("...ii->...i", convert(input))
