"""The CNN demo's compiled training step agrees with the same step run eagerly on real data.

Both runs start from the same seed, so the weights, the dropout masks (drawn from the
global generator, whose key the compiled step lifts and writes back) and therefore the
losses, parameters and batch-norm running statistics must agree step by step.
"""
import importlib.util
import pathlib

import numpy as np

import tracegrad as tg

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_digits_cnn.py"
STEPS = 4


def _load():
    spec = importlib.util.spec_from_file_location("train_digits_cnn_under_test", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(compiled: bool):
    mod = _load()   # fresh model, optimizer and generator key with the same seed
    x_train, y_train, _, _ = mod.load_digits()
    step = mod.train_step if compiled else mod.train_step.fn
    losses = []
    for i in range(STEPS):
        sl = slice(i * mod.BATCH, (i + 1) * mod.BATCH)
        losses.append(step(tg.from_numpy(x_train[sl]), tg.from_numpy(y_train[sl])).item())
    state = {k: v.numpy().copy() for k, v in mod.model.state_dict().items()}
    key = tg._creation._key.numpy().copy()
    return mod, losses, state, key


def test_compiled_and_eager_cnn_steps_agree():
    mod_c, loss_c, state_c, key_c = _run(compiled=True)
    mod_e, loss_e, state_e, key_e = _run(compiled=False)
    assert mod_c.train_step.traces >= 1
    np.testing.assert_allclose(loss_c, loss_e, rtol=1e-5, atol=1e-6)
    assert state_c.keys() == state_e.keys()
    for name in state_c:
        np.testing.assert_allclose(state_c[name], state_e[name], rtol=1e-4, atol=1e-5,
                                   err_msg=name)
    # the running statistics moved, and the step counter counted every step
    assert int(state_c["1.num_batches_tracked"]) == STEPS
    assert not np.allclose(state_c["1.running_mean"], 0.0)
    np.testing.assert_array_equal(key_c, key_e)     # the same number of draws in both runs
    assert loss_c[-1] < loss_c[0]


def test_dropout_masks_follow_the_seed():
    """Two runs from the same seed draw the same masks; another seed changes them (eagerly)."""
    runs = []
    for seed in (0, 0, 1):
        mod = _load()
        tg.manual_seed(seed)
        x_train, y_train, _, _ = mod.load_digits()
        x = tg.from_numpy(x_train[:mod.BATCH])
        runs.append(mod.train_step.fn(x, tg.from_numpy(y_train[:mod.BATCH])).item())
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_eval_mode_is_deterministic_and_uses_running_stats():
    mod = _load()
    x_train, _, _, _ = mod.load_digits()
    x = tg.from_numpy(x_train[:8])
    mod.model.eval()
    with tg.no_grad():
        a, b = mod.model(x).numpy(), mod.model(x).numpy()
    np.testing.assert_array_equal(a, b)      # no dropout, no batch statistics
    assert int(mod.model[1].num_batches_tracked.item()) == 0
    assert mod.model.training is False and mod.model[9].training is False


def test_digits_images_split_80_20():
    mod = _load()
    x_train, y_train, x_test, y_test = mod.load_digits()
    assert x_train.shape[1:] == (1, 8, 8) and x_train.dtype == np.float32
    assert len(x_train) + len(x_test) == 1797 and len(x_test) == 359
    assert 0.0 <= x_train.min() and x_train.max() <= 1.0
