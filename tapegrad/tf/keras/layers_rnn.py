"""Keras recurrent and attention layers: ``SimpleRNN``, ``LSTM``, ``GRU``, ``Bidirectional``,
``MultiHeadAttention`` (Keras 3 semantics).

Weights follow Keras's layout and order, so ``get_weights``/``set_weights``
exchange arrays with real Keras: an RNN layer owns a cell
(``lstm/lstm_cell/kernel``, ``recurrent_kernel``, ``bias``) with the gates
side by side in Keras's order (LSTM ``i, f, c, o``; GRU ``z, r, h``, with
``reset_after=True`` and a ``(2, 3 * units)`` bias by default);
``MultiHeadAttention`` has ``query``, ``key``, ``value`` and
``attention_output`` einsum kernels.  Weights are created on the first call
(deferred build), with Keras's initialisers (``glorot_uniform`` kernels,
``orthogonal`` recurrent kernels, ``unit_forget_bias``) drawn from
``tf.random`` (NumPy's generator: not TensorFlow's numbers).

>>> import tapegrad.tf as tf
>>> lstm = tf.keras.layers.LSTM(4, return_sequences=True, return_state=True, name="tagger")
>>> out, h, c = lstm(tf.zeros([2, 5, 3]))
>>> out.shape, h.shape, [w.path for w in lstm.weights][0]
(TensorShape([2, 5, 4]), TensorShape([2, 4]), 'tagger/lstm_cell/kernel')
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import ops
from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from ...ops.rnn import gru_seq, lstm_seq
from ...ops.shape import _has_tracer
from .._tensor import convert
from ..nn import softmax as _softmax
from . import activations, initializers
from .layers import Layer, _to_input
from .random import SeedGenerator

__all__ = ["SimpleRNNCell", "LSTMCell", "GRUCell", "RNN", "SimpleRNN", "LSTM", "GRU",
           "Bidirectional", "MultiHeadAttention", "Orthogonal"]


Orthogonal = initializers.Orthogonal


def _init(identifier: Any) -> Any:
    return Orthogonal() if identifier == "orthogonal" else initializers.get(identifier)


def _check_rate(name: str, rate: float) -> float:
    if not 0 <= rate <= 1:
        raise ValueError(f"Invalid value received for argument `{name}`. Expected a float "
                         f"value between 0 and 1. Received: {name}={rate}")
    return float(rate)


def _dropout_mask(shape: tuple[int, ...], rate: float, dtype: Any, seed: Any) -> np.ndarray:
    """Keras's ``dropout(ones, rate)``: 0 with probability ``rate``, else ``1 / (1 - rate)``,
    drawn as ``keras.random.dropout`` draws it (``seed``: an int or a ``SeedGenerator``)."""
    from .random import dropout

    return np.asarray(dropout(np.ones(shape, dtype=dtype), rate, seed=seed)._data)


# ----------------------------------------------------------------------------- cells
class _Cell(Layer):
    gates = 1
    kernel_regularizer: Any
    recurrent_regularizer: Any
    bias_regularizer: Any
    kernel_constraint: Any
    recurrent_constraint: Any
    bias_constraint: Any
    _seed_first = False   # SimpleRNNCell makes its SeedGenerator before its initializers

    def __init__(self, units: int, activation: Any = "tanh", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 dropout: float = 0.0, recurrent_dropout: float = 0.0, seed: Any = None,
                 **kwargs: Any) -> None:
        pen = {k: kwargs.pop(k, None) for k in (
            "kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
            "kernel_constraint", "recurrent_constraint", "bias_constraint")}
        super().__init__(**kwargs)
        for w, p in (("kernel", "kernel"), ("recurrent_kernel", "recurrent"),
                     ("bias", "bias")):
            self._weight_penalties(w, p, pen[f"{p}_regularizer"], pen[f"{p}_constraint"])
        if units <= 0:
            raise ValueError("Received an invalid value for argument `units`, expected a "
                             f"positive integer, got {units}.")
        self.dropout = _check_rate("dropout", dropout)
        self.recurrent_dropout = _check_rate("recurrent_dropout", recurrent_dropout)
        self.seed = seed
        # Keras's order of draws from Python's random: the initializers and the cell's
        # SeedGenerator (for its dropout masks) are made here, not when the cell is built
        if self._seed_first:
            self.seed_generator = SeedGenerator(seed)
        self._inits = [_init(kernel_initializer), _init(recurrent_initializer),
                       _init(bias_initializer)]
        if not self._seed_first:
            self.seed_generator = SeedGenerator(seed)
        # LSTM and GRU with recurrent dropout run Keras's implementation 1: a mask per gate
        self.dropout_mask_count = self.gates if self.gates > 1 and self.recurrent_dropout \
            else None
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        self.state_size: Any = self.units

    def _bias_init(self) -> Any:
        return self._inits[2]

    def _masks(self, shape: tuple[int, ...], rate: float, dtype: Any) -> list[np.ndarray] | None:
        """``DropoutRNNCell``'s masks for one call (one, or one per gate), drawn if ``rate``."""
        if not rate > 0:
            return None
        count = self.dropout_mask_count or 1
        return [_dropout_mask(shape, rate, dtype, self.seed_generator) for _ in range(count)]

    def _bias_shape(self) -> tuple[int, ...]:
        return (self.gates * self.units,)

    def build(self, input_shape: Any = None) -> None:
        dim = int(input_shape[-1])
        g = self.gates * self.units
        self.kernel = self.add_weight((dim, g), self._inits[0], name="kernel")
        self.recurrent_kernel = self.add_weight((self.units, g), self._inits[1],
                                                name="recurrent_kernel")
        self.bias = self.add_weight(self._bias_shape(), self._bias_init(), name="bias") \
            if self.use_bias else None
        self.__dict__["built"] = True

    def project(self, x: Tensor) -> Tensor:
        """The input projection of every step at once: ``x @ kernel (+ input bias)``."""
        y = ops.matmul(x, self.kernel)
        b = self.bias
        if b is not None:
            y = ops.add(y, b if b._data.ndim == 1 else ops.getitem(b, 0))
        return y

    def step(self, xw: Tensor, states: list[Tensor],
             rec_masks: list[np.ndarray] | None = None) -> tuple[Tensor, list[Tensor]]:
        """One step; ``rec_masks`` (one per gate) mask the previous output per gate."""
        raise NotImplementedError

    def _gate_rk(self, g: int) -> Tensor:
        u = self.units
        return ops.getitem(self.recurrent_kernel, (slice(None), slice(g * u, (g + 1) * u)))

    def _rec_inner(self, h: Tensor, rec_masks: list[np.ndarray] | None) -> Tensor:
        """``h @ recurrent_kernel``, or each gate's block from ``h`` under that gate's mask."""
        if rec_masks is None:
            return ops.matmul(h, self.recurrent_kernel)
        return ops.concat([ops.matmul(ops.multiply(h, m), self._gate_rk(g))
                           for g, m in enumerate(rec_masks)], axis=-1)

    def call(self, inputs: Tensor, states: Any, training: Any = None) -> Any:
        """One step on its own: ``(output, new_states)`` (Keras's cell call)."""
        as_list = isinstance(states, (list, tuple))
        st = [_to_input(v, inputs._data.dtype) for v in (states if as_list else [states])]
        h, new = self.step(self.project(inputs), st)
        return (h, new) if as_list else (h, new[0])


