"""tg.amp.GradScaler and tg.cuda.amp's deprecated aliases against torch 2.13: on "cpu" the
scaler really scales, skips steps with inf/NaN gradients and adapts the scale; "cuda" is
disabled with torch's warning (no CUDA here, as torch on a CPU-only machine)."""
import io
import warnings

import numpy as np
import pytest

import tracegrad as tg


def _train(scaler, steps=7, inf_at=(2, 5), unscale_at=1):
    w = tg.tensor([1.0, -2.0], requires_grad=True)
    opt = tg.optim.SGD([w], lr=0.1)
    scaled, hist, unscaled = [], [], None
    for i in range(steps):
        opt.zero_grad()
        loss = (w * w).sum() * (float("inf") if i in inf_at else 1.0)
        out = scaler.scale(loss)
        scaled.append(out.item())
        out.backward()
        if i == unscale_at:
            scaler.unscale_(opt)
            unscaled = w.grad.numpy().tolist()
        scaler.step(opt)
        scaler.update()
        hist.append((scaler.get_scale(), scaler._get_growth_tracker(),
                     w.detach().numpy().tolist()))
    return scaled, hist, unscaled, opt


# torch 2.13, GradScaler("cpu", init_scale=16.0, growth_interval=2), SGD(lr=0.1) on
# sum(w * w) from [1, -2], the loss times inf at steps 2 and 5, unscale_ called at step 1:
TORCH_SCALED = [80.0, 51.20000457763672, float("inf"), 32.76799774169922, 20.97151756286621,
                float("inf"), 13.421770095825195]
TORCH_HIST = [
    (16.0, 1, [0.800000011920929, -1.600000023841858]),
    (32.0, 0, [0.6399999856948853, -1.2799999713897705]),
    (16.0, 0, [0.6399999856948853, -1.2799999713897705]),     # inf: skipped, backed off
    (16.0, 1, [0.5119999647140503, -1.0239999294281006]),
    (32.0, 0, [0.4095999598503113, -0.8191999197006226]),
    (16.0, 0, [0.4095999598503113, -0.8191999197006226]),
    (16.0, 1, [0.32767996191978455, -0.6553599238395691]),
]


def test_cpu_scaler_matches_torch():
    scaler = tg.amp.GradScaler("cpu", init_scale=16.0, growth_interval=2)
    assert scaler.is_enabled() and scaler.get_scale() == 16.0
    # torch 2.13
    assert scaler.state_dict() == {"scale": 16.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                   "growth_interval": 2, "_growth_tracker": 0}
    scaled, hist, unscaled, _ = _train(scaler)
    assert scaled == TORCH_SCALED
    assert unscaled == [1.600000023841858, -3.200000047683716]     # torch 2.13
    for (s, t, w), (ts, tt, tw) in zip(hist, TORCH_HIST):
        assert (s, t) == (ts, tt)
        np.testing.assert_allclose(w, tw, rtol=1e-7)
    assert scaler.state_dict() == {"scale": 16.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                   "growth_interval": 2, "_growth_tracker": 1}
    assert scaler._scale.dtype is tg.float32 and scaler._growth_tracker.dtype is tg.int32


def test_nan_gradient_skips_the_step_and_backs_off():
    scaler = tg.amp.GradScaler("cpu", init_scale=8.0)
    w = tg.tensor([1.0], requires_grad=True)
    opt = tg.optim.Adam([w], lr=0.1)
    scaler.scale((w * float("nan")).sum()).backward()
    assert scaler.step(opt) is None
    scaler.update()
    assert w.item() == 1.0 and opt.state[w] == {} and scaler.get_scale() == 4.0


def test_call_order_errors_are_torchs():
    scaler = tg.amp.GradScaler("cpu")
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    opt = tg.optim.SGD([w], lr=0.1)
    # torch 2.13's messages
    with pytest.raises(RuntimeError, match="Attempted update but _scale is None"):
        scaler.update()
    scaler.scale((w * w).sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) has already been called on this "
                                           r"optimizer since the last update\(\)"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) is being called after step\(\)"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: 0)
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        scaler.scale(3.0)
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        tg.amp.GradScaler("cpu").load_state_dict({})
    w16 = tg.tensor([1.0], dtype=tg.float16, requires_grad=True)
    o16 = tg.optim.SGD([w16], lr=0.1)
    s16 = tg.amp.GradScaler("cpu")
    s16.scale((w16 * 2).sum()).backward()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
        s16.unscale_(o16)


def test_scale_nested_outputs_and_explicit_new_scale():
    scaler = tg.amp.GradScaler("cpu", init_scale=16.0)
    a, (b,) = scaler.scale([tg.tensor(1.0), (tg.tensor(2.0, dtype=tg.float64),)])
    # torch 2.13: [tensor(16.), (tensor(32., dtype=torch.float64),)]
    assert (a.item(), a.dtype, b.item(), b.dtype) == (16.0, tg.float32, 32.0, tg.float64)
    assert scaler.scale(tg.tensor(1.0, dtype=tg.float16)).dtype is tg.float32
    scaler.update(3.0)
    assert scaler.get_scale() == 3.0
    scaler.update(tg.tensor(5.0))
    assert scaler.get_scale() == 5.0


def test_state_dict_round_trip_resumes():
    scaler = tg.amp.GradScaler("cpu", init_scale=16.0, growth_interval=2)
    _train(scaler, steps=4)
    buf = io.BytesIO()
    tg.save(scaler.state_dict(), buf)
    buf.seek(0)
    resumed = tg.amp.GradScaler("cpu")
    resumed.load_state_dict(tg.load(buf))
    assert resumed.state_dict() == scaler.state_dict()
    assert resumed.get_scale() == TORCH_HIST[3][0] and resumed._get_growth_tracker() == 1


def test_default_cuda_scaler_is_disabled_with_torchs_warning():
    # torch 2.13 on a machine without CUDA: "torch.cuda.amp.GradScaler is enabled, but CUDA
    # is not available.  Disabling."; then get_scale() 1.0, state_dict() {}, scale() identity
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling."):
        scaler = tg.amp.GradScaler()
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    t = tg.tensor(2.0)
    assert scaler.scale(t) is t
    w = tg.tensor([1.0], requires_grad=True)
    opt = tg.optim.SGD([w], lr=0.5)
    scaler.scale((w * w).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert w.item() == 0.0                      # a plain, unscaled step
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tg.amp.GradScaler("cpu", enabled=False)   # disabled on purpose: no warning


def test_cuda_amp_aliases_warn_deprecated_and_are_disabled():
    from tracegrad.cuda.amp import GradScaler, autocast
    with pytest.warns(FutureWarning, match=r"`torch.cuda.amp.GradScaler\(args...\)` is "
                                           r"deprecated. Please use `torch.amp.GradScaler"), \
            pytest.warns(UserWarning, match="CUDA is not available.  Disabling."):
        scaler = GradScaler()
    assert not scaler.is_enabled() and isinstance(scaler, tg.amp.GradScaler)
    assert tg.cuda.amp.GradScaler is GradScaler
    # torch 2.13 without CUDA also warns "CUDA is not available or torch_xla is imported.
    # Disabling autocast."
    with pytest.warns(FutureWarning, match=r"`torch.cuda.amp.autocast\(args...\)` is "
                                           "deprecated"), \
            pytest.warns(UserWarning, match="Disabling autocast"):
        region = autocast()
    x = tg.ones(2, 2)
    with region:
        assert (x @ x).dtype is tg.float32         # disabled, as torch without CUDA
