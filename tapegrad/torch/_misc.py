"""Small top-level helpers of ``torch``: ``save``/``load``, ``compile``, thread settings."""

from __future__ import annotations

from typing import Any

from .._core.tensor import Tensor
from . import _tensor


def is_inference(input: Tensor) -> bool:
    """Whether ``input`` was made in inference mode."""
    from .autograd.grad_mode import is_inference as _isinf

    return _isinf(input)


def save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> None:
    """``torch.save`` in PyTorch's zip format: see :func:`tapegrad.torch.serialization.save`."""
    from .serialization import save as _save

    _save(obj, f, *args, **kwargs)


def load(f: Any, *args: Any, **kwargs: Any) -> Any:
    """``torch.load``, ``weights_only=True`` by default: see
    :func:`tapegrad.torch.serialization.load`."""
    from .serialization import load as _load

    return _load(f, *args, **kwargs)


def set_default_device(device: Any) -> None:
    """Only the CPU is supported."""
    _tensor.check_device(device)


def get_default_device() -> Any:
    """``device(type='cpu')``: the only device tapegrad computes on."""
    return _tensor.CPU


def use_deterministic_algorithms(mode: Any, warn_only: Any = False) -> None:
    """Accepted for compatibility (tapegrad is deterministic)."""


def get_num_threads() -> int:
    return 1


def set_num_threads(n: int) -> None:
    """Accepted for compatibility."""


class _TensorMeta(type):
    """``torch.FloatTensor`` and the other typed names: an isinstance check for one dtype
    over every tapegrad tensor, while calling one builds a tensor the way PyTorch's legacy
    constructor does."""

    _dtype: Any = None

    def __instancecheck__(cls, obj: Any) -> bool:
        if not isinstance(obj, Tensor):
            return False
        return cls._dtype is None or obj._data.dtype == cls._dtype

    def __subclasscheck__(cls, sub: Any) -> bool:
        return isinstance(sub, type) and issubclass(sub, Tensor)

    def __getattr__(cls, name: str) -> Any:
        return getattr(_tensor.TorchTensor, name)


def _legacy_new(dt: Any, args: tuple[Any, ...]) -> Tensor:
    return _tensor.legacy_new(dt, args)


TorchTensor = _tensor.TorchTensor


def _typed(name: str, dt: Any) -> type:
    def new(cls: Any, *args: Any) -> Tensor:
        return _legacy_new(dt, args)

    return _TensorMeta(name, (), {"__new__": new, "_dtype": dt,
                                  "__doc__": f"``torch.{name}``: legacy constructor and "
                                             "isinstance check for one dtype."})


FloatTensor = _typed("FloatTensor", "float32")
DoubleTensor = _typed("DoubleTensor", "float64")
LongTensor = _typed("LongTensor", "int64")
IntTensor = _typed("IntTensor", "int32")
BoolTensor = _typed("BoolTensor", "bool")
HalfTensor = _typed("HalfTensor", "float16")
