"""``torch.autograd.graph``: the recorded graph as PyTorch exposes it.

``Node`` is the type of every ``grad_fn`` (``next_functions`` lead to
``AccumulateGrad`` leaves, whose ``.variable`` is the leaf tensor);
``saved_tensors_hooks`` and ``save_on_cpu`` intercept the tensors that ops
save for backward.

>>> import tapegrad.torch as torch
>>> packed = []
>>> def pack(t):
...     packed.append(t.shape)
...     return t
>>> x = torch.ones(3, requires_grad=True)
>>> with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
...     y = (x * x).sum()
>>> len(packed)
2
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._core.mode import STATE
from ..._core.node import Node

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu"]


class saved_tensors_hooks:
    """Context manager: ``pack_hook(t)`` runs on each tensor an op saves for backward, and
    ``unpack_hook(packed)`` gives it back when backward needs it."""

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        STATE.saved_hooks.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc: object) -> None:
        STATE.saved_hooks.pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors on the CPU (they already are: the hooks copy nothing)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(lambda t: t, lambda t: t)
