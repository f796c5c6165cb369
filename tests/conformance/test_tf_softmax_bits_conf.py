"""Conformance: TensorFlow's float32 softmax and log-softmax, bit for bit.

Real TensorFlow 2.21 on x86-64 runs oneDNN's JIT softmax and Eigen's
log-softmax kernel; tapegrad emulates both (``tapegrad/ops/_tf_softmax.py``).
Rows of 1..300 (and longer) values, many scales, ``-inf`` masks, every axis:
the float32 bits must be TensorFlow's.  Skipped without TensorFlow.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


# TensorFlow's oneDNN picks its softmax kernel by the CPU at run time: the emulation is of
# the avx512_core one (16 lanes); elsewhere TensorFlow's own bits differ
avx512 = pytest.mark.skipif("avx512f" not in _cpu_flags(),
                            reason="oneDNN's avx512 softmax kernel needs an AVX-512 CPU")


def _same_bits(a: Any, b: Any) -> bool:
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return a.shape == b.shape and bool(np.all((a.view(np.int32) == b.view(np.int32))
                                              | (np.isnan(a) & np.isnan(b))))


def _same_bits_any_zero_sign(a: Any, b: Any) -> bool:
    """Bit equality, except that 0.0 and -0.0 count as equal.

    Real TensorFlow's masked outputs (Keras's ``Softmax`` with a mask, the masked attention
    scores of ``MultiHeadAttention``) come out as -0.0 instead of 0.0 after some earlier
    TensorFlow calls in the same process (seen after a run of ``tf.linspace`` calls in this
    suite), so the sign of a masked zero depends on the process's history there.
    """
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return _same_bits(np.where(a == 0, np.float32(0), a), np.where(b == 0, np.float32(0), b))


_LENGTHS = [1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100, 127, 128, 129,
            200, 255, 256, 257, 300]


def _inputs(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(n)
    out = []
    for rows, scale in ((1, 1.0), (3, 0.01), (8, 10.0), (9, 100.0), (17, 3.0), (5, 1e4)):
        x = rng.normal(0.0, scale, (rows, n)).astype(np.float32)
        out.append(x)
    masked = rng.normal(0.0, 5.0, (6, n)).astype(np.float32)
    if n > 1:
        masked[:, 1::3] = -np.inf
    out.append(masked)
    out.append((rng.normal(0.0, 30.0, (4, n)) + 50.0).astype(np.float32))  # tiny exps flush
    return out


@avx512
@pytest.mark.parametrize("n", _LENGTHS)
def test_softmax_bits_are_tensorflows(rtf: Any, n: int) -> None:
    for x in _inputs(n):
        assert _same_bits(tg_tf.nn.softmax(x).numpy(), rtf.nn.softmax(x).numpy())


@pytest.mark.parametrize("n", _LENGTHS)
def test_log_softmax_bits_are_tensorflows(rtf: Any, n: int) -> None:
    for x in _inputs(n):
        assert _same_bits(tg_tf.nn.log_softmax(x).numpy(), rtf.nn.log_softmax(x).numpy())



def _pieces(first: int, n: int) -> list[tuple[int, int]]:
    """Eigen's tree reduction of ``n`` values from flat index ``first``: its leaves (flat
    start, length); halves split on 8-value packet boundaries past 8192 values."""
    if n <= 8192:
        return [(first, n)]
    split = 8 * -(-(first + -(-n // 2)) // 8)
    left = min(split - first, n)
    return _pieces(first, left) + (_pieces(split, n - left) if left < n else [])


def _piece_end_inputs(rows: int, n: int, seed: int) -> np.ndarray:
    """Rows whose mass sits at the ends of the tree reduction's leaves.

    Eigen's leaf loop runs ``pexp`` on the leaf's whole 8-value packets and glibc's
    ``expf`` on its last ``len % 8`` values; those get values in [-0.69, 0) whose
    ``pexp`` is one ulp above ``expf``, the rest of the row is about -20 (exps near
    2e-9) and one 0 is the max, so the sum (about 1 + 0.8 per tail value) moves by
    about an ulp if a piece's tail takes the wrong exp.
    """
    from tapegrad.ops import _tf_softmax as k
    rng = np.random.default_rng(seed)
    pool = -rng.uniform(0.0, 0.69, 8192).astype(np.float32)
    pool = pool[k._eigen_pexp(pool) > k._glibc_expf(pool)]
    x = rng.normal(-20.0, 1.0, (rows, n)).astype(np.float32)
    for r in range(rows):
        for start, length in _pieces(r * n, n):
            c1 = start - r * n + length
            x[r, c1 - length % 8:c1] = rng.choice(pool, length % 8)
        x[r, rng.integers(n // 8) * 8] = 0.0    # the max; its output is -log(sum) itself
    return x


@pytest.mark.parametrize("n", [8191, 8192, 8193, 8200, 9001, 16385, 20000, 20001])
def test_log_softmax_long_rows_piece_ends_are_tensorflows(rtf: Any, n: int) -> None:
    """Rows longer than 8192 split into pieces whose own tails take glibc's ``expf``."""
    for seed in range(3):
        x = _piece_end_inputs(8, n, 100 * n + seed)
        ours, theirs = tg_tf.nn.log_softmax(x).numpy(), rtf.nn.log_softmax(x).numpy()
        for r in range(x.shape[0]):
            assert _same_bits(ours[r], theirs[r]), (seed, r)