def _split(t: Tensor, n: int) -> list[Tensor]:
    k = t._data.shape[-1] // n
    return [ops.getitem(t, (Ellipsis, slice(i * k, (i + 1) * k))) for i in range(n)]


class SimpleRNNCell(_Cell):
    """``h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias)``."""

    gates = 1
    _seed_first = True

    def step(self, xw: Tensor, states: list[Tensor],
             rec_masks: list[np.ndarray] | None = None) -> tuple[Tensor, list[Tensor]]:
        h = self.activation(ops.add(xw, self._rec_inner(states[0], rec_masks)))
        return h, [h]


class LSTMCell(_Cell):
    """Keras's LSTM step (gates ``i, f, c, o``; ``unit_forget_bias`` sets the forget bias to 1)."""

    gates = 4

    def __init__(self, units: int, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 unit_forget_bias: bool = True, **kwargs: Any) -> None:
        super().__init__(units, activation, use_bias, kernel_initializer, recurrent_initializer,
                         bias_initializer, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = unit_forget_bias
        self.state_size = [self.units, self.units]

    def _bias_init(self) -> Any:
        base = self._inits[2]
        if not self.unit_forget_bias:
            return base
        u = self.units

        def forget_ones(shape: Any, dtype: Any = None) -> Tensor:
            v = np.array(base((u,), dtype=dtype)._data)
            return convert(np.concatenate([v, np.ones(u, dtype=v.dtype),
                                           np.array(base((2 * u,), dtype=dtype)._data)]))

        return forget_ones

    def step(self, xw: Tensor, states: list[Tensor],
             rec_masks: list[np.ndarray] | None = None) -> tuple[Tensor, list[Tensor]]:
        h, c = states
        z = ops.add(xw, self._rec_inner(h, rec_masks))
        zi, zf, zc, zo = _split(z, 4)
        ra = self.recurrent_activation
        c2 = ops.add(ops.multiply(ra(zf), c), ops.multiply(ra(zi), self.activation(zc)))
        h2 = ops.multiply(ra(zo), self.activation(c2))
        return h2, [h2, c2]


class GRUCell(_Cell):
    """Keras's GRU step (gates ``z, r, h``; ``reset_after=True`` applies the reset gate after
    the recurrent matmul and uses separate input/recurrent biases)."""

    gates = 3

    def __init__(self, units: int, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 reset_after: bool = True, **kwargs: Any) -> None:
        super().__init__(units, activation, use_bias, kernel_initializer, recurrent_initializer,
                         bias_initializer, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = reset_after

    def _bias_shape(self) -> tuple[int, ...]:
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def step(self, xw: Tensor, states: list[Tensor],
             rec_masks: list[np.ndarray] | None = None) -> tuple[Tensor, list[Tensor]]:
        h = states[0]
        u = self.units
        ra = self.recurrent_activation
        xz, xr, xh = _split(xw, 3)
        hz = hr = hh_in = h
        if rec_masks is not None:
            hz, hr, hh_in = (ops.multiply(h, m) for m in rec_masks)
        if self.reset_after:
            inner = self._rec_inner(h, rec_masks)
            if self.use_bias:
                inner = ops.add(inner, ops.getitem(self.bias, 1))
            rz, rr, rh = _split(inner, 3)
            z = ra(ops.add(xz, rz))
            r = ra(ops.add(xr, rr))
            hh = self.activation(ops.add(xh, ops.multiply(r, rh)))
        else:
            rk = self.recurrent_kernel
            rkz = ops.getitem(rk, (slice(None), slice(0, u)))
            rkr = ops.getitem(rk, (slice(None), slice(u, 2 * u)))
            rkh = ops.getitem(rk, (slice(None), slice(2 * u, 3 * u)))
            z = ra(ops.add(xz, ops.matmul(hz, rkz)))
            r = ra(ops.add(xr, ops.matmul(hr, rkr)))
            hh = self.activation(ops.add(xh, ops.matmul(ops.multiply(r, hh_in), rkh)))
        # h = z * h_prev + (1 - z) * hh  =  hh + z * (h_prev - hh)
        h2 = ops.add(hh, ops.multiply(z, ops.subtract(h, hh)))
        return h2, [h2]


# ----------------------------------------------------------------------------- layers
class RNN(Layer):
    """Run a cell over the time axis of ``(batch, time, features)`` inputs."""

    def __init__(self, cell: _Cell, return_sequences: bool = False,
                 return_state: bool = False, go_backwards: bool = False,
                 stateful: bool = False, unroll: bool = False, zero_output_for_mask: bool = False,
                 **kwargs: Any) -> None:
        if stateful:
            raise hinted(NotImplementedError(with_hint("stateful RNN layers are not supported by "
                                                "tapegrad", "pass initial_state= instead")))
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences = return_sequences
        self.return_state = return_state
        self.go_backwards = go_backwards
        self.zero_output_for_mask = zero_output_for_mask
        self.units = cell.units

    def build(self, input_shape: Any = None) -> None:
        self.cell.build((None, input_shape[-1]))
        self.cell.__dict__["built"] = True
        self.__dict__["built"] = True

    def _maybe_build(self, x: Any) -> None:
        if isinstance(x, Tensor) and x._data.ndim != 3:
            raise hinted(ValueError(with_hint(
                f"Input 0 with name 'None' of layer '{self.name}' is incompatible with the "
                f"layer: expected ndim=3, found ndim={x._data.ndim}. Full shape received: "
                f"{tuple(x._data.shape)}", "RNN layers take (batch, time, features)")))
        super()._maybe_build(x)

    def call(self, inputs: Tensor, initial_state: Any = None, mask: Any = None,
             training: Any = None) -> Any:
        m_arr = None
        if mask is not None:  # (batch, time): False steps keep the previous state and output
            m_arr = np.asarray(mask._data if isinstance(mask, Tensor) else mask).astype(bool)
            if isinstance(mask, Tensor) and _has_tracer(mask):
                # a mask that differs between calls (tf.function): the steps select by ops
                m_arr = ops.cast(mask, dtype=np.bool_)
        x = inputs
        n, steps = x._data.shape[0], x._data.shape[1]
        sizes = self.cell.state_size if isinstance(self.cell.state_size, list) else \
            [self.cell.state_size]
        if initial_state is None:
            states = [convert(np.zeros((n, s), dtype=x._data.dtype)) for s in sizes]
        else:
            init_list = list(initial_state) if isinstance(initial_state, (list, tuple)) else \
                [initial_state]
            states = [_to_input(s, x._data.dtype) for s in init_list]
        cell = self.cell
        dt = x._data.dtype
        # Keras draws the cell's masks on every call (training or not): the input mask, then
        # the recurrent one; each is used for every step
        in_masks = cell._masks((n, x._data.shape[-1]), cell.dropout, dt)
        rec_masks = cell._masks((n, cell.units), cell.recurrent_dropout, dt)
        use_in = bool(training) and in_masks is not None and (
            isinstance(cell, SimpleRNNCell) or cell.dropout < 1.0)
        rec_mask = None
        if bool(training) and rec_masks is not None and (
                isinstance(cell, SimpleRNNCell) or cell.recurrent_dropout < 1.0):
            rec_mask = rec_masks
        if use_in and in_masks is not None and len(in_masks) > 1:
            # implementation 1: each gate's projection sees the input under its own mask
            u = cell.units
            parts = [ops.matmul(ops.multiply(x, m[:, None, :]),
                                ops.getitem(cell.kernel, (slice(None), slice(g * u, (g + 1) * u))))
                     for g, m in enumerate(in_masks)]
            xw = ops.concat(parts, axis=-1)
            b = cell.bias
            if b is not None:
                xw = ops.add(xw, b if b._data.ndim == 1 else ops.getitem(b, 0))
        else:
            if use_in and in_masks is not None:
                x = ops.multiply(x, in_masks[0][:, None, :])
            xw = cell.project(x)
        if (isinstance(cell, LSTMCell) and rec_mask is None and steps and m_arr is None
                and cell.activation is activations.get("tanh")
                and cell.recurrent_activation is activations.get("sigmoid")):
            # the fused recurrence (tapegrad.ops.rnn): W_hh is the recurrent kernel transposed
            xs = ops.swapaxes(xw, 0, 1)
            if self.go_backwards:
                xs = ops.flip(xs, axis=0)
            zero_b = np.zeros(4 * cell.units, dtype=dt)
            packed = lstm_seq(xs, states[0], states[1], ops.swapaxes(cell.recurrent_kernel, 0, 1),
                              zero_b)
            h_last = ops.getitem(packed, steps - 1)
            c_last = ops.getitem(packed, steps)
            seq = ops.swapaxes(ops.getitem(packed, slice(0, steps)), 0, 1)
            out_f = seq if self.return_sequences else h_last
            return (out_f, h_last, c_last) if self.return_state else out_f
        if (isinstance(cell, GRUCell) and cell.reset_after and rec_mask is None and steps
                and m_arr is None
                and cell.activation is activations.get("tanh")
                and cell.recurrent_activation is activations.get("sigmoid")):
            xs = ops.swapaxes(xw, 0, 1)
            if self.go_backwards:
                xs = ops.flip(xs, axis=0)
            b_rec = ops.getitem(cell.bias, 1) if cell.bias is not None else \
                np.zeros(3 * cell.units, dtype=dt)
            packed = gru_seq(xs, states[0], ops.swapaxes(cell.recurrent_kernel, 0, 1), b_rec,
                             order="zrn")
            h_last = ops.getitem(packed, steps - 1)
            seq = ops.swapaxes(ops.getitem(packed, slice(0, steps)), 0, 1)
            out_g = seq if self.return_sequences else h_last
            return (out_g, h_last) if self.return_state else out_g
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        outs: list[Tensor] = []
        h: Any = None
        prev_out: Any = None
        for t in order:
            if rec_mask is None:
                h, new = cell.step(ops.getitem(xw, (slice(None), t)), states)
            elif len(rec_mask) == 1:
                h, new = cell.step(ops.getitem(xw, (slice(None), t)),
                                   [ops.multiply(states[0], rec_mask[0])] + states[1:])
            else:
                h, new = cell.step(ops.getitem(xw, (slice(None), t)), states, rec_mask)
            if m_arr is not None:  # Keras's masked step: where(mask, new, old)
                keep = ops.getitem(m_arr, (slice(None), t, None)) if isinstance(m_arr, Tensor) \
                    else m_arr[:, t][:, None]
                if prev_out is None:
                    prev_out = convert(np.zeros(h._data.shape, dtype=dt))
                h = ops.where(keep, h, 0.0 if self.zero_output_for_mask else prev_out)
                new = [ops.where(keep, a, b) for a, b in zip(new, states)]
                prev_out = h
            states = new
            outs.append(h)
        if h is None:
            h = states[0]
        out = ops.stack(outs, axis=1) if self.return_sequences else h
        if self.return_state:
            return (out, *states)
        return out

    def get_config(self) -> dict[str, Any]:
        cfg = super().get_config()
        cfg.update({"return_sequences": self.return_sequences,
                    "return_state": self.return_state, "go_backwards": self.go_backwards})
        c = self.cell
        if type(self) not in (SimpleRNN, LSTM, GRU) or not isinstance(c, _Cell):
            cfg["units"] = self.units
            return cfg
        from .model_file import _initializer_config

        # Keras 3.15's SimpleRNN / LSTM / GRU config (what model.save writes)
        cfg.update({"stateful": False, "unroll": False,
                    "zero_output_for_mask": self.zero_output_for_mask, "units": c.units,
                    "activation": _activation_name(c.activation)})
        if isinstance(c, (LSTMCell, GRUCell)):
            cfg["recurrent_activation"] = _activation_name(c.recurrent_activation)
        cfg.update({"use_bias": c.use_bias,
                    "kernel_initializer": _initializer_config(c._inits[0]),
                    "recurrent_initializer": _initializer_config(c._inits[1]),
                    "bias_initializer": _initializer_config(c._inits[2])})
        if isinstance(c, LSTMCell):
            cfg["unit_forget_bias"] = c.unit_forget_bias
        from . import constraints as _cons
        from . import regularizers as _regs

        cfg.pop("activity_regularizer", None)
        cfg.update({"kernel_regularizer": _regs.serialize(c.kernel_regularizer),
                    "recurrent_regularizer": _regs.serialize(c.recurrent_regularizer),
                    "bias_regularizer": _regs.serialize(c.bias_regularizer),
                    "activity_regularizer": _regs.serialize(
                        self.__dict__.get("activity_regularizer")),
                    "kernel_constraint": _cons.serialize(c.kernel_constraint),
                    "recurrent_constraint": _cons.serialize(c.recurrent_constraint),
                    "bias_constraint": _cons.serialize(c.bias_constraint),
                    "dropout": c.dropout,
                    "recurrent_dropout": c.recurrent_dropout, "seed": c.seed})
        if isinstance(c, GRUCell):
            cfg["reset_after"] = c.reset_after
        return cfg


def _activation_name(fn: Any) -> str:
    return str(getattr(fn, "__name__", "linear"))


def _rnn_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    keys = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll",
            "zero_output_for_mask", "name", "trainable", "dtype", "input_shape", "input_dim",
            "activity_regularizer")
    return {k: kwargs.pop(k) for k in keys if k in kwargs}


class SimpleRNN(RNN):
    """Fully connected RNN: ``h_t = tanh(x_t W + h_{t-1} U + b)``."""

    def __init__(self, units: int, activation: Any = "tanh", use_bias: bool = True,
                 **kwargs: Any) -> None:
        outer = _rnn_kwargs(kwargs)
        cell = SimpleRNNCell(units, activation=activation, use_bias=use_bias,
                             name="simple_rnn_cell",
                             dtype=outer.get("dtype"), **kwargs)
        super().__init__(cell, **outer)


class LSTM(RNN):
    """Long short-term memory (Keras: gates ``i, f, c, o``; ``return_state`` adds ``h, c``)."""

    def __init__(self, units: int, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", use_bias: bool = True,
                 **kwargs: Any) -> None:
        outer = _rnn_kwargs(kwargs)
        cell = LSTMCell(units, activation=activation, recurrent_activation=recurrent_activation,
                        name="lstm_cell",
                        use_bias=use_bias, dtype=outer.get("dtype"), **kwargs)
        super().__init__(cell, **outer)


class GRU(RNN):
    """Gated recurrent unit (Keras: gates ``z, r, h``, ``reset_after=True`` by default)."""

    def __init__(self, units: int, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", use_bias: bool = True,
                 **kwargs: Any) -> None:
        outer = _rnn_kwargs(kwargs)
        cell = GRUCell(units, activation=activation, recurrent_activation=recurrent_activation,
                       name="gru_cell",
                       use_bias=use_bias, dtype=outer.get("dtype"), **kwargs)
        super().__init__(cell, **outer)


def _clone_rnn(layer: RNN, name: str, go_backwards: bool) -> RNN:
    c = layer.cell
    common: dict[str, Any] = {"activation": c.activation, "use_bias": c.use_bias,
                              "kernel_initializer": c.kernel_initializer,
                              "recurrent_initializer": c.recurrent_initializer,
                              "bias_initializer": c.bias_initializer, "dropout": c.dropout,
                              "recurrent_dropout": c.recurrent_dropout, "seed": c.seed}
    for p in ("kernel", "recurrent", "bias"):  # Keras clones through the config
        for kind in ("regularizer", "constraint"):
            common[f"{p}_{kind}"] = c.__dict__.get(f"{p}_{kind}")
    common["activity_regularizer"] = layer.__dict__.get("activity_regularizer")
    if isinstance(c, (LSTMCell, GRUCell)):
        common["recurrent_activation"] = c.recurrent_activation
    if isinstance(c, LSTMCell):
        common["unit_forget_bias"] = c.unit_forget_bias
    if isinstance(c, GRUCell):
        common["reset_after"] = c.reset_after
    cls: Any = type(layer)  # SimpleRNN, LSTM or GRU: (units, **options)
    return cls(c.units, return_sequences=layer.return_sequences,
               return_state=layer.return_state, go_backwards=go_backwards, name=name,
               dtype=layer.dtype, **common)


class Bidirectional(Layer):
    """Run an RNN forwards and a copy of it backwards; merge (``concat``, ``sum``, ``mul``,
    ``ave`` or ``None`` for a list).  Weights: the forward layer's, then the backward's."""

    def __init__(self, layer: RNN, merge_mode: str | None = "concat",
                 weights: Any = None, backward_layer: RNN | None = None,
                 **kwargs: Any) -> None:
        if not isinstance(layer, RNN):
            raise hinted(ValueError(with_hint(
                "Please initialize `Bidirectional` layer with a `keras.layers.Layer` instance. "
                f"Received: {layer}", "wrap an RNN layer such as LSTM(4)")))
        if merge_mode not in ("sum", "mul", "ave", "concat", None):
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should be "
                             "one of {'sum', 'mul', 'ave', 'concat', None}")
        super().__init__(**kwargs)
        # a layer from a saved config is already the forward one ("forward_lstm")
        base = layer.name[8:] if layer.name.startswith("forward_") else layer.name
        self.forward_layer = _clone_rnn(layer, "forward_" + base, layer.go_backwards)
        self.backward_layer = backward_layer if backward_layer is not None else \
            _clone_rnn(layer, "backward_" + base, not layer.go_backwards)
        # as Keras: masked steps of a returned sequence are zeros in both directions
        self.forward_layer.zero_output_for_mask = layer.return_sequences
        self.backward_layer.zero_output_for_mask = layer.return_sequences
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        if weights is not None:
            raise hinted(NotImplementedError(with_hint("Bidirectional(weights=...) is not supported",
                                                "call set_weights after the first call")))

    def get_config(self) -> dict[str, Any]:
        from .model_file import _layer_entry

        cfg = super().get_config()
        cfg.update({"merge_mode": self.merge_mode,
                    "layer": _layer_entry(self.forward_layer, None),
                    "backward_layer": _layer_entry(self.backward_layer, None)})
        return cfg

    def call(self, inputs: Tensor, initial_state: Any = None, mask: Any = None,
             training: Any = None) -> Any:
        fwd_state = bwd_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            fwd_state, bwd_state = initial_state[:half], initial_state[half:]
        f = self.forward_layer(inputs, initial_state=fwd_state, mask=mask, training=training)
        b = self.backward_layer(inputs, initial_state=bwd_state, mask=mask, training=training)
        f_states: list[Tensor] = []
        b_states: list[Tensor] = []
        if self.return_state:
            f, *f_states = f
            b, *b_states = b
        if self.return_sequences:  # the backward sequence back in time order
            b = ops.flip(b, axis=1)
        if self.merge_mode == "concat":
            out: Any = ops.concatenate([f, b], axis=-1)
        elif self.merge_mode == "sum":
            out = ops.add(f, b)
        elif self.merge_mode == "ave":
            out = ops.multiply(ops.add(f, b), 0.5)
        elif self.merge_mode == "mul":
            out = ops.multiply(f, b)
        else:
            out = [f, b]
        if self.return_state:
            return (*out, *f_states, *b_states) if isinstance(out, list) else \
                (out, *f_states, *b_states)
        return out


