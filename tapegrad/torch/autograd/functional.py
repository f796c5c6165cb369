"""``torch.autograd.functional``: ``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp``, ``vhp``.

All are built on the one reverse-mode engine: Jacobians row by row with
vector-Jacobian products, forward products (``jvp``) with the double-VJP
trick (differentiate ``u -> vjp(u)``, which is linear in ``u``), Hessians as
Jacobians of gradients.  Inputs are detached copies that require grad, so the
caller's tensors are never modified.

>>> import tapegrad.torch as torch
>>> from tapegrad.torch.autograd.functional import jacobian, hvp
>>> jacobian(lambda x: x ** 2, torch.tensor([1.0, 2.0]))
tensor([[2., 0.],
        [0., 4.]])
>>> hvp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.ones(2))
(tensor(9.), tensor([ 6., 12.]))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ... import ops as core
from ..._core import mode
from ..._core.errors import hinted, with_hint
from ..._core.tensor import TORCH, Tensor, make, restyle, set_style
from ...autodiff import entry
from ...autodiff.functional import jacobian_rows

__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]


def _as_tuple(x: Any, arg: str, fn: str) -> tuple[bool, tuple[Tensor, ...]]:
    """PyTorch's ``_as_tuple``: a tuple stays one, anything else is one element (a list
    too: it is then reported as a whole)."""
    is_tuple = isinstance(x, tuple)
    items = x if is_tuple else (x,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg}"
            raise hinted(TypeError(with_hint(
                f"The {arg} given to {fn} must be either a Tensor or a tuple of Tensors but the "
                f"{where} has type {type(t)}.", "pass a tensor or a tuple of tensors")))
    return is_tuple, tuple(items)


def _size(shape: tuple[int, ...]) -> str:
    return f"torch.Size({list(shape)})"


def _validate_v(vs: tuple[Tensor, ...], other: tuple[Tensor, ...], is_other_tuple: bool) -> None:
    """PyTorch's checks of ``v`` against the outputs (vjp) or inputs (jvp, vhp, hvp)."""
    if len(other) != len(vs):
        if is_other_tuple:
            raise hinted(RuntimeError(with_hint(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(vs)}.",
                "give one v per tensor")))
        raise hinted(RuntimeError(with_hint("The given v should contain a single Tensor.",
                                            "give one v per tensor")))
    for i, (v, o) in enumerate(zip(vs, other)):
        if v._data.shape != o._data.shape:
            pre = f"Entry {i} in " if is_other_tuple else ""
            raise hinted(RuntimeError(with_hint(
                f"{pre}v has invalid size: should be {_size(o._data.shape)} but got "
                f"{_size(v._data.shape)}.", "each v has its tensor's shape")))


def _grad_preprocess(inputs: tuple[Tensor, ...], create_graph: bool) -> tuple[Tensor, ...]:
    out = []
    for x in inputs:
        if create_graph and x._rg:
            # keep the caller's graph: a differentiable alias of x
            out.append(core.identity(x) if x._node is None else core.clone(x))
        elif x._lvl is not None and x._lvl.active:
            # a transform's tracer (forward over reverse, vmap): an alias at its level that
            # keeps its tangent or batch, made a leaf of this reverse pass
            t = core.identity(x.detach() if x._rg else x)
            set_style(t, TORCH)
            if t._node is None:
                t._rg = True
            out.append(t)
        else:
            t = make(x._data, None, False, TORCH)
            t._vc = x._vc
            t.requires_grad_(True)
            out.append(t)
    return tuple(out)


def _restyle(t: Any) -> Any:
    return restyle(t, TORCH)


def _post(t: Any, create_graph: bool) -> Any:
    if t is None:
        return None
    if not create_graph and t._node is not None:
        t = t.detach()
    return _restyle(t)


