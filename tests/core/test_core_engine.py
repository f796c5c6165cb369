"""The shared engine: graph shapes, memory, threads, grad mode, hooks, in-place checks."""

# tapegrad.grad returns Optional tensors; these tests know which are set
# mypy: disable-error-code="union-attr"

from __future__ import annotations

import gc
import json
import subprocess
import sys
import threading
import time
import tracemalloc
import weakref
from typing import Any

import numpy as np
import pytest

import tapegrad as tg
from tapegrad._core.registry import defop


def leaf(v: Any) -> tg.Tensor:
    return tg.tensor(np.asarray(v, dtype=np.float64), requires_grad=True)


def G(t: tg.Tensor) -> tg.Tensor:
    """``t.grad``, which the test expects to be set."""
    assert t.grad is not None
    return t.grad


# ---------------------------------------------------------------------------- graph shapes
_calls: list[str] = []


@defop("counted_square", saves=("x",))
def counted_square(x: Any) -> Any:
    return np.square(x)


@counted_square.defvjp
def _(g: tg.Tensor, x: tg.Tensor) -> Any:  # d x^2 = 2x dx
    _calls.append("counted_square")
    return (g * x * 2.0,)


def test_diamond_runs_each_vjp_once_and_sums_both_paths() -> None:
    x = leaf([1.0, -2.0])
    s = counted_square(x)  # shared node
    a = s * 3.0
    b = s.exp()
    y = (a + b).sum()
    _calls.clear()
    y.backward()
    assert _calls == ["counted_square"]
    xs = np.array([1.0, -2.0])
    np.testing.assert_allclose(G(x).numpy(), (3.0 + np.exp(xs ** 2)) * 2 * xs)


def test_nested_diamonds() -> None:
    x = leaf(0.7)
    y = x
    for _ in range(20):  # each level doubles the number of paths
        y = y * 0.5 + y * 0.5
    y.backward()
    assert G(x).item() == pytest.approx(1.0)


def test_shared_subexpression_and_input_used_twice_in_one_op() -> None:
    x = leaf([0.5, 1.5])
    e = x.exp()
    y = (e * e + e * x + x * x).sum()
    (g,) = tg.grad(y, x)
    xv = np.array([0.5, 1.5])
    np.testing.assert_allclose(g.numpy(), 2 * np.exp(2 * xv) + np.exp(xv) * (xv + 1) + 2 * xv)


def test_gradient_wrt_intermediate_and_leaf_together() -> None:
    x = leaf(2.0)
    h = x * x
    y = h * h
    gh, gx = tg.grad(y, [h, x])
    assert gh.item() == pytest.approx(8.0)  # 2h
    assert gx.item() == pytest.approx(32.0)  # 4x^3


def _chain_report(n: int) -> dict[str, Any]:
    """Build ``y = y * 1.0000001`` n times and backprop; time and tracemalloc peak."""
    gc.collect()
    tracemalloc.start()
    try:
        t0 = time.perf_counter()
        x = leaf(1.0)
        y = x
        for _ in range(n):
            y = y * 1.0000001
        t1 = time.perf_counter()
        y.backward()
        t2 = time.perf_counter()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    grad = G(x).item()
    del x, y
    return {"n": n, "forward_s": t1 - t0, "backward_s": t2 - t1, "peak_mb": peak / 1e6,
            "grad": grad}


def test_chain_20k_backprop_with_tracemalloc() -> None:
    rep = _chain_report(20_000)
    print(f"\n20k-op chain under tracemalloc: forward {rep['forward_s']:.2f}s, backward "
          f"{rep['backward_s']:.2f}s, peak {rep['peak_mb']:.0f} MB "
          f"({rep['peak_mb'] * 1e6 / rep['n']:.0f} B/op)")
    assert rep["grad"] == pytest.approx(1.0000001 ** 20_000, rel=1e-9)


