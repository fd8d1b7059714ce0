"""Tensors on a jax device ("xla": jax's default backend, the CPU here): storage, eager ops,
backward, compiled steps that keep their state on the device and donate it, and the host
conversions (issue 17; backends/device_arrays.py).

Expected values are NumPy references or the same computation on host tensors; the error
messages follow torch 2.13's for CUDA tensors."""
import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn as nn
import tracegrad.nn.functional as F
from tracegrad.backends import device_arrays

XLA = "xla"


def on_device(t) -> bool:
    return device_arrays.is_device_array(t._data)


def test_to_xla_keeps_values_and_dtypes_and_reports_the_device():
    for dtype in (tg.float32, tg.float64, tg.int64, tg.bool):
        a = np.arange(6).reshape(2, 3).astype(dtype.numpy)
        x = tg.tensor(a).to(XLA)
        assert on_device(x) and x.dtype is dtype and x.shape == (2, 3)
        assert x._data.dtype == dtype.numpy   # float64 / int64 are not truncated by jax
        np.testing.assert_array_equal(x.cpu().numpy(), a)
    assert x.device == tg.device("xla", 0) and str(x.device) == "xla:0"
    assert (x.is_cpu, x.is_xla, x.is_cuda, x.get_device()) == (False, True, False, 0)
    h = tg.ones(2)
    assert (h.is_cpu, h.is_xla, h.get_device()) == (True, False, -1)
    assert h.to(XLA).to("cpu").device == tg.device("cpu")


def test_repr_item_tolist_and_array_read_the_host_value():
    x = tg.tensor([1.5, 2.0]).to(XLA)
    assert repr(x) == "tensor([1.5000, 2.0000], device='xla:0')"
    assert x.sum().item() == 3.5 and x.tolist() == [1.5, 2.0] and bool(x[0] > 1)
    np.testing.assert_array_equal(np.asarray(x), [1.5, 2.0])
    assert f"{x.sum():.1f}" == "3.5"


def test_numpy_of_a_device_tensor_raises_as_torch_for_cuda():
    x = tg.ones(2).to(XLA)
    # torch 2.13 (checked on its meta device, the same check as a CUDA tensor's): TypeError
    # "can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor
    # to host memory first."
    with pytest.raises(TypeError, match=r"can't convert xla:0 device type tensor to numpy\. "
                                        r"Use Tensor\.cpu\(\) to copy the tensor to host"):
        x.numpy()


def test_eager_ops_on_device_match_the_host_and_stay_on_the_device():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    for fn in (lambda x, w: x @ w, lambda x, w: (x.exp() * 2 - 1).sum(0),
               lambda x, w: F.softmax(x, -1), lambda x, w: x.T[1:, :2] + w[:3].sum(),
               lambda x, w: tg.cat([x, x]).max(dim=0).values, lambda x, w: tg.where(x > 0, x, w[0, 0])):
        host = fn(tg.tensor(a), tg.tensor(b))
        dev = fn(tg.tensor(a).to(XLA), tg.tensor(b).to(XLA))
        assert on_device(dev) and dev.dtype is host.dtype
        np.testing.assert_allclose(dev.cpu().numpy(), host.numpy(), rtol=1e-12)


def test_in_place_ops_indexing_and_value_dependent_ops_on_device():
    x = tg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).to(XLA)
    y = x.clone()
    y[0, 1] = 7.0
    y.add_(1)
    assert on_device(y)
    np.testing.assert_array_equal(y.cpu().numpy(), [[2, 8, 4], [5, 6, 7]])
    np.testing.assert_array_equal(x.cpu().numpy(), [[1, 2, 3], [4, 5, 6]])
    idx = tg.tensor([1, 0]).to(XLA)
    np.testing.assert_array_equal(x[idx].cpu().numpy(), [[4, 5, 6], [1, 2, 3]])
    nz = (x > 3).nonzero()   # a value-dependent shape: found on the host, put back
    assert on_device(nz)
    np.testing.assert_array_equal(nz.cpu().numpy(), [[1, 0], [1, 1], [1, 2]])
    np.testing.assert_array_equal(x[x > 4].cpu().numpy(), [5, 6])
    with pytest.raises(IndexError, match="out of range|out of bounds"):
        x[tg.tensor([5]).to(XLA)]


