"""Graph listing and drawing (tapegrad.debug): SPEC section 5."""

from __future__ import annotations

import re
import shutil
from typing import Any

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import debug
from tapegrad import ops as T
from tapegrad._core import mode
from tapegrad._core.node import FREED
from tapegrad._core.registry import get_acc
from tapegrad._core.tensor import Tensor

HAS_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAS_DOT, reason="Graphviz `dot` is not installed")


# ---------------------------------------------------------------------------- helpers
def dot_nodes(dot: str) -> dict[str, str]:
    """Node id -> label of every node statement (legend excluded)."""
    out: dict[str, str] = {}
    for line in dot.splitlines():
        m = re.match(r'^  (\w+) \[label="((?:[^"\\]|\\.)*)"', line)
        if m and "->" not in line:
            out[m.group(1)] = m.group(2).replace("\\n", "\n")
    return out


def dot_edges(dot: str) -> list[tuple[str, str, str]]:
    """(from, to, attribute text) of every edge statement."""
    out = []
    for line in dot.splitlines():
        m = re.match(r"^  (\w+) -> (\w+) (\[.*\])?;$", line)
        if m:
            out.append((m.group(1), m.group(2), m.group(3) or ""))
    return out


class FakeTape:
    """The minimal tape protocol of the core: interested in watched tensors and its own nodes."""

    def __init__(self) -> None:
        self.watched: list[Tensor] = []

    def watch(self, t: Tensor) -> None:
        if t._node is None:
            get_acc(t)
        self.watched.append(t)

    def _watches(self, t: Tensor) -> bool:
        return any(w is t for w in self.watched)

    def _interested(self, args: Any) -> bool:
        for a in args:
            if isinstance(a, Tensor):
                if self._watches(a):
                    return True
                if a._node is not None and self in a._node.tapes:
                    return True
        return False

    def _recorded(self, node: Any) -> None:
        pass

    def __enter__(self) -> FakeTape:
        mode.STATE.tapes = mode.STATE.tapes + (self,)
        return self

    def __exit__(self, *exc: object) -> None:
        mode.STATE.tapes = tuple(t for t in mode.STATE.tapes if t is not self)


def small_mlp() -> tuple[Tensor, Tensor, Tensor]:
    x = tg.tensor(np.arange(6.0).reshape(2, 3) / 10, requires_grad=True)
    w = tg.tensor(np.ones((3, 4)), requires_grad=True)
    loss = T.sum(T.tanh(x @ w) * 2.0)
    return x, w, loss


# ---------------------------------------------------------------------------- listing
def test_listing_order_names_and_shapes() -> None:
    x, w, loss = small_mlp()
    entries = debug.list_graph(loss, names={"x": x, "w": w})
    assert [e["op"] or e["name"] for e in entries] == [
        "AccumulateGrad", "AccumulateGrad", "matmul", "tanh", "multiply", "sum"]
    assert [e["kind"] for e in entries] == ["leaf", "leaf", "op", "op", "op", "op"]
    assert [e["index"] for e in entries] == list(range(6))
    assert [e["label"] for e in entries[:2]] == ["x", "w"]
    # names are the nodes' own (PyTorch) names
    for e in entries:
        assert e["name"] == e["node"].name()
    assert entries[5]["node"] is loss.grad_fn
    assert [e["shape"] for e in entries] == [(2, 3), (3, 4), (2, 4), (2, 4), (2, 4), ()]
    assert all(e["dtype"] == "float64" for e in entries)
    mm = entries[2]
    assert [(i["from"], i["kind"], i["shape"]) for i in mm["inputs"]] == [
        (0, "leaf", (2, 3)), (1, "leaf", (3, 4))]
    mul = entries[4]
    assert [(i["from"], i["kind"]) for i in mul["inputs"]] == [(3, "op"), (None, "const")]
    assert all(e["recorded_by"] == ["requires_grad"] for e in entries)
    assert all(e["requires_grad"] for e in entries)


def test_listing_is_forward_order_for_shared_inputs() -> None:
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    a = T.sin(x)
    b = T.exp(x)
    y = T.sum(a * b + a)
    entries = debug.list_graph(y)
    pos = {id(e["node"]): e["index"] for e in entries}
    for e in entries:
        for inp in e["inputs"]:
            if inp["from"] is not None:
                assert inp["from"] < e["index"]
    assert pos[id(a.grad_fn)] < pos[id(y.grad_fn)]
    # each node once, although x and a are used twice
    assert len(entries) == 6  # x, sin, exp, mul, add, sum
    assert len({id(e["node"]) for e in entries}) == 6


