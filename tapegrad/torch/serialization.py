"""``torch.save`` / ``torch.load`` in PyTorch's own file format, safe by default.

Files are PyTorch's zip archives: ``<name>/data.pkl`` is a protocol-2 pickle
in which every tensor is a call of ``torch._utils._rebuild_tensor_v2`` (or
``_rebuild_tensor_v3`` for dtypes without a legacy storage class) on a
*persistent id* ``('storage', torch.FloatStorage, '0', 'cpu', numel)``; the
bytes of storage ``0`` are the record ``<name>/data/0``, aligned to 64 bytes;
``byteorder``, ``version``, ``.format_version``, ``.storage_alignment`` and
``.data/serialization_id`` are written as PyTorch writes them.  A file saved
here loads in real PyTorch and a file saved by PyTorch loads here; tensors
that share memory (views, ``.data``, the same tensor twice) share one storage
and come back sharing it.  The legacy (non-zip) format is read and written
too (``_use_new_zipfile_serialization=False``).

Loading is ``weights_only=True`` by default, as in PyTorch 2.6+: the pickle
is run by a small interpreter of its own (no ``pickle.Unpickler``) that only
builds tensors, parameters, containers, numbers, strings, dtypes,
``torch.Size``, ``torch.device`` and what :func:`add_safe_globals` /
:class:`safe_globals` allow; anything else is refused with PyTorch's
``pickle.UnpicklingError`` and message, before any of it runs.
``weights_only=False`` loads any pickle, which can run arbitrary code: only
do it for files you trust.

>>> import io
>>> import tapegrad.torch as torch
>>> buf = io.BytesIO()
>>> torch.save({"w": torch.arange(3.0)}, buf)
>>> _ = buf.seek(0)
>>> torch.load(buf)
{'w': tensor([0., 1., 2.])}
"""

from __future__ import annotations

import codecs
import io
import os
import pickle
import struct
import warnings
import zipfile
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.tensor import TORCH, Tensor, make
from . import _dtype

# -------------------------------------------------------------------------------- constants
MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
DEFAULT_PROTOCOL = 2
STORAGE_ALIGNMENT = 64

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source."
)
DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default "
    "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)
_WO_HINT = ("tapegrad ran none of the file's code; load it with weights_only=False only if you "
            "trust its source, or allowlist a trusted class with "
            "torch.serialization.add_safe_globals([...])")

# legacy storage class name <-> dtype name (PyTorch's ``_dtype_to_storage_type_map``)
_STORAGE_NAMES = {
    "float64": "DoubleStorage", "float32": "FloatStorage", "float16": "HalfStorage",
    "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage",
    "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
    "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage",
}
# PyTorch dtypes (and legacy storages) that tapegrad has no NumPy dtype for
_MISSING_DTYPES = ("bfloat16", "complex32", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                   "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "qint8", "quint8",
                   "qint32", "quint4x2", "quint2x4", "bits8", "bits16", "bits1x8", "bits2x4",
                   "bits4x2", "uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7",
                   "int1", "int2", "int3", "int4", "int5", "int6", "int7")
_MISSING_STORAGES = ("BFloat16Storage", "QInt8Storage", "QUInt8Storage", "QInt32Storage",
                     "QUInt4x2Storage", "QUInt2x4Storage")


# -------------------------------------------------------------------------------- safe globals
_SAFE_GLOBALS: list[Any] = []


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow these classes/functions in ``torch.load(weights_only=True)``.

    Each entry is the object itself (found in the file as
    ``module.qualname``) or a pair ``(object, "full.path.name")``.

    >>> import tapegrad.torch as torch
    >>> class Cfg:
    ...     pass
    >>> torch.serialization.add_safe_globals([Cfg])
    >>> Cfg in torch.serialization.get_safe_globals()
    True
    >>> torch.serialization.clear_safe_globals()
    """
    if not isinstance(safe_globals, list):
        raise AssertionError("safe_globals must be a list")
    for g in safe_globals:
        if g not in _SAFE_GLOBALS:
            _SAFE_GLOBALS.append(g)


def get_safe_globals() -> list[Any]:
    """The objects that :func:`add_safe_globals` allowlisted."""
    return list(_SAFE_GLOBALS)


def clear_safe_globals() -> None:
    """Forget every object that :func:`add_safe_globals` allowlisted."""
    _SAFE_GLOBALS.clear()


class safe_globals:
    """Context manager: allowlist ``safe_globals`` for ``weights_only`` loads inside it.

    >>> import io, tapegrad.torch as torch
    >>> with torch.serialization.safe_globals([Counter]):
    ...     pass
    """

    def __init__(self, safe_globals: list[Any]) -> None:
        self.safe_globals = list(safe_globals)
        self._added: list[Any] = []

    def __enter__(self) -> None:
        self._added = [g for g in self.safe_globals if g not in _SAFE_GLOBALS]
        add_safe_globals(self._added)

    def __exit__(self, *exc: Any) -> None:
        for g in self._added:
            if g in _SAFE_GLOBALS:
                _SAFE_GLOBALS.remove(g)


def _user_allowed_globals() -> dict[str, Any]:
    rc: dict[str, Any] = {}
    for f in _SAFE_GLOBALS:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full path), "
                                 f"but got tuple of length: {len(f)}")
            if type(f[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full path, "
                                f"but got: {type(f[1])}")
            rc[f[1]] = f[0]
        else:
            rc[f"{f.__module__}.{f.__qualname__}"] = f
    return rc


# -------------------------------------------------------------------------------- storages
class _Storage:
    """The bytes behind one or more tensors (PyTorch's storage): a flat uint8 array."""

    __slots__ = ("buf", "dtype", "location", "key", "pending")

    def __init__(self, buf: np.ndarray, dtype: np.dtype, location: str, key: str) -> None:
        self.buf = buf
        self.dtype = dtype
        self.location = location
        self.key = key
        # legacy files give the bytes after the pickle: tensors made before are listed here
        # and pointed at the bytes once they are read
        self.pending: list[tuple[Tensor, tuple[Any, ...]]] | None = None

    def __repr__(self) -> str:
        return f"<storage {self.key!r}: {self.buf.nbytes} bytes of {self.dtype} on {self.location}>"


class StorageType:
    """A legacy storage class in a file (``torch.FloatStorage``): only its dtype matters."""

    def __init__(self, name: str) -> None:
        self.name = name
        dt = {v: k for k, v in _STORAGE_NAMES.items()}.get(name)
        self.dtype: np.dtype | None = None if dt is None else np.dtype(dt)

    def __repr__(self) -> str:
        return f"StorageType(dtype={self.name})"


class _UntypedStorage:
    """``torch.UntypedStorage`` / ``torch.storage.TypedStorage`` in a file: raw bytes."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<class 'torch.storage.{self.name}'>"


_UNTYPED = _UntypedStorage("UntypedStorage")
_TYPED = _UntypedStorage("TypedStorage")


class _MissingDType:
    """A PyTorch dtype tapegrad cannot hold (``torch.bfloat16``): an error when used."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def fail(self) -> None:
        raise hinted(TypeError(with_hint(
            f"Got unsupported ScalarType {self.name}",
            f"the file holds a torch.{self.name} tensor and tapegrad has no {self.name} "
            "dtype; convert it in PyTorch first (t.float()) and save again")))


# -------------------------------------------------------------------------------- rebuilding
def _np_dtype(d: Any) -> np.dtype:
    if isinstance(d, _MissingDType):
        d.fail()
    if isinstance(d, _dtype.dtype):
        return d.np
    raise pickle.UnpicklingError(f"expected a torch dtype, but got {type(d).__name__}")


def _int_tuple(v: Any, what: str) -> tuple[int, ...]:
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,)
    if not isinstance(v, (tuple, list)) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in v):
        raise RuntimeError(f"expected {what} to be a tuple of ints, but got {v!r}")
    return tuple(int(i) for i in v)


