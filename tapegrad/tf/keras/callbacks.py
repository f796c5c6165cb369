"""``keras.callbacks`` and Keras's progress bar (``keras.utils.Progbar``).

``fit``/``evaluate``/``predict`` drive a :class:`CallbackList` exactly as
Keras 3 does: the user's callbacks first, then ``History``, then
``ProgbarLogger`` (when ``verbose != 0``); epoch logs are sorted by name and
turned into Python floats before any callback sees them, and callbacks that
add entries (``LearningRateScheduler``, ``ReduceLROnPlateau`` add
``learning_rate``) do so in that same dict, so ``History`` records them.

The progress lines are Keras's own text: ``verbose=2`` prints one line per
epoch (``3/3 - 0s - 21ms/step - accuracy: 0.5000 - loss: 0.7939``),
``verbose=1`` a bar redrawn in place.

>>> import tapegrad.tf as tf
>>> bar = tf.keras.utils.Progbar(2, verbose=2)
>>> bar.update(2, [("loss", 0.5)])  # doctest: +ELLIPSIS
2/2 - 0s - ...s/step - loss: 0.5000
"""

from __future__ import annotations

import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor

__all__ = ["Callback", "CallbackList", "History", "ProgbarLogger", "EarlyStopping",
           "ModelCheckpoint", "LearningRateScheduler", "ReduceLROnPlateau", "LambdaCallback",
           "CSVLogger", "TerminateOnNaN", "Progbar", "pythonify_logs"]


def _print(message: str, line_break: bool = True) -> None:
    sys.stdout.write(message + ("\n" if line_break else ""))
    sys.stdout.flush()


def pythonify_logs(logs: Any) -> dict[str, Any]:
    """Keras's log cleaning: sorted keys, nested dicts flattened, values as floats."""
    result: dict[str, Any] = {}
    for key, value in sorted((logs or {}).items()):
        if isinstance(value, dict):
            result.update(pythonify_logs(value))
            continue
        try:
            if isinstance(value, Tensor):
                value = np.asarray(value._data)
            value = float(value)
        except (TypeError, ValueError):
            pass
        result[key] = value
    return result


