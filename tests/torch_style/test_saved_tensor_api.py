"""PyTorch's saved-tensor API (``grad_fn._raw_saved_*`` with ``register_hooks``), the
order hooks pack and unpack in, reflected operators' input order and
``register_post_accumulate_grad_hook``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch


def test_raw_saved_tensor_hooks_pack_now_and_unpack_in_backward() -> None:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.pow(2)
    raw = y.grad_fn._raw_saved_self
    assert repr(raw).startswith("<torch._C._autograd.SavedTensor object at 0x")
    storage: list[Any] = []
    calls: list[str] = []

    def pack(t: Any) -> int:
        calls.append("pack")
        storage.append(t * 1)  # a copy, as a user's offloading hook would
        return len(storage) - 1

    def unpack(i: int) -> Any:
        calls.append("unpack")
        return storage[i]

    raw.register_hooks(pack, unpack)
    assert calls == ["pack"]
    with pytest.raises(RuntimeError, match="whose hooks have already been set"):
        raw.register_hooks(pack, unpack)
    y.sum().backward()
    assert calls == ["pack", "unpack"]
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])
    with pytest.raises(RuntimeError, match="after it has been freed"):
        y.grad_fn._raw_saved_self.register_hooks(pack, unpack)


def test_raw_saved_errors() -> None:
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="with value None is forbidden"):
        (x * 2).grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        x.exp().grad_fn._raw_saved_result.register_hooks(1, lambda t: t)
    with pytest.raises(AttributeError):
        x.exp().grad_fn._raw_saved_nothing  # noqa: B018


def test_two_saved_inputs_pack_and_unpack_second_first() -> None:
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True) * 2
    seen: list[tuple[str, float]] = []

    def pack(t: Any) -> Any:
        seen.append(("pack", t[0].item()))
        return t

    def unpack(t: Any) -> Any:
        seen.append(("unpack", t[0].item()))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = a * b
    y.sum().backward()
    assert seen == [("pack", 2.0), ("pack", 1.0), ("unpack", 2.0), ("unpack", 1.0)]
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 2.0])


def test_reflected_add_and_mul_put_the_tensor_first() -> None:
    x = torch.ones(3, requires_grad=True)
    for y in (2 * x, 2 + x, 2.5 * x):
        first, second = y.grad_fn.next_functions
        assert type(first[0]).__name__ == "AccumulateGrad" and second[0] is None
    np.testing.assert_array_equal((3 * x).detach().numpy(), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal((1 - x).detach().numpy(), [0.0, 0.0, 0.0])


def test_post_accumulate_grad_hook() -> None:
    x = torch.ones(2, requires_grad=True)
    got: list[list[float]] = []
    h = x.register_post_accumulate_grad_hook(lambda p: got.append(p.grad.tolist()))
    torch.autograd.grad((x * 2).sum(), x)  # accumulates nothing: no call
    assert got == []
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert got == [[2.0, 2.0], [5.0, 5.0]]
    h.remove()
    (x * 2).sum().backward()
    assert len(got) == 2 and x.grad.tolist() == [7.0, 7.0]
    with pytest.raises(RuntimeError, match="cannot be registered on non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(print)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        torch.ones(2).register_post_accumulate_grad_hook(print)
