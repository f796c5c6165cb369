"""Connectionist temporal classification (CTC) loss as one op record.

``ctc_loss_op(log_probs)`` takes ``(T, N, C)`` log-probabilities and, as attributes, each
sample's target labels and input length; it returns the ``(N,)`` negative
log-likelihoods, from the forward (alpha) recursion in log space.  Its VJP is PyTorch's
(``ctc_loss_backward_cpu``): with the backward (beta) recursion,
``grad[t, n, c] = (exp(lp) - exp(log sum_{s: l'(s) = c} alpha_t(s) beta_t(s) + nll - lp))
* g[n]`` for ``t`` below the sample's input length, 0 after it.  That is the gradient
through a ``log_softmax`` folded in (PyTorch's convention: its ``exp(lp)`` term assumes
normalised log-probabilities), and like PyTorch's it is not differentiated again.
``zero_infinity`` makes infinite losses (impossible alignments) and their gradients 0.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.registry import defop
from .._core.tensor import Tensor, make
from .elementwise import divide, multiply
from .shape import reshape

_NEG = -np.inf


def _lse(*vals: np.ndarray) -> np.ndarray:
    m = np.maximum.reduce(vals)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = sum(np.exp(v - safe) for v in vals)
        return np.where(np.isneginf(m), _NEG, np.log(s) + safe)


def _ext(tgt: tuple[int, ...], blank: int) -> np.ndarray:
    lab = np.full(2 * len(tgt) + 1, blank, dtype=np.int64)
    lab[1::2] = tgt
    return lab


def _alpha(lp: np.ndarray, lab: np.ndarray, tlen: int) -> np.ndarray:
    s = lab.size
    la = np.full((max(tlen, 1), s), _NEG)
    if tlen == 0:
        return la
    la[0, 0] = lp[0, lab[0]]
    if s > 1:
        la[0, 1] = lp[0, lab[1]]
    skip = np.zeros(s, dtype=bool)
    skip[2:] = lab[2:] != lab[:-2]
    for t in range(1, tlen):
        prev = la[t - 1]
        a1 = np.concatenate([[_NEG], prev[:-1]])
        a2 = np.where(skip, np.concatenate([[_NEG, _NEG], prev[:-2]]), _NEG)
        la[t] = _lse(prev, a1, a2) + lp[t, lab]
    return la


def _beta(lp: np.ndarray, lab: np.ndarray, tlen: int) -> np.ndarray:
    s = lab.size
    lb = np.full((max(tlen, 1), s), _NEG)
    if tlen == 0:
        return lb
    lb[tlen - 1, s - 1] = lp[tlen - 1, lab[s - 1]]
    if s > 1:
        lb[tlen - 1, s - 2] = lp[tlen - 1, lab[s - 2]]
    skip = np.zeros(s, dtype=bool)
    skip[:-2] = lab[:-2] != lab[2:]
    for t in range(tlen - 2, -1, -1):
        nxt = lb[t + 1]
        b1 = np.concatenate([nxt[1:], [_NEG]])
        b2 = np.where(skip, np.concatenate([nxt[2:], [_NEG, _NEG]]), _NEG)
        lb[t] = _lse(nxt, b1, b2) + lp[t, lab]
    return lb


def _nll(la: np.ndarray, lab: np.ndarray, tlen: int) -> float:
    if tlen == 0:
        return 0.0 if lab.size == 1 else float("inf")
    last = la[tlen - 1]
    v = _lse(last[-1:], last[-2:-1]) if lab.size > 1 else last[-1:]
    return float(-v[0])


def _check(x: np.ndarray, targets: tuple[tuple[int, ...], ...],
           input_lengths: tuple[int, ...], blank: int) -> None:
    for b, tgt in enumerate(targets):
        if input_lengths[b] < 0:
            raise hinted(RuntimeError(with_hint(
                f"Expected input_lengths to have value at least 0, but got value "
                f"{input_lengths[b]}", "lengths are non-negative")))
        for v in tgt:
            if not 0 <= v < x.shape[2] or v == blank:
                raise hinted(RuntimeError(with_hint(
                    f"ctc_loss: target value {v} is out of range or the blank",
                    f"labels are in [0, {x.shape[2] - 1}] without the blank {blank}")))


@defop("ctc_loss", saves=("x", "out"))
def ctc_loss_op(x: Any, *, targets: tuple[tuple[int, ...], ...],
                input_lengths: tuple[int, ...], blank: int, zero_infinity: bool) -> Any:
    a = np.asarray(x)
    _check(a, targets, input_lengths, blank)
    lp = a.astype(np.float64)
    out = np.empty(len(targets), dtype=np.float64)
    for b, tgt in enumerate(targets):
        lab = _ext(tgt, blank)
        tl = input_lengths[b]
        out[b] = _nll(_alpha(lp[:, b], lab, tl), lab, tl)
    if zero_infinity:
        out = np.where(np.isinf(out), 0.0, out)
    return out.astype(a.dtype)


def ctc_grad(x: np.ndarray, targets: tuple[tuple[int, ...], ...],
             input_lengths: tuple[int, ...], blank: int, zero_infinity: bool) -> np.ndarray:
    """PyTorch's CTC gradient with respect to the log-probabilities (per unit loss)."""
    lp = x.astype(np.float64)
    grad = np.zeros(lp.shape, dtype=np.float64)
    c = lp.shape[2]
    for b, tgt in enumerate(targets):
        lab = _ext(tgt, blank)
        tl = input_lengths[b]
        if tl == 0:
            continue
        lpb = lp[:tl, b]
        la = _alpha(lp[:, b], lab, tl)
        nll = _nll(la, lab, tl)
        if zero_infinity and np.isinf(nll):
            continue
        lb = _beta(lp[:, b], lab, tl)
        ab = la + lb
        lcab = np.full((tl, c), _NEG)
        for s, lbl in enumerate(lab):
            lcab[:, lbl] = _lse(lcab[:, lbl], ab[:, s])
        with np.errstate(invalid="ignore", over="ignore"):
            grad[:tl, b] = np.exp(lpb) - np.exp(lcab + nll - lpb)
    return grad


