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

__all__ = ["RandomContrast", "RandomBrightness", "RandomCrop", "RandomTranslation",
           "RandomRotation", "RandomZoom"]


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


# ----------------------------------------------------------------------------- affine
def _map_coord(c: np.ndarray, n: int, mode: str) -> np.ndarray:
    """TensorFlow's ``MapCoordinate`` (ImageProjectiveTransformV3) in float32."""
    c = c.astype(np.float32, copy=True)
    if mode == "constant":
        return c
    if mode == "nearest":
        return np.clip(c, np.float32(0), np.float32(n - 1))
    if n <= 1:
        return np.zeros_like(c)
    lo, hi = c < 0, c > n - 1
    if mode == "reflect":
        sz2 = 2 * n
        neg = c[lo]
        neg = np.float32(sz2) * np.trunc(-neg / np.float32(sz2)).astype(np.float32) + neg
        neg = np.where(neg < -n, neg + np.float32(sz2), -neg - np.float32(1))
        pos = c[hi]
        pos = pos - np.float32(sz2) * np.trunc(pos / np.float32(sz2)).astype(np.float32)
        pos = np.where(pos >= n, np.float32(sz2) - pos - np.float32(1), pos)
    else:  # wrap
        sz = n - 1
        neg = c[lo]
        neg = neg + np.float32(n) * (np.trunc(-neg / np.float32(sz)) + 1).astype(np.float32)
        pos = c[hi]
        pos = pos - np.float32(n) * np.trunc(pos / np.float32(sz)).astype(np.float32)
    c[lo] = neg.astype(np.float32)
    c[hi] = pos.astype(np.float32)
    return np.clip(c, np.float32(0), np.float32(n - 1))


def affine_transform(images: Tensor, transforms: np.ndarray, interpolation: str,
                     fill_mode: str, fill_value: float) -> Tensor:
    """TensorFlow's ``ImageProjectiveTransformV3`` on ``(b, h, w, c)`` images with
    ``(b or 1, 8)`` transforms; differentiable in the images (a weighted gather)."""
    b, h, w, ch = (int(v) for v in images._data.shape)
    t = np.asarray(transforms, np.float32).reshape(-1, 8)
    t = np.broadcast_to(t, (b, 8))
    oy, ox = np.meshgrid(np.arange(h, dtype=np.float32), np.arange(w, dtype=np.float32),
                         indexing="ij")
    f32 = np.float32
    ox = ox[None]
    oy = oy[None]
    tt = [t[:, i].reshape(b, 1, 1).astype(f32) for i in range(8)]
    proj = (tt[6] * ox + tt[7] * oy + f32(1)).astype(f32)
    with np.errstate(divide="ignore", invalid="ignore"):
        ix = ((tt[0] * ox + tt[1] * oy + tt[2]) / proj).astype(f32)
        iy = ((tt[3] * ox + tt[4] * oy + tt[5]) / proj).astype(f32)
    zero_proj = proj == 0
    ix = np.where(zero_proj, f32(0), ix)
    iy = np.where(zero_proj, f32(0), iy)
    x = _map_coord(ix, w, fill_mode)
    y = _map_coord(iy, h, fill_mode)
    bidx = np.arange(b).reshape(b, 1, 1)
    flat = ops.reshape(images, (b * h * w, ch))
    fill = np.float32(fill_value)

    def read(yy: np.ndarray, xx: np.ndarray, wt: np.ndarray) -> tuple[Any, np.ndarray]:
        inside = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w) & ~zero_proj
        idx = np.where(inside, (bidx * h + np.clip(yy, 0, h - 1)) * w + np.clip(xx, 0, w - 1),
                       0).reshape(-1)
        vals = ops.take(flat, convert(idx.astype(np.int64)), axis=0)
        wv = np.where(inside, wt, f32(0)).reshape(-1, 1).astype(f32)
        return ops.multiply(vals, convert(wv)), np.where(inside, f32(0), wt)

    if interpolation == "nearest":
        ry = (np.sign(y) * np.floor(np.abs(y) + f32(0.5))).astype(np.int64)
        rx = (np.sign(x) * np.floor(np.abs(x) + f32(0.5))).astype(np.int64)
        out, fw = read(ry, rx, np.ones_like(x))
        extra = fw * fill
    else:
        yf = np.floor(y)
        xf = np.floor(x)
        yc = yf + f32(1)
        xc = xf + f32(1)
        wx0, wx1 = (xc - x).astype(f32), (x - xf).astype(f32)
        wy0, wy1 = (yc - y).astype(f32), (y - yf).astype(f32)
        yfi, xfi, yci, xci = (v.astype(np.int64) for v in (yf, xf, yc, xc))
        # TF: (yc - y) * [(xc - x) f00 + (x - xf) f01] + (y - yf) * [(xc - x) f10 + ...]
        a, fa = read(yfi, xfi, wx0)
        bb, fb = read(yfi, xci, wx1)
        top = ops.add(a, bb)
        c, fc = read(yci, xfi, wx0)
        d, fd = read(yci, xci, wx1)
        bot = ops.add(c, d)
        wy0f = convert(wy0.reshape(-1, 1))
        wy1f = convert(wy1.reshape(-1, 1))
        if fill != 0:
            top = ops.add(top, convert(((fa + fb) * fill).reshape(-1, 1).astype(f32)))
            bot = ops.add(bot, convert(((fc + fd) * fill).reshape(-1, 1).astype(f32)))
        out = ops.add(ops.multiply(wy0f, top), ops.multiply(wy1f, bot))
        extra = np.zeros_like(x)
    if interpolation == "nearest" and fill != 0:
        out = ops.add(out, convert(extra.reshape(-1, 1).astype(f32)))
    if zero_proj.any():
        out = ops.where(convert(zero_proj.reshape(-1, 1)), convert(np.asarray(fill)), out)
    out = ops.reshape(out, (b, h, w, ch))
    if out._data.dtype != images._data.dtype:
        out = ops.cast(out, dtype=images._data.dtype)
    return out


