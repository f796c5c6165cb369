"""Autograd semantics of tapegrad.torch (issue item 3), with values PyTorch gives."""

from __future__ import annotations

import gc
import threading
import warnings
import weakref
from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch
from tapegrad.testing import gradcheck as tg_gradcheck


# ----------------------------------------------------------------------------- requires_grad
def test_requires_grad_forms_and_leaves() -> None:
    a = torch.tensor([1.0], requires_grad=True)
    b = torch.tensor([1.0])
    b.requires_grad = True
    c = torch.tensor([1.0]).requires_grad_()
    y = a * b * c
    assert a.requires_grad and b.requires_grad and c.requires_grad and y.requires_grad
    assert a.is_leaf and not y.is_leaf and torch.tensor(1.0).is_leaf
    assert y.detach().is_leaf and not y.detach().requires_grad
    assert torch.tensor([1.0]).requires_grad_(False).requires_grad is False


def test_grad_fn_names_and_next_functions() -> None:
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    expected = {
        "AddBackward0": x + 1, "SubBackward0": x - 1, "MulBackward0": x * 2,
        "DivBackward0": x / 2, "PowBackward0": x ** 2, "NegBackward0": -x,
        "MmBackward0": x @ x, "SumBackward0": x.sum(), "SumBackward1": x.sum(0),
        "MeanBackward0": x.mean(), "MeanBackward1": x.mean(1), "ExpBackward0": x.exp(),
        "TanhBackward0": x.tanh(), "SigmoidBackward0": x.sigmoid(), "ReluBackward0": x.relu(),
        "ViewBackward0": x.view(4), "TBackward0": x.t(), "PermuteBackward0": x.permute(1, 0),
        "TransposeBackward0": x.transpose(0, 1), "SelectBackward0": x[:, 0],
        "SliceBackward0": x[0:1], "UnsqueezeBackward0": x.unsqueeze(0),
        "MaxBackward0": x.max(dim=1).values, "MaxBackward1": x.max(),
        "AmaxBackward0": x.amax(0), "ClampBackward1": x.clamp(0, 1),
        "CatBackward0": torch.cat([x, x]), "StackBackward0": torch.stack([x, x]),
        "VarBackward0": x.var(), "StdBackward0": x.std(), "SoftmaxBackward0": x.softmax(1),
        "LogSoftmaxBackward0": x.log_softmax(1), "LogsumexpBackward0": x.logsumexp(1),
        "IndexBackward0": x[[0, 1]], "ExpandBackward0": x.expand(2, 2, 2),
        "ToCopyBackward0": x.double(), "CloneBackward0": x.clone(),
        "MvBackward0": x.mv(x[0]), "DotBackward0": x[0].dot(x[1]),
        "WhereBackward0": torch.where(x > 1, x, 0.0), "MaximumBackward0": torch.maximum(x, x),
    }
    for name, t in expected.items():
        assert type(t.grad_fn).__name__ == name
        assert t.grad_fn.name() == name
    y = (x * torch.tensor(2.0) + x).sum()
    add = y.grad_fn.next_functions[0][0]
    assert type(add).__name__ == "AddBackward0"
    mul = add.next_functions[0][0]
    assert [None if n is None else type(n).__name__ for n, _ in mul.next_functions] == \
        ["AccumulateGrad", None]
    assert add.next_functions[1][0].variable is x


# ----------------------------------------------------------------------------- backward
def test_backward_accumulates_in_place_same_object() -> None:
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    g = w.grad
    assert g.tolist() == [2.0, 4.0]
    (w * 3).sum().backward()
    assert w.grad is g and g.tolist() == [5.0, 7.0]


def test_backward_gradient_and_inputs() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x).backward(torch.tensor([1.0, 0.5]))
    assert x.grad.tolist() == [2.0, 2.0]
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(3.0, requires_grad=True)
    (a * b).backward(inputs=[a])
    assert a.grad.item() == 3.0 and b.grad is None


def test_retain_graph_and_nothing_saved() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]
    z = (x + 1).sum()  # saves nothing: can be backwarded twice, as in PyTorch
    z.backward()
    z.backward()


