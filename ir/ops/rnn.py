"""The fused recurrent layer: `rnn_layer` runs one layer-direction's whole time loop (as
cuDNN's RNN op does for torch), `rnn_layer_backward` its reverse-time loop (BPTT).

``rnn_layer(gates_x, state0, weight_hh, bias_hh, mode, reverse)``:

- gates_x (T, B, G*H): the input projection of every step, ``x_t @ W_ih.T + b_ih``, made
  by a `linear` over the flattened sequence before the op (G gates: 1 for the Elman RNNs,
  4 for LSTM in torch's order i, f, g, o, 3 for GRU in r, z, n);
- state0 (S, B, H): the initial state, S = 2 for LSTM (h, c), else 1 (h);
- weight_hh (G*H, H), bias_hh (G*H,): the recurrent weights (zeros for ``bias=False``);
- reverse: the loop runs from step T-1 down to 0 (the reverse direction of a
  bidirectional layer); outputs stay in time order.

It returns (output (T, B, H), state_n (S, B, H), saved (T, B, W)): `saved` holds what the
backward loop reads per step (the Elman RNNs: the activation's slope; LSTM: the gates
i, f, g, o after their activations and c_t; GRU: r, z, n and W_hn h + b_hn), so backward
recomputes nothing.  The step arithmetic is torch's (tracegrad/nn/modules/rnn.py's
composed cells are the same formulas, op by op).  The NumPy kernels loop in Python, one
GEMM per step; the jax kernels are one ``lax.scan`` each, so a compiled LSTM is one loop
in XLA instead of T unrolled copies of the step.  The weight gradient is one GEMM over
all steps after the loop.

The backward op has no derivative of its own: a second derivative through the fused layer
(``create_graph=True`` then backward again, forward-mode AD) raises NotImplementedError
(docs/autograd.md, deviations).
"""
from __future__ import annotations

import numpy as np

from .. import attr_kinds as K
from .. import types as T
from ..errors import DTypeError, ShapeError
from ..registry import INTERNAL, REQUIRED, Cost, defop
from . import _blas
from ._common import fmt_types

MODES = ("RNN_TANH", "RNN_RELU", "LSTM", "GRU")
GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
STATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 2, "GRU": 1}
SAVED = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 5, "GRU": 4}   # per-step saved width / H


# ---- shared step arithmetic (NumPy and jax.numpy) -------------------------------------------
def _mm(xp, a, b):
    return _blas.product(xp, a, b)   # a's dtype; half precision on jax accumulates in float32


def _sig(xp, x):
    half = x.dtype.type(0.5)
    return (xp.tanh(x * half) + x.dtype.type(1)) * half


def _split(x, n):
    h = x.shape[-1] // n
    return [x[..., k * h:(k + 1) * h] for k in range(n)]


def _forward_step(xp, mode, w_t, bias, state, gi):
    """One step: (new state tuple, (h, saved row)); w_t is weight_hh transposed."""
    h = state[0]
    hh = _mm(xp, h, w_t) + bias
    one = gi.dtype.type(1)
    if mode == "LSTM":
        c = state[1]
        ig, fg, gg, og = _split(gi + hh, 4)
        i, f, g, o = _sig(xp, ig), _sig(xp, fg), xp.tanh(gg), _sig(xp, og)
        c = f * c + i * g
        h = o * xp.tanh(c)
        return (h, c), (h, xp.concatenate([i, f, g, o, c], -1))
    if mode == "GRU":
        ir, iz, in_ = _split(gi, 3)
        hr, hz, hn = _split(hh, 3)
        r = _sig(xp, ir + hr)
        z = _sig(xp, iz + hz)
        n = xp.tanh(in_ + r * hn)
        h = n + z * (h - n)
        return (h,), (h, xp.concatenate([r, z, n, hn], -1))
    pre = gi + hh
    if mode == "RNN_TANH":
        h = xp.tanh(pre)
        slope = one - h * h
    else:   # relu: slope 0 where the output is 0 (torch's threshold_backward at 0 too)
        h = xp.maximum(pre, gi.dtype.type(0))
        slope = (h > 0).astype(gi.dtype)
    return (h,), (h, slope)


