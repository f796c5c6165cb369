"""Tensors in PyTorch style: creation, dtypes, printing, promotion and style hooks.

Every tensor made here is a core :class:`tapegrad.Tensor` with ``_style =
TORCH``: it prints like PyTorch, its ``shape`` is a ``torch.Size``, its
``dtype`` a torch dtype, and binary operators promote dtypes like PyTorch
(float32 tensor * int64 tensor is float32; int tensor * Python float is
float32).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core import errors, mode
from .._core.errors import hinted, warning_with_hint, with_hint
from .._core.tensor import TORCH, Tensor, make, register_style, restyle
from .._core.tensor import Tensor as CoreTensor
from ..autodiff import tracing as _tracing
from ..ops import cast
from . import _dtype, _print
from ._dtype import Size, default_np, from_np, result_type, to_np
from ._messages import MESSAGES as _MESSAGES
from ._random import gen
from ._ranges import arange, linspace  # noqa: F401  (re-exported)

_STATE = mode.STATE


def _wrap(arr: np.ndarray, rg: bool = False) -> Tensor:
    return make(arr, None, rg, TORCH)


# ----------------------------------------------------------------------------- devices
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                 "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                 "privateuseone")


class device:
    """``torch.device``: a device type and optional index, as PyTorch parses them.

    Any PyTorch device can be named (``torch.device("cuda:1")``); tapegrad computes
    on the CPU only, so putting a tensor on another device raises PyTorch's error.
    As in PyTorch, a device never equals a string.

    >>> import tapegrad.torch as torch
    >>> torch.device("cpu"), torch.device("cuda", 1), torch.device("cpu") == "cpu"
    (device(type='cpu'), device(type='cuda', index=1), False)
    """

    type: str
    index: int | None

    def __init__(self, type: Any = "cpu", index: int | None = None) -> None:
        if isinstance(type, device):
            type, index = type.type, type.index
        if isinstance(type, int) and not isinstance(type, bool):
            # a bare index names the current accelerator, which tapegrad never has
            raise hinted(RuntimeError(with_hint("Cannot access accelerator device when none is "
                                         "available.", "use torch.device('cpu')")))
        s = str(type)
        if ":" in s:
            s, idx = s.split(":", 1)
            if not idx.isdigit() or index is not None:
                raise hinted(RuntimeError(with_hint(f"Invalid device string: '{type}'",
                                             "write 'cpu', 'cuda' or 'cuda:0'")))
            index = int(idx)
        if s not in _DEVICE_TYPES:
            raise hinted(RuntimeError(with_hint(
                f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device "
                f"string: {s}", "tapegrad computes on 'cpu'")))
        if index is not None and index < 0:
            raise hinted(RuntimeError(with_hint("Device index must not be negative",
                                         "use index 0 or leave it out")))
        self.type = s
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self) -> Any:
        return (device, (self.type, self.index))

    def __enter__(self) -> device:
        # ``with torch.device(d):`` makes d the default device; the CPU already is
        check_device(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


CPU = device("cpu")


def check_device(dev: Any) -> None:
    """Accept the CPU (and ``meta``); a CUDA device raises PyTorch's CPU-build error."""
    if dev is None:
        return
    d = dev if isinstance(dev, device) else device(dev) if isinstance(dev, str) else None
    if d is not None and d.type == "cuda":
        raise hinted(AssertionError(with_hint(
            "Torch not compiled with CUDA enabled",
            "tapegrad runs on the CPU: use device='cpu', or `torch.device('cuda' if "
            "torch.cuda.is_available() else 'cpu')`")))
    if d is not None and d.type not in ("cpu", "meta"):
        raise hinted(RuntimeError(
            with_hint(
                f"Attempting to use device '{d}', but tapegrad runs on the CPU only",
                "use device='cpu', or `torch.device('cuda' if torch.cuda.is_available() "
                "else 'cpu')`",
            )
        ))


# ----------------------------------------------------------------------------- data → array
def _leaf_kind(data: Any) -> Any:
    """The first scalar inside nested sequences (decides PyTorch's inferred dtype)."""
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return data


def _ragged_error(data: Any) -> ValueError:
    def walk(d: Any, dim: int) -> ValueError | None:
        if not isinstance(d, (list, tuple)) or not d:
            return None
        lens = [len(x) if isinstance(x, (list, tuple)) else None for x in d]
        first = lens[0]
        for n in lens:
            if n != first:
                return hinted(ValueError(
                    with_hint(
                        f"expected sequence of length {first} at dim {dim + 1} (got {n})",
                        "nested lists must be rectangular",
                    )
                ))
        for x in d:
            e = walk(x, dim + 1)
            if e is not None:
                return e
        return None

    return walk(data, 0) or hinted(ValueError(with_hint("could not build a tensor from this data",
                                                 "nested lists must be rectangular")))


_INT64_MAX = (1 << 63) - 1


def _overflow(value: int) -> ValueError:
    return hinted(ValueError(with_hint("Overflow when unpacking long long",
                                f"{value} does not fit in int64 (PyTorch's integer type); pass "
                                "it as a float, or reduce it")))


def _bad_leaf(data: Any) -> Exception | None:
    """The real reason NumPy made an object array: an int beyond int64, or a non-number."""
    stack = [data]
    while stack:
        d = stack.pop()
        if isinstance(d, (list, tuple)):
            stack.extend(reversed(d))
        elif isinstance(d, bool) or isinstance(d, (float, complex, np.generic, np.ndarray,
                                                        Tensor)):
            continue
        elif isinstance(d, int):
            if not -_INT64_MAX - 1 <= d <= _INT64_MAX:
                return _overflow(d)
        else:
            return hinted(RuntimeError(with_hint(f"Could not infer dtype of {type(d).__name__}",
                                          "tensors hold numbers: pass numbers or nested lists "
                                          "of them")))
    return None


