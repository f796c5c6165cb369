"""``tf.random`` / ``keras.random``: Philox, TensorFlow's seed rules and pinned TensorFlow values.

The pinned numbers were printed by real TensorFlow 2.21 / Keras 3.15 (CPU);
the conformance suite (tests/conformance/test_tf_random_conf.py) compares
many more programs live.  These run without TensorFlow.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import tapegrad.tf as tf
from tapegrad.tf import _philox


def _f32(values: list[float] | list[list[float]]) -> np.ndarray:
    return np.array(values, dtype=np.float32)


# ------------------------------------------------------------------ Philox4x32-10
@pytest.mark.parametrize("counter,key,expected", [
    # Random123's known-answer vectors for philox4x32-10
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
])
def test_philox_known_answers(counter: tuple[int, int, int, int], key: tuple[int, int],
                              expected: tuple[int, ...]) -> None:
    gen = _philox.Philox.from_key_counter(key, counter)
    assert tuple(int(v) for v in gen.blocks(1)[0]) == expected


def test_philox_counter_carries_across_64_bits() -> None:
    gen = _philox.Philox((1 << 64) - 1, 5)
    two = gen.blocks(2)
    np.testing.assert_array_equal(two[1], _philox.Philox(1 << 64, 5).blocks(1)[0])
    np.testing.assert_array_equal(gen.skip(1).blocks(1)[0], two[1])


def test_uint_to_float_transforms() -> None:
    assert _philox.u32_to_float(np.array([0, 0x7FFFFF, 0xFFFFFFFF], np.uint32)).tolist() == [
        0.0, np.float32(1) - np.float32(2.0**-23), np.float32(1) - np.float32(2.0**-23)]
    assert _philox.u64_to_double(np.array([0], np.uint32), np.array([1], np.uint32))[0] == 2**-52


def test_libm_fallback_stays_within_one_ulp(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.linspace(1e-7, 1, 10001, dtype=np.float32)
    exact = _philox.logf(x)
    exact_normal = tf.random.stateless_normal([5000], seed=[1, 2]).numpy()
    monkeypatch.setattr(_philox, "_LIBM", None)   # no C library: NumPy's doubles, rounded
    approx = _philox.logf(x)
    assert np.all(np.abs(exact.view(np.int32) - approx.view(np.int32)) <= 1)
    approx_normal = tf.random.stateless_normal([5000], seed=[1, 2]).numpy()
    np.testing.assert_allclose(approx_normal, exact_normal, rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------ seeds
def test_get_seed_follows_tensorflows_rules() -> None:
    tf.random.set_seed(None)
    assert tf.random.get_seed(None) == (None, None)
    assert tf.random.get_seed(5) == (87654321, 5)
    tf.random.set_seed(0)
    assert tf.random.get_seed(0) == (0, 2**31 - 1)  # (0, 0) would mean "nondeterministic"
    tf.random.set_seed(2**31 + 3)
    assert tf.random.get_seed(7) == (4, 7)
    tf.random.set_seed(1)
    first = tf.random.get_seed(None)
    assert first == (1, random.Random(1).randint(0, 2**31 - 1))


def test_stateful_values_are_tensorflows() -> None:
    tf.random.set_seed(1234)
    np.testing.assert_array_equal(tf.random.normal([4]).numpy(), _f32(
        [0.8369314074516296, -0.7342977523803711, 1.0402942895889282, 0.040359918028116226]))
    np.testing.assert_array_equal(tf.random.uniform([3]).numpy(), _f32(
        [0.32536470890045166, 0.13870060443878174, 0.6480493545532227]))
    tf.random.set_seed(7)
    assert tf.random.shuffle(tf.range(6)).numpy().tolist() == [4, 1, 5, 2, 0, 3]
    assert tf.random.categorical([[0.0, 0.0, 0.0]], 6).numpy().tolist() == [[0, 1, 2, 1, 0, 2]]


def test_an_op_seed_keeps_its_position_until_set_seed() -> None:
    tf.random.set_seed(3)
    a = tf.random.normal([4], seed=9).numpy()
    b = tf.random.normal([4], seed=9).numpy()
    assert not np.array_equal(a, b)
    # another op or dtype has a stream of its own
    u = tf.random.uniform([4], seed=9).numpy()
    tf.random.set_seed(3)
    np.testing.assert_array_equal(tf.random.uniform([4], seed=9).numpy(), u)
    np.testing.assert_array_equal(tf.random.normal([4], seed=9).numpy(), a)
    np.testing.assert_array_equal(tf.random.normal([4], seed=9).numpy(), b)


def test_stateless_values_are_tensorflows() -> None:
    np.testing.assert_array_equal(
        tf.random.stateless_truncated_normal([5], seed=[1, 2]).numpy(),
        _f32([0.544110119342804, 0.20738030970096588, 0.0735643208026886, 0.04643455147743225,
              0.16820591688156128]))
    np.testing.assert_array_equal(
        tf.random.stateless_uniform([4], seed=[1, 2], dtype=tf.float64).numpy(),
        [0.7524837538451801, 0.9697857725627486, 0.17592233912897481, 0.8555556648693279])
    assert tf.random.stateless_uniform([4], seed=[1, 2], minval=-5, maxval=5,
                                       dtype=tf.int64).numpy().tolist() == [-1, 3, 2, -2]
    a = tf.random.stateless_normal([3, 2], seed=[4, 5])
    np.testing.assert_array_equal(a.numpy(), tf.random.stateless_normal([3, 2], seed=[4, 5]))


def test_truncated_normal_is_within_two_sigma_and_normal_is_not() -> None:
    t = tf.random.stateless_truncated_normal([20000], seed=[1, 1]).numpy()
    n = tf.random.stateless_normal([20000], seed=[1, 1]).numpy()
    assert np.abs(t).max() < 2.0 < np.abs(n).max()
    assert abs(float(n.std()) - 1.0) < 0.03 and abs(float(n.mean())) < 0.03


def test_generator_values_state_and_split() -> None:
    g = tf.random.Generator.from_seed(3)
    np.testing.assert_array_equal(g.normal([2]).numpy(),
                                  _f32([-0.43640923500061035, -1.9633986949920654]))
    assert g.state.numpy().tolist() == [515, 0, 0]   # counter advanced by 256 per element
    parts = tf.random.Generator.from_seed(3).split(2)
    np.testing.assert_array_equal(parts[0].uniform([2]).numpy(),
                                  _f32([0.8960652351379395, 0.5734562873840332]))
    np.testing.assert_array_equal(parts[1].uniform([2]).numpy(),
                                  _f32([0.17059791088104248, 0.37522053718566895]))
    assert tf.random.Generator.from_seed(3).make_seeds(4).shape == (2, 4)
    g1, g2 = tf.random.Generator.from_non_deterministic_state(), tf.random.get_global_generator()
    assert not np.array_equal(g1.normal([4]).numpy(), g2.normal([4]).numpy())


def test_errors_have_tensorflows_text_and_a_hint_note() -> None:
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.random.uniform([2], 5, 5, dtype=tf.int32)
    assert str(e.value) == (
        "{{function_node __wrapped__RandomUniformInt_device_/job:localhost/replica:0/task:0/"
        "device:CPU:0}} Need minval < maxval, got 5 >= 5 [Op:RandomUniformInt] name: ")
    assert getattr(e.value, "__notes__", [])[0].startswith("[tapegrad hint] ")
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype tf.int32"):
        tf.random.uniform([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="must be both None or not None"):
        tf.random.stateless_uniform([2], seed=[1, 2], minval=0, dtype=tf.int32)


def test_dropout_is_differentiable_and_scaled() -> None:
    x = tf.Variable([1.0, -2.0, 3.0, 4.0, 5.0, 6.0])
    tf.random.set_seed(5)
    with tf.GradientTape() as tape:
        y = tf.nn.dropout(x, 0.5)
        loss = tf.reduce_sum(y * y)
    g = tape.gradient(loss, x).numpy()
    kept = y.numpy() != 0
    np.testing.assert_allclose(y.numpy()[kept], 2 * x.numpy()[kept])
    np.testing.assert_allclose(g, np.where(kept, 8 * x.numpy(), 0.0))


# ------------------------------------------------------------------ keras
def test_seed_generator_and_draw_seed() -> None:
    g = tf.keras.random.SeedGenerator(42)
    assert g.next().numpy().tolist() == [42, 0]
    assert g.next().numpy().tolist() == [42, 1]
    assert g.state.numpy().tolist() == [42, 2]
    assert tf.keras.random.draw_seed(7).numpy().tolist() == [7, 0]
    with pytest.raises(ValueError, match="must be either an integer or an instance"):
        tf.keras.random.draw_seed(1.5)


def test_keras_values_are_keras() -> None:
    np.testing.assert_array_equal(
        tf.keras.initializers.GlorotUniform(seed=1)((2, 3)).numpy(),
        _f32([[0.8292261362075806, -0.08767890930175781, 0.21972715854644775],
              [-0.2353067398071289, -0.5407264828681946, -0.12203431129455566]]))
    layer = tf.keras.layers.Dropout(0.5, seed=3)
    assert layer(tf.ones([6]), training=True).numpy().tolist() == [0, 2, 2, 2, 0, 0]
    assert layer(tf.ones([6])).numpy().tolist() == [1] * 6


def test_set_random_seed_makes_unseeded_keras_reproducible() -> None:
    def draw() -> list[np.ndarray]:
        tf.keras.utils.set_random_seed(21)
        init = tf.keras.initializers.HeNormal()
        return [init((3, 2)).numpy(), tf.keras.random.uniform((3,)).numpy(),
                tf.keras.layers.Dropout(0.5)(tf.ones([8]), training=True).numpy()]

    for a, b in zip(draw(), draw()):
        np.testing.assert_array_equal(a, b)
    # an int seed gives the same values on every call, as in Keras
    init = tf.keras.initializers.RandomNormal(seed=2)
    np.testing.assert_array_equal(init((4,)).numpy(), init((4,)).numpy())
