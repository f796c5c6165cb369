"""``keras.optimizers``: every Keras 3 optimizer with its update rule and defaults.

SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, Nadam, Ftrl and Lion;
learning rates may be schedules (:mod:`~tapegrad.tf.keras.schedules`).

The update arithmetic is the shared optimizer core
(:mod:`tapegrad.optim.rules`, ``style="keras"``); this module only keeps
Keras's bookkeeping: the ``iterations`` counter, the float32 learning-rate
variable, per-variable slots, and ``apply_gradients``'s checks.
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from ...optim import keras_rules as _kr
from ...optim.rules import adam_update, sgd_update
from .._tensor import VariableBase, convert, fmt_shape, read, tft
from ..errors import InvalidArgumentError
from .variables import KerasVariable

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "Nadam", "Ftrl", "Lion", "get", "schedules"]


class Optimizer:
    """Base class: ``apply_gradients(zip(grads, vars))`` updates the variables in place."""

    _default_name = "optimizer"

    def __init__(self, learning_rate: Any, weight_decay: float | None = None,
                 clipnorm: float | None = None, clipvalue: float | None = None,
                 global_clipnorm: float | None = None, name: str | None = None,
                 **kwargs: Any) -> None:
        self.use_ema = bool(kwargs.pop("use_ema", False))
        self.ema_momentum = float(kwargs.pop("ema_momentum", 0.99))
        self.ema_overwrite_frequency = kwargs.pop("ema_overwrite_frequency", None)
        if self.use_ema and not 0.0 <= self.ema_momentum <= 1.0:
            raise hinted(ValueError(with_hint(
                "`ema_momentum` must be in the range [0, 1]. Received: "
                f"ema_momentum={self.ema_momentum}", "use e.g. 0.99")))
        self._averages: dict[int, np.ndarray] = {}
        # a loss scale multiplies the loss and divides the gradients: no change in value
        kwargs.pop("loss_scale_factor", None)
        steps = kwargs.pop("gradient_accumulation_steps", None)
        if steps is not None and (not isinstance(steps, int) or steps < 2):
            raise hinted(ValueError(with_hint(
                "`gradient_accumulation_steps` must be an integer >= 2. Received: "
                f"gradient_accumulation_steps={steps}", "use None, or 2 or more steps")))
        self.gradient_accumulation_steps = steps
        self._accumulated: dict[int, np.ndarray] = {}
        if kwargs:
            raise hinted(TypeError(with_hint(f"Argument(s) not recognized: {kwargs}",
                                      "check the optimizer's argument names")))
        if sum(x is not None for x in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise hinted(ValueError(with_hint(
                "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set.",
                "choose one clipping method")))
        self.name = name or self._default_name  # Keras does not number optimizer names
        self.weight_decay = weight_decay
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        self._iterations = KerasVariable(np.int64(0), name="iteration",
                                        path=f"{self.name.lower()}/iteration", trainable=False)
        self._schedule: Callable[[Any], Any] | None = None
        if callable(learning_rate) and not isinstance(learning_rate, Tensor):
            self._schedule = learning_rate
            lr0 = float(np.asarray(convert(learning_rate(0))._data))
        else:
            lr0 = float(np.asarray(convert(learning_rate)._data))
        self._lr = KerasVariable(np.float32(lr0), name="learning_rate",
                                 path=f"{self.name.lower()}/learning_rate", trainable=False)
        self._slots: dict[int, dict[str, Any]] = {}
        self._vars: dict[int, Any] = {}
        # the variables it was built with (Keras 3's ``_trainable_variables``), by id
        self._built_on: dict[int, Any] | None = None

    # ------------------------------------------------------------------ learning rate
    @property
    def learning_rate(self) -> Any:
        """The learning rate, a float32 variable (as in Keras 3); with a schedule, its
        value at the current ``iterations``."""
        if self._schedule is not None:
            return convert(self._schedule(int(self.iterations._data)))
        return self._lr

    @learning_rate.setter
    def learning_rate(self, value: Any) -> None:
        if callable(value) and not isinstance(value, Tensor):
            self._schedule = value
            return
        self._schedule = None
        self._lr.assign(np.float32(float(np.asarray(convert(value)._data))))

    def _current_lr(self) -> float:
        if self._schedule is not None:
            v = self._schedule(int(self.iterations._data))
            self._lr.assign(np.float32(float(np.asarray(convert(v)._data))))
        # the float32 value, as Keras casts its float32 variable to each weight's dtype
        return float(self._lr._data)

    @property
    def iterations(self) -> Any:
        """The step counter; with ``gradient_accumulation_steps`` the number of updates
        (calls // steps), as in Keras 3."""
        n = self.gradient_accumulation_steps
        if n:
            return tft(np.asarray(int(self._iterations._data) // n, dtype=np.int64))
        return self._iterations

    @property
    def variables(self) -> list[Any]:
        return [self._iterations, self._lr]

    # ------------------------------------------------------------------ updates
    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                lr: float) -> None:
        raise NotImplementedError

    def _clip(self, grads: list[np.ndarray]) -> list[np.ndarray]:
        if self.clipvalue is not None:
            c = float(self.clipvalue)
            return [np.clip(g, -c, c).astype(g.dtype) for g in grads]
        if self.clipnorm is not None:
            out = []
            for g in grads:
                n = np.sqrt(np.sum(g * g))
                out.append((g * float(self.clipnorm) / max(n, float(self.clipnorm))).astype(g.dtype))
            return out
        if self.global_clipnorm is not None:
            n = np.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2)) for g in grads))
            c = float(self.global_clipnorm)
            return [(g * c / max(n, c)).astype(g.dtype) for g in grads]
        return grads

    def apply_gradients(self, grads_and_vars: Iterable[tuple[Any, Any]], **kwargs: Any) -> Any:
        """Apply one update step for each ``(gradient, variable)`` pair.

        Pairs whose gradient is ``None`` are skipped (with Keras's warning);
        if every gradient is ``None`` Keras's ``ValueError`` is raised.

        >>> import tapegrad.tf as tf
        >>> w = tf.Variable(1.0)
        >>> opt = tf.keras.optimizers.SGD(learning_rate=0.1)
        >>> _ = opt.apply_gradients([(tf.constant(2.0), w)])
        >>> round(float(w), 6)
        0.8
        """
        pairs = [tuple(p) for p in grads_and_vars]
        if not pairs:  # Keras unpacks zip(*grads_and_vars)
            raise hinted(ValueError(with_hint("not enough values to unpack (expected 2, got 0)",
                                              "apply_gradients got no (gradient, variable) pairs")))
        self._build_or_check([v for _, v in pairs])
        kept = [(g, v) for g, v in pairs if g is not None]
        if not kept:
            raise hinted(ValueError(with_hint(
                "No gradients provided for any variable.",
                "every gradient is None: the loss does not depend on these variables as "
                "recorded (compute the loss inside the GradientTape block; tf.explain."
                "why_none(tape, loss, var) says why)")))
        if len(kept) < len(pairs):
            missing = [getattr(v, "path", getattr(v, "name", repr(v))) for g, v in pairs
                       if g is None]
            warnings.warn(
                f"Gradients do not exist for variables {missing} when minimizing the loss. If "
                "using `model.compile()`, did you forget to provide a `loss` argument?",
                UserWarning, stacklevel=2)
        grads: list[np.ndarray] = []
        for g, v in kept:
            if not isinstance(v, VariableBase):
                raise hinted(TypeError(with_hint(
                    f"Expected a tf.Variable to update, got {type(v).__name__}",
                    "pass (gradient, variable) pairs, e.g. zip(grads, model.trainable_variables)")))
            gt = read(g) if isinstance(g, VariableBase) else convert(g)
            ga = np.asarray(gt._data)
            if ga.shape != v._data.shape:
                raise hinted(InvalidArgumentError(None, None, with_hint(
                    f"Cannot update variable with shape {fmt_shape(v._data.shape)} using a "
                    f"Tensor with shape {fmt_shape(ga.shape)}, shapes must be equal. "
                    "[Op:AssignSubVariableOp] name: ",
                    "each gradient must have its variable's shape: check the zip order")))
            grads.append(ga.astype(v._data.dtype, copy=False))
        from ...autodiff import tracing as _tracing
        from ..distribute import gradient_reduction

        lv = _tracing.current()
        if lv is not None:  # inside tf.function: one effect, every call
            new = [v for _, v in kept if id(v) not in self._slots]
            for v in new:  # Keras builds its slot variables while tracing the first call
                self._slots[id(v)] = {}
                self._vars[id(v)] = v
            if new and self._has_slots():
                lv.var_created(self)  # TensorFlow then traces once more (Keras's Adam does)
            dts = [v._data.dtype for _, v in kept]

            def apply(*arrays: Any) -> Any:
                arrs = [np.asarray(a).astype(dt, copy=False) for a, dt in zip(arrays, dts)]
                reduce_now = gradient_reduction()  # a strategy's all-reduce, at each replay
                if reduce_now is not None:
                    arrs = reduce_now(arrs)
                with _APPLY_LOCK:
                    return self._apply_locked(arrs, kept)

            gts = [read(g) if isinstance(g, VariableBase) else convert(g) for g, _ in kept]
            res = _tracing.effect(apply, gts, f"{type(self).__name__}.apply_gradients")
            return self._iterations if res is None else res
        reduce = gradient_reduction()
        if reduce is not None:  # under a tf.distribute strategy: all-reduce over replicas
            grads = reduce(grads)
        with _APPLY_LOCK:  # concurrent apply_gradients: every update lands, none is lost
            return self._apply_locked(grads, kept)

    def _has_slots(self) -> bool:
        """Whether building for new variables creates slot variables (moments,
        accumulators, moving averages): plain SGD creates none."""
        return True

    def _apply_locked(self, grads: list[np.ndarray], kept: list[tuple[Any, Any]]) -> Any:
        n_acc = self.gradient_accumulation_steps
        if n_acc:
            # Keras: add to the accumulators, and every n-th call apply their mean
            accs = [self._accumulated.setdefault(id(v), np.zeros_like(v._data))
                    for _, v in kept]
            if (int(self._iterations._data) + 1) % n_acc != 0:
                for acc, ga in zip(accs, grads):
                    acc += ga
                _constrain(kept)
                self._iterations.assign(self._iterations._data + 1)
                return self._iterations
            grads = [(ga + acc) / ga.dtype.type(n_acc) for ga, acc in zip(grads, accs)]
            for acc in accs:
                acc[...] = 0
        grads = self._clip(grads)
        lr = self._current_lr()
        for ga, (_, v) in zip(grads, kept):
            key = id(v)
            self._vars[key] = v
            state = self._slots.setdefault(key, {})
            arr = v._data
            if _sole_owner(arr) and v.__dict__.get("_constraint") is None:
                # no tensor can see this array: update it in place, as TensorFlow's
                # resource update does
                self._update(arr, ga, state, lr)
            else:  # values already read keep theirs: update a copy and rebind
                p = np.array(arr, copy=True)
                self._update(p, ga, state, lr)
                v._set(p, False, owned=True)
        _constrain(kept)
        if self.use_ema:
            self._update_averages([v for _, v in kept])
        self._iterations.assign(self._iterations._data + 1)
        return self._iterations

    # ------------------------------------------------------------------ EMA (use_ema=True)
    def _update_averages(self, variables: list[Any]) -> None:
        """Keras's moving average of the weights (the first step copies them)."""
        it = int(np.asarray(self.iterations._data))
        for v in variables:
            avg = self._averages.setdefault(id(v), np.zeros_like(v._data))
            dt = v._data.dtype.type
            mom = dt(self.ema_momentum if it != 0 else 0.0)
            avg[...] = mom * avg + (dt(1) - mom) * v._data
        freq = self.ema_overwrite_frequency
        if freq and (it + 1) % int(freq) == 0:
            self._overwrite_with_averages(variables)

    def _overwrite_with_averages(self, variables: list[Any]) -> None:
        for v in variables:
            avg = self._averages.get(id(v))
            if avg is not None:
                v.assign(np.array(avg, copy=True))

    def finalize_variable_values(self, var_list: Any) -> None:
        """End of ``fit``: with ``use_ema``, the weights become their moving averages."""
        if self.use_ema:
            self._overwrite_with_averages(list(var_list))

    @property
    def built(self) -> bool:
        """Whether the optimizer has been built on its variables (by ``build`` or the
        first ``apply``)."""
        return self._built_on is not None

    def build(self, variables: Any) -> None:
        """Build the optimizer on ``variables`` (Keras 3: the ones it may update)."""
        if self._built_on is None:
            self._built_on = {id(v): v for v in variables}

    def _build_or_check(self, variables: list[Any]) -> None:
        """Keras 3: the first call builds the optimizer on its variables; later calls
        may only name those (``_check_variables_are_known``)."""
        if self._built_on is None:
            self.build(variables)
            return
        for v in variables:
            if id(v) not in self._built_on:
                raise hinted(ValueError(with_hint(
                    f"Unknown variable: {v}. This optimizer can only be called for the "
                    "variables it was originally built with. When working with a new set of "
                    "variables, you should recreate a new optimizer instance.",
                    "an optimizer is built on the variables of its first apply (or build()): "
                    "make one optimizer per model or set of variables")))

    def apply(self, grads: Any, trainable_variables: Any = None) -> Any:
        """Keras 3's ``apply(grads, trainable_variables)``; without variables, the ones
        the optimizer was built on."""
        grads = list(grads)
        if not grads:
            return None
        if trainable_variables is None:
            if self._built_on is None:
                raise hinted(ValueError(with_hint(
                    "When passing `grads` without `variables`, the optimizer must already be "
                    "built on a list of variables. Call `optimizer.build(trainable_variables)` "
                    "first. ", "or pass the variables: optimizer.apply(grads, variables)")))
            trainable_variables = list(self._built_on.values())
        return self.apply_gradients(zip(grads, trainable_variables))

    def minimize(self, loss: Any, var_list: Any, tape: Any = None) -> Any:
        """Differentiate ``loss`` (a callable, or a tensor with its ``tape``) and apply."""
        from ..tape import GradientTape

        vars_ = list(var_list() if callable(var_list) else var_list)
        if callable(loss):
            with GradientTape() as t:
                value = loss()
            grads = t.gradient(value, vars_)
        else:
            if tape is None:
                raise hinted(ValueError(with_hint("`tape` is required when a `Tensor` loss is passed.",
                                           "pass tape=the GradientTape that recorded the loss")))
            grads = tape.gradient(loss, vars_)
        return self.apply_gradients(zip(grads, vars_))

    # ------------------------------------------------------------------ saved state
    # Keras 3's optimizer variables after ``build(model.trainable_variables)``, the
    # order of ``optimizer.variables`` and of a ``.keras`` file's ``optimizer/vars``:
    # iterations, learning rate, then blocks of slot names, each block interleaved over
    # the variables (``add_optimizer_variables(var_list, [names])``), the base class's
    # moving averages and gradient accumulators first; a few optimizers add scalars
    _SLOT_KEYS: dict[str, str] = {}

    def _slot_blocks(self) -> list[list[str]]:
        return []

    def _base_blocks(self) -> list[tuple[str, dict[int, np.ndarray]]]:
        out = []
        if self.use_ema:
            out.append(("average", self._averages))
        if self.gradient_accumulation_steps:
            out.append(("gradient_accumulator", self._accumulated))
        return out

    def _extra_state(self) -> list[np.ndarray]:
        return []

    def _set_extra_state(self, arrays: list[np.ndarray]) -> None:
        pass

    def _state_arrays(self, params: list[Any]) -> list[np.ndarray]:
        """The values Keras saves for this optimizer built on ``params``."""
        out = [np.asarray(self._iterations._data), np.asarray(self._lr._data)]
        for _name, store in self._base_blocks():
            out += [store.get(id(v), np.zeros_like(v._data)) for v in params]
        for block in self._slot_blocks():
            for v in params:
                st = self._slots.get(id(v), {})
                for name in block:
                    a = st.get(self._SLOT_KEYS.get(name, name))
                    out.append(np.zeros_like(v._data) if a is None else np.asarray(a))
        return out + self._extra_state()

    def _load_state_arrays(self, params: list[Any], arrays: list[np.ndarray]) -> None:
        """Restore what :meth:`_state_arrays` gave (``load_model``); a file of another
        optimizer layout is skipped with Keras' warning."""
        base, blocks, extra = self._base_blocks(), self._slot_blocks(), self._extra_state()
        n = 2 + (len(base) + sum(len(b) for b in blocks)) * len(params) + len(extra)
        if len(arrays) != n:
            warnings.warn(
                f"Skipping variable loading for optimizer '{self.name}', because it has {n} "
                f"variables whereas the saved optimizer has {len(arrays)} variables. ",
                UserWarning, stacklevel=3)
            return
        self.build(params)  # Keras builds a loaded model's optimizer on its weights
        it = iter(arrays)
        self._iterations.assign(np.int64(next(it)))
        self._lr.assign(np.float32(next(it)))
        for _name, store in base:
            for v in params:
                store[id(v)] = np.array(next(it), dtype=v._data.dtype)
        for block in blocks:
            for v in params:
                self._vars[id(v)] = v
                st = self._slots.setdefault(id(v), {})
                for name in block:
                    st[self._SLOT_KEYS.get(name, name)] = np.array(next(it), dtype=v._data.dtype)
        self._set_extra_state(list(it))

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "learning_rate": float(self._lr._data),
                "weight_decay": self.weight_decay}

    def __repr__(self) -> str:
        return f"<keras.src.optimizers.{type(self).__name__.lower()}.{type(self).__name__} " \
               f"object at {id(self):#x}>"


