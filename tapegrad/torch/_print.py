"""PyTorch's tensor printing (a port of ``torch/_tensor_str.py`` to NumPy arrays).

The output is character for character what PyTorch prints for dense CPU
tensors: ``tensor([1., 2.], requires_grad=True)``,
``tensor(5., grad_fn=<AddBackward0>)``, summarised tensors with ``...``,
scientific notation chosen the same way, and ``dtype=`` suffixes for
non-default dtypes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import _dtype


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set options for printing (PyTorch's ``torch.set_printoptions``).

    >>> import tapegrad.torch as torch
    >>> torch.set_printoptions(precision=2)
    >>> torch.tensor([1.12345])
    tensor([1.12])
    >>> torch.set_printoptions(profile="default")
    """
    if profile is not None:
        if profile == "default":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, 1000
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
        elif profile == "short":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 2, 1000
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 80
        elif profile == "full":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, math.inf
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as a dict for :func:`set_printoptions`."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Context manager that temporarily changes the print options."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    def __init__(self, arr: np.ndarray) -> None:
        self.floating_dtype = arr.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = arr.reshape(-1)
        if not self.floating_dtype:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return
        with np.errstate(all="ignore"):
            vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            return
        absd = np.abs(vals).astype(np.float64)
        vmin = float(absd.min())
        vmax = float(absd.max())
        if np.any(vals != np.ceil(vals)):
            self.int_mode = False
        p = PRINT_OPTS.precision
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        pyvals = vals.tolist()
        if self.int_mode:
            if self.sci_mode:
                for v in pyvals:
                    self.max_width = max(self.max_width, len(f"{{:.{p}e}}".format(v)))
            else:
                for v in pyvals:
                    self.max_width = max(self.max_width, len(f"{v:.0f}") + 1)
        elif self.sci_mode:
            for v in pyvals:
                self.max_width = max(self.max_width, len(f"{{:.{p}e}}".format(v)))
        else:
            for v in pyvals:
                self.max_width = max(self.max_width, len(f"{{:.{p}f}}".format(v)))

    def width(self) -> int:
        return self.max_width

    def format(self, value: Any) -> str:
        p = PRINT_OPTS.precision
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{{:{self.max_width}.{p}e}}".format(value)
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{{:.{p}f}}".format(value)
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _val(val: Any, f1: _Formatter, f2: _Formatter | None) -> str:
    if f2 is not None:
        real_str = f1.format(val.real)
        imag_str = (f2.format(val.imag) + "j").lstrip()
        if imag_str[0] in "+-":
            return real_str + imag_str
        return real_str + "+" + imag_str
    return f1.format(val)


def _vector_str(a: np.ndarray, indent: int, summarize: bool, f1: _Formatter,
                f2: _Formatter | None) -> str:
    element_length = f1.width() + 2
    if f2 is not None:
        element_length += f2.width() + 1
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = ([_val(v, f1, f2) for v in a[:e].tolist()] + [" ..."]
                + [_val(v, f1, f2) for v in a[-e:].tolist()])
    else:
        data = [_val(v, f1, f2) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _with_formatter(a: np.ndarray, indent: int, summarize: bool, f1: _Formatter,
                    f2: _Formatter | None) -> str:
    dim = a.ndim
    if dim == 0:
        return _val(a.item(), f1, f2)
    if dim == 1:
        return _vector_str(a, indent, summarize, f1, f2)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        slices = ([_with_formatter(a[i], indent + 1, summarize, f1, f2) for i in range(e)]
                  + ["..."]
                  + [_with_formatter(a[i], indent + 1, summarize, f1, f2)
                     for i in range(len(a) - e, len(a))])
    else:
        slices = [_with_formatter(a[i], indent + 1, summarize, f1, f2) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(a: np.ndarray) -> np.ndarray:
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:e], a[-e:])) if a.shape[0] > 2 * e else a
    if not e:
        return np.empty((0,) * a.ndim, dtype=a.dtype)
    if a.shape[0] > 2 * e:
        parts = [a[i] for i in range(e)] + [a[i] for i in range(len(a) - e, len(a))]
        return np.stack([_summarized(x) for x in parts])
    return np.stack([_summarized(x) for x in a])


def tensor_str(a: np.ndarray, indent: int) -> str:
    """The bracketed body of a tensor's repr."""
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    if a.dtype.kind == "c":
        src = _summarized(a) if summarize else a
        return _with_formatter(a, indent, summarize, _Formatter(src.real), _Formatter(src.imag))
    if a.dtype == np.float16:
        src = _summarized(a) if summarize else a
        return _with_formatter(a, indent, summarize, _Formatter(src.astype(np.float32)), None)
    return _with_formatter(a, indent, summarize, _Formatter(_summarized(a) if summarize else a),
                           None)


def _add_suffixes(s: str, suffixes: list[str], indent: int) -> str:
    parts = [s]
    last_line_len = len(s) - s.rfind("\n") + 1
    for suffix in suffixes:
        n = len(suffix)
        if last_line_len + n + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + n
        else:
            parts.append(", " + suffix)
            last_line_len += n + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t: Any) -> str:
    """``repr`` of a PyTorch-style tensor, as PyTorch writes it."""
    a = t._data
    prefix = "tensor("
    indent = len(prefix)
    suffixes: list[str] = []
    dflt = _dtype.default_np()
    has_default = a.dtype == dflt or a.dtype in (
        np.dtype(np.complex128 if dflt == np.float64 else np.complex64),
        np.dtype(np.int64), np.dtype(np.bool_))
    if a.size == 0:
        if a.ndim != 1:
            suffixes.append("size=" + str(tuple(a.shape)))
        if a.dtype != dflt:
            suffixes.append("dtype=" + str(_dtype.from_np(a.dtype)))
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(a.shape)))
        if not has_default:
            suffixes.append("dtype=" + str(_dtype.from_np(a.dtype)))
        body = tensor_str(a, indent)
    node = t._node
    if node is not None:
        suffixes.append(f"grad_fn=<{node.name()}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
