"""``keras.saving``: Keras 3's ``.weights.h5`` and ``.keras`` files, and custom-object registration.

``model.save_weights("m.weights.h5")`` writes Keras 3's HDF5 layout: one
group per layer, named by where Keras finds the layer (``layers/dense``,
``layers/dense_1`` in a ``Sequential``; the attribute name, then
``layers/<class>`` for a subclassed model), holding ``vars/0``, ``vars/1`` ...
(the layer's own variables, trainable first) and a ``name`` attribute.
``model.save("m.keras")`` writes Keras 3's zip: ``metadata.json``,
``config.json`` (the model's config as Keras writes it) and
``model.weights.h5``.  Real Keras 3.15 reads both and tapegrad reads files
real Keras wrote, for ``Sequential`` models and registered subclassed models
of the layers tapegrad has (``Dense``, ``InputLayer``).

Loading runs no code from the file: configs are JSON, and classes are found
only among tapegrad's layers and models, objects registered with
:func:`register_keras_serializable`, ``custom_objects`` and
:class:`custom_object_scope` (real Keras may also import a module named in the
config; tapegrad never does).  HDF5 links, external and virtual datasets are
refused, and every shape is checked before anything is assigned, so a failed
``load_weights`` changes no weight.

HDF5 needs ``h5py``: ``pip install 'tapegrad[h5]'``.

>>> import tapegrad.tf as tf
>>> @tf.keras.saving.register_keras_serializable(package="Docs")
... class Twice(tf.keras.layers.Layer):
...     def call(self, x):
...         return 2 * x
>>> tf.keras.saving.get_registered_name(Twice)
'Docs>Twice'
"""

from __future__ import annotations

import datetime
import io
import json
import os
import warnings
import zipfile
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from . import activations, initializers
from .layers import Dense, InputLayer, KerasInput, Layer

__all__ = ["register_keras_serializable", "get_registered_name", "get_registered_object",
           "get_custom_objects", "custom_object_scope", "CustomObjectScope",
           "serialize_keras_object", "deserialize_keras_object", "load_model", "save_model",
           "save_weights", "load_weights"]

KERAS_VERSION = "3.15.1"
_CONFIG = "config.json"
_METADATA = "metadata.json"
_WEIGHTS = "model.weights.h5"


def _h5py() -> Any:
    try:
        import h5py
    except ImportError:
        raise hinted(ImportError(with_hint(
            "Keras weights files (.weights.h5, .keras) need the h5py package, which is not "
            "installed.", "install tapegrad's optional extra: pip install 'tapegrad[h5]'"
        ))) from None
    return h5py


# ---------------------------------------------------------------------------- registration
_GLOBAL_CUSTOM_OBJECTS: dict[str, Any] = {}
_GLOBAL_CUSTOM_NAMES: dict[Any, str] = {}
_SCOPES: list[dict[str, Any]] = []


