"""torch.linalg on real PyTorch 2.13 and tapegrad.torch: values, gradients, grad_fn names,
second-order gradients and errors, from the same NumPy inputs and cotangents."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402

RNG = np.random.default_rng(7)


def _spd(n: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    a = RNG.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _sym(n: int) -> np.ndarray:
    a = RNG.standard_normal((n, n))
    return a + a.T


A3 = RNG.standard_normal((3, 3))
AB = RNG.standard_normal((2, 3, 3))
B32 = RNG.standard_normal((3, 2))
B3 = RNG.standard_normal(3)
TALL = RNG.standard_normal((5, 3))
WIDE = RNG.standard_normal((3, 5))
SPD = _spd(4)
SPDB = _spd(3, (2,))
SYM = _sym(4)
V43 = RNG.standard_normal((4, 3))



def _eigh_fixed(m: Any, r: Any) -> tuple[Any, Any]:
    """Eigenvectors are unique up to sign, and LAPACK builds may choose differently:
    compare them with each column's sign fixed by its first entry (sign() has no gradient)."""
    w, v = r
    return w, v * v[..., :1, :].sign()


def _svd_fixed(m: Any, r: Any) -> tuple[Any, Any, Any]:
    """As :func:`_eigh_fixed`: each (u_i, v_i) pair flips together."""
    u, s, vh = r
    sg = u[..., :1, :].sign()
    return u * sg, s, vh * sg.mT


# (name, fn(lib, *inputs) -> tensor or tuple of tensors, inputs)
CASES: list[tuple[str, Callable[..., Any], list[np.ndarray]]] = [
    ("inv", lambda m, a: m.linalg.inv(a), [A3]),
    ("inv_batched", lambda m, a: m.linalg.inv(a), [AB]),
    ("inverse", lambda m, a: m.inverse(a), [A3]),
    ("det", lambda m, a: m.linalg.det(a), [A3]),
    ("det_batched", lambda m, a: m.linalg.det(a), [AB]),
    ("slogdet", lambda m, a: m.linalg.slogdet(a).logabsdet, [A3]),
    ("logdet", lambda m, a: m.logdet(a), [SPD]),
    ("solve", lambda m, a, b: m.linalg.solve(a, b), [A3, B32]),
    ("solve_vec", lambda m, a, b: m.linalg.solve(a, b), [A3, B3]),
    ("solve_batched_vec", lambda m, a, b: m.linalg.solve(a, b), [AB, RNG.standard_normal((2, 3))]),
    ("solve_broadcast", lambda m, a, b: m.linalg.solve(a, b), [AB, B32]),
    ("solve_right", lambda m, a, b: m.linalg.solve(a, b, left=False), [A3, B32.T.copy()]),
    ("solve_triangular_upper", lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True),
     [SPD, RNG.standard_normal((4, 2))]),
    ("solve_triangular_lower_right",
     lambda m, a, b: m.linalg.solve_triangular(a, b, upper=False, left=False),
     [SPD, RNG.standard_normal((2, 4))]),
    ("solve_triangular_unit",
     lambda m, a, b: m.linalg.solve_triangular(a, b, upper=False, unitriangular=True),
     [A3, B32]),
    ("cholesky", lambda m, a: m.linalg.cholesky(a), [SPD]),
    ("cholesky_upper", lambda m, a: m.linalg.cholesky(a, upper=True), [SPD]),
    ("cholesky_batched", lambda m, a: m.linalg.cholesky(a), [SPDB]),
    ("qr_square", lambda m, a: tuple(m.linalg.qr(a)), [A3]),
    ("qr_tall", lambda m, a: tuple(m.linalg.qr(a)), [TALL]),
    ("qr_wide", lambda m, a: tuple(m.linalg.qr(a)), [WIDE]),
    ("qr_complete_wide", lambda m, a: tuple(m.linalg.qr(a, mode="complete")), [WIDE]),
    ("eigh", lambda m, a: _eigh_fixed(m, m.linalg.eigh(a)), [SYM]),
    ("eigh_upper", lambda m, a: _eigh_fixed(m, m.linalg.eigh(a, UPLO="U")), [SYM]),
    ("eigvalsh", lambda m, a: m.linalg.eigvalsh(a), [SYM]),
    ("svd_square", lambda m, a: _svd_fixed(m, m.linalg.svd(a, full_matrices=False)), [A3]),
    ("svd_tall", lambda m, a: _svd_fixed(m, m.linalg.svd(a, full_matrices=False)), [TALL]),
    ("svd_wide", lambda m, a: _svd_fixed(m, m.linalg.svd(a, full_matrices=False)), [WIDE]),
    ("svd_batched", lambda m, a: _svd_fixed(m, m.linalg.svd(a, full_matrices=False)), [AB]),
    ("svd_full_tall_S", lambda m, a: m.linalg.svd(a)[1], [TALL]),
    ("svdvals", lambda m, a: m.linalg.svdvals(a), [TALL]),
    ("matrix_exp", lambda m, a: m.linalg.matrix_exp(a), [A3]),
    ("matrix_exp_big", lambda m, a: m.linalg.matrix_exp(a), [4 * A3]),
    ("matrix_power3", lambda m, a: m.linalg.matrix_power(a, 3), [A3]),
    ("matrix_power-2", lambda m, a: m.linalg.matrix_power(a, -2), [A3]),
    ("matrix_power0", lambda m, a: m.linalg.matrix_power(a, 0), [A3]),
    ("pinv", lambda m, a: m.linalg.pinv(a), [TALL]),
    ("pinv_hermitian", lambda m, a: m.linalg.pinv(a, hermitian=True), [SPD]),
    ("lstsq", lambda m, a, b: m.linalg.lstsq(a, b).solution, [TALL, RNG.standard_normal((5, 2))]),
    ("cross", lambda m, a, b: m.linalg.cross(a, b), [V43, RNG.standard_normal((4, 3))]),
    ("cross_dim0", lambda m, a, b: m.linalg.cross(a, b, dim=0),
     [RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))]),
    ("diag_embed", lambda m, a: m.diag_embed(a, 1), [V43]),
    ("diagonal", lambda m, a: m.linalg.diagonal(a, offset=-1), [AB]),
    ("cond", lambda m, a: m.linalg.cond(a), [A3]),
    ("multi_dot", lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), [TALL, A3, B32]),
    ("vecdot", lambda m, a, b: m.linalg.vecdot(a, b), [V43, V43[::-1].copy()]),
]
for ordv in [2, 1, 3, 0.5, 1.5, math.inf, -math.inf, 0, -1]:
    CASES.append((f"vector_norm_{ordv}",
                  lambda m, a, o=ordv: m.linalg.vector_norm(a, o, dim=-1), [V43]))
