"""torch.save / torch.load (PyTorch's zip and legacy formats, weights_only) and RNG state bytes."""

from __future__ import annotations

import io
import os
import pickle
import struct
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch
from tapegrad._core.errors import hint_of
from tapegrad.torch import serialization

DTYPES = [torch.float16, torch.float32, torch.float64, torch.complex64, torch.complex128,
          torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.uint16,
          torch.uint32, torch.uint64, torch.bool]


def _roundtrip(obj: Any, **save_kw: Any) -> Any:
    buf = io.BytesIO()
    torch.save(obj, buf, **save_kw)
    buf.seek(0)
    return torch.load(buf)


def _sample(dt: Any, shape: tuple[int, ...] = (2, 3)) -> Any:
    rng = np.random.default_rng(0)
    a = rng.normal(size=shape) * 50
    if dt.is_complex:
        a = a + 1j * rng.normal(size=shape)
    if dt == torch.bool:
        a = a > 0
    return torch.from_numpy(np.ascontiguousarray(a.astype(dt.np)))


@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_every_dtype_round_trips(dt: Any, legacy: bool) -> None:
    x = _sample(dt)
    y = _roundtrip({"x": x, "scalar": x[0, 0], "empty": x[:0]},
                   _use_new_zipfile_serialization=not legacy)
    assert y["x"].dtype == dt and y["x"].shape == x.shape
    np.testing.assert_array_equal(y["x"].numpy(), x.numpy())
    assert y["scalar"].shape == () and y["scalar"].item() == x[0, 0].item()
    assert y["empty"].shape == (0, 3) and y["empty"].dtype == dt


@pytest.mark.parametrize("legacy", [False, True])
def test_views_share_one_storage_and_come_back_sharing(legacy: bool) -> None:
    base = torch.arange(12.0)
    obj = {"base": base, "view": base[2:10].view(2, 4), "t": base.view(3, 4).t(),
           "again": base}
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=not legacy)
    if not legacy:
        names = zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
        assert [n for n in names if "/data/" in n] == ["archive/data/0"]  # one storage
    buf.seek(0)
    y = torch.load(buf)
    assert y["again"] is y["base"]  # the same tensor twice is one object, as in PyTorch
    np.testing.assert_array_equal(y["t"].numpy(), base.view(3, 4).t().numpy())
    y["base"][3] = 100.0
    assert y["view"][0, 1].item() == 100.0 and y["t"][3, 0].item() == 100.0


def test_negative_strides_and_noncontiguous_are_copied_faithfully() -> None:
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = torch.from_numpy(a[::-1, ::2])  # numpy's negative strides: PyTorch has none
    y = _roundtrip(x)
    np.testing.assert_array_equal(y.numpy(), a[::-1, ::2])


def test_parameters_requires_grad_and_archive_layout(tmp_path: Path) -> None:
    p = torch.nn.Parameter(torch.ones(2))
    g = torch.tensor([1.0, 2.0], requires_grad=True)
    path = tmp_path / "ckpt.pt"
    torch.save({"p": p, "g": g, "i": torch.tensor([1, 2])}, path)
    z = zipfile.ZipFile(path)
    names = z.namelist()
    assert names[0] == "ckpt/data.pkl"
    assert z.read("ckpt/byteorder") == b"little" and z.read("ckpt/version") == b"3\n"
    with open(path, "rb") as fh:  # storage records start at 64-byte boundaries
        raw = fh.read()
    for info in z.infolist():
        n, e = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
        assert (info.header_offset + 30 + n + e) % 64 == 0
    y = torch.load(path)
    assert type(y["p"]) is torch.nn.Parameter and y["p"].requires_grad
    assert y["g"].requires_grad and y["g"].is_leaf and not y["i"].requires_grad
    with open(path, "rb") as fh:
        assert torch.load(fh)["p"].tolist() == [1.0, 1.0]