def test_saved_values_marked_freed_after_backward() -> None:
    x, w, loss = small_mlp()
    before = {e["op"]: e["saved"] for e in debug.list_graph(loss) if e["kind"] == "op"}
    assert before["matmul"] == "kept" and before["tanh"] == "kept"
    assert before["sum"] in ("none", "kept")  # sum keeps only a shape
    loss.backward()
    after = debug.list_graph(loss)
    for e in after:
        if e["kind"] == "op":
            n = e["node"]
            assert (e["saved"] == "freed") == (n.saved is FREED)
    assert {e["op"]: e["saved"] for e in after if e["kind"] == "op"}["matmul"] == "freed"
    assert "FREED" in debug.format_graph(loss)


def test_retain_graph_keeps_saved_values() -> None:
    x, w, loss = small_mlp()
    loss.backward(retain_graph=True)
    assert all(e["saved"] != "freed" for e in debug.list_graph(loss))


def test_listing_of_a_leaf_a_constant_and_several_targets() -> None:
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    (e,) = debug.list_graph(x)
    assert e["kind"] == "leaf" and e["shape"] == (2,) and e["requires_grad"]
    assert debug.list_graph(tg.tensor([1.0])) == []  # nothing recorded
    a = T.sum(x * 2.0)
    b = T.sum(x * 3.0)
    entries = debug.list_graph([a, b])
    assert [en["op"] for en in entries].count("sum") == 2
    assert [en["kind"] for en in entries].count("leaf") == 1
    # a grad_fn node works as the target too
    assert len(debug.list_graph(a.grad_fn)) == 3


def test_listing_under_no_grad_records_nothing() -> None:
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with tg.no_grad():
        y = T.sum(x * x)
    assert debug.list_graph(y) == []


def test_deep_graph_is_listed_without_recursion() -> None:
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x
    for _ in range(5_000):  # far beyond the interpreter's recursion limit
        y = y * 1.0
    entries = debug.list_graph(y)
    assert len(entries) == 5_001
    assert entries[0]["kind"] == "leaf" and entries[-1]["node"] is y.grad_fn
    dot = debug.to_dot(y)
    assert len(dot_nodes(dot)) == 5_002  # + the target


def test_format_graph_text() -> None:
    x = tg.tensor([[1.0, 2.0]], requires_grad=True)
    y = T.sum(x @ tg.tensor([[1.0], [2.0]]), axis=0)
    text = debug.format_graph(y, names={"x": x})
    lines = text.splitlines()
    assert lines[0] == "graph: 3 nodes (1 leaf, 2 ops)"
    assert lines[1].split() == ["#", "node", "op", "inputs", "output", "recorded", "by", "saved"]
    assert lines[2].split() == ["0", "x", "leaf", "-", "float64[1,", "2]", "requires_grad", "-"]
    assert "matmul" in lines[3] and "#0, const" in lines[3] and "float64[1, 1]" in lines[3]
    assert "sum axis=(0,)" in lines[4] and "float64[1]" in lines[4]


# ---------------------------------------------------------------------------- tapes
def test_tape_filter_lists_only_the_tapes_nodes() -> None:
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2.0  # recorded by requires_grad only, before the tape
    with FakeTape() as tape:
        tape.watch(a)
        b = T.sin(a)
        c = T.sum(b)
    assert c.grad_fn is not None and a.grad_fn is not None
    assert tape in c.grad_fn.tapes and tape not in a.grad_fn.tapes
    entries = debug.list_graph(c, tape=tape)
    assert [e["op"] for e in entries] == ["sin", "sum"]
    assert entries[0]["inputs"][0]["kind"] == "outside"
    assert entries[0]["inputs"][0]["name"] == a.grad_fn.name()
    assert entries[1]["recorded_by"] == ["requires_grad", "tape"]
    # without the tape filter everything is listed, and the tape is named
    full = debug.list_graph(c)
    assert [e["op"] or e["name"] for e in full] == ["AccumulateGrad", "multiply", "sin", "sum"]
    assert full[2]["recorded_by"] == ["requires_grad", "tape0"]
    dot = debug.to_dot(c, tape=tape)
    nodes = dot_nodes(dot)
    assert nodes["o0"].endswith("recorded outside this tape")
    assert ("o0", "n0") in [(a_, b_) for a_, b_, _ in dot_edges(dot)]


