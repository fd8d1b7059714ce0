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
    # torch 2.13: exp's backward reads the zeroed buffer, [0, 0]; an untracked write to a
    # node's output replaces the tape's value of it (_views.replace_output), so here too
    np.testing.assert_array_equal(a.grad.numpy(), [0, 0])


def test_data_changes_reach_a_later_readers_backward():
    # torch 2.13: c = b * b saved b; b.data.mul_(0) zeroes that buffer: a.grad = [0, 0]
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    c = b * b
    b.data.mul_(0)
    c.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0, 0])


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


# ---- adversarial: chains of complex views, writes, versions, autograd state -------------------
def test_chained_complex_views_write_through():
    # torch 2.13 values for each write
    z = tg.tensor([1 + 2j, 3 - 4j, 5 + 6j])
    z[1:].real.mul_(10)                               # slice, then real
    np.testing.assert_array_equal(z.numpy(), [1 + 2j, 30 - 4j, 50 + 6j])
    m = tg.tensor([[1 + 2j, 3 - 4j], [5 + 6j, 7 + 8j]])
    m.mT.imag[0, 1] = 100                             # transpose, then imag, then setitem
    np.testing.assert_array_equal(m.numpy(), [[1 + 2j, 3 - 4j], [5 + 100j, 7 + 8j]])
    z = tg.tensor([1 + 2j, 3 - 4j])
    tg.view_as_real(z)[..., 0].add_(1)                # view_as_real, then select
    z.conj().imag.add_(1)                             # conj, then imag: z.imag -= 1
    np.testing.assert_array_equal(z.numpy(), [2 + 1j, 4 - 5j])
    z.reshape(2, 1).mH.mul_(2j)                       # reshape, transpose, conj
    np.testing.assert_array_equal(z.numpy(), [2 - 4j, -10 - 8j])
    z.conj().real.fill_(7)
    z.conj().conj().add_(1j)
    np.testing.assert_array_equal(z.numpy(), [7 - 3j, 7 - 7j])
    z.conj()[0] = 5                                   # a real number into a conj view
    z.conj().fill_(1j)
    np.testing.assert_array_equal(z.numpy(), [-1j, -1j])
    q = tg.zeros(2, 2, dtype=tg.complex64)
    q.mH[0] = tg.tensor([1 + 1j, 2 + 2j])
    np.testing.assert_array_equal(q.numpy(), [[1 - 1j, 0], [2 - 2j, 0]])
    w = tg.tensor([[1 + 2j, 3 - 4j], [5 + 6j, 7 + 8j]])
    w.imag.add_(tg.tensor([10.0, 20.0]))              # a broadcast operand
    w.real[:, 0] = tg.tensor(0.5)
    np.testing.assert_array_equal(w.numpy(), [[0.5 + 12j, 3 + 16j], [0.5 + 16j, 7 + 28j]])
    u = tg.tensor(np.array([1 + 2j]), dtype=tg.complex64)
    u.real.copy_(tg.tensor([1.5], dtype=tg.float64))  # cast into the float32 view
    assert u.dtype is tg.complex64 and u.numpy()[0] == 1.5 + 2j


def test_views_of_one_complex_base_share_the_version_counter():
    # torch 2.13: every view reads 3 after three writes through different views
    z = tg.tensor([1 + 2j, 3 - 4j])
    r, i, c, v = z.real, z.imag, z.conj(), tg.view_as_real(z)
    i.add_(1)
    c.mul_(2)
    v[0, 0] = 3
    assert r._version == i._version == c._version == v._version == z._version == 3
    np.testing.assert_array_equal(z.numpy(), [3 + 6j, 6 - 6j])
    np.testing.assert_array_equal(c.numpy(), [3 - 6j, 6 + 6j])
    np.testing.assert_array_equal(v.numpy(), [[3, 6], [6, -6]])
    v = tg.view_as_real(z)
    z.mul_(1j)                                        # a base write regenerates the view
    np.testing.assert_array_equal(v.numpy(), [[-6, 3], [6, 6]])


def test_complex_values_into_real_views_are_refused():
    z = tg.tensor([1 + 2j, 3 - 4j])
    # torch 2.13: "result type ComplexFloat can't be cast to the desired output type Float"
    with pytest.raises(RuntimeError, match="add_: result type ComplexFloat can't be cast to the "
                                           "desired output type Float"):
        z.real.add_(tg.tensor([1j, 1j]))
    with pytest.raises(RuntimeError, match=r"cannot be converted to type float32"):
        z.real[0] = 1 + 1j
    np.testing.assert_array_equal(z.numpy(), [1 + 2j, 3 - 4j])
    assert z._version == 0


