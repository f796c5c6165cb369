"""torch.optim.swa_utils against real PyTorch: averaged weights (SWA and EMA) along a
training run and the SWALR learning-rate sequence."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402


def _swa(T: Any) -> Any:
    return importlib.import_module(T.__name__ + ".optim.swa_utils")


def _run(T: Any, kind: str) -> tuple[list[list[float]], list[float], list[Any]]:
    swa = _swa(T)
    T.manual_seed(0)
    model = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 1))
    if kind == "swa":
        avg = swa.AveragedModel(model)
    elif kind == "ema":
        avg = swa.AveragedModel(model, multi_avg_fn=swa.get_ema_multi_avg_fn(0.9))
    else:
        avg = swa.AveragedModel(model, avg_fn=swa.get_ema_avg_fn(0.8))
    opt = T.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = swa.SWALR(opt, swa_lr=0.02, anneal_epochs=5, anneal_strategy="cos")
    rng = np.random.default_rng(0)
    x = T.tensor(rng.standard_normal((16, 3)).astype(np.float32))
    y = T.tensor(rng.standard_normal((16, 1)).astype(np.float32))
    lrs, ns = [], []
    for step in range(30):
        opt.zero_grad()
        T.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        if step >= 10:
            avg.update_parameters(model)
            sched.step()
        lrs.append(sched.get_last_lr()[0])
        ns.append(int(avg.n_averaged))
    weights = [p.detach().numpy().ravel().tolist() for p in avg.parameters()]
    return weights, lrs, ns


@pytest.mark.parametrize("kind", ["swa", "ema", "ema_avg_fn"])
def test_averaged_model_and_swalr(kind: str) -> None:
    (wo, lo, no), (wt, lt, nt) = _run(tt, kind), _run(real, kind)
    assert lo == lt and no == nt
    for a, b in zip(wo, wt):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_swalr_linear_zero_anneal_and_errors() -> None:
    out = []
    for T in (tt, real):
        swa = _swa(T)
        seqs = []
        for kw in [dict(anneal_epochs=0), dict(anneal_epochs=3, anneal_strategy="linear"),
                   dict(anneal_epochs=4, swa_lr=[0.05])]:
            opt = T.optim.SGD([T.zeros(1, requires_grad=True)], lr=0.3)
            s = swa.SWALR(opt, **{"swa_lr": 0.01, **kw})
            seq = [s.get_last_lr()[0]]
            for _ in range(6):
                opt.step()
                s.step()
                seq.append(s.get_last_lr()[0])
            seqs.append(seq)
        for bad, msg in [(dict(anneal_strategy="exp"), "anneal_strategy must be one of"),
                         (dict(anneal_epochs=-1), "anneal_epochs must be equal or greater")]:
            with pytest.raises(ValueError, match=msg):
                swa.SWALR(T.optim.SGD([T.zeros(1, requires_grad=True)], lr=0.1), 0.01, **bad)
        with pytest.raises(ValueError, match="Invalid decay value 1.5"):
            swa.get_ema_avg_fn(1.5)
        out.append(seqs)
    assert out[0] == out[1]