@avx512
@pytest.mark.parametrize("shape,axis", [((2, 3, 5, 7), -1), ((2, 3, 5, 7), 1), ((2, 3, 5, 7), 0),
                                        ((4, 9, 3), 1), ((37,), 0), ((3, 1000), -1),
                                        ((2, 9000), -1)])
def test_softmax_any_axis_and_long_rows(rtf: Any, shape: tuple[int, ...], axis: int) -> None:
    x = np.random.default_rng(len(shape) + axis).normal(0.0, 4.0, shape).astype(np.float32)
    assert _same_bits(tg_tf.nn.softmax(x, axis=axis).numpy(), rtf.nn.softmax(x, axis=axis).numpy())
    assert _same_bits(tg_tf.nn.log_softmax(x, axis=axis).numpy(),
                      rtf.nn.log_softmax(x, axis=axis).numpy())


@avx512
def test_keras_softmax_activation_and_masked_layer(rtf: Any) -> None:
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(5)
    x = rng.normal(0.0, 4.0, (6, 37)).astype(np.float32)
    mask = rng.random((6, 37)) > 0.3
    mask[0] = False   # a fully masked row: zeros, as Keras 3
    assert _same_bits(tg_tf.keras.activations.softmax(tg_tf.constant(x)).numpy(),
                      keras.activations.softmax(x).numpy())
    ours = tg_tf.keras.layers.Softmax()(tg_tf.constant(x), mask=tg_tf.constant(mask)).numpy()
    assert _same_bits_any_zero_sign(ours, keras.layers.Softmax()(x, mask=mask).numpy())


def test_softmax_gradient_is_unchanged_and_matches_finite_differences(rtf: Any) -> None:
    rng = np.random.default_rng(9)
    x = rng.normal(0.0, 2.0, (3, 11)).astype(np.float32)
    w = rng.normal(0.0, 1.0, (3, 11)).astype(np.float32)
    for fn in (tg_tf.nn.softmax, tg_tf.nn.log_softmax):
        v = tg_tf.Variable(x)
        with tg_tf.GradientTape() as tape:
            y = tg_tf.reduce_sum(fn(v) * w)
        g = tape.gradient(y, v).numpy().astype(np.float64)
        real = getattr(rtf.nn, fn.__name__)
        rv = rtf.Variable(x)
        with rtf.GradientTape() as tape:
            ry = rtf.reduce_sum(real(rv) * w)
        np.testing.assert_allclose(g, tape.gradient(ry, rv).numpy(), rtol=1e-5, atol=1e-6)
        # central differences in float64 on the same function
        x64, eps = x.astype(np.float64), 1e-6
        ref = np.zeros_like(x64)
        for i in np.ndindex(x.shape):
            d = np.zeros_like(x64)
            d[i] = eps
            hi = tg_tf.reduce_sum(fn(tg_tf.constant(x64 + d)) * w.astype(np.float64)).numpy()
            lo = tg_tf.reduce_sum(fn(tg_tf.constant(x64 - d)) * w.astype(np.float64)).numpy()
            ref[i] = (hi - lo) / (2 * eps)
        np.testing.assert_allclose(g, ref, rtol=1e-4, atol=1e-5)