# ---------------------------------------------------------------------------- progress bar
class Progbar:
    """Keras's progress bar (``keras.utils.Progbar``), the same text and timing rules.

    Parameters
    ----------
    target : int or None
        Total number of steps (``None``: unknown).
    width : int, default 20
    verbose : {0, 1, 2}
        1: a bar redrawn in place; 2: one line when the target is reached.
    interval : float, default 0.05
        Minimum seconds between two redraws of the bar.
    stateful_metrics, stateless_metrics : iterable of str, optional
        Which values are shown as given and which are averaged over steps.
    unit_name : str, default "step"
    """

    def __init__(self, target: int | None, width: int = 20, verbose: int = 1,
                 interval: float = 0.05, stateful_metrics: Iterable[str] | None = None,
                 stateless_metrics: Iterable[str] | None = None, unit_name: str = "step") -> None:
        if stateful_metrics is not None and stateless_metrics is not None:
            raise hinted(ValueError(with_hint(
                "Only one of `stateful_metrics` or `stateless_metrics` can be provided.",
                "pass one of the two lists")))
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        self.stateful_metrics: set[str] | None
        self.stateless_metrics: set[str] | None
        if stateful_metrics is not None:
            self.stateful_metrics, self.stateless_metrics = set(stateful_metrics), None
        elif stateless_metrics is not None:
            self.stateful_metrics, self.stateless_metrics = None, set(stateless_metrics)
        else:
            self.stateful_metrics, self.stateless_metrics = set(), None
        self._dynamic_display = ((hasattr(sys.stdout, "isatty") and sys.stdout.isatty())
                                 or "ipykernel" in sys.modules or "posix" in sys.modules
                                 or "PYCHARM_HOSTED" in os.environ)
        self._seen_so_far = 0
        self._values: dict[str, Any] = {}
        self._values_order: list[str] = []
        self._start = time.time()
        self._last_update = 0.0
        self._time_after_first_step: float | None = None
        self._prev_total_width = 0

    def update(self, current: int, values: Any = None, finalize: bool | None = None) -> None:
        """Show step ``current`` with ``values`` (a list of ``(name, value)`` pairs)."""
        if finalize is None:
            finalize = False if self.target is None else current >= self.target
        for k, v in values or []:
            if k not in self._values_order:
                self._values_order.append(k)
            if self.stateful_metrics is not None:
                stateless = k not in self.stateful_metrics
            else:
                stateless = k in (self.stateless_metrics or set())
            if stateless and not finalize:
                base = max(current - self._seen_so_far, 1)
                if k not in self._values:
                    self._values[k] = [v * base, base]
                else:
                    self._values[k][0] += v * base
                    self._values[k][1] += base
            else:
                self._values[k] = [v, 1]
        self._seen_so_far = current
        now = time.time()
        time_per_unit = self._estimate_step_duration(current, now)
        if self.verbose == 1:
            if now - self._last_update < self.interval and not finalize:
                return
            self._draw_bar(current, now, time_per_unit, bool(finalize))
        elif self.verbose == 2 and finalize and self.target:
            numdigits = int(math.log10(self.target)) + 1
            count = f"{current:{numdigits}d}/{self.target}"
            info = f"{count} - {now - self._start:.0f}s"
            info += f" -{self._format_time(time_per_unit, self.unit_name)}"
            for k in self._values_order:
                info += f" - {k}:" + self._value_text(k, signed=False)
            _print(info + "\n", line_break=False)
        self._last_update = now

    def _value_text(self, k: str, signed: bool) -> str:
        value, count = self._values[k]
        if not isinstance(value, float):
            value = np.mean(value)
        avg = value / max(1, count)
        big = abs(avg) > 1e-3 if signed else avg > 1e-3
        return f" {avg:.4f}" if big else f" {avg:.4e}"

    def _draw_bar(self, current: int, now: float, time_per_unit: float, finalize: bool) -> None:
        message = ("\b" * self._prev_total_width + "\r") if self._dynamic_display else "\n"
        special = 0
        if self.target:
            numdigits = int(math.log10(self.target)) + 1
            bar = f"\x1b[1m{current:{numdigits}d}/{self.target}\x1b[0m "
            special += 8
            prog_width = int(self.width * float(current) / self.target)
            if prog_width > 0:
                bar += f"\33[32m{'━' * prog_width}\x1b[0m"
                special += 9
            bar += f"\33[37m{'━' * (self.width - prog_width)}\x1b[0m"
            special += 9
        else:
            bar = f"{current:7d}/Unknown"
        message += bar
        if self.target and not finalize:
            eta = time_per_unit * (self.target - current)
            if eta > 3600:
                eta_format = f"{int(eta // 3600)}:{int((eta % 3600) // 60):02d}:{int(eta % 60):02d}"
            elif eta > 60:
                eta_format = f"{int(eta // 60)}:{int(eta % 60):02d}"
            else:
                eta_format = f"{int(eta)}s"
            info = f" \x1b[1m{eta_format}\x1b[0m"
        else:
            info = f" \x1b[1m{now - self._start:.0f}s\x1b[0m"
        special += 8
        info += self._format_time(time_per_unit, self.unit_name)
        for k in self._values_order:
            info += f" - {k}:" + self._value_text(k, signed=True)
        message += info
        total_width = len(bar) + len(info) - special
        if self._prev_total_width > total_width:
            message += " " * (self._prev_total_width - total_width)
        if finalize:
            message += "\n"
        _print(message, line_break=False)
        self._prev_total_width = total_width

    def add(self, n: int, values: Any = None) -> None:
        self.update(self._seen_so_far + n, values)

    @staticmethod
    def _format_time(time_per_unit: float, unit_name: str) -> str:
        if time_per_unit >= 1 or time_per_unit == 0:
            return f" {time_per_unit:.0f}s/{unit_name}"
        if time_per_unit >= 1e-3:
            return f" {time_per_unit * 1000.0:.0f}ms/{unit_name}"
        return f" {time_per_unit * 1000000.0:.0f}us/{unit_name}"

    def _estimate_step_duration(self, current: int, now: float) -> float:
        if not current:
            return 0.0
        if self._time_after_first_step is not None and current > 1:
            tpu = (now - self._time_after_first_step) / (current - 1)
        else:
            tpu = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return tpu