def test_leaf_requiring_grad_refuses_writes_through_every_complex_view():
    # torch 2.13: "a view of a leaf Variable ..." for each; a real leaf's .real is itself
    z = tg.tensor([1 + 2j, 3 - 4j], requires_grad=True)
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    for write in (lambda: z.real.add_(1), lambda: tg.view_as_real(z).zero_(),
                  lambda: z.conj().mul_(2), lambda: z.reshape(1, 2).mH[0].imag.copy_(z.real[:1]),
                  lambda: tg.view_as_complex(x).mul_(1j)):
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            write()
    with pytest.raises(RuntimeError, match="add_: a leaf Variable that requires grad"):
        tg.tensor([1.0, 2.0], requires_grad=True).real.add_(1)
    assert z._version == 0 and x._version == 0


def test_gradients_after_writes_through_chained_complex_views(executor):
    # torch 2.13 (complex128) for each case
    z0 = np.array([1 + 2j, 3 - 4j])
    z = tg.tensor(z0, requires_grad=True)
    w = z.clone()
    w.conj().mul_(1j)                                 # w = conj(i conj w) = -i w
    (w.real * tg.tensor([1.0, 2.0], dtype=tg.float64)).sum().backward()
    np.testing.assert_allclose(w.detach().numpy(), [2 - 1j, -4 - 3j])
    np.testing.assert_allclose(z.grad.numpy(), [1j, 2j])
    z = tg.tensor(np.array([1 + 2j, 3 - 4j, 2j]), requires_grad=True)
    w = z.clone()
    tg.view_as_real(w[::2]).mul_(tg.tensor([2.0, 3.0], dtype=tg.float64))
    (w.real + 5 * w.imag).sum().backward()
    np.testing.assert_allclose(w.detach().numpy(), [2 + 6j, 3 - 4j, 6j])
    np.testing.assert_allclose(z.grad.numpy(), [2 + 15j, 1 + 5j, 2 + 15j])
    z = tg.tensor(np.array([[1 + 2j, 3 - 4j], [0.5j, 2]]), requires_grad=True)
    w = z * 1
    w.mH[0].mul_(1j)                                  # the first column, through conj
    (w.real * 2 + w.imag * 3).sum().backward()
    np.testing.assert_allclose(w.detach().numpy(), [[2 - 1j, 3 - 4j], [0.5, 2]])
    np.testing.assert_allclose(z.grad.numpy(), [[-3 + 2j, 2 + 3j], [-3 + 2j, 2 + 3j]])
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=tg.float64, requires_grad=True)
    y = x * 1
    tg.view_as_complex(y).mul_(1j)                    # a real base written as complex
    (y * tg.tensor([[1.0, 2.0], [3.0, 5.0]], dtype=tg.float64)).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), [[-2, 1], [-4, 3]])
    np.testing.assert_allclose(x.grad.numpy(), [[2, -1], [5, -3]])
    x.grad = None
    y = x * 1
    tg.view_as_complex(y).imag.zero_()
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[2, 0], [6, 0]])


def test_second_order_through_a_write_into_real(executor):
    # w = x y + i y: |w|^2 = x^2 y^2 + y^2; grad = 2 x y^2 + i (2 x^2 y + 2 y); then the
    # gradient of |grad|^2 by hand.  With `w.imag` itself as the operand torch 2.13 and we
    # raise (its saved view was overwritten: tests/api/test_autograd_probe_fixes2.py)
    z0 = np.array([1 + 2j, 3 - 4j])
    z = tg.tensor(z0, requires_grad=True)
    w = z.clone()
    w.real.mul_(w.imag.clone())
    g, = tg.autograd.grad((w.abs() ** 2).sum(), z, create_graph=True)
    x, y = z0.real, z0.imag
    gx, gy = 2 * x * y ** 2, 2 * x ** 2 * y + 2 * y
    np.testing.assert_allclose(g.detach().numpy(), gx + 1j * gy)
    (g.abs() ** 2).sum().backward()
    dx = 2 * gx * 2 * y ** 2 + 2 * gy * 4 * x * y
    dy = 2 * gx * 4 * x * y + 2 * gy * (2 * x ** 2 + 2)
    np.testing.assert_allclose(z.grad.numpy(), dx + 1j * dy)


