"""The five workloads W1-W5: sizes, data, and the hand-written NumPy limit.

Each workload defines its data (seeded), its size in full and ``--quick``
mode, and a hand-written NumPy forward + backward using only the kernels the
computation needs: the physical limit for an autograd engine built on NumPy.
Every implementation (tapegrad or a peer) is a *setup* function
``setup(data) -> run`` where ``run()`` performs one timed forward + backward
(and, for W1, the SGD update) and returns the gradients as NumPy arrays, in
the order of :attr:`Workload.grad_names`, so they can be checked against the
reference in every run.

- W1: MLP 784-256-256-10 (ReLU, softmax cross-entropy, mean over the batch),
  batch 128, float32, one SGD step (lr 0.01).
- W2: 2,000 scalar ops (``y = y * 1.0001 + 0.0001`` x 1000) + backward.
- W3: a 100,000-op elementwise chain on 16 float64 (``y = y * 1.0001 +
  0.0001`` x 50,000, then ``sum``) + backward; peak memory is measured too.
- W4: Hessian-vector product of ``sum(tanh(X @ w))``, X 256x512, float64.
- W5: ``sum((A @ B + bias) ** 2)`` forward + backward, 512x512, float32.
- W8: one SGD step (lr 0.01) of a LeNet-5-sized CNN, batch 64, 1x28x28, float32:
  conv 6@5x5 - ReLU - max pool 2 - conv 16@5x5 - ReLU - max pool 2 - dense 120 -
  ReLU - dense 84 - ReLU - dense 10, softmax cross-entropy (mean).  Parameters in
  PyTorch's layouts (conv ``(out, in, kh, kw)``, dense ``(out, in)``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Data = dict[str, Any]
Run = Callable[[], list[np.ndarray]]
Setup = Callable[[Data], Run]

LR = 0.01
MUL, ADD = 1.0001, 0.0001  # the W2/W3 chain: y = y * MUL + ADD
W1_PARAMS = ("W1", "b1", "W2", "b2", "W3", "b3")


@dataclass
class Workload:
    """One benchmark workload."""

    key: str
    title: str
    sizes: dict[str, int]
    quick_sizes: dict[str, int]
    make_data: Callable[[dict[str, int], int], Data]
    reference: Setup
    grad_names: tuple[str, ...]
    dtype: str
    #: ops per run, for a per-op time (W2)
    ops: Callable[[dict[str, int]], int] | None = None
    #: sizes for the (discarded) warm-up run, when smaller than the measured one
    warmup_sizes: Callable[[dict[str, int]], dict[str, int]] | None = None
    measure_memory: bool = False
    #: a smaller instance (fraction ``f`` of the work) for implementations too slow to
    #: run the full size within ``--max-run`` seconds
    scale: Callable[[dict[str, int], float], dict[str, int]] | None = None
    notes: list[str] = field(default_factory=list)
    #: the accepted error when it is not the dtype's (W10: what an epoch reaches, whose
    #: example order differs between frameworks)
    tol: float | None = None

    def tolerance(self) -> float:
        """Largest accepted error, relative to the largest reference gradient entry."""
        if self.tol is not None:
            return self.tol
        return 2e-3 if self.dtype == "float32" else 1e-7


# ---------------------------------------------------------------------------- W1
def w1_data(sz: dict[str, int], seed: int) -> Data:
    rng = np.random.default_rng(seed)
    d_in, h, out, n = sz["d_in"], sz["hidden"], sz["classes"], sz["batch"]
    f32 = np.float32

    def he(fan_in: int, fan_out: int) -> np.ndarray:
        return (rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)).astype(f32)

    return {
        "W1": he(d_in, h), "b1": (0.01 * rng.standard_normal(h)).astype(f32),
        "W2": he(h, h), "b2": (0.01 * rng.standard_normal(h)).astype(f32),
        "W3": he(h, out), "b3": (0.01 * rng.standard_normal(out)).astype(f32),
        "x": rng.standard_normal((n, d_in)).astype(f32),
        "y": rng.integers(0, out, size=n).astype(np.int64),
        "lr": LR,
    }


def w1_numpy(d: Data) -> Run:
    params = [np.array(d[k], copy=True) for k in W1_PARAMS]
    x, y, lr = d["x"], d["y"], d["lr"]
    n = x.shape[0]
    rows = np.arange(n)

    def run() -> list[np.ndarray]:
        W1, b1, W2, b2, W3, b3 = params
        a1 = x @ W1
        a1 += b1
        h1 = np.maximum(a1, 0)
        a2 = h1 @ W2
        a2 += b2
        h2 = np.maximum(a2, 0)
        z = h2 @ W3
        z += b3
        m = z.max(axis=1, keepdims=True)
        e = np.exp(z - m)
        s = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(s[:, 0]) + m[:, 0] - z[rows, y])  # noqa: F841 (the forward value)
        dz = e / s
        dz[rows, y] -= 1
        dz /= n
        gW3 = h2.T @ dz
        gb3 = dz.sum(axis=0)
        dh2 = dz @ W3.T
        dh2 *= a2 > 0
        gW2 = h1.T @ dh2
        gb2 = dh2.sum(axis=0)
        dh1 = dh2 @ W2.T
        dh1 *= a1 > 0
        gW1 = x.T @ dh1
        gb1 = dh1.sum(axis=0)
        grads = [gW1, gb1, gW2, gb2, gW3, gb3]
        for p, g in zip(params, grads):
            p -= lr * g
        return grads

    return run


# ---------------------------------------------------------------------------- W2 / W3
def w2_data(sz: dict[str, int], seed: int) -> Data:
    rng = np.random.default_rng(seed)
    return {"x": np.array(rng.uniform(0.5, 1.5)), "n": sz["n"]}


def w2_numpy(d: Data) -> Run:
    x0, n = d["x"], d["n"]

    def run() -> list[np.ndarray]:
        y = x0
        for _ in range(n):
            y = y * MUL + ADD
        g = np.float64(1.0)
        for _ in range(n):  # d(y*a + b)/dy = a
            g = g * MUL
        return [np.asarray(g)]

    return run


def w3_data(sz: dict[str, int], seed: int) -> Data:
    rng = np.random.default_rng(seed)
    return {"x": rng.uniform(-1.0, 1.0, size=sz["width"]), "n": sz["n"]}


def w3_numpy(d: Data) -> Run:
    x0, n = d["x"], d["n"]

    def run() -> list[np.ndarray]:
        y = x0
        for _ in range(n):
            y = y * MUL
            y = y + ADD
        s = y.sum()  # noqa: F841 (the forward value)
        g = np.ones_like(x0)
        for _ in range(n):
            g = g * MUL
        return [g]

    return run


# ---------------------------------------------------------------------------- W4
def w4_data(sz: dict[str, int], seed: int) -> Data:
    rng = np.random.default_rng(seed)
    m, k = sz["rows"], sz["cols"]
    return {
        "X": rng.standard_normal((m, k)) / np.sqrt(k),
        "w": rng.standard_normal(k),
        "v": rng.standard_normal(k),
    }


def w4_numpy(d: Data) -> Run:
    X, w, v = d["X"], d["w"], d["v"]

    def run() -> list[np.ndarray]:
        # f = sum(tanh(X w)); grad = X^T (1 - t^2); H v = X^T (-2 t (1 - t^2) * (X v))
        t = np.tanh(X @ w)
        f = t.sum()  # noqa: F841 (the forward value)
        s = 1.0 - t * t
        u = X @ v
        u *= s
        u *= t
        u *= -2.0
        return [X.T @ u]

    return run


# ---------------------------------------------------------------------------- W5
def w5_data(sz: dict[str, int], seed: int) -> Data:
    rng = np.random.default_rng(seed)
    n = sz["n"]
    f32 = np.float32
    return {
        "A": (rng.standard_normal((n, n)) / np.sqrt(n)).astype(f32),
        "B": rng.standard_normal((n, n)).astype(f32),
        "bias": rng.standard_normal(n).astype(f32),
    }


def w5_numpy(d: Data) -> Run:
    A, B, bias = d["A"], d["B"], d["bias"]

    def run() -> list[np.ndarray]:
        Y = A @ B
        Y += bias
        loss = np.square(Y).sum()  # noqa: F841 (the forward value)
        Y *= 2.0  # dloss/dY
        return [Y @ B.T, A.T @ Y, Y.sum(axis=0)]

    return run


# ---------------------------------------------------------------------------- W8
W8_PARAMS = ("c1w", "c1b", "c2w", "c2b", "f1w", "f1b", "f2w", "f2b", "f3w", "f3b")


def w8_flat(hw: int) -> int:
    """Features after the two conv (5x5) + pool (2) stages of an ``hw x hw`` image."""
    return 16 * ((((hw - 4) // 2) - 4) // 2) ** 2


def w8_data(sz: dict[str, int], seed: int) -> Data:
    rng = np.random.default_rng(seed)
    n, hw = sz["batch"], sz["hw"]
    f32 = np.float32

    def u(shape: tuple[int, ...], fan_in: int) -> np.ndarray:
        b = 1.0 / np.sqrt(fan_in)
        return rng.uniform(-b, b, shape).astype(f32)

    flat = w8_flat(hw)
    return {
        "c1w": u((6, 1, 5, 5), 25), "c1b": u((6,), 25),
        "c2w": u((16, 6, 5, 5), 150), "c2b": u((16,), 150),
        "f1w": u((120, flat), flat), "f1b": u((120,), flat),
        "f2w": u((84, 120), 120), "f2b": u((84,), 120),
        "f3w": u((10, 84), 84), "f3b": u((10,), 84),
        "x": rng.standard_normal((n, 1, hw, hw)).astype(f32),
        "y": rng.integers(0, 10, size=n).astype(np.int64),
        "lr": LR,
    }


def _conv_fwd(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Valid stride-1 convolution by im2col: (output, columns).

    The output is a transposed view of the ``(O, N Ho Wo)`` product (no copy).
    """
    k = w.shape[-1]
    n, c, h, wd = x.shape
    win = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(2, 3))
    ho, wo = h - k + 1, wd - k + 1
    # (N, C, Ho, Wo, k, k) -> (C k k, N Ho Wo): one copy
    cols = np.ascontiguousarray(win.transpose(1, 4, 5, 0, 2, 3)).reshape(c * k * k, -1)
    y = w.reshape(w.shape[0], -1) @ cols
    y += b[:, None]
    return y.reshape(w.shape[0], n, ho, wo).transpose(1, 0, 2, 3), cols