def _tensor_from_storage(storage: Any, storage_offset: Any, size: Any, stride: Any,
                         dtype: np.dtype) -> np.ndarray:
    """The ndarray viewing ``storage`` like ``Tensor.set_(storage, offset, size, stride)``,
    after PyTorch's bounds check (a file can never make a tensor read outside its bytes)."""
    if not isinstance(storage, _Storage):
        raise pickle.UnpicklingError(f"expected a storage, but got {type(storage).__name__}")
    size = _int_tuple(size, "size")
    stride = _int_tuple(stride, "stride")
    if not isinstance(storage_offset, int) or isinstance(storage_offset, bool):
        raise RuntimeError(f"expected storage_offset to be an int, but got {storage_offset!r}")
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: sizes {list(size)}, "
                           f"strides {list(stride)}")
    if any(s < 0 for s in size) or any(s < 0 for s in stride) or storage_offset < 0:
        raise hinted(RuntimeError(with_hint(
            f"Trying to create tensor with negative dimension or stride: sizes {list(size)}, "
            f"strides {list(stride)}, storage offset {storage_offset}",
            "the file is corrupt or was not written by torch.save")))
    if storage.pending is not None:
        return np.zeros(size, dtype=dtype)
    itemsize = dtype.itemsize
    n_items = storage.buf.nbytes // itemsize
    needed = 0 if 0 in size else storage_offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > n_items:
        raise hinted(RuntimeError(with_hint(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
            f"{storage_offset}, and itemsize {itemsize} requiring a storage size of "
            f"{needed * itemsize} are out of bounds for storage of size {storage.buf.nbytes}",
            "the file is corrupt or was not written by torch.save")))
    flat = storage.buf[: n_items * itemsize].view(dtype)
    if 0 in size:
        return np.zeros(size, dtype=dtype)
    return np.ndarray(size, dtype=dtype, buffer=flat, offset=storage_offset * itemsize,
                      strides=tuple(s * itemsize for s in stride))


def _on_storage(storage: Any, storage_offset: Any, size: Any, stride: Any, dtype: np.dtype,
                requires_grad: Any) -> Tensor:
    arr = _tensor_from_storage(storage, storage_offset, size, stride, dtype)
    t = make(arr, None, False, TORCH)
    if requires_grad is True and arr.dtype.kind in "fc":
        t.requires_grad = True
    if storage.pending is not None:
        meta = (storage_offset, size, stride, dtype)
        storage.pending.append((t, meta))
        _PENDING_OF[id(t)] = (storage, meta)
    return t


# tensors of a legacy load waiting for their bytes, by id (a parameter wraps one of them)
_PENDING_OF: dict[int, tuple[_Storage, tuple[Any, ...]]] = {}


def _rebuild_tensor(storage: Any, storage_offset: Any, size: Any, stride: Any) -> Tensor:
    """``torch._utils._rebuild_tensor``: a tensor on a typed storage."""
    if not isinstance(storage, _Storage):
        raise pickle.UnpicklingError(f"expected a storage, but got {type(storage).__name__}")
    return _on_storage(storage, storage_offset, size, stride, storage.dtype, False)


def _rebuild_tensor_v2(storage: Any, storage_offset: Any, size: Any, stride: Any,
                       requires_grad: Any, backward_hooks: Any, metadata: Any = None) -> Tensor:
    """``torch._utils._rebuild_tensor_v2``: a tensor on a typed storage, with requires_grad."""
    if not isinstance(storage, _Storage):
        raise pickle.UnpicklingError(f"expected a storage, but got {type(storage).__name__}")
    return _on_storage(storage, storage_offset, size, stride, storage.dtype, requires_grad)


def _rebuild_tensor_v3(storage: Any, storage_offset: Any, size: Any, stride: Any,
                       requires_grad: Any, backward_hooks: Any, dtype: Any,
                       metadata: Any = None) -> Tensor:
    """``torch._utils._rebuild_tensor_v3``: a tensor of ``dtype`` on an untyped storage."""
    if not isinstance(storage, _Storage):
        raise pickle.UnpicklingError(f"expected a storage, but got {type(storage).__name__}")
    return _on_storage(storage, storage_offset, size, stride, _np_dtype(dtype), requires_grad)


def _rebuild_parameter(data: Any, requires_grad: Any, backward_hooks: Any) -> Tensor:
    """``torch._utils._rebuild_parameter``."""
    from .nn.parameter import Parameter

    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError(f"expected a tensor, but got {type(data).__name__}")
    p = Parameter(make(data._data, None, False, TORCH), bool(requires_grad))
    meta = _PENDING_OF.get(id(data))
    if meta is not None and meta[0].pending is not None:
        meta[0].pending.append((p, meta[1]))
    return p


