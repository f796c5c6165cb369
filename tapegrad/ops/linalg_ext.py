"""Linear algebra: factorizations, solvers and matrix functions as primitives.

Each primitive has a NumPy forward, a VJP written in tapegrad ops (so every
derivative is itself differentiable), a JVP rule and a batching rule.  The
gradient formulas are PyTorch's (``FunctionsManual.cpp``): where a derivative
is ill-defined (repeated eigenvalues or singular values with a loss that
depends on the eigen/singular vectors) the result is inf/NaN as there; a loss
of the eigen/singular values alone has a well-defined gradient.

Decompositions with several outputs (``qr``, ``svd``, ``eigh``) are one
primitive whose result packs the outputs along the last axis; an ``unpack``
op named after the decomposition (``LinalgSvdBackward0``, ...) takes each
output out, and its VJP gives the primitive a cotangent that is zero where an
output was not used (the VJPs skip those terms, so a loss of the singular
values alone stays finite at repeated singular values).

Errors use PyTorch's wording (the core's convention); :class:`LinAlgError` is
a ``RuntimeError``, as ``torch.linalg.LinAlgError`` is.  Front-ends re-raise
with their framework's type where it differs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.mode import STATE as _STATE
from .._core.registry import defop
from .._core.tensor import Tensor
from ._eigen_qr import eigen_qr, emulated
from ._raw import data, raw
from .complex import holomorphic_vjp
from .elementwise import (
    abs,
    add,
    divide,
    equal,
    multiply,
    negative,
    power,
    sign,
    subtract,
    where,
)
from .linalg import _t, einsum, matmul
from .reduce import _prod_others
from .reduce import max as _amax
from .reduce import min as _amin
from .reduce import sum as _sum
from .shape import concatenate, expand_dims, getitem, pad, reshape, stack


class LinAlgError(RuntimeError):
    """A matrix is singular or not positive-definite (``torch.linalg.LinAlgError``)."""


# ============================================================================ helpers
def _arr(v: Any) -> np.ndarray:
    return np.asarray(data(v))


def _sh(v: Any) -> tuple[int, ...]:
    return tuple(np.shape(data(v)))


def _eye(n: int, like: Any) -> np.ndarray:
    return np.eye(n, dtype=_arr(like).dtype)


def tril(x: Any, k: int = 0) -> Tensor:
    """Lower triangle of the last two axes (``k`` shifts the diagonal as numpy's ``tril``)."""
    return multiply(x, np.tril(np.ones(_sh(x)[-2:], dtype=_arr(x).dtype), k))


def triu(x: Any, k: int = 0) -> Tensor:
    """Upper triangle of the last two axes (``k`` shifts the diagonal as numpy's ``triu``)."""
    return multiply(x, np.triu(np.ones(_sh(x)[-2:], dtype=_arr(x).dtype), k))


def diagonal(x: Any, offset: int = 0, axis1: int = -2, axis2: int = -1) -> Tensor:
    """The diagonal of two axes, as a new last axis (numpy's ``diagonal``).

    >>> import tapegrad as tg
    >>> diagonal(tg.tensor([[1.0, 2.0], [3.0, 4.0]])).numpy()
    array([1., 4.])
    """
    shape = _sh(x)
    nd = len(shape)
    a1, a2 = axis1 % nd, axis2 % nd
    n1, n2 = shape[a1], shape[a2]
    rows = np.arange(max(0, -offset), n1)
    cols = rows + offset
    keep = (cols >= 0) & (cols < n2)
    rows, cols = rows[keep], cols[keep]
    rest = [i for i in range(nd) if i not in (a1, a2)]
    from .shape import transpose

    xt = transpose(x, tuple(rest) + (a1, a2))
    idx = (Ellipsis, rows, cols)
    return getitem(xt, idx)


def diag_embed(x: Any, offset: int = 0, axis1: int = -2, axis2: int = -1) -> Tensor:
    """Matrices whose ``offset`` diagonal (axes ``axis1``/``axis2``) is ``x``'s last axis.

    >>> import tapegrad as tg
    >>> diag_embed(tg.tensor([1.0, 2.0])).numpy()
    array([[1., 0.],
           [0., 2.]])
    """
    from .shape import index_add_zeros, moveaxis

    shape = _sh(x)
    k = shape[-1]
    n = k + (offset if offset >= 0 else -offset)
    rows = np.arange(k) + max(-offset, 0)
    cols = np.arange(k) + max(offset, 0)
    out = index_add_zeros(x, index=(Ellipsis, rows, cols), shape=shape[:-1] + (n, n))
    nd = len(shape) + 1
    a1, a2 = axis1 % nd, axis2 % nd
    if (a1, a2) != (nd - 2, nd - 1):
        out = moveaxis(out, (nd - 2, nd - 1), (a1, a2))
    return out


def trace(x: Any) -> Tensor:
    """Sum of the main diagonal of the last two axes."""
    return einsum("...ii->...", x)


def band_part(x: Any, num_lower: int, num_upper: int) -> Tensor:
    """Keep the band ``-num_lower <= j - i <= num_upper`` of the last two axes (negative: all)."""
    m, n = _sh(x)[-2:]
    i = np.arange(m)[:, None]
    j = np.arange(n)[None, :]
    keep = np.ones((m, n), dtype=bool)
    if num_lower >= 0:
        keep &= (i - j) <= num_lower
    if num_upper >= 0:
        keep &= (j - i) <= num_upper
    return multiply(x, keep.astype(_arr(x).dtype))


def _square_check(a: Any, fn: str) -> None:
    s = _sh(a)
    if len(s) < 2:
        raise hinted(RuntimeError(with_hint(f"{fn}: The input tensor A must have at least 2 dimensions.",
                                     f"{fn} works on (..., n, n) matrices; got shape {list(s)}")))
    if s[-1] != s[-2]:
        raise hinted(RuntimeError(with_hint(
            f"{fn}: A must be batches of square matrices, but they are {s[-2]} by {s[-1]} "
            "matrices", f"got shape {list(s)}")))


def _float_check(a: Any, fn: str) -> None:
    dt = _arr(a).dtype
    if dt.kind not in "fc":  # PyTorch's scalar-type names
        names = {"i": "Int", "u": "Byte", "b": "Bool"}
        nm = {np.dtype(np.int64): "Long", np.dtype(np.int32): "Int", np.dtype(np.int16): "Short",
              np.dtype(np.int8): "Char", np.dtype(np.uint8): "Byte",
              np.dtype(bool): "Bool"}.get(dt, names.get(dt.kind, str(dt)))
        raise hinted(RuntimeError(with_hint(
            f"{fn}: Expected a floating point or complex tensor as input. Got {nm}",
            "convert with .float() / .double() first")))


def _batch_prefix(idx: tuple[int, ...], batch_shape: tuple[int, ...]) -> str:
    if not batch_shape:
        return ""
    flat = int(np.ravel_multi_index(idx, batch_shape)) if idx else 0
    return f"(Batch element {flat}): "


def lu_zero_pivot(a: np.ndarray) -> int:
    """1-based index of the first zero diagonal element of U in ``a = P L U`` (0: none).

    LU with partial pivoting as LAPACK's ``getrf`` (first largest pivot); used
    only to word an error, after the fast solver has failed.
    """
    u = np.array(a, dtype=np.float64 if a.dtype.kind != "c" else np.complex128, copy=True)
    n = u.shape[-1]
    first = 0
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        if u[p, k] == 0:
            if not first:
                first = k + 1
            continue
        if p != k:
            u[[k, p]] = u[[p, k]]
        u[k + 1:, k:] -= np.outer(u[k + 1:, k] / u[k, k], u[k, k:])
    return first


def _first_singular(a: np.ndarray) -> tuple[tuple[int, ...], int]:
    """(batch index, 1-based zero pivot) of the first singular matrix in a batch."""
    batch = a.shape[:-2]
    for idx in np.ndindex(*batch):
        piv = lu_zero_pivot(a[idx])
        if piv:
            return idx, piv
    return (), 0


def _leading_minor(a: np.ndarray) -> int:
    """Order of the first leading minor of ``a`` (lower triangle) that is not positive-definite."""
    n = a.shape[-1]
    for k in range(1, n + 1):
        try:
            np.linalg.cholesky(a[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return n


def _align(batched: tuple[bool, ...], vals: tuple[Any, ...], core: tuple[int, ...]) -> list[Any]:
    """Operands of a batching rule with the batch axis (0) lined up for broadcasting.

    ``core`` is how many trailing axes of each operand the op treats as one
    element (2 for a matrix).  Unbatched operands get a size-1 batch axis;
    batched ones get size-1 axes after the batch so their broadcast dims align.
    """
    lead = [len(_sh(v)) - c - (1 if b else 0) for v, b, c in zip(vals, batched, core)]
    most = max(lead)
    out = []
    for v, b, ld in zip(vals, batched, lead):
        s = _sh(v)
        if b:
            v = reshape(v, s[:1] + (1,) * (most - ld) + s[1:])
        else:
            v = reshape(v, (1,) * (1 + most - ld) + s)
        out.append(v)
    return out


def _unary_batch(op: Any) -> Any:
    def rule(batched: tuple[bool, ...], x: Any, **attrs: Any) -> Any:
        return op(x, **attrs)

    return rule


# ---------------------------------------------------------------------------- packed outputs
@defop("unpack", saves=("p_shape",))
def _unpack_op(p: Any, *, start: int, stop: int, tail: tuple[int, ...]) -> Any:
    """One output of a packed decomposition: ``p[..., start:stop]`` shaped ``lead + tail``."""
    p = np.asarray(p)
    return p[..., start:stop].reshape(p.shape[:-1] + tail)


@_unpack_op.defvjp
def _(g: Tensor, p_shape: tuple[int, ...], start: int, stop: int, tail: Any) -> Any:
    flat = reshape(g, tuple(p_shape[:-1]) + (stop - start,))  # back into its place, zeros around
    return (pad(flat, ((0, 0),) * (len(p_shape) - 1) + ((start, p_shape[-1] - stop),)),)


@_unpack_op.defjvp
def _(dp: Any, p: Any, *, out: Any, start: int, stop: int, tail: Any) -> Any:
    return _unpack_op(dp, start=start, stop=stop, tail=tail)


_unpack_op.defbatch(_unary_batch(_unpack_op))
# each output's node carries its decomposition's PyTorch name
_unpack_eigh = _unpack_op.variant("unpack_eigh")
_unpack_svd = _unpack_op.variant("unpack_svd")
_unpack_qr = _unpack_op.variant("unpack_qr")


# ============================================================================ inv
@defop("inv", saves=("out",))
def inv_op(a: Any) -> Any:
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        _singular_error(np.asarray(a), "linalg.inv", "The diagonal element {piv} is zero, the "
                        "inversion could not be completed because the input matrix is singular.")
        raise


def _singular_error(a: np.ndarray, fn: str, text: str) -> None:
    idx, piv = _first_singular(a)
    if piv:
        raise hinted(LinAlgError(with_hint(f"{fn}: {_batch_prefix(idx, a.shape[:-2])}"
                                    + text.format(piv=piv),
                                    "the matrix has no inverse; use pinv / lstsq, or the _ex "
                                    "variant to get an info code instead of an error")))


@inv_op.defvjp
def _(g: Tensor, out: Tensor) -> Any:  # d(A^-1) = -A^-1 dA A^-1  ->  gA = -B^T g B^T
    bt = _t(out)
    return (negative(matmul(matmul(bt, g), bt)),)


@inv_op.defjvp
def _(da: Any, a: Any, *, out: Any) -> Any:
    return negative(matmul(matmul(out, da), out))


inv_op.defbatch(_unary_batch(inv_op))


def inv(a: Any) -> Tensor:
    """Inverse of square matrices (batched)."""
    _square_check(a, "linalg.inv")
    _float_check(a, "linalg.inv")
    return inv_op(a)


# ============================================================================ solve
def _solve_np(a: Any, b: Any, left: bool, vector: bool) -> Any:
    if vector:  # b is a (batch of) vector(s): one column
        return np.linalg.solve(a, np.asarray(b)[..., None])[..., 0]
    if left:
        return np.linalg.solve(a, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


@defop("solve", saves=("a", "out"), needs=True)
def solve_op(a: Any, b: Any, *, left: bool = True, vector: bool = False) -> Any:
    try:
        return _solve_np(a, b, left, vector)
    except np.linalg.LinAlgError:
        _singular_error(np.asarray(a), "torch.linalg.solve",
                        "The solver failed because the input matrix is singular.")
        raise


def _outer_last(x: Any, y: Any) -> Tensor:
    return multiply(expand_dims(x, -1), expand_dims(y, -2))


@solve_op.defvjp
@holomorphic_vjp
def _(g: Tensor, a: Any, out: Tensor, left: bool = True, vector: bool = False,
      needs: tuple[bool, ...] = (True, True)) -> Any:
    # left: X = A^-1 B -> gB = A^-T g, gA = -gB X^T;  right: X = B A^-1 -> gB = g A^-T,
    # gA = -X^T gB
    gb = solve_op(_t(a), g, left=left, vector=vector)
    ga = None
    if needs[0]:
        if vector:
            ga = negative(_outer_last(gb, out))
        else:
            ga = negative(matmul(gb, _t(out)) if left else matmul(_t(out), gb))
    return ga, (gb if needs[1] else None)


@solve_op.defjvp
def _(da: Any, db: Any, a: Any, b: Any, *, out: Any, left: bool = True,
      vector: bool = False) -> Any:  # dX = A^-1 (dB - dA X)  (right: (dB - X dA) A^-1)
    rhs = db
    if da is not None:
        if vector:
            corr = _sum(multiply(da, expand_dims(out, -2)), axis=-1)
        else:
            corr = matmul(da, out) if left else matmul(out, da)
        rhs = negative(corr) if db is None else subtract(db, corr)
    return solve_op(a, rhs, left=left, vector=vector)


@solve_op.defbatch
def _(batched: tuple[bool, ...], a: Any, b: Any, *, left: bool = True,
      vector: bool = False) -> Any:
    aa, bb = _align(batched, (a, b), (2, 1 if vector else 2))
    return solve_op(aa, bb, left=left, vector=vector)


def solve(a: Any, b: Any, left: bool = True) -> Tensor:
    """Solve ``A X = B`` (``left=False``: ``X A = B``) for ``X``; ``B`` is a matrix
    (``(..., n, k)``) or, when it has one axis fewer than ``A``, a batch of vectors."""
    _square_check(a, "linalg.solve")
    sa, sb = _sh(a), _sh(b)
    vec = len(sb) == 1 or (len(sb) == len(sa) - 1 and sb == sa[:-1])
    if not left and vec:
        raise hinted(RuntimeError(with_hint("linalg.solve: Vector broadcasting of the left hand side "
                                     "is not supported for left=False. In this case "
                                     "linalg.solve is equivalent to B / A.squeeze(-1)",
                                     "pass B as a matrix (..., k, n)")))
    k = sb[-1] if vec else (sb[-2] if left else sb[-1]) if len(sb) >= 2 else -1
    if k != sa[-1]:
        bsh = f"{sb[-1]}" if vec else "x".join(map(str, sb[-2:]))
        eq = "AX = B" if left else "XA = B"
        raise hinted(RuntimeError(with_hint(
            f"linalg.solve: Incompatible shapes of A and B for the equation {eq} "
            f"({sa[-2]}x{sa[-1]} and {bsh})", f"A has shape {list(sa)}, B has shape {list(sb)}")))
    return solve_op(a, b, left=left, vector=vec)


# ============================================================================ triangular solve
@defop("solve_triangular", saves=("a", "out"),
       needs=True)
def solve_triangular_op(a: Any, b: Any, *, upper: bool, left: bool = True,
                        unitriangular: bool = False) -> Any:
    a = np.asarray(a)
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        n = a.shape[-1]
        t = t * (1 - np.eye(n, dtype=a.dtype)) + np.eye(n, dtype=a.dtype)
    with np.errstate(all="ignore"):
        try:
            if left:
                return np.linalg.solve(t, b)
            return np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)),
                               -1, -2)
        except np.linalg.LinAlgError:
            # LAPACK's trtrs does not stop at a zero diagonal: it divides (inf/NaN), as PyTorch
            return _tri_substitute(t, np.asarray(b), left)


def _tri_substitute(t: np.ndarray, b: np.ndarray, left: bool) -> np.ndarray:
    """Triangular solve by substitution with IEEE division (a zero pivot gives inf/NaN)."""
    if not left:
        return np.swapaxes(_tri_substitute(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2), True),
                           -1, -2)
    shape = np.broadcast_shapes(t.shape[:-2], b.shape[:-2])
    t = np.broadcast_to(t, shape + t.shape[-2:])
    x = np.array(np.broadcast_to(b, shape + b.shape[-2:]), dtype=np.result_type(t, b))
    n = t.shape[-1]
    lower = bool(np.all(np.triu(t, 1) == 0))
    order = range(n) if lower else range(n - 1, -1, -1)
    for i in order:
        rest = slice(0, i) if lower else slice(i + 1, n)
        acc = x[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, rest], x[..., rest, :])
        x[..., i, :] = acc / t[..., i, i][..., None]
    return x