def test_hooks_retain_grad_and_detach_on_complex_views(executor):
    # torch 2.13: the hook sees d/d(imag) = 2 * imag, its tripled gradient flows on as i g
    z = tg.tensor([1 + 2j, 3 - 4j], requires_grad=True)
    i = (z * 2).imag
    seen = []
    i.register_hook(lambda g: seen.append(g.numpy().copy()) or g * 3)
    (i * i).sum().backward()
    np.testing.assert_allclose(seen[0], [8, -16])
    np.testing.assert_allclose(z.grad.numpy(), [48j, -96j])
    z = tg.tensor([1 + 2j, 3 - 4j], requires_grad=True)
    w = z * 2
    r = w.real
    r.retain_grad()
    w.retain_grad()
    (r * r).sum().backward()
    np.testing.assert_allclose(r.grad.numpy(), [4, 12])
    np.testing.assert_allclose(w.grad.numpy(), [4, 12])
    assert w.grad.dtype is tg.complex64
    # detach() of a view shares the value and the version, not the history
    w = z * 1
    d = w.real.detach()
    d.add_(5)
    np.testing.assert_array_equal(w.detach().numpy(), [6 + 2j, 8 - 4j])
    assert w._version == d._version == 1 and w.grad_fn.name() == "MulBackward0"
    d = z.detach().imag
    d.zero_()                                          # a leaf's value, changed untracked
    np.testing.assert_array_equal(z.detach().numpy(), [1, 3])
    assert z.is_leaf and z._version == 1 and not d.requires_grad


def test_retain_grad_of_a_view_survives_a_write_through_its_base(executor):
    # torch 2.13 moves the retains-grad hook to the view's regenerated grad_fn
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = x * 1
    r = w[1:]
    r.retain_grad()
    w.mul_(2)
    (r * r).sum().backward()
    np.testing.assert_allclose(r.grad.numpy(), [8, 12])
    z = tg.tensor([1 + 2j, 3 - 4j], requires_grad=True)
    w = z.clone()
    r = w.real
    r.retain_grad()
    w.imag.mul_(2)                                     # a sibling view's write
    (r * r + w.imag).sum().backward()
    np.testing.assert_allclose(r.grad.numpy(), [2, 6])
    np.testing.assert_allclose(z.grad.numpy(), [2 + 2j, 6 + 2j])


def test_views_keep_requiring_grad_after_a_no_grad_write(executor):
    # torch 2.13: a view regenerated after its base changed under no_grad still requires
    # grad (its grad_fn is rebuilt from the base's)
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = x * 1
    r = w[1:]
    with tg.no_grad():
        w.mul_(2)
    assert r.requires_grad and w.grad_fn.name() == "MulBackward0"
    (r * r).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0, 8, 12])
    z = tg.tensor([1 + 2j, 3 - 4j], requires_grad=True)
    r = z.real
    with tg.no_grad():
        z.imag.zero_()                                 # a leaf written through a view
        z.real.mul_(2)
    assert z.is_leaf and z._version == 2 and r.requires_grad and r.grad_fn is not None
    np.testing.assert_array_equal(z.detach().numpy(), [2, 6])
    (r * r).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [4, 12])


def test_views_of_data_count_on_its_own_version_counter():
    # torch 2.13: .data has its own counter, and so do views made from it; x stays at 0
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    d = x.data
    v = d[0:1]
    v.mul_(3)
    assert (x._version, d._version, v._version) == (0, 1, 1)
    np.testing.assert_array_equal(x.detach().numpy(), [3, 2])
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    z = y * y
    y.data[0:1].zero_()        # no "modified by an inplace operation" error, as torch
    z.sum().backward()
    # torch 2.13: [0, 4, 6] (z's backward reads the written y)
    np.testing.assert_allclose(x.grad.numpy(), [0, 4, 6])
    z = tg.tensor([1 + 2j, 3 - 4j], requires_grad=True)
    z.data.real.mul_(2)
    assert z._version == 0
    np.testing.assert_array_equal(z.detach().numpy(), [2 + 2j, 6 - 4j])


def test_real_and_imag_setters_copy_into_the_parts():
    # torch 2.13: z.real = v copies; z.real += 1 is the in-place add then that copy
    z = tg.tensor([1 + 2j, 3 - 4j])
    z.real = tg.tensor([5.0, 6.0])
    z.imag = tg.tensor([7.0, 8.0])
    np.testing.assert_array_equal(z.numpy(), [5 + 7j, 6 + 8j])
    assert z._version == 2
    z = tg.tensor([1 + 2j, 3 - 4j])
    z.real += 1
    assert z._version == 2
    z.imag *= 2
    assert z._version == 4
    z.real = 3                                          # a number broadcasts
    np.testing.assert_array_equal(z.numpy(), [3 + 4j, 3 - 8j])
    x = tg.tensor([1.0, 2.0])
    x.real = tg.tensor([5.0, 6.0])                      # a real tensor's real is itself
    np.testing.assert_array_equal(x.numpy(), [5, 6])
    with pytest.raises(RuntimeError, match="imag: is not implemented for tensors with non-comp"):
        x.imag = tg.tensor([1.0, 1.0])
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        tg.tensor([1 + 2j], requires_grad=True).real = tg.tensor([5.0])


