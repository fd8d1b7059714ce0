"""Backward hooks: tensor hooks, Node pre/post hooks, AccumulateGrad hooks, multi-grad hooks.

Every behaviour runs on both executors (`executor` fixture): hooks are host
calls between compiled segments of the backward program (tracegrad/autograd/
hooks.py), so on jax the program really is split.  Expected values and call
orders are torch 2.13's (checked by hand) or the seeds' printed output.
"""
import numpy as np
import pytest

import tracegrad as tg
from tracegrad.autograd import engine, hooks


def _vals(t):
    return np.asarray(t.detach().numpy()).tolist()


def _program_with_host_calls():
    """The most recent cached program that has host calls."""
    for prog in reversed(engine._cache.values()):
        if prog.host:
            return prog
    raise AssertionError("no program with host calls in the cache")


# ---- seed examples -----------------------------------------------------------------------

def test_seed003_register_hook_prints_intermediate_grads(executor, capsys):
    # seed 003: hooks print the gradients of l1, l4 and loss; loss.grad stays None
    input = tg.ones([2, 2], requires_grad=False)  # noqa: A001  (the seed's name)
    w1 = tg.tensor(2.0, requires_grad=True)
    w2 = tg.tensor(3.0, requires_grad=True)
    w3 = tg.tensor(4.0, requires_grad=True)
    l1 = input * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    loss = l4.mean()
    l1.register_hook(lambda grad: print('l1 grad: ', grad))
    l4.register_hook(lambda grad: print('l4 grad: ', grad))
    loss.register_hook(lambda grad: print('loss grad: ', grad))
    loss.backward()
    assert capsys.readouterr().out == (
        "loss grad:  tensor(1.)\n"
        "l4 grad:  tensor([[0.2500, 0.2500],\n        [0.2500, 0.2500]])\n"
        "l1 grad:  tensor([[7., 7.],\n        [7., 7.]])\n")
    with pytest.warns(UserWarning, match="not a leaf"):
        assert loss.grad is None
    assert (w1.grad.item(), w2.grad.item(), w3.grad.item()) == (28.0, 8.0, 10.0)
    if executor == "jax":   # the program was split at the three hooks
        prog = _program_with_host_calls()
        assert sum(1 for s in prog._steps if not isinstance(s, hooks.Segment)) == 3


def test_seed001_leaf_hook_doubles_the_gradient_then_is_removed(executor):
    # seed 001: v.register_hook(lambda grad: grad * 2); v.backward([1, 1, 1]) -> v.grad 2 2 2
    v = tg.tensor([0.0, 0.0, 0.0], requires_grad=True)
    h = v.register_hook(lambda grad: grad * 2)
    v.backward(tg.tensor([1.0, 1.0, 1.0]))
    assert _vals(v.grad) == [2.0, 2.0, 2.0]
    h.remove()   # removes the hook: torch 2.13 then accumulates 1 1 1 more -> 3 3 3
    v.backward(tg.tensor([1.0, 1.0, 1.0]))
    assert _vals(v.grad) == [3.0, 3.0, 3.0]


def test_seed000_register_multi_grad_hook(executor, capsys):
    a = tg.rand(2, 3, requires_grad=True)
    b = tg.rand(2, 3, requires_grad=True)
    c = a * b
    d = a * b

    def fn(grads):
        print([g is not None for g in grads])

    tg.autograd.graph.register_multi_grad_hook((a, b, c, d), fn)
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)
    assert capsys.readouterr().out == "[True, True, True, False]\n[True, False, True, False]\n"


# ---- tensor hooks ----------------------------------------------------------------------------

