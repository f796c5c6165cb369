"""Conformance: TensorFlow's rejection samplers, ThreeFry's CPU behaviour, Keras RNN dropout.

Each program runs on real TensorFlow 2 / Keras 3 and on ``tapegrad.tf``;
values must be *equal* (dtype, shape and every bit), errors must have the same
type and ``str(e)``.  Covered: ``tf.random.poisson`` / ``gamma`` (stateful,
after ``set_seed``, with the op-seed sequence), ``stateless_poisson`` /
``gamma`` / ``binomial``, ``Generator.binomial``, ``fold_in`` / ``split``,
``tf.data.Dataset.shuffle`` (orders, reshuffling, with ``repeat``/``map``),
ThreeFry (states, and the errors of its draws on CPU), ``keras.random.gamma``
/ ``binomial`` / ``beta``, and the dropout masks of Keras' RNN layers and
``SpatialDropout``.  Skipped without TensorFlow.
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


def _seeded(*ops: Callable[[Any], Any], seed: int | None = 7) -> Callable[[Any], Any]:
    """``set_seed`` then each op, then a uniform draw (the stream must be where TF's is)."""
    def prog(tf: Any) -> Any:
        tf.random.set_seed(seed)
        tail = [] if seed is None else [tf.random.uniform([3])]   # unseeded: nondeterministic
        return [op(tf) for op in ops] + tail
    return prog


FLOATS = ["float16", "float32", "float64"]

TF_PROGRAMS: dict[str, Callable[[Any], Any]] = {
    # stateful Poisson: both algorithms (rate < 10: Knuth; >= 10: Hormann), every dtype
    **{f"poisson_{d}": _seeded(
        lambda tf, d=d: tf.random.poisson([9], [0.7, 4.0, 15.0, 120.0], dtype=getattr(tf, d)),
        lambda tf, d=d: tf.random.poisson([3, 2], 30.0, dtype=getattr(tf, d), seed=3))
       for d in [*FLOATS, "int32", "int64"]},
    "poisson_int_rates": _seeded(lambda tf: tf.random.poisson([4], [2, 40], dtype=tf.int64)),
    "poisson_op_seed_no_global": _seeded(lambda tf: tf.random.poisson([5], 3.0, seed=2),
                                         lambda tf: tf.random.poisson([5], 3.0, seed=2),
                                         seed=None),
    "poisson_empty": _seeded(lambda tf: tf.random.poisson([0], [1.0, 2.0])),
    # stateful gamma: alpha < 1, == 1 (exponential), > 1; beta; every float dtype
    **{f"gamma_{d}": _seeded(
        lambda tf, d=d: tf.random.gamma([12], [0.3, 1.0, 2.5, 40.0], dtype=getattr(tf, d)),
        lambda tf, d=d: tf.random.gamma([4, 2], [[0.5], [3.0]], beta=[1.0, 4.0],
                                        dtype=getattr(tf, d), seed=5))
       for d in FLOATS},
    # stateless samplers
    **{f"stateless_poisson_{d}": lambda tf, d=d: [
        tf.random.stateless_poisson([20, 3], seed=[1, 2], lam=[0.5, 6.0, 80.0],
                                    dtype=getattr(tf, d)),
        tf.random.stateless_poisson([4], seed=tf.constant([-3, 2**40], tf.int64), lam=12.0,
                                    dtype=getattr(tf, d))]
       for d in [*FLOATS, "int32", "int64"]},
    **{f"stateless_gamma_{d}": lambda tf, d=d: [
        tf.random.stateless_gamma([25, 3], seed=[3, 4], alpha=[0.2, 1.0, 7.5],
                                  dtype=getattr(tf, d)),
        tf.random.stateless_gamma([6, 2], seed=[5, 6], alpha=[[0.5], [2.0]], beta=[3.0, 0.5],
                                  dtype=getattr(tf, d))]
       for d in FLOATS},
    **{f"stateless_binomial_{d}": lambda tf, d=d: [
        tf.random.stateless_binomial([30, 4], seed=[1, 2], counts=[5.0, 40.0, 300.0, 8.0],
                                     probs=[0.3, 0.6, 0.5, 0.95], output_dtype=getattr(tf, d)),
        tf.random.stateless_binomial([5, 2], seed=[9, 9], counts=[[0.0], [20.0]],
                                     probs=[0.0, 1.0], output_dtype=getattr(tf, d))]
       for d in [*FLOATS, "int32", "int64"]},
    "stateless_binomial_param_dtypes": lambda tf: [
        tf.random.stateless_binomial([6], seed=[1, 1], counts=tf.constant(50.0, tf.float64),
                                     probs=tf.constant(0.25, tf.float64)),
        tf.random.stateless_binomial([6], seed=[1, 1], counts=tf.constant(50.0, tf.float16),
                                     probs=tf.constant(0.75, tf.float16))],
    "generator_binomial": lambda tf: (lambda g: [
        g.binomial([5, 2], counts=[10.0, 50.0], probs=[0.3, 0.6]), g.state,
        g.binomial([7], counts=4.0, probs=0.5, dtype=tf.int64), g.state, g.normal([2])])(
        tf.random.Generator.from_seed(3)),
    "fold_in_split": lambda tf: [tf.random.fold_in([1, 2], 5), tf.random.split([1, 2], 3),
                                 tf.random.split(tf.constant([3, 4], tf.int64))],
    # ThreeFry: the states TensorFlow makes, and its CPU kernels' refusals
    "threefry_states": lambda tf: [
        tf.random.Generator.from_seed(2**70 + 5, alg="threefry").state,
        tf.random.create_rng_state(2**70 + 3, "threefry"),
        tf.random.create_rng_state([1, 2, 3], "threefry"),
        tf.random.Generator.from_key_counter(3, [4], "threefry").state,
        tf.random.Generator.from_state([1, 2], "threefry").state,
        tf.random.Generator.from_seed(1, alg=tf.random.Algorithm.THREEFRY).algorithm],
    "err_threefry_generator_draw": lambda tf: tf.random.Generator.from_seed(
        5, alg="threefry").normal([2]),
    "err_threefry_generator_split": lambda tf: tf.random.Generator.from_seed(
        5, alg="threefry").split(2),
    "err_threefry_binomial": lambda tf: tf.random.Generator.from_seed(
        5, alg="threefry").binomial([2], 10.0, 0.5),
    "err_threefry_stateless_normal": lambda tf: tf.random.stateless_normal(
        [3], seed=[1, 2], alg="threefry"),
    "err_threefry_stateless_uniform_int": lambda tf: tf.random.stateless_uniform(
        [3], seed=[1, 2], minval=0, maxval=5, dtype=tf.int32, alg="threefry"),
    "err_threefry_stateless_full_int": lambda tf: tf.random.stateless_uniform(
        [3], seed=[1, 2], minval=None, maxval=None, dtype=tf.int64, alg="threefry"),
    "err_threefry_truncated": lambda tf: tf.random.stateless_truncated_normal(
        [3], seed=[1, 2], alg="threefry"),
    "err_threefry_shuffle": lambda tf: tf.random.experimental.stateless_shuffle(
        tf.range(4), seed=[1, 2], alg="threefry"),
    "err_threefry_fold_in": lambda tf: tf.random.fold_in([1, 2], 3, alg="threefry"),
    "err_bad_alg": lambda tf: tf.random.stateless_normal([3], seed=[1, 2], alg="foo"),
    "err_bad_alg_generator": lambda tf: tf.random.Generator.from_seed(1, alg="foo"),
    "err_threefry_state_size": lambda tf: tf.random.Generator.from_state([1, 2, 3], "threefry"),
    "err_philox_state_size": lambda tf: tf.random.Generator.from_state([1, 2], "philox"),
    "err_stateless_poisson_shape": lambda tf: tf.random.stateless_poisson(
        [5], seed=[1, 2], lam=[3.0]),
    "err_stateless_gamma_shape": lambda tf: tf.random.stateless_gamma(
        [5], seed=[1, 2], alpha=[3.0]),
    "err_stateless_binomial_shape": lambda tf: tf.random.stateless_binomial(
        [5], seed=[1, 2], counts=[3.0, 4.0], probs=0.5),
}


def _it(ds: Any) -> list[Any]:
    return [np.asarray(x) for x in ds]


def _two_passes(ds: Any) -> list[Any]:
    return _it(ds) + _it(ds)


TF_PROGRAMS.update({
    # tf.data's ShuffleDataset: the ring buffer, seeds per iterator, reshuffling
    "data_shuffle": _seeded(lambda tf: _it(tf.data.Dataset.range(10).shuffle(4))),
    "data_shuffle_two_passes": _seeded(lambda tf: _two_passes(tf.data.Dataset.range(12).shuffle(5))),
    "data_shuffle_fixed": _seeded(lambda tf: _two_passes(
        tf.data.Dataset.range(12).shuffle(5, reshuffle_each_iteration=False))),
    "data_shuffle_op_seed": _seeded(lambda tf: _it(tf.data.Dataset.range(10).shuffle(10, seed=3)),
                                    seed=None),
    "data_shuffle_big_buffer": _seeded(lambda tf: _it(tf.data.Dataset.range(20).shuffle(100))),
    "data_shuffle_batch": _seeded(lambda tf: _it(
        tf.data.Dataset.from_tensor_slices(np.arange(20.0)).shuffle(8).batch(3))),
    "data_shuffle_repeat": _seeded(lambda tf: _it(tf.data.Dataset.range(6).shuffle(3).repeat(3))),
    "data_shuffle_repeat_forever": _seeded(
        lambda tf: _it(tf.data.Dataset.range(5).shuffle(5).repeat().take(17))),
    "data_repeat_shuffle": _seeded(lambda tf: _it(tf.data.Dataset.range(5).repeat(2).shuffle(4))),
    "data_shuffle_global_seed_0": _seeded(lambda tf: _it(tf.data.Dataset.range(10).shuffle(10)),
                                          seed=0),
    "data_shuffle_tuples": _seeded(lambda tf: _it(tf.data.Dataset.from_tensor_slices(
        (np.arange(8), np.arange(8) * 2)).shuffle(8).batch(4))),
    "data_shuffle_then_map": _seeded(lambda tf: _two_passes(
        tf.data.Dataset.range(8).shuffle(3).map(lambda x: x * 2))),
    "data_two_shuffles": _seeded(lambda tf: [*_it(tf.data.Dataset.range(8).shuffle(8)),
                                             *_it(tf.data.Dataset.range(8).shuffle(8))]),
})


def _k(tf: Any) -> Any:
    return tf.keras


def _k_samplers(tf: Any) -> Any:
    k = _k(tf)
    k.utils.set_random_seed(3)
    return [k.random.gamma((4, 3), alpha=0.7, seed=1), k.random.gamma((5,), alpha=2.0),
            k.random.gamma((3,), 1.5, dtype="float64", seed=k.random.SeedGenerator(4)),
            k.random.binomial((6,), counts=10, probabilities=0.4, seed=2),
            k.random.binomial((3, 2), counts=[30.0, 5.0], probabilities=[0.5, 0.9]),
            k.random.beta((2, 3), alpha=0.5, beta=2.0, seed=3),
            k.random.beta((4,), 1.0, 3.0, dtype="float64"), k.random.normal((2,))]


X_SEQ = np.random.RandomState(0).rand(2, 4, 3).astype("float32")


def _rnn_masks(cls: str, **kw: Any) -> Callable[[Any], Any]:
    """The layer's dropout masks, seen through its outputs: the kernels come from Glorot, so a
    wrong mask changes the outputs far beyond the float32 matmuls' last bits."""
    def prog(tf: Any) -> Any:
        k = _k(tf)
        k.utils.set_random_seed(3)
        layer = getattr(k.layers, cls)(2, recurrent_initializer="glorot_uniform",
                                       bias_initializer="random_normal", **kw)
        outs = [layer(X_SEQ), layer(X_SEQ, training=True), layer(X_SEQ, training=True),
                layer(X_SEQ)]
        return (outs + list(layer.get_weights())
                + [k.random.normal((2,)), k.initializers.GlorotUniform()((2, 2))])
    return prog


def _k_fit_then_draw(tf: Any) -> Any:
    """``fit(shuffle=True)`` shuffles inside TensorFlow graphs: no eager op seed is drawn, so
    the draws after it are the ones TensorFlow makes."""
    k = _k(tf)
    k.utils.set_random_seed(1)
    x = np.arange(40, dtype="float32").reshape(20, 2) / 40
    model = k.Sequential([k.Input((2,)), k.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, x.sum(1, keepdims=True), epochs=2, batch_size=5, verbose=0, shuffle=True)
    return [tf.random.normal([3]), tf.random.uniform([2])]


X_NOISE = np.linspace(-1, 1, 12, dtype="float32").reshape(3, 4)


def _k_noise_layers(tf: Any) -> Any:
    k = _k(tf)
    k.utils.set_random_seed(4)
    layers = k.layers
    g, gd, ad = layers.GaussianNoise(0.3), layers.GaussianDropout(0.4, seed=2), \
        layers.AlphaDropout(0.3)
    ad2 = layers.AlphaDropout(0.5, noise_shape=(3, 1), seed=5)
    return [g(X_NOISE), g(X_NOISE, training=True), g(X_NOISE, training=True),
            gd(X_NOISE, training=True), ad(X_NOISE, training=True), ad2(X_NOISE, training=True),
            ad(X_NOISE), k.random.normal((2,))]


Q_MHA = np.linspace(-1, 1, 24, dtype="float32").reshape(2, 3, 4)


def _k_mha(dropout: float, training: bool) -> Callable[[Any], Any]:
    """MultiHeadAttention's weights (each sublayer a fresh initializer clone, EinsumDense's
    fans) and its attention-dropout masks (the dropout layer's SeedGenerator)."""
    def prog(tf: Any) -> Any:
        k = _k(tf)
        k.utils.set_random_seed(4)
        layer = k.layers.MultiHeadAttention(2, 3, dropout=dropout)
        out = layer(Q_MHA, Q_MHA, training=training)
        return [out, *layer.get_weights(), k.initializers.GlorotUniform()((2, 2))]
    return prog


KERAS_PROGRAMS: dict[str, Callable[[Any], Any]] = {
    "samplers": _k_samplers,
    "mha_weights_and_dropout_seed_order": lambda tf: _k_mha(0.2, False)(tf)[1:],
    "mha_dropout": _k_mha(0.5, True),
    "noise_layers": _k_noise_layers,
    "noise_in_a_model": lambda tf: (lambda k: (k.utils.set_random_seed(4), (lambda m: [
        m(X_NOISE, training=True), m(X_NOISE)])(k.Sequential(
            [k.Input((4,)), k.layers.GaussianNoise(0.1), k.layers.Dense(2)])))[1])(_k(tf)),
    "err_alpha_dropout_none_in_noise_shape": lambda tf: _k(tf).layers.AlphaDropout(
        0.5, noise_shape=(None, 1), seed=5)(X_NOISE, training=True),
    "err_gaussian_noise_stddev": lambda tf: _k(tf).layers.GaussianNoise(1.5),
    "fit_shuffle_leaves_tf_stream": _k_fit_then_draw,
    "spatial_dropout": lambda tf: (_k(tf).utils.set_random_seed(2), [
        _k(tf).layers.SpatialDropout1D(0.5)(np.ones((2, 3, 4), "float32"), training=True),
        _k(tf).layers.SpatialDropout2D(0.5, seed=3)(np.ones((2, 3, 3, 4), "float32"),
                                                     training=True),
        _k(tf).layers.SpatialDropout2D(0.4, data_format="channels_first")(
            np.ones((2, 3, 2, 2), "float32"), training=True)])[1],
    "rnn_cells_draw_in_keras_order": lambda tf: (
        _k(tf).utils.set_random_seed(2), _k(tf).layers.LSTM(3), _k(tf).layers.SimpleRNN(2),
        _k(tf).layers.GRU(2, dropout=0.1),
        _k(tf).initializers.GlorotUniform()((2, 2)))[-1],
}
for _cls in ["SimpleRNN", "LSTM", "GRU"]:
    KERAS_PROGRAMS[f"{_cls}_dropout"] = _rnn_masks(_cls, dropout=0.5)
    KERAS_PROGRAMS[f"{_cls}_dropout_seeded"] = _rnn_masks(_cls, dropout=0.5, seed=4)
    KERAS_PROGRAMS[f"{_cls}_recurrent_dropout"] = _rnn_masks(
        _cls, dropout=0.3, recurrent_dropout=0.5, seed=2, return_sequences=True)
KERAS_PROGRAMS["GRU_reset_before_dropout"] = _rnn_masks(
    "GRU", reset_after=False, dropout=0.3, recurrent_dropout=0.4)


def _close_or_equal(a: Any, b: Any) -> bool:
    """RNN outputs are compared rounded (the float32 matmuls' last bits may differ)."""
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return all(_close_or_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and bool(
            np.allclose(a, b, atol=2e-5, rtol=0))
    return _equal(a, b)


@pytest.mark.parametrize("name", sorted(TF_PROGRAMS))
def test_tf_sampler_is_tensorflows(rtf: Any, name: str) -> None:
    theirs = _run(rtf, TF_PROGRAMS[name])
    ours = _run(tg_tf, TF_PROGRAMS[name])
    if name.startswith("err_"):
        assert isinstance(theirs, tuple), theirs
    assert _equal(ours, theirs), f"\ntapegrad:   {ours!r}\ntensorflow: {theirs!r}"


@pytest.mark.parametrize("name", sorted(KERAS_PROGRAMS))
def test_keras_stream_is_keras(rtf: Any, name: str) -> None:
    pytest.importorskip("keras")
    theirs = _run(rtf, KERAS_PROGRAMS[name])
    ours = _run(tg_tf, KERAS_PROGRAMS[name])
    same = _close_or_equal if "dropout" in name and "spatial" not in name else _equal
    assert same(ours, theirs), f"\ntapegrad:   {ours!r}\nkeras:      {theirs!r}"


def test_rnn_dropout_masks_are_not_numpy(rtf: Any) -> None:
    """The comparison catches a wrong mask: an RNN whose masks come from another stream fails."""
    pytest.importorskip("keras")
    from tapegrad.tf.keras import layers_rnn

    theirs = _run(rtf, KERAS_PROGRAMS["LSTM_dropout_seeded"])
    keep = layers_rnn._dropout_mask

    def numpy_mask(shape: tuple[int, ...], rate: float, dtype: Any, seed: Any) -> np.ndarray:
        keep_ = np.random.default_rng(0).random(shape) >= rate
        return (keep_ / (1 - rate)).astype(dtype)

    layers_rnn._dropout_mask = numpy_mask  # type: ignore[assignment]
    try:
        ours = _run(tg_tf, KERAS_PROGRAMS["LSTM_dropout_seeded"])
    finally:
        layers_rnn._dropout_mask = keep  # type: ignore[assignment]
    assert not _close_or_equal(ours, theirs)


def test_samplers_match_their_distributions() -> None:
    """Without TensorFlow too: the samplers' means are the distributions' (many draws)."""
    s = tg_tf.random.stateless_poisson([4000, 2], seed=[1, 2], lam=[3.0, 50.0],
                                       dtype=tg_tf.float64).numpy()
    assert np.allclose(s.mean(0), [3.0, 50.0], rtol=0.05)
    g = tg_tf.random.stateless_gamma([4000, 2], seed=[1, 2], alpha=[0.5, 4.0],
                                     dtype=tg_tf.float64).numpy()
    assert np.allclose(g.mean(0), [0.5, 4.0], rtol=0.07)
    b = tg_tf.random.stateless_binomial([4000, 2], seed=[1, 2], counts=[8.0, 200.0],
                                        probs=[0.3, 0.6]).numpy()
    assert np.allclose(b.mean(0), [2.4, 120.0], rtol=0.05)
