"""``torch.backends.cuda``: not built (tapegrad runs on the CPU)."""

from __future__ import annotations


class _Matmul:
    """``torch.backends.cuda.matmul``: flags accepted and kept, without effect."""

    allow_tf32: bool = False
    allow_fp16_reduced_precision_reduction: bool = True
    allow_bf16_reduced_precision_reduction: bool = True


matmul = _Matmul()


def is_built() -> bool:
    """Always False: tapegrad has no CUDA build."""
    return False


def is_flash_attention_available() -> bool:
    return False