_APPLY_LOCK = threading.RLock()


def _constrain(kept: list[tuple[Any, Any]]) -> None:
    """Keras 3: after the update, each variable with a constraint is assigned
    ``constraint(variable)`` (keras.constraints, a layer's ``kernel_constraint=``)."""
    for _, v in kept:
        c = v.__dict__.get("_keras_constraint")
        if c is not None:
            v.assign(c(v))


def _sole_owner(arr: np.ndarray) -> bool:
    """Whether only the variable (and the caller's one local name) refers to ``arr``.

    The references counted: the variable's, the caller's local, this function's
    argument and getrefcount's own.
    """
    return (arr.base is None and arr.flags.writeable and arr.flags.owndata
            and sys.getrefcount(arr) <= 4)


class SGD(Optimizer):
    """Stochastic gradient descent with optional (Nesterov) momentum, Keras's rule.

    ``v = momentum * v - lr * g``; ``w += v`` (Nesterov: ``w += momentum * v - lr * g``).

    >>> import tapegrad.tf as tf
    >>> w = tf.Variable(1.0)
    >>> opt = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     _ = opt.apply_gradients([(tf.constant(1.0), w)])
    >>> round(float(w), 6)
    0.71
    """

    _default_name = "sgd"

    def _slot_blocks(self) -> list[list[str]]:
        return [["momentum"]] if self.momentum != 0 else []

    def __init__(self, learning_rate: Any = 0.01, momentum: float = 0.0, nesterov: bool = False,
                 weight_decay: float | None = None, clipnorm: float | None = None,
                 clipvalue: float | None = None, global_clipnorm: float | None = None,
                 name: str | None = None, **kwargs: Any) -> None:
        if not isinstance(momentum, (int, float)) or momentum < 0 or momentum > 1:
            raise hinted(ValueError(with_hint("`momentum` must be a float between [0, 1].",
                                       f"got momentum={momentum!r}")))
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         name, **kwargs)
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)

    def _has_slots(self) -> bool:
        # Keras's SGD.build makes momentums only for a momentum (the base class: the
        # gradient accumulators and the moving averages)
        return self.momentum != 0 or self.use_ema or bool(self.gradient_accumulation_steps)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                lr: float) -> None:
        sgd_update(param, grad, state, lr=lr, momentum=self.momentum, nesterov=self.nesterov,
                   weight_decay=self.weight_decay or 0.0, style="keras")


