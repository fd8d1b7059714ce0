"""The code examples of the seed documents (/work/shared/seeds), run on tracegrad.

Expected values are the ones the seeds print (PyTorch); where a seed shows no
value, the value was checked on torch 2.13 and is marked so.  Examples that
need features tracegrad lacks (hooks, custom Function, setitem, anomaly mode,
profiler, saved-tensor hooks) are not translated.
"""
import warnings

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.autograd.graph import AccumulateGrad, Node


def _seed_graph():
    """Seed 003, "一個具體的例子": loss = mean((input*w1 + w2) * (input*w1 * w3))."""
    input = tg.ones([2, 2], requires_grad=False)  # noqa: A001  (the seed's name)
    w1 = tg.tensor(2.0, requires_grad=True)
    w2 = tg.tensor(3.0, requires_grad=True)
    w3 = tg.tensor(4.0, requires_grad=True)
    l1 = input * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    loss = l4.mean()
    return dict(input=input, w1=w1, w2=w2, w3=w3, l1=l1, l2=l2, l3=l3, l4=l4, loss=loss)


def _names(fn):
    return [(None if f is None else f.name(), i) for f, i in fn.next_functions]


# ---- seed 003: the worked example --------------------------------------------------------

def test_forward_values():
    g = _seed_graph()
    np.testing.assert_array_equal(g["l1"].detach().numpy(), np.full((2, 2), 2.0, np.float32))
    np.testing.assert_array_equal(g["l2"].detach().numpy(), np.full((2, 2), 5.0, np.float32))
    np.testing.assert_array_equal(g["l3"].detach().numpy(), np.full((2, 2), 8.0, np.float32))
    np.testing.assert_array_equal(g["l4"].detach().numpy(), np.full((2, 2), 40.0, np.float32))
    assert g["loss"].item() == 40.0
    assert g["loss"].shape == ()
    assert g["loss"].dtype is tg.float32


def test_forward_prints_as_in_seed():
    g = _seed_graph()
    # print(w1.data, w1.grad, w1.grad_fn)  ->  tensor(2.) None None
    w1 = g["w1"]
    assert repr(w1.data) == "tensor(2.)"
    assert w1.grad is None and w1.grad_fn is None
    # print(l1.data, l1.grad, l1.grad_fn)  ->  tensor([[2., 2.], [2., 2.]]) None <MulBackward0>
    l1 = g["l1"]
    assert repr(l1.data) == "tensor([[2., 2.],\n        [2., 2.]])"
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert l1.grad is None
    assert l1.grad_fn.name() == "MulBackward0"
    # print(loss.data, ...)  ->  tensor(40.)
    assert repr(g["loss"].data) == "tensor(40.)"
    assert repr(l1) == "tensor([[2., 2.],\n        [2., 2.]], grad_fn=<MulBackward0>)"


def test_backward_grads_28_8_10():
    g = _seed_graph()
    g["loss"].backward()
    assert g["w1"].grad.item() == 28.0
    assert g["w2"].grad.item() == 8.0
    assert g["w3"].grad.item() == 10.0
    assert repr(g["w1"].grad) == "tensor(28.)"
    for w in ("w1", "w2", "w3"):
        assert g[w].grad.shape == () and g[w].grad.dtype is tg.float32
        assert g[w].grad.grad_fn is None and not g[w].grad.requires_grad
    assert g["input"].grad is None   # requires_grad=False: nothing accumulated


@pytest.mark.parametrize("name", ["l1", "l2", "l3", "l4", "loss"])
def test_non_leaf_grads_stay_none_and_warn(name):
    g = _seed_graph()
    g["loss"].backward()
    with pytest.warns(UserWarning, match="retain_grad"):
        assert g[name].grad is None


def test_leaf_grad_access_does_not_warn():
    g = _seed_graph()
    g["l1"].retain_grad()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert g["w1"].grad is None
        assert g["input"].grad is None
        g["loss"].backward()
        assert g["w1"].grad.item() == 28.0
        assert g["l1"].grad is not None   # retained: no warning either
    assert not [w for w in caught if ".grad attribute" in str(w.message)]