def test_real_setter_is_differentiable(executor):
    # torch 2.13: w = [4+2j, -8-4j]; z.grad = [20j, -40j]
    z = tg.tensor(np.array([1 + 2j, 3 - 4j]), requires_grad=True)
    w = z * 1
    w.real = w.imag * 2
    (w.abs() ** 2).sum().backward()
    np.testing.assert_allclose(w.detach().numpy(), [4 + 2j, -8 - 4j])
    np.testing.assert_allclose(z.grad.numpy(), [20j, -40j])


def test_backward_reads_the_value_a_no_grad_write_left(executor):
    # torch 2.13: the gradient of (w * w).sum() is 2 w at w's current value, [4, 8, 12]
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = x * 1
    with tg.no_grad():
        w.mul_(2)
    (w * w).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4, 8, 12])


def test_backward_reads_the_value_a_no_grad_write_through_imag_left():
    # torch 2.13: z.grad = 2 w = [2, 6] (w's imaginary part was zeroed untracked)
    z = tg.tensor([1 + 2j, 3 - 4j], requires_grad=True)
    w = z * 1
    with tg.no_grad():
        w.imag.zero_()
    (w.abs() ** 2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [2, 6], atol=1e-6)


def test_compiled_backward_reads_the_value_a_no_grad_write_left():
    def step(x):
        w = x * 1
        with tg.no_grad():
            w.mul_(2)
        (w * w).sum().backward()

    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    tg.compile(step)(x)
    np.testing.assert_allclose(x.grad.numpy(), [4, 8, 12])


def test_compiled_writes_through_complex_views_equal_eager():
    def buffers(z, buf):                      # buffer writes through views, no autograd
        buf.real.add_(z.real.detach())
        buf.imag.copy_(z.imag.detach() * 2)

    def leaf(p):                              # no_grad writes into a leaf's views
        with tg.no_grad():
            p.real.mul_(0.5)
            tg.view_as_real(p)[..., 1].add_(1)

    def grads(z):                             # a retained view, a sibling view written
        w = z.clone()
        r = w.real
        r.retain_grad()
        w.imag.mul_(2)
        loss = (r * r + w.imag).sum()
        loss.backward()
        return r.grad

    for compiled in (False, True):
        wrap = tg.compile if compiled else (lambda f: f)
        z = tg.tensor(np.array([1 + 2j, 3 - 4j]), requires_grad=True)
        buf = tg.zeros(2, dtype=tg.complex128)
        f = wrap(buffers)
        f(z, buf)
        f(z, buf)
        np.testing.assert_array_equal(buf.numpy(), [2 + 4j, 6 - 8j])
        p = tg.tensor(np.array([1 + 2j, 3 - 4j]), requires_grad=True)
        f = wrap(leaf)
        f(p)
        f(p)
        np.testing.assert_array_equal(p.detach().numpy(), [0.25 + 4j, 0.75 - 2j])
        assert p.is_leaf and p.requires_grad
        rg = wrap(grads)(z)
        np.testing.assert_allclose(rg.numpy(), [2, 6])
        np.testing.assert_allclose(z.grad.numpy(), [2 + 2j, 6 + 2j])


# ---- views torch forbids writing to (torch 2.13's messages) ---------------------------------

_MULTI = ("is a view and is being modified inplace. This view is the output of a function that "
          "returns multiple views. Such functions do not allow the output views to be modified "
          "inplace. You should replace the inplace operation by an out-of-place one.")


_IS_VIEW_M = "is a view and is being modified inplace. "
_MV = _MULTI[len(_IS_VIEW_M):]
_NO_GRAD = (" Given that this use case is ambiguous and error-prone, it is forbidden. You can "
            "clarify your code by moving both the view and the inplace either both inside the "
            "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
            "want the inplace to be tracked).")
_INFERENCE = _NO_GRAD.replace("no_grad block", "inference_mode block")
_CUSTOM = (" This view was created inside a custom Function (or because an input was returned "
           "as-is) and the autograd logic to handle view+inplace would override the custom "
           "backward associated with the custom Function, leading to incorrect gradients. This "
           "behavior is forbidden. You can fix this by cloning the output of the custom Function.")