# ---------------------------------------------------------------------------- callbacks
class Callback:
    """Base class of callbacks: override any ``on_*`` method.

    ``self.model`` is the model being trained and ``self.params`` holds
    ``verbose``, ``epochs`` and ``steps``.

    >>> import tapegrad.tf as tf
    >>> class Count(tf.keras.callbacks.Callback):
    ...     def on_train_begin(self, logs=None):
    ...         self.n = 0
    ...     def on_train_batch_end(self, batch, logs=None):
    ...         self.n += 1
    """

    def __init__(self) -> None:
        self.params: dict[str, Any] = {}
        self._model: Any = None

    def set_params(self, params: dict[str, Any]) -> None:
        self.params = params

    def set_model(self, model: Any) -> None:
        self._model = model

    @property
    def model(self) -> Any:
        return self._model

    def on_batch_begin(self, batch: int, logs: Any = None) -> None: ...
    def on_batch_end(self, batch: int, logs: Any = None) -> None: ...
    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None: ...
    def on_epoch_end(self, epoch: int, logs: Any = None) -> None: ...

    def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch: int, logs: Any = None) -> None: ...
    def on_test_batch_end(self, batch: int, logs: Any = None) -> None: ...
    def on_predict_batch_begin(self, batch: int, logs: Any = None) -> None: ...
    def on_predict_batch_end(self, batch: int, logs: Any = None) -> None: ...
    def on_train_begin(self, logs: Any = None) -> None: ...
    def on_train_end(self, logs: Any = None) -> None: ...
    def on_test_begin(self, logs: Any = None) -> None: ...
    def on_test_end(self, logs: Any = None) -> None: ...
    def on_predict_begin(self, logs: Any = None) -> None: ...
    def on_predict_end(self, logs: Any = None) -> None: ...


class History(Callback):
    """Records every epoch's logs: ``history.history["loss"]`` and ``history.epoch``."""

    def __init__(self) -> None:
        super().__init__()
        self.history: dict[str, list[Any]] = {}
        self.epoch: list[int] = []

    def on_train_begin(self, logs: Any = None) -> None:
        self.epoch = []

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)
        self.model.history = self

    def __repr__(self) -> str:
        return f"<keras.src.callbacks.history.History object at {id(self):#x}>"


