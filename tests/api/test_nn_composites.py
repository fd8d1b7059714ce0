"""Activations, distance/margin losses and 1-d pooling composed of registry ops
(tg.nn.functional_activations, functional_distances; their nn modules) against torch 2.13:
each case's output and the gradients of sum(out * (1, 2, 3, ...)) were recorded from the
same calls under torch 2.13.0+cpu."""
import pytest

import tracegrad as tg
import tracegrad.nn as nn
import tracegrad.nn.functional as F

X = [[-2.5, -0.7, -0.2, 0.0], [0.3, 0.6, 1.4, 3.1]]
Y = [[0.5, -1.2, 2.0, 0.1], [1.0, -0.3, 0.4, -2.2]]
T = [1.0, -1.0]
CASES = {
 "selu": lambda x, y: F.selu(x), "celu": lambda x, y: F.celu(x, 0.7), "glu": lambda x, y: F.glu(x),
 "glu0": lambda x, y: F.glu(x, 0), "hardsigmoid": lambda x, y: F.hardsigmoid(x * 2),
 "hardswish": lambda x, y: F.hardswish(x * 2), "softsign": lambda x, y: F.softsign(x),
 "softmin": lambda x, y: F.softmin(x, dim=1), "tanhshrink": lambda x, y: F.tanhshrink(x),
 "softshrink": lambda x, y: F.softshrink(x, 0.5), "hardshrink": lambda x, y: F.hardshrink(x, 0.5),
 "threshold": lambda x, y: F.threshold(x, 0.25, -3.0),
 "prelu": lambda x, y: nn.PReLU(2, 0.1)(x.reshape(1, 2, 4)),
 "logsigmoid": lambda x, y: nn.LogSigmoid()(x), "softmax2d": lambda x, y: nn.Softmax2d()(x.reshape(2, 2, 2)),
 "pairwise": lambda x, y: F.pairwise_distance(x, y), "pairwise1": lambda x, y: nn.PairwiseDistance(1.0, keepdim=True)(x, y),
 "cosine_sim": lambda x, y: nn.CosineSimilarity(dim=1)(x, y),
 "triplet": lambda x, y: F.triplet_margin_loss(x, y, x.flip(0), margin=2.0),
 "triplet_swap": lambda x, y: nn.TripletMarginLoss(margin=1.0, swap=True, reduction="none")(x, y, y.flip(1)),
 "ranking": lambda x, y: nn.MarginRankingLoss(0.3)(x[:, 0], y[:, 0], tg.tensor(T)),
 "cos_emb": lambda x, y: nn.CosineEmbeddingLoss(0.1, reduction="sum")(x, y, tg.tensor(T)),
 "hinge": lambda x, y: nn.HingeEmbeddingLoss(1.0, reduction="none")(x, tg.tensor([[1.0, -1.0, -1.0, 1.0]] * 2)),
 "soft_margin": lambda x, y: nn.SoftMarginLoss()(x, y.sign().detach()),
 "maxpool1d": lambda x, y: nn.MaxPool1d(2, 1)(x.reshape(1, 2, 4)),
 "maxpool1d_pad": lambda x, y: F.max_pool1d(x.reshape(2, 4), 3, 2, 1),
 "avgpool1d": lambda x, y: nn.AvgPool1d(3, 1, 1, count_include_pad=False)(x.reshape(1, 2, 4)),
 "adaptive1d": lambda x, y: nn.AdaptiveAvgPool1d(3)(x.reshape(1, 2, 4)),
}

