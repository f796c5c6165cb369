"""Neural-network functions.  Composites of primitives (so every derivative
order comes for free) unless stability says otherwise (noted inline)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.errors import with_hint
from .._core.tensor import Tensor, make
from .elementwise import (
    abs,
    add,
    erf,
    exp,
    greater,
    log1p,
    multiply,
    negative,
    relu,
    subtract,
    tanh,
    where,
)
from .reduce import log_softmax, mean, sum
from .shape import getitem


def gelu(x: Any, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit: ``x * Phi(x)`` (or the tanh approximation)."""
    if approximate == "tanh":
        c = math.sqrt(2.0 / math.pi)
        inner = multiply(add(x, multiply(multiply(multiply(x, x), x), 0.044715)), c)
        return multiply(multiply(x, 0.5), add(tanh(inner), 1.0))
    if approximate != "none":
        raise ValueError(with_hint(f"approximate argument must be either none or tanh, got "
                                   f"{approximate!r}", "use 'none' or 'tanh'"))
    return multiply(multiply(x, 0.5), add(erf(multiply(x, 1.0 / math.sqrt(2.0))), 1.0))


def softplus(x: Any, beta: float = 1.0, threshold: float | None = 20.0) -> Tensor:
    """``log(1 + exp(beta x)) / beta``, linear above ``threshold`` (PyTorch) if given."""
    bx = multiply(x, beta) if beta != 1 else x
    # stable form: log1p(exp(-|bx|)) + max(bx, 0)
    sp = add(log1p(exp(negative(abs(bx)))), relu(bx))
    if beta != 1:
        sp = multiply(sp, 1.0 / beta)
    if threshold is not None:
        sp = where(greater(bx, threshold), x, sp)
    return sp


def _check_same_shape(a: Any, b: Any, what: str) -> None:
    sa = a._data.shape if isinstance(a, Tensor) else np.shape(a)
    sb = b._data.shape if isinstance(b, Tensor) else np.shape(b)
    if sa != sb:
        raise ValueError(
            with_hint(
                f"Using a target size ({list(sb)}) that is different to the input size "
                f"({list(sa)}) is likely to lead to incorrect results due to broadcasting.",
                f"{what}: pass input and target of one shape",
            )
        )


def mse_loss(pred: Any, target: Any, reduction: str = "mean") -> Tensor:
    """Mean squared error."""
    d = subtract(pred, target)
    sq = multiply(d, d)
    return _reduce(sq, reduction)


def _reduce(v: Any, reduction: str) -> Tensor:
    if reduction == "mean":
        return mean(v)
    if reduction == "sum":
        return sum(v)
    if reduction == "none":
        return v
    raise ValueError(with_hint(f"{reduction} is not a valid value for reduction",
                               "use 'mean', 'sum' or 'none'"))


def cross_entropy(logits: Any, target: Any, axis: int = -1, reduction: str = "mean") -> Tensor:
    """Softmax cross-entropy of ``logits`` with integer class ``target`` or class probabilities."""
    lp = log_softmax(logits, axis=axis)
    t = target._data if isinstance(target, Tensor) else np.asarray(target)
    if t.dtype.kind in "iu":
        c = lp._data.shape[axis]
        if t.size and (t.min() < 0 or t.max() >= c):
            raise IndexError(
                with_hint(
                    f"Target {int(t.max()) if t.max() >= c else int(t.min())} is out of bounds.",
                    f"class indices must be in [0, {c - 1}]",
                )
            )
        # pick each target's log-probability along the class axis (any number of dims)
        idx: list[Any] = list(np.indices(t.shape, sparse=True))
        idx.insert(axis % lp._data.ndim, t)
        picked = getitem(lp, tuple(idx))
        return _reduce(negative(picked), reduction)
    per = negative(sum(multiply(target, lp), axis=axis))
    return _reduce(per, reduction)


def sigmoid_cross_entropy_with_logits(labels: Any, logits: Any) -> Tensor:
    """``max(x, 0) - x z + log(1 + exp(-|x|))`` (TensorFlow's stable form)."""
    return add(subtract(relu(logits), multiply(logits, labels)),
               log1p(exp(negative(abs(logits)))))


def softmax_cross_entropy_with_logits(labels: Any, logits: Any, axis: int = -1) -> Tensor:
    """``-sum(labels * log_softmax(logits))`` along ``axis``."""
    return negative(sum(multiply(labels, log_softmax(logits, axis=axis)), axis=axis))


def _const(v: Any) -> Tensor:
    return make(np.asarray(v))
