"""Neural-network functions.  Composites of primitives (so every derivative
order comes for free) unless stability says otherwise (noted inline)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.registry import defop
from .._core.tensor import Tensor, make
from ._raw import data, raw, wrap
from ._tf_eigen import EXACT_SUMS, exp_f32, inner_sum_f32
from ._tf_softmax import _glibc_expf
from .elementwise import (
    abs,
    add,
    exp,
    log1p,
    multiply,
    negative,
    relu,
    subtract,
)
from .fused import gelu_op, mse_loss_op, nll_loss_op, nll_traced_op, softplus_op
from .reduce import log_softmax, log_softmax_op, mean, sum
from .shape import broadcast_to, expand_dims, moveaxis


def gelu(x: Any, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit: ``x * Phi(x)`` (or the tanh approximation); one node."""
    if approximate not in ("none", "tanh"):
        raise hinted(ValueError(with_hint(f"approximate argument must be either none or tanh, got "
                                   f"{approximate!r}", "use 'none' or 'tanh'")))
    return gelu_op(x, approximate=approximate)


def softplus(x: Any, beta: float = 1.0, threshold: float | None = 20.0) -> Tensor:
    """``log(1 + exp(beta x)) / beta``, linear above ``threshold`` (PyTorch) if given; one node."""
    return softplus_op(x, beta=float(beta), threshold=None if threshold is None else float(threshold))


def _check_same_shape(a: Any, b: Any, what: str) -> None:
    sa = a._data.shape if isinstance(a, Tensor) else np.shape(a)
    sb = b._data.shape if isinstance(b, Tensor) else np.shape(b)
    if sa != sb:
        raise hinted(ValueError(
            with_hint(
                f"Using a target size ({list(sb)}) that is different to the input size "
                f"({list(sa)}) is likely to lead to incorrect results due to broadcasting.",
                f"{what}: pass input and target of one shape",
            )
        ))


def mse_loss(pred: Any, target: Any, reduction: str = "mean") -> Tensor:
    """Mean squared error (one node: ``ops.fused.mse_loss_op``)."""
    if reduction not in ("mean", "sum", "none"):
        _reduce(pred, reduction)  # raises
    return mse_loss_op(pred, target, reduction=reduction)


def _reduce(v: Any, reduction: str) -> Tensor:
    if reduction == "mean":
        return mean(v)
    if reduction == "sum":
        return sum(v)
    if reduction == "none":
        return v
    raise hinted(ValueError(with_hint(f"{reduction} is not a valid value for reduction",
                               "use 'mean', 'sum' or 'none'")))


def cross_entropy(logits: Any, target: Any, axis: int = -1, reduction: str = "mean") -> Tensor:
    """Softmax cross-entropy of ``logits`` with integer class ``target`` or class probabilities."""
    lp = log_softmax(logits, axis=axis)
    if isinstance(target, Tensor) and target._lvl is not None and target._lvl.active \
            and target._data.dtype.kind in "iu" and lp._data.ndim:
        # a per-example target (a transform's tracer): its values are not known here, so
        # the nll op that takes the targets as an input (one op, batched as one call)
        if reduction not in ("mean", "sum", "none"):
            _reduce(lp, reduction)  # raises
        return nll_traced_op(lp, target, axis=axis % lp._data.ndim, lead=0, weight=None,
                             ignore_index=None, reduction=reduction)
    t = target._data if isinstance(target, Tensor) else np.asarray(target)
    if t.dtype.kind in "iu":
        c = lp._data.shape[axis]
        if t.size and (t.min() < 0 or t.max() >= c):
            raise hinted(IndexError(
                with_hint(
                    f"Target {int(t.max()) if t.max() >= c else int(t.min())} is out of bounds.",
                    f"class indices must be in [0, {c - 1}]",
                )
            ))
        # each target's log-probability along the class axis: the one nll primitive
        # (PyTorch's layout: classes on axis 1, or axis 0 of a single sample)
        if reduction not in ("mean", "sum", "none"):
            _reduce(lp, reduction)  # raises
        nd = lp._data.ndim
        if nd > 1 and axis % nd != 1:
            lp = moveaxis(lp, axis % nd, 1)
        return nll_loss_op(lp, target=np.asarray(t), weight=None, ignore_index=-100,
                           reduction=reduction)
    per = negative(sum(multiply(target, lp), axis=axis))
    return _reduce(per, reduction)


def sigmoid_cross_entropy_with_logits(labels: Any, logits: Any) -> Tensor:
    """``max(x, 0) - x z + log(1 + exp(-|x|))`` (TensorFlow's stable form)."""
    return add(subtract(relu(logits), multiply(logits, labels)),
               log1p(exp(negative(abs(logits)))))


def softmax_cross_entropy_with_logits(labels: Any, logits: Any, axis: int = -1,
                                      kernel: str = "") -> Tensor:
    """``-sum(labels * log_softmax(logits))`` along ``axis``.

    One op (one node): its forward and VJP give the values of that composite.
    ``kernel="tf"``: TensorFlow's gradient, ``softmax(logits) - labels`` (its kernel's
    backprop, which assumes labels that sum to one), labels broadcast to the logits.
    """
    shape = np.shape(data(logits))
    if kernel and shape and -len(shape) <= axis < len(shape) and \
            np.shape(data(labels)) != shape:
        labels = broadcast_to(labels, shape)
    if not shape or np.shape(data(labels)) != shape or not -len(shape) <= axis < len(shape):
        # broadcasting labels (or a bad axis, for the composite's error): the composite
        return negative(sum(multiply(labels, log_softmax(logits, axis=axis)), axis=axis))
    if kernel:
        return _softmax_xent(logits, labels, axis=axis % len(shape), kernel=kernel)
    return _softmax_xent(logits, labels, axis=axis % len(shape))


