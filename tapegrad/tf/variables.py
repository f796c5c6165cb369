"""``tf.Variable``: a mutable tensor that tapes watch automatically.

A variable is a :class:`tapegrad.Tensor` (so it works in every op and with
the PyTorch style too).  Its value changes only through ``assign``,
``assign_add`` and ``assign_sub``, which are never recorded: they rebind the
variable to a new array, so tensors already read from it keep their values
(as TensorFlow's ReadVariableOp does).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.registry import get_acc
from .._core.tensor import Tensor
from ..autodiff import tracing as _tracing
from . import dtypes as _dt
from ._tensor import (
    Reference,
    TensorShape,
    VariableBase,
    constant_array,
    convert,
    numpy_text,
    read,
)

__all__ = ["Variable"]

_UIDS = itertools.count()


# Called with each new variable (``tf.distribute`` strategies' ``scope()`` pushes one that
# makes every rank start from rank 0's value).
CREATION_HOOKS: list[Callable[[Any], None]] = []


class Variable(VariableBase):
    """A TensorFlow variable.

    Parameters
    ----------
    initial_value : tensor-like or callable
        The initial value (Python floats become float32, as in TensorFlow).
    trainable : bool, default True
        Whether a ``GradientTape`` watches the variable automatically when it
        is read inside the tape's block.
    name : str, optional
        The name; ``v.name`` is TensorFlow's ``"name:0"`` form.
    dtype : dtype, optional
        The dtype to convert the initial value to.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> w = tf.Variable(2.0, name="weight")
    >>> w
    <tf.Variable 'weight:0' shape=() dtype=float32, numpy=2.0>
    >>> with tf.GradientTape() as tape:
    ...     y = w * w
    >>> tape.gradient(y, w).numpy()
    np.float32(4.0)
    >>> _ = w.assign_sub(0.5)
    >>> w.numpy()
    np.float32(1.5)
    """

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Variable:
        # tf.Variable(...) makes a ResourceVariable, as TensorFlow 2 does (subclasses such as
        # Keras' variables keep their own type)
        return object.__new__(ResourceVariable if cls is Variable else cls)

    def __init__(
        self,
        initial_value: Any = None,
        trainable: bool | None = None,
        validate_shape: bool = True,
        caching_device: Any = None,
        name: str | None = None,
        variable_def: Any = None,
        dtype: Any = None,
        import_scope: Any = None,
        constraint: Callable[[Any], Any] | None = None,
        synchronization: Any = None,
        aggregation: Any = None,
        shape: Any = None,
        experimental_enable_variable_lifting: bool = True,
    ) -> None:
        if initial_value is None:
            raise hinted(ValueError(
                with_hint(
                    "The `initial_value` arg (`None`) must be specified as a `Tensor` or a "
                    "Python value (or a callable that returns one).",
                    "e.g. tf.Variable(0.0) or tf.Variable(tf.zeros([3]))",
                )
            ))
        if callable(initial_value):
            initial_value = initial_value()
        if isinstance(initial_value, VariableBase):
            initial_value = read(initial_value)
        arr = np.array(constant_array(initial_value, dtype), copy=True)
        self._data = arr
        self._node = None
        self._rg = False
        self._grad = None
        self._vc = [0]
        self._acc = None
        self._retains = False
        trainable = True if trainable is None else bool(trainable)
        self._tv = trainable
        d = self.__dict__
        d["_name"] = _full_name(name)
        d["_trainable"] = trainable
        d["_constraint"] = constraint
        d["_shape"] = None if shape is None else TensorShape(shape)
        d["_uid"] = next(_UIDS)  # creation order (tapes list watched variables in this order)
        if arr.dtype.kind in "fc":
            get_acc(self)  # reads of this variable (snapshots) share this accumulator
        for on_create in CREATION_HOOKS:  # tf.distribute: a strategy's scope mirrors it
            on_create(self)
        lv = _tracing.current()
        if lv is not None and not getattr(type(self), "_lifted", False):
            lv.var_created(self)  # created inside tf.function: on the first trace only

    # ------------------------------------------------------------------ properties
    @property
    def name(self) -> str:
        """TensorFlow's name: ``"weight:0"``."""
        return self.__dict__["_name"]

    @property
    def trainable(self) -> bool:
        return self.__dict__["_trainable"]

    @property
    def constraint(self) -> Any:
        return self.__dict__["_constraint"]

    @property
    def device(self) -> str:
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    @property
    def handle(self) -> Variable:
        return self

    @property
    def initial_value(self) -> Any:
        raise RuntimeError("This property is not supported when eager execution is enabled.")

    def ref(self) -> Reference:
        """A hashable reference to this variable."""
        return Reference(self)

    experimental_ref = ref

    # ------------------------------------------------------------------ reading
    def read_value(self) -> Any:
        """The current value as a tensor (recorded as a read by active tapes)."""
        from .. import ops

        return ops.identity(self)

    def value(self) -> Any:
        """The current value as a tensor."""
        return read(self)

    def numpy(self, force: bool = False) -> Any:
        arr = self._data
        return arr[()] if arr.ndim == 0 else arr.copy()

    # ------------------------------------------------------------------ writing
    def _new_value(self, value: Any, what: str) -> np.ndarray:
        if isinstance(value, VariableBase):
            value = read(value)
        t = convert(value, dtype_hint=_dt.from_numpy(self._data.dtype))
        if t._data.dtype != self._data.dtype:
            raise hinted(ValueError(
                with_hint(
                    f"Tensor conversion requested dtype {self._data.dtype.name} for Tensor "
                    f"with dtype {t._data.dtype.name}: {t!r}",
                    f"{what}: cast the value to the variable's dtype with tf.cast",
                )
            ))
        arr = t._data
        fixed = self.__dict__.get("_shape")
        if arr.shape != self._data.shape and (fixed is None or not fixed.is_compatible_with(
                arr.shape)):
            raise hinted(ValueError(
                with_hint(
                    f"Cannot assign value to variable ' {self.name}': Shape mismatch.The "
                    f"variable shape {TensorShape(self._data.shape)}, and the assigned value "
                    f"shape {TensorShape(arr.shape)} are incompatible.",
                    f"{what}: the new value must have the variable's shape "
                    f"{tuple(self._data.shape)}",
                )
            ))
        return arr

    def _set(self, arr: np.ndarray, read_value: bool, owned: bool = False) -> Any:
        """Rebind to ``arr``'s value (copied unless ``owned``: a fresh array of the
        variable's dtype that nothing else refers to)."""
        c = self.__dict__.get("_constraint")
        if owned and arr.dtype == self._data.dtype:
            new = arr
        else:
            new = np.array(arr, dtype=self._data.dtype, copy=True)
        if c is not None:
            new = np.array(constant_array(c(convert(new)), self._data.dtype), copy=True)
        # rebind (never write in place): values already read keep theirs
        self._data = new
        if not read_value:
            return None
        # eager TensorFlow returns the variable read lazily: an '_UnreadVariable'
        return _UnreadVariable(self) if isinstance(self, ResourceVariable) else self

    def assign(self, value: Any, use_locking: bool = False, name: str | None = None,
               read_value: bool = True) -> Any:
        """Set the value (not recorded by tapes).

        >>> import tapegrad.tf as tf
        >>> v = tf.Variable([1.0, 2.0])
        >>> v.assign([3.0, 4.0]).numpy()
        array([3., 4.], dtype=float32)
        """
        arr = self._new_value(value, "assign")
        lv = _tracing.current()
        if lv is not None:
            return self._traced_set(lv, convert(value, dtype_hint=_dt.from_numpy(
                self._data.dtype)) if not isinstance(value, VariableBase) else read(value),
                None, read_value)
        return self._set(arr, read_value)

    def _traced_set(self, lv: Any, value: Tensor, how: str | None, read_value: bool) -> Any:
        """An assignment inside ``tf.function``: the new value is computed by ops and the
        write is a side effect of the program (run on every call)."""
        from .. import ops

        if how == "add":
            value = ops.add(read(self), value)
        elif how == "sub":
            value = ops.subtract(read(self), value)
        if value._data.shape != self._data.shape:
            value = ops.broadcast_to(value, shape=self._data.shape)
        if value._data.dtype != self._data.dtype:
            value = ops.cast(value, dtype=self._data.dtype)
        lv.write_var(self, value)
        if not read_value:
            return None
        return _UnreadVariable(self) if isinstance(self, ResourceVariable) else self

    def assign_add(self, delta: Any, use_locking: bool = False, name: str | None = None,
                   read_value: bool = True) -> Any:
        """Add ``delta`` to the value (not recorded by tapes)."""
        d = self._new_value_broadcast(delta, "assign_add")
        lv = _tracing.current()
        if lv is not None:
            return self._traced_set(lv, self._delta_tensor(delta), "add", read_value)
        return self._set(self._data + d, read_value)

    def assign_sub(self, delta: Any, use_locking: bool = False, name: str | None = None,
                   read_value: bool = True) -> Any:
        """Subtract ``delta`` from the value (not recorded by tapes)."""
        d = self._new_value_broadcast(delta, "assign_sub")
        lv = _tracing.current()
        if lv is not None:
            return self._traced_set(lv, self._delta_tensor(delta), "sub", read_value)
        return self._set(self._data - d, read_value)

    def _delta_tensor(self, delta: Any) -> Tensor:
        if isinstance(delta, VariableBase):
            return read(delta)
        return convert(delta, dtype_hint=_dt.from_numpy(self._data.dtype))

    def _new_value_broadcast(self, value: Any, what: str) -> np.ndarray:
        if isinstance(value, VariableBase):
            value = read(value)
        t = convert(value, dtype_hint=_dt.from_numpy(self._data.dtype))
        if t._data.dtype != self._data.dtype:
            raise hinted(ValueError(
                with_hint(
                    f"Tensor conversion requested dtype {self._data.dtype.name} for Tensor "
                    f"with dtype {t._data.dtype.name}: {t!r}",
                    f"{what}: cast the value to the variable's dtype with tf.cast",
                )
            ))
        if t._data.shape != self._data.shape:
            from .errors import InvalidArgumentError

            op = "AssignAddVariableOp" if what == "assign_add" else "AssignSubVariableOp"
            from ._graph_errors import assign_error

            ge = assign_error(self._data.shape, t, op)  # inside tf.function: the graph's error
            if ge is not None:
                raise ge
            mine = ",".join(map(str, self._data.shape))
            theirs = ",".join(map(str, t._data.shape))
            raise hinted(InvalidArgumentError(None, None, with_hint(
                f"Cannot update variable with shape [{mine}] using a Tensor with shape "
                f"[{theirs}], shapes must be equal. [Op:{op}] name: ",
                f"{what}: the delta must have the variable's shape {tuple(self._data.shape)}")))
        return t._data

    # ------------------------------------------------------------------ printing
    def __repr__(self) -> str:
        return (f"<tf.Variable '{self.name}' shape={TensorShape(self._data.shape)} "
                f"dtype={self._data.dtype.name}, numpy={numpy_text(self, True)}>")

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(repr(self), spec)

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild, (self._data, self.trainable, self.name))

    def __deepcopy__(self, memo: dict[int, Any]) -> Variable:
        v = Variable(self._data.copy(), trainable=self.trainable,
                     name=self.name.rsplit(":", 1)[0])
        memo[id(self)] = v
        return v

    def __copy__(self) -> Variable:
        return self


