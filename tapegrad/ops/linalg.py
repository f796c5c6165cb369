"""Matrix products."""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.registry import defop
from .._core.tensor import Tensor
from . import _scratch
from ._raw import data, raw, wrap
from ._tf_eigen import EXACT_SUMS
from .complex import holomorphic_vjp
from .shape import _transpose, broadcast_to, reshape, swapaxes


def _nd(v: Any) -> int:
    return v._data.ndim if isinstance(v, Tensor) else np.ndim(v)


def _shape(v: Any) -> tuple[int, ...]:
    return v._data.shape if isinstance(v, Tensor) else np.shape(v)


# TensorFlow's float32 CPU MatMul (oneDNN's sgemm) for 2-D operands, when
# ``_tf_eigen.EXACT_SUMS`` is on (off by default, for its cost): each output is one
# chain of fused multiply-adds from 0 along k (measured bit for bit for m, k up to 300 and
# n >= 2, also with the first operand transposed, and with the second transposed from 16
# rows up; NumPy's BLAS agrees on wide outputs, not on narrow ones such as n = 3 or 7).  An
# FMA is the float64 product plus the float32 sum, rounded once to float32 (a double
# rounding, a last-bit difference about once in 10**8).  Not emulated: n = 1 (its gemv
# order was not found) and products past ``_TF_MATMUL_BUDGET`` multiply-adds (a Python
# loop over k: about 4 ns a multiply-add against BLAS's < 0.1 ns).
_TF_MATMUL_BUDGET = 1 << 20


def _tf_matmul_f32(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """``x @ y`` in TensorFlow's float32 order, or None where it is not emulated."""
    if x.dtype != np.float32 or y.dtype != np.float32 or x.ndim != 2 or y.ndim != 2:
        return None
    m, k = x.shape
    n = y.shape[1]
    if n < 2 or k == 0 or m * n * k > _TF_MATMUL_BUDGET or y.shape[0] != k \
            or not EXACT_SUMS[0]:
        return None
    x64 = x.astype(np.float64)
    y64 = y.astype(np.float64)
    acc = np.zeros((m, n), np.float32)
    t = np.empty((m, n), np.float64)
    for i in range(k):
        np.multiply(x64[:, i, None], y64[None, i, :], out=t)
        t += acc
        acc[...] = t
    return acc


@defop("matmul", saves=("x", "y"), needs=True)
def _matmul(x: Any, y: Any, *, kernel: str = "") -> Any:
    # kernel="tf": TensorFlow's float32 order for 2-D operands (values and gradients)
    if kernel:
        r = _tf_matmul_f32(np.asarray(x), np.asarray(y))
        if r is not None:
            return r
    try:
        if np.ndim(x) > 2 and np.ndim(y) == 2:
            # a stack of matrices times one matrix: one GEMM over all rows (as PyTorch folds
            # the batch into the rows), so each row is computed as a 2-D product would be
            xa = np.asarray(x)
            if xa.shape[-1] == np.shape(y)[0]:
                return np.matmul(xa.reshape(-1, xa.shape[-1]), y).reshape(
                    xa.shape[:-1] + (np.shape(y)[1],))
        return np.matmul(x, y)
    except ValueError:
        sx, sy = np.shape(x), np.shape(y)
        raise hinted(RuntimeError(
            with_hint(
                _matmul_message(tuple(sx), tuple(sy)),
                f"matmul needs x.shape[-1] == y.shape[-2]: got {list(sx)} and {list(sy)}",
            )
        )) from None


def _matmul_message(sx: tuple[int, ...], sy: tuple[int, ...]) -> str:
    """PyTorch's message for ``x @ y`` of these shapes (it depends on the kernel matmul picks)."""
    def mat(s: tuple[int, ...]) -> str:
        return "x".join(map(str, s))

    nx, ny = len(sx), len(sy)
    if nx == 1 and ny == 1:  # dot
        return (f"inconsistent tensor size, expected tensor [{sx[0]}] and src [{sy[0]}] to have "
                f"the same number of elements, but got {sx[0]} and {sy[0]} elements respectively")
    if ny <= 2 and nx >= 2:
        rows = int(np.prod(sx[:-1]))   # batch dims of x fold into rows
        if ny == 1:  # mv
            return f"size mismatch, got input ({rows}), mat ({rows}x{sx[-1]}), vec ({sy[0]})"
        return f"mat1 and mat2 shapes cannot be multiplied ({rows}x{sx[-1]} and {mat(sy)})"
    if nx == 1 and ny == 2:
        return f"mat1 and mat2 shapes cannot be multiplied (1x{sx[0]} and {mat(sy)})"
    # batched (bmm): the batch dims broadcast first, then the inner sizes must agree
    bx, by = sx[:-2] if nx > 2 else (), sy[:-2] if ny > 2 else ()
    width = max(len(bx), len(by))
    px, py = (1,) * (width - len(bx)) + bx, (1,) * (width - len(by)) + by
    for i, (a, b) in enumerate(zip(px, py)):
        if a != b and a != 1 and b != 1:
            return (f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                    f"non-singleton dimension {i}")
    batch = int(np.prod([max(a, b) for a, b in zip(px, py)]))
    k = sx[-1]
    k2 = sy[-2] if ny >= 2 else sy[0]
    return (f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {k}] "
            f"but got: [{batch}, {k2}].")


