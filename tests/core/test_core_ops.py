"""The op table checked three ways: finite differences (orders 1-3), HIPS autograd, PyTorch."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.testing import gradcheck
from tests.core.op_cases import CASES, SPEC_OPS, OpCase, all_cases

F64 = [c for c in CASES]
BOTH = all_cases()


def _ids(cases: Sequence[OpCase]) -> list[str]:
    return [c.name for c in cases]


def _tol(c: OpCase) -> dict[str, float]:
    lowp = any(a.dtype == np.float32 for a in c.inputs)
    return {"rtol": 2e-3, "atol": 2e-4} if lowp else {"rtol": 1e-7, "atol": 1e-9}


def _outs(out: Any) -> list[Any]:
    if isinstance(out, (list, tuple)) or type(out).__name__ == "SequenceBox":
        return list(out)
    return [out]


def test_every_spec_op_is_covered() -> None:
    covered = {c.op for c in CASES}
    missing = [op for op in SPEC_OPS if op not in covered]
    assert not missing, f"ops without a case: {missing}"
    assert len({c.name for c in CASES}) == len(CASES)


# ---------------------------------------------------------------------------- finite differences
@pytest.mark.parametrize("c", BOTH, ids=_ids(BOTH))
def test_gradcheck_order1(c: OpCase) -> None:
    assert gradcheck(c.fn, c.tensors(), order=1, n_directions=3)


ORDER2 = [c for c in BOTH if c.order >= 2]


@pytest.mark.parametrize("c", ORDER2, ids=_ids(ORDER2))
def test_gradcheck_order2(c: OpCase) -> None:
    assert gradcheck(c.fn, c.tensors(), order=2)


ORDER3 = [
    pytest.param(c, marks=pytest.mark.slow) if c.slow else c for c in F64 if c.order >= 3
]


@pytest.mark.parametrize("c", ORDER3, ids=[c.name for c in F64 if c.order >= 3])
def test_gradcheck_order3(c: OpCase) -> None:
    assert gradcheck(c.fn, c.tensors(), order=3, n_directions=1)


# ---------------------------------------------------------------------------- oracles
def _float_idx(arrays: Sequence[np.ndarray]) -> list[int]:
    return [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]


def _directions(c: OpCase, seed: int = 1) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Random cotangents ``u`` (one per output) and second-order weights ``w`` (per input)."""
    rng = np.random.default_rng(seed)
    with tg.no_grad():
        outs = _outs(c.fn(*c.tensors()))
    u = [rng.standard_normal(o.shape) for o in outs]
    w = [rng.standard_normal(c.inputs[i].shape) for i in _float_idx(c.inputs)]
    return u, w


