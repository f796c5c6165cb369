"""Conformance: TensorFlow 2.21's float32 ``Expm1``, ``Elu``, ``Selu``, ``Softplus``, the
``Expm1``/``Erf``/``Elu``/``Selu``/``Softplus`` gradients and the convolution's values,
bit for bit against the installed TensorFlow (skipped without it).

10**5-value random sweeps, special values and every size from 1 to 24 (where the scalar
tail of Eigen's packets falls); convolutions of several ranks, strides, dilations and
paddings.  Not emulated (and so not compared): ``Reciprocal``/``Rsqrt`` (their kernels
refine the CPU's approximate ``rcpps``/``rsqrtps`` by a Newton step: CPU-specific), hence
the ``Log``/``Log1p``/``Sqrt`` gradients, the forward ``Erf``, and the convolution's
gradients (oneDNN's backward orders).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")

import tapegrad.tf as tg_tf  # noqa: E402
from tests.tf_style.tf_helpers import exact_sums, real_tf  # noqa: E402, F401  (exact_sums: a fixture)

# TensorFlow's summation orders are opt-in (tf.config.set_exact_float32_sums)
pytestmark = pytest.mark.usefixtures("exact_sums")



@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _fns(m: Any) -> dict[str, Any]:
    return {"expm1": m.math.expm1, "elu": m.nn.elu, "selu": m.nn.selu,
            "softplus": m.math.softplus, "erf": m.math.erf,
            "keras_elu2": lambda x: m.keras.activations.elu(x, alpha=2.0)}


def _mismatch(a: Any, b: Any) -> np.ndarray:
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    assert a.shape == b.shape and a.dtype == b.dtype
    return (a.view(np.uint32) != b.view(np.uint32)) & ~(np.isnan(a) & np.isnan(b))


def _inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(17)
    special = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-40, -1e-40, 88.7, 88.8, -87.0,
                        -103.9, -104.1, 13.9, 13.95, -13.9, -13.95, 1e-8, -1e-8, 3e-4],
                       np.float32)
    return ([special, np.tile(special, 3), rng.normal(0, 3, 100_003).astype(np.float32),
             rng.normal(0, 1e-3, 100_000).astype(np.float32),
             rng.uniform(-120, 100, 100_001).astype(np.float32),
             rng.normal(0, 4, (37, 129)).astype(np.float32)]
            + [rng.normal(0, 5, n).astype(np.float32) for n in range(1, 25)])


def _no_subnormals(x: np.ndarray) -> np.ndarray:
    # Keras' elu(alpha != 1) adds a Greater and a Mul, which read subnormals as 0 (DAZ)
    # there and not in NumPy (generic ops: not emulated)
    return np.where(np.abs(x) < np.finfo(np.float32).tiny, np.float32(0), x)


@pytest.mark.parametrize("name", ["expm1", "elu", "selu", "softplus", "keras_elu2"])
def test_values_bit_for_bit(rtf: Any, name: str) -> None:
    for x in _inputs():
        x = _no_subnormals(x) if name == "keras_elu2" else x
        want = _fns(rtf)[name](rtf.constant(x)).numpy()
        got = _fns(tg_tf)[name](tg_tf.constant(x)).numpy()
        bad = _mismatch(got, want)
        assert not bad.any(), (name, x.size, int(bad.sum()), x[bad][:5])


def _grad(m: Any, name: str, x: np.ndarray, g: np.ndarray) -> np.ndarray:
    v = m.Variable(x)
    with m.GradientTape() as tape:
        y = _fns(m)[name](v)
    return np.asarray(tape.gradient(y, v, output_gradients=m.constant(g)).numpy())


@pytest.mark.parametrize("name", ["expm1", "elu", "selu", "softplus", "erf", "keras_elu2"])
def test_gradients_bit_for_bit(rtf: Any, name: str) -> None:
    rng = np.random.default_rng(3)
    for x in _inputs():
        if not np.isfinite(x).all():
            x = np.where(np.isfinite(x), x, np.float32(1.5))  # the upstream NaN rules differ
        x = _no_subnormals(x) if name == "keras_elu2" else x
        g = rng.normal(size=x.shape).astype(np.float32)
        bad = _mismatch(_grad(tg_tf, name, x, g), _grad(rtf, name, x, g))
        assert not bad.any(), (name, x.size, int(bad.sum()), x[bad][:5])


_CONVS = [((32, 40, 16), (5, 16, 16), 1, 1, "VALID"), ((8, 50, 64), (3, 64, 32), 2, 1, "SAME"),
          ((5, 33, 7), (4, 7, 5), 1, 2, "SAME"), ((1, 60, 128), (3, 128, 64), 1, 1, "VALID"),
          ((4, 12, 12, 3), (3, 3, 3, 8), 1, 1, "SAME"), ((2, 9, 11, 16), (2, 3, 16, 4), 2, 1,
                                                          "VALID"),
          ((3, 8, 8, 5), (1, 1, 5, 6), 1, 1, "VALID"), ((2, 10, 10, 8), (3, 3, 8, 8), 1, 2,
                                                        "SAME")]


@pytest.mark.parametrize("case", _CONVS, ids=[str(c[:2]) for c in _CONVS])
def test_convolution_values_bit_for_bit(rtf: Any, case: Any) -> None:
    xs, ws, s, d, p = case
    rng = np.random.default_rng(len(xs) * 100 + ws[-1])
    x = rng.normal(size=xs).astype(np.float32)
    w = (rng.normal(size=ws) * 0.3).astype(np.float32)
    want = rtf.nn.convolution(x, w, strides=s, dilations=d, padding=p).numpy()
    got = tg_tf.nn.convolution(tg_tf.constant(x), tg_tf.constant(w), strides=s, dilations=d,
                               padding=p).numpy()
    assert not _mismatch(got, want).any()
    v = tg_tf.Variable(x)  # recorded for the gradient: the same values
    with tg_tf.GradientTape():
        got2 = tg_tf.nn.convolution(v, tg_tf.constant(w), strides=s, dilations=d, padding=p)
    assert not _mismatch(got2.numpy(), want).any()


def test_keras_conv1d_layer_forward_bit_for_bit(rtf: Any) -> None:
    import keras

    rng = np.random.default_rng(8)
    x = rng.normal(size=(16, 40, 16)).astype(np.float32)
    ref = keras.layers.Conv1D(16, 5, activation="relu")
    want = ref(x).numpy()
    ours = tg_tf.keras.layers.Conv1D(16, 5, activation="relu")
    ours.build(x.shape)
    ours.set_weights(ref.get_weights())
    assert not _mismatch(ours(tg_tf.constant(x)).numpy(), want).any()


_MATMULS = [(32, 32, 3), (32, 20, 32), (1, 64, 8), (64, 300, 7), (32, 16, 16), (20, 32, 32),
            (16, 8, 20), (3, 5, 2)]


@pytest.mark.parametrize("shape", _MATMULS, ids=str)
def test_matmul_values_and_gradients_bit_for_bit(rtf: Any, shape: Any) -> None:
    m, k, n = shape
    rng = np.random.default_rng(m * 1000 + k + n)
    a = rng.normal(size=(m, k)).astype(np.float32)
    b = rng.normal(size=(k, n)).astype(np.float32)
    g = rng.normal(size=(m, n)).astype(np.float32)
    res = []
    for mod in (rtf, tg_tf):
        av, bv = mod.Variable(a), mod.Variable(b)
        with mod.GradientTape() as tape:
            y = mod.matmul(av, bv)
        da, db = tape.gradient(y, [av, bv], output_gradients=mod.constant(g))
        res.append((y.numpy(), da.numpy(), db.numpy()))
    (y0, da0, db0), (y1, da1, db1) = res
    assert not _mismatch(y1, y0).any() and not _mismatch(db1, db0).any()
    if m >= 16:  # g @ b^T with fewer rows takes another oneDNN kernel (not emulated)
        assert not _mismatch(da1, da0).any()
    else:
        np.testing.assert_allclose(da1, da0, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(32, 3), (7, 10), (64, 1000), (5, 17), (6, 5), (33, 8)],
                         ids=str)
def test_xent_gradients_bit_for_bit(rtf: Any, shape: Any) -> None:
    rng = np.random.default_rng(shape[1])
    z = (rng.normal(size=shape) * 3).astype(np.float32)
    lab = rng.integers(0, shape[1], shape[0]).astype(np.int32)
    g = rng.normal(size=shape[0]).astype(np.float32)
    grads = []
    for mod in (rtf, tg_tf):
        zv = mod.Variable(z)
        with mod.GradientTape(persistent=True) as tape:
            sparse = mod.nn.sparse_softmax_cross_entropy_with_logits(lab, zv)
            dense = mod.nn.softmax_cross_entropy_with_logits(
                mod.constant(np.eye(shape[1], dtype=np.float32)[lab]), zv)
        grads.append([tape.gradient(v, zv, output_gradients=mod.constant(g)).numpy()
                      for v in (sparse, dense)])
    for want, got in zip(*grads):
        assert not _mismatch(got, want).any()


@pytest.mark.parametrize("shape", [(32, 3), (32, 16), (512, 10), (100, 7), (1000, 33), (8, 8),
                                   (15, 24), (16, 24), (4096, 3), (33, 130), (20000, 64),
                                   (4, 40, 16), (64, 5, 12)], ids=str)
def test_leading_axis_sum_and_mean_bit_for_bit(rtf: Any, shape: Any) -> None:
    x = np.random.default_rng(len(shape) * 7 + shape[0]).normal(size=shape).astype(np.float32)
    axes = [0, 1] if len(shape) == 3 and shape[0] == 4 else 0
    for name in ("reduce_sum", "reduce_mean"):
        want = getattr(rtf, name)(x, axis=axes).numpy()
        got = getattr(tg_tf, name)(tg_tf.constant(x), axis=axes).numpy()
        assert not _mismatch(got, want).any(), name

