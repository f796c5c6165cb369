"""``tf.data``: input pipelines (``tf.data.Dataset``) for loops and ``model.fit``.

>>> import tapegrad.tf as tf
>>> ds = tf.data.Dataset.from_tensor_slices(([1.0, 2.0, 3.0], [0, 1, 0])).batch(2)
>>> [(x.numpy().tolist(), y.numpy().tolist()) for x, y in ds]
[([1.0, 2.0], [0, 1]), ([3.0], [0])]
"""

from __future__ import annotations

from types import SimpleNamespace

from .dataset import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Dataset,
    DatasetIterator,
    assert_cardinality,
    cardinality,
    make_csv_dataset,
)
from .spec import TensorSpec

experimental = SimpleNamespace(
    AUTOTUNE=AUTOTUNE, INFINITE_CARDINALITY=INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY, cardinality=cardinality,
    assert_cardinality=assert_cardinality, make_csv_dataset=make_csv_dataset)

__all__ = ["Dataset", "DatasetIterator", "AUTOTUNE", "INFINITE_CARDINALITY",
           "UNKNOWN_CARDINALITY", "TensorSpec", "experimental"]