def _conv_bwd(dy: np.ndarray, cols: np.ndarray, w: np.ndarray, x_shape: tuple[int, ...],
              need_dx: bool) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    o, c, k, _ = w.shape
    n, _, h, wd = x_shape
    ho, wo = h - k + 1, wd - k + 1
    dym = np.ascontiguousarray(dy.transpose(1, 0, 2, 3)).reshape(o, -1)
    dw = (dym @ cols.T).reshape(w.shape)
    db = dym.sum(axis=1)
    if not need_dx:
        return None, dw, db
    dcols = (w.reshape(o, -1).T @ dym).reshape(c, k, k, n, ho, wo)
    dx = np.zeros((c, n, h, wd), dtype=dy.dtype)
    for i in range(k):  # col2im: one pass per kernel offset
        for j in range(k):
            dx[:, :, i:i + ho, j:j + wo] += dcols[:, i, j]
    return dx.transpose(1, 0, 2, 3), dw, db


def _pool_fwd(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2x2 max pooling, stride 2: (output, offset 0-3 of the first maximum per window)."""
    views = [x[:, :, i::2, j::2] for i in (0, 1) for j in (0, 1)]
    best = views[0].copy()
    am = np.zeros(best.shape, dtype=np.int8)
    for j in (1, 2, 3):
        upd = views[j] > best
        np.maximum(best, views[j], out=best)
        np.copyto(am, j, where=upd)
    return best, am


def _pool_bwd(dy: np.ndarray, am: np.ndarray) -> np.ndarray:
    n, c, h2, w2 = dy.shape
    d = np.zeros((n, c, 2 * h2, 2 * w2), dtype=dy.dtype)
    for j, (a, b) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):
        np.copyto(d[:, :, a::2, b::2], dy, where=am == j)
    return d


def w8_numpy(d: Data) -> Run:
    params = [np.array(d[k], copy=True) for k in W8_PARAMS]
    x, y, lr = d["x"], d["y"], d["lr"]
    n = x.shape[0]
    rows = np.arange(n)

    def run() -> list[np.ndarray]:
        c1w, c1b, c2w, c2b, f1w, f1b, f2w, f2b, f3w, f3b = params
        a1, cols1 = _conv_fwd(x, c1w, c1b)
        r1 = np.maximum(a1, 0)
        p1, am1 = _pool_fwd(r1)
        a2, cols2 = _conv_fwd(p1, c2w, c2b)
        r2 = np.maximum(a2, 0)
        p2, am2 = _pool_fwd(r2)
        h0 = p2.reshape(n, -1)
        z1 = h0 @ f1w.T
        z1 += f1b
        h1 = np.maximum(z1, 0)
        z2 = h1 @ f2w.T
        z2 += f2b
        h2 = np.maximum(z2, 0)
        z = h2 @ f3w.T
        z += f3b
        m = z.max(axis=1, keepdims=True)
        e = np.exp(z - m)
        s = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(s[:, 0]) + m[:, 0] - z[rows, y])  # noqa: F841 (the forward value)
        dz = e / s
        dz[rows, y] -= 1
        dz /= n
        gf3w, gf3b = dz.T @ h2, dz.sum(axis=0)
        dh2 = dz @ f3w
        dh2 *= z2 > 0
        gf2w, gf2b = dh2.T @ h1, dh2.sum(axis=0)
        dh1 = dh2 @ f2w
        dh1 *= z1 > 0
        gf1w, gf1b = dh1.T @ h0, dh1.sum(axis=0)
        dp2 = (dh1 @ f1w).reshape(p2.shape)
        dr2 = _pool_bwd(dp2, am2)
        dr2 *= a2 > 0
        dp1, gc2w, gc2b = _conv_bwd(dr2, cols2, c2w, p1.shape, True)
        assert dp1 is not None
        dr1 = _pool_bwd(dp1, am1)
        dr1 *= a1 > 0
        _, gc1w, gc1b = _conv_bwd(dr1, cols1, c1w, x.shape, False)
        grads = [gc1w, gc1b, gc2w, gc2b, gf1w, gf1b, gf2w, gf2b, gf3w, gf3b]
        for p, g in zip(params, grads):
            p -= lr * g
        return grads

    return run


WORKLOADS: dict[str, Workload] = {
    "W1": Workload(
        key="W1",
        title="MLP 784-256-256-10, batch 128, float32, one SGD step",
        sizes={"d_in": 784, "hidden": 256, "classes": 10, "batch": 128},
        quick_sizes={"d_in": 32, "hidden": 16, "classes": 4, "batch": 8},
        make_data=w1_data,
        reference=w1_numpy,
        grad_names=W1_PARAMS,
        dtype="float32",
    ),
    "W2": Workload(
        key="W2",
        title="2,000 scalar ops (y = y*1.0001 + 0.0001 x1000) + backward",
        sizes={"n": 1000},
        quick_sizes={"n": 20},
        make_data=w2_data,
        reference=w2_numpy,
        grad_names=("x",),
        dtype="float64",
        ops=lambda sz: 2 * sz["n"],
    ),
    "W3": Workload(
        key="W3",
        title="100,000-op elementwise chain on 16 float64 + backward",
        sizes={"n": 50_000, "width": 16},
        quick_sizes={"n": 200, "width": 16},
        make_data=w3_data,
        reference=w3_numpy,
        grad_names=("x",),
        dtype="float64",
        ops=lambda sz: 2 * sz["n"],
        warmup_sizes=lambda sz: {"n": min(sz["n"], 500), "width": sz["width"]},
        measure_memory=True,
        scale=lambda sz, f: {"n": max(min(sz["n"], 500), int(sz["n"] * f) // 500 * 500),
                             "width": sz["width"]},
    ),
    "W4": Workload(
        key="W4",
        title="Hessian-vector product of sum(tanh(X @ w)), X 256x512, float64",
        sizes={"rows": 256, "cols": 512},
        quick_sizes={"rows": 8, "cols": 16},
        make_data=w4_data,
        reference=w4_numpy,
        grad_names=("Hv",),
        dtype="float64",
    ),
    "W5": Workload(
        key="W5",
        title="sum((A @ B + bias) ** 2) fwd+bwd, 512x512, float32",
        sizes={"n": 512},
        quick_sizes={"n": 16},
        make_data=w5_data,
        reference=w5_numpy,
        grad_names=("A", "B", "bias"),
        dtype="float32",
    ),
    "W8": Workload(
        key="W8",
        title="LeNet-5 CNN step, batch 64, 1x28x28, float32, one SGD step",
        sizes={"batch": 64, "hw": 28},
        quick_sizes={"batch": 4, "hw": 16},
        make_data=w8_data,
        reference=w8_numpy,
        grad_names=W8_PARAMS,
        dtype="float32",
    ),
}


def check(grads: list[np.ndarray], ref: list[np.ndarray], tol: float) -> tuple[bool, float]:
    """Compare gradients with the reference: (ok, largest error relative to max |ref|)."""
    if len(grads) != len(ref):
        return False, float("inf")
    worst = 0.0
    for g, r in zip(grads, ref):
        g = np.asarray(g, dtype=np.float64)
        r = np.asarray(r, dtype=np.float64)
        if g.shape != r.shape:
            return False, float("inf")
        scale = float(np.max(np.abs(r))) if r.size else 0.0
        err = float(np.max(np.abs(g - r))) if r.size else 0.0
        if not np.isfinite(err):
            return False, float("inf")
        worst = max(worst, err / (scale if scale > 0 else 1.0))
    return worst <= tol, worst


# W4F, W6/W6L and W7R/W7F/W7L live in benchmarks/transforms.py, which adds them to WORKLOADS
# W9 (an LSTM step) and W10/W10B (an epoch through DataLoader / tf.data + fit, and bare)
# live in benchmarks/training.py
from . import training as _training  # noqa: E402,F401
from . import transforms as _transforms  # noqa: E402,F401
