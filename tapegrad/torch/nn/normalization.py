"""``torch.nn`` normalization modules: ``BatchNorm1d/2d/3d``, ``InstanceNorm1d/2d/3d``,
``GroupNorm``, ``RMSNorm``.

Batch norm keeps ``running_mean``, ``running_var`` and ``num_batches_tracked``
buffers, updated in training mode with PyTorch's rule (``momentum=0.1`` on the
new value, unbiased batch variance; ``momentum=None``: cumulative average).

>>> import tapegrad.torch as torch
>>> torch.nn.BatchNorm2d(3)
BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ..._core.tensor import TORCH, Tensor, make
from .._dtype import to_np
from . import _functional_conv as FC
from .modules import Module
from .parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "GroupNorm", "RMSNorm"]


def _t(a: np.ndarray) -> Tensor:
    return make(a, None, False, TORCH)


class _NormBase(Module):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        dt = np.float32 if dtype is None else to_np(dtype)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(_t(np.ones(num_features, dtype=dt)))
            if bias:
                self.bias = Parameter(_t(np.zeros(num_features, dtype=dt)))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _t(np.zeros(num_features, dtype=dt)))
            self.register_buffer("running_var", _t(np.ones(num_features, dtype=dt)))
            self.register_buffer("num_batches_tracked", _t(np.array(0, dtype=np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean._data[...] = 0
            self.running_var._data[...] = 1
            self.num_batches_tracked._data[...] = 0

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            self.weight._data[...] = 1
            if self.bias is not None:
                self.bias._data[...] = 0

    def _check_input_dim(self, input: Tensor) -> None:
        pass

    def _factor(self) -> float:
        """This step's momentum (``None``: the cumulative average ``1 / batches``)."""
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            nbt = self.num_batches_tracked

            def count() -> None:
                nbt._data[...] += 1
                nbt._vc[0] += 1

            from ...autodiff import tracing

            tracing.effect(count, (), "num_batches_tracked += 1", writes=(nbt,))
            if self.momentum is None:
                tracing.note_break("BatchNorm(momentum=None) reads num_batches_tracked")
                return 1.0 / float(self.num_batches_tracked._data)
        return 0.0 if self.momentum is None else float(self.momentum)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    _dims: tuple[int, ...] = (4,)

    def forward(self, input: Tensor) -> Tensor:
        nd = input._data.ndim
        if nd not in self._dims:
            want = " or ".join(f"{d}D" for d in self._dims)
            raise hinted(ValueError(with_hint(f"expected {want} input (got {nd}D input)",
                                       f"{type(self).__name__} takes (N, C, ...)")))
        factor = self._factor()
        use_batch = self.training or not self.track_running_stats
        track = self.training or not self.track_running_stats
        return FC.batch_norm(input, self.running_mean if track or not use_batch else None,
                             self.running_var if track or not use_batch else None,
                             self.weight, self.bias, use_batch, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch norm over ``(N, C)`` or ``(N, C, L)``."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over ``(N, C, H, W)``.

    >>> import tapegrad.torch as torch
    >>> bn = torch.nn.BatchNorm2d(1)
    >>> _ = bn(torch.tensor([1.0, 3.0]).reshape(2, 1, 1, 1))
    >>> bn.running_mean, bn.running_var
    (tensor([0.2000]), tensor([1.1000]))
    """

    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    _dims = (5,)


class _InstanceNorm(_NormBase):
    _nsp = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def forward(self, input: Tensor) -> Tensor:
        nd = input._data.ndim
        if nd not in (self._nsp + 1, self._nsp + 2):
            raise hinted(ValueError(with_hint(
                f"expected {self._nsp + 1}D or {self._nsp + 2}D input (got {nd}D input)",
                f"{type(self).__name__} takes (N, C, ...)")))
        x = input
        squeeze = nd == self._nsp + 1
        if squeeze:
            x = x.unsqueeze(0)  # type: ignore[attr-defined]
        use_input = self.training or not self.track_running_stats
        factor = self._factor()
        y = FC.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                             use_input, factor, self.eps)
        return y.squeeze(0) if squeeze else y


class InstanceNorm1d(_InstanceNorm):
    _nsp = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over ``(N, C, H, W)`` (no affine, no running stats by default)."""

    _nsp = 2


class InstanceNorm3d(_InstanceNorm):
    _nsp = 3


class GroupNorm(Module):
    """Group norm: ``num_channels`` split in ``num_groups``.

    >>> import tapegrad.torch as torch
    >>> torch.nn.GroupNorm(2, 4)
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise hinted(ValueError(with_hint("num_channels must be divisible by num_groups",
                                       f"{num_channels} channels, {num_groups} groups")))
        dt = np.float32 if dtype is None else to_np(dtype)
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        if affine:
            self.weight = Parameter(_t(np.ones(num_channels, dtype=dt)))
            if bias:
                self.bias = Parameter(_t(np.zeros(num_channels, dtype=dt)))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:
        return FC.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """RMS norm over the trailing ``normalized_shape``.

    >>> import tapegrad.torch as torch
    >>> torch.nn.RMSNorm(4)
    RMSNorm((4,), eps=None, elementwise_affine=True)
    """

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else \
            tuple(normalized_shape)
        dt = np.float32 if dtype is None else to_np(dtype)
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_t(np.ones(shape, dtype=dt)))
        else:
            self.register_parameter("weight", None)

    def forward(self, x: Tensor) -> Tensor:
        return FC.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
