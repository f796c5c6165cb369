"""Structured control flow in the core (``tapegrad.ops.control``): eager semantics, gradients
(first and second order, both styles), forward mode, vmap with per-example predicates, and
the hook by which a tracing level takes the ops over."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import func, ops
from tapegrad._core.dispatch import Level
from tapegrad.ops import control


def t(x: Any, rg: bool = False) -> tg.Tensor:
    return tg.tensor(np.asarray(x, dtype=np.float64), requires_grad=rg)


def fd(f: Any, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        a, b = x.copy(), x.copy()
        a[i] += eps
        b[i] -= eps
        g[i] = (f(a) - f(b)) / (2 * eps)
    return g


# ------------------------------------------------------------------ cond
def test_cond_runs_only_the_branch_taken() -> None:
    ran: list[str] = []

    def tb(v: Any) -> tuple[Any, ...]:
        ran.append("t")
        return (v * 2,)

    def fb(v: Any) -> tuple[Any, ...]:
        ran.append("f")
        return (v - 1,)

    (y,) = control.cond(t(3.0) > 0, tb, fb, (t(3.0),))
    assert float(y) == 6.0 and ran == ["t"]
    (y,) = control.cond(False, tb, fb, (t(3.0),))
    assert float(y) == 2.0 and ran == ["t", "f"]


def test_cond_gradient_first_and_second_order_match_finite_differences() -> None:
    def f(xv: Any) -> Any:
        return control.cond(xv.sum() > 0, lambda: (xv ** 3,), lambda: (ops.sin(xv),))[0].sum()

    for x0 in (np.array([0.5, 1.2]), np.array([-0.5, -1.2])):
        x = t(x0, rg=True)
        (g,) = tg.grad(f(x), x, create_graph=True)
        np.testing.assert_allclose(g.numpy(), fd(lambda a: float(f(t(a))), x0), rtol=1e-6)
        (h,) = tg.grad(g.sum(), x)
        want = 6 * x0 if x0.sum() > 0 else -np.sin(x0)
        np.testing.assert_allclose(h.numpy(), want, rtol=1e-6)


def test_cond_records_only_what_ran() -> None:
    x = t(2.0, rg=True)
    (y,) = control.cond(x > 0, lambda: (x * x,), lambda: (ops.exp(x),))
    # the core's name, or PyTorch's once tapegrad.torch is imported (by another test)
    assert type(y.grad_fn).__name__ in ("MultiplyBackward0", "MulBackward0")


def test_cond_predicate_must_be_scalar() -> None:
    with pytest.raises(ValueError, match="truth value of an array") as e:
        control.cond(np.array([True, False]), lambda: (t(1.0),), lambda: (t(2.0),))
    assert e.value.__notes__


def test_branches_must_return_tuples() -> None:
    with pytest.raises(TypeError, match="must return a tuple"):
        control.cond(True, lambda: t(1.0), lambda: t(2.0))


def test_cond_with_torch_style_tensors_backward() -> None:
    import tapegrad.torch as torch

    x = torch.tensor(2.0, requires_grad=True)
    (y,) = control.cond(x > 1, lambda: (x ** 3,), lambda: (x,))
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    g.backward()
    assert float(y) == 8.0 and float(g) == 12.0 and float(x.grad) == 12.0


# ------------------------------------------------------------------ while_loop
def test_while_loop_values_and_gradients() -> None:
    def power(xv: Any, n: int) -> Any:
        _, p = control.while_loop(lambda i, p: i < n, lambda i, p: (i + 1, p * xv),
                                  (tg.tensor(0), t(1.0)))
        return p

    x = t(1.3, rg=True)
    p = power(x, 4)
    (g,) = tg.grad(p, x, create_graph=True)
    (h,) = tg.grad(g, x)
    assert float(p) == pytest.approx(1.3 ** 4)
    assert float(g) == pytest.approx(4 * 1.3 ** 3)
    assert float(h) == pytest.approx(12 * 1.3 ** 2)


def test_while_loop_zero_iterations_returns_the_inputs() -> None:
    a, b = t(1.0), t(2.0)
    out = control.while_loop(lambda x, y: x > 5, lambda x, y: (x + 1, y), (a, b))
    assert out[0] is a and out[1] is b


def test_maximum_iterations_caps_and_still_evaluates_the_condition() -> None:
    calls = []

    def c(i: Any) -> Any:
        calls.append(int(i))
        return i < 100

    (i,) = control.while_loop(c, lambda i: (i + 1,), (tg.tensor(0),), maximum_iterations=3)
    assert int(i) == 3
    assert calls == [0, 1, 2, 3]  # TensorFlow's eager loop: logical_and(i < max, cond(...))
    (i,) = control.while_loop(c, lambda i: (i + 1,), (tg.tensor(0),), maximum_iterations=0)
    assert int(i) == 0


def test_while_body_must_keep_the_number_of_loop_vars() -> None:
    with pytest.raises(ValueError, match="returned 1 loop variables"):
        control.while_loop(lambda a, b: a < 2, lambda a, b: (a + 1,), (t(0.0), t(0.0)))


# ------------------------------------------------------------------ switch_case
def test_switch_case_picks_a_branch_and_clamps_out_of_range_to_the_last() -> None:
    fns = [lambda v: (v,), lambda v: (v * 2,), lambda v: (v * 3,)]
    x = t(1.5, rg=True)
    for k, want in ((0, 1.0), (1, 2.0), (2, 3.0), (7, 3.0), (-1, 3.0)):
        (y,) = control.switch_case(tg.tensor(k), fns, (x,))
        (g,) = tg.grad(y, x)
        assert float(y) == pytest.approx(1.5 * want) and float(g) == pytest.approx(want)
    with pytest.raises(ValueError, match="at least one item"):
        control.switch_case(0, [])


# ------------------------------------------------------------------ forward mode
def test_jvp_through_cond_and_while_matches_finite_differences() -> None:
    def f(xv: Any) -> Any:
        (y,) = control.cond(xv > 0, lambda: (xv * xv * xv,), lambda: (-xv,))
        _, z = control.while_loop(lambda i, z: i < 2, lambda i, z: (i + 1, ops.sin(z) + z),
                                  (tg.tensor(0), y))
        return z

    for x0 in (0.7, -0.4):
        _, tan = func.jvp(f, (t(x0),), (t(1.0),))
        want = fd(lambda a: float(f(t(a))), np.array(x0))
        assert float(tan) == pytest.approx(float(want), rel=1e-5)


# ------------------------------------------------------------------ vmap: per-example predicates
def _loop_cond(xv: Any) -> Any:
    return control.cond(xv.sum() > 0, lambda: (xv * xv,), lambda: (-xv,))[0]


def _loop_while(xv: Any) -> Any:
    i, s = control.while_loop(lambda i, s: s < 10.0, lambda i, s: (i + 1, s * 2.0 + 0.5),
                              (tg.tensor(0), xv))
    return s * 1.0 + i


def _loop_switch(k: Any, xv: Any) -> Any:
    return control.switch_case(k, [lambda: (xv,), lambda: (ops.exp(xv),), lambda: (xv * 3,)])[0]


def test_vmap_cond_selects_per_example_like_a_loop() -> None:
    xs = np.array([[1.0, 2.0], [-3.0, -1.0], [0.5, -2.0]])
    got = func.vmap(_loop_cond)(t(xs)).numpy()
    want = np.stack([_loop_cond(t(r)).numpy() for r in xs])
    np.testing.assert_allclose(got, want)


def test_vmap_while_loop_runs_each_example_its_own_number_of_times() -> None:
    xs = np.array([1.0, 3.0, 20.0, 0.7])
    got = func.vmap(_loop_while)(t(xs)).numpy()
    want = np.array([float(_loop_while(t(v))) for v in xs])
    np.testing.assert_allclose(got, want)


def test_vmap_switch_case_and_per_example_gradients() -> None:
    ks = np.array([0, 1, 2, 5, -1])
    xs = np.linspace(-1, 1, 5)
    got = func.vmap(_loop_switch)(tg.tensor(ks), t(xs)).numpy()
    want = np.array([float(_loop_switch(tg.tensor(k), t(v))) for k, v in zip(ks, xs)])
    np.testing.assert_allclose(got, want)
    pg = func.vmap(func.grad(_loop_while))(t(np.array([1.0, 3.0, 20.0]))).numpy()
    want_g = [float(tg.grad(_loop_while(x := t(v, rg=True)), x)[0]) for v in (1.0, 3.0, 20.0)]
    np.testing.assert_allclose(pg, want_g)


def test_vmap_while_loop_refuses_changing_shapes_with_per_example_condition() -> None:
    def f(xv: Any) -> Any:
        return control.while_loop(lambda s: s.sum() < 4.0,
                                  lambda s: (ops.concatenate([s, s]),), (xv,))[0]

    with pytest.raises(ValueError, match="changes shape"):
        func.vmap(f)(t(np.array([[1.0], [3.0]])))


# ------------------------------------------------------------------ the tracing hook
class StubTrace(Level):
    """A level that records programs, for the hook's contract: it traces every branch (and the
    body once), then answers with what eager code would give."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def control_cond(self, pred: Any, true_fn: Any, false_fn: Any, operands: Any) -> Any:
        self.calls.append(("cond", tuple(operands)))
        a, b = true_fn(*operands), false_fn(operands)  # both call forms are accepted
        assert isinstance(a, tuple) and isinstance(b, tuple)
        return a if control.truth(pred) else b

    def control_while_loop(self, cond_fn: Any, body_fn: Any, loop_vars: Any,
                           maximum_iterations: Any) -> Any:
        self.calls.append(("while_loop", tuple(loop_vars)))
        body_fn(*loop_vars)  # traced once
        i, vs = 0, tuple(loop_vars)
        while (maximum_iterations is None or i < maximum_iterations) and \
                control.truth(cond_fn(*vs)):
            vs = body_fn(*vs)
            i += 1
        return vs

    def control_switch_case(self, index: Any, fns: Any, operands: Any) -> Any:
        self.calls.append(("switch_case", tuple(operands)))
        outs = [f(*operands) for f in fns]
        k = int(index)
        return outs[k if 0 <= k < len(outs) else -1]


