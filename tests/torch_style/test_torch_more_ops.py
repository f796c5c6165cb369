"""The torch.* functions of ``tapegrad.torch._more``, ``torch.special`` and ``torch.fft``:
values against NumPy and closed forms, gradients (first and second order) against finite
differences, ``vmap`` against the loop and ``jvp`` against the VJP; no PyTorch needed."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch
from tapegrad.testing import GradcheckError, gradcheck

RNG = np.random.default_rng(5)


def _t(a: Any, grad: bool = False) -> Any:
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def _r(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def _perm(*shape: int) -> np.ndarray:
    n = int(np.prod(shape))
    return (RNG.permutation(n) / 3.0 - 1.0).reshape(shape)


# (id, fn of float64 tensors, inputs, second order too)
GRAD_CASES: list[tuple[str, Callable[..., Any], list[np.ndarray], bool]] = [
    ("atan", lambda x: torch.atan(x), [_r(3)], True),
    ("asin", lambda x: torch.asin(x), [RNG.uniform(-0.8, 0.8, 3)], True),
    ("atan2", lambda y, x: torch.atan2(y, x), [_r(3), _r(2, 1)], True),
    ("hypot", lambda a, b: torch.hypot(a, b), [_r(3), _r(3)], True),
    ("logaddexp", lambda a, b: torch.logaddexp(a, b), [_r(3) * 5, _r(3)], True),
    ("logaddexp2", lambda a, b: torch.logaddexp2(a, b), [_r(3), _r(3)], True),
    ("xlogy", lambda a, b: torch.xlogy(a, b), [_r(3), RNG.uniform(0.2, 2, 3)], True),
    ("xlog1py", lambda a, b: torch.special.xlog1py(a, b), [_r(3), RNG.uniform(0.2, 2, 3)],
     True),
    ("copysign", lambda a, b: torch.copysign(a, b), [_r(4), _r(4)], False),
    ("sinc", lambda x: torch.sinc(x), [_r(4)], True),
    ("logit", lambda x: torch.logit(x), [RNG.uniform(0.1, 0.9, 4)], True),
    ("erfinv", lambda x: torch.erfinv(x), [RNG.uniform(-0.8, 0.8, 4)], True),
    ("erfc", lambda x: torch.erfc(x), [_r(4)], True),
    ("i0", lambda x: torch.i0(x), [_r(4) * 3], True),
    ("i0e", lambda x: torch.special.i0e(x), [_r(4) * 3], True),
    ("i1", lambda x: torch.special.i1(x), [_r(4) * 3], True),
    ("i1e", lambda x: torch.special.i1e(x), [_r(4) * 3], True),
    ("ndtr", lambda x: torch.special.ndtr(x), [_r(4)], True),
    ("ndtri", lambda x: torch.special.ndtri(x), [RNG.uniform(0.1, 0.9, 4)], True),
    ("log_ndtr", lambda x: torch.special.log_ndtr(x), [_r(4) * 3], True),
    ("entr", lambda x: torch.special.entr(x), [RNG.uniform(0.1, 2, 4)], True),
    ("polygamma", lambda x: torch.polygamma(2, x), [RNG.uniform(0.5, 3, 4)], True),
    ("zeta_q", lambda q: torch.special.zeta(torch.tensor([2.0, 3.0], dtype=torch.float64), q),
     [RNG.uniform(0.5, 3, 2)], False),
    ("median_dim", lambda x: torch.median(x, 1).values, [_perm(3, 5)], True),
    ("median_all", lambda x: torch.median(x), [_perm(7)], True),
    ("kthvalue", lambda x: torch.kthvalue(x, 2, 0).values, [_perm(4, 3)], True),
    ("cummax", lambda x: torch.cummax(x, 1).values, [_perm(2, 5)], True),
    ("cummin", lambda x: torch.cummin(x, 0).values, [_perm(4, 2)], True),
    ("logcumsumexp", lambda x: torch.logcumsumexp(x, 1), [_r(2, 5)], True),
    ("logcumsumexp_spread", lambda x: torch.logcumsumexp(x * 40, 0), [_r(6, 2)], True),
    ("quantile", lambda x: torch.quantile(x, 0.3, dim=1), [_perm(3, 6)], True),
    ("quantile_q", lambda q: torch.quantile(_t(_perm(6)), q), [np.array([0.13, 0.77])], False),
    ("nanmean", lambda x: torch.nanmean(x, 0), [_r(3, 2)], True),
    ("std_mean", lambda x: torch.std_mean(x, 1)[0] + torch.std_mean(x, 1)[1], [_r(3, 4)], True),
    ("addmm", lambda i, a, b: torch.addmm(i, a, b, beta=0.5, alpha=2), [_r(2, 4), _r(2, 3),
                                                                         _r(3, 4)], True),
    ("baddbmm", lambda i, a, b: torch.baddbmm(i, a, b), [_r(2, 1, 4), _r(2, 3, 5), _r(2, 5, 4)],
     True),
    ("addbmm", lambda i, a, b: torch.addbmm(i, a, b), [_r(3, 4), _r(2, 3, 5), _r(2, 5, 4)],
     True),
    ("addmv_addr", lambda i, a, v: torch.addmv(i, a, v) + torch.addr(i, i, i).sum(),
     [_r(2), _r(2, 3), _r(3)], True),
    ("addcmul_addcdiv", lambda i, a, b: torch.addcmul(i, a, b, value=0.3)
     + torch.addcdiv(i, a, b.exp()), [_r(3), _r(3), _r(3)], True),
    ("tensordot", lambda a, b: torch.tensordot(a, b, dims=([0, 2], [1, 0])),
     [_r(3, 4, 2), _r(2, 3, 5)], True),
    ("kron", lambda a, b: torch.kron(a, b), [_r(2, 2), _r(3, 1)], True),
    ("cdist", lambda a, b: torch.cdist(a, b), [_r(3, 2), _r(4, 2)], True),
    ("cdist_p1", lambda a, b: torch.cdist(a, b, p=1.5), [_r(3, 2), _r(4, 2)], True),
    ("diff", lambda x: torch.diff(x, n=2, dim=0), [_r(4, 3)], True),
    ("trapezoid", lambda y, x: torch.trapezoid(y, x), [_r(2, 4), np.array([0, 1, 3, 4.5])],
     True),
    ("cumulative_trapezoid", lambda y: torch.cumulative_trapezoid(y), [_r(2, 4)], True),
    ("cov", lambda x: torch.cov(x), [_r(3, 5)], True),
    ("corrcoef", lambda x: torch.corrcoef(x), [_r(3, 5)], True),
    ("renorm", lambda x: torch.renorm(x, 2, 0, 1.0), [_r(3, 4) * 2], True),
    ("rot90", lambda x: torch.rot90(x, 3), [_r(2, 3)], True),
    ("take_along_dim", lambda x: torch.take_along_dim(x, torch.tensor([[1], [0]]), 1),
     [_r(2, 3)], True),
    ("masked_select", lambda x: torch.masked_select(x, x > 0), [_r(3, 3)], True),
    ("block_diag", lambda a, b: torch.block_diag(a, b), [_r(2, 2), _r(3)], True),
    ("combinations", lambda x: torch.combinations(x, 2), [_r(4)], True),
    ("vander", lambda x: torch.vander(x, 4), [_r(3)], True),
    ("float_power", lambda x: torch.float_power(x, 3), [_r(3)], True),
    ("fft", lambda x: torch.fft.fft(x).abs(), [_r(6)], True),
    ("rfft_ortho", lambda x: torch.fft.rfft(x, n=9, norm="ortho").real, [_r(8)], True),
    ("irfft", lambda x: torch.fft.irfft(torch.fft.rfft(x) * 2, n=7), [_r(7)], True),
    ("fft2_real", lambda x: torch.fft.ifft2(torch.fft.fft2(x) * 1j).imag, [_r(3, 4)], True),
    ("irfftn", lambda x: torch.fft.irfftn(torch.fft.rfftn(x)), [_r(2, 3, 4)], True),
    ("hfft", lambda x: torch.fft.hfft(torch.fft.ihfft(x)), [_r(6)], True),
    ("fftshift", lambda x: torch.fft.fftshift(x, dim=0), [_r(5, 2)], True),
    ("ifft_real", lambda x: torch.fft.ifft(x, n=7).imag, [_r(6)], True),
    ("ihfftn_hfftn", lambda x: torch.fft.hfftn(torch.fft.ihfftn(x) * 2, s=(3, 4)),
     [_r(3, 4)], True),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=lambda c: c[0])
def test_gradients_match_finite_differences(case: Any) -> None:
    name, fn, arrays, second = case
    xs = [_t(a, True) for a in arrays]
    assert gradcheck(fn, xs, order=2 if second else 1)


def test_values_against_numpy() -> None:
    x = _perm(4, 5)
    t = _t(x)
    np.testing.assert_array_equal(torch.median(t, 1).values.numpy(),
                                  np.sort(x, 1)[:, 2])
    np.testing.assert_array_equal(torch.median(t).numpy(), np.sort(x.ravel())[9])
    np.testing.assert_array_equal(torch.kthvalue(t, 4, 1).values.numpy(), np.sort(x, 1)[:, 3])
    np.testing.assert_array_equal(torch.cummax(t, 1).values.numpy(),
                                  np.maximum.accumulate(x, 1))
    np.testing.assert_allclose(torch.logcumsumexp(t, 1).numpy(),
                               np.logaddexp.accumulate(x, 1), rtol=1e-12)
    np.testing.assert_allclose(torch.quantile(t, 0.35, dim=0).numpy(),
                               np.quantile(x, 0.35, axis=0), rtol=1e-12)
    np.testing.assert_allclose(torch.cov(t).numpy(), np.cov(x), rtol=1e-12)
    np.testing.assert_allclose(torch.corrcoef(t).numpy(), np.corrcoef(x), rtol=1e-12)
    np.testing.assert_allclose(torch.kron(t, t).numpy(), np.kron(x, x), rtol=1e-12)
    np.testing.assert_allclose(torch.tensordot(t, t.T, 1).numpy(), x @ x.T, rtol=1e-12)
    np.testing.assert_allclose(torch.trapezoid(t).numpy(), np.trapezoid(x), rtol=1e-12)
    np.testing.assert_allclose(torch.diff(t, 2).numpy(), np.diff(x, 2), rtol=1e-12)
    np.testing.assert_allclose(torch.rot90(t).numpy(), np.rot90(x), rtol=0)
    np.testing.assert_allclose(torch.vander(t[0]).numpy(), np.vander(x[0]), rtol=1e-12)
    d = torch.cdist(t, t * 2).numpy()
    np.testing.assert_allclose(d, np.linalg.norm(x[:, None] - 2 * x[None], axis=-1),
                               rtol=1e-12)
    assert torch.bincount(torch.tensor([0, 3, 3])).tolist() == [1, 0, 0, 2]
    assert torch.histc(torch.tensor([0.0, 1.0, 1.0, 3.0]), bins=3, min=0, max=3).tolist() == \
        [1.0, 2.0, 1.0]
    assert torch.searchsorted(torch.tensor([1, 3, 5]), torch.tensor([3, 4])).tolist() == [1, 2]
    assert torch.isin(torch.tensor([1, 2, 3]), torch.tensor([3, 1])).tolist() == [True, False,
                                                                                  True]
    assert torch.tril_indices(3, 3).tolist() == [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    assert [p.shape[0] for p in torch.tensor_split(torch.arange(7), 3)] == [3, 2, 2]
    v, i, c = torch.unique_consecutive(torch.tensor([5, 5, 2, 5]), return_inverse=True,
                                       return_counts=True)
    assert (v.tolist(), i.tolist(), c.tolist()) == ([5, 2, 5], [0, 0, 1, 2], [2, 1, 1])


def test_special_values_against_closed_forms() -> None:
    x = np.array([-3.0, -0.5, 0.0, 0.7, 2.5, 40.0])
    t = _t(x)
    def i0_series(v: float) -> float:
        term, acc = 1.0, 1.0
        for k in range(1, 300):
            term *= v * v / 4 / (k * k)
            acc += term
        return acc

    series = np.array([i0_series(v) for v in x])
    np.testing.assert_allclose(torch.i0(t).numpy(), series, rtol=1e-12)
    np.testing.assert_allclose(torch.special.i0e(t).numpy(), series * np.exp(-np.abs(x)),
                               rtol=1e-12)
    np.testing.assert_allclose(torch.special.ndtr(t).numpy(),
                               [0.5 * math.erfc(-v / math.sqrt(2)) for v in x], rtol=1e-14)
    p = np.array([1e-12, 1e-4, 0.3, 0.5, 0.9, 1 - 1e-9])
    back = [0.5 * math.erfc(-v / math.sqrt(2)) for v in torch.special.ndtri(_t(p)).tolist()]
    np.testing.assert_allclose(back, p, rtol=1e-9)
    np.testing.assert_allclose(torch.special.log_ndtr(_t([-40.0])).numpy(),
                               [-804.6084420137538], rtol=1e-12)
    np.testing.assert_allclose(torch.special.zeta(_t([2.0, 4.0]), _t([1.0, 1.0])).numpy(),
                               [math.pi ** 2 / 6, math.pi ** 4 / 90], rtol=1e-14)
    np.testing.assert_allclose(torch.erfinv(torch.erf(t[:5])).numpy(), x[:5], rtol=1e-12,
                               atol=1e-15)
    assert torch.erfinv(torch.tensor([1e-8])).item() == pytest.approx(8.862269e-9, rel=1e-6)


def test_fft_values_against_numpy() -> None:
    x = _r(4, 6)
    t = _t(x)
    np.testing.assert_allclose(torch.fft.fft(t, n=8).numpy(), np.fft.fft(x, n=8), rtol=1e-12)
    np.testing.assert_allclose(torch.fft.rfft2(t, norm="ortho").numpy(),
                               np.fft.rfft2(x, norm="ortho"), rtol=1e-12)
    c = np.fft.rfft(x)
    np.testing.assert_allclose(torch.fft.irfft(torch.tensor(c), n=6).numpy(),
                               np.fft.irfft(c, n=6), rtol=1e-12)
    np.testing.assert_allclose(torch.fft.hfft(torch.tensor(c[0])).numpy(), np.fft.hfft(c[0]),
                               rtol=1e-12)
    np.testing.assert_allclose(torch.fft.fftfreq(5, 0.5).numpy(), np.fft.fftfreq(5, 0.5))
    assert torch.fft.fft(torch.ones(4)).dtype == torch.complex64
    assert torch.fft.irfft(torch.fft.rfft(torch.ones(4))).dtype == torch.float32


def test_value_selecting_reductions_route_the_gradient_to_the_index() -> None:
    x = torch.tensor([[1.0, 3.0, 3.0, 2.0, 3.0, 1.0]], requires_grad=True)
    r = torch.cummax(x, 1)
    assert r.indices.tolist() == [[0, 1, 2, 2, 4, 4]]
    r.values.sum().backward()
    assert x.grad.tolist() == [[1.0, 1.0, 2.0, 0.0, 2.0, 0.0]]
    x.grad = None
    m = torch.mode(x, 1)
    assert (m.values.tolist(), m.indices.tolist()) == ([3.0], [4])
    m.values.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0, 0.0, 1.0, 0.0]]
    y = torch.tensor([1.0, 2.0, 2.0, 3.0], requires_grad=True)
    torch.median(y).backward()   # ties share the gradient evenly (PyTorch's median())
    assert y.grad.tolist() == [0.0, 0.5, 0.5, 0.0]
    assert type(torch.median(y, 0)).__name__ == "median"
    assert torch.median(y, 0).values.grad_fn.name() == "MedianBackward1"
    assert torch.kthvalue(y, 1).values.grad_fn.name() == "KthvalueBackward0"
    assert torch.atan2(y, y).grad_fn.name() == "Atan2Backward0"


def test_methods_and_inplace_forms() -> None:
    a = torch.tensor([0.5, -0.25])
    b = a.clone()
    b.atan_()
    np.testing.assert_allclose(b.numpy(), np.arctan(a.numpy()), rtol=1e-6)
    m = torch.zeros(2, 2)
    m.addmm_(torch.eye(2), torch.ones(2, 2), alpha=2)
    assert m.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    n = torch.tensor([float("nan"), 1.0])
    n.nan_to_num_(nan=7.0)
    assert n.tolist() == [7.0, 1.0]
    assert a.diff().tolist() == [-0.75]
    assert torch.tensor([[1.0, 9.0, 3.0]]).median(1).indices.tolist() == [2]
    w = torch.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w.atan_()


def test_multinomial_statistics_and_generator() -> None:
    p = torch.tensor([0.1, 0.2, 0.3, 0.4])
    torch.manual_seed(0)
    draws = torch.multinomial(p, 20000, replacement=True)
    freq = np.bincount(draws.numpy(), minlength=4) / 20000
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.3, 0.4], atol=0.015)
    # without replacement: each row a permutation prefix, first draws follow p
    firsts = np.array([torch.multinomial(p, 4).tolist() for _ in range(3000)])
    assert all(sorted(r) == [0, 1, 2, 3] for r in firsts[:50])
    np.testing.assert_allclose(np.bincount(firsts[:, 0], minlength=4) / 3000, [0.1, 0.2, 0.3,
                                                                               0.4], atol=0.03)
    g1 = torch.Generator().manual_seed(3)
    g2 = torch.Generator().manual_seed(3)
    assert torch.multinomial(p, 5, True, generator=g1).tolist() == \
        torch.multinomial(p, 5, True, generator=g2).tolist()
    assert torch.multinomial(torch.tensor([[0.0, 1.0], [1.0, 0.0]]), 1).tolist() == [[1], [0]]
    with pytest.raises(RuntimeError, match="without replacement"):
        torch.multinomial(p, 5)


VMAP_CASES: list[tuple[str, Callable[..., Any]]] = [
    ("atan2", lambda x: torch.atan2(x, x + 2)),
    ("hypot", lambda x: torch.hypot(x, x * 2)),
    ("logaddexp", lambda x: torch.logaddexp(x, -x)),
    ("xlogy", lambda x: torch.xlogy(x, x * x + 1)),
    ("sinc_i0", lambda x: torch.sinc(x) + torch.i0(x)),
    ("logcumsumexp", lambda x: torch.logcumsumexp(x, 0)),
    ("fft", lambda x: torch.fft.rfft(x).abs()),
    ("irfft", lambda x: torch.fft.irfft(torch.fft.fft(x))),
    ("kron", lambda x: torch.kron(x, x)),
    ("addmv", lambda x: torch.addmv(x[:2], torch.ones(2, 3, dtype=torch.float64), x[:3])),
]


@pytest.mark.parametrize("case", VMAP_CASES, ids=lambda c: c[0])
def test_vmap_equals_the_loop(case: Any) -> None:
    _, fn = case
    xs = _t(_r(3, 4))
    got = torch.vmap(fn)(xs)
    want = torch.stack([fn(x) for x in xs])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("case", VMAP_CASES, ids=lambda c: c[0])
def test_jvp_equals_the_vjp(case: Any) -> None:
    _, fn = case
    x = _t(_r(4))
    v = _t(_r(4))
    _, tangent = torch.func.jvp(fn, (x,), (v,))
    out, vjp_fn = torch.func.vjp(fn, x)
    u = _t(RNG.standard_normal(tuple(out.shape)))
    (g,) = vjp_fn(u)
    np.testing.assert_allclose(float((tangent * u).sum()), float((g * v).sum()), rtol=1e-10)


def test_a_wrong_rule_fails_the_check() -> None:
    from tapegrad.ops import torch_more as M

    saved = M.hypot.vjp
    try:
        M.hypot.vjp = lambda g, x, y, out, needs: (g, g)  # type: ignore[assignment]
        with pytest.raises(GradcheckError):
            gradcheck(lambda a, b: torch.hypot(a, b), [_t(_r(3), True), _t(_r(3), True)])
    finally:
        M.hypot.vjp = saved


TRACED_CASES: list[tuple[str, Callable[..., Any]]] = [
    ("median_dim", lambda v: torch.median(v, 0)),
    ("median_all", lambda v: torch.median(v)),
    ("kthvalue", lambda v: torch.kthvalue(v, 2)),
    ("cummax", lambda v: torch.cummax(v, 0)),
    ("cummin", lambda v: torch.cummin(v, 0)),
    ("quantile", lambda v: torch.quantile(v, 0.3)),
    ("renorm", lambda v: torch.renorm(v[None], 2, 0, 0.5)),
    ("searchsorted", lambda v: torch.searchsorted(_t([-0.5, 0.0, 0.5]), v)),
    ("isin", lambda v: torch.isin(v, v[:2])),
    ("signbit", lambda v: torch.signbit(v)),
]


@pytest.mark.parametrize("case", TRACED_CASES, ids=lambda c: c[0])
def test_value_reading_functions_under_vmap(case: Any) -> None:
    _, fn = case
    xs = _t(np.array([[1.0, 3.0, 3.0, 2.0, 3.0, -1.0], [0.0, -1.0, 2.0, 2.0, 5.0, -3.0]]))
    got = torch.vmap(fn)(xs)
    want = [fn(x) for x in xs]
    for i, g in enumerate(got if isinstance(got, tuple) else (got,)):
        w = torch.stack([r[i] if isinstance(r, tuple) else r for r in want])
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_per_example_gradient_of_cummax_and_median() -> None:
    xs = _t(_perm(3, 5))

    def f(v: Any) -> Any:
        return torch.cummax(v, 0).values.sum() + torch.median(v, 0).values * 3

    got = torch.vmap(torch.func.grad(f))(xs)
    want = torch.stack([torch.func.grad(f)(x) for x in xs])
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_functions_that_read_values_refuse_vmap() -> None:
    xs = _t(_r(2, 3))
    for fn in (lambda v: torch.mode(v, 0), lambda v: torch.bincount(v.long().abs()),
               lambda v: torch.multinomial(v.abs(), 1), lambda v: torch.nanmedian(v, 0)):
        with pytest.raises(NotImplementedError, match="cannot run under vmap"):
            torch.vmap(fn)(xs)


def test_value_reading_functions_under_torch_compile_give_eager_results() -> None:
    def f(x: Any) -> Any:
        return (torch.median(x, 0).values + torch.quantile(x, 0.5) + torch.mode(x).values
                + torch.cummax(x, 0).values.sum() + torch.bincount(x.long().abs()).sum()
                + torch.kthvalue(x, 2).values + torch.searchsorted(x.sort().values, x).sum())

    g = torch.compile(f)
    for v in ([3.0, 1.0, 2.0], [5.0, 9.0, 7.0], [2.0, 2.0, 8.0], [3.0, 1.0, 2.0]):
        x = torch.tensor(v)
        assert g(x).item() == f(x).item()


@pytest.mark.parametrize("case", GRAD_CASES, ids=lambda c: c[0])
def test_forward_mode_agrees_with_reverse_mode(case: Any) -> None:
    _, fn, arrays, _ = case
    rng = np.random.default_rng(0)
    xs = [_t(a) for a in arrays]
    vs = [_t(rng.standard_normal(a.shape)) for a in arrays]
    _, tangent = torch.func.jvp(fn, tuple(xs), tuple(vs))
    out, pull = torch.func.vjp(fn, *xs)
    u = _t(rng.standard_normal(tuple(out.shape)))
    lhs = float((tangent * u).sum())
    rhs = sum(float((g * v).sum()) for g, v in zip(pull(u), vs) if g is not None)
    assert lhs == pytest.approx(rhs, rel=1e-9, abs=1e-9)


def test_logcumsumexp_is_linear_in_memory_and_stable() -> None:
    x = _t(np.array([-1000.0, 0.0, 3.0, -2.0, 50.0]), True)
    y = torch.logcumsumexp(x, 0)
    np.testing.assert_allclose(y.detach().numpy(), np.logaddexp.accumulate(x.detach().numpy()),
                               rtol=1e-15)
    (y * _t([1.0, -2.0, 3.0, 0.5, -1.0])).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    long = torch.logcumsumexp(_t(RNG.standard_normal(200_000)), 0)  # no n x n intermediate
    assert long.shape == (200_000,)