@solve_triangular_op.defvjp
def _(g: Tensor, a: Any, out: Tensor, upper: bool, left: bool = True,
      unitriangular: bool = False, needs: tuple[bool, ...] = (True, True)) -> Any:
    # left: X = T^-1 B -> gB = T^-T g, gT = -gB X^T;  right: X = B T^-1 -> gB = g T^-T,
    # gT = -X^T gB; gA keeps only the triangle the op reads (strict when unitriangular)
    gb = solve_triangular_op(_t(a), g, upper=not upper, left=left, unitriangular=unitriangular)
    ga = None
    if needs[0]:
        full = matmul(gb, _t(out)) if left else matmul(_t(out), gb)
        k = 1 if unitriangular else 0
        ga = negative(triu(full, k) if upper else tril(full, -k))
    return ga, (gb if needs[1] else None)


@solve_triangular_op.defjvp
def _(da: Any, db: Any, a: Any, b: Any, *, out: Any, upper: bool, left: bool = True,
      unitriangular: bool = False) -> Any:
    # dX = T^-1 (dB - dT X)  (left)  or  (dB - X dT) T^-1  (right)
    rhs = db
    if da is not None:
        k = 1 if unitriangular else 0
        dt = triu(da, k) if upper else tril(da, -k)
        corr = matmul(dt, out) if left else matmul(out, dt)
        rhs = negative(corr) if db is None else subtract(db, corr)
    return solve_triangular_op(a, rhs, upper=upper, left=left, unitriangular=unitriangular)


