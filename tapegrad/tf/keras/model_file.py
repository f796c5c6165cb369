"""``model.save("m.keras")`` and ``keras.models.load_model``: Keras 3's ``.keras`` files.

A ``.keras`` file is a zip of ``metadata.json``, ``config.json`` (the model's
architecture in Keras 3's serialization format) and ``model.weights.h5``
(the weights layout of :mod:`~tapegrad.tf.keras._weights_h5`).  Supported: ``Sequential``
and functional models whose layers are Keras layers constructible from their
``get_config()`` (``Dense`` is written exactly as Keras writes it).  Subclassed
models have no architecture to write (as in Keras without ``get_config``).
The compile arguments (optimizer with its hyper-parameters or schedule, loss,
metrics given by name or as Keras objects) are stored and restored, and so is the
optimizer's state (iterations and slot variables, in Keras' order), so ``fit``
goes on after ``load_model`` as in Keras.  Files written here load in real
Keras 3 and the other way round.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import zipfile
from typing import Any

from ..._core.errors import hinted, with_hint

__all__ = ["save_model", "load_model"]


def _dtype_policy(name: str = "float32") -> dict[str, Any]:
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": name},
            "registered_name": None}


def _initializer_config(init: Any) -> Any:
    if init is None:
        return None
    name = type(init).__name__
    cfg = {k: v for k, v in getattr(init, "get_config", dict)().items()
           if isinstance(v, (int, float, str, bool, type(None)))}
    if name in ("GlorotUniform", "GlorotNormal", "HeNormal", "HeUniform"):
        cfg = {"seed": cfg.get("seed"), "input_axes": None, "output_axes": None} \
            if name.startswith("Glorot") else {"seed": cfg.get("seed")}
    if name in ("Zeros", "Ones"):
        cfg = {}
    return {"module": "keras.initializers", "class_name": name, "config": cfg,
            "registered_name": None}


def _layer_config(layer: Any) -> dict[str, Any]:
    from . import regularizers
    from .layers import Dense

    if isinstance(layer, Dense):
        act = getattr(layer.activation, "__name__", "linear")
        areg = layer.__dict__.get("activity_regularizer")
        extra = {} if areg is None else {"activity_regularizer": regularizers.serialize(areg)}
        return {"name": layer.name, "trainable": layer.trainable,
                "dtype": _dtype_policy(layer._policy_name()), **extra, "units": layer.units,
                "activation": act, "use_bias": layer.use_bias,
                "kernel_initializer": _initializer_config(layer.kernel_initializer),
                "bias_initializer": _initializer_config(layer.bias_initializer),
                **layer._penalty_config("kernel", "bias"),
                "quantization_config": None}
    cfg = dict(layer.get_config())
    cfg["dtype"] = _dtype_policy(layer._policy_name() if hasattr(layer, "_policy_name")
                                 else layer.dtype)
    return cfg


def _input_config(shape: Any, dtype: str, name: str) -> dict[str, Any]:
    return {"module": "keras.layers", "class_name": "InputLayer",
            "config": {"batch_shape": list(shape), "dtype": dtype, "sparse": False,
                       "ragged": False, "name": name, "optional": False},
            "registered_name": None}


def _layer_entry(layer: Any, input_shape: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"module": "keras.layers", "class_name": type(layer).__name__,
                             "config": _layer_config(layer), "registered_name": None}
    if input_shape is not None:
        entry["build_config"] = {"input_shape": list(input_shape)}
    return entry


def _model_config(model: Any) -> dict[str, Any]:
    from .functional import KerasTensor, _flat
    from .models import Functional, Sequential

    if isinstance(model, Functional):
        graph = model.__dict__["_graph"]
        layers: list[dict[str, Any]] = []
        for kt in graph.input_list:
            entry = _input_config(kt.shape, kt.dtype, kt.name)
            entry.update(name=kt.name, inbound_nodes=[])
            layers.append(entry)
        by_layer: dict[int, dict[str, Any]] = {}
        for node in graph.nodes:
            if any(isinstance(t, KerasTensor) for t in _flat(node.args) + _flat(node.kwargs)):
                raise hinted(NotImplementedError(with_hint(
                    f"Saving a functional model whose layer {node.layer.name!r} takes symbolic "
                    "tensors in its other arguments (e.g. MultiHeadAttention(query, value)) is "
                    "not supported by tapegrad", "save the weights with "
                    "model.save_weights('m.weights.h5') and rebuild the model in code")))
            args = []
            for t in _flat(node.inputs):
                src = t.node.layer.name if t.node is not None else t.name
                args.append({"class_name": "__keras_tensor__",
                             "config": {"shape": list(t.shape), "dtype": t.dtype,
                                        "keras_history": [src, 0, t.index]}})
            call_args: list[Any] = args if isinstance(node.inputs, (list, tuple)) else args[:1]
            inbound: dict[str, Any] = {"args": [call_args] if isinstance(node.inputs, (list, tuple))
                       else call_args, "kwargs": {}}
            key = id(node.layer)
            if key in by_layer:
                by_layer[key]["inbound_nodes"].append(inbound)
                continue
            first = _flat(node.inputs)[0]
            entry = _layer_entry(node.layer, first.shape if len(_flat(node.inputs)) == 1
                                 else None)
            entry.update(name=node.layer.name, inbound_nodes=[inbound])
            by_layer[key] = entry
            layers.append(entry)

        def refs(struct: Any) -> Any:
            if isinstance(struct, dict):  # dict inputs/outputs: Keras writes a dict
                return {k: refs(v) for k, v in struct.items()}
            items = [[kt.node.layer.name if kt.node is not None else kt.name, 0, kt.index]
                     for kt in _flat(struct)]
            return items[0] if len(items) == 1 and not isinstance(struct, (list, tuple)) \
                else items

        return {"module": "keras.src.models.functional", "class_name": "Functional",
                "config": {"name": model.name, "trainable": model.trainable, "layers": layers,
                           "input_layers": refs(graph.inputs),
                           "output_layers": refs(graph.outputs)},
                "registered_name": "Functional", "build_config": {"input_shape": None},
                "compile_config": {}}
    if isinstance(model, Sequential):
        shape = model.__dict__.get("_input_shape")
        layers = []
        if shape is not None:
            layers.append(_input_config(shape, "float32", "input_layer"))
        current = shape
        for layer in model.layers:
            layers.append(_layer_entry(layer, current))
            out = layer.__dict__.get("_output_shape")
            current = out if out is not None else None
        cfg: dict[str, Any] = {"name": model.name, "trainable": model.trainable,
                               "dtype": _dtype_policy(), "layers": layers}
        if shape is not None:
            cfg["build_input_shape"] = list(shape)
        return {"module": "keras", "class_name": "Sequential", "config": cfg,
                "registered_name": None,
                "build_config": {"input_shape": None if shape is None else list(shape)},
                "compile_config": {}}
    raise hinted(NotImplementedError(with_hint(
        f"Saving a subclassed model ({type(model).__name__}) as a `.keras` file is not "
        "supported", "use model.save_weights('m.weights.h5'), or build the model with "
        "Sequential or the functional API")))


_JSON = (int, float, str, bool, type(None))


def _object_config(obj: Any, module: str) -> dict[str, Any]:
    """``{"module", "class_name", "config"}`` from the constructor's parameters."""
    import inspect

    cfg: dict[str, Any] = {}
    params = list(inspect.signature(type(obj).__init__).parameters)
    if module == "keras.optimizers":  # Keras 3's base optimizer arguments come first
        base = ["name", "learning_rate", "weight_decay", "clipnorm", "global_clipnorm",
                "clipvalue", "use_ema", "ema_momentum", "ema_overwrite_frequency",
                "loss_scale_factor", "gradient_accumulation_steps"]
        for name in base:
            cfg[name] = _learning_rate_config(obj) if name == "learning_rate" else \
                getattr(obj, name, None)
        params = [p for p in params if p not in base]
    for name in params:
        if name in ("self", "kwargs", "args", "dtype"):
            continue
        if hasattr(obj, name):
            value = getattr(obj, name)
            if name == "learning_rate":
                value = _learning_rate_config(obj)
            if isinstance(value, _JSON) or isinstance(value, dict):
                cfg[name] = value
    return {"module": module, "class_name": type(obj).__name__, "config": cfg,
            "registered_name": None}