# torch 2.13.0+cpu: output, grad of x, grad of y for sum(out * (1, 2, 3, ...))
TORCH = {
    'selu': [[-1.6137857, -0.885053, -0.3186893, 0.0, 0.3152103, 0.6304206, 1.4709814, 3.2571731], [0.1443136, 1.7460926, 4.3182297, 7.0323973, 5.2535052, 6.3042059, 7.354907, 8.4056082], []],
    'celu': [[-0.6803191, -0.4424844, -0.1739659, 0.0, 0.3, 0.6, 1.4, 3.0999999], [0.0281157, 0.7357589, 2.2544317, 4.0, 5.0, 6.0, 7.0, 8.0], []],
    'glu': [[-1.1254151, -0.35, 0.2406552, 0.5741357], [0.450166, 1.0, -0.6187915, -0.35, 2.4065518, 3.8275709, 0.1428164, 0.0989977], []],
    'glu0': [[-1.4361062, -0.4519594, -0.1604368, 0.0], [0.5744425, 1.2913126, 2.4065518, 3.8275709, -0.6111458, -0.320298, -0.0952109, 0.0], []],
    'hardsigmoid': [[0.0, 0.2666667, 0.4333333, 0.5, 0.6, 0.7, 0.9666667, 1.0], [0.0, 0.6666667, 1.0, 1.3333334, 1.6666667, 2.0, 2.3333335, 0.0], []],
    'hardswish': [[-0.0, -0.3733333, -0.1733333, 0.0, 0.36, 0.84, 2.7066667, 6.1999993], [0.0, 0.1333333, 2.2, 4.0, 7.0, 10.7999992, 20.0666676, 16.0], []],
    'softsign': [[-0.7142857, -0.4117647, -0.1666667, 0.0, 0.2307692, 0.375, 0.5833333, 0.7560976], [0.0816327, 0.6920415, 2.0833335, 4.0, 2.95858, 2.34375, 1.2152778, 0.4759072], []],
    'softmin': [[0.7420364, 0.1226578, 0.0743957, 0.0609101, 0.4684939, 0.3470688, 0.1559481, 0.0284891], [0.3370176, -0.0669492, -0.1150024, -0.1550661, 0.3487618, -0.0886997, -0.1958034, -0.0642592], []],
    'tanhshrink': [[-1.5133858, -0.0956322, -0.0026247, 0.0, 0.0086874, 0.0629504, 0.5146483, 2.1040506], [0.9734077, 0.7305208, 0.1168709, 0.0, 0.4243155, 1.7305336, 5.4869328, 7.9353213], []],
    'softshrink': [[-2.0, -0.2, -0.0, 0.0, 0.0, 0.1, 0.9, 2.5999999], [1.0, 2.0, 0.0, 0.0, 0.0, 6.0, 7.0, 8.0], []],
    'hardshrink': [[-2.5, -0.7, 0.0, 0.0, 0.0, 0.6, 1.4, 3.0999999], [1.0, 2.0, 0.0, 0.0, 0.0, 6.0, 7.0, 8.0], []],
    'threshold': [[-3.0, -3.0, -3.0, -3.0, 0.3, 0.6, 1.4, 3.0999999], [0.0, 0.0, 0.0, 0.0, 5.0, 6.0, 7.0, 8.0], []],
    'prelu': [[-0.25, -0.07, -0.02, 0.0, 0.3, 0.6, 1.4, 3.0999999], [0.1, 0.2, 0.3, 0.4, 5.0, 6.0, 7.0, 8.0], []],
    'logsigmoid': [[-2.5788898, -1.103186, -0.7981389, -0.6931472, -0.5543552, -0.4374879, -0.2204174, -0.044064], [0.9241418, 1.3363756, 1.649502, 2.0, 2.1277874, 2.1260622, 1.3847129, 0.3448581], []],
    'softmax2d': [[0.0573242, 0.214165, 0.1679816, 0.0431073, 0.9426758, 0.785835, 0.8320184, 0.9568927], [-0.2161525, -0.6731935, -0.5590551, -0.1649961, 0.2161524, 0.6731933, 0.5590552, 0.1649961], []],
    'pairwise': [[3.7549953, 5.5127139], [-0.7989355, 0.1331562, -0.5858859, -0.0266309, -0.253958, 0.3265183, 0.3627981, 1.9228283], [0.7989355, -0.1331562, 0.5858859, 0.0266309, 0.253958, -0.3265183, -0.3627981, -1.9228283]],
    'pairwise1': [[5.7999978, 7.900002], [-1.0, 1.0, -1.0, -1.0, -2.0, 2.0, 2.0, 2.0], [1.0, -1.0, 1.0, 1.0, 2.0, -2.0, -2.0, -2.0]],
    'cosine_sim': [[-0.1302965, -0.7176415], [0.0323855, -0.2064843, 0.3178762, 0.016086, 0.2695818, 0.0015169, 0.2606748, -0.1441063], [-0.3907202, -0.1400328, 0.0135461, 0.0022859, 0.3058065, 0.0695521, 0.4215347, 0.2061612]],
    'triplet': [[1.975529], [0.2016066, 0.3456483, 0.0505281, 0.6521597, -0.6645638, -0.1974407, -0.2527715, -0.1847681], [0.3994677, -0.0665781, 0.292943, 0.0133155, 0.0634895, -0.0816296, -0.0906995, -0.4807071]],
    'triplet_swap': [[0.8434751, 2.8262506], [-0.1342325, 0.8234247, -0.8415413, 0.1011963, -1.610272, 0.2180127, -0.5594957, 0.7835245], [0.6711082, 0.1224991, -0.1043825, -0.638072, 1.3932618, 0.5957754, -0.2542924, -0.5665143]],
    'ranking': [[1.65], [-0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0, -0.0, 0.0, 0.0, 0.0]],
    'cos_emb': [[1.1302965], [-0.0323855, 0.2064843, -0.3178762, -0.016086, 0.0, 0.0, 0.0, 0.0], [0.3907202, 0.1400327, -0.0135461, -0.0022859, 0.0, 0.0, 0.0, 0.0]],
    'hinge': [[-2.5, 1.7, 1.2, 0.0, 0.3, 0.4, 0.0, 3.0999999], [1.0, -2.0, -3.0, 4.0, 5.0, -6.0, 0.0, 8.0], []],
    'soft_margin': [[1.1787108], [-0.1155177, 0.0414765, -0.0687293, -0.0625, -0.0531947, 0.080707, -0.024727, 0.1196116], []],
    'maxpool1d': [[-0.7, -0.2, 0.0, 0.6, 1.4, 3.0999999], [0.0, 1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0], []],
    'maxpool1d_pad': [[-0.7, 0.0, 0.6, 3.0999999], [0.0, 1.0, 0.0, 2.0, 0.0, 3.0, 0.0, 4.0], []],
    'avgpool1d': [[-1.6, -1.1333333, -0.3, -0.1, 0.45, 0.7666667, 1.6999999, 2.25], [1.1666667, 2.1666667, 3.6666667, 3.0, 4.5, 6.833333, 8.333333, 6.333333], []],
    'adaptive1d': [[-1.6, -0.45, -0.1, 0.45, 1.0, 2.25], [0.5, 1.5, 2.5, 1.5, 2.0, 4.5, 5.5, 3.0], []],
}


