"""``keras.layers``: ``Layer`` and ``Dense`` (Keras 3 semantics).

Layers are built on their first call (or by ``build(input_shape)``): that is
when the weights are created, with Keras's default initialisers
(``glorot_uniform`` kernel, ``zeros`` bias) drawn from ``tf.random``.
"""

from __future__ import annotations

import re
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import ops
from ..._core import mode
from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from .. import dtypes as _dt
from .._ops import matmul as _tf_matmul
from .._tensor import VariableBase, convert, read
from . import activations, initializers
from . import constraints as _constraints
from . import mixed_precision as _mp
from . import regularizers as _regularizers
from .variables import KerasVariable

__all__: list[str] = ["Layer", "Dense", "InputLayer", "Input", "KerasInput", "auto_name"]

_STATE = mode.STATE
_NAME_COUNTS: dict[str, int] = {}
# Keras's name scope: weights created while a layer runs get "outer/inner/weight" paths
_SCOPE: list[str] = []
# Keras's call context: a ``training=`` given to an outer call reaches the layers inside
TRAINING: list[bool] = []


def in_training(training: Any) -> bool:
    """A layer's effective ``training`` flag: its own argument, else the outer call's."""
    if training is not None:
        return bool(training)
    return TRAINING[-1] if TRAINING else False


_TAKES_TRAINING: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


def _takes_training(layer: Any) -> bool:
    """Whether ``layer.call`` accepts ``training`` (cached per function: ``fit`` asks on
    every step, and ``inspect.signature`` costs more than a small layer's forward)."""
    import inspect

    call = layer.call
    fn = getattr(call, "__func__", None)
    if fn is not None:
        known = _TAKES_TRAINING.get(fn)
        if known is not None:
            return known
    try:
        params = inspect.signature(call).parameters
    except (TypeError, ValueError):
        return True
    takes = "training" in params or any(p.kind == p.VAR_KEYWORD for p in params.values())
    if fn is not None:
        _TAKES_TRAINING[fn] = takes
    return takes


def _snake(name: str) -> str:
    # Keras's to_snake_case: a digit does not start a word ("Conv2D" -> "conv2d")
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()


def auto_name(prefix: str) -> str:
    """Keras's unique names: ``dense``, ``dense_1``, ``dense_2`` ..."""
    n = _NAME_COUNTS.get(prefix, 0)
    _NAME_COUNTS[prefix] = n + 1
    return prefix if n == 0 else f"{prefix}_{n}"


# how many dummy forward passes (building, output shapes) are running: Keras computes
# those symbolically, so a layer drawing random numbers (RandomFlip) must not draw in them
SHAPE_PASS: list[int] = [0]
# how many weights have a regularizer: while none does, ``layer.losses`` skips looking
_REGULARIZED: list[int] = [0]


class _Paused:
    """Run a dummy forward pass (building weights) without recording anything."""

    def __enter__(self) -> None:
        self._prev = (_STATE.tapes, _STATE.grad_enabled)
        _STATE.tapes = ()
        _STATE.grad_enabled = False
        SHAPE_PASS[0] += 1

    def __exit__(self, *exc: object) -> None:
        _STATE.tapes, _STATE.grad_enabled = self._prev
        SHAPE_PASS[0] -= 1


def _to_input(x: Any, dtype: np.dtype) -> Any:
    """Keras's input conversion: data becomes tensors, floating inputs take the layer dtype."""
    if isinstance(x, Tensor):
        if isinstance(x, VariableBase):
            x = read(x)
        if x._data.dtype.kind == "f" and x._data.dtype != dtype:
            return ops.cast(x, dtype=dtype)
        return convert(x)
    if isinstance(x, (list, tuple, dict)):
        if isinstance(x, dict) or any(isinstance(v, Tensor) for v in x):
            return x
    arr = np.asarray(x)
    if arr.dtype.kind in "f":
        return convert(arr.astype(dtype))
    if arr.dtype.kind in "iub":
        return convert(arr)
    return x


