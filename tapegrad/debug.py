"""Seeing what happened: list and draw a recorded graph or a tape.

Every recorded op is a :class:`~tapegrad._core.node.Node`; a tensor's
``grad_fn`` is the last node of its graph and ``node.next`` leads to the nodes
of its inputs.  This module walks that graph (iteratively: a graph of a
million ops is fine) and shows it:

- :func:`list_graph` / :func:`format_graph`: the recorded ops in forward
  (topological) order with input and output shapes, what recorded each op
  (``requires_grad`` or a tape) and whether its saved values were freed by a
  backward pass;
- :func:`to_dot`: Graphviz DOT text (no dependency), with leaves, tape-watched
  tensors, freed nodes and the path a gradient took told apart by style, and a
  note on every source whose gradient is ``None`` saying why it is cut off;
- :func:`render` / :func:`draw`: SVG/PNG through Graphviz's ``dot`` program
  when it is installed; :func:`draw` returns an object that Jupyter shows as
  an SVG.

With a ``tape``, only the nodes that tape recorded are listed; inputs made
outside it are shown as "recorded outside this tape".

Traced programs (``tf.function``, ``torch.compile``): :func:`list_program` /
:func:`format_program` list the instructions (what backward added, what was
folded or dropped), :func:`program_dot` / :func:`draw_program` draw them, and
:func:`explain_trace` says why a function retraced or where its graph broke.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ._core import errors
from ._core.node import FREED, AccumulateGrad, Node
from ._core.registry import get_acc
from ._core.tensor import Tensor

__all__ = ["list_graph", "format_graph", "to_dot", "render", "draw", "Graph", "CUT_OFF_NOTE",
           "list_program", "format_program", "program_dot", "draw_program", "explain_trace"]

#: Why a source can get no gradient although the user expected one.
CUT_OFF_NOTE = (
    "not on any recorded path from the target: computed before the tape, not watched, "
    "integer dtype, or cut by stop_gradient/detach"
)

# Styles (fill colours are colour-blind-safe pastels; the gradient path is red and bold).
_PATH_COLOR = "#d62728"
_OP_FILL = "#dbe9f6"
_FREED_FILL = "#e6e6e6"
_RG_FILL = "#c7e9c0"
_WATCHED_FILL = "#fff3b0"
_TARGET_FILL = "#fdd49e"
_NOTE_FILL = "#fff7e6"


# ---------------------------------------------------------------------------- helpers
def _fmt_shape(shape: Any) -> str:
    if shape is None:
        return "?"
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


def _fmt_meta(shape: Any, dtype: Any) -> str:
    if shape is None and dtype is None:
        return "?"
    return f"{'?' if dtype is None else np.dtype(dtype).name}{_fmt_shape(shape)}"


def _passes_gradient(n: Node) -> bool:
    """False for nodes that cut the gradient on purpose (``tf.stop_gradient``)."""
    op = getattr(n, "op", None)
    return op is None or op.name != "stop_gradient"


def _flatten(obj: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Flatten a nest of dicts/lists/tuples into ``(path, leaf)`` pairs (insertion order)."""
    stack: list[tuple[str, Any]] = [(prefix, obj)]
    out: list[tuple[str, Any]] = []
    while stack:
        path, o = stack.pop()
        if isinstance(o, Mapping):
            items = [(f"{path}.{k}" if path else str(k), v) for k, v in o.items()]
            stack.extend(reversed(items))
        elif isinstance(o, (list, tuple)) and not isinstance(o, Tensor):
            items = [(f"{path}[{i}]" if path else f"[{i}]", v) for i, v in enumerate(o)]
            stack.extend(reversed(items))
        else:
            out.append((path, o))
    return iter(out)


def _tape_nodes(tape: Any) -> list[Node]:
    """The nodes a tape recorded, when it keeps them (weakly or not), oldest first."""
    for obj in (tape, _tape_ident(tape)):
        for attr in ("nodes", "_nodes"):
            got = getattr(obj, attr, None)
            if got is None or callable(got):
                continue
            items = list(got.values()) if isinstance(got, Mapping) else list(got)
            nodes: list[Node] = []
            for it in items:
                if not isinstance(it, Node) and callable(it):  # a weak reference
                    it = it()
                if isinstance(it, Node):
                    nodes.append(it)
            return nodes
    raise errors.hinted(TypeError(
        errors.with_hint(
            f"cannot list the graph of {type(tape).__name__}: it keeps no recorded nodes",
            "pass the target tensor and the tape: list_graph(loss, tape=tape)",
        )
    ))


def _is_tape(obj: Any) -> bool:
    return hasattr(obj, "_interested") or hasattr(obj, "_token")


def _tape_ident(tape: Any) -> Any:
    """What the nodes a tape recorded hold in ``node.tapes``.

    ``tapegrad.tf.GradientTape`` puts a small token on the recording stack (so
    that nodes do not keep the tape alive); other tapes put themselves.
    """
    tok = getattr(tape, "_token", None)
    return tok if tok is not None else tape


def _tape_watches(tape: Any, t: Tensor) -> bool | None:
    """Whether ``tape`` watches ``t`` (None when the tape cannot tell)."""
    for obj in (tape, _tape_ident(tape)):
        fn = getattr(obj, "_watches", None)
        if callable(fn):
            try:
                return bool(fn(t))
            except Exception:  # a front-end's own checker failed: cannot tell
                return None
    watched = getattr(_tape_ident(tape), "watched", None)
    if watched is None:
        return None
    keys = [k for k in (t._acc, t._node) if k is not None]
    return any(_holds(watched, k) for k in keys + [t])