def test_watched_leaf_is_marked() -> None:
    w = tg.tensor([1.0, 2.0])  # requires_grad=False: reached only through the tape
    k = tg.tensor([3.0, 4.0])  # not watched: a constant of the op
    with FakeTape() as tape:
        tape.watch(w)
        y = T.sum(w * k)
    entries = debug.list_graph(y, tape=tape, names={"w": w})
    assert [e["op"] or e["name"] for e in entries] == ["AccumulateGrad", "multiply", "sum"]
    leaf = entries[0]
    assert leaf["watched"] and not leaf["requires_grad"] and leaf["recorded_by"] == ["watched"]
    assert entries[1]["recorded_by"] == ["tape"]
    assert [i["kind"] for i in entries[1]["inputs"]] == ["leaf", "const"]
    dot = debug.to_dot(y, tape=tape, names={"w": w})
    nodes = dot_nodes(dot)
    assert nodes["n0"] == "w\nfloat64[2]\nwatched by tape"
    assert 'fillcolor="#fff3b0"' in next(ln for ln in dot.splitlines() if ln.startswith("  n0 "))


# ---------------------------------------------------------------------------- DOT
def test_dot_of_a_small_graph() -> None:
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = T.sum(x * x)
    dot = debug.to_dot(y, names={"x": x})
    assert dot.startswith("digraph tapegrad {") and dot.rstrip().endswith("}")
    nodes = dot_nodes(dot)
    assert set(nodes) == {"n0", "n1", "n2", "t0"}
    assert nodes["n0"] == "x\nfloat64[3]\nrequires_grad"
    fn: Any = y.grad_fn
    assert nodes["n1"] == f"{fn.next[0].name()}\nmultiply\nfloat64[3]"
    assert nodes["n2"] == f"{fn.name()}\nsum\nfloat64[]"
    assert nodes["t0"] == "target\nfloat64[]"
    edges = [(a, b) for a, b, _ in dot_edges(dot)]
    assert sorted(edges) == sorted([("n0", "n1"), ("n0", "n1"), ("n1", "n2"), ("n2", "t0")])
    labels = [attrs for a, b, attrs in dot_edges(dot) if (a, b) == ("n0", "n1")]
    assert all('label="[3]"' in lab for lab in labels)
    # no path styling without sources
    assert "#d62728" not in dot


def test_dot_freed_nodes_are_dashed() -> None:
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = T.sum(T.exp(x))
    y.backward()
    dot = debug.to_dot(y)
    exp_line = next(ln for ln in dot.splitlines() if "\\nexp\\n" in ln)
    assert "saved values freed" in exp_line and "dashed" in exp_line
    # sum saved only its input's shape: released too (a second backward would raise)
    sum_line = next(ln for ln in dot.splitlines() if "\\nsum\\n" in ln)
    fn: Any = y.grad_fn
    assert ("saved values freed" in sum_line) == (fn.saved is FREED)


def test_dot_gradient_path_and_cut_off_source() -> None:
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    u = tg.tensor([5.0, 6.0], requires_grad=True)  # used, but only through detach
    c = tg.tensor([7.0], requires_grad=True)  # never used
    y = T.sum(x * 2.0 + u.detach())
    grads = tg.grad(y, [x, u, c], allow_unused=True)
    assert grads[1] is None and grads[2] is None
    dot = debug.to_dot(y, grads=grads, sources={"x": x, "u": u, "c": c})
    nodes = dot_nodes(dot)
    path_edges = [(a, b) for a, b, attrs in dot_edges(dot) if "#d62728" in attrs]
    # x -> mul -> add -> sum -> target: every edge on the gradient path is red
    assert len(path_edges) == 4
    assert nodes["n0"].startswith("x\n")
    # the two sources without gradient are dashed and carry a note
    cut = {k: v for k, v in nodes.items() if k.startswith("s")}
    assert sorted(v.split("\n")[0] for v in cut.values()) == ["c", "u"]
    assert all(v.endswith("gradient: None") for v in cut.values())
    notes = [v for k, v in nodes.items() if k.startswith("c")]
    assert len(notes) == 2
    joined = [" ".join(n.split()) for n in notes]
    assert all("cut off:" in n and "stop_gradient/detach" in n for n in joined)
    assert [(a, b) for a, b, _ in dot_edges(dot) if b.startswith("c")] == [("s0", "c0"), ("s1", "c1")]


