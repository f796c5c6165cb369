"""More Keras 3 layers: ``Attention``, ``AdditiveAttention``, ``SeparableConv1D/2D`` and
the ``Wrapper`` base class (Keras's weights, names, configs and numbers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ... import ops
from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from .. import _ops as T
from .. import nn_conv as tfn
from .._tensor import convert, read
from . import activations
from . import constraints as _constraints
from . import regularizers as _regularizers
from .layers import Layer, in_training
from .layers_conv import _channels_last, _init, _shape, _tuple

__all__ = ["Attention", "AdditiveAttention", "SeparableConv1D", "SeparableConv2D",
           "SeparableConvolution1D", "SeparableConvolution2D", "Wrapper", "ConvLSTM2D"]


def _as_tensor(v: Any, dtype: np.dtype) -> Any:
    t = convert(v)
    if t._data.dtype.kind == "f" and t._data.dtype != dtype:
        return ops.cast(t, dtype=dtype)
    return t


# ----------------------------------------------------------------------------- attention
class Attention(Layer):
    """Dot-product (Luong) attention: ``softmax(q k^T [* scale]) v`` over
    ``[query, value]`` or ``[query, value, key]``.

    >>> import tapegrad.tf as tf
    >>> q = tf.ones((1, 2, 3)); v = tf.ones((1, 4, 3))
    >>> tf.keras.layers.Attention()([q, v]).shape
    TensorShape([1, 2, 3])
    """

    def __init__(self, use_scale: bool = False, score_mode: str = "dot", dropout: float = 0.0,
                 seed: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.use_scale = use_scale
        self.score_mode = score_mode
        self.dropout = dropout
        self.seed = seed
        if self.dropout > 0:
            from .random import SeedGenerator

            self.seed_generator = SeedGenerator(seed=seed)
        if self.score_mode not in ["dot", "concat"]:
            raise hinted(ValueError(with_hint(
                "Invalid value for argument score_mode. Expected one of {'dot', 'concat'}. "
                f"Received: score_mode={score_mode}", "use 'dot' or 'concat'")))
        self.scale: Any = None
        self.concat_score_weight: Any = None

    def _validate_inputs(self, inputs: Any, mask: Any = None) -> None:
        name = type(self).__name__
        if not isinstance(inputs, list):
            raise hinted(ValueError(with_hint(
                f"{name} layer must be called on a list of inputs, namely [query, value] or "
                f"[query, value, key]. Received: inputs={inputs}.",
                "pass [query, value] or [query, value, key]")))
        if len(inputs) < 2 or len(inputs) > 3:
            raise hinted(ValueError(with_hint(
                f"{name} layer accepts inputs list of length 2 or 3, namely [query, value] or "
                f"[query, value, key]. Received length: {len(inputs)}.",
                "pass [query, value] or [query, value, key]")))
        if mask is not None:
            if not isinstance(mask, list):
                raise hinted(ValueError(with_hint(
                    f"{name} layer mask must be a list, namely [query_mask, value_mask]. "
                    f"Received: mask={mask}.", "pass mask=[query_mask, value_mask]")))
            if len(mask) < 2 or len(mask) > 3:
                raise hinted(ValueError(with_hint(
                    f"{name} layer accepts mask list of length 2 or 3. Received: "
                    f"inputs={inputs}, mask={mask}.", "pass mask=[query_mask, value_mask]")))

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        from . import functional

        if isinstance(inputs, tuple):
            inputs = list(inputs)
        if isinstance(inputs, list) and not functional.is_symbolic(inputs):
            dt = self.__dict__["_dtype"]
            inputs = [_as_tensor(v, dt) for v in inputs]
        return super().__call__(inputs, *args, **kwargs)

    def _maybe_build(self, x: Any) -> None:
        if self.built:
            return
        self._validate_inputs(x)
        self.build([(None,) + tuple(v._data.shape[1:]) for v in x])
        self.__dict__["built"] = True

    def build(self, input_shape: Any = None) -> None:
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(), initializer="ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(name="concat_score_weight", shape=(),
                                                       initializer="ones")
        self.__dict__["built"] = True

    def _calculate_scores(self, query: Tensor, key: Tensor) -> Tensor:
        if self.score_mode == "dot":
            scores = T.matmul(query, key, transpose_b=True)
            if self.scale is not None:
                scores = ops.multiply(scores, read(self.scale))
            return scores
        q = ops.expand_dims(query, -2)
        k = ops.expand_dims(key, -3)
        s = ops.add(q, k)
        if self.scale is not None:
            s = ops.multiply(read(self.scale), s)
        return ops.multiply(read(self.concat_score_weight), T.reduce_sum(ops.tanh(s), axis=-1))

    def _apply_scores(self, scores: Tensor, value: Tensor, scores_mask: Any = None,
                      training: bool = False) -> tuple[Tensor, Tensor]:
        if scores_mask is not None:
            padding = ops.logical_not(convert(scores_mask))
            big = 65504.0 if scores._data.dtype == np.float16 else 1.0e9
            if padding._data.ndim == 2:
                padding = ops.expand_dims(padding, -2)
            shifted = ops.subtract(scores, convert(np.asarray(big, scores._data.dtype)))
            scores = ops.where(padding, shifted, scores)
        from .. import nn as tfnn

        weights = tfnn.softmax(scores, axis=-1)
        if training and self.dropout > 0:
            from .random import dropout

            weights = dropout(weights, self.dropout, seed=self.seed_generator)
        return T.matmul(weights, value), weights

    def _calculate_score_mask(self, scores: Tensor, v_mask: Any,
                              use_causal_mask: bool) -> Any:
        if use_causal_mask:
            tq, tv = scores._data.shape[-2], scores._data.shape[-1]
            rows = np.cumsum(np.ones((1, tq, tv), np.int32), axis=-2)
            cols = np.cumsum(np.ones((1, tq, tv), np.int32), axis=-1)
            causal = convert(rows >= cols)
            if v_mask is not None:
                return ops.logical_and(ops.expand_dims(convert(v_mask), -2), causal)
            return causal
        return v_mask

    def call(self, inputs: Any, mask: Any = None, training: Any = None,
             return_attention_scores: bool = False, use_causal_mask: bool = False) -> Any:
        self._validate_inputs(inputs, mask)
        q, v = inputs[0], inputs[1]
        k = inputs[2] if len(inputs) > 2 else v
        q_mask = mask[0] if mask else None
        v_mask = mask[1] if mask else None
        scores = self._calculate_scores(q, k)
        scores_mask = self._calculate_score_mask(scores, v_mask, use_causal_mask)
        out, weights = self._apply_scores(scores, v, scores_mask,
                                          training=in_training(training))
        if q_mask is not None:
            qm = ops.expand_dims(convert(q_mask), -1)
            out = ops.where(qm, out, convert(np.zeros((), out._data.dtype)))
        if return_attention_scores:
            return out, weights
        return out

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        self._validate_inputs(inputs, mask)
        if mask is None or mask[0] is None:
            return None
        return convert(mask[0])

    def compute_output_shape(self, input_shape: Any) -> Any:
        return (*tuple(input_shape[0])[:-1], tuple(input_shape[1])[-1])

    def get_config(self) -> dict[str, Any]:
        cfg = super().get_config()
        cfg.update(use_scale=self.use_scale, score_mode=self.score_mode,
                   dropout=self.dropout, seed=self.seed)
        return cfg


class AdditiveAttention(Attention):
    """Additive (Bahdanau) attention: ``sum(scale * tanh(q + k), -1)`` scores.

    >>> import tapegrad.tf as tf
    >>> layer = tf.keras.layers.AdditiveAttention()
    >>> layer([tf.ones((1, 2, 3)), tf.ones((1, 4, 3))]).shape
    TensorShape([1, 2, 3])
    >>> layer.scale.shape
    TensorShape([3])
    """

    def __init__(self, use_scale: bool = True, dropout: float = 0.0, **kwargs: Any) -> None:
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape: Any = None) -> None:
        dim = input_shape[0][-1]
        self.scale = None
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=[dim],
                                         initializer="glorot_uniform")
        self.__dict__["built"] = True

    def _calculate_scores(self, query: Tensor, key: Tensor) -> Tensor:
        q = ops.expand_dims(query, -2)
        k = ops.expand_dims(key, -3)
        t = ops.tanh(ops.add(q, k))
        if self.use_scale:
            t = ops.multiply(read(self.scale), t)
        return T.reduce_sum(t, axis=-1)

    def get_config(self) -> dict[str, Any]:
        cfg = super().get_config()
        del cfg["score_mode"]
        return cfg


# ----------------------------------------------------------------------------- separable
class _SeparableConv(Layer):
    _rank = 2
    depthwise_regularizer: Any
    pointwise_regularizer: Any
    bias_regularizer: Any
    depthwise_constraint: Any
    pointwise_constraint: Any
    bias_constraint: Any

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1,
                 padding: str = "valid", data_format: Any = None, dilation_rate: Any = 1,
                 depth_multiplier: int = 1, activation: Any = None, use_bias: bool = True,
                 depthwise_initializer: Any = "glorot_uniform",
                 pointwise_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", depthwise_regularizer: Any = None,
                 pointwise_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, depthwise_constraint: Any = None,
                 pointwise_constraint: Any = None, bias_constraint: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        n = self._rank
        self.depth_multiplier = int(depth_multiplier)
        self.filters = int(filters)
        self.kernel_size = _tuple(kernel_size, n, "kernel_size")
        self.strides = _tuple(strides, n, "strides")
        self.dilation_rate = _tuple(dilation_rate, n, "dilation_rate")
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise hinted(ValueError(with_hint(
                "The `padding` argument must be a list/tuple or one of {'valid', 'same'}. "
                f"Received padding={padding}", "use 'valid' or 'same'")))
        self.data_format = "channels_last" if data_format is None else data_format
        self._last = _channels_last(data_format)
        self.activation: Callable[..., Any] = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.depthwise_initializer = _init(depthwise_initializer)
        self.pointwise_initializer = _init(pointwise_initializer)
        self.bias_initializer = _init(bias_initializer)
        self._weight_penalties("depthwise_kernel", "depthwise", depthwise_regularizer,
                               depthwise_constraint)
        self._weight_penalties("pointwise_kernel", "pointwise", pointwise_regularizer,
                               pointwise_constraint)
        self._weight_penalties("bias", "bias", bias_regularizer, bias_constraint)
        if self.filters <= 0:
            raise hinted(ValueError(with_hint(
                "Invalid value for argument `filters`. Expected a strictly positive value. "
                f"Received filters={filters}.", "filters is the number of output channels")))
        self.depthwise_kernel: Any = None
        self.pointwise_kernel: Any = None
        self.bias: Any = None

    def build(self, input_shape: Any = None) -> None:
        shp = _shape(input_shape)
        cin = int(shp[-1] if self._last else shp[1])
        self.__dict__["_cin"] = cin
        self.depthwise_kernel = self.add_weight(
            name="depthwise_kernel", shape=self.kernel_size + (cin, self.depth_multiplier),
            initializer=self.depthwise_initializer)
        self.pointwise_kernel = self.add_weight(
            name="pointwise_kernel",
            shape=(1,) * self._rank + (self.depth_multiplier * cin, self.filters),
            initializer=self.pointwise_initializer)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=(self.filters,),
                                        initializer=self.bias_initializer)
        self.__dict__["built"] = True

    def call(self, inputs: Any) -> Any:
        x = convert(inputs)
        n = self._rank
        if x._data.ndim != n + 2:
            from .layers_conv import _input_spec_error

            raise _input_spec_error(self, n + 2, x)
        dk = read(self.depthwise_kernel)
        pk = read(self.pointwise_kernel)
        strides, dil = self.strides, self.dilation_rate
        if n == 1:  # as Keras on TensorFlow: a 2-d separable conv over a height of 1
            x = ops.expand_dims(x, 1 if self._last else 2)
            dk = ops.expand_dims(dk, 0)
            pk = ops.expand_dims(pk, 0)
            strides, dil = (1,) + strides, (1,) + dil
        fmt = "NHWC" if self._last else "NCHW"
        y = tfn.depthwise_conv2d(x, dk, strides, self.padding.upper(), fmt, dil)
        y = tfn._conv(2, y, pk, (1, 1), "VALID", fmt, (1, 1), "Conv2D")
        if n == 1:
            y = ops.squeeze(y, 1 if self._last else 2)
        if self.use_bias:
            shape = (1,) * (n + 1) + (-1,) if self._last else (1, -1) + (1,) * n
            y = ops.add(y, ops.reshape(read(self.bias), shape))
        return self.activation(y)

    def get_config(self) -> dict[str, Any]:
        from .saving import _initializer_config

        cfg = super().get_config()
        cfg.pop("activity_regularizer", None)
        cfg.update({
            "depth_multiplier": self.depth_multiplier, "filters": self.filters,
            "kernel_size": self.kernel_size, "strides": self.strides,
            "padding": self.padding, "data_format": self.data_format,
            "dilation_rate": self.dilation_rate,
            "activation": getattr(self.activation, "__name__", str(self.activation)),
            "use_bias": self.use_bias,
            "depthwise_initializer": _initializer_config(self.depthwise_initializer),
            "pointwise_initializer": _initializer_config(self.pointwise_initializer),
            "bias_initializer": _initializer_config(self.bias_initializer),
            "depthwise_regularizer": _regularizers.serialize(self.depthwise_regularizer),
            "pointwise_regularizer": _regularizers.serialize(self.pointwise_regularizer),
            "bias_regularizer": _regularizers.serialize(self.bias_regularizer),
            "activity_regularizer": _regularizers.serialize(
                self.__dict__.get("activity_regularizer")),
            "depthwise_constraint": _constraints.serialize(self.depthwise_constraint),
            "pointwise_constraint": _constraints.serialize(self.pointwise_constraint),
            "bias_constraint": _constraints.serialize(self.bias_constraint)})
        return cfg


class SeparableConv2D(_SeparableConv):
    """Depthwise then pointwise 2-d convolution (kernels ``depthwise_kernel``
    ``(kh, kw, in, m)`` and ``pointwise_kernel`` ``(1, 1, in*m, filters)``).

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.SeparableConv2D(4, 3)(tf.ones([1, 5, 5, 2])).shape
    TensorShape([1, 3, 3, 4])
    """

    _rank = 2


class SeparableConv1D(_SeparableConv):
    """Depthwise then pointwise 1-d convolution.

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.SeparableConv1D(4, 3)(tf.ones([1, 6, 2])).shape
    TensorShape([1, 4, 4])
    """

    _rank = 1


SeparableConvolution1D = SeparableConv1D
SeparableConvolution2D = SeparableConv2D


# ----------------------------------------------------------------------------- wrapper
class Wrapper(Layer):
    """Base class of layer wrappers: holds ``self.layer`` (built with the wrapper)."""

    def __init__(self, layer: Layer, **kwargs: Any) -> None:
        if not isinstance(layer, Layer):
            raise hinted(ValueError(with_hint(
                f"Layer {layer} supplied to Wrapper isn't a supported layer type. Please "
                "ensure wrapped layer is a valid Keras layer.", "wrap a keras.layers.Layer")))
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape: Any = None) -> None:
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.__dict__["built"] = True
        self.__dict__["built"] = True

    def get_config(self) -> dict[str, Any]:
        from .saving import serialize_keras_object

        cfg = super().get_config()
        cfg["layer"] = serialize_keras_object(self.layer)
        return cfg


# ----------------------------------------------------------------------------- ConvLSTM2D
class _ConvLSTMCell(Layer):
    """Keras's ``ConvLSTMCell`` (rank 2): the weights and one step."""

    kernel_regularizer: Any
    recurrent_regularizer: Any
    bias_regularizer: Any
    kernel_constraint: Any
    recurrent_constraint: Any
    bias_constraint: Any
    bias: Any
    dropout: float = 0.0
    recurrent_dropout: float = 0.0

    def __init__(self, filters: int, kernel_size: Any, strides: Any, padding: str,
                 data_format: Any, dilation_rate: Any, activation: Any,
                 recurrent_activation: Any, use_bias: bool, kernel_initializer: Any,
                 recurrent_initializer: Any, bias_initializer: Any, unit_forget_bias: bool,
                 penalties: dict[str, Any], seed: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        from .random import SeedGenerator

        self.seed = seed
        self.seed_generator = SeedGenerator(seed=seed)
        self.filters = int(filters)
        self.kernel_size = _tuple(kernel_size, 2, "kernel_size")
        self.strides = _tuple(strides, 2, "strides")
        self.padding = str(padding).lower()
        self.data_format = "channels_last" if data_format is None else data_format
        self._last = _channels_last(data_format)
        self.dilation_rate = _tuple(dilation_rate, 2, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise hinted(ValueError(with_hint(
                "Specifying `strides > 1` is not compatible with `dilation_rate > 1`. Please "
                "provide `strides=1` or `dilation_rate=1`. Received: "
                f"strides={self.strides} and dilation_rate={self.dilation_rate}",
                "use strides or dilation, not both")))
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _init(kernel_initializer)
        self.recurrent_initializer = _init(recurrent_initializer)
        self.bias_initializer = _init(bias_initializer)
        self.unit_forget_bias = bool(unit_forget_bias)
        for w, p in (("kernel", "kernel"), ("recurrent_kernel", "recurrent"), ("bias", "bias")):
            self._weight_penalties(w, p, penalties.get(f"{p}_regularizer"),
                                   penalties.get(f"{p}_constraint"))

    def build(self, input_shape: Any = None) -> None:
        shp = _shape(input_shape)  # (batch, h, w, c) of one step
        cin = int(shp[-1] if self._last else shp[1])
        self.kernel = self.add_weight(shape=self.kernel_size + (cin, 4 * self.filters),
                                      initializer=self.kernel_initializer, name="kernel")
        self.recurrent_kernel = self.add_weight(
            shape=self.kernel_size + (self.filters, 4 * self.filters),
            initializer=self.recurrent_initializer, name="recurrent_kernel")
        if self.use_bias:
            f, init = self.filters, self.bias_initializer
            if self.unit_forget_bias:
                def bias_init(shape: Any, dtype: Any = None) -> Any:
                    return T.concat([init((f,), dtype=dtype),
                                     T.ones((f,), dtype=dtype or "float32"),
                                     init((2 * f,), dtype=dtype)], axis=0)
            else:
                bias_init = init
            self.bias = self.add_weight(shape=(4 * f,), initializer=bias_init, name="bias")
        else:
            self.bias = None
        self.__dict__["built"] = True

    def _conv(self, x: Tensor, w: Tensor, strides: tuple[int, ...], padding: str,
              dilation: tuple[int, ...]) -> Tensor:
        return tfn._conv(2, x, w, strides, padding.upper(), "NHWC" if self._last else "NCHW",
                         dilation, "Conv2D")

    def step(self, x: Tensor, h: Tensor, c: Tensor, masks: Any = None,
             rec_masks: Any = None) -> tuple[Tensor, Tensor]:
        """One step; ``masks``/``rec_masks``: Keras's four dropout masks (i, f, c, o) of the
        input and of the previous output, or ``None``."""
        k = T.split(read(self.kernel), 4, axis=3)
        rk = T.split(read(self.recurrent_kernel), 4, axis=3)
        bs = T.split(read(self.bias), 4) if self.bias is not None else [None] * 4
        shape = (1, 1, 1, -1) if self._last else (1, -1, 1, 1)
        gates = []
        for g in range(4):
            xin = x if masks is None else ops.multiply(x, convert(masks[g]))
            hin = h if rec_masks is None else ops.multiply(h, convert(rec_masks[g]))
            xg = self._conv(xin, k[g], self.strides, self.padding, self.dilation_rate)
            if bs[g] is not None:
                xg = ops.add(xg, ops.reshape(bs[g], shape))
            hg = self._conv(hin, rk[g], (1, 1), "same", (1, 1))
            gates.append(ops.add(xg, hg))
        i = self.recurrent_activation(gates[0])
        f = self.recurrent_activation(gates[1])
        c_new = ops.add(ops.multiply(f, c), ops.multiply(i, self.activation(gates[2])))
        o = self.recurrent_activation(gates[3])
        return ops.multiply(o, self.activation(c_new)), c_new


class ConvLSTM2D(Layer):
    """Keras's 2-d convolutional LSTM over ``(batch, time, rows, cols, channels)``
    (``kernel``/``recurrent_kernel``/``bias`` in a ``conv_lstm_cell``; gates i, f, c, o;
    Keras's dropout masks, from the cell's ``SeedGenerator``).

    >>> import tapegrad.tf as tf
    >>> tf.keras.layers.ConvLSTM2D(2, 3, padding="same")(tf.ones((1, 4, 5, 5, 1))).shape
    TensorShape([1, 5, 5, 2])
    """

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1,
                 padding: str = "valid", data_format: Any = None, dilation_rate: Any = 1,
                 activation: Any = "tanh", recurrent_activation: Any = "sigmoid",
                 use_bias: bool = True, kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 unit_forget_bias: bool = True, kernel_regularizer: Any = None,
                 recurrent_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 recurrent_constraint: Any = None, bias_constraint: Any = None,
                 dropout: float = 0.0, recurrent_dropout: float = 0.0, seed: Any = None,
                 return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, stateful: bool = False, **kwargs: Any) -> None:
        if stateful:
            raise hinted(NotImplementedError(with_hint(
                "ConvLSTM2D(stateful=True) is not supported by tapegrad",
                "pass initial_state= instead")))
        kwargs.pop("unroll", None)
        kwargs.pop("zero_output_for_mask", None)
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        pen = {"kernel_regularizer": kernel_regularizer,
               "recurrent_regularizer": recurrent_regularizer,
               "bias_regularizer": bias_regularizer, "kernel_constraint": kernel_constraint,
               "recurrent_constraint": recurrent_constraint, "bias_constraint": bias_constraint}
        self.cell = _ConvLSTMCell(filters, kernel_size, strides, padding, data_format,
                                  dilation_rate, activation, recurrent_activation, use_bias,
                                  kernel_initializer, recurrent_initializer, bias_initializer,
                                  unit_forget_bias, pen, seed, name="conv_lstm_cell",
                                  dtype=kwargs.get("dtype"))
        self.cell.dropout = min(1.0, max(0.0, float(dropout)))
        self.cell.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.filters = self.cell.filters

    def build(self, input_shape: Any = None) -> None:
        shp = _shape(input_shape)
        if len(shp) != 5:
            raise hinted(ValueError(with_hint(
                f"Input 0 of layer \"{self.name}\" is incompatible with the layer: expected "
                f"ndim=5, found ndim={len(shp)}. Full shape received: {tuple(shp)}",
                "ConvLSTM2D takes (batch, time, rows, cols, channels)")))
        from .layers import _SCOPE

        outer = bool(_SCOPE and _SCOPE[-1] == self.name)
        if not outer:  # weight paths "conv_lstm2d/conv_lstm_cell/kernel", as Keras's
            _SCOPE.append(self.name)
        try:
            self.cell.build((shp[0],) + tuple(shp[2:]))
        finally:
            if not outer:
                _SCOPE.pop()
        self.__dict__["built"] = True

    def call(self, inputs: Any, initial_state: Any = None, mask: Any = None,
             training: Any = None) -> Any:
        x = convert(inputs)
        if x._data.ndim != 5:
            from .layers_conv import _input_spec_error

            raise _input_spec_error(self, 5, x)
        cell = self.cell
        steps = [ops.getitem(x, (slice(None), t)) for t in range(x._data.shape[1])]
        if self.go_backwards:
            steps = steps[::-1]
        if initial_state is None:
            first = cell._conv(steps[0], read(cell.kernel)[..., :cell.filters], cell.strides,
                               cell.padding, cell.dilation_rate)
            zeros = convert(np.zeros(first._data.shape, first._data.dtype))
            h, c = zeros, zeros
        else:
            h, c = (convert(v) for v in initial_state)
        outs = []
        train = in_training(training)
        masks = rec_masks = None
        for xt in steps:
            # Keras's DropoutRNNCell: four masks each, drawn at the first step and kept for
            # the sequence (the input's first, then the recurrent state's)
            if train and 0.0 < cell.dropout < 1.0 and masks is None:
                masks = [self._mask(xt, cell.dropout) for _ in range(4)]
            if train and 0.0 < cell.recurrent_dropout < 1.0 and rec_masks is None:
                rec_masks = [self._mask(h, cell.recurrent_dropout) for _ in range(4)]
            h, c = cell.step(xt, h, c, masks, rec_masks)
            outs.append(h)
        out = ops.stack(outs, axis=1) if self.return_sequences else h
        if self.return_state:
            return [out, h, c]
        return out

    def _mask(self, like: Tensor, rate: float) -> np.ndarray:
        from .random import dropout

        ones = np.ones(like._data.shape, like._data.dtype)
        return np.asarray(dropout(ones, rate, seed=self.cell.seed_generator)._data)

    def get_config(self) -> dict[str, Any]:
        from .saving import _initializer_config

        c = self.cell
        cfg = super().get_config()
        cfg.pop("activity_regularizer", None)
        cfg.update({
            "filters": c.filters, "kernel_size": c.kernel_size, "strides": c.strides,
            "padding": c.padding, "data_format": c.data_format,
            "dilation_rate": c.dilation_rate,
            "activation": getattr(c.activation, "__name__", str(c.activation)),
            "recurrent_activation": getattr(c.recurrent_activation, "__name__",
                                            str(c.recurrent_activation)),
            "use_bias": c.use_bias,
            "kernel_initializer": _initializer_config(c.kernel_initializer),
            "recurrent_initializer": _initializer_config(c.recurrent_initializer),
            "bias_initializer": _initializer_config(c.bias_initializer),
            "unit_forget_bias": c.unit_forget_bias,
            "kernel_regularizer": _regularizers.serialize(c.kernel_regularizer),
            "recurrent_regularizer": _regularizers.serialize(c.recurrent_regularizer),
            "bias_regularizer": _regularizers.serialize(c.bias_regularizer),
            "activity_regularizer": _regularizers.serialize(
                self.__dict__.get("activity_regularizer")),
            "kernel_constraint": _constraints.serialize(c.kernel_constraint),
            "recurrent_constraint": _constraints.serialize(c.recurrent_constraint),
            "bias_constraint": _constraints.serialize(c.bias_constraint),
            "dropout": c.dropout, "recurrent_dropout": c.recurrent_dropout, "seed": c.seed,
            "return_sequences": self.return_sequences, "return_state": self.return_state,
            "go_backwards": self.go_backwards, "stateful": False, "unroll": False,
            "zero_output_for_mask": False})
        return cfg
