"""The Jacobians' standard basis held structured under ``vmap`` (``batching.Diag``).

``jacrev``/``jacfwd`` (and ``GradientTape.jacobian``, ``torch.autograd.functional.
jacobian(vectorize=True)``) map over the rows of ``eye(n)`` as a :class:`Diag`:
elementwise ops and reshapes keep it, a matrix product with it is a scaled copy
of rows or columns, everything else gets the dense batch.  Each result here is
compared with *the dense path*: the same ``vmap`` of the same VJP or JVP over an
explicit ``eye(n)`` tensor.  Where the structured path only runs elementwise
ops the two must be bitwise equal; through a matrix product the values must be
equal (each dense sum has one nonzero term), NaN where the dense one has NaN.
Finite differences check the values themselves.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import func, ops
from tapegrad.autodiff.batching import Basis, BatchLevel, Diag
from tests.core.op_cases import CASES, OpCase

R = np.random.default_rng(77)
N = 5
A = R.standard_normal((N, N))
B = R.standard_normal((N, 3))
M = R.standard_normal((3, N))
C6 = R.standard_normal((3, 2))
BIAS = R.standard_normal(N)
X = R.standard_normal(N) * 0.7
BAD = A.copy()
BAD[1, 2], BAD[3, 0], BAD[0, 4] = np.inf, np.nan, -np.inf
ZC = np.array([1.5, 0.0, -2.0, 0.0, 3.0])  # divides by zero: inf, NaN and -0 in the basis


def _c(a: np.ndarray, like: tg.Tensor) -> tg.Tensor:
    return tg.tensor(a.astype(like.numpy().dtype))


# name -> (function of x, whether the structured path runs only elementwise ops/reshapes)
FUNCS: dict[str, tuple[Callable[[tg.Tensor], Any], bool]] = {
    "tanh_Ax": (lambda x: tg.tanh(_c(A, x) @ x), False),
    "x_at_B": (lambda x: x @ _c(B, x), False),
    "M_at_x": (lambda x: _c(M, x) @ x, False),
    "dot": (lambda x: x @ _c(BIAS, x), False),
    "two_layers": (lambda x: tg.tanh(_c(A, x) @ tg.tanh(_c(A, x) @ x + _c(BIAS, x))), False),
    "chain": (lambda x: tg.exp(tg.sin(x) * 2.0 + x / 3.0 - 1.0) * x, True),
    "where_and_compare": (lambda x: tg.where(x > 0.1, x * x, -x), True),
    "square_negate_div": (lambda x: -(x ** 2) / _c(ZC + 4.0, x), True),
    "outer": (lambda x: x[:, None] * x[None, :], False),
    "reductions": (lambda x: tg.sum(x ** 2) * x + tg.mean(tg.tanh(x)), False),
    "softmax": (lambda x: tg.softmax(_c(A, x) @ x, axis=-1), False),
    "reshape_matmul": (lambda x: tg.reshape(
        tg.reshape(tg.concatenate([x, x[:1]]), (2, 3)) @ _c(C6, x), (4,)), False),
    "inf_nan_in_A": (lambda x: tg.tanh(_c(BAD, x) @ x), False),
    "inf_nan_right": (lambda x: x @ _c(BAD, x), False),
    "div_by_zero_then_matmul": (lambda x: _c(A, x) @ (x / _c(ZC, x)), False),
    "div_by_zero": (lambda x: x / _c(ZC, x) + 1.0, True),
    # TensorFlow's matvec: a matrix times a column, a row times a matrix
    "matrix_times_column": (lambda x: tg.tanh(tg.reshape(_c(A, x) @ tg.reshape(x, (N, 1)),
                                                         (N,))), False),
    "row_times_matrix": (lambda x: tg.reshape(tg.reshape(x, (1, N)) @ _c(B, x), (3,)), False),
    "column_inf_nan": (lambda x: tg.reshape(_c(BAD, x) @ tg.reshape(x, (N, 1)), (N,)), False),
}


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.numpy())


@contextlib.contextmanager
def dense_vmap() -> Iterator[None]:
    """``vmap`` without recognizing an identity input as the structured basis."""
    from tapegrad.autodiff import functional as F

    old = F.basis_of
    F.basis_of = lambda t: None
    try:
        yield
    finally:
        F.basis_of = old


def dense_jacrev(f: Callable[..., Any], x: tg.Tensor) -> np.ndarray:
    """``jacrev`` by the dense path: vmap of the VJP over an explicit identity."""
    out, vjp_fn = func.vjp(f, x)
    n = out.numpy().size
    eye = tg.tensor(np.eye(n, dtype=out.numpy().dtype).reshape((n,) + out.shape))
    with dense_vmap():
        rows = func.vmap(lambda ct: vjp_fn(ct)[0])(eye)
    return _np(rows).reshape(tuple(out.shape) + tuple(x.shape))


def dense_jacfwd(f: Callable[..., Any], x: tg.Tensor) -> np.ndarray:
    """``jacfwd`` by the dense path: vmap of the JVP over an explicit identity."""
    n = x.numpy().size
    eye = tg.tensor(np.eye(n, dtype=x.numpy().dtype))
    with dense_vmap():
        cols = _np(func.vmap(lambda t: func.jvp(f, (x,), (ops.reshape(t, x.shape),))[1])(eye))
    return np.moveaxis(cols, 0, -1).reshape(cols.shape[1:] + tuple(x.shape))


def fd_jac(f: Callable[..., Any], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        cols.append((_np(f(tg.tensor(x + e))) - _np(f(tg.tensor(x - e)))) / (2 * eps))
    return np.moveaxis(np.stack(cols), 0, -1).reshape(cols[0].shape + x.shape)


def assert_same(got: np.ndarray, want: np.ndarray, bitwise: bool) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    if bitwise:
        assert got.tobytes() == want.tobytes(), (got, want)
    else:  # equal values, NaN where the dense path has NaN (a zero's sign may differ)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_jacobians_equal_the_dense_path_and_finite_differences(name: str, dtype: str) -> None:
    f, exact = FUNCS[name]
    x = tg.tensor(X.astype(dtype))
    jr = _np(func.jacrev(f)(x))
    jf = _np(func.jacfwd(f)(x))
    assert_same(jr, dense_jacrev(f, x), exact)
    assert_same(jf, dense_jacfwd(f, x), exact)
    if dtype == "float64":
        fd = fd_jac(f, X)
        fin = np.isfinite(fd) & np.isfinite(jr)
        np.testing.assert_allclose(jr[fin], fd[fin], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(jf[fin], fd[fin], rtol=1e-5, atol=1e-6)
        if "inf" not in name and "zero" not in name:
            assert fin.all()


def test_complex_jacobians_equal_the_dense_path() -> None:
    # complex: elementwise ops keep the structure; products take the dense GEMM
    x = tg.tensor(X.astype(np.complex128) * (1 + 0.5j))
    ac = tg.tensor(A + 1j * A.T)
    for f in (lambda v: tg.exp(v) * (2 - 1j), lambda v: tg.tanh(ac @ v), lambda v: v @ ac):
        np.testing.assert_array_equal(_np(func.jacrev(f)(x)), dense_jacrev(f, x))
        np.testing.assert_array_equal(_np(func.jacfwd(f)(x)), dense_jacfwd(f, x))


def test_inf_and_nan_give_the_dense_paths_nans() -> None:
    # the Jacobian of x @ BAD is BAD^T; the dense GEMM multiplies BAD's inf/NaN entries by
    # the basis' zeros too, which spreads NaN along them: the structured path must as well
    x = tg.tensor(X)
    f = FUNCS["inf_nan_right"][0]
    for jac, dense in ((func.jacrev, dense_jacrev), (func.jacfwd, dense_jacfwd)):
        got = _np(jac(f)(x))
        np.testing.assert_array_equal(got, dense(f, x))
        assert np.isnan(got).sum() > np.isnan(BAD).sum()


def test_zero_signs_of_elementwise_results_are_the_dense_paths() -> None:
    # -x flips every zero of the basis to -0; the structure keeps them (z = -0)
    x = tg.tensor(X)
    got = _np(func.jacrev(lambda v: -v * 2.0)(x))
    assert np.signbit(got).all() or np.signbit(got[~np.eye(N, dtype=bool)]).all()
    assert got.tobytes() == dense_jacrev(lambda v: -v * 2.0, x).tobytes()


# ------------------------------------------------------------------ the op table
def _float_case(c: OpCase) -> bool:
    if not any(a.dtype.kind == "f" for a in c.inputs):
        return False
    try:
        outs = c.fn(*c.tensors())
    except Exception:  # noqa: BLE001
        return False
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    return all(isinstance(o, tg.Tensor) and o.numpy().dtype.kind == "f" for o in outs)


TABLE = [c for c in CASES if _float_case(c)]


def _first_float_fn(case: OpCase) -> tuple[Callable[[tg.Tensor], Any], tg.Tensor]:
    i = next(k for k, a in enumerate(case.inputs) if a.dtype.kind == "f")

    def f(x: tg.Tensor) -> Any:
        args: list[Any] = [tg.tensor(a) for a in case.inputs]
        args[i] = x
        out = case.fn(*args)
        return out[0] if isinstance(out, (list, tuple)) else out

    return f, tg.tensor(case.inputs[i])


@pytest.mark.parametrize("case", TABLE, ids=lambda c: c.name)
def test_every_op_of_the_table_through_a_structured_basis(case: OpCase) -> None:
    """Every op sees the structured basis in ``jacrev`` and ``jacfwd``: by its structure rule
    or on the dense batch, the Jacobian is the dense path's."""
    f, x = _first_float_fn(case)
    try:
        want_r = dense_jacrev(f, x)
    except Exception as exc:  # noqa: BLE001 - then the structured path must fail alike
        with pytest.raises(type(exc)):
            func.jacrev(f)(x)
    else:
        np.testing.assert_array_equal(_np(func.jacrev(f)(x)), want_r)
    try:
        want_f = dense_jacfwd(f, x)
    except Exception as exc:  # noqa: BLE001
        with pytest.raises(type(exc)):
            func.jacfwd(f)(x)
    else:
        np.testing.assert_array_equal(_np(func.jacfwd(f)(x)), want_f)


