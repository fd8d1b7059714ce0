"""tg.utils.checkpoint(..., use_reentrant=False): torch's default variant, built on
saved-tensor hooks (recompute on unpack), and checkpoint_sequential (issue 14).

Every expected value and message was printed by the same program under torch 2.13.
"""
import contextlib
import warnings

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.utils.checkpoint import (CheckpointError, checkpoint, checkpoint_sequential,
                                        set_checkpoint_early_stop)


def _r(t, n=5):
    return [round(v, n) for v in t.tolist()]


def test_recomputes_once_in_backward_and_matches_the_plain_gradient(executor):
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    w = tg.tensor([3.0, 4.0], requires_grad=True)
    calls = []

    def fn(a):
        calls.append(1)
        return (a * w).sin() * a

    y = checkpoint(fn, x, use_reentrant=False)
    assert len(calls) == 1 and y.grad_fn.name() == "MulBackward0"   # torch 2.13
    y.sum().backward()
    assert len(calls) == 2                                           # torch 2.13
    assert _r(x.grad) == [-2.82886, -0.17464] and _r(w.grad) == [-0.98999, -0.582]  # torch 2.13


def test_the_forward_saves_placeholders_not_tensors():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = checkpoint(lambda a: a.exp() * a, x, use_reentrant=False)
    packed = [p for p, _ in y.grad_fn.extra.packed.values()]   # mul saves both operands
    assert len(packed) == 2 and not any(isinstance(p, tg.Tensor) for p in packed)


def test_autograd_grad_works():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = checkpoint(lambda a: a.exp() * a, x, use_reentrant=False)
    g, = tg.autograd.grad(y.sum(), x)
    assert _r(g) == [5.43656, 22.16717]   # torch 2.13


def test_a_leaf_used_inside_and_outside_gets_one_hook_call_with_the_total():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    y = checkpoint(lambda a: a * a, x, use_reentrant=False)
    (y + x * 3).sum().backward()
    assert seen == [[5.0, 7.0]] and x.grad.tolist() == [5.0, 7.0]   # torch 2.13


def test_dict_tuple_nested_outputs_and_keyword_arguments():
    x = tg.tensor([1.0, 2.0], requires_grad=True)

    def fn(a, scale=1.0):
        return {"a": a.sin() * scale, "b": (a.cos(), [a * a, 7])}

    o = checkpoint(fn, x, use_reentrant=False, scale=2.0)
    assert type(o) is dict and type(o["b"]) is tuple and o["b"][1][1] == 7
    (o["a"].sum() + o["b"][0].sum() + o["b"][1][0].sum()).backward()
    assert _r(x.grad) == [2.23913, 2.25841]   # torch 2.13


def test_dropout_inside_draws_the_same_mask_on_recompute():
    x = tg.ones(8, requires_grad=True)

    def fn(a):
        return tg.nn.functional.dropout(a * 2, 0.5, training=True) * a

    tg.manual_seed(1)
    y = checkpoint(fn, x, use_reentrant=False)
    y.sum().backward()
    after_ckpt = tg.rand(2)
    g1 = x.grad.clone()
    x.grad = None
    tg.manual_seed(1)
    y2 = fn(x)
    y2.sum().backward()
    after_plain = tg.rand(2)
    # torch 2.13: True True, and the stream afterwards is the same as without checkpoint
    assert tg.equal(g1, x.grad) and tg.equal(y, y2) and tg.equal(after_ckpt, after_plain)


def test_preserve_rng_state_false_draws_a_new_mask():
    x = tg.ones(64, requires_grad=True)
    tg.manual_seed(1)
    y = checkpoint(lambda a: tg.nn.functional.dropout(a, 0.5) * a, x, use_reentrant=False,
                   preserve_rng_state=False)
    y.sum().backward()
    # the gradient is mask_recomputed * 2 / (1 - p) * ...: not the forward's mask any more
    assert not np.array_equal((x.grad.numpy() > 0), (y.detach().numpy() > 0))


