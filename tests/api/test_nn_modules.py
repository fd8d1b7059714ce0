"""tg.nn modules: torch's default initializations, state_dict round trips, train/eval behaviour
of dropout and batch norm (running statistics against a NumPy reference), printing, containers,
and layers against NumPy references.  Module values were checked once against torch 2.13 by
loading the same state_dict; the references below restate torch's formulas.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn as nn
import tracegrad.nn.functional as F


def _np(t):
    return t.detach().numpy()


# ---- default initializations ------------------------------------------------------------------
def _check_uniform(a: np.ndarray, bound: float):
    """Samples of U(-bound, bound): inside the bounds, mean ~ 0, std ~ bound / sqrt(3)."""
    assert np.abs(a).max() <= bound
    n = a.size
    assert abs(a.mean()) < 4 * bound / math.sqrt(3 * n)
    np.testing.assert_allclose(a.std(), bound / math.sqrt(3), rtol=0.06)


def test_linear_init_is_kaiming_uniform():
    tg.manual_seed(0)
    m = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    assert m.weight.shape == (300, 400) and m.bias.shape == (300,)
    _check_uniform(_np(m.weight), bound)
    assert np.abs(_np(m.bias)).max() <= bound and _np(m.bias).std() > bound / 3


@pytest.mark.parametrize("ctor,shape,fan_in", [
    (lambda: nn.Conv2d(8, 16, 3), (16, 8, 3, 3), 72),
    (lambda: nn.Conv2d(8, 16, (3, 2), groups=4), (16, 2, 3, 2), 12),
    (lambda: nn.Conv1d(6, 10, 5), (10, 6, 5), 30),
    # torch takes fan_in from weight.size(1) = out_channels / groups for transposed convs
    (lambda: nn.ConvTranspose2d(6, 4, 3, groups=2), (6, 2, 3, 3), 18),
])
def test_conv_init_is_kaiming_uniform(ctor, shape, fan_in):
    tg.manual_seed(1)
    m = ctor()
    assert m.weight.shape == shape
    bound = 1 / math.sqrt(fan_in)
    _check_uniform(_np(m.weight), bound)
    assert np.abs(_np(m.bias)).max() <= bound


def test_embedding_init_is_standard_normal_with_zero_padding_row():
    tg.manual_seed(2)
    m = nn.Embedding(2000, 16, padding_idx=-1)
    w = _np(m.weight)
    assert m.padding_idx == 1999
    np.testing.assert_array_equal(w[1999], 0.0)
    assert abs(w[:-1].mean()) < 0.01
    np.testing.assert_allclose(w[:-1].std(), 1.0, rtol=0.02)


def test_norm_and_attention_inits():
    bn, ln, gn, rms = nn.BatchNorm2d(3), nn.LayerNorm((2, 3)), nn.GroupNorm(2, 4), nn.RMSNorm(5)
    for w in (bn.weight, ln.weight, gn.weight, rms.weight):
        np.testing.assert_array_equal(_np(w), 1.0)
    for b in (bn.bias, ln.bias, gn.bias):
        np.testing.assert_array_equal(_np(b), 0.0)
    np.testing.assert_array_equal(bn.running_mean.numpy(), 0.0)
    np.testing.assert_array_equal(bn.running_var.numpy(), 1.0)
    assert bn.num_batches_tracked.dtype is tg.int64 and bn.num_batches_tracked.item() == 0
    tg.manual_seed(3)
    mha = nn.MultiheadAttention(64, 4)
    _check_uniform(_np(mha.in_proj_weight), math.sqrt(6 / (64 + 3 * 64)))   # xavier_uniform
    np.testing.assert_array_equal(_np(mha.in_proj_bias), 0.0)
    np.testing.assert_array_equal(_np(mha.out_proj.bias), 0.0)
    _check_uniform(_np(mha.out_proj.weight), 1 / math.sqrt(64))


def test_init_functions():
    t = nn.Parameter(tg.zeros(100, 50))
    nn.init.xavier_normal_(t)
    np.testing.assert_allclose(_np(t).std(), math.sqrt(2 / 150), rtol=0.05)
    nn.init.kaiming_normal_(t, nonlinearity="relu")
    np.testing.assert_allclose(_np(t).std(), math.sqrt(2 / 50), rtol=0.05)
    nn.init.constant_(t, 0.5)
    np.testing.assert_array_equal(_np(t), 0.5)
    assert t.requires_grad and t.is_leaf
    assert nn.init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(tg.zeros(3))


# ---- state_dict -----------------------------------------------------------------------------------
def _cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16, 3))


def test_state_dict_keys_order_and_buffers():
    m = _cnn()
    # torch 2.13 gives these keys in this order for the same model
    assert list(m.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias",
                                    "1.running_mean", "1.running_var",
                                    "1.num_batches_tracked", "5.weight", "5.bias"]
    assert [n for n, _ in m.named_buffers()] == ["1.running_mean", "1.running_var",
                                                 "1.num_batches_tracked"]
    assert len(list(m.parameters())) == 6
    sd = m.state_dict()
    assert not sd["0.weight"].requires_grad and sd["0.weight"] is not m[0].weight
    assert m.state_dict(keep_vars=True)["0.weight"] is m[0].weight
    assert list(m.state_dict(prefix="net."))[0] == "net.0.weight"


def test_state_dict_round_trip_keeps_identity_and_values():
    tg.manual_seed(0)
    a = _cnn()
    x = tg.randn(4, 1, 4, 4)
    a(x)                                   # a training forward: the running stats move
    a.eval()
    b = _cnn()
    weight_before = b[0].weight
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert b[0].weight is weight_before and b[0].weight.requires_grad
    assert b[1].num_batches_tracked.item() == 1 and b[1].num_batches_tracked.dtype is tg.int64
    b.eval()
    with tg.no_grad():
        np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())


def test_load_state_dict_errors_and_non_strict():
    m = _cnn()
    sd = m.state_dict()
    del sd["5.bias"]
    sd["extra"] = tg.zeros(1)
    with pytest.raises(RuntimeError) as e:
        _cnn().load_state_dict(sd)
    msg = str(e.value)
    assert 'Missing key(s) in state_dict: "5.bias"' in msg
    assert 'Unexpected key(s) in state_dict: "extra"' in msg
    res = _cnn().load_state_dict(sd, strict=False)
    assert res.missing_keys == ["5.bias"] and res.unexpected_keys == ["extra"]
    bad = m.state_dict()
    bad["5.weight"] = tg.zeros(2, 16)
    with pytest.raises(RuntimeError, match=r"size mismatch for 5.weight.*\[2, 16\].*\[3, 16\]"):
        _cnn().load_state_dict(bad)


def test_register_buffer_persistence_and_assignment():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("kept", tg.ones(2))
            self.register_buffer("scratch", tg.zeros(2), persistent=False)
            self.w = nn.Parameter(tg.ones(1))

    m = M()
    assert list(m.state_dict()) == ["w", "kept"]
    assert [n for n, _ in m.named_buffers()] == ["kept", "scratch"]
    m.kept = tg.full((2,), 3.0)                        # re-assignment updates the buffer
    np.testing.assert_array_equal(m.state_dict()["kept"].numpy(), 3.0)
    with pytest.raises(TypeError, match="buffer 'kept'"):
        m.kept = 3
    with pytest.raises(TypeError, match="parameter 'w'"):
        m.w = tg.ones(1)
    m.w = None
    assert list(m.state_dict()) == ["kept"]


def test_module_to_double_converts_parameters_and_float_buffers():
    m = _cnn().double()
    assert all(p.dtype is tg.float64 for p in m.parameters())
    assert m[1].running_mean.dtype is tg.float64 and m[1].num_batches_tracked.dtype is tg.int64
    assert m(tg.randn(2, 1, 4, 4, dtype=tg.float64)).dtype is tg.float64


# ---- dropout --------------------------------------------------------------------------------------
def test_dropout_mask_is_the_seeded_uniform_draw():
    x = tg.randn(20, 30)
    tg.manual_seed(7)
    u = tg.rand(20, 30).numpy()
    tg.manual_seed(7)
    y = F.dropout(x, 0.3).numpy()
    expected = np.where(u < 0.7, x.numpy() / np.float32(0.7), 0.0)
    np.testing.assert_allclose(y, expected, rtol=1e-6)
    assert 0.2 < (y == 0).mean() < 0.4


def test_dropout_module_train_and_eval():
    m = nn.Dropout(0.5)
    x = tg.randn(1000, requires_grad=True)
    y = m(x)
    kept = _np(y) != 0
    np.testing.assert_allclose(_np(y)[kept], 2 * _np(x)[kept], rtol=1e-6)
    assert 0.4 < kept.mean() < 0.6
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.where(kept, 2.0, 0.0))
    m.eval()
    np.testing.assert_array_equal(_np(m(x)), _np(x))
    assert F.dropout(x, 0.0) is x and F.dropout(x, 0.9, training=False) is x
    np.testing.assert_array_equal(_np(F.dropout(x, 1.0)), 0.0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, -0.1)


def test_dropout_compiled_draws_the_eager_masks():
    x = tg.randn(8, 16)

    def step(x):
        return F.dropout(x, 0.5) + F.dropout(x, 0.25)

    compiled = tg.compile(step, executor="interpreter")
    runs = []
    for fn in (step, compiled, compiled):
        tg.manual_seed(11)
        runs.append((fn(x).numpy().copy(), tg._creation._key.numpy().copy()))
    for out, key in runs[1:]:
        np.testing.assert_array_equal(out, runs[0][0])
        np.testing.assert_array_equal(key, runs[0][1])   # the key advanced, written back


# ---- batch norm ------------------------------------------------------------------------------------
def _bn_reference(xs, momentum, eps, dims):
    """torch's training-mode batch norm over `xs` (a list of batches): outputs and running stats."""
    c = xs[0].shape[1]
    rm, rv, outs = np.zeros(c), np.ones(c), []
    for k, x in enumerate(xs, start=1):
        mean = x.mean(axis=dims)
        var = x.var(axis=dims)
        n = x.size // c
        view = (1, c) + (1,) * (x.ndim - 2)
        outs.append((x - mean.reshape(view)) / np.sqrt(var.reshape(view) + eps))
        f = 1.0 / k if momentum is None else momentum
        rm = (1 - f) * rm + f * mean
        rv = (1 - f) * rv + f * var * n / (n - 1)        # unbiased in the running variance
    return outs, rm, rv


