"""``tf.data``: input pipelines (``tf.data.Dataset``) for loops and ``model.fit``.

>>> import tapegrad.tf as tf
>>> ds = tf.data.Dataset.from_tensor_slices(([1.0, 2.0, 3.0], [0, 1, 0])).batch(2)
>>> [(x.numpy().tolist(), y.numpy().tolist()) for x, y in ds]
[([1.0, 2.0], [0, 1]), ([3.0], [0])]
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

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

_WARNED: list[bool] = []


def Counter(start: Any = 0, step: Any = 1, dtype: Any = None) -> Dataset:  # noqa: N802
    """``tf.data.experimental.Counter`` (deprecated in TensorFlow, with its warning):
    :meth:`Dataset.counter`."""
    import inspect

    from ..function import get_logger

    if not _WARNED:  # TensorFlow's deprecation warning, once per process
        _WARNED.append(True)
        caller = inspect.stack()[1]
        get_logger().warning(
            f"From {caller.filename}:{caller.lineno}: CounterV2 (from "
            "tensorflow.python.data.experimental.ops.counter) is deprecated and will be "
            "removed in a future version.\nInstructions for updating:\nUse "
            "`tf.data.Dataset.counter(...)` instead.")
    return Dataset.counter(start, step, dtype)


experimental = SimpleNamespace(
    AUTOTUNE=AUTOTUNE, INFINITE_CARDINALITY=INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY, cardinality=cardinality,
    assert_cardinality=assert_cardinality, make_csv_dataset=make_csv_dataset,
    Counter=Counter)

__all__ = ["Dataset", "DatasetIterator", "AUTOTUNE", "INFINITE_CARDINALITY",
           "UNKNOWN_CARDINALITY", "TensorSpec", "experimental"]