class Adam(Optimizer):
    """Adam with Keras's defaults (``epsilon=1e-7``) and update rule.

    >>> import tapegrad.tf as tf
    >>> w = tf.Variable(1.0)
    >>> opt = tf.keras.optimizers.Adam(learning_rate=0.1)
    >>> _ = opt.apply_gradients([(tf.constant(5.0), w)])
    >>> round(float(w), 5), opt.epsilon
    (0.9, 1e-07)
    """

    _default_name = "adam"

    _SLOT_KEYS = {"momentum": "m", "velocity": "v", "velocity_hat": "v_hat"}

    def _slot_blocks(self) -> list[list[str]]:
        return [["momentum", "velocity"]] + ([["velocity_hat"]] if self.amsgrad else [])

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, amsgrad: bool = False, weight_decay: float | None = None,
                 clipnorm: float | None = None, clipvalue: float | None = None,
                 global_clipnorm: float | None = None, name: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         name, **kwargs)
        self.beta_1, self.beta_2 = float(beta_1), float(beta_2)
        self.epsilon = float(epsilon)
        self.amsgrad = bool(amsgrad)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                lr: float) -> None:
        # Keras counts steps with the optimizer's global ``iterations``
        state["step"] = int(self.iterations._data)
        adam_update(param, grad, state, lr=lr, beta1=self.beta_1, beta2=self.beta_2,
                    eps=self.epsilon, weight_decay=self.weight_decay or 0.0,
                    amsgrad=self.amsgrad, style="keras")