@ctc_loss_op.defvjp
def _(g: Tensor, x: Tensor, out: Any, targets: tuple[tuple[int, ...], ...],
      input_lengths: tuple[int, ...], blank: int, zero_infinity: bool) -> Any:
    xa = x._data if isinstance(x, Tensor) else np.asarray(x)
    gr = ctc_grad(xa, targets, input_lengths, blank, zero_infinity).astype(xa.dtype)
    return (multiply(make(gr), reshape(g, (1, -1, 1))),)


__all__ = ["ctc_loss_op", "ctc_grad"]


# =====================================================================================
# Activations, two losses and the shuffles as single nodes under PyTorch's names.  Each
# forward is NumPy in the input's dtype; each VJP and JVP is the derivative written in
# tapegrad ops (differentiable again), with PyTorch's kernels' choices at the kinks.
# =====================================================================================
from . import _batch as _b  # noqa: E402
from .elementwise import (  # noqa: E402
    add,
    exp,
    greater,
    greater_equal,
    less,
    less_equal,
    log1p,
    logical_and,
    sigmoid,
    subtract,
    tanh,
    where,
)
from .elementwise import clip as _clip  # noqa: E402
from .elementwise import negative as _neg  # noqa: E402
from .fused import _reduce_back, _reduce_np  # noqa: E402
from .reduce import mean as _mean  # noqa: E402
from .reduce import sum as _sum  # noqa: E402
from .shape import broadcast_to, concat, expand_dims, split, sum_to, transpose  # noqa: E402


def _dt(x: Any) -> np.dtype:
    return np.asarray(x).dtype


def _unary(name: str, fwd: Any, deriv: Any) -> Any:
    """A one-input elementwise op: ``fwd(x, **attrs)`` on arrays, ``deriv(x, out,
    **attrs)`` the derivative in tapegrad ops (PyTorch's node names: tapegrad.torch's
    table)."""
    op = defop(name, saves=("x", "out"))(fwd)
    op.defvjp(lambda g, x, out, **attrs: (multiply(g, deriv(x, out, **attrs)),))
    op.defjvp(lambda dx, x, *, out, **attrs: multiply(dx, deriv(x, out, **attrs)))
    op.defbatch(_b.elementwise(op))
    return op


def _mask(cond: Any, x: Any) -> Tensor:
    """``cond`` as 0/1 in ``x``'s dtype (a constant of the derivative)."""
    c = cond._data if isinstance(cond, Tensor) else np.asarray(cond)
    return make(c.astype(_dt(x._data if isinstance(x, Tensor) else x)))


def _hardswish_fwd(x: Any) -> Any:
    a = np.asarray(x)
    three, six = a.dtype.type(3), a.dtype.type(6)
    return (a * np.minimum(np.maximum(a + three, 0), six) / six).astype(a.dtype, copy=False)


def _hardswish_d(x: Tensor, out: Any) -> Tensor:
    # PyTorch's CPU kernel: 0 for x <= -3, x / 3 + 0.5 below 3, 1 from 3 on
    mid = add(divide(x, 3.0), 0.5)
    return where(less_equal(x, -3.0), multiply(x, 0.0), where(less(x, 3.0), mid, 1.0))


hardswish_op = _unary("hardswish", _hardswish_fwd, _hardswish_d)


def _hardsigmoid_fwd(x: Any) -> Any:
    a = np.asarray(x)
    three, six = a.dtype.type(3), a.dtype.type(6)
    return (np.minimum(np.maximum(a + three, 0), six) / six).astype(a.dtype, copy=False)


hardsigmoid_op = _unary("hardsigmoid", _hardsigmoid_fwd,
    lambda x, out: divide(_mask(logical_and(greater(x, -3.0), less(x, 3.0)), x), 6.0))


def _softshrink_fwd(x: Any, *, lambd: float) -> Any:
    a = np.asarray(x)
    lam = a.dtype.type(lambd)
    return np.where(a > lam, a - lam, np.where(a < -lam, a + lam, 0)).astype(a.dtype,
                                                                             copy=False)


def _shrink_d(x: Tensor, out: Any, *, lambd: float) -> Tensor:
    # 0 on [-lambd, lambd] (both ends), 1 elsewhere
    return _mask(~logical_and(greater_equal(x, -lambd), less_equal(x, lambd))._data, x)


softshrink_op = _unary("softshrink", _softshrink_fwd, _shrink_d)


def _hardshrink_fwd(x: Any, *, lambd: float) -> Any:
    a = np.asarray(x)
    lam = a.dtype.type(lambd)
    return np.where((a >= -lam) & (a <= lam), 0, a).astype(a.dtype, copy=False)


hardshrink_op = _unary("hardshrink", _hardshrink_fwd, _shrink_d)


def _threshold_fwd(x: Any, *, threshold: float, value: float) -> Any:
    a = np.asarray(x)
    return np.where(a <= threshold, np.asarray(value).astype(a.dtype), a).astype(a.dtype,
                                                                                  copy=False)


threshold_op = _unary("threshold", _threshold_fwd,
                      lambda x, out, *, threshold, value: _mask(greater(x, threshold), x))


def _celu_fwd(x: Any, *, alpha: float) -> Any:
    a = np.asarray(x)
    with np.errstate(all="ignore"):
        return np.where(a > 0, a, alpha * np.expm1(a / alpha)).astype(a.dtype, copy=False)


celu_op = _unary("celu", _celu_fwd,
                 lambda x, out, *, alpha: where(greater(x, 0), 1.0, exp(divide(x, alpha))))

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _selu_fwd(x: Any) -> Any:
    a = np.asarray(x)
    with np.errstate(all="ignore"):
        return (_SELU_SCALE * np.where(a > 0, a, _SELU_ALPHA * np.expm1(a))).astype(
            a.dtype, copy=False)


selu_op = _unary("selu", _selu_fwd,
                 lambda x, out: where(greater(x, 0), _SELU_SCALE,
                                      multiply(exp(x), _SELU_SCALE * _SELU_ALPHA)))


def _mish_fwd(x: Any) -> Any:
    a = np.asarray(x)
    with np.errstate(over="ignore"):
        return (a * np.tanh(np.log1p(np.exp(a)))).astype(a.dtype, copy=False)


def _mish_d(x: Tensor, out: Any) -> Tensor:
    th = tanh(log1p(exp(x)))
    return add(th, multiply(multiply(x, sigmoid(x)), subtract(1.0, multiply(th, th))))