_CHAIN_SCRIPT = r"""
import json, resource, sys, time
import tapegrad as tg
n = int(sys.argv[1])
sys.setrecursionlimit(1000)  # the engine must not recurse
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
x = tg.tensor(1.0, requires_grad=True)
y = x
for _ in range(n):
    y = y * 1.0000001
t1 = time.perf_counter()
y.backward()
t2 = time.perf_counter()
usage = resource.getrusage(resource.RUSAGE_SELF)
peak = usage.ru_maxrss
print(json.dumps({"forward_s": t1 - t0, "backward_s": t2 - t1, "grad": x.grad.item(),
                  "cpu_s": usage.ru_utime + usage.ru_stime,
                  "peak_rss_mb": peak / 1024, "graph_rss_mb": (peak - base) / 1024}))
"""


@pytest.mark.slow
def test_million_op_chain_no_recursion_error() -> None:
    """1,000,000 multiplies in a chain backprop iteratively (run in a fresh process)."""
    n = 1_000_000
    res = subprocess.run([sys.executable, "-c", _CHAIN_SCRIPT, str(n)], capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    rep = json.loads(res.stdout.strip().splitlines()[-1])
    print(f"\n1M-op chain: forward {rep['forward_s']:.1f}s, backward {rep['backward_s']:.1f}s "
          f"(process CPU {rep['cpu_s']:.1f}s), "
          f"peak RSS {rep['peak_rss_mb']:.0f} MB (graph + backward: {rep['graph_rss_mb']:.0f} MB)")
    assert rep["grad"] == pytest.approx(1.0000001 ** n, rel=1e-6)


# ---------------------------------------------------------------------------- freeing / reuse
def test_second_backward_through_freed_graph_raises() -> None:
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    np.testing.assert_allclose(G(x).numpy(), [2.0, 4.0])  # unchanged by the failed call


def test_second_grad_through_freed_graph_raises() -> None:
    x = leaf(3.0)
    y = x.exp() * x
    tg.grad(y, x)
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        tg.grad(y, x)


def test_graph_that_saved_nothing_can_be_backwarded_twice() -> None:
    x = leaf([1.0, 2.0])
    y = (x + 1.0).sum()
    y.backward()
    y.backward()
    np.testing.assert_allclose(G(x).numpy(), [2.0, 2.0])


def test_retain_graph_allows_reuse() -> None:
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(G(x).numpy(), [4.0, 8.0])
    x.grad = None
    z = (x.exp() * x).sum()
    g1 = tg.grad(z, x, retain_graph=True)[0].numpy().copy()
    g2 = tg.grad(z, x)[0].numpy()
    np.testing.assert_allclose(g1, g2)


def test_intermediate_and_node_are_freed_after_backward_and_del() -> None:
    x = leaf(np.ones(4))
    h = x.exp()
    y = (h * h).sum()
    h_ref = weakref.ref(h)
    node_ref = weakref.ref(h.grad_fn)
    y_node_ref = weakref.ref(y.grad_fn)
    del h
    assert h_ref() is not None  # the graph (through y) still needs it
    y.backward()
    del y
    gc.collect()
    assert h_ref() is None
    assert node_ref() is None
    assert y_node_ref() is None
    assert x.grad is not None


def test_product_with_a_constant_does_not_keep_its_tensor_input() -> None:
    """``h * c`` needs only ``c`` for dh (PyTorch saves ``self`` only when ``other`` needs grad)."""
    x = leaf(np.ones(4))
    h = x.exp()
    h_ref = weakref.ref(h)
    y = h * 3.0
    del h
    assert h_ref() is None  # nothing in the graph holds h: MulBackward0 kept only 3.0
    y.sum().backward()
    np.testing.assert_allclose(G(x).numpy(), 3.0 * np.e * np.ones(4))


def test_product_keeps_what_a_tracked_input_needs() -> None:
    a, b = leaf([1.0, 2.0]), tg.tensor([3.0, 4.0])
    h = a * 1.0
    y = (h * b).sum()  # dh needs b only: h itself is not saved
    y.backward()
    np.testing.assert_allclose(G(a).numpy(), [3.0, 4.0])
    c = leaf([5.0, 6.0])
    z = (b * c) / (a * 1.0)  # dz/dc needs b; dz/d(a) needs both sides of the division
    z.sum().backward()
    np.testing.assert_allclose(G(c).numpy(), [3.0 / 1.0, 4.0 / 2.0])
    np.testing.assert_allclose(G(a).numpy(), np.array([3.0, 4.0]) - np.array([15.0, 24.0])
                               / np.array([1.0, 4.0]))


def test_second_derivative_through_a_product_with_an_untracked_side() -> None:
    x = leaf(2.0)
    y = (x * x * 3.0) / 4.0  # 0.75 x^2
    (g,) = tg.grad(y, x, create_graph=True)
    (gg,) = tg.grad(g, x)
    assert float(g) == pytest.approx(3.0)
    assert float(gg) == pytest.approx(1.5)


@defop("scaled_by", saves=("x", "y"), needs=True, save_for={"y": ("x",)})
def scaled_by(x: Any, y: Any) -> Any:
    return x * y


@scaled_by.defvjp
def _(g: Any, x: Any, y: Any, needs: tuple[bool, ...]) -> Any:
    assert y is not None or not needs[0]  # y is kept whenever x's gradient is wanted
    return (g * y if needs[0] else None), (g * x if needs[1] else None)


def test_save_for_keeps_versions_in_step_with_what_is_saved() -> None:
    """A saved input after a skipped one is still checked against in-place changes."""
    x = tg.tensor([1.0, 2.0])  # untracked: y is not needed by anything, so not kept
    y = leaf([3.0, 4.0])
    out = scaled_by(x, y)
    assert out.grad_fn.saved[1] is None
    out.sum().backward()
    np.testing.assert_allclose(G(y).numpy(), [1.0, 2.0])
    out = scaled_by(x, y)
    x += 1.0  # x is saved for y's gradient: modifying it must be caught
    with pytest.raises(RuntimeError, match="modified in place"):
        out.sum().backward()


def test_gradient_takes_the_shape_and_dtype_of_the_input_node() -> None:
    """Each node records its output's shape and dtype; a gradient arriving there is reduced
    (broadcasting undone) and cast to them."""
    x = tg.tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    h = x * 2.0
    assert h.grad_fn.shape == (3,) and h.grad_fn.dtype == np.float32
    y = h + np.ones((4, 3))  # float64, broadcast over a new leading axis
    y.sum().backward()
    assert G(x).numpy().dtype == np.float32
    np.testing.assert_allclose(G(x).numpy(), [8.0, 8.0, 8.0])


def test_no_reference_cycle_keeps_a_graph_alive() -> None:
    """Dropping the output frees the graph by reference counting alone."""
    gc.collect()
    gc.disable()
    try:
        x = leaf(np.ones(3))
        y = (x.exp() * x).sum()
        ref = weakref.ref(y.grad_fn)
        del y
        assert ref() is None
    finally:
        gc.enable()


def test_no_memory_growth_over_training_steps() -> None:
    rng = np.random.default_rng(0)
    w = leaf(rng.standard_normal((8, 4)) * 0.1)
    b = leaf(np.zeros(4))
    xb = tg.tensor(rng.standard_normal((16, 8)))
    yb = tg.tensor(rng.integers(0, 4, 16))

    def step() -> None:
        logits = tg.tanh(xb @ w + b) * 3.0
        loss = tg.cross_entropy(logits, yb)
        w.grad = None
        b.grad = None
        loss.backward()
        with tg.no_grad():
            w._data -= 0.1 * G(w).numpy()
            b._data -= 0.1 * G(b).numpy()

    for _ in range(30):
        step()
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(20):
            step()
        gc.collect()
        first, _ = tracemalloc.get_traced_memory()
        for _ in range(300):
            step()
        gc.collect()
        last, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert last - first < 64 * 1024, f"grew by {last - first} bytes over 300 steps"


# ---------------------------------------------------------------------------- threads
def test_two_threads_backprop_independent_graphs() -> None:
    results: dict[int, Any] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def work(k: int) -> None:
        try:
            x = leaf(np.full(5, float(k + 1)))
            barrier.wait()
            for _ in range(200):
                y = (x * x * float(k + 1)).sum()
                (g,) = tg.grad(y, x)
                assert np.allclose(g.numpy(), 2 * (k + 1) * x.numpy())
            y = (x ** 3).sum()
            y.backward()
            results[k] = G(x).numpy().copy()
        except BaseException as e:  # noqa: BLE001 - reported to the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    np.testing.assert_allclose(results[0], 3 * np.full(5, 1.0) ** 2)
    np.testing.assert_allclose(results[1], 3 * np.full(5, 2.0) ** 2)


def test_thread_started_inside_no_grad_records() -> None:
    out: dict[str, Any] = {}

    def work() -> None:
        x = leaf(2.0)
        y = x * x
        out["enabled"] = tg.is_grad_enabled()
        out["rg"] = y.requires_grad
        out["grad"] = tg.grad(y, x)[0].item()

    with tg.no_grad():
        t = threading.Thread(target=work)
        t.start()
        t.join()
        assert not tg.is_grad_enabled()
    assert out == {"enabled": True, "rg": True, "grad": 4.0}


def test_no_grad_in_one_thread_does_not_affect_another() -> None:
    inside = threading.Event()
    release = threading.Event()

    def work() -> None:
        with tg.no_grad():
            inside.set()
            release.wait(5)

    t = threading.Thread(target=work)
    t.start()
    inside.wait(5)
    try:
        x = leaf(1.0)
        assert (x * 2.0).requires_grad
    finally:
        release.set()
        t.join()


# ---------------------------------------------------------------------------- grad mode
def test_no_grad_context_and_decorator() -> None:
    x = leaf(1.0)
    with tg.no_grad():
        assert not tg.is_grad_enabled()
        y = x * 2.0
        with tg.enable_grad():
            z = x * 2.0
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn is not None
    assert tg.is_grad_enabled()

    @tg.no_grad()
    def f(t: tg.Tensor) -> tg.Tensor:
        return t * 3.0

    @tg.enable_grad()
    def g(t: tg.Tensor) -> tg.Tensor:
        return t * 3.0

    assert not f(x).requires_grad
    with tg.no_grad():
        assert g(x).requires_grad
    assert tg.is_grad_enabled()


def test_no_grad_restores_mode_after_exception() -> None:
    with pytest.raises(ValueError), tg.no_grad():
        raise ValueError("boom")
    assert tg.is_grad_enabled()


def test_set_grad_enabled_function_context_and_decorator() -> None:
    x = leaf(1.0)
    tg.set_grad_enabled(False)
    try:
        assert not tg.is_grad_enabled()
        assert not (x * 2.0).requires_grad
    finally:
        tg.set_grad_enabled(True)
    assert tg.is_grad_enabled()
    with tg.set_grad_enabled(False):
        assert not (x * 2.0).requires_grad
        with tg.set_grad_enabled(True):
            assert (x * 2.0).requires_grad
        assert not tg.is_grad_enabled()
    assert tg.is_grad_enabled()

    @tg.set_grad_enabled(False)
    def f(t: tg.Tensor) -> tg.Tensor:
        return t * 2.0

    assert tg.is_grad_enabled()  # the decorator form restores at once
    assert not f(x).requires_grad
    assert tg.is_grad_enabled()


# ---------------------------------------------------------------------------- tapegrad.grad
def test_create_graph_higher_orders() -> None:
    x = leaf(1.5)
    y = x ** 4
    (g1,) = tg.grad(y, x, create_graph=True)
    (g2,) = tg.grad(g1, x, create_graph=True)
    (g3,) = tg.grad(g2, x, create_graph=True)
    (g4,) = tg.grad(g3, x)
    assert g1.item() == pytest.approx(4 * 1.5 ** 3)
    assert g2.item() == pytest.approx(12 * 1.5 ** 2)
    assert g3.item() == pytest.approx(24 * 1.5)
    assert g4.item() == pytest.approx(24.0)
    assert g1.requires_grad and g1.grad_fn is not None
    assert x.grad is None  # grad() never touches .grad


def test_grad_without_create_graph_is_detached() -> None:
    x = leaf(1.5)
    (g,) = tg.grad(x * x, x)
    assert not g.requires_grad and g.grad_fn is None


def test_mixed_partials() -> None:
    x, y = leaf(1.2), leaf(-0.7)
    f = x * x * y + tg.sin(x * y)
    gx, gy = tg.grad(f, [x, y], create_graph=True)
    (gxy,) = tg.grad(gx, y, retain_graph=True)
    (gyx,) = tg.grad(gy, x)
    xv, yv = 1.2, -0.7
    want = 2 * xv + np.cos(xv * yv) - xv * yv * np.sin(xv * yv)
    assert gxy.item() == pytest.approx(want)
    assert gyx.item() == pytest.approx(want)


def test_grad_outputs_weight_the_outputs() -> None:
    x = leaf([1.0, 2.0, 3.0])
    y = x * x
    (g,) = tg.grad(y, x, grad_outputs=tg.tensor([1.0, 0.5, -1.0]))
    np.testing.assert_allclose(g.numpy(), [2.0, 2.0, -6.0])
    a, b = x * 2.0, x.sum()
    (g,) = tg.grad([a, b], x, grad_outputs=[np.ones(3), 2.0])
    np.testing.assert_allclose(g.numpy(), [4.0, 4.0, 4.0])


def test_grad_outputs_can_carry_a_graph() -> None:
    x = leaf(2.0)
    v = leaf(3.0)
    (g,) = tg.grad(x * x, x, grad_outputs=v, create_graph=True)
    (gv,) = tg.grad(g, v)
    assert g.item() == pytest.approx(12.0)
    assert gv.item() == pytest.approx(4.0)


def test_allow_unused() -> None:
    x, z = leaf(1.0), leaf(2.0)
    y = x * 3.0
    with pytest.raises(RuntimeError, match="was not used in the graph"):
        tg.grad(y, [x, z], retain_graph=True)
    gx, gz = tg.grad(y, [x, z], allow_unused=True)
    assert gx.item() == 3.0
    assert gz is None


def test_non_scalar_output_needs_grad_outputs() -> None:
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="implied only for a one-element output"):
        (x * 2.0).backward()
    assert x.grad is None


