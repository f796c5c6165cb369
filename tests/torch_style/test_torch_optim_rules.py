"""Shared optimizer core (tapegrad.optim) against real PyTorch and Keras."""

from __future__ import annotations

import numpy as np
import pytest

from tapegrad.optim import adam_update, sgd_update

RNG = np.random.default_rng(0)
P0 = RNG.standard_normal((3, 4))
GRADS = [RNG.standard_normal((3, 4)) for _ in range(6)]


def _run_ours(rule, dtype, **kw):
    p = P0.astype(dtype).copy()
    st: dict = {}
    for g in GRADS:
        rule(p, g.astype(dtype), st, **kw)
    return p


def test_sgd_plain_closed_form() -> None:
    p = np.array([1.0, 2.0])
    sgd_update(p, np.array([0.5, -0.5]), {}, lr=0.1)
    np.testing.assert_allclose(p, [0.95, 2.05])


def test_sgd_torch_momentum_first_step_is_grad() -> None:
    p = np.array([1.0])
    st: dict = {}
    sgd_update(p, np.array([1.0]), st, lr=0.1, momentum=0.9, dampening=0.5)
    np.testing.assert_allclose(p, [0.9])  # first buf = g, no dampening
    sgd_update(p, np.array([1.0]), st, lr=0.1, momentum=0.9, dampening=0.5)
    np.testing.assert_allclose(p, [0.9 - 0.1 * (0.9 + 0.5)])


def test_sgd_keras_momentum_closed_form() -> None:
    p = np.array([1.0])
    st: dict = {}
    sgd_update(p, np.array([1.0]), st, lr=0.1, momentum=0.9, style="keras")
    np.testing.assert_allclose(p, [0.9])
    sgd_update(p, np.array([1.0]), st, lr=0.1, momentum=0.9, style="keras")
    np.testing.assert_allclose(p, [0.9 - 0.19])


def test_adam_first_step_moves_by_lr() -> None:
    for style in ("torch", "keras"):
        p = np.array([1.0, -1.0])
        adam_update(p, np.array([2.0, -3.0]), {}, lr=0.1, style=style)
        np.testing.assert_allclose(p, [0.9, -0.9], rtol=1e-6)


def test_bad_style() -> None:
    with pytest.raises(ValueError):
        sgd_update(np.zeros(1), np.zeros(1), {}, lr=0.1, style="jax")


SGD_CASES = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.05, momentum=0.9, nesterov=True),
    dict(lr=0.05, momentum=0.5, weight_decay=0.1),
    dict(lr=0.05, momentum=0.5, maximize=True),
]
ADAM_CASES = [
    dict(lr=0.01),
    dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6),
    dict(lr=0.01, weight_decay=0.1),
    dict(lr=0.01, amsgrad=True),
    dict(lr=0.01, maximize=True),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kw", SGD_CASES)
def test_sgd_matches_torch(kw: dict, dtype: type) -> None:
    torch = pytest.importorskip("torch")
    p = torch.tensor(P0.astype(dtype), requires_grad=True)
    opt = torch.optim.SGD([p], **kw)
    for g in GRADS:
        p.grad = torch.tensor(g.astype(dtype))
        opt.step()
    ours = _run_ours(sgd_update, dtype, **kw)
    tol = 1e-12 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(ours, p.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kw", ADAM_CASES)
@pytest.mark.parametrize("adamw", [False, True])
def test_adam_matches_torch(kw: dict, dtype: type, adamw: bool) -> None:
    torch = pytest.importorskip("torch")
    p = torch.tensor(P0.astype(dtype), requires_grad=True)
    opt = (torch.optim.AdamW if adamw else torch.optim.Adam)([p], **kw)
    for g in GRADS:
        p.grad = torch.tensor(g.astype(dtype))
        opt.step()
    ours_kw = dict(kw)
    b1, b2 = ours_kw.pop("betas", (0.9, 0.999))
    if adamw:
        ours_kw.setdefault("weight_decay", 0.01)
    ours = _run_ours(adam_update, dtype, beta1=b1, beta2=b2, decoupled_weight_decay=adamw, **ours_kw)
    tol = 1e-12 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(ours, p.detach().numpy(), rtol=tol, atol=tol)


KERAS_SGD = [dict(lr=0.1), dict(lr=0.05, momentum=0.9), dict(lr=0.05, momentum=0.9, nesterov=True),
             dict(lr=0.05, momentum=0.9, weight_decay=0.1)]
KERAS_ADAM = [dict(lr=0.01), dict(lr=0.01, beta1=0.8, beta2=0.99, eps=1e-6), dict(lr=0.01, amsgrad=True),
              dict(lr=0.01, weight_decay=0.1)]


def _keras_run(make, dtype):
    keras = pytest.importorskip("keras")
    v = keras.Variable(P0.astype(dtype), dtype=np.dtype(dtype).name)
    opt = make(keras)
    for g in GRADS:
        opt.apply_gradients([(keras.ops.convert_to_tensor(g.astype(dtype)), v)])
    return np.asarray(v.numpy())


@pytest.mark.slow
@pytest.mark.parametrize("kw", KERAS_SGD)
def test_sgd_matches_keras(kw: dict) -> None:
    def make(keras):
        k = dict(kw)
        return keras.optimizers.SGD(learning_rate=k.pop("lr"), **k)
    ref = _keras_run(make, np.float32)
    np.testing.assert_allclose(_run_ours(sgd_update, np.float32, style="keras", **kw), ref, rtol=1e-6, atol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("kw", KERAS_ADAM)
def test_adam_matches_keras(kw: dict) -> None:
    def make(keras):
        k = dict(kw)
        return keras.optimizers.Adam(learning_rate=k.pop("lr"), beta_1=k.pop("beta1", 0.9),
                                     beta_2=k.pop("beta2", 0.999), epsilon=k.pop("eps", 1e-7), **k)
    ref = _keras_run(make, np.float32)
    ours_kw = dict(kw)
    ours_kw.setdefault("eps", 1e-7)
    np.testing.assert_allclose(_run_ours(adam_update, np.float32, style="keras", **ours_kw), ref, rtol=1e-6, atol=1e-6)