@pytest.mark.parametrize("ctor,shape,momentum", [
    (lambda: nn.BatchNorm2d(3), (4, 3, 2, 2), 0.1),
    (lambda: nn.BatchNorm1d(3, momentum=0.3, eps=1e-3), (5, 3), 0.3),
    (lambda: nn.BatchNorm1d(3, momentum=None), (2, 3, 4), None),
])
def test_batch_norm_running_stats_match_numpy(ctor, shape, momentum):
    m = ctor().double()
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(shape) * 2 + 1 for _ in range(3)]
    outs = [_np(m(tg.tensor(x))) for x in xs]
    dims = (0,) + tuple(range(2, len(shape)))
    ref_outs, rm, rv = _bn_reference(xs, momentum, m.eps, dims)
    for a, e in zip(outs, ref_outs):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(m.running_mean.numpy(), rm, rtol=1e-12)
    np.testing.assert_allclose(m.running_var.numpy(), rv, rtol=1e-12)
    assert m.num_batches_tracked.item() == 3
    m.eval()                                           # eval: the running statistics
    x = rng.standard_normal(shape)
    view = (1, 3) + (1,) * (len(shape) - 2)
    expected = (x - rm.reshape(view)) / np.sqrt(rv.reshape(view) + m.eps)
    np.testing.assert_allclose(_np(m(tg.tensor(x))), expected, rtol=1e-10, atol=1e-12)
    assert m.num_batches_tracked.item() == 3


