"""The behaviour behind the bad-input fixes that the walk (test_bad_input_walk*.py) cannot
show by one call: what still works, and the memory check's arithmetic."""
import numpy as np
import pytest

import tracegrad as tg
from tracegrad import _args


# ---- view's stride rule and contiguous() ---------------------------------------------------

def test_contiguity_follows_torch():
    x = tg.arange(6.0).reshape(2, 3)
    # torch 2.13: True, False, False, True, False, True
    assert x.is_contiguous()
    assert not x.t().is_contiguous()
    assert not x[:, ::2].is_contiguous()
    assert x[0].is_contiguous()
    assert not tg.ones(4, 1).expand(4, 3).is_contiguous()
    assert x.t().reshape(6).is_contiguous()   # reshape of a transpose copies, as torch


def test_contiguous_copies_only_what_needs_it():
    x = tg.arange(6.0).reshape(2, 3)
    assert x.contiguous() is x
    t = x.t()
    c = t.contiguous()
    assert c is not t and c.is_contiguous()
    np.testing.assert_array_equal(c.view(-1).numpy(), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0])


def test_contiguous_copy_carries_the_gradient():
    x = tg.arange(6.0, requires_grad=True)
    y = x.reshape(2, 3).t().contiguous().view(-1)
    (y * tg.arange(6.0)).sum().backward()
    # y[k] = x[perm[k]] with perm = [0, 3, 1, 4, 2, 5]: d/dx[perm[k]] = k
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 2.0, 4.0, 1.0, 3.0, 5.0])


def test_view_keeps_sharing_storage_where_torch_can():
    x = tg.zeros(2, 3)
    v = x.t().view(3, 2)          # the same shape: no dim crosses a stride boundary
    w = x[:, :2][0].view(-1)      # a contiguous run of a row
    x.add_(1.0)
    np.testing.assert_array_equal(v.numpy(), np.ones((3, 2)))
    np.testing.assert_array_equal(w.numpy(), [1.0, 1.0])


def test_view_of_a_view_in_a_compiled_function():
    # traced values have no strides: view is as lenient as reshape there (documented)
    f = tg.compile(lambda x: x.t().view(-1) * 2)
    np.testing.assert_array_equal(f(tg.arange(6.0).reshape(2, 3)).numpy(),
                                  [0.0, 6.0, 2.0, 8.0, 4.0, 10.0])


# ---- what stays valid --------------------------------------------------------------------

def test_integer_parameter_without_grad_and_empty_parameter():
    p = tg.nn.Parameter(tg.tensor([1, 2]), requires_grad=False)
    assert p.dtype is tg.int64 and not p.requires_grad and p.tolist() == [1, 2]
    e = tg.nn.Parameter()   # torch 2.13: tensor([], requires_grad=True), float32
    assert e.shape == (0,) and e.dtype is tg.float32 and e.requires_grad


def test_iteration_of_tensors_with_dims():
    rows = list(tg.arange(6).reshape(3, 2))
    assert [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]
    assert [int(v) for v in tg.tensor([7, 8])] == [7, 8]
    assert list(tg.ones(0, 3)) == []


def test_python_types_as_dtypes_stay_accepted():
    # torch 2.13: int64, bool
    assert tg.ones(2, dtype=int).dtype is tg.int64
    assert tg.tensor([1], dtype=bool).dtype is tg.bool
    assert tg.ones(2, requires_grad=np.bool_(True)).requires_grad


def test_manual_seed_accepts_what_int_accepts():
    state = tg.get_rng_state()
    try:
        # torch 2.13: manual_seed("12") and manual_seed(12.9) seed with 12
        assert tg.manual_seed("12").initial_seed() == 12
        assert tg.manual_seed(12.9).initial_seed() == 12
    finally:
        tg.set_rng_state(state)


def test_integer_pow_by_non_negative_scalars_and_float_powers():
    assert (tg.tensor([2, 3]) ** 2).tolist() == [4, 9]
    assert (tg.tensor([2, 3]) ** 0).tolist() == [1, 1]
    np.testing.assert_allclose((tg.tensor([2, 4]) ** -1.0).numpy(), [0.5, 0.25])
    # torch 2.13: int32 ** int32 tensor with negatives -> tensor([1, 0, 1], dtype=torch.int32)
    r = tg.tensor([1, 2, -1], dtype=tg.int32) ** tg.tensor([-1, -3, -2], dtype=tg.int32)
    assert r.dtype is tg.int32 and r.tolist() == [1, 0, 1]


def test_integer_pow_by_a_tensor_on_jax_agrees():
    f = tg.compile(lambda a, b: a ** b)
    a, b = tg.tensor([0, 1, -1, 2, -2, 3]), tg.tensor([-1, -2, -3, -1, 2, 2])
    # torch 2.13: tensor([0, 1, -1, 0, 4, 9])
    assert f(a, b).tolist() == [0, 1, -1, 0, 4, 9]
    assert (a ** b).tolist() == [0, 1, -1, 0, 4, 9]


# ---- the memory check before allocating -----------------------------------------------------

def test_allocation_error_is_a_memory_error_naming_op_shape_dtype_bytes(monkeypatch):
    monkeypatch.setattr(_args, "_available_bytes", lambda: 2 ** 31)   # a 2 GiB machine
    with pytest.raises(tg.AllocationError) as exc:
        tg.zeros(2 ** 30, dtype=tg.float32)   # 4 GiB
    assert isinstance(exc.value, MemoryError)
    msg = str(exc.value)
    assert msg.startswith("zeros: a tensor of shape [1073741824] and dtype float32 needs "
                          "4294967296 bytes (4.00 GiB), more than the 2.00 GiB"), msg
    with pytest.raises(tg.AllocationError, match=r"randn: .* \(12.00 GiB\)"):
        tg.randn(2 ** 30)   # the bits, their floats and the result: three buffers
    with pytest.raises(tg.AllocationError, match=r"float16 needs 2147483650 bytes"):
        tg.full((2 ** 30 + 1,), 1.0, dtype=tg.float16)


def test_small_allocations_do_not_read_the_memory(monkeypatch):
    def fail():
        raise AssertionError("read the memory for a small tensor")
    monkeypatch.setattr(_args, "_available_bytes", fail)
    assert tg.zeros(1000, 1000).shape == (1000, 1000)   # 4 MB, under the 1 GiB threshold
    assert tg.zeros(0, 2 ** 40).shape == (0, 2 ** 40)   # no bytes at all


def test_available_bytes_reads_the_machine():
    n = _args._available_bytes()
    assert 2 ** 20 < n < 2 ** 62