def _alloc(fn: Any, shape: tuple[int, ...], dtype: np.dtype, *args: Any) -> np.ndarray:
    """``fn(shape, *args, dtype=dtype)`` with PyTorch's errors for sizes that cannot exist."""
    n = 1
    for s in shape:
        n *= s
    nbytes = n * np.dtype(dtype).itemsize
    if nbytes > _INT64_MAX:
        raise hinted(RuntimeError(with_hint(f"Storage size calculation overflowed with sizes="
                                     f"{list(shape)}", "the tensor would need more than 2**63 "
                                     "bytes")))
    try:
        return fn(shape, *args, dtype=dtype)
    except (MemoryError, ValueError):
        raise hinted(RuntimeError(with_hint(
            f"[enforce fail at alloc_cpu.cpp] DefaultCPUAllocator: not enough memory: you tried "
            f"to allocate {nbytes} bytes.", f"sizes {list(shape)} need {nbytes / 2**30:.1f} GiB"
        ))) from None


def _infer_array(data: Any, dt: np.dtype | None) -> np.ndarray:
    """A new array from ``data`` with PyTorch's dtype inference."""
    if isinstance(data, Tensor):
        arr = data._data
        return arr.astype(dt) if dt is not None else arr.copy()
    if isinstance(data, (np.ndarray, np.generic)):
        arr = np.array(data, dtype=dt)
        if arr.dtype.kind not in "biufc":
            raise hinted(TypeError(with_hint(f"can't convert np.ndarray of type {arr.dtype}. The only "
                                      "supported types are: float64, float32, float16, "
                                      "complex64, complex128, int64, int32, int16, int8, "
                                      "uint64, uint32, uint16, uint8, and bool.",
                                      "convert the array to a numeric dtype first")))
        return arr
    if isinstance(data, (list, tuple)):
        from ._convert import from_sequence

        seq_arr, final = from_sequence(data, dt)
        if final:
            return seq_arr
        return _default_dtypes(seq_arr, data)
    if not isinstance(data, (bool, int, float, complex)):
        from ._convert import compute_sizes, infer_scalar_type

        if not isinstance(data, (str, bytes)):
            compute_sizes(data)
        infer_scalar_type(data)      # str, None, dict, set, ...: PyTorch's errors
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arr = np.array(data)
    except ValueError:
        raise _ragged_error(data) from None
    if arr.dtype == object:
        bad = _bad_leaf(data)
        if bad is not None:
            raise bad
        raise _ragged_error(data) if isinstance(data, (list, tuple)) else hinted(TypeError(
            with_hint(f"new(): invalid data type '{type(data).__name__}'",
                      "pass numbers, nested lists of numbers or a numpy array")))
    if arr.dtype.kind == "u" and arr.size and isinstance(_leaf_kind(data), int) and \
            int(arr.max()) > _INT64_MAX:
        raise _overflow(int(arr.max()))
    if arr.dtype.kind not in "biufc":
        raise hinted(TypeError(with_hint(f"new(): invalid data type '{arr.dtype}'",
                                  "pass numbers or nested lists of numbers")))
    if dt is not None:
        return arr.astype(dt)
    return _default_dtypes(arr, data)


def _default_dtypes(arr: np.ndarray, data: Any) -> np.ndarray:
    """NumPy's dtype for Python numbers mapped to PyTorch's (default float, int64)."""
    leaf = _leaf_kind(data)
    if arr.dtype.kind == "f" and not isinstance(leaf, (np.generic, np.ndarray, Tensor)):
        arr = arr.astype(default_np())
    elif arr.dtype.kind == "c" and not isinstance(leaf, (np.generic, np.ndarray, Tensor)):
        arr = arr.astype(np.complex128 if default_np() == np.float64 else np.complex64)
    elif arr.dtype.kind in "iu" and isinstance(leaf, (int, bool)):
        arr = arr.astype(np.int64)
    return arr


def _finish(arr: np.ndarray, requires_grad: bool) -> Tensor:
    t = _wrap(arr)
    if requires_grad:
        if arr.dtype.kind not in "fc":
            raise hinted(RuntimeError(with_hint(errors.INT_REQUIRES_GRAD,
                                         f"the data is {from_np(arr.dtype)}; pass floats or "
                                         "dtype=torch.float32")))
        t.requires_grad = True
    if _STATE.inference:
        _STATE.inference(t)
    return t


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data``.

    Python floats give ``torch.float32`` (the default dtype), ints
    ``torch.int64``, bools ``torch.bool``; NumPy arrays keep their dtype.

    Examples
    --------
    >>> import tapegrad.torch as torch
    >>> torch.tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    >>> torch.tensor([1, 2]).dtype
    torch.int64
    """
    check_device(device)
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
    arr = _infer_array(data, None if dtype is None else to_np(dtype))
    return _finish(arr, requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like :func:`tensor`, but shares memory with a NumPy array or tensor when it can.

    >>> import numpy as np, tapegrad.torch as torch
    >>> a = np.array([1.0, 2.0])
    >>> t = torch.as_tensor(a); a[0] = 5.0; t
    tensor([5., 2.], dtype=torch.float64)
    """
    check_device(device)
    dt = None if dtype is None else to_np(dtype)
    if isinstance(data, Tensor):
        if dt is None or data._data.dtype == dt:
            return data
        return cast(data, dtype=dt)
    if isinstance(data, np.ndarray) and (dt is None or data.dtype == dt) \
            and data.dtype.kind in "biufc":
        return _wrap(data)
    return _finish(_infer_array(data, dt), False)


