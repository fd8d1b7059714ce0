"""Hand-written JAX references of the benchmark models (the ratio denominators).

Parameters come from the tracegrad models as NumPy arrays, so every
implementation starts from the same weights; each step is
``jax.jit(value_and_grad(loss) + SGD update)`` with the parameters donated.
"""
from __future__ import annotations

import math

import numpy as np


def params_of(model) -> dict:
    return {name: np.array(p.detach().numpy()) for name, p in model.named_parameters()}


def mlp_loss(p, x, y):
    import jax
    import jax.numpy as jnp
    h = jax.nn.relu(x @ p["0.weight"].T + p["0.bias"])
    h = jax.nn.relu(h @ p["2.weight"].T + p["2.bias"])
    logits = h @ p["4.weight"].T + p["4.bias"]
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


def cnn_loss(p, x, y):
    import jax
    import jax.numpy as jnp
    from jax import lax

    def conv_relu_pool(h, name):
        h = lax.conv_general_dilated(h, p[name + ".weight"], (1, 1), ((1, 1), (1, 1)),
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"))
        h = jax.nn.relu(h + p[name + ".bias"][None, :, None, None])
        return lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    h = conv_relu_pool(conv_relu_pool(x, "0"), "3")
    logits = h.reshape(h.shape[0], -1) @ p["7.weight"].T + p["7.bias"]
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


def _layer_norm(x, w, b):
    import jax.numpy as jnp
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(-1, keepdims=True)
    return xc / jnp.sqrt(var + 1e-5) * w + b


def _matmul(low):
    """``a @ b``, or with `low` (a jnp dtype) torch's autocast GEMM: both operands cast to
    `low`, the product accumulated in float32 (``preferred_element_type``; XLA CPU runs a plain
    bfloat16 dot as a float32 one, docs/performance.md "Mixed precision (bf16)") and rounded
    to `low`."""
    import jax.numpy as jnp
    if low is None:
        return jnp.matmul

    def mm(a, b):
        return jnp.matmul(a.astype(low), b.astype(low),
                          preferred_element_type=jnp.float32).astype(low)
    return mm


def transformer_loss(p, idx, targets, layers=2, heads=4, low=None):
    """The transformer's loss; `low` (e.g. ``jnp.bfloat16``) runs it as torch.autocast does on
    CPU: linear layers and the attention products in `low` (bias too), their outputs stay
    `low` (softmax, GELU run on them), the residual adds promote back to float32 and the
    cross-entropy casts the logits to float32."""
    import jax
    import jax.numpy as jnp
    mm = _matmul(low)

    def linear(h, name):
        b = p[name + ".bias"]
        return mm(h, p[name + ".weight"].T) + (b if low is None else b.astype(low))

    b, t = idx.shape
    x = p["tok"][idx] + p["pos"][:t]
    d = x.shape[-1]
    hd = d // heads
    mask = jnp.triu(jnp.ones((t, t), bool), 1)
    for i in range(layers):
        q = f"blocks.{i}."
        h = _layer_norm(x, p[q + "ln1.weight"], p[q + "ln1.bias"])
        qkv = linear(h, q + "qkv").reshape(b, t, 3, heads, hd)
        qkv = qkv.transpose(2, 0, 3, 1, 4)
        att = mm(qkv[0], qkv[1].swapaxes(-2, -1)) * (1.0 / math.sqrt(hd))
        att = jnp.where(mask, -1e9, att)
        y = mm(jax.nn.softmax(att, axis=-1), qkv[2])
        y = y.transpose(0, 2, 1, 3).reshape(b, t, d)
        x = x + linear(y, q + "proj")
        h = _layer_norm(x, p[q + "ln2.weight"], p[q + "ln2.bias"])
        h = jax.nn.gelu(linear(h, q + "fc1"), approximate=True)
        x = x + linear(h, q + "fc2")
    x = _layer_norm(x, p["ln.weight"], p["ln.bias"])
    logits = linear(x, "head").reshape(b * t, -1).astype(jnp.float32)
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, targets.reshape(-1)[:, None], axis=1))


def transformer_loss_bf16(p, idx, targets):
    """`transformer_loss` under bfloat16 autocast (see there)."""
    import jax.numpy as jnp
    return transformer_loss(p, idx, targets, low=jnp.bfloat16)


def lstm_loss(p, idx, targets, layers=2, unroll=1):
    """The LSTM language model with the time loop as ``lax.scan`` (`unroll` steps per
    iteration; the sequence length unrolls it fully)."""
    import jax
    import jax.numpy as jnp
    x = p["emb.weight"][idx]                                   # (T, B, D)
    for layer in range(layers):
        sfx = f"_l{layer}"
        w_hh = p["rnn.weight_hh" + sfx]
        gates_x = x @ p["rnn.weight_ih" + sfx].T + p["rnn.bias_ih" + sfx] + p["rnn.bias_hh" + sfx]
        hidden = w_hh.shape[1]

        def cell(carry, gx, w_hh=w_hh):
            h, c = carry
            i, f, g, o = jnp.split(gx + h @ w_hh.T, 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h

        zeros = jnp.zeros((x.shape[1], hidden), x.dtype)
        _, x = jax.lax.scan(cell, (zeros, zeros), gates_x, unroll=unroll)
    logits = (x @ p["head.weight"].T + p["head.bias"]).reshape(-1, p["head.bias"].shape[0])
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, targets.reshape(-1)[:, None], axis=1))


def sgd_step(loss_fn, lr: float):
    """A jitted SGD step over a params dict, parameters donated."""
    import jax

    def step(p, *batch):
        loss, grads = jax.value_and_grad(loss_fn)(p, *batch)
        return loss, jax.tree_util.tree_map(lambda w, g: w - lr * g, p, grads)
    return jax.jit(step, donate_argnums=(0,))
