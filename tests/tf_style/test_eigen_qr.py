"""The Eigen Householder QR emulation (``tapegrad/ops/_eigen_qr.py``) as a QR: orthonormal ``Q``,
upper-triangular ``R``, ``Q R = A``, at the unblocked and blocked sizes, tall, wide and complete;
its building blocks (sequential sums, Eigen's blocking sizes, the GEBP orders) on their own.
Bit-for-bit agreement with TensorFlow is the conformance suite's
(``tests/conformance/test_tf_orthogonal_bits_conf.py``)."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad.tf as tf
from tapegrad.ops import _eigen_qr as E


def _check_qr(a: np.ndarray, q: np.ndarray, r: np.ndarray, full: bool) -> None:
    m, n = a.shape
    k = m if full else min(m, n)
    assert q.shape == (m, k) and r.shape == (k, n)
    assert q.dtype == r.dtype == np.float32
    np.testing.assert_allclose(q.T.astype(np.float64) @ q, np.eye(k), atol=3e-5)
    assert not np.tril(r, -1).any()
    scale = max(1.0, float(np.abs(a).max()))
    np.testing.assert_allclose(q.astype(np.float64) @ r, a, atol=2e-5 * scale * np.sqrt(m))


SHAPES = [(1, 1), (5, 3), (3, 5), (47, 47), (48, 48), (49, 49), (64, 64), (100, 50), (97, 97),
          (128, 128), (256, 64), (300, 150), (49, 200), (64, 256), (200, 49)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("full", [False, True])
def test_emulated_qr_is_a_qr(shape: tuple[int, int], full: bool) -> None:
    a = np.random.default_rng(shape[0] * 31 + shape[1]).standard_normal(shape).astype(np.float32)
    q, r = E.eigen_qr_f32(a, full_matrices=full)
    _check_qr(a, q, r, full)


@pytest.mark.parametrize("shape", [(5, 3), (49, 49), (128, 128), (256, 64), (64, 256)], ids=str)
def test_emulated_qr_float64_is_a_qr(shape: tuple[int, int]) -> None:
    a = np.random.default_rng(shape[0]).standard_normal(shape)
    for full in (False, True):
        q, r = E.eigen_qr(a, full_matrices=full)
        assert q.dtype == r.dtype == np.float64
        np.testing.assert_allclose(q.T @ q, np.eye(q.shape[1]), atol=1e-13)
        assert not np.tril(r, -1).any()
        np.testing.assert_allclose(q @ r, a, atol=1e-12)


def test_emulated_qr_rejects_other_dtypes() -> None:
    with pytest.raises(TypeError, match="float32 or float64"):
        E.eigen_qr(np.eye(3, dtype=np.float16))


def test_flush_denormals_is_scoped() -> None:
    x = np.array([1e-39, -3e-39], np.float32)
    with E._flush_denormals():
        inside = x * np.float32(1)
        tiny = np.float64(1e-300) * np.float64(1e-10)
    after = x * np.float32(1)
    np.testing.assert_array_equal(after, x)              # the thread's state is restored
    if E._libm() is not None:
        np.testing.assert_array_equal(inside, 0.0)       # flushed (sign kept)
        assert np.signbit(inside[1]) and tiny == 0
    else:
        np.testing.assert_array_equal(inside, x)


def test_flush_denormals_restores_after_an_error() -> None:
    x = np.array([1e-39], np.float32)
    with pytest.raises(ValueError), E._flush_denormals():
        raise ValueError("boom")
    assert (x * np.float32(1))[0] != 0


def test_emulated_qr_close_to_lapack_up_to_signs() -> None:
    a = np.random.default_rng(0).standard_normal((200, 100)).astype(np.float32)
    q, r = E.eigen_qr_f32(a)
    q0, r0 = np.linalg.qr(a.astype(np.float64))
    s = np.sign(np.diag(r)) * np.sign(np.diag(r0))
    np.testing.assert_allclose(q * s, q0, atol=5e-5)
    np.testing.assert_allclose(r * s[:, None], r0, atol=5e-4)


@pytest.mark.parametrize("a", [np.zeros((60, 60), np.float32), np.eye(70, 50, dtype=np.float32),
                               np.ones((50, 49), np.float32)], ids=["zeros", "eye", "ones"])
def test_emulated_qr_degenerate_inputs(a: np.ndarray) -> None:
    q, r = E.eigen_qr_f32(a)
    assert np.isfinite(q).all() and np.isfinite(r).all()
    _check_qr(a, q, r, False)


def test_seq_sum_is_left_to_right_in_float32() -> None:
    p = np.array([1e8, 1.0, 1.0, 1.0, 1.0, -1e8], np.float32)
    # left to right every 1.0 is lost against 1e8; pairwise or float64 sums would keep them
    assert E._seq_sum(p, 0) == np.float32(0)
    assert E._seq_sum(p[::-1].copy(), 0) == np.float32(0)
    assert E._seq_sum(np.array([1.0, 1.0, 1.0, 1.0, 1e8, -1e8], np.float32), 0) == 0
    assert E._seq_sum(np.array([4.0, 1e8, -1e8], np.float32), 0) == 0
    z = E._seq_sum(np.array([-0.0, -0.0], np.float32), 0)
    assert z == 0 and not np.signbit(z)       # accumulators start at +0


def test_chunk_sums_restart_every_step() -> None:
    p = np.array([1e8, 1.0, -1e8, 1.0, 1.0, 1.0, 1.0], np.float32)[:, None]
    np.testing.assert_array_equal(E._chunk_sums(p, 3)[:, 0], [0.0, 3.0, 1.0])


def test_blocking_kc_follows_the_l1_size(monkeypatch: pytest.MonkeyPatch) -> None:
    for l1, kc in ((48 * 1024, 152), (32 * 1024, 96)):
        monkeypatch.setattr(E, "_caches", lambda l1=l1: (l1, 1 << 20, 32 << 20))
        assert E._blocking(1000, 48, 64, 4)[0] <= kc
        assert E._blocking(kc, 48, 64, 4)[0] == kc
        assert E._blocking(2 * kc, 48, 64, 4)[0] == kc          # two even sweeps
        assert E._blocking(40, 40, 40, 4) == (40, 40)           # below 48: no blocking
    monkeypatch.setattr(E, "_caches", lambda: (48 * 1024, 1 << 20, 32 << 20))
    assert E._blocking(500, 48, 64, 4)[0] == 128                 # 4 sweeps of at most 152


def test_gebp_orders_differ_only_in_rounding() -> None:
    rng = np.random.default_rng(1)
    for rows, depth, cols in ((16, 40, 8), (8, 37, 4), (4, 19, 5), (1, 23, 4), (27, 50, 11)):
        a = rng.standard_normal((rows, depth)).astype(np.float32)
        b = rng.standard_normal((depth, cols)).astype(np.float32)
        res = np.ones((rows, cols), np.float32)
        E._gebp(res, a, b, np.float32(-1))
        np.testing.assert_allclose(res, 1 - a.astype(np.float64) @ b, atol=1e-4)


def test_gebp_single_row_keeps_eight_partial_sums() -> None:
    # one row against 4 columns: k = 0 and k = 8 share a partial sum, k = 1 another one
    a = np.zeros((1, 16), np.float32)
    a[0, [0, 8, 1]] = [1e8, -1e8, 1.0]
    b = np.ones((16, 4), np.float32)
    res = np.zeros((1, 4), np.float32)
    E._gebp(res, a, b, np.float32(1))
    np.testing.assert_array_equal(res, 1.0)    # 1e8 - 1e8 first, then + 1: exact
    a[0, [0, 1, 2]] = [1e8, 1.0, -1e8]
    a[0, 8] = 0
    res[:] = 0
    E._gebp(res, a, b, np.float32(1))
    np.testing.assert_array_equal(res, 1.0)    # k = 1 sits in the odd lanes: kept


def test_tf_linalg_qr_gradient_by_finite_differences() -> None:
    a = np.random.default_rng(2).standard_normal((60, 50)).astype(np.float32)
    w = np.random.default_rng(3).standard_normal((60, 50)).astype(np.float32)
    x = tf.Variable(a)
    with tf.GradientTape() as tape:
        q, r = tf.linalg.qr(x)
        loss = tf.reduce_sum(q * w) + tf.reduce_sum(r[:5] * r[:5])
    g = tape.gradient(loss, x).numpy()

    signs = np.sign(np.diag(E.eigen_qr_f32(a)[1]))     # Eigen's R diagonal signs near a

    def f(v: np.ndarray) -> float:    # the same QR in float64 (LAPACK's, signs aligned)
        q0, r0 = np.linalg.qr(v)
        t = np.sign(np.diag(r0)) * signs
        return float((q0 * t * w).sum() + ((r0 * t[:, None])[:5] ** 2).sum())

    d = np.random.default_rng(4).standard_normal(a.shape)
    eps = 1e-6
    a64 = a.astype(np.float64)
    fd = (f(a64 + eps * d) - f(a64 - eps * d)) / (2 * eps)
    np.testing.assert_allclose((g * d).sum(), fd, rtol=2e-3)


@pytest.mark.parametrize("shape", [(64, 64), (64, 256), (128, 512), (256, 64)], ids=str)
def test_orthogonal_initializer_blocked_sizes_are_orthonormal(shape: tuple[int, int]) -> None:
    w = tf.keras.initializers.Orthogonal(seed=1, gain=2.0)(shape).numpy()
    m = w if shape[0] >= shape[1] else w.T
    np.testing.assert_allclose(m.T.astype(np.float64) @ m / 4, np.eye(m.shape[1]), atol=3e-5)


def test_large_qr_uses_lapack_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Emulating Eigen costs seconds from LSTM(512) on (2.6 s; LSTM(1024): 25 s): above
    MAX_WORK, tf.linalg.qr and Orthogonal take LAPACK's QR (a valid QR, other bits);
    TAPEGRAD_EIGEN_QR=always / never overrides that."""
    import tapegrad.tf as tf
    from tapegrad.ops import _eigen_qr as E

    assert E.emulated(500, 500) and E.emulated(1024, 256) and not E.emulated(2048, 512)
    monkeypatch.setenv("TAPEGRAD_EIGEN_QR", "always")
    assert E.emulated(4096, 1024)
    monkeypatch.setenv("TAPEGRAD_EIGEN_QR", "never")
    assert not E.emulated(4, 4)
    monkeypatch.delenv("TAPEGRAD_EIGEN_QR")
    a = np.random.default_rng(0).standard_normal((600, 520)).astype(np.float32)
    q, r = tf.linalg.qr(tf.constant(a))
    q_np, r_np = np.linalg.qr(a)
    np.testing.assert_array_equal(q.numpy(), q_np)  # LAPACK's bits above the limit
    np.testing.assert_allclose(q.numpy() @ r.numpy(), a, atol=2e-4)