@_matmul.defvjp
def _(g: Tensor, x: Any, y: Any, needs: tuple[bool, ...], kernel: str = "") -> Any:
    if kernel and EXACT_SUMS[0] and g._data.dtype == np.float32 and g._data.ndim == 2 \
            and _nd(x) == 2 and _nd(y) == 2:  # TensorFlow's MatMul gradient: two MatMuls
        from .shape import _transpose

        # g @ y^T is MatMul(transpose_b=True): a chain along k only from 16 rows up
        # (fewer rows take another oneDNN kernel, not emulated: NumPy's order)
        kx: dict[str, Any] = {"kernel": kernel} if g._data.shape[0] >= 16 else {}
        gx = _matmul(g, _transpose(y, axes=(1, 0)), **kx) if needs[0] else None
        gy = _matmul(_transpose(x, axes=(1, 0)), g, kernel=kernel) if needs[1] else None
        return gx, gy
    if g._data.dtype.kind == "c":  # complex: the holomorphic form of the real rule
        return _matmul_vjp_complex(g, x, y, needs)
    return _matmul_vjp(g, x, y, needs)


def _matmul_vjp(g: Tensor, x: Any, y: Any, needs: tuple[bool, ...]) -> Any:
    # d(XY) = dX Y + X dY  ->  gX = g Y^T, gY = X^T g (1-D operands as row/column)
    nx, ny = _nd(x), _nd(y)
    gx = gy = None
    if nx == 1 and ny == 1:  # inner product
        return (g * y if needs[0] else None), (g * x if needs[1] else None)
    rw = raw()
    if ny == 1 and nx == 2:  # matrix-vector: gX = g y^T (outer product), gy = X^T g
        if rw:
            ga, xa, ya = g._data, data(x), data(y)
            if needs[0]:
                gx = wrap(np.multiply.outer(ga, ya), g)
            if needs[1]:
                gy = wrap(np.matmul(np.transpose(xa), ga), g)
            return gx, gy
        if needs[1]:
            gy = _mv(_transpose(x, axes=(1, 0)), g)
        if needs[0]:  # the outer product as one op (under vmap: one einsum for the batch)
            gx = _outer(g, y)
        return gx, gy
    elif nx == 1 and ny == 2 and not rw:
        # vector times matrix: gx = g Y^T (one product), gY = outer(x, g) (one op); the
        # products the reshaped 2-D route computes, without its reshapes and transpose
        if needs[0]:
            gx = _matmul(g, _t(y))
        if needs[1]:
            gy = _outer(x, g)
        return gx, gy
    elif nx == 2 and ny == 2 and rw:
        ga = g._data
        if needs[0]:
            gx = wrap(np.matmul(ga, np.transpose(data(y))), g)
        if needs[1]:
            gy = wrap(np.matmul(np.transpose(data(x)), ga), g)
        return gx, gy
    x2 = reshape(x, (1,) + _shape(x)) if nx == 1 else x
    y2 = reshape(y, _shape(y) + (1,)) if ny == 1 else y
    g2 = g
    if nx == 1:
        g2 = reshape(g2, _shape(g2)[:-1] + (1,) + _shape(g2)[-1:])
    if ny == 1:
        g2 = reshape(g2, _shape(g2) + (1,))
    if needs[0]:
        gx = _matmul(g2, _t(y2))
        if nx == 1:
            gx = reshape(_sum_lead(gx, 2), _shape(x))
    if needs[1] and gy is None:
        gy = _matmul(_t(x2), g2)
        if ny == 1:
            gy = reshape(_sum_lead(gy, 2), _shape(y))
    return gx, gy


