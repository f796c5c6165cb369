"""``torch.nn`` pooling, resizing and folding modules.

>>> import tapegrad.torch as torch
>>> torch.nn.MaxPool2d(2)
MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
"""

from __future__ import annotations

from typing import Any

from ..._core.tensor import Tensor
from . import _functional_conv as FC
from .modules import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "Upsample", "UpsamplingNearest2d",
           "UpsamplingBilinear2d", "Unfold", "Fold", "MaxUnpool1d", "MaxUnpool2d",
           "MaxUnpool3d"]


class _MaxPoolNd(Module):
    _nsp = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Any:
        return FC._max_poolnd(self._nsp, input, self.kernel_size, self.stride, self.padding,
                              self.dilation, self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    _nsp = 1


class MaxPool2d(_MaxPoolNd):
    """2-d max pooling (``stride`` defaults to ``kernel_size``).

    >>> import tapegrad.torch as torch
    >>> torch.nn.MaxPool2d(2)(torch.arange(16.0).reshape(1, 1, 4, 4)).flatten()
    tensor([ 5.,  7., 13., 15.])
    """

    _nsp = 2


class MaxPool3d(_MaxPoolNd):
    _nsp = 3


class _MaxUnpoolNd(Module):
    _nsp = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        n = self._nsp
        t = (lambda v: (int(v),) * n if isinstance(v, int) else tuple(v))  # noqa: E731
        self.kernel_size = t(kernel_size)
        self.stride = t(stride if stride is not None else kernel_size)
        self.padding = t(padding)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return FC._max_unpoolnd(self._nsp, input, indices, self.kernel_size, self.stride,
                                self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    _nsp = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """Undo :class:`MaxPool2d` given its indices (zeros elsewhere).

    >>> import tapegrad.torch as torch
    >>> torch.nn.MaxUnpool2d(2)
    MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))
    """

    _nsp = 2


class MaxUnpool3d(_MaxUnpoolNd):
    _nsp = 3


class _AvgPoolNd(Module):
    _nsp = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return FC._avg_poolnd(self._nsp, input, self.kernel_size, self.stride, self.padding,
                              self.ceil_mode, self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    _nsp = 1

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)
        n = lambda v: (v,) if isinstance(v, int) else tuple(v)  # noqa: E731
        self.kernel_size, self.stride, self.padding = (n(self.kernel_size), n(self.stride),
                                                       n(self.padding))


class AvgPool2d(_AvgPoolNd):
    """2-d average pooling.

    >>> import tapegrad.torch as torch
    >>> torch.nn.AvgPool2d(2)
    AvgPool2d(kernel_size=2, stride=2, padding=0)
    """

    _nsp = 2


class AvgPool3d(_AvgPoolNd):
    _nsp = 3


class _AdaptiveNd(Module):
    _nsp = 2
    _max = False

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        if self._max:
            return FC._adaptive_max(self._nsp, input, self.output_size, self.return_indices)
        fn = {1: FC.adaptive_avg_pool1d, 2: FC.adaptive_avg_pool2d,
              3: FC.adaptive_avg_pool3d}[self._nsp]
        return fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveNd):
    _nsp = 1

    def __init__(self, output_size: Any) -> None:
        super().__init__(output_size)


class AdaptiveAvgPool2d(_AdaptiveNd):
    """Adaptive average pooling to ``output_size`` (``None`` keeps that input size).

    >>> import tapegrad.torch as torch
    >>> torch.nn.AdaptiveAvgPool2d((1, 1))
    AdaptiveAvgPool2d(output_size=(1, 1))
    """

    _nsp = 2

    def __init__(self, output_size: Any) -> None:
        super().__init__(output_size)


class AdaptiveAvgPool3d(_AdaptiveNd):
    _nsp = 3

    def __init__(self, output_size: Any) -> None:
        super().__init__(output_size)


class AdaptiveMaxPool1d(_AdaptiveNd):
    _nsp, _max = 1, True


class AdaptiveMaxPool2d(_AdaptiveNd):
    _nsp, _max = 2, True


class AdaptiveMaxPool3d(_AdaptiveNd):
    _nsp, _max = 3, True


class Upsample(Module):
    """Resize by ``size`` or ``scale_factor`` (``F.interpolate``).

    >>> import tapegrad.torch as torch
    >>> torch.nn.Upsample(scale_factor=2)
    Upsample(scale_factor=2.0, mode='nearest')
    """

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return FC.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                              recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = (f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None
                else f"size={self.size!r}")
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class Unfold(Module):
    """Sliding local blocks as columns (im2col).

    >>> import tapegrad.torch as torch
    >>> torch.nn.Unfold(2)
    Unfold(kernel_size=2, dilation=1, padding=0, stride=1)
    """

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = (kernel_size, dilation,
                                                                      padding, stride)

    def forward(self, input: Tensor) -> Tensor:
        return FC.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """Columns summed back into an image (col2im)."""

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size, self.dilation, self.padding, self.stride = (kernel_size, dilation,
                                                                      padding, stride)

    def forward(self, input: Tensor) -> Tensor:
        return FC.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                       self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")
