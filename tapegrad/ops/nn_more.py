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

from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.registry import defop
from .._core.tensor import Tensor, make
from .elementwise import multiply
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


@defop("ctc_loss", saves=("x", "out"), grad_name="CtcLossBackward0")
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
