"""The functional API: ``keras.Input``, layers called on symbolic tensors, ``Model(inputs, outputs)``.

Calling a layer on a :class:`KerasTensor` builds the layer (a pass on a
zero batch of one sample, recording nothing) and returns symbolic outputs
that remember the call.  ``keras.Model(inputs, outputs)`` orders those calls
once; calling the model replays them on real tensors, so the model is
differentiable like any other and shares the layers (and weights) it was
built from.

>>> import tapegrad.tf as tf
>>> inp = tf.keras.Input(shape=(3,), name="features")
>>> h = tf.keras.layers.Dense(4, activation="relu")(inp)
>>> out = tf.keras.layers.Dense(1)(h)
>>> model = tf.keras.Model(inputs=inp, outputs=out)
>>> out.shape, model(tf.ones([2, 3])).shape
((None, 1), TensorShape([2, 1]))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from .._tensor import tft
from .layers import KerasInput, Layer, _Paused, auto_name

__all__ = ["KerasTensor", "Input", "is_symbolic", "symbolic_call", "Graph"]


class KerasTensor(KerasInput):
    """A symbolic tensor: a shape (``None`` for the batch), a dtype and the call that made it."""

    def __init__(self, shape: Any, dtype: Any = None, name: str | None = None,
                 node: Any = None, index: int = 0, batch_size: int | None = None) -> None:
        if node is None:  # a model input: shape without the batch axis
            super().__init__(shape, batch_size=batch_size, dtype=dtype, name=name)
        else:
            self.shape = tuple(shape)
            self.dtype = dtype or "float32"
            self.name = name or auto_name("keras_tensor")
        self.node = node
        self.index = index

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def _zeros(self, fill: int = 1) -> Tensor:
        """Zeros standing for this tensor: a batch of one, other unknown sizes ``fill``."""
        shape = tuple((1 if i == 0 else fill) if s is None else int(s)
                      for i, s in enumerate(self.shape))
        return tft(np.zeros(shape, dtype=np.dtype(self.dtype)))

    def __repr__(self) -> str:
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, sparse=False, " \
               f"ragged=False, name={self.name}>"

    # operators record an operation layer, as Keras 3's symbolic tensors do
    def _op(self, name: str, fn: Any, *others: Any) -> Any:
        return _op_class(name)(name, fn)([self, *others])

    def __add__(self, other: Any) -> Any:
        return self._op("add", lambda a, b: a + b, other)

    def __radd__(self, other: Any) -> Any:
        return self._op("add", lambda a, b: b + a, other)

    def __sub__(self, other: Any) -> Any:
        return self._op("subtract", lambda a, b: a - b, other)

    def __rsub__(self, other: Any) -> Any:
        return self._op("subtract", lambda a, b: b - a, other)

    def __mul__(self, other: Any) -> Any:
        return self._op("multiply", lambda a, b: a * b, other)

    def __rmul__(self, other: Any) -> Any:
        return self._op("multiply", lambda a, b: b * a, other)

    def __truediv__(self, other: Any) -> Any:
        return self._op("divide", lambda a, b: a / b, other)

    def __neg__(self) -> Any:
        return self._op("negative", lambda a: -a)


class _OpLayer(Layer):
    """An operation on symbolic tensors (``a + b`` between ``keras.Input``-derived tensors)."""

    def __init__(self, op_name: str, fn: Any) -> None:
        super().__init__(name=auto_name(op_name))
        self._fn = fn

    def call(self, inputs: Any) -> Any:
        return self._fn(*inputs)


_OP_CLASSES: dict[str, type] = {}


def _op_class(name: str) -> type:
    """The operation's class, named as Keras names it (``add`` -> ``Add``) for summaries."""
    cls = _OP_CLASSES.get(name)
    if cls is None:
        cls = type("".join(p.title() for p in name.split("_")), (_OpLayer,), {})
        _OP_CLASSES[name] = cls
    return cls


