"""tapegrad: reverse-mode automatic differentiation on NumPy, in two styles.

``import tapegrad.torch as torch`` (PyTorch style) and ``import tapegrad.tf as
tf`` (TensorFlow style) share this core: one :class:`Tensor`, one graph node,
one engine (:func:`grad`).  The core namespace uses numpy names and numpy's
dtype rules.

>>> import tapegrad as tg
>>> x = tg.tensor(2.0, requires_grad=True)
>>> tg.grad(x ** 3, x)[0].item()
12.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import ops
from ._core.mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from ._core.registry import Op, defop
from ._core.tensor import Tensor, as_array, make
from .autodiff.entry import backward, grad
from .ops import *  # noqa: F403
from .ops import linalg_ext as linalg  # numpy-named linear algebra: tapegrad.linalg.inv, ...

__version__ = "0.1.0"


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (numpy dtype rules).

    >>> import tapegrad as tg
    >>> tg.tensor([1, 2]).dtype
    dtype('int64')
    """
    return Tensor(data, dtype=dtype, requires_grad=requires_grad)


def zeros(shape: Any, dtype: Any = np.float64) -> Tensor:
    return make(np.zeros(shape, dtype=dtype))


def ones(shape: Any, dtype: Any = np.float64) -> Tensor:
    return make(np.ones(shape, dtype=dtype))


def stop_gradient(x: Any) -> Tensor:
    """A tensor with the same value whose gradient is zero (cut from the graph)."""
    if isinstance(x, Tensor):
        return x.detach()
    return make(as_array(x))


class detect_anomaly:
    """Context manager: name the forward op (and the user's line) whose backward made NaN/inf."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self._prev: list[bool] = []

    def __enter__(self) -> detect_anomaly:
        from ._core.registry import ANOMALY

        self._prev.append(ANOMALY[0])
        ANOMALY[0] = self.check_nan
        return self

    def __exit__(self, *exc: object) -> None:
        from ._core.registry import ANOMALY

        ANOMALY[0] = self._prev.pop()


__all__ = [
    "Tensor", "tensor", "zeros", "ones", "grad", "backward", "no_grad", "enable_grad",
    "set_grad_enabled", "is_grad_enabled", "detect_anomaly", "stop_gradient", "defop", "Op",
    "ops", "linalg",
] + list(ops.__all__)
