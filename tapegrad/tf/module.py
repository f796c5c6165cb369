"""``tf.Module``, ``tf.name_scope``, ``tf.device`` and ``tf.config`` device queries.

``tf.Module`` collects variables as TensorFlow does: the attributes are
walked in sorted name order (private ones too), each attribute's variables
(also inside lists, tuples and dicts) come first, and the submodules found
along the way are walked afterwards, so a module's own variables precede its
submodules'.  Keras layers held by a module contribute their weights.

>>> import tapegrad.tf as tf
>>> class Dense(tf.Module):
...     def __init__(self, n_in, n_out, name=None):
...         super().__init__(name=name)
...         with self.name_scope:
...             self.w = tf.Variable(tf.ones([n_in, n_out]), name="w")
...             self.b = tf.Variable(tf.zeros([n_out]), name="b")
>>> class Net(tf.Module):
...     def __init__(self):
...         super().__init__()
...         self.layer = Dense(3, 2, name="dense")
...         self.scale = tf.Variable(1.0, name="scale")
>>> [v.name for v in Net().trainable_variables]
['scale:0', 'dense/b:0', 'dense/w:0']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from .._core.errors import hinted, with_hint

__all__ = ["Module", "name_scope", "device", "current_scope"]

_SCOPES: list[str] = []
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def current_scope() -> str:
    """The active name-scope prefix (``"outer/inner/"``, or ``""``)."""
    return "".join(_SCOPES)


class name_scope:
    """``tf.name_scope(name)``: variables created inside get ``"name/"`` before their name.

    >>> import tapegrad.tf as tf
    >>> with tf.name_scope("block"):
    ...     v = tf.Variable(1.0, name="v")
    >>> v.name
    'block/v:0'
    """

    def __init__(self, name: str) -> None:
        self._name = str(name)

    @property
    def name(self) -> str:
        return self._name

    def __enter__(self) -> str:
        scope = self._name if self._name.endswith("/") else self._name + "/"
        _SCOPES.append(scope)
        return current_scope()

    def __exit__(self, *exc: object) -> None:
        _SCOPES.pop()


def _snake(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


class _ModuleScope(name_scope):
    """A module's scope: named ``"<module name>/"`` and re-entered under the outer scopes
    in which the module was made."""

    def __init__(self, path: str) -> None:
        super().__init__(path)

    def __enter__(self) -> str:
        self._saved = list(_SCOPES)
        _SCOPES[:] = [self._name]
        return self._name

    def __exit__(self, *exc: object) -> None:
        _SCOPES[:] = self._saved


class Module:
    """``tf.Module``: a named container of variables and submodules.

    Parameters
    ----------
    name : str, optional
        A Python identifier; by default the class name in snake case.
    """

    _TF_MODULE_IGNORED_PROPERTIES: frozenset[str] = frozenset(("_scope_path",))

    def __init__(self, name: str | None = None) -> None:
        if name is None:
            name = _snake(type(self).__name__)
        elif not _IDENT.match(name):
            raise hinted(ValueError(with_hint(
                f"'{name}' is not a valid module name. Module names must be valid Python "
                "identifiers (e.g. a valid class name).",
                "use letters, digits and underscores, not starting with a digit")))
        self._name = name
        self._scope_path = current_scope() + name + "/"

    @property
    def name(self) -> str:
        return self._name

    @property
    def name_scope(self) -> name_scope:
        """The module's name scope: ``with self.name_scope:`` names variables ``"name/..."``."""
        return _ModuleScope(self._scope_path)

    # -------------------------------------------------------------- traversal
    def _flatten(self, predicate: Callable[[Any], bool], recursive: bool = True
                 ) -> Iterator[Any]:
        seen: set[int] = set()
        yield from _walk(self, predicate, recursive, seen, [id(self)])

    @property
    def variables(self) -> tuple[Any, ...]:
        """Every variable of this module and its submodules (TensorFlow's order)."""
        return tuple(self._flatten(_is_variable))

    @property
    def trainable_variables(self) -> tuple[Any, ...]:
        return tuple(self._flatten(lambda v: _is_variable(v) and v.trainable))

    @property
    def non_trainable_variables(self) -> tuple[Any, ...]:
        return tuple(self._flatten(lambda v: _is_variable(v) and not v.trainable))

    @property
    def submodules(self) -> tuple[Module, ...]:
        """Every module reachable from this one (not itself), outer ones first."""
        return tuple(self._flatten(lambda m: isinstance(m, Module)))

    @classmethod
    def with_name_scope(cls, method: Callable[..., Any]) -> Callable[..., Any]:
        """Decorator: run ``method`` inside the module's name scope."""
        def wrapped(self: Module, *args: Any, **kwargs: Any) -> Any:
            with self.name_scope:
                return method(self, *args, **kwargs)

        wrapped.__name__ = getattr(method, "__name__", "wrapped")
        wrapped.__doc__ = method.__doc__
        return wrapped

    def __repr__(self) -> str:
        """Python's default repr, with TensorFlow's module path for ``tf.Module`` itself."""
        mod = type(self).__module__
        if mod == __name__:
            mod = "tensorflow.python.module.module"
        return f"<{mod}.{type(self).__qualname__} object at {id(self):#x}>"


def _is_variable(x: Any) -> bool:
    from .variables import Variable

    return isinstance(x, Variable)


def _leaves(value: Any) -> Iterator[Any]:
    """The leaves of a nest as ``tf.nest`` orders them (dict keys sorted)."""
    from ._nest import flatten, is_nested

    if is_nested(value):
        yield from flatten(value)
    else:
        yield value


def _walk(module: Any, predicate: Callable[[Any], bool], recursive: bool, seen: set[int],
          stack: list[int]) -> Iterator[Any]:
    from .keras.layers import Layer

    subs: list[Any] = []
    d = vars(module)
    ignored: frozenset[str] = getattr(module, "_TF_MODULE_IGNORED_PROPERTIES", frozenset())
    for key in sorted(d):
        if key in ignored:
            continue
        for leaf in _leaves(d[key]):
            if id(leaf) in seen:
                continue
            seen.add(id(leaf))
            if isinstance(leaf, Layer):  # Keras layers: their weights, in Keras's order
                for w in leaf.weights:
                    if id(w) not in seen and predicate(w):
                        seen.add(id(w))
                        yield w
                continue
            if predicate(leaf):
                yield leaf
            if recursive and isinstance(leaf, Module):
                subs.append(leaf)
    for sub in subs:
        if id(sub) in stack:
            continue
        stack.append(id(sub))
        yield from _walk(sub, predicate, recursive, seen, stack)
        stack.pop()


class device:
    """``tf.device(name)``: accepted as a context manager; everything runs on the CPU.

    >>> import tapegrad.tf as tf
    >>> with tf.device("/CPU:0"):
    ...     v = tf.Variable(1.0)
    >>> v.device
    '/job:localhost/replica:0/task:0/device:CPU:0'
    """

    def __init__(self, device_name: Any) -> None:
        self.device_name = device_name

    def __enter__(self) -> device:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        return fn
