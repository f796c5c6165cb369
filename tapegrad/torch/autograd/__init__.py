"""``torch.autograd``: ``grad``, ``backward``, ``Function``, ``gradcheck``, anomaly mode.

Everything here calls the one core engine (:func:`tapegrad.autodiff.entry.grad` and
:func:`tapegrad.autodiff.entry.backward`); only argument conventions and PyTorch's
messages are added.

>>> import tapegrad.torch as torch
>>> x = torch.tensor(2.0, requires_grad=True)
>>> y = x * x * x
>>> (dy,) = torch.autograd.grad(y, x, create_graph=True)
>>> dy, torch.autograd.grad(dy, x)[0]
(tensor(12., grad_fn=<AddBackward0>), tensor(12.))
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..._core import mode
from ..._core.errors import hinted, with_hint
from ..._core.registry import ANOMALY
from ..._core.tensor import TORCH, Tensor, make
from ...autodiff import entry
from . import forward_ad, functional, graph, profiler
from .function import BackwardCFunction, Function, FunctionCtx, InplaceFunction, once_differentiable
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled

_STATE = mode.STATE


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """Gradients of ``outputs`` (summed) with respect to ``inputs``, as a tuple.

    ``.grad`` is not touched.  An input that does not reach the outputs raises
    unless ``allow_unused=True`` (then its entry is ``None``, or zeros with
    ``materialize_grads=True``).

    Examples
    --------
    >>> import tapegrad.torch as torch
    >>> a = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> torch.autograd.grad((a * a).sum(), a)
    (tensor([2., 4.]),)
    """
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if is_grads_batched:
        raise hinted(NotImplementedError(with_hint("is_grads_batched=True is not supported",
                                            "loop over the batch of grad_outputs")))
    for i, t in enumerate(ins):
        if not isinstance(t, Tensor):
            raise hinted(TypeError(with_hint(
                f"grad(): argument 'inputs' must be tuple of Tensors, but found element of "
                f"type {type(t).__name__} at pos {i}", "pass the tensors to differentiate")))
    gos = None
    if grad_outputs is not None:
        gos = list(_as_tuple(grad_outputs))
        if len(gos) != len(outs):
            raise hinted(RuntimeError(with_hint(
                f"grad requires one grad_output per output: got {len(gos)} grad_outputs and "
                f"{len(outs)} outputs", "pass one grad_output (or None) per output")))
    if allow_unused is None:
        allow_unused = materialize_grads
    res = entry.grad(list(outs), list(ins), gos, retain_graph, create_graph, True)
    out: list[Tensor | None] = []
    for i, (t, g) in enumerate(zip(ins, res)):
        if g is None:
            if not allow_unused:
                raise hinted(RuntimeError(with_hint(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.",
                    "that input does not reach any output; pass allow_unused=True to get None")))
            if materialize_grads:
                g = make(np.zeros_like(t._data), None, False, TORCH)
        out.append(g)
    return tuple(out)


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves.

    Nothing is written unless the whole backward pass succeeds.

    >>> import tapegrad.torch as torch
    >>> w = torch.tensor(3.0, requires_grad=True)
    >>> torch.autograd.backward(w * w); w.grad
    tensor(6.)
    """
    if grad_tensors is None:
        grad_tensors = grad_variables
    from .._tensor import backward_check

    backward_check(create_graph, inputs, 3)
    outs = list(_as_tuple(tensors))
    gts = None if grad_tensors is None else list(_as_tuple(grad_tensors))
    entry.backward(outs, gts, retain_graph, create_graph, inputs)