_matmul_vjp_complex = holomorphic_vjp(_matmul_vjp)


def _outer(a: Any, b: Any) -> Any:
    """``a b^T`` of two vectors as one einsum op (exact products, as a k=1 matmul's)."""
    return _einsum_rec(a, b, terms=("y", "z"), result="yz")


def _t(v: Any) -> Any:
    """``v`` with its last two axes swapped."""
    return _transpose(v, axes=(1, 0)) if _nd(v) == 2 else swapaxes(v, -1, -2)


def _sum_lead(t: Tensor, keep: int) -> Tensor:
    from .shape import sum_to

    s = _shape(t)
    if len(s) <= keep:
        return t
    return sum_to(t, s[-keep:])


_mv = _matmul.variant("mv")
_dot_op = _matmul.variant("dot")
_bmm = _matmul.variant("bmm")
_mm_unsafe = _matmul.variant("mm_unsafe")
_vm = _matmul.variant("vm")


def matmul(x: Any, y: Any, *, kernel: str = "") -> Tensor:
    """Matrix product with numpy's broadcasting and 1-D rules (``kernel="tf"``: 2-D float32
    products in TensorFlow's CPU order, values and gradients)."""
    nx, ny = _nd(x), _nd(y)
    if nx == 0 or ny == 0:
        raise hinted(RuntimeError(
            with_hint(
                "both arguments to matmul need to be at least 1D, but they are "
                f"{nx}D and {ny}D",
                "use * for scalar multiplication",
            )
        ))
    if nx == 1 and ny == 1:
        return _dot_op(x, y)
    if nx == 2 and ny == 1:
        return _mv(x, y)
    if nx == 2 and ny == 2:
        return _matmul(x, y, kernel=kernel) if kernel else _matmul(x, y)
    if nx == 1 and ny == 2:
        return _vm(x, y)
    # PyTorch's matmul reshapes batched operands for bmm and names the node UnsafeViewBackward0
    # (an explicit torch.bmm is BmmBackward0)
    return _mm_unsafe(x, y)


def dot(x: Any, y: Any) -> Tensor:
    """numpy's dot for 1-D and 2-D operands (inner product / matrix product)."""
    if _nd(x) > 2 or _nd(y) > 2:
        raise hinted(NotImplementedError(with_hint("dot of >2-D operands", "use matmul or einsum")))
    if _nd(x) == 0 or _nd(y) == 0:
        from .elementwise import multiply

        return multiply(x, y)
    return matmul(x, y)


def outer(x: Any, y: Any) -> Tensor:
    return matmul(reshape(x, (-1, 1)), reshape(y, (1, -1)))


def _parse_einsum(subscripts: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str]:
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins, out = subscripts, None
    terms = ins.split(",")
    if len(terms) != len(shapes):
        raise hinted(ValueError(with_hint("einsum(): more operands were provided than specified in "
                                   "the equation" if len(shapes) > len(terms) else
                                   "einsum(): fewer operands were provided than specified in "
                                   "the equation", f"subscripts {subscripts!r}")))
    used = set(subscripts) - set(".,->")
    free = [c for c in string.ascii_letters if c not in used]
    ell_n = 0
    for t, s in zip(terms, shapes):
        if "..." in t:
            ell_n = max(ell_n, len(s) - (len(t) - 3))
    ell = "".join(free[:ell_n])
    new_terms = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            k = len(s) - (len(t) - 3)
            t = t.replace("...", ell[ell_n - k:])
        new_terms.append(t)
    if out is None:
        counts: dict[str, int] = {}
        for t in new_terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return new_terms, out


