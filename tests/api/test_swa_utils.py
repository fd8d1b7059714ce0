"""torch.optim.swa_utils (issue 16): AveragedModel (default SWA, EMA through multi_avg_fn and
avg_fn, a custom avg_fn, use_buffers), SWALR and update_bn against torch 2.13.

tests/swa_cases.py trains a small Linear + BatchNorm1d + Linear model for four SGD steps
(momentum, two param groups) under SWALR and averages it after each step; torch 2.13.0+cpu's
values of the same program, recorded by tools/record_torch_swa.py, are below.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

import tracegrad as tg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import swa_cases  # noqa: E402

# torch 2.13.0+cpu
TORCH = {'lrs': [[0.08750000000000001, 0.15250000000000002], [0.06250000000000001, 0.05750000000000003],
         [0.05, 0.01], [0.05, 0.01]],
 'model': {'0.weight': [[0.4048709, -0.1832445, 0.0269818], [-0.0958578, -0.8078576, -0.9133266],
                        [-0.2479678, -0.6865197, 0.0136346], [0.8843839, -0.3676719, -0.4452237]],
           '0.bias': [0.15, -0.1, 0.03, 0.68],
           '1.weight': [0.8448025, 1.11535, 0.7731822, 1.0226182],
           '1.bias': [-0.1445167, 0.1610343, -0.1811251, 0.0370342],
           '1.running_mean': [0.0096303, 0.1137474, 0.1207837, 0.1748537],
           '1.running_var': [0.750699, 1.0977206, 0.8652157, 1.0589932],
           '1.num_batches_tracked': 4.0,
           '3.weight': [[0.5542834, -0.7803783, 0.7242244, -0.2087872],
                        [-0.5150324, 0.3999643, -0.0619991, 0.385425]],
           '3.bias': [0.3240192, -0.3446382]},
 'swa': {'n_averaged': 4.0,
         'module.0.weight': [[0.4059559, -0.1761275, 0.0355958], [-0.105396, -0.7521467, -0.953134],
                             [-0.2684758, -0.6761804, -0.0018517],
                             [0.8827747, -0.3667203, -0.4489206]],
         'module.0.bias': [0.15, -0.1, 0.03, 0.68],
         'module.1.weight': [0.8688475, 1.0949965, 0.8210436, 1.0169704],
         'module.1.bias': [-0.1204961, 0.1359091, -0.140845, 0.0309184],
         'module.1.running_mean': [0.0096303, 0.1137474, 0.1207837, 0.1748537],
         'module.1.running_var': [0.750699, 1.0977206, 0.8652157, 1.0589932],
         'module.1.num_batches_tracked': 4.0,
         'module.3.weight': [[0.5740294, -0.7508629, 0.7683327, -0.1786411],
                             [-0.5297381, 0.3929538, -0.0816392, 0.3760376]],
         'module.3.bias': [0.3737725, -0.3695972]},
 'swa_n': 4,
 'ema': {'n_averaged': 4.0,
         'module.0.weight': [[0.4068357, -0.1737317, 0.0348623],
                             [-0.1126415, -0.7349082, -0.9645817],
                             [-0.2803576, -0.6701289, -0.0120868],
                             [0.8814164, -0.3671117, -0.4511338]],
         'module.0.bias': [0.15, -0.1, 0.03, 0.68],
         'module.1.weight': [0.8844777, 1.0784463, 0.8556799, 1.0148149],
         'module.1.bias': [-0.1047041, 0.1136859, -0.1121884, 0.0277812],
         'module.1.running_mean': [0.0096303, 0.1137474, 0.1207837, 0.1748537],
         'module.1.running_var': [0.750699, 1.0977206, 0.8652157, 1.0589932],
         'module.1.num_batches_tracked': 4.0,
         'module.3.weight': [[0.5898657, -0.725853, 0.8005816, -0.1548761],
                             [-0.5363372, 0.3885162, -0.0956424, 0.3751772]],
         'module.3.bias': [0.4099359, -0.3836171]},
 'ema_n': 4,
 'ema_avg_fn': {'n_averaged': 4.0,
                'module.0.weight': [[0.4060426, -0.1761857, 0.0347098],
                                    [-0.1073187, -0.7511122, -0.9535036],
                                    [-0.2715448, -0.6746144, -0.0047328],
                                    [0.8823684, -0.3669407, -0.449505]],
                'module.0.bias': [0.15, -0.1, 0.03, 0.68],
                'module.1.weight': [0.8729029, 1.0898765, 0.8310434, 1.0168269],
                'module.1.bias': [-0.1163699, 0.1287626, -0.1326912, 0.0303449],
                'module.1.running_mean': [0.0096303, 0.1137474, 0.1207837, 0.1748537],
                'module.1.running_var': [0.750699, 1.0977206, 0.8652157, 1.0589932],
                'module.1.num_batches_tracked': 4.0,
                'module.3.weight': [[0.5788866, -0.7429045, 0.7777159, -0.1714606],
                                    [-0.5307266, 0.391913, -0.0856718, 0.3771802]],
                'module.3.bias': [0.3841424, -0.3727365]},
 'ema_avg_fn_n': 4,
 'custom': {'n_averaged': 4.0,
            'module.0.weight': [[0.4043901, -0.1827609, 0.0310517],
                                [-0.0959978, -0.7970004, -0.9213836],
                                [-0.2510918, -0.6849878, 0.0116268],
                                [0.884333, -0.3670869, -0.4457652]],
            'module.0.bias': [0.15, -0.1, 0.03, 0.68],
            'module.1.weight': [0.847068, 1.1137247, 0.7777997, 1.0220711],
            'module.1.bias': [-0.1423161, 0.1594467, -0.1772302, 0.0364821],
            'module.1.running_mean': [0.0096303, 0.1137474, 0.1207837, 0.1748537],
            'module.1.running_var': [0.750699, 1.0977206, 0.8652157, 1.0589932],
            'module.1.num_batches_tracked': 4.0,
            'module.3.weight': [[0.5558851, -0.778047, 0.7284526, -0.2063834],
                                [-0.5167177, 0.3995412, -0.0640224, 0.3842687]],
            'module.3.bias': [0.3284816, -0.3473379]},
 'custom_n': 4,
 'buffers': {'n_averaged': 4.0,
             'module.0.weight': [[0.4059559, -0.1761275, 0.0355958],
                                 [-0.105396, -0.7521467, -0.953134],
                                 [-0.2684758, -0.6761804, -0.0018517],
                                 [0.8827747, -0.3667203, -0.4489206]],
             'module.0.bias': [0.15, -0.1, 0.03, 0.68],
             'module.1.weight': [0.8688475, 1.0949965, 0.8210436, 1.0169704],
             'module.1.bias': [-0.1204961, 0.1359091, -0.140845, 0.0309184],
             'module.1.running_mean': [-0.0017605, 0.0842714, 0.0880109, 0.1024479],
             'module.1.running_var': [0.8385074, 0.9909732, 0.8869519, 0.9962095],
             'module.1.num_batches_tracked': 1.0,
             'module.3.weight': [[0.5740294, -0.7508629, 0.7683327, -0.1786411],
                                 [-0.5297381, 0.3929538, -0.0816392, 0.3760376]],
             'module.3.bias': [0.3737725, -0.3695972]},
 'buffers_n': 4,
 'swa_after_update_bn': {'n_averaged': 4.0,
                         'module.0.weight': [[0.4059559, -0.1761275, 0.0355958],
                                             [-0.105396, -0.7521467, -0.953134],
                                             [-0.2684758, -0.6761804, -0.0018517],
                                             [0.8827747, -0.3667203, -0.4489206]],
                         'module.0.bias': [0.15, -0.1, 0.03, 0.68],
                         'module.1.weight': [0.8688475, 1.0949965, 0.8210436, 1.0169704],
                         'module.1.bias': [-0.1204961, 0.1359091, -0.140845, 0.0309184],
                         'module.1.running_mean': [-0.0342986, 0.2541174, 0.327591, 0.3460914],
                         'module.1.running_var': [0.2880245, 0.6435938, 0.5846854, 1.0063173],
                         'module.1.num_batches_tracked': 3.0,
                         'module.3.weight': [[0.5740294, -0.7508629, 0.7683327, -0.1786411],
                                             [-0.5297381, 0.3929538, -0.0816392, 0.3760376]],
                         'module.3.bias': [0.3737725, -0.3695972]},
 'swa_training_kept': True,
 'swa_eval_out': [[-0.589573, 0.140617], [0.039411, 0.053223], [0.669109, -0.522553],
                  [-0.088742, 0.215324], [0.003965, -0.169076]],
 'swalr_linear': [1.0, 0.775, 0.55, 0.325, 0.1, 0.1, 0.1],
 'swalr_zero_epochs': [0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3]}


@pytest.fixture(scope="module")
def ours():
    return swa_cases.run(tg)


@pytest.mark.parametrize("key", list(TORCH))
def test_matches_torch(ours, key):
    got, want = ours[key], TORCH[key]
    if isinstance(want, dict):
        assert list(got) == list(want)   # the same state_dict keys, in torch's order
        for k in want:
            np.testing.assert_allclose(np.asarray(got[k], np.float64),
                                       np.asarray(want[k], np.float64), rtol=2e-6, atol=2e-6,
                                       err_msg=f"{key}: {k}")
    elif isinstance(want, list):
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                                   rtol=1e-6, atol=1e-6)
    else:
        assert got == want


def test_averages_differ_from_the_model(ours):
    # the check above could pass with averages that never moved: they must not be the model
    w = np.asarray(ours["model"]["0.weight"])
    for name in ("swa", "ema", "ema_avg_fn", "custom"):
        assert np.abs(np.asarray(ours[name]["module.0.weight"]) - w).max() > 1e-3, name


def test_errors_as_torch():
    model = tg.nn.Linear(2, 2)
    opt = tg.optim.SGD(model.parameters(), lr=0.1)
    swa = tg.optim.swa_utils
    # torch 2.13's messages
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        swa.AveragedModel(model, avg_fn=swa.get_swa_avg_fn(),
                          multi_avg_fn=swa.get_swa_multi_avg_fn())
    with pytest.raises(ValueError, match="anneal_strategy must by one of 'cos' or 'linear', "
                                         "instead got exp"):
        swa.SWALR(opt, 0.05, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
        swa.SWALR(opt, 0.05, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr must have the same length as "
                                         "optimizer.param_groups"):
        swa.SWALR(opt, [0.05, 0.01])


def test_swa_multi_avg_fn_is_the_running_mean():
    # get_swa_multi_avg_fn (torch's CUDA default) against the plain mean of three models
    lin = tg.nn.Linear(2, 1)
    avg = tg.optim.swa_utils.AveragedModel(lin,
                                           multi_avg_fn=tg.optim.swa_utils.get_swa_multi_avg_fn())
    seen = []
    for k in range(3):
        with tg.no_grad():
            lin.weight.fill_(float(k * k))
        seen.append(k * k)
        avg.update_parameters(lin)
    np.testing.assert_allclose(avg.module.weight.detach().numpy(), np.full((1, 2), np.mean(seen)),
                               rtol=1e-6)
    assert avg.n_averaged.item() == 3 and avg.n_averaged.dtype is tg.int64
    out = avg(tg.ones(1, 2))   # forward is the averaged module's
    assert out.shape == (1, 1)