@pytest.mark.parametrize("name", sorted(TORCH))
def test_matches_torch(name):
    x, y = tg.tensor(X, requires_grad=True), tg.tensor(Y, requires_grad=True)
    out = CASES[name](x, y)
    (out * tg.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)).sum().backward()
    want_out, want_dx, want_dy = TORCH[name]
    assert out.detach().flatten().tolist() == pytest.approx(want_out, rel=1e-5, abs=1e-6)
    assert x.grad.flatten().tolist() == pytest.approx(want_dx, rel=1e-5, abs=1e-6)
    assert (y.grad.flatten().tolist() if y.grad is not None else []) == pytest.approx(
        want_dy, rel=1e-5, abs=1e-6)


def test_compiled_matches_eager():
    def f(x, y):
        return (F.selu(x) + F.hardswish(y) + F.glu(tg.cat([x, y], 1))).sum() + \
            F.triplet_margin_loss(x, y, x.flip(0)) + F.max_pool1d(x.unsqueeze(0), 2).sum()
    x, y = tg.tensor(X), tg.tensor(Y)
    assert tg.compile(f)(x, y).item() == pytest.approx(f(x, y).item(), rel=1e-6)


def test_errors_name_the_function():
    with pytest.raises(RuntimeError, match="glu: Halving dimension must be even, but "
                                           "dimension 1 is size 3"):   # torch 2.13's words
        F.glu(tg.ones(2, 3))
    with pytest.raises(RuntimeError, match="prelu: Mismatch of parameter numbers and input "
                                           "channel size. Found parameter numbers = 3 and "
                                           "channel size = 2."):
        F.prelu(tg.ones(4, 2), tg.ones(3))
    with pytest.raises(ValueError, match="triplet_margin_loss: bogus is not a valid value"):
        F.triplet_margin_loss(tg.ones(2, 3), tg.ones(2, 3), tg.ones(2, 3), reduction="bogus")
    with pytest.raises(TypeError, match="selu\\(\\): argument 'input' must be Tensor"):
        F.selu([1.0])