@avx512
@pytest.mark.parametrize("heads,key_dim,dim,t_len,s_len,seed", [
    (2, 4, 8, 5, 7, 0), (4, 16, 32, 10, 12, 1), (3, 8, 24, 6, 6, 2), (2, 32, 64, 9, 17, 3)])
def test_multi_head_attention_bits_are_keras(rtf: Any, heads: int, key_dim: int, dim: int,
                                             t_len: int, s_len: int, seed: int) -> None:
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(seed)
    q = rng.normal(0.0, 1.0, (2, t_len, dim)).astype(np.float32)
    kv = rng.normal(0.0, 1.0, (2, s_len, dim)).astype(np.float32)
    mask = rng.random((2, t_len, s_len)) > 0.25
    keras.utils.set_random_seed(seed)
    theirs = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=key_dim)
    t_out, t_scores = theirs(q, kv, attention_mask=mask, return_attention_scores=True)
    tg_tf.keras.utils.set_random_seed(seed)
    ours = tg_tf.keras.layers.MultiHeadAttention(num_heads=heads, key_dim=key_dim)
    o_out, o_scores = ours(tg_tf.constant(q), tg_tf.constant(kv),
                           attention_mask=tg_tf.constant(mask), return_attention_scores=True)
    assert all(_same_bits(a.numpy(), b.numpy()) for a, b in zip(ours.weights, theirs.weights))
    assert _same_bits_any_zero_sign(o_scores.numpy(), t_scores.numpy())
    assert _same_bits_any_zero_sign(o_out.numpy(), t_out.numpy())


@pytest.mark.parametrize("equation,sa,sb", [
    ("ij,jk->ik", (20, 64), (64, 9)), ("bij,bjk->bik", (3, 7, 32), (3, 32, 5)),
    ("abc,cde->abde", (2, 5, 8), (8, 2, 4)), ("aecd,abcd->acbe", (2, 7, 2, 16), (2, 5, 2, 16)),
    ("abcd,cde->abe", (2, 5, 2, 4), (2, 4, 8)), ("ij,jk->ik", (1, 100), (100, 1)),
    ("ij,jk->ik", (5, 3), (3, 2)), ("bij,bjk->bik", (2, 9, 256), (2, 256, 33))])
