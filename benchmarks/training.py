"""The training workloads: W9 (one LSTM step) and W10 / W10B (one epoch through the data
and fit machinery, and the same epoch over pre-batched arrays).

- W9: one SGD step (lr 0.01) of a 1-layer LSTM (input 128, hidden 128) over a batch of
  32 sequences of 35 steps, a dense 128 -> 10 head on the last hidden state, softmax
  cross-entropy (mean).  Parameters in PyTorch's layouts (``weight_ih (4H, I)``,
  ``weight_hh (4H, H)``, ``bias_ih``, ``bias_hh``; gates ``i, f, g, o``, which is
  Keras's ``i, f, c, o``); Keras has one bias, ``bias_ih + bias_hh``, and its gradient
  is both biases' gradient.
- W10: one epoch of W1's MLP (784-256-256-10, SGD lr 0.01) over 60,000 synthetic
  examples through the front-ends' data machinery: ``DataLoader(TensorDataset(...),
  batch_size=128, shuffle=True)`` and a manual loop in PyTorch style;
  ``tf.data.Dataset.from_tensor_slices(...).shuffle(60000).batch(128)`` and
  ``model.fit(verbose=0)`` in TensorFlow style.  The tapegrad core has no data pipeline:
  its W10 gathers each shuffled batch from the NumPy arrays (``x[idx]``).
- W10B: the same epoch over batches made before the clock starts (the bare loop: the
  same step code, no loader, no ``fit``; TensorFlow style a ``GradientTape`` loop with
  ``apply_gradients`` on the same Keras model).  W10's ratio over W10B's is what the
  machinery adds.

The hand-NumPy limit of W10 and W10B is the same: W1's hand-written step over the
pre-batched arrays, in order.  An epoch's end point depends on the order of the
examples, which no two frameworks draw alike, so W10/W10B check what training reached
instead of gradients: the loss and accuracy on a fixed probe of 2,048 training examples,
computed in NumPy from the final weights (within 5% of the hand-NumPy epoch's; an
implementation that does not train stays at the initial loss, far outside).

The PyTorch-style setups run on real PyTorch or ``tapegrad.torch``, the TensorFlow-style
ones on real TensorFlow / Keras or ``tapegrad.tf``, only the module differing, as in
:mod:`benchmarks.impls`.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from . import transforms as _transforms  # noqa: F401  (W4F-W7L come first in the table)
from .workloads import LR, W1_PARAMS, WORKLOADS, Data, Run, Setup, Workload, w1_data

W9_PARAMS = ("w_ih", "w_hh", "b_ih", "b_hh", "fc_w", "fc_b")


# ---------------------------------------------------------------------------- W9 data
def w9_data(sz: dict[str, int], seed: int) -> Data:
    rng = np.random.default_rng(seed)
    t, n, i, h, c = sz["seq"], sz["batch"], sz["input"], sz["hidden"], sz["classes"]
    f32 = np.float32

    def u(shape: tuple[int, ...], fan: int) -> np.ndarray:  # PyTorch's LSTM / Linear bound
        b = 1.0 / np.sqrt(fan)
        return rng.uniform(-b, b, shape).astype(f32)

    return {
        "w_ih": u((4 * h, i), h), "w_hh": u((4 * h, h), h),
        "b_ih": u((4 * h,), h), "b_hh": u((4 * h,), h),
        "fc_w": u((c, h), h), "fc_b": u((c,), h),
        "x": rng.standard_normal((t, n, i)).astype(f32),  # (seq, batch, input): PyTorch's
        "y": rng.integers(0, c, size=n).astype(np.int64),
        "lr": LR,
    }


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def w9_numpy(d: Data) -> Run:
    params = [np.array(d[k], copy=True) for k in W9_PARAMS]
    x, y, lr = d["x"], d["y"], d["lr"]
    steps, n, _ = x.shape
    rows = np.arange(n)

    def run() -> list[np.ndarray]:
        w_ih, w_hh, b_ih, b_hh, fc_w, fc_b = params
        hid = w_hh.shape[1]
        xw = (x.reshape(steps * n, -1) @ w_ih.T).reshape(steps, n, 4 * hid)
        xw += b_ih + b_hh
        h = np.zeros((n, hid), dtype=x.dtype)
        c = np.zeros((n, hid), dtype=x.dtype)
        hs, cs, gates, tcs = [h], [c], [], []
        for t in range(steps):
            z = xw[t] + h @ w_hh.T
            i, f = _sigmoid(z[:, :hid]), _sigmoid(z[:, hid:2 * hid])
            g, o = np.tanh(z[:, 2 * hid:3 * hid]), _sigmoid(z[:, 3 * hid:])
            c = f * c + i * g
            tc = np.tanh(c)
            h = o * tc
            hs.append(h)
            cs.append(c)
            gates.append((i, f, g, o))
            tcs.append(tc)
        logits = h @ fc_w.T + fc_b
        m = logits.max(axis=1, keepdims=True)
        e = np.exp(logits - m)
        s = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(s[:, 0]) + m[:, 0] - logits[rows, y])  # noqa: F841
        dz = e / s
        dz[rows, y] -= 1
        dz /= n
        g_fc_w, g_fc_b = dz.T @ h, dz.sum(axis=0)
        dh = dz @ fc_w
        dc = np.zeros_like(dh)
        dgates = np.empty((steps, n, 4 * hid), dtype=x.dtype)
        g_w_hh = np.zeros_like(w_hh)
        for t in range(steps - 1, -1, -1):
            i, f, g, o = gates[t]
            tc = tcs[t]
            dc += dh * o * (1.0 - tc * tc)
            dzt = dgates[t]
            dzt[:, :hid] = dc * g * i * (1.0 - i)
            dzt[:, hid:2 * hid] = dc * cs[t] * f * (1.0 - f)
            dzt[:, 2 * hid:3 * hid] = dc * i * (1.0 - g * g)
            dzt[:, 3 * hid:] = dh * tc * o * (1.0 - o)
            g_w_hh += dzt.T @ hs[t]
            dh = dzt @ w_hh
            dc = dc * f
        flat = dgates.reshape(steps * n, -1)
        g_w_ih = flat.T @ x.reshape(steps * n, -1)
        g_b = flat.sum(axis=0)
        grads = [g_w_ih, g_w_hh, g_b, g_b.copy(), g_fc_w, g_fc_b]
        for p, gr in zip(params, grads):
            p -= lr * gr
        return grads

    return run


# ---------------------------------------------------------------------------- W10 data
PROBE = 2048


def w10_data(sz: dict[str, int], seed: int) -> Data:
    d = w1_data({k: sz[k] for k in ("d_in", "hidden", "classes", "batch")}, seed)
    rng = np.random.default_rng(seed + 1)
    n = sz["examples"]
    x = rng.standard_normal((n, sz["d_in"])).astype(np.float32)
    teacher = rng.standard_normal((sz["d_in"], sz["classes"])).astype(np.float32)
    d.update(x=x, y=(x @ teacher).argmax(axis=1).astype(np.int64), batch=sz["batch"])
    return d


def probe(d: Data, params: list[np.ndarray]) -> list[np.ndarray]:
    """Loss and accuracy of the MLP with ``params`` (W1's layout) on the fixed probe set."""
    W1, b1, W2, b2, W3, b3 = (np.asarray(p, dtype=np.float64) for p in params)
    x, y = d["x"][:PROBE].astype(np.float64), d["y"][:PROBE]
    z = np.maximum(np.maximum(x @ W1 + b1, 0) @ W2 + b2, 0) @ W3 + b3
    m = z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z - m).sum(axis=1)) + m[:, 0]
    return [np.array([np.mean(lse - z[np.arange(len(y)), y]), np.mean(z.argmax(axis=1) == y)])]


