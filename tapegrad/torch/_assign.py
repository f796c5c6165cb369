"""PyTorch's indexed assignment forms: ``x[i] = v`` checks, ``index_put_``, ``scatter_``, ...

Each out-of-place form (``torch.index_add``, ``torch.scatter``, ...) is
written with the core's recorded ``setitem`` / ``index_add_zeros`` /
``getitem``, so gradients flow to ``self`` and to the source as in PyTorch;
the in-place form (``x.index_add_(...)``) writes the result into ``x`` with
PyTorch's leaf and version checks.  ``x[i] = v`` refuses lists, arrays and
strings (``TypeError: can't assign a list to a torch.FloatTensor``) and a
value that does not broadcast (PyTorch's "expanded size" ``RuntimeError``),
as PyTorch does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import ops as core
from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from ..ops.shape import _norm_index
from ._dtype import from_np

_LEGACY = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
           "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
           "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
           "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor"}


def _legacy_name(t: Tensor) -> str:
    return "torch." + _LEGACY.get(t._data.dtype.name, "Tensor")


def _check_broadcast(target: tuple[int, ...], value: tuple[int, ...]) -> None:
    """PyTorch's ``expand`` check of a value against the place it is written to."""
    v = list(value)
    while len(v) > len(target) and v[0] == 1:
        v.pop(0)
    if len(v) > len(target):
        raise hinted(RuntimeError(with_hint(
            f"expand(torch.FloatTensor{{{list(value)}}}, size={list(target)}): the number of "
            "sizes provided must be greater or equal to the number of dimensions in the tensor",
            f"the value of shape {list(value)} has more dimensions than its place")))
    off = len(target) - len(v)
    for i, n in enumerate(v):
        if n != 1 and n != target[off + i]:
            raise hinted(RuntimeError(with_hint(
                f"The expanded size of the tensor ({target[off + i]}) must match the existing "
                f"size ({n}) at non-singleton dimension {off + i}.  Target sizes: "
                f"{list(target)}.  Tensor sizes: {list(value)}",
                f"x[index] has shape {list(target)}; the value must broadcast to it")))


def checked_setitem(base_hook: Any) -> Any:
    """The PyTorch-style ``x[index] = value`` with PyTorch's value checks first."""

    def hook(t: Tensor, index: Any, value: Any) -> None:
        if isinstance(value, (list, tuple, str, bytes, np.ndarray, dict, set)):
            kind = "numpy.ndarray" if isinstance(value, np.ndarray) else type(value).__name__
            raise hinted(TypeError(with_hint(f"can't assign a {kind} to a {_legacy_name(t)}",
                                      "wrap the value: x[i] = torch.tensor(value)")))
        if isinstance(value, Tensor):
            try:
                target = np.empty(t._data.shape, dtype=np.bool_)[_norm_index(index)].shape
            except (IndexError, TypeError, ValueError):
                target = None
            if target is not None:
                _check_broadcast(tuple(target), tuple(value._data.shape))
        base_hook(t, index, value)

    return hook


# ----------------------------------------------------------------------------- helpers
def _t(x: Any) -> Tensor:
    from ._tensor import tensor

    return x if isinstance(x, Tensor) else tensor(x)


def _dim(dim: int, nd: int) -> int:
    n = max(nd, 1)
    if not -n <= dim < n:
        raise hinted(IndexError(with_hint(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})",
            f"the tensor has {nd} dimensions")))
    return dim % n


def _long_index(index: Any, what: str) -> Any:
    """The index as an array; a vmap tracer stays a tensor (an input of the op: its values
    differ per example and cannot be read)."""
    idx = index._data if isinstance(index, Tensor) else np.asarray(index)
    if idx.dtype != np.int64:
        raise hinted(RuntimeError(with_hint(f"{what}(): Expected dtype int64 for index",
                                     "index tensors are torch.long")))
    from ._ops import _vmapped

    if _vmapped(index):
        return index
    return idx


def _scalar(d: np.dtype) -> str:
    """PyTorch's scalar-type name (``Float``, ``Double``, ...)."""
    from ._methods import _scalar_name

    return _scalar_name(d)


def _along(dim: int, nd: int, idx: np.ndarray) -> tuple[Any, ...]:
    return (slice(None),) * dim + (idx,) + (slice(None),) * (nd - dim - 1)


def _scatter_index(dim: int, index: np.ndarray) -> tuple[np.ndarray, ...]:
    """``out[index[i][j]][j] = src[i][j]`` (dim 0) as a NumPy index, for any dim."""
    grids: list[np.ndarray] = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(np.broadcast_arrays(*grids))


def _as_source(src: Any, like: Tensor) -> Tensor:
    s = _t(src)
    if s._data.dtype != like._data.dtype:
        s = core.cast(s, dtype=like._data.dtype)
    return s


