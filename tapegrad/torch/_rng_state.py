"""PyTorch's byte layout of the CPU generator state (``torch.get_rng_state()``).

``CPUGeneratorImplState`` is a 5056-byte C struct, little-endian on the
machines PyTorch ships for::

    offset  type        field
    0       uint64      the_initial_seed
    8       int32       left            (draws before the MT19937 state is regenerated, 1..624)
    12      int32       seeded          (1)
    16      uint64      next            (index of the next state word, 0..624)
    24      uint64[624] state           (the 624 MT19937 words, one per uint64)
    5016    double      normal_x        (0, unused)
    5024    double      normal_y        (the cached second Box-Muller double)
    5032    double      normal_rho      (0, unused)
    5040    int32       normal_is_valid (+ 4 bytes padding)
    5048    float       next_float_normal_sample
    5052    bool        is_next_float_normal_sample_valid (+ 3 bytes padding)

The bytes are parsed field by field with :mod:`struct` and NumPy; nothing in
them is ever unpickled or executed.  NumPy's MT19937 keeps one position
``pos`` (``624`` = regenerate before the next draw) where PyTorch keeps
``left`` and ``next``; for every state PyTorch's own generator produces,
``left == 625 - next`` (or ``left == 1``), and the two are the same stream.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint

N = 624
SIZE = 5056
_HEAD = struct.Struct("<QiiQ")
_NORMAL = struct.Struct("<dddi")
_FLOAT = struct.Struct("<f?")


def pack(seed: int, key: np.ndarray, pos: int, fresh: bool, next_double: float | None,
         next_float: float | None) -> np.ndarray:
    """The 5056 state bytes PyTorch's generator would report for this MT19937 state."""
    buf = bytearray(SIZE)
    if pos >= N:
        left, nxt = 1, (0 if fresh else N)
    else:
        left, nxt = N + 1 - pos, pos
    _HEAD.pack_into(buf, 0, seed & 0xFFFFFFFFFFFFFFFF, left, 1, nxt)
    buf[24:24 + 8 * N] = np.asarray(key, dtype=np.uint32).astype("<u8").tobytes()
    _NORMAL.pack_into(buf, 5016, 0.0, 0.0 if next_double is None else next_double, 0.0,
                      int(next_double is not None))
    _FLOAT.pack_into(buf, 5048, 0.0 if next_float is None else next_float,
                     next_float is not None)
    return np.frombuffer(bytes(buf), dtype=np.uint8).copy()


def unpack(new_state: Any) -> tuple[int, np.ndarray, int, bool, float | None, float | None]:
    """Validate and parse PyTorch's state bytes:
    ``(seed, key, pos, fresh, next_double, next_float)`` (``fresh``: ``left == 1, next == 0``).

    Raises PyTorch's errors: ``TypeError`` for anything but a uint8 tensor,
    ``RuntimeError`` for a non-contiguous one, a wrong size, or an invalid
    MT19937 state.
    """
    from .._core.tensor import Tensor

    if not isinstance(new_state, Tensor):
        raise hinted(TypeError(with_hint(
            f"expected a torch.ByteTensor, but got {type(new_state).__name__}",
            "pass the tensor that torch.get_rng_state() / Generator.get_state() returned")))
    arr = new_state._data
    if arr.dtype != np.uint8:
        raise hinted(TypeError(with_hint("RNG state must be a torch.ByteTensor",
                                  f"got a tensor of dtype {arr.dtype}; the state is uint8 bytes")))
    if not arr.flags.c_contiguous:
        raise hinted(RuntimeError(with_hint("RNG state must be contiguous", "pass state.contiguous()")))
    if arr.size != SIZE:
        raise hinted(RuntimeError(with_hint(
            f"Expected a CPUGeneratorImplState of size {SIZE} but found the input RNG state "
            f"size to be {arr.size}",
            "pass the tensor that torch.get_rng_state() / Generator.get_state() returned")))
    raw = arr.tobytes()
    seed, left, seeded, nxt = _HEAD.unpack_from(raw, 0)
    if seeded != 1 or not 0 < left <= N or not 0 <= nxt <= N:
        raise hinted(RuntimeError(with_hint("Invalid mt19937 state",
                                     f"left={left}, seeded={seeded}, next={nxt} are out of range")))
    if left == 1:
        pos = N
    elif left + nxt == N + 1:
        pos = nxt
    else:
        raise hinted(RuntimeError(with_hint(
            "Invalid mt19937 state",
            f"left={left} with next={nxt} is a state PyTorch's generator never produces "
            "(it keeps left == 625 - next); tapegrad cannot reproduce its stream")))
    # PyTorch copies the 64-bit words into 32-bit ones (the high halves are dropped)
    key = (np.frombuffer(raw, dtype="<u8", count=N, offset=24) & np.uint64(0xFFFFFFFF)
           ).astype(np.uint32)
    _, normal_y, _, normal_valid = _NORMAL.unpack_from(raw, 5016)
    next_float, float_valid = _FLOAT.unpack_from(raw, 5048)
    return (int(seed), key, pos, left == 1 and nxt == 0, float(normal_y) if normal_valid else None,
            float(next_float) if float_valid else None)