def register_keras_serializable(package: str = "Custom", name: str | None = None
                                ) -> Callable[[Any], Any]:
    """Register a class or function so that ``load_model`` can find it by name.

    The registered name is ``"package>name"`` (``name`` defaults to the
    object's ``__name__``), as in Keras.
    """
    def decorator(arg: Any) -> Any:
        class_name = name if name is not None else arg.__name__
        registered = f"{package}>{class_name}"
        if isinstance(arg, type) and not hasattr(arg, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() method.")
        _GLOBAL_CUSTOM_OBJECTS[registered] = arg
        _GLOBAL_CUSTOM_NAMES[arg] = registered
        return arg

    return decorator


def get_registered_name(obj: Any) -> str:
    """The name ``obj`` was registered under, else its ``__name__``."""
    return _GLOBAL_CUSTOM_NAMES.get(obj, getattr(obj, "__name__", type(obj).__name__))


def get_custom_objects() -> dict[str, Any]:
    """The global dict of registered objects (``"package>name" -> object``)."""
    return _GLOBAL_CUSTOM_OBJECTS


def get_registered_object(name: str, custom_objects: dict[str, Any] | None = None,
                          module_objects: dict[str, Any] | None = None) -> Any:
    """The object registered (or passed in a scope / ``custom_objects``) under ``name``."""
    for table in [*reversed(_SCOPES), custom_objects or {}, _GLOBAL_CUSTOM_OBJECTS,
                  module_objects or {}]:
        if name in table:
            return table[name]
    return None


class CustomObjectScope:
    """``with custom_object_scope({"Net": Net}):`` -- extra names for deserialization."""

    def __init__(self, custom_objects: dict[str, Any]) -> None:
        self.custom_objects = dict(custom_objects or {})

    def __enter__(self) -> CustomObjectScope:
        _SCOPES.append(self.custom_objects)
        return self

    def __exit__(self, *exc: Any) -> None:
        _SCOPES.remove(self.custom_objects)


custom_object_scope = CustomObjectScope


# ---------------------------------------------------------------------------- configs
def _policy(dtype: str) -> dict[str, Any]:
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": dtype},
            "registered_name": None}


def _initializer_config(init: Any) -> dict[str, Any]:
    cls = type(init).__name__
    if not isinstance(init, initializers.Initializer):
        raise hinted(ValueError(with_hint(f"Cannot serialize the initializer {init!r}",
                                   "use a keras.initializers class or name")))
    if isinstance(init, (initializers.Zeros, initializers.Ones)):
        cfg: dict[str, Any] = {}
    elif isinstance(init, initializers.Constant):
        cfg = {"value": init.value}
    else:  # the initializer's own Keras config (seed first, as Keras 3 writes it)
        cfg = init.get_config()
    return {"module": "keras.initializers", "class_name": cls, "config": cfg,
            "registered_name": None}


def _activation_name(fn: Any) -> Any:
    name = getattr(fn, "__name__", None)
    if name in activations._BY_NAME and activations._BY_NAME[name] is fn:
        return name
    if fn in _GLOBAL_CUSTOM_NAMES:
        return {"module": None, "class_name": "function", "config": name,
                "registered_name": _GLOBAL_CUSTOM_NAMES[fn]}
    raise hinted(ValueError(with_hint(f"Cannot serialize the activation {fn!r}",
                               "use a built-in activation name or register your function "
                               "with keras.saving.register_keras_serializable")))


def _shape_list(shape: Any) -> list[Any] | None:
    return None if shape is None else [None if s is None else int(s) for s in shape]


def _layer_config(layer: Layer) -> dict[str, Any]:
    """The ``config`` Keras 3.15 writes for a built-in layer."""
    base = {"name": layer.name, "trainable": layer.trainable,
            "dtype": _policy(layer._policy_name())}
    act = layer.__dict__.get("activity_regularizer")
    if act is not None:
        from . import regularizers

        base["activity_regularizer"] = regularizers.serialize(act)
    if type(layer) is Dense:
        return {**base, "units": layer.units, "activation": _activation_name(layer.activation),
                "use_bias": layer.use_bias,
                "kernel_initializer": _initializer_config(layer.kernel_initializer),
                "bias_initializer": _initializer_config(layer.bias_initializer),
                **layer._penalty_config("kernel", "bias"),
                "quantization_config": None}
    return layer.get_config()


def _input_layer_config(shape: Any, dtype: str, name: str) -> dict[str, Any]:
    return {"module": "keras.layers", "class_name": "InputLayer",
            "config": {"batch_shape": _shape_list(shape), "dtype": dtype, "sparse": False,
                       "ragged": False, "name": name, "optional": False},
            "registered_name": None}


def _builtin_sequential(model: Any) -> bool:
    """A plain ``Sequential`` of Keras's own layers: the general ``.keras`` writer
    (every built-in layer through its ``get_config``) saves it."""
    from .models import Sequential

    return type(model) is Sequential and all(
        type(layer).__module__.startswith("tapegrad.tf.keras.")
        and type(layer) not in _GLOBAL_CUSTOM_NAMES for layer in model.layers)