@solve_triangular_op.defbatch
def _(batched: tuple[bool, ...], a: Any, b: Any, **attrs: Any) -> Any:
    aa, bb = _align(batched, (a, b), (2, 2))
    return solve_triangular_op(aa, bb, **attrs)


def solve_triangular(a: Any, b: Any, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """Solve ``T X = B`` (``left``) or ``X T = B`` with ``T`` the upper/lower triangle of ``a``."""
    _square_check(a, "linalg.solve_triangular")
    return solve_triangular_op(a, b, upper=upper, left=left, unitriangular=unitriangular)


# ============================================================================ det, slogdet
@defop("det", saves=("a", "out"))
def det_op(a: Any, *, singular: str = "cofactor") -> Any:
    """``singular``: the gradient where ``det == 0``: ``"cofactor"`` (the adjugate, through an
    SVD) or ``"torch"`` (PyTorch 2.13: zero in a first-order backward, the adjugate when the
    backward is itself recorded)."""
    return np.linalg.det(a)


def _cofactor_svd(a: Any) -> Tensor:
    """The cofactor matrix (transpose of the adjugate) through an SVD: well-defined when singular.

    cof(A) = det(U) det(V^T) U diag(prod_{j != i} s_j) V^T  (PyTorch's singular-case formula).
    """
    u, s, vh = svd(a, full_matrices=False)
    alpha = multiply(det_op(u), det_op(vh))
    d = _prod_others(s, (len(_sh(s)) - 1,))
    return multiply(matmul(multiply(u, expand_dims(d, -2)), vh), expand_dims(alpha, (-1, -2)))


@det_op.defvjp
def _(g: Tensor, a: Any, out: Tensor, singular: str = "cofactor") -> Any:
    # d det = det tr(A^-1 dA)  ->  gA = g det A^-T (the cofactor matrix where A is singular)
    ge = expand_dims(g, (-1, -2))
    d = _arr(out)
    zero = d == 0
    if not np.any(zero):
        return (multiply(multiply(ge, expand_dims(out, (-1, -2))), _t(inv_op(a))),)
    if singular == "torch" and raw():
        eye = _eye(_sh(a)[-1], a)
        safe = where(np.asarray(zero)[..., None, None], eye, a)
        return (multiply(multiply(ge, expand_dims(out, (-1, -2))), _t(inv_op(safe))),)
    return (multiply(ge, _cofactor_svd(a)),)


@det_op.defjvp
def _(da: Any, a: Any, *, out: Any, singular: str = "cofactor") -> Any:
    if np.any(_arr(out) == 0):  # d det = <cof(A), dA>
        return _sum(multiply(_cofactor_svd(a), da), axis=(-2, -1))
    return multiply(out, trace(solve_op(a, da)))


det_op.defbatch(_unary_batch(det_op))


def det(a: Any, singular: str = "cofactor") -> Tensor:
    """Determinant of square matrices (batched); ``singular``: see :data:`det_op`."""
    _square_check(a, "linalg.det")
    _float_check(a, "linalg.det")
    return det_op(a, singular=singular)


@defop("slogdet", saves=("a",))
def logabsdet_op(a: Any) -> Any:
    return np.linalg.slogdet(a)[1]


@logabsdet_op.defvjp
def _(g: Tensor, a: Any) -> Any:  # d log|det A| = tr(A^-1 dA)  ->  gA = g A^-T
    return (multiply(expand_dims(g, (-1, -2)), _t(inv_op(a))),)


@logabsdet_op.defjvp
def _(da: Any, a: Any, *, out: Any) -> Any:
    return trace(solve_op(a, da))


logabsdet_op.defbatch(_unary_batch(logabsdet_op))


def slogdet(a: Any) -> tuple[Tensor, Tensor]:
    """``(sign, log|det|)`` of square matrices; the sign carries no gradient."""
    from .._core.tensor import make

    _square_check(a, "linalg.slogdet")
    _float_check(a, "linalg.slogdet")
    sgn = np.linalg.slogdet(_arr(a))[0]
    style = a._style if isinstance(a, Tensor) else 0
    return make(np.asarray(sgn), None, False, style), logabsdet_op(a)


# ============================================================================ cholesky
@defop("cholesky", saves=("out",))
def cholesky_op(a: Any, *, upper: bool = False) -> Any:
    a = np.asarray(a)
    try:
        low = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        for idx in np.ndindex(*a.shape[:-2]):
            try:
                np.linalg.cholesky(a[idx])
            except np.linalg.LinAlgError:
                k = _leading_minor(a[idx])
                raise hinted(LinAlgError(with_hint(
                    f"linalg.cholesky: {_batch_prefix(idx, a.shape[:-2])}The factorization could "
                    "not be completed because the input is not positive-definite (the leading "
                    f"minor of order {k} is not positive-definite).",
                    "the matrix must be symmetric positive-definite; add a multiple of the "
                    "identity, or use cholesky_ex to get an info code"))) from None
        raise
    return np.swapaxes(low, -1, -2) if upper else low


@cholesky_op.defvjp
def _(g: Tensor, out: Tensor, upper: bool = False) -> Any:
    # Murray (2016): gA = L^-T Phi(L^T gL) L^-1, Phi symmetrising with half the diagonal
    low, gl = (_t(out), _t(g)) if upper else (out, g)
    p = tril(matmul(_t(low), gl))
    p = multiply(add(p, _t(tril(p, -1))), 0.5)
    p = solve_triangular_op(_t(low), p, upper=True, left=True)
    return (solve_triangular_op(low, p, upper=False, left=False),)


def _phi(x: Any) -> Tensor:
    """Lower triangle with the diagonal halved."""
    n = _sh(x)[-1]
    m = np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n)
    return multiply(x, m.astype(_arr(x).dtype))


