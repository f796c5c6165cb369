"""The tracing interpreter (tapegrad/autodiff/tracing.py) on the core API.

A traced function's program must replay to the values the Python function
gives on new inputs (checked against running the function eagerly), fold
what depends on no input, drop what nothing needs, record reads/writes of
state in program order, and stay differentiable (finite differences, second
order) when replayed under reverse mode.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad as tg
from tapegrad._core.dispatch import control
from tapegrad._core.mode import STATE
from tapegrad.autodiff import tracing


def trace(fn: Any, *inputs: Any) -> tuple[tracing.Program | None, Any, tracing.TraceLevel]:
    def build(lv: tracing.TraceLevel) -> tuple[Any, Any]:
        return tuple(lv.add_input(t, f"x{i}") for i, t in enumerate(inputs)), {}

    def flat(r: Any) -> tuple[list[Any], Any]:
        return (list(r) if isinstance(r, tuple) else [r]), None

    return tracing.trace_call(fn, build, flat)


def f_mix(x: Any, y: Any) -> Any:
    z = tg.exp(x) * y + tg.sum(x * x)
    return tg.tanh(z) / (1.0 + y * y)


def test_replay_equals_eager_on_new_inputs() -> None:
    rng = np.random.default_rng(0)
    x, y = tg.tensor(rng.normal(size=5)), tg.tensor(rng.normal(size=5))
    prog, res, _ = trace(f_mix, x, y)
    assert prog is not None
    np.testing.assert_array_equal(res._data, f_mix(x, y)._data)
    for _ in range(3):
        a, b = rng.normal(size=5), rng.normal(size=5)
        (out,) = prog([a, b])
        np.testing.assert_allclose(out._data, f_mix(tg.tensor(a), tg.tensor(b))._data,
                                   rtol=1e-15)
    assert STATE.levels == []
    assert res._lvl is None  # tracers are plain tensors again


def test_constants_fold_and_dead_ops_drop() -> None:
    c = tg.tensor(np.arange(4.0))

    def f(x: Any) -> Any:
        k = tg.exp(c) * 2.0 + tg.sum(c)  # depends on no input: folded
        unused = tg.sin(x) * 3.0  # noqa: F841 - nothing needs it: dropped
        return x * k

    prog, _, lv = trace(f, tg.tensor(np.ones(4)))
    assert prog is not None
    assert {"exp", "multiply", "add", "sum"} <= set(lv.folded)
    assert [i.name for i in prog.dropped] == ["sin", "multiply"]
    assert [i.name for i in prog.ops()] == ["multiply"]
    (out,) = prog([np.full(4, 2.0)])
    np.testing.assert_allclose(out._data, 2.0 * (np.exp(np.arange(4.0)) * 2 + 6))


def test_backward_inside_is_part_of_the_program() -> None:
    w = tg.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)

    def f(x: Any) -> Any:
        w.grad = None
        loss = tg.sum(tg.tanh(x * w) ** 2)
        loss.backward()
        return loss

    x0 = tg.tensor(np.array([1.0, 2.0, 3.0]))
    prog, _, _ = trace(f, x0)
    assert prog is not None
    assert any(i.bwd for i in prog.ops())  # the VJPs are recorded instructions
    for xv in (np.array([0.3, -0.2, 0.1]), np.array([2.0, 1.0, -1.0])):
        (loss,) = prog([xv])
        ref = tg.tensor(w._data.copy(), requires_grad=True)
        rl = tg.sum(tg.tanh(tg.tensor(xv) * ref) ** 2)
        rl.backward()
        np.testing.assert_allclose(loss._data, rl._data, rtol=1e-14)
        np.testing.assert_allclose(w.grad._data, ref.grad._data, rtol=1e-14)
    assert "run_backward" not in prog.source()


def test_guard_on_a_captured_constant_modified_in_place() -> None:
    c = tg.tensor(np.ones(3))
    prog, _, _ = trace(lambda x: x + c, tg.tensor(np.zeros(3)))
    assert prog is not None and prog.check() is None
    c._vc[0] += 1  # what an in-place op does
    assert "modified in place" in (prog.check() or "")


def test_inplace_writes_replay() -> None:
    buf = tg.tensor(np.zeros(3))

    def f(x: Any) -> Any:
        with tg.no_grad():
            buf._assign_result(buf + x, "in-place")  # buf += x
        return buf * 2.0

    prog, _, _ = trace(f, tg.tensor(np.ones(3)))
    assert prog is not None
    np.testing.assert_allclose(buf._data, 1.0)
    (out,) = prog([np.full(3, 2.0)])
    np.testing.assert_allclose(buf._data, 3.0)
    np.testing.assert_allclose(out._data, 6.0)


def test_replay_under_reverse_mode_gives_gradients_of_any_order() -> None:
    x0 = tg.tensor(np.array([0.3, -0.7]))
    prog, _, _ = trace(lambda x: tg.sum(tg.sin(x) * x * x), x0)
    assert prog is not None
    x = tg.tensor(np.array([1.1, 0.4]), requires_grad=True)
    (y,) = tracing.run_program(prog, [x])
    assert y.grad_fn.name() == "CompiledFunctionBackward"  # one node for the whole call
    (g,) = tg.grad(y, x, create_graph=True)
    assert g.grad_fn.name() == "CompiledFunctionBackward"  # its VJP: a traced program too
    (h,) = tg.grad(tg.sum(g), x)
    xv = x._data

    def fd(fn: Any, v: np.ndarray, eps: float = 1e-6) -> np.ndarray:
        return np.array([(fn(v + eps * e) - fn(v - eps * e)) / (2 * eps) for e in np.eye(2)])

    def f_np(v: np.ndarray) -> float:
        return float(np.sum(np.sin(v) * v * v))

    def g_np(v: np.ndarray) -> float:
        return float(np.sum(np.cos(v) * v * v + 2 * v * np.sin(v)))

    np.testing.assert_allclose(g._data, fd(f_np, xv), rtol=1e-6)
    np.testing.assert_allclose(h._data, fd(g_np, xv), rtol=1e-6)


def test_effects_run_in_order_and_on_every_replay() -> None:
    seen: list[float] = []

    def f(x: Any) -> Any:
        y = x * 2.0
        tracing.effect(lambda a: seen.append(float(a)), [y], "log", invalidates=False)
        return y + 1.0

    prog, _, _ = trace(f, tg.tensor(1.0))
    assert prog is not None and seen == [2.0]
    prog([np.array(5.0)])
    prog([np.array(-1.0)])
    assert seen == [2.0, 10.0, -2.0]


def test_dry_trace_leaves_state_as_it_was() -> None:
    w = tg.tensor(np.array([1.0, 2.0]), requires_grad=True)

    def f(x: Any) -> Any:
        (w * x).sum().backward()
        return x

    def build(lv: tracing.TraceLevel) -> tuple[Any, Any]:
        return (lv.add_input(tg.tensor(np.ones(2)), "x"),), {}

    prog, _, _ = tracing.trace_call(f, build, lambda r: ([r], None), dry=True)
    assert prog is not None
    assert w.grad is None


def test_reading_a_value_is_noted() -> None:
    def f(x: Any) -> Any:
        return x * float(tg.sum(x).item())

    prog, _, lv = trace(f, tg.tensor(np.ones(2)))
    assert prog is None
    assert lv.breaks and lv.breaks[0][0] == "item"


def _cond(pred: Any, t: Any, f: Any) -> Any:
    """A stand-in for tapegrad.ops.control's cond (the contract with the tracing level)."""
    h = control("cond")
    if h is not None:
        return h(pred, lambda: (t(),), lambda: (f(),), ())[0]
    return t() if bool(pred) else f()