def test_batch_norm_without_running_stats_uses_batch_stats_in_eval():
    m = nn.BatchNorm2d(2, track_running_stats=False, affine=False).double().eval()
    assert m.running_mean is None and list(m.state_dict()) == []
    x = np.random.default_rng(1).standard_normal((3, 2, 2, 2))
    mean, var = x.mean((0, 2, 3), keepdims=True), x.var((0, 2, 3), keepdims=True)
    np.testing.assert_allclose(_np(m(tg.tensor(x))), (x - mean) / np.sqrt(var + 1e-5),
                               rtol=1e-10)
    with pytest.raises(ValueError, match="expected 4D input"):
        m(tg.zeros(3, 2))


def test_batch_norm_gradient_flows_through_batch_statistics():
    x = tg.tensor(np.random.default_rng(2).standard_normal((4, 3)), requires_grad=True)
    y = nn.BatchNorm1d(3).double()(x)
    y.sum().backward()      # sum over the batch of a normalized channel is constant: grad 0
    np.testing.assert_allclose(x.grad.numpy(), 0.0, atol=1e-12)


def test_batch_norm_compiled_step_updates_running_stats_like_eager():
    rng = np.random.default_rng(3)
    xs = [tg.tensor(rng.standard_normal((4, 2, 3, 3)).astype(np.float32)) for _ in range(3)]
    mods = []
    for compiled in (False, True):
        tg.manual_seed(0)
        m = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3, momentum=None))
        opt = tg.optim.SGD(m.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = (m(x) ** 2).mean()
            loss.backward()
            opt.step()
            return loss

        fn = tg.compile(step, executor="interpreter") if compiled else step
        for x in xs:
            fn(x)
        mods.append(m)
    eager, comp = (m.state_dict() for m in mods)
    for k in eager:
        np.testing.assert_allclose(comp[k].numpy(), eager[k].numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=k)
    assert comp["1.num_batches_tracked"].item() == 3


# ---- printing --------------------------------------------------------------------------------------
REPRS = [  # torch 2.13 prints exactly these
    (lambda: nn.Conv2d(1, 16, 3, padding=1),
     "Conv2d(1, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"),
    (lambda: nn.Conv2d(2, 4, (3, 2), stride=2, dilation=2, groups=2, bias=False),
     "Conv2d(2, 4, kernel_size=(3, 2), stride=(2, 2), dilation=(2, 2), groups=2, bias=False)"),
    (lambda: nn.Conv1d(2, 4, 3), "Conv1d(2, 4, kernel_size=(3,), stride=(1,))"),
    (lambda: nn.ConvTranspose2d(4, 2, 3, stride=2, output_padding=1),
     "ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))"),
    (lambda: nn.BatchNorm2d(16),
     "BatchNorm2d(16, eps=1e-05, momentum=0.1, affine=True, bias=True, "
     "track_running_stats=True)"),
    (lambda: nn.BatchNorm1d(4, momentum=None, affine=False, track_running_stats=False),
     "BatchNorm1d(4, eps=1e-05, momentum=None, affine=False, bias=False, "
     "track_running_stats=False)"),
    (lambda: nn.LayerNorm(10), "LayerNorm((10,), eps=1e-05, elementwise_affine=True, bias=True)"),
    (lambda: nn.GroupNorm(2, 6), "GroupNorm(2, 6, eps=1e-05, affine=True, bias=True)"),
    (lambda: nn.RMSNorm(10), "RMSNorm((10,), eps=None, elementwise_affine=True)"),
    (lambda: nn.Embedding(10, 3, padding_idx=0), "Embedding(10, 3, padding_idx=0)"),
    (lambda: nn.MaxPool2d(2),
     "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"),
    (lambda: nn.AvgPool2d(2), "AvgPool2d(kernel_size=2, stride=2, padding=0)"),
    (lambda: nn.AdaptiveAvgPool2d((2, 3)), "AdaptiveAvgPool2d(output_size=(2, 3))"),
    (lambda: nn.Flatten(), "Flatten(start_dim=1, end_dim=-1)"),
    (lambda: nn.Unflatten(1, (2, 3)), "Unflatten(dim=1, unflattened_size=(2, 3))"),
    (lambda: nn.Dropout(0.1), "Dropout(p=0.1, inplace=False)"),
    (lambda: nn.GELU("tanh"), "GELU(approximate='tanh')"),
    (lambda: nn.LeakyReLU(), "LeakyReLU(negative_slope=0.01)"),
    (lambda: nn.ELU(), "ELU(alpha=1.0)"),
    (lambda: nn.Softplus(), "Softplus(beta=1.0, threshold=20.0)"),
    (lambda: nn.Hardtanh(), "Hardtanh(min_val=-1.0, max_val=1.0)"),
    (lambda: nn.ReLU6(), "ReLU6()"),
    (lambda: nn.Softmax(dim=1), "Softmax(dim=1)"),
    (lambda: nn.CrossEntropyLoss(label_smoothing=0.1), "CrossEntropyLoss()"),
    (lambda: nn.MultiheadAttention(8, 2),
     "MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, "
     "out_features=8, bias=True)\n)"),
    (lambda: nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU()]),
     "ModuleList(\n  (0-1): 2 x Linear(in_features=2, out_features=2, bias=True)\n"
     "  (2): ReLU()\n)"),
    (lambda: nn.Sequential(nn.Linear(2, 3), nn.ReLU()),
     "Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n  (1): ReLU()\n)"),
]


