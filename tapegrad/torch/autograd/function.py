"""``torch.autograd.Function``: user-defined ops as an adapter over the core op machinery.

Each ``Function`` subclass gets one core :class:`~tapegrad._core.registry.Op`
(named ``<Class>Backward``, as PyTorch names it) whose forward hands back the
result the user's ``forward`` computed and whose VJP calls the user's
``backward``.  Recording, saved-value release, the version-counter check and
higher-order gradients are the core's, unchanged.

>>> import tapegrad.torch as torch
>>> class Square(torch.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x
...     @staticmethod
...     def backward(ctx, g):
...         (x,) = ctx.saved_tensors
...         return 2 * x * g
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> y = Square.apply(x); y
tensor([1., 4.], grad_fn=<SquareBackward>)
>>> y.sum().backward(); x.grad
tensor([2., 4.])
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._core import mode
from ..._core.errors import hinted, with_hint
from ..._core.registry import Op, apply
from ..._core.tensor import TORCH, Tensor, make, restyle, set_style
from ...ops import index_add_zeros, reshape

_STATE = mode.STATE


class FunctionCtx:
    """The ``ctx`` passed to ``forward`` and ``backward``."""

    def __init__(self) -> None:
        self.to_save: tuple[Any, ...] = ()
        self._saved: tuple[Any, ...] | None = None
        self.needs_input_grad: tuple[bool, ...] = ()
        self.materialize_grads = True
        self._non_diff: set[int] = set()
        self._dirty: tuple[Any, ...] = ()
        self._pending: Any = None

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep tensors (or None) for ``backward``; read them back as ``ctx.saved_tensors``."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise hinted(TypeError(with_hint(
                    "save_for_backward can only save variables, but argument "
                    f"{tensors.index(t)} is of type {type(t).__name__}",
                    "store non-tensors as attributes instead: ctx.k = k")))
        self.to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        self._for_forward = tensors

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        if self._saved is None:
            return tuple(self.to_save)
        return self._saved

    def mark_non_differentiable(self, *tensors: Any) -> None:
        self._non_diff.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors: Any) -> None:
        self._dirty = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)


BackwardCFunction = FunctionCtx


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a ``backward`` as not itself differentiable (runs it without recording)."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with mode.no_grad():
            return fn(ctx, *args)

    return wrapper


def _restyle(t: Any) -> Any:
    return restyle(t, TORCH)


def _expandable(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``to`` (PyTorch's ``is_expandable_to``)."""
    if len(shape) > len(to):
        return False
    for a, b in zip(reversed(shape), reversed(to)):
        if a != b and a != 1:
            return False
    return True


class _FunctionMeta(type):
    pass