for ordv in ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]:
    CASES.append((f"matrix_norm_{ordv}", lambda m, a, o=ordv: m.linalg.matrix_norm(a, o), [V43]))
CASES += [
    ("norm_default", lambda m, a: m.linalg.norm(a), [AB]),
    ("norm_ord_matrix", lambda m, a: m.linalg.norm(a, 1), [V43]),
    ("norm_dim2", lambda m, a: m.linalg.norm(a, "nuc", dim=(0, 2), keepdim=True), [AB]),
    ("norm_vector_dim", lambda m, a: m.linalg.norm(a, 3, dim=1), [AB]),
    ("vector_norm_keepdim", lambda m, a: m.linalg.vector_norm(a, 2, dim=(0, 1), keepdim=True),
     [AB]),
    ("torch_norm", lambda m, a: m.norm(a), [AB]),
    ("torch_norm_nuc", lambda m, a: m.norm(a, "nuc", dim=(1, 2)), [AB]),
    ("torch_norm_p3_dim", lambda m, a: m.norm(a, p=3, dim=1, keepdim=True), [AB]),
    ("torch_norm_fro_dims", lambda m, a: m.norm(a, p="fro", dim=(0, 2)), [AB]),
    ("tensor_norm_inf", lambda m, a: a.norm(p=float("inf"), dim=0), [V43]),
]


