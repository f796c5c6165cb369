"""``keras.utils``: ``to_categorical``, ``Progbar``, ``set_random_seed``.

>>> import tapegrad.tf as tf
>>> tf.keras.utils.set_random_seed(7)
>>> a = tf.keras.random.normal((2,))
>>> tf.keras.utils.set_random_seed(7)
>>> bool(tf.reduce_all(a == tf.keras.random.normal((2,))))
True
"""

from __future__ import annotations

import random as _pyrandom
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from .. import random as _tfr
from . import random as _kr
from .callbacks import Progbar

__all__ = ["to_categorical", "Progbar", "set_random_seed", "timeseries_dataset_from_array",
           "pad_sequences"]


def to_categorical(x: Any, num_classes: int | None = None) -> Any:
    """One-hot rows for integer labels, as Keras 3's ``to_categorical``.

    Array input gives a float64 NumPy array (labels cast to int64, negative
    labels counting from the end, as NumPy indexing does); a tensor gives a
    float32 tensor from ``tf.one_hot`` (labels out of range give zero rows).

    >>> import tapegrad.tf as tf
    >>> tf.keras.utils.to_categorical([0, 2, 1])
    array([[1., 0., 0.],
           [0., 0., 1.],
           [0., 1., 0.]])
    """
    if isinstance(x, Tensor):
        from .. import _ops

        t = _ops.convert_to_tensor(x)
        if t.shape.rank is not None and t.shape.rank > 1 and t.shape[-1] == 1:
            t = _ops.reshape(t, tuple(t.shape)[:-1])
        return _ops.one_hot(_ops.cast(t, "int64"), num_classes)
    y = np.array(x, dtype="int64")
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.reshape(-1)
    if not num_classes:
        num_classes = np.max(y) + 1
    out = np.zeros((y.shape[0], num_classes))
    out[np.arange(y.shape[0]), y] = 1
    return np.reshape(out, shape + (num_classes,))


def set_random_seed(seed: int) -> None:
    """Seed Python's ``random``, NumPy's global generator and ``tf.random``; reset Keras's.

    As Keras 3's: unseeded Keras draws and new initializers start over from
    ``seed`` (the global ``SeedGenerator`` is dropped and re-made on first use).
    """
    if not isinstance(seed, int):
        raise hinted(ValueError(with_hint(
            f"Expected `seed` argument to be an integer. Received: seed={seed} "
            f"(of type {type(seed)})", "pass a Python int")))
    _kr._GLOBAL[0] = None
    _pyrandom.seed(seed)
    np.random.seed(seed)
    _tfr.set_seed(seed)


def timeseries_dataset_from_array(data: Any, targets: Any, sequence_length: int,
                                  sequence_stride: int = 1, sampling_rate: int = 1,
                                  batch_size: int | None = 128, shuffle: bool = False,
                                  seed: int | None = None, start_index: int | None = None,
                                  end_index: int | None = None, format: str = "tf") -> Any:
    """Sliding windows over ``data`` (with ``targets[i]`` for the window starting at i)
    as a batched ``tf.data.Dataset``, Keras 3's start positions and checks.

    >>> import numpy as np
    >>> import tapegrad.tf as tf
    >>> ds = tf.keras.utils.timeseries_dataset_from_array(np.arange(6), None, 3, batch_size=2)
    >>> [b.numpy().tolist() for b in ds]
    [[[0, 1, 2], [1, 2, 3]], [[2, 3, 4], [3, 4, 5]]]
    """
    from ..data import Dataset

    arr = np.asarray(data._data if isinstance(data, Tensor) else data)
    n = len(arr)
    if start_index:
        if start_index < 0:
            raise hinted(ValueError(with_hint(
                f"`start_index` must be 0 or greater. Received: start_index={start_index}",
                "use a non-negative start")))
        if start_index >= n:
            raise hinted(ValueError(with_hint(
                "`start_index` must be lower than the length of the data. Received: "
                f"start_index={start_index}, for data of length {n}", "lower start_index")))
    if end_index:
        if start_index and end_index <= start_index:
            raise hinted(ValueError(with_hint(
                "`end_index` must be higher than `start_index`. Received: "
                f"start_index={start_index}, and end_index={end_index} ", "swap them")))
        if end_index >= n:
            raise hinted(ValueError(with_hint(
                "`end_index` must be lower than the length of the data. Received: "
                f"end_index={end_index}, for data of length {n}", "lower end_index")))
    for name, value in (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride)):
        if value <= 0:
            raise hinted(ValueError(with_hint(
                f"`{name}` must be higher than 0. Received: {name}={value}", "use 1 or more")))
        if value >= n:
            raise hinted(ValueError(with_hint(
                f"`{name}` must be lower than the length of the data. Received: "
                f"{name}={value}, for data of length {n}", "use a smaller value")))
    lo = 0 if start_index is None else int(start_index)
    hi = n if end_index is None else int(end_index)
    num_seqs = hi - lo - (sequence_length - 1) * sampling_rate
    tarr = None
    if targets is not None:
        tarr = np.asarray(targets._data if isinstance(targets, Tensor) else targets)
        num_seqs = min(num_seqs, len(tarr))
    index_dtype = "int32" if num_seqs < 2147483647 else "int64"
    starts = np.arange(0, num_seqs, sequence_stride, dtype=index_dtype)
    if shuffle:
        if seed is None:
            seed = int(np.random.randint(10**6))
        np.random.RandomState(seed).shuffle(starts)
    offsets = np.arange(0, sequence_length * sampling_rate, sampling_rate, dtype=index_dtype)
    windows = arr[lo:hi][starts[:, None] + offsets[None, :]]
    ds = Dataset.from_tensor_slices(windows if tarr is None else
                                    (windows, tarr[lo:hi][starts]))
    if batch_size is not None:
        if shuffle:
            ds = ds.shuffle(buffer_size=batch_size * 8, seed=seed)
        return ds.batch(batch_size)
    if shuffle:
        ds = ds.shuffle(buffer_size=1024, seed=seed)
    return ds


from .preprocessing.sequence import pad_sequences  # noqa: E402  (keras.utils.pad_sequences)
