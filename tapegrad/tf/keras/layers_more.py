"""More ``keras.layers`` (Keras 3 semantics): ``Rescaling``, ``Identity``, ``RepeatVector``,
``ELU``, ``PReLU``, ``TimeDistributed``, ``Masking``, ``Cropping1D``, ``CenterCrop``,
``Resizing``, ``Normalization`` (with ``adapt``), ``Discretization``, ``CategoryEncoding``,
``Dot`` and ``UnitNormalization``.

>>> import tapegrad.tf as tf
>>> tf.keras.layers.Rescaling(1 / 255)(tf.constant([[0, 255]])).numpy()
array([[0., 1.]], dtype=float32)
>>> tf.keras.layers.RepeatVector(3)(tf.ones([2, 4])).shape
TensorShape([2, 3, 4])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import ops
from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from ...ops.resize import resize
from .. import _ops as tfo
from .._tensor import convert, read, tft
from . import activations, initializers
from . import random as _kr
from .layers import SHAPE_PASS, TRAINING, Layer
from .layers_conv import _channels_last, _input_spec_error, _Merge
from .variables import epsilon

__all__: list[str] = [
    "Rescaling", "Identity", "RepeatVector", "ELU", "PReLU", "TimeDistributed", "Masking",
    "Cropping1D", "CenterCrop", "Resizing", "Normalization", "Discretization",
    "CategoryEncoding", "Dot", "UnitNormalization", "ThresholdedReLU", "RandomFlip",
]


def _float_input(layer: Layer, inputs: Any) -> Tensor:
    """The input cast to the layer's dtype (Keras's compute dtype)."""
    x = convert(inputs)
    dt = layer.__dict__["_dtype"]
    return x if x._data.dtype == dt else ops.cast(x, dtype=dt)


# ----------------------------------------------------------------------------- simple
class Rescaling(Layer):
    """``inputs * scale + offset`` in the layer's dtype.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.Rescaling(2.0, offset=-1.0)(tf.constant([0.0, 1.0])).numpy()
    array([-1.,  1.], dtype=float32)
    """

    def __init__(self, scale: Any, offset: Any = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scale = scale
        self.offset = offset

    def call(self, inputs: Any) -> Any:
        x = _float_input(self, inputs)
        dt = x._data.dtype
        scale = np.asarray(self.scale, dtype=dt)
        offset = np.asarray(self.offset, dtype=dt)
        return ops.add(ops.multiply(x, scale), offset)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return tuple(input_shape)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


class Identity(Layer):
    """Returns its input unchanged.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.Identity()(tf.constant([1.0, 2.0])).numpy()
    array([1., 2.], dtype=float32)
    """

    def call(self, inputs: Any) -> Any:
        return inputs

    def compute_output_shape(self, input_shape: Any) -> Any:
        return tuple(input_shape)


class RepeatVector(Layer):
    """``(batch, features)`` to ``(batch, n, features)``."""

    def __init__(self, n: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(n, int) or isinstance(n, bool):
            raise hinted(TypeError(with_hint(f"Expected an integer value for `n`, got {type(n)}.",
                                             "n is the number of repetitions")))
        if n <= 0:
            raise hinted(ValueError(with_hint(
                f"Argument `n` should be a positive integer. Received: n={n}",
                "n is the number of repetitions")))
        self.n = n

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        if x._data.ndim != 2:
            raise _input_spec_error(self, 2, x)
        b, f = x._data.shape
        return ops.broadcast_to(ops.reshape(x, (b, 1, f)), (b, self.n, f))

    def compute_output_shape(self, input_shape: Any) -> Any:
        return (input_shape[0], self.n, input_shape[1])

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "n": self.n}


class ELU(Layer):
    """Exponential linear unit: ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise."""

    def __init__(self, alpha: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.alpha = alpha

    def call(self, inputs: Any) -> Any:
        return activations.elu(convert(inputs), alpha=self.alpha)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "alpha": self.alpha}


class ThresholdedReLU(Layer):
    """``x`` where ``x > theta``, else 0 (``tf.keras``'s legacy layer).

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.ThresholdedReLU(theta=0.5)(tf.constant([0.2, 0.5, 2.0])).numpy()
    array([0., 0., 2.], dtype=float32)
    """

    def __init__(self, theta: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if theta is None:
            raise hinted(ValueError(with_hint(
                "Theta of a Thresholded ReLU layer cannot be None, expecting a float. "
                f"Received: {theta}", "pass a float theta")))
        if theta < 0:
            raise hinted(ValueError(with_hint(
                f"The theta value of a Thresholded ReLU layer should be >=0. Received: {theta}",
                "pass theta >= 0")))
        self.theta = float(np.float32(theta))

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        dt = self.__dict__["_dtype"]
        keep = ops.cast(ops.greater(x, np.asarray(self.theta, dt)), dtype=dt)
        return ops.multiply(x, keep)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "theta": self.theta}


class PReLU(Layer):
    """Parametric ReLU: ``relu(x) - alpha * relu(-x)`` with a learned ``alpha`` per input
    element (shared along ``shared_axes``), initialised to zeros.

    >>> import tapegrad.tf as tf
    >>> layer = tf.keras.layers.PReLU(alpha_initializer=tf.keras.initializers.Constant(0.5))
    >>> layer(tf.constant([[-2.0, 3.0]])).numpy()
    array([[-1.,  3.]], dtype=float32)
    """

    def __init__(self, alpha_initializer: Any = "Zeros", alpha_regularizer: Any = None,
                 alpha_constraint: Any = None, shared_axes: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._weight_penalties("alpha", "alpha", alpha_regularizer, alpha_constraint)
        self.alpha_initializer = initializers.get(alpha_initializer)
        if shared_axes is None:
            self.shared_axes: list[int] | None = None
        elif not isinstance(shared_axes, (list, tuple)):
            self.shared_axes = [int(shared_axes)]
        else:
            self.shared_axes = [int(a) for a in shared_axes]

    def build(self, input_shape: Any = None) -> None:
        shape = list(input_shape[1:])
        for i in self.shared_axes or ():
            shape[i - 1] = 1
        self.alpha = self.add_weight(shape=tuple(shape), name="alpha",
                                     initializer=self.alpha_initializer)
        self.__dict__["built"] = True

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        pos = ops.relu(x)
        neg = ops.multiply(ops.negative(read(self.alpha)), ops.relu(ops.negative(x)))
        return ops.add(pos, neg)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "shared_axes": self.shared_axes}


class TimeDistributed(Layer):
    """Apply ``layer`` to every step of ``(batch, time, ...)``: the layer sees
    ``(batch * time, ...)``, built for the per-step shape.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(2))(tf.ones([4, 3, 5])).shape
    TensorShape([4, 3, 2])
    """

    def __init__(self, layer: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(layer, Layer):
            raise hinted(ValueError(with_hint(
                "Please initialize `TimeDistributed` layer with a `keras.layers.Layer` "
                f"instance. Received: {layer}", "wrap a layer instance")))
        self.layer = layer

    def call(self, inputs: Any, training: Any = None) -> Any:
        x = convert(inputs)
        if x._data.ndim < 3:
            raise hinted(ValueError(with_hint(
                "`TimeDistributed` Layer should be passed an `input_shape` with at least 3 "
                f"dimensions, received: {tuple(x._data.shape)}",
                "inputs are (batch, time, features...)")))
        b, t = x._data.shape[:2]
        flat = ops.reshape(x, (b * t,) + tuple(x._data.shape[2:]))
        kwargs: dict[str, Any] = {} if training is None else {"training": training}
        y = self.layer(flat, **kwargs)
        return ops.reshape(y, (b, t) + tuple(y._data.shape[1:]))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "layer": self.layer.get_config()}


class Masking(Layer):
    """Zero the steps whose features all equal ``mask_value``; ``compute_mask`` gives the
    steps kept.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.Masking()(tf.constant([[[0.0, 0.0], [1.0, 2.0]]])).numpy()
    array([[[0., 0.],
            [1., 2.]]], dtype=float32)
    """

    def __init__(self, mask_value: Any = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mask_value = mask_value
        self.supports_masking = True

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return ops.any(ops.not_equal(convert(inputs), self.mask_value), axis=-1)

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        keep = ops.any(ops.not_equal(x, self.mask_value), axis=-1, keepdims=True)
        return ops.where(keep, x, np.zeros((), x._data.dtype))

    def compute_output_shape(self, input_shape: Any) -> Any:
        return tuple(input_shape)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "mask_value": self.mask_value}


class Cropping1D(Layer):
    """Crop ``cropping = (start, end)`` steps of ``(batch, steps, features)``."""

    def __init__(self, cropping: Any = (1, 1), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        c = (cropping, cropping) if isinstance(cropping, int) else tuple(cropping)
        if len(c) != 2 or any(int(v) < 0 for v in c):
            raise hinted(ValueError(with_hint(
                "The `cropping` argument must be a tuple of 2 integers. Received "
                f"cropping={cropping}", "two non-negative integers: (start, end)")))
        self.cropping = (int(c[0]), int(c[1]))

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        if x._data.ndim != 3:
            raise _input_spec_error(self, 3, x)
        n = x._data.shape[1]
        if sum(self.cropping) >= n:
            raise hinted(ValueError(with_hint(
                "`cropping` parameter of `Cropping1D` layer must be smaller than the input "
                f"length. Received: inputs.shape={tuple(x._data.shape)}, "
                f"cropping={self.cropping}", "crop fewer steps than the input has")))
        return ops.getitem(x, (slice(None), slice(self.cropping[0], n - self.cropping[1]),
                               slice(None)))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "cropping": self.cropping}


# ----------------------------------------------------------------------------- images
def _hw_axes(x: Tensor, last: bool) -> tuple[int, int]:
    nd = x._data.ndim
    if nd not in (3, 4):
        raise hinted(ValueError(with_hint(
            "Expected an image array with shape `(height, width, channels)`, or "
            "`(batch_size, height, width, channels)`, but got input with incorrect rank, "
            f"of shape {tuple(x._data.shape)}.", "images are rank 3 or 4")))
    return (nd - 3, nd - 2) if last else (nd - 2, nd - 1)


def _resize_hw(x: Tensor, height: int, width: int, mode: str, last: bool) -> Tensor:
    """``tf.image.resize`` (half-pixel centres, no antialiasing) of the image axes."""
    unbatched = x._data.ndim == 3
    if unbatched:
        x = ops.expand_dims(x, 0)
    y = resize(x, (height, width), mode, False, None, channels_last=last)
    return ops.squeeze(y, 0) if unbatched else y


def _crop_hw(x: Tensor, ax: tuple[int, int], h0: int, h: int, w0: int, w: int) -> Tensor:
    idx: list[Any] = [slice(None)] * x._data.ndim
    idx[ax[0]] = slice(h0, h0 + h)
    idx[ax[1]] = slice(w0, w0 + w)
    return ops.getitem(x, tuple(idx))


class Resizing(Layer):
    """Resize images to ``(height, width)`` (``"bilinear"`` or ``"nearest"``, as
    ``tf.image.resize``); ``crop_to_aspect_ratio`` crops the centre to the target's aspect
    ratio first.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.Resizing(4, 6)(tf.ones([2, 8, 8, 3])).shape
    TensorShape([2, 4, 6, 3])
    """

    def __init__(self, height: int, width: int, interpolation: str = "bilinear",
                 crop_to_aspect_ratio: bool = False, pad_to_aspect_ratio: bool = False,
                 fill_mode: str = "constant", fill_value: float = 0.0, antialias: bool = False,
                 data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if interpolation not in ("bilinear", "nearest"):
            raise hinted(NotImplementedError(with_hint(
                f"Resizing(interpolation={interpolation!r}) is not supported by tapegrad",
                "use 'bilinear' or 'nearest'")))
        if pad_to_aspect_ratio or antialias:
            raise hinted(NotImplementedError(with_hint(
                "Resizing(pad_to_aspect_ratio=True / antialias=True) is not supported by "
                "tapegrad", "resize without them, or pad the images first")))
        self.height, self.width = int(height), int(width)
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = bool(crop_to_aspect_ratio)
        self.data_format = "channels_last" if _channels_last(data_format) else "channels_first"
        self._last = self.data_format == "channels_last"

    def call(self, inputs: Any) -> Any:
        x = _float_input(self, inputs)
        ax = _hw_axes(x, self._last)
        if self.crop_to_aspect_ratio:
            x = _aspect_crop(x, ax, self.height, self.width)
        mode = "linear" if self.interpolation == "bilinear" else "nearest-exact"
        return _resize_hw(x, self.height, self.width, mode, self._last)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "height": self.height, "width": self.width,
                "interpolation": self.interpolation,
                "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
                "data_format": self.data_format}


def _aspect_crop(x: Tensor, ax: tuple[int, int], th: int, tw: int) -> Tensor:
    """Keras's centre crop to the target aspect ratio (``smart_resize``'s first step)."""
    h, w = x._data.shape[ax[0]], x._data.shape[ax[1]]
    ch = max(min(h, int(float(w * th) / tw)), 1)
    cw = max(min(w, int(float(h * tw) / th)), 1)
    return _crop_hw(x, ax, int(float(h - ch) / 2), ch, int(float(w - cw) / 2), cw)


class CenterCrop(Layer):
    """Crop the centre ``(height, width)`` of images; a smaller image is cropped to the
    target's aspect ratio and resized bilinearly (Keras's ``smart_resize``).

    >>> import tapegrad.tf as tf
    >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    >>> tf.keras.layers.CenterCrop(2, 2)(x)[0, :, :, 0].numpy()
    array([[ 5.,  6.],
           [ 9., 10.]], dtype=float32)
    """

    def __init__(self, height: int, width: int, data_format: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.height, self.width = int(height), int(width)
        self.data_format = "channels_last" if _channels_last(data_format) else "channels_first"
        self._last = self.data_format == "channels_last"

    def call(self, inputs: Any) -> Any:
        x = _float_input(self, inputs)
        ax = _hw_axes(x, self._last)
        h, w = x._data.shape[ax[0]], x._data.shape[ax[1]]
        dh, dw = h - self.height, w - self.width
        if dh >= 0 and dw >= 0:
            return _crop_hw(x, ax, dh // 2, self.height, dw // 2, self.width)
        x = _aspect_crop(x, ax, self.height, self.width)
        return _resize_hw(x, self.height, self.width, "linear", self._last)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "height": self.height, "width": self.width,
                "data_format": self.data_format}


class RandomFlip(Layer):
    """Flip images left-right (``"horizontal"``), up-down (``"vertical"``) or both
    (``"horizontal_and_vertical"``, the default) with probability 1/2 per image, in
    training; the draws come from the layer's ``SeedGenerator`` (``seed``), one uniform
    value per image as Keras 3 draws them on TensorFlow.  A layer called on its own
    trains (Keras's default ``training=True``); ``predict`` and ``training=False`` pass the
    images through.

    >>> import tapegrad.tf as tf
    >>> x = tf.reshape(tf.range(6.0), [1, 2, 3, 1])
    >>> tf.keras.layers.RandomFlip(seed=1)(x, training=False)[0, :, :, 0].numpy()
    array([[0., 1., 2.],
           [3., 4., 5.]], dtype=float32)
    """

    def __init__(self, mode: str = "horizontal_and_vertical", seed: int | None = None,
                 data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seed = seed
        self.generator = _kr.SeedGenerator(seed)
        self.mode = mode
        self.data_format = "channels_last" if _channels_last(data_format) else "channels_first"
        self._last = self.data_format == "channels_last"
        self.__dict__["built"] = True  # no weights

    def build(self, input_shape: Any = None) -> None:
        pass

    def call(self, inputs: Any, training: Any = None) -> Any:
        x = _float_input(self, inputs)
        if training is None:  # the outer call's flag, else Keras's default: True
            training = TRAINING[-1] if TRAINING else True
        if not training or SHAPE_PASS[0]:  # a build pass draws nothing (Keras: symbolic)
            return x
        unbatched = x._data.ndim == 3
        shape = (1, 1, 1) if unbatched else (x._data.shape[0], 1, 1, 1)
        flips = ops.less_equal(_kr.uniform(shape, seed=self.generator),
                               np.asarray(0.5, np.float32))
        y = ops.expand_dims(x, 0) if unbatched else x
        h_axis, v_axis = (-2, -3) if self._last else (-1, -2)
        if self.mode in ("horizontal", "horizontal_and_vertical"):
            y = ops.where(flips, ops.flip(y, h_axis), y)
        if self.mode in ("vertical", "horizontal_and_vertical"):
            y = ops.where(flips, ops.flip(y, v_axis), y)
        return ops.squeeze(y, 0) if unbatched else y

    def compute_output_shape(self, input_shape: Any) -> Any:
        return tuple(input_shape)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "seed": self.seed, "mode": self.mode,
                "data_format": self.data_format}


# ----------------------------------------------------------------------------- preprocessing
class Normalization(Layer):
    """``(x - mean) / max(sqrt(variance), epsilon)`` per index of ``axis`` (``invert``
    undoes it); ``mean``/``variance`` given, or computed by ``adapt(data)``.

    >>> import tapegrad.tf as tf
    >>> import numpy as np
    >>> layer = tf.keras.layers.Normalization()
    >>> layer.adapt(np.array([[1.0, 10.0], [3.0, 30.0]], np.float32))
    >>> layer(tf.constant([[2.0, 20.0]])).numpy()
    array([[0., 0.]], dtype=float32)
    """

    def __init__(self, axis: Any = -1, mean: Any = None, variance: Any = None,
                 invert: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        elif isinstance(axis, int):
            axis = (axis,)
        else:
            axis = tuple(axis)
        self.axis = axis
        self.input_mean = mean
        self.input_variance = variance
        self.invert = invert
        self.__dict__["_norm"] = None  # (mean, variance) broadcast to the input's rank
        if (mean is not None) != (variance is not None):
            raise hinted(ValueError(with_hint(
                "When setting values directly, both `mean` and `variance` must be set. "
                f"Received: mean={mean} and variance={variance}", "pass both or neither")))
        if mean is not None:
            if np.shape(mean) != np.shape(variance):
                raise hinted(ValueError(with_hint(
                    "When setting values directly, `mean` and `variance` must have the same "
                    f"shape. Received: mean shape {np.shape(mean)} and variance shape "
                    f"{np.shape(variance)}", "one variance per mean")))
            if len(np.shape(mean)) > len(self.axis):
                raise hinted(ValueError(with_hint(
                    "The rank of `mean` must be less than or equal to the number of axes "
                    f"({len(self.axis)}). Received: mean shape {np.shape(mean)} for axis "
                    f"{self.axis}", "one mean per index of the kept axes")))

    def build(self, input_shape: Any = None) -> None:
        if input_shape is None:
            return
        shape = tuple(input_shape)
        nd = len(shape)
        if any(a < -nd or a >= nd for a in self.axis):
            raise hinted(ValueError(with_hint(
                "All `axis` values must be in the range [-ndim, ndim). Received inputs with "
                f"ndim={nd}, while axis={self.axis}", "axis indexes the input's axes")))
        keep = tuple(sorted(d if d >= 0 else d + nd for d in self.axis))
        for d in keep:
            if shape[d] is None:
                raise hinted(ValueError(with_hint(
                    f"All `axis` values to be kept must have a known shape. Received "
                    f"axis={self.axis}, inputs.shape={shape}, with unknown axis at index {d}",
                    "give the kept axes' sizes")))
        self.__dict__["_keep"] = keep
        self.__dict__["_reduce"] = tuple(d for d in range(nd) if d not in keep)
        self.__dict__["_bshape"] = tuple(shape[d] if d in keep else 1 for d in range(nd))
        mv_shape = tuple(int(shape[d]) for d in keep)
        self.__dict__["_mv_shape"] = mv_shape
        self.__dict__["_build_shape"] = shape
        dt = self.__dict__["_dtype"]
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(shape=mv_shape, initializer="zeros",
                                              trainable=False, name="mean")
            self.adapt_variance = self.add_weight(shape=mv_shape, initializer="ones",
                                                  trainable=False, name="variance")
            self.count = self.add_weight(shape=(), initializer="zeros", trainable=False,
                                         dtype="int64", name="count")
            self.__dict__["built"] = True
            self._finalize()
        else:
            mean = np.asarray(self.input_mean)
            var = np.asarray(self.input_variance)
            if mean.ndim:
                expanded = [1] * nd
                for i in range(1, mean.ndim + 1):
                    expanded[keep[-i]] = mean.shape[-i]
                mean, var = mean.reshape(expanded), var.reshape(expanded)
            bshape = self.__dict__["_bshape"]
            self.__dict__["_norm"] = (np.broadcast_to(mean, bshape).astype(dt),
                                      np.broadcast_to(var, bshape).astype(dt))
            self.__dict__["built"] = True

    def _finalize(self) -> None:
        if self.input_mean is not None or not self.built:
            return
        bshape = self.__dict__["_bshape"]
        dt = self.__dict__["_dtype"]
        self.__dict__["_norm"] = (np.asarray(self.adapt_mean._data).reshape(bshape).astype(dt),
                                  np.asarray(self.adapt_variance._data).reshape(bshape)
                                  .astype(dt))

    def adapt(self, data: Any) -> None:
        """Set the mean and variance from ``data`` (an array, a tensor, a dataset or an
        iterable of batches, combined batch by batch as Keras does)."""
        batches: Any = None
        if isinstance(data, np.ndarray) or isinstance(data, Tensor):
            shape = tuple(data.shape)
        elif hasattr(data, "__iter__"):
            batches = [b[0] if isinstance(b, (tuple, list)) else b for b in data]
            if not batches:
                raise hinted(ValueError(with_hint(
                    "adapt() received an empty iterable (no batches). Expected at least one "
                    "batch. Pass a non-empty iterable of arrays or tensors, e.g. "
                    "layer.adapt([x]) or layer.adapt(list_of_batches).",
                    "pass the data to adapt to")))
            shape = tuple(np.shape(convert(batches[0])._data))
        else:
            raise hinted(TypeError(with_hint(
                f"Unsupported data type: {type(data)}. `adapt` supports `np.ndarray`, backend "
                "tensors, `tf.data.Dataset`, `keras.utils.PyDataset`, and iterables of batches "
                "(e.g. list, generator).", "pass an array or a dataset")))
        if not self.built:
            self.build(shape)
        else:
            for d in self.__dict__["_keep"]:
                if shape[d] != self.__dict__["_build_shape"][d]:
                    raise hinted(ValueError(with_hint(
                        f"The layer was built with input_shape={self.__dict__['_build_shape']}, "
                        f"but adapt() is being called with data with an incompatible shape, "
                        f"data.shape={shape}", "adapt to data of the built shape")))
        red = self.__dict__["_reduce"]
        if isinstance(data, np.ndarray):
            mean, var = np.mean(data, axis=red), np.var(data, axis=red)
        elif isinstance(data, Tensor):
            t = read(data) if hasattr(data, "assign") else data
            mean = tfo.reduce_mean(t, axis=list(red))._data
            var = _tf_variance(t, red)
        else:
            mv = self.__dict__["_mv_shape"]
            mean = np.zeros(mv, np.float32)
            var = np.zeros(mv, np.float32)
            total = 0
            for b in batches:
                t = convert(b)
                if t._data.dtype != self.__dict__["_dtype"]:
                    t = ops.cast(t, dtype=self.__dict__["_dtype"])
                bm = tfo.reduce_mean(t, axis=list(red))._data
                bv = _tf_variance(t, red)
                n = math.prod(t._data.shape[d] for d in red) if red else 1
                total += n
                bw = float(n) / total
                ew = 1.0 - bw
                new_mean = (mean * np.float32(ew) + bm * np.float32(bw)).astype(np.float32)
                var = ((var + (mean - new_mean) ** 2) * np.float32(ew) +
                       (bv + (bm - new_mean) ** 2) * np.float32(bw)).astype(np.float32)
                mean = new_mean
        self.adapt_mean.assign(np.asarray(mean).astype(np.float32))
        self.adapt_variance.assign(np.asarray(var).astype(np.float32))
        self._finalize()

    def call(self, inputs: Any) -> Any:
        norm = self.__dict__["_norm"]
        if norm is None:
            raise hinted(ValueError(with_hint(
                "You must call `.build(input_shape)` on the layer before using it.",
                "adapt() the layer, or pass mean and variance")))
        x = _float_input(self, inputs)
        mean, var = norm
        den = ops.maximum(ops.sqrt(tft(var)), np.asarray(epsilon(), var.dtype))
        if self.invert:
            return ops.add(tft(mean), ops.multiply(x, den))
        return ops.divide(ops.subtract(x, tft(mean)), den)

    def _maybe_build(self, x: Any) -> None:
        if not self.built:  # Keras builds for the full input shape (the batch axis too)
            self.build(tuple(x._data.shape) if isinstance(x, Tensor) else None)
            self.__dict__["built"] = True

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "axis": self.axis, "invert": self.invert,
                "mean": np.array(self.input_mean).tolist(),
                "variance": np.array(self.input_variance).tolist()}


def _tf_variance(t: Tensor, axes: tuple[int, ...]) -> np.ndarray:
    """Keras's ``ops.var`` on TensorFlow: ``reduce_mean(square(x - reduce_mean(x)))``."""
    m = tfo.reduce_mean(t, axis=list(axes), keepdims=True)
    return np.asarray(tfo.reduce_mean(tfo.square(tfo.subtract(t, m)), axis=list(axes))._data)


def _encode(idx: np.ndarray, mode: str, depth: int, dtype: Any,
            count_weights: Any = None) -> Tensor:
    """Keras's encode_categorical_inputs (``int``, ``one_hot``, ``multi_hot``, ``count``);
    indices outside ``[0, depth)`` count nowhere."""
    if mode == "int":
        return tft(idx.astype(dtype))
    idx = np.asarray(idx)
    if idx.ndim == 0:
        idx = idx[None]
    if mode == "one_hot":
        if idx.shape[-1] == 1 and idx.ndim > 1:
            idx = idx[..., 0]
        out = (idx[..., None] == np.arange(depth)).astype(dtype)
        return tft(out)
    lead = idx.shape[:-1]
    flat = idx.reshape(-1, idx.shape[-1]).astype(np.int64)
    out = np.zeros((flat.shape[0], depth), dtype=np.float64)
    w = None if count_weights is None else \
        np.asarray(count_weights, np.float64).reshape(flat.shape)
    for r in range(flat.shape[0]):
        ok = (flat[r] >= 0) & (flat[r] < depth)
        np.add.at(out[r], flat[r][ok], 1.0 if w is None else w[r][ok])
    if mode == "multi_hot":
        out = (out > 0).astype(np.float64)
    return tft(out.reshape(lead + (depth,)).astype(dtype))


class CategoryEncoding(Layer):
    """Integer tokens to ``one_hot``, ``multi_hot`` (default) or ``count`` vectors of
    ``num_tokens`` entries.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.CategoryEncoding(4)(tf.constant([[0, 1], [1, 3]])).numpy()
    array([[1., 1., 0., 0.],
           [0., 1., 0., 1.]], dtype=float32)
    """

    def __init__(self, num_tokens: Any = None, output_mode: str = "multi_hot",
                 sparse: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode not in ("count", "one_hot", "multi_hot"):
            raise hinted(ValueError(with_hint(f"Unknown arg for output_mode: {output_mode}",
                                              "use 'one_hot', 'multi_hot' or 'count'")))
        if num_tokens is None:
            raise hinted(ValueError(with_hint(
                "num_tokens must be set to use this layer. If the number of tokens is not "
                "known beforehand, use the IntegerLookup layer instead.",
                "pass num_tokens")))
        if num_tokens < 1:
            raise hinted(ValueError(with_hint(
                f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.",
                "num_tokens is the vocabulary size")))
        self.num_tokens = num_tokens
        self.output_mode = output_mode
        self.sparse = sparse

    def call(self, inputs: Any, count_weights: Any = None) -> Any:
        if count_weights is not None and self.output_mode != "count":
            raise hinted(ValueError(with_hint(
                "`count_weights` is not used when `output_mode` is not `'count'`. Received "
                f"`count_weights={count_weights}`.", "use output_mode='count'")))
        idx = np.asarray(convert(inputs)._data)
        cw = None if count_weights is None else np.asarray(convert(count_weights)._data)
        return _encode(idx, self.output_mode, int(self.num_tokens),
                       self.__dict__["_dtype"], cw)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "num_tokens": self.num_tokens,
                "output_mode": self.output_mode}


class Discretization(Layer):
    """Bucket values by ``bin_boundaries`` (``boundaries[i-1] <= x < boundaries[i]`` is
    bucket ``i``), or by ``num_bins`` quantiles found by ``adapt`` (Keras's approximate
    summaries).

    >>> import tapegrad.tf as tf
    >>> layer = tf.keras.layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0])
    >>> layer(tf.constant([[-1.5, 1.0, 3.4, 0.5]])).numpy()
    array([[0, 2, 3, 1]], dtype=int32)
    """

    def __init__(self, bin_boundaries: Any = None, num_bins: Any = None,
                 epsilon: float = 0.01, output_mode: str = "int", sparse: bool = False,
                 dtype: Any = None, name: str | None = None) -> None:
        super().__init__(name=name, dtype=dtype)
        if sparse and output_mode == "int":
            raise hinted(ValueError(with_hint(
                "`sparse=True` may only be used if `output_mode` is `'one_hot'`, "
                f"`'multi_hot'`, or `'count'`. Received: sparse={sparse} and "
                f"output_mode={output_mode}", "sparse outputs need an encoding")))
        allowed = ("int", "one_hot", "multi_hot", "count")
        if output_mode not in allowed:
            raise hinted(ValueError(with_hint(
                f"Unknown value for `output_mode` argument of layer Discretization. Allowed "
                f"values are: {allowed}. Received: output_mode={output_mode}",
                "use one of the allowed modes")))
        if num_bins is not None and num_bins < 0:
            raise hinted(ValueError(with_hint(
                "`num_bins` must be greater than or equal to 0. Received: "
                f"`num_bins={num_bins}`", "num_bins counts buckets")))
        if num_bins is not None and bin_boundaries is not None:
            raise hinted(ValueError(with_hint(
                "Both `num_bins` and `bin_boundaries` should not be set. Received: "
                f"`num_bins={num_bins}` and `bin_boundaries={bin_boundaries}`",
                "pass one of them")))
        if num_bins is None and bin_boundaries is None:
            raise hinted(ValueError(with_hint(
                "You need to set either `num_bins` or `bin_boundaries`.", "pass one of them")))
        self.bin_boundaries = bin_boundaries
        self.num_bins = num_bins
        self.epsilon = epsilon
        self.output_mode = output_mode
        self.sparse = sparse
        self.summary: np.ndarray | None = None if bin_boundaries else \
            np.array([[], []], dtype="float32")

    def adapt(self, data: Any, steps: Any = None) -> None:
        """Find ``num_bins`` quantile boundaries of ``data`` (an array, tensor or batches)."""
        if self.num_bins is None:
            raise hinted(ValueError(with_hint(
                "Cannot adapt a Discretization layer that has been initialized with "
                "`bin_boundaries`, use `num_bins` instead.", "construct it with num_bins")))
        self.summary = np.array([[], []], dtype="float32")
        if isinstance(data, (np.ndarray, Tensor)):
            self.update_state(data)
        else:
            for i, batch in enumerate(data):
                if steps is not None and i >= steps:
                    break
                self.update_state(batch)
        self.bin_boundaries = _compress(self.summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def update_state(self, data: Any) -> None:
        values = np.array(convert(data)._data if isinstance(data, Tensor) else data)
        values = np.sort(values.astype("float32").reshape(-1))
        n = np.size(values)
        step = max(n / (1.0 / self.epsilon), 1)
        bounds = values[int(step - 1)::int(step)]
        summary = np.stack([bounds, np.ones_like(bounds) * step])
        prev = self.summary if self.summary is not None else np.array([[], []], "float32")
        merged: np.ndarray = np.concatenate((summary, prev), axis=1)
        merged = np.take(merged, np.argsort(merged[0]), axis=1)
        self.summary = _compress(merged, self.epsilon)

    def call(self, inputs: Any) -> Any:
        if self.bin_boundaries is None:
            raise hinted(ValueError(with_hint(
                "You need to either pass the `bin_boundaries` argument at construction time "
                "or call `adapt(dataset)` before you can start using the `Discretization` "
                "layer.", "adapt() the layer first")))
        x = np.asarray(convert(inputs)._data)
        idx = np.searchsorted(np.asarray(self.bin_boundaries, dtype=x.dtype if x.dtype.kind ==
                                         "f" else np.float64), x, side="right")
        depth = len(self.bin_boundaries) + 1
        dt = np.int32 if self.output_mode == "int" else self.__dict__["_dtype"]
        return _encode(idx, self.output_mode, depth, dt)

    def get_config(self) -> dict[str, Any]:
        return {"bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins,
                "epsilon": self.epsilon, "output_mode": self.output_mode,
                "sparse": self.sparse, "name": self.name, "dtype": self.dtype}


def _compress(summary: np.ndarray, eps: float) -> np.ndarray:
    """Keras's compress_summary: the weighted quantile summary at steps of ``eps``."""
    if summary.shape[1] * eps < 1:
        return summary
    percents = eps + np.arange(0.0, 1.0, eps)
    cum = summary[1].cumsum()
    cum_pct = cum / cum[-1]
    bins = np.interp(percents, cum_pct, summary[0])
    cum = np.interp(percents, cum_pct, cum)
    weights = cum - np.concatenate((np.array([0]), cum[:-1]))
    return np.stack((bins, weights)).astype("float32")


# ----------------------------------------------------------------------------- merging
def _l2_normalize(x: Tensor, axis: Any, eps: float) -> Tensor:
    """Keras's ``ops.normalize(order=2)``: ``x * min(rsqrt(sum(x**2)), 1 / eps)``."""
    ax = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    inv = tfo.rsqrt(tfo.reduce_sum(tfo.square(x), axis=ax, keepdims=True))
    return tfo.multiply(x, tfo.minimum(inv, np.asarray(1.0 / eps, x._data.dtype)))


class Dot(_Merge):
    """Batched dot products of two inputs along ``axes`` (``normalize=True``: cosines).

    >>> import tapegrad.tf as tf
    >>> x = tf.constant([[1.0, 2.0]]); y = tf.constant([[3.0, 4.0]])
    >>> tf.keras.layers.Dot(axes=1)([x, y]).numpy()
    array([[11.]], dtype=float32)
    """

    def __init__(self, axes: Any, normalize: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)):
                raise hinted(TypeError(with_hint(
                    "Invalid type for argument `axes`: it should be a list or an int. "
                    f"Received: axes={axes}", "axes is an int or a pair of ints")))
            if len(axes) != 2:
                raise hinted(ValueError(with_hint(
                    "Invalid format for argument `axes`: it should contain two elements. "
                    f"Received: axes={axes}", "axes is an int or a pair of ints")))
            if not isinstance(axes[0], int) or not isinstance(axes[1], int):
                raise hinted(ValueError(with_hint(
                    "Invalid format for argument `axes`: list elements should be integers. "
                    f"Received: axes={axes}", "axes is an int or a pair of ints")))
        self.axes = axes
        self.normalize = normalize

    def call(self, inputs: Any) -> Any:
        xs = self._inputs(inputs)
        if len(xs) != 2:
            raise hinted(ValueError(with_hint(
                f"A `Dot` layer should be called on exactly 2 inputs. Received: inputs={inputs}",
                "pass two tensors")))
        x, y = xs
        nx, ny = x._data.ndim, y._data.ndim
        if isinstance(self.axes, int):
            axes = [self.axes % nx, self.axes % ny] if self.axes < 0 else [self.axes] * 2
        else:
            axes = [a % (nx, ny)[i] if a < 0 else a for i, a in enumerate(self.axes)]
        if self.normalize:
            x = _l2_normalize(x, axes[0], epsilon())
            y = _l2_normalize(y, axes[1], epsilon())
        if nx < 2 or ny < 2:
            raise hinted(ValueError(with_hint(
                f"Cannot do batch_dot on inputs with rank < 2. Received inputs with shapes "
                f"{tuple(x._data.shape)} and {tuple(y._data.shape)}.", "inputs are batched")))
        if 0 in axes:
            raise hinted(ValueError(with_hint(
                "Cannot perform batch_dot over axis 0. If your inputs are not batched, add a "
                "dummy batch dimension to your inputs using keras.ops.expand_dims(x, 0)",
                "contract a non-batch axis")))
        d1, d2 = x._data.shape[axes[0]], y._data.shape[axes[1]]
        if d1 != d2:
            raise hinted(ValueError(with_hint(
                f"Cannot do batch_dot on inputs with shapes {tuple(x._data.shape)} and "
                f"{tuple(y._data.shape)} with axes={axes}. x.shape[{axes[0]}] != "
                f"y.shape[{axes[1]}] ({d1} != {d2}).", "the contracted axes need one size")))
        b = x._data.shape[0]
        xm = ops.moveaxis(x, axes[0], -1)
        ym = ops.moveaxis(y, axes[1], 1)
        x_rest = tuple(xm._data.shape[1:-1])
        y_rest = tuple(ym._data.shape[2:])
        r = ops.matmul(ops.reshape(xm, (b, -1, d1)), ops.reshape(ym, (b, d2, -1)))
        out = (b,) + x_rest + y_rest
        return ops.reshape(r, out if len(out) > 1 else (b, 1))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


class UnitNormalization(Layer):
    """Scale each input to unit L2 norm along ``axis``.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.UnitNormalization()(tf.constant([[3.0, 4.0]])).numpy()
    array([[0.6, 0.8]], dtype=float32)
    """

    def __init__(self, axis: Any = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis: Any = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise hinted(TypeError(with_hint(
                "Invalid value for `axis` argument: expected an int or a list/tuple of ints. "
                f"Received: axis={axis}", "axis is an int or a list of ints")))

    def call(self, inputs: Any) -> Any:
        return _l2_normalize(_float_input(self, inputs), self.axis, 1e-12)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "axis": self.axis}


# ----------------------------------------------------------------------------- merge functions
# Keras' functional forms of the merge layers: ``keras.layers.concatenate([a, b])`` is
# ``Concatenate()([a, b])`` (eager tensors and symbolic ones alike)
def add(inputs: Any, **kwargs: Any) -> Any:
    """``Add(**kwargs)(inputs)``."""
    from .layers_conv import Add
    return Add(**kwargs)(inputs)


def subtract(inputs: Any, **kwargs: Any) -> Any:
    """``Subtract(**kwargs)(inputs)``."""
    from .layers_conv import Subtract
    return Subtract(**kwargs)(inputs)


def multiply(inputs: Any, **kwargs: Any) -> Any:
    """``Multiply(**kwargs)(inputs)``."""
    from .layers_conv import Multiply
    return Multiply(**kwargs)(inputs)


def average(inputs: Any, **kwargs: Any) -> Any:
    """``Average(**kwargs)(inputs)``."""
    from .layers_conv import Average
    return Average(**kwargs)(inputs)


def maximum(inputs: Any, **kwargs: Any) -> Any:
    """``Maximum(**kwargs)(inputs)``."""
    from .layers_conv import Maximum
    return Maximum(**kwargs)(inputs)


def minimum(inputs: Any, **kwargs: Any) -> Any:
    """``Minimum(**kwargs)(inputs)``."""
    from .layers_conv import Minimum
    return Minimum(**kwargs)(inputs)


def concatenate(inputs: Any, axis: int = -1, **kwargs: Any) -> Any:
    """``Concatenate(axis=axis, **kwargs)(inputs)``.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.concatenate([tf.ones([2, 1]), tf.zeros([2, 2])]).shape
    TensorShape([2, 3])
    """
    from .layers_conv import Concatenate
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs: Any, axes: Any = -1, normalize: bool = False, **kwargs: Any) -> Any:
    """``Dot(axes=axes, normalize=normalize, **kwargs)(inputs)``."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)


__all__ += ["add", "subtract", "multiply", "average", "maximum", "minimum", "concatenate",
            "dot"]