class AdamW(Adam):
    """Adam with decoupled weight decay (Keras's default ``weight_decay=0.004``)."""

    _default_name = "adam_w"  # Keras snake-cases the class name

    def __init__(self, learning_rate: Any = 0.001, weight_decay: float = 0.004,
                 beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-7,
                 amsgrad: bool = False, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, weight_decay,
                         name=name, **kwargs)


class _Decayed(Optimizer):
    """An optimizer whose rule leaves weight decay to the base step (Keras's order)."""

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                lr: float) -> None:
        if self.weight_decay:
            _kr.decoupled_weight_decay(param, lr=lr, weight_decay=self.weight_decay)
        self._rule(param, grad, state, lr)

    def _rule(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
              lr: float) -> None:
        raise NotImplementedError


class RMSprop(_Decayed):
    """RMSprop (Keras defaults: ``learning_rate=0.001, rho=0.9, epsilon=1e-7``).

    >>> import tapegrad.tf as tf
    >>> w = tf.Variable(1.0)
    >>> _ = tf.keras.optimizers.RMSprop(learning_rate=0.01).apply_gradients([(tf.constant(2.0), w)])
    >>> round(float(w), 5)
    0.96838
    """

    _default_name = "rm_sprop"  # Keras snake-cases the class name

    def _slot_blocks(self) -> list[list[str]]:
        return [["velocity"]] + ([["momentum"]] if self.momentum > 0 else []) + \
            ([["average_gradient"]] if self.centered else [])

    def __init__(self, learning_rate: Any = 0.001, rho: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-7, centered: bool = False, weight_decay: Any = None,
                 clipnorm: Any = None, clipvalue: Any = None, global_clipnorm: Any = None,
                 name: str | None = None, **kwargs: Any) -> None:
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         name, **_strip(kwargs))
        self.rho, self.momentum, self.epsilon = float(rho), float(momentum), float(epsilon)
        self.centered = bool(centered)

    def _rule(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
              lr: float) -> None:
        _kr.rmsprop_update(param, grad, state, lr=lr, rho=self.rho, momentum=self.momentum,
                           epsilon=self.epsilon, centered=self.centered)