def from_numpy(ndarray: Any) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (its dtype kept).

    >>> import numpy as np, tapegrad.torch as torch
    >>> torch.from_numpy(np.array([1, 2], dtype=np.int32))
    tensor([1, 2], dtype=torch.int32)
    """
    if not isinstance(ndarray, np.ndarray):
        raise hinted(TypeError(with_hint(f"expected np.ndarray (got {type(ndarray).__name__})",
                                  "use torch.tensor() for lists and numbers")))
    if ndarray.dtype.kind not in "biufc":
        raise hinted(TypeError(with_hint(f"can't convert np.ndarray of type numpy.{ndarray.dtype}. The "
                                  "only supported types are: float64, float32, float16, "
                                  "complex64, complex128, int64, int32, int16, int8, uint64, "
                                  "uint32, uint16, uint8, and bool.",
                                  "convert the array to a numeric dtype first")))
    return _wrap(ndarray)


def size_arg(size: Sequence[Any], negative: str | None = None) -> tuple[int, ...]:
    """Sizes given as ``f(2, 3)`` or ``f((2, 3))``, checked like PyTorch (``negative``: the
    op's own text for a negative size, where it has one, as ``torch.zeros``)."""
    if len(size) == 1 and isinstance(size[0], (list, tuple, Size)):
        size = tuple(size[0])
    out: list[int] = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise hinted(TypeError(
                with_hint(
                    f"empty(): argument 'size' must be tuple of ints, but found element of type "
                    f"{type(s).__name__} at pos {len(out)}",
                    "sizes are integers, e.g. torch.zeros(2, 3) or torch.zeros((2, 3))",
                )
            ))
        out.append(int(s))
    for s in out:
        if s < 0:
            raise hinted(RuntimeError(
                with_hint(negative or f"Trying to create tensor with negative dimension {s}: {out}",
                          "every size must be >= 0")
            ))
    return tuple(out)


def _dt(dtype: Any, default: Any = None) -> np.dtype:
    if dtype is None:
        return default_np() if default is None else np.dtype(default)
    return to_np(dtype)


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          out: Any = None, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """A tensor of zeros of the given size.

    >>> import tapegrad.torch as torch
    >>> torch.zeros(2, 3).shape
    torch.Size([2, 3])
    """
    check_device(device)
    shape = size_arg(size, "zeros: Dimension size must be non-negative.")
    return _finish(_alloc(np.zeros, shape, _dt(dtype)), requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         out: Any = None, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """A tensor of ones of the given size.

    >>> import tapegrad.torch as torch
    >>> torch.ones(2)
    tensor([1., 1.])
    """
    check_device(device)
    return _finish(_alloc(np.ones, size_arg(size), _dt(dtype)), requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          out: Any = None, layout: Any = None, pin_memory: bool = False,
          memory_format: Any = None) -> Tensor:
    """An uninitialised tensor (zeros in tapegrad)."""
    check_device(device)
    return _finish(_alloc(np.zeros, size_arg(size), _dt(dtype)), requires_grad)


def _scalar_dtype(v: Any) -> np.dtype:
    if isinstance(v, Tensor):
        return v._data.dtype
    if isinstance(v, bool):
        return np.dtype(np.bool_)
    if isinstance(v, (int, np.integer)):
        return np.dtype(np.int64)
    if isinstance(v, complex):
        return np.dtype(np.complex128 if default_np() == np.float64 else np.complex64)
    if isinstance(v, np.floating):
        return np.dtype(v.dtype)
    return default_np()


def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, out: Any = None, layout: Any = None) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value`` (dtype inferred from it).

    >>> import tapegrad.torch as torch
    >>> torch.full((2,), 7)
    tensor([7, 7])
    """
    check_device(device)
    shape = size_arg((size,) if not isinstance(size, (int, np.integer)) else (size,))
    dt = _dt(dtype, _scalar_dtype(fill_value))
    fv = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    if isinstance(fv, int) and not isinstance(fv, bool) and dt.kind in "iu" and \
            not np.iinfo(dt).min <= fv <= np.iinfo(dt).max:
        raise hinted(RuntimeError(with_hint(f"value cannot be converted to type {dt.name}_t without "
                                     "overflow", f"{fv} does not fit in {dt.name}")))
    return _finish(_alloc(np.full, shape, dt, fv), requires_grad)


def _like(input: Any, dtype: Any) -> tuple[tuple[int, ...], np.dtype]:
    if not isinstance(input, Tensor):
        raise hinted(TypeError(with_hint(f"zeros_like(): argument 'input' (position 1) must be Tensor, "
                                  f"not {type(input).__name__}", "pass a tensor")))
    return input._data.shape, (input._data.dtype if dtype is None else to_np(dtype))


def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, layout: Any = None,
               memory_format: Any = None) -> Tensor:
    """Zeros with the shape and dtype of ``input``."""
    s, d = _like(input, dtype)
    return _finish(np.zeros(s, dtype=d), requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, layout: Any = None,
              memory_format: Any = None) -> Tensor:
    """Ones with the shape and dtype of ``input``.

    >>> import tapegrad.torch as torch
    >>> torch.ones_like(torch.tensor([1, 2]))
    tensor([1, 1])
    """
    s, d = _like(input, dtype)
    return _finish(np.ones(s, dtype=d), requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, layout: Any = None,
               memory_format: Any = None) -> Tensor:
    s, d = _like(input, dtype)
    return _finish(np.zeros(s, dtype=d), requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, layout: Any = None,
              memory_format: Any = None) -> Tensor:
    """``fill_value`` with the shape and dtype of ``input``."""
    s, d = _like(input, dtype)
    return _finish(np.full(s, fill_value, dtype=d), requires_grad)


def rand_like(input: Tensor, *, dtype: Any = None, generator: Any = None,
              requires_grad: bool = False, device: Any = None) -> Tensor:
    s, d = _like(input, dtype)
    return rand(*s, dtype=d, generator=generator, requires_grad=requires_grad)


def randn_like(input: Tensor, *, dtype: Any = None, generator: Any = None,
               requires_grad: bool = False, device: Any = None) -> Tensor:
    s, d = _like(input, dtype)
    return randn(*s, dtype=d, generator=generator, requires_grad=requires_grad)


def randint_like(input: Tensor, low: int = 0, high: int | None = None, *, dtype: Any = None,
                 generator: Any = None, requires_grad: bool = False,
                 device: Any = None) -> Tensor:
    s, d = _like(input, dtype)
    if high is None:
        low, high = 0, low
    return randint(low, high, s, dtype=d, generator=generator, requires_grad=requires_grad)


def _num(v: Any) -> Any:
    return v.item() if isinstance(v, Tensor) else v


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False, out: Any = None, layout: Any = None) -> Tensor:
    """The identity matrix.

    >>> import tapegrad.torch as torch
    >>> torch.eye(2)
    tensor([[1., 0.],
            [0., 1.]])
    """
    check_device(device)
    return _finish(np.eye(n, n if m is None else m, dtype=_dt(dtype)), requires_grad)


def _float_dt(dtype: Any, what: str) -> np.dtype:
    dt = _dt(dtype)
    if dt.kind != "f":
        raise hinted(RuntimeError(with_hint(f"\"{what}\" not implemented for '{from_np(dt)}'",
                                     "random floats need a floating dtype")))
    return dt


def _different_draws() -> Any:
    """The vmap level that wants one draw per example, if any (see vmap's ``randomness``)."""
    if not _STATE.levels:
        return None
    from ..autodiff.batching import vmap_randomness

    return vmap_randomness()


@_tracing.random_source("torch.rand")
def rand(*size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, out: Any = None, layout: Any = None,
         pin_memory: bool = False) -> Tensor:
    """Uniform samples on [0, 1), drawn exactly as PyTorch's CPU generator draws them.

    >>> import tapegrad.torch as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.rand(3)
    tensor([0.4963, 0.7682, 0.0885])
    """
    check_device(device)
    shape = size_arg(size)
    dt = _float_dt(dtype, "check_uniform_bounds")
    n = int(np.prod(shape)) if shape else 1
    lv = _different_draws()
    if lv is not None:  # vmap(randomness="different"): one draw per example
        arr = gen(generator).uniform(n * lv.size, dt).reshape((lv.size,) + tuple(shape))
        return lv.make(_finish(arr, requires_grad))
    return _finish(gen(generator).uniform(n, dt).reshape(shape), requires_grad)


@_tracing.random_source("torch.randn")
def randn(*size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, out: Any = None, layout: Any = None,
          pin_memory: bool = False) -> Tensor:
    """Standard normal samples, drawn as PyTorch's CPU generator draws them.

    >>> import tapegrad.torch as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.randn(3, dtype=torch.float64)
    tensor([ 1.5410, -0.2934, -2.1788], dtype=torch.float64)
    """
    check_device(device)
    shape = size_arg(size)
    dt = _float_dt(dtype, "normal_kernel_cpu")
    n = int(np.prod(shape)) if shape else 1
    lv = _different_draws()
    if lv is not None:  # vmap(randomness="different"): one draw per example
        arr = gen(generator).normal(n * lv.size, dt).reshape((lv.size,) + tuple(shape))
        return lv.make(_finish(arr, requires_grad))
    return _finish(gen(generator).normal(n, dt).reshape(shape), requires_grad)


@_tracing.random_source("torch.randint")
def randint(*args: Any, generator: Any = None, dtype: Any = None, device: Any = None,
            requires_grad: bool = False, out: Any = None, layout: Any = None,
            **kwargs: Any) -> Tensor:
    """Integers from [low, high): ``randint(high, size)`` or ``randint(low, high, size)``.

    >>> import tapegrad.torch as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.randint(0, 10, (4,))
    tensor([4, 9, 3, 0])
    """
    check_device(device)
    low = kwargs.pop("low", None)
    high = kwargs.pop("high", None)
    size = kwargs.pop("size", None)
    rest = list(args)
    if size is None and rest and isinstance(rest[-1], (tuple, list, Size)):
        size = rest.pop()
    if len(rest) == 2:
        low, high = rest
    elif len(rest) == 1:
        if high is None:
            low, high = 0 if low is None else low, rest[0]
        else:
            low = rest[0]
    if low is None:
        low = 0
    if high is None or size is None:
        raise hinted(TypeError(with_hint("randint() missing required arguments: high and size",
                                  "call randint(low, high, size) or randint(high, size)")))
    low, high = int(_num(low)), int(_num(high))
    if high <= low:
        raise hinted(RuntimeError(with_hint(f"random_ expects 'from' to be less than 'to', but got "
                                     f"from={low} >= to={high}", "pass low < high")))
    shape = size_arg((size,))
    n = int(np.prod(shape)) if shape else 1
    dt = _dt(dtype, np.int64)
    lv = _different_draws()
    if lv is not None:  # vmap(randomness="different"): one draw per example
        vals = gen(generator).integers(n * lv.size, low, high).reshape(
            (lv.size,) + tuple(shape)).astype(dt)
        return lv.make(_finish(vals, requires_grad))
    vals = gen(generator).integers(n, low, high).reshape(shape).astype(dt)
    return _finish(vals, requires_grad)


@_tracing.random_source("torch.randperm")
def randperm(n: int, *, generator: Any = None, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, out: Any = None, layout: Any = None) -> Tensor:
    """A random permutation of ``0..n-1`` (PyTorch's CPU algorithm)."""
    check_device(device)
    lv = _different_draws()
    if lv is not None:  # vmap(randomness="different"): one permutation per example
        g = gen(generator)
        perms = np.stack([g.permutation(int(n)) for _ in range(lv.size)])
        return lv.make(_finish(perms.astype(_dt(dtype, np.int64)), requires_grad))
    return _finish(gen(generator).permutation(int(n)).astype(_dt(dtype, np.int64)),
                   requires_grad)


@_tracing.random_source("torch.normal")
def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *, generator: Any = None,
           dtype: Any = None, out: Any = None, requires_grad: bool = False,
           device: Any = None) -> Tensor:
    """Normal samples with the given mean and standard deviation."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean._data if isinstance(mean, Tensor) else np.asarray(mean)
        s = std._data if isinstance(std, Tensor) else np.asarray(std)
        shape = np.broadcast_shapes(m.shape, s.shape)
        dt = (m if isinstance(mean, Tensor) else s).dtype
        n = int(np.prod(shape)) if shape else 1
        if _STATE.levels and any(isinstance(t, Tensor) and t._lvl is not None
                                 for t in (mean, std)):
            return _normal_vmap(mean, std, shape, dt, n, generator)
        z = gen(generator).normal(n, dt).reshape(shape)
        return _finish((z * s + m).astype(dt), requires_grad)
    shape = size_arg((size,)) if size is not None else ()
    dt = _float_dt(dtype, "normal_kernel_cpu")
    n = int(np.prod(shape)) if shape else 1
    return _finish(gen(generator).normal(n, dt, float(mean), float(std)).reshape(shape),
                   requires_grad)


def _normal_vmap(mean: Any, std: Any, shape: tuple[int, ...], dt: np.dtype, n: int,
                 generator: Any) -> Tensor:
    """``torch.normal(mean, std)`` with a transform's tracer among them: the standard draws
    (one per example under ``vmap(randomness='different')``), then ``z * std + mean`` as
    ops on the tracers; PyTorch's error for a batched input under ``'same'``."""
    from ..autodiff.batching import BatchLevel, active_batch_level

    lv = _different_draws()
    batched = any(isinstance(t, Tensor) and isinstance(t._lvl, BatchLevel)
                  for t in (mean, std))
    if lv is None and batched and active_batch_level() is not None:
        raise hinted(RuntimeError(with_hint(
            "Vmap does not currently support same randomness with a batched tensor input. "
            "Please file an issue with functorch",
            "use randomness='different', or a mean and std that are not batched")))
    g = gen(generator)
    if lv is not None:
        z: Any = lv.make(_finish(g.normal(n * lv.size, dt).reshape((lv.size,) + shape), False))
    else:
        z = _finish(g.normal(n, dt).reshape(shape), False)
    from .. import ops as core

    # PyTorch's normal sends no gradient to mean and std (NormalBackward's zeros)
    m = mean.detach() if isinstance(mean, Tensor) else mean
    sd = std.detach() if isinstance(std, Tensor) else std
    return restyle(core.add(core.multiply(z, sd), m), TORCH)


_P_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
            "message be improved?  If so, please report an enhancement request to PyTorch.)")
