"""Conformance: cells of TensorFlow's tf.data guide that use sparse components and
counters print what real TensorFlow prints (class paths aside).  Skipped without
TensorFlow."""

from __future__ import annotations

import re
from typing import Any

import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _sparse_cells(tf: Any) -> list[str]:
    out = []
    st = tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])
    ds = tf.data.Dataset.from_tensors(st)
    out.append(repr(ds.element_spec))
    out.append(ds.element_spec.value_type.__name__)
    batched = ds.repeat(3).batch(2)
    out += [repr(batched.element_spec), str(next(iter(batched))), str(list(batched)[-1])]
    out.append(repr(tf.data.Dataset.from_tensors((st, 1)).element_spec))
    slices = tf.data.Dataset.from_tensor_slices(st)
    out += [repr(slices.element_spec), str([str(x) for x in slices])]
    dense = ds.map(lambda s: tf.sparse.to_dense(s))
    out += [repr(dense.element_spec), str(list(dense.as_numpy_iterator()))]
    out.append(repr(tf.SparseTensorSpec([None, 3], tf.float32)))
    return out


def _counter_cells(tf: Any) -> list[str]:
    lines = tf.data.Dataset.range(10)
    dataset = tf.data.Dataset.zip((tf.data.Dataset.counter(), lines))
    out = [repr(dataset), str(int(tf.data.Dataset.counter().cardinality()))]
    out.append(str(list(tf.data.Dataset.counter(3, 2, dtype=tf.int32).take(3)
                        .as_numpy_iterator())))
    out.append(str(list(tf.data.Dataset.counter(5, -2).take(3).as_numpy_iterator())))
    out.append(repr(dataset.batch(20)))
    n, _ = next(iter(dataset.batch(20)))
    out.append(str(n.numpy()))
    return out


@pytest.mark.parametrize("cells", [_sparse_cells, _counter_cells])
def test_guide_cells_print_as_tensorflow(rtf: Any, cells: Any) -> None:
    ours, theirs = cells(tg_tf), cells(rtf)
    assert ours == theirs


def test_experimental_counter_is_dataset_counter(rtf: Any) -> None:
    got = [[int(x) for x in tf.data.experimental.Counter(2, 3).take(4)] for tf in (tg_tf, rtf)]
    assert got[0] == got[1] == [2, 5, 8, 11]
    assert re.sub(r"0x[0-9a-f]+", "", repr(tg_tf.data.experimental.Counter())) == \
        re.sub(r"0x[0-9a-f]+", "", repr(rtf.data.experimental.Counter()))