def test_backward_on_device_gives_device_gradients_equal_to_the_host_ones():
    a = np.array([0.5, -1.0, 2.0])
    grads = []
    for dev in (None, XLA):
        w = tg.tensor(a, device=dev, requires_grad=True)
        h = tg.tensor(a * 2, device=dev, requires_grad=True)
        h.register_hook(lambda g: g * 10)   # a host call inside the backward program
        ((w.sin() * h).sum() + (w * w).mean()).backward()
        assert on_device(w.grad) == (dev is not None) and on_device(h.grad) == (dev is not None)
        grads.append((w.grad.cpu().numpy(), h.grad.cpu().numpy()))
    np.testing.assert_allclose(grads[1][0], np.cos(a) * a * 2 + 2 * a / 3, rtol=1e-12)
    np.testing.assert_allclose(grads[1][1], 10 * np.sin(a), rtol=1e-12)
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-12)


def test_anomaly_mode_backward_on_device():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with tg.autograd.detect_anomaly():
            w = tg.tensor([1.0, 2.0], device=XLA, requires_grad=True)
            w.exp().sum().backward()
    assert on_device(w.grad)
    np.testing.assert_allclose(w.grad.cpu().numpy(), np.exp([1.0, 2.0]), rtol=1e-6)


def test_creation_on_device_and_like_functions_follow_their_input():
    for t in (tg.zeros(2, 3, device=XLA), tg.ones(2, device="xla:0"),
              tg.full((2,), 3.0, device=XLA), tg.arange(4, device=XLA),
              tg.eye(2, device=XLA), tg.tensor([1, 2], device=XLA), tg.randn(3, device=XLA),
              tg.empty(2, device=XLA), tg.linspace(0, 1, 3, device=XLA)):
        assert on_device(t), t
    x = tg.tensor([1.0, 2.0], device=XLA)
    for t in (tg.zeros_like(x), tg.ones_like(x), tg.full_like(x, 2.0), tg.randn_like(x),
              x.new_zeros(3), x.new_tensor([1.0]), x.new_full((2,), 4.0), tg.empty_like(x)):
        assert on_device(t), t
    assert not on_device(tg.zeros_like(x, device="cpu"))
    np.testing.assert_array_equal(tg.arange(4, device=XLA).cpu().numpy(), [0, 1, 2, 3])


def test_moving_a_tensor_that_requires_grad_is_differentiable_as_torch():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    d = w.to(XLA)
    assert on_device(d) and d.grad_fn.name() == "ToCopyBackward0" and not d.is_leaf
    (d * d).sum().backward()
    assert not on_device(w.grad)      # the gradient came back to w's device
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 4.0])
    v = tg.ones(2, device=XLA, requires_grad=True)
    c = (v * 3).cpu()
    assert not on_device(c) and c.grad_fn.name() == "ToCopyBackward0"
    c.sum().backward()
    assert on_device(v.grad)
    np.testing.assert_array_equal(v.grad.cpu().numpy(), [3.0, 3.0])
    np.testing.assert_array_equal((v * 2).cpu().detach().numpy(), [2.0, 2.0])


def test_cuda_without_a_gpu_says_so():
    with pytest.raises(NotImplementedError, match="Tensor.cuda.*no CUDA GPU is available"):
        tg.ones(2).cuda()
    with pytest.raises(RuntimeError, match="zeros: device 'cuda'"):   # a RuntimeError too
        tg.zeros(2, device="cuda")


