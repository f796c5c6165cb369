"""Gradient checking for users' own functions and ops.

``gradcheck`` compares reverse-mode gradients with central finite differences
along random directions (cheap for any input size), at first order and,
with ``order=2`` or more, on the gradient itself (differentiating the
backward pass, so it also checks that VJPs are written in tapegrad ops).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._core.mode import enable_grad, no_grad
from ._core.tensor import Tensor, make
from .autodiff.entry import grad


class GradcheckError(AssertionError):
    """Raised when analytic and numeric gradients disagree."""


def _scalarize(out: Any, u: list[np.ndarray]) -> Tensor:
    outs = out if isinstance(out, (list, tuple)) else [out]
    total: Any = None
    for o, ui in zip(outs, u):
        if o is None:
            continue
        term = (o * make(ui)).sum()
        total = term if total is None else total + term
    return total


def _default_eps(dtype: np.dtype) -> float:
    return 1e-6 if dtype == np.float64 else 1e-2 if dtype == np.float16 else 1e-3


def gradcheck(
    fn: Callable[..., Any],
    inputs: Sequence[Any],
    *,
    order: int = 1,
    eps: float | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    n_directions: int = 2,
    seed: int = 0,
    raise_exception: bool = True,
) -> bool:
    """Check ``fn``'s gradients (up to ``order``) against central differences.

    ``inputs`` are tensors (or arrays); floating ones are differentiated.
    Returns True, or raises :class:`GradcheckError` describing the mismatch.

    Examples
    --------
    >>> import tapegrad as tg
    >>> from tapegrad.testing import gradcheck
    >>> gradcheck(lambda x: tg.sin(x) * x, [tg.tensor([0.3, 1.2])], order=2)
    True
    """
    rng = np.random.default_rng(seed)
    xs = [x.detach() if isinstance(x, Tensor) else make(np.asarray(x)) for x in inputs]
    diff = [i for i, x in enumerate(xs) if x._data.dtype.kind in "fc"]
    try:
        _check(fn, xs, diff, order, eps, atol, rtol, n_directions, rng)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _check(fn: Callable[..., Any], xs: list[Tensor], diff: list[int], order: int,
           eps: float | None, atol: float | None, rtol: float | None, n_dir: int,
           rng: np.random.Generator) -> None:
    dtype = np.result_type(*[xs[i]._data.dtype for i in diff]) if diff else np.dtype(np.float64)
    e = eps if eps is not None else _default_eps(dtype)
    low = dtype != np.float64
    at = atol if atol is not None else (1e-2 if low else 1e-5)
    rt = rtol if rtol is not None else (1e-2 if low else 1e-3)

    with no_grad():
        out0 = fn(*xs)
    outs0 = out0 if isinstance(out0, (list, tuple)) else [out0]
    u = [rng.standard_normal(np.shape(o._data)).astype(o._data.dtype) if o is not None else None
         for o in outs0]

    def analytic(args: list[Tensor], create: bool) -> list[Tensor | None]:
        leaves = [a if a._rg or i not in diff else a.detach().requires_grad_(True)
                  for i, a in enumerate(args)]
        with enable_grad():
            s = _scalarize(fn(*leaves), u)  # type: ignore[arg-type]
            if s._node is None:
                return [None for _ in diff]
            gs = grad(s, [leaves[i] for i in diff], create_graph=create, allow_unused=True)
        return list(gs)

    def f_scalar(args: list[Tensor]) -> float:
        with no_grad():
            return float(_scalarize(fn(*args), u)._data)  # type: ignore[arg-type]

    gs = analytic(xs, False)
    for _ in range(n_dir):
        vs = {i: rng.standard_normal(xs[i]._data.shape).astype(xs[i]._data.dtype) for i in diff}
        # keep each input's style: a front-end's methods (x.var(), x.max(dim)) must mean the same
        plus = [make(x._data + e * vs[i], None, False, x._style) if i in vs else x
                for i, x in enumerate(xs)]
        minus = [make(x._data - e * vs[i], None, False, x._style) if i in vs else x
                 for i, x in enumerate(xs)]
        num = (f_scalar(plus) - f_scalar(minus)) / (2 * e)
        ana = 0.0
        for g, i in zip(gs, diff):
            if g is not None:
                ana += float(np.sum(g._data * vs[i]))
        if not np.isclose(ana, num, atol=at, rtol=rt):
            raise GradcheckError(
                f"gradcheck failed at order 1: directional derivative analytic={ana!r} "
                f"numeric={num!r} (atol={at}, rtol={rt})"
            )
    if order >= 2 and diff:
        # check the gradient function itself: h(x) = <grad f(x), w>
        w = {i: rng.standard_normal(xs[i]._data.shape).astype(xs[i]._data.dtype) for i in diff}

        def gfn(*args: Tensor) -> Any:
            gs2 = analytic(list(args), True)
            total: Any = None
            for g, i in zip(gs2, diff):
                if g is None:
                    continue
                term = (g * make(w[i])).sum()
                total = term if total is None else total + term
            return total if total is not None else make(np.zeros((), dtype=dtype))

        _check(gfn, xs, diff, order - 1, eps, atol, rtol, n_dir, rng)


def gradgradcheck(fn: Callable[..., Any], inputs: Sequence[Any], **kwargs: Any) -> bool:
    """Second-order :func:`gradcheck`."""
    kwargs.setdefault("order", 2)
    return gradcheck(fn, inputs, **kwargs)
