"""Ops and the one recording path.

``defop`` turns a NumPy forward function into an :class:`Op`; ``Op.defvjp``
attaches its VJP, written in tapegrad ops so the backward pass is itself
differentiable.  :func:`apply` is the only place nodes are made and tapes are
told about an op.

Forward signature: positional parameters are the op's tensor inputs (any
array-like; non-tensors are constants), keyword-only parameters are static
attributes.  ``saves`` names what the VJP receives after the cotangent ``g``:
an input's name (the input tensor itself), ``"out"`` (the forward result), or
``"<input>_shape"`` (only the input's shape, so the array can be freed).
"""

from __future__ import annotations

import inspect
import os
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

from . import mode
from .node import AccumulateGrad, Node, node_type
from .tensor import Tensor, make

_STATE = mode.STATE
_EMPTY: dict[str, Any] = {}
_FLOAT_KINDS = frozenset("fc")

# Anomaly mode: when on, each node records the user's stack at creation.
ANOMALY = [False]


class Op:
    """A primitive: forward on ndarrays plus a VJP in tapegrad ops."""

    __slots__ = ("name", "fwd", "vjp", "save_codes", "grad_name", "node_cls", "saves", "needs",
                 "save_all", "__dict__")

    def __init__(
        self,
        name: str,
        fwd: Callable[..., Any],
        saves: tuple[str, ...],
        grad_name: str | None,
        needs: bool = False,
    ) -> None:
        self.name = name
        self.fwd = fwd
        self.needs = needs
        self.vjp: Callable[..., Any] = None  # type: ignore[assignment]
        self.saves = saves
        self.grad_name = grad_name or _default_grad_name(name)
        self.node_cls = node_type(self.grad_name)
        params = inspect.signature(fwd).parameters
        names = [
            p.name
            for p in params.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        codes: list[tuple[int, int]] = []
        self.save_all = saves == ("*",)
        for s in ([] if self.save_all else saves):
            if s == "out":
                codes.append((1, 0))
            elif s.endswith("_shape") and s[: -len("_shape")] in names:
                codes.append((2, names.index(s[: -len("_shape")])))
            elif s in names:
                codes.append((0, names.index(s)))
            else:
                raise ValueError(f"op {name!r}: cannot save {s!r} (inputs: {names})")
        self.save_codes = tuple(codes)
        # whether a node holds tensors that backward frees (shapes alone are kept, so a
        # graph that saved no tensor can be backwarded twice, as in PyTorch)
        self.save_tensors = self.save_all or any(kind != 2 for kind, _ in codes)
        self.__doc__ = fwd.__doc__

    def renamed(self, grad_name: str) -> Op:
        """The same op under another node name (e.g. ``TBackward0`` for ``t()``)."""
        op = Op(self.name, self.fwd, self.saves, grad_name, self.needs)
        op.vjp = self.vjp
        return op

    def defvjp(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Attach the VJP: ``fn(g, *saved, **attrs) -> tuple of input gradients``."""
        self.vjp = fn
        return fn

    def __call__(self, *args: Any, **attrs: Any) -> Any:
        """Run the op forward and, when anything is tracked, record one node.

        This is the hot path of every op: one pass over the arguments collects
        the arrays, the style and whether any input is tracked.
        """
        style = -1
        rg = False
        arrays: list[Any] = []
        for a in args:
            if isinstance(a, Tensor):
                if style < 0:
                    style = a._style
                if a._rg:
                    rg = True
                arrays.append(a._data)
            else:
                arrays.append(a)
        out = self.fwd(*arrays, **attrs)
        if out.__class__ is not np.ndarray:
            out = np.asarray(out)
        if style < 0:
            return make(out, None, False, 0)
        state = _STATE
        if not state.grad_enabled or self.vjp is None:
            if state.inference:  # a front-end's marker for tensors made in inference mode
                return state.inference(make(out, None, False, style))
            return make(out, None, False, style)
        rec: tuple[Any, ...] = ()
        if state.tapes:
            rec = tuple(tp for tp in state.tapes if tp._interested(args))
            if not (rg or rec):
                return make(out, None, False, style)
        elif not rg:
            return make(out, None, False, style)
        if out.dtype.kind not in _FLOAT_KINDS:
            return make(out, None, False, style)
        return _record(self, args, arrays, attrs, out, rg, rec, style)

    def __repr__(self) -> str:
        return f"<tapegrad op {self.name}>"


def _default_grad_name(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_")) + "Backward0"


def defop(
    name: str, saves: tuple[str, ...] = (), grad_name: str | None = None, needs: bool = False
) -> Callable[[Callable[..., Any]], Op]:
    """Declare a primitive op.

    With ``needs=True`` the VJP also receives ``needs``: one bool per input
    saying whether that input's gradient is wanted, so it can skip work.

    Examples
    --------
    >>> @defop("my_square", saves=("x",))
    ... def my_square(x):
    ...     return x * x
    >>> @my_square.defvjp
    ... def _(g, x):
    ...     return (g * 2 * x,)
    """

    def deco(fwd: Callable[..., Any]) -> Op:
        return Op(name, fwd, saves, grad_name, needs)

    return deco


_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_stack() -> traceback.StackSummary:
    """The current stack without tapegrad's own innermost frames (anomaly mode)."""
    stack = traceback.extract_stack()
    while len(stack) > 1 and os.path.abspath(stack[-1].filename).startswith(_PKG_DIR + os.sep):
        stack.pop()
    return stack


def get_acc(t: Any) -> AccumulateGrad:
    """The leaf's AccumulateGrad node (made on first use, owned by the tensor)."""
    acc = t._acc
    if acc is None:
        acc = AccumulateGrad(t)
        t._acc = acc
    return acc


def edge_of(t: Any) -> Node:
    """Where gradients for tensor ``t`` arrive: its node, or its leaf accumulator."""
    n = t._node
    return n if n is not None else get_acc(t)


def apply(op: Op, args: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
    """Run ``op`` forward and, when anything is tracked, record one node."""
    return op(*args, **attrs)


def _record(
    op: Op,
    args: tuple[Any, ...],
    arrays: list[Any],
    attrs: dict[str, Any],
    out: np.ndarray,
    rg: bool,
    rec: tuple[Any, ...],
    style: int,
) -> Any:
    node = op.node_cls.__new__(op.node_cls)
    nxt: list[Node | None] = []
    meta: list[Any] = []
    for a in args:
        if isinstance(a, Tensor):
            n = a._node
            if n is None and (a._rg or (rec and a._acc is not None)):
                n = get_acc(a)
            nxt.append(n)
            meta.append((a._data.shape, a._data.dtype) if n is not None else None)
        else:
            nxt.append(None)
            meta.append(None)
    node.next = tuple(nxt)
    node.in_meta = tuple(meta)
    node.op = op
    node.attrs = attrs
    node.tapes = rec
    node.rg = rg
    for tp in rec:
        tp._recorded(node)
    if ANOMALY[0]:
        node.trace = _user_stack()
    res = make(out, node, rg, style)
    node.out_vc = res._vc
    codes = op.save_codes
    if op.save_all:
        codes = tuple((0, i) for i in range(len(args)))
    if codes:
        saved: list[Any] = []
        versions: list[int] = []
        for kind, idx in codes:
            if kind == 0:
                a = args[idx]
                saved.append(a)
                versions.append(a._vc[0] if isinstance(a, Tensor) else 0)
            elif kind == 1:
                saved.append(out)
                versions.append(0)
            else:
                saved.append(np.shape(arrays[idx]))
                versions.append(0)
        node.saved = tuple(saved)
        node.versions = tuple(versions)
    else:
        node.saved = ()
        node.versions = None
    return res
