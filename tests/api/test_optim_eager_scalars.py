"""Adam/AdamW's and SGD's eager updates do their scalar arithmetic in Python floats (issue 17:
33 ops per Adam parameter became fewer); the values must stay torch's, eagerly and under
tg.compile, where the hyper-parameters are 0-d tensors read as data."""
import numpy as np
import pytest

import tracegrad as tg

GRADS = ([0.3, -0.2, 0.1], [-0.5, 0.4, 0.25], [0.05, 0.6, -0.7])
# torch 2.13: p = [0.5, -1.25, 2.0], lr 0.1, betas (0.8, 0.9), weight_decay 0.1, the three
# gradients above, three steps
TORCH = {"AdamW": [0.4408496022224426, -1.228920340538025, 1.788534164428711],
         "Adam": [0.4304297864437103, -1.2088288068771362, 1.7983713150024414]}  # amsgrad
KW = {"AdamW": dict(weight_decay=0.1), "Adam": dict(weight_decay=0.1, amsgrad=True)}
# torch 2.13, the same start and gradients: SGD lr 0.1, momentum 0.9, nesterov, weight decay 0.1
TORCH["SGD"] = [0.48454079031944275, -1.3053393363952637, 1.8745733499526978]
KW["SGD"] = dict(momentum=0.9, nesterov=True, weight_decay=0.1)


def _opt(name):
    p = tg.tensor([0.5, -1.25, 2.0], requires_grad=True)
    betas = {} if name == "SGD" else dict(betas=(0.8, 0.9))
    return p, getattr(tg.optim, name)([p], lr=0.1, **betas, **KW[name])


@pytest.mark.parametrize("name", sorted(TORCH))
def test_eager_steps_give_torchs_values(name):
    p, opt = _opt(name)
    for g in GRADS:
        p.grad = tg.tensor(g)
        opt.step()
    np.testing.assert_allclose(p.detach().numpy(), TORCH[name], rtol=0, atol=2e-7)


@pytest.mark.parametrize("name", sorted(TORCH))
def test_compiled_steps_match_the_eager_ones(name):
    p, opt = _opt(name)
    step = tg.compile(lambda: opt.step())
    for g in GRADS:
        p.grad = tg.tensor(g)
        step()
    np.testing.assert_allclose(p.detach().numpy(), TORCH[name], rtol=0, atol=2e-7)
