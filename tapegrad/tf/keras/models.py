"""``keras.Model`` (subclassing and functional APIs) and ``keras.Sequential``.

Every model has Keras's training methods (``compile``/``fit``/``evaluate``/
``predict``, :mod:`tapegrad.tf.keras.training`), ``summary()`` in Keras 3's
table, ``count_params()`` and ``save_weights``/``load_weights``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from .._tensor import tft
from . import summary as _summary
from .functional import Graph, KerasTensor, _flat, is_symbolic
from .layers import _SCOPE, InputLayer, KerasInput, Layer, _Paused
from .training import Trainer, call_with_training

__all__ = ["Model", "Sequential", "Functional", "load_model", "save_model"]


@contextlib.contextmanager
def _scope(name: str) -> Iterator[None]:
    pushed = not _SCOPE or _SCOPE[-1] != name
    if pushed:
        _SCOPE.append(name)
    try:
        yield
    finally:
        if pushed:
            _SCOPE.pop()


class Model(Trainer, Layer):
    """A layer with training-facing helpers; subclass it and define ``call``.

    Layers assigned as attributes are tracked: their weights appear in
    ``trainable_variables`` in the order the layers were assigned.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> class Net(tf.keras.Model):
    ...     def __init__(self):
    ...         super().__init__(name="net")
    ...         self.hidden = tf.keras.layers.Dense(4, activation="tanh")
    ...         self.out = tf.keras.layers.Dense(1)
    ...     def call(self, x):
    ...         return self.out(self.hidden(x))
    >>> net = Net()
    >>> _ = net(tf.ones([2, 3]))
    >>> [v.name for v in net.trainable_variables]
    ['kernel', 'bias', 'kernel', 'bias']
    >>> net.trainable_variables[0].path.split("/")[0]
    'net'
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is Model and (len(args) >= 2 or "inputs" in kwargs or "outputs" in kwargs):
            return super().__new__(Functional)
        return super().__new__(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if (len(args) >= 2 or "inputs" in kwargs or "outputs" in kwargs) \
                and not isinstance(self, Functional):
            # Keras 3: a Model subclass built as ``CustomModel(inputs, outputs)`` becomes a
            # Functional subclass (its class's Model base is swapped for Functional)
            _inject_functional(type(self))
            Functional.__init__(self, *args, **kwargs)  # type: ignore[arg-type]
            return
        super().__init__(**kwargs)
        self._trainer_state()

    def count_params(self) -> int:
        """The number of weights' elements (Keras's error if the model is not built)."""
        if not self.built or not self.weights:
            if not self.built:
                raise hinted(ValueError(with_hint(
                    f"You tried to call `count_params` on layer '{self.name}', but the layer "
                    "isn't built. You can build it manually via: "
                    f"`{self.name}.build(batch_input_shape)`.",
                    "call the model on data, or give it a keras.Input, first")))
        return int(sum(w._data.size for w in self.weights))

    @property
    def layers(self) -> list[Layer]:
        return list(self._sublayers)

    def get_layer(self, name: str | None = None, index: int | None = None) -> Layer:
        """The layer of that ``name`` or at that ``index`` of ``layers`` (Keras 3)."""
        if index is not None and name is not None:
            raise hinted(ValueError(with_hint(
                f"Provide only a layer name or a layer index. Received: index={index}, "
                f"name={name}.", "pass one of name= or index=")))
        layers = self.layers
        if index is not None:
            if len(layers) <= index:
                raise hinted(ValueError(with_hint(
                    f"Was asked to retrieve layer at index {index} but model only has "
                    f"{len(layers)} layers.", "indices count model.layers from 0")))
            return layers[index]
        if name is not None:
            for layer in layers:
                if layer.name == name:
                    return layer
            raise hinted(ValueError(with_hint(
                f"No such layer: {name}. Existing layers are: "
                f"{list(la.name for la in layers)}.", "check model.summary() for the names")))
        raise hinted(ValueError(with_hint(
            "Provide either a layer name or layer index at `get_layer`.",
            "get_layer(name='dense') or get_layer(index=0)")))

    def build(self, input_shape: Any = None) -> None:
        if input_shape is not None:
            self.__dict__["_build_input_shape"] = tuple(input_shape)
        if input_shape is not None and type(self).call is not Model.call:
            shp = tuple(1 if s is None else int(s) for s in input_shape)
            with _Paused(), _scope(self.name):
                self.__dict__["built"] = True
                self.call(tft(np.zeros(shp, dtype=self.__dict__["_dtype"])))
        self.__dict__["built"] = True

    def _maybe_build(self, x: Any) -> None:
        # the sublayers build themselves inside the first call (in this model's name scope)
        if not self.__dict__.get("built") and hasattr(x, "_data"):
            self.__dict__["_build_input_shape"] = tuple(x._data.shape)
        self.__dict__["built"] = True

    # -- saving (Keras 3 formats: see keras.saving) -----------------------------------------
    def save_weights(self, filepath: Any, overwrite: bool = True) -> None:
        """Write the weights in Keras 3's ``.weights.h5`` layout (needs h5py)."""
        from .saving import save_weights

        save_weights(self, filepath, overwrite=overwrite)

    def load_weights(self, filepath: Any, skip_mismatch: bool = False, **kwargs: Any) -> None:
        """Read weights from a ``.weights.h5`` or ``.keras`` file (Keras 3's or tapegrad's)."""
        from .saving import load_weights

        load_weights(self, filepath, skip_mismatch=skip_mismatch, **kwargs)

    def save(self, filepath: Any, overwrite: bool = True, **kwargs: Any) -> None:
        """Write the model as a Keras 3 ``.keras`` zip (config, metadata, weights)."""
        from .saving import save_model

        save_model(self, filepath, overwrite=overwrite, **kwargs)

    def summary(self, line_length: int | None = None, positions: Any = None,
                print_fn: Any = None, expand_nested: bool = False,
                show_trainable: bool = False, layer_range: Any = None) -> None:
        """Print Keras 3's summary table: layers, output shapes, parameter counts."""
        _summary.print_summary(self, print_fn)


class Sequential(Model):
    """A plain stack of layers, each called on the previous one's output.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"),
    ...                              tf.keras.layers.Dense(1)])
    >>> model(tf.ones([2, 3])).shape
    TensorShape([2, 1])
    >>> len(model.trainable_variables)
    4
    """

    def __init__(self, layers: Any = None, trainable: bool = True, name: str | None = None) -> None:
        super().__init__(trainable=trainable, name=name)
        self.__dict__["_input_shape"] = None
        for layer in layers or []:
            self.add(layer, rebuild=False)
        self._maybe_build_from_input()

    def add(self, layer: Any, rebuild: bool = True) -> None:
        """Append a layer (or an ``Input`` to set the input shape)."""
        if isinstance(layer, KerasInput):
            if is_symbolic(layer) and isinstance(layer, KerasTensor) and layer.node is not None:
                raise hinted(ValueError(with_hint(
                    "Only instances of `keras.Layer` can be added to a Sequential model. "
                    f"Received: {layer} (of type {type(layer)})", "add keras layers")))
            self.__dict__["_input_shape"] = layer.shape
            self.__dict__["_input_tensor"] = layer
            return
        if isinstance(layer, InputLayer):
            self.__dict__["_input_shape"] = layer.input_spec.shape
            return
        if not isinstance(layer, Layer):
            raise hinted(ValueError(with_hint(
                f"Only instances of `keras.Layer` can be added to a Sequential model. Received: "
                f"{layer} (of type {type(layer)})", "add keras layers")))
        if not self._sublayers and self.__dict__.get("_input_shape") is None and \
                layer.__dict__.get("_input_shape_arg") is not None:
            self.__dict__["_input_shape"] = layer.__dict__["_input_shape_arg"]
        self._sublayers.append(layer)
        self.__dict__["built"] = False
        if rebuild:
            self._maybe_build_from_input()

    def pop(self) -> Layer:
        layer = self._sublayers.pop()
        return layer

    def _maybe_build_from_input(self) -> None:
        shp = self.__dict__.get("_input_shape")
        if shp is not None and self._sublayers:
            self.build(shp)

    def build(self, input_shape: Any = None) -> None:
        if input_shape is None:
            raise hinted(ValueError(with_hint("You must provide an `input_shape` argument.",
                                       "e.g. model.build((None, 4))")))
        # Keras 3 builds a functional graph on an input of that shape: ``model.inputs``,
        # ``model.outputs`` and each layer's ``output`` are its symbolic tensors
        kin = self.__dict__.get("_input_tensor")
        if not isinstance(kin, KerasTensor) or tuple(kin.shape) != tuple(input_shape):
            kin = KerasTensor(tuple(input_shape)[1:], dtype=self.__dict__["_dtype"].name,
                              batch_size=tuple(input_shape)[0])
        x: Any = kin
        with _scope(self.name):
            for layer in self._sublayers:
                x = layer(x)
        self.__dict__["_symbolic_io"] = ([kin], _flat(x))
        self.__dict__["_input_shape"] = tuple(input_shape)
        self.__dict__["built"] = True

    def _symbolic(self, which: str) -> list[Any]:
        io = self.__dict__.get("_symbolic_io") if self.built else None
        if io is None:
            raise hinted(AttributeError(with_hint(
                f"Sequential model '{self.name}' has no defined {which} yet.",
                "give the model a keras.Input first (or build it with an input shape)")))
        return list(io[0] if which == "inputs" else io[1])

    @property
    def inputs(self) -> list[Any]:
        return self._symbolic("inputs")

    @property
    def outputs(self) -> list[Any]:
        return self._symbolic("outputs")

    def call(self, inputs: Any, training: Any = None, mask: Any = None, **kwargs: Any) -> Any:
        # (Keras 3's signature, **kwargs included: its error text lists every argument)
        x = inputs
        for layer in self._sublayers:
            x = layer(x) if training is None else call_with_training(layer, x, bool(training))
        return x

    def _maybe_build(self, x: Any) -> None:
        if not self.built and hasattr(x, "_data") and self.__dict__.get("_input_shape") is None:
            self.__dict__["_input_shape"] = (None,) + tuple(x._data.shape[1:])
        self.__dict__["built"] = True

    @property
    def input_shape(self) -> Any:
        return self.__dict__.get("_input_shape")

    @property
    def output_shape(self) -> Any:
        """The last layer's output shape, once the model has been built or called."""
        layers = self.__dict__.get("_sublayers") or []
        shape = layers[-1].__dict__.get("_output_shape") if layers and self.built else None
        if shape is None:
            raise hinted(AttributeError(with_hint(
                f"Sequential model '{self.name}' has no defined output shape yet.",
                "build the model (an Input first) or call it once")))
        return shape


class Functional(Model):
    """``keras.Model(inputs, outputs)``: a model defined by calls on ``keras.Input``s.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> a = tf.keras.Input((2,), name="a"); b = tf.keras.Input((3,), name="b")
    >>> h = tf.keras.layers.Dense(4)(a)
    >>> out1 = tf.keras.layers.Dense(1, name="score")(h)
    >>> out2 = tf.keras.layers.Dense(2, name="extra")(b)
    >>> m = tf.keras.Model(inputs=[a, b], outputs=[out1, out2])
    >>> [o.shape for o in m([tf.ones([5, 2]), tf.ones([5, 3])])]
    [TensorShape([5, 1]), TensorShape([5, 2])]
    >>> m.output_names
    ['score', 'extra']
    """

    def __init__(self, inputs: Any = None, outputs: Any = None, name: str | None = None,
                 trainable: bool = True, **kwargs: Any) -> None:
        if inputs is None or outputs is None:
            raise hinted(TypeError(with_hint(
                "Functional.__init__() missing required arguments: 'inputs' and 'outputs'",
                "keras.Model(inputs=keras.Input(...), outputs=layer(...))")))
        if name is None and type(self) is not Functional:  # a subclass: named after it
            from .layers import _snake, auto_name

            name = auto_name(_snake(type(self).__name__))
        super().__init__(name=name or _functional_name(), trainable=trainable)
        graph = Graph(inputs, outputs)
        self.__dict__["_graph"] = graph
        self.__dict__["_input_layers"] = [InputLayer(shape=kt.shape[1:], name=kt.name)
                                          for kt in graph.input_list]
        order = graph.keras_order()
        self.__dict__["_layer_order"] = order  # Keras' order of inputs and layers
        for layer in order:
            if not isinstance(layer, int):
                self._sublayers.append(layer)
        self.__dict__["built"] = True
        self.__dict__["_input_shape"] = [kt.shape for kt in graph.input_list] \
            if len(graph.input_list) > 1 else graph.input_list[0].shape

    @property
    def layers(self) -> list[Layer]:
        """The input layers and every layer called between the inputs and outputs, in
        Keras' order (by depth from the outputs; operations such as ``a + b`` on
        symbolic tensors are not layers, as in Keras)."""
        from .functional import _OpLayer

        inputs = self.__dict__["_input_layers"]
        return [inputs[la] if isinstance(la, int) else la
                for la in self.__dict__["_layer_order"] if not isinstance(la, _OpLayer)]

    @property
    def inputs(self) -> list[Any]:
        return list(self.__dict__["_graph"].input_list)

    @property
    def outputs(self) -> list[Any]:
        from .functional import _flat

        return list(_flat(self.__dict__["_graph"].outputs))

    @property
    def output_names(self) -> list[str]:
        out = self.__dict__["_graph"].outputs
        if isinstance(out, dict):
            return list(out)
        from .functional import _flat

        return [kt.node.layer.name for kt in _flat(out)]

    @property
    def input_shape(self) -> Any:
        return self.__dict__["_input_shape"]

    @property
    def output_shape(self) -> Any:
        """The outputs' shapes (a list for several outputs, one for a single one)."""
        from .functional import _flat

        shapes = [kt.shape for kt in _flat(self.__dict__["_graph"].outputs)]
        return shapes[0] if len(shapes) == 1 else shapes

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(inputs, (list, tuple, dict)) and not is_symbolic(inputs):
            from .functional import _map
            from .layers import _to_input

            # one tensor per model input (a list of arrays is several inputs, not one)
            inputs = _map(lambda v: _to_input(v, self.__dict__["_dtype"]), inputs)
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs: Any, training: Any = None, mask: Any = None) -> Any:
        return self.__dict__["_graph"].run(inputs, training)

    def build(self, input_shape: Any = None) -> None:
        self.__dict__["built"] = True


def _inject_functional(cls: type) -> type:
    """Keras's ``inject_functional_model_class``: ``Model`` in ``cls``'s bases (at any
    depth) becomes ``Functional``."""
    if cls is Model:
        return Functional
    if cls is object or not issubclass(cls, Model):
        return cls
    cls.__bases__ = tuple(_inject_functional(b) for b in cls.__bases__)
    return cls


def _functional_name() -> str:
    from .layers import auto_name

    return auto_name("functional")

def load_model(filepath: Any, custom_objects: Any = None, compile: bool = True,
               safe_mode: bool = True) -> Any:
    """``keras.models.load_model``: see :func:`tapegrad.tf.keras.saving.load_model`."""
    from .saving import load_model as _load

    return _load(filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode)


def save_model(model: Any, filepath: Any, overwrite: bool = True, **kwargs: Any) -> None:
    """``keras.models.save_model``: see :func:`tapegrad.tf.keras.saving.save_model`."""
    from .saving import save_model as _save

    _save(model, filepath, overwrite=overwrite, **kwargs)
