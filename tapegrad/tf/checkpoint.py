"""``tf.train.Checkpoint`` in TensorFlow's own checkpoint format (TensorBundle V2).

A checkpoint ``prefix`` is two files, written byte-compatibly with TensorFlow:

- ``prefix.index``: a LevelDB-style sorted table (data block, empty metaindex
  block, index block, 48-byte footer with TensorFlow's table magic number),
  mapping ``""`` to a ``BundleHeaderProto`` and each checkpoint key
  (``"m/w/.ATTRIBUTES/VARIABLE_VALUE"``) to a ``BundleEntryProto`` (dtype,
  shape, offset, size, masked CRC32C of the bytes);
- ``prefix.data-00000-of-00001``: the tensors' raw little-endian bytes.

The object graph (which object holds which variable under which name) is a
``TrackableObjectGraph`` proto stored as the string tensor
``_CHECKPOINTABLE_OBJECT_GRAPH``, as TensorFlow stores it; ``Checkpoint.save``
and ``CheckpointManager`` keep the text-format ``checkpoint`` state file.
Real TensorFlow 2.21 reads these files and tapegrad reads TensorFlow's, for
graphs of ``tf.Variable``, ``tf.Module``, lists, dicts and nested
``Checkpoint`` objects.  Reading parses bytes only (protobuf wire format and
the table layout, every length and checksum checked): nothing in a
checkpoint can run code.

Keras layers and models can be checkpointed too, under tapegrad's own names
(each layer's variables by name, sublayers by attribute): these load back in
tapegrad but do not follow the object names Keras 3 gives them in TensorFlow.

>>> import os, tempfile
>>> import tapegrad.tf as tf
>>> v = tf.Variable([1.0, 2.0])
>>> ckpt = tf.train.Checkpoint(v=v)
>>> d = tempfile.mkdtemp()
>>> path = ckpt.save(os.path.join(d, "ckpt"))
>>> os.path.basename(path), os.path.basename(tf.train.latest_checkpoint(d))
('ckpt-1', 'ckpt-1')
>>> _ = v.assign([0.0, 0.0])
>>> _ = ckpt.restore(path)
>>> v.numpy()
array([1., 2.], dtype=float32)
"""

from __future__ import annotations

import os
import re
import struct
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from . import errors

__all__ = ["Checkpoint", "CheckpointManager", "latest_checkpoint", "list_variables",
           "load_checkpoint", "CheckpointReader"]

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
_TABLE_MAGIC = 0xDB4775248B80FB57
_FOOTER_LEN = 48
_DT_STRING = 7
# TensorFlow's DataType enum <-> NumPy
_DTYPES = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8",
           8: "complex64", 9: "int64", 10: "bool", 17: "uint16", 18: "complex128",
           19: "float16", 22: "uint32", 23: "uint64"}
_DT_OF = {np.dtype(v): k for k, v in _DTYPES.items()}


def _corrupt(what: str) -> errors.DataLossError:
    return hinted(errors.DataLossError(None, None, with_hint(
        f"Unable to read checkpoint: {what}", "the checkpoint is truncated or corrupt")))


# ---------------------------------------------------------------------------- CRC32C
def _crc_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC = _crc_table()


def crc32c(data: bytes | memoryview, crc: int = 0) -> int:
    """CRC-32C (Castagnoli), as TensorFlow's ``crc32c::Extend``."""
    c = crc ^ 0xFFFFFFFF
    t = _CRC
    for b in bytes(data):
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def _mask(c: int) -> int:
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


