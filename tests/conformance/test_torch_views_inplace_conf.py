"""Conformance: in-place ops through views, PyTorch style, against real PyTorch.

Each program runs on real PyTorch and on tapegrad.torch and returns what it
observed: values, gradients, ``grad_fn`` names, ``_base``/``_is_view``,
versions, forward-mode tangents, or the error (type and text).  Skipped
without PyTorch.
"""

# ruff: noqa: E731  (the programs are small lambdas)
from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402


def _fw(T: Any) -> Any:
    return T.autograd.forward_ad


def _obs(v: Any) -> Any:
    """What a program's result is compared by."""
    if isinstance(v, (tuple, list)):
        return [_obs(u) for u in v]
    if isinstance(v, dict):
        return {k: _obs(u) for k, u in v.items()}
    if hasattr(v, "detach") and hasattr(v, "numpy"):
        fn = v.grad_fn
        return ("tensor", v.detach().numpy().copy(), str(v.dtype).split(".")[-1],
                None if fn is None else type(fn).__name__, bool(v.requires_grad))
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if hasattr(v, "next_functions"):
        return ("node", type(v).__name__)
    return v


def _run(T: Any, prog: Callable[[Any], Any]) -> Any:
    try:
        return ("ok", _obs(prog(T)))
    except Exception as e:  # noqa: BLE001  (the error is what is compared)
        return ("err", type(e).__name__, str(e).split("\n[tapegrad hint]")[0])


def _same(a: Any, b: Any, path: str = "") -> None:
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), path
        assert a.shape == b.shape and a.dtype == b.dtype, (path, a, b)
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6, err_msg=path)
        return
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), (path, a, b)
        for i, (u, v) in enumerate(zip(a, b)):
            _same(u, v, f"{path}[{i}]")
        return
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), (path, a, b)
        for k in a:
            _same(a[k], b[k], f"{path}.{k}")
        return
    assert a == b, (path, a, b)


def _x(T: Any, n: int = 4) -> Any:
    return T.arange(1.0, n + 1.0).requires_grad_()


def _grad_of(T: Any, make: Callable[[Any, Any], Any]) -> Any:
    x = _x(T)
    y = make(T, x)
    (y * y).sum().backward()
    return {"y": y, "grad": x.grad}


def _p_select_mul(T: Any) -> Any:
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.clone()
    y[1].mul_(3)
    y.sum().backward()
    return {"y": y, "grad": x.grad}


def _p_slice_other_use(T: Any) -> Any:
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    v = y[:2]
    v.mul_(2)
    (y * y).sum().backward()
    return {"y": y, "v": v, "grad": x.grad}


def _p_t_add(T: Any) -> Any:
    x2 = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x2.clone()
    y.t().add_(x2)
    y.sum().backward()
    return {"y": y, "grad": x2.grad}


def _p_view_exp(T: Any) -> Any:
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.clone()
    z = y.view(3)
    z.exp_()
    out = {"y_fn": y.grad_fn, "z_fn": z.grad_fn, "base": z._base is y, "isview": z._is_view(),
           "y_isview": y._is_view(), "ybase": y._base is None}
    y.sum().backward()
    out["grad"] = x.grad
    return out


def _p_view_before(T: Any) -> Any:
    x = _x(T)
    y = x * 1
    a = y[:2]
    b = y[1:3]
    b.mul_(3)
    out = {"a": a, "b": b, "y": y}
    (a * a).sum().backward()
    out["grad"] = x.grad
    return out


def _p_base_inplace_after_view(T: Any) -> Any:
    x = _x(T)
    y = x * 2
    v = y.view(2, 2)
    y.exp_()
    out = {"v": v, "y": y}
    v.sum().backward()
    out["grad"] = x.grad
    return out


def _p_saved_view(T: Any) -> Any:
    x = _x(T)
    y = x * 1
    a = y[:2]
    c = a * a
    y.add_(1)
    c.sum().backward()
    return x.grad


def _p_saved_view_exp(T: Any) -> Any:
    x = _x(T)
    y = x * 1
    a = y[:2]
    c = a.exp()  # saves its result, not a
    y.add_(1)
    c.sum().backward()
    return x.grad