@pytest.mark.parametrize("ctor,text", REPRS, ids=[t.split("(")[0] for _, t in REPRS])
def test_repr_is_torchs(ctor, text):
    assert repr(ctor()) == text


# ---- containers and modes ------------------------------------------------------------------------------
def test_containers_register_their_modules():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    layers.append(nn.Linear(2, 1))
    assert len(layers) == 4 and isinstance(layers[-1], nn.Linear) and len(layers[1:]) == 3
    heads = nn.ModuleDict({"a": nn.Linear(2, 2), "b": nn.BatchNorm1d(2)})
    assert list(heads) == ["a", "b"] and "b" in heads

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers, self.heads = layers, heads

    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names[:2] == ["layers.0.weight", "layers.0.bias"] and "heads.b.weight" in names
    assert len(names) == 12 and "heads.b.running_mean" in net.state_dict()
    net.eval()
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert isinstance(seq[1], nn.ReLU) and len(seq[:2]) == 2 and seq[-1] is seq[2]
    with pytest.raises(IndexError):
        seq[3]


def test_flatten_unflatten_identity():
    x = tg.randn(2, 3, 4)
    assert nn.Flatten()(x).shape == (2, 12) and nn.Flatten(0, 1)(x).shape == (6, 4)
    assert nn.Unflatten(2, (2, 2))(x).shape == (2, 3, 2, 2)
    assert nn.Identity(54, unused="x")(x) is x


