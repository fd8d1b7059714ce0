"""The issue-8 examples: the char transformer (`--quick`) and the custom Function demo.

The quick run is a smoke test of the plumbing (data, compiled step, schedule, eval,
sampling, checkpoint, plot); the real run's numbers are measured by hand (README).
"""
import gc
import importlib.util
import math
import weakref
import pathlib

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.autograd import Function

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_under_test", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def char():
    return _load("train_char_transformer")


@pytest.fixture(scope="module")
def quick_run(char, tmp_path_factory):
    out = tmp_path_factory.mktemp("char")
    return out, char.main(["--quick", "--out", str(out)])


def test_text_is_deterministic_ascii_docstrings(char):
    a, b = char.stdlib_docstrings(20_000), char.stdlib_docstrings(20_000)
    assert a == b and len(a) == 20_000
    assert set(a) <= {chr(c) for c in range(32, 127)} | {"\n"}
    assert "Return" in a       # English prose, not code


def test_unigram_baseline_and_batches(char):
    data = char.CharData("abca" * 20 + "aaab" * 5, val_fraction=0.2)
    assert data.vocab == ["a", "b", "c"] and len(data.val) == 20
    counts = np.array([40, 20, 20]) + 1.0       # train: the first 80 characters, add-one
    p = counts / counts.sum()
    expected = -(15 * np.log(p[0]) + 5 * np.log(p[1])) / 20      # val: "aaab" x 5
    assert data.unigram_baseline() == pytest.approx(expected, rel=1e-12)
    x, y = data.batch(data.train, 4, 6, np.random.default_rng(0))
    assert x.shape == y.shape == (4, 6) and x.dtype == np.int64
    np.testing.assert_array_equal(x[:, 1:], y[:, :-1])     # y is x shifted by one
    assert data.decode(x[0]) in data.text


def test_quick_run_trains_and_writes_its_outputs(quick_run):
    out, res = quick_run
    hist = res["history"]
    assert len(hist) == 30
    assert math.log(len(res["data"].vocab)) == pytest.approx(hist[0], abs=0.3)   # uniform start
    assert np.mean(hist[-5:]) < hist[0] - 0.6
    assert res["val_points"] == [(30, res["val"])] and res["val"] < hist[0] - 0.6
    assert res["traces"] == 2   # the first call, then the Adam state: the lr schedule is data
    assert (out / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Return the " in (out / "samples.txt").read_text()
    ckpt = tg.load(str(out / "ckpt.tg"))
    assert ckpt["step"] == ckpt["total_steps"] == 30 and len(ckpt["history"]) == 30
    state = res["model"].state_dict()
    np.testing.assert_array_equal(ckpt["model"]["head.weight"].numpy(),
                                  state["head.weight"].numpy())


def test_sampler_window_padding_does_not_change_the_logits(quick_run):
    """The compiled sampler reads position len(ctx)-1 of a zero-padded full window; causal
    attention makes that equal to the model run on the context alone."""
    _, res = quick_run
    model, block = res["model"], res["model"].block
    ctx = np.array([[5, 17, 3, 40, 8]])
    window = np.zeros((1, block), dtype=np.int64)
    window[0, :5] = ctx
    model.eval()
    with tg.no_grad():
        got = res["last_logits"](tg.from_numpy(window), tg.tensor([4])).numpy()[0]
        want = model(tg.from_numpy(ctx)).numpy()[0, -1]
    model.train()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.slow
def test_interrupted_and_resumed_run_equals_the_uninterrupted_one(char, quick_run, tmp_path):
    _, full = quick_run
    char.main(["--quick", "--out", str(tmp_path), "--stop-after", "15"])
    assert tg.load(str(tmp_path / "ckpt.tg"))["step"] == 15
    resumed = char.main(["--quick", "--out", str(tmp_path), "--resume"])
    np.testing.assert_allclose(resumed["history"], full["history"], rtol=1e-6)
    a, b = full["model"].state_dict(), resumed["model"].state_dict()
    for k in a:
        np.testing.assert_allclose(a[k].numpy(), b[k].numpy(), rtol=1e-6, atol=1e-7, err_msg=k)
    with pytest.raises(SystemExit, match="pass --steps 30"):
        char.main(["--quick", "--out", str(tmp_path), "--resume", "--steps", "40"])


def test_custom_function_example(capsys):
    mod = _load("custom_function")
    rng = np.random.default_rng(0)
    mod.check_logsumexp(rng)        # each check raises on a mismatch
    mod.check_ste(rng)
    res = mod.train(epochs=2)
    out = capsys.readouterr().out
    assert "gradcheck LogSumExp (float64, 3x5, dim=1): True" in out
    assert res["traces"] == 2       # the Functions' saved tensors do not leak out of the trace
    assert res["max_loss_diff"] < 1e-5
    n = len(res["losses"]) // 2
    assert np.mean(res["losses"][n:]) < 0.6 * np.mean(res["losses"][:n])
    assert res["test_acc"] > 0.8


def test_logsumexp_function_handles_infinite_rows():
    mod = _load("custom_function")
    x = tg.tensor([[float("-inf"), float("-inf")], [1000.0, 1000.0]], dtype=tg.float64)
    np.testing.assert_array_equal(mod.LogSumExp.apply(x, 1).numpy(),
                                  [float("-inf"), 1000.0 + math.log(2.0)])


def test_backward_frees_a_functions_saved_tensors():
    """Found with this example: ctx.save_for_backward's tensors outlived backward (torch frees
    them), so inside tg.compile they escaped the trace as new state and cost a retrace."""
    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 2

    x = tg.ones(3, requires_grad=True)
    h = x * 3
    saved = weakref.ref(h)
    y = Double.apply(h)
    del h
    y.sum().backward()
    gc.collect()
    assert saved() is None and y.grad_fn is not None
    with pytest.raises(RuntimeError, match="freed"):
        y.grad_fn.saved_tensors


@pytest.mark.slow
@pytest.mark.parametrize("name", ["train_char_lstm", "train_nanogpt"])
def test_quick_runs_of_the_lstm_and_nanogpt_examples_learn(name):
    """Smoke runs of the whole programs (data, loop, eval); the first losses against torch
    are checked in test_examples_match_torch.py."""
    res = _load(name).main(["--quick"])
    assert len(res["history"]) >= 20
    assert res["val"] < res["history"][0]          # validation ends below the first loss
    assert all(np.isfinite(res["history"]))
