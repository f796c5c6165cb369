"""The core Tensor's operators and op-running methods, bound from above ``ops``.

``tapegrad._core.tensor`` imports nothing above ``_core``; what a tensor does
with ``+``, ``x[i]``, ``.sum()``, ``.backward()`` is defined here, on top of
the ops and the engine, and bound onto :class:`~tapegrad._core.tensor.Tensor`
once when ``tapegrad.ops`` is imported (HIPS autograd binds ``ArrayBox``'s
operators in ``numpy_boxes.py`` the same way).  Front-end subclasses
(``tapegrad.torch.Tensor``, ``tapegrad.tf``'s ``EagerTensor``) override what
their framework means differently in their own class bodies; their binary
operand promotion is the class attribute ``_promote``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from .._core import mode
from .._core.tensor import Tensor, _snapshot

_STATE = mode.STATE
_ops: Any = sys.modules[__package__ or "tapegrad.ops"]


def _axis(axis: Any, dim: Any) -> Any:
    a = dim if axis is None else axis
    if isinstance(a, list):
        a = tuple(a)
    return a


def _keep(keepdims: Any, keepdim: Any) -> bool:
    return bool(keepdim if keepdims is None else keepdims)


_BINARY: dict[str, Callable[..., Any]] = {}


def binary(name: str, a: Any, b: Any) -> Tensor:
    """The op ``name`` on ``a`` and ``b`` after the operands' style promotion."""
    fn = _BINARY.get(name)
    if fn is None:
        fn = _BINARY[name] = getattr(_ops, name)
    p = a._promote if isinstance(a, Tensor) else b._promote
    if p is not None:
        a, b = p(a, b, name)
    return fn(a, b)