def _batches(d: Data) -> list[tuple[np.ndarray, np.ndarray]]:
    x, y, b = d["x"], d["y"], d["batch"]
    return [(x[s:s + b], y[s:s + b]) for s in range(0, len(x), b)]


def w10_numpy(d: Data) -> Run:
    params = [np.array(d[k], copy=True) for k in W1_PARAMS]
    batches, lr = _batches(d), d["lr"]

    def run() -> list[np.ndarray]:
        for xb, yb in batches:
            W1, b1, W2, b2, W3, b3 = params
            n = xb.shape[0]
            rows = np.arange(n)
            a1 = xb @ W1
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
            dz = e / s
            dz[rows, yb] -= 1
            dz /= n
            dh2 = dz @ W3.T
            dh2 *= a2 > 0
            dh1 = dh2 @ W2.T
            dh1 *= a1 > 0
            grads = [xb.T @ dh1, dh1.sum(axis=0), h1.T @ dh2, dh2.sum(axis=0),
                     h2.T @ dz, dz.sum(axis=0)]
            for p, g in zip(params, grads):
                p -= lr * g
        return probe(d, params)

    return run


W10_SIZES = {"d_in": 784, "hidden": 256, "classes": 10, "batch": 128, "examples": 60_000}
W10_QUICK = {"d_in": 32, "hidden": 16, "classes": 4, "batch": 32, "examples": 256}