def Input(shape: Any = None, batch_size: int | None = None, dtype: Any = None,
          name: str | None = None, batch_shape: Any = None, **kwargs: Any) -> KerasTensor:
    """``keras.Input``: a model input (first element of a ``Sequential``, or the start
    of a functional graph).

    >>> import tapegrad.tf as tf
    >>> tf.keras.Input(shape=(3,), name="x")
    <KerasTensor shape=(None, 3), dtype=float32, sparse=False, ragged=False, name=x>
    """
    if batch_shape is not None:
        batch_size, shape = batch_shape[0], tuple(batch_shape[1:])
    if shape is None:
        raise hinted(ValueError(with_hint("You must pass a `shape` argument.",
                                   "e.g. keras.Input(shape=(3,))")))
    dt = "float32" if dtype is None else getattr(dtype, "name", str(dtype))
    return KerasTensor(() if shape is None else shape, dtype=dt, name=name,
                       batch_size=batch_size)


def _flat(x: Any) -> list[Any]:
    if isinstance(x, dict):
        return [v for k in x for v in _flat(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _flat(item)]
    return [x]


def _map(fn: Any, x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _map(fn, v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_map(fn, v) for v in x)
    return fn(x)


def accepts_training(layer: Any) -> bool:
    """Whether ``layer.call`` takes a ``training`` argument (or ``**kwargs``)."""
    from .training import _accepts_training

    return _accepts_training(layer)


def is_symbolic(x: Any) -> bool:
    """Whether ``x`` (or any part of a list/dict ``x``) is a :class:`KerasTensor`."""
    return any(isinstance(v, KerasInput) for v in _flat(x))


class Node:
    """One recorded layer call: the layer, its (symbolic) inputs and extra arguments."""

    def __init__(self, layer: Layer, inputs: Any, args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> None:
        self.layer = layer
        self.inputs = inputs
        self.args = args
        self.kwargs = kwargs
        self.outputs: Any = None


def _as_keras_tensor(x: Any) -> KerasTensor:
    if isinstance(x, KerasTensor):
        return x
    # a plain Input placeholder made by an older helper
    kt = KerasTensor(x.shape[1:], dtype=x.dtype, name=x.name, batch_size=x.shape[0])
    return kt


def symbolic_call(layer: Layer, inputs: Any, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> Any:
    """Call ``layer`` on symbolic inputs: build it and return symbolic outputs."""
    def sym(v: Any) -> Any:
        return _as_keras_tensor(v) if isinstance(v, KerasInput) else v

    inputs = _map(sym, inputs)
    # symbolic tensors among the other arguments (MultiHeadAttention's value and key) are
    # inputs of the node too
    args = _map(sym, args)
    kwargs = _map(sym, kwargs)
    node = Node(layer, inputs, args, kwargs)
    # unknown sizes other than the batch's (a sequence's length): the layer runs on two
    # stand-in sizes, large enough for a convolution's window, and the output sizes that
    # differ between the two are unknown too, as Keras' symbolic shapes say
    unknown = any(isinstance(v, KerasTensor) and None in tuple(v.shape)[1:]
                  for v in _flat(inputs) + _flat(args) + _flat(kwargs))
    fills = (64, 96) if unknown else (1,)
    outs = []
    for fill in fills:
        def zeros(v: Any, fill: int = fill) -> Any:
            return v._zeros(fill) if isinstance(v, KerasTensor) else v

        with _Paused():
            outs.append(layer(_map(zeros, inputs), *_map(zeros, args), **_map(zeros, kwargs)))
    out = outs[0]
    others = _flat(outs[1]) if unknown else []

    idx = [0]

    def symbolic(t: Any) -> Any:
        if not isinstance(t, Tensor):
            return t
        dims: list[int | None] = list(t._data.shape)
        if idx[0] < len(others) and isinstance(others[idx[0]], Tensor):
            o = others[idx[0]]._data.shape
            dims = [d if len(o) == len(dims) and o[i] == d else None for i, d in enumerate(dims)]
        shape = (None,) + tuple(dims[1:]) if t._data.ndim else ()
        kt = KerasTensor(shape, dtype=str(t._data.dtype.name), node=node, index=idx[0])
        idx[0] += 1
        return kt

    node.outputs = _map(symbolic, out)
    layer.__dict__.setdefault("_inbound_nodes", []).append(node)
    layer.__dict__["_output_shape"] = _map(lambda k: k.shape, node.outputs)
    return node.outputs


class Graph:
    """The calls between ``inputs`` and ``outputs`` in an order that respects their data."""

    def __init__(self, inputs: Any, outputs: Any) -> None:
        self.inputs = inputs
        self.outputs = outputs
        self.input_list: list[KerasTensor] = [_as_keras_tensor(v) for v in _flat(inputs)]
        ids = {id(v) for v in self.input_list}
        order: list[Node] = []
        seen: set[int] = set()
        # iterative post-order from the outputs
        stack: list[tuple[Any, bool]] = [(t, False) for t in reversed(_flat(outputs))]
        while stack:
            t, expanded = stack.pop()
            if not isinstance(t, KerasTensor) or id(t) in ids:
                continue
            node = t.node
            if node is None:
                raise hinted(ValueError(with_hint(
                    f"Graph disconnected: cannot find parent for tensor {t!r}. The following "
                    f"previous layers were accessed without issue: {[n.layer.name for n in order]}",
                    "every path from an output must lead back to one of the model's inputs")))
            if id(node) in seen:
                continue
            if expanded:
                seen.add(id(node))
                order.append(node)
                continue
            stack.append((t, True))
            for parent in reversed(_flat(node.inputs) + _flat(node.args) + _flat(node.kwargs)):
                if isinstance(parent, KerasTensor) and id(parent) not in ids and \
                        parent.node is not None and id(parent.node) not in seen:
                    stack.append((parent, False))
                elif isinstance(parent, KerasTensor) and parent.node is None and \
                        id(parent) not in ids:
                    raise hinted(ValueError(with_hint(
                        f"Graph disconnected: cannot obtain value for tensor {parent!r}. The "
                        "following previous layers were accessed without issue: "
                        f"{[n.layer.name for n in order]}",
                        "pass every keras.Input the outputs depend on as a model input")))
        self.nodes = order
        layers: list[Layer] = []
        for n in order:
            if all(n.layer is not x for x in layers):
                layers.append(n.layer)
        self.layers = layers

    def keras_order(self) -> list[Any]:
        """The operations in Keras 3's order (``map_graph``): by depth from the outputs,
        deepest first, and at one depth in the order a walk from the outputs (dict
        outputs by sorted key) first met them.  Model inputs appear as their index in
        ``input_list``, layers as themselves; this is the order of ``model.layers``,
        of its weights and of the ``.keras`` file's layer groups."""
        ins = {id(kt): i for i, kt in enumerate(self.input_list)}

        def flat_sorted(x: Any) -> list[Any]:
            if isinstance(x, dict):
                return [v for k in sorted(x) for v in flat_sorted(x[k])]
            if isinstance(x, (list, tuple)):
                return [v for item in x for v in flat_sorted(item)]
            return [x]

        def node_inputs(node: Node) -> list[KerasTensor]:
            return [t for t in _flat(node.inputs) + _flat(node.args) + _flat(node.kwargs)
                    if isinstance(t, KerasTensor)]

        def key(t: KerasTensor) -> tuple[Any, Any]:
            """(node key, operation) of the call that made ``t``."""
            if id(t) in ins:
                return ("in", ins[id(t)]), ins[id(t)]
            assert t.node is not None
            return ("node", id(t.node)), t.node.layer

        index: dict[int, int] = {}
        ops: dict[int, Any] = {}
        done: set[Any] = set()
        decreasing: list[tuple[Any, Any, list[Any]]] = []  # (node key, op, parent keys)
        # iterative form of Keras' _build_map_helper (pre-order indices, post-order nodes)
        for out in flat_sorted(self.outputs):
            if not isinstance(out, KerasTensor):
                continue
            stack: list[tuple[KerasTensor, bool]] = [(out, False)]
            while stack:
                t, expanded = stack.pop()
                nk, op = key(t)
                if nk in done:
                    continue
                node = None if id(t) in ins else t.node
                if expanded:
                    done.add(nk)
                    parents = [] if node is None else [key(p)[0] for p in node_inputs(node)]
                    decreasing.append((nk, op, parents))
                    continue
                ok = id(op) if not isinstance(op, int) else ("in", op)
                if ok not in index:
                    index[ok] = len(index)  # type: ignore[index]
                    ops[ok] = op  # type: ignore[index]
                stack.append((t, True))
                if node is not None:
                    for p in reversed(node_inputs(node)):
                        if key(p)[0] not in done:
                            stack.append((p, False))
        node_depth: dict[Any, int] = {}
        op_depth: dict[Any, int] = {}
        for nk, op, parents in reversed(decreasing):
            ok = id(op) if not isinstance(op, int) else ("in", op)
            depth = max(node_depth.setdefault(nk, 0), op_depth.get(ok, 0))
            op_depth[ok] = depth
            node_depth[nk] = depth
            for pk in parents:
                node_depth[pk] = max(depth + 1, node_depth.get(pk, 0))
        for i in range(len(self.input_list)):  # inputs no output depends on
            if ("in", i) not in op_depth:
                op_depth[("in", i)] = 0
                index[("in", i)] = -1  # type: ignore[index]
                ops[("in", i)] = i  # type: ignore[index]
        return [ops[ok] for ok in sorted(op_depth, key=lambda k: (-op_depth[k], index[k]))]

    def run(self, x: Any, training: bool | None = None) -> Any:
        """Replay the recorded calls on real tensors ``x`` (matched to ``inputs``)."""
        from .training import call_with_training

        values: dict[int, Any] = {}
        given = self._match_inputs(x)
        for kt, v in zip(self.input_list, given):
            values[id(kt)] = v

        def resolve(t: Any) -> Any:
            if isinstance(t, KerasTensor):
                return values[id(t)]
            return t

        for node in self.nodes:
            args = _map(resolve, node.inputs)
            if node.args or node.kwargs or training is None:
                out = node.layer(args, *_map(resolve, node.args), **_map(resolve, node.kwargs))
            else:
                out = call_with_training(node.layer, args, bool(training))
            for kt, val in zip(_flat(node.outputs), _flat(out)):
                values[id(kt)] = val
        return _map(resolve, self.outputs)

    def _match_inputs(self, x: Any) -> list[Any]:
        n = len(self.input_list)
        if isinstance(x, dict):
            if isinstance(self.inputs, dict):
                return [x[k] for k in self.inputs]
            try:
                return [x[kt.name] for kt in self.input_list]
            except KeyError as exc:
                raise hinted(ValueError(with_hint(
                    f"Missing data for input {exc}. You passed a data dictionary with keys "
                    f"{list(x)}. Expected the following keys: "
                    f"{[kt.name for kt in self.input_list]}",
                    "name the dict keys after the keras.Input names"))) from None
        several = isinstance(x, (list, tuple)) and bool(x) and \
            all(isinstance(v, (Tensor, np.ndarray, list, tuple, dict)) for v in x) and \
            (n > 1 or all(isinstance(v, (Tensor, np.ndarray)) for v in x))
        flat = _flat(x) if several else [x]
        if len(flat) != n:
            raise hinted(ValueError(with_hint(
                f"Layer \"functional\" expects {n} input(s), but it received {len(flat)} input "
                "tensors.", "pass one array per keras.Input")))
        return flat