def test_autocast_is_restored_on_recompute():
    x = tg.ones(2, 2, requires_grad=True)
    w = tg.ones(2, 2, requires_grad=True)
    seen = []

    def fn(a):
        r = a @ w
        seen.append(r.dtype)
        return r

    with tg.autocast("cpu", dtype=tg.bfloat16):
        y = checkpoint(fn, x, use_reentrant=False)
    y.float().sum().backward()
    # torch 2.13: [torch.bfloat16] (with early stop the recomputation stops inside matmul),
    # x.grad float32
    assert seen == [tg.bfloat16] and x.grad.dtype == tg.float32


def test_determinism_check_metadata_and_count():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    state = {"n": 0}

    def shape_changes(a):
        state["n"] += 1
        return a.sin() if state["n"] == 1 else a[:1].sin()

    y = checkpoint(shape_changes, x, use_reentrant=False)
    with pytest.raises(CheckpointError) as e:
        y.sum().backward()
    # torch 2.13 (its dtype prints as torch.float32)
    assert str(e.value).startswith(
        "torch.utils.checkpoint: Recomputed values for the following tensors have different "
        "metadata than during the forward pass.\ntensor at position 0:\nsaved metadata: "
        "{'shape': torch.Size([2]), 'dtype': ")
    assert "recomputed metadata: {'shape': torch.Size([1])" in str(e.value)
    assert isinstance(e.value, RuntimeError)

    def count_changes(a):
        state["n"] += 1
        return a.sin().cos() if state["n"] == 1 else a.sin() + 1

    for early in (True, False):
        state["n"] = 0
        with set_checkpoint_early_stop(early):
            y = checkpoint(count_changes, x, use_reentrant=False)
        with pytest.raises(CheckpointError) as e:
            y.sum().backward()
        assert str(e.value) == (   # torch 2.13 (before its debugging tip)
            "torch.utils.checkpoint: A different number of tensors was saved during the "
            "original forward and recomputation.\nNumber of tensors saved during forward: 2\n"
            "Number of tensors saved during recomputation: 1.")


def test_early_stop_stops_the_recomputation_after_the_last_saved_tensor():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    calls = []

    def fn(a):
        b = a.sin()
        calls.append("after sin")
        return b + 1

    checkpoint(fn, x, use_reentrant=False).sum().backward()
    assert calls == ["after sin"]                     # torch 2.13
    calls.clear()
    with set_checkpoint_early_stop(False):
        y = checkpoint(fn, x, use_reentrant=False)
    y.sum().backward()                                # the context is needed in forward only
    assert calls == ["after sin", "after sin"]        # torch 2.13
    calls.clear()
    checkpoint(fn, x, use_reentrant=False, early_stop=False).sum().backward()
    assert calls == ["after sin", "after sin"]        # torch 2.13


def test_each_backward_recomputes_with_retain_graph():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    calls = []

    def fn(a):
        calls.append(1)
        return a.exp()

    y = checkpoint(fn, x, use_reentrant=False)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert len(calls) == 3 and _r(x.grad, 4) == [5.4366, 14.7781]   # torch 2.13


def test_grad_inside_the_checkpointed_function():
    x = tg.tensor([1.0, 2.0], requires_grad=True)

    def fn(a):
        c = a.sin().cos()
        g, = tg.autograd.grad(c.sum(), a, create_graph=True)
        return g * a

    checkpoint(fn, x, use_reentrant=False).sum().backward()
    assert _r(x.grad) == [0.03003, 1.55061]   # torch 2.13


