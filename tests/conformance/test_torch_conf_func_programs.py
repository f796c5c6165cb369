"""torch.func / vmap / custom autograd.Function / autograd.functional programs of the kind
the tutorials write (per-sample gradients of a CNN, NumpySort with a vmap staticmethod,
Hessians through a jvp staticmethod, in-place ops under vmap, error texts): the same
results, exception types and messages as real PyTorch 2.13.
"""

# the programs are written as the tutorials write them (one-line statements, lambdas)
# ruff: noqa: E702, E731, F841

from __future__ import annotations

import copy
import importlib
from typing import Any

import numpy as np
import pytest

from tests.torch_style.torch_harness import compare

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402

R = np.random.default_rng(2)
A = R.standard_normal((4, 3))
V = R.standard_normal(3)


def fw(torch: Any) -> Any:
    return importlib.import_module(torch.__name__ + ".autograd.forward_ad")

def p_jac_tutorial(torch: Any) -> Any:
    torch.manual_seed(0)

    F = torch.nn.functional
    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()
    D = 4
    weight = torch.randn(D, D)
    bias = torch.randn(D)
    x = torch.randn(D)
    from_func = torch.func
    j1 = from_func.jacrev(predict, argnums=2)(weight, bias, x)
    j2 = from_func.jacfwd(predict, argnums=2)(weight, bias, x)
    jw, jb = from_func.jacrev(predict, argnums=(0, 1))(weight, bias, x)
    xb = torch.randn(3, D)
    bj = torch.vmap(from_func.jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, xb)
    def predict_with_output_summed(weight, bias, x):
        return predict(weight, bias, x).sum(0)
    bj2 = from_func.jacrev(predict_with_output_summed, argnums=2)(weight, bias, xb).movedim(1, 0)
    h = from_func.hessian(predict, argnums=2)(weight, bias, x)
    h2 = from_func.jacfwd(from_func.jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
    return j1, j2, jw, jb, bj, bj2, h, h2, j1.shape, jw.shape


def p_per_sample_cnn(torch: Any) -> Any:
    torch.manual_seed(0)
    nn = torch.nn; F = nn.functional
    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)
            self.fc1 = nn.Linear(8 * 2 * 2, 16)
            self.fc2 = nn.Linear(16, 10)
        def forward(self, x):
            x = self.conv1(x); x = F.relu(x)
            x = self.conv2(x); x = F.relu(x)
            x = F.max_pool2d(x, 2)
            x = torch.flatten(x, 1)
            x = self.fc1(x); x = F.relu(x)
            x = self.fc2(x)
            output = F.log_softmax(x, dim=1)
            return output
    def loss_fn(predictions, targets):
        return F.nll_loss(predictions, targets)
    data = torch.randn(4, 1, 8, 8)
    targets = torch.randint(10, (4,))
    model = SimpleCNN()
    functional_call, vmap, grad = torch.func.functional_call, torch.func.vmap, torch.func.grad
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}
    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        loss = loss_fn(predictions, targets)
        return loss
    ft_compute_grad = grad(compute_loss)
    ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
    ft = ft_compute_sample_grad(params, buffers, data, targets)
    # reference loop
    ref = []
    for i in range(4):
        model.zero_grad()
        l = loss_fn(model(data[i:i+1]), targets[i:i+1]); l.backward()
        ref.append([p.grad.clone() for p in model.parameters()])
    ok = [torch.allclose(ft[name][i], ref[i][j], atol=3e-6, rtol=1e-5)
          for i in range(4) for j, name in enumerate(params)]
    return [ft[k] for k in params], all(ok), list(ft.keys())