def _builtin_sequential_config(config: dict[str, Any]) -> bool:
    """A saved ``Sequential`` of Keras's own layers only (no registered custom class)."""
    inner = config.get("config")
    if config.get("class_name") != "Sequential" or not isinstance(inner, dict):
        return False
    layers = inner.get("layers")
    return isinstance(layers, list) and all(
        isinstance(lc, dict) and str(lc.get("module") or "").startswith("keras")
        and lc.get("registered_name") in (None, lc.get("class_name")) for lc in layers)


def serialize_keras_object(obj: Any) -> Any:
    """A layer or model as the JSON-able dict Keras 3 writes (``module``, ``class_name``,
    ``config``, ``registered_name``, ``build_config``)."""
    from .models import Model, Sequential

    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if not isinstance(obj, Layer):
        raise hinted(ValueError(with_hint(f"Cannot serialize {obj!r}", "only layers and models")))
    cls = type(obj)
    if isinstance(obj, Sequential) and cls is Sequential:
        shape = obj.__dict__.get("_input_shape")
        layers = []
        if shape is not None:
            layers.append(_input_layer_config(shape, obj.dtype, "input_layer"))
        layers += [serialize_keras_object(layer) for layer in obj.layers]
        cfg: dict[str, Any] = {"name": obj.name, "trainable": obj.trainable,
                               "dtype": _policy(obj.dtype), "layers": layers}
        if shape is not None:
            cfg["build_input_shape"] = _shape_list(shape)
        out = {"module": "keras", "class_name": "Sequential", "config": cfg,
               "registered_name": None}
        if shape is not None:
            out["build_config"] = {"input_shape": _shape_list(shape)}
        return out
    if cls is Dense:
        out = {"module": "keras.layers", "class_name": "Dense", "config": _layer_config(obj),
               "registered_name": None}
        in_dim = obj.__dict__.get("_in_dim")
        if in_dim is not None:
            out["build_config"] = {"input_shape": [None, in_dim]}
        return out
    if cls not in _GLOBAL_CUSTOM_NAMES:
        raise hinted(ValueError(with_hint(
            f"Cannot save an instance of {cls.__name__}: the class is not registered",
            "decorate it with @keras.saving.register_keras_serializable() and give it a "
            "get_config()")))
    cfg = dict(obj.get_config())
    if isinstance(cfg.get("dtype"), str):
        cfg["dtype"] = _policy(cfg["dtype"])
    out = {"module": None, "class_name": cls.__name__, "config": cfg,
           "registered_name": _GLOBAL_CUSTOM_NAMES[cls]}
    shape = obj.__dict__.get("_build_input_shape")
    if isinstance(obj, Model) and shape is not None:
        out["build_config"] = {"input_shape": _shape_list(shape)}
    return out


def _not_found(config: Any) -> TypeError:
    name = config.get("class_name") if isinstance(config, dict) else config
    return hinted(TypeError(with_hint(
        f"Could not locate class '{name}'. Make sure custom classes and functions are decorated "
        "with `@keras.saving.register_keras_serializable()`. If they are already decorated, "
        "make sure they are all imported so that the decorator is run before trying to load "
        f"them. Full object config: {config}",
        "tapegrad finds classes only among its own layers and registered or custom objects; "
        "it never imports a module named in a file")))


def _plain_dtype(v: Any) -> Any:
    if isinstance(v, dict) and v.get("class_name") == "DTypePolicy":
        return (v.get("config") or {}).get("name", "float32")
    return v