def test_output_without_graph_raises() -> None:
    x = tg.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not require grad and has no grad_fn"):
        (x * 2.0).sum().backward()


def test_backward_inputs_restricts_accumulation() -> None:
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None
    np.testing.assert_allclose(G(w).numpy(), [1.0, 2.0])


def test_backward_accumulates_and_create_graph_grad_is_differentiable() -> None:
    x = leaf(2.0)
    (x * x).backward()
    (x * x).backward()
    assert G(x).item() == 8.0
    x.grad = None
    (x ** 3).backward(create_graph=True)
    assert G(x).requires_grad
    (g2,) = tg.grad(G(x), x)
    assert g2.item() == pytest.approx(12.0)


# ---------------------------------------------------------------------------- hooks, retain_grad
def test_hook_on_leaf_and_non_leaf_and_removal() -> None:
    seen: list[np.ndarray] = []
    x = leaf([1.0, 2.0])
    h = x * 3.0
    hx = x.register_hook(lambda g: seen.append(g.numpy().copy()))
    hh = h.register_hook(lambda g: g * 10.0)  # replaces the gradient flowing on
    (h * h).sum().backward()
    np.testing.assert_allclose(seen[-1], 10.0 * 2 * 3.0 * np.array([3.0, 6.0]))
    np.testing.assert_allclose(G(x).numpy(), seen[-1])
    hx.remove()
    hh.remove()
    x.grad = None
    (x * 3.0 * x * 3.0).sum().backward()
    assert len(seen) == 1
    np.testing.assert_allclose(G(x).numpy(), 18.0 * np.array([1.0, 2.0]))


