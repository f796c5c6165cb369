"""``keras.activations``: activation functions, also by name.

>>> import tapegrad.tf as tf
>>> tf.keras.activations.get("relu") is tf.keras.activations.relu
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._core.errors import with_hint
from ..._core.tensor import Tensor
from .. import _ops, nn

__all__ = ["relu", "sigmoid", "tanh", "softmax", "linear", "elu", "selu", "gelu", "softplus",
           "silu", "swish", "leaky_relu", "log_softmax", "get"]


def relu(x: Any, negative_slope: float = 0.0, max_value: Any = None,
         threshold: float = 0.0) -> Tensor:
    if negative_slope or max_value is not None or threshold:
        y = nn.leaky_relu(x, negative_slope) if negative_slope else nn.relu(x)
        if max_value is not None:
            y = _ops.minimum(y, max_value)
        return y
    return nn.relu(x)


def sigmoid(x: Any) -> Tensor:
    return _ops.sigmoid(x)


def tanh(x: Any) -> Tensor:
    return _ops.tanh(x)


def softmax(x: Any, axis: int = -1) -> Tensor:
    return nn.softmax(x, axis=axis)


def log_softmax(x: Any, axis: int = -1) -> Tensor:
    return nn.log_softmax(x, axis=axis)


def linear(x: Any) -> Any:
    return x


def elu(x: Any, alpha: float = 1.0) -> Tensor:
    return nn.elu(x)


def selu(x: Any) -> Tensor:
    return nn.selu(x)


def gelu(x: Any, approximate: bool = False) -> Tensor:
    return nn.gelu(x, approximate=approximate)


def softplus(x: Any) -> Tensor:
    return nn.softplus(x)


def silu(x: Any) -> Tensor:
    return nn.silu(x)


swish = silu


def leaky_relu(x: Any, negative_slope: float = 0.2) -> Tensor:
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
        raise ValueError(with_hint(
            f"Could not interpret activation function identifier: {identifier}",
            f"known names: {', '.join(sorted(_BY_NAME))}"))
    return fn
