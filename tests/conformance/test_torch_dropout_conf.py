"""Dropout masks and Bernoulli draws on real PyTorch and on tapegrad.torch, bit for bit.

After ``torch.manual_seed`` both draw the same masks (``F.dropout``, ``nn.Dropout``,
the feature and alpha variants, dropout between recurrent layers, attention dropout,
``torch.bernoulli``, ``Tensor.bernoulli_``) and leave the generator in the same state,
so the ``torch.rand`` that follows each program agrees too.  Values are compared
exactly (``rtol=0, atol=0``) where PyTorch's arithmetic is elementwise; models with
matrix products are compared to float32/float64 rounding.  Whichever CPU kernel this
machine's PyTorch picks (MKL on Intel, the MT19937 one elsewhere) is the one compared.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

from tests.torch_style.torch_harness import compare

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402

RNG = np.random.default_rng(21)
SHAPES = [(5,), (800,), (801,), (3, 1001), (2, 3, 17, 19)]


def _x(shape: tuple[int, ...], dt: Any = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dt)


@pytest.mark.parametrize("shape", SHAPES, ids=[str(s) for s in SHAPES])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.77])
@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["f32", "f64"])
def test_dropout_mask_values_and_generator_state(shape: tuple[int, ...], p: float,
                                                 dt: Any) -> None:
    x = _x(shape, dt)

    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        y = torch.nn.functional.dropout(torch.tensor(x), p)
        return y, (y == 0), torch.rand(4)
    compare(prog, real, tt, rtol=0, atol=0)


def test_dropout_sequence_mixed_with_other_draws() -> None:
    x = _x((4, 300))
    x4 = _x((2, 6, 5, 5))

    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        torch.manual_seed(7)
        a = torch.rand(3)
        b = F.dropout(torch.tensor(x), 0.25)
        c = torch.randn(17, dtype=torch.float64)
        d = F.dropout2d(torch.tensor(x4), 0.4)
        e = torch.randint(0, 9, (5,))
        f = F.alpha_dropout(torch.tensor(x), 0.2, True)
        g = torch.empty(33).bernoulli_(0.6)
        h = F.dropout(torch.tensor(x), 0.5)
        return a, b, c, d, e, f, g, h, torch.rand(2), torch.get_rng_state()
    compare(prog, real, tt, rtol=0, atol=0)


def test_dropout_follows_the_layout_of_a_transposed_input() -> None:
    x = _x((6, 7))

    def prog(torch: Any) -> Any:
        torch.manual_seed(3)
        t = torch.tensor(x)
        return (torch.nn.functional.dropout(t.t(), 0.5),
                torch.nn.functional.dropout(t[:, ::2], 0.5),
                torch.nn.functional.dropout(t.reshape(2, 3, 7).permute(2, 0, 1), 0.3),
                torch.rand(2))
    compare(prog, real, tt, rtol=0, atol=0)


def test_dropout_module_train_eval_inplace_and_p_edges() -> None:
    x = _x((40, 30))

    def prog(torch: Any) -> Any:
        torch.manual_seed(1)
        m = torch.nn.Dropout(0.3)
        y_train = m(torch.tensor(x))
        m.eval()
        y_eval = m(torch.tensor(x))
        t = torch.tensor(x)
        y_in = torch.nn.functional.dropout(t, 0.6, inplace=True)
        return (y_train, y_eval, y_in, t, torch.nn.functional.dropout(torch.tensor(x), 1.0),
                torch.nn.functional.dropout(torch.tensor(x), 0.0), torch.rand(3))
    compare(prog, real, tt, rtol=0, atol=0)


FEATURE = [("dropout1d", (4, 5, 6)), ("dropout1d", (5, 6)), ("dropout2d", (2, 3, 4, 5)),
           ("dropout2d", (3, 4, 5)), ("dropout2d", (3, 4)), ("dropout3d", (2, 3, 2, 2, 2)),
           ("dropout3d", (3, 2, 2, 2)), ("alpha_dropout", (30, 40)),
           ("feature_alpha_dropout", (3, 4, 5)), ("feature_alpha_dropout", (5,))]


@pytest.mark.parametrize("fn,shape", FEATURE, ids=[f"{f}{s}" for f, s in FEATURE])
@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["f32", "f64"])
def test_feature_and_alpha_dropout(fn: str, shape: tuple[int, ...], dt: Any) -> None:
    x = _x(shape, dt)

    def prog(torch: Any) -> Any:
        torch.manual_seed(5)
        t = torch.tensor(x, requires_grad=True)
        y = getattr(torch.nn.functional, fn)(t, 0.3, True)
        (g,) = torch.autograd.grad((y * y).sum(), [t])
        return y, g, torch.rand(2)
    compare(prog, real, tt, rtol=0, atol=0)


def test_dropout_float16() -> None:
    x = _x((300,), np.float16)

    def prog(torch: Any) -> Any:
        torch.manual_seed(2)
        return torch.nn.functional.dropout(torch.tensor(x), 0.3), torch.rand(2)
    compare(prog, real, tt, rtol=0, atol=0)


def test_bernoulli_forms_and_errors() -> None:
    probs = RNG.random((5, 7))

    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        P = torch.tensor(probs)
        out: list[Any] = [
            torch.bernoulli(P), torch.bernoulli(P.float()), torch.bernoulli(P, 0.3),
            P.bernoulli(), P.float().bernoulli(0.2), torch.empty(5, 7).bernoulli_(0.6),
            torch.empty(5, 7, dtype=torch.float64).bernoulli_(P[0].float()),
            torch.empty(5, 7, dtype=torch.int64).bernoulli_(P),
            torch.empty(5, 7, dtype=torch.bool).bernoulli_(0.5),
            torch.empty(7, 5).t().bernoulli_(0.4), torch.bernoulli(P.t()),
            torch.bernoulli(P, generator=torch.Generator().manual_seed(4)),
            torch.rand(3)]
        for bad in (lambda: torch.empty(3).bernoulli_(1.5),
                    lambda: torch.empty(3).bernoulli_(torch.tensor([0.5, 0.2])),
                    lambda: torch.bernoulli(torch.tensor([1, 0]))):
            try:
                bad()
            except Exception as e:  # noqa: BLE001
                out.append(e)
        return out
    compare(prog, real, tt, rtol=0, atol=0)


def test_bernoulli_probability_out_of_range_message() -> None:
    for lib in (real, tt):
        with pytest.raises(RuntimeError) as e:
            lib.bernoulli(lib.tensor([0.5, 1.2]))
        assert str(e.value).startswith("Expected p_in >= 0 && p_in <= 1 to be true")


def _mlp(torch: Any) -> Any:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(10, 32), torch.nn.ReLU(),
                               torch.nn.Dropout(0.3), torch.nn.Linear(32, 3))


def test_training_steps_with_dropout_match_pytorch() -> None:
    xs = _x((3, 16, 10))
    ys = RNG.integers(0, 3, (3, 16))

    def prog(torch: Any) -> Any:
        model = _mlp(torch)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        out = []
        for i in range(3):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(torch.tensor(xs[i])),
                                                     torch.tensor(ys[i]))
            loss.backward()
            out.append((loss.detach(), [p.grad.clone() for p in model.parameters()]))
            opt.step()
        model.eval()
        out.append(model(torch.tensor(xs[0])).detach())
        return out, [p.detach() for p in model.parameters()], torch.rand(2)
    compare(prog, real, tt, rtol=2e-5, atol=1e-6)


RNNS = [(m, bf, bi) for m in ("LSTM", "GRU", "RNN") for bf in (False, True)
        for bi in (False, True)]


@pytest.mark.parametrize("mode,bf,bi", RNNS, ids=[f"{m}-bf{int(b)}-bi{int(d)}"
                                                  for m, b, d in RNNS])
def test_recurrent_dropout_between_layers(mode: str, bf: bool, bi: bool) -> None:
    x = _x((3, 5, 4), np.float64)

    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        m = getattr(torch.nn, mode)(4, 6, num_layers=3, dropout=0.4, batch_first=bf,
                                    bidirectional=bi).double()
        t = torch.tensor(x, requires_grad=True)
        y = m(t)[0]
        grads = torch.autograd.grad((y * y).sum(), [t, *m.parameters()])
        return y.detach(), [g.detach() for g in grads], torch.rand(2)
    compare(prog, real, tt, rtol=1e-9, atol=1e-11)


def test_lstm_dropout_float32_then_dropout_on_its_batch_first_output() -> None:
    x = _x((4, 6, 5))

    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        lstm = torch.nn.LSTM(5, 8, num_layers=2, dropout=0.5, batch_first=True)
        out, _ = lstm(torch.tensor(x))
        y = torch.nn.Dropout(0.2)(out)  # a transposed view in both: drawn in memory order
        return y.detach(), (y == 0), torch.rand(2)
    compare(prog, real, tt, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_dropout_p(causal: bool) -> None:
    q, k, v = (_x((2, 3, 5, 4), np.float64) for _ in range(3))

    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        ts = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
        y = torch.nn.functional.scaled_dot_product_attention(*ts, dropout_p=0.3,
                                                             is_causal=causal)
        grads = torch.autograd.grad((y * y).sum(), ts)
        return y.detach(), [g.detach() for g in grads], torch.rand(2)
    compare(prog, real, tt, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_dropout(need_weights: bool) -> None:
    x = _x((3, 5, 8))

    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        m = torch.nn.MultiheadAttention(8, 2, dropout=0.4, batch_first=True)
        y, w = m(torch.tensor(x), torch.tensor(x), torch.tensor(x), need_weights=need_weights)
        return y.detach(), None if w is None else w.detach(), torch.rand(2)
    compare(prog, real, tt, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("batch_first,norm_first", [(False, False), (True, False),
                                                    (True, True)])
def test_transformer_encoder_layer_training(batch_first: bool, norm_first: bool) -> None:
    x = _x((3, 5, 8), np.float64)

    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        m = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.3,
                                             batch_first=batch_first,
                                             norm_first=norm_first).double()
        t = torch.tensor(x, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = m(t)
        grads = torch.autograd.grad((y * y).sum(), [t, *m.parameters()])
        return y.detach(), [g.detach() for g in grads], torch.rand(2)
    compare(prog, real, tt, rtol=1e-9, atol=1e-11)


def test_feature_dropout_warnings_and_errors() -> None:
    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        torch.manual_seed(0)
        out: list[Any] = [F.dropout2d(torch.ones(3, 4), 0.5), F.dropout3d(torch.ones(3), 0.5)]
        for bad in (lambda: F.dropout2d(torch.ones(3), 0.5),
                    lambda: F.feature_alpha_dropout(torch.ones(3), 0.5, True),
                    lambda: F.dropout1d(torch.ones(3), 0.5),
                    lambda: F.dropout(torch.tensor([1, 2]), 0.5)):
            try:
                bad()
            except Exception as e:  # noqa: BLE001
                out.append(e)
        return out
    compare(prog, real, tt, rtol=0, atol=0)


VMAP = [("dropout", lambda F, torch, t: F.dropout(t, 0.5)),
        ("alpha_dropout", lambda F, torch, t: F.alpha_dropout(t, 0.3, True)),
        ("dropout1d", lambda F, torch, t: F.dropout1d(t.reshape(2, 4), 0.5)),
        ("bernoulli", lambda F, torch, t: torch.bernoulli(t.abs() / 30)),
        ("bernoulli_p", lambda F, torch, t: torch.bernoulli(t, 0.3)),
        ("bernoulli_unbatched", lambda F, torch, t: torch.bernoulli(torch.full((8,), 0.5)) + t)]


@pytest.mark.parametrize("name,fn", VMAP, ids=[n for n, _ in VMAP])
@pytest.mark.parametrize("randomness", ["different", "same", "error"])
def test_draws_under_vmap(name: str, fn: Any, randomness: str) -> None:
    x = np.arange(1, 25, dtype=np.float32).reshape(3, 8)

    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        F = torch.nn.functional
        y = torch.func.vmap(lambda t: fn(F, torch, t), randomness=randomness)(torch.tensor(x))
        return y, torch.rand(2)
    compare(prog, real, tt, rtol=0, atol=0)


def test_bernoulli_of_probabilities_that_require_grad() -> None:
    probs = RNG.random((4, 6))

    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        p = torch.tensor(probs, requires_grad=True)
        y = torch.bernoulli(p)
        z = torch.bernoulli(p * 0.5)
        (g,) = torch.autograd.grad((y * 3 + z).sum(), [p])
        with torch.no_grad():
            w = torch.bernoulli(p)
        return y, z, g, w, torch.rand(2)
    compare(prog, real, tt, rtol=0, atol=0)


def test_dropout_straight_after_convolution_and_batch_norm() -> None:
    x = _x((2, 3, 9, 8))

    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        conv = torch.nn.Conv2d(3, 5, 3, padding=1)
        bn = torch.nn.BatchNorm2d(5)
        tconv = torch.nn.ConvTranspose2d(3, 4, 2, stride=2)
        t = torch.tensor(x)
        a = torch.nn.functional.dropout(torch.relu(conv(t)), 0.5)
        b = torch.nn.Dropout(0.3)(bn(conv(t)))
        c = torch.nn.functional.dropout(tconv(t), 0.4)
        return [(v == 0) for v in (a, b, c)], [v.detach() for v in (a, b, c)], torch.rand(2)
    compare(prog, real, tt, rtol=1e-5, atol=1e-6)


def test_dropout_after_contiguous_of_a_transposed_view() -> None:
    x = _x((6, 7, 5))

    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        t = torch.tensor(x, requires_grad=True)
        u = t.transpose(1, 2).contiguous()
        y = torch.nn.functional.dropout(u, 0.5)
        (g,) = torch.autograd.grad((y * y).sum(), [t])
        return u, y, g, t.contiguous() is t, torch.rand(2)
    compare(prog, real, tt, rtol=0, atol=0)