# ----------------------------------------------------------------------------- anomaly mode
class detect_anomaly:
    """Context manager / decorator: a backward that produces NaN/inf raises, naming the
    forward op (``MulBackward0``, ...) and the line of user code that ran it.

    >>> import tapegrad.torch as torch
    >>> import warnings; warnings.simplefilter("ignore")
    >>> x = torch.tensor([0.0], requires_grad=True)
    >>> with torch.autograd.detect_anomaly():
    ...     y = torch.sqrt(x) * 0
    ...     try:
    ...         y.sum().backward()
    ...     except RuntimeError as e:
    ...         print(str(e).splitlines()[0])
    Function 'SqrtBackward0' returned nan values in its 0th output.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self._prev: list[bool] = []

    def __enter__(self) -> None:
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )
        self._prev.append(ANOMALY[0])
        ANOMALY[0] = self.check_nan

    def __exit__(self, *exc: object) -> None:
        ANOMALY[0] = self._prev.pop()

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Turn anomaly mode on or off (function, context manager)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._prev = ANOMALY[0]
        ANOMALY[0] = bool(mode) and check_nan

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        ANOMALY[0] = self._prev


def is_anomaly_enabled() -> bool:
    return bool(ANOMALY[0])


# ----------------------------------------------------------------------------- gradcheck
class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` when analytical and numerical gradients differ."""


def _flat_outputs(out: Any) -> list[Tensor]:
    if isinstance(out, Tensor):
        return [out]
    return [o for o in out if isinstance(o, Tensor)]


def _forward_jacobians(func: Callable[..., Any], inputs: tuple[Any, ...],
                       outs: list[Tensor]) -> list[list[np.ndarray]]:
    """The analytical Jacobians by forward mode: one JVP per input element."""
    from ...autodiff.functional import ACTIVE, jvp

    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._rg]
    fwd = [[np.zeros((o._data.size, inputs[i]._data.size)) for i in diff] for o in outs]
    primals = [x.detach() if isinstance(x, Tensor) else x for x in inputs]
    tpos = [i for i, x in enumerate(inputs) if isinstance(x, Tensor)]

    def f(*ts: Tensor) -> tuple[Tensor, ...]:
        args = list(primals)
        for i, t in zip(tpos, ts):
            args[i] = t
        ACTIVE[0] -= 1  # PyTorch's gradcheck uses forward_ad (dual_level), no functorch
        try:
            return tuple(_flat_outputs(func(*args)))
        finally:
            ACTIVE[0] += 1

    for m, i in enumerate(diff):
        x = inputs[i]
        for j in range(x._data.size):
            tangents = []
            for p in tpos:
                t = np.zeros_like(inputs[p]._data)
                if p == i:
                    t.reshape(-1)[j] = 1
                tangents.append(make(t, None, False, TORCH))
            _, touts = jvp(f, tuple(primals[p] for p in tpos), tuple(tangents))
            for k, t in enumerate(touts):
                fwd[k][m][:, j] = t._data.reshape(-1)
    return fwd


