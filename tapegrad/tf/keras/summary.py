"""``model.summary()``: Keras 3's table of layers, output shapes and parameter counts.

The text is what Keras 3 prints when its output is not a terminal: the
box-drawn table (three columns for a ``Sequential`` or subclassed model and for a
functional one that is a chain of calls, a fourth "Connected to" column for other
functional ones; cells wrap as ``rich`` wraps them), then the totals with
their memory sizes; ``Optimizer params`` appear once the optimizer has
created its state.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

__all__ = ["print_summary", "readable_memory_size"]


def readable_memory_size(n: float) -> str:
    """Keras's byte formatting: ``264.00 B``, ``1.50 KB``..."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return f"{n:.2f} {unit}"
        n /= 1024
    return f"{n:.2f} TB"


def _size(weights: list[Any]) -> tuple[int, int]:
    count = int(sum(w._data.size for w in weights))
    nbytes = int(sum(w._data.size * w._data.dtype.itemsize for w in weights))
    return count, nbytes


def _shape_text(shape: Any) -> str:
    if shape is None:
        return "?"
    if isinstance(shape, list):
        return ", ".join(_shape_text(s) for s in shape)
    dims = tuple(shape)
    if len(dims) == 1:
        return f"({dims[0]},)"
    return "(" + ", ".join(str(d) for d in dims) + ")"


def _wrap(text: str, width: int) -> list[str]:
    """Rich's wrapping of a table cell, as Keras' summary renders it: words (with their
    trailing spaces) go on a line while they fit, a line longer than the cell (one long
    word) ends in an ellipsis."""
    lines: list[str] = []
    for para in text.split("\n"):
        cur, off = "", 0
        for word in re.findall(r"\s*\S+\s*", para) or [""]:
            size = len(word.rstrip())
            if width - off >= size:
                cur += word
                off += len(word)
            else:
                if cur:
                    lines.append(cur)
                cur, off = word, len(word)
        lines.append(cur)
    return [ln.rstrip() if len(ln.rstrip()) <= width else ln[:width - 1] + "…"
            for ln in lines]


def _row(cells: list[str], widths: list[int], aligns: list[str], sep: str) -> str:
    """One table row; a cell that does not fit its column wraps into a taller row."""
    split = [_wrap(c, w - 2) for c, w in zip(cells, widths)]
    height = max(len(c) for c in split)
    lines = []
    for k in range(height):
        parts = []
        for lines_of, w, a in zip(split, widths, aligns):
            text = lines_of[k] if k < len(lines_of) else ""
            inner = w - 2
            parts.append(" " + (text.rjust(inner) if a == "r" else text.ljust(inner)) + " ")
        lines.append(sep + sep.join(parts) + sep)
    return "\n".join(lines)


def _sequential_like(graph: Any) -> bool:
    """Keras' test for the three-column table: one input, every call taking the one
    tensor the call before it made, no layer called twice."""
    from .functional import KerasTensor, _flat

    if len(graph.input_list) != 1:
        return False
    prev: list[Any] = [graph.input_list[0]]
    layers: set[int] = set()
    for node in graph.nodes:
        ins = [t for t in _flat(node.inputs) + _flat(node.args) + _flat(node.kwargs)
               if isinstance(t, KerasTensor)]
        if len(ins) != 1 or all(ins[0] is not t for t in prev) or id(node.layer) in layers:
            return False
        layers.add(id(node.layer))
        prev = _flat(node.outputs)
    return True


def _rule(widths: list[int], left: str, mid: str, right: str, fill: str) -> str:
    return left + mid.join(fill * w for w in widths) + right


