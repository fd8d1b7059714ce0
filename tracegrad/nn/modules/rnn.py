"""Recurrent layers: RNN, LSTM, GRU and their cells (torch.nn.RNN, LSTM, GRU, *Cell).

Per layer and direction the input projection of every time step is one `linear` over the
flattened sequence.  For a non-packed sequence without projections (and outside autocast,
float32/float64) the time loop is then one fused `rnn_layer` op (ir/ops/rnn.py: a NumPy
loop eagerly, one `lax.scan` under `tg.compile` on jax, a hand-written BPTT backward op),
as torch runs cuDNN's RNN op.  Otherwise (PackedSequence, proj_size, the cells, or
``FUSED = False``) the loop runs in Python, one `linear` of the hidden state plus the gate
arithmetic per step, composed from registry ops (every order of derivative; traced
unrolled under `tg.compile`).  A `PackedSequence` runs that loop on the rows still active
at each step (`batch_sizes`), so padding is never computed on.

Parameters, their names (``weight_ih_l0``, ``bias_hh_l1_reverse``, ``weight_hr_l0``),
shapes, order, initialization (every one U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)))
and the gate layout (LSTM i, f, g, o; GRU r, z, n) are torch's, so state dicts load
either way.
"""
from __future__ import annotations

import math
import numbers
import warnings

from ... import _creation, _ops, amp
from ...dispatch.frontend import DISPATCHER
from ...tensor import Parameter, Tensor
from .. import functional as F
from .. import init
from ..utils.rnn import PackedSequence, _host_ints
from .module import Module

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}

# Whether RNN/LSTM/GRU run each layer-direction of a non-packed sequence as one fused
# `rnn_layer` op (True) or as the composed Python loop of cells; tests compare the two.
FUSED = True


# ---- one time step ------------------------------------------------------------------------
def _rnn_step(act):
    def step(gi, state, w_hh, b_hh, w_hr=None):
        (h,) = state
        h = act(gi + F.linear(h, w_hh, b_hh))
        return (h,), h
    return step


def _lstm_step(gi, state, w_hh, b_hh, w_hr=None):
    """torch's LSTM cell: gates i, f, g, o; c' = f c + i g; h' = o tanh(c') (@ W_hr.T)."""
    h, c = state
    i, f, g, o = (gi + F.linear(h, w_hh, b_hh)).chunk(4, -1)
    c = _ops.sigmoid(f) * c + _ops.sigmoid(i) * _ops.tanh(g)
    h = _ops.sigmoid(o) * _ops.tanh(c)
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return (h, c), h


def _gru_step(gi, state, w_hh, b_hh, w_hr=None):
    """torch's GRU cell: n = tanh(W_in x + b_in + r (W_hn h + b_hn)); h' = (1 - z) n + z h."""
    (h,) = state
    ir, iz, in_ = gi.chunk(3, -1)
    hr, hz, hn = F.linear(h, w_hh, b_hh).chunk(3, -1)
    r = _ops.sigmoid(ir + hr)
    z = _ops.sigmoid(iz + hz)
    n = _ops.tanh(in_ + r * hn)
    h = n + z * (h - n)
    return (h,), h


_STEPS = {"RNN_TANH": _rnn_step(_ops.tanh), "RNN_RELU": _rnn_step(_ops.relu),
          "LSTM": _lstm_step, "GRU": _gru_step}


def _run_direction(step, flat, sizes, state, weights, reverse):
    """One layer, one direction over packed rows.

    flat: (sum(sizes), in) rows, time step after time step; sizes: active rows per step
    (non-increasing); state: tuple of (B, *) initial states.  Returns the (sum(sizes), H)
    outputs in time order and the final states (each sequence's state after its own
    last step).
    """
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    gates = F.linear(flat, w_ih, b_ih)
    per_step = list(gates.split(sizes, 0)) if len(sizes) > 1 else [gates]
    outs = [None] * len(sizes)
    done = []                 # finished rows of the forward direction, latest first
    initial, active = state, sizes[0]
    if reverse and sizes[-1] < active:     # the reverse pass starts with the shortest step
        active = sizes[-1]
        state = tuple(s[:active] for s in state)
    for t in (reversed(range(len(sizes))) if reverse else range(len(sizes))):
        bs = sizes[t]
        if bs < active:       # forward: rows bs..active ended at the previous step
            done.insert(0, tuple(s[bs:active] for s in state))
            state = tuple(s[:bs] for s in state)
        elif bs > active:     # reverse: rows active..bs start here, from the initial state
            state = tuple(_ops.cat([s, s0[active:bs]], 0) for s, s0 in zip(state, initial))
        active = bs
        state, outs[t] = step(per_step[t], state, w_hh, b_hh, w_hr)
    if done:
        state = tuple(_ops.cat([s] + [d[i] for d in done], 0) for i, s in enumerate(state))
    return (outs[0] if len(outs) == 1 else _ops.cat(outs, 0)), state


