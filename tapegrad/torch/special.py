"""``torch.special``: SciPy-named special functions, each differentiable as PyTorch's.

>>> import tapegrad.torch as torch
>>> torch.special.expit(torch.tensor([0.0]))
tensor([0.5000])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops as core
from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from ..ops import torch_more as M
from . import _more
from . import _ops as O
from ._tensor import _wrap, promote


def _f(input: Any, name: str) -> Tensor:
    return O._floatify(O._check_tensor(input, f"special_{name}"))


def erf(input: Tensor, *, out: Any = None) -> Tensor:
    """The error function."""
    return core.erf(_f(input, "erf"))


erfc = _more.erfc
erfinv = _more.erfinv
logit = _more.logit
xlogy = _more.xlogy
xlog1py = _more.xlog1py
digamma = psi = _more.digamma
gammaln = _more.lgamma
polygamma = _more.polygamma
multigammaln = _more.mvlgamma
i0 = _more.i0
sinc = _more.sinc
expm1 = O.expm1
log1p = O.log1p
exp2 = O.exp2
round = O.round  # noqa: A001


def erfcx(input: Tensor, *, out: Any = None) -> Tensor:
    """The scaled complementary error function ``exp(x^2) erfc(x)``."""
    return M.erfcx(_f(input, "erfcx"))


def expit(input: Tensor, *, out: Any = None) -> Tensor:
    """The logistic sigmoid."""
    return core.sigmoid(_f(input, "expit"))


def i0e(input: Tensor, *, out: Any = None) -> Tensor:
    """``exp(-|x|) I0(x)``."""
    return M.i0e(_f(input, "i0e"))


def i1(input: Tensor, *, out: Any = None) -> Tensor:
    """The modified Bessel function of the first kind, order 1."""
    return M.i1(_f(input, "i1"))


def i1e(input: Tensor, *, out: Any = None) -> Tensor:
    """``exp(-|x|) I1(x)``."""
    return M.i1e(_f(input, "i1e"))


def ndtr(input: Tensor, *, out: Any = None) -> Tensor:
    """The standard normal CDF, as PyTorch composes it: ``(1 + erf(x / sqrt 2)) / 2`` in the
    input's dtype (so the far left tail is 0 in float32, as there)."""
    x = _f(input, "ndtr")
    return core.multiply(core.add(core.erf(core.multiply(x, _SQRT1_2)), 1.0), 0.5)


_SQRT1_2 = 0.7071067811865476


def ndtri(input: Tensor, *, out: Any = None) -> Tensor:
    """The inverse of :func:`ndtr`."""
    return M.ndtri(_f(input, "ndtri"))


def log_ndtr(input: Tensor, *, out: Any = None) -> Tensor:
    """``log(ndtr(x))``, accurate in the left tail."""
    return M.log_ndtr(_f(input, "log_ndtr"))


def entr(input: Tensor, *, out: Any = None) -> Tensor:
    """``-x log(x)`` (0 at 0, -inf below)."""
    return M.entr(_f(input, "entr"))


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False, *, out: Any = None) -> Tensor:
    """``log(sum(exp(x), dim))``."""
    return O.logsumexp(input, dim, keepdim)


def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Softmax along ``dim``."""
    return O.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Log-softmax along ``dim``."""
    return O.log_softmax(input, dim, dtype)


def zeta(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """The Hurwitz zeta function ``sum_k (k + other)^-input`` (not differentiable in
    ``input``; in ``other``: ``-input * zeta(input + 1, other)``, PyTorch's formula)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = O._t(input)
    a, b = promote(input, other, "zeta")
    a, b = O._t(a), O._t(b)
    if a._data.dtype.kind not in "fc":
        a = core.cast(a, dtype=np.float32)
    if b._data.dtype.kind not in "fc" or b._data.dtype != a._data.dtype:
        b = core.cast(b, dtype=a._data.dtype)
    _more._no_trace("special.zeta", a, b)
    val = M.zeta_np(a._data, b._data)
    if _more.tracked(a):
        raise hinted(NotImplementedError(with_hint(
            "the derivative for 'zeta' is not implemented.",
            "zeta is differentiable only in its second argument")))
    if _more.tracked(b):
        coef = _wrap((-a._data * M.zeta_np(a._data + 1, b._data)).astype(val.dtype))
        # zeta's value with the first-order gradient coef * g: (b - b0) * coef + val at b0
        res = core.add(core.multiply(core.subtract(b, _wrap(b._data.copy())), coef), _wrap(val))
        res._data[...] = val
        return res
    return _wrap(val)



__all__ = ["erf", "erfc", "erfcx", "erfinv", "expit", "logit", "xlogy", "xlog1py", "gammaln",
           "digamma", "psi", "polygamma", "multigammaln", "i0", "i0e", "i1", "i1e", "ndtr",
           "ndtri", "log_ndtr", "sinc", "entr", "logsumexp", "softmax", "log_softmax", "round",
           "exp2", "expm1", "log1p", "zeta"]
