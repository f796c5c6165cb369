"""``tf.keras``: a small, real Keras over ``tapegrad.tf``.

Layers (``Dense``), models (``Sequential``, subclassed ``Model``), losses
(``MeanSquaredError``, ``SparseCategoricalCrossentropy`` ...) and optimizers
(``SGD``, ``Adam``) with Keras 3's semantics, defaults and messages; the
optimizer arithmetic is the shared core of :mod:`tapegrad.optim`.

>>> import tapegrad.tf as tf
>>> model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
>>> opt = tf.keras.optimizers.SGD(learning_rate=0.1)
>>> x = tf.constant([[1.0], [2.0]]); y = tf.constant([[2.0], [4.0]])
>>> with tf.GradientTape() as tape:
...     loss = tf.keras.losses.MeanSquaredError()(y, model(x))
>>> grads = tape.gradient(loss, model.trainable_variables)
>>> _ = opt.apply_gradients(zip(grads, model.trainable_variables))
"""

from __future__ import annotations

from . import (
    activations,
    callbacks,
    constraints,
    initializers,
    layers,
    losses,
    metrics,
    mixed_precision,
    models,
    ops,
    optimizers,
    preprocessing,
    random,
    regularizers,
    saving,
    utils,
)
from . import variables as backend
from .functional import Input
from .layers import Layer
from .models import Model, Sequential
from .variables import KerasVariable as Variable

__all__ = ["activations", "initializers", "layers", "losses", "models", "optimizers",
           "callbacks", "metrics", "random", "saving", "utils", "regularizers", "constraints",
           "ops", "mixed_precision", "preprocessing",
           "backend", "Input", "Layer", "Model", "Sequential", "Variable"]
