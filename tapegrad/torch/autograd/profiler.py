"""``torch.autograd.profiler``: time every tapegrad op and print PyTorch's table.

While a :class:`profile` is active, each op's forward is timed as an event
named ``tapegrad::<op>`` (``tapegrad::matmul``, ``tapegrad::relu``: tapegrad's
own op names, not ATen's), each backward function as
``autograd::engine::evaluate_function: <Node>`` with the ops it runs inside
it, and each :class:`record_function` block under its own name.
``key_averages()`` groups the events by name (and by input shapes on request)
and ``table()`` prints them in PyTorch's layout.

>>> import tapegrad.torch as torch
>>> x = torch.ones(8, 8, requires_grad=True)
>>> with torch.autograd.profiler.profile(record_shapes=True) as prof:
...     (x @ x).relu().sum().backward()
>>> names = [e.key for e in prof.key_averages()]
>>> "tapegrad::matmul" in names and "autograd::engine::evaluate_function: MmBackward0" in names
True
"""

from __future__ import annotations

import functools
import gc
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..._core.registry import Op

__all__ = ["profile", "record_function", "FunctionEvent", "FunctionEventAvg", "EventList"]

_LOCK = threading.Lock()
_ACTIVE: list[_Recorder] = []
_PATCHED: dict[int, tuple[Op, Any, Any]] = {}


def _format_time(time_us: float) -> str:
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us: float, total_us: float) -> str:
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _shape_of(a: Any) -> list[int]:
    if isinstance(a, np.ndarray):
        return list(a.shape)
    return []


class FunctionEvent:
    """One timed event: an op's forward, a backward function, or a user block."""

    def __init__(self, id: int, name: str, thread: int, start_us: float,
                 input_shapes: list[list[int]] | None) -> None:
        self.id = id
        self.name = name
        self.key = name
        self.thread = thread
        self.start_us = start_us
        self.end_us = start_us
        self.input_shapes = input_shapes
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.count = 1
        self.is_async = False
        self.is_user_annotation = False
        # no device, no memory profiling: PyTorch reports zeros for these on the CPU
        self.device_time_total = self.self_device_time_total = self.device_time = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} "
                f"cpu_time={_format_time(self.cpu_time_total)} start_us={self.start_us:.3f} "
                f"end_us={self.end_us:.3f} cpu_children={[c.id for c in self.cpu_children]} "
                f"thread={self.thread} input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """Events of one key (name, and input shapes when grouped so) added up."""

    def __init__(self, key: str, input_shapes: Any) -> None:
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.is_async = False
        self.is_user_annotation = False
        self.cpu_parent: Any = None
        self.device_time_total = self.self_device_time_total = self.device_time = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0

    def add(self, evt: FunctionEvent) -> FunctionEventAvg:
        self.count += evt.count
        self.cpu_time_total += evt.cpu_time_total
        self.self_cpu_time_total += evt.self_cpu_time_total
        return self

    @property
    def cpu_time(self) -> float:
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time="
                f"{_format_time(self.self_cpu_time_total)} cpu_time="
                f"{_format_time(self.cpu_time)} input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of events with PyTorch's summaries (``key_averages``, ``table``)."""

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0
                     ) -> EventList:
        """One :class:`FunctionEventAvg` per name (and input shapes), in order of first
        occurrence."""
        groups: OrderedDict[Any, FunctionEventAvg] = OrderedDict()
        for evt in self:
            shapes = evt.input_shapes if group_by_input_shape else None
            k = (evt.key, str(shapes)) if group_by_input_shape else evt.key
            if k not in groups:
                groups[k] = FunctionEventAvg(evt.key, evt.input_shapes
                                             if group_by_input_shape else None)
            groups[k].add(evt)
        return EventList(groups.values())

    @property
    def self_cpu_time_total(self) -> float:
        return float(sum(e.self_cpu_time_total for e in self))

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total", None)
        for e in self:
            total.count += e.count
            total.cpu_time_total += e.cpu_time_total
            total.self_cpu_time_total += e.self_cpu_time_total
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """The events as PyTorch's profiler table (``sort_by``: an attribute such as
        ``"self_cpu_time_total"``, ``"cpu_time_total"`` or ``"count"``)."""
        return _build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width,
                            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (``chrome://tracing``, Perfetto)."""
        trace = [{"name": e.name, "ph": "X", "ts": e.start_us, "dur": e.cpu_time_total,
                  "tid": e.thread, "pid": "CPU functions", "cat": "cpu_op",
                  "args": {"Input Dims": e.input_shapes or []}} for e in self
                 if isinstance(e, FunctionEvent)]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace}, f)


