"""Shared optimizer core: update rules used by both front-ends.

>>> import numpy as np
>>> from tapegrad.optim import adam_update
>>> p = np.zeros(2); st: dict = {}
>>> adam_update(p, np.ones(2), st, lr=0.01)
>>> st["step"]
1
"""

from __future__ import annotations

from .adaptive import (
    adadelta_update,
    adafactor_update,
    adagrad_update,
    adamax_update,
    asgd_update,
    nadam_update,
    radam_update,
    rmsprop_update,
    rprop_update,
)
from .lbfgs import lbfgs_step
from .muon import muon_update
from .rules import adam_update, sgd_update

__all__ = ["sgd_update", "adam_update", "adagrad_update", "adadelta_update", "adamax_update",
           "nadam_update", "radam_update", "rmsprop_update", "asgd_update", "rprop_update",
           "adafactor_update", "lbfgs_step", "muon_update"]
