"""``tapegrad.torch.nn`` and ``tapegrad.torch.optim`` behaviour."""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch
from tapegrad.optim import adam_update, sgd_update

nn = torch.nn
F = torch.nn.functional


# ----------------------------------------------------------------------------- Module
class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(4, 2)
        self.scale = nn.Parameter(torch.tensor(2.0))
        self.register_buffer("offset", torch.tensor([0.5, -0.5]))
        self.plain = 3  # not registered

    def forward(self, x: Any) -> Any:
        return self.fc2(self.act(self.fc1(x))) * self.scale + self.offset


def test_module_registration_and_traversal() -> None:
    n = Net()
    names = [k for k, _ in n.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert len(list(n.parameters())) == 5
    assert [k for k, _ in n.named_children()] == ["fc1", "act", "fc2"]
    assert len(list(n.modules())) == 4
    assert [k for k, _ in n.named_buffers()] == ["offset"]
    assert isinstance(n.scale, nn.Parameter) and n.plain == 3
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'missing'"):
        n.missing  # noqa: B018
    assert repr(n) == ("Net(\n  (fc1): Linear(in_features=3, out_features=4, bias=True)\n"
                       "  (act): Tanh()\n  (fc2): Linear(in_features=4, out_features=2, "
                       "bias=True)\n)")


def test_module_call_zero_grad_train_eval() -> None:
    n = Net()
    out = n(torch.ones(5, 3))
    assert out.shape == (5, 2)
    out.sum().backward()
    assert all(p.grad is not None for p in n.parameters())
    n.zero_grad()
    assert all(p.grad is None for p in n.parameters())
    out = n(torch.ones(5, 3))
    out.sum().backward()
    n.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0.0 for p in n.parameters())
    assert n.training and n.fc1.training
    n.eval()
    assert not n.training and not n.fc1.training
    n.train()
    assert n.training


def test_state_dict_roundtrip_and_errors() -> None:
    torch.manual_seed(0)
    a = Net()
    torch.manual_seed(1)
    b = Net()
    sd = a.state_dict()
    assert list(sd) == ["scale", "offset", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"] \
        or set(sd) == {"scale", "offset", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}
    assert not sd["fc1.weight"].requires_grad
    r = b.load_state_dict(sd)
    assert repr(r) == "<All keys matched successfully>"
    assert torch.equal(b.fc1.weight, a.fc1.weight)
    bad = dict(sd)
    del bad["fc1.bias"]
    bad["extra"] = torch.zeros(1)
    with pytest.raises(RuntimeError) as info:
        b.load_state_dict(bad)
    assert str(info.value) == ('Error(s) in loading state_dict for Net:\n\tMissing key(s) in '
                               'state_dict: "fc1.bias". \n\tUnexpected key(s) in state_dict: '
                               '"extra". ')
    r = b.load_state_dict(bad, strict=False)
    assert r.missing_keys == ["fc1.bias"] and r.unexpected_keys == ["extra"]
    bad = dict(sd)
    bad["fc1.bias"] = torch.zeros(7)
    with pytest.raises(RuntimeError, match=r"size mismatch for fc1.bias: copying a param with "
                       r"shape torch.Size\(\[7\]\) from checkpoint"):
        b.load_state_dict(bad)
    buf = io.BytesIO()
    torch.save(a.state_dict(), buf)
    buf.seek(0)
    assert torch.equal(torch.load(buf)["fc2.bias"], a.fc2.bias.detach())


def test_linear_default_init_bounds() -> None:
    torch.manual_seed(3)
    lin = nn.Linear(25, 40)
    bound = 1 / math.sqrt(25)
    for p in (lin.weight, lin.bias):
        v = p.detach().numpy()
        assert v.min() >= -bound and v.max() <= bound and v.std() > bound / 3
    assert lin.weight.shape == (40, 25) and lin.weight.dtype is torch.float32
    assert nn.Linear(2, 3, bias=False).bias is None
    assert nn.Linear(2, 3, dtype=torch.float64).weight.dtype is torch.float64
    x = torch.randn(7, 25)
    np.testing.assert_allclose(lin(x).detach().numpy(),
                               x.numpy() @ lin.weight.detach().numpy().T
                               + lin.bias.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_sequential_and_containers() -> None:
    m = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1), nn.Sigmoid())
    assert len(m) == 4 and isinstance(m[0], nn.Linear) and isinstance(m[-1], nn.Sigmoid)
    assert isinstance(m[1:3], nn.Sequential) and len(m[1:3]) == 2
    y = m(torch.ones(4, 2))
    assert y.shape == (4, 1) and float(y.detach().min()) > 0 and float(y.detach().max()) < 1
    assert repr(m).startswith("Sequential(\n  (0): Linear(in_features=2")
    ml = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])
    assert len(list(ml.parameters())) == 4 and len(ml) == 2
    md = nn.ModuleDict({"a": nn.ReLU()})
    assert isinstance(md["a"], nn.ReLU)