class ProgbarLogger(Callback):
    """Prints Keras's progress lines during ``fit``/``evaluate``/``predict``."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0
        self.progbar: Progbar | None = None
        self.target: int | None = None
        self.verbose: Any = 1
        self.epochs = 1
        self._called_in_fit = False

    def set_params(self, params: dict[str, Any]) -> None:
        super().set_params(params)
        verbose = params["verbose"]
        self.verbose = 1 if verbose == "auto" else verbose
        self.epochs = params["epochs"]
        self.target = params["steps"]

    def on_train_begin(self, logs: Any = None) -> None:
        self._called_in_fit = True

    def on_test_begin(self, logs: Any = None) -> None:
        if not self._called_in_fit:
            self._reset()
            self._init()

    def on_predict_begin(self, logs: Any = None) -> None:
        self._reset()
        self._init()

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        self._reset()
        self._init()
        if self.verbose and self.epochs > 1:
            _print(f"Epoch {epoch + 1}/{self.epochs}")

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        self._update(batch, logs)

    def on_test_batch_end(self, batch: int, logs: Any = None) -> None:
        if not self._called_in_fit:
            self._update(batch, logs)

    def on_predict_batch_end(self, batch: int, logs: Any = None) -> None:
        self._update(batch, None)

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        self._finalize(logs)

    def on_test_end(self, logs: Any = None) -> None:
        if not self._called_in_fit:
            self._finalize(logs)

    def on_predict_end(self, logs: Any = None) -> None:
        self._finalize(logs)

    def _reset(self) -> None:
        self.seen = 0
        self.progbar = None

    def _init(self) -> Progbar:
        if self.progbar is None:
            self.progbar = Progbar(target=self.target, verbose=self.verbose, unit_name="step",
                                   stateless_metrics=set())
        return self.progbar

    def _update(self, batch: int, logs: Any) -> None:
        bar = self._init()
        self.seen = batch + 1
        if self.verbose == 1:
            bar.update(self.seen, list((logs or {}).items()), finalize=False)

    def _finalize(self, logs: Any) -> None:
        bar = self._init()
        if self.target is None:
            self.target = self.seen
            bar.target = self.target
        bar.update(self.target, list((logs or {}).items()), finalize=True)


class CallbackList(Callback):
    """The user's callbacks plus ``History`` and ``ProgbarLogger``, called in order."""

    def __init__(self, callbacks: Any = None, add_history: bool = False,
                 add_progbar: bool = False, model: Any = None, **params: Any) -> None:
        super().__init__()
        self.callbacks: list[Callback] = list(callbacks or [])
        self._history: History | None = None
        self._progbar: ProgbarLogger | None = None
        for cb in self.callbacks:
            if isinstance(cb, ProgbarLogger):
                self._progbar = cb
            elif isinstance(cb, History):
                self._history = cb
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        if self._progbar is None and add_progbar:
            self._progbar = ProgbarLogger()
            self.callbacks.append(self._progbar)
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def set_model(self, model: Any) -> None:
        super().set_model(model)
        if self._history is not None:
            model.history = self._history
        for cb in self.callbacks:
            cb.set_model(model)

    def set_params(self, params: dict[str, Any]) -> None:
        super().set_params(params)
        for cb in self.callbacks:
            cb.set_params(params)

    def _call(self, name: str, *args: Any, logs: Any = None) -> None:
        if name.endswith("_begin"):  # each run and epoch looks again at who listens
            self.__dict__.pop("_listeners", None)
        logs = pythonify_logs(logs)
        for cb in self.callbacks:  # positionally, as Keras calls them (any parameter names)
            getattr(cb, name)(*args, logs)

    def _batch_listeners(self, name: str) -> list[Callback]:
        """The callbacks whose ``name`` hook (a per-batch one) does something: the others
        are not called at all, and the batch logs are not converted when none listens."""
        cbs = self.callbacks
        key = (id(cbs), len(cbs))
        cache: tuple[tuple[int, int], dict[str, list[Callback]]] | None = \
            self.__dict__.get("_listeners")
        if cache is None or cache[0] != key:
            cache = (key, {})
            self.__dict__["_listeners"] = cache
        found = cache[1].get(name)
        if found is None:
            found = [cb for cb in cbs if _listens(cb, name)]
            cache[1][name] = found
        return found

    def _call_batch(self, name: str, batch: int, logs: Any) -> None:
        listeners = self._batch_listeners(name)
        if not listeners:
            return
        logs = pythonify_logs(logs)
        for cb in listeners:
            getattr(cb, name)(batch, logs)

    def on_batch_begin(self, batch: int, logs: Any = None) -> None:
        self._call_batch("on_train_batch_begin", batch, logs)

    def on_batch_end(self, batch: int, logs: Any = None) -> None:
        self._call_batch("on_train_batch_end", batch, logs)

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        self._call("on_epoch_begin", epoch, logs=logs)

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        self._call("on_epoch_end", epoch, logs=logs)

    def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
        self._call_batch("on_train_batch_begin", batch, logs)

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        self._call_batch("on_train_batch_end", batch, logs)

    def on_test_batch_begin(self, batch: int, logs: Any = None) -> None:
        self._call_batch("on_test_batch_begin", batch, logs)

    def on_test_batch_end(self, batch: int, logs: Any = None) -> None:
        self._call_batch("on_test_batch_end", batch, logs)

    def on_predict_batch_begin(self, batch: int, logs: Any = None) -> None:
        self._call_batch("on_predict_batch_begin", batch, logs)

    def on_predict_batch_end(self, batch: int, logs: Any = None) -> None:
        for cb in self._batch_listeners("on_predict_batch_end"):  # predictions are not logs:
            cb.on_predict_batch_end(batch, logs)                   # passed through unchanged

    def on_train_begin(self, logs: Any = None) -> None:
        self._call("on_train_begin", logs=logs)

    def on_train_end(self, logs: Any = None) -> None:
        self._call("on_train_end", logs=logs)

    def on_test_begin(self, logs: Any = None) -> None:
        self._call("on_test_begin", logs=logs)

    def on_test_end(self, logs: Any = None) -> None:
        self._call("on_test_end", logs=logs)

    def on_predict_begin(self, logs: Any = None) -> None:
        self._call("on_predict_begin", logs=logs)

    def on_predict_end(self, logs: Any = None) -> None:
        self._call("on_predict_end", logs=logs)