class Function(metaclass=_FunctionMeta):
    """Base class for custom differentiable ops (``forward``/``backward`` static methods).

    ``apply(*args)`` runs ``forward(ctx, *args)`` without recording and, when
    an input requires grad, records one node whose backward is the user's
    ``backward(ctx, *grad_outputs)`` (one gradient per ``forward`` argument,
    ``None`` for non-tensors).  The newer ``forward(*args)`` +
    ``setup_context(ctx, inputs, output)`` form is supported too.
    """

    _op: Op | None = None
    _unpack_op: Op | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{type(self)} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise hinted(RuntimeError(with_hint(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)",
            f"call {type(self).__name__}.apply(...) on the class")))

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._op = None
        cls._unpack_op = None

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD.")

    # ------------------------------------------------------------------------- recording
    @classmethod
    def _get_op(cls) -> Op:
        op = cls.__dict__.get("_op")
        if op is None:
            def fwd(*xs: Any, ctx: FunctionCtx, n_out: int) -> Any:
                out = ctx._pending
                ctx._pending = None
                return out

            op = Op(cls.__name__, fwd, ("*",), f"{cls.__name__}Backward", needs=True)
            op.vjp = functools.partial(_function_vjp, cls)
            cls._op = op
        return op

    @classmethod
    def _get_unpack_op(cls) -> Op:
        op = cls.__dict__.get("_unpack_op")
        if op is None:
            def fwd(flat: Any, *, start: int, stop: int, shape: tuple[int, ...], dtype: Any,
                    total: int) -> Any:
                return np.asarray(flat)[start:stop].reshape(shape).astype(dtype)

            def vjp(g: Tensor, *, start: int, stop: int, shape: Any, dtype: Any,
                    total: int) -> Any:
                return (index_add_zeros(reshape(g, (-1,)), index=(slice(start, stop),),
                                        shape=(total,)),)

            op = Op(f"{cls.__name__}_output", fwd, (), f"{cls.__name__}Backward")
            op.vjp = vjp
            cls._unpack_op = op
        return op

    generate_vmap_rule = False

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        raise NotImplementedError("vmap staticmethod not implemented")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run the function on ``args``, recording it when an input requires grad.

        Under a transform: forward mode calls the ``jvp`` staticmethod; ``vmap``
        calls the ``vmap`` staticmethod, or (``generate_vmap_rule = True``) runs
        ``forward`` and ``backward`` on the batched inputs.
        """
        from ...autodiff.functional import ACTIVE

        if ACTIVE[0] and cls.setup_context is Function.setup_context:
            raise hinted(RuntimeError(with_hint(
                "In order to use an autograd.Function with functorch transforms (vmap, "
                "grad, jvp, jacrev, ...), it must override the setup_context "
                "staticmethod. For more details, please see "
                "https://pytorch.org/docs/main/notes/extending.func.html",
                "split forward(ctx, ...) into forward(...) and setup_context(ctx, inputs, "
                "output)")))
        if _STATE.levels:
            from ..._core.dispatch import Level, level_of
            from ...autodiff.batching import BatchLevel
            from ...autodiff.forward import JVPLevel

            top: Level | None = None
            for a in args:
                lv = level_of(a)
                if lv is not None and (top is None or lv.depth > top.depth):
                    top = lv
            if isinstance(top, JVPLevel):
                if _STATE.grad_enabled and any(
                        isinstance(a, Tensor) and a._lvl is top and a._rg
                        and not _tracked(top.unpack(a)[0]) for a in args):
                    # reverse mode inside forward mode (jacfwd(jacrev(f)), hessian): the
                    # Function is recorded at the forward level, its outputs are forward
                    # mode's (the jvp staticmethod's tangents) and setup_context sees the
                    # dual inputs and outputs, so what backward uses carries tangents
                    return cls._apply(args, kwargs, jvp_level=top)[0]
                return _apply_jvp(cls, top, args, kwargs)
            if isinstance(top, BatchLevel):
                if cls.vmap is not Function.vmap:
                    if _STATE.grad_enabled and any(isinstance(a, Tensor) and a._rg
                                                   for a in args):
                        # vmap(grad(f)): the Function is recorded at the batch level (its
                        # backward then runs batched) and its forward is the vmap rule
                        return cls._apply(args, kwargs, top)[0]
                    return _apply_vmap(cls, top, args, kwargs)
                if not cls.generate_vmap_rule:
                    raise hinted(RuntimeError(with_hint(
                        f"You tried to vmap over {cls.__name__}, but it does not have vmap "
                        "support. Please override and implement the vmap staticmethod or set "
                        "generate_vmap_rule=True. For more details, please see "
                        "https://pytorch.org/docs/main/notes/extending.func.html",
                        "set generate_vmap_rule = True on the class to batch forward and "
                        "backward as they are")))
        return cls._apply(args, kwargs)[0]

    @classmethod
    def _apply(cls, args: tuple[Any, ...], kwargs: dict[str, Any],
               vmap_level: Any = None, jvp_level: Any = None) -> tuple[Any, FunctionCtx]:
        """``forward`` (by the ``vmap`` staticmethod at ``vmap_level``, or forward mode's
        rule at ``jvp_level``, when given), then the recording of the Function's node."""
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
        new_style = cls.setup_context is not Function.setup_context
        with mode.no_grad():
            if vmap_level is not None:
                out = _apply_vmap(cls, vmap_level, args, kwargs)
            elif jvp_level is not None:
                out = _apply_jvp(cls, jvp_level, args, kwargs)
            elif new_style:
                out = cls.forward(*args, **kwargs)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        if new_style:
            cls.setup_context(ctx, args, out)
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        record = _STATE.grad_enabled and any(a._rg for a in tensor_args)
        is_tuple = isinstance(out, tuple)
        outs = list(out) if is_tuple else [out]
        if not record:
            return out, ctx
        # outputs that are inputs get a fresh alias, so the inputs are never rebased
        ins = {id(a) for a in tensor_args}
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) and id(o) in ins:
                alias = make(o._data, None, False, TORCH)
                alias._vc = o._vc
                outs[i] = alias
        diff = [i for i, o in enumerate(outs)
                if isinstance(o, Tensor) and o._data.dtype.kind in "fc"
                and id(o) not in ctx._non_diff]
        op = cls._get_op()
        ctx._in_shapes = [a._data.shape for a in tensor_args]  # type: ignore[attr-defined]
        ctx._arg_is_tensor = [isinstance(a, Tensor) for a in args]  # type: ignore[attr-defined]
        ctx._outs_meta = [(o._data.shape, o._data.dtype) if isinstance(o, Tensor) else None  # type: ignore[attr-defined]
                          for o in outs]
        ctx._diff = diff  # type: ignore[attr-defined]
        if not diff:
            return out, ctx
        single = len(outs) == 1 and diff == [0]
        if single:
            ctx._pending = outs[0]._data
        else:
            dt = np.result_type(*[outs[i]._data.dtype for i in diff])
            ctx._pending = np.concatenate(
                [outs[i]._data.reshape(-1).astype(dt) for i in diff])
        # under a transform the inputs are tracers: record at their level, not through
        # dispatch (the outputs above are already the transform's)
        call = op._general if _STATE.levels else functools.partial(apply, op)
        res = call(tuple(tensor_args), {"ctx": ctx, "n_out": len(outs)})
        node = res._node
        if single:
            o = outs[0]
            o._node = node
            o._rg = True
            o._vc = res._vc
            set_style(o, TORCH)
        else:
            set_style(res, TORCH)
            total = res._data.size
            start = 0
            uop = cls._get_unpack_op()
            for i in diff:
                o = outs[i]
                n = o._data.size
                ucall = uop._general if _STATE.levels else functools.partial(apply, uop)
                v = ucall((res,), {"start": start, "stop": start + n, "shape": o._data.shape,
                                   "dtype": o._data.dtype, "total": total})
                start += n
                o._node = v._node
                o._rg = True
                o._vc = v._vc
                set_style(o, TORCH)
                v._node.out_vc = o._vc
        if node is not None:
            saved = tuple(ctx.to_save)
            node.saved = saved
            node.versions = tuple(t._vc[0] if isinstance(t, Tensor) else 0 for t in saved)
        ctx.to_save = ()
        return (tuple(outs) if is_tuple else outs[0]), ctx


