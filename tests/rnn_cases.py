"""The recurrent-layer cases that tests/api/test_rnn.py checks against torch 2.13.

Pure NumPy, so the recording script (tools/record_torch_rnn.py, run under the torch venv)
and the test build the same module parameters, inputs and loss from the same seeds.  Each
recorded array is kept as two random projections (`fingerprint`): any wrong element moves
them, and the literals stay a few numbers per array.
"""
from __future__ import annotations

import zlib

import numpy as np

# name: module class, constructor kwargs, (seq, batch), batch_first, initial state given,
# lengths (a PackedSequence from pack_padded_sequence(enforce_sorted=False)) or None,
# unbatched input
CASES = {
    "rnn_tanh": dict(cls="RNN", kw=dict(input_size=3, hidden_size=4), seq=5, batch=2),
    "rnn_relu_2l_bi_bf": dict(cls="RNN", kw=dict(input_size=3, hidden_size=4, num_layers=2,
                                                 nonlinearity="relu", bidirectional=True,
                                                 batch_first=True), seq=4, batch=3, hx=True),
    "lstm": dict(cls="LSTM", kw=dict(input_size=3, hidden_size=4), seq=5, batch=2, hx=True),
    "lstm_2l_bi": dict(cls="LSTM", kw=dict(input_size=3, hidden_size=4, num_layers=2,
                                           bidirectional=True), seq=4, batch=2, hx=True),
    "lstm_proj_nobias": dict(cls="LSTM", kw=dict(input_size=3, hidden_size=5, proj_size=2,
                                                 bias=False, num_layers=2), seq=3, batch=2,
                             hx=True),
    "lstm_unbatched": dict(cls="LSTM", kw=dict(input_size=3, hidden_size=4), seq=4, batch=1,
                           hx=True, unbatched=True),
    "gru": dict(cls="GRU", kw=dict(input_size=3, hidden_size=4), seq=5, batch=2, hx=True),
    "gru_2l_bi_bf": dict(cls="GRU", kw=dict(input_size=2, hidden_size=3, num_layers=2,
                                            bidirectional=True, batch_first=True), seq=4,
                         batch=3),
    "lstm_packed_bi": dict(cls="LSTM", kw=dict(input_size=3, hidden_size=4, num_layers=2,
                                               bidirectional=True), seq=5, batch=4, hx=True,
                           lengths=[3, 5, 1, 3]),
    "gru_packed_bf": dict(cls="GRU", kw=dict(input_size=2, hidden_size=3, batch_first=True,
                                             bidirectional=True), seq=4, batch=3,
                          lengths=[2, 4, 3]),
    "rnn_packed": dict(cls="RNN", kw=dict(input_size=2, hidden_size=3), seq=3, batch=3,
                       hx=True, lengths=[1, 3, 2]),
    "rnncell": dict(cls="RNNCell", kw=dict(input_size=3, hidden_size=4), batch=2, hx=True),
    "rnncell_relu_nobias": dict(cls="RNNCell", kw=dict(input_size=3, hidden_size=4, bias=False,
                                                       nonlinearity="relu"), batch=2, hx=True),
    "lstmcell": dict(cls="LSTMCell", kw=dict(input_size=3, hidden_size=4), batch=2, hx=True),
    "grucell": dict(cls="GRUCell", kw=dict(input_size=3, hidden_size=4), batch=2, hx=True),
    "grucell_unbatched": dict(cls="GRUCell", kw=dict(input_size=3, hidden_size=4), batch=1,
                              unbatched=True),
}


def _rng(key: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(key.encode()))


def param_values(case: str, names_shapes) -> dict:
    """U(-0.6, 0.6) values for every parameter, by name (the state_dict order of torch)."""
    return {n: _rng(case + "/" + n).uniform(-0.6, 0.6, shape) for n, shape in names_shapes}


def is_cell(case: str) -> bool:
    return CASES[case]["cls"].endswith("Cell")