def _einsum_fwd(*xs: Any, terms: tuple[str, ...], result: str, kernel: str = "") -> Any:
    if kernel and len(xs) == 2:
        out = _einsum_as_matmul(np.asarray(xs[0]), np.asarray(xs[1]), terms, result)
        if out is not None:
            return out
    spec = ",".join(terms) + "->" + result
    out = _pooled_out(xs, terms, result)
    if out is not None:
        return np.einsum(spec, *xs, out=out)
    return np.einsum(spec, *xs)


def _pooled_out(xs: tuple[Any, ...], terms: tuple[str, ...], result: str) -> Any:
    """Recycled memory (``ops._scratch``) for a large batched outer product, else ``None``.

    A fresh array of megabytes is fresh pages, each first write a page fault when the
    C allocator has handed the memory back: vmap's per-example weight gradients (an
    outer product per example, W6's 16 MB) are written into memory a previous step's
    gradients used, once nothing refers to those any more.  Only two operands sharing
    a (batch) letter, nothing summed, every letter of one size (no broadcasting), one
    floating dtype: the shape of vmap's outer products, not of the contractions a
    backward pass accumulates into ``.grad`` (which copies arrays it does not own).
    """
    if len(xs) != 2 or not set(terms[0]) & set(terms[1]) \
            or set(terms[0]) | set(terms[1]) != set(result):
        return None
    sizes: dict[str, int] = {}
    dt = None
    for x, t in zip(xs, terms):
        if x.__class__ is not np.ndarray or x.ndim != len(t) or x.dtype.kind not in "fc":
            return None
        if dt is None:
            dt = x.dtype
        elif x.dtype != dt:
            return None
        for c, n in zip(t, x.shape):
            if sizes.setdefault(c, n) != n:
                return None
    if dt is None or any(c not in sizes for c in result):
        return None
    shape = tuple(sizes[c] for c in result)
    if dt.itemsize * int(np.prod(shape, dtype=np.int64)) < _scratch.MIN_BYTES:
        return None
    return _scratch.empty(shape, dt)


# The largest contraction for which TensorFlow 2.21's einsum (a batched matmul on CPU)
# was measured to sum as BLAS's matmul does; past it TensorFlow blocks the sum otherwise
_TF_EINSUM_MAX_K = 256
# Up to this many multiply-adds, the sum is replayed step by step (exact); past it BLAS
_SEQ_FMA_BUDGET = 1 << 22


def _einsum_as_matmul(a: np.ndarray, b: np.ndarray, terms: tuple[str, ...],
                      result: str) -> Any:
    """A float32 two-operand einsum as TensorFlow computes it: one batched matmul.

    Letters of one operand only are summed first; the rest are transposed to
    ``(batch, m, k) @ (batch, k, n)``, as TensorFlow's ``BatchMatMul``, whose
    CPU kernel (measured, for ``k <= 256``) sums each output with one fused
    multiply-add per ``k`` in order; small products replay that, large ones
    use BLAS's sgemm (which agrees for most shapes).  ``None`` where that does
    not apply (other dtypes, repeated letters, ``k > 256``, matrix-vector).
    """
    ta, tb = terms
    if (a.dtype != np.float32 or b.dtype != np.float32 or len(set(ta)) != len(ta)
            or len(set(tb)) != len(tb)):
        return None
    for_a = [i for i, c in enumerate(ta) if c not in tb and c not in result]
    if for_a:
        a = a.sum(axis=tuple(for_a))
        ta = "".join(c for c in ta if c in tb or c in result)
    for_b = [i for i, c in enumerate(tb) if c not in ta and c not in result]
    if for_b:
        b = b.sum(axis=tuple(for_b))
        tb = "".join(c for c in tb if c in ta or c in result)
    sa, sb = dict(zip(ta, a.shape)), dict(zip(tb, b.shape))
    if any(sa[c] != sb[c] for c in ta if c in sb):
        return None   # broadcasting size-1 letters: leave it to NumPy
    batch = [c for c in result if c in ta and c in tb]
    left = [c for c in result if c in ta and c not in tb]
    right = [c for c in result if c in tb and c not in ta]
    con = [c for c in ta if c in tb and c not in result]
    k = int(np.prod([sa[c] for c in con], dtype=np.int64))
    if k > _TF_EINSUM_MAX_K or set(result) - set(ta) - set(tb):
        return None
    nb = int(np.prod([sa[c] for c in batch], dtype=np.int64))
    m = int(np.prod([sa[c] for c in left], dtype=np.int64))
    n = int(np.prod([sb[c] for c in right], dtype=np.int64))
    if n == 1 and m > 1:
        return None   # TensorFlow's matrix-vector kernel sums otherwise
    x = np.ascontiguousarray(np.transpose(a, [ta.index(c) for c in batch + left + con]))
    y = np.ascontiguousarray(np.transpose(b, [tb.index(c) for c in batch + con + right]))
    x3, y3 = x.reshape(nb, m, k), y.reshape(nb, k, n)
    if nb * m * n * k <= _SEQ_FMA_BUDGET:
        # TensorFlow's kernel (measured): one fused multiply-add per k, in order
        r = np.zeros((nb, m, n), np.float32)
        for j in range(k):
            r = (np.multiply(x3[:, :, j:j + 1], y3[:, j:j + 1, :], dtype=np.float64)
                 + r).astype(np.float32)
    else:   # BLAS's sgemm, which sums as TensorFlow's for most large shapes
        r = np.matmul(x3, y3)
    r = r.reshape([sa[c] for c in batch + left] + [sb[c] for c in right])
    have = batch + left + right
    return np.transpose(r, [have.index(c) for c in result])


