"""``keras.Model`` (subclassing API) and ``keras.Sequential``."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from .._tensor import tft
from .layers import _SCOPE, InputLayer, KerasInput, Layer, _Paused

__all__ = ["Model", "Sequential", "load_model", "save_model"]


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


class Model(Layer):
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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if len(args) >= 2 or "inputs" in kwargs or "outputs" in kwargs:
            raise hinted(NotImplementedError(with_hint(
                "the functional Model(inputs, outputs) API is not implemented",
                "subclass tf.keras.Model and define call(), or use tf.keras.Sequential")))
        super().__init__(**kwargs)

    @property
    def layers(self) -> list[Layer]:
        return list(self._sublayers)

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

    def summary(self, print_fn: Any = print) -> None:
        """Print the layers and their parameter counts."""
        lines = [f'Model: "{self.name}"']
        for layer in self.layers:
            lines.append(f"  {layer.name} ({type(layer).__name__}): {layer.count_params()} params")
        lines.append(f"Total params: {self.count_params()}")
        print_fn("\n".join(lines))


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
            self.__dict__["_input_shape"] = layer.shape
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
        shp = tuple(1 if s is None else int(s) for s in input_shape)
        with _Paused(), _scope(self.name):
            x: Any = tft(np.zeros(shp, dtype=self.__dict__["_dtype"]))
            for layer in self._sublayers:
                x = layer(x)
        self.__dict__["_input_shape"] = tuple(input_shape)
        self.__dict__["built"] = True

    def call(self, inputs: Any, training: Any = None, mask: Any = None, **kwargs: Any) -> Any:
        x = inputs
        for layer in self._sublayers:
            # Keras passes `training` on to the layers whose call takes it (Dropout ...)
            takes = training is not None and "training" in inspect.signature(layer.call).parameters
            x = layer(x, training=training) if takes else layer(x)
        return x

    def _maybe_build(self, x: Any) -> None:
        self.__dict__["built"] = True


def load_model(filepath: Any, custom_objects: Any = None, compile: bool = True,
               safe_mode: bool = True) -> Any:
    """``keras.models.load_model``: see :func:`tapegrad.tf.keras.saving.load_model`."""
    from .saving import load_model as _load

    return _load(filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode)


def save_model(model: Any, filepath: Any, overwrite: bool = True, **kwargs: Any) -> None:
    """``keras.models.save_model``: see :func:`tapegrad.tf.keras.saving.save_model`."""
    from .saving import save_model as _save

    _save(model, filepath, overwrite=overwrite, **kwargs)