def test_module_state_dict_round_trip() -> None:
    torch.manual_seed(0)
    a = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    torch.manual_seed(1)
    b = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    sd = _roundtrip(a.state_dict())
    assert isinstance(sd, OrderedDict) and list(sd) == list(a.state_dict())
    b.load_state_dict(sd)
    x = torch.randn(5, 3)
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_optimizer_state_dict_round_trip_continues_identically(opt: str) -> None:
    def make() -> tuple[Any, Any]:
        torch.manual_seed(0)
        m = torch.nn.Linear(3, 2)
        o = (torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) if opt == "sgd"
             else torch.optim.Adam(m.parameters(), lr=0.01))
        return m, o

    def step(m: Any, o: Any) -> None:
        o.zero_grad()
        (m(torch.ones(4, 3)) ** 2).sum().backward()
        o.step()

    m1, o1 = make()
    for _ in range(3):
        step(m1, o1)
    m2, o2 = make()
    m2.load_state_dict(_roundtrip(m1.state_dict()))
    o2.load_state_dict(_roundtrip(o1.state_dict()))
    for _ in range(3):
        step(m1, o1)
        step(m2, o2)
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_array_equal(p1.detach().numpy(), p2.detach().numpy())


def test_primitive_values_and_containers() -> None:
    obj = {"i": 3, "big": 2 ** 70, "f": 0.5, "c": 1 + 2j, "s": "é", "b": b"\x00\xff",
           "ba": bytearray(b"ab"), "set": {1, 2}, "tuple": (1, (2,)), "none": None,
           "dtype": torch.float64, "size": torch.Size([2, 3]), "dev": torch.device("cpu"),
           "list": [torch.zeros(1), True]}
    y = _roundtrip(obj)
    assert y["i"] == 3 and y["big"] == 2 ** 70 and y["c"] == 1 + 2j and y["s"] == "é"
    assert y["b"] == b"\x00\xff" and y["ba"] == bytearray(b"ab") and y["set"] == {1, 2}
    assert y["dtype"] is torch.float64 and repr(y["size"]) == "torch.Size([2, 3])"
    assert y["dev"] == torch.device("cpu") and y["list"][1] is True


