"""tf.linalg and tf.norm on real TensorFlow 2.21 and tapegrad.tf: values, gradients (through
GradientTape, same NumPy inputs and cotangents), second order and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

real = pytest.importorskip("tensorflow")
import tapegrad.tf as ttf  # noqa: E402

RNG = np.random.default_rng(11)
A3 = RNG.standard_normal((3, 3))
AB = RNG.standard_normal((2, 3, 3))
B32 = RNG.standard_normal((3, 2))
TALL = RNG.standard_normal((5, 3))
WIDE = RNG.standard_normal((3, 5))
_a = RNG.standard_normal((4, 4))
SPD = _a @ _a.T + 4 * np.eye(4)
SYM = _a + _a.T
M = np.array([[1.0, -2.0, 0.5], [3.0, 4.0, -1.0]])


def _fix_cols(tf: Any, v: Any, ref: Any) -> Any:
    """Columns of ``v`` times the sign of ``ref``'s first row (sign conventions differ
    between LAPACK and Eigen; the sign has no gradient)."""
    return v * tf.sign(ref[..., :1, :])


def _eigh(tf: Any, a: Any) -> tuple[Any, Any]:
    e, v = tf.linalg.eigh(a)
    return e, _fix_cols(tf, v, v)


def _svd(tf: Any, a: Any) -> tuple[Any, Any, Any]:
    s, u, v = tf.linalg.svd(a)
    return s, _fix_cols(tf, u, u), _fix_cols(tf, v, u)


def _qr(tf: Any, a: Any) -> tuple[Any, Any]:
    q, r = tf.linalg.qr(a)
    d = tf.sign(tf.linalg.diag_part(r))
    return q * d[..., None, :], r * d[..., :, None]


CASES: list[tuple[str, Callable[..., Any], list[np.ndarray]]] = [
    ("inv", lambda tf, a: tf.linalg.inv(a), [A3]),
    ("inv_adjoint", lambda tf, a: tf.linalg.inv(a, adjoint=True), [AB]),
    ("det", lambda tf, a: tf.linalg.det(a), [AB]),
    ("slogdet", lambda tf, a: tf.linalg.slogdet(a).log_abs_determinant, [A3]),
    ("logdet", lambda tf, a: tf.linalg.logdet(a), [SPD]),
    ("solve", lambda tf, a, b: tf.linalg.solve(a, b), [A3, B32]),
    ("solve_adjoint", lambda tf, a, b: tf.linalg.solve(a, b, adjoint=True), [A3, B32]),
    ("triangular_solve", lambda tf, a, b: tf.linalg.triangular_solve(a, b), [SPD[:3, :3], B32]),
    ("triangular_solve_upper_adjoint",
     lambda tf, a, b: tf.linalg.triangular_solve(a, b, lower=False, adjoint=True),
     [SPD[:3, :3], B32]),
    ("cholesky", lambda tf, a: tf.linalg.cholesky(a), [SPD]),
    ("cholesky_solve", lambda tf, a, b: tf.linalg.cholesky_solve(tf.linalg.cholesky(a), b),
     [SPD, RNG.standard_normal((4, 2))]),
    ("lstsq", lambda tf, a, b: tf.linalg.lstsq(a, b), [TALL, RNG.standard_normal((5, 2))]),
    ("lstsq_l2", lambda tf, a, b: tf.linalg.lstsq(a, b, l2_regularizer=0.5),
     [TALL, RNG.standard_normal((5, 2))]),
    ("lstsq_wide", lambda tf, a, b: tf.linalg.lstsq(a, b), [WIDE, B32]),
    ("qr_tall", _qr, [TALL]),
    ("qr_square", _qr, [A3]),
    ("eigh", _eigh, [SYM]),
    ("eigvalsh", lambda tf, a: tf.linalg.eigvalsh(a), [SYM]),
    ("svd_tall", _svd, [TALL]),
    ("svd_wide", _svd, [WIDE]),
    ("svd_values", lambda tf, a: tf.linalg.svd(a, compute_uv=False), [TALL]),
    ("pinv", lambda tf, a: tf.linalg.pinv(a), [TALL]),
    ("expm", lambda tf, a: tf.linalg.expm(a), [A3]),
    ("trace", lambda tf, a: tf.linalg.trace(a), [AB]),
    ("band_part", lambda tf, a: tf.linalg.band_part(a, 1, 0), [TALL]),
    ("band_part_all_upper", lambda tf, a: tf.linalg.band_part(a, 0, -1), [AB]),
    ("diag", lambda tf, a: tf.linalg.diag(a, k=-1), [TALL]),
    ("diag_part", lambda tf, a: tf.linalg.diag_part(a), [AB]),
    ("diag_part_k", lambda tf, a: tf.linalg.diag_part(a, k=1), [A3]),
    ("set_diag", lambda tf, a, d: tf.linalg.set_diag(a, d), [AB, RNG.standard_normal((2, 3))]),
    ("tensor_diag", lambda tf, a: tf.linalg.tensor_diag(a), [B32[:, 0].copy()]),
    ("cross", lambda tf, a, b: tf.linalg.cross(a, b), [TALL, RNG.standard_normal((5, 3))]),
    ("matmul_adjoint", lambda tf, a, b: tf.linalg.matmul(a, b, adjoint_a=True), [A3, B32]),
    ("global_norm", lambda tf, a, b: tf.linalg.global_norm([a, b]), [A3, B32]),
    ("l2_normalize", lambda tf, a: tf.math.l2_normalize(a, axis=1) if hasattr(tf, "math")
     and hasattr(tf.math, "l2_normalize") else tf.linalg.l2_normalize(a, axis=1), [TALL]),
] + [
    (f"norm_matrix_{o}", lambda tf, a, o=o: tf.norm(a, ord=o, axis=[0, 1]), [M])
    for o in ["fro", "euclidean", 1, 2, np.inf]
] + [
    (f"norm_matrix_last_{o}", lambda tf, a, o=o: tf.norm(a, ord=o, axis=[-2, -1], keepdims=True),
     [AB]) for o in ["fro", 1, 2, np.inf]
] + [
    (f"norm_vector_{o}", lambda tf, a, o=o: tf.norm(a, ord=o, axis=1), [M])
    for o in ["euclidean", 1, 2, 3, 0.5, np.inf]
] + [
    ("norm_all", lambda tf, a: tf.norm(a), [AB]),
    ("norm_swapped_axes", lambda tf, a: tf.norm(a, ord=1, axis=[1, 0]), [M]),
]


def _run(tf: Any, fn: Callable[..., Any], arrays: list[np.ndarray], dtype: Any,
         second: bool = False) -> tuple[list[np.ndarray], list[np.ndarray]]:
    xs = [tf.Variable(a.astype(dtype)) for a in arrays]
    rng = np.random.default_rng(3)
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape() as tape:
            out = fn(tf, *xs)
            outs = list(out) if isinstance(out, tuple) else [out]
            cots = [tf.constant(rng.standard_normal(tuple(o.shape)).astype(dtype)) for o in outs]
            loss = tf.add_n([tf.reduce_sum(o * c) for o, c in zip(outs, cots)])
        grads = tape.gradient(loss, xs)
        if second:
            w = [tf.constant(np.random.default_rng(4).standard_normal(a.shape).astype(dtype))
                 for a in arrays]
            tot = tf.add_n([tf.reduce_sum(g * wi) for g, wi in zip(grads, w) if g is not None])
    if second:
        gg = outer.gradient(tot, xs)
        return [o.numpy() for o in outs], [np.zeros(a.shape) if g is None else g.numpy()
                                           for g, a in zip(gg, arrays)]
    return [o.numpy() for o in outs], [np.zeros(a.shape) if g is None else g.numpy()
                                       for g, a in zip(grads, arrays)]


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_same_values_and_gradients(name: str, fn: Callable[..., Any],
                                   arrays: list[np.ndarray]) -> None:
    ro, rg = _run(real, fn, arrays, np.float64)
    to, tg_ = _run(ttf, fn, arrays, np.float64)
    for a, b in zip(ro, to):
        assert b.shape == a.shape
        np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-9)
    for a, b in zip(rg, tg_):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["inv", "det", "solve", "cholesky", "eigh", "svd_tall",
                                  "qr_tall", "expm", "norm_matrix_2", "norm_matrix_1",
                                  "lstsq"])
def test_same_second_order(name: str) -> None:
    _, fn, arrays = next(c for c in CASES if c[0] == name)
    _, r2 = _run(real, fn, arrays, np.float64, second=True)
    _, t2 = _run(ttf, fn, arrays, np.float64, second=True)
    for a, b in zip(r2, t2):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["inv", "cholesky", "eigvalsh", "svd_values", "expm",
                                  "norm_matrix_1", "norm_matrix_2"])
def test_float32(name: str) -> None:
    _, fn, arrays = next(c for c in CASES if c[0] == name)
    ro, rg = _run(real, fn, arrays, np.float32)
    to, tg_ = _run(ttf, fn, arrays, np.float32)
    for a, b in zip(ro + rg, to + tg_):
        assert b.dtype == a.dtype == np.float32
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def _err(tf: Any, fn: Callable[[Any], Any]) -> tuple[type, str]:
    try:
        fn(tf)
    except Exception as e:  # noqa: BLE001
        msg = str(e).split("\n[tapegrad hint]")[0]
        if "}} " in msg:  # TensorFlow's kernel-location prefix
            msg = msg.split("}} ", 1)[1]
        return type(e), msg
    raise AssertionError("no error")


def _singular(tf: Any) -> Any:
    z = np.zeros((3, 3))
    z[0, 0] = 1
    return tf.constant(z)


ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("inv_singular", lambda tf: tf.linalg.inv(_singular(tf))),
    ("solve_singular", lambda tf: tf.linalg.solve(_singular(tf), _singular(tf))),
    ("inv_rect", lambda tf: tf.linalg.inv(tf.zeros([2, 3]))),
    ("det_rect", lambda tf: tf.linalg.det(tf.zeros([2, 3]))),
    ("cholesky_int", lambda tf: tf.linalg.cholesky(tf.eye(2, dtype=tf.int32))),
    ("norm_bad_matrix_ord", lambda tf: tf.norm(tf.eye(2), ord=3, axis=[0, 1])),
    ("norm_fro_vector", lambda tf: tf.norm(tf.eye(2), ord="fro", axis=0)),
    ("norm_fro_no_axis", lambda tf: tf.norm(tf.eye(2), ord="fro")),
    ("norm_negative_ord", lambda tf: tf.norm(tf.eye(2), ord=-1)),
    ("norm_repeated_axis", lambda tf: tf.norm(tf.eye(2), axis=[1, 1])),
    ("cross_len", lambda tf: tf.linalg.cross(tf.ones([2]), tf.ones([2]))),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_same_errors(name: str, fn: Callable[[Any], Any]) -> None:
    rt, rm = _err(real, fn)
    tt_, tm = _err(ttf, fn)
    assert tt_.__name__ == rt.__name__
    assert tm == rm


def test_cholesky_of_indefinite_matrix_gives_nan_lower_triangle() -> None:
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    r = real.linalg.cholesky(bad).numpy()
    t = ttf.linalg.cholesky(bad).numpy()
    low = np.tril(np.ones((2, 2), dtype=bool))
    assert np.all(np.isnan(r[low])) and np.all(np.isnan(t[low]))


def test_named_results() -> None:
    r = ttf.linalg.slogdet(ttf.constant(A3))
    assert r.sign is r[0] and r.log_abs_determinant is r[1]
    q = ttf.linalg.qr(ttf.constant(TALL), full_matrices=True)
    assert q.q.shape == (5, 5) and q.r.shape == (5, 3)
    np.testing.assert_allclose(q.q.numpy() @ q.r.numpy(), TALL)


def test_eig_eigenvalues() -> None:
    # TensorFlow's Eigen solver orders eigenvalues differently from LAPACK: compare sorted
    a = np.random.default_rng(0).standard_normal((2, 4, 4))
    r = np.sort_complex(real.linalg.eigvals(a).numpy().ravel())
    t = ttf.linalg.eigvals(a)
    assert t.dtype == ttf.complex128
    np.testing.assert_allclose(np.sort_complex(t.numpy().ravel()), r, atol=1e-10)
    e, v = ttf.linalg.eig(a)
    np.testing.assert_allclose(a @ v.numpy(), v.numpy() * e.numpy()[:, None, :], atol=1e-10)


# gradients of eig / eigvals: TensorFlow's _EigGrad.  Its eigenvectors come from Eigen's
# solver, LAPACK's (NumPy's) from geev: they agree up to each vector's phase and the order,
# so the losses compared are those that depend on neither (symmetric in the eigenpairs,
# and of |v| only)
EIG_A = np.array([[1.0, -2.0, 0.5], [2.0, 1.0, 0.3], [0.1, 0.2, 3.0]])
EIG_LOSSES = {
    "eigvals abs": lambda tf, a: tf.reduce_sum(tf.abs(tf.linalg.eigvals(a))),
    "eigvals real + imag^2": lambda tf, a: tf.reduce_sum(
        0.3 * tf.math.real(tf.linalg.eigvals(a)) + tf.math.imag(tf.linalg.eigvals(a)) ** 2),
    "eig vectors abs^3": lambda tf, a: tf.reduce_sum(tf.abs(tf.linalg.eig(a)[1]) ** 3),
    "eig values times |vectors|": lambda tf, a: tf.reduce_sum(
        tf.abs(tf.linalg.eig(a)[1]) * tf.expand_dims(tf.math.real(tf.linalg.eig(a)[0]), -2)),
}


@pytest.mark.parametrize("name", list(EIG_LOSSES))
@pytest.mark.parametrize("batch", [False, True])
def test_eig_gradients_match_tensorflow(name: str, batch: bool) -> None:
    a = np.random.default_rng(5).standard_normal((2, 4, 4)) if batch else EIG_A
    grads = []
    for tf in (real, ttf):
        x = tf.constant(a)
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = EIG_LOSSES[name](tf, x)
        g = tape.gradient(loss, x)
        assert g.dtype == tf.float64
        grads.append(g.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-8, atol=1e-9)


def test_eig_phase_dependent_loss_is_not_refused() -> None:
    # TensorFlow does not check that the loss ignores the eigenvectors' phases
    x = ttf.constant(EIG_A)
    with ttf.GradientTape() as tape:
        tape.watch(x)
        loss = ttf.reduce_sum(ttf.math.real(ttf.linalg.eig(x)[1]))
    assert np.all(np.isfinite(tape.gradient(loss, x).numpy()))

