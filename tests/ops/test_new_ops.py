"""New ops and nn surface of issue 16 against values recorded from torch 2.13: add/sub alpha,
broadcast_to, trace, select, repeat_interleave, median, isin, logsigmoid, pad circular,
interpolate, unfold/fold, pixel_shuffle, bilinear, channel dropout, in-place math methods,
parameter containers and nn.init."""
import math

import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn as nn
import tracegrad.nn.functional as F

# torch 2.13 (tests/ops/test_new_ops.py's recording script: the same calls under torch)
TORCH = {
    'nearest': [[12.0, 13.0, 14.0], [12.0, 13.0, 14.0], [16.0, 17.0, 18.0], [16.0, 17.0, 18.0], [20.0, 21.0, 22.0]],
    'bilinear': [[0.0, 0.35714, 0.92857, 1.5, 2.07143, 2.64286, 3.0], [1.6, 1.95714, 2.52857, 3.1, 3.67143, 4.24286, 4.6], [4.0, 4.35714, 4.92857, 5.5, 6.07143, 6.64286, 7.0], [6.4, 6.75714, 7.32857, 7.9, 8.47143, 9.04286, 9.4], [8.0, 8.35714, 8.92857, 9.5, 10.07143, 10.64286, 11.0]],
    'bilinear_ac': [[12.0, 13.5, 15.0], [14.66667, 16.16667, 17.66667], [17.33333, 18.83333, 20.33333], [20.0, 21.5, 23.0]],
    'bilinear_sf': [[0.0, 0.5, 1.16667, 1.83333, 2.5, 3.0], [2.0, 2.5, 3.16667, 3.83333, 4.5, 5.0], [4.66667, 5.16667, 5.83333, 6.5, 7.16667, 7.66667], [7.33333, 7.83333, 8.5, 9.16667, 9.83333, 10.33333]],
    'linear': [0.3333333134651184, 2.0, 3.6666665077209473],
    'nexact': [[0.0, 2.0, 3.0], [8.0, 10.0, 11.0]],
    'unfold_shape': [1, 12, 4],
    'unfold': [[0.0, 0.0, 0.0, 4.0], [0.0, 0.0, 5.0, 6.0], [0.0, 0.0, 7.0, 0.0], [0.0, 0.0, 0.0, 8.0], [1.0, 2.0, 9.0, 10.0], [3.0, 0.0, 11.0, 0.0], [0.0, 0.0, 0.0, 16.0], [0.0, 0.0, 17.0, 18.0], [0.0, 0.0, 19.0, 0.0], [0.0, 12.0, 0.0, 20.0], [13.0, 14.0, 21.0, 22.0], [15.0, 0.0, 23.0, 0.0]],
    'fold': [[12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0], [20.0, 21.0, 22.0, 23.0]],
    'bilinear_grad': [[8.4571, 13.4429, 18.7, 22.4], [44.6143, 51.6857, 57.6, 60.3], [70.8571, 78.4429, 83.7, 84.8]],
    'foldunfold_grad': [[0.0, 2.0, 4.0, 3.0], [8.0, 20.0, 24.0, 14.0], [8.0, 18.0, 20.0, 11.0]],
    'pixel_shuffle': [[72.0, 78.0, 73.0, 79.0, 74.0, 80.0], [84.0, 90.0, 85.0, 91.0, 86.0, 92.0], [75.0, 81.0, 76.0, 82.0, 77.0, 83.0], [87.0, 93.0, 88.0, 94.0, 89.0, 95.0]],
    'bilinear_f': [[6.2, 16.8, 27.4], [17.4, 53.6, 89.8]],
    'logsigmoid': [-100.0, -1.3132617473602295, -0.6931471824645996, -0.3132616877555847, -2.06115369216775e-09],
    'logsigmoid_grad': [0.7310585975646973, 0.3775406777858734, 0.11920291930437088],
    'circular': [[[1.0, 2.0, 0.0, 1.0, 2.0, 0.0], [4.0, 5.0, 3.0, 4.0, 5.0, 3.0]]],
}


def _close(a, b, tol=1e-4):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b), atol=tol)


IM = tg.arange(1 * 2 * 3 * 4.0).reshape(1, 2, 3, 4)