def inputs(case: str) -> dict:
    """The input (padded when the case packs) and the initial states, float64."""
    c = CASES[case]
    kw = c["kw"]
    rng = _rng(case + "/inputs")
    batch = c["batch"]
    if is_cell(case):
        x_shape = (batch, kw["input_size"])
    elif kw.get("batch_first"):
        x_shape = (batch, c["seq"], kw["input_size"])
    else:
        x_shape = (c["seq"], batch, kw["input_size"])
    out = {"x": rng.standard_normal(x_shape)}
    if c.get("hx"):
        hidden = kw["hidden_size"]
        if is_cell(case):
            shapes = [(batch, hidden)] * (2 if c["cls"] == "LSTMCell" else 1)
        else:
            lead = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
            shapes = [(lead, batch, kw.get("proj_size") or hidden)]
            if c["cls"] == "LSTM":
                shapes.append((lead, batch, hidden))
        for i, s in enumerate(shapes):
            out[f"h{i}"] = rng.standard_normal(s) * 0.5
    if c.get("unbatched"):
        axis = 0 if is_cell(case) else (0 if kw.get("batch_first") else 1)
        out = {k: (v[0] if k == "x" and is_cell(case) else
                   np.squeeze(v, axis if k == "x" else (0 if is_cell(case) else 1)))
               for k, v in out.items()}
    return out


def probe(key: str, shape) -> np.ndarray:
    """The weights of an output in the scalar loss sum(output * probe)."""
    return _rng("probe/" + key).standard_normal(shape)


def fingerprint(key: str, a) -> list:
    """Two random projections of an array (its values enter linearly)."""
    a = np.asarray(a, dtype=np.float64)
    r = _rng("fp/" + key).standard_normal((2,) + a.shape)
    return [float((a * r[0]).sum()), float((a * r[1]).sum())]


def run_case(lib, case: str) -> dict:
    """Build and run `case` with `lib` (torch or tracegrad: the same API) in float64.

    Returns the state_dict keys and the fingerprints of the outputs and of the gradients
    of sum(output * probe) with respect to the inputs, initial states and parameters.
    """
    c = CASES[case]
    nn = lib.nn
    m = getattr(nn, c["cls"])(**c["kw"]).double()
    names = list(m.state_dict().keys())
    values = param_values(case, [(n, tuple(t.shape)) for n, t in m.state_dict().items()])
    m.load_state_dict({n: lib.tensor(v) for n, v in values.items()})
    arrays = inputs(case)
    tensors = {k: lib.tensor(v, requires_grad=True) for k, v in arrays.items()}
    states = [tensors[k] for k in ("h0", "h1") if k in tensors]
    hx = None if not states else (tuple(states) if c["cls"] in ("LSTM", "LSTMCell")
                                  else states[0])
    x = tensors["x"]
    results = {}
    if is_cell(case):
        out = m(x, hx)
        results.update(zip(("h", "c"), out if isinstance(out, tuple) else (out,)))
    else:
        rnn_utils = nn.utils.rnn
        first = c["kw"].get("batch_first", False)
        if c.get("lengths"):
            packed = rnn_utils.pack_padded_sequence(x, c["lengths"], batch_first=first,
                                                    enforce_sorted=False)
            out, h = m(packed, hx)
            out, lengths = rnn_utils.pad_packed_sequence(out, batch_first=first)
            assert list(lengths.numpy()) == list(c["lengths"])
        else:
            out, h = m(x, hx)
        results["out"] = out
        results.update(zip(("h_n", "c_n"), h if isinstance(h, tuple) else (h,)))
    loss = sum((t * lib.tensor(probe(k, tuple(t.shape)))).sum() for k, t in results.items())
    loss.backward()
    fp = {k: fingerprint(k, t.detach().numpy()) for k, t in results.items()}
    fp.update({"grad_" + k: fingerprint("grad_" + k, t.grad.numpy())
               for k, t in tensors.items()})
    fp.update({"grad_" + n: fingerprint("grad_" + n, p.grad.numpy())
               for n, p in m.named_parameters()})
    shapes = {k: list(t.shape) for k, t in results.items()}
    return {"keys": names, "shapes": shapes, "fp": fp}