def _backward_step(xp, mode, w, carry, xs):
    """One reverse step: carry (dh, dc) -> (dh_prev, dc_prev), (d gates_x row, d hh row)."""
    dh, dc = carry
    d_out, saved, h_prev, c_prev = xs
    dh = dh + d_out
    one = dh.dtype.type(1)
    if mode == "LSTM":
        i, f, g, o, c = _split(saved, 5)
        tc = xp.tanh(c)
        dc = dc + dh * o * (one - tc * tc)
        d = xp.concatenate([dc * g * i * (one - i), dc * c_prev * f * (one - f),
                            dc * i * (one - g * g), dh * tc * o * (one - o)], -1)
        return (_mm(xp, d, w), dc * f), (d, d)
    if mode == "GRU":
        r, z, n, hn = _split(saved, 4)
        dn = dh * (one - z) * (one - n * n)
        dr = dn * hn * r * (one - r)
        dz = dh * (h_prev - n) * z * (one - z)
        dgi = xp.concatenate([dr, dz, dn], -1)
        dhh = xp.concatenate([dr, dz, dn * r], -1)
        return (dh * z + _mm(xp, dhh, w), dc), (dgi, dhh)
    d = dh * saved
    return (_mm(xp, d, w), dc), (d, d)


# ---- time loops: a Python loop on NumPy, lax.scan on jax -------------------------------------
def _loop_np(xp, step, carry, xs):
    ys = None
    n = xs[0].shape[0]
    for t in range(n):
        carry, y = step(carry, tuple(x[t] for x in xs))
        if ys is None:
            ys = tuple(np.empty((n,) + v.shape, v.dtype) for v in y)
        for buf, v in zip(ys, y):
            buf[t] = v
    return carry, ys


def _loop_jax(xp, step, carry, xs):
    from jax import lax  # jax loads on first use (start-up time)
    return lax.scan(step, carry, xs)


def _time_major(xp, x, reverse):
    return xp.flip(x, 0) if reverse else x


def _forward(loop):
    def kernel(xp, gates_x, state0, weight_hh, bias_hh, *, mode, reverse):
        w_t = weight_hh.T
        state = tuple(state0[k] for k in range(STATES[mode]))
        step = lambda s, x: _forward_step(xp, mode, w_t, bias_hh, s, x[0])   # noqa: E731
        final, (out, saved) = loop(xp, step, state, (_time_major(xp, gates_x, reverse),))
        return (_time_major(xp, out, reverse), xp.stack(final, 0),
                _time_major(xp, saved, reverse))
    return kernel


def _prev(xp, first, seq, reverse):
    """The state before each step, in time order: `first` (1, B, H) where the loop starts."""
    return (xp.concatenate([seq[1:], first], 0) if reverse
            else xp.concatenate([first, seq[:-1]], 0))


def _backward(loop):
    def kernel(xp, grad_output, grad_state, output, saved, state0, weight_hh, *, mode, reverse):
        hsz = state0.shape[-1]
        h_prev = _prev(xp, state0[:1], output, reverse)       # time order
        if mode == "LSTM":
            c_prev = _prev(xp, state0[1:2], saved[:, :, 4 * hsz:], reverse)
            carry = (grad_state[0], grad_state[1])
        else:
            c_prev = h_prev   # unread
            carry = (grad_state[0], xp.zeros_like(grad_state[0]))
        back = lambda x: _time_major(xp, x, not reverse)   # noqa: E731  (last step first)
        step = lambda c, x: _backward_step(xp, mode, weight_hh, c, x)   # noqa: E731
        (dh0, dc0), (dgi, dhh) = loop(xp, step, carry,
                                      tuple(map(back, (grad_output, saved, h_prev, c_prev))))
        d_state = xp.stack([dh0, dc0] if mode == "LSTM" else [dh0], 0)
        flat = dhh.reshape(-1, dhh.shape[-1])
        d_w = _mm(xp, flat.T, back(h_prev).reshape(-1, hsz))   # one GEMM over every step
        d_b = flat.sum(0)
        return back(dgi), d_state, d_w, d_b
    return kernel