def _holds(coll: Any, obj: Any) -> bool:
    """Membership by identity (``==`` on tensors is elementwise)."""
    if isinstance(coll, (set, frozenset)) and isinstance(obj, Node):
        return obj in coll
    try:
        return any(x is obj for x in coll)
    except TypeError:
        return False


def _node_watched(tape: Any, n: Node) -> bool:
    watched = getattr(_tape_ident(tape), "watched", None)
    return watched is not None and _holds(watched, n)


class _Roots:
    """What a target resolves to: root nodes, their output metadata, target tensors."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.meta: dict[Node, tuple[Any, Any]] = {}
        self.tensors: list[tuple[str, Tensor, Node | None]] = []


def _resolve(target: Any, tape: Any) -> _Roots:
    r = _Roots()
    if _is_tape(target):
        if tape is None:
            tape = target
        r.nodes.extend(_tape_nodes(target))
        return r
    for path, t in _flatten(target):
        if isinstance(t, Tensor):
            n: Node | None = t._node
            if n is None:  # a leaf: its accumulator (made for requires_grad leaves)
                n = get_acc(t) if t._rg else t._acc
            r.tensors.append((path, t, n))
            if n is not None:
                r.nodes.append(n)
                r.meta.setdefault(n, (t._data.shape, t._data.dtype))
        elif isinstance(t, Node):
            r.nodes.append(t)
        elif t is not None:
            raise errors.hinted(TypeError(
                errors.with_hint(
                    f"cannot list the graph of {type(t).__name__}",
                    "pass a tensor (or a grad_fn node, a tape, or a list of them)",
                )
            ))
    return r


def _walk(roots: list[Node], tape: Any) -> tuple[list[Node], list[Node]]:
    """Reachable nodes in forward order (inputs before consumers), and boundary nodes.

    With a tape, nodes it did not record are not entered; they are returned
    as the boundary (recorded outside this tape).
    """
    order: list[Node] = []
    outside: list[Node] = []
    visited: set[Node] = set()
    for root in roots:
        if root in visited:
            continue
        visited.add(root)
        if tape is not None and not _allowed(root, tape):
            outside.append(root)
            continue
        stack: list[tuple[Node, Iterator[Node | None]]] = [(root, iter(root.next))]
        while stack:
            node, it = stack[-1]
            for child in it:
                if child is None or child in visited:
                    continue
                visited.add(child)
                if tape is not None and not _allowed(child, tape):
                    outside.append(child)
                    continue
                stack.append((child, iter(child.next)))
                break
            else:
                stack.pop()
                order.append(node)
    return order, outside


def _allowed(n: Node, ident: Any) -> bool:
    return isinstance(n, AccumulateGrad) or any(tp is ident for tp in n.tapes)


def _leaf_name(t: Tensor | None) -> str | None:
    if t is None:
        return None
    try:
        name = getattr(t, "name", None)
    except Exception:  # e.g. a property that raises outside graph mode
        return None
    return name if isinstance(name, str) else None


# ---------------------------------------------------------------------------- listing
def _entries(
    target: Any, tape: Any = None, names: Mapping[str, Any] | None = None
) -> tuple[list[dict[str, Any]], _Roots, list[Node], dict[Node, int]]:
    roots = _resolve(target, tape)
    if tape is None and _is_tape(target):
        tape = target
    order, outside = _walk(roots.nodes, None if tape is None else _tape_ident(tape))
    index = {n: i for i, n in enumerate(order)}

    # Output shape of a node: what the node recorded (all ops have one output); roots
    # take the target tensor's.
    out_meta: dict[Node, tuple[Any, Any]] = dict(roots.meta)
    consumers_taped: set[Node] = set()
    for n in order:
        if n not in out_meta and n.shape is not None:
            out_meta[n] = (n.shape, n.dtype)
        for e in n.next:
            if e is not None and n.tapes:
                consumers_taped.add(e)

    labels: dict[Node, str] = {}
    for label, t in (names or {}).items():
        if isinstance(t, Tensor):
            key = t._node if t._node is not None else t._acc
            if key is not None:
                labels.setdefault(key, str(label))

    tape_ids: dict[int, str] = {}
    if tape is not None:
        tape_ids[id(_tape_ident(tape))] = "tape"

    def tape_label(tp: Any) -> str:
        lab = tape_ids.get(id(tp))
        if lab is None:
            lab = f"tape{len(tape_ids)}"
            tape_ids[id(tp)] = lab
        return lab

    entries: list[dict[str, Any]] = []
    for i, n in enumerate(order):
        if isinstance(n, AccumulateGrad):
            var = n.variable
            shape, dtype = (
                (var._data.shape, var._data.dtype) if var is not None else out_meta.get(n, (None, None))
            )
            rg = bool(var._rg) if var is not None else False
            watched = False
            if var is not None and n in consumers_taped:
                w = _tape_watches(tape, var) if tape is not None else None
                watched = bool(w) if w is not None else not rg
            leaf_label = labels.get(n) or _leaf_name(var)
            rec = (["requires_grad"] if rg else []) + (["watched"] if watched else [])
            entries.append({
                "index": i,
                "kind": "leaf",
                "name": n.name(),
                "op": None,
                "label": leaf_label,
                "inputs": [],
                "shape": None if shape is None else tuple(shape),
                "dtype": None if dtype is None else np.dtype(dtype).name,
                "attrs": {},
                "recorded_by": rec,
                "requires_grad": rg,
                "watched": watched,
                "alive": var is not None,
                "has_grad": var is not None and var.grad is not None,
                "saved": "none",
                "node": n,
            })
            continue
        inputs: list[dict[str, Any]] = []
        for e in n.next:
            shape_k = None if e is None or e.shape is None else tuple(e.shape)
            dtype_k = None if e is None or e.dtype is None else np.dtype(e.dtype).name
            if e is None:
                inputs.append({"from": None, "kind": "const", "shape": None, "dtype": None})
            elif e in index:
                inputs.append({
                    "from": index[e],
                    "kind": "leaf" if isinstance(e, AccumulateGrad) else "op",
                    "shape": shape_k,
                    "dtype": dtype_k,
                })
            else:
                inputs.append({"from": None, "kind": "outside", "name": e.name(),
                               "shape": shape_k, "dtype": dtype_k})
        shape, dtype = out_meta.get(n, (None, None))
        if shape is None:
            shape, dtype = _out_from_saved(n)
        saved = n.saved
        state = "freed" if saved is FREED else ("kept" if saved else "none")
        rec = (["requires_grad"] if n.rg else []) + [tape_label(tp) for tp in n.tapes]
        entries.append({
            "index": i,
            "kind": "op",
            "name": n.name(),
            "op": getattr(getattr(n, "op", None), "name", None),
            "label": labels.get(n),
            "inputs": inputs,
            "shape": None if shape is None else tuple(shape),
            "dtype": None if dtype is None else np.dtype(dtype).name,
            "attrs": dict(n.attrs) if n.attrs else {},
            "recorded_by": rec,
            "requires_grad": bool(n.rg),
            "watched": tape is not None and _node_watched(tape, n),
            "saved": state,
            "node": n,
        })
    return entries, roots, outside, index


def _out_from_saved(n: Node) -> tuple[Any, Any]:
    saved = n.saved
    op = getattr(n, "op", None)
    if saved is FREED or not saved or op is None or op.save_all:
        return None, None
    for (kind, _), s in zip(op.save_codes, saved):
        if kind == 1 and isinstance(s, np.ndarray):
            return s.shape, s.dtype
    return None, None


def list_graph(
    target: Any, tape: Any = None, names: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The recorded graph of ``target`` as a list of dicts, in forward order.

    Parameters
    ----------
    target : Tensor, grad_fn node, tape, or a list/tuple/dict of them
        Whose graph to list.  A tape lists the nodes it recorded (when the
        tape keeps them); a tensor lists everything reachable from it.
    tape : optional
        Only nodes recorded by this tape (``tape in node.tapes``) are listed;
        inputs recorded outside it appear as inputs of kind ``"outside"``.
    names : mapping of label to tensor, optional
        Labels for tensors (leaves or intermediates), e.g. ``{"w": w}``.

    Returns
    -------
    list of dict
        One dict per node, inputs before the ops that use them.  Keys:
        ``index``, ``kind`` (``"leaf"`` or ``"op"``), ``name`` (the node's
        PyTorch name: ``MulBackward0``, ``AccumulateGrad``), ``op`` (tapegrad
        op name, e.g. ``multiply``), ``label``, ``inputs`` (each with ``from``:
        the index of the producing entry or None, ``kind``: ``"op"``,
        ``"leaf"``, ``"const"`` or ``"outside"``, ``shape``, ``dtype``),
        ``shape`` and ``dtype`` of the output, ``attrs``, ``recorded_by``
        (``"requires_grad"``, tape labels, or ``"watched"`` for leaves),
        ``requires_grad``, ``watched``, ``saved`` (``"kept"``, ``"freed"``
        after a backward pass without retain_graph, ``"none"``) and ``node``.

    Examples
    --------
    >>> import tapegrad as tg
    >>> from tapegrad.debug import list_graph
    >>> x = tg.tensor([1.0, 2.0], requires_grad=True)
    >>> [(e["op"] or e["name"], e["shape"]) for e in list_graph((x * x).sum())]
    [('AccumulateGrad', (2,)), ('multiply', (2,)), ('sum', ())]
    """
    return _entries(target, tape, names)[0]


