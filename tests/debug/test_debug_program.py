"""tapegrad.debug on traced programs: listing, drawing, explaining retraces and breaks."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

import tapegrad.tf as tf
import tapegrad.torch as torch
from tapegrad import debug


def _step() -> Any:
    w = tf.Variable([1.0, 2.0])

    @tf.function
    def f(x: Any) -> Any:
        with tf.GradientTape() as t:
            y = tf.reduce_sum(tf.sin(x * w) * tf.exp(tf.constant(0.5)))
            unused = tf.cos(x)  # noqa: F841
        return y, t.gradient(y, w)

    f(tf.constant([1.0, 3.0]))
    return f


def test_list_and_format_show_backward_folded_dropped() -> None:
    f = _step()
    entries = debug.list_program(f)
    assert entries[0]["kind"] == "read"
    names = [e["name"] for e in entries if e["kind"] == "op"]
    assert names[:4] == ["multiply", "sin", "multiply", "sum"]
    assert [e["name"] for e in entries if e["backward"]] == ["cos", "multiply", "multiply"]
    text = debug.format_program(f)
    assert text.splitlines()[0] == "program f: 1 inputs, 7 ops (3 by backward), 3 folded, " \
        "1 dropped"
    assert "folded into constants: exp, broadcast_to, multiply" in text
    assert "dropped (nothing needs them): cos" in text
    assert "float32[2]  [backward]" in text


def test_dot_and_draw() -> None:
    f = _step()
    dot = debug.program_dot(f)
    assert dot.startswith("digraph program {") and dot.rstrip().endswith("}")
    assert dot.count("->") >= 8
    g = debug.draw_program(f)
    assert g.source == dot
    if shutil.which("dot"):
        assert g.render("svg").startswith(b"<?xml") or b"<svg" in g.render("svg")


def test_explain_retrace_and_graph_break() -> None:
    f = tf.function(lambda x: x + 1)
    f(tf.constant(1.0))
    f(tf.constant([1.0, 2.0]))
    f(tf.constant([1, 2]))
    text = debug.explain_trace(f)
    assert text.splitlines() == ["3 traces", "  retraced: input 0: shape () -> (2,)",
                                 "  retraced: input 0: dtype float32 -> int32"]
    c = torch.compile(lambda x: x * float(x.sum().item()))
    c(torch.ones(2))
    c(torch.ones(3))
    text = debug.explain_trace(c)
    assert text.startswith("2 traces, 2 graph breaks")
    assert "graph break: item at " in text
    assert "recompiled: tensor argument 0: size (2,) -> (3,)" in text


def test_not_a_traced_function() -> None:
    with pytest.raises(TypeError, match="no traced program in function"):
        debug.list_program(lambda x: x)
    with pytest.raises(TypeError, match="is not a traced function"):
        debug.explain_trace(3)
