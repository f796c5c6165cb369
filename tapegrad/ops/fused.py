"""Fused primitives: ops a core composite could express, recorded as one node.

The frameworks record these as one node each (``VarBackward0``,
``SoftplusBackward0``, ``MseLossBackward0``, TensorFlow's ``Relu6``...), so
both front-ends and the core use the one primitive here, with each
framework's convention as an attribute where they differ (``softplus``'s
``threshold=None`` is TensorFlow's; ``var``'s ``correction``; the losses'
``reduction``).  Every VJP is written in tapegrad ops (differentiable to any
order); each op carries its JVP and batching rule too.  PyTorch's rounding
(recorded, zero gradient) and TensorFlow's ``pow`` gradient (0 for the
exponent where the base is not positive) are separate primitives beside the
core's non-differentiable rounding and PyTorch-convention ``power``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.registry import defop
from .._core.tensor import Tensor, make
from . import _batch as _b
from ._raw import data as _data
from ._raw import raw, wrap
from ._tf_eigen import exp_f32, log1p_f32, sigmoid_f32
from ._tf_softmax import _ftz
from .elementwise import (
    _power_dx_raw,
    _tadd,
    add,
    cast,
    divide,
    erf,
    exp,
    greater,
    less,
    log,
    log1p,
    logical_and,
    multiply,
    negative,
    sigmoid,
    square,
    subtract,
    where,
)
from .elementwise import add as _add_op
from .linalg import _matmul as _mm_op
from .linalg import matmul_batch
from .reduce import mean as _mean
from .reduce import sum as _sum
from .shape import _transpose, broadcast_to, index_add_zeros, reshape


def _expand_back(g: Any, shape: tuple[int, ...], axis: tuple[int, ...] | None,
                 keepdims: bool) -> Tensor:
    """Broadcast a reduced ``g`` back to ``shape``."""
    if not keepdims and axis:
        kept = tuple(1 if i in axis else s for i, s in enumerate(shape))
        g = reshape(g, kept)
    return broadcast_to(g, shape)


def _reduced(a: np.ndarray, axis: tuple[int, ...] | None) -> int:
    if axis is None:
        return int(a.size)
    return int(np.prod([a.shape[i] for i in axis])) if axis else 1


# ----------------------------------------------------------------------------- var / std
@defop("var", saves=("x",))
def var_op(x: Any, *, axis: tuple[int, ...] | None, correction: float, keepdims: bool) -> Any:
    x = np.asarray(x)
    with np.errstate(all="ignore"):
        return np.asarray(np.var(x, axis=axis, ddof=correction, keepdims=keepdims))


@var_op.defvjp
def _(g: Tensor, x: Tensor, axis: Any, correction: float, keepdims: bool) -> Any:
    # dx = g * 2 (x - mean) / (n - correction)
    n = _reduced(x._data, axis)
    centred = subtract(x, _mean(x, axis=axis, keepdims=True))
    ge = _expand_back(g, x._data.shape, axis, keepdims)
    return (multiply(ge, multiply(centred, 2.0 / (n - correction) if n != correction
                                  else math.inf)),)


@defop("std", saves=("x", "out"))
def std_op(x: Any, *, axis: tuple[int, ...] | None, correction: float, keepdims: bool) -> Any:
    x = np.asarray(x)
    with np.errstate(all="ignore"):
        return np.asarray(np.std(x, axis=axis, ddof=correction, keepdims=keepdims))


@std_op.defvjp
def _(g: Tensor, x: Tensor, out: Tensor, axis: Any, correction: float, keepdims: bool) -> Any:
    # dx = g * (x - mean) / ((n - correction) * std)
    n = _reduced(x._data, axis)
    shape = x._data.shape
    centred = subtract(x, _mean(x, axis=axis, keepdims=True))
    denom = multiply(_expand_back(out, shape, axis, keepdims), float(n - correction))
    return (divide(multiply(_expand_back(g, shape, axis, keepdims), centred), denom),)


# ----------------------------------------------------------------------------- activations
_SQRT1_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_erf_u = np.frompyfunc(math.erf, 1, 1)


def _np_erf(a: np.ndarray) -> np.ndarray:
    return np.asarray(_erf_u(a), dtype=np.float64)


@defop("gelu", saves=("x",))
def gelu_op(x: Any, *, approximate: str) -> Any:
    a = np.asarray(x)
    af = a.astype(np.float64)
    if approximate == "tanh":
        c = math.sqrt(2.0 / math.pi)
        r = 0.5 * af * (1.0 + np.tanh(c * (af + 0.044715 * af ** 3)))
    else:
        r = 0.5 * af * (1.0 + _np_erf(af * _SQRT1_2))
    return r.astype(a.dtype, copy=False)


@gelu_op.defvjp
def _(g: Tensor, x: Tensor, approximate: str) -> Any:
    if approximate == "tanh":
        # d/dx [x/2 (1 + tanh(u))], u = c (x + 0.044715 x^3)
        c = math.sqrt(2.0 / math.pi)
        x3 = multiply(multiply(x, x), x)
        u = multiply(add(x, multiply(x3, 0.044715)), c)
        t = sigmoid(multiply(u, 2.0))
        t = subtract(multiply(t, 2.0), 1.0)  # tanh(u) written with sigmoid
        du = multiply(add(multiply(multiply(x, x), 3 * 0.044715), 1.0), c)
        d = add(multiply(add(t, 1.0), 0.5),
                multiply(multiply(x, 0.5), multiply(subtract(1.0, multiply(t, t)), du)))
        return (multiply(g, d),)
    # Phi(x) + x phi(x)
    cdf = multiply(add(erf(multiply(x, _SQRT1_2)), 1.0), 0.5)
    pdf = multiply(exp(multiply(multiply(x, x), -0.5)), _INV_SQRT_2PI)
    return (multiply(g, add(cdf, multiply(x, pdf))),)


@defop("softplus", saves=("x",))
def softplus_op(x: Any, *, beta: float, threshold: float | None) -> Any:
    """``log(1 + exp(beta x)) / beta``; PyTorch's convention is linear above ``threshold``
    (``beta x > threshold``), TensorFlow's (``threshold=None``, ``beta=1``) is
    ``log(exp(x) + 1)`` everywhere, computed as TensorFlow's kernel does."""
    a = np.asarray(x)
    if threshold is None and beta == 1:
        if a.dtype == np.float32 and a.size:
            return _softplus_tf_f32(a)
        return np.logaddexp(np.zeros((), dtype=a.dtype), a)
    with np.errstate(all="ignore"):
        bx = a * beta
        sp = (np.log1p(np.exp(-np.abs(bx))) + np.maximum(bx, 0)) / beta
        if threshold is None:
            return sp.astype(a.dtype, copy=False)
        return np.where(bx > threshold, a, sp).astype(a.dtype, copy=False)


