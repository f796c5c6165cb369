"""Autograd semantics and error messages: the same programs on PyTorch and tapegrad.torch.

Each ``p_*`` function is one program; it gets the ``torch`` module and returns
values (tensors, flags, names) or raises.  Results, exception types and
messages (tapegrad's hint line stripped) and warnings must agree.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.torch_style.torch_harness import compare

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402

# ----------------------------------------------------------------------------- requires_grad / leaves


def p_requires_grad_forms(torch: Any) -> Any:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([1.0, 2.0])
    b.requires_grad = True
    c = torch.tensor([3.0]).requires_grad_()
    d = torch.zeros(2, requires_grad=True)
    e = a * 2
    return (a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad, e.requires_grad,
            a.is_leaf, e.is_leaf, torch.tensor(1.0).is_leaf, (b * 1).detach().is_leaf)


def p_int_requires_grad(torch: Any) -> Any:
    return torch.tensor([1, 2], requires_grad=True)


def p_int_requires_grad_attr(torch: Any) -> Any:
    t = torch.tensor([1, 2])
    t.requires_grad_()
    return t


def p_nonleaf_requires_grad_false(torch: Any) -> Any:
    a = torch.tensor([1.0], requires_grad=True)
    b = a * 2
    b.requires_grad = False
    return b


def p_grad_fn_names(torch: Any) -> Any:
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    ops = [x + 1, x - 1, x * 2, x / 2, x ** 2, -x, x @ x, x.sum(), x.sum(0), x.mean(),
           x.mean(1), x.exp(), x.log(), x.sqrt(), x.tanh(), x.sigmoid(), x.relu(), x.abs(),
           x.view(4), x.reshape(4), x.t(), x.T, x.permute(1, 0), x.transpose(0, 1), x[0],
           x[:, 1], x[0:1], x.unsqueeze(0), x.squeeze(), x.max(), x.max(1)[0], x.amax(0),
           torch.clamp(x, 0, 1), torch.cat([x, x]), torch.stack([x, x]), x.clone(),
           x.double(), x.var(), x.std(), x.logsumexp(1), x.prod(), x.cumsum(0),
           torch.maximum(x, x), torch.where(x > 1, x, x * 0), x.matmul(x[0]),
           x[0].dot(x[1]), x.expand(2, 2, 2), x.flip(0), x.sin(), x.square(), x.min(),
           x.flatten(), x.softmax(1), x.log_softmax(1), x.norm() if False else x.sum()]
    return [type(o.grad_fn).__name__ for o in ops] + [o.grad_fn.name() for o in ops[:5]]


def p_next_functions(torch: Any) -> Any:
    a = torch.tensor([1.0], requires_grad=True)
    c = torch.tensor([2.0])
    y = (a * c + a).sum()
    nf = y.grad_fn.next_functions
    add = nf[0][0]
    mul = add.next_functions[0][0]
    return (len(nf), nf[0][1], type(add).__name__, [type(n).__name__ for n, _ in add.next_functions],
            [(None if n is None else type(n).__name__, i) for n, i in mul.next_functions],
            add.next_functions[1][0].variable is a)


# ----------------------------------------------------------------------------- backward
def p_backward_accumulates_in_place(torch: Any) -> Any:
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    g = w.grad
    first = g.clone()
    (w * 3).sum().backward()
    return first, w.grad, w.grad is g


def p_backward_gradient_arg(torch: Any) -> Any:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    y.backward(torch.tensor([1.0, 0.1, 0.01]))
    return x.grad


def p_backward_nonscalar(torch: Any) -> Any:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x).backward()


def p_backward_twice(torch: Any) -> Any:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def p_backward_twice_retain(torch: Any) -> Any:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    return x.grad


def p_backward_twice_nothing_saved(torch: Any) -> Any:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    return x.grad


def p_backward_no_grad_fn(torch: Any) -> Any:
    torch.tensor([1.0, 2.0]).sum().backward()


def p_backward_inputs(torch: Any) -> Any:
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(3.0, requires_grad=True)
    (a * b).backward(inputs=[a])
    return a.grad, b.grad


def p_backward_create_graph(torch: Any) -> Any:
    x = torch.tensor(3.0, requires_grad=True)
    y = x ** 3
    y.backward(create_graph=True)
    g = x.grad
    gg = torch.autograd.grad(g, x)[0]
    return g.detach(), g.requires_grad, gg


def p_backward_gradient_shape(torch: Any) -> Any:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).backward(torch.ones(3))


def p_retain_grad(torch: Any) -> Any:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = (y * y).sum()
    z.backward()
    return y.grad, y.retains_grad, x.grad


def p_nonleaf_grad_warning(torch: Any) -> Any:
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    (y * y).sum().backward()
    return y.grad


def p_leaf_grad_none_before(torch: Any) -> Any:
    x = torch.tensor([1.0], requires_grad=True)
    return x.grad


# ----------------------------------------------------------------------------- autograd.grad
def p_grad_tuple(torch: Any) -> Any:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    r = torch.autograd.grad((a * b).sum(), [a, b])
    return type(r).__name__, r, a.grad


def p_grad_several_outputs(torch: Any) -> Any:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    return torch.autograd.grad([(a * a).sum(), (3 * a).sum()], a)


def p_grad_outputs(torch: Any) -> Any:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    return torch.autograd.grad(a * a, a, grad_outputs=torch.tensor([1.0, -1.0]))


def p_grad_unused(torch: Any) -> Any:
    a = torch.tensor(1.0, requires_grad=True)
    b = torch.tensor(1.0, requires_grad=True)
    return torch.autograd.grad(a * 2, [a, b])


def p_grad_allow_unused(torch: Any) -> Any:
    a = torch.tensor(1.0, requires_grad=True)
    b = torch.tensor(1.0, requires_grad=True)
    return torch.autograd.grad(a * 2, [a, b], allow_unused=True)


def p_grad_materialize(torch: Any) -> Any:
    a = torch.tensor(1.0, requires_grad=True)
    b = torch.tensor([1.0, 2.0], requires_grad=True)
    return torch.autograd.grad(a * 2, [a, b], materialize_grads=True)


def p_grad_input_not_requiring(torch: Any) -> Any:
    a = torch.tensor(1.0, requires_grad=True)
    b = torch.tensor(1.0)
    return torch.autograd.grad(a * b, [b])


def p_grad_create_graph_third_order(torch: Any) -> Any:
    x = torch.tensor(1.5, requires_grad=True)
    y = torch.sin(x) * x ** 3
    g1 = torch.autograd.grad(y, x, create_graph=True)[0]
    g2 = torch.autograd.grad(g1, x, create_graph=True)[0]
    g3 = torch.autograd.grad(g2, x)[0]
    return g1, g2, g3


def p_autograd_backward(torch: Any) -> Any:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    torch.autograd.backward([(a * a).sum(), a * 3], [None, torch.tensor([1.0, 1.0])])
    return a.grad


# ----------------------------------------------------------------------------- grad mode
def p_grad_modes(torch: Any) -> Any:
    x = torch.tensor([1.0], requires_grad=True)
    with torch.no_grad():
        a = x * 2
        with torch.enable_grad():
            b = x * 2
    with torch.set_grad_enabled(False):
        c = x * 2
    d = x * 2
    torch.set_grad_enabled(False)
    e = x * 2
    torch.set_grad_enabled(True)
    with torch.inference_mode():
        f = x * 2
        inside = torch.is_grad_enabled()

    @torch.no_grad()
    def deco(t: Any) -> Any:
        return t * 2

    @torch.enable_grad()
    def deco2(t: Any) -> Any:
        return t * 2

    with torch.no_grad():
        h = deco2(x)
    return (a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad,
            e.requires_grad, f.requires_grad, inside, deco(x).requires_grad, h.requires_grad,
            torch.is_grad_enabled())


def p_inference_tensor_saved(torch: Any) -> Any:
    w = torch.tensor([2.0], requires_grad=True)
    with torch.inference_mode():
        x = torch.ones(1) * 3
    return w * x


def p_inference_tensor_inplace(torch: Any) -> Any:
    with torch.inference_mode():
        x = torch.ones(1)
    x.add_(1)


def p_detach(torch: Any) -> Any:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    d2 = (x * 3).detach_()
    d[0] = 10.0
    return d.requires_grad, d.is_leaf, d2.requires_grad, d2.grad_fn is None, y


# ----------------------------------------------------------------------------- hooks
def p_hooks(torch: Any) -> Any:
    seen = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x.register_hook(lambda g: seen.append(g.clone()))
    h2 = x.register_hook(lambda g: g * 10)
    (x * x).sum().backward()
    first = x.grad.clone()
    h.remove()
    h2.remove()
    x.grad = None
    (x * x).sum().backward()
    y = x * 1
    y.register_hook(lambda g: g + 1)
    (y * 2).sum().backward()
    return seen, first, x.grad, len(seen)


def p_hook_no_grad(torch: Any) -> Any:
    torch.tensor([1.0]).register_hook(lambda g: g)


# ----------------------------------------------------------------------------- in place
def p_inplace_leaf(torch: Any) -> Any:
    a = torch.tensor([1.0], requires_grad=True)
    a.add_(1)


def p_inplace_leaf_iadd(torch: Any) -> Any:
    a = torch.tensor([1.0], requires_grad=True)
    a += 1


def p_inplace_leaf_setitem(torch: Any) -> Any:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    a[0] = 5.0


def p_inplace_no_grad_ok(torch: Any) -> Any:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        a.mul_(2)
        a -= 1
        a[0] = 7.0
    return a, a.is_leaf


def p_inplace_version_error(torch: Any) -> Any:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    c = b * b
    b.add_(1)
    c.sum().backward()


def p_inplace_version_error_output(torch: Any) -> Any:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a.exp()
    b.add_(1)
    b.sum().backward()


def p_inplace_ok_grad(torch: Any) -> Any:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    b.mul_(3)
    b.pow_(2)
    b[0] = b[0] * 2
    b.sum().backward()
    return a.grad, type(b.grad_fn).__name__, b._version


def p_inplace_ops_values(torch: Any) -> Any:
    a = torch.tensor([1.0, -2.0, 3.0])
    a.add_(1).sub_(0.5).mul_(2).div_(4)
    b = a.clone().clamp_(0, 1)
    c = a.clone().zero_()
    d = a.clone().fill_(7)
    e = torch.zeros(3).copy_(a)
    f = torch.ones(2, 3)
    f[0, 1] = 5
    f[1] = torch.tensor([1.0, 2.0, 3.0])
    f[f > 2] = 0
    return a, b, c, d, e, f


def p_inplace_dtype_error(torch: Any) -> Any:
    a = torch.tensor([1, 2])
    a += 1.5


def p_setitem_makes_nonleaf(torch: Any) -> Any:
    w = torch.tensor(2.0, requires_grad=True)
    x = torch.zeros(3)
    x[1] = w * 3
    x.sum().backward()
    return type(x.grad_fn).__name__, w.grad, x.is_leaf


# ----------------------------------------------------------------------------- failure leaves .grad
def p_failed_backward_leaves_grad(torch: Any) -> Any:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    (a * 2).sum().backward()
    before = a.grad.clone()
    b = a * 1
    c = b * b
    b.add_(1)
    try:
        c.sum().backward()
    except RuntimeError:
        pass
    return before, a.grad


# ----------------------------------------------------------------------------- numpy / item
def p_numpy_requires_grad(torch: Any) -> Any:
    return torch.tensor([1.0], requires_grad=True).numpy()


def p_item_many(torch: Any) -> Any:
    return torch.tensor([1.0, 2.0]).item()


def p_numpy_ok(torch: Any) -> Any:
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    return (t.detach().numpy().tolist(), t.tolist(), t.sum().item(), float(t[0].detach()),
            int(t[1]))


# ----------------------------------------------------------------------------- dtype / errors
def p_dtype_matmul(torch: Any) -> Any:
    return torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64)


def p_matmul_shapes(torch: Any) -> Any:
    return torch.ones(2, 3) @ torch.ones(2, 3)


def p_broadcast_error(torch: Any) -> Any:
    return torch.ones(2, 3) + torch.ones(3, 2)


def p_reshape_error(torch: Any) -> Any:
    return torch.ones(2, 3).view(4)


def p_dim_error(torch: Any) -> Any:
    return torch.ones(2, 3).sum(dim=2)


def p_index_error(torch: Any) -> Any:
    return torch.ones(2)[5]


def p_mean_int(torch: Any) -> Any:
    return torch.tensor([1, 2]).mean()


def p_cat_error(torch: Any) -> Any:
    return torch.cat([torch.ones(2, 3), torch.ones(2, 2)])


def p_ragged(torch: Any) -> Any:
    return torch.tensor([[1, 2], [3]])


def p_bad_data(torch: Any) -> Any:
    return torch.tensor("abc")


def p_linear_dtype(torch: Any) -> Any:
    torch.manual_seed(0)
    return torch.nn.Linear(2, 3)(torch.ones(4, 2, dtype=torch.float64))


def p_linear_shape(torch: Any) -> Any:
    torch.manual_seed(0)
    return torch.nn.Linear(2, 3)(torch.ones(4, 3))


def p_cross_entropy_target(torch: Any) -> Any:
    return torch.nn.functional.cross_entropy(torch.zeros(2, 3), torch.tensor([0, 3]))


def p_cross_entropy_float_target(torch: Any) -> Any:
    return torch.nn.functional.cross_entropy(torch.zeros(2, 3), torch.tensor([0.0, 1.0]))


def p_mse_size_warning(torch: Any) -> Any:
    return torch.nn.functional.mse_loss(torch.zeros(2, 3), torch.ones(3))


def p_optim_errors(torch: Any) -> Any:
    w = torch.tensor([1.0], requires_grad=True)
    out = []
    for make in (lambda: torch.optim.SGD([w], lr=-0.1),
                 lambda: torch.optim.SGD([w], lr=0.1, momentum=-1),
                 lambda: torch.optim.SGD([w], lr=0.1, weight_decay=-1),
                 lambda: torch.optim.SGD([w], lr=0.1, nesterov=True),
                 lambda: torch.optim.Adam([w], lr=-1),
                 lambda: torch.optim.Adam([w], betas=(1.0, 0.9)),
                 lambda: torch.optim.Adam([w], betas=(0.9, -0.1)),
                 lambda: torch.optim.Adam([w], eps=-1.0),
                 lambda: torch.optim.AdamW([w], weight_decay=-1.0),
                 lambda: torch.optim.SGD([], lr=0.1),
                 lambda: torch.optim.SGD(w, lr=0.1),
                 lambda: torch.optim.SGD([w * 2], lr=0.1)):
        try:
            make()
            out.append("ok")
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e)))
    return out


# ----------------------------------------------------------------------------- Function
def _square_fn(torch: Any) -> Any:
    class MySquare(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, k: float) -> Any:
            ctx.save_for_backward(x)
            ctx.k = k
            return x * x * k

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 2 * x * g * ctx.k, None

    return MySquare


def p_function_basic(torch: Any) -> Any:
    F = _square_fn(torch)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = F.apply(x, 3.0)
    y.sum().backward()
    return (y, x.grad, type(y.grad_fn).__name__, y.grad_fn.name(),
            [type(n).__name__ for n, _ in y.grad_fn.next_functions])


def p_function_needs_input_grad(torch: Any) -> Any:
    seen = []

    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any, b: Any) -> Any:
            seen.append(ctx.needs_input_grad)
            return a * b

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g, g

    F.apply(torch.tensor(1.0, requires_grad=True), torch.tensor(2.0))
    return seen


def p_function_double_backward(torch: Any) -> Any:
    F = _square_fn(torch)
    x = torch.tensor(3.0, requires_grad=True)
    y = F.apply(x, 1.0)
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (gg,) = torch.autograd.grad(g, x)
    return g, gg


def p_function_second_backward(torch: Any) -> Any:
    F = _square_fn(torch)
    x = torch.tensor([1.0], requires_grad=True)
    y = F.apply(x, 1.0).sum()
    y.backward()
    y.backward()


def p_function_wrong_count(torch: Any) -> Any:
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g, g

    Bad.apply(torch.tensor([1.0], requires_grad=True)).sum().backward()


def p_function_wrong_shape(torch: Any) -> Any:
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g[:1]

    Bad.apply(torch.tensor([1.0, 2.0], requires_grad=True)).sum().backward()


def p_function_multi_output(torch: Any) -> Any:
    class Two(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2, x * 3

        @staticmethod
        def backward(ctx: Any, g1: Any, g2: Any) -> Any:
            return g1 * 2 + g2 * 3

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a, b = Two.apply(x)
    (a.sum() + 10 * b.sum()).backward()
    x2 = torch.tensor([1.0, 2.0], requires_grad=True)
    a2, _ = Two.apply(x2)
    a2.sum().backward()
    return a, b, x.grad, x2.grad, type(a.grad_fn).__name__


def p_function_no_grad(torch: Any) -> Any:
    F = _square_fn(torch)
    with torch.no_grad():
        y = F.apply(torch.tensor([1.0], requires_grad=True), 2.0)
    return y, y.grad_fn is None


def p_function_setup_context(torch: Any) -> Any:
    class Mul(torch.autograd.Function):
        @staticmethod
        def forward(a: Any, b: Any) -> Any:
            return a * b

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            a, b = ctx.saved_tensors
            return g * b, g * a

    a = torch.tensor([2.0], requires_grad=True)
    b = torch.tensor([5.0], requires_grad=True)
    Mul.apply(a, b).sum().backward()
    return a.grad, b.grad


# ----------------------------------------------------------------------------- gradcheck / functional
def p_gradcheck_ok(torch: Any) -> Any:
    x = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([1.5, 0.5, -0.7], dtype=torch.float64, requires_grad=True)
    return torch.autograd.gradcheck(lambda a, b: (a * b).sin() + a.exp() / (1 + b ** 2), (x, y))


def p_gradcheck_bad(torch: Any) -> Any:
    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 3.0

    x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
    return torch.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)


def p_gradgradcheck(torch: Any) -> Any:
    x = torch.tensor([0.3, -1.2], dtype=torch.float64, requires_grad=True)
    return torch.autograd.gradgradcheck(lambda a: (a ** 3).sum() * a.sin(), (x,))


def p_functional(torch: Any) -> Any:
    from_ = torch.autograd.functional
    f = lambda x: x ** 2 * x.sum()  # noqa: E731
    x = torch.tensor([1.0, 2.0, 3.0])
    v = torch.tensor([1.0, -1.0, 0.5])
    s = lambda x: (x ** 3).sum() + x.prod()  # noqa: E731
    return (from_.jacobian(f, x), from_.hessian(s, x), from_.vjp(f, x, v), from_.jvp(f, x, v),
            from_.hvp(s, x, v), from_.vhp(s, x, v),
            from_.jacobian(lambda a, b: (a * b, a + b), (x, v)),
            from_.hessian(lambda a, b: (a * b * b).sum(), (x, v)))


def p_functional_errors(torch: Any) -> Any:
    from_ = torch.autograd.functional
    out = []
    for fn in (lambda: from_.vjp(lambda x: x * 2, torch.ones(2)),
               lambda: from_.jacobian(lambda x: torch.ones(2), torch.ones(2), strict=True)):
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e)))
    return out


def p_detect_anomaly(torch: Any) -> Any:
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    with torch.autograd.detect_anomaly():
        y = (torch.sqrt(x) * 0.0).sum()
        try:
            y.backward()
        except RuntimeError as e:
            return str(e).splitlines()[0]
    return "no error"


# ----------------------------------------------------------------------------- printing
def p_printing(torch: Any) -> Any:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    return [repr(x), str(x * 2), repr((x * 2).sum()), f"{x.sum().detach()}", repr(torch.tensor(5.0)),
            repr(torch.tensor([1, 2])), repr(torch.tensor([1.5, 2])), repr(torch.tensor([True])),
            repr(torch.zeros(2, dtype=torch.float64)), repr(torch.zeros(2, dtype=torch.float16)),
            repr(torch.tensor(3, dtype=torch.int32)), repr(torch.tensor([1e-5, 1.0])),
            repr(torch.tensor([1e10, 1.0])), repr(torch.tensor([math.nan, 1.0])),
            repr(torch.tensor([math.inf, 1.5])), repr(torch.arange(2000.0)), repr(torch.tensor([])),
            repr(torch.zeros(0, 3)), repr(torch.tensor([[1.123456, 2], [3, 4]],
                                                           dtype=torch.float64)),
            repr(torch.tensor([-0.0, 1.5])), repr(torch.arange(24.0).reshape(2, 3, 4) / 7),
            repr(torch.float32), str(torch.int64), repr(torch.zeros(2, 3).shape),
            repr(torch.nn.Parameter(torch.tensor([1.0]))), repr(torch.tensor([[1, 2], [3, 4]]) > 2),
            repr(torch.linspace(0, 1, 30)), repr(torch.tensor([123456789.0])),
            repr(torch.tensor([0.0001])), repr(torch.ones(3, requires_grad=True) * 2),
            f"{torch.tensor(0.1)}", f"{torch.tensor(3)}", f"{torch.tensor(2.5):.3f}",
            repr(torch.tensor([1, 2], dtype=torch.uint8))]


def p_max_dim_repr(torch: Any) -> Any:
    x = torch.tensor([[1.0, 5.0], [7.0, 2.0]], requires_grad=True)
    r = x.max(dim=1)
    return repr(r), r.values, r.indices, r[0], torch.min(x, 0).indices


PROGRAMS = {name: fn for name, fn in sorted(globals().items()) if name.startswith("p_")}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(name: str) -> None:
    compare(PROGRAMS[name], real, tt)


def test_program_count() -> None:
    assert len(PROGRAMS) >= 80