# ---------------------------------------------------------------------------- protobuf wire
def _varint(n: int) -> bytes:
    if n < 0:
        n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise _corrupt("bad varint")
        b = buf[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return n, pos


def _field(num: int, value: Any) -> bytes:
    """One protobuf field: ints as varints, bytes/str as length-delimited."""
    if isinstance(value, (bytes, bytearray, str)):
        data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
        return _varint(num << 3 | 2) + _varint(len(data)) + data
    return _varint(num << 3) + _varint(int(value))


def _fixed32(num: int, value: int) -> bytes:
    return _varint(num << 3 | 5) + struct.pack("<I", value)


def _parse(buf: bytes) -> dict[int, list[Any]]:
    """A message's fields: number -> values (ints for varint/fixed, bytes for length-delimited)."""
    out: dict[int, list[Any]] = {}
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        num, wt = key >> 3, key & 7
        v: Any
        if wt == 0:
            v, pos = _read_varint(buf, pos)
        elif wt == 1:
            if pos + 8 > len(buf):
                raise _corrupt("truncated fixed64")
            v = struct.unpack_from("<Q", buf, pos)[0]
            pos += 8
        elif wt == 2:
            n, pos = _read_varint(buf, pos)
            if pos + n > len(buf):
                raise _corrupt("truncated length-delimited field")
            v = buf[pos:pos + n]
            pos += n
        elif wt == 5:
            if pos + 4 > len(buf):
                raise _corrupt("truncated fixed32")
            v = struct.unpack_from("<I", buf, pos)[0]
            pos += 4
        else:
            raise _corrupt(f"unsupported protobuf wire type {wt}")
        out.setdefault(num, []).append(v)
    return out


def _one(msg: dict[int, list[Any]], num: int, default: Any) -> Any:
    vals = msg.get(num)
    return vals[-1] if vals else default


# ---------------------------------------------------------------------------- the table
def _block(entries: list[tuple[bytes, bytes]], restart_interval: int = 16) -> bytes:
    out = bytearray()
    restarts = []
    prev = b""
    for i, (k, v) in enumerate(entries):
        if i % restart_interval == 0:
            restarts.append(len(out))
            shared = 0
        else:
            shared = 0
            while shared < min(len(prev), len(k)) and prev[shared] == k[shared]:
                shared += 1
        out += _varint(shared) + _varint(len(k) - shared) + _varint(len(v)) + k[shared:] + v
        prev = k
    if not restarts:
        restarts = [0]
    for r in restarts:
        out += struct.pack("<I", r)
    out += struct.pack("<I", len(restarts))
    return bytes(out)


def _with_trailer(block: bytes) -> bytes:
    return block + b"\x00" + struct.pack("<I", _mask(crc32c(block + b"\x00")))


def _handle(offset: int, size: int) -> bytes:
    return _varint(offset) + _varint(size)


def write_table(entries: list[tuple[bytes, bytes]]) -> bytes:
    """A LevelDB/TensorFlow table (no compression) of sorted ``(key, value)`` pairs."""
    entries = sorted(entries)
    out = bytearray()
    index: list[tuple[bytes, bytes]] = []
    chunk: list[tuple[bytes, bytes]] = []
    size = 0

    def flush() -> None:
        nonlocal size
        if not chunk:
            return
        block = _block(chunk)
        index.append((chunk[-1][0], _handle(len(out), len(block))))
        out.extend(_with_trailer(block))
        chunk.clear()
        size = 0

    for k, v in entries:
        chunk.append((k, v))
        size += len(k) + len(v)
        if size >= 262144:
            flush()
    flush()
    meta = _block([])
    meta_handle = _handle(len(out), len(meta))
    out += _with_trailer(meta)
    idx = _block(index, restart_interval=1)
    index_handle = _handle(len(out), len(idx))
    out += _with_trailer(idx)
    footer = (meta_handle + index_handle).ljust(_FOOTER_LEN - 8, b"\x00")
    out += footer + struct.pack("<Q", _TABLE_MAGIC)
    return bytes(out)


def _read_block(data: bytes, handle: bytes, pos: int = 0) -> list[tuple[bytes, bytes]]:
    off, p = _read_varint(handle, pos)
    size, _ = _read_varint(handle, p)
    if off + size + 5 > len(data):
        raise _corrupt("block handle out of range")
    block = data[off:off + size]
    kind = data[off + size]
    (stored,) = struct.unpack_from("<I", data, off + size + 1)
    if _mask(crc32c(block + bytes([kind]))) != stored:
        raise _corrupt("block checksum mismatch")
    if kind != 0:
        raise _corrupt(f"compressed table blocks (type {kind}) are not supported")
    if size < 4:
        raise _corrupt("block too small")
    (n_restarts,) = struct.unpack_from("<I", block, size - 4)
    end = size - 4 - 4 * n_restarts
    if end < 0:
        raise _corrupt("bad restart count")
    entries = []
    p = 0
    prev = b""
    while p < end:
        shared, p = _read_varint(block, p)
        non_shared, p = _read_varint(block, p)
        vlen, p = _read_varint(block, p)
        if shared > len(prev) or p + non_shared + vlen > end:
            raise _corrupt("bad block entry")
        key = prev[:shared] + block[p:p + non_shared]
        p += non_shared
        entries.append((key, block[p:p + vlen]))
        p += vlen
        prev = key
    return entries


def read_table(data: bytes) -> dict[bytes, bytes]:
    """Every ``key -> value`` of a table written by :func:`write_table` or TensorFlow."""
    if len(data) < _FOOTER_LEN:
        raise _corrupt("not an sstable (file too short)")
    footer = data[-_FOOTER_LEN:]
    if struct.unpack_from("<Q", footer, _FOOTER_LEN - 8)[0] != _TABLE_MAGIC:
        raise _corrupt("not an sstable (bad magic number)")
    _, p = _read_varint(footer, 0)
    _, p = _read_varint(footer, p)
    _, q = _read_varint(footer, p)
    _, _ = _read_varint(footer, q)
    out: dict[bytes, bytes] = {}
    for _, handle in _read_block(data, footer, p):
        for k, v in _read_block(data, handle):
            out[k] = v
    return out


# ---------------------------------------------------------------------------- bundles
def _shape_proto(shape: tuple[int, ...]) -> bytes:
    return b"".join(_field(2, _field(1, n)) for n in shape)


def _entry(dtype: int, shape: tuple[int, ...], offset: int, size: int, crc: int) -> bytes:
    out = _field(1, dtype) + _field(2, _shape_proto(shape))
    if offset:
        out += _field(4, offset)
    if size:
        out += _field(5, size)
    return out + _fixed32(6, _mask(crc))


def _string_tensor(value: bytes) -> tuple[bytes, int]:
    """A scalar DT_STRING in TensorBundle's layout, and its CRC32C."""
    n32 = struct.pack("<I", len(value))
    c = crc32c(n32)
    length_ck = struct.pack("<I", _mask(c))
    c = crc32c(length_ck, c)
    c = crc32c(value, c)
    return _varint(len(value)) + length_ck + value, c


def write_bundle(prefix: str, tensors: dict[str, np.ndarray], graph: bytes | None) -> None:
    """Write ``prefix.index`` and ``prefix.data-00000-of-00001``."""
    data = bytearray()
    entries: list[tuple[bytes, bytes]] = [(b"", _field(1, 1) + _field(3, _field(1, 1)))]
    for key in sorted(tensors):
        arr = np.array(tensors[key], order="C", copy=True)
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        dt = _DT_OF.get(np.dtype(arr.dtype.str.replace(">", "<")))
        if dt is None:
            raise hinted(TypeError(with_hint(f"tapegrad cannot checkpoint dtype {arr.dtype}",
                                      "use a numeric or bool variable")))
        raw = arr.tobytes()
        entries.append((key.encode("utf-8"), _entry(dt, arr.shape, len(data), len(raw),
                                                    crc32c(raw))))
        data += raw
    if graph is not None:
        raw, c = _string_tensor(graph)
        entries.append((OBJECT_GRAPH_KEY.encode(), _entry(_DT_STRING, (), len(data), len(raw),
                                                          c)))
        data += raw
    d = os.path.dirname(prefix)
    if d:
        os.makedirs(d, exist_ok=True)
    tmp_data, tmp_index = prefix + ".data-00000-of-00001.tmp", prefix + ".index.tmp"
    with open(tmp_data, "wb") as f:
        f.write(bytes(data))
    with open(tmp_index, "wb") as f:
        f.write(write_table(entries))
    os.replace(tmp_data, prefix + ".data-00000-of-00001")
    os.replace(tmp_index, prefix + ".index")


class CheckpointReader:
    """Reads a TensorBundle checkpoint (``tf.train.load_checkpoint``)."""

    def __init__(self, prefix: str) -> None:
        prefix = os.fspath(prefix)
        if os.path.isdir(prefix):
            found = latest_checkpoint(prefix)
            if found is None:
                raise _not_found(prefix)
            prefix = found
        index = prefix + ".index"
        if not os.path.exists(index):
            raise _not_found(prefix)
        with open(index, "rb") as f:
            table = read_table(f.read())
        header = _parse(table.get(b"", b""))
        shards = _one(header, 1, 1)
        if shards != 1:
            raise _corrupt(f"checkpoints of {shards} shards are not supported")
        if _one(header, 2, 0) != 0:
            raise _corrupt("big-endian checkpoints are not supported")
        self.prefix = prefix
        self._entries: dict[str, dict[int, list[Any]]] = {}
        for k, v in table.items():
            if k:
                self._entries[k.decode("utf-8", "replace")] = _parse(v)
        data_path = prefix + ".data-00000-of-00001"
        if not os.path.exists(data_path):
            raise _corrupt(f"missing data file {data_path}")
        self._data_path = data_path

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        return {k: list(self._shape(e)) for k, e in self._entries.items()}

    def get_variable_to_dtype_map(self) -> dict[str, Any]:
        from . import dtypes

        return {k: dtypes.as_dtype(_DTYPES.get(_one(e, 1, 0), "float32"))
                for k, e in self._entries.items() if _one(e, 1, 0) != _DT_STRING}

    def has_tensor(self, key: str) -> bool:
        return key in self._entries

    @staticmethod
    def _shape(e: dict[int, list[Any]]) -> tuple[int, ...]:
        shape = _parse(_one(e, 2, b""))
        dims = []
        for d in shape.get(2, []):
            n = _one(_parse(d), 1, 0)
            if n >= 1 << 62:
                raise _corrupt("negative or huge dimension")
            dims.append(n)
        return tuple(dims)

    def _raw(self, key: str) -> tuple[dict[int, list[Any]], bytes]:
        e = self._entries.get(key)
        if e is None:
            raise hinted(errors.NotFoundError(None, None, with_hint(
                f"Key {key} not found in checkpoint", "list the keys with "
                "tf.train.list_variables(path)")))
        if _one(e, 3, 0) != 0 or e.get(7):
            raise _corrupt(f"{key}: sharded or sliced tensors are not supported")
        offset, size = _one(e, 4, 0), _one(e, 5, 0)
        with open(self._data_path, "rb") as f:
            f.seek(offset)
            raw = f.read(size)
        if len(raw) != size:
            raise _corrupt(f"{key}: data file is truncated")
        return e, raw

    def get_tensor(self, key: str) -> Any:
        """The stored value: a NumPy array, or bytes for the object graph."""
        e, raw = self._raw(key)
        dt = _one(e, 1, 0)
        stored = _one(e, 6, None)
        if dt == _DT_STRING:
            n, p = _read_varint(raw, 0)
            value = raw[p + 4:p + 4 + n]
            if len(value) != n:
                raise _corrupt(f"{key}: bad string tensor")
            _, c = _string_tensor(value)
            if stored is not None and _mask(c) != stored:
                raise _corrupt(f"{key}: checksum mismatch")
            return value
        if dt not in _DTYPES:
            raise hinted(TypeError(with_hint(f"{key}: unsupported checkpoint dtype enum {dt}",
                                      "tapegrad reads numeric and bool tensors")))
        if stored is not None and _mask(crc32c(raw)) != stored:
            raise _corrupt(f"{key}: checksum mismatch")
        shape = self._shape(e)
        dtype = np.dtype(_DTYPES[dt]).newbyteorder("<")
        if int(np.prod(shape, dtype=np.int64)) * dtype.itemsize != len(raw):
            raise _corrupt(f"{key}: {len(raw)} bytes do not hold shape {shape} of {dtype}")
        return np.frombuffer(raw, dtype=dtype).astype(dtype.newbyteorder("=")).reshape(shape)


def _not_found(path: str) -> errors.NotFoundError:
    return hinted(errors.NotFoundError(None, None, with_hint(
        f"Failed to find any matching files for {path}",
        "pass the prefix that save() returned (e.g. .../ckpt-1), or a directory with a "
        "'checkpoint' file")))


def load_checkpoint(ckpt_dir_or_file: str) -> CheckpointReader:
    """``tf.train.load_checkpoint``."""
    return CheckpointReader(ckpt_dir_or_file)


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """``tf.train.list_variables``: ``(key, shape)`` pairs, sorted by key."""
    return sorted(CheckpointReader(ckpt_dir_or_file).get_variable_to_shape_map().items())


# ---------------------------------------------------------------------------- object graph
def _escape(name: str) -> str:
    return name.replace(".", "..").replace("/", "./")


def _is_variable(obj: Any) -> bool:
    from .variables import Variable

    return isinstance(obj, Variable)


def _is_optimizer(obj: Any) -> bool:
    from .keras.optimizers import Optimizer

    return isinstance(obj, Optimizer)


def _trackable(obj: Any) -> bool:
    from . import Module
    from .keras.layers import Layer

    return (_is_variable(obj) or isinstance(obj, (Module, Layer, Checkpoint))
            or _is_optimizer(obj)
            or (isinstance(obj, (list, tuple, dict)) and _holds_trackable(obj)))


class _Slot:
    """One optimizer slot (Adam's ``m`` of one variable) as a checkpointed value."""

    def __init__(self, value: Any) -> None:
        self._data = np.asarray(value)


def _holds_trackable(c: Any) -> bool:
    items = c.values() if isinstance(c, dict) else c
    return any(_trackable(v) for v in items)


_KERAS_INTERNAL = frozenset({"_sublayers", "_own_weights", "_kernel"})


def _children(obj: Any) -> list[tuple[str, Any]]:
    """The named trackable children of ``obj``, in TensorFlow's order."""
    from .keras.layers import Layer

    if isinstance(obj, Checkpoint):
        kids = list(obj._children.items())
        if obj._save_counter is not None:
            kids.append(("save_counter", obj._save_counter))
        return kids
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj) if _trackable(v)]
    if isinstance(obj, dict):
        return [(str(k), v) for k, v in obj.items() if _trackable(v)]
    if _is_variable(obj):
        return []
    if _is_optimizer(obj):
        return [("iterations", obj.iterations), ("learning_rate", obj._lr)]
    kids = []
    if isinstance(obj, Layer):
        # tapegrad's names: own variables by name, then sublayer attributes
        seen: set[str] = set()
        for w in obj._own_weights:
            name = w.__dict__.get("_name", "variable").split(":")[0]
            if name not in seen:
                seen.add(name)
                kids.append((name, w))
    for k, v in vars(obj).items():
        if k.startswith("__") or k in _KERAS_INTERNAL or not _trackable(v):
            continue
        if isinstance(obj, Layer) and _is_variable(v):
            continue  # already listed by name
        kids.append((k, v))
    if isinstance(obj, Layer):
        # sublayers held only by the layer's own list (a Sequential's layers)
        extra = [s for s in obj._sublayers if all(s is not v for _, v in kids)]
        if extra:
            kids.append(("layers", extra))
    return kids


