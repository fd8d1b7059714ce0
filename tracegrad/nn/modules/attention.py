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


def _pad_key_column(mask):
    """One more key position that every query may attend (torch pads masks by (0, 1))."""
    return None if mask is None else F.pad(mask, (0, 1))


class MultiheadAttention(Module):
    """Multi-head attention (torch.nn.MultiheadAttention).

    ``MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
    add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None, dtype=None)``.
    Parameters as torch: packed ``in_proj_weight`` (3E, E) when kdim = vdim = E, else
    ``q_proj_weight`` (E, E), ``k_proj_weight`` (E, kdim), ``v_proj_weight`` (E, vdim)
    (all xavier_uniform); ``in_proj_bias`` (3E) and ``out_proj.bias`` zeros; ``bias_k``,
    ``bias_v`` (1, 1, E) xavier_normal, appended to the keys and values; ``add_zero_attn``
    appends a zero key and value per head.

    Inputs are (L, N, E) (or (N, L, E) with ``batch_first``, or unbatched (L, E)); keys
    and values (S, N, kdim / vdim).  `attn_mask` (L, S) or (N * num_heads, L, S): bool
    True = masked out, float = added to the scores; `key_padding_mask` (N, S) likewise.
    Returns the output and, with ``need_weights``, the attention weights (averaged over
    heads unless ``average_attn_weights=False``).  Dropout on the weights in training
    mode.  ``is_causal`` is a hint that needs `attn_mask`, as in torch.

    Raises:
        ValueError: embed_dim not divisible by num_heads; is_causal without attn_mask.
        RuntimeError: an attn_mask of the wrong shape (torch's message).
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0 or embed_dim % num_heads:
            raise ValueError(f"embed_dim ({embed_dim}) must be positive and divisible by "
                             f"num_heads ({num_heads})")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_creation.zeros(3 * embed_dim, embed_dim, dtype=dtype))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(_creation.zeros(embed_dim, embed_dim, dtype=dtype))
            self.k_proj_weight = Parameter(_creation.zeros(embed_dim, self.kdim, dtype=dtype))
            self.v_proj_weight = Parameter(_creation.zeros(embed_dim, self.vdim, dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_creation.zeros(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(_creation.zeros(1, 1, embed_dim, dtype=dtype))
            self.bias_v = Parameter(_creation.zeros(1, 1, embed_dim, dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def _projections(self, query, key, value):
        e, b = self.embed_dim, self.in_proj_bias
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            weights = [w[i * e:(i + 1) * e] for i in range(3)]
        else:
            weights = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        return [F.linear(t, weights[i], None if b is None else b[i * e:(i + 1) * e])
                for i, t in enumerate((query, key, value))]

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
        h, d = self.num_heads, self.head_dim
        q, k, v = self._projections(query, key, value)              # (len, N, E)
        dtype = q.dtype
        if attn_mask is not None:
            attn_mask = _float_mask(attn_mask, dtype)
            want = (length, k.shape[0]) if attn_mask.ndim == 2 else (n * h, length, k.shape[0])
            if attn_mask.ndim not in (2, 3):
                raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
            if tuple(attn_mask.shape) != want:
                raise RuntimeError(f"The shape of the {attn_mask.ndim}D attn_mask is "
                                   f"{tuple(attn_mask.shape)}, but should be {want}.")
        if key_padding_mask is not None:
            key_padding_mask = _float_mask(key_padding_mask, dtype)
        if self.bias_k is not None:
            k = _ops.cat([k, self.bias_k.expand(1, n, e)], 0)
            v = _ops.cat([v, self.bias_v.expand(1, n, e)], 0)
            attn_mask, key_padding_mask = map(_pad_key_column, (attn_mask, key_padding_mask))
        q, k, v = (y.reshape(y.shape[0], n, h, d).permute(1, 2, 0, 3) for y in (q, k, v))
        if self.add_zero_attn:                                      # (N, H, len, D)
            zero = _creation.zeros(n, h, 1, d, dtype=dtype)
            k, v = _ops.cat([k, zero], 2), _ops.cat([v, zero], 2)
            attn_mask, key_padding_mask = map(_pad_key_column, (attn_mask, key_padding_mask))
        source = k.shape[2]
        scores = _ops.matmul(q * math.sqrt(1.0 / d), k.transpose(-2, -1))   # (N, H, L, S)
        if attn_mask is not None:
            if attn_mask.ndim == 3:
                attn_mask = attn_mask.reshape(n, h, length, source)
            scores = scores + attn_mask
        if key_padding_mask is not None:
            scores = scores + key_padding_mask.reshape(n, 1, 1, source)
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