def _affine_factor(factor: Any, name: str, err: str, open_low: bool = False
                   ) -> tuple[float, float]:
    def check(v: float) -> None:
        if v > 1.0 or v < -1.0 or (open_low and v <= -1.0):
            raise hinted(ValueError(with_hint(err + f"Received: input_number={v}",
                                              "factors are in [-1, 1]")))

    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise hinted(ValueError(with_hint(err + f"Received: {name}={factor}",
                                              "pass a number or two")))
        check(factor[0])
        check(factor[1])
        lower, upper = sorted(factor)
    elif isinstance(factor, (int, float)):
        check(factor)
        factor = abs(factor)
        lower, upper = -factor, factor
    else:
        raise hinted(ValueError(with_hint(err + f"Received: {name}={factor}",
                                          "pass a number or two")))
    return lower, upper


class _AffineAugment(_Augment):
    fill_mode: str
    fill_value: float
    interpolation: str
    _SUPPORTED_FILL_MODE = ("reflect", "wrap", "constant", "nearest")
    _SUPPORTED_INTERPOLATION = ("nearest", "bilinear")

    def _check_modes(self, fill_mode: str, interpolation: str) -> None:
        if fill_mode not in self._SUPPORTED_FILL_MODE:
            raise hinted(NotImplementedError(with_hint(
                f"Unknown `fill_mode` {fill_mode}. Expected of one "
                f"{self._SUPPORTED_FILL_MODE}.", "use 'reflect', 'wrap', 'constant' or "
                                                 "'nearest'")))
        if interpolation not in self._SUPPORTED_INTERPOLATION:
            raise hinted(NotImplementedError(with_hint(
                f"Unknown `interpolation` {interpolation}. Expected of one "
                f"{self._SUPPORTED_INTERPOLATION}.", "use 'bilinear' or 'nearest'")))

    def _apply(self, x: Tensor, transforms: np.ndarray) -> Tensor:
        unbatched = x._data.ndim == 3
        y = ops.expand_dims(x, 0) if unbatched else x
        if not self._last:
            y = ops.permute(y, (0, 2, 3, 1))
        y = affine_transform(y, transforms, self.interpolation, self.fill_mode,
                             float(self.fill_value))
        if not self._last:
            y = ops.permute(y, (0, 3, 1, 2))
        return ops.squeeze(y, 0) if unbatched else y

    def _hw(self, x: Tensor) -> tuple[int, int, int]:
        shp = x._data.shape
        b = 1 if len(shp) == 3 else int(shp[0])
        if self._last:
            return b, int(shp[-3]), int(shp[-2])
        return b, int(shp[-2]), int(shp[-1])


