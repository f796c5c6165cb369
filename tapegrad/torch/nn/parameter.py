"""``torch.nn.Parameter``: a thin tensor type that modules register automatically."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._core.tensor import TORCH, Tensor
from .._print import tensor_repr
from .._tensor import TorchTensor


class Parameter(TorchTensor):
    """A leaf tensor that requires grad (by default) and is registered by ``Module``.

    It shares storage with the tensor it wraps, as in PyTorch.

    >>> import tapegrad.torch as torch
    >>> torch.nn.Parameter(torch.zeros(2))
    Parameter containing:
    tensor([0., 0.], requires_grad=True)
    """

    def __new__(cls, data: Any = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            arr = np.zeros(0, dtype=np.float32)
        elif isinstance(data, Tensor):
            arr = data._data
        else:
            arr = np.asarray(data)
        p = object.__new__(cls)
        p._data = arr
        p._node = None
        p._rg = False
        p._grad = None
        p._vc = data._vc if isinstance(data, Tensor) else [0]
        p._acc = None
        p._tv = False
        p._retains = False
        if requires_grad:
            p.requires_grad = True
        return p

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + tensor_repr(self)

    def __str__(self) -> str:
        return self.__repr__()

    def __format__(self, spec: str) -> str:
        if spec:
            raise TypeError("unsupported format string passed to Parameter.__format__")
        return str(self)

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild_parameter, (self._data, self._rg))


def _rebuild_parameter(data: np.ndarray, requires_grad: bool) -> Parameter:
    return Parameter(_plain(data), requires_grad)


def _plain(data: np.ndarray) -> Tensor:
    from ..._core.tensor import make

    return make(data, None, False, TORCH)


class Buffer(TorchTensor):
    """Marker type: ``Module`` registers a ``Buffer`` attribute as a buffer."""

    def __new__(cls, data: Any = None, *, persistent: bool = True) -> Buffer:
        from ..._core.tensor import make

        arr = data._data if isinstance(data, Tensor) else np.asarray(
            [] if data is None else data)
        t = make(arr, None, False, TORCH)
        t.__dict__["_persistent"] = persistent
        return t  # type: ignore[return-value]


_UNINIT_USE = ("Attempted to use an uninitialized parameter in {}. This error happens when you "
               "are using a `LazyModule` or explicitly manipulating "
               "`torch.nn.parameter.UninitializedParameter` objects. When using LazyModules Call "
               "`forward` with a dummy batch to initialize the parameters before calling torch "
               "functions")


class UninitializedParameter(Parameter):
    """A parameter without a shape yet (lazy modules): :meth:`materialize` gives it one and
    turns it into a plain :class:`Parameter`, the same object, so an optimizer made before
    sees the materialized values.

    >>> import tapegrad.torch as torch
    >>> torch.nn.UninitializedParameter()
    <UninitializedParameter>
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None,
                dtype: Any = None) -> UninitializedParameter:
        from .._dtype import to_np

        dt = np.float32 if dtype is None else to_np(dtype)
        p = Parameter.__new__(cls, _plain(np.empty(0, dtype=dt)), requires_grad)
        return p  # type: ignore[return-value]

    def __init__(self, requires_grad: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        pass

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the parameter ``shape`` (uninitialized values, in its dtype unless ``dtype``)
        and make it a :class:`Parameter`."""
        from .._dtype import to_np

        dt = self._data.dtype if dtype is None else to_np(dtype)
        shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
        self._data = np.empty(shape, dtype=dt)
        self._vc[0] += 1
        self.__class__ = self.cls_to_become  # type: ignore[assignment]

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes.")

    def size(self, *args: Any) -> Any:
        raise ValueError(_UNINIT_USE.format("<method 'size' of 'torch._C.TensorBase' objects>"))

    def numel(self) -> Any:
        raise ValueError(_UNINIT_USE.format("<method 'numel' of 'torch._C.TensorBase' objects>"))

    def __repr__(self) -> str:
        return "<UninitializedParameter>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (UninitializedParameter, (self._rg,))


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an :class:`UninitializedParameter` (not materialized yet)."""
    return isinstance(param, UninitializedParameter)