# ----------------------------------------------------------------------------- safety
class _Effect:
    """Pickles as a call of os.makedirs: loading it runs code."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> Any:
        return (os.makedirs, (self.path,))


class _Printer:
    def __reduce__(self) -> Any:
        return (print, ("pwned",))


class Point:
    """A plain class a user may allowlist."""

    def __init__(self, x: int = 0) -> None:
        self.x = x


def test_weights_only_refuses_code_and_runs_none_of_it(tmp_path: Path) -> None:
    target = tmp_path / "pwned"
    buf = io.BytesIO()
    torch.save({"w": torch.ones(1), "evil": _Effect(str(target))}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError) as info:
        torch.load(buf)
    assert not target.exists()
    msg = str(info.value)
    assert msg.startswith("Weights only load failed.")
    assert "Trying to load unsupported GLOBAL os.makedirs whose module os is blocked." in msg
    assert hint_of(info.value) is not None  # the hint is a note
    buf.seek(0)
    torch.load(buf, weights_only=False)  # the user's explicit choice: it runs
    assert target.exists()


def test_unsupported_global_message_and_safe_globals() -> None:
    buf = io.BytesIO()
    torch.save([_Printer()], buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError,
                       match=r"Unsupported global: GLOBAL print was not an allowed global by "
                             r"default. Please use `torch.serialization.add_safe_globals\(\[print"):
        torch.load(buf)
    data = io.BytesIO()
    torch.save({"p": Point(3)}, data)
    for _ in range(2):
        data.seek(0)
        with pytest.raises(pickle.UnpicklingError, match="Point was not an allowed global"):
            torch.load(data)
        data.seek(0)
        with torch.serialization.safe_globals([Point]):
            p = torch.load(data)["p"]
        assert type(p) is Point and p.x == 3
    assert Point not in serialization.get_safe_globals()
    serialization.add_safe_globals([Point])
    try:
        data.seek(0)
        assert torch.load(data)["p"].x == 3
    finally:
        serialization.clear_safe_globals()
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit "
                                           "pickle_module is specified"):
        torch.load(io.BytesIO(data.getvalue()), pickle_module=pickle, weights_only=True)


def _zip_with_pickle(pkl: bytes, storages: dict[str, bytes] | None = None) -> io.BytesIO:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("archive/data.pkl", pkl)
        zf.writestr("archive/byteorder", b"little")
        for k, v in (storages or {}).items():
            zf.writestr(f"archive/data/{k}", v)
        zf.writestr("archive/version", b"3\n")
    out.seek(0)
    return out


def _tensor_pickle(offset: int, size: tuple[int, ...], stride: tuple[int, ...],
                   numel: int = 4) -> bytes:
    def ints(t: tuple[int, ...]) -> bytes:
        return b"(" + b"".join(pickle.BININT + struct.pack("<i", i) for i in t) + b"t"

    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(" + b"(X\x07\x00\x00\x00storage"
            b"ctorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpu"
            + pickle.BININT + struct.pack("<i", numel) + b"tQ"
            + pickle.BININT + struct.pack("<i", offset) + ints(size) + ints(stride)
            + b"\x89ccollections\nOrderedDict\n)RtR.")


def test_hostile_tensor_geometry_cannot_read_outside_its_storage() -> None:
    good = _zip_with_pickle(_tensor_pickle(0, (2, 2), (2, 1)), {"0": bytes(16)})
    assert torch.load(good).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    for off, size, stride in [(0, (3, 2), (2, 1)), (3, 2 * (2,), (2, 1)), (0, (2,), (100,)),
                              (0, (1 << 30,), (1,))]:
        f = _zip_with_pickle(_tensor_pickle(off, size, stride), {"0": bytes(16)})
        with pytest.raises(RuntimeError, match="out of bounds for storage of size 16"):
            torch.load(f)
    f = _zip_with_pickle(_tensor_pickle(0, (-1,), (1,)), {"0": bytes(16)})
    with pytest.raises(RuntimeError, match="negative dimension"):
        torch.load(f)
    f = _zip_with_pickle(_tensor_pickle(0, (2,), (1,), numel=100), {"0": bytes(16)})
    with pytest.raises(RuntimeError, match="truncated or corrupt"):
        torch.load(f)


@pytest.mark.filterwarnings("ignore:Detected pickle protocol 4")
@pytest.mark.parametrize("payload", [
    b"\x80\x02cbuiltins\neval\nX\x01\x00\x00\x001\x85R.",          # GLOBAL of a builtin
    b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94.",  # protocol-4 opcodes
    b"\x80\x02(\x85R.",                                              # REDUCE on junk
    b"\x80\x02h\x05.",                                               # BINGET of nothing
    b"\x80\x02]q\x00(K\x01K\x02tb.",                                 # BUILD on a list
    b"\x80\x02X\xff\xff\xff\x7f",                                    # truncated string
])
def test_malformed_or_hostile_pickles_give_unpickling_error(payload: bytes) -> None:
    with pytest.raises((pickle.UnpicklingError, EOFError)):
        torch.load(_zip_with_pickle(payload))


def test_not_a_checkpoint_and_truncated_files() -> None:
    with pytest.raises(RuntimeError, match="Invalid magic number; corrupt file"):
        torch.load(io.BytesIO(b"hello world, not a checkpoint"))
    buf = io.BytesIO()
    torch.save(torch.ones(100), buf)
    with pytest.raises(RuntimeError, match="PytorchStreamReader failed"):
        torch.load(io.BytesIO(buf.getvalue()[:-30]))
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap"):
        torch.load(io.BytesIO(buf.getvalue()), mmap=True)


def test_map_location_and_mmap(tmp_path: Path) -> None:
    path = tmp_path / "m.pt"
    torch.save({"w": torch.arange(4.0)}, path)
    assert torch.load(path, map_location="cpu")["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert torch.load(path, map_location={"cpu": "cpu"})["w"].shape == (4,)
    seen = []
    w = torch.load(path, map_location=lambda s, loc: seen.append(loc) or s)["w"]
    assert seen == ["cpu"] and w.tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        torch.load(path, map_location="cuda:0")
    m = torch.load(path, mmap=True)["w"]
    m[0] = 9.0  # copy-on-write: the file keeps its bytes
    assert torch.load(path)["w"][0].item() == 0.0
    legacy = tmp_path / "legacy.pt"
    torch.save(torch.ones(1), legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="mmap can only be used with files saved with"):
        torch.load(str(legacy), mmap=True)


def test_weights_only_false_loads_whole_modules() -> None:
    m = torch.nn.Linear(2, 1)
    buf = io.BytesIO()
    torch.save(m, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        torch.load(buf)
    buf.seek(0)
    m2 = torch.load(buf, weights_only=False)
    np.testing.assert_array_equal(m2.weight.detach().numpy(), m.weight.detach().numpy())


# ----------------------------------------------------------------------------- RNG state
def test_rng_state_layout_and_round_trip() -> None:
    torch.manual_seed(7)
    s = torch.get_rng_state()
    assert s.dtype == torch.uint8 and s.shape == (5056,)
    raw = s.numpy().tobytes()
    assert struct.unpack_from("<QiiQ", raw, 0) == (7, 1, 1, 0)  # seed, left, seeded, next
    torch.rand(3)
    assert struct.unpack_from("<QiiQ", torch.get_rng_state().numpy().tobytes(), 0) == (7, 622, 1, 3)
    torch.randn(1, dtype=torch.float64)  # leaves the second Box-Muller sample cached
    s = torch.get_rng_state()
    assert struct.unpack_from("<i", s.numpy().tobytes(), 5040) == (1,)
    a = torch.randn(5, dtype=torch.float64)
    torch.set_rng_state(s)
    np.testing.assert_array_equal(torch.randn(5, dtype=torch.float64).numpy(), a.numpy())
    g = torch.Generator().manual_seed(3)
    st = g.get_state()
    x = torch.rand(700, generator=g)
    assert g.set_state(st) is g
    np.testing.assert_array_equal(torch.rand(700, generator=g).numpy(), x.numpy())


def test_bad_rng_states_raise_and_change_nothing() -> None:
    g = torch.Generator().manual_seed(11)
    before = g.get_state().numpy().copy()
    payload = np.frombuffer(pickle.dumps(_Printer()), dtype=np.uint8).copy()
    cases = [
        ([1, 2], TypeError, "expected a torch.ByteTensor, but got list"),
        (torch.zeros(5056), TypeError, "RNG state must be a torch.ByteTensor"),
        (torch.from_numpy(payload), RuntimeError,
         "Expected a CPUGeneratorImplState of size 5056 but found the input RNG state size"),
        (torch.zeros(5056, dtype=torch.uint8), RuntimeError, "Invalid mt19937 state"),
        (torch.from_numpy(np.zeros(10112, np.uint8)[::2]), RuntimeError,
         "RNG state must be contiguous"),
    ]
    bad_left = before.copy()
    bad_left[8:12] = np.frombuffer(struct.pack("<i", 10), np.uint8)  # left=10 with next=0
    cases.append((torch.from_numpy(bad_left), RuntimeError, "Invalid mt19937 state"))
    for state, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            g.set_state(state)
        np.testing.assert_array_equal(g.get_state().numpy(), before)
    with pytest.raises(TypeError, match="expected a torch.ByteTensor, but got NoneType"):
        torch.set_rng_state(None)
