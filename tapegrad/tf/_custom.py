"""``tf.custom_gradient`` as an adapter over the core op machinery.

Each decorated function gets its own :class:`~tapegrad.Op` (made when it is
decorated).  A call runs the user's function normally (its ops are recorded
by the active tapes, as in TensorFlow, so that a ``grad_fn`` closing over
intermediate tensors stays differentiable: second order works), watching
which trainable variables it reads.  The outputs are then produced once more
by the custom op, whose inputs are the function's tensor arguments plus those
variables and whose VJP calls the user's ``grad_fn``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import ops
from .._core import mode
from .._core.errors import hinted, with_hint
from .._core.registry import Op
from .._core.tensor import TF, Tensor, make
from . import _nest
from ._tensor import VariableBase, convert, read

__all__ = ["custom_gradient"]

_STATE = mode.STATE


class _VariableWatcher:
    """A pseudo-tape on the recording stack that records nothing but the variables read."""

    __slots__ = ("variables", "ids")

    def __init__(self) -> None:
        self.variables: list[Any] = []
        self.ids: set[int] = set()

    def _interested(self, args: Sequence[Any]) -> bool:
        for a in args:
            if isinstance(a, Tensor) and a._tv and a._node is None:
                acc = a._acc
                var = acc.variable_ref() if acc is not None else a
                if var is not None and id(var) not in self.ids:
                    self.ids.add(id(var))
                    self.variables.append(var)
        return False


class _Spec:
    """What one call's VJP needs (kept in the node's attributes)."""

    __slots__ = ("grad_fn", "n_args", "variables", "shapes", "sizes", "name", "index", "dtypes")

    def __init__(self, grad_fn: Callable[..., Any], n_args: int, variables: list[Any],
                 shapes: list[tuple[int, ...]] | None, name: str, index: int | None = None,
                 dtypes: list[np.dtype] | None = None) -> None:
        self.grad_fn = grad_fn
        self.n_args = n_args
        self.variables = variables
        self.shapes = shapes
        self.sizes = None if shapes is None else [int(np.prod(s, dtype=np.int64)) for s in shapes]
        self.name = name
        # index: this node makes output ``index`` only (the others get zero upstream gradients)
        self.index = index
        self.dtypes = dtypes


def _fwd(*xs: Any, result: np.ndarray, spec: _Spec) -> Any:
    return result


def _as_tf(g: Tensor) -> Tensor:
    if g._style == TF:
        return g
    r = make(g._data, g._node, g._rg, TF)
    r._vc = g._vc
    r._acc = g._acc  # a leaf keeps its identity for the tapes that watch it
    return r


def _vjp(g: Tensor, *, result: np.ndarray, spec: _Spec) -> Any:
    # the user's grad_fn, called with one upstream gradient per output
    if spec.shapes is None:
        dys = [_as_tf(g)]
    elif spec.index is not None:
        assert spec.dtypes is not None
        dys = [_as_tf(g) if j == spec.index else make(np.zeros(shp, dtype=dt), None, False, TF)
               for j, (shp, dt) in enumerate(zip(spec.shapes, spec.dtypes))]
    else:
        dys = []
        start = 0
        assert spec.sizes is not None
        for shp, n in zip(spec.shapes, spec.sizes):
            dys.append(_as_tf(ops.reshape(ops.getitem(g, (slice(start, start + n),)), shp)))
            start += n
    if spec.variables:
        out = spec.grad_fn(*dys, variables=spec.variables)
        if not isinstance(out, (list, tuple)) or len(out) != 2:
            raise hinted(ValueError(with_hint(
                "@custom_gradient grad_fn with variables must return (input_grads, "
                "variable_grads)", f"{spec.name}'s grad_fn returned {type(out).__name__}")))
        input_grads, var_grads = out
        var_grads = list(var_grads)
        if len(var_grads) != len(spec.variables):
            raise hinted(ValueError(with_hint(
                "Must return gradient for each variable from @custom_gradient grad_fn.",
                f"{spec.name} reads {len(spec.variables)} variable(s); its grad_fn returned "
                f"{len(var_grads)} variable gradient(s)")))
    else:
        input_grads = spec.grad_fn(*dys)
        var_grads = []
    flat = _nest.flatten(input_grads) if isinstance(input_grads, (list, tuple)) else [input_grads]
    if len(flat) != spec.n_args:
        raise hinted(ValueError(with_hint(
            f"custom_gradient function expected to return {spec.n_args} gradients, but "
            f"returned {len(flat)} instead.",
            f"{spec.name}'s grad_fn must return one gradient (or None) per tensor argument")))
    return tuple(None if x is None else (read(x) if isinstance(x, VariableBase) else
                                         x if isinstance(x, Tensor) else convert(x))
                 for x in list(flat) + var_grads)


def _accepts_variables(fn: Callable[..., Any]) -> bool:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    for p in sig.parameters.values():
        if p.name == "variables" or p.kind is p.VAR_KEYWORD:
            return True
    return False


def custom_gradient(f: Callable[..., Any] | None = None) -> Any:
    """Decorator: define a function together with its own gradient.

    ``f(*args) -> (y, grad_fn)``; ``grad_fn(*upstream)`` returns one gradient
    per tensor argument.  If ``f`` reads trainable variables that are not
    arguments, ``grad_fn`` must accept ``variables=`` and return
    ``(input_grads, variable_grads)``.  Higher derivatives differentiate
    ``grad_fn`` itself.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> @tf.custom_gradient
    ... def log1pexp(x):
    ...     e = tf.exp(x)
    ...     def grad(upstream):
    ...         return upstream * (1 - 1 / (1 + e))
    ...     return tf.math.log(1 + e), grad
    >>> x = tf.constant(100.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = log1pexp(x)
    >>> tape.gradient(y, x)
    <tf.Tensor: shape=(), dtype=float32, numpy=1.0>
    """
    if f is None:
        return custom_gradient
    name = getattr(f, "__name__", "custom_gradient")
    op = Op(f"custom_gradient:{name}", _fwd, (), "CustomGradientBackward0")
    op.vjp = _vjp

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        watcher = _VariableWatcher()
        prev = _STATE.tapes
        _STATE.tapes = prev + (watcher,)
        try:
            result, grad_fn = f(*args, **kwargs)
        finally:
            _STATE.tapes = prev
        flat_args = _nest.flatten(args)
        arg_ids = {id(a) for a in flat_args}
        variables = [v for v in watcher.variables if id(v) not in arg_ids]
        if variables and not _accepts_variables(grad_fn):
            raise hinted(TypeError(with_hint(
                "@tf.custom_gradient grad_fn must accept keyword argument 'variables', since "
                f"function uses variables: {variables}",
                "define grad_fn(*upstream, variables=None) returning (input_grads, "
                "variable_grads)")))
        inputs = [a if isinstance(a, Tensor) else convert(a) for a in flat_args] + variables
        flat_res = _nest.flatten(result)
        res_t = [convert(r) for r in flat_res]
        floats = [r for r in res_t if r._data.dtype.kind in "fc"]
        if len(res_t) == 1:
            spec = _Spec(grad_fn, len(flat_args), variables, None, name)
            out = _as_tf(op(*inputs, result=np.asarray(res_t[0]._data), spec=spec))
            return _nest.pack_sequence_as(result, [out])
        if len(floats) != len(res_t) or len({r._data.dtype for r in res_t}) != 1:
            # outputs of several dtypes: one node per output; grad_fn is linear in the
            # upstream gradients, so calling it per output (zeros for the others) and
            # summing is the same as one call
            shp = [r._data.shape for r in res_t]
            dts = [r._data.dtype for r in res_t]
            outs = []
            for i, r in enumerate(res_t):
                spec = _Spec(grad_fn, len(flat_args), variables, shp, name, i, dts)
                outs.append(_as_tf(op(*inputs, result=np.asarray(r._data), spec=spec)))
            return _nest.pack_sequence_as(result, outs)
        # several outputs: one node whose output packs them, so grad_fn gets all upstreams
        shapes = [r._data.shape for r in res_t]
        packed = np.concatenate([r._data.ravel() for r in res_t])
        spec = _Spec(grad_fn, len(flat_args), variables, shapes, name)
        p = op(*inputs, result=packed, spec=spec)
        outs = []
        start = 0
        for r, n in zip(res_t, spec.sizes or []):
            outs.append(_as_tf(ops.reshape(ops.getitem(p, (slice(start, start + n),)),
                                           r._data.shape)))
            start += n
        return _nest.pack_sequence_as(result, outs)

    return wrapper
