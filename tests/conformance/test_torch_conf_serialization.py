"""Checkpoints and RNG states cross between tapegrad.torch and real PyTorch, both directions.

Files written by real ``torch.save`` load in tapegrad and files written by
tapegrad load in real ``torch.load`` (``weights_only=True``, the default):
tensors of every dtype both have, shared storages and views, module and
optimizer state dicts (training continues identically on the other side),
the legacy format; weights-only refusals carry the same message; RNG state
bytes are identical after the same seeds and draws.
"""

from __future__ import annotations

import io
import os
import pickle
from typing import Any

import numpy as np
import pytest

from tapegrad._core.errors import hint_of

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402

DTYPES = ["float16", "float32", "float64", "complex64", "complex128", "int8", "int16", "int32",
          "int64", "uint8", "uint16", "uint32", "uint64", "bool"]


def _array(name: str, shape: tuple[int, ...] = (3, 4)) -> np.ndarray:
    rng = np.random.default_rng(abs(hash(name)) % 1000)
    a = rng.normal(size=shape) * 40
    if name.startswith("complex"):
        a = a + 1j * rng.normal(size=shape)
    if name == "bool":
        return a > 0
    return a.astype(np.dtype(name))


def _to(fw: Any, obj: Any, legacy: bool) -> bytes:
    buf = io.BytesIO()
    fw.save(obj, buf, _use_new_zipfile_serialization=not legacy)
    return buf.getvalue()


def _from(fw: Any, data: bytes, **kw: Any) -> Any:
    return fw.load(io.BytesIO(data), **kw)


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
@pytest.mark.parametrize("direction", ["tapegrad_to_torch", "torch_to_tapegrad"])
def test_every_dtype_crosses(direction: str, legacy: bool) -> None:
    src, dst = (tt, real) if direction == "tapegrad_to_torch" else (real, tt)
    # PyTorch cannot read back its own legacy files of uint16/32/64 (no legacy storage class)
    names = [n for n in DTYPES if not (legacy and n in ("uint16", "uint32", "uint64"))]
    obj = {n: src.from_numpy(_array(n)) for n in names}
    obj["scalar"] = src.tensor(2.5, dtype=src.float64)
    obj["empty"] = src.zeros(0, 3)
    out = _from(dst, _to(src, obj, legacy))
    for n in names:
        assert str(out[n].dtype) == f"torch.{n}"
        np.testing.assert_array_equal(out[n].numpy(), _array(n))
    assert out["scalar"].item() == 2.5 and tuple(out["empty"].shape) == (0, 3)


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
@pytest.mark.parametrize("direction", ["tapegrad_to_torch", "torch_to_tapegrad"])
def test_shared_storages_and_views_stay_shared(direction: str, legacy: bool) -> None:
    src, dst = (tt, real) if direction == "tapegrad_to_torch" else (real, tt)
    base = src.arange(12, dtype=src.float32)
    obj = {"base": base, "view": base[2:10].view(2, 4), "t": base.view(3, 4).t(),
           "p": src.nn.Parameter(src.ones(2)), "rg": src.tensor([1.0], requires_grad=True),
           "size": src.Size([2, 3]), "dtype": src.float16}
    out = _from(dst, _to(src, obj, legacy))
    np.testing.assert_array_equal(out["t"].detach().numpy(), np.arange(12.0).reshape(3, 4).T)
    out["base"][3] = 100.0
    assert out["view"][0, 1].item() == 100.0 and out["t"][3, 0].item() == 100.0
    assert type(out["p"]).__name__ == "Parameter" and out["p"].requires_grad
    assert out["rg"].requires_grad and out["rg"].is_leaf
    assert list(out["size"]) == [2, 3] and str(out["dtype"]) == "torch.float16"


def _mlp(fw: Any) -> Any:
    fw.manual_seed(0)
    return fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.Tanh(), fw.nn.Linear(8, 3))


def _step(fw: Any, model: Any, opt: Any, x: np.ndarray) -> None:
    opt.zero_grad()
    ((model(fw.from_numpy(x)) - 1.0) ** 2).mean().backward()
    opt.step()