def test_a_tracing_level_gets_the_ops_with_flat_tuples() -> None:
    x = t(2.0)
    with StubTrace() as lv:
        (a,) = control.cond(x > 0, lambda v: (v + 1,), lambda v: (v - 1,), (x,))
        (i, s) = control.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2),
                                    (tg.tensor(0), x), maximum_iterations=10)
        (c,) = control.switch_case(tg.tensor(1), [lambda v: (v,), lambda v: (-v,)], (x,))
    assert [k for k, _ in lv.calls] == ["cond", "while_loop", "switch_case"]
    assert all(isinstance(ops, tuple) for _, ops in lv.calls)
    assert float(a) == 3.0 and int(i) == 3 and float(s) == 16.0 and float(c) == -2.0
    # with the level gone, the ops run eagerly again
    assert control.cond(True, lambda: (x,), lambda: (x,))[0] is x and len(lv.calls) == 3


def test_no_handler_under_vmap_or_jvp_levels() -> None:
    from tapegrad._core.dispatch import control as hook

    seen = []
    func.vmap(lambda v: seen.append(hook("cond")) or v)(t(np.ones(2)))
    func.jvp(lambda v: seen.append(hook("while_loop")) or v, (t(1.0),), (t(1.0),))
    assert seen == [None, None]
