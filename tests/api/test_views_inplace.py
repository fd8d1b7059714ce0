"""Views share values with their base; in-place ops write through and keep autograd right.

Expected values come from torch 2.13 running the same code (noted per test).
"""
import numpy as np
import pytest

import tracegrad as tg


def test_views_see_base_changes_and_base_sees_view_changes():
    b = tg.tensor([[1.0, 2.0], [3.0, 4.0]])
    row, t, flat = b[0], b.T, b.reshape(4)
    row.mul_(10)
    np.testing.assert_array_equal(b.numpy(), [[10, 20], [3, 4]])
    np.testing.assert_array_equal(t.numpy(), [[10, 3], [20, 4]])
    b.add_(1)
    np.testing.assert_array_equal(row.numpy(), [11, 21])
    np.testing.assert_array_equal(flat.numpy(), [11, 21, 4, 5])
    assert row._version == b._version == t._version == 2


def test_view_of_a_view_writes_through_to_the_root():
    b = tg.zeros(2, 3)
    v = b.T[1:]            # (2, 2) view of a (3, 2) view
    v.add_(tg.ones(2, 2))
    np.testing.assert_array_equal(b.numpy(), [[0, 1, 1], [0, 1, 1]])


def test_inplace_on_slice_view_gradient(executor):
    # torch 2.13: b = [2, 4, 12, 8] (grad_fn CopySlices); w.grad = [40, 160, 96, 32]
    w = tg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = w * 2
    v = b[1:3]
    v.mul_(w[:2])
    np.testing.assert_array_equal(b.detach().numpy(), [2, 4, 12, 8])
    assert b.grad_fn is not None and not b.is_leaf
    (b * b).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [40, 160, 96, 32])


def test_inplace_on_transposed_view_of_view(executor):
    # torch 2.13: b = [[4, 6], [10, 12]]; w.grad = 3 everywhere
    w = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = w * 3
    b.t()[0].add_(1)
    np.testing.assert_array_equal(b.detach().numpy(), [[4, 6], [10, 12]])
    b.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.full((2, 2), 3.0))


def test_inplace_on_view_of_leaf_under_no_grad(executor):
    # torch 2.13: a = [1, 20, 30] and still a leaf; grad of sum(a*a) = [2, 40, 60]
    a = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with tg.no_grad():
        a[1:].mul_(10)
    assert a.is_leaf
    np.testing.assert_array_equal(a.detach().numpy(), [1, 20, 30])
    (a * a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2, 40, 60])


def test_inplace_on_view_of_leaf_with_grad_raises():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is "
                                           "being used in an in-place operation"):
        a[0:1].mul_(2)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        a.fill_(0)


def test_inplace_after_save_but_before_use(executor):
    # the mutated value is not what the backward reads: no error (torch 2.13: [e, e^2])
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    c = b.exp()
    b[0:1].mul_(3)
    c.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.exp([1.0, 2.0]), rtol=1e-6)
    # the mutated value is read by b*b's backward: torch's error
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    c = b * b
    b[0:1].mul_(3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*MulBackward0.*"
                                           "is at version 1; expected version 0"):
        c.sum().backward()


def test_view_after_base_inplace_has_new_history(executor):
    # torch 2.13: v = [2, 4]; x.grad = [2, 2, 0]
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    v = y[:2]
    y.mul_(2)
    np.testing.assert_array_equal(v.detach().numpy(), [2, 4])
    v.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2, 2, 0])


def test_inplace_result_reads_its_own_old_value(executor):
    # y.mul_(y) needs the pre-mutation y for the gradient: d(x^2 * 2)/dx at x=3 -> 4x = 12... with
    # y = 2x: y.mul_(y) = 4x^2 -> 8x = 24
    x = tg.tensor(3.0, requires_grad=True)
    y = x * 2
    y.mul_(y)
    y.backward()
    assert x.grad.item() == pytest.approx(24.0)


def test_detach_shares_value_and_version_but_not_history():
    # torch 2.13: d = [6, 10], d._version == 1
    a = tg.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    d = b.detach()
    b.mul_(2)
    assert d._version == 1
    np.testing.assert_array_equal(d.numpy(), [6, 10])
    d.add_(1)                        # writes through, untracked
    np.testing.assert_array_equal(b.detach().numpy(), [7, 11])
    assert b.grad_fn.name() == "MulBackward0"


def test_data_changes_are_invisible_to_autograd():
    # .data as torch: shares the value, no version bump, so autograd raises nothing
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = a.exp()
    b.data.mul_(0)
    assert b._version == 0
    np.testing.assert_array_equal(b.detach().numpy(), [0, 0])
    b.sum().backward()
    # Documented difference (docs/autograd.md): saved values are immutable snapshots, so
    # exp's backward still reads e^a; torch reads the zeroed buffer and returns [0, 0].
    np.testing.assert_allclose(a.grad.numpy(), np.exp([1.0, 2.0]), rtol=1e-6)


def test_inplace_on_expanded_view_raises():
    x = tg.zeros(3)
    e = x.expand(2, 3)
    with pytest.raises(RuntimeError, match="single memory location"):
        e.add_(1)


