"""torch.nn.functional names, backed by the op registry.

Most names are registry ops (primitives or decompositions: ir/ops/nn.py, losses.py,
normalization.py, conv.py, unary.py ...).  The functions written out here add what a registry op cannot hold:
state (`dropout` draws from the global generator, `batch_norm` updates the running
statistics in place), torch's `inplace=` flag, and torch's argument order where the
functional spelling differs from ``torch.<name>`` (`embedding`).
"""
from tracegrad.ir import types as T
from tracegrad.ir.errors import DTypeError
from tracegrad.ir.ops.index import checked_index
from tracegrad.ir.ops.nn import attention_math
from tracegrad.ir.registry import REGISTRY

from .. import _creation, _ops
from ..dispatch.frontend import EAGER
from .._ops import (adaptive_avg_pool2d, avg_pool2d, binary_cross_entropy,
                    binary_cross_entropy_with_logits, conv1d, conv2d, conv_transpose2d,
                    cosine_similarity, cross_entropy, gelu, group_norm, huber_loss, kl_div,
                    l1_loss, layer_norm, linear, log_softmax, max_pool2d, mse_loss, nll_loss,
                    normalize, one_hot, pad, rms_norm, sigmoid,
                    smooth_l1_loss, softmax, softplus, tanh)
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from ._not_built import FUNCTIONAL_NAMES, refuse
from .functional_sampling import affine_grid, grid_sample  # noqa: F401
from .functional_activations import *  # noqa: F401,F403  (selu, glu, prelu, ...)
from .functional_activations import __all__ as _activations_all
from .functional_distances import *  # noqa: F401,F403  (triplet_margin_loss, max_pool1d, ...)
from .functional_distances import __all__ as _distances_all
from .functional_spatial import (bilinear, dropout1d, dropout2d, dropout3d, fold,  # noqa: F401
                                 interpolate, logsigmoid, pixel_shuffle, pixel_unshuffle, unfold)