# composed in tapegrad from other ops, so their last node has another name than PyTorch's
COMPOSED = {"eigh", "eigh_upper", "svd_square", "svd_tall", "svd_wide", "svd_batched",
            "matrix_power0", "pinv", "pinv_hermitian", "lstsq", "cross", "cross_dim0",
            "diag_embed", "diagonal", "cond", "multi_dot", "norm_ord_matrix", "norm_dim2",
            "torch_norm_nuc"} | {
    f"matrix_norm_{o}" for o in [1, -1, 2, -2, math.inf, -math.inf]}


def _run(lib: Any, fn: Callable[..., Any], arrays: list[np.ndarray], dtype: Any,
         create: bool) -> tuple[list[np.ndarray], list[str], list[np.ndarray], list[np.ndarray]]:
    ins = [lib.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    out = fn(lib, *ins)
    outs = list(out) if isinstance(out, tuple) else [out]
    rng = np.random.default_rng(1)
    cots = [rng.standard_normal(tuple(o.shape)) for o in outs]
    loss = sum((o * lib.tensor(c, dtype=dtype)).sum() for o, c in zip(outs, cots))
    grads = lib.autograd.grad(loss, ins, create_graph=create, allow_unused=True)
    second: list[np.ndarray] = []
    if create:
        w = [np.random.default_rng(2).standard_normal(a.shape) for a in arrays]
        tot = sum((g * lib.tensor(wi, dtype=dtype)).sum() for g, wi in zip(grads, w)
                  if g is not None and g.requires_grad)
        if not isinstance(tot, int):
            gg = lib.autograd.grad(tot, ins, allow_unused=True)
            second = [np.zeros(a.shape) if g is None else g.detach().numpy() for g, a in
                      zip(gg, arrays)]
    names = [type(o.grad_fn).__name__ if o.grad_fn is not None else "None" for o in outs]
    return ([o.detach().numpy() for o in outs], names,
            [np.zeros(a.shape) if g is None else g.detach().numpy() for g, a in
             zip(grads, arrays)], second)


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_same_values_and_gradients(name: str, fn: Callable[..., Any],
                                   arrays: list[np.ndarray]) -> None:
    ro, rn, rg, _ = _run(real, fn, arrays, real.float64, False)
    to, tn, tg_, _ = _run(tt, fn, arrays, tt.float64, False)
    for a, b in zip(ro, to):
        np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-9)
    if name not in COMPOSED:
        assert tn == rn
    for a, b in zip(rg, tg_):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-8)


SECOND = ["inv", "det", "slogdet", "solve", "solve_triangular_upper", "cholesky", "qr_tall",
          "qr_wide", "eigh", "svd_tall", "svdvals", "matrix_exp", "pinv", "vector_norm_3",
          "matrix_norm_nuc", "matrix_power-2"]


@pytest.mark.parametrize("name", SECOND)
def test_same_second_order(name: str) -> None:
    _, fn, arrays = next(c for c in CASES if c[0] == name)
    *_, r2 = _run(real, fn, arrays, real.float64, True)
    *_, t2 = _run(tt, fn, arrays, tt.float64, True)
    assert len(r2) == len(t2)
    for a, b in zip(r2, t2):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7)


def test_float32_keeps_dtype() -> None:
    for name in ["inv", "det", "cholesky", "eigvalsh", "svdvals", "qr_tall", "matrix_exp"]:
        _, fn, arrays = next(c for c in CASES if c[0] == name)
        ro, *_ = _run(real, fn, arrays, real.float32, False)
        to, *_ = _run(tt, fn, arrays, tt.float32, False)
        for a, b in zip(ro, to):
            assert b.dtype == a.dtype == np.float32
            np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def test_eigenvalue_gradients_at_repeated_eigenvalues() -> None:
    for lib in (real, tt):
        a = lib.eye(3, dtype=lib.float64, requires_grad=True)
        lib.linalg.eigvalsh(a).pow(2).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), 2 * np.eye(3))
        b = lib.eye(3, dtype=lib.float64, requires_grad=True)
        lib.linalg.matrix_norm(b, 2).backward()  # ties among singular values split evenly
        np.testing.assert_allclose(b.grad.numpy(), np.eye(3) / 3)


