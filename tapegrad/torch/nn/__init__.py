"""``torch.nn``: modules, ``Parameter``, ``functional``, ``init``.

>>> import tapegrad.torch as torch
>>> torch.nn.MSELoss()(torch.tensor([1.0, 3.0]), torch.tensor([0.0, 0.0]))
tensor(5.)
"""

from __future__ import annotations

from . import functional, init, parallel, utils
from .attention import (  # noqa: F401
    MultiheadAttention,
    NonDynamicallyQuantizableLinear,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

# conv nets (issue 12): conv, pooling, normalization, dropout family, embedding, padding
from .conv import *  # noqa: E402,F403
from .dropout import *  # noqa: E402,F403
from .modules import *  # noqa: F403
from .modules import Module
from .modules_more import *  # noqa: E402,F403
from .normalization import *  # noqa: E402,F403
from .padding import *  # noqa: E402,F403
from .parameter import Buffer, Parameter
from .pooling import *  # noqa: E402,F403
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: F401
from .sparse import *  # noqa: E402,F403

__all__ = ["functional", "init", "parallel", "utils", "Parameter", "Buffer", "Module"] + [
    n for n in dir() if n[:1].isupper() and n not in ("Parameter", "Buffer", "Module")
]
