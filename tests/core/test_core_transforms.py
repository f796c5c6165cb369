"""The transforms (forward mode, batching, the functional API) on the one op table.

For every row of ``op_cases.CASES``:

- forward mode agrees with reverse mode: ``<u, J v>`` from ``jvp`` equals
  ``<vjp(u), v>``, and both equal a central difference of ``f`` along ``v``;
- the batching rule agrees with a loop: ``vmap(f)`` over three perturbed
  copies of the inputs equals ``f`` applied to each copy;
- ``vmap(grad)`` gives each example's gradient.

Then the nestings (``jacfwd(jacrev)``, ``vmap(vmap)``, ``jvp`` of ``jvp``,
forward over reverse, perturbation confusion), the API's arguments and
errors, and a deliberately wrong rule, which the checks must catch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import func
from tapegrad._core.registry import defop
from tests.core.op_cases import CASES, OpCase

RNG = np.random.default_rng(1234)


def _floats(case: OpCase) -> list[int]:
    return [i for i, a in enumerate(case.inputs) if a.dtype.kind == "f"]


def _outs(res: Any) -> list[tg.Tensor]:
    return list(res) if isinstance(res, (list, tuple)) else [res]


def _fn_of(case: OpCase, fl: list[int]) -> Any:
    """``case.fn`` as a function of its floating inputs only (the rest fixed)."""
    base = case.inputs

    def f(*xs: tg.Tensor) -> Any:
        args: list[Any] = [tg.tensor(a) for a in base]
        for i, x in zip(fl, xs):
            args[i] = x
        out = case.fn(*args)
        return tuple(_outs(out))

    return f


def _float_out(case: OpCase) -> bool:
    out = _outs(case.fn(*case.tensors()))
    return all(o.numpy().dtype.kind == "f" for o in out)


CASES64 = [c for c in CASES if _floats(c)]


@pytest.mark.parametrize("case", CASES64, ids=lambda c: c.name)
def test_jvp_agrees_with_vjp_and_finite_differences(case: OpCase) -> None:
    if not _float_out(case):
        pytest.skip("integer output")
    fl = _floats(case)
    f = _fn_of(case, fl)
    xs = [tg.tensor(case.inputs[i]) for i in fl]
    vs = [tg.tensor(RNG.standard_normal(x.shape)) for x in xs]
    out, tan = func.jvp(f, tuple(xs), tuple(vs))
    # reverse mode: <u, J v> == <J^T u, v>
    us = [tg.tensor(RNG.standard_normal(o.shape)) for o in out]
    _, vjp_fn = func.vjp(f, *xs)
    cts = vjp_fn(tuple(us))
    lhs = sum(float(np.sum(u.numpy() * t.numpy())) for u, t in zip(us, tan))
    rhs = sum(float(np.sum(c.numpy() * v.numpy())) for c, v in zip(cts, vs))
    assert np.isclose(lhs, rhs, rtol=1e-6, atol=1e-8), (lhs, rhs)
    # central difference of f along v
    eps = 1e-6
    plus = f(*[tg.tensor(x.numpy() + eps * v.numpy()) for x, v in zip(xs, vs)])
    minus = f(*[tg.tensor(x.numpy() - eps * v.numpy()) for x, v in zip(xs, vs)])
    for t, p, m in zip(tan, plus, minus):
        fd = (p.numpy() - m.numpy()) / (2 * eps)
        np.testing.assert_allclose(t.numpy(), fd, rtol=1e-4, atol=1e-6)


def _batched_inputs(case: OpCase, b: int = 3) -> list[np.ndarray]:
    return [np.stack([a + 0.01 * k * np.sign(a + 0.5) for k in range(b)])
            if a.dtype.kind == "f" else a for a in case.inputs]


# writes a batched value into a tensor made inside the function without a batch: PyTorch
# refuses that in place (and so does tapegrad); the loop would accept it
INTO_UNBATCHED = {"setitem_into_constant"}


@pytest.mark.parametrize("case", CASES64, ids=lambda c: c.name)
def test_vmap_agrees_with_a_loop(case: OpCase) -> None:
    b = 3
    batch = _batched_inputs(case, b)
    dims = tuple(0 if a.dtype.kind == "f" else None for a in case.inputs)

    def f(*xs: tg.Tensor) -> Any:
        return tuple(_outs(case.fn(*xs)))

    if case.name in INTO_UNBATCHED:
        with pytest.raises(RuntimeError, match="inplace arithmetic"):
            func.vmap(f, in_dims=dims)(*[tg.tensor(a) for a in batch])
        return

    got = func.vmap(f, in_dims=dims)(*[tg.tensor(a) for a in batch])
    for k in range(b):
        one = f(*[tg.tensor(a[k] if d == 0 else a) for a, d in zip(batch, dims)])
        for g, o in zip(got, one):
            np.testing.assert_allclose(g.numpy()[k], o.numpy(), rtol=1e-10, atol=1e-12)


SCALAR_CASES = [c for c in CASES64 if _float_out(c)]


@pytest.mark.parametrize("case", [c for c in SCALAR_CASES if c.name not in INTO_UNBATCHED],
                         ids=lambda c: c.name)
def test_vmap_of_grad_gives_per_example_gradients(case: OpCase) -> None:
    fl = _floats(case)
    b = 2
    batch = _batched_inputs(case, b)

    def loss(*xs: tg.Tensor) -> tg.Tensor:
        args: list[Any] = [tg.tensor(a) for a in case.inputs]
        for i, x in zip(fl, xs):
            args[i] = x
        total = None
        for o in _outs(case.fn(*args)):
            s = tg.sum(o * o)
            total = s if total is None else total + s
        return total

    argnums = tuple(range(len(fl)))
    per = func.vmap(func.grad(loss, argnums=argnums))(*[tg.tensor(batch[i]) for i in fl])
    for k in range(b):
        xs = [tg.tensor(batch[i][k], requires_grad=True) for i in fl]
        ref = tg.grad(loss(*xs), xs, allow_unused=True)
        for p, r, x in zip(per, ref, xs):
            want = np.zeros_like(x.numpy()) if r is None else r.numpy()
            np.testing.assert_allclose(p.numpy()[k], want, rtol=1e-9, atol=1e-11)


# ------------------------------------------------------------------------ nestings
def _f(x: tg.Tensor) -> tg.Tensor:
    return tg.sum(tg.sin(x) * x ** 2) + tg.sum(tg.exp(x[:2]) * x[1:])


X0 = np.array([0.3, -0.7, 1.1])


def _fd_hessian(f: Any, x: np.ndarray, eps: float = 1e-4) -> np.ndarray:
    n = x.size
    h = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            e_i = np.eye(n)[i] * eps
            e_j = np.eye(n)[j] * eps
            h[i, j] = (f(x + e_i + e_j) - f(x + e_i - e_j) - f(x - e_i + e_j)
                       + f(x - e_i - e_j)) / (4 * eps * eps)
    return h


def test_hessians_by_every_nesting_agree_with_finite_differences() -> None:
    fd = _fd_hessian(lambda v: float(_f(tg.tensor(v)).numpy()), X0)
    x = tg.tensor(X0)
    for h in (func.hessian(_f)(x), func.jacfwd(func.jacrev(_f))(x),
              func.jacrev(func.jacrev(_f))(x), func.jacfwd(func.jacfwd(_f))(x),
              func.jacrev(func.jacfwd(_f))(x)):
        np.testing.assert_allclose(h.numpy(), fd, rtol=1e-5, atol=1e-6)


def test_forward_over_reverse_hvp_equals_hessian_times_vector() -> None:
    x, v = tg.tensor(X0), tg.tensor(np.array([1.0, -2.0, 0.5]))
    g, hv = func.hvp(_f, (x,), (v,))
    np.testing.assert_allclose(g[0].numpy(), func.grad(_f)(x).numpy())
    np.testing.assert_allclose(hv[0].numpy(), func.hessian(_f)(x).numpy() @ v.numpy(),
                               rtol=1e-10)


def test_reverse_over_forward() -> None:
    v = tg.tensor(np.array([1.0, 0.0, 2.0]))

    def dir_deriv(x: tg.Tensor) -> tg.Tensor:
        return func.jvp(_f, (x,), (v,))[1]

    got = func.grad(dir_deriv)(tg.tensor(X0))
    np.testing.assert_allclose(got.numpy(), func.hessian(_f)(tg.tensor(X0)).numpy() @ v.numpy(),
                               rtol=1e-10)


def test_jvp_of_jvp_second_directional_derivative() -> None:
    x = tg.tensor(X0)
    u = tg.tensor(np.array([1.0, 2.0, -1.0]))
    w = tg.tensor(np.array([0.5, 0.0, 1.0]))
    inner = lambda y: func.jvp(_f, (y,), (u,))[1]  # noqa: E731
    got = func.jvp(inner, (x,), (w,))[1]
    h = func.hessian(_f)(x).numpy()
    assert np.isclose(float(got.numpy()), w.numpy() @ h @ u.numpy())


def test_no_perturbation_confusion() -> None:
    # d/dx [x * d/dy (x + y)] at y = 1 is 1 (the inner derivative is 1); a tangent that
    # leaked between levels would give 2
    def outer(x: tg.Tensor) -> tg.Tensor:
        inner = func.jvp(lambda y: x + y, (tg.tensor(1.0),), (tg.tensor(1.0),))[1]
        return x * inner

    _, t = func.jvp(outer, (tg.tensor(3.0),), (tg.tensor(1.0),))
    assert float(t.numpy()) == 1.0
    # the same with reverse mode inside forward mode and the other way round
    g = func.grad(lambda x: x * func.grad(lambda y: x * y)(tg.tensor(2.0)))(tg.tensor(3.0))
    assert float(g.numpy()) == 6.0  # x * x -> 2x


def test_vmap_of_vmap_and_out_dims() -> None:
    a = tg.tensor(RNG.standard_normal((2, 3, 4)))
    b = tg.tensor(RNG.standard_normal((3, 4)))
    got = func.vmap(func.vmap(lambda u, v: tg.sum(u * v)), in_dims=(0, None))(a, b)
    np.testing.assert_allclose(got.numpy(), np.einsum("ijk,jk->ij", a.numpy(), b.numpy()))
    moved = func.vmap(lambda u: u * 2, in_dims=1, out_dims=1)(a)
    np.testing.assert_allclose(moved.numpy(), a.numpy() * 2)
    const = func.vmap(lambda u: tg.tensor(1.0), in_dims=0)(b)  # broadcast to the batch
    assert const.shape == (3,)


def test_vmap_nested_in_dims_pytrees_and_chunks() -> None:
    xs = {"a": tg.tensor(RNG.standard_normal((5, 2))), "b": tg.tensor(RNG.standard_normal(2))}

    def f(d: dict[str, tg.Tensor], scale: tg.Tensor) -> tuple[tg.Tensor, tg.Tensor]:
        return d["a"] * d["b"] * scale, tg.sum(d["a"])

    s = tg.tensor(3.0)
    full = func.vmap(f, in_dims=({"a": 0, "b": None}, None))(xs, s)
    chunked = func.vmap(f, in_dims=({"a": 0, "b": None}, None), chunk_size=2)(xs, s)
    for g, c in zip(full, chunked):
        np.testing.assert_allclose(g.numpy(), c.numpy())
    np.testing.assert_allclose(full[0].numpy(), xs["a"].numpy() * xs["b"].numpy() * 3)
    np.testing.assert_allclose(full[1].numpy(), xs["a"].numpy().sum(axis=1))


def test_grad_argnums_has_aux_and_value_and_grad() -> None:
    def f(x: tg.Tensor, y: tg.Tensor) -> tuple[tg.Tensor, tg.Tensor]:
        z = tg.sum(x * y * y)
        return z, z * 0 + 7

    x, y = tg.tensor([1.0, 2.0]), tg.tensor([3.0, 4.0])
    (gx, gy), aux = func.grad(f, argnums=(0, 1), has_aux=True)(x, y)
    np.testing.assert_allclose(gx.numpy(), [9.0, 16.0])
    np.testing.assert_allclose(gy.numpy(), [6.0, 16.0])
    assert float(aux.numpy()) == 7.0
    (v, _), g = func.value_and_grad(f, has_aux=True)(x, y)
    assert float(v.numpy()) == 41.0
    np.testing.assert_allclose(g.numpy(), [9.0, 16.0])


def test_linearize_and_vjp_called_twice() -> None:
    out, jvp_fn = func.linearize(tg.sin, tg.tensor(X0))
    np.testing.assert_allclose(jvp_fn(tg.ones(3)).numpy(), np.cos(X0))
    _, vjp_fn = func.vjp(lambda x: x * x, tg.tensor(X0))
    a = vjp_fn(tg.ones(3))[0].numpy()
    b = vjp_fn(tg.ones(3))[0].numpy()
    np.testing.assert_allclose(a, 2 * X0)
    np.testing.assert_allclose(a, b)


def test_transforms_compose_with_the_engine() -> None:
    # a parameter that requires grad outside the transform still gets its gradient
    w = tg.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    g = func.grad(lambda x: tg.sum(w * x * x))(tg.tensor(X0))  # 2 w x
    tg.sum(g).backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * X0)
    # jvp of a function of tensors that require grad: the primal output stays in the graph
    x = tg.tensor(X0, requires_grad=True)
    out, t = func.jvp(lambda v: tg.sum(v ** 3), (x,), (tg.ones(3),))
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * X0 ** 2)


# ------------------------------------------------------------------------ errors
def test_errors_as_pytorch_words_them() -> None:
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        func.vmap(lambda a, b: a + b)(tg.ones(2), tg.ones(3))
    with pytest.raises(ValueError, match="expected in_dim to satisfy -1 <= in_dim < 1"):
        func.vmap(lambda a: a, in_dims=1)(tg.ones(2))
    with pytest.raises(ValueError, match="must only return Tensors"):
        func.vmap(lambda a: 3)(tg.ones(2))
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
        func.grad(lambda a: a)(tg.ones(2))
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a Tensor"):
        func.grad(lambda a: 3.0)(tg.ones(2))
    with pytest.raises(RuntimeError, match="calling .item\\(\\) on a Tensor"):
        func.vmap(lambda a: a.item())(tg.ones(2))
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        func.vmap(lambda a: a * 2 if bool(a > 0) else a)(tg.ones(2))


def test_a_leaked_batched_tensor_raises() -> None:
    kept: list[tg.Tensor] = []

    def f(a: tg.Tensor) -> tg.Tensor:
        kept.append(a * 2)
        return a

    func.vmap(f)(tg.ones(3))
    with pytest.raises(RuntimeError, match="after the vmap that made it returned"):
        kept[0] + 1


# ------------------------------------------------------------------------ rules must matter
@defop("wrong_jvp_sin", saves=("x",))
def wrong_jvp_sin(x: Any) -> Any:
    return np.sin(x)


@wrong_jvp_sin.defvjp
def _(g: tg.Tensor, x: tg.Tensor) -> Any:
    return (g * tg.cos(x),)


@wrong_jvp_sin.defjvp
def _(dx: tg.Tensor, x: tg.Tensor, *, out: tg.Tensor) -> Any:
    return dx * tg.sin(x)  # should be cos


@defop("wrong_batch_sum")
def wrong_batch_sum(x: Any) -> Any:
    return np.sum(x)


@wrong_batch_sum.defbatch
def _(batched: tuple[bool, ...], x: tg.Tensor) -> Any:
    return tg.sum(x)  # sums the batch away too: wrong


def test_a_wrong_jvp_rule_is_caught() -> None:
    x = tg.tensor(X0)
    v = tg.ones(3)
    _, t = func.jvp(wrong_jvp_sin, (x,), (v,))
    _, vjp_fn = func.vjp(wrong_jvp_sin, x)
    assert not np.allclose(t.numpy(), vjp_fn(v)[0].numpy())


def test_a_wrong_batching_rule_is_caught() -> None:
    xs = tg.tensor(RNG.standard_normal((3, 4)))
    with pytest.raises(RuntimeError, match="batching rule of wrong_batch_sum"):
        func.vmap(wrong_batch_sum)(xs)


def test_an_op_without_a_batching_rule_runs_per_example() -> None:
    @defop("ruleless_cube", saves=("x",))
    def cube(x: Any) -> Any:
        return np.asarray(x) ** 3

    @cube.defvjp
    def _(g: tg.Tensor, x: tg.Tensor) -> Any:
        return (g * 3 * x * x,)

    xs = tg.tensor(RNG.standard_normal((4, 2)))
    np.testing.assert_allclose(func.vmap(cube)(xs).numpy(), xs.numpy() ** 3)
    per = func.vmap(func.grad(lambda x: tg.sum(cube(x))))(xs)
    np.testing.assert_allclose(per.numpy(), 3 * xs.numpy() ** 2)
