"""More ``torch.nn`` modules: activations (PReLU, GLU, SELU, CELU, Mish, Hardswish, ...),
losses (HuberLoss, the margin / embedding losses, CTCLoss, PoissonNLLLoss,
GaussianNLLLoss, ...), PixelShuffle, ChannelShuffle, LPPool, LocalResponseNorm,
CosineSimilarity, PairwiseDistance, the lazy modules (LazyLinear, LazyConv1d/2d/3d),
ParameterDict and SyncBatchNorm.

Constructor arguments, defaults, attribute names, ``extra_repr`` and parameter
initialisation are PyTorch's (``torch.manual_seed(0); nn.PReLU(3)`` gives PyTorch's
weights; the lazy modules draw theirs, when the first input materializes them, in the
order their eager classes do).

>>> import tapegrad.torch as torch
>>> torch.nn.PReLU(3)
PReLU(num_parameters=3)
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ..._core.tensor import TORCH, Tensor, make
from .._dtype import to_np
from .._tensor import check_device
from . import functional as F
from . import functional_more as FM
from .conv import Conv1d, Conv2d, Conv3d
from .modules import Linear, Module, _Loss
from .normalization import _BatchNorm
from .parameter import Parameter, UninitializedParameter, is_lazy


def _inplace_str(inplace: bool) -> str:
    return "inplace=True" if inplace else ""


# ----------------------------------------------------------------------------- activations
class PReLU(Module):
    """``max(0, x) + weight * min(0, x)`` with a learnt ``weight`` (one, or one per channel),
    initialised to ``init``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        check_device(device)
        dt = np.float32 if dtype is None else to_np(dtype)
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(make(np.empty(num_parameters, dtype=dt), None, False, TORCH))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.weight._data[...] = self.init
        self.weight._vc[0] += 1

    def forward(self, input: Tensor) -> Tensor:
        return FM.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class GLU(Module):
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return FM.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class _InplaceAct(Module):
    _fn: Callable[..., Tensor]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, inplace=self.inplace)


class SELU(_InplaceAct):
    _fn = staticmethod(FM.selu)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace)


class Hardswish(_InplaceAct):
    _fn = staticmethod(FM.hardswish)


class Hardsigmoid(_InplaceAct):
    _fn = staticmethod(FM.hardsigmoid)


class Mish(_InplaceAct):
    _fn = staticmethod(F.mish)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace)


class CELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return FM.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and rename to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and rename to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val "
                                 f"({self.min_val})")
    def forward(self, input: Tensor) -> Tensor:
        if self.inplace:
            return FM.hardtanh_(input, self.min_val, self.max_val)
        return F.hardtanh(input, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else "")


class _Shrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(_Shrink):
    def forward(self, input: Tensor) -> Tensor:
        return FM.hardshrink(input, self.lambd)


class Softshrink(_Shrink):
    def forward(self, input: Tensor) -> Tensor:
        return FM.softshrink(input, self.lambd)


class Tanhshrink(Module):
    def forward(self, input: Tensor) -> Tensor:
        return FM.tanhshrink(input)


class Softsign(Module):
    def forward(self, input: Tensor) -> Tensor:
        return FM.softsign(input)


class LogSigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class RReLU(Module):
    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return FM.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (
            ", inplace=True" if self.inplace else "")


class Threshold(Module):
    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:
        return FM.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else "")


