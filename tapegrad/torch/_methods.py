"""PyTorch's Tensor methods, installed on the shared :class:`tapegrad.Tensor`.

Names the core does not define are added to the class (``view``, ``add_``,
``unsqueeze``, ...); names it does define but PyTorch gives another meaning
(``max``, ``var``, ``transpose``, ``x[i] = v``, ``+=``) go through the core's
per-style hooks, so core- and TensorFlow-style tensors are unaffected.

In-place methods follow PyTorch: the leaf check, a version bump, and
rebasing the tensor onto the new node (``y.mul_(2)`` gives ``y`` a
``MulBackward0``).  When the op is recorded, it reads a snapshot of the old
values, so the backward pass uses the values from before the update, as
PyTorch's ``original_self`` does.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import ops as core
from .._core import mode
from .._core.errors import hinted, with_hint
from .._core.tensor import TORCH, Tensor, _snapshot, make
from ..ops import views as _views_ops
from . import _ops as O
from ._dtype import default_np, from_np, to_np
from ._dtype import dtype as torch_dtype
from ._random import gen
from ._tensor import CPU, TorchTensor, _wrap, check_device, device, promote
from .autograd.grad_mode import _INF_VC

_STATE = mode.STATE


# ----------------------------------------------------------------------------- in place
def _can_cast(src: np.dtype, dst: np.dtype) -> bool:
    """PyTorch's ``canCast``: no float->int, complex->real or number->bool."""
    order = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
    if order[src.kind] > order[dst.kind]:
        return False
    return True


_SCALAR_NAME = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _scalar_name(d: np.dtype) -> str:
    return _SCALAR_NAME.get(d.name, d.name)


def _records(t: Tensor, others: tuple[Any, ...]) -> bool:
    if not _STATE.grad_enabled:
        return False
    if t._rg:
        return True
    return any(isinstance(o, Tensor) and o._rg for o in others)


def _source(t: Tensor, others: tuple[Any, ...]) -> Tensor:
    """What an in-place op reads as ``self``: ``t``, or a snapshot of it when recording."""
    if not _records(t, others):
        return t
    if t._lvl is not None:  # a transform's tracer (vmap(grad(f))): the snapshot stays one
        return _snapshot(t)
    a = make(t._data.copy(), t._node, t._rg, TORCH)
    a._acc = t._acc
    return a


def check_writable(t: Tensor, what: str) -> None:
    """The leaf check, and PyTorch's rule for inference tensors outside inference mode."""
    t._check_inplace(what)
    if t._vc is _INF_VC and not _STATE.inference:
        _INF_VC[0] = 0  # raises the PyTorch message


def inplace(t: Tensor, fn: Callable[[Tensor], Tensor], what: str, *others: Any,
            private_out: bool = False) -> Tensor:
    """Run ``fn(self)`` and write the result into ``t`` (PyTorch's in-place semantics).

    ``private_out``: the node's saved output is its own array, not ``t``'s storage
    (PyTorch's ``pow_`` saves the original ``self``, so later in-place ops do not
    invalidate it); its version is then not tied to ``t``.
    """
    check_writable(t, what)
    res = fn(_source(t, others))
    if not isinstance(res, Tensor):
        res = _wrap(np.asarray(res))
    if what in ("add_", "sub_") and res._lvl is not None and res._lvl is not t._lvl:
        size = getattr(res._lvl, "size", None)
        if size is not None:  # a vmapped other into an unbatched self: PyTorch's shape check
            raise hinted(RuntimeError(with_hint(
                f"output with shape {list(t._data.shape)} doesn't match the broadcast shape "
                f"{[size] + list(res._data.shape)}",
                "an unbatched tensor cannot hold a batched result in place; use x = x + y")))
    rd, td = res._data.dtype, t._data.dtype
    if rd != td and not _can_cast(rd, td):
        raise hinted(RuntimeError(with_hint(
            f"result type {_scalar_name(rd)} can't be cast to the desired output type "
            f"{_scalar_name(td)}",
            f"the in-place {what} would change the dtype of a {from_np(td)} tensor; use the "
            "out-of-place form (x = x + y)")))
    if res._data.shape != t._data.shape:
        raise hinted(RuntimeError(with_hint(
            f"output with shape {list(t._data.shape)} doesn't match the broadcast shape "
            f"{list(np.broadcast_shapes(t._data.shape, res._data.shape))}",
            f"the in-place {what} would change the tensor's shape")))
    t._assign_result(res, what)
    if private_out and res._node is not None:
        res._node.out_vc = None
    return t