_TYPE_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
               "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
               "complex128": "ComplexDouble"}


def bernoulli_mask(shape: tuple[int, ...], p: Any, generator: Any = None,
                   order: tuple[int, ...] | None = None) -> np.ndarray:
    """A boolean Bernoulli mask of ``shape`` drawn as PyTorch's CPU ``bernoulli_`` draws it:
    ``p`` a number (``bernoulli_(p)``: every dropout mask) or a tensor of probabilities that
    broadcasts to ``shape`` (``bernoulli_(probs)``, ``torch.bernoulli(probs)``).  Invalid
    probabilities raise PyTorch's errors before anything is drawn.  ``order``: the axes
    from outermost to innermost in memory of the tensor filled (``_random.fill_order``)."""
    if not isinstance(p, Tensor):
        p = float(p)
        if not 0 <= p <= 1:
            raise hinted(RuntimeError(with_hint(f"bernoulli_ expects p to be in [0, 1], but got p={p}",
                                         "pass a probability in [0, 1]")))
        return gen(generator).bernoulli(tuple(shape), p, order)
    probs = p._data
    if probs.dtype.kind != "f":
        raise hinted(NotImplementedError(with_hint(
            f'"bernoulli_tensor_cpu_p_" not implemented for '
            f"'{_TYPE_NAMES.get(probs.dtype.name, probs.dtype.name)}'",
            "pass floating-point probabilities")))
    if probs.shape != tuple(shape):
        try:
            probs = np.broadcast_to(probs, shape)
        except ValueError:
            raise hinted(RuntimeError(with_hint(_expand_message(tuple(shape), probs.shape),
                                         "the probabilities must broadcast to the tensor's shape"))
                         ) from None
    if probs.size and not (np.all(probs >= 0) and np.all(probs <= 1)):
        raise hinted(RuntimeError(with_hint(_P_RANGE, "every probability must be in [0, 1]")))
    return gen(generator).bernoulli_tensor(probs, order)