WORKLOADS_TR: dict[str, Workload] = {
    "W9": Workload(
        key="W9", title="LSTM step, 1 layer, batch 32, seq 35, 128 hidden, float32, SGD",
        sizes={"seq": 35, "batch": 32, "input": 128, "hidden": 128, "classes": 10},
        quick_sizes={"seq": 5, "batch": 4, "input": 6, "hidden": 8, "classes": 3},
        make_data=w9_data, reference=w9_numpy, grad_names=W9_PARAMS, dtype="float32"),
    "W10": Workload(
        key="W10", title="one epoch of W1's MLP, 60,000 examples: DataLoader / tf.data + fit",
        sizes=W10_SIZES, quick_sizes=W10_QUICK, make_data=w10_data, reference=w10_numpy,
        grad_names=("probe loss, accuracy",), dtype="float32", tol=0.05),
    "W10B": Workload(
        key="W10B", title="the same epoch over pre-batched arrays (the bare loop)",
        sizes=W10_SIZES, quick_sizes=W10_QUICK, make_data=w10_data, reference=w10_numpy,
        grad_names=("probe loss, accuracy",), dtype="float32", tol=0.05),
}

WORKLOADS.update(WORKLOADS_TR)


# ---------------------------------------------------------------------------- core
def core_setups(tg: Any) -> dict[str, Setup]:
    from tapegrad.ops.rnn import lstm_seq

    def w9(d: Data) -> Run:
        params = [tg.tensor(d[k], requires_grad=True) for k in W9_PARAMS]
        x, y, lr = tg.tensor(d["x"]), d["y"], d["lr"]
        steps, n, _ = d["x"].shape
        hid = d["w_hh"].shape[1]
        zeros = tg.tensor(np.zeros((n, hid), dtype=np.float32))

        def run() -> list[np.ndarray]:
            w_ih, w_hh, b_ih, b_hh, fc_w, fc_b = params
            for p in params:
                p.grad = None
            xw = x @ tg.transpose(w_ih) + b_ih
            packed = lstm_seq(xw, zeros, zeros, w_hh, b_hh)
            logits = packed[steps - 1] @ tg.transpose(fc_w) + fc_b
            tg.cross_entropy(logits, y).backward()
            for p in params:
                arr = p.numpy()
                arr -= lr * p.grad.numpy()
            return [p.grad.numpy() for p in params]

        return run

    def epoch(d: Data, shuffled: bool) -> Run:
        params = [tg.tensor(d[k], requires_grad=True) for k in W1_PARAMS]
        lr, b = d["lr"], d["batch"]
        if shuffled:
            x, y = d["x"], d["y"]
            rng = np.random.default_rng(0)
        else:
            batches = [(tg.tensor(xb), yb) for xb, yb in _batches(d)]

        def step(xb: Any, yb: Any) -> None:
            W1, b1, W2, b2, W3, b3 = params
            for p in params:
                p.grad = None
            h = tg.relu(xb @ W1 + b1)
            h = tg.relu(h @ W2 + b2)
            tg.cross_entropy(h @ W3 + b3, yb).backward()
            for p in params:
                arr = p.numpy()
                arr -= lr * p.grad.numpy()

        def run() -> list[np.ndarray]:
            if shuffled:
                order = rng.permutation(len(x))
                for s in range(0, len(x), b):
                    idx = order[s:s + b]
                    step(tg.tensor(x[idx]), y[idx])
            else:
                for xb, yb in batches:
                    step(xb, yb)
            return probe(d, [p.numpy() for p in params])

        return run

    return {"W9": w9, "W10": lambda d: epoch(d, True), "W10B": lambda d: epoch(d, False)}


