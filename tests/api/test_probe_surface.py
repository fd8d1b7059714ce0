"""The torch 2.13 probe's missing API: _is_view, is_conj/resolve_conj, resize_, kthvalue,
logcumsumexp, dist, sum_to_size(*sizes), tg.func.vmap/jacrev/jacfwd/hessian (torch 2.13's
values and messages recorded beside each check)."""
import numpy as np
import pytest

import tracegrad as tg
from tracegrad import func as F


def test_is_view():   # torch 2.13: False True True False False False True True True True False
    x = tg.randn(2, 3, requires_grad=True)
    got = [x._is_view(), x[0]._is_view(), x.t()._is_view(), (x * 1)._is_view(),
           x.detach()._is_view(), x.data._is_view(), x.view_as(x)._is_view(), x[...]._is_view(),
           x.unbind()[0]._is_view(), x.expand(2, 2, 3)._is_view(), x.t().contiguous()._is_view()]
    assert got == [False, True, True, False, False, False, True, True, True, True, False]


def test_conj_and_neg_bits():
    x = tg.randn(2)
    z = tg.tensor([1 + 2j])
    assert not x.is_conj() and x.resolve_conj() is x and not x.is_neg() and x.resolve_neg() is x
    assert not z.conj().is_conj()   # torch 2.13: True (lazy); here conj computes at once
    assert z.conj().resolve_conj().tolist() == [1 - 2j]


def test_resize():
    x = tg.randn(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="^cannot resize variables that require grad$"):
        x.resize_(6)   # torch 2.13
    y = tg.arange(6.0)
    assert y.resize_(2, 3) is y and y.tolist() == [[0, 1, 2], [3, 4, 5]]
    y = tg.arange(6.0)
    v0 = y._version
    assert y.resize_(2, 2).tolist() == [[0, 1], [2, 3]] and y._version == v0 + 1
    y = tg.arange(6.0)
    assert y.resize_(8).tolist()[:6] == [0, 1, 2, 3, 4, 5]   # torch: the rest uninitialized
    assert tg.arange(6.0).resize_((2, 3)).shape == (2, 3)
    assert tg.ones(2).resize_(tg.Size([1])).tolist() == [1.0]
    with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
        tg.ones(2).resize_(2, -1)   # torch 2.13's text
    with pytest.raises(NotImplementedError, match="not a view of another tensor"):
        tg.arange(6.0).view(2, 3)[0].resize_(5)
    b = tg.arange(6.0)
    v = b.view(2, 3)
    with pytest.raises(NotImplementedError, match="live views"):
        b.resize_(2)
    del v