def _expand_message(target: tuple[int, ...], have: tuple[int, ...]) -> str:
    lead = len(target) - len(have)
    for i in range(len(have) - 1, -1, -1):
        j = i + lead
        if j < 0 or (have[i] != 1 and have[i] != target[j]):
            if j < 0:
                return (f"expand: the number of sizes provided ({len(target)}) must be greater "
                        f"or equal to the number of dimensions in the tensor ({len(have)})")
            return (f"The expanded size of the tensor ({target[j]}) must match the existing "
                    f"size ({have[i]}) at non-singleton dimension {j}.  Target sizes: "
                    f"{list(target)}.  Tensor sizes: {list(have)}")
    return f"cannot expand {list(have)} to {list(target)}"


@_tracing.random_source("torch.bernoulli")
def bernoulli(input: Any, p: Any = None, *, generator: Any = None, out: Any = None) -> Tensor:
    """0/1 samples, drawn as PyTorch's CPU generator draws them: ``bernoulli(probs)`` takes
    each element's probability from ``probs`` (one uniform per element), ``bernoulli(x, p)``
    one probability for every element of ``x``'s shape.  The result has the input's dtype.

    >>> import tapegrad.torch as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.bernoulli(torch.tensor([0.1, 0.9, 0.5, 0.5]))
    tensor([0., 1., 1., 1.])
    """
    if not isinstance(input, Tensor):
        raise hinted(TypeError(with_hint(
            f"bernoulli(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}", "pass a tensor of probabilities")))
    arr = input._data
    if _STATE.levels:
        return _bernoulli_vmap(input, p, generator)
    # the result is a new contiguous tensor (LEGACY_CONTIGUOUS_MEMORY_FORMAT), so row-major
    mask = bernoulli_mask(arr.shape, input if p is None else p, generator)
    if p is None and input._rg and _STATE.grad_enabled:  # a zero BernoulliBackward0
        from ..ops.dropout import bernoulli_sample

        return bernoulli_sample(input, mask)
    return _finish(mask.astype(arr.dtype), False)