def _tapegrad_derivs(c: OpCase, u: list[np.ndarray], w: list[np.ndarray]) -> tuple[
        list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Forward values, gradients of <out, u>, and gradients of <grad, w>."""
    fidx = _float_idx(c.inputs)
    xs = [tg.tensor(a, requires_grad=i in fidx) for i, a in enumerate(c.inputs)]
    outs = _outs(c.fn(*xs))
    s = sum(((o * tg.tensor(ui.astype(o.dtype))).sum() for o, ui in zip(outs, u)), tg.tensor(0.0))
    gs = tg.grad(s, [xs[i] for i in fidx], create_graph=True, allow_unused=True)
    h = sum(((g * tg.tensor(wi.astype(g.dtype))).sum() for g, wi in zip(gs, w) if g is not None),
            tg.tensor(0.0))
    hs: Sequence[Any] = [None] * len(fidx)
    if h.requires_grad:
        hs = tg.grad(h, [xs[i] for i in fidx], allow_unused=True)
    vals = [o.detach().numpy() for o in outs]
    g1 = [np.zeros(c.inputs[i].shape) if g is None else g.detach().numpy() for i, g in zip(fidx, gs)]
    g2 = [np.zeros(c.inputs[i].shape) if g is None else g.numpy() for i, g in zip(fidx, hs)]
    return vals, g1, g2


def _assert_close(name: str, got: Sequence[Any], want: Sequence[Any], tol: dict[str, float]) -> None:
    assert len(got) == len(want), name
    for k, (a, b) in enumerate(zip(got, want)):
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        assert a.shape == b.shape, f"{name}[{k}]: shape {a.shape} != {b.shape}"
        np.testing.assert_allclose(a, b, rtol=tol["rtol"], atol=tol["atol"], err_msg=f"{name}[{k}]")


AG_CASES = [c for c in F64 if c.ref is not None]


@pytest.mark.filterwarnings("ignore:Output seems independent of input")
@pytest.mark.parametrize("c", AG_CASES, ids=_ids(AG_CASES))
def test_against_autograd(c: OpCase) -> None:
    """Forward values, first and second derivatives equal HIPS autograd's."""
    import autograd
    import autograd.numpy as anp

    assert c.ref is not None
    ref: Callable[..., Any] = c.ref
    u, w = _directions(c)
    vals, g1, g2 = _tapegrad_derivs(c, u, w)
    fidx = _float_idx(c.inputs)
    arrays = list(c.inputs)

    def call(*fargs: Any) -> list[Any]:
        args = list(arrays)
        for i, a in zip(fidx, fargs):
            args[i] = a
        return _outs(ref(anp, *args))

    def scal(*fargs: Any) -> Any:
        return sum(anp.sum(o * ui) for o, ui in zip(call(*fargs), u))

    argnum = tuple(range(len(fidx)))
    grad1 = autograd.grad(scal, argnum)

    def hfun(*fargs: Any) -> Any:
        return sum(anp.sum(g * wi) for g, wi in zip(grad1(*fargs), w))

    fargs = [arrays[i] for i in fidx]
    _assert_close(f"{c.name} forward", vals, [np.asarray(v) for v in call(*fargs)], _tol(c))
    _assert_close(f"{c.name} grad", g1, list(grad1(*fargs)), _tol(c))
    if c.order >= 2:
        _assert_close(f"{c.name} grad2", g2, list(autograd.grad(hfun, argnum)(*fargs)), _tol(c))


T_CASES = [c for c in BOTH if c.tref is not None]


@pytest.mark.parametrize("c", T_CASES, ids=_ids(T_CASES))
def test_against_torch(c: OpCase) -> None:
    """Forward values, first and second derivatives equal real PyTorch's."""
    torch = pytest.importorskip("torch")
    assert c.tref is not None
    u, w = _directions(c)
    vals, g1, g2 = _tapegrad_derivs(c, u, w)
    fidx = _float_idx(c.inputs)
    ts = [torch.tensor(a, requires_grad=i in fidx) for i, a in enumerate(c.inputs)]
    outs = _outs(c.tref(torch, *ts))
    s = sum((o * torch.tensor(ui, dtype=o.dtype)).sum() for o, ui in zip(outs, u))
    floats = [ts[i] for i in fidx]
    gs = torch.autograd.grad(s, floats, create_graph=True, allow_unused=True)
    gs = [torch.zeros_like(x) if g is None else g for x, g in zip(floats, gs)]
    tol = _tol(c)
    _assert_close(f"{c.name} forward", vals, [o.detach().numpy() for o in outs], tol)
    _assert_close(f"{c.name} grad", g1, [g.detach().numpy(force=True) for g in gs], tol)
    if c.order >= 2:
        h = sum((g * torch.tensor(wi, dtype=g.dtype)).sum() for g, wi in zip(gs, w))
        if h.requires_grad:
            hs = torch.autograd.grad(h, floats, allow_unused=True)
            hs = [torch.zeros_like(x) if g is None else g for x, g in zip(floats, hs)]
        else:
            hs = [torch.zeros_like(x) for x in floats]
        _assert_close(f"{c.name} grad2", g2, [g.detach().numpy(force=True) for g in hs], tol)


@pytest.mark.parametrize("c", [c for c in BOTH if c.name.endswith("float32]")][:20],
                         ids=_ids([c for c in BOTH if c.name.endswith("float32]")][:20]))
def test_float32_stays_float32(c: OpCase) -> None:
    """float32 inputs give float32 outputs and float32 gradients."""
    fidx = _float_idx(c.inputs)
    xs = [tg.tensor(a, requires_grad=i in fidx) for i, a in enumerate(c.inputs)]
    outs = _outs(c.fn(*xs))
    for o in outs:
        assert o.dtype == np.float32, o.dtype
    s = sum((o.sum() for o in outs), tg.tensor(np.float32(0)))
    for g in tg.grad(s, [xs[i] for i in fidx], allow_unused=True):
        assert g is None or g.dtype == np.float32