class Softmin(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of ``(C, H, W)`` or ``(N, C, H, W)``."""

    def forward(self, input: Tensor) -> Tensor:
        FM.softmax2d_check(input)
        return F.softmax(input, -3)


# ----------------------------------------------------------------------------- layers
class PixelShuffle(Module):
    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return FM.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return FM.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return FM.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class _LPPoolNd(Module):
    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = (
            norm_type, kernel_size, stride, ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return FM.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride,
                            self.ceil_mode)


class LPPool2d(_LPPoolNd):
    def forward(self, input: Tensor) -> Tensor:
        return FM.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride,
                            self.ceil_mode)


class FractionalMaxPool2d(Module):
    """Fractional max pooling over ``(N, C, H, W)`` (see ``F.fractional_max_pool2d``)."""

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        super().__init__()
        self.kernel_size = (kernel_size, kernel_size) if isinstance(kernel_size, int) \
            else tuple(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else (
            (output_size, output_size) if isinstance(output_size, int) else tuple(output_size))
        self.output_ratio = None if output_ratio is None else (
            (output_ratio, output_ratio) if isinstance(output_ratio, (int, float))
            else tuple(output_ratio))
        if output_size is None and output_ratio is None:
            raise ValueError("FractionalMaxPool2d requires specifying either an output size, "
                             "or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not (0 < self.output_ratio[0] < 1
                                                  and 0 < self.output_ratio[1] < 1):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        return FM.fractional_max_pool2d(input, self.kernel_size, self.output_size,
                                        self.output_ratio, self.return_indices,
                                        _random_samples=self._random_samples)


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return FM.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CosineSimilarity(Module):
    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


# ----------------------------------------------------------------------------- losses
class _WeightedLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.weight: Tensor | None


class HuberLoss(_Loss):
    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return FM.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SoftMarginLoss(_Loss):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return FM.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return FM.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return FM.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                              reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight._data.ndim != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got "
                             f"{weight._data.ndim}D instead")
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return FM.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                    weight=self.weight, reduction=self.reduction)


class _MarginLoss(_Loss):
    _default_margin = 0.0

    def __init__(self, margin: float | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = self._default_margin if margin is None else margin


class MarginRankingLoss(_MarginLoss):
    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return FM.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                      reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    def __init__(self, margin: float = 1.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return FM.hinge_embedding_loss(input, target, margin=self.margin,
                                       reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return FM.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                        reduction=self.reduction)


class TripletMarginLoss(_Loss):
    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return FM.triplet_margin_loss(anchor, positive, negative, margin=self.margin,
                                      p=self.p, eps=self.eps, swap=self.swap,
                                      reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    def __init__(self, *, distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                 margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        self.distance_function: Any = distance_function if distance_function is not None \
            else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return FM.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    def __init__(self, log_input: bool = True, full: bool = False, size_average: Any = None,
                 eps: float = 1e-8, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return FM.poisson_nll_loss(log_input, target, log_input=self.log_input,
                                   full=self.full, eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    def __init__(self, *, full: bool = False, eps: float = 1e-6,
                 reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var: Any) -> Tensor:
        return FM.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                    reduction=self.reduction)


class CTCLoss(_Loss):
    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Any,
                target_lengths: Any) -> Tensor:
        return FM.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                           self.reduction, self.zero_infinity)


# ----------------------------------------------------------------------------- containers
def _type_str(t: Tensor) -> str:
    return t.type()  # type: ignore[attr-defined]


class ParameterDict(Module):
    """Parameters by string key, registered in insertion order (plain tensors are wrapped
    in :class:`Parameter`)."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _key(self, key: Any) -> str:
        return key if isinstance(key, str) else str(key)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key(key))

    def __setitem__(self, key: str, value: Any) -> None:
        k = self._key(key)
        self._keys[k] = None
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, k, value)

    def __delitem__(self, key: str) -> None:
        k = self._key(key)
        del self._keys[k]
        delattr(self, k)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in list(self._keys):
            del self[k]

    def pop(self, key: str) -> Any:
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        k = list(self._keys)[-1]
        v = self[k]
        del self[k]
        return k, v

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> Any:
        return self._keys.keys()

    def items(self) -> Any:
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Any:
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        if isinstance(parameters, Mapping):
            items: Iterable[Any] = sorted(parameters.items()) \
                if not isinstance(parameters, (OrderedDict, ParameterDict, dict)) \
                else parameters.items()
        elif isinstance(parameters, Iterable):
            items = parameters
        else:
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            "key/value pairs, but got " + type(parameters).__name__)
        for j, kv in enumerate(items):
            if not isinstance(kv, (tuple, list)) and not isinstance(parameters, Mapping):
                raise TypeError("ParameterDict update sequence element #" + str(j)
                                + " should be Iterable; is" + type(kv).__name__)
            if len(kv) != 2:
                raise ValueError("ParameterDict update sequence element #" + str(j)
                                 + " has length " + str(len(kv)) + "; 2 is required")
            self[kv[0]] = kv[1]

    def extra_repr(self) -> str:
        lines = []
        for k, p in self.items():
            if isinstance(p, Tensor):
                size = "x".join(str(s) for s in p._data.shape)
                kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({k}): {kind} containing: [{_type_str(p)} of size {size}]")
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")


# ----------------------------------------------------------------------------- batch norm
class SyncBatchNorm(_BatchNorm):
    """Batch norm over ``(N, C, ...)`` synchronised across processes; in one process (no
    initialised process group, as on PyTorch's CPU) it is ``BatchNorm``."""

    _dims = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def forward(self, input: Tensor) -> Tensor:
        nd = input._data.ndim
        if nd < 2:
            raise hinted(ValueError(with_hint(f"expected at least 2D input (got {nd}D input)",
                                              "SyncBatchNorm takes (N, C, ...)")))
        object.__setattr__(self, "_dims", (nd,))  # any rank from 2 on
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every ``BatchNorm*d`` replaced by a ``SyncBatchNorm`` holding the
        same parameters and buffers."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                module.affine, module.track_running_stats, process_group,
                                bias=module.bias is not None or not module.affine)
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


