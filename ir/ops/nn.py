"""Neural-network ops: softmax, log_softmax, embedding (primitives), and linear, one_hot and
scaled_dot_product_attention as decompositions (losses: losses.py; normalizations:
normalization.py).  Every composite follows its torch.nn.functional namesake, argument
for argument.
"""
from __future__ import annotations

import math

from .. import attr_kinds as K
from .. import types as T
from ..errors import DTypeError, ShapeError
from ..registry import AUTOCAST_FP32, AUTOCAST_LOWER, COMPLEX, DTYPE_ARG, INTERNAL, defcomposite, defop
from ._cost import SOFTMAX
from ._common import norm_dim, require_float
from .conv import _fail, _ttype
from ._nn_common import _same_dtype, _tensor


def _float_infer(name):
    def infer(types, **_):
        require_float(name, types[0])
        return types[0]
    return infer


def _canon_dim(name):
    return lambda types, *, dim: {"dim": norm_dim(name, dim, types[0].ndim)}


def _softmax_kernel(xp, x, *, dim):
    z = x - xp.max(x, axis=dim, keepdims=True)
    e = xp.exp(z)
    return e / xp.sum(e, axis=dim, keepdims=True)


def _log_softmax_kernel(xp, x, *, dim):
    z = x - xp.max(x, axis=dim, keepdims=True)
    return z - xp.log(xp.sum(xp.exp(z), axis=dim, keepdims=True))


# d softmax: y * (ct - sum(ct * y));  d log_softmax: ct - exp(y) * sum(ct)
defop("softmax", "input", attrs=(("dim", -1, K.DIM),), canon=_canon_dim("softmax"),
      infer=_float_infer("softmax"), kernel=_softmax_kernel, flags=DTYPE_ARG, ref="torch.softmax",
      vjp=lambda b, ct, x, out, *, dim: [
          b.mul(out, b.sub(ct, b.sum(b.mul(ct, out), (dim,), True)))],
          jvp=lambda b, t, x, out, *, dim: b.mul(out, b.sub(t, b.sum(b.mul(t, out), (dim,), True))),
      cost=SOFTMAX, autocast={"cuda": AUTOCAST_FP32})

defop("log_softmax", "input", attrs=(("dim", -1, K.DIM),), canon=_canon_dim("log_softmax"),
      infer=_float_infer("log_softmax"), kernel=_log_softmax_kernel, flags=DTYPE_ARG,
      ref="torch.log_softmax",
      vjp=lambda b, ct, x, out, *, dim: [
          b.sub(ct, b.mul(b.exp(out), b.sum(ct, (dim,), True)))],
          jvp=lambda b, t, x, out, *, dim: b.sub(t, b.sum(b.mul(b.exp(out), t), (dim,), True)),
      cost=SOFTMAX, autocast={"cuda": AUTOCAST_FP32})


# ---- linear, embedding, one_hot, attention -----------------------------------------------------
def _linear(ops, input, weight, bias=None):
    """input @ weight.T + bias (torch.nn.functional.linear)."""
    _tensor(ops, "linear", input, "input")
    _tensor(ops, "linear", weight, "weight")
    wt = ops.permute(weight, (1, 0)) if len(weight.shape) == 2 else weight
    y = ops.matmul(input, wt)
    if bias is not None:
        _same_dtype(ops, "linear", input, bias, "bias")
        if T.broadcast_shapes(tuple(bias.shape), tuple(y.shape)) != tuple(y.shape):
            raise _fail(ops, ShapeError(f"linear: bias {_ttype(bias)} does not broadcast to the "
                                        f"output shape {tuple(y.shape)}"))
        y = ops.add(y, bias)
    return y


defcomposite("linear", "input: Tensor, weight: Tensor, bias: Tensor | None = None", _linear,
             ref="torch.nn.functional.linear", flags=COMPLEX, node_name="AddmmBackward0",
             autocast={"cpu": AUTOCAST_LOWER, "cuda": AUTOCAST_LOWER})


def _embedding_infer(types, *, padding_idx):
    idx, w = types
    if idx.dtype not in (T.int64, T.int32):
        raise DTypeError(f"embedding: expected indices of dtype int64 or int32, got {idx}")
    if w.ndim != 2:
        raise ShapeError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got {w}")
    return T.TensorType(idx.shape + w.shape[1:], w.dtype)


def _embedding_canon(types, *, padding_idx):
    if padding_idx is None:
        return {"padding_idx": None}
    n = types[1].shape[0] if types[1].ndim else 0
    if not -n <= padding_idx < n:
        raise ValueError(f"embedding: padding_idx must be within num_embeddings ({n}), got "
                         f"{padding_idx}")
    return {"padding_idx": padding_idx % n}


def _embedding_vjp(b, ct, idx, w, out, *, padding_idx):
    """Rows of the cotangent added into their index's row; the padding row gets none (torch)."""
    if padding_idx is not None:
        keep = b.unsqueeze(b.ne(idx, padding_idx), -1)
        ct = b.where(keep, ct, 0.0)
    return [None, b.index_take_backward(ct, idx, w.shape, 0)]


