"""The dropout family, given a keep-mask drawn by the front-end's own generator.

Composites (a multiply, and an add for alpha dropout), so every rule is the
primitives'.  Each front-end draws the mask with its random functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.tensor import Tensor
from .elementwise import add, multiply

__all__ = ["dropout_masked", "alpha_dropout_masked"]

_SELU_ALPHA_PRIME = -1.7580993408473766  # -scale * alpha of SELU


def dropout_masked(x: Any, keep: np.ndarray, p: float, dtype: Any) -> Tensor:
    """``x * keep / (1 - p)`` (``keep`` broadcasts: feature dropout passes ``(N, C, 1, 1)``).

    >>> import numpy as np, tapegrad as tg
    >>> from tapegrad.ops.dropout import dropout_masked
    >>> dropout_masked(tg.tensor(np.ones(2)), np.array([True, False]), 0.5,
    ...                np.float64)._data.tolist()
    [2.0, 0.0]
    """
    scale = (np.asarray(keep) / (1.0 - p)).astype(dtype) if p < 1 else \
        np.zeros(np.shape(keep), dtype=dtype)
    return multiply(x, scale)


def alpha_dropout_masked(x: Any, keep: np.ndarray, p: float, dtype: Any) -> Tensor:
    """Alpha dropout: dropped units set to SELU's negative saturation, then an affine map
    that keeps zero mean and unit variance (PyTorch's ``alpha_dropout``)."""
    if p >= 1:
        return multiply(x, np.zeros(np.shape(keep), dtype=dtype))
    ap = _SELU_ALPHA_PRIME
    a = 1.0 / np.sqrt((ap * ap * p + 1) * (1 - p))
    k = np.asarray(keep, dtype=np.float64)
    mul = (k * a).astype(dtype)
    off = ((1 - k) * ap * a - a * ap * p).astype(dtype)
    return add(multiply(x, mul), off)