def test_non_leaf_hooks_chain_in_order_and_retain_grad_sees_the_result(executor):
    calls = []
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    z = tg.tensor([3.0, 4.0], requires_grad=True)
    m = x * z
    m.register_hook(lambda g: calls.append(("t1", _vals(g))) or g + 1)
    m.register_hook(lambda g: calls.append(("t2", _vals(g))))
    m.retain_grad()
    (m * m).sum().backward()
    # torch 2.13: t1 gets 2m = [6, 16], t2 gets t1's result, .grad is the hooked gradient
    assert calls == [("t1", [6.0, 16.0]), ("t2", [7.0, 17.0])]
    assert _vals(m.grad) == [7.0, 17.0]
    assert _vals(x.grad) == [21.0, 68.0] and _vals(z.grad) == [7.0, 34.0]


def test_hook_on_the_root_replaces_its_gradient(executor):
    x = tg.tensor([3.0, 1.0, 2.0], requires_grad=True)
    r = (x * 2).sum()
    seen = []
    r.register_hook(lambda g: seen.append(g.item()) or g * 3)
    r.backward()
    assert seen == [1.0] and _vals(x.grad) == [6.0, 6.0, 6.0]


def test_leaf_hook_sees_the_summed_gradient_before_accumulation(executor):
    seen = []
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: seen.append(_vals(g)) or g * 10)
    (x * x + x).sum().backward()          # d/dx = 2x + 1 = [3, 5], hooked once
    assert seen == [[3.0, 5.0]] and _vals(x.grad) == [30.0, 50.0]


def test_leaf_hook_runs_for_autograd_grad(executor):
    # torch 2.13: leaf tensor hooks also run for autograd.grad (AccumulateGrad hooks do not)
    seen = []
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    a.register_hook(lambda g: seen.append(_vals(g)) or g * 10)
    (ga,) = tg.autograd.grad((a * a).sum(), a)
    assert seen == [[2.0, 4.0]] and _vals(ga) == [20.0, 40.0]
    assert a.grad is None


def test_hooks_of_a_value_not_needed_do_not_run(executor):
    seen = []
    a = tg.tensor([1.0], requires_grad=True)
    b = tg.tensor([2.0], requires_grad=True)
    b.register_hook(lambda g: seen.append("b"))
    (a * b).sum().backward(inputs=[a])
    assert seen == [] and b.grad is None and _vals(a.grad) == [2.0]


def test_adding_a_hook_to_a_hooked_tensor_reuses_the_program(executor):
    def run(n_hooks):
        x = tg.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        for _ in range(n_hooks):
            y.register_hook(lambda g: g * 2)
        y.sum().backward()
        return _vals(x.grad)

    engine.clear_cache()
    assert run(0) == [3.0, 3.0]
    plain = engine.cache_info()["programs"]
    assert run(1) == [6.0, 6.0]
    hooked = engine.cache_info()["programs"]
    assert hooked == plain + 1   # a hook changes the program: a host call at y
    assert run(2) == [12.0, 12.0]
    assert engine.cache_info()["programs"] == hooked   # the same program: hooks are looked up
    assert run(0) == [3.0, 3.0]


def test_program_without_hooks_has_no_host_calls():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    (x.exp() * 2).sum().backward()
    prog = next(reversed(engine._cache.values()))
    assert not prog.host and all(n.op != hooks.HOST for n in prog.graph.nodes)


def test_removed_hook_does_not_run(executor):
    x = tg.tensor([1.0], requires_grad=True)
    y = x * 2
    h = y.register_hook(lambda g: g * 100)
    h.remove()
    y.backward()
    assert _vals(x.grad) == [2.0]


def test_handle_is_a_context_manager(executor):
    x = tg.tensor([1.0], requires_grad=True)
    with x.register_hook(lambda g: g * 5):
        (x * 1).backward()
    (x * 1).backward()
    assert _vals(x.grad) == [6.0]


def test_hook_errors():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                           "require gradient"):
        tg.ones(2).register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on "
                                           "non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    z = x * 2
    z.register_hook(lambda g: tg.ones(3))
    with pytest.raises(RuntimeError, match=r"hook '<lambda>' has changed the size of value"):
        z.sum().backward()
    z = x * 2
    z.register_hook(lambda g: g.double())
    with pytest.raises(RuntimeError, match=r"has changed the type of value \(was float32"):
        z.sum().backward()
    z = x * 2
    z.register_hook(lambda g: 3)
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
        z.sum().backward()


