"""torch.optim without the real framework: first steps in closed form, every optimizer
descends (or ascends with maximize), argument errors, atomic load_state_dict, LBFGS, and
schedulers against their closed forms."""

from __future__ import annotations

import copy
import math
import warnings
from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch
from tapegrad._core.errors import hint_of
from tapegrad.optim import (
    adadelta_update,
    adagrad_update,
    adamax_update,
    asgd_update,
    nadam_update,
    radam_update,
    rmsprop_update,
    rprop_update,
)

G = np.array([0.5, -2.0, 0.0, 3.0])
P = np.array([1.0, 1.0, 1.0, 1.0])


def _one(rule: Any, **kw: Any) -> np.ndarray:
    p = P.copy()
    rule(p, G, {}, **kw)
    return p


def test_first_steps_closed_form() -> None:
    np.testing.assert_allclose(_one(adagrad_update, lr=0.1),
                               P - 0.1 * G / (np.abs(G) + 1e-10))
    np.testing.assert_allclose(_one(rmsprop_update, lr=0.01),
                               P - 0.01 * G / (np.sqrt(0.01) * np.abs(G) + 1e-8))
    np.testing.assert_allclose(_one(adadelta_update, lr=1.0),
                               P - np.sqrt(1e-6) / np.sqrt(0.1 * G * G + 1e-6) * G)
    np.testing.assert_allclose(_one(adamax_update, lr=0.002),
                               P - 0.002 / 0.1 * (0.1 * G) / (np.abs(G) + 1e-8))
    np.testing.assert_allclose(_one(rprop_update, lr=0.01), P - 0.01 * np.sign(G))
    # RAdam's first steps are plain (bias-corrected) momentum steps
    np.testing.assert_allclose(_one(radam_update, lr=0.1), P - 0.1 * G)
    np.testing.assert_allclose(_one(asgd_update, lr=0.05),
                               P * (1 - 1e-4 * 0.05) - 0.05 * G)


def test_nadam_first_step_closed_form() -> None:
    b1, b2, lr, eps, md = 0.9, 0.999, 2e-3, 1e-8, 4e-3
    mu = b1 * (1 - 0.5 * 0.96 ** (1 * md))
    mu_next = b1 * (1 - 0.5 * 0.96 ** (2 * md))
    m = (1 - b1) * G
    denom = np.sqrt((1 - b2) * G * G / (1 - b2)) + eps
    mu_prod = float(np.float32(mu))
    want = P - lr * (1 - mu) / (1 - mu_prod) * G / denom \
        - lr * mu_next / (1 - mu_prod * mu_next) * m / denom
    np.testing.assert_allclose(_one(nadam_update), want, rtol=1e-6)


def test_adafactor_factored_first_step() -> None:
    """Step 1 (beta2_t = 1): the factored estimate of a rank-one g*g is exact, so the
    update is sign(g) scaled to RMS 1 and the step ``max(eps2, rms(p)) * min(lr, 1)``."""
    from tapegrad.optim import adafactor_update

    g = np.outer([1.0, 2.0], [3.0, -1.0, 0.5])
    p = np.ones((2, 3))
    st: dict = {}
    adafactor_update(p, g, st, lr=0.01)
    assert st["row_var"].shape == (2, 1) and st["col_var"].shape == (1, 3)
    np.testing.assert_allclose(p, 1 - 0.01 * np.sign(g), rtol=1e-12)


def test_rprop_sign_flip_skips_and_shrinks() -> None:
    p = np.zeros(2)
    st: dict = {}
    rprop_update(p, np.array([1.0, 1.0]), st, lr=0.1)
    rprop_update(p, np.array([1.0, -1.0]), st, lr=0.1)
    np.testing.assert_allclose(st["step_size"], [0.12, 0.05])
    np.testing.assert_allclose(p, [-0.1 - 0.12, -0.1])  # flipped element did not move


NAMES = ["SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "RMSprop",
         "ASGD", "Rprop", "Adafactor"]
LR = {"Adadelta": 1.0, "SGD": 0.05}


def _run(name: str, maximize: bool = False, steps: int = 60) -> list[float]:
    w = torch.tensor([2.0, -1.5, 0.5], requires_grad=True)
    opt = getattr(torch.optim, name)([w], lr=LR.get(name, 0.05), maximize=maximize)
    vals = []
    for _ in range(steps):
        opt.zero_grad()
        f = (w * w).sum() * (-1.0 if maximize else 1.0)
        f.backward()
        opt.step()
        vals.append(float((w * w).sum().detach()))
    return vals