@cholesky_op.defjvp
def _(da: Any, a: Any, *, out: Any, upper: bool = False) -> Any:
    # dL = L Phi(L^-1 dA L^-T)
    low = _t(out) if upper else out
    sym = multiply(add(da, _t(da)), 0.5)  # the op reads one triangle of a symmetric input
    y = solve_triangular_op(low, sym, upper=False, left=True)
    y = solve_triangular_op(_t(low), y, upper=True, left=False)
    dl = matmul(low, _phi(y))
    return _t(dl) if upper else dl


cholesky_op.defbatch(_unary_batch(cholesky_op))


def cholesky(a: Any, upper: bool = False) -> Tensor:
    """Cholesky factor of symmetric positive-definite matrices (lower; ``upper``: ``L^T``)."""
    _square_check(a, "linalg.cholesky")
    _float_check(a, "linalg.cholesky")
    return cholesky_op(a, upper=upper)


# ============================================================================ eigh
@defop("eigh", saves=("out",))
def eigh_op(a: Any, *, lower: bool = True) -> Any:
    w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    return np.concatenate([w, v.reshape(v.shape[:-2] + (-1,))], axis=-1)


def _split_eigh(p: Any) -> tuple[Tensor, Tensor]:
    n = int(round((-1 + (1 + 4 * _sh(p)[-1]) ** 0.5) / 2))
    return (_unpack_eigh(p, start=0, stop=n, tail=(n,)),
            _unpack_eigh(p, start=n, stop=n + n * n, tail=(n, n)))


def _is_zero(t: Any) -> bool:
    """Whether a cotangent is all zeros (an output the loss did not use).

    Under a transform (``vmap``, forward mode) a tracer's array is not its value, so
    the answer there is always False: every term is kept.
    """
    if _STATE.levels:
        return False
    return not np.any(_arr(t))


@eigh_op.defvjp
def _(g: Tensor, out: Tensor, lower: bool = True) -> Any:
    # gA = V (diag(gL) + skew(V^T gV) / 2E) V^T,  E_ij = L_j - L_i (off the diagonal): the
    # symmetric gradient, as PyTorch's (V^T gV's symmetric part moves no eigenvector)
    w, v = _split_eigh(out)
    gw, gv = _split_eigh(g)
    n = _sh(w)[-1]
    inner = diag_embed(gw)
    if not _is_zero(gv):
        e = subtract(expand_dims(w, -2), expand_dims(w, -1))
        e = add(e, _eye(n, w))  # the diagonal is replaced below; 1 avoids 0/0
        off = 1 - _eye(n, w)
        p = matmul(_t(v), gv)
        inner = add(inner, multiply(divide(multiply(subtract(p, _t(p)), 0.5), e), off))
    return (matmul(matmul(v, inner), _t(v)),)


@eigh_op.defjvp
def _(da: Any, a: Any, *, out: Any, lower: bool = True) -> Any:
    # dL = diag(V^T dA V); dV = V (F o (V^T dA V)), F_ij = 1 / (L_j - L_i) off the diagonal
    w, v = _split_eigh(out)
    n = _sh(w)[-1]
    sym = multiply(add(da, _t(da)), 0.5)
    p = matmul(matmul(_t(v), sym), v)
    dw = diagonal(p)
    e = add(subtract(expand_dims(w, -2), expand_dims(w, -1)), _eye(n, w))
    dv = matmul(v, multiply(divide(p, e), 1 - _eye(n, w)))
    return concatenate([dw, reshape(dv, _sh(dv)[:-2] + (-1,))], axis=-1)


eigh_op.defbatch(_unary_batch(eigh_op))