def p_ensemble_tutorial(torch: Any) -> Any:
    torch.manual_seed(0)
    nn = torch.nn; F = nn.functional
    class SimpleMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(12, 8)
            self.fc2 = nn.Linear(8, 6)
            self.fc3 = nn.Linear(6, 4)
        def forward(self, x):
            x = x.flatten(1)
            x = self.fc1(x); x = F.relu(x)
            x = self.fc2(x); x = F.relu(x)
            x = self.fc3(x)
            return x
    num_models = 3
    data = torch.randn(5, 3, 2, 2)
    targets = torch.randint(4, (5,))
    models = [SimpleMLP() for _ in range(num_models)]
    minibatches = data[:num_models]
    predictions_diff_minibatch_loop = [model(minibatch) for model, minibatch in zip(models, minibatches)]
    minibatch = data
    predictions2 = [model(minibatch) for model in models]
    stack_module_state, functional_call, vmap = torch.func.stack_module_state, torch.func.functional_call, torch.func.vmap
    params, buffers = stack_module_state(models)
    base_model = copy.deepcopy(models[0])
    base_model = base_model.to('meta')
    def fmodel(params, buffers, x):
        return functional_call(base_model, (params, buffers), (x,))
    print([p.size(0) for p in params.values()])
    minibatches = minibatches.unsqueeze(1)
    predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
    a = torch.allclose(predictions1_vmap.squeeze(1), torch.stack(predictions_diff_minibatch_loop), atol=1e-3, rtol=1e-5)
    predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    b = torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-3, rtol=1e-5)
    return predictions1_vmap, predictions2_vmap, a, b, str(next(base_model.parameters()).device)


def p_fwad_tutorial_basic(torch: Any) -> Any:
    fwAD = fw(torch)
    torch.manual_seed(0)
    primal = torch.randn(10, 10)
    tangent = torch.randn(10, 10)
    def fn(x, y):
        return x ** 2 + y ** 2
    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        assert fwAD.unpack_dual(dual_input).tangent is tangent
        dual_input_alt = fwAD.make_dual(primal, tangent.T)
        alt_same = fwAD.unpack_dual(dual_input_alt).tangent is tangent.T
        plain_tensor = torch.randn(10, 10)
        dual_output = fn(dual_input, plain_tensor)
        jvp = fwAD.unpack_dual(dual_output).tangent
    ok = fwAD.unpack_dual(dual_output).tangent is None
    return jvp, ok, alt_same


def p_fwad_custom_function(torch: Any) -> Any:
    fwAD = fw(torch)
    torch.manual_seed(0)
    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = torch.exp(foo)
            ctx.result = result
            return result
        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            del ctx.result
            return gO
    fn = Fn.apply
    primal = torch.randn(10, 10, dtype=torch.double, requires_grad=True)
    tangent = torch.randn(10, 10)
    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        dual_output = fn(dual_input)
        jvp = fwAD.unpack_dual(dual_output).tangent
    gc = torch.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True,
                                  check_backward_ad=False, check_undefined_grad=False,
                                  check_batched_grad=False)
    return jvp, gc


def p_fwad_functorch_jvp(torch: Any) -> Any:
    torch.manual_seed(0)
    jvp = torch.func.jvp
    x = torch.randn([])
    fn = lambda x: x.sin()
    t = torch.ones([])
    out, jvp_out = jvp(fn, (x,), (t,))
    return out, jvp_out, torch.allclose(jvp_out, x.cos())


def p_jacrev_has_aux(torch: Any) -> Any:
    x = torch.tensor(V)
    def f(x):
        y = x.sin()
        return y * 2, {"mean": y.mean(), "raw": y}
    j, aux = torch.func.jacrev(f, has_aux=True)(x)
    j2, aux2 = torch.func.jacfwd(f, has_aux=True)(x)
    return j, aux["mean"], aux["raw"], j2, aux2["mean"]


def p_jacrev_argnums_pytree(torch: Any) -> Any:
    def f(params, x):
        return (params["w"] @ x + params["b"]).tanh()
    p = {"w": torch.tensor(A), "b": torch.tensor(A[:, 0].copy())}
    j = torch.func.jacrev(f)(p, torch.tensor(V))
    jx = torch.func.jacrev(f, argnums=1)(p, torch.tensor(V))
    jf = torch.func.jacfwd(f, argnums=(0, 1))(p, torch.tensor(V))
    return j["w"], j["b"], jx, jf[0]["w"], jf[1]


def p_hessian_module_loss(torch: Any) -> Any:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    x = torch.randn(5, 3); y = torch.randn(5, 1)
    params = {k: v.detach() for k, v in model.named_parameters()}
    def loss(p):
        return torch.nn.functional.mse_loss(torch.func.functional_call(model, p, (x,)), y)
    H = torch.func.hessian(loss)(params)
    g = torch.func.grad(loss)(params)
    return H["0.weight"]["0.weight"].shape, H["2.bias"]["0.bias"], H["2.weight"]["2.weight"], g["0.bias"]


