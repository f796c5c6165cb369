"""load_state_dict of modules and optimizers with bad input: PyTorch's errors, nothing changes."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch


def _net() -> Any:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))


def _snapshot(m: Any) -> list[np.ndarray]:
    return [p.detach().numpy().copy() for p in m.parameters()]


def _same(a: list[np.ndarray], b: list[np.ndarray]) -> None:
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("case", ["shape", "missing", "unexpected", "not_tensor"])
def test_module_errors_leave_every_parameter_unchanged(case: str) -> None:
    m = _net()
    before = _snapshot(m)
    sd = {k: v * 0 + 7 for k, v in m.state_dict().items()}
    expected = {
        "shape": r"size mismatch for 2.weight: copying a param with shape torch.Size\(\[2, 5\]\) "
                 r"from checkpoint, the shape in current model is torch.Size\(\[2, 4\]\).",
        "missing": r'Missing key\(s\) in state_dict: "2.bias".',
        "unexpected": r'Unexpected key\(s\) in state_dict: "extra".',
        "not_tensor": r'While copying the parameter named "2.weight", expected torch.Tensor or '
                      r"Tensor-like object from checkpoint but received <class 'list'>",
    }[case]
    if case == "shape":
        sd["2.weight"] = torch.zeros(2, 5)
    elif case == "missing":
        del sd["2.bias"]
    elif case == "unexpected":
        sd["extra"] = torch.zeros(1)
    else:
        sd["2.weight"] = [[0.0] * 4] * 2
    with pytest.raises(RuntimeError, match=r"Error\(s\) in loading state_dict for Sequential:"):
        m.load_state_dict(sd)
    with pytest.raises(RuntimeError, match=expected):
        m.load_state_dict(sd)
    _same(before, _snapshot(m))
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like, got <class 'list'>"):
        m.load_state_dict([1, 2])


def test_module_dtype_casting() -> None:
    m = torch.nn.Linear(2, 1)
    sd = {"weight": torch.ones(1, 2, dtype=torch.float64), "bias": torch.tensor([2])}
    m.load_state_dict(sd)
    assert m.weight.dtype == torch.float32 and m.bias.item() == 2.0
    with pytest.warns(UserWarning, match="Casting complex values to real discards"):
        m.load_state_dict({"weight": torch.ones(1, 2, dtype=torch.complex64),
                           "bias": torch.zeros(1)})


def _trained(opt_cls: Any, **kw: Any) -> tuple[Any, Any]:
    m = _net()
    o = opt_cls(m.parameters(), **kw)
    for _ in range(2):
        o.zero_grad()
        (m(torch.ones(2, 3)) ** 2).sum().backward()
        o.step()
    return m, o


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_optimizer_errors_leave_state_unchanged(opt: str) -> None:
    cls, kw = ((torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}) if opt == "sgd"
               else (torch.optim.Adam, {"lr": 0.01}))
    m, o = _trained(cls, **kw)
    good = o.state_dict()
    before = copy.deepcopy(o.state_dict())

    def unchanged() -> None:
        now = o.state_dict()
        assert now["param_groups"] == before["param_groups"]
        for i, st in before["state"].items():
            for k, v in st.items():
                np.testing.assert_array_equal(np.asarray(now["state"][i][k]), np.asarray(v))

    two_groups = dict(good, param_groups=good["param_groups"] * 2)
    with pytest.raises(ValueError, match="loaded state dict has a different number of "
                                         "parameter groups"):
        o.load_state_dict(two_groups)
    unchanged()
    short = copy.deepcopy(good)
    short["param_groups"][0]["params"] = short["param_groups"][0]["params"][:-1]
    short["param_groups"][0]["lr"] = 123.0
    with pytest.raises(ValueError, match="loaded state dict contains a parameter group that "
                                         "doesn't match the size of optimizer's group"):
        o.load_state_dict(short)
    unchanged()
    bad_shape = copy.deepcopy(good)
    bad_shape["param_groups"][0]["lr"] = 123.0
    key = next(k for k in bad_shape["state"][0] if k != "step")
    bad_shape["state"][0][key] = torch.zeros(7)
    with pytest.raises(ValueError, match=f"state '{key}' of shape \\(7,\\) for a parameter of "
                                         "shape \\(4, 3\\)"):
        o.load_state_dict(bad_shape)
    unchanged()
    with pytest.raises(KeyError, match="param_groups"):
        o.load_state_dict({"state": {}})
    unchanged()
    stray = copy.deepcopy(good)
    stray["state"][99] = {key: torch.zeros(1)}
    with pytest.warns(UserWarning, match="parameter id 99"):
        o.load_state_dict(stray)


def test_optimizer_state_ids_follow_the_saved_groups() -> None:
    m, o = _trained(torch.optim.SGD, lr=0.1, momentum=0.9)
    sd = o.state_dict()
    # ids need not be 0..n-1: they map to this optimizer's parameters in group order
    shift = {i: i + 10 for i in sd["param_groups"][0]["params"]}
    renum = {"state": {shift[i]: st for i, st in sd["state"].items()},
             "param_groups": [dict(sd["param_groups"][0],
                                   params=[shift[i] for i in sd["param_groups"][0]["params"]])]}
    m2 = _net()
    o2 = torch.optim.SGD(m2.parameters(), lr=0.1, momentum=0.9)
    o2.load_state_dict(renum)
    for p1, p2 in zip(m.parameters(), m2.parameters()):
        np.testing.assert_array_equal(o.state[p1]["momentum_buffer"],
                                      o2.state[p2]["momentum_buffer"])
    d = _net()
    o3 = torch.optim.Adam(d.parameters(), lr=0.1)
    sd64 = copy.deepcopy(_trained(torch.optim.Adam, lr=0.1)[1].state_dict())
    for st in sd64["state"].values():
        st["exp_avg"] = st["exp_avg"].double()
    o3.load_state_dict(sd64)
    assert all(s["exp_avg"].dtype == np.float32 for s in o3.state.values())
