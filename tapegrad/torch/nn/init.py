"""``torch.nn.init``: parameter initialisers (in place, not recorded).

Draws come from the PyTorch-compatible generator, so with the same
``torch.manual_seed`` the initial weights equal PyTorch's.

>>> import tapegrad.torch as torch
>>> w = torch.empty(2, 3)
>>> _ = torch.nn.init.constant_(w, 0.5)
>>> w
tensor([[0.5000, 0.5000, 0.5000],
        [0.5000, 0.5000, 0.5000]])
"""

from __future__ import annotations

import math
from typing import Any

from ..._core import mode
from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The recommended gain for ``nonlinearity`` (PyTorch's table)."""
    linear = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d"]
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise hinted(ValueError(with_hint(f"Unsupported nonlinearity {nonlinearity}",
                               "use linear, sigmoid, tanh, relu, leaky_relu or selu")))


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    dimensions = tensor.dim()
    if dimensions < 2:
        raise hinted(ValueError(with_hint(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions",
            "initialise 1-D tensors (biases) with uniform_ or zeros_")))
    num_input_fmaps = tensor.shape[1]
    num_output_fmaps = tensor.shape[0]
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return num_input_fmaps * receptive, num_output_fmaps * receptive


def _calculate_correct_fan(tensor: Tensor, mode_: str) -> int:
    mode_ = mode_.lower()
    if mode_ not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode_} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode_ == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with U(a, b)."""
    with mode.no_grad():
        return tensor.uniform_(a, b, generator=generator)  # type: ignore[attr-defined]


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with N(mean, std^2)."""
    with mode.no_grad():
        return tensor.normal_(mean, std, generator=generator)  # type: ignore[attr-defined]


def constant_(tensor: Tensor, val: float) -> Tensor:
    with mode.no_grad():
        return tensor.fill_(val)  # type: ignore[attr-defined]


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    import numpy as np

    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with mode.no_grad():
        tensor._data[...] = np.eye(*tensor._data.shape, dtype=tensor._data.dtype)
        tensor._vc[0] += 1
    return tensor


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """U(-bound, bound) with ``bound = gain * sqrt(3 / fan)`` (He et al.)."""
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "ones_", "zeros_", "eye_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"]
