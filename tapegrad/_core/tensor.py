"""``tapegrad.Tensor``: one array type for both front-ends.

A tensor is a NumPy array (``_data``) plus the node that made it (``_node``,
``None`` for a leaf), whether it is tracked (``_rg``: PyTorch's
``requires_grad``), ``grad``, and a version counter shared with its views.
The PyTorch-style and TensorFlow-style tensors are subclasses
(``tapegrad.torch.Tensor``, ``tapegrad.tf``'s ``EagerTensor``) with their own
printing, promotion and methods; each style's class is registered in
:data:`CLASSES` under its style number (``_style``, a class attribute), so an
op's output is made of the class of its inputs' style.

This module imports nothing above ``_core``: the operators and the methods
that run ops (``+``, ``sum``, ``reshape``, ``backward``, ...) are bound onto
:class:`Tensor` by :mod:`tapegrad.ops.tensor_methods` (as HIPS autograd binds
``ArrayBox``'s operators in ``numpy_boxes.py``), so the class can be read and
tested alone.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from . import errors, mode
from .node import Node

CORE, TORCH, TF = 0, 1, 2

_STATE = mode.STATE
_new = object.__new__


def make(data: np.ndarray, node: Node | None = None, rg: bool = False, style: int = 0) -> Tensor:
    """Wrap an ndarray without copying (internal fast path), as a tensor of ``style``."""
    t = _new(CLASSES[style])
    t._data = data
    t._node = node
    t._rg = rg
    t._vc = [0]
    return t


def register_style(style: int, cls: type[Tensor]) -> None:
    """Make ``cls`` the class of the tensors of front-end ``style`` (called by a front-end)."""
    if cls._style != style:
        raise ValueError(f"{cls.__name__}._style is {cls._style}, not {style}")
    CLASSES[style] = cls


def set_style(t: Tensor, style: int) -> Tensor:
    """Turn ``t`` itself into a tensor of ``style`` (its identity and graph kept).

    Only a plain tensor of a style changes class; a special one (a parameter,
    a variable) keeps its own type.
    """
    if t._style != style and type(t) is CLASSES[t._style]:
        t.__class__ = CLASSES[style]
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
    return set_style(t, style)


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
    __slots__ = ("_data", "_node", "_rg", "_vc", "__weakref__", "__dict__")
    __array_priority__ = 1000

    _data: np.ndarray
    _node: Node | None
    _rg: bool
    _grad: Tensor | None = None
    _vc: list[int]
    _acc: Any = None
    # the front-end style of this class (see CLASSES) and its binary-operand promotion,
    # f(a, b, opname) -> (a, b); None: NumPy's rules
    _style: int = CORE
    _promote: Callable[[Any, Any, str], tuple[Any, Any]] | None = None
    # the engine's error texts in this style's words, by key (empty: the core's words)
    _messages: dict[str, Callable[..., str]] = {}
    _tv: bool = False
    _retains: bool = False
    # a view's root tensor, and the family of a root's live views (tapegrad.torch's
    # views: an object with check(t, what) and rebase(t, node, grad)); None: no view
    _vbase: Any = None
    _family: Any = None
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
            self._check_requires_grad()
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
            self._read_nonleaf_grad()
        return g

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if _STATE.levels:  # a trace records the write
            from .dispatch import control

            th = control("set_grad")
            if th is not None:
                th(self, value)
        self._grad = self._checked_grad(value)

    # -- what a front-end's subclass may refine (the core's versions accept everything)
    def _check_requires_grad(self) -> None:
        """Called before ``requires_grad`` is set to True (a front-end may refuse)."""

    def _read_nonleaf_grad(self) -> None:
        """Called when ``.grad`` of a non-leaf that keeps none is read (PyTorch warns)."""

    def _checked_grad(self, value: Tensor | None) -> Tensor | None:
        """What ``t.grad = value`` stores (a front-end checks shape and dtype)."""
        return value

    def _wrap_hook(self, hook: Callable[..., Any]) -> Callable[..., Any]:
        """The tensor hook as the engine calls it (a front-end checks what it returns)."""
        return hook

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

        return _add_hook(edge_of(self), self._wrap_hook(hook))

    def detach(self) -> Tensor:
        """A tensor sharing storage (and version counter), outside the graph."""
        lv = self._lvl
        if lv is not None and lv.active:  # a transform's tracer stays one
            return set_style(lv.detach(self), self._style)
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
        return self._data

    @property
    def shape(self) -> Any:
        return self._data.shape

    def _shape_tuple(self) -> tuple[Any, ...]:
        """The shape a front-end shows: symbolic for an input traced with a generalized
        signature (tf.function's ``reduce_retracing``), else the array's."""
        return self.__dict__.get("_sym_shape", self._data.shape)

    def _traced_text(self) -> str | None:
        """How a tensor being traced prints (a trace's symbolic value), else None."""
        lv = self._lvl
        if lv is not None and lv.active and lv.catch_all:
            return lv.show(self)
        return None

    @property
    def dtype(self) -> Any:
        return self._data.dtype

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
        arr = self._data
        if arr.__class__ is not np.ndarray:  # a loop variable's value while it is traced
            taken = getattr(arr, "_value_taken", None)
            if taken is not None:
                arr = taken()
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        if copy:
            arr = arr.copy()
        return arr

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
        sym = self._traced_text()
        if sym is not None:
            return sym
        body = np.array2string(self._data, separator=", ", prefix="tensor(")
        extra = ""
        if self._node is not None:
            extra = f", grad_fn=<{self._node.name()}>"
        elif self._rg:
            extra = ", requires_grad=True"
        return f"tensor({body}{extra})"

    def __str__(self) -> str:
        sym = self._traced_text()
        return sym if sym is not None else repr(self)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return format(self._data.item(), spec)
        return format(str(self), spec)

    def __copy__(self) -> Tensor:
        return self.clone()

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        t = make(self._data.copy(), None, self._rg, self._style)
        if self.grad is not None:
            t.grad = make(self.grad._data.copy(), None, False, self._style)
        d = getattr(self, "__dict__", None)
        if d:
            import copy as _copy

            for k, v in d.items():
                if k not in _NOT_COPIED:  # graph and transform state stays with the original
                    t.__dict__[k] = _copy.deepcopy(v, memo)
        if type(t) is not type(self):
            t.__class__ = type(self)
        memo[id(self)] = t
        return t

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild, (self._data, self._rg, self._style))

    # ------------------------------------------------------------------ in-place core
    def _check_inplace(self, what: str) -> None:
        fam = self._family
        if fam is not None:
            fam.check(self, what)
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
        recorded = None
        if result._node is not None and _STATE.grad_enabled:
            node = recorded = result._node
            node.out_vc = self._vc
            if node.versions is not None and not node.op.save_all:
                # a saved "out" is this tensor at its new version (e.g. ``y **= 3``)
                node.versions = tuple(
                    self._vc[0] if kind == 1 else v
                    for (kind, _), v in zip(node.op.save_codes, node.versions)
                )
            old = self._node
            self._node = node
            self._rg = result._rg
            if self._retains and old is not node:  # the retained gradient is the new value's
                _move_retain(self, old, node)
        fam = self._family
        if fam is not None:
            fam.rebase(self, recorded, _STATE.grad_enabled)
        return self
    # -- bound by tapegrad.ops.tensor_methods (above ops); declared here for type checkers
    if TYPE_CHECKING:
        def __add__(self, other: Any) -> Tensor: ...
        def __radd__(self, other: Any) -> Tensor: ...
        def __sub__(self, other: Any) -> Tensor: ...
        def __rsub__(self, other: Any) -> Tensor: ...
        def __mul__(self, other: Any) -> Tensor: ...
        def __rmul__(self, other: Any) -> Tensor: ...
        def __truediv__(self, other: Any) -> Tensor: ...
        def __rtruediv__(self, other: Any) -> Tensor: ...
        def __floordiv__(self, other: Any) -> Tensor: ...
        def __rfloordiv__(self, other: Any) -> Tensor: ...
        def __mod__(self, other: Any) -> Tensor: ...
        def __rmod__(self, other: Any) -> Tensor: ...
        def __pow__(self, other: Any) -> Tensor: ...
        def __rpow__(self, other: Any) -> Tensor: ...
        def __matmul__(self, other: Any) -> Tensor: ...
        def __rmatmul__(self, other: Any) -> Tensor: ...
        def __and__(self, other: Any) -> Tensor: ...
        def __rand__(self, other: Any) -> Tensor: ...
        def __or__(self, other: Any) -> Tensor: ...
        def __ror__(self, other: Any) -> Tensor: ...
        def __xor__(self, other: Any) -> Tensor: ...
        def __rxor__(self, other: Any) -> Tensor: ...
        def __lt__(self, other: Any) -> Tensor: ...
        def __le__(self, other: Any) -> Tensor: ...
        def __gt__(self, other: Any) -> Tensor: ...
        def __ge__(self, other: Any) -> Tensor: ...
        def __eq__(self, other: Any) -> Tensor: ...  # type: ignore[override]
        def __ne__(self, other: Any) -> Tensor: ...  # type: ignore[override]
        def __iadd__(self, other: Any) -> Tensor: ...
        def __isub__(self, other: Any) -> Tensor: ...
        def __imul__(self, other: Any) -> Tensor: ...
        def __itruediv__(self, other: Any) -> Tensor: ...
        def __ipow__(self, other: Any) -> Tensor: ...
        def _inplace(self, name: str, other: Any) -> Tensor: ...
        def __neg__(self) -> Tensor: ...
        def __pos__(self) -> Tensor: ...
        def __abs__(self) -> Tensor: ...
        def __invert__(self) -> Tensor: ...
        def __getitem__(self, index: Any) -> Tensor: ...
        def __setitem__(self, index: Any, value: Any) -> None: ...
        def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any: ...
        def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any: ...
        def backward(self, gradient: Any = None, retain_graph: bool | None = None,
                     create_graph: bool = False, inputs: Any = None) -> None: ...
        def clone(self) -> Tensor: ...
        def sum(self, axis: Any = None, keepdims: Any = None, *, dim: Any = None,
                keepdim: Any = None, dtype: Any = None) -> Tensor: ...
        def mean(self, axis: Any = None, keepdims: Any = None, *, dim: Any = None,
                 keepdim: Any = None, dtype: Any = None) -> Tensor: ...
        def prod(self, axis: Any = None, keepdims: Any = None, *, dim: Any = None,
                 keepdim: Any = None) -> Tensor: ...
        def max(self, *args: Any, **kwargs: Any) -> Any: ...
        def min(self, *args: Any, **kwargs: Any) -> Any: ...
        def var(self, *args: Any, **kwargs: Any) -> Tensor: ...
        def std(self, *args: Any, **kwargs: Any) -> Tensor: ...
        def reshape(self, *shape: Any, **kwargs: Any) -> Tensor: ...
        def transpose(self, *axes: Any) -> Tensor: ...
        @property
        def T(self) -> Tensor: ...
        def astype(self, dtype: Any) -> Tensor: ...
        def flatten(self, *args: Any, **kwargs: Any) -> Tensor: ...
        def squeeze(self, axis: Any = None, *, dim: Any = None) -> Tensor: ...
        def exp(self) -> Tensor: ...
        def log(self) -> Tensor: ...
        def sqrt(self) -> Tensor: ...
        def tanh(self) -> Tensor: ...
        def sigmoid(self) -> Tensor: ...
        def relu(self) -> Tensor: ...
        def abs(self) -> Tensor: ...
        def any(self, axis: Any = None) -> Tensor: ...
        def all(self, axis: Any = None) -> Tensor: ...
        def argmax(self, axis: Any = None, *, dim: Any = None, keepdim: bool = False) -> Tensor: ...
        def argmin(self, axis: Any = None, *, dim: Any = None, keepdim: bool = False) -> Tensor: ...


_NOT_COPIED = frozenset({"_acc", "_grad", "_lvl", "_primal", "_tangent", "_bval", "_vbase",
                         "_family", "_vidx", "_vmulti", "_vnograd", "_vbidx", "_vover"})


def _move_retain(t: Tensor, old: Node | None, new: Node | None) -> None:
    """``t.retain_grad()`` follows ``t`` from node ``old`` to ``new`` (an in-place op)."""
    if old is not None and old.retain is not None and old.retain() is t:
        old.retain = None
    if new is not None:
        new.retain = weakref.ref(t)


def _rebuild(data: np.ndarray, rg: bool, style: int) -> Tensor:
    return make(data, None, rg, style)


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


CLASSES: list[type[Tensor]] = [Tensor, Tensor, Tensor]
"""The tensor class of each style (CORE, TORCH, TF); front-ends register theirs."""
