"""``torch.profiler``: the newer profiler API over :mod:`tapegrad.torch.autograd.profiler`
(CPU activity only), with ``schedule`` and ``step()``.

>>> import tapegrad.torch as torch
>>> from tapegrad.torch.profiler import ProfilerActivity, profile
>>> with profile(activities=[ProfilerActivity.CPU]) as prof:
...     _ = torch.ones(4).sum()
>>> "tapegrad::sum" in [e.key for e in prof.key_averages()]
True
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from typing import Any

from .autograd.profiler import EventList, record_function
from .autograd.profiler import profile as _profile

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule"]


class ProfilerActivity(enum.Enum):
    """What to profile; tapegrad has CPU activity only."""

    CPU = 0
    CUDA = 2
    XPU = 3
    MTIA = 4


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0,
             skip_first: int = 0) -> Callable[[int], ProfilerAction]:
    """PyTorch's step schedule: skip ``skip_first`` steps, then cycles of ``wait`` idle,
    ``warmup`` and ``active`` recorded steps (``repeat`` cycles; 0: forever)."""

    def fn(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        mod = step % cycle
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return fn


class profile(_profile):
    """``torch.profiler.profile``: records while the schedule says so (always, without
    one); ``on_trace_ready(prof)`` is called at the end of each active span."""

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[[Any], Any] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: Any = None,
                 execution_trace_observer: Any = None, acc_events: bool = False,
                 use_cuda: bool | None = None, custom_trace_id_callback: Any = None) -> None:
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops)
        self.activities = set(activities) if activities is not None else {ProfilerActivity.CPU}
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self._recording = False
        self._events: list[Any] = []

    def _action(self) -> ProfilerAction:
        return ProfilerAction.RECORD if self.schedule is None else self.schedule(self.step_num)

    def _begin_span(self) -> None:
        if not self._recording:
            self._start()
            self._recording = True

    def _end_span(self, save: bool) -> None:
        if self._recording:
            self._stop()
            self._recording = False
            assert self.function_events is not None
            self._events.extend(self.function_events)
            self.function_events = EventList(self._events)
            if save and self.on_trace_ready is not None:
                self.on_trace_ready(self)
            if save:
                self._events = []

    def start(self) -> None:
        if self._action() in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._begin_span()

    def stop(self) -> None:
        self._end_span(save=True)

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def step(self) -> None:
        """Mark the end of a training step (advances the schedule)."""
        prev = self._action()
        self.step_num += 1
        now = self._action()
        if prev == ProfilerAction.RECORD_AND_SAVE:
            self._end_span(save=True)
        elif prev in (ProfilerAction.RECORD,) and now not in (
                ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._end_span(save=True)
        if now in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._begin_span()
