"""tf.data with SparseTensor components and ``Dataset.counter`` (the tf.data guide's
cells), checked against dense NumPy equivalents."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad.tf as tf


def _st() -> tf.SparseTensor:
    return tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])


def test_a_sparse_component_keeps_its_type_and_spec() -> None:
    ds = tf.data.Dataset.from_tensors(_st())
    assert repr(ds.element_spec) == "SparseTensorSpec(TensorShape([3, 4]), tf.int32)"
    assert ds.element_spec.value_type is tf.SparseTensor
    (el,) = list(ds)
    assert isinstance(el, tf.SparseTensor)
    np.testing.assert_array_equal(tf.sparse.to_dense(el).numpy(),
                                  [[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]])
    spec = tf.data.Dataset.from_tensors((_st(), 1)).element_spec
    assert repr(spec[0]).startswith("SparseTensorSpec(") and spec[1].dtype == tf.int32


def test_sparse_components_batch_with_a_leading_axis() -> None:
    ds = tf.data.Dataset.from_tensors(_st()).repeat(3).batch(2)
    assert repr(ds.element_spec) == "SparseTensorSpec(TensorShape([None, 3, 4]), tf.int32)"
    b = next(iter(ds))
    assert b.indices.numpy().tolist() == [[0, 0, 0], [0, 1, 2], [1, 0, 0], [1, 1, 2]]
    assert b.dense_shape.numpy().tolist() == [2, 3, 4]
    dense = tf.sparse.to_dense(b).numpy()
    np.testing.assert_array_equal(dense, np.stack([tf.sparse.to_dense(_st()).numpy()] * 2))
    last = list(ds)[-1]
    assert last.dense_shape.numpy().tolist() == [1, 3, 4]


def test_slices_of_a_sparse_tensor_are_its_rows() -> None:
    ds = tf.data.Dataset.from_tensor_slices(_st())
    assert repr(ds.element_spec) == "SparseTensorSpec(TensorShape([4]), tf.int32)"
    rows = [tf.sparse.to_dense(r).numpy().tolist() for r in ds]
    assert rows == [[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]]
    with pytest.raises(ValueError, match="Dimensions 3 and 2 are not compatible"):
        tf.data.Dataset.from_tensor_slices((_st(), [1, 2]))


def test_map_over_sparse_elements() -> None:
    ds = tf.data.Dataset.from_tensors(_st()).map(tf.sparse.to_dense)
    assert ds.element_spec == tf.TensorSpec((3, 4), tf.int32)
    assert next(iter(ds)).numpy().sum() == 3


def test_counter_counts_without_end() -> None:
    c = tf.data.Dataset.counter()
    assert int(c.cardinality()) == tf.data.INFINITE_CARDINALITY
    assert c.element_spec == tf.TensorSpec((), tf.int64)
    assert [int(x) for x in tf.data.Dataset.counter(3, 2, dtype=tf.int32).take(3)] == [3, 5, 7]
    assert next(iter(tf.data.Dataset.counter(3, 2, dtype=tf.int32))).dtype == tf.int32
    pairs = tf.data.Dataset.zip((tf.data.Dataset.counter(), tf.data.Dataset.range(3)))
    assert [(int(a), int(b)) for a, b in pairs] == [(0, 0), (1, 1), (2, 2)]


def test_experimental_counter_warns_as_deprecated(capsys: pytest.CaptureFixture[str]) -> None:
    from tapegrad.tf.data import _WARNED

    _WARNED.clear()
    ds = tf.data.experimental.Counter()
    tf.data.experimental.Counter()
    err = capsys.readouterr().err
    assert err.count("CounterV2 (from tensorflow.python.data.experimental.ops.counter) is "
                     "deprecated") == 1
    assert "Use `tf.data.Dataset.counter(...)` instead." in err
    assert [int(x) for x in ds.take(2)] == [0, 1]