def _p_setitem_view_of_view(T: Any) -> Any:
    x = _x(T)
    y = x.clone().view(2, 2)
    y[0][1] = 5
    y.sum().backward()
    return {"y": y, "grad": x.grad}


def _p_setitem_mask(T: Any) -> Any:
    x = _x(T)
    y = x.clone().view(2, 2)
    y[:, 0][T.tensor([True, False])] = 7.0
    (y * y).sum().backward()
    return {"y": y, "grad": x.grad}


def _p_setitem_column(T: Any) -> Any:
    x = _x(T)
    y = x.clone().view(2, 2)
    y[:, 1] = x[:2] * 2
    (y * y).sum().backward()
    return {"y": y, "grad": x.grad}


def _p_plain_base_rg_other(T: Any) -> Any:
    x = _x(T)
    w = T.tensor([1.0, 1.0], requires_grad=True)
    y = T.zeros(4)
    y[1:3].add_(w * x[:2])
    out = {"y": y, "rg": y.requires_grad}
    (y * y).sum().backward()
    out["gw"] = w.grad
    out["gx"] = x.grad
    return out


def _p_versions(T: Any) -> Any:
    x = _x(T)
    y = x.clone()
    v = y[1:]
    v.add_(1)
    z = T.zeros(3)
    zz = z[:2]
    zz.add_(1)
    w = zz[0]
    w.mul_(3)
    return [y._version, v._version, z._version, zz._version, w._version, z, w._base is z]


def _p_double_backward(T: Any) -> Any:
    x = _x(T)
    y = x * 1
    y[:2].mul_(x[2:])
    (g,) = T.autograd.grad(y.pow(2).sum(), x, create_graph=True)
    g.sum().backward()
    return {"g": g, "gg": x.grad}


def _p_zero(T: Any) -> Any:
    x = _x(T)
    y = x.clone()
    y[1:3].zero_()
    y.sum().backward()
    return {"y": y, "grad": x.grad}


def _p_fill(T: Any) -> Any:
    x = _x(T)
    y = x.clone()
    y[1:3].fill_(2.0)
    (y * y).sum().backward()
    return {"y": y, "grad": x.grad}


def _p_copy(T: Any) -> Any:
    x = _x(T)
    y = x.clone()
    y[1:3].copy_(x[:2] * 3)
    (y * y).sum().backward()
    return {"y": y, "grad": x.grad}


def _p_t_row(T: Any) -> Any:
    return _grad_of(T, lambda T, x: _then(x.clone(), lambda y: y.view(2, 2).t()[0].mul_(10)))


def _p_diagonal(T: Any) -> Any:
    return _grad_of(T, lambda T, x: _then(x.clone(), lambda y: y.view(2, 2).diagonal().mul_(10)))


def _p_strided(T: Any) -> Any:
    def f(T: Any, x: Any) -> Any:
        y = x.clone()
        y[::2] += 1
        y[1::2] *= 3
        return y

    return _grad_of(T, f)


def _p_unsqueeze(T: Any) -> Any:
    x = _x(T)
    y = x.clone()
    yy = y.unsqueeze(0)
    yy.mul_(2)
    out = {"y": y, "yy": yy, "base": yy._base is y}
    y.sum().backward()
    out["grad"] = x.grad
    return out


def _p_transpose_permute(T: Any) -> Any:
    x = T.arange(1.0, 7.0).requires_grad_()
    y = x.clone().view(2, 3)
    y.transpose(0, 1)[1:].mul_(y.detach().t()[1:] + 1)
    y.permute(1, 0)[0].add_(x[:2])
    (y * y).sum().backward()
    return {"y": y, "grad": x.grad}


def _p_narrow_select(T: Any) -> Any:
    x = T.arange(1.0, 7.0).requires_grad_()
    y = x.clone().view(3, 2)
    y.narrow(0, 1, 2).select(1, 0).pow_(2)
    y.sum().backward()
    return {"y": y, "grad": x.grad}


def _p_squeeze_flatten(T: Any) -> Any:
    x = T.arange(1.0, 7.0).requires_grad_()
    y = x.clone().view(1, 2, 3)
    y.squeeze(0).flatten()[2:4].sigmoid_()
    y.sum().backward()
    return {"y": y, "grad": x.grad}