def eigh(a: Any, lower: bool = True) -> tuple[Tensor, Tensor]:
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices (one triangle is read)."""
    _square_check(a, "linalg.eigh")
    _float_check(a, "linalg.eigh")
    return _split_eigh(eigh_op(a, lower=lower))


def eigvalsh(a: Any, lower: bool = True) -> Tensor:
    """Eigenvalues of symmetric matrices (ascending); gradient ``V diag(g) V^T``."""
    return eigh(a, lower)[0]


# ============================================================================ svd
@defop("svd", saves=("a", "out"))
def svd_op(a: Any, *, full_matrices: bool = False) -> Any:
    a = np.asarray(a)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    lead = a.shape[:-2]
    return np.concatenate([u.reshape(lead + (-1,)), s, vh.reshape(lead + (-1,))], axis=-1)


def _split_svd(p: Any, m: int, n: int, full: bool) -> tuple[Tensor, Tensor, Tensor]:
    k = min(m, n)
    uc, vr = (m, n) if full else (k, k)
    u = _unpack_svd(p, start=0, stop=m * uc, tail=(m, uc))
    s = _unpack_svd(p, start=m * uc, stop=m * uc + k, tail=(k,))
    vh = _unpack_svd(p, start=m * uc + k, stop=m * uc + k + vr * n, tail=(vr, n))
    return u, s, vh


def _skew(x: Any) -> Tensor:
    return subtract(x, _t(x))


@svd_op.defvjp
def _(g: Tensor, a: Any, out: Tensor, full_matrices: bool = False) -> Any:
    m, n = _sh(a)[-2:]
    k = min(m, n)
    u, s, vh = _split_svd(out, m, n, full_matrices)
    gu, gs, gvh = _split_svd(g, m, n, full_matrices)
    if full_matrices:  # only the first k columns of U / rows of V^T enter A
        u, gu = getitem(u, (Ellipsis, slice(0, k))), getitem(gu, (Ellipsis, slice(0, k)))
        vh, gvh = getitem(vh, (Ellipsis, slice(0, k), slice(None))), \
            getitem(gvh, (Ellipsis, slice(0, k), slice(None)))
    has_u, has_v = not _is_zero(gu), not _is_zero(gvh)
    if not has_u and not has_v:
        return (matmul(multiply(u, expand_dims(gs, -2)), vh),)
    v, gv = _t(vh), _t(gvh)
    s2 = multiply(s, s)
    e = add(subtract(expand_dims(s2, -2), expand_dims(s2, -1)), _eye(k, s))
    # gA = U [(skew(U^T gU) / E) S + S (skew(V^T gV) / E) + diag(gS)] V^T + the parts of
    # gU / gV outside the spans of U / V
    inner = diag_embed(gs)
    if has_u:
        inner = add(inner, multiply(divide(_skew(matmul(_t(u), gu)), e), expand_dims(s, -2)))
    if has_v:
        inner = add(inner, multiply(expand_dims(s, -1), divide(_skew(matmul(vh, gv)), e)))
    if m > k and has_u:
        ga = matmul(u, inner)
        gus = divide(gu, expand_dims(s, -2))
        ga = add(ga, subtract(gus, matmul(u, matmul(_t(u), gus))))
        return (matmul(ga, vh),)
    if n > k and has_v:
        ga = matmul(inner, vh)
        gvs = divide(gv, expand_dims(s, -2))
        ga = add(ga, subtract(_t(gvs), matmul(matmul(_t(gvs), v), vh)))
        return (matmul(u, ga),)
    return (matmul(matmul(u, inner), vh),)


@svd_op.defjvp
def _(da: Any, a: Any, *, out: Any, full_matrices: bool = False) -> Any:
    m, n = _sh(a)[-2:]
    k = min(m, n)
    if full_matrices and m != n:
        raise hinted(NotImplementedError(with_hint(
            "the forward-mode derivative of svd with full_matrices=True is not implemented "
            "for non-square matrices", "use full_matrices=False")))
    u, s, vh = _split_svd(out, m, n, full_matrices)
    v = _t(vh)
    p = matmul(matmul(_t(u), da), v)  # (k, k)
    ds = diagonal(p)
    s2 = multiply(s, s)
    f = divide(1 - _eye(k, s), add(subtract(expand_dims(s2, -2), expand_dims(s2, -1)),
                                   _eye(k, s)))
    sr, sc = expand_dims(s, -2), expand_dims(s, -1)
    # dU = U (F o (P S + S P^T)) (+ (I - U U^T) dA V S^-1 when m > n); dV likewise
    du = matmul(u, multiply(f, add(multiply(p, sr), multiply(sc, _t(p)))))
    dv = matmul(v, multiply(f, add(multiply(sc, p), multiply(_t(p), sr))))
    if m > k:
        r = divide(matmul(da, v), sr)
        du = add(du, subtract(r, matmul(u, matmul(_t(u), r))))
    if n > k:
        r = divide(matmul(_t(da), u), sr)
        dv = add(dv, subtract(r, matmul(v, matmul(_t(v), r))))
    lead = _sh(a)[:-2]
    return concatenate([reshape(du, lead + (-1,)), ds, reshape(_t(dv), lead + (-1,))], axis=-1)


svd_op.defbatch(_unary_batch(svd_op))


def svd(a: Any, full_matrices: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    """``U, S, Vh`` with ``A = U diag(S) Vh`` (singular values descending)."""
    s = _sh(a)
    if len(s) < 2:
        raise hinted(RuntimeError(with_hint("linalg.svd: The input tensor A must have at least 2 "
                                     "dimensions.", f"got shape {list(s)}")))
    _float_check(a, "linalg.svd")
    return _split_svd(svd_op(a, full_matrices=full_matrices), s[-2], s[-1], full_matrices)


def svdvals(a: Any) -> Tensor:
    """Singular values (descending); gradient ``U diag(g) V^T``."""
    return svd(a, full_matrices=False)[1]


# ============================================================================ qr
def _qr_values(a: np.ndarray, complete: bool, eigen: bool) -> tuple[np.ndarray, np.ndarray]:
    """NumPy's (LAPACK's) QR, or with ``eigen`` in float32/float64 TensorFlow's CPU kernel bit
    for bit (Eigen's Householder QR, :mod:`tapegrad.ops._eigen_qr`), matrix by matrix."""
    if not (eigen and a.dtype in (np.float32, np.float64) and emulated(*a.shape[-2:])):
        return np.linalg.qr(a, mode="complete" if complete else "reduced")
    m, n = a.shape[-2:]
    k = m if complete else min(m, n)
    count = int(np.prod(a.shape[:-2], dtype=np.int64))
    flat = a.reshape((count, m, n))
    q = np.empty((count, m, k), a.dtype)
    r = np.empty((count, k, n), a.dtype)
    for i, mat in enumerate(flat):
        q[i], r[i] = eigen_qr(mat, full_matrices=complete)
    return q.reshape(a.shape[:-2] + (m, k)), r.reshape(a.shape[:-2] + (k, n))


@defop("qr", saves=("a", "out"))
def qr_op(a: Any, *, complete: bool = False, eigen: bool = False) -> Any:
    a = np.asarray(a)
    q, r = _qr_values(a, complete, eigen)
    lead = a.shape[:-2]
    return np.concatenate([q.reshape(lead + (-1,)), r.reshape(lead + (-1,))], axis=-1)


def _split_qr(p: Any, m: int, n: int, complete: bool) -> tuple[Tensor, Tensor]:
    k = m if complete else min(m, n)
    return (_unpack_qr(p, start=0, stop=m * k, tail=(m, k)),
            _unpack_qr(p, start=m * k, stop=m * k + k * n, tail=(k, n)))


def _qr_tall_vjp(q: Any, r: Any, gq: Any, gr: Any) -> Tensor:
    """gA for A = QR with m >= n: [gQ + Q copyltu(M)] R^-T, M = R gR^T - gQ^T Q."""
    m_ = subtract(matmul(r, _t(gr)), matmul(_t(gq), q))
    low = tril(m_, -1)
    cm = add(add(low, _t(low)), diag_embed(diagonal(m_)))
    b = add(gq, matmul(q, cm))
    return solve_triangular_op(_t(r), b, upper=False, left=False)  # b R^-T


@qr_op.defvjp
def _(g: Tensor, a: Any, out: Tensor, complete: bool = False, eigen: bool = False) -> Any:
    m, n = _sh(a)[-2:]
    q, r = _split_qr(out, m, n, complete)
    gq, gr = _split_qr(g, m, n, complete)
    if m >= n:
        return (_qr_tall_vjp(q, r, gq, gr),)
    # wide: A = [X | Y], X = Q U (square), R = [U | Q^T Y]
    y = getitem(a, (Ellipsis, slice(None), slice(m, None)))
    u = getitem(r, (Ellipsis, slice(None), slice(0, m)))
    gu = getitem(gr, (Ellipsis, slice(None), slice(0, m)))
    gv = getitem(gr, (Ellipsis, slice(None), slice(m, None)))
    gx = _qr_tall_vjp(q, u, add(gq, matmul(y, _t(gv))), gu)
    gy = matmul(q, gv)
    return (concatenate([gx, gy], axis=-1),)


def _qr_tall_jvp(q: Any, r: Any, da: Any) -> tuple[Tensor, Tensor]:
    # B = Q^T dA R^-1, Omega = tril(B, -1) - tril(B, -1)^T; dQ = Q Omega + (I - Q Q^T) dA R^-1,
    # dR = (B - Omega) R
    dar = _t(solve_triangular_op(_t(r), _t(da), upper=False, left=True))  # dA R^-1
    b = matmul(_t(q), dar)
    low = tril(b, -1)
    om = subtract(low, _t(low))
    dq = add(matmul(q, om), subtract(dar, matmul(q, matmul(_t(q), dar))))
    dr = matmul(subtract(b, om), r)
    return dq, dr


@qr_op.defjvp
def _(da: Any, a: Any, *, out: Any, complete: bool = False, eigen: bool = False) -> Any:
    m, n = _sh(a)[-2:]
    if complete and m > n:
        raise hinted(RuntimeError(with_hint("The QR decomposition is not differentiable when "
                                     "mode='complete' and nrows > ncols.",
                                     "use mode='reduced'")))
    q, r = _split_qr(out, m, n, complete)
    lead = _sh(a)[:-2]
    if m >= n:
        dq, dr = _qr_tall_jvp(q, r, da)
    else:
        u = getitem(r, (Ellipsis, slice(None), slice(0, m)))
        dx = getitem(da, (Ellipsis, slice(None), slice(0, m)))
        dy = getitem(da, (Ellipsis, slice(None), slice(m, None)))
        y = getitem(a, (Ellipsis, slice(None), slice(m, None)))
        dq, du = _qr_tall_jvp(q, u, dx)
        dv = add(matmul(_t(dq), y), matmul(_t(q), dy))
        dr = concatenate([du, dv], axis=-1)
    return concatenate([reshape(dq, lead + (-1,)), reshape(dr, lead + (-1,))], axis=-1)


qr_op.defbatch(_unary_batch(qr_op))


def qr(a: Any, mode: str = "reduced", *, eigen: bool = False) -> tuple[Tensor, Tensor]:
    """``Q, R`` with ``A = Q R`` (``mode``: ``'reduced'``, ``'complete'`` or ``'r'``).

    ``eigen``: float32 and float64 values as TensorFlow's CPU kernel computes them (Eigen's
    Householder QR, bit for bit) instead of LAPACK's."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    s = _sh(a)
    if len(s) < 2:
        raise hinted(RuntimeError(with_hint("linalg.qr: The input tensor A must have at least 2 "
                                     "dimensions.", f"got shape {list(s)}")))
    _float_check(a, "linalg.qr")
    m, n = s[-2:]
    complete = mode == "complete"
    if mode == "r" or (complete and m > n):
        return _qr_nograd(a, mode, complete, eigen)
    if eigen:
        return _split_qr(qr_op(a, complete=complete, eigen=True), m, n, complete)
    return _split_qr(qr_op(a, complete=complete), m, n, complete)


def _qr_nograd(a: Any, mode: str, complete: bool,
               eigen: bool = False) -> tuple[Tensor, Tensor]:
    """QR outputs whose backward raises PyTorch's error (mode='r', or complete and tall)."""
    from .._core.tensor import make

    arr = _arr(a)
    q, r = _qr_values(np.asarray(arr), complete, eigen)
    style = a._style if isinstance(a, Tensor) else 0
    if mode == "r":
        msg = ("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
               "through linalg.qr.")
        rr = _raise_on_backward(a, r, msg)
        return make(np.zeros((0,), dtype=arr.dtype), None, False, style), rr
    msg = "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
    return _raise_on_backward(a, q, msg), _raise_on_backward(a, r, msg)


@defop("qr_nondiff")
def _qr_nondiff(a: Any, *, value: Any, message: str) -> Any:
    return value


@_qr_nondiff.defvjp
def _(g: Tensor, value: Any, message: str) -> Any:
    raise RuntimeError(message)


@_qr_nondiff.defjvp
def _(da: Any, a: Any, *, out: Any, value: Any, message: str) -> Any:
    raise RuntimeError(message)  # not differentiable in either mode, as in PyTorch


def _raise_on_backward(a: Any, value: np.ndarray, message: str) -> Tensor:
    return _qr_nondiff(a, value=value, message=message)


# ============================================================================ eig
_EIG_PHASE = ("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
              "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
              "so it is ill-defined.")


@defop("eig", saves=("a", "out"))
def eig_op(a: Any, *, values_only: bool = False, phase_check: bool = True) -> Any:
    """Eigenvalues (and eigenvectors) of general square matrices, always complex (LAPACK's
    ``geev``: unit-norm eigenvectors, in LAPACK's order).  Packed: values then vectors."""
    a = np.asarray(a)
    ct = np.complex64 if a.dtype in (np.float32, np.complex64) else np.complex128
    if values_only:
        return np.linalg.eigvals(a).astype(ct)
    w, v = np.linalg.eig(a)
    return np.concatenate([w.astype(ct), v.astype(ct).reshape(a.shape[:-2] + (-1,))], axis=-1)


def _split_eig(p: Any, n: int) -> tuple[Tensor, Tensor]:
    lead = _sh(p)[:-1]
    return (getitem(p, (Ellipsis, slice(0, n))),
            reshape(getitem(p, (Ellipsis, slice(n, None))), lead + (n, n)))


def _mh(v: Any) -> Any:
    from .complex import conj

    return conj(_t(v))


@eig_op.defvjp
def _(g: Tensor, a: Any, out: Tensor, values_only: bool = False,
      phase_check: bool = True) -> Any:
    # PyTorch's linalg_eig_backward (TensorFlow's _EigGrad is the same formula, without
    # the phase check): gA = V^-H (diag(gL) + (V^H gV - V^H V diag(Re diag(V^H gV))) / E*) V^H
    # with E_ij = L_j - L_i off the diagonal; a real A keeps the real part
    from .complex import conj, real

    n = _sh(a)[-1]
    if values_only:
        gl, gv = g, None
        lam, v = _split_eig(eig_op(a, phase_check=phase_check), n)
    else:
        lam, v = _split_eig(out, n)
        gl, gv = _split_eig(g, n)
        if _is_zero(gv):
            gv = None
    vh = _mh(v)
    inner = diag_embed(gl)
    if gv is not None:
        vhgv = matmul(vh, gv)
        dg = diagonal(vhgv)
        if phase_check and not _STATE.levels and not np.allclose(np.imag(_arr(dg)), 0.0, rtol=1e-2, atol=1e-2):
            raise hinted(RuntimeError(with_hint(
                _EIG_PHASE, "the loss must not change when an eigenvector is multiplied by "
                "e^{i phi}: use e.g. abs() of the eigenvectors, or only the eigenvalues")))
        vhgv = subtract(vhgv, matmul(vh, multiply(v, expand_dims(real(dg), -2))))
        lc = conj(lam)
        e = subtract(expand_dims(lc, -2), expand_dims(lc, -1))
        eye = np.eye(n, dtype=bool)
        e = where(eye, np.ones((), dtype=_arr(e).dtype), e)
        off = divide(vhgv, e)
        inner = where(eye, inner, off)
    ga = solve_op(vh, matmul(inner, vh))
    if not np.iscomplexobj(_arr(a)):
        ga = real(ga)
    return (ga,)


@eig_op.defjvp
def _(da: Any, a: Any, *, out: Any, values_only: bool = False,
      phase_check: bool = True) -> Any:
    # dP = V^-1 dA V; dL = diag(dP); dV = V (X - diag(Re diag(V^H V X))), X = dP / E off
    # the diagonal (0 on it): the tangent that keeps every eigenvector of unit norm
    from .complex import real

    n = _sh(a)[-1]
    full = eig_op(a, phase_check=phase_check) if values_only else out
    lam, v = _split_eig(full, n)
    dp = solve_op(v, matmul(da, v))
    dl = diagonal(dp)
    if values_only:
        return dl
    e = subtract(expand_dims(lam, -2), expand_dims(lam, -1))
    eye = np.eye(n, dtype=bool)
    e = where(eye, np.ones((), dtype=_arr(e).dtype), e)
    xm = where(eye, np.zeros((), dtype=_arr(e).dtype), divide(dp, e))
    corr = real(diagonal(matmul(matmul(_mh(v), v), xm)))
    dv = matmul(v, subtract(xm, diag_embed(corr)))
    return concatenate([dl, reshape(dv, _sh(dv)[:-2] + (-1,))], axis=-1)


eig_op.defbatch(_unary_batch(eig_op))


def eig(a: Any, phase_check: bool = True) -> tuple[Tensor, Tensor]:
    """Complex eigenvalues and unit-norm eigenvectors of general square matrices.

    Differentiable (PyTorch's formula): with repeated eigenvalues the gradient through
    the eigenvectors is inf/NaN; a loss that depends on the eigenvectors' phases raises
    PyTorch's error (``phase_check=False``: TensorFlow's, which does not check).
    """
    _square_check(a, "linalg.eig")
    _float_check(a, "linalg.eig")
    return _split_eig(eig_op(a, phase_check=phase_check), _sh(a)[-1])


def eigvals(a: Any, phase_check: bool = True) -> Tensor:
    """Complex eigenvalues of general square matrices; gradient ``V^-H diag(g) V^H``."""
    _square_check(a, "linalg.eigvals")
    _float_check(a, "linalg.eigvals")
    return eig_op(a, values_only=True, phase_check=phase_check)


# ============================================================================ matrix_exp
def _expm_np(a: np.ndarray) -> np.ndarray:
    """exp of (batched) square matrices: Pade(13) with scaling and squaring (Higham 2005)."""
    a = np.asarray(a)
    dt = a.dtype
    work = a.astype(np.float64 if dt.kind == "f" else np.complex128)
    n = work.shape[-1]
    if work.size == 0:
        return work.astype(dt)
    norm1 = np.max(np.sum(np.abs(work), axis=-2), axis=-1)
    theta13 = 5.371920351148152
    s = np.maximum(0, np.ceil(np.log2(np.maximum(norm1, 1e-300) / theta13))).astype(int)
    smax = int(np.max(s)) if s.size else 0
    work = work / (2.0 ** s)[..., None, None]
    b = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.)
    eye = np.eye(n, dtype=work.dtype)
    a2 = work @ work
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = work @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
                + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * eye
    r = np.linalg.solve(v - u, v + u)
    for i in range(smax):
        sq = r @ r
        r = np.where((s > i)[..., None, None], sq, r)
    return r.astype(dt)