# ---- layers against references ---------------------------------------------------------------------------
def test_activation_modules_match_functional():
    x = tg.randn(3, 4)
    pairs = [(nn.ReLU(), F.relu(x)), (nn.GELU(), F.gelu(x)), (nn.SiLU(), F.silu(x)),
             (nn.Tanh(), F.tanh(x)), (nn.Sigmoid(), F.sigmoid(x)),
             (nn.LeakyReLU(0.2), F.leaky_relu(x, 0.2)), (nn.ELU(0.5), F.elu(x, 0.5)),
             (nn.Softplus(2.0), F.softplus(x, 2.0)), (nn.Mish(), F.mish(x)),
             (nn.Hardtanh(-0.5, 0.5), F.hardtanh(x, -0.5, 0.5)), (nn.ReLU6(), F.relu6(x)),
             (nn.Softmax(0), F.softmax(x, 0)), (nn.LogSoftmax(1), F.log_softmax(x, 1))]
    for m, expected in pairs:
        np.testing.assert_array_equal(m(x).numpy(), expected.numpy(), err_msg=repr(m))
    with pytest.warns(UserWarning, match="Implicit dimension"):
        y = nn.Softmax()(x)                            # torch's legacy choice: dim 1 for 2-D
    np.testing.assert_allclose(y.numpy().sum(1), 1.0, rtol=1e-6)


def test_loss_modules_match_functional():
    rng = np.random.default_rng(4)
    x, t = tg.tensor(rng.standard_normal((5, 3))), tg.tensor(rng.integers(0, 3, 5))
    w = tg.tensor(rng.uniform(0.5, 2, 3))
    ce = nn.CrossEntropyLoss(weight=w, ignore_index=1, label_smoothing=0.1, reduction="sum")
    assert list(ce.state_dict()) == ["weight"]
    np.testing.assert_array_equal(
        ce(x, t).numpy(), F.cross_entropy(x, t, w, ignore_index=1, reduction="sum",
                                          label_smoothing=0.1).numpy())
    y, p = tg.tensor(rng.standard_normal((5, 3))), tg.tensor(rng.uniform(0.1, 0.9, (5, 3)))
    checks = [(nn.MSELoss(), F.mse_loss(x, y)), (nn.L1Loss(reduction="none"), F.l1_loss(x, y, reduction="none")),
              (nn.SmoothL1Loss(beta=0.5), F.smooth_l1_loss(x, y, beta=0.5)),
              (nn.HuberLoss(delta=2.0), F.huber_loss(x, y, delta=2.0)),
              (nn.KLDivLoss(reduction="batchmean"), F.kl_div(x, p, reduction="batchmean")),
              (nn.BCEWithLogitsLoss(pos_weight=w), F.binary_cross_entropy_with_logits(x, p, pos_weight=w))]
    for m, expected in checks:
        target = p if isinstance(m, (nn.KLDivLoss, nn.BCEWithLogitsLoss)) else y
        np.testing.assert_array_equal(m(x, target).numpy(), expected.numpy(), err_msg=repr(m))
    np.testing.assert_array_equal(nn.NLLLoss(size_average=False)(x, t).numpy(),
                                  F.nll_loss(x, t, reduction="sum").numpy())
    np.testing.assert_array_equal(nn.BCELoss()(p, p).numpy(), F.binary_cross_entropy(p, p).numpy())