@defop("softmax_cross_entropy", saves=("logits", "labels"), needs=True)
def _softmax_xent(logits: Any, labels: Any, *, axis: int, kernel: str = "") -> Any:
    lp = log_softmax_op.fwd(logits, axis=axis)
    return np.negative(np.sum(np.multiply(labels, lp), axis=(axis,)))


def _tf_xent_backprop(x: np.ndarray, z: np.ndarray, lp: np.ndarray, axis: int) -> np.ndarray:
    """TensorFlow's (Sparse)SoftmaxCrossEntropyWithLogits backprop, ``prob - labels``: in
    float32 over the last axis its kernel's bits, ``e / sum(e)`` with ``e`` its Exp kernel of
    ``x - max`` and the sum Eigen's inner reduction (ops/_tf_eigen.py); else ``exp(lp)``."""
    if x.dtype == np.float32 and z.dtype == np.float32 and axis == x.ndim - 1 and x.size \
            and EXACT_SUMS[0]:  # (costly: with TensorFlow's summation orders only)
        with np.errstate(all="ignore"):
            sh = np.subtract(x, np.max(x, axis=axis, keepdims=True))
            e = exp_f32(sh)  # the numerator: Exp over the whole tensor's packets
            # the sum's exps are evaluated inside its row reduction: each row's whole
            # packets by Eigen's pexp, the rest of the row by the C library's expf
            c = sh.shape[-1]
            k = c - c % 8
            er = np.concatenate(
                [exp_f32(np.ascontiguousarray(sh[..., :k])),
                 _glibc_expf(sh[..., k:].reshape(-1)).reshape(sh.shape[:-1] + (c - k,))],
                axis=-1)
            ssum = inner_sum_f32(er, (axis,), True, False)
            if ssum is None:  # one class: nothing added
                ssum = er
            return np.subtract(np.divide(e, ssum), z)
    return np.subtract(np.exp(lp), z)


@_softmax_xent.defvjp
def _(g: Tensor, logits: Any, labels: Any, axis: int, needs: tuple[bool, ...],
      kernel: str = "") -> Any:
    # loss = -sum(z * lp): dz = -g lp; dlp = -g z, and through log_softmax
    # dlogits = dlp - exp(lp) * sum(dlp); TensorFlow's: g (exp(lp) - z)
    dx = dz = None
    if raw():
        ga, za = g._data, data(labels)
        lp = np.asarray(log_softmax_op.fwd(data(logits), axis=axis))
        ng = np.expand_dims(np.negative(ga), axis)
        if needs[0] and kernel:
            dx = wrap(np.multiply(np.expand_dims(ga, axis), _tf_xent_backprop(
                data(logits), za, lp, axis)), g)
        elif needs[0]:
            dlp = np.asarray(np.multiply(ng, za))
            s = np.sum(dlp, axis=axis, keepdims=True)
            e = np.asarray(np.exp(lp))
            e = np.multiply(e, s, out=e) if e.dtype == np.result_type(e, s) else np.multiply(e, s)
            dx = wrap(np.subtract(dlp, e), g)
        if needs[1]:
            dz = wrap(np.multiply(ng, lp), g)
        return dx, dz
    lpt = log_softmax(logits, axis=axis)
    ngt = expand_dims(negative(g), axis)
    if needs[0] and kernel:
        dx = multiply(expand_dims(g, axis), subtract(exp(lpt), labels))
    elif needs[0]:
        dlpt = multiply(ngt, labels)
        dx = subtract(dlpt, multiply(exp(lpt), sum(dlpt, axis=axis, keepdims=True)))
    if needs[1]:
        dz = multiply(ngt, lpt)
    return dx, dz


def _const(v: Any) -> Tensor:
    return make(np.asarray(v))


# ================================================================ forward-mode and batching rules
@_softmax_xent.defjvp
def _(dx: Any, dz: Any, logits: Any, labels: Any, *, out: Any, axis: int,
      kernel: str = "") -> Any:
    # d(-sum z lp) = -sum(dz lp) - sum(z dlp), dlp = dx - sum(dx softmax);
    # TensorFlow's (the transpose of its gradient): sum((softmax - z) dx)
    lp = log_softmax(logits, axis=axis)
    t = None
    if dz is not None:
        t = negative(sum(multiply(dz, lp), axis=axis))
    if dx is not None and kernel:
        tx = sum(multiply(subtract(exp(lp), labels), dx), axis=axis)
        t = tx if t is None else add(t, tx)
    elif dx is not None:
        dlp = subtract(dx, sum(multiply(dx, exp(lp)), axis=axis, keepdims=True))
        tx = negative(sum(multiply(labels, dlp), axis=axis))
        t = tx if t is None else add(t, tx)
    return t


@_softmax_xent.defbatch
def _(batched: tuple[bool, ...], logits: Any, labels: Any, *, axis: int,
      kernel: str = "") -> Any:
    n = next(np.shape(data(v))[0] for v, b in zip((logits, labels), batched) if b)
    vals = [v if b else broadcast_to(v, (n,) + np.shape(data(v)))
            for v, b in zip((logits, labels), batched)]
    if kernel:
        return _softmax_xent(vals[0], vals[1], axis=axis + 1, kernel=kernel)
    return _softmax_xent(vals[0], vals[1], axis=axis + 1)
