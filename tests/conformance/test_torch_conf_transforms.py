"""torch.func, torch.vmap, forward_ad and vectorized Jacobians: the same programs on both.

Each ``p_*`` program gets the ``torch`` module (real PyTorch 2.13 or
``tapegrad.torch``) and returns values or raises; results, exception types and
messages (tapegrad's hint line stripped) must agree.  Random inputs come from
NumPy so both see the same numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.torch_style.torch_harness import compare

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402

R = np.random.default_rng(3)
A = R.standard_normal((4, 3))
B = R.standard_normal((3, 2))
V = R.standard_normal(3)
T = np.array([1, 0, 1, 1])


def _t(torch: Any, a: np.ndarray) -> Any:
    return torch.tensor(a)


# ------------------------------------------------------------------ grad family
def p_grad_argnums_aux(torch: Any) -> Any:
    from_func = torch.func

    def f(x: Any, y: Any) -> Any:
        z = (x.sin() * y).sum()
        return z, z.detach() * 2

    (gx, gy), aux = from_func.grad(f, argnums=(0, 1), has_aux=True)(_t(torch, V), _t(torch, V))
    g, v = from_func.grad_and_value(lambda x: (x ** 3).sum())(_t(torch, V))
    return gx, gy, aux, g, v


def p_grad_of_grad(torch: Any) -> Any:
    g = torch.func.grad
    return g(g(lambda x: x.sin() * x.exp()))(torch.tensor(0.7, dtype=torch.float64))


def p_vjp_pytree(torch: Any) -> Any:
    def f(d: Any) -> Any:
        return {"p": d["a"] @ d["b"], "q": d["a"].sum()}

    out, fn = torch.func.vjp(f, {"a": _t(torch, A), "b": _t(torch, B)})
    (ct,) = fn({"p": torch.ones(4, 2, dtype=torch.float64),
                "q": torch.tensor(2.0, dtype=torch.float64)})
    return out["p"], out["q"], ct["a"], ct["b"]


def p_jvp(torch: Any) -> Any:
    out, t = torch.func.jvp(lambda x, y: (x * y).tanh(), (_t(torch, V), _t(torch, V[::-1].copy())),
                            (torch.ones(3, dtype=torch.float64),
                             torch.zeros(3, dtype=torch.float64)))
    return out, t


def p_jacobians(torch: Any) -> Any:
    f = lambda x: (x[:, None] * x[None, :]).sin()  # noqa: E731
    x = _t(torch, V)
    return (torch.func.jacrev(f)(x), torch.func.jacfwd(f)(x),
            torch.func.hessian(lambda y: (y ** 3).sum() * y.sum())(x))


def p_jacrev_argnums_tuple(torch: Any) -> Any:
    f = lambda a, b: a @ b  # noqa: E731
    ja, jb = torch.func.jacrev(f, argnums=(0, 1))(_t(torch, A), _t(torch, B))
    return ja, jb


A5 = R.standard_normal((5, 5))
X5 = R.standard_normal(5)
A4 = R.standard_normal((4, 4))
X4 = R.standard_normal(4)


def _w7_jacobians(torch: Any, x: Any) -> list[Any]:
    fn = torch.func
    bad = A5.copy()
    bad[1, 2], bad[3, 0] = np.inf, np.nan
    at, bt, badt = (torch.tensor(m, dtype=x.dtype) for m in (A5, B.T.copy(), bad))
    out = []
    for f in (lambda v: torch.tanh(at @ v), lambda v: bt @ v[:3] + v[1:4],
              lambda v: v @ at, lambda v: badt @ v, lambda v: v @ badt,
              lambda v: (at @ v).unsqueeze(-1) * v):
        out += [fn.jacrev(f)(x), fn.jacfwd(f)(x)]
    out.append(fn.jacrev(lambda v: torch.tanh(at @ v), chunk_size=2)(x))
    j, aux = fn.jacrev(lambda v: (torch.sin(at @ v), v.sum()), has_aux=True)(x)
    return out + [j, aux]


def p_jacobians_through_the_structured_basis(torch: Any) -> Any:
    # the W7 shapes (tanh(A x), x B, A x with infinities) by jacrev and jacfwd, float64 and
    # float32, chunks and has_aux: tapegrad runs them on its structured basis
    x64 = _t(torch, X5)
    return _w7_jacobians(torch, x64) + _w7_jacobians(torch, x64.float())


def p_jacobians_vectorized_functional_and_hessian(torch: Any) -> Any:
    AF = torch.autograd.functional
    a = torch.tensor(A4)
    x = _t(torch, X4)
    f = lambda v: torch.tanh(a @ v)  # noqa: E731
    return (AF.jacobian(f, x, vectorize=True),
            AF.jacobian(f, x, vectorize=True, strategy="forward-mode"),
            torch.func.hessian(lambda v: (torch.tanh(a @ v) ** 2).sum())(x))


# ------------------------------------------------------------------ vmap
def p_vmap_basic(torch: Any) -> Any:
    x, y = _t(torch, A), _t(torch, A[::-1].copy())
    return (torch.vmap(torch.dot)(x, y), torch.func.vmap(lambda a: a.softmax(0))(x),
            torch.vmap(lambda a, b: a @ b, in_dims=(0, None))(x, _t(torch, B)),
            torch.vmap(lambda a: a.sum(), in_dims=1)(x),
            torch.vmap(lambda a: a * 2, out_dims=1)(x))


def p_vmap_of_vmap(torch: Any) -> Any:
    x = _t(torch, A)
    return torch.vmap(torch.vmap(lambda a: a.exp() * a))(x)


def p_vmap_chunks_and_nested_dims(torch: Any) -> Any:
    x = _t(torch, A)

    def f(pair: Any, s: Any) -> Any:
        return pair[0] * pair[1] + s

    return torch.vmap(f, in_dims=((0, None), None), chunk_size=3)((x, _t(torch, V)),
                                                                   torch.tensor(1.0))


def p_per_sample_grads(torch: Any) -> Any:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.tensor(np.cos(np.arange(p.numel()) + i).reshape(p.shape),
                                 dtype=torch.float32))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = torch.tensor(A, dtype=torch.float32)
    t = torch.tensor(T)

    def loss(p: Any, xi: Any, ti: Any) -> Any:
        out = torch.func.functional_call(model, p, (xi.unsqueeze(0),))
        return torch.nn.functional.cross_entropy(out, ti.unsqueeze(0))

    g = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(params, x, t)
    return [g[k] for k in sorted(g)]


def p_ensemble_stack_module_state(torch: Any) -> Any:
    models = [torch.nn.Linear(3, 2) for _ in range(3)]
    with torch.no_grad():
        for j, m in enumerate(models):
            m.weight.copy_(torch.tensor(np.arange(6.0).reshape(2, 3) * (j + 1),
                                        dtype=torch.float32))
            m.bias.copy_(torch.tensor([1.0, -1.0]) * j)
    params, buffers = torch.func.stack_module_state(models)
    base = models[0]

    def run(p: Any, b: Any, x: Any) -> Any:
        return torch.func.functional_call(base, (p, b), (x,))

    x = torch.tensor(A, dtype=torch.float32)
    out = torch.vmap(run, in_dims=(0, 0, None))(params, buffers, x)
    return out, params["weight"].shape, params["weight"].requires_grad


def p_vmap_randomness(torch: Any) -> Any:
    x = torch.ones(3)
    same = torch.vmap(lambda a: torch.rand(2) + a, randomness="same")(x)
    return same[0].equal(same[1]), same.shape


# ------------------------------------------------------------------ forward_ad
def p_forward_ad(torch: Any) -> Any:
    import importlib

    fwAD = importlib.import_module(torch.__name__ + ".autograd.forward_ad")
    x = _t(torch, V)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, torch.ones(3, dtype=torch.float64))
        y = (d.exp() * d).sum()
        u = fwAD.unpack_dual(y)
        plain = fwAD.unpack_dual(x)
        res = (u.primal, u.tangent, plain.tangent is None, type(u).__name__, u._fields)
    after = fwAD.unpack_dual(y).tangent is None
    return res + (after,)


def p_forward_ad_errors(torch: Any) -> Any:
    import importlib

    fwAD = importlib.import_module(torch.__name__ + ".autograd.forward_ad")
    with fwAD.dual_level():
        fwAD.make_dual(torch.ones(3), torch.ones(4))


def p_forward_ad_nested(torch: Any) -> Any:
    import importlib

    fwAD = importlib.import_module(torch.__name__ + ".autograd.forward_ad")
    with fwAD.dual_level():
        with fwAD.dual_level():
            pass


def p_forward_ad_no_level(torch: Any) -> Any:
    import importlib

    fwAD = importlib.import_module(torch.__name__ + ".autograd.forward_ad")
    fwAD.make_dual(torch.ones(3), torch.ones(3))


# ------------------------------------------------------------------ autograd.Function
def _square_fn(torch: Any) -> Any:
    class Square(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x: Any) -> Any:
            return x * x

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            (x,) = inputs
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 2 * x * g

        @staticmethod
        def jvp(ctx: Any, t: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 2 * x * t

    return Square


def p_function_under_transforms(torch: Any) -> Any:
    sq = _square_fn(torch)
    x = _t(torch, A)
    v = torch.vmap(sq.apply)(x)
    g = torch.vmap(torch.func.grad(lambda r: sq.apply(r).sum()))(x)
    _, t = torch.func.jvp(sq.apply, (x,), (torch.ones_like(x),))
    return v, g, t


def p_function_without_vmap_support(torch: Any) -> Any:
    class F(torch.autograd.Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return x * 2

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            pass

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    return torch.vmap(F.apply)(torch.ones(2, 3))


# ------------------------------------------------------------------ autograd.functional
def p_functional_vectorized(torch: Any) -> Any:
    AF = torch.autograd.functional

    def f(x: Any, y: Any) -> Any:
        return x ** 2 * y.sum(), x.sin()

    ins = (_t(torch, V), _t(torch, V[:2].copy()))
    loop = AF.jacobian(f, ins)
    vec = AF.jacobian(f, ins, vectorize=True)
    fwd = AF.jacobian(f, ins, vectorize=True, strategy="forward-mode")
    h = AF.hessian(lambda x: (x ** 3).sum() * x.sum(), ins[0], vectorize=True,
                   outer_jacobian_strategy="forward-mode")
    return [loop[i][j] for i in range(2) for j in range(2)], \
        [vec[i][j] for i in range(2) for j in range(2)], \
        [fwd[i][j] for i in range(2) for j in range(2)], h.detach()


def p_functional_forward_needs_vectorize(torch: Any) -> Any:
    return torch.autograd.functional.jacobian(lambda x: x * 2, torch.ones(2),
                                              strategy="forward-mode")


# ------------------------------------------------------------------ graph introspection
def p_graph_introspection(torch: Any) -> Any:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    y = (x * w).sum()
    fn = y.grad_fn
    nxt = fn.next_functions[0][0]
    leaves = [n for n, _ in nxt.next_functions]
    seen = []
    h = fn.register_prehook(lambda gouts: (gouts[0] * 10,))
    y.backward()
    h.remove()
    packed = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
        z = (x * w).sum()
    z.backward()
    return (fn.name(), nxt.name(), [type(n).__name__ for n in leaves],
            leaves[0].variable is x, x.grad, len(packed) >= 2, seen,
            isinstance(fn, torch.autograd.graph.Node))


# ------------------------------------------------------------------ errors
def p_err_sizes(torch: Any) -> Any:
    return torch.vmap(lambda a, b: a + b)(torch.ones(2), torch.ones(3))


def p_err_in_dim(torch: Any) -> Any:
    def ident(a: Any) -> Any:
        return a

    return torch.vmap(ident, in_dims=1)(torch.ones(2))


def p_err_return_type(torch: Any) -> Any:
    def three(a: Any) -> Any:
        return 3

    return torch.vmap(three)(torch.ones(2))


def p_err_grad_nonscalar(torch: Any) -> Any:
    return torch.func.grad(lambda a: a)(torch.ones(2))


def p_err_grad_nontensor(torch: Any) -> Any:
    return torch.func.grad(lambda a: 3.0)(torch.ones(2))


def p_err_item(torch: Any) -> Any:
    return torch.vmap(lambda a: a.item())(torch.ones(2))


def p_err_control_flow(torch: Any) -> Any:
    return torch.vmap(lambda a: a if bool(a > 0) else -a)(torch.ones(2))


def p_err_random(torch: Any) -> Any:
    return torch.vmap(lambda a: torch.rand(1) + a)(torch.ones(2))


PROGRAMS = {name[2:]: fn for name, fn in sorted(globals().items()) if name.startswith("p_")}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_as_pytorch(name: str) -> None:
    compare(PROGRAMS[name], real, tt)
