"""The LSTM and nanoGPT examples' first steps give torch 2.13's losses, eagerly and compiled.

examples/reference_cases.py builds each example's model with dropout off, sets every
parameter from a seeded NumPy generator and runs its own training step (the example's
code, unchanged) on fixed batches.  The expected losses were printed by
`tools/torch_example_losses.py`, which runs the same module under torch 2.13.0 (CPU) with
`tracegrad` aliased to torch; a drift past float32 rounding over four optimizer steps
means a gradient, clipping, AdamW group or schedule differs from torch's.
"""
import importlib
import pathlib
import sys

import pytest

import tracegrad as tg

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"

# torch 2.13.0+cpu, tools/torch_example_losses.py
TORCH_LSTM = [3.7176261, 3.6915393, 3.7236288, 3.6651452]
TORCH_GPT = [3.8486211, 3.6940677, 3.7756214, 3.7372901]


@pytest.fixture(scope="module")
def cases():
    sys.path.insert(0, str(EXAMPLES))
    try:
        yield importlib.import_module("reference_cases")
    finally:
        sys.path.remove(str(EXAMPLES))


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_lstm_example_first_losses_match_torch(cases, compiled):
    step = cases.train_char_lstm.train_step
    losses = cases.lstm_case(step=tg.compile(step) if compiled else step)
    assert losses == pytest.approx(TORCH_LSTM, rel=2e-6)


# the compiled case (~17 s: trace and XLA compile of the GPT step) runs in `make test-all`;
# tests/api/test_transformer.py compiles a transformer training step in `make test`
@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=pytest.mark.slow)],
                         ids=["eager", "compiled"])
def test_nanogpt_example_first_losses_match_torch(cases, compiled, monkeypatch):
    # The key part of c_attn's bias cannot change a softmax, so its gradient is rounding noise
    # (~1e-9), and AdamW's first steps turn noise into +-lr updates whose signs differ between
    # XLA and NumPy: the executor cross-check would flag them, while the losses (what this
    # test checks against torch) cannot see them.
    monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "0")
    step = cases.train_nanogpt.train_step
    losses = cases.gpt_case(step=tg.compile(step) if compiled else step)
    assert losses == pytest.approx(TORCH_GPT, rel=2e-6)


def test_nanogpt_param_groups_split_as_nanogpt(cases):
    """Decay on every >= 2-D parameter (the tied embedding counted once), none on the rest."""
    model = cases.train_nanogpt.GPT(cases.VOCAB, 8, 2, 2, 16, dropout=0.0)
    decay, no_decay = model.configure_optimizers(0.1, 1e-2, (0.9, 0.99)).param_groups
    # 1 tied wte/lm_head + wpe + per layer (c_attn, attn.c_proj, c_fc, mlp.c_proj) x 2 = 10
    assert len(decay["params"]) == 10 and decay["weight_decay"] == 0.1
    # per layer ln_1 w/b, c_attn b, c_proj b, ln_2 w/b, c_fc b, c_proj b = 8, x 2, + ln_f w/b
    assert len(no_decay["params"]) == 18 and no_decay["weight_decay"] == 0.0


def test_nanogpt_schedule_warms_up_then_decays(cases):
    get_lr = cases.train_nanogpt.get_lr
    lrs = [get_lr(i, 1.0, 0.1, 2, 6) for i in range(8)]
    assert lrs[:2] == pytest.approx([1 / 3, 2 / 3])            # (it + 1) / (warmup + 1)
    assert lrs[2] == pytest.approx(1.0) and lrs[4] == pytest.approx(0.55)   # cos(pi/2): mid
    assert lrs[6] == pytest.approx(0.1) and lrs[7] == 0.1
