"""Saved tensors: `_saved_<name>` accessors and saved-tensor hooks (torch.autograd.graph).

Seed 000's examples with their printed output, on both executors; other
values are torch 2.13's (checked by hand).
"""
import numpy as np
import pytest

import tracegrad as tg

graph = tg.autograd.graph


def _vals(t):
    return np.asarray(t.detach().numpy()).tolist()


# ---- _saved_<name> ---------------------------------------------------------------------------

def test_seed000_saved_result_of_exp():
    a = tg.tensor([0.0, 0.0, 0.0], requires_grad=True)
    b = a.exp()
    assert isinstance(b.grad_fn, tg.autograd.graph.Node)
    names = dir(b.grad_fn)
    for name in ("_raw_saved_result", "_saved_result", "metadata", "name", "next_functions",
                 "register_hook", "register_prehook", "requires_grad"):
        assert name in names
    # print(torch.allclose(b.grad_fn._saved_result, b))  ->  True
    np.testing.assert_allclose(_vals(b.grad_fn._saved_result), _vals(b))
    assert b.grad_fn._saved_result.grad_fn is b.grad_fn


def test_saved_names_follow_derivatives_yaml():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    m = a * tg.ones(2)
    assert [n for n in dir(m.grad_fn) if n.startswith(("_saved", "_raw_saved"))] == \
        ["_raw_saved_other", "_raw_saved_self", "_saved_other", "_saved_self"]   # torch 2.13
    s = a.sum(dim=0)
    assert s.grad_fn._saved_dim == (0,) and s.grad_fn._saved_keepdim is False
    m2 = a * a
    assert repr(m2.grad_fn._saved_self) == "tensor([1., 2.], requires_grad=True)"
    m2.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        m2.grad_fn._saved_self
    with pytest.raises(AttributeError, match="_saved_nothing"):
        m2.grad_fn._saved_nothing


def test_raw_saved_tensor_register_hooks(executor):
    calls = []
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    y = a.exp()
    y.grad_fn._raw_saved_result.register_hooks(lambda t: calls.append("pack") or t * 1,
                                               lambda p: calls.append("unpack") or p)
    y.sum().backward()
    assert calls == ["pack", "unpack"]
    np.testing.assert_allclose(_vals(a.grad), np.exp([1.0, 2.0]), rtol=1e-6)


# ---- saved_tensors_hooks -----------------------------------------------------------------------

def test_seed000_pack_and_unpack_print_in_torch_order(executor, capsys):
    def pack_hook(x):
        print("Packing", x)
        return x

    def unpack_hook(x):
        print("Unpacking", x)
        return x

    a = tg.ones(5, requires_grad=True)
    b = tg.ones(5, requires_grad=True) * 2
    with tg.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = a * b
    # torch 2.13 prints other (b) before self (a): its MulBackward0 saves by name, sorted
    assert capsys.readouterr().out == (
        "Packing tensor([2., 2., 2., 2., 2.], grad_fn=<MulBackward0>)\n"
        "Packing tensor([1., 1., 1., 1., 1.], requires_grad=True)\n")
    y.sum().backward()
    assert capsys.readouterr().out == (
        "Unpacking tensor([2., 2., 2., 2., 2.], grad_fn=<MulBackward0>)\n"
        "Unpacking tensor([1., 1., 1., 1., 1.], requires_grad=True)\n")
    assert _vals(a.grad) == [2.0] * 5


def test_ops_that_save_nothing_pack_nothing():
    calls = []
    a = tg.ones(2, requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: calls.append(t) or t, lambda p: p):
        y = a + 1           # add's backward reads no forward value
        z = a.exp()         # exp saves its result only
    assert len(calls) == 1 and calls[0] is z


def test_innermost_pair_wins(executor):
    calls = []
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: calls.append("outer") or t, lambda p: p):
        with graph.saved_tensors_hooks(lambda t: calls.append("inner") or ("box", t),
                                       lambda p: calls.append("unpack inner") or p[1]):
            y = a * a
    y.sum().backward()
    assert calls == ["inner", "inner", "unpack inner", "unpack inner"]
    assert _vals(a.grad) == [2.0, 4.0]


def test_hooks_can_move_saved_values_off_the_tape(executor):
    # pack into a plain NumPy copy, unpack into a new tensor: the gradient is unchanged
    store = []

    def pack(t):
        store.append(np.array(t.detach().numpy()))
        return len(store) - 1

    x = tg.tensor([0.5, 1.5, -2.0], requires_grad=True)
    with graph.saved_tensors_hooks(pack, lambda i: tg.tensor(store[i])):
        y = (x.tanh() * x).sum()
    y.backward()
    t = np.tanh([0.5, 1.5, -2.0])
    np.testing.assert_allclose(_vals(x.grad), (1 - t ** 2) * [0.5, 1.5, -2.0] + t, rtol=1e-5)


