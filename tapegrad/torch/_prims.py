"""The ops the PyTorch style records, under PyTorch's node names.

The primitives themselves live in ``tapegrad.ops`` (the fused ones, such as
``var``, ``gelu``, ``softplus`` and the losses, in :mod:`tapegrad.ops.fused`);
here are the names this front-end uses for them and the same-op aliases that
PyTorch names differently (:meth:`Op.renamed`, e.g. ``TBackward0`` for ``t()``).
"""

from __future__ import annotations

from ..ops.elementwise import clip as _clip
from ..ops.elementwise import power as _power
from ..ops.reduce import _max, _min
from ..ops.shape import _getitem, _transpose

# ----------------------------------------------------------------------------- renamed ops
transpose_op = _transpose.renamed("TransposeBackward0")
t_op = _transpose.renamed("TBackward0")
max_dim_op = _max.renamed("MaxBackward0")
min_dim_op = _min.renamed("MinBackward0")
amax_op = _max.renamed("AmaxBackward0")
amin_op = _min.renamed("AminBackward0")
clamp_min_op = _clip.renamed("ClampMinBackward0")
clamp_max_op = _clip.renamed("ClampMaxBackward0")
pow_tensor_op = _power.renamed("PowBackward1")
pow_scalar_base_op = _power.renamed("PowBackward2")
gather_op = _getitem.renamed("GatherBackward0")
sort_op = _getitem.renamed("SortBackward0")
topk_op = _getitem.renamed("TopkBackward0")
take_op = _getitem.renamed("TakeBackward0")
split_sizes_op = _getitem.renamed("SplitWithSizesBackward0")
index_select_op = _getitem.renamed("IndexSelectBackward0")
unbind_op = _getitem.renamed("UnbindBackward0")
narrow_op = _getitem.renamed("NarrowBackward0")
split_op = _getitem.renamed("SplitBackward0")


# ----------------------------------------------------------------------------- softmax family
# one stable kernel each, shared with the core and the TensorFlow style
from ..ops.elementwise import clip as _clip_op  # noqa: E402
from ..ops.elementwise import where as _where_op  # noqa: E402

# ----------------------------------------------------------------------------- fused primitives
# (tapegrad.ops.fused: one op each for both styles and the core)
from ..ops.fused import (  # noqa: E402,F401
    bce_logits_op,
    bce_op,
    ceil_op,
    floor_op,
    gelu_op,
    l1_loss_op,
    linear_op,
    mse_loss_op,
    nll_loss2d_op,
    nll_loss_op,
    nll_traced2d_op,
    nll_traced_op,
    round_op,
    silu_op,
    softplus_op,
    std_op,
    trunc_op,
    var_op,
)
from ..ops.reduce import log_softmax_op, logsumexp_op, softmax_op  # noqa: E402,F401

masked_fill_op = _where_op.renamed("MaskedFillBackward0")
tril_op = _where_op.renamed("TrilBackward0")
triu_op = _where_op.renamed("TriuBackward0")


# torch.clamp with tensor bounds: the core clip under PyTorch's name and bound convention
clamp_tensor_op = _clip_op.renamed("ClampBackward0")


__all__ = [n for n in dir() if n.endswith("_op")]
