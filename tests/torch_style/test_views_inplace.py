"""In-place ops through views, PyTorch style: the gradients of the program as written.

Each program writes through a view in place; its gradient is compared with the
gradient of the same computation written out of place (in the same test) and
with central finite differences.  Also: ``_base``/``_is_view``, shared version
counters, ``CopySlices``/``AsStridedBackward0``, PyTorch's refusals, forward mode.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch
import tapegrad.torch.autograd.forward_ad as fwAD

X0 = np.array([0.3, -1.2, 2.0, 0.7, 1.5, -0.4])
F64 = torch.float64


def _t(a: Any) -> Any:
    return torch.tensor(np.asarray(a, dtype=np.float64))


def _grad(f: Callable[[Any], Any], x0: np.ndarray) -> tuple[float, np.ndarray]:
    x = _t(x0).requires_grad_()
    out = f(x)
    out.backward()
    return out.item(), x.grad.numpy().copy()


def _fd(f: Callable[[Any], Any], x0: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x0)
    with torch.no_grad():
        for i in range(x0.size):
            xp, xm = x0.copy(), x0.copy()
            xp[i] += eps
            xm[i] -= eps
            g[i] = (f(_t(xp)).item() - f(_t(xm)).item()) / (2 * eps)
    return g


def _stack(els: list[Any]) -> Any:
    return torch.stack(els)


# ------------------------------------------------------------------------- the programs
# name -> (in place through views, the same computation out of place)
def _select_mul(x: Any) -> Any:
    y = x.clone()
    y[1].mul_(3)
    return (y * y).sum()


def _select_mul_ref(x: Any) -> Any:
    y = x * _t([1, 3, 1, 1, 1, 1])
    return (y * y).sum()


def _slice_other_use(x: Any) -> Any:
    y = x * 1
    v = y[:3]
    v.mul_(2)
    return (y * y).sum() + v.sum()


def _slice_other_use_ref(x: Any) -> Any:
    y = torch.cat([x[:3] * 2, x[3:]])
    return (y * y).sum() + y[:3].sum()


def _t_add(x: Any) -> Any:
    x2 = x.view(2, 3)
    y = x2.clone()
    y.t().add_(x2.t() * x2.t())
    return y.sin().sum()


def _t_add_ref(x: Any) -> Any:
    x2 = x.view(2, 3)
    return (x2 + x2 * x2).sin().sum()


def _view_exp(x: Any) -> Any:
    y = x.clone()
    z = y.view(2, 3)
    z.exp_()
    return (y * x).sum()


def _view_exp_ref(x: Any) -> Any:
    return (x.exp() * x).sum()


def _view_before(x: Any) -> Any:
    y = x * 1
    a = y[:4]
    b = y[2:5]
    b.mul_(3)
    return (a * a).sum() + b.sum()


def _view_before_ref(x: Any) -> Any:
    y = torch.cat([x[:2], x[2:5] * 3, x[5:]])
    return (y[:4] * y[:4]).sum() + y[2:5].sum()


def _base_after_view(x: Any) -> Any:
    y = x * 2
    v = y.view(3, 2)
    y.exp_()
    return (v * v).sum()


def _base_after_view_ref(x: Any) -> Any:
    v = (x * 2).exp()
    return (v * v).sum()


def _setitem_view_of_view(x: Any) -> Any:
    y = x.clone().view(2, 3)
    y[0][1] = x[5] * 2
    return (y * y).sum()


def _setitem_view_of_view_ref(x: Any) -> Any:
    els = list(x)
    els[1] = x[5] * 2
    y = _stack(els)
    return (y * y).sum()


def _setitem_mask(x: Any) -> Any:
    y = x.clone().view(3, 2)
    y[:, 0][torch.tensor([True, False, True])] = 7.0
    return (y * y * x.view(3, 2)).sum()


def _setitem_mask_ref(x: Any) -> Any:
    m = torch.tensor([True, False, False, False, True, False])
    y = torch.where(m, _t(7.0), x)
    return (y * y * x).sum()


def _plain_base(x: Any) -> Any:
    y = torch.zeros(6, dtype=F64)
    y[1:3].add_(x[:2] * x[4:])
    return (y * y).sum() + y.sum()


def _plain_base_ref(x: Any) -> Any:
    z = torch.zeros(1, dtype=F64)
    y = torch.cat([z, x[:2] * x[4:], z, z, z])
    return (y * y).sum() + y.sum()


def _zero(x: Any) -> Any:
    y = x.clone()
    y[1:3].zero_()
    return (y * y * x).sum()


def _zero_ref(x: Any) -> Any:
    y = x * _t([1, 0, 0, 1, 1, 1])
    return (y * y * x).sum()


def _fill(x: Any) -> Any:
    y = x.clone()
    y[2:4].fill_(2.0)
    return (y * y * x).sum()


def _fill_ref(x: Any) -> Any:
    m = torch.tensor([False, False, True, True, False, False])
    y = torch.where(m, _t(2.0), x)
    return (y * y * x).sum()


def _copy(x: Any) -> Any:
    y = x.clone()
    y[1:3].copy_(x[3:5] * 3)
    return (y * y).sum()


def _copy_ref(x: Any) -> Any:
    y = torch.cat([x[:1], x[3:5] * 3, x[3:]])
    return (y * y).sum()


def _t_row(x: Any) -> Any:
    y = x.clone()
    y.view(2, 3).t()[0].mul_(10)
    return (y * y).sum()


def _t_row_ref(x: Any) -> Any:
    y = x * _t([10, 1, 1, 10, 1, 1])
    return (y * y).sum()


def _diagonal(x: Any) -> Any:
    y = x.clone()
    y.view(2, 3).diagonal().mul_(x[:2])
    return (y * y).sum()


def _diagonal_ref(x: Any) -> Any:
    els = list(x)
    els[0] = x[0] * x[0]
    els[4] = x[4] * x[1]
    y = _stack(els)
    return (y * y).sum()


def _strided(x: Any) -> Any:
    y = x.clone()
    y[::2] += 1
    y[1::2] *= x[::2]
    return (y * y).sum()


def _strided_ref(x: Any) -> Any:
    els = list(x)
    for i in range(0, 6, 2):
        els[i] = x[i] + 1
        els[i + 1] = x[i + 1] * x[i]
    y = _stack(els)
    return (y * y).sum()


def _transpose_permute(x: Any) -> Any:
    y = x.clone().view(2, 3)
    y.transpose(0, 1)[1:].mul_(x.view(2, 3).t()[1:])
    y.permute(1, 0)[0].add_(x[:2])
    return (y * y).sum()


def _transpose_permute_ref(x: Any) -> Any:
    els = list(x)
    for i in (1, 2, 4, 5):
        els[i] = x[i] * x[i]
    els[0] = x[0] + x[0]
    els[3] = x[3] + x[1]
    y = _stack(els)
    return (y * y).sum()


def _narrow_select_pow(x: Any) -> Any:
    y = x.clone().view(3, 2)
    y.narrow(0, 1, 2).select(1, 0).pow_(2)
    return (y * x.view(3, 2)).sum()


def _narrow_select_pow_ref(x: Any) -> Any:
    els = list(x)
    els[2] = x[2] ** 2
    els[4] = x[4] ** 2
    return (_stack(els) * x).sum()


def _squeeze_flatten(x: Any) -> Any:
    y = x.clone().view(1, 2, 3)
    y.squeeze(0).flatten()[2:4].sigmoid_()
    return (y * y).sum()


def _squeeze_flatten_ref(x: Any) -> Any:
    y = torch.cat([x[:2], x[2:4].sigmoid(), x[4:]])
    return (y * y).sum()


def _chain(x: Any) -> Any:
    y = x * 1
    a = y.view(2, 3)
    a[1].mul_(x[:3])
    y.add_(1)
    b = a[:, 1]
    b.exp_()
    return (y * y).sum() + (a * a).sum()


def _chain_ref(x: Any) -> Any:
    els = list(x)
    for i in range(3):
        els[3 + i] = x[3 + i] * x[i]
    els = [e + 1 for e in els]
    els[1] = els[1].exp()
    els[4] = els[4].exp()
    y = _stack(els)
    return 2 * (y * y).sum()


def _unsqueeze_expand_read(x: Any) -> Any:
    y = x.clone()
    e = y[:2].unsqueeze(0).expand(3, 2)  # a view read after its base changed
    y[:2].mul_(x[2:4])
    return (e * e).sum() + y.sum()


def _unsqueeze_expand_read_ref(x: Any) -> Any:
    p = x[:2] * x[2:4]
    return 3 * (p * p).sum() + p.sum() + x[2:].sum()


def _pow_then_base(x: Any) -> Any:
    y = x * 1
    v = y[:3]
    v.pow_(2)  # its node keeps its own output: the base written next does not invalidate it
    y.mul_(1.5)
    return (v * v).sum() + y.sum()


def _pow_then_base_ref(x: Any) -> Any:
    y = torch.cat([x[:3] ** 2, x[3:]]) * 1.5
    return (y[:3] * y[:3]).sum() + y.sum()


PROGRAMS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    name[1:]: (fn, globals()[name + "_ref"])
    for name, fn in dict(globals()).items()
    if name.startswith("_") and name + "_ref" in globals()
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradient_as_written(name: str) -> None:
    prog, ref = PROGRAMS[name]
    v, g = _grad(prog, X0)
    v_ref, g_ref = _grad(ref, X0)
    assert v == pytest.approx(v_ref, rel=1e-12)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g, _fd(prog, X0), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["select_mul", "t_add", "view_before", "chain", "diagonal",
                                  "setitem_view_of_view"])
def test_second_order(name: str) -> None:
    prog, ref = PROGRAMS[name]

    def hess_row(f: Callable[[Any], Any]) -> np.ndarray:
        x = _t(X0).requires_grad_()
        (g,) = torch.autograd.grad(f(x), x, create_graph=True)
        (g * _t(np.arange(6.0))).sum().backward()
        return x.grad.numpy().copy()

    np.testing.assert_allclose(hess_row(prog), hess_row(ref), rtol=1e-9, atol=1e-12)


def test_forward_mode_matches_reverse() -> None:
    u = np.array([1.0, -0.5, 0.25, 2.0, 0.0, 1.0])
    for name, (prog, ref) in PROGRAMS.items():
        with fwAD.dual_level():
            out = prog(fwAD.make_dual(_t(X0), _t(u)))
            tan = fwAD.unpack_dual(out).tangent
        _, g = _grad(ref, X0)
        assert tan is not None, name
        assert tan.item() == pytest.approx(float(g @ u), rel=1e-9, abs=1e-12), name


# ------------------------------------------------------------------------- bookkeeping
def test_base_and_is_view() -> None:
    y = torch.ones(2, 3)
    v = y[0]
    w = v[1:]
    assert v._is_view() and w._is_view() and not y._is_view()
    assert v._base is y and w._base is y and y._base is None
    assert y.t()._base is y and y.view(6)._base is y and y.unsqueeze(0)._base is y
    assert y.permute(1, 0)._base is y and y.T._base is y and y.narrow(1, 0, 2)._base is y
    assert all(p._base is y for p in y.unbind(1)) and y.split(1)[0]._base is y
    assert y[:1].expand(4, 3)._base is y and y.diagonal()._base is y
    assert not y[[0, 1]]._is_view() and not y[y > 0]._is_view()
    assert not y.t().reshape(6)._is_view()  # a copy
    assert not y.detach()._is_view() and not y.clone()._is_view()
    assert not y.view(torch.int32)._is_view()
    d = torch.reshape(input=y, shape=(3, 2))
    assert d._base is y and torch.split(tensor=y, split_size_or_sections=1)[0]._base is y


def test_versions_shared_with_views() -> None:
    z = torch.zeros(3)
    zz = z[:2]
    zz.add_(1)
    w = zz[0]
    w.mul_(3)
    assert z._version == zz._version == w._version == 2
    assert z.tolist() == [3.0, 1.0, 0.0]
    z.fill_(0.5)
    assert w._version == 3 and w.item() == 0.5


def test_grad_fn_names() -> None:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    a = y[:2]
    b = y.view(3)
    a.mul_(2)
    assert type(y.grad_fn).__name__ == "CopySlices"
    assert type(a.grad_fn).__name__ == "AsStridedBackward0"
    assert type(b.grad_fn).__name__ == "AsStridedBackward0"
    assert "grad_fn=<CopySlices>" in repr(y)
    y2 = x * 1
    v = y2[1:]
    y2.mul_(2)  # the base in place: its views are re-derived from it
    assert type(y2.grad_fn).__name__ == "MulBackward0"
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"


def test_saved_view_modified_through_base() -> None:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    a = y[:2]
    c = a * a
    y.add_(1)
    with pytest.raises(RuntimeError) as e:
        c.sum().backward()
    assert str(e.value).startswith(
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation: [torch.FloatTensor [2]], which is output 0 of AsStrided, is at "
        "version 1; expected version 0 instead.")


def _msg(e: Any) -> str:
    return str(e.value).split("\n[tapegrad hint]")[0]


def test_refusals() -> None:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for f in (lambda: x[1].mul_(2), lambda: x.view(3).add_(1), lambda: x[:2].zero_()):
        with pytest.raises(RuntimeError) as e:
            f()
        assert _msg(e) == ("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    assert x.tolist() == [1.0, 2.0, 3.0] and x._version == 0
    with pytest.raises(RuntimeError) as e:
        x.clone().expand(2, 3).mul_(2)
    assert _msg(e).startswith("unsupported operation: more than one element of the written-to "
                              "tensor refers to a single memory location.")
    for split, name in ((lambda y: y.unbind(), "Unbind"), (lambda y: y.split(2), "Split"),
                        (lambda y: y.chunk(2), "Split")):
        y = x.clone()
        with pytest.raises(RuntimeError) as e:
            split(y)[1].mul_(2)
        assert _msg(e).startswith(f"Output 1 of {name} is a view and is being modified "
                                  "inplace. This view is the output of a function that returns "
                                  "multiple views.")
    y = x.clone()
    with torch.no_grad():
        v = y[:2]
    with pytest.raises(RuntimeError) as e:
        v.mul_(2)
    assert _msg(e).startswith("A view was created in no_grad mode and is being modified "
                              "inplace with grad mode enabled.")


def test_allowed_without_grad() -> None:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = x[:2]
    with torch.no_grad():
        v.mul_(2)  # a view of a leaf, in place under no_grad
        x[2] = 5.0
    assert x.tolist() == [2.0, 4.0, 5.0] and x._version == 2 and x.is_leaf
    (x * x).sum().backward()
    assert x.grad.tolist() == [4.0, 8.0, 10.0]
    z = torch.zeros(3)
    a, b, c = z.unbind()
    b.add_(2)  # nothing requires grad: multiple views may be written
    assert z.tolist() == [0.0, 2.0, 0.0]
    y = x.detach().clone()
    y[0].mul_(3)
    assert y.tolist() == [6.0, 4.0, 5.0] and y.grad_fn is None


def test_forward_ad_view_updates_base_tangent() -> None:
    with fwAD.dual_level():
        d = fwAD.make_dual(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 0.0, 0.5]))
        dv = d[:2]
        other = d[1:]
        dv.mul_(3)
        assert fwAD.unpack_dual(d).tangent.tolist() == [3.0, 0.0, 0.5]
        assert fwAD.unpack_dual(dv).tangent.tolist() == [3.0, 0.0]
        assert fwAD.unpack_dual(other).tangent.tolist() == [0.0, 0.5]
        assert fwAD.unpack_dual(d).primal.tolist() == [3.0, 6.0, 3.0]
        y = torch.zeros(3)
        y[1:].add_(fwAD.make_dual(torch.ones(2), torch.tensor([2.0, 4.0])))
        assert fwAD.unpack_dual(y).tangent.tolist() == [0.0, 2.0, 4.0]


def test_forward_ad_tangent_of_tracked_primal_has_grad_fn() -> None:
    with fwAD.dual_level():
        p = torch.tensor([1.0, 2.0], requires_grad=True)
        d = fwAD.make_dual(p, torch.ones(2))
        t_sum = fwAD.unpack_dual((d * d).sum()).tangent
        t_mean = fwAD.unpack_dual(d.sin().mean()).tangent
        assert type(t_sum.grad_fn).__name__ == "SumBackward0"
        assert type(t_mean.grad_fn).__name__ == "MeanBackward0"
        (g,) = torch.autograd.grad(t_sum, p)
        assert g.tolist() == [2.0, 2.0]  # d/dp of sum(2 p)


def test_non_view_tensors_carry_nothing() -> None:
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y.mul_(3)
    assert "_family" not in y.__dict__ and "_vbase" not in y.__dict__
    assert type(y.grad_fn).__name__ == "MulBackward0"


def test_vmap_writes_through_views() -> None:
    def g(x: Any) -> Any:
        y = x.clone()
        y[0].mul_(2)
        v = y[1:]
        y[1:].add_(x[:2])
        return y * v.sum()

    xs = _t(np.arange(6.0).reshape(2, 3))
    got = torch.func.vmap(g)(xs)
    want = torch.stack([g(xs[0].clone()), g(xs[1].clone())])
    np.testing.assert_allclose(got.numpy(), want.numpy())

    def f(x: Any) -> Any:
        y = x.clone()
        y[0].mul_(2)
        y[1:].add_(x[:2])
        return (y * y).sum()

    got = torch.func.vmap(torch.func.grad(f))(xs)
    want = torch.stack([torch.func.grad(f)(xs[i].clone()) for i in range(2)])
    np.testing.assert_allclose(got.numpy(), want.numpy())
    _, g_ref = _grad(lambda x: f(x), np.arange(3.0))
    np.testing.assert_allclose(got.numpy()[0], g_ref)


def _unfold_windows(x: Any) -> Any:
    u = x.view(2, 3).t().unfold(0, 2, 1)  # overlapping windows of a transposed view
    return (u * u * _t(np.arange(8.0).reshape(2, 2, 2))).sum()


def _unfold_windows_ref(x: Any) -> Any:
    m = x.view(2, 3).t()
    u = torch.stack([torch.stack([m[0:2, 0], m[0:2, 1]]), torch.stack([m[1:3, 0], m[1:3, 1]])])
    return (u * u * _t(np.arange(8.0).reshape(2, 2, 2))).sum()


def _as_strided_inplace(x: Any) -> Any:
    z = x.clone()
    z.unfold(0, 2, 2).mul_(x[:3].unsqueeze(1))
    z[2:].as_strided((2,), (2,)).add_(x[:2])  # storage offset 2: elements 2 and 4
    return (z * z).sum()


def _as_strided_inplace_ref(x: Any) -> Any:
    els = [x[i] * x[i // 2] for i in range(6)]
    els[2] = els[2] + x[0]
    els[4] = els[4] + x[1]
    y = _stack(els)
    return (y * y).sum()


@pytest.mark.parametrize("prog, ref", [(_unfold_windows, _unfold_windows_ref),
                                       (_as_strided_inplace, _as_strided_inplace_ref)])
def test_as_strided_and_unfold(prog: Callable[[Any], Any], ref: Callable[[Any], Any]) -> None:
    v, g = _grad(prog, X0)
    v_ref, g_ref = _grad(ref, X0)
    assert v == pytest.approx(v_ref, rel=1e-12)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g, _fd(prog, X0), rtol=1e-5, atol=1e-7)


def test_as_strided_and_unfold_views() -> None:
    y = torch.arange(1.0, 7.0)
    a = y.as_strided((2, 2), (1, 2), 1)
    assert a.tolist() == [[2.0, 4.0], [3.0, 5.0]] and a._base is y
    u = y.unfold(0, 3, 1)
    assert u.shape == (4, 3) and u._base is y and u[1].tolist() == [2.0, 3.0, 4.0]
    y[2] = 30.0
    assert u[0, 2].item() == 30.0 and a[1, 0].item() == 30.0
    with pytest.raises(NotImplementedError):
        u.mul_(2)  # its windows overlap
    with pytest.raises(RuntimeError) as e:
        y.as_strided((3, 3), (2, 2))
    assert _msg(e) == ("setStorage: sizes [3, 3], strides [2, 2], storage offset 0, and "
                       "itemsize 4 requiring a storage size of 36 are out of bounds for "
                       "storage of size 24")


def test_fill_and_zero_keep_the_edge() -> None:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    v = y[1:]  # made before the fill: it reads the filled values afterwards
    y.fill_(0.5)
    assert type(y.grad_fn).__name__ == "FillBackward2" and y.requires_grad
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"
    ((y + v.sum()) * x).sum().backward()  # only the last factor depends on x
    assert x.grad.tolist() == [1.5, 1.5, 1.5]
    z = x * 1
    z.zero_()
    assert type(z.grad_fn).__name__ == "ZeroBackward0"
    w = torch.tensor(2.0, requires_grad=True)
    u = x * 1
    u[1:].fill_(w)
    assert type(u.grad_fn).__name__ == "CopySlices"
    (u * u).sum().backward()
    assert w.grad.item() == pytest.approx(8.0)  # d/dw of 2 w^2


def test_views_see_a_fill_of_their_root() -> None:
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = torch.zeros(4)
    p = y[:3]  # made while y is outside the graph
    y[1:3] = x[:2] * 3  # y joins the graph
    assert type(p.grad_fn).__name__ == "AsStridedBackward0"
    y.fill_(0.25)  # its values (and p's) no longer depend on x
    ((p * p).sum() + (y * x).sum()).backward()
    assert x.grad.tolist() == [0.25, 0.25, 0.25, 0.25]
