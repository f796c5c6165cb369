"""Run one small program on real PyTorch and on tapegrad.torch, and compare what it returns.

A *program* is a function ``prog(torch) -> result``; the result may be a
nested structure of tensors, numbers, strings and booleans.  Exceptions and
warnings raised by the program are part of its result: the exception type
and message (tapegrad's hint line stripped) must match too.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

HINT = "\n[tapegrad hint]"


def strip_hint(msg: str) -> str:
    """An exception's or warning's message without the tapegrad hint.

    Exceptions carry the hint as a note (``str(e)`` is PyTorch's message
    already); warnings keep it on a line of their own.
    """
    i = msg.find(HINT)
    return msg if i < 0 else msg[:i]


def plain(x: Any) -> Any:
    """A framework-independent description of a program result."""
    if hasattr(x, "detach") and hasattr(x, "dtype") and hasattr(x, "shape") \
            and not isinstance(x, np.ndarray):
        gf = getattr(x, "grad_fn", None)
        arr = np.array(x.detach().numpy(), copy=True)
        return ("tensor", str(x.dtype), tuple(x.shape), arr, bool(x.requires_grad),
                None if gf is None else type(gf).__name__)
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(plain(v) for v in x) if isinstance(x, list) else tuple(plain(v) for v in x)
    if hasattr(x, "_fields") or type(x).__name__ in ("max", "min", "sort", "topk"):
        return tuple(plain(v) for v in x)
    if isinstance(x, BaseException):
        return ("raises", type(x).__name__, str(x))
    if isinstance(x, np.ndarray):
        return ("array", str(x.dtype), x.shape, x.copy())
    if isinstance(x, np.generic):
        return x.item()
    return x


def run(prog: Callable[[Any], Any], torch_mod: Any) -> Any:
    """``plain(prog(torch_mod))``, with an exception or warnings recorded in the result."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            out = plain(prog(torch_mod))
        except Exception as e:  # noqa: BLE001 - the exception is the result
            out = ("raises", type(e).__name__, str(e))
    ws = [(c.category.__name__,
           strip_hint(str(c.message)).split(" (Triggered internally")[0].split("\n")[0])
          for c in w if not issubclass(c.category, DeprecationWarning)
          and "Anomaly Detection" not in str(c.message)]
    if ws:
        return {"result": out, "warnings": ws}
    return out


def assert_same(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-6, path: str = "") -> None:
    """Assert that two ``plain`` results agree (tensors to tolerance, the rest exactly)."""
    if isinstance(a, tuple) and a and a[0] == "tensor":
        assert isinstance(b, tuple) and b and b[0] == "tensor", f"{path}: {a!r} vs {b!r}"
        _, da, sa, va, ra, ga = a
        _, db, sb, vb, rb, gb = b
        assert da == db, f"{path}: dtype {da} vs {db}"
        assert sa == sb, f"{path}: shape {sa} vs {sb}"
        assert ra == rb, f"{path}: requires_grad {ra} vs {rb}"
        assert ga == gb, f"{path}: grad_fn {ga} vs {gb}"
        if va.dtype.kind in "fc":
            tol = max(rtol, 1e-3) if va.dtype == np.float16 else rtol
            np.testing.assert_allclose(vb, va, rtol=tol, atol=atol, equal_nan=True,
                                       err_msg=path)
        else:
            np.testing.assert_array_equal(vb, va, err_msg=path)
        return
    if isinstance(a, tuple) and a and a[0] == "raises":
        assert b == a, f"{path}: expected {a!r}, got {b!r}"
        return
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{path}: {a!r} vs {b!r}"
        for k in a:
            assert_same(a[k], b[k], rtol, atol, f"{path}.{k}")
        return
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{path}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, rtol, atol, f"{path}[{i}]")
        return
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a):
            assert math.isnan(b), f"{path}: {a} vs {b}"
        else:
            assert math.isclose(a, b, rel_tol=rtol, abs_tol=atol), f"{path}: {a} vs {b}"
        return
    assert type(a) is type(b) and a == b, f"{path}: {a!r} vs {b!r}"


def compare(prog: Callable[[Any], Any], real: Any, ours: Any, rtol: float = 1e-5,
            atol: float = 1e-6) -> None:
    """Run ``prog`` on both and assert the results agree."""
    assert_same(run(prog, real), run(prog, ours), rtol, atol)