def _fused_direction(mode, flat, seq, batch, state, weights, reverse):
    """One layer, one direction of a non-packed sequence as one `rnn_layer` op (the whole
    time loop; ir/ops/rnn.py): the input projection, then the fused loop.  Returns the
    (seq * batch, H) outputs in time order and the final state tuple."""
    w_ih, w_hh, b_ih, b_hh, _ = weights
    gates = F.linear(flat, w_ih, b_ih).reshape(seq, batch, w_ih.shape[0])
    if b_hh is None:   # bias=False: adding zeros keeps the composed cells' values exactly
        b_hh = _creation.zeros(w_hh.shape[0], dtype=w_hh.dtype)
    state0 = _ops.stack(list(state), 0) if len(state) > 1 else _ops.unsqueeze(state[0], 0)
    out, state_n, _ = DISPATCHER.call("rnn_layer", gates, state0, w_hh, b_hh, mode=mode,
                                      reverse=reverse)
    final = tuple(state_n[k] for k in range(len(state)))
    return out.reshape(seq * batch, out.shape[-1]), final


class RNNBase(Module):
    """Shared parameters, checks and layer loop of RNN, LSTM and GRU (torch.nn.RNNBase).

    ``flatten_parameters()`` is accepted and does nothing (there is no cuDNN weight
    buffer to compact).
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None, dtype=None):
        super().__init__()
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        for name, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(value, int):
                raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
            if value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gate = _GATES[mode] * hidden_size
        real_hidden = proj_size or hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            for direction in range(directions):
                fan = input_size if layer == 0 else real_hidden * directions
                shapes = [("weight_ih_l{}{}", (gate, fan)), ("weight_hh_l{}{}", (gate, real_hidden))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate,)), ("bias_hh_l{}{}", (gate,))]
                if proj_size:
                    shapes.append(("weight_hr_l{}{}", (proj_size, hidden_size)))
                names = []
                for pattern, shape in shapes:
                    name = pattern.format(layer, "_reverse" if direction else "")
                    setattr(self, name, Parameter(_creation.zeros(shape, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """A no-op (torch compacts cuDNN's weight buffer here)."""

    @property
    def all_weights(self) -> list:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, name) for name in self._flat_weights_names]

    def _weights(self, layer: int, direction: int):
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        get = lambda kind: getattr(self, kind + suffix, None)   # noqa: E731
        return (get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"),
                get("weight_hr"))

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---- forward ------------------------------------------------------------------------
    def _state_shapes(self, batch: int) -> list:
        lead = self.num_layers * (2 if self.bidirectional else 1)
        shapes = [(lead, batch, self.proj_size or self.hidden_size)]
        if self.mode == "LSTM":
            shapes.append((lead, batch, self.hidden_size))
        return shapes

    def _check(self, data: Tensor, packed: bool, states: list) -> None:
        weight = self.weight_ih_l0
        if data.dtype is not weight.dtype:
            raise ValueError(f"RNN input dtype ({data.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({data.dtype})")
        expected = 2 if packed else 3
        if data.ndim != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {data.ndim}")
        if data.shape[-1] != self.input_size:
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {data.shape[-1]}")
        batch = states[0].shape[1] if packed else data.shape[0 if self.batch_first else 1]
        for i, (s, shape) in enumerate(zip(states, self._state_shapes(batch))):
            if tuple(s.shape) != shape:
                what = f"hidden[{i}] size" if self.mode == "LSTM" else "hidden size"
                raise RuntimeError(f"Expected {what} {shape}, got {list(s.shape)}")

    def _hidden_list(self, hx) -> list | None:
        if hx is None:
            return None
        if self.mode == "LSTM":
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError("LSTM: hx must be a tuple (h_0, c_0) of tensors")
            return list(hx)
        if not isinstance(hx, Tensor):
            raise TypeError(f"{type(self).__name__}: hx must be a tensor, got "
                            f"{type(hx).__name__}")
        return [hx]

    def forward(self, input, hx=None):
        """Run the layers over a sequence.

        input: (L, N, H_in) ((N, L, H_in) with ``batch_first``), unbatched (L, H_in), or a
        `PackedSequence`.  hx: (D * num_layers, N, H_out) (a pair (h_0, c_0) for LSTM, c_0
        (D * num_layers, N, hidden_size)); zeros when None; unbatched inputs take 2-D states.
        Returns ``(output, h_n)`` (LSTM: ``(output, (h_n, c_n))``); output (L, N, D * H_out)
        or a PackedSequence like the input.

        Raises:
            ValueError: input not 2-D or 3-D; input and weight dtypes differ.
            RuntimeError: wrong input size or state shapes (torch's messages).
        """
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        states = self._hidden_list(hx)
        packed = isinstance(input, PackedSequence)
        if packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            sizes = [int(s) for s in _host_ints(batch_sizes, name)]
            batch = sizes[0]
            if states is not None and sorted_indices is not None:
                states = [_ops.index_select(s, 1, sorted_indices) for s in states]
        else:
            if input.ndim not in (2, 3):
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D "
                                 + ("tensor instead" if name == "RNN" else "instead"))
            batched = input.ndim == 3
            if not batched:
                input = _ops.unsqueeze(input, 0 if self.batch_first else 1)
            if states is not None:
                want = 3 if batched else 2
                if any(s.ndim != want for s in states):
                    kind = "batched 3-D" if batched else "unbatched 2-D"
                    if name == "LSTM":
                        got = ", ".join(f"{s.ndim}-D" for s in states)
                        raise RuntimeError(f"For {kind} input, hx and cx should also be "
                                           f"{want}-D but got ({got}) tensors")
                    raise RuntimeError(f"For {kind} input, hx should also be {want}-D but "
                                       f"got {states[0].ndim}-D tensor")
                if not batched:
                    states = [_ops.unsqueeze(s, 1) for s in states]
            seq = input.transpose(0, 1) if self.batch_first else input
            batch = seq.shape[1]
            sizes = [batch] * seq.shape[0]
        if states is None:
            dtype = (input.data if packed else input).dtype
            states = [_creation.zeros(shape, dtype=dtype) for shape in self._state_shapes(batch)]
        self._check(data if packed else input, packed, states)
        flat = data if packed else seq.reshape(-1, seq.shape[-1])
        fused = (not packed and not self.proj_size and sizes and batch
                 and FUSED and flat.dtype.name in ("float32", "float64")
                 and not amp.is_autocast_enabled())
        out, finals = self._layers(flat, sizes, states, fused)
        finals = [_ops.stack(f, 0) for f in zip(*finals)]
        if packed:
            if unsorted_indices is not None:
                finals = [_ops.index_select(f, 1, unsorted_indices) for f in finals]
            output = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
        else:
            output = out.reshape(len(sizes), batch, out.shape[-1])
            if self.batch_first:
                output = output.transpose(0, 1)
            if not batched:
                output = _ops.squeeze(output, 0 if self.batch_first else 1)
                finals = [_ops.squeeze(f, 1) for f in finals]
        return output, (tuple(finals) if self.mode == "LSTM" else finals[0])

    def _layers(self, flat, sizes, states, fused=False):
        """Every layer and direction; returns the last layer's rows and the final states
        (a list of per-(layer, direction) state tuples, torch's h_n order).  `fused`: each
        layer-direction is one `rnn_layer` op (equal-length steps), else the Python loop."""
        step = _STEPS[self.mode]
        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            if layer and self.dropout and self.training:
                flat = F.dropout(flat, self.dropout, True)
            outs = []
            for d in range(directions):
                k = layer * directions + d
                init_state = tuple(s[k] for s in states)
                if fused:
                    out, final = _fused_direction(self.mode, flat, len(sizes), sizes[0],
                                                  init_state, self._weights(layer, d),
                                                  bool(d))
                else:
                    out, final = _run_direction(step, flat, sizes, init_state,
                                                self._weights(layer, d), reverse=bool(d))
                outs.append(out)
                finals.append(final)
            flat = outs[0] if directions == 1 else _ops.cat(outs, -1)
        return flat, finals