# ----------------------------------------------------------------------------- lazy modules
class LazyModuleMixin:
    """Modules whose parameters take their shapes from the first input: the first call
    materializes them (drawing the eager class's initialisation), and the module becomes
    its ``cls_to_become``."""

    cls_to_become: type | None = None

    def has_uninitialized_params(self) -> bool:
        ps = self._parameters.values()  # type: ignore[attr-defined]
        return any(is_lazy(p) for p in ps)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError

    def _infer_sizes(self) -> None:
        """The input size from parameters a checkpoint materialized."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.has_uninitialized_params():
            self.initialize_parameters(*args, **kwargs)
        if not self.has_uninitialized_params() and self.cls_to_become is not None:
            self._infer_sizes()
            self.__class__ = self.cls_to_become
        return Module.__call__(self, *args, **kwargs)  # type: ignore[arg-type]

    @staticmethod
    def _materialize(p: Any, shape: tuple[int, ...]) -> None:
        assert isinstance(p, UninitializedParameter)
        p.materialize(shape)


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is the last dimension of its first input.

    >>> import tapegrad.torch as torch
    >>> m = torch.nn.LazyLinear(3)
    >>> m
    LazyLinear(in_features=0, out_features=3, bias=True)
    >>> _ = m(torch.ones(2, 4))
    >>> m
    Linear(in_features=4, out_features=3, bias=True)
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        Module.__init__(self)
        check_device(device)
        self.in_features = 0
        self.out_features = out_features
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def _infer_sizes(self) -> None:
        if self.in_features == 0:
            self.in_features = int(self.weight._data.shape[1])

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            with warnings.catch_warnings():
                self.in_features = int(input._data.shape[-1])
                self._materialize(self.weight, (self.out_features, self.in_features))
                if self.bias is not None:
                    self._materialize(self.bias, (self.out_features,))
                self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    _nsp: int
    groups: int
    kernel_size: tuple[int, ...]
    in_channels: int
    out_channels: int
    bias: Any
    weight: Any

    def _lazy_init(self, out_channels: int, kernel_size: Any, stride: Any, padding: Any,
                   dilation: Any, groups: int, bias: bool, padding_mode: str, device: Any,
                   dtype: Any) -> None:
        base = self.cls_to_become
        assert base is not None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base.__init__(self, 0, 0, kernel_size, stride,  # type: ignore[misc]
                          padding, dilation, groups, False, padding_mode, device, dtype)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    # (after a checkpoint materialized the weights PyTorch leaves in_channels at 0)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            base = self.cls_to_become
            assert base is not None
            base.reset_parameters(self)  # type: ignore[attr-defined]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            nd = input._data.ndim
            batched = nd == self._nsp + 2
            self.in_channels = int(input._data.shape[1 if batched else 0])
            if self.in_channels % self.groups:
                raise ValueError("in_channels must be divisible by groups")
            shape = (self.out_channels, self.in_channels // self.groups) + \
                tuple(self.kernel_size)
            self._materialize(self.weight, shape)
            if self.bias is not None:
                self._materialize(self.bias, (self.out_channels,))
            self.reset_parameters()


class LazyConv1d(_LazyConvMixin, Conv1d):
    cls_to_become = Conv1d
    _nsp = 1

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        self._lazy_init(out_channels, kernel_size, stride, padding, dilation, groups, bias,
                        padding_mode, device, dtype)


class LazyConv2d(_LazyConvMixin, Conv2d):
    cls_to_become = Conv2d
    _nsp = 2

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        self._lazy_init(out_channels, kernel_size, stride, padding, dilation, groups, bias,
                        padding_mode, device, dtype)


class LazyConv3d(_LazyConvMixin, Conv3d):
    cls_to_become = Conv3d
    _nsp = 3

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        self._lazy_init(out_channels, kernel_size, stride, padding, dilation, groups, bias,
                        padding_mode, device, dtype)


__all__ = [
    "PReLU", "GLU", "SELU", "CELU", "Mish", "Hardswish", "Hardsigmoid", "Hardtanh",
    "Hardshrink", "Softshrink", "Tanhshrink", "Softsign", "LogSigmoid", "RReLU", "Threshold",
    "Softmin", "Softmax2d", "PixelShuffle", "PixelUnshuffle", "ChannelShuffle", "LPPool1d",
    "LPPool2d", "FractionalMaxPool2d", "LocalResponseNorm", "CosineSimilarity",
    "PairwiseDistance",
    "HuberLoss", "SoftMarginLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
    "MultiMarginLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss",
    "TripletMarginLoss", "TripletMarginWithDistanceLoss", "PoissonNLLLoss", "GaussianNLLLoss",
    "CTCLoss", "ParameterDict", "SyncBatchNorm", "LazyModuleMixin", "LazyLinear",
    "LazyConv1d", "LazyConv2d", "LazyConv3d", "UninitializedParameter",
]
