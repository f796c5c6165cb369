"""``torch.utils.benchmark``: ``Timer`` and ``Measurement`` as PyTorch has them (Python
statements only), printing PyTorch's summary.

>>> from tapegrad.torch.utils.benchmark import Timer
>>> m = Timer("x + 1", globals={"x": 1}).timeit(1000)
>>> print(repr(m).splitlines()[1:2], m.number_per_run, len(m.times))
['x + 1'] 1000 1
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import math
import textwrap
import timeit as _timeit
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

__all__ = ["Timer", "Measurement", "TaskSpec", "select_unit", "Compare", "Colorize",
           "trim_sigfig"]

_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25
_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9
_f32 = np.float32  # PyTorch does these summaries with float32 tensors


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


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (in float32, as PyTorch computes it)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(np.ceil(np.log10(np.abs(_f32(x)))))
    scale = 10 ** (magnitude - n)
    return float(np.round(_f32(x / scale)) * _f32(scale))


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
    def env(self) -> str | None:
        return self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.task_spec.sub_label or self.task_spec.stmt or "[Unknown]"

    @property
    def significant_figures(self) -> int:
        """A rough count of trustworthy digits, from the spread of the middle half of the
        times (used by :class:`Compare` when trimming)."""
        self._lazy_init()
        n = len(self._sorted_times)
        lo, hi = int(n // 4), int(np.ceil(_f32(3 * n / 4)))
        mid = np.asarray(self._sorted_times[lo:hi], dtype=np.float32)
        std = float(mid.std()) if mid.size else float("nan")
        ci = max(1.645 * std / float(np.sqrt(_f32(mid.size))), _MIN_CONFIDENCE_INTERVAL)
        digits = int(np.floor(np.log10(_f32(self._median / ci))))
        return min(max(digits, 1), _MAX_SIGNIFICANT_FIGURES)

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """Replicates of one task pooled into one measurement of single runs."""
        groups: dict[TaskSpec, list[Measurement]] = {}
        for m in measurements:
            groups.setdefault(m.task_spec, []).append(m)
        return [Measurement(number_per_run=1,
                            raw_times=[t for m in g for t in m.times], task_spec=spec)
                for spec, g in groups.items()]

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

    def __repr__(self) -> str:
        return f"<torch.utils.benchmark.utils.timer.Timer object at {hex(id(self))}>"

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


BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


class _Column:
    def __init__(self, grouped_results: list[tuple[Measurement | None, ...]], time_scale: float,
                 trim_significant_figures: bool, highlight_warnings: bool) -> None:
        self._grouped_results = grouped_results
        flat = [*itertools.chain.from_iterable(grouped_results)]
        self._time_scale = time_scale
        self._trim = trim_significant_figures
        self._highlight = highlight_warnings and any(r.has_warnings for r in flat if r)
        leading = [int(np.ceil(np.log10(_f32(r.median / time_scale)))) if r else None
                   for r in flat]
        unit_digits = max(d for d in leading if d is not None)
        decimal_digits = min(max(m.significant_figures - d, 0) for d, m in zip(leading, flat)
                             if m is not None and d is not None) if self._trim else 1
        length = unit_digits + decimal_digits + (1 if decimal_digits else 0)
        self._template = (f"{{:>{length}.{decimal_digits}f}}"
                          f"{{:>{7 if self._highlight else 0}}}")

    def get_results_for(self, group: int) -> tuple[Measurement | None, ...]:
        return self._grouped_results[group]

    def num_to_str(self, value: float | None, sigfigs: int, spread: float | None) -> str:
        if value is None:
            return " " * len(self.num_to_str(1, sigfigs, None))
        if self._trim:
            value = trim_sigfig(value, sigfigs)
        return self._template.format(
            value, f" (! {spread * 100:.0f}%)" if self._highlight and spread is not None else "")


class _Row:
    def __init__(self, results: list[Measurement | None], row_group: int, render_env: bool,
                 env_str_len: int, time_scale: float, colorize: Colorize,
                 num_threads: int | None = None) -> None:
        self._results = results
        self._row_group = row_group
        self._render_env = render_env
        self._env_str_len = env_str_len
        self._time_scale = time_scale
        self._colorize = colorize
        self._columns: tuple[_Column, ...] = ()
        self._num_threads = num_threads

    def as_column_strings(self) -> list[str]:
        concrete = [r for r in self._results if r is not None]
        env = f"({concrete[0].env})" if self._render_env else ""
        out = ["  " + env.ljust(self._env_str_len + 4) + concrete[0].as_row_name]
        for m, col in zip(self._results, self._columns):
            if m is None:
                out.append(col.num_to_str(None, 1, None))
            else:
                out.append(col.num_to_str(m.median / self._time_scale, m.significant_figures,
                                          m.iqr / m.median if m.has_warnings else None))
        return out

    @staticmethod
    def color_segment(segment: str, value: float, best: float) -> str:
        if value <= best * 1.01 or value <= best + 100e-9:
            return BEST + BOLD + segment + TERMINATE * 2
        if value <= best * 1.1:
            return GOOD + BOLD + segment + TERMINATE * 2
        if value >= best * 5:
            return VERY_BAD + BOLD + segment + TERMINATE * 2
        if value >= best * 2:
            return BAD + segment + TERMINATE * 2
        return segment

    def row_separator(self, overall_width: int) -> list[str]:
        if self._num_threads is None:
            return []
        return [f"{self._num_threads} threads: ".ljust(overall_width, "-")]

    def finalize_column_strings(self, column_strings: list[str], widths: list[int]) -> list[str]:
        best: list[float | None] = [-1.0 for _ in column_strings]
        if self._colorize == Colorize.ROWWISE:
            row_min = min(r.median for r in self._results if r is not None)
            best = [row_min for _ in column_strings]
        elif self._colorize == Colorize.COLUMNWISE:
            best = [min((r.median for r in c.get_results_for(self._row_group) if r is not None),
                        default=None) for c in self._columns]
        row = [column_strings[0].ljust(widths[0])]
        for text, width, result, b in zip(column_strings[1:], widths[1:], self._results, best):
            text = text.center(width)
            if self._colorize != Colorize.NONE and result is not None and b is not None:
                text = self.color_segment(text, result.median, b)
            row.append(text)
        return row


def _table(results: list[Measurement], colorize: Colorize, trim: bool, highlight: bool) -> str:
    """One label's results as PyTorch's comparison table: rows by thread count, env and
    sub-label (or statement), columns by description."""
    label = results[0].task_spec.label
    unit, scale = select_unit(min(r.median for r in results))

    def row_fn(m: Measurement) -> tuple[int, str | None, str]:
        return m.task_spec.num_threads, m.env, m.as_row_name

    row_keys = list(dict.fromkeys(row_fn(r) for r in results))
    row_keys.sort(key=lambda k: k[:2])
    col_keys = list(dict.fromkeys(r.task_spec.description for r in results))
    ordered: list[list[Measurement | None]] = [[None] * len(col_keys) for _ in row_keys]
    rpos = {k: i for i, k in enumerate(row_keys)}
    cpos = {k: i for i, k in enumerate(col_keys)}
    for r in results:
        ordered[rpos[row_fn(r)]][cpos[r.task_spec.description]] = r
    envs = {r.env for r in results}
    render_env = len(envs) > 1
    env_len = max(len(str(e)) for e in envs) if render_env else 0
    rows: list[_Row] = []
    by_group: list[list[list[Measurement | None]]] = []
    prior_threads, prior_env, group = -1, "", -1
    for (threads, env, _), row in zip(row_keys, ordered):
        transition = threads != prior_threads
        if transition:
            prior_threads, prior_env = threads, ""
            group += 1
            by_group.append([])
        rows.append(_Row(row, group, render_env and env != prior_env, env_len, scale, colorize,
                         threads if transition else None))
        by_group[-1].append(row)
        prior_env = env  # type: ignore[assignment]
    columns = tuple(_Column([tuple(r[i] for r in g) for g in by_group], scale, trim, highlight)
                    for i in range(len(col_keys)))
    for row_obj in rows:
        row_obj._columns = columns
    string_rows: list[list[str]] = [[""] + [str(k) if k is not None else "None"
                                            for k in col_keys]]
    string_rows.extend(row_obj.as_column_strings() for row_obj in rows)
    ncols = max(len(r) for r in string_rows)
    for sr in string_rows:
        sr.extend([""] * (ncols - len(sr)))
    widths = [max(len(j) for j in col) for col in zip(*string_rows)]
    lines = ["  |  ".join(t.center(w) for t, w in zip(string_rows[0], widths))]
    overall = len(lines[0])
    for sr, row_obj in zip(string_rows[1:], rows):
        lines.extend(row_obj.row_separator(overall))
        lines.append("  |  ".join(row_obj.finalize_column_strings(sr, widths)))
    warn = highlight and any(r.has_warnings for r in results)
    note = ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
            if warn else "")
    return (f"[{(' ' + (label or '') + ' ').center(overall - 2, '-')}]\n" + "\n".join(lines)
            + f"\n\nTimes are in {unit_to_english(unit)}s ({unit}).\n" + note)


class Compare:
    """Measurements side by side, one table per label, as PyTorch's
    ``torch.utils.benchmark.Compare`` prints them.

    >>> from tapegrad.torch.utils.benchmark import Compare, Timer
    >>> res = [Timer("x * 2", globals={"x": 3}, label="mul", sub_label="int",
    ...              description=d).timeit(100) for d in ("a", "b")]
    >>> print(str(Compare(res)).splitlines()[1].split("|"))
    ['           ', '   a    ', '   b  ']
    """

    def __init__(self, results: list[Measurement]) -> None:
        self._results: list[Measurement] = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results: Iterable[Measurement]) -> None:
        results = list(results)
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def _render(self) -> list[str]:
        groups: dict[str | None, list[Measurement]] = {}
        for r in Measurement.merge(self._results):
            groups.setdefault(r.task_spec.label, []).append(r)
        return [_table(g, self._colorize, self._trim_significant_figures,
                       self._highlight_warnings) for g in groups.values()]
