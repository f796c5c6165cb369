"""Conformance: Keras's ``Orthogonal`` initializer and TensorFlow's float32 QR, bit for bit.

Real TensorFlow 2.21 runs Eigen's Householder QR on the CPU (``tf.linalg.qr``, behind Keras's
``ops.qr``); tapegrad emulates it (``tapegrad/ops/_eigen_qr.py``): one reflector at a time below
48 columns, Eigen's blocked reflectors and triangular matrix products (GEBP's summation orders)
from 48 on. Skipped without TensorFlow.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tapegrad.tf._eigen_qr import BLOCK_SIZE, eigen_qr, eigen_qr_f32
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _bits(a: Any) -> np.ndarray:
    a = np.ascontiguousarray(np.asarray(a))
    return a.view(np.int64 if a.dtype == np.float64 else np.int32)


def _assert_same_bits(a: Any, b: Any) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    bad = np.argwhere(_bits(a) != _bits(b))
    assert bad.size == 0, f"{len(bad)} of {a.size} values differ, first at {bad[:3].tolist()}"


QR_SHAPES = [(1, 1), (2, 1), (3, 2), (2, 2), (4, 4), (8, 8), (9, 9), (12, 7), (16, 16),
             (17, 17), (24, 24), (31, 31), (32, 32), (33, 33), (47, 47), (64, 16), (128, 32),
             (129, 20), (160, 40), (188, 47), (300, 12), (1000, 3),
             # blocked: Eigen's block reflectors from 48 columns (factorisation and Q)
             (48, 48), (49, 49), (50, 49), (64, 64), (95, 95), (96, 96), (97, 97), (100, 50),
             (128, 128), (144, 144), (200, 49), (256, 64), (300, 150), (384, 128), (512, 128),
             (1000, 60), (777, 129),
             # wide: the trailing columns by a block reflector at any size
             (1, 10), (2, 3), (3, 5), (5, 300), (33, 200), (49, 1000), (64, 256), (130, 200)]


@pytest.mark.parametrize("shape", QR_SHAPES, ids=str)
@pytest.mark.parametrize("scale", [1.0, 1e-3, 300.0])
def test_eigen_qr_is_tf_linalg_qr(rtf: Any, shape: tuple[int, int], scale: float) -> None:
    rng = np.random.default_rng(shape[0] * 1000 + shape[1])
    a = (rng.standard_normal(shape) * scale).astype(np.float32)
    q, r = rtf.linalg.qr(a)
    got = eigen_qr_f32(a)
    _assert_same_bits(got[0], q.numpy())
    _assert_same_bits(got[1], r.numpy())


def test_eigen_qr_is_tf_linalg_qr_past_the_l1_depth_block(rtf: Any) -> None:
    # 500 rows: the triangular products split their depth (kc) as Eigen's cache heuristic says
    a = np.random.default_rng(500).standard_normal((500, 500)).astype(np.float32)
    q, r = rtf.linalg.qr(a)
    got = eigen_qr_f32(a)
    _assert_same_bits(got[0], q.numpy())
    _assert_same_bits(got[1], r.numpy())


FULL_SHAPES = [(1, 1), (3, 2), (2, 3), (47, 47), (48, 48), (49, 49), (60, 30), (80, 50),
               (50, 100), (64, 64), (100, 50), (128, 128), (200, 49), (256, 64), (130, 200)]


@pytest.mark.parametrize("shape", FULL_SHAPES, ids=str)
def test_eigen_qr_full_matrices_is_tf(rtf: Any, shape: tuple[int, int]) -> None:
    # householderQ() evaluated into the row-major output: reflections skip the left columns
    a = np.random.default_rng(shape[0] + 7 * shape[1]).standard_normal(shape).astype(np.float32)
    q, r = rtf.linalg.qr(a, full_matrices=True)
    got = eigen_qr_f32(a, full_matrices=True)
    _assert_same_bits(got[0], q.numpy())
    _assert_same_bits(got[1], r.numpy())


def _degenerate(name: str) -> np.ndarray:
    rng = np.random.default_rng(3)
    if name == "eye":
        return np.eye(64, dtype=np.float32)
    if name == "eye_tall":
        return np.eye(100, 60, dtype=np.float32)
    if name == "neg_eye":
        return -np.eye(70, dtype=np.float32)
    if name == "zeros":
        return np.zeros((60, 60), np.float32)
    if name == "zero_columns":
        a = rng.standard_normal((90, 80))
        return np.where(np.arange(80)[None, :] % 3 == 0, 0, a).astype(np.float32)
    if name == "rank5":
        return (rng.standard_normal((100, 5)) @ rng.standard_normal((5, 70))).astype(np.float32)
    if name == "integers":
        return rng.integers(-3, 4, (64, 64)).astype(np.float32)
    if name == "upper":
        return np.triu(rng.standard_normal((64, 64))).astype(np.float32)
    if name == "ones":
        return np.ones((50, 49), np.float32)
    scale = 1e-30 if name == "tiny" else 1e18
    return (rng.standard_normal((60, 55)) * scale).astype(np.float32)


@pytest.mark.parametrize("name", ["eye", "eye_tall", "neg_eye", "zeros", "zero_columns", "rank5",
                                  "integers", "upper", "ones", "tiny", "huge"])
@pytest.mark.parametrize("full", [False, True])
def test_eigen_qr_degenerate_inputs_are_tf(rtf: Any, name: str, full: bool) -> None:
    # tau = 0 reflectors, exact zeros (signed) and extreme scales through the blocked paths
    a = _degenerate(name)
    q, r = rtf.linalg.qr(a, full_matrices=full)
    got = eigen_qr_f32(a, full_matrices=full)
    _assert_same_bits(got[0], q.numpy())
    _assert_same_bits(got[1], r.numpy())


@pytest.mark.parametrize("shape,full", [((64, 64), False), ((3, 100, 60), False),
                                        ((2, 50, 70), True), ((80, 50), True), ((2, 2, 9, 5), False)],
                         ids=str)
def test_tf_linalg_qr_front_end_bits(rtf: Any, shape: tuple[int, ...], full: bool) -> None:
    a = np.random.default_rng(len(shape) + shape[-1]).standard_normal(shape).astype(np.float32)
    want = rtf.linalg.qr(a, full_matrices=full)
    got = tg_tf.linalg.qr(a, full_matrices=full)
    _assert_same_bits(got.q.numpy(), want.q.numpy())
    _assert_same_bits(got.r.numpy(), want.r.numpy())


def test_tf_linalg_qr_gradient_matches_tf(rtf: Any) -> None:
    a = np.random.default_rng(9).standard_normal((60, 50)).astype(np.float32)
    grads = []
    for tf in (rtf, tg_tf):
        v = tf.Variable(a)
        with tf.GradientTape() as tape:
            q, r = tf.linalg.qr(v)
            loss = tf.reduce_sum(q * 1.5) + tf.reduce_sum(r * r)
        grads.append(tape.gradient(loss, v).numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=2e-5)


F64_SHAPES = [(1, 1), (3, 2), (9, 9), (17, 17), (47, 47), (129, 20), (300, 12), (48, 48),
              (49, 49), (64, 64), (97, 97), (100, 50), (128, 128), (200, 49), (256, 64),
              (384, 128), (512, 128), (777, 129), (3, 5), (64, 256), (49, 1000)]


@pytest.mark.parametrize("shape", F64_SHAPES, ids=str)
@pytest.mark.parametrize("full", [False, True])
def test_eigen_qr_float64_is_tf(rtf: Any, shape: tuple[int, int], full: bool) -> None:
    # double on AVX: 4-lane packets, GEBP mr = 8, the 4-way single-row kernel, kc from 8 bytes
    a = np.random.default_rng(shape[0] * 7 + shape[1]).standard_normal(shape)
    q, r = rtf.linalg.qr(a, full_matrices=full)
    got = eigen_qr(a, full_matrices=full)
    _assert_same_bits(got[0], q.numpy())
    _assert_same_bits(got[1], r.numpy())


@pytest.mark.parametrize("dtype,scale", [("float32", 1e-15), ("float32", 1e-17),
                                         ("float32", 1e-18), ("float32", 1e-19),
                                         ("float64", 1e-140), ("float64", 1e-150),
                                         ("float64", 1e-152)], ids=str)
@pytest.mark.parametrize("shape", [(60, 55), (30, 20)], ids=str)
def test_eigen_qr_flushes_subnormals_as_tf(rtf: Any, dtype: str, scale: float,
                                           shape: tuple[int, int]) -> None:
    # squares and products below the smallest normal: TensorFlow's kernels run with FTZ/DAZ
    a = (np.random.default_rng(3).standard_normal(shape) * scale).astype(dtype)
    for full in (False, True):
        q, r = rtf.linalg.qr(a, full_matrices=full)
        got = eigen_qr(a, full_matrices=full)
        _assert_same_bits(got[0], q.numpy())
        _assert_same_bits(got[1], r.numpy())


@pytest.mark.parametrize("dtype,scale", [("float32", 1e20), ("float64", 1e160)], ids=str)
def test_eigen_qr_overflow_gives_tf_nans(rtf: Any, dtype: str, scale: float) -> None:
    # overflowing squares: the same NaNs and infinities where TensorFlow has them (a NaN's sign
    # bit can differ)
    a = (np.random.default_rng(3).standard_normal((60, 55)) * scale).astype(dtype)
    q, r = rtf.linalg.qr(a)
    got = eigen_qr(a)
    np.testing.assert_array_equal(got[0], q.numpy())
    np.testing.assert_array_equal(got[1], r.numpy())


def test_block_size_is_eigens() -> None:
    assert BLOCK_SIZE == 48


ORTHO_SHAPES = [(2, 2), (3, 3), (4, 4), (8, 8), (16, 16), (32, 32), (47, 47), (4, 16),
                (8, 32), (16, 64), (32, 128), (40, 10), (10, 40), (3, 4, 5), (2, 3, 2, 6),
                # the small side from Eigen's block size (48) on, and RNN-kernel shapes
                (48, 48), (49, 49), (64, 64), (96, 96), (128, 128), (256, 256), (48, 200),
                (64, 256), (128, 384), (128, 512), (256, 64), (3, 16, 64)]


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
                                   ("GRU", 47), ("SimpleRNN", 32), ("LSTM", 48), ("LSTM", 64),
                                   ("LSTM", 128), ("GRU", 64), ("GRU", 128), ("SimpleRNN", 100)],
                         ids=str)
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


@pytest.mark.parametrize("shape", [(6, 6), (47, 47), (64, 64), (128, 512), (10, 40)], ids=str)
def test_orthogonal_float64_bits(rtf: Any, shape: tuple[int, int]) -> None:
    got = tg_tf.keras.initializers.Orthogonal(seed=1)(shape, dtype="float64").numpy()
    want = rtf.keras.initializers.Orthogonal(seed=1)(shape, dtype="float64").numpy()
    assert got.dtype == np.float64
    _assert_same_bits(got, want)