def _graph(root: Any) -> tuple[bytes, dict[str, Any]]:
    """Breadth-first ``TrackableObjectGraph`` of ``root`` and ``checkpoint key -> variable``."""
    ids: dict[int, int] = {id(root): 0}
    order: list[Any] = [root]
    paths: list[str] = [""]
    kids_of: list[list[tuple[str, int]]] = []
    i = 0
    while i < len(order):
        obj = order[i]
        kids = []
        for name, child in _children(obj):
            if id(child) not in ids:
                ids[id(child)] = len(order)
                order.append(child)
                paths.append(_escape(name) if not paths[i] else paths[i] + "/" + _escape(name))
            kids.append((name, ids[id(child)]))
        kids_of.append(kids)
        i += 1
    # optimizer slots: one node per (variable, slot), referenced from the optimizer's node
    # as TensorFlow's slot_variables, under TensorFlow's ".OPTIMIZER_SLOT" key
    slot_refs: dict[int, list[tuple[int, str, int]]] = {}
    keys: dict[int, str] = {}
    for oi in [k for k, o in enumerate(order) if _is_optimizer(o)]:
        opt = order[oi]
        for vkey, state in opt._slots.items():
            var = opt._vars.get(vkey)
            if var is None or id(var) not in ids:
                continue
            vi = ids[id(var)]
            for slot in sorted(state):
                value = state[slot]
                if not isinstance(value, (np.ndarray, np.generic, int, float)) or \
                        isinstance(value, bool):
                    continue
                si = len(order)
                order.append(_Slot(value))
                keys[si] = (f"{paths[vi]}/.OPTIMIZER_SLOT/{paths[oi]}/{_escape(slot)}"
                            + _VALUE_SUFFIX)
                paths.append(keys[si])
                kids_of.append([])
                slot_refs.setdefault(oi, []).append((vi, slot, si))
    values: dict[str, Any] = {}
    nodes = []
    for k, (obj, path, kids) in enumerate(zip(order, paths, kids_of)):
        msg = b"".join(_field(1, _field(1, nid) + _field(2, name)) for name, nid in kids)
        if _is_variable(obj) or isinstance(obj, _Slot):
            key = keys.get(k, path + _VALUE_SUFFIX)
            values[key] = obj
            full = (obj.__dict__.get("_name", "Variable").split(":")[0]
                    if _is_variable(obj) else "slot")
            msg += _field(2, _field(1, "VARIABLE_VALUE") + _field(2, full) + _field(3, key))
        for vi, slot, si in slot_refs.get(k, []):
            msg += _field(3, _field(1, vi) + _field(2, slot) + _field(3, si))
        msg += _field(5, _field(1, 1))  # has_checkpoint_values: true
        nodes.append(_field(1, msg))
    return b"".join(nodes), values