@pytest.mark.parametrize("name", NAMES)
def test_every_optimizer_descends_and_maximize_ascends_the_negation(name: str) -> None:
    down = _run(name)
    assert down[-1] < 0.8 * 6.5
    up = _run(name, maximize=True)  # maximising -f is minimising f: same path
    np.testing.assert_allclose(up, down, rtol=1e-6)


@pytest.mark.parametrize("make, msg", [
    (lambda p: torch.optim.Adagrad(p, lr=-1), "Invalid learning rate: -1"),
    (lambda p: torch.optim.Adagrad(p, lr_decay=-1), "Invalid lr_decay value: -1"),
    (lambda p: torch.optim.Adadelta(p, rho=1.5), "Invalid rho value: 1.5"),
    (lambda p: torch.optim.Adamax(p, betas=(1.0, 0.9)), "Invalid beta parameter at index 0"),
    (lambda p: torch.optim.NAdam(p, momentum_decay=-1), "Invalid momentum_decay value: -1"),
    (lambda p: torch.optim.RAdam(p, eps=-1), "Invalid epsilon value: -1"),
    (lambda p: torch.optim.RMSprop(p, alpha=-1), "Invalid alpha value: -1"),
    (lambda p: torch.optim.Rprop(p, etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
    (lambda p: torch.optim.ASGD(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: torch.optim.LBFGS(p, lr=-1), "Invalid learning rate: -1"),
    (lambda p: torch.optim.Adafactor(p, d=0.5), "Clipping threshold d should be >= 1"),
    (lambda p: torch.optim.Adafactor(p, beta2_decay=0.5), "beta2_decay should be <= 0"),
])
def test_argument_errors(make: Any, msg: str) -> None:
    with pytest.raises(ValueError) as ei:
        make([torch.zeros(1, requires_grad=True)])
    assert str(ei.value).startswith(msg) and hint_of(ei.value) is not None


def _trained() -> tuple[Any, Any]:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0], requires_grad=True)
    opt = torch.optim.RMSprop([{"params": [a]}, {"params": [b], "lr": 0.1}], lr=0.01,
                              momentum=0.9)
    for _ in range(3):
        opt.zero_grad()
        ((a * a).sum() + (b * b).sum()).backward()
        opt.step()
    return opt, (a, b)


def _snapshot(opt: Any) -> Any:
    return (copy.deepcopy([{k: v for k, v in g.items() if k != "params"}
                           for g in opt.param_groups]),
            {id(p): {k: np.array(v, copy=True) for k, v in st.items()}
             for p, st in opt.state.items()})


def _same(s1: Any, s2: Any) -> bool:
    if s1[0] != s2[0] or s1[1].keys() != s2[1].keys():
        return False
    return all(np.array_equal(s1[1][k][n], s2[1][k][n]) for k in s1[1] for n in s1[1][k])


@pytest.mark.parametrize("corrupt", [
    lambda sd: sd["param_groups"].pop(),
    lambda sd: sd["param_groups"][1]["params"].append(5),
    lambda sd: sd.pop("state"),
])
def test_bad_state_dict_changes_nothing(corrupt: Any) -> None:
    opt, _ = _trained()
    sd = opt.state_dict()
    corrupt(sd)
    other, _ = _trained()
    for g in other.param_groups:
        g["lr"] = 0.5
    before = _snapshot(other)
    with pytest.raises((ValueError, KeyError)):
        other.load_state_dict(sd)
    assert _same(before, _snapshot(other))


def test_state_dict_round_trip_resumes_exactly() -> None:
    opt, (a, b) = _trained()
    sd = opt.state_dict()
    a2 = torch.tensor(a.detach().numpy().copy(), requires_grad=True)
    b2 = torch.tensor(b.detach().numpy().copy(), requires_grad=True)
    opt2 = torch.optim.RMSprop([{"params": [a2]}, {"params": [b2]}], lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[1]["lr"] == 0.1
    for o, (x, y) in ((opt, (a, b)), (opt2, (a2, b2))):
        o.zero_grad()
        ((x * x).sum() + (y * y).sum()).backward()
        o.step()
    np.testing.assert_array_equal(a.detach().numpy(), a2.detach().numpy())
    np.testing.assert_array_equal(b.detach().numpy(), b2.detach().numpy())


def test_add_param_group_rejects_duplicates() -> None:
    w = torch.zeros(1, requires_grad=True)
    opt = torch.optim.Adagrad([w])
    with pytest.raises(ValueError, match="some parameters appear in more than one"):
        opt.add_param_group({"params": [w]})


def test_lbfgs_minimises_quadratic_and_needs_a_closure() -> None:
    target = np.array([1.0, -2.0, 3.0])
    x = torch.zeros(3, requires_grad=True, dtype=torch.float64)
    opt = torch.optim.LBFGS([x], line_search_fn="strong_wolfe")
    A = torch.tensor(np.diag([1.0, 10.0, 100.0]))

    def closure() -> Any:
        opt.zero_grad()
        d = x - torch.tensor(target)
        loss = d @ A @ d
        loss.backward()
        return loss

    first = opt.step(closure)
    assert float(first.detach()) > 100
    np.testing.assert_allclose(x.detach().numpy(), target, atol=1e-6)
    with pytest.raises(TypeError, match="closure"):
        opt.step()
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        torch.optim.LBFGS([{"params": [x]}, {"params": [torch.zeros(1, requires_grad=True)]}])


def _lrs(make: Any, steps: int = 20) -> list[float]:
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    s = make(opt)
    out = [s.get_last_lr()[0]]
    for _ in range(steps):
        opt.step()
        s.step()
        out.append(s.get_last_lr()[0])
    return out


def test_schedulers_agree_with_their_closed_forms() -> None:
    S = torch.optim.lr_scheduler
    np.testing.assert_allclose(_lrs(lambda o: S.StepLR(o, 3, 0.5)),
                               [0.1 * 0.5 ** (e // 3) for e in range(21)])
    np.testing.assert_allclose(_lrs(lambda o: S.ExponentialLR(o, 0.9)),
                               [0.1 * 0.9 ** e for e in range(21)])
    np.testing.assert_allclose(_lrs(lambda o: S.CosineAnnealingLR(o, 10)),
                               [0.05 * (1 + math.cos(math.pi * e / 10)) for e in range(21)],
                               atol=1e-12)
    np.testing.assert_allclose(_lrs(lambda o: S.LinearLR(o, 0.5, 1.0, 4)),
                               [0.1 * (0.5 + 0.5 * min(e, 4) / 4) for e in range(21)])
    np.testing.assert_allclose(_lrs(lambda o: S.PolynomialLR(o, 10, 2.0)),
                               [0.1 * (1 - min(e, 10) / 10) ** 2 for e in range(21)],
                               atol=1e-15)
    np.testing.assert_allclose(_lrs(lambda o: S.MultiStepLR(o, [2, 7])),
                               [0.1 * 0.1 ** ((e >= 2) + (e >= 7)) for e in range(21)])


def test_onecycle_shape_and_momentum() -> None:
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    s = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=100)
    lrs, moms = [s.get_last_lr()[0]], [opt.param_groups[0]["momentum"]]
    for _ in range(99):
        opt.step()
        s.step()
        lrs.append(s.get_last_lr()[0])
        moms.append(opt.param_groups[0]["momentum"])
    assert lrs[0] == pytest.approx(0.04) and max(lrs) == pytest.approx(1.0)
    assert lrs[-1] == pytest.approx(0.04 / 1e4) and int(np.argmax(lrs)) == 29
    assert moms[0] == pytest.approx(0.95) and min(moms) == pytest.approx(0.85)


def test_reduce_on_plateau_and_warnings() -> None:
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    s = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=2, factor=0.5)
    for m in [1.0, 0.5, 0.6, 0.6, 0.6, 0.4]:
        s.step(m)
    assert s.get_last_lr() == [0.5]
    sched = torch.optim.lr_scheduler.StepLR(opt, 2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        sched.get_lr()
    assert "please use `get_last_lr()`" in str(w[0].message)


def test_muon_orthogonalises_and_descends() -> None:
    from tapegrad.optim.muon import bf16, zeropower_via_newtonschulz

    x = np.array([1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, -2.0 ** -140], dtype=np.float32)
    # ties go to the even bfloat16 (1.0, 1.015625); a tiny subnormal rounds to -0.0
    np.testing.assert_array_equal(bf16(x), np.array([1.0, 1.015625, -0.0], dtype=np.float32))
    g = np.random.default_rng(0).standard_normal((4, 7)).astype(np.float32)
    o = zeropower_via_newtonschulz(g, (3.4445, -4.7750, 2.0315), 5, 1e-7)
    sv = np.linalg.svd(o.astype(np.float64), compute_uv=False)
    assert o.shape == (4, 7) and 0.6 < sv.min() and sv.max() < 1.25
    w = torch.tensor(np.eye(3, dtype=np.float32) * 2, requires_grad=True)
    opt = torch.optim.Muon([w], lr=0.05, weight_decay=0.0)
    for _ in range(20):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    assert float((w * w).sum().detach()) < 12.0 * 0.5
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        torch.optim.Muon([torch.zeros(2, requires_grad=True)])


def _lbfgs_steps(resume_after: int | None) -> np.ndarray:
    import io

    x = torch.tensor([3.0, -2.0], requires_grad=True, dtype=torch.float64)
    opt = torch.optim.LBFGS([x], max_iter=3, history_size=4)

    def closure() -> Any:
        opt.zero_grad()
        loss = (x ** 2).sum() * (x.sum() + 3) + (x ** 4).sum()
        loss.backward()
        return loss

    for k in range(4):
        if k == resume_after:
            buf = io.BytesIO()
            torch.save(opt.state_dict(), buf)
            buf.seek(0)
            opt = torch.optim.LBFGS([x], max_iter=3, history_size=4)
            opt.load_state_dict(torch.load(buf))
        opt.step(closure)
    return x.detach().numpy().copy()


def test_lbfgs_state_dict_resume_equals_uninterrupted() -> None:
    np.testing.assert_array_equal(_lbfgs_steps(2), _lbfgs_steps(None))


def test_step_hooks_order_replacement_and_removal() -> None:
    from tapegrad.torch.optim.optimizer import register_optimizer_step_pre_hook

    calls: list[Any] = []
    w = torch.tensor([1.0], requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    g = register_optimizer_step_pre_hook(lambda o, a, k: calls.append("global-pre"))
    h = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", a[0] is o)))
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    (w * 3).sum().backward()
    opt.step()
    g.remove()
    h.remove()
    opt.step()
    assert calls == ["global-pre", ("pre", True), "post", "post"]
    opt.register_step_pre_hook(lambda o, a, k: 5)
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        s = torch.optim.SparseAdam([w])
        s.step()


def test_swa_running_mean_ema_and_swalr() -> None:
    from tapegrad.torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn

    lin = torch.nn.Linear(2, 1)
    swa = AveragedModel(lin)
    ema = AveragedModel(lin, multi_avg_fn=get_ema_multi_avg_fn(0.5))
    seen = []
    for k in range(4):
        with torch.no_grad():
            lin.weight.fill_(float(k))
            lin.bias.fill_(2.0 * k)
        seen.append(k)
        swa.update_parameters(lin)
        ema.update_parameters(lin)
    np.testing.assert_allclose(swa.module.weight.detach().numpy(), [[np.mean(seen)] * 2])
    np.testing.assert_allclose(swa.module.bias.detach().numpy(), [2 * np.mean(seen)])
    e = 0.0
    for k in seen[1:]:
        e = 0.5 * e + 0.5 * k
    np.testing.assert_allclose(ema.module.weight.detach().numpy(), [[e, e]])
    assert swa(torch.ones(1, 2)).shape == (1, 1) and int(swa.n_averaged) == 4
    update_bn([torch.ones(1, 2)], swa)  # no batch-norm layer: nothing to do
    opt = torch.optim.SGD(lin.parameters(), lr=1.0)
    s = SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
    lrs = []
    for _ in range(4):
        opt.step()
        s.step()
        lrs.append(s.get_last_lr()[0])
    np.testing.assert_allclose(lrs, [0.55, 0.1, 0.1, 0.1])


def test_tensor_learning_rate() -> None:
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    w2 = torch.tensor([1.0, -2.0], requires_grad=True)
    opts = [torch.optim.Adam([w], lr=torch.tensor(0.1)), torch.optim.Adam([w2], lr=0.1)]
    for _ in range(3):
        for p, o in zip((w, w2), opts):
            o.zero_grad()
            (p * p).sum().backward()
            o.step()
    np.testing.assert_allclose(w.detach().numpy(), w2.detach().numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        torch.optim.RMSprop([w], lr=torch.tensor([0.1, 0.2]))