def _learning_rate_config(opt: Any) -> Any:
    sched = getattr(opt, "_schedule", None)
    if sched is not None and hasattr(sched, "get_config"):
        return {"module": "keras.optimizers.schedules", "class_name": type(sched).__name__,
                "config": sched.get_config(), "registered_name": None}
    return float(opt._lr._data)


def _compile_config(model: Any) -> dict[str, Any]:
    from . import losses as losses_module
    from . import metrics as metrics_module

    d = model.__dict__
    if not d.get("_compiled"):
        return {}
    args = d.get("_compile_args", {})

    def item(x: Any, module: str, base: type) -> Any:
        if x is None or isinstance(x, str):
            return x
        if isinstance(x, base):
            return _object_config(x, module)
        if isinstance(x, (list, tuple)):
            return [item(v, module, base) for v in x]
        raise TypeError("not serializable")

    try:
        return {"optimizer": _object_config(d["optimizer"], "keras.optimizers"),
                "loss": item(args.get("loss"), "keras.losses", losses_module.Loss),
                "loss_weights": args.get("loss_weights"),
                "metrics": item(args.get("metrics"), "keras.metrics", metrics_module.Metric),
                "weighted_metrics": item(args.get("weighted_metrics"), "keras.metrics",
                                         metrics_module.Metric),
                "run_eagerly": False, "steps_per_execution": 1, "jit_compile": False}
    except TypeError:  # a plain function loss or metric: nothing a file can name
        return {}


