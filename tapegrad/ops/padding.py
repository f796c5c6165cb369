"""Padding in every mode: constant, reflect, symmetric, replicate (edge), circular (wrap).

Non-constant modes are one gather: each axis gets the source index of every
padded position (NumPy's ``pad`` on an index range), and one ``getitem`` with
those index grids reads the input.  The gather's VJP scatter-adds the
cotangent back (a reflected pixel receives the gradient of each of its
copies, as in both frameworks), so the rules are getitem's and every
derivative order works.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from ._raw import data
from .shape import getitem, pad

__all__ = ["pad_mode", "MODES"]

# tapegrad's mode names -> NumPy's
MODES = {"constant": "constant", "reflect": "reflect", "symmetric": "symmetric",
         "replicate": "edge", "edge": "edge", "circular": "wrap", "wrap": "wrap"}


def pad_mode(x: Any, widths: Any, mode: str = "constant", value: float = 0.0) -> Tensor:
    """Pad ``x`` by ``widths`` (one ``(before, after)`` pair per axis) in ``mode``.

    Examples
    --------
    >>> import numpy as np, tapegrad as tg
    >>> from tapegrad.ops.padding import pad_mode
    >>> pad_mode(tg.tensor(np.array([1.0, 2.0, 3.0])), [(2, 1)], "reflect")._data.tolist()
    [3.0, 2.0, 1.0, 2.0, 3.0, 2.0]
    """
    np_mode = MODES.get(mode)
    if np_mode is None:
        raise hinted(ValueError(with_hint(f"unknown padding mode {mode!r}",
                                   f"use one of {sorted(MODES)}")))
    shape = data(x).shape
    pw = [(int(a), int(b)) for a, b in widths]
    if len(pw) != len(shape):
        raise hinted(ValueError(with_hint(
            f"pad_mode: {len(pw)} (before, after) pairs for an input of {len(shape)} dims",
            "give one pair per axis")))
    if np_mode == "constant":
        return pad(x, pw, constant_values=value)
    if all(a == 0 and b == 0 for a, b in pw):
        return x
    idx = [np.pad(np.arange(n), (a, b), mode=np_mode)  # type: ignore[call-overload]
           for n, (a, b) in zip(shape, pw)]
    return getitem(x, np.ix_(*idx))