@pytest.mark.parametrize("opt_name", ["sgd_momentum", "adam", "adamw"])
@pytest.mark.parametrize("direction", ["tapegrad_to_torch", "torch_to_tapegrad"])
def test_training_resumes_on_the_other_side(direction: str, opt_name: str) -> None:
    src, dst = (tt, real) if direction == "tapegrad_to_torch" else (real, tt)

    def opt(fw: Any, m: Any) -> Any:
        return {"sgd_momentum": lambda: fw.optim.SGD(m.parameters(), lr=0.05, momentum=0.9),
                "adam": lambda: fw.optim.Adam(m.parameters(), lr=1e-2),
                "adamw": lambda: fw.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1),
                }[opt_name]()

    x = np.random.default_rng(0).normal(size=(16, 4)).astype(np.float32)
    m_src = _mlp(src)
    o_src = opt(src, m_src)
    for _ in range(5):
        _step(src, m_src, o_src, x)
    blob = _to(src, {"model": m_src.state_dict(), "optim": o_src.state_dict()}, False)
    ckpt = _from(dst, blob)
    m_dst = _mlp(dst)
    o_dst = opt(dst, m_dst)
    m_dst.load_state_dict(ckpt["model"])
    o_dst.load_state_dict(ckpt["optim"])
    for _ in range(5):
        _step(src, m_src, o_src, x)
        _step(dst, m_dst, o_dst, x)
    for a, b in zip(m_src.parameters(), m_dst.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


class _Printer:
    def __reduce__(self) -> Any:
        return (print, ("pwned",))


class _System:
    def __reduce__(self) -> Any:
        return (os.system, ("true",))


def _strip_hint(msg: str) -> str:
    return msg.split("\n[tapegrad hint]")[0]


@pytest.mark.parametrize("evil", [_Printer, _System, lambda: np.ones(2)], ids=["print",
                                                                          "system", "numpy"])
def test_weights_only_refusals_match_pytorch(evil: Any) -> None:
    blob = _to(real, {"w": real.ones(1), "x": evil()}, False)
    errors = []
    for fw in (real, tt):
        with pytest.raises(pickle.UnpicklingError) as info:
            _from(fw, blob)
        errors.append(info.value)
    assert str(errors[1]) == str(errors[0])  # the exact message; the hint is a note
    assert hint_of(errors[1]) is not None
    blob_tg = _to(tt, {"w": tt.ones(1), "x": evil()}, False)
    with pytest.raises(pickle.UnpicklingError) as info:
        _from(real, blob_tg)
    assert str(info.value) == str(errors[0])


def test_whole_module_pickles_need_weights_only_false_in_both() -> None:
    blob = _to(real, real.nn.Linear(2, 1), False)
    with pytest.raises(pickle.UnpicklingError):
        _from(tt, blob)
    m = _from(tt, blob, weights_only=False)  # PyTorch's class names map to tapegrad's
    assert type(m).__name__ == "Linear" and tuple(m.weight.shape) == (1, 2)


def test_rng_state_bytes_are_pytorchs() -> None:
    for seed in (0, 5, 2 ** 40 + 3):
        tt.manual_seed(seed)
        real.manual_seed(seed)
        for draw in (lambda fw: fw.rand(3), lambda fw: fw.randn(1, dtype=fw.float64),
                     lambda fw: fw.rand(700), lambda fw: fw.randint(0, 10, (5,))):
            draw(tt)
            draw(real)
            np.testing.assert_array_equal(tt.get_rng_state().numpy(),
                                          real.get_rng_state().numpy())
    state = real.get_rng_state()
    expected = real.randn(9, dtype=real.float64).numpy()
    tt.set_rng_state(tt.from_numpy(state.numpy().copy()))
    np.testing.assert_array_equal(tt.randn(9, dtype=tt.float64).numpy(), expected)
    np.testing.assert_array_equal(tt.Generator().get_state().numpy(),
                                  real.Generator().get_state().numpy())
    for bad in (real.zeros(10, dtype=real.uint8), real.zeros(5056, dtype=real.uint8)):
        msgs = []
        for fw in (real, tt):
            with pytest.raises(RuntimeError) as info:
                fw.set_rng_state(fw.from_numpy(bad.numpy().copy()))
            msgs.append(str(info.value))
        assert _strip_hint(msgs[1]) == msgs[0]