# INTERNAL: torch.embedding takes (weight, indices); tg.nn.functional.embedding is the public op.
defop("embedding", "input, weight", attrs=(("padding_idx", None, K.INT_OPT),), canon=_embedding_canon,
      infer=_embedding_infer, kernel=lambda xp, idx, w, *, padding_idx: xp.take(w, idx, axis=0),
      vjp=_embedding_vjp, flags=INTERNAL, ref="torch.nn.functional.embedding")


def _one_hot(ops, tensor, num_classes=-1):
    """Long tensor of shape (*, num_classes): 1 at each class index (not differentiable)."""
    name = "one_hot"
    _tensor(ops, name, tensor, "tensor")
    if tensor.dtype is not T.int64:
        raise _fail(ops, DTypeError(f"{name}: is only applicable to index tensors of dtype "
                                    f"int64, got {_ttype(tensor)}"))
    known = ops.known_value(tensor)
    if num_classes == -1:
        if known is None:
            raise _fail(ops, ValueError(f"{name}: num_classes=-1 needs the tensor's values; "
                                        "pass num_classes inside tg.compile"))
        if not known.size:
            raise _fail(ops, ValueError(f"{name}: can not infer the total number of classes "
                                        "from an empty tensor"))
        num_classes = int(known.max()) + 1
    if known is not None and known.size:
        if known.min() < 0:
            raise _fail(ops, ValueError(f"{name}: class values must be non-negative"))
        if known.max() >= num_classes:
            raise _fail(ops, ValueError(f"{name}: class values must be smaller than "
                                        f"num_classes ({num_classes})"))
    classes = ops.arange(0, num_classes, 1, T.int64)
    return ops.convert(ops.eq(ops.unsqueeze(tensor, -1), classes), T.int64)


defcomposite("one_hot", "tensor: Tensor, num_classes=-1", _one_hot,
             ref="torch.nn.functional.one_hot")


def _attention_bias(ops, name, q, k, attn_mask, is_causal):
    """The additive score mask (bool masks: True = attend), or None."""
    length, source = q.shape[-2], k.shape[-2]
    if is_causal:
        if attn_mask is not None:
            raise _fail(ops, ValueError(f"{name}: explicit attn_mask should not be set when "
                                        "is_causal=True"))
        rows = ops.unsqueeze(ops.arange(0, length, 1, T.int64), 1)
        return ops.ge(rows, ops.arange(0, source, 1, T.int64))     # tril: j <= i
    if attn_mask is not None and attn_mask.dtype is not T.bool_ \
            and attn_mask.dtype is not q.dtype:
        raise _fail(ops, DTypeError(f"{name}: expected attn_mask dtype to be bool or to match "
                                    f"query dtype, got {_ttype(attn_mask)} and {_ttype(q)}"))
    return attn_mask


def _scaled_dot_product_attention(ops, query, key, value, attn_mask=None, dropout_p=0.0,
                                  is_causal=False, scale=None, enable_gqa=False, *,
                                  weights_dropout=None):
    """softmax(q @ k^T * scale + mask) @ v over (..., L, E), (..., S, E), (..., S, Ev).

    With dropout_p > 0, `weights_dropout(weights)` drops attention weights before the
    product with v (torch's math backend): tg.nn.functional.scaled_dot_product_attention
    passes its dropout, which draws from the global generator, a state this registry
    layer does not hold.
    """
    name = "scaled_dot_product_attention"
    for arg, t in (("query", query), ("key", key), ("value", value)):
        _tensor(ops, name, t, arg, floating=True)
    if dropout_p and weights_dropout is None:
        raise _fail(ops, NotImplementedError(
            f"{name}: dropout_p > 0 draws from the global generator; call "
            "tg.nn.functional.scaled_dot_product_attention, which supports it"))
    if enable_gqa:
        raise _fail(ops, NotImplementedError(f"{name}: enable_gqa=True is not supported"))
    if len(query.shape) < 2 or len(key.shape) < 2 or query.shape[-1] != key.shape[-1] \
            or key.shape[-2] != value.shape[-2]:
        raise _fail(ops, ShapeError(f"{name}: expected query (..., L, E), key (..., S, E) and "
                                    f"value (..., S, Ev), got {_ttype(query)}, {_ttype(key)} "
                                    f"and {_ttype(value)}"))
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    nk = len(key.shape)
    kt = ops.permute(key, tuple(range(nk - 2)) + (nk - 1, nk - 2))
    scores = ops.mul(ops.matmul(query, kt), scale)
    mask = _attention_bias(ops, name, query, key, attn_mask, is_causal)
    if mask is not None:
        scores = (ops.where(mask, scores, float("-inf")) if mask.dtype is T.bool_
                  else ops.add(scores, mask))
    weights = ops.softmax(scores, -1)
    if dropout_p:
        weights = weights_dropout(weights)
    return ops.matmul(weights, value)


attention_math = _scaled_dot_product_attention   # what nn.functional runs with dropout


defcomposite("scaled_dot_product_attention",
             "query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None, "
             "dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False",
             _scaled_dot_product_attention,
             ref="torch.nn.functional.scaled_dot_product_attention (the math backend)",
             node_name="UnsafeViewBackward0",
             autocast={"cpu": AUTOCAST_LOWER, "cuda": AUTOCAST_LOWER})