def _forward_operator(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    def operator(self: Tensor, other: Any) -> Any:
        p = self._promote
        if p is None:
            return fn(self, other)
        a, b = p(self, other, name)
        return fn(a, b)

    return operator


def _reflected_operator(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    def operator(self: Tensor, other: Any) -> Any:
        p = self._promote
        if p is None:
            return fn(other, self)
        a, b = p(other, self, name)
        return fn(a, b)

    return operator


def _scalar_operator(fn: Callable[..., Any], name: str, promote: Callable[..., Any],
                     reflected: bool) -> Callable[..., Any]:
    if reflected and name in ("add", "multiply"):
        # PyTorch's ``2 * x`` is ``x.__rmul__(2)``, ``mul(x, 2)``: the tensor is the op's
        # first input (``grad_fn.next_functions`` order); the values are the same either way
        return _scalar_operator(fn, name, promote, False)
    if reflected:
        def operator(self: Tensor, other: Any) -> Any:
            c = other.__class__
            if (c is float or c is int) and self._data.dtype.kind in "fc":
                return fn(other, self)
            a, b = promote(other, self, name)
            return fn(a, b)
    else:
        def operator(self: Tensor, other: Any) -> Any:
            c = other.__class__
            if (c is float or c is int) and self._data.dtype.kind in "fc":
                return fn(self, other)
            a, b = promote(self, other, name)
            return fn(a, b)
    return operator


def bind_scalar_operators(cls: type, promote: Callable[..., Any]) -> None:
    """Bind ``+ - * /`` on a front-end class whose ``promote`` leaves a Python number beside
    a floating tensor as it is (PyTorch's first promotion case): that case skips the call."""
    for fwd, rev, name in _FAST[:4]:
        fn = getattr(_ops, name)
        _set(cls, fwd, _scalar_operator(fn, name, promote, False))
        _set(cls, rev, _scalar_operator(fn, name, promote, True))


def _binary_method(name: str, reflected: bool = False) -> Callable[..., Any]:
    if reflected:
        def method(self: Tensor, other: Any) -> Tensor:
            return binary(name, other, self)
    else:
        def method(self: Tensor, other: Any) -> Tensor:
            return binary(name, self, other)
    return method


def inplace_op(t: Tensor, name: str, other: Any) -> Tensor:
    """PyTorch's in-place arithmetic on ``t`` (``t += other``): modify it, bump its version."""
    t._check_inplace(f"in-place {name}")
    src = t
    if name not in ("add", "subtract") and _STATE.grad_enabled and (
        t._node is not None or t._rg or _STATE.tapes
        or (isinstance(other, Tensor) and (other._rg or other._node is not None))
    ):
        # the op saves its input for backward and t is about to be overwritten: give it a
        # snapshot of t (PyTorch saves ``original_self`` for in-place ops the same way)
        src = _snapshot(t)
    return t._assign_result(binary(name, src, other), f"in-place {name}")


class _Methods:
    """The bodies bound onto Tensor (a namespace: never instantiated)."""

    def __iadd__(self: Any, other: Any) -> Tensor:
        return self._inplace("add", other)

    def __isub__(self: Any, other: Any) -> Tensor:
        return self._inplace("subtract", other)

    def __imul__(self: Any, other: Any) -> Tensor:
        return self._inplace("multiply", other)

    def __itruediv__(self: Any, other: Any) -> Tensor:
        return self._inplace("divide", other)

    def __ipow__(self: Any, other: Any) -> Tensor:
        return self._inplace("power", other)

    def _inplace(self: Any, name: str, other: Any) -> Tensor:
        return inplace_op(self, name, other)

    def __neg__(self: Any) -> Tensor:
        return _ops.negative(self)

    def __pos__(self: Any) -> Tensor:
        return self

    def __abs__(self: Any) -> Tensor:
        return _ops.abs(self)

    def __invert__(self: Any) -> Tensor:
        return _ops.logical_not(self)

    def __getitem__(self: Any, index: Any) -> Tensor:
        return _ops.getitem(self, index)

    def __setitem__(self: Any, index: Any, value: Any) -> None:
        self._assign_result(_ops.setitem(self, index, value), "setitem")

    def __array_ufunc__(self: Any, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        from ..numpy_dispatch import array_ufunc

        return array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self: Any, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        from ..numpy_dispatch import array_function

        return array_function(func, types, args, kwargs)

    def backward(self: Any, gradient: Any = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """Accumulate the gradient of this tensor into the ``.grad`` of the leaves."""
        if isinstance(gradient, (list, tuple)) and len(gradient) == 1 and (
                gradient[0] is None or isinstance(gradient[0], Tensor)):
            gradient = gradient[0]  # PyTorch's sequence form: one gradient per output
        from ..autodiff.entry import backward

        backward([self], None if gradient is None else [gradient], retain_graph, create_graph,
                 inputs)

    def clone(self: Any) -> Tensor:
        return _ops.clone(self)

    # numpy names and PyTorch names are both accepted where they do not clash.
    def sum(self: Any, axis: Any = None, keepdims: Any = None, *, dim: Any = None,
            keepdim: Any = None, dtype: Any = None) -> Tensor:
        return _ops.sum(self, axis=_axis(axis, dim), keepdims=_keep(keepdims, keepdim))

    def mean(self: Any, axis: Any = None, keepdims: Any = None, *, dim: Any = None,
             keepdim: Any = None, dtype: Any = None) -> Tensor:
        return _ops.mean(self, axis=_axis(axis, dim), keepdims=_keep(keepdims, keepdim))

    def prod(self: Any, axis: Any = None, keepdims: Any = None, *, dim: Any = None,
             keepdim: Any = None) -> Tensor:
        return _ops.prod(self, axis=_axis(axis, dim), keepdims=_keep(keepdims, keepdim))

    def max(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _ops.max(self, *args, **kwargs)

    def min(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _ops.min(self, *args, **kwargs)

    def var(self: Any, *args: Any, **kwargs: Any) -> Tensor:
        return _ops.var(self, *args, **kwargs)

    def std(self: Any, *args: Any, **kwargs: Any) -> Tensor:
        return _ops.std(self, *args, **kwargs)

    def reshape(self: Any, *shape: Any, **kwargs: Any) -> Tensor:
        if "shape" in kwargs:
            shp = kwargs.pop("shape")
        else:
            shp = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return _ops.reshape(self, tuple(shp) if not isinstance(shp, int) else (shp,))

    def transpose(self: Any, *axes: Any) -> Tensor:
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = tuple(axes[0])
        return _ops.transpose(self, axes or None)

    @property
    def T(self: Any) -> Tensor:
        return _ops.transpose(self)

    def astype(self: Any, dtype: Any) -> Tensor:
        return _ops.cast(self, dtype)

    def flatten(self: Any, *args: Any, **kwargs: Any) -> Tensor:
        return self.reshape(-1)

    def squeeze(self: Any, axis: Any = None, *, dim: Any = None) -> Tensor:
        return _ops.squeeze(self, _axis(axis, dim))

    def exp(self: Any) -> Tensor:
        return _ops.exp(self)

    def log(self: Any) -> Tensor:
        return _ops.log(self)

    def sqrt(self: Any) -> Tensor:
        return _ops.sqrt(self)

    def tanh(self: Any) -> Tensor:
        return _ops.tanh(self)

    def sigmoid(self: Any) -> Tensor:
        return _ops.sigmoid(self)

    def relu(self: Any) -> Tensor:
        return _ops.relu(self)

    def abs(self: Any) -> Tensor:
        return _ops.abs(self)

    def any(self: Any, axis: Any = None) -> Tensor:
        return _ops.any(self, axis=axis)

    def all(self: Any, axis: Any = None) -> Tensor:
        return _ops.all(self, axis=axis)

    def argmax(self: Any, axis: Any = None, *, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _ops.argmax(self, axis=_axis(axis, dim), keepdims=keepdim)

    def argmin(self: Any, axis: Any = None, *, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _ops.argmin(self, axis=_axis(axis, dim), keepdims=keepdim)


_FAST = (("__add__", "__radd__", "add"), ("__sub__", "__rsub__", "subtract"),
         ("__mul__", "__rmul__", "multiply"), ("__truediv__", "__rtruediv__", "divide"),
         ("__matmul__", "__rmatmul__", "matmul"))
_OTHER = (("__floordiv__", "__rfloordiv__", "floor_divide"),
          ("__mod__", "__rmod__", "remainder"), ("__pow__", "__rpow__", "power"),
          ("__and__", "__rand__", "logical_and"), ("__or__", "__ror__", "logical_or"),
          ("__xor__", "__rxor__", "logical_xor"))
_COMPARE = (("__lt__", "less"), ("__le__", "less_equal"), ("__gt__", "greater"),
            ("__ge__", "greater_equal"), ("__eq__", "equal"), ("__ne__", "not_equal"))


def _set(cls: type, name: str, fn: Any) -> None:
    if callable(fn) and hasattr(fn, "__qualname__"):
        fn.__name__, fn.__qualname__ = name, f"Tensor.{name}"
    setattr(cls, name, fn)


def bind(cls: type = Tensor) -> None:
    """Bind the operators and methods onto the core Tensor (once, by ``tapegrad.ops``)."""
    if cls.__dict__.get("_bound"):
        return
    for fwd, rev, name in _FAST:  # the hot ones straight to their op: one call less
        fn = _BINARY[name] = getattr(_ops, name)
        _set(cls, fwd, _forward_operator(fn, name))
        _set(cls, rev, _reflected_operator(fn, name))
    for fwd, rev, name in _OTHER:
        _set(cls, fwd, _binary_method(name))
        _set(cls, rev, _binary_method(name, reflected=True))
    for dunder, name in _COMPARE:
        _set(cls, dunder, _binary_method(name))
    for name, member in _Methods.__dict__.items():
        if name in ("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__"):
            continue
        setattr(cls, name, member)
    cls._bound = True  # type: ignore[attr-defined]
