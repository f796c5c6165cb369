"""``tf.GradientTape`` over the shared engine.

A tape is a set of watched tensors plus the nodes it recorded.  While its
``with`` block is open, a small token of the tape sits on the thread-local
stack of recording tapes (``mode.STATE.tapes``); the core's one recording path
(:func:`tapegrad._core.registry.apply`) asks every token on the stack whether
it is interested in an op (one of the op's inputs is watched by it or was
produced by a node it recorded) and lists the interested tokens in the node
(``node.tapes``).  ``gradient`` runs the shared engine from the target with
"only my nodes" as the node filter.

The token, not the tape, is what nodes hold: a tape that is deleted (or
``reset``) is freed at once, and non-persistent tapes release the saved values
of the nodes only they recorded after their one ``gradient`` call.  Nested
tapes need no special code: the inner ``gradient`` runs its VJPs with
recording on whenever another tape is recording, so the outer tape records
the gradient computation (second and higher derivatives).
"""

from __future__ import annotations

import contextlib
import enum
import warnings
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .. import engine as _engine
from .. import ops as _ops
from .._core import mode
from .._core.dispatch import copy_tracer
from .._core.errors import hinted, warning_with_hint, with_hint
from .._core.node import FREED, Node
from .._core.registry import get_acc
from .._core.tensor import TF, Tensor, make
from . import _nest
from ._tensor import TensorShape, VariableBase, convert, fmt_shape, tft
from .errors import InvalidArgumentError, kernel_message

__all__ = ["GradientTape", "UnconnectedGradients"]

_STATE = mode.STATE