def test_dict_grads_are_matched_to_sources_by_key() -> None:
    a = tg.tensor([1.0], requires_grad=True)
    b = tg.tensor([2.0], requires_grad=True)
    y = T.sum(a * 2.0)
    # a tape returns a dict in its own key order: matching is by key, not position
    dot = debug.to_dot(y, sources={"a": a, "b": b}, grads={"b": None, "a": tg.tensor([2.0])})
    nodes = dot_nodes(dot)
    assert nodes["n0"].startswith("a\n") and "gradient: None" not in nodes["n0"]
    assert nodes["s0"].startswith("b\n") and nodes["s0"].endswith("gradient: None")
    # a flat list of gradients follows the sources' order
    dot2 = debug.to_dot(y, sources={"a": a, "b": b}, grads=[tg.tensor([2.0]), None])
    assert dot_nodes(dot2)["s0"].startswith("b\n")


def test_dot_sources_without_grads_and_integer_source() -> None:
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    i = tg.tensor([1, 2])
    y = T.sum(x * i)
    dot = debug.to_dot(y, sources=[x, i])
    notes = [" ".join(v.split()) for k, v in dot_nodes(dot).items() if k.startswith("c")]
    assert len(notes) == 1 and "integer/bool dtype (int64)" in notes[0]
    red = [ln for ln in dot.splitlines() if "#d62728" in ln and "->" not in ln]
    assert len(red) == 4  # x, mul, sum, target


def test_dot_unwatched_source_in_graph_gets_a_note() -> None:
    # an engine-level case of TF's rule: in the graph, but the tape returned None for it
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = T.sum(x * 3.0)
    dot = debug.to_dot(y, grads=[None], sources=[x])
    nodes = dot_nodes(dot)
    assert nodes["n0"].endswith("gradient: None")
    assert "not watched by this tape" in " ".join(nodes["c0"].split())
    assert ("n0", "c0") in [(a, b) for a, b, _ in dot_edges(dot)]


def test_dot_escapes_quotes_and_legend() -> None:
    x = tg.tensor([1.0], requires_grad=True)
    dot = debug.to_dot(T.sum(x), names={'my "x"': x}, legend=True)
    assert 'label="my \\"x\\"\\nfloat64[1]' in dot
    assert "subgraph cluster_legend" in dot


def test_variable_name_is_used_for_leaves() -> None:
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    x.name = "weight:0"  # type: ignore[attr-defined]  # what a tf.Variable carries
    entries = debug.list_graph(T.sum(x))
    assert entries[0]["label"] == "weight:0"


def test_bad_target_type() -> None:
    with pytest.raises(TypeError, match="cannot list the graph of str"):
        debug.list_graph("loss")
    with pytest.raises(TypeError, match="list_graph\\(loss, tape=tape\\)"):
        debug.list_graph(FakeTape())  # a tape that keeps no nodes: pass the target


# ---------------------------------------------------------------------------- rendering
def test_render_without_graphviz_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(debug.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="apt-get install graphviz"):
        debug.render("digraph { a }")
    g = debug.draw(T.sum(tg.tensor([1.0], requires_grad=True)))
    assert g._repr_svg_() is None
    assert "install Graphviz" in repr(g)


def test_render_rejects_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown format"):
        debug.render("digraph { a }", format="bmp")


