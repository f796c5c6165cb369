"""Reductions.  Public wrappers normalise ``axis`` once; the op attrs hold a
tuple of non-negative axes (or ``None``) so VJPs need no shape logic."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.registry import defop
from .._core.tensor import Tensor
from ._raw import mul_into, raw, wrap
from ._tf_eigen import inner_sum_f32
from ._tf_softmax import TF_SOFTMAX_DTYPES, tf_log_softmax, tf_softmax
from .elementwise import (
    _tadd,
    divide,
    equal,
    exp,
    multiply,
    negative,
    subtract,
    where,
)
from .shape import broadcast_to, expand_dims, moveaxis, reshape, sum_to


def norm_axis(axis: Any, ndim: int) -> tuple[int, ...] | None:
    """Normalise ``axis`` (int, sequence or None) to a sorted tuple of non-negative ints."""
    if axis is None:
        return None
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -builtins.max(ndim, 1) <= a < builtins.max(ndim, 1):
            raise hinted(IndexError(
                with_hint(
                    f"Dimension out of range (expected to be in range of "
                    f"[{-builtins.max(ndim, 1)}, {builtins.max(ndim, 1) - 1}], but got {a})",
                    f"the tensor has {ndim} dimension(s)",
                )
            ))
        out.append(a % builtins.max(ndim, 1))
    if ndim == 0:
        return ()
    return tuple(sorted(set(out)))


def _ndim(x: Any) -> int:
    return x._data.ndim if isinstance(x, Tensor) else np.ndim(x)


def _expand(g: Tensor, axis: tuple[int, ...] | None, keepdims: bool, shape: tuple[int, ...]) -> Tensor:
    """Put reduced axes back into ``g`` and broadcast it to ``shape``."""
    if not keepdims and axis:
        g = reshape(g, shape=_kept_shape(shape, axis))
    return broadcast_to(g, shape=shape)


def _expand_raw(g: np.ndarray, axis: tuple[int, ...] | None, keepdims: bool,
                shape: tuple[int, ...]) -> np.ndarray:
    """:func:`_expand` on arrays: a read-only broadcast view."""
    if not keepdims and axis:
        g = g.reshape(_kept_shape(shape, axis))
    return g if g.shape == shape else np.broadcast_to(g, shape)


def _kept_shape(shape: tuple[int, ...], axis: tuple[int, ...] | None) -> tuple[int, ...]:
    if axis is None:
        return (1,) * len(shape)
    return tuple(1 if i in axis else s for i, s in enumerate(shape))


@defop("sum", saves=("x_shape",))
def _sum(x: Any, *, axis: Any, keepdims: bool, kernel: str = "") -> Any:
    # kernel="tf": TensorFlow's float32 CPU order over trailing axes (ops/_tf_eigen.py)
    if kernel:
        r = inner_sum_f32(np.asarray(x), axis, keepdims, False)
        if r is not None:
            return r
    return np.sum(x, axis=axis, keepdims=keepdims)


@_sum.defvjp
def _(g: Tensor, x_shape: tuple[int, ...], axis: Any, keepdims: bool, kernel: str = "") -> Any:
    # each summed element gets g
    if raw():
        return (wrap(_expand_raw(g._data, axis, keepdims, x_shape), g),)
    if axis is None and not keepdims:
        return (broadcast_to(g, shape=x_shape),)
    return (_expand(g, axis, keepdims, x_shape),)


_sum_all = _sum.variant("sum_all")


def sum(x: Any, axis: Any = None, keepdims: bool = False, **kw: Any) -> Tensor:
    """Sum over ``axis`` (all axes when None).

    >>> import tapegrad as tg
    >>> tg.sum(tg.tensor([[1.0, 2.0], [3.0, 4.0]]), axis=0).tolist()
    [4.0, 6.0]
    """
    ax = norm_axis(axis, _ndim(x))
    if ax is None:
        return _sum_all(x, axis=None, keepdims=keepdims, **kw)
    return _sum(x, axis=ax, keepdims=keepdims, **kw)


def _count(x: Any, ax: tuple[int, ...] | None) -> int:
    shape = x._data.shape if isinstance(x, Tensor) else np.shape(x)
    if ax is None:
        return int(np.prod(shape))
    return int(np.prod([shape[a] for a in ax]))


@defop("mean", saves=("x_shape",))
def _mean(x: Any, *, axis: Any, keepdims: bool, kernel: str = "") -> Any:
    a = np.asarray(x)
    if kernel:  # TensorFlow's float32 CPU order over trailing axes (ops/_tf_eigen.py)
        r = inner_sum_f32(a, axis, keepdims, True)
        if r is not None:
            return r
    if a.dtype.kind in "iub":
        a = a.astype(np.float64)
    return np.mean(a, axis=axis, keepdims=keepdims)


@_mean.defvjp
def _(g: Tensor, x_shape: tuple[int, ...], axis: Any, keepdims: bool, kernel: str = "") -> Any:
    # each element gets g / n (divided before it is spread: the same values, fewer of them)
    n = int(np.prod(x_shape)) if axis is None else int(np.prod([x_shape[a] for a in axis]))
    if raw():
        q = np.true_divide(g._data, builtins.max(n, 1))
        return (wrap(_expand_raw(np.asarray(q), axis, keepdims, x_shape), g),)
    return (_expand(divide(g, builtins.max(n, 1)), axis, keepdims, x_shape),)


_mean_all = _mean.variant("mean_all")


def mean(x: Any, axis: Any = None, keepdims: bool = False, **kw: Any) -> Tensor:
    """Arithmetic mean over ``axis``."""
    ax = norm_axis(axis, _ndim(x))
    op = _mean_all if ax is None else _mean
    return op(x, axis=ax, keepdims=keepdims, **kw)


@defop("prod", saves=("x", "out"))
def _prod(x: Any, *, axis: Any, keepdims: bool) -> Any:
    return np.prod(x, axis=axis, keepdims=keepdims)


@_prod.defvjp
def _(g: Tensor, x: Tensor, out: Tensor, axis: Any, keepdims: bool) -> Any:
    # d prod = prod / x_i dx_i; with zeros, the product of the other elements instead
    shape = x._data.shape
    ge = _expand(g, axis, keepdims, shape)
    if x._lvl is None and not np.any(x._data == 0):  # a tracer's array is not its value
        return (multiply(ge, divide(_expand(out, axis, keepdims, shape), x)),)
    return (multiply(ge, _prod_others(x, axis)),)


def _prod_others(x: Tensor, axis: tuple[int, ...] | None) -> Tensor:
    """For each element, the product of the other elements of its reduction group."""
    shape = x._data.shape
    axes = tuple(range(len(shape))) if axis is None else axis
    rest = [i for i in range(len(shape)) if i not in axes]
    perm = rest + list(axes)
    xt = moveaxis_perm(x, perm)
    lead = [shape[i] for i in rest]
    n = int(np.prod([shape[i] for i in axes])) if axes else 1
    flat = reshape(xt, shape=tuple(lead) + (n,))
    rep = broadcast_to(reshape(flat, shape=tuple(lead) + (1, n)), shape=tuple(lead) + (n, n))
    eye = np.eye(n, dtype=bool)
    others = _prod(where(eye, 1.0, rep), axis=(len(lead) + 1,), keepdims=False)
    back = reshape(others, shape=tuple(lead) + tuple(shape[i] for i in axes))
    inv = list(np.argsort(perm))
    return moveaxis_perm(back, inv)


def moveaxis_perm(x: Tensor, perm: list[int]) -> Tensor:
    from .shape import transpose

    if perm == sorted(perm):
        return x
    return transpose(x, axes=tuple(int(p) for p in perm))


_prod_all = _prod.variant("prod_all")


def prod(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Product over ``axis``."""
    ax = norm_axis(axis, _ndim(x))
    op = _prod_all if ax is None else _prod
    return op(x, axis=ax, keepdims=keepdims)


