"""``tapegrad.Tensor``: one array type for both front-ends.

A tensor is a NumPy array (``_data``) plus the node that made it (``_node``,
``None`` for a leaf), whether it is tracked (``_rg``: PyTorch's
``requires_grad``), ``grad``, and a version counter shared with its views.
Which front-end made it (``_style``) only decides how it prints and the few
methods whose meaning differs between the frameworks; front-ends register
those in :data:`STYLE_HOOKS`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from . import errors, mode
from .node import Node

CORE, TORCH, TF = 0, 1, 2
# Per-style hooks installed by the front-ends: name -> callable.
STYLE_HOOKS: list[dict[str, Callable[..., Any]]] = [{}, {}, {}]
# Per-style binary-operand promotion: f(a, b, opname) -> (a, b); None: numpy rules.
PROMOTE: list[Callable[[Any, Any, str], tuple[Any, Any]] | None] = [None, None, None]

_STATE = mode.STATE


def make(data: np.ndarray, node: Node | None = None, rg: bool = False, style: int = 0) -> Tensor:
    """Wrap an ndarray without copying (internal fast path)."""
    t = object.__new__(Tensor)
    t._data = data
    t._node = node
    t._rg = rg
    t._vc = [0]
    t._style = style
    return t


def restyle(t: Any, style: int) -> Any:
    """``t`` as a tensor of front-end ``style`` (how it prints and promotes).

    An untracked tensor becomes a new tensor sharing its array and version
    counter; a recorded one (or a transform's tracer) is restyled in place, so
    its graph identity is kept.  Anything else is returned as it is.
    """
    if not isinstance(t, Tensor) or t._style == style:
        return t
    if t._node is None and t._lvl is None:
        r = make(t._data, None, False, style)
        r._vc = t._vc
        return r
    t._style = style
    return t


def _check_numeric(arr: np.ndarray, data: Any) -> None:
    if arr.dtype.kind not in "biufc":
        raise errors.hinted(TypeError(
            errors.with_hint(
                f"can't convert {type(data).__name__} with dtype {arr.dtype} to a tensor: "
                "only numeric and bool data is supported",
                "pass numbers, nested lists of numbers or a numeric numpy array",
            )
        ))


def as_array(data: Any, dtype: Any = None) -> np.ndarray:
    """Convert array-like data to an ndarray, refusing non-numeric input."""
    if isinstance(data, Tensor):
        arr = data._data
        return arr if dtype is None else arr.astype(dtype, copy=False)
    try:
        arr = np.asarray(data, dtype=dtype)
    except (ValueError, TypeError) as exc:
        raise errors.hinted(TypeError(
            errors.with_hint(
                f"could not convert {type(data).__name__} to a tensor: {exc}",
                "pass numbers, (rectangular) nested lists of numbers or a numpy array",
            )
        )) from None
    _check_numeric(arr, data)
    return arr


def _add_hook(node: Node, fn: Callable[..., Any]) -> RemovableHandle:
    if node.hooks is None:
        node.hooks = []
    return RemovableHandle(node.hooks, fn)


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook."""

    def __init__(self, hooks: list[Any], fn: Callable[..., Any]) -> None:
        self._hooks = hooks
        self._fn = fn
        hooks.append(fn)

    def remove(self) -> None:
        try:
            self._hooks.remove(self._fn)
        except ValueError:
            pass

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _axis(axis: Any, dim: Any) -> Any:
    a = dim if axis is None else axis
    if isinstance(a, list):
        a = tuple(a)
    return a


def _keep(keepdims: Any, keepdim: Any) -> bool:
    return bool(keepdim if keepdims is None else keepdims)


class Tensor:
    """An n-dimensional array that can record the operations applied to it.

    Examples
    --------
    >>> import tapegrad as tg
    >>> x = tg.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad.numpy()
    array([2., 4.])
    """

    # hot attributes are slots; rarely set ones are class-level defaults whose
    # instance values go to ``__dict__`` (so ``make`` sets five fields, not nine)
    __slots__ = ("_data", "_node", "_rg", "_vc", "_style", "__weakref__", "__dict__")
    __array_priority__ = 1000

    _data: np.ndarray
    _node: Node | None
    _rg: bool
    _grad: Tensor | None = None
    _vc: list[int]
    _acc: Any = None
    _style: int
    _tv: bool = False
    _retains: bool = False
    # the transform level this tensor is a tracer of (see _core/dispatch.py), and the
    # levels' own fields: forward mode's primal and tangent, batching's batched value
    _lvl: Any = None
    _primal: Any
    _tangent: Any
    _bval: Any

    def __init__(self, data: Any, dtype: Any = None, requires_grad: bool = False) -> None:
        arr = as_array(data, dtype)
        if isinstance(data, Tensor) or arr is data:
            arr = arr.copy()
        self._data = arr
        self._node = None
        self._rg = False
        self._vc = [0]
        self._style = CORE
        if requires_grad:
            self.requires_grad = True

    # ------------------------------------------------------------------ autograd
    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        flag = bool(flag)
        if self._node is not None and not flag:
            raise errors.hinted(RuntimeError(
                errors.with_hint(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().",
                    "call .detach() to get a tensor outside the graph",
                )
            ))
        if flag:
            h = STYLE_HOOKS[self._style].get("requires_grad")
            if h is not None:
                h(self)
        if flag and self._data.dtype.kind not in "fc":
            raise errors.hinted(RuntimeError(
                errors.with_hint(
                    errors.INT_REQUIRES_GRAD,
                    f"this tensor has dtype {self._data.dtype}; convert it with .float() or "
                    "create it from floats",
                )
            ))
        if self._node is None:
            self._rg = flag

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient (``None`` until a backward pass reaches this leaf)."""
        g = self._grad
        if g is None and self._node is not None and not self._retains:
            h = STYLE_HOOKS[self._style].get("grad_nonleaf")
            if h is not None:
                h(self)
        return g

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        h = STYLE_HOOKS[self._style].get("grad_set")
        self._grad = value if h is None else h(self, value)

    @property
    def grad_fn(self) -> Node | None:
        return self._node

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward (as in PyTorch)."""
        if self._node is None:
            return
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._retains:
            return
        self._retains = True
        self._node.retain = weakref.ref(self)

    @property
    def retains_grad(self) -> bool:
        return self._retains

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new one."""
        if not self._rg and self._node is None:
            raise errors.hinted(RuntimeError(
                errors.with_hint(
                    "cannot register a hook on a tensor that doesn't require gradient",
                    "set requires_grad=True first",
                )
            ))
        from .registry import edge_of

        wrap = self._hook("wrap_hook")
        return _add_hook(edge_of(self), hook if wrap is None else wrap(hook))

    def backward(
        self,
        gradient: Any = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Accumulate the gradient of this tensor into the ``.grad`` of the leaves."""
        h = self._hook("backward")
        if h is not None:
            h(self, gradient, retain_graph, create_graph, inputs)
        if isinstance(gradient, (list, tuple)) and len(gradient) == 1 and (
                gradient[0] is None or isinstance(gradient[0], Tensor)):
            gradient = gradient[0]  # PyTorch's sequence form: one gradient per output
        from ..engine import backward

        backward([self], None if gradient is None else [gradient], retain_graph, create_graph,
                 inputs)

    def detach(self) -> Tensor:
        """A tensor sharing storage (and version counter), outside the graph."""
        lv = self._lvl
        if lv is not None and lv.active:  # a transform's tracer stays one
            t = lv.detach(self)
            t._style = self._style
            return t
        t = make(self._data, None, False, self._style)
        t._vc = self._vc
        return t

    def detach_(self) -> Tensor:
        self._node = None
        self._rg = False
        return self

    @property
    def data(self) -> Tensor:
        """PyTorch's ``.data``: same storage, outside the graph, own version counter."""
        return make(self._data, None, False, self._style)

    @data.setter
    def data(self, value: Any) -> None:
        self._data = as_array(value)

    # ------------------------------------------------------------------ array
    def numpy(self, force: bool = False) -> np.ndarray:
        """The underlying array (shared, not copied)."""
        if self._lvl is not None:
            self._lvl_read("numpy")
        h = STYLE_HOOKS[self._style].get("numpy")
        if h is not None:
            return h(self, force)
        return self._data

    @property
    def shape(self) -> Any:
        h = STYLE_HOOKS[self._style].get("shape")
        return h(self._data.shape) if h is not None else self._data.shape

    @property
    def dtype(self) -> Any:
        h = STYLE_HOOKS[self._style].get("dtype")
        return h(self._data.dtype) if h is not None else self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def size(self, dim: int | None = None) -> Any:
        if dim is not None:
            return self._data.shape[dim]
        return self.shape

    def numel(self) -> int:
        return int(self._data.size)

    def item(self) -> Any:
        if self._lvl is not None:
            self._lvl_read("item")
        if self._data.size != 1:
            raise errors.hinted(RuntimeError(
                errors.with_hint(
                    f"a Tensor with {self._data.size} elements cannot be converted to Scalar",
                    "index one element first, or use .tolist()",
                )
            ))
        return self._data.item()

    def tolist(self) -> Any:
        if self._lvl is not None:
            self._lvl_read("tolist")
        return self._data.tolist()

    def _lvl_read(self, what: str) -> None:
        """Reading a tracer's values: forward mode reads its primal; vmap refuses (PyTorch)."""
        lv = self._lvl
        if lv.active:
            lv.read(self, what)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._rg and _STATE.grad_enabled and self._style == TORCH:
            raise errors.hinted(RuntimeError(
                errors.with_hint(
                    "Can't call numpy() on Tensor that requires grad. "
                    "Use tensor.detach().numpy() instead.",
                    "np.asarray(t) would drop the graph; detach explicitly",
                )
            ))
        arr = self._data
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        if copy:
            arr = arr.copy()
        return arr

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        from ..numpy_dispatch import array_ufunc

        return array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        from ..numpy_dispatch import array_function

        return array_function(func, types, args, kwargs)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self._data)

    def __iter__(self) -> Iterator[Tensor]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        for i in range(len(self._data)):
            yield self[i]

    def __bool__(self) -> bool:
        if self._lvl is not None:
            self._lvl_read("bool")
        if self._data.size != 1:
            raise errors.hinted(RuntimeError(
                errors.with_hint(
                    "Boolean value of Tensor with more than one value is ambiguous",
                    f"the tensor has shape {self._data.shape}: use .any() or .all()",
                )
            ))
        return bool(self._data)

    def __float__(self) -> float:
        h = STYLE_HOOKS[self._style].get("float")
        if h is not None:
            h(self)
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data)

    def __complex__(self) -> complex:
        return complex(self.item())

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        h = STYLE_HOOKS[self._style].get("repr")
        if h is not None:
            return h(self)
        body = np.array2string(self._data, separator=", ", prefix="tensor(")
        extra = ""
        if self._node is not None:
            extra = f", grad_fn=<{self._node.name()}>"
        elif self._rg:
            extra = ", requires_grad=True"
        return f"tensor({body}{extra})"

    def __str__(self) -> str:
        h = STYLE_HOOKS[self._style].get("str")
        return h(self) if h is not None else repr(self)

    def __format__(self, spec: str) -> str:
        h = STYLE_HOOKS[self._style].get("format")
        if h is not None:
            return h(self, spec)
        if self._data.ndim == 0:
            return format(self._data.item(), spec)
        return format(str(self), spec)

    def __copy__(self) -> Tensor:
        return self.clone()

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        if self._node is not None and self._style == TORCH:
            raise errors.hinted(RuntimeError(errors.with_hint(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may "
                "be because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001",
                "deepcopy t.detach() (or t.detach().requires_grad_()) instead")))
        t = make(self._data.copy(), None, self._rg, self._style)
        if self.grad is not None:
            t.grad = make(self.grad._data.copy(), None, False, self._style)
        d = getattr(self, "__dict__", None)
        if d:
            import copy as _copy

            for k, v in d.items():
                if k not in _NOT_COPIED:  # graph and transform state stays with the original
                    t.__dict__[k] = _copy.deepcopy(v, memo)
        if type(self) is not Tensor:
            t.__class__ = type(self)
        memo[id(self)] = t
        return t

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild, (self._data, self._rg, self._style))

    def clone(self) -> Tensor:
        from ..ops import clone

        return clone(self)

    # ------------------------------------------------------------------ operators
    def __add__(self, other: Any) -> Tensor:
        return _binary("add", self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _binary("add", other, self)

    def __sub__(self, other: Any) -> Tensor:
        return _binary("subtract", self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _binary("subtract", other, self)

    def __mul__(self, other: Any) -> Tensor:
        return _binary("multiply", self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _binary("multiply", other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return _binary("divide", self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _binary("divide", other, self)

    def __floordiv__(self, other: Any) -> Tensor:
        return _binary("floor_divide", self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _binary("floor_divide", other, self)

    def __mod__(self, other: Any) -> Tensor:
        return _binary("remainder", self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return _binary("remainder", other, self)

    def __pow__(self, other: Any) -> Tensor:
        h = STYLE_HOOKS[self._style].get("pow")  # TensorFlow's Pow has its own gradient
        if h is not None:
            return h(self, other)
        return _binary("power", self, other)

    def __rpow__(self, other: Any) -> Tensor:
        h = STYLE_HOOKS[self._style].get("pow")
        if h is not None:
            return h(other, self)
        return _binary("power", other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return _binary("matmul", self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _binary("matmul", other, self)

    def __neg__(self) -> Tensor:
        from ..ops import negative

        return negative(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        from ..ops import abs as _abs

        return _abs(self)

    def __invert__(self) -> Tensor:
        from ..ops import logical_not

        return logical_not(self)

    def __and__(self, other: Any) -> Tensor:
        return _binary("logical_and", self, other)

    def __rand__(self, other: Any) -> Tensor:
        return _binary("logical_and", other, self)

    def __or__(self, other: Any) -> Tensor:
        return _binary("logical_or", self, other)

    def __ror__(self, other: Any) -> Tensor:
        return _binary("logical_or", other, self)

    def __xor__(self, other: Any) -> Tensor:
        return _binary("logical_xor", self, other)

    def __lt__(self, other: Any) -> Tensor:
        return _binary("less", self, other)

    def __le__(self, other: Any) -> Tensor:
        return _binary("less_equal", self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _binary("greater", self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _binary("greater_equal", self, other)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _binary("equal", self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _binary("not_equal", self, other)

    # in-place operators: PyTorch semantics (modify this tensor, bump its version);
    # TensorFlow-style tensors are immutable, so ``x += 1`` rebinds (NotImplemented).
    def __iadd__(self, other: Any) -> Tensor:
        return _inplace_op(self, "add", other)

    def __isub__(self, other: Any) -> Tensor:
        return _inplace_op(self, "subtract", other)

    def __imul__(self, other: Any) -> Tensor:
        return _inplace_op(self, "multiply", other)

    def __itruediv__(self, other: Any) -> Tensor:
        return _inplace_op(self, "divide", other)

    def __ipow__(self, other: Any) -> Tensor:
        return _inplace_op(self, "power", other)

    def __getitem__(self, index: Any) -> Tensor:
        from ..ops import getitem

        try:
            return getitem(self, index)
        except IndexError as exc:
            # a front-end may word it as its framework does (TensorFlow: StridedSlice)
            h = STYLE_HOOKS[self._style].get("index_error")
            if h is None:
                raise
            raise h(self, index, exc) from None

    def __setitem__(self, index: Any, value: Any) -> None:
        from ..ops import setitem

        h = STYLE_HOOKS[self._style].get("setitem")
        if h is not None:
            h(self, index, value)
            return
        self._assign_result(setitem(self, index, value), "setitem")

    # ------------------------------------------------------------------ in-place core
    def _check_inplace(self, what: str) -> None:
        if self._node is None and self._rg and _STATE.grad_enabled:
            raise errors.hinted(RuntimeError(
                errors.with_hint(
                    errors.LEAF_INPLACE,
                    f"{what} on a leaf that requires grad: wrap the update in `with no_grad():` "
                    "or update `.data`",
                )
            ))

    def _assign_result(self, result: Tensor, what: str) -> Tensor:
        """Make this tensor hold ``result``: in place in storage, rebased in the graph."""
        self._check_inplace(what)
        data = result._data
        if data.shape != self._data.shape:
            raise errors.hinted(RuntimeError(
                errors.with_hint(
                    f"output with shape {list(self._data.shape)} doesn't match the broadcast "
                    f"shape {list(data.shape)}",
                    f"the in-place {what} would change the tensor's shape",
                )
            ))
        lv = result._lvl
        if lv is not None and lv.active:  # in place on a transform's tracer
            lv.assign(self, result)
        elif self._data.flags.writeable:
            np.copyto(self._data, data, casting="unsafe")
        else:
            self._data = data.astype(self._data.dtype)
        self._vc[0] += 1
        if result._node is not None and _STATE.grad_enabled:
            node = result._node
            node.out_vc = self._vc
            if node.versions is not None and not node.op.save_all:
                # a saved "out" is this tensor at its new version (e.g. ``y **= 3``)
                node.versions = tuple(
                    self._vc[0] if kind == 1 else v
                    for (kind, _), v in zip(node.op.save_codes, node.versions)
                )
            self._node = node
            self._rg = result._rg
        return self

    # ------------------------------------------------------------------ methods
    # numpy names and PyTorch names are both accepted where they do not clash.
    def _hook(self, name: str) -> Callable[..., Any] | None:
        return STYLE_HOOKS[self._style].get(name)

    def sum(self, axis: Any = None, keepdims: Any = None, *, dim: Any = None,
            keepdim: Any = None, dtype: Any = None) -> Tensor:
        from ..ops import sum as _sum

        return _sum(self, axis=_axis(axis, dim), keepdims=_keep(keepdims, keepdim))

    def mean(self, axis: Any = None, keepdims: Any = None, *, dim: Any = None,
             keepdim: Any = None, dtype: Any = None) -> Tensor:
        h = self._hook("mean")
        if h is not None:
            return h(self, _axis(axis, dim), _keep(keepdims, keepdim), dtype=dtype)
        from ..ops import mean

        return mean(self, axis=_axis(axis, dim), keepdims=_keep(keepdims, keepdim))

    def prod(self, axis: Any = None, keepdims: Any = None, *, dim: Any = None,
             keepdim: Any = None) -> Tensor:
        from ..ops import prod

        return prod(self, axis=_axis(axis, dim), keepdims=_keep(keepdims, keepdim))

    def max(self, *args: Any, **kwargs: Any) -> Any:
        h = self._hook("max")
        if h is not None:
            return h(self, *args, **kwargs)
        from ..ops import max as _max

        return _max(self, *args, **kwargs)

    def min(self, *args: Any, **kwargs: Any) -> Any:
        h = self._hook("min")
        if h is not None:
            return h(self, *args, **kwargs)
        from ..ops import min as _min

        return _min(self, *args, **kwargs)

    def var(self, *args: Any, **kwargs: Any) -> Tensor:
        h = self._hook("var")
        if h is not None:
            return h(self, *args, **kwargs)
        from ..ops import var

        return var(self, *args, **kwargs)

    def std(self, *args: Any, **kwargs: Any) -> Tensor:
        h = self._hook("std")
        if h is not None:
            return h(self, *args, **kwargs)
        from ..ops import std

        return std(self, *args, **kwargs)

    def reshape(self, *shape: Any, **kwargs: Any) -> Tensor:
        from ..ops import reshape

        if "shape" in kwargs:
            shp = kwargs.pop("shape")
        else:
            shp = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return reshape(self, tuple(shp) if not isinstance(shp, int) else (shp,))

    def transpose(self, *axes: Any) -> Tensor:
        h = self._hook("transpose")
        if h is not None:
            return h(self, *axes)
        from ..ops import transpose

        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = tuple(axes[0])
        return transpose(self, axes or None)

    @property
    def T(self) -> Tensor:
        from ..ops import transpose

        return transpose(self)

    def astype(self, dtype: Any) -> Tensor:
        from ..ops import cast

        return cast(self, dtype)

    def flatten(self, *args: Any, **kwargs: Any) -> Tensor:
        h = self._hook("flatten")
        if h is not None:
            return h(self, *args, **kwargs)
        return self.reshape(-1)

    def squeeze(self, axis: Any = None, *, dim: Any = None) -> Tensor:
        from ..ops import squeeze

        return squeeze(self, _axis(axis, dim))

    def exp(self) -> Tensor:
        from ..ops import exp

        return exp(self)

    def log(self) -> Tensor:
        from ..ops import log

        return log(self)

    def sqrt(self) -> Tensor:
        from ..ops import sqrt

        return sqrt(self)

    def tanh(self) -> Tensor:
        from ..ops import tanh

        return tanh(self)

    def sigmoid(self) -> Tensor:
        from ..ops import sigmoid

        return sigmoid(self)

    def relu(self) -> Tensor:
        from ..ops import relu

        return relu(self)

    def abs(self) -> Tensor:
        from ..ops import abs as _abs

        return _abs(self)

    def any(self, axis: Any = None) -> Tensor:
        from ..ops import any as _any

        return _any(self, axis=axis)

    def all(self, axis: Any = None) -> Tensor:
        from ..ops import all as _all

        return _all(self, axis=axis)

    def argmax(self, axis: Any = None, *, dim: Any = None, keepdim: bool = False) -> Tensor:
        from ..ops import argmax

        return argmax(self, axis=_axis(axis, dim), keepdims=keepdim)

    def argmin(self, axis: Any = None, *, dim: Any = None, keepdim: bool = False) -> Tensor:
        from ..ops import argmin

        return argmin(self, axis=_axis(axis, dim), keepdims=keepdim)


_NOT_COPIED = frozenset({"_acc", "_grad", "_lvl", "_primal", "_tangent", "_bval"})


def _rebuild(data: np.ndarray, rg: bool, style: int) -> Tensor:
    return make(data, None, rg, style)


_BINARY: dict[str, Callable[..., Any]] = {}


def _binary(name: str, a: Any, b: Any) -> Tensor:
    fn = _BINARY.get(name)
    if fn is None:
        from .. import ops

        fn = getattr(ops, name)
        _BINARY[name] = fn
    style = a._style if isinstance(a, Tensor) else b._style
    p = PROMOTE[style]
    if p is not None:
        a, b = p(a, b, name)
    return fn(a, b)


def _forward_operator(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    def operator(self: Tensor, other: Any) -> Any:
        p = PROMOTE[self._style]
        if p is None:
            return fn(self, other)
        a, b = p(self, other, name)
        return fn(a, b)

    return operator


def _reflected_operator(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    def operator(self: Tensor, other: Any) -> Any:
        p = PROMOTE[self._style]
        if p is None:
            return fn(other, self)
        a, b = p(other, self, name)
        return fn(a, b)

    return operator


def install_fast_operators(ops: Any) -> None:
    """Bind the hot arithmetic operators straight to their ops.

    Called once by ``tapegrad.ops`` (which imports this module, so the class
    body cannot reference the ops); saves a name lookup and a call per op.
    """
    for fwd, rev, name in (("__add__", "__radd__", "add"), ("__sub__", "__rsub__", "subtract"),
                           ("__mul__", "__rmul__", "multiply"),
                           ("__truediv__", "__rtruediv__", "divide"),
                           ("__matmul__", "__rmatmul__", "matmul")):
        fn = getattr(ops, name)
        _BINARY[name] = fn
        f = _forward_operator(fn, name)
        r = _reflected_operator(fn, name)
        f.__name__, f.__qualname__ = fwd, f"Tensor.{fwd}"
        r.__name__, r.__qualname__ = rev, f"Tensor.{rev}"
        setattr(Tensor, fwd, f)
        setattr(Tensor, rev, r)


def _inplace_op(t: Tensor, name: str, other: Any) -> Tensor:
    h = STYLE_HOOKS[t._style].get("inplace")
    if h is not None:
        return h(t, name, other)
    t._check_inplace(f"in-place {name}")
    src = t
    if name not in ("add", "subtract") and _STATE.grad_enabled and (
        t._node is not None or t._rg or _STATE.tapes
        or (isinstance(other, Tensor) and (other._rg or other._node is not None))
    ):
        # the op saves its input for backward and t is about to be overwritten: give it a
        # snapshot of t (PyTorch saves ``original_self`` for in-place ops the same way)
        src = _snapshot(t)
    return t._assign_result(_binary(name, src, other), f"in-place {name}")


def _snapshot(t: Tensor) -> Tensor:
    """A copy of ``t``'s value that keeps its graph identity (and its tracer fields)."""
    lv = t._lvl
    if lv is None or not lv.active:
        src = make(t._data.copy(), t._node, t._rg, t._style)
        src._acc = t._acc
        return src
    from .dispatch import copy_tracer

    src = make(t._data, t._node, t._rg, t._style)
    src._acc = t._acc
    copy_tracer(t, src)
    if "_primal" in t.__dict__:  # forward mode changes the primal in place: keep its value
        src._primal = _snapshot(t._primal)
        src._data = src._primal._data
    return src