_INPLACE_NAMES = {"add": "add_", "subtract": "sub_", "multiply": "mul_", "divide": "div_",
                  "power": "pow_"}


def _inplace_hook(t: Tensor, name: str, other: Any) -> Tensor:
    return inplace(t, lambda s: O.binary(name, s, other), _INPLACE_NAMES.get(name, name), other)


def _setitem_hook(t: Tensor, index: Any, value: Any) -> None:
    if t._node is None and t._rg and _STATE.grad_enabled:
        raise hinted(RuntimeError(with_hint(
            "a view of a leaf Variable that requires grad is being used in an in-place "
            "operation.", "x[i] = v on a leaf that requires grad: wrap it in `with "
            "torch.no_grad():` or assign into x.data")))
    check_writable(t, "setitem")
    items = index if isinstance(index, tuple) else (index,)
    if items and all(i is Ellipsis or (isinstance(i, slice) and i == slice(None))
                     for i in items) and isinstance(value, (Tensor, int, float)) \
            and _records(t, (value,)):
        # the whole tensor: PyTorch fills or copies it (FillBackward3, CopyBackwards)
        if not isinstance(value, Tensor):
            value = _wrap(np.asarray(value, dtype=t._data.dtype))
        if value._data.ndim == 0:
            _fill_(t, value)
        else:
            _copy_(t, value)
        return
    if isinstance(value, Tensor):
        if value._data.dtype != t._data.dtype:
            value = core.cast(value, dtype=t._data.dtype)
    elif isinstance(value, (list, tuple, np.ndarray)):
        value = np.asarray(value, dtype=t._data.dtype)
    elif isinstance(value, complex) and t._data.dtype.kind != "c":
        raise TypeError("can't convert complex to float")
    t._assign_result(core.setitem(t, index, value), "setitem")


# ----------------------------------------------------------------------------- hooks
def _max_hook(self: Tensor, dim: Any = None, keepdim: bool = False, **kw: Any) -> Any:
    return O.max(self, kw.pop("dim", dim), kw.pop("keepdim", keepdim), **kw)


def _min_hook(self: Tensor, dim: Any = None, keepdim: bool = False, **kw: Any) -> Any:
    return O.min(self, kw.pop("dim", dim), kw.pop("keepdim", keepdim), **kw)


def _transpose_hook(self: Tensor, *dims: Any, **kw: Any) -> Tensor:
    if kw:
        dims = (kw.get("dim0", dims[0] if dims else None), kw.get("dim1"))
    if len(dims) != 2:
        raise hinted(TypeError(with_hint(
            f"transpose() received an invalid combination of arguments - got {len(dims)} "
            "dims, but expected (int dim0, int dim1)", "use permute(...) to reorder all dims")))
    return O.transpose(self, dims[0], dims[1])