class RNN(RNNBase):
    """Elman RNN, h' = tanh (or relu)(W_ih x + b_ih + W_hh h + b_hh) (torch.nn.RNN).

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)``.

    Raises:
        ValueError: another nonlinearity, or ``proj_size`` (LSTM only), as torch.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU",
                         *args, **kwargs)

class LSTM(RNNBase):
    """Long short-term memory (Hochreiter & Schmidhuber, 1997; torch.nn.LSTM), with torch's
    optional projection of the hidden state (``proj_size``, Sak et al., 2014).

    ``LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None)``.
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit (Cho et al., 2014; torch.nn.GRU), torch's variant (the reset
    gate multiplies W_hn h + b_hn).

    ``GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, device=None, dtype=None)``.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# ---- cells ------------------------------------------------------------------------------
class RNNCellBase(Module):
    """weight_ih (G * hidden, input), weight_hh (G * hidden, hidden), bias_ih, bias_hh (G *
    hidden), all U(-1/sqrt(hidden), 1/sqrt(hidden)) (torch.nn.RNNCellBase)."""

    _chunks = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        g = self._chunks * hidden_size
        self.weight_ih = Parameter(_creation.zeros(g, input_size, dtype=dtype))
        self.weight_hh = Parameter(_creation.zeros(g, hidden_size, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_creation.zeros(g, dtype=dtype))
            self.bias_hh = Parameter(_creation.zeros(g, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _cell(self, input: Tensor, states: list, step):
        """Check ranks and sizes, add the batch dim of unbatched input, run one step."""
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D "
                             "instead")
        batched = input.ndim == 2
        if not batched:
            input = _ops.unsqueeze(input, 0)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        if states is None:
            zeros = _creation.zeros(input.shape[0], self.hidden_size, dtype=input.dtype)
            states = [zeros] * (2 if self._chunks == 4 else 1)
        elif not batched:
            states = [_ops.unsqueeze(s, 0) for s in states]
        for i, s in enumerate(states):
            if s.ndim != 2 or s.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{i} "
                                   f"batch size {s.shape[0] if s.ndim else 1}")
            if s.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {s.shape[1]}, "
                                   f"expected {self.hidden_size}")
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        new, _ = step(gi, tuple(states), self.weight_hh, self.bias_hh)
        return [s if batched else _ops.squeeze(s, 0) for s in new]