# TensorFlow's Softplus kernel's thresholds: log(float32 epsilon) + 2
_SOFTPLUS_TF_LO = np.float32(np.log(np.finfo(np.float32).eps)) + np.float32(2)


def _softplus_tf_f32(a: np.ndarray) -> np.ndarray:
    """TensorFlow's float32 ``Softplus`` kernel, bit for bit: ``x`` above ``-lo``,
    ``exp(x)`` below ``lo``, ``log1p(exp(x))`` between (its Exp and Log1p kernels)."""
    e = exp_f32(a)
    with np.errstate(all="ignore"):
        mid = log1p_f32(e)
    return np.where(a > -_SOFTPLUS_TF_LO, a, np.where(a < _SOFTPLUS_TF_LO, e, mid))


@softplus_op.defvjp
def _(g: Tensor, x: Tensor, beta: float, threshold: float | None) -> Any:
    # sigmoid(beta x) below the threshold, 1 above it
    bx = multiply(x, beta) if beta != 1 else x
    if threshold is None:  # TensorFlow's SoftplusGrad: g * sigmoid(x), its Sigmoid kernel
        if raw() and x.dtype == np.float32:  # the product flushed to zero (FTZ), as there
            return (wrap(_ftz(np.multiply(g._data, sigmoid_f32(x._data))), g),)
        return (multiply(g, sigmoid(bx, kernel="tf")),)
    return (multiply(g, where(greater(bx, threshold), 1.0, sigmoid(bx))),)


# ----------------------------------------------------------------------------- losses
def _reduce_np(v: np.ndarray, reduction: str) -> np.ndarray:
    if reduction == "mean":
        return np.asarray(np.mean(v)).astype(v.dtype, copy=False)
    if reduction == "sum":
        return np.asarray(np.sum(v))
    return v


def _reduce_back(g: Tensor, shape: tuple[int, ...], reduction: str) -> Tensor:
    if reduction == "none":
        return g
    g = broadcast_to(g, shape)
    if reduction == "mean":
        n = int(np.prod(shape)) if shape else 1
        g = divide(g, float(max(n, 1)))
    return g


@defop("mse_loss", saves=("x", "y"), needs=True)
def mse_loss_op(x: Any, y: Any, *, reduction: str) -> Any:
    d = np.subtract(x, y)
    return _reduce_np(d * d, reduction)