class ResourceVariable(Variable):
    """The type of what ``tf.Variable(...)`` makes, as in TensorFlow 2.

    >>> import tapegrad.tf as tf
    >>> v = tf.Variable(1.0)
    >>> type(v).__name__, isinstance(v, tf.Variable)
    ('ResourceVariable', True)
    """

    __slots__ = ()


def _slot_proxy(slot: str) -> property:
    member = Tensor.__dict__[slot]

    def get(self: _UnreadVariable) -> Any:
        return member.__get__(self._parent, Tensor)

    def put(self: _UnreadVariable, value: Any) -> None:
        member.__set__(self._parent, value)

    return property(get, put)


class _UnreadVariable(Variable):
    """What ``assign`` returns: the same variable, read when used (TensorFlow's name for it).

    It shares the variable's state, so it shows the variable's value at the
    time it is printed or used, and assigning through it assigns the variable.

    >>> import tapegrad.tf as tf
    >>> v = tf.Variable(1.0)
    >>> v.assign(2.0)
    <tf.Variable 'UnreadVariable' shape=() dtype=float32, numpy=2.0>
    """

    __slots__ = ("_parent",)
    _parent: Variable

    _data = _slot_proxy("_data")
    _node = _slot_proxy("_node")
    _rg = _slot_proxy("_rg")
    _vc = _slot_proxy("_vc")

    def __init__(self, parent: Variable) -> None:  # noqa: D107 - shares the parent's state
        object.__setattr__(self, "_parent", parent)
        self.__dict__ = parent.__dict__

    @property
    def name(self) -> str:
        return "UnreadVariable"

    def __reduce_ex__(self, protocol: Any) -> Any:
        return self._parent.__reduce_ex__(protocol)


def _full_name(name: str | None) -> str:
    from .module import current_scope  # tf.name_scope / tf.Module.name_scope prefixes

    base = "Variable" if name is None else str(name)
    if ":" in base:
        return base
    return f"{current_scope()}{base}:0"


def _rebuild(data: np.ndarray, trainable: bool, name: str) -> Variable:
    return Variable(data, trainable=trainable, name=name.rsplit(":", 1)[0])