def _initializer_from(cfg: Any, custom: dict[str, Any] | None) -> Any:
    if cfg is None or isinstance(cfg, str):
        return "glorot_uniform" if cfg is None else cfg
    if not isinstance(cfg, dict):
        raise TypeError(f"Could not interpret initializer config: {cfg!r}")
    name = cfg.get("class_name")
    cls = getattr(initializers, str(name), None)
    if not (isinstance(cls, type) and issubclass(cls, initializers.Initializer)):
        obj = get_registered_object(str(cfg.get("registered_name") or name), custom)
        if obj is None:
            raise _not_found(cfg)
        cls = obj
    kwargs = {k: v for k, v in (cfg.get("config") or {}).items()
              if k not in ("input_axes", "output_axes") or v is not None}
    return cls(**kwargs)


def _activation_from(v: Any, custom: dict[str, Any] | None) -> Any:
    if isinstance(v, dict):
        name = v.get("registered_name") or v.get("config")
        fn = get_registered_object(str(name), custom) or get_registered_object(
            str(v.get("config")), custom)
        if fn is None:
            raise _not_found(v)
        return fn
    return v


_IGNORED_NONE = ("quantization_config", "lora_rank", "lora_alpha")


def penalties_from(cfg: dict[str, Any], custom: dict[str, Any] | None) -> None:
    """Rebuild the ``*_regularizer`` / ``*_constraint`` entries of a layer config in place."""
    from . import constraints, regularizers

    for k, v in cfg.items():
        if v is None:
            continue
        if k.endswith("_regularizer"):
            cfg[k] = regularizers.deserialize(v, custom)
        elif k.endswith("_constraint"):
            cfg[k] = constraints.deserialize(v, custom)


def _build_dense(cfg: dict[str, Any], custom: dict[str, Any] | None) -> Dense:
    cfg = dict(cfg)
    for k in _IGNORED_NONE:
        if k in cfg:
            if cfg[k] is not None:
                raise hinted(NotImplementedError(with_hint(
                    f"Dense({k}=...) is not implemented in tapegrad",
                    "load a model whose Dense layers have no quantization or LoRA")))
            del cfg[k]
    penalties_from(cfg, custom)
    cfg["dtype"] = _plain_dtype(cfg.get("dtype"))
    cfg["activation"] = _activation_from(cfg.get("activation"), custom)
    for k in ("kernel_initializer", "bias_initializer"):
        if k in cfg:
            cfg[k] = _initializer_from(cfg[k], custom)
    return Dense(**cfg)


def deserialize_keras_object(config: Any, custom_objects: dict[str, Any] | None = None,
                             safe_mode: bool = True, **kwargs: Any) -> Any:
    """Rebuild a layer or model from :func:`serialize_keras_object`'s dict (no code runs:
    classes come from tapegrad and the registries only)."""
    from .models import Model, Sequential

    if config is None or isinstance(config, (int, float, bool)):
        return config
    if not isinstance(config, dict) or "class_name" not in config:
        raise hinted(TypeError(with_hint(f"Could not deserialize {config!r}",
                                  "expected a dict with 'class_name' and 'config'")))
    name = config["class_name"]
    inner = dict(config.get("config") or {})
    module = config.get("module") or ""
    registered = config.get("registered_name")
    obj: Any
    builtin = str(module).startswith("keras") and registered in (None, name)
    if not builtin:
        cls = get_registered_object(str(registered or name), custom_objects)
        if cls is None:
            cls = get_registered_object(str(name), custom_objects)
        if cls is None:
            raise _not_found(config)
        inner["dtype"] = _plain_dtype(inner.get("dtype"))
        if "dtype" in inner and inner["dtype"] is None:
            del inner["dtype"]
        from_config = getattr(cls, "from_config", None)
        obj = from_config(inner) if callable(from_config) else cls(**inner)
    elif name == "Sequential":
        layers = inner.get("layers") or []
        model = Sequential(name=inner.get("name"), trainable=inner.get("trainable", True))
        for lc in layers:
            if isinstance(lc, dict) and lc.get("class_name") == "InputLayer":
                c = lc.get("config") or {}
                shape = c.get("batch_shape") or [None, *(c.get("shape") or [])]
                model.add(KerasInput(shape[1:], batch_size=shape[0], dtype=c.get("dtype"),
                                     name=c.get("name")), rebuild=False)
            else:
                model.add(deserialize_keras_object(lc, custom_objects), rebuild=False)
        shape = inner.get("build_input_shape") or (config.get("build_config") or {}).get(
            "input_shape") or model.__dict__.get("_input_shape")
        if shape is not None:
            model.build(tuple(shape))
        return model
    elif name == "Dense":
        obj = _build_dense(inner, custom_objects)
    elif name == "InputLayer":
        c = inner
        shape = c.get("batch_shape") or [None, *(c.get("shape") or [])]
        return InputLayer(shape=shape[1:], batch_size=shape[0], dtype=c.get("dtype"),
                          name=c.get("name"))
    elif name in ("Functional", "Model"):
        raise hinted(NotImplementedError(with_hint(
            "the functional Model(inputs, outputs) API is not implemented",
            "tapegrad loads Sequential models and registered subclassed models")))
    else:
        raise _not_found(config)
    build = (config.get("build_config") or {}).get("input_shape")
    if build is not None and isinstance(obj, Layer) and not obj.built:
        if isinstance(obj, Model):
            obj.build(tuple(build))
        else:
            obj.build(tuple(build))
            obj.__dict__["built"] = True
    return obj