def p_af_jacobian_flags(torch: Any) -> Any:
    AF = torch.autograd.functional
    x = torch.tensor(V, requires_grad=True)
    j = AF.jacobian(lambda v: v ** 3, x, create_graph=True)
    s = j.sum(); s.backward()
    out = [j.requires_grad, x.grad]
    j2 = AF.jacobian(lambda v: v ** 3, x)
    out += [j2.requires_grad]
    try:
        AF.jacobian(lambda v: torch.ones(2), x, strict=True)
    except Exception as e:
        out.append((type(e).__name__, str(e)))
    out.append(AF.jacobian(lambda v: torch.ones(2, dtype=torch.float64), x))
    try:
        AF.jacobian(lambda v: torch.ones(2), x, strict=True, vectorize=True)
    except Exception as e:
        out.append((type(e).__name__, str(e)))
    return out


def p_af_vjp_jvp_hvp(torch: Any) -> Any:
    AF = torch.autograd.functional
    x = torch.tensor(V)
    f = lambda v: (v ** 3).sum()
    g = lambda v: v.exp() * v
    r = [AF.vjp(g, x, torch.ones(3, dtype=torch.float64)), AF.jvp(g, x, torch.ones(3, dtype=torch.float64)),
         AF.hvp(f, x, torch.ones(3, dtype=torch.float64)), AF.vhp(f, x, torch.ones(3, dtype=torch.float64)),
         AF.vjp(f, x), AF.hessian(f, x, create_graph=False)]
    r.append(AF.vjp(g, (x, ), (torch.ones(3, dtype=torch.float64),)))
    return r


def p_af_errors(torch: Any) -> Any:
    AF = torch.autograd.functional
    x = torch.tensor(V)
    out = []
    for c in (lambda: AF.vjp(lambda v: v * 2, x),
              lambda: AF.jvp(lambda v: v * 2, x, torch.ones(2)),
              lambda: AF.hessian(lambda v: v * 2, x),
              lambda: AF.jacobian(lambda v: v * 2, x, strategy="bad"),
              lambda: AF.jacobian(lambda v: 3.0, x),
              lambda: AF.hvp(lambda v: v, x, x),
              lambda: AF.jacobian(lambda v: v, [x]),
              lambda: AF.vjp(lambda v: v.sum(), x, torch.ones(2))):
        try:
            r = c(); out.append(("ok", r))
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    return out


def p_custom_fn_setup_context_vmap(torch: Any) -> Any:
    class MyCube(torch.autograd.Function):
        @staticmethod
        def forward(x):
            result = x ** 3
            dx = 3 * x ** 2
            return result, dx
        @staticmethod
        def setup_context(ctx, inputs, output):
            x, = inputs
            result, dx = output
            ctx.save_for_backward(x, dx)
        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            x, dx = ctx.saved_tensors
            result = grad_output * dx + grad_dx * 6 * x
            return result
        @staticmethod
        def vmap(info, in_dims, x):
            x_bdim, = in_dims
            return MyCube.apply(x), (x_bdim, x_bdim)
    def my_cube(x):
        result, _ = MyCube.apply(x)
        return result
    x = torch.tensor(A)
    ggx = torch.func.grad(torch.func.grad(my_cube))(torch.tensor(0.7, dtype=torch.float64))
    v = torch.vmap(my_cube)(x)
    vg = torch.vmap(torch.func.grad(my_cube))(torch.tensor(V))
    j = torch.func.jacrev(my_cube)(torch.tensor(V))
    return ggx, v, vg, j


