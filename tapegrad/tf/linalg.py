"""``tf.linalg``: TensorFlow's linear-algebra functions over the core ops.

The decompositions, solvers and matrix functions are the primitives of
:mod:`tapegrad.ops.linalg_ext` (gradients to any order); this module gives
them TensorFlow's names and argument conventions (``adjoint=``,
``transpose_a=``, ``lower=``, ``full_matrices=False``, ``svd`` returning
``(s, u, v)`` with ``v`` not transposed, named results such as
``LogMatrixDeterminant(sign, log_abs_determinant)``), TensorFlow's errors
(``InvalidArgumentError: Input is not invertible.``) and TensorFlow's
gradient conventions where they differ from PyTorch's (``eigh``'s gradient
is lower-triangular, as TensorFlow's is).

>>> import tapegrad.tf as tf
>>> tf.linalg.matvec(tf.eye(2), tf.constant([1.0, 2.0])).numpy()
array([1., 2.], dtype=float32)
>>> tf.linalg.det(tf.constant([[2.0, 1.0], [1.0, 3.0]]))
<tf.Tensor: shape=(), dtype=float32, numpy=5.0>
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from .. import ops
from .._core.errors import hinted, with_hint
from .._core.registry import defop
from .._core.tensor import Tensor, make
from ..ops import linalg_ext as L
from ._ops import _int, einsum, eye, matmul, matrix_transpose, matvec, norm, tensordot
from ._ops_more import global_norm
from ._tensor import convert
from .dtypes import kernel_name
from .errors import InvalidArgumentError
from .nn import l2_normalize

__all__ = ["einsum", "eye", "matmul", "matrix_transpose", "matvec", "norm", "tensordot",
           "adjoint", "trace", "diag_part", "inv", "det", "slogdet", "logdet", "cholesky",
           "cholesky_solve", "solve", "triangular_solve", "lstsq", "qr", "svd", "eig", "eigvals",
           "eigh",
           "eigvalsh", "pinv", "expm", "band_part", "diag", "set_diag", "tensor_diag",
           "tensor_diag_part", "cross", "global_norm", "normalize", "l2_normalize",
           "matrix_rank", "LogMatrixDeterminant", "Qr"]

adjoint = matrix_transpose

LogMatrixDeterminant = collections.namedtuple("LogMatrixDeterminant",
                                              ["sign", "log_abs_determinant"])
Qr = collections.namedtuple("Qr", ["q", "r"])

_FLOATS = "double, float, half, complex64, complex128"
_FLOATS_DT = "DT_DOUBLE, DT_FLOAT, DT_HALF, DT_COMPLEX64, DT_COMPLEX128"


def _invalid(msg: str, hint: str, op: str, name: str | None = "") -> InvalidArgumentError:
    suffix = f" [Op:{op}]" + ("" if name is None else f" name: {name}")
    return hinted(InvalidArgumentError(None, None, with_hint(msg + suffix, hint)))


def _matrix(x: Any, op: str, signature: str = "input:T -> output:T",
            square: bool = True) -> Tensor:
    """``x`` as a float tensor of rank >= 2 (square unless told), with TensorFlow's errors."""
    t = convert(x)
    if t._data.dtype.kind not in "fc":
        raise _invalid(
            f"Value for attr 'T' of {kernel_name(t._data.dtype)} is not in the list of allowed "
            f"values: {_FLOATS}\n\t; NodeDef: {{{{node {op}}}}}; Op<name={op}; "
            f"signature={signature}; attr=T:type,allowed=[{_FLOATS_DT}]>",
            "linear algebra needs a float tensor: tf.cast(x, tf.float32) first", op)
    if t._data.ndim < 2:
        raise _invalid(f"Input tensor 0 must have rank >= 2, got {t._data.ndim}",
                       "pass a matrix (or a batch of matrices)", op)
    if square and t._data.shape[-1] != t._data.shape[-2]:
        raise _invalid("Input matrix must be square.",
                       f"got shape {list(t._data.shape)}", op)
    return t


