"""Normalization: batch, layer, group, instance and RMS norm; running statistics.

All are composites of primitives (mean, subtract, multiply, sqrt ...), so their
VJPs, JVPs and batching rules are those of the primitives, and every
derivative order comes for free.  The statistics are the biased ones (both
frameworks normalise with the biased variance); the running estimates follow
each framework's convention, passed as arguments:

- PyTorch: ``running = (1 - momentum) * running + momentum * batch`` with the
  unbiased batch variance (``momentum=0.1``);
- Keras: ``moving = momentum * moving + (1 - momentum) * batch`` with the
  biased variance (``momentum=0.99``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.errors import with_hint
from .._core.tensor import Tensor
from ._raw import data
from .elementwise import add, divide, multiply, sqrt, subtract
from .reduce import mean
from .shape import reshape

__all__ = ["normalize_moments", "batch_norm", "layer_norm", "group_norm", "instance_norm",
           "rms_norm", "update_running", "channel_shape"]


def channel_shape(ndim: int, axis: int, c: int) -> tuple[int, ...]:
    """Shape that broadcasts a per-channel vector of size ``c`` along ``axis``."""
    s = [1] * ndim
    s[axis] = c
    return tuple(s)


def _affine(y: Any, weight: Any, bias: Any, shape: tuple[int, ...] | None) -> Any:
    if weight is not None:
        y = multiply(y, weight if shape is None else reshape(weight, shape))
    if bias is not None:
        y = add(y, bias if shape is None else reshape(bias, shape))
    return y


def normalize_moments(x: Any, mean_: Any, var: Any, eps: float) -> Tensor:
    """``(x - mean) / sqrt(var + eps)``."""
    return divide(subtract(x, mean_), sqrt(add(var, eps)))


def batch_norm(x: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any, *,
               training: bool, eps: float, axis: int = 1) -> tuple[Tensor, Any, Any]:
    """Batch normalisation over every axis but ``axis`` (the channel axis).

    Returns the output and, when ``training``, the batch mean and biased
    variance as tensors (the caller updates its running statistics with
    :func:`update_running`); in eval mode the running statistics are used
    and the two are ``None``.

    Examples
    --------
    >>> import numpy as np, tapegrad as tg
    >>> from tapegrad.ops.norm import batch_norm
    >>> y, m, v = batch_norm(tg.tensor(np.array([[1.0], [3.0]])), None, None, None, None,
    ...                      training=True, eps=0.0)
    >>> y._data.ravel().tolist(), m._data.tolist(), v._data.tolist()
    ([-1.0, 1.0], [2.0], [1.0])
    """
    xs = data(x).shape
    nd = len(xs)
    ax = axis % nd
    cshape = channel_shape(nd, ax, xs[ax])
    if training:
        red = tuple(i for i in range(nd) if i != ax)
        n = int(np.prod([xs[i] for i in red]))
        if n <= 1:
            raise ValueError(with_hint(
                f"Expected more than 1 value per channel when training, got input size "
                f"{list(xs)}", "use a batch of more than one sample, or eval mode"))
        m = mean(x, axis=red, keepdims=True)
        c = subtract(x, m)
        v = mean(multiply(c, c), axis=red, keepdims=True)
        y = divide(c, sqrt(add(v, eps)))
        out = _affine(y, weight, bias, cshape)
        return out, reshape(m, (xs[ax],)), reshape(v, (xs[ax],))
    y = normalize_moments(x, reshape(running_mean, cshape), reshape(running_var, cshape), eps)
    return _affine(y, weight, bias, cshape), None, None


def update_running(running: np.ndarray, batch: np.ndarray, momentum: float,
                   on_new: bool) -> None:
    """Update a running statistic in place.

    ``on_new`` (PyTorch): ``(1 - m) running + m batch``; else (Keras):
    ``m running + (1 - m) batch``.
    """
    b = np.asarray(batch, dtype=running.dtype)
    if on_new:
        running *= 1.0 - momentum
        running += momentum * b
    else:
        running *= momentum
        running += (1.0 - momentum) * b


def layer_norm(x: Any, axes: tuple[int, ...], weight: Any, bias: Any, eps: float) -> Tensor:
    """Normalise over ``axes`` (the trailing ones for PyTorch), then scale and shift."""
    m = mean(x, axis=axes, keepdims=True)
    c = subtract(x, m)
    v = mean(multiply(c, c), axis=axes, keepdims=True)
    return _affine(divide(c, sqrt(add(v, eps))), weight, bias, None)


def group_norm(x: Any, groups: int, weight: Any, bias: Any, eps: float,
               axis: int = 1) -> Tensor:
    """Group norm: channels (on ``axis``) split in ``groups``, each normalised with its
    sample's statistics over the group's channels and all spatial positions."""
    xs = data(x).shape
    nd = len(xs)
    ax = axis % nd
    c = xs[ax]
    if c % groups:
        raise ValueError(with_hint(
            f"Expected number of channels in input to be divisible by num_groups, but got "
            f"input of shape {list(xs)} and num_groups={groups}",
            f"{c} channels cannot be split in {groups} groups"))
    gs = xs[:ax] + (groups, c // groups) + xs[ax + 1:]
    xg = reshape(x, gs)
    red = tuple(i for i in range(1, len(gs)) if i != ax)
    y = reshape(layer_norm(xg, red, None, None, eps), xs)
    return _affine(y, weight, bias, channel_shape(nd, ax, c))


def instance_norm(x: Any, weight: Any, bias: Any, eps: float, axis: int = 1) -> Tensor:
    """Instance norm: each sample's channel normalised over its spatial positions."""
    nd = len(data(x).shape)
    ax = axis % nd
    red = tuple(i for i in range(1, nd) if i != ax)
    y = layer_norm(x, red, None, None, eps)
    return _affine(y, weight, bias, channel_shape(nd, ax, data(x).shape[ax]))


def rms_norm(x: Any, axes: tuple[int, ...], weight: Any, eps: float) -> Tensor:
    """``x / sqrt(mean(x^2) + eps) * weight`` over ``axes``."""
    ms = mean(multiply(x, x), axis=axes, keepdims=True)
    return _affine(divide(x, sqrt(add(ms, eps))), weight, None, None)