_IS_VIEW = "is a view and is being modified inplace."
_MADE_NO_GRAD = "no_grad mode and is being modified inplace with grad mode enabled."
_MADE_INFERENCE = "inference mode and is being modified inplace in normal mode."


def _rg(*shape):
    return tg.ones(*shape, requires_grad=True)


def _no_grad_view(f):
    a = _rg(4, 2) * 1
    with tg.no_grad():
        return f(a)


def _no_grad_leaf_view():
    x = _rg(4, 2)
    with tg.no_grad():
        return x[0]


def _inference_view(f, a=None):
    a = _rg(4, 2) * 1 if a is None else a
    with tg.inference_mode():
        return f(a)


def _setitem(v, key):
    v[key] = 5


# (what is written, torch 2.13's message); every write is with grad mode on
_REFUSED = {
    "unbind": (lambda: (_rg(4, 2) * 1).unbind(0)[0].mul_(2), f"Output 0 of Unbind {_IS_VIEW} {_MV}"),
    "unbind dim 1": (lambda: (_rg(4, 2) * 1).unbind(1)[1].mul_(2), f"Output 1 of Unbind {_IS_VIEW} {_MV}"),
    "unbind of one": (lambda: (_rg(1, 2) * 1).unbind(0)[0].mul_(2), f"Output 0 of Unbind {_IS_VIEW} {_MV}"),
    "split": (lambda: (_rg(4, 2) * 1).split(2)[1].mul_(2), f"Output 1 of Split {_IS_VIEW} {_MV}"),
    "split into one": (lambda: (_rg(4, 2) * 1).split(4)[0].mul_(2), f"Output 0 of Split {_IS_VIEW} {_MV}"),
    "split list": (lambda: (_rg(4, 2) * 1).split([1, 3])[1].mul_(2),
                   f"Output 1 of SplitWithSizes {_IS_VIEW} {_MV}"),
    "split_with_sizes": (lambda: tg.split_with_sizes(_rg(4, 2) * 1, [1, 3])[1].mul_(2),
                         f"Output 1 of SplitWithSizes {_IS_VIEW} {_MV}"),
    "chunk": (lambda: (_rg(5, 2) * 1).chunk(2)[1].mul_(2), f"Output 1 of Split {_IS_VIEW} {_MV}"),
    "chunk into one": (lambda: (_rg(4, 2) * 1).chunk(1)[0].mul_(2), f"Output 0 of Split {_IS_VIEW} {_MV}"),
    "unbind of a leaf": (lambda: _rg(4, 2).unbind(0)[1].mul_(2), f"Output 1 of Unbind {_IS_VIEW} {_MV}"),
    "slice of split": (lambda: (_rg(4, 2) * 1).split(2)[1][0:1].mul_(2),
                       f"Output 0 of Slice {_IS_VIEW} {_MV}"),
    "t of unbind": (lambda: (_rg(4, 2, 3) * 1).unbind(0)[2].t().mul_(2), f"Output 0 of T {_IS_VIEW} {_MV}"),
    "iadd": (lambda: (_rg(4, 2) * 1).unbind(0)[1].__iadd__(1), f"Output 1 of Unbind {_IS_VIEW} {_MV}"),
    "zero_": (lambda: (_rg(4, 2) * 1).unbind(0)[1].zero_(), f"Output 1 of Unbind {_IS_VIEW} {_MV}"),
    "copy_": (lambda: (_rg(4, 2) * 1).unbind(0)[1].copy_(tg.zeros(2)), f"Output 1 of Unbind {_IS_VIEW} {_MV}"),
    "fill_": (lambda: (_rg(4, 2) * 1).unbind(0)[1].fill_(3), f"Output 1 of Unbind {_IS_VIEW} {_MV}"),
    # setitem writes through the view its key makes (the last basic index), a view of v
    "setitem int": (lambda: _setitem((_rg(4, 2, 3) * 1).unbind(0)[1], 0),
                    f"Output 0 of Select {_IS_VIEW} {_MV}"),
    "setitem slice": (lambda: _setitem((_rg(4, 2, 3) * 1).unbind(0)[1], slice(0, 1)),
                      f"Output 0 of Slice {_IS_VIEW} {_MV}"),
    "setitem (:, 0)": (lambda: _setitem((_rg(4, 2, 3) * 1).unbind(0)[1], (slice(None), 0)),
                       f"Output 0 of Select {_IS_VIEW} {_MV}"),
    "setitem None": (lambda: _setitem((_rg(4, 2, 3) * 1).unbind(0)[1], None),
                     f"Output 0 of Unsqueeze {_IS_VIEW} {_MV}"),
    "setitem ...": (lambda: _setitem((_rg(4, 2, 3) * 1).unbind(0)[1], Ellipsis),
                    f"Output 1 of Unbind {_IS_VIEW} {_MV}"),
    "setitem :": (lambda: _setitem((_rg(4, 2, 3) * 1).unbind(0)[1], slice(None)),
                  f"Output 1 of Unbind {_IS_VIEW} {_MV}"),
    "setitem tensor": (lambda: _setitem((_rg(4, 2, 3) * 1).unbind(0)[1], tg.tensor([0])),
                       f"Output 1 of Unbind {_IS_VIEW} {_MV}"),
    # nothing requires grad but the value written: torch has no node for the view
    "unbind, value requires grad": (lambda: tg.ones(4, 2).unbind(0)[1].mul_(_rg(2)),
                                    f"A view was created in {_MADE_NO_GRAD} {_MV}"),
    "unbind, then base requires grad": (
        lambda: (lambda a: (a.unbind(0)[1], a.requires_grad_())[0].mul_(2))(tg.ones(4, 2)),
        f"A view was created in {_MADE_NO_GRAD} {_MV}"),
    # views made in no_grad (of a base requiring grad or not), and views of them
    "no_grad view": (lambda: _no_grad_view(lambda a: a[0]).mul_(2), f"A view was created in {_MADE_NO_GRAD}{_NO_GRAD}"),
    "no_grad view of a leaf": (lambda: _no_grad_leaf_view().mul_(2),
                               f"A view was created in {_MADE_NO_GRAD}{_NO_GRAD}"),
    "no_grad unbind": (lambda: _no_grad_view(lambda a: a.unbind(0)[1]).mul_(2),
                       f"A view was created in {_MADE_NO_GRAD}{_NO_GRAD}"),
    "no_grad view of an unbind output": (
        lambda: (lambda v: _no_grad_view(lambda a: v[0:1]))((_rg(4, 2) * 1).unbind(0)[0]).mul_(2),
        f"A view was created in {_MADE_NO_GRAD}{_NO_GRAD}"),
    "unbind of a no_grad view": (lambda: _no_grad_view(lambda a: a[0:2]).unbind(0)[0].mul_(2),
                                 f"Output 0 of Unbind {_IS_VIEW} {_MV}"),
    "view of a no_grad view": (lambda: _no_grad_view(lambda a: a[0])[0:1].mul_(2),
                               f"Output 0 of Slice is a view of a view which was created in "
                               f"{_MADE_NO_GRAD}{_NO_GRAD}"),
    "setitem into a no_grad view": (lambda: _setitem(_no_grad_view(lambda a: a[0]), 0),
                                    f"Output 0 of Select is a view of a view which was created "
                                    f"in {_MADE_NO_GRAD}{_NO_GRAD}"),
    "no_grad view, value requires grad": (lambda: _no_grad_view(lambda a: a[0]).mul_(_rg(2)),
                                          f"A view was created in {_MADE_NO_GRAD}{_NO_GRAD}"),
    "no_grad view of a plain tensor, value requires grad": (
        lambda: (lambda b: _no_grad_view(lambda a: b[0]))(tg.ones(4, 2)).mul_(_rg(2)),
        f"A view was created in {_MADE_NO_GRAD}{_NO_GRAD}"),
    # views made in inference mode of normal tensors
    "inference view": (lambda: _inference_view(lambda a: a[0]).mul_(2),
                       f"A view was created in {_MADE_INFERENCE}{_INFERENCE}"),
    "inference view of a leaf": (lambda: _inference_view(lambda a: a[0], _rg(4, 2)).mul_(2),
                                 f"A view was created in {_MADE_INFERENCE}{_INFERENCE}"),
    "inference unbind": (lambda: _inference_view(lambda a: a.unbind(0)[1]).mul_(2),
                         f"A view was created in {_MADE_INFERENCE}{_INFERENCE}"),
    "view of an inference view": (lambda: _inference_view(lambda a: a[0])[0:1].mul_(2),
                                  f"Output 0 of Slice is a view of a view which was created in "
                                  f"{_MADE_INFERENCE}{_INFERENCE}"),
    "inference view of a plain tensor, value requires grad": (
        lambda: _inference_view(lambda a: a[0], tg.ones(4, 2)).mul_(_rg(2)),
        f"A view was created in {_MADE_INFERENCE}{_INFERENCE}"),
}