def test_create_graph_backward_makes_grad_differentiable() -> None:
    x = torch.tensor(3.0, requires_grad=True)
    with pytest.warns(UserWarning, match="Using backward\\(\\) with create_graph=True"):
        (x ** 3).backward(create_graph=True)
    assert x.grad.item() == 27.0 and x.grad.requires_grad
    (gg,) = torch.autograd.grad(x.grad, x)
    assert gg.item() == 18.0


def test_retain_grad_and_nonleaf_warning() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = x * 3
    (y * y + z).sum().backward()
    assert y.grad.tolist() == [4.0, 8.0] and y.retains_grad
    with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf "
                      "Tensor is being accessed"):
        assert z.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is not None  # no warning for leaves


def test_leaf_grad_assignment_checks() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.grad = torch.tensor([1.0, 1.0])
    with pytest.raises(RuntimeError, match="assigned grad has data of a different size"):
        x.grad = torch.tensor([1.0])
    with pytest.raises(RuntimeError, match="assigned grad has data of a different type"):
        x.grad = torch.tensor([1.0, 1.0], dtype=torch.float64)
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None"):
        x.grad = 3  # type: ignore[assignment]
    x.grad = None


# ----------------------------------------------------------------------------- autograd.grad
def test_autograd_grad_forms() -> None:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    r = torch.autograd.grad((a * b).sum(), [a, b])
    assert isinstance(r, tuple) and r[0].tolist() == [3.0, 4.0] and r[1].tolist() == [1.0, 2.0]
    assert a.grad is None  # .grad untouched
    (g,) = torch.autograd.grad([(a * a).sum(), (3 * a).sum()], a)  # several outputs: summed
    assert g.tolist() == [5.0, 7.0]
    (g,) = torch.autograd.grad(a * a, a, grad_outputs=torch.tensor([1.0, -1.0]))
    assert g.tolist() == [2.0, -4.0]
    c = torch.tensor(1.0, requires_grad=True)
    assert torch.autograd.grad((a * 2).sum(), [a, c], allow_unused=True)[1] is None
    assert torch.autograd.grad((a * 2).sum(), [c], materialize_grads=True)[0].item() == 0.0


def test_autograd_grad_higher_order() -> None:
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x * x
    (d1,) = torch.autograd.grad(y, x, create_graph=True)
    (d2,) = torch.autograd.grad(d1, x, create_graph=True)
    (d3,) = torch.autograd.grad(d2, x)
    assert (d1.item(), d2.item(), d3.item()) == (12.0, 12.0, 6.0)
    assert not d3.requires_grad


def test_autograd_backward_function() -> None:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    torch.autograd.backward([(a * a).sum(), a * 3], [None, torch.tensor([1.0, 1.0])])
    assert a.grad.tolist() == [5.0, 7.0]


# ----------------------------------------------------------------------------- grad modes
def test_grad_mode_context_managers_and_decorators() -> None:
    x = torch.tensor([1.0], requires_grad=True)
    with torch.no_grad():
        assert not (x * 2).requires_grad
        with torch.enable_grad():
            assert (x * 2).requires_grad
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert torch.is_grad_enabled()

    @torch.no_grad()
    def f(t: Any) -> Any:
        return t * 2

    @torch.inference_mode()
    def g(t: Any) -> Any:
        return t * 2

    assert not f(x).requires_grad and not g(x).requires_grad and torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        torch.set_grad_enabled(True)


def test_grad_mode_is_thread_local() -> None:
    x = torch.tensor([1.0], requires_grad=True)
    seen: list[bool] = []
    with torch.no_grad():
        t = threading.Thread(target=lambda: seen.append((x * 2).requires_grad))
        t.start()
        t.join()
    assert seen == [True]