NON_PERSISTENT = ("A non-persistent GradientTape can only be used to compute one set of "
                  "gradients (or jacobians)")


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> tf.UnconnectedGradients.ZERO.value
    'zero'
    """

    NONE = "none"
    ZERO = "zero"


def _unconnected(value: Any) -> bool:
    """True for ``'zero'``; validates the argument as TensorFlow does."""
    if isinstance(value, UnconnectedGradients):
        return value is UnconnectedGradients.ZERO
    if value in ("none", "zero"):
        return bool(value == "zero")
    raise hinted(ValueError(
        with_hint(
            f"Unknown value for unconnected_gradients: {value!r}",
            "use 'none', 'zero', tf.UnconnectedGradients.NONE or tf.UnconnectedGradients.ZERO",
        )
    ))


class _Token:
    """What the core sees of a tape: on the recording stack and in ``node.tapes``.

    It holds the watched set (leaf accumulators and watched non-leaf nodes)
    and the watched variables, but no reference to the tape itself.
    """

    __slots__ = ("watched", "auto", "variables", "var_ids", "alive", "keep", "shared",
                 "nodes", "_recorded", "__weakref__")

    def __init__(self, auto: bool) -> None:
        self.watched: set[Node] = set()
        self.auto = auto
        self.variables: list[Any] = []
        self.var_ids: set[int] = set()
        self.alive = True
        self.keep: list[Tensor] = []  # watched tensors, held as TensorFlow's tape holds them
        # False while every node this tape recorded is recorded by it alone (no other tape on
        # the stack, no PyTorch-style input): its one gradient call may then free as it goes
        self.shared = False
        # the nodes this tape recorded, held as TensorFlow's tape holds its operations until
        # it is deleted, reset or its one gradient taken; ``release`` then frees their saved
        # values even while an output still holds the graph (and drops the node <-> token
        # reference cycle)
        self.nodes: list[Node] = []
        # called by the core for each node this tape recorded: the list's own append (no
        # Python frame per node)
        self._recorded = self.nodes.append

    def _interested(self, args: Sequence[Any]) -> bool:
        """Called by the core for each op while this tape records (hot path).

        Another tape on the stack marks the tokens shared when it is pushed (see
        ``GradientTape._push``), so only a PyTorch-style tracked input does here.
        """
        hit = False
        for a in args:
            if isinstance(a, Tensor):
                if a._rg:
                    self.shared = True
                n = a._node
                if n is not None:
                    if not hit and (self in n.tapes or n in self.watched):
                        hit = True
                else:
                    acc = a._acc
                    if acc is not None and acc in self.watched:
                        hit = True
                    elif a._tv and self.auto:
                        self.watch_variable(a)
                        hit = True
        return hit

    def watch_variable(self, a: Tensor) -> None:
        acc = a._acc
        var = acc.variable_ref() if acc is not None else a
        if var is None:
            var = a
        if id(var) not in self.var_ids:
            self.var_ids.add(id(var))
            self.variables.append(var)
        if acc is not None:
            self.watched.add(acc)

    def watch(self, t: Tensor) -> None:
        if isinstance(t, VariableBase) or (t._node is None and t._tv):
            self.watch_variable(t)
            return
        if t._data.dtype.kind not in "fc":
            return
        if t._node is None:
            self.watched.add(get_acc(t))
        else:
            self.watched.add(t._node)
        self.keep.append(t)

    def owns(self, n: Node) -> bool:
        return self in n.tapes

    def release(self) -> None:
        """The tape is gone (deleted, reset, or its one gradient taken): free what it held."""
        self.alive = False
        self.keep = []
        nodes = self.nodes
        self.nodes = []
        self._recorded = self.nodes.append
        for n in nodes:
            if n.rg or not n.saved or n.saved is FREED:
                continue
            if all(tp is self or not getattr(tp, "alive", True) for tp in n.tapes):
                n.saved = FREED
        nodes.clear()


def _key(tok: _Token, t: Tensor) -> Node | None:
    """Where this tape can deliver a gradient for ``t`` (None: not watched / not recorded)."""
    n = t._node
    if n is not None:
        return n if (tok in n.tapes or n in tok.watched) else None
    acc = t._acc
    return acc if acc is not None and acc in tok.watched else None


def _as_tf(g: Tensor) -> Tensor:
    r = make(g._data, g._node, g._rg, TF)
    r._vc = g._vc
    r._acc = g._acc  # a leaf keeps its identity for the tapes that watch it
    if g._lvl is not None:  # a transform's tracer (ForwardAccumulator, vectorized_map)
        copy_tracer(g, r)
    return r


_PERSISTENT_WARNED = [False]


class GradientTape:
    """Record operations for automatic differentiation (TensorFlow's ``tf.GradientTape``).

    Parameters
    ----------
    persistent : bool, default False
        Allow more than one ``gradient``/``jacobian`` call.  The recorded
        values are released when the tape is deleted or ``reset``.
    watch_accessed_variables : bool, default True
        Watch every trainable variable read inside the block automatically.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> x = tf.constant(3.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    >>> tape.gradient(y, x)
    <tf.Tensor: shape=(), dtype=float32, numpy=6.0>

    Nested tapes give higher derivatives:

    >>> x = tf.Variable(2.0)
    >>> with tf.GradientTape() as outer:
    ...     with tf.GradientTape() as inner:
    ...         y = x * x * x
    ...     dy = inner.gradient(y, x)
    >>> float(dy), float(outer.gradient(dy, x))
    (12.0, 12.0)
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._token: _Token | None = None
        self._recording = False
        self._used = False
        self._spent: _Token | None = None
        self._watched_variables: tuple[Any, ...] = ()

    # ------------------------------------------------------------------ recording
    def __enter__(self) -> GradientTape:
        self._push()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._recording:
            self._pop()

    def _push(self) -> None:
        if self._recording:
            raise hinted(ValueError(
                with_hint(
                    "Tape is still recording, This can happen if you try to re-enter an "
                    "already-active tape.",
                    "a tape's with block cannot be nested inside itself; use a second tape",
                )
            ))
        if self._token is None:
            self._token = _Token(self._watch_accessed_variables)
        tapes = _STATE.tapes + (self._token,)
        _STATE.tapes = tapes
        if len(tapes) > 1:  # the tapes on the stack may now record nodes together
            for tp in tapes:
                if isinstance(tp, _Token):
                    tp.shared = True
        self._recording = True

    def _pop(self) -> None:
        if not self._recording:
            raise hinted(ValueError(
                with_hint("Tape is not recording.",
                          "stop_recording()/reset() work only inside the tape's with block")
            ))
        tok = self._token
        tapes = _STATE.tapes
        for i in range(len(tapes) - 1, -1, -1):
            if tapes[i] is tok:
                _STATE.tapes = tapes[:i] + tapes[i + 1:]
                break
        self._recording = False

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Pause recording on this tape inside the ``with`` block.

        >>> import tapegrad.tf as tf
        >>> x = tf.constant(4.0)
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     with tape.stop_recording():
        ...         y = x ** 2
        >>> print(tape.gradient(y, x))
        None
        """
        if self._token is None:
            raise hinted(RuntimeError(
                with_hint("Trying to stop recording a tape which is not recording.",
                          "call stop_recording() inside the tape's with block")
            ))
        self._pop()
        try:
            yield
        finally:
            self._push()

    def reset(self) -> None:
        """Forget everything recorded so far (as exiting and re-entering with a new tape)."""
        self._pop()
        if self._token is not None:
            self._token.release()
        self._token = None
        self._push()

    def __del__(self) -> None:
        tok = getattr(self, "_token", None)
        if tok is not None:
            tok.release()

    # ------------------------------------------------------------------ watching
    def watch(self, tensor: Any) -> None:
        """Watch a tensor (or a nest of tensors/variables) so gradients can reach it.

        Non-floating tensors cannot be differentiated: they are not watched (a
        warning says so, as TensorFlow logs it).
        """
        for t in _nest.flatten(tensor):
            if not isinstance(t, Tensor):
                raise hinted(ValueError(
                    with_hint(
                        f"Passed in object {t!r} of type {type(t).__name__!r}, not tf.Tensor or "
                        "tf.Variable or ExtensionType.",
                        "watch tensors or variables; convert data first with tf.constant(...)",
                    )
                ))
            if t._data.dtype.kind not in "fc":
                warnings.warn(
                    warning_with_hint(
                        "The dtype of the watched tensor must be floating (e.g. tf.float32), "
                        f"got tf.{t._data.dtype.name}",
                        "its gradient will be None: tf.cast it to a float dtype before the "
                        "computation if you need one",
                    ),
                    stacklevel=2,
                )
            if self._token is None:
                self._token = _Token(self._watch_accessed_variables)
            self._token.watch(t)

    def watched_variables(self) -> tuple[Any, ...]:
        """The variables this tape watched, in the order they were created (as TensorFlow)."""
        if self._token is not None:
            self._watched_variables = _by_creation(self._token.variables)
        return self._watched_variables

    # ------------------------------------------------------------------ gradients
    def _check_usable(self) -> _Token:
        tok = self._token
        if tok is None:
            hint = ("this tape already computed its gradients: create the tape with "
                    "persistent=True to call gradient() or jacobian() more than once (and "
                    "`del tape` when done)") if self._used else (
                    "this tape never recorded anything: compute inside `with tf.GradientTape() "
                    "as tape:` first; create the tape with persistent=True to ask it more than "
                    "once")
            raise hinted(RuntimeError(with_hint(NON_PERSISTENT, hint)))
        return tok

    def _enter_gradient(self) -> None:
        if self._recording:
            if not self._persistent:
                self._pop()
            elif not _PERSISTENT_WARNED[0]:
                _PERSISTENT_WARNED[0] = True
                warnings.warn(
                    "Calling GradientTape.gradient on a persistent tape inside its context is "
                    "significantly less efficient than calling it outside the context (it causes "
                    "the gradient ops to be recorded on the tape, leading to increased CPU and "
                    "memory usage). Only call GradientTape.gradient inside the context if you "
                    "actually want to trace the gradient in order to compute higher order "
                    "derivatives.",
                    stacklevel=3,
                )

    def _finish(self, tok: _Token, roots: list[Node]) -> None:
        """After the one gradient call of a non-persistent tape: release what only it holds."""
        if self._persistent:
            return
        self._watched_variables = _by_creation(tok.variables)
        tok.release()
        self._spent = tok  # kept (without the watched tensors) so explain() can still answer
        self._token = None
        self._used = True

    def gradient(
        self,
        target: Any,
        sources: Any,
        output_gradients: Any = None,
        unconnected_gradients: Any = UnconnectedGradients.NONE,
    ) -> Any:
        """Gradient of ``target`` with respect to ``sources``, in the structure of ``sources``.

        Parameters
        ----------
        target : tensor or nest of tensors
            What to differentiate; a non-scalar target (or several targets) is
            summed.
        sources : tensor, variable or nest (list/tuple/dict) of them
            The result has exactly this structure.
        output_gradients : tensor or list, optional
            Weights for the target elements (one per target), default ones.
        unconnected_gradients : {'none', 'zero'} or UnconnectedGradients
            What unconnected sources get: ``None`` (default) or zeros.

        Examples
        --------
        >>> import tapegrad.tf as tf
        >>> w = tf.Variable(2.0); b = tf.Variable(1.0)
        >>> with tf.GradientTape() as tape:
        ...     y = w * w + b
        >>> g = tape.gradient(y, {"w": w, "b": b})
        >>> float(g["w"]), float(g["b"])
        (4.0, 1.0)
        """
        tok = self._check_usable()
        zero = _unconnected(unconnected_gradients)
        self._enter_gradient()
        if target is None:
            raise hinted(TypeError(
                with_hint(
                    "Argument `target` should be a list or nested structure of Tensors, "
                    "Variables or CompositeTensors to be differentiated, but received None.",
                    "pass the tensor (e.g. the loss) computed inside the tape's block",
                )
            ))
        flat_t = _check_targets(_nest.flatten(target))
        flat_s = _check_sources(_nest.flatten(sources))
        ogs: list[Any] | None = None
        if output_gradients is not None:
            ogs = _nest.flatten(output_gradients)
            if len(ogs) != len(flat_t):
                raise hinted(ValueError(
                    with_hint(
                        f"Length of output_gradients ({len(ogs)}) does not match the number of "
                        f"targets ({len(flat_t)})",
                        "pass one output gradient per target (None for the default ones)",
                    )
                ))
        create_graph = bool(_STATE.tapes)
        # a non-persistent tape that shares no node frees saved values as the engine goes
        free_now = not self._persistent and not tok.shared
        try:
            grads, roots = self._compute(tok, flat_t, flat_s, ogs, zero, create_graph,
                                         retain=not free_now)
        finally:
            if not self._persistent:
                self._finish(tok, [] if free_now else
                             [r for r in (_key(tok, t) for t in flat_t) if r is not None])
        return _nest.pack_sequence_as(sources, grads)

    def _compute(
        self,
        tok: _Token,
        flat_t: list[Tensor],
        flat_s: list[Tensor],
        ogs: list[Any] | None,
        zero: bool,
        create_graph: bool,
        retain: bool = True,
    ) -> tuple[list[Tensor | None], list[Node]]:
        roots: list[Node] = []
        seeds: list[Tensor] = []
        direct: list[tuple[Tensor, Tensor]] = []  # targets the tape did not see, with seeds
        for i, t in enumerate(flat_t):
            if t._data.dtype.kind not in "fc":
                continue
            key = _key(tok, t)
            og = ogs[i] if ogs is not None else None
            if key is None:
                if any(s is t for s in flat_s):
                    direct.append((t, _seed(t, og, create_graph)))
                continue
            roots.append(key)
            seeds.append(_seed(t, og, create_graph))
        keys = [_key(tok, s) if s._data.dtype.kind in "fc" else None for s in flat_s]
        res: dict[Node, Tensor] = {}
        wanted = [k for k in keys if k is not None]
        if roots and wanted:
            res, _ = _engine.run_backward(roots, seeds, wanted, retain, create_graph,
                                          only_tape=tok)
        out: list[Tensor | None] = []
        for s, k in zip(flat_s, keys):
            g = res.get(k) if k is not None else None
            for t, seed in direct:  # a source that is a target: its own output gradient
                if t is s:  # (TensorFlow's sources_that_are_targets, watched or not)
                    g = seed if g is None else _ops.add(g, seed)
            if g is None:
                out.append(tft(np.zeros_like(s._data)) if zero else None)
                continue
            if not create_graph and g._node is not None:
                g = g.detach()
            g = _as_tf(g)
            if not create_graph:
                g.__dict__["_tg_grad_of"] = weakref.ref(tok)
            out.append(g)
        return out, roots

    def jacobian(
        self,
        target: Any,
        sources: Any,
        unconnected_gradients: Any = UnconnectedGradients.NONE,
        parallel_iterations: Any = None,
        experimental_use_pfor: bool = True,
    ) -> Any:
        """The Jacobian of ``target`` with respect to each source: shape ``target.shape + source.shape``.

        >>> import tapegrad.tf as tf
        >>> x = tf.constant([1.0, 2.0])
        >>> with tf.GradientTape() as g:
        ...     g.watch(x)
        ...     y = x * x
        >>> g.jacobian(y, x).numpy()
        array([[2., 0.],
               [0., 4.]], dtype=float32)
        """
        tok = self._check_usable()
        zero = _unconnected(unconnected_gradients)
        self._enter_gradient()
        t = _check_targets([target])[0]
        flat_s = _check_sources(_nest.flatten(sources))
        # an outer tape, or a transform (ForwardAccumulator, vectorized_map, tf.function)
        # that must see the Jacobian's ops: build it from ops, not raw arrays
        create_graph = bool(_STATE.tapes) or bool(_STATE.levels)
        shape = t._data.shape
        if not experimental_use_pfor and not self._persistent:
            raise hinted(RuntimeError(with_hint(
                "GradientTape must be created with persistent=True to compute the jacobian "
                "with eager execution enabled and with  experimental_use_pfor set to False.",
                "pass persistent=True to the tape, or keep experimental_use_pfor=True")))
        from ..autodiff.batching import Basis

        basis = Basis(tuple(shape), t._data.dtype, TF)
        try:
            out = self._rows(tok, t, flat_s, basis, zero, create_graph, experimental_use_pfor)
        finally:
            if not self._persistent:
                k = _key(tok, t)
                self._finish(tok, [k] if k is not None else [])
        out = [o if o is None else _reshape_tf(o, tuple(shape) + s._data.shape, create_graph)
               for o, s in zip(out, flat_s)]
        return _nest.pack_sequence_as(sources, out)

    def batch_jacobian(
        self,
        target: Any,
        source: Any,
        unconnected_gradients: Any = UnconnectedGradients.NONE,
        parallel_iterations: Any = None,
        experimental_use_pfor: bool = True,
    ) -> Any:
        """Per-example Jacobians: ``result[i] = jacobian(target[i], source[i])``.

        Assumes, as TensorFlow does, that ``target[i]`` depends only on
        ``source[i]``.

        >>> import tapegrad.tf as tf
        >>> x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        >>> with tf.GradientTape() as g:
        ...     g.watch(x)
        ...     y = x * x
        >>> g.batch_jacobian(y, x).shape
        TensorShape([2, 2, 2])
        """
        tok = self._check_usable()
        _unconnected(unconnected_gradients)  # checks the argument; the result has zeros
        self._enter_gradient()
        t = _check_targets([target])[0]
        s = _check_sources([source])[0]
        ts, ss = t._data.shape, s._data.shape
        if not ts:  # TensorFlow reads target.shape.dims[0] first
            raise hinted(IndexError(with_hint(
                "list index out of range",
                "batch_jacobian needs a [batch, ...] target; use gradient for a scalar")))
        for shp in (ts, ss):
            if len(shp) < 2:
                raise hinted(ValueError(
                    with_hint(f"Shape {TensorShape(shp)} must have rank at least 2",
                              "batch_jacobian needs [batch, ...] tensors of rank >= 2; use "
                              "jacobian for others")
                ))
        if ts[0] != ss[0]:
            raise hinted(ValueError(
                with_hint(
                    f"Need first dimension of target shape ({TensorShape(ts)}) and source "
                    f"shape ({TensorShape(ss)}) to match.",
                    "batch_jacobian needs target and source with the batch as their first axis",
                )
            ))
        b = ts[0]
        inner = int(np.prod(ts[1:], dtype=np.int64)) if len(ts) > 1 else 1
        create_graph = bool(_STATE.tapes) or bool(_STATE.levels)  # as in jacobian
        new_shape = (b,) + tuple(ts[1:]) + tuple(ss[1:])
        if not experimental_use_pfor and not self._persistent:
            raise hinted(RuntimeError(with_hint(
                "GradientTape must be created with persistent=True to compute the "
                "batch_jacobian with eager execution enabled and  with experimental_use_pfor "
                "set to False.", "pass persistent=True to the tape, or keep "
                "experimental_use_pfor=True")))
        eye = np.zeros((inner, b, inner), dtype=t._data.dtype)
        eye[np.arange(inner), :, np.arange(inner)] = 1
        try:
            (g,) = self._rows(tok, t, [s], eye.reshape((inner,) + ts), True, create_graph,
                              experimental_use_pfor)
        finally:
            if not self._persistent:
                k = _key(tok, t)
                self._finish(tok, [k] if k is not None else [])
        from .. import ops

        assert g is not None
        g = ops.moveaxis(ops.reshape(g, (inner, b, -1)), 0, 1)  # (b, inner, source row)
        return _reshape_tf(g, new_shape, create_graph)

    def _rows(self, tok: _Token, t: Tensor, flat_s: list[Tensor], basis: Any,
              zero: bool, create_graph: bool, pfor: bool) -> list[Tensor | None]:
        """The gradient for every cotangent along ``basis``' leading axis, per source: one
        vectorized call (TensorFlow's pfor) or a loop (``experimental_use_pfor=False``).

        ``None`` for a source the target does not reach (zeros when ``zero``).
        """
        from ..autodiff.functional import jacobian_rows

        def row(seed: Tensor) -> list[Tensor | None]:
            return self._compute(tok, [t], flat_s, [seed], False, create_graph)[0]

        res = jacobian_rows(row, basis, flat_s, pfor, create_graph, TF)
        return [r if r is not None or not zero else
                tft(np.zeros((basis.shape[0],) + s._data.shape, dtype=s._data.dtype))
                for r, s in zip(res, flat_s)]

    # ------------------------------------------------------------------ aids
    def explain(self, target: Any, source: Any) -> str:
        """Say why ``gradient(target, source)`` is (or is not) ``None``.

        See :func:`tapegrad.tf.explain.why_none`.
        """
        from .explain import why_none

        return why_none(self, target, source)

    def __repr__(self) -> str:
        state = "recording" if self._recording else ("used" if self._used else "idle")
        return (f"<tapegrad.tf.GradientTape persistent={self._persistent} {state}, "
                f"{len(self.watched_variables())} watched variable(s)>")


def _reshape_tf(g: Tensor, shape: tuple[int, ...], create_graph: bool) -> Tensor:
    """``g`` reshaped, as a TensorFlow-style result (recorded only when differentiated)."""
    from .. import ops

    if create_graph:
        return _as_tf(ops.reshape(g, shape))
    return tft(np.ascontiguousarray(g._data).reshape(shape))


def _by_creation(variables: list[Any]) -> tuple[Any, ...]:
    return tuple(sorted(variables, key=lambda v: v.__dict__.get("_uid", -1)))


def _kernel(d: np.dtype) -> str:
    from .dtypes import kernel_name

    return kernel_name(d)


def _seed(t: Tensor, og: Any, create_graph: bool) -> Tensor:
    if og is None:
        return tft(np.ones_like(t._data))
    g = convert(og)
    if g._data.dtype != t._data.dtype:
        # TensorFlow multiplies the seed into the first gradient op: mixed dtypes fail there
        raise hinted(InvalidArgumentError(
            None, None,
            with_hint(
                f"cannot compute Mul as input #1(zero-based) was expected to be a "
                f"{_kernel(g._data.dtype)} tensor but is a {_kernel(t._data.dtype)} tensor "
                "[Op:Mul] name: ",
                f"output_gradients must have the target's dtype ({t._data.dtype.name}): "
                "tf.cast it first")))
    if g._data.shape != t._data.shape:
        try:
            shape = np.broadcast_shapes(g._data.shape, t._data.shape)
        except ValueError:
            shape = None
        if shape != t._data.shape:
            raise hinted(InvalidArgumentError(
                None, None,
                with_hint(
                    kernel_message(f"Incompatible shapes: {fmt_shape(g._data.shape)} vs. "
                                   f"{fmt_shape(t._data.shape)}", "Mul"),
                    f"output_gradients must have the target's shape {tuple(t._data.shape)}",
                ),
            ))
        from .. import ops

        g = ops.broadcast_to(g, t._data.shape)
    if not create_graph and g._node is not None:
        g = g.detach()
    return g


def _describe(x: Any) -> str:
    r = repr(x)
    return r if len(r) < 60 else r[:57] + "..."


def _check_sources(flat: list[Any]) -> list[Tensor]:
    for i, s in enumerate(flat):
        if not isinstance(s, Tensor):
            raise hinted(TypeError(
                with_hint(
                    f"GradientTape.gradient: sources must be tf.Tensor or tf.Variable objects, "
                    f"but source {i} is a {type(s).__name__} ({_describe(s)})",
                    "gradients are taken with respect to tensors the tape watched: use a "
                    "tf.Variable, or tf.constant(...) and tape.watch(it) inside the block, and "
                    "pass that object",
                )
            ))
    return flat


def _check_targets(flat: list[Any]) -> list[Tensor]:
    for i, t in enumerate(flat):
        if not isinstance(t, Tensor):
            raise hinted(TypeError(
                with_hint(
                    f"GradientTape.gradient: the target must be a tensor computed inside the "
                    f"tape's block, but target {i} is a {type(t).__name__} ({_describe(t)})",
                    "compute the target with tensor ops inside `with tf.GradientTape() as "
                    "tape:`",
                )
            ))
    return flat