class RandomTranslation(_AffineAugment):
    """Shift images by a random fraction of their height and width (``fill_mode``
    ``"reflect"`` by default), with TensorFlow's projective-transform kernel.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.RandomTranslation(0.2, 0.2, seed=1)(tf.ones((1, 4, 4, 1))).shape
    TensorShape([1, 4, 4, 1])
    """

    _FACTOR_VALIDATION_ERROR = ("The `factor` argument should be a number (or a list of two "
                                "numbers) in the range [-1.0, 1.0]. ")

    def __init__(self, height_factor: Any, width_factor: Any, fill_mode: str = "reflect",
                 interpolation: str = "bilinear", seed: Any = None, fill_value: float = 0.0,
                 data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(data_format=data_format, **kwargs)
        self.height_factor = height_factor
        self.height_lower, self.height_upper = _affine_factor(
            height_factor, "height_factor", self._FACTOR_VALIDATION_ERROR)
        self.width_factor = width_factor
        self.width_lower, self.width_upper = _affine_factor(
            width_factor, "width_factor", self._FACTOR_VALIDATION_ERROR)
        self._check_modes(fill_mode, interpolation)
        self.fill_mode = fill_mode
        self.fill_value = fill_value
        self.interpolation = interpolation
        self.seed = seed
        self.generator = _kr.SeedGenerator(seed)

    def call(self, inputs: Any, training: Any = None) -> Any:
        x = _float_input(self, inputs)
        if not _training(training):
            return x
        b, h, w = self._hw(x)
        ht = _kr.uniform((b, 1), minval=self.height_lower, maxval=self.height_upper,
                         seed=self.generator)
        ht = np.asarray(ht._data) * np.float32(h)
        wt = _kr.uniform((b, 1), minval=self.width_lower, maxval=self.width_upper,
                         seed=self.generator)
        wt = np.asarray(wt._data) * np.float32(w)
        one, zero = np.ones((b, 1), np.float32), np.zeros((b, 1), np.float32)
        tr = np.concatenate([one, zero, -wt, zero, one, -ht, zero, zero], axis=1)
        return self._apply(x, tr.astype(np.float32))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor, "fill_mode": self.fill_mode,
                "interpolation": self.interpolation, "seed": self.seed,
                "fill_value": self.fill_value, "data_format": self.data_format}


