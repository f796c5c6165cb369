"""tapegrad.torch.nn recurrent and attention layers without the real framework: a NumPy
reference forward, gradients against finite differences (inputs to second order, every
parameter at first order), shapes, unbatched input, repr and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch
from tapegrad.testing import gradcheck

nn = torch.nn
F = torch.nn.functional


def _sig(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _np_lstm(x: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray, b: np.ndarray) -> np.ndarray:
    """PyTorch's LSTM equations in NumPy (one layer, one direction, zero initial state)."""
    h = np.zeros((x.shape[1], w_hh.shape[1]))
    c = np.zeros_like(h)
    outs = []
    for t in range(x.shape[0]):
        z = x[t] @ w_ih.T + h @ w_hh.T + b
        i, f, g, o = np.split(z, 4, axis=-1)
        c = _sig(f) * c + _sig(i) * np.tanh(g)
        h = _sig(o) * np.tanh(c)
        outs.append(h)
    return np.stack(outs)


def _np_gru(x: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray, b_ih: np.ndarray,
            b_hh: np.ndarray) -> np.ndarray:
    h = np.zeros((x.shape[1], w_hh.shape[1]))
    outs = []
    for t in range(x.shape[0]):
        xr, xz, xn = np.split(x[t] @ w_ih.T + b_ih, 3, axis=-1)
        hr, hz, hn = np.split(h @ w_hh.T + b_hh, 3, axis=-1)
        r, z = _sig(xr + hr), _sig(xz + hz)
        n = np.tanh(xn + r * hn)
        h = (1 - z) * n + z * h
        outs.append(h)
    return np.stack(outs)


def test_lstm_matches_numpy_reference() -> None:
    torch.manual_seed(0)
    m = nn.LSTM(3, 4).double()
    x = np.random.default_rng(0).standard_normal((6, 2, 3))
    out, (h, c) = m(torch.tensor(x))
    ref = _np_lstm(x, m.weight_ih_l0.detach().numpy(), m.weight_hh_l0.detach().numpy(),
                   (m.bias_ih_l0 + m.bias_hh_l0).detach().numpy())
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(h.detach().numpy()[0], ref[-1], rtol=1e-12)


def test_gru_matches_numpy_reference() -> None:
    torch.manual_seed(1)
    m = nn.GRU(3, 5, batch_first=True).double()
    x = np.random.default_rng(1).standard_normal((2, 4, 3))
    out, h = m(torch.tensor(x))
    p = {n: v.detach().numpy() for n, v in m.named_parameters()}
    ref = _np_gru(np.swapaxes(x, 0, 1), p["weight_ih_l0"], p["weight_hh_l0"], p["bias_ih_l0"],
                  p["bias_hh_l0"])
    np.testing.assert_allclose(out.detach().numpy(), np.swapaxes(ref, 0, 1), rtol=1e-12)


def _module(cls: str, *args: Any, **kwargs: Any) -> Any:
    torch.manual_seed(2)
    m = getattr(nn, cls)(*args, **kwargs).double()
    m.eval()
    return m


RECURRENT = [
    ("lstm_bi_2layer", lambda: _module("LSTM", 2, 3, num_layers=2, bidirectional=True),
     [(3, 2, 2), (4, 2, 3), (4, 2, 3)], lambda m, x, h, c: m(x, (h, c))),
    ("gru_batch_first", lambda: _module("GRU", 2, 3, batch_first=True), [(2, 3, 2), (1, 2, 3)],
     lambda m, x, h: m(x, h)),
    ("rnn_relu", lambda: _module("RNN", 2, 3, nonlinearity="relu", bias=False), [(3, 2, 2)],
     lambda m, x: m(x)),
    ("lstm_cell", lambda: _module("LSTMCell", 2, 3), [(2, 2), (2, 3), (2, 3)],
     lambda m, x, h, c: m(x, (h, c))),
    ("gru_cell", lambda: _module("GRUCell", 2, 3), [(2, 2), (2, 3)], lambda m, x, h: m(x, h)),
    ("rnn_cell", lambda: _module("RNNCell", 2, 3), [(2,)], lambda m, x: m(x)),
    ("mha", lambda: _module("MultiheadAttention", 4, 2), [(3, 2, 4), (5, 2, 4), (5, 2, 4)],
     lambda m, q, k, v: m(q, k, v)),
    ("mha_masked", lambda: _module("MultiheadAttention", 4, 2, batch_first=True),
     [(2, 3, 4)], lambda m, x: m(x, x, x, attn_mask=torch.tensor(np.triu(np.ones((3, 3), bool),
                                                                          1)))),
    ("encoder_layer", lambda: _module("TransformerEncoderLayer", 4, 2, dim_feedforward=6),
     [(3, 2, 4)], lambda m, x: m(x)),
]


