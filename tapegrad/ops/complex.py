"""Complex numbers: ``real``, ``imag`` and ``conj``, and the gradient convention.

Gradients of complex tensors follow PyTorch's (and TensorFlow's) convention: for a
real loss ``L`` of ``z = x + iy`` the gradient is ``dL/dx + i dL/dy``, the conjugate
Wirtinger derivative times two.  Under it a holomorphic op's VJP is the conjugate of
the real formula applied to the conjugate cotangent, so ``multiply``, ``divide`` and
``matmul`` conjugate their other operand (:func:`holomorphic_vjp`), ``real`` sends
``g`` back as ``g + 0i``, ``imag`` as ``i g`` and ``conj`` as ``conj(g)``.  A complex
gradient that reaches a real input keeps its real part (the engine casts it), as
PyTorch's ``handle_r_to_c`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._core.registry import defop
from .._core.tensor import Tensor
from ._batch import elementwise


def is_complex(*vs: Any) -> bool:
    """Whether any of ``vs`` (tensors, arrays, numbers) is complex (cheap: every VJP of a
    product asks)."""
    for v in vs:
        d = v._data if isinstance(v, Tensor) else v
        dt = getattr(d, "dtype", None)
        if dt is not None:
            if dt.kind == "c":
                return True
        elif isinstance(d, complex):
            return True
    return False


@defop("real")
def real(x: Any) -> Any:
    return np.real(np.asarray(x)).copy()


@real.defvjp
def _(g: Tensor) -> Any:  # d Re z = Re dz: the cotangent comes back as g + 0i
    return (g,)


@defop("imag")
def imag(x: Any) -> Any:
    return np.imag(np.asarray(x)).copy()


@imag.defvjp
def _(g: Tensor) -> Any:  # d Im z = Im dz: the cotangent comes back as i g
    from .elementwise import multiply

    return (multiply(g, 1j),)


@defop("conj")
def conj(x: Any) -> Any:
    return np.conj(np.asarray(x))


@conj.defvjp
def _(g: Tensor) -> Any:
    return (conj(g),)


real.defjvp(lambda dx, x, *, out: real(dx))
imag.defjvp(lambda dx, x, *, out: imag(dx))
conj.defjvp(lambda dx, x, *, out: conj(dx))
real.defbatch(elementwise(real))
imag.defbatch(elementwise(imag))
conj.defbatch(elementwise(conj))


def holomorphic_vjp(vjp: Callable[..., Any]) -> Callable[..., Any]:
    """A VJP written for real numbers, made right for complex ones (PyTorch's convention).

    For a holomorphic op (``multiply``, ``divide``, ``matmul``) the complex VJP is
    ``conj(vjp(conj(g)))``; real inputs and cotangents take the real formula unchanged.
    """

    def rule(g: Tensor, *saved: Any, **kw: Any) -> Any:
        # the cotangent has the output's dtype (the engine casts it), and a product,
        # quotient or matmul is complex as soon as one operand is: g alone tells
        d = g._data if isinstance(g, Tensor) else g
        if getattr(d, "dtype", None) is None or d.dtype.kind != "c":
            return vjp(g, *saved, **kw)
        res = vjp(conj(g), *saved, **kw)
        return tuple(None if r is None else conj(r) for r in res)

    rule.__name__ = getattr(vjp, "__name__", "vjp")
    return rule
