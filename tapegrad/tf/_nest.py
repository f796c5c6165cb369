"""A small ``tf.nest``: flatten nested lists/tuples/dicts and pack them back.

Dicts flatten in sorted key order, as TensorFlow's ``nest`` does; everything
that is not a list, tuple or mapping is a leaf.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any


def is_nested(x: Any) -> bool:
    return isinstance(x, (list, tuple, Mapping))


def _sorted_keys(d: Mapping[Any, Any]) -> list[Any]:
    try:
        return sorted(d)
    except TypeError:
        return list(d)


def _children(x: Any) -> Iterator[Any]:
    if isinstance(x, Mapping):
        for k in _sorted_keys(x):
            yield x[k]
    else:
        yield from x


def flatten(x: Any) -> list[Any]:
    """The leaves of ``x`` in TensorFlow's order.

    >>> flatten({"b": 1, "a": [2, (3,)]})
    [2, 3, 1]
    """
    if not is_nested(x):
        return [x]
    out: list[Any] = []
    stack: list[Iterator[Any]] = [_children(x)]
    while stack:
        for item in stack[-1]:
            if is_nested(item):
                stack.append(_children(item))
                break
            out.append(item)
        else:
            stack.pop()
    return out


def pack_sequence_as(structure: Any, flat: list[Any]) -> Any:
    """Rebuild ``structure`` with its leaves replaced by ``flat`` (in order)."""
    return _build(structure, iter(flat))


def _build(s: Any, it: Iterator[Any]) -> Any:
    # a module-level function (not a self-referencing closure): a closure cycle would keep
    # the iterator, and every tensor in ``flat``, alive until the garbage collector runs
    if isinstance(s, Mapping):
        vals = {k: _build(s[k], it) for k in _sorted_keys(s)}
        try:
            return type(s)((k, vals[k]) for k in s)  # type: ignore[call-arg]
        except TypeError:
            return {k: vals[k] for k in s}
    if isinstance(s, tuple):
        items = [_build(c, it) for c in s]
        if hasattr(s, "_fields"):  # namedtuple
            return type(s)(*items)
        return type(s)(items) if type(s) is not tuple else tuple(items)
    if isinstance(s, list):
        return [_build(c, it) for c in s]
    return next(it)


def map_structure(fn: Callable[[Any], Any], structure: Any) -> Any:
    """Apply ``fn`` to every leaf, keeping the structure."""
    return pack_sequence_as(structure, [fn(x) for x in flatten(structure)])