def test_is_leaf_requires_grad_grad_fn():
    g = _seed_graph()
    # "在整張計算圖中，只有 input 一個變量是 requires_grad=False 的"
    assert not g["input"].requires_grad
    for name in ("w1", "w2", "w3", "l1", "l2", "l3", "l4", "loss"):
        assert g[name].requires_grad, name
    for name in ("input", "w1", "w2", "w3"):
        assert g[name].is_leaf and g[name].grad_fn is None, name
    for name in ("l1", "l2", "l3", "l4", "loss"):
        assert not g[name].is_leaf and g[name].grad_fn is not None, name
        assert isinstance(g[name].grad_fn, Node)


def test_grad_fn_names_and_next_functions():
    # Structure as torch 2.13 prints it for this graph.
    g = _seed_graph()
    acc = "torch::autograd::AccumulateGrad"
    assert g["l1"].grad_fn.name() == "MulBackward0"
    assert _names(g["l1"].grad_fn) == [(None, 0), (acc, 0)]        # input needs no grad
    assert _names(g["l2"].grad_fn) == [("MulBackward0", 0), (acc, 0)]
    assert g["l2"].grad_fn.name() == "AddBackward0"
    assert _names(g["l3"].grad_fn) == [("MulBackward0", 0), (acc, 0)]
    assert _names(g["l4"].grad_fn) == [("AddBackward0", 0), ("MulBackward0", 0)]
    # the edges lead to the very nodes / leaves that produced the inputs
    assert g["l2"].grad_fn.next_functions[0][0] is g["l1"].grad_fn
    assert g["l3"].grad_fn.next_functions[0][0] is g["l1"].grad_fn
    assert g["l4"].grad_fn.next_functions[0][0] is g["l2"].grad_fn
    assert g["l4"].grad_fn.next_functions[1][0] is g["l3"].grad_fn
    acc_w1 = g["l1"].grad_fn.next_functions[1][0]
    assert isinstance(acc_w1, AccumulateGrad) and acc_w1.variable is g["w1"]
    assert acc_w1.next_functions == ()


def test_mean_grad_fn_is_mean_backward():
    # mean is a registry composite (sum then div); its node shows torch's one MeanBackward0
    # over the mean's operand (torch 2.13), while backward runs the decomposition's nodes
    g = _seed_graph()
    assert g["loss"].grad_fn.name() == "MeanBackward0"
    assert _names(g["loss"].grad_fn) == [("MulBackward0", 0)]
    assert g["loss"].grad_fn.next_functions[0][0] is g["l4"].grad_fn
    g["loss"].backward()
    assert (g["w1"].grad.item(), g["w2"].grad.item(), g["w3"].grad.item()) == (28.0, 8.0, 10.0)


def test_retain_grad_of_intermediates():
    g = _seed_graph()
    g["l1"].retain_grad()
    g["l4"].retain_grad()
    g["loss"].retain_grad()
    assert g["l1"].retains_grad and not g["l2"].retains_grad
    g["loss"].backward()
    assert repr(g["loss"].grad) == "tensor(1.)"
    assert repr(g["l4"].grad) == "tensor([[0.2500, 0.2500],\n        [0.2500, 0.2500]])"
    assert repr(g["l1"].grad) == "tensor([[7., 7.],\n        [7., 7.]])"
    np.testing.assert_array_equal(g["l1"].grad.numpy(), np.full((2, 2), 7.0, np.float32))
    # leaves are unaffected by retain_grad on intermediates
    assert (g["w1"].grad.item(), g["w2"].grad.item(), g["w3"].grad.item()) == (28.0, 8.0, 10.0)
    with pytest.warns(UserWarning):
        assert g["l2"].grad is None


def test_retain_grad_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        tg.ones(2).retain_grad()