def test_inference_mode_tensors() -> None:
    w = torch.tensor([2.0], requires_grad=True)
    with torch.inference_mode():
        x = torch.ones(1) * 3
        y = torch.zeros(1)
        assert torch.is_inference_mode_enabled()
        y.add_(1)  # allowed inside
    assert torch.is_inference(x) and not torch.is_inference(w)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        w * x
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside "
                       "InferenceMode is not allowed"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor"):
        x.requires_grad_()
    assert (w + x).tolist() == [5.0]  # add saves nothing: allowed, as in PyTorch
    z = x.clone()
    assert not torch.is_inference(z)
    (w * z).sum().backward()
    assert w.grad.item() == 3.0


def test_detach_and_detach_() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    d[0] = 10.0  # shares storage
    assert y.tolist()[0] == 10.0 and not d.requires_grad
    z = x * 3
    z.detach_()
    assert z.grad_fn is None and not z.requires_grad and z.is_leaf


# ----------------------------------------------------------------------------- hooks
def test_tensor_hooks_and_handles() -> None:
    seen: list[Any] = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h1 = x.register_hook(lambda g: seen.append(g.clone()))
    h2 = x.register_hook(lambda g: g * 10)
    (x * x).sum().backward()
    assert x.grad.tolist() == [20.0, 40.0]
    assert repr(seen[0]) == "tensor([2., 4.])"  # hooks see PyTorch-style tensors
    h1.remove()
    h2.remove()
    x.grad = None
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0] and len(seen) == 1
    y = x * 1
    y.register_hook(lambda g: g + 1)
    x.grad = None
    (y * 2).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                       "require gradient"):
        torch.tensor([1.0]).register_hook(lambda g: g)


# ----------------------------------------------------------------------------- in place
def test_inplace_semantics() -> None:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    v0 = b._version
    b.mul_(3)
    assert b._version == v0 + 1 and type(b.grad_fn).__name__ == "MulBackward0"
    b.pow_(2)
    b[0] = b[0] * 2
    b.sum().backward()
    assert a.grad.tolist() == [36.0, 36.0]


def test_inplace_ops_values() -> None:
    a = torch.tensor([1.0, -2.0, 3.0])
    r = a.add_(1).sub_(0.5).mul_(2).div_(4)
    assert r is a and a.tolist() == [0.75, -0.75, 1.75]
    assert a.clone().clamp_(0, 1).tolist() == [0.75, 0.0, 1.0]
    assert a.clone().zero_().tolist() == [0.0, 0.0, 0.0]
    assert a.clone().fill_(7).tolist() == [7.0, 7.0, 7.0]
    assert torch.zeros(3).copy_(a).tolist() == a.tolist()
    f = torch.ones(2, 3)
    f[0, 1] = 5
    f[1] = torch.tensor([1.0, 2.0, 3.0])
    f[f > 2] = 0
    assert f.tolist() == [[1.0, 0.0, 1.0], [1.0, 2.0, 0.0]]
    g = torch.tensor([1, 2])
    g += 3
    assert g.tolist() == [4, 5] and g.dtype is torch.int64
    h = torch.tensor([1.0, 2.0])
    h -= torch.tensor([1, 1])
    assert h.tolist() == [0.0, 1.0] and h.dtype is torch.float32


def test_setitem_records() -> None:
    w = torch.tensor(2.0, requires_grad=True)
    x = torch.zeros(3)
    x[1] = w * 3
    assert type(x.grad_fn).__name__ == "CopySlices" and not x.is_leaf
    x.sum().backward()
    assert w.grad.item() == 3.0


def test_seed_style_update_under_no_grad() -> None:
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    with torch.no_grad():
        w -= w.grad * 0.1
        w.grad.zero_()
    assert w.is_leaf and w.requires_grad
    assert np.allclose(w.detach().numpy(), [0.8, 1.6]) and w.grad.tolist() == [0.0, 0.0]
    w.data -= 1.0  # .data shares storage, outside the graph
    assert np.allclose(w.tolist(), [-0.2, 0.6])


# ----------------------------------------------------------------------------- Function
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


def test_function_apply_and_names() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = MySquare.apply(x, 3.0)
    assert repr(y) == "tensor([ 3., 12.], grad_fn=<MySquareBackward>)"
    assert type(y.grad_fn).__name__ == "MySquareBackward"
    assert [type(n).__name__ for n, _ in y.grad_fn.next_functions] == ["AccumulateGrad"]
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()


