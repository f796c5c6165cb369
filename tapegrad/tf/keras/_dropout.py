"""``keras.layers.Dropout``: Keras 3's dropout layer, with Keras's masks.

The layer owns a :class:`~tapegrad.tf.keras.random.SeedGenerator` (made from
``seed``, or from Python's ``random`` without one) and, when called with
``training=True``, draws each mask with ``tf.nn.experimental.stateless_dropout``
from the generator's next seed, exactly as Keras 3 on TensorFlow does.

>>> import tapegrad.tf as tf
>>> layer = tf.keras.layers.Dropout(0.5, seed=1)
>>> layer(tf.ones([4])).numpy()             # inference: the identity
array([1., 1., 1., 1.], dtype=float32)
>>> layer(tf.ones([4]), training=True).numpy()
array([2., 0., 2., 0.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from ..._core.errors import hinted, with_hint
from . import random as _kr
from .layers import Layer

__all__ = ["Dropout"]


class Dropout(Layer):
    """Zero inputs with probability ``rate`` in training, scaling the rest by ``1 / (1 - rate)``.

    Parameters
    ----------
    rate : float
        The fraction of inputs to drop, in ``[0, 1]``.
    noise_shape : tuple, optional
        The mask's shape (``None`` entries take the input's size).
    seed : int, optional
        Seed of the layer's ``SeedGenerator``.
    """

    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise hinted(ValueError(with_hint(
                "Invalid value received for argument `rate`. Expected a float value between 0 "
                f"and 1. Received: rate={rate}", "0 <= rate <= 1")))
        self.rate = rate
        self.seed = seed
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        if rate > 0:
            self.seed_generator = _kr.SeedGenerator(seed)
        self.supports_masking = True
        self.__dict__["built"] = True   # no weights: built at init, as Keras's

    def build(self, input_shape: Any = None) -> None:
        pass

    def call(self, inputs: Any, training: bool = False) -> Any:
        if training and self.rate > 0:
            return _kr.dropout(inputs, self.rate, noise_shape=self.noise_shape,
                               seed=self.seed_generator)
        return inputs

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "rate": self.rate, "seed": self.seed,
                "noise_shape": self.noise_shape}