def test_hook_with_create_graph_is_part_of_the_double_backward(executor):
    # torch 2.13: the hook g * y also applies in the second backward -> [6, 72]
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.register_hook(lambda g: g * y)
    (gx,) = tg.autograd.grad(y.sum(), x, create_graph=True)
    assert _vals(gx) == [2.0, 16.0] and gx.grad_fn is not None
    gx.sum().backward()
    assert _vals(x.grad) == [6.0, 72.0]


def test_hooks_are_traced_into_a_compiled_step():
    w = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w.register_hook(lambda g: g * 2)

    def step(x):
        y = (w * x).exp()
        y.register_hook(lambda g: g + 1)
        loss = y.sum()
        loss.backward()
        return loss

    x = tg.tensor([0.5, -1.0, 0.0])
    step(x)
    eager = _vals(w.grad)
    w.grad = None
    compiled = tg.compile(step)
    compiled(x)
    np.testing.assert_allclose(_vals(w.grad), eager, rtol=1e-6)
    # y's hook turns d loss/dy = 1 into 2, w's hook doubles: d/dw = 4 x exp(w x)
    np.testing.assert_allclose(eager, 4 * np.array([0.5, -1.0, 0.0]) * np.exp([0.5, -2.0, 0.0]),
                               rtol=1e-6)
    assert not any(n.op == hooks.HOST for p in compiled.programs for n in p.forward.nodes)


# ---- Node hooks ------------------------------------------------------------------------------

def test_node_prehook_and_posthook_order_and_replacement(executor):
    calls = []
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    z = tg.tensor([3.0, 4.0], requires_grad=True)
    m = x * z
    m.register_hook(lambda g: calls.append(("tensor", _vals(g))) or g + 1)
    m.retain_grad()
    m.grad_fn.register_prehook(
        lambda go: calls.append(("pre", [_vals(g) for g in go])) or (go[0] * 2,))
    m.grad_fn.register_hook(
        lambda gi, go: calls.append(("post", [_vals(g) for g in gi], [_vals(g) for g in go]))
        or (gi[0], gi[1] * 0))
    (m * m).sum().backward()
    # torch 2.13 prints exactly this order and these values
    assert calls == [("tensor", [6.0, 16.0]), ("pre", [[7.0, 17.0]]),
                     ("post", [[42.0, 136.0], [14.0, 68.0]], [[14.0, 34.0]])]
    assert _vals(m.grad) == [7.0, 17.0]          # retain_grad: before the node pre-hook
    assert _vals(x.grad) == [42.0, 136.0] and _vals(z.grad) == [0.0, 0.0]


def test_posthook_gets_none_for_inputs_without_grad(executor):
    seen = []
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    m = x * tg.tensor([3.0, 4.0])
    m.grad_fn.register_hook(lambda gi, go: seen.append([None if g is None else _vals(g)
                                                         for g in gi]))
    m.sum().backward()
    assert seen == [[[3.0, 4.0], None]]


def test_posthook_gets_input_shaped_gradients(executor):
    # broadcasting: the VJP works at the output shape; hooks see each input's shape
    seen = []
    x = tg.ones(2, 3, requires_grad=True)
    b = tg.ones(3, requires_grad=True)
    y = x + b
    y.grad_fn.register_hook(lambda gi, go: seen.append([g.shape for g in gi]))
    y.sum().backward()
    assert seen == [[(2, 3), (3,)]] and _vals(b.grad) == [2.0, 2.0, 2.0]


