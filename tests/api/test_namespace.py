"""torch's namespace surface around tensors: dtype settings, threads, print options,
accelerator / backends queries, one-process distributed and DDP, refused extras
(tensorboard, onnx).  Values and messages recorded from torch 2.13."""
import math
import pickle

import pytest

import tracegrad as tg
import tracegrad.nn as nn


def test_constants_and_dtype_type():
    assert (tg.inf, tg.pi, tg.e) == (math.inf, math.pi, math.e) and math.isnan(tg.nan)
    assert isinstance(tg.float32, tg.dtype) and tg.get_default_dtype() is tg.float32


def test_set_default_dtype():
    try:
        tg.set_default_dtype(tg.float64)
        # torch 2.13: tensor([1.0]), Tensor([1]), ones, arange(3.) follow; FloatTensor stays
        assert tg.tensor([1.0]).dtype is tg.float64 and tg.Tensor([1]).dtype is tg.float64
        assert tg.ones(1).dtype is tg.float64 and tg.arange(3.0).dtype is tg.float64
        assert tg.FloatTensor([1]).dtype is tg.float32 and tg.tensor(1).dtype is tg.int64
        assert (tg.tensor([1]) + 1.5).dtype is tg.float64
        with pytest.raises(TypeError, match="only floating-point types are supported as the "
                                            "default type"):
            tg.set_default_dtype(tg.int64)
    finally:
        tg.set_default_dtype(tg.float32)
    assert (tg.tensor([1]) + 1.5).dtype is tg.float32


def test_threads_and_warn_always():
    n = tg.get_num_threads()
    try:
        tg.set_num_threads(3)
        assert tg.get_num_threads() == 3
        with pytest.raises(RuntimeError, match="set_num_threads expects a positive integer"):
            tg.set_num_threads(0)
    finally:
        tg.set_num_threads(n)
    assert tg.is_warn_always_enabled() is False
    tg.set_warn_always(True)
    assert tg.is_warn_always_enabled() is True
    tg.set_warn_always(False)


def test_set_printoptions():
    x = tg.tensor([1.123456, 2.5, 3.0])
    try:
        tg.set_printoptions(precision=2)
        assert repr(x) == "tensor([1.12, 2.50, 3.00])"                  # torch 2.13
        tg.set_printoptions(precision=6)
        assert repr(x) == "tensor([1.123456, 2.500000, 3.000000])"
        tg.set_printoptions(sci_mode=True)
        assert repr(x) == "tensor([1.123456e+00, 2.500000e+00, 3.000000e+00])"
        tg.set_printoptions(profile="default")
        assert repr(x) == "tensor([1.1235, 2.5000, 3.0000])"
        tg.set_printoptions(sci_mode=False)
        assert repr(tg.tensor([1.123, 1e-6])) == "tensor([1.1230, 0.0000])"
        tg.set_printoptions(sci_mode=None, precision=3)   # an unset sci_mode resets it
        assert repr(tg.tensor([[1.5, 2], [3, 4]])) == ("tensor([[1.500, 2.000],\n"
                                                       "        [3.000, 4.000]])")
        with pytest.raises(ValueError, match="unknown profile 'x'"):
            tg.set_printoptions(profile="x")
    finally:
        tg.set_printoptions(profile="default")
    assert repr(x) == "tensor([1.1235, 2.5000, 3.0000])"


def test_accelerator_and_backends():
    # torch 2.13 CPU-only answers
    assert (tg.accelerator.is_available(), tg.accelerator.current_accelerator(),
            tg.accelerator.device_count()) == (False, None, 0)
    b = tg.backends
    assert (b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.enabled, b.cudnn.is_available(),
            b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32, b.mps.is_available(),
            b.mps.is_built(), b.cuda.is_built()) == (False, False, True, False, False, True,
                                                     False, False, False)
    b.cudnn.benchmark = True
    assert tg.backends.cudnn.benchmark is True
    b.cudnn.benchmark = False


def test_distributed_single_process():
    dist = tg.distributed
    assert dist.is_available() and not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()                                                  # torch 2.13
    with pytest.raises(NotImplementedError, match="tg.compile\\(step, mesh="):
        dist.init_process_group("gloo", world_size=2, rank=0)
    dist.init_process_group("gloo", world_size=1, rank=0)
    try:
        assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
        t = tg.tensor([1.0, 2.0])
        assert dist.all_reduce(t) is None and t.tolist() == [1.0, 2.0]
        out = [tg.zeros(2)]
        dist.all_gather(out, t)
        assert out[0].tolist() == [1.0, 2.0]
        with pytest.raises(RuntimeError, match="initialize the default process group twice"):
            dist.init_process_group("gloo", world_size=1, rank=0)
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()


