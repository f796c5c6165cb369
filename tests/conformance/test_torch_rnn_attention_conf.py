"""torch.nn recurrent and attention layers on real PyTorch 2.13 and tapegrad.torch: the same
seeded initialisation (bit for bit), then the same outputs and gradients (inputs and every
parameter), module repr, and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402

RNG = np.random.default_rng(5)


def _build(lib: Any, cls: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    lib.manual_seed(0)
    m = getattr(lib.nn, cls)(*args, **kwargs)
    m.double()
    return m


# (id, class, args, kwargs, input shapes, call(module, lib, *inputs) -> tensor or tuple)
def _seq(out: Any) -> Any:  # (output, h_n) or (output, (h_n, c_n)) -> flat tuple
    o, st = out
    return (o, *st) if isinstance(st, tuple) else (o, st)


CASES: list[tuple[str, str, tuple[Any, ...], dict[str, Any], list[tuple[int, ...]],
                  Callable[..., Any]]] = [
    ("rnn_tanh", "RNN", (3, 4), {}, [(5, 2, 3)], lambda m, lib, x: _seq(m(x))),
    ("rnn_relu_2layer", "RNN", (3, 4), {"nonlinearity": "relu", "num_layers": 2},
     [(5, 2, 3)], lambda m, lib, x: _seq(m(x))),
    ("rnn_h0", "RNN", (3, 4), {"bias": False}, [(5, 2, 3), (1, 2, 4)],
     lambda m, lib, x, h: _seq(m(x, h))),
    ("lstm", "LSTM", (3, 4), {}, [(6, 2, 3)], lambda m, lib, x: _seq(m(x))),
    ("lstm_bi_2layer", "LSTM", (3, 4), {"num_layers": 2, "bidirectional": True},
     [(5, 2, 3)], lambda m, lib, x: _seq(m(x))),
    ("lstm_batch_first_states", "LSTM", (3, 4), {"batch_first": True},
     [(2, 5, 3), (1, 2, 4), (1, 2, 4)], lambda m, lib, x, h, c: _seq(m(x, (h, c)))),
    ("lstm_unbatched", "LSTM", (3, 4), {"bidirectional": True}, [(5, 3)],
     lambda m, lib, x: _seq(m(x))),
    ("gru", "GRU", (3, 4), {}, [(5, 2, 3)], lambda m, lib, x: _seq(m(x))),
    ("lstm_proj", "LSTM", (3, 5), {"proj_size": 2, "num_layers": 2, "bidirectional": True},
     [(4, 2, 3), (4, 2, 2), (4, 2, 5)], lambda m, lib, x, h, c: _seq(m(x, (h, c)))),
    ("gru_bi_batch_first", "GRU", (3, 4), {"bidirectional": True, "batch_first": True,
                                           "num_layers": 2},
     [(2, 5, 3), (4, 2, 4)], lambda m, lib, x, h: _seq(m(x, h))),
    ("rnn_cell", "RNNCell", (3, 4), {}, [(2, 3), (2, 4)], lambda m, lib, x, h: m(x, h)),
    ("rnn_cell_relu", "RNNCell", (3, 4), {"nonlinearity": "relu"}, [(2, 3)],
     lambda m, lib, x: m(x)),
    ("lstm_cell", "LSTMCell", (3, 4), {}, [(2, 3), (2, 4), (2, 4)],
     lambda m, lib, x, h, c: m(x, (h, c))),
    ("lstm_cell_unbatched", "LSTMCell", (3, 4), {}, [(3,)], lambda m, lib, x: m(x)),
    ("gru_cell", "GRUCell", (3, 4), {"bias": False}, [(2, 3), (2, 4)],
     lambda m, lib, x, h: m(x, h)),
    ("mha_self", "MultiheadAttention", (4, 2), {}, [(5, 2, 4)],
     lambda m, lib, x: m(x, x, x)),
    ("mha_cross_batch_first", "MultiheadAttention", (4, 2), {"batch_first": True},
     [(2, 3, 4), (2, 5, 4), (2, 5, 4)], lambda m, lib, q, k, v: m(q, k, v)),
    ("mha_per_head_weights", "MultiheadAttention", (4, 2), {}, [(3, 2, 4)],
     lambda m, lib, x: m(x, x, x, average_attn_weights=False)),
    ("mha_no_weights", "MultiheadAttention", (4, 2), {"bias": False}, [(3, 2, 4)],
     lambda m, lib, x: m(x, x, x, need_weights=False)[0]),
    ("mha_masks", "MultiheadAttention", (4, 2), {}, [(4, 2, 4)],
     lambda m, lib, x: m(x, x, x, attn_mask=lib.tensor(np.triu(np.ones((4, 4), bool), 1)),
                         key_padding_mask=lib.tensor(np.array([[False] * 4,
                                                               [False] * 3 + [True]])))),
    ("mha_float_mask", "MultiheadAttention", (4, 2), {}, [(4, 2, 4), (4, 4)],
     lambda m, lib, x, am: m(x, x, x, attn_mask=am)),
    ("mha_kdim_vdim", "MultiheadAttention", (4, 2), {"kdim": 3, "vdim": 5},
     [(3, 2, 4), (6, 2, 3), (6, 2, 5)], lambda m, lib, q, k, v: m(q, k, v)),
    ("mha_unbatched", "MultiheadAttention", (4, 1), {}, [(3, 4)], lambda m, lib, x: m(x, x, x)),
    ("encoder_layer", "TransformerEncoderLayer", (4, 2), {"dim_feedforward": 8,
                                                          "dropout": 0.0},
     [(5, 2, 4)], lambda m, lib, x: m(x)),
    ("encoder_layer_pre_norm_gelu", "TransformerEncoderLayer", (4, 2),
     {"dim_feedforward": 8, "dropout": 0.0, "norm_first": True, "activation": "gelu",
      "batch_first": True},
     [(2, 5, 4)], lambda m, lib, x: m(x)),
    ("encoder_layer_causal", "TransformerEncoderLayer", (4, 2), {"dim_feedforward": 6},
     [(5, 2, 4)], lambda m, lib, x: m(x, src_mask=lib.tensor(np.triu(np.full((5, 5), -np.inf),
                                                                     1)), is_causal=True)),
]


def _run(lib: Any, cls: str, args: Any, kwargs: Any, shapes: list[tuple[int, ...]],
         call: Callable[..., Any]) -> tuple[list[np.ndarray], list[np.ndarray],
                                            list[np.ndarray], str]:
    m = _build(lib, cls, args, kwargs)
    m.eval()  # the layers without dropout (training-mode dropout: test_torch_dropout_conf.py)
    rng = np.random.default_rng(2)
    ins = [lib.tensor(rng.standard_normal(s), dtype=lib.float64, requires_grad=True)
           for s in shapes]
    out = call(m, lib, *ins)
    outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o is not None]
    cots = [rng.standard_normal(tuple(o.shape)) for o in outs]
    loss = sum((o * lib.tensor(c)).sum() for o, c in zip(outs, cots))
    params = [p for _, p in m.named_parameters()]
    grads = lib.autograd.grad(loss, ins + params, allow_unused=True)
    gs = [np.zeros(tuple(t.shape)) if g is None else g.numpy() for g, t in
          zip(grads, ins + params)]
    return ([o.detach().numpy() for o in outs], gs[:len(ins)], gs[len(ins):], repr(m))


@pytest.mark.parametrize("name,cls,args,kwargs,shapes,call", CASES, ids=[c[0] for c in CASES])
def test_same_outputs_and_gradients(name: str, cls: str, args: Any, kwargs: Any,
                                    shapes: Any, call: Any) -> None:
    ro, rgi, rgp, _ = _run(real, cls, args, kwargs, shapes, call)
    to, tgi, tgp, _ = _run(tt, cls, args, kwargs, shapes, call)
    assert len(ro) == len(to)
    for a, b in zip(ro, to):
        assert b.shape == a.shape
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-11)
    for a, b in zip(rgi + rgp, tgi + tgp):
        np.testing.assert_allclose(b, a, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("cls,args,kwargs", [
    ("LSTM", (3, 4), {"num_layers": 2, "bidirectional": True}),
    ("LSTM", (3, 4), {"proj_size": 2, "num_layers": 2}),
    ("GRU", (5, 3), {"batch_first": True, "bias": False}),
    ("RNN", (3, 4), {"nonlinearity": "relu", "dropout": 0.5, "num_layers": 3}),
    ("LSTMCell", (3, 4), {}), ("GRUCell", (3, 4), {"bias": False}),
    ("RNNCell", (3, 4), {"nonlinearity": "relu"}),
    ("MultiheadAttention", (6, 3), {}), ("MultiheadAttention", (4, 2), {"kdim": 3}),
    ("TransformerEncoderLayer", (4, 2), {"dim_feedforward": 8}),
])
def test_same_seeded_initialisation_and_names(cls: str, args: Any, kwargs: Any) -> None:
    real.manual_seed(3)
    r = getattr(real.nn, cls)(*args, **kwargs)
    tt.manual_seed(3)
    t = getattr(tt.nn, cls)(*args, **kwargs)
    rp, tp = dict(r.named_parameters()), dict(t.named_parameters())
    assert list(tp) == list(rp)
    for n in rp:
        assert tp[n].dtype == tt.float32
        np.testing.assert_array_equal(tp[n].detach().numpy(), rp[n].detach().numpy())
    if cls != "TransformerEncoderLayer":  # LayerNorm's repr is another module's business
        assert repr(t) == repr(r)


def test_training_a_lstm_tagger_matches() -> None:
    # the "LSTM tagger" shape: embedding-free, a few SGD steps from the seeded init
    losses = []
    for lib in (real, tt):
        lib.manual_seed(1)
        lstm = lib.nn.LSTM(3, 5)
        head = lib.nn.Linear(5, 2)
        opt = lib.optim.SGD(list(lstm.parameters()) + list(head.parameters()), lr=0.1)
        x = lib.tensor(np.random.default_rng(0).standard_normal((7, 1, 3)),
                       dtype=lib.float32)
        y = lib.tensor(np.array([0, 1, 1, 0, 1, 0, 0]))
        run = []
        for _ in range(5):
            opt.zero_grad()
            out, _ = lstm(x)
            loss = lib.nn.functional.cross_entropy(head(out.view(7, 5)), y)
            loss.backward()
            opt.step()
            run.append(loss.item())
        losses.append(run)
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5)


SDPA: list[tuple[str, Callable[..., Any], list[tuple[int, ...]]]] = [
    ("plain", lambda F, lib, q, k, v: F.scaled_dot_product_attention(q, k, v),
     [(2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5)]),
    ("causal", lambda F, lib, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
     [(2, 4, 5), (2, 4, 5), (2, 4, 5)]),
    ("bool_mask", lambda F, lib, q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=lib.tensor(np.array([[True, False, True], [True, True, False]]))),
     [(2, 2, 4), (2, 3, 4), (2, 3, 4)]),
    ("float_mask_scale", lambda F, lib, q, k, v, m: F.scaled_dot_product_attention(
        q, k, v, attn_mask=m, scale=0.3), [(1, 2, 4), (1, 3, 4), (1, 3, 2), (2, 3)]),
    ("gqa", lambda F, lib, q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
     [(1, 4, 3, 2), (1, 2, 3, 2), (1, 2, 3, 2)]),
]


@pytest.mark.parametrize("name,call,shapes", SDPA, ids=[c[0] for c in SDPA])
def test_scaled_dot_product_attention(name: str, call: Any, shapes: Any) -> None:
    res = []
    for lib in (real, tt):
        rng = np.random.default_rng(8)
        ins = [lib.tensor(rng.standard_normal(s), dtype=lib.float64, requires_grad=True)
               for s in shapes]
        out = call(lib.nn.functional, lib, *ins)
        cot = lib.tensor(rng.standard_normal(tuple(out.shape)))
        grads = lib.autograd.grad((out * cot).sum(), ins)
        res.append([out.detach().numpy()] + [g.numpy() for g in grads])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-11)


def _err(lib: Any, fn: Callable[[Any], Any]) -> tuple[type, str]:
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001
        return type(e), str(e).split("\n[tapegrad hint]")[0]
    raise AssertionError("no error")


ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("input_size", lambda m: m.nn.LSTM(3, 4)(m.zeros(2, 3, 5))),
    ("hidden_shape", lambda m: m.nn.GRU(3, 4)(m.zeros(2, 3, 3), m.zeros(1, 2, 4))),
    ("cell_input_size", lambda m: m.nn.LSTMCell(3, 4)(m.zeros(2, 5))),
    ("mha_divisible", lambda m: m.nn.MultiheadAttention(5, 2)),
    ("rnn_nonlinearity", lambda m: m.nn.RNN(3, 4, nonlinearity="gelu")),
    ("proj_too_big", lambda m: m.nn.LSTM(3, 4, proj_size=4)),
    ("rnn_dtype", lambda m: m.nn.LSTM(3, 4)(m.zeros(2, 1, 3, dtype=m.float64))),
    ("cell_dtype", lambda m: m.nn.GRUCell(3, 4)(m.zeros(2, 3, dtype=m.float64))),
    ("mha_dtype", lambda m: m.nn.MultiheadAttention(4, 2)(*[m.zeros(2, 1, 4, dtype=m.float64)
                                                           for _ in range(3)])),
    ("proj_gru", lambda m: m.nn.GRU(3, 4, proj_size=2)),
    ("mha_causal_without_mask", lambda m: m.nn.MultiheadAttention(4, 2)(
        m.zeros(3, 1, 4), m.zeros(3, 1, 4), m.zeros(3, 1, 4), is_causal=True)),
    ("mha_mask_shape_2d", lambda m: m.nn.MultiheadAttention(4, 2)(
        m.zeros(3, 1, 4), m.zeros(3, 1, 4), m.zeros(3, 1, 4), attn_mask=m.zeros(2, 2))),
    ("mha_mask_shape_3d", lambda m: m.nn.MultiheadAttention(4, 2)(
        m.zeros(3, 1, 4), m.zeros(3, 1, 4), m.zeros(3, 1, 4), attn_mask=m.zeros(1, 3, 3))),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_same_errors(name: str, fn: Callable[[Any], Any]) -> None:
    rt, rm = _err(real, fn)
    tt_, tm = _err(tt, fn)
    assert tt_ is rt
    assert tm == rm


PACKED: list[tuple[str, str, dict[str, Any], list[int], bool, bool]] = [
    ("lstm_bi_2layer_unsorted", "LSTM", {"num_layers": 2, "bidirectional": True}, [3, 5, 2],
     False, True),
    ("gru_sorted_batch_first", "GRU", {"batch_first": True}, [4, 4, 1], True, False),
    ("rnn_unsorted", "RNN", {"bidirectional": True}, [1, 3, 2, 3], False, True),
    ("lstm_proj_packed", "LSTM", {"proj_size": 3, "bidirectional": True}, [2, 4, 1], False,
     False),
]


@pytest.mark.parametrize("name,cls,kwargs,lengths,sorted_,with_state", PACKED,
                         ids=[c[0] for c in PACKED])
def test_packed_sequences(name: str, cls: str, kwargs: dict[str, Any], lengths: list[int],
                          sorted_: bool, with_state: bool) -> None:
    res = []
    for lib in (real, tt):
        R = lib.nn.utils.rnn
        m = _build(lib, cls, (3, 4), kwargs)
        rng = np.random.default_rng(0)
        bf = kwargs.get("batch_first", False)
        t, b = max(lengths), len(lengths)
        x = lib.tensor(rng.standard_normal((b, t, 3) if bf else (t, b, 3)), requires_grad=True)
        dirs = 2 if kwargs.get("bidirectional") else 1
        shape = (kwargs.get("num_layers", 1) * dirs, b, 4)
        h0 = lib.tensor(rng.standard_normal(shape), requires_grad=True)
        c0 = lib.tensor(rng.standard_normal(shape), requires_grad=True)
        p = R.pack_padded_sequence(x, lengths, batch_first=bf, enforce_sorted=sorted_)
        st = ((h0, c0) if cls == "LSTM" else h0) if with_state else None
        out, hn = m(p, st)
        hs = list(hn) if isinstance(hn, tuple) else [hn]
        pad, ln = R.pad_packed_sequence(out, batch_first=bf, total_length=t + 1)
        loss = (pad * lib.tensor(rng.standard_normal(tuple(pad.shape)))).sum() + \
            sum((s * lib.tensor(rng.standard_normal(tuple(s.shape)))).sum() for s in hs)
        ins = [x] + ([h0] + ([c0] if cls == "LSTM" else []) if with_state else [])
        gs = lib.autograd.grad(loss, ins + list(m.parameters()))
        res.append([pad.detach().numpy(), ln.numpy(), p.batch_sizes.numpy(),
                    p.data.detach().numpy()] + [s.detach().numpy() for s in hs] +
                   [g.numpy() for g in gs])
    for a, b_ in zip(*res):
        assert a.shape == b_.shape
        np.testing.assert_allclose(b_, a, rtol=1e-9, atol=1e-11)


def test_pad_and_pack_sequence_helpers() -> None:
    seqs = [np.arange(6.0).reshape(3, 2), np.arange(2.0).reshape(1, 2),
            np.arange(4.0).reshape(2, 2)]
    out = []
    for lib in (real, tt):
        R = lib.nn.utils.rnn
        ts = [lib.tensor(s) for s in seqs]
        a = R.pad_sequence(ts, batch_first=True, padding_value=-1.0)
        b = R.pad_sequence(ts, padding_side="left")
        p = R.pack_sequence(ts, enforce_sorted=False)
        pad, ln = R.pad_packed_sequence(p, padding_value=9.0)
        back = R.unpack_sequence(p)
        out.append([a.numpy(), b.numpy(), p.data.numpy(), p.batch_sizes.numpy(), pad.numpy(),
                    ln.numpy()] + [s.numpy() for s in back])
    for x, y in zip(*out):
        np.testing.assert_array_equal(y, x)
    msgs = []
    for lib in (real, tt):
        with pytest.raises(RuntimeError) as e:
            lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(3, 2, 1), [1, 3])
        msgs.append(str(e.value).split("\n[tapegrad hint]")[0])
    assert msgs[1] == msgs[0]


@pytest.mark.parametrize("kwargs", [{}, {"batch_first": True, "norm_first": True}])
def test_transformer_encoder_stack(kwargs: dict[str, Any]) -> None:
    res = []
    for lib in (real, tt):
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0, **kwargs)
        with pytest.warns(UserWarning, match="enable_nested_tensor is True") as rec:
            enc = lib.nn.TransformerEncoder(layer, 3, norm=lib.nn.LayerNorm(4))
        enc.double()
        shape = (2, 5, 4) if kwargs else (5, 2, 4)
        x = lib.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)
        y = enc(x, mask=lib.tensor(np.triu(np.full((5, 5), -np.inf), 1)))
        params = [p for _, p in enc.named_parameters()]
        gs = lib.autograd.grad((y * y).sum(), [x] + params)
        res.append(([n for n, _ in enc.named_parameters()], [str(r.message) for r in rec],
                    [y.detach().numpy()] + [g.numpy() for g in gs]))
    assert res[1][0] == res[0][0]
    assert res[1][1] == res[0][1]
    for a, b in zip(res[0][2], res[1][2]):
        np.testing.assert_allclose(b, a, rtol=1e-8, atol=1e-10)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("kwargs", [{}, {"batch_first": True, "norm_first": True,
                                         "activation": "gelu"}])
def test_transformer_encoder_decoder(kwargs: dict[str, Any]) -> None:
    res = []
    for lib in (real, tt):
        lib.manual_seed(0)
        model = lib.nn.Transformer(d_model=4, nhead=2, num_encoder_layers=2,
                                   num_decoder_layers=2, dim_feedforward=6, dropout=0.0,
                                   **kwargs)
        model.double()
        rng = np.random.default_rng(0)
        bf = kwargs.get("batch_first", False)
        src = lib.tensor(rng.standard_normal((2, 5, 4) if bf else (5, 2, 4)),
                         requires_grad=True)
        tgt = lib.tensor(rng.standard_normal((2, 3, 4) if bf else (3, 2, 4)),
                         requires_grad=True)
        mask = lib.nn.Transformer.generate_square_subsequent_mask(3, dtype=lib.float64)
        pad = lib.tensor(np.array([[False] * 4 + [True], [False] * 5]))
        y = model(src, tgt, tgt_mask=mask, src_key_padding_mask=pad,
                  memory_key_padding_mask=pad)
        params = [p for _, p in model.named_parameters()]
        gs = lib.autograd.grad((y * y).sum(), [src, tgt] + params)
        res.append(([n for n, _ in model.named_parameters()],
                    [p.detach().numpy() for p in params],
                    [y.detach().numpy(), mask.numpy()] + [g.numpy() for g in gs]))
    assert res[1][0] == res[0][0]
    for a, b in zip(res[0][1], res[1][1]):  # the seeded initialisation, bit for bit
        np.testing.assert_array_equal(b, a)
    for a, b in zip(res[0][2], res[1][2]):
        np.testing.assert_allclose(b, a, rtol=1e-8, atol=1e-10)