@mse_loss_op.defvjp
def _(g: Tensor, x: Any, y: Any, reduction: str, needs: tuple[bool, ...]) -> Any:
    # d (x - y)^2 = 2 (x - y) (dx - dy)
    shape = np.broadcast_shapes(np.shape(x._data if isinstance(x, Tensor) else x),
                                np.shape(y._data if isinstance(y, Tensor) else y))
    gx = multiply(_reduce_back(g, shape, reduction), multiply(subtract(x, y), 2.0))
    return (gx if needs[0] else None), (negative(gx) if needs[1] else None)


@defop("l1_loss", saves=("x", "y"), needs=True)
def l1_loss_op(x: Any, y: Any, *, reduction: str) -> Any:
    return _reduce_np(np.abs(np.subtract(x, y)), reduction)


@l1_loss_op.defvjp
def _(g: Tensor, x: Any, y: Any, reduction: str, needs: tuple[bool, ...]) -> Any:
    from .elementwise import sign

    shape = np.broadcast_shapes(np.shape(x._data if isinstance(x, Tensor) else x),
                                np.shape(y._data if isinstance(y, Tensor) else y))
    gx = multiply(_reduce_back(g, shape, reduction), sign(subtract(x, y)))
    return (gx if needs[0] else None), (negative(gx) if needs[1] else None)


@defop("nll_loss", saves=("x_shape",))
def nll_loss_op(x: Any, *, target: np.ndarray, weight: np.ndarray | None, ignore_index: int,
                reduction: str) -> Any:
    # x: (N, C, ...) log-probabilities or (C,) ; target: (N, ...) or ()
    x = np.asarray(x)
    idx, w = _nll_index(x.shape, target, weight, ignore_index)
    picked = -x[idx] * w
    if reduction == "none":
        return picked.reshape(target.shape).astype(x.dtype, copy=False)
    if reduction == "sum":
        return np.asarray(picked.sum(), dtype=x.dtype)
    with np.errstate(all="ignore"):
        return np.asarray(picked.sum() / w.sum(), dtype=x.dtype)


def _nll_index(shape: tuple[int, ...], target: np.ndarray, weight: np.ndarray | None,
               ignore_index: int) -> tuple[Any, np.ndarray]:
    """Index of each target's entry in ``x`` and its weight (0 where ignored)."""
    t = target.reshape(-1)
    valid = t != ignore_index
    every = bool(valid.all())
    tc = t if every else np.where(valid, t, 0)
    if len(shape) == 1:
        idx: Any = (tc,)
    elif len(shape) == 2:
        idx = (np.arange(shape[0]), tc)
    else:
        n = shape[0]
        rest = shape[2:]
        grids = np.indices((n,) + rest).reshape(1 + len(rest), -1)
        idx = (grids[0], tc) + tuple(grids[1:])
    w = np.ones(t.shape, dtype=np.float64) if weight is None else weight[tc].astype(np.float64)
    if not every:
        w = np.where(valid, w, 0.0)
    return idx, w


@nll_loss_op.defvjp
def _(g: Tensor, x_shape: tuple[int, ...], target: np.ndarray, weight: Any, ignore_index: int,
      reduction: str) -> Any:
    # the gradient goes to each target's log-probability, -w_i (/ sum w for "mean")
    idx, w = _nll_index(x_shape, target, weight, ignore_index)
    dt = g._data.dtype
    if raw():
        # each index appears once: a gather-add-scatter into zeros, no ufunc.at
        if reduction == "mean":
            tot = w.sum()
            c = (-w / tot if tot else -w * np.nan).astype(dt)
        else:
            c = (-w).astype(dt)
        ga = g._data
        gi = np.multiply(ga.reshape(-1) if reduction == "none" else ga, c)
        out = np.zeros(x_shape, dtype=gi.dtype)
        out[idx] += gi
        return (wrap(out, g),)
    coef = make(-w.astype(dt))
    if reduction == "none":
        gi = multiply(reshape(g, (-1,)), coef)
    else:
        if reduction == "mean":
            tot = w.sum()
            coef = make((-w / tot if tot else -w * np.nan).astype(dt))
        gi = multiply(broadcast_to(g, coef._data.shape), coef)
    return (index_add_zeros(gi, index=idx, shape=x_shape),)


nll_loss2d_op = nll_loss_op.variant("nll_loss2d")


