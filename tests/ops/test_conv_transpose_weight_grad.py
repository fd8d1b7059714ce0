"""conv_transpose's weight gradient as a conv of the cotangent with the undilated input
(ir/ops/conv.py `_dilated_input_weight_grad`) against the generic form (the dilated input
convolved with the cotangent) and a direct float64 sum, on both executors."""
import itertools

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.ir.ops import conv as C

F = tg.nn.functional


def _direct_weight_grad(x, w, ct, stride, padding, dilation, output_padding):
    """d(sum(ct * conv_transpose(x, w)))/dw by the definition: every input element scatters
    x[n, c, m] * w[c, o, t] to output position m*stride - padding + t*dilation."""
    nd = x.ndim - 2
    gw = np.zeros(w.shape)
    for m in itertools.product(*map(range, x.shape[2:])):
        for t in itertools.product(*map(range, w.shape[2:])):
            pos = tuple(mi * s - p + ti * d for mi, ti, s, p, d in
                        zip(m, t, stride, padding, dilation))
            if all(0 <= q < n for q, n in zip(pos, ct.shape[2:])):
                xm = x[(slice(None), slice(None)) + m]          # (N, C)
                cq = ct[(slice(None), slice(None)) + pos]       # (N, O)
                gw[(slice(None), slice(None)) + t] += xm.T @ cq
    assert nd == len(stride)
    return gw


CASES = [  # x shape, w shape (C, O, *k), stride, padding, dilation, output_padding
    ((2, 3, 4, 4), (3, 5, 4, 4), (2, 2), (1, 1), (1, 1), (0, 0)),   # DCGAN's layer
    ((2, 3, 3, 5), (3, 2, 3, 2), (3, 2), (1, 0), (1, 1), (2, 1)),
    ((2, 2, 4, 3), (2, 3, 3, 3), (2, 2), (0, 2), (2, 1), (1, 0)),
    ((3, 4, 2, 3), (4, 2, 1, 3), (1, 3), (0, 1), (1, 2), (0, 2)),
]


@pytest.mark.parametrize("executor", ["interpreter", "jax"])
@pytest.mark.parametrize("xs, ws, stride, padding, dilation, output_padding", CASES)
def test_weight_grad_of_conv_transpose(monkeypatch, executor, xs, ws, stride, padding,
                                       dilation, output_padding):
    rng = np.random.default_rng(len(xs) + sum(stride))
    xa, wa = rng.standard_normal(xs), rng.standard_normal(ws)
    fn = F.conv_transpose2d   # (the 1-d / 3-d forms are not built)

    def grads():
        x = tg.tensor(xa, requires_grad=True)
        w = tg.tensor(wa, requires_grad=True)
        y = fn(x, w, stride=stride, padding=padding, dilation=dilation,
               output_padding=output_padding)
        ct = np.cos(np.arange(y.numel())).reshape(y.shape)
        (y * tg.tensor(ct)).sum().backward()
        return x.grad.numpy(), w.grad.numpy(), ct

    monkeypatch.setattr(tg._state, "_executor", executor)
    taken = []
    route = C._dilated_input_weight_grad
    monkeypatch.setattr(C, "_dilated_input_weight_grad", lambda *a: taken.append(1) or route(*a))
    tg.autograd.backward_program.clear_cache()
    gx, gw, ct = grads()
    assert taken, "the conv-of-the-cotangent form was not used"
    np.testing.assert_allclose(gw, _direct_weight_grad(xa, wa, ct, stride, padding, dilation,
                                                       output_padding), rtol=1e-9, atol=1e-9)
    monkeypatch.setattr(C, "_conv_weight_grad", C._generic_weight_grad)   # the old form
    tg.autograd.backward_program.clear_cache()
    gx0, gw0, _ = grads()
    tg.autograd.backward_program.clear_cache()
    np.testing.assert_allclose(gw, gw0, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(gx, gx0)

