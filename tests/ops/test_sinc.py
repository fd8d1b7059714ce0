"""torch.sinc: the op docs/architecture.md adds as its worked example of one declaration.

Values recorded from torch 2.13.0 (CPU):
    x = torch.tensor([-1.5, -0.5, 0.0, 0.25, 1.0, 2.5], dtype=torch.float64, requires_grad=True)
    torch.sinc(x); torch.sinc(x).sum().backward(); x.grad
The generic checks (both executors, jax's jnp.sinc as reference, finite differences, gradgrad,
compile) come from its op-database entry in tests/opdb/elementwise.py.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import tracegrad as tg

X = [-1.5, -0.5, 0.0, 0.25, 1.0, 2.5]
TORCH_SINC = [-0.2122065907891938, 0.6366197723675814, 1.0, 0.9003163161571061,
              3.8981718325193755e-17, 0.12732395447351627]
TORCH_GRAD = [-0.14147106052612907, 1.2732395447351625, 0.0, -0.7728381398822339, -1.0,
              -0.05092958178940638]


@pytest.mark.parametrize("executor", ["interpreter", "jax"])
def test_values_and_gradient_match_torch(executor):
    with _set_executor(executor):
        x = tg.tensor(X, dtype=tg.float64, requires_grad=True)
        y = tg.sinc(x)
        y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), TORCH_SINC, rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(x.grad.numpy(), TORCH_GRAD, rtol=1e-14, atol=1e-16)
    assert y.grad_fn.name() == "SincBackward0"


def test_second_derivative_at_zero_is_exact():
    # torch 2.13 gives NaN at 0 (and -1.19022703 at 0.5, float32); we give the limit -pi^2/3
    x = tg.tensor([0.0, 0.5], requires_grad=True)
    g, = tg.autograd.grad(tg.sinc(x).sum(), x, create_graph=True)
    g.sum().backward()
    np.testing.assert_allclose(g.detach().numpy(), [0.0, -1.2732396125793457], rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), [-math.pi ** 2 / 3, -1.1902270317077637],
                               rtol=1e-6)


def test_integer_input_promotes_and_complex_is_refused():
    assert tg.sinc(tg.tensor([1, 2, 0])).dtype == tg.float32      # torch 2.13: torch.float32
    with pytest.raises(TypeError, match="sinc: not supported for complex"):
        tg.sinc(tg.tensor([1 + 1j]))


class _set_executor:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.old = tg.get_executor()
        tg.set_executor(self.name)

    def __exit__(self, *exc):
        tg.set_executor(self.old)
