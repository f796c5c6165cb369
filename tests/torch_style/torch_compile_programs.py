"""Programs written once in PyTorch style, run eagerly and under ``torch.compile``.

Each ``make(torch)`` returns ``(step, state)``: ``step(i)`` runs the program's
i-th call and returns NumPy results; ``state()`` returns NumPy copies of what
the program changes (parameters, gradients, buffers).  The style tests and the
conformance suite compare ``torch.compile`` with eager on all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Program = Callable[[Any, bool], tuple[Callable[[int], list[Any]], Callable[[], list[Any]]]]


def _np(t: Any) -> Any:
    return t.detach().numpy().copy() if hasattr(t, "detach") else t


def _wrap(torch: Any, fn: Any, compiled: bool, **kw: Any) -> Any:
    return torch.compile(fn, **kw) if compiled else fn


def train_mlp(torch: Any, compiled: bool) -> Any:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    x = torch.randn(12, 6)
    y = torch.randint(0, 4, (12,))

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    f = _wrap(torch, step, compiled)
    return (lambda i: [_np(f(x, y))],
            lambda: [_np(p) for p in model.parameters()] + [_np(p.grad) for p in model.parameters()])


def sgd_momentum_manual(torch: Any, compiled: bool) -> Any:
    torch.manual_seed(1)
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.zeros(3, requires_grad=True)
    opt = torch.optim.SGD([w, b], lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)
    xs = [torch.randn(4, 5) for _ in range(3)]

    def step(x: Any) -> Any:
        opt.zero_grad()
        out = torch.relu(x @ w + b)
        loss = (out ** 2).mean() + 0.1 * w.abs().sum()
        loss.backward()
        opt.step()
        return loss, out

    f = _wrap(torch, step, compiled)
    return (lambda i: [_np(t) for t in f(xs[i % 3])],
            lambda: [_np(w), _np(b), _np(w.grad), _np(b.grad)])


def grad_accumulation(torch: Any, compiled: bool) -> Any:
    torch.manual_seed(2)
    w = torch.randn(4, requires_grad=True)
    x = torch.randn(3, 4)

    def step(x: Any) -> Any:
        loss = (torch.sin(x * w)).sum()
        loss.backward()  # accumulates: no zero_grad
        return loss

    f = _wrap(torch, step, compiled)
    return lambda i: [_np(f(x + i))], lambda: [_np(w.grad)]


def inplace_buffers(torch: Any, compiled: bool) -> Any:
    torch.manual_seed(3)
    bn = torch.nn.BatchNorm1d(5)
    x = torch.randn(8, 5)

    def fwd(x: Any) -> Any:
        y = bn(x)
        y = y * 2.0
        y += 1.0
        return y.sum(dim=0)

    f = _wrap(torch, fwd, compiled)
    return (lambda i: [_np(f(x * (i + 1)))],
            lambda: [_np(bn.running_mean), _np(bn.running_var)])


def backward_outside(torch: Any, compiled: bool) -> Any:
    torch.manual_seed(4)
    lin = torch.nn.Linear(3, 2)
    f = _wrap(torch, lambda x: torch.tanh(lin(x)).pow(2).sum(), compiled)

    def step(i: int) -> list[Any]:
        x = torch.randn(4, 3, requires_grad=True)
        lin.zero_grad()
        y = f(x)
        (gx,) = torch.autograd.grad(y, x, create_graph=True)
        (gx.sum()).backward()
        return [_np(y), _np(gx), _np(x.grad)]

    return step, lambda: [_np(lin.weight.grad), _np(lin.bias.grad)]


def graph_breaks(torch: Any, compiled: bool) -> Any:
    def fn(x: Any) -> Any:
        s = x.sum()
        if s > 0:  # data-dependent branch: a graph break
            return x * 2, float(s.item())
        return -x, 0.0

    f = _wrap(torch, fn, compiled)
    xs = [torch.tensor([1.0, 2.0]), torch.tensor([-3.0, 1.0]), torch.tensor([0.5, 0.5])]
    return lambda i: [_np(t) for t in f(xs[i % 3])], lambda: []


def python_args_and_dtypes(torch: Any, compiled: bool) -> Any:
    def fn(x: Any, k: int, scale: float = 1.0) -> Any:
        return (x ** k * scale).sum(dim=-1)

    f = _wrap(torch, fn, compiled)
    cases = [(torch.ones(2, 3), 2, 1.0), (torch.ones(2, 3), 3, 1.0),
             (torch.arange(6.0).reshape(2, 3), 2, 0.5),
             (torch.arange(6, dtype=torch.float64).reshape(3, 2), 2, 1.0)]
    return lambda i: [_np(f(*cases[i % 4]))], lambda: []


def module_compile(torch: Any, compiled: bool) -> Any:
    torch.manual_seed(5)
    m = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    cm = torch.compile(m) if compiled else m
    x = torch.randn(5, 3)

    def step(i: int) -> list[Any]:
        if i == 2:
            m.train(False)
        out = cm(x)
        out.sum().backward()
        return [_np(out)]

    return step, lambda: [_np(p.grad) for p in m.parameters()]


def random_inside(torch: Any, compiled: bool) -> Any:
    torch.manual_seed(6)
    f = _wrap(torch, lambda x: x + torch.randn(3) * 0.1 + torch.rand(3), compiled)
    return lambda i: [_np(f(torch.zeros(3)))], lambda: []


def prints_every_call(torch: Any, compiled: bool) -> Any:
    """A Python print (of no tensor) is a graph break: it shows at every call."""
    import contextlib
    import io

    def fn(x: Any) -> Any:
        print("shape", tuple(x.shape), "step")
        return x + 1

    f = _wrap(torch, fn, compiled)
    x = torch.ones(2)

    def step(i: int) -> list[Any]:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            out = f(x)
        return [_np(out), np.asarray(buf.getvalue().count("shape (2,) step\n"))]

    return step, lambda: []


# module globals that the next program's compiled function reads and the program changes
_SCALE = 2.0
_POWER = 2
_SHIFT: Any = None


def _shifted(t: Any) -> Any:  # a helper that reads a global too
    return t + _SHIFT


def globals_and_closures(torch: Any, compiled: bool) -> Any:
    """A changed global number, a global tensor rebound, a closure cell and a global read
    by a called helper: dynamo's guards recompile, so every call gives eager's result."""
    global _SCALE, _POWER, _SHIFT
    _SCALE, _POWER = 2.0, 2
    _SHIFT = torch.ones(3)
    bias = 0.5
    x = torch.tensor([1.0, 2.0, 3.0])

    def step(x: Any) -> Any:
        return _shifted(x ** _POWER * _SCALE) + bias

    f = _wrap(torch, step, compiled)

    def call(i: int) -> list[Any]:
        global _SCALE, _POWER, _SHIFT
        nonlocal bias
        if i == 1:
            _SCALE = 3.0
        elif i == 2:
            _SHIFT = torch.full((3,), -1.0)
            bias = 10.0
        elif i == 3:
            _POWER = 3
        return [_np(f(x))]

    return call, lambda: []


PROGRAMS: dict[str, Program] = {
    "train_mlp": train_mlp,
    "sgd_momentum_manual": sgd_momentum_manual,
    "grad_accumulation": grad_accumulation,
    "inplace_buffers": inplace_buffers,
    "backward_outside": backward_outside,
    "graph_breaks": graph_breaks,
    "python_args_and_dtypes": python_args_and_dtypes,
    "module_compile": module_compile,
    "random_inside": random_inside,
    "globals_and_closures": globals_and_closures,
    "prints_every_call": prints_every_call,
}


def run(torch: Any, name: str, compiled: bool, calls: int = 4) -> list[Any]:
    step, state = PROGRAMS[name](torch, compiled)
    out = []
    for i in range(calls):
        out.append(step(i))
        out.append(state())
    return out


def same(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-7) -> None:
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y, rtol, atol)
    else:
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)
