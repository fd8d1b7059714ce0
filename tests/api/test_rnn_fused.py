"""The fused recurrent layer (`rnn_layer`, ir/ops/rnn.py) against the composed cells.

nn.RNN/LSTM/GRU run non-packed input without projections as one `rnn_layer` op per layer
and direction; `tracegrad.nn.modules.rnn.FUSED = False` runs the composed Python loop of
registry ops instead (the path tests/api/test_rnn.py checks against torch 2.13 for both).
Here the fused path's outputs and gradients (input, h0, c0, every weight) must equal the
composed path's in float64 eagerly and compiled on both executors, the op's gradients
must match finite differences (gradcheck), and a second derivative raises.
"""
from __future__ import annotations

import numpy as np
import pytest

import tracegrad as tg
from tracegrad import nn
from tracegrad.dispatch.frontend import DISPATCHER
from tracegrad.nn.modules import rnn as R

from helpers import tiered

MODELS = {
    "rnn_tanh": lambda: nn.RNN(3, 4, num_layers=2, bidirectional=True, dtype=tg.float64),
    "rnn_relu": lambda: nn.RNN(3, 4, num_layers=2, nonlinearity="relu", bidirectional=True,
                               dtype=tg.float64),
    "lstm": lambda: nn.LSTM(3, 4, num_layers=2, bidirectional=True, dtype=tg.float64),
    "gru": lambda: nn.GRU(3, 4, num_layers=2, bidirectional=True, dtype=tg.float64),
    "lstm_nobias_bf": lambda: nn.LSTM(3, 4, num_layers=2, bias=False, batch_first=True,
                                      dtype=tg.float64),
}
SEQ, BATCH = 5, 2


def _setup(name):
    tg.manual_seed(3)
    model = MODELS[name]()
    rng = np.random.default_rng(7)
    dirs = (2 if model.bidirectional else 1) * model.num_layers
    shape = (BATCH, SEQ, 3) if model.batch_first else (SEQ, BATCH, 3)
    x = tg.tensor(rng.standard_normal(shape), requires_grad=True)
    states = [tg.tensor(rng.standard_normal((dirs, BATCH, 4)), requires_grad=True)
              for _ in range(2 if model.mode == "LSTM" else 1)]
    width = 4 * (2 if model.bidirectional else 1)
    out_shape = (BATCH, SEQ, width) if model.batch_first else (SEQ, BATCH, width)
    weights = [tg.tensor(rng.standard_normal(out_shape))] + \
        [tg.tensor(rng.standard_normal((dirs, BATCH, 4))) for _ in states]
    return model, x, states, weights


def _step(model):
    params = list(model.parameters())

    def step(x, states, weights):
        hx = tuple(states) if model.mode == "LSTM" else states[0]
        out, h = model(x, hx)
        finals = list(h) if model.mode == "LSTM" else [h]
        loss = (out * weights[0]).sum()
        for f, w in zip(finals, weights[1:]):
            loss = loss + (f * f * w).sum()      # not linear in the final states
        grads = tg.autograd.grad(loss, [x] + list(states) + params)
        return [out] + finals + list(grads)
    return step


def _values(results):
    return [r.detach().numpy() for r in results]


def _reference(name, monkeypatch):
    """The composed path, eagerly (FUSED off), cross-check mode off: it is the expected
    value, and cross-checking its per-step cells compiled dozens of small XLA programs
    (most of each case's ~10 s)."""
    with monkeypatch.context() as m:
        m.setattr(R, "FUSED", False)
        m.setenv("TRACEGRAD_CROSSCHECK", "0")
        model, x, states, weights = _setup(name)
        return _values(_step(model)(x, states, weights))


# `make test`: each model once, the three ways taking turns (eager LSTM/GRU ~9 s each);
# `make test-all`: every pair
_HOWS = ["eager", "interpreter", "jax"]


@pytest.mark.parametrize("how,name", tiered(
    _HOWS, sorted(MODELS), keep=[(_HOWS[(k + 1) % 3], n) for k, n in enumerate(sorted(MODELS))]))