def _fmt_attr(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return f"array{_fmt_shape(v.shape)}"
    s = repr(v)
    return s if len(s) <= 24 else s[:21] + "..."


def format_graph(
    target: Any, tape: Any = None, names: Mapping[str, Any] | None = None
) -> str:
    """The listing of :func:`list_graph` as a text table.

    Examples
    --------
    >>> import tapegrad as tg
    >>> from tapegrad.debug import format_graph
    >>> x = tg.tensor([1.0, 2.0], requires_grad=True)
    >>> text = format_graph((x * 3).sum(), names={"x": x})
    >>> for line in text.splitlines()[:3]:  # doctest: +NORMALIZE_WHITESPACE
    ...     print(line)
    graph: 3 nodes (1 leaf, 2 ops)
    #  node  op    inputs  output      recorded by    saved
    0  x     leaf  -       float64[2]  requires_grad  -
    """
    entries = list_graph(target, tape, names)
    rows: list[list[str]] = [["#", "node", "op", "inputs", "output", "recorded by", "saved"]]
    for e in entries:
        if e["kind"] == "leaf":
            label = e["label"] or "AccumulateGrad"
            if not e["alive"]:
                label += " (tensor gone)"
            rows.append([str(e["index"]), label, "leaf", "-", _fmt_meta(e["shape"], e["dtype"]),
                         ", ".join(e["recorded_by"]) or "-", "-"])
            continue
        ins = []
        for inp in e["inputs"]:
            if inp["kind"] == "const":
                ins.append("const")
            elif inp["kind"] == "outside":
                ins.append(f"outside:{inp['name']}")
            else:
                ins.append(f"#{inp['from']}")
        name = e["name"] + (f" ({e['label']})" if e["label"] else "")
        op = e["op"] or "?"
        shown = {k: v for k, v in e["attrs"].items() if v is not None and v is not False}
        if shown:
            op += " " + ", ".join(f"{k}={_fmt_attr(v)}" for k, v in shown.items())
        saved = {"kept": "kept", "freed": "FREED", "none": "-"}[e["saved"]]
        rows.append([str(e["index"]), name, op, ", ".join(ins) or "-",
                     _fmt_meta(e["shape"], e["dtype"]), ", ".join(e["recorded_by"]) or "-",
                     saved])
    n_leaf = sum(1 for e in entries if e["kind"] == "leaf")
    n_op = len(entries) - n_leaf
    head = (f"graph: {len(entries)} nodes ({n_leaf} {'leaf' if n_leaf == 1 else 'leaves'}, "
            f"{n_op} op{'' if n_op == 1 else 's'})")
    if tape is not None or _is_tape(target):
        head += ", recorded by the tape"
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = [head]
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return "\n".join(lines)


# ---------------------------------------------------------------------------- DOT
def _q(s: str) -> str:
    """A DOT double-quoted string (labels use \\n for new lines)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attrs(**kw: str) -> str:
    return "[" + ", ".join(f"{k}={_q(v)}" for k, v in kw.items()) + "]"


def _source_key(t: Any) -> Node | None:
    if not isinstance(t, Tensor):
        return None
    return t._node if t._node is not None else t._acc


def _match_grads(flat_sources: list[tuple[str, Any]], grads: Any) -> list[Any]:
    """The gradient of each source: by path when ``grads`` has the sources' structure
    (e.g. the dict ``tape.gradient`` returned for a dict of sources), else by position."""
    if grads is None:
        return []
    flat = list(_flatten(grads))
    by_path = dict(flat)
    if len(flat) == len(flat_sources) and all(p in by_path for p, _ in flat_sources):
        return [by_path[p] for p, _ in flat_sources]
    return [g for _, g in flat]


def _cut_reason(t: Any, in_graph: bool, tape: Any) -> str:
    if not isinstance(t, Tensor):
        return f"not a tensor ({type(t).__name__}): " + CUT_OFF_NOTE
    if t._data.dtype.kind not in "fc":
        return f"integer/bool dtype ({t._data.dtype.name}): never differentiable"
    if in_graph:
        return ("in the graph, but not watched by this tape: a GradientTape gives None "
                "for sources it does not watch (tape.watch(x) first)")
    if t._node is None and not t._rg and t._acc is None:
        return ("never watched and requires_grad=False, so no recorded op used it as a "
                "variable: call tape.watch(x) inside the tape (or set requires_grad=True)")
    return CUT_OFF_NOTE


def to_dot(
    target: Any,
    tape: Any = None,
    grads: Any = None,
    sources: Any = None,
    names: Mapping[str, Any] | None = None,
    legend: bool = False,
) -> str:
    """Graphviz DOT text of the recorded graph of ``target`` (no dependency needed).

    Drawn forward: leaves at the top, an edge from each input to the op that
    used it (labelled with the input's shape), the target at the bottom.

    - op nodes: blue boxes (``MulBackward0 / multiply / output dtype[shape]``);
      grey and dashed once a backward pass freed their saved values;
    - leaves: ellipses, green when ``requires_grad``, yellow when watched by a
      tape, labelled with the name given in ``names`` or the variable's name;
    - with ``sources``, every node and edge on a path from the target to a
      source is red and bold (the path the gradient took); a source whose
      gradient is ``None`` (or that is not reachable) is drawn dashed with a
      note saying why it is cut off;
    - with a ``tape``, only the nodes it recorded are drawn; inputs recorded
      outside it appear as grey "recorded outside this tape" boxes.

    Parameters
    ----------
    target : Tensor, grad_fn node, tape, or a list/tuple/dict of them
    tape : optional
        Restrict to the nodes this tape recorded.
    grads : optional
        The gradients returned for ``sources`` (same structure); a ``None``
        entry marks that source as cut off.
    sources : Tensor or nest of tensors, optional
        Where the gradient should arrive.  Dict keys become labels.
    names : mapping of label to tensor, optional
    legend : bool
        Add a small legend of the styles.

    Examples
    --------
    >>> import tapegrad as tg
    >>> from tapegrad.debug import to_dot
    >>> x = tg.tensor([1.0, 2.0], requires_grad=True)
    >>> dot = to_dot((x * x).sum(), sources=[x], names={"x": x})
    >>> dot.splitlines()[0]
    'digraph tapegrad {'
    """
    all_names: dict[str, Any] = dict(names or {})
    flat_sources = list(_flatten(sources)) if sources is not None else []
    if isinstance(sources, Mapping):
        for path, s in flat_sources:
            if isinstance(s, Tensor):
                all_names.setdefault(path, s)
    entries, roots, outside, index = _entries(target, tape, all_names)
    if tape is None and _is_tape(target):
        tape = target
    flat_grads = _match_grads(flat_sources, grads)

    # the path a gradient took: nodes that reach one of the (connected) sources
    src_keys: set[Node] = set()
    cut: list[tuple[int, str, Any, str]] = []
    for k, (path, s) in enumerate(flat_sources):
        key = _source_key(s)
        in_graph = key is not None and key in index
        g_none = grads is not None and (k >= len(flat_grads) or flat_grads[k] is None)
        if in_graph and not g_none:
            src_keys.add(key)  # type: ignore[arg-type]
        else:
            cut.append((k, path, s, _cut_reason(s, in_graph, tape)))
    on_path: set[Node] = set()
    if src_keys:
        for e in entries:
            n = e["node"]
            if n in src_keys:
                on_path.add(n)
            elif _passes_gradient(n) and any(
                c is not None and c in on_path and c in index for c in n.next
            ):
                on_path.add(n)

    lines = [
        "digraph tapegrad {",
        '  graph [rankdir="TB", fontname="Helvetica", nodesep="0.3", ranksep="0.35"];',
        '  node [fontname="Helvetica", fontsize="10"];',
        '  edge [fontname="Helvetica", fontsize="9", color="#555555"];',
    ]
    cut_in_graph = {_source_key(s) for _, _, s, _ in cut if _source_key(s) in index}
    for e in entries:
        nid = f"n{e['index']}"
        n = e["node"]
        path_kw: dict[str, str] = {}
        if n in on_path:
            path_kw = {"color": _PATH_COLOR, "penwidth": "2.5"}
        if e["kind"] == "leaf":
            label = e["label"] or "leaf"
            text = f"{label}\n{_fmt_meta(e['shape'], e['dtype'])}"
            if e["requires_grad"]:
                fill, note = _RG_FILL, "requires_grad"
            elif e["watched"]:
                fill, note = _WATCHED_FILL, "watched by tape"
            else:
                fill, note = "#ffffff", "leaf"
            text += f"\n{note}"
            style = "filled"
            if n in cut_in_graph:
                style = "filled,dashed"
                text += "\ngradient: None"
            lines.append(f"  {nid} " + _attrs(label=text, shape="ellipse", style=style,
                                               fillcolor=fill, **path_kw) + ";")
            continue
        title = e["name"] + (f" ({e['label']})" if e["label"] else "")
        text = f"{title}\n{e['op'] or '?'}\n{_fmt_meta(e['shape'], e['dtype'])}"
        if e["watched"]:
            text += "\nwatched by tape"
        if tape is None:
            tapes = [r for r in e["recorded_by"] if r != "requires_grad"]
            if tapes:
                text += "\nrecorded by " + ", ".join(tapes)
        else:  # every drawn op was recorded by the tape: say only what else did
            extra = [r for r in e["recorded_by"] if r != "tape"]
            if extra:
                text += "\nalso recorded by " + ", ".join(extra)
        if e["saved"] == "freed":
            text += "\nsaved values freed"
            lines.append(f"  {nid} " + _attrs(label=text, shape="box", style="rounded,filled,dashed",
                                               fillcolor=_FREED_FILL, **path_kw) + ";")
        else:
            lines.append(f"  {nid} " + _attrs(label=text, shape="box", style="rounded,filled",
                                               fillcolor=_OP_FILL, **path_kw) + ";")
    out_ids: dict[Node, str] = {}
    for k, n in enumerate(outside):
        out_ids[n] = f"o{k}"
        lines.append(f"  o{k} " + _attrs(label=f"{n.name()}\nrecorded outside this tape",
                                         shape="box", style="dashed", color="#999999",
                                         fontcolor="#777777") + ";")
    # edges: input -> op, labelled with the input's shape
    for e in entries:
        if e["kind"] != "op":
            continue
        n = e["node"]
        for inp, child in zip(e["inputs"], n.next):
            if child is None:
                continue
            lab = _fmt_shape(inp["shape"]) if inp["shape"] is not None else ""
            if child in index:
                src = f"n{index[child]}"
                kw = {"label": lab}
                if child in on_path and n in on_path:
                    kw.update(color=_PATH_COLOR, penwidth="2.5", fontcolor=_PATH_COLOR)
            else:
                src = out_ids[child]
                kw = {"label": lab, "style": "dashed", "color": "#999999"}
            lines.append(f"  {src} -> n{e['index']} " + _attrs(**kw) + ";")
    # targets
    for k, (path, t, n) in enumerate(roots.tensors):
        label = next((lab for lab, v in all_names.items() if v is t), None) or (
            path if path and not path.startswith("[") else "target")
        text = f"{label}\n{_fmt_meta(t._data.shape, t._data.dtype)}"
        kw2: dict[str, str] = {}
        if n is not None and n in on_path:
            kw2 = {"color": _PATH_COLOR, "penwidth": "2.5"}
        lines.append(f"  t{k} " + _attrs(label=text, shape="doubleoctagon", style="filled",
                                         fillcolor=_TARGET_FILL, **kw2) + ";")
        if n is not None and n in index:
            lines.append(f"  n{index[n]} -> t{k} " + _attrs(**kw2) + ";")
        elif n is not None and n in out_ids:
            lines.append(f"  {out_ids[n]} -> t{k} " + _attrs(style="dashed", color="#999999") + ";")
    # sources that got no gradient
    for j, (_k, path, s, reason) in enumerate(cut):
        key = _source_key(s)
        if key is not None and key in index:
            sid = f"n{index[key]}"
        else:
            sid = f"s{j}"
            lab = path if path and not path.startswith("[") else (
                next((lb for lb, v in all_names.items() if v is s), None) or f"source {path}")
            meta = _fmt_meta(s._data.shape, s._data.dtype) if isinstance(s, Tensor) else "?"
            lines.append(f"  {sid} " + _attrs(label=f"{lab}\n{meta}\ngradient: None",
                                              shape="ellipse", style="dashed",
                                              color="#999999") + ";")
        lines.append(f"  c{j} " + _attrs(label=_wrap("cut off: " + reason), shape="note",
                                         style="filled", fillcolor=_NOTE_FILL,
                                         fontsize="9") + ";")
        lines.append(f"  {sid} -> c{j} " + _attrs(style="dotted", arrowhead="none") + ";")
    if legend:
        lines.extend(_legend())
    lines.append("}")
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int = 40) -> str:
    words = text.split()
    out: list[str] = []
    line = ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            out.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    if line:
        out.append(line)
    return "\n".join(out)


def _legend() -> list[str]:
    return [
        "  subgraph cluster_legend {",
        '    label="legend"; fontsize="9"; color="#bbbbbb";',
        "    l0 " + _attrs(label="requires_grad leaf", shape="ellipse", style="filled",
                           fillcolor=_RG_FILL) + ";",
        "    l1 " + _attrs(label="watched by tape", shape="ellipse", style="filled",
                           fillcolor=_WATCHED_FILL) + ";",
        "    l2 " + _attrs(label="op", shape="box", style="rounded,filled",
                           fillcolor=_OP_FILL) + ";",
        "    l3 " + _attrs(label="saved values freed", shape="box",
                           style="rounded,filled,dashed", fillcolor=_FREED_FILL) + ";",
        "    l4 " + _attrs(label="gradient path", shape="box", style="rounded",
                           color=_PATH_COLOR, penwidth="2.5") + ";",
        "    l0 -> l1 -> l2 -> l3 -> l4 [style=invis];",
        "  }",
    ]


# ---------------------------------------------------------------------------- rendering
_FORMATS = ("svg", "png", "pdf")


def render(dot_text: str, format: str = "svg", path: Any = None) -> bytes:
    """Render DOT text with Graphviz's ``dot`` program.

    Parameters
    ----------
    dot_text : str
        DOT source, e.g. from :func:`to_dot`.
    format : {"svg", "png", "pdf"}
    path : str or path-like, optional
        Also write the result to this file.

    Returns
    -------
    bytes
        The rendered image.

    Raises
    ------
    RuntimeError
        When ``dot`` is not installed (install Graphviz: ``apt-get install
        graphviz``, ``brew install graphviz`` or ``conda install graphviz``).

    Examples
    --------
    >>> import tapegrad as tg
    >>> from tapegrad.debug import render, to_dot
    >>> x = tg.tensor(2.0, requires_grad=True)
    >>> svg = render(to_dot(x * x))  # doctest: +SKIP
    """
    if format not in _FORMATS:
        raise errors.hinted(ValueError(
            errors.with_hint(f"unknown format {format!r}", f"use one of {', '.join(_FORMATS)}")
        ))
    exe = shutil.which("dot")
    if exe is None:
        raise errors.hinted(RuntimeError(
            errors.with_hint(
                "Graphviz's `dot` program was not found on PATH; it is needed to render "
                f"{format.upper()}",
                "install Graphviz (apt-get install graphviz / brew install graphviz / conda "
                "install graphviz), or use to_dot() for the DOT text",
            )
        ))
    proc = subprocess.run([exe, f"-T{format}"], input=dot_text.encode("utf-8"),
                          capture_output=True, check=False, timeout=120)
    if proc.returncode != 0:
        raise errors.hinted(RuntimeError(
            errors.with_hint(
                f"dot failed (exit code {proc.returncode}): "
                f"{proc.stderr.decode('utf-8', 'replace').strip()}",
                "the DOT text is not valid Graphviz input",
            )
        ))
    data = proc.stdout
    if path is not None:
        with open(path, "wb") as fh:
            fh.write(data)
    return data


class Graph:
    """A drawn graph: DOT text in ``source``; shown as SVG in Jupyter.

    Examples
    --------
    >>> import tapegrad as tg
    >>> from tapegrad.debug import draw
    >>> x = tg.tensor(2.0, requires_grad=True)
    >>> g = draw(x * x)
    >>> g.source.startswith("digraph")
    True
    """

    def __init__(self, source: str, entries: list[dict[str, Any]] | None = None) -> None:
        self.source = source
        self.entries = entries or []

    def _repr_svg_(self) -> str | None:
        if shutil.which("dot") is None:
            return None  # Jupyter falls back to __repr__ (which says how to get SVG)
        return render(self.source, "svg").decode("utf-8")

    def render(self, format: str = "svg", path: Any = None) -> bytes:
        """Render with Graphviz (see :func:`render`)."""
        return render(self.source, format, path)

    def save(self, path: Any) -> None:
        """Write to ``path``: ``.dot``/``.gv`` as DOT text, ``.svg``/``.png``/``.pdf`` rendered."""
        p = str(path)
        ext = p.rsplit(".", 1)[-1].lower() if "." in p else ""
        if ext in ("dot", "gv", ""):
            with open(p, "w", encoding="utf-8") as fh:
                fh.write(self.source)
            return
        render(self.source, ext, p)

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        n = sum(1 for _ in self.entries)
        hint = "" if shutil.which("dot") else " (install Graphviz to see it as SVG)"
        return f"<tapegrad.debug.Graph: {n} nodes; .source holds the DOT text{hint}>"


def draw(
    target: Any,
    tape: Any = None,
    grads: Any = None,
    sources: Any = None,
    names: Mapping[str, Any] | None = None,
    legend: bool = False,
) -> Graph:
    """A :class:`Graph` of ``target``'s recorded graph (arguments as in :func:`to_dot`).

    In Jupyter it displays as SVG (needs Graphviz's ``dot``); ``.source`` is
    the DOT text, ``.save("g.png")`` renders to a file.

    Examples
    --------
    >>> import tapegrad as tg
    >>> from tapegrad.debug import draw
    >>> w = tg.tensor([1.0, 2.0], requires_grad=True)
    >>> g = draw((w * w).sum(), names={"w": w})
    >>> "MulBackward0" in g.source
    True
    """
    entries = list_graph(target, tape, names)
    return Graph(to_dot(target, tape, grads, sources, names, legend), entries)


# ---------------------------------------------------------------------------- traced programs
def _programs_of(obj: Any) -> list[Any]:
    """The traced programs of a Program, a ``tf.function``, a ConcreteFunction or a
    ``torch.compile``'d function / module (duck-typed: the core imports no front-end)."""
    from .autodiff.tracing import Program

    if isinstance(obj, Program):
        return [obj]
    c = getattr(obj, "_compiled", None)
    if c is not None and hasattr(c, "_cache"):
        obj = c
    if hasattr(obj, "_cache") and hasattr(obj, "graph_breaks"):  # torch.compile
        return [e[0] for e in obj._cache.values() if isinstance(e, tuple)]
    if hasattr(obj, "_trace") and hasattr(obj._trace, "programs"):  # ConcreteFunction
        return list(obj._trace.programs.values())
    if hasattr(obj, "_traces"):  # tf.function
        return [p for tr in obj._traces for p in tr.programs.values()]
    raise errors.hinted(TypeError(errors.with_hint(
        f"no traced program in {type(obj).__name__}",
        "pass a tf.function, a torch.compile'd function or module (after a first call), "
        "or a tapegrad.autodiff.tracing.Program")))


def _ref_text(prog: Any, r: Any) -> str:
    if r.__class__ is not int:
        v = r.value
        return repr(v) if not isinstance(v, np.ndarray) else f"array{_fmt_shape(v.shape)}"
    return f"%{r}"


def list_program(obj: Any, index: int = 0) -> list[dict[str, Any]]:
    """The instructions of a traced program, in order, as dicts.

    Each entry has ``kind`` (``op``, ``read``, ``write_var``, ``write_inplace``,
    ``setgrad``, ``addgrad``, ``effect``, ``source``, ...), ``name``, ``out`` (its
    slot, or ``None``), ``args`` (slots as ``%n``, literals as text), ``shape``,
    ``dtype``, ``backward`` (added by a backward pass inside the function) and
    ``when`` (the traced ``cond`` predicates a side effect depends on).

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> from tapegrad.debug import list_program
    >>> f = tf.function(lambda x: x * 2.0 + 1.0)
    >>> _ = f(tf.constant(1.0))
    >>> [e["name"] for e in list_program(f)]
    ['multiply', 'add']
    """
    prog = _programs_of(obj)[index]
    out: list[dict[str, Any]] = []
    for ins in prog.instrs:
        out.append({
            "kind": ins.kind, "name": ins.name,
            "out": ins.out if ins.out >= 0 else None,
            "args": [_ref_text(prog, a) for a in ins.args],
            "attrs": {k: _fmt_attr(v) for k, v in ins.attrs.items()},
            "shape": ins.shape, "dtype": None if ins.dtype is None else str(ins.dtype),
            "backward": bool(ins.bwd) if ins.kind == "op" else False,
            "when": [f"{'' if pol else 'not '}%{w}" for w, pol in ins.when],
        })
    return out


def format_program(obj: Any, index: int = 0) -> str:
    """A traced program as text: inputs, each instruction with its shape, what the
    function's backward added, what was folded into constants and what was dropped.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> from tapegrad.debug import format_program
    >>> f = tf.function(lambda x: tf.exp(tf.constant(0.0)) * x)
    >>> _ = f(tf.constant(3.0))
    >>> print(format_program(f).splitlines()[0])
    program <lambda>: 1 inputs, 1 ops (0 by backward), 1 folded, 0 dropped
    """
    prog = _programs_of(obj)[index]
    entries = list_program(prog)
    n_op = sum(1 for e in entries if e["kind"] == "op")
    n_bwd = sum(1 for e in entries if e["backward"])
    lines = [f"program {prog.name}: {len(prog.inputs)} inputs, {n_op} ops ({n_bwd} by "
             f"backward), {len(prog.folded)} folded, {len(prog.dropped)} dropped"]
    for s, nm, shp, dt in zip(prog.inputs, prog.input_names, prog.in_shapes, prog.in_dtypes):
        lines.append(f"  in   %{s} {nm or ''} {_fmt_meta(shp, dt)}".rstrip())
    for e in entries:
        dst = f"%{e['out']} = " if e["out"] is not None else ""
        attrs = ", ".join(f"{k}={v}" for k, v in e["attrs"].items())
        args = ", ".join(e["args"] + ([attrs] if attrs else []))
        meta = f"  {_fmt_meta(e['shape'], e['dtype'])}" if e["shape"] is not None else ""
        tag = "  [backward]" if e["backward"] else ""
        when = f"  if {' and '.join(e['when'])}" if e["when"] else ""
        lines.append(f"  {e['kind']:<5} {dst}{e['name']}({args}){meta}{tag}{when}")
    outs = ", ".join(_ref_text(prog, r) for r in prog.outputs)
    lines.append(f"  return {outs}")
    if prog.folded:
        from collections import Counter

        cnt = Counter(prog.folded)
        lines.append("  folded into constants: " + ", ".join(
            f"{k} x{v}" if v > 1 else k for k, v in cnt.items()))
    if prog.dropped:
        lines.append("  dropped (nothing needs them): " + ", ".join(i.name for i in prog.dropped))
    return "\n".join(lines)


def program_dot(obj: Any, index: int = 0) -> str:
    """Graphviz DOT text of a traced program: inputs and reads as boxes, ops as ellipses
    (the backward's in orange), side effects as octagons, outputs in bold."""
    prog = _programs_of(obj)[index]
    lines = ["digraph program {", '  rankdir=TB; node [fontname="Helvetica", fontsize=10];']
    made: set[int] = set()

    def node(s: int, label: str, **kw: str) -> None:
        if s not in made:
            made.add(s)
            extra = "".join(f", {k}={_q(v)}" for k, v in kw.items())
            lines.append(f"  s{s} [label={_q(label)}{extra}];")

    for s, nm, shp, dt in zip(prog.inputs, prog.input_names, prog.in_shapes, prog.in_dtypes):
        node(s, f"{nm or 'input'}\n{_fmt_meta(shp, dt)}", shape="box", style="filled",
             fillcolor=_RG_FILL)
    k = 0
    for ins in prog.instrs:
        for a in ins.slots():
            if prog.kinds[a] == 1:  # a constant
                node(a, "const", shape="box", style="dashed")
        if ins.out >= 0:
            meta = _fmt_meta(ins.shape, ins.dtype) if ins.shape is not None else ""
            if ins.kind == "op":
                node(ins.out, f"{ins.name}\n{meta}", style="filled",
                     fillcolor=_TARGET_FILL if ins.bwd else _OP_FILL)
            else:
                node(ins.out, f"{ins.name}\n{meta}", shape="box", style="filled",
                     fillcolor=_WATCHED_FILL)
            dst = f"s{ins.out}"
        else:
            dst = f"e{k}"
            k += 1
            lines.append(f"  {dst} [label={_q(ins.name)}, shape=octagon, style=filled, "
                         f"fillcolor={_q(_NOTE_FILL)}];")
        for a in ins.slots():
            lines.append(f"  s{a} -> {dst};")
    for r in prog.outputs:
        if r.__class__ is int:
            lines.append(f"  s{r} [penwidth=2.5];")
    lines.append("}")
    return "\n".join(lines)


def draw_program(obj: Any, index: int = 0) -> Graph:
    """A :class:`Graph` of a traced program (SVG in Jupyter when Graphviz is installed)."""
    return Graph(program_dot(obj, index), list_program(obj, index))


def explain_trace(obj: Any) -> str:
    """Why a ``tf.function`` retraced (or ran eagerly), or what ``torch.compile``
    recompiled and where its graph broke.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> from tapegrad.debug import explain_trace
    >>> f = tf.function(lambda x: x + 1)
    >>> _ = f(tf.constant(1.0)); _ = f(tf.constant([1.0, 2.0]))
    >>> print(explain_trace(f))
    2 traces
      retraced: input 0: shape () -> (2,)
    """
    c = getattr(obj, "_compiled", obj)
    if hasattr(c, "graph_breaks"):
        lines = [f"{c.traces} traces, {len(c.graph_breaks)} graph breaks"]
        lines += [f"  graph break: {w} at {where}" for w, where in c.graph_breaks]
        lines += [f"  recompiled: {r}" for r in c.recompile_reasons]
        return "\n".join(lines)
    if hasattr(obj, "experimental_get_tracing_count"):
        lines = [f"{obj.experimental_get_tracing_count()} traces"]
        lines += [f"  retraced: {r}" for r in getattr(obj, "retrace_reasons", [])]
        lines += [f"  runs eagerly: {r}" for r in getattr(obj, "eager_reasons", [])]
        return "\n".join(lines)
    raise errors.hinted(TypeError(errors.with_hint(
        f"{type(obj).__name__} is not a traced function",
        "pass a tf.function or a torch.compile'd function or module")))
