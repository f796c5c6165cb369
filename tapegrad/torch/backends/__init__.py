"""``torch.backends``: what the computing backends report.

tapegrad computes with NumPy on the CPU, so every accelerator backend (CUDA,
cuDNN, MPS) reports that it is neither built nor available, and the CPU
libraries PyTorch links (MKL, oneDNN, OpenMP) report that tapegrad does not use
them.  The flags users set (``cudnn.benchmark``, ``cudnn.deterministic``,
``cuda.matmul.allow_tf32``) are accepted and kept, with no effect.

>>> import tapegrad.torch as torch
>>> torch.backends.cuda.is_built(), torch.backends.mps.is_available()
(False, False)
>>> torch.backends.cudnn.is_available(), torch.backends.cudnn.benchmark
(False, False)
"""

from __future__ import annotations

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]
