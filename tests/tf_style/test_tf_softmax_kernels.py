"""TensorFlow-style softmax kernels' emulations, checked without TensorFlow.

``tapegrad/ops/_tf_softmax.py`` replays TensorFlow's CPU kernels bit for bit
(the conformance suite compares bits with real TensorFlow); here: the values
are a softmax's (close to NumPy's formula, rows sum to one), the polynomial
exp/log are accurate, the claims the float16 path rests on hold for every
half, and the float64 exp's scalar leftovers fall where Eigen's blocks end.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf
from tapegrad.ops import _tf_softmax as k

_SHAPES = [(1, 1), (3, 2), (5, 7), (8, 9), (13, 33), (64, 1000), (2, 2539), (3, 4097), (2, 9001),
           (700, 9)]


def _np_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _np_log_softmax(x: np.ndarray) -> np.ndarray:
    s = x - x.max(axis=-1, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=-1, keepdims=True))


@pytest.mark.parametrize("shape", _SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_values_are_a_softmax(shape: tuple[int, int], dtype: Any) -> None:
    x = np.random.default_rng(shape[1]).normal(0.0, 3.0, shape).astype(dtype)
    y = tf.nn.softmax(x).numpy()
    ly = tf.nn.log_softmax(x).numpy()
    assert y.dtype == ly.dtype == dtype and y.shape == ly.shape == shape
    ref = _np_softmax(x.astype(np.float64))
    lref = _np_log_softmax(x.astype(np.float64))
    if dtype == np.float64:
        np.testing.assert_allclose(y, ref, rtol=1e-13, atol=1e-300)
        np.testing.assert_allclose(ly, lref, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(y.sum(axis=-1), 1.0, rtol=1e-13)
        np.testing.assert_allclose(np.exp(ly).sum(axis=-1), 1.0, rtol=1e-13)
    else:   # every step rounds to half: a few half ulps, the sums of long rows more
        long = shape[1] > 100
        np.testing.assert_allclose(y.astype(np.float64), ref, rtol=0.1 if long else 4e-3,
                                   atol=1e-4 if long else 1e-5)
        np.testing.assert_allclose(ly.astype(np.float64), lref, rtol=2e-2, atol=0.1 if long else 4e-3)
        np.testing.assert_allclose(y.astype(np.float64).sum(axis=-1), 1.0,
                                   rtol=0.1 if long else 1e-2)


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_any_axis_and_masks(dtype: Any) -> None:
    x = np.random.default_rng(4).normal(0.0, 2.0, (3, 4, 5)).astype(dtype)
    x[0, 1:, 1] = -np.inf
    for axis in (0, 1, 2, -1):
        y = tf.nn.softmax(x, axis=axis).numpy()
        e = np.exp(x.astype(np.float64) - x.max(axis=axis, keepdims=True))
        ref = e / e.sum(axis=axis, keepdims=True)
        np.testing.assert_allclose(y.astype(np.float64), ref, rtol=4e-3 if dtype == np.float16
                                   else 1e-13, atol=1e-5 if dtype == np.float16 else 0.0)
    assert np.all(tf.nn.softmax(x).numpy()[0, 1:, 1] == 0)


def test_nan_and_inf_rows() -> None:
    x = np.array([[0.0, np.nan, 1.0], [-np.inf] * 3, [0.0, np.inf, 1.0], [-np.inf, 0.0, 1.0]])
    with np.errstate(all="ignore"):
        y = tf.nn.softmax(x).numpy()
        ly = tf.nn.log_softmax(x).numpy()
    assert np.isnan(y[:3]).all() and np.isnan(ly[:3]).all()
    assert y[3, 0] == 0 and ly[3, 0] == -np.inf
    np.testing.assert_allclose(y[3, 1:], _np_softmax(np.array([0.0, 1.0])), rtol=1e-15)


def test_float64_outputs_flush_to_zero() -> None:
    x = np.array([[0.0, 0.0, 0.0, -708.0]])    # exp(-708) / 3 is subnormal: TensorFlow's FTZ
    assert tf.nn.softmax(x).numpy()[0, 3] == 0.0
    assert np.exp(-708.0) / 3 > 0


def test_pexp_double_and_plog_double_are_accurate() -> None:
    x = np.concatenate([np.linspace(-708.0, 0.0, 200001), -np.logspace(-300, 2, 2001)])
    e = k._eigen_pexp_double(x)
    ulp = np.spacing(np.exp(x))
    assert np.max(np.abs(e - np.exp(x)) / ulp) <= 2
    v = np.concatenate([np.linspace(1.0, 4.0, 100001), np.logspace(0, 300, 3001)])
    lg = k._eigen_plog_double(v)
    assert np.max(np.abs(lg - np.log(v)) / np.spacing(np.maximum(np.abs(np.log(v)), 1e-300))) <= 2
    with np.errstate(invalid="ignore"):
        assert k._eigen_pexp_double(np.array([-np.inf, -800.0])).tolist() == [0.0, 0.0]
        assert np.isnan(k._eigen_pexp_double(np.array([np.nan])))[0]
    assert k._eigen_pexp_double(np.array([0.0]))[0] == 1.0


def test_half_exp_and_log_leftovers_do_not_matter() -> None:
    """Rounded to half, Eigen's pexp_float is glibc's expf for every non-positive half, and
    plog_float is logf for every half >= 1 (a softmax's sums), so the float16 emulation
    need not know where Eigen's scalar leftovers fall."""
    halves = np.arange(65536, dtype=np.uint16).view(np.float16)
    neg = halves[(halves <= 0) & np.isfinite(halves)].astype(np.float32)
    with np.errstate(all="ignore"):
        assert np.array_equal(k._eigen_pexp(neg).astype(np.float16),
                              k._glibc_expf(neg).astype(np.float16))
    if k._LOGF is None:  # pragma: no cover - no C library
        pytest.skip("no C logf")
    pos = halves[(halves >= 1) & np.isfinite(halves)].astype(np.float32)
    logf = np.array([k._LOGF(float(v)) for v in pos], np.float32)
    assert np.array_equal(k._eigen_plog(pos).astype(np.float16), logf.astype(np.float16))


def _tail_positions(rows: int, n: int) -> set[int]:
    e = np.zeros((rows, n))
    sh = np.full((rows, n), -1.0)
    k._exp_block_tails(e, sh)
    return set(np.flatnonzero(e).tolist())


def test_float64_exp_leftovers_fall_at_eigens_block_ends() -> None:
    # (7, 1001): blocks of ceil(2539 / 1001) = 3 rows, runs of 3003, 3003, 1001 values
    assert _tail_positions(7, 1001) == {3000, 3001, 3002, 6003, 6004, 6005, 7006}
    # (2, 5079): pieces of 2539, 2539 and 1 per row, each its own run
    assert _tail_positions(2, 5079) == {2536, 2537, 2538, 5075, 5076, 5077, 5078,
                                        5079 + 2536, 5079 + 2537, 5079 + 2538, 5079 + 5075,
                                        5079 + 5076, 5079 + 5077, 5079 + 5078}
    assert _tail_positions(6, 9) == {52, 53}      # one block of 54 values
    assert _tail_positions(40, 9) == set()        # one block of 360
    # (301, 9): blocks of ceil(2539 / 9) = 283 rows (2547 values), then 18 rows (162)
    assert _tail_positions(301, 9) == {2544, 2545, 2546, 2707, 2708}
    assert _tail_positions(3, 8) == set()
    # the scalar exp is the C library's, flushed
    v = np.array([-1.5, -800.0, -745.0])
    assert k._glibc_exp(v).tolist() == [float(np.exp(-1.5)), 0.0, 0.0]


def test_tree_reduction_groups_rows_by_where_they_start() -> None:
    rng = np.random.default_rng(2)
    for dtype, packet, leaf in ((np.float64, 4, 1024), (np.float16, 8, 200)):
        a = rng.random((5, 4099 if dtype == np.float64 else 1603)).astype(dtype)
        def leaf_fn(b: np.ndarray, p: int = packet) -> np.ndarray:
            return k._leaf_sum(b, p)

        whole = k._row_sums(a, packet, leaf, leaf_fn)
        n = a.shape[1]
        rows = [k._tree_sum(a[i:i + 1], i * n, packet, leaf, leaf_fn) for i in range(5)]
        assert np.array_equal(whole, np.concatenate(rows))
        np.testing.assert_allclose(whole.astype(np.float64), a.astype(np.float64).sum(axis=1),
                                   rtol=1e-12 if dtype == np.float64 else 2e-2)


def test_float64_gradients_match_finite_differences() -> None:
    rng = np.random.default_rng(9)
    x = rng.normal(0.0, 2.0, (3, 9))
    w = rng.normal(0.0, 1.0, (3, 9))
    for fn in (tf.nn.softmax, tf.nn.log_softmax):
        v = tf.Variable(x)
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(fn(v) * w)
        g = tape.gradient(y, v).numpy()
        eps, ref = 1e-6, np.zeros_like(x)
        for i in np.ndindex(x.shape):
            d = np.zeros_like(x)
            d[i] = eps
            ref[i] = (float(tf.reduce_sum(fn(tf.constant(x + d)) * w))
                      - float(tf.reduce_sum(fn(tf.constant(x - d)) * w))) / (2 * eps)
        np.testing.assert_allclose(g, ref, rtol=1e-6, atol=1e-8)
