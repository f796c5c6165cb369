"""``torch.optim``: every optimizer PyTorch ships for the CPU (update rules from
:mod:`tapegrad.optim`) and ``lr_scheduler``.

>>> import tapegrad.torch as torch
>>> torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=-0.1)
Traceback (most recent call last):
...
ValueError: Invalid learning rate: -0.1
[tapegrad hint] use lr >= 0
"""

from __future__ import annotations

from . import lr_scheduler, swa_utils
from .adam import Adam, AdamW
from .adaptive import (
    ASGD,
    Adadelta,
    Adafactor,
    Adagrad,
    Adamax,
    Muon,
    NAdam,
    RAdam,
    RMSprop,
    Rprop,
    SparseAdam,
)
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "NAdam",
           "RAdam", "RMSprop", "ASGD", "Rprop", "LBFGS", "Adafactor", "Muon",
           "SparseAdam", "lr_scheduler", "swa_utils"]