def test_kthvalue():
    x = tg.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], requires_grad=True)
    r = tg.kthvalue(x, 2, 1)
    assert type(r).__name__ == "kthvalue" and r._fields == ("values", "indices")
    assert r.values.tolist() == [2.0, 4.0] and r.indices.tolist() == [2, 2]   # torch 2.13
    assert type(r.values.grad_fn).__name__ == "KthvalueBackward0"
    assert x.kthvalue(1).values.tolist() == [1.0, 0.0] and x.kthvalue(1).indices.tolist() == [1, 0]
    k = x.kthvalue(2, 0, True)
    assert k.values.tolist() == [[3.0, 5.0, 4.0]] and k.indices.tolist() == [[0, 1, 1]]
    r.values.sum().backward()
    assert x.grad.tolist() == [[0, 0, 1], [0, 0, 1]]   # torch 2.13
    for args in [(4, 1), (0, 1), (-1, 1)]:   # torch 2.13's RuntimeError
        with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k out of range "
                                               "for dimension 1"):
            tg.kthvalue(x, *args)
    with pytest.raises(IndexError, match=r"out of range.*got 2"):
        tg.kthvalue(x, 1, 2)
    assert tg.kthvalue(tg.tensor(5.0), 1).values.item() == 5.0
    assert tg.kthvalue(tg.tensor([1, 3, 2]), 2).values.item() == 2
    n = tg.kthvalue(tg.tensor([1.0, float("nan"), 2.0]), 3)   # torch 2.13: nan, index 1
    assert np.isnan(n.values.item()) and n.indices.item() == 1
    t = tg.kthvalue(tg.tensor([2.0, 1.0, 2.0, 1.0]), 2)   # torch 2.13: 1., index 3
    assert (t.values.item(), t.indices.item()) == (1.0, 3)
    a = tg.randn(3, 5, dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradcheck(lambda a: tg.kthvalue(a, 3, 1).values, (a,))


def test_logcumsumexp():
    y = tg.tensor([[0.0, 1000.0, -1000.0], [1.0, 2.0, 3.0]], requires_grad=True)
    o = tg.logcumsumexp(y, 1)
    assert type(o.grad_fn).__name__ == "LogcumsumexpBackward0"
    np.testing.assert_allclose(o.detach().numpy(), [[0.0, 1000.0, 1000.0],
                                                    [1.0, 2.3132617, 3.4076061]], rtol=1e-6)
    o.sum().backward()   # torch 2.13
    np.testing.assert_allclose(y.grad.numpy(), [[1.0, 2.0, 0.0], [1.3590, 0.9758, 0.6652]],
                               atol=1e-4)
    assert tg.logcumsumexp(tg.tensor([-np.inf, -np.inf, 0.0]), 0).tolist() == [-np.inf, -np.inf, 0]
    assert y.logcumsumexp(dim=-1).shape == (2, 3)
    with pytest.raises(TypeError, match="logcumsumexp_out_cpu"):   # torch: NotImplementedError
        tg.logcumsumexp(tg.tensor([1, 2]), 0)
    with pytest.raises(TypeError, match="dim"):
        tg.logcumsumexp(y)
    x = tg.randn(3, 4, dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradcheck(lambda a: tg.logcumsumexp(a, 1), (x,))
    assert tg.autograd.gradgradcheck(lambda a: tg.logcumsumexp(a, 0), (x,))


def test_dist():
    a = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = tg.tensor([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    got = [tg.dist(a, b).item(), a.dist(b, 1).item(), a.dist(b, float("inf")).item(),
           a.dist(b, 0).item(), a.dist(b, 3).item(), a.dist(b, p=-1).item()]
    np.testing.assert_allclose(got, [4.3589, 9.0, 3.0, 5.0, 3.5569, 0.0], atol=1e-4)  # torch
    assert type(tg.dist(a, b).grad_fn).__name__ == "DistBackward0"
    d = tg.dist(a, a.detach())
    d.backward()
    assert d.item() == 0.0 and a.grad.tolist() == [0.0, 0.0, 0.0]   # torch 2.13
    assert tg.dist(tg.tensor([1.0]), tg.tensor([2.0], dtype=tg.float64)).dtype is tg.float64
    with pytest.raises(TypeError, match="input dtype should be either floating point or complex"):
        tg.dist(tg.tensor([1, 2]), tg.tensor([1, 3]))
    x = tg.randn(2, 3, dtype=tg.float64, requires_grad=True)
    y = tg.randn(3, dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradcheck(lambda x, y: tg.dist(x, y, 3), (x, y))
    assert tg.autograd.gradcheck(lambda x, y: tg.dist(x, y), (x, y))


def test_sum_to_size_varargs():
    x = tg.ones(2, 3)
    assert x.sum_to_size(1, 3).tolist() == [[2.0, 2.0, 2.0]]   # torch 2.13
    assert x.sum_to_size((3,)).tolist() == [2.0, 2.0, 2.0]
    assert x.sum_to_size(tg.Size([2, 1])).tolist() == [[3.0], [3.0]]
    with pytest.raises(RuntimeError, match=r"^size \{\[2, 2\]\} is not expandable to size "
                                           r"\{\[2, 3\]\}\.$"):   # torch 2.13
        x.sum_to_size(2, 2)


def test_vmap_loops_with_torchs_semantics():
    x = tg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert F.vmap(lambda r: r.sum())(x).tolist() == [6.0, 15.0]
    assert F.vmap(lambda c: c * 2, in_dims=1, out_dims=1)(x).tolist() == (x * 2).tolist()
    assert F.vmap(lambda a, b: a * b, in_dims=(0, None))(x, tg.tensor([1.0, 0.0, 2.0])).tolist() \
        == [[1.0, 0.0, 6.0], [4.0, 0.0, 12.0]]
    s, m = F.vmap(lambda a: (a.sum(), a.max()))(x)
    assert s.tolist() == [6.0, 15.0] and m.tolist() == [3.0, 6.0]
    assert F.vmap(F.vmap(lambda v: v * v))(x).tolist() == (x * x).tolist()
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        F.vmap(lambda a, b: a + b)(x, tg.ones(3, 3))
    with pytest.raises(RuntimeError, match="randomness error mode"):   # torch 2.13's text
        F.vmap(lambda r: r + tg.randn(3))(x)
    same = F.vmap(lambda r: tg.randn(3), randomness="same")(x)
    assert same[0].tolist() == same[1].tolist()
    diff = F.vmap(lambda r: tg.randn(3), randomness="different")(x)
    assert diff[0].tolist() != diff[1].tolist()
    w = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    F.vmap(lambda r: (r * w).sum())(x).sum().backward()   # gradients flow through the loop
    assert w.grad.tolist() == [5.0, 7.0, 9.0]


def test_func_jacobians_match_torch():
    w = tg.tensor([1.0, 2.0], dtype=tg.float64)
    cube = tg.tensor([[3.0, 0.0], [0.0, 12.0]], dtype=tg.float64)   # torch 2.13
    assert F.jacrev(lambda v: v ** 3)(w).tolist() == cube.tolist()
    assert F.jacfwd(lambda v: v ** 3)(w).tolist() == cube.tolist()
    assert F.hessian(lambda v: (v ** 3).sum())(w).tolist() == [[6.0, 0.0], [0.0, 12.0]]
    assert F.grad(lambda v: (v ** 3).sum())(w).tolist() == [3.0, 12.0]
    ja, jb = F.jacrev(lambda a, b: a * b, argnums=(0, 1))(w, w + 1)
    assert ja.tolist() == [[2.0, 0.0], [0.0, 3.0]] and jb.tolist() == [[1.0, 0.0], [0.0, 2.0]]
    out, vjp_fn = F.vjp(lambda v: v.sin(), w)
    np.testing.assert_allclose(vjp_fn(tg.ones(2, dtype=tg.float64))[0].numpy(), np.cos([1, 2]))
    _, t = F.jvp(lambda v: v ** 2, (w,), (tg.ones(2, dtype=tg.float64),))
    assert t.tolist() == [2.0, 4.0]
    j, aux = F.jacrev(lambda v: (v * 2, v.sum()), has_aux=True)(w)
    assert j.tolist() == [[2.0, 0.0], [0.0, 2.0]] and aux.item() == 3.0