def _parse_graph(raw: bytes) -> list[dict[str, Any]]:
    nodes = []
    for node in _parse(raw).get(1, []):
        n = _parse(node)
        children = []
        for c in n.get(1, []):
            cm = _parse(c)
            children.append((_one(cm, 2, b"").decode("utf-8", "replace"), _one(cm, 1, 0)))
        attrs = {}
        for a in n.get(2, []):
            am = _parse(a)
            attrs[_one(am, 1, b"").decode()] = _one(am, 3, b"").decode("utf-8", "replace")
        slots = []
        for sv in n.get(3, []):
            sm = _parse(sv)
            slots.append((_one(sm, 1, 0), _one(sm, 2, b"").decode("utf-8", "replace"),
                          _one(sm, 3, 0)))
        nodes.append({"children": children, "attributes": attrs, "slots": slots})
    return nodes


class CheckpointLoadStatus:
    """What ``restore`` matched; ``assert_consumed()`` as in TensorFlow."""

    def __init__(self, matched: int, unused_keys: list[str], unmatched: list[str]) -> None:
        self._matched = matched
        self._unused = unused_keys
        self._unmatched = unmatched

    def assert_consumed(self) -> CheckpointLoadStatus:
        if self._unused:
            raise hinted(AssertionError(with_hint(
                f"Unresolved object in checkpoint: {self._unused[:5]}",
                "the checkpoint holds values that no object in this program claimed")))
        return self.assert_existing_objects_matched()

    def assert_existing_objects_matched(self) -> CheckpointLoadStatus:
        if self._unmatched:
            raise hinted(AssertionError(with_hint(
                f"Object(s) not found in the checkpoint: {self._unmatched[:5]}",
                "the program has variables the checkpoint does not hold")))
        return self

    def assert_nontrivial_match(self) -> CheckpointLoadStatus:
        if not self._matched:
            raise AssertionError("Nothing except the root object matched a checkpointed value.")
        return self

    def expect_partial(self) -> CheckpointLoadStatus:
        return self

    def run_restore_ops(self, session: Any = None) -> None:
        """Nothing to run: values were assigned eagerly."""


