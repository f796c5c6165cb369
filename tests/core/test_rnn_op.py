"""The fused LSTM recurrence (tapegrad.ops.rnn.lstm_seq): values against the step-by-step
composite, gradients to second order, the JVP rule against finite differences, the batching
rule against a loop."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.ops.rnn import _step_ops, lstm_seq
from tapegrad.testing import gradcheck

RNG = np.random.default_rng(0)
T, N, H = 4, 2, 3
XW = RNG.standard_normal((T, N, 4 * H))
H0 = 0.5 * RNG.standard_normal((N, H))
C0 = 0.5 * RNG.standard_normal((N, H))
W = 0.5 * RNG.standard_normal((4 * H, H))
B = 0.5 * RNG.standard_normal(4 * H)
ARGS = [XW, H0, C0, W, B]


def _composite(xw: Any, h0: Any, c0: Any, w: Any, b: Any) -> tuple[list[Any], Any]:
    h, c = h0, c0
    hs = []
    for t in range(xw.shape[0]):
        h, c, *_ = _step_ops(xw[t], h, c, w, b)
        hs.append(h)
    return hs, c


def test_values_and_stash_match_the_step_composite() -> None:
    out = lstm_seq(*[tg.tensor(a) for a in ARGS]).numpy()
    assert out.shape == (7 * T + 1, N, H)
    hs, c = _composite(*[tg.tensor(a) for a in ARGS])
    np.testing.assert_allclose(out[:T], np.stack([h.numpy() for h in hs]), rtol=1e-12)
    np.testing.assert_allclose(out[T], c.numpy(), rtol=1e-12)
    h, cc = tg.tensor(H0), tg.tensor(C0)
    for t in range(T):  # the stash: i, f, o, g, c_t, tanh(c_t) of every step
        h, cc, i, f, g, o, tc = _step_ops(tg.tensor(XW[t]), h, cc, tg.tensor(W), tg.tensor(B))
        for k, v in enumerate([i, f, o, g, cc, tc]):
            np.testing.assert_allclose(out[T + 1 + 6 * t + k], v.numpy(), rtol=1e-12)


def test_gradients_to_second_order() -> None:
    # the public part of the result (hidden states and final cell state)
    assert gradcheck(lambda *a: lstm_seq(*a)[: T + 1], [tg.tensor(a) for a in ARGS], order=2)


def test_first_order_numpy_backward_equals_composite() -> None:
    xs = [tg.tensor(a, requires_grad=True) for a in ARGS]
    u = RNG.standard_normal((T + 1, N, H))
    g1 = tg.grad((lstm_seq(*xs)[: T + 1] * u).sum(), xs)
    hs, c = _composite(*xs)
    loss = sum((h * u[t]).sum() for t, h in enumerate(hs)) + (c * u[T]).sum()
    g2 = tg.grad(loss, xs)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("which", [(0,), (1, 2), (3,), (4,), (0, 1, 2, 3, 4)])
def test_jvp_rule_matches_finite_differences(which: tuple[int, ...]) -> None:
    rng = np.random.default_rng(1)
    vs = [rng.standard_normal(a.shape) if i in which else None for i, a in enumerate(ARGS)]
    out = lstm_seq.fwd(*ARGS)
    eps = 1e-6
    plus = [a + eps * v if v is not None else a for a, v in zip(ARGS, vs)]
    minus = [a - eps * v if v is not None else a for a, v in zip(ARGS, vs)]
    num = (lstm_seq.fwd(*plus) - lstm_seq.fwd(*minus)) / (2 * eps)
    assert lstm_seq.jvp is not None
    got = lstm_seq.jvp(*[tg.tensor(v) if v is not None else None for v in vs],
                       *[tg.tensor(a) for a in ARGS], out=tg.tensor(out))
    np.testing.assert_allclose(got.numpy(), num, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("batched", [(True, False, False, False, False),
                                     (False, True, True, False, False),
                                     (True, True, True, False, False),
                                     (False, False, False, True, False),
                                     (True, False, False, False, True)])
def test_batching_rule_matches_loop(batched: tuple[bool, ...]) -> None:
    rng = np.random.default_rng(2)
    vals = [np.stack([a, a + 0.1 * rng.standard_normal(a.shape)]) if b else a
            for a, b in zip(ARGS, batched)]
    loop = np.stack([lstm_seq.fwd(*[v[j] if b else v for v, b in zip(vals, batched)])
                     for j in range(2)])
    assert lstm_seq.batch is not None
    got = lstm_seq.batch(batched, *[tg.tensor(v) for v in vals])
    np.testing.assert_allclose(got.numpy(), loop, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------- GRU
from tapegrad.ops.rnn import _gru_step_ops, gru_seq  # noqa: E402

GXW = RNG.standard_normal((T, N, 3 * H))
GW = 0.5 * RNG.standard_normal((3 * H, H))
GB = 0.5 * RNG.standard_normal(3 * H)
GARGS = [GXW, H0, GW, GB]


@pytest.mark.parametrize("order", ["rzn", "zrn"])
def test_gru_values_match_the_step_composite(order: str) -> None:
    out = gru_seq(*[tg.tensor(a) for a in GARGS], order=order).numpy()
    assert out.shape == (5 * T, N, H)
    h = tg.tensor(H0)
    for t in range(T):
        h, r, z, n, hn = _gru_step_ops(tg.tensor(GXW[t]), h, tg.tensor(GW), tg.tensor(GB),
                                       order)
        np.testing.assert_allclose(out[t], h.numpy(), rtol=1e-12)
        for k, v in enumerate([r, z, n, hn]):
            np.testing.assert_allclose(out[T + 4 * t + k], v.numpy(), rtol=1e-12)


@pytest.mark.parametrize("order", ["rzn", "zrn"])
def test_gru_gradients_to_second_order(order: str) -> None:
    assert gradcheck(lambda *a: gru_seq(*a, order=order)[:T], [tg.tensor(a) for a in GARGS],
                     order=2)


@pytest.mark.parametrize("which", [(0,), (1,), (2,), (3,), (0, 1, 2, 3)])
def test_gru_jvp_rule_matches_finite_differences(which: tuple[int, ...]) -> None:
    rng = np.random.default_rng(6)
    vs = [rng.standard_normal(a.shape) if i in which else None for i, a in enumerate(GARGS)]
    eps = 1e-6
    plus = [a + eps * v if v is not None else a for a, v in zip(GARGS, vs)]
    minus = [a - eps * v if v is not None else a for a, v in zip(GARGS, vs)]
    num = (gru_seq.fwd(*plus, order="zrn") - gru_seq.fwd(*minus, order="zrn")) / (2 * eps)
    assert gru_seq.jvp is not None
    got = gru_seq.jvp(*[tg.tensor(v) if v is not None else None for v in vs],
                      *[tg.tensor(a) for a in GARGS],
                      out=tg.tensor(gru_seq.fwd(*GARGS, order="zrn")), order="zrn")
    np.testing.assert_allclose(got.numpy(), num, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("batched", [(True, False, False, False), (False, True, False, False),
                                     (False, False, True, True)])
def test_gru_batching_rule_matches_loop(batched: tuple[bool, ...]) -> None:
    rng = np.random.default_rng(7)
    vals = [np.stack([a, a + 0.1 * rng.standard_normal(a.shape)]) if b else a
            for a, b in zip(GARGS, batched)]
    loop = np.stack([gru_seq.fwd(*[v[j] if b else v for v, b in zip(vals, batched)])
                     for j in range(2)])
    assert gru_seq.batch is not None
    got = gru_seq.batch(batched, *[tg.tensor(v) for v in vals])
    np.testing.assert_allclose(got.numpy(), loop, rtol=1e-12, atol=1e-14)