@needs_dot
def test_render_svg_and_png(tmp_path: Any) -> None:
    x, w, loss = small_mlp()
    loss.backward()
    g = debug.draw(loss, sources=[x, w], names={"x": x, "w": w}, legend=True)
    svg = g._repr_svg_()
    assert svg is not None and "<svg" in svg and "TanhBackward0" in svg
    png = g.render("png", tmp_path / "g.png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "g.png").read_bytes() == png
    g.save(tmp_path / "g.svg")
    assert b"<svg" in (tmp_path / "g.svg").read_bytes()
    g.save(tmp_path / "g.dot")
    assert (tmp_path / "g.dot").read_text() == g.source == str(g)


@needs_dot
def test_every_dot_output_is_valid_graphviz() -> None:
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    c = tg.tensor([3.0], requires_grad=True)
    with FakeTape() as tape:
        tape.watch(x)
        y = T.sum(T.tanh(x) * x)
    for dot in (debug.to_dot(y), debug.to_dot(y, tape=tape, sources=[x, c]),
                debug.to_dot(y, sources={"x": x}, grads={"x": None}, legend=True)):
        assert debug.render(dot, "svg").lstrip().startswith(b"<?xml")


def test_render_reports_dot_errors() -> None:
    if not HAS_DOT:
        pytest.skip("Graphviz `dot` is not installed")
    with pytest.raises(RuntimeError, match="dot failed"):
        debug.render("digraph { a -> }")


# ---------------------------------------------------------------------------- front-ends
def test_torch_style_graph() -> None:
    torch = pytest.importorskip("tapegrad.torch")
    if not hasattr(torch, "tensor"):
        pytest.skip("tapegrad.torch is not complete yet")
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    entries = debug.list_graph(y, names={"x": x})
    assert [e["name"] for e in entries] == ["AccumulateGrad", "MulBackward0", y.grad_fn.name()]
    assert entries[0]["dtype"] == "float32"


def _tf() -> Any:
    tf = pytest.importorskip("tapegrad.tf")
    if not all(hasattr(tf, a) for a in ("GradientTape", "Variable", "constant", "matmul")):
        pytest.skip("tapegrad.tf is not complete yet")
    return tf


def test_tf_tape_graph_with_variables_and_unwatched_source() -> None:
    tf = _tf()
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="weight")
    b = tf.Variable([0.5, 0.5], name="bias")
    x = tf.constant([[1.0, 1.0]])
    c = tf.constant([2.0, 3.0])
    outside = tf.constant([1.0, 1.0]) * 2.0  # computed before the tape
    with tf.GradientTape(persistent=True) as tape:
        h = tf.matmul(x, w) + b
        y = tf.reduce_sum(tf.tanh(h) * c + outside)
    grads = tape.gradient(y, [w, b, c, outside])
    assert grads[2] is None and grads[3] is None
    entries = debug.list_graph(y, tape=tape)
    leaves = [e for e in entries if e["kind"] == "leaf"]
    assert [e["label"] for e in leaves] == ["weight:0", "bias:0"]
    assert all(e["watched"] and e["recorded_by"] == ["watched"] for e in leaves)
    ops = [e for e in entries if e["kind"] == "op"]
    assert [e["op"] for e in ops] == ["matmul", "add", "tanh", "multiply", "add", "sum"]
    assert all(e["recorded_by"] == ["tape"] for e in ops)
    assert ops[0]["shape"] == (1, 2) and ops[0]["dtype"] == "float32"
    dot = debug.to_dot(y, tape=tape, sources=[w, b, c, outside], grads=grads)
    nodes = dot_nodes(dot)
    notes = [" ".join(v.split()) for k, v in nodes.items() if re.fullmatch(r"c\d+", k)]
    assert len(notes) == 2
    assert all("tape.watch(x)" in n for n in notes)
    red_nodes = [ln for ln in dot.splitlines() if "#d62728" in ln and "->" not in ln]
    assert len(red_nodes) == 2 + 6 + 1  # w, b, the six ops, the target
    # the tape itself lists what it recorded (it keeps its nodes weakly)
    own = debug.list_graph(tape)
    assert [e["op"] for e in own if e["kind"] == "op"] == [e["op"] for e in ops]
    assert [e["label"] for e in own if e["kind"] == "leaf"] == ["weight:0", "bias:0"]
    assert own[-1]["node"] is y.grad_fn
    del tape


def test_tf_nested_tapes_outer_records_the_inner_gradient() -> None:
    tf = _tf()
    x = tf.Variable(2.0)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = x * x * x
        dy = inner.gradient(y, x)
    outer_ops = [e["op"] for e in debug.list_graph(dy, tape=outer) if e["kind"] == "op"]
    assert outer_ops  # the backward pass of x*x*x, as recorded by the outer tape
    assert all(e["recorded_by"][0] == "tape" for e in debug.list_graph(dy, tape=outer)
               if e["kind"] == "op")
    # the inner tape's nodes were also recorded by the outer tape
    both = [e for e in debug.list_graph(y) if e["kind"] == "op"]
    assert all(len(e["recorded_by"]) == 2 for e in both)
    d2 = outer.gradient(dy, x)
    assert float(d2) == 12.0
