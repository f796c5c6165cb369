"""``torch.compile`` in tapegrad: always the eager result, traced once per guard set."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch
from tests.torch_style import torch_compile_programs as progs


@pytest.mark.parametrize("name", list(progs.PROGRAMS))
def test_compiled_equals_eager(name: str) -> None:
    progs.same(progs.run(torch, name, True), progs.run(torch, name, False))


def test_trace_once_then_replay_without_python() -> None:
    n = [0]

    def f(x: Any) -> Any:
        n[0] += 1
        return (x.sin() * x).sum()

    c = torch.compile(f)
    for k in range(4):
        c(torch.full((3,), float(k)))
    assert n[0] == 1 and c.traces == 1


def test_guards_retrace_and_explain() -> None:
    c = torch.compile(lambda x, k: x * k)
    c(torch.ones(2), 2)
    c(torch.ones(2), 2)
    c(torch.ones(3), 2)
    c(torch.ones(3), 3)
    c(torch.ones(3, dtype=torch.float64), 3)
    with torch.no_grad():
        c(torch.ones(3, dtype=torch.float64), 3)
    assert c.traces == 5
    text = torch._dynamo.explain(c)
    assert "tensor argument 0: size (2,) -> (3,)" in text
    assert "argument 1: 2 -> 3" in text
    assert "grad mode changed (True -> False)" in text


def test_graph_break_runs_eagerly_and_fullgraph_raises() -> None:
    def f(x: Any) -> Any:
        return x + 1 if x.sum() > 0 else x - 1

    c = torch.compile(f)
    assert c(torch.ones(2)).tolist() == [2.0, 2.0]
    assert c(-torch.ones(2)).tolist() == [-2.0, -2.0]  # the same guard set, eager: right
    assert len(c.graph_breaks) == 1 and c.graph_breaks[0][0] == "bool"
    with pytest.raises(torch._dynamo.exc.Unsupported, match="^Data-dependent branching"):
        torch.compile(f, fullgraph=True)(torch.ones(2))
    with pytest.raises(torch._dynamo.exc.Unsupported, match="^Failed to trace builtin operator"):
        torch.compile(lambda x: print(x) or x, fullgraph=True)(torch.ones(2))


def test_item_breaks_but_fullgraph_allows_it_as_pytorch() -> None:
    c = torch.compile(lambda x: x.sin().sum().item(), fullgraph=True)
    assert abs(c(torch.ones(3)) - 3 * np.sin(1.0)) < 1e-6


def test_module_compile_and_reset() -> None:
    lin = torch.nn.Linear(2, 2)
    cm = torch.compile(lin)
    assert type(cm).__name__ == "OptimizedModule"
    assert repr(cm).startswith("OptimizedModule(\n  (_orig_mod): Linear(in_features=2")
    assert cm.weight is lin.weight
    x = torch.ones(1, 2)
    np.testing.assert_allclose(cm(x).detach().numpy(), lin(x).detach().numpy())
    with torch.no_grad():
        lin.weight.add_(1.0)  # parameters are read by reference
    np.testing.assert_allclose(cm(x).detach().numpy(), lin(x).detach().numpy())
    lin.weight = torch.nn.Parameter(torch.zeros(2, 2))  # a new parameter: guard fails
    np.testing.assert_allclose(cm(x).detach().numpy(), lin(x).detach().numpy())
    assert cm._compiled.traces == 2
    torch.compiler.reset()
    cm(x)
    assert cm._compiled.traces == 3


def test_options_accepted() -> None:
    for kw in ({"mode": "reduce-overhead"}, {"backend": "eager"}, {"dynamic": True},
               {"mode": "max-autotune", "fullgraph": True}):
        assert torch.compile(lambda x: x * 2, **kw)(torch.ones(1)).item() == 2.0
    with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
        torch.compile(lambda x: x, mode="default", options={})

    @torch.compile
    def g(x: Any) -> Any:
        return x + 1

    assert g(torch.zeros(1)).item() == 1.0 and g.__name__ == "g"


def test_outputs_keep_their_graph() -> None:
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    c = torch.compile(lambda x: (x * w).sum())
    for _ in range(2):
        y = c(torch.ones(2))
        assert y.grad_fn is not None
        y.backward()
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 2.0])


_RATE = 0.5


def test_globals_and_closure_cells_are_guarded() -> None:
    global _RATE
    _RATE = 0.5
    k = 2

    def f(x: Any) -> Any:
        return x * _RATE + k

    c = torch.compile(f)
    x = torch.tensor([1.0, 2.0])
    assert c(x).tolist() == [2.5, 3.0] and c(x).tolist() == [2.5, 3.0]
    assert c.traces == 1  # unchanged values replay
    _RATE = 1.5
    assert c(x).tolist() == [3.5, 5.0]
    k = 10
    assert c(x).tolist() == [11.5, 13.0] and c.traces == 3
    text = torch._dynamo.explain(c)
    assert "global '_RATE' changed" in text and "closure variable 'k' changed" in text
    _RATE = 0.5


def test_a_front_end_value_read_outside_the_ops_is_a_graph_break() -> None:
    """Front-end code taking a traced value as a Python value (``int()`` of its array,
    NumPy on it, wrapped as a new tensor) is noticed: that call's function runs eagerly,
    so a later call with other values gets its own result, as in eager PyTorch."""
    from tapegrad._core.tensor import make

    style = torch.zeros(1)._style
    reads = {
        "int": lambda x: torch.ones(int(x._data[0]) + 1).sum() * x,
        "numpy_wrapped": lambda x: make(x._data * 3.0, None, False, style) + 1.0,
        "tolist": lambda x: torch.tensor(x._data.tolist()) * 2.0,
    }
    for name, fn in reads.items():
        c = torch.compile(fn)
        for v in (1.0, 2.0, 3.0):
            x = torch.tensor([v])
            np.testing.assert_array_equal(c(x).numpy(), fn(x).numpy(), err_msg=name)
        assert c.graph_breaks, name


def test_no_traced_array_outlives_its_trace() -> None:
    """The marks that notice value reads stay inside the trace: after compiled training
    steps (parameters updated in place, optimizer state created, .grad written, results
    kept) no tensor holds a marked array."""
    import gc

    from tapegrad._core.tensor import Tensor

    out = progs.run(torch, "train_mlp", True)
    out += progs.run(torch, "sgd_momentum_manual", True)
    marked = [o for o in gc.get_objects() if issubclass(type(o), Tensor)
              and isinstance(o.__dict__.get("_data"), np.ndarray)
              and o._data.__class__ is not np.ndarray]
    assert marked == [] and len(out) == 16


def test_index_and_arg_ops_take_traced_values_as_inputs() -> None:
    """gather, take, index_select, index_put, one_hot (with num_classes), argmax/argmin,
    max/min(dim).indices and count_nonzero on values that differ between calls: one
    trace, and each call's own result (argmax and max(dim).indices used to return the
    first call's); data-dependent ones (sort, topk, nonzero) break the graph instead."""
    F = torch.nn.functional
    x = torch.arange(12.0).reshape(3, 4)
    rng = np.random.default_rng(5)
    progs_ = {
        "gather": lambda v, i: x.gather(1, i[:, None]) * v.sum(),
        "take": lambda v, i: torch.take(x, i) + v[:3],
        "index_select": lambda v, i: x.index_select(1, i) * 2.0,
        "index_put": lambda v, i: torch.zeros(4).index_put((i,), v[:3]),
        "one_hot": lambda v, i: F.one_hot(i, 4) * 3,
        "argmax": lambda v, i: (torch.argmax(v), v.argmax(0, keepdim=True), v.argmin(0)),
        "max_dim": lambda v, i: (v.max(0).indices, torch.min(v[None], 1).indices),
        "count": lambda v, i: torch.count_nonzero(torch.relu(v)),
        "accuracy": lambda v, i: (x[:, :3].argmax(1) == i).float().mean() + v.argmax(),
    }
    for name, fn in progs_.items():
        c = torch.compile(fn)
        for _ in range(3):
            v = torch.tensor(rng.normal(size=4).astype(np.float32))
            i = torch.tensor(rng.permutation(4)[:3].astype(np.int64))
            got, want = c(v, i), fn(v, i)
            got = got if isinstance(got, tuple) else (got,)
            want = want if isinstance(want, tuple) else (want,)
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and torch.equal(g, w), name
        assert c.traces == 1 and not c.graph_breaks, name
    for fn in (lambda v: torch.sort(v).indices, lambda v: torch.topk(v, 2).indices,
               lambda v: torch.nonzero(v > 0)):
        c = torch.compile(fn)
        for _ in range(3):
            v = torch.tensor(rng.normal(size=4).astype(np.float32))
            assert torch.equal(c(v), fn(v))
        assert c.graph_breaks