# ---- declarations ----------------------------------------------------------------------------
def _check(name, types, mode):
    gx, state0, w, b = types
    dtypes = {t.dtype for t in types}
    if len(dtypes) != 1 or not gx.dtype.is_floating_point:
        raise DTypeError(f"{name}: every operand must share one floating-point dtype, got "
                         f"{fmt_types(types)}")
    g, s = GATES[mode], STATES[mode]
    if state0.ndim != 3 or state0.shape[0] != s:
        raise ShapeError(f"{name}: state0 must be ({s}, batch, hidden) for mode {mode}, got "
                         f"{state0}")
    _, batch, hidden = state0.shape
    if gx.ndim != 3 or gx.shape[1:] != (batch, g * hidden) or gx.shape[0] < 1:
        raise ShapeError(f"{name}: gates_x must be (seq >= 1, {batch}, {g * hidden}) for "
                         f"state0 {state0} in mode {mode}, got {gx}")
    if w.shape != (g * hidden, hidden) or b.shape != (g * hidden,):
        raise ShapeError(f"{name}: weight_hh must be ({g * hidden}, {hidden}) and bias_hh "
                         f"({g * hidden},), got {w} and {b}")
    return gx.shape[0], batch, hidden


def _rnn_layer_infer(types, *, mode, reverse):
    seq, batch, hidden = _check("rnn_layer", types, mode)
    dt = types[0].dtype
    return (T.TensorType((seq, batch, hidden), dt), types[1],
            T.TensorType((seq, batch, SAVED[mode] * hidden), dt))


def _rnn_layer_backward_infer(types, *, mode, reverse):
    grad_output, grad_state, output, saved, state0, w = types
    if state0.ndim != 3 or state0.shape[0] != STATES[mode] or output.ndim != 3:
        raise ShapeError(f"rnn_layer_backward: operands {fmt_types(types)} do not fit mode "
                         f"{mode}")
    hidden, g = state0.shape[-1], GATES[mode]
    seq, batch = output.shape[:2]
    gates = T.TensorType((seq, batch, g * hidden), w.dtype)
    _check("rnn_layer_backward", (gates, state0, w, T.TensorType((g * hidden,), w.dtype)),
           mode)
    saved_t = T.TensorType((seq, batch, SAVED[mode] * hidden), w.dtype)
    if (grad_output, grad_state, saved) != (output, state0, saved_t) or \
            output != T.TensorType((seq, batch, hidden), w.dtype):
        raise ShapeError(f"rnn_layer_backward: operands {fmt_types(types)} do not fit mode "
                         f"{mode}")
    return gates, state0, w, T.TensorType((g * hidden,), w.dtype)


def _rnn_layer_vjp(b, ct, gates_x, state0, weight_hh, bias_hh, output, state_n, saved, *,
                   mode, reverse):
    d_out, d_state, _ = ct   # `saved` is bookkeeping for backward: its cotangent is unread
    return list(b.rnn_layer_backward(d_out, d_state, output, saved, state0, weight_hh,
                                     mode, reverse))


def _no_second_derivative(b, ct, *args, mode, reverse):
    raise NotImplementedError(
        f"rnn_layer_backward: the fused recurrent layer (nn.RNN/LSTM/GRU, mode {mode}) has no "
        "second derivative: double backward (create_graph=True, then backward again) and "
        "forward-mode AD through it are not supported; run the layer's cells (nn.LSTMCell ...) "
        "in a Python loop for those")


def _flops(factor):
    def flops(n):
        gx = n.inputs[0] if n.op == "rnn_layer" else n.outputs[0]
        seq, batch, gh = gx.shape
        hidden = n.inputs[-1].shape[-1]
        return factor * 2 * seq * batch * gh * hidden + 8 * seq * batch * gh
    return flops


_ATTRS = (("mode", REQUIRED, K.enum(*MODES)), ("reverse", False, K.BOOL))

defop("rnn_layer", "gates_x, state0, weight_hh, bias_hh", attrs=_ATTRS,
      infer=_rnn_layer_infer, kernel=_forward(_loop_np), kernels={"jax": _forward(_loop_jax)},
      vjp=_rnn_layer_vjp, flags=INTERNAL,
      ref="one layer-direction of torch.nn.RNN/LSTM/GRU (torch's _cudnn_rnn / lstm cell loop); "
          "jax.lax.scan",
      aten_name="aten::_cudnn_rnn", cost=Cost("matmul", _flops(1)))

defop("rnn_layer_backward", "grad_output, grad_state, output, saved, state0, weight_hh",
      attrs=_ATTRS, infer=_rnn_layer_backward_infer, kernel=_backward(_loop_np),
      kernels={"jax": _backward(_loop_jax)}, vjp=_no_second_derivative, flags=INTERNAL,
      ref="backpropagation through time of rnn_layer (torch's _cudnn_rnn_backward); "
          "jax.lax.scan",
      aten_name="aten::_cudnn_rnn_backward", cost=Cost("matmul", _flops(2)))
