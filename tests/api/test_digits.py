"""The demo's compiled training step agrees with the same step run eagerly on real data."""
import importlib.util
import pathlib

import numpy as np

import tracegrad as tg

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


def _load():
    spec = importlib.util.spec_from_file_location("train_digits_under_test", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_compiled_and_eager_digits_steps_agree():
    runs = []
    for compiled in (True, False):
        mod = _load()   # fresh model and optimizer with the same seed
        x_train, y_train, _, _ = mod.load_digits()
        step = mod.train_step if compiled else mod.train_step.fn
        losses = []
        for i in range(8):
            sl = slice(i * mod.BATCH, (i + 1) * mod.BATCH)
            losses.append(step(tg.from_numpy(x_train[sl]), tg.from_numpy(y_train[sl])).item())
        runs.append((losses, [p.detach().numpy().copy() for p in mod.model.parameters()]))
    (lc, pc), (le, pe) = runs
    np.testing.assert_allclose(lc, le, rtol=1e-5, atol=1e-6)
    for a, b in zip(pc, pe):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert lc[-1] < lc[0]


def test_digits_split_is_80_20():
    mod = _load()
    x_train, y_train, x_test, y_test = mod.load_digits()
    assert len(x_train) + len(x_test) == 1797
    assert len(x_test) == 359 and x_train.shape[1] == 64