class Adagrad(_Decayed):
    """Adagrad (Keras defaults: ``learning_rate=0.001, initial_accumulator_value=0.1``)."""

    _default_name = "adagrad"

    def _slot_blocks(self) -> list[list[str]]:
        return [["accumulator"]]

    def __init__(self, learning_rate: Any = 0.001, initial_accumulator_value: float = 0.1,
                 epsilon: float = 1e-7, weight_decay: Any = None, clipnorm: Any = None,
                 clipvalue: Any = None, global_clipnorm: Any = None, name: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         name, **_strip(kwargs))
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.epsilon = float(epsilon)

    def _rule(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
              lr: float) -> None:
        _kr.adagrad_update(param, grad, state, lr=lr, epsilon=self.epsilon,
                           initial_accumulator_value=self.initial_accumulator_value)


class Adadelta(_Decayed):
    """Adadelta (Keras defaults: ``learning_rate=0.001, rho=0.95, epsilon=1e-7``)."""

    _default_name = "adadelta"

    def _slot_blocks(self) -> list[list[str]]:
        return [["accumulated_grad", "accumulated_delta_var"]]

    def __init__(self, learning_rate: Any = 0.001, rho: float = 0.95, epsilon: float = 1e-7,
                 weight_decay: Any = None, clipnorm: Any = None, clipvalue: Any = None,
                 global_clipnorm: Any = None, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         name, **_strip(kwargs))
        self.rho, self.epsilon = float(rho), float(epsilon)

    def _rule(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
              lr: float) -> None:
        _kr.adadelta_update(param, grad, state, lr=lr, rho=self.rho, epsilon=self.epsilon)