def _autograd(outputs: tuple[Tensor, ...], inputs: tuple[Tensor, ...], grad_outputs: Any,
              create_graph: bool, retain_graph: bool = True) -> tuple[Tensor | None, ...]:
    outs = [o for o in outputs if o._node is not None or o._rg]
    gos = None
    if grad_outputs is not None:
        gos = [g for o, g in zip(outputs, grad_outputs) if o._node is not None or o._rg]
    if not outs:
        return (None,) * len(inputs)
    return entry.grad(outs, list(inputs), gos, retain_graph, create_graph, True)


def _fill_none(grads: tuple[Any, ...], refs: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
    return tuple(make(np.zeros_like(r._data), None, False, TORCH) if g is None else g
                 for g, r in zip(grads, refs))


_STRICT_TEXT = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The "
               "outputs must be computed in a differentiable manner from the input when running "
               "in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided "
                "function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of "
                   "the user-provided function. This is not allowed in strict mode.",
}


def _check_requires_grad(ts: tuple[Any, ...], kind: str | None, strict: bool,
                         what: str = "strict mode") -> None:
    """PyTorch's strict-mode checks: a ``None`` (an input nothing used), then, for ``kind``,
    a tensor that does not require grad (``kind=None``: the ``None`` check only)."""
    if not strict:
        return
    for i, t in enumerate(ts):
        if t is None:
            raise hinted(RuntimeError(with_hint(
                f"The output of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode.", f"{what}: every input must be used")))
        if kind is not None and t._node is None and not t._rg:
            raise hinted(RuntimeError(with_hint(
                _STRICT_TEXT[kind].format(i=i),
                f"{what}: everything must depend on the inputs")))


def _check_strict(outputs: tuple[Tensor, ...], strict: bool, fn: str) -> None:
    _check_requires_grad(outputs, "outputs", strict, fn)