_INTERNAL = frozenset({"_data", "_node", "_rg", "_vc", "_style", "_grad", "_acc", "_tv",
                       "_retains", "__class__", "__dict__", "_vbase", "_family", "_vidx",
                       "_vmulti", "_vnograd", "_vbidx", "_vover"})


def _set_state(obj: Any, state: Any) -> Any:
    """Attributes a file gives a tensor: never tapegrad's internals."""
    if state is None:
        return obj
    if isinstance(state, tuple) and len(state) == 2:
        state = {**(state[0] or {}), **(state[1] or {})}
    if not isinstance(state, dict):
        raise pickle.UnpicklingError(f"tensor state must be a dict, but got {type(state).__name__}")
    for k, v in state.items():
        if not isinstance(k, str) or k in _INTERNAL:
            raise pickle.UnpicklingError(f"refusing to set attribute {k!r} of a tensor")
        obj.__dict__[k] = v
    return obj


def _rebuild_parameter_with_state(data: Any, requires_grad: Any, backward_hooks: Any,
                                  state: Any) -> Tensor:
    """``torch._utils._rebuild_parameter_with_state``."""
    return _set_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Any:
    """``torch._tensor._rebuild_from_type_v2``: ``func(*args)``, of ``new_type``, with ``state``."""
    from ._misc import TorchTensor
    from .nn.parameter import Parameter

    if not callable(func) or func not in _REBUILDERS:
        raise pickle.UnpicklingError(f"Trying to call reduce for unrecognized function {func}")
    ret = func(*args)
    if new_type is Parameter and type(ret) is not Parameter:
        ret = Parameter(make(ret._data, None, False, TORCH), ret.requires_grad)
    elif new_type not in (Parameter, TorchTensor, Tensor):
        raise pickle.UnpicklingError(f"tapegrad cannot rebuild a tensor of type {new_type!r}")
    return _set_state(ret, state)


_REBUILDERS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
               _rebuild_parameter_with_state)


def _get_layout(name: Any) -> str:
    """``torch.serialization._get_layout``: tapegrad knows only ``torch.strided``."""
    if name != "torch.strided":
        raise hinted(RuntimeError(with_hint(f"unsupported layout {name!r}",
                                     "tapegrad has dense (strided) tensors only")))
    return "torch.strided"


def _allowed_globals() -> dict[str, Any]:
    """PyTorch's ``_get_allowed_globals``, each name mapped to tapegrad's object."""
    from . import _misc
    from ._tensor import device
    from .nn.parameter import Parameter

    rc: dict[str, Any] = {
        "collections.OrderedDict": OrderedDict,
        "collections.Counter": Counter,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.serialization._get_layout": _get_layout,
        "torch.Size": _dtype.Size,
        "torch.Tensor": _misc.TorchTensor,
        "torch.device": device,
        "_codecs.encode": codecs.encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.storage.UntypedStorage": _UNTYPED,
        "torch.storage.TypedStorage": _TYPED,
    }
    for d in _dtype.ALL:
        rc[f"torch.{d.name}"] = d
    for name in _MISSING_DTYPES:
        rc[f"torch.{name}"] = _MissingDType(name)
    for name in list(_STORAGE_NAMES.values()) + list(_MISSING_STORAGES):
        rc[f"torch.{name}"] = StorageType(name)
    for name in ("FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor",
                 "HalfTensor"):
        rc[f"torch.{name}"] = getattr(_misc, name)
    return rc


_ALLOWED: dict[str, Any] = {}


def _allowed() -> dict[str, Any]:
    if not _ALLOWED:
        _ALLOWED.update(_allowed_globals())
    return _ALLOWED


# -------------------------------------------------------------------------------- the unpickler
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")
_NAME_MAPPING = {("__builtin__", "set"): ("builtins", "set"),
                 ("__builtin__", "bytearray"): ("builtins", "bytearray"),
                 ("__builtin__", "complex"): ("builtins", "complex")}
_IMPORT_MAPPING = {"__builtin__": "builtins", "copy_reg": "copyreg", "_abcoll": "collections.abc"}