#: the per-batch hooks and the older name each one forwards to in the base class
_BATCH_ALIASES = {"on_train_batch_begin": "on_batch_begin", "on_train_batch_end": "on_batch_end"}


def _listens(cb: Callback, name: str) -> bool:
    """Whether ``cb``'s ``name`` hook is more than the base class's no-op: overridden in its
    class (or, for the training hooks, ``on_batch_begin``/``on_batch_end`` overridden, which
    the base forwards to) or set on the instance (``LambdaCallback``)."""
    names = (name, _BATCH_ALIASES[name]) if name in _BATCH_ALIASES else (name,)
    inst = getattr(cb, "__dict__", {})
    cls = type(cb)
    return any(n in inst or getattr(cls, n, None) is not getattr(Callback, n) for n in names)


def _monitor_op(mode: str, monitor: str) -> Callable[[Any, Any], Any]:
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"EarlyStopping mode {mode} is unknown, fallback to auto mode.",
                      stacklevel=3)
        mode = "auto"
    if mode == "min":
        return np.less
    if mode == "max":
        return np.greater
    name = monitor.removeprefix("val_")
    if name == "loss":
        return np.less
    if any(k in name for k in ("acc", "auc", "precision", "recall")):
        return np.greater
    return np.less


class EarlyStopping(Callback):
    """Stop training when ``monitor`` has stopped improving for ``patience`` epochs.

    Keras 3's rules: an improvement must beat the best value by ``min_delta``;
    ``restore_best_weights`` puts back the weights of the best epoch when it
    stops; ``start_from_epoch`` ignores the first epochs.
    """

    def __init__(self, monitor: str = "val_loss", min_delta: float = 0, patience: int = 0,
                 verbose: int = 0, mode: str = "auto", baseline: float | None = None,
                 restore_best_weights: bool = False, start_from_epoch: int = 0) -> None:
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.min_delta = abs(min_delta)
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        self.mode = mode
        self.monitor_op = _monitor_op(mode, monitor)
        if self.monitor_op is np.less:
            self.min_delta *= -1
        self.wait = 0
        self.stopped_epoch = 0
        self.best: Any = None
        self.best_weights: Any = None
        self.best_epoch = 0

    def on_train_begin(self, logs: Any = None) -> None:
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        current = self.get_monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose > 0:
                    _print("Restoring model weights from the end of the best epoch: "
                           f"{self.best_epoch + 1}.")
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs: Any = None) -> None:
        if self.stopped_epoch > 0 and self.verbose > 0:
            _print(f"Epoch {self.stopped_epoch + 1}: early stopping")

    def get_monitor_value(self, logs: Any) -> Any:
        logs = logs or {}
        value = logs.get(self.monitor)
        if value is None:
            warnings.warn(
                f"Early stopping conditioned on metric `{self.monitor}` which is not "
                f"available. Available metrics are: {','.join(list(logs.keys()))}",
                stacklevel=2)
        return value

    def _is_improvement(self, value: Any, reference: Any) -> bool:
        if reference is None:
            return True
        return bool(self.monitor_op(value - self.min_delta, reference))


