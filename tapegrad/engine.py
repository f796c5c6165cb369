"""The one reverse-mode engine shared by both front-ends: the algorithm only.

``run_backward`` walks the graph from the roots with an explicit stack (no
recursion: a million-op chain is fine) counting, for each node, how many
reachable nodes feed it a gradient; it then runs a node's VJP once all of
them have run (PyTorch's dependency counting), with grad mode set to
``create_graph`` (which is all higher-order differentiation needs), reduces
each gradient to the shape and dtype its input node recorded (``sum_to``,
``cast``), accumulates out of place and releases each node's saved values
right after use unless the graph is retained (a second pass then raises the
"second time" error).

It is transactional: it only *returns* gradients and writes nothing, so a
failing pass changes nothing.  The front doors that check their arguments,
seed the pass and write ``.grad`` after it succeeded (``grad``, ``backward``)
are in :mod:`tapegrad.autodiff.entry`; the frameworks' wording of the errors
raised here is each front-end's (``Tensor._messages``, e.g.
``tapegrad/torch/_messages.py``).
"""

from __future__ import annotations

import re
import traceback
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._core import errors, mode
from ._core.node import FREED, AccumulateGrad, Node
from ._core.registry import ANOMALY, Packed, pack_order
from ._core.tensor import CLASSES, Tensor, make

_STATE = mode.STATE


# ---------------------------------------------------------------------------- messages
# The engine's checks word their errors in the core's terms; a front-end's tensor class
# gives its framework's wording instead (``Tensor._messages``: key -> function of the
# same fields; tapegrad.torch has PyTorch's texts), chosen by the style of the tensor the
# error is about.  The hints (tapegrad's own line) stay here.
def _core_version(arr: np.ndarray, made_by: str | None, version: int, expected: int) -> str:
    by = "" if made_by is None else f", output 0 of {made_by}"
    return (f"a value saved for backward was modified in place: [{arr.dtype.name} array of "
            f"shape {list(arr.shape)}]{by}, is at version {version}; expected version "
            f"{expected}")


_CORE_MESSAGES: dict[str, Callable[..., str]] = {
    "version": _core_version,
    "no_grad_fn": lambda i: f"output {i} was not recorded: it does not require grad and has "
                            "no grad_fn",
    "implicit_scalar": lambda: "a gradient can be implied only for a one-element output",
    "implicit_complex": lambda dtype: f"a gradient can be implied only for a real output, not "
                                      f"{dtype}",
    "shape_mismatch": lambda i, grad_shape, out_shape: (
        f"grad_output[{i}] has shape {list(grad_shape)} but output[{i}] has shape "
        f"{list(out_shape)}"),
    "input_no_grad": lambda: "an input does not require grad (it is not differentiable)",
    "unused": lambda: "an input was not used in the graph of the outputs; pass "
                      "allow_unused=True to get None for it",
    "empty_inputs": lambda: "inputs must not be empty",
    "anomaly": lambda name, kind, k: f"the backward of {name} returned {kind} values in its "
                                     f"output {k}",
    "anomaly_trace": lambda name, trace: f"Error detected in the backward of {name}; the "
                                         f"forward call was:\n{trace}",
    "expanded_grad": lambda: "cannot accumulate into a .grad whose elements share memory "
                             "(an expanded view); clone it first",
}


def _message(style: int, key: str, *args: Any) -> str:
    fn = CLASSES[style]._messages.get(key) or _CORE_MESSAGES[key]
    return fn(*args)


def _version_error(node: Node, i: int, t: Tensor, expected: int, version: int,
                   producer: Node | None, style: int) -> RuntimeError:
    """The tensor, the node that produced it (if any), both versions."""
    arr = t._data if isinstance(t, Tensor) else np.asarray(t)
    made_by = None if producer is None else re.sub(r"Backward\d*$", "", producer.name())
    return errors.hinted(RuntimeError(
        errors.with_hint(
            _message(style, "version", arr, made_by, version, expected),
            f"an in-place op (add_, mul_, x[i] = ..., -=) changed value {i} saved by "
            f"{node.name()} for backward; use the out-of-place form (x = x + y) or .clone() "
            "before modifying",
        )
    ))


