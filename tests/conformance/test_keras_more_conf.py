"""Conformance: the Keras losses, metrics, activations and layers added for tutorial code,
against real Keras 3 (through ``tf.keras``): values, shapes, dtypes, configs, names,
weights and error messages.  Skipped without TensorFlow.

Most values are equal bit for bit; a few go through kernels tapegrad does not replay
bit-exactly (``softplus``, ``pow``, ``expm1``, ``elu``, resizing, column sums), so the
comparisons allow float32 rounding.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf():  # type: ignore[no-untyped-def]
    return real_tf()


_rng = np.random.default_rng(0)
YT = _rng.uniform(0, 1, (4, 5)).astype(np.float32)
YP = _rng.uniform(0.01, 1, (4, 5)).astype(np.float32)
YB = (_rng.uniform(size=(4, 5)) > 0.5).astype(np.float32)
ONEHOT = np.eye(5, dtype=np.float32)[[0, 2, 4, 1]]
SW = np.array([1, 0.5, 2, 0], np.float32)
RTOL = 2e-6


def _close(a: Any, b: Any, rtol: float = RTOL, atol: float = 1e-7) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------- losses
LOSS_CASES = [
    ("Huber", {}, YT, YP), ("Huber", {"delta": 0.3}, YT * 3, YP),
    ("KLDivergence", {}, YT, YP), ("CosineSimilarity", {}, YT - 0.5, YP - 0.5),
    ("Hinge", {}, YB, YP - 0.5), ("Hinge", {}, YB * 2 - 1, YP), ("Hinge", {}, YT, YP),
    ("SquaredHinge", {}, YB, YP - 0.5), ("CategoricalHinge", {}, ONEHOT, YP),
    ("LogCosh", {}, YT, YP * 3), ("Poisson", {}, YT, YP),
    ("MeanSquaredLogarithmicError", {}, YT, YP), ("MeanAbsolutePercentageError", {}, YT, YP),
    ("BinaryFocalCrossentropy", {}, YB, YP),
    ("BinaryFocalCrossentropy", {"apply_class_balancing": True, "gamma": 3.0,
                                 "label_smoothing": 0.1}, YB, YP),
    ("BinaryFocalCrossentropy", {"from_logits": True}, YB, YP * 4 - 2),
]


@pytest.mark.parametrize("case", range(len(LOSS_CASES)))
@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "none", "sum"])
def test_loss_classes_match(rtf, case: int, reduction: str) -> None:  # type: ignore[no-untyped-def]
    name, kw, t, p = LOSS_CASES[case]
    for w in (None, SW):
        ours = getattr(tg_tf.keras.losses, name)(reduction=reduction, **kw)
        theirs = getattr(rtf.keras.losses, name)(reduction=reduction, **kw)
        _close(ours(t, p, sample_weight=w).numpy(), theirs(t, p, sample_weight=w).numpy())
        assert ours.get_config() == theirs.get_config()


# the names tf.keras (Keras 3's tf_keras namespace) has: kld/logcosh/msle/mape for the
# kl_divergence/log_cosh/... of plain ``keras``, which tapegrad also provides
LOSS_FUNCTIONS = ["huber", "kld", "cosine_similarity", "hinge", "squared_hinge",
                  "categorical_hinge", "logcosh", "poisson", "msle", "mape",
                  "binary_focal_crossentropy", "kullback_leibler_divergence"]


@pytest.mark.parametrize("name", LOSS_FUNCTIONS)
def test_loss_functions_match(rtf, name: str) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = getattr(tg_tf.keras.losses, name), getattr(rtf.keras.losses, name)
    _close(ours(YB, YP).numpy(), theirs(YB, YP).numpy())
    for t, p in ((YT[:, 0], YP[:, :1]), (YT[:, :1], YP)):  # rank and shape mismatches
        err = _error_of(lambda t=t, p=p: theirs(t, p))
        if err == "no error":
            _close(ours(t, p).numpy(), theirs(t, p).numpy())
        else:
            assert _error_of(lambda t=t, p=p: ours(t, p)) == err
    if hasattr(rtf.keras.metrics, name):
        assert getattr(tg_tf.keras.metrics, name) is ours


@pytest.mark.parametrize("alias", ["KLD", "MSLE", "MAPE"])
def test_loss_aliases(rtf, alias: str) -> None:  # type: ignore[no-untyped-def]
    _close(getattr(tg_tf.keras.losses, alias)(YT, YP).numpy(),
           getattr(rtf.keras.losses, alias)(YT, YP).numpy())


@pytest.mark.parametrize("name", ["kl_divergence", "log_cosh", "mean_squared_logarithmic_error",
                                  "mean_absolute_percentage_error"])
def test_plain_keras_names(name: str) -> None:
    keras = pytest.importorskip("keras")  # plain ``keras`` spells these out
    _close(getattr(tg_tf.keras.losses, name)(YT, YP).numpy(),
           np.asarray(getattr(keras.losses, name)(YT, YP)))
    assert getattr(tg_tf.keras.metrics, name) is getattr(tg_tf.keras.losses, name)


# ---------------------------------------------------------------------------- metrics
_mr = np.random.default_rng(1)
MT = _mr.uniform(0, 1, (6, 4)).astype(np.float32)
MP = _mr.uniform(0.01, 1, (6, 4)).astype(np.float32)
MB = (_mr.uniform(size=(6, 4)) > 0.5).astype(np.float32)
MOH = np.eye(4, dtype=np.float32)[[0, 2, 3, 1, 1, 0]]
MSW = np.array([1, 0.5, 2, 0, 1, 3], np.float32)
METRIC_CASES: list[tuple[str, dict[str, Any], list[tuple[Any, Any, Any]]]] = [
    ("TruePositives", {}, [(MB, MP, None), (MB[:3], MP[:3], MSW[:3])]),
    ("TrueNegatives", {"thresholds": [0.2, 0.7]}, [(MB, MP, None)]),
    ("FalsePositives", {"thresholds": 0.3}, [(MB, MP, MSW)]),
    ("FalseNegatives", {}, [(MB, MP, None)]),
    ("Precision", {"thresholds": [0.5]}, [(MB, MP, None)]),
    ("Recall", {"thresholds": [0.3, 0.6]}, [(MB, MP, None)]),
    ("CosineSimilarity", {}, [(MT, MP, None), (MT, MP, MSW)]),
    ("KLDivergence", {}, [(MT, MP, MSW)]), ("Hinge", {}, [(MB, MP - 0.5, None)]),
    ("SquaredHinge", {}, [(MB, MP - 0.5, MSW)]), ("CategoricalHinge", {}, [(MOH, MP, None)]),
    ("LogCoshError", {}, [(MT, MP, None)]), ("Poisson", {}, [(MT, MP, MSW)]),
    ("R2Score", {}, [(MT, MP, None), (MT, MP * 0.9, MSW)]),
    ("R2Score", {"class_aggregation": None}, [(MT, MP, None)]),
    ("R2Score", {"class_aggregation": "variance_weighted_average", "num_regressors": 2},
     [(MT, MP, MSW)]),
    ("F1Score", {}, [(MOH, MP, None)]),
    ("F1Score", {"average": "micro", "threshold": 0.5}, [(MB, MP, None)]),
    ("F1Score", {"average": "macro"}, [(MOH, MP, MSW)]),
    ("FBetaScore", {"beta": 2.0, "average": "weighted", "threshold": 0.4}, [(MB, MP, MSW)]),
]


def _run_metric(tf: Any, name: str, kw: dict[str, Any], batches: Any) -> Any:
    m = getattr(tf.keras.metrics, name)(**kw)
    for t, p, w in batches:
        m.update_state(t, p, sample_weight=w)
    return (np.asarray(m.result()), _unnumbered(m.get_config()),
            [v.path.split("/")[-1] for v in m.variables], _unnumbered_name(m.name))


def _unnumbered_name(name: str) -> str:
    """An auto-generated name without its process-wide counter (``true_positives_4``): the
    count depends on how many objects earlier tests made."""
    base, _, n = name.rpartition("_")
    return base if base and n.isdigit() else name


def _unnumbered(cfg: dict[str, Any]) -> dict[str, Any]:
    return {**cfg, "name": _unnumbered_name(str(cfg.get("name", "")))}


@pytest.mark.parametrize("case", range(len(METRIC_CASES)))
def test_metrics_match(rtf, case: int) -> None:  # type: ignore[no-untyped-def]
    name, kw, batches = METRIC_CASES[case]
    ours, theirs = _run_metric(tg_tf, name, kw, batches), _run_metric(rtf, name, kw, batches)
    _close(ours[0], theirs[0], rtol=1e-5)
    assert ours[1:] == theirs[1:]


@pytest.mark.parametrize("ident", ["kl_divergence", "hinge", "poisson", "squared_hinge",
                                   "categorical_hinge", "cosine_similarity", "r2_score",
                                   "f1_score", "true_positives", "false_negatives",
                                   "KLDivergence", "R2Score", "kld", "logcosh", "huber"])
def test_metric_get(rtf, ident: str) -> None:  # type: ignore[no-untyped-def]
    def of(tf: Any) -> str:
        try:
            return type(tf.keras.metrics.get(ident)).__name__
        except ValueError as e:
            return f"ValueError: {e}"
    assert of(tg_tf) == of(rtf)


# ---------------------------------------------------------------------------- activations
ACT_CASES = [("relu6", {}), ("hard_sigmoid", {}), ("hard_silu", {}), ("hard_swish", {}),
             ("mish", {}), ("softsign", {}), ("exponential", {}), ("log_sigmoid", {}),
             ("celu", {}), ("celu", {"alpha": 2.0}), ("glu", {}), ("glu", {"axis": 0}),
             ("hard_tanh", {}), ("threshold", {"threshold": 0.5, "default_value": -1.0}),
             ("elu", {"alpha": 0.5}), ("elu", {})]


@pytest.mark.parametrize("case", range(len(ACT_CASES)))
def test_activations_match(rtf, case: int) -> None:  # type: ignore[no-untyped-def]
    name, kw = ACT_CASES[case]
    x = np.linspace(-8, 8, 64, dtype=np.float32).reshape(4, 16)
    _close(getattr(tg_tf.keras.activations, name)(tg_tf.constant(x), **kw).numpy(),
           getattr(rtf.keras.activations, name)(rtf.constant(x), **kw).numpy(), rtol=2e-6,
           atol=1e-6)
    assert tg_tf.keras.activations.get(name).__name__ == rtf.keras.activations.get(name).__name__


def test_glu_error_matches(rtf) -> None:  # type: ignore[no-untyped-def]
    def err(tf: Any) -> str:
        try:
            tf.keras.activations.glu(np.ones((2, 3), np.float32))
        except ValueError as e:
            return str(e)
        return "no error"
    assert err(tg_tf) == err(rtf)


# ---------------------------------------------------------------------------- layers
_lr = np.random.default_rng(2)
X2 = _lr.normal(size=(4, 6)).astype(np.float32)
X3 = _lr.normal(size=(4, 5, 6)).astype(np.float32)
IMG = _lr.uniform(0, 255, size=(2, 9, 7, 3)).astype(np.float32)
XM = X3.copy()
XM[:, 1, :] = 0
XM[0, 3, :] = 0
INTS = np.array([[0, 1, 3], [2, 2, 1]])

LAYER_CASES: list[tuple[str, Any, Any, float, tuple[str, ...]]] = [
    ("Rescaling", lambda k: k.layers.Rescaling(1 / 255., offset=0.5), IMG, 0, ("scale", "offset")),
    ("RescalingInt", lambda k: k.layers.Rescaling(0.5), np.array([[1, 2]], np.int32), 0, ()),
    ("Identity", lambda k: k.layers.Identity(), X2, 0, ()),
    ("RepeatVector", lambda k: k.layers.RepeatVector(3), X2, 0, ("n",)),
    ("ELU", lambda k: k.layers.ELU(alpha=0.7), X2, 1e-6, ("alpha",)),
    ("PReLU", lambda k: k.layers.PReLU(), X3, 0, ("shared_axes",)),
    ("PReLUshared", lambda k: k.layers.PReLU(shared_axes=[1]), X3, 0, ("shared_axes",)),
    ("Masking", lambda k: k.layers.Masking(), XM, 0, ("mask_value",)),
    ("Cropping1D", lambda k: k.layers.Cropping1D((1, 2)), X3, 0, ("cropping",)),
    ("Cropping1Dend0", lambda k: k.layers.Cropping1D((2, 0)), X3, 0, ()),
    ("CenterCrop", lambda k: k.layers.CenterCrop(4, 5), IMG, 0, ("height", "width",
                                                                   "data_format")),
    ("CenterCropUp", lambda k: k.layers.CenterCrop(12, 8), IMG, 1e-4, ()),
    ("CenterCropUnbatched", lambda k: k.layers.CenterCrop(4, 4), IMG[0], 0, ()),
    ("ThresholdedReLU", lambda k: k.layers.ThresholdedReLU(theta=0.3), X3, 0, ("theta",)),
    ("UnitNormalization", lambda k: k.layers.UnitNormalization(), X3, 1e-6, ("axis",)),
    ("UnitNormalization12", lambda k: k.layers.UnitNormalization(axis=[1, 2]), X3, 1e-6,
     ("axis",)),
]
for _h, _w in [(4, 5), (18, 14), (5, 12)]:
    LAYER_CASES += [
        (f"ResizingBilinear{_h}x{_w}", lambda k, h=_h, w=_w: k.layers.Resizing(h, w), IMG, 1e-4,
         ("height", "width", "interpolation", "crop_to_aspect_ratio")),
        (f"ResizingNearest{_h}x{_w}",
         lambda k, h=_h, w=_w: k.layers.Resizing(h, w, interpolation="nearest"), IMG, 0, ()),
        (f"ResizingCrop{_h}x{_w}",
         lambda k, h=_h, w=_w: k.layers.Resizing(h, w, crop_to_aspect_ratio=True), IMG, 1e-4,
         ()),
    ]
for _mode in ["multi_hot", "count", "one_hot"]:
    for _x in (INTS, np.array([0, 3, 1]), np.array([[0], [3], [1]])):
        LAYER_CASES.append((f"CategoryEncoding-{_mode}-{_x.shape}",
                            lambda k, m=_mode: k.layers.CategoryEncoding(4, output_mode=m), _x,
                            0, ("num_tokens", "output_mode")))
for _mode in ["int", "one_hot", "multi_hot", "count"]:
    LAYER_CASES.append((f"Discretization-{_mode}", lambda k, m=_mode: k.layers.Discretization(
        bin_boundaries=[-0.5, 0.0, 0.7], output_mode=m), X2, 0, ("bin_boundaries",
                                                                 "output_mode")))


@pytest.mark.parametrize("case", [c[0] for c in LAYER_CASES])
def test_layers_match(rtf, case: str) -> None:  # type: ignore[no-untyped-def]
    _, make, x, tol, keys = next(c for c in LAYER_CASES if c[0] == case)
    lt, lr = make(tg_tf.keras), make(rtf.keras)
    yt, yr = np.asarray(lt(x)), np.asarray(lr(x))
    if tol:
        _close(yt, yr, rtol=tol, atol=tol)
    else:
        assert yt.dtype == yr.dtype and np.array_equal(yt, yr)
    ct, cr = lt.get_config(), lr.get_config()
    assert {k: ct[k] for k in keys} == {k: cr[k] for k in keys}
    assert [(w.shape, w.dtype) for w in lt.get_weights()] == \
        [(w.shape, w.dtype) for w in lr.get_weights()]


def test_prelu_and_time_distributed_with_set_weights(rtf) -> None:  # type: ignore[no-untyped-def]
    alpha = [_lr.normal(size=(1, 6)).astype(np.float32)]
    dense = [_lr.normal(size=(6, 3)).astype(np.float32), _lr.normal(size=3).astype(np.float32)]
    outs = []
    for tf in (tg_tf, rtf):
        p = tf.keras.layers.PReLU(shared_axes=[1])
        p(X3)
        p.set_weights(alpha)
        td = tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(3))
        td(X3)
        td.set_weights(dense)
        outs.append((np.asarray(p(X3)), np.asarray(td(X3))))
    assert np.array_equal(outs[0][0], outs[1][0])
    _close(outs[0][1], outs[1][1], rtol=1e-6, atol=1e-6)


def test_masking_mask_matches(rtf) -> None:  # type: ignore[no-untyped-def]
    assert np.array_equal(np.asarray(tg_tf.keras.layers.Masking().compute_mask(XM)),
                          np.asarray(rtf.keras.layers.Masking().compute_mask(XM)))


@pytest.mark.parametrize("axes,shapes,normalize", [
    (1, ((4, 6), (4, 6)), False), (-1, ((4, 5, 6), (4, 5, 6)), True),
    ((1, 2), ((4, 5, 6), (4, 6, 5)), False), ((1, 2), ((4, 6), (4, 5, 6)), False)])
def test_dot_matches(rtf, axes: Any, shapes: Any, normalize: bool) -> None:  # type: ignore[no-untyped-def]
    a, b = (_lr.normal(size=s).astype(np.float32) for s in shapes)
    ours = tg_tf.keras.layers.Dot(axes=axes, normalize=normalize)([tg_tf.constant(a),
                                                                   tg_tf.constant(b)])
    theirs = rtf.keras.layers.Dot(axes=axes, normalize=normalize)([a, b])
    _close(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


def test_discretization_adapt_matches(rtf) -> None:  # type: ignore[no-untyped-def]
    data = _lr.normal(size=(200, 3)).astype(np.float32)
    d1, d2 = tg_tf.keras.layers.Discretization(num_bins=4), \
        rtf.keras.layers.Discretization(num_bins=4)
    d1.adapt(data)
    d2.adapt(data)
    assert d1.bin_boundaries == d2.bin_boundaries
    assert _unnumbered(d1.get_config()) == _unnumbered(d2.get_config())
    assert np.array_equal(np.asarray(d1(X2)), np.asarray(d2(X2)))


@pytest.mark.parametrize("kw", [{}, {"axis": None}, {"axis": (1, 2)}])
@pytest.mark.parametrize("src", ["array", "tensor", "batches"])
def test_normalization_adapt_matches(rtf, kw: dict[str, Any], src: str) -> None:  # type: ignore[no-untyped-def]
    d = X3 * 3 + 1
    outs = []
    for tf in (tg_tf, rtf):
        n = tf.keras.layers.Normalization(**kw)
        n.adapt(d if src == "array" else tf.constant(d) if src == "tensor" else [d[:2], d[2:]])
        outs.append((np.asarray(n(X3)), [(w.shape, w.dtype) for w in n.get_weights()],
                     [w.name for w in n.weights]))
    _close(outs[0][0], outs[1][0], rtol=1e-5, atol=1e-5)
    assert outs[0][1:] == outs[1][1:]


def test_normalization_given_and_inverted(rtf) -> None:  # type: ignore[no-untyped-def]
    m = [1.0, 2, 3, 4, 5, 6]
    for kw in ({"mean": 2.0, "variance": 4.0}, {"mean": m, "variance": m, "invert": True}):
        ours = tg_tf.keras.layers.Normalization(**kw)
        theirs = rtf.keras.layers.Normalization(**kw)
        _close(np.asarray(ours(X2)), np.asarray(theirs(X2)), rtol=1e-6)
        assert ours.get_config()["mean"] == theirs.get_config()["mean"]


@pytest.mark.parametrize("mode", ["horizontal", "vertical", "horizontal_and_vertical"])
def test_random_flip_draws_match(rtf, mode: str) -> None:  # type: ignore[no-untyped-def]
    x = np.arange(5 * 4 * 3 * 2, dtype=np.float32).reshape(5, 4, 3, 2)
    outs = []
    for tf in (tg_tf, rtf):
        layer = tf.keras.layers.RandomFlip(mode, seed=7)
        got = [np.asarray(layer(x)) for _ in range(3)] + [np.asarray(layer(x, training=False))]
        got.append(np.asarray(tf.keras.layers.RandomFlip(mode, seed=11)(x[0])))
        model = tf.keras.Sequential([tf.keras.Input((4, 3, 2)),
                                     tf.keras.layers.RandomFlip(mode, seed=5)])
        got += [model.predict(x, verbose=0), np.asarray(model(x)),
                np.asarray(model(x, training=True))]
        got.append(np.asarray(tf.keras.layers.RandomFlip(mode, seed=3)(
            np.arange(6).reshape(1, 2, 3, 1))))
        outs.append((got, layer.get_config()))
    for a, b in zip(outs[0][0], outs[1][0]):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert {k: outs[0][1][k] for k in ("seed", "mode", "data_format")} == \
        {k: outs[1][1][k] for k in ("seed", "mode", "data_format")}


def test_fit_with_random_flip_augmentation(rtf) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(3).normal(size=(16, 4, 4, 1)).astype(np.float32)
    y = np.random.default_rng(4).normal(size=(16, 1)).astype(np.float32)
    hists = []
    for tf in (tg_tf, rtf):
        init = tf.keras.initializers.Constant(0.05)
        m = tf.keras.Sequential([
            tf.keras.Input((4, 4, 1)), tf.keras.layers.RandomFlip(seed=9),
            tf.keras.layers.Rescaling(0.5), tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(1, kernel_initializer=tf.keras.initializers.RandomNormal(
                seed=1), bias_initializer=init)])
        m.compile(optimizer="sgd", loss="huber")
        hists.append(m.fit(x, y, epochs=3, batch_size=4, verbose=0, shuffle=False)
                     .history["loss"])
    np.testing.assert_allclose(hists[0], hists[1], rtol=1e-5)


# ---------------------------------------------------------------------------- errors
def _error_of(fn: Any) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            return f"{type(e).__name__}: {e}"
    return "no error"


ERRORS = {
    "fbeta_average": lambda tf: tf.keras.metrics.FBetaScore(average="x"),
    "fbeta_beta_int": lambda tf: tf.keras.metrics.FBetaScore(beta=1),
    "fbeta_beta_neg": lambda tf: tf.keras.metrics.FBetaScore(beta=-1.0),
    "fbeta_threshold": lambda tf: tf.keras.metrics.FBetaScore(threshold=1.5),
    "f1_rank": lambda tf: tf.keras.metrics.F1Score().update_state(np.ones(3), np.ones(3)),
    "r2_rank": lambda tf: tf.keras.metrics.R2Score().update_state(np.ones((2, 2, 2)),
                                                                  np.ones((2, 2, 2))),
    "r2_aggregation": lambda tf: tf.keras.metrics.R2Score(class_aggregation="x"),
    "repeat_vector_n": lambda tf: tf.keras.layers.RepeatVector(0),
    "category_encoding_tokens": lambda tf: tf.keras.layers.CategoryEncoding(),
    "category_encoding_mode": lambda tf: tf.keras.layers.CategoryEncoding(3, output_mode="x"),
    "discretization_none": lambda tf: tf.keras.layers.Discretization(),
    "discretization_both": lambda tf: tf.keras.layers.Discretization(bin_boundaries=[0.0],
                                                                     num_bins=2),
    "normalization_mean_only": lambda tf: tf.keras.layers.Normalization(mean=1.0),
    "dot_axes_len": lambda tf: tf.keras.layers.Dot(axes=[1, 2, 3]),
    "unit_norm_axis": lambda tf: tf.keras.layers.UnitNormalization(axis="x"),
    "loss_get": lambda tf: tf.keras.losses.get("logcosh"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match(rtf, name: str) -> None:  # type: ignore[no-untyped-def]
    assert _error_of(lambda: ERRORS[name](tg_tf)).split("\n")[0] == \
        _error_of(lambda: ERRORS[name](rtf)).split("\n")[0]


# ---------------------------------------------------------------------------- training
def _fit_history(tf: Any, loss: str) -> dict[str, float]:
    x = np.random.default_rng(0).normal(size=(32, 4)).astype(np.float32)
    y = (x.sum(1, keepdims=True) > 0).astype(np.float32)
    init = tf.keras.initializers.Constant(0.1)
    m = tf.keras.Sequential([
        tf.keras.Input((4,)),
        tf.keras.layers.Dense(8, activation="mish", kernel_initializer=init),
        tf.keras.layers.Dense(1, activation="sigmoid", kernel_initializer=init)])
    m.compile(optimizer="sgd", loss=loss, metrics=["kl_divergence", "hinge", "poisson",
                                                   "squared_hinge", "cosine_similarity",
                                                   "r2_score"])
    h = m.fit(x, y, epochs=2, batch_size=8, verbose=0, shuffle=False)
    return {k: float(np.asarray(v[-1])) for k, v in h.history.items()}


@pytest.mark.parametrize("loss", ["huber", "log_cosh", "kld", "poisson", "hinge",
                                  "binary_focal_crossentropy", "msle", "squared_hinge"])
def test_fit_with_new_loss_and_metric_names(rtf, loss: str) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = _fit_history(tg_tf, loss), _fit_history(rtf, loss)
    assert sorted(ours) == sorted(theirs)
    for k in theirs:
        assert ours[k] == pytest.approx(theirs[k], rel=1e-4, abs=1e-5), k