def test_cross_entropy_all_ignored_is_nan_with_zero_gradient():
    x = tg.randn(3, 4, requires_grad=True)
    loss = F.cross_entropy(x, tg.tensor([-100, -100, -100]))
    assert math.isnan(loss.item())                    # torch 2.13 gives nan and a zero gradient
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), 0.0)


def test_kl_div_zero_target_contributes_zero():
    x = tg.tensor([[-1.0, -2.0, -0.5]])
    t = tg.tensor([[0.0, 0.5, 0.5]])
    np.testing.assert_allclose(F.kl_div(x, t, reduction="sum").item(),
                               0.5 * (math.log(0.5) + 2.0) + 0.5 * (math.log(0.5) + 0.5),
                               rtol=1e-6)


def _conv2d_np(x, w, b):
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1))
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            out[:, :, i, j] = np.einsum("nchw,ochw->no", x[:, :, i:i + kh, j:j + kw], w)
    return out + b[None, :, None, None]


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_conv_padding_modes(mode):
    m = nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode).double()
    x = np.random.default_rng(5).standard_normal((2, 2, 4, 5))
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2)), mode="edge" if mode == "replicate"
                    else mode)
    expected = _conv2d_np(padded, _np(m.weight), _np(m.bias))
    np.testing.assert_allclose(_np(m(tg.tensor(x))), expected, rtol=1e-10)
    assert "padding_mode=" + mode in repr(m)
    with pytest.raises(NotImplementedError, match="circular"):
        nn.Conv2d(2, 3, 3, padding_mode="circular")


def test_pool_modules():
    x = tg.tensor(np.arange(32.0).reshape(1, 2, 4, 4))
    v, idx = nn.MaxPool2d(2, return_indices=True)(x)
    np.testing.assert_array_equal(v.numpy()[0, 0], [[5, 7], [13, 15]])
    np.testing.assert_array_equal(idx.numpy()[0, 1], [[5, 7], [13, 15]])
    np.testing.assert_array_equal(nn.AvgPool2d(2)(x).numpy()[0, 0], [[2.5, 4.5], [10.5, 12.5]])
    np.testing.assert_array_equal(nn.AdaptiveAvgPool2d(1)(x).numpy().ravel(), [7.5, 23.5])


def _mha_reference(m, q, k, v, attn_mask=None, key_padding_mask=None):
    """torch's multi_head_attention_forward (need_weights path), (L, N, E) layout, NumPy."""
    e, h = m.embed_dim, m.num_heads
    d = e // h
    w, b = _np(m.in_proj_weight), _np(m.in_proj_bias)
    proj = [t @ w[i * e:(i + 1) * e].T + b[i * e:(i + 1) * e] for i, t in enumerate((q, k, v))]
    length, n = q.shape[:2]
    heads = [p.reshape(p.shape[0], n * h, d).transpose(1, 0, 2) for p in proj]   # (N*H, len, D)
    scores = (heads[0] / math.sqrt(d)) @ heads[1].transpose(0, 2, 1)
    if attn_mask is not None:
        scores = scores + np.where(attn_mask, -np.inf, 0.0)
    if key_padding_mask is not None:
        kpm = np.repeat(np.where(key_padding_mask, -np.inf, 0.0), h, axis=0)
        scores = scores + kpm[:, None, :]
    wts = np.exp(scores - scores.max(-1, keepdims=True))
    wts /= wts.sum(-1, keepdims=True)
    out = (wts @ heads[2]).transpose(1, 0, 2).reshape(length, n, e)
    out = out @ _np(m.out_proj.weight).T + _np(m.out_proj.bias)
    return out, wts.reshape(n, h, length, -1).mean(1)


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_matches_reference(batch_first):
    tg.manual_seed(5)
    m = nn.MultiheadAttention(8, 2, batch_first=batch_first).double()
    for p in (m.in_proj_bias, m.out_proj.bias):       # nonzero biases exercise every term
        nn.init.uniform_(p, -0.5, 0.5)
    rng = np.random.default_rng(6)
    q, k, v = rng.standard_normal((3, 2, 8)), rng.standard_normal((4, 2, 8)), \
        rng.standard_normal((4, 2, 8))
    mask = np.triu(np.ones((3, 4), bool), 2)
    kpm = np.array([[False, False, False, True], [False, True, False, False]])
    out_ref, w_ref = _mha_reference(m, q, k, v, mask, kpm)
    args = [tg.tensor(a.transpose(1, 0, 2) if batch_first else a) for a in (q, k, v)]
    out, wts = m(*args, attn_mask=tg.tensor(mask), key_padding_mask=tg.tensor(kpm))
    out = _np(out).transpose(1, 0, 2) if batch_first else _np(out)
    np.testing.assert_allclose(out, out_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_np(wts), w_ref, rtol=1e-10, atol=1e-12)
    out2, none = m(*args, need_weights=False)
    assert none is None and out2.shape == args[0].shape


