"""The front doors of reverse mode: ``grad`` and ``backward`` (and the final-callback
queue of a ``backward`` call), shared by both front-ends.

They check their arguments, turn the outputs into the engine's roots and seeds
(an implied gradient only for a one-element real output), call
:func:`tapegrad.engine.run_backward` (the algorithm, which writes nothing) and
then, for ``backward``, write every ``.grad`` in one short phase after the
whole pass succeeded: a failing pass, or a ``.grad`` that cannot be added to,
changes no ``.grad``.  The errors are worded by the style of the tensor they
are about (``_message``).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import engine
from .._core import errors, mode
from .._core.dispatch import control
from .._core.node import AccumulateGrad, Node
from .._core.registry import edge_of
from .._core.tensor import Tensor, make
from .._core.tensor import restyle as _restyle
from ..engine import _message

_STATE = mode.STATE


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
            _message(t._style, "no_grad_fn", i),
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
                        _message(t._style, "implicit_scalar"),
                        f"output {i} has shape {list(t._data.shape)}; pass gradient= (e.g. "
                        "torch.ones_like(out)) or reduce it with .sum() first",
                    )
                ))
            if t._data.dtype.kind == "c":
                raise errors.hinted(RuntimeError(
                    errors.with_hint(
                        _message(t._style, "implicit_complex", t._data.dtype.name),
                        f"output {i} is complex ({t._data.dtype.name}); make the loss real "
                        "first, e.g. .real, .abs() or (z * z.conj()).real",
                    )
                ))
            seeds.append(make(np.ones(t._data.shape, t._data.dtype), None, False, t._style))
            continue
        if not isinstance(go, Tensor):
            go = make(np.asarray(go, dtype=t._data.dtype), None, False, t._style)
        if go._data.shape != t._data.shape:
            raise errors.hinted(RuntimeError(
                errors.with_hint(
                    _message(t._style, "shape_mismatch", i, go._data.shape, t._data.shape),
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
                    _message(t._style, "input_no_grad"),
                    "create the input with requires_grad=True",
                )
            ))
        targets.append(edge_of(t))
    roots = [_root_of(t, i) for i, t in enumerate(outs)]
    seeds = _seeds(outs, gos, create_graph)
    res, _ = engine.run_backward(roots, seeds, targets, retain_graph, create_graph)
    result: list[Tensor | None] = []
    for t, key in zip(ins, targets):
        g = res.get(key)
        if g is None:
            if not allow_unused:
                raise errors.hinted(RuntimeError(
                    errors.with_hint(
                        _message(t._style, "unused"),
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
    if _STATE.levels:  # a trace records what this does to .grad
        h = control("accumulate_grad")
        if h is not None:
            h(t, g, create_graph)
            return
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
                _message(t._style, "expanded_grad"), "the .grad is an expanded view: set "
                "x.grad = x.grad.clone() (no .grad was changed)")))
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
            style = outs[0]._style if outs and isinstance(outs[0], Tensor) else 0
            raise errors.hinted(RuntimeError(errors.with_hint(
                _message(style, "empty_inputs"), "pass the leaves to accumulate into, or "
                "inputs=None for all of them")))
        targets = [edge_of(t) for t in ins]
    st = _STATE
    outer = st.final_callbacks
    queue: list[Callable[[], Any]] = []
    st.final_callbacks = queue
    try:
        res, retained = engine.run_backward(roots, seeds, targets, retain_graph, create_graph)
        with _WRITE_LOCK:  # threads backpropagating into shared leaves: no lost accumulation
            _write_grads(res, retained, ins, targets, create_graph)
        while queue:  # queue_callback: after every .grad of this pass was written
            queue.pop(0)()
    finally:
        st.final_callbacks = outer


def queue_callback(fn: Callable[[], Any]) -> None:
    """Run ``fn()`` once the current ``backward`` has written every ``.grad`` (PyTorch's
    ``Variable._execution_engine.queue_callback``; DDP finishes its all-reduces there)."""
    queue = _STATE.final_callbacks
    if queue is None:
        raise errors.hinted(RuntimeError(errors.with_hint(
            "Final callbacks can only be installed during backward pass.",
            "call queue_callback from a hook that runs during backward()")))
    queue.append(fn)


def in_backward() -> bool:
    """Whether a ``backward`` call is running on this thread (callbacks can be queued)."""
    return _STATE.final_callbacks is not None


def backward_id() -> int | None:
    """An id of the ``backward`` call running on this thread (None outside one): tells a
    hook whether it is still in the pass where it queued its callback."""
    q = _STATE.final_callbacks
    return None if q is None else id(q)


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
                post = key.__dict__.get("post_acc_hooks")
                if post:  # PyTorch's register_post_accumulate_grad_hook
                    for h in tuple(post):
                        h(lf)
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