def _tracked(t: Any) -> bool:
    return isinstance(t, Tensor) and (t._rg or t._node is not None)


def _apply_jvp(cls: type[Function], lv: Any, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> Any:
    """Forward mode through a Function: the primal by ``apply``, the tangent by ``jvp``."""
    if cls.jvp is Function.jvp:
        raise hinted(NotImplementedError(with_hint(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD.", f"give {cls.__name__} a jvp(ctx, *tangents) staticmethod")))
    primals = []
    tangents = []
    for a in args:
        p, t = lv.unpack(a)
        primals.append(p)
        if isinstance(p, Tensor) and t is None:
            t = make(np.zeros_like(p._data), None, False, TORCH)
        tangents.append(t)
    out, ctx = cls._apply(tuple(primals), kwargs)
    # what forward gave save_for_forward is ctx.saved_tensors in jvp
    fwd_saved = ctx.__dict__.get("_for_forward")
    if fwd_saved is not None:
        ctx._saved = tuple(fwd_saved)
    try:
        tout = cls.jvp(ctx, *tangents)
    finally:
        ctx._saved = None
    is_tuple = isinstance(out, tuple)
    outs = list(out) if is_tuple else [out]
    touts = list(tout) if isinstance(tout, tuple) else [tout]
    res = [lv.make(o, t) if isinstance(o, Tensor) and t is not None else o
           for o, t in zip(outs, touts)]
    for r in res:
        if isinstance(r, Tensor):
            set_style(r, TORCH)
    return tuple(res) if is_tuple else res[0]


class VmapInfo:
    """What a Function's ``vmap`` staticmethod is told: the batch size and randomness."""

    def __init__(self, batch_size: int, randomness: str) -> None:
        self.batch_size = batch_size
        self.randomness = randomness


def _apply_vmap(cls: type[Function], lv: Any, args: tuple[Any, ...],
                kwargs: dict[str, Any]) -> Any:
    """vmap through a Function's own ``vmap`` staticmethod."""
    from ... import ops

    values = [lv.value(a) for a in args]
    in_dims = tuple(0 if isinstance(a, Tensor) and a._lvl is lv else None for a in args)
    out, out_dims = cls.vmap(VmapInfo(lv.size, lv.randomness), in_dims, *values, **kwargs)
    is_tuple = isinstance(out, tuple)
    outs = list(out) if is_tuple else [out]
    dims = list(out_dims) if isinstance(out_dims, tuple) else [out_dims] * len(outs)
    res = []
    for o, d in zip(outs, dims):
        if not isinstance(o, Tensor):
            res.append(o)
            continue
        if d is None:
            o = ops.broadcast_to(ops.expand_dims(o, 0), (lv.size,) + o._data.shape)
        elif d % o._data.ndim != 0:
            o = ops.moveaxis(o, d, 0)
        t = lv.make(o)
        set_style(t, TORCH)
        res.append(t)
    return tuple(res) if is_tuple else res[0]


def _function_vjp(cls: type[Function], g: Tensor, *saved: Any, needs: tuple[bool, ...],
                  ctx: FunctionCtx, n_out: int) -> tuple[Any, ...]:
    ctx._saved = tuple(_restyle(s) for s in saved)
    g = _restyle(g)
    metas = ctx._outs_meta  # type: ignore[attr-defined]
    diff = ctx._diff  # type: ignore[attr-defined]
    if n_out == 1 and diff == [0]:
        grads: list[Any] = [g]
    else:
        grads = []
        flat = reshape(g, (-1,))
        start = 0
        pieces = {}
        for i in diff:
            shape, dtype = metas[i]
            n = int(np.prod(shape)) if shape else 1
            piece = reshape(flat[start:start + n], shape)
            if piece._data.dtype != dtype:
                piece = piece.to(dtype) if hasattr(piece, "to") else piece
            pieces[i] = _restyle(piece)
            start += n
        for i, m in enumerate(metas):
            if i in pieces:
                grads.append(pieces[i])
            elif m is not None:
                grads.append(make(np.zeros(m[0], dtype=m[1]), None, False, TORCH))
            else:
                grads.append(None)
    try:
        result = cls.backward(ctx, *grads)
    finally:
        ctx._saved = None
    if not isinstance(result, tuple):
        result = (result,)
    is_tensor = ctx._arg_is_tensor  # type: ignore[attr-defined]
    n_in = len(is_tensor)
    name = f"{cls.__name__}Backward"
    if len(result) != n_in:
        if len(result) > n_in and all(r is None for r in result[n_in:]):
            result = result[:n_in]
        else:
            raise hinted(RuntimeError(with_hint(
                f"function {name} returned an incorrect number of gradients (expected {n_in}, "
                f"got {len(result)})",
                "backward returns one gradient per forward input (None for non-tensors and "
                "inputs that need none)")))
    out: list[Any] = []
    shapes = ctx._in_shapes  # type: ignore[attr-defined]
    k = 0
    for i, r in enumerate(result):
        if not is_tensor[i]:
            continue
        if r is not None:
            if not isinstance(r, Tensor):
                raise hinted(TypeError(with_hint(
                    f"{name}.backward returned a {type(r).__name__} at index {i}; expected a "
                    "Tensor or None", "return tensors")))
            if r._data.shape != shapes[k] and not _expandable(shapes[k], r._data.shape):
                raise hinted(RuntimeError(with_hint(
                    f"Function {name} returned an invalid gradient at index {i} - got "
                    f"{list(r._data.shape)} but expected shape compatible with "
                    f"{list(shapes[k])}",
                    "each gradient must have its input's shape")))
        out.append(r)
        k += 1
    return tuple(out)


class InplaceFunction(Function):
    def __init__(self, inplace: bool = False) -> None:
        self.inplace = inplace


class NestedIOFunction(Function):
    pass
