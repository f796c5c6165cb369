"""More Keras APIs: losses, metrics, activations and layers added for tutorial code.

Values are computed by hand (or with NumPy from the formulas Keras documents);
gradients are checked against finite differences.  No real TensorFlow needed.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf

keras = tf.keras
L, M, A = keras.losses, keras.metrics, keras.activations
F32 = np.float32

YT = np.array([[0.0, 1.0], [1.0, 0.0]], F32)
YP = np.array([[0.3, 0.8], [0.6, 0.4]], F32)


def _np(x: Any) -> np.ndarray:
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


# ---------------------------------------------------------------------------- losses
def test_huber_quadratic_and_linear_parts() -> None:
    # errors 0.5 (quadratic: 0.125) and 2.0 (linear: 2 - 0.5 = 1.5): mean 0.8125
    v = L.huber([[0.0, 1.0]], [[0.5, 3.0]])
    assert v.shape == (1,) and v.dtype == tf.float32
    np.testing.assert_allclose(_np(v), [0.8125])
    assert float(L.Huber()([[0.0, 1.0]], [[0.5, 3.0]])) == pytest.approx(0.8125)
    # delta = 0.25: 0.25*0.5 - 0.5*0.0625 = 0.09375 and 0.25*2 - 0.03125 = 0.46875
    np.testing.assert_allclose(_np(L.Huber(delta=0.25, reduction=None)([[0.0, 1.0]],
                                                                      [[0.5, 3.0]])),
                               [0.28125], rtol=1e-6)
    assert L.Huber().get_config() == {"name": "huber_loss", "reduction": "sum_over_batch_size"}


def test_kl_divergence_clips_and_sums() -> None:
    eps = 1e-7
    t = np.clip(YT, eps, 1)
    p = np.clip(YP, eps, 1)
    want = np.sum(t * np.log(t / p), axis=-1)
    np.testing.assert_allclose(_np(L.kl_divergence(YT, YP)), want, rtol=1e-5)
    np.testing.assert_allclose(_np(L.KLD(YT, YP)), want, rtol=1e-5)
    assert float(L.KLDivergence()(YT, YP)) == pytest.approx(want.mean(), rel=1e-5)


def test_cosine_similarity_is_minus_the_cosine() -> None:
    np.testing.assert_allclose(_np(L.cosine_similarity([[0.0, 2.0]], [[0.0, 3.0]])), [-1.0])
    np.testing.assert_allclose(_np(L.cosine_similarity([[1.0, 0.0]], [[0.0, 3.0]])), [0.0])
    a, b = np.array([[1.0, 2.0]], F32), np.array([[2.0, 1.0]], F32)
    np.testing.assert_allclose(float(L.CosineSimilarity()(a, b)), -0.8, rtol=1e-6)
    # zero vectors: the inverse norm is capped at 1/epsilon, no NaN
    assert float(L.cosine_similarity([[0.0, 0.0]], [[1.0, 0.0]])[0]) == 0.0


def test_hinge_maps_binary_labels_to_signs() -> None:
    # labels 0/1 -> -1/1: max(1 - (-1)(0.5), 0) = 1.5, max(1 - 0.25, 0) = 0.75
    np.testing.assert_allclose(_np(L.hinge([[0.0, 1.0]], [[0.5, 0.25]])), [1.125])
    # -1/1 labels are used as they are
    np.testing.assert_allclose(_np(L.hinge([[-1.0, 1.0]], [[0.5, 0.25]])), [1.125])
    np.testing.assert_allclose(_np(L.squared_hinge([[0.0, 1.0]], [[0.5, 0.25]])),
                               [(1.5 ** 2 + 0.75 ** 2) / 2])
    # categorical: pos = 0.8, neg = max(0.3, 0) -> max(0.3 - 0.8 + 1, 0) = 0.5
    np.testing.assert_allclose(_np(L.categorical_hinge([[0.0, 1.0]], [[0.3, 0.8]])), [0.5],
                               rtol=1e-6)
    assert L.Hinge().name == "hinge" and L.SquaredHinge().name == "squared_hinge"
    assert L.CategoricalHinge().name == "categorical_hinge"


def test_log_cosh_poisson_msle_mape() -> None:
    d = YP - YT
    np.testing.assert_allclose(_np(L.log_cosh(YT, YP)), np.log(np.cosh(d)).mean(-1),
                               rtol=1e-5)
    np.testing.assert_allclose(_np(L.poisson(YT, YP)),
                               (YP - YT * np.log(YP + 1e-7)).mean(-1), rtol=1e-5)
    msle = (np.log(np.maximum(YP, 1e-7) + 1) - np.log(np.maximum(YT, 1e-7) + 1)) ** 2
    np.testing.assert_allclose(_np(L.msle(YT, YP)), msle.mean(-1), rtol=1e-5)
    np.testing.assert_allclose(_np(L.mape([[2.0, 4.0]], [[1.0, 5.0]])), [37.5])
    assert float(L.MeanAbsolutePercentageError()([[2.0, 4.0]], [[1.0, 5.0]])) == 37.5
    assert L.LogCosh().name == "log_cosh" and L.Poisson().name == "poisson"
    assert L.MeanSquaredLogarithmicError().name == "mean_squared_logarithmic_error"


def test_binary_focal_crossentropy() -> None:
    eps = 1e-7
    q = np.clip(YP, eps, 1 - eps)
    bce = -(YT * np.log(q) + (1 - YT) * np.log(1 - q))
    pt = YT * YP + (1 - YT) * (1 - YP)
    focal = (1 - pt) ** 2.0 * bce
    np.testing.assert_allclose(_np(L.binary_focal_crossentropy(YT, YP)), focal.mean(-1),
                               rtol=1e-5)
    w = YT * 0.25 + (1 - YT) * 0.75
    loss = L.BinaryFocalCrossentropy(apply_class_balancing=True)
    assert float(loss(YT, YP)) == pytest.approx((w * focal).mean(), rel=1e-5)
    cfg = loss.get_config()
    assert cfg["apply_class_balancing"] is True and cfg["gamma"] == 2.0 and cfg["alpha"] == 0.25


def test_loss_reductions_and_sample_weight() -> None:
    per = _np(L.huber(YT, YP))
    sw = np.array([2.0, 0.5], F32)
    assert float(L.Huber(reduction="sum")(YT, YP, sample_weight=sw)) == pytest.approx(
        float((per * sw).sum()), rel=1e-6)
    np.testing.assert_allclose(_np(L.Huber(reduction="none")(YT, YP)), per)


@pytest.mark.parametrize("name", ["huber", "kl_divergence", "cosine_similarity", "hinge",
                                  "squared_hinge", "categorical_hinge", "log_cosh", "poisson",
                                  "mean_squared_logarithmic_error",
                                  "mean_absolute_percentage_error",
                                  "binary_focal_crossentropy"])
def test_losses_are_differentiable(name: str) -> None:
    fn = getattr(L, name)
    p0 = np.array([[0.3, 0.8], [0.15, 0.55]], np.float64)
    t = tf.constant(np.array([[0.2, 1.0], [1.0, 0.3]]))  # no zero label (MAPE divides by it)
    v = tf.Variable(p0)
    with tf.GradientTape() as tape:
        total = tf.reduce_sum(fn(t, v))
    g = _np(tape.gradient(total, v))
    h = 1e-6
    num = np.zeros_like(p0)
    for i in np.ndindex(p0.shape):
        up, dn = p0.copy(), p0.copy()
        up[i] += h
        dn[i] -= h
        num[i] = (float(tf.reduce_sum(fn(t, up))) - float(tf.reduce_sum(fn(t, dn)))) / (2 * h)
    np.testing.assert_allclose(g, num, rtol=1e-4, atol=1e-6)


def test_loss_get_names() -> None:
    assert L.get("huber") is L.huber and L.get("kld") is L.kl_divergence
    assert L.get("mape") is L.mean_absolute_percentage_error
    with pytest.raises(ValueError, match="Could not interpret loss identifier: logcosh"):
        L.get("logcosh")


def test_compile_with_a_function_loss_name() -> None:
    x = np.linspace(-1, 1, 16, dtype=F32).reshape(8, 2)
    y = (x[:, :1] > 0).astype(F32)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="sgd", loss="huber", metrics=["kl_divergence", "hinge"])
    hist = model.fit(x, y, epochs=1, batch_size=4, verbose=0)
    assert set(hist.history) == {"loss", "kl_divergence", "hinge"}
    assert all(np.isfinite(v[-1]) for v in hist.history.values())


# ---------------------------------------------------------------------------- metrics
def test_confusion_counts() -> None:
    t, p = [0, 1, 1, 1, 0], [0.9, 0.2, 0.7, 0.6, 0.1]
    for cls, want in [(M.TruePositives, 2.0), (M.FalsePositives, 1.0),
                      (M.TrueNegatives, 1.0), (M.FalseNegatives, 1.0)]:
        m = cls()
        m.update_state(t, p)
        r = m.result()
        assert r.shape == () and float(r) == want
        assert [v.name for v in m.variables] == ["accumulator"]
    m = M.TruePositives(thresholds=[0.15, 0.65])
    m.update_state(t, p, sample_weight=[1, 2, 3, 4, 5])
    np.testing.assert_array_equal(_np(m.result()), [9.0, 3.0])
    assert m.get_config()["thresholds"] == [0.15, 0.65]
    m.reset_state()
    np.testing.assert_array_equal(_np(m.result()), [0.0, 0.0])


def test_precision_one_threshold_list_is_scalar() -> None:
    m = M.Precision(thresholds=[0.5])
    m.update_state([0, 1], [0.6, 0.7])
    assert m.result().shape == () and float(m.result()) == 0.5
    cfg = M.Precision().get_config()
    assert cfg["thresholds"] is None and cfg["top_k"] is None and cfg["class_id"] is None


def test_wrapped_loss_metrics() -> None:
    for cls, fn, name in [(M.KLDivergence, L.kl_divergence, "kl_divergence"),
                          (M.Hinge, L.hinge, "hinge"),
                          (M.SquaredHinge, L.squared_hinge, "squared_hinge"),
                          (M.CategoricalHinge, L.categorical_hinge, "categorical_hinge"),
                          (M.LogCoshError, L.log_cosh, "logcosh"),
                          (M.Poisson, L.poisson, "poisson")]:
        m = cls()
        assert m.name == name
        m.update_state(YT, YP, sample_weight=[1.0, 3.0])
        per = _np(fn(YT, YP))
        assert float(m.result()) == pytest.approx(float((per * [1, 3]).sum() / 4), rel=1e-6)
    m = M.CosineSimilarity()
    m.update_state([[1.0, 2.0]], [[2.0, 1.0]])
    assert float(m.result()) == pytest.approx(0.8, rel=1e-6)


def test_metric_functions_are_the_losses() -> None:
    assert M.binary_crossentropy is L.binary_crossentropy
    assert M.categorical_crossentropy is L.categorical_crossentropy
    assert M.sparse_categorical_crossentropy is L.sparse_categorical_crossentropy
    assert M.hinge is L.hinge and M.poisson is L.poisson and M.kld is L.kl_divergence


def test_r2_score() -> None:
    m = M.R2Score()
    m.update_state([[1.0], [2.0], [3.0]], [[1.0], [2.0], [4.0]])
    # SS_res = 1, SS_tot = 2
    assert float(m.result()) == pytest.approx(0.5)
    t = np.array([[1.0, 0.0], [2.0, 1.0], [4.0, 5.0]], F32)
    p = np.array([[1.5, 0.5], [2.0, 1.5], [3.0, 4.0]], F32)
    raw = 1 - ((t - p) ** 2).sum(0) / ((t - t.mean(0)) ** 2).sum(0)
    m = M.R2Score(class_aggregation=None)
    m.update_state(t, p)
    np.testing.assert_allclose(_np(m.result()), raw, rtol=1e-5)
    m = M.R2Score(num_regressors=1)
    m.update_state(t, p)
    n = 6  # Keras counts every element of y_true
    assert float(m.result()) == pytest.approx(1 - (1 - raw.mean()) * (n - 1) / (n - 1 - 1),
                                              rel=1e-5)
    with pytest.raises(ValueError, match="R2Score expects 2D inputs"):
        M.R2Score().update_state(np.ones((2, 2, 2)), np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="Invalid value for argument `class_aggregation`"):
        M.R2Score(class_aggregation="median")
    m = M.R2Score(num_regressors=5)
    m.update_state([[1.0], [2.0]], [[1.0], [3.0]])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        m.result()
    assert any("More independent predictors" in str(w.message) for w in rec)


def test_f1_and_fbeta() -> None:
    m = M.F1Score(threshold=0.5)
    m.update_state([[1, 0], [0, 1]], [[0.9, 0.2], [0.6, 0.7]])
    # class 0: tp 1, fp 1, fn 0 -> p 0.5, r 1 -> f1 2/3; class 1: f1 1
    np.testing.assert_allclose(_np(m.result()), [2 / 3, 1.0], rtol=1e-5)
    m = M.F1Score(average="macro")  # row maximum counts as positive
    m.update_state([[1, 0], [0, 1]], [[0.9, 0.2], [0.6, 0.4]])
    # class 0: tp 1 fp 1 -> 2/3; class 1: tp 0 -> 0
    assert float(m.result()) == pytest.approx(1 / 3, rel=1e-5)
    m = M.FBetaScore(beta=2.0, threshold=0.5)
    m.update_state([[1, 0], [0, 1]], [[0.9, 0.2], [0.6, 0.4]])
    # class 0: p 0.5, r 1 -> 5 * 0.5 / (4 * 0.5 + 1) = 0.8333
    np.testing.assert_allclose(_np(m.result()), [5 * 0.5 / 3, 0.0], rtol=1e-5)
    assert "beta" not in M.F1Score().get_config()
    assert M.FBetaScore(beta=0.5).get_config()["beta"] == 0.5
    with pytest.raises(ValueError, match="It should be a Python float"):
        M.FBetaScore(beta=1)
    with pytest.raises(ValueError, match="Invalid `average` argument value"):
        M.F1Score(average="samples")
    with pytest.raises(ValueError, match="FBetaScore expects 2D inputs"):
        M.F1Score().update_state(np.ones(3), np.ones(3))


def test_metric_get_names() -> None:
    assert isinstance(M.get("r2_score"), M.R2Score)
    assert isinstance(M.get("KLDivergence"), M.KLDivergence)
    assert isinstance(M.get("true_positives"), M.TruePositives)
    with pytest.raises(ValueError, match="Could not interpret metric identifier: kld"):
        M.get("kld")


# ---------------------------------------------------------------------------- activations
def test_new_activations() -> None:
    x = tf.constant([-4.0, -1.0, 0.0, 0.5, 2.0, 8.0])
    xn = _np(x).astype(np.float64)
    sig = 1 / (1 + np.exp(-xn))
    cases = {
        "relu6": np.clip(xn, 0, 6),
        "hard_sigmoid": np.clip(xn + 3, 0, 6) / 6,
        "hard_silu": xn * np.clip(xn + 3, 0, 6) / 6,
        "hard_swish": xn * np.clip(xn + 3, 0, 6) / 6,
        "mish": xn * np.tanh(np.log1p(np.exp(xn))),
        "softsign": xn / (np.abs(xn) + 1),
        "exponential": np.exp(xn),
        "log_sigmoid": np.log(sig),
        "celu": np.maximum(xn, 0) + np.expm1(np.minimum(xn, 0)),
        "hard_tanh": np.clip(xn, -1, 1),
    }
    for name, want in cases.items():
        got = getattr(A, name)(x)
        assert got.dtype == tf.float32, name
        np.testing.assert_allclose(_np(got), want, rtol=1e-5, atol=1e-6, err_msg=name)
        assert A.get(name) is getattr(A, name)
    np.testing.assert_allclose(_np(A.celu(x, alpha=2.0)),
                               np.maximum(xn, 0) + 2 * np.expm1(np.minimum(xn, 0) / 2),
                               rtol=1e-5)
    np.testing.assert_array_equal(_np(A.threshold(x, 0.5, -9.0)),
                                  np.where(xn > 0.5, xn, -9.0))
    np.testing.assert_allclose(_np(A.elu(x, alpha=0.5)),
                               np.where(xn > 0, xn, 0.5 * np.expm1(xn)), rtol=1e-5)


def test_glu() -> None:
    x = tf.constant([[1.0, 2.0, 0.0, 1.0]])
    np.testing.assert_allclose(_np(A.glu(x)), [[0.5, 2 / (1 + np.exp(-1))]], rtol=1e-6)
    with pytest.raises(ValueError, match=r"axis size must be divisible by 2. Received: "
                                         r"x.shape=\(1, 3\) with axis=-1"):
        A.glu(tf.ones([1, 3]))


def test_activation_layer_by_new_name() -> None:
    y = keras.layers.Dense(2, activation="mish", kernel_initializer="ones")(tf.ones([1, 2]))
    assert float(y[0, 0]) == pytest.approx(2 * np.tanh(np.log1p(np.exp(2.0))), rel=1e-6)


# ---------------------------------------------------------------------------- layers
def test_rescaling_identity_repeat() -> None:
    y = keras.layers.Rescaling(1 / 255)(tf.constant([[0, 51, 255]]))
    assert y.dtype == tf.float32
    np.testing.assert_allclose(_np(y), [[0.0, 0.2, 1.0]], rtol=1e-6)
    assert keras.layers.Rescaling(2.0, 1.0).get_config()["offset"] == 1.0
    x = tf.constant([[1.0, 2.0]])
    assert keras.layers.Identity()(x) is x
    r = keras.layers.RepeatVector(3)(x)
    np.testing.assert_array_equal(_np(r), [[[1, 2]] * 3])
    with pytest.raises(TypeError, match="Expected an integer value for `n`"):
        keras.layers.RepeatVector(2.0)  # type: ignore[arg-type]


def test_elu_prelu_layers() -> None:
    x = tf.constant([[-1.0, 2.0]])
    np.testing.assert_allclose(_np(keras.layers.ELU(alpha=0.5)(x)),
                               [[0.5 * np.expm1(-1.0), 2.0]], rtol=1e-6)
    p = keras.layers.PReLU()
    np.testing.assert_array_equal(_np(p(x)), [[0.0, 2.0]])  # alpha starts at zeros
    assert [tuple(w.shape) for w in p.weights] == [(2,)] and p.weights[0].name == "alpha"
    p.set_weights([np.array([0.25, 0.5], F32)])
    np.testing.assert_array_equal(_np(p(x)), [[-0.25, 2.0]])
    shared = keras.layers.PReLU(shared_axes=[1])
    shared(tf.ones([2, 5, 3]))
    assert tuple(shared.weights[0].shape) == (1, 3)
    with tf.GradientTape() as tape:
        out = tf.reduce_sum(p(tf.constant([[-2.0, -4.0]])))
    np.testing.assert_array_equal(_np(tape.gradient(out, p.weights[0])), [-2.0, -4.0])


def test_time_distributed_dense() -> None:
    dense = keras.layers.Dense(2, kernel_initializer="ones", bias_initializer="zeros")
    td = keras.layers.TimeDistributed(dense)
    x = np.arange(24, dtype=F32).reshape(2, 3, 4)
    y = td(tf.constant(x))
    assert y.shape == (2, 3, 2) and tuple(dense.kernel.shape) == (4, 2)
    np.testing.assert_array_equal(_np(y)[..., 0], x.sum(-1))
    assert len(td.trainable_weights) == 2


def test_masking() -> None:
    x = np.array([[[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]]], F32)
    layer = keras.layers.Masking()
    np.testing.assert_array_equal(_np(layer(x)), x)
    np.testing.assert_array_equal(_np(layer.compute_mask(x)), [[False, True, False]])
    ones = np.array([[[1.0, 1.0], [1.0, 0.0]]], F32)  # a step is masked when all features match
    np.testing.assert_array_equal(_np(keras.layers.Masking(1.0)(ones)),
                                  [[[0.0, 0.0], [1.0, 0.0]]])


def test_cropping1d() -> None:
    x = tf.reshape(tf.range(10.0), [1, 5, 2])
    np.testing.assert_array_equal(_np(keras.layers.Cropping1D((1, 2))(x)), [[[2, 3], [4, 5]]])
    assert keras.layers.Cropping1D(1)(x).shape == (1, 3, 2)
    with pytest.raises(ValueError, match="must be smaller than the input length"):
        keras.layers.Cropping1D((3, 2))(x)


def test_center_crop_and_resizing() -> None:
    x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    np.testing.assert_array_equal(_np(keras.layers.CenterCrop(2, 2)(x))[0, :, :, 0],
                                  [[5, 6], [9, 10]])
    assert keras.layers.CenterCrop(2, 3)(tf.ones([4, 4, 2])).shape == (2, 3, 2)
    # upsampling a 2x2 image bilinearly with half-pixel centres
    img = tf.constant([[[[0.0], [1.0]], [[2.0], [3.0]]]])
    up = _np(keras.layers.Resizing(4, 4)(img))[0, :, :, 0]
    np.testing.assert_allclose(up[0], [0.0, 0.25, 0.75, 1.0])
    np.testing.assert_allclose(up[:, 0], [0.0, 0.5, 1.5, 2.0])
    near = _np(keras.layers.Resizing(4, 4, interpolation="nearest")(img))[0, :, :, 0]
    np.testing.assert_array_equal(near, [[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3],
                                         [2, 2, 3, 3]])
    # a smaller image: crop to the aspect ratio, then resize
    assert keras.layers.CenterCrop(6, 6)(tf.ones([1, 4, 2, 3])).shape == (1, 6, 6, 3)
    cfg = keras.layers.Resizing(3, 5, crop_to_aspect_ratio=True).get_config()
    assert (cfg["height"], cfg["width"], cfg["crop_to_aspect_ratio"]) == (3, 5, True)


def test_normalization_adapt() -> None:
    data = np.array([[1.0, 10.0], [3.0, 30.0], [5.0, 50.0]], F32)
    layer = keras.layers.Normalization()
    layer.adapt(data)
    std = data.std(0)
    np.testing.assert_allclose(_np(layer(tf.constant([[3.0, 30.0], [5.0, 50.0]]))),
                               [[0.0, 0.0], (data[2] - data.mean(0)) / std], rtol=1e-5)
    assert [w.name for w in layer.weights] == ["mean", "variance", "count"]
    assert layer.trainable_weights == []
    batched = keras.layers.Normalization()
    batched.adapt([data[:1], data[1:]])  # batches combined as Keras does
    np.testing.assert_allclose(_np(batched.weights[0]), data.mean(0), rtol=1e-6)
    np.testing.assert_allclose(_np(batched.weights[1]), data.var(0), rtol=1e-5)
    given = keras.layers.Normalization(mean=2.0, variance=4.0)
    np.testing.assert_allclose(_np(given(tf.constant([[4.0, 0.0]]))), [[1.0, -1.0]])
    inv = keras.layers.Normalization(mean=2.0, variance=4.0, invert=True)
    np.testing.assert_allclose(_np(inv(tf.constant([[1.0, -1.0]]))), [[4.0, 0.0]])
    with pytest.raises(ValueError, match="both `mean` and `variance` must be set"):
        keras.layers.Normalization(mean=1.0)


def test_discretization() -> None:
    layer = keras.layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0])
    y = layer(tf.constant([[-1.5, 1.0, 3.4, 0.5]]))
    assert y.dtype == tf.int32
    np.testing.assert_array_equal(_np(y), [[0, 2, 3, 1]])
    oh = keras.layers.Discretization(bin_boundaries=[0.0], output_mode="one_hot")
    np.testing.assert_array_equal(_np(oh(tf.constant([-1.0, 1.0]))), [[1, 0], [0, 1]])
    q = keras.layers.Discretization(num_bins=4, epsilon=0.01)
    q.adapt(np.arange(100, dtype=F32))
    assert q.bin_boundaries is not None and len(q.bin_boundaries) == 3
    np.testing.assert_allclose(q.bin_boundaries, [24.0, 49.0, 74.0], atol=1.0)
    with pytest.raises(ValueError, match="You need to set either `num_bins` or "
                                         "`bin_boundaries`"):
        keras.layers.Discretization()


def test_category_encoding() -> None:
    x = tf.constant([[0, 1], [1, 3]])
    np.testing.assert_array_equal(_np(keras.layers.CategoryEncoding(4)(x)),
                                  [[1, 1, 0, 0], [0, 1, 0, 1]])
    cnt = keras.layers.CategoryEncoding(4, output_mode="count")
    np.testing.assert_array_equal(_np(cnt(tf.constant([[1, 1, 2]]))), [[0, 2, 1, 0]])
    oh = keras.layers.CategoryEncoding(3, output_mode="one_hot")
    np.testing.assert_array_equal(_np(oh(tf.constant([2, 0]))), [[0, 0, 1], [1, 0, 0]])
    w = _np(cnt(tf.constant([[1, 1, 2]]), count_weights=tf.constant([[0.5, 0.25, 2.0]])))
    np.testing.assert_array_equal(w, [[0, 0.75, 2.0, 0]])
    with pytest.raises(ValueError, match="num_tokens must be set"):
        keras.layers.CategoryEncoding()


def test_dot_and_unit_normalization() -> None:
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    y = tf.constant([[5.0, 6.0], [7.0, 8.0]])
    np.testing.assert_array_equal(_np(keras.layers.Dot(axes=1)([x, y])), [[17.0], [53.0]])
    cos = _np(keras.layers.Dot(axes=-1, normalize=True)([x, y]))
    np.testing.assert_allclose(cos[:, 0], [17 / np.sqrt(5 * 61), 53 / np.sqrt(25 * 113)],
                               rtol=1e-6)
    a = tf.ones([2, 3, 4])
    b = tf.ones([2, 5, 4])
    assert keras.layers.Dot(axes=(2, 2))([a, b]).shape == (2, 3, 5)
    with pytest.raises(ValueError, match="Cannot do batch_dot on inputs with shapes"):
        keras.layers.Dot(axes=1)([a, b])
    u = keras.layers.UnitNormalization()(tf.constant([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(_np(u), [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)
    with pytest.raises(TypeError, match="Invalid value for `axis` argument"):
        keras.layers.UnitNormalization(axis="x")


def test_new_layers_in_a_sequential_model() -> None:
    model = keras.Sequential([
        keras.Input((6, 6, 1)),
        keras.layers.Rescaling(1 / 255),
        keras.layers.CenterCrop(4, 4),
        keras.layers.Flatten(),
        keras.layers.Dense(3, activation="hard_swish"),
        keras.layers.PReLU(),
        keras.layers.Dense(1),
    ])
    x = np.random.default_rng(0).uniform(0, 255, (8, 6, 6, 1)).astype(F32)
    model.compile(optimizer="sgd", loss="log_cosh")
    hist = model.fit(x, np.zeros((8, 1), F32), epochs=2, verbose=0)
    assert len(hist.history["loss"]) == 2 and np.isfinite(hist.history["loss"][-1])


def test_random_flip() -> None:
    x = tf.reshape(tf.range(24.0), [4, 2, 3, 1])
    xn = _np(x)
    layer = keras.layers.RandomFlip("horizontal", seed=7)
    assert np.array_equal(_np(layer(x, training=False)), xn)
    state = _np(layer.generator.state).tolist()
    y = _np(layer(x))  # called on its own, the layer trains (Keras's default)
    assert _np(layer.generator.state).tolist() == [state[0], state[1] + 1]
    for img, out in zip(xn, y):  # each image is either unchanged or mirrored left-right
        assert np.array_equal(out, img) or np.array_equal(out, img[:, ::-1])
    both = _np(keras.layers.RandomFlip(seed=7)(x))
    for img, out in zip(xn, both):
        assert np.array_equal(out, img) or np.array_equal(out, img[::-1, ::-1])
    # the same seed gives the same flips; a Sequential's build pass draws nothing
    again = _np(keras.layers.RandomFlip("horizontal", seed=7)(x))
    assert np.array_equal(again, y)
    model = keras.Sequential([keras.Input((2, 3, 1)), keras.layers.RandomFlip("horizontal",
                                                                              seed=7)])
    assert np.array_equal(_np(model(x)), y)
    assert np.array_equal(model.predict(xn, verbose=0), xn)
    cfg = layer.get_config()
    assert (cfg["mode"], cfg["seed"], cfg["data_format"]) == ("horizontal", 7, "channels_last")