def _build_table(events: list[Any], sort_by: str | None = None, header: str | None = None,
                 row_limit: int = 100, max_name_column_width: int = 55,
                 max_shapes_column_width: int = 80, top_level_events_only: bool = False,
                 time_unit: str | None = None) -> str:
    """PyTorch's ``_build_table`` for CPU columns."""
    if len(events) == 0:
        return ""
    has_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in events)
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by.replace("cuda", "device")
                                                      .replace("xpu", "device")), reverse=True)
    name_w = min(max(len(e.key) for e in events) + 4, max_name_column_width)
    shapes_w = min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
               "# of Calls"]
    widths = [name_w] + [12] * 6
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_w)
    row_format = "".join("{: >" + str(w) + "}  " for w in widths)
    header_sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    def unit(t: float, default: str) -> str:
        if time_unit == "s":
            return f"{t / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{t / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{t:.3f}us"
        return default

    total = sum(e.self_cpu_time_total for e in events)
    out: list[str] = []
    if header is not None:
        out += ["=" * line_length, header]
    if top_level_events_only:
        out += ["=" * line_length, "This report only display top-level ops statistics"]
    out += [header_sep, row_format.format(*headers), header_sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if len(name) >= max_name_column_width - 3:
            name = name[: max_name_column_width - 3] + "..."
        row = [name, _format_time_share(e.self_cpu_time_total, total),
               unit(e.self_cpu_time_total, _format_time(e.self_cpu_time_total)),
               _format_time_share(e.cpu_time_total, total),
               unit(e.cpu_time_total, _format_time(e.cpu_time_total)),
               unit(e.cpu_time, _format_time(e.cpu_time)), e.count]
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_w])
        out.append(row_format.format(*row))
    out.append(header_sep)
    out.append(f"Self CPU time total: {unit(total, _format_time(total))}")
    return "".join(line + "\n" for line in out)


class _Recorder:
    """Collects events on the threads that run ops while a profile is active."""

    def __init__(self, record_shapes: bool) -> None:
        self.record_shapes = record_shapes
        self.events: list[FunctionEvent] = []
        self.stacks: dict[int, list[FunctionEvent]] = {}
        self.t0 = time.perf_counter_ns()
        self.next_id = 0

    def begin(self, name: str, args: Iterable[Any] | None) -> FunctionEvent:
        tid = threading.get_ident()
        shapes = None
        if self.record_shapes:
            shapes = [] if args is None else [_shape_of(a) for a in args]
        self.next_id += 1
        evt = FunctionEvent(self.next_id, name, tid, 0.0, shapes)
        stack = self.stacks.setdefault(tid, [])
        if stack:
            evt.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(evt)
        stack.append(evt)
        self.events.append(evt)
        evt.start_us = (time.perf_counter_ns() - self.t0) / 1000.0
        return evt

    def end(self, evt: FunctionEvent) -> None:
        evt.end_us = (time.perf_counter_ns() - self.t0) / 1000.0
        stack = self.stacks.get(evt.thread)
        if stack and stack[-1] is evt:
            stack.pop()


def _timed(name: str, fn: Callable[..., Any], with_args: bool) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        rec = _ACTIVE[-1] if _ACTIVE else None
        if rec is None:
            return fn(*args, **kwargs)
        evt = rec.begin(name, args if with_args else None)
        try:
            return fn(*args, **kwargs)
        finally:
            rec.end(evt)

    wrapper._tapegrad_profiled = True  # type: ignore[attr-defined]
    return wrapper


