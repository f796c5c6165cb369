"""``torch.linalg``: PyTorch's linear-algebra functions over the core ops.

The decompositions, solvers and matrix functions are the primitives of
:mod:`tapegrad.ops.linalg_ext` (VJP to any order, JVP and batching rules);
this module adds PyTorch's names, signatures, named results
(``torch.return_types.linalg_slogdet(sign=..., logabsdet=...)``), argument
checks and errors.  A singular or non-positive-definite input raises
:class:`LinAlgError` (a ``RuntimeError``) with PyTorch's message; the
``*_ex`` variants return an ``info`` code instead.

>>> import tapegrad.torch as torch
>>> A = torch.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
>>> torch.linalg.det(A)
tensor(5., grad_fn=<LinalgDetBackward0>)
>>> torch.linalg.det(A).backward()
>>> A.grad
tensor([[ 3., -1.],
        [-1.,  2.]])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import ops as core
from .._core.errors import hinted, with_hint
from .._core.tensor import TORCH, Tensor, make
from ..ops import linalg_ext as L
from ..ops.reduce import norm_axis
from ._dtype import to_np

LinAlgError = L.LinAlgError

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig",
    "eigvals", "eigh",
    "eigvalsh", "inv", "inv_ex", "lstsq", "matmul", "matrix_exp", "matrix_norm",
    "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve",
    "solve_ex", "solve_triangular", "svd", "svdvals", "vander", "vecdot", "vector_norm",
]


# ----------------------------------------------------------------------------- named results
class _Named(tuple):
    """A named tuple printed as ``torch.return_types.<name>(field=..., ...)``."""

    _name = ""
    _fields: tuple[str, ...] = ()

    def __new__(cls, *values: Any) -> _Named:
        return tuple.__new__(cls, values)

    def __getattr__(self, item: str) -> Any:
        try:
            return self[type(self)._fields.index(item)]
        except ValueError:
            raise AttributeError(item) from None

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"torch.return_types.{self._name}(\n{body})"


def _named(name: str, fields: Sequence[str]) -> type[_Named]:
    return type(name, (_Named,), {"_name": name, "_fields": tuple(fields)})


linalg_slogdet = _named("linalg_slogdet", ("sign", "logabsdet"))
linalg_qr = _named("linalg_qr", ("Q", "R"))
linalg_svd = _named("linalg_svd", ("U", "S", "Vh"))
linalg_eigh = _named("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_inv_ex = _named("linalg_inv_ex", ("inverse", "info"))
linalg_cholesky_ex = _named("linalg_cholesky_ex", ("L", "info"))
linalg_solve_ex = _named("linalg_solve_ex", ("result", "info"))
linalg_lstsq = _named("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


# ----------------------------------------------------------------------------- checks
def _tensor(x: Any, fn: str, arg: str = "A") -> Tensor:
    if not isinstance(x, Tensor):
        raise hinted(TypeError(with_hint(f"linalg_{fn}(): argument '{arg}' (position 1) must be Tensor, "
                                  f"not {type(x).__name__}", "wrap the value in torch.tensor")))
    return x


def _empty(dtype: Any, like: Tensor) -> Tensor:
    return make(np.zeros((0,), dtype=dtype), None, False, like._style)


def _info(code: Any) -> Tensor:
    return make(np.asarray(code, dtype=np.int32), None, False, TORCH)


def _batch_info(a: np.ndarray, fn: Any) -> np.ndarray:
    """Per-matrix LAPACK-style info codes (0: success) for a failed batched call."""
    info = np.zeros(a.shape[:-2], dtype=np.int32)
    for idx in np.ndindex(*a.shape[:-2]):
        info[idx] = fn(a[idx])
    return info


# ----------------------------------------------------------------------------- inverses, solves
def inv(A: Tensor, *, out: Any = None) -> Tensor:
    """Inverse of a square matrix (or batch); singular input raises :class:`LinAlgError`."""
    return L.inv(_tensor(A, "inv"))


def inv_ex(A: Tensor, *, check_errors: bool = False, out: Any = None) -> Any:
    """``(inverse, info)``: ``info`` is 0, or the 1-based index of the zero pivot (no error).

    Where ``info > 0`` the inverse's values are unspecified (NaN here), as PyTorch's.
    """
    x = _tensor(A, "inv_ex")
    L._square_check(x, "linalg.inv_ex")
    try:
        return linalg_inv_ex(L.inv(x), _info(np.zeros(x._data.shape[:-2], dtype=np.int32)))
    except LinAlgError:
        if check_errors:
            raise
    info = _batch_info(x._data, L.lu_zero_pivot)
    return linalg_inv_ex(make(np.full(x._data.shape, np.nan, dtype=x._data.dtype), None, False,
                              x._style), _info(info))


def solve(A: Tensor, B: Tensor, *, left: bool = True, out: Any = None) -> Tensor:
    """Solve ``A X = B`` (``left=False``: ``X A = B``); ``B`` may be a (batch of) vector(s)."""
    a, b = _tensor(A, "solve"), _tensor(B, "solve", "B")
    return L.solve(a, b, left=left)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False,
             out: Any = None) -> Any:
    """``(result, info)`` of :func:`solve`, with ``info`` instead of an error."""
    try:
        r = solve(A, B, left=left)
        return linalg_solve_ex(r, _info(np.zeros(A._data.shape[:-2], dtype=np.int32)))
    except LinAlgError:
        if check_errors:
            raise
    info = _batch_info(A._data, L.lu_zero_pivot)
    shape = np.broadcast_shapes(A._data.shape, B._data.shape) if B._data.ndim == A._data.ndim \
        else B._data.shape
    return linalg_solve_ex(make(np.full(shape, np.nan, dtype=A._data.dtype), None, False,
                                A._style), _info(info))


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False, out: Any = None) -> Tensor:
    """Solve ``T X = B`` (``left``) or ``X T = B``, ``T`` the ``upper``/lower triangle of ``A``."""
    a, b = _tensor(A, "solve_triangular"), _tensor(B, "solve_triangular", "B")
    return L.solve_triangular(a, b, upper=upper, left=left, unitriangular=unitriangular)


def det(A: Tensor, *, out: Any = None) -> Tensor:
    """Determinant.  Where ``A`` is singular the gradient is PyTorch 2.13's: zero in a
    first-order backward, the cofactor matrix (through an SVD) with ``create_graph=True``."""
    return L.det(_tensor(A, "det"), singular="torch")


def slogdet(A: Tensor, *, out: Any = None) -> Any:
    """``(sign, logabsdet)`` with ``det = sign * exp(logabsdet)``."""
    return linalg_slogdet(*L.slogdet(_tensor(A, "slogdet")))


def cholesky(A: Tensor, *, upper: bool = False, out: Any = None) -> Tensor:
    """Cholesky factor ``L`` (``A = L L^T``; ``upper``: ``U = L^T``); reads the lower triangle."""
    return L.cholesky(_tensor(A, "cholesky"), upper=upper)


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False,
                out: Any = None) -> Any:
    """``(L, info)``: ``info`` is 0, or the order of the first non-positive-definite minor."""
    x = _tensor(A, "cholesky_ex")
    L._square_check(x, "linalg.cholesky_ex")
    try:
        return linalg_cholesky_ex(L.cholesky(x, upper=upper),
                                  _info(np.zeros(x._data.shape[:-2], dtype=np.int32)))
    except LinAlgError:
        if check_errors:
            raise

    def code(m: np.ndarray) -> int:
        try:
            np.linalg.cholesky(m)
            return 0
        except np.linalg.LinAlgError:
            return L._leading_minor(m)

    info = _batch_info(x._data, code)
    return linalg_cholesky_ex(make(np.full(x._data.shape, np.nan, dtype=x._data.dtype), None,
                                   False, x._style), _info(info))


# ----------------------------------------------------------------------------- decompositions
def qr(A: Tensor, mode: str = "reduced", *, out: Any = None) -> Any:
    """``(Q, R)`` with ``A = Q R``; ``mode`` is ``'reduced'``, ``'complete'`` or ``'r'``."""
    return linalg_qr(*L.qr(_tensor(A, "qr"), mode))


def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None,
        out: Any = None) -> Any:
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, singular values descending."""
    return linalg_svd(*L.svd(_tensor(A, "svd"), full_matrices=full_matrices))


