"""Attention: ``F.scaled_dot_product_attention``, ``MultiheadAttention`` and
``TransformerEncoderLayer``, with PyTorch's shapes, masks, defaults and initialisation.

Mask conventions are PyTorch's, which differ between the two entry points:
for ``scaled_dot_product_attention`` a boolean ``attn_mask`` is True where
attention is *allowed*; for ``MultiheadAttention`` a boolean ``attn_mask`` or
``key_padding_mask`` is True where attention is *not* allowed.  Float masks
are added to the scores in both.

>>> import tapegrad.torch as torch
>>> q = torch.ones(1, 2, 4)
>>> torch.nn.functional.scaled_dot_product_attention(q, q, q).shape
torch.Size([1, 2, 4])
"""

from __future__ import annotations

import copy
import math
import warnings
from typing import Any

import numpy as np

from ... import ops as core
from ..._core.errors import hinted, with_hint
from ..._core.tensor import TORCH, Tensor, make
from .._dtype import Size, to_np
from . import functional as F
from . import init
from .modules import Dropout, LayerNorm, Linear, Module, ModuleList
from .parameter import Parameter

__all__ = ["scaled_dot_product_attention", "MultiheadAttention", "TransformerEncoderLayer",
           "TransformerEncoder", "TransformerDecoderLayer", "TransformerDecoder", "Transformer",
           "NonDynamicallyQuantizableLinear"]


def _bias_from_mask(mask: Any, allowed_if_true: bool, dtype: Any) -> Any:
    """An additive float bias (0 or -inf) from a boolean mask, or a float mask as it is."""
    if mask is None:
        return None
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype == bool:
        blocked = ~m if allowed_if_true else m
        return np.where(blocked, -np.inf, 0.0).astype(dtype)
    return mask


