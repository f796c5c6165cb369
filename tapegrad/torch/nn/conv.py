"""``torch.nn`` convolution modules: ``Conv1d/2d/3d``, ``ConvTranspose1d/2d/3d``.

PyTorch's parameter layouts, default initialisation (``kaiming_uniform_(a=sqrt(5))``
for the weight, ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` for the bias, drawn in
that order from the PyTorch-compatible generator), ``padding_mode`` and repr.

>>> import tapegrad.torch as torch
>>> torch.nn.Conv2d(1, 6, 5)
Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ..._core.tensor import TORCH, Tensor, make
from .._dtype import to_np
from .._tensor import check_device
from . import _functional_conv as FC
from . import functional as F
from . import init
from .modules import Module
from .parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]


def _ntuple(v: Any, n: int) -> tuple[int, ...]:
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    return tuple(int(i) for i in v)


class _ConvNd(Module):
    _nsp = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
                 output_padding: Any = 0) -> None:
        super().__init__()
        check_device(device)
        n = self._nsp
        if groups <= 0:
            raise hinted(ValueError(with_hint("groups must be a positive integer",
                                       "pass groups >= 1")))
        if in_channels % groups:
            raise hinted(ValueError(with_hint("in_channels must be divisible by groups",
                                       f"{in_channels} channels, {groups} groups")))
        if out_channels % groups:
            raise hinted(ValueError(with_hint("out_channels must be divisible by groups",
                                       f"{out_channels} channels, {groups} groups")))
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise hinted(ValueError(with_hint(
                "padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], "
                f"but got padding_mode='{padding_mode}'", "use a supported padding mode")))
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.dilation = _ntuple(dilation, n)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise hinted(ValueError(with_hint(
                    f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}",
                    "use 'same', 'valid' or integers")))
            if padding == "same" and any(s != 1 for s in self.stride):
                raise hinted(ValueError(with_hint("padding='same' is not supported for strided "
                                           "convolutions", "use stride=1")))
            self.padding: Any = padding
        else:
            self.padding = _ntuple(padding, n)
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        self.transposed = self._transposed
        dt = np.float32 if dtype is None else to_np(dtype)
        if self._transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(make(np.empty(shape, dtype=dt), None, False, TORCH))
        if bias:
            self.bias = Parameter(make(np.empty(out_channels, dtype=dt), None, False, TORCH))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _padded(self, input: Tensor) -> tuple[Tensor, Any]:
        """The input padded by ``padding_mode`` (then no conv padding), or as it is."""
        if self.padding_mode == "zeros":
            return input, self.padding
        if isinstance(self.padding, str):
            if self.padding == "valid":
                return input, 0
            pads: list[int] = []
            for k, d in zip(reversed(self.kernel_size), reversed(self.dilation)):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
        else:
            pads = [p for p in reversed(self.padding) for _ in range(2)]
        return F.pad(input, tuple(pads), mode=self.padding_mode), 0

    def extra_repr(self) -> str:
        n = self._nsp
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if isinstance(self.padding, str):
            s += f", padding={self.padding}"
        elif self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        x, pad = self._padded(input)
        return FC._convnd(self._nsp, x, self.weight, self.bias, self.stride, pad,
                          self.dilation, self.groups)


class Conv1d(_Conv):
    """1-d convolution over ``(N, C, L)``."""

    _nsp = 1


class Conv2d(_Conv):
    """2-d convolution over ``(N, C, H, W)``; weight ``(out, in // groups, kh, kw)``.

    >>> import tapegrad.torch as torch
    >>> _ = torch.manual_seed(0)
    >>> conv = torch.nn.Conv2d(1, 2, 3, padding=1)
    >>> conv(torch.ones(1, 1, 4, 4)).shape
    torch.Size([1, 2, 4, 4])
    """

    _nsp = 2


class Conv3d(_Conv):
    """3-d convolution over ``(N, C, D, H, W)``."""

    _nsp = 3


class _ConvT(_ConvNd):
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise hinted(ValueError(with_hint(
                f"Only \"zeros\" padding mode is supported for {type(self).__name__}",
                "use padding_mode='zeros'")))
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        op: Any = self.output_padding
        if output_size is not None:
            # PyTorch's _output_padding: the output_padding that gives output_size
            n = self._nsp
            size = [int(s) for s in output_size][-n:]
            insz = input._data.shape[-n:]
            op = []
            for i in range(n):
                base = ((insz[i] - 1) * self.stride[i] - 2 * self.padding[i]
                        + self.dilation[i] * (self.kernel_size[i] - 1) + 1)
                extra = size[i] - base
                if not 0 <= extra < max(self.stride[i], self.dilation[i]):
                    raise hinted(ValueError(with_hint(
                        f"requested an output size of {size}, but valid sizes range from "
                        f"{base} to {base + self.stride[i] - 1} (for an input of "
                        f"{list(insz)})", "pick an output size the stride can give")))
                op.append(extra)
        return FC._conv_tnd(self._nsp, input, self.weight, self.bias, self.stride,
                            self.padding, op, self.groups, self.dilation)


class ConvTranspose1d(_ConvT):
    """1-d transposed convolution; weight ``(in, out // groups, k)``."""

    _nsp = 1


class ConvTranspose2d(_ConvT):
    """2-d transposed convolution; weight ``(in, out // groups, kh, kw)``.

    >>> import tapegrad.torch as torch
    >>> torch.nn.ConvTranspose2d(2, 3, 3, stride=2)
    ConvTranspose2d(2, 3, kernel_size=(3, 3), stride=(2, 2))
    """

    _nsp = 2


class ConvTranspose3d(_ConvT):
    _nsp = 3