def svdvals(A: Tensor, *, driver: str | None = None, out: Any = None) -> Tensor:
    """Singular values, descending (gradient always defined: ``U diag(g) Vh``)."""
    return L.svdvals(_tensor(A, "svdvals"))


def _uplo(UPLO: str) -> bool:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO == "L"


def eigh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> Any:
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix (one triangle read).

    With repeated eigenvalues the gradient through the eigenvectors is inf/NaN,
    as PyTorch documents; through the eigenvalues alone it is always defined.
    """
    return linalg_eigh(*L.eigh(_tensor(A, "eigh"), lower=_uplo(UPLO)))


def eigvalsh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> Tensor:
    """Eigenvalues of a symmetric matrix, ascending."""
    return L.eigvalsh(_tensor(A, "eigvalsh"), lower=_uplo(UPLO))


linalg_eig = _named("linalg_eig", ("eigenvalues", "eigenvectors"))


def eig(A: Tensor, *, out: Any = None) -> Any:
    """Complex eigenvalues and (unit-norm) eigenvectors of a general square matrix.

    Differentiable with PyTorch's formula (``linalg_eig_backward``): a real input gets
    the real part of the complex gradient; a loss that depends on the eigenvectors'
    phases raises PyTorch's error; repeated eigenvalues give inf/NaN through the vectors.
    """
    return linalg_eig(*L.eig(_tensor(A, "eig")))


def eigvals(A: Tensor, *, out: Any = None) -> Tensor:
    """Complex eigenvalues of a general square matrix (differentiable, as :func:`eig`)."""
    return L.eigvals(_tensor(A, "eigvals"))


# ----------------------------------------------------------------------------- norms
def _floating(x: Tensor, fn: str, dtype: Any) -> Tensor:
    if dtype is not None:
        x = core.cast(x, dtype=to_np(dtype))
    if x._data.dtype.kind not in "fc":
        L._float_check(x, fn)
    return x


def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None, out: Any = None) -> Tensor:
    """``ord``-norm of ``x`` flattened over ``dim`` (every axis by default), any real ``ord``."""
    t = _tensor(x, "vector_norm", "input")
    if isinstance(ord, (str, bool)) or not isinstance(ord, (int, float, np.number)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not "
                        f"{type(ord).__name__}")
    t = _floating(t, "linalg.vector_norm", dtype)
    if isinstance(dim, int):
        dim = (dim,)
    return L.vector_norm(t, float(ord), dim, keepdim)


def matrix_norm(A: Tensor, ord: Any = "fro", dim: tuple[int, int] = (-2, -1),
                keepdim: bool = False, *, dtype: Any = None, out: Any = None) -> Tensor:
    """Matrix norm: ``'fro'``, ``'nuc'``, ``inf``, ``-inf``, ``1``, ``-1``, ``2``, ``-2``."""
    t = _tensor(A, "matrix_norm")
    if t._data.ndim < 2:
        raise hinted(RuntimeError(with_hint("linalg.matrix_norm: The input tensor A must have at "
                                     "least 2 dimensions.", f"got shape {list(t._data.shape)}")))
    t = _floating(t, "linalg.matrix_norm", dtype)
    if ord not in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        raise hinted(RuntimeError(with_hint(f"linalg.matrix_norm: Order {ord} not supported.",
                                     "ord is one of 'fro', 'nuc', inf, -inf, 1, -1, 2, -2")))
    d = tuple(norm_axis(tuple(dim), t._data.ndim) or ())
    return L.matrix_norm(t, ord, (d[0], d[1]), keepdim)


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None, out: Any = None) -> Tensor:
    """Vector or matrix norm, chosen as PyTorch does from ``ord`` and ``dim``."""
    t = _tensor(A, "norm")
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 2:
            return matrix_norm(t, "fro" if ord is None else ord, (dims[0], dims[1]), keepdim,
                               dtype=dtype)
        return vector_norm(t, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(t, 2, None, keepdim, dtype=dtype)
    if t._data.ndim == 2:
        return matrix_norm(t, ord, (-2, -1), keepdim, dtype=dtype)
    if t._data.ndim == 1:
        return vector_norm(t, ord, None, keepdim, dtype=dtype)
    raise hinted(RuntimeError(with_hint(f"linalg.norm: If dim is not specified but ord is, the input "
                                 f"must be 1D or 2D. Got {t._data.ndim}D.",
                                 "pass dim= to say which axes to reduce")))


def cond(A: Tensor, p: Any = None, *, out: Any = None) -> Tensor:
    """Condition number: ``norm(A, p) * norm(inv(A), p)`` (2-norm: ``S[0] / S[-1]``)."""
    t = _tensor(A, "cond")
    if p in (None, 2, -2):
        s = L.svdvals(t)
        hi = core.getitem(s, (Ellipsis, 0))
        lo = core.getitem(s, (Ellipsis, -1))
        return core.divide(hi, lo) if p != -2 else core.divide(lo, hi)
    return core.multiply(matrix_norm(t, p), matrix_norm(L.inv(t), p))


# ----------------------------------------------------------------------------- functions
def matrix_power(A: Tensor, n: int, *, out: Any = None) -> Tensor:
    """``A`` to the integer power ``n`` (negative: of the inverse)."""
    return L.matrix_power(_tensor(A, "matrix_power"), int(n))


def matrix_exp(A: Tensor) -> Tensor:
    """Matrix exponential (Pade 13 with scaling and squaring)."""
    return L.matrix_exp(_tensor(A, "matrix_exp"))


def pinv(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False,
         out: Any = None) -> Tensor:
    """Moore-Penrose pseudo-inverse (singular values below the tolerance are dropped)."""
    t = _tensor(A, "pinv")
    if atol is not None:
        raise hinted(NotImplementedError(with_hint("linalg.pinv(atol=...) is not supported by tapegrad",
                                            "pass rtol= (relative to the largest singular "
                                            "value) instead")))
    return L.pinv(t, rtol=None if rtol is None else float(rtol), hermitian=hermitian)


def matrix_rank(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False,
                out: Any = None) -> Tensor:
    """Number of singular values above ``max(atol, rtol * S.max())``."""
    a = _tensor(A, "matrix_rank")._data
    s = np.linalg.svd(a, compute_uv=False) if not hermitian else np.abs(np.linalg.eigvalsh(a))
    m, n = a.shape[-2:]
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else max(m, n) * np.finfo(a.dtype).eps
    tol = np.maximum(0.0 if atol is None else atol,
                     rtol * (s.max(axis=-1, keepdims=True) if s.shape[-1] else 0.0))
    return make(np.sum(s > tol, axis=-1).astype(np.int64), None, False, TORCH)


def lstsq(A: Tensor, B: Tensor, rcond: Any = None, *, driver: str | None = None) -> Any:
    """``(solution, residuals, rank, singular_values)`` of ``min ||A X - B||``.

    The solution is the minimum-norm one (through the pseudo-inverse, so it is
    differentiable).  As PyTorch's CPU drivers: ``rank`` for ``'gelsy'`` (the
    default), ``'gelsd'`` and ``'gelss'``; ``singular_values`` for ``'gelsd'`` and
    ``'gelss'``; ``residuals`` (squared, per column of ``B``) when ``m > n``, ``A``
    has full rank and the driver is not ``'gelsy'``; the rest empty.
    """
    a, b = _tensor(A, "lstsq"), _tensor(B, "lstsq", "B")
    drv = "gelsy" if driver is None else driver
    if drv not in ("gels", "gelsy", "gelsd", "gelss"):
        raise hinted(RuntimeError(with_hint(f"torch.linalg.lstsq: parameter `driver` should be one of "
                                     f"(gels, gelsy, gelsd, gelss), but got {drv}",
                                     "leave driver=None for 'gelsy'")))
    sol = L.lstsq(a, b, rcond=None if rcond is None else float(rcond))
    dt = a._data.dtype
    rank = matrix_rank(a, rtol=rcond) if drv != "gels" else _empty(np.int64, a)
    sv = _empty(dt, a)
    if drv in ("gelsd", "gelss"):
        sv = make(np.linalg.svd(a._data, compute_uv=False), None, False, a._style)
    res = _empty(dt, a)
    m, n = a._data.shape[-2:]
    if drv != "gelsy" and m > n and np.all(np.asarray(rank._data) == n if drv != "gels"
                                          else np.linalg.matrix_rank(a._data) == n):
        vec = b._data.ndim == a._data.ndim - 1
        bb = core.expand_dims(b, -1) if vec else b
        xs = core.expand_dims(sol, -1) if vec else sol
        r = core.subtract(core.matmul(a, xs), bb)
        res = core.sum(core.multiply(r, r), axis=-2)
        if vec:
            res = core.squeeze(res, -1)
    return linalg_lstsq(sol, res, rank, sv)


def cross(input: Tensor, other: Tensor, *, dim: int = -1, out: Any = None) -> Tensor:
    """Cross product of 3-vectors along ``dim`` (inputs broadcast)."""
    a, b = _tensor(input, "cross", "input"), _tensor(other, "cross", "other")
    nd = max(a._data.ndim, b._data.ndim)
    sa = (1,) * (nd - a._data.ndim) + a._data.shape
    sb = (1,) * (nd - b._data.ndim) + b._data.shape
    d = dim % nd
    if sa[d] != 3 or sb[d] != 3:
        raise hinted(RuntimeError(with_hint(f"linalg.cross: inputs dimension {dim} must have length 3. "
                                     f"Got {sa[d]} and {sb[d]}",
                                     f"shapes {list(a._data.shape)} and {list(b._data.shape)}")))
    return L.cross(a, b, dim)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The ``offset`` diagonal of dims ``dim1``/``dim2``, as the last dim."""
    return _torch_diagonal(_tensor(A, "diagonal"), offset, dim1, dim2)


