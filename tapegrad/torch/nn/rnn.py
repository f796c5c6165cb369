"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their cells, as PyTorch defines them.

Parameters have PyTorch's names, shapes, registration order and
initialisation (every parameter drawn from ``U(-1/sqrt(hidden), 1/sqrt(hidden))``
in ``parameters()`` order, from the PyTorch-compatible generator), so after
the same ``torch.manual_seed`` the weights, outputs and gradients are
PyTorch's.  Gate order is PyTorch's: ``i, f, g, o`` (LSTM) and ``r, z, n``
(GRU, with the reset gate applied to ``W_hn h + b_hn``).

Each step is written in tapegrad ops (so gradients of every order work); the
input projections of all time steps are one matmul per layer and direction,
and only the hidden-to-hidden product runs once per step.

>>> import tapegrad.torch as torch
>>> _ = torch.manual_seed(0)
>>> lstm = torch.nn.LSTM(3, 4, batch_first=True)
>>> out, (h, c) = lstm(torch.zeros(2, 5, 3))
>>> tuple(out.shape), tuple(h.shape), tuple(c.shape)
((2, 5, 4), (1, 2, 4), (1, 2, 4))
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

from ... import ops as core
from ..._core.errors import hinted, with_hint
from ..._core.tensor import TORCH, Tensor, make
from ...ops.fused import linear_op
from ...ops.rnn import gru_seq, lstm_seq
from .._dtype import from_np, to_np
from .._tensor import check_device
from . import functional as F
from . import init
from .modules import Module
from .parameter import Parameter

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _empty(shape: tuple[int, ...], dt: Any) -> Parameter:
    return Parameter(make(np.empty(shape, dtype=dt), None, False, TORCH))


def _zeros_like_state(shape: tuple[int, ...], like: Tensor) -> Tensor:
    return make(np.zeros(shape, dtype=like._data.dtype), None, False, TORCH)


def _chunks(x: Tensor, n: int) -> list[Tensor]:
    """``x`` split into ``n`` equal pieces along the last axis."""
    k = x._data.shape[-1] // n
    return [core.getitem(x, (Ellipsis, slice(i * k, (i + 1) * k))) for i in range(n)]