def test_einsum_float32_bits_are_tensorflows(rtf: Any, equation: str, sa: tuple[int, ...],
                                             sb: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(equation))
    a = rng.normal(0.0, 1.0, sa).astype(np.float32)
    b = rng.normal(0.0, 1.0, sb).astype(np.float32)
    assert _same_bits(tg_tf.einsum(equation, a, b).numpy(), rtf.einsum(equation, a, b).numpy())
    # the gradient still agrees with TensorFlow's to rounding
    va, vb = tg_tf.Variable(a), tg_tf.Variable(b)
    with tg_tf.GradientTape() as tape:
        y = tg_tf.reduce_sum(tg_tf.einsum(equation, va, vb) ** 2)
    ga, gb = tape.gradient(y, [va, vb])
    ra, rb = rtf.Variable(a), rtf.Variable(b)
    with rtf.GradientTape() as tape:
        ry = rtf.reduce_sum(rtf.einsum(equation, ra, rb) ** 2)
    rga, rgb = tape.gradient(ry, [ra, rb])
    np.testing.assert_allclose(ga.numpy(), rga.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gb.numpy(), rgb.numpy(), rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------ float64 and float16
# Neither dtype takes oneDNN: float64 has no oneDNN softmax, float16's needs AVX512-FP16,
# AMX-FP16 or AVX-NE-CONVERT (TensorFlow then logs "oneDNN supports DT_HALF only on
# platforms with AVX-512" and runs Eigen's kernel, which tapegrad emulates)
_FLAGS = _cpu_flags()
eigen_half = pytest.mark.skipif(bool({"avx512_fp16", "amx_fp16", "avx_ne_convert"} & _FLAGS),
                                reason="TensorFlow runs oneDNN's float16 softmax on this CPU")


def _same_bits_dt(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    ints = {8: np.int64, 4: np.int32, 2: np.int16}[a.dtype.itemsize]
    return bool(np.all((a.view(ints) == b.view(ints)) | (np.isnan(a) & np.isnan(b))))


def _equal_fraction(a: np.ndarray, b: np.ndarray) -> float:
    ints = {8: np.int64, 4: np.int32, 2: np.int16}[a.dtype.itemsize]
    return float(np.mean((a.view(ints) == b.view(ints)) | (np.isnan(a) & np.isnan(b))))


# 2539: float64 Softmax's exp block (Eigen's cost model); 1600 / 4096: float16 / float64
# tree-reduction leaves; 8 and 4: their packets
_LENGTHS_EIGEN = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 257,
                  1000, 1001, 1599, 1600, 1601, 1607, 2538, 2539, 2540, 2543, 4095, 4096, 4097,
                  4099, 5079, 8193, 9001]


def _inputs_eigen(n: int, dtype: Any) -> list[np.ndarray]:
    rng = np.random.default_rng(1000 + n)
    big = n <= 100
    out = []
    for rows, scale in ((1, 1.0), (3, 0.01), (8, 10.0), (13, 3.0), (5, 100.0),
                        (300 if big else 2, 1.0), (4, 1e4)):
        out.append(rng.normal(0.0, scale, (rows, n)).astype(dtype))
    masked = rng.normal(0.0, 5.0, (6, n)).astype(dtype)
    if n > 1:
        masked[:, 1::3] = -np.inf
    out.append(masked)
    out.append((rng.normal(0.0, 300.0 if dtype == np.float64 else 8.0, (7, n))
                + 50.0).astype(dtype))   # exps that underflow, flush or go subnormal (half)
    return out


@pytest.mark.parametrize("n", _LENGTHS_EIGEN)
def test_float64_softmax_and_log_softmax_bits_are_tensorflows(rtf: Any, n: int) -> None:
    for x in _inputs_eigen(n, np.float64):
        assert _same_bits_dt(tg_tf.nn.softmax(x).numpy(), rtf.nn.softmax(x).numpy()), x.shape
        assert _same_bits_dt(tg_tf.nn.log_softmax(x).numpy(),
                             rtf.nn.log_softmax(x).numpy()), x.shape


@eigen_half
@pytest.mark.parametrize("n", _LENGTHS_EIGEN)
def test_float16_softmax_and_log_softmax_bits_are_tensorflows(rtf: Any, n: int) -> None:
    for x in _inputs_eigen(n, np.float16):
        with np.errstate(over="ignore"):
            assert _same_bits_dt(tg_tf.nn.softmax(x).numpy(), rtf.nn.softmax(x).numpy()), x.shape
            assert _same_bits_dt(tg_tf.nn.log_softmax(x).numpy(),
                                 rtf.nn.log_softmax(x).numpy()), x.shape


def _specials(dtype: Any) -> np.ndarray:
    rng = np.random.default_rng(3)
    x = rng.normal(0.0, 3.0, (16, 10)).astype(dtype)
    x[0, 3] = np.nan
    x[1, :] = -np.inf
    x[2, 4] = np.inf
    x[3, ::2] = -np.inf
    x[4, 0], x[4, 5] = np.nan, np.inf
    x[6, :] = np.inf
    x[7, 9] = np.nan
    x[9, 7], x[9, 1] = -np.inf, np.nan
    fin = np.finfo(dtype)
    x[5, 2] = fin.smallest_subnormal * 3          # subnormal inputs (DAZ in float64)
    x[8, :] = fin.smallest_subnormal * 5
    x[10, :] = fin.max
    x[10, 3] = -fin.max
    x[11, :] = -fin.max
    x[12, :3] = 0.0                               # exp(-708) / 3: flushed to zero in float64
    x[12, 3:] = -708.0 if dtype == np.float64 else -12.0
    x[13, :] = 0.0
    x[14, :] = 7.0
    x[15, ::3] = fin.tiny
    return x


@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float16, marks=eigen_half)])
def test_eigen_softmax_specials_are_tensorflows(rtf: Any, dtype: Any) -> None:
    x = _specials(dtype)
    with np.errstate(all="ignore"):
        for fn in ("softmax", "log_softmax"):
            ours = getattr(tg_tf.nn, fn)(x).numpy()
            theirs = getattr(rtf.nn, fn)(x).numpy()
            for i in range(x.shape[0]):
                assert _same_bits_dt(ours[i], theirs[i]), (fn, i, ours[i], theirs[i])


