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
           "silu", "swish", "leaky_relu", "log_softmax", "get"]


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
    """
    return nn.elu(x)


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


_BY_NAME: dict[str, Callable[..., Any]] = {
    "relu": relu, "sigmoid": sigmoid, "tanh": tanh, "softmax": softmax, "linear": linear,
    "elu": elu, "selu": selu, "gelu": gelu, "softplus": softplus, "silu": silu,
    "swish": swish, "leaky_relu": leaky_relu, "log_softmax": log_softmax,
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