def _install() -> None:
    """Wrap the forward and backward of every op record that exists now."""
    for obj in gc.get_objects():
        try:
            is_op = isinstance(obj, Op)
        except ReferenceError:  # a weakref.proxy whose object is gone (isinstance asks it)
            continue
        if is_op and id(obj) not in _PATCHED:
            fwd, vjp = obj.fwd, obj.vjp
            if getattr(fwd, "_tapegrad_profiled", False):
                continue
            _PATCHED[id(obj)] = (obj, fwd, vjp)
            obj.fwd = _timed(f"tapegrad::{obj.name}", fwd, True)
            if vjp is not None:
                obj.vjp = _timed(f"autograd::engine::evaluate_function: {obj.grad_name}", vjp,
                                 False)


def _uninstall() -> None:
    for obj, fwd, vjp in _PATCHED.values():
        obj.fwd = fwd
        obj.vjp = vjp
    _PATCHED.clear()


class profile:
    """Record the ops run inside the ``with`` block.

    Parameters
    ----------
    enabled : bool
        ``False`` records nothing.
    record_shapes : bool
        Keep each op's input shapes (``key_averages(group_by_input_shape=True)``).
    use_cuda, use_device, profile_memory, with_stack, with_flops, with_modules, use_kineto
        Accepted; there is no device and memory, stacks and FLOPs are not measured.

    Examples
    --------
    >>> import tapegrad.torch as torch
    >>> with torch.autograd.profiler.profile() as prof:
    ...     _ = torch.ones(3) * 2
    >>> print(prof.key_averages().table().splitlines()[1].split())
    ['Name', 'Self', 'CPU', '%', 'Self', 'CPU', 'CPU', 'total', '%', 'CPU', 'total', 'CPU', 'time', 'avg', '#', 'of', 'Calls']
    """

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False,
                 use_device: str | None = None, record_shapes: bool = False,
                 with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False,
                 use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Any = None) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.use_device = use_device
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self._recorder: _Recorder | None = None
        self.function_events: EventList | None = None
        self.entered = False

    def __enter__(self) -> profile:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._start()
        return self

    def _start(self) -> None:
        self._recorder = _Recorder(self.record_shapes)
        with _LOCK:
            if not _ACTIVE:
                _install()
            _ACTIVE.append(self._recorder)

    def _stop(self) -> None:
        with _LOCK:
            if self._recorder in _ACTIVE:
                _ACTIVE.remove(self._recorder)
            if not _ACTIVE:
                _uninstall()
        rec = self._recorder
        assert rec is not None
        evs = sorted(rec.events, key=lambda e: (e.start_us, -e.end_us))
        self.function_events = EventList(evs)

    def __exit__(self, *exc: Any) -> None:
        if not self.enabled:
            return
        self._stop()

    def _check_finish(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0
                     ) -> EventList:
        """Events grouped by name (and input shapes): see :meth:`EventList.key_averages`."""
        return self._check_finish().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False) -> str:
        return self._check_finish().table(sort_by=sort_by, row_limit=row_limit,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width,
                                          header=header,
                                          top_level_events_only=top_level_events_only)

    def total_average(self) -> FunctionEventAvg:
        return self._check_finish().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self._check_finish().self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        self._check_finish().export_chrome_trace(path)

    def __str__(self) -> str:
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return self.function_events.table()

    def __repr__(self) -> str:
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self.function_events)


class record_function:
    """Time a block (or a decorated function) as one named event with the ops inside it
    as its children.

    >>> import tapegrad.torch as torch
    >>> with torch.autograd.profiler.profile() as prof:
    ...     with torch.autograd.profiler.record_function("my_block"):
    ...         _ = torch.ones(2) + 1
    >>> [e.key for e in prof.key_averages()][0]
    'my_block'
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._evt: FunctionEvent | None = None
        self._rec: _Recorder | None = None

    def __enter__(self) -> record_function:
        self._rec = _ACTIVE[-1] if _ACTIVE else None
        if self._rec is not None:
            self._evt = self._rec.begin(self.name, None)
            self._evt.is_user_annotation = True
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._rec is not None and self._evt is not None:
            self._rec.end(self._evt)
        self._evt = None
        self._rec = None

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*a: Any, **k: Any) -> Any:
            with record_function(self.name, self.args):
                return fn(*a, **k)

        return wrapper