def _restore(root: Any, prefix: str) -> CheckpointLoadStatus:
    reader = CheckpointReader(prefix)
    if not reader.has_tensor(OBJECT_GRAPH_KEY):
        raise hinted(errors.NotFoundError(None, None, with_hint(
            f"The checkpoint at {prefix} has no object graph",
            "it was written by TF1-style name-based saving, which tapegrad does not read")))
    nodes = _parse_graph(reader.get_tensor(OBJECT_GRAPH_KEY))
    if not nodes:
        raise _corrupt("empty object graph")
    if isinstance(root, Checkpoint) and "save_counter" in dict(nodes[0]["children"]):
        root.save_counter  # noqa: B018  (created, as TensorFlow does, to be restored)
    plan: list[tuple[Any, np.ndarray]] = []
    used: set[str] = set()
    unmatched: list[str] = []
    seen: set[int] = set()
    obj_of: dict[int, Any] = {}
    optimizers: list[tuple[Any, dict[str, Any]]] = []
    todo: list[tuple[Any, int, str]] = [(root, 0, "")]
    while todo:
        obj, nid, path = todo.pop(0)
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if not 0 <= nid < len(nodes):
            raise _corrupt(f"node id {nid} out of range")
        node = nodes[nid]
        obj_of[nid] = obj
        if _is_optimizer(obj):
            optimizers.append((obj, node))
        if _is_variable(obj):
            key = node["attributes"].get("VARIABLE_VALUE")
            if key is None:
                unmatched.append(path)
                continue
            value = reader.get_tensor(key)
            if tuple(value.shape) != tuple(obj._data.shape):
                raise hinted(ValueError(with_hint(
                    f"Received incompatible tensor with shape {tuple(value.shape)} when "
                    f"attempting to restore variable with shape {tuple(obj._data.shape)} and "
                    f"name {key}.", "no variable was changed")))
            if value.dtype != obj._data.dtype:
                raise hinted(ValueError(with_hint(
                    f"Received tensor of dtype {value.dtype} when attempting to restore "
                    f"variable of dtype {obj._data.dtype} and name {key}.",
                    "no variable was changed")))
            plan.append((obj, value))
            used.add(key)
            continue
        by_name = dict(node["children"])
        for name, child in _children(obj):
            cid = by_name.get(name)
            sub = f"{path}/{name}" if path else name
            if cid is None:
                unmatched.extend(_variable_paths(child, sub))
            else:
                todo.append((child, cid, sub))
    slot_plan: list[tuple[Any, Any, str, Any]] = []
    for opt, node in optimizers:
        for vi, slot, si in node["slots"]:
            var: Any = obj_of.get(vi)
            if var is None or not _is_variable(var) or not 0 <= si < len(nodes):
                continue
            key = nodes[si]["attributes"].get("VARIABLE_VALUE")
            if key is None:
                continue
            value = reader.get_tensor(key)
            if value.ndim and tuple(value.shape) != tuple(var._data.shape):
                raise hinted(ValueError(with_hint(
                    f"Received incompatible tensor with shape {tuple(value.shape)} when "
                    f"attempting to restore slot variable with shape "
                    f"{tuple(var._data.shape)} and name {key}.", "no variable was changed")))
            restored: Any = value.copy() if value.ndim else value.item()
            slot_plan.append((opt, var, slot, restored))
            used.add(key)
    for obj, value in plan:
        obj.assign(value)
    for opt, var, slot, value in slot_plan:
        opt._vars[id(var)] = var
        opt._slots.setdefault(id(var), {})[slot] = value
    keys = {k for k in reader.get_variable_to_shape_map() if k != OBJECT_GRAPH_KEY}
    return CheckpointLoadStatus(len(plan), sorted(keys - used), unmatched)


