"""Conformance: the order of a functional model's layers (``model.layers``, its weights,
the rows of ``summary()`` and the ``.keras`` file's layer groups) is Keras 3's: by depth
from the outputs, then by the order a walk from the outputs (dict outputs by sorted key)
first meets them.  Skipped without TensorFlow."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf():  # type: ignore[no-untyped-def]
    return real_tf()


def _models(tf: Any) -> list[Any]:
    k = tf.keras
    k.utils.set_random_seed(3)
    t, b = k.Input(shape=(5,), name="title"), k.Input(shape=(6,), name="body")
    g = k.Input(shape=(12,), name="tags")
    tf_ = k.layers.Dense(16, name="tf")(k.layers.Dense(8, name="te")(t))
    bf = k.layers.Dense(8, name="bf")(k.layers.Dense(8, name="be")(b))
    x = k.layers.concatenate([tf_, bf, g], name="cat")
    m1 = k.Model([t, b, g], {"priority": k.layers.Dense(1, name="priority")(x),
                             "department": k.layers.Dense(4, name="department")(x)})
    a = k.Input((3,), name="a")
    h = k.layers.Dense(4, name="h")(a)
    s1 = k.layers.Dense(2, name="s1")
    o1 = s1(h)
    o2 = s1(k.layers.Dense(4, name="h2")(h))
    c = k.layers.Add(name="add")([o1, k.layers.Dense(2, name="z")(o2)])
    m2 = k.Model(a, [c, o1])
    u = k.Input((2,), name="unused")
    m3 = k.Model([a, u], h)
    p, q = k.Input((3,), name="p"), k.Input((3,), name="q")
    m4 = k.Model([p, q], k.layers.Dense(1, name="d")(
        k.layers.Add(name="pq")([p, k.layers.Dense(3, name="e")(q)])))
    # two same-shaped Dense layers on either branch: their .keras groups must not swap
    r = k.Input((4,), name="r")
    left = k.layers.Dense(4, name="left")(k.layers.Dense(4, name="l0")(r))
    right = k.layers.Dense(4, name="right")(r)
    m5 = k.Model(r, {"z": left, "a": right})
    return [m1, m2, m3, m4, m5]


def _describe(m: Any) -> tuple[list[str], list[str], str]:
    lines: list[str] = []
    m.summary(print_fn=lambda s, *a, **kw: lines.append(s))
    text = re.sub(r'Model: "[^"]*"', "Model", "".join(lines))
    return [la.name for la in m.layers], [w.path for w in m.weights], text


def test_layers_weights_and_summary_in_keras_order(rtf: Any) -> None:
    for ours, theirs in zip(_models(tg_tf), _models(rtf)):
        a, b = _describe(ours), _describe(theirs)
        assert a[0] == b[0]
        assert [re.sub(r"^[a-z_0-9]*functional[_0-9]*/", "", x) for x in a[1]] == \
            [re.sub(r"^[a-z_0-9]*functional[_0-9]*/", "", x) for x in b[1]]
        assert a[2] == b[2]


def test_keras_files_of_branching_models_load_both_ways(rtf: Any, tmp_path: Any) -> None:
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    for src, dst in ((tg_tf, rtf), (rtf, tg_tf)):
        m = _models(src)[4]
        path = str(tmp_path / f"m_{src is tg_tf}.keras")
        m.save(path)
        back = dst.keras.models.load_model(path)
        want, got = m(x), back(x)
        for key in ("a", "z"):
            np.testing.assert_allclose(np.asarray(got[key]), np.asarray(want[key]), rtol=1e-6)


def _text_model(tf: Any) -> tuple[str, Any, list[Any], list[float]]:
    """The Keras text-classification guide's model on variable-length sequences."""
    k = tf.keras
    k.utils.set_random_seed(0)
    inputs = k.Input(shape=(None,), dtype="int64")
    x = k.layers.Embedding(200, 16)(inputs)
    x = k.layers.Dropout(0.5)(x)
    c1 = k.layers.Conv1D(16, 7, padding="valid", activation="relu", strides=3)(x)
    c2 = k.layers.Conv1D(16, 7, padding="same", activation="relu", strides=2)(c1)
    x = k.layers.GlobalMaxPooling1D()(c2)
    out = k.layers.Dense(1, activation="sigmoid", name="predictions")(
        k.layers.Dense(16, activation="relu")(x))
    m = k.Model(inputs, out)
    m.compile(loss="binary_crossentropy", optimizer="adam")
    lines: list[str] = []
    m.summary(print_fn=lambda s, *a, **kw: lines.append(s))
    xs = np.random.default_rng(0).integers(0, 200, (64, 40))
    ys = (xs.mean(1) > 100).astype("float32")
    h = m.fit(xs, ys, epochs=2, batch_size=16, verbose=0, shuffle=False)
    text = re.sub(r'Model: "[^"]*"', "Model", "".join(lines))
    return text, m.output_shape, [tuple(c1.shape), tuple(c2.shape)], h.history["loss"]


def test_variable_length_sequences_build_with_unknown_sizes(rtf: Any) -> None:
    ours, theirs = _text_model(tg_tf), _text_model(rtf)
    # automatic names count per process (dropout_3 ...): compare them unnumbered, and the
    # padding that depends on their length with them
    norm = [re.sub(r" +", " ", re.sub(
        r"\b(input_layer|embedding|dropout|conv1d|dense|global_max_pooling1d)(_\d+)?\b",
        r"\1", t)) for t in (ours[0], theirs[0])]
    assert norm[0] == norm[1]
    assert ours[1:3] == theirs[1:3]
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-4)
