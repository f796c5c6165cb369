"""Ops and the one recording path.

``defop`` turns a NumPy forward function into an :class:`Op`; ``Op.defvjp``
attaches its VJP, written in tapegrad ops so the backward pass is itself
differentiable.  Calling an op is the only way nodes are made and tapes are
told about an op: :meth:`Op.__call__` in general, and the unrolled ``_Op1`` /
``_Op2`` for the common one- and two-input ops; all of them build the node in
:func:`_result_node`.  A node keeps its edges, what its VJP declared it
needs (``saves``; ``save_for`` drops a saved input that only an untracked
input's gradient would use) and its output's shape and dtype.

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
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from . import mode
from .dispatch import dispatch
from .node import AccumulateGrad, Node, node_type
from .tensor import CLASSES, Tensor, make

_STATE = mode.STATE
_EMPTY: dict[str, Any] = {}
_ND = np.ndarray
_asarray = np.asarray
_FLOAT_KINDS = frozenset("fc")

# Anomaly mode: when on, each node records the user's stack at creation.
ANOMALY = [False]

# How a node saves its values (Op.save_plan)
_SAVE_NONE, _SAVE_OUT, _SAVE_IN, _SAVE_XY, _SAVE_ANY = range(5)


class Op:
    """A primitive: forward on ndarrays plus a VJP in tapegrad ops."""

    __slots__ = ("name", "fwd", "vjp", "jvp", "batch", "save_codes", "grad_name", "node_cls",
                 "saves", "needs", "_save_all", "save_if", "saves_out", "save_plan", "save_args",
                 "key", "named", "__dict__", "__weakref__")

    def __init__(
        self,
        name: str,
        fwd: Callable[..., Any],
        saves: tuple[str, ...],
        grad_name: str | None,
        needs: bool = False,
        save_for: dict[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.name = name
        self.fwd = fwd
        self.needs = needs
        self.vjp: Callable[..., Any] = None  # type: ignore[assignment]
        # forward-mode rule and batching rule (see defjvp / defbatch); None: not defined
        self.jvp: Callable[..., Any] | None = None
        self.batch: Callable[..., Any] | None = None
        self.saves = saves
        # the node name: given by the op's author (a front-end's own op), else from the
        # node-name table a front-end installed for this op's key (name_nodes), else
        # derived from the key ("sum_all" -> "SumAllBackward0")
        self.key = name
        self.named = grad_name is not None
        self.grad_name = grad_name or _NODE_NAMES.get(name) or _default_grad_name(name)
        self.node_cls = node_type(self.grad_name)
        _ALL_OPS.add(self)
        params = inspect.signature(fwd).parameters
        names = [
            p.name
            for p in params.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        codes: list[tuple[int, int]] = []
        self._save_all = saves == ("*",)
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
        self.saves_out = any(kind == 1 for kind, _ in codes)
        # save_for: a saved input is only needed for some inputs' gradients (x*y keeps x for
        # dy only), so it is not kept when none of those inputs is tracked
        self.save_if: tuple[tuple[int, ...] | None, ...] | None = None
        if save_for:
            conds: list[tuple[int, ...] | None] = []
            for s in saves:
                users = save_for.get(s)
                conds.append(None if users is None else tuple(names.index(u) for u in users))
            self.save_if = tuple(conds)
        # whether a node holds tensors that backward frees (shapes alone are kept, so a
        # graph that saved no tensor can be backwarded twice, as in PyTorch)
        self.save_tensors = self.save_all or any(kind != 2 for kind, _ in codes)
        self._plan()
        self.__doc__ = fwd.__doc__

    def _plan(self) -> None:
        """Precompute how a node of this op saves its values (the recording hot path).

        ``save_plan`` is ``_SAVE_NONE`` (nothing), ``_SAVE_OUT`` (the output only),
        ``_SAVE_IN`` (one input, ``save_args = (index,)``), ``_SAVE_XY`` (inputs 0 and 1,
        ``save_args`` = for each the input whose gradient needs it, or -1 for always)
        or ``_SAVE_ANY`` (the general loop of :func:`_save`).
        """
        codes = self.save_codes
        cond = self.save_if
        plan = _SAVE_ANY
        sargs: tuple[int, ...] = ()
        if self.save_all:
            pass
        elif not codes:
            plan = _SAVE_NONE
        elif codes == ((1, 0),):
            plan = _SAVE_OUT
        elif len(codes) == 1 and codes[0][0] == 0 and (cond is None or cond[0] is None):
            plan, sargs = _SAVE_IN, (codes[0][1],)
        elif codes == ((0, 0), (0, 1)):
            users = cond or (None, None)
            if all(u is None or len(u) == 1 for u in users):
                plan = _SAVE_XY
                sargs = tuple(-1 if u is None else u[0] for u in users)
        self.save_plan: int = plan
        self.save_args: tuple[int, ...] = sargs

    @property
    def save_all(self) -> bool:
        """Whether the node saves every input (from ``save_from`` on): variadic ops."""
        return self._save_all

    @save_all.setter
    def save_all(self, flag: bool) -> None:
        self._save_all = bool(flag)
        self.save_tensors = self._save_all or any(kind != 2 for kind, _ in self.save_codes)
        self._plan()

    def variant(self, key: str) -> Op:
        """The same op under its own key, so that its nodes can be named apart (the core's
        variants: ``sum`` over all axes is ``sum_all``; a front-end names them)."""
        op = self.renamed(None)
        op.key = key
        op.grad_name = _NODE_NAMES.get(key) or _default_grad_name(key)
        op.node_cls = node_type(op.grad_name)
        return op

    def renamed(self, grad_name: str | None) -> Op:
        """The same op under another node name (e.g. ``TBackward0`` for ``t()``)."""
        op = self.__class__(self.name, self.fwd, self.saves, grad_name, self.needs)
        op.vjp = self.vjp
        op.jvp = self.jvp
        op.batch = self.batch
        op.save_if = self.save_if
        op._plan()
        self.__dict__.setdefault("_renamed", []).append(op)  # rules attached later reach it
        return op

    def defvjp(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Attach the VJP: ``fn(g, *saved, **attrs) -> tuple of input gradients``."""
        self.vjp = fn
        return fn

    def defjvp(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Attach the forward-mode rule (the tangent of the output).

        ``fn(*tangents, *inputs, out=out, **attrs) -> output tangent or None``:
        one tangent per positional input (``None`` where that input carries
        none; at least one is not ``None``), then the inputs as the forward got
        them, then the forward result ``out`` and the static attributes as
        keywords.  Written in tapegrad ops, so it is differentiable and
        composes with every transform; ``None`` means a zero tangent.
        """
        self.jvp = fn
        for op in self.__dict__.get("_renamed", ()):
            op.defjvp(fn)
        return fn

    def defbatch(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Attach the batching rule (how the op acts on a batch, for ``vmap``).

        ``fn(batched, *values, **attrs) -> result``: ``batched`` is one bool per
        positional input; a batched value carries the batch as its axis 0 (the
        interpreter moves it there), the others are as the op would get them.
        The result carries the batch as its axis 0.  Written in tapegrad ops.
        ``tapegrad.ops.batching`` has the common rules (``elementwise``, ...);
        an op without a rule runs once per batch element and is stacked.
        """
        self.batch = fn
        for op in self.__dict__.get("_renamed", ()):
            op.defbatch(fn)
        return fn

    def __call__(self, *args: Any, **attrs: Any) -> Any:
        """Run the op forward and, when anything is tracked, record one node.

        This is the hot path of every op: one pass over the arguments collects
        the arrays, the style and whether any input is tracked.  While a
        transform is active the call goes to :func:`dispatch.dispatch` first.
        """
        if _STATE.levels:
            return dispatch(self, args, attrs)
        return self._general(args, attrs)

    def _general(self, args: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        """The plain path (no interpreter): forward on arrays, then record if tracked."""
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
        return self._finish(args, arrays, attrs, out, rg, style)

    def _finish(self, args: tuple[Any, ...], arrays: list[Any], attrs: dict[str, Any],
                out: np.ndarray, rg: bool, style: int) -> Any:
        """The general end of a call: grad mode, inference mode, tapes, then recording."""
        state = _STATE
        if not state.grad_enabled or self.vjp is None:
            if state.inference:  # a front-end's marker for tensors made in inference mode
                return state.inference(make(out, None, False, style))
            return make(out, None, False, style)
        rec: tuple[Any, ...] = ()
        tapes = state.tapes
        if tapes:
            if len(tapes) == 1:
                tp = tapes[0]
                if tp._interested(args):
                    rec = tapes  # the one-tape tuple itself: nothing allocated per node
            else:
                rec = tuple([tp for tp in tapes if tp._interested(args)])
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


# node names by op key, installed by a front-end (tapegrad.torch names PyTorch's); every op
# made so far is renamed at once, and ops made later read the table
_NODE_NAMES: dict[str, str] = {}
_ALL_OPS: weakref.WeakSet[Op] = weakref.WeakSet()


def name_nodes(table: dict[str, str]) -> None:
    """Name the nodes of the ops with these keys (ops whose author named them keep it)."""
    _NODE_NAMES.update(table)
    for op in list(_ALL_OPS):
        if not op.named and op.key in table:
            op.grad_name = table[op.key]
            op.node_cls = node_type(op.grad_name)


def defop(
    name: str, saves: tuple[str, ...] = (), grad_name: str | None = None, needs: bool = False,
    save_for: dict[str, tuple[str, ...]] | None = None,
) -> Callable[[Callable[..., Any]], Op]:
    """Declare a primitive op.

    With ``needs=True`` the VJP also receives ``needs``: one bool per input
    saying whether that input's gradient is wanted, so it can skip work.
    ``save_for`` maps a saved input to the inputs whose gradients use it; it is
    then saved only when one of those is tracked (the VJP receives ``None``
    in its place otherwise, and must not use it: pair it with ``needs=True``).

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
        return _op_class(fwd)(name, fwd, saves, grad_name, needs, save_for)

    return deco


def _op_class(fwd: Callable[..., Any]) -> type[Op]:
    """``_Op1`` for a forward of one plain positional input (and any keyword-only
    attributes), ``_Op2`` for two and no attributes, else ``Op``."""
    params = list(inspect.signature(fwd).parameters.values())
    pos = [p for p in params if p.kind != p.KEYWORD_ONLY]
    if all(p.kind == p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in pos):
        if len(pos) == 1:
            return _Op1
        if len(pos) == 2 and len(params) == 2:
            return _Op2
    return Op


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
    nxt: list[Node | None] = []
    for a in args:
        if isinstance(a, Tensor):
            n = a._node
            if n is None and (a._rg or (rec and a._acc is not None)):
                n = a._acc or get_acc(a)
            nxt.append(n)
        else:
            nxt.append(None)
    return _result_node(op, tuple(nxt), rec, rg, attrs, out, style, args, arrays)


def _result_node(op: Op, nxt: tuple[Node | None, ...], rec: tuple[Any, ...], rg: bool,
                 attrs: dict[str, Any], out: np.ndarray, style: int, args: Any,
                 arrays: Any) -> Tensor:
    """The recorded result: a new node (edges ``nxt``) and the tensor it produced.

    ``arrays`` are the arrays of ``args`` the forward got, or ``None`` (then taken
    from ``args`` where a node saves an input's shape).
    """
    node = _new(op.node_cls)
    node.next = nxt
    node.shape = out.shape
    node.dtype = out.dtype
    node.op = op
    node.attrs = attrs
    node.tapes = rec
    node.rg = rg
    if rec:
        for tp in rec:
            tp._recorded(node)
    if ANOMALY[0]:
        node.trace = _user_stack()
    res = _new(CLASSES[style])
    res._data = out
    res._node = node
    res._rg = rg
    res._vc = vc = [0]
    plan = op.save_plan
    if plan == _SAVE_NONE:
        node.saved = ()
        node.versions = None
        node.out_vc = None
        return res
    # the output's version counter is kept only when the output itself is saved
    node.out_vc = vc if op.saves_out else None
    if _STATE.saved_hooks or plan == _SAVE_ANY:
        _save(op, node, args, arrays, out, nxt)
    elif plan == _SAVE_XY:  # x and y, each unless only an untracked input's gradient uses it
        a = args[0]
        b = args[1]
        ua, ub = op.save_args
        if ua >= 0 and nxt[ua] is None:
            a = None
        if ub >= 0 and nxt[ub] is None:
            b = None
        node.saved = (a, b)
        if isinstance(a, Tensor):
            node.versions = (a._vc[0], b._vc[0] if isinstance(b, Tensor) else 0)
        elif isinstance(b, Tensor):
            node.versions = (0, b._vc[0])
        else:
            node.versions = None
    elif plan == _SAVE_OUT:
        node.saved = (out,)
        node.versions = _ZERO1
    else:  # _SAVE_IN
        a = args[op.save_args[0]]
        node.saved = (a,)
        node.versions = (a._vc[0],) if isinstance(a, Tensor) else None
    return res


_ZERO1 = (0,)


def _save(op: Op, node: Node, args: Any, arrays: Any, out: np.ndarray, nxt: Any) -> None:
    """Store what the VJP declared it needs, with the saved tensors' versions."""
    codes = op.save_codes
    if op.save_all:  # every input from the op's ``save_from`` on (variadic ops)
        codes = tuple((0, i) for i in range(op.__dict__.get("save_from", 0), len(args)))
    saved: list[Any] = []
    versions: list[int] | None = None
    cond = op.save_if
    j = -1
    for kind, idx in codes:
        j += 1
        if kind == 0:
            if cond is not None:
                users = cond[j]
                if users is not None:
                    for u in users:
                        if nxt[u] is not None:
                            break
                    else:  # no input whose gradient uses it is tracked
                        saved.append(None)
                        if versions is not None:
                            versions.append(0)
                        continue
            a = args[idx]
            saved.append(a)
            if isinstance(a, Tensor):
                if versions is None:
                    versions = [0] * j
                versions.append(a._vc[0])
            elif versions is not None:
                versions.append(0)
        elif kind == 1:
            saved.append(out)
            if versions is None:
                versions = [0] * j
            versions.append(0)
        else:
            a = args[idx] if arrays is None else arrays[idx]
            saved.append(np.shape(a._data if isinstance(a, Tensor) else a))
            if versions is not None:
                versions.append(0)
    if _STATE.saved_hooks:  # torch.autograd.graph.saved_tensors_hooks
        pack, unpack = _STATE.saved_hooks[-1]
        for j in pack_order(codes):
            kind = codes[j][0]
            s = saved[j]
            if kind == 0 and isinstance(s, Tensor):
                saved[j] = Packed(pack(s), unpack)
            elif kind == 1:
                res = make(out, node, node.rg, 0)
                saved[j] = Packed(pack(res), unpack)
    node.saved = tuple(saved)
    node.versions = None if versions is None else tuple(versions)


def pack_order(codes: Any) -> Any:
    """The order PyTorch packs (and unpacks) a node's saved values in: two saved inputs
    go second first (``MulBackward0`` saves ``other`` before ``self``, ``MmBackward0``
    ``mat2`` before ``self``), others in order."""
    if len(codes) == 2 and codes[0][0] == 0 and codes[1][0] == 0:
        return (1, 0)
    return range(len(codes))


class Packed:
    """A saved tensor as a ``saved_tensors_hooks`` pack hook returned it (unpacked on use)."""

    __slots__ = ("value", "unpack")

    def __init__(self, value: Any, unpack: Callable[[Any], Any]) -> None:
        self.value = value
        self.unpack = unpack


_new = object.__new__


class _Op1(Op):
    """An op of one positional input (exp, tanh, relu, sum, reshape, ...).

    Same behaviour as :meth:`Op.__call__`, unrolled for the common cases (no
    tape or one tape recording, grad mode on or off): no argument packing, and
    a call that records nothing builds only the result tensor.
    """

    __slots__ = ()

    def __call__(self, x: Any, **attrs: Any) -> Any:
        state = _STATE
        if state.levels:
            return dispatch(self, (x,), attrs)
        if not isinstance(x, Tensor):
            return self._general((x,), attrs)
        xd = x._data
        out = self.fwd(xd, **attrs) if attrs else self.fwd(xd)
        if out.__class__ is not _ND:
            out = _asarray(out)
        rg = x._rg
        tapes = state.tapes
        rec: tuple[Any, ...] = ()
        if tapes:
            if len(tapes) > 1 or not state.grad_enabled:
                return self._finish((x,), [xd], attrs, out, rg, x._style)
            if tapes[0]._interested((x,)):
                rec = tapes
        if (rg or rec) and state.grad_enabled and self.vjp is not None \
                and out.dtype.kind in _FLOAT_KINDS:
            nx = x._node
            if nx is None and (rg or x._acc is not None):
                nx = x._acc or get_acc(x)
            return _result_node(self, (nx,), rec, rg, attrs or _EMPTY, out, x._style, (x,),
                                None)
        if state.inference:
            return self._finish((x,), [xd], attrs, out, rg, x._style)
        return make(out, None, False, x._style)


class _Op2(Op):
    """An op of two positional inputs and no attributes (add, multiply, ...): see ``_Op1``."""

    __slots__ = ()

    def __call__(self, x: Any, y: Any) -> Any:
        state = _STATE
        if state.levels:
            return dispatch(self, (x, y), _EMPTY)
        tx = isinstance(x, Tensor)
        ty = isinstance(y, Tensor)
        if tx:
            style = x._style
            xd = x._data
            rg = x._rg
            if ty:
                yd = y._data
                if y._rg:
                    rg = True
            else:
                yd = y
        elif ty:
            style = y._style
            xd = x
            yd = y._data
            rg = y._rg
        else:
            return self._general((x, y), _EMPTY)
        out = self.fwd(xd, yd)
        if out.__class__ is not _ND:
            out = _asarray(out)
        tapes = state.tapes
        rec: tuple[Any, ...] = ()
        if tapes:
            if len(tapes) > 1 or not state.grad_enabled:
                return self._finish((x, y), [xd, yd], _EMPTY, out, rg, style)
            if tapes[0]._interested((x, y)):
                rec = tapes
        if (rg or rec) and state.grad_enabled and self.vjp is not None \
                and out.dtype.kind in _FLOAT_KINDS:
            nx = ny = None
            if tx:
                nx = x._node
                if nx is None and (x._rg or (rec and x._acc is not None)):
                    nx = x._acc or get_acc(x)
            if ty:
                ny = y._node
                if ny is None and (y._rg or (rec and y._acc is not None)):
                    ny = y._acc or get_acc(y)
            return _result_node(self, (nx, ny), rec, rg, _EMPTY, out, style, (x, y), None)
        if state.inference:
            return self._finish((x, y), [xd, yd], _EMPTY, out, rg, style)
        return make(out, None, False, style)