class LearningRateScheduler(Callback):
    """Set the optimizer's learning rate at the start of each epoch:
    ``schedule(epoch, lr)`` (or ``schedule(epoch)``); logs ``learning_rate``."""

    def __init__(self, schedule: Callable[..., Any], verbose: int = 0) -> None:
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        opt = self.model.optimizer
        if not hasattr(opt, "learning_rate"):
            raise hinted(ValueError(with_hint('Optimizer must have a "learning_rate" attribute.',
                                       "compile the model with a Keras optimizer")))
        try:
            lr = float(np.asarray(opt.learning_rate._data))
            lr = self.schedule(epoch, lr)
        except TypeError:
            lr = self.schedule(epoch)
        if isinstance(lr, Tensor):
            lr = float(np.asarray(lr._data))
        if not isinstance(lr, (float, np.float32, np.float64, int)):
            raise hinted(ValueError(with_hint(
                f"The output of the `schedule` function should be a float. Got: {lr}",
                "return a number from the schedule")))
        opt.learning_rate = lr
        if self.verbose > 0:
            _print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {lr}.")

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        if logs is not None:
            logs["learning_rate"] = float(np.asarray(self.model.optimizer.learning_rate._data))


class ReduceLROnPlateau(Callback):
    """Multiply the learning rate by ``factor`` when ``monitor`` stops improving."""

    def __init__(self, monitor: str = "val_loss", factor: float = 0.1, patience: int = 10,
                 verbose: int = 0, mode: str = "auto", min_delta: float = 1e-4,
                 cooldown: int = 0, min_lr: float = 0.0, **kwargs: Any) -> None:
        super().__init__()
        if factor >= 1.0:
            raise hinted(ValueError(with_hint(
                "ReduceLROnPlateau does not support a factor >= 1.0. Received factor="
                f"{factor}", "use a factor below 1")))
        self.monitor = monitor
        self.factor = factor
        self.min_lr = min_lr
        self.min_delta = min_delta
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.wait = 0
        self.best = 0.0
        self.mode = mode if mode in ("auto", "min", "max") else "auto"
        self._reset()

    def _reset(self) -> None:
        if self.mode == "min" or (self.mode == "auto" and "acc" not in self.monitor):
            self.monitor_op: Callable[[Any, Any], Any] = \
                lambda a, b: np.less(a, b - self.min_delta)
            self.best = np.inf
        else:
            self.monitor_op = lambda a, b: np.greater(a, b + self.min_delta)
            self.best = -np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs: Any = None) -> None:
        self._reset()

    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        logs = logs if logs is not None else {}
        opt = self.model.optimizer
        logs["learning_rate"] = float(np.asarray(opt.learning_rate._data))
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(
                "Learning rate reduction is conditioned on metric "
                f"`{self.monitor}` which is not available. Available metrics are: "
                f"{','.join(list(logs.keys()))}.", stacklevel=2)
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = float(np.asarray(opt.learning_rate._data))
                if old_lr > np.float32(self.min_lr):
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    opt.learning_rate = new_lr
                    if self.verbose > 0:
                        _print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning "
                               f"rate to {new_lr}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


class LambdaCallback(Callback):
    """A callback from plain functions: ``LambdaCallback(on_epoch_end=lambda e, logs: ...)``."""

    def __init__(self, on_epoch_begin: Any = None, on_epoch_end: Any = None,
                 on_train_begin: Any = None, on_train_end: Any = None,
                 on_train_batch_begin: Any = None, on_train_batch_end: Any = None,
                 **kwargs: Any) -> None:
        super().__init__()
        fns = dict(on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end,
                   on_train_begin=on_train_begin, on_train_end=on_train_end,
                   on_train_batch_begin=on_train_batch_begin,
                   on_train_batch_end=on_train_batch_end, **kwargs)
        for name, fn in fns.items():
            if fn is not None:
                setattr(self, name, fn)


