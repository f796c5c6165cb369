"""``keras.layers`` for conv nets: convolution, pooling, normalization, dropout,
reshaping, merging, activations, embedding, resizing and padding (Keras 3 semantics).

Weights are created at the first call (deferred build) with Keras's default
initialisers, in Keras's ``get_weights`` order: ``[kernel, bias]`` (kernel
``(*kernel_size, in, filters)``; ``Conv2DTranspose``: ``(*kernel_size, filters,
in)``; ``DepthwiseConv2D``: ``(*kernel_size, in, multiplier)``), ``[gamma, beta,
moving_mean, moving_variance]`` for ``BatchNormalization``.  ``training=``
follows Keras: a layer's own argument, else the one given to an outer call
(the model's), else inference.  Data is channels-last unless
``data_format="channels_first"``.

>>> import tapegrad.tf as tf
>>> model = tf.keras.Sequential([
...     tf.keras.Input(shape=(8, 8, 1)),
...     tf.keras.layers.Conv2D(4, 3, activation="relu"),
...     tf.keras.layers.MaxPooling2D(),
...     tf.keras.layers.Flatten(),
...     tf.keras.layers.Dense(2)])
>>> model(tf.ones([3, 8, 8, 1])).shape
TensorShape([3, 2])
>>> [tuple(w.shape) for w in model.get_weights()]
[(3, 3, 1, 4), (4,), (36, 2), (2,)]
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import ops
from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from ...ops import conv as C
from ...ops import norm as N
from ...ops import pool as PL
from ...ops.embedding import embedding as _embedding
from ...ops.resize import resize
from .. import nn_conv as tfn
from .._tensor import convert, read
from . import activations, initializers
from . import constraints as _constraints
from . import regularizers as _regularizers
from .layers import Layer, in_training

__all__: list[str] = [
    "Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose", "Conv1DTranspose", "DepthwiseConv2D",
    "MaxPooling1D", "MaxPooling2D", "AveragePooling1D", "AveragePooling2D",
    "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D",
    "GlobalMaxPooling2D", "BatchNormalization", "LayerNormalization", "GroupNormalization",
    "Dropout", "SpatialDropout1D", "SpatialDropout2D", "Flatten", "Reshape", "Permute",
    "Lambda", "Embedding", "LeakyReLU", "ReLU", "Softmax", "Activation", "Concatenate", "Add",
    "Subtract", "Multiply", "Average", "Maximum", "Minimum", "UpSampling1D", "UpSampling2D",
    "ZeroPadding1D", "ZeroPadding2D", "Cropping2D", "MaxPool1D", "MaxPool2D", "AvgPool1D",
    "AvgPool2D", "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalMaxPool1D", "GlobalMaxPool2D",
    "Convolution1D", "Convolution2D", "Convolution3D", "Convolution1DTranspose",
    "Convolution2DTranspose",
]


def _tuple(v: Any, n: int, name: str) -> tuple[int, ...]:
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    t = tuple(int(i) for i in v)
    if len(t) != n:
        raise hinted(ValueError(with_hint(
            f"The `{name}` argument must be a tuple of {n} integers. Received {name}={v}",
            f"pass an int or {n} ints")))
    return t


def _channels_last(data_format: Any) -> bool:
    if data_format is None or data_format == "channels_last":
        return True
    if data_format == "channels_first":
        return False
    raise hinted(ValueError(with_hint(
        "The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
        f"Received: data_format={data_format}", "use 'channels_last' or 'channels_first'")))


def _init(v: Any) -> Any:
    """Keras's initializer names, ``"uniform"`` (U(-0.05, 0.05)) included."""
    if v == "uniform":
        return initializers.RandomUniform(-0.05, 0.05)
    if v == "normal":
        return initializers.RandomNormal(0.0, 0.05)
    return initializers.get(v)


def _shape(input_shape: Any) -> tuple[Any, ...]:
    return tuple(input_shape.as_list() if hasattr(input_shape, "as_list") else input_shape)


def _input_spec_error(layer: Layer, want: int, x: Tensor) -> ValueError:
    return hinted(ValueError(with_hint(
        f"Input 0 of layer \"{layer.name}\" is incompatible with the layer: expected "
        f"ndim={want}, found ndim={x._data.ndim}. Full shape received: "
        f"{tuple(x._data.shape)}", f"{type(layer).__name__} takes (batch, ...) of rank {want}")))