def _p_expand_error(T: Any) -> Any:
    x = _x(T)
    e = x.clone().expand(2, 4)
    e.mul_(2)
    return e


def _p_leaf_view(T: Any) -> Any:
    x = _x(T)
    x[1].mul_(2)
    return x


def _p_leaf_view_nograd(T: Any) -> Any:
    x = _x(T)
    v = x[:2]
    with T.no_grad():
        v.mul_(2)
    (x * x).sum().backward()
    return {"x": x, "grad": x.grad, "version": x._version}


def _p_leaf_setitem(T: Any) -> Any:
    x = _x(T)
    x[1] = 3.0
    return x


def _p_nograd_view(T: Any) -> Any:
    x = _x(T)
    y = x.clone()
    with T.no_grad():
        v = y[:2]
    v.mul_(2)
    return y


def _p_nograd_view_nograd_inplace(T: Any) -> Any:
    x = _x(T)
    y = x.clone()
    with T.no_grad():
        v = y[:2]
        v.mul_(2)
    y.sum().backward()
    return {"y": y, "grad": x.grad, "version": y._version}


def _p_unbind(T: Any) -> Any:
    x = _x(T)
    a = x.clone().unbind()[0]
    a.mul_(2)
    return a


def _p_split(T: Any) -> Any:
    x = _x(T)
    a = x.clone().split(2)[1]
    a.mul_(2)
    return a


def _p_chunk(T: Any) -> Any:
    x = _x(T)
    a = x.clone().chunk(2)[0]
    a.mul_(2)
    return a


def _p_unbind_nograd_ok(T: Any) -> Any:
    z = T.zeros(3)
    a, b, c = z.unbind()
    b.add_(2)
    return [z, b._base is z, z._version]


def _p_view_kinds(T: Any) -> Any:
    out = []
    for f in (lambda y: y.t(), lambda y: y.T, lambda y: y.view(4), lambda y: y.reshape(4),
              lambda y: y.t().reshape(4), lambda y: y.transpose(0, 1),
              lambda y: y.permute(1, 0), lambda y: y.narrow(0, 0, 1), lambda y: y.select(0, 1),
              lambda y: y.unsqueeze(0), lambda y: y.squeeze(), lambda y: y[:1].expand(3, 2),
              lambda y: y.diagonal(), lambda y: y.unbind()[0], lambda y: y.split(1)[0],
              lambda y: y.chunk(2)[0], lambda y: y.flatten(), lambda y: y.unflatten(1, (2, 1)),
              lambda y: y.movedim(0, 1), lambda y: y[[0, 1]], lambda y: y[y > 2],
              lambda y: y.view_as(y), lambda y: y.detach(), lambda y: y.contiguous(),
              lambda y: y.swapaxes(0, 1), lambda y: y[None], lambda y: y[0][1],
              lambda y: y[:1].expand_as(y), lambda y: y.mT):
        y = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True).clone()
        v = f(y)
        out.append((v._is_view(), v._base is y, v._version))
    return out


def _p_view_fn_names(T: Any) -> Any:
    y = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True).clone()
    vs = [y.t(), y.T, y.view(4), y.transpose(0, 1), y.permute(1, 0), y.narrow(0, 0, 1),
          y.select(0, 1), y.unsqueeze(0), y[:1].expand(3, 2), y.unbind()[0], y.split(1)[0],
          y[None], y.mT, y[0]]
    return [type(v.grad_fn).__name__ for v in vs]


def _p_other_views_regenerated(T: Any) -> Any:
    x = _x(T)
    y = x * 1
    views = [y[:2], y.view(2, 2), y[1:].unsqueeze(1)]
    y[2:].mul_(3)
    names = [type(v.grad_fn).__name__ for v in views]
    total = sum((v * v).sum() for v in views)
    total.backward()
    return {"names": names, "views": views, "grad": x.grad}


def _p_forward_ad_view(T: Any) -> Any:
    fw = _fw(T)
    with fw.dual_level():
        p = T.tensor([1.0, 2.0, 3.0])
        d = fw.make_dual(p.clone(), T.tensor([1.0, 0.0, 0.5]))
        dv = d[:2]
        dv.mul_(3)
        other = d[1:]
        return [fw.unpack_dual(d).tangent, fw.unpack_dual(dv).tangent,
                fw.unpack_dual(other).tangent, fw.unpack_dual(d).primal]


