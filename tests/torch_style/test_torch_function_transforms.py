"""Custom ``torch.autograd.Function`` under the function transforms (hand-computed values).

``vmap(grad(f))`` through a Function with its own ``vmap`` staticmethod, Hessians
(forward over reverse) through one with a ``jvp`` staticmethod, the ``setup_context``
requirement, and ``numpy()`` inside ``forward`` (no grad mode there).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch

X = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)


class MyCube(torch.autograd.Function):
    @staticmethod
    def forward(x: Any) -> Any:
        return x ** 3, 3 * x ** 2

    @staticmethod
    def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
        (x,) = inputs
        ctx.save_for_backward(x, output[1])

    @staticmethod
    def backward(ctx: Any, g: Any, gdx: Any) -> Any:
        x, dx = ctx.saved_tensors
        return g * dx + gdx * 6 * x

    @staticmethod
    def vmap(info: Any, in_dims: Any, x: Any) -> Any:
        return MyCube.apply(x), (in_dims[0], in_dims[0])


def _cube(x: Any) -> Any:
    return MyCube.apply(x)[0]


class Exp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x: Any) -> Any:
        return x.exp()

    @staticmethod
    def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (y,) = ctx.saved_tensors
        return g * y

    @staticmethod
    def jvp(ctx: Any, t: Any) -> Any:
        (y,) = ctx.saved_tensors
        return t * y


def test_vmap_of_grad_through_a_vmap_staticmethod() -> None:
    want = 3 * X.numpy() ** 2
    np.testing.assert_allclose(torch.vmap(torch.func.grad(_cube))(X).numpy(), want)
    np.testing.assert_allclose(torch.func.jacrev(_cube)(X).numpy(), np.diag(want))
    np.testing.assert_allclose(torch.vmap(_cube)(X).numpy(), X.numpy() ** 3)
    gg = torch.vmap(torch.func.grad(torch.func.grad(_cube)))(X)
    np.testing.assert_allclose(gg.numpy(), 6 * X.numpy())


@pytest.mark.parametrize("how", ["hessian", "jacfwd_jacrev", "jacrev_jacfwd", "jvp_grad",
                                 "grad_jvp"])
def test_second_derivatives_through_a_jvp_staticmethod(how: str) -> None:
    e = np.exp(X.numpy())
    f = lambda v: Exp.apply(v).sum()  # noqa: E731
    ones = torch.ones(3, dtype=torch.float64)
    if how == "hessian":
        got = torch.func.hessian(f)(X).diag()
    elif how == "jacfwd_jacrev":
        got = torch.func.jacfwd(torch.func.jacrev(f))(X).diag()
    elif how == "jacrev_jacfwd":
        got = torch.func.jacrev(torch.func.jacfwd(f))(X).diag()
    elif how == "jvp_grad":
        got = torch.func.jvp(torch.func.grad(f), (X,), (ones,))[1]
    else:
        got = torch.func.grad(lambda v: torch.func.jvp(Exp.apply, (v,), (ones,))[1].sum())(X)
    np.testing.assert_allclose(got.numpy(), e, rtol=1e-12)


def test_old_style_function_under_a_transform_needs_setup_context() -> None:
    class Old(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    for call in (lambda: torch.func.grad(lambda v: Old.apply(v).sum())(X),
                 lambda: torch.vmap(Old.apply)(X),
                 lambda: torch.func.jvp(Old.apply, (X,), (X,))):
        with pytest.raises(RuntimeError, match="it must override the setup_context"):
            call()
    x = X.clone().requires_grad_()
    Old.apply(x).sum().backward()  # plain autograd: fine
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_numpy_inside_forward_of_a_tensor_that_requires_grad() -> None:
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return torch.tensor(x.numpy() * 2)

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            pass

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    x = X.clone().requires_grad_()
    Twice.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert torch.func.grad(lambda v: Twice.apply(v).sum())(X).tolist() == [2.0, 2.0, 2.0]
    with torch.no_grad():
        assert x.numpy().tolist() == X.tolist()
    with pytest.raises(RuntimeError, match="Can't call numpy"):
        x.numpy()


def test_vmap_of_grad_over_stacked_params_stays_differentiable() -> None:
    """Ensembles / MAML: per-model gradients from vmap(grad) over stacked parameters that
    require grad are differentiated again (they were cut from the graph)."""
    torch.manual_seed(0)
    models = [torch.nn.Linear(3, 1) for _ in range(2)]
    params, buffers = torch.func.stack_module_state(models)
    x = torch.randn(4, 3)

    def loss(p: Any, b: Any) -> Any:
        return (torch.func.functional_call(models[0], (p, b), (x,)) ** 2).sum()

    g = torch.vmap(torch.func.grad(loss))(params, buffers)
    assert g["weight"].requires_grad
    (g["bias"] ** 2).sum().backward()
    # d/dp of (dL/db)^2 with dL/db = 2 * sum(x @ w + b): 2 * gb * 2 * (sum(x, 0), n)
    gb = g["bias"].detach()
    want_w = 2 * gb[:, :, None] * 2 * x.sum(0)[None, None, :]
    np.testing.assert_allclose(params["weight"].grad.numpy(), want_w.numpy(), rtol=1e-5)
    np.testing.assert_allclose(params["bias"].grad.numpy(), (2 * gb * 2 * 4).numpy(),
                               rtol=1e-5)


def test_functional_call_strict_and_unexpected_names() -> None:
    m = torch.nn.Linear(2, 1)
    x = torch.ones(1, 2)
    # not strict: a name the module does not have is ignored, as in PyTorch
    assert torch.func.functional_call(m, {"nope": torch.zeros(1)}, (x,)).shape == (1, 1)
    with pytest.raises(RuntimeError) as e:
        torch.func.functional_call(m, {"nope": torch.zeros(1), "weight": torch.ones(1, 2)},
                                   (x,), strict=True)
    assert str(e.value) == ("Error(s) in reparametrizing for Linear:\n\tUnexpected key(s): "
                            "'nope'.\n\tMissing key(s): 'bias'.")
    with pytest.raises(ValueError, match=r"\['weight'\] appeared in multiple dictionaries"):
        torch.func.functional_call(m, ({"weight": m.weight}, {"weight": m.weight}), (x,))


def test_node_register_hook_gets_grad_inputs_and_grad_outputs() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    log: list[Any] = []
    h = y.grad_fn.register_hook(lambda gi, go: log.append(
        ([None if g is None else g.tolist() for g in gi], [g.tolist() for g in go])))
    y.sum().backward()
    assert log == [([[3.0, 3.0], None], [[1.0, 1.0]])]
    h.remove()
    x.grad = None
    y2 = x ** 2
    y2.grad_fn.register_hook(lambda gi, go: (gi[0] + 1,))  # replaces the input gradient
    y2.sum().backward()
    assert x.grad.tolist() == [3.0, 5.0]


def test_saved_tensor_attributes() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    z = x * y
    assert z.grad_fn._saved_self is x and z.grad_fn._saved_other is y
    r = y.grad_fn._saved_result
    np.testing.assert_allclose(r.detach().numpy(), np.exp([1.0, 2.0]), rtol=1e-6)
    assert r.grad_fn is y.grad_fn
    z.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        z.grad_fn._saved_self  # noqa: B018
    with pytest.raises(AttributeError):
        z.grad_fn._saved_nothing  # noqa: B018


def test_batch_norm_with_running_stats_under_vmap_raises() -> None:
    bn = torch.nn.BatchNorm1d(3)
    with pytest.raises(RuntimeError, match="Batch norm got a batched tensor as input while the "
                                           "running_mean or running_var"):
        torch.vmap(lambda v: bn(v.unsqueeze(0).expand(2, 3)))(torch.ones(4, 3))
    bn.eval()
    assert torch.vmap(lambda v: bn(v.unsqueeze(0).expand(2, 3)))(torch.ones(4, 3)).shape == \
        (4, 2, 3)
    torch.func.replace_all_batch_norm_modules_(bn.train())
    assert torch.vmap(lambda v: bn(v.unsqueeze(0).expand(2, 3)))(torch.ones(4, 3)).shape == \
        (4, 2, 3)


def test_vmap_of_grad_and_value_hands_back_untracked_values() -> None:
    w = torch.tensor([1.0, -1.0, 2.0])
    x = torch.ones(4, 3)

    def loss(w: Any, xi: Any) -> Any:
        return (torch.dot(w, xi) - 1.0) ** 2

    g, v = torch.vmap(torch.func.grad_and_value(loss), in_dims=(None, 0))(w, x)
    assert not v.requires_grad and not g.requires_grad
    assert v.tolist() == [1.0] * 4 and g.tolist() == [[2.0, 2.0, 2.0]] * 4


def test_grad_fn_names_of_transform_outputs_an_outer_pass_tracks() -> None:
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    x = torch.tensor([3.0, 4.0])

    def f(a: Any) -> Any:
        return (a * p).sin()

    AFn = torch.autograd.functional
    for jac in (torch.func.jacrev(f)(x), torch.func.jacfwd(f)(x),
                torch.func.hessian(lambda a: f(a).sum())(x),
                AFn.jacobian(f, x, create_graph=True, vectorize=True)):
        assert type(jac.grad_fn).__name__ == "ViewBackward0"
    out, tan = torch.func.jvp(f, (x,), (torch.ones(2),))
    assert type(out.grad_fn).__name__ == "AliasBackward0"
    assert type(tan.grad_fn).__name__ == "MulBackward0"
    out, tan = torch.func.jvp(torch.sin, (x,), (torch.ones(2),))
    assert out.grad_fn is None and tan.grad_fn is None


def test_functional_call_ties_weights() -> None:
    class Tied(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = torch.nn.Linear(2, 2, bias=False)
            self.b = torch.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x: Any) -> Any:
            return self.b(self.a(x))

    m = Tied()
    x = torch.ones(1, 2)
    two = torch.eye(2) * 2
    assert torch.func.functional_call(m, {"a.weight": two}, (x,)).tolist() == [[4.0, 4.0]]
    untied = torch.func.functional_call(m, {"a.weight": two}, (x,), tie_weights=False)
    np.testing.assert_allclose(untied.detach().numpy(), (m.b.weight @ torch.full((2,), 2.0))
                               .detach().numpy()[None], rtol=1e-6)
    with pytest.raises(ValueError, match=r"multiple values for keys \['a.weight', 'b.weight'\], "
                                         "which are tied"):
        torch.func.functional_call(m, {"a.weight": two, "b.weight": torch.eye(2)}, (x,))
    assert m.a.weight is m.b.weight  # restored