def print_summary(model: Any, print_fn: Any = None) -> None:
    """Print (or pass to ``print_fn``) the summary of ``model``."""
    from .functional import _flat
    from .models import Functional

    functional = isinstance(model, Functional)
    rows: list[list[str]] = []
    if functional and _sequential_like(model.__dict__["_graph"]):
        graph = model.__dict__["_graph"]
        kt = graph.input_list[0]
        rows.append([f"{kt.name} (InputLayer)", _shape_text(kt.shape), "0"])
        for node in graph.nodes:
            shapes = [k.shape for k in _flat(node.outputs)]
            rows.append([f"{node.layer.name} ({type(node.layer).__name__})",
                         _shape_text(shapes[0] if len(shapes) == 1 else shapes),
                         f"{node.layer.count_params():,}"])
        widths, aligns = [33, 24, 15], ["l", "l", "r"]
        header = ["Layer (type)", "Output Shape", "Param #"]
    elif functional:  # Keras' order: by depth from the outputs (``map_graph``)
        graph = model.__dict__["_graph"]
        for op in graph.keras_order():
            if isinstance(op, int):
                kt = graph.input_list[op]
                rows.append([f"{kt.name} (InputLayer)", _shape_text(kt.shape), "0", "-"])
                continue
            nodes = [n for n in graph.nodes if n.layer is op]
            links = []
            for node in nodes:
                for t in _flat(node.inputs):
                    made = getattr(t, "node", None)
                    if made is None:
                        links.append(f"{getattr(t, 'name', '?')}[0][{getattr(t, 'index', 0)}]")
                        continue
                    # which call of its layer made it (Keras' node index)
                    k = [n for n in graph.nodes if n.layer is made.layer].index(made)
                    links.append(f"{made.layer.name}[{k}][{getattr(t, 'index', 0)}]")
            per_node = []
            for node in nodes:
                shapes = [k.shape for k in _flat(node.outputs)]
                per_node.append(_shape_text(shapes[0] if len(shapes) == 1 else shapes))
            shape = per_node[-1]  # Keras shows its last call's output shape
            rows.append([f"{op.name} ({type(op).__name__})", shape,
                         f"{op.count_params():,}", ", ".join(links)])
        widths, aligns = [21, 19, 12, 19], ["l", "l", "r", "l"]
        header = ["Layer (type)", "Output Shape", "Param #", "Connected to"]
    else:
        for layer in model.layers:
            built = layer.built and (layer.weights or not hasattr(layer, "units"))
            params = f"{sum(int(w._data.size) for w in layer.weights):,}" if built \
                else "0 (unbuilt)"
            rows.append([f"{layer.name} ({type(layer).__name__})",
                         _shape_text(layer.__dict__.get("_output_shape")), params])
        widths, aligns = [33, 24, 15], ["l", "l", "r"]
        header = ["Layer (type)", "Output Shape", "Param #"]
    lines = [f'Model: "{model.name}"',
             _rule(widths, "┏", "┳", "┓", "━"),
             _row(header, widths, aligns, "┃"),
             _rule(widths, "┡", "╇", "┩", "━")]
    for i, r in enumerate(rows):
        if i:
            lines.append(_rule(widths, "├", "┼", "┤", "─"))
        lines.append(_row(r, widths, aligns, "│"))
    lines.append(_rule(widths, "└", "┴", "┘", "─"))
    tc, tb = _size(model.trainable_weights)
    nc, nb = _size(model.non_trainable_weights)
    oc, ob = 0, 0
    opt = model.__dict__.get("optimizer")
    if opt is not None and getattr(opt, "_slots", None) is not None and \
            int(np.asarray(opt._iterations._data)) > 0:
        oc, ob = _size(opt.variables)
        for state in opt._slots.values():
            for v in state.values():
                if isinstance(v, np.ndarray):
                    oc += int(v.size)
                    ob += int(v.nbytes)
    lines.append(f" Total params: {tc + nc + oc:,} ({readable_memory_size(tb + nb + ob)})")
    lines.append(f" Trainable params: {tc:,} ({readable_memory_size(tb)})")
    lines.append(f" Non-trainable params: {nc:,} ({readable_memory_size(nb)})")
    if oc:
        lines.append(f" Optimizer params: {oc:,} ({readable_memory_size(ob)})")
    text = "\n".join(lines)
    if print_fn is None:
        print(text)
    else:  # Keras 3 hands its print_fn the whole table at once
        print_fn(text + "\n")