# einsum is variadic: it saves every operand ("*")
_einsum_rec = defop("einsum", saves=("*",), needs=True)(_einsum_fwd)


def einsum(subscripts: str, *operands: Any, kernel: str = "") -> Tensor:
    """Einstein summation (explicit or implicit output, ``...`` supported).

    ``kernel="tf"``: a float32 two-operand einsum sums as TensorFlow's batched
    matmul does (see :func:`_einsum_as_matmul`); the gradient is the same.
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, out = _parse_einsum(subscripts, [_shape(o) for o in operands])
    if kernel:
        return _einsum_rec(*operands, terms=tuple(terms), result=out, kernel=kernel)
    return _einsum_rec(*operands, terms=tuple(terms), result=out)


def _einsum_vjp(g: Tensor, *xs: Any, terms: tuple[str, ...], result: str,
                needs: tuple[bool, ...], kernel: str = "") -> Any:
    out = result
    # gradient of operand i: einsum of g with the other operands, back to term i
    grads: list[Any] = []
    for i, term in enumerate(terms):
        if not needs[i]:
            grads.append(None)
            continue
        others = [t for j, t in enumerate(terms) if j != i]
        ops = [x for j, x in enumerate(xs) if j != i]
        avail = set(out).union(*[set(t) for t in others]) if others else set(out)
        target = "".join(dict.fromkeys(c for c in term if c in avail))
        gi = _einsum_rec(g, *ops, terms=(out, *others), result=target)
        if target != term:
            shape = _shape(xs[i])
            sizes = dict(zip(term, shape))
            uniq = "".join(dict.fromkeys(term))
            if target != uniq:
                # letters summed only inside operand i: put them back as broadcast axes
                gi = reshape(gi, tuple(sizes[c] if c in target else 1 for c in uniq))
                gi = broadcast_to(gi, tuple(sizes[c] for c in uniq))
            if uniq != term:
                # a repeated letter (a diagonal, "ii->"): the gradient lives on the diagonal,
                # d x[a, b] = delta(a, b) g[a]; spread it with identity matrices
                spare = iter(c for c in string.ascii_letters if c not in term + out)
                renamed, subs, eyes, seen = "", [], [], set()
                for c in term:
                    if c in seen:
                        d = next(spare)
                        subs.append(c + d)
                        eyes.append(np.eye(sizes[c], dtype=g._data.dtype))
                        renamed += d
                    else:
                        seen.add(c)
                        renamed += c
                gi = _einsum_rec(gi, *eyes, terms=(uniq, *subs), result=renamed)
        grads.append(gi)
    return tuple(grads)


_einsum_rec.defvjp(_einsum_vjp)


# ================================================================ forward-mode and batching rules
@_matmul.defjvp
def _(dx: Any, dy: Any, x: Any, y: Any, *, out: Any, kernel: str = "") -> Any:  # dX Y + X dY
    from .elementwise import _tadd

    kw: dict[str, Any] = {"kernel": kernel} if kernel else {}
    return _tadd(None if dx is None else _matmul(dx, y, **kw),
                 None if dy is None else _matmul(x, dy, **kw))


@_matmul.defbatch
def matmul_batch(batched: tuple[bool, ...], x: Any, y: Any, **attrs: Any) -> Any:
    """The batching rule of matmul (also used by other ops' rules)."""
    from ._batch import move_batch
    from .reduce import sum as _rsum
    from .shape import squeeze

    bx, by = batched
    rx, ry = _nd(x) - bx, _nd(y) - by
    if rx == 1 and ry == 1:  # inner products, one per example
        if bx and by:
            from .elementwise import multiply

            return _rsum(multiply(x, y), axis=-1)
        return _matmul(x, y) if bx else _matmul(y, x)
    if by and not bx and rx == 2 and ry in (1, 2):
        # one matrix times a batch: one GEMM over the whole batch instead of a product per
        # example (X y_b = y_b X^T for vectors; X Y_b = (Y_b^T X^T)^T for matrices)
        from .shape import swapaxes

        xt = swapaxes(x, 0, 1)
        if ry == 1:
            return _matmul(y, xt)
        return swapaxes(_matmul(swapaxes(y, -1, -2), xt), -1, -2)
    sq = None
    if rx == 1 and bx:  # a batch of row vectors: matrices of one row
        x = reshape(x, (_shape(x)[0], 1, _shape(x)[1]))
        rx, sq = 2, -2
    if ry == 1 and by:  # a batch of column vectors
        y = reshape(y, _shape(y) + (1,))
        ry, sq = 2, -1
    if rx >= 2 and ry >= 2:  # batched operands broadcast against the other's batch axes
        rank = max(rx, ry)
        if bx:
            x = move_batch(x, rank)
        if by:
            y = move_batch(y, rank)
    if rx >= 2 and ry >= 2 and _shape(x)[-1] == 1 and _shape(y)[-2] == 1:
        # per-example outer products (a vector VJP's weight gradient): nothing to sum, so
        # no matmul per example; einsum's outer-product loop is about twice as fast as the
        # broadcast multiply (which it equals) when the batch axes agree
        sx, sy = _shape(x), _shape(y)
        if sx[:-2] == sy[:-2] and len(sx) <= 24:
            lead = string.ascii_letters[:len(sx) - 2]
            out = _einsum_rec(reshape(x, sx[:-1]), reshape(y, sy[:-2] + sy[-1:]),
                              terms=(lead + "y", lead + "z"), result=lead + "yz")
        else:
            from .elementwise import multiply

            out = multiply(x, y)
    else:
        out = _matmul(x, y)
    return squeeze(out, axis=sq) if sq is not None else out


# a one-hot batch (autodiff/batching.py's Diag) times a matrix needs no GEMM
matmul_batch.__dict__["diag_kind"] = "matmul"


@_einsum_rec.defjvp
def _(*txs: Any, out: Any, terms: tuple[str, ...], result: str, kernel: str = "") -> Any:
    # multilinear: one term per operand with a tangent
    from .elementwise import _tadd

    n = len(txs) // 2
    ts, xs = txs[:n], txs[n:]
    res = None
    for i, t in enumerate(ts):
        if t is not None:
            ops = list(xs)
            ops[i] = t
            res = _tadd(res, _einsum_rec(*ops, terms=terms, result=result))
    return res


@_einsum_rec.defbatch
def _(batched: tuple[bool, ...], *xs: Any, terms: tuple[str, ...], result: str,
      kernel: str = "") -> Any:
    # a fresh letter for the batch axis, on every batched operand and on the result
    used = set("".join(terms) + result)
    b = next(c for c in string.ascii_letters if c not in used)
    new = tuple(b + t if bt else t for t, bt in zip(terms, batched))
    return _einsum_rec(*xs, terms=new, result=b + result)