def _bernoulli_vmap(input: Tensor, p: Any, generator: Any) -> Tensor:
    """``torch.bernoulli`` on a vmap tracer: one draw over the whole batch (``'different'``),
    PyTorch's error for a batched input under ``'same'``."""
    from ..autodiff.batching import vmap_randomness

    lv = vmap_randomness()
    probs = input if p is None else p
    batched = isinstance(probs, Tensor) and probs._lvl is not None
    if lv is None:
        if batched or input._lvl is not None:
            raise hinted(RuntimeError(with_hint(
                "Vmap does not currently support same randomness with a batched tensor input. "
                "Please file an issue with functorch",
                "use randomness='different', or probabilities that are not batched")))
        mask = bernoulli_mask(input._data.shape, probs, generator)
        return _finish(mask.astype(input._data.dtype), False)
    if batched and probs._lvl is not lv:
        raise hinted(NotImplementedError(with_hint(
            "torch.bernoulli under nested vmap is not supported by tapegrad",
            "draw outside the inner vmap")))
    full = (lv.size,) + tuple(input._data.shape)
    if isinstance(probs, Tensor):
        pv = lv.value(probs) if batched else probs
        mask = bernoulli_mask(full, _wrap(np.broadcast_to(pv._data, full)), generator)
    else:
        mask = bernoulli_mask(full, probs, generator)
    return lv.make(_finish(mask.astype(input._data.dtype), False))


# ----------------------------------------------------------------------------- promotion
_COMPARE = frozenset(("less", "less_equal", "greater", "greater_equal", "equal", "not_equal"))
_SCALARS = (float, int)
_CTYPE = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
          "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
          "bool": "bool", "complex64": "c10::complex<float>",
          "complex128": "c10::complex<double>"}


def ctype_name(d: np.dtype) -> str:
    return _CTYPE.get(np.dtype(d).name, np.dtype(d).name)


def _to(x: Any, dt: np.dtype) -> Any:
    if isinstance(x, Tensor):
        return x if x._data.dtype == dt else cast(x, dtype=dt)
    if isinstance(x, np.ndarray):
        return x.astype(dt, copy=False)
    if isinstance(x, np.generic):
        return dt.type(x)  # NumPy scalars are not "weak" in NumPy 2: cast them explicitly
    return x


_INT_DIV = frozenset({"floor_divide", "remainder", "fmod"})


def _int_div_check(a: Any, b: Any) -> None:
    """PyTorch raises for integer division or modulo by zero (NumPy would give 0)."""
    if isinstance(b, Tensor):
        d = b._data
        if d.dtype.kind not in "iub" or not d.size or d.all():
            return
    elif isinstance(b, (int, np.integer)):  # (bool included)
        if b:
            return
    else:
        return  # other operands are checked by the promotion
    if isinstance(a, Tensor):
        if a._data.dtype.kind not in "iub":
            return
    elif not isinstance(a, (int, np.integer)):
        return
    raise hinted(RuntimeError(with_hint("ZeroDivisionError",
                                 "an integer tensor was divided by zero; use floats "
                                 "(x.float()) to get inf/nan instead")))


def promote(a: Any, b: Any, name: str) -> tuple[Any, Any]:
    """PyTorch's dtype promotion for a binary operator (PROMOTE hook)."""
    if name in _INT_DIV:
        _int_div_check(a, b)
    # fast paths: same dtypes, or a Python number that cannot change a float tensor
    if isinstance(a, Tensor):
        da = a._data.dtype
        if isinstance(b, Tensor):
            if b._data.dtype == da and (da.kind in "fc" or name != "divide"):
                return a, b
        elif b.__class__ in _SCALARS and da.kind in "fc":
            return a, b
        elif b.__class__ is int and da.kind in "iu" and name != "divide":
            if not -_INT64_MAX - 1 <= b <= _INT64_MAX:
                _check_operand(b, name, "other")
            if name == "power" and b < 0:
                _neg_int_power()
            return a, b
    elif isinstance(b, Tensor) and a.__class__ in _SCALARS and b._data.dtype.kind in "fc":
        return a, b
    return promote_slow(a, b, name)


def _neg_int_power() -> None:
    raise hinted(RuntimeError(with_hint("Integers to negative integer powers are not allowed.",
                                 "use a float base, e.g. x.float() ** -1")))


def _check_operand(o: Any, name: str, side: str) -> None:
    """PyTorch's TypeError for an operand that is no number, and its overflow error for an
    int beyond int64 (NumPy would raise KeyError/OverflowError from deep inside)."""
    if isinstance(o, Tensor) or o is None:
        return
    if isinstance(o, bool) or isinstance(o, (float, complex, np.generic)):
        return
    if isinstance(o, int):
        if not -_INT64_MAX - 1 <= o <= _INT64_MAX:
            raise hinted(RuntimeError(with_hint("Overflow when unpacking long",
                                         f"{o} does not fit in int64")))
        return
    arr = np.asarray(o) if isinstance(o, np.ndarray) else None
    if arr is not None and arr.dtype.kind in "biufc":
        return
    if isinstance(o, (list, tuple)) and _bad_leaf(o) is None:
        try:
            if np.asarray(o).dtype.kind in "biufc":
                return
        except ValueError:
            pass
    raise hinted(TypeError(with_hint(
        f"{name}(): argument '{side}' (position {2 if side == 'other' else 1}) must be Tensor, "
        f"not {type(o).__name__}", "operate on tensors and numbers")))


def promote_slow(a: Any, b: Any, name: str) -> tuple[Any, Any]:
    if name == "matmul":
        if isinstance(a, Tensor) and isinstance(b, Tensor) and a._data.dtype != b._data.dtype:
            raise hinted(RuntimeError(
                with_hint(
                    f"expected m1 and m2 to have the same dtype, but got: "
                    f"{ctype_name(a._data.dtype)} != {ctype_name(b._data.dtype)}",
                    f"matmul of {from_np(a._data.dtype)} and {from_np(b._data.dtype)}: convert "
                    "one side, e.g. with .float() or .double()",
                )
            ))
        return a, b
    if name in _COMPARE:
        return a, b
    for side, o in (("other", b), ("input", a)):
        _check_operand(o, name, side)
    rt = result_type(a, b)
    if name == "divide" and rt.kind in "biu":
        rt = default_np()
    if name == "power" and rt.kind in "iu":
        e = b._data if isinstance(b, Tensor) else np.asarray(b)
        if np.any(e < 0):
            _neg_int_power()
    if name in ("logical_and", "logical_or", "logical_xor"):
        return a, b
    return _to(a, rt), _to(b, rt)