class WeightsUnpickler:
    """PyTorch's ``weights_only`` unpickler: a protocol-2 pickle interpreter that builds only
    allowlisted objects.  It calls nothing that is not in the allowlist and imports nothing.

    Opcodes outside PyTorch's set (``STACK_GLOBAL``, ``INST``, ``OBJ``, ``EXT*``, protocol
    4/5 framing ...) are refused, as PyTorch refuses them.
    """

    def __init__(self, file: Any, persistent_load: Callable[[Any], Any],
                 encoding: str = "bytes") -> None:
        self.read = file.read
        self.readline = file.readline
        self.persistent_load = persistent_load
        self.encoding = encoding
        self.memo: dict[int, Any] = {}
        self.stack: list[Any] = []
        self.metastack: list[list[Any]] = []

    def _global(self) -> Any:
        module = self.readline()[:-1].decode("utf-8")
        name = self.readline()[:-1].decode("utf-8")
        if (module, name) in _NAME_MAPPING:
            module, name = _NAME_MAPPING[(module, name)]
        elif module in _IMPORT_MAPPING:
            module = _IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(
                f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked.")
        allowed = _allowed()
        if full in allowed:
            return allowed[full]
        user = _user_allowed_globals()
        if full in user:
            return user[full]
        shown = full
        if full.startswith("builtins"):
            rest = full[len("builtins"):]
            shown = rest[1:] if rest.startswith(".") else "builtins" + rest
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {shown} was not an allowed global by default. "
            f"Please use `torch.serialization.add_safe_globals([{shown}])` or the "
            f"`torch.serialization.safe_globals([{shown}])` context manager to allowlist this "
            "global if you trust this class/function.")

    def _is_allowed(self, obj: Any) -> bool:
        return (any(obj is v for v in _allowed().values())
                or any(obj is v for v in _user_allowed_globals().values()))

    def _pop_mark(self) -> list[Any]:
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _check_set_target(self, opcode: str) -> None:
        if type(self.stack[-1]) not in (dict, OrderedDict, Counter):
            raise pickle.UnpicklingError(
                f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, "
                f"but got {type(self.stack[-1])}")

    def load(self) -> Any:
        """Run the pickle and return the object it builds."""
        try:
            return self._load()
        except (IndexError, KeyError, struct.error, UnicodeDecodeError) as exc:
            # a malformed stream: PyTorch lets these escape raw; one clear type is safer
            raise pickle.UnpicklingError(f"malformed pickle data ({type(exc).__name__}: {exc})"
                                         ) from None

    def _load(self) -> Any:
        from .nn.parameter import Parameter

        read = self.read
        while True:
            key = read(1)
            if not key:
                raise EOFError
            op = key[0]
            if op == pickle.GLOBAL[0]:
                self.stack.append(self._global())
            elif op == pickle.NEWOBJ[0]:
                args = self.stack.pop()
                cls = self.stack.pop()
                if cls is Parameter:
                    self.stack.append(Parameter(*args))
                elif isinstance(cls, type) and self._is_allowed(cls):
                    self.stack.append(cls.__new__(cls, *args))
                else:
                    raise pickle.UnpicklingError(
                        "Can only create new object for nn.Parameter or classes allowlisted "
                        f"via `add_safe_globals` but got {cls}")
            elif op == pickle.REDUCE[0]:
                args = self.stack.pop()
                func = self.stack[-1]
                if not self._is_allowed(func):
                    msg = f"Trying to call reduce for unrecognized function {func}"
                    if hasattr(func, "__self__"):
                        msg += f" which belongs to {func.__self__}"
                    raise pickle.UnpicklingError(msg)
                if isinstance(func, (StorageType, _UntypedStorage, _MissingDType)):
                    raise pickle.UnpicklingError(f"{func!r} cannot be called")
                if not isinstance(args, tuple):
                    raise pickle.UnpicklingError("REDUCE arguments must be a tuple")
                self.stack[-1] = func(*args)
            elif op == pickle.BUILD[0]:
                state = self.stack.pop()
                inst = self.stack[-1]
                self._build(inst, state)
            elif op == pickle.APPEND[0]:
                item = self.stack.pop()
                if type(self.stack[-1]) is not list:
                    raise pickle.UnpicklingError(
                        f"Can only append to lists, but got {type(self.stack[-1])}")
                self.stack[-1].append(item)
            elif op == pickle.APPENDS[0]:
                items = self._pop_mark()
                if type(self.stack[-1]) is not list:
                    raise pickle.UnpicklingError(
                        f"Can only extend lists, but got {type(self.stack[-1])}")
                self.stack[-1].extend(items)
            elif op == pickle.SETITEM[0]:
                v, k = self.stack.pop(), self.stack.pop()
                self._check_set_target("SETITEM")
                self.stack[-1][k] = v
            elif op == pickle.SETITEMS[0]:
                items = self._pop_mark()
                self._check_set_target("SETITEMS")
                if len(items) % 2:
                    raise pickle.UnpicklingError("SETITEMS needs key/value pairs")
                for i in range(0, len(items), 2):
                    self.stack[-1][items[i]] = items[i + 1]
            elif op == pickle.MARK[0]:
                self.metastack.append(self.stack)
                self.stack = []
            elif op == pickle.TUPLE[0]:
                items = self._pop_mark()  # (pop first: it swaps self.stack)
                self.stack.append(tuple(items))
            elif op == pickle.TUPLE1[0]:
                self.stack[-1] = (self.stack[-1],)
            elif op == pickle.TUPLE2[0]:
                if len(self.stack) < 2:
                    raise IndexError("stack underflow")
                self.stack[-2:] = [(self.stack[-2], self.stack[-1])]
            elif op == pickle.TUPLE3[0]:
                if len(self.stack) < 3:
                    raise IndexError("stack underflow")
                self.stack[-3:] = [(self.stack[-3], self.stack[-2], self.stack[-1])]
            elif op == pickle.NONE[0]:
                self.stack.append(None)
            elif op == pickle.NEWFALSE[0]:
                self.stack.append(False)
            elif op == pickle.NEWTRUE[0]:
                self.stack.append(True)
            elif op == pickle.EMPTY_TUPLE[0]:
                self.stack.append(())
            elif op == pickle.EMPTY_LIST[0]:
                self.stack.append([])
            elif op == pickle.EMPTY_DICT[0]:
                self.stack.append({})
            elif op == pickle.EMPTY_SET[0]:
                self.stack.append(set())
            elif op == pickle.BININT[0]:
                self.stack.append(struct.unpack("<i", read(4))[0])
            elif op == pickle.BININT1[0]:
                self.stack.append(read(1)[0])
            elif op == pickle.BININT2[0]:
                self.stack.append(struct.unpack("<H", read(2))[0])
            elif op == pickle.BINFLOAT[0]:
                self.stack.append(struct.unpack(">d", read(8))[0])
            elif op == pickle.BINUNICODE[0]:
                n = struct.unpack("<I", read(4))[0]
                data = read(n)
                if len(data) != n:
                    raise pickle.UnpicklingError("pickle data was truncated")
                self.stack.append(str(data, "utf-8", "surrogatepass"))
            elif op == pickle.SHORT_BINSTRING[0]:
                n = read(1)[0]
                data = read(n)
                self.stack.append(data if self.encoding == "bytes"
                                  else data.decode(self.encoding, "strict"))
            elif op == pickle.BINPERSID[0]:
                pid = self.stack.pop()
                if type(pid) is not tuple and type(pid) is not int:
                    raise pickle.UnpicklingError(
                        f"persistent_load id must be tuple or int, but got {type(pid)}")
                if type(pid) is tuple and len(pid) > 0 and _ascii(pid[0]) != "storage":
                    raise pickle.UnpicklingError(
                        f"Only persistent_load of storage is allowed, but got {type(pid[0])}")
                self.stack.append(self.persistent_load(pid))
            elif op in (pickle.BINGET[0], pickle.LONG_BINGET[0]):
                i = read(1)[0] if op == pickle.BINGET[0] else struct.unpack("<I", read(4))[0]
                self.stack.append(self.memo[i])
            elif op in (pickle.BINPUT[0], pickle.LONG_BINPUT[0]):
                i = read(1)[0] if op == pickle.BINPUT[0] else struct.unpack("<I", read(4))[0]
                self.memo[i] = self.stack[-1]
            elif op == pickle.LONG1[0]:
                n = read(1)[0]
                self.stack.append(pickle.decode_long(read(n)))
            elif op == pickle.PROTO[0]:
                proto = read(1)[0]
                if proto != 2:
                    warnings.warn(
                        f"Detected pickle protocol {proto} in the checkpoint, which was not the "
                        "default pickle protocol used by `torch.load` (2). The weights_only "
                        "Unpickler might not support all instructions implemented by this "
                        "protocol, please file an issue for adding support if you encounter "
                        "this.", stacklevel=4)
            elif op == pickle.STOP[0]:
                return self.stack.pop()
            else:
                raise pickle.UnpicklingError(f"Unsupported operand {op}")

    def _build(self, inst: Any, state: Any) -> None:
        from .nn.parameter import Parameter

        if isinstance(inst, Tensor) and type(inst) in (Tensor, Parameter):
            _set_state(inst, state)
        elif type(inst) is OrderedDict:
            if not isinstance(state, dict):
                raise pickle.UnpicklingError("OrderedDict state must be a dict")
            for k in state:
                if not isinstance(k, str) or k.startswith("__"):
                    raise pickle.UnpicklingError(f"refusing to set attribute {k!r}")
            inst.__dict__.update(state)
        elif any(type(inst) is v for v in _user_allowed_globals().values()):
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
            else:
                slotstate = None
                if isinstance(state, tuple) and len(state) == 2:
                    state, slotstate = state
                if state:
                    inst.__dict__.update(state)
                if slotstate:
                    for k, v in slotstate.items():
                        setattr(inst, k, v)
        else:
            raise pickle.UnpicklingError(
                "Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                f"`add_safe_globals`, but got {type(inst)}")


def _ascii(s: Any) -> Any:
    return s.decode("ascii") if isinstance(s, bytes) else s


class _FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: any pickle (it may run code), PyTorch names mapped to tapegrad."""

    def __init__(self, file: Any, persistent_load: Callable[[Any], Any], **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self._pl = persistent_load

    def persistent_load(self, pid: Any) -> Any:
        return self._pl(pid)

    def find_class(self, module: str, name: str) -> Any:
        full = f"{module}.{name}"
        allowed = _allowed()
        if full in allowed:
            return allowed[full]
        if module == "torch" or module.startswith("torch."):
            import importlib

            try:
                mod = importlib.import_module("tapegrad." + module)
                return getattr(mod, name)
            except (ImportError, AttributeError):
                pass
            from . import nn

            for space in (nn, nn.modules if hasattr(nn, "modules") else None):
                if space is not None and hasattr(space, name):
                    return getattr(space, name)
            raise hinted(AttributeError(with_hint(f"Can't get attribute '{name}' on <module '{module}'>",
                                           f"tapegrad has no {full}")))
        return super().find_class(module, name)


# -------------------------------------------------------------------------------- saving
class _Global:
    """Stands for a PyTorch global (``torch._utils._rebuild_tensor_v2``) in a pickle being
    written, without importing PyTorch."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def __reduce__(self) -> str:
        return self.name

    def __call__(self, *args: Any) -> Any:
        raise TypeError(f"{self.module}.{self.name} is a name written into a file, not a function")


_G_V2 = _Global("torch._utils", "_rebuild_tensor_v2")
_G_V3 = _Global("torch._utils", "_rebuild_tensor_v3")
_G_PARAM = _Global("torch._utils", "_rebuild_parameter")
_G_PARAM_STATE = _Global("torch._utils", "_rebuild_parameter_with_state")
_G_SIZE = _Global("torch", "Size")
_G_DEVICE = _Global("torch", "device")
_G_UNTYPED = _Global("torch.storage", "UntypedStorage")
_G_DTYPES = {d.name: _Global("torch", d.name) for d in _dtype.ALL}
_G_STORAGES = {k: _Global("torch", v) for k, v in _STORAGE_NAMES.items()}


class _StorageRef:
    """A storage of the file being written: the root array and its key."""

    __slots__ = ("root", "dtype", "key")

    def __init__(self, root: np.ndarray, dtype: np.dtype, key: str) -> None:
        self.root = root
        self.dtype = dtype
        self.key = key


def _root(arr: np.ndarray) -> np.ndarray:
    r = arr
    while isinstance(r.base, np.ndarray):
        r = r.base
    return r


class _Saver:
    """Collects the storages of the tensors in one object being saved."""

    def __init__(self) -> None:
        self.storages: dict[int, _StorageRef] = {}
        self.order: list[_StorageRef] = []

    def _new(self, root: np.ndarray, dtype: np.dtype, ident: int) -> _StorageRef:
        ref = _StorageRef(root, dtype, str(len(self.order)))
        self.storages[ident] = ref
        self.order.append(ref)
        return ref

    def locate(self, arr: np.ndarray) -> tuple[_StorageRef, int, tuple[int, ...], tuple[int, ...]]:
        """The storage, element offset, size and element strides of ``arr``."""
        root = _root(arr)
        isz = arr.dtype.itemsize
        if (root.flags.c_contiguous and root.dtype == arr.dtype and arr.size
                and all(s >= 0 and s % isz == 0 for s in arr.strides)):
            start = arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
            if start >= 0 and start % isz == 0:
                ref = self.storages.get(id(root))
                if ref is None or ref.root is root:
                    ref = ref or self._new(root, arr.dtype, id(root))
                    return ref, start // isz, arr.shape, tuple(s // isz for s in arr.strides)
        # no shareable root (negative strides, reinterpreted dtypes ...): a contiguous copy
        flat = np.ascontiguousarray(arr)
        ref = self._new(flat.reshape(-1), arr.dtype, id(flat))
        return ref, 0, arr.shape, _contiguous_strides(arr.shape)

    def storage_bytes(self, ref: _StorageRef) -> bytes | memoryview:
        data = ref.root.reshape(-1)
        if data.dtype.byteorder == ">":
            data = data.astype(data.dtype.newbyteorder("<"))
        return np.ascontiguousarray(data).view(np.uint8).data


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out: list[int] = []
    acc = 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


# the pure-Python pickler: its save_global can be overridden to write PyTorch's names
_PyPickler: Any = pickle._Pickler


class _TorchPickler(_PyPickler):
    """A pickler writing PyTorch's names for tapegrad's tensors, dtypes and sizes."""

    def __init__(self, file: Any, protocol: int, saver: _Saver, legacy: bool = False) -> None:
        super().__init__(file, protocol)
        self.saver = saver
        self.legacy = legacy

    def reducer_override(self, obj: Any) -> Any:
        from ._tensor import device
        from .nn.parameter import Parameter

        if isinstance(obj, _Global):
            return NotImplemented
        if isinstance(obj, Parameter):
            data = make(obj._data, None, False, TORCH)
            state = _user_state(obj)
            if state:
                return _G_PARAM_STATE, (data, obj.requires_grad, OrderedDict(), state)
            return _G_PARAM, (data, obj.requires_grad, OrderedDict())
        if isinstance(obj, Tensor):
            ref, off, size, stride = self.saver.locate(obj._data)
            name = ref.dtype.name if ref.dtype.kind != "b" else "bool"
            rg = bool(obj._rg)
            if name in _STORAGE_NAMES:
                return _G_V2, (ref, off, size, stride, rg, OrderedDict())
            return _G_V3, (ref, off, size, stride, rg, OrderedDict(), _G_DTYPES[name])
        if isinstance(obj, _dtype.dtype):
            return obj.name
        if isinstance(obj, _dtype.Size):
            return _G_SIZE, (tuple(obj),)
        if isinstance(obj, device):
            return _G_DEVICE, (str(obj),)
        return NotImplemented

    def save_global(self, obj: Any, name: Any = None) -> None:
        g = _G_DTYPES[obj.name] if isinstance(obj, _dtype.dtype) else obj
        if isinstance(g, _Global):
            self.write(pickle.GLOBAL + g.module.encode("utf-8") + b"\n"
                       + g.name.encode("utf-8") + b"\n")
            self.memoize(obj)
            return
        super().save_global(obj, name)

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, _StorageRef):
            numel = obj.root.size
            name = obj.dtype.name if obj.dtype.kind != "b" else "bool"
            if name in _STORAGE_NAMES:
                st: _Global = _G_STORAGES[name]
            else:
                st, numel = _G_UNTYPED, obj.root.nbytes
            if self.legacy:
                return ("storage", st, obj.key, "cpu", numel, None)
            return ("storage", st, obj.key, "cpu", numel)
        return None