def _flat(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [] if out is None else [out]


@pytest.mark.parametrize("name,make,shapes,call", RECURRENT, ids=[c[0] for c in RECURRENT])
def test_input_gradients_to_second_order(name: str, make: Callable[[], Any], shapes: Any,
                                         call: Any) -> None:
    m = make()
    rng = np.random.default_rng(3)
    xs = [torch.tensor(0.5 * rng.standard_normal(s)) for s in shapes]
    order = 1 if name == "encoder_layer" else 2
    assert gradcheck(lambda *a: _flat(call(m, *a)), xs, order=order)


@pytest.mark.parametrize("name,make,shapes,call", RECURRENT, ids=[c[0] for c in RECURRENT])
def test_parameter_gradients_match_finite_differences(name: str, make: Callable[[], Any],
                                                      shapes: Any, call: Any) -> None:
    m = make()
    rng = np.random.default_rng(4)
    xs = [torch.tensor(0.5 * rng.standard_normal(s)) for s in shapes]
    outs = _flat(call(m, *xs))
    cots = [rng.standard_normal(tuple(o.shape)) for o in outs]

    def loss() -> Any:
        return sum((o * torch.tensor(c)).sum() for o, c in zip(_flat(call(m, *xs)), cots))

    params = list(m.parameters())
    grads = torch.autograd.grad(loss(), params)
    eps = 1e-6
    for p, g in zip(params, grads):
        v = rng.standard_normal(tuple(p.shape))
        with torch.no_grad():
            p.data += eps * torch.tensor(v)
            up = float(loss())
            p.data -= 2 * eps * torch.tensor(v)
            down = float(loss())
            p.data += eps * torch.tensor(v)
        np.testing.assert_allclose(float(np.sum(g.numpy() * v)), (up - down) / (2 * eps),
                                   rtol=1e-5, atol=1e-7)


def test_shapes_and_unbatched_input() -> None:
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    out, (h, c) = lstm(torch.zeros(2, 5, 3))
    assert out.shape == (2, 5, 8) and h.shape == (4, 2, 4) and c.shape == (4, 2, 4)
    out1, (h1, _) = lstm(torch.zeros(5, 3))
    assert out1.shape == (5, 8) and h1.shape == (4, 4)
    y = nn.GRUCell(3, 2)(torch.zeros(3))
    assert y.shape == (2,)
    mha = nn.MultiheadAttention(6, 3)
    o, w = mha(torch.zeros(4, 2, 6), torch.zeros(5, 2, 6), torch.zeros(5, 2, 6))
    assert o.shape == (4, 2, 6) and w.shape == (2, 4, 5)
    o, w = mha(torch.zeros(4, 6), torch.zeros(5, 6), torch.zeros(5, 6),
               average_attn_weights=False)
    assert o.shape == (4, 6) and w.shape == (3, 4, 5)


def test_attention_weights_rows_sum_to_one_and_respect_masks() -> None:
    mha = nn.MultiheadAttention(4, 2, batch_first=True).double()
    x = torch.tensor(np.random.default_rng(0).standard_normal((2, 3, 4)))
    pad = torch.tensor(np.array([[False, False, True], [False, False, False]]))
    _, w = mha(x, x, x, key_padding_mask=pad)
    np.testing.assert_allclose(w.detach().numpy().sum(-1), 1.0)
    assert np.all(w.detach().numpy()[0, :, 2] == 0)
    q = torch.tensor(np.random.default_rng(1).standard_normal((1, 3, 2)))
    y = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    np.testing.assert_allclose(y.numpy()[0, 0], q.numpy()[0, 0])  # row 0 sees only itself


def test_repr_as_pytorch() -> None:
    assert repr(nn.LSTM(3, 4, batch_first=True, bidirectional=True)) == \
        "LSTM(3, 4, batch_first=True, bidirectional=True)"
    assert repr(nn.RNN(3, 4, nonlinearity="relu", num_layers=2, dropout=0.5, bias=False)) == \
        "RNN(3, 4, num_layers=2, bias=False, dropout=0.5)"
    assert repr(nn.RNNCell(3, 4, nonlinearity="relu")) == "RNNCell(3, 4, nonlinearity=relu)"
    assert repr(nn.MultiheadAttention(4, 2)) == (
        "MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=4, "
        "out_features=4, bias=True)\n)")


def test_errors() -> None:
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. "
                                           "Expected 3, got 5"):
        nn.LSTM(3, 4)(torch.zeros(2, 3, 5))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 3, 4\), got \[1, 2, 4\]"):
        nn.GRU(3, 4)(torch.zeros(2, 3, 3), torch.zeros(1, 2, 4))
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(5, 2)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.5)