def _flatten_hook(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    return O.flatten(self, start_dim, end_dim)


# ----------------------------------------------------------------------------- methods
def _to_dtype(self: Tensor, dt: Any, copy: bool = False) -> Tensor:
    nd = to_np(dt)
    if nd == self._data.dtype and not copy:
        return self
    return core.cast(self, dtype=nd)


def _to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``."""
    dt = kwargs.get("dtype")
    copy = bool(kwargs.get("copy", False))
    dev = kwargs.get("device")
    for a in args:
        if isinstance(a, (torch_dtype, np.dtype)) or a in (float, int, bool):
            dt = a
        elif isinstance(a, Tensor):
            dt = a._data.dtype
        elif isinstance(a, (str, device)):
            dev = a
    check_device(dev)
    if dt is None:
        return self.clone() if copy else self
    return _to_dtype(self, dt, copy)


def _type(self: Tensor, dtype: Any = None, non_blocking: bool = False) -> Any:
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
             "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
    if dtype is None:
        return f"torch.{names.get(self._data.dtype.name, 'Float')}Tensor"
    if isinstance(dtype, str):
        inv = {f"torch.{v}Tensor": k for k, v in names.items()}
        dtype = np.dtype(inv[dtype])
    return _to_dtype(self, dtype)


def _cuda(self: Tensor, *a: Any, **k: Any) -> Tensor:
    raise hinted(AssertionError(with_hint("Torch not compiled with CUDA enabled",
                                   "tapegrad runs on the CPU; use .cpu() or .to('cpu')")))


def _new(fill: Callable[..., np.ndarray]) -> Callable[..., Tensor]:
    def f(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, **kw: Any) -> Tensor:
        from ._tensor import _finish, size_arg

        dt = self._data.dtype if dtype is None else to_np(dtype)
        return _finish(fill(size_arg(size), dt), requires_grad)

    return f


def _new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None,
              device: Any = None, requires_grad: bool = False) -> Tensor:
    from ._tensor import _finish, size_arg

    dt = self._data.dtype if dtype is None else to_np(dtype)
    return _finish(np.full(size_arg((size,)), fill_value, dtype=dt), requires_grad)


def _new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    from ._tensor import _finish, _infer_array

    dt = self._data.dtype if dtype is None else to_np(dtype)
    return _finish(_infer_array(data, dt), requires_grad)


def _view(self: Tensor, *shape: Any) -> Tensor:
    return O.view(self, *shape)


def _reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return O.reshape(self, other._data.shape)


def _expand_as(self: Tensor, other: Tensor) -> Tensor:
    return O.expand(self, other._data.shape)


def _permute(self: Tensor, *dims: Any) -> Tensor:
    return O.permute(self, *dims)


def _bin(name: str, fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def m(self: Tensor, other: Any, *args: Any, **kwargs: Any) -> Tensor:
        return fn(self, other, *args, **kwargs)

    m.__name__ = name
    return m


def _un(name: str, fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def m(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return fn(self, *args, **kwargs)

    m.__name__ = name
    return m


def _ip(name: str, fn: Callable[..., Tensor], private_out: bool = False) -> Callable[..., Tensor]:
    """In-place form ``name`` of the out-of-place ``fn(self, *args)``.

    ``private_out``: the node's saved output is its own array, not this tensor's storage
    (PyTorch's ``pow_`` saves the original ``self``, so later in-place ops do not invalidate
    it); its version is then not tied to this tensor.
    """

    def m(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return inplace(self, lambda s: fn(s, *args, **kwargs), name, *args, *kwargs.values(),
                       private_out=private_out)

    m.__name__ = name
    return m


def _zero_(self: Tensor) -> Tensor:
    """Fill with zeros in place (``ZeroBackward0`` where recorded: a zero gradient)."""
    return _fill_(self, 0, zero=True)


def _fill_(self: Tensor, value: Any, zero: bool = False) -> Tensor:
    check_writable(self, "fill_")
    if self._lvl is not None or (isinstance(value, Tensor) and value._lvl is not None):
        # a transform's tracer (vmap): no array to write into; the level assigns the result
        if isinstance(value, Tensor) and value._data.ndim:
            raise hinted(RuntimeError(with_hint(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions.", "pass a number or a 0-d tensor")))
        v = core.cast(value, dtype=self._data.dtype) if isinstance(value, Tensor) else \
            self._data.dtype.type(value)
        res = core.where(np.ones(self._data.shape, dtype=bool), v, self)
        return self._assign_result(res, "fill_")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise hinted(RuntimeError(with_hint(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions.", "pass a number or a 0-d tensor")))
        if _records(self, (value,)):
            return self._assign_result(_views_ops.fill_tensor(self, value), "fill_")
        value = value.item()
    if self._node is not None and _STATE.grad_enabled:
        # PyTorch keeps the edge to the old value (a zero gradient): FillBackward2, ZeroBackward0
        op = _views_ops.zero if zero else _views_ops.fill
        return self._assign_result(op(self, value=value), "zero_" if zero else "fill_")
    self._data[...] = value
    self._vc[0] += 1
    if self._node is not None and _STATE.grad_enabled:
        # the new values no longer depend on the graph
        self._node = None
        self._rg = False
    if self._family is not None:
        self._family.rebase(self, None, _STATE.grad_enabled)
    return self


def _broadcasts(src: tuple[int, ...], dst: tuple[int, ...]) -> bool:
    try:
        return np.broadcast_shapes(src, dst) == dst
    except ValueError:
        return False


def _copy_(self: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` into this tensor (broadcast, cast), recorded like PyTorch's ``copy_``."""
    s = src if isinstance(src, Tensor) else _wrap(np.asarray(src))
    check_writable(self, "copy_")
    if s._lvl is not None or self._lvl is not None:
        # a transform's tracer (forward-mode dual, vmap batch): the level assigns the result
        res = core.broadcast_to(core.cast(s, dtype=self._data.dtype), self._data.shape)
        if self._lvl is not None and res._lvl is not self._lvl:
            res = core.where(np.ones(self._data.shape, dtype=bool), res, self)
        return self._assign_result(res, "copy_")
    if _STATE.grad_enabled and (s._rg or self._rg) and _broadcasts(s._data.shape,
                                                                   self._data.shape):
        # CopyBackwards: the gradient goes to src; the old value keeps its edge, with zeros
        return self._assign_result(_views_ops.copy_into(self, s), "copy_")
    try:
        np.copyto(self._data, np.broadcast_to(s._data, self._data.shape), casting="unsafe")
    except ValueError:
        raise hinted(RuntimeError(with_hint(
            f"The size of tensor a ({self._data.shape[-1] if self._data.ndim else 1}) must match "
            f"the size of tensor b ({s._data.shape[-1] if s._data.ndim else 1}) at non-singleton "
            "dimension 0", f"copy_ of {list(s._data.shape)} into {list(self._data.shape)}")
        )) from None
    self._vc[0] += 1
    if self._node is not None and _STATE.grad_enabled:
        self._node = None
        self._rg = False
    if self._family is not None:
        self._family.rebase(self, None, _STATE.grad_enabled)
    return self


def _random_fill_vmap(self: Tensor, draw: Callable[[int], np.ndarray]) -> Tensor | None:
    """An in-place random fill under ``vmap``: one draw per example (``'different'``, on a
    batched ``self``) or one shared draw (``'same'``); PyTorch's error for ``'different'``
    on an unbatched ``self``.  None when no ``vmap`` is active."""
    if not _STATE.levels:
        return None
    from ..autodiff.batching import BatchLevel, active_batch_level, vmap_randomness

    if active_batch_level() is None:
        return None
    lv = vmap_randomness()  # PyTorch's error under randomness='error'
    shape = self._data.shape
    n = int(np.prod(shape)) if shape else 1
    if lv is None:  # 'same'
        if self._lvl is None:
            return None  # an unbatched tensor: the plain fill is the shared draw
        vals: Any = make(draw(n).reshape(shape), None, False, TORCH)
    else:
        if not isinstance(self._lvl, BatchLevel):
            raise hinted(RuntimeError(with_hint(
                "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This "
                "will appear like same randomness. If this is necessary for your usage, please "
                "file an issue with functorch.",
                "fill a batched tensor, or use randomness='same'")))
        vals = lv.make(make(draw(n * lv.size).reshape((lv.size,) + shape), None, False, TORCH))
    res = core.where(np.ones(shape, dtype=bool), vals, self)
    with mode.no_grad():  # the new values do not depend on the old ones
        self._assign_result(res, "random_")
    return self


def _uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
    check_writable(self, "uniform_")
    g = gen(generator)
    r = _random_fill_vmap(self, lambda n: g.uniform(n, self._data.dtype, a, b))
    if r is not None:
        return r
    self._data[...] = gen(generator).uniform(self._data.size, self._data.dtype, a, b).reshape(
        self._data.shape)
    self._vc[0] += 1
    return self


def _normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *,
             generator: Any = None) -> Tensor:
    check_writable(self, "normal_")
    g = gen(generator)
    r = _random_fill_vmap(self, lambda n: g.normal(n, self._data.dtype, mean, std))
    if r is not None:
        return r
    self._data[...] = gen(generator).normal(self._data.size, self._data.dtype, mean,
                                            std).reshape(self._data.shape)
    self._vc[0] += 1
    return self