# ---------------------------------------------------------------------------- PyTorch style
def _torch_mlp(torch: Any, d: Data) -> Any:
    nn = torch.nn
    model = nn.Sequential(nn.Linear(d["W1"].shape[0], d["W1"].shape[1]), nn.ReLU(),
                          nn.Linear(d["W2"].shape[0], d["W2"].shape[1]), nn.ReLU(),
                          nn.Linear(d["W3"].shape[0], d["W3"].shape[1]))
    with torch.no_grad():
        for layer, (w, b) in zip([model[0], model[2], model[4]],
                                 [("W1", "b1"), ("W2", "b2"), ("W3", "b3")]):
            layer.weight.copy_(torch.tensor(np.ascontiguousarray(d[w].T)))
            layer.bias.copy_(torch.tensor(d[b]))
    return model


def _torch_params(model: Any) -> list[np.ndarray]:
    ps = [p.detach().numpy() for p in model.parameters()]
    return [ps[0].T, ps[1], ps[2].T, ps[3], ps[4].T, ps[5]]


def torch_setups(torch: Any) -> dict[str, Setup]:
    F = torch.nn.functional

    def w9(d: Data) -> Run:
        steps, n, i = d["x"].shape
        hid = d["w_hh"].shape[1]
        lstm = torch.nn.LSTM(i, hid)
        fc = torch.nn.Linear(hid, d["fc_w"].shape[0])
        with torch.no_grad():
            for p, k in [(lstm.weight_ih_l0, "w_ih"), (lstm.weight_hh_l0, "w_hh"),
                         (lstm.bias_ih_l0, "b_ih"), (lstm.bias_hh_l0, "b_hh"),
                         (fc.weight, "fc_w"), (fc.bias, "fc_b")]:
                p.copy_(torch.tensor(d[k]))
        params = [lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0, lstm.bias_hh_l0,
                  fc.weight, fc.bias]
        x, y = torch.tensor(d["x"]), torch.tensor(d["y"])
        opt = torch.optim.SGD(params, lr=d["lr"])

        def run() -> list[np.ndarray]:
            opt.zero_grad()
            out, _ = lstm(x)
            loss = F.cross_entropy(fc(out[-1]), y)
            loss.backward()
            opt.step()
            return [p.grad.numpy() for p in params]

        return run

    def epoch(d: Data, loader_kind: bool) -> Run:
        data_mod = importlib.import_module(torch.__name__ + ".utils.data")
        model = _torch_mlp(torch, d)
        opt = torch.optim.SGD(model.parameters(), lr=d["lr"])
        if loader_kind:
            torch.manual_seed(0)
            loader: Any = data_mod.DataLoader(
                data_mod.TensorDataset(torch.tensor(d["x"]), torch.tensor(d["y"])),
                batch_size=d["batch"], shuffle=True)
        else:
            loader = [(torch.tensor(xb), torch.tensor(yb)) for xb, yb in _batches(d)]

        def run() -> list[np.ndarray]:
            for xb, yb in loader:
                opt.zero_grad()
                loss = F.cross_entropy(model(xb), yb)
                loss.backward()
                opt.step()
            return probe(d, _torch_params(model))

        return run

    return {"W9": w9, "W10": lambda d: epoch(d, True), "W10B": lambda d: epoch(d, False)}