# ----------------------------------------------------------------------------- convolution
class _Conv(Layer):
    _rank = 2
    _transpose = False

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: Any = None, dilation_rate: Any = 1, groups: int = 1,
                 activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, output_padding: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self._weight_penalties("kernel", "kernel", kernel_regularizer, kernel_constraint)
        self._weight_penalties("bias", "bias", bias_regularizer, bias_constraint)
        n = self._rank
        if int(filters) <= 0:
            raise hinted(ValueError(with_hint(
                "Invalid value for argument `filters`. Expected a strictly positive value. "
                f"Received filters={filters}.", "filters is the number of output channels")))
        self.filters = int(filters)
        self.kernel_size = _tuple(kernel_size, n, "kernel_size")
        self.strides = _tuple(strides, n, "strides")
        self.dilation_rate = _tuple(dilation_rate, n, "dilation_rate")
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same", "causal"):
            raise hinted(ValueError(with_hint(
                "The `padding` argument must be a list/tuple or one of {'valid', 'same'} (or "
                f"'causal', only for `Conv1D`). Received padding={padding}",
                "use 'valid' or 'same'")))
        self.data_format = "channels_last" if data_format is None else data_format
        self._last = _channels_last(data_format)
        self.groups = int(groups)
        if self.filters % self.groups:
            raise hinted(ValueError(with_hint(
                "The number of filters must be evenly divisible by the number of groups. "
                f"Received: groups={groups}, filters={filters}.", "pick a divisor")))
        self.activation: Callable[..., Any] = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _init(kernel_initializer)
        self.bias_initializer = _init(bias_initializer)
        self.output_padding = None if output_padding is None else \
            _tuple(output_padding, n, "output_padding")
        self.kernel: Any = None
        self.bias: Any = None

    def _in_channels(self, shp: tuple[Any, ...]) -> int:
        c = shp[-1] if self._last else shp[1]
        if c is None:
            raise hinted(ValueError(with_hint(
                "The channel dimension of the inputs should be defined. Found `None`.",
                "give the input's channel count")))
        return int(c)

    def build(self, input_shape: Any = None) -> None:
        shp = _shape(input_shape)
        cin = self._in_channels(shp)
        if self._transpose:
            kshape = self.kernel_size + (self.filters, cin)
        else:
            if cin % self.groups:
                raise hinted(ValueError(with_hint(
                    "The number of input channels must be evenly divisible by the number of "
                    f"groups. Received groups={self.groups}, but the input has {cin} channels "
                    f"(full input shape is {shp}).", "pick a divisor")))
            kshape = self.kernel_size + (cin // self.groups, self.filters)
        self.__dict__["_cin"] = cin
        self.kernel = self.add_weight(shape=kshape, initializer=self.kernel_initializer,
                                      name="kernel")
        if self.use_bias:
            self.bias = self.add_weight(shape=(self.filters,), initializer=self.bias_initializer,
                                        name="bias")
        self.__dict__["built"] = True

    def _maybe_build(self, x: Any) -> None:
        # Keras checks the layer's InputSpec (min_ndim, then the channel axis once built) in
        # __call__, before call(): these errors are not framed as "Exception encountered"
        if isinstance(x, Tensor):
            n = self._rank + 2
            if x._data.ndim < n:
                raise hinted(ValueError(with_hint(
                    f"Input 0 with name 'None' of layer '{self.name}' is incompatible with the "
                    f"layer: expected min_ndim={n}, found ndim={x._data.ndim}. Full shape "
                    f"received: {tuple(x._data.shape)}",
                    f"{type(self).__name__} takes (batch, ...) of rank {n}")))
            if self.built and x._data.ndim == n:
                c = x._data.shape[-1] if self._last else x._data.shape[1]
                if c != self.__dict__["_cin"]:
                    raise hinted(ValueError(with_hint(
                        f"Input 0 with name 'None' of layer '{self.name}' is incompatible with "
                        f"the layer: expected axis {-1 if self._last else 1} of input shape to "
                        f"have value {self.__dict__['_cin']}, but received input with shape "
                        f"{tuple(x._data.shape)}", "the layer was built for another channel count")))
        super()._maybe_build(x)

    def _check(self, x: Tensor) -> None:
        n = self._rank
        if x._data.ndim != n + 2:
            raise _input_spec_error(self, n + 2, x)
        c = x._data.shape[-1] if self._last else x._data.shape[1]
        if c != self.__dict__["_cin"]:
            raise hinted(ValueError(with_hint(
                f"Input 0 of layer \"{self.name}\" is incompatible with the layer: expected "
                f"axis {-1 if self._last else 1} of input shape to have value "
                f"{self.__dict__['_cin']}, but received input with shape "
                f"{tuple(x._data.shape)}", "the layer was built for another channel count")))

    def _finish(self, y: Tensor) -> Tensor:
        if self.use_bias:
            shape = (1,) * (y._data.ndim - 1) + (-1,) if self._last else \
                (1, -1) + (1,) * (y._data.ndim - 2)
            y = ops.add(y, ops.reshape(read(self.bias), shape))
        return self.activation(y)

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        self._check(x)
        n = self._rank
        pad: Any = self.padding.upper()
        if self.padding == "causal":
            pad = [[0, 0], [self.dilation_rate[0] * (self.kernel_size[0] - 1), 0], [0, 0]]
        fmt = "N" + "DHW"[3 - n:] + "C" if self._last else "NC" + "DHW"[3 - n:]
        if n == 1:
            fmt = "NWC" if self._last else "NCW"
        y = tfn._conv(n, x, read(self.kernel), self.strides, pad, fmt, self.dilation_rate,
                      "Conv2D")
        return self._finish(y)

    def get_config(self) -> dict[str, Any]:
        cfg = super().get_config()
        cfg.update(filters=self.filters, kernel_size=self.kernel_size, strides=self.strides,
                   padding=self.padding, data_format=self.data_format,
                   dilation_rate=self.dilation_rate, groups=self.groups,
                   activation=getattr(self.activation, "__name__", str(self.activation)),
                   use_bias=self.use_bias, **self._penalty_config("kernel", "bias"))
        return cfg


class Conv1D(_Conv):
    """1-d convolution over ``(batch, steps, channels)`` (``padding="causal"`` too)."""

    _rank = 1


class Conv2D(_Conv):
    """2-d convolution over ``(batch, rows, cols, channels)``; kernel ``(kh, kw, in, filters)``.

    ``padding="same"`` is TensorFlow's rule (output ``ceil(n / stride)``, the odd
    padding pixel at the end).

    >>> import tapegrad.tf as tf
    >>> layer = tf.keras.layers.Conv2D(2, 3, padding="same")
    >>> layer(tf.ones([1, 5, 5, 3])).shape, layer.kernel.shape
    (TensorShape([1, 5, 5, 2]), TensorShape([3, 3, 3, 2]))
    """

    _rank = 2


class Conv3D(_Conv):
    _rank = 3


def deconv_output_length(n: int, k: int, padding: str, output_padding: int | None,
                         stride: int, dilation: int) -> int:
    """Keras's output length of a transposed convolution (its TensorFlow backend)."""
    k = (k - 1) * dilation + 1
    if padding == "valid":
        op = max(k, stride) - k if output_padding is None else output_padding
        return (n - 1) * stride + k + op
    if output_padding is None:
        return n * stride
    return (n - 1) * stride + k % 2 + output_padding


class _ConvTranspose(_Conv):
    _transpose = True

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1,
                 padding: str = "valid", output_padding: Any = None, data_format: Any = None,
                 dilation_rate: Any = 1, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 **kwargs: Any) -> None:
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, 1,
                         activation, use_bias, kernel_initializer, bias_initializer,
                         output_padding=output_padding, **kwargs)

    def get_config(self) -> dict[str, Any]:
        cfg = super().get_config()
        cfg.pop("groups", None)
        cfg["output_padding"] = self.output_padding
        return cfg

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        self._check(x)
        n = self._rank
        sp = x._data.shape[1:-1] if self._last else x._data.shape[2:]
        op = self.output_padding or (None,) * n
        size = tuple(deconv_output_length(int(sp[i]), self.kernel_size[i], self.padding,
                                          op[i], self.strides[i], self.dilation_rate[i])
                     for i in range(n))
        xc = tfn._first(x, n) if self._last else x
        # then tf.nn.conv*_transpose with that output shape: TensorFlow's SAME rule on it
        pads = C.same_padding(size, self.kernel_size, self.strides, self.dilation_rate) \
            if self.padding == "same" else ((0, 0),) * n
        # (*k, out, in) -> (in, out, *k)
        w = ops.transpose(read(self.kernel), (n + 1, n) + tuple(range(n)))
        y = C._conv_t(xc, w, size=size, stride=self.strides, padding=pads,
                      dilation=self.dilation_rate, groups=1)
        return self._finish(tfn._last(y, n) if self._last else y)