def test_module_to_double_and_hooks() -> None:
    m = nn.Linear(2, 2)
    m.double()
    assert m.weight.dtype is torch.float64
    seen = []
    h = m.register_forward_hook(lambda mod, inp, out: seen.append(out.shape))
    m(torch.ones(3, 2, dtype=torch.float64))
    h.remove()
    m(torch.ones(3, 2, dtype=torch.float64))
    assert seen == [torch.Size([3, 2])]


def test_activations_and_losses_values() -> None:
    x = torch.tensor([-1.0, 0.0, 2.0])
    assert nn.ReLU()(x).tolist() == [0.0, 0.0, 2.0]
    assert np.allclose(nn.Tanh()(x).numpy(), np.tanh([-1.0, 0.0, 2.0]))
    assert np.allclose(nn.Sigmoid()(x).numpy(), 1 / (1 + np.exp([1.0, 0.0, -2.0])))
    assert np.allclose(F.leaky_relu(x, 0.1).numpy(), [-0.1, 0.0, 2.0])
    assert np.allclose(F.elu(x).numpy(), [math.expm1(-1.0), 0.0, 2.0])
    assert np.allclose(F.softplus(x).numpy(), np.log1p(np.exp([-1.0, 0.0, 2.0])))
    assert np.allclose(F.gelu(x).numpy(), [-0.15865525, 0.0, 1.9544997], atol=1e-6)
    assert np.allclose(F.softmax(x, dim=0).numpy().sum(), 1.0)
    assert np.allclose(F.log_softmax(x, dim=0).exp().sum().item(), 1.0)
    assert F.pad(torch.ones(2), (1, 2)).tolist() == [0.0, 1.0, 1.0, 0.0, 0.0]
    assert F.pad(torch.ones(1, 2), (0, 1, 1, 0), value=5.0).tolist() == [[5.0, 5.0, 5.0],
                                                                         [1.0, 1.0, 5.0]]
    assert nn.MSELoss()(torch.tensor([1.0, 3.0]), torch.tensor([0.0, 0.0])).item() == 5.0
    assert nn.MSELoss(reduction="sum")(torch.tensor([1.0, 3.0]), torch.zeros(2)).item() == 10.0
    logits = torch.tensor([[1.0, 2.0, 3.0]])
    ce = nn.CrossEntropyLoss()(logits, torch.tensor([2]))
    assert math.isclose(ce.item(), 0.40760597586631775, rel_tol=1e-6)
    assert type(ce.grad_fn).__name__ if ce.requires_grad else True
    probs = nn.CrossEntropyLoss()(logits, torch.tensor([[0.0, 0.0, 1.0]]))
    assert math.isclose(probs.item(), ce.item(), rel_tol=1e-6)
    ign = F.cross_entropy(torch.zeros(2, 3), torch.tensor([1, -100]))
    assert math.isclose(ign.item(), math.log(3), rel_tol=1e-6)


def test_cross_entropy_gradient() -> None:
    x = torch.tensor([[1.0, 2.0, 3.0], [1.0, 0.0, -1.0]], requires_grad=True)
    loss = F.cross_entropy(x, torch.tensor([2, 0]))
    assert type(loss.grad_fn).__name__ == "NllLossBackward0"
    assert type(loss.grad_fn.next_functions[0][0]).__name__ == "LogSoftmaxBackward0"
    loss.backward()
    p = np.exp(x.detach().numpy())
    p /= p.sum(1, keepdims=True)
    p[[0, 1], [2, 0]] -= 1
    np.testing.assert_allclose(x.grad.numpy(), p / 2, rtol=1e-5, atol=1e-7)


