"""Small top-level helpers of ``torch``: ``save``/``load``, ``compile``, thread settings."""

from __future__ import annotations

import pickle
from typing import Any

from .._core.tensor import Tensor
from . import _tensor


def is_inference(input: Tensor) -> bool:
    """Whether ``input`` was made in inference mode."""
    from .autograd.grad_mode import is_inference as _isinf

    return _isinf(input)


def save(obj: Any, f: Any, pickle_protocol: int = 2, **kwargs: Any) -> None:
    """Pickle ``obj`` (tensors, state dicts, ...) to a path or file object."""
    if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
        with open(f, "wb") as fh:
            pickle.dump(obj, fh, protocol=pickle_protocol)
    else:
        pickle.dump(obj, f, protocol=pickle_protocol)


def load(f: Any, map_location: Any = None, weights_only: Any = None, **kwargs: Any) -> Any:
    """Load an object written by :func:`save`."""
    if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
        with open(f, "rb") as fh:
            return pickle.load(fh)
    return pickle.load(f)


def set_default_device(device: Any) -> None:
    """Only the CPU is supported."""
    _tensor.check_device(device)


def use_deterministic_algorithms(mode: Any, warn_only: Any = False) -> None:
    """Accepted for compatibility (tapegrad is deterministic)."""


def get_num_threads() -> int:
    return 1


def set_num_threads(n: int) -> None:
    """Accepted for compatibility."""


def compile(model: Any = None, **kwargs: Any) -> Any:
    """Returns the model (or function) unchanged: tapegrad runs eagerly."""
    if model is None:
        return lambda m: m
    return model