def _mlp_steps(device, steps=4, donate=None, loss_fn=F.cross_entropy):
    tg.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
    if device is not None:
        model.to(device)
    opt = tg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(1)
    x = tg.tensor(rng.standard_normal((5, 6)).astype(np.float32), device=device)
    y = (tg.tensor(rng.integers(0, 3, 5), device=device) if loss_fn is F.cross_entropy
         else tg.tensor(rng.standard_normal((5, 3)).astype(np.float32), device=device))

    @tg.compile(donate=donate)
    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    losses = [step(x, y).item() for _ in range(steps)]
    return losses, model, opt, step, (x, y)


def test_compiled_step_keeps_state_on_the_device_and_matches_the_host():
    host, hmodel, *_ = _mlp_steps(None)
    dev, dmodel, opt, step, _ = _mlp_steps(XLA)
    np.testing.assert_allclose(dev, host, rtol=1e-5)
    for p, q in zip(dmodel.parameters(), hmodel.parameters()):
        assert on_device(p) and on_device(p.grad) and on_device(opt.state[p]["momentum_buffer"])
        np.testing.assert_allclose(p.cpu().detach().numpy(), q.detach().numpy(), rtol=1e-5)
    assert step.traces <= 3


def test_compiled_step_donates_device_state_and_spares_what_others_read():
    _, model, _, step, (x, y) = _mlp_steps(XLA, steps=3, loss_fn=F.mse_loss)
    w = model[0].weight
    alias = w.detach()    # shares w's storage: sees the update, as torch's detach()
    ptr = w._data.unsafe_buffer_pointer()
    step(x, y)
    assert w._data.unsafe_buffer_pointer() == ptr   # donated: XLA updated the buffer in place
    np.testing.assert_array_equal(alias.cpu().numpy(), w.detach().cpu().numpy())
    held = w._data        # another holder of the array: it must stay readable and unchanged
    kept = np.asarray(held).copy()
    step(x, y)
    assert not held.is_deleted() and w._data.unsafe_buffer_pointer() != held.unsafe_buffer_pointer()
    np.testing.assert_array_equal(np.asarray(held), kept)
    assert not np.array_equal(w.detach().cpu().numpy(), kept)


def test_a_step_with_index_checks_is_not_donated_and_a_failed_check_keeps_the_state():
    _, model, _, step, (x, y) = _mlp_steps(XLA, steps=2)   # cross_entropy checks its targets
    w = model[0].weight
    before = w.detach().cpu().numpy().copy()
    with pytest.raises(IndexError, match="out of bounds|out of range"):
        step(x, tg.tensor([0, 1, 2, 3, 0], device=XLA))
    np.testing.assert_array_equal(w.detach().cpu().numpy(), before)
    assert all(e.donate == () for es in step._cache.values() for e in es)


def test_host_state_is_not_donated_on_the_cpu():
    _, model, _, step, (x, y) = _mlp_steps(None, steps=2)
    entry = next(e for es in step._cache.values() for e in es)
    assert entry.donate == ()


def test_module_to_moves_parameters_in_place_for_an_existing_optimizer():
    model = nn.Linear(3, 2)
    ids = [id(p) for p in model.parameters()]
    opt = tg.optim.Adam(model.parameters(), lr=0.01)
    model.to(XLA)
    assert [id(p) for p in model.parameters()] == ids
    assert all(on_device(p) for p in model.parameters())
    x = tg.randn(4, 3, device=XLA)
    model(x).pow(2).mean().backward()
    opt.step()
    assert all(on_device(p) and on_device(p.grad) for p in model.parameters())
    assert all(on_device(s["exp_avg"]) for s in opt.state.values())
    model.cpu()
    assert not any(on_device(p) or on_device(p.grad) for p in model.parameters())


def test_layers_take_torchs_device_factory_argument():
    lin = nn.Linear(3, 2, device=XLA)
    bn = nn.BatchNorm1d(3, device=XLA)
    assert on_device(lin.weight) and on_device(lin.bias) and on_device(bn.running_mean)
    assert not on_device(nn.Linear(3, 2, device="cpu").weight)
    out = bn(lin.weight.T.detach() @ tg.ones(2, 3, device=XLA))
    assert on_device(out) and on_device(bn.running_var)