def _unpack(node: Node, style: int = 0) -> list[Any]:
    saved = node.saved
    if saved is FREED:
        raise errors.hinted(RuntimeError(
            errors.with_hint(
                errors.SECOND_BACKWARD,
                f"{node.name()} already released its saved values; pass retain_graph=True "
                "(PyTorch style) or persistent=True (GradientTape) to the first call",
            )
        ))
    if not saved:
        return []
    out: list[Any] = []
    versions = node.versions or ()
    codes = node.op.save_codes if not node.op.save_all else ((0, 0),) * len(saved)
    unpacked: dict[int, Any] | None = None
    if saved[0].__class__ is Packed or saved[-1].__class__ is Packed:
        unpacked = {}
        # saved_tensors_hooks: the unpack hooks give them back, in PyTorch's order
        for i in pack_order(codes):
            s = saved[i]
            if s.__class__ is Packed:
                unpacked[i] = s.unpack(s.value)
    for i, ((kind, _), s) in enumerate(zip(codes, saved)):
        if s.__class__ is Packed:
            out.append(unpacked[i] if unpacked is not None and i in unpacked
                       else s.unpack(s.value))
            continue
        if kind == 0:
            if isinstance(s, Tensor) and s._vc[0] != versions[i]:
                raise _version_error(node, i, s, versions[i], s._vc[0], s._node, style)
            out.append(s)
        elif kind == 1:
            vc = node.out_vc
            if vc is not None and vc[0] != versions[i]:
                raise _version_error(node, i, make(s), versions[i], vc[0], node, style)
            if isinstance(s, Tensor):  # a tracer's result saves itself (see autodiff)
                out.append(s)
                continue
            t = make(s, node, node.rg, 0)
            t._vc = vc if vc is not None else [0]
            out.append(t)
        else:
            out.append(s)
    return out


def _count_deps(
    roots: Sequence[Node], node_filter: Callable[[Node], bool] | None,
    parents: dict[Node, Any] | None, blocked: set[Node], only_tape: Any = None,
) -> dict[Node, int]:
    """Nodes reachable from ``roots``, each with how many reachable nodes feed it a gradient
    (see :func:`_walk`)."""
    return _walk(roots, node_filter, parents, blocked, only_tape)[0]


def _walk(
    roots: Sequence[Node], node_filter: Callable[[Node], bool] | None,
    parents: dict[Node, Any] | None, blocked: set[Node], only_tape: Any = None,
    targets: set[Node] | None = None,
) -> tuple[dict[Node, int], bool]:
    """Nodes reachable from ``roots``, each with how many reachable nodes feed it a gradient.

    A node that ``node_filter`` rejects, or (with ``only_tape``) that ``only_tape``
    did not record, is reached but not followed (and put in ``blocked``).  With
    ``parents``, also fills the reversed edges (to find which nodes lead to the
    targets): a node's one parent, or the list of them when there are several.

    Also returns whether some reached node may lead to no target: with
    ``targets``, False when every place the walk ends (a leaf, a blocked node, a
    node without inputs) is a target, since then every reached node leads to one;
    True as soon as one such place is not, and the walk stops there (``deps`` is
    then incomplete: the caller walks again, with ``parents``).
    """
    deps: dict[Node, int] = {}
    stack: list[Node] = []
    for r in roots:
        if r not in deps:
            deps[r] = 0
            stack.append(r)
    is_acc = AccumulateGrad
    pop = stack.pop
    push = stack.append
    get = deps.get
    while stack:
        n = pop()
        if n.__class__ is is_acc:
            if targets is not None and n not in targets:
                return deps, True
            continue
        if (only_tape is not None and only_tape not in n.tapes) or (
                node_filter is not None and not node_filter(n)):
            blocked.add(n)
            if targets is not None and n not in targets:
                return deps, True
            continue
        end = True
        for c in n.next:
            if c is not None:
                end = False
                k = get(c)
                if k is None:
                    deps[c] = 1
                    push(c)
                else:
                    deps[c] = k + 1
                if parents is not None:
                    ps = parents.get(c)
                    if ps is None:
                        parents[c] = n
                    elif ps.__class__ is list:
                        ps.append(n)
                    else:
                        parents[c] = [ps, n]
        if end and targets is not None and n not in targets:
            return deps, True
    return deps, False


def _leading_to(targets: set[Node], deps: dict[Node, int],
                parents: dict[Node, Any]) -> set[Node]:
    """The reachable nodes from which some target can be reached (targets included)."""
    needed = {t for t in targets if t in deps}
    stack = list(needed)
    get = parents.get
    while stack:
        ps = get(stack.pop())
        if ps is None:
            continue
        if ps.__class__ is not list:
            if ps not in needed:
                needed.add(ps)
                stack.append(ps)
            continue
        for p in ps:
            if p not in needed:
                needed.add(p)
                stack.append(p)
    return needed


_OPS_FNS: tuple[Any, Any, Any] | None = None