def _check_unused(grads: tuple[Any, ...], strict: bool, what: str) -> None:
    _check_requires_grad(grads, None, strict, what)


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``.

    >>> import tapegrad.torch as torch
    >>> from tapegrad.torch.autograd.functional import vjp
    >>> vjp(lambda x: x ** 2, torch.tensor([1.0, 2.0]), torch.ones(2))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    is_in_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
    with mode.enable_grad():
        xs = _grad_preprocess(ins, create_graph)
        out = func(*xs)
        is_out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "vjp")
        _check_strict(outs, strict, "vjp")
        if v is None:
            if len(outs) != 1 or outs[0]._data.size != 1:
                raise hinted(RuntimeError(with_hint(
                    "The vector v can only be None if the user-provided function returns a "
                    "single Tensor with a single element.", "pass v with the output's shape")))
            vs: tuple[Any, ...] = (make(np.ones_like(outs[0]._data), None, False, TORCH),)
        else:
            _, vs = _as_tuple(v, "v", "vjp")
            _validate_v(vs, outs, is_out_tuple)
        grads = _autograd(outs, xs, vs, create_graph)
        _check_unused(grads, strict, "vjp")
    res = tuple(_post(g, create_graph) for g in _fill_none(grads, xs))
    o_res = tuple(_post(o, create_graph) for o in outs)
    return (o_res if is_out_tuple else o_res[0]), (res if is_in_tuple else res[0])


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)`` via the double-VJP trick.

    >>> import tapegrad.torch as torch
    >>> from tapegrad.torch.autograd.functional import jvp
    >>> jvp(lambda x: x ** 2, torch.tensor([1.0, 2.0]), torch.ones(2))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    is_in_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
    if v is None:
        if len(ins) != 1 or ins[0]._data.size != 1:
            raise hinted(RuntimeError(with_hint(
                "The vector v can only be None if the input to the user-provided function is a "
                "single Tensor with a single element.", "pass v with the input's shape")))
        vs: tuple[Any, ...] = (make(np.ones_like(ins[0]._data), None, False, TORCH),)
    else:
        _, vs = _as_tuple(v, "v", "jvp")
        _validate_v(vs, ins, is_in_tuple)
    with mode.enable_grad():
        xs = _grad_preprocess(ins, create_graph)
        out = func(*xs)
        is_out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "jvp")
        _check_strict(outs, strict, "jvp")
        # u -> (d out / d x)^T u is linear in u; its VJP with v is J v
        us = tuple(make(np.zeros_like(o._data), None, True, TORCH) for o in outs)
        g = _autograd(outs, xs, us, create_graph=True)
        _check_requires_grad(tuple(g), "grad_inputs", strict)
        pairs = [(gi, vi) for gi, vi in zip(g, vs) if gi is not None and
                 (gi._node is not None or gi._rg)]
        if pairs:
            jv = entry.grad([p[0] for p in pairs], list(us), [p[1] for p in pairs],
                             True, create_graph, True)
        else:
            jv = (None,) * len(us)
    res = tuple(_post(t, create_graph) for t in _fill_none(tuple(jv), outs))
    o_res = tuple(_post(o, create_graph) for o in outs)
    return (o_res if is_out_tuple else o_res[0]), (res if is_out_tuple else res[0])


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """The Jacobian ``d func(inputs) / d inputs`` (shape ``out.shape + in.shape``).

    A tuple of inputs gives a tuple; a tuple of outputs a tuple (of tuples).
    """
    is_in_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise hinted(NotImplementedError(with_hint(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.',
                "forward mode gives the Jacobian without a graph")))
        if strict:
            raise hinted(RuntimeError(with_hint(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`strict=False` or `strategy="reverse-mode"`.', "drop strict=True")))
        if not vectorize:
            raise hinted(NotImplementedError(with_hint(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                "only implemented for `vectorize=True`.", "pass vectorize=True")))
    if vectorize:
        if strict:
            with mode.enable_grad():  # PyTorch checks the outputs first
                xs = _grad_preprocess(ins, create_graph)
                _, outs = _as_tuple(func(*xs), "outputs of the user-provided function",
                                    "jacobian")
            _check_strict(outs, strict, "jacobian")
            raise hinted(RuntimeError(with_hint(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                "not supported together. Please either set `strict=False` or "
                "`vectorize=False`.", "drop strict=True")))
        return _jacobian_vectorized(func, ins, is_in_tuple, create_graph, strategy)
    with mode.enable_grad():
        xs = _grad_preprocess(ins, create_graph)
        out = func(*xs)
        is_out_tuple, outs = _as_tuple(out, "outputs of the user-provided function",
                                       "jacobian")
        _check_strict(outs, strict, "jacobian")
        rows: list[tuple[Tensor, ...]] = []
        for j, o in enumerate(outs):
            def row(seed: Tensor, o: Tensor = o, j: int = j) -> tuple[Tensor | None, ...]:
                gs = _autograd((o,), xs, (seed,), create_graph)
                if strict:
                    for i, gi in enumerate(gs):
                        if gi is None:
                            raise hinted(RuntimeError(with_hint(
                                f"Output {j} of the user-provided function is independent of "
                                f"input {i}. This is not allowed in strict mode.",
                                "every input must be used")))
                        if create_graph and gi._node is None and not gi._rg:
                            raise hinted(RuntimeError(with_hint(
                                "The jacobian of the user-provided function is independent of "
                                f"input {i}. This is not allowed in strict mode when "
                                "create_graph=True.", "every input must be used")))
                return gs

            basis = np.eye(o._data.size, dtype=o._data.dtype).reshape(
                (o._data.size,) + o._data.shape)
            per = jacobian_rows(row, basis, xs, False, create_graph, TORCH)
            blocks = []
            for blk, x in zip(per, xs):
                shape = o._data.shape + x._data.shape
                if blk is None:
                    blk = make(np.zeros(shape, dtype=x._data.dtype), None, False, TORCH)
                else:
                    blk = core.reshape(blk, shape)
                blocks.append(_post(blk, create_graph))
            rows.append(tuple(blocks))
    if is_out_tuple:
        return tuple(r if is_in_tuple else r[0] for r in rows)
    return rows[0] if is_in_tuple else rows[0][0]


def _jacobian_vectorized(func: Callable[..., Any], ins: tuple[Tensor, ...], is_in_tuple: bool,
                         create_graph: bool, strategy: str) -> Any:
    """``jacobian(..., vectorize=True)``: one vmapped VJP (or JVP) instead of a row loop."""
    from ...autodiff import functional as F

    out_tuple: list[bool] = []

    def f(*xs: Tensor) -> Any:
        with mode.enable_grad():
            out = func(*xs)
        is_t, outs = _as_tuple(out, "outputs of the user-provided function", "jacobian")
        out_tuple.append(is_t)
        return outs

    argnums: Any = tuple(range(len(ins))) if is_in_tuple else 0
    jac = F.jacfwd(f, argnums)(*ins) if strategy == "forward-mode" else \
        F.jacrev(f, argnums)(*ins)
    res = tuple(tuple(_post(b, create_graph) for b in r) if is_in_tuple else
                _post(r, create_graph) for r in jac)
    return res if out_tuple[0] else res[0]


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function (a tuple of tuples for several inputs)."""
    is_in_tuple, ins = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def jac_func(*xs: Tensor) -> Any:
        xs = _grad_preprocess(xs, True)  # as the inner jacobian(create_graph=True) does
        out = func(*xs)
        out_is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        if out_is_tuple:
            raise hinted(RuntimeError(with_hint(
                "The function given to hessian should return a single Tensor",
                "return one scalar tensor")))
        if outs[0]._data.size != 1:
            raise hinted(RuntimeError(with_hint(
                "The Tensor returned by the function given to hessian should contain a single "
                "element", "reduce the output to a scalar")))
        gs = _autograd(outs, xs, None, create_graph=True)
        _check_requires_grad(tuple(gs), "jacobian", strict)
        return tuple(make(np.zeros_like(x._data), None, False, TORCH) if g is None else g
                     for g, x in zip(gs, xs))

    res = jacobian(jac_func, ins, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    if not is_in_tuple:
        return res[0][0]
    return res


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)``."""
    return _vhp(func, inputs, v, create_graph, strict, "vhp")


def _vhp(func: Callable[..., Any], inputs: Any, v: Any, create_graph: bool, strict: bool,
         fn: str) -> tuple[Any, Any]:
    is_in_tuple, ins = _as_tuple(inputs, "inputs", fn)
    if v is None:
        if len(ins) != 1 or ins[0]._data.size != 1:
            raise hinted(RuntimeError(with_hint(
                "The vector v can only be None if the input to the user-provided function is a "
                "single Tensor with a single element.", "pass v")))
        vs: tuple[Any, ...] = (make(np.ones_like(ins[0]._data), None, False, TORCH),)
    else:
        _, vs = _as_tuple(v, "v", fn)
        _validate_v(vs, ins, is_in_tuple)
    with mode.enable_grad():
        xs = _grad_preprocess(ins, create_graph)
        out = func(*xs)
        out_is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", fn)
        _check_strict(outs, strict, fn)
        if out_is_tuple:
            raise hinted(RuntimeError(with_hint(
                f"The function given to {fn} should return a single Tensor",
                "return one scalar tensor")))
        if outs[0]._data.size != 1:
            raise hinted(RuntimeError(with_hint(
                f"The Tensor returned by the function given to {fn} should contain a single "
                "element", "reduce the output to a scalar")))
        g = _autograd(outs, xs, None, create_graph=True)
        _check_requires_grad(tuple(g), "jacobian", strict)
        pairs = [(gi, vi, k) for k, (gi, vi) in enumerate(zip(g, vs))
                 if gi is not None and (gi._node is not None or gi._rg)]
        if pairs:
            h = entry.grad([p[0] for p in pairs], list(xs), [p[1] for p in pairs], True,
                            create_graph, True)
        else:
            h = (None,) * len(xs)
    res = tuple(_post(t, create_graph) for t in _fill_none(tuple(h), xs))
    return _post(outs[0], create_graph), (res if is_in_tuple else res[0])


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), H v)`` (equal to ``vhp`` since the Hessian is symmetric)."""
    return _vhp(func, inputs, v, create_graph, strict, "hvp")
