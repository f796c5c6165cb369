"""Every (workload, implementation) pair as one small setup function.

``setup(data) -> run``: setup (untimed) turns the NumPy data into the
framework's tensors; ``run()`` (timed) does one forward + backward (+ the SGD
update for W1) and returns the gradients as NumPy arrays.

The PyTorch-style code is written once and run with ``torch`` = real PyTorch
or ``torch`` = ``tapegrad.torch``; the TensorFlow-style code likewise with
real TensorFlow or ``tapegrad.tf``: the import line is the only difference,
which is tapegrad's promise.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .workloads import ADD, MUL, W1_PARAMS, W8_PARAMS, Data, Run, Setup


@dataclass
class Impl:
    """An implementation: a display name, what it needs, how to build its setups."""

    name: str
    module: str | None  # importable module it needs (None: always available)
    build: Callable[[Any], dict[str, Setup]]  # module -> {workload key: setup}
    kind: str  # "limit", "tapegrad" or "peer"
    #: where its W3 peak memory comes from: "tracemalloc" (NumPy-based) or "rss"
    memory: str = "tracemalloc"
    note: str = ""
    #: attributes the module must have (a front-end still being written is skipped)
    requires: tuple[str, ...] = ()


# ---------------------------------------------------------------------------- hand NumPy
def _numpy(_mod: Any) -> dict[str, Setup]:
    from .workloads import WORKLOADS

    return {k: w.reference for k, w in WORKLOADS.items()}


# ---------------------------------------------------------------------------- tapegrad core
def _tapegrad_core(tg: Any) -> dict[str, Setup]:
    def w1(d: Data) -> Run:
        params = [tg.tensor(d[k], requires_grad=True) for k in W1_PARAMS]
        x, y, lr = tg.tensor(d["x"]), d["y"], d["lr"]

        def run() -> list[np.ndarray]:
            W1, b1, W2, b2, W3, b3 = params
            for p in params:
                p.grad = None
            h = tg.relu(x @ W1 + b1)
            h = tg.relu(h @ W2 + b2)
            loss = tg.cross_entropy(h @ W3 + b3, y)
            loss.backward()
            for p in params:
                arr = p.numpy()
                arr -= lr * p.grad.numpy()
            return [p.grad.numpy() for p in params]

        return run

    def w2(d: Data) -> Run:
        x, n = tg.tensor(d["x"], requires_grad=True), d["n"]

        def run() -> list[np.ndarray]:
            y = x
            for _ in range(n):
                y = y * MUL + ADD
            y.backward()
            return [x.grad.numpy()]

        return run

    def w3(d: Data) -> Run:
        x, n = tg.tensor(d["x"], requires_grad=True), d["n"]

        def run() -> list[np.ndarray]:
            y = x
            for _ in range(n):
                y = y * MUL + ADD
            y.sum().backward()
            return [x.grad.numpy()]

        return run

    def w4(d: Data) -> Run:
        X, v = tg.tensor(d["X"]), tg.tensor(d["v"])
        w = tg.tensor(d["w"], requires_grad=True)

        def run() -> list[np.ndarray]:
            f = tg.sum(tg.tanh(X @ w))
            (g,) = tg.grad(f, w, create_graph=True)
            (hv,) = tg.grad(tg.sum(g * v), w)
            return [hv.numpy()]

        return run

    def w5(d: Data) -> Run:
        A, B, bias = (tg.tensor(d[k], requires_grad=True) for k in ("A", "B", "bias"))

        def run() -> list[np.ndarray]:
            loss = tg.sum((A @ B + bias) ** 2)
            loss.backward()
            return [A.grad.numpy(), B.grad.numpy(), bias.grad.numpy()]

        return run

    def w8(d: Data) -> Run:
        from tapegrad.ops.conv import conv
        from tapegrad.ops.pool import max_pool

        params = [tg.tensor(d[k], requires_grad=True) for k in W8_PARAMS]
        x, y, lr = tg.tensor(d["x"]), d["y"], d["lr"]
        one, none = (1, 1), ((0, 0), (0, 0))

        def run() -> list[np.ndarray]:
            c1w, c1b, c2w, c2b, f1w, f1b, f2w, f2b, f3w, f3b = params
            for p in params:
                p.grad = None
            h = max_pool(tg.relu(conv(x, c1w, one, none, one, bias=c1b)), (2, 2), (2, 2),
                         none, one)[0]
            h = max_pool(tg.relu(conv(h, c2w, one, none, one, bias=c2b)), (2, 2), (2, 2),
                         none, one)[0]
            h = tg.reshape(h, (h.shape[0], -1))
            h = tg.relu(h @ tg.transpose(f1w) + f1b)
            h = tg.relu(h @ tg.transpose(f2w) + f2b)
            loss = tg.cross_entropy(h @ tg.transpose(f3w) + f3b, y)
            loss.backward()
            for p in params:
                arr = p.numpy()
                arr -= lr * p.grad.numpy()
            return [p.grad.numpy() for p in params]

        return run

    from .training import core_setups as core_training
    from .transforms import core_setups

    return {"W1": w1, "W2": w2, "W3": w3, "W4": w4, "W5": w5, "W8": w8, **core_setups(tg),
            **core_training(tg)}


# ---------------------------------------------------------------------------- PyTorch style
def _torch_style(torch: Any) -> dict[str, Setup]:
    """PyTorch code; ``torch`` is real PyTorch or ``tapegrad.torch``."""

    def w1(d: Data) -> Run:
        params = [torch.tensor(d[k], requires_grad=True) for k in W1_PARAMS]
        x, y = torch.tensor(d["x"]), torch.tensor(d["y"])
        opt = torch.optim.SGD(params, lr=d["lr"])
        F = torch.nn.functional

        def run() -> list[np.ndarray]:
            W1, b1, W2, b2, W3, b3 = params
            opt.zero_grad()
            h = torch.relu(x @ W1 + b1)
            h = torch.relu(h @ W2 + b2)
            loss = F.cross_entropy(h @ W3 + b3, y)
            loss.backward()
            opt.step()
            return [p.grad.numpy() for p in params]

        return run

    def w2(d: Data) -> Run:
        x, n = torch.tensor(d["x"], requires_grad=True), d["n"]

        def run() -> list[np.ndarray]:
            y = x
            for _ in range(n):
                y = y * MUL + ADD
            y.backward()
            return [x.grad.numpy()]

        return run

    def w3(d: Data) -> Run:
        x, n = torch.tensor(d["x"], requires_grad=True), d["n"]

        def run() -> list[np.ndarray]:
            y = x
            for _ in range(n):
                y = y * MUL + ADD
            y.sum().backward()
            return [x.grad.numpy()]

        return run

    def w4(d: Data) -> Run:
        X, v = torch.tensor(d["X"]), torch.tensor(d["v"])
        w = torch.tensor(d["w"], requires_grad=True)

        def run() -> list[np.ndarray]:
            f = torch.tanh(X @ w).sum()
            (g,) = torch.autograd.grad(f, w, create_graph=True)
            (hv,) = torch.autograd.grad((g * v).sum(), w)
            return [hv.numpy()]

        return run

    def w5(d: Data) -> Run:
        A, B, bias = (torch.tensor(d[k], requires_grad=True) for k in ("A", "B", "bias"))

        def run() -> list[np.ndarray]:
            loss = ((A @ B + bias) ** 2).sum()
            loss.backward()
            return [A.grad.numpy(), B.grad.numpy(), bias.grad.numpy()]

        return run

    def w8(d: Data) -> Run:
        F = torch.nn.functional
        params = [torch.tensor(d[k], requires_grad=True) for k in W8_PARAMS]
        x, y = torch.tensor(d["x"]), torch.tensor(d["y"])
        opt = torch.optim.SGD(params, lr=d["lr"])

        def run() -> list[np.ndarray]:
            c1w, c1b, c2w, c2b, f1w, f1b, f2w, f2b, f3w, f3b = params
            opt.zero_grad()
            h = F.max_pool2d(F.relu(F.conv2d(x, c1w, c1b)), 2)
            h = F.max_pool2d(F.relu(F.conv2d(h, c2w, c2b)), 2)
            h = torch.flatten(h, 1)
            h = F.relu(F.linear(h, f1w, f1b))
            h = F.relu(F.linear(h, f2w, f2b))
            loss = F.cross_entropy(F.linear(h, f3w, f3b), y)
            loss.backward()
            opt.step()
            return [p.grad.numpy() for p in params]

        return run

    from .training import torch_setups as torch_training
    from .transforms import torch_setups

    extra = torch_setups(torch) if hasattr(torch, "func") else {}
    extra.update(torch_training(torch))
    return {"W1": w1, "W2": w2, "W3": w3, "W4": w4, "W5": w5, "W8": w8, **extra}


# ---------------------------------------------------------------------------- TensorFlow style
def _tf_style(tf: Any) -> dict[str, Setup]:
    """TensorFlow code; ``tf`` is real TensorFlow or ``tapegrad.tf``."""

    def w1(d: Data) -> Run:
        variables = [tf.Variable(d[k]) for k in W1_PARAMS]
        x = tf.constant(d["x"])
        onehot = tf.constant(np.eye(d["W3"].shape[1], dtype=np.float32)[d["y"]])
        opt = tf.keras.optimizers.SGD(learning_rate=d["lr"])

        def run() -> list[np.ndarray]:
            W1, b1, W2, b2, W3, b3 = variables
            with tf.GradientTape() as tape:
                h = tf.nn.relu(tf.matmul(x, W1) + b1)
                h = tf.nn.relu(tf.matmul(h, W2) + b2)
                z = tf.matmul(h, W3) + b3
                loss = tf.reduce_mean(
                    tf.nn.softmax_cross_entropy_with_logits(labels=onehot, logits=z))
            grads = tape.gradient(loss, variables)
            opt.apply_gradients(zip(grads, variables))
            return [g.numpy() for g in grads]

        return run

    def w2(d: Data) -> Run:
        x, n = tf.constant(d["x"]), d["n"]

        def run() -> list[np.ndarray]:
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = x
                for _ in range(n):
                    y = y * MUL + ADD
            return [tape.gradient(y, x).numpy()]

        return run

    def w3(d: Data) -> Run:
        x, n = tf.constant(d["x"]), d["n"]

        def run() -> list[np.ndarray]:
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = x
                for _ in range(n):
                    y = y * MUL + ADD
                s = tf.reduce_sum(y)
            return [tape.gradient(s, x).numpy()]

        return run

    def w4(d: Data) -> Run:
        # tf.matmul takes matrices: w and v as columns
        X = tf.constant(d["X"])
        w, v = tf.constant(d["w"][:, None]), tf.constant(d["v"][:, None])

        def run() -> list[np.ndarray]:
            with tf.GradientTape() as outer:
                outer.watch(w)
                with tf.GradientTape() as inner:
                    inner.watch(w)
                    f = tf.reduce_sum(tf.tanh(tf.matmul(X, w)))
                g = inner.gradient(f, w)
                gv = tf.reduce_sum(g * v)
            return [outer.gradient(gv, w).numpy().reshape(-1)]

        return run

    def w5(d: Data) -> Run:
        A, B, bias = (tf.constant(d[k]) for k in ("A", "B", "bias"))

        def run() -> list[np.ndarray]:
            with tf.GradientTape() as tape:
                tape.watch([A, B, bias])
                loss = tf.reduce_sum((tf.matmul(A, B) + bias) ** 2)
            return [g.numpy() for g in tape.gradient(loss, [A, B, bias])]

        return run

    def w8(d: Data) -> Run:
        # TensorFlow's layouts: NHWC data, HWIO filters, (in, out) dense kernels; the
        # first dense kernel's rows follow the NHWC flattening order
        p = int(round((d["f1w"].shape[1] // 16) ** 0.5))
        vals = [d["c1w"].transpose(2, 3, 1, 0), d["c1b"], d["c2w"].transpose(2, 3, 1, 0),
                d["c2b"], d["f1w"].reshape(120, 16, p, p).transpose(2, 3, 1, 0).reshape(-1, 120),
                d["f1b"], d["f2w"].T, d["f2b"], d["f3w"].T, d["f3b"]]
        variables = [tf.Variable(np.ascontiguousarray(v)) for v in vals]
        x = tf.constant(np.ascontiguousarray(d["x"].transpose(0, 2, 3, 1)))
        n = d["x"].shape[0]
        onehot = tf.constant(np.eye(10, dtype=np.float32)[d["y"]])
        opt = tf.keras.optimizers.SGD(learning_rate=d["lr"])

        def back(gs: list[np.ndarray]) -> list[np.ndarray]:  # to the PyTorch layouts
            return [gs[0].transpose(3, 2, 0, 1), gs[1], gs[2].transpose(3, 2, 0, 1), gs[3],
                    gs[4].reshape(p, p, 16, 120).transpose(3, 2, 0, 1).reshape(120, -1),
                    gs[5], gs[6].T, gs[7], gs[8].T, gs[9]]

        def run() -> list[np.ndarray]:
            c1w, c1b, c2w, c2b, f1w, f1b, f2w, f2b, f3w, f3b = variables
            with tf.GradientTape() as tape:
                h = tf.nn.relu(tf.nn.conv2d(x, c1w, 1, "VALID") + c1b)
                h = tf.nn.max_pool2d(h, 2, 2, "VALID")
                h = tf.nn.relu(tf.nn.conv2d(h, c2w, 1, "VALID") + c2b)
                h = tf.nn.max_pool2d(h, 2, 2, "VALID")
                h = tf.reshape(h, [n, -1])
                h = tf.nn.relu(tf.matmul(h, f1w) + f1b)
                h = tf.nn.relu(tf.matmul(h, f2w) + f2b)
                z = tf.matmul(h, f3w) + f3b
                loss = tf.reduce_mean(
                    tf.nn.softmax_cross_entropy_with_logits(labels=onehot, logits=z))
            grads = tape.gradient(loss, variables)
            opt.apply_gradients(zip(grads, variables))
            return back([g.numpy() for g in grads])

        return run

    from .training import tf_setups as tf_training
    from .transforms import tf_setups

    extra = tf_setups(tf) if hasattr(tf, "vectorized_map") else {}
    extra.update(tf_training(tf))
    return {"W1": w1, "W2": w2, "W3": w3, "W4": w4, "W5": w5, "W8": w8, **extra}


# ---------------------------------------------------------------------------- HIPS autograd
def _hips(ag: Any) -> dict[str, Setup]:
    anp = importlib.import_module("autograd.numpy")

    def w1(d: Data) -> Run:
        params = [np.array(d[k], copy=True) for k in W1_PARAMS]
        x, y, lr = d["x"], d["y"], d["lr"]
        rows = np.arange(x.shape[0])

        def loss_fn(ps: list[Any]) -> Any:
            W1, b1, W2, b2, W3, b3 = ps
            h = anp.maximum(anp.dot(x, W1) + b1, 0.0)
            h = anp.maximum(anp.dot(h, W2) + b2, 0.0)
            z = anp.dot(h, W3) + b3
            m = anp.max(z, axis=1, keepdims=True)
            lse = anp.log(anp.sum(anp.exp(z - m), axis=1)) + m[:, 0]
            return anp.mean(lse - z[rows, y])

        grad_fn = ag.grad(loss_fn)

        def run() -> list[np.ndarray]:
            grads = grad_fn(params)
            for i, g in enumerate(grads):
                params[i] = params[i] - lr * g
            return [np.asarray(g) for g in grads]

        return run

    def w2(d: Data) -> Run:
        x, n = d["x"], d["n"]

        def f(y: Any) -> Any:
            for _ in range(n):
                y = y * MUL + ADD
            return y

        gf = ag.grad(f)
        return lambda: [np.asarray(gf(x))]

    def w3(d: Data) -> Run:
        x, n = d["x"], d["n"]

        def f(y: Any) -> Any:
            for _ in range(n):
                y = y * MUL + ADD
            return anp.sum(y)

        gf = ag.grad(f)
        return lambda: [np.asarray(gf(x))]

    def w4(d: Data) -> Run:
        X, w, v = d["X"], d["w"], d["v"]
        hvp = ag.hessian_vector_product(lambda w_: anp.sum(anp.tanh(anp.dot(X, w_))))
        return lambda: [np.asarray(hvp(w, v))]

    def w5(d: Data) -> Run:
        A, B, bias = d["A"], d["B"], d["bias"]
        gf = ag.grad(lambda a, b, c: anp.sum((anp.dot(a, b) + c) ** 2), argnum=[0, 1, 2])
        return lambda: [np.asarray(g) for g in gf(A, B, bias)]

    return {"W1": w1, "W2": w2, "W3": w3, "W4": w4, "W5": w5}


# ---------------------------------------------------------------------------- MyGrad
def _mygrad(mg: Any) -> dict[str, Setup]:
    nnet = importlib.import_module("mygrad.nnet")

    def w1(d: Data) -> Run:
        params = [mg.tensor(d[k]) for k in W1_PARAMS]
        x, y, lr = d["x"], d["y"], d["lr"]

        def run() -> list[np.ndarray]:
            W1, b1, W2, b2, W3, b3 = params
            h = nnet.relu(mg.matmul(x, W1) + b1)
            h = nnet.relu(mg.matmul(h, W2) + b2)
            loss = nnet.softmax_crossentropy(mg.matmul(h, W3) + b3, y)
            loss.backward()
            grads = [np.array(p.grad) for p in params]
            for p in params:
                p.data -= lr * p.grad
            return grads

        return run

    def w2(d: Data) -> Run:
        x, n = mg.tensor(d["x"]), d["n"]

        def run() -> list[np.ndarray]:
            y = x
            for _ in range(n):
                y = y * MUL + ADD
            y.backward()
            return [np.asarray(x.grad)]

        return run

    def w3(d: Data) -> Run:
        x, n = mg.tensor(d["x"]), d["n"]

        def run() -> list[np.ndarray]:
            y = x
            for _ in range(n):
                y = y * MUL + ADD
            mg.sum(y).backward()
            return [np.asarray(x.grad)]

        return run

    def w5(d: Data) -> Run:
        A, B, bias = (mg.tensor(d[k]) for k in ("A", "B", "bias"))

        def run() -> list[np.ndarray]:
            mg.sum((mg.matmul(A, B) + bias) ** 2).backward()
            return [np.asarray(A.grad), np.asarray(B.grad), np.asarray(bias.grad)]

        return run

    # W4: MyGrad has no higher-order derivatives
    return {"W1": w1, "W2": w2, "W3": w3, "W5": w5}


# ---------------------------------------------------------------------------- JAX (eager)
def _jax(jax: Any) -> dict[str, Setup]:
    jnp = importlib.import_module("jax.numpy")

    def w1(d: Data) -> Run:
        params = [jnp.asarray(d[k]) for k in W1_PARAMS]
        x, y, lr = jnp.asarray(d["x"]), jnp.asarray(d["y"]), d["lr"]
        rows = jnp.arange(d["x"].shape[0])

        def loss_fn(ps: list[Any]) -> Any:
            W1, b1, W2, b2, W3, b3 = ps
            h = jax.nn.relu(x @ W1 + b1)
            h = jax.nn.relu(h @ W2 + b2)
            lp = jax.nn.log_softmax(h @ W3 + b3)
            return -jnp.mean(lp[rows, y])

        grad_fn = jax.grad(loss_fn)

        def run() -> list[np.ndarray]:
            grads = grad_fn(params)
            for i, g in enumerate(grads):
                params[i] = params[i] - lr * g
            return [np.asarray(g) for g in grads]

        return run

    def w2(d: Data) -> Run:
        x, n = jnp.asarray(d["x"]), d["n"]

        def f(y: Any) -> Any:
            for _ in range(n):
                y = y * MUL + ADD
            return y

        gf = jax.grad(f)
        return lambda: [np.asarray(gf(x))]

    def w3(d: Data) -> Run:
        x, n = jnp.asarray(d["x"]), d["n"]

        def f(y: Any) -> Any:
            for _ in range(n):
                y = y * MUL + ADD
            return jnp.sum(y)

        gf = jax.grad(f)
        return lambda: [np.asarray(gf(x))]

    def w4(d: Data) -> Run:
        X, w, v = (jnp.asarray(d[k]) for k in ("X", "w", "v"))
        gf = jax.grad(lambda w_: jnp.sum(jnp.tanh(X @ w_)))
        # forward-over-reverse, as the JAX autodiff cookbook recommends for HVPs
        return lambda: [np.asarray(jax.jvp(gf, (w,), (v,))[1])]

    def w5(d: Data) -> Run:
        A, B, bias = (jnp.asarray(d[k]) for k in ("A", "B", "bias"))
        gf = jax.grad(lambda a, b, c: jnp.sum((a @ b + c) ** 2), argnums=(0, 1, 2))
        return lambda: [np.asarray(g) for g in gf(A, B, bias)]

    from .transforms import jax_setups

    return {"W1": w1, "W2": w2, "W3": w3, "W4": w4, "W5": w5, **jax_setups(jax)}


def _tf_compiled(tf: Any) -> dict[str, Setup]:
    from .compiled import tf_compiled_setups

    return tf_compiled_setups(tf)


def _torch_compiled(torch: Any) -> dict[str, Setup]:
    from .compiled import torch_compiled_setups

    return torch_compiled_setups(torch)


IMPLS: list[Impl] = [
    Impl("numpy (hand)", None, _numpy, "limit"),
    Impl("tapegrad core (backward)", "tapegrad", _tapegrad_core, "tapegrad",
         note="core API: tg.tensor(requires_grad=True), .backward(), tg.grad"),
    Impl("tapegrad.torch (backward)", "tapegrad.torch", _torch_style, "tapegrad",
         note="the PyTorch-style code with `import tapegrad.torch as torch`",
         requires=("tensor", "relu", "optim", "nn", "autograd")),
    Impl("tapegrad.tf (tape)", "tapegrad.tf", _tf_style, "tapegrad",
         note="the TensorFlow-style code with `import tapegrad.tf as tf`",
         requires=("GradientTape", "Variable", "constant", "matmul", "nn", "keras")),
    Impl("tapegrad.tf (@tf.function)", "tapegrad.tf", _tf_compiled, "tapegrad",
         note="W1-W3 with the step in tf.function (benchmarks/compiled.py)",
         requires=("function", "GradientTape", "Variable", "keras")),
    Impl("tapegrad.torch (torch.compile)", "tapegrad.torch", _torch_compiled, "tapegrad",
         note="W1 with the step in torch.compile (benchmarks/compiled.py)",
         requires=("compile", "optim", "nn")),
    Impl("PyTorch", "torch", _torch_style, "peer", memory="rss"),
    Impl("PyTorch (torch.compile)", "torch", _torch_compiled, "peer", memory="rss",
         note="inductor; its compile time is in the warm-up run"),
    Impl("MyGrad", "mygrad", _mygrad, "peer", note="no higher-order gradients (W4)"),
    Impl("HIPS autograd", "autograd", _hips, "peer"),
    Impl("TensorFlow", "tensorflow", _tf_style, "peer", memory="rss"),
    Impl("TensorFlow (tf.function)", "tensorflow", _tf_compiled, "peer", memory="rss"),
    Impl("JAX (eager)", "jax", _jax, "peer", memory="rss", note="no jit: op-by-op dispatch"),
]