def _ops_fns() -> tuple[Any, Any, Any]:
    """The ops the engine itself applies (imported on first use: ops imports the core)."""
    global _OPS_FNS
    from .ops import add, cast, sum_to

    _OPS_FNS = (add, cast, sum_to)
    return _OPS_FNS


def _run_post_hooks(n: Node, gin: Any, g: Tensor) -> Any:
    """A node's ``register_hook`` hooks: ``fn(grad_inputs, grad_outputs)``, each may return
    new grad_inputs (PyTorch's Node post-hooks)."""
    gins = tuple(gi if e is not None else None for gi, e in zip(gin, n.next))
    for h in tuple(n.post_hooks or ()):
        r = h(gins, (g,))
        if r is not None:
            gins = tuple(r)
    return gins


def run_backward(
    roots: Sequence[Node],
    seeds: Sequence[Tensor],
    targets: Sequence[Node] | None,
    retain_graph: bool,
    create_graph: bool,
    node_filter: Callable[[Node], bool] | None = None,
    only_tape: Any = None,
) -> tuple[dict[Node, Tensor], list[tuple[Any, Tensor]]]:
    """Propagate ``seeds`` from ``roots``; return gradients at ``targets``.

    With ``targets=None`` every reached leaf accumulator is a target.  Returns
    ``(grads, retained)``: gradients keyed by target node, and the
    ``(weakref-to-tensor, grad)`` pairs of non-leaf tensors that asked to
    retain their gradient.  Nothing is written anywhere.  ``node_filter`` (a
    predicate) and ``only_tape`` (a tape token: only the nodes that list it in
    ``node.tapes``) stop the pass at the nodes they reject.

    A node runs once every node that feeds it has run (dependency counting, as
    PyTorch's engine does), so its gradient is complete; ready nodes run last
    in, first out.  A node's gradient travels with it on the ready stack: only
    a node that several nodes feed (or a root that another root feeds) waits in
    the ``pending`` map, where arrivals are summed, in place into a buffer the
    engine made itself once there are two of them (no graph is recorded then).
    """
    add, cast, sum_to = _OPS_FNS or _ops_fns()
    style = seeds[0]._style if seeds else 0  # whose words an error here is in
    target_set = set(targets) if targets is not None else None
    blocked: set[Node] = set()
    deps, prunable = _walk(roots, node_filter, None, blocked, only_tape, target_set)
    # the nodes that lead to a target, where some may not (else all of them: no pruning)
    needed: set[Node] | None = None
    if target_set is not None and prunable:
        parents: dict[Node, Any] = {}
        blocked = set()
        deps = _count_deps(roots, node_filter, parents, blocked, only_tape)
        needed = _leading_to(target_set, deps, parents)
        del parents

    # gradients of nodes still waiting for some of their inputs' consumers
    pending: dict[Node, Tensor] = {}
    for r, s in zip(roots, seeds):
        prev = pending.get(r)
        pending[r] = s if prev is None else prev + s
    results: dict[Node, Tensor] = {}
    retained: list[tuple[Any, Tensor]] = []
    ready: list[Node] = []
    ready_g: list[Tensor | None] = []
    for r in roots:
        if deps[r] == 0 and r not in ready and (needed is None or r in needed):
            ready.append(r)
            ready_g.append(pending.pop(r))
    # pending buffers the engine allocated itself: safe to add into in place
    owned: set[Node] = set()

    state = _STATE
    prev_mode = state.grad_enabled
    state.grad_enabled = create_graph
    state.in_backward += 1
    # (not while a transform runs: a tracer's array is not its whole value)
    in_place = not create_graph and not state.levels
    errstate = np.errstate(all="ignore")
    errstate.__enter__()
    try:
        is_acc = AccumulateGrad
        anomaly = ANOMALY[0]
        pop = ready.pop
        push = ready.append
        pop_g = ready_g.pop
        push_g = ready_g.append
        while ready:
            n = pop()
            g = pop_g()
            if g is not None:
                if n.hooks:
                    for h in tuple(n.hooks):
                        r = h(g)
                        if r is not None:
                            g = r if isinstance(r, Tensor) else make(np.asarray(r))
                if n.retain is not None:
                    retained.append((n.retain, g))
            if n.__class__ is is_acc:
                if g is not None and (target_set is None or n in target_set):
                    results[n] = g
                continue
            if g is not None and target_set is not None and n in target_set:
                results[n] = g
            if blocked and n in blocked:
                continue
            nxt = n.next
            if g is None:  # nothing arrived: the inputs still wait for this node no more
                for e in nxt:
                    if e is not None:
                        k = deps[e] - 1
                        deps[e] = k
                        if k == 0 and (needed is None or e in needed):
                            push(e)
                            if pending:
                                push_g(pending.pop(e, None))
                                owned.discard(e)
                            else:
                                push_g(None)
                continue
            op = n.op
            saved = n.saved
            if not saved:
                args: Any = ()
            elif n.versions is None and saved is not FREED:
                args = saved  # constants and shapes only: nothing to check or wrap
            else:
                args = _unpack(n, style)
            if op.needs:
                if len(nxt) == 2:
                    a, b = nxt
                    if needed is None:
                        needs: tuple[bool, ...] = (a is not None, b is not None)
                    else:
                        needs = (a is not None and a in needed, b is not None and b in needed)
                elif needed is None:
                    needs = tuple([e is not None for e in nxt])
                else:
                    needs = tuple([e is not None and e in needed for e in nxt])
                attrs = n.attrs
                if attrs:
                    gin = op.vjp(g, *args, needs=needs, **attrs)
                else:
                    gin = op.vjp(g, *args, needs=needs)
            else:
                attrs = n.attrs
                gin = op.vjp(g, *args, **attrs) if attrs else op.vjp(g, *args)
            if anomaly:
                _check_anomaly(n, gin, style)
            if n.post_hooks:
                gin = _run_post_hooks(n, gin, g)
            del g
            k = 0
            for e in nxt:
                if e is not None:
                    gi = gin[k]
                    c = deps[e] - 1
                    deps[e] = c
                    if needed is not None and e not in needed:
                        gi = None
                    elif gi is not None:
                        if gi.__class__ is not Tensor and not isinstance(gi, Tensor):
                            gi = make(np.asarray(gi))
                        d = gi._data
                        shape = e.shape
                        if d.shape != shape and shape is not None:
                            gi = sum_to(gi, shape=shape)
                            d = gi._data
                        dtype = e.dtype
                        if d.dtype is not dtype and d.dtype != dtype and dtype is not None:
                            if d.dtype.kind == "c" and dtype.kind != "c":
                                from .ops.complex import real  # a real input keeps the real part

                                gi = real(gi)
                            gi = cast(gi, dtype=dtype)
                    if c == 0:  # e's last consumer: it is ready, with its complete gradient
                        if needed is None or e in needed:
                            if pending:
                                prev = pending.pop(e, None)
                                if prev is not None:
                                    owned.discard(e)
                                    gi = prev if gi is None else add(prev, gi)
                            push(e)
                            push_g(gi)
                    elif gi is not None:
                        prev = pending.get(e)
                        if prev is None:
                            pending[e] = gi
                        elif in_place and e in owned and _add_into(prev._data, gi._data):
                            pass
                        else:
                            pending[e] = add(prev, gi)
                            if in_place:
                                owned.add(e)
                k += 1
            if saved and not retain_graph and op.save_tensors:
                n.saved = FREED
    finally:
        errstate.__exit__(None, None, None)
        state.grad_enabled = prev_mode
        state.in_backward -= 1
    return results, retained


