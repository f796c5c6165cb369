"""Keras 3's noise layers: ``GaussianNoise``, ``GaussianDropout``, ``AlphaDropout``.

Each layer owns a :class:`~tapegrad.tf.keras.random.SeedGenerator` (made
from ``seed``, or from Python's ``random``, when the rate is positive) and,
when called with ``training=True``, draws its noise from the generator's next
seed with ``keras.random``, exactly as Keras 3 on TensorFlow does; otherwise
the input passes through.

>>> import tapegrad.tf as tf
>>> layer = tf.keras.layers.GaussianNoise(0.1, seed=1)
>>> layer(tf.ones([2])).numpy()
array([1., 1.], dtype=float32)
>>> layer(tf.ones([2]), training=True).shape
TensorShape([2])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import ops
from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from .._tensor import convert, tft
from . import random as _kr
from .layers import Layer

__all__ = ["GaussianNoise", "GaussianDropout", "AlphaDropout"]


def _check(name: str, value: float) -> float:
    if not 0 <= value <= 1:
        raise hinted(ValueError(with_hint(
            f"Invalid value received for argument `{name}`. Expected a float value between 0 "
            f"and 1. Received: {name}={value}", f"0 <= {name} <= 1")))
    return value


class _Noise(Layer):
    _arg = "rate"
    rate: float
    stddev: float

    def __init__(self, value: float | None = None, seed: int | None = None,
                 **kwargs: Any) -> None:
        if value is None:  # from a config: the argument by its own name (rate, stddev)
            value = kwargs.pop(self._arg)
        super().__init__(**kwargs)
        setattr(self, self._arg, _check(self._arg, value))
        self.seed = seed
        if value > 0:
            self.seed_generator = _kr.SeedGenerator(seed)
        self.supports_masking = True
        self.__dict__["built"] = True   # no weights: built at init, as Keras's

    def build(self, input_shape: Any = None) -> None:
        pass

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), self._arg: getattr(self, self._arg), "seed": self.seed}


def _scalar(v: float, x: Tensor) -> Tensor:
    return tft(np.asarray(v, dtype=x._data.dtype))


class GaussianNoise(_Noise):
    """Add zero-mean normal noise of ``stddev`` in training (a regulariser)."""

    _arg = "stddev"

    def call(self, inputs: Any, training: bool = False) -> Any:
        x = convert(inputs)
        if training and self.stddev > 0:
            noise = _kr.normal(tuple(x._data.shape), mean=0.0, stddev=self.stddev,
                               dtype=x._data.dtype.name, seed=self.seed_generator)
            return ops.add(x, noise)
        return x


class GaussianDropout(_Noise):
    """Multiply by normal noise of mean 1 and ``sqrt(rate / (1 - rate))`` spread in training."""

    def call(self, inputs: Any, training: bool = False) -> Any:
        x = convert(inputs)
        if training and self.rate > 0:
            stddev = math.sqrt(self.rate / (1.0 - self.rate))
            noise = _kr.normal(tuple(x._data.shape), mean=1.0, stddev=stddev,
                               dtype=x._data.dtype.name, seed=self.seed_generator)
            return ops.multiply(x, noise)
        return x


class AlphaDropout(_Noise):
    """Dropout that keeps the mean and variance of SELU activations (``x -> a * x + b``)."""

    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(rate, seed=seed, **kwargs)
        self.noise_shape = noise_shape

    def call(self, inputs: Any, training: bool = False) -> Any:
        x = convert(inputs)
        if not (training and self.rate > 0):
            return x
        if self.noise_shape is not None and any(s is None for s in self.noise_shape):
            # Keras 3.15's AlphaDropout hands the None on to the uniform draw, which fails
            raise hinted(ValueError(with_hint(
                "Attempt to convert a value (None) with an unsupported type (<class "
                "'NoneType'>) to a Tensor.",
                "Keras's AlphaDropout needs a noise_shape without None: give every size")))
        shape = tuple(x._data.shape) if self.noise_shape is None else tuple(
            int(s) for s in self.noise_shape)
        alpha = 1.6732632423543772848170429916717
        scale = 1.0507009873554804934193349852946
        alpha_p = -alpha * scale
        keep = (np.asarray(_kr.uniform(shape, seed=self.seed_generator)._data)
                >= np.float32(self.rate)).astype(x._data.dtype)
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        k = tft(keep)
        dropped = ops.multiply(_scalar(alpha_p, x), tft(np.asarray(1 - keep, dtype=keep.dtype)))
        y = ops.add(ops.multiply(x, k), dropped)
        return ops.add(ops.multiply(_scalar(a, x), y), _scalar(b, x))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "noise_shape": self.noise_shape}