# ---------------------------------------------------------------------------- TensorFlow style
def _keras_mlp(tf: Any, d: Data) -> Any:
    keras = tf.keras
    model = keras.Sequential([keras.Input(shape=(d["W1"].shape[0],)),
                              keras.layers.Dense(d["W1"].shape[1], activation="relu"),
                              keras.layers.Dense(d["W2"].shape[1], activation="relu"),
                              keras.layers.Dense(d["W3"].shape[1])])
    model.set_weights([d[k] for k in W1_PARAMS])
    return model


def tf_setups(tf: Any) -> dict[str, Setup]:
    keras = tf.keras

    def w9(d: Data) -> Run:
        steps, n, i = d["x"].shape
        hid = d["w_hh"].shape[1]
        x = tf.constant(np.ascontiguousarray(d["x"].transpose(1, 0, 2)))  # batch-major
        lstm = keras.layers.LSTM(hid)
        fc = keras.layers.Dense(d["fc_w"].shape[0])
        fc(lstm(x[:, :1]))  # build both
        lstm.set_weights([d["w_ih"].T, d["w_hh"].T, d["b_ih"] + d["b_hh"]])
        fc.set_weights([d["fc_w"].T, d["fc_b"]])
        variables = lstm.trainable_variables + fc.trainable_variables
        y = tf.constant(d["y"])
        opt = keras.optimizers.SGD(learning_rate=d["lr"])

        def run() -> list[np.ndarray]:
            with tf.GradientTape() as tape:
                logits = fc(lstm(x))
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=y, logits=logits))
            grads = tape.gradient(loss, variables)
            opt.apply_gradients(zip(grads, variables))
            k, r, b, fw, fb = (g.numpy() for g in grads)
            return [k.T, r.T, b, b, fw.T, fb]

        return run

    def fit_epoch(d: Data) -> Run:
        model = _keras_mlp(tf, d)
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=d["lr"]),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        ds = tf.data.Dataset.from_tensor_slices((d["x"], d["y"]))
        ds = ds.shuffle(len(d["x"]), seed=0).batch(d["batch"])
        # trace fit's step once before the clock (real Keras compiles it on the first
        # call), on a copy of the model so that the timed epoch starts from the same weights
        warm = _keras_mlp(tf, d)
        warm.compile(optimizer=keras.optimizers.SGD(learning_rate=d["lr"]),
                     loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        warm.fit(ds.take(1), epochs=1, verbose=0)

        def run() -> list[np.ndarray]:
            model.fit(ds, epochs=1, verbose=0)
            return probe(d, model.get_weights())

        return run

    def bare_epoch(d: Data) -> Run:
        model = _keras_mlp(tf, d)
        opt = keras.optimizers.SGD(learning_rate=d["lr"])
        loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        batches = [(tf.constant(xb), tf.constant(yb)) for xb, yb in _batches(d)]

        def run() -> list[np.ndarray]:
            variables = model.trainable_variables
            for xb, yb in batches:
                with tf.GradientTape() as tape:
                    loss = loss_fn(yb, model(xb, training=True))
                grads = tape.gradient(loss, variables)
                opt.apply_gradients(zip(grads, variables))
            return probe(d, model.get_weights())

        return run

    return {"W9": w9, "W10": fit_epoch, "W10B": bare_epoch}