# ---------------------------------------------------------------------------- the object walk
_INTERNAL = frozenset({"_sublayers", "_own_weights", "_name", "_trainable", "built", "_dtype",
                       "_input_shape_arg", "_input_shape", "_in_dim", "_kernel",
                       "_build_input_shape"})


def _snake(name: str) -> str:
    import re

    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    s = re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()
    return s[1:] if s.startswith("_") else s


def _name_key(name: str) -> str:
    return f"~{name}" if name.startswith("_") else name


def _children(obj: Layer) -> Iterator[tuple[str, Any]]:
    """Keras's ``_walk_saveable``: ``layers`` first for a Sequential, then the attributes
    in name order (private ones last)."""
    from .models import Model, Sequential

    if isinstance(obj, Sequential):
        yield "layers", obj.layers
    attrs: dict[str, Any] = {}
    for k, v in obj.__dict__.items():
        if k.startswith("__") or k in _INTERNAL:
            continue
        if isinstance(v, Layer) or (isinstance(v, (list, tuple, dict)) and _has_layer(v)):
            attrs[k] = v
    if isinstance(obj, Model) and not isinstance(obj, Sequential):
        attrs["layers"] = obj.layers
    for k in sorted(attrs, key=_name_key):
        yield k, attrs[k]


def _has_layer(c: Any) -> bool:
    items = c.values() if isinstance(c, dict) else c
    return any(isinstance(v, Layer) or (isinstance(v, (list, tuple, dict)) and _has_layer(v))
               for v in items)


def _join(a: str, b: str) -> str:
    return f"{a}/{b}" if a else b


def _own_variables(layer: Layer) -> list[Any]:
    own = list(layer._own_weights)
    return [w for w in own if w.trainable] + [w for w in own if not w.trainable]


def _walk(obj: Any, path: str, visit: Callable[[Layer, str], None], seen: set[int]) -> None:
    if id(obj) in seen:
        return
    visit(obj, path)
    seen.add(id(obj))
    for attr, child in _children(obj):
        if isinstance(child, Layer):
            _walk(child, _join(path, attr), visit, seen)
        else:
            _walk_container(child, _join(path, attr), visit, seen, set())


def _unique(name: str, used: dict[str, int]) -> str:
    if name in used:
        used[name] += 1
        return f"{name}_{used[name]}"
    used[name] = 0
    return name