@defop("matrix_exp", saves=("a",))
def matrix_exp_op(a: Any) -> Any:
    return _expm_np(a)


def _block_exp(top_left: Any, top_right: Any) -> Tensor:
    """The top-right block of exp([[X, Y], [0, X]]): the derivative of exp at X along Y."""
    n = _sh(top_left)[-1]
    lead = np.broadcast_shapes(_sh(top_left)[:-2], _sh(top_right)[:-2])
    from .shape import broadcast_to

    x = broadcast_to(top_left, lead + (n, n))
    y = broadcast_to(top_right, lead + (n, n))
    zero = np.zeros(lead + (n, n), dtype=np.result_type(_arr(top_left), _arr(top_right)))
    big = concatenate([concatenate([x, y], axis=-1), concatenate([zero, x], axis=-1)], axis=-2)
    return getitem(matrix_exp_op(big), (Ellipsis, slice(0, n), slice(n, None)))


@matrix_exp_op.defvjp
def _(g: Tensor, a: Any) -> Any:  # gA = D exp(A^T)[g]  (the adjoint of the Frechet derivative)
    return (_block_exp(_t(a), g),)


@matrix_exp_op.defjvp
def _(da: Any, a: Any, *, out: Any) -> Any:
    return _block_exp(a, da)


matrix_exp_op.defbatch(_unary_batch(matrix_exp_op))


