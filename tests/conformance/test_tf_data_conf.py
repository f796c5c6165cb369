"""Conformance: ``tf.data`` pipelines against real TensorFlow.

Each pipeline is built on both frameworks from the same arrays; the element
contents and their order, the dtypes, ``element_spec``, ``cardinality`` and
the dataset's repr must match.  ``shuffle`` orders are not TensorFlow's (see
the module docstring of :mod:`tapegrad.tf.data.dataset`), so shuffled
pipelines are compared as multisets.  Skipped without TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf():  # type: ignore[no-untyped-def]
    return real_tf()


X = np.arange(24, dtype=np.float32).reshape(12, 2)
Y = np.arange(12) % 3

PIPELINES: dict[str, Callable[[Any], Any]] = {
    "slices_tuple": lambda tf: tf.data.Dataset.from_tensor_slices((X, Y)),
    "slices_dict": lambda tf: tf.data.Dataset.from_tensor_slices({"x": X, "y": Y}),
    "slices_list": lambda tf: tf.data.Dataset.from_tensor_slices([[1.0, 2.0], [3.0, 4.0]]),
    "tensors": lambda tf: tf.data.Dataset.from_tensors((X[:2], 3)),
    "range": lambda tf: tf.data.Dataset.range(3, 20, 4),
    "map_batch": lambda tf: tf.data.Dataset.from_tensor_slices((X, Y)).map(
        lambda x, y: (x * 2.0, y + 1)).batch(5),
    "batch_drop": lambda tf: tf.data.Dataset.range(11).batch(4, drop_remainder=True),
    "filter": lambda tf: tf.data.Dataset.range(20).filter(lambda x: x % 3 == 1),
    "repeat_take": lambda tf: tf.data.Dataset.range(4).repeat().take(10),
    "repeat_n_skip": lambda tf: tf.data.Dataset.range(4).repeat(3).skip(5),
    "zip_enumerate": lambda tf: tf.data.Dataset.zip(
        (tf.data.Dataset.range(5), tf.data.Dataset.range(10, 13))).enumerate(2),
    "concatenate": lambda tf: tf.data.Dataset.range(3).concatenate(tf.data.Dataset.range(7, 9)),
    "unbatch": lambda tf: tf.data.Dataset.from_tensor_slices(X).batch(5).unbatch(),
    "padded": lambda tf: tf.data.Dataset.range(1, 6).map(lambda x: tf.fill([x], x)
                                                         ).padded_batch(2),
    "padded_shapes": lambda tf: tf.data.Dataset.range(1, 4).map(lambda x: tf.fill([x], x)
                                                                ).padded_batch(
        3, padded_shapes=[5], padding_values=tf.constant(-1, tf.int64)),
    "cache_prefetch": lambda tf: tf.data.Dataset.range(5).map(lambda x: x * x).cache()
    .prefetch(tf.data.AUTOTUNE),
    "dict_map": lambda tf: tf.data.Dataset.from_tensor_slices({"a": X[:, 0], "b": Y}).map(
        lambda d: {"s": d["a"] + 1.0, "b": d["b"]}),
    "flat_map": lambda tf: tf.data.Dataset.range(3).flat_map(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(2)),
    "interleave_blocks": lambda tf: tf.data.Dataset.range(1, 4).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(3), cycle_length=2, block_length=2),
    "interleave_ragged": lambda tf: tf.data.Dataset.range(1, 6).interleave(
        lambda x: tf.data.Dataset.range(x), cycle_length=3),
    "window_batch": lambda tf: tf.data.Dataset.range(7).window(3, shift=1, stride=2)
    .flat_map(lambda w: w.batch(3)),
    "window_drop": lambda tf: tf.data.Dataset.range(8).window(3, 2, drop_remainder=True)
    .flat_map(lambda w: w.batch(3, drop_remainder=True)),
    "window_tuple": lambda tf: tf.data.Dataset.from_tensor_slices((X[:5], Y[:5])).window(2)
    .flat_map(lambda a, b: tf.data.Dataset.zip((a.batch(2), b.batch(2)))),
    "scan": lambda tf: tf.data.Dataset.range(6).scan(
        tf.constant(1, tf.int64), lambda st, x: (st * 2, st + x)),
    "unique": lambda tf: tf.data.Dataset.from_tensor_slices(np.array([3, 1, 3, 2, 1, 5])).unique(),
    "choose": lambda tf: tf.data.Dataset.choose_from_datasets(
        [tf.data.Dataset.range(3), tf.data.Dataset.range(100, 103)],
        tf.data.Dataset.from_tensor_slices(np.array([1, 0, 0, 1, 0, 0, 1], np.int64))),
    "choose_no_stop": lambda tf: tf.data.Dataset.choose_from_datasets(
        [tf.data.Dataset.range(1), tf.data.Dataset.range(100, 103)],
        tf.data.Dataset.from_tensor_slices(np.array([0, 0, 1, 1, 0, 1], np.int64)),
        stop_on_empty_dataset=False),
    "take_while": lambda tf: tf.data.Dataset.range(10).take_while(lambda x: x < 4),
    "shard": lambda tf: tf.data.Dataset.range(10).shard(3, 1),
    "generator": lambda tf: tf.data.Dataset.from_generator(
        lambda: ((i, [float(i)] * i) for i in range(4)),
        output_signature=(tf.TensorSpec((), tf.int32), tf.TensorSpec((None,), tf.float32))),
}


def _contents(ds: Any) -> list[Any]:
    return [_numpy(e) for e in ds.as_numpy_iterator()]


def _numpy(e: Any) -> Any:
    if isinstance(e, dict):
        return {k: _numpy(v) for k, v in e.items()}
    if isinstance(e, tuple):
        return tuple(_numpy(v) for v in e)
    a = np.asarray(e)
    return (a.dtype.str, a.shape, a.tolist())


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_pipeline_matches_tensorflow(rtf: Any, name: str) -> None:
    mine, real = PIPELINES[name](tg_tf), PIPELINES[name](rtf)
    assert _contents(mine) == _contents(real)
    assert _contents(mine) == _contents(real)  # a second pass starts again
    assert int(mine.cardinality()) == int(real.cardinality())
    assert repr(mine.element_spec) == repr(real.element_spec)
    assert repr(mine).split(" element_spec")[0] == repr(real).split(" element_spec")[0]


def test_loop_yields_tensors_like_tensorflow(rtf: Any) -> None:
    for tf in (tg_tf, rtf):
        ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(4)
        xb, yb = next(iter(ds))
        assert isinstance(xb, tf.Tensor) and xb.shape == (4, 2) and yb.dtype == tf.int64
    assert len(tg_tf.data.Dataset.range(9).batch(4)) == len(rtf.data.Dataset.range(9).batch(4))


def test_shuffle_is_a_permutation_of_the_same_elements(rtf: Any) -> None:
    for tf in (tg_tf, rtf):
        tf.random.set_seed(0)
        ds = tf.data.Dataset.range(30).shuffle(7, seed=1).batch(4)
        flat = sorted(v for b in ds.as_numpy_iterator() for v in b.tolist())
        assert flat == list(range(30))
        assert int(ds.cardinality()) == 8


@pytest.mark.parametrize("bad", ["batch0", "mismatch", "len_inf", "len_unknown", "concat"])
def test_errors_match_tensorflow(rtf: Any, bad: str) -> None:
    cases: dict[str, Callable[[Any], Any]] = {
        "batch0": lambda tf: tf.data.Dataset.range(3).batch(0),
        "mismatch": lambda tf: tf.data.Dataset.from_tensor_slices((np.zeros(3), np.zeros(2))),
        "len_inf": lambda tf: len(tf.data.Dataset.range(3).repeat()),
        "len_unknown": lambda tf: len(tf.data.Dataset.range(3).filter(lambda x: x > 0)),
        "concat": lambda tf: tf.data.Dataset.range(3).concatenate(
            tf.data.Dataset.range(3).map(lambda x: tf.cast(x, tf.float32))),
    }
    errs = []
    for tf in (tg_tf, rtf):
        with pytest.raises(Exception) as info:
            cases[bad](tf)
        errs.append(info.value)
    mine, real = errs
    assert type(mine).__name__ == type(real).__name__
    first = str(mine).splitlines()[0]
    assert first.split(" [Op")[0].strip() in str(real)


def test_make_csv_dataset_matches_tensorflow(rtf: Any, tmp_path: Any) -> None:
    path = tmp_path / "iris.csv"
    path.write_text("sepal_length,sepal_width,species\n5.1,3.5,0\n4.9,3.0,1\n4.7,3.2,2\n"
                    "4.6,3.1,0\n5.0,3.6,1\n")
    for kwargs in ({"label_name": "species"},
                   {"column_names": ["a", "b", "c"], "select_columns": ["a", "c"]}):
        got = []
        for tf in (tg_tf, rtf):
            ds = tf.data.experimental.make_csv_dataset(str(path), batch_size=2, num_epochs=1,
                                                       shuffle=False, **kwargs)
            got.append((_contents(ds), repr(ds.element_spec), int(ds.cardinality())))
        assert got[0] == got[1]


def test_window_specs_and_cardinality(rtf: Any) -> None:
    for args in ((2,), (3, 1), (3, 2, 1, True), (2, 3, 2)):
        specs = []
        for tf in (tg_tf, rtf):
            ds = tf.data.Dataset.range(7).window(*args)
            specs.append((repr(ds.element_spec), int(ds.cardinality()),
                          repr(ds).split(" element_spec")[0]))
        assert specs[0] == specs[1], args