def _user_state(t: Tensor) -> dict[str, Any]:
    d = getattr(t, "__dict__", None) or {}
    return {k: v for k, v in d.items() if not k.startswith("_")}


def _is_path(f: Any) -> bool:
    return isinstance(f, (str, bytes)) or hasattr(f, "__fspath__")


def _archive_name(f: Any) -> str:
    if _is_path(f):
        base = os.path.basename(os.fsdecode(os.fspath(f)))
        stem = os.path.splitext(base)[0]
        return stem or "archive"
    return "archive"


def _aligned_info(zf: zipfile.ZipFile, start: int, name: str) -> zipfile.ZipInfo:
    """A stored ZipInfo whose local-header padding puts the data at a 64-byte boundary,
    as PyTorch's writer does (so the file can be memory-mapped)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    assert zf.fp is not None
    here = zf.fp.tell() - start
    raw = here + 30 + len(name.encode("utf-8")) + 4
    pad = (-raw) % STORAGE_ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    return info


def _write_zip(f: Any, name: str, pkl: bytes, saver: _Saver) -> None:
    start = f.tell()
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        def record(rec: str, data: Any) -> None:
            zf.writestr(_aligned_info(zf, start, f"{name}/{rec}"), bytes(data))

        record("data.pkl", pkl)
        record(".format_version", b"1")
        record(".storage_alignment", b"64")
        record("byteorder", b"little")
        for ref in saver.order:
            info = _aligned_info(zf, start, f"{name}/data/{ref.key}")
            with zf.open(info, "w", force_zip64=ref.root.nbytes > 0x7FFFFFFF) as out:
                out.write(saver.storage_bytes(ref))
        record("version", b"3\n")
        sid = int.from_bytes(os.urandom(16), "little")
        record(".data/serialization_id", str(sid).zfill(40).encode()[:40])


def _write_legacy(f: Any, obj: Any, protocol: int) -> None:
    saver = _Saver()
    pickle.dump(MAGIC_NUMBER, f, protocol=protocol)
    pickle.dump(PROTOCOL_VERSION, f, protocol=protocol)
    sys_info = {"protocol_version": PROTOCOL_VERSION, "little_endian": True,
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    pickle.dump(sys_info, f, protocol=protocol)
    _TorchPickler(f, protocol, saver, legacy=True).dump(obj)
    keys = [ref.key for ref in saver.order]
    pickle.dump(keys, f, protocol=protocol)
    for ref in saver.order:
        numel = ref.root.size if (ref.dtype.name if ref.dtype.kind != "b" else "bool") \
            in _STORAGE_NAMES else ref.root.nbytes
        f.write(struct.pack("<q", numel))
        f.write(bytes(saver.storage_bytes(ref)))


@contextmanager
def _open(f: Any, mode: str) -> Iterator[Any]:
    if _is_path(f):
        with open(f, mode) as fh:
            yield fh
    else:
        if mode.startswith("r") and not hasattr(f, "read"):
            raise hinted(AttributeError(with_hint(
                f"'{type(f).__name__}' object has no attribute 'read'",
                "pass a path, or a file object opened in binary mode ('rb')")))
        if mode.startswith("w") and not hasattr(f, "write"):
            raise hinted(AttributeError(with_hint(
                f"'{type(f).__name__}' object has no attribute 'write'",
                "pass a path, or a file object opened in binary mode ('wb')")))
        yield f


def save(obj: object, f: Any, pickle_module: Any = pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` to a path or binary file object in PyTorch's format (``torch.save``).

    Parameters
    ----------
    obj : object
        Tensors, state dicts, optimizer state, containers; any picklable object (loading
        anything but weights then needs ``weights_only=False``).
    f : str, os.PathLike or file object
        Where to write; a file object must be binary and writable (``io.BytesIO`` works).
    pickle_protocol : int
        The pickle protocol of ``data.pkl`` (PyTorch's default 2 is what a ``weights_only``
        load reads).
    _use_new_zipfile_serialization : bool
        ``False`` writes PyTorch's legacy (pre-1.6) format.

    Examples
    --------
    >>> import io, tapegrad.torch as torch
    >>> buf = io.BytesIO()
    >>> torch.save(torch.nn.Linear(2, 1).state_dict(), buf)
    >>> sorted(torch.load(io.BytesIO(buf.getvalue())))
    ['bias', 'weight']
    """
    if pickle_module is not pickle:
        raise hinted(NotImplementedError(with_hint(
            "tapegrad's torch.save supports the standard pickle module only",
            "drop the pickle_module argument")))
    with _open(f, "wb") as fh:
        if not _use_new_zipfile_serialization:
            _write_legacy(fh, obj, pickle_protocol)
            return
        buf = io.BytesIO()
        saver = _Saver()
        _TorchPickler(buf, pickle_protocol, saver).dump(obj)
        try:
            fh.tell()
            seekable = fh.seekable() if hasattr(fh, "seekable") else True
        except (OSError, AttributeError, io.UnsupportedOperation):
            seekable = False
        if seekable:
            _write_zip(fh, _archive_name(f), buf.getvalue(), saver)
        else:
            out = io.BytesIO()
            _write_zip(out, _archive_name(f), buf.getvalue(), saver)
            fh.write(out.getvalue())