class Layer:
    """Base class of layers: weights, building, naming, ``get_weights``/``set_weights``.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> class Scale(tf.keras.layers.Layer):
    ...     def build(self, input_shape):
    ...         self.s = self.add_weight(shape=(), initializer="ones", name="s")
    ...     def call(self, x):
    ...         return x * self.s
    >>> layer = Scale()
    >>> layer(tf.constant([1.0, 2.0])).numpy()
    array([1., 2.], dtype=float32)
    >>> [w.name for w in layer.trainable_weights]
    ['s']
    """

    built: bool
    _sublayers: list[Layer]
    _own_weights: list[KerasVariable]

    def __init__(self, trainable: bool = True, name: str | None = None, dtype: Any = None,
                 **kwargs: Any) -> None:
        d = self.__dict__
        d["_name"] = name or auto_name(_snake(type(self).__name__))
        d["_trainable"] = bool(trainable)
        d["built"] = False
        d.setdefault("_own_weights", [])
        d.setdefault("_sublayers", [])
        if dtype is None and not _mp._GLOBAL:
            d["_dtype"] = np.dtype(np.float32)
        else:  # a dtype policy: its variable dtype (a mixed one computes in it too)
            dtype, pol = _mp.policy_of(dtype)
            if pol is None and dtype is None and _mp._GLOBAL and _mp._GLOBAL[0].is_mixed:
                pol = _mp._GLOBAL[0]
            d["_policy"] = pol
            if dtype is None:
                dflt = _mp.default_variable_dtype()
                d["_dtype"] = np.dtype(np.float32) if dflt is None else dflt
            else:
                d["_dtype"] = _dt.np_dtype(dtype)
        shape = kwargs.pop("input_shape", None)
        dim = kwargs.pop("input_dim", None)
        if shape is None and dim is not None:
            shape = (dim,)
        if shape is not None:
            warnings.warn(
                "Do not pass an `input_shape`/`input_dim` argument to a layer. When using "
                "Sequential models, prefer using an `Input(shape)` object as the first layer "
                "in the model instead.",
                UserWarning, stacklevel=3)
        d["_input_shape_arg"] = None if shape is None else (None,) + tuple(shape)
        act = kwargs.pop("activity_regularizer", None)
        d["activity_regularizer"] = None if act is None else _regularizers.get(act)
        if kwargs:
            raise hinted(TypeError(with_hint(
                f"Unrecognized keyword arguments passed to {type(self).__name__}: {kwargs}",
                "check the argument names")))

    # ------------------------------------------------------------------ tracking
    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if not name.startswith("_"):
            subs = d.setdefault("_sublayers", [])
            items = value if isinstance(value, (list, tuple)) else [value]
            for v in items:
                if isinstance(v, Layer) and v is not self and all(v is not s for s in subs):
                    subs.append(v)
        object.__setattr__(self, name, value)

    @property
    def name(self) -> str:
        return self.__dict__["_name"]

    @property
    def dtype(self) -> str:
        return str(self.__dict__["_dtype"].name)

    def _node_tensors(self, which: str) -> Any:
        """Keras 3's ``input`` / ``output``: the first symbolic call's tensors (one
        tensor unwrapped)."""
        nodes = self.__dict__.get("_inbound_nodes")
        if not nodes:
            raise hinted(AttributeError(with_hint(
                f"The layer {self.name} has never been called and thus has no defined {which}.",
                "call the layer on a keras.Input (or build a model with an Input) first")))
        from .functional import _flat

        node = nodes[0]
        values = _flat(node.inputs if which == "input" else node.outputs)
        return values[0] if len(values) == 1 else values

    @property
    def input(self) -> Any:
        return self._node_tensors("input")

    @property
    def output(self) -> Any:
        return self._node_tensors("output")

    @property
    def dtype_policy(self) -> Any:
        """The layer's ``keras.mixed_precision.DTypePolicy`` (a mixed one only reported:
        tapegrad computes in the variable dtype)."""
        pol = self.__dict__.get("_policy")
        return pol if pol is not None else _mp.DTypePolicy(self.dtype)

    @property
    def compute_dtype(self) -> str:
        """The dtype the layer computes in (its variable dtype: tapegrad does not
        autocast under a mixed policy)."""
        return self.dtype

    @property
    def variable_dtype(self) -> str:
        return self.dtype

    def _policy_name(self) -> str:
        pol = self.__dict__.get("_policy")
        return self.dtype if pol is None else pol.name

    @property
    def trainable(self) -> bool:
        return self.__dict__["_trainable"]

    @trainable.setter
    def trainable(self, value: bool) -> None:
        self.__dict__["_trainable"] = bool(value)
        for s in self._sublayers:
            s.trainable = value

    # ------------------------------------------------------------------ weights
    def add_weight(self, shape: Any = None, initializer: Any = "glorot_uniform",
                   dtype: Any = None, trainable: bool = True, name: str | None = None,
                   regularizer: Any = None, constraint: Any = None,
                   **kwargs: Any) -> KerasVariable:
        """Create a weight of this layer (a :class:`KerasVariable`).

        ``regularizer`` adds ``regularizer(weight)`` to ``layer.losses`` (while the weight
        is trainable); ``constraint`` is applied by the optimizer after each step. A
        built-in layer's ``kernel_regularizer=``/``kernel_constraint=``... arguments reach
        its weights this way.
        """
        shp = () if shape is None else tuple(int(s) for s in shape)
        npd = self.__dict__["_dtype"] if dtype is None else _dt.np_dtype(dtype)
        init = initializers.get(initializer)
        value = init(shp, dtype=_dt.from_numpy(npd))
        wname = name or f"variable_{len(self._own_weights)}"
        scope = _SCOPE if _SCOPE and _SCOPE[-1] == self.name else _SCOPE + [self.name]
        reg = _regularizers.get(regularizer)
        con = _constraints.get(constraint)
        pen = self.__dict__.get("_penalties")
        if pen and wname in pen:  # the layer's own kernel_regularizer= ... arguments
            r, c = pen[wname]
            reg = reg if reg is not None else r
            con = con if con is not None else c
        v = KerasVariable(value, name=wname, path="/".join(scope + [wname]),
                          trainable=trainable, dtype=_dt.from_numpy(npd))
        if reg is not None:
            v.__dict__["_regularizer"] = reg
            _REGULARIZED[0] += 1
        if con is not None:
            v.__dict__["_keras_constraint"] = con
        self._own_weights.append(v)
        return v

    def _weight_penalties(self, weight: str, prefix: str, regularizer: Any,
                          constraint: Any) -> None:
        """Record a built-in layer's ``{prefix}_regularizer``/``{prefix}_constraint``
        arguments (public attributes, as Keras's) for its weight named ``weight``."""
        r = _regularizers.get(regularizer)
        c = _constraints.get(constraint)
        object.__setattr__(self, f"{prefix}_regularizer", r)
        object.__setattr__(self, f"{prefix}_constraint", c)
        if r is not None or c is not None:
            self.__dict__.setdefault("_penalties", {})[weight] = (r, c)

    def _penalty_config(self, *prefixes: str) -> dict[str, Any]:
        """The ``{prefix}_regularizer`` ... ``{prefix}_constraint`` entries of a config,
        serialized as Keras does (regularizers first, then constraints)."""
        d = self.__dict__
        out: dict[str, Any] = {}
        for kind, ser in (("regularizer", _regularizers.serialize),
                          ("constraint", _constraints.serialize)):
            for p in prefixes:
                out[f"{p}_{kind}"] = ser(d.get(f"{p}_{kind}"))
        return out

    def _all_weights(self) -> list[KerasVariable]:
        out: list[KerasVariable] = []
        seen: set[int] = set()
        for w in self._own_weights:
            if id(w) not in seen:
                seen.add(id(w))
                out.append(w)
        for layer in self._sublayers:
            for w in layer._all_weights():
                if id(w) not in seen:
                    seen.add(id(w))
                    out.append(w)
        return out

    @property
    def weights(self) -> list[KerasVariable]:
        return self._all_weights()

    variables = weights

    @property
    def trainable_weights(self) -> list[KerasVariable]:
        if not self.trainable:
            return []
        out = [w for w in self._own_weights if w.trainable]
        subs = self._sublayers
        if not subs:
            return out
        seen = {id(w) for w in out}
        for layer in subs:
            for w in layer.trainable_weights:
                if id(w) not in seen:
                    seen.add(id(w))
                    out.append(w)
        return out

    @property
    def trainable_variables(self) -> list[KerasVariable]:
        return self.trainable_weights

    @property
    def non_trainable_weights(self) -> list[KerasVariable]:
        tw = {id(w) for w in self.trainable_weights}
        return [w for w in self.weights if id(w) not in tw]

    non_trainable_variables = non_trainable_weights

    def get_weights(self) -> list[np.ndarray]:
        """The weights' values as NumPy arrays (copies)."""
        return [np.array(w._data, copy=True) for w in self.weights]

    def set_weights(self, weights: Any) -> None:
        """Set every weight from a list of arrays (Keras's checks and messages)."""
        ws = self.weights
        weights = list(weights)
        if len(weights) != len(ws):
            raise hinted(ValueError(with_hint(
                f"You called `set_weights(weights)` on layer '{self.name}' with a weight list "
                f"of length {len(weights)}, but the layer was expecting {len(ws)} weights.",
                "pass one array per weight, in the order of layer.weights")))
        for w, value in zip(ws, weights):
            arr = np.asarray(value._data if isinstance(value, Tensor) else value)
            if arr.shape != w._data.shape:
                raise hinted(ValueError(with_hint(
                    f"Layer {self.name} weight shape {tuple(w._data.shape)} is not compatible "
                    f"with provided weight shape {tuple(arr.shape)}.",
                    f"weight {w.path} needs shape {tuple(w._data.shape)}")))
        for w, value in zip(ws, weights):
            arr = np.asarray(value._data if isinstance(value, Tensor) else value)
            w.assign(arr.astype(w._data.dtype))

    # ------------------------------------------------------------------ calling
    def build(self, input_shape: Any = None) -> None:
        self.__dict__["built"] = True

    def call(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        raise hinted(NotImplementedError(with_hint(
            f"Layer {type(self).__name__} does not have a `call()` method implemented.",
            "define call(self, inputs) in your layer")))

    def _maybe_build(self, x: Any) -> None:
        if self.built:
            return
        shape = x._data.shape if isinstance(x, Tensor) else None
        self.build(None if shape is None else (None,) + tuple(shape[1:]) if len(shape) else ())
        self.__dict__["built"] = True

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(inputs, Tensor):
            from . import functional  # the functional API: calls on keras.Input record a graph

            if functional.is_symbolic(inputs):
                return functional.symbolic_call(self, inputs, args, kwargs)
        if kwargs and "training" in kwargs:
            from .functional import accepts_training

            if not accepts_training(self):
                kwargs.pop("training")  # as Keras: passed only to a call() that takes it
        if not _SCOPE:  # an outermost call starts with no added losses (Keras's add_loss)
            self._clear_losses()
        x = _to_input(inputs, self.__dict__["_dtype"])
        training = kwargs.get("training")
        if "training" in kwargs and not _takes_training(self):
            del kwargs["training"]
        _SCOPE.append(self.name)
        if training is not None:
            TRAINING.append(bool(training))
        try:
            self._maybe_build(x)
            try:
                out = self.call(x, *args, **kwargs)
            except Exception as e:
                # Keras frames an error escaping call(): "Exception encountered when calling"
                from ._context import call_context_error

                new = call_context_error(self, e, (x, *args), kwargs)
                if new is None:
                    raise
                raise new.with_traceback(e.__traceback__) from None
            if "_output_shape" not in self.__dict__ and isinstance(out, Tensor):
                self.__dict__["_output_shape"] = tuple(out._data.shape)  # for summary()
            if self.__dict__.get("activity_regularizer") is not None:
                self._activity_losses(out)
            return out
        finally:
            _SCOPE.pop()
            if training is not None:
                TRAINING.pop()

    def add_loss(self, loss: Any) -> None:
        """Add a loss (e.g. an activity penalty) to ``layer.losses`` for this call."""
        self.__dict__.setdefault("_added_losses", []).append(loss)

    def _activity_losses(self, outputs: Any) -> None:
        """Keras's activity penalty: ``regularizer(output) / batch_size`` per output."""
        reg = self.__dict__["activity_regularizer"]
        from .training import _leaves

        for o in _leaves(outputs):
            if not isinstance(o, Tensor):
                continue
            loss = reg(o)
            if o._data.ndim > 0:
                from .._ops import divide_no_nan

                lt = convert(loss)
                loss = divide_no_nan(lt, convert(np.asarray(o._data.shape[0],
                                                            lt._data.dtype)))
            self.add_loss(loss)

    @property
    def losses(self) -> list[Any]:
        """The losses added by ``add_loss`` in the last call (this layer's then its
        sublayers'), then the weight regularization penalties of the trainable weights
        (computed now, as Keras 3 does)."""
        out = self._call_losses()
        if _REGULARIZED[0]:
            for w in self.trainable_weights:
                reg = w.__dict__.get("_regularizer")
                if reg is not None:
                    out.append(reg(w))
        return out

    def _call_losses(self) -> list[Any]:
        out = list(self.__dict__.get("_added_losses", ()))
        for layer in self._sublayers:
            if type(layer).losses is not Layer.losses:
                out.extend(layer.losses)
            elif layer.__dict__.get("_added_losses") or layer._sublayers:
                out.extend(layer._call_losses())
        return out

    def _clear_losses(self) -> None:
        self.__dict__["_added_losses"] = []
        for layer in self._sublayers:
            layer._clear_losses()

    def compute_output_shape(self, input_shape: Any) -> Any:
        from .._tensor import tft

        shp = tuple(1 if s is None else int(s) for s in input_shape)
        with _Paused():
            y = self(tft(np.zeros(shp, dtype=self.__dict__["_dtype"])))
        return (input_shape[0],) + tuple(y._data.shape[1:])

    def count_params(self) -> int:
        return int(sum(w._data.size for w in self.weights))

    def get_config(self) -> dict[str, Any]:
        cfg: dict[str, Any] = {"name": self.name, "trainable": self.trainable,
                               "dtype": self.dtype}
        act = self.__dict__.get("activity_regularizer")
        if act is not None:
            cfg["activity_regularizer"] = _regularizers.serialize(act)
        return cfg

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


class Dense(Layer):
    """A densely connected layer: ``activation(inputs @ kernel + bias)``.

    Parameters
    ----------
    units : int
        Output size.
    activation : str or callable, optional
        ``None`` (linear), ``"relu"``, ``"sigmoid"``, ``"tanh"``, ``"softmax"``...
    use_bias : bool, default True
    kernel_initializer, bias_initializer
        Keras's defaults: ``"glorot_uniform"`` and ``"zeros"``.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> layer = tf.keras.layers.Dense(3, activation="relu")
    >>> y = layer(tf.ones([2, 4]))
    >>> y.shape, layer.kernel.shape, layer.bias.shape
    (TensorShape([2, 3]), TensorShape([4, 3]), TensorShape([3]))
    """

    bias: KerasVariable | None

    def __init__(self, units: int, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, lora_rank: Any = None, **kwargs: Any) -> None:
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if int(units) <= 0:
            raise hinted(ValueError(with_hint(
                f"Received an invalid value for `units`, expected a positive integer. Received: "
                f"units={units}", "units is the number of outputs")))
        self.units = int(units)
        self.activation: Callable[..., Any] = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self._weight_penalties("kernel", "kernel", kernel_regularizer, kernel_constraint)
        self._weight_penalties("bias", "bias", bias_regularizer, bias_constraint)
        self.__dict__["_in_dim"] = None

    @property
    def kernel(self) -> KerasVariable:
        k = self.__dict__.get("_kernel")
        if k is None:
            raise hinted(AttributeError(with_hint(
                "You must build the layer before accessing `kernel`.",
                "call the layer on an input, or layer.build(input_shape), first")))
        return k

    def build(self, input_shape: Any = None) -> None:
        if input_shape is None:
            raise hinted(ValueError(with_hint("Dense.build needs an input shape",
                                       "e.g. layer.build((None, 4))")))
        shp = tuple(input_shape.as_list() if hasattr(input_shape, "as_list") else input_shape)
        in_dim = shp[-1]
        if in_dim is None:
            raise hinted(ValueError(with_hint(
                "The last dimension of the inputs to a Dense layer should be defined. Found "
                "None.", "give the input's feature size")))
        self.__dict__["_in_dim"] = int(in_dim)
        self.__dict__["_kernel"] = self.add_weight(
            shape=(int(in_dim), self.units), initializer=self.kernel_initializer, name="kernel")
        if self.use_bias:
            self.bias = self.add_weight(shape=(self.units,), initializer=self.bias_initializer,
                                        name="bias")
        else:
            self.bias = None
        self.__dict__["built"] = True

    def call(self, inputs: Any) -> Any:
        x = inputs if isinstance(inputs, Tensor) else convert(inputs)
        in_dim = self.__dict__["_in_dim"]
        if x._data.ndim < 1 or x._data.shape[-1] != in_dim:
            from ._context import mark_input_check

            raise mark_input_check(hinted(ValueError(with_hint(
                f"Input 0 with name 'None' of layer '{self.name}' is incompatible with the "
                f"layer: expected axis -1 of input shape to have value {in_dim}, but received "
                f"input with shape {tuple(x._data.shape)}",
                f"this layer was built for {in_dim} input features"))), self)
        if x._data.ndim == 2:
            y = _tf_matmul(x, self.kernel)
        else:
            y = ops.matmul(x, read(self.kernel))
        if self.use_bias:
            y = y + self.bias
        return self.activation(y)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return tuple(input_shape[:-1]) + (self.units,)

    def get_config(self) -> dict[str, Any]:
        cfg = super().get_config()
        cfg.update(units=self.units, use_bias=self.use_bias,
                   activation=getattr(self.activation, "__name__", str(self.activation)))
        return cfg


class KerasInput:
    """What ``keras.Input(shape)`` returns: the input shape for a ``Sequential`` model."""

    def __init__(self, shape: Any, batch_size: int | None = None, dtype: Any = None,
                 name: str | None = None) -> None:
        self.shape = (batch_size,) + tuple(None if s is None else int(s) for s in shape)
        self.dtype = "float32" if dtype is None else _dt.as_dtype(dtype).name
        self.name = name or auto_name("input_layer")

    def __repr__(self) -> str:
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, name={self.name}>"


def Input(shape: Any = None, batch_size: int | None = None, dtype: Any = None,
          name: str | None = None, **kwargs: Any) -> KerasInput:
    """An input placeholder: use it as the first element of a ``Sequential``.

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(2)])
    >>> [tuple(w.shape) for w in m.weights]
    [(3, 2), (2,)]
    """
    from .functional import Input as _symbolic_input

    return _symbolic_input(shape, batch_size, dtype, name, **kwargs)


class InputLayer(Layer):
    """An explicit input layer (only records the input shape)."""

    def __init__(self, shape: Any = None, batch_size: int | None = None, dtype: Any = None,
                 name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name=name)
        self.input_spec = KerasInput(() if shape is None else shape, batch_size, dtype, name)

    def call(self, inputs: Any) -> Any:
        return inputs


# recurrent and attention layers live in their own module (Keras weight layouts)
from .layers_rnn import (  # noqa: E402
    GRU,
    LSTM,
    RNN,
    Bidirectional,
    GRUCell,
    LSTMCell,
    MultiHeadAttention,
    SimpleRNN,
    SimpleRNNCell,
)

__all__ += ["GRU", "LSTM", "RNN", "Bidirectional", "GRUCell", "LSTMCell", "MultiHeadAttention",
            "SimpleRNN", "SimpleRNNCell"]

# conv nets (issue 12): convolution, pooling, normalization, dropout, reshaping, merging
from . import layers_conv as _layers_conv  # noqa: E402
from .layers_conv import *  # noqa: E402,F403

__all__ = __all__ + [n for n in _layers_conv.__all__ if n not in __all__]

# Keras's Dropout with TensorFlow's own random masks (tf/keras/_dropout.py); the conv module
# re-exports the same class
from ._dropout import Dropout  # noqa: E402

if "Dropout" not in __all__:
    __all__ += ["Dropout"]

# Keras's noise layers (GaussianNoise, GaussianDropout, AlphaDropout), masks from SeedGenerators
from ._noise import AlphaDropout, GaussianDropout, GaussianNoise  # noqa: E402

__all__ += ["AlphaDropout", "GaussianDropout", "GaussianNoise"]

# preprocessing, wrappers and small layers (Rescaling, Normalization, TimeDistributed, Dot ...)
from . import layers_more as _layers_more  # noqa: E402
from .layers_more import *  # noqa: E402,F403

__all__ += [n for n in _layers_more.__all__ if n not in __all__]

# attention, separable convolutions and the Wrapper base (tf/keras/layers_extra.py)
from . import layers_extra as _layers_extra  # noqa: E402
from .layers_extra import *  # noqa: E402,F403

__all__ += [n for n in _layers_extra.__all__ if n not in __all__]

# random image augmentation: RandomContrast, RandomBrightness, RandomCrop (layers_augment.py)
from .layers_augment import (  # noqa: E402
    RandomBrightness,
    RandomContrast,
    RandomCrop,
    RandomRotation,
    RandomTranslation,
    RandomZoom,
)

__all__ += ["RandomContrast", "RandomBrightness", "RandomCrop", "RandomTranslation",
            "RandomRotation", "RandomZoom"]