def _variable_paths(obj: Any, path: str) -> list[str]:
    if _is_variable(obj):
        return [path]
    out = []
    for name, child in _children(obj):
        out.extend(_variable_paths(child, f"{path}/{name}"))
    return out


# ---------------------------------------------------------------------------- the API
class Checkpoint:
    """``tf.train.Checkpoint(**objects)``: save and restore variables in TF's format.

    Parameters
    ----------
    root : trackable, optional
        An object whose children become the checkpoint's root children.
    **kwargs
        Named trackable objects (variables, ``tf.Module``, Keras layers, lists and
        dicts of them, other checkpoints).
    """

    def __init__(self, root: Any = None, **kwargs: Any) -> None:
        self._children: dict[str, Any] = {}
        self._save_counter: Any = None
        if root is not None:
            if not _trackable(root):
                raise _untrackable(root)
            for k, v in _children(root):
                self._children[k] = v
        for k, v in kwargs.items():
            if not _trackable(v):
                raise _untrackable(v)
            if k in self._children:
                raise ValueError(f"Cannot create a Checkpoint with the same key {k!r} as the "
                                 "root's child")
            self._children[k] = v

    def __getattr__(self, name: str) -> Any:
        kids = self.__dict__.get("_children", {})
        if name in kids:
            return kids[name]
        raise AttributeError(f"'Checkpoint' object has no attribute '{name}'")

    @property
    def save_counter(self) -> Any:
        """An int64 variable counting :meth:`save` calls (created on first use)."""
        if self._save_counter is None:
            from .variables import Variable

            self._save_counter = Variable(np.int64(0), trainable=False, name="save_counter")
        return self._save_counter

    def write(self, file_prefix: Any, options: Any = None) -> str:
        """Write the checkpoint at exactly ``file_prefix`` (no counter, no state file)."""
        prefix = os.fspath(file_prefix)
        graph, values = _graph(self)
        write_bundle(prefix, {k: np.asarray(v._data) for k, v in values.items()}, graph)
        return prefix

    def save(self, file_prefix: Any, options: Any = None) -> str:
        """Write ``file_prefix-N`` (N = ``save_counter`` + 1) and update the ``checkpoint``
        state file next to it."""
        counter = self.save_counter
        counter.assign_add(np.int64(1))
        path = self.write(f"{os.fspath(file_prefix)}-{int(counter.numpy())}")
        _update_state(os.path.dirname(path) or ".", path, [path], None, None)
        return path

    def read(self, save_path: Any, options: Any = None) -> CheckpointLoadStatus:
        """Restore from ``save_path`` (a prefix written by :meth:`write` or :meth:`save`)."""
        return _restore(self, os.fspath(save_path))

    def restore(self, save_path: Any, options: Any = None) -> CheckpointLoadStatus:
        """Restore from ``save_path``; ``None`` restores nothing (as in TensorFlow)."""
        if save_path is None:
            return CheckpointLoadStatus(0, [], [])
        return _restore(self, os.fspath(save_path))