def test_leaf_vs_computed():
    # a = torch.ones([2, 2], requires_grad=True); a.is_leaf -> True; (a + 2).is_leaf -> False
    a = tg.ones([2, 2], requires_grad=True)
    assert a.is_leaf
    b = a + 2
    assert not b.is_leaf
    assert b.grad_fn.name() == "AddBackward0"


def test_exp_grad_fn():
    # a = torch.tensor(2.0, requires_grad=True); print(a.exp())
    #   -> tensor(7.3891, grad_fn=<ExpBackward0>)
    a = tg.tensor(2.0, requires_grad=True)
    b = a.exp()
    assert repr(b) == "tensor(7.3891, grad_fn=<ExpBackward0>)"
    assert b.grad_fn.name() == "ExpBackward0"
    assert b.grad_fn.next_functions[0][0].variable is a


# ---- seed 003: in-place operations -----------------------------------------------------

def test_out_of_place_makes_a_new_object_in_place_keeps_it():
    a = tg.tensor([3.0, 1.0])
    old = id(a)
    a = a.exp()             # 情景 1: a new tensor
    assert id(a) != old
    a = tg.tensor([3.0, 1.0])
    old = id(a)
    a.mul_(10.0)            # in place (the seed uses a[0] = 10; setitem is not supported yet)
    assert id(a) == old
    np.testing.assert_array_equal(a.numpy(), np.array([30.0, 10.0], np.float32))


def test_version_counter_and_modified_saved_tensor_error():
    a = tg.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    assert b._version == 0
    loss = (b * b).mean()
    b.fill_(1000.0)         # the seed writes b[0] = 1000.0
    assert b._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as exc:
        loss.backward()
    msg = str(exc.value)
    assert "version 1" in msg and "expected version 0" in msg
    assert a.grad is None


def test_in_place_on_value_not_needed_by_backward_is_fine():
    # "反向傳播求導的時候如果沒用到 b 的值 ... 不會報錯" (y = x + 1): checked on torch 2.13
    a = tg.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    loss = (b * 3).sum()
    b.add_(1)
    loss.backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.array([3.0, 3.0], np.float32))


def test_in_place_on_leaf_that_requires_grad_raises():
    a = tg.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
    assert repr(a) == "tensor([10.,  5.,  2.,  3.], requires_grad=True)"
    assert a.is_leaf
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation"):
        a.add_(10.0)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        a += 10.0
    np.testing.assert_array_equal(a.detach().numpy(), [10.0, 5.0, 2.0, 3.0])
    assert a._version == 0


def test_in_place_on_leaf_under_no_grad():
    # 方法二 (the seed writes a[:] = 10. inside no_grad)
    a = tg.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
    with tg.no_grad():
        a.fill_(10.0)
    assert repr(a) == "tensor([10., 10., 10., 10.], requires_grad=True)"
    assert a.is_leaf and a.requires_grad and a.grad_fn is None
    loss = (a * a).mean()
    loss.backward()
    assert repr(a.grad) == "tensor([5., 5., 5., 5.])"


def test_dynamic_graph_second_backward_raises_then_rebuild():
    a = tg.tensor([3.0, 1.0], requires_grad=True)
    b = a * a
    loss = b.mean()
    loss.backward()
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 1.0])   # torch 2.13
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
    a = tg.tensor([3.0, 1.0], requires_grad=True)
    b = a * a
    loss = b.mean()
    loss.backward()
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 1.0])


def test_retain_graph_accumulates_across_two_backwards():
    g = _seed_graph()
    g["loss"].backward(retain_graph=True)
    g["loss"].backward()
    assert (g["w1"].grad.item(), g["w2"].grad.item(), g["w3"].grad.item()) == (56.0, 16.0, 20.0)
    with pytest.raises(RuntimeError, match="second time"):
        g["loss"].backward()


# ---- seed 000 (torch.autograd docs) -----------------------------------------------------

def test_profiler_example_loop_accumulates():
    # x = randn((1, 1)); 100 x { y = x ** 2; y.backward() }  ->  x.grad == 200 * x
    # (the loop also runs the cached backward program on the jax executor once hot)
    tg.manual_seed(0)
    x = tg.randn((1, 1), requires_grad=True)
    for _ in range(100):
        y = x ** 2
        y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 200 * x.detach().numpy(), rtol=1e-6)


