"""More of ``tf.nn``: local response normalization, Poisson and weighted cross-entropy
losses, (weighted/normalized) moments, separable and atrous convolutions, ``pool``,
``space_to_depth``/``depth_to_space``, ``zero_fraction``, ``scale_regularization_loss``.

All compose tapegrad ops with TensorFlow's own formulas (``nn_impl.py``), so gradients
are those of the formulas, as in TensorFlow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from .._core.tensor import Tensor
from . import dtypes as _dt
from ._ops import _int, _invalid, _t, cast, divide_no_nan, reduce_sum
from ._tensor import binary_args, tft


def _c(x: float, like: Tensor) -> Tensor:
    return tft(np.asarray(x, like._data.dtype))


def local_response_normalization(input: Any, depth_radius: int = 5, bias: float = 1.0,
                                 alpha: float = 1.0, beta: float = 0.5,
                                 name: str | None = None) -> Tensor:
    """``x / (bias + alpha * sum of x^2 over 2 r + 1 neighbouring channels) ** beta``."""
    t = _t(input)
    if t._data.ndim != 4:
        raise _invalid(f"input must be 4-dimensional but got shape {list(t._data.shape)}",
                       "pass (batch, height, width, channels)", "LRN")
    if t._data.dtype not in (np.float16, np.float32):
        from ._ops_more import _attr_error

        raise _attr_error("T", t._data.dtype, "half, bfloat16, float", "LRN", "input:T -> output:T",
                          "attr=depth_radius:int,default=5; attr=bias:float,default=1; "
                          "attr=alpha:float,default=1; attr=beta:float,default=0.5; "
                          "attr=T:type,default=DT_FLOAT,allowed=[DT_HALF, DT_BFLOAT16, DT_FLOAT]")
    r = int(depth_radius)
    c = t._data.shape[-1]
    sq = ops.pad(ops.square(t), ((0, 0), (0, 0), (0, 0), (r, r)))
    total = None
    for k in range(2 * r + 1):
        part = ops.getitem(sq, (Ellipsis, slice(k, k + c)))
        total = part if total is None else ops.add(total, part)
    assert total is not None
    den = ops.power(ops.add(ops.multiply(total, _c(alpha, t)), _c(bias, t)), _c(beta, t))
    return ops.divide(t, den)


lrn = local_response_normalization


def log_poisson_loss(targets: Any, log_input: Any, compute_full_loss: bool = False,
                     name: str | None = None) -> Tensor:
    """``exp(log_input) - log_input * targets`` (plus Stirling's term for targets > 1)."""
    tg, li = binary_args(targets, log_input, function=True, name="log_poisson_loss")
    result = ops.subtract(ops.exp(li), ops.multiply(li, tg))
    if compute_full_loss:
        with np.errstate(all="ignore"):
            stirling = ops.add(ops.subtract(ops.multiply(tg, ops.log(tg)), tg),
                               ops.multiply(_c(0.5, tg),
                                            ops.log(ops.multiply(_c(2 * np.pi, tg), tg))))
        small = tft((tg._data >= 0) & (tg._data <= 1))
        result = ops.add(result, ops.where(small, _c(0.0, tg), stirling))
    return result


def normalize_moments(counts: Any, mean_ss: Any, variance_ss: Any, shift: Any,
                      name: str | None = None) -> tuple[Tensor, Tensor]:
    """Mean and variance from sufficient statistics (``shift`` added back to the mean)."""
    m, v = _t(mean_ss), _t(variance_ss)
    divisor = ops.reciprocal(cast(_t(counts), _dt.as_dtype(m._data.dtype))
                             if not isinstance(counts, Tensor) else _t(counts))
    shifted = ops.multiply(m, divisor)
    mean = shifted if shift is None else ops.add(shifted, _t(shift))
    var = ops.subtract(ops.multiply(v, divisor), ops.square(shifted))
    return mean, var


def weighted_moments(x: Any, axes: Any, frequency_weights: Any, keepdims: bool = False,
                     name: str | None = None) -> tuple[Tensor, Tensor]:
    """Frequency-weighted mean and variance over ``axes``."""
    t = _t(x)
    half = t._data.dtype == np.float16
    if half:
        t = cast(t, _dt.float32)
    w = _t(frequency_weights)
    if w._data.dtype != t._data.dtype:
        w = cast(w, _dt.as_dtype(t._data.dtype))
    wsum = reduce_sum(ops.multiply(w, t), axes, keepdims=True)
    sw = reduce_sum(ops.add(w, tft(np.zeros(t._data.shape, t._data.dtype))), axes, keepdims=True)
    mean = divide_no_nan(wsum, sw)
    dist = reduce_sum(ops.multiply(w, ops.square(ops.subtract(t, mean))), axes, keepdims=True)
    var = divide_no_nan(dist, sw)
    if not keepdims:
        ax = [axes] if isinstance(axes, int) else list(axes)
        shp = tuple(s for i, s in enumerate(t._data.shape)
                    if i not in {int(a) % t._data.ndim for a in ax})
        mean, var = ops.reshape(mean, shp), ops.reshape(var, shp)
    if half:
        mean, var = cast(mean, _dt.float16), cast(var, _dt.float16)
    return mean, var


def weighted_cross_entropy_with_logits(labels: Any, logits: Any, pos_weight: Any,
                                       name: str | None = None) -> Tensor:
    """Sigmoid cross-entropy with the positive term weighted by ``pos_weight``."""
    lab, lg = binary_args(labels, logits, function=True, name="weighted_cross_entropy")
    pw = _t(pos_weight) if isinstance(pos_weight, Tensor) else _c(float(pos_weight), lg)
    log_weight = ops.add(_c(1.0, lg), ops.multiply(ops.subtract(pw, _c(1.0, lg)), lab))
    soft = ops.add(ops.log1p(ops.exp(ops.negative(ops.abs(lg)))), ops.relu(ops.negative(lg)))
    return ops.add(ops.multiply(ops.subtract(_c(1.0, lg), lab), lg),
                   ops.multiply(log_weight, soft))


def separable_conv2d(input: Any, depthwise_filter: Any, pointwise_filter: Any, strides: Any,
                     padding: Any, data_format: Any = None, dilations: Any = None,
                     name: str | None = None) -> Tensor:
    """A depthwise convolution followed by a 1x1 (pointwise) convolution."""
    from .nn_conv import conv2d, depthwise_conv2d

    fmt = data_format or "NHWC"
    mid = depthwise_conv2d(input, depthwise_filter, strides, padding, data_format=fmt,
                           dilations=dilations)
    return conv2d(mid, pointwise_filter, [1, 1, 1, 1], "VALID", data_format=fmt)


def atrous_conv2d(value: Any, filters: Any, rate: int, padding: str,
                  name: str | None = None) -> Tensor:
    """A 2-D convolution with dilation ``rate`` (stride 1)."""
    from .nn_conv import conv2d

    r = int(rate)
    if r < 1:
        raise ValueError(f"rate {r} cannot be less than one")
    return conv2d(value, filters, [1, 1, 1, 1], padding, dilations=[1, r, r, 1])


def pool(input: Any, window_shape: Any, pooling_type: str, strides: Any = None,
         padding: str = "VALID", data_format: Any = None, dilations: Any = None,
         name: str | None = None) -> Tensor:
    """``"MAX"`` or ``"AVG"`` pooling over ``window_shape`` (N-D, channels last)."""
    from .nn_conv import avg_pool, max_pool

    ws = [int(v) for v in np.asarray(window_shape).reshape(-1)]
    st = [1] * len(ws) if strides is None else [int(v) for v in np.asarray(strides).reshape(-1)]
    if dilations is not None and any(int(d) != 1 for d in np.asarray(dilations).reshape(-1)):
        if any(s != 1 for s in st):
            raise ValueError("strides > window_shape not supported due to inconsistency "
                             "between CPU and GPU implementations")
        from .._core.errors import hinted, with_hint

        raise hinted(NotImplementedError(with_hint("tf.nn.pool with dilations > 1",
                                                   "pool without dilation")))
    kind = str(pooling_type).upper()
    if kind not in ("MAX", "AVG"):
        raise ValueError(f"Invalid pooling_type: {pooling_type}")
    fn = max_pool if kind == "MAX" else avg_pool
    return fn(input, ws, st, padding, data_format=data_format)


def _block_check(t: Tensor, b: int, op: str, fmt: str) -> None:
    if fmt != "NHWC":
        from .._core.errors import hinted, with_hint

        raise hinted(NotImplementedError(with_hint(f"tf.nn.{op} with data_format={fmt}",
                                                   "use NHWC")))
    if t._data.ndim != 4:
        raise _invalid(f"input rank should be: 4 instead of: {t._data.ndim}",
                       "pass (batch, height, width, channels)",
                       "SpaceToDepth" if op == "space_to_depth" else "DepthToSpace")
    if b < 2:
        raise _invalid(f"Value for attr 'block_size' of {b} must be at least minimum 2\n\t; "
                       "NodeDef: {{node " + ("SpaceToDepth" if op == "space_to_depth" else
                                            "DepthToSpace") + "}}", "block_size >= 2",
                       "SpaceToDepth" if op == "space_to_depth" else "DepthToSpace")


def space_to_depth(input: Any, block_size: int, data_format: str = "NHWC",
                   name: str | None = None) -> Tensor:
    """Move ``block_size x block_size`` spatial blocks into the channel axis."""
    t = _t(input)
    b = _int(block_size)
    _block_check(t, b, "space_to_depth", data_format)
    n, h, w, c = t._data.shape
    if h % b or w % b:
        raise _invalid(f"Image width {w} and height {h} should be divisible by block_size: {b}",
                       "height and width must be multiples of block_size", "SpaceToDepth")
    x = ops.reshape(t, (n, h // b, b, w // b, b, c))
    return ops.reshape(ops.transpose(x, (0, 1, 3, 2, 4, 5)), (n, h // b, w // b, b * b * c))


def depth_to_space(input: Any, block_size: int, data_format: str = "NHWC",
                   name: str | None = None) -> Tensor:
    """Move channel groups back into ``block_size x block_size`` spatial blocks."""
    t = _t(input)
    b = _int(block_size)
    _block_check(t, b, "depth_to_space", data_format)
    n, h, w, c = t._data.shape
    if c % (b * b):
        raise _invalid(f"Input depth dimension {c} should be divisible by: {b * b}",
                       "channels must be a multiple of block_size ** 2", "DepthToSpace")
    x = ops.reshape(t, (n, h, w, b, b, c // (b * b)))
    return ops.reshape(ops.transpose(x, (0, 1, 3, 2, 4, 5)), (n, h * b, w * b, c // (b * b)))


def zero_fraction(value: Any, name: str | None = None) -> Tensor:
    """The fraction of zeros in ``value`` (float32)."""
    a = _t(value)._data
    return tft(np.asarray(np.mean(a == 0) if a.size else np.nan, np.float32))


def scale_regularization_loss(regularization_loss: Any) -> Tensor:
    """The summed regularization loss divided by the number of replicas (1 here)."""
    return reduce_sum(_t(regularization_loss))


__all__ = [
    "local_response_normalization", "lrn", "log_poisson_loss", "normalize_moments",
    "weighted_moments", "weighted_cross_entropy_with_logits", "separable_conv2d",
    "atrous_conv2d", "pool", "space_to_depth", "depth_to_space", "zero_fraction",
    "scale_regularization_loss",
]