def _p_forward_ad_plain_base(T: Any) -> Any:
    fw = _fw(T)
    with fw.dual_level():
        d2 = fw.make_dual(T.zeros(3), T.zeros(3))
        d2[1:].add_(fw.make_dual(T.ones(2), T.ones(2)))
        y = T.zeros(2, 2)
        y[0].copy_(fw.make_dual(T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0])))
        return [fw.unpack_dual(d2).tangent, fw.unpack_dual(y).tangent,
                fw.unpack_dual(y).primal]


def _p_forward_ad_base_inplace(T: Any) -> Any:
    fw = _fw(T)
    with fw.dual_level():
        d = fw.make_dual(T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 1.0, 1.0]))
        v = d[1:]
        d.mul_(d.detach() + 1)
        return [fw.unpack_dual(v).tangent, fw.unpack_dual(d).tangent]


def _p_forward_ad_rg_primal(T: Any) -> Any:
    fw = _fw(T)
    with fw.dual_level():
        pr = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        dd = fw.make_dual(pr, T.ones(3))
        r = dd * dd
        r2 = (dd.exp() * 2).sum()
        r3 = dd.sin().mean()
        return [fw.unpack_dual(r).tangent, fw.unpack_dual(dd).tangent,
                fw.unpack_dual(r2).tangent, fw.unpack_dual(r3).tangent]


def _then(y: Any, f: Callable[[Any], Any]) -> Any:
    f(y)
    return y


def test_vmap_programs() -> None:
    def g(T: Any, x: Any) -> Any:
        y = x.clone()
        y[0].mul_(2)
        y[1:].add_(x[:2])
        y.t() if y.dim() == 2 else None
        return (y * y).sum() + y[2]

    def prog(T: Any) -> Any:
        xs = T.arange(6.0).view(2, 3)
        return [T.func.vmap(lambda x: _then(x.clone(), lambda y: y[1:].mul_(x[:2])))(xs),
                T.func.vmap(lambda x: g(T, x))(xs),
                T.func.vmap(T.func.grad(lambda x: g(T, x)))(xs),
                T.func.jacrev(lambda x: _then(x.clone(), lambda y: y[::2].mul_(x[1])))(xs[0]),
                T.func.jacfwd(lambda x: _then(x.clone(), lambda y: y[1].mul_(x[0])))(xs[1])]

    _same(_run(real, prog), _run(tt, prog))


def _p_as_strided_unfold(T: Any) -> Any:
    x = T.arange(1.0, 7.0).requires_grad_()
    y = x * 1
    out = [y.as_strided((2, 2), (1, 2)), y.as_strided((2, 2), (1, 2), 1),
           T.as_strided(y, (2,), (3,)), y.unfold(0, 3, 2), y.unfold(0, 3, 1),
           y.view(2, 3).t().unfold(0, 2, 1), y[2:].as_strided((2,), (2,)),
           y.view(2, 3).t().as_strided((2,), (1,))]
    out.append([v._is_view() and v._base is y for v in out])
    w = sum((v * T.arange(float(v.numel())).view(v.shape)).sum() for v in out[:-1])
    w.backward()
    out.append(x.grad)
    return out


def _p_as_strided_unfold_inplace(T: Any) -> Any:
    x = T.arange(1.0, 7.0).requires_grad_()
    z = x.clone()
    u = z.unfold(0, 2, 2)
    u.mul_(x[:3].unsqueeze(1))
    a = z[2:].as_strided((2,), (2,))
    a.add_(10)
    (z * z).sum().backward()
    return [z, u, a, x.grad, u._base is z, a._base is z]


def _p_as_strided_errors(T: Any) -> Any:
    errs = []
    for f in (lambda: T.arange(6.0).as_strided((3, 3), (2, 2)),
              lambda: T.arange(6.0).as_strided((2, 2), (1,)),
              lambda: T.arange(6.0).unfold(0, 7, 1), lambda: T.arange(6.0).unfold(1, 2, 1),
              lambda: T.arange(6.0).unfold(0, 2, 0)):
        try:
            f()
            errs.append(None)
        except Exception as e:  # noqa: BLE001
            errs.append((type(e).__name__, str(e).split("\n[tapegrad hint]")[0]))
    return errs


