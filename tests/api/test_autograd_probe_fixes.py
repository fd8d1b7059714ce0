"""Differences from torch 2.13's autograd found by a behaviour probe, fixed (one section per
finding).

Every expected value and message below was recorded by running the same program under
torch 2.13 (CPU).
"""
import numpy as np
import pytest

import tracegrad as tg


# ---- 1. a custom Function's dirty output that is a view rewrites its base's history ---------

class _Inc(tg.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        a.add_(1)
        ctx.mark_dirty(a)
        return a

    @staticmethod
    def backward(ctx, g):
        return g * 3


class _MulW(tg.autograd.Function):
    @staticmethod
    def forward(ctx, a, w):
        ctx.save_for_backward(w)
        a.mul_(w)
        ctx.mark_dirty(a)
        return a

    @staticmethod
    def backward(ctx, g):
        w, = ctx.saved_tensors
        return g * w, g


def test_dirty_view_output_rewrites_the_base_history():
    # torch 2.13: r is the view, versions 2; r.grad_fn AsStridedBackward0, y.grad_fn
    # CopySlices; y [2, 3, 3]; y.sum() -> x.grad [3, 3, 1]; r.sum() -> [3, 3, 0]
    x = tg.tensor([1., 2., 3.], requires_grad=True)
    y = x * 1
    v = y[:2]
    r = _Inc.apply(v)
    assert r is v and y._version == 2 and r._version == 2
    assert r.grad_fn.name() == "AsStridedBackward0"
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    np.testing.assert_array_equal(y.detach().numpy(), [2., 3., 3.])
    y.sum().backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), [3., 3., 1.])
    x.grad = None
    r.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3., 3., 0.])


def test_dirty_view_output_of_a_row_and_of_a_view_chain():
    # torch 2.13: x.grad [[0, 2, 4], [18, 24, 30]]; then [0, 2, 12, 18]
    x = tg.ones(2, 3, requires_grad=True)
    y = x * 2
    _Inc.apply(y[1])
    np.testing.assert_array_equal(y.detach().numpy(), [[2., 2., 2.], [3., 3., 3.]])
    (y * tg.arange(6.).reshape(2, 3)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0., 2., 4.], [18., 24., 30.]])
    x = tg.ones(4, requires_grad=True)
    y = x * 2
    _Inc.apply(y[1:].view(3)[1:])
    np.testing.assert_array_equal(y.detach().numpy(), [2., 2., 3., 3.])
    (y * tg.arange(4.)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0., 2., 12., 18.])


def test_dirty_view_output_other_views_and_repeated_writes():
    # torch 2.13: a base without grad gains it (w.grad [2, 3]); another view u of the base
    # reads the new value [2, 1] with AsStridedBackward0 (x.grad [0, 3, 1]); two Functions
    # writing overlapping views: y [2, 3, 2], x.grad [3, 9, 3], version 4
    y = tg.ones(3)
    w = tg.tensor([2., 5.], requires_grad=True)
    _MulW.apply(y[1:], w)
    assert y.requires_grad and y.grad_fn.name() == "torch::autograd::CopySlices"
    (y * tg.tensor([1., 2., 3.])).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2., 3.])
    x = tg.ones(3, requires_grad=True)
    y = x * 1
    u = y[1:]
    _Inc.apply(y[:2])
    np.testing.assert_array_equal(u.detach().numpy(), [2., 1.])
    assert u.grad_fn.name() == "AsStridedBackward0"
    u.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0., 3., 1.])
    x = tg.ones(3, requires_grad=True)
    y = x * 1
    _Inc.apply(y[:2])
    _Inc.apply(y[1:])
    np.testing.assert_array_equal(y.detach().numpy(), [2., 3., 2.])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3., 9., 3.])
    assert y._version == 4


def test_dirty_view_of_a_leaf_raises():
    # torch 2.13: RuntimeError "a view of a leaf Variable that requires grad is being used in
    # an in-place operation." (x[:2], x.view(3)); a detached view is fine (no grad_fn)
    x = tg.ones(3, requires_grad=True)
    for make in (lambda: x[:2], lambda: x.view(3)):
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad "
                                               "is being used in an in-place operation"):
            _Inc.apply(make())
    r = _Inc.apply(x.detach()[:2])
    assert r.grad_fn is None and not r.requires_grad


# ---- 2. forward AD: an in-place op on a view of make_dual's result keeps the tangent elsewhere

import tracegrad.autograd.forward_ad as fwAD  # noqa: E402


def _tan(t):
    tangent = fwAD.unpack_dual(t).tangent
    return None if tangent is None else tangent.tolist()