def test_cross_entropy_compiled_is_eager_bit_for_bit() -> None:
    """cross_entropy / nll_loss with targets that differ between calls: the traced loss
    (targets an input of the op) has the eager arithmetic, so values and gradients are the
    eager bits, label smoothing, class weights and ignore_index included."""
    F = torch.nn.functional
    rng = np.random.default_rng(2)
    w = torch.tensor([1.0, 2.0, 0.5])
    for kw in ({}, {"weight": w}, {"ignore_index": 1}, {"label_smoothing": 0.2},
               {"label_smoothing": 0.2, "weight": w, "ignore_index": 0}):
        for red in ("mean", "sum", "none"):
            p = torch.nn.Parameter(torch.tensor(rng.normal(size=(4, 3)).astype(np.float32)))

            def f(x: Any, t: Any, kw: Any = kw, red: str = red, p: Any = p) -> Any:
                p.grad = None
                loss = F.cross_entropy(x @ p, t, reduction=red, **kw)
                (loss.sum() * 1.7).backward()
                return loss
            c = torch.compile(f)
            for _ in range(3):
                x = torch.tensor(rng.normal(size=(6, 4)).astype(np.float32))
                t = torch.tensor(rng.integers(0, 3, 6))
                a = c(x, t)
                ga = p.grad
                b = f(x, t)
                assert torch.equal(a, b) and torch.equal(ga, p.grad), (kw, red)
            assert not c.graph_breaks and c.traces == 1, (kw, red)


