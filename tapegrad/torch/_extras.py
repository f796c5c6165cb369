"""Small PyTorch functions textbook code reaches for (issue 16): ``torch.meshgrid``."""

from __future__ import annotations

import warnings
from typing import Any

from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 0-d/1-d tensors (recorded: gradients flow back).

    ``indexing='ij'`` (PyTorch's default, with PyTorch's warning when it is
    not given) puts the first tensor along dimension 0; ``'xy'`` swaps the
    first two, as NumPy and ``tf.meshgrid`` do.

    Examples
    --------
    >>> import tapegrad.torch as torch
    >>> x, y = torch.meshgrid(torch.arange(3.0), torch.arange(2.0), indexing="xy")
    >>> x.shape
    torch.Size([2, 3])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise hinted(RuntimeError(with_hint(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}',
            "indexing='ij' is matrix indexing, 'xy' Cartesian (NumPy's default)")))
    if not tensors:
        raise hinted(RuntimeError(with_hint("meshgrid expects a non-empty TensorList",
                                     "pass at least one tensor")))
    for t in tensors:
        if not isinstance(t, Tensor):
            raise hinted(TypeError(with_hint(
                f"meshgrid(): argument 'tensors' must be tuple of Tensors, not "
                f"{type(t).__name__}", "wrap numbers with torch.tensor()")))
        if t._data.ndim > 1:
            raise hinted(RuntimeError(with_hint(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                f"{t!r}", f"got a tensor of shape {tuple(t._data.shape)}; flatten it first")))
    if len({t._data.dtype for t in tensors}) > 1:
        raise hinted(RuntimeError(with_hint("meshgrid expects all tensors to have the same dtype",
                                     "cast them to one dtype first")))
    seq = list(tensors)
    swap = indexing == "xy" and len(seq) >= 2
    if swap:
        seq[0], seq[1] = seq[1], seq[0]
    sizes = [int(t._data.size) for t in seq]
    out = []
    for i, t in enumerate(seq):
        view = [1] * len(seq)
        view[i] = sizes[i]
        out.append(t.reshape(*view).expand(*sizes))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def inner(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    """``torch.inner``: sums over the last axes (``x.shape[:-1] + y.shape[:-1]``).

    1-D operands give their dot product; a scalar operand multiplies.

    >>> import tapegrad.torch as torch
    >>> torch.inner(torch.ones(2, 3), torch.ones(4, 3)).shape
    torch.Size([2, 4])
    """
    from . import _ops

    if input._data.ndim == 0 or other._data.ndim == 0:
        return _ops.mul(input, other)
    k, k2 = input._data.shape[-1], other._data.shape[-1]
    if k != k2:
        raise hinted(RuntimeError(with_hint(
            f"inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input._data.shape)} and {list(other._data.shape)}",
            "torch.inner sums over the last dimension of both")))
    if input._data.ndim == 1 and other._data.ndim == 1:
        return _ops.dot(input, other)
    a = input.reshape(-1, k)
    b = other.reshape(-1, k)
    return _ops.matmul(a, _ops.t(b)).reshape(*input._data.shape[:-1], *other._data.shape[:-1])


def moveaxis(input: Tensor, source: Any, destination: Any) -> Tensor:
    """``torch.moveaxis``: NumPy's name for :func:`torch.movedim`."""
    from . import _ops

    return _ops.movedim(input, source, destination)


def ravel(input: Tensor) -> Tensor:
    """``torch.ravel``: the elements as one dimension (a view when possible)."""
    return input.reshape(-1)


def fix(input: Tensor, *, out: Any = None) -> Tensor:
    """``torch.fix``: NumPy's name for :func:`torch.trunc`."""
    from . import _ops

    return _ops.trunc(input)


def sgn(input: Tensor, *, out: Any = None) -> Tensor:
    """``torch.sgn``: the sign (``z / |z|`` for complex tensors, ``sign`` for real ones)."""
    from . import _ops

    if input._data.dtype.kind == "c":
        mag = _ops.abs(input)
        return _ops.where(mag == 0, input * 0, input / _ops.where(mag == 0, mag + 1, mag))
    return _ops.sign(input)


def _any_all(name: str) -> Any:
    """Tensor.any / all / sum / prod: PyTorch's ``dim``/``keepdim``/``dtype`` for PyTorch-style
    tensors (the core methods take NumPy's arguments)."""
    from .._core.tensor import TORCH
    from . import _ops

    core = Tensor.__dict__[name]
    torch_fn = getattr(_ops, name)

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        if self._style == TORCH:
            return torch_fn(self, *args, **kwargs)
        return core(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = core.__doc__
    return method


def install() -> None:
    """Methods the PyTorch style needs on its tensor class: ``inner``, ``moveaxis``,
    ``ravel``, and ``any``/``all`` with ``dim``/``keepdim``."""
    from ._tensor import TorchTensor as cls

    if cls.__dict__.get("_torch_extras", False):
        return
    cls.inner = lambda self, other: inner(self, other)  # type: ignore[attr-defined]
    cls.moveaxis = lambda self, s, d: moveaxis(self, s, d)  # type: ignore[attr-defined]
    cls.ravel = lambda self: ravel(self)  # type: ignore[attr-defined]
    cls.fix = lambda self: fix(self)  # type: ignore[attr-defined]
    cls.sgn = lambda self: sgn(self)  # type: ignore[attr-defined]
    if not hasattr(cls, "absolute"):
        cls.absolute = lambda self: self.abs()  # type: ignore[attr-defined]
    for name in ("any", "all", "sum", "prod"):
        setattr(cls, name, _any_all(name))
    cls._torch_extras = True  # type: ignore[attr-defined]