def _make_extreme(name: str, npfn: Any, argfn: Any) -> Any:
    @defop(name, saves=("x", "out"))
    def op(x: Any, *, axis: Any, keepdims: bool, ties: str = "split") -> Any:
        a = np.asarray(x)
        if a.size == 0:
            raise hinted(RuntimeError(
                with_hint(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0.",
                    f"{name} of an empty tensor is undefined",
                )
            ))
        return npfn(a, axis=axis, keepdims=keepdims)

    @op.defvjp
    def _(g: Tensor, x: Tensor, out: Tensor, axis: Any, keepdims: bool, ties: str = "split") -> Any:
        # gradient to the extreme element(s): split evenly between ties ("split"),
        # or all to the first one ("first", PyTorch's max(dim=...))
        shape = x._data.shape
        ge = _expand(g, axis, keepdims, shape)
        if ties == "split":
            mask = equal(x, _expand(out, axis, keepdims, shape))
            count = _sum(mask, axis=axis, keepdims=True) if axis is not None else \
                _sum(mask, axis=None, keepdims=True)
            return (divide(multiply(ge, mask), count),)
        return (multiply(ge, _first_weights(x, axis, argfn)),)

    return op


def _first_weights(x: Tensor, axis: tuple[int, ...] | None, argfn: Any) -> Any:
    """1 at the first extreme element of each reduction group, 0 elsewhere."""
    if x._lvl is None:
        return _first_onehot(x._data, axis, argfn)
    # a tracer (its array is not its value): the same mask from ops
    from .shape import _reshape

    argop = _argmax if argfn is np.argmax else _argmin
    shape = x._data.shape
    if axis is None or len(axis) != 1:
        if axis is not None and len(shape) > 1:
            raise NotImplementedError("first-tie max over several axes")
        n = int(np.prod(shape))
        hit = equal(np.arange(n), argop(_reshape(x, shape=(n,)), axis=0, keepdims=False))
        return _reshape(hit, shape=shape)
    ax = axis[0]
    pos = np.arange(shape[ax]).reshape((-1,) + (1,) * (len(shape) - ax - 1))
    return equal(pos, argop(x, axis=ax, keepdims=True))