def test_cuda_queries_ask_jax():
    assert tg.cuda.is_available() is False and tg.cuda.device_count() == 0
    assert tg.accelerator.is_available() is False and tg.accelerator.current_accelerator() is None


def test_state_dict_round_trip_keeps_the_modules_device():
    src = nn.Linear(3, 2)
    dst = nn.Linear(3, 2).to(XLA)
    dst.load_state_dict(src.state_dict())
    assert on_device(dst.weight)
    np.testing.assert_array_equal(dst.weight.detach().cpu().numpy(), src.weight.detach().numpy())
    back = nn.Linear(3, 2)
    back.load_state_dict(dst.state_dict())    # device tensors load into host parameters
    assert not on_device(back.weight)
    np.testing.assert_array_equal(back.weight.detach().numpy(), src.weight.detach().numpy())


def test_gradients_land_on_the_leafs_device_when_nothing_saved_is_on_it():
    # the backward programs of these graphs read no device value (the saved constants are
    # host scalars): the root's gradient and the accumulation put the result on the device
    w = tg.ones(2, 2, device=XLA, requires_grad=True)
    z = w.clone()
    z[0].add_(w[1] * 3)        # an in-place write into a view (CopySlices)
    z.sum().backward()
    assert on_device(w.grad)
    np.testing.assert_array_equal(w.grad.cpu().numpy(), [[1, 1], [4, 4]])
    v = tg.ones(2, device=XLA, requires_grad=True)
    (v * 3).sum().backward()
    assert on_device(v.grad)
    np.testing.assert_array_equal(v.grad.cpu().numpy(), [3, 3])
    h = tg.ones(2, requires_grad=True)      # a host leaf used with a device tensor
    (h * tg.full((2,), 2.0, device=XLA)).sum().backward()
    assert not on_device(h.grad)
    np.testing.assert_array_equal(h.grad.numpy(), [2, 2])


def test_the_other_factories_with_a_device_argument_honour_it():
    assert on_device(tg.normal(0.0, 1.0, (2,), device=XLA))
    assert on_device(tg.normal(tg.zeros(2, device=XLA), 1.0))
    assert on_device(tg.tril_indices(3, 3, device=XLA))
    mask = nn.Transformer.generate_square_subsequent_mask(3, device=XLA)
    assert on_device(mask)
    np.testing.assert_array_equal(np.isinf(mask.cpu().numpy()), np.triu(np.ones((3, 3)), 1) > 0)
    with pytest.raises(NotImplementedError, match="FloatTensor: only device='cpu'"):
        tg.FloatTensor([1.0], device=XLA)


def test_deepcopy_and_pickle_keep_the_device_and_averaged_model_takes_one():
    import copy
    import pickle
    model = nn.Linear(3, 2).to(XLA)
    clone = copy.deepcopy(model)
    assert on_device(clone.weight) and clone.weight is not model.weight
    np.testing.assert_array_equal(clone.weight.detach().cpu().numpy(),
                                  model.weight.detach().cpu().numpy())
    back = pickle.loads(pickle.dumps(tg.tensor([1.0, 2.0], device=XLA)))
    assert on_device(back) and back.cpu().tolist() == [1.0, 2.0]
    avg = tg.optim.swa_utils.AveragedModel(nn.Linear(3, 2), device=XLA)
    assert on_device(avg.module.weight)


def test_a_gradient_with_history_moves_to_its_leafs_device_differentiably():
    # backward(create_graph=True) accumulating a host gradient that has a graph into a
    # device leaf: the move is a ToCopyBackward0 node, not a cut
    from tracegrad.autograd.grad_accumulation import _on_device_of
    w = tg.ones(2, device=XLA, requires_grad=True)
    g = tg.ones(2, requires_grad=True) * 2
    moved = _on_device_of(w, g)
    assert on_device(moved) and moved.grad_fn.name() == "ToCopyBackward0"
    np.testing.assert_array_equal(moved.detach().cpu().numpy(), [2.0, 2.0])
    assert _on_device_of(w, moved) is moved
