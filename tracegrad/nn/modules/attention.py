"""MultiheadAttention (torch.nn.MultiheadAttention; Vaswani et al., 2017)."""
from __future__ import annotations

import math

from tracegrad.ir import types as T

from ... import _creation, _ops
from ...tensor import Parameter, Tensor
from .. import functional as F
from .. import init
from .linear import Linear
from .module import Module


class NonDynamicallyQuantizableLinear(Linear):
    """The output projection of MultiheadAttention (a Linear; torch's name, for printing)."""


def _float_mask(mask: Tensor, dtype) -> Tensor:
    """A bool mask (True = do not attend) as an additive -inf/0 mask; float masks as they are."""
    if mask.dtype is T.bool_:
        return _ops.where(mask, float("-inf"), _creation.zeros((), dtype=dtype))
    if mask.dtype is not dtype:
        raise TypeError(f"MultiheadAttention: a float mask must have the query's dtype "
                        f"{dtype.name}, got {mask.dtype.name}")
    return mask


class MultiheadAttention(Module):
    """Multi-head attention with packed q/k/v input projections.

    Inputs are (L, N, E) (or (N, L, E) with ``batch_first``, or unbatched (L, E)).
    `attn_mask` (L, S) or (N * num_heads, L, S): bool True = masked out, float = added
    to the scores; `key_padding_mask` (N, S) likewise.  Returns the output and, with
    ``need_weights``, the attention weights (averaged over heads unless
    ``average_attn_weights=False``).  Dropout on the weights in training mode.
    ``is_causal`` is a hint that needs `attn_mask`, as in torch.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0 or embed_dim % num_heads:
            raise ValueError(f"embed_dim ({embed_dim}) must be positive and divisible by "
                             f"num_heads ({num_heads})")
        for name, flag in (("add_bias_kv", add_bias_kv), ("add_zero_attn", add_zero_attn)):
            if flag:
                raise NotImplementedError(f"MultiheadAttention: {name}=True is not supported")
        if (kdim or embed_dim) != embed_dim or (vdim or embed_dim) != embed_dim:
            raise NotImplementedError("MultiheadAttention: kdim/vdim different from embed_dim "
                                      "are not supported")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.kdim = self.vdim = embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        self.in_proj_weight = Parameter(_creation.zeros(3 * embed_dim, embed_dim, dtype=dtype))
        if bias:
            self.in_proj_bias = Parameter(_creation.zeros(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True,
                attn_mask=None, average_attn_weights: bool = True, is_causal: bool = False):
        if is_causal and attn_mask is None:
            raise ValueError("MultiheadAttention: is_causal is a hint that needs attn_mask; "
                             "pass the causal mask itself")
        batched = query.ndim == 3
        if not batched:
            query, key, value = (_ops.unsqueeze(t, 1) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = _ops.unsqueeze(key_padding_mask, 0)
        elif self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        length, n, e = query.shape
        source = key.shape[0]
        h, d = self.num_heads, self.head_dim
        w, b = self.in_proj_weight, self.in_proj_bias
        proj = []
        for i, t in enumerate((query, key, value)):
            part_b = None if b is None else b[i * e:(i + 1) * e]
            y = F.linear(t, w[i * e:(i + 1) * e], part_b)                   # (len, N, E)
            proj.append(y.reshape(y.shape[0], n, h, d).permute(1, 2, 0, 3))  # (N, H, len, D)
        q, k, v = proj
        scores = _ops.matmul(q * math.sqrt(1.0 / d), k.transpose(-2, -1))   # (N, H, L, S)
        if attn_mask is not None:
            mask = _float_mask(attn_mask, scores.dtype)
            if mask.ndim == 3:
                mask = mask.reshape(n, h, length, source)
            scores = scores + mask
        if key_padding_mask is not None:
            kpm = _float_mask(key_padding_mask, scores.dtype)
            scores = scores + kpm.reshape(n, 1, 1, source)
        weights = F.softmax(scores, -1)
        weights = F.dropout(weights, self.dropout, self.training)
        out = _ops.matmul(weights, v).permute(2, 0, 1, 3).reshape(length, n, e)
        out = self.out_proj(out)
        if not batched:
            out = _ops.squeeze(out, 1)
        elif self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            weights = _ops.squeeze(weights, 0)
        return out, weights
