"""Bad input gets PyTorch's exception type and message (tapegrad adds one hint line).

Each case runs on real PyTorch and on tapegrad.torch; the exception types must
be equal and tapegrad's message, without its ``[tapegrad hint]`` line, must
equal PyTorch's (or start with it where PyTorch appends a long URL tail).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import pytest

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402


def _hook_case(ret: Callable[[Any], Any], leaf: bool) -> Callable[[Any], Any]:
    def run(torch: Any) -> Any:
        x = torch.ones(2, requires_grad=True)
        y = x * 2

        def bad(g: Any) -> Any:
            return ret(g)

        (x if leaf else y).register_hook(bad)
        y.sum().backward()

    return run


def _sd_case(mutate: Callable[[Any, dict[str, Any]], None]) -> Callable[[Any], Any]:
    def run(torch: Any) -> Any:
        m = torch.nn.Linear(3, 2)
        sd = dict(m.state_dict())
        mutate(torch, sd)
        m.load_state_dict(sd)

    return run


def _opt_case(mutate: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def run(torch: Any) -> Any:
        m = torch.nn.Linear(3, 2)
        o = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        (m(torch.ones(1, 3))).sum().backward()
        o.step()
        o.load_state_dict(mutate(copy.deepcopy(o.state_dict())))

    return run


def _expanded_grad(torch: Any) -> Any:
    x = torch.ones(2, requires_grad=True)
    x.grad = torch.ones(1).expand(2)
    (x * 2).sum().backward()


def _backward_list(torch: Any) -> Any:
    x = torch.ones(2, requires_grad=True)
    (x * 2).backward([1.0, 1.0])


def _deepcopy_nonleaf(torch: Any) -> Any:
    x = torch.ones(2, requires_grad=True)
    copy.deepcopy(x * 2)


CASES: dict[str, Callable[[Any], Any]] = {
    "hook_dtype": _hook_case(lambda g: g.double(), False),
    "hook_size": _hook_case(lambda g: g[:1], False),
    "hook_type": _hook_case(lambda g: 3, False),
    "leaf_hook_dtype": _hook_case(lambda g: g.double(), True),
    "leaf_hook_size": _hook_case(lambda g: g[:1], True),
    "expanded_grad": _expanded_grad,
    "backward_list_of_floats": _backward_list,
    "deepcopy_non_leaf": _deepcopy_nonleaf,
    "sd_size": _sd_case(lambda torch, sd: sd.__setitem__("weight", torch.zeros(2, 4))),
    "sd_missing": _sd_case(lambda torch, sd: sd.pop("bias")),
    "sd_unexpected": _sd_case(lambda torch, sd: sd.__setitem__("extra", torch.zeros(1))),
    "sd_not_tensor": _sd_case(lambda torch, sd: sd.__setitem__("bias", [0.0, 0.0])),
    "sd_not_a_dict": lambda torch: torch.nn.Linear(1, 1).load_state_dict([1]),
    "opt_groups": _opt_case(lambda sd: dict(sd, param_groups=sd["param_groups"] * 2)),
    "opt_group_size": _opt_case(lambda sd: dict(sd, param_groups=[
        dict(sd["param_groups"][0], params=[0])])),
    "opt_no_groups": _opt_case(lambda sd: {"state": {}}),
    "tensor_overflow": lambda torch: torch.tensor([2 ** 70]),
    "tensor_overflow_u64": lambda torch: torch.tensor([2 ** 63]),
    "tensor_object": lambda torch: torch.tensor([object()]),
    "tensor_ragged": lambda torch: torch.tensor([[1, 2], [3]]),
    "zeros_overflow": lambda torch: torch.zeros(2 ** 40, 2 ** 40),
    "ones_overflow": lambda torch: torch.ones(2 ** 31, 2 ** 31),
    "empty_max": lambda torch: torch.tensor([]).max(),
    "empty_max_dim": lambda torch: torch.zeros(0, 3).max(dim=0),
    "empty_amax_dim": lambda torch: torch.zeros(0, 3).amax(dim=0),
    "empty_amin_all": lambda torch: torch.zeros(0, 3).amin(),
    "empty_argmax_fn": lambda torch: torch.argmax(torch.zeros(0)),
    "int_floordiv_zero": lambda torch: torch.tensor([1, 2]) // torch.tensor([1, 0]),
    "int_mod_zero": lambda torch: torch.tensor([1]) % 0,
    "int_fmod_zero": lambda torch: torch.fmod(torch.tensor([5]), torch.tensor([0])),
    "steplr_zero": lambda torch: torch.optim.lr_scheduler.StepLR(
        torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1), step_size=0).step(),
}


def _error(fn: Callable[[Any], Any], torch: Any) -> BaseException:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(torch)
        except Exception as e:  # noqa: BLE001  (the point is to compare what was raised)
            return e
    raise AssertionError("no error raised")


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_error_as_pytorch(name: str) -> None:
    want = _error(CASES[name], real)
    got = _error(CASES[name], tt)
    assert type(got).__name__ == type(want).__name__, (got, want)
    mine = str(got).split("\n[tapegrad hint]")[0]
    theirs = str(want)
    if name == "steplr_zero":  # Python's own ZeroDivisionError text differs by call site
        return
    assert mine == theirs or (len(mine) > 40 and theirs.startswith(mine)), (mine, theirs)


def test_duplicate_parameter_warning_matches() -> None:
    msgs = []
    for torch in (real, tt):
        p = torch.nn.Parameter(torch.ones(1))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            torch.optim.SGD([p, p], lr=0.1)
        msgs.append([str(x.message) for x in w if "duplicate" in str(x.message)])
    assert msgs[0] == msgs[1] and msgs[0]


def _norm_grad(torch: Any) -> Any:
    x = torch.zeros(2, 3, requires_grad=True)
    (x.norm() + x.norm(dim=1).sum() + x.norm(p=2, dim=0, keepdim=True).sum()).backward()
    return x.grad


def _normalize(torch: Any) -> Any:
    x = torch.tensor([[0.0, 0.0, 0.0], [3.0, 0.0, 4.0]], requires_grad=True)
    y = torch.nn.functional.normalize(x)
    (y * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    return torch.cat([y.detach(), x.grad])


def _float_div_zero(torch: Any) -> Any:
    return torch.stack([torch.tensor([1.0, -1.0, 0.0]) / 0.0,
                        torch.tensor([1.0, -1.0, 0.0]) // torch.tensor([0.0, 0.0, 0.0])])


def _empty_results(torch: Any) -> Any:
    x = torch.zeros(0, 3)
    r = torch.zeros(2, 0).max(dim=0, keepdim=True)
    parts = [x.max(dim=1).values, x.amax(dim=1), x.amin(dim=1, keepdim=True).reshape(-1),
             x.sum(dim=0), x.prod(dim=0), r.values.reshape(-1), x.mean(dim=0)]
    return torch.cat([p.float() for p in parts])


@pytest.mark.parametrize("case", [_norm_grad, _normalize, _float_div_zero, _empty_results],
                         ids=["norm_grad_at_zero", "normalize_at_zero", "float_div_zero",
                              "empty_results"])
def test_singular_points_match_pytorch(case: Any) -> None:
    import numpy as np

    want = case(real).numpy()
    got = case(tt).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