def _jacobians(func: Callable[..., Any], inputs: tuple[Any, ...], eps: float,
               create_graph: bool = False, backward: bool = True
               ) -> tuple[list[list[np.ndarray]], list[list[np.ndarray]], list[Tensor]]:
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._rg]
    outs = _flat_outputs(func(*inputs))
    # analytical: one vector-Jacobian product per output element
    ana = [[np.zeros((o._data.size, inputs[i]._data.size)) for i in diff] for o in outs]
    for k, o in enumerate(outs if backward else ()):
        if o._node is None and not o._rg:
            continue
        for j in range(o._data.size):
            seed = np.zeros(o._data.shape, dtype=o._data.dtype)
            seed.reshape(-1)[j] = 1
            gs = entry.grad([o], [inputs[i] for i in diff],
                             [make(seed, None, False, TORCH)], True, False, True)
            for m, g in enumerate(gs):
                if g is not None:
                    ana[k][m][j] = g._data.reshape(-1)
    # numerical: central differences, one input element at a time
    num = [[np.zeros((o._data.size, inputs[i]._data.size)) for i in diff] for o in outs]
    with mode.no_grad():
        for m, i in enumerate(diff):
            x = inputs[i]
            flat = x._data.reshape(-1)
            for j in range(flat.size):
                old = flat[j].item()
                flat[j] = old + eps
                plus = [o._data.astype(np.float64).reshape(-1)
                        for o in _flat_outputs(func(*inputs))]
                flat[j] = old - eps
                minus = [o._data.astype(np.float64).reshape(-1)
                         for o in _flat_outputs(func(*inputs))]
                flat[j] = old
                for k in range(len(outs)):
                    num[k][m][:, j] = (plus[k] - minus[k]) / (2 * eps)
    return num, ana, outs


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Compare analytical Jacobians with central finite differences (PyTorch's ``gradcheck``).

    Returns True, or raises :class:`GradcheckError` ("Jacobian mismatch for
    output i with respect to input j, ...").  Use float64 inputs.

    >>> import tapegrad.torch as torch
    >>> x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradcheck(lambda t: (t * t).sin(), (x,))
    True
    """
    ins = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    diff = [i for i, x in enumerate(ins) if isinstance(x, Tensor) and x._rg]
    if not diff:
        raise hinted(ValueError(with_hint(
            "gradcheck expects at least one input tensor to require gradient, but none of the "
            "them have requires_grad=True.", "create the inputs with requires_grad=True")))
    for i in diff:
        if ins[i]._data.dtype not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ", UserWarning, stacklevel=2)
    num, ana, outs = _jacobians(func, ins, eps, backward=check_backward_ad)
    checks: list[tuple[str, list[list[np.ndarray]]]] = []
    if check_backward_ad:
        checks.append(("Jacobian mismatch", ana))
    if check_forward_ad:  # the forward-mode Jacobian, one JVP per input element
        checks.append(("Jacobian computed with forward mode mismatch",
                       _forward_jacobians(func, ins, outs)))
    for what, jac in checks:
        for k in range(len(outs)):
            for m, i in enumerate(diff):
                n_, a_ = num[k][m], jac[k][m]
                if not np.allclose(a_, n_, rtol=rtol, atol=atol):
                    if not raise_exception:
                        return False
                    raise GradcheckError(
                        f"{what} for output {k} with respect to input {i},\n"
                        f"numerical:{make(n_.T.copy(), None, False, TORCH)!r}\n"
                        f"analytical:{make(a_.T.copy(), None, False, TORCH)!r}\n")
    return True


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second-order gradients: ``gradcheck`` of the first-order gradient function."""
    ins = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    outs = _flat_outputs(func(*ins))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        gos = [make(rng.standard_normal(o._data.shape).astype(o._data.dtype), None, True, TORCH)
               for o in outs]
    else:
        gos = list(_as_tuple(grad_outputs))
    diff = [x for x in ins if isinstance(x, Tensor) and x._rg]
    n_in = len(ins)

    def first(*args: Any) -> tuple[Tensor, ...]:
        xs = args[:n_in]
        gs = args[n_in:]
        with mode.enable_grad():
            o = _flat_outputs(func(*xs))
            d = [x for x in xs if isinstance(x, Tensor) and x._rg]
            r = entry.grad(o, d, list(gs), True, True, True)
        return tuple(g if g is not None else make(np.zeros_like(x._data), None, False, TORCH)
                     for g, x in zip(r, d))

    _ = diff
    return gradcheck(first, tuple(ins) + tuple(gos), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)


def Variable(data: Any, requires_grad: bool = False, volatile: bool = False) -> Tensor:
    """Deprecated ``Variable``: returns the tensor itself (with ``requires_grad`` set)."""
    t = data if isinstance(data, Tensor) else make(np.asarray(data), None, False, TORCH)
    if requires_grad:
        t.requires_grad_(True)
    return t


__all__ = [
    "grad", "backward", "Function", "FunctionCtx", "BackwardCFunction", "InplaceFunction",
    "once_differentiable", "gradcheck", "gradgradcheck", "GradcheckError", "functional",
    "forward_ad", "graph",
    "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "no_grad", "enable_grad",
    "set_grad_enabled", "inference_mode", "Variable", "profiler",
]

_ = (Sequence,)
