"""``keras.utils``: ``to_categorical``, ``Progbar``, ``set_random_seed``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._core.errors import with_hint
from ..._core.tensor import Tensor
from .callbacks import Progbar

__all__ = ["to_categorical", "Progbar", "set_random_seed"]


def to_categorical(x: Any, num_classes: int | None = None) -> np.ndarray:
    """One-hot rows (float64, as Keras returns for array input) for integer labels.

    >>> import tapegrad.tf as tf
    >>> tf.keras.utils.to_categorical([0, 2, 1])
    array([[1., 0., 0.],
           [0., 0., 1.],
           [0., 1., 0.]])
    """
    arr = np.asarray(x._data if isinstance(x, Tensor) else x)
    if arr.dtype.kind == "f":
        if not np.all(arr == np.floor(arr)):
            raise ValueError(with_hint(
                f"Invalid class labels: {arr.tolist()!r:.80}", "labels must be integers"))
    y = arr.astype("int64")
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.reshape(-1)
    if num_classes is None:
        num_classes = int(np.max(y)) + 1
    if y.size and (y.min() < 0 or y.max() >= num_classes):
        raise IndexError(with_hint(
            f"index {int(y.max())} is out of bounds for axis 1 with size {num_classes}",
            "num_classes must exceed every label"))
    out = np.zeros((y.shape[0], int(num_classes)))
    out[np.arange(y.shape[0]), y] = 1
    return out.reshape(shape + (int(num_classes),))


def set_random_seed(seed: int) -> None:
    """Seed ``tf.random`` and NumPy's global generator (Keras's helper)."""
    from .. import random as _random

    np.random.seed(seed)
    _random.set_seed(seed)