def _p_retain_grad(T: Any) -> Any:
    out = []
    x = T.arange(1.0, 5.0, requires_grad=True)
    y = x * 1
    y.retain_grad()
    y.mul_(2)
    (y * y).sum().backward()
    out.append(y.grad)
    y = x * 1
    v = y[:2]
    v.retain_grad()
    y.retain_grad()
    v.mul_(2)
    (y * y).sum().backward()
    out += [v.grad, y.grad]
    y = x * 1
    v = y[:2]
    v.retain_grad()
    y[1:].mul_(3)
    (v * v).sum().backward()
    out += [v.grad, x.grad]
    return out


def _p_forward_ad_reverse_through_views(T: Any) -> Any:
    fw = _fw(T)
    out = []
    for mode in range(3):
        p = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(p * 1, T.ones(3))
            v = d[1:]
            d[:2].mul_(3)
            if mode == 0:
                r = fw.unpack_dual(d).primal.pow(2).sum()
            elif mode == 1:
                r = d.pow(2).sum()
            else:
                r = (v * v).sum()
            tan = fw.unpack_dual(r).tangent
        r.backward()
        out += [p.grad, tan, r]
    return out


def _p_forward_ad_tangent_graphs(T: Any) -> Any:
    fw = _fw(T)
    fns = [lambda d: d * d, lambda d: d * 2, lambda d: d + d, lambda d: d + 1, lambda d: d.exp(),
           lambda d: d.sin(), lambda d: d.tanh(), lambda d: d.sigmoid(), lambda d: d.relu(),
           lambda d: d.sum(), lambda d: d.view(1, 3).sum(0), lambda d: d.mean(),
           lambda d: d ** 2, lambda d: d / (d + 5), lambda d: d.view(3, 1), lambda d: d[1:],
           lambda d: d @ d, lambda d: d.log(), lambda d: d.sqrt(), lambda d: -d,
           lambda d: d.clone(), lambda d: d.view(1, 3).t(), lambda d: d.softmax(0),
           lambda d: d.abs(), lambda d: T.cat([d, d]), lambda d: 3.0 * d,
           lambda d: _then(d.clone(), lambda y: y[1:].mul_(d[:2]))]
    out = []
    with fw.dual_level():
        p = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        dd = fw.make_dual(p, T.tensor([1.0, 0.5, 2.0]))
        out += [fw.unpack_dual(f(dd)).tangent for f in fns]
        d2 = fw.make_dual(T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 0.5, 2.0]).requires_grad_())
        out += [fw.unpack_dual(d2 * 2).tangent, fw.unpack_dual(d2.sigmoid()).tangent]
    return out


def _p_diagonal_views(T: Any) -> Any:
    x = T.arange(1.0, 25.0).view(2, 3, 4).requires_grad_()
    y = x * 1
    ds = [y.diagonal(), T.diagonal(y, 1, 0, 2), T.linalg.diagonal(y), y[0].diagonal(-1)]
    out = [[d, d._base is y] for d in ds]
    ds[2].mul_(2)
    (y * y).sum().backward()
    out += [y, x.grad, ds[0], ds[3]]
    try:
        y.diagonal(0, 1, 1)
    except RuntimeError as e:
        out.append(str(e).split("\n[tapegrad hint]")[0])
    return out


PROGRAMS = {name[3:]: fn for name, fn in dict(globals()).items() if name.startswith("_p_")}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(name: str) -> None:
    prog = PROGRAMS[name]
    want = _run(real, prog)
    got = _run(tt, prog)
    assert got[0] == want[0], (got, want)
    _same(want, got)