def test_function_double_backward_and_no_grad() -> None:
    x = torch.tensor(3.0, requires_grad=True)
    (g,) = torch.autograd.grad(MySquare.apply(x, 1.0), x, create_graph=True)
    (gg,) = torch.autograd.grad(g, x)
    assert (g.item(), gg.item()) == (6.0, 2.0)
    with torch.no_grad():
        y = MySquare.apply(x, 2.0)
    assert y.grad_fn is None and not y.requires_grad


def test_function_needs_input_grad_and_checks() -> None:
    seen = []

    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any, b: Any) -> Any:
            seen.append(ctx.needs_input_grad)
            return a * b

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    a = torch.tensor([1.0], requires_grad=True)
    out = F.apply(a, torch.tensor([2.0]))
    assert seen == [(True, False)]
    with pytest.raises(RuntimeError, match=r"function FBackward returned an incorrect number of "
                       r"gradients \(expected 2, got 1\)"):
        out.sum().backward()

    class G(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g[:1]

    with pytest.raises(RuntimeError, match=r"Function GBackward returned an invalid gradient at "
                       r"index 0 - got \[1\] but expected shape compatible with \[2\]"):
        G.apply(torch.tensor([1.0, 2.0], requires_grad=True)).sum().backward()


def test_function_multi_output_and_setup_context() -> None:
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
    assert x.grad.tolist() == [32.0, 32.0] and type(a.grad_fn).__name__ == "TwoBackward"

    class Mul(torch.autograd.Function):
        @staticmethod
        def forward(p: Any, q: Any) -> Any:
            return p * q

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            p, q = ctx.saved_tensors
            return g * q, g * p

    p = torch.tensor([2.0], requires_grad=True)
    q = torch.tensor([5.0], requires_grad=True)
    Mul.apply(p, q).sum().backward()
    assert (p.grad.item(), q.grad.item()) == (5.0, 2.0)


def test_function_instantiation_is_legacy() -> None:
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        f = MySquare()
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        f(torch.tensor([1.0]), 1.0)


def test_function_saved_tensor_version_check() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = MySquare.apply(h, 1.0)
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# ----------------------------------------------------------------------------- gradcheck, functional
def test_gradcheck_and_gradgradcheck() -> None:
    x = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([1.5, 0.5, -0.7], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: (a * b).sin() + a.exp() / (1 + b ** 2), (x, y))
    assert torch.autograd.gradgradcheck(lambda a: (a ** 3).sum() * a.sin(), (x,))

    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, t: Any) -> Any:
            return t * t

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 3.0

    assert torch.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False) is False
    with pytest.raises(torch.autograd.GradcheckError, match="Jacobian mismatch for output 0 "
                       "with respect to input 0"):
        torch.autograd.gradcheck(Wrong.apply, (x,))
    with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to "
                       "require gradient"):
        torch.autograd.gradcheck(lambda t: t * 2, (torch.ones(2, dtype=torch.float64),))


def test_functional_api() -> None:
    F = torch.autograd.functional
    x = torch.tensor([1.0, 2.0, 3.0])
    v = torch.tensor([1.0, -1.0, 0.5])
    f = lambda t: t ** 2  # noqa: E731
    s = lambda t: (t ** 3).sum()  # noqa: E731
    assert F.jacobian(f, x).tolist() == [[2.0, 0, 0], [0, 4.0, 0], [0, 0, 6.0]]
    assert F.hessian(s, x).tolist() == [[6.0, 0, 0], [0, 12.0, 0], [0, 0, 18.0]]
    out, vj = F.vjp(f, x, v)
    assert out.tolist() == [1.0, 4.0, 9.0] and vj.tolist() == [2.0, -4.0, 3.0]
    _, jv = F.jvp(f, x, v)
    assert jv.tolist() == [2.0, -4.0, 3.0]
    val, hv = F.hvp(s, x, v)
    assert val.item() == 36.0 and hv.tolist() == [6.0, -12.0, 9.0]
    assert F.vhp(s, x, v)[1].tolist() == [6.0, -12.0, 9.0]
    ja, jb = F.jacobian(lambda a, b: a * b, (x, v))
    assert ja.tolist() == np.diag(v.tolist()).tolist() and jb.tolist() == np.diag(x.tolist()).tolist()
    assert not x.requires_grad  # the caller's tensors are untouched
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided "
                       "function returns a single Tensor with a single element."):
        F.vjp(f, x)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not "
                       "require gradients"):
        F.jacobian(lambda t: torch.ones(2), x, strict=True)