def matmul(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    from ._ops import matmul as _mm

    return _mm(input, other)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: Any = None) -> Tensor:
    """Dot product of vectors along ``dim`` (broadcasting)."""
    return core.sum(core.multiply(x, y), axis=dim)


def multi_dot(tensors: Sequence[Tensor], *, out: Any = None) -> Tensor:
    """Product of a chain of matrices (first/last may be vectors), left to right."""
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError("multi_dot(): expected at least 2 tensors but got " + str(len(ts)))
    r = ts[0]
    for t in ts[1:]:
        r = core.matmul(r, t)
    return r


# ----------------------------------------------------------------------------- torch.* names
def logdet(input: Tensor) -> Tensor:
    """``log(det(A))`` (NaN for a negative determinant)."""
    return L.logdet(_tensor(input, "logdet", "input"))


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices with ``input``'s last dim on their ``offset`` diagonal."""
    return L.diag_embed(input, offset, dim1, dim2)


def _diagonal_op() -> Any:
    global _DIAG_OP
    if _DIAG_OP is None:
        from ..ops.views import take_flat

        _DIAG_OP = take_flat.renamed("DiagonalBackward0")
    return _DIAG_OP


_DIAG_OP: Any = None


def _torch_diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    if not isinstance(input, Tensor):
        return L.diagonal(input, offset, dim1, dim2)
    shape = input._data.shape
    n = len(shape)
    if n and -n <= dim1 < n and -n <= dim2 < n and dim1 % n == dim2 % n:
        raise hinted(RuntimeError(with_hint(
            f"diagonal dimensions cannot be identical {dim1}, {dim2}",
            "pass two different dims")))
    try:  # the diagonal's flat positions in the input: one node, DiagonalBackward0
        idx = np.diagonal(np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape),
                          offset, dim1, dim2).copy()
    except (ValueError, TypeError, np.exceptions.AxisError):
        return L.diagonal(input, offset, dim1, dim2)  # its errors
    r = _diagonal_op()(input, idx=idx, shape=shape, overlap=False)
    # the same values as numpy's view of the diagonal, which PyTorch's result is (a write
    # into it writes into ``input``); numpy makes that view read-only
    src, dst = input, r
    if r._lvl is not None:  # a dual tensor (forward AD): its primal aliases the input's
        from ..autodiff.forward import JVPLevel

        if not isinstance(r._lvl, JVPLevel) or input._lvl is not r._lvl:
            return r
        src, dst = input._primal, r._primal
        if src._lvl is not None or dst._lvl is not None:
            return r
    elif input._lvl is not None:
        return r
    d = np.diagonal(src._data, offset, dim1, dim2)
    if src._data.flags.writeable:
        d.flags.writeable = True
    dst._data = d
    r._data = d
    from ._views import mark

    return mark(r, input)


