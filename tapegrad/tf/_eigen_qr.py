"""TensorFlow's CPU QR, bit for bit: the emulation lives in the core (:mod:`tapegrad.ops._eigen_qr`,
which ``ops.linalg_ext.qr_op`` runs for TensorFlow's ``tf.linalg.qr``); re-exported here for
the Keras initializers."""

from ..ops._eigen_qr import BLOCK_SIZE, MAX_WORK, eigen_qr, eigen_qr_f32, emulated

__all__ = ["eigen_qr", "eigen_qr_f32", "emulated", "BLOCK_SIZE", "MAX_WORK"]
