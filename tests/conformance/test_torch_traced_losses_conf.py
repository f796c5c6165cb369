"""cross_entropy / nll_loss with per-example targets under torch.func, on both.

Under ``vmap`` the targets are a tracer, so tapegrad computes these losses
with the op that takes the targets as an input (``nll_loss_traced``); each
program runs on real PyTorch 2.13 and on ``tapegrad.torch`` and the results
(values, dtypes, grad_fn names, exception types and messages) must agree.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.torch_style.torch_harness import compare

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402

R = np.random.default_rng(21)
X3 = R.standard_normal((5, 3, 4))          # per example: 3 samples of 4 classes
T3 = np.array([[0, 3, 1], [2, -100, 1], [3, 3, 3], [1, -100, 0], [1, 0, 2]])
X1 = R.standard_normal((6, 4))             # per example: one sample of 4 classes
T1 = np.array([0, 3, 1, 2, 2, 1])
XD = R.standard_normal((4, 2, 3, 5))       # per example: (N, C, d) -> nll_loss2d
TD = R.integers(0, 3, (4, 2, 5))
W = np.array([0.5, 2.0, 1.0, 3.0])


def _per_sample(torch: Any, x: np.ndarray, t: np.ndarray, dtype: Any, **kw: Any) -> Any:
    F = torch.nn.functional

    def loss(z: Any, y: Any) -> Any:
        return F.cross_entropy(z, y, **kw).sum() * 1.5

    xs = torch.tensor(x, dtype=dtype)
    ys = torch.tensor(t)
    g = torch.func.vmap(torch.func.grad(loss))(xs, ys)
    v = torch.vmap(lambda z, y: F.cross_entropy(z, y, **kw))(xs, ys)
    return g, v


def _programs() -> dict[str, Any]:
    progs: dict[str, Any] = {}
    for red in ("mean", "sum", "none"):
        for wname in ("none", "weight"):
            for dname in ("float64", "float32"):
                def p(torch: Any, red: str = red, wname: str = wname,
                      dname: str = dname) -> Any:
                    dt = getattr(torch, dname)
                    kw: dict[str, Any] = {"reduction": red}
                    if wname == "weight":
                        kw["weight"] = torch.tensor(W, dtype=dt)
                    return (_per_sample(torch, X3, T3, dt, **kw),
                            _per_sample(torch, X1, T1, dt, **kw))

                progs[f"cross_entropy_{red}_{wname}_{dname}"] = p
    return progs


PROGRAMS = _programs()


def p_nll_of_log_softmax_ignore_index(torch: Any) -> Any:
    F = torch.nn.functional
    t = torch.tensor(np.where(T3 == -100, 2, T3))

    def loss(z: Any, y: Any) -> Any:
        return F.nll_loss(F.log_softmax(z, 1), y, ignore_index=2)

    xs = torch.tensor(X3)
    return torch.func.vmap(torch.func.grad_and_value(loss))(xs, t)


def p_nll_loss2d_per_example(torch: Any) -> Any:
    F = torch.nn.functional

    def loss(z: Any, y: Any) -> Any:
        return F.cross_entropy(z, y)

    return torch.func.vmap(torch.func.grad_and_value(loss))(torch.tensor(XD), torch.tensor(TD))


def p_per_example_hessians(torch: Any) -> Any:
    F = torch.nn.functional

    def loss(z: Any, y: Any) -> Any:
        return F.cross_entropy(z, y, weight=torch.tensor(W))

    xs, ys = torch.tensor(X3), torch.tensor(T3)
    h1 = torch.func.vmap(torch.func.hessian(loss))(xs, ys)
    h2 = torch.func.vmap(torch.func.jacrev(torch.func.jacrev(loss)))(xs, ys)
    return h1, h2


def p_jvp_under_vmap(torch: Any) -> Any:
    F = torch.nn.functional
    v = torch.tensor(np.cos(np.arange(X3[0].size)).reshape(X3[0].shape))

    def one(z: Any, y: Any) -> Any:
        return torch.func.jvp(lambda q: F.cross_entropy(q, y), (z,), (v,))

    return torch.func.vmap(one)(torch.tensor(X3), torch.tensor(T3))


def p_vmap_over_targets_only(torch: Any) -> Any:
    F = torch.nn.functional
    z = torch.tensor(X1[0])

    def one(y: Any) -> Any:
        return torch.func.grad(lambda q: F.cross_entropy(q, y))(z)

    return torch.func.vmap(one)(torch.tensor(T1))


def p_nested_vmap(torch: Any) -> Any:
    F = torch.nn.functional
    xs = torch.tensor(X1.reshape(2, 3, 4))
    ys = torch.tensor(T1.reshape(2, 3))
    g = torch.func.grad(lambda z, y: F.cross_entropy(z, y, reduction="sum"))
    return torch.func.vmap(torch.func.vmap(g))(xs, ys)


def p_out_of_range_under_vmap(torch: Any) -> Any:
    F = torch.nn.functional
    bad = np.where(T3 == -100, 7, T3)
    return torch.vmap(lambda z, y: F.cross_entropy(z, y))(torch.tensor(X3), torch.tensor(bad))


def p_negative_target_under_vmap(torch: Any) -> Any:
    F = torch.nn.functional
    bad = T1.copy()
    bad[3] = -2
    return torch.vmap(lambda z, y: F.cross_entropy(z, y))(torch.tensor(X1), torch.tensor(bad))


def p_target_dtypes_under_vmap(torch: Any) -> Any:
    # int32 targets work; float and uint8 ones are gather's error (vmap's nll_loss)
    F = torch.nn.functional
    out = []
    for dt in (torch.int32, torch.float64, torch.uint8):
        t = torch.tensor(np.where(T3 == -100, 1, T3)).to(dt)
        for fn in (F.nll_loss, F.cross_entropy):
            try:
                out.append(torch.vmap(lambda z, y, fn=fn: fn(z, y))(torch.tensor(X3), t))
            except RuntimeError as exc:
                out.append(str(exc).split("\n")[0])
    # a float target in cross_entropy: PyTorch's gather error, tapegrad's the kernel's (left)
    return [o for i, o in enumerate(out) if i != 3]


def p_log_softmax_double_backward_names(torch: Any) -> Any:
    F = torch.nn.functional
    x = torch.tensor(X1, requires_grad=True)
    (g,) = torch.autograd.grad(F.cross_entropy(x, torch.tensor(T1)), x, create_graph=True)
    (gg,) = torch.autograd.grad((g * g).sum(), x)
    return g, gg


def p_w6_mlp_per_sample(torch: Any) -> Any:
    # the benchmark's program in small
    F = torch.nn.functional
    rng = np.random.default_rng(0)
    W1, b1 = torch.tensor(rng.standard_normal((4, 6))), torch.tensor(rng.standard_normal(6))
    W2, b2 = torch.tensor(rng.standard_normal((6, 3))), torch.tensor(rng.standard_normal(3))
    x = torch.tensor(rng.standard_normal((5, 4)))
    y = torch.tensor(np.array([0, 2, 1, 1, 0]))

    def loss(W1: Any, b1: Any, W2: Any, b2: Any, x: Any, y: Any) -> Any:
        h = torch.tanh(x @ W1 + b1)
        return F.cross_entropy((h @ W2 + b2).unsqueeze(0), y.unsqueeze(0))

    per = torch.func.vmap(torch.func.grad(loss, argnums=(0, 1, 2, 3)),
                          in_dims=(None, None, None, None, 0, 0))
    return per(W1, b1, W2, b2, x, y)


def p_label_smoothing_weights_ignored(torch: Any) -> Any:
    # ATen's cross_entropy_loss_label_smoothing: the smoothing term weighted per class and
    # normalised by the targets' total weight; eager, under vmap and its gradients
    F = torch.nn.functional
    w = torch.tensor(W, dtype=torch.float32)
    x = torch.tensor(X3, dtype=torch.float32)
    t = torch.tensor(np.where(T3 < 0, 2, T3))
    out = []
    for kw in ({}, {"weight": w}, {"weight": w, "ignore_index": 3}, {"ignore_index": 1}):
        for red in ("mean", "sum", "none"):
            for i in range(len(X3)):  # eager, each example
                out.append(F.cross_entropy(x[i], t[i], label_smoothing=0.3, reduction=red,
                                           **kw))
            if red != "mean" or "weight" not in kw:  # (PyTorch's vmap: masked_select)
                out.append(torch.vmap(lambda z, y, kw=kw, red=red: F.cross_entropy(
                    z, y, label_smoothing=0.3, reduction=red, **kw))(x, t))
        if "weight" not in kw:
            out.append(torch.func.vmap(torch.func.grad(lambda z, y, kw=kw: F.cross_entropy(
                z, y, label_smoothing=0.1, **kw)))(x, t))
    return out


PROGRAMS.update({n[2:]: f for n, f in sorted(globals().items()) if n.startswith("p_")})


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_as_pytorch(name: str) -> None:
    compare(PROGRAMS[name], real, tt)