def _pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    return L.pinv(input, rtol=rcond)


def _torch_cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    if dim is None:  # the first dim of size 3 (torch.cross's legacy default)
        dim = next(i for i, s in enumerate(np.broadcast_shapes(input._data.shape,
                                                                other._data.shape)) if s == 3)
    return cross(input, other, dim=dim)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """Vandermonde matrix: columns ``x**0, x**1, ..., x**(N-1)`` (cumulative products)."""
    t = _tensor(x, "vander", "x")
    n = t._data.shape[-1] if N is None else int(N)
    if n <= 0:
        raise RuntimeError("N must be greater than 1.")
    cols = [core.add(core.multiply(t, 0.0), 1.0)]
    for _ in range(1, n):
        cols.append(core.multiply(cols[-1], t))
    return core.stack(cols, axis=-1)


triangular_solve_result = _named("triangular_solve", ("solution", "cloned_coefficient"))
svd_result = _named("svd", ("U", "S", "V"))
qr_result = _named("qr", ("Q", "R"))


def _cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky_solve(B, L)``: solve ``A X = B`` given ``A``'s Cholesky factor."""
    low = core.swapaxes(input2, -1, -2) if upper else input2
    y = L.solve_triangular(low, input, upper=False)
    return L.solve_triangular(core.swapaxes(low, -1, -2), y, upper=True)