def test_ddp_wraps_one_process():
    m = nn.Linear(2, 3)
    d = nn.parallel.DistributedDataParallel(m, device_ids=None)
    x = tg.ones(4, 2)
    assert d.module is m and d(x).tolist() == m(x).tolist()
    assert sorted(d.state_dict()) == ["module.bias", "module.weight"]   # torch's prefix
    with d.no_sync():
        d(x).sum().backward()
    assert m.weight.grad.tolist() == [[4.0, 4.0]] * 3


def test_refused_extras_say_what_to_use():
    with pytest.raises(ImportError, match="torch.utils.tensorboard or tensorboardX"):
        import tracegrad.utils.tensorboard  # noqa: F401
    with pytest.raises(NotImplementedError, match="tracegrad dump.*jax.export"):
        tg.onnx.export(nn.Linear(2, 2), tg.ones(1, 2), "m.onnx")
    with pytest.raises(NotImplementedError, match="ONNX export is not supported"):
        tg.onnx.dynamo_export(nn.Linear(2, 2), tg.ones(1, 2))
    with pytest.raises(NotImplementedError, match="tracegrad.onnx.verification"):
        tg.onnx.verification


def test_torchscript_is_refused_naming_tg_compile_and_its_markers_pass_through():
    with pytest.raises(NotImplementedError, match=r"tracegrad.jit.script: .*tg.compile"):
        tg.jit.script(nn.Linear(2, 2))
    with pytest.raises(NotImplementedError, match=r"tracegrad.jit.trace: .*tg.compile"):
        tg.jit.trace(nn.Linear(2, 2), tg.ones(1, 2))
    with pytest.raises(NotImplementedError, match="tracegrad.jit.ScriptModule"):
        tg.jit.ScriptModule
    assert not hasattr(tg.jit, "ScriptModule")      # probes read it as missing

    @tg.jit.ignore
    def f(x):
        return x + 1

    @tg.jit.ignore(drop=True)
    def g(x):
        return x * 2

    assert f(1) == 2 and g(2) == 4
    assert tg.jit.is_scripting() is False and tg.jit.is_tracing() is False


def test_pickled_size_and_dtype_round_trip():
    assert pickle.loads(pickle.dumps(tg.Size([1, 2]))) == (1, 2)


@pytest.mark.parametrize("name, instead", [
    ("fft", "jax.numpy.fft"), ("sin_", "x.sin_(...), or tg.sin(x, out=x)"),
    ("float8_e4m3fn", "tracegrad's dtypes are bool"), ("inverse", "tg.linalg.inv"),
    ("det", "tg.linalg.det"), ("sparse_coo_tensor", "dense tensors"),
    ("quantize_per_tensor", "no quantization"), ("ScriptModule", "tg.compile traces"),
    ("view_copy", "tg.view(...).clone()"), ("frexp", "from tracegrad ops"),
])
def test_torch_names_not_built_say_what_instead(name, instead):
    # torch 2.13 has every one of these at top level (dir(torch)); tracegrad does not
    with pytest.raises(NotImplementedError, match=f"tracegrad.{name} is not built") as info:
        getattr(tg, name)
    assert instead in str(info.value)
    assert isinstance(info.value, AttributeError) and not hasattr(tg, name)


def test_unknown_names_stay_plain_attribute_errors():
    with pytest.raises(AttributeError, match="module 'tracegrad' has no attribute 'nosuch'") as e:
        tg.nosuch
    assert not isinstance(e.value, NotImplementedError)


def test_the_not_built_list_holds_no_built_name():
    from tracegrad._torch_names import TORCH_NAMES
    assert not sorted(n for n in TORCH_NAMES if n in vars(tg))


def test_torch_aliases():
    x = tg.tensor([0.5, -0.25])
    # torch 2.13: arccos(x) = [1.0471976, 1.8234766]; multiply(x, 2) = [1.0, -0.5]
    assert tg.arccos(x).tolist() == pytest.approx([1.0471976, 1.8234766])
    assert tg.multiply(x, 2).tolist() == [1.0, -0.5] and tg.fix(x).tolist() == [0.0, -0.0]
    assert tg.concat([x, x]).shape == (4,) and tg.row_stack([x, x]).shape == (2, 2)
    assert tg.not_equal(x, 0.5).tolist() == [False, True]
    assert tg.true_divide(x, 2).tolist() == [0.25, -0.125] == tg.divide(x, 2).tolist()
    assert tg.swapaxes(tg.ones(2, 3), 0, 1).shape == (3, 2)