def test_hook_on_tensor_without_grad_raises() -> None:
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        tg.tensor([1.0]).register_hook(lambda g: g)


def test_retain_grad() -> None:
    x = leaf([1.0, 2.0])
    h = x * x
    h.retain_grad()
    assert h.retains_grad
    m = h * 2.0
    m.sum().backward()
    np.testing.assert_allclose(G(h).numpy(), [2.0, 2.0])
    assert m.grad is None


# ---------------------------------------------------------------------------- in-place
def test_inplace_on_saved_output_detected_by_version_counter() -> None:
    x = leaf([1.0, 2.0])
    y = x.exp()
    y += 1
    with pytest.raises(RuntimeError, match="a value saved for backward was modified in place: "
                                           r"\[float64 array of shape \[2\]\], output 0 of "
                                           "Exp, is at version 1; expected version 0"):
        y.sum().backward()
    assert x.grad is None


def test_inplace_on_saved_input_detected() -> None:
    x = leaf([1.0, 2.0])
    a = x * 1.0
    b = a * a  # saves a
    a *= 2.0
    with pytest.raises(RuntimeError, match="modified in place"):
        b.sum().backward()


def test_inplace_setitem_on_saved_tensor_detected() -> None:
    x = leaf([1.0, 2.0])
    a = tg.sin(x)
    b = a * x  # saves a
    a[0] = 5.0
    with pytest.raises(RuntimeError, match="modified in place"):
        b.sum().backward()


