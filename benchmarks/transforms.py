"""The transform workloads: W4F (HVP by forward over reverse), W6 (per-sample gradients)
and W7 (a Jacobian), with their data, hand-written NumPy limits and setups.

- W4F: W4's Hessian-vector product of ``sum(tanh(X @ w))`` by forward over reverse
  (``jvp`` of ``grad``: one forward-mode pass through the backward pass).
- W6: per-sample gradients of a 2-layer MLP (64-128-10, tanh, cross-entropy) over
  256 examples: ``vmap(grad(loss))``; W6L is the same by a Python loop of ``grad``.
- W7: the 256x256 Jacobian of ``tanh(A @ x)``: W7R by ``jacrev`` (vectorized VJPs),
  W7F by ``jacfwd`` (vectorized JVPs), W7L by a loop of one VJP per row.

The PyTorch-style setups run on real PyTorch (``torch.func``) or ``tapegrad.torch``,
the TensorFlow-style ones on real TensorFlow or ``tapegrad.tf``, with only the module
differing, as in :mod:`benchmarks.impls`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .workloads import WORKLOADS, Data, Run, Setup, Workload, w4_data, w4_numpy

# ---------------------------------------------------------------------------- W6 data


def w6_data(sz: dict[str, int], seed: int) -> Data:
    rng = np.random.default_rng(seed)
    d, h, c, n = sz["d_in"], sz["hidden"], sz["classes"], sz["batch"]
    return {
        "W1": (rng.standard_normal((d, h)) / np.sqrt(d)),
        "b1": 0.1 * rng.standard_normal(h),
        "W2": (rng.standard_normal((h, c)) / np.sqrt(h)),
        "b2": 0.1 * rng.standard_normal(c),
        "x": rng.standard_normal((n, d)),
        "y": rng.integers(0, c, size=n).astype(np.int64),
    }


W6_PARAMS = ("W1", "b1", "W2", "b2")


def w6_numpy(d: Data) -> Run:
    W1, b1, W2, b2, x, y = (d[k] for k in ("W1", "b1", "W2", "b2", "x", "y"))
    rows = np.arange(x.shape[0])

    def run() -> list[np.ndarray]:
        # per example i: loss_i = -log softmax(tanh(x_i W1 + b1) W2 + b2)[y_i]
        h = np.tanh(x @ W1 + b1)
        z = h @ W2 + b2
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        p[rows, y] -= 1.0  # dloss_i/dz_i
        dh = (p @ W2.T) * (1.0 - h * h)
        return [np.einsum("ni,nj->nij", x, dh), dh, np.einsum("ni,nj->nij", h, p), p]

    return run


# ---------------------------------------------------------------------------- W7 data


def w7_data(sz: dict[str, int], seed: int) -> Data:
    rng = np.random.default_rng(seed)
    n = sz["n"]
    return {"A": rng.standard_normal((n, n)) / np.sqrt(n), "x": rng.standard_normal(n)}


def w7_numpy(d: Data) -> Run:
    A, x = d["A"], d["x"]

    def run() -> list[np.ndarray]:
        t = np.tanh(A @ x)
        return [(1.0 - t * t)[:, None] * A]

    return run


WORKLOADS_T: dict[str, Workload] = {
    "W4F": Workload(
        key="W4F", title="W4's Hessian-vector product by forward over reverse (jvp of grad)",
        sizes={"rows": 256, "cols": 512}, quick_sizes={"rows": 8, "cols": 16},
        make_data=w4_data, reference=w4_numpy, grad_names=("Hv",), dtype="float64"),
    "W6": Workload(
        key="W6", title="per-sample gradients, MLP 64-128-10 over 256 examples: vmap(grad)",
        sizes={"d_in": 64, "hidden": 128, "classes": 10, "batch": 256},
        quick_sizes={"d_in": 8, "hidden": 6, "classes": 3, "batch": 5},
        make_data=w6_data, reference=w6_numpy, grad_names=W6_PARAMS, dtype="float64"),
    "W6L": Workload(
        key="W6L", title="the same per-sample gradients by a Python loop of grad",
        sizes={"d_in": 64, "hidden": 128, "classes": 10, "batch": 256},
        quick_sizes={"d_in": 8, "hidden": 6, "classes": 3, "batch": 5},
        make_data=w6_data, reference=w6_numpy, grad_names=W6_PARAMS, dtype="float64"),
    "W7R": Workload(
        key="W7R", title="256x256 Jacobian of tanh(A @ x) by jacrev (vectorized VJPs)",
        sizes={"n": 256}, quick_sizes={"n": 6}, make_data=w7_data, reference=w7_numpy,
        grad_names=("J",), dtype="float64"),
    "W7F": Workload(
        key="W7F", title="the same Jacobian by jacfwd (vectorized JVPs)",
        sizes={"n": 256}, quick_sizes={"n": 6}, make_data=w7_data, reference=w7_numpy,
        grad_names=("J",), dtype="float64"),
    "W7L": Workload(
        key="W7L", title="the same Jacobian by a loop of one VJP per row",
        sizes={"n": 256}, quick_sizes={"n": 6}, make_data=w7_data, reference=w7_numpy,
        grad_names=("J",), dtype="float64"),
}


WORKLOADS.update(WORKLOADS_T)


# ---------------------------------------------------------------------------- core


def core_setups(tg: Any) -> dict[str, Setup]:
    from tapegrad import func

    def mlp_loss(W1: Any, b1: Any, W2: Any, b2: Any, x: Any, y: Any) -> Any:
        h = tg.tanh(x @ W1 + b1)
        return tg.cross_entropy((h @ W2 + b2)[None], y[None])

    def w4f(d: Data) -> Run:
        X, w, v = tg.tensor(d["X"]), tg.tensor(d["w"]), tg.tensor(d["v"])
        g = func.grad(lambda w_: tg.sum(tg.tanh(X @ w_)))
        return lambda: [func.jvp(g, (w,), (v,))[1].numpy()]

    def w6(d: Data) -> Run:
        ps = [tg.tensor(d[k]) for k in W6_PARAMS]
        x, y = tg.tensor(d["x"]), tg.tensor(d["y"])
        per = func.vmap(func.grad(mlp_loss, argnums=(0, 1, 2, 3)),
                        in_dims=(None, None, None, None, 0, 0))
        return lambda: [g.numpy() for g in per(*ps, x, y)]

    def w6l(d: Data) -> Run:
        ps = [tg.tensor(d[k]) for k in W6_PARAMS]
        xs, ys = d["x"], d["y"]
        gf = func.grad(mlp_loss, argnums=(0, 1, 2, 3))

        def run() -> list[np.ndarray]:
            rows = [gf(*ps, tg.tensor(xs[i]), tg.tensor(ys[i])) for i in range(len(xs))]
            return [np.stack([r[k].numpy() for r in rows]) for k in range(4)]

        return run

    def w7(kind: str) -> Setup:
        def setup(d: Data) -> Run:
            A, x = tg.tensor(d["A"]), tg.tensor(d["x"])
            f = lambda v: tg.tanh(A @ v)  # noqa: E731
            if kind == "R":
                jf = func.jacrev(f)
                return lambda: [jf(x).numpy()]
            if kind == "F":
                jf = func.jacfwd(f)
                return lambda: [jf(x).numpy()]

            def loop() -> list[np.ndarray]:
                out, vjp_fn = func.vjp(f, x)
                eye = np.eye(out.shape[0])
                return [np.stack([vjp_fn(tg.tensor(e))[0].numpy() for e in eye])]

            return loop

        return setup

    return {"W4F": w4f, "W6": w6, "W6L": w6l, "W7R": w7("R"), "W7F": w7("F"), "W7L": w7("L")}


# ---------------------------------------------------------------------------- PyTorch style


def torch_setups(torch: Any) -> dict[str, Setup]:
    fn = torch.func
    F = torch.nn.functional

    def mlp_loss(W1: Any, b1: Any, W2: Any, b2: Any, x: Any, y: Any) -> Any:
        h = torch.tanh(x @ W1 + b1)
        return F.cross_entropy((h @ W2 + b2).unsqueeze(0), y.unsqueeze(0))

    def w4f(d: Data) -> Run:
        X, w, v = (torch.tensor(d[k]) for k in ("X", "w", "v"))
        g = fn.grad(lambda w_: torch.tanh(X @ w_).sum())
        return lambda: [fn.jvp(g, (w,), (v,))[1].numpy()]

    def w6(d: Data) -> Run:
        ps = [torch.tensor(d[k]) for k in W6_PARAMS]
        x, y = torch.tensor(d["x"]), torch.tensor(d["y"])
        per = fn.vmap(fn.grad(mlp_loss, argnums=(0, 1, 2, 3)),
                      in_dims=(None, None, None, None, 0, 0))
        return lambda: [g.numpy() for g in per(*ps, x, y)]

    def w6l(d: Data) -> Run:
        ps = [torch.tensor(d[k]) for k in W6_PARAMS]
        x, y = torch.tensor(d["x"]), torch.tensor(d["y"])
        gf = fn.grad(mlp_loss, argnums=(0, 1, 2, 3))

        def run() -> list[np.ndarray]:
            rows = [gf(*ps, x[i], y[i]) for i in range(x.shape[0])]
            return [np.stack([r[k].numpy() for r in rows]) for k in range(4)]

        return run

    def w7(kind: str) -> Setup:
        def setup(d: Data) -> Run:
            A, x = torch.tensor(d["A"]), torch.tensor(d["x"])
            f = lambda v: torch.tanh(A @ v)  # noqa: E731
            if kind in ("R", "F"):
                jf = fn.jacrev(f) if kind == "R" else fn.jacfwd(f)
                return lambda: [jf(x).numpy()]

            def loop() -> list[np.ndarray]:
                out, vjp_fn = fn.vjp(f, x)
                eye = torch.eye(out.shape[0], dtype=out.dtype)
                return [np.stack([vjp_fn(eye[i])[0].numpy() for i in range(out.shape[0])])]

            return loop

        return setup

    return {"W4F": w4f, "W6": w6, "W6L": w6l, "W7R": w7("R"), "W7F": w7("F"), "W7L": w7("L")}


# ---------------------------------------------------------------------------- TensorFlow style


def tf_setups(tf: Any) -> dict[str, Setup]:
    def w4f(d: Data) -> Run:
        X, v = tf.constant(d["X"]), tf.constant(d["v"])
        w = tf.constant(d["w"])

        def run() -> list[np.ndarray]:
            with tf.autodiff.ForwardAccumulator(w, v) as acc:
                with tf.GradientTape() as tape:
                    tape.watch(w)
                    f = tf.reduce_sum(tf.tanh(tf.linalg.matvec(X, w)))
                g = tape.gradient(f, w)
            return [acc.jvp(g).numpy()]

        return run

    def mlp_grads(ps: list[Any], x: Any, y: Any) -> list[Any]:
        W1, b1, W2, b2 = ps
        with tf.GradientTape() as tape:
            tape.watch(ps)
            h = tf.tanh(tf.linalg.matvec(W1, x, transpose_a=True) + b1)
            z = tf.linalg.matvec(W2, h, transpose_a=True) + b2
            loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=tf.expand_dims(y, 0), logits=tf.expand_dims(z, 0))[0]
        return tape.gradient(loss, ps)

    def w6(d: Data) -> Run:
        ps = [tf.constant(d[k]) for k in W6_PARAMS]
        x, y = tf.constant(d["x"]), tf.constant(d["y"])
        return lambda: [g.numpy() for g in tf.vectorized_map(
            lambda e: mlp_grads(ps, e[0], e[1]), (x, y))]

    def w6l(d: Data) -> Run:
        ps = [tf.constant(d[k]) for k in W6_PARAMS]
        x, y = tf.constant(d["x"]), tf.constant(d["y"])

        def run() -> list[np.ndarray]:
            rows = [mlp_grads(ps, x[i], y[i]) for i in range(int(x.shape[0]))]
            return [np.stack([r[k].numpy() for r in rows]) for k in range(4)]

        return run

    def w7(kind: str) -> Setup:
        def setup(d: Data) -> Run:
            A, x = tf.constant(d["A"]), tf.constant(d["x"])
            n = int(x.shape[0])

            def f(v: Any) -> Any:
                return tf.tanh(tf.linalg.matvec(A, v))

            if kind == "F":
                eye = tf.eye(n, dtype=tf.float64)

                def col(t: Any) -> Any:
                    with tf.autodiff.ForwardAccumulator(x, t) as acc:
                        y = f(x)
                    return acc.jvp(y)

                return lambda: [tf.transpose(tf.vectorized_map(col, eye)).numpy()]

            def run() -> list[np.ndarray]:
                with tf.GradientTape(persistent=kind == "L") as tape:
                    tape.watch(x)
                    y = f(x)
                return [tape.jacobian(y, x, experimental_use_pfor=kind == "R").numpy()]

            return run

        return setup

    return {"W4F": w4f, "W6": w6, "W6L": w6l, "W7R": w7("R"), "W7F": w7("F"), "W7L": w7("L")}


# ---------------------------------------------------------------------------- JAX


def jax_setups(jax: Any) -> dict[str, Setup]:
    import importlib

    jnp = importlib.import_module("jax.numpy")

    def mlp_loss(W1: Any, b1: Any, W2: Any, b2: Any, x: Any, y: Any) -> Any:
        h = jnp.tanh(x @ W1 + b1)
        return -jax.nn.log_softmax(h @ W2 + b2)[y]

    def w4f(d: Data) -> Run:
        X, w, v = (jnp.asarray(d[k]) for k in ("X", "w", "v"))
        g = jax.grad(lambda w_: jnp.sum(jnp.tanh(X @ w_)))
        return lambda: [np.asarray(jax.jvp(g, (w,), (v,))[1])]

    def w6(d: Data) -> Run:
        ps = [jnp.asarray(d[k]) for k in W6_PARAMS]
        x, y = jnp.asarray(d["x"]), jnp.asarray(d["y"])
        per = jax.vmap(jax.grad(mlp_loss, argnums=(0, 1, 2, 3)),
                       in_axes=(None, None, None, None, 0, 0))
        return lambda: [np.asarray(g) for g in per(*ps, x, y)]

    def w7(kind: str) -> Setup:
        def setup(d: Data) -> Run:
            A, x = jnp.asarray(d["A"]), jnp.asarray(d["x"])
            jf = (jax.jacrev if kind == "R" else jax.jacfwd)(lambda v: jnp.tanh(A @ v))
            return lambda: [np.asarray(jf(x))]

        return setup

    return {"W4F": w4f, "W6": w6, "W7R": w7("R"), "W7F": w7("F")}