# ----------------------------------------------------------------------------- attention
class _EinsumWeights(Layer):
    """The weights of one of MultiHeadAttention's projections (Keras's EinsumDense)."""

    def __init__(self, kernel_shape: tuple[int, ...], bias_shape: tuple[int, ...] | None,
                 kernel_initializer: Any, bias_initializer: Any, equation: str,
                 penalties: dict[str, Any] | None = None, **kwargs: Any) -> None:
        pen = penalties or {}
        super().__init__(activity_regularizer=pen.get("activity_regularizer"), **kwargs)
        for p in ("kernel", "bias"):
            self._weight_penalties(p, p, pen.get(f"{p}_regularizer"),
                                   pen.get(f"{p}_constraint"))
        self.equation = equation
        init = initializers.get(kernel_initializer)
        if isinstance(init, initializers.VarianceScaling) and (
                init.input_axes is None or init.output_axes is None):
            # EinsumDense's _update_kernel_initializer: the same seed, fans from the kernel
            # axes that meet the input and the output
            import copy

            ins, kern_out = equation.split(",")
            kern, out = kern_out.split("->")
            init = copy.copy(init)
            init.input_axes = [i for i, c in enumerate(kern) if c in ins]
            init.output_axes = [i for i, c in enumerate(kern) if c in out]
        self.kernel = self.add_weight(kernel_shape, init, name="kernel")
        self.bias = self.add_weight(bias_shape, initializers.get(bias_initializer),
                                    name="bias") if bias_shape is not None else None
        self.__dict__["built"] = True

    def call(self, x: Tensor) -> Tensor:
        y = ops.einsum(self.equation, x, self.kernel, kernel="tf")
        return ops.add(y, self.bias) if self.bias is not None else y