def _from_object_config(cfg: Any, module: Any) -> Any:
    import inspect

    if not isinstance(cfg, dict):
        return cfg
    cls = getattr(module, cfg["class_name"], None)
    if cls is None:
        raise hinted(TypeError(with_hint(f"Could not locate class '{cfg['class_name']}'.",
                                  "tapegrad restores Keras's own classes only")))
    params = inspect.signature(cls.__init__).parameters
    kwargs = {k: v for k, v in cfg.get("config", {}).items() if k in params}
    if isinstance(kwargs.get("learning_rate"), dict):
        from . import schedules

        kwargs["learning_rate"] = _from_object_config(kwargs["learning_rate"], schedules)
    for k in ("use_ema", "ema_momentum", "ema_overwrite_frequency",
              "gradient_accumulation_steps"):
        value = cfg.get("config", {}).get(k)
        if value not in (None, False) and k not in params:
            kwargs[k] = value
    return cls(**kwargs)


def _compile_from_config(model: Any, cfg: dict[str, Any]) -> None:
    from . import losses, metrics, optimizers

    def items(x: Any, module: Any) -> Any:
        if isinstance(x, list):
            return [items(v, module) for v in x]
        return _from_object_config(x, module)

    model.compile(optimizer=_from_object_config(cfg["optimizer"], optimizers),
                  loss=items(cfg.get("loss"), losses), loss_weights=cfg.get("loss_weights"),
                  metrics=items(cfg.get("metrics"), metrics),
                  weighted_metrics=items(cfg.get("weighted_metrics"), metrics))


