"""Every torch.optim optimizer against real PyTorch: 50-step trajectories to 1e-5.

Two drives: (1) the parameters of a small MLP trained on a fixed batch, each
side differentiating with its own autograd; (2) a fixed, non-convex gradient
field ``g(p)`` computed in float64 NumPy from each side's own current
parameters, so the update rules alone are compared, at every step.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402

OPTS: dict[str, Any] = {
    "adagrad": lambda T, p: T.optim.Adagrad(p, lr=0.05),
    "adagrad_decay_wd_init": lambda T, p: T.optim.Adagrad(
        p, lr=0.05, lr_decay=0.01, weight_decay=0.01, initial_accumulator_value=0.1),
    "adadelta": lambda T, p: T.optim.Adadelta(p, lr=1.0),
    "adadelta_wd_rho": lambda T, p: T.optim.Adadelta(p, lr=0.5, rho=0.8, weight_decay=0.01),
    "adamax": lambda T, p: T.optim.Adamax(p, lr=0.01),
    "adamax_wd": lambda T, p: T.optim.Adamax(p, lr=0.01, weight_decay=0.01, betas=(0.3, 0.99)),
    "nadam": lambda T, p: T.optim.NAdam(p, lr=0.01),
    "nadam_decoupled": lambda T, p: T.optim.NAdam(p, lr=0.01, weight_decay=0.05,
                                                  decoupled_weight_decay=True),
    "nadam_l2": lambda T, p: T.optim.NAdam(p, lr=0.01, weight_decay=0.05),
    "radam": lambda T, p: T.optim.RAdam(p, lr=0.01),
    "radam_decoupled": lambda T, p: T.optim.RAdam(p, lr=0.01, weight_decay=0.05,
                                                  decoupled_weight_decay=True),
    "rmsprop": lambda T, p: T.optim.RMSprop(p, lr=0.01),
    "rmsprop_momentum_centered": lambda T, p: T.optim.RMSprop(
        p, lr=0.01, momentum=0.9, centered=True, weight_decay=0.01),
    "rmsprop_alpha_low": lambda T, p: T.optim.RMSprop(p, lr=0.01, alpha=0.3, centered=True),
    "asgd": lambda T, p: T.optim.ASGD(p, lr=0.05),
    "asgd_t0": lambda T, p: T.optim.ASGD(p, lr=0.05, t0=10, lambd=0.01, weight_decay=0.01),
    "rprop": lambda T, p: T.optim.Rprop(p, lr=0.01),
    "rprop_bounds": lambda T, p: T.optim.Rprop(p, lr=0.05, etas=(0.3, 1.5),
                                               step_sizes=(1e-3, 0.1)),
    "sgd_maximize": lambda T, p: T.optim.SGD(p, lr=0.05, momentum=0.9, maximize=True),
    "adam_maximize_foreach": lambda T, p: T.optim.Adam(p, lr=0.01, maximize=True,
                                                       foreach=False),
    "adagrad_maximize": lambda T, p: T.optim.Adagrad(p, lr=0.05, maximize=True),
    "rmsprop_maximize": lambda T, p: T.optim.RMSprop(p, lr=0.01, maximize=True),
    "rprop_maximize": lambda T, p: T.optim.Rprop(p, lr=0.01, maximize=True),
    "adamw_amsgrad": lambda T, p: T.optim.AdamW(p, lr=0.01, amsgrad=True),
    "adafactor": lambda T, p: T.optim.Adafactor(p, lr=0.01),
    "adafactor_wd_d_eps": lambda T, p: T.optim.Adafactor(
        p, lr=0.05, weight_decay=0.01, d=2.0, eps=(1e-6, 1e-2), beta2_decay=-0.5),
    "adafactor_maximize": lambda T, p: T.optim.Adafactor(p, lr=0.01, maximize=True),
}

RNG = np.random.default_rng(7)
P0 = [RNG.standard_normal((3, 4)).astype(np.float32), RNG.standard_normal(5).astype(np.float32)]


def _field(p: np.ndarray, k: int) -> np.ndarray:
    """A non-convex gradient field (float64 maths, float32 result)."""
    q = p.astype(np.float64)
    return (np.sin(3 * q) + 0.5 * q + 0.1 * (k % 7) * np.cos(q)).astype(np.float32)


def _field_run(T: Any, name: str, steps: int = 50) -> list[list[np.ndarray]]:
    ps = [T.tensor(a.copy(), requires_grad=True) for a in P0]
    opt = OPTS[name](T, ps)
    traj = []
    for k in range(steps):
        for p in ps:
            p.grad = T.tensor(_field(p.detach().numpy(), k))
        opt.step()
        traj.append([p.detach().numpy().copy() for p in ps])
    return traj


@pytest.mark.parametrize("name", sorted(OPTS))
def test_rule_trajectory_every_step(name: str) -> None:
    ours = _field_run(tt, name)
    theirs = _field_run(real, name)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5, err_msg=f"step {k}")


def _mlp_run(T: Any, name: str, steps: int = 50) -> tuple[list[np.ndarray], list[float]]:
    T.manual_seed(0)
    model = T.nn.Sequential(T.nn.Linear(4, 16), T.nn.Tanh(), T.nn.Linear(16, 3))
    rng = np.random.default_rng(1)
    x = T.tensor(rng.standard_normal((32, 4)).astype(np.float32))
    y = T.tensor(rng.integers(0, 3, 32))
    loss_fn = T.nn.CrossEntropyLoss()
    opt = OPTS[name](T, model.parameters())
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return [p.detach().numpy().copy() for p in model.parameters()], losses


@pytest.mark.parametrize("name", ["adagrad", "adadelta", "adamax", "nadam", "radam",
                                  "rmsprop_momentum_centered", "asgd", "rprop", "adafactor"])
def test_mlp_training_50_steps(name: str) -> None:
    ours, lo = _mlp_run(tt, name)
    theirs, lt = _mlp_run(real, name)
    np.testing.assert_allclose(lo, lt, rtol=1e-5, atol=1e-6)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def _lbfgs_run(T: Any, line_search: str | None, outer: int = 5, dtype: str = "float64",
               **kw: Any) -> tuple[list[float], np.ndarray, dict[str, Any]]:
    x = T.tensor([-1.2, 1.0, 0.5, -0.3], requires_grad=True, dtype=getattr(T, dtype))
    opt = T.optim.LBFGS([x], line_search_fn=line_search, **kw)

    def closure() -> Any:
        opt.zero_grad()
        a, b = x[:-1], x[1:]
        loss = (100 * (b - a * a) ** 2 + (1 - a) ** 2).sum()
        loss.backward()
        return loss

    losses = [float(opt.step(closure).detach()) for _ in range(outer)]
    st = opt.state[x]
    return losses, x.detach().numpy().copy(), {"func_evals": st["func_evals"],
                                               "n_iter": st["n_iter"]}


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_rosenbrock_with_closure(line_search: str | None) -> None:
    kw = {"lr": 0.5} if line_search is None else {}
    lo, xo, so = _lbfgs_run(tt, line_search, **kw)
    lt, xt, st = _lbfgs_run(real, line_search, **kw)
    np.testing.assert_allclose(lo, lt, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xo, xt, rtol=1e-5, atol=1e-5)
    assert so == st


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_float32_ten_iterations(line_search: str | None) -> None:
    """In float32 the iterations agree to rounding; past ~10 iterations on this problem
    last-bit differences (BLAS dot order) can flip a tolerance test, so stop there."""
    lo, xo, so = _lbfgs_run(tt, line_search, outer=1, dtype="float32", max_iter=10)
    lt, xt, st = _lbfgs_run(real, line_search, outer=1, dtype="float32", max_iter=10)
    np.testing.assert_allclose(xo, xt, rtol=1e-5, atol=1e-6)
    assert so == st


def test_lbfgs_small_history() -> None:
    lo, xo, so = _lbfgs_run(tt, "strong_wolfe", outer=3, history_size=2, max_iter=7)
    lt, xt, st = _lbfgs_run(real, "strong_wolfe", outer=3, history_size=2, max_iter=7)
    np.testing.assert_allclose(xo, xt, rtol=1e-5, atol=1e-5)
    assert so == st


def _groups_run(T: Any) -> list[np.ndarray]:
    a = T.tensor(P0[0].copy(), requires_grad=True)
    b = T.tensor(P0[1].copy(), requires_grad=True)
    opt = T.optim.RMSprop([{"params": [a]}], lr=0.01)
    for k in range(20):
        if k == 5:
            opt.add_param_group({"params": [b], "lr": 0.05, "momentum": 0.5})
        for p in (a, b):
            p.grad = T.tensor(_field(p.detach().numpy(), k))
        opt.step()
    return [a.detach().numpy(), b.detach().numpy()]


MUON: dict[str, Any] = {
    "muon": lambda T, p: T.optim.Muon(p, lr=0.02),
    "muon_plain_rms": lambda T, p: T.optim.Muon(p, lr=0.01, nesterov=False, momentum=0.8,
                                                adjust_lr_fn="match_rms_adamw"),
    "muon_no_wd_steps3": lambda T, p: T.optim.Muon(p, lr=0.05, weight_decay=0.0, ns_steps=3),
}
MUON_P0 = [RNG.standard_normal((3, 5)).astype(np.float32),
           RNG.standard_normal((6, 2)).astype(np.float32),
           RNG.standard_normal((8, 8)).astype(np.float32)]


def _muon_run(T: Any, name: str, steps: int = 50) -> list[list[np.ndarray]]:
    ps = [T.tensor(a.copy(), requires_grad=True) for a in MUON_P0]
    opt = MUON[name](T, ps)
    traj = []
    for k in range(steps):
        for p in ps:
            p.grad = T.tensor(_field(p.detach().numpy(), k))
        opt.step()
        traj.append([p.detach().numpy().copy() for p in ps])
    return traj


@pytest.mark.parametrize("name", sorted(MUON))
def test_muon_trajectory_every_step(name: str) -> None:
    for k, (a, b) in enumerate(zip(_muon_run(tt, name), _muon_run(real, name))):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5, err_msg=f"step {k}")


def test_muon_rejects_non_matrices() -> None:
    for T in (tt, real):
        with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
            T.optim.Muon([T.zeros(3, requires_grad=True)])


def test_add_param_group_mid_training() -> None:
    for x, y in zip(_groups_run(tt), _groups_run(real)):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["adagrad", "nadam", "asgd", "rprop",
                                  "rmsprop_momentum_centered", "adafactor"])
def test_state_dict_resume_equals_uninterrupted(name: str) -> None:
    """Save after 10 steps, load into a fresh optimizer, continue: same as PyTorch's
    uninterrupted run (the saved state keeps float32 scalars such as ASGD's eta)."""
    theirs = _field_run(real, name, steps=25)[-1]
    ps = [tt.tensor(a.copy(), requires_grad=True) for a in P0]
    opt = OPTS[name](tt, ps)
    for k in range(25):
        if k == 10:
            sd = opt.state_dict()
            opt = OPTS[name](tt, ps)
            opt.load_state_dict(sd)
        for p in ps:
            p.grad = tt.tensor(_field(p.detach().numpy(), k))
        opt.step()
    for x, y in zip(ps, theirs):
        np.testing.assert_allclose(x.detach().numpy(), y, rtol=1e-5, atol=1e-5)


def test_state_dict_keys_match_pytorch() -> None:
    for name in ["adagrad", "adadelta", "adamax", "nadam", "radam", "rmsprop_momentum_centered",
                 "asgd", "rprop", "adafactor"]:
        sds = []
        for T in (tt, real):
            ps = [T.tensor(a.copy(), requires_grad=True) for a in P0]
            opt = OPTS[name](T, ps)
            for p in ps:
                p.grad = T.tensor(_field(p.detach().numpy(), 0))
            opt.step()
            sds.append(opt.state_dict())
        ours, theirs = sds
        assert sorted(ours["state"][0]) == sorted(theirs["state"][0]), name
        g_ours = {k: v for k, v in ours["param_groups"][0].items()}
        g_theirs = {k: v for k, v in theirs["param_groups"][0].items()}
        assert sorted(g_ours) == sorted(g_theirs), name
        for k in g_theirs:
            assert g_ours[k] == g_theirs[k], (name, k)


def test_sparse_adam_refuses_dense_gradients() -> None:
    for T in (tt, real):
        w = T.zeros(3, requires_grad=True)
        opt = T.optim.SparseAdam([w])
        (w * 2).sum().backward()
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, "
                                               "please consider Adam instead"):
            opt.step()


def test_step_hooks_match_pytorch() -> None:
    logs = []
    for T in (tt, real):
        log: list[Any] = []
        w = T.tensor([1.0, 2.0], requires_grad=True)
        opt = T.optim.Adam([w], lr=0.1)
        h1 = opt.register_step_pre_hook(
            lambda o, a, k, log=log: log.append(("pre", type(o).__name__)))
        opt.register_step_post_hook(
            lambda o, a, k, log=log: log.append(("post", len(a), sorted(k))))
        optimizer_mod = importlib.import_module(T.__name__ + ".optim.optimizer")
        g = optimizer_mod.register_optimizer_step_post_hook(
            lambda o, a, k, log=log: log.append("global"))
        for i in range(3):
            if i == 2:
                h1.remove()
                g.remove()
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
        log.append(w.detach().tolist())
        logs.append(log)
    assert logs[0][:-1] == logs[1][:-1]
    np.testing.assert_allclose(logs[0][-1], logs[1][-1], rtol=1e-6)