# --------------------------------------------------------- nll with the targets as an input
# Under a transform the targets can be a tracer (per-example labels under vmap), whose
# values the front-end cannot read to build nll_loss's index.  These two ops take them as
# an input instead: the forward sees the real (batched) values, so the pick, the weights
# and the bounds check run in NumPy, and a batch of examples is one call (``lead`` leading
# axes are the batch: each example is reduced on its own).  The VJP is the other op (each
# is the other's transpose), so every derivative order stays one op per node.  The
# reductions are nll_loss_op's (ATen's) arithmetic, accumulated in double and rounded once,
# per example under vmap: a traced call gives the eager bits and vmap the loop's (PyTorch's
# own vmap decomposes nll_loss into float ops, which can differ in the last bit).
def _nll_pick(t: np.ndarray, c: int, weight: Any, ignore_index: int | None, check: Any,
              lead: int, dim: int, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each target's class (0 where ignored) and its weight in ``dtype`` (0 where ignored).

    A class outside ``[0, c)`` raises ``check(valid_targets, c, lead, dim)`` when given (a
    front-end's error; ``dim`` is the class axis of the input with its ``lead`` batch
    axes), else PyTorch's ``IndexError``.
    """
    valid: np.ndarray | None = None
    if ignore_index is not None:
        valid = np.not_equal(t, ignore_index)
        if valid.all():
            valid = None
    tc = t if valid is None else np.where(valid, t, 0)
    if tc.size:
        lo, hi = tc.min(), tc.max()
        if lo < 0 or hi >= c:
            if check is not None:
                check(t if valid is None else t[valid], c, lead, dim)
            bad = int(hi) if hi >= c else int(lo)
            raise hinted(IndexError(with_hint(f"Target {bad} is out of bounds.",
                                              f"class indices must be in [0, {c - 1}]")))
    w = np.ones(t.shape, dtype) if weight is None else np.asarray(weight)[tc].astype(dtype)
    if valid is not None:
        w = np.where(valid, w, np.zeros((), dtype))
    return tc, w


def _nll_shapes(xs: tuple[int, ...], ts: tuple[int, ...], axis: int, lead: int) -> None:
    """PyTorch's error for targets whose shape is not the input's without the class axis."""
    ax = lead + axis
    want = xs[:ax] + xs[ax + 1:]
    if ts != want:
        raise hinted(RuntimeError(with_hint(
            f"Expected target size {list(want[lead:])}, got {list(ts[lead:])}",
            f"input {list(xs[lead:])}: targets are one class index per sample")))


@defop("nll_loss_traced", saves=("x_shape", "target"))
def nll_traced_op(x: Any, target: Any, *, axis: int, lead: int, weight: np.ndarray | None,
                  ignore_index: int | None, reduction: str, check: Any = None) -> Any:
    """``nll_loss`` of log-probabilities ``x`` at integer ``target`` (an input, not an
    attribute); the class axis is ``axis`` of each example, ``lead`` leading axes a batch."""
    x = np.asarray(x)
    t = np.asarray(target)
    _nll_shapes(x.shape, t.shape, axis, lead)
    ax = lead + axis
    if reduction != "none":
        # nll_loss_op's arithmetic (ATen's double accumulation), per example under vmap:
        # a traced call (torch.compile) gives the eager bits, and vmap the loop's
        tc, w = _nll_pick(t, x.shape[ax], weight, ignore_index, check, lead, ax, np.float64)
        rows = t.shape[:lead] + (-1,)
        picked = np.take_along_axis(x, np.expand_dims(tc, ax), ax).reshape(rows)
        tot64 = (-picked * w.reshape(rows)).sum(axis=-1)
        if reduction == "sum":
            return np.asarray(tot64, dtype=x.dtype)
        with np.errstate(all="ignore"):
            return np.asarray(tot64 / w.reshape(rows).sum(axis=-1), dtype=x.dtype)
    tc, w = _nll_pick(t, x.shape[ax], weight, ignore_index, check, lead, ax, x.dtype)
    picked = np.take_along_axis(x, np.expand_dims(tc, ax), ax).reshape(t.shape)
    per = np.multiply(np.negative(picked), w)
    if reduction == "none":
        return per
    rows = t.shape[:lead] + (-1,)
    tot = np.sum(per.reshape(rows), axis=-1)
    if reduction == "sum":
        return tot
    with np.errstate(all="ignore"):
        return np.divide(tot, np.sum(w.reshape(rows), axis=-1))


@defop("nll_loss_traced_backward", saves=("target",))
def nll_traced_backward(g: Any, target: Any, *, shape: tuple[int, ...], axis: int, lead: int,
                        weight: np.ndarray | None, ignore_index: int | None, reduction: str,
                        check: Any = None) -> Any:
    """The VJP of :func:`nll_traced_op`: ``-w g`` (``/ sum w`` for "mean") at each target,
    zeros elsewhere (PyTorch's ``NllLossBackward0`` arithmetic)."""
    ga = np.asarray(g)
    t = np.asarray(target)
    ax = lead + axis
    dt = ga.dtype
    if reduction != "none":
        # nll_loss_op's VJP arithmetic (a double coefficient, rounded once), per example
        tc, w = _nll_pick(t, shape[ax], weight, ignore_index, None, lead, ax, np.float64)
        ex = (1,) * (t.ndim - lead)
        if reduction == "mean":
            tot = w.reshape(t.shape[:lead] + (-1,)).sum(axis=-1).reshape(t.shape[:lead] + ex)
            with np.errstate(all="ignore"):
                c = np.where(tot != 0, -w / np.where(tot != 0, tot, 1.0), -w * np.nan)
        else:
            c = -w
        gi = np.multiply(np.asarray(ga).reshape(np.shape(ga) + ex), c.astype(dt))
    else:
        tc, w = _nll_pick(t, shape[ax], weight, ignore_index, None, lead, ax, dt)
        gi = np.multiply(np.negative(ga), w)
    gi = np.add(gi, 0.0, dtype=dt)  # an ignored target's -0.0 as the zeros around it
    out = np.zeros(shape, dtype=dt)
    np.put_along_axis(out, np.expand_dims(tc, ax), np.expand_dims(gi, ax), ax)
    return out


@nll_traced_op.defvjp
def _(g: Tensor, x_shape: tuple[int, ...], target: Any, **attrs: Any) -> Any:
    if raw():
        return wrap(nll_traced_backward.fwd(g._data, _data(target), shape=x_shape, **attrs),
                    g), None
    return nll_traced_backward(g, target, shape=x_shape, **attrs), None


@nll_traced_backward.defvjp
def _(gg: Tensor, target: Any, *, shape: tuple[int, ...], **attrs: Any) -> Any:
    # the backward is linear in g and the forward is its transpose
    return nll_traced_op(gg, target, **attrs), None


# PyTorch's (N, C, d1, ...) inputs: the same op, named NllLoss2DBackward0 by tapegrad.torch
nll_traced2d_op = nll_traced_op.variant("nll_loss2d_traced")


@defop("bce_logits", saves=("x", "y"),
       needs=True)
def bce_logits_op(x: Any, y: Any, *, reduction: str) -> Any:
    # max(x, 0) - x y + log(1 + exp(-|x|)), stable for large |x|
    a = np.asarray(x)
    with np.errstate(all="ignore"):
        v = np.maximum(a, 0) - a * y + np.log1p(np.exp(-np.abs(a)))
    return _reduce_np(np.asarray(v).astype(a.dtype, copy=False), reduction)


@bce_logits_op.defvjp
def _(g: Tensor, x: Any, y: Any, reduction: str, needs: tuple[bool, ...]) -> Any:
    # dx = sigmoid(x) - y ; dy = -x
    shape = x._data.shape
    ge = _reduce_back(g, shape, reduction)
    gx = multiply(ge, subtract(sigmoid(x), y)) if needs[0] else None
    gy = multiply(ge, negative(x)) if needs[1] else None
    return gx, gy


@defop("bce", saves=("x", "y"), needs=True)
def bce_op(x: Any, y: Any, *, reduction: str) -> Any:
    x = np.asarray(x)
    with np.errstate(all="ignore"):
        lx = np.maximum(np.log(x), -100.0)
        l1 = np.maximum(np.log1p(-x), -100.0)
    return _reduce_np((-(y * lx + (1 - np.asarray(y)) * l1)).astype(x.dtype, copy=False),
                      reduction)


@bce_op.defvjp
def _(g: Tensor, x: Any, y: Any, reduction: str, needs: tuple[bool, ...]) -> Any:
    # dx = (x - y) / (x (1 - x)) ; dy = log(1 - x) - log(x)
    shape = x._data.shape
    ge = _reduce_back(g, shape, reduction)
    eps = 1e-12
    gx = None
    if needs[0]:
        den = multiply(x, subtract(1.0, x))
        den = where(greater(den, eps), den, eps)
        gx = multiply(ge, divide(subtract(x, y), den))
    gy = multiply(ge, subtract(log1p(negative(x)), log(x))) if needs[1] else None
    return gx, gy




@defop("linear", saves=("x", "w"), needs=True)
def linear_op(x: Any, w: Any, b: Any) -> Any:
    # y = x w^T + b for 2-D x (PyTorch records one addmm); the bias added in place in the
    # product's new array when that keeps the dtype (one large allocation, not two)
    y = np.matmul(x, np.swapaxes(w, -1, -2))
    if isinstance(y, np.ndarray) and y.ndim and np.result_type(y, b) == y.dtype \
            and np.broadcast_shapes(y.shape, np.shape(b)) == y.shape:
        y += b
        return y
    return np.add(y, b)


@linear_op.defvjp
def _(g: Tensor, x: Any, w: Any, needs: tuple[bool, ...]) -> Any:
    # dx = g w ; dw = g^T x ; db = sum_rows(g)
    from .linalg import matmul
    from .shape import transpose

    gx = matmul(g, w) if needs[0] else None
    gw = matmul(transpose(g), x) if needs[1] else None
    gb = _sum(g, axis=0) if needs[2] else None
    return gx, gw, gb


def _zero_grad_op(name: str, fn: Any) -> Any:
    op = defop(name)(fn)

    @op.defvjp
    def _(g: Tensor, **attrs: Any) -> Any:  # piecewise constant: zero gradient
        return (multiply(g, 0.0),)

    return op


floor_op = _zero_grad_op("floor", lambda x: np.floor(x))
ceil_op = _zero_grad_op("ceil", lambda x: np.ceil(x))
round_op = _zero_grad_op("round",
                         lambda x, *, decimals=0: np.round(x, decimals))
trunc_op = _zero_grad_op("trunc", lambda x: np.trunc(x))


@defop("silu", saves=("x",))
def silu_op(x: Any) -> Any:
    a = np.asarray(x)
    with np.errstate(all="ignore"):
        return (a / (1 + np.exp(-a))).astype(a.dtype, copy=False)


@silu_op.defvjp
def _(g: Tensor, x: Tensor) -> Any:  # d x s(x) = s (1 + x (1 - s))
    s = sigmoid(x)
    return (multiply(g, multiply(s, add(multiply(x, subtract(1.0, s)), 1.0))),)




@defop("silu_tf", saves=("x",))
def silu_tf_op(x: Any, *, beta: float = 1.0) -> Any:
    """TensorFlow's ``tf.nn.silu``: ``x * sigmoid(beta * x)`` with its float32 Sigmoid kernel;
    its custom gradient ``g * (s * (1 + (beta x) (1 - s)))`` (``s = sigmoid(beta x)``), in
    TensorFlow's order, so the float32 bits are TensorFlow's."""
    a = np.asarray(x)
    bx = a if beta == 1.0 else a * a.dtype.type(beta)
    return np.multiply(a, sigmoid.fwd(bx, kernel="tf"))


@silu_tf_op.defvjp
def _(g: Tensor, x: Tensor, beta: float = 1.0) -> Any:
    bx = x if beta == 1.0 else multiply(x, beta)
    s = sigmoid(bx, kernel="tf")
    return (multiply(g, multiply(s, add(1.0, multiply(bx, subtract(1.0, s))))),)


# ----------------------------------------------------------------------------- from TensorFlow
@defop("relu6", saves=("x",))
def relu6_op(x: Any) -> Any:
    """``min(max(x, 0), 6)``; gradient where ``0 < x < 6`` (0 at both corners), as
    TensorFlow's Relu6Grad and PyTorch's hardtanh backward give it."""
    return np.clip(x, 0, 6).astype(np.asarray(x).dtype, copy=False)


@relu6_op.defvjp
def _(g: Tensor, x: Tensor) -> Any:
    return (multiply(g, logical_and(greater(x, 0), less(x, 6))),)


@defop("stop_gradient")
def stop_gradient_op(x: Any) -> Any:
    """The identity, recorded, with no gradient (TensorFlow's ``StopGradient``)."""
    return np.asarray(x)


@stop_gradient_op.defvjp
def _(g: Tensor) -> Any:  # no gradient flows back through stop_gradient
    return (None,)


_erfc_u = np.frompyfunc(math.erfc, 1, 1)


@defop("erfc", saves=("x",))
def erfc_op(x: Any) -> Any:
    """``1 - erf(x)``, accurate where erf is near 1 (each value rounded once from the C
    library's double; integers give float32, as PyTorch's ``erfc`` does).  The one erfc op of
    both front-ends."""
    a = np.asarray(x)
    if a.dtype.kind not in "fc":
        a = a.astype(np.float32)
    return np.asarray(_erfc_u(a), dtype=a.dtype)


@erfc_op.defvjp
def _(g: Tensor, x: Tensor) -> Any:  # d erfc(x) = -2/sqrt(pi) e^(-x^2) dx
    return (multiply(g, multiply(exp(negative(square(x))), -2.0 / math.sqrt(math.pi))),)


@defop("power_tf", saves=("x", "y", "out"), needs=True)
def power_tf_op(x: Any, y: Any) -> Any:
    """``x ** y`` with TensorFlow's PowGrad convention: the exponent's gradient is 0 where
    ``x <= 0`` (the core's ``power`` follows PyTorch's)."""
    with np.errstate(all="ignore"):
        if _is_two(y) and np.asarray(x).dtype.kind == "f":
            return np.square(x)  # the value of x ** 2, in one cheap pass
        return np.power(x, y)


def _is_two(y: Any) -> bool:
    """Whether the exponent is the one number 2 (``x ** 2``)."""
    yd = y._data if isinstance(y, Tensor) else y
    return bool(np.ndim(yd) == 0 and np.asarray(yd).dtype.kind in "fiu" and yd == 2)


@power_tf_op.defvjp
def _(g: Tensor, x: Tensor, y: Tensor, out: Tensor, needs: tuple[bool, ...]) -> Any:
    # gx = g y x^(y-1); gy = g x^y log(x) where x > 0, else 0
    if not needs[1] and raw() and _is_two(y) and x._data.dtype.kind == "f":
        return _power_dx_raw(g, x, 2), None  # g (2 x): the same values in fewer passes
    gx = gy = None
    if needs[0]:
        gx = multiply(g, multiply(y, power_tf_op(x, subtract(y, cast(1, dtype=y._data.dtype)))))
    if needs[1]:
        pos = greater(x, 0)
        logx = where(pos, log(where(pos, x, 1.0)), 0.0)
        gy = multiply(g, multiply(out, logx))
    return gx, gy


# ================================================================ forward-mode and batching rules
for _op in (gelu_op, softplus_op, silu_op, silu_tf_op, relu6_op, floor_op, ceil_op, round_op,
            trunc_op, erfc_op, power_tf_op, stop_gradient_op):
    _op.defbatch(_b.elementwise(_op))
for _op in (gelu_op, softplus_op, silu_op, silu_tf_op, relu6_op, floor_op, ceil_op, round_op,
            trunc_op, erfc_op, power_tf_op):
    _op.defjvp(_b.diag_jvp(_op))
stop_gradient_op.defjvp(lambda dx, x, *, out: None)  # no derivative flows through it


@var_op.defjvp
def _(dx: Any, x: Any, *, out: Any, axis: Any, correction: float, keepdims: bool) -> Any:
    # d var = 2 sum((x - mean) dx) / (n - correction)
    n = _reduced(x._data, axis)
    c = subtract(x, _mean(x, axis=axis, keepdims=True))
    s = _sum(multiply(c, dx), axis=axis, keepdims=keepdims)
    return multiply(s, 2.0 / (n - correction) if n != correction else math.inf)


@std_op.defjvp
def _(dx: Any, x: Any, *, out: Any, axis: Any, correction: float, keepdims: bool) -> Any:
    # d std = sum((x - mean) dx) / ((n - correction) std)
    n = _reduced(x._data, axis)
    c = subtract(x, _mean(x, axis=axis, keepdims=True))
    s = _sum(multiply(c, dx), axis=axis, keepdims=keepdims)
    return divide(s, multiply(out, float(n - correction)))


def _stat_batch(op: Any) -> Any:
    def rule(batched: tuple[bool, ...], x: Any, *, axis: Any, correction: float,
             keepdims: bool) -> Any:
        return op(x, axis=_b.shift_axis(axis, x._data.ndim - 1), correction=correction,
                  keepdims=keepdims)

    return rule


var_op.defbatch(_stat_batch(var_op))
std_op.defbatch(_stat_batch(std_op))


def _loss_jvp(per: Any) -> Any:
    """JVP of a reduced loss from the per-element tangent ``per(dx, dy, x, y)``."""
    def rule(dx: Any, dy: Any, x: Any, y: Any, *, out: Any, reduction: str) -> Any:
        t = per(dx, dy, x, y)
        if reduction == "mean":
            return _mean(t)
        if reduction == "sum":
            return _sum(t)
        return t

    return rule


def _mse_t(dx: Any, dy: Any, x: Any, y: Any) -> Any:  # 2 (x - y) (dx - dy)
    d = _tadd(dx, None if dy is None else negative(dy))
    return multiply(multiply(subtract(x, y), 2.0), d)


def _l1_t(dx: Any, dy: Any, x: Any, y: Any) -> Any:  # sign(x - y) (dx - dy)
    from .elementwise import sign

    d = _tadd(dx, None if dy is None else negative(dy))
    return multiply(sign(subtract(x, y)), d)


def _bcel_t(dx: Any, dy: Any, x: Any, y: Any) -> Any:  # (sigmoid(x) - y) dx - x dy
    return _tadd(None if dx is None else multiply(dx, subtract(sigmoid(x), y)),
                 None if dy is None else multiply(dy, negative(x)))


def _bce_t(dx: Any, dy: Any, x: Any, y: Any) -> Any:
    # (x - y) / (x (1 - x)) dx + (log(1 - x) - log x) dy
    tx = None
    if dx is not None:
        den = multiply(x, subtract(1.0, x))
        den = where(greater(den, 1e-12), den, 1e-12)
        tx = multiply(dx, divide(subtract(x, y), den))
    return _tadd(tx, None if dy is None else multiply(dy, subtract(log1p(negative(x)), log(x))))


for _op, _per in ((mse_loss_op, _mse_t), (l1_loss_op, _l1_t), (bce_logits_op, _bcel_t),
                  (bce_op, _bce_t)):
    _op.defjvp(_loss_jvp(_per))
    _op.defbatch(_b.reduction_loss(_op))

nll_loss_op.defjvp(lambda dx, x, *, out, **attrs: nll_loss_op(dx, **attrs))


@nll_loss_op.defbatch
def _(batched: tuple[bool, ...], x: Any, *, target: np.ndarray, weight: Any, ignore_index: int,
      reduction: str) -> Any:
    # the same targets in every example: the batch joins the samples (axis 0), one pick,
    # then each example's own reduction
    shape = x._data.shape
    nb, inner = shape[0], shape[1:]
    if len(inner) == 1:  # one sample of C classes per example
        flat, tgt = x, np.broadcast_to(np.asarray(target).reshape(()), (nb,))
    else:
        flat = reshape(x, (nb * inner[0],) + inner[1:])
        tgt = np.tile(target, (nb,) + (1,) * (target.ndim - 1))
    per = reshape(nll_loss_op(flat, target=np.ascontiguousarray(tgt), weight=weight,
                              ignore_index=ignore_index, reduction="none"),
                  (nb,) + tuple(np.shape(target)))
    if reduction == "none":
        return per
    axes = tuple(range(1, len(np.shape(target)) + 1))
    tot = _sum(per, axis=axes) if axes else per
    if reduction == "sum":
        return tot
    _, w = _nll_index(inner, np.asarray(target), weight, ignore_index)
    with np.errstate(all="ignore"):
        return divide(tot, np.asarray(w.sum(), dtype=x._data.dtype))


nll_traced_op.defjvp(lambda dx, dt, x, target, *, out, **attrs: None if dx is None else
                     nll_traced_op(dx, target, **attrs))
nll_traced_backward.defjvp(lambda dg, dt, g, target, *, out, **attrs: None if dg is None else
                           nll_traced_backward(dg, target, **attrs))


def _nll_traced_batch(op: Any) -> Any:
    # both inputs carry the batch (an unbatched one is broadcast, a view), one more lead axis
    def rule(batched: tuple[bool, ...], v: Any, target: Any, *, lead: int, **attrs: Any) -> Any:
        n = next(np.shape(_data(a))[0] for a, b in zip((v, target), batched) if b)
        if not batched[0]:
            v = broadcast_to(v, (n,) + np.shape(_data(v)))
        if not batched[1]:
            target = broadcast_to(target, (n,) + np.shape(_data(target)))
        if "shape" in attrs:
            attrs["shape"] = (n,) + tuple(attrs["shape"])
        return op(v, target, lead=lead + 1, **attrs)

    return rule


nll_traced_op.defbatch(_nll_traced_batch(nll_traced_op))
nll_traced_backward.defbatch(_nll_traced_batch(nll_traced_backward))


@linear_op.defjvp
def _(dx: Any, dw: Any, db: Any, x: Any, w: Any, b: Any, *, out: Any) -> Any:
    # dx w^T + x dw^T + db
    t = None if dx is None else linear_op(dx, w, np.zeros((), dtype=out._data.dtype))
    if dw is not None:
        t = _tadd(t, linear_op(x, dw, np.zeros((), dtype=out._data.dtype)))
    return _tadd(t, db)


@linear_op.defbatch
def _(batched: tuple[bool, ...], x: Any, w: Any, b: Any) -> Any:
    # x w^T + b from the batched matmul and add (w batched for ensembles)
    bx, bw, bb = batched
    wt = _transpose(w, axes=(0, 2, 1)) if bw else _transpose(w, axes=(1, 0))
    y = matmul_batch((bx, bw), x, wt) if (bx or bw) else _mm_op(x, wt)
    return _b.elementwise(_add_op)((bx or bw, bb), y, b)


del _op, _per
