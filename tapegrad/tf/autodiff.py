"""``tf.autodiff``: forward-mode differentiation (``ForwardAccumulator``).

Forward mode is reverse mode transposed.  The accumulator records the
computation on a persistent tape watching the primals; ``jvp(y)`` forms the
VJP ``u -> u^T J`` for a watched dummy cotangent ``u`` (the tape's gradient
with ``output_gradients=u``, recorded because a second tape watches ``u``),
takes ``<u^T J, v>`` with the tangents ``v``, and differentiates that with
respect to ``u``: ``d/du <u^T J, v> = J v``.  VJPs are written in tapegrad
ops, so this works for every op.  ``u`` is a fixed random vector rather than
ones so that no intermediate cotangent is accidentally zero (TensorFlow's
``sqrt`` gradient treats a zero cotangent specially).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import ops
from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from . import _nest
from ._tensor import convert, tft
from .tape import GradientTape, UnconnectedGradients, _unconnected

__all__ = ["ForwardAccumulator"]


class ForwardAccumulator:
    """Compute Jacobian-vector products of everything computed inside its ``with`` block.

    Parameters
    ----------
    primals : tensor, variable or nest
        The inputs to perturb (watched inside the block).
    tangents : tensor or nest
        The direction of the perturbation, one per primal, same shapes.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> x = tf.constant([1.0, 2.0])
    >>> with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0])) as acc:
    ...     y = tf.reduce_sum(x * x * x)
    >>> acc.jvp(y)
    <tf.Tensor: shape=(), dtype=float32, numpy=3.0>
    """

    def __init__(self, primals: Any, tangents: Any) -> None:
        self._primals = _nest.flatten(primals)
        flat_t = _nest.flatten(tangents)
        if len(self._primals) != len(flat_t):
            raise hinted(ValueError(with_hint(
                f"Got {len(self._primals)} primals and {len(flat_t)} tangents; expected one "
                "tangent per primal.", "pass tangents with the structure of primals")))
        self._tangents: list[Tensor] = []
        for p, t in zip(self._primals, flat_t):
            if not isinstance(p, Tensor):
                raise hinted(TypeError(with_hint(
                    f"ForwardAccumulator primals must be tensors or variables, got "
                    f"{type(p).__name__}", "convert with tf.constant or use a tf.Variable")))
            tt = convert(t)
            if tt._data.shape != p._data.shape:
                raise hinted(ValueError(with_hint(
                    f"Tangent shape {tuple(tt._data.shape)} does not match primal shape "
                    f"{tuple(p._data.shape)}", "each tangent must have its primal's shape")))
            if tt._data.dtype != p._data.dtype:
                tt = ops.cast(tt, dtype=p._data.dtype)
            self._tangents.append(tt)
        self._tape = GradientTape(persistent=True, watch_accessed_variables=False)
        self._tape.watch(self._primals)
        self._rng = np.random.default_rng(20240611)

    def __enter__(self) -> ForwardAccumulator:
        self._tape.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._tape.__exit__(*exc)

    def jvp(self, primals: Any, unconnected_gradients: Any = UnconnectedGradients.NONE) -> Any:
        """The Jacobian-vector product ``J v`` for each tensor in ``primals`` (a nest)."""
        zero = _unconnected(unconnected_gradients)
        flat = _nest.flatten(primals)
        return _nest.pack_sequence_as(primals, [self._jvp1(t, zero) for t in flat])

    def _jvp1(self, target: Any, zero: bool) -> Tensor | None:
        if not isinstance(target, Tensor):
            raise hinted(TypeError(with_hint(
                f"jvp expects tensors computed inside the accumulator's block, got "
                f"{type(target).__name__}", "pass the output tensor")))
        none = tft(np.zeros_like(target._data)) if zero else None
        if target._data.dtype.kind not in "fc":
            return none
        for p, tan in zip(self._primals, self._tangents):
            if p is target:
                return tan
        dt = target._data.dtype
        u = tft(self._rng.standard_normal(target._data.shape).astype(dt))
        with GradientTape() as t2:
            t2.watch(u)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                gs = self._tape.gradient(target, self._primals, output_gradients=u)
            s: Tensor | None = None
            for g, v in zip(gs, self._tangents):
                if g is None:
                    continue
                term = ops.sum(ops.multiply(g, v))
                if term._data.dtype != dt:
                    term = ops.cast(term, dtype=dt)
                s = term if s is None else ops.add(s, term)
        if s is None:
            return none
        jv = t2.gradient(s, u)
        return none if jv is None else jv
