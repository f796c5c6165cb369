"""``default_collate`` and ``default_convert``: PyTorch's rules for turning a list of
samples into a batch.

Tensors are stacked; NumPy arrays become tensors and are stacked; NumPy scalars
become a tensor; Python floats a float64 tensor, ints an int64 tensor; strings
stay a list; dicts, namedtuples and sequences are collated field by field
(a batch of tuples gives a *list* of batches, as in PyTorch).

>>> import numpy as np
>>> from tapegrad.torch.utils.data import default_collate
>>> default_collate([(1, 0.5, "a"), (2, 1.5, "b")])
[tensor([1, 2]), tensor([0.5000, 1.5000], dtype=torch.float64), ('a', 'b')]
>>> default_collate([{"x": np.zeros(2)}, {"x": np.ones(2)}])
{'x': tensor([[0., 0.],
        [1., 1.]], dtype=torch.float64)}
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ...._core.tensor import Tensor

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, "
    "dicts or lists; found {}"
)


def _t() -> Any:
    from ... import _ops, _tensor

    return _tensor, _ops


def default_convert(data: Any) -> Any:
    """Convert NumPy arrays (and the arrays inside dicts and sequences) to tensors,
    without batching (the collate function when ``batch_size=None``)."""
    _tensor, _ = _t()
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray) or isinstance(data, np.generic) and not isinstance(
            data, (np.str_, np.bytes_)):
        if np_str_obj_array_pattern.search(np.asarray(data).dtype.str) is not None:
            return data
        return _tensor.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({k: default_convert(data[k]) for k in data})
                return clone
            return type(data)({k: default_convert(data[k]) for k in data})  # type: ignore[call-arg]
        except TypeError:
            return {k: default_convert(data[k]) for k in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone2 = copy.copy(data)
                for i, d in enumerate(data):
                    clone2[i] = default_convert(d)
                return clone2
            return type(data)([default_convert(d) for d in data])  # type: ignore[call-arg]
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate_tensor_fn(batch: list[Any], *, collate_fn_map: Any = None) -> Any:
    _, _ops = _t()
    return _ops.stack(batch, 0)


def collate_numpy_array_fn(batch: list[Any], *, collate_fn_map: Any = None) -> Any:
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    _tensor, _ = _t()
    return collate([_tensor.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: list[Any], *, collate_fn_map: Any = None) -> Any:
    _tensor, _ = _t()
    return _tensor.as_tensor(np.asarray(batch))


def collate_float_fn(batch: list[Any], *, collate_fn_map: Any = None) -> Any:
    _tensor, _ = _t()
    return _tensor.tensor(batch, dtype=np.float64)


def collate_int_fn(batch: list[Any], *, collate_fn_map: Any = None) -> Any:
    _tensor, _ = _t()
    return _tensor.tensor(batch)


def collate_str_fn(batch: list[Any], *, collate_fn_map: Any = None) -> Any:
    return batch


default_collate_fn_map: dict[Any, Callable[..., Any]] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def collate(batch: Any, *,
            collate_fn_map: dict[Any, Callable[..., Any]] | None = None) -> Any:
    """Collate ``batch`` with per-type functions from ``collate_fn_map`` (PyTorch's
    ``torch.utils.data._utils.collate.collate``), recursing into containers.

    Parameters
    ----------
    batch : list
        The samples.
    collate_fn_map : dict, optional
        ``{type or tuple of types: fn(batch, *, collate_fn_map)}``; looked up by exact
        type first, then by ``isinstance`` in insertion order.
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                              for key in elem})
                return clone
            return elem_type({key: collate([d[key] for d in batch],
                                           collate_fn_map=collate_fn_map) for key in elem})
        except TypeError:
            return {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                    for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(s, collate_fn_map=collate_fn_map)
                           for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            # PyTorch returns a list here (kept for backward compatibility)
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone_s = copy.copy(elem)
                for i, s in enumerate(transposed):
                    clone_s[i] = collate(s, collate_fn_map=collate_fn_map)
                return clone_s
            return elem_type([collate(s, collate_fn_map=collate_fn_map)
                              for s in transposed])
        except TypeError:
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def default_collate(batch: list[Any]) -> Any:
    """Collate a list of samples into a batch with PyTorch's default rules.

    Parameters
    ----------
    batch : list
        Samples as the dataset returns them.

    Returns
    -------
    The batch: tensors stacked on a new first dimension, containers collated field by
    field.

    Examples
    --------
    >>> import tapegrad.torch as torch
    >>> from tapegrad.torch.utils.data import default_collate
    >>> default_collate([torch.tensor([1, 2]), torch.tensor([3, 4])])
    tensor([[1, 2],
            [3, 4]])
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