def _untrackable(v: Any) -> ValueError:
    return hinted(ValueError(with_hint(
        f"`Checkpoint` was expecting a trackable object (an object derived from `Trackable`), "
        f"got {v}. If you believe this object should be trackable (i.e. it is part of the "
        "TensorFlow Python API and manages state), please open an issue.",
        "checkpoint variables, tf.Module objects, Keras layers, or lists/dicts of them")))


# ---------------------------------------------------------------------------- state files
def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _update_state(directory: str, latest: str, paths: list[str], timestamps: list[float] | None,
                  last_preserved: float | None) -> None:
    def rel(p: str) -> str:
        return os.path.relpath(p, directory) if os.path.isabs(p) == os.path.isabs(directory) \
            and os.path.dirname(p) == directory else p

    lines = [f"model_checkpoint_path: {_quote(rel(latest))}"]
    lines += [f"all_model_checkpoint_paths: {_quote(rel(p))}" for p in paths]
    lines += [f"all_model_checkpoint_timestamps: {t!r}" for t in timestamps or []]
    if last_preserved is not None:
        lines.append(f"last_preserved_timestamp: {last_preserved!r}")
    tmp = os.path.join(directory, "checkpoint.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, os.path.join(directory, "checkpoint"))


_LINE = re.compile(r'^\s*(\w+)\s*:\s*(?:"((?:[^"\\]|\\.)*)"|([-+0-9.eE]+|inf|nan))\s*$')


def _read_state(directory: str, latest_filename: str | None = None) -> dict[str, Any] | None:
    path = os.path.join(directory, latest_filename or "checkpoint")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read(1 << 20)
    state: dict[str, Any] = {"paths": [], "timestamps": []}
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        key, s, num = m.groups()
        value = (re.sub(r"\\(.)", r"\1", s) if s is not None else float(num))
        if key == "model_checkpoint_path":
            state["latest"] = value
        elif key == "all_model_checkpoint_paths":
            state["paths"].append(value)
        elif key == "all_model_checkpoint_timestamps":
            state["timestamps"].append(value)
        elif key == "last_preserved_timestamp":
            state["last_preserved"] = value
    return state


def _abs(directory: str, p: str) -> str:
    return p if os.path.isabs(p) else os.path.join(directory, p)


def latest_checkpoint(checkpoint_dir: Any, latest_filename: str | None = None) -> str | None:
    """``tf.train.latest_checkpoint``: the newest prefix recorded in the directory's
    ``checkpoint`` file, or ``None`` (no file, or its checkpoint is gone)."""
    d = os.fspath(checkpoint_dir)
    state = _read_state(d, latest_filename)
    if not state or not isinstance(state.get("latest"), str):
        return None
    path = _abs(d, state["latest"])
    return path if os.path.exists(path + ".index") else None


class CheckpointManager:
    """``tf.train.CheckpointManager``: numbered saves in a directory, keeping the newest
    ``max_to_keep`` (``None`` keeps all)."""

    def __init__(self, checkpoint: Checkpoint, directory: Any, max_to_keep: int | None,
                 keep_checkpoint_every_n_hours: float | None = None,
                 checkpoint_name: str = "ckpt", step_counter: Any = None,
                 checkpoint_interval: Any = None, init_fn: Any = None) -> None:
        if not isinstance(checkpoint, Checkpoint):
            raise hinted(TypeError(with_hint(f"Expected a tf.train.Checkpoint, got {checkpoint!r}",
                                      "pass tf.train.Checkpoint(model=..., optimizer=...)")))
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got "
                             f"{max_to_keep}.")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._init_fn = init_fn
        state = _read_state(self._directory)
        now = time.time()
        self._last_preserved = now
        self._kept: list[tuple[str, float]] = []
        if state:
            ts = state["timestamps"]
            for i, p in enumerate(state["paths"]):
                self._kept.append((_abs(self._directory, p), ts[i] if i < len(ts) else now))
            self._last_preserved = state.get("last_preserved", now)

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def checkpoint(self) -> Checkpoint:
        return self._checkpoint

    @property
    def checkpoints(self) -> list[str]:
        """The managed prefixes, oldest first."""
        return [p for p, _ in self._kept]

    @property
    def latest_checkpoint(self) -> str | None:
        return self._kept[-1][0] if self._kept else None

    def restore_or_initialize(self) -> str | None:
        if self.latest_checkpoint is not None:
            self._checkpoint.restore(self.latest_checkpoint)
            return self.latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None

    def save(self, checkpoint_number: Any = None, check_interval: bool = True,
             options: Any = None) -> str:
        """Write ``<directory>/ckpt-N`` and drop the oldest beyond ``max_to_keep``."""
        counter = self._checkpoint.save_counter
        if checkpoint_number is None and self._step_counter is not None:
            checkpoint_number = int(np.asarray(self._step_counter._data))
        counter.assign_add(np.int64(1))
        number = int(counter.numpy()) if checkpoint_number is None else int(checkpoint_number)
        prefix = f"{self._prefix}-{number}"
        path = self._checkpoint.write(prefix)
        now = time.time()
        self._kept = [(p, t) for p, t in self._kept if p != path] + [(path, now)]
        self._sweep()
        _update_state(self._directory, path, [p for p, _ in self._kept],
                      [t for _, t in self._kept], self._last_preserved)
        return path

    def _sweep(self) -> None:
        if self._max_to_keep is None:
            return
        while len(self._kept) > self._max_to_keep:
            path, ts = self._kept.pop(0)
            if self._keep_hours is not None and ts - self._last_preserved >= \
                    self._keep_hours * 3600.0:
                self._last_preserved = ts
                continue
            for f in _files_of(path):
                try:
                    os.remove(f)
                except FileNotFoundError:
                    pass


def _files_of(prefix: str) -> Iterator[str]:
    yield prefix + ".index"
    d, base = os.path.split(prefix)
    for name in os.listdir(d or "."):
        if name.startswith(base + ".data-"):
            yield os.path.join(d, name)