def test_fused_layers_equal_the_composed_cells(name, how, monkeypatch):
    want = _reference(name, monkeypatch)
    model, x, states, weights = _setup(name)
    step = _step(model)
    fn = step if how == "eager" else tg.compile(step, executor=how)
    got = _values(fn(x, states, weights))
    assert len(got) == len(want) == 1 + len(states) + 1 + len(states) + len(list(model.parameters()))
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)
    if how != "eager":   # one loop op per layer-direction, forward and backward
        ops = [n.op for n in fn.programs[0].forward.nodes]
        layers = model.num_layers * (2 if model.bidirectional else 1)
        assert ops.count("rnn_layer") == layers
        assert ops.count("rnn_layer_backward") == layers


def test_the_fused_path_is_the_default_for_plain_sequences_only():
    """Packed input and proj_size > 0 keep the composed loop; both reach the same numbers
    as torch (tests/api/test_rnn.py), here only which ops run is checked."""
    seen = []
    real = DISPATCHER.call

    def spy(name, *a, **k):
        seen.append(name)
        return real(name, *a, **k)
    lstm = nn.LSTM(2, 3)
    proj = nn.LSTM(2, 3, proj_size=2)
    x = tg.randn(4, 1, 2)
    DISPATCHER.call = spy
    try:
        lstm(x)
        assert seen.count("rnn_layer") == 1
        seen.clear()
        proj(x)
        lstm(nn.utils.rnn.pack_padded_sequence(x, tg.tensor([4])))
        assert "rnn_layer" not in seen
    finally:
        DISPATCHER.call = real


_MODES = ["RNN_TANH", "RNN_RELU", "LSTM", "GRU"]


# `make test`: each mode once, forward and reverse taking turns; `make test-all`: both
@pytest.mark.parametrize("reverse,mode", tiered(
    [False, True], _MODES, keep=[(k % 2 == 1, m) for k, m in enumerate(_MODES)]))
def test_rnn_layer_gradcheck(mode, reverse):
    g = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    s = 2 if mode == "LSTM" else 1
    rng = np.random.default_rng(11)
    hidden = 3
    args = [tg.tensor(rng.standard_normal(shape) * scale, requires_grad=True)
            for shape, scale in (((4, 2, g * hidden), 1.0), ((s, 2, hidden), 1.0),
                                 ((g * hidden, hidden), 0.5), ((g * hidden,), 0.5))]

    def f(*a):
        out, state_n, _ = DISPATCHER.call("rnn_layer", *a, mode=mode, reverse=reverse)
        return out, state_n
    assert tg.autograd.gradcheck(f, tuple(args), eps=1e-6, atol=1e-6)


@pytest.mark.slow   # ~10 s; the layer-level gradcheck above runs in `make test`
def test_module_gradcheck_small_lstm():
    tg.manual_seed(0)
    lstm = nn.LSTM(2, 3, bidirectional=True, dtype=tg.float64)
    rng = np.random.default_rng(2)
    x = tg.tensor(rng.standard_normal((3, 2, 2)), requires_grad=True)
    h0 = tg.tensor(rng.standard_normal((2, 2, 3)), requires_grad=True)
    c0 = tg.tensor(rng.standard_normal((2, 2, 3)), requires_grad=True)

    def f(x, h0, c0):
        out, (h, c) = lstm(x, (h0, c0))
        return out, h, c
    assert tg.autograd.gradcheck(f, (x, h0, c0), eps=1e-6, atol=1e-6)


def test_a_second_derivative_through_the_fused_layer_raises():
    rnn = nn.GRU(2, 3, dtype=tg.float64)
    x = tg.tensor(np.ones((3, 1, 2)), requires_grad=True)
    out, _ = rnn(x)
    (gx,) = tg.autograd.grad(out.sum(), [x], create_graph=True)
    with pytest.raises(NotImplementedError, match="no second derivative"):
        gx.sum().backward()


def test_rnn_layer_rejects_mismatched_operands():
    x = tg.zeros(4, 2, 12)
    with pytest.raises(Exception, match="rnn_layer: gates_x must be"):
        DISPATCHER.call("rnn_layer", tg.zeros(4, 2, 8), tg.zeros(2, 2, 3), tg.zeros(12, 3),
                        tg.zeros(12), mode="LSTM")
    with pytest.raises(Exception, match="rnn_layer: state0 must be"):
        DISPATCHER.call("rnn_layer", x, tg.zeros(1, 2, 3), tg.zeros(12, 3), tg.zeros(12),
                        mode="LSTM")