class Conv2DTranspose(_ConvTranspose):
    """Transposed 2-d convolution; kernel ``(kh, kw, filters, in)``, Keras's output size.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.Conv2DTranspose(2, 3, strides=2, padding="same")(
    ...     tf.ones([1, 4, 4, 3])).shape
    TensorShape([1, 8, 8, 2])
    """

    _rank = 2


class Conv1DTranspose(_ConvTranspose):
    _rank = 1


class DepthwiseConv2D(Layer):
    """Depthwise 2-d convolution; kernel ``(kh, kw, in, depth_multiplier)``.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.DepthwiseConv2D(3, depth_multiplier=2)(tf.ones([1, 5, 5, 3])).shape
    TensorShape([1, 3, 3, 6])
    """

    def __init__(self, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 depth_multiplier: int = 1, data_format: Any = None, dilation_rate: Any = 1,
                 activation: Any = None, use_bias: bool = True,
                 depthwise_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 depthwise_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, depthwise_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any) -> None:
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self._weight_penalties("kernel", "depthwise", depthwise_regularizer,
                               depthwise_constraint)
        self._weight_penalties("bias", "bias", bias_regularizer, bias_constraint)
        self.kernel_size = _tuple(kernel_size, 2, "kernel_size")
        self.strides = _tuple(strides, 2, "strides")
        self.dilation_rate = _tuple(dilation_rate, 2, "dilation_rate")
        self.padding = str(padding).lower()
        self.depth_multiplier = int(depth_multiplier)
        self.data_format = "channels_last" if data_format is None else data_format
        self._last = _channels_last(data_format)
        self.activation: Callable[..., Any] = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.depthwise_initializer = _init(depthwise_initializer)
        self.bias_initializer = _init(bias_initializer)
        self.kernel: Any = None
        self.bias: Any = None

    @property
    def depthwise_kernel(self) -> Any:
        return self.kernel

    def get_config(self) -> dict[str, Any]:
        from .model_file import _initializer_config

        cfg = super().get_config()
        cfg.update(depth_multiplier=self.depth_multiplier, kernel_size=self.kernel_size,
                   strides=self.strides, padding=self.padding, data_format=self.data_format,
                   dilation_rate=self.dilation_rate,
                   activation=getattr(self.activation, "__name__", str(self.activation)),
                   use_bias=self.use_bias,
                   depthwise_initializer=_initializer_config(self.depthwise_initializer),
                   bias_initializer=_initializer_config(self.bias_initializer),
                   **self._penalty_config("depthwise", "bias"))
        return cfg

    def build(self, input_shape: Any = None) -> None:
        shp = _shape(input_shape)
        cin = int(shp[-1] if self._last else shp[1])
        self.kernel = self.add_weight(shape=self.kernel_size + (cin, self.depth_multiplier),
                                      initializer=self.depthwise_initializer, name="kernel")
        if self.use_bias:
            self.bias = self.add_weight(shape=(cin * self.depth_multiplier,),
                                        initializer=self.bias_initializer, name="bias")
        self.__dict__["built"] = True

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        if x._data.ndim != 4:
            raise _input_spec_error(self, 4, x)
        y = tfn.depthwise_conv2d(x, read(self.kernel), self.strides, self.padding.upper(),
                                 "NHWC" if self._last else "NCHW", self.dilation_rate)
        if self.use_bias:
            shape = (1, 1, 1, -1) if self._last else (1, -1, 1, 1)
            y = ops.add(y, ops.reshape(read(self.bias), shape))
        return self.activation(y)


