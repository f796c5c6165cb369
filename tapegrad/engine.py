"""The one reverse-mode engine shared by both front-ends.

``run_backward`` walks the graph from the roots with an explicit stack (no
recursion: a million-op chain is fine) counting, for each node, how many
reachable nodes feed it a gradient; it then runs a node's VJP once all of
them have run (PyTorch's dependency counting), with grad mode set to
``create_graph`` (which is all higher-order differentiation needs), reduces
each gradient to the shape and dtype its input node recorded (``sum_to``,
``cast``), accumulates out of place and releases each node's saved values
right after use unless the graph is retained.

It is transactional: it only *returns* gradients.  ``backward`` writes them
into ``.grad`` after the whole pass succeeded, so a failing pass changes no
``.grad``.
"""

from __future__ import annotations

import re
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._core import errors, mode
from ._core.node import FREED, AccumulateGrad, Node
from ._core.registry import ANOMALY, Packed, edge_of
from ._core.tensor import Tensor, make
from ._core.tensor import restyle as _restyle

_STATE = mode.STATE


def _fmt_shape(shape: tuple[int, ...]) -> str:
    return f"torch.Size({list(shape)})"


_TORCH_TYPES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
                "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _version_error(node: Node, i: int, t: Tensor, expected: int, version: int,
                   producer: Node | None = None) -> RuntimeError:
    """PyTorch's message: the tensor, the node that produced it (if any), both versions."""
    arr = t._data if isinstance(t, Tensor) else np.asarray(t)
    kind = _TORCH_TYPES.get(arr.dtype.name, arr.dtype.name)
    made_by = ""
    if producer is not None:
        made_by = ", which is output 0 of " + re.sub(r"Backward\d*$", "", producer.name())
    return errors.hinted(RuntimeError(
        errors.with_hint(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [torch.{kind}Tensor {list(arr.shape)}]{made_by}, is at version "
            f"{version}; expected version {expected} instead. Hint: enable anomaly detection to "
            "find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False).",
            f"an in-place op (add_, mul_, x[i] = ..., -=) changed value {i} saved by "
            f"{node.name()} for backward; use the out-of-place form (x = x + y) or .clone() "
            "before modifying",
        )
    ))