# ----------------------------------------------------------------------------- style hooks
def _repr(t: Tensor) -> str:
    return _print.tensor_repr(t)


def _format(t: Tensor, spec: str) -> str:
    if t._data.ndim == 0 and type(t) is TorchTensor:
        return format(t._data.item(), spec)
    if spec:
        raise TypeError(f"unsupported format string passed to {type(t).__name__}.__format__")
    return str(t)


def _shape(s: tuple[int, ...]) -> Size:
    return Size(s)


def _numpy(t: Tensor, force: bool = False) -> np.ndarray:
    # PyTorch refuses only in grad mode (inside no_grad, and so in an autograd.Function's
    # forward, x.numpy() works on a tensor that requires grad)
    if t._rg and not force and _STATE.grad_enabled:
        raise hinted(RuntimeError(
            with_hint(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead.",
                "numpy() shares memory and would drop the graph; detach first",
            )
        ))
    return t._data


_NONLEAF_MSG = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information."
)


def _grad_nonleaf(t: Tensor) -> None:
    warnings.warn(
        warning_with_hint(_NONLEAF_MSG, "call .retain_grad() before backward, or read the .grad of the "
                  "leaf (the tensor you created with requires_grad=True)"),
        UserWarning,
        stacklevel=3,
    )


def _grad_set(t: Tensor, value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, Tensor):
        raise hinted(TypeError(with_hint(f"assigned grad expected to be a Tensor or None but got grad "
                                  f"of type {type(value).__name__}", "assign a tensor or None")))
    if value._data.dtype != t._data.dtype:
        raise hinted(RuntimeError(with_hint("assigned grad has data of a different type",
                                     f"the tensor is {from_np(t._data.dtype)}, the grad "
                                     f"{from_np(value._data.dtype)}")))
    if value._data.shape != t._data.shape:
        raise hinted(RuntimeError(with_hint("assigned grad has data of a different size",
                                     f"the tensor has shape {list(t._data.shape)}, the grad "
                                     f"{list(value._data.shape)}")))
    return value


_CYCLE_MSG = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using autograd.grad "
    "when creating the graph to avoid this. If you have to use this function, make sure to "
    "reset the .grad fields of your parameters to None after use to break the cycle and avoid "
    "the leak."
)


def backward_check(create_graph: bool, inputs: Any, stacklevel: int) -> None:
    if create_graph and inputs is None:
        warnings.warn(_CYCLE_MSG, UserWarning, stacklevel=stacklevel)


def _backward_hook(t: Tensor, gradient: Any, retain_graph: Any, create_graph: bool,
                   inputs: Any) -> None:
    if isinstance(gradient, (list, tuple)):
        # PyTorch reads a sequence as one gradient per output: tensors or None only
        for item in gradient:
            if item is not None and not isinstance(item, Tensor):
                raise hinted(TypeError(with_hint(
                    f"gradients can be either Tensors or None, but got {type(item).__name__}",
                    "pass gradient=torch.tensor([...]) (one tensor shaped like the output)")))
        if len(gradient) != 1:
            raise hinted(RuntimeError(with_hint(
                f"got {len(gradient)} tensors and 1 gradients",
                "Tensor.backward takes one gradient, shaped like the tensor")))
    backward_check(create_graph, inputs, 4)


_FLOAT_WARNED = [False]


def _float_hook(t: Tensor) -> None:
    if t._rg and not _FLOAT_WARNED[0]:
        _FLOAT_WARNED[0] = True  # PyTorch warns once per process
        warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                      "unexpected behavior.\nConsider using tensor.detach() first.",
                      UserWarning, stacklevel=3)


def _requires_grad_hook(t: Tensor) -> None:
    if t._data.dtype.kind not in "fc":
        raise hinted(RuntimeError(with_hint("only Tensors of floating point dtype can require gradients",
                                     f"this tensor is {from_np(t._data.dtype)}; convert it "
                                     "with .float() first")))
    if t._vc.__class__ is not list and not _STATE.inference:
        raise hinted(RuntimeError(with_hint("Setting requires_grad=True on inference tensor outside "
                                     "InferenceMode is not allowed.",
                                     "clone the tensor made under inference_mode() first")))


def _restyle_grad(t: Any) -> Any:
    return restyle(t, TORCH)


def _type_name(d: np.dtype) -> str:
    """PyTorch's legacy type name of a CPU tensor (``torch.FloatTensor``)."""
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
             "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
             "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
    return f"torch.{names.get(d.name, d.name.capitalize())}Tensor"


def _wrap_hook(fn: Any) -> Any:
    """Tensor hooks see PyTorch-style gradients; what they return is checked as PyTorch
    checks it (a tensor or None, of the gradient's dtype and size) before the engine uses
    it, so a bad hook fails the backward pass and no ``.grad`` changes."""
    name = getattr(fn, "__name__", type(fn).__name__)

    def hook(g: Tensor) -> Any:
        r = fn(_restyle_grad(g))
        if r is None:
            return None
        if not isinstance(r, Tensor):
            raise hinted(TypeError(with_hint(f"expected Variable, but hook returned "
                                      f"'{type(r).__name__}'",
                                      f"hook '{name}' must return a tensor or None")))
        if r._data.dtype != g._data.dtype:
            raise hinted(RuntimeError(with_hint(
                f"hook '{name}' has changed the type of value (was {_type_name(g._data.dtype)} "
                f"got {_type_name(r._data.dtype)})", "return grad.to(grad.dtype)")))
        if r._data.shape != g._data.shape:
            raise hinted(RuntimeError(with_hint(
                f"hook '{name}' has changed the size of value",
                f"the gradient has shape {list(g._data.shape)}, the hook returned "
                f"{list(r._data.shape)}")))
        return r

    return hook