def test_interpolate_matches_torch():
    _close(F.interpolate(IM, size=(5, 3), mode="nearest")[0, 1].tolist(), TORCH["nearest"])
    _close(F.interpolate(IM, size=(5, 7), mode="bilinear")[0, 0].tolist(), TORCH["bilinear"])
    _close(F.interpolate(IM, size=(4, 3), mode="bilinear", align_corners=True)[0, 1].tolist(),
           TORCH["bilinear_ac"])
    _close(F.interpolate(IM, scale_factor=1.5, mode="bilinear")[0, 0].tolist(),
           TORCH["bilinear_sf"])
    _close(F.interpolate(tg.arange(5.0).reshape(1, 1, 5), size=3, mode="linear").reshape(-1)
           .tolist(), TORCH["linear"])
    _close(F.interpolate(IM, size=(2, 3), mode="nearest-exact")[0, 0].tolist(), TORCH["nexact"])
    up = nn.Upsample(scale_factor=2)(IM)
    assert up.shape == (1, 2, 6, 8) and up[0, 0, 1, 1].item() == 0.0 and up[0, 0, 2, 2].item() == 5.0
    a = IM.clone().requires_grad_()
    (F.interpolate(a, size=(5, 7), mode="bilinear") * tg.arange(35.0).reshape(5, 7)).sum().backward()
    _close(a.grad[0, 0].tolist(), TORCH["bilinear_grad"], 1e-3)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(IM)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(IM, size=2, align_corners=True)
    with pytest.raises(NotImplementedError, match="'bicubic'"):
        F.interpolate(IM, size=2, mode="bicubic")


def test_unfold_fold_match_torch():
    u = F.unfold(IM, (2, 3), padding=1, stride=(2, 1), dilation=(1, 2))
    assert list(u.shape) == TORCH["unfold_shape"]
    _close(u[0, :, :4].tolist(), TORCH["unfold"])
    _close(F.fold(u, (3, 4), (2, 3), padding=1, stride=(2, 1), dilation=(1, 2))[0, 1].tolist(),
           TORCH["fold"])
    b = IM.clone().requires_grad_()
    (F.fold(F.unfold(b, 2), (3, 4), 2) * tg.arange(12.0).reshape(3, 4)).sum().backward()
    _close(b.grad[0, 0].tolist(), TORCH["foldunfold_grad"])
    with pytest.raises(RuntimeError, match="divisible by the product of kernel_size"):
        F.fold(tg.ones(1, 5, 4), (3, 3), 2)


def test_pixel_shuffle_bilinear_logsigmoid_circular_pad():
    x = tg.arange(2 * 8 * 2 * 3.0).reshape(2, 8, 2, 3)
    _close(F.pixel_shuffle(x, 2)[1, 1].tolist(), TORCH["pixel_shuffle"])
    assert tg.equal(F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2), x)
    assert nn.PixelShuffle(2)(x).shape == (2, 2, 4, 6) and repr(nn.PixelShuffle(2)) == \
        "PixelShuffle(upscale_factor=2)"
    w = tg.arange(3 * 2 * 4.0).reshape(3, 2, 4) / 10
    _close(F.bilinear(tg.ones(5, 2), tg.arange(20.0).reshape(5, 4), w, tg.tensor([1.0, 2, 3]))[:2]
           .tolist(), TORCH["bilinear_f"])
    m = nn.Bilinear(20, 30, 40)
    assert m.weight.shape == (40, 20, 30) and m.bias.shape == (40,)
    assert float(m.weight.abs().max()) <= 1 / math.sqrt(20)
    assert repr(nn.Bilinear(2, 3, 4)) == ("Bilinear(in1_features=2, in2_features=3, "
                                          "out_features=4, bias=True)")              # torch 2.13
    _close(F.logsigmoid(tg.tensor([-100.0, -1, 0, 1, 20])).tolist(), TORCH["logsigmoid"], 1e-6)
    t = tg.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    F.logsigmoid(t).sum().backward()
    _close(t.grad.tolist(), TORCH["logsigmoid_grad"], 1e-6)
    _close(F.pad(tg.arange(6.0).reshape(1, 2, 3), (2, 1), mode="circular").tolist(),
           TORCH["circular"])
    assert F.pad(tg.arange(6.0).reshape(1, 2, 3), (-1, 1), mode="circular").tolist() == \
        [[[1.0, 2.0, 1.0], [4.0, 5.0, 4.0]]]                                    # torch 2.13
    with pytest.raises(ValueError, match="wrapping around more than once"):
        F.pad(tg.ones(1, 2, 3), (4, 0), mode="circular")


def test_channel_dropout_drops_whole_channels():
    tg.manual_seed(0)
    x = tg.ones(8, 16, 5, 5)
    y = nn.Dropout2d(0.5)(x)
    per_channel = y.numpy().reshape(8, 16, 25)
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert (per_channel.min(-1) == per_channel.max(-1)).all()   # one draw per channel
    assert 0.3 < (per_channel[..., 0] == 0).mean() < 0.7
    assert nn.Dropout2d(0.5).eval()(x) is x and repr(nn.Dropout2d(0.3)) == \
        "Dropout2d(p=0.3, inplace=False)"
    assert (F.dropout1d(tg.ones(4, 3, 7), 0.5).numpy().std(-1) == 0).all()
    assert F.dropout3d(tg.ones(2, 3, 2, 2, 2), 0.5).shape == (2, 3, 2, 2, 2)
    with pytest.raises(RuntimeError, match="Expected 3D or 4D input"):
        F.dropout2d(tg.ones(3), 0.5)


