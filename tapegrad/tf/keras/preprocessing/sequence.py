"""``keras.preprocessing.sequence``: ``pad_sequences`` (Keras 3's NumPy code and messages).

>>> from tapegrad.tf.keras.preprocessing.sequence import pad_sequences
>>> pad_sequences([[1, 2, 3], [4]], maxlen=2)
array([[2, 3],
       [0, 4]], dtype=int32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...._core.errors import hinted, with_hint

__all__ = ["pad_sequences"]


def _err(msg: str, hint: str) -> ValueError:
    return hinted(ValueError(with_hint(msg, hint)))


def pad_sequences(sequences: Any, maxlen: int | None = None, dtype: Any = "int32",
                  padding: str = "pre", truncating: str = "pre", value: Any = 0.0
                  ) -> np.ndarray:
    """Pad (or truncate) a list of sequences to one length: a ``(n, maxlen, ...)`` array."""
    if not hasattr(sequences, "__len__"):
        raise _err("`sequences` must be iterable.", "pass a list of sequences")
    num_samples = len(sequences)
    lengths = []
    sample_shape: tuple[int, ...] = ()
    flag = True
    for x in sequences:
        try:
            lengths.append(len(x))
            if flag and len(x):
                sample_shape = np.asarray(x).shape[1:]
                flag = False
        except TypeError as e:
            raise _err("`sequences` must be a list of iterables. "
                       f"Found non-iterable: {str(x)}", "each sequence is a list") from e
    if maxlen is None:
        maxlen = int(np.max(lengths))
    is_dtype_str = np.issubdtype(dtype, np.str_) or np.issubdtype(dtype, np.bytes_)
    if isinstance(value, str) and dtype is not object and not is_dtype_str:
        raise _err(f"`dtype` {dtype} is not compatible with `value`'s type: "
                   f"{type(value)}\nYou should set `dtype=object` for variable length "
                   "strings.", "pass dtype=object")
    out = np.full((num_samples, maxlen) + sample_shape, value, dtype=dtype)
    for idx, s in enumerate(sequences):
        if not len(s):
            continue
        if truncating == "pre":
            trunc = s[-maxlen:]
        elif truncating == "post":
            trunc = s[:maxlen]
        else:
            raise _err(f'Truncating type "{truncating}" not understood', "'pre' or 'post'")
        trunc = np.asarray(trunc, dtype=dtype)
        if trunc.shape[1:] != sample_shape:
            raise _err(f"Shape of sample {trunc.shape[1:]} of sequence at position {idx} is "
                       f"different from expected shape {sample_shape}",
                       "every element must have the same shape")
        if padding == "post":
            out[idx, :len(trunc)] = trunc
        elif padding == "pre":
            out[idx, -len(trunc):] = trunc
        else:
            raise _err(f'Padding type "{padding}" not understood', "'pre' or 'post'")
    return out
