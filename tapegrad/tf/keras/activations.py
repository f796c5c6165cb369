"""``keras.activations``: activation functions, also by name.

>>> import tapegrad.tf as tf
>>> tf.keras.activations.get("relu") is tf.keras.activations.relu
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from .. import _ops, nn

__all__ = ["relu", "sigmoid", "tanh", "softmax", "linear", "elu", "selu", "gelu", "softplus",
           "silu", "swish", "leaky_relu", "log_softmax", "get", "relu6", "hard_sigmoid",
           "hard_silu", "hard_swish", "mish", "softsign", "exponential", "log_sigmoid", "celu",
           "glu", "hard_tanh", "threshold"]


def relu(x: Any, negative_slope: float = 0.0, max_value: Any = None,
         threshold: float = 0.0) -> Tensor:
    """Rectified linear unit (optionally leaky / capped / thresholded).

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import relu
    >>> relu(tf.constant([-1.0, 2.0])).numpy()
    array([0., 2.], dtype=float32)
    """
    if negative_slope or max_value is not None or threshold:
        y = nn.leaky_relu(x, negative_slope) if negative_slope else nn.relu(x)
        if max_value is not None:
            y = _ops.minimum(y, max_value)
        return y
    return nn.relu(x)


def sigmoid(x: Any) -> Tensor:
    """Logistic sigmoid.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import sigmoid
    >>> float(sigmoid(tf.constant(0.0)))
    0.5
    """
    return _ops.sigmoid(x)


def tanh(x: Any) -> Tensor:
    """Hyperbolic tangent.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import tanh
    >>> float(tanh(tf.constant(0.0)))
    0.0
    """
    return _ops.tanh(x)


def softmax(x: Any, axis: int = -1) -> Tensor:
    """Softmax along ``axis``.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import softmax
    >>> softmax(tf.constant([0.0, 0.0])).numpy()
    array([0.5, 0.5], dtype=float32)
    """
    return nn.softmax(x, axis=axis)


def log_softmax(x: Any, axis: int = -1) -> Tensor:
    """Log-softmax along ``axis``.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import log_softmax
    >>> log_softmax(tf.constant([0.0, 0.0])).numpy().round(4)
    array([-0.6931, -0.6931], dtype=float32)
    """
    return nn.log_softmax(x, axis=axis)


def linear(x: Any) -> Any:
    """The identity (no activation).

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import linear
    >>> float(linear(tf.constant(-3.0)))
    -3.0
    """
    return x


def elu(x: Any, alpha: float = 1.0) -> Tensor:
    """Exponential linear unit.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import elu
    >>> float(elu(tf.constant(0.0)))
    0.0
    >>> elu(tf.constant([-1.0, 1.0]), alpha=2.0).numpy().round(4)
    array([-1.2642,  1.    ], dtype=float32)
    """
    res = nn.elu(x)
    if alpha == 1:
        return res
    return _ops.where(_ops.greater(x, 0.0), res, _ops.multiply(alpha, res))


def selu(x: Any) -> Tensor:
    """Scaled exponential linear unit.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import selu
    >>> float(selu(tf.constant(0.0)))
    0.0
    """
    return nn.selu(x)


def gelu(x: Any, approximate: bool = False) -> Tensor:
    """Gaussian error linear unit.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import gelu
    >>> float(gelu(tf.constant(0.0)))
    0.0
    """
    return nn.gelu(x, approximate=approximate)


def softplus(x: Any) -> Tensor:
    """``log(1 + exp(x))``.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import softplus
    >>> round(float(softplus(tf.constant(0.0))), 4)
    0.6931
    """
    return nn.softplus(x)


def silu(x: Any) -> Tensor:
    """``x * sigmoid(x)``.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import silu
    >>> float(silu(tf.constant(0.0)))
    0.0
    """
    return nn.silu(x)


swish = silu


def leaky_relu(x: Any, negative_slope: float = 0.2) -> Tensor:
    """Leaky ReLU (Keras default slope 0.2).

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import leaky_relu
    >>> leaky_relu(tf.constant([-1.0, 1.0])).numpy()
    array([-0.2,  1. ], dtype=float32)
    """
    return nn.leaky_relu(x, negative_slope)


def _f(x: Any) -> Tensor:
    """The input as a tensor (TensorFlow's kernels then check its dtype, as in Keras)."""
    return _ops.convert_to_tensor(x)


def relu6(x: Any) -> Tensor:
    """``min(max(x, 0), 6)``.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import relu6
    >>> relu6(tf.constant([-1.0, 3.0, 8.0])).numpy()
    array([0., 3., 6.], dtype=float32)
    """
    return nn.relu6(_f(x))


def hard_sigmoid(x: Any) -> Tensor:
    """``relu6(x + 3) / 6``.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import hard_sigmoid
    >>> hard_sigmoid(tf.constant([-4.0, 0.0, 4.0])).numpy()
    array([0. , 0.5, 1. ], dtype=float32)
    """
    t = _f(x)
    return _ops.divide(nn.relu6(_ops.add(t, _ops.constant(3.0, t.dtype))),
                       _ops.constant(6.0, t.dtype))


def hard_silu(x: Any) -> Tensor:
    """``x * hard_sigmoid(x)``.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import hard_silu
    >>> hard_silu(tf.constant([-4.0, 1.0, 4.0])).numpy().round(4)
    array([-0.    ,  0.6667,  4.    ], dtype=float32)
    """
    t = _f(x)
    return _ops.multiply(t, hard_sigmoid(t))


hard_swish = hard_silu


def mish(x: Any) -> Tensor:
    """``x * tanh(softplus(x))``.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import mish
    >>> float(mish(tf.constant(0.0)))
    0.0
    """
    t = _f(x)
    return _ops.multiply(t, _ops.tanh(nn.softplus(t)))


def softsign(x: Any) -> Tensor:
    """``x / (|x| + 1)``.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import softsign
    >>> softsign(tf.constant([-1.0, 3.0])).numpy()
    array([-0.5 ,  0.75], dtype=float32)
    """
    return nn.softsign(_f(x))


def exponential(x: Any) -> Tensor:
    """``exp(x)``.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import exponential
    >>> float(exponential(tf.constant(0.0)))
    1.0
    """
    return _ops.exp(_f(x))


def log_sigmoid(x: Any) -> Tensor:
    """``log(sigmoid(x))`` as TensorFlow computes it, ``-softplus(-x)``.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import log_sigmoid
    >>> round(float(log_sigmoid(tf.constant(0.0))), 4)
    -0.6931
    """
    return _ops.negative(nn.softplus(_ops.negative(_f(x))))


def celu(x: Any, alpha: float = 1.0) -> Tensor:
    """``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import celu
    >>> celu(tf.constant([-1.0, 2.0]), alpha=2.0).numpy().round(4)
    array([-0.7869,  2.    ], dtype=float32)
    """
    t = _f(x)
    return _ops.add(_ops.maximum(t, 0.0),
                    _ops.multiply(alpha, _ops.expm1(_ops.divide(_ops.minimum(t, 0.0), alpha))))


def glu(x: Any, axis: int = -1) -> Tensor:
    """Gated linear unit: the first half of ``axis`` times the sigmoid of the second.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import glu
    >>> glu(tf.constant([[2.0, 0.0]])).numpy()
    array([[1.]], dtype=float32)
    """
    t = _f(x)
    if t.shape[axis] % 2 != 0:
        raise hinted(ValueError(with_hint(
            f"axis size must be divisible by 2. Received: x.shape={tuple(t.shape)} with "
            f"axis={axis}", "the gated axis holds the values then the gates: an even size")))
    x1, x2 = _ops.split(t, num_or_size_splits=2, axis=axis)
    return _ops.multiply(x1, _ops.sigmoid(x2))


def hard_tanh(x: Any) -> Tensor:
    """``x`` clipped to ``[-1, 1]``.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import hard_tanh
    >>> hard_tanh(tf.constant([-3.0, 0.5, 2.0])).numpy()
    array([-1. ,  0.5,  1. ], dtype=float32)
    """
    return _ops.clip_by_value(_f(x), -1.0, 1.0)


def threshold(x: Any, threshold: Any, default_value: Any) -> Tensor:
    """``x`` where ``x > threshold``, else ``default_value``.

    >>> import tapegrad.tf as tf
    >>> from tapegrad.tf.keras.activations import threshold
    >>> threshold(tf.constant([-1.0, 0.5, 2.0]), 1.0, 0.0).numpy()
    array([0., 0., 2.], dtype=float32)
    """
    t = _f(x)
    return _ops.where(_ops.greater(t, threshold), t,
                      _ops.cast(default_value, t.dtype))


_BY_NAME: dict[str, Callable[..., Any]] = {
    "relu": relu, "sigmoid": sigmoid, "tanh": tanh, "softmax": softmax, "linear": linear,
    "elu": elu, "selu": selu, "gelu": gelu, "softplus": softplus, "silu": silu,
    "swish": swish, "leaky_relu": leaky_relu, "log_softmax": log_softmax,
    "relu6": relu6, "hard_sigmoid": hard_sigmoid, "hard_silu": hard_silu,
    "hard_swish": hard_swish, "mish": mish, "softsign": softsign, "exponential": exponential,
    "log_sigmoid": log_sigmoid, "celu": celu, "glu": glu, "hard_tanh": hard_tanh,
    "threshold": threshold,
}


def get(identifier: Any) -> Callable[..., Any]:
    """The activation for a name, a callable, or ``None`` (linear)."""
    if identifier is None:
        return linear
    if callable(identifier):
        return identifier
    fn = _BY_NAME.get(str(identifier))
    if fn is None:
        raise hinted(ValueError(with_hint(
            f"Could not interpret activation function identifier: {identifier}",
            f"known names: {', '.join(sorted(_BY_NAME))}")))
    return fn