def _check_state_rank(name: str, states, what: str) -> None:
    for i, s in enumerate(states):
        if s.ndim not in (1, 2):
            label = what if len(states) == 1 else f"{what}[{i}]"
            raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {s.ndim}D instead")


class RNNCell(RNNCellBase):
    """One Elman step, h' = tanh (or relu)(W_ih x + b_ih + W_hh h + b_hh) (torch.nn.RNNCell).

    input (N, input_size) or (input_size,); hx like it with hidden_size (zeros when None).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if hx is not None:
            _check_state_rank("RNNCell", [hx], "hidden")
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        step = _STEPS["RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"]
        return self._cell(input, None if hx is None else [hx], step)[0]


class LSTMCell(RNNCellBase):
    """One LSTM step (torch.nn.LSTMCell): returns (h', c'), each (N, hidden_size)."""

    _chunks = 4

    def forward(self, input: Tensor, hx=None):
        if hx is not None:
            _check_state_rank("LSTMCell", list(hx), "hx")
        h, c = self._cell(input, None if hx is None else list(hx), _lstm_step)
        return h, c


class GRUCell(RNNCellBase):
    """One GRU step (torch.nn.GRUCell): returns h' (N, hidden_size)."""

    _chunks = 3

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if hx is not None:
            _check_state_rank("GRUCell", [hx], "hidden")
        return self._cell(input, None if hx is None else [hx], _gru_step)[0]


__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]