def test_reprs_match_torch():
    # torch 2.13
    assert repr(nn.PReLU()) == "PReLU(num_parameters=1)"
    assert repr(nn.Softshrink()) == "Softshrink(0.5)"
    assert repr(nn.Threshold(0.1, 20.0)) == "Threshold(threshold=0.1, value=20.0)"
    assert repr(nn.CELU(0.5)) == "CELU(alpha=0.5)"
    assert repr(nn.GLU()) == "GLU(dim=-1)"
    assert nn.PReLU(3).weight.tolist() == pytest.approx([0.25] * 3)


def test_unbuilt_torch_names_are_refused_with_what_to_use():
    import tracegrad.distributions as D
    with pytest.raises(NotImplementedError, match="tracegrad.nn.Conv3d is not built in "
                                                  "tracegrad: only 1-d/2-d convolution"):
        nn.Conv3d
    with pytest.raises(NotImplementedError, match="give the input size explicitly"):
        nn.LazyLinear
    with pytest.raises(NotImplementedError, match="functional.gumbel_softmax is not built"):
        F.gumbel_softmax
    # still an AttributeError too: feature probes read it as missing, typos stay typos
    assert not hasattr(nn, "SyncBatchNorm") and not hasattr(F, "ctc_loss")
    assert not hasattr(D, "Beta")
    with pytest.raises(AttributeError, match="has no attribute 'Bogus'"):
        nn.Bogus


def test_small_layers_added_for_ported_programs():
    x = tg.tensor([-1.0, 2.0])
    assert F.relu_(x) is x and x.tolist() == [0.0, 2.0]
    assert nn.DataParallel is nn.parallel.DataParallel
    bn = nn.BatchNorm3d(2)
    y = bn(tg.arange(32.0).reshape(2, 2, 2, 2, 2))
    assert y.mean().item() == pytest.approx(0.0, abs=1e-6)
    assert bn.running_mean.tolist() == pytest.approx([1.15, 1.95])   # torch 2.13
    with pytest.raises(ValueError, match="expected 5D input"):
        bn(tg.ones(2, 2, 3))
    blocks = nn.Unfold(2)(tg.arange(9.0).reshape(1, 1, 3, 3))
    assert blocks.shape == (1, 4, 4) and blocks[0, :, 0].tolist() == [0.0, 1.0, 3.0, 4.0]
    assert nn.Fold((3, 3), 2)(blocks).shape == (1, 1, 3, 3)
    up = nn.UpsamplingBilinear2d(scale_factor=2)(tg.tensor([[[[0.0, 1.0], [2.0, 3.0]]]]))
    assert up[0, 0, 0].tolist() == pytest.approx([0.0, 1 / 3, 2 / 3, 1.0])  # align_corners
    assert nn.UpsamplingNearest2d(scale_factor=2)(tg.ones(1, 1, 2, 2)).shape == (1, 1, 4, 4)