class RandomRotation(_AffineAugment):
    """Rotate images by a random angle in ``factor * 2pi`` about their centre (Keras 3's
    affine matrix, TensorFlow's projective-transform kernel).

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.RandomRotation(0.1, seed=1)(tf.ones((1, 4, 4, 1))).shape
    TensorShape([1, 4, 4, 1])
    """

    def __init__(self, factor: Any, fill_mode: str = "reflect", interpolation: str = "bilinear",
                 seed: Any = None, fill_value: float = 0.0, data_format: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(data_format=data_format, **kwargs)
        self.factor = _set_factor(self, factor, (-1, 1))
        self.seed = seed
        self.generator = _kr.SeedGenerator(seed)
        self.fill_mode = fill_mode
        self.interpolation = interpolation
        self.fill_value = fill_value
        self._check_modes(fill_mode, interpolation)

    def call(self, inputs: Any, training: Any = None) -> Any:
        x = _float_input(self, inputs)
        if not _training(training):
            return x
        b, h, w = self._hw(x)
        angle = _kr.uniform((b,), minval=self.factor[0] * 360.0,
                            maxval=self.factor[1] * 360.0, seed=self.generator)
        f32 = np.float32
        rad = tfo.multiply(angle, convert(np.asarray(np.pi / 180.0, f32)))
        cos = np.asarray(tfo.cos(rad)._data, f32)
        sin = np.asarray(tfo.sin(rad)._data, f32)
        cx = f32(0.5) * (f32(w) - f32(1))
        cy = f32(0.5) * (f32(h) - f32(1))
        # Keras's _compute_affine_matrix with scale 1, no shear, no translation
        shx = shy = f32(0)
        a0 = f32(1) * (cos + shx * sin)
        a1 = f32(1) * (-sin + shx * cos)
        a2 = f32(0) + cx - cx * a0 - cy * a1
        b0 = f32(1) * (shy * cos + sin)
        b1 = f32(1) * (shy * -sin + cos)
        b2 = f32(0) + cy - cx * b0 - cy * b1
        z = np.zeros(b, f32)
        tr = np.stack([a0, a1, a2, b0, b1, b2, z, z], axis=1).astype(f32)
        return self._apply(x, tr)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "factor": self.factor, "data_format": self.data_format,
                "fill_mode": self.fill_mode, "fill_value": self.fill_value,
                "interpolation": self.interpolation, "seed": self.seed}


class RandomZoom(_AffineAugment):
    """Zoom images in or out by random factors of their height (and width, else the
    same factor) about their centre.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.RandomZoom(0.2, seed=1)(tf.ones((1, 4, 4, 1))).shape
    TensorShape([1, 4, 4, 1])
    """

    _FACTOR_VALIDATION_ERROR = ("The `height_factor` and `width_factor` arguments should be "
                                "a number (or a list of two numbers) in the range (-1.0, 1.0]. ")

    def __init__(self, height_factor: Any, width_factor: Any = None,
                 fill_mode: str = "reflect", interpolation: str = "bilinear", seed: Any = None,
                 fill_value: float = 0.0, data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(data_format=data_format, **kwargs)
        self.height_factor = height_factor
        self.height_lower, self.height_upper = _affine_factor(
            height_factor, "height_factor", self._FACTOR_VALIDATION_ERROR, open_low=True)
        self.width_factor = width_factor
        if width_factor is not None:
            self.width_lower, self.width_upper = _affine_factor(
                width_factor, "width_factor", self._FACTOR_VALIDATION_ERROR, open_low=True)
        self._check_modes(fill_mode, interpolation)
        self.fill_mode = fill_mode
        self.fill_value = fill_value
        self.interpolation = interpolation
        self.seed = seed
        self.generator = _kr.SeedGenerator(seed)

    def call(self, inputs: Any, training: Any = None) -> Any:
        x = _float_input(self, inputs)
        if not _training(training):
            return x
        b, h, w = self._hw(x)
        f32 = np.float32
        hz = np.asarray(_kr.uniform((b, 1), minval=1.0 + self.height_lower,
                                    maxval=1.0 + self.height_upper,
                                    seed=self.generator)._data, f32)
        if self.width_factor is not None:
            wz = np.asarray(_kr.uniform((b, 1), minval=1.0 + self.width_lower,
                                        maxval=1.0 + self.width_upper,
                                        seed=self.generator)._data, f32)
        else:
            wz = hz
        xo = ((f32(w) - f32(1)) / f32(2)) * (f32(1) - wz)
        yo = ((f32(h) - f32(1)) / f32(2)) * (f32(1) - hz)
        z = np.zeros((b, 1), f32)
        tr = np.concatenate([wz, z, xo, z, hz, yo, z, z], axis=1).astype(f32)
        return self._apply(x, tr)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor, "fill_mode": self.fill_mode,
                "interpolation": self.interpolation, "seed": self.seed,
                "fill_value": self.fill_value, "data_format": self.data_format}