def _canonical_mask(mask: Any, mask_name: str, other: Any, other_name: str,
                    dtype: Any) -> Any:
    """PyTorch's ``F._canonical_mask``: a boolean mask becomes a float one (-inf where
    True), after its deprecation warning when ``other`` (a mask given beside it) is of
    another type; other dtypes raise its AssertionError."""
    if mask is None:
        return None
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype != bool and m.dtype.kind != "f":
        raise hinted(AssertionError(with_hint(
            f"only bool and floating types of {mask_name} are supported",
            "pass a boolean mask (True: masked out) or an additive float mask")))
    if other is not None:
        o = other._data if isinstance(other, Tensor) else np.asarray(other)
        if o.dtype != m.dtype:
            warnings.warn(f"Support for mismatched {mask_name} and {other_name} is "
                          "deprecated. Use same type for both instead.", UserWarning,
                          stacklevel=2)
    if m.dtype == bool:
        return make(np.where(m, -np.inf, 0.0).astype(dtype), None, False, TORCH)
    return mask


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Any = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(Q K^T * scale + bias) V`` over the last two dims (PyTorch's reference math).

    ``attn_mask``: boolean (True: may attend) or float (added); ``is_causal``:
    position ``i`` attends to ``j <= i``; ``scale`` defaults to
    ``1/sqrt(E)``; ``dropout_p`` drops attention weights (training-time use).
    """
    if is_causal and attn_mask is not None:
        raise hinted(RuntimeError(with_hint("_scaled_dot_product_attention: Explicit attn_mask should "
                                     "not be set when is_causal=True",
                                     "pass either attn_mask or is_causal")))
    lq, s = query._data.shape[-2], key._data.shape[-2]
    e = query._data.shape[-1]
    if enable_gqa and key._data.shape[-3] != query._data.shape[-3]:
        # grouped-query attention: each key/value head serves a run of query heads
        rep = query._data.shape[-3] // key._data.shape[-3]
        idx = np.repeat(np.arange(key._data.shape[-3]), rep)
        key = core.take(key, idx, axis=key._data.ndim - 3)
        value = core.take(value, idx, axis=value._data.ndim - 3)
    sf = 1.0 / math.sqrt(e) if scale is None else scale
    scores = core.multiply(core.matmul(query, core.swapaxes(key, -1, -2)), sf)
    if is_causal:
        causal = np.tril(np.ones((lq, s), dtype=bool))
        scores = core.add(scores, np.where(causal, 0.0, -np.inf).astype(scores._data.dtype))
    bias = _bias_from_mask(attn_mask, True, scores._data.dtype)
    if bias is not None:
        scores = core.add(scores, bias)
    w = F.softmax(scores, dim=-1)
    if dropout_p > 0.0:
        w = F.dropout(w, dropout_p, True)
    return core.matmul(w, value)


class NonDynamicallyQuantizableLinear(Linear):
    """The ``Linear`` PyTorch uses for ``MultiheadAttention.out_proj`` (same behaviour)."""


class MultiheadAttention(Module):
    """Multi-head attention (PyTorch's parameters: ``in_proj_weight``, ``in_proj_bias``,
    ``out_proj``; or ``q/k/v_proj_weight`` when ``kdim``/``vdim`` differ from ``embed_dim``).

    Returns ``(attn_output, attn_weights)``; the weights are averaged over heads
    unless ``average_attn_weights=False``, and ``None`` with ``need_weights=False``.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        if add_bias_kv or add_zero_attn:
            raise hinted(NotImplementedError(with_hint("MultiheadAttention(add_bias_kv=True / "
                                                "add_zero_attn=True) is not supported by "
                                                "tapegrad", "leave them False")))
        dt = np.float32 if dtype is None else to_np(dtype)
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        def empty(*shape: int) -> Parameter:
            return Parameter(make(np.empty(shape, dtype=dt), None, False, TORCH))

        if not self._qkv_same_embed_dim:
            self.q_proj_weight = empty(embed_dim, embed_dim)
            self.k_proj_weight = empty(embed_dim, self.kdim)
            self.v_proj_weight = empty(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = empty(3 * embed_dim, embed_dim)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = empty(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def _projections(self, q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        e = self.embed_dim
        b = self.in_proj_bias
        bs = [None, None, None] if b is None else \
            [core.getitem(b, slice(i * e, (i + 1) * e)) for i in range(3)]
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            ws = [core.getitem(w, slice(i * e, (i + 1) * e)) for i in range(3)]
        else:
            ws = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        return (F.linear(q, ws[0], bs[0]), F.linear(k, ws[1], bs[1]),
                F.linear(v, ws[2], bs[2]))

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Any = None, need_weights: bool = True,
                attn_mask: Any = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", attn_mask,
                                           "attn_mask", query._data.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query._data.dtype)
        batched = query._data.ndim == 3
        if self.batch_first and batched:
            query, key, value = (core.swapaxes(t, 0, 1) for t in (query, key, value))
        if not batched:
            query, key, value = (core.expand_dims(t, 1) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = core.expand_dims(key_padding_mask, 0)
        tgt, n, e = query._data.shape
        src = key._data.shape[0]
        if e != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but "
                                 f"got {e}")
        h, hd = self.num_heads, self.head_dim
        q, k, v = self._projections(query, key, value)

        def heads(t: Tensor, length: int) -> Tensor:  # (L, N, E) -> (N, H, L, hd)
            return core.transpose(core.reshape(t, (length, n, h, hd)), (1, 2, 0, 3))

        qh, kh, vh = heads(q, tgt), heads(k, src), heads(v, src)
        dt = qh._data.dtype
        if is_causal and attn_mask is None:
            raise hinted(RuntimeError(with_hint(
                "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                "module method `generate_square_subsequent_mask` to create this mask.",
                "is_causal is only a hint; pass the causal mask as attn_mask")))
        am = _bias_from_mask(attn_mask, False, dt)
        total: Any = None
        if am is not None:
            am_shape = tuple(am._data.shape if isinstance(am, Tensor) else np.shape(am))
            if len(am_shape) == 2 and am_shape != (tgt, src):
                raise hinted(RuntimeError(with_hint(
                    f"The shape of the 2D attn_mask is {Size(am_shape)}, but should be "
                    f"{(tgt, src)}.", "attn_mask is (target length, source length)")))
            if len(am_shape) == 3:  # (N * H, L, S)
                if am_shape != (n * h, tgt, src):
                    raise hinted(RuntimeError(with_hint(
                        f"The shape of the 3D attn_mask is {Size(am_shape)}, but should be "
                        f"{(n * h, tgt, src)}.", "attn_mask is (batch * heads, L, S)")))
                am = core.reshape(am, (n, h, tgt, src))
            elif len(am_shape) != 2:
                raise RuntimeError(f"attn_mask's dimension {len(am_shape)} is not supported")
            total = am
        kp = _bias_from_mask(key_padding_mask, False, dt)
        if kp is not None:
            kp = core.reshape(kp, (n, 1, 1, src))
            total = kp if total is None else core.add(total, kp)
        scores = core.matmul(core.multiply(qh, math.sqrt(1.0 / float(hd))),
                             core.swapaxes(kh, -1, -2))
        if total is not None:
            scores = core.add(scores, total)
        w = F.softmax(scores, dim=-1)
        if self.dropout > 0.0 and self.training:
            w = F.dropout(w, self.dropout, True)
        out = core.matmul(w, vh)  # (N, H, L, hd)
        out = core.reshape(core.transpose(out, (2, 0, 1, 3)), (tgt, n, e))
        out = F.linear(out, self.out_proj.weight, self.out_proj.bias)
        weights: Tensor | None = None
        if need_weights:
            weights = core.mean(w, axis=1) if average_attn_weights else w
            if not batched:
                weights = core.squeeze(weights, 0)
        if not batched:
            out = core.squeeze(out, 1)
        elif self.batch_first:
            out = core.swapaxes(out, 0, 1)
        return out, weights


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward block, each with a residual and a LayerNorm
    (post-norm by default, ``norm_first=True`` for pre-norm), PyTorch's defaults."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            if activation == "relu":
                activation = F.relu
            elif activation == "gelu":
                activation = F.gelu
            else:
                raise RuntimeError(f"activation should be relu/gelu, not {activation}")
        self.activation = activation

    def _sa_block(self, x: Tensor, attn_mask: Any, key_padding_mask: Any,
                  is_causal: bool) -> Tensor:
        y = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(y)

    def _ff_block(self, x: Tensor) -> Tensor:
        y = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(y)

    def forward(self, src: Tensor, src_mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Tensor:
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               src_mask, "src_mask", src._data.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src._data.dtype)
        x = src
        if self.norm_first:
            x = core.add(x, self._sa_block(self.norm1(x), src_mask, src_key_padding_mask,
                                           is_causal))
            x = core.add(x, self._ff_block(self.norm2(x)))
        else:
            x = self.norm1(core.add(x, self._sa_block(x, src_mask, src_key_padding_mask,
                                                      is_causal)))
            x = self.norm2(core.add(x, self._ff_block(x)))
        return x


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (deep copies: equal initial weights, as in
    PyTorch), then an optional final ``norm``."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__()
        why = ""
        if not isinstance(encoder_layer, TransformerEncoderLayer):
            why = "encoder_layer was not TransformerEncoderLayer"
        elif encoder_layer.norm_first:
            why = "encoder_layer.norm_first was True"
        elif not encoder_layer.self_attn.batch_first:
            why = ("encoder_layer.self_attn.batch_first was not True(use batch_first for "
                   "better inference performance)")
        elif encoder_layer.self_attn.num_heads % 2 == 1:
            why = "num_head is odd"
        if enable_nested_tensor and why:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why}", stacklevel=2)
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor and not why
        self.mask_check = mask_check

    def forward(self, src: Tensor, mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool | None = None) -> Tensor:
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               mask, "mask", src._data.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src._data.dtype)
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))
        if self.norm is not None:
            x = self.norm(x)
        return x


