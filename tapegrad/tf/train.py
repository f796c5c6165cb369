"""``tf.train``: checkpoints in TensorFlow's format (see :mod:`tapegrad.tf.checkpoint`)."""

from __future__ import annotations

from .checkpoint import (
    Checkpoint,
    CheckpointManager,
    CheckpointReader,
    latest_checkpoint,
    list_variables,
    load_checkpoint,
)

__all__ = ["Checkpoint", "CheckpointManager", "CheckpointReader", "latest_checkpoint",
           "list_variables", "load_checkpoint"]