class Adamax(_Decayed):
    """Adamax (Keras defaults: ``learning_rate=0.001, beta_1=0.9, beta_2=0.999``)."""

    _default_name = "adamax"

    def _slot_blocks(self) -> list[list[str]]:
        return [["momentum", "norm"]]

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, weight_decay: Any = None, clipnorm: Any = None,
                 clipvalue: Any = None, global_clipnorm: Any = None, name: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         name, **_strip(kwargs))
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)

    def _rule(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
              lr: float) -> None:
        _kr.adamax_update(param, grad, state, lr=lr, step=int(self.iterations._data) + 1,
                          beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon)


class Nadam(_Decayed):
    """Nadam (Keras defaults: ``learning_rate=0.001, beta_1=0.9, beta_2=0.999``)."""

    _default_name = "nadam"

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, weight_decay: Any = None, clipnorm: Any = None,
                 clipvalue: Any = None, global_clipnorm: Any = None, name: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         name, **_strip(kwargs))
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        self._u_product: Any = None
        self._u_step = -1

    def _slot_blocks(self) -> list[list[str]]:
        return [["momentum", "velocity"]]

    def _extra_state(self) -> list[np.ndarray]:  # Keras' u_product variable, last
        u = self._u_product
        return [np.asarray(np.float32(1.0) if u is None else u)]

    def _set_extra_state(self, arrays: list[np.ndarray]) -> None:
        (u,) = arrays
        self._u_product = u[()]
        self._u_step = int(self._iterations._data) - 1  # advanced for the steps taken

    def _rule(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
              lr: float) -> None:
        it = int(self.iterations._data)
        if self._u_product is None:  # Keras makes it in the first variable's dtype
            self._u_product = param.dtype.type(1.0)
        if self._u_step != it:  # advanced once per step, before any variable's update
            self._u_product = _kr.nadam_u_product(self._u_product, step=it + 1,
                                                  beta_1=self.beta_1,
                                                  dtype=np.asarray(self._u_product).dtype)
            self._u_step = it
        _kr.nadam_update(param, grad, state, lr=lr, step=it + 1, u_product=self._u_product,
                         beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon)