def _walk_container(c: Any, path: str, visit: Callable[[Layer, str], None], seen: set[int],
                    seen_containers: set[int]) -> None:
    if id(c) in seen_containers:
        return
    seen_containers.add(id(c))
    used: dict[str, int] = {}
    for item in (list(c.values()) if isinstance(c, dict) else c):
        if isinstance(item, Layer):
            _walk(item, _join(path, _unique(_snake(type(item).__name__), used)), visit, seen)
        elif isinstance(item, (list, tuple, dict)):
            _walk_container(item, _join(path, _unique("container", used)), visit, seen,
                            seen_containers)


# ---------------------------------------------------------------------------- weights files
def _write_weights(model: Layer, h5file: Any) -> None:
    def visit(layer: Layer, path: str) -> None:
        group = h5file.create_group(_join(path, "vars")) if path else h5file.create_group("vars")
        group.attrs["name"] = layer.name
        for i, v in enumerate(_own_variables(layer)):
            group[str(i)] = np.asarray(v._data)

    _walk(model, "", visit, set())


def _safe_group(parent: Any, name: str) -> Any:
    h5py = _h5py()
    link = parent.get(name, getlink=True)
    if link is None:
        return None
    if not isinstance(link, h5py.HardLink):
        raise hinted(ValueError(with_hint(f"Refusing to follow the HDF5 link {name!r} "
                                   f"({type(link).__name__})",
                                   "a weights file holds plain groups and datasets only")))
    g = parent[name]
    if not isinstance(g, h5py.Group):
        raise ValueError(f"Expected an HDF5 group at {name!r}, found {type(g).__name__}")
    return g


def _safe_dataset(group: Any, key: str) -> Any:
    h5py = _h5py()
    link = group.get(key, getlink=True)
    if not isinstance(link, h5py.HardLink):
        raise hinted(ValueError(with_hint(f"Refusing to follow the HDF5 link {key!r} "
                                   f"({type(link).__name__})",
                                   "a weights file holds plain groups and datasets only")))
    ds = group[key]
    if not isinstance(ds, h5py.Dataset):
        raise ValueError(f"Expected an HDF5 dataset at {key!r}, found {type(ds).__name__}")
    if ds.is_virtual or ds.external:
        raise hinted(ValueError(with_hint(f"Refusing the HDF5 dataset {key!r}: its data lives in "
                                   "another file (virtual or external storage)",
                                   "a weights file must hold its own data")))
    if ds.dtype.kind not in "biufc":
        raise ValueError(f"The HDF5 dataset {key!r} is not numeric (dtype {ds.dtype})")
    return ds


def _entry(h5file: Any, path: str) -> Any:
    node = h5file
    for part in [p for p in path.split("/") if p]:
        node = _safe_group(node, part)
        if node is None:
            return None
    return _safe_group(node, "vars")


def _read_weights(model: Layer, h5file: Any, skip_mismatch: bool) -> None:
    """Check every layer's variables against the file, then assign them all (or raise
    Keras's "could not be loaded" error and change nothing)."""
    plan: list[tuple[Any, np.ndarray]] = []
    errors: list[tuple[Layer, str]] = []

    def visit(layer: Layer, path: str) -> None:
        group = _entry(h5file, path)
        keys = sorted(group.keys(), key=lambda k: (len(k), k)) if group is not None else []
        own = _own_variables(layer)
        if len(keys) != len(own):
            if not own and not layer.built:
                errors.append((layer, f"Layer '{layer.name}' was never built and thus it doesn't "
                                      "have any variables. However the weights file lists "
                                      f"{len(keys)} variables for this layer."))
            else:
                errors.append((layer, f"Layer '{layer.name}' expected {len(own)} variables, but "
                                      f"received {len(keys)} variables during loading. "
                                      f"Expected: {[v.name for v in own]}"))
            return
        staged = []
        for i, v in enumerate(own):
            ds = _safe_dataset(group, str(i))
            if tuple(ds.shape) != tuple(v._data.shape):
                errors.append((layer, "The shape of the target variable and the shape of the "
                                      "target value in `variable.assign(value)` must match. "
                                      f"variable.shape={tuple(v._data.shape)}, Received: "
                                      f"value.shape={tuple(ds.shape)}. Target variable: {v!r}"))
                return
            staged.append((v, np.asarray(ds[()]).astype(v._data.dtype)))
        plan.extend(staged)

    _walk(model, "", visit, set())
    if errors:
        layer, msg = errors[0]
        text = (f"A total of {len(errors)} objects could not be loaded. Example error message "
                f"for object {layer!r}:\n\n{msg}\n\nList of objects that could not be loaded:\n"
                f"{[e[0] for e in errors]}")
        if not skip_mismatch:
            raise hinted(ValueError(with_hint(text, "no weight was changed; check that the model "
                                             "is built with the architecture of the file")))
        warnings.warn(text, stacklevel=3)
    for v, arr in plan:
        v.assign(arr)