def test_clip_grad_norm() -> None:
    p = nn.Parameter(torch.tensor([3.0, 4.0]))
    p.grad = torch.tensor([3.0, 4.0])
    n = nn.utils.clip_grad_norm_([p], 1.0)
    assert math.isclose(n.item(), 5.0) and np.allclose(p.grad.numpy(), [0.6, 0.8])


# ----------------------------------------------------------------------------- optim
def _quadratic_steps(make: Any, steps: int = 3) -> list[float]:
    w = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    opt = make([w])
    for _ in range(steps):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    return w.tolist()


def _reference(rule: Any, steps: int = 3, **kw: Any) -> list[float]:
    p = np.array([1.0, -2.0])
    st: dict = {}
    for _ in range(steps):
        rule(p, 2 * p, st, **kw)
    return p.tolist()


@pytest.mark.parametrize("make,rule,kw", [
    (lambda p: torch.optim.SGD(p, lr=0.1), sgd_update, dict(lr=0.1)),
    (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9), sgd_update, dict(lr=0.1, momentum=0.9)),
    (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True), sgd_update,
     dict(lr=0.1, momentum=0.9, nesterov=True)),
    (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.5, dampening=0.2, weight_decay=0.1),
     sgd_update, dict(lr=0.1, momentum=0.5, dampening=0.2, weight_decay=0.1)),
    (lambda p: torch.optim.Adam(p, lr=0.1), adam_update, dict(lr=0.1)),
    (lambda p: torch.optim.Adam(p, lr=0.1, amsgrad=True, weight_decay=0.1), adam_update,
     dict(lr=0.1, amsgrad=True, weight_decay=0.1)),
    (lambda p: torch.optim.AdamW(p, lr=0.1), adam_update,
     dict(lr=0.1, weight_decay=0.01, decoupled_weight_decay=True)),
])
def test_optimizers_use_shared_rules(make: Any, rule: Any, kw: dict) -> None:
    assert np.allclose(_quadratic_steps(make), _reference(rule, **kw), rtol=1e-12)


def test_sgd_closed_form_and_step_bumps_version() -> None:
    w = torch.tensor([1.0], requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    (w * 3).sum().backward()
    v = w._version
    opt.step()
    assert math.isclose(w.item(), 0.7, rel_tol=1e-6) and w._version == v + 1 and w.is_leaf


def test_optimizer_bookkeeping() -> None:
    a = torch.tensor([1.0], requires_grad=True)
    b = torch.tensor([1.0], requires_grad=True)
    opt = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    ((a * 2) + (b * 2)).sum().backward()
    opt.step()
    assert math.isclose(a.item(), 0.8, rel_tol=1e-6) and math.isclose(b.item(), 0.0)
    opt.zero_grad()
    assert a.grad is None
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                       "group"):
        torch.optim.SGD([{"params": [a]}, {"params": [a]}], lr=0.1)
    c = torch.tensor([1.0], requires_grad=True)
    opt2 = torch.optim.Adam([c], lr=0.1)
    (c * 2).sum().backward()
    opt2.step()
    sd = opt2.state_dict()
    assert sorted(sd["state"][0]) == ["exp_avg", "exp_avg_sq", "step"]
    assert sd["state"][0]["step"].item() == 1.0
    opt3 = torch.optim.Adam([c], lr=0.1)
    opt3.load_state_dict(sd)
    assert opt3.state[c]["step"] == 1
    assert repr(opt2).startswith("Adam (\nParameter Group 0\n    amsgrad: False")


def test_closure_and_skips_params_without_grad() -> None:
    w = torch.tensor([1.0, -1.0], requires_grad=True)
    u = torch.tensor([5.0], requires_grad=True)
    opt = torch.optim.Adam([w, u], lr=0.1)

    def closure() -> Any:
        opt.zero_grad()
        loss = (w ** 2).sum()
        loss.backward()
        return loss

    losses = [opt.step(closure).item() for _ in range(3)]
    assert losses[0] == 2.0 and losses[-1] < losses[0] and u.item() == 5.0


def test_training_reduces_loss() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
    x = torch.randn(64, 2)
    y = (x[:, :1] * 2 - x[:, 1:]) * 0.5
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    first = None
    for _ in range(60):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    assert loss.item() < first / 10