def save_model(model: Any, filepath: str, overwrite: bool = True) -> None:
    """Write ``model`` (architecture and weights) to a ``.keras`` file."""
    from . import _weights_h5 as saving

    path = os.fspath(filepath)
    if not path.endswith(".keras"):
        raise hinted(ValueError(with_hint(
            "Invalid filepath extension for saving. Please add either a `.keras` extension "
            "for the native Keras format (recommended) or a `.h5` extension. Use "
            f"`model.export(filepath)` if you want to export a SavedModel for use with "
            f"TFLite/TFServing/etc. Received: filepath={path}.",
            "name the file e.g. 'model.keras'")))
    if not overwrite and os.path.exists(path):
        raise hinted(FileExistsError(with_hint(f"{path} exists", "pass overwrite=True")))
    config = _model_config(model)
    config["compile_config"] = _compile_config(model)
    meta = {"keras_version": "3.15.1",
            "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    buf = io.BytesIO()
    h5py = saving._h5py()
    with h5py.File(buf, "w") as f:
        saving.write_groups(model, f)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("metadata.json", json.dumps(meta))
        z.writestr("config.json", json.dumps(config))
        z.writestr("model.weights.h5", buf.getvalue())


def _build_layer(entry: dict[str, Any]) -> Any:
    from . import layers as layers_module

    name = entry["class_name"]
    cls = getattr(layers_module, name, None)
    if cls is None:
        raise hinted(TypeError(with_hint(
            f"Could not locate class '{name}'. Make sure custom classes are decorated with "
            "`@keras.saving.register_keras_serializable()`.",
            "tapegrad rebuilds only keras.layers classes it has")))
    cfg = dict(entry["config"])
    from .saving import penalties_from

    penalties_from(cfg, None)
    for k in list(cfg):
        if k in ("dtype", "quantization_config"):
            cfg.pop(k)
        elif k.endswith("_initializer") and isinstance(cfg[k], dict):
            cfg[k] = _initializer_from(cfg[k])
        elif k in ("layer", "backward_layer") and isinstance(cfg[k], dict) \
                and "class_name" in cfg[k]:
            cfg[k] = _build_layer(cfg[k])  # a wrapper's layer (Bidirectional, TimeDistributed)
    if cls.__name__ in ("SimpleRNN", "LSTM", "GRU"):
        for k in ("stateful", "unroll"):
            if cfg.get(k) is False:
                cfg.pop(k)
    return cls(**cfg)


def _initializer_from(entry: dict[str, Any]) -> Any:
    """An initializer from its saved config (its class with its arguments)."""
    from . import initializers

    cls = getattr(initializers, entry.get("class_name", ""), None)
    conf = entry.get("config") or {}
    if cls is not None:
        try:
            return cls(**{k: v for k, v in conf.items() if k not in ("input_axes", "output_axes")})
        except TypeError:
            pass
    return _snake(entry["class_name"])


def _snake(name: str) -> str:
    import re

    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


def load_model(filepath: str, custom_objects: Any = None, compile: bool = True,
               safe_mode: bool = True) -> Any:
    """Rebuild a model saved in a ``.keras`` file (by tapegrad or by Keras 3)."""
    from . import _weights_h5 as saving
    from .functional import Input
    from .models import Model, Sequential

    path = os.fspath(filepath)
    if not path.endswith(".keras"):
        raise hinted(ValueError(with_hint(
            f"File format not supported: filepath={path}. Keras 3 only supports V3 `.keras` "
            "files.", "save with model.save('model.keras')")))
    with zipfile.ZipFile(path, "r") as z:
        config = json.loads(z.read("config.json"))
        weights = z.read("model.weights.h5")
    cls, cfg = config["class_name"], config["config"]
    model: Any
    if cls == "Sequential":
        model = Sequential(name=cfg.get("name"))
        for entry in cfg["layers"]:
            if entry["class_name"] == "InputLayer":
                model.add(Input(batch_shape=entry["config"]["batch_shape"],
                                name=entry["config"].get("name")))
            else:
                model.add(_build_layer(entry))
        shape = cfg.get("build_input_shape")
        if shape is not None and not model.built:
            model.build(tuple(shape))
    elif cls == "Functional":
        tensors: dict[str, list[Any]] = {}
        for entry in cfg["layers"]:
            if entry["class_name"] == "InputLayer":
                c = entry["config"]
                tensors[entry["name"]] = [Input(batch_shape=c["batch_shape"], name=c["name"])]
                continue
            layer = _build_layer(entry)
            outs: list[Any] = []
            for inbound in entry["inbound_nodes"]:
                args = inbound["args"]
                arg = args[0]

                def resolve(a: Any) -> Any:
                    hist = a["config"]["keras_history"]
                    return tensors[hist[0]][hist[2]] if hist[2] < len(tensors[hist[0]]) \
                        else tensors[hist[0]][0]

                x = [resolve(a) for a in arg] if isinstance(arg, list) else resolve(arg)
                out = layer(x)
                outs.extend(out if isinstance(out, (list, tuple)) else [out])
            tensors[entry["name"]] = outs

        def pick(refs: Any) -> Any:
            if isinstance(refs, dict):
                return {k: pick(v) for k, v in refs.items()}
            if refs and isinstance(refs[0], str):
                return tensors[refs[0]][refs[2]]
            return [tensors[r[0]][r[2]] for r in refs]

        model = Model(inputs=pick(cfg["input_layers"]), outputs=pick(cfg["output_layers"]),
                      name=cfg.get("name"))
    else:
        raise hinted(TypeError(with_hint(
            f"Could not locate class '{cls}'.",
            "tapegrad loads Sequential and functional models")))
    h5py = saving._h5py()
    with h5py.File(io.BytesIO(weights), "r") as f:
        saving.read_groups(model, f, path)
        if compile and config.get("compile_config"):
            _compile_from_config(model, config["compile_config"])
            saving.read_optimizer(model, f)  # training goes on where it stopped
    return model