def test_inplace_on_unsaved_tensor_is_fine() -> None:
    x = leaf([1.0, 2.0])
    y = x * 2.0
    z = y + 1.0  # add saves nothing
    y += 5.0
    (z.sum() + y.sum()).backward()
    np.testing.assert_allclose(G(x).numpy(), [4.0, 4.0])


def test_inplace_on_leaf_requiring_grad_raises() -> None:
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation"):
        x += 1.0
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x[0] = 3.0
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])
    assert x._vc[0] == 0
    with tg.no_grad():
        x += 1.0
        x[0] = 0.0
    np.testing.assert_array_equal(x.numpy(), [0.0, 3.0])
    assert x.is_leaf and x.requires_grad


def test_detach_shares_storage_and_version() -> None:
    x = leaf([1.0, 2.0])
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    y = x.exp()
    e = y.detach()
    e += 1.0  # modifies y's storage: y's saved output is now stale
    np.testing.assert_allclose(y.numpy(), np.exp([1.0, 2.0]) + 1.0)
    with pytest.raises(RuntimeError, match="modified in place"):
        y.sum().backward()


# ---------------------------------------------------------------------------- transactional
def test_failed_backward_leaves_every_grad_unchanged() -> None:
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    a.grad = tg.tensor([10.0, 20.0])
    b.grad = tg.tensor([30.0, 40.0])
    ok = a * 2.0  # this branch is fine (and processed)
    e = b.exp()
    e += 1.0  # this branch's saved output is stale
    loss = ok.sum() + e.sum() + (a * b).sum()
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()
    np.testing.assert_array_equal(G(a).numpy(), [10.0, 20.0])
    np.testing.assert_array_equal(G(b).numpy(), [30.0, 40.0])