class Ftrl(_Decayed):
    """FTRL-proximal (Keras defaults: ``learning_rate=0.001, learning_rate_power=-0.5``)."""

    _default_name = "ftrl"

    def _slot_blocks(self) -> list[list[str]]:
        return [["accumulator", "linear"]]

    def __init__(self, learning_rate: Any = 0.001, learning_rate_power: float = -0.5,
                 initial_accumulator_value: float = 0.1, l1_regularization_strength: float = 0.0,
                 l2_regularization_strength: float = 0.0,
                 l2_shrinkage_regularization_strength: float = 0.0, beta: float = 0.0,
                 weight_decay: Any = None, clipnorm: Any = None, clipvalue: Any = None,
                 global_clipnorm: Any = None, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         name, **_strip(kwargs))
        if initial_accumulator_value < 0.0:
            raise hinted(ValueError(with_hint(
                "`initial_accumulator_value` needs to be positive or zero. Received: "
                f"initial_accumulator_value={initial_accumulator_value}.", "use a value >= 0")))
        if learning_rate_power > 0.0:
            raise hinted(ValueError(with_hint(
                "`learning_rate_power` needs to be negative or zero. Received: "
                f"learning_rate_power={learning_rate_power}.", "use a value <= 0")))
        self.learning_rate_power = float(learning_rate_power)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.l1_regularization_strength = float(l1_regularization_strength)
        self.l2_regularization_strength = float(l2_regularization_strength)
        self.l2_shrinkage_regularization_strength = float(l2_shrinkage_regularization_strength)
        self.beta = float(beta)

    def _rule(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
              lr: float) -> None:
        _kr.ftrl_update(param, grad, state, lr=lr,
                        learning_rate_power=self.learning_rate_power,
                        initial_accumulator_value=self.initial_accumulator_value,
                        l1_regularization_strength=self.l1_regularization_strength,
                        l2_regularization_strength=self.l2_regularization_strength,
                        l2_shrinkage_regularization_strength=(
                            self.l2_shrinkage_regularization_strength),
                        beta=self.beta)