class ModelCheckpoint(Callback):
    """Save the model (a ``.keras`` file) or its weights (``save_weights_only=True``, a
    ``.weights.h5`` file) each epoch or
    when ``monitor`` improves (``save_best_only=True``); the file name may hold
    ``{epoch}`` and log keys (``"w-{epoch:02d}-{val_loss:.2f}.weights.h5"``)."""

    def __init__(self, filepath: str, monitor: str = "val_loss", verbose: int = 0,
                 save_best_only: bool = False, save_weights_only: bool = False,
                 mode: str = "auto", save_freq: Any = "epoch",
                 initial_value_threshold: float | None = None) -> None:
        super().__init__()
        self.filepath = os.fspath(filepath)
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.save_freq = save_freq
        self.monitor_op = _monitor_op(mode, monitor)
        self.best = initial_value_threshold if initial_value_threshold is not None else \
            (np.inf if self.monitor_op is np.less else -np.inf)
        if save_freq != "epoch":
            raise hinted(NotImplementedError(with_hint(
                f"ModelCheckpoint(save_freq={save_freq!r}) is not supported",
                "tapegrad saves once per epoch: use save_freq='epoch'")))
        if save_weights_only:
            if not self.filepath.endswith(".weights.h5"):
                raise hinted(ValueError(with_hint(
                    "When using `save_weights_only=True` in `ModelCheckpoint`, the filepath "
                    "provided must end in `.weights.h5` (Keras weights format). Received: "
                    f"filepath={self.filepath}", "name the file e.g. 'ckpt.weights.h5'")))
        elif not self.filepath.endswith(".keras"):
            raise hinted(ValueError(with_hint(
                "The filepath provided must end in `.keras` (Keras model format). Received: "
                f"filepath={self.filepath}", "name the file e.g. 'model.keras'")))

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        logs = logs or {}
        path = self.filepath.format(epoch=epoch + 1, **logs)
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                warnings.warn(f"Can save best model only with {self.monitor} available.",
                              stacklevel=2)
                return
            if not self.monitor_op(current, self.best):
                if self.verbose > 0:
                    _print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from "
                           f"{self.best:.5f}")
                return
            if self.verbose > 0:
                _print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} "
                       f"to {current:.5f}, saving model to {path}")
            self.best = current
        elif self.verbose > 0:
            _print(f"\nEpoch {epoch + 1}: saving model to {path}")
        d = os.path.dirname(path)
        if d:
            os.makedirs(d, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)


class TerminateOnNaN(Callback):
    """Stop training as soon as a batch's loss is NaN or infinite."""

    def on_batch_end(self, batch: int, logs: Any = None) -> None:
        loss = (logs or {}).get("loss")
        if loss is not None and (np.isnan(loss) or np.isinf(loss)):
            _print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class CSVLogger(Callback):
    """Write each epoch's logs as a CSV row (``epoch`` then the log keys, sorted)."""

    def __init__(self, filename: str, separator: str = ",", append: bool = False) -> None:
        super().__init__()
        self.sep = separator
        self.filename = os.fspath(filename)
        self.append = append
        self.writer: Any = None
        self.keys: list[str] | None = None
        self.append_header = True
        self._file: Any = None

    def on_train_begin(self, logs: Any = None) -> None:
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as f:
                    self.append_header = not bool(len(f.readline()))
            mode = "a"
        else:
            mode = "w"
        self._file = open(self.filename, mode, newline="")  # noqa: SIM115 - kept across epochs
        self.writer = None
        self.keys = None

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        import collections
        import csv

        logs = logs or {}

        def handle_value(k: Any) -> Any:
            zero_dim = isinstance(k, np.ndarray) and k.ndim == 0
            if isinstance(k, str):
                return k
            if isinstance(k, collections.abc.Iterable) and not zero_dim:
                return f"\"[{', '.join(map(str, k))}]\""
            return k

        if self.keys is None:
            self.keys = sorted(logs.keys())
        if self.writer is None:
            sep = self.sep

            class Dialect(csv.excel):
                delimiter = sep

            self.writer = csv.DictWriter(self._file, fieldnames=["epoch"] + self.keys,
                                         dialect=Dialect)
            if self.append_header:
                self.writer.writeheader()
        row: dict[str, Any] = {"epoch": epoch}
        row.update((key, handle_value(logs.get(key, "NA"))) for key in self.keys)
        self.writer.writerow(row)
        self._file.flush()

    def on_train_end(self, logs: Any = None) -> None:
        if self._file is not None:
            self._file.close()
        self.writer = None