def _first_onehot(a: np.ndarray, axis: tuple[int, ...] | None, argfn: Any) -> np.ndarray:
    if axis is None or len(axis) != 1:
        flat = np.zeros(a.size, dtype=bool)
        if a.size:
            flat[argfn(a)] = True
        if axis is None or a.ndim == 0:
            return flat.reshape(a.shape)
        raise NotImplementedError("first-tie max over several axes")
    ax = axis[0]
    idx = np.expand_dims(argfn(a, axis=ax), ax)
    mask = np.zeros(a.shape, dtype=bool)
    np.put_along_axis(mask, idx, True, axis=ax)
    return mask


_max = _make_extreme("max", np.max, np.argmax)  # noqa: F821 (_argmax: defined below)
_min = _make_extreme("min", np.min, np.argmin)
_max_all = _max.variant("max_all")
_min_all = _min.variant("min_all")


def max(x: Any, axis: Any = None, keepdims: bool = False, *, ties: str = "split") -> Tensor:
    """Largest element over ``axis``.  ``ties``: "split" evenly or "first" element."""
    ax = norm_axis(axis, _ndim(x))
    return _max(x, axis=ax, keepdims=keepdims, ties=ties)


def min(x: Any, axis: Any = None, keepdims: bool = False, *, ties: str = "split") -> Tensor:
    """Smallest element over ``axis``.  ``ties``: "split" evenly or "first" element."""
    ax = norm_axis(axis, _ndim(x))
    return _min(x, axis=ax, keepdims=keepdims, ties=ties)