def test_dropout_between_layers_only_in_training() -> None:
    torch.manual_seed(0)
    m = nn.GRU(2, 3, num_layers=2, dropout=0.9).double()
    x = torch.tensor(np.random.default_rng(0).standard_normal((4, 1, 2)))
    m.eval()
    a = m(x)[0].detach().numpy()
    assert np.array_equal(a, m(x)[0].detach().numpy())
    m.train()
    b = m(x)[0].detach().numpy()
    assert not np.allclose(a, b)


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_packed_batch_equals_each_sequence_alone(cls: str) -> None:
    R = nn.utils.rnn
    m = _module(cls, 2, 3, bidirectional=True, num_layers=2)
    rng = np.random.default_rng(5)
    seqs = [torch.tensor(rng.standard_normal((n, 2))) for n in (2, 4, 1)]
    packed = R.pack_sequence(seqs, enforce_sorted=False)
    out, state = m(packed)
    h = state[0] if cls == "LSTM" else state
    pad, lengths = R.pad_packed_sequence(out, batch_first=True)
    assert lengths.tolist() == [2, 4, 1]
    for i, s in enumerate(seqs):
        alone, st = m(s)  # unbatched run of one sequence
        h1 = st[0] if cls == "LSTM" else st
        np.testing.assert_allclose(pad.detach().numpy()[i, :len(s)], alone.detach().numpy(),
                                   rtol=1e-12)
        assert np.all(pad.detach().numpy()[i, len(s):] == 0)
        np.testing.assert_allclose(h.detach().numpy()[:, i], h1.detach().numpy(), rtol=1e-12)
    gradcheck(lambda *xs: R.pad_packed_sequence(m(R.pack_sequence(list(xs),
                                                                  enforce_sorted=False))[0])[0],
              seqs, order=1)


def test_pack_padded_sequence_checks_order() -> None:
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        nn.utils.rnn.pack_padded_sequence(torch.zeros(3, 2, 1), [1, 3])


def test_transformer_gradients_and_causal_mask() -> None:
    torch.manual_seed(0)
    with pytest.warns(UserWarning, match="enable_nested_tensor is True"):
        model = nn.Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                               dim_feedforward=6, dropout=0.0).double()
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=torch.float64)
    np.testing.assert_array_equal(mask.numpy(), np.triu(np.full((3, 3), -np.inf), 1))
    rng = np.random.default_rng(0)
    src = torch.tensor(rng.standard_normal((4, 2, 4)))
    tgt = torch.tensor(rng.standard_normal((3, 2, 4)))
    assert gradcheck(lambda s, t: model(s, t, tgt_mask=mask), [src, tgt])
    # causal: the first target position does not see the later ones
    y1 = model(src, tgt, tgt_mask=mask).detach().numpy()
    t2 = tgt.numpy().copy()
    t2[2] += 1.0
    y2 = model(src, torch.tensor(t2), tgt_mask=mask).detach().numpy()
    np.testing.assert_allclose(y1[:2], y2[:2], rtol=1e-12)
    assert not np.allclose(y1[2], y2[2])
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(src, torch.zeros(3, 1, 4, dtype=torch.float64))


def test_mismatched_mask_types_warn_once_and_give_the_bool_result() -> None:
    """PyTorch's ``_canonical_mask``: a boolean padding mask beside a float causal mask
    warns (once, at the outermost module: the converted mask is float below it), and
    is the same mask as its float form; integer masks raise AssertionError."""
    import warnings

    from tapegrad.torch import nn

    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, 8, batch_first=True, dropout=0.0)
    enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    x = torch.randn(2, 3, 4)
    causal = nn.Transformer.generate_square_subsequent_mask(3)
    pad = torch.tensor([[False, False, True], [False, False, False]])
    fpad = torch.zeros(2, 3).masked_fill(pad, float("-inf"))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = enc(x, mask=causal, src_key_padding_mask=pad)
    assert [str(m.message) for m in w] == [
        "Support for mismatched src_key_padding_mask and mask is deprecated. Use same "
        "type for both instead."]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        same = enc(x, mask=causal, src_key_padding_mask=fpad)
    assert w == [] and torch.equal(out, same)
    mha = nn.MultiheadAttention(4, 2, batch_first=True)
    with pytest.raises(AssertionError, match="only bool and floating types of key_padding_mask"):
        mha(x, x, x, key_padding_mask=pad.long())
