"""Hostile or careless input in PyTorch style: PyTorch's errors, and no .grad half-written."""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch
from tapegrad._core.errors import hint_of


def _two_leaves() -> tuple[Any, Any, Any]:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    a.grad = torch.tensor([10.0, 10.0])
    b.grad = torch.tensor([20.0, 20.0])
    return a, b, (a * b)


@pytest.mark.parametrize("ret,exc,msg", [
    (lambda g: g.double(), RuntimeError,
     r"hook 'bad' has changed the type of value \(was torch.FloatTensor got "
     r"torch.DoubleTensor\)"),
    (lambda g: g[:1], RuntimeError, r"hook 'bad' has changed the size of value"),
    (lambda g: 3, TypeError, r"expected Variable, but hook returned 'int'"),
    (lambda g: g.numpy(), TypeError, r"expected Variable, but hook returned 'ndarray'"),
])
@pytest.mark.parametrize("where", ["leaf", "interior"])
def test_bad_hook_results_fail_and_change_no_grad(ret: Any, exc: Any, msg: str,
                                                  where: str) -> None:
    a, b, y = _two_leaves()

    def bad(g: Any) -> Any:
        return ret(g)

    (a if where == "leaf" else y).register_hook(bad)
    with pytest.raises(exc, match=msg):
        (y.sum() + b.sum()).backward()
    assert a.grad.tolist() == [10.0, 10.0] and b.grad.tolist() == [20.0, 20.0]


def test_raising_hook_changes_no_grad() -> None:
    a, b, y = _two_leaves()

    def boom(g: Any) -> Any:
        raise ValueError("boom")

    y.register_hook(boom)
    with pytest.raises(ValueError, match="boom"):
        (y.sum() + b.sum()).backward()
    assert a.grad.tolist() == [10.0, 10.0] and b.grad.tolist() == [20.0, 20.0]


def test_good_hooks_still_replace_the_gradient() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g * 3)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


def test_expanded_or_read_only_grad() -> None:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([1.0, 2.0], requires_grad=True)
    b.grad = torch.tensor([5.0, 5.0])
    a.grad = torch.ones(1).expand(2)
    with pytest.raises(RuntimeError, match="unsupported operation: more than one element of "
                                           "the written-to tensor refers to a single memory "
                                           "location. Please clone"):
        (a * b).sum().backward()
    assert b.grad.tolist() == [5.0, 5.0]  # checked before any .grad was written
    ro = np.ones(2, np.float32)
    ro.flags.writeable = False
    a.grad = torch.from_numpy(ro)
    (a * b).sum().backward()
    assert a.grad.tolist() == [2.0, 3.0] and ro.tolist() == [1.0, 1.0]


def test_backward_gradient_forms() -> None:
    x = torch.ones(2, requires_grad=True)
    (x * 2).backward([torch.tensor([1.0, 3.0])])  # PyTorch's sequence form
    assert x.grad.tolist() == [2.0, 6.0]
    with pytest.raises(TypeError, match="gradients can be either Tensors or None, but got float"):
        (x * 2).backward([1.0, 1.0])
    assert x.grad.tolist() == [2.0, 6.0]


def test_deepcopy_of_a_non_leaf_is_refused() -> None:
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Only Tensors created explicitly by the user \(graph "
                                           r"leaves\) support the deepcopy protocol"):
        copy.deepcopy(x * 2)
    y = copy.deepcopy(x)
    assert y.requires_grad and y.is_leaf and y is not x


def test_duplicate_parameters_warn() -> None:
    p = torch.nn.Parameter(torch.ones(1))
    with pytest.warns(UserWarning, match="optimizer contains a parameter group with duplicate "
                                         "parameters; in future, this will cause an error"):
        torch.optim.SGD([p, p], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                         "group"):
        torch.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.optim.SGD([p], lr=0.1)


@pytest.mark.parametrize("make,exc,msg", [
    (lambda: torch.tensor([2 ** 70]), ValueError, "Overflow when unpacking long long"),
    (lambda: torch.tensor([[1], [2 ** 64]]), ValueError, "Overflow when unpacking long long"),
    (lambda: torch.tensor([2 ** 63]), ValueError, "Overflow when unpacking long long"),
    (lambda: torch.tensor([object()]), RuntimeError, "Could not infer dtype of object"),
    (lambda: torch.tensor([[1, 2], [3]]), ValueError,
     r"expected sequence of length 2 at dim 1 \(got 1\)"),
    (lambda: torch.zeros(-1), RuntimeError, "zeros: Dimension size must be non-negative"),
    (lambda: torch.empty(-1), RuntimeError, "negative dimension -1"),
    (lambda: torch.zeros(2 ** 40, 2 ** 40), RuntimeError,
     r"Storage size calculation overflowed with sizes=\[1099511627776, 1099511627776\]"),
    (lambda: torch.ones(2 ** 31, 2 ** 31), RuntimeError, "Storage size calculation overflowed"),
    (lambda: torch.full((2 ** 45,), 1.0), RuntimeError,
     "DefaultCPUAllocator: not enough memory: you tried to allocate 140737488355328 bytes"),
])
def test_creation_errors_name_the_real_cause(make: Any, exc: Any, msg: str) -> None:
    with pytest.raises(exc, match=msg) as info:
        make()
    assert hint_of(info.value) is not None  # the hint is a note
    assert "rectangular" not in str(info.value) or "sequence of length" in str(info.value)


def test_int64_limits_still_fit() -> None:
    assert torch.tensor([2 ** 63 - 1, -2 ** 63]).tolist() == [2 ** 63 - 1, -2 ** 63]
