"""TensorFlow-style float32 ``expm1``, ``elu``, ``selu``, ``softplus`` and the ``Expm1``,
``Erf``, ``Elu``, ``Selu`` and ``Softplus`` gradients: TensorFlow's own bits.

TensorFlow 2.21's CPU kernels (``tapegrad/ops/_tf_eigen.py``): ``Expm1`` is Eigen's
``generic_expm1`` (``(u - 1) * (x / log u)``, ``u = exp x``) on packets of 8 and glibc's
``expm1f`` on the tail; ``Elu``/``Selu`` use ``exp(x) - 1`` (not ``expm1``);
``Softplus`` is ``x``, ``exp(x)`` or ``log1p(exp(x))`` by thresholds at ``log(eps) + 2``;
the gradients are ``grad * exp(x)`` (Expm1Grad), ``grad * 2/sqrt(pi) * exp(-x^2)``
(ErfGrad), ``grad * sigmoid(x)`` (SoftplusGrad).  The expected bits below were printed by
real TensorFlow 2.21 for these 37 inputs (32 in packets, 5 in the scalar tail); the
conformance suite (``tests/conformance/test_bits17_conformance.py``) compares 10**5-value
sweeps with the installed TensorFlow.  Here, without TensorFlow: those bits, accuracy
against float64, and finite-difference gradients.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf
from tapegrad.ops import _tf_eigen as k
from tests.tf_style.tf_helpers import exact_sums  # noqa: F401  (a fixture, used by pytestmark)

# TensorFlow's summation orders are opt-in (tf.config.set_exact_float32_sums)
pytestmark = pytest.mark.usefixtures("exact_sums")



def _u32(hexes: list[int]) -> np.ndarray:
    return np.array(hexes, np.uint32)


X = _u32([
    0xc1a00000, 0xc195ad6b, 0xc18b5ad7, 0xc1810842, 0xc16d6b5b, 0xc158c632,
    0xc1442108, 0xc12f7bdf, 0xc11ad6b6, 0xc106318c, 0xc0e318c6, 0xc0b9ce74,
    0xc0908421, 0xc04e739d, 0xbff7bdef, 0xbf25294a, 0x3f25294a, 0x3ff7bdef,
    0x404e739d, 0x40908421, 0x40b9ce74, 0x40e318c6, 0x4106318c, 0x411ad6b6,
    0x412f7bdf, 0x41442108, 0x4158c632, 0x416d6b5b, 0x41810842, 0x418b5ad7,
    0x4195ad6b, 0x41a00000, 0x3e99999a, 0xba83126f, 0x3851b717, 0xc1f00000,
    0x40400000,
])
G = _u32([
    0xbfc00000, 0xbfb38e39, 0xbfa71c72, 0xbf9aaaab, 0xbf8e38e4, 0xbf81c71c,
    0xbf6aaaab, 0xbf51c71c, 0xbf38e38e, 0xbf200000, 0xbf071c72, 0xbedc71c7,
    0xbeaaaaab, 0xbe71c71c, 0xbe0e38e4, 0xbd2aaaab, 0x3d638e39, 0x3e1c71c7,
    0x3e800000, 0x3eb1c71c, 0x3ee38e39, 0x3f0aaaab, 0x3f238e39, 0x3f3c71c7,
    0x3f555555, 0x3f6e38e4, 0x3f838e39, 0x3f900000, 0x3f9c71c7, 0x3fa8e38e,
    0x3fb55555, 0x3fc1c71c, 0x3fce38e4, 0x3fdaaaab, 0x3fe71c72, 0x3ff38e39,
    0x40000000,
])
EXPM1 = _u32([
    0xbf800000, 0xbf800000, 0xbf800000, 0xbf7ffffe, 0xbf7ffffa, 0xbf7fffea,
    0xbf7fffb0, 0xbf7ffedf, 0xbf7ffbe4, 0xbf7ff112, 0xbf7fc9c0, 0xbf7f3add,
    0xbf7d339c, 0xbf75d4aa, 0xbf5b0b97, 0xbef36a84, 0x3f6802ea, 0x40bdad38,
    0x41c16415, 0x42b4f62a, 0x43a5b7ff, 0x4496e20a, 0x4589286b, 0x4679411d,
    0x4762748a, 0x484dbc18, 0x493ae89d, 0x4a29cdff, 0x4b1a440c, 0x4c0c2624,
    0x4cfea5c4, 0x4de75844, 0x3eb320b2, 0xba8301a9, 0x3851b86f, 0xbf800000,
    0x4198af2e,
])
EXPM1_GRAD = _u32([
    0xb154764c, 0xb234825c, 0xb3189ff7, 0xb4005525, 0xb4d66a8d, 0xb5b1c012,
    0xb691ffe6, 0xb76d2482, 0xb83de174, 0xb9154870, 0xb9e50ced, 0xbaa9c1f1,
    0xbb6ecc06, 0xbc19ab46, 0xbca43e46, 0xbcb30e52, 0x3dd8e4da, 0x3f877814,
    0x40c96415, 0x41fe1d01, 0x4313bfff, 0x4423978b, 0x452f4c17, 0x46377d8b,
    0x473cb748, 0x483f72d2, 0x494019ce, 0x4a3f07c4, 0x4b3c8c10, 0x4c38eb36,
    0x4d346015, 0x4e2f1d7a, 0x400b2f7a, 0x3fda72b7, 0x3fe71f67, 0x2a4878cb,
    0x4220af2e,
])
ELU = _u32([
    0xbf800000, 0xbf800000, 0xbf800000, 0xbf7ffffe, 0xbf7ffffa, 0xbf7fffea,
    0xbf7fffb0, 0xbf7ffedf, 0xbf7ffbe4, 0xbf7ff112, 0xbf7fc9c0, 0xbf7f3add,
    0xbf7d339c, 0xbf75d4aa, 0xbf5b0b97, 0xbef36a86, 0x3f25294a, 0x3ff7bdef,
    0x404e739d, 0x40908421, 0x40b9ce74, 0x40e318c6, 0x4106318c, 0x411ad6b6,
    0x412f7bdf, 0x41442108, 0x4158c632, 0x416d6b5b, 0x41810842, 0x418b5ad7,
    0x4195ad6b, 0x41a00000, 0x3e99999a, 0xba830200, 0x3851b717, 0xbf800000,
    0x40400000,
])
ELU_GRAD = _u32([
    0x80000000, 0x80000000, 0x80000000, 0xb41aaaab, 0xb4d55556, 0xb5b271c6,
    0xb692aaab, 0xb76cd1c7, 0xb83df1c7, 0xb9154c00, 0xb9e50e39, 0xbaa9c1b2,
    0xbb6ecc00, 0xbc19ab4c, 0xbca43e45, 0xbcb30e52, 0x3d638e39, 0x3e1c71c7,
    0x3e800000, 0x3eb1c71c, 0x3ee38e39, 0x3f0aaaab, 0x3f238e39, 0x3f3c71c7,
    0x3f555555, 0x3f6e38e4, 0x3f838e39, 0x3f900000, 0x3f9c71c7, 0x3fa8e38e,
    0x3fb55555, 0x3fc1c71c, 0x3fce38e4, 0x3fda72b7, 0x3fe71c72, 0x00000000,
    0x40000000,
])
SELU = _u32([
    0xbfe10966, 0xbfe10966, 0xbfe10966, 0xbfe10964, 0xbfe10961, 0xbfe10953,
    0xbfe10920, 0xbfe10868, 0xbfe105c9, 0xbfe0fc46, 0xbfe0d9b6, 0xbfe05c1b,
    0xbfde93a8, 0xbfd818f0, 0xbfc08d3a, 0xbf55f990, 0x3f2d88fe, 0x400226bf,
    0x4058eb3e, 0x4097d7df, 0x40c33a1f, 0x40ee9c5e, 0x410cff4f, 0x4122b06f,
    0x4138618f, 0x414e12ae, 0x4163c3cf, 0x417974ee, 0x41879307, 0x41926b97,
    0x419d4426, 0x41a81cb7, 0x3ea1633f, 0xbae65323, 0x385c5915, 0xbfe10966,
    0x4049bc0e,
])
SELU_GRAD = _u32([
    0x80000000, 0x80000000, 0x80000000, 0xb49aaaab, 0xb531c71d, 0xb61a1c71,
    0xb7005556, 0xb7d0238e, 0xb8a7038e, 0xb9834000, 0xba4958e4, 0xbb153979,
    0xbbd1ea00, 0xbc871530, 0xbd1060c4, 0xbd1d6628, 0x3d6f17c5, 0x3e246058,
    0x3e867d5f, 0x3ebaca92, 0x3eef17c5, 0x3f11b27d, 0x3f2bd916, 0x3f45ffaf,
    0x3f602649, 0x3f7a4ce3, 0x3f8a39be, 0x3f974d0b, 0x3fa46058, 0x3fb173a4,
    0x3fbe86f1, 0x3fcb9a3e, 0x3fd8ad8b, 0x404006d8, 0x3ff2d425, 0x00000000,
    0x40067d5f,
])
SOFTPLUS = _u32([
    0x310da433, 0x3200ae0a, 0x32e9ceed, 0x33d4699e, 0x34c0f97e, 0x35af50b3,
    0x369f459c, 0x3790b228, 0x388373a4, 0x396ed355, 0x3a58e7cb, 0x3b44d789,
    0x3c32203c, 0x3d1f8f50, 0x3e0a13aa, 0x3ed7eb5f, 0x3f888f7d, 0x40048032,
    0x4050f1db, 0x4090dd31, 0x40b9e70f, 0x40e31f8d, 0x4106327b, 0x411ad6f8,
    0x412f7bf1, 0x4144210d, 0x4158c633, 0x416d6b5b, 0x41810842, 0x418b5ad7,
    0x4195ad6b, 0x41a00000, 0x3f5ab707, 0x3f315155, 0x3f3173bb, 0x29d2b706,
    0x40431c0e,
])
SOFTPLUS_GRAD = _u32([
    0xb1547650, 0xb234825b, 0xb3189ff9, 0xb4005525, 0xb4d66a86, 0xb5b1c001,
    0xb691ffb7, 0xb76d2374, 0xb83dde6a, 0xb9153fbd, 0xb9e4dc6b, 0xbaa93f98,
    0xbb6c36fc, 0xbc13cc46, 0xbc8f865b, 0xbc6ae47a, 0x3d154210, 0x3e08b5b5,
    0x3e763821, 0x3eafdaff, 0x3ee2df84, 0x3f0a8d4f, 0x3f2384b0, 0x3f3c6ec1,
    0x3f555464, 0x3f6e389a, 0x3f838e2e, 0x3f8ffffd, 0x3f9c71c6, 0x3fa8e38e,
    0x3fb55555, 0x3fc1c71c, 0x3f6cecf8, 0x3f5a8ead, 0x3f671deb, 0x2a4878cb,
    0x3ff3dbe6,
])
ERF_GRAD = _u32([
    0x80000000, 0x80000000, 0x80000000, 0x80000000, 0x80000000, 0x80000000,
    0x80000000, 0x80000000, 0x80000000, 0x8c8114a7, 0x9ac0f2a2, 0xa69f9727,
    0xb00f8037, 0xb7073cdd, 0xbb727d53, 0xbcfe04d7, 0x3d29588f, 0x3b855e87,
    0x370f3163, 0x30157ae3, 0x26a4bd0f, 0x1ac6067e, 0x0c83f2fa, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x3fd4ab40, 0x3ff6bd1b, 0x400263f7, 0x00000000,
    0x39920475,
])

_FNS: dict[str, Callable[[Any], Any]] = {
    "EXPM1": tf.math.expm1, "ELU": tf.nn.elu, "SELU": tf.nn.selu,
    "SOFTPLUS": tf.math.softplus, "ERF": tf.math.erf,
}


def _x() -> np.ndarray:
    return X.view(np.float32)


def _bits(a: Any) -> np.ndarray:
    return np.asarray(a, np.float32).view(np.uint32)


@pytest.mark.parametrize("name", ["EXPM1", "ELU", "SELU", "SOFTPLUS"])
def test_values_are_tensorflows_bits(name: str) -> None:
    got = _FNS[name](tf.constant(_x())).numpy()
    assert got.dtype == np.float32 and got.shape == (37,)
    np.testing.assert_array_equal(_bits(got), globals()[name])


@pytest.mark.parametrize("name", ["EXPM1", "ELU", "SELU", "SOFTPLUS", "ERF"])
def test_gradients_are_tensorflows_bits(name: str) -> None:
    v = tf.Variable(_x())
    with tf.GradientTape() as tape:
        y = _FNS[name](v)
    d = tape.gradient(y, v, output_gradients=tf.constant(G.view(np.float32)))
    np.testing.assert_array_equal(_bits(d.numpy()), globals()[name + "_GRAD"])


def test_expm1_kernel_accuracy_and_special_values() -> None:
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(0, 4, 10_003), rng.normal(0, 1e-3, 1003)]).astype(np.float32)
    got = k.expm1_f32(x).astype(np.float64)
    want = np.expm1(x.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=3e-7, atol=0)
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 100.0, -100.0, 1e-30], np.float32)
    for arr in (sp, np.tile(sp, 2)):  # the scalar tail and whole packets
        out = k.expm1_f32(arr)
        np.testing.assert_array_equal(out[:4], [0.0, -0.0, np.inf, -1.0])
        assert np.isnan(out[4]) and out[5] == np.inf and out[6] == -1.0 and out[7] == 1e-30
        assert np.signbit(out[1])


def _fd_check(fn: Callable[[Any], Any], x: np.ndarray) -> None:
    """The float64 gradient against central differences (the non-kernel path), and the
    float32 TensorFlow-kernel gradient against the float64 one."""
    g = np.linspace(-1.0, 1.5, x.size)
    v = tf.Variable(x)
    with tf.GradientTape() as tape:
        y = fn(v)
    d64 = tape.gradient(y, v, output_gradients=tf.constant(g)).numpy()
    h = 1e-6
    fd = (fn(tf.constant(x + h)).numpy() - fn(tf.constant(x - h)).numpy()) / (2 * h) * g
    np.testing.assert_allclose(d64, fd, rtol=1e-6, atol=1e-9)
    v32 = tf.Variable(x.astype(np.float32))
    with tf.GradientTape() as tape:
        y32 = fn(v32)
    d32 = tape.gradient(y32, v32, output_gradients=tf.constant(g.astype(np.float32))).numpy()
    assert d32.dtype == np.float32
    np.testing.assert_allclose(d32, d64, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["EXPM1", "ELU", "SELU", "SOFTPLUS", "ERF"])
def test_gradients_finite_differences(name: str) -> None:
    x = np.concatenate([np.linspace(-6, 4, 40), [0.37, -0.21, 1e-3]])  # 0 (a kink) left out
    _fd_check(_FNS[name], x)


def test_second_order_through_the_kernel_gradients() -> None:
    # the VJPs are tapegrad ops (differentiable again): d2/dx2 expm1 = e^x, erf'' = -2x erf'
    x = tf.Variable(np.array([-1.5, -0.2, 0.4, 2.0], np.float64))
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.math.reduce_sum(tf.math.expm1(x) + tf.math.erf(x))
        d = inner.gradient(y, x)
    d2 = outer.gradient(d, x).numpy()
    xs = x.numpy()
    want = np.exp(xs) - 2 * xs * 2 / math.sqrt(math.pi) * np.exp(-xs * xs)
    np.testing.assert_allclose(d2, want, rtol=1e-12)


def test_softplus_thresholds_and_other_dtypes() -> None:
    lo = float(np.float32(np.log(np.finfo(np.float32).eps)) + np.float32(2))
    x = np.array([-lo + 1, -lo - 1e-3, lo - 1, lo + 1e-3, 0.0, -100.0, 100.0], np.float32)
    got = tf.math.softplus(tf.constant(x)).numpy()
    assert got[0] == x[0] and got[2] == np.exp(np.float32(x[2]))
    np.testing.assert_allclose(got, np.logaddexp(0, x.astype(np.float64)), rtol=2e-7, atol=1e-38)
    x64 = np.linspace(-30, 30, 13)
    np.testing.assert_allclose(tf.math.softplus(tf.constant(x64)).numpy(),
                               np.logaddexp(0, x64), rtol=1e-15)
    np.testing.assert_allclose(tf.nn.selu(tf.constant(x64)).numpy(),
                               np.where(x64 < 0, 1.7580993408473766 * np.expm1(x64),
                                        1.0507009873554805 * x64), rtol=1e-15)


# TensorFlow's float32 convolution: one fused multiply-add chain per output, kernel offsets
# outer, input channels inner (tapegrad/ops/conv.py); bits printed by TensorFlow 2.21
CONV1D = _u32([
    0xc0501cb0, 0xc0c6b48c, 0xbd900d42, 0x40c58047, 0xbf1c8f04, 0x3fcb137b,
    0x3fbaecb4, 0xbf4e24cb, 0xc00f5c9a, 0xbfb3c50d, 0x3fbe8c17, 0x400cdb18,
    0x4033b57c, 0xbe567719, 0xc03ae14c, 0xbfad2719, 0xbf036325, 0x3fce0e38,
    0x3fafeecb, 0xbf5fdd17, 0xc0138081, 0xbfaf3bda, 0x3fc9411c, 0x400d73c2,
    0x403179c5, 0xbe88f09a, 0xc03aa22a, 0xbfa5763e, 0xbed42259, 0x3fd0cd54,
    0x3fa4bdf6, 0xbf7154b5, 0x4043157a, 0xc00e1ac6, 0xc0878e03, 0xbd3c0e4c,
    0xc05f23af, 0xc0b74b6b, 0x3ed81e95, 0x40be8565, 0xbea140fc, 0x3fd34fec,
    0x3f995d75, 0xbf814322, 0xc01b470c, 0xbfa592af, 0x3fddf94e, 0x400e2a0c,
    0x402c68e7, 0xbec3db69, 0xc03981f6, 0xbf95872a, 0xbe5c61d4, 0x3fd5956a,
    0x3f8dd087, 0xbf89b691, 0xc01ee772, 0xbfa07582, 0x3fe7f685, 0x400e4780,
    0x40299537, 0xbee10008, 0xc038a12f, 0xbf8d4d81, 0xbdec04b7, 0x3fd79d04,
    0x3f821a8e, 0xbf920215, 0x402c4d33, 0xc03d0064, 0xc088b55d, 0x3f2ae56d,
])
CONV2D = _u32([
    0x40bd8280, 0x40bc8fb4, 0xc08f17c2, 0xc083a1b1, 0x400a7205, 0x3fc5ca57,
    0x3f0f6cef, 0x3fa8e495, 0x40a5d9c2, 0x40b93aaa, 0xc0c63e0c, 0xc0d120b6,
    0x40c099a5, 0x40c0e76f, 0xc09601b0, 0xc08baba9, 0x3e7a6fcd, 0x3f7ea7ea,
    0xc039917f, 0xc06a64ff, 0x409ff0e4, 0x40b413dd, 0xc0c46986, 0xc0d068b4,
    0xc09c89ea, 0xc0935aab, 0x402fb01b, 0x400b5cfe, 0xbd92ee62, 0x3f2ae0b8,
    0xc02762b9, 0xc0589b30,
])


def _conv_inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    f = np.float32
    x = (np.sin(np.arange(2 * 9 * 6) * 0.7) * 3).astype(f).reshape(2, 9, 6)
    w = np.cos(np.arange(3 * 6 * 4) * 1.3).astype(f).reshape(3, 6, 4)
    x2 = (np.sin(np.arange(75) * 0.9) * 2).astype(f).reshape(1, 5, 5, 3)
    w2 = np.cos(np.arange(12 * 2) * 0.4).astype(f).reshape(2, 2, 3, 2)
    return x, w, x2, w2


def test_conv_values_are_tensorflows_bits() -> None:
    x, w, x2, w2 = _conv_inputs()
    y = tf.nn.convolution(tf.constant(x), tf.constant(w), padding="SAME").numpy()
    assert y.shape == (2, 9, 4) and y.dtype == np.float32
    np.testing.assert_array_equal(_bits(y).ravel(), CONV1D)
    v = tf.Variable(x2)  # recorded (the columns path) gives the same bits
    with tf.GradientTape() as tape:
        y2 = tf.nn.conv2d(v, tf.constant(w2), strides=1, padding="VALID")
    np.testing.assert_array_equal(_bits(y2.numpy()).ravel(), CONV2D)
    assert tape.gradient(y2, v).shape == (1, 5, 5, 3)


def test_conv_order_differs_from_blas_and_falls_back_past_the_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tapegrad.ops import conv as conv_mod

    rng = np.random.default_rng(4)
    x = rng.normal(size=(8, 30, 32)).astype(np.float32)
    w = rng.normal(size=(5, 32, 16)).astype(np.float32)
    emulated = tf.nn.conv1d(tf.constant(x), tf.constant(w), 1, "VALID").numpy()
    exact = np.einsum("btkc,kco->bto", np.stack([x[:, k:k + 26].astype(np.float64)
                                                 for k in range(5)], 2), w.astype(np.float64))
    np.testing.assert_allclose(emulated, exact, rtol=1e-5, atol=1e-5)
    monkeypatch.setattr(conv_mod, "_TF_CONV_BUDGET", 0)
    blas = tf.nn.conv1d(tf.constant(x), tf.constant(w), 1, "VALID").numpy()
    np.testing.assert_allclose(blas, exact, rtol=1e-5, atol=1e-5)
    assert (_bits(blas) != _bits(emulated)).any()  # the orders differ somewhere


def test_conv_gradients_finite_differences_float64() -> None:
    rng = np.random.default_rng(6)
    x = rng.normal(size=(2, 7, 3))
    w = rng.normal(size=(3, 3, 2))
    g = rng.normal(size=(2, 7, 2))
    xv, wv = tf.Variable(x), tf.Variable(w)
    with tf.GradientTape() as tape:
        y = tf.nn.conv1d(xv, wv, 1, "SAME")
    dx, dw = tape.gradient(y, [xv, wv], output_gradients=tf.constant(g))

    def f(xa: np.ndarray, wa: np.ndarray) -> float:
        return float(np.sum(tf.nn.conv1d(tf.constant(xa), tf.constant(wa), 1, "SAME").numpy()
                            * g))
    h = 1e-6
    for arr, d, other in ((x, dx.numpy(), w), (w, dw.numpy(), x)):
        fd = np.zeros_like(arr)
        for i in np.ndindex(arr.shape):
            e = np.zeros_like(arr)
            e[i] = h
            fd[i] = ((f(arr + e, other) - f(arr - e, other)) if arr is x
                     else (f(other, arr + e) - f(other, arr - e))) / (2 * h)
        np.testing.assert_allclose(d, fd, rtol=1e-6, atol=1e-8)


# TensorFlow's float32 MatMul (one FMA chain along k per output; tapegrad/ops/linalg.py) and
# its (Sparse)SoftmaxCrossEntropyWithLogits backprop (``e / sum(e) - labels``); bits printed
# by TensorFlow 2.21 (the gradient of ``a`` has 4 rows: another kernel, not emulated)
MATMUL = _u32([
    0xbf54ae68, 0xbd9b539d, 0x3f3cd931, 0x3dc0e6e2, 0x3eb35cb6, 0x3eabf09b,
    0x3f6988da, 0x3ec1f2df, 0xbee4ffb6, 0x3f31da95, 0xbcba1653, 0xbf38fded,
])
MATMUL_GRAD_B = _u32([
    0xbf779abe, 0xbee077bc, 0x3db91818, 0xc0106a4a, 0xbfe48b43, 0xbfa841f3,
    0xc04f6223, 0xc03904f4, 0xc022a7c6, 0xc072487b, 0xc066b9a7, 0xc05b2ad3,
    0xc074641a, 0xc0753418, 0xc0760414, 0xc0556bf8, 0xc0627e9f, 0xc06f9146,
    0xc019911d, 0xc031217a, 0xc048b1d8, 0xbf91dad2, 0xbfcf9612, 0xc006a8a9,
    0x3e8ca8de, 0xbe83429f, 0xbf49970f, 0x3fd36cd9, 0x3f9265c0, 0x3f22bd4c,
    0x403388f7, 0x4018e5db, 0x3ffc857f, 0x40650ee8, 0x4053e72d, 0x4042bf70,
    0x40779459, 0x40723a64, 0x406ce06e, 0x4068978f, 0x406fc4ca, 0x4076f207,
    0x403a1fd3, 0x404cdb97, 0x405f975c, 0x3fe4ee5d, 0x400e3865, 0x4029f99c,
    0x3eda83ea, 0x3f7155f9, 0x3fbab4ff, 0xbf7e2268, 0xbeedbf0f, 0x3d831acc,
    0xc011c85b, 0xbfe77f22, 0xbfab6d8e, 0xc0504cf9, 0xc03a1cc2, 0xc023ec8a,
    0xc072a04f, 0xc0674974, 0xc05bf299, 0xc0741d09, 0xc075286f, 0xc07633d4,
    0xc0548f9f, 0xc061d914, 0xc06f2288, 0xc0183d4e, 0xc02ff873, 0xc047b398,
    0xbf8ea047, 0xbfcc8d75, 0xc0053d52, 0x3e9a1f4c, 0xbe6bd4c4, 0xbf42fa08,
    0x3fd678e7, 0x3f9595a9, 0x3f2964d8, 0x4034b16e, 0x401a3386, 0x3fff6b3e,
    0x4065b1ae, 0x4054bd64, 0x4043c91b, 0x40779b67, 0x40727c2b, 0x406d5cef,
    0x406801f0, 0x406f6939, 0x4076d082, 0x403901c7, 0x404bef11, 0x405edc5c,
    0x3fe1eeda, 0x400cdaef, 0x4028be72, 0x3ecd17b8, 0x3f6ad991, 0x3fb793a3,
    0xbf825386, 0xbefb038e, 0x3d1a37e8, 0xc01324b0, 0xbfea7040, 0xbfae971f,
    0xc0513556, 0xc03b3259, 0xc0252f5c,
])
XENT_GRAD = _u32([
    0xbef5f7ed, 0x3ec4834c, 0x3c152257, 0x3a9fba25, 0x3db0af56, 0x3ea23ccf,
    0x3b67d498, 0x3b942093, 0x3ec2a08d, 0xbf347ec4, 0x3b3b0b88, 0x3d05bf70,
    0xbd99ddd5, 0x3d16f6db, 0x3b354c7f, 0x3e19bfb7, 0x3f3708a3, 0xbfb2120b,
    0x3bbc7194, 0x3f0532a0, 0x3ea565e3, 0xbfd90c49, 0x3cdf8f66, 0x3fa2a6ec,
    0x3d98da87, 0x3bacdd1b, 0x3e4cfee6, 0x3fe12c7d, 0xbffc9c5a, 0x3c119179,
])


def _mm_inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    f = np.float32
    a = (np.sin(np.arange(4 * 37) * 0.37) * 2).astype(f).reshape(4, 37)
    b = np.cos(np.arange(37 * 3) * 0.91).astype(f).reshape(37, 3)
    return a, b, np.linspace(-1, 1, 12).astype(f).reshape(4, 3)


def test_matmul_values_and_gradient_are_tensorflows_bits() -> None:
    a, b, g = _mm_inputs()
    av, bv = tf.Variable(a), tf.Variable(b)
    with tf.GradientTape() as tape:
        y = tf.matmul(av, bv)
    da, db = tape.gradient(y, [av, bv], output_gradients=tf.constant(g))
    np.testing.assert_array_equal(_bits(y.numpy()).ravel(), MATMUL)
    np.testing.assert_array_equal(_bits(db.numpy()).ravel(), MATMUL_GRAD_B)
    np.testing.assert_allclose(da.numpy(), g.astype(np.float64) @ b.T.astype(np.float64),
                               rtol=1e-5, atol=1e-6)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(y.numpy(), exact, rtol=1e-5, atol=1e-5)


def test_matmul_kernel_leaves_other_dtypes_and_large_products_to_blas(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tapegrad.ops import linalg

    a, b, _ = _mm_inputs()
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_array_equal(tf.matmul(tf.constant(a64), tf.constant(b64)).numpy(),
                                  a64 @ b64)
    monkeypatch.setattr(linalg, "_TF_MATMUL_BUDGET", 0)
    np.testing.assert_array_equal(tf.matmul(tf.constant(a), tf.constant(b)).numpy(), a @ b)


def test_sparse_xent_gradient_is_tensorflows_bits_and_matches_finite_differences() -> None:
    z = (np.sin(np.arange(30) * 1.7) * 3).astype(np.float32).reshape(6, 5)
    lab = np.array([0, 4, 2, 2, 1, 3], np.int32)
    gl = np.linspace(0.5, 2, 6).astype(np.float32)
    zv = tf.Variable(z)
    with tf.GradientTape() as tape:
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(lab, zv)
    d = tape.gradient(loss, zv, output_gradients=tf.constant(gl)).numpy()
    np.testing.assert_array_equal(_bits(d).ravel(), XENT_GRAD)
    z64 = z.astype(np.float64)
    lp = z64 - np.log(np.exp(z64).sum(1, keepdims=True))
    np.testing.assert_allclose(loss.numpy(), -lp[np.arange(6), lab], rtol=1e-5)
    want = gl[:, None] * (np.exp(lp) - np.eye(5)[lab])
    np.testing.assert_allclose(d, want, rtol=1e-5, atol=1e-7)


def test_leading_axis_sum_order() -> None:
    # from 16 rows: four row accumulators on whole packets of 8 columns, added in order,
    # then the left-over rows; the last cols % 8 columns (and everything under 16 rows) row
    # by row -- the reference written out directly, in float32
    rng = np.random.default_rng(9)
    for rows, cols in [(16, 8), (33, 19), (7, 16), (50, 3)]:
        x = rng.normal(size=(rows, cols)).astype(np.float32)
        want = np.zeros(cols, np.float32)
        v = cols - cols % 8 if rows >= 16 else 0
        acc = np.zeros((4, v), np.float32)
        r4 = rows - rows % 4
        for i in range(r4):
            acc[i % 4] += x[i, :v]
        s = acc[0] + acc[1] + acc[2] + acc[3]
        for i in range(r4, rows):
            s += x[i, :v]
        want[:v] = s
        for i in range(rows):
            want[v:] += x[i, v:]
        got = tf.reduce_sum(tf.constant(x), axis=0).numpy()
        np.testing.assert_array_equal(_bits(got), _bits(want))
        mean = tf.reduce_mean(tf.constant(x), axis=0).numpy()
        np.testing.assert_array_equal(_bits(mean), _bits(want / np.float32(rows)))
        np.testing.assert_allclose(got, x.astype(np.float64).sum(0), rtol=1e-5, atol=1e-5)