def test_accumulate_grad_hooks_and_post_accumulate_hook_order(executor):
    calls = []
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    acc = (a * 1).grad_fn.next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad"
    a.register_hook(lambda g: calls.append(("leaf", _vals(g))) or g * 10)
    acc.register_prehook(lambda go: calls.append(("accpre", [_vals(g) for g in go])))
    acc.register_hook(lambda gi, go: calls.append(("accpost", gi, [_vals(g) for g in go])))
    a.register_post_accumulate_grad_hook(lambda t: calls.append(("postacc", _vals(t.grad))))
    y = (a * a).sum()
    tg.autograd.grad(y, a, retain_graph=True)   # grad(): only the tensor hook runs
    assert calls == [("leaf", [2.0, 4.0])]
    calls.clear()
    y.backward()
    assert calls == [("leaf", [2.0, 4.0]), ("accpre", [[20.0, 40.0]]), ("postacc", [20.0, 40.0]),
                     ("accpost", (), [[20.0, 40.0]])]


def test_node_metadata_persists():
    x = tg.tensor([1.0], requires_grad=True)
    y = x.exp()
    assert y.grad_fn.metadata == {}
    y.grad_fn.metadata["tag"] = 7
    assert y.grad_fn.metadata == {"tag": 7}
    acc = y.grad_fn.next_functions[0][0]
    acc.metadata["leaf"] = True
    assert acc.metadata == {"leaf": True}


# ---- multi-grad hooks ------------------------------------------------------------------------

def test_multi_grad_hook_any_mode_fires_once_with_the_first_grad(executor):
    seen = []
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = tg.tensor([3.0, 4.0], requires_grad=True)
    c = a * b
    tg.autograd.graph.register_multi_grad_hook((a, b, c), lambda g: seen.append(_vals(g)),
                                               mode="any")
    c.sum().backward()
    assert seen == [[1.0, 1.0]]   # c's gradient comes first (torch 2.13)


def test_multi_grad_hook_ordering_and_removal(executor):
    calls = []
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: calls.append(("y", _vals(g))))
    h = tg.autograd.graph.register_multi_grad_hook(
        (x, y), lambda gs: calls.append(("multi", [_vals(g) for g in gs])))
    x.register_hook(lambda g: calls.append(("x", _vals(g))))
    (y * y).sum().backward(retain_graph=True)
    # torch 2.13: y's hook, then x's hooks in registration order (multi before x's own)
    assert calls == [("y", [4.0, 8.0]), ("multi", [[8.0, 16.0], [4.0, 8.0]]), ("x", [8.0, 16.0])]
    h.remove()
    calls.clear()
    (y * y).sum().backward()
    assert calls == [("y", [4.0, 8.0]), ("x", [8.0, 16.0])]


def test_multi_grad_hook_bad_mode():
    with pytest.raises(ValueError, match="mode"):
        tg.autograd.graph.register_multi_grad_hook((tg.ones(1, requires_grad=True),),
                                                   lambda g: None, mode="some")


def test_node_hooks_see_only_differentiable_outputs(executor):
    # torch 2.13: max(x, 0)'s node hands its pre-hooks (tensor(1.),): the indices are no gradient
    seen = []
    x = tg.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values = tg.max(x, 0)[0]
    values.grad_fn.register_prehook(lambda go: seen.append([_vals(g) for g in go]))
    values.backward()
    assert seen == [[1.0]] and _vals(x.grad) == [1.0, 0.0, 0.0]


def test_hook_between_fused_elementwise_chains(executor):
    # more than one interpreter row block (65536 elements): fusion regions on both sides of
    # the hook's host call
    rng = np.random.default_rng(0)
    xv = rng.uniform(-1.0, 1.0, (260, 260))
    x = tg.tensor(xv, requires_grad=True)
    y = (x * 0.5).exp()
    y.register_hook(lambda g: g * 2)
    ((y * 3 + 1).tanh() * y).sum().backward()
    yv = np.exp(xv * 0.5)
    t = np.tanh(yv * 3 + 1)
    np.testing.assert_allclose(x.grad.numpy(), 2 * ((1 - t ** 2) * 3 * yv + t) * 0.5 * yv,
                               rtol=1e-12)
