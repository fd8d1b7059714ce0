"""Issue 15's audit, the cases no other test pins exactly: compiled dropout draws eager's
masks bit for bit for the same `tg.manual_seed`, and a small MLP with dropout and
clip_grad_norm_ trained by SGD for 5 steps gives eager's losses loss by loss (the interpreter
bit for bit; XLA may round a reduction differently, so within 1e-6)."""
import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn.functional as F

EXECUTORS = ["interpreter", "jax"]


def _masks(compiled: bool, executor: str) -> list:
    tg.manual_seed(7)
    f = lambda x: F.dropout(x, 0.5, training=True)   # noqa: E731
    f = tg.compile(f, executor=executor) if compiled else f
    x = tg.ones(4, 64)
    return [f(x).numpy().copy() for _ in range(3)]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_compiled_dropout_draws_eager_masks_bit_for_bit(executor):
    eager, compiled = _masks(False, executor), _masks(True, executor)
    for e, c in zip(eager, compiled):
        assert e.tobytes() == c.tobytes()
        assert set(np.unique(e)) == {0.0, 2.0}   # kept elements scaled by 1 / (1 - p)
    assert eager[0].tobytes() != eager[1].tobytes()   # the stream advances per call


def _train(compiled: bool, executor: str):
    tg.manual_seed(3)
    model = tg.nn.Sequential(tg.nn.Linear(6, 16), tg.nn.ReLU(), tg.nn.Dropout(0.4),
                             tg.nn.Linear(16, 3))
    opt = tg.optim.SGD(model.parameters(), lr=0.5)
    x, y = tg.randn(10, 6), tg.randint(0, 3, (10,))

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        tg.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        return loss.detach()

    run = tg.compile(step, executor=executor) if compiled else step
    losses = [run(x, y).item() for _ in range(5)]
    return losses, [p.detach().numpy().copy() for p in model.parameters()], tg.rand(4).numpy()


@pytest.mark.parametrize("executor", EXECUTORS)
def test_mlp_with_dropout_and_clipping_matches_eager_loss_by_loss(executor):
    (eager, e_params, e_next), (comp, c_params, c_next) = (_train(False, executor),
                                                           _train(True, executor))
    if executor == "interpreter":
        assert comp == eager
    else:
        np.testing.assert_allclose(comp, eager, rtol=1e-6)
    for e, c in zip(e_params, c_params):
        np.testing.assert_allclose(c, e, rtol=1e-5, atol=1e-7)
    assert c_next.tobytes() == e_next.tobytes()   # the same draws were taken from the stream
    assert len(set(eager)) == 5
