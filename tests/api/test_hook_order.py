"""Hooks as torch calls them (issue 14): hooks of outputs that got no gradient, node hooks of
multi-output nodes, hooks with ``backward(inputs=...)``, post-accumulate-grad hooks at their
leaf's accumulation in torch's order with grad mode off.

Every expected value was printed by the same program under torch 2.13.
"""
import numpy as np

import tracegrad as tg
from tracegrad.autograd import Function


def _l(t):
    return None if t is None else t.tolist()


class TwoOut(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, ga, gb):
        return ga * 2 + gb * 3


def test_hook_of_an_output_without_gradient_is_called_with_none(executor):
    for _ in range(3):   # the "auto" executor's third run is on jax
        x = tg.tensor([1.0, 2.0], requires_grad=True)
        a, b = TwoOut.apply(x)
        seen = []
        b.register_hook(lambda g: seen.append(("b", _l(g))))
        a.register_hook(lambda g: seen.append(("a", _l(g))))
        a.sum().backward()
        # torch 2.13
        assert seen == [("b", None), ("a", [1.0, 1.0])] and x.grad.tolist() == [2.0, 2.0]

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    a, b = TwoOut.apply(x)
    seen = []
    b.register_hook(lambda g: seen.append(("b", _l(g))))   # the used output has no hook
    (a * 5).sum().backward()
    assert seen == [("b", None)] and x.grad.tolist() == [10.0, 10.0]   # torch 2.13


def test_hook_of_eigenvectors_without_gradient():
    A = tg.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    w, V = tg.linalg.eigh(A)
    seen = []
    V.register_hook(lambda g: seen.append(("V", g)))
    w.register_hook(lambda g: seen.append(("w", g.tolist())))
    w.sum().backward()
    assert seen == [("V", None), ("w", [1.0, 1.0])]   # torch 2.13
    np.testing.assert_allclose(A.grad.numpy(), np.eye(2), atol=1e-6)   # torch 2.13: eye(2)


def test_a_single_output_tensor_outside_the_graph_gets_no_call():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    a, b = x * 2, x * 3
    seen = []
    b.register_hook(lambda g: seen.append(("b", g)))
    a.sum().backward()
    assert seen == []   # torch 2.13


def test_node_hooks_of_a_multi_output_node_see_none_for_outputs_without_gradient():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    a, _ = TwoOut.apply(x)
    seen = []
    a.grad_fn.register_prehook(lambda go: seen.append(("pre", [_l(g) for g in go])))
    a.grad_fn.register_hook(lambda gi, go: seen.append(("post", [_l(g) for g in gi],
                                                        [_l(g) for g in go])))
    a.sum().backward()
    # torch 2.13
    assert seen == [("pre", [[1.0, 1.0], None]), ("post", [[2.0, 2.0]], [[1.0, 1.0], None])]


def test_hooks_with_backward_inputs():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = tg.tensor([3.0, 4.0], requires_grad=True)
    h = x * y
    seen = []
    h.register_hook(lambda g: seen.append(("h", g.tolist())))
    x.register_hook(lambda g: seen.append(("x", g.tolist())))
    y.register_hook(lambda g: seen.append(("y", g.tolist())))
    h.grad_fn.register_prehook(lambda go: seen.append(("pre", go[0].tolist())))
    h.grad_fn.register_hook(lambda gi, go: seen.append(("post", [_l(g) for g in gi])))
    (h * 2).sum().backward(inputs=[x])
    # torch 2.13: no gradient is computed for y, so the post-hook sees None and y's hook
    # does not run
    assert seen == [("h", [2.0, 2.0]), ("pre", [2.0, 2.0]), ("post", [[6.0, 8.0], None]),
                    ("x", [6.0, 8.0])]
    assert x.grad.tolist() == [6.0, 8.0] and y.grad is None


def test_hooks_with_backward_inputs_a_non_leaf():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    k = h * 3
    seen = []
    h.register_hook(lambda g: seen.append(("h", g.tolist())))
    x.register_hook(lambda g: seen.append(("x", g.tolist())))
    k.register_hook(lambda g: seen.append(("k", g.tolist())))
    k.grad_fn.register_prehook(lambda go: seen.append(("pre_k", go[0].tolist())))
    k.sum().backward(inputs=[h])
    # torch 2.13 (which also runs h.grad_fn's node hooks here; see docs/autograd.md)
    assert seen == [("k", [1.0, 1.0]), ("pre_k", [1.0, 1.0]), ("h", [3.0, 3.0])]
    assert h.grad.tolist() == [3.0, 3.0] and x.grad is None


