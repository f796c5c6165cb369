"""Pooling, N-d, channels first: max (with indices), average, adaptive, global.

Max pooling is split in two: :func:`pool_argmax` finds, per window, the flat
index of the first maximum in the input's spatial plane (the element both
frameworks send the gradient to on ties), and ``pool_take`` gathers the values
there.  ``pool_take`` and its adjoint ``pool_put`` (scatter-add) are linear
in the values, so max pooling is differentiable to any order.  Average
pooling is an ``unfold``, a sum and a division (linear too); adaptive average
pooling multiplies by one averaging matrix per spatial axis.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.registry import defop
from .._core.tensor import Tensor, make
from ._raw import data
from .conv import _pad_input
from .shape import broadcast_to, reshape

Pads = tuple[tuple[int, int], ...]
Ints = tuple[int, ...]

__all__ = ["pool_output_size", "pool_argmax", "max_pool", "avg_pool", "adaptive_avg_pool",
           "adaptive_max_pool", "pool_take", "pool_put"]


def pool_output_size(size: Ints, kernel: Ints, stride: Ints, padding: Pads, dilation: Ints,
                     ceil_mode: bool) -> Ints:
    """Output size of a pooling window (PyTorch's rule with ``ceil_mode``: the last
    window must start inside the input or its low padding)."""
    out = []
    for n, k, s, (lo, hi), d in zip(size, kernel, stride, padding, dilation):
        span = n + lo + hi - d * (k - 1) - 1
        o = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (o - 1) * s >= n + lo:
            o -= 1
        out.append(o)
    return tuple(out)


def _extra_high(size: Ints, kernel: Ints, stride: Ints, padding: Pads, dilation: Ints,
                out: Ints) -> Pads:
    """Padding with the high side widened so the ceil-mode windows fit."""
    pads = []
    for n, k, s, (lo, hi), d, o in zip(size, kernel, stride, padding, dilation, out):
        need = (o - 1) * s + d * (k - 1) + 1 - (n + lo)
        pads.append((lo, max(hi, need)))
    return tuple(pads)


# ---------------------------------------------------------------- gather / scatter
def _flat_lead(a: np.ndarray, nsp: int) -> np.ndarray:
    return a.reshape(a.shape[: a.ndim - nsp] + (-1,))


@defop("pool_take", saves=("x_shape", "idx"))
def _pool_take(x: Any, idx: Any, *, nsp: int, unique: bool = False) -> Any:
    """``out[..., j] = x[..., idx[..., j]]`` over the last ``nsp`` (flattened) axes."""
    x, idx = np.asarray(x), np.asarray(idx)
    lead = x.shape[: x.ndim - nsp]
    xf = _flat_lead(x, nsp)
    i = np.broadcast_to(_flat_lead(idx, nsp), lead + (math.prod(idx.shape[idx.ndim - nsp:]),))
    return np.take_along_axis(xf, i, axis=-1).reshape(lead + idx.shape[idx.ndim - nsp:])


@_pool_take.defvjp
def _(g: Tensor, x_shape: Ints, idx: Any, nsp: int,
      unique: bool = False) -> Any:  # adjoint: scatter-add
    return _pool_put(g, idx, size=tuple(x_shape[len(x_shape) - nsp:]), nsp=nsp,
                     unique=unique), None


@_pool_take.defjvp
def _(dx: Any, didx: Any, x: Any, idx: Any, *, out: Any, nsp: int,
      unique: bool = False) -> Any:  # linear in x
    return None if dx is None else _pool_take(dx, idx, nsp=nsp, unique=unique)


@_pool_take.defbatch
def _(batched: tuple[bool, ...], x: Any, idx: Any, *, nsp: int, unique: bool = False) -> Any:
    # leading axes are free: broadcast the unbatched one and run once
    x, idx = _broadcast_batch(batched, x, idx, nsp)
    return _pool_take(x, idx, nsp=nsp, unique=unique)


@defop("pool_put", saves=("idx",))
def _pool_put(g: Any, idx: Any, *, size: Ints, nsp: int, unique: bool = False) -> Any:
    """Zeros of spatial ``size`` with ``g[..., j]`` added at ``idx[..., j]``."""
    g, idx = np.asarray(g), np.asarray(idx)
    lead = g.shape[: g.ndim - nsp]
    p = math.prod(size)
    m = math.prod(lead)
    gi = _flat_lead(g, nsp).reshape(m, -1)
    ii = np.broadcast_to(_flat_lead(idx, nsp), lead + (gi.shape[1],)).reshape(m, -1)
    if unique:  # positions picked at most once (or written, not summed): no summing
        res = np.zeros((m, p), dtype=g.dtype)
        np.put_along_axis(res, ii, gi, axis=-1)
        return res.reshape(lead + tuple(size))
    lin = (ii + (np.arange(m, dtype=np.int64) * p)[:, None]).ravel()
    out = np.bincount(lin, weights=gi.ravel(), minlength=m * p).astype(g.dtype, copy=False)
    return out.reshape(lead + tuple(size))


@_pool_put.defvjp
def _(g: Tensor, idx: Any, size: Ints, nsp: int, unique: bool = False) -> Any:  # adjoint: gather
    return _pool_take(g, idx, nsp=nsp, unique=unique), None


@_pool_put.defjvp
def _(dg: Any, didx: Any, g: Any, idx: Any, *, out: Any, size: Ints, nsp: int,
      unique: bool = False) -> Any:
    return None if dg is None else _pool_put(dg, idx, size=size, nsp=nsp, unique=unique)


@_pool_put.defbatch
def _(batched: tuple[bool, ...], g: Any, idx: Any, *, size: Ints, nsp: int,
      unique: bool = False) -> Any:
    g, idx = _broadcast_batch(batched, g, idx, nsp)
    return _pool_put(g, idx, size=size, nsp=nsp, unique=unique)


def _broadcast_batch(batched: tuple[bool, ...], v: Any, idx: Any, nsp: int) -> tuple[Any, Any]:
    if batched[0] and not batched[1]:
        ia = data(idx)
        idx = make(np.broadcast_to(ia, (data(v).shape[0],) + ia.shape))
    elif batched[1] and not batched[0]:
        s = data(v).shape
        b = data(idx).shape[0]
        v = broadcast_to(reshape(v, (1,) + s), (b,) + s)
    return v, idx


_take_names = {1: _pool_take.variant("pool_take_1d"), 2: _pool_take,
               3: _pool_take.variant("pool_take_3d")}


def pool_take(x: Any, idx: Any, nsp: int, unique: bool = False) -> Tensor:
    """Values of ``x`` at flat spatial indices ``idx`` (what max pooling returns);
    ``unique``: no position is picked twice (so the adjoint need not sum)."""
    return _take_names.get(nsp, _pool_take)(x, idx, nsp=nsp, unique=unique)


_unpool_names = {n: _pool_put.variant(f"max_unpool_{n}d") for n in (1, 2, 3)}


def pool_put(g: Any, idx: Any, size: Ints, unique: bool = False) -> Tensor:
    """Scatter ``g`` at flat spatial indices ``idx`` into zeros of spatial ``size``: summed
    where an index repeats, or (``unique``) written, as max unpooling writes."""
    return _unpool_names.get(len(size), _pool_put)(g, idx, size=tuple(size), nsp=len(size),
                                                   unique=unique)


# ---------------------------------------------------------------- max pooling
def pool_argmax(x: Any, kernel: Ints, stride: Ints, padding: Pads, dilation: Ints,
                ceil_mode: bool = False) -> Any:
    """Flat index (into each input plane) of the first maximum of every window.

    NaN counts as the maximum.  ``x`` is ``(N, C, *spatial)``.  An array for a
    concrete ``x``; a tensor of the transform when ``x`` is a tracer (under ``vmap``
    the indices depend on each example's values).
    """
    if isinstance(x, Tensor) and x._lvl is not None:
        return _pool_argmax_op(x, kernel=kernel, stride=stride, padding=padding,
                               dilation=dilation, ceil_mode=ceil_mode)
    return _pool_argmax(data(x), kernel=kernel, stride=stride, padding=padding,
                        dilation=dilation, ceil_mode=ceil_mode)


def _pool_argmax(x: Any, *, kernel: Ints, stride: Ints, padding: Pads, dilation: Ints,
                 ceil_mode: bool) -> np.ndarray:
    xa = np.asarray(x)
    size = xa.shape[2:]
    nsp = len(kernel)
    out = pool_output_size(size, kernel, stride, padding, dilation, ceil_mode)
    if any(o <= 0 for o in out):
        raise hinted(RuntimeError(with_hint(
            f"Given input size: ({'x'.join(map(str, xa.shape[1:]))}). Calculated output size: "
            f"({'x'.join(map(str, (xa.shape[1],) + out))}). Output size is too small",
            f"kernel {list(kernel)} is larger than the padded input")))
    pads = _extra_high(size, kernel, stride, padding, dilation, out)
    fill = -np.inf if xa.dtype.kind == "f" else np.iinfo(xa.dtype).min
    xp = _pad_input(xa, pads, fill)
    # a running maximum over the kernel offsets (strided views of the input, no copy):
    # ``>`` keeps the first maximum, PyTorch's and TensorFlow's tie rule; a NaN always
    # takes over, as in PyTorch's kernel.  The winning offset is the last one that updated
    # the maximum, i.e. the largest ``j * updated_j``: kept as small integers with two
    # plain ufuncs per offset (a masked ``copyto`` costs about 3x as much)
    best: Any = None
    nk = math.prod(kernel)
    kdt = np.uint8 if nk <= 256 else np.int64
    k = np.zeros(xa.shape[:2] + tuple(out), dtype=kdt)
    t = np.empty_like(k)
    nan = xa.dtype.kind == "f" and bool(np.isnan(xa).any())
    for j, off in enumerate(itertools.product(*(range(kk) for kk in kernel))):
        v = xp[(slice(None), slice(None)) + tuple(
            slice(o * d, o * d + s * (m - 1) + 1, s)
            for o, d, s, m in zip(off, dilation, stride, out))]
        if best is None:
            best = np.array(v, copy=True)
            continue
        upd = np.greater(v, best)
        if nan:
            upd |= np.isnan(v)
            np.copyto(best, v, where=upd)
        else:
            np.maximum(best, v, out=best)
        np.multiply(upd.view(np.uint8), kdt(j), out=t)
        np.maximum(k, t, out=k)
    # flat index = the window start's flat index (a small table, broadcast) + the kernel
    # offset's flat step (the offset unravelled per axis: integer arithmetic, no gather)
    plane = [math.prod(size[ax + 1:]) for ax in range(nsp)]
    base = np.zeros(tuple(out), dtype=np.int64)
    for ax in range(nsp):
        shape = [1] * nsp
        shape[ax] = out[ax]
        base = base + ((np.arange(out[ax]) * stride[ax] - padding[ax][0]) * plane[ax]).reshape(
            shape)
    flat = np.empty(k.shape, dtype=np.int64)
    flat[...] = base
    rest = k
    for ax in reversed(range(nsp)):
        if kernel[ax] == 1:
            continue
        r = rest % kdt(kernel[ax]) if ax else rest
        if ax:
            rest = rest // kdt(kernel[ax])
        flat += r * np.int64(dilation[ax] * plane[ax])
    return flat


_pool_argmax_op = defop("pool_argmax")(_pool_argmax)
_pool_argmax_op.vjp = None  # type: ignore[assignment]  # integer indices: never recorded


@_pool_argmax_op.defbatch
def _(batched: tuple[bool, ...], x: Any, **attrs: Any) -> Any:
    # the examples' (N, C) planes are independent: fold the batch into N and run once
    s = data(x).shape
    y = _pool_argmax_op(reshape(x, (s[0] * s[1],) + s[2:]), **attrs)
    return reshape(y, s[:2] + data(y).shape[1:])


def max_pool(x: Any, kernel: Ints, stride: Ints, padding: Pads, dilation: Ints,
             ceil_mode: bool = False) -> tuple[Tensor, Any]:
    """Max pooling: the pooled values and the flat indices of the maxima (an array, or a
    tensor of the transform for a tracer ``x``).

    Examples
    --------
    >>> import numpy as np, tapegrad as tg
    >>> from tapegrad.ops.pool import max_pool
    >>> y, i = max_pool(tg.tensor(np.arange(16.0).reshape(1, 1, 4, 4)), (2, 2), (2, 2),
    ...                 ((0, 0), (0, 0)), (1, 1))
    >>> y._data[0, 0].tolist(), i[0, 0].tolist()
    ([[5.0, 7.0], [13.0, 15.0]], [[5, 7], [13, 15]])
    """
    idx = pool_argmax(x, kernel, stride, padding, dilation, ceil_mode)
    unique = all(s >= d * (k - 1) + 1 for k, s, d in zip(kernel, stride, dilation))
    return pool_take(x, idx, len(kernel), unique), idx


# ---------------------------------------------------------------- average pooling
def avg_divisor(size: Ints, kernel: Ints, stride: Ints, padding: Pads, out: Ints,
                count_include_pad: bool) -> np.ndarray:
    """Per output position, the number of elements averaged (PyTorch's rule: padding
    counts when ``count_include_pad``, the ceil-mode overhang never does)."""
    per_axis = []
    for n, k, s, (lo, hi), o in zip(size, kernel, stride, padding, out):
        start = np.arange(o) * s - lo
        end = np.minimum(start + k, n + hi)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        per_axis.append((end - start).astype(np.float64))
    div = per_axis[0]
    for a in per_axis[1:]:
        div = np.multiply.outer(div, a)
    return div


def _avg_div(size: Ints, kernel: Ints, stride: Ints, padding: Pads, out: Ints,
             count_include_pad: bool, divisor_override: int | None, dtype: Any) -> Any:
    if divisor_override:
        return np.asarray(float(divisor_override), dtype=dtype)
    return avg_divisor(size, kernel, stride, padding, out, count_include_pad).astype(dtype)


def _offsets(kernel: Ints, stride: Ints, out: Ints) -> Any:
    """For each kernel offset, the strided slice of the padded input it reads."""
    for off in itertools.product(*(range(k) for k in kernel)):
        yield (slice(None), slice(None)) + tuple(slice(o, o + s * (m - 1) + 1, s)
                                                 for o, s, m in zip(off, stride, out))


@defop("avg_pool", saves=("x_shape",))
def _avg_pool(x: Any, *, kernel: Ints, stride: Ints, padding: Pads, ceil_mode: bool,
              count_include_pad: bool, divisor_override: int | None) -> Any:
    """Window sums (strided views of the zero-padded input, one add per kernel offset)
    divided by PyTorch's divisor."""
    x = np.asarray(x)
    size = x.shape[2:]
    one = (1,) * len(kernel)
    out = pool_output_size(size, kernel, stride, padding, one, ceil_mode)
    xp = _pad_input(x, _extra_high(size, kernel, stride, padding, one, out))
    acc = np.zeros(x.shape[:2] + tuple(out), dtype=x.dtype)
    for sl in _offsets(kernel, stride, out):
        acc += xp[sl]
    acc /= _avg_div(size, kernel, stride, padding, out, count_include_pad, divisor_override,
                    x.dtype)
    return acc


@_avg_pool.defvjp
def _(g: Tensor, x_shape: Ints, **attrs: Any) -> Any:  # adjoint: spread g / divisor back
    return (_avg_pool_t(g, size=tuple(x_shape[2:]), **attrs),)


@_avg_pool.defjvp
def _(dx: Any, x: Any, *, out: Any, **attrs: Any) -> Any:  # linear
    return _avg_pool(dx, **attrs)


@_avg_pool.defbatch
def _(batched: tuple[bool, ...], x: Any, **attrs: Any) -> Any:
    s = data(x).shape
    y = _avg_pool(reshape(x, (s[0] * s[1],) + s[2:]), **attrs)
    return reshape(y, s[:2] + data(y).shape[1:])


@defop("avg_pool_backward")
def _avg_pool_t(g: Any, *, size: Ints, kernel: Ints, stride: Ints, padding: Pads,
                ceil_mode: bool, count_include_pad: bool, divisor_override: int | None) -> Any:
    """The adjoint of :func:`_avg_pool`: each window's ``g / divisor`` added back to its
    elements."""
    g = np.asarray(g)
    one = (1,) * len(kernel)
    out = tuple(g.shape[2:])
    gd = g / _avg_div(size, kernel, stride, padding, out, count_include_pad, divisor_override,
                      g.dtype)
    pads = _extra_high(size, kernel, stride, padding, one, out)
    padded = tuple(n + lo + hi for n, (lo, hi) in zip(size, pads))
    res = np.zeros(g.shape[:2] + padded, dtype=g.dtype)
    for sl in _offsets(kernel, stride, out):
        res[sl] += gd
    crop = (slice(None), slice(None)) + tuple(slice(lo, lo + n) for n, (lo, _) in
                                              zip(size, pads))
    return res[crop]


@_avg_pool_t.defvjp
def _(g: Tensor, size: Ints, **attrs: Any) -> Any:  # adjoint of the adjoint: the pooling
    return (_avg_pool(g, **attrs),)


@_avg_pool_t.defjvp
def _(dg: Any, g: Any, *, out: Any, **attrs: Any) -> Any:  # linear
    return _avg_pool_t(dg, **attrs)


@_avg_pool_t.defbatch
def _(batched: tuple[bool, ...], g: Any, **attrs: Any) -> Any:
    s = data(g).shape
    y = _avg_pool_t(reshape(g, (s[0] * s[1],) + s[2:]), **attrs)
    return reshape(y, s[:2] + data(y).shape[1:])


_avg_names = {1: _avg_pool.variant("avg_pool_1d"), 2: _avg_pool,
              3: _avg_pool.variant("avg_pool_3d")}


def avg_pool(x: Any, kernel: Ints, stride: Ints, padding: Pads, ceil_mode: bool = False,
             count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Average pooling (PyTorch's divisor rules; TensorFlow's 'SAME' is
    ``count_include_pad=False``).

    Examples
    --------
    >>> import numpy as np, tapegrad as tg
    >>> from tapegrad.ops.pool import avg_pool
    >>> avg_pool(tg.tensor(np.arange(4.0).reshape(1, 1, 2, 2)), (2, 2), (2, 2),
    ...          ((0, 0), (0, 0)))._data.ravel().tolist()
    [1.5]
    """
    xs = data(x).shape
    size, nsp = tuple(xs[2:]), len(kernel)
    out = pool_output_size(size, kernel, stride, padding, (1,) * nsp, ceil_mode)
    if any(o <= 0 for o in out):
        raise hinted(RuntimeError(with_hint(
            f"Given input size: ({'x'.join(map(str, xs[1:]))}). Calculated output size: "
            f"({'x'.join(map(str, (xs[1],) + out))}). Output size is too small",
            f"kernel {list(kernel)} is larger than the padded input")))
    return _avg_names.get(nsp, _avg_pool)(
        x, kernel=tuple(kernel), stride=tuple(stride), padding=tuple(padding),
        ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
        divisor_override=None if not divisor_override else int(divisor_override))


# ---------------------------------------------------------------- adaptive pooling
def adaptive_bounds(n: int, o: int) -> list[tuple[int, int]]:
    """PyTorch's adaptive windows: ``[floor(i n / o), ceil((i + 1) n / o))``."""
    return [((i * n) // o, -(-((i + 1) * n) // o)) for i in range(o)]


def _avg_matrix(n: int, o: int, dtype: np.dtype) -> np.ndarray:
    a = np.zeros((o, n), dtype=dtype)
    for i, (s, e) in enumerate(adaptive_bounds(n, o)):
        a[i, s:e] = 1.0 / (e - s)
    return a


def adaptive_avg_pool(x: Any, output_size: Ints) -> Tensor:
    """Adaptive average pooling: one averaging matrix per spatial axis (a linear resample,
    one node)."""
    from .resize import _resample

    xs = data(x).shape
    nsp = len(output_size)
    mats = tuple(_avg_matrix(xs[len(xs) - nsp + ax], int(output_size[ax]), data(x).dtype)
                 for ax in range(nsp))
    op = _adaptive_names.get(nsp)
    if op is None:
        op = _adaptive_names[nsp] = _resample.variant(f"adaptive_avg_pool_{nsp}d")
    return op(x, mats=mats, axes=tuple(range(-nsp, 0)))


_adaptive_names: dict[int, Any] = {}


def adaptive_max_pool(x: Any, output_size: Ints) -> tuple[Tensor, Any]:
    """Adaptive max pooling: values and flat indices (first maximum per window; a tensor
    of the transform for a tracer ``x``)."""
    nsp = len(output_size)
    osz = tuple(int(o) for o in output_size)
    if isinstance(x, Tensor) and x._lvl is not None:
        idx: Any = _adaptive_argmax_op(x, output_size=osz)
    else:
        idx = _adaptive_argmax(data(x), output_size=osz)
    op = _adaptive_max_names.get(nsp)
    if op is None:
        op = _adaptive_max_names[nsp] = _pool_take.variant(f"adaptive_max_pool_{nsp}d")
    return op(x, idx, nsp=nsp), idx


def _adaptive_argmax(x: Any, *, output_size: Ints) -> np.ndarray:
    """Flat index of the first maximum of each adaptive window (NaN counts as the maximum)."""
    xa = np.asarray(x)
    nsp = len(output_size)
    size = xa.shape[xa.ndim - nsp:]
    lead = xa.shape[: xa.ndim - nsp]
    bounds = [adaptive_bounds(n, int(o)) for n, o in zip(size, output_size)]
    idx = np.zeros(lead + tuple(int(o) for o in output_size), dtype=np.int64)
    for cell in itertools.product(*(range(int(o)) for o in output_size)):
        sl = tuple(slice(*bounds[a][c]) for a, c in enumerate(cell))
        win = xa[(Ellipsis,) + sl]
        wf = win.reshape(lead + (-1,))
        if wf.dtype.kind == "f":
            wf = np.where(np.isnan(wf), np.inf, wf)
        k = np.argmax(wf, axis=-1)
        loc = np.unravel_index(k, win.shape[len(lead):])
        flat = np.zeros(lead, dtype=np.int64)
        for a in range(nsp):
            flat = flat * size[a] + (loc[a] + bounds[a][cell[a]][0])
        idx[(Ellipsis,) + cell] = flat
    return idx


_adaptive_argmax_op = defop("adaptive_pool_argmax")(_adaptive_argmax)
_adaptive_argmax_op.vjp = None  # type: ignore[assignment]  # integer indices: never recorded


@_adaptive_argmax_op.defbatch
def _(batched: tuple[bool, ...], x: Any, *, output_size: Ints) -> Any:
    # the windows lie in the last axes: the batch is one more leading axis
    return _adaptive_argmax_op(x, output_size=output_size)


_adaptive_max_names: dict[int, Any] = {}


def global_pool_axes(ndim: int, channels_last: bool) -> tuple[int, ...]:
    """The spatial axes of an ``ndim``-d batch (for global pooling by a reduction)."""
    return tuple(range(1, ndim - 1)) if channels_last else tuple(range(2, ndim))

