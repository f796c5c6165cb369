"""``model.save_weights`` / ``load_weights``: Keras 3's ``.weights.h5`` files.

The layout is Keras 3's: ``layers/<class name>[_k]/vars/<i>`` for each
layer's weights (with the layer's name as an attribute), ``vars`` for the
model's own weights and ``optimizer/vars/<i>`` for the optimizer's
iteration counter and learning rate once it has run.  Needs ``h5py``
(``pip install h5py``).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from .layers import _snake

__all__ = ["save_weights", "load_weights"]


def _h5py() -> Any:
    from .saving import _h5py as h5py_or_hint  # one message: the package and the extra

    return h5py_or_hint()


def _check_name(filepath: str) -> str:
    path = os.fspath(filepath)
    if not path.endswith(".weights.h5"):
        raise hinted(ValueError(with_hint(
            "The filename must end in `.weights.h5`. Received: "
            f"filepath={path}", "name the file e.g. 'model.weights.h5'")))
    return path


def _groups(model: Any) -> list[tuple[str, str, list[Any]]]:
    """``(group path, layer name, weights)`` for every layer, in Keras's order."""
    counts: dict[str, int] = {}
    out: list[tuple[str, str, list[Any]]] = []
    graph = model.__dict__.get("_graph")
    if graph is not None:
        for kt in graph.input_list:
            out.append((_unique("input_layer", counts), kt.name, []))
    for layer in model._sublayers:
        base = _snake(type(layer).__name__)
        group = _unique(base, counts)
        out.append((group, layer.name, list(layer._own_weights)))
        _nested_groups(layer, group, out)
    return out


def _nested_groups(layer: Any, group: str, out: list[tuple[str, str, list[Any]]]) -> None:
    """A layer's sub-layers held as public attributes (an RNN's ``cell``, Bidirectional's
    ``backward_layer``/``forward_layer``, a wrapper's ``layer``): Keras 3 walks them in
    sorted attribute order into ``group/attr``."""
    from .layers import Layer

    attrs = vars(layer)
    for attr in sorted(k for k in attrs if not k.startswith("_")):
        child = attrs[attr]
        if isinstance(child, Layer) and child is not layer:
            path = f"{group}/{attr}"
            out.append((path, child.name, list(child._own_weights)))
            _nested_groups(child, path, out)


def _unique(base: str, counts: dict[str, int]) -> str:
    n = counts.get(base, 0)
    counts[base] = n + 1
    return f"layers/{base}" if n == 0 else f"layers/{base}_{n}"


def write_groups(model: Any, f: Any) -> None:
    """Write ``model``'s weights into the open HDF5 file ``f`` (Keras 3's layout)."""
    f.create_group("layers")
    for group, name, weights in _groups(model):
        g = f.create_group(group).create_group("vars")
        g.attrs["name"] = name
        for i, w in enumerate(weights):
            g.create_dataset(str(i), data=np.asarray(w._data))
    opt = model.__dict__.get("optimizer")
    if opt is not None and int(np.asarray(opt._iterations._data)) > 0:
        g = f.create_group("optimizer").create_group("vars")
        g.attrs["name"] = opt.name
        for i, a in enumerate(opt._state_arrays(list(model.trainable_weights))):
            g.create_dataset(str(i), data=a)
    f.create_group("vars").attrs["name"] = model.name


def read_optimizer(model: Any, f: Any) -> None:
    """Restore the compiled optimizer's state from ``f``'s ``optimizer/vars`` (what
    ``load_model`` does after compiling; Keras builds the optimizer first)."""
    opt = model.__dict__.get("optimizer")
    if opt is None or "optimizer" not in f or not hasattr(opt, "_load_state_arrays"):
        return
    g = f["optimizer"]["vars"]
    opt._load_state_arrays(list(model.trainable_weights),
                           [np.asarray(g[str(i)]) for i in range(len(g))])


def read_groups(model: Any, f: Any, path: str) -> None:
    """Assign the weights stored in the open HDF5 file ``f`` (all checked first)."""
    plan: list[tuple[Any, np.ndarray]] = []
    for group, name, weights in _groups(model):
        if not weights:
            continue
        if group not in f:
            raise hinted(ValueError(with_hint(
                f"A total of {len(_groups(model))} objects could not be loaded. Missing "
                f"weights for layer '{name}' (group {group}) in {path}",
                "the file was saved from a model with different layers")))
        g = f[group]["vars"]
        stored = [np.asarray(g[str(i)]) for i in range(len(g))]
        if len(stored) != len(weights):
            raise hinted(ValueError(with_hint(
                f"Layer '{name}' expected {len(weights)} variables, but received "
                f"{len(stored)} variables during loading. Expected: "
                f"{[w.name for w in weights]}", "the file's layer differs")))
        for w, a in zip(weights, stored):
            if a.shape != w._data.shape:
                raise hinted(ValueError(with_hint(
                    f"The shape of the target variable and the shape of the target value "
                    f"in `variable.assign(value)` must match. variable.shape="
                    f"{tuple(w._data.shape)}, Received: value.shape={a.shape}. Target "
                    f"variable: {w!r}", f"weight {w.path} has another shape in the file")))
            plan.append((w, a))
    for w, a in plan:
        w.assign(a.astype(w._data.dtype))


def save_weights(model: Any, filepath: str, overwrite: bool = True) -> None:
    """Write ``model``'s weights to ``filepath`` (a ``.weights.h5`` file)."""
    h5py = _h5py()
    path = _check_name(filepath)
    if not overwrite and os.path.exists(path):
        raise hinted(FileExistsError(with_hint(f"{path} exists", "pass overwrite=True")))
    with h5py.File(path, "w") as f:
        write_groups(model, f)


def load_weights(model: Any, filepath: str) -> None:
    """Assign the weights stored in ``filepath`` (checked before anything changes)."""
    h5py = _h5py()
    path = _check_name(filepath)
    with h5py.File(path, "r") as f:
        read_groups(model, f, path)
