"""Conformance: TensorFlow's and Keras 3's random streams, bit for bit.

Each program runs once on real TensorFlow 2 / Keras 3 and once on
``tapegrad.tf``; the values (and dtypes, shapes) must be *equal*, not close.
Python's and NumPy's global generators are reseeded before each side, since
Keras draws its default seeds from Python's ``random``.  Error programs must
give the same exception type and exactly the same ``str(e)``.
Skipped without TensorFlow.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _plain(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if hasattr(x, "numpy"):
        return np.asarray(x.numpy())
    return np.asarray(x)


def _run(tf: Any, prog: Callable[[Any], Any]) -> Any:
    random.seed(99)
    np.random.seed(99)
    try:
        return _plain(prog(tf))
    except Exception as e:  # noqa: BLE001 - the exception is the result
        return ("raises", type(e).__name__, str(e))


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return a == b
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_equal, a, b))
    return (a.dtype == b.dtype and a.shape == b.shape
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f")))


def _seeded(*ops: Callable[[Any], Any], seed: int | None = 1234) -> Callable[[Any], Any]:
    """``set_seed(seed)`` then each op in turn: the op-seed sequence is part of the test."""
    def prog(tf: Any) -> Any:
        tf.random.set_seed(seed)
        return [op(tf) for op in ops]
    return prog


def _gen(make: Callable[[Any], Any], *draws: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    def prog(tf: Any) -> Any:
        g = make(tf)
        return [d(tf, g) for d in draws] + [g.state]
    return prog


LOGITS = [[0.1, 0.5, 1.0], [2.0, 0.0, -1.0], [-np.inf, 0.0, 0.3]]

TF_PROGRAMS: dict[str, Callable[[Any], Any]] = {
    # stateful ops: global seed, op seeds, kernel positions
    "uniform_sequence": _seeded(lambda tf: tf.random.uniform([5]),
                                lambda tf: tf.random.uniform([3, 2]),
                                lambda tf: tf.random.uniform([])),
    "normal_sequence": _seeded(lambda tf: tf.random.normal([7]),
                               lambda tf: tf.random.normal([2, 3], mean=1.0, stddev=0.5)),
    "op_seed_twice_continues": _seeded(lambda tf: tf.random.normal([5], seed=3),
                                       lambda tf: tf.random.normal([5], seed=3),
                                       lambda tf: tf.random.uniform([5], seed=3)),
    "op_seed_without_global": _seeded(lambda tf: tf.random.normal([3], seed=5),
                                      lambda tf: tf.random.uniform([3], seed=5), seed=None),
    "global_seed_zero": _seeded(lambda tf: tf.random.normal([3], seed=0),
                                lambda tf: tf.random.normal([3]), seed=0),
    "uniform_bounds": _seeded(lambda tf: tf.random.uniform([5], 2.0, 5.0),
                              lambda tf: tf.random.uniform([3], maxval=4.0),
                              lambda tf: tf.random.uniform([3], minval=0.0),
                              lambda tf: tf.random.uniform([3], minval=-1, maxval=1)),
    "uniform_dtypes": _seeded(lambda tf: tf.random.uniform([5], dtype=tf.float64),
                              lambda tf: tf.random.uniform([5], dtype=tf.float16),
                              lambda tf: tf.random.uniform([9], -3, 10, dtype=tf.int32),
                              lambda tf: tf.random.uniform([9], -3, 10**12, dtype=tf.int64)),
    "normal_dtypes": _seeded(lambda tf: tf.random.normal([5], dtype=tf.float64),
                             lambda tf: tf.random.normal([5], 1.0, 2.0, dtype=tf.float16)),
    "truncated_normal": _seeded(lambda tf: tf.random.truncated_normal([1001]),
                                lambda tf: tf.random.truncated_normal([5], stddev=3.0,
                                                                      dtype=tf.float64),
                                lambda tf: tf.random.truncated_normal([11], dtype=tf.float16)),
    "shuffle": _seeded(lambda tf: tf.random.shuffle(tf.range(10)),
                       lambda tf: tf.random.shuffle(tf.reshape(tf.range(12.0), [6, 2])),
                       lambda tf: tf.random.shuffle(tf.constant([1.0])),
                       lambda tf: tf.random.normal([2])),
    "categorical": _seeded(lambda tf: tf.random.categorical(tf.constant(LOGITS), 7),
                           lambda tf: tf.random.categorical(tf.math.log([[0.5, 0.5]]), 5,
                                                            dtype=tf.int32),
                           lambda tf: tf.random.normal([2])),
    "nn_dropout": _seeded(lambda tf: tf.nn.dropout(tf.ones([4, 5]), 0.4),
                          lambda tf: tf.nn.dropout(tf.ones([4, 5]), 0.4, noise_shape=[4, 1]),
                          lambda tf: tf.nn.dropout(tf.ones([3]), 0.0),
                          lambda tf: tf.random.uniform([2])),
    # stateless ops
    "stateless_normal": lambda tf: [
        tf.random.stateless_normal([3, 5], seed=[3, 4], mean=1.0, stddev=0.5),
        tf.random.stateless_normal([4], seed=[3, 4], dtype=tf.float64),
        tf.random.stateless_normal([4], seed=tf.constant([-7, 2**40], tf.int64))],
    "stateless_uniform": lambda tf: [
        tf.random.stateless_uniform([17], seed=[-3, 2**30]),
        tf.random.stateless_uniform([6], seed=[1, 2], minval=-2.0, maxval=2.0,
                                    dtype=tf.float16),
        tf.random.stateless_uniform([17], seed=[3, 4], minval=5, maxval=100, dtype=tf.int64),
        tf.random.stateless_uniform([7], seed=[3, 4], minval=None, maxval=None,
                                    dtype=tf.int32),
        tf.random.stateless_uniform([5], seed=[3, 4], minval=None, maxval=None,
                                    dtype=tf.uint32),
        tf.random.stateless_uniform([5], seed=[3, 4], minval=None, maxval=None,
                                    dtype=tf.uint64),
        tf.random.stateless_uniform([5], seed=[3, 4], minval=None, maxval=None,
                                    dtype=tf.int64)],
    "stateless_truncated_normal": lambda tf: [
        tf.random.stateless_truncated_normal([33], seed=[3, 4]),
        tf.random.stateless_truncated_normal([7], seed=[3, 4], dtype=tf.float64)],
    "stateless_categorical": lambda tf: [
        tf.random.stateless_categorical(tf.constant(LOGITS), 9, seed=[3, 4]),
        tf.random.stateless_categorical(tf.math.log([[0.2, 0.3, 0.5]] * 5), 50, seed=[1, 1])],
    "large_draws": lambda tf: [tf.random.stateless_normal([100000], seed=[9, 9]),
                               tf.random.stateless_truncated_normal([50000], seed=[9, 9]),
                               tf.random.stateless_normal([20000], seed=[9, 9],
                                                          dtype=tf.float64)],
    # tf.random.Generator
    "generator_from_seed": _gen(lambda tf: tf.random.Generator.from_seed(1),
                                lambda tf, g: g.normal([3]), lambda tf, g: g.normal([4]),
                                lambda tf, g: g.uniform([2]),
                                lambda tf, g: g.uniform([5], minval=0, maxval=9, dtype=tf.int32),
                                lambda tf, g: g.truncated_normal([9]),
                                lambda tf, g: g.uniform_full_int([3]),
                                lambda tf, g: g.make_seeds(2)),
    "generator_big_seed": _gen(lambda tf: tf.random.Generator.from_seed(2**70 + 5),
                               lambda tf, g: g.normal([3], dtype=tf.float64)),
    "generator_split": lambda tf: [g.normal([3]) for g in
                                   tf.random.Generator.from_seed(7).split(3)],
    "generator_from_state": _gen(lambda tf: tf.random.Generator.from_state([5, 0, 9], "philox"),
                                 lambda tf, g: g.uniform([3])),
    "generator_key_counter": _gen(
        lambda tf: tf.random.Generator.from_key_counter(3, [4, 5], "philox"),
        lambda tf, g: g.normal([2])),
    "create_rng_state": lambda tf: [tf.random.create_rng_state(2**70 + 3, "philox"),
                                    tf.random.create_rng_state([1, 2], "philox")],
    "experimental_split_fold_shuffle": lambda tf: [
        tf.random.experimental.stateless_split([1, 2], 3),
        tf.random.experimental.stateless_split(tf.constant([1, 2], tf.int64)),
        tf.random.experimental.stateless_fold_in([1, 2], 5),
        tf.random.experimental.stateless_shuffle(tf.range(6), seed=[1, 2]),
        tf.random.experimental.Generator.from_seed(3).normal([2])],
    "edge_cases": _seeded(
        lambda tf: tf.random.normal([0]), lambda tf: tf.random.normal([]),
        lambda tf: tf.random.truncated_normal([0, 3]),
        lambda tf: tf.random.uniform([3], minval=tf.constant(1.0), maxval=tf.constant(3.0)),
        lambda tf: tf.random.uniform([3], tf.constant(2), tf.constant(9), dtype=tf.int32),
        lambda tf: tf.random.uniform(tf.constant([2, 2]), dtype="float64"),
        lambda tf: tf.random.normal([2], mean=[1.0, 100.0], stddev=[0.1, 10.0]),
        lambda tf: tf.random.categorical(tf.constant([[1.0, 2.0]]), 0),
        lambda tf: tf.random.shuffle(tf.constant([[1, 2]])),
        lambda tf: tf.random.uniform([5], 0, 2**31 - 1, dtype=tf.int32),
        lambda tf: tf.random.uniform([5], -2**62, 2**62, dtype=tf.int64)),
    "generator_counter_wraps": _gen(
        lambda tf: tf.random.Generator.from_state([2**63 - 1, -1, 5], "philox"),
        lambda tf, g: g.normal([3]), lambda tf, g: g.uniform([2])),
    # errors
    "err_int_range": lambda tf: tf.random.uniform([2], 5, 5, dtype=tf.int32),
    "err_stateless_int_range": lambda tf: tf.random.stateless_uniform(
        [2], seed=[1, 2], minval=5, maxval=5, dtype=tf.int32),
    "err_int_without_maxval": lambda tf: tf.random.uniform([2], dtype=tf.int32),
    "err_dropout_rate": lambda tf: tf.nn.dropout(tf.ones([2]), 1.0),
}


def _k_init(cls: str, seeded: bool, shape: tuple[int, ...]) -> Callable[[Any], Any]:
    def prog(tf: Any) -> Any:
        k = tf.keras
        if seeded:
            return getattr(k.initializers, cls)(seed=4)(shape)
        k.utils.set_random_seed(11)
        init = getattr(k.initializers, cls)()
        return [init(shape), init(shape)]
    return prog


def _k_dense(tf: Any) -> Any:
    k = tf.keras
    k.utils.set_random_seed(42)
    m = k.Sequential([k.layers.Dense(4, activation="relu"), k.layers.Dense(2)])
    m.build((None, 3))
    return m.get_weights()


def _k_dropout(tf: Any) -> Any:
    k = tf.keras
    k.utils.set_random_seed(3)
    d = k.layers.Dropout(0.3)
    x = tf.ones((4, 6))
    return [d(x, training=True), d(x, training=True), d(x),
            k.layers.Dropout(0.5, seed=1)(x, training=True),
            k.layers.Dropout(0.5, noise_shape=(None, 1), seed=7)(x, training=True)]


def _k_sequential_dropout(tf: Any) -> Any:
    k = tf.keras
    k.utils.set_random_seed(1)
    m = k.Sequential([k.layers.Dense(3), k.layers.Dropout(0.5)])
    return [m(tf.ones((2, 4)), training=True), m(tf.ones((2, 4)))]


KERAS_PROGRAMS: dict[str, Callable[[Any], Any]] = {
    "int_seed": lambda tf: [tf.keras.random.normal((3, 4), seed=1),
                            tf.keras.random.normal((3, 4), seed=1),
                            tf.keras.random.normal((3,), seed=1, dtype="float64", mean=2.0,
                                                   stddev=3.0),
                            tf.keras.random.uniform((5,), -2, 3, seed=12345678901),
                            tf.keras.random.truncated_normal((9,), seed=3)],
    "seed_generator": lambda tf: (lambda g: [tf.keras.random.normal((3,), seed=g),
                                             tf.keras.random.uniform((2,), seed=g),
                                             g.state.numpy()])(
        tf.keras.random.SeedGenerator(1337)),
    "unseeded_after_set_random_seed": lambda tf: (
        tf.keras.utils.set_random_seed(5),
        [tf.keras.random.normal((3,)), tf.keras.random.normal((3,)),
         tf.keras.random.normal((3,), seed=tf.keras.random.SeedGenerator())])[1],
    "set_random_seed_seeds_tf": lambda tf: (tf.keras.utils.set_random_seed(8),
                                            [tf.random.normal((3,)), tf.random.uniform((2,))])[1],
    "keras_random_ops": lambda tf: [
        tf.keras.random.dropout(tf.ones((3, 3)), 0.5, seed=2),
        tf.keras.random.shuffle(tf.range(8), seed=2),
        tf.keras.random.randint((6,), 0, 10, seed=2),
        tf.keras.random.categorical(tf.constant([[0.5, 1.0, 0.1]]), 6, seed=2)],
    "dense_weights": _k_dense,
    "dropout_layer": _k_dropout,
    "sequential_dropout": _k_sequential_dropout,
    "variance_scaling": lambda tf: tf.keras.initializers.VarianceScaling(
        scale=0.3, mode="fan_out", distribution="untruncated_normal", seed=2)((4, 3, 2)),
    "err_seed_type": lambda tf: tf.keras.random.normal((2,), seed=1.5),
    "err_dropout_rate": lambda tf: tf.keras.layers.Dropout(1.5),
}
for _cls in ["GlorotUniform", "GlorotNormal", "HeNormal", "HeUniform", "LecunNormal",
             "LecunUniform", "RandomNormal", "RandomUniform", "TruncatedNormal"]:
    KERAS_PROGRAMS[f"init_{_cls}_seeded"] = _k_init(_cls, True, (3, 5))
    KERAS_PROGRAMS[f"init_{_cls}_unseeded"] = _k_init(_cls, False, (6, 2))


@pytest.mark.parametrize("name", sorted(TF_PROGRAMS))
def test_tf_stream_is_tensorflows(rtf: Any, name: str) -> None:
    theirs = _run(rtf, TF_PROGRAMS[name])
    ours = _run(tg_tf, TF_PROGRAMS[name])
    assert _equal(ours, theirs), f"\ntapegrad:   {ours!r}\ntensorflow: {theirs!r}"


@pytest.mark.parametrize("name", sorted(KERAS_PROGRAMS))
def test_keras_stream_is_keras(rtf: Any, name: str) -> None:
    pytest.importorskip("keras")
    theirs = _run(rtf, KERAS_PROGRAMS[name])
    ours = _run(tg_tf, KERAS_PROGRAMS[name])
    assert _equal(ours, theirs), f"\ntapegrad:   {ours!r}\nkeras:      {theirs!r}"


def test_a_wrong_transform_would_be_caught(rtf: Any) -> None:
    """The comparison is exact: NumPy's own float32 log instead of the C library's fails."""
    from tapegrad.tf import _philox

    theirs = _run(rtf, TF_PROGRAMS["large_draws"])
    keep = _philox.logf
    def numpy_log(x: np.ndarray) -> np.ndarray:
        return np.asarray(np.log(x))

    _philox.logf = numpy_log
    try:
        ours = _run(tg_tf, TF_PROGRAMS["large_draws"])
    finally:
        _philox.logf = keep
    assert not _equal(ours, theirs)