# ------------------------------------------------------------------ the structure itself
def _count_gemms(monkeypatch: pytest.MonkeyPatch, n: int = 16) -> list[int]:
    """Count the matrix products the matmul ops run that are larger than one n x n matrix
    times a vector (the dense path's basis times a matrix is n x n times n x n)."""
    from tapegrad.ops import linalg

    calls = [0]
    for op in (linalg._matmul, linalg._mv, linalg._vm, linalg._bmm, linalg._dot_op):
        fwd = op.fwd

        def counted(x: Any, y: Any, fwd: Any = fwd, **attrs: Any) -> Any:
            if np.size(x) * np.size(y) > n ** 3:
                calls[0] += 1
            return fwd(x, y, **attrs)

        monkeypatch.setattr(op, "fwd", counted)
    return calls


def test_the_w7_jacobians_run_no_gemm(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_gemms(monkeypatch)
    n = 16
    a = tg.tensor(R.standard_normal((n, n)))
    x = tg.tensor(R.standard_normal(n))
    f = lambda v: tg.tanh(a @ v)  # noqa: E731
    jr, jf = _np(func.jacrev(f)(x)), _np(func.jacfwd(f)(x))
    assert calls[0] == 0
    t = np.tanh(a.numpy() @ x.numpy())
    np.testing.assert_array_equal(jr, (1 - t * t)[:, None] * a.numpy())
    np.testing.assert_allclose(jf, jr, rtol=1e-15, atol=0)
    # the dense path (the reference of these tests) does run the GEMMs
    dense_jacrev(f, x)
    assert calls[0] > 0
    calls[0] = 0
    # with an infinity in A the product must be the GEMM's (NaN columns): it runs
    a.numpy()[0, 0] = np.inf
    np.testing.assert_array_equal(_np(func.jacrev(f)(x)), dense_jacrev(f, x))
    assert calls[0] > 0


def test_tensorflow_style_w7_jacobian_runs_no_gemm(monkeypatch: pytest.MonkeyPatch) -> None:
    import tapegrad.tf as tf

    calls = _count_gemms(monkeypatch)
    n = 16
    a = R.standard_normal((n, n))
    x = tf.constant(R.standard_normal(n))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.tanh(tf.linalg.matvec(tf.constant(a), x))
    vec = tape.jacobian(y, x).numpy()
    assert calls[0] == 0
    np.testing.assert_array_equal(vec, tape.jacobian(y, x, experimental_use_pfor=False).numpy())


def test_vmap_over_an_identity_is_held_structured(monkeypatch: pytest.MonkeyPatch) -> None:
    # the frameworks' tutorials write Jacobians as vmap(vjp_fn)(eye(n)): that batch is the
    # structured basis, bit for bit the identity; anything else is an ordinary batch
    import tapegrad.tf as tf
    import tapegrad.torch as torch

    calls = _count_gemms(monkeypatch)
    n = 16
    a = R.standard_normal((n, n))
    x = R.standard_normal(n)
    t = np.tanh(a @ x)
    want = (1 - t * t)[:, None] * a
    _, vjp_fn = torch.func.vjp(lambda v: torch.tanh(torch.tensor(a) @ v), torch.tensor(x))
    got = torch.vmap(vjp_fn)(torch.eye(n, dtype=torch.float64))[0].numpy()
    np.testing.assert_array_equal(got, want)
    xt = tf.constant(x)

    def col(e: Any) -> Any:
        with tf.autodiff.ForwardAccumulator(xt, e) as acc:
            y = tf.tanh(tf.linalg.matvec(tf.constant(a), xt))
        return acc.jvp(y)

    got_f = tf.transpose(tf.vectorized_map(col, tf.eye(n, dtype=tf.float64))).numpy()
    np.testing.assert_allclose(got_f, want, rtol=1e-15, atol=0)
    assert calls[0] == 0
    from tapegrad.autodiff.batching import basis_of

    eye = np.eye(n)
    assert basis_of(tg.tensor(eye)) is not None
    assert basis_of(tg.tensor(eye.reshape(n, 2, n // 2))).elem == (2, n // 2)
    for bad in (2 * eye, eye + 1e-300, -eye):
        assert basis_of(tg.tensor(bad)) is None
    for k, val in (((0, 3), -0.0), ((2, 1), np.nan), ((3, 3), 0.0)):
        e = eye.copy()
        e[k] = val
        assert basis_of(tg.tensor(e)) is None
    assert basis_of(tg.tensor(eye, requires_grad=True)) is None
    assert basis_of(tg.tensor(eye.astype(np.int64))) is None
    # a vmap over a non-identity batch: ordinary, the GEMM runs
    calls[0] = 0
    torch.vmap(vjp_fn)(torch.tensor(eye + 1e-300))
    assert calls[0] > 0


def test_diag_kept_by_elementwise_ops_and_dense_elsewhere() -> None:
    c = tg.tensor(R.standard_normal(N))
    with BatchLevel(N) as lv:
        t = lv.make(Basis((N,), np.float64))
        u = tg.tanh(t * c - 1.0)
        assert u._bval.__class__ is Diag
        r = tg.reshape(u, (N, 1))
        assert r._bval.__class__ is Diag and r._bval.shape == (N, 1)
        s = tg.sum(u)  # a reduction: on the dense batch
        assert s._bval.__class__ is not Diag
        dense = lv.value(u)
        assert u._bval is dense  # kept, dense, for the next use
    want = np.tanh(np.eye(N) * c.numpy() - 1.0)
    assert _np(dense).tobytes() == want.tobytes()
    np.testing.assert_array_equal(_np(s._bval), want.sum(axis=1))


def test_chunks_aux_argnums_and_pytrees() -> None:
    x, y = tg.tensor(X), tg.tensor(X[::-1].copy())
    f = FUNCS["two_layers"][0]
    full = _np(func.jacrev(f)(x))
    for cs in (1, 2, 3, N, 2 * N):  # (the second layer's GEMM rounds by the chunk's shape)
        np.testing.assert_allclose(_np(func.jacrev(f, chunk_size=cs)(x)), full, rtol=1e-13,
                                   atol=1e-16)
    g1 = FUNCS["tanh_Ax"][0]  # one layer: no GEMM at all, the chunks' rows are exact
    for cs in (1, 2, 3, N):
        np.testing.assert_array_equal(_np(func.jacrev(g1, chunk_size=cs)(x)),
                                      dense_jacrev(g1, x))
    j, aux = func.jacrev(lambda v: (f(v), tg.sum(v)), has_aux=True)(x)
    np.testing.assert_array_equal(_np(j), full)
    assert float(aux) == pytest.approx(float(np.sum(X)))
    j, aux = func.jacfwd(lambda v: (f(v), tg.sum(v)), has_aux=True)(x)
    np.testing.assert_array_equal(_np(j), dense_jacfwd(f, x))

    def g(a: tg.Tensor, b: tg.Tensor) -> Any:
        return {"p": tg.tanh(_c(A, a) @ a) * b, "q": a @ _c(B, a)}

    for jac in (func.jacrev, func.jacfwd):
        res = jac(g, argnums=(0, 1))(x, y)
        for key in ("p", "q"):
            for k, v in enumerate((x, y)):
                fd = fd_jac(lambda t, key=key, k=k: g(*((t, y) if k == 0 else (x, t)))[key],
                            _np(v))
                np.testing.assert_allclose(_np(res[key][k]), fd, rtol=1e-5, atol=1e-6)


def test_nestings_hessian_vmap_of_jacobian_and_jacobian_of_jacobian() -> None:
    x = tg.tensor(X)
    a = _c(A, x)

    def f(v: tg.Tensor) -> tg.Tensor:
        return tg.sum(tg.tanh(a @ v) ** 2)

    h = _np(func.hessian(f)(x))
    h_dense = dense_jacfwd(lambda v: func.jacrev(f)(v), x)
    np.testing.assert_allclose(h, h_dense, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(h, h.T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_np(func.jacrev(func.jacrev(f))(x)), h, rtol=1e-12, atol=1e-13)
    g = lambda v: tg.tanh(a @ v)  # noqa: E731
    xs = tg.tensor(R.standard_normal((3, N)))
    per = _np(func.vmap(func.jacrev(g))(xs))
    for k in range(3):  # (the batched forward's GEMM rounds unlike one matrix-vector product)
        np.testing.assert_allclose(per[k], _np(func.jacrev(g)(tg.tensor(xs.numpy()[k]))),
                                   rtol=1e-14, atol=1e-15)
    per_f = _np(func.vmap(func.jacfwd(g))(xs))
    np.testing.assert_allclose(per_f, per, rtol=1e-14, atol=1e-15)


def test_front_end_jacobians_vectorized_equal_their_loops() -> None:
    import tapegrad.tf as tf
    import tapegrad.torch as torch

    AF = torch.autograd.functional
    at = torch.tensor(A)
    xt = torch.tensor(X)
    f = lambda v: torch.tanh(at @ v) * v  # noqa: E731
    loop = AF.jacobian(f, xt).numpy()
    np.testing.assert_array_equal(AF.jacobian(f, xt, vectorize=True).numpy(), loop)
    np.testing.assert_allclose(
        AF.jacobian(f, xt, vectorize=True, strategy="forward-mode").numpy(), loop,
        rtol=1e-14, atol=1e-15)
    xf = tf.constant(X.astype(np.float32))
    af = tf.constant(BAD.astype(np.float32))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(xf)
        y = tf.tanh(tf.linalg.matvec(af, xf)) + tf.sin(xf)
    vec = tape.jacobian(y, xf).numpy()
    np.testing.assert_array_equal(vec, tape.jacobian(y, xf, experimental_use_pfor=False).numpy())


def test_a_jacobian_differentiated_again_records_the_structured_products() -> None:
    # create_graph: the structured products are recorded ops; the gradient with respect
    # to A of a function of the Jacobian is the dense path's
    import tapegrad.torch as torch

    AF = torch.autograd.functional
    x = torch.tensor(X)

    def loss(vec: bool) -> np.ndarray:
        a = torch.tensor(A, requires_grad=True)
        j = AF.jacobian(lambda v: torch.tanh(a @ v), x, create_graph=True, vectorize=vec)
        (j * j).sum().backward()
        return a.grad.numpy()

    np.testing.assert_allclose(loss(True), loss(False), rtol=1e-13, atol=1e-14)


def test_errors_are_the_dense_paths() -> None:
    # a shape that does not broadcast, a matmul of the wrong size: the ops' own errors
    x = tg.tensor(X)
    for f in (lambda v: v * tg.tensor(np.ones(3)), lambda v: tg.tensor(np.ones((3, 4))) @ v,
              lambda v: v @ tg.tensor(np.ones((4, 2)))):
        for jac in (func.jacrev, func.jacfwd):
            with pytest.raises(Exception) as structured:
                jac(f)(x)
            with dense_vmap(), pytest.raises(Exception) as dense:
                (dense_jacrev if jac is func.jacrev else dense_jacfwd)(f, x)
            assert type(structured.value) is type(dense.value)
            assert str(structured.value) == str(dense.value)


def test_a_leaked_structured_tracer_raises() -> None:
    kept: list[tg.Tensor] = []

    def f(v: tg.Tensor) -> tg.Tensor:
        kept.append(v * 2.0)
        return v

    out = func.vmap(f)(Basis((N,), np.float64))  # the basis as jacrev/jacfwd pass it
    assert _np(out).tobytes() == np.eye(N).tobytes()
    assert kept[0]._bval.__class__ is Diag
    with pytest.raises(RuntimeError, match="after the vmap that made it returned"):
        kept[0] + 1