def test_compiled_inplace_on_view_equals_eager():
    def step(w, x):
        h = x * 1
        h[:, :2].mul_(w)           # in-place on a slice view inside the step
        loss = (h * h).sum()
        loss.backward()
        return loss

    results = []
    for compiled in (False, True):
        w = tg.tensor([2.0, 3.0], requires_grad=True)
        x = tg.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3))
        fn = tg.compile(step) if compiled else step
        loss = fn(w, x)
        results.append((loss.item(), w.grad.numpy().copy()))
    assert results[0][0] == pytest.approx(results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1])


def test_base_written_through_a_view_is_a_copy_slices_node():
    # torch 2.13 names: CopySlices for the base after an in-place op on its slice (and after
    # x[1:3] = v), IndexPutBackward0 for advanced-index assignment
    a = tg.ones(4, requires_grad=True)
    b = a * 1
    b[:2].mul_(2)
    assert b.grad_fn.name() == "torch::autograd::CopySlices"
    c = a.clone()
    c[1:3] = 5
    assert c.grad_fn.name() == "torch::autograd::CopySlices"
    d = a.clone()
    d[[1, 2]] = 5
    assert d.grad_fn.name() == "IndexPutBackward0"
    (b.sum() + c.sum()).backward()
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 2.0, 1.0, 2.0])


# ---- complex views: real, imag, conj, view_as_real, view_as_complex -------------------------
def test_real_and_imag_are_views_sharing_storage_and_version():
    # torch 2.13: a = [2+5j, 6-4j]; r follows a.mul_(2); versions shared
    a = tg.tensor([1 + 2j, 3 - 4j])
    r, i = a.real, a.imag
    assert r._base is a and i._base is a and r.dtype is tg.float32
    r.mul_(2)
    i[0] = 5
    np.testing.assert_array_equal(a.numpy(), [2 + 5j, 6 - 4j])
    a.mul_(2)
    np.testing.assert_array_equal(r.numpy(), [4, 12])
    np.testing.assert_array_equal(i.numpy(), [10, -8])
    assert r._version == i._version == a._version == 3
    x = tg.tensor([1.0, -2.0])
    assert x.real is x and x.conj() is x             # torch returns the tensor itself
    with pytest.raises(RuntimeError, match="imag: is not implemented for tensors with non-comp"):
        x.imag


def test_gradients_flow_through_writes_into_real_and_imag(executor):
    z0 = np.array([1 + 2j, 3 - 4j, -1 + 0.5j])
    z = tg.tensor(z0, requires_grad=True)
    assert z.real.grad_fn.name() == z.imag.grad_fn.name() == "SelectBackward0"   # as torch
    w = z.clone()
    w.imag.zero_()
    assert w.grad_fn.name() == "torch::autograd::CopySlices"
    np.testing.assert_array_equal(w.detach().numpy(), z0.real + 0j)
    w.abs().sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), np.sign(z0.real) + 0j)   # torch: [1, 1, -1]
    z.grad = None
    w = z.clone()
    w[1:].real.mul_(3)       # |w|^2 = x0^2 + y0^2 + 9 x^2 + y^2 for the others
    (w.abs() ** 2).sum().backward()
    scale = np.array([1, 9, 9])
    np.testing.assert_allclose(z.grad.numpy(), 2 * scale * z0.real + 2j * z0.imag)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        z.real[0] = 1.0


def test_view_as_real_view_as_complex_and_conj_are_views(executor):
    t = tg.tensor([1 + 1j, 2 + 2j])
    vt = tg.view_as_real(t)
    vt[0, 1] = 9
    np.testing.assert_array_equal(t.numpy(), [1 + 9j, 2 + 2j])
    back = tg.view_as_complex(vt)
    assert back._base is t and vt._base is t
    back[1] = 5 - 1j
    c = t.conj()
    c[0] = 10 + 1j                                   # writes the conjugate into t
    np.testing.assert_array_equal(t.numpy(), [10 - 1j, 5 - 1j])
    np.testing.assert_array_equal(vt.numpy(), [[10, -1], [5, -1]])
    z0 = np.array([1 + 2j, 3 - 4j])
    z = tg.tensor(z0, requires_grad=True)
    assert tg.view_as_real(z).grad_fn.name() == "ViewAsRealBackward0"
    assert z.conj().grad_fn.name() == "ConjBackward0" and z.conj()._base is z
    assert z.conj_physical()._base is None      # torch's copy
    w = z.clone()
    tg.view_as_real(w).mul_(2)
    w.abs().sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * z0 / np.abs(z0))    # torch 2.13


def test_compiled_write_into_imag_equals_eager():
    def step(z):
        w = z * 1
        w.imag.mul_(3)
        loss = (w.abs() ** 2).sum()
        loss.backward()
        return loss

    results = []
    for compiled in (False, True):
        z = tg.tensor(np.array([1 + 2j, -0.5 + 1j]), requires_grad=True)
        loss = (tg.compile(step) if compiled else step)(z)
        results.append((loss.item(), z.grad.numpy().copy()))
    z0 = np.array([1 + 2j, -0.5 + 1j])
    for loss, grad in results:   # |w|^2 = x^2 + 9 y^2
        assert loss == pytest.approx(np.sum(z0.real ** 2 + 9 * z0.imag ** 2))
        np.testing.assert_allclose(grad, 2 * z0.real + 18j * z0.imag)