def test_add_sub_alpha_and_shape_functions():
    x = tg.tensor([[1.0, 2, 3], [4, 5, 6]])
    assert tg.add(x, 1, alpha=2).tolist() == [[3.0, 4, 5], [6, 7, 8]]      # torch 2.13
    assert tg.sub(x, x, alpha=0.5).tolist() == [[0.5, 1, 1.5], [2, 2.5, 3]]
    assert x.add(x, alpha=2).tolist() == [[3.0, 6, 9], [12, 15, 18]]
    y = x.clone()
    y.add_(x, alpha=-1)
    assert y.tolist() == [[0.0] * 3] * 2
    with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha must not "
                                           "be a floating point number."):
        tg.add(tg.tensor([1, 2]), 1, alpha=0.5)
    assert tg.broadcast_to(tg.tensor([1, 2]), (3, 2)).tolist() == [[1, 2]] * 3
    assert tg.trace(x[:, :2]).item() == 6.0 and tg.trace(x).item() == 6.0
    assert tg.trace(tg.tensor([[1, 2], [3, 4]])).dtype is tg.int64
    with pytest.raises(RuntimeError, match="trace: expected a matrix, but got tensor with dim 1"):
        tg.trace(tg.ones(3))
    assert tg.select(x, 1, -1).tolist() == [3.0, 6.0] and x.select(0, 1).tolist() == [4, 5, 6]
    a = x.clone().requires_grad_()
    a.select(1, 2).sum().backward()
    assert a.grad.tolist() == [[0.0, 0, 1], [0, 0, 1]]


def test_repeat_interleave_median_isin():
    x = tg.tensor([[1.0, 2, 3], [4, 5, 6]])
    # torch 2.13
    assert tg.repeat_interleave(tg.tensor([1, 2, 3]), 2).tolist() == [1, 1, 2, 2, 3, 3]
    assert tg.repeat_interleave(x, 2, dim=0).tolist() == [[1, 2, 3], [1, 2, 3], [4, 5, 6],
                                                          [4, 5, 6]]
    assert tg.repeat_interleave(x, tg.tensor([1, 2]), dim=0).tolist() == [[1, 2, 3], [4, 5, 6],
                                                                          [4, 5, 6]]
    assert tg.repeat_interleave(tg.tensor([2, 0, 1])).tolist() == [0, 0, 2]
    assert tg.repeat_interleave(x, 2).shape == (12,)
    a = x.clone().requires_grad_()
    a.repeat_interleave(3, dim=1).sum().backward()
    assert a.grad.tolist() == [[3.0] * 3] * 2
    with pytest.raises(RuntimeError, match="repeats must have the same size as input along dim"):
        tg.repeat_interleave(x, tg.tensor([1, 2, 3]), dim=0)
    assert tg.median(tg.tensor([3.0, 1, 2, 4])).item() == 2.0            # the lower median
    m = tg.median(x, dim=1)
    assert m.values.tolist() == [2.0, 5.0] and m.indices.tolist() == [1, 1]
    k = tg.median(tg.tensor([[1.0, 5], [3, 2]]), 0, keepdim=True)
    assert k.values.tolist() == [[1.0, 2.0]] and k.indices.tolist() == [[0, 1]]
    assert tg.isin(tg.tensor([1, 2, 3, 4]), tg.tensor([2, 4])).tolist() == [False, True, False,
                                                                            True]
    assert tg.isin(tg.tensor([1, 2]), 2).tolist() == [False, True]
    assert tg.isin(tg.tensor([1, 2, 3]), tg.tensor([2]), invert=True).tolist() == [True, False,
                                                                                   True]