def _activation(activation: Any) -> Any:
    if isinstance(activation, str):
        if activation == "relu":
            return F.relu
        if activation == "gelu":
            return F.gelu
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's ``memory``, and a feed-forward block,
    each with a residual and a LayerNorm (``norm_first`` for pre-norm), PyTorch's defaults."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def _sa_block(self, x: Tensor, mask: Any, pad: Any, is_causal: bool) -> Tensor:
        y = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=pad, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(y)

    def _mha_block(self, x: Tensor, mem: Tensor, mask: Any, pad: Any, is_causal: bool) -> Tensor:
        y = self.multihead_attn(x, mem, mem, attn_mask=mask, key_padding_mask=pad,
                                need_weights=False, is_causal=is_causal)[0]
        return self.dropout2(y)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = core.add(x, self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                           tgt_is_causal))
            x = core.add(x, self._mha_block(self.norm2(x), memory, memory_mask,
                                            memory_key_padding_mask, memory_is_causal))
            x = core.add(x, self._ff_block(self.norm3(x)))
        else:
            x = self.norm1(core.add(x, self._sa_block(x, tgt_mask, tgt_key_padding_mask,
                                                      tgt_is_causal)))
            x = self.norm2(core.add(x, self._mha_block(x, memory, memory_mask,
                                                       memory_key_padding_mask,
                                                       memory_is_causal)))
            x = self.norm3(core.add(x, self._ff_block(x)))
        return x


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer``, then an optional final ``norm``."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        if self.norm is not None:
            x = self.norm(x)
        return x


class Transformer(Module):
    """The encoder-decoder Transformer ("Attention Is All You Need") with PyTorch's defaults;
    every parameter with more than one dimension is re-drawn with ``xavier_uniform_``."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Any = "relu", custom_encoder: Any = None,
                 custom_decoder: Any = None, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            enc_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                activation, layer_norm_eps, batch_first,
                                                norm_first, bias, dtype=dtype)
            enc_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.encoder = TransformerEncoder(enc_layer, num_encoder_layers, enc_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            dec_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                activation, layer_norm_eps, batch_first,
                                                norm_first, bias, dtype=dtype)
            dec_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.decoder = TransformerDecoder(dec_layer, num_decoder_layers, dec_norm)
        for p in self.parameters():
            if p._data.ndim > 1:
                init.xavier_uniform_(p)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Any = None, tgt_mask: Any = None,
                memory_mask: Any = None, src_key_padding_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        batched = src._data.ndim == 3
        bdim = 0 if self.batch_first else 1
        if batched and src._data.shape[bdim] != tgt._data.shape[bdim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src._data.shape[-1] != self.d_model or tgt._data.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None,
                                        dtype: Any = None) -> Tensor:
        """The causal mask: ``-inf`` above the diagonal, ``0`` on and below it."""
        dt = np.float32 if dtype is None else to_np(dtype)
        return make(np.triu(np.full((sz, sz), -np.inf, dtype=dt), 1), None, False, TORCH)