def _cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky_inverse(L)``: the inverse of ``A = L L^T`` (``upper``: ``U^T U``)."""
    n = input._data.shape[-1]
    eye = make(np.broadcast_to(np.eye(n, dtype=input._data.dtype), input._data.shape).copy(),
               None, False, TORCH)
    return _cholesky_solve(eye, input, upper)


def _triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                      unitriangular: bool = False) -> Any:
    """The older ``torch.triangular_solve(b, A)``: ``(solution, cloned_coefficient)``."""
    a = core.swapaxes(A, -1, -2) if transpose else A
    sol = L.solve_triangular(a, input, upper=upper != transpose, unitriangular=unitriangular)
    return triangular_solve_result(sol, core.clone(A))


def _torch_svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> Any:
    """The older ``torch.svd``: ``(U, S, V)`` with ``A = U diag(S) V^T`` (``V``, not ``Vh``)."""
    if not compute_uv:
        m, n = input._data.shape[-2:]
        s = L.svdvals(input)
        lead = input._data.shape[:-2]
        z = np.zeros
        return svd_result(make(z(lead + (m, m), input._data.dtype), None, False, TORCH), s,
                          make(z(lead + (n, n), input._data.dtype), None, False, TORCH))
    u, s, vh = L.svd(input, full_matrices=not some)
    return svd_result(u, s, core.swapaxes(vh, -1, -2))


def _torch_qr(input: Tensor, some: bool = True) -> Any:
    """The older ``torch.qr(A, some)``: ``linalg.qr(A, 'reduced' if some else 'complete')``."""
    return qr_result(*L.qr(input, "reduced" if some else "complete"))


# names torch.* and Tensor.* give these functions
TORCH_NAMES = {
    "det": det, "logdet": logdet, "slogdet": slogdet, "inverse": inv,
    "matrix_exp": matrix_exp, "matrix_power": matrix_power, "diag_embed": diag_embed,
    "diagonal": _torch_diagonal, "pinverse": _pinverse, "cross": _torch_cross,
    "cholesky_solve": _cholesky_solve, "cholesky_inverse": _cholesky_inverse,
    "triangular_solve": _triangular_solve, "svd": _torch_svd, "qr": _torch_qr,
}


def install() -> None:
    """Add ``Tensor.det()``, ``.inverse()``, ... where the shared class does not have them."""
    methods = dict(TORCH_NAMES)
    methods["cholesky"] = lambda self, upper=False: cholesky(self, upper=upper)
    from ._tensor import TorchTensor as cls

    for name, fn in methods.items():
        if name not in cls.__dict__:
            setattr(cls, name, fn)
    if "mT" not in cls.__dict__:
        from ._ops import transpose as _transpose

        # TransposeBackward0, as PyTorch names it
        cls.mT = property(lambda self: _transpose(self, -2, -1))  # type: ignore[attr-defined]