amax = max
amin = min


def var(x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Tensor:
    """Variance with ``ddof`` delta degrees of freedom (numpy's convention); one node
    (the fused primitive ``ops.fused.var_op``, PyTorch's ``correction``)."""
    from .fused import var_op

    return var_op(x, axis=norm_axis(axis, _ndim(x)), correction=ddof, keepdims=bool(keepdims))


def std(x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Tensor:
    """Standard deviation with ``ddof`` delta degrees of freedom (one node)."""
    from .fused import std_op

    return std_op(x, axis=norm_axis(axis, _ndim(x)), correction=ddof, keepdims=bool(keepdims))


# The softmax family are primitives rather than composites: one stable kernel
# forward and a short VJP (still in tapegrad ops, so still differentiable to any
# order) instead of ~6 recorded ops each way.
@defop("logsumexp", saves=("x", "out"))
def logsumexp_op(x: Any, *, axis: tuple[int, ...] | None, keepdims: bool) -> Any:
    x = np.asarray(x)
    with np.errstate(all="ignore"):
        m = np.max(x, axis=axis, keepdims=True) if x.size else np.zeros((1,) * x.ndim)
        m = np.where(np.isfinite(m), m, 0)
        r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        r = np.squeeze(r, axis=axis) if axis is not None else r.reshape(())
    return np.asarray(r).astype(x.dtype, copy=False)


@logsumexp_op.defvjp
def _(g: Tensor, x: Tensor, out: Tensor, axis: Any, keepdims: bool) -> Any:
    # dx = g * exp(x - lse)
    shape = x._data.shape
    return (multiply(_expand(g, axis, keepdims, shape),
                     exp(subtract(x, _expand(out, axis, keepdims, shape)))),)


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis``, computed stably (the max is subtracted)."""
    return logsumexp_op(x, axis=norm_axis(axis, _ndim(x)), keepdims=keepdims)


@defop("softmax", saves=("out",))
def softmax_op(x: Any, *, axis: int, kernel: str = "") -> Any:
    # kernel="tf": TensorFlow's CPU kernels (float32/64/16), bit for bit (ops/_tf_softmax.py)
    x = np.asarray(x)
    if kernel and x.dtype in TF_SOFTMAX_DTYPES and x.size:
        return tf_softmax(x, axis)
    with np.errstate(all="ignore"):
        if not x.size:  # nothing to stabilise
            e = np.exp(x)
            return (e / np.sum(e, axis=axis, keepdims=True)).astype(x.dtype, copy=False)
        e = np.exp(np.subtract(x, _finite_max(x, axis)))
        q = np.add.reduce(e, axis=axis, keepdims=True)
        if e.dtype == x.dtype and e.dtype == np.result_type(e, q):
            return np.true_divide(e, q, out=e)  # e is ours: divide in place
        return (e / q).astype(x.dtype, copy=False)


def _finite_max(x: np.ndarray, axis: int) -> np.ndarray:
    """The max along ``axis`` (kept), with non-finite maxima replaced by 0 (stable softmax)."""
    m = np.maximum.reduce(x, axis=axis, keepdims=True)
    fin = np.isfinite(m)
    return m if fin.all() else np.where(fin, m, 0)


@softmax_op.defvjp
def _(g: Tensor, out: Tensor, axis: int, kernel: str = "") -> Any:  # dx = y * (g - sum(g * y))
    if raw():
        ga, o = g._data, out._data
        s = np.sum(np.multiply(ga, o), axis=axis, keepdims=True)
        return (wrap(mul_into(np.asarray(np.subtract(ga, s)), o), g),)
    return (multiply(out, subtract(g, _sum(multiply(g, out), axis=(axis,), keepdims=True))),)


@defop("log_softmax", saves=("out",))
def log_softmax_op(x: Any, *, axis: int, kernel: str = "") -> Any:
    x = np.asarray(x)
    if kernel and x.dtype in TF_SOFTMAX_DTYPES and x.size:
        return tf_log_softmax(x, axis)
    with np.errstate(all="ignore"):
        if not x.size:  # nothing to stabilise
            return (x - np.log(np.sum(np.exp(x), axis=axis, keepdims=True))).astype(
                x.dtype, copy=False)
        s = np.subtract(x, _finite_max(x, axis))
        lse = np.log(np.add.reduce(np.exp(s), axis=axis, keepdims=True))
        if s.dtype == x.dtype and s.dtype == np.result_type(s, lse):
            return np.subtract(s, lse, out=s)  # s is ours: subtract in place
        return (s - lse).astype(x.dtype, copy=False)


@log_softmax_op.defvjp
def _(g: Tensor, out: Tensor, axis: int, kernel: str = "") -> Any:  # dx = g - exp(y) * sum(g)
    if raw():
        return (wrap(_log_softmax_backward_np(g._data, out._data, axis), g),)
    return (log_softmax_backward(g, out, axis=axis),)


def _log_softmax_backward_np(ga: Any, y: Any, axis: int) -> Any:
    e = np.asarray(np.exp(y))
    s = np.sum(ga, axis=axis, keepdims=True)
    if e.dtype == np.result_type(e, s):
        np.multiply(e, s, out=e)
    else:
        e = np.multiply(e, s)
    if e.dtype == np.result_type(ga, e) and e.shape == np.shape(ga):
        return np.subtract(ga, e, out=e)
    return np.subtract(ga, e)


@defop("log_softmax_backward", saves=("g", "y"), needs=True)
def log_softmax_backward(g: Any, y: Any, *, axis: int) -> Any:
    """``g - exp(y) * sum(g)`` along ``axis`` with ``y = log_softmax(x)``: log_softmax's VJP
    as one op (one node when recorded, one batched call under ``vmap``)."""
    return _log_softmax_backward_np(g, y, axis)


@log_softmax_backward.defvjp
def _(gg: Tensor, g: Any, y: Any, axis: int, needs: tuple[bool, ...]) -> Any:
    # linear in g (its transpose: gg - sum(gg exp(y))); d/dy: -gg exp(y) sum(g)
    dg = dy = None
    ey = exp(y)
    if needs[0]:
        dg = subtract(gg, _sum(multiply(gg, ey), axis=(axis,), keepdims=True))
    if needs[1]:
        dy = negative(multiply(multiply(gg, ey), _sum(g, axis=(axis,), keepdims=True)))
    return dg, dy


def _one_axis(x: Any, axis: int) -> int:
    ax = norm_axis(axis, _ndim(x))
    assert ax is not None
    return ax[0] if ax else 0


def softmax(x: Any, axis: int = -1, kernel: str = "") -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``axis``, computed stably.

    ``kernel="tf"``: float32, float64 and float16 values are TensorFlow's CPU kernels', bit for bit.
    """
    kw = {"kernel": kernel} if kernel else {}
    if _ndim(x) == 0:
        return reshape(softmax_op(reshape(x, shape=(1,)), axis=0, **kw), shape=())
    return softmax_op(x, axis=_one_axis(x, axis), **kw)


def log_softmax(x: Any, axis: int = -1, kernel: str = "") -> Tensor:
    """``x - logsumexp(x)`` along ``axis``, computed stably (``kernel`` as :func:`softmax`)."""
    kw = {"kernel": kernel} if kernel else {}
    if _ndim(x) == 0:
        return reshape(log_softmax_op(reshape(x, shape=(1,)), axis=0, **kw), shape=())
    return log_softmax_op(x, axis=_one_axis(x, axis), **kw)


@defop("cumsum")
def _cumsum(x: Any, *, axis: int) -> Any:
    return np.cumsum(x, axis=axis)


@_cumsum.defvjp
def _(g: Tensor, axis: int) -> Any:  # reverse cumulative sum
    from .shape import flip

    return (flip(_cumsum(flip(g, axis=(axis,)), axis=axis), axis=(axis,)),)


def cumsum(x: Any, axis: Any = None) -> Tensor:
    """Cumulative sum along ``axis`` (flattened when None, as numpy does)."""
    if axis is None:
        x = reshape(x, shape=(-1,))
        axis = 0
    ax = norm_axis(axis, _ndim(x))
    assert ax is not None
    return _cumsum(x, axis=ax[0] if ax else 0)




def _bool_reduce(fn: Any, name: str) -> Any:
    op = defop(name)(lambda x, *, axis=None, keepdims=False: fn(x, axis=axis, keepdims=keepdims))
    op.vjp = None  # type: ignore[assignment]  # not differentiable: never recorded
    return op


_any = _bool_reduce(np.any, "any")
_all = _bool_reduce(np.all, "all")


def any(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return _any(x, axis=norm_axis(axis, _ndim(x)), keepdims=keepdims)


def all(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return _all(x, axis=norm_axis(axis, _ndim(x)), keepdims=keepdims)


def _arg(fn: Any, name: str) -> Any:
    op = defop(name)(lambda x, *, axis=None, keepdims=False: fn(x, axis=axis, keepdims=keepdims))
    op.vjp = None  # type: ignore[assignment]  # not differentiable: never recorded
    return op


_argmax = _arg(np.argmax, "argmax")
_argmin = _arg(np.argmin, "argmin")


def argmax(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return _argmax(x, axis=None if axis is None else int(axis), keepdims=keepdims)


def argmin(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    return _argmin(x, axis=None if axis is None else int(axis), keepdims=keepdims)


# ================================================================ forward-mode and batching rules
from ._batch import shift_axis as _shift  # noqa: E402


def _red_jvp(op: Any) -> Any:  # linear reductions: the same reduction of the tangent
    return lambda dx, x, *, out, axis, keepdims, **kw: op(dx, axis=axis, keepdims=keepdims, **kw)


_sum.defjvp(_red_jvp(_sum))
_mean.defjvp(_red_jvp(_mean))
# the all-axes variants: the tangent's node is named as theirs (SumBackward0), not sum's
_sum_all.defjvp(_red_jvp(_sum_all))
_mean_all.defjvp(_red_jvp(_mean_all))


@_prod.defjvp
def _(dx: Any, x: Any, *, out: Any, axis: Any, keepdims: bool) -> Any:
    # sum over the group of dx_i * (product of the others)
    return _sum(multiply(dx, _prod_others(x, axis)), axis=axis, keepdims=keepdims)


def _extreme_jvp(argfn: Any) -> Any:
    def rule(dx: Any, x: Any, *, out: Any, axis: Any, keepdims: bool, ties: str = "split") -> Any:
        shape = x._data.shape
        if ties == "split":
            mask = equal(x, _expand(out, axis, keepdims, shape))
            w = divide(mask, _sum(mask, axis=axis, keepdims=True))
        else:
            w = _first_weights(x, axis, argfn)
        return _sum(multiply(dx, w), axis=axis, keepdims=keepdims)

    return rule


_max.defjvp(_extreme_jvp(np.argmax))
_min.defjvp(_extreme_jvp(np.argmin))


@logsumexp_op.defjvp
def _(dx: Any, x: Any, *, out: Any, axis: Any, keepdims: bool) -> Any:
    shape = x._data.shape
    w = exp(subtract(x, _expand(out, axis, keepdims, shape)))
    return _sum(multiply(dx, w), axis=axis, keepdims=keepdims)


softmax_op.defjvp(lambda dx, x, *, out, axis, kernel="": multiply(
    out, subtract(dx, _sum(multiply(dx, out), axis=(axis,), keepdims=True))))
log_softmax_op.defjvp(lambda dx, x, *, out, axis, kernel="": subtract(
    dx, _sum(multiply(dx, exp(out)), axis=(axis,), keepdims=True)))
_cumsum.defjvp(lambda dx, x, *, out, axis: _cumsum(dx, axis=axis))


@log_softmax_backward.defjvp
def _(dg: Any, dy: Any, g: Any, y: Any, *, out: Any, axis: int) -> Any:
    t = None if dg is None else log_softmax_backward(dg, y, axis=axis)
    if dy is not None:
        t = _tadd(t, negative(multiply(multiply(exp(y), dy),
                                       _sum(g, axis=(axis,), keepdims=True))))
    return t


@log_softmax_backward.defbatch
def _(batched: tuple[bool, ...], g: Any, y: Any, *, axis: int) -> Any:
    # both carry the batch (an unbatched one broadcast, a view); the axis moves by one
    n = next(np.shape(v._data)[0] for v, b in zip((g, y), batched) if b)
    if not batched[0]:
        g = broadcast_to(g, (n,) + np.shape(g._data if isinstance(g, Tensor) else g))
    if not batched[1]:
        y = broadcast_to(y, (n,) + np.shape(y._data if isinstance(y, Tensor) else y))
    return log_softmax_backward(g, y, axis=axis + 1)


def _red_batch(op: Any) -> Any:
    def rule(batched: tuple[bool, ...], x: Any, *, axis: Any, keepdims: bool, **kw: Any) -> Any:
        return op(x, axis=_shift(axis, _ndim(x) - 1), keepdims=keepdims, **kw)

    return rule


for _op in (_sum, _mean, _prod, _max, _min, logsumexp_op, _any, _all):
    _op.defbatch(_red_batch(_op))


def _axis_batch(op: Any) -> Any:
    return lambda batched, x, *, axis, **kw: op(x, axis=axis + 1, **kw)


for _op in (softmax_op, log_softmax_op, _cumsum):
    _op.defbatch(_axis_batch(_op))


def _arg_batch(op: Any) -> Any:
    def rule(batched: tuple[bool, ...], x: Any, *, axis: Any, keepdims: bool) -> Any:
        if axis is not None:
            return op(x, axis=axis + 1, keepdims=keepdims)
        shape = x._data.shape
        r = op(reshape(x, shape=(shape[0], -1)), axis=1, keepdims=False)
        return reshape(r, shape=(shape[0],) + (1,) * (len(shape) - 1)) if keepdims else r

    return rule


_argmax.defbatch(_arg_batch(_argmax))
_argmin.defbatch(_arg_batch(_argmin))


@defop("argsort")
def _argsort(x: Any, *, axis: int, descending: bool) -> Any:
    """Indices that sort ``x`` along ``axis`` (stable; ``descending``: largest first)."""
    a = np.asarray(x)
    return np.argsort(-a if descending else a, axis=axis, kind="stable").astype(np.int64)


_argsort.vjp = None  # type: ignore[assignment]  # not differentiable: never recorded


@_argsort.defbatch
def _(batched: tuple[bool, ...], x: Any, *, axis: int, descending: bool) -> Any:
    return _argsort(x, axis=axis + 1 if axis >= 0 else axis, descending=descending)


def argsort(x: Any, axis: int = -1, descending: bool = False) -> Tensor:
    """Indices (int64) that sort ``x`` along ``axis``, as an op: it works on transform
    tracers (``vmap``), whose values cannot be read."""
    return _argsort(x, axis=int(axis), descending=bool(descending))
del _op


__all__ = [
    "sum", "mean", "prod", "max", "min", "amax", "amin", "var", "std", "logsumexp",
    "softmax", "log_softmax", "cumsum", "any", "all", "argmax", "argmin", "argsort", "norm_axis",
    "sum_to", "moveaxis", "expand_dims",
]