# ------------------------------------------------------------------ random programs
# A chain of 1-3 random views of a base in the graph, a random in-place op through it
# (sometimes under no_grad, sometimes followed by one on the base), up to three times; the
# loss reads the base and every view made.  Values, gradients, grad_fn names or the error.
def _rand_view(rng: Any, v: Any) -> Any:
    """A random view op that applies to ``v``: ``fn(T, v)``."""
    shp = tuple(v.shape)
    opts: list[Callable[[Any, Any], Any]] = []
    if len(shp) >= 1 and shp[0] > 0:
        i = rng.randrange(shp[0])
        a = rng.randrange(shp[0])
        b = rng.randrange(a, shp[0]) + 1
        opts += [lambda T, v: v[i], lambda T, v: v[a:b], lambda T, v: v.unsqueeze(0)]
        if shp[0] > 1:
            opts.append(lambda T, v: v[::2])
    if len(shp) == 2:
        opts += [lambda T, v: v.t(), lambda T, v: v.diagonal(), lambda T, v: v.permute(1, 0)]
        if shp[1] > 1:
            opts.append(lambda T, v: v[:, 1:])
    if len(shp) >= 2:
        opts += [lambda T, v: v.transpose(0, -1), lambda T, v: v.narrow(-1, 0, 1)]
    if len(shp) == 3:
        opts.append(lambda T, v: v.squeeze(0) if v.shape[0] == 1 else v[0])
    return rng.choice(opts)


def _ng(T: Any, v: Any) -> None:
    with T.no_grad():
        v.mul_(2)


def _part(x: Any, v: Any, last: bool = False) -> Any:
    flat = x.reshape(-1)
    return (flat[-v.numel():] if last else flat[: v.numel()]).reshape(v.shape)


_INPLACE: list[tuple[str, Callable[[Any, Any, Any], Any]]] = [
    ("mul_c", lambda T, v, x: v.mul_(1.5)),
    ("add_x", lambda T, v, x: v.add_(_part(x, v) * 2)),
    ("mul_x", lambda T, v, x: v.mul_(_part(x, v, True))),
    ("exp_", lambda T, v, x: v.exp_()),
    ("zero_", lambda T, v, x: v.zero_()),
    ("copy_", lambda T, v, x: v.copy_(_part(x, v).sin())),
    ("setitem", lambda T, v, x: v.__setitem__(..., x.reshape(-1)[0] * 3)),
    ("pow_", lambda T, v, x: v.pow_(2)),
    ("sigmoid_", lambda T, v, x: v.sigmoid_()),
    ("div_", lambda T, v, x: v.div_(_part(x, v) + 3)),
    ("clamp_", lambda T, v, x: v.clamp_(-0.3, 0.5)),
    ("fill_", lambda T, v, x: v.fill_(0.25)),
    ("fill_t", lambda T, v, x: v.fill_(x[0, 0] * 2)),
    ("sub_", lambda T, v, x: v.sub_(_part(x, v))),
    ("tanh_", lambda T, v, x: v.tanh_()),
    ("relu_", lambda T, v, x: v.relu_()),
    ("iadd", lambda T, v, x: v.__iadd__(_part(x, v))),
    ("masked_fill_", lambda T, v, x: v.masked_fill_(v > 0.1, 2.0)),
    ("nograd_mul", lambda T, v, x: _ng(T, v)),
]


def _program(seed: int) -> tuple[Any, Any]:
    steps = random.Random(seed).randint(1, 3)

    def run(T: Any) -> Any:
        rng = random.Random(seed)
        rng.randint(1, 3)
        x = T.tensor(np.linspace(-1, 1, 12).reshape(3, 4) + 0.1, dtype=T.float64,
                     requires_grad=True)
        y = x * 1
        keep = []
        for _ in range(steps):
            v = y
            for _ in range(rng.randint(1, 3)):
                if v.numel() == 0 or v.dim() == 0:
                    break
                v = _rand_view(rng, v)(T, v)
            keep.append(v)
            if v.numel() == 0:
                continue
            name, op = rng.choice(_INPLACE)
            if v.dim() == 0 and name == "setitem":
                op = _INPLACE[0][1]
            op(T, v, x)
            if rng.random() < 0.25:
                y.mul_(1.1)
        loss = (y * y).sum() + sum((k * k).sum() for k in keep if k.numel())
        loss.backward()
        return [loss.item(), x.grad.numpy().copy(), y.detach().numpy().copy()] + [
            type(k.grad_fn).__name__ for k in keep] + [type(y.grad_fn).__name__]

    def safe(T: Any) -> Any:
        try:
            return run(T)
        except Exception as e:  # noqa: BLE001  (the error is what is compared)
            return ("err", type(e).__name__, str(e).split("\n[tapegrad hint]")[0])

    return safe(real), safe(tt)