def test_post_accumulate_grad_hooks_run_at_their_leaf_with_grad_mode_off(executor):
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = tg.tensor([3.0, 4.0], requires_grad=True)
    seen = []

    def step(name):
        def hook(p):
            seen.append((name, p.grad.tolist(), tg.is_grad_enabled()))
            p.sub_(p.grad)   # an optimizer step in backward, as torch allows
        return hook

    a.register_post_accumulate_grad_hook(step("a"))
    b.register_post_accumulate_grad_hook(step("b"))
    h = a * 2
    h.register_hook(lambda g: seen.append(("h", g.tolist())))
    ((h * b).sum() + (b * 5).sum()).backward()
    # torch 2.13
    assert seen == [("b", [7.0, 9.0], False), ("h", [3.0, 4.0]), ("a", [6.0, 8.0], False)]
    assert a.tolist() == [-5.0, -6.0] and b.tolist() == [-4.0, -5.0]


def test_post_accumulate_grad_hooks_interleave_with_tensor_hooks():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = tg.tensor([3.0, 4.0], requires_grad=True)
    seen = []
    a.register_post_accumulate_grad_hook(lambda p: seen.append("a_post"))
    b.register_post_accumulate_grad_hook(lambda p: seen.append("b_post"))
    a.register_hook(lambda g: seen.append("a_hook"))
    b.register_hook(lambda g: seen.append("b_hook"))
    c = b.exp()
    c.register_hook(lambda g: seen.append("c_hook"))
    d = a.exp() * 2
    d.register_hook(lambda g: seen.append("d_hook"))
    (d.sum() + c.sum()).backward()
    # torch 2.13
    assert seen == ["d_hook", "a_hook", "a_post", "c_hook", "b_hook", "b_post"]


def test_accumulate_grad_node_hooks_and_leaf_order():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = tg.tensor([3.0, 4.0], requires_grad=True)
    seen = []
    y = a * b
    acc_a = y.grad_fn.next_functions[0][0]
    acc_a.register_prehook(lambda g: seen.append("a_acc_pre"))
    acc_a.register_hook(lambda gi, go: seen.append("a_acc_post"))
    a.register_post_accumulate_grad_hook(lambda p: seen.append("a_post"))
    b.register_hook(lambda g: seen.append("b_hook"))
    (y + b.exp()).sum().backward()
    assert seen == ["a_acc_pre", "a_post", "a_acc_post", "b_hook"]   # torch 2.13


def test_post_accumulate_grad_hooks_with_inputs_create_graph_and_grad():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = tg.tensor([3.0, 4.0], requires_grad=True)
    seen = []
    a.register_post_accumulate_grad_hook(lambda p: seen.append("a"))
    b.register_post_accumulate_grad_hook(lambda p: seen.append("b"))
    (a * b).sum().backward(inputs=[b])
    assert seen == ["b"] and a.grad is None and b.grad.tolist() == [1.0, 2.0]   # torch 2.13
    tg.autograd.grad((a * b).sum(), [a])
    assert seen == ["b"]   # torch 2.13: autograd.grad accumulates nothing

    c = tg.tensor([1.0, 2.0], requires_grad=True)
    got = []
    c.register_post_accumulate_grad_hook(
        lambda p: got.append((p.grad.tolist(), p.grad.requires_grad, tg.is_grad_enabled())))
    (c ** 3).sum().backward(create_graph=True)
    assert got == [([3.0, 12.0], True, True)]   # torch 2.13


def test_saved_inputs_are_the_tensors_themselves():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    c = a * b
    # torch 2.13: True True (the saved input itself, leaf or not)
    assert c.grad_fn._saved_other is b and c.grad_fn._saved_self is a
    d = b.exp()
    assert d.grad_fn._saved_result is not d   # torch 2.13: False (an output is a new tensor)
    assert d.grad_fn._saved_result.tolist() == d.tolist()


def test_saved_tensor_hooks_are_not_called_for_python_scalars():
    calls = []
    with tg.autograd.graph.saved_tensors_hooks(lambda t: calls.append("pack") or t,
                                               lambda t: calls.append("unpack") or t):
        a = tg.tensor([1.0, 2.0], requires_grad=True)
        y = a * 2.0
        a.pow(2)
    y.sum().backward()
    assert calls == ["pack"]   # torch 2.13: only pow saves a tensor (its base); mul by 2.0 none