def test_cond_handler_selects_and_differentiates_the_taken_branch() -> None:
    def f(x: Any) -> Any:
        return _cond(tg.sum(x) > 0, lambda: x * x * 3.0, lambda: tg.sin(x))

    prog, _, _ = trace(f, tg.tensor(np.array([1.0, 2.0])))
    assert prog is not None
    for v in (np.array([1.0, 2.0]), np.array([-1.0, -0.5])):
        x = tg.tensor(v, requires_grad=True)
        (y,) = tracing.run_program(prog, [x])
        tg.sum(y).backward()
        want = 6 * v if v.sum() > 0 else np.cos(v)
        np.testing.assert_allclose(x.grad._data, want, rtol=1e-14)
        np.testing.assert_allclose(y._data, 3 * v * v if v.sum() > 0 else np.sin(v))


def test_cond_side_effects_only_in_the_taken_branch() -> None:
    seen: list[str] = []

    def f(x: Any) -> Any:
        def pos() -> Any:
            tracing.effect(lambda: seen.append("pos"), (), "log", False)
            return x

        def neg() -> Any:
            tracing.effect(lambda: seen.append("neg"), (), "log", False)
            return -x

        return _cond(x > 0, pos, neg)

    prog, _, _ = trace(f, tg.tensor(1.0))
    assert prog is not None and seen == ["pos"]
    prog([np.array(-2.0)])
    prog([np.array(3.0)])
    assert seen == ["pos", "neg", "pos"]


@pytest.mark.parametrize("n", [1, 50])
def test_scalar_chain_uses_operators_and_buffers_are_reused(n: int) -> None:
    def f(x: Any) -> Any:
        y = x
        for _ in range(n):
            y = y * 1.0001 + 0.0001
        return y

    prog, _, _ = trace(f, tg.tensor(np.ones(8)))
    assert prog is not None
    assert "out=" in prog.source()  # a dead intermediate's buffer is written into
    v = np.linspace(0, 1, 8)
    (out,) = prog([v])
    ref = v.copy()
    for _ in range(n):
        ref = ref * 1.0001 + 0.0001
    np.testing.assert_array_equal(out._data, ref)
    assert v[-1] == 1.0  # an input buffer is never written into


def test_no_buffer_reuse_through_an_alias() -> None:
    from tapegrad import ops

    def f(x: Any) -> Any:
        a = x * 2.0
        b = ops.identity(a)  # the same array as a
        c = a + 1.0  # a's last use: its buffer must not be written, b still needs it
        return b * c

    prog, res, _ = trace(f, tg.tensor(np.ones(3)))
    assert prog is not None
    v = np.array([1.0, 2.0, 3.0])
    (out,) = prog([v])
    np.testing.assert_array_equal(out._data, (2 * v) * (2 * v + 1))
    (out2,) = prog([v])  # and the input is untouched
    np.testing.assert_array_equal(out2._data, out._data)
