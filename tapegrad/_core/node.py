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
    post_hooks: list[Any] | None = None  # fn(grad_inputs, grad_outputs), after the VJP
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
        """``fn(grad_inputs, grad_outputs) -> new grad_inputs or None``, run after this node's
        backward (PyTorch's ``Node.register_hook``: ``grad_inputs`` has one entry per
        ``next_functions`` edge, None where no gradient flows)."""
        from .tensor import RemovableHandle

        if self.post_hooks is None:
            self.post_hooks = []
        return RemovableHandle(self.post_hooks, fn)

    def register_prehook(self, fn: Any) -> Any:
        """``fn(grad_outputs) -> new grad_outputs or None``, run before this node's backward."""
        from .tensor import _add_hook

        def hook(g: Any) -> Any:
            r = fn((g,))
            return None if r is None else r[0]

        return _add_hook(self, hook)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    def __getattr__(self, name: str) -> Any:
        # PyTorch's ``grad_fn._saved_self`` / ``_saved_other`` / ``_saved_result``: the
        # tensors this node saved for its backward
        raw = name.startswith("_raw_saved_")
        which = {"_saved_self": (0, 0), "_saved_other": (0, 1), "_saved_result": (1, 0)}
        code = which.get("_saved_" + name[11:] if raw else name)
        op = self.__dict__.get("op") if "op" in self.__dict__ else _slot(self, "op")
        if code is None or op is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        codes = op.save_codes
        saved = _slot(self, "saved")
        for j, (kind, idx) in enumerate(codes):
            if (kind, idx if kind == 0 else 0) != code:
                continue
            if raw:
                return SavedTensor(self, j)
            if saved is FREED:
                raise RuntimeError(
                    "Trying to backward through the graph a second time (or directly access "
                    "saved tensors after they have already been freed). Saved intermediate "
                    "values of the graph are freed when you call .backward() or "
                    "autograd.grad(). Specify retain_graph=True if you need to backward through "
                    "the graph a second time or if you need to access saved tensors after "
                    "calling backward.")
            v = saved[j] if saved and j < len(saved) else None
            if v is None:
                break
            from .registry import Packed
            from .tensor import Tensor, make

            if isinstance(v, Packed):
                return v.unpack(v.value)
            if not isinstance(v, Tensor):  # the output, saved as its array
                return make(v, self, True, _STYLE[0])
            return v
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


_STYLE = [1]  # the style of a saved output handed back (the PyTorch front-end's)

_FREED_TEXT = (
    "Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a "
    "second time or if you need to access saved variables after calling backward.")


class SavedTensor:
    """One value a node saved for its backward (PyTorch's ``grad_fn._raw_saved_self``):
    ``register_hooks(pack, unpack)`` packs it now and unpacks it when backward uses it."""

    __slots__ = ("_node", "_j")

    def __init__(self, node: Node, j: int) -> None:
        self._node, self._j = node, j

    def register_hooks(self, pack_hook: Any, unpack_hook: Any) -> None:
        from .registry import Packed
        from .tensor import Tensor, make

        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError(
                "register_hooks(): incompatible function arguments. The following argument "
                "types are supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: "
                "collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\n"
                f"Invoked with: {self!r}, {pack_hook!r}, {unpack_hook!r}")
        node = self._node
        saved = _slot(node, "saved")
        if saved is FREED:
            raise RuntimeError("Calling register_hooks on a saved tensor after it has been "
                               "freed. " + _FREED_TEXT)
        v = saved[self._j] if saved and self._j < len(saved) else None
        if v is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                               "forbidden")
        if isinstance(v, Packed):
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have "
                               "already been set. Hint: only one pair of hooks is allowed at a "
                               "time.")
        if not isinstance(v, Tensor):  # the output, saved as its array
            v = make(v, node, True, _STYLE[0])
        new = list(saved)
        new[self._j] = Packed(pack_hook(v), unpack_hook)
        node.saved = tuple(new)

    def __repr__(self) -> str:
        return f"<torch._C._autograd.SavedTensor object at {id(self):#x}>"


def _slot(node: Node, name: str) -> Any:
    try:
        return object.__getattribute__(node, name)
    except AttributeError:
        return None


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