def test_inputs_without_grad_still_give_parameters_gradients():
    w = tg.tensor([3.0, 4.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # torch 2.13: no warning in the non-reentrant variant
        y = checkpoint(lambda a: (a * w).sin(), tg.ones(2), use_reentrant=False)
    y.sum().backward()
    assert _r(w.grad) == [-0.98999, -0.65364]   # torch 2.13


def test_context_fn_contexts_wrap_forward_and_recomputation():
    log = []

    @contextlib.contextmanager
    def cm(name):
        log.append("enter " + name)
        yield
        log.append("exit " + name)

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = checkpoint(lambda a: a.sin(), x, use_reentrant=False,
                   context_fn=lambda: (cm("fwd"), cm("re")))
    y.sum().backward()
    # torch 2.13: the early stop leaves the recomputation context by an exception
    assert log == ["enter fwd", "exit fwd", "enter re"]


def test_argument_errors_as_torch():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError) as e:
        checkpoint(lambda a, s=1: a * s, x, use_reentrant=True, s=2)
    assert str(e.value) == "Unexpected keyword arguments: s"   # torch 2.13
    with pytest.raises(ValueError) as e:
        checkpoint(lambda a: a, x, use_reentrant=True, context_fn=lambda: (None, None))
    # torch 2.13
    assert str(e.value) == ("Passing `context_fn` or `debug` is only supported when "
                            "use_reentrant=False.")
    with pytest.raises(ValueError) as e:
        checkpoint(lambda a: a * 2, x, use_reentrant=False, determinism_check="foo")
    # torch 2.13
    assert str(e.value) == "determinism_check should be one of ['default', 'none'], but got foo"
    with pytest.warns(UserWarning, match="torch.utils.checkpoint: the use_reentrant parameter "
                                         "should be passed explicitly"):   # torch 2.13
        checkpoint(lambda a: a * 2, x)


def test_reentrant_variant_still_works():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    y = checkpoint(lambda a: a * a, x, use_reentrant=True)
    (y + x * 3).sum().backward()
    assert seen == [[5.0, 7.0]] and x.grad.tolist() == [5.0, 7.0]   # torch 2.13


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_sequential_matches_the_plain_model(use_reentrant):
    tg.manual_seed(0)
    m = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.Tanh(), tg.nn.Linear(4, 4), tg.nn.Tanh(),
                         tg.nn.Linear(4, 2))
    x = tg.ones(2, 3, requires_grad=True)
    y = checkpoint_sequential(m, 2, x, use_reentrant=use_reentrant)
    y.sum().backward()
    g = x.grad.clone()
    wg = m[0].weight.grad.clone()
    x.grad = None
    m.zero_grad()
    m(x).sum().backward()
    assert tg.allclose(g, x.grad) and tg.allclose(wg, m[0].weight.grad)
    assert y.shape == (2, 2)
    with pytest.raises(ValueError) as e:
        checkpoint_sequential(m, 2, x, use_reentrant=False, foo=1)
    assert str(e.value) == "Unexpected keyword arguments: foo"   # torch 2.13


def test_nested_checkpoints_and_a_function_inside():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    calls = []

    def inner(a):
        calls.append("inner")
        return a.sin() * a

    def outer(a):
        calls.append("outer")
        return checkpoint(inner, a.exp(), use_reentrant=False).cos()

    checkpoint(outer, x, use_reentrant=False).sum().backward()
    assert calls == ["outer", "inner", "outer", "inner", "inner"]   # torch 2.13
    assert _r(x.grad, 3) == [5.05, -9.824]                          # torch 2.13: 5.05047, -9.82403

    class Sq(tg.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx, g):
            t, = ctx.saved_tensors
            return 2 * t * g

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    calls.clear()

    def fn(a):
        calls.append(1)
        return Sq.apply(a.sin())

    checkpoint(fn, x, use_reentrant=False).sum().backward()
    assert len(calls) == 2 and _r(x.grad) == [0.9093, -0.7568]   # torch 2.13
    with tg.no_grad():
        assert checkpoint(lambda a: a.sin(), x, use_reentrant=False).requires_grad is False


def test_an_input_modified_in_place_after_the_forward_raises():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    y = checkpoint(lambda t: t.sin(), a, use_reentrant=False)
    with tg.no_grad():
        a.mul_(2)
    # torch 2.13: "... modified by an inplace operation: [torch.FloatTensor [2]], which is
    # output 0 of Mul, is at version 1; expected version 0 instead. Hint: ..."
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[f32\[2\]\], "
                                           r"which is output 0 of MulBackward0, is at version 1; "
                                           r"expected version 0 instead"):
        y.sum().backward()