def test_multihead_attention_causal_and_errors():
    m = nn.MultiheadAttention(4, 2, batch_first=True)
    x = tg.randn(2, 3, 4, requires_grad=True)
    causal = tg.tensor(np.triu(np.ones((3, 3), bool), 1))
    out, wts = m(x, x, x, attn_mask=causal, is_causal=True)
    np.testing.assert_array_equal(_np(wts)[:, 0, 1:], 0.0)   # query 0 sees only key 0
    out.sum().backward()
    assert m.in_proj_weight.grad is not None and x.grad.shape == (2, 3, 4)
    with pytest.raises(ValueError, match="is_causal"):
        m(x, x, x, is_causal=True)
    # add_bias_kv is supported now (values against torch in tests/api/test_transformer.py)
    assert nn.MultiheadAttention(4, 2, add_bias_kv=True).bias_k.shape == (1, 1, 4)
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiheadAttention(6, 4)


def test_embedding_module_and_from_pretrained():
    w = tg.tensor(np.arange(12.0).reshape(4, 3))
    m = nn.Embedding.from_pretrained(w, padding_idx=0)
    assert not m.weight.requires_grad
    np.testing.assert_array_equal(m(tg.tensor([[2, 0]])).numpy(), [[[6, 7, 8], [0, 1, 2]]])
    e = nn.Embedding(4, 2, padding_idx=1)
    e(tg.tensor([1, 2, 1])).sum().backward()
    np.testing.assert_array_equal(e.weight.grad.numpy(), [[0, 0], [0, 0], [1, 1], [0, 0]])


def test_norm_modules_match_functional():
    x = tg.randn(2, 4, 3)
    ln, gn, rms = nn.LayerNorm(3), nn.GroupNorm(2, 4), nn.RMSNorm([4, 3], eps=1e-6)
    np.testing.assert_array_equal(_np(ln(x)), _np(F.layer_norm(x, (3,), ln.weight, ln.bias)))
    np.testing.assert_array_equal(_np(gn(x)), _np(F.group_norm(x, 2, gn.weight, gn.bias)))
    np.testing.assert_array_equal(_np(rms(x)), _np(F.rms_norm(x, (4, 3), rms.weight, 1e-6)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert nn.LayerNorm(3, elementwise_affine=False).weight is None


def test_module_to_parses_like_tensor_to():
    """Module.to takes Tensor.to's forms (one parser) and refuses devices it cannot use."""
    m = tg.nn.Linear(3, 2)
    assert m.to("cpu") is m and m.weight.dtype is tg.float32
    m.to("cpu", tg.float64)
    assert m.weight.dtype is tg.float64 and m.bias.dtype is tg.float64
    m.to(tg.zeros(1, dtype=tg.float32))
    assert m.weight.dtype is tg.float32
    with pytest.raises(NotImplementedError, match="Module.to: device 'cuda'"):
        m.to("cuda")
    with pytest.raises(NotImplementedError, match="device 'cuda:1'"):
        m.to(device="cuda:1")
    with pytest.raises(TypeError, match="floating point"):
        m.to(tg.int64)


# ---- nn.utils gradient clipping, Module.cpu/cuda, tg.utils.checkpoint as a module ----------------

def _clip_params():
    w1 = nn.Parameter(tg.tensor([[1.0, -2.0], [3.0, 0.5]]))
    w2 = nn.Parameter(tg.tensor([4.0, -1.0, 2.0]))
    w3 = nn.Parameter(tg.tensor([1.0]))       # no gradient: skipped
    g1, g2 = np.array([[0.3, -1.2], [2.0, 0.1]], np.float32), np.array([-3.0, 0.4, 1.5], np.float32)
    w1.grad, w2.grad = tg.tensor(g1), tg.tensor(g2)
    return (w1, w2, w3), (g1, g2)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.0, "inf"])