def _same_dtype(a: Tensor, b: Tensor, op: str) -> None:
    if a._data.dtype != b._data.dtype:
        raise _invalid(f"cannot compute {op} as input #1(zero-based) was expected to be a "
                       f"{kernel_name(a._data.dtype)} tensor but is a "
                       f"{kernel_name(b._data.dtype)} tensor",
                       "cast one operand with tf.cast", op)


def _adj(t: Tensor) -> Tensor:
    return ops.swapaxes(t, -1, -2)


# ----------------------------------------------------------------------------- diagonals, trace
def trace(x: Any, name: str | None = None) -> Tensor:
    """Sum of the main diagonal of the last two axes.

    >>> import tapegrad.tf as tf
    >>> float(tf.linalg.trace(tf.eye(3)))
    3.0
    """
    return einsum("...ii->...", convert(x))


def diag_part(input: Any, name: str = "diag_part", k: int = 0, padding_value: Any = 0,
              align: str = "RIGHT_LEFT") -> Tensor:
    """The ``k``-th diagonal of the last two axes.

    >>> import tapegrad.tf as tf
    >>> tf.linalg.diag_part(tf.eye(2)).numpy()
    array([1., 1.], dtype=float32)
    """
    return L.diagonal(convert(input), _int(k))


def diag(diagonal: Any, name: str = "diag", k: int = 0, num_rows: int = -1,
         num_cols: int = -1, padding_value: Any = 0, align: str = "RIGHT_LEFT") -> Tensor:
    """Matrices with ``diagonal`` (last axis) on their ``k``-th diagonal, zeros elsewhere.

    >>> import tapegrad.tf as tf
    >>> tf.linalg.diag(tf.constant([1.0, 2.0]), k=1).numpy()
    array([[0., 1., 0.],
           [0., 0., 2.],
           [0., 0., 0.]], dtype=float32)
    """
    if num_rows != -1 or num_cols != -1 or padding_value != 0:
        raise hinted(NotImplementedError(with_hint("tf.linalg.diag(num_rows=, num_cols=, "
                                            "padding_value=) is not supported by tapegrad",
                                            "pad the result with tf.pad")))
    return L.diag_embed(convert(diagonal), _int(k))


def tensor_diag(diagonal: Any, name: str | None = None) -> Tensor:
    """``tf.linalg.tensor_diag`` of a vector: the diagonal matrix."""
    d = convert(diagonal)
    if d._data.ndim != 1:
        raise hinted(NotImplementedError(with_hint("tf.linalg.tensor_diag of a rank > 1 tensor is "
                                            "not supported by tapegrad", "use tf.linalg.diag")))
    return L.diag_embed(d)


def tensor_diag_part(input: Any, name: str | None = None) -> Tensor:
    """``tf.linalg.tensor_diag_part`` of a matrix: its diagonal."""
    return L.diagonal(convert(input))


def set_diag(input: Any, diagonal: Any, name: str = "set_diag", k: int = 0,
             align: str = "RIGHT_LEFT") -> Tensor:
    """``input`` with its ``k``-th diagonal replaced by ``diagonal`` (differentiable in both)."""
    x, d = convert(input), convert(diagonal)
    m, n = x._data.shape[-2:]
    mask = np.eye(m, n, k=_int(k), dtype=x._data.dtype)
    emb = L.diag_embed(d, _int(k))
    emb = ops.getitem(emb, (Ellipsis, slice(0, m), slice(0, n)))
    return ops.add(ops.multiply(x, 1 - mask), emb)


def band_part(input: Any, num_lower: Any, num_upper: Any, name: str | None = None) -> Tensor:
    """Keep a band: ``num_lower`` sub-diagonals and ``num_upper`` super-diagonals (-1: all).

    >>> import tapegrad.tf as tf
    >>> tf.linalg.band_part(tf.ones([3, 3]), 1, 0).numpy()
    array([[1., 0., 0.],
           [1., 1., 0.],
           [0., 1., 1.]], dtype=float32)
    """
    return L.band_part(convert(input), _int(num_lower), _int(num_upper))