def _random_(self: Tensor, low: int = 0, high: int | None = None, *,
             generator: Any = None) -> Tensor:
    check_writable(self, "random_")
    if high is None:
        low, high = 0, low if low else 2 ** 24
    self._data[...] = gen(generator).integers(self._data.size, low, high).reshape(
        self._data.shape)
    self._vc[0] += 1
    return self


def _contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    """``self`` when its data is row-major, else a row-major copy (``CloneBackward0``), as
    PyTorch's; what a layout-following kernel (a dropout mask) sees next."""
    if self._data.flags.c_contiguous or self._lvl is not None:
        return self
    from ..ops.elementwise import contiguous

    return contiguous(self)


def _bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """Fill with 0/1 draws, PyTorch's CPU ``bernoulli_`` (``p`` a number or probabilities)."""
    from ._random import fill_order
    from ._tensor import bernoulli_mask

    check_writable(self, "bernoulli_")
    if isinstance(p, Tensor) and p._lvl is not None:
        raise hinted(NotImplementedError(with_hint(
            "bernoulli_ with vmap-batched probabilities is not supported by tapegrad",
            "use torch.bernoulli(probs) inside vmap (randomness='different')")))
    r = _random_fill_vmap(self, lambda n: bernoulli_mask((n,), p, generator).astype(
        self._data.dtype))
    if r is not None:
        return r
    mask = bernoulli_mask(self._data.shape, p, generator, fill_order(self._data))
    self._data[...] = mask
    self._vc[0] += 1
    return self


