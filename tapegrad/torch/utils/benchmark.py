"""``torch.utils.benchmark``: ``Timer`` and ``Measurement`` as PyTorch has them (Python
statements only), printing PyTorch's summary.

>>> from tapegrad.torch.utils.benchmark import Timer
>>> m = Timer("x + 1", globals={"x": 1}).timeit(1000)
>>> print(repr(m).splitlines()[1:2], m.number_per_run, len(m.times))
['x + 1'] 1000 1
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
import timeit as _timeit
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Timer", "Measurement", "TaskSpec", "select_unit"]

_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What a :class:`Timer` measures (statement, setup and labels)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return (f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n"
                f"{textwrap.indent(self.stmt, '  ')}")

    def setup_str(self) -> str:
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join([f"{i}\n" if "\n" in i else i for i in sections if i])


def select_unit(t: float) -> tuple[str, float]:
    """The unit (``ns``, ``us``, ``ms``, ``s``) and its scale for a time in seconds."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


@dataclasses.dataclass(repr=False)
class Measurement:
    """Times of one or more blocks of ``number_per_run`` runs.

    Attributes
    ----------
    number_per_run : int
        Runs of the statement in each timed block.
    raw_times : list of float
        Seconds each block took; ``times`` gives them per run.
    task_spec : TaskSpec
        What was timed.
    """

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None

    def __post_init__(self) -> None:
        self._sorted_times: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        if name in {f.name for f in dataclasses.fields(TaskSpec)}:
            return getattr(self.task_spec, name)
        raise AttributeError(name)

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    def _lazy_init(self) -> None:
        if self.raw_times and not self._sorted_times:
            self._sorted_times = tuple(sorted(self.times))
            st = np.asarray(self._sorted_times, dtype=np.float64)
            # torch.quantile's default interpolation is numpy's "linear"
            self._median = float(np.quantile(st, 0.5))
            self._mean = float(st.mean())
            self._p25 = float(np.quantile(st, 0.25))
            self._p75 = float(np.quantile(st, 0.75))

            def add_warning(msg: str) -> None:
                rel_iqr = self.iqr / self.median * 100
                self._warnings += (f"  WARNING: Interquartile range is {rel_iqr:.1f}% "
                                   f"of the median measurement.\n           {msg}",)

            if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
                add_warning("This suggests significant environmental influence.")
            elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
                add_warning("This could indicate system fluctuation.")

    def __repr__(self) -> str:
        self._lazy_init()
        skip = "MEASUREMENT_REPR_SKIP_LINE"
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        iqr_filter = "" if n >= 4 else skip
        head = f"<torch.utils.benchmark.utils.common.Measurement object at {hex(id(self))}>"
        per = "per measurement," if n > 1 else ","
        threads = self.task_spec.num_threads
        text = f"""
{head}
{self.task_spec.summarize()}
  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}
  {iqr_filter}IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to {self._p75 / scale:.2f})
  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs {per} {threads} thread{'s' if threads > 1 else ''}
{chr(10).join(self._warnings)}""".strip()  # noqa: E501
        return "\n".join(line for line in text.splitlines() if skip not in line)


class Timer:
    """Time a Python statement (PyTorch's ``torch.utils.benchmark.Timer``).

    Parameters
    ----------
    stmt, setup : str
        The statement to time and the code run once before it.
    timer : callable
        Clock (default ``timeit.default_timer``).
    globals : dict, optional
        Names visible to ``stmt`` and ``setup`` (copied; ``torch`` is added as
        ``tapegrad.torch``).
    label, sub_label, description, env : str, optional
        Shown in the measurement's summary.
    num_threads : int
        Recorded (tapegrad runs NumPy with its own thread settings).

    Examples
    --------
    >>> from tapegrad.torch.utils.benchmark import Timer
    >>> m = Timer("sum(range(10))").blocked_autorange(min_run_time=0.01)
    >>> m.median > 0, m.number_per_run >= 1
    (True, True)
    """

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = _timeit.default_timer,
                 globals: dict[str, Any] | None = None, label: str | None = None,
                 sub_label: str | None = None, description: str | None = None,
                 env: str | None = None, num_threads: int = 1,
                 language: Any = "python") -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if str(language).lower() not in ("python", "py", "language.python"):
            raise ValueError("tapegrad's Timer times Python statements only (no C++)")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely "
                             "this code can simply be moved to `setup`.")
        from ... import torch as _torch

        self._globals = dict(globals or {})
        self._globals.setdefault("torch", _torch)
        stmt = textwrap.dedent(stmt)
        stmt = (stmt[1:] if stmt and stmt[0] == "\n" else stmt).rstrip()
        setup = textwrap.dedent(setup)
        setup = (setup[1:] if setup and setup[0] == "\n" else setup).rstrip()
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                   label=label, sub_label=sub_label, description=description,
                                   env=env, num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """Run ``stmt`` ``number`` times (after a warm-up of ``number // 100``) as one block."""
        self._timeit(number=max(int(number // 100), 2))
        return Measurement(number_per_run=number, raw_times=[self._timeit(number=number)],
                           task_spec=self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], Any] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _estimate_block_size(self, min_run_time: float) -> int:
        overhead = float(np.median([self._timeit(0) for _ in range(5)]))
        number = 1
        while True:
            time_taken = self._timeit(number)
            if overhead / time_taken <= 1e-4 and time_taken >= min_run_time / 1000:
                break
            if time_taken > min_run_time or number * 10 > 2147483647:
                break
            number *= 10
        return number

    def blocked_autorange(self, callback: Callable[[int, float], Any] | None = None,
                          min_run_time: float = 0.2) -> Measurement:
        """Blocks of a size that makes the timer's overhead negligible, repeated until
        ``min_run_time`` seconds have been spent."""
        number = self._estimate_block_size(min_run_time)
        times: list[float] = []
        total = 0.0
        while total < min_run_time:
            t = self._timeit(number)
            times.append(t)
            total += t
            if callback:
                callback(number, t)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], Any] | None = None
                           ) -> Measurement:
        """Blocks of ``min_run_time`` each until the IQR is below ``threshold`` of the median
        (and at least 3 blocks) or ``max_run_time`` is spent."""
        number = self._estimate_block_size(min_run_time=0.05)
        times: list[float] = []
        total = 0.0
        while True:
            t = self._timeit(number)
            times.append(t)
            total += t
            if callback:
                callback(number, t)
            m = Measurement(number_per_run=number, raw_times=list(times),
                            task_spec=self._task_spec)
            if (total >= min_run_time and len(times) > 3 and m.meets_confidence(threshold)) \
                    or total > max_run_time:
                return m