def _lin(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    if x._data.ndim > 2:  # one GEMM over every leading index
        lead = x._data.shape[:-1]
        y = _lin(core.reshape(x, (-1, x._data.shape[-1])), w, b)
        return core.reshape(y, lead + (w._data.shape[0],))
    if b is None:
        return core.matmul(x, core.swapaxes(w, 0, 1))
    return linear_op(x, w, b)  # one node, the bias added in place (ops.fused)


def _cell(mode: str, xw: Tensor, h: Tensor, c: Tensor | None, w_hh: Tensor,
          b_hh: Tensor | None, w_hr: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
    """One step given the input projection ``xw = x W_ih^T + b_ih`` (``w_hr``: the LSTM's
    output projection, ``h = (o * tanh(c)) W_hr^T``)."""
    hw = _lin(h, w_hh, b_hh)
    if mode == "LSTM":
        i, f, g, o = _chunks(core.add(xw, hw), 4)
        c2 = core.add(core.multiply(core.sigmoid(f), c), core.multiply(core.sigmoid(i),
                                                                       core.tanh(g)))
        h2 = core.multiply(core.sigmoid(o), core.tanh(c2))
        return (h2 if w_hr is None else _lin(h2, w_hr, None)), c2
    if mode == "GRU":
        xr, xz, xn = _chunks(xw, 3)
        hr, hz, hn = _chunks(hw, 3)
        r = core.sigmoid(core.add(xr, hr))
        z = core.sigmoid(core.add(xz, hz))
        n = core.tanh(core.add(xn, core.multiply(r, hn)))
        # h' = (1 - z) n + z h  =  n + z (h - n)
        return core.add(n, core.multiply(z, core.subtract(h, n))), None
    pre = core.add(xw, hw)
    return (core.tanh(pre) if mode == "RNN_TANH" else core.relu(pre)), None


class RNNBase(Module):
    """The multi-layer, optionally bidirectional recurrent network behind RNN/LSTM/GRU."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        check_device(device)
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or \
                isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        dt = np.float32 if dtype is None else to_np(dtype)
        gate = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        for layer in range(num_layers):
            for d in range(dirs):
                real_hidden = proj_size if proj_size > 0 else hidden_size
                in_size = input_size if layer == 0 else real_hidden * dirs
                sfx = "_reverse" if d == 1 else ""
                names = [f"weight_ih_l{layer}{sfx}", f"weight_hh_l{layer}{sfx}"]
                shapes: list[tuple[int, ...]] = [(gate, in_size), (gate, real_hidden)]
                if bias:
                    names += [f"bias_ih_l{layer}{sfx}", f"bias_hh_l{layer}{sfx}"]
                    shapes += [(gate,), (gate,)]
                if proj_size > 0:
                    names.append(f"weight_hr_l{layer}{sfx}")
                    shapes.append((proj_size, hidden_size))
                for nm, shp in zip(names, shapes):
                    setattr(self, nm, _empty(shp, dt))
                self._flat_weights_names += names
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self) -> list[list[Parameter]]:
        per = (4 if self.bias else 2) + (1 if self.proj_size else 0)
        ws = [getattr(self, n) for n in self._flat_weights_names]
        return [ws[i:i + per] for i in range(0, len(ws), per)]

    def _layer_params(self, layer: int, d: int) -> tuple[Tensor, Tensor, Any, Any, Any]:
        sfx = "_reverse" if d == 1 else ""
        w_ih = getattr(self, f"weight_ih_l{layer}{sfx}")
        w_hh = getattr(self, f"weight_hh_l{layer}{sfx}")
        b_ih = getattr(self, f"bias_ih_l{layer}{sfx}") if self.bias else None
        b_hh = getattr(self, f"bias_hh_l{layer}{sfx}") if self.bias else None
        w_hr = getattr(self, f"weight_hr_l{layer}{sfx}") if self.proj_size else None
        return w_ih, w_hh, b_ih, b_hh, w_hr

    @property
    def _out_size(self) -> int:
        return self.proj_size if self.proj_size > 0 else self.hidden_size

    def _check_input(self, x: Tensor) -> bool:
        if x._data.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                             f"{x._data.ndim}D instead")
        if x._data.shape[-1] != self.input_size:
            raise hinted(RuntimeError(with_hint(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                f"{x._data.shape[-1]}", f"input shape {list(x._data.shape)}")))
        self._check_dtype(x)
        return x._data.ndim == 3

    def _check_dtype(self, x: Tensor) -> None:
        w = getattr(self, self._flat_weights_names[0])._data.dtype
        if x._data.dtype != w:
            xd, wd = from_np(x._data.dtype), from_np(w)
            raise hinted(ValueError(with_hint(
                f"RNN input dtype ({xd}) does not match weight dtype ({wd}). Convert input: "
                f"input.to({wd}), or convert model: model.to({xd})",
                "the input and the parameters need one dtype")))

    def _check_hidden(self, h: Tensor, expected: tuple[int, ...], what: str = "hidden") -> None:
        if tuple(h._data.shape) != expected:
            raise hinted(RuntimeError(with_hint(
                f"Expected {what} size {expected}, got {list(h._data.shape)}",
                "(num_layers * num_directions, batch, hidden_size)")))

    def forward(self, input: Any, hx: Any = None) -> Any:
        from .utils.rnn import PackedSequence

        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        x = input
        batched = self._check_input(x)
        if not batched:
            x = core.expand_dims(x, 1)
        elif self.batch_first:
            x = core.swapaxes(x, 0, 1)
        steps, n = x._data.shape[0], x._data.shape[1]
        dirs = 2 if self.bidirectional else 1
        state_shape = (self.num_layers * dirs, n, self._out_size)
        cell_shape = (self.num_layers * dirs, n, self.hidden_size)
        lstm = self.mode == "LSTM"
        h0: Any
        c0: Any = None
        if hx is None:
            h0 = _zeros_like_state(state_shape, x)
            c0 = _zeros_like_state(cell_shape, x) if lstm else None
        else:
            if lstm:
                if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                    raise RuntimeError("LSTM expects hx to be a tuple (h_0, c_0)")
                h0, c0 = hx
            else:
                h0 = hx
            if not batched:
                if h0._data.ndim != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got "
                                       f"{h0._data.ndim}-D tensor")
                h0 = core.expand_dims(h0, 1)
                c0 = core.expand_dims(c0, 1) if lstm else None
            self._check_hidden(h0, state_shape)
            if lstm:
                self._check_hidden(c0, cell_shape, "cell")
        layer_in = x
        h_last: list[Tensor] = []
        c_last: list[Tensor] = []
        for layer in range(self.num_layers):
            outs_dir = []
            for d in range(dirs):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_params(layer, d)
                idx = layer * dirs + d
                h = core.getitem(h0, idx)
                c = core.getitem(c0, idx) if lstm else None
                xw = _lin(layer_in, w_ih, b_ih)  # every step's input projection at once
                if lstm and w_hr is None and steps:
                    # one fused primitive for the whole recurrence (tapegrad.ops.rnn)
                    xs = xw if d == 0 else core.flip(xw, axis=0)
                    bh = b_hh if b_hh is not None else \
                        np.zeros(w_hh._data.shape[0], dtype=w_hh._data.dtype)
                    packed_out = lstm_seq(xs, h, c, w_hh, bh)
                    hs = core.getitem(packed_out, slice(0, steps))
                    h = core.getitem(packed_out, steps - 1)
                    c = core.getitem(packed_out, steps)
                    outs_dir.append(hs if d == 0 else core.flip(hs, axis=0))
                elif self.mode == "GRU" and steps:
                    xs = xw if d == 0 else core.flip(xw, axis=0)
                    bh = b_hh if b_hh is not None else \
                        np.zeros(w_hh._data.shape[0], dtype=w_hh._data.dtype)
                    packed_out = gru_seq(xs, h, w_hh, bh, order="rzn")
                    hs = core.getitem(packed_out, slice(0, steps))
                    h = core.getitem(packed_out, steps - 1)
                    outs_dir.append(hs if d == 0 else core.flip(hs, axis=0))
                else:
                    order = range(steps) if d == 0 else range(steps - 1, -1, -1)
                    seq: list[Tensor] = [None] * steps  # type: ignore[list-item]
                    for t in order:
                        h, c = _cell(self.mode, core.getitem(xw, t), h, c, w_hh, b_hh, w_hr)
                        seq[t] = h
                    outs_dir.append(core.stack(seq, axis=0) if steps else
                                    _zeros_like_state((0, n, self._out_size), x))
                h_last.append(h)
                if lstm:
                    c_last.append(c)  # type: ignore[arg-type]
            layer_out = outs_dir[0] if dirs == 1 else core.concatenate(outs_dir, axis=-1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_out = F.dropout(layer_out, self.dropout, True)
            layer_in = layer_out
        out = layer_in
        h_n = core.stack(h_last, axis=0)
        c_n = core.stack(c_last, axis=0) if lstm else None
        if not batched:
            out = core.squeeze(out, 1)
            h_n = core.squeeze(h_n, 1)
            c_n = core.squeeze(c_n, 1) if lstm else None
        elif self.batch_first:
            out = core.swapaxes(out, 0, 1)
        return (out, (h_n, c_n)) if lstm else (out, h_n)

    def _forward_packed(self, packed: Any, hx: Any) -> Any:
        """The layers over a PackedSequence: step ``t`` updates its ``batch_sizes[t]``
        running sequences; the others keep their state (each ends at its own last step)."""
        from .utils.rnn import PackedSequence

        data = packed.data
        self._check_dtype(data)
        sizes = [int(b) for b in np.asarray(packed.batch_sizes._data)]
        n = sizes[0] if sizes else 0
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        dirs = 2 if self.bidirectional else 1
        lstm = self.mode == "LSTM"
        state_shape = (self.num_layers * dirs, n, self._out_size)
        cell_shape = (self.num_layers * dirs, n, self.hidden_size)
        if hx is None:
            h0: Any = _zeros_like_state(state_shape, data)
            c0: Any = _zeros_like_state(cell_shape, data) if lstm else None
        else:
            h0, c0 = (hx if lstm else (hx, None))
            self._check_hidden(h0, state_shape)
            if packed.sorted_indices is not None:  # states follow the sorted batch
                order = np.asarray(packed.sorted_indices._data)
                h0 = core.take(h0, order, axis=1)
                c0 = core.take(c0, order, axis=1) if lstm else None
        layer_in = data
        h_last: list[Tensor] = []
        c_last: list[Tensor] = []
        for layer in range(self.num_layers):
            outs_dir = []
            for d in range(dirs):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_params(layer, d)
                idx = layer * dirs + d
                h = core.getitem(h0, idx)
                c = core.getitem(c0, idx) if lstm else None
                xw = _lin(layer_in, w_ih, b_ih)
                pieces: list[Tensor] = [None] * len(sizes)  # type: ignore[list-item]
                order_t = range(len(sizes)) if d == 0 else range(len(sizes) - 1, -1, -1)
                for t in order_t:
                    b = sizes[t]
                    xt = core.getitem(xw, slice(int(offsets[t]), int(offsets[t + 1])))
                    hb = core.getitem(h, slice(0, b))
                    cb = core.getitem(c, slice(0, b)) if lstm else None
                    hn, cn = _cell(self.mode, xt, hb, cb, w_hh, b_hh, w_hr)
                    pieces[t] = hn
                    if b < n:
                        h = core.concatenate([hn, core.getitem(h, slice(b, None))], axis=0)
                        if lstm:
                            c = core.concatenate([cn, core.getitem(c, slice(b, None))],
                                                 axis=0)
                    else:
                        h, c = hn, cn
                outs_dir.append(core.concatenate(pieces, axis=0))
                h_last.append(h)
                if lstm:
                    c_last.append(c)  # type: ignore[arg-type]
            layer_out = outs_dir[0] if dirs == 1 else core.concatenate(outs_dir, axis=-1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_out = F.dropout(layer_out, self.dropout, True)
            layer_in = layer_out
        h_n = core.stack(h_last, axis=0)
        c_n = core.stack(c_last, axis=0) if lstm else None
        if packed.unsorted_indices is not None:  # states back in the caller's order
            inv = np.asarray(packed.unsorted_indices._data)
            h_n = core.take(h_n, inv, axis=1)
            c_n = core.take(c_n, inv, axis=1) if lstm else None
        out = PackedSequence(layer_in, packed.batch_sizes, packed.sorted_indices,
                             packed.unsorted_indices)
        return (out, (h_n, c_n)) if lstm else (out, h_n)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or ReLU)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if len(args) > 3:  # RNN(input_size, hidden_size, num_layers, nonlinearity, ...)
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory; returns ``output, (h_n, c_n)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit; returns ``output, h_n``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("GRU", *args, **kwargs)


# ----------------------------------------------------------------------------- cells
class RNNCellBase(Module):
    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        check_device(device)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        dt = np.float32 if dtype is None else to_np(dtype)
        self.weight_ih = _empty((num_chunks * hidden_size, input_size), dt)
        self.weight_hh = _empty((num_chunks * hidden_size, hidden_size), dt)
        if bias:
            self.bias_ih = _empty((num_chunks * hidden_size,), dt)
            self.bias_hh = _empty((num_chunks * hidden_size,), dt)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nl = getattr(self, "nonlinearity", "tanh")
        if nl != "tanh":
            s += f", nonlinearity={nl}"
        return s

    def _prepare(self, input: Tensor, hx: Any, n_states: int) -> tuple[Tensor, list[Tensor],
                                                                        bool]:
        x = input
        if x._data.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{x._data.ndim}D instead")
        if x._data.shape[-1] != self.input_size:
            raise hinted(RuntimeError(with_hint(
                f"input has inconsistent input_size: got {x._data.shape[-1]} expected "
                f"{self.input_size}", f"input shape {list(x._data.shape)}")))
        if x._data.dtype != self.weight_ih._data.dtype:
            names = {"float64": "Double", "float32": "Float", "float16": "Half"}
            raise hinted(RuntimeError(with_hint(
                f"mat1 and mat2 must have the same dtype, but got "
                f"{names.get(x._data.dtype.name, x._data.dtype.name)} and "
                f"{names.get(self.weight_ih._data.dtype.name, self.weight_ih._data.dtype.name)}",
                "convert the input (x.float()) or the module (model.double())")))
        batched = x._data.ndim == 2
        if not batched:
            x = core.expand_dims(x, 0)
        n = x._data.shape[0]
        if hx is None:
            states = [_zeros_like_state((n, self.hidden_size), x) for _ in range(n_states)]
        else:
            states = list(hx) if n_states == 2 else [hx]
            if not batched:
                states = [core.expand_dims(s, 0) for s in states]
        return x, states, batched

    def _step(self, mode: str, input: Tensor, hx: Any, n_states: int) -> Any:
        x, states, batched = self._prepare(input, hx, n_states)
        xw = _lin(x, self.weight_ih, self.bias_ih)
        h, c = _cell(mode, xw, states[0], states[1] if n_states == 2 else None,
                     self.weight_hh, self.bias_hh)
        if not batched:
            h = core.squeeze(h, 0)
            c = core.squeeze(c, 0) if c is not None else None
        return (h, c) if n_states == 2 else h


class RNNCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        return self._step(mode, input, hx, 1)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Tensor]:
        return self._step("LSTM", input, hx, 2)


class GRUCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step("GRU", input, hx, 1)