def _bernoulli_m(self: Tensor, p: Any = None, *, generator: Any = None) -> Tensor:
    from ._tensor import bernoulli

    return bernoulli(self, p, generator=generator)


def _clamp_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    return inplace(self, lambda s: O.clamp(s, min, max), "clamp_", min, max)


def _requires_grad_(self: Tensor, requires_grad: bool = True) -> Tensor:
    self.requires_grad = requires_grad
    return self


def _element_size(self: Tensor) -> int:
    return int(self._data.itemsize)


def _data_ptr(self: Tensor) -> int:
    return int(self._data.__array_interface__["data"][0])


def _where_m(self: Tensor, condition: Any, other: Any) -> Tensor:
    return O.where(condition, self, other)


def _masked_fill(self: Tensor, mask: Any, value: Any) -> Tensor:
    return O.masked_fill(self, mask, value)


def _softmax_m(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    return O.softmax(self, dim, dtype)


def _log_softmax_m(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    return O.log_softmax(self, dim, dtype)


def _split_m(self: Tensor, split_size: Any, dim: int = 0) -> tuple[Tensor, ...]:
    return O.split(self, split_size, dim)


def _apply_(self: Tensor, fn: Callable[[Any], Any]) -> Tensor:
    check_writable(self, "apply_")
    flat = self._data.reshape(-1)
    for i in range(flat.size):
        flat[i] = fn(flat[i].item())
    self._vc[0] += 1
    return self


def _float_check_method(name: str) -> Callable[..., Any]:
    def m(self: Tensor) -> bool:
        return bool(self._data.dtype.kind == ("f" if name == "is_floating_point" else "c"))

    return m


METHODS: dict[str, Any] = {
    # conversion / info
    "to": _to, "type": _type, "float": lambda self: _to_dtype(self, np.float32),
    "double": lambda self: _to_dtype(self, np.float64),
    "half": lambda self: _to_dtype(self, np.float16),
    "long": lambda self: _to_dtype(self, np.int64),
    "int": lambda self: _to_dtype(self, np.int32),
    "short": lambda self: _to_dtype(self, np.int16),
    "bool": lambda self: _to_dtype(self, np.bool_),
    "byte": lambda self: _to_dtype(self, np.uint8),
    "type_as": lambda self, other: _to_dtype(self, other._data.dtype),
    "cpu": lambda self, *a, **k: self, "cuda": _cuda,
    "contiguous": _contiguous, "is_contiguous": lambda self, *a, **k: True,
    "pin_memory": lambda self: self,
    "device": property(lambda self: CPU), "_version": property(lambda self: self._vc[0]), "is_cuda": property(lambda self: False),
    "is_cpu": property(lambda self: True), "is_sparse": property(lambda self: False),
    "is_floating_point": _float_check_method("is_floating_point"),
    "is_complex": _float_check_method("is_complex"),
    "element_size": _element_size, "nelement": lambda self: int(self._data.size),
    "ndimension": lambda self: self._data.ndim, "data_ptr": _data_ptr,
    "new_tensor": _new_tensor,
    "new_zeros": _new(lambda s, d: np.zeros(s, dtype=d)),
    "new_ones": _new(lambda s, d: np.ones(s, dtype=d)),
    "new_empty": _new(lambda s, d: np.zeros(s, dtype=d)),
    "new_full": _new_full,
    # shapes
    "view": _view, "view_as": _reshape_as, "reshape_as": _reshape_as,
    "expand": lambda self, *s: O.expand(self, *s), "expand_as": _expand_as,
    "broadcast_to": lambda self, size: O.broadcast_to(self, size),
    "permute": _permute, "t": O.t, "unsqueeze": O.unsqueeze, "unflatten": O.unflatten,
    "movedim": O.movedim, "swapaxes": O.transpose, "swapdims": O.transpose,
    "repeat": lambda self, *s: O.repeat(self, *s), "tile": O.tile,
    "split": _split_m, "chunk": O.chunk, "unbind": O.unbind, "narrow": O.narrow,
    "select": O.select, "index_select": O.index_select, "gather": O.gather, "take": O.take,
    "masked_fill": _masked_fill, "flip": lambda self, *d: O.flip(self, d[0] if len(d) == 1
                                                               else d),
    "roll": O.roll, "sort": O.sort, "argsort": O.argsort, "topk": O.topk,
    "tril": O.tril, "triu": O.triu, "diag": O.diag, "trace": O.trace, "nonzero": O.nonzero,
    "where": _where_m,
    # arithmetic
    "add": _bin("add", O.add), "sub": _bin("sub", O.sub), "subtract": _bin("sub", O.sub),
    "mul": _bin("mul", O.mul), "multiply": _bin("mul", O.mul), "div": _bin("div", O.div),
    "divide": _bin("div", O.div), "true_divide": _bin("div", O.div),
    "floor_divide": _bin("floor_divide", O.floor_divide),
    "remainder": _bin("remainder", O.remainder), "fmod": _bin("fmod", O.fmod),
    "pow": _bin("pow", O.pow), "matmul": _bin("matmul", O.matmul), "mm": _bin("mm", O.mm),
    "bmm": _bin("bmm", O.bmm), "mv": _bin("mv", O.mv), "dot": _bin("dot", O.dot),
    "inner": _bin("inner", O.dot), "outer": _bin("outer", O.outer),
    "maximum": _bin("maximum", O.maximum), "minimum": _bin("minimum", O.minimum),
    "lerp": O.lerp,
    "neg": O.neg, "negative": O.neg, "square": O.square, "sin": O.sin, "cos": O.cos,
    "tan": O.tan, "log1p": O.log1p, "expm1": O.expm1, "log2": O.log2, "log10": O.log10,
    "rsqrt": O.rsqrt, "reciprocal": O.reciprocal, "sign": O.sign, "floor": O.floor,
    "ceil": O.ceil, "round": O.round, "trunc": O.trunc, "erf": O.erf, "exp2": O.exp2,
    "sinh": O.sinh, "cosh": O.cosh,
    "real": property(O.real), "imag": property(O.imag), "conj": O.conj,
    "clamp": _un("clamp", O.clamp), "clip": _un("clip", O.clamp),
    "clamp_min": O.clamp_min, "clamp_max": O.clamp_max,
    "softmax": _softmax_m, "log_softmax": _log_softmax_m, "logsumexp": O.logsumexp,
    "cumsum": O.cumsum, "amax": O.amax, "amin": O.amin, "norm": O.norm,
    "count_nonzero": O.count_nonzero,
    # comparisons
    "eq": O.eq, "ne": O.ne, "lt": O.lt, "le": O.le, "gt": O.gt, "ge": O.ge,
    "greater": O.gt, "less": O.lt, "greater_equal": O.ge, "less_equal": O.le,
    "not_equal": O.ne, "equal": O.equal, "allclose": O.allclose, "isclose": O.isclose,
    "isnan": O.isnan, "isinf": O.isinf, "isfinite": O.isfinite,
    "logical_not": O.logical_not, "logical_and": O.logical_and, "logical_or": O.logical_or,
    "logical_xor": O.logical_xor,
    # in place
    "add_": _ip("add_", O.add), "sub_": _ip("sub_", O.sub), "mul_": _ip("mul_", O.mul),
    "div_": _ip("div_", O.div), "pow_": _ip("pow_", O.pow, private_out=True), "neg_": _ip("neg_", O.neg),
    "abs_": _ip("abs_", O.abs), "exp_": _ip("exp_", O.exp), "log_": _ip("log_", O.log),
    "sqrt_": _ip("sqrt_", O.sqrt), "sigmoid_": _ip("sigmoid_", O.sigmoid),
    "tanh_": _ip("tanh_", O.tanh), "relu_": _ip("relu_", O.relu),
    "square_": _ip("square_", O.square), "floor_": _ip("floor_", O.floor),
    "clamp_": _clamp_, "clip_": _clamp_, "zero_": _zero_, "fill_": _fill_, "copy_": _copy_,
    "masked_fill_": _ip("masked_fill_", O.masked_fill), "lerp_": _ip("lerp_", O.lerp),
    "uniform_": _uniform_, "normal_": _normal_, "random_": _random_, "apply_": _apply_,
    "bernoulli_": _bernoulli_, "bernoulli": _bernoulli_m,
    "addmm": lambda self, m1, m2, *, beta=1, alpha=1: O.add(O.mul(self, beta),
                                                           O.mul(O.matmul(m1, m2), alpha)),
}


def install() -> None:
    """Add the PyTorch methods to the PyTorch-style tensor class."""
    cls = TorchTensor
    for name, fn in METHODS.items():
        setattr(cls, name, fn)
    cls.max = _max_hook  # type: ignore[method-assign]
    cls.min = _min_hook  # type: ignore[method-assign]
    cls.var = lambda self, *a, **k: O.var(self, *a, **k)  # type: ignore[method-assign]
    cls.std = lambda self, *a, **k: O.std(self, *a, **k)  # type: ignore[method-assign]
    cls.transpose = _transpose_hook  # type: ignore[method-assign]
    cls.__setitem__ = _setitem_hook  # type: ignore[method-assign]
    cls._inplace = _inplace_hook  # type: ignore[method-assign, assignment]
    cls.flatten = _flatten_hook  # type: ignore[method-assign]
    cls.mean = _mean  # type: ignore[method-assign, assignment]
    cls.argmax = _argmax  # type: ignore[method-assign, assignment]
    cls.argmin = _argmin  # type: ignore[method-assign, assignment]


def _argmax(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return O.argmax(self, dim, keepdim)


def _argmin(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return O.argmin(self, dim, keepdim)


def _mean(self: Tensor, dim: Any = None, keepdim: Any = False, dtype: Any = None, *,
          axis: Any = None, keepdims: Any = None) -> Tensor:
    return O.mean(self, dim if axis is None else axis,
                  bool(keepdim if keepdims is None else keepdims), dtype=dtype)


_ = (warnings, default_np, promote)