def test_vector_norm_at_zero() -> None:
    for lib in (real, tt):
        x = lib.zeros(3, dtype=lib.float64, requires_grad=True)
        lib.linalg.vector_norm(x).backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))
        y = lib.zeros(3, dtype=lib.float64, requires_grad=True)
        lib.norm(y).backward()  # the older torch.norm too
        np.testing.assert_array_equal(y.grad.numpy(), np.zeros(3))


@pytest.mark.parametrize("create", [False, True])
def test_det_gradient_of_singular_matrix(create: bool) -> None:
    # PyTorch 2.13: zero in a first-order backward, the cofactor matrix when recorded
    m = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]])
    grads = []
    for lib in (real, tt):
        a = lib.tensor(m, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.linalg.det(a), a, create_graph=create)
        grads.append(g.detach().numpy())
    np.testing.assert_allclose(grads[1], grads[0], atol=1e-10)
    cof = np.array([[14.0, -1.0, -4.0], [-7.0, 0.5, 2.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(grads[1], cof if create else 0 * cof, atol=1e-10)


def _err(lib: Any, fn: Callable[[Any], Any]) -> tuple[type, str]:
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001
        return type(e), str(e).split("\n[tapegrad hint]")[0]
    raise AssertionError("no error")


def _z(lib: Any, batch: tuple[int, ...] = ()) -> Any:
    z = np.zeros(batch + (3, 3))
    z[..., 0, 0] = 1
    if batch:
        z[0] = np.eye(3)
    return lib.tensor(z)


ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("inv_singular", lambda m: m.linalg.inv(_z(m))),
    ("inv_singular_batch", lambda m: m.linalg.inv(_z(m, (2,)))),
    ("solve_singular", lambda m: m.linalg.solve(_z(m), _z(m))),
    ("solve_singular_batch", lambda m: m.linalg.solve(_z(m, (2,)), _z(m, (2,)))),
    ("cholesky_not_pd", lambda m: m.linalg.cholesky(m.tensor([[1.0, 2.0], [2.0, 1.0]]))),
    ("cholesky_batch", lambda m: m.linalg.cholesky(_z(m, (2,)))),
    ("inv_rect", lambda m: m.linalg.inv(m.zeros(2, 3))),
    ("det_rect", lambda m: m.linalg.det(m.zeros(2, 3))),
    ("eigh_rect", lambda m: m.linalg.eigh(m.zeros(2, 3))),
    ("slogdet_rect", lambda m: m.linalg.slogdet(m.zeros(2, 3))),
    ("matrix_exp_rect", lambda m: m.linalg.matrix_exp(m.zeros(2, 3))),
    ("matrix_power_rect", lambda m: m.linalg.matrix_power(m.zeros(2, 3), 2)),
    ("inv_1d", lambda m: m.linalg.inv(m.zeros(3))),
    ("inv_int", lambda m: m.linalg.inv(m.eye(3, dtype=m.int64))),
    ("solve_shapes", lambda m: m.linalg.solve(m.eye(3), m.zeros(2, 1))),
    ("cross_len", lambda m: m.linalg.cross(m.zeros(2, 2), m.zeros(2, 2))),
    ("matrix_norm_1d", lambda m: m.linalg.matrix_norm(m.zeros(3), ord=1)),
    ("matrix_norm_ord", lambda m: m.linalg.matrix_norm(m.zeros(3, 3), ord=3)),
    ("vector_norm_str", lambda m: m.linalg.vector_norm(m.zeros(3, 3), ord="fro")),
    ("norm_3d", lambda m: m.linalg.norm(m.zeros(3, 3, 3), ord=2)),
    ("qr_mode", lambda m: m.linalg.qr(m.zeros(3, 2), mode="bad")),
    ("eigh_uplo", lambda m: m.linalg.eigh(m.zeros(3, 3), UPLO="X")),
    ("qr_r_backward", lambda m: m.linalg.qr(m.ones(2, 3, requires_grad=True),
                                            mode="r")[1].sum().backward()),
    ("qr_complete_tall_backward", lambda m: m.linalg.qr(m.ones(3, 2, requires_grad=True),
                                                        mode="complete")[1].sum().backward()),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_same_errors(name: str, fn: Callable[[Any], Any]) -> None:
    rt, rm = _err(real, fn)
    tt_, tm = _err(tt, fn)
    assert issubclass(tt_, rt.__mro__[1] if rt.__name__.startswith("_") else rt)
    assert tm == rm


def test_linalg_error_is_runtime_error() -> None:
    assert issubclass(tt.linalg.LinAlgError, RuntimeError)
    with pytest.raises(tt.linalg.LinAlgError):
        tt.linalg.inv(_z(tt))


def test_ex_variants_give_info() -> None:
    for fn in [lambda m: m.linalg.inv_ex(_z(m, (2,))).info,
               lambda m: m.linalg.cholesky_ex(_z(m, (2,))).info,
               lambda m: m.linalg.solve_ex(_z(m), _z(m)).info,
               lambda m: m.linalg.cholesky_ex(m.tensor([[1.0, 2.0], [2.0, 1.0]])).info,
               lambda m: m.linalg.inv_ex(m.eye(3)).info]:
        r, t = fn(real), fn(tt)
        assert t.dtype == tt.int32
        np.testing.assert_array_equal(t.numpy(), r.numpy())
    with pytest.raises(tt.linalg.LinAlgError):
        tt.linalg.inv_ex(_z(tt), check_errors=True)


def test_named_results_print_as_pytorch() -> None:
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    assert repr(tt.linalg.slogdet(tt.tensor(a))) == repr(real.linalg.slogdet(real.tensor(a)))
    r = tt.linalg.eigh(tt.tensor(a))
    assert r.eigenvalues is r[0] and r.eigenvectors is r[1]
    q = tt.linalg.qr(tt.tensor(a))
    assert q.Q is q[0] and q.R is q[1]


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
def test_tensor_methods() -> None:
    a = A3
    for name in ["det", "inverse", "logdet", "matrix_exp"]:
        r = getattr(real.tensor(a), name)()
        t = getattr(tt.tensor(a), name)()
        np.testing.assert_allclose(t.numpy(), r.numpy(), rtol=1e-10, equal_nan=True)
    np.testing.assert_allclose(tt.tensor(a).matrix_power(2).numpy(),
                               real.tensor(a).matrix_power(2).numpy())
    np.testing.assert_allclose(tt.tensor(AB).mT.numpy(), real.tensor(AB).mT.numpy())
    np.testing.assert_allclose(tt.tensor(SPD).cholesky().numpy(),
                               real.tensor(SPD).cholesky().numpy())


OLD_API: list[tuple[str, Callable[..., Any], list[np.ndarray]]] = [
    ("cholesky_solve", lambda m, b, a: m.cholesky_solve(b, m.linalg.cholesky(a)),
     [RNG.standard_normal((4, 2)), SPD]),
    ("cholesky_solve_upper", lambda m, b, a: m.cholesky_solve(
        b, m.linalg.cholesky(a, upper=True), upper=True), [RNG.standard_normal((4, 2)), SPD]),
    ("cholesky_inverse", lambda m, a: m.cholesky_inverse(m.linalg.cholesky(a)), [SPD]),
    ("triangular_solve", lambda m, b, a: tuple(m.triangular_solve(b, a)), [B32, A3]),
    ("triangular_solve_t_unit", lambda m, b, a: m.triangular_solve(
        b, a, upper=False, transpose=True, unitriangular=True).solution, [B32, A3]),
    ("svd_old", lambda m, a: _svd_fixed_old(m, m.svd(a)), [TALL]),
    ("svd_old_values", lambda m, a: m.svd(a, compute_uv=False).S, [TALL]),
    ("qr_old", lambda m, a: tuple(m.qr(a)), [TALL]),
    ("vander", lambda m, x: m.linalg.vander(x), [B3]),
    ("vander_n", lambda m, x: m.linalg.vander(x, N=5), [B32]),
]


def _svd_fixed_old(m: Any, r: Any) -> tuple[Any, Any, Any]:
    u, s, v = r
    sg = u[..., :1, :].sign()
    return u * sg, s, v * sg


@pytest.mark.filterwarnings("ignore:torch.(triangular_solve|qr|svd) is deprecated")
@pytest.mark.parametrize("name,fn,arrays", OLD_API, ids=[c[0] for c in OLD_API])
def test_older_torch_names(name: str, fn: Callable[..., Any], arrays: list[np.ndarray]) -> None:
    ro, _, rg, _ = _run(real, fn, arrays, real.float64, False)
    to, _, tg_, _ = _run(tt, fn, arrays, tt.float64, False)
    for a, b in zip(ro + rg, to + tg_):
        assert b.shape == a.shape
        np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-9)



@pytest.mark.parametrize("driver", [None, "gels", "gelsd", "gelss"])
def test_lstsq_drivers(driver: str | None) -> None:
    res = []
    for lib in (real, tt):
        a = lib.tensor(TALL, requires_grad=True)
        b = lib.tensor(np.arange(10.0).reshape(5, 2))
        r = lib.linalg.lstsq(a, b, driver=driver)
        (g,) = lib.autograd.grad(r.solution.sum(), a)
        res.append([t.detach().numpy() for t in r] + [g.numpy()])
    for x, y in zip(*res):
        assert y.shape == x.shape
        np.testing.assert_allclose(y, x, rtol=1e-8, atol=1e-10)


def test_eig_values_and_vectors() -> None:
    a = np.random.default_rng(0).standard_normal((2, 4, 4))
    r = real.linalg.eig(real.tensor(a))
    t = tt.linalg.eig(tt.tensor(a))
    assert t.eigenvalues.dtype == tt.complex128
    np.testing.assert_allclose(t.eigenvalues.numpy(), r.eigenvalues.numpy(), atol=1e-12)
    np.testing.assert_allclose(t.eigenvectors.numpy(), r.eigenvectors.numpy(), atol=1e-12)
    w32 = tt.linalg.eigvals(tt.tensor(a[0].astype(np.float32)))
    assert w32.dtype == tt.complex64
    np.testing.assert_allclose(w32.numpy(), real.linalg.eigvals(
        real.tensor(a[0].astype(np.float32))).numpy(), atol=1e-5)
    x = tt.tensor(a[0], requires_grad=True)
    assert type(tt.linalg.eigvals(x).grad_fn).__name__ == "LinalgEigBackward0"


# a matrix with a complex pair of eigenvalues (1 +- 2i) and a real one; and a batch
EIG_A = np.array([[1.0, -2.0, 0.5], [2.0, 1.0, 0.3], [0.1, 0.2, 3.0]])
EIG_B = np.random.default_rng(11).standard_normal((2, 4, 4))

EIG_LOSSES: dict[str, Callable[[Any, Any], Any]] = {
    "eigvals real+imag": lambda m, a: (m.linalg.eigvals(a).real * 0.3
                                       + m.linalg.eigvals(a).imag ** 2).sum(),
    "eigvals abs": lambda m, a: m.linalg.eigvals(a).abs().sum(),
    "eig values abs": lambda m, a: m.linalg.eig(a)[0].abs().sum(),
    "eig vectors abs": lambda m, a: (m.linalg.eig(a)[1].abs() ** 3).sum(),
    "eig both": lambda m, a: (m.linalg.eig(a).eigenvectors.abs()
                              * m.linalg.eig(a).eigenvalues.real.unsqueeze(-2)).sum(),
    "eig |v|^2 via conj": lambda m, a: (m.linalg.eig(a)[1] * m.linalg.eig(a)[1].conj()).real
                                       .mul(m.tensor([1.0, 2.0, 3.0, 4.0][:a.shape[-1]],
                                                     dtype=a.dtype)).sum(),
}


@pytest.mark.parametrize("name", list(EIG_LOSSES))
@pytest.mark.parametrize("which", ["A", "batch", "float32"])
def test_eig_gradients_match_pytorch(name: str, which: str) -> None:
    a = {"A": EIG_A, "batch": EIG_B, "float32": EIG_B[0].astype(np.float32)}[which]
    grads = []
    for m in (real, tt):
        x = m.tensor(a, requires_grad=True)
        EIG_LOSSES[name](m, x).backward()
        assert x.grad is not None and x.grad.dtype == x.dtype
        grads.append(x.grad.numpy())
    tol = 2e-4 if which == "float32" else 1e-9
    np.testing.assert_allclose(grads[1], grads[0], rtol=tol, atol=tol)


def test_eig_forward_mode_and_vmap_match_pytorch() -> None:
    t = np.random.default_rng(12).standard_normal((3, 3))
    for f in (lambda m, a: m.linalg.eigvals(a), lambda m, a: m.linalg.eig(a)[0],
              lambda m, a: m.linalg.eig(a)[1].abs()):
        outs = [m.func.jvp(lambda v, m=m, f=f: f(m, v), (m.tensor(EIG_A),), (m.tensor(t),))[1]
                .numpy() for m in (real, tt)]
        np.testing.assert_allclose(outs[1], outs[0], rtol=1e-9, atol=1e-10)
    per = [m.func.vmap(m.func.grad(lambda v, m=m: m.linalg.eig(v)[1].abs().sum()))(
        m.tensor(EIG_B)).numpy() for m in (real, tt)]
    np.testing.assert_allclose(per[1], per[0], rtol=1e-9, atol=1e-10)


def test_eig_errors_match_pytorch() -> None:
    msgs = []
    for m in (real, tt):
        x = m.tensor(EIG_A, requires_grad=True)
        got = []
        with pytest.raises(RuntimeError) as e1:  # the loss depends on the vectors' phases
            m.linalg.eig(x)[1].real.sum().backward()
        got.append(str(e1.value))
        with pytest.raises(RuntimeError) as e2:  # a complex output cannot seed backward
            m.linalg.eigvals(x).sum().backward()
        got.append(str(e2.value))
        with pytest.raises(RuntimeError) as e3:
            m.imag(m.tensor([1.0]))
        got.append(str(e3.value))
        msgs.append(got)
    assert msgs[1] == msgs[0]


def test_complex_gradients_follow_pytorchs_convention() -> None:
    # grad = dL/dRe + i dL/dIm: products, quotients and matmuls conjugate the other operand
    rng = np.random.default_rng(13)
    z0 = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    w0 = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    x0 = rng.standard_normal((2, 3))
    out = []
    for m in (real, tt):
        z, w = m.tensor(z0, requires_grad=True), m.tensor(w0, requires_grad=True)
        x = m.tensor(x0, requires_grad=True)
        loss = ((z * x).imag.sum() + (z @ w).abs().sum() + (x / z).real.sum()
                + (z.conj() * z).real.sum() + m.real(w).sum() + m.imag(w).mean())
        loss.backward()
        out.append([t.grad.numpy() for t in (z, w, x)])
    for a, b in zip(*out):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("which", ["eigh", "svd", "eig"])
def test_vmap_of_grad_through_eigen_and_singular_vectors(which: str) -> None:
    # the VJPs skip an unused output's terms by looking at its cotangent; under vmap that
    # cotangent is a tracer whose array is no value (it once made every gradient zero)
    b = np.random.default_rng(14).standard_normal((4, 3, 3))
    if which == "eigh":
        b = b + np.swapaxes(b, -1, -2)
    f = {"eigh": lambda m, a: m.linalg.eigh(a)[1].abs().sum(),
         "svd": lambda m, a: m.linalg.svd(a)[0].abs().sum(),
         "eig": lambda m, a: m.linalg.eig(a)[1].abs().sum()}[which]
    per = [m.func.vmap(m.func.grad(lambda a, m=m: f(m, a)))(m.tensor(b)).numpy()
           for m in (real, tt)]
    assert np.abs(per[1]).max() > 0.1
    np.testing.assert_allclose(per[1], per[0], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", ["eig vectors abs", "eigvals real+imag", "eig values abs"])
def test_eig_second_derivatives_match_pytorch(name: str) -> None:
    out = []
    for m in (real, tt):
        a = m.tensor(EIG_A, requires_grad=True)
        (g,) = m.autograd.grad(EIG_LOSSES[name](m, a), a, create_graph=True)
        (h,) = m.autograd.grad((g * g).sum(), a)
        out.append(h.numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-7, atol=1e-9)
