"""The graph node shared by both front-ends.

A node is one recorded op application: edges to the nodes of its inputs (not
the input tensors), the values its VJP declared it needs, static attributes
and the shape and dtype of its output, which is what a gradient arriving at
it must have (the engine undoes broadcasting against it, as PyTorch checks a
gradient against the next node's input metadata).  Leaves get
an :class:`AccumulateGrad` node, created lazily and owned by the tensor, which
refers back to its tensor weakly: the graph holds no cycles, so dropping the
last user reference to an output frees the whole graph.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .registry import Op
    from .tensor import Tensor

FREED: Any = object()  # sentinel: saved values released after backward


class Node:
    """One recorded application of an op."""

    __slots__ = (
        "op",
        "next",
        "saved",
        "versions",
        "attrs",
        "shape",
        "dtype",
        "out_vc",
        "tapes",
        "rg",
        "__weakref__",
        "__dict__",
    )
    # rarely set: class-level defaults, instance values go to __dict__
    hooks: list[Any] | None = None
    retain: Any = None
    trace: Any = None

    op: Op
    next: tuple[Node | None, ...]
    saved: Any
    versions: tuple[int, ...] | None
    attrs: dict[str, Any]
    shape: tuple[int, ...] | None
    dtype: Any
    out_vc: list[int] | None
    tapes: tuple[Any, ...]
    rg: bool

    def name(self) -> str:
        """The PyTorch-style name, e.g. ``MulBackward0``."""
        return self.op.grad_name

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        return tuple((n, 0) for n in self.next)

    def register_hook(self, fn: Any) -> Any:
        from .tensor import _add_hook

        return _add_hook(self, fn)

    def register_prehook(self, fn: Any) -> Any:
        """``fn(grad_outputs) -> new grad_outputs or None``, run before this node's backward."""
        from .tensor import _add_hook

        def hook(g: Any) -> Any:
            r = fn((g,))
            return None if r is None else r[0]

        return _add_hook(self, hook)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad(Node):
    """The node of a leaf tensor: where gradients for that leaf arrive."""

    __slots__ = ("variable_ref",)

    def __init__(self, tensor: Tensor) -> None:
        self.next = ()
        self.saved = ()
        self.versions = None
        self.attrs = {}
        self.out_vc = None
        self.tapes = ()
        self.rg = False
        self.variable_ref = weakref.ref(tensor)

    @property
    def variable(self) -> Tensor | None:
        return self.variable_ref()

    # a leaf's gradient has the leaf's current shape and dtype
    @property
    def shape(self) -> tuple[int, ...] | None:  # type: ignore[override]
        t = self.variable_ref()
        return None if t is None else t._data.shape

    @property
    def dtype(self) -> Any:
        t = self.variable_ref()
        return None if t is None else t._data.dtype

    def name(self) -> str:
        return "AccumulateGrad"


# Node-subclass type names, so that ``type(grad_fn).__name__ == "MulBackward0"``.
_NODE_TYPES: dict[str, type[Node]] = {}


def node_type(grad_name: str) -> type[Node]:
    t = _NODE_TYPES.get(grad_name)
    if t is None:
        t = type(grad_name, (Node,), {"__slots__": ()})
        _NODE_TYPES[grad_name] = t
    return t
