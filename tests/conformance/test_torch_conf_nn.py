"""``torch.nn``, ``torch.optim``, creation, dtypes and random numbers on both frameworks."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

from tests.torch_style.torch_harness import compare

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402


# ----------------------------------------------------------------------------- creation / dtypes
def p_creation(torch: Any) -> Any:
    return (torch.tensor([1.0, 2.0]), torch.tensor([1, 2]), torch.tensor([True, False]),
            torch.tensor(3.5), torch.tensor([[1, 2], [3, 4]], dtype=torch.float64),
            torch.tensor(np.array([1.0, 2.0])), torch.tensor(np.float32(2.0)),
            torch.as_tensor([1.0, 2.0]), torch.from_numpy(np.array([1, 2], dtype=np.int32)),
            torch.zeros(2, 3), torch.ones((2,), dtype=torch.int64), torch.full((2, 2), 7),
            torch.full((2,), 1.5), torch.full((1,), True), torch.zeros_like(torch.ones(2, 3)),
            torch.ones_like(torch.tensor([1, 2])), torch.full_like(torch.ones(2), 3.0),
            torch.arange(5), torch.arange(1, 4), torch.arange(0, 1, 0.25), torch.arange(5.0),
            torch.linspace(0, 1, 5), torch.linspace(-1, 1, 8), torch.eye(3), torch.eye(2, 3),
            torch.empty(2, 3).shape, torch.zeros(0).shape)


def p_dtypes(torch: Any) -> Any:
    t = torch.tensor([1.0])
    return (str(t.dtype), str(torch.tensor([1]).dtype), str(torch.tensor([True]).dtype),
            str(torch.float), str(torch.double), str(torch.long), str(torch.half),
            torch.float32 == torch.float, torch.float32.is_floating_point,
            torch.int64.is_floating_point, str(torch.get_default_dtype()),
            str(t.double().dtype), str(t.half().dtype), str(t.long().dtype), str(t.int().dtype),
            str(t.bool().dtype), str(t.to(torch.float64).dtype), t.is_floating_point(),
            torch.tensor([1]).is_floating_point(), str(t.type(torch.float64).dtype), t.type())


def p_promotion(torch: Any) -> Any:
    f32 = torch.tensor([1.0, 2.0])
    f64 = torch.tensor([1.0, 2.0], dtype=torch.float64)
    i64 = torch.tensor([1, 2])
    i32 = torch.tensor([1, 2], dtype=torch.int32)
    b = torch.tensor([True, False])
    f16 = torch.tensor([1.0, 2.0], dtype=torch.float16)
    pairs = [f32 * i64, f32 * f64, i64 * 2.5, f32 * 2.5, i64 * 2, i32 * 2, i32 * i64,
             b + 1, b + 1.5, b & b, i64 / i64, i64 / 2, f32 * torch.tensor(2.0, dtype=torch.float64),
             i64 * torch.tensor(2.0, dtype=torch.float64), f16 * 2.0, f16 * f32, i64 ** 2,
             2 ** i64, i64 // 2, i64 % 2, f32 > i64, f32 + True, i32 * torch.tensor(3),
             torch.cat([f32, f64]), torch.where(b, f32, 0), torch.where(b, f32, f64),
             f32 * np.float64(2.0), np.float64(2.0) * f32, i64 * np.float64(1.5),
             i64 * np.float32(1.5), f32 + np.array([1.0, 2.0])]
    return [(str(p.dtype), p) for p in pairs]


def p_size_shape(torch: Any) -> Any:
    t = torch.zeros(2, 3, 4)
    return (repr(t.shape), repr(t.size()), t.size(1), t.size(-1), t.dim(), t.ndim, t.numel(),
            len(t), t.shape[1:], repr(t.shape[1:]), t.shape == (2, 3, 4),
            t.shape.numel(), tuple(t.shape), list(t.shape))


def p_random(torch: Any) -> Any:
    torch.manual_seed(0)
    a = torch.rand(3)
    b = torch.randn(2, 2)
    c = torch.randn(20)
    d = torch.randint(0, 10, (5,))
    e = torch.randperm(6)
    f = torch.rand(2, dtype=torch.float64)
    g = torch.randn(3, dtype=torch.float64)
    h = torch.randint(3, 7, (2, 3))
    i = torch.normal(0.0, 2.0, size=(4,))
    torch.manual_seed(5)
    j = torch.randn(4)
    gen = torch.Generator().manual_seed(1)
    k = torch.rand(2, generator=gen)
    return a, b, c, d, e, f, g, h, i, j, k, torch.initial_seed()


def p_random_like(torch: Any) -> Any:
    torch.manual_seed(2)
    x = torch.zeros(2, 3)
    return torch.rand_like(x), torch.randn_like(x), torch.randint_like(x, 0, 5)


# ----------------------------------------------------------------------------- nn
def p_linear_init_and_repr(torch: Any) -> Any:
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    lin2 = torch.nn.Linear(2, 4, bias=False)
    return (lin.weight, lin.bias, lin2.weight, lin2.bias, repr(lin), repr(lin2),
            repr(lin.weight), lin(torch.ones(5, 3)), lin(torch.ones(3)))


def p_sequential(torch: Any) -> Any:
    torch.manual_seed(1)
    m = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1),
                            torch.nn.Tanh(), torch.nn.Sigmoid())
    x = torch.tensor([[1.0, -2.0], [0.5, 0.5]])
    y = m(x)
    y.sum().backward()
    return (repr(m), y, [n for n, _ in m.named_parameters()], len(m), repr(m[0]),
            repr(m[1:3]), [type(c).__name__ for c in m.children()],
            [p.grad for p in m.parameters()], len(list(m.modules())))


def p_module_subclass(torch: Any) -> Any:
    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(2, 2)
            self.act = torch.nn.ReLU()
            self.scale = torch.nn.Parameter(torch.tensor(2.0))
            self.register_buffer("offset", torch.tensor([0.5, -0.5]))

        def forward(self, x: Any) -> Any:
            return self.act(self.fc(x)) * self.scale + self.offset

    torch.manual_seed(3)
    n = Net()
    out = n(torch.ones(1, 2))
    out.sum().backward()
    sd = n.state_dict()
    n.eval()
    modes = [n.training, n.fc.training]
    n.train()
    modes += [n.training, n.fc.training]
    n.zero_grad()
    return (repr(n), out, list(sd.keys()), sd["offset"], modes, n.scale.grad,
            [k for k, _ in n.named_buffers()], hasattr(n, "scale"), type(n.scale).__name__)


def p_module_errors(torch: Any) -> Any:
    out = []
    m = torch.nn.Linear(2, 2)
    try:
        m.foo  # noqa: B018
    except AttributeError as e:
        out.append(str(e))
    sd = m.state_dict()
    del sd["bias"]
    sd["extra"] = torch.zeros(1)
    try:
        m.load_state_dict(sd)
    except RuntimeError as e:
        out.append(str(e))
    sd = m.state_dict()
    sd["bias"] = torch.zeros(3)
    try:
        m.load_state_dict(sd)
    except RuntimeError as e:
        out.append(str(e))
    out.append(repr(m.load_state_dict(m.state_dict())))
    return out


def p_state_dict_roundtrip(torch: Any) -> Any:
    torch.manual_seed(0)
    a = torch.nn.Linear(3, 2)
    torch.manual_seed(1)
    b = torch.nn.Linear(3, 2)
    b.load_state_dict(a.state_dict())
    sd = a.state_dict()
    return b.weight, b.bias, sd["weight"].requires_grad, type(sd).__name__


def p_activation_modules(torch: Any) -> Any:
    x = torch.linspace(-3, 3, 7)
    mods = [torch.nn.ReLU(), torch.nn.Tanh(), torch.nn.Sigmoid(), torch.nn.LeakyReLU(0.2),
            torch.nn.ELU(), torch.nn.GELU(), torch.nn.Softplus(), torch.nn.Softmax(dim=0),
            torch.nn.LogSoftmax(dim=0), torch.nn.Identity(), torch.nn.SiLU()]
    return [(repr(m), m(x)) for m in mods]


def p_losses(torch: Any) -> Any:
    x = torch.tensor([[1.0, 2.0, 0.5], [0.1, -1.0, 2.0]], requires_grad=True)
    y = torch.tensor([2, 0])
    t = torch.tensor([[0.0, 1.0, 0.5], [1.0, 0.0, 0.0]])
    losses = [torch.nn.MSELoss()(x, t), torch.nn.MSELoss(reduction="sum")(x, t),
              torch.nn.CrossEntropyLoss()(x, y), torch.nn.CrossEntropyLoss(reduction="none")(x, y),
              torch.nn.L1Loss()(x, t), torch.nn.NLLLoss()(x.log_softmax(1), y),
              torch.nn.BCEWithLogitsLoss()(x, t)]
    total = sum(l.sum() for l in losses)
    total.backward()
    return losses, x.grad, [repr(torch.nn.MSELoss()), repr(torch.nn.CrossEntropyLoss())]


def p_nn_init(torch: Any) -> Any:
    torch.manual_seed(0)
    w = torch.empty(3, 4)
    torch.nn.init.xavier_uniform_(w)
    v = torch.empty(3, 4)
    torch.nn.init.kaiming_uniform_(v, a=0.1)
    z = torch.nn.init.zeros_(torch.empty(2))
    c = torch.nn.init.constant_(torch.empty(2), 0.3)
    n = torch.nn.init.normal_(torch.empty(20), 1.0, 0.5)
    return w, v, z, c, n, torch.nn.init.calculate_gain("tanh"), torch.nn.init.calculate_gain("relu")


def p_parameter(torch: Any) -> Any:
    base = torch.tensor([1.0, 2.0])
    p = torch.nn.Parameter(base)
    q = torch.nn.Parameter(torch.zeros(2), requires_grad=False)
    y = p * 2
    p.data[0] = 5.0
    return (repr(p), repr(q), p.is_leaf, p.requires_grad, type(y).__name__, y, base,
            isinstance(p, torch.Tensor))


def p_clip_grad(torch: Any) -> Any:
    p = torch.nn.Parameter(torch.tensor([3.0, 4.0]))
    p.grad = torch.tensor([3.0, 4.0])
    n = torch.nn.utils.clip_grad_norm_([p], 1.0)
    return n, p.grad


# ----------------------------------------------------------------------------- optim
def p_optim_repr_state(torch: Any) -> Any:
    w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    s = torch.optim.SGD([w], lr=0.1, momentum=0.9)
    w.grad = torch.ones(2)
    s.step()
    a = torch.optim.Adam([w])
    w.grad = torch.ones(2)
    a.step()
    sd = a.state_dict()
    return (repr(s), repr(a), repr(torch.optim.AdamW([w])), w, sorted(sd["state"][0].keys()),
            sd["state"][0]["exp_avg"], sd["state"][0]["exp_avg_sq"],
            sorted(sd["param_groups"][0].keys()))


def p_optim_zero_grad(torch: Any) -> Any:
    w = torch.tensor([1.0], requires_grad=True)
    o = torch.optim.SGD([w], lr=0.1)
    o.step()
    w.grad = torch.ones(1)
    g = w.grad
    o.zero_grad(set_to_none=False)
    a = (w.grad, w.grad is g)
    o.zero_grad()
    return a, w.grad


def p_optim_param_groups(torch: Any) -> Any:
    a = torch.tensor([1.0], requires_grad=True)
    b = torch.tensor([1.0], requires_grad=True)
    o = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.5)
    for _ in range(3):
        o.zero_grad()
        ((a * 2) ** 2 + (b * 3) ** 2).sum().backward()
        o.step()
    return a, b, [g["lr"] for g in o.param_groups]


def p_optim_duplicate(torch: Any) -> Any:
    a = torch.tensor([1.0], requires_grad=True)
    torch.optim.SGD([{"params": [a]}, {"params": [a]}], lr=0.1)


def p_optim_closure(torch: Any) -> Any:
    w = torch.tensor([1.0, -1.0], requires_grad=True)
    o = torch.optim.Adam([w], lr=0.1)

    def closure() -> Any:
        o.zero_grad()
        loss = (w ** 2).sum()
        loss.backward()
        return loss

    losses = [o.step(closure) for _ in range(3)]
    return losses, w


def p_training_loop_seed000(torch: Any) -> Any:
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    x = torch.linspace(-1, 1, 8).reshape(8, 1)
    y = 3 * x + 0.5
    w, b = model.parameters()
    for _ in range(5):
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= w.grad * 0.1
            b -= b.grad * 0.1
            w.grad.zero_()
            b.grad.zero_()
    return w, b, loss, w.is_leaf, w.grad


def p_cuda_device(torch: Any) -> Any:
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    t = torch.ones(2).to(dev)
    return str(dev), repr(dev), str(t.device), t.cpu(), torch.cuda.is_available()


def p_save_load(torch: Any) -> Any:
    import io

    torch.manual_seed(0)
    m = torch.nn.Linear(2, 2)
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)
    buf.seek(0)
    sd = torch.load(buf)
    return list(sd.keys()), sd["weight"], type(OrderedDict()).__name__


PROGRAMS = {name: fn for name, fn in sorted(globals().items()) if name.startswith("p_")}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(name: str) -> None:
    compare(PROGRAMS[name], real, tt)