def test_backward_into_an_input_grad_runs_eagerly() -> None:
    """backward() inside a compiled function reaching an input that requires grad (an
    adversarial example's gradient): each call's own input gets its .grad (a replay wrote
    the first call's tensor); that function breaks the graph, as PyTorch's backward does."""
    def f(x: Any) -> Any:
        loss = (x * x).sum()
        loss.backward()
        return x.grad.sign()

    c = torch.compile(f)
    xs = [torch.tensor([1.0, -2.0], requires_grad=True), torch.tensor([-3.0, 4.0],
                                                                         requires_grad=True)]
    outs = [c(x) for x in xs]
    assert [x.grad.tolist() for x in xs] == [[2.0, -4.0], [-6.0, 8.0]]
    assert [o.tolist() for o in outs] == [[1.0, -1.0], [-1.0, 1.0]]
    assert c.graph_breaks


def test_a_trace_keeps_none_of_its_values() -> None:
    # what the trace computed (an 8 MB intermediate here) is let go once the program is
    # built: the compiled function holds its program, not the trace's arrays
    import gc
    import tracemalloc

    x = torch.ones(1024, 1024, dtype=torch.float64)
    c = torch.compile(lambda t: (t.exp() * 2.0).sum())
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = c(x)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert out.item() == pytest.approx(2 * np.e * 1024 * 1024)
    assert held < 2_000_000, held


def test_print_is_a_graph_break_and_fullgraph_refuses_it() -> None:
    r = progs.run(torch, "prints_every_call", True)
    assert [int(x[1]) for x in r[::2]] == [1, 1, 1, 1]  # printed at every call

    def f(x: Any) -> Any:
        print("hi", 3, end="")
        return x + 1

    with pytest.raises(torch._dynamo.exc.Unsupported) as e:
        torch.compile(f, fullgraph=True)(torch.ones(2))
    assert str(e.value).splitlines()[:2] == [
        "Failed to trace builtin operator",
        "  Explanation: Dynamo does not know how to trace builtin operator `print` with "
        "argument types ['str', 'int'] (has_kwargs True)"]


def test_compiled_module_is_a_module_holding_orig_mod() -> None:
    m = torch.nn.Linear(2, 2)
    cm = torch.compile(m)
    assert isinstance(cm, torch.nn.Module) and cm._orig_mod is m
    assert list(cm.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert [n for n, _ in cm.named_parameters()] == ["_orig_mod.weight", "_orig_mod.bias"]
    assert cm.weight is m.weight and cm.in_features == 2
    cm.train(False)
    assert not m.training and not cm.training
    sd = {k: v * 0 for k, v in cm.state_dict().items()}
    cm.load_state_dict(sd)
    assert float(m.weight.abs().sum()) == 0.0
    x = torch.ones(1, 2)
    np.testing.assert_array_equal(cm(x).detach().numpy(), m(x).detach().numpy())


def test_first_call_outputs_show_compiled_function_backward() -> None:
    m = torch.nn.Linear(3, 2)
    cm = torch.compile(m)
    x = torch.ones(2, 3)
    first, second = cm(x), cm(x)
    assert type(first.grad_fn).__name__ == type(second.grad_fn).__name__ == \
        "CompiledFunctionBackward"
    assert repr(first).endswith("grad_fn=<CompiledFunctionBackward>)")
    first.sum().backward()
    g1 = m.weight.grad.clone()
    m.weight.grad = None
    second.sum().backward()
    assert torch.equal(g1, m.weight.grad) and torch.equal(g1, torch.full((2, 3), 2.0))
    f = torch.compile(lambda v: (v * 2, v.sum()))
    w = torch.ones(2, requires_grad=True)
    a, b = f(w)
    (a.sum() + b).backward()
    assert w.grad.tolist() == [3.0, 3.0]
    assert f(torch.ones(2))[0].grad_fn is None  # no graph: none shown