@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float16, marks=eigen_half)])
@pytest.mark.parametrize("shape,axis", [((2, 3, 5, 7), -1), ((2, 3, 5, 7), 1), ((2, 3, 5, 7), 0),
                                        ((4, 9, 3), 1), ((37,), 0), ((64, 1000), -1),
                                        ((3, 1000), 0), ((2, 9000), -1), ((700, 9), -1)])
def test_eigen_softmax_any_axis_and_long_rows(rtf: Any, dtype: Any, shape: tuple[int, ...],
                                              axis: int) -> None:
    x = np.random.default_rng(len(shape) + axis).normal(0.0, 4.0, shape).astype(dtype)
    assert _same_bits_dt(tg_tf.nn.softmax(x, axis=axis).numpy(),
                         rtf.nn.softmax(x, axis=axis).numpy())
    assert _same_bits_dt(tg_tf.nn.log_softmax(x, axis=axis).numpy(),
                         rtf.nn.log_softmax(x, axis=axis).numpy())


def test_eigen_softmax_equal_bit_fraction_is_one(rtf: Any) -> None:
    """The overall equal-bit fraction over a sweep of shapes (NumPy's formula: ~40-90%)."""
    rng = np.random.default_rng(17)
    for dtype in (np.float64,) + (() if {"avx512_fp16", "amx_fp16", "avx_ne_convert"} & _FLAGS
                                  else (np.float16,)):
        fracs = []
        for rows, n in ((64, 1000), (32, 7), (5, 2539), (3, 4097), (200, 13), (1, 1601)):
            x = rng.normal(0.0, 3.0, (rows, n)).astype(dtype)
            for fn in ("softmax", "log_softmax"):
                fracs.append(_equal_fraction(getattr(tg_tf.nn, fn)(x).numpy(),
                                             getattr(rtf.nn, fn)(x).numpy()))
        assert min(fracs) == 1.0, (dtype, fracs)


def test_keras_softmax_float64_is_tensorflows(rtf: Any) -> None:
    keras = pytest.importorskip("keras")
    x = np.random.default_rng(8).normal(0.0, 4.0, (6, 37))
    assert _same_bits_dt(tg_tf.keras.activations.softmax(tg_tf.constant(x)).numpy(),
                         np.asarray(keras.activations.softmax(x)))


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_eigen_softmax_gradients_are_unchanged(rtf: Any, dtype: Any) -> None:
    rng = np.random.default_rng(21)
    x = rng.normal(0.0, 2.0, (4, 13)).astype(dtype)
    w = rng.normal(0.0, 1.0, (4, 13)).astype(dtype)
    rtol, atol = (1e-12, 1e-13) if dtype == np.float64 else (2e-2, 2e-3)
    for fn in ("softmax", "log_softmax"):
        v = tg_tf.Variable(x)
        with tg_tf.GradientTape() as tape:
            y = tg_tf.reduce_sum(getattr(tg_tf.nn, fn)(v) * w)
        g = tape.gradient(y, v).numpy()
        rv = rtf.Variable(x)
        with rtf.GradientTape() as tape:
            ry = rtf.reduce_sum(getattr(rtf.nn, fn)(rv) * w)
        rg = tape.gradient(ry, rv).numpy()
        assert g.dtype == rg.dtype == dtype
        np.testing.assert_allclose(g.astype(np.float64), rg.astype(np.float64), rtol=rtol,
                                   atol=atol)
