"""The attention and transformer cases that tests/api/test_transformer.py checks against
torch 2.13 (recorded by tools/record_torch_transformer.py under the torch venv).

Pure NumPy and the shared torch/tracegrad API: `run_case(lib, name)` builds the module in
float64 and eval mode (dropout off), loads seeded parameters, runs seeded inputs and
returns the state_dict keys, output shapes and random projections (`fingerprint`) of the
outputs and of the gradients of sum(output * probe).
"""
from __future__ import annotations

import numpy as np

from rnn_cases import _rng, fingerprint, probe

# module: (class, constructor kwargs); call: the inputs and masks of forward
CASES = {
    "mha_kdim_vdim_bias_kv_zero_attn": dict(
        cls="MultiheadAttention",
        kw=dict(embed_dim=4, num_heads=2, kdim=3, vdim=5, add_bias_kv=True, add_zero_attn=True),
        q=(3, 2, 4), k=(4, 2, 3), v=(4, 2, 5), attn_mask="bool", kpm="bool",
        call=dict(average_attn_weights=False)),
    "mha_batch_first_float_masks": dict(
        cls="MultiheadAttention", kw=dict(embed_dim=6, num_heads=3, batch_first=True),
        q=(2, 3, 6), k=(2, 4, 6), v=(2, 4, 6), attn_mask="float", kpm="float", call={}),
    "mha_no_bias_unbatched": dict(
        cls="MultiheadAttention", kw=dict(embed_dim=4, num_heads=1, bias=False),
        q=(3, 4), k=(5, 4), v=(5, 4), call={}),
    "encoder_layer_post_relu": dict(
        cls="TransformerEncoderLayer", kw=dict(d_model=4, nhead=2, dim_feedforward=8),
        src=(5, 2, 4), src_mask="causal", src_kpm="bool"),
    "encoder_layer_pre_gelu_bf_nobias": dict(
        cls="TransformerEncoderLayer",
        kw=dict(d_model=6, nhead=2, dim_feedforward=5, activation="gelu", norm_first=True,
                batch_first=True, bias=False, layer_norm_eps=1e-3),
        src=(2, 4, 6), src_kpm="bool"),
    "encoder_layer_callable_unbatched": dict(
        cls="TransformerEncoderLayer",
        kw=dict(d_model=4, nhead=2, dim_feedforward=6, activation="tanh_callable"),
        src=(3, 4)),
    "encoder_2l_norm": dict(
        cls="TransformerEncoder", layer=dict(d_model=4, nhead=2, dim_feedforward=8,
                                             batch_first=True),
        kw=dict(num_layers=2, norm=True), src=(2, 5, 4), src_kpm="bool", src_mask=None),
    "decoder_layer_post": dict(
        cls="TransformerDecoderLayer", kw=dict(d_model=4, nhead=2, dim_feedforward=8),
        tgt=(3, 2, 4), memory=(5, 2, 4), tgt_mask="causal", tgt_kpm="bool", mem_kpm="bool"),
    "decoder_2l_pre_norm_bf": dict(
        cls="TransformerDecoder", layer=dict(d_model=4, nhead=2, dim_feedforward=6,
                                             norm_first=True, batch_first=True,
                                             activation="gelu"),
        kw=dict(num_layers=2, norm=True), tgt=(2, 3, 4), memory=(2, 4, 4), tgt_mask="causal",
        mem_mask="bool"),
    "transformer_bf": dict(
        cls="Transformer", kw=dict(d_model=4, nhead=2, num_encoder_layers=2,
                                   num_decoder_layers=1, dim_feedforward=8, batch_first=True),
        src=(2, 5, 4), tgt=(2, 3, 4), tgt_mask="causal", src_kpm="bool"),
}


def _mask(kind, shape, key):
    if kind is None:
        return None
    rng = _rng("mask/" + key)
    bad = rng.random(shape) < 0.3
    bad[..., 0] = False                   # every query keeps one key: no all-masked rows
    if kind == "causal":
        return None
    return bad if kind == "bool" else np.where(bad, -np.inf, rng.standard_normal(shape) * 0.5)