@pytest.mark.parametrize("write, want", [
    (lambda v: v.mul_(4), [1., 4., 4.]),
    (lambda v: v.add_(tg.ones(2)), [1., 1., 1.]),
    (lambda v: v.copy_(tg.tensor([5., 6.])), [1., 0., 0.]),
    (lambda v: v.zero_(), [1., 0., 0.]),
    (lambda v: v.exp_(), [1., 7.389056, 20.085537]),
    (lambda v: v.__setitem__(slice(None), tg.tensor([5., 6.])), [1., 0., 0.]),
])
def test_inplace_on_a_view_of_a_dual_keeps_the_rest_of_its_tangent(write, want):
    # torch 2.13: d = make_dual([1, 2, 3], [1, 1, 1]); write(d[1:]) -> these tangents
    with fwAD.dual_level():
        d = fwAD.make_dual(tg.tensor([1., 2., 3.]), tg.tensor([1., 1., 1.]))
        write(d[1:])
        np.testing.assert_allclose(_tan(d), want, rtol=1e-6)


def test_a_dual_tangent_is_its_own_not_the_primal_s():
    # torch 2.13: the primal x and its other views have no tangent before or after writes
    # through the dual's views; views of the dual read its tangent; a write through x (no
    # tangent) keeps the dual's tangent; values are shared as for any view
    with fwAD.dual_level():
        x = tg.tensor([1., 2., 3.])
        d = fwAD.make_dual(x, tg.tensor([1., 1., 1.]))
        e = x[:2]
        d[1:].mul_(4)
        assert _tan(d) == [1., 4., 4.] and _tan(x) is None and _tan(e) is None
        assert x.tolist() == [1., 8., 12.]
        f = d[:2]
        assert _tan(f) == [1., 4.]
        d.mul_(2)
        assert _tan(d) == [2., 8., 8.] and _tan(f) == [2., 8.] and _tan(x) is None
        x.add_(1)
        assert _tan(d) == [2., 8., 8.] and _tan(f) == [2., 8.] and _tan(x) is None
        assert d.tolist() == [3., 17., 25.]
        d[:1].add_(fwAD.make_dual(tg.ones(1), tg.tensor([7.])))
        assert _tan(d) == [9., 8., 8.]
    with fwAD.dual_level():
        x = tg.ones(2, 3)
        d = fwAD.make_dual(x, tg.ones(2, 3))
        d.t()[1].mul_(3)
        assert _tan(d) == [[1., 3., 1.], [1., 3., 1.]]
        x[0].mul_(2)
        assert _tan(d) == [[1., 3., 1.], [1., 3., 1.]]
        assert d.tolist() == [[2., 6., 2.], [1., 3., 1.]]
    with fwAD.dual_level():   # a dual of a view
        b = tg.ones(4)
        v = b[1:]
        d = fwAD.make_dual(v, tg.ones(3))
        d[1:].mul_(5)
        assert _tan(d) == [1., 5., 5.] and _tan(v) is None and _tan(b) is None
        assert b.tolist() == [1., 1., 5., 5.]


def test_inplace_on_a_view_of_a_computed_dual_unchanged():
    # torch 2.13: e = d * 1; e[1:].mul_(4) -> e's tangent [1, 4, 4], d's stays [1, 1, 1]
    with fwAD.dual_level():
        d = fwAD.make_dual(tg.tensor([1., 2., 3.]), tg.tensor([1., 1., 1.]))
        e = d * 1
        e[1:].mul_(4)
        assert _tan(e) == [1., 4., 4.] and _tan(d) == [1., 1., 1.]


# ---- 3. create_graph gradients of piecewise-linear ops require grad (second derivative 0) ----

import tracegrad.nn.functional as F  # noqa: E402

_X = [1.5, -2., 0.5, 3.]