def _check_built(model: Layer, verb: str) -> None:
    if not model.built:
        raise hinted(ValueError(with_hint(
            f"You are {verb} a model that has not yet been built. Try building the model first "
            "by calling it on some data or by using `build()`.",
            "e.g. model.build((None, n_features)) or model(x) once")))


def save_weights(model: Layer, filepath: Any, overwrite: bool = True) -> None:
    """``model.save_weights(filepath)``: Keras 3's ``.weights.h5`` layout."""
    path = os.fspath(filepath)
    if not str(path).endswith(".weights.h5"):
        raise hinted(ValueError(with_hint(f"The filename must end in `.weights.h5`. Received: "
                                   f"filepath={path}", "e.g. model.save_weights('m.weights.h5')")))
    _check_built(model, "saving")
    if not overwrite and os.path.exists(path):
        raise hinted(FileExistsError(with_hint(f"{path} exists", "pass overwrite=True")))
    h5py = _h5py()
    with h5py.File(path, "w") as f:
        _write_weights(model, f)


def load_weights(model: Layer, filepath: Any, skip_mismatch: bool = False, **kwargs: Any) -> None:
    """``model.load_weights(filepath)`` from a ``.weights.h5`` or ``.keras`` file."""
    path = os.fspath(filepath)
    s = str(path)
    if not (s.endswith(".weights.h5") or s.endswith(".keras")):
        raise hinted(ValueError(with_hint(
            f"File format not supported: filepath={path}. Keras 3 only supports V3 `.keras` "
            "files, `.weights.h5` files, legacy H5 format files (`.h5` extension), or Orbax "
            "checkpoints.", "tapegrad reads `.weights.h5` and `.keras` files")))
    _check_built(model, "loading weights into")
    h5py = _h5py()
    if s.endswith(".keras"):
        with zipfile.ZipFile(path) as zf:
            data = _read_member(zf, _WEIGHTS)
        with h5py.File(io.BytesIO(data), "r") as f:
            _read_weights(model, f, skip_mismatch)
        return
    with h5py.File(path, "r") as f:
        _read_weights(model, f, skip_mismatch)


def _read_member(zf: zipfile.ZipFile, name: str, limit: int = 1 << 34) -> bytes:
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise hinted(ValueError(with_hint(f"The archive has no {name}",
                                   "a .keras file holds config.json, metadata.json and "
                                   "model.weights.h5"))) from None
    if info.file_size > limit:
        raise ValueError(f"{name} is {info.file_size} bytes: too large")
    return zf.read(info)