def test_grad_fn_is_a_graph_node():
    a = tg.tensor([0.0, 0.0, 0.0], requires_grad=True)
    b = a.exp()
    assert isinstance(b.grad_fn, tg.autograd.graph.Node)
    assert b.grad_fn.name() == "ExpBackward0"
    for attr in ("name", "next_functions", "metadata"):
        assert hasattr(b.grad_fn, attr)


def test_backward_inputs_restricts_accumulation():
    # register_multi_grad_hook example, without the hook
    a = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = tg.tensor([4.0, 5.0, 6.0], requires_grad=True)
    c = a * b
    c.sum().backward(retain_graph=True)
    np.testing.assert_array_equal(a.grad.numpy(), [4.0, 5.0, 6.0])
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 2.0, 3.0])
    c.sum().backward(inputs=(a,), retain_graph=True)
    np.testing.assert_array_equal(a.grad.numpy(), [8.0, 10.0, 12.0])
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 2.0, 3.0])


def test_grad_reset_to_none_between_iterations():
    p = tg.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        p.grad = None
        (p * p).sum().backward()
        np.testing.assert_array_equal(p.grad.numpy(), [2.0, 4.0])


def test_grad_accumulates_in_place_without_create_graph():
    # rule 3: with create_graph=False backward accumulates into the existing .grad object
    a = tg.tensor(3.0, requires_grad=True)
    y = a * a
    y.backward(retain_graph=True)
    g = a.grad
    y.backward()
    assert a.grad is g
    assert a.grad.item() == 12.0


def test_grad_replaced_with_create_graph():
    # rule 4: with create_graph=True .grad becomes a new tensor .grad + new grad (torch 2.13:
    # 6 + 6 = tensor(12., grad_fn=<AddBackward0>), a new object)
    a = tg.tensor(3.0, requires_grad=True)
    (a * a).backward()
    g = a.grad
    (a * a).backward(create_graph=True)
    assert a.grad is not g
    assert a.grad.item() == 12.0
    assert a.grad.requires_grad and a.grad.grad_fn is not None


def test_manually_assigned_grad_layout_is_kept():
    p = tg.tensor([1.0, 2.0], requires_grad=True)
    z = tg.zeros(2)
    p.grad = z
    (p * 3).sum().backward()
    assert p.grad is z
    np.testing.assert_array_equal(p.grad.numpy(), [3.0, 3.0])


def test_only_floating_point_tensors_require_grad():
    for dt in (tg.float16, tg.bfloat16, tg.float32, tg.float64):
        assert tg.ones(2, dtype=dt, requires_grad=True).requires_grad
    for dt in (tg.int32, tg.int64, tg.bool):
        with pytest.raises(RuntimeError, match="floating point"):
            tg.ones(2, dtype=dt).requires_grad_()


# ---- seed 001 (old Variable docs) -------------------------------------------------------

def test_backward_of_non_scalar_with_gradient():
    # v.backward(torch.Tensor([1, 1, 1]))  (the seed's hook, which doubles it, is left out)
    v = tg.tensor([0.0, 0.0, 0.0], requires_grad=True)
    v.backward(tg.tensor([1.0, 1.0, 1.0]))
    np.testing.assert_array_equal(v.grad.numpy(), [1.0, 1.0, 1.0])
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    (w * w).backward(tg.tensor([1.0, 0.5]))
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0])


def test_detach_shares_data_and_never_requires_grad():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    d = b.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    assert np.shares_memory(d.numpy(), b.detach().numpy())
    assert (d * 3).grad_fn is None
    np.testing.assert_array_equal(d.numpy(), [2.0, 4.0])


def test_data_is_cut_from_the_graph_with_its_own_version():
    w = tg.tensor(2.0, requires_grad=True)
    d = w.data
    assert not d.requires_grad and d.is_leaf and d._version == 0
    assert d.item() == 2.0
