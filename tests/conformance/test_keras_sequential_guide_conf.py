"""Conformance: the Sequential-model guide's feature-extraction cells (``model.inputs``,
``layer.output``, ``get_layer``) give real Keras 3's shapes, names, values and errors.
Skipped without TensorFlow."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _guide(tf: Any) -> list[Any]:
    keras, layers = tf.keras, tf.keras.layers
    keras.utils.set_random_seed(0)
    initial = keras.Sequential([keras.Input(shape=(20, 20, 3)),
                                layers.Conv2D(8, 5, strides=2, activation="relu"),
                                layers.Conv2D(8, 3, activation="relu", name="my_intermediate"),
                                layers.Conv2D(8, 3, activation="relu")])
    out: list[Any] = [[tuple(t.shape) for t in initial.inputs],
                      [tuple(t.shape) for t in initial.outputs]]
    extractor = keras.Model(inputs=initial.inputs,
                            outputs=[layer.output for layer in initial.layers])
    x = tf.ones((1, 20, 20, 3))
    out.append([f.numpy() for f in extractor(x)])
    mid = keras.Model(inputs=initial.inputs,
                      outputs=initial.get_layer(name="my_intermediate").output)
    out.append(mid(x).numpy())
    out.append(initial.get_layer(index=1).name)
    for bad in (lambda: initial.get_layer("nope"), lambda: initial.get_layer(index=9),
                lambda: initial.get_layer(), lambda: keras.Sequential([layers.Dense(2)]).inputs,
                lambda: layers.Dense(2, name="never").output):
        try:
            bad()
        except (ValueError, AttributeError) as e:
            # (auto-named layers count per process: compare names without the counters)
            out.append((type(e).__name__, re.sub(r"_\d+", "", str(e).split(". Did you mean")[0])))
    return out


def test_feature_extraction_cells_match_keras(rtf: Any) -> None:
    ours, theirs = _guide(tg_tf), _guide(rtf)
    assert ours[:2] == theirs[:2]
    for a, b in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-5, atol=1e-6)
    assert ours[4:] == theirs[4:]