@pytest.mark.parametrize("f, want", [
    (lambda x: x.relu(), [1., 0., 1., 1.]),            # torch: ThresholdBackwardBackward0
    (lambda x: F.relu(x), [1., 0., 1., 1.]),
    (lambda x: F.leaky_relu(x, 0.1), [1., 0.1, 1., 1.]),   # LeakyReluBackwardBackward0
    (lambda x: F.hardtanh(x), [0., 0., 1., 0.]),       # HardtanhBackwardBackward0
    (lambda x: F.relu6(x), [1., 0., 1., 1.]),          # HardtanhBackwardBackward0
    (lambda x: F.max_pool1d(x.view(1, 1, 4), 2), [1., 0., 0., 1.]),   # (SqueezeBackward1)
])
def test_create_graph_gradient_of_a_piecewise_linear_op_requires_grad(f, want):
    # torch 2.13: g requires grad, has these values, and grad(g.sum(), x) is zeros
    x = tg.tensor(_X, requires_grad=True)
    g, = tg.autograd.grad(f(x).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    np.testing.assert_allclose(g.detach().numpy(), want, rtol=1e-6)
    h, = tg.autograd.grad(g.sum(), x)
    np.testing.assert_array_equal(h.numpy(), [0., 0., 0., 0.])


def test_create_graph_relu_family_values_and_edge_cases():
    # torch 2.13, grad_outputs [1, 2, 3, 4, inf, 6] at x = [1, -2, 0, nan, inf, -inf]:
    # relu [1, 0, 0, 4, inf, 0], leaky_relu(0.1) [1, .2, .3, .4, inf, .6], hardtanh
    # [0, 0, 3, 4, 0, 0] (a NaN passes), relu6 [1, 0, 0, 4, 0, 0]; second grads all 0
    x = tg.tensor([1., -2., 0., float("nan"), float("inf"), -float("inf")], requires_grad=True)
    go = tg.tensor([1., 2., 3., 4., float("inf"), 6.])
    for f, want in [(lambda x: x.relu(), [1., 0., 0., 4., np.inf, 0.]),
                    (lambda x: F.leaky_relu(x, 0.1), [1., .2, .3, .4, np.inf, .6]),
                    (lambda x: F.hardtanh(x), [0., 0., 3., 4., 0., 0.]),
                    (F.relu6, [1., 0., 0., 4., 0., 0.])]:
        g, = tg.autograd.grad(f(x), x, go, create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), want, rtol=1e-6)
        np.testing.assert_array_equal(tg.autograd.grad(g.sum(), x)[0].numpy(), [0.] * 6)
        g0, = tg.autograd.grad(f(x), x, go)   # the plain backward gives the same values
        assert not g0.requires_grad
        np.testing.assert_allclose(g0.numpy(), want, rtol=1e-6)


def test_create_graph_through_relu_still_differentiates_its_output():
    # torch 2.13: g = 2 relu(x) * w-weights; grad((g*g).sum()) [[0, 0, 16, 216], [0, 200, 0, 784]]
    x = tg.tensor([[1.5, -2., 0.5, 3.], [0., 1., -1., 2.]], requires_grad=True)
    y = x.relu() ** 2
    g, = tg.autograd.grad((y * tg.arange(8.).reshape(2, 4)).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [[0., 0., 2., 18.], [0., 10., 0., 28.]])
    h, = tg.autograd.grad((g * g).sum(), x)
    np.testing.assert_allclose(h.numpy(), [[0., 0., 16., 216.], [0., 200., 0., 784.]])


def test_create_graph_gradgradcheck_relu_family():
    for f in (lambda x: x.relu(), lambda x: F.leaky_relu(x, 0.2), lambda x: F.hardtanh(x, -0.5, 0.5)):
        x = tg.tensor([0.3, -0.7, 1.2, -1.9], dtype=tg.float64, requires_grad=True)
        assert tg.autograd.gradgradcheck(f, (x,))


# ---- 4. copy_ from a source with history gives the old value a zero gradient ------------------

@pytest.mark.parametrize("src_grad", [True, False])
def test_copy_into_a_non_leaf_gives_zeros_to_its_history(src_grad):
    # torch 2.13: y = x * 5; y.copy_(w); y.sum().backward() -> x.grad [0, 0] (CopyBackwards
    # passes zeros to self), w.grad [1, 1] (None without requires_grad); y.copy_(w[:1])
    # (broadcast) -> x.grad [0, 0], w.grad [2, 0]
    x = tg.ones(2, requires_grad=True)
    w = tg.tensor([3., 4.], requires_grad=src_grad)
    y = x * 5
    y.copy_(w)
    assert y.grad_fn.name() == "torch::autograd::CopyBackwards"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0., 0.])
    if src_grad:
        np.testing.assert_array_equal(w.grad.numpy(), [1., 1.])
    else:
        assert w.grad is None
    x = tg.ones(2, requires_grad=True)
    w = tg.tensor([3., 4.], requires_grad=src_grad)
    y = x * 5
    y.copy_(w[:1])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0., 0.])
    if src_grad:
        np.testing.assert_array_equal(w.grad.numpy(), [2., 0.])


