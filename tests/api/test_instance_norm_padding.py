"""nn.InstanceNorm1d/2d/3d, F.instance_norm and the padding layers against torch 2.13
(values and messages recorded with torch 2.13.0+cpu) and NumPy's np.pad; tg.finfo/iinfo
and broadcast_shapes/broadcast_tensors."""
import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn as nn


def _x():
    return tg.arange(2 * 2 * 3 * 3, dtype=tg.float32).reshape(2, 2, 3, 3) ** 1.5


def test_instance_norm_running_stats_and_eval_match_torch():
    m = nn.InstanceNorm2d(2, affine=True, track_running_stats=True, momentum=0.2)
    out = m(_x())
    # torch 2.13
    assert out[0, 0, 0].tolist() == pytest.approx([-1.2393, -1.1066, -0.8639], abs=1e-4)
    assert m.running_mean.tolist() == pytest.approx([11.3062, 22.0619], abs=1e-4)
    assert m.running_var.tolist() == pytest.approx([44.2624, 74.9266], abs=1e-4)
    assert m.num_batches_tracked.item() == 0   # torch counts only in BatchNorm
    m.eval()
    assert m(_x())[1, 1, 1].tolist() == pytest.approx([16.4342, 17.3912, 18.3638], abs=1e-4)


def test_instance_norm_matches_numpy_and_gradients_flow():
    x = np.random.default_rng(0).standard_normal((2, 3, 5)).astype(np.float32)
    xt = tg.tensor(x, requires_grad=True)
    m = nn.InstanceNorm1d(3, affine=True)
    out = m(xt)
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-5, atol=1e-5)
    out.pow(3).sum().backward()
    assert xt.grad.shape == (2, 3, 5) and m.weight.grad.shape == (3,)
    # unbatched (C, L) input, as torch
    np.testing.assert_allclose(m(tg.tensor(x[0])).detach().numpy(), ref[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("make, x, message", [   # torch 2.13's messages
    (lambda: nn.InstanceNorm2d(3), tg.ones(2, 3), r"expected 3D or 4D input \(got 2D input\)"),
    (lambda: nn.InstanceNorm2d(3), tg.ones(2, 3, 4, 4, 4),
     r"expected 3D or 4D input \(got 5D input\)"),
    (lambda: nn.InstanceNorm2d(3, affine=True), tg.ones(2, 4, 5, 5),
     r"expected input's size at dim=1 to match num_features \(3\), but got: 4."),
    (lambda: nn.InstanceNorm2d(3), tg.ones(2, 3, 1, 1),
     r"Expected more than 1 spatial element when training, got input size "
     r"torch.Size\(\[2, 3, 1, 1\]\)"),
])
def test_instance_norm_errors_match_torch(make, x, message):
    """torch's words after the layer's name, then the caller's line."""
    with pytest.raises(ValueError, match="^InstanceNorm2d: " + message) as err:
        make()(x)
    assert "test_instance_norm_padding.py" in str(err.value)


def test_instance_norm_channel_mismatch_without_affine_warns_as_torch():
    with pytest.warns(UserWarning, match="does not match num_features"):
        assert nn.InstanceNorm1d(3)(tg.ones(2, 4, 5)).shape == (2, 4, 5)


def test_reprs_match_torch():
    # torch 2.13
    assert repr(nn.InstanceNorm2d(3)) == ("InstanceNorm2d(3, eps=1e-05, momentum=0.1, "
                                          "affine=False, bias=False, track_running_stats=False)")
    assert repr(nn.ReflectionPad2d(2)) == "ReflectionPad2d((2, 2, 2, 2))"
    assert repr(nn.ReflectionPad2d((1, 2, 3, 4))) == "ReflectionPad2d((1, 2, 3, 4))"
    assert repr(nn.ReplicationPad2d(1)) == "ReplicationPad2d((1, 1, 1, 1))"
    assert repr(nn.ZeroPad2d(1)) == "ZeroPad2d((1, 1, 1, 1))"
    assert repr(nn.ConstantPad2d(1, 3.5)) == "ConstantPad2d(padding=(1, 1, 1, 1), value=3.5)"
    assert repr(nn.CircularPad2d(1)) == "CircularPad2d((1, 1, 1, 1))"


@pytest.mark.parametrize("layer, np_mode", [
    (nn.ReflectionPad2d((1, 2, 2, 0)), "reflect"), (nn.ReplicationPad2d((1, 2, 2, 0)), "edge"),
    (nn.CircularPad2d((1, 2, 2, 0)), "wrap"), (nn.ZeroPad2d((1, 2, 2, 0)), "constant")])
def test_padding_layers_match_numpy(layer, np_mode):
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(1, 2, 3, 4)
    ref = np.pad(x, ((0, 0), (0, 0), (2, 0), (1, 2)), mode=np_mode)
    np.testing.assert_array_equal(layer(tg.tensor(x)).numpy(), ref)


def test_1d_3d_and_constant_padding():
    x = tg.arange(6, dtype=tg.float32).reshape(1, 2, 3)
    assert nn.ReflectionPad1d(1)(x)[0, 0].tolist() == [1., 0., 1., 2., 1.]
    assert nn.ConstantPad1d((0, 2), -1.0)(x)[0, 1].tolist() == [3., 4., 5., -1., -1.]
    assert nn.ReplicationPad3d(1)(tg.ones(1, 1, 2, 2, 2)).shape == (1, 1, 4, 4, 4)
    with pytest.raises(ValueError, match="padding must be an int or a tuple of 4 ints"):
        nn.ReflectionPad2d((1, 2))


def test_reflection_pad_too_large_names_pad():
    with pytest.raises(ValueError, match=r"padding size should be less than the corresponding "
                                         r"input dimension"):
        nn.ReflectionPad2d(3)(tg.ones(1, 1, 3, 3))


def test_finfo_iinfo_match_torch():
    f = tg.finfo(tg.float32)
    # torch 2.13
    assert repr(f) == ("finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, "
                       "eps=1.19209e-07, smallest_normal=1.17549e-38, tiny=1.17549e-38, "
                       "dtype=float32)")
    b = tg.finfo(tg.bfloat16)
    assert (b.eps, b.max, b.tiny, b.resolution, b.bits, b.dtype) == (
        0.0078125, 3.3895313892515355e+38, 1.1754943508222875e-38, 0.01, 16, "bfloat16")
    assert tg.finfo().dtype == "float32"
    assert repr(tg.iinfo(tg.int64)) == "iinfo(min=-9.22337e+18, max=9.22337e+18, dtype=int64)"
    with pytest.raises(TypeError, match="torch.finfo\\(\\) requires a floating point input"):
        tg.finfo(tg.int32)
    with pytest.raises(TypeError, match="torch.iinfo\\(\\) requires an integer input"):
        tg.iinfo(tg.float32)


def test_broadcast_shapes_and_tensors_match_torch():
    assert tg.broadcast_shapes((2, 1), (3,), 1) == tg.Size([2, 3])
    with pytest.raises(RuntimeError) as err:
        tg.broadcast_shapes((2, 3), (4, 3))
    assert str(err.value) == ("Attempting to broadcast a dimension of length 4 at -2! "  # torch 2.13
                              "Mismatching argument at index 1 had (4, 3); but expected shape "
                              "should be broadcastable to [2, 3]")
    a = tg.ones(3, 1, requires_grad=True)
    x, y = tg.broadcast_tensors(a, tg.arange(4.0))
    assert x.shape == y.shape == (3, 4) and y[2].tolist() == [0., 1., 2., 3.]
    x.sum().backward()
    assert a.grad.tolist() == [[4.0]] * 3
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of "
                                           r"tensor b \(4\) at non-singleton dimension 0"):
        tg.broadcast_tensors(tg.ones(3), tg.ones(4))