mish_op = _unary("mish", _mish_fwd, _mish_d)


def _logsigmoid_fwd(x: Any) -> Any:
    a = np.asarray(x)
    return (np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))).astype(a.dtype, copy=False)


logsigmoid_op = _unary("log_sigmoid", _logsigmoid_fwd,
                       lambda x, out: sigmoid(_neg(x)))


def _rrelu_fwd(x: Any, *, noise: np.ndarray) -> Any:
    a = np.asarray(x)
    return np.where(a > 0, a, a * noise).astype(a.dtype, copy=False)


rrelu_op = _unary("rrelu_with_noise", _rrelu_fwd,
                  lambda x, out, *, noise: where(greater(x, 0), 1.0, make(np.asarray(noise))))


# ------------------------------------------------------------------ prelu
@defop("prelu", saves=("x", "w"), needs=True)
def prelu_op(x: Any, w: Any) -> Any:
    a = np.asarray(x)
    return np.where(a > 0, a, np.asarray(w) * a).astype(a.dtype, copy=False)


@prelu_op.defvjp
def _(g: Tensor, x: Tensor, w: Tensor, needs: tuple[bool, ...]) -> Any:
    pos = greater(x, 0)
    gx = where(pos, g, multiply(w, g)) if needs[0] else None
    gw = None
    if needs[1]:
        gw = sum_to(where(pos, 0.0, multiply(x, g)), np.shape(w._data))
    return gx, gw


def _prelu_jvp(dx: Any, dw: Any, x: Any, w: Any, *, out: Any) -> Any:
    pos = greater(x, 0)
    t = None
    if dx is not None:
        t = where(pos, dx, multiply(w, dx))
    if dw is not None:
        tw = where(pos, 0.0, multiply(x, dw))
        t = tw if t is None else add(t, tw)
    return t


prelu_op.defjvp(_prelu_jvp)
prelu_op.defbatch(_b.elementwise(prelu_op))


# ------------------------------------------------------------------ glu
@defop("glu", saves=("x",))
def glu_op(x: Any, *, axis: int) -> Any:
    a, b = np.split(np.asarray(x), 2, axis=axis)
    with np.errstate(over="ignore"):
        return (a / (1 + np.exp(-b))).astype(a.dtype, copy=False)


@glu_op.defvjp
def _(g: Tensor, x: Tensor, axis: int) -> Any:
    a, b = split(x, 2, axis=axis)
    s = sigmoid(b)
    return (concat([multiply(g, s), multiply(multiply(g, a), multiply(s, subtract(1.0, s)))],
                   axis=axis),)


@glu_op.defjvp
def _(dx: Tensor, x: Tensor, *, out: Any, axis: int) -> Any:
    a, b = split(x, 2, axis=axis)
    da, db = split(dx, 2, axis=axis)
    s = sigmoid(b)
    return add(multiply(da, s), multiply(multiply(a, db), multiply(s, subtract(1.0, s))))


glu_op.defbatch(lambda batched, x, *, axis: glu_op(x, axis=axis + 1))


# ------------------------------------------------------------------ huber, soft margin
def _bshape(x: Any, y: Any) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(np.shape(x._data if isinstance(x, Tensor) else x),
                                     np.shape(y._data if isinstance(y, Tensor) else y)))


@defop("huber_loss", saves=("x", "y"), needs=True)
def huber_loss_op(x: Any, y: Any, *, reduction: str, delta: float) -> Any:
    a = np.asarray(x)
    d = np.subtract(a, y)
    ad = np.abs(d)
    dl = a.dtype.type(delta)
    v = np.where(ad < dl, a.dtype.type(0.5) * d * d, dl * (ad - a.dtype.type(0.5) * dl))
    return _reduce_np(v.astype(a.dtype, copy=False), reduction)


@huber_loss_op.defvjp
def _(g: Tensor, x: Any, y: Any, reduction: str, delta: float,
      needs: tuple[bool, ...]) -> Any:
    # d/dx: x - y inside [-delta, delta], +-delta outside
    gx = multiply(_reduce_back(g, _bshape(x, y), reduction),
                  _clip(subtract(x, y), -delta, delta))
    return (gx if needs[0] else None), (_neg(gx) if needs[1] else None)


def _huber_jvp(dx: Any, dy: Any, x: Any, y: Any, *, out: Any, reduction: str,
               delta: float) -> Any:
    d = dx if dy is None else (_neg(dy) if dx is None else subtract(dx, dy))
    t = multiply(_clip(subtract(x, y), -delta, delta), d)
    return _mean(t) if reduction == "mean" else _sum(t) if reduction == "sum" else t


huber_loss_op.defjvp(_huber_jvp)
huber_loss_op.defbatch(_b.reduction_loss(huber_loss_op))


@defop("soft_margin_loss", saves=("x", "y"))
def soft_margin_loss_op(x: Any, y: Any, *, reduction: str) -> Any:
    a = np.asarray(x)
    with np.errstate(over="ignore"):
        v = np.log1p(np.exp(-np.asarray(y) * a)).astype(a.dtype, copy=False)
    return _reduce_np(v, reduction)


@soft_margin_loss_op.defvjp
def _(g: Tensor, x: Any, y: Any, reduction: str) -> Any:
    # -y e^{-yx} / (1 + e^{-yx}) = -y sigmoid(-y x); the target gets none (as in PyTorch)
    coef = multiply(_neg(y), sigmoid(_neg(multiply(y, x))))
    return multiply(_reduce_back(g, _bshape(x, y), reduction), coef), None


def _smargin_jvp(dx: Any, dy: Any, x: Any, y: Any, *, out: Any, reduction: str) -> Any:
    if dx is None:
        return None
    t = multiply(multiply(_neg(y), sigmoid(_neg(multiply(y, x)))), dx)
    return _mean(t) if reduction == "mean" else _sum(t) if reduction == "sum" else t


soft_margin_loss_op.defjvp(_smargin_jvp)
soft_margin_loss_op.defbatch(_b.reduction_loss(soft_margin_loss_op))