# ----------------------------------------------------------------------------- out of place
def index_put(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """``x[indices] = values`` (``+=`` with repeats accumulated when ``accumulate``)."""
    v = _as_source(values, input)
    from ._ops import _traced

    if not accumulate and any(_traced(i) for i in indices):
        # indices that differ between calls (torch.compile): inputs of the op
        return core.setitem(input, tuple(indices), v)
    index = tuple(_norm_index(i) for i in indices)
    if accumulate:
        return core.add(input, core.index_add_zeros(
            core.broadcast_to(v, input._data[index].shape), index=index,
            shape=tuple(input._data.shape)))
    return core.setitem(input, index, v)


def index_add(input: Tensor, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Tensor:
    """Add ``alpha * source`` into the rows ``index`` along ``dim`` (repeats accumulate)."""
    d = _dim(dim, input._data.ndim)
    idx = _long_index(index, "index_add")
    if isinstance(source, Tensor) and source._data.dtype != input._data.dtype:
        raise hinted(RuntimeError(with_hint(
            f"index_add_(): self ({_scalar(input._data.dtype)}) and source "
            f"({_scalar(source._data.dtype)}) must have the same scalar type",
            "cast source to the tensor's dtype first")))
    src = _as_source(source, input)
    if alpha != 1:
        src = core.multiply(src, alpha)
    add = core.index_add(src, _along(d, input._data.ndim, idx), tuple(input._data.shape))
    return core.add(input, add)


def index_copy(input: Tensor, dim: int, index: Any, source: Any) -> Tensor:
    """Copy ``source`` into the rows ``index`` along ``dim``."""
    d = _dim(dim, input._data.ndim)
    idx = _long_index(index, "index_copy")
    return core.setitem(input, _along(d, input._data.ndim, idx), _as_source(source, input))


def index_fill(input: Tensor, dim: int, index: Any, value: Any) -> Tensor:
    """Fill the rows ``index`` along ``dim`` with ``value``."""
    d = _dim(dim, input._data.ndim)
    idx = _long_index(index, "index_fill")
    v = value if not isinstance(value, Tensor) else core.cast(value, dtype=input._data.dtype)
    return core.setitem(input, _along(d, input._data.ndim, idx), v)


def scatter(input: Tensor, dim: int, index: Any, src: Any = None, *, value: Any = None,
            reduce: str | None = None) -> Tensor:
    """``out[index[i][j]][j] = src[i][j]`` along ``dim`` (``reduce='add'`` accumulates)."""
    d = _dim(dim, input._data.ndim)
    idx = _long_index(index, "scatter")
    from ._ops import _vmapped

    if _vmapped(index):  # a vmap tracer: the index is an input of the op
        grids: list[Any] = list(np.indices(tuple(idx.shape), sparse=True))
        grids[d] = index
        where: tuple[Any, ...] = tuple(grids)
    else:
        where = _scatter_index(d, idx)
    if src is None:
        src = value
    if isinstance(src, Tensor):
        if src._data.dtype != input._data.dtype:
            raise hinted(RuntimeError(with_hint(
                "scatter(): Expected self.dtype to be equal to src.dtype",
                f"cast src to {from_np(input._data.dtype)} first")))
        part = core.getitem(_as_source(src, input), tuple(
            slice(0, n) for n in idx.shape))
    else:
        part = core.cast(core.broadcast_to(_t(src), idx.shape), dtype=input._data.dtype)
    if reduce in ("add", "sum"):
        return core.add(input, core.index_add(part, where, tuple(input._data.shape)))
    if reduce is not None:
        raise hinted(RuntimeError(with_hint(f"reduce argument must be either add or multiply, got "
                                     f"{reduce}", "tapegrad supports reduce='add'")))
    return core.setitem(input, where, part)


def scatter_add(input: Tensor, dim: int, index: Any, src: Any) -> Tensor:
    """``out[index[i][j]][j] += src[i][j]`` along ``dim`` (repeats accumulate)."""
    return scatter(input, dim, index, src, reduce="add")


def masked_scatter(input: Tensor, mask: Any, source: Any) -> Tensor:
    """The elements of ``source``, in order, written where ``mask`` is True."""
    m = np.broadcast_to(mask._data if isinstance(mask, Tensor) else np.asarray(mask),
                        input._data.shape)
    src = _as_source(source, input)
    n = int(m.sum())
    if src._data.size < n:
        raise hinted(RuntimeError(with_hint("masked_scatter: expected source to have at least as many "
                                     "elements as ones in mask",
                                     f"the mask selects {n}, the source has {src._data.size}")))
    part = core.getitem(core.reshape(src, (-1,)), slice(0, n))
    return core.setitem(input, m, part)


def _fill_diagonal(input: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    nd = input._data.ndim
    if nd < 2:
        raise hinted(RuntimeError(with_hint("dimensions must larger than 1", "pass a matrix")))
    shape = input._data.shape
    if nd > 2 and len(set(shape)) != 1:
        raise hinted(RuntimeError(with_hint("all dimensions of input must be of equal length",
                                     f"the shape is {list(shape)}")))
    n = min(shape)
    idx = np.arange(n)
    index: tuple[Any, ...] = (idx,) * nd
    if wrap and nd == 2 and shape[0] > shape[1] + 1:
        rows = np.arange(shape[0])
        rows = rows[(rows % (shape[1] + 1)) < shape[1]]
        index = (rows, rows % (shape[1] + 1))
    return core.setitem(input, index, fill_value)


FUNCTIONS: dict[str, Callable[..., Tensor]] = {"index_put": index_put, "index_add": index_add, "index_copy": index_copy,
             "index_fill": index_fill, "scatter": scatter, "scatter_add": scatter_add,
             "masked_scatter": masked_scatter}


def method_names() -> list[str]:
    """The Tensor methods this module adds (for the keyword aliases)."""
    return [n for f in FUNCTIONS for n in (f, f + "_")] + ["fill_diagonal_"]


def install() -> None:
    """Methods (both forms) on the PyTorch-style tensor class and the checked ``x[i] = v`` hook."""
    from ._methods import _ip
    from ._tensor import TorchTensor as cls

    if cls.__dict__.get("_torch_assign", False):
        return
    for name, fn in FUNCTIONS.items():
        if not hasattr(cls, name):
            setattr(cls, name, fn)
        setattr(cls, name + "_", _ip(name + "_", fn))
    cls.fill_diagonal_ = _ip("fill_diagonal_", _fill_diagonal)  # type: ignore[attr-defined]
    cls.__setitem__ = checked_setitem(cls.__setitem__)  # type: ignore[method-assign]
    cls._torch_assign = True  # type: ignore[attr-defined]