def test_copy_into_a_tensor_without_grad_from_one_with():
    # torch 2.13: y = zeros(2); y.copy_(w) -> CopyBackwards, requires grad; (y*y).sum()
    # -> w.grad [2, 4]; a view's copy_ keeps CopySlices (x.grad [0, 5], w.grad [1, 0])
    y = tg.zeros(2)
    w = tg.tensor([1., 2.], requires_grad=True)
    y.copy_(w)
    assert y.requires_grad and y.grad_fn.name() == "torch::autograd::CopyBackwards"
    (y * y).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2., 4.])
    x = tg.ones(2, requires_grad=True)
    w = tg.tensor([3., 4.], requires_grad=True)
    y = x * 5
    y[:1].copy_(w[:1])
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0., 5.])
    np.testing.assert_array_equal(w.grad.numpy(), [1., 0.])


# ---- 5. errors torch raises -----------------------------------------------------------------

_VERSION_ERROR = "one of the variables needed for gradient computation has been modified by an inplace operation"


@pytest.mark.parametrize("chain, node", [
    ("sigmoid_().tanh_()", "SigmoidBackward0"),   # torch: "output 0 of Sigmoid, is at
    ("exp_().mul_(2)", "ExpBackward0"),           # version 2; expected version 1 instead"
    ("tanh_().mul_(2)", "TanhBackward0"),
    ("sqrt_().mul_(2)", "SqrtBackward0"),
    ("rsqrt_().mul_(2)", "RsqrtBackward0"),
    ("reciprocal_().mul_(2)", "ReciprocalBackward0"),
    ("exp_().add_(1)", "ExpBackward0"),
    ("tanh_().neg_()", "TanhBackward0"),
])
def test_a_saved_output_of_an_inplace_op_modified_again_raises(chain, node):
    x = tg.ones(2, requires_grad=True)
    y = x * 1
    eval("y." + chain)
    with pytest.raises(RuntimeError, match=f"{_VERSION_ERROR}: \\[f32\\[2\\]\\], which is output 0 "
                                           f"of {node}, is at version 2; expected version 1"):
        y.sum().backward()


@pytest.mark.parametrize("chain, ok", [
    ("exp_()[0:1].mul_(2)", False), ("exp_().detach().mul_(2)", False),
    ("exp_().zero_()", False), ("exp_().copy_(tg.ones(2))", False),
    ("exp_().fill_(1.)", False), ("relu_().mul_(2)", False),
    ("exp_().data.mul_(2)", [3.2974424, 14.778112]),   # .data: no version bump, as torch
    ("sin_().mul_(2)", [1.7551651, -0.8322937]), ("mul_(2).exp_()", [5.4365635, 109.1963]),
    ("neg_().exp_()", [-0.6065307, -0.1353353]), ("add_(1).mul_(2)", [2., 2.]),
    ("exp_()", [1.6487212, 7.389056]), ("sigmoid_()", [0.2350037, 0.1049936]),
    ("copy_(tg.ones(2)).exp_()", [0., 0.]),
])
def test_inplace_chains_raise_where_torch_does(chain, ok):
    # torch 2.13 at x = [0.5, 2]: the chains marked False raise the version error, the others
    # give these x.grad
    x = tg.tensor([0.5, 2.], requires_grad=True)
    y = x * 1
    eval("y." + chain)
    if ok is False:
        with pytest.raises(RuntimeError, match=_VERSION_ERROR):
            y.sum().backward()
    else:
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), ok, rtol=1e-5)


_COMPLEX_MISMATCH = ("For complex Tensors, both grad_output and output are required to have the "
                     "same dtype. Mismatch in dtype: grad_output[0] has a dtype of torch.{} and "
                     "output[0] has a dtype of torch.{}.")


def test_complex_output_with_a_real_grad_output_raises():
    # torch 2.13: this RuntimeError for backward and grad, both directions; a complex128
    # gradient for a complex64 output is fine (converted)
    z = tg.tensor([1 + 1j], requires_grad=True)
    msg = _COMPLEX_MISMATCH.format("float32", "complex64").replace("[", r"\[").replace("]", r"\]")
    with pytest.raises(RuntimeError, match=msg.replace(".", r"\.")):
        (z * 2).backward(tg.ones(1))
    with pytest.raises(RuntimeError, match="Mismatch in dtype: grad_output"):
        tg.autograd.grad(z * 2, z, tg.ones(1))
    x = tg.ones(1, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"grad_output\[0\] has a dtype of torch\.complex64 and "
                                           r"output\[0\] has a dtype of torch\.float32"):
        (x * 2).backward(tg.ones(1, dtype=tg.complex64))
    (z * 2).backward(tg.ones(1, dtype=tg.complex128))
    np.testing.assert_allclose(z.grad.numpy(), [2 + 0j])