# -------------------------------------------------------------------------------- loading
def _restore_location(map_location: Any, location: str) -> str:
    from ._tensor import check_device, device

    loc: Any = location
    if map_location is None:
        pass
    elif isinstance(map_location, dict):
        loc = map_location.get(location, location)
    elif isinstance(map_location, (str, bytes, device)):
        loc = map_location.decode() if isinstance(map_location, bytes) else str(map_location)
    elif callable(map_location):
        return "cpu"
    loc = str(loc)
    if loc.startswith("cuda"):
        raise hinted(RuntimeError(with_hint(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
            "False. If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU.",
            "tapegrad runs on the CPU only")))
    check_device(loc)
    return loc


class _Loader:
    """Storages of one file, read on first use and shared by every tensor on them."""

    def __init__(self, map_location: Any, byteorder: str = "little") -> None:
        self.map_location = map_location
        self.byteorder = byteorder
        self.loaded: dict[str, _Storage] = {}

    def storage(self, key: str, dtype: np.dtype, location: str, nbytes: int,
                fetch: Callable[[str, int], np.ndarray]) -> _Storage:
        st = self.loaded.get(key)
        if st is None:
            loc = _restore_location(self.map_location, _ascii(location))
            buf = fetch(key, nbytes)
            if self.byteorder == "big" and dtype.itemsize > 1:
                buf = buf.view(dtype.newbyteorder(">")).astype(dtype).view(np.uint8)
            st = _Storage(buf, dtype, loc, key)
            if callable(self.map_location) and not isinstance(self.map_location, dict):
                r = self.map_location(st, _ascii(location))
                if isinstance(r, _Storage):
                    st = r
            self.loaded[key] = st
        return st