def test_detect_anomaly_names_op_and_line() -> None:
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning):
        with torch.autograd.detect_anomaly():
            y = (torch.sqrt(x) * 0.0).sum()  # the line to be named
            with pytest.raises(RuntimeError) as info:
                y.backward()
    msg = str(info.value)
    assert msg.startswith("Function 'SqrtBackward0' returned nan values in its 0th output.")
    assert msg == "Function 'SqrtBackward0' returned nan values in its 0th output."
    note = getattr(info.value, "__notes__", [])[0]   # the hint names the forward line
    assert "test_torch_autograd.py" in note and "torch.sqrt(x) * 0.0" in note
    assert not torch.autograd.is_anomaly_enabled()
    x.grad = None
    (torch.sqrt(x) * 0.0).sum().backward()  # off again: NaN gradients are returned
    assert np.isnan(x.grad.numpy()[0])


# ----------------------------------------------------------------------------- memory, depth
def test_no_graph_leak_across_steps() -> None:
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (w * w).exp().sum()
    ref = weakref.ref(y.grad_fn)
    y.backward()
    del y
    gc.collect()
    assert ref() is None


def test_deep_chain_backward() -> None:
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(20000):
        y = y * 1.0
    y.backward()
    assert x.grad.item() == 1.0


# ----------------------------------------------------------------------------- gradients of the torch-named primitives
def _t(a: np.ndarray) -> Any:
    return torch.tensor(a, requires_grad=True)


@pytest.mark.parametrize("fn,shapes", [
    (lambda a: torch.softmax(a, 1), [(3, 4)]),
    (lambda a: torch.log_softmax(a, 0), [(3, 4)]),
    (lambda a: torch.logsumexp(a, 1), [(3, 4)]),
    (lambda a: a.var(1), [(3, 4)]),
    (lambda a: a.std(0, keepdim=True), [(3, 4)]),
    (lambda a: torch.nn.functional.gelu(a), [(3, 4)]),
    (lambda a: torch.nn.functional.gelu(a, approximate="tanh"), [(3, 4)]),
    (lambda a: torch.nn.functional.softplus(a * 3, beta=2.0, threshold=4.0), [(3, 4)]),
    (lambda a: torch.nn.functional.silu(a), [(3, 4)]),
    (lambda a, b: torch.nn.functional.mse_loss(a, b), [(3, 4), (3, 4)]),
    (lambda a: torch.nn.functional.cross_entropy(a, torch.tensor([0, 3, 1])), [(3, 4)]),
    (lambda a, b: torch.nn.functional.binary_cross_entropy_with_logits(a, b.sigmoid()),
     [(3, 4), (3, 4)]),
    (lambda a, b: torch.nn.functional.binary_cross_entropy(a.sigmoid(), b.sigmoid()),
     [(3, 4), (3, 4)]),
    (lambda a, w, b: torch.nn.functional.linear(a, w, b), [(3, 4), (2, 4), (2,)]),
    (lambda a: a.max(dim=1).values, [(3, 4)]),
    (lambda a, lo: torch.clamp(a, lo, lo + 1.0), [(3, 4), (4,)]),
    (lambda a: a.gather(1, torch.tensor([[0, 1], [2, 2], [3, 0]])), [(3, 4)]),
    (lambda a: a.topk(2).values, [(3, 4)]),
])
def test_torch_primitives_gradcheck_second_order(fn: Any, shapes: list[tuple[int, ...]]) -> None:
    rng = np.random.default_rng(0)
    inputs = [_t(rng.standard_normal(s)) for s in shapes]
    assert tg_gradcheck(fn, inputs, order=2)
