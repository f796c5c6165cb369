"""Convolution, N-d (1-d, 2-d, 3-d ...): ``unfold``/``fold``, ``conv``, ``conv_transpose``.

Layout is channels-first throughout the core: input ``(N, C, *spatial)``,
convolution weight ``(O, C // groups, *kernel)``, transposed-convolution
weight ``(C_in, C_out // groups, *kernel)`` (PyTorch's layouts).  Front-ends
with channels-last data (TensorFlow) move the channel axis before calling.
Padding is explicit: one ``(low, high)`` pair per spatial axis, so each
front-end's 'same' rule (PyTorch and TensorFlow put the odd pixel on the high
side) is computed where its name is known.

Forward passes are im2col: a strided view of the padded input
(``sliding_window_view``), one copy into columns ``(N, C * K, L)``, one batched
matmul (over samples and groups; no Python loop over pixels or batch) whose
result is already the contiguous ``(N, O, *out)``.  The adjoint of im2col (col2im) loops over
the kernel offsets only.

The VJPs close over the four ops: ``conv``'s input gradient is a
``conv_transpose``, ``conv_transpose``'s is a ``conv``, and both weight
gradients are an ``unfold`` and a matmul; so every derivative is again made
of these ops, and differentiable to any order.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .._core.errors import hinted, with_hint
from .._core.mode import STATE as _STATE
from .._core.registry import defop
from .._core.tensor import Tensor
from . import _scratch
from ._raw import data, raw, wrap
from ._tf_eigen import EXACT_SUMS
from .elementwise import add
from .linalg import _matmul
from .reduce import sum as _sum
from .shape import broadcast_to, moveaxis, reshape, swapaxes

Pads = tuple[tuple[int, int], ...]
Ints = tuple[int, ...]

__all__ = ["unfold", "fold", "conv", "conv_transpose", "conv_output_size",
           "conv_transpose_output_size", "same_padding", "im2col", "col2im"]


# ---------------------------------------------------------------- shapes
def conv_output_size(size: Ints, kernel: Ints, stride: Ints, padding: Pads,
                     dilation: Ints) -> Ints:
    """Spatial output size of a convolution (floor rule)."""
    return tuple((n + lo + hi - d * (k - 1) - 1) // s + 1
                 for n, k, s, (lo, hi), d in zip(size, kernel, stride, padding, dilation))


def conv_transpose_output_size(size: Ints, kernel: Ints, stride: Ints, padding: Pads,
                               dilation: Ints, output_padding: Ints) -> Ints:
    """Spatial output size of a transposed convolution."""
    return tuple((n - 1) * s - lo - hi + d * (k - 1) + op + 1
                 for n, k, s, (lo, hi), d, op in zip(size, kernel, stride, padding, dilation,
                                                     output_padding))


def same_padding(size: Ints, kernel: Ints, stride: Ints, dilation: Ints) -> Pads:
    """TensorFlow's 'SAME' padding: output ``ceil(n / s)``, the odd pixel at the high side.

    With stride 1 this is also PyTorch's ``padding='same'``.
    """
    pads = []
    for n, k, s, d in zip(size, kernel, stride, dilation):
        out = -(-n // s)
        total = max((out - 1) * s + d * (k - 1) + 1 - n, 0)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


# ---------------------------------------------------------------- raw im2col / col2im
def _windows(xp: np.ndarray, kernel: Ints, stride: Ints, dilation: Ints, out: Ints) -> Any:
    """Strided view ``(N, C, *out, *kernel)`` of the padded input ``xp`` (no copy)."""
    nsp = len(kernel)
    ext = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    v = sliding_window_view(xp, ext, axis=tuple(range(2, 2 + nsp)))
    idx = (slice(None), slice(None)) + tuple(slice(0, s * (o - 1) + 1, s)
                                             for s, o in zip(stride, out)) \
        + tuple(slice(None, None, d) for d in dilation)
    return v[idx]


def _pad_input(x: np.ndarray, padding: Pads, value: float = 0.0) -> np.ndarray:
    if any(lo or hi for lo, hi in padding):
        return np.pad(x, ((0, 0), (0, 0)) + tuple(padding), constant_values=value)
    return x


def im2col(x: np.ndarray, kernel: Ints, stride: Ints, padding: Pads, dilation: Ints) -> Any:
    """Columns ``(N, C * prod(kernel), L)`` of ``x`` ``(N, C, *spatial)`` (PyTorch's unfold).

    Row order is channel-major, then kernel offsets; ``L`` is the number of output
    positions in row-major order.
    """
    x = np.asarray(x)
    out = conv_output_size(x.shape[2:], kernel, stride, padding, dilation)
    if any(o <= 0 for o in out):
        raise hinted(RuntimeError(with_hint(
            f"Calculated output size: ({', '.join(map(str, out))}). Output size is too small",
            f"input spatial size {list(x.shape[2:])}, kernel {list(kernel)}, padding "
            f"{[list(p) for p in padding]}, dilation {list(dilation)}")))
    nsp = len(kernel)
    w = _windows(_pad_input(x, padding), kernel, stride, dilation, out)
    n, c = x.shape[:2]
    # (N, C, *out, *k) -> (N, C, *k, *out): one copy, straight into the columns
    perm = (0, 1) + tuple(range(2 + nsp, 2 + 2 * nsp)) + tuple(range(2, 2 + nsp))
    wt = w.transpose(perm)
    cols = _scratch.empty(wt.shape, x.dtype)  # recycled memory: no fresh page faults
    np.copyto(cols, wt)
    return cols.reshape(n, c * math.prod(kernel), math.prod(out))


def col2im(cols: np.ndarray, size: Ints, kernel: Ints, stride: Ints, padding: Pads,
           dilation: Ints) -> Any:
    """The adjoint of :func:`im2col`: add each column entry back at its input position."""
    cols = np.asarray(cols)
    out = conv_output_size(size, kernel, stride, padding, dilation)
    n = cols.shape[0]
    kk = math.prod(kernel)
    c = cols.shape[1] // kk
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(size, padding))
    # batch-last columns (what :func:`_wt_times` makes): sum into batch-last memory too, so
    # each add runs over (output row, batch) as one long contiguous stretch instead of
    # many short output rows; the result is copied back to the contiguous (N, C, *size)
    nlast = cols.ndim == 3 and cols.strides[0] < min(abs(t) for t in cols.strides[1:])
    res = _scratch.empty((c,) + padded + (n,) if nlast else (n, c) + padded, cols.dtype)
    res.fill(0)
    if nlast:
        res = np.moveaxis(res, -1, 0)
    v = cols.reshape((n, c) + tuple(kernel) + tuple(out))
    for off in itertools.product(*(range(k) for k in kernel)):
        dst = (slice(None), slice(None)) + tuple(
            slice(o * d, o * d + s * (m - 1) + 1, s)
            for o, d, s, m in zip(off, dilation, stride, out))
        res[dst] += v[(slice(None), slice(None)) + off]
    crop = (slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in
                                              zip(size, padding))
    if any(lo or hi for lo, hi in padding):
        res = res[crop]
    return np.ascontiguousarray(res) if nlast else res


# ---------------------------------------------------------------- unfold / fold
def _batch_lead(batched: tuple[bool, ...], *vals: Any) -> tuple[int, list[Any]]:
    """The batch size, and each value with the batch broadcast in where it lacks one."""
    b = next(data(v).shape[0] for v, bt in zip(vals, batched) if bt)
    out = []
    for v, bt in zip(vals, batched):
        if not bt:
            v = broadcast_to(reshape(v, (1,) + data(v).shape), (b,) + data(v).shape)
        out.append(v)
    return b, out


@defop("unfold", saves=("x_shape",))
def _unfold(x: Any, *, kernel: Ints, stride: Ints, padding: Pads, dilation: Ints) -> Any:
    return im2col(x, kernel, stride, padding, dilation)


@_unfold.defvjp
def _(g: Tensor, x_shape: Ints, kernel: Ints, stride: Ints, padding: Pads,
      dilation: Ints) -> Any:  # adjoint of im2col: col2im
    return (_fold(g, size=tuple(x_shape[2:]), kernel=kernel, stride=stride, padding=padding,
                  dilation=dilation),)


@_unfold.defjvp
def _(dx: Any, x: Any, *, out: Any, **attrs: Any) -> Any:  # linear: the same op on the tangent
    return _unfold(dx, **attrs)


@_unfold.defbatch
def _(batched: tuple[bool, ...], x: Any, **attrs: Any) -> Any:  # batch folded into N
    s = data(x).shape
    y = _unfold(reshape(x, (s[0] * s[1],) + s[2:]), **attrs)
    return reshape(y, s[:2] + data(y).shape[1:])


@defop("fold")
def _fold(cols: Any, *, size: Ints, kernel: Ints, stride: Ints, padding: Pads,
          dilation: Ints) -> Any:
    return col2im(cols, size, kernel, stride, padding, dilation)


@_fold.defvjp
def _(g: Tensor, size: Ints, kernel: Ints, stride: Ints, padding: Pads,
      dilation: Ints) -> Any:  # adjoint of col2im: im2col
    return (_unfold(g, kernel=kernel, stride=stride, padding=padding, dilation=dilation),)


@_fold.defjvp
def _(dc: Any, cols: Any, *, out: Any, **attrs: Any) -> Any:  # linear
    return _fold(dc, **attrs)


@_fold.defbatch
def _(batched: tuple[bool, ...], cols: Any, **attrs: Any) -> Any:
    s = data(cols).shape
    y = _fold(reshape(cols, (s[0] * s[1],) + s[2:]), **attrs)
    return reshape(y, s[:2] + data(y).shape[1:])


def unfold(x: Any, kernel: Ints, stride: Ints, padding: Pads, dilation: Ints) -> Tensor:
    """Sliding local blocks as columns: ``(N, C, *S) -> (N, C * prod(kernel), L)``.

    Examples
    --------
    >>> import numpy as np, tapegrad as tg
    >>> from tapegrad.ops.conv import unfold
    >>> unfold(tg.tensor(np.arange(9.0).reshape(1, 1, 3, 3)), (2, 2), (1, 1),
    ...        ((0, 0), (0, 0)), (1, 1)).shape
    (1, 4, 4)
    """
    return _unfold(x, kernel=tuple(kernel), stride=tuple(stride), padding=tuple(padding),
                   dilation=tuple(dilation))


def fold(cols: Any, size: Ints, kernel: Ints, stride: Ints, padding: Pads,
         dilation: Ints) -> Tensor:
    """The adjoint of :func:`unfold`: sum columns back into ``(N, C, *size)``."""
    return _fold(cols, size=tuple(size), kernel=tuple(kernel), stride=tuple(stride),
                 padding=tuple(padding), dilation=tuple(dilation))


# ---------------------------------------------------------------- conv
# The raw kernels keep the batch as the leading axis of the columns (PyTorch's unfold
# layout ``(N, C * K, L)``): one batched matmul per product for the forward, the weight
# gradient and the input gradient, whose results are already in the ``(N, O, L)`` layout
# (no transposed copies of outputs or incoming gradients).
def _wmat(w: np.ndarray, groups: int) -> np.ndarray:
    """``(O, C/G, *k)`` as ``(O, C/G * K)`` or, grouped, ``(G, O/G, C/G * K)``."""
    o = w.shape[0]
    return w.reshape(groups, o // groups, -1) if groups > 1 else w.reshape(o, -1)


def _gsplit(m: np.ndarray, groups: int) -> np.ndarray:
    """``(N, R, L)`` as ``(N, G, R/G, L)`` (a view when ``m`` is contiguous)."""
    return m if groups == 1 else m.reshape(m.shape[0], groups, m.shape[1] // groups,
                                           m.shape[2])


def _wt_times(w: np.ndarray, g: np.ndarray, groups: int) -> np.ndarray:
    """``W^T g`` per sample: columns ``(N, C/G * K * G, L)`` from ``g`` ``(N, O, *S)`` and
    ``w`` ``(O, C/G, *k)``, as a view of batch-last memory ``(C * K, L, N)``: one GEMM
    (per group) over all samples, and the layout :func:`col2im` sums fastest."""
    n, o = g.shape[:2]
    gt = np.ascontiguousarray(np.moveaxis(g.reshape(n, o, -1), 0, -1))  # (O, L, N): small
    rows = gt.reshape(groups, o // groups, -1) if groups > 1 else gt.reshape(o, -1)
    wt = np.swapaxes(_wmat(w, groups), -1, -2)
    cols = np.matmul(wt, rows, out=_scratch.empty(wt.shape[:-1] + rows.shape[-1:],
                                                   np.result_type(wt, rows)))
    return np.moveaxis(cols.reshape(-1, gt.shape[1], n), -1, 0)


def _conv_raw(x: np.ndarray, w: np.ndarray, stride: Ints, padding: Pads, dilation: Ints,
              groups: int, kernel_impl: str = "") -> np.ndarray:
    """``W * x`` as a contiguous ``(N, O, *out)``."""
    kernel = w.shape[2:]
    out = conv_output_size(x.shape[2:], kernel, stride, padding, dilation)
    cols = im2col(x, kernel, stride, padding, dilation)
    y = _cols_product(cols, w, groups, kernel_impl)
    return y.reshape((x.shape[0], w.shape[0]) + tuple(out))


def _conv_t_raw(x: np.ndarray, w: np.ndarray, size: Ints, stride: Ints, padding: Pads,
                dilation: Ints, groups: int) -> np.ndarray:
    """``W^T x``: columns ``W^T x`` summed back by col2im into ``(N, C_out, *size)``."""
    return col2im(_wt_times(w, x, groups), size, w.shape[2:], stride, padding, dilation)


def _wgrad_raw(x: np.ndarray, g: np.ndarray, kernel: Ints, stride: Ints, padding: Pads,
               dilation: Ints, groups: int, wshape: Ints) -> np.ndarray:
    """``dW[o, c, k] = sum_{n,l} g[n, o, l] * im2col(x)[n, c k, l]`` (per group)."""
    cols = _gsplit(im2col(x, kernel, stride, padding, dilation), groups)
    gm = _gsplit(np.ascontiguousarray(g).reshape(g.shape[0], g.shape[1], -1), groups)
    return np.matmul(gm, np.swapaxes(cols, -1, -2)).sum(axis=0).reshape(wshape)


def _wgrad(x: Any, g: Any, kernel: Ints, stride: Ints, padding: Pads, dilation: Ints,
           groups: int, wshape: Ints) -> Tensor:
    """:func:`_wgrad_raw` in tapegrad ops (differentiable in ``x`` and ``g``)."""
    cols = _unfold(x, kernel=kernel, stride=stride, padding=padding, dilation=dilation)
    gs = data(g).shape
    cs = data(cols).shape
    gm = reshape(g, (gs[0], groups, gs[1] // groups, -1))
    cm = reshape(cols, (cs[0], groups, cs[1] // groups, cs[2]))
    dw = _sum(_matmul(gm, swapaxes(cm, -1, -2)), axis=0)
    return reshape(dw, wshape)


# TensorFlow's float32 CPU convolution (oneDNN's direct kernel), when
# ``_tf_eigen.EXACT_SUMS`` is on (off by default, for its cost): each output is one chain of
# fused multiply-adds from 0, over the kernel offsets (outer) and the input channels (inner)
# -- measured bit for bit on 1-d and 2-d convolutions, strides, dilations and paddings.  An
# FMA is emulated as the float64 product (exact) plus the float32 sum, rounded to float32 (a
# double rounding: a last-bit difference in about one sum in 10**8, none measured).  Past
# ``_TF_CONV_BUDGET`` multiply-adds the NumPy product is kept (a sequential chain costs
# about 4 ns a multiply-add here, against well under 0.1 ns for BLAS).
_TF_CONV_BUDGET = 1 << 22


def _tf_cols_product(cols: np.ndarray, w: np.ndarray) -> np.ndarray | None:
    """``W @ cols`` ``(N, O, L)`` in TensorFlow's float32 order, for ``cols``
    ``(N, C * K, L)`` (rows channel-major, then kernel offsets) and ``w`` ``(O, C, *k)``;
    None where not emulated (other dtypes, too large)."""
    if cols.dtype != np.float32 or w.dtype != np.float32:
        return None
    n, ck, ll = cols.shape
    o, c = w.shape[:2]
    k = ck // c if c else 0
    if n * o * ll * ck > _TF_CONV_BUDGET or ck == 0 or not EXACT_SUMS[0]:
        return None
    c64 = cols.reshape(n, c, k, ll).astype(np.float64)
    w64 = w.reshape(o, c, k).astype(np.float64)
    acc = np.zeros((n, o, ll), np.float32)
    t = np.empty((n, o, ll), np.float64)
    for j in range(k):
        for i in range(c):
            np.multiply(c64[:, i, j, None, :], w64[None, :, i, j, None], out=t)
            t += acc
            acc[...] = t
    return acc


def _cols_product(cols: np.ndarray, w: np.ndarray, groups: int, kernel: str) -> np.ndarray:
    """``W @ cols`` ``(N, O, L)`` (per group); ``kernel="tf"``: TensorFlow's float32 order."""
    if kernel and groups == 1:
        y = _tf_cols_product(cols, w)
        if y is not None:
            return y
    return np.matmul(_wmat(w, groups), _gsplit(cols, groups))


def _with_bias(y: np.ndarray, b: Any) -> np.ndarray:
    if b is None:
        return y
    b = np.asarray(b)
    return np.add(y, b.reshape((1, -1) + (1,) * (y.ndim - 2)), out=y) \
        if y.dtype == np.result_type(y, b) else y + b.reshape((1, -1) + (1,) * (y.ndim - 2))


def _bias_grad(g: Tensor) -> Tensor:
    axes = (0,) + tuple(range(2, g._data.ndim))
    if raw():
        return wrap(np.sum(g._data, axis=axes), g)
    return _sum(g, axis=axes)


def _bias_tangent(db: Any, shape: tuple[int, ...]) -> Any:
    return broadcast_to(reshape(db, (1, -1) + (1,) * (len(shape) - 2)), shape)


def _jvp_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``(dx, dw, db, x, w)`` from a JVP call's tangents and inputs (the bias is optional)."""
    n = len(args) // 2
    tang, vals = args[:n], args[n:]
    return tang[0], tang[1], (tang[2] if n > 2 else None), vals[0], vals[1]


def _add_bias_batched(y: Any, b: Any, bb: bool) -> Any:
    """``y`` (batch at axis 0, channels at 2) plus a bias that may carry the batch."""
    if b is None:
        return y
    nd = len(data(y).shape)
    if bb:
        return add(y, reshape(b, (data(b).shape[0], 1, -1) + (1,) * (nd - 3)))
    return add(y, reshape(b, (1, 1, -1) + (1,) * (nd - 3)))


@defop("conv", saves=("x", "w"), needs=True)
def _conv(x: Any, w: Any, b: Any = None, *, stride: Ints, padding: Pads, dilation: Ints,
          groups: int, kernel: str = "") -> Any:
    """``W * x + b``; ``b`` (one value per output channel) may be None.  The result is
    contiguous, as PyTorch's (what a layout-following kernel downstream, such as
    PyTorch's dropout mask, sees).  ``kernel="tf"``: float32 values in TensorFlow's
    order (the gradients keep NumPy's)."""
    return np.ascontiguousarray(_with_bias(_conv_raw(np.asarray(x), np.asarray(w), stride,
                                                     padding, dilation, groups, kernel), b))


@_conv.defvjp
def _(g: Tensor, x: Any, w: Any, stride: Ints, padding: Pads, dilation: Ints, groups: int,
      needs: tuple[bool, ...], kernel: str = "") -> Any:
    # y = W * x + b (linear in each): gx = W^T g (a transposed conv), gW = g x^T (on
    # columns), gb = g summed over batch and positions
    xs, ws = data(x).shape, data(w).shape
    gx = gw = None
    gb = _bias_grad(g) if len(needs) > 2 and needs[2] else None
    if raw():
        ga, xa, wa = g._data, data(x), data(w)
        if needs[0]:
            gx = wrap(_conv_t_raw(ga, wa, xs[2:], stride, padding, dilation, groups), g)
        if needs[1]:
            gw = wrap(_wgrad_raw(xa, ga, ws[2:], stride, padding, dilation, groups, ws), g)
        return gx, gw, gb
    if needs[0]:
        gx = _conv_t(g, w, size=tuple(xs[2:]), stride=stride, padding=padding,
                     dilation=dilation, groups=groups)
    if needs[1]:
        gw = _wgrad(x, g, tuple(ws[2:]), stride, padding, dilation, groups, ws)
    return gx, gw, gb


@_conv.defjvp
def _(*args: Any, out: Any, **attrs: Any) -> Any:
    # bilinear in (x, W), plus b: d(W * x + b) = W * dx + dW * x + db
    dx, dw, db, x, w = _jvp_args(args)
    t = _conv(dx, w, **attrs) if dx is not None else None
    if dw is not None:
        u = _conv(x, dw, **attrs)
        t = u if t is None else add(t, u)
    if db is not None:
        u = _bias_tangent(db, data(out).shape)
        t = u if t is None else add(t, u)
    return t


@_conv.defbatch
def _(batched: tuple[bool, ...], x: Any, w: Any, b: Any = None, *, stride: Ints,
      padding: Pads, dilation: Ints, groups: int, kernel: str = "") -> Any:
    bb = len(batched) > 2 and batched[2]
    if not batched[1]:  # only the input: the batch joins N
        s = data(x).shape
        y = _conv(reshape(x, (s[0] * s[1],) + s[2:]), w, None if bb else b, stride=stride,
                  padding=padding, dilation=dilation, groups=groups, kernel=kernel)
        y = reshape(y, s[:2] + data(y).shape[1:])
        return _add_bias_batched(y, b, True) if bb else y
    # batched weights: batch b's channels become groups b*G .. b*G + G - 1
    nb, (xb, wb) = _batch_lead(batched[:2], x, w)
    xs, ws = data(xb).shape, data(wb).shape
    xg = reshape(moveaxis(xb, 0, 1), (xs[1], nb * xs[2]) + xs[3:])
    wg = reshape(wb, (nb * ws[1],) + ws[2:])
    y = _conv(xg, wg, stride=stride, padding=padding, dilation=dilation, groups=nb * groups)
    ys = data(y).shape
    y = moveaxis(reshape(y, (ys[0], nb, ws[1]) + ys[2:]), 1, 0)
    return _add_bias_batched(y, b, bb)


@defop("conv_transpose", saves=("x", "w"), needs=True)
def _conv_t(x: Any, w: Any, b: Any = None, *, size: Ints, stride: Ints, padding: Pads,
            dilation: Ints, groups: int) -> Any:
    """``W^T x + b``; ``b`` (one value per output channel) may be None (contiguous)."""
    return np.ascontiguousarray(_with_bias(_conv_t_raw(np.asarray(x), np.asarray(w), size,
                                                       stride, padding, dilation, groups), b))


@_conv_t.defvjp
def _(g: Tensor, x: Any, w: Any, size: Ints, stride: Ints, padding: Pads, dilation: Ints,
      groups: int, needs: tuple[bool, ...]) -> Any:
    # y = W^T x: gx = W g (a conv), gW = x g^T on g's columns
    ws = data(w).shape
    gx = gw = None
    gb = _bias_grad(g) if len(needs) > 2 and needs[2] else None
    if raw():
        ga, xa, wa = g._data, data(x), data(w)
        if needs[0]:
            gx = wrap(_conv_raw(ga, wa, stride, padding, dilation, groups), g)
        if needs[1]:
            gw = wrap(_wgrad_raw(ga, xa, ws[2:], stride, padding, dilation, groups, ws), g)
        return gx, gw, gb
    if needs[0]:
        gx = _conv(g, w, stride=stride, padding=padding, dilation=dilation, groups=groups)
    if needs[1]:
        gw = _wgrad(g, x, tuple(ws[2:]), stride, padding, dilation, groups, ws)
    return gx, gw, gb


@_conv_t.defjvp
def _(*args: Any, out: Any, **attrs: Any) -> Any:  # bilinear in (x, W), plus b
    dx, dw, db, x, w = _jvp_args(args)
    t = _conv_t(dx, w, **attrs) if dx is not None else None
    if dw is not None:
        u = _conv_t(x, dw, **attrs)
        t = u if t is None else add(t, u)
    if db is not None:
        u = _bias_tangent(db, data(out).shape)
        t = u if t is None else add(t, u)
    return t


@_conv_t.defbatch
def _(batched: tuple[bool, ...], x: Any, w: Any, b: Any = None, *, size: Ints, stride: Ints,
      padding: Pads, dilation: Ints, groups: int) -> Any:
    kw: dict[str, Any] = dict(size=size, stride=stride, padding=padding, dilation=dilation)
    bb = len(batched) > 2 and batched[2]
    if not batched[1]:
        s = data(x).shape
        y = _conv_t(reshape(x, (s[0] * s[1],) + s[2:]), w, None if bb else b, groups=groups,
                    **kw)
        y = reshape(y, s[:2] + data(y).shape[1:])
        return _add_bias_batched(y, b, True) if bb else y
    nb, (xb, wb) = _batch_lead(batched[:2], x, w)
    xs, ws = data(xb).shape, data(wb).shape
    xg = reshape(moveaxis(xb, 0, 1), (xs[1], nb * xs[2]) + xs[3:])
    wg = reshape(wb, (nb * ws[1],) + ws[2:])
    y = _conv_t(xg, wg, groups=nb * groups, **kw)
    ys = data(y).shape
    y = moveaxis(reshape(y, (ys[0], nb, ys[1] // nb) + ys[2:]), 1, 0)
    return _add_bias_batched(y, b, bb)


# ---------------------------------------------------------------- conv as columns + matmul
# What ``conv`` records when it is differentiated: the columns are made once, in the
# forward pass (an ``unfold``, PyTorch's ``(N, C * K, L)`` layout), and saved for the
# weight gradient (as hand-written im2col code keeps them), instead of being rebuilt from
# the input in the backward pass.  Keeping the batch as the leading axis makes every
# product a batched matmul whose result is already in PyTorch's contiguous ``(N, O, L)``
# layout: no transposed copies of the output or of the incoming gradient (measured faster
# than the ``(C * K, N * L)`` single-matrix form for the W8 shapes: forward 0.41 ms vs 0.71,
# weight gradient 0.14 vs 0.84, input gradient 0.15 vs 0.70 for conv1).
@defop("conv_cols", saves=("cols", "w"), needs=True)
def _conv_cols(cols: Any, w: Any, b: Any = None, *, spatial: Ints, groups: int,
               kernel: str = "") -> Any:
    """``W @ cols (+ b)`` as ``(N, O, *out)`` (contiguous, PyTorch's layout): the
    convolution of the input ``cols`` ``(N, C * K, L)`` came from.  ``kernel="tf"``:
    float32 values in TensorFlow's order (the gradients keep NumPy's)."""
    cols, w = np.asarray(cols), np.asarray(w)
    n, o = cols.shape[0], w.shape[0]
    y = _cols_product(cols, w, groups, kernel).reshape(n, o, -1)
    if b is not None:
        bb = np.asarray(b).reshape(o, 1)
        if y.dtype == np.result_type(y, bb):
            y += bb
        else:
            y = y + bb
    return y.reshape((n, o) + tuple(spatial))


@_conv_cols.defvjp
def _(g: Tensor, cols: Any, w: Any, spatial: Ints, groups: int,
      needs: tuple[bool, ...], kernel: str = "") -> Any:
    # y = W cols + b: gcols = W^T g, gW = sum_n g cols^T, gb = g summed (per group)
    ws = data(w).shape
    o = ws[0]
    gc = gw = None
    if raw():
        ga = g._data
        gm = ga.reshape(ga.shape[0], o, -1)  # (N, O, L)
        gb = wrap(gm.sum(axis=(0, 2)), g) if len(needs) > 2 and needs[2] else None
        gg = _gsplit(gm, groups)
        if needs[0]:  # batch-last, for the col2im of the unfold's adjoint
            gc = wrap(_wt_times(data(w), ga, groups), g)
        if needs[1]:
            dw = np.matmul(gg, np.swapaxes(_gsplit(data(cols), groups), -1, -2))
            gw = wrap(dw.sum(axis=0).reshape(ws), g)
        return gc, gw, gb
    gb = _bias_grad(g) if len(needs) > 2 and needs[2] else None
    n = data(g).shape[0]
    rows = reshape(g, (n, groups, o // groups, -1) if groups > 1 else (n, o, -1))
    if needs[0]:
        wm = reshape(w, (groups, o // groups, -1) if groups > 1 else (o, -1))
        gct = _matmul(swapaxes(wm, -1, -2), rows)
        gc = reshape(gct, (n, -1, data(gct).shape[-1])) if groups > 1 else gct
    if needs[1]:
        cs = data(cols).shape
        cm = cols if groups == 1 else reshape(cols, (cs[0], groups, cs[1] // groups, cs[2]))
        gw = reshape(_sum(_matmul(rows, swapaxes(cm, -1, -2)), axis=0), ws)
    return gc, gw, gb


@_conv_cols.defjvp
def _(*args: Any, out: Any, **attrs: Any) -> Any:  # bilinear in (cols, W), plus b
    dc, dw, db, c, w = _jvp_args(args)
    t = _conv_cols(dc, w, **attrs) if dc is not None else None
    if dw is not None:
        u = _conv_cols(c, dw, **attrs)
        t = u if t is None else add(t, u)
    if db is not None:
        u = _bias_tangent(db, data(out).shape)
        t = u if t is None else add(t, u)
    return t


@_conv_cols.defbatch
def _(batched: tuple[bool, ...], cols: Any, w: Any, b: Any = None, **attrs: Any) -> Any:
    bb = len(batched) > 2 and batched[2]
    if not batched[1]:  # only the columns: the batch joins N
        s = data(cols).shape
        y = _conv_cols(reshape(cols, (s[0] * s[1],) + s[2:]), w, None if bb else b, **attrs)
        y = reshape(y, s[:2] + data(y).shape[1:])
        return _add_bias_batched(y, b, True) if bb else y
    # batched weights: one product per batch element
    from .shape import stack

    nb = next(data(v).shape[0] for v, bt in zip((cols, w, b), batched) if bt)
    args = [v for v in (cols, w, b) if v is not None]
    bt = batched[: len(args)]
    return stack([_conv_cols(*[a[i] if f else a for a, f in zip(args, bt)], **attrs)
                  for i in range(nb)])


def _check_conv(xs: Ints, ws: Ints, groups: int, transposed: bool) -> None:
    nsp = len(ws) - 2
    if len(xs) != nsp + 2:
        raise hinted(RuntimeError(with_hint(
            f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to conv{nsp}d, but "
            f"got input of size: {list(xs)}", f"the weight has shape {list(ws)}")))
    cin = ws[0] if transposed else ws[1] * groups
    if xs[1] != cin:
        if transposed:
            msg = (f"Given transposed=1, weight of size {list(ws)}, expected input{list(xs)} "
                   f"to have {ws[0]} channels, but got {xs[1]} channels instead")
        else:
            msg = (f"Given groups={groups}, weight of size {list(ws)}, expected input"
                   f"{list(xs)} to have {cin} channels, but got {xs[1]} channels instead")
        raise hinted(RuntimeError(with_hint(msg, f"the input has {xs[1]} channels")))


def conv(x: Any, w: Any, stride: Ints, padding: Pads, dilation: Ints, groups: int = 1,
         bias: Any = None, *, kernel: str = "") -> Tensor:
    """N-d convolution (cross-correlation, as in both frameworks), channels first.

    Parameters
    ----------
    x : ``(N, C, *spatial)``
    w : ``(O, C // groups, *kernel)``
    bias : ``(O,)`` or None (added inside the op: one node, as in both frameworks)
    kernel : ``"tf"``: float32 values in TensorFlow's CPU order (one fused multiply-add
        chain per output over kernel offsets, then input channels)
    stride, dilation : one int per spatial axis
    padding : one ``(low, high)`` pair per spatial axis

    Examples
    --------
    >>> import numpy as np, tapegrad as tg
    >>> from tapegrad.ops.conv import conv
    >>> y = conv(tg.tensor(np.ones((1, 1, 4, 4))), tg.tensor(np.ones((2, 1, 3, 3))),
    ...          (1, 1), ((1, 1), (1, 1)), (1, 1))
    >>> y.shape, float(y._data[0, 0, 1, 1])
    ((1, 2, 4, 4), 9.0)
    """
    xs, ws = data(x).shape, data(w).shape
    _check_conv(xs, ws, groups, False)
    st, pd, dl = tuple(stride), tuple(padding), tuple(dilation)
    tracked = _STATE.grad_enabled and (bool(_STATE.tapes) or any(
        isinstance(v, Tensor) and (v._rg or v._node is not None) for v in (x, w, bias)))
    if tracked:
        # recorded as columns + product: the columns are kept for the weight gradient
        out = conv_output_size(xs[2:], ws[2:], st, pd, dl)
        cols = _unfold(x, kernel=tuple(ws[2:]), stride=st, padding=pd, dilation=dl)
        kw: dict[str, Any] = dict(spatial=out, groups=int(groups))
        if kernel:
            kw["kernel"] = kernel
        return _conv_cols(cols, w, **kw) if bias is None else _conv_cols(cols, w, bias, **kw)
    attrs: dict[str, Any] = dict(stride=st, padding=pd, dilation=dl, groups=int(groups))
    if kernel:
        attrs["kernel"] = kernel
    return _conv(x, w, **attrs) if bias is None else _conv(x, w, bias, **attrs)


def conv_transpose(x: Any, w: Any, stride: Ints, padding: Pads, dilation: Ints,
                   output_padding: Ints, groups: int = 1, bias: Any = None) -> Tensor:
    """N-d transposed convolution (the input gradient of :func:`conv`), channels first.

    ``w`` is ``(C_in, C_out // groups, *kernel)``; ``output_padding`` adds to
    the high side of each output axis.
    """
    xs, ws = data(x).shape, data(w).shape
    _check_conv(xs, ws, groups, True)
    size = conv_transpose_output_size(xs[2:], ws[2:], tuple(stride), tuple(padding),
                                      tuple(dilation), tuple(output_padding))
    attrs: dict[str, Any] = dict(size=size, stride=tuple(stride), padding=tuple(padding),
                                 dilation=tuple(dilation), groups=int(groups))
    return _conv_t(x, w, **attrs) if bias is None else _conv_t(x, w, bias, **attrs)
