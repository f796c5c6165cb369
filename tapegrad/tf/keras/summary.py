"""``model.summary()``: Keras 3's table of layers, output shapes and parameter counts.

The text is what Keras 3 prints when its output is not a terminal: the
box-drawn table (three columns for a ``Sequential`` or subclassed model,
a fourth "Connected to" column for a functional one), then the totals with
their memory sizes; ``Optimizer params`` appear once the optimizer has
created its state.
"""

from __future__ import annotations

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


def _row(cells: list[str], widths: list[int], aligns: list[str], sep: str) -> str:
    """One table row; a cell with several lines (``"a,\nb"``) makes a taller row."""
    split = [c.split("\n") for c in cells]
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


def _rule(widths: list[int], left: str, mid: str, right: str, fill: str) -> str:
    return left + mid.join(fill * w for w in widths) + right


def print_summary(model: Any, print_fn: Any = None) -> None:
    """Print (or pass to ``print_fn``) the summary of ``model``."""
    from .functional import _flat
    from .models import Functional

    functional = isinstance(model, Functional)
    rows: list[list[str]] = []
    if functional:
        graph = model.__dict__["_graph"]
        for kt in graph.input_list:
            rows.append([f"{kt.name} (InputLayer)", _shape_text(kt.shape), "0", "-"])
        for node in graph.nodes:
            layer = node.layer
            links = []
            for t in _flat(node.inputs):
                src = t.node.layer.name if getattr(t, "node", None) is not None else \
                    getattr(t, "name", "?")
                links.append(f"{src}[0][{getattr(t, 'index', 0)}]")
            shapes = [k.shape for k in _flat(node.outputs)]
            rows.append([f"{layer.name} ({type(layer).__name__})",
                         _shape_text(shapes[0] if len(shapes) == 1 else shapes),
                         f"{layer.count_params():,}", ",\n".join(links)])
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
    lines = "\n".join(lines).split("\n")
    if print_fn is None:
        print("\n".join(lines))
    else:
        for line in lines:
            print_fn(line)