# ----------------------------------------------------------------------------- pooling
class _Pool(Layer):
    _rank = 2
    _kind = "max"

    def __init__(self, pool_size: Any = 2, strides: Any = None, padding: str = "valid",
                 data_format: Any = None, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        n = self._rank
        self.pool_size = _tuple(pool_size, n, "pool_size")
        self.strides = self.pool_size if strides is None else _tuple(strides, n, "strides")
        self.padding = str(padding).lower()
        self.data_format = "channels_last" if data_format is None else data_format
        self._last = _channels_last(data_format)

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        n = self._rank
        if x._data.ndim != n + 2:
            raise _input_spec_error(self, n + 2, x)
        fmt = ("NWC" if n == 1 else "NHWC") if self._last else ("NCW" if n == 1 else "NCHW")
        return tfn._pool(n, x, self.pool_size, self.strides, self.padding.upper(), fmt,
                         self._kind, "MaxPool" if self._kind == "max" else "AvgPool")


class MaxPooling1D(_Pool):
    _rank, _kind = 1, "max"


class MaxPooling2D(_Pool):
    """2-d max pooling (``pool_size=(2, 2)``, ``strides`` default ``pool_size``).

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.MaxPooling2D()(tf.ones([1, 5, 5, 2])).shape
    TensorShape([1, 2, 2, 2])
    """

    _rank, _kind = 2, "max"


class AveragePooling1D(_Pool):
    _rank, _kind = 1, "avg"


class AveragePooling2D(_Pool):
    """2-d average pooling (``"same"`` windows average their elements inside the input)."""

    _rank, _kind = 2, "avg"


class _GlobalPool(Layer):
    _rank = 2
    _kind = "avg"

    def __init__(self, data_format: Any = None, keepdims: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_format = "channels_last" if data_format is None else data_format
        self._last = _channels_last(data_format)
        self.keepdims = bool(keepdims)

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        if x._data.ndim != self._rank + 2:
            raise _input_spec_error(self, self._rank + 2, x)
        axes = PL.global_pool_axes(x._data.ndim, self._last)
        if self._kind == "avg":
            return ops.mean(x, axis=axes, keepdims=self.keepdims)
        return ops.amax(x, axis=axes, keepdims=self.keepdims)


class GlobalAveragePooling1D(_GlobalPool):
    _rank, _kind = 1, "avg"


class GlobalAveragePooling2D(_GlobalPool):
    """Mean over the spatial axes.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.GlobalAveragePooling2D()(tf.ones([2, 4, 4, 3])).shape
    TensorShape([2, 3])
    """

    _rank, _kind = 2, "avg"


class GlobalMaxPooling1D(_GlobalPool):
    _rank, _kind = 1, "max"


class GlobalMaxPooling2D(_GlobalPool):
    _rank, _kind = 2, "max"


# ----------------------------------------------------------------------------- normalization
class BatchNormalization(Layer):
    """Batch normalisation (Keras 3): batch statistics when training (the moving ones
    updated as ``moving * momentum + batch * (1 - momentum)``), moving statistics
    otherwise; a non-trainable layer always runs in inference mode.

    >>> import tapegrad.tf as tf
    >>> bn = tf.keras.layers.BatchNormalization()
    >>> y = bn(tf.constant([[1.0], [3.0]]), training=True)
    >>> [w.name for w in bn.weights]
    ['gamma', 'beta', 'moving_mean', 'moving_variance']
    >>> bn.moving_mean.numpy()
    array([0.02], dtype=float32)
    """

    def __init__(self, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3,
                 center: bool = True, scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", moving_mean_initializer: Any = "zeros",
                 moving_variance_initializer: Any = "ones", beta_regularizer: Any = None,
                 gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, synchronized: bool = False,
                 renorm: bool = False, renorm_clipping: Any = None,
                 renorm_momentum: float = 0.99, **kwargs: Any) -> None:
        if renorm:  # Keras 3.15 writes the renorm keys into every config
            raise hinted(NotImplementedError(with_hint(
                "BatchNormalization(renorm=True) is not supported by tapegrad",
                "use renorm=False (the default)")))
        super().__init__(**kwargs)
        self._weight_penalties("gamma", "gamma", gamma_regularizer, gamma_constraint)
        self._weight_penalties("beta", "beta", beta_regularizer, beta_constraint)
        self.axis, self.momentum, self.epsilon = int(axis), float(momentum), float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer = _init(beta_initializer)
        self.gamma_initializer = _init(gamma_initializer)
        self.moving_mean_initializer = _init(moving_mean_initializer)
        self.moving_variance_initializer = _init(moving_variance_initializer)
        self.gamma: Any = None
        self.beta: Any = None

    def build(self, input_shape: Any = None) -> None:
        shp = _shape(input_shape)
        c = int(shp[self.axis])
        if self.scale:
            self.gamma = self.add_weight(shape=(c,), initializer=self.gamma_initializer,
                                         name="gamma")
        if self.center:
            self.beta = self.add_weight(shape=(c,), initializer=self.beta_initializer,
                                        name="beta")
        self.moving_mean = self.add_weight(shape=(c,), initializer=self.moving_mean_initializer,
                                           name="moving_mean", trainable=False)
        self.moving_variance = self.add_weight(shape=(c,),
                                               initializer=self.moving_variance_initializer,
                                               name="moving_variance", trainable=False)
        self.__dict__["built"] = True

    def call(self, inputs: Any, training: Any = None, mask: Any = None) -> Any:
        x = convert(inputs)
        nd = x._data.ndim
        ax = self.axis % nd
        shape = N.channel_shape(nd, ax, x._data.shape[ax])
        gamma = None if self.gamma is None else ops.reshape(read(self.gamma), shape)
        beta = None if self.beta is None else ops.reshape(read(self.beta), shape)
        if in_training(training) and self.trainable:
            # the batch's moments (tf.nn.moments: biased variance) normalise, in one
            # batch-norm node; the moving statistics follow Keras's momentum rule
            g = None if self.gamma is None else read(self.gamma)
            b = None if self.beta is None else read(self.beta)
            y, mean, var = N.batch_norm(x, g, b, None, None, training=True,
                                        eps=self.epsilon, axis=ax)
            for mv, st in ((self.moving_mean, mean), (self.moving_variance, var)):
                new = mv._data.copy()
                N.update_running(new, st._data.reshape(-1), self.momentum, on_new=False)
                mv.assign(new)
            return y
        mm = ops.reshape(read(self.moving_mean), shape)
        mvar = ops.reshape(read(self.moving_variance), shape)
        return tfn.batch_normalization(x, mm, mvar, beta, gamma, self.epsilon)

    def get_config(self) -> dict[str, Any]:
        cfg = super().get_config()
        cfg.update(axis=self.axis, momentum=self.momentum, epsilon=self.epsilon,
                   center=self.center, scale=self.scale)
        return cfg


def _axes(axis: Any, nd: int) -> tuple[int, ...]:
    ax = [axis] if isinstance(axis, int) else list(axis)
    return tuple(sorted(a % nd for a in ax))


class LayerNormalization(Layer):
    """Normalise each sample over ``axis`` (default the last), then ``gamma``/``beta``.

    >>> import tapegrad.tf as tf
    >>> ln = tf.keras.layers.LayerNormalization()
    >>> ln(tf.constant([[1.0, 3.0]])).numpy().round(4)
    array([[-0.9995,  0.9995]], dtype=float32)
    """

    def __init__(self, axis: Any = -1, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, rms_scaling: bool = False, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", beta_regularizer: Any = None,
                 gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._weight_penalties("gamma", "gamma", gamma_regularizer, gamma_constraint)
        self._weight_penalties("beta", "beta", beta_regularizer, beta_constraint)
        self.axis, self.epsilon = axis, float(epsilon)
        self.center, self.scale, self.rms_scaling = bool(center), bool(scale), bool(rms_scaling)
        self.beta_initializer = _init(beta_initializer)
        self.gamma_initializer = _init(gamma_initializer)
        self.gamma: Any = None
        self.beta: Any = None

    def build(self, input_shape: Any = None) -> None:
        shp = _shape(input_shape)
        axes = _axes(self.axis, len(shp))
        pshape = tuple(int(shp[a]) for a in axes)
        if self.scale:
            self.gamma = self.add_weight(shape=pshape, initializer=self.gamma_initializer,
                                         name="gamma")
        if self.center and not self.rms_scaling:
            self.beta = self.add_weight(shape=pshape, initializer=self.beta_initializer,
                                        name="beta")
        self.__dict__["built"] = True

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        nd = x._data.ndim
        axes = _axes(self.axis, nd)
        bshape = tuple(x._data.shape[i] if i in axes else 1 for i in range(nd))
        g = None if self.gamma is None else ops.reshape(read(self.gamma), bshape)
        b = None if self.beta is None else ops.reshape(read(self.beta), bshape)
        if self.rms_scaling:
            warnings.warn(
                "You passed `rms_scaling=True`, which is deprecated. This argument "
                "incorrectly scales the input by the variance, not the root mean square. To "
                "correctly use RMS Normalization, please use `keras.ops.rms_normalization` / "
                "`keras.ops.nn.rms_normalization` instead.", UserWarning, stacklevel=3)
            # Keras 3's (documented-as-wrong) formula: x / sqrt(var + eps) * gamma
            mean = ops.mean(x, axis=axes, keepdims=True)
            var = ops.mean(ops.square(ops.subtract(x, mean)), axis=axes, keepdims=True)
            y = ops.divide(x, ops.sqrt(ops.add(var, self.epsilon)))
            return y if g is None else ops.multiply(y, g)
        mean = ops.mean(x, axis=axes, keepdims=True)
        var = ops.mean(ops.square(ops.subtract(x, mean)), axis=axes, keepdims=True)
        return tfn.batch_normalization(x, mean, var, b, g, self.epsilon)


class GroupNormalization(Layer):
    """Group norm over channels (``axis=-1``) split in ``groups`` (default 32).

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.GroupNormalization(groups=2)(tf.ones([1, 3, 3, 4])).shape
    TensorShape([1, 3, 3, 4])
    """

    def __init__(self, groups: int = 32, axis: int = -1, epsilon: float = 1e-3,
                 center: bool = True, scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.groups, self.axis, self.epsilon = int(groups), int(axis), float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer = _init(beta_initializer)
        self.gamma_initializer = _init(gamma_initializer)
        self.gamma: Any = None
        self.beta: Any = None

    def build(self, input_shape: Any = None) -> None:
        shp = _shape(input_shape)
        c = int(shp[self.axis])
        if c < self.groups:
            raise hinted(ValueError(with_hint(
                f"Number of groups ({self.groups}) cannot be more than the number of channels "
                f"({c}).", "use fewer groups")))
        if c % self.groups:
            raise hinted(ValueError(with_hint(
                f"Number of groups ({self.groups}) must be a multiple of the number of "
                f"channels ({c}).", "the channels must split evenly into the groups")))
        if self.scale:
            self.gamma = self.add_weight(shape=(c,), initializer=self.gamma_initializer,
                                         name="gamma")
        if self.center:
            self.beta = self.add_weight(shape=(c,), initializer=self.beta_initializer,
                                        name="beta")
        self.__dict__["built"] = True

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        g = None if self.gamma is None else read(self.gamma)
        b = None if self.beta is None else read(self.beta)
        return N.group_norm(x, self.groups, g, b, self.epsilon, axis=self.axis)


# ----------------------------------------------------------------------------- dropout
from ._dropout import Dropout  # noqa: E402  (Keras's masks, from the layer's SeedGenerator)


class _SpatialDropout(Dropout):
    """Keras's ``BaseSpatialDropout``: one mask value per (sample, channel)."""

    def __init__(self, rate: float, seed: Any = None, **kwargs: Any) -> None:
        super().__init__(rate, seed=seed, **kwargs)

    def _noise_shape(self, x: Tensor) -> tuple[int, ...]:
        raise NotImplementedError

    def call(self, inputs: Any, training: Any = None) -> Any:
        x = convert(inputs)
        if in_training(training) and self.rate > 0:
            from .random import dropout

            return dropout(x, self.rate, noise_shape=self._noise_shape(x),
                           seed=self.seed_generator)
        return x


class SpatialDropout1D(_SpatialDropout):
    """Drop whole channels of ``(batch, steps, channels)``."""

    def _noise_shape(self, x: Tensor) -> tuple[int, ...]:
        if x._data.ndim != 3:
            raise _input_spec_error(self, 3, x)
        return (x._data.shape[0], 1, x._data.shape[2])


class SpatialDropout2D(_SpatialDropout):
    """Drop whole feature maps of ``(batch, rows, cols, channels)`` when training."""

    def __init__(self, rate: float, data_format: Any = None, seed: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(rate, seed=seed, **kwargs)
        self._last = _channels_last(data_format)

    def _noise_shape(self, x: Tensor) -> tuple[int, ...]:
        s = x._data.shape
        if x._data.ndim != 4:
            raise _input_spec_error(self, 4, x)
        return (s[0], 1, 1, s[3]) if self._last else (s[0], s[1], 1, 1)


# ----------------------------------------------------------------------------- reshaping
class Flatten(Layer):
    """Flatten all but the batch axis.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.Flatten()(tf.ones([2, 3, 4])).shape
    TensorShape([2, 12])
    """

    def __init__(self, data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._last = _channels_last(data_format)

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        if not self._last and x._data.ndim > 2:
            x = ops.transpose(x, (0,) + tuple(range(2, x._data.ndim)) + (1,))
        return ops.reshape(x, (x._data.shape[0], -1) if x._data.ndim else (1,))


class Reshape(Layer):
    """Reshape all but the batch axis to ``target_shape`` (one entry may be -1)."""

    def __init__(self, target_shape: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_shape = tuple(int(s) for s in target_shape)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "target_shape": self.target_shape}

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        known = math.prod(s for s in self.target_shape if s != -1)
        have = math.prod(x._data.shape[1:])
        if (-1 not in self.target_shape and known != have) or (known and have % known):
            raise hinted(ValueError(with_hint(
                "The total size of the tensor must be unchanged. Received: input_shape="
                f"{tuple(x._data.shape[1:])}, target_shape={self.target_shape}",
                "the target shape must hold as many elements as the input")))
        return ops.reshape(x, (x._data.shape[0],) + self.target_shape)


class Permute(Layer):
    """Permute the non-batch axes: ``dims`` is 1-indexed (``(2, 1)`` swaps them)."""

    def __init__(self, dims: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise hinted(ValueError(with_hint(
                "Invalid permutation argument `dims` for Permute Layer. The set of indices in "
                f"`dims` must be consecutive and start from 1. Received dims={dims}",
                "dims is a permutation of 1..rank-1")))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "dims": self.dims}

    def call(self, inputs: Any) -> Any:
        return ops.transpose(convert(inputs), (0,) + self.dims)


class Lambda(Layer):
    """Wrap a function of the inputs as a layer (no weights)."""

    def __init__(self, function: Callable[..., Any], output_shape: Any = None,
                 mask: Any = None, arguments: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.function = function
        self.arguments = dict(arguments or {})

    def call(self, inputs: Any, mask: Any = None, training: Any = None) -> Any:
        return self.function(inputs, **self.arguments)


# ----------------------------------------------------------------------------- embedding
class Embedding(Layer):
    """A lookup table ``(input_dim, output_dim)`` (initialised U(-0.05, 0.05)).

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.Embedding(10, 3)(tf.constant([[1, 2]])).shape
    TensorShape([1, 2, 3])
    """

    embeddings_regularizer: Any
    embeddings_constraint: Any

    def __init__(self, input_dim: int, output_dim: int, embeddings_initializer: Any = "uniform",
                 embeddings_regularizer: Any = None, embeddings_constraint: Any = None,
                 mask_zero: bool = False, weights: Any = None, lora_rank: Any = None,
                 **kwargs: Any) -> None:
        kwargs.pop("input_length", None)
        super().__init__(**kwargs)
        self._weight_penalties("embeddings", "embeddings", embeddings_regularizer,
                               embeddings_constraint)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = _init(embeddings_initializer)
        self.mask_zero = bool(mask_zero)
        self._initial = weights

    def build(self, input_shape: Any = None) -> None:
        self.embeddings = self.add_weight(shape=(self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          name="embeddings")
        if self._initial is not None:
            self.set_weights(self._initial if isinstance(self._initial, list)
                             else [self._initial])
        self.__dict__["built"] = True

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        idx = x._data
        if idx.dtype.kind == "f":
            idx = idx.astype(np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= self.input_dim):
            bad = int(idx.max()) if idx.max() >= self.input_dim else int(idx.min())
            from .._ops import _invalid

            raise _invalid(f"indices[0,0] = {bad} is not in [0, {self.input_dim})",
                           f"token ids must be in [0, {self.input_dim})", "ResourceGather")
        return _embedding(read(self.embeddings), idx)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        if not self.mask_zero:
            return None
        return ops.not_equal(convert(inputs), 0)

    def get_config(self) -> dict[str, Any]:
        from .model_file import _initializer_config

        cfg = super().get_config()
        cfg.update({"input_dim": self.input_dim, "output_dim": self.output_dim,
                    "embeddings_initializer": _initializer_config(self.embeddings_initializer),
                    "embeddings_regularizer": _regularizers.serialize(
                        self.embeddings_regularizer),
                    "activity_regularizer": _regularizers.serialize(
                        self.__dict__.get("activity_regularizer")),
                    "embeddings_constraint": _constraints.serialize(
                        self.embeddings_constraint), "mask_zero": self.mask_zero,
                    "quantization_config": None})
        return cfg


# ----------------------------------------------------------------------------- activations
class LeakyReLU(Layer):
    """``x`` for ``x > 0``, ``negative_slope * x`` otherwise (Keras 3 default 0.3)."""

    def __init__(self, negative_slope: float = 0.3, **kwargs: Any) -> None:
        alpha = kwargs.pop("alpha", None)
        super().__init__(**kwargs)
        self.negative_slope = float(negative_slope if alpha is None else alpha)

    def call(self, inputs: Any) -> Any:
        return ops.leaky_relu(convert(inputs), negative_slope=self.negative_slope)


class ReLU(Layer):
    """``max(x, 0)``, with Keras's ``max_value``, ``negative_slope`` and ``threshold``."""

    def __init__(self, max_value: float | None = None, negative_slope: float = 0.0,
                 threshold: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0:
            raise hinted(ValueError(with_hint(
                "max_value of a ReLU layer cannot be a negative value. Received: "
                f"max_value={max_value}", "pass max_value >= 0")))
        self.max_value, self.negative_slope, self.threshold = (max_value, float(negative_slope),
                                                               float(threshold))

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        if self.negative_slope == 0 and self.threshold == 0:
            y = ops.relu(x)
        else:
            y = ops.where(ops.greater_equal(x, self.threshold), x,
                          ops.multiply(ops.subtract(x, self.threshold), self.negative_slope))
        if self.max_value is not None:
            y = ops.minimum(y, float(self.max_value))
        return y


class Softmax(Layer):
    """Softmax over ``axis`` (default -1)."""

    def __init__(self, axis: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs: Any, mask: Any = None) -> Any:
        from ..nn import softmax as _tf_softmax

        x = convert(inputs)
        if mask is None:
            return _tf_softmax(x, axis=self.axis)
        # Keras 3: masked positions get -1e9 before the softmax and 0 after it
        m = np.asarray(convert(mask)._data)
        m = m if m.dtype == bool else m > 0.5
        big = -3e4 if x._data.dtype == np.float16 else -1e9
        x = ops.where(m, x, np.asarray(big, x._data.dtype))
        return ops.where(m, _tf_softmax(x, axis=self.axis), np.zeros((), x._data.dtype))


class Activation(Layer):
    """Apply an activation by name or callable."""

    def __init__(self, activation: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(),
                "activation": getattr(self.activation, "__name__", str(self.activation))}

    def call(self, inputs: Any) -> Any:
        return self.activation(convert(inputs))


# ----------------------------------------------------------------------------- merging
class _Merge(Layer):
    def _inputs(self, inputs: Any) -> list[Tensor]:
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise hinted(ValueError(with_hint(
                "A merge layer should be called on a list of inputs. Received: "
                f"inputs={inputs} (not a list of tensors)"
                if not isinstance(inputs, (list, tuple)) else
                f"A merge layer should be called on a list of at least 2 inputs. Got "
                f"{len(inputs)} inputs.", "pass a list of two or more tensors")))
        xs = [convert(v) for v in inputs]
        dt = self.__dict__["_dtype"]
        return [ops.cast(v, dtype=dt) if v._data.dtype.kind == "f" and v._data.dtype != dt
                else v for v in xs]

    def _fold(self, fn: Callable[[Any, Any], Any], inputs: Any) -> Any:
        xs = self._inputs(inputs)
        y = xs[0]
        for v in xs[1:]:
            y = fn(y, v)
        return y


class Add(_Merge):
    """Elementwise sum of a list of inputs."""

    def call(self, inputs: Any) -> Any:
        return self._fold(ops.add, inputs)


class Subtract(_Merge):
    def call(self, inputs: Any) -> Any:
        xs = self._inputs(inputs)
        if len(xs) != 2:
            raise hinted(ValueError(with_hint(
                "A `Subtract` layer should be called on exactly 2 inputs. Received: "
                f"inputs={inputs}", "pass two tensors")))
        return ops.subtract(xs[0], xs[1])


class Multiply(_Merge):
    """Elementwise product of a list of inputs."""

    def call(self, inputs: Any) -> Any:
        return self._fold(ops.multiply, inputs)


class Average(_Merge):
    def call(self, inputs: Any) -> Any:
        xs = self._inputs(inputs)
        return ops.divide(self._fold(ops.add, xs), float(len(xs)))


class Maximum(_Merge):
    def call(self, inputs: Any) -> Any:
        return self._fold(ops.maximum, inputs)


class Minimum(_Merge):
    def call(self, inputs: Any) -> Any:
        return self._fold(ops.minimum, inputs)


class Concatenate(_Merge):
    """Concatenate a list of inputs along ``axis`` (default -1).

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.Concatenate()([tf.ones([2, 1]), tf.zeros([2, 2])]).shape
    TensorShape([2, 3])
    """

    def __init__(self, axis: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = int(axis)

    def call(self, inputs: Any) -> Any:
        xs = self._inputs(inputs)
        nd = xs[0]._data.ndim
        ax = self.axis % nd
        for v in xs[1:]:
            sa, sb = xs[0]._data.shape, v._data.shape
            if len(sb) != nd or any(a != b for i, (a, b) in enumerate(zip(sa, sb)) if i != ax):
                raise hinted(ValueError(with_hint(
                    "A `Concatenate` layer requires inputs with matching shapes except for "
                    "the concatenation axis. Received: input_shape="
                    f"{[tuple(t._data.shape) for t in xs]}",
                    f"all inputs must agree outside axis {self.axis}")))
        return ops.concatenate(xs, axis=ax)


# ----------------------------------------------------------------------------- resizing, padding
class UpSampling2D(Layer):
    """Repeat rows and columns ``size`` times (``"nearest"``) or resize bilinearly
    (half-pixel centres, as ``tf.image.resize``).

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.UpSampling2D()(tf.ones([1, 2, 3, 1])).shape
    TensorShape([1, 4, 6, 1])
    """

    def __init__(self, size: Any = (2, 2), data_format: Any = None,
                 interpolation: str = "nearest", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.size = _tuple(size, 2, "size")
        self._last = _channels_last(data_format)
        if interpolation not in ("nearest", "bilinear"):
            raise hinted(ValueError(with_hint(
                "`interpolation` argument should be one of: \"bicubic\", \"bilinear\", "
                "\"lanczos3\", \"lanczos5\", \"nearest\". Received: "
                f"interpolation={interpolation}", "use 'nearest' or 'bilinear'")))
        self.interpolation = interpolation

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        if x._data.ndim != 4:
            raise _input_spec_error(self, 4, x)
        first = 1 if self._last else 2
        hw = x._data.shape[first:first + 2]
        out = (hw[0] * self.size[0], hw[1] * self.size[1])
        mode = "nearest" if self.interpolation == "nearest" else "linear"
        return resize(x, out, mode, False, None, channels_last=self._last)


class UpSampling1D(Layer):
    """Repeat each step ``size`` times."""

    def __init__(self, size: int = 2, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.size = int(size)

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        return resize(x, (x._data.shape[1] * self.size,), "nearest", False, None,
                      channels_last=True)


def _pairs(padding: Any, n: int, what: str) -> tuple[tuple[int, int], ...]:
    if isinstance(padding, int):
        return ((padding, padding),) * n
    items = list(padding)
    if len(items) != n:
        raise hinted(ValueError(with_hint(
            f"`{what}` should have {n} elements. Received: {what}={padding}.",
            f"pass an int, {n} ints or {n} pairs")))
    out = []
    for it in items:
        if isinstance(it, int):
            out.append((it, it))
        else:
            a, b = it
            out.append((int(a), int(b)))
    return tuple(out)


class ZeroPadding2D(Layer):
    """Zero rows/columns around ``(batch, rows, cols, channels)``: ``padding`` an int, two
    ints (symmetric) or ``((top, bottom), (left, right))``.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.ZeroPadding2D(((1, 0), (2, 1)))(tf.ones([1, 2, 2, 1])).shape
    TensorShape([1, 3, 5, 1])
    """

    def __init__(self, padding: Any = (1, 1), data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.padding = _pairs(padding, 2, "padding")
        self._last = _channels_last(data_format)

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        if x._data.ndim != 4:
            raise _input_spec_error(self, 4, x)
        pw = ((0, 0),) + self.padding + ((0, 0),) if self._last else \
            ((0, 0), (0, 0)) + self.padding
        return ops.pad(x, pw)


class ZeroPadding1D(Layer):
    def __init__(self, padding: Any = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.padding = _pairs(padding if isinstance(padding, int) else [padding], 1,
                              "padding")[0]

    def call(self, inputs: Any) -> Any:
        return ops.pad(convert(inputs), ((0, 0), self.padding, (0, 0)))


class Cropping2D(Layer):
    """Crop rows/columns: ``cropping`` as in :class:`ZeroPadding2D`."""

    def __init__(self, cropping: Any = ((0, 0), (0, 0)), data_format: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cropping = _pairs(cropping, 2, "cropping")
        self._last = _channels_last(data_format)

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        first = 1 if self._last else 2
        idx: list[Any] = [slice(None)] * x._data.ndim
        for i, (a, b) in enumerate(self.cropping):
            n = x._data.shape[first + i]
            idx[first + i] = slice(a, n - b)
        return ops.getitem(x, tuple(idx))


# Keras's aliases
MaxPool1D, MaxPool2D = MaxPooling1D, MaxPooling2D
AvgPool1D, AvgPool2D = AveragePooling1D, AveragePooling2D
GlobalAvgPool1D, GlobalAvgPool2D = GlobalAveragePooling1D, GlobalAveragePooling2D
GlobalMaxPool1D, GlobalMaxPool2D = GlobalMaxPooling1D, GlobalMaxPooling2D
Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D
Convolution1DTranspose, Convolution2DTranspose = Conv1DTranspose, Conv2DTranspose