def _storage_dtype(storage_type: Any) -> np.dtype:
    if isinstance(storage_type, _UntypedStorage):
        return np.dtype(np.uint8)
    if isinstance(storage_type, StorageType):
        if storage_type.dtype is None:
            _MissingDType(storage_type.name.replace("Storage", "").lower()).fail()
        assert storage_type.dtype is not None
        return storage_type.dtype
    raise pickle.UnpicklingError(f"unknown storage type {storage_type!r}")


class _ZipReader:
    def __init__(self, zf: zipfile.ZipFile, mm: Any = None) -> None:
        self.zf = zf
        self.mm = mm
        names = zf.namelist()
        if not names:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: "
                               "failed finding central directory")
        self.prefix = names[0].split("/", 1)[0]
        self.names = set(names)

    def has(self, rec: str) -> bool:
        return f"{self.prefix}/{rec}" in self.names

    def get(self, rec: str) -> bytes:
        name = f"{self.prefix}/{rec}"
        if name not in self.names:
            raise RuntimeError(f"PytorchStreamReader failed locating file {rec}: file not found")
        return self.zf.read(name)

    def storage(self, key: str, nbytes: int) -> np.ndarray:
        name = f"{self.prefix}/data/{key}"
        if name not in self.names:
            raise RuntimeError(f"PytorchStreamReader failed locating file data/{key}: "
                               "file not found")
        info = self.zf.getinfo(name)
        if info.file_size < nbytes:
            raise hinted(RuntimeError(with_hint(
                f"storage data/{key} has {info.file_size} bytes but the pickle asks for {nbytes}",
                "the file is truncated or corrupt")))
        if self.mm is not None and info.compress_type == zipfile.ZIP_STORED:
            off = _data_offset(self.mm, info)
            return np.frombuffer(self.mm, dtype=np.uint8, count=nbytes, offset=off)
        buf = np.empty(nbytes, dtype=np.uint8)
        with self.zf.open(info) as src:
            view = buf.data
            got = 0
            while got < nbytes:
                n = src.readinto(view[got:])  # type: ignore[attr-defined]
                if not n:
                    raise RuntimeError(f"storage data/{key} is truncated")
                got += n
        return buf


def _data_offset(mm: Any, info: zipfile.ZipInfo) -> int:
    h = info.header_offset
    n, e = struct.unpack("<HH", mm[h + 26:h + 30])
    return h + 30 + n + e


def _is_zip(fh: Any) -> bool:
    pos = fh.tell()
    head = fh.read(4)
    fh.seek(pos)
    return head == b"PK\x03\x04"


def _unpickle(data_file: Any, persistent_load: Callable[[Any], Any], weights_only: bool,
              pickle_load_args: dict[str, Any]) -> Any:
    if weights_only:
        try:
            return WeightsUnpickler(data_file, persistent_load,
                                    encoding=pickle_load_args.get("encoding", "utf-8")).load()
        except pickle.UnpicklingError as e:
            raise hinted(pickle.UnpicklingError(with_hint(_wo_message(str(e)), _WO_HINT))) from None
    return _FullUnpickler(data_file, persistent_load, **pickle_load_args).load()