def matrix_exp(a: Any) -> Tensor:
    """Matrix exponential of square matrices (batched)."""
    _square_check(a, "linalg.matrix_exp")
    return matrix_exp_op(a)


# ============================================================================ vector_norm
def _norm_coef(x: Any, out: Any, ord: float, axis: tuple[int, ...] | None,
               keepdims: bool) -> Any:
    """d norm / d x (the VJP with a unit cotangent), PyTorch's ``norm_backward``, or None (0)."""
    nd = len(_sh(x))
    ax = tuple(range(nd)) if axis is None else axis
    n = out if keepdims else expand_dims(out, tuple(sorted(ax))) if ax else out
    if ord == 0:
        return None
    if ord == 1:
        return sign(x)
    zero = equal(n, 0)
    if ord == 2:
        return where(zero, 0.0, divide(x, where(zero, 1.0, n)))
    if ord in (np.inf, -np.inf):
        mask = where(equal(abs(x), n), 1.0, 0.0)
        cnt = _sum(mask, axis=ax, keepdims=True)
        return divide(multiply(sign(x), mask), cnt)
    p = float(ord)
    if p < 1.0:
        ax_ = abs(x)
        scaled = where(equal(x, 0), 0.0, multiply(sign(x), power(where(equal(x, 0), 1.0, ax_),
                                                                 p - 1)))
        return multiply(scaled, power(n, 1 - p))
    if p < 2.0:
        scaled = multiply(sign(x), power(abs(x), p - 1))
    else:
        scaled = multiply(x, power(abs(x), p - 2))
    return where(zero, 0.0, divide(scaled, where(zero, 1.0, power(n, p - 1))))


@defop("vector_norm", saves=("x", "out"))
def vector_norm_op(x: Any, *, ord: float, axis: tuple[int, ...] | None,
                   keepdims: bool) -> Any:
    ax = np.abs(x)
    with np.errstate(all="ignore"):
        if ord == 2:
            r = np.sqrt(np.sum(ax * ax, axis=axis, keepdims=keepdims))
        elif ord == 1:
            r = np.sum(ax, axis=axis, keepdims=keepdims)
        elif ord == np.inf:
            r = np.max(ax, axis=axis, keepdims=keepdims, initial=0)
        elif ord == -np.inf:
            r = np.min(ax, axis=axis, keepdims=keepdims)
        elif ord == 0:
            r = np.sum(ax != 0, axis=axis, keepdims=keepdims).astype(ax.dtype)
        else:
            r = np.power(np.sum(np.power(ax, ord), axis=axis, keepdims=keepdims), 1.0 / ord)
    return np.asarray(r, dtype=ax.dtype)


@vector_norm_op.defvjp
def _(g: Tensor, x: Any, out: Tensor, ord: float, axis: Any, keepdims: bool) -> Any:
    c = _norm_coef(x, out, ord, axis, keepdims)
    if c is None:
        return (None,)
    nd = len(_sh(x))
    ax = tuple(range(nd)) if axis is None else axis
    ge = g if keepdims or not ax else expand_dims(g, tuple(sorted(ax)))
    return (multiply(ge, c),)


@vector_norm_op.defjvp
def _(dx: Any, x: Any, *, out: Any, ord: float, axis: Any, keepdims: bool) -> Any:
    c = _norm_coef(x, out, ord, axis, keepdims)
    if c is None:
        return None
    return _sum(multiply(c, dx), axis=axis, keepdims=keepdims)


@vector_norm_op.defbatch
def _(batched: tuple[bool, ...], x: Any, *, ord: float, axis: Any, keepdims: bool) -> Any:
    nd = len(_sh(x))
    ax = tuple(range(1, nd)) if axis is None else tuple(a + 1 for a in axis)
    return vector_norm_op(x, ord=ord, axis=ax, keepdims=keepdims)


def vector_norm(x: Any, ord: float = 2, axis: Any = None, keepdims: bool = False) -> Tensor:
    """The ``ord``-norm of ``x`` over ``axis`` (all axes by default), any real ``ord``."""
    from .reduce import norm_axis

    nd = len(_sh(x))
    ax = norm_axis(axis, nd) if axis is not None else None
    if ax is not None and len(ax) == 0:
        ax = None
    return vector_norm_op(x, ord=float(ord), axis=ax, keepdims=keepdims)