# ----------------------------------------------------------------------------- inverses, solves
def inv(input: Any, adjoint: bool = False, name: str | None = None) -> Tensor:
    """Inverse of square matrices (``adjoint``: of their adjoints).

    A singular matrix raises ``InvalidArgumentError: Input is not invertible.``.
    """
    a = _matrix(input, "MatrixInverse")
    if adjoint:
        a = _adj(a)
    try:
        return L.inv_op(a)
    except L.LinAlgError:
        raise _invalid("Input is not invertible.", "the matrix is singular; use "
                       "tf.linalg.pinv or tf.linalg.lstsq", "MatrixInverse") from None


def solve(matrix: Any, rhs: Any, adjoint: bool = False, name: str | None = None) -> Tensor:
    """Solve ``matrix @ X = rhs`` (``adjoint``: ``adjoint(matrix) @ X = rhs``)."""
    a = _matrix(matrix, "MatrixSolve", "matrix:T, rhs:T -> output:T")
    b = convert(rhs)
    _same_dtype(a, b, "MatrixSolve")
    if b._data.ndim < 2 or b._data.shape[-2] != a._data.shape[-1]:
        raise _invalid("Input matrix and right-hand side must have the same number of rows: "
                       f"{a._data.shape[-2]} vs. {b._data.shape[-2] if b._data.ndim else 0}",
                       f"matrix {list(a._data.shape)}, rhs {list(b._data.shape)}",
                       "MatrixSolve")
    if adjoint:
        a = _adj(a)
    try:
        return L.solve_op(a, b)
    except L.LinAlgError:
        raise _invalid("Input matrix is not invertible.", "the matrix is singular; use "
                       "tf.linalg.lstsq", "MatrixSolve") from None


def triangular_solve(matrix: Any, rhs: Any, lower: bool = True, adjoint: bool = False,
                     name: str | None = None) -> Tensor:
    """Solve ``T @ X = rhs`` with ``T`` the ``lower`` (or upper) triangle of ``matrix``
    (``adjoint``: ``adjoint(T) @ X = rhs``); a zero on the diagonal gives inf/NaN."""
    a = _matrix(matrix, "MatrixTriangularSolve", "matrix:T, rhs:T -> output:T")
    b = convert(rhs)
    _same_dtype(a, b, "MatrixTriangularSolve")
    upper = not lower
    if adjoint:
        a, upper = _adj(a), not upper
    return L.solve_triangular(a, b, upper=upper)


def cholesky(input: Any, name: str | None = None) -> Tensor:
    """Lower Cholesky factor of symmetric positive-definite matrices (lower triangle read).

    As TensorFlow, a matrix that is not positive-definite gives NaN (no error).
    """
    a = _matrix(input, "Cholesky")
    try:
        return L.cholesky_op(a)
    except L.LinAlgError:
        return _nan_cholesky(a)


def _nan_cholesky(a: Tensor) -> Tensor:
    """Each factorizable matrix's factor; NaN in the lower triangle of the others."""
    arr = a._data
    out = np.zeros_like(arr)
    low = np.tril(np.ones(arr.shape[-2:], dtype=bool))
    for idx in np.ndindex(*arr.shape[:-2]):
        try:
            out[idx] = np.linalg.cholesky(arr[idx])
        except np.linalg.LinAlgError:
            out[idx] = np.where(low, np.nan, 0.0)
    return make(out, None, False, a._style)


def cholesky_solve(chol: Any, rhs: Any, name: str | None = None) -> Tensor:
    """Solve ``A X = rhs`` given ``chol``, the lower Cholesky factor of ``A``."""
    c = _matrix(chol, "MatrixTriangularSolve", "matrix:T, rhs:T -> output:T")
    b = convert(rhs)
    y = L.solve_triangular(c, b, upper=False)
    return L.solve_triangular(_adj(c), y, upper=True)