class MultiHeadAttention(Layer):
    """Keras's multi-head attention over ``(batch, time, features)`` tensors.

    ``call(query, value, key=None, attention_mask=None, return_attention_scores=False,
    training=None, use_causal_mask=False)``; ``attention_mask`` is ``(B, T, S)`` with
    True/1 where attention is allowed.  Scores are ``(B, heads, T, S)``.
    """

    def __init__(self, num_heads: int, key_dim: int, value_dim: int | None = None,
                 dropout: float = 0.0, use_bias: bool = True, output_shape: Any = None,
                 attention_axes: Any = None, kernel_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", seed: Any = None, **kwargs: Any) -> None:
        # Keras passes these to each projection (EinsumDense): weight penalties, constraints
        # and an activity penalty on each projection's output
        self.__dict__["_penalties_mha"] = {k: kwargs.pop(k, None) for k in (
            "kernel_regularizer", "bias_regularizer", "activity_regularizer",
            "kernel_constraint", "bias_constraint")}
        kwargs.pop("flash_attention", None)
        if not kwargs.get("use_gate"):  # Keras 3.15's config keys at their defaults
            kwargs.pop("use_gate", None)
        if kwargs.get("sliding_window") is None:
            kwargs.pop("sliding_window", None)
        super().__init__(**kwargs)
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        # explicit axes are checked at build: only the default (all but batch and features,
        # what Keras writes into a saved config) is supported
        self.__dict__["_axes_arg"] = None if attention_axes is None else tuple(attention_axes)
        if output_shape is not None:
            raise hinted(NotImplementedError(with_hint("MultiHeadAttention(attention_axes=, "
                                                "output_shape=) is not supported by tapegrad",
                                                "use the defaults")))
        self.dropout = _check_rate("dropout", dropout)
        self.seed = seed
        self.num_heads = int(num_heads)
        self.key_dim = int(key_dim)
        self.value_dim = int(value_dim) if value_dim is not None else int(key_dim)
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        # Keras makes the initializers here and a fresh clone of each for every sublayer
        self._kernel_init = initializers.get(kernel_initializer)
        self._bias_init = initializers.get(bias_initializer)
        self._dropout_seed: Any = None

    def get_config(self) -> dict[str, Any]:
        """Keras 3.15's MultiHeadAttention config."""
        from . import constraints as _cons
        from . import regularizers as _regs
        from .saving import _initializer_config

        pen = self.__dict__.get("_penalties_mha") or {}
        cfg = super().get_config()
        cfg.pop("activity_regularizer", None)
        cfg.update({
            "num_heads": self.num_heads, "key_dim": self.key_dim, "value_dim": self.value_dim,
            "dropout": self.dropout, "use_bias": self.use_bias, "use_gate": False,
            "output_shape": None, "attention_axes": self.__dict__.get("_attention_axes"),
            "sliding_window": None,
            "kernel_initializer": _initializer_config(self._kernel_init),
            "bias_initializer": _initializer_config(self._bias_init),
            "kernel_regularizer": _regs.serialize(_regs.get(pen.get("kernel_regularizer"))),
            "bias_regularizer": _regs.serialize(_regs.get(pen.get("bias_regularizer"))),
            "activity_regularizer": _regs.serialize(
                _regs.get(pen.get("activity_regularizer"))),
            "kernel_constraint": _cons.serialize(_cons.get(pen.get("kernel_constraint"))),
            "bias_constraint": _cons.serialize(_cons.get(pen.get("bias_constraint"))),
            "seed": self.seed})
        return cfg

    def _clones(self) -> tuple[Any, Any]:
        """Keras's ``_get_common_kwargs_for_sublayer``: ``from_config(get_config())`` clones
        (an unseeded initializer takes a new seed from Python's random)."""
        def clone(init: Any) -> Any:
            if not hasattr(init, "get_config"):
                return init
            import inspect

            params = inspect.signature(type(init)).parameters
            return type(init)(**{k: v for k, v in init.get_config().items() if k in params})
        return clone(self._kernel_init), clone(self._bias_init)

    def _build_from(self, q: Tensor, v: Tensor, k: Tensor) -> None:
        h, kd, vd = self.num_heads, self.key_dim, self.value_dim
        dq, dk, dv = q._data.shape[-1], k._data.shape[-1], v._data.shape[-1]
        ub = self.use_bias
        dt = self.dtype
        pen = self.__dict__.get("_penalties_mha")
        # Keras resolves the default attention axes at build: all but batch and features
        axes = tuple(range(1, q._data.ndim - 1))
        given = self.__dict__.get("_axes_arg")
        if given is not None and tuple(a % q._data.ndim for a in given) != axes:
            raise hinted(NotImplementedError(with_hint(
                "MultiHeadAttention(attention_axes=, output_shape=) is not supported by "
                "tapegrad", f"use the defaults (attention_axes={axes} for these inputs)")))
        self.__dict__["_attention_axes"] = axes
        ki, bi = self._clones()
        self.query_dense = _EinsumWeights((dq, h, kd), (h, kd) if ub else None, ki, bi,
                                          "abc,cde->abde", pen, name="query", dtype=dt)
        ki, bi = self._clones()
        self.key_dense = _EinsumWeights((dk, h, kd), (h, kd) if ub else None, ki, bi,
                                        "abc,cde->abde", pen, name="key", dtype=dt)
        ki, bi = self._clones()
        self.value_dense = _EinsumWeights((dv, h, vd), (h, vd) if ub else None, ki, bi,
                                          "abc,cde->abde", pen, name="value", dtype=dt)
        if self.dropout > 0:  # Keras's attention Dropout layer and its SeedGenerator
            self._dropout_seed = SeedGenerator(self.seed)
        ki, bi = self._clones()
        self.output_dense = _EinsumWeights((h, vd, dq), (dq,) if ub else None, ki, bi,
                                           "abcd,cde->abe", pen, name="attention_output",
                                           dtype=dt)
        self.__dict__["built"] = True

    def _maybe_build(self, x: Any) -> None:
        pass  # built in call, once the key and value shapes are known

    def call(self, query: Tensor, value: Any, key: Any = None, query_mask: Any = None,
             value_mask: Any = None, key_mask: Any = None, attention_mask: Any = None,
             return_attention_scores: bool = False, training: Any = None,
             use_causal_mask: bool = False) -> Any:
        dt = query._data.dtype
        v = _to_input(value, dt)
        k = v if key is None else _to_input(key, dt)
        if not self.built:
            self._build_from(query, v, k)
        q = ops.multiply(self.query_dense(query), 1.0 / math.sqrt(float(self.key_dim)))
        kk = self.key_dense(k)
        vv = self.value_dense(v)
        scores = ops.einsum("aecd,abcd->acbe", kk, q, kernel="tf")  # (B, heads, T, S)
        t_len, s_len = q._data.shape[1], kk._data.shape[1]
        mask: Any = None
        if attention_mask is not None:
            am = attention_mask._data if isinstance(attention_mask, Tensor) else \
                np.asarray(attention_mask)
            mask = am.astype(bool)
        if use_causal_mask:
            causal = np.tril(np.ones((t_len, s_len), dtype=bool))[None]
            mask = causal if mask is None else (mask & causal)
        if mask is not None:
            # Keras 3's masked softmax (its Softmax layer): masked scores are -1e9 before
            # the softmax and the masked weights 0 after it
            big = -3e4 if dt == np.float16 else -1e9
            m = np.broadcast_to(np.expand_dims(mask, -3), scores._data.shape)
            w = ops.where(m, _softmax(ops.where(m, scores, np.asarray(big, dt)), axis=-1),
                          np.zeros((), dt))
        else:
            w = _softmax(scores, axis=-1)
        wd = w
        if training and self.dropout > 0:  # the returned scores are the undropped ones
            wd = ops.multiply(w, _dropout_mask(w._data.shape, self.dropout, dt,
                                               self._dropout_seed))
        out = ops.einsum("acbe,aecd->abcd", wd, vv, kernel="tf")  # (B, T, heads, value_dim)
        out = self.output_dense(out)
        if return_attention_scores:
            return out, w
        return out