# ------------------------------------------------------------------ shuffles
def _pixel_shuffle_np(a: np.ndarray, r: int) -> np.ndarray:
    lead, (c, h, w) = a.shape[:-3], a.shape[-3:]
    k = len(lead)
    y = a.reshape(lead + (c // (r * r), r, r, h, w))
    y = y.transpose(tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return np.ascontiguousarray(y).reshape(lead + (c // (r * r), h * r, w * r))


def _pixel_unshuffle_np(a: np.ndarray, r: int) -> np.ndarray:
    lead, (c, h, w) = a.shape[:-3], a.shape[-3:]
    k = len(lead)
    y = a.reshape(lead + (c, h // r, r, w // r, r))
    y = y.transpose(tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return np.ascontiguousarray(y).reshape(lead + (c * r * r, h // r, w // r))


@defop("pixel_shuffle")
def pixel_shuffle_op(x: Any, *, r: int) -> Any:
    return _pixel_shuffle_np(np.asarray(x), r)


@defop("pixel_unshuffle")
def pixel_unshuffle_op(x: Any, *, r: int) -> Any:
    return _pixel_unshuffle_np(np.asarray(x), r)


pixel_shuffle_op.defvjp(lambda g, r: (pixel_unshuffle_op(g, r=r),))
pixel_unshuffle_op.defvjp(lambda g, r: (pixel_shuffle_op(g, r=r),))
pixel_shuffle_op.defjvp(lambda dx, x, *, out, r: pixel_shuffle_op(dx, r=r))
pixel_unshuffle_op.defjvp(lambda dx, x, *, out, r: pixel_unshuffle_op(dx, r=r))
# they act on the last three dims: the batch axis is one more leading dim
pixel_shuffle_op.defbatch(lambda batched, x, *, r: pixel_shuffle_op(x, r=r))
pixel_unshuffle_op.defbatch(lambda batched, x, *, r: pixel_unshuffle_op(x, r=r))


def _channel_shuffle_np(a: np.ndarray, groups: int) -> np.ndarray:
    s = a.shape
    y = a.reshape((s[0], groups, s[1] // groups) + s[2:]).swapaxes(1, 2)
    return np.ascontiguousarray(y).reshape(s)


@defop("channel_shuffle")
def channel_shuffle_op(x: Any, *, groups: int) -> Any:
    return _channel_shuffle_np(np.asarray(x), groups)


@channel_shuffle_op.defvjp
def _(g: Tensor, groups: int) -> Any:
    c = g._data.shape[1]
    return (channel_shuffle_op(g, groups=c // groups),)  # the inverse permutation


channel_shuffle_op.defjvp(lambda dx, x, *, out, groups: channel_shuffle_op(dx, groups=groups))


@channel_shuffle_op.defbatch
def _(batched: tuple[bool, ...], x: Tensor, *, groups: int) -> Any:
    s = x._data.shape  # (B, N, C, ...): the batch folded into N
    y = channel_shuffle_op(reshape(x, (s[0] * s[1],) + s[2:]), groups=groups)
    return reshape(y, s)


__all__ += [
    "hardswish_op", "hardsigmoid_op", "softshrink_op", "hardshrink_op", "threshold_op",
    "celu_op", "selu_op", "mish_op", "logsigmoid_op", "rrelu_op", "prelu_op", "glu_op",
    "huber_loss_op", "soft_margin_loss_op", "pixel_shuffle_op", "pixel_unshuffle_op",
    "channel_shuffle_op",
]


# ------------------------------------------------------------------ embedding_bag
from .shape import _getitem, index_add_zeros  # noqa: E402
from .shape import stack as _stack  # noqa: E402


class BagPlan:
    """Which row of ``weight`` each looked-up index reads (``flat``), the bag it goes to
    (``bag``, -1 where dropped: ``padding_idx``), the number of bags and the mode."""

    def __init__(self, flat: np.ndarray, bag: np.ndarray, nbags: int, mode: str) -> None:
        self.flat, self.bag, self.nbags, self.mode = flat, bag, nbags, mode
        self.keep = bag >= 0
        self.bag_c = np.where(self.keep, bag, 0)
        self.count = np.bincount(bag[self.keep], minlength=nbags)

    def coef(self, dt: np.dtype) -> np.ndarray:
        """Each index's weight in its bag's sum (0 where dropped)."""
        c = self.keep.astype(dt)
        if self.mode == "mean":
            cnt = self.count[self.bag_c].astype(dt)
            c = np.where(self.keep, c / np.where(cnt > 0, cnt, 1), 0).astype(dt)
        return c

    def argmax(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For max mode: the weight row reaching each bag's maximum per column (the first),
        the columns, and which bags are non-empty."""
        d = w.shape[1]
        rows = np.zeros((self.nbags, d), dtype=np.int64)
        for b in range(self.nbags):
            sel = self.flat[(self.bag == b)]
            if sel.size:
                rows[b] = sel[np.argmax(w[sel], axis=0)]
        cols = np.broadcast_to(np.arange(d), (self.nbags, d))
        return rows, cols, self.count > 0

    def __repr__(self) -> str:
        return f"BagPlan({self.nbags} bags, mode={self.mode!r})"


def _bag_forward(w: np.ndarray, plan: BagPlan, psw: np.ndarray | None) -> np.ndarray:
    d = w.shape[1]
    out = np.zeros((plan.nbags, d), dtype=w.dtype)
    if plan.mode == "max":
        rows, cols, nonempty = plan.argmax(w)
        out[nonempty] = w[rows, cols][nonempty]
        return out
    vals = w[plan.flat[plan.keep]]
    if psw is not None:
        vals = vals * psw[plan.keep][:, None]
    np.add.at(out, plan.bag[plan.keep], vals)
    if plan.mode == "mean":
        out /= np.maximum(plan.count, 1).astype(w.dtype)[:, None]
    return out


@defop("embedding_bag", saves=("w",))
def embedding_bag_op(w: Any, *, plan: BagPlan) -> Any:
    return _bag_forward(np.asarray(w), plan, None)


@embedding_bag_op.defvjp
def _(g: Tensor, w: Tensor, plan: BagPlan) -> Any:
    shape = w._data.shape
    if plan.mode == "max":
        rows, cols, nonempty = plan.argmax(w._data)
        gm = multiply(g, make(nonempty[:, None].astype(g._data.dtype)))
        return (index_add_zeros(gm, index=(rows, cols), shape=shape),)
    coef = make(plan.coef(g._data.dtype)[:, None])
    gr = multiply(_getitem(g, index=(plan.bag_c,)), coef)
    return (index_add_zeros(gr, index=(plan.flat,), shape=shape),)


@embedding_bag_op.defjvp
def _(dw: Tensor, w: Tensor, *, out: Any, plan: BagPlan) -> Any:
    if plan.mode == "max":
        rows, cols, nonempty = plan.argmax(w._data if isinstance(w, Tensor) else np.asarray(w))
        return multiply(_getitem(dw, index=(rows, cols)),
                        make(nonempty[:, None].astype(np.asarray(out).dtype)))
    return embedding_bag_op(dw, plan=plan)


@embedding_bag_op.defbatch
def _(batched: tuple[bool, ...], w: Tensor, *, plan: BagPlan) -> Any:
    return _stack([embedding_bag_op(_getitem(w, index=(i,)), plan=plan)
                   for i in range(w._data.shape[0])])


@defop("embedding_bag_psw", saves=("w", "psw"),
       needs=True)
def embedding_bag_psw_op(w: Any, psw: Any, *, plan: BagPlan) -> Any:
    return _bag_forward(np.asarray(w), plan, np.asarray(psw))


@embedding_bag_psw_op.defvjp
def _(g: Tensor, w: Tensor, psw: Tensor, plan: BagPlan, needs: tuple[bool, ...]) -> Any:
    keep = make(plan.keep.astype(g._data.dtype))
    gb = _getitem(g, index=(plan.bag_c,))  # each index's bag gradient
    gw = gp = None
    if needs[0]:
        gr = multiply(gb, reshape(multiply(psw, keep), (-1, 1)))
        gw = index_add_zeros(gr, index=(plan.flat,), shape=w._data.shape)
    if needs[1]:
        gp = multiply(_sum(multiply(gb, _getitem(w, index=(plan.flat,))), axis=1), keep)
    return gw, gp


def _psw_jvp(dw: Any, dp: Any, w: Any, psw: Any, *, out: Any, plan: BagPlan) -> Any:
    t = None if dw is None else embedding_bag_psw_op(dw, psw, plan=plan)
    if dp is not None:
        tp = embedding_bag_psw_op(w, dp, plan=plan)
        t = tp if t is None else add(t, tp)
    return t


embedding_bag_psw_op.defjvp(_psw_jvp)


@embedding_bag_psw_op.defbatch
def _(batched: tuple[bool, ...], w: Tensor, psw: Tensor, *, plan: BagPlan) -> Any:
    n = (w if batched[0] else psw)._data.shape[0]
    return _stack([embedding_bag_psw_op(_getitem(w, index=(i,)) if batched[0] else w,
                                        _getitem(psw, index=(i,)) if batched[1] else psw,
                                        plan=plan) for i in range(n)])


__all__ += ["BagPlan", "embedding_bag_op", "embedding_bag_psw_op"]


# ------------------------------------------------------------------ affine_grid
from .linalg import matmul as _matmul  # noqa: E402
from .shape import swapaxes as _swapaxes  # noqa: E402


@defop("affine_grid_generator")
def affine_grid_op(theta: Any, *, base: np.ndarray, out_shape: tuple[int, ...]) -> Any:
    """``base (N, P, k+1) @ theta^T`` viewed as the grid; ``base`` holds the normalised
    coordinates and a column of ones."""
    th = np.asarray(theta)
    return np.matmul(base, np.swapaxes(th, 1, 2)).reshape(out_shape)


@affine_grid_op.defvjp
def _(g: Tensor, base: np.ndarray, out_shape: tuple[int, ...]) -> Any:
    n, pts = base.shape[0], base.shape[1]
    g2 = reshape(g, (n, pts, out_shape[-1]))  # d theta = g^T base
    return (_matmul(_swapaxes(g2, 1, 2), make(base.astype(g._data.dtype))),)


affine_grid_op.defjvp(lambda dth, th, *, out, base, out_shape: affine_grid_op(
    dth, base=base, out_shape=out_shape))


@affine_grid_op.defbatch
def _(batched: tuple[bool, ...], theta: Tensor, *, base: np.ndarray,
      out_shape: tuple[int, ...]) -> Any:
    return _stack([affine_grid_op(_getitem(theta, index=(i,)), base=base, out_shape=out_shape)
                   for i in range(theta._data.shape[0])])


__all__ += ["affine_grid_op"]


# ------------------------------------------------------------------ multi-class margin losses
def _per_back(g: Tensor, n: int, reduction: str) -> Tensor:
    """The gradient of each sample's loss from the reduced one's."""
    if reduction == "none":
        return reshape(g, (n,))
    gb = broadcast_to(reshape(g, (1,)), (n,))
    return divide(gb, float(max(n, 1))) if reduction == "mean" else gb


def _per_reduce(per: Any, shape: tuple[int, ...], reduction: str) -> Any:
    if reduction == "mean":
        return _mean(per)
    if reduction == "sum":
        return _sum(per)
    return reshape(per, shape)


def _mm_parts(x2: np.ndarray, target: np.ndarray, margin: float,
              weight: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``z = margin - x[y] + x``, the active mask (``z > 0``, ``j != y``), ``w[y]``."""
    n, c = x2.shape
    rows = np.arange(n)
    z = x2.dtype.type(margin) - x2[rows, target][:, None] + x2
    act = z > 0
    act[rows, target] = False
    wy = np.ones(n, x2.dtype) if weight is None else weight[target].astype(x2.dtype)
    return z, act, wy


@defop("multi_margin_loss", saves=("x",))
def multi_margin_loss_op(x: Any, *, target: np.ndarray, p: int, margin: float,
                         weight: np.ndarray | None, reduction: str, out_shape: tuple[int, ...]
                         ) -> Any:
    a = np.asarray(x)
    x2 = a.reshape(-1, a.shape[-1]) if a.ndim else a.reshape(1, 1)
    z, act, wy = _mm_parts(x2, target, margin, weight)
    h = np.where(act, z, 0)
    if p == 2:
        h = h * h
    per = (h * wy[:, None]).sum(1) / x2.dtype.type(x2.shape[1])
    return _reduce_np(per.astype(a.dtype), reduction).reshape(
        out_shape if reduction == "none" else ())


def _mm_coef(x2: Tensor, target: np.ndarray, p: int, margin: float, weight: Any) -> Tensor:
    """d loss_n / d z_nj (active entries only), in tapegrad ops (``z`` for ``p = 2``)."""
    z, act, wy = _mm_parts(x2._data, target, margin, weight)
    c = x2._data.shape[1]
    coef = make((act * (wy[:, None] / x2._data.dtype.type(c))).astype(x2._data.dtype))
    if p == 2:
        n = x2._data.shape[0]
        xy = reshape(_getitem(x2, index=(np.arange(n), target)), (n, 1))
        zt = add(subtract(margin, xy), x2)
        coef = multiply(coef, multiply(zt, 2.0))
    return coef


def _mm_to_x(gz: Tensor, target: np.ndarray) -> Tensor:
    """From d/dz (z_j = margin - x_y + x_j) to d/dx: each row's sum goes to -x_y."""
    n, c = gz._data.shape
    onehot = np.zeros((n, c), dtype=gz._data.dtype)
    onehot[np.arange(n), target] = 1
    return subtract(gz, multiply(make(onehot), _sum(gz, axis=1, keepdims=True)))


@multi_margin_loss_op.defvjp
def _(g: Tensor, x: Tensor, target: np.ndarray, p: int, margin: float, weight: Any,
      reduction: str, out_shape: tuple[int, ...]) -> Any:
    shape = x._data.shape
    x2 = reshape(x, (-1, shape[-1] if shape else 1))
    n = x2._data.shape[0]
    gz = multiply(reshape(_per_back(g, n, reduction), (n, 1)),
                  _mm_coef(x2, target, p, margin, weight))
    return (reshape(_mm_to_x(gz, target), shape),)


@multi_margin_loss_op.defjvp
def _(dx: Tensor, x: Tensor, *, out: Any, target: np.ndarray, p: int, margin: float,
      weight: Any, reduction: str, out_shape: tuple[int, ...]) -> Any:
    shape = x._data.shape
    x2 = reshape(x, (-1, shape[-1] if shape else 1))
    d2 = reshape(dx, x2._data.shape)
    n = x2._data.shape[0]
    dxy = reshape(_getitem(d2, index=(np.arange(n), target)), (n, 1))
    dz = subtract(d2, dxy)
    per = _sum(multiply(_mm_coef(x2, target, p, margin, weight), dz), axis=1)
    return _per_reduce(per, out_shape, reduction)


@multi_margin_loss_op.defbatch
def _(batched: tuple[bool, ...], x: Tensor, **attrs: Any) -> Any:
    return _stack([multi_margin_loss_op(_getitem(x, index=(i,)), **attrs)
                   for i in range(x._data.shape[0])])


def _mlm_coef(x2: np.ndarray, target: np.ndarray) -> np.ndarray:
    """d loss_n / d x_nk of the multilabel margin loss (piecewise constant)."""
    n, c = x2.shape
    coef = np.zeros((n, c), dtype=np.float64)
    for i in range(n):
        ys: list[int] = []
        for v in target[i]:
            if v < 0:
                break
            ys.append(int(v))
        is_t = np.zeros(c, dtype=bool)
        is_t[ys] = True
        for j in ys:
            z = 1 - x2[i, j] + x2[i]
            act = (z > 0) & ~is_t
            coef[i] += act
            coef[i, j] -= act.sum()
    return (coef / c).astype(x2.dtype)


@defop("multilabel_margin_loss", saves=("x",))
def multilabel_margin_loss_op(x: Any, *, target: np.ndarray, reduction: str,
                              out_shape: tuple[int, ...]) -> Any:
    a = np.asarray(x)
    x2 = a.reshape(-1, a.shape[-1])
    t2 = target.reshape(x2.shape)
    n, c = x2.shape
    per = np.zeros(n, dtype=a.dtype)
    for i in range(n):
        ys: list[int] = []
        for v in t2[i]:
            if v < 0:
                break
            ys.append(int(v))
        is_t = np.zeros(c, dtype=bool)
        is_t[ys] = True
        s = a.dtype.type(0)
        for j in ys:
            z = a.dtype.type(1) - x2[i, j] + x2[i]
            s = s + np.where((z > 0) & ~is_t, z, 0).sum(dtype=a.dtype)
        per[i] = s / a.dtype.type(c)
    return _reduce_np(per, reduction).reshape(out_shape if reduction == "none" else ())


@multilabel_margin_loss_op.defvjp
def _(g: Tensor, x: Tensor, target: np.ndarray, reduction: str,
      out_shape: tuple[int, ...]) -> Any:
    shape = x._data.shape
    x2 = x._data.reshape(-1, shape[-1])
    n = x2.shape[0]
    coef = make(_mlm_coef(x2, target.reshape(x2.shape)))
    return (reshape(multiply(reshape(_per_back(g, n, reduction), (n, 1)), coef), shape),)


@multilabel_margin_loss_op.defjvp
def _(dx: Tensor, x: Tensor, *, out: Any, target: np.ndarray, reduction: str,
      out_shape: tuple[int, ...]) -> Any:
    shape = x._data.shape
    x2 = x._data.reshape(-1, shape[-1])
    coef = make(_mlm_coef(x2, target.reshape(x2.shape)))
    per = _sum(multiply(coef, reshape(dx, x2.shape)), axis=1)
    return _per_reduce(per, out_shape, reduction)


@multilabel_margin_loss_op.defbatch
def _(batched: tuple[bool, ...], x: Tensor, **attrs: Any) -> Any:
    return _stack([multilabel_margin_loss_op(_getitem(x, index=(i,)), **attrs)
                   for i in range(x._data.shape[0])])


__all__ += ["multi_margin_loss_op", "multilabel_margin_loss_op"]


# the window maxima picked by fractional max pooling: a gather (scatter-add back),
# which tapegrad.torch names as PyTorch does
fractional_max_pool2d_op = _getitem
__all__ += ["fractional_max_pool2d_op"]


# ------------------------------------------------------------------ grid_sample (2-D)
def _grid_coord(g: np.ndarray, size: int, padding: str, align: bool
                ) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates of normalised grid values and their derivative (piecewise
    constant): ATen's unnormalize, then border clipping or reflection."""
    dt = g.dtype.type
    if align:
        c = (g + dt(1)) / dt(2) * dt(size - 1)
        d = np.full(g.shape, (size - 1) / 2, dtype=g.dtype)
    else:
        c = ((g + dt(1)) * dt(size) - dt(1)) / dt(2)
        d = np.full(g.shape, size / 2, dtype=g.dtype)

    def clip(c: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        hi = dt(size - 1)
        inside = (c > 0) & (c < hi)
        return np.where(c <= 0, dt(0), np.where(c >= hi, hi, c)), np.where(inside, d, dt(0))

    if padding == "border":
        c, d = clip(c, d)
    elif padding == "reflection":
        tl, th = (0, 2 * (size - 1)) if align else (-1, 2 * size - 1)
        if tl == th:
            c, d = np.zeros_like(c), np.zeros_like(d)
        else:
            lo, span = dt(tl / 2), dt((th - tl) / 2)
            sgn = np.where(c < lo, dt(-1), dt(1))
            a = np.abs(c - lo)
            flips = np.floor(a / span)
            extra = a - flips * span
            even = (flips % 2) == 0
            c = np.where(even, extra + lo, -extra + (span + lo))
            d = d * np.where(even, sgn, -sgn)
        c, d = clip(c, d)
    return c.astype(g.dtype), d.astype(g.dtype)


class _GridPlan:
    """The sampling geometry of one grid: coordinates, corner indices, masks."""

    def __init__(self, shape: tuple[int, ...], grid: np.ndarray, mode: str, padding: str,
                 align: bool) -> None:
        n, _, h, w = shape
        self.h, self.w, self.mode = h, w, mode
        self.ix, self.dix = _grid_coord(grid[..., 0], w, padding, align)
        self.iy, self.diy = _grid_coord(grid[..., 1], h, padding, align)
        self.nidx = np.arange(n).reshape(n, 1, 1)
        with np.errstate(invalid="ignore"):
            if mode == "nearest":
                self.x0 = np.rint(self.ix).astype(np.int64)
                self.y0 = np.rint(self.iy).astype(np.int64)
            else:
                self.x0 = np.floor(self.ix).astype(np.int64)
                self.y0 = np.floor(self.iy).astype(np.int64)

    def corner(self, dy: int, dx: int) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
        yi, xi = self.y0 + dy, self.x0 + dx
        inb = (xi >= 0) & (xi < self.w) & (yi >= 0) & (yi < self.h)
        return (self.nidx, np.clip(yi, 0, self.h - 1), np.clip(xi, 0, self.w - 1)), inb


_CORNERS = ((0, 0), (0, 1), (1, 0), (1, 1))


def _weights(tx: Any, ty: Any, dy: int, dx: int) -> tuple[Any, Any, Any]:
    """A corner's bilinear weight and its derivatives in tx and ty (any tensors/arrays)."""
    wx = tx if dx else subtract(1.0, tx)
    wy = ty if dy else subtract(1.0, ty)
    return multiply(wx, wy), (wy if dx else _neg(wy)), (wx if dy else _neg(wx))


@defop("grid_sampler_2d", saves=("x", "grid"),
       needs=True)
def grid_sampler_2d_op(x: Any, grid: Any, *, mode: str, padding: str, align: bool) -> Any:
    a = np.asarray(x)
    pl = _GridPlan(a.shape, np.asarray(grid), mode, padding, align)
    xt = a.transpose(0, 2, 3, 1)
    if mode == "nearest":
        idx, inb = pl.corner(0, 0)
        return (xt[idx] * inb[..., None]).transpose(0, 3, 1, 2).astype(a.dtype, copy=False)
    tx = pl.ix - pl.x0.astype(a.dtype)
    ty = pl.iy - pl.y0.astype(a.dtype)
    out = np.zeros(xt.shape[:1] + tx.shape[1:] + xt.shape[3:], dtype=a.dtype)
    one = a.dtype.type(1)
    for dy, dx in _CORNERS:
        idx, inb = pl.corner(dy, dx)
        wgt = (tx if dx else one - tx) * (ty if dy else one - ty)
        out = out + xt[idx] * (wgt * inb)[..., None]
    return out.transpose(0, 3, 1, 2).astype(a.dtype, copy=False)


def _txty(grid: Tensor, pl: _GridPlan) -> tuple[Tensor, Tensor]:
    """``ix - x0`` and ``iy - y0`` as ops of the grid (locally linear in it)."""
    dt = pl.ix.dtype
    gx, gy = _getitem(grid, index=(Ellipsis, 0)), _getitem(grid, index=(Ellipsis, 1))
    cx = pl.ix - pl.x0.astype(dt) - pl.dix * grid._data[..., 0]
    cy = pl.iy - pl.y0.astype(dt) - pl.diy * grid._data[..., 1]
    return (add(multiply(gx, make(pl.dix)), make(cx.astype(dt))),
            add(multiply(gy, make(pl.diy)), make(cy.astype(dt))))


@grid_sampler_2d_op.defvjp
def _(g: Tensor, x: Tensor, grid: Tensor, mode: str, padding: str, align: bool,
      needs: tuple[bool, ...]) -> Any:
    pl = _GridPlan(x._data.shape, grid._data, mode, padding, align)
    gt = transpose(g, (0, 2, 3, 1))  # (N, Ho, Wo, C)
    xt = transpose(x, (0, 2, 3, 1))
    shape = xt._data.shape
    dt = g._data.dtype
    if mode == "nearest":
        idx, inb = pl.corner(0, 0)
        gx = index_add_zeros(multiply(gt, make(inb[..., None].astype(dt))), index=idx,
                             shape=shape) if needs[0] else None
        ggrid = make(np.zeros(grid._data.shape, dtype=dt)) if needs[1] else None
        return (None if gx is None else transpose(gx, (0, 3, 1, 2))), ggrid
    tx, ty = _txty(grid, pl)
    gxs: Any = None
    dgx: Any = None
    dgy: Any = None
    for dy, dx in _CORNERS:
        idx, inb = pl.corner(dy, dx)
        m = make(inb.astype(dt))
        wgt, dwx, dwy = _weights(tx, ty, dy, dx)
        if needs[0]:
            term = index_add_zeros(multiply(gt, expand_dims(multiply(wgt, m), -1)), index=idx,
                                   shape=shape)
            gxs = term if gxs is None else add(gxs, term)
        if needs[1]:
            gv = multiply(_sum(multiply(gt, _getitem(xt, index=idx)), axis=-1), m)
            tx_ = multiply(gv, dwx)
            ty_ = multiply(gv, dwy)
            dgx = tx_ if dgx is None else add(dgx, tx_)
            dgy = ty_ if dgy is None else add(dgy, ty_)
    ggrid = None
    if needs[1]:
        ggrid = _stack([multiply(dgx, make(pl.dix)), multiply(dgy, make(pl.diy))], axis=-1)
    return (None if gxs is None else transpose(gxs, (0, 3, 1, 2))), ggrid


def _grid_jvp(dxin: Any, dgrid: Any, x: Any, grid: Any, *, out: Any, mode: str, padding: str,
              align: bool) -> Any:
    pl = _GridPlan(x._data.shape, grid._data, mode, padding, align)
    dt = x._data.dtype
    xt = transpose(x, (0, 2, 3, 1))
    dxt = None if dxin is None else transpose(dxin, (0, 2, 3, 1))
    acc: Any = None
    if mode == "nearest":
        if dxt is None:
            return None
        idx, inb = pl.corner(0, 0)
        acc = multiply(_getitem(dxt, index=idx), make(inb[..., None].astype(dt)))
        return transpose(acc, (0, 3, 1, 2))
    tx, ty = _txty(grid, pl)
    if dgrid is not None:
        dtx = multiply(_getitem(dgrid, index=(Ellipsis, 0)), make(pl.dix))
        dty = multiply(_getitem(dgrid, index=(Ellipsis, 1)), make(pl.diy))
    for dy, dx in _CORNERS:
        idx, inb = pl.corner(dy, dx)
        m = make(inb.astype(dt))
        wgt, dwx, dwy = _weights(tx, ty, dy, dx)
        if dxt is not None:
            t = multiply(_getitem(dxt, index=idx), expand_dims(multiply(wgt, m), -1))
            acc = t if acc is None else add(acc, t)
        if dgrid is not None:
            dw = multiply(add(multiply(dwx, dtx), multiply(dwy, dty)), m)
            t = multiply(_getitem(xt, index=idx), expand_dims(dw, -1))
            acc = t if acc is None else add(acc, t)
    return None if acc is None else transpose(acc, (0, 3, 1, 2))


grid_sampler_2d_op.defjvp(_grid_jvp)


@grid_sampler_2d_op.defbatch
def _(batched: tuple[bool, ...], x: Tensor, grid: Tensor, **attrs: Any) -> Any:
    n = (x if batched[0] else grid)._data.shape[0]
    return _stack([grid_sampler_2d_op(_getitem(x, index=(i,)) if batched[0] else x,
                                      _getitem(grid, index=(i,)) if batched[1] else grid,
                                      **attrs) for i in range(n)])


__all__ += ["grid_sampler_2d_op"]


@ctc_loss_op.defbatch
def _(batched: tuple[bool, ...], x: Tensor, **attrs: Any) -> Any:
    return _stack([ctc_loss_op(_getitem(x, index=(i,)), **attrs)
                   for i in range(x._data.shape[0])])


# ------------------------------------------------------------------ pdist
def _pdist_np(a: np.ndarray, p: float) -> np.ndarray:
    i, j = np.triu_indices(a.shape[0], 1)
    d = np.abs(a[i] - a[j])
    if p == 0:
        return (d != 0).sum(-1).astype(a.dtype)
    if math.isinf(p):
        return d.max(-1, initial=0).astype(a.dtype)
    if p == 1:
        return d.sum(-1).astype(a.dtype)
    if p == 2:
        return np.sqrt((d * d).sum(-1)).astype(a.dtype)
    return ((d ** a.dtype.type(p)).sum(-1) ** a.dtype.type(1 / p)).astype(a.dtype)


@defop("pdist", saves=("x", "out"))
def pdist_op(x: Any, *, p: float) -> Any:
    return _pdist_np(np.asarray(x), p)


def _pdist_coef(x: Tensor, out: Any, p: float) -> tuple[Tensor, np.ndarray, np.ndarray]:
    """d dist_k / d (x_i - x_j) for each pair k = (i, j), in tapegrad ops (ATen's choices:
    0 where the distance is 0)."""
    from .elementwise import abs as _abs
    from .elementwise import power, sign

    n = x._data.shape[0]
    i, j = np.triu_indices(n, 1)
    d = subtract(_getitem(x, index=(i,)), _getitem(x, index=(j,)))
    dist = out if isinstance(out, Tensor) else make(np.asarray(out))
    dist_c = reshape(dist, (-1, 1))
    zero = make(np.asarray(dist._data).reshape(-1, 1) == 0)
    if p == 0:
        return multiply(d, 0.0), i, j
    if p == 1:
        return sign(d), i, j
    safe = where(zero, 1.0, dist_c)
    if math.isinf(p):
        hit = make(np.abs(np.asarray(d._data)) == np.asarray(dist._data).reshape(-1, 1))
        return where(zero, 0.0, multiply(sign(d), hit)), i, j
    if p == 2:
        return where(zero, 0.0, divide(d, safe)), i, j
    num = multiply(sign(d), power(_abs(d), p - 1))
    return where(zero, 0.0, divide(num, power(safe, p - 1))), i, j


@pdist_op.defvjp
def _(g: Tensor, x: Tensor, out: Any, p: float) -> Any:
    coef, i, j = _pdist_coef(x, out, p)
    gk = multiply(reshape(g, (-1, 1)), coef)
    shape = x._data.shape
    return (subtract(index_add_zeros(gk, index=(i,), shape=shape),
                     index_add_zeros(gk, index=(j,), shape=shape)),)


@pdist_op.defjvp
def _(dx: Tensor, x: Tensor, *, out: Any, p: float) -> Any:
    coef, i, j = _pdist_coef(x, out, p)
    dd = subtract(_getitem(dx, index=(i,)), _getitem(dx, index=(j,)))
    return _sum(multiply(coef, dd), axis=-1)


@pdist_op.defbatch
def _(batched: tuple[bool, ...], x: Tensor, *, p: float) -> Any:
    return _stack([pdist_op(_getitem(x, index=(k,)), p=p) for k in range(x._data.shape[0])])


__all__ += ["pdist_op"]