def _add_into(buf: np.ndarray, d: np.ndarray) -> bool:
    """``buf += d`` for an engine-owned gradient buffer of the same shape and dtype."""
    if buf.ndim and buf.shape == d.shape and buf.dtype == d.dtype and buf.flags.writeable:
        np.add(buf, d, out=buf)
        return True
    return False


def _check_anomaly(n: Node, gin: Sequence[Any], style: int) -> None:
    for k, gi in enumerate(gin):
        if gi is None:
            continue
        arr = gi._data if isinstance(gi, Tensor) else np.asarray(gi)
        if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
            kind = "nan" if np.any(np.isnan(arr)) else "inf"
            where = ""
            if n.trace:
                user = [f for f in n.trace if "tapegrad" not in f.filename.replace("\\", "/")
                        .split("/site-packages/")[-1].split("/")[:-1]]
                frame = (user or list(n.trace))[-1]
                # PyTorch's message is the one line; where the forward op ran goes in the
                # hint (and the full forward traceback in the warning, as PyTorch's)
                where = (f": the forward op was called at {frame.filename}:{frame.lineno}: "
                         f"{frame.line}")
                warnings.warn(
                    _message(style, "anomaly_trace", n.name(),
                             "".join(traceback.format_list(list(n.trace)))),
                    UserWarning, stacklevel=2,
                )
            raise errors.hinted(RuntimeError(
                errors.with_hint(
                    _message(style, "anomaly", n.name(), kind, k),
                    f"the backward of {n.op.name} produced {kind}{where}" if where else
                    f"the backward of {n.op.name} produced {kind}; check its inputs",
                )
            ))
