"""Every torch.optim.lr_scheduler scheduler against real PyTorch: the learning-rate (and
momentum) sequences must be *exactly* equal (same floats), step by step."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402


def _sgd(T: Any, lr: float = 0.1, groups: int = 1, momentum: float = 0.9) -> Any:
    ps = [T.zeros(2, requires_grad=True) for _ in range(groups)]
    return T.optim.SGD([{"params": [p], "lr": lr * (i + 1)} for i, p in enumerate(ps)],
                       lr=lr, momentum=momentum)


def _adam(T: Any, lr: float = 0.01) -> Any:
    return T.optim.Adam([T.zeros(2, requires_grad=True)], lr=lr)


S = "lr_scheduler"
CASES: dict[str, Any] = {
    "step": lambda T: (o := _sgd(T, groups=2), [T.optim.lr_scheduler.StepLR(o, 3, gamma=0.7)]),
    "multistep": lambda T: (o := _sgd(T), [T.optim.lr_scheduler.MultiStepLR(
        o, [2, 5, 5, 9], gamma=0.3)]),
    "exponential": lambda T: (o := _sgd(T), [T.optim.lr_scheduler.ExponentialLR(o, 0.93)]),
    "cosine": lambda T: (o := _sgd(T, groups=2), [T.optim.lr_scheduler.CosineAnnealingLR(
        o, T_max=7, eta_min=0.001)]),
    "cosine_restarts": lambda T: (o := _sgd(T), [
        T.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2, eta_min=1e-3)]),
    "cosine_restarts_mult1": lambda T: (o := _sgd(T), [
        T.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=5)]),
    "onecycle_cos": lambda T: (o := _sgd(T), [T.optim.lr_scheduler.OneCycleLR(
        o, max_lr=1.0, total_steps=40)]),
    "onecycle_linear_three_phase_adam": lambda T: (o := _adam(T), [
        T.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, epochs=4, steps_per_epoch=10,
                                        anneal_strategy="linear", three_phase=True)]),
    "cyclic_triangular": lambda T: (o := _sgd(T), [T.optim.lr_scheduler.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=4)]),
    "cyclic_triangular2": lambda T: (o := _sgd(T, groups=2), [T.optim.lr_scheduler.CyclicLR(
        o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=3, step_size_down=5,
        mode="triangular2")]),
    "cyclic_exp_range_adam": lambda T: (o := _adam(T), [T.optim.lr_scheduler.CyclicLR(
        o, base_lr=0.001, max_lr=0.01, step_size_up=5, mode="exp_range", gamma=0.97)]),
    "cyclic_custom_fn_no_momentum": lambda T: (o := _sgd(T), [T.optim.lr_scheduler.CyclicLR(
        o, 0.01, 0.1, step_size_up=3, scale_fn=lambda x: 0.5 ** x, scale_mode="iterations",
        cycle_momentum=False)]),
    "linear": lambda T: (o := _sgd(T), [T.optim.lr_scheduler.LinearLR(
        o, start_factor=0.25, end_factor=0.9, total_iters=6)]),
    "constant": lambda T: (o := _sgd(T), [T.optim.lr_scheduler.ConstantLR(
        o, factor=0.3, total_iters=4)]),
    "lambda": lambda T: (o := _sgd(T, groups=2), [T.optim.lr_scheduler.LambdaLR(
        o, [lambda e: 0.95 ** e, lambda e: 1 / (1 + e)])]),
    "multiplicative": lambda T: (o := _sgd(T), [T.optim.lr_scheduler.MultiplicativeLR(
        o, lambda e: 0.9 if e % 2 else 0.99)]),
    "polynomial": lambda T: (o := _sgd(T), [T.optim.lr_scheduler.PolynomialLR(
        o, total_iters=8, power=2.0)]),
    "sequential": lambda T: (o := _sgd(T), [T.optim.lr_scheduler.SequentialLR(
        o, [T.optim.lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=4),
            T.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
            T.optim.lr_scheduler.CosineAnnealingLR(o, T_max=6)], milestones=[4, 10])]),
    "chained": lambda T: (o := _sgd(T), [T.optim.lr_scheduler.ChainedScheduler(
        [T.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=3),
         T.optim.lr_scheduler.ExponentialLR(o, gamma=0.9)])]),
    "two_on_one_optimizer": lambda T: (o := _sgd(T), [
        T.optim.lr_scheduler.StepLR(o, 4, gamma=0.5),
        T.optim.lr_scheduler.ExponentialLR(o, gamma=0.97)]),
}


def _sequence(T: Any, name: str, steps: int = 40) -> list[Any]:
    opt, scheds = CASES[name](T)
    out = [[list(s.get_last_lr()) for s in scheds]]
    for _ in range(steps):
        opt.step()
        for s in scheds:
            s.step()
        out.append([list(s.get_last_lr()) for s in scheds]
                   + [[g.get("momentum"), g.get("betas")] for g in opt.param_groups]
                   + [[g["lr"] for g in opt.param_groups]])
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_sequence_exact(name: str) -> None:
    ours = _sequence(tt, name)
    theirs = _sequence(real, name)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"step {k}: {a} != {b}"


def test_reduce_on_plateau_exact() -> None:
    metrics = [1.0, 0.9, 0.9, 0.95, 0.91, 0.9, 0.89999, 0.95, 0.97, 0.8, 0.8, 0.8, 0.8, 0.8,
               0.85, 0.81, 0.8, 0.8, 0.79, 0.8, 0.8, 0.8, 0.8, 0.8]
    runs = []
    for T in (tt, real):
        seqs = []
        for kw in [dict(patience=1), dict(mode="max", factor=0.5, patience=0, cooldown=2),
                   dict(threshold_mode="abs", threshold=0.05, patience=2, min_lr=[0.02, 0.03]),
                   dict(patience=0, factor=0.2, min_lr=0.001, eps=1e-3)]:
            opt = _sgd(T, lr=0.1, groups=2)
            s = T.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
            seq = []
            for m in metrics:
                s.step(m)
                seq.append((list(s.get_last_lr()), s.num_bad_epochs, s.cooldown_counter,
                            s.best))
            seqs.append(seq)
        runs.append(seqs)
    assert runs[0] == runs[1]


@pytest.mark.parametrize("name", ["step", "multistep", "exponential", "cosine", "linear",
                                  "constant", "polynomial"])
def test_closed_form_with_epoch_argument(name: str) -> None:
    seqs = []
    for T in (tt, real):
        opt, (s,) = CASES[name](T)
        seq = []
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for e in [3, 1, 7, 7, 12, 0, 5]:
                opt.step()
                s.step(e)
                seq.append(list(s.get_last_lr()))
        assert any("epoch parameter" in str(x.message) for x in w)
        seqs.append(seq)
    assert seqs[0] == seqs[1]


def test_cosine_restarts_epoch_argument() -> None:
    seqs = []
    for T in (tt, real):
        opt = _sgd(T)
        s = T.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)
        seq = []
        for e in [0.5, 1.0, 2.7, 3.0, 9.5, 20, 2]:
            opt.step()
            s.step(e)
            seq.append((list(s.get_last_lr()), s.T_cur, s.T_i, s.last_epoch))
        seqs.append(seq)
    assert seqs[0] == seqs[1]


def test_warning_when_scheduler_steps_first() -> None:
    msgs = []
    for T in (tt, real):
        opt = _sgd(T)
        s = T.optim.lr_scheduler.StepLR(opt, 2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s.step()
        msgs.append([str(x.message) for x in w])
    assert msgs[0] == msgs[1] and msgs[0] and "before `optimizer.step()`" in msgs[0][0]


def test_state_dict_round_trip_continues_identically() -> None:
    for T in (tt, real):
        opt = _sgd(T)
        s = T.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        for _ in range(4):
            opt.step()
            s.step()
        sd = s.state_dict()
        assert "optimizer" not in sd
    ours = {k: v for k, v in sd.items()}
    opt = _sgd(tt)
    s = tt.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    for _ in range(4):
        opt.step()
        s.step()
    mine = s.state_dict()
    assert sorted(mine) == sorted(ours)
    for k in ours:
        assert mine[k] == ours[k], k


@pytest.mark.parametrize("make, msg", [
    (lambda T, o: T.optim.lr_scheduler.ConstantLR(o, factor=2.0),
     "Constant multiplicative factor expected to be between 0 and 1."),
    (lambda T, o: T.optim.lr_scheduler.LinearLR(o, start_factor=0.0),
     "Starting multiplicative factor expected to be greater than 0 and less or equal to 1."),
    (lambda T, o: T.optim.lr_scheduler.ReduceLROnPlateau(o, factor=1.5),
     "Factor should be < 1.0."),
    (lambda T, o: T.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1),
     "You must define either total_steps OR (epochs AND steps_per_epoch)"),
    (lambda T, o: T.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=0),
     "Expected positive integer T_0, but got 0"),
    (lambda T, o: T.optim.lr_scheduler.SequentialLR(
        o, [T.optim.lr_scheduler.StepLR(o, 2)], milestones=[3]),
     "Sequential Schedulers expects number of schedulers provided to be one more"),
    (lambda T, o: T.optim.lr_scheduler.ReduceLROnPlateau(o, mode="avg"), "mode avg is unknown!"),
])
def test_errors_match_pytorch(make: Any, msg: str) -> None:
    for T in (tt, real):
        with pytest.raises(ValueError) as ei:
            make(T, _sgd(T))
        assert str(ei.value).startswith(msg)


def test_onecycle_past_total_steps_raises() -> None:
    for T in (tt, real):
        opt = _sgd(T)
        s = T.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=3)
        for _ in range(3):
            opt.step()
            s.step()
        with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of "
                                             "total steps is 3"):
            opt.step()
            s.step()


def test_not_an_optimizer() -> None:
    for T in (tt, real):
        with pytest.raises(TypeError, match="list is not an Optimizer"):
            T.optim.lr_scheduler.StepLR([], 2)
