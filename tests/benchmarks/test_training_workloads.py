"""W9/W10's hand-written NumPy references and checks, and the runner's progress line."""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from benchmarks import run as runner
from benchmarks.training import (
    W9_PARAMS,
    W10_QUICK,
    core_setups,
    probe,
    w9_data,
    w9_numpy,
    w10_data,
    w10_numpy,
)
from benchmarks.workloads import W1_PARAMS, WORKLOADS, check

W9_TINY = {"seq": 4, "batch": 3, "input": 5, "hidden": 4, "classes": 3}


def _w9_loss(d: dict[str, Any]) -> float:
    """W9's loss in float64, written directly (no hand-derived backward)."""
    p = {k: d[k].astype(np.float64) for k in W9_PARAMS}
    x, y = d["x"].astype(np.float64), d["y"]
    h = np.zeros((x.shape[1], p["w_hh"].shape[1]))
    c = np.zeros_like(h)
    hid = h.shape[1]
    for t in range(x.shape[0]):
        z = x[t] @ p["w_ih"].T + p["b_ih"] + h @ p["w_hh"].T + p["b_hh"]
        i, f = 1 / (1 + np.exp(-z[:, :hid])), 1 / (1 + np.exp(-z[:, hid:2 * hid]))
        g, o = np.tanh(z[:, 2 * hid:3 * hid]), 1 / (1 + np.exp(-z[:, 3 * hid:]))
        c = f * c + i * g
        h = o * np.tanh(c)
    logits = h @ p["fc_w"].T + p["fc_b"]
    m = logits.max(axis=1, keepdims=True)
    lse = np.log(np.exp(logits - m).sum(axis=1)) + m[:, 0]
    return float(np.mean(lse - logits[np.arange(len(y)), y]))


def test_w9_hand_numpy_gradients_match_finite_differences() -> None:
    d = w9_data(W9_TINY, 0)
    d64 = {k: (v.astype(np.float64) if isinstance(v, np.ndarray) and v.dtype == np.float32
               else v) for k, v in d.items()}
    grads = w9_numpy(d64)()
    eps = 1e-6
    for name, g in zip(W9_PARAMS, grads):
        fd = np.zeros_like(g)
        for idx in np.ndindex(g.shape):
            for sign in (1, -1):
                e = dict(d64)
                e[name] = d64[name].copy()
                e[name][idx] += sign * eps
                fd[idx] += sign * _w9_loss(e) / (2 * eps)
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-8, err_msg=name)


def test_w9_core_matches_the_reference() -> None:
    import tapegrad as tg

    d = w9_data(W9_TINY, 1)
    ok, err = check(core_setups(tg)["W9"](d)(), w9_numpy(d)(), WORKLOADS["W9"].tolerance())
    assert ok, err


def test_w10_probe_tells_a_trained_model_from_an_untrained_one() -> None:
    sz = dict(W10_QUICK, examples=2048, batch=64)
    d = w10_data(sz, 0)
    trained = w10_numpy(d)()
    untrained = probe(d, [d[k] for k in W1_PARAMS])
    tol = WORKLOADS["W10"].tolerance()
    assert check(trained, trained, tol)[0]
    assert trained[0][0] < untrained[0][0]  # the epoch lowered the loss
    assert not check(untrained, trained, tol)[0]  # and the check sees the difference
    import tapegrad as tg

    for key in ("W10", "W10B"):  # the core's epochs reach the same place
        ok, err = check(core_setups(tg)[key](d)(), trained, tol)
        assert ok, (key, err)


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def test_progress_line_only_on_a_terminal_and_after_a_while() -> None:
    tty = _Stream(True)
    p = runner.Progress(stream=tty, after=0.0)
    p.show("W10 round 1/7: tapegrad core (backward)")
    p.show("W10 round 2/7: PyTorch")
    p.clear()
    text = tty.getvalue()
    assert text.startswith("\rW10 round 1/7: tapegrad core (backward)")
    assert "\rW10 round 2/7: PyTorch" in text and text.endswith("\r")
    assert p.width == 0
    late = runner.Progress(stream=_Stream(True), after=3600.0)  # a quick run shows nothing
    late.show("W1 round 1/7")
    assert late.stream.getvalue() == ""
    piped = _Stream(False)
    q = runner.Progress(stream=piped, after=0.0)
    q.show("W1 round 1/7")
    q.clear()
    assert piped.getvalue() == ""
