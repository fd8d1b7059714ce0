"""Small torch.Tensor methods ported scripts call (dtype shorthands, sizes, linear-algebra
aliases), and the NotBuiltError every other torch 2.13 Tensor method tracegrad lacks gives
(tracegrad/_surface_misc.py).  Expected values recorded from torch 2.13.0 (CPU)."""
from __future__ import annotations

import numpy as np
import pytest

import tracegrad as tg
from tracegrad._torch_names import TORCH_TENSOR_NAMES


def _x():
    return tg.tensor([[1.5, -2.0], [3.0, 4.0]], requires_grad=True)


def test_dtype_shorthands_as_torch():
    x = _x()
    # torch 2.13: byte() wraps -2.0 to 254 on this CPU; char/short keep the sign
    assert x.byte().tolist() == [[1, 254], [3, 4]] and x.byte().dtype is tg.uint8
    assert x.char().tolist() == [[1, -2], [3, 4]] and x.char().dtype is tg.int8
    assert x.short().dtype is tg.int16 and x.byte().grad_fn is None
    assert x.cfloat().dtype is tg.complex64 and x.cfloat().grad_fn.name() == "ToCopyBackward0"
    assert x.cdouble().dtype is tg.complex128


def test_sizes_as_torch():
    x = _x()
    # torch 2.13: 4 4 16 2 True; uint8 False, complex64 True, bool False; f64 8; bool[3] 3
    assert (x.element_size(), x.itemsize, x.nbytes, x.ndimension(), x.is_signed()) == \
        (4, 4, 16, 2, True)
    assert [tg.ones(1, dtype=d).is_signed() for d in (tg.uint8, tg.complex64, tg.bool)] == \
        [False, True, False]
    assert tg.ones(3, dtype=tg.float64).element_size() == 8
    assert tg.ones(3, dtype=tg.bool).nbytes == 3


def test_positive_reshape_as_and_linalg_aliases():
    x = _x()
    assert x.positive() is x
    with pytest.raises(RuntimeError, match=r"The `\+` operator, on a bool tensor is not "
                                           r"supported\."):
        tg.ones(2, dtype=tg.bool).positive()
    r = x.reshape_as(tg.ones(4))
    assert r.shape == (4,) and r.grad_fn.name() == "ViewBackward0"
    # torch 2.13: inverse [[0.3333, 0.1667], [-0.25, 0.125]], det 12, slogdet (1, 2.4849)
    np.testing.assert_allclose(x.inverse().detach().numpy(),
                               [[1 / 3, 1 / 6], [-0.25, 0.125]], rtol=1e-6)
    assert x.det().item() == pytest.approx(12.0)
    sign, logabsdet = x.slogdet()
    assert sign.item() == 1.0 and logabsdet.item() == pytest.approx(np.log(12.0), rel=1e-6)
    x.det().backward()   # d det / dX = det * inv(X)^T
    np.testing.assert_allclose(x.grad.numpy(), 12 * np.linalg.inv(x.detach().numpy()).T,
                               rtol=1e-5)


@pytest.mark.parametrize("name", ["i0", "to_sparse", "storage", "mvlgamma_", "ger", "qr"])
def test_a_torch_method_we_lack_says_so(name):
    x = _x()
    assert name in TORCH_TENSOR_NAMES
    with pytest.raises(NotImplementedError, match=rf"^Tensor\.{name} is not built in "
                                                  r"tracegrad: .*docs/porting\.md"):
        getattr(x, name)
    assert not hasattr(x, name) and not hasattr(tg.Tensor, name)   # an AttributeError too


def test_the_list_holds_only_names_we_lack():
    have = set(dir(tg.Tensor))
    for name in TORCH_TENSOR_NAMES:
        assert not hasattr(tg.Tensor, name), name
    assert {"byte", "element_size", "nbytes", "positive", "inverse"} <= have
