"""Keras 3's random image augmentation layers ``RandomContrast``, ``RandomBrightness``
and ``RandomCrop``: the draws come from the layer's ``SeedGenerator`` exactly as Keras 3
draws them on TensorFlow (so a seeded layer gives Keras's numbers), and, like
``RandomFlip``, a layer called on its own trains (Keras's default ``training=True``)
while ``predict``/``training=False`` leave the images as they are."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import ops
from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from .. import _ops as tfo
from .._tensor import convert
from . import random as _kr
from .layers import SHAPE_PASS, TRAINING, Layer
from .layers_conv import _channels_last
from .layers_more import _float_input, _resize_hw

__all__ = ["RandomContrast", "RandomBrightness", "RandomCrop"]


def _training(training: Any) -> bool:
    if training is None:  # the outer call's flag, else Keras's default: True
        training = TRAINING[-1] if TRAINING else True
    return bool(training) and not SHAPE_PASS[0]


def _set_factor(layer: Layer, factor: Any, bounds: tuple[float, float]) -> tuple[float, float]:
    """Keras's ``BaseImagePreprocessingLayer._set_factor``: a number or a pair in bounds."""
    msg = ("The `factor` argument should be a number (or a list of two numbers) in the "
           f"range [{bounds[0]}, {bounds[1]}]. Received: factor={factor}")

    def bad() -> ValueError:
        return hinted(ValueError(with_hint(msg, f"pass a factor in [{bounds[0]}, "
                                                f"{bounds[1]}]")))

    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise bad()
        lower, upper = sorted(factor)
    elif isinstance(factor, (int, float)):
        if factor < bounds[0] or factor > bounds[1]:
            raise bad()
        factor = abs(factor)
        lower, upper = max(-factor, bounds[0]), factor
    else:
        raise bad()
    return lower, upper


def _factor_shape(layer: Layer, x: Tensor) -> tuple[int, ...]:
    nd = x._data.ndim
    if nd == 3:
        return (1, 1, 1)
    if nd == 4:
        return (int(x._data.shape[0]), 1, 1, 1)
    raise hinted(ValueError(with_hint(
        "Expected the input image to be rank 3 or 4. Received "
        f"inputs.shape={tuple(x._data.shape)}", "pass (h, w, c) or (batch, h, w, c)")))


class _Augment(Layer):
    def __init__(self, seed: Any = None, data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_format = "channels_last" if _channels_last(data_format) else "channels_first"
        self._last = self.data_format == "channels_last"
        self.__dict__["built"] = True  # no weights

    def build(self, input_shape: Any = None) -> None:
        pass

    def compute_output_shape(self, input_shape: Any) -> Any:
        return tuple(input_shape)


class RandomContrast(_Augment):
    """``(x - mean) * f + mean`` per image (``f`` in ``[1 - lower, 1 + upper]``; the mean
    over height and width), clipped to ``value_range``.

    >>> import tapegrad.tf as tf
    >>> layer = tf.keras.layers.RandomContrast(0.5, seed=1)
    >>> layer(tf.ones((1, 2, 2, 3)), training=False).shape
    TensorShape([1, 2, 2, 3])
    """

    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = _set_factor(self, factor, (0, 1))
        self.value_range = value_range
        self.seed = seed
        self.generator = _kr.SeedGenerator(seed)

    def call(self, inputs: Any, training: Any = None) -> Any:
        x = _float_input(self, inputs)
        shape = _factor_shape(self, x)
        if not _training(training):
            return x
        f = _kr.uniform(shape, minval=1.0 - self.factor[0], maxval=1.0 + self.factor[1],
                        seed=self.generator, dtype=self.dtype)
        h, w = (-3, -2) if self._last else (-2, -1)
        mean = tfo.reduce_mean(tfo.reduce_mean(x, axis=h, keepdims=True), axis=w,
                               keepdims=True)
        y = tfo.add(tfo.multiply(tfo.subtract(x, mean), f), mean)
        dt = x._data.dtype
        return tfo.clip_by_value(y, convert(np.asarray(self.value_range[0], dt)),
                                 convert(np.asarray(self.value_range[1], dt)))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "factor": self.factor,
                "value_range": self.value_range, "seed": self.seed,
                "data_format": self.data_format}


