"""F.grid_sample and F.affine_grid (tracegrad/nn/functional_sampling.py) against torch 2.13.

Values, input gradients and grid gradients recorded from torch 2.13.0 (CPU) for
``x = arange(6).reshape(1, 1, 2, 3)`` and three sample points, one outside the image.
"""
import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn.functional as F

POINTS = [[[[-0.9, -0.7], [0.25, 0.1], [1.2, 0.6]]]]

# (mode, padding_mode, align_corners): (y, dy/dx, dy/dgrid) of y.sum(); torch 2.13
TORCH = {
    ("bilinear", "zeros", False): ([0.0, 3.175, 0.899999], [0.52, 0.25, 0.15, 0.0, 0.375, 0.405],
                                   [0.0, 0.0, 1.5, 3.0, -6.75, -0.999999]),
    ("bilinear", "border", True): ([0.55, 2.9, 4.4],
                                   [0.765, 0.4225, 0.3125, 0.135, 0.4275, 0.9375],
                                   [1.0, 1.5, 1.0, 1.5, 0.0, 1.5]),
    ("nearest", "zeros", False): ([0.0, 4.0, 0.0], [1.0, 0.0, 0.0, 0.0, 1.0, 0.0], [0.0] * 6),
}


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("case", list(TORCH), ids=lambda c: "-".join(map(str, c)))
def test_grid_sample_values_and_both_gradients_match_torch(case, compiled):
    mode, pad, ac = case

    def run(x, g):
        y = F.grid_sample(x, g, mode=mode, padding_mode=pad, align_corners=ac)
        y.sum().backward()
        return y

    x = tg.arange(6.0).reshape(1, 1, 2, 3).requires_grad_()
    g = tg.tensor(POINTS, requires_grad=True)
    y = (tg.compile(run) if compiled else run)(x, g)
    want_y, want_dx, want_dg = TORCH[case]
    np.testing.assert_allclose(y.detach().numpy().ravel(), want_y, atol=2e-6)
    np.testing.assert_allclose(x.grad.numpy().ravel(), want_dx, atol=2e-6)
    np.testing.assert_allclose(g.grad.numpy().ravel(), want_dg, atol=2e-6)


def test_affine_grid_matches_torch():
    theta = tg.tensor([[[0.5, 0.0, 0.2], [0.0, 2.0, -1.0]]])
    grid = F.affine_grid(theta, (1, 1, 2, 2), align_corners=False)
    assert tuple(grid.shape) == (1, 2, 2, 2)
    np.testing.assert_allclose(grid.numpy().ravel(),                      # torch 2.13
                               [-0.05, -2.0, 0.45, -2.0, -0.05, 0.0, 0.45, 0.0], atol=1e-7)


def test_identity_affine_grid_samples_the_image_back():
    x = tg.tensor(np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32))
    theta = tg.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]] * 2)
    for ac in (False, True):
        y = F.grid_sample(x, F.affine_grid(theta, x.shape, align_corners=ac), align_corners=ac)
        np.testing.assert_allclose(y.numpy(), x.numpy(), atol=1e-5)


def test_grid_gradient_agrees_with_finite_differences():
    rng = np.random.default_rng(1)
    x = tg.tensor(rng.standard_normal((1, 2, 3, 4)))            # float64
    g0 = rng.uniform(-0.8, 0.8, (1, 2, 2, 2))
    g = tg.tensor(g0, requires_grad=True)
    F.grid_sample(x, g, align_corners=False).square().sum().backward()
    eps, num = 1e-6, np.zeros_like(g0)
    for i in np.ndindex(g0.shape):
        d = np.zeros_like(g0)
        d[i] = eps
        f = [F.grid_sample(x, tg.tensor(g0 + s * d)).square().sum().item() for s in (1, -1)]
        num[i] = (f[0] - f[1]) / (2 * eps)
    np.testing.assert_allclose(g.grad.numpy(), num, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"mode": "cubic"}, ValueError,                                       # torch 2.13's words
     "expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'cubic'"),
    ({"padding_mode": "wrap"}, ValueError,
     "expected padding_mode to be 'zeros', 'border', or 'reflection', but got: 'wrap'"),
    ({"padding_mode": "reflection"}, NotImplementedError, "not supported in tracegrad yet"),
    ({"mode": "bicubic"}, NotImplementedError, "not supported in tracegrad yet"),
])
def test_grid_sample_refusals(kwargs, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        F.grid_sample(tg.ones(1, 1, 2, 2), tg.zeros(1, 1, 1, 2), **kwargs)


def test_affine_grid_wrong_theta_shape():
    with pytest.raises(ValueError, match=r"Expected a batch of 2D affine matrices of shape Nx2x3"):
        F.affine_grid(tg.zeros(1, 3, 3), (1, 1, 2, 2))