def p_custom_fn_numpy_sort(torch: Any) -> Any:
    # tutorial: NumpySort with vmap staticmethod
    def to_numpy(t):
        return t.cpu().numpy()
    class NumpyTake(torch.autograd.Function):
        @staticmethod
        def forward(x, ind, ind_inv, dim):
            device = x.device
            x = to_numpy(x)
            ind = to_numpy(ind)
            return torch.tensor(np.take_along_axis(x, ind, dim), device=device)
        @staticmethod
        def setup_context(ctx, inputs, output):
            x, ind, ind_inv, dim = inputs
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim
        @staticmethod
        def backward(ctx, grad_output):
            ind, ind_inv = ctx.saved_tensors
            result = NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim)
            return result, None, None, None
        @staticmethod
        def vmap(info, in_dims, x, ind, ind_inv, dim):
            x_bdim, ind_bdim, ind_inv_bdim, _ = in_dims
            logical_dim = x.dim() if x_bdim is None else x_bdim - 1
            dim = dim if dim >= 0 else dim + logical_dim
            def maybe_expand_bdim_at_front(x, x_bdim):
                if x_bdim is None:
                    return x.expand(info.batch_size, *x.shape)
                return x.movedim(x_bdim, 0)
            x = maybe_expand_bdim_at_front(x, x_bdim)
            ind = maybe_expand_bdim_at_front(ind, ind_bdim)
            ind_inv = maybe_expand_bdim_at_front(ind_inv, ind_inv_bdim)
            return NumpyTake.apply(x, ind, ind_inv, dim + 1), 0
    class NumpySort(torch.autograd.Function):
        @staticmethod
        def forward(x, dim):
            device = x.device
            x = to_numpy(x)
            ind = np.argsort(x, axis=dim)
            ind_inv = np.argsort(ind, axis=dim)
            result = np.take_along_axis(x, ind, axis=dim)
            return (torch.tensor(result, device=device), torch.tensor(ind, device=device),
                    torch.tensor(ind_inv, device=device))
        @staticmethod
        def setup_context(ctx, inputs, output):
            x, dim = inputs
            _, ind, ind_inv = output
            ctx.mark_non_differentiable(ind, ind_inv)
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim
        @staticmethod
        def backward(ctx, grad_output, _0, _1):
            ind, ind_inv = ctx.saved_tensors
            return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None
        @staticmethod
        def vmap(info, in_dims, x, dim):
            x_bdim, _ = in_dims
            x = x.movedim(x_bdim, 0)
            dim = dim if dim >= 0 else dim + x.dim() - 1
            result = NumpySort.apply(x, dim + 1)
            return NumpySort.apply(x, dim + 1), (0, 0, 0)
    x = torch.tensor(A)
    result = torch.vmap(NumpySort.apply, in_dims=(0, None))(x, 0)
    gx = torch.func.grad(lambda v: (NumpySort.apply(v, 0)[0] * torch.arange(3.0, dtype=torch.float64)).sum())(torch.tensor(V))
    vg = torch.vmap(torch.func.grad(lambda v: (NumpySort.apply(v, 0)[0] * torch.arange(3.0, dtype=torch.float64)).sum()))(x)
    return result, gx, vg


def p_custom_fn_generate_vmap_rule_jvp(torch: Any) -> Any:
    class Exp(torch.autograd.Function):
        generate_vmap_rule = True
        @staticmethod
        def forward(x):
            return x.exp()
        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)
            ctx.save_for_forward(output)
        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y
        @staticmethod
        def jvp(ctx, t):
            y, = ctx.saved_tensors
            return t * y
    x = torch.tensor(A)
    return (torch.vmap(Exp.apply)(x), torch.func.jacfwd(Exp.apply)(torch.tensor(V)),
            torch.func.jacrev(Exp.apply)(torch.tensor(V)), torch.vmap(torch.func.jacfwd(Exp.apply))(x),
            torch.func.hessian(lambda v: Exp.apply(v).sum())(torch.tensor(V)))