def test_functional_jacobian_of_a_complex_output_raises():
    # torch 2.13: "grad can be implicitly created only for real scalar outputs but got
    # torch.complex64" from jacobian (reverse mode, rows), vjp without v, hessian, vhp;
    # jacobian(vectorize=True) gives [[2+0j]], vjp with v and real outputs work
    F_ = tg.autograd.functional
    z = tg.tensor([1 + 2j])
    for call in (lambda: F_.jacobian(lambda z: z * 2, z),
                 lambda: F_.jacobian(lambda z: (z.abs(), z * 2), z),
                 lambda: F_.vjp(lambda z: z * 2, z),
                 lambda: F_.hessian(lambda z: (z * z).sum(), z),
                 lambda: F_.vhp(lambda z: (z * z).sum(), z, tg.ones(1, dtype=tg.complex64))):
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for real "
                                               "scalar outputs but got complex64"):
            call()
    np.testing.assert_allclose(F_.jacobian(lambda z: z * 2, z, vectorize=True).numpy(), [[2 + 0j]])
    _, v = F_.vjp(lambda z: z * 2, z, tg.ones(1, dtype=tg.complex64))
    np.testing.assert_allclose(v.numpy(), [2 + 0j])
    np.testing.assert_allclose(F_.jacobian(lambda z: z.abs(), z).numpy(),
                               [[0.4472136 + 0.8944272j]], rtol=1e-6)


_REENTRANT = ("When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
              "passing an `inputs` parameter to .backward(). To resolve this error, you can "
              "either set use_reentrant=False, or call .backward() without passing the `inputs` "
              "argument.")


def test_reentrant_checkpoint_refuses_grad_and_backward_inputs():
    # torch 2.13: this RuntimeError from grad() and backward(inputs=...) when the checkpoint's
    # node runs; backward() and the non-reentrant variant work; a grad() whose inputs do not
    # reach the checkpoint gives its gradient (ones)
    from tracegrad.utils.checkpoint import checkpoint
    x = tg.randn(2, 2, requires_grad=True)
    w = tg.randn(2, 2, requires_grad=True)

    def f(a, b):
        return (a @ b).sin()

    out = checkpoint(f, x, w, use_reentrant=True)
    with pytest.raises(RuntimeError) as e:
        tg.autograd.grad(out.sum(), x)
    assert _REENTRANT in str(e.value)
    out = checkpoint(f, x, w, use_reentrant=True)
    with pytest.raises(RuntimeError) as e:
        out.sum().backward(inputs=[x])
    assert _REENTRANT in str(e.value)
    assert tg.autograd._is_checkpoint_valid()
    out = checkpoint(f, x, w, use_reentrant=True)
    out.sum().backward()
    want = x.grad.clone()
    out = checkpoint(f, x, w, use_reentrant=False)
    np.testing.assert_allclose(tg.autograd.grad(out.sum(), x)[0].numpy(), want.numpy(), rtol=1e-6)
    y = x * 2
    out = checkpoint(f, x, w, use_reentrant=True)
    g, = tg.autograd.grad(y.sum() + out.sum(), y)
    np.testing.assert_array_equal(g.numpy(), np.ones((2, 2)))


_COPY_WARNING = ("To copy construct from a tensor, it is recommended to use "
                 "sourceTensor.detach().clone() or sourceTensor.detach().clone()"
                 ".requires_grad_(True), rather than {}(sourceTensor).")


@pytest.mark.parametrize("src_grad", [False, True])
def test_tensor_of_a_tensor_warns(src_grad):
    # torch 2.13: UserWarning (these texts) for tensor(t) and t.new_tensor(t), whether or not
    # t requires grad, at the caller's line; the copy does not require grad; as_tensor does
    # not warn (as_tensor(t, dtype) keeps t's history: ToCopyBackward0)
    import warnings
    src = tg.ones(2, requires_grad=src_grad)
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        t = tg.tensor(src)
        n = src.new_tensor(src)
        tg.as_tensor(src)
        a = tg.as_tensor(src, dtype=tg.float64)
        tg.tensor([1., 2.])
    assert [(w.category, str(w.message)) for w in ws] == [
        (UserWarning, _COPY_WARNING.format("torch.tensor")),
        (UserWarning, _COPY_WARNING.format("tensor.new_tensor"))]
    assert all(w.filename == __file__ for w in ws)
    assert not t.requires_grad and not n.requires_grad
    assert a.dtype is tg.float64 and a.requires_grad == src_grad