# ============================================================================ composites
def matrix_norm(x: Any, ord: Any = "fro", axis: tuple[int, int] = (-2, -1),
                keepdims: bool = False) -> Tensor:
    """Matrix norm over two axes: ``'fro'``, ``'nuc'``, ``inf``, ``-inf``, ``1``, ``-1``,
    ``2``, ``-2`` (the last two and ``'nuc'`` through the singular values)."""
    from .shape import moveaxis

    nd = len(_sh(x))
    a0, a1 = axis[0] % nd, axis[1] % nd
    if ord == "fro":
        return vector_norm(x, 2, (a0, a1), keepdims)
    if ord in ("nuc", 2, -2):
        xm = moveaxis(x, (a0, a1), (-2, -1))
        sv = svdvals(xm)
        r = _sum(sv, axis=-1) if ord == "nuc" else (_amax(sv, axis=-1) if ord == 2 else
                                                    _amin(sv, axis=-1))
        if keepdims:
            r = expand_dims(r, tuple(sorted((a0, a1))))
        return r
    if ord in (1, -1, np.inf, -np.inf):
        # 1: max column sum of |x| (sum over rows, axis a0); inf: max row sum
        red, over = (a0, a1) if ord in (1, -1) else (a1, a0)
        sums = vector_norm(x, 1, red, keepdims=True)
        r = _amax(sums, axis=over, keepdims=True) if ord in (1, np.inf) else \
            _amin(sums, axis=over, keepdims=True)
        if not keepdims:
            r = reshape(r, tuple(s for i, s in enumerate(_sh(r)) if i not in (a0, a1)))
        return r
    raise hinted(RuntimeError(with_hint(f"linalg.matrix_norm: Order {ord} not supported.",
                                 "ord is one of 'fro', 'nuc', inf, -inf, 1, -1, 2, -2")))


def matrix_power(x: Any, n: int) -> Tensor:
    """``x`` multiplied by itself ``n`` times (binary powering; negative ``n`` inverts first)."""
    _square_check(x, "linalg.matrix_power")
    k = _sh(x)[-1]
    if n == 0:
        from .shape import broadcast_to

        # the identity, connected to x with a zero derivative (PyTorch's result has a grad_fn)
        return add(multiply(x, 0.0), broadcast_to(_eye(k, x), _sh(x)))
    base = inv(x) if n < 0 else x
    e = -n if n < 0 else n
    result: Any = None
    z = base
    while e:
        if e & 1:
            result = z if result is None else matmul(result, z)
        e >>= 1
        if e:
            z = matmul(z, z)
    return result


@defop("pinv", saves=("a", "out"))
def pinv_op(a: Any, *, rtol: float, hermitian: bool = False) -> Any:
    a = np.asarray(a)
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), dtype=a.dtype)
    return np.linalg.pinv(a, rcond=rtol, hermitian=hermitian).astype(a.dtype, copy=False)


@pinv_op.defvjp
def _(g: Tensor, a: Any, out: Tensor, rtol: float, hermitian: bool = False) -> Any:
    # Golub & Pereyra (1973), in PyTorch's arrangement (pinv_backward): the derivative of
    # pinv as a function of the whole matrix, for ``hermitian`` too
    m, n = _sh(a)[-2:]
    xt, gt = _t(out), _t(g)
    if m <= n:
        k = matmul(gt, out)
        kxt = matmul(k, xt)
        r = add(subtract(kxt, _t(matmul(out, k))), negative(matmul(matmul(a, out), kxt)))
        return (add(r, matmul(matmul(xt, out), subtract(gt, matmul(k, a)))),)
    k = matmul(out, gt)
    xtk = matmul(xt, k)
    r = add(negative(_t(matmul(k, out))),
            matmul(matmul(subtract(gt, matmul(a, k)), out), xt))
    return (add(r, subtract(xtk, matmul(matmul(xtk, out), a))),)


@pinv_op.defjvp
def _(da: Any, a: Any, *, out: Any, rtol: float, hermitian: bool = False) -> Any:
    # dX = -X dA X + X X^T dA^T (I - A X) + (I - X A) dA^T X^T X
    m, n = _sh(a)[-2:]
    x, xt, dat = out, _t(out), _t(da)
    t1 = negative(matmul(matmul(x, da), x))
    t2 = matmul(matmul(x, xt), subtract(dat, matmul(dat, matmul(a, x))))
    t3 = matmul(subtract(dat, matmul(matmul(x, a), dat)), matmul(xt, x))
    return add(add(t1, t2), t3)


pinv_op.defbatch(_unary_batch(pinv_op))


def pinv(x: Any, rtol: float | None = None, hermitian: bool = False) -> Tensor:
    """Moore-Penrose pseudo-inverse through the SVD (eigh when ``hermitian``).

    Singular values ``<= rtol * max(S)`` (default ``rtol = max(m, n) * eps``) are
    treated as zero, as PyTorch's and NumPy's pinv do.
    """
    m, n = _sh(x)[-2:]
    dt = _arr(x).dtype
    if rtol is None:
        rtol = max(m, n) * float(np.finfo(dt if dt.kind in "fc" else np.float64).eps)
    return pinv_op(x, rtol=float(rtol), hermitian=hermitian)


def lstsq(a: Any, b: Any, rcond: float | None = None) -> Tensor:
    """The least-squares solution of ``A X = B`` (minimum norm), through ``pinv``."""
    vec = len(_sh(b)) == len(_sh(a)) - 1
    bb = expand_dims(b, -1) if vec else b
    xs = matmul(pinv(a, rtol=rcond), bb)
    return reshape(xs, _sh(xs)[:-1]) if vec else xs


def cross(a: Any, b: Any, axis: int = -1) -> Tensor:
    """Cross product of 3-vectors along ``axis`` (operands broadcast)."""
    from .shape import moveaxis

    nd = max(len(_sh(a)), len(_sh(b)))
    ax = axis % nd
    am = moveaxis(a, ax - nd + len(_sh(a)), -1) if len(_sh(a)) else a
    bm = moveaxis(b, ax - nd + len(_sh(b)), -1) if len(_sh(b)) else b

    def c(v: Any, i: int) -> Tensor:
        return getitem(v, (Ellipsis, i))

    parts = [subtract(multiply(c(am, 1), c(bm, 2)), multiply(c(am, 2), c(bm, 1))),
             subtract(multiply(c(am, 2), c(bm, 0)), multiply(c(am, 0), c(bm, 2))),
             subtract(multiply(c(am, 0), c(bm, 1)), multiply(c(am, 1), c(bm, 0)))]
    return moveaxis(stack(parts, axis=-1), -1, ax)


def logdet(a: Any) -> Tensor:
    """``log(det(A))``: NaN for a negative determinant, -inf for zero (as PyTorch)."""
    sgn, la = slogdet(a)
    return where(_arr(sgn) < 0, np.nan, la)  # log|det| is already -inf where det == 0


__all__ = [
    "LinAlgError", "band_part", "cholesky", "cross", "det", "diag_embed", "diagonal", "eig",
    "eigvals", "eigh",
    "eigvalsh", "inv", "logdet", "lstsq", "matrix_exp", "matrix_norm", "matrix_power", "pinv",
    "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals", "trace", "tril", "triu",
    "vector_norm", "matrix_exp_op", "pinv_op", "svd_op", "qr_op", "eigh_op", "inv_op",
    "solve_op", "solve_triangular_op", "det_op", "logabsdet_op", "cholesky_op",
    "vector_norm_op",
]
