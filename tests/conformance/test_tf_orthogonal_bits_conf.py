"""Conformance: Keras's ``Orthogonal`` initializer and TensorFlow's float32 QR, bit for bit.

Real TensorFlow 2.21 runs Eigen's Householder QR on the CPU (``tf.linalg.qr``, behind Keras's
``ops.qr``); tapegrad emulates it (``tapegrad/tf/_eigen_qr.py``) up to 47 columns, where Eigen
still applies one reflector at a time. Skipped without TensorFlow.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tapegrad.tf._eigen_qr import MAX_EXACT_SIZE, eigen_qr_f32
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _bits(a: Any) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, np.float32)).view(np.int32)


def _assert_same_bits(a: Any, b: Any) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    bad = np.argwhere(_bits(a) != _bits(b))
    assert bad.size == 0, f"{len(bad)} of {a.size} values differ, first at {bad[:3].tolist()}"


QR_SHAPES = [(1, 1), (2, 1), (3, 2), (2, 2), (4, 4), (8, 8), (9, 9), (12, 7), (16, 16),
             (17, 17), (24, 24), (31, 31), (32, 32), (33, 33), (47, 47), (64, 16), (128, 32),
             (129, 20), (160, 40), (188, 47), (300, 12), (1000, 3)]


@pytest.mark.parametrize("shape", QR_SHAPES, ids=str)
@pytest.mark.parametrize("scale", [1.0, 1e-3, 300.0])
def test_eigen_qr_is_tf_linalg_qr(rtf: Any, shape: tuple[int, int], scale: float) -> None:
    rng = np.random.default_rng(shape[0] * 1000 + shape[1])
    a = (rng.standard_normal(shape) * scale).astype(np.float32)
    q, r = rtf.linalg.qr(a)
    got = eigen_qr_f32(a)
    assert got is not None
    _assert_same_bits(got[0], q.numpy())
    _assert_same_bits(got[1], r.numpy())


def test_eigen_qr_declines_blocked_and_wide_shapes() -> None:
    rng = np.random.default_rng(0)
    assert eigen_qr_f32(rng.standard_normal((48, 48)).astype(np.float32)) is None
    assert eigen_qr_f32(rng.standard_normal((3, 5)).astype(np.float32)) is None
    assert MAX_EXACT_SIZE == 47


ORTHO_SHAPES = [(2, 2), (3, 3), (4, 4), (8, 8), (16, 16), (32, 32), (47, 47), (4, 16),
                (8, 32), (16, 64), (32, 128), (40, 10), (10, 40), (3, 4, 5), (2, 3, 2, 6)]


@pytest.mark.parametrize("shape", ORTHO_SHAPES, ids=str)
@pytest.mark.parametrize("seed", [0, 3, 1234])
def test_orthogonal_initializer_bits(rtf: Any, shape: tuple[int, ...], seed: int) -> None:
    want = rtf.keras.initializers.Orthogonal(seed=seed)(shape).numpy()
    got = tg_tf.keras.initializers.Orthogonal(seed=seed)(shape).numpy()
    _assert_same_bits(got, want)


def test_orthogonal_gain_and_lowercase_name(rtf: Any) -> None:
    for k in (rtf.keras, tg_tf.keras):
        assert k.initializers.get("orthogonal") is not None
    want = rtf.keras.initializers.Orthogonal(gain=1.7, seed=5)((12, 12)).numpy()
    got = tg_tf.keras.initializers.Orthogonal(gain=1.7, seed=5)((12, 12)).numpy()
    _assert_same_bits(got, want)


def test_orthogonal_unseeded_after_set_random_seed(rtf: Any) -> None:
    outs = []
    for k in (rtf.keras, tg_tf.keras):
        k.utils.set_random_seed(11)
        init = k.initializers.Orthogonal()
        outs.append([init((6, 6)).numpy(), init((5, 20)).numpy()])
    for got, want in zip(outs[1], outs[0]):
        _assert_same_bits(got, want)


@pytest.mark.parametrize("layer", [("LSTM", 4), ("LSTM", 16), ("LSTM", 32), ("GRU", 8),
                                   ("GRU", 47), ("SimpleRNN", 32)], ids=str)
def test_rnn_recurrent_kernel_after_set_random_seed(rtf: Any, layer: tuple[str, int]) -> None:
    name, units = layer
    x = np.linspace(-1, 1, 2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    weights, outs = [], []
    for k in (rtf.keras, tg_tf.keras):
        k.utils.set_random_seed(7)
        lay = getattr(k.layers, name)(units)
        outs.append(np.asarray(lay(x)))
        weights.append(lay.get_weights())
    assert len(weights[1]) == len(weights[0])
    for got, want in zip(weights[1], weights[0]):
        _assert_same_bits(got, want)
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(48, 48), (64, 64), (128, 512)], ids=str)
def test_orthogonal_past_the_emulated_sizes_is_orthonormal(rtf: Any,
                                                           shape: tuple[int, int]) -> None:
    want = rtf.keras.initializers.Orthogonal(seed=2)(shape).numpy()
    got = tg_tf.keras.initializers.Orthogonal(seed=2)(shape).numpy()
    assert got.dtype == want.dtype == np.float32
    m = got if shape[0] >= shape[1] else got.T
    np.testing.assert_allclose(m.T @ m, np.eye(m.shape[1]), atol=2e-5)
    np.testing.assert_allclose(got, want, atol=2e-5)  # same normals: close, last bits differ


def test_orthogonal_float64_keeps_numpy_qr(rtf: Any) -> None:
    got = tg_tf.keras.initializers.Orthogonal(seed=1)((6, 6), dtype="float64").numpy()
    want = rtf.keras.initializers.Orthogonal(seed=1)((6, 6), dtype="float64").numpy()
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, atol=1e-12)