def test_failing_hook_leaves_grads_unchanged() -> None:
    a = leaf([1.0, 2.0])
    b = leaf([3.0])
    (a.sum() * b).backward()
    before = (G(a).numpy().copy(), G(b).numpy().copy())
    h = a * b

    def bad(g: tg.Tensor) -> None:
        raise ValueError("hook failed")

    h.register_hook(bad)
    with pytest.raises(ValueError, match="hook failed"):
        (h.sum() + b.sum()).backward()
    np.testing.assert_array_equal(G(a).numpy(), before[0])
    np.testing.assert_array_equal(G(b).numpy(), before[1])


def test_wrong_shape_grad_outputs_raises_and_changes_nothing() -> None:
    x = leaf([1.0, 2.0, 3.0])
    y = x * x
    with pytest.raises(RuntimeError, match=r"grad_output\[0\] has shape \[2\] but output\[0\] "
                                           r"has shape \[3\]"):
        tg.grad(y, x, grad_outputs=tg.tensor([1.0, 1.0]))
    with pytest.raises(RuntimeError, match="but output"):
        y.backward(tg.tensor([[1.0, 1.0, 1.0]]))
    assert x.grad is None
    y.backward(tg.tensor([1.0, 1.0, 1.0]))  # the graph was not consumed by the failures
    np.testing.assert_allclose(G(x).numpy(), [2.0, 4.0, 6.0])