class Lion(_Decayed):
    """Lion (Keras defaults: ``learning_rate=0.001, beta_1=0.9, beta_2=0.99``)."""

    _default_name = "lion"

    def _slot_blocks(self) -> list[list[str]]:
        return [["momentum"]]

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.99,
                 weight_decay: Any = None, clipnorm: Any = None, clipvalue: Any = None,
                 global_clipnorm: Any = None, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         name, **_strip(kwargs))
        if beta_1 <= 0 or beta_1 > 1:
            raise hinted(ValueError(with_hint(
                "Argument `beta_1` must be in the [0, 1] range. Otherwise, the optimizer "
                f"degenerates to SignSGD. Received: beta_1={beta_1}.", "use 0 < beta_1 <= 1")))
        self.beta_1, self.beta_2 = float(beta_1), float(beta_2)

    def _rule(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
              lr: float) -> None:
        _kr.lion_update(param, grad, state, lr=lr, beta_1=self.beta_1, beta_2=self.beta_2)


def _strip(kwargs: dict[str, Any]) -> dict[str, Any]:
    return kwargs


def get(identifier: Any) -> Optimizer:
    """An optimizer from a name (``"sgd"``, ``"adam"``, ``"rmsprop"``...) or an instance."""
    if isinstance(identifier, Optimizer):
        return identifier
    from .mixed_precision import LossScaleOptimizer

    if isinstance(identifier, LossScaleOptimizer):
        return identifier  # type: ignore[return-value]
    table: dict[str, Any] = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop,
                             "adagrad": Adagrad, "adadelta": Adadelta, "adamax": Adamax,
                             "nadam": Nadam, "ftrl": Ftrl, "lion": Lion}
    cls = table.get(str(identifier).lower())
    if cls is None:
        raise hinted(ValueError(with_hint(f"Could not interpret optimizer identifier: {identifier}",
                                   f"known names: {', '.join(sorted(table))}")))
    return cls()


from . import schedules  # noqa: E402
