"""tg.utils.checkpoint: same gradients, fewer saved bytes (eagerly and in the partitioner)."""
import numpy as np

import tracegrad as tg
from tracegrad.backends import interpreter


def _model():
    tg.manual_seed(0)
    return tg.nn.Sequential(tg.nn.Linear(16, 64), tg.nn.Tanh(), tg.nn.Linear(64, 64),
                            tg.nn.Tanh(), tg.nn.Linear(64, 4))


def _loss(model, x, ckpt):
    h = x
    for i in range(0, 4, 2):
        pair = lambda t, i=i: model[i + 1](model[i](t))
        h = tg.utils.checkpoint(pair, h) if ckpt else pair(h)
    return model[4](h).square().mean()


def test_eager_checkpoint_gradients_equal_plain():
    model = _model()
    x = tg.randn(8, 16, requires_grad=True)   # as torch's reentrant checkpoint needs
    grads = []
    for ckpt in (False, True):
        for p in model.parameters():
            p.grad = None
        _loss(model, x, ckpt).backward()
        grads.append([p.grad.numpy().copy() for p in model.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_partitioner_recomputes_checkpointed_regions():
    model = _model()
    x = tg.randn(8, 16)
    plain = tg.explain(lambda x: _loss(model, x, False), x)
    ckpt = tg.explain(lambda x: _loss(model, x, True), x)
    assert ckpt.saved_bytes < plain.saved_bytes
    # the backward programs compute the same gradients
    a = interpreter.run(plain.backward, plain.backward_inputs())
    b = interpreter.run(ckpt.backward, ckpt.backward_inputs())
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)


def test_checkpoint_without_grad_inputs_warns_like_torch():
    import pytest
    model = _model()
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = tg.utils.checkpoint(lambda t: model[0](t), tg.randn(2, 16))
    assert not out.requires_grad


def test_dropout_in_a_checkpoint_recomputes_the_same_mask():
    """preserve_rng_state (torch's default): the recomputation restores the RNG state the
    forward saw, so gradients equal the unchecked region's, eagerly and compiled, and the
    random stream after backward is the same as without checkpointing."""
    drop, lin = tg.nn.Dropout(0.5), tg.nn.Linear(6, 6)
    x0 = tg.randn(4, 6)

    def region(t):
        return drop(lin(t)).tanh()

    def run(checkpointed, compiled=False, preserve=True):
        tg.manual_seed(3)
        x = x0.clone().requires_grad_(True)
        lin.zero_grad()

        def step(x):
            y = (tg.utils.checkpoint(region, x, preserve_rng_state=preserve) if checkpointed
                 else region(x))
            (y * y).sum().backward()
            return y
        (tg.compile(step) if compiled else step)(x)
        return x.grad.numpy().copy(), lin.weight.grad.numpy().copy(), tg.rand(3).numpy()

    ref = run(False)
    for got in (run(True), run(True, compiled=True)):
        for a, b in zip(ref, got):
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
    redrawn = run(True, preserve=False)   # a new mask in the recomputation: other gradients
    assert not np.allclose(redrawn[0], ref[0], atol=1e-3)
