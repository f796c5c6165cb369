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

from .._core.errors import hinted, with_hint
from .._core.registry import defop
from .._core.tensor import Tensor, make
from ._raw import data, raw, wrap
from .elementwise import add, divide, multiply, sqrt, subtract
from .reduce import mean
from .reduce import sum as _sum
from .shape import reshape, stack

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
            raise hinted(ValueError(with_hint(
                f"Expected more than 1 value per channel when training, got input size "
                f"{list(xs)}", "use a batch of more than one sample, or eval mode")))
        out = _bn_train(x, weight, bias, axis=ax, eps=float(eps))
        xa = np.asarray(data(x))
        # the statistics for the running estimates (not differentiated)
        return out, make(xa.mean(axis=red)), make(xa.var(axis=red))
    y = normalize_moments(x, reshape(running_mean, cshape), reshape(running_var, cshape), eps)
    return _affine(y, weight, bias, cshape), None, None


# ---------------------------------------------------------------- batch norm (training)
# One primitive rather than the composite: one node (PyTorch's NativeBatchNormBackward0),
# one pass for the statistics and the classic closed-form backward; the VJP is written in
# tapegrad ops, so it is differentiable again.
def _bn_parts(x: Any, axis: int, eps: float) -> tuple[Any, Any, tuple[int, ...], tuple[int, ...]]:
    """``xhat`` and ``1 / sqrt(var + eps)`` (in tapegrad ops), the reduced axes, the
    per-channel broadcast shape."""
    nd = len(data(x).shape)
    red = tuple(i for i in range(nd) if i != axis)
    cshape = channel_shape(nd, axis, data(x).shape[axis])
    m = mean(x, axis=red, keepdims=True)
    c = subtract(x, m)
    inv = divide(1.0, sqrt(add(mean(multiply(c, c), axis=red, keepdims=True), eps)))
    return multiply(c, inv), inv, red, cshape


@defop("batch_norm_train", saves=("x", "w"), needs=True)
def _bn_train(x: Any, w: Any = None, b: Any = None, *, axis: int, eps: float) -> Any:
    """``(x - mean) / sqrt(var + eps) * w + b`` with the batch's statistics per channel."""
    x = np.asarray(x)
    red = tuple(i for i in range(x.ndim) if i != axis)
    cshape = channel_shape(x.ndim, axis, x.shape[axis])
    m = x.mean(axis=red, keepdims=True)
    c = x - m
    v = np.mean(c * c, axis=red, keepdims=True)
    scale = 1.0 / np.sqrt(v + eps)
    if w is not None:
        scale = scale * np.asarray(w).reshape(cshape)
    y = np.multiply(c, scale.astype(x.dtype, copy=False), out=c)
    if b is not None:
        y += np.asarray(b, dtype=x.dtype).reshape(cshape)
    return y


@_bn_train.defvjp
def _(g: Tensor, x: Any, w: Any, axis: int, eps: float, needs: tuple[bool, ...]) -> Any:
    # y = w xhat + b: gb = sum g, gw = sum g xhat,
    # gx = inv (gw' - mean(gw') - xhat mean(gw' xhat)) with gw' = g w
    need_b = len(needs) > 2 and needs[2]
    if raw():
        xa = np.asarray(data(x))
        ga = g._data
        red = tuple(i for i in range(xa.ndim) if i != axis)
        cshape = channel_shape(xa.ndim, axis, xa.shape[axis])
        m = xa.mean(axis=red, keepdims=True)
        c = xa - m
        inv = 1.0 / np.sqrt(np.mean(c * c, axis=red, keepdims=True) + eps)
        xhat = c * inv
        gx = gw = gb = None
        if needs[1] and w is not None:
            gw = wrap(np.sum(ga * xhat, axis=red), g)
        if need_b:
            gb = wrap(np.sum(ga, axis=red), g)
        if needs[0]:
            gs = ga if w is None else ga * np.asarray(data(w)).reshape(cshape)
            t = gs - gs.mean(axis=red, keepdims=True)
            t -= xhat * np.mean(gs * xhat, axis=red, keepdims=True)
            t *= inv
            gx = wrap(t.astype(xa.dtype, copy=False), g)
        return gx, gw, gb
    xhat, inv, red, cshape = _bn_parts(x, axis, eps)
    gx = gw = gb = None
    if needs[1] and w is not None:
        gw = _sum(multiply(g, xhat), axis=red)
    if need_b:
        gb = _sum(g, axis=red)
    if needs[0]:
        gs = g if w is None else multiply(g, reshape(w, cshape))
        t = subtract(subtract(gs, mean(gs, axis=red, keepdims=True)),
                     multiply(xhat, mean(multiply(gs, xhat), axis=red, keepdims=True)))
        gx = multiply(t, inv)
    return gx, gw, gb


@_bn_train.defjvp
def _(*args: Any, out: Any, axis: int, eps: float) -> Any:
    # d xhat = inv (dx - mean(dx) - xhat mean(xhat dx)); dy = w d xhat + dw xhat + db
    k = len(args) // 2
    tang = tuple(args[:k]) + (None,) * (3 - k)
    vals = tuple(args[k:]) + (None,) * (3 - k)
    dx, dw, db = tang
    x, w = vals[0], vals[1]
    xhat, inv, red, cshape = _bn_parts(x, axis, eps)
    t = None
    if dx is not None:
        dxh = multiply(inv, subtract(subtract(dx, mean(dx, axis=red, keepdims=True)),
                                     multiply(xhat, mean(multiply(xhat, dx), axis=red,
                                                         keepdims=True))))
        t = dxh if w is None else multiply(dxh, reshape(w, cshape))
    if dw is not None:
        u = multiply(xhat, reshape(dw, cshape))
        t = u if t is None else add(t, u)
    if db is not None:
        u = multiply(add(multiply(xhat, 0.0), 1.0), reshape(db, cshape))
        t = u if t is None else add(t, u)
    return t


@_bn_train.defbatch
def _(batched: tuple[bool, ...], x: Any, w: Any = None, b: Any = None, *, axis: int,
      eps: float) -> Any:
    # each batch element has its own statistics: one call per element, stacked
    vals = (x, w, b)
    nb = next(data(v).shape[0] for v, bt in zip(vals, batched) if bt)
    flags = tuple(batched) + (False,) * (3 - len(batched))
    return stack([_bn_train(*[v[i] if f and v is not None else v for v, f in zip(vals, flags)],
                            axis=axis, eps=eps) for i in range(nb)])


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
        raise hinted(ValueError(with_hint(
            f"Expected number of channels in input to be divisible by num_groups, but got "
            f"input of shape {list(xs)} and num_groups={groups}",
            f"{c} channels cannot be split in {groups} groups")))
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