@pytest.mark.filterwarnings("ignore:Error detected in")
def test_anomaly_mode_names_the_forward_op() -> None:
    x = leaf([0.0, 1.0])
    with tg.detect_anomaly():
        y = tg.sqrt(x)
        with pytest.raises(RuntimeError, match="SqrtBackward0") as ei:
            y.sum().backward()
    assert "test_core_engine.py" in getattr(ei.value, "__notes__", [])[0]
    assert x.grad is None


def test_leaf_grads_never_alias_each_other_or_graph_values() -> None:
    """backward may hand a fresh gradient array to .grad without copying, but only when
    nothing else holds it: two leaves fed the same upstream gradient get separate arrays."""
    import numpy as np

    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = tg.tensor([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()
    assert not np.shares_memory(a.grad._data, b.grad._data)
    a.grad._data += 100.0  # changing one must not change the other
    assert b.grad.tolist() == [1.0, 1.0]
    kept: list[Any] = []
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    y.register_hook(lambda g: kept.append(g))
    y.sum().backward()
    x.grad._data += 1.0
    assert all(np.all(k._data == 1.0) for k in kept)
    w = tg.tensor(np.ones((3, 3)), requires_grad=True)
    (w @ w).sum().backward()
    (w @ w).sum().backward()
    assert w.grad.tolist() == [[12.0] * 3] * 3


# ---------------------------------------------------------------------------- whose words
def test_engine_errors_are_worded_by_the_style_of_the_tensor() -> None:
    """The engine words its errors in the core's terms; PyTorch-style tensors get PyTorch's."""
    import pathlib

    import tapegrad.engine as engine_mod
    import tapegrad.torch as torch

    with pytest.raises(RuntimeError, match="implied only for a one-element output"):
        (leaf([1.0, 2.0]) * 2.0).backward()
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar "
                                           "outputs"):
        (torch.ones(2, requires_grad=True) * 2).backward()
    x = torch.ones(2, requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[2\]\], which is output 0 of "
                                           "Exp, is at version 1; expected version 0 instead"):
        y.sum().backward()
    import tapegrad.autodiff.entry as entry_mod

    text = (pathlib.Path(engine_mod.__file__).read_text()
            + pathlib.Path(entry_mod.__file__).read_text())
    for phrase in ("inplace operation", "torch.Size", "implicitly created", "Mismatch in shape",
                   "does not have a grad_fn", "differentiated Tensors", "th output"):
        assert phrase not in text, phrase