def test_inplace_math_methods():
    y = tg.tensor([1.0, 4.0])
    assert y.sqrt_() is y and y.tolist() == [1.0, 2.0]
    y.lt_(1.5)
    assert y.tolist() == [1.0, 0.0] and y.dtype is tg.float32            # torch 2.13
    w = tg.ones(3)
    w.addcmul_(tg.ones(3), tg.ones(3) * 2, value=0.5)
    assert w.tolist() == [2.0] * 3
    w.clamp_(max=1.5).lerp_(tg.zeros(3), 0.5)
    assert w.tolist() == [0.75] * 3
    w.addcdiv_(tg.ones(3), tg.ones(3) * 4, value=2)
    assert w.tolist() == [1.25] * 3
    z = tg.ones(2, 3)
    z.transpose_(0, 1)
    assert z.shape == (3, 2)
    z.unsqueeze_(0).squeeze_(0).t_()
    assert z.shape == (2, 3)
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    b.sin_()
    assert b.grad_fn.name() == "SinBackward0"
    b.sum().backward()
    _close(a.grad.tolist(), [math.cos(1.0), math.cos(2.0)], 1e-6)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        a.exp_()
    v = tg.zeros(4)
    v[1:3].exp_()
    assert v.tolist() == [0.0, 1.0, 1.0, 0.0]                            # writes through a view
    with pytest.raises(NotImplementedError, match="transpose_: changing the shape in place"):
        tg.ones(2, 3)[0:1].transpose_(0, 1)
    # every torch in-place method whose out-of-place op exists here, and torch's aliases
    for name in ("abs_", "cos_", "exp_", "log_", "sigmoid_", "tanh_", "floor_", "round_",
                 "pow_", "remainder_", "logical_not_", "cumsum_", "tril_", "nan_to_num_",
                 "absolute_", "arccos_", "multiply_", "negative_", "swapaxes_", "fix_"):
        assert callable(getattr(tg.Tensor, name)), name
    assert tg.tensor([-2.0]).absolute().tolist() == [2.0]
    assert tg.tensor([2.0]).multiply_(3).tolist() == [6.0]


def test_parameter_containers():
    pl = nn.ParameterList([nn.Parameter(tg.ones(2)), tg.zeros(3)])
    pl.append(nn.Parameter(tg.ones(1)))
    assert len(pl) == 3 and type(pl[1]) is nn.Parameter
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]       # torch 2.13
    assert repr(pl) == ("ParameterList(\n"
                        "    (0): Parameter containing: [torch.float32 of size 2]\n"
                        "    (1): Parameter containing: [torch.float32 of size 3]\n"
                        "    (2): Parameter containing: [torch.float32 of size 1]\n)")
    pd = nn.ParameterDict({"a": nn.Parameter(tg.ones(2)), "b": nn.Parameter(tg.zeros(2, 3))})
    assert list(pd.keys()) == ["a", "b"] and "a" in pd and pd["b"].shape == (2, 3)
    assert repr(pd) == ("ParameterDict(\n"
                        "    (a): Parameter containing: [torch.FloatTensor of size 2]\n"
                        "    (b): Parameter containing: [torch.FloatTensor of size 2x3]\n)")
    m = nn.Module()
    m.pl, m.pd = pl, pd
    assert list(m.state_dict()) == ["pl.0", "pl.1", "pl.2", "pd.a", "pd.b"]
    opt = tg.optim.SGD(m.parameters(), lr=1.0)
    (pd["a"].sum() + pl[0].sum()).backward()
    opt.step()
    assert pd["a"].tolist() == [0.0, 0.0] and pl[0].tolist() == [0.0, 0.0]


def test_init_functions():
    w = tg.empty(3, 5)
    nn.init.eye_(w)
    assert w.tolist() == np.eye(3, 5).tolist()
    w = tg.empty(4, 2, 3, 3)
    nn.init.dirac_(w, groups=2)
    assert w[:, :, 1, 1].tolist() == [[1, 0], [0, 1], [1, 0], [0, 1]]   # torch 2.13
    w = tg.empty(6, 4)
    nn.init.sparse_(w, 0.5)
    assert (w == 0).sum(0).tolist() == [3, 3, 3, 3]                      # ceil(0.5 * 6) per column
    w = tg.empty(3, 7)
    nn.init.orthogonal_(w, gain=2)
    _close((w @ w.t()).tolist(), 4 * np.eye(3), 1e-5)
    w = tg.empty(100000)
    tg.manual_seed(0)
    nn.init.trunc_normal_(w, mean=1, std=2, a=-1, b=2)
    assert w.min().item() >= -1 and w.max().item() <= 2
    # torch 2.13 on 1e6 draws: mean 0.5865, std 0.8309 (the truncated normal's moments)
    assert abs(w.mean().item() - 0.5865) < 0.01 and abs(w.std().item() - 0.8309) < 0.01
    for fn, args in ((nn.init.eye_, ()), (nn.init.sparse_, (0.5,))):
        with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
            fn(tg.empty(2, 2, 2), *args)
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions"):
        nn.init.dirac_(tg.empty(2, 2))
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions"):
        nn.init.orthogonal_(tg.empty(3))
    with pytest.raises(ValueError, match=r"Mode fan_x not supported, please use one of "
                                         r"\['fan_in', 'fan_out'\]"):
        nn.init.kaiming_uniform_(tg.empty(3, 4), mode="fan_x")
    assert nn.init.calculate_gain("conv_transpose2d") == 1 and nn.init.calculate_gain("selu") == 0.75