def test_packed_values_are_not_version_checked():
    # torch 2.13: the hooks own a packed value; an in-place change is not detected
    a = tg.ones(2, requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        z = a.exp()
        z.add_(1)
    z.sum().backward()
    np.testing.assert_allclose(_vals(a.grad), [np.e + 1] * 2, rtol=1e-6)


def test_function_save_for_backward_is_packed(executor):
    calls = []

    class Sq(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    a = tg.tensor([1.0, 3.0], requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: calls.append("pack") or t,
                                   lambda t: calls.append("unpack") or t):
        y = Sq.apply(a)
    y.sum().backward()
    assert calls == ["pack", "unpack"] and _vals(a.grad) == [2.0, 6.0]


def test_unpack_must_return_the_saved_type():
    a = tg.ones(2, requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: t, lambda t: tg.ones(3)):
        y = a.exp()
    with pytest.raises(RuntimeError, match="unpack_hook"):
        y.sum().backward()


def test_seed000_save_on_cpu(executor):
    a = tg.randn(5, requires_grad=True)
    b = tg.randn(5, requires_grad=True)
    c = tg.randn(5, requires_grad=True)
    packed = []

    def f(a, b, c):
        prod_1 = a * b           # a and b are saved as they are
        with tg.autograd.graph.save_on_cpu() as hooks:
            packed.append(hooks.pack_hook(prod_1))
            prod_2 = prod_1 * c  # prod_1 and c are "saved on the CPU": already there, no copy
        y = prod_2 * a
        return y, prod_1

    y, prod_1 = f(a, b, c)
    assert packed[0] is prod_1
    y.sum().backward()
    av, bv, cv = (t.detach().numpy() for t in (a, b, c))
    np.testing.assert_allclose(a.grad.numpy(), 2 * av * bv * cv, rtol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), av * av * cv, rtol=1e-5)
    np.testing.assert_allclose(c.grad.numpy(), av * av * bv, rtol=1e-5)


def test_seed000_disable_saved_tensors_hooks():
    message = "saved tensors default hooks are disabled"
    with tg.autograd.graph.disable_saved_tensors_hooks(message):
        # Raises RuntimeError: saved tensors default hooks are disabled
        with pytest.raises(RuntimeError, match=message):
            with tg.autograd.graph.save_on_cpu():
                pass
    with tg.autograd.graph.save_on_cpu():   # allowed again after the block
        pass


# ---- allow_mutation_on_saved_tensors -------------------------------------------------------------

def _sin_(t):
    """``t.sin_()`` (torch's in-place sin), or its equivalent where tracegrad has no sin_ yet."""
    return t.sin_() if hasattr(t, "sin_") else t.copy_(t.sin())


def test_seed000_allow_mutation_on_saved_tensors(executor):
    with tg.autograd.graph.allow_mutation_on_saved_tensors():
        # forward
        a = tg.ones(2, 3, requires_grad=True)
        b = a.clone()
        out = (b ** 2).sum()
        _sin_(b)
        # backward
        out.sum().backward()
    # the seed prints b: tensor([[0.8415, 0.8415, 0.8415], [0.8415, ...]], grad_fn=<SinBackward0>)
    assert repr(b).startswith("tensor([[0.8415, 0.8415, 0.8415],\n"
                              "        [0.8415, 0.8415, 0.8415]]")
    np.testing.assert_allclose(_vals(a.grad), np.full((2, 3), 2.0))   # d(b**2)/db at b == 1


def test_mutating_a_saved_tensor_outside_the_context_raises():
    a = tg.ones(2, 3, requires_grad=True)
    b = a.clone()
    out = (b ** 2).sum()
    _sin_(b)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_backward_outside_allow_mutation_context_raises():
    with tg.autograd.graph.allow_mutation_on_saved_tensors():
        a = tg.ones(2, 3, requires_grad=True)
        out = (a.clone() ** 2).sum()
    with pytest.raises(RuntimeError, match="Trying to backward outside of the "
                                           "'allow_mutation_on_saved_tensors' context"):
        out.backward()


def test_saved_accessors_under_hooks_return_a_new_tensor_each_read():
    # torch 2.13: without hooks `_saved_other is b`; with hooks (even identity ones) each read
    # unpacks again into a new tensor with the saved value's history: a non-leaf keeps its
    # grad_fn, a leaf reads as a new leaf requiring grad, an output as a tensor of the node
    a = tg.ones(2, requires_grad=True)
    b = tg.ones(2, requires_grad=True) * 2
    c = a * b
    assert c.grad_fn._saved_other is b and c.grad_fn._saved_self is a
    unpacked = []

    def unpack(t):
        unpacked.append(t)
        return t * 3

    with tg.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        c = a * b
        d = b.exp()
    o1, o2 = c.grad_fn._saved_other, c.grad_fn._saved_other
    assert o1 is not b and o1 is not o2 and len(unpacked) == 2
    assert o1.tolist() == [6.0, 6.0] and o1.grad_fn is b.grad_fn
    s = c.grad_fn._saved_self
    assert s is not a and s.is_leaf and s.requires_grad and s.tolist() == [3.0, 3.0]
    r = d.grad_fn._saved_result
    assert r is not d and r.grad_fn is d.grad_fn