def _wo_message(message: str) -> str:
    """PyTorch's wording around a weights-only failure (``_get_wo_message``)."""
    import re

    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the "
                f"checkpoint\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load "
                "with `weights_only=True` please check the recommended steps in the following "
                "error message.\n\tWeightsUnpickler error: " + message + DOCS_MESSAGE)
    updated = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if not re.search(r"whose module (\S+) is blocked", message):
        updated += ("Please file an issue with the following so that we can make "
                    "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
    return updated + "\n\n" + message + DOCS_MESSAGE


def _load_zip(fh: Any, map_location: Any, weights_only: bool, mm: Any,
              pickle_load_args: dict[str, Any]) -> Any:
    try:
        zf = zipfile.ZipFile(fh)
    except zipfile.BadZipFile as exc:
        raise hinted(RuntimeError(with_hint(
            f"PytorchStreamReader failed reading zip archive: {exc}",
            "the file is truncated or not a torch.save checkpoint"))) from None
    with zf:
        reader = _ZipReader(zf, mm)
        byteorder = "little"
        if reader.has("byteorder"):
            raw = reader.get("byteorder")
            if raw not in (b"little", b"big"):
                raise ValueError("Unknown endianness type: " + raw.decode(errors="replace"))
            byteorder = raw.decode()
        loader = _Loader(map_location, byteorder)

        def persistent_load(pid: Any) -> Any:
            if not isinstance(pid, tuple) or len(pid) != 5:
                raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
            _, storage_type, key, location, numel = pid
            dtype = _storage_dtype(storage_type)
            if not isinstance(numel, int) or numel < 0 or not isinstance(key, (str, bytes)):
                raise pickle.UnpicklingError(f"bad storage record {pid!r}")
            return loader.storage(_ascii(key), dtype, location, numel * dtype.itemsize,
                                  reader.storage)

        return _unpickle(io.BytesIO(reader.get("data.pkl")), persistent_load, weights_only,
                         pickle_load_args)


def _load_legacy(fh: Any, map_location: Any, weights_only: bool,
                 pickle_load_args: dict[str, Any]) -> Any:
    def small(what: str) -> Any:
        # the header pickles hold only ints, strings and a dict: the restricted interpreter
        return WeightsUnpickler(fh, lambda pid: pid).load()

    try:
        magic = small("magic number")
    except (pickle.UnpicklingError, EOFError):
        magic = None
    if magic != MAGIC_NUMBER:
        raise hinted(RuntimeError(with_hint("Invalid magic number; corrupt file?",
                                     "this is not a file written by torch.save")))
    version = small("protocol version")
    if version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {version}")
    sys_info = small("sys info")
    if not isinstance(sys_info, dict) or not sys_info.get("little_endian", True):
        raise RuntimeError("Loading big-endian legacy checkpoints is not supported")
    storages: dict[str, tuple[np.dtype, _Storage, int]] = {}
    loader = _Loader(map_location)

    def persistent_load(pid: Any) -> Any:
        if not isinstance(pid, tuple) or len(pid) != 6 or _ascii(pid[0]) != "storage":
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        _, storage_type, key, location, numel, view_metadata = pid
        if view_metadata is not None:
            raise pickle.UnpicklingError("legacy storage views are not supported")
        dtype = _storage_dtype(storage_type)
        if not isinstance(numel, int) or numel < 0 or not isinstance(key, (str, bytes)):
            raise pickle.UnpicklingError(f"bad storage record {pid!r}")
        key = _ascii(key)
        if key not in storages:
            st = loader.storage(key, dtype, location, 0, lambda k, n: np.zeros(0, np.uint8))
            st.pending = []
            storages[key] = (dtype, st, numel)
        return storages[key][1]

    try:
        result = _unpickle(fh, persistent_load, weights_only, pickle_load_args)
        keys = small("storage keys")
        if not isinstance(keys, list):
            raise RuntimeError("corrupt legacy checkpoint: storage key list missing")
        for key in keys:
            key = _ascii(key)
            if key not in storages:
                raise RuntimeError(f"corrupt legacy checkpoint: unknown storage key {key!r}")
            dtype, st, numel = storages[key]
            (n,) = struct.unpack("<q", fh.read(8))
            if n != numel:
                raise RuntimeError(f"corrupt legacy checkpoint: storage {key} has {n} elements, "
                                   f"expected {numel}")
            nbytes = n * dtype.itemsize
            raw = fh.read(nbytes)
            if len(raw) != nbytes:
                raise RuntimeError(f"corrupt legacy checkpoint: storage {key} is truncated")
            st.buf = np.frombuffer(bytearray(raw), dtype=np.uint8)
        for _, st, _ in storages.values():
            waiting, st.pending = st.pending or [], None
            for t, (off, size, stride, dt) in waiting:
                t._data = _tensor_from_storage(st, off, size, stride, dt)
    finally:
        _PENDING_OF.clear()
    return result


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Load an object saved by ``torch.save`` (tapegrad's or PyTorch's) (``torch.load``).

    Parameters
    ----------
    f : str, os.PathLike or binary file object
        The checkpoint.
    map_location : str, torch.device, dict or callable, optional
        Where storages go; tapegrad has the CPU only, so a CUDA location raises PyTorch's
        error unless mapped to ``'cpu'``.
    weights_only : bool, optional
        ``True`` (the default, as in PyTorch 2.6+): only tensors, parameters, containers,
        primitive values, dtypes, ``torch.Size``, ``torch.device`` and allowlisted globals
        are built, and nothing in the file is ever called or imported.  ``False`` unpickles
        anything, which can run arbitrary code: only for files you trust.
    mmap : bool, optional
        Memory-map the file (a path to a zip checkpoint) instead of reading the storages;
        the tensors are copy-on-write views of the file.

    Examples
    --------
    >>> import io, tapegrad.torch as torch
    >>> buf = io.BytesIO()
    >>> torch.save([torch.tensor([1, 2]), torch.float16], buf)
    >>> torch.load(io.BytesIO(buf.getvalue()))
    [tensor([1, 2]), torch.float16]
    """
    if weights_only is None:
        weights_only = True
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_module not in (None, pickle):
        raise hinted(NotImplementedError(with_hint(
            "tapegrad's torch.load supports the standard pickle module only",
            "drop the pickle_module argument")))
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    with _open(f, "rb") as fh:
        if not hasattr(fh, "seek") or not hasattr(fh, "tell"):
            fh = io.BytesIO(fh.read())
        if _is_zip(fh):
            mm = None
            if mmap:
                if not _is_path(f):
                    raise ValueError("f must be a file path in order to use the mmap argument")
                import mmap as _mmap

                mm = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY)
            return _load_zip(fh, map_location, bool(weights_only), mm, pickle_load_args)
        if mmap:
            f_name = "" if not isinstance(f, str) else f"{f}, "
            raise RuntimeError(
                "mmap can only be used with files saved with "
                f"`torch.save({f_name}_use_new_zipfile_serialization=True), "
                "please torch.save your checkpoint with this option in order to use mmap.")
        return _load_legacy(fh, map_location, bool(weights_only), pickle_load_args)


__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "DEFAULT_PROTOCOL", "StorageType"]