def det(input: Any, name: str | None = None) -> Tensor:
    """Determinant of square matrices."""
    return L.det_op(_matrix(input, "MatrixDeterminant"))


def slogdet(input: Any, name: str | None = None) -> Any:
    """``LogMatrixDeterminant(sign, log_abs_determinant)``."""
    a = _matrix(input, "LogMatrixDeterminant")
    sgn, la = L.slogdet(a)
    return LogMatrixDeterminant(sgn, la)


def logdet(matrix: Any, name: str | None = None) -> Tensor:
    """``log(det(matrix))`` of Hermitian positive-definite matrices, through Cholesky."""
    c = cholesky(matrix)
    return ops.multiply(ops.sum(ops.log(L.diagonal(c)), axis=-1), 2.0)


def lstsq(matrix: Any, rhs: Any, l2_regularizer: Any = 0.0, fast: bool = True,
          name: str | None = None) -> Tensor:
    """Least-squares solution of ``matrix @ X = rhs`` (ridge with ``l2_regularizer``).

    ``fast=True`` (TensorFlow's default) solves the regularized normal equations
    through a Cholesky factorization, as TensorFlow does; ``fast=False`` uses the
    pseudo-inverse (minimum-norm solution, ``l2_regularizer`` must be 0).
    """
    a = _matrix(matrix, "MatrixSolveLs", square=False)
    b = convert(rhs)
    _same_dtype(a, b, "MatrixSolveLs")
    m, n = a._data.shape[-2:]
    lam = float(l2_regularizer)
    if not fast:
        if lam:
            raise hinted(NotImplementedError(with_hint("lstsq(fast=False) with l2_regularizer != 0 "
                                                "is not supported by tapegrad", "use fast=True")))
        return ops.matmul(L.pinv(a), b)
    at = _adj(a)
    if m >= n:
        gram = ops.matmul(at, a)
        if lam:
            gram = ops.add(gram, lam * np.eye(n, dtype=a._data.dtype))
        return cholesky_solve(cholesky(gram), ops.matmul(at, b))
    gram = ops.matmul(a, at)
    if lam:
        gram = ops.add(gram, lam * np.eye(m, dtype=a._data.dtype))
    return ops.matmul(at, cholesky_solve(cholesky(gram), b))


# ----------------------------------------------------------------------------- decompositions
def qr(input: Any, full_matrices: bool = False, name: str | None = None) -> Any:
    """``Qr(q, r)`` with ``input = q @ r`` (``full_matrices``: square ``q``); in float32 and
    float64 the values of TensorFlow's CPU kernel bit for bit (Eigen's Householder QR)."""
    a = _matrix(input, "Qr", square=False)
    q, r = L.qr(a, "complete" if full_matrices else "reduced", eigen=True)
    return Qr(q, r)


def svd(tensor: Any, full_matrices: bool = False, compute_uv: bool = True,
        name: str | None = None) -> Any:
    """``s`` or ``(s, u, v)`` with ``tensor = u @ diag(s) @ adjoint(v)`` (``v`` as is, not
    transposed, as TensorFlow returns it)."""
    a = _matrix(tensor, "Svd", square=False)
    if not compute_uv:
        return L.svdvals(a)
    u, s, vh = L.svd(a, full_matrices=full_matrices)
    return s, u, _adj(vh)


@defop("eigh_tf", saves=("out",), grad_name="SelfAdjointEigV2")
def _eigh_tf(a: Any) -> Any:
    return L.eigh_op.fwd(a)


@_eigh_tf.defvjp
def _(g: Tensor, out: Tensor) -> Any:
    # TensorFlow's gradient: PyTorch's (symmetric) G folded onto the lower triangle the op
    # reads, tril(G + G^T) with the diagonal halved  ->  G's strict lower part doubled
    (full,) = L.eigh_op.vjp(g, out)
    return (ops.add(L.tril(full), L.tril(full, -1)),)