def test_clip_grad_norm_scales_all_gradients_by_the_total_norm(norm_type):
    (w1, w2, w3), (g1, g2) = _clip_params()
    flat = np.concatenate([g1.ravel(), g2])
    p = float(norm_type)
    total = np.abs(flat).max() if p == math.inf else (np.abs(flat) ** p).sum() ** (1 / p)
    n = nn.utils.clip_grad_norm_(iter([w1, w2, w3]), 1.0, norm_type=norm_type)   # read once
    assert n.shape == () and n.dtype is tg.float32
    np.testing.assert_allclose(n.item(), total, rtol=1e-6)   # torch 2.13: 4.1170 for p=2
    coef = min(1.0 / (total + 1e-6), 1.0)
    np.testing.assert_allclose(w1.grad.numpy(), g1 * coef, rtol=1e-6)
    np.testing.assert_allclose(w2.grad.numpy(), g2 * coef, rtol=1e-6)
    assert w3.grad is None


def test_clip_grad_norm_edge_cases():
    (w1, w2, w3), (g1, _) = _clip_params()
    n = nn.utils.clip_grad_norm_([w1, w2], 100.0)        # under max_norm: unchanged
    np.testing.assert_allclose(n.item(), 4.1170, atol=1e-4)
    np.testing.assert_array_equal(w1.grad.numpy(), g1)
    z = nn.utils.clip_grad_norm_(w3, 1.0)                # a single tensor without grad
    assert z.item() == 0.0 and z.dtype is tg.float32
    w2.grad = tg.tensor([math.inf, 1.0, 1.0])
    with pytest.raises(RuntimeError, match="non-finite|inf"):
        nn.utils.clip_grad_norm_([w1, w2], 1.0, error_if_nonfinite=True)
    assert math.isinf(nn.utils.clip_grad_norm_([w1, w2], 1.0).item())   # torch scales anyway
    w = nn.Parameter(tg.tensor([1.0, 2.0], dtype=tg.float64))
    w.grad = tg.tensor([3.0, 4.0], dtype=tg.float64)
    v = nn.Parameter(tg.tensor([1.0]))
    v.grad = tg.tensor([12.0])
    n = nn.utils.clip_grad_norm_([w, v], 1.0)          # norms promoted: float64, as torch
    assert n.dtype is tg.float64 and n.item() == 13.0
    np.testing.assert_allclose(w.grad.numpy(), [3 / 13, 4 / 13], rtol=1e-6)
    assert nn.utils.get_total_norm([tg.tensor([3.0]), tg.tensor([4.0])]).item() == 5.0


def test_clip_grad_value_clamps_in_place():
    (w1, _, w3), (g1, _) = _clip_params()
    grad = w1.grad
    assert nn.utils.clip_grad_value_([w1, w3], 0.5) is None
    assert w1.grad is grad                                # in place, as torch
    np.testing.assert_array_equal(grad.numpy(), np.clip(g1, -0.5, 0.5))


def test_module_cpu_and_cuda():
    m = nn.Linear(2, 2)
    assert m.cpu() is m and m.to(tg.device("cpu")) is m and m.to("cpu", tg.float64) is m
    assert m.weight.dtype is tg.float64
    with pytest.raises(NotImplementedError, match="cuda"):
        m.cuda()


def test_utils_checkpoint_is_the_module_as_in_torch():
    import tracegrad.utils.checkpoint as ckpt_module
    from tracegrad.utils.checkpoint import checkpoint
    assert tg.utils.checkpoint is ckpt_module and ckpt_module.checkpoint is checkpoint
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    for call in (ckpt_module.checkpoint, tg.utils.checkpoint):   # the module stays callable
        x.grad = None
        call(lambda a: (a * a).sin(), x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([1.0, 2.0]) *
                                   np.cos(np.array([1.0, 4.0])), rtol=1e-6)