def _activation(name: str):
    """The op `name` with torch's trailing ``inplace`` argument (True: overwrite `input`)."""
    op, n_attrs = getattr(_ops, name), len(REGISTRY[name].attrs)

    def fn(input, *args, inplace=False, **kwargs):
        if len(args) > n_attrs:     # inplace given positionally, after the op's own arguments
            inplace, args = args[n_attrs], args[:n_attrs]
        if inplace:
            return input._inplace_apply(f"{name}_", lambda: op(input, *args, **kwargs))
        return op(input, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = op.__doc__.replace(")", ", inplace=False)", 1)
    return fn


elu = _activation("elu")
hardtanh = _activation("hardtanh")
leaky_relu = _activation("leaky_relu")
mish = _activation("mish")
relu = _activation("relu")
relu6 = _activation("relu6")
silu = _activation("silu")


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero each element with probability `p`, scale the rest by 1 / (1 - p) (torch's dropout).

    The mask comes from the global generator (`tg.rand`, Threefry): eager runs and
    `tg.compile` runs with the same `tg.manual_seed` draw the same masks.  An element is
    kept where its uniform draw is below 1 - p.  In eval (`training=False`) or with p = 0
    the input is returned unchanged.

    Raises:
        ValueError: p outside [0, 1].
        TypeError: a non-floating-point input.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability has to be between 0 and 1, but got {p}")
    if input.dtype.is_complex:   # worded as the registry's one rule (`check_complex`)
        raise DTypeError(f"dropout: not supported for complex tensors, got ({input._type})")
    if not input.dtype.is_floating_point:
        raise TypeError(f"dropout: expected a floating-point input, got {input._type}")
    if inplace:
        return input._inplace_apply("dropout_", lambda: dropout(input, p, training))
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _ops.mul(input, 0.0)
    keep = _creation.rand(input.shape, dtype=input.dtype) < 1.0 - p
    return _ops.mul(input, _ops.mul(keep.to(input.dtype), 1.0 / (1.0 - p)))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale=None, enable_gqa: bool = False):
    """softmax(q @ k^T * scale + mask) @ v (torch.nn.functional.scaled_dot_product_attention,
    its math backend) over query (..., L, E), key (..., S, E), value (..., S, Ev).

    ``dropout_p > 0`` drops attention weights with `dropout` (the global generator), scaling
    the kept ones by 1 / (1 - p), whenever it is given, as torch: pass
    ``dropout_p=p if self.training else 0.0`` for eval-mode behaviour.

    Raises:
        ValueError: dropout_p outside [0, 1].  The registry op's errors (shapes, dtypes,
            masks; NotImplementedError for enable_gqa=True).
    """
    if not dropout_p:
        return _ops.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
                                                 is_causal, scale, enable_gqa)
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"scaled_dot_product_attention: dropout_p has to be between 0 and 1, "
                         f"but got {dropout_p}")
    return attention_math(EAGER, query, key, value, attn_mask, dropout_p, is_causal, scale,
                          enable_gqa, weights_dropout=lambda w: dropout(w, dropout_p))


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5):
    """Per-channel (dim 1) normalization, torch.nn.functional.batch_norm.

    Training: normalize with the batch mean and biased variance, and (when given) update
    ``running_mean``/``running_var`` in place under no_grad: ``r = (1 - momentum) * r +
    momentum * stat``, with the *unbiased* batch variance, as torch.  Eval: normalize with
    the running statistics.  Statistics of float16/bfloat16 inputs are computed in float32.

    Raises:
        ValueError: training with one value per channel; eval without running statistics.
        ValueError: statistics, weight or bias not of length C.
    """
    out = _ops.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if training and (running_mean is not None or running_var is not None):
        with no_grad():
            x = input.detach()
            if x.dtype.itemsize < 4:
                x = x.to(T.float32)
            dims = (0,) + tuple(range(2, x.ndim))
            n = x.numel() // x.shape[1]
            mean = x.mean(dims)
            if running_mean is not None:
                running_mean.copy_(running_mean * (1.0 - momentum) + mean * momentum)
            if running_var is not None:
                centered = x - mean.reshape((1, -1) + (1,) * (x.ndim - 2))
                var = (centered * centered).sum(dims) / float(n - 1)
                running_var.copy_(running_var * (1.0 - momentum) + var * momentum)
    return out


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5):
    """Normalize each (sample, channel) plane of `input` (N, C, *spatial) by its own mean
    and biased variance, then scale by `weight` (C,) and shift by `bias` (C,)
    (torch.nn.functional.instance_norm).

    As torch: batch norm over the input viewed as (1, N*C, *spatial).  With running
    statistics and `use_input_stats`, they move towards the per-sample statistics averaged
    over the batch; without `use_input_stats`, the running statistics normalize.

    Raises:
        The errors of `batch_norm` (statistics, weight or bias not of length C, ...).
    """
    n, c = input.shape[0], input.shape[1]
    shape = (1, n * c) + tuple(input.shape[2:])
    repeat = (lambda t: None if t is None else t.repeat(n))
    mean, var = repeat(running_mean), repeat(running_var)
    out = batch_norm(input.reshape(shape), mean, var, repeat(weight), repeat(bias),
                     use_input_stats, momentum, eps)
    if use_input_stats:
        with no_grad():
            if running_mean is not None:
                running_mean.copy_(mean.view(n, c).mean(0))
            if running_var is not None:
                running_var.copy_(var.view(n, c).mean(0))
    return out.reshape(input.shape)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False):
    """Rows of `weight` (num_embeddings, dim) at the int64/int32 indices `input`: (*, dim).

    The row `padding_idx` gets no gradient, as torch.  ``sparse=True`` is accepted and
    gives the same (dense) gradient.

    Raises:
        NotImplementedError: max_norm or scale_grad_by_freq.
        IndexError: an index outside [0, num_embeddings) (torch rejects negative ones too);
            inside `tg.compile`, when the program runs.
    """
    if max_norm is not None:
        raise NotImplementedError("embedding: max_norm is not supported (it renormalizes "
                                  "weight rows in place)")
    if scale_grad_by_freq:
        raise NotImplementedError("embedding: scale_grad_by_freq=True is not supported")
    if (isinstance(input, Tensor) and input.dtype.category == T.INT
            and isinstance(weight, Tensor) and weight.ndim == 2):   # else the op's type error
        input = checked_index(EAGER, "embedding", input, weight.shape[0], 0)
    return _ops.embedding(input, weight, padding_idx)


__all__ = ["adaptive_avg_pool2d", "avg_pool2d", "batch_norm", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "conv1d", "conv2d", "conv_transpose2d",
           "cosine_similarity", "cross_entropy", "dropout", "elu", "embedding", "gelu",
           "group_norm", "hardtanh", "instance_norm", "huber_loss", "kl_div", "l1_loss", "layer_norm",
           "leaky_relu", "linear", "log_softmax", "max_pool2d", "mish", "mse_loss", "nll_loss",
           "normalize", "one_hot", "pad", "relu", "relu6", "rms_norm",
           "scaled_dot_product_attention", "sigmoid", "silu", "smooth_l1_loss", "softmax",
           "softplus", "tanh",
           # functional_spatial.py
           "affine_grid", "bilinear", "dropout1d", "dropout2d", "dropout3d", "fold", "grid_sample", "interpolate",
           "logsigmoid", "pixel_shuffle", "pixel_unshuffle", "unfold"]
__all__ += _activations_all + _distances_all


def _inplace_of(name: str):
    fn = globals()[name]

    def inplace(input, *args, **kwargs):
        return fn(input, *args, inplace=True, **kwargs)
    inplace.__name__ = inplace.__qualname__ = f"{name}_"
    inplace.__doc__ = f"`{name}(input, ..., inplace=True)` (torch.nn.functional.{name}_)."
    return inplace


elu_, hardtanh_, leaky_relu_, relu_ = (_inplace_of(n) for n in
                                       ("elu", "hardtanh", "leaky_relu", "relu"))
__all__ += ["elu_", "hardtanh_", "leaky_relu_", "relu_"]


def __getattr__(name: str):
    return refuse("tracegrad.nn.functional", name, FUNCTIONAL_NAMES)