def p_custom_fn_old_style_under_transform(torch: Any) -> Any:
    class Old(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2
        @staticmethod
        def backward(ctx, g):
            return g * 2
    out = []
    for c in (lambda: torch.func.grad(lambda v: Old.apply(v).sum())(torch.tensor(V)),
              lambda: torch.vmap(Old.apply)(torch.tensor(A))):
        try:
            out.append(c())
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    return out


def p_perturbation_confusion(torch: Any) -> Any:
    jvp = torch.func.jvp
    x = torch.tensor(1.0, dtype=torch.float64)
    one = torch.tensor(1.0, dtype=torch.float64)
    def f(x):
        def g(y):
            return x * y
        return jvp(g, (one,), (one,))[1]
    out1 = jvp(f, (x,), (one,))
    gg = torch.func.grad(lambda a: torch.func.grad(lambda b: a * b)(a))(x)
    # nested forward_ad levels confusion
    return out1, gg


def p_fwad_nested_jvp_hessian(torch: Any) -> Any:
    f = lambda x: (x.sin() * x).sum()
    x = torch.tensor(V)
    hvp = torch.func.jvp(torch.func.grad(f), (x,), (torch.ones(3, dtype=torch.float64),))
    fwd_over_fwd = torch.func.jacfwd(torch.func.jacfwd(f))(x)
    return hvp, fwd_over_fwd


def p_fwad_ops(torch: Any) -> Any:
    fwAD = fw(torch)
    x = torch.tensor(A)
    t = torch.ones_like(x)
    res = []
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        for fn in (lambda a: a.softmax(-1), lambda a: a @ a.T, lambda a: a.max(1).values, lambda a: a.norm(),
                   lambda a: torch.nn.functional.layer_norm(a, (3,)), lambda a: a.sort(1).values,
                   lambda a: a[1:, ::2], lambda a: a.cumsum(0), lambda a: torch.where(a > 0, a, a ** 2),
                   lambda a: a.var(0), lambda a: torch.linalg.det(a[:3]), lambda a: a.abs().pow(1.5),
                   lambda a: torch.nn.functional.gelu(a), lambda a: a.reshape(-1).topk(2).values):
            res.append(fwAD.unpack_dual(fn(d)).tangent)
    return res


def p_vmap_inplace(torch: Any) -> Any:
    b = torch.arange(6.0).reshape(2, 3)
    r = torch.vmap(lambda x: x.mul_(3))(b)
    c = torch.arange(6.0).reshape(2, 3)
    torch.vmap(lambda x: x.add_(1), in_dims=1)(c)
    x = torch.tensor(A)
    g = torch.vmap(torch.func.grad(lambda v: (v.clone().add_(1.0) ** 2).sum()))(x)
    y = torch.ones(3)
    errs = []
    for fn in (lambda v: y.add_(v), lambda v: y.mul_(v)):
        try:
            torch.vmap(fn)(torch.ones(2, 3))
        except Exception as e:  # noqa: BLE001 - the exception is the result
            errs.append((type(e).__name__, str(e)))
    return b, r, c, g, errs, y


def p_vmap_value_reading_ops(torch: Any) -> Any:
    F = torch.nn.functional
    r = np.random.default_rng(4)
    x = torch.tensor(r.standard_normal((3, 2, 4, 5)))
    i = torch.tensor(r.integers(0, 4, (3, 5)))
    w = torch.tensor(r.standard_normal((6, 4)))
    return (torch.vmap(lambda a: F.max_pool2d(a, 2, return_indices=True))(x),
            torch.vmap(lambda a: a.sort(-1))(x), torch.vmap(lambda a: a.topk(2, 0))(x),
            torch.vmap(lambda a: a.max(1))(x), torch.vmap(lambda a: torch.where(a > 0, a, 0.0))(x),
            torch.vmap(lambda a: a.masked_fill(a < 0, 1.0))(x),
            torch.vmap(lambda j: F.one_hot(j, 4))(i), torch.vmap(lambda j: F.embedding(j, w))(i),
            torch.vmap(lambda a, j: a[0].gather(1, j[None, :4].expand(2, 4)))(x, i),
            torch.vmap(lambda a, j: torch.zeros(2, 5, dtype=torch.float64).scatter_add(1, j[None].expand(2, 5),
                                                                   a[0, :, :5]))(x, i),
            torch.vmap(torch.func.grad(lambda a: F.adaptive_max_pool2d(a, 2).pow(2).sum()))(x))


def p_maml_per_sample(torch: Any) -> Any:
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    params = dict(model.named_parameters())
    x = torch.tensor(A, dtype=torch.float32); y = torch.ones(4, 1)
    def loss(p, xi, yi):
        return ((torch.func.functional_call(model, p, (xi,)) - yi) ** 2).sum()
    g = torch.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    (g["weight"] ** 2).sum().backward()
    return g["weight"].requires_grad, model.weight.grad, model.bias.grad


def p_ensemble_grad_outer(torch: Any) -> Any:
    torch.manual_seed(0)
    models = [torch.nn.Linear(3, 1) for _ in range(3)]
    params, buffers = torch.func.stack_module_state(models)
    base = models[0]
    x = torch.tensor(A, dtype=torch.float32); y = torch.ones(4, 1)
    def loss(p, b, x, y):
        return torch.nn.functional.mse_loss(torch.func.functional_call(base, (p, b), (x,)), y)
    g = torch.vmap(torch.func.grad(loss), in_dims=(0, 0, None, None))(params, buffers, x, y)
    (g["weight"] ** 2).sum().backward()
    return g["weight"].requires_grad, params["weight"].grad, params["bias"].grad


def p_maml_inner_loop(torch: Any) -> Any:
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    params = dict(model.named_parameters())
    x = torch.tensor(A, dtype=torch.float32); y = torch.ones(4, 1)
    def loss(p):
        return torch.nn.functional.mse_loss(torch.func.functional_call(model, p, (x,)), y)
    g = torch.func.grad(loss)(params)
    new = {k: params[k] - 0.1 * g[k] for k in params}
    outer = loss(new)
    outer.backward()
    return outer, model.weight.grad, model.bias.grad


def p_jacrev_outer(torch: Any) -> Any:
    w = torch.tensor(A, dtype=torch.float32, requires_grad=True)
    j = torch.func.jacrev(lambda v: (w @ v).tanh())(torch.ones(3))
    j.sum().backward()
    jf = torch.func.jacfwd(lambda v: (w @ v).tanh())(torch.ones(3))
    return j.requires_grad, w.grad, jf.requires_grad


def p_functional_call_features(torch: Any) -> Any:
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    x = torch.tensor(A, dtype=torch.float32)
    p = {k: torch.zeros_like(v) for k, v in m.named_parameters()}
    out = []
    out.append(torch.func.functional_call(m, p, (x,)))
    out.append(m[0].weight.sum())  # unchanged
    out.append(m[1].running_mean)
    try:
        torch.func.functional_call(m, {"nope": torch.zeros(1)}, (x,))
    except Exception as e:
        out.append((type(e).__name__, str(e)))
    try:
        torch.func.functional_call(m, p, (x,), strict=True)
    except Exception as e:
        out.append((type(e).__name__, str(e)))
    out.append(torch.func.functional_call(m[0], {"weight": torch.ones(2, 3)}, x))
    out.append(torch.func.functional_call(m[0], ({"weight": torch.ones(2, 3)}, {"bias": torch.ones(2)}), (x,)))
    try:
        torch.func.functional_call(m[0], ({"weight": torch.ones(2, 3)}, {"weight": torch.ones(2, 3)}), (x,))
    except Exception as e:
        out.append((type(e).__name__, str(e)))
    class K(torch.nn.Module):
        def __init__(self):
            super().__init__(); self.l = torch.nn.Linear(3, 1)
        def forward(self, x, scale=1.0):
            return self.l(x) * scale
    k = K()
    out.append(torch.func.functional_call(k, dict(k.named_parameters()), (x,), {"scale": 3.0}))
    return out


def p_saved_tensors_hooks(torch: Any) -> Any:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    packed = []
    def pack(t):
        packed.append(tuple(t.shape))
        return t * 1
    def unpack(t):
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x.sin() * x).sum()
    y.backward()
    g1 = x.grad.clone()
    x.grad = None
    with torch.autograd.graph.save_on_cpu():
        z = (x.exp() ** 2).sum()
    z.backward()
    return g1, len(packed), x.grad


def p_retain_grad_and_hooks(torch: Any) -> Any:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    h = []
    y.register_hook(lambda g: h.append(g.clone()))
    (y ** 2).sum().backward()
    return y.grad, h, x.grad, y.is_leaf, y.requires_grad


def p_jacrev_chunk(torch: Any) -> Any:
    x = torch.tensor(A, dtype=torch.float32)
    f = lambda v: (v @ v.T).tanh()
    return (torch.func.jacrev(f, chunk_size=3)(x), torch.func.jacrev(f, chunk_size=1)(x),
            torch.func.jacfwd(f, randomness="same")(x))


PROGRAMS = {name[2:]: fn for name, fn in sorted(globals().items()) if name.startswith("p_")}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_as_pytorch(name: str) -> None:
    compare(PROGRAMS[name], real, tt)