@pytest.mark.parametrize("case", list(_REFUSED))
def test_inplace_on_views_torch_refuses(case):
    write, message = _REFUSED[case]
    with pytest.raises(RuntimeError) as e:
        write()
    assert str(e.value).split("\n  at ")[0] == message


def test_multi_view_outputs_of_a_tensor_without_grad_can_be_written():
    # torch 2.13: no error when nothing requires grad
    a = tg.ones(4, 2)
    v = a.unbind(0)[0]
    v.mul_(2)
    np.testing.assert_array_equal(a.numpy()[0], [2, 2])


def test_inplace_on_a_view_made_in_no_grad_raises_with_grad_on():
    x = tg.ones(4, 2, requires_grad=True)
    a = x * 1
    with tg.no_grad():
        v = a.view(8)
        w = a[0]
        w.mul_(2)                      # torch 2.13: fine inside no_grad
    with pytest.raises(RuntimeError) as e:
        v.mul_(2)
    assert str(e.value) == (
        "A view was created in no_grad mode and is being modified inplace with grad mode "
        "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You "
        "can clarify your code by moving both the view and the inplace either both inside the "
        "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
        "want the inplace to be tracked).")


def test_inplace_on_a_view_made_in_inference_mode_raises_in_normal_mode():
    x = tg.ones(4, 2, requires_grad=True)
    with tg.inference_mode():
        v = x[0]
    with pytest.raises(RuntimeError) as e:
        v.mul_(2)
    assert str(e.value).startswith(
        "A view was created in inference mode and is being modified inplace in normal mode. "
        "Given that this use case is ambiguous and error-prone, it is forbidden.")