class _TensorMeta(type):
    """``torch.Tensor`` is the class of PyTorch-style tensors, while ``isinstance(t,
    torch.Tensor)`` holds for every tapegrad tensor (a tensor of either style works in the
    other style's ops) and calling the class builds a tensor as ``torch.Tensor(...)`` does."""

    def __instancecheck__(cls, obj: Any) -> bool:
        if "_any_tensor" in cls.__dict__:  # torch.Tensor itself, not its subclasses
            return isinstance(obj, CoreTensor)
        return type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub: Any) -> bool:
        if "_any_tensor" in cls.__dict__:
            return isinstance(sub, type) and issubclass(sub, CoreTensor)
        return type.__subclasscheck__(cls, sub)


def legacy_new(dt: Any, args: tuple[Any, ...]) -> Tensor:
    """``torch.Tensor(...)`` / ``torch.FloatTensor(...)``: data, a size, or nothing."""
    if not args:
        return _finish(np.zeros(0, dtype=dt), False)
    if len(args) == 1 and not isinstance(args[0], int):
        return _finish(_infer_array(args[0], np.dtype(dt)), False)
    return _finish(np.zeros(size_arg(args), dtype=dt), False)


class TorchTensor(CoreTensor, metaclass=_TensorMeta):
    """``torch.Tensor``: the class of PyTorch-style tensors (a subclass of the core
    :class:`tapegrad.Tensor`), with PyTorch's printing, promotion and methods.

    ``torch.Tensor([1, 2])`` makes a float32 tensor and ``torch.Tensor(2, 3)`` a
    (zero-filled) float32 tensor of that size, as PyTorch's legacy constructor does;
    ``isinstance(t, torch.Tensor)`` holds for every tapegrad tensor.

    >>> import tapegrad.torch as torch
    >>> torch.Tensor([1, 2]), isinstance(torch.ones(1), torch.Tensor)
    (tensor([1., 2.]), True)
    >>> type(torch.ones(1))
    <class 'tapegrad.torch.Tensor'>
    """

    __slots__ = ()
    _style = TORCH
    _promote = staticmethod(promote)
    _any_tensor = True
    _messages = _MESSAGES  # the engine's errors in PyTorch's words

    def __new__(cls, *args: Any) -> TorchTensor:
        return legacy_new(_dtype.default_np(), args)  # type: ignore[return-value]

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # built by __new__
        pass

    # -- printing
    def __repr__(self) -> str:
        sym = self._traced_text()
        return _print.tensor_repr(self) if sym is None else sym

    def __str__(self) -> str:
        return self.__repr__()

    def __format__(self, spec: str) -> str:
        return _format(self, spec)

    def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
        """``hook(tensor)`` after ``backward()`` has accumulated this leaf's ``.grad``
        (not for ``autograd.grad``, which accumulates nothing)."""
        from .._core.registry import get_acc
        from .._core.tensor import RemovableHandle

        if self._node is not None:
            raise hinted(RuntimeError(with_hint(
                "post accumulate grad hooks cannot be registered on non-leaf tensors",
                "register it on the leaf (a parameter), or use register_hook here")))
        if not self._rg:
            raise hinted(RuntimeError(with_hint(
                "cannot register a hook on a tensor that doesn't require gradient",
                "set requires_grad=True first")))
        hooks = get_acc(self).__dict__.setdefault("post_acc_hooks", [])
        return RemovableHandle(hooks, hook)

    # -- what PyTorch means differently
    @property
    def shape(self) -> Size:
        return Size(self._shape_tuple())

    @property
    def dtype(self) -> Any:
        return from_np(self._data.dtype)

    def numpy(self, force: bool = False) -> np.ndarray:
        if self._lvl is not None:
            self._lvl_read("numpy")
        return _numpy(self, force)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._rg and _STATE.grad_enabled:
            raise hinted(RuntimeError(with_hint(
                "Can't call numpy() on Tensor that requires grad. "
                "Use tensor.detach().numpy() instead.",
                "np.asarray(t) would drop the graph; detach explicitly")))
        return CoreTensor.__array__(self, dtype, copy)

    def __float__(self) -> float:
        _float_hook(self)
        return float(self.item())

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        if self._node is not None:
            raise hinted(RuntimeError(with_hint(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment.  If you were attempting to deepcopy a module, "
                "this may be because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001",
                "deepcopy t.detach() (or t.detach().requires_grad_()) instead")))
        return CoreTensor.__deepcopy__(self, memo)

    def backward(self, gradient: Any = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """Accumulate the gradient of this tensor into the ``.grad`` of the leaves."""
        _backward_hook(self, gradient, retain_graph, create_graph, inputs)
        CoreTensor.backward(self, gradient, retain_graph, create_graph, inputs)

    def _check_requires_grad(self) -> None:
        _requires_grad_hook(self)

    def _read_nonleaf_grad(self) -> None:
        _grad_nonleaf(self)

    def _checked_grad(self, value: Any) -> Any:
        return _grad_set(self, value)

    def _wrap_hook(self, hook: Any) -> Any:
        return _wrap_hook(hook)


TorchTensor.__name__ = TorchTensor.__qualname__ = "Tensor"
TorchTensor.__module__ = "tapegrad.torch"


def _bind_scalar_operators() -> None:
    from ..ops.tensor_methods import bind_scalar_operators

    bind_scalar_operators(TorchTensor, promote)


_bind_scalar_operators()


def install() -> None:
    """Make :class:`TorchTensor` the class of PyTorch-style tensors."""
    register_style(TORCH, TorchTensor)


__all__ = [
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "zeros_like",
    "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like", "arange",
    "linspace", "eye", "rand", "randn", "randint", "randperm", "normal", "bernoulli",
    "device",
]

# keep module names referenced for re-export
_ = (errors, numbers, _dtype)
