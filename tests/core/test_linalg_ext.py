"""Core linear algebra (tapegrad.ops.linalg_ext): gradients to second order against finite
differences, each primitive's JVP rule against finite differences, batching rules against a
loop, and the errors.  No framework needed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.ops import linalg_ext as L
from tapegrad.testing import GradcheckError, gradcheck

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 3))
S = A @ A.T + 3 * np.eye(3)
B = RNG.standard_normal((3, 2))
TALL = RNG.standard_normal((4, 3))
WIDE = RNG.standard_normal((3, 4))
BATCH = np.stack([A, S])


def _sym(a: Any) -> Any:
    return (a + tg.swapaxes(a, -1, -2)) / 2


def _fix(v: Any) -> Any:  # eigen/singular vectors with each column's sign fixed
    return v * tg.sign(v[..., :1, :])


GRAD_CASES: list[tuple[str, Callable[..., Any], list[np.ndarray]]] = [
    ("inv", L.inv, [A]),
    ("inv_batched", L.inv, [BATCH]),
    ("solve", L.solve, [A, B]),
    ("solve_vector", L.solve, [A, B[:, 0].copy()]),
    ("solve_right", lambda a, b: L.solve(a, b, left=False), [A, B.T.copy()]),
    ("solve_broadcast", L.solve, [BATCH, B]),
    ("det", L.det, [A]),
    ("det_singular", L.det, [np.array([[1.0, 2.0, 0.5], [2.0, 4.0, 1.0], [0.3, -1.0, 2.0]])]),
    ("logabsdet", lambda a: L.slogdet(a)[1], [A]),
    ("logdet", L.logdet, [S]),
    ("cholesky", lambda a: L.cholesky(_sym(a)), [S]),
    ("cholesky_upper", lambda a: L.cholesky(_sym(a), upper=True), [S]),
    ("cholesky_batched", lambda a: L.cholesky(_sym(a)), [np.stack([S, S + np.eye(3)])]),
    ("solve_triangular", lambda a, b: L.solve_triangular(a, b, upper=False), [S, B]),
    ("solve_triangular_right_unit",
     lambda a, b: L.solve_triangular(a, b, upper=True, left=False, unitriangular=True),
     [S, B.T.copy()]),
    ("eigvalsh", lambda a: L.eigvalsh(_sym(a)), [S]),
    ("eigh", lambda a: _fix(L.eigh(_sym(a))[1]), [S]),
    ("svd", lambda a: (_fix(L.svd(a, False)[0]), L.svd(a, False)[1]), [A]),
    ("svd_tall", lambda a: (_fix(L.svd(a, False)[0]), L.svd(a, False)[1]), [TALL]),
    ("svd_wide", lambda a: (_fix(tg.swapaxes(L.svd(a, False)[2], -1, -2)),), [WIDE]),
    ("svd_full", lambda a: (L.svd(a, True)[1], _fix(L.svd(a, True)[0][..., :3])), [TALL]),
    ("svdvals", L.svdvals, [TALL]),
    ("qr_tall", L.qr, [TALL]),
    ("qr_square", L.qr, [A]),
    ("qr_wide", L.qr, [WIDE]),
    ("matrix_exp", L.matrix_exp, [A]),
    ("matrix_exp_scaled", L.matrix_exp, [3 * A]),
    ("pinv_tall", L.pinv, [TALL]),
    ("pinv_wide", L.pinv, [WIDE]),
    ("lstsq", L.lstsq, [TALL, RNG.standard_normal((4, 2))]),
    ("matrix_power_3", lambda a: L.matrix_power(a, 3), [A]),
    ("matrix_power_-2", lambda a: L.matrix_power(a, -2), [A]),
    ("cross", L.cross, [TALL, TALL[::-1].copy()]),
    ("trace", L.trace, [BATCH]),
    ("diagonal", lambda a: L.diagonal(a, 1), [BATCH]),
    ("diag_embed", lambda a: L.diag_embed(a, -1), [TALL]),
    ("band_part", lambda a: L.band_part(a, 1, 0), [TALL]),
] + [
    (f"vector_norm_{o}", lambda x, o=o: L.vector_norm(x, o, axis=-1), [TALL])
    for o in [2, 1, 3, 1.5, 0.5, np.inf, -np.inf, -1]
] + [
    (f"matrix_norm_{o}", lambda x, o=o: L.matrix_norm(x, o), [TALL])
    for o in ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]
]


@pytest.mark.parametrize("name,fn,arrays", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradcheck_second_order(name: str, fn: Callable[..., Any],
                                arrays: list[np.ndarray]) -> None:
    assert gradcheck(fn, [tg.tensor(a) for a in arrays], order=2)


def test_a_wrong_rule_fails() -> None:
    # the inverse's transpose dropped: gA = -B g B instead of -B^T g B^T
    def wrong(a: Any) -> Any:
        b = L.inv(a).detach()
        return tg.stop_gradient(b) + tg.einsum("ij,jk->ik", a * 0, b)

    with pytest.raises(GradcheckError):
        gradcheck(wrong, [tg.tensor(A)])


# ---------------------------------------------------------------------------- JVP rules
def _op_out(op: Any, xs: list[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    return np.asarray(op.fwd(*xs, **attrs))


JVP_CASES: list[tuple[str, Any, list[np.ndarray], dict[str, Any]]] = [
    ("inv", L.inv_op, [A], {}),
    ("solve", L.solve_op, [A, B], {}),
    ("solve_vector", L.solve_op, [A, B[:, 0].copy()], {"vector": True}),
    ("solve_right", L.solve_op, [A, B.T.copy()], {"left": False}),
    ("solve_triangular", L.solve_triangular_op, [S, B], {"upper": True}),
    ("solve_triangular_right", L.solve_triangular_op, [S, B.T.copy()],
     {"upper": False, "left": False, "unitriangular": True}),
    ("det", L.det_op, [A], {}),
    ("slogdet", L.logabsdet_op, [A], {}),
    ("cholesky", L.cholesky_op, [S], {}),
    ("cholesky_upper", L.cholesky_op, [S], {"upper": True}),
    ("eigh", L.eigh_op, [S], {}),
    ("svd_square", L.svd_op, [A], {}),
    ("svd_tall", L.svd_op, [TALL], {}),
    ("svd_wide", L.svd_op, [WIDE], {}),
    ("qr_tall", L.qr_op, [TALL], {}),
    ("qr_wide", L.qr_op, [WIDE], {}),
    ("matrix_exp", L.matrix_exp_op, [A], {}),
    ("pinv", L.pinv_op, [TALL], {"rtol": 1e-12}),
    ("vector_norm_2", L.vector_norm_op, [TALL], {"ord": 2.0, "axis": (1,), "keepdims": False}),
    ("vector_norm_3", L.vector_norm_op, [TALL], {"ord": 3.0, "axis": None, "keepdims": False}),
    ("vector_norm_inf", L.vector_norm_op, [TALL], {"ord": np.inf, "axis": (0,),
                                                   "keepdims": True}),
    ("unpack", L._unpack_op, [RNG.standard_normal((2, 7))], {"start": 1, "stop": 5,
                                                             "tail": (2, 2)}),
]


def _symmetric_tangent(name: str, v: np.ndarray) -> np.ndarray:
    # cholesky and eigh read one triangle of a symmetric input: perturb symmetrically
    return (v + np.swapaxes(v, -1, -2)) / 2 if name.startswith(("cholesky", "eigh")) else v


@pytest.mark.parametrize("name,op,xs,attrs", JVP_CASES, ids=[c[0] for c in JVP_CASES])
def test_jvp_rule_matches_finite_differences(name: str, op: Any, xs: list[np.ndarray],
                                             attrs: dict[str, Any]) -> None:
    assert op.jvp is not None
    rng = np.random.default_rng(5)
    vs = [_symmetric_tangent(name, rng.standard_normal(x.shape)) for x in xs]
    out = _op_out(op, xs, attrs)
    eps = 1e-6
    num = (_op_out(op, [x + eps * v for x, v in zip(xs, vs)], attrs)
           - _op_out(op, [x - eps * v for x, v in zip(xs, vs)], attrs)) / (2 * eps)
    got = op.jvp(*[tg.tensor(v) for v in vs], *[tg.tensor(x) for x in xs],
                 out=tg.tensor(out), **attrs)
    np.testing.assert_allclose(np.asarray(got.numpy()), num, rtol=1e-5, atol=1e-6)
    # one tangent at a time (the others None) gives the matching part
    if len(xs) == 2:
        part = op.jvp(tg.tensor(vs[0]), None, *[tg.tensor(x) for x in xs], out=tg.tensor(out),
                      **attrs)
        num0 = (_op_out(op, [xs[0] + eps * vs[0], xs[1]], attrs)
                - _op_out(op, [xs[0] - eps * vs[0], xs[1]], attrs)) / (2 * eps)
        np.testing.assert_allclose(part.numpy(), num0, rtol=1e-5, atol=1e-6)


def test_jvp_rule_agrees_with_vjp() -> None:
    # <J v, u> == <v, J^T u> for the packed svd of a tall matrix
    rng = np.random.default_rng(9)
    v = rng.standard_normal(TALL.shape)
    out = L.svd_op.fwd(TALL)
    u = rng.standard_normal(out.shape)
    jv = L.svd_op.jvp(tg.tensor(v), tg.tensor(TALL), out=tg.tensor(out)).numpy()
    (jtu,) = L.svd_op.vjp(tg.tensor(u), tg.tensor(TALL), tg.tensor(out))
    np.testing.assert_allclose(np.sum(jv * u), np.sum(jtu.numpy() * v), rtol=1e-8)


# ---------------------------------------------------------------------------- batching rules
BATCH_CASES: list[tuple[str, Any, list[np.ndarray], tuple[bool, ...], dict[str, Any]]] = [
    ("inv", L.inv_op, [np.stack([A, S, A + S])], (True,), {}),
    ("det", L.det_op, [np.stack([A, S])], (True,), {}),
    ("cholesky", L.cholesky_op, [np.stack([S, S + np.eye(3)])], (True,), {"upper": True}),
    ("eigh", L.eigh_op, [np.stack([S, S + A + A.T])], (True,), {}),
    ("svd", L.svd_op, [np.stack([TALL, 2 * TALL])], (True,), {}),
    ("qr", L.qr_op, [np.stack([WIDE, WIDE[::-1]])], (True,), {}),
    ("matrix_exp", L.matrix_exp_op, [np.stack([A, 0.1 * S])], (True,), {}),
    ("vector_norm", L.vector_norm_op, [np.stack([TALL, -TALL])], (True,),
     {"ord": 2.0, "axis": (0,), "keepdims": False}),
    ("vector_norm_all", L.vector_norm_op, [np.stack([TALL, 3 * TALL])], (True,),
     {"ord": 1.0, "axis": None, "keepdims": False}),
    ("solve_a", L.solve_op, [np.stack([A, S]), B], (True, False), {}),
    ("solve_b", L.solve_op, [BATCH, np.stack([B[None], 2 * B[None]])], (False, True), {}),
    ("solve_both", L.solve_op, [np.stack([A, S]), np.stack([B, -B])], (True, True), {}),
    ("solve_vector", L.solve_op, [A, np.stack([B[:, 0], B[:, 1]])], (False, True),
     {"vector": True}),
    ("solve_triangular", L.solve_triangular_op, [np.stack([S, A]), B], (True, False),
     {"upper": True}),
]


@pytest.mark.parametrize("name,op,xs,batched,attrs", BATCH_CASES,
                         ids=[c[0] for c in BATCH_CASES])
def test_batching_rule_matches_loop(name: str, op: Any, xs: list[np.ndarray],
                                    batched: tuple[bool, ...], attrs: dict[str, Any]) -> None:
    n = next(x.shape[0] for x, b in zip(xs, batched) if b)
    loop = np.stack([op.fwd(*[x[i] if b else x for x, b in zip(xs, batched)], **attrs)
                     for i in range(n)])
    got = op.batch(batched, *[tg.tensor(x) for x in xs], **attrs)
    np.testing.assert_allclose(got.numpy(), loop, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------- values, errors
def test_values_match_numpy() -> None:
    np.testing.assert_allclose(L.inv(tg.tensor(A)).numpy(), np.linalg.inv(A))
    np.testing.assert_allclose(L.det(tg.tensor(A)).numpy(), np.linalg.det(A))
    np.testing.assert_allclose(L.matrix_exp(tg.tensor(A)).numpy(),
                               _expm_series(A), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(L.matrix_exp(tg.tensor(6 * A)).numpy(),
                               np.linalg.matrix_power(_expm_series(6 * A / 64), 64), rtol=1e-9)
    u, s, vh = L.svd(tg.tensor(TALL), full_matrices=True)
    assert u.shape == (4, 4) and s.shape == (3,) and vh.shape == (3, 3)
    np.testing.assert_allclose((u.numpy()[:, :3] * s.numpy()) @ vh.numpy(), TALL)
    q, r = L.qr(tg.tensor(WIDE))
    np.testing.assert_allclose(q.numpy() @ r.numpy(), WIDE)
    np.testing.assert_allclose(L.cross(tg.tensor(TALL), tg.tensor(TALL[::-1].copy())).numpy(),
                               np.cross(TALL, TALL[::-1]))
    for o in ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]:
        np.testing.assert_allclose(L.matrix_norm(tg.tensor(TALL), o).numpy(),
                                   np.linalg.norm(TALL, o))
    for o in [2, 1, 3, 0, 0.5, np.inf, -np.inf]:
        np.testing.assert_allclose(L.vector_norm(tg.tensor(TALL), o, axis=1).numpy(),
                                   np.linalg.norm(TALL, o, axis=1))
    band = L.band_part(tg.tensor(np.ones((3, 4))), 1, 0).numpy()
    np.testing.assert_array_equal(band, np.tril(np.triu(np.ones((3, 4)), -1)))


def _expm_series(a: np.ndarray) -> np.ndarray:
    term = np.eye(a.shape[0])
    total = term.copy()
    for k in range(1, 60):
        term = term @ a / k
        total = total + term
    return total


def test_singular_and_not_positive_definite_errors() -> None:
    z = np.zeros((3, 3))
    z[0, 0] = 1
    with pytest.raises(L.LinAlgError, match="The diagonal element 2 is zero"):
        L.inv(tg.tensor(z))
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): The solver failed"):
        L.solve(tg.tensor(np.stack([np.eye(3), z])), tg.tensor(np.ones((2, 3, 1))))
    with pytest.raises(L.LinAlgError, match="leading minor of order 2"):
        L.cholesky(tg.tensor(np.array([[1.0, 2.0], [2.0, 1.0]])))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they "
                                           "are 2 by 3 matrices"):
        L.det(tg.tensor(np.zeros((2, 3))))
    with pytest.raises(RuntimeError, match="Order 3 not supported"):
        L.matrix_norm(tg.tensor(np.eye(2)), 3)
    assert L.lu_zero_pivot(z) == 2
    assert L.lu_zero_pivot(np.eye(3)) == 0


def test_triangular_solve_with_zero_pivot_gives_inf_nan() -> None:
    t = np.triu(np.ones((3, 3)))
    t[1, 1] = 0
    x = L.solve_triangular(tg.tensor(t), tg.tensor(np.ones((3, 1))), upper=True).numpy()
    assert not np.all(np.isfinite(x))


def test_core_namespace() -> None:
    x = tg.tensor(np.array([[2.0, 1.0], [1.0, 3.0]]), requires_grad=True)
    (g,) = tg.grad(tg.linalg.det(x), x)
    np.testing.assert_allclose(g.numpy(), [[3.0, -1.0], [-1.0, 2.0]])
    assert tg.linalg.inv is L.inv


def test_qr_modes_without_a_derivative_raise_in_both_modes() -> None:
    x = tg.tensor(TALL, requires_grad=True)
    q, r = L.qr(x, "complete")
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete'"):
        tg.grad(r.sum(), x)
    _, r2 = L.qr(x, "r")
    with pytest.raises(RuntimeError, match="which is not computed when mode='r'"):
        tg.grad(r2.sum(), x)
    op = r2._node.op
    with pytest.raises(RuntimeError, match="mode='r'"):
        op.jvp(tg.tensor(TALL), tg.tensor(TALL), out=r2, **r2._node.attrs)
    np.testing.assert_allclose(q.numpy() @ r.numpy(), TALL, atol=1e-12)


def test_eig_values_vectors_and_derivatives() -> None:
    a = np.random.default_rng(3).standard_normal((3, 3))
    w, v = L.eig(tg.tensor(a))
    np.testing.assert_allclose(a @ v.numpy(), v.numpy() * w.numpy(), atol=1e-12)
    np.testing.assert_allclose(np.sort_complex(L.eigvals(tg.tensor(a)).numpy()),
                               np.sort_complex(np.linalg.eigvals(a)), atol=1e-12)
    assert L.eigvals(tg.tensor(np.eye(2))).dtype == np.complex128
    from tapegrad.ops.complex import imag, real

    a = np.array([[1.0, -2.0, 0.5], [2.0, 1.0, 0.3], [0.1, 0.2, 3.0]])  # 1 +- 2i, 3

    def losses(x: Any) -> Any:
        lam, vec = L.eig(x)
        return (tg.sum(real(lam) * 0.3 + imag(lam) ** 2) + tg.sum(tg.abs(vec) ** 3)
                + tg.sum(tg.abs(L.eigvals(x))))

    x = tg.tensor(a, requires_grad=True)
    (g,) = tg.grad(losses(x), x)
    assert g.dtype == np.float64  # a real input keeps the real part
    eps = 1e-6
    fd = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[i] = eps
        fd[i] = (losses(tg.tensor(a + d)).item() - losses(tg.tensor(a - d)).item()) / (2 * eps)
    np.testing.assert_allclose(g.numpy(), fd, rtol=1e-6, atol=1e-7)
    # forward mode: the JVP of the same loss is <gradient, tangent>
    t = np.random.default_rng(4).standard_normal((3, 3))
    from tapegrad import func

    _, jv = func.jvp(losses, (tg.tensor(a),), (tg.tensor(t),))
    np.testing.assert_allclose(jv.item(), float(np.sum(fd * t)), rtol=1e-6)
    # a loss of the eigenvectors' phases is ill-defined: PyTorch's error
    with pytest.raises(RuntimeError, match=r"specified up to multiplication by e\^\{i phi\}"):
        tg.grad(tg.sum(real(L.eig(x)[1])), x)
    # a complex output needs a real loss before backward, as in PyTorch (whose words the
    # PyTorch style uses: tests/conformance/test_torch_linalg_conf.py)
    with pytest.raises(RuntimeError, match="only for a real output, not complex128"):
        tg.sum(L.eigvals(x)).backward()