@pytest.mark.parametrize("block", range(4))
def test_random_programs(block: int) -> None:
    for seed in range(block * 50, block * 50 + 50):
        a, b = _program(seed)
        if isinstance(a, tuple) or isinstance(b, tuple):
            assert a == b, seed
            continue
        assert b[0] == pytest.approx(a[0], rel=1e-9), seed
        np.testing.assert_allclose(b[1], a[1], rtol=1e-9, atol=1e-12, err_msg=str(seed))
        np.testing.assert_allclose(b[2], a[2], rtol=1e-12, err_msg=str(seed))
        assert a[3:] == b[3:], seed


def _program2(seed: int) -> tuple[Any, Any]:
    """As :func:`_program`, with bases outside the graph that join it, views made before
    anything else, and in-place ops on the base itself (``add_``, ``setitem``)."""
    steps = random.Random(seed).randint(1, 4)

    def run(T: Any) -> Any:
        rng = random.Random(seed)
        rng.randint(1, 4)
        x = T.tensor(np.linspace(-1, 1, 12).reshape(3, 4) + 0.1, dtype=T.float64,
                     requires_grad=True)
        kind = rng.randrange(3)
        y = x * 1 if kind == 0 else (T.zeros(3, 4, dtype=T.float64) if kind == 1
                                     else x.detach().clone())
        pre = [_rand_view(rng, y)(T, y) for _ in range(rng.randint(0, 2))]
        keep = []
        for _ in range(steps):
            v = y
            for _ in range(rng.randint(0, 3)):
                if v.numel() == 0 or v.dim() == 0:
                    break
                v = _rand_view(rng, v)(T, v)
            keep.append(v)
            if v.numel() == 0:
                continue
            name, op = rng.choice(_INPLACE)
            if v.dim() == 0 and name == "setitem":
                op = _INPLACE[0][1]
            r = rng.random()
            if r < 0.15:
                y.add_(x * 0.5)
            elif r < 0.3:
                y[1:, :2] = x[:2, 2:] * 3
            op(T, v, x)
        loss = (y * y).sum() + sum((k * k).sum() for k in keep + pre if k.numel())
        if not loss.requires_grad:
            return ["constant", loss.item()]
        loss.backward()
        return [loss.item(), x.grad.numpy().copy(), y.detach().numpy().copy()] + [
            None if k.grad_fn is None else type(k.grad_fn).__name__ for k in keep + pre] + [
            None if y.grad_fn is None else type(y.grad_fn).__name__,
            [k._version for k in keep + pre]]

    def safe(T: Any) -> Any:
        try:
            return run(T)
        except Exception as e:  # noqa: BLE001  (the error is what is compared)
            return ("err", type(e).__name__, str(e).split("\n[tapegrad hint]")[0])

    return safe(real), safe(tt)


@pytest.mark.parametrize("block", range(3))
def test_random_programs_more(block: int) -> None:
    for seed in range(block * 50, block * 50 + 50):
        a, b = _program2(seed)
        if isinstance(a, tuple) and a[2].startswith("a leaf Variable that requires grad"):
            # PyTorch re-derives a view's grad_fn only when it is read: a view made before
            # its base joined the graph and written in place unread is a "leaf" to its
            # check; here it was re-derived at once, and the program runs
            continue
        if isinstance(a, tuple) or isinstance(b, tuple):
            assert a == b, seed
            continue
        if a[0] == "constant":
            assert b[0] == "constant" and b[1] == pytest.approx(a[1], rel=1e-12), seed
            continue
        assert b[0] == pytest.approx(a[0], rel=1e-9), seed
        np.testing.assert_allclose(b[1], a[1], rtol=1e-9, atol=1e-12, err_msg=str(seed))
        np.testing.assert_allclose(b[2], a[2], rtol=1e-12, err_msg=str(seed))
        assert a[3:] == b[3:], seed
