"""Conformance: the saved-tensor hooks tutorial's cells (``_saved_*``, ``_raw_saved_*``
with ``register_hooks``, ``saved_tensors_hooks`` pack/unpack order, ``save_on_cpu``),
tensor and node hooks, printed on real PyTorch and on tapegrad.torch (object
addresses aside).  Skipped without PyTorch."""

from __future__ import annotations

import contextlib
import io
import re
from typing import Any

import pytest

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402


def _tutorial(torch: Any) -> None:
    torch.manual_seed(0)
    x = torch.randn(5, requires_grad=True)
    y = x.pow(2)
    print(y.grad_fn._saved_self, x.equal(y.grad_fn._saved_self), x is y.grad_fn._saved_self)
    y = x.exp()
    print(y.equal(y.grad_fn._saved_result), y is y.grad_fn._saved_result)
    y = x.pow(2)
    print(y.grad_fn._raw_saved_self)

    def pack_hook(t: Any) -> Any:
        print("Packing", t)
        return t

    def unpack_hook(t: Any) -> Any:
        print("Unpacking", t)
        return t

    a = torch.ones(5, requires_grad=True)
    b = torch.ones(5, requires_grad=True) * 2
    with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = a * b
    y.sum().backward()
    storage: list[Any] = []

    def pack(t: Any) -> int:
        storage.append(t)
        return len(storage) - 1

    def unpack(i: int) -> Any:
        return storage[i]

    x = torch.randn(5, requires_grad=True)
    y = x.pow(2)
    y.grad_fn._raw_saved_self.register_hooks(pack, unpack)
    y.sum().backward()
    print(x.grad.equal(2 * x))
    for bad in (lambda: y.grad_fn._raw_saved_self.register_hooks(pack, unpack),
                lambda: (x * 2).grad_fn._raw_saved_self.register_hooks(pack, unpack),
                lambda: y.grad_fn._saved_self):
        try:
            bad()
        except RuntimeError as e:
            print("RuntimeError", e)
    a, b, c = (torch.randn(5, requires_grad=True) for _ in range(3))
    prod_1 = a * b
    with torch.autograd.graph.save_on_cpu(pin_memory=False):
        prod_2 = prod_1 * c
    (prod_2 * a).sum().backward()
    print(a.grad, c.grad)
    z = torch.randn(3, requires_grad=True)
    z.register_post_accumulate_grad_hook(lambda p: print("post", p.grad))
    (z * 3).sum().backward()
    ww = 2 * z
    ww.grad_fn.register_prehook(lambda g: print("pre", g))
    ww.sum().backward()
    print(ww.grad_fn.name(), [type(n).__name__ if n is not None else None
                              for n, _ in ww.grad_fn.next_functions])


def _printed(torch: Any) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        _tutorial(torch)
    return re.sub(r"0x[0-9a-f]+", "0x", buf.getvalue())


def test_saved_tensor_hooks_tutorial_prints_as_pytorch() -> None:
    assert _printed(tt) == _printed(real)
