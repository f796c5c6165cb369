"""``tf.autodiff``: forward-mode differentiation (``ForwardAccumulator``).

``ForwardAccumulator(primals, tangents)`` is the core's forward mode
(:class:`tapegrad.autodiff.forward.JVPLevel`): inside its ``with`` block the
primal tensors carry their tangents, and every op on them computes the
output's tangent with the op's JVP rule in the same pass (no tape, no
backward).  ``jvp(y)`` reads it.  Accumulators nest with each other and with
``GradientTape`` in either order (forward over reverse for Hessian-vector
products, reverse over forward), since a level's tracers are ordinary tensors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from .._core.errors import hinted, with_hint
from .._core.registry import get_acc
from .._core.tensor import Tensor, make
from ..autodiff.forward import JVPLevel
from . import _nest
from ._tensor import convert, tft
from .tape import UnconnectedGradients, _unconnected

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
        self._level = JVPLevel()
        self._saved: list[tuple[Tensor, dict[str, Any]]] = []

    def __enter__(self) -> ForwardAccumulator:
        lv = self._level
        lv.__enter__()
        # the primals themselves become the level's tracers for the block (TensorFlow
        # watches these very objects): a copy of each stands for its value one level down
        for p, t in zip(self._primals, self._tangents):
            prev = {k: p.__dict__[k] for k in ("_lvl", "_primal", "_tangent")
                    if k in p.__dict__}
            if p._node is None and p._acc is None and (p._rg or p._tv):
                get_acc(p)
            base = make(p._data, p._node, p._rg, p._style)
            base._vc = p._vc
            base._acc = p._acc
            base._tv = p._tv
            if "_lvl" in prev:  # already a tracer (an outer accumulator's, or a
                # vectorized_map's: its batch, _bval): it stays that one level below
                base._lvl = prev["_lvl"]
                for k in ("_primal", "_tangent", "_bval"):
                    if k in p.__dict__:
                        base.__dict__[k] = p.__dict__[k]
            self._saved.append((p, prev))
            p._lvl = lv
            p._primal = base
            p._tangent = t
        return self

    def __exit__(self, *exc: object) -> None:
        for p, prev in reversed(self._saved):
            for k in ("_lvl", "_primal", "_tangent"):
                p.__dict__.pop(k, None)
            p.__dict__.update(prev)
        self._saved = []
        self._level.__exit__(*exc)

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
        tangent = target._tangent if target._lvl is self._level else None
        if tangent is None:
            return none
        if tangent._style != target._style:
            tangent = tft(tangent._data) if tangent._node is None and tangent._lvl is None \
                else tangent
        return tangent