def _unpack(node: Node) -> list[Any]:
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
    for i, ((kind, _), s) in enumerate(zip(codes, saved)):
        if s.__class__ is Packed:  # saved_tensors_hooks: the unpack hook gives it back
            out.append(s.unpack(s.value))
            continue
        if kind == 0:
            if isinstance(s, Tensor) and s._vc[0] != versions[i]:
                raise _version_error(node, i, s, versions[i], s._vc[0], s._node)
            out.append(s)
        elif kind == 1:
            vc = node.out_vc
            if vc is not None and vc[0] != versions[i]:
                raise _version_error(node, i, make(s), versions[i], vc[0], node)
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
    parents: dict[Node, list[Node]] | None, blocked: set[Node],
) -> dict[Node, int]:
    """Nodes reachable from ``roots``, each with how many reachable nodes feed it a gradient.

    A node that ``node_filter`` rejects is reached but not followed (and put in
    ``blocked``).  With ``parents``, also fills the reversed edges (to find which nodes
    lead to the targets).
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
    while stack:
        n = pop()
        if node_filter is not None and n.__class__ is not is_acc and not node_filter(n):
            blocked.add(n)
            continue
        for c in n.next:
            if c is not None:
                k = deps.get(c)
                if k is None:
                    deps[c] = 1
                    push(c)
                else:
                    deps[c] = k + 1
                if parents is not None:
                    ps = parents.get(c)
                    if ps is None:
                        parents[c] = [n]
                    else:
                        ps.append(n)
    return deps


def _leading_to(targets: set[Node], deps: dict[Node, int],
                parents: dict[Node, list[Node]]) -> set[Node]:
    """The reachable nodes from which some target can be reached (targets included)."""
    needed = {t for t in targets if t in deps}
    stack = list(needed)
    while stack:
        for p in parents.get(stack.pop(), ()):
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


def run_backward(
    roots: Sequence[Node],
    seeds: Sequence[Tensor],
    targets: Sequence[Node] | None,
    retain_graph: bool,
    create_graph: bool,
    node_filter: Callable[[Node], bool] | None = None,
) -> tuple[dict[Node, Tensor], list[tuple[Any, Tensor]]]:
    """Propagate ``seeds`` from ``roots``; return gradients at ``targets``.

    With ``targets=None`` every reached leaf accumulator is a target.  Returns
    ``(grads, retained)``: gradients keyed by target node, and the
    ``(weakref-to-tensor, grad)`` pairs of non-leaf tensors that asked to
    retain their gradient.  Nothing is written anywhere.

    A node runs once every node that feeds it has run (dependency counting, as
    PyTorch's engine does), so its gradient is complete; ready nodes run last
    in, first out.
    """
    add, cast, sum_to = _OPS_FNS or _ops_fns()
    target_set = set(targets) if targets is not None else None
    parents: dict[Node, list[Node]] | None = {} if target_set is not None else None
    blocked: set[Node] = set()
    deps = _count_deps(roots, node_filter, parents, blocked)
    needed: set[Node] | None = None
    if target_set is not None:
        assert parents is not None
        needed = _leading_to(target_set, deps, parents)
        del parents

    grads: dict[Node, Tensor] = {}
    for r, s in zip(roots, seeds):
        prev = grads.get(r)
        grads[r] = s if prev is None else prev + s
    results: dict[Node, Tensor] = {}
    retained: list[tuple[Any, Tensor]] = []
    ready: list[Node] = []
    for r in roots:
        if deps[r] == 0 and r not in ready and (needed is None or r in needed):
            ready.append(r)

    state = _STATE
    prev_mode = state.grad_enabled
    state.grad_enabled = create_graph
    errstate = np.errstate(all="ignore")
    errstate.__enter__()
    try:
        is_acc = AccumulateGrad
        anomaly = ANOMALY[0]
        pop = ready.pop
        push = ready.append
        while ready:
            n = pop()
            g = grads.pop(n, None)
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
                continue
            op = n.op
            saved = n.saved
            if not saved:
                args: Any = ()
            elif n.versions is None and saved is not FREED:
                args = saved  # constants and shapes only: nothing to check or wrap
            else:
                args = _unpack(n)
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
                _check_anomaly(n, gin)
            del g
            k = 0
            for e in nxt:
                if e is not None:
                    gi = gin[k]
                    if gi is not None and (needed is None or e in needed):
                        if gi.__class__ is not Tensor:
                            gi = gi if isinstance(gi, Tensor) else make(np.asarray(gi))
                        d = gi._data
                        shape = e.shape
                        if d.shape != shape and shape is not None:
                            gi = sum_to(gi, shape=shape)
                        dtype = e.dtype
                        if d.dtype is not dtype and d.dtype != dtype and dtype is not None:
                            if d.dtype.kind == "c" and dtype.kind != "c":
                                from .ops.complex import real  # a real input keeps the real part

                                gi = real(gi)
                            gi = cast(gi, dtype=dtype)
                        prev = grads.get(e)
                        grads[e] = gi if prev is None else add(prev, gi)
                    c = deps[e] - 1
                    deps[e] = c
                    if c == 0 and (needed is None or e in needed):
                        push(e)
                k += 1
            if saved and not retain_graph and op.save_tensors:
                n.saved = FREED
    finally:
        errstate.__exit__(None, None, None)
        state.grad_enabled = prev_mode
    return results, retained


def _check_anomaly(n: Node, gin: Sequence[Any]) -> None:
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
                    f"Error detected in {n.name()}. Traceback of forward call that caused the "
                    "error:\n" + "".join(traceback.format_list(list(n.trace))),
                    UserWarning, stacklevel=2,
                )
            raise errors.hinted(RuntimeError(
                errors.with_hint(
                    f"Function '{n.name()}' returned {kind} values in its {k}th output.",
                    f"the backward of {n.op.name} produced {kind}{where}" if where else
                    f"the backward of {n.op.name} produced {kind}; check its inputs",
                )
            ))


# ---------------------------------------------------------------------------- front doors
def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, (Tensor, np.ndarray, int, float, complex, np.number)):
        return [x]  # one tensor (or one array-like grad_output), not a sequence of them
    return list(x)


def _root_of(t: Tensor, i: int) -> Node:
    if t._node is not None:
        return t._node
    if t._rg:
        return edge_of(t)
    raise errors.hinted(RuntimeError(
        errors.with_hint(
            errors.NO_GRAD_FN.format(i=i),
            "nothing recorded this tensor: set requires_grad=True on an input before the "
            "computation (PyTorch style) or compute it inside a GradientTape",
        )
    ))


def _seeds(
    outputs: list[Tensor], grad_outputs: list[Any] | None, create_graph: bool
) -> list[Tensor]:
    seeds: list[Tensor] = []
    for i, t in enumerate(outputs):
        go = grad_outputs[i] if grad_outputs is not None and i < len(grad_outputs) else None
        if go is None:
            if t._data.size != 1:
                raise errors.hinted(RuntimeError(
                    errors.with_hint(
                        "grad can be implicitly created only for scalar outputs",
                        f"output {i} has shape {list(t._data.shape)}; pass gradient= (e.g. "
                        "torch.ones_like(out)) or reduce it with .sum() first",
                    )
                ))
            if t._data.dtype.kind == "c":
                raise errors.hinted(RuntimeError(
                    errors.with_hint(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"torch.{t._data.dtype.name}",
                        f"output {i} is complex ({t._data.dtype.name}); make the loss real "
                        "first, e.g. .real, .abs() or (z * z.conj()).real",
                    )
                ))
            seeds.append(make(np.ones(t._data.shape, t._data.dtype)))
            continue
        if not isinstance(go, Tensor):
            go = make(np.asarray(go, dtype=t._data.dtype), None, False, t._style)
        if go._data.shape != t._data.shape:
            raise errors.hinted(RuntimeError(
                errors.with_hint(
                    f"Mismatch in shape: grad_output[{i}] has a shape of "
                    f"{_fmt_shape(go._data.shape)} and output[{i}] has a shape of "
                    f"{_fmt_shape(t._data.shape)}.",
                    "each grad_output must have exactly its output's shape",
                )
            ))
        if not create_graph and go._node is not None:
            go = go.detach()
        seeds.append(go)
    return seeds


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (``.grad`` untouched).

    Examples
    --------
    >>> import tapegrad as tg
    >>> x = tg.tensor(3.0, requires_grad=True)
    >>> (dx,) = tg.grad(x * x, x)
    >>> float(dx)
    6.0
    """
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    gos = None if grad_outputs is None else _as_list(grad_outputs)
    if gos is not None and len(gos) != len(outs):
        raise errors.hinted(RuntimeError(
            errors.with_hint(
                f"grad requires one grad_output per output: got {len(gos)} grad_outputs and "
                f"{len(outs)} outputs",
                "pass a list of grad_outputs as long as outputs",
            )
        ))
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    targets: list[Node] = []
    for t in ins:
        if not isinstance(t, Tensor):
            raise errors.hinted(TypeError(
                errors.with_hint(
                    f"inputs must be tensors, got {type(t).__name__}",
                    "pass the tensors you want gradients for",
                )
            ))
        if t._node is None and not t._rg:
            raise errors.hinted(RuntimeError(
                errors.with_hint(
                    "One of the differentiated Tensors does not require grad",
                    "create the input with requires_grad=True",
                )
            ))
        targets.append(edge_of(t))
    roots = [_root_of(t, i) for i, t in enumerate(outs)]
    seeds = _seeds(outs, gos, create_graph)
    res, _ = run_backward(roots, seeds, targets, retain_graph, create_graph)
    result: list[Tensor | None] = []
    for t, key in zip(ins, targets):
        g = res.get(key)
        if g is None:
            if not allow_unused:
                raise errors.hinted(RuntimeError(
                    errors.with_hint(
                        "One of the differentiated Tensors appears to not have been used in "
                        "the graph. Set allow_unused=True if this is the desired behavior.",
                        "that input does not reach any output; pass allow_unused=True to get None",
                    )
                ))
            if materialize_grads:
                g = make(np.zeros_like(t._data), None, False, t._style)
        elif not create_graph and g._node is not None:
            g = g.detach()
        if g is not None and g._style != t._style:
            g = _restyle(g, t._style)
        result.append(g)
    return tuple(result)


def _accumulate(t: Tensor, g: Tensor, create_graph: bool) -> None:
    if not create_graph and g._node is not None:
        g = g.detach()
    cur = t.grad
    if cur is None:
        if create_graph:
            t.grad = _restyle(g, t._style)
        else:
            arr = g._data
            # Take the engine's fresh array as it is when nothing else can see it (as
            # PyTorch's AccumulateGrad steals a gradient whose refcount is 1); copy otherwise,
            # since later backward passes add into .grad in place.  References to ``g`` here:
            # the caller's, this frame's and getrefcount's; to ``arr``: g's, ours, getrefcount's.
            if not (arr.dtype == t._data.dtype and arr.base is None and arr.flags.writeable
                    and sys.getrefcount(g) <= 3 and sys.getrefcount(arr) <= 3):
                arr = np.array(arr, dtype=t._data.dtype, copy=True)
            t.grad = make(arr, None, False, t._style)
    elif create_graph or cur._node is not None:
        t.grad = _restyle(cur + g, t._style)
    else:
        cur._data += g._data
        cur._vc[0] += 1


def _check_grad_targets(res: dict[Any, Tensor], retained: list[tuple[Any, Tensor]],
                        ins: list[Tensor] | None, targets: list[Any] | None) -> None:
    """Every ``.grad`` that will be added to in place must be a plain writable array, else
    PyTorch's error is raised before any ``.grad`` is written."""
    leaves: list[Tensor] = []
    if targets is None:
        for key in res:
            lf = key.variable_ref() if isinstance(key, AccumulateGrad) else None
            if lf is not None:
                leaves.append(lf)
    else:
        leaves = [t for t, key in zip(ins or [], targets) if key in res]
    leaves += [t for t in (ref() for ref, _ in retained) if t is not None]
    for t in leaves:
        cur = t.grad
        if cur is None or cur._node is not None:
            continue
        arr = cur._data
        if any(s == 0 and n > 1 for s, n in zip(arr.strides, arr.shape)):
            raise errors.hinted(RuntimeError(errors.with_hint(
                "unsupported operation: more than one element of the written-to tensor refers "
                "to a single memory location. Please clone() the tensor before performing the "
                "operation.", "the .grad is an expanded view: set x.grad = x.grad.clone() "
                "(no .grad was changed)")))
        if not arr.flags.writeable:
            cur._data = arr.copy()  # read-only memory (a file, a NumPy view): own a copy


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of graph leaves.

    Writes happen only after the whole backward pass succeeded.
    """
    outs = _as_list(tensors)
    gts = None if grad_tensors is None else _as_list(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_root_of(t, i) for i, t in enumerate(outs)]
    seeds = _seeds(outs, gts, create_graph)
    targets = None
    ins: list[Tensor] = []
    if inputs is not None:
        ins = _as_list(inputs)
        if not ins:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        targets = [edge_of(t) for t in ins]
    res, retained = run_backward(roots, seeds, targets, retain_graph, create_graph)
    with _WRITE_LOCK:  # threads backpropagating into shared leaves: no lost accumulation
        _write_grads(res, retained, ins, targets, create_graph)


# One lock for every .grad write (PyTorch locks each AccumulateGrad): the passes themselves
# run in parallel, only the short write phase is serialised.
_WRITE_LOCK = threading.Lock()


def _write_grads(res: dict[Any, Tensor], retained: list[tuple[Any, Tensor]], ins: list[Tensor],
                 targets: list[Any] | None, create_graph: bool) -> None:
    if not create_graph:
        _check_grad_targets(res, retained, ins if targets is not None else None, targets)
    # write phase: nothing above has touched any .grad
    if targets is None:
        while res:
            key, g = res.popitem()
            lf = key.variable_ref() if isinstance(key, AccumulateGrad) else None
            if lf is not None:
                _accumulate(lf, g, create_graph)
            del g
    else:
        for t, key in zip(ins, targets):
            gk = res.get(key)
            if gk is not None:
                _accumulate(t, gk, create_graph)
    for ref, g in retained:
        t = ref()
        if t is not None and (targets is None or any(t is x for x in ins)):
            _accumulate(t, g, create_graph)