class RandomBrightness(_Augment):
    """Add ``delta * (value_range[1] - value_range[0])`` per image (``delta`` uniform in
    the factor's range), clipped to ``value_range``.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.RandomBrightness(0.2, seed=3)(tf.ones((1, 2, 2, 3))).shape
    TensorShape([1, 2, 2, 3])
    """

    _VALUE_RANGE_VALIDATION_ERROR = "The `value_range` argument should be a list of two numbers. "

    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = _set_factor(self, factor, (-1, 1))
        self.seed = seed
        self.generator = _kr.SeedGenerator(seed)
        if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
            raise hinted(ValueError(with_hint(
                self._VALUE_RANGE_VALIDATION_ERROR + f"Received: value_range={value_range}",
                "pass (low, high)")))
        self.value_range = sorted(value_range)

    def call(self, inputs: Any, training: Any = None) -> Any:
        x = _float_input(self, inputs)
        shape = _factor_shape(self, x)
        if not _training(training):
            return x
        delta = _kr.uniform(shape, minval=self.factor[0], maxval=self.factor[1],
                            seed=self.generator)
        delta = tfo.multiply(delta, convert(np.asarray(
            self.value_range[1] - self.value_range[0], delta._data.dtype)))
        y = tfo.add(x, tfo.cast(delta, x._data.dtype.name))
        dt = x._data.dtype
        return tfo.clip_by_value(y, convert(np.asarray(self.value_range[0], dt)),
                                 convert(np.asarray(self.value_range[1], dt)))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "factor": self.factor,
                "value_range": self.value_range, "seed": self.seed,
                "data_format": self.data_format}


class RandomCrop(_Augment):
    """A random ``height x width`` crop per batch in training (one offset for the whole
    batch, as Keras 3); images no larger than the crop are centre-cropped to its aspect
    ratio and resized.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.RandomCrop(2, 3, seed=0)(tf.ones((1, 4, 5, 1))).shape
    TensorShape([1, 2, 3, 1])
    """

    def __init__(self, height: int, width: int, seed: Any = None, data_format: Any = None,
                 name: str | None = None, **kwargs: Any) -> None:
        super().__init__(data_format=data_format, name=name, **kwargs)
        self.height = height
        self.width = width
        self.seed = seed if seed is not None else _kr.make_default_seed()
        self.generator = _kr.SeedGenerator(seed)

    def call(self, inputs: Any, training: Any = None) -> Any:
        x = _float_input(self, inputs)
        train = _training(training)
        if not train:
            return x
        nd = x._data.ndim
        hax, wax = (nd - 3, nd - 2) if self._last else (nd - 2, nd - 1)
        ih, iw = int(x._data.shape[hax]), int(x._data.shape[wax])
        if ih > self.height and iw > self.width:
            hs = int(np.asarray(_kr.uniform((), 0, maxval=float(ih - self.height + 1),
                                            seed=self.generator)._data).astype(np.int32))
            ws = int(np.asarray(_kr.uniform((), 0, maxval=float(iw - self.width + 1),
                                            seed=self.generator)._data).astype(np.int32))
        else:
            ch = max(min(ih, int(float(iw * self.height) / self.width)), 1)
            cw = max(min(iw, int(float(ih * self.width) / self.height)), 1)
            hs = int(float(ih - ch) / 2)
            ws = int(float(iw - cw) / 2)
        idx: list[Any] = [slice(None)] * nd
        idx[hax] = slice(hs, hs + self.height)
        idx[wax] = slice(ws, ws + self.width)
        y = ops.getitem(x, tuple(idx))
        if y._data.shape[hax] != self.height or y._data.shape[wax] != self.width:
            batched = y if nd == 4 else ops.expand_dims(y, 0)
            batched = _resize_hw(batched, self.height, self.width, "bilinear", self._last)
            y = batched if nd == 4 else ops.squeeze(batched, 0)
        return y

    def compute_output_shape(self, input_shape: Any) -> Any:
        shp = list(input_shape)
        nd = len(shp)
        hax, wax = (nd - 3, nd - 2) if self._last else (nd - 2, nd - 1)
        shp[hax], shp[wax] = self.height, self.width
        return tuple(shp)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "height": self.height, "width": self.width,
                "seed": self.seed, "data_format": self.data_format}