class _ViewOut(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x[0:1]

    @staticmethod
    def backward(ctx, g):
        return tg.cat([g, g * 0])


class _Same(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g


@pytest.mark.parametrize("fn", [_ViewOut, _Same])
def test_inplace_on_a_view_made_inside_a_custom_function_raises(fn):
    x = tg.ones(2, requires_grad=True)
    y = fn.apply(x * 1)
    with pytest.raises(RuntimeError) as e:
        y.mul_(2)
    assert str(e.value) == (
        f"Output 0 of {fn.__name__} is a view and is being modified inplace. This view was "
        "created inside a custom Function (or because an input was returned as-is) and the "
        "autograd logic to handle view+inplace would override the custom backward associated "
        "with the custom Function, leading to incorrect gradients. This behavior is forbidden. "
        "You can fix this by cloning the output of the custom Function.")


@pytest.mark.parametrize("leaf", [True, False])
def test_pack_hook_modifying_its_input_in_place_raises(leaf):
    x = tg.ones(2, requires_grad=True)
    a = x if leaf else x * 1

    def pack(t):
        with tg.no_grad():
            t.add_(1)
        return t

    with tg.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with pytest.raises(RuntimeError) as e:
            a * a
    assert str(e.value) == (
        "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
        "pack hook cannot be modified by in-place operations as this can lead to unexpected "
        "side-effects. Please open an issue if you need to perform in-place operations on the "
        "input to a pack hook.")


class _InTwo(tg.autograd.Function):   # an input returned as is, among two outputs
    @staticmethod
    def forward(ctx, x):
        return x, x * 2

    @staticmethod
    def backward(ctx, g, h):
        return g + 2 * h


class _ViewAndNonDiff(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        b = x * 2
        ctx.mark_non_differentiable(b)
        return x[0:1], b

    @staticmethod
    def backward(ctx, g, h):
        return tg.cat([g, g * 0])


def test_custom_function_views_among_several_differentiable_outputs_are_multi_view():
    # torch 2.13: a view among several differentiable outputs gets the multi-view message;
    # with one differentiable output the custom-Function one
    with pytest.raises(RuntimeError) as e:
        _InTwo.apply(_rg(2) * 1)[0].mul_(2)
    assert str(e.value) == f"Output 0 of _InTwo {_IS_VIEW} {_MV}"
    y = _InTwo.apply(_rg(2) * 1)[1]
    y.mul_(2)
    np.testing.assert_array_equal(y.detach().numpy(), [4, 4])
    with pytest.raises(RuntimeError) as e:
        _ViewAndNonDiff.apply(_rg(2) * 1)[0].mul_(2)
    assert str(e.value) == f"Output 0 of _ViewAndNonDiff {_IS_VIEW}{_CUSTOM}"


def test_writes_torch_allows_into_marked_views():
    # torch 2.13 allows each (values after the write)
    a = tg.ones(4, 2)
    with tg.inference_mode():
        v = a[0]
    assert not v.is_inference()        # a view of a normal tensor is normal
    v.mul_(2)                          # nothing requires grad
    with tg.no_grad():
        v.mul_(2)
    np.testing.assert_array_equal(a.numpy()[0], [4, 4])
    b = tg.ones(4, 2)
    with tg.no_grad():
        w = b[1]
    w.mul_(3)                          # a no_grad view, nothing requires grad
    np.testing.assert_array_equal(b.numpy()[1], [3, 3])
    x = _rg(4, 2)
    c = x * 1
    with tg.no_grad():
        d = c.detach()[0]              # detach() views are never refused
    d.mul_(5)
    u = c.unbind(0)[2]
    with tg.no_grad():                 # writes under no_grad are never refused
        u.mul_(7)
        c.split(2)[0][0:1].mul_(11)
    np.testing.assert_array_equal(c.detach().numpy()[:, 0], [55, 1, 7, 1])


_BASE_WRITTEN = "its base or another view of its base has been modified inplace"


def _unbind_then(write):
    x = _rg(4, 2)
    a = x * 1
    vs = a.unbind(0)
    write(a, vs)
    return vs


def _no_grad_mul(t):
    with tg.no_grad():
        t.mul_(2)


@pytest.mark.parametrize("case, write, use, message", [
    # torch 2.13 raises when the refused view's history is next read: an op on it with grad
    # on, a backward from it
    ("base written", lambda a, vs: a.mul_(2), lambda vs: vs[1] * 1,
     f"Output 1 of Unbind is a view and {_BASE_WRITTEN}. {_MV}"),
    ("base written under no_grad", lambda a, vs: _no_grad_mul(a), lambda vs: vs[0].sum(),
     f"Output 0 of Unbind is a view and {_BASE_WRITTEN}. {_MV}"),
    ("the view itself under no_grad", lambda a, vs: _no_grad_mul(vs[0]),
     lambda vs: vs[0].sum().backward(), f"Output 0 of Unbind is a view and {_BASE_WRITTEN}. {_MV}"),
    ("another output under no_grad", lambda a, vs: _no_grad_mul(vs[0]),
     lambda vs: vs[1] * 1, f"Output 1 of Unbind is a view and {_BASE_WRITTEN}. {_MV}"),
])
def test_views_torch_refuses_after_their_base_was_written(case, write, use, message):
    vs = _unbind_then(write)
    with pytest.raises(RuntimeError) as e:
        use(vs)
    assert str(e.value).split("\n  at ")[0] == message
    with tg.no_grad():                 # torch 2.13: fine with grad off, and the values are new
        assert (vs[0] * 1).tolist() == [2.0, 2.0]
    assert "grad_fn=<Invalid>" in repr(vs[0])    # torch 2.13 prints that


def test_no_grad_views_are_refused_after_their_base_was_written():
    # torch 2.13: a view made in no_grad, its base then written (with grad on or off)
    for grad_on in (True, False):
        x = _rg(4, 2)
        a = x * 1
        with tg.no_grad():
            v = a[0]
        with tg.set_grad_enabled(grad_on):
            a.mul_(2)
        with pytest.raises(RuntimeError) as e:
            v * 2
        assert str(e.value).split("\n  at ")[0] == (
            f"A view was created in no_grad mode and {_BASE_WRITTEN} with grad mode enabled."
            f"{_NO_GRAD}")
    b = tg.ones(4, 2)                  # a base that needs no grad: nothing refused
    with tg.no_grad():
        w = b[0]
    b.mul_(2)
    assert (w * 2).tolist() == [4.0, 4.0]


def test_only_torch_multi_view_functions_mark_their_outputs():
    # torch 2.13: split with a list is split_with_sizes (its node name too); meshgrid's
    # outputs are plain expanded views: writing one raises the expanded-view error instead
    a = _rg(4, 2) * 1
    assert [t.grad_fn.name() for t in a.split([1, 3])] == ["SplitWithSizesBackward0"] * 2
    assert [t.grad_fn.name() for t in a.split(2)] == ["SplitBackward0"] * 2
    g = tg.meshgrid(a[0], a[1], indexing="ij")[0]
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        g.mul_(2)
    b = tg.broadcast_tensors(a, a)[0]   # not views of one node: writable (torch 2.13)
    b.mul_(2)
    assert b.tolist() == [[2.0, 2.0]] * 4


def test_custom_function_views_are_marked_when_no_input_requires_grad():
    # torch 2.13: writing a value that requires grad into the view output of a Function
    # applied to plain tensors raises (the view has no node); plain values may be written
    y = _ViewOut.apply(tg.ones(2))
    y.mul_(2)
    assert y.tolist() == [2.0]
    with pytest.raises(RuntimeError) as e:
        y.mul_(_rg(1))
    assert str(e.value) == f"A view was created in {_MADE_NO_GRAD}{_CUSTOM}"