def _build(lib, case):
    c = CASES[case]
    nn = lib.nn
    kw = dict(c["kw"])
    if kw.get("activation") == "tanh_callable":
        kw["activation"] = lib.tanh
    if c["cls"] in ("TransformerEncoder", "TransformerDecoder"):
        layer_cls = getattr(nn, c["cls"] + "Layer")
        layer = layer_cls(**c["layer"])
        norm = nn.LayerNorm(c["layer"]["d_model"]) if kw.pop("norm", False) else None
        return getattr(nn, c["cls"])(layer, norm=norm, **kw)
    return getattr(nn, c["cls"])(**kw)


def run_case(lib, case: str) -> dict:
    c = CASES[case]
    m = _build(lib, case).double().eval()
    names = list(m.state_dict().keys())
    values = {n: _rng(case + "/" + n).uniform(-0.6, 0.6, tuple(t.shape))
              for n, t in m.state_dict().items()}
    m.load_state_dict({n: lib.tensor(v) for n, v in values.items()})
    rng = _rng(case + "/inputs")
    tensors = {k: lib.tensor(rng.standard_normal(c[k]), requires_grad=True)
               for k in ("q", "k", "v", "src", "tgt", "memory") if k in c}
    bf = (c.get("layer") or c["kw"]).get("batch_first", False)

    def seq_len(name):
        shape = c[name]
        return shape[0] if len(shape) == 2 else shape[1 if bf else 0]

    def batch(name):
        shape = c[name]
        return shape[0 if bf else 1]

    def square(kind, n, key):
        if kind == "causal":
            return lib.nn.Transformer.generate_square_subsequent_mask(n, dtype=lib.float64)
        a = _mask(kind, (n, n), key)
        return None if a is None else lib.tensor(a)

    def rect(kind, shape, key):
        a = _mask(kind, shape, key)
        return None if a is None else lib.tensor(a)

    cls = c["cls"]
    if cls == "MultiheadAttention":
        bfm = c["kw"].get("batch_first", False)
        lq, ls = (c["q"][1], c["k"][1]) if bfm else (c["q"][0], c["k"][0])
        n = c["q"][0] if bfm else (c["q"][1] if len(c["q"]) == 3 else None)
        am = rect(c.get("attn_mask"), (lq, ls), case + "am")
        kpm = rect(c.get("kpm"), (n, ls), case + "kpm") if n else None
        out, w = m(tensors["q"], tensors["k"], tensors["v"], key_padding_mask=kpm,
                   attn_mask=am, **c["call"])
        results = {"out": out, "weights": w}
    elif cls.startswith("TransformerEncoder"):
        s = seq_len("src")
        mask = square(c.get("src_mask"), s, case + "sm")
        kpm = rect(c.get("src_kpm"), (batch("src"), s), case + "skpm")
        if cls == "TransformerEncoder":
            out = m(tensors["src"], mask=mask, src_key_padding_mask=kpm)
        else:
            out = m(tensors["src"], src_mask=mask, src_key_padding_mask=kpm)
        results = {"out": out}
    elif cls.startswith("TransformerDecoder"):
        t, s = seq_len("tgt"), seq_len("memory")
        out = m(tensors["tgt"], tensors["memory"],
                tgt_mask=square(c.get("tgt_mask"), t, case + "tm"),
                memory_mask=rect(c.get("mem_mask"), (t, s), case + "mm"),
                tgt_key_padding_mask=rect(c.get("tgt_kpm"), (batch("tgt"), t), case + "tk"),
                memory_key_padding_mask=rect(c.get("mem_kpm"), (batch("memory"), s),
                                             case + "mk"))
        results = {"out": out}
    else:
        t, s = seq_len("tgt"), seq_len("src")
        out = m(tensors["src"], tensors["tgt"],
                tgt_mask=square(c.get("tgt_mask"), t, case + "tm"),
                src_key_padding_mask=rect(c.get("src_kpm"), (batch("src"), s), case + "sk"),
                memory_key_padding_mask=rect(c.get("src_kpm"), (batch("src"), s), case + "sk"))
        results = {"out": out}
    loss = sum((r * lib.tensor(probe(k, tuple(r.shape)))).sum() for k, r in results.items())
    loss.backward()
    fp = {k: fingerprint(k, r.detach().numpy()) for k, r in results.items()}
    fp.update({"grad_" + k: fingerprint("grad_" + k, t.grad.numpy()) for k, t in tensors.items()})
    fp.update({"grad_" + n: fingerprint("grad_" + n, p.grad.numpy())
               for n, p in m.named_parameters()})
    return {"keys": names, "shapes": {k: list(r.shape) for k, r in results.items()}, "fp": fp}