@_eigh_tf.defjvp
def _(da: Any, a: Any, *, out: Any) -> Any:
    rule = L.eigh_op.jvp
    assert rule is not None
    return rule(da, a, out=out)


_eigh_tf.defbatch(lambda batched, a: _eigh_tf(a))


def eigh(tensor: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """``(e, v)``: eigenvalues (ascending) and eigenvectors of self-adjoint matrices.

    The lower triangle is read, and the gradient is lower-triangular, as TensorFlow's.
    """
    a = _matrix(tensor, "SelfAdjointEigV2")
    return L._split_eigh(_eigh_tf(a))


def eigvalsh(tensor: Any, name: str | None = None) -> Tensor:
    """Eigenvalues of self-adjoint matrices, ascending."""
    return eigh(tensor)[0]


def eig(tensor: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """``(e, v)``: complex eigenvalues and eigenvectors of general matrices.

    Differentiable with TensorFlow's ``_EigGrad`` (PyTorch's formula without its check
    that the loss ignores the eigenvectors' phases); a real input's gradient is the real
    part, as ``tf.cast`` takes it."""
    return L.eig(_matrix(tensor, "Eig"), phase_check=False)


def eigvals(tensor: Any, name: str | None = None) -> Tensor:
    """Complex eigenvalues of general matrices (differentiable, as :func:`eig`)."""
    return L.eigvals(_matrix(tensor, "Eig"), phase_check=False)


def pinv(a: Any, rcond: Any = None, validate_args: bool = False,
         name: str | None = None) -> Tensor:
    """Moore-Penrose pseudo-inverse; singular values below ``rcond * max(s)`` are dropped
    (default ``rcond = 10 * max(rows, cols) * eps``, TensorFlow's)."""
    x = _matrix(a, "Svd", square=False)
    m, n = x._data.shape[-2:]
    if rcond is None:
        rcond = 10.0 * max(m, n) * float(np.finfo(x._data.dtype).eps)
    return L.pinv(x, rtol=float(rcond))


def matrix_rank(a: Any, tol: Any = None, validate_args: bool = False,
                name: str | None = None) -> Tensor:
    """Number of singular values above ``tol`` (default ``eps * max(rows, cols) * max(s)``)."""
    x = _matrix(a, "Svd", square=False)._data
    s = np.linalg.svd(x, compute_uv=False)
    if tol is None:
        tol = np.finfo(x.dtype).eps * max(x.shape[-2:]) * np.max(s, axis=-1, keepdims=True)
    return convert(np.sum(s > tol, axis=-1).astype(np.int32))


def expm(input: Any, name: str | None = None) -> Tensor:
    """Matrix exponential (Pade 13 with scaling and squaring, as TensorFlow)."""
    return L.matrix_exp(_matrix(input, "MatrixExponential"))


def cross(a: Any, b: Any, name: str | None = None) -> Tensor:
    """Cross product of 3-vectors along the last axis (same shapes)."""
    x, y = convert(a), convert(b)
    _same_dtype(x, y, "Cross")
    if x._data.shape[-1:] != (3,) or y._data.shape[-1:] != (3,):
        from .errors import FailedPreconditionError

        raise hinted(FailedPreconditionError(None, None, with_hint(
            "Cross-products are only defined for 3-element vectors. [Op:Cross] name: ",
            f"shapes {list(x._data.shape)} and {list(y._data.shape)}")))
    return L.cross(x, y)


def normalize(tensor: Any, ord: Any = "euclidean", axis: Any = None,
              name: str | None = None) -> tuple[Tensor, Tensor]:
    """``(tensor / norm, norm)``."""
    t = convert(tensor)
    n = norm(t, ord=ord, axis=axis, keepdims=True)
    return ops.divide(t, n), ops.squeeze(n, axis) if axis is not None else ops.reshape(n, ())