# ---------------------------------------------------------------------------- .keras files
def save_model(model: Layer, filepath: Any, overwrite: bool = True, **kwargs: Any) -> None:
    """``model.save(filepath)``: Keras 3's ``.keras`` zip (config, metadata, weights)."""
    path = os.fspath(filepath)
    s = str(path)
    if s.endswith((".h5", ".hdf5")):
        raise hinted(NotImplementedError(with_hint(
            "the legacy HDF5 whole-model format is not implemented",
            "save with a `.keras` extension (Keras 3's native format)")))
    if not s.endswith(".keras"):
        raise hinted(ValueError(with_hint(
            "Invalid filepath extension for saving. Please add either a `.keras` extension for "
            "the native Keras format (recommended) or a `.h5` extension. Use "
            "`model.export(filepath)` if you want to export a SavedModel for use with "
            f"TFLite/TFServing/etc. Received: filepath={path}.",
            "e.g. model.save('model.keras')")))
    if not overwrite and os.path.exists(path):
        raise hinted(FileExistsError(with_hint(f"{path} exists", "pass overwrite=True")))
    if type(model).__name__ == "Functional" or getattr(model, "compiled", False) or \
            _builtin_sequential(model):
        # keras.Model(inputs, outputs), or a compiled model (its compile config is kept):
        # the training side's writer
        from .model_file import save_model as _save_graph

        _save_graph(model, path, overwrite)
        return
    config = serialize_keras_object(model)
    config["compile_config"] = {}
    h5py = _h5py()
    weights = io.BytesIO()
    with h5py.File(weights, "w") as f:
        _write_weights(model, f)
    metadata = {"keras_version": KERAS_VERSION,
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(_METADATA, json.dumps(metadata))
        zf.writestr(_CONFIG, json.dumps(config))
        zf.writestr(_WEIGHTS, weights.getvalue())


def load_model(filepath: Any, custom_objects: dict[str, Any] | None = None,
               compile: bool = True, safe_mode: bool = True) -> Any:
    """``keras.models.load_model``: a ``.keras`` file from tapegrad or Keras 3.

    ``compile`` is accepted (tapegrad models have no ``compile``); optimizer state
    stored by a compiled Keras model is not restored.
    """
    path = os.fspath(filepath)
    s = str(path)
    if not s.endswith(".keras"):
        if s.endswith((".h5", ".hdf5")):
            raise hinted(NotImplementedError(with_hint(
                "loading the legacy HDF5 whole-model format is not implemented",
                "re-save the model in Keras as `.keras`")))
        raise hinted(ValueError(with_hint(
            f"File format not supported: filepath={path}. Keras 3 only supports V3 `.keras` "
            "files, legacy H5 format files (`.h5` extension). Note that the legacy SavedModel "
            "format is not supported by `load_model()` in Keras 3. In order to reload a "
            "TensorFlow SavedModel as an inference-only layer in Keras 3, use "
            f"`keras.layers.TFSMLayer({path}, call_endpoint='serving_default')` (note that "
            "your `call_endpoint` might have a different name).",
            "save the model with model.save('model.keras')")))
    if not os.path.exists(path):
        raise hinted(ValueError(with_hint(f"File not found: filepath={path}. Please ensure the file is "
                                   "an accessible `.keras` zip file.", "check the path")))
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise hinted(ValueError(with_hint(f"Invalid .keras file {path}: {exc}",
                                   "the file is truncated or not a Keras archive"))) from None
    with zf:
        try:
            config = json.loads(_read_member(zf, _CONFIG, 1 << 28).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise hinted(ValueError(with_hint(f"Invalid config.json in {path}: {exc}",
                                       "the file is corrupt"))) from None
        weights = _read_member(zf, _WEIGHTS)
    if isinstance(config, dict) and (
            (config.get("class_name") in ("Functional", "Model")
             and isinstance(config.get("config"), dict) and "layers" in config["config"])
            or (compile and config.get("compile_config")) or _builtin_sequential_config(config)):
        # a functional model: its graph is rebuilt by the functional reader (also no code run)
        from .model_file import load_model as _load_functional

        return _load_functional(path, custom_objects, compile, safe_mode)
    model = deserialize_keras_object(config, custom_objects, safe_mode=safe_mode)
    h5py = _h5py()
    with h5py.File(io.BytesIO(weights), "r") as f:
        _read_weights(model, f, skip_mismatch=False)
    return model
