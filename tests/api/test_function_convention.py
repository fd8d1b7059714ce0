"""torch.autograd.Function's calling convention (issue 14): one gradient per forward output,
``setup_context`` with keywords, ``vjp``, None gradients, materialization, non-differentiable
outputs, ``once_differentiable``, ``needs_input_grad``, forward-mode ``jvp``.

Every expected value and message was printed by the same program under torch 2.13.
"""
import pytest

import tracegrad as tg
import tracegrad.autograd.forward_ad as fwAD
from tracegrad.autograd import Function
from tracegrad.autograd.function import once_differentiable


def _l(t):
    return None if t is None else t.tolist()


def test_non_tensor_and_none_outputs_get_one_gradient_each(executor):
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return 1, x * 2, None, x * 3

        @staticmethod
        def backward(ctx, *g):
            seen.append([_l(t) for t in g])
            return g[1] * 2 + g[3] * 3

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    o = F.apply(x)
    assert o[0] == 1 and o[2] is None and o[1].grad_fn.name() == "FBackward"
    o[1].sum().backward()
    # torch 2.13: [None, [1.0, 1.0], None, [0.0, 0.0]], x.grad [2.0, 2.0]
    assert seen == [[None, [1.0, 1.0], None, [0.0, 0.0]]] and x.grad.tolist() == [2.0, 2.0]
    x.grad = None
    o = F.apply(x)
    (o[1].sum() + o[3].sum()).backward()
    assert seen[1] == [None, [1.0, 1.0], None, [1.0, 1.0]]   # torch 2.13
    assert x.grad.tolist() == [5.0, 5.0]                     # torch 2.13


def test_setup_context_with_keyword_arguments_and_several_outputs():
    class F(Function):
        @staticmethod
        def forward(x, scale=2.0):
            return x * scale, x.detach() + 1

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.seen = (len(inputs), [type(i).__name__ for i in inputs], len(output))
            ctx.scale = inputs[1]
            ctx.mark_non_differentiable(output[1])

        @staticmethod
        def backward(ctx, ga, gb):
            ctx.gb = gb.tolist()
            return ga * ctx.scale, None

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    a, b = F.apply(x, scale=3.0)
    assert a.grad_fn.seen == (2, ["Tensor", "float"], 2) and b.requires_grad is False
    ctx = a.grad_fn
    a.sum().backward()
    assert ctx.gb == [0.0, 0.0] and x.grad.tolist() == [3.0, 3.0]   # torch 2.13
    # defaults are bound too: setup_context sees inputs of length 2 without the keyword
    assert F.apply(x)[0].grad_fn.seen[0] == 2


def test_setup_context_forward_with_keyword_only_parameter_raises_as_torch():
    class F(Function):
        @staticmethod
        def forward(x, *, scale=1.0):
            return x * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError) as e:
        F.apply(tg.ones(2, requires_grad=True))
    assert str(e.value) == "forward() got an unexpected keyword argument 'scale'"   # torch 2.13


def test_function_with_only_vjp(executor):
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def vjp(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    F.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]   # torch 2.13


def test_both_backward_and_vjp_raise_as_torch():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def vjp(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp' for a custom "
                                           "Function is not allowed"):   # torch 2.13
        F.apply(tg.ones(2, requires_grad=True)).sum().backward()


def test_backward_returning_none_leaves_grad_none(executor):
    class F(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g, None

    class G(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return None

    for _ in range(3):   # the "auto" executor's third run is on jax
        x = tg.tensor([1.0, 2.0], requires_grad=True)
        y = tg.tensor([1.0, 2.0], requires_grad=True)
        F.apply(x, y).sum().backward()
        assert x.grad.tolist() == [1.0, 1.0] and y.grad is None   # torch 2.13
        G.apply(x).sum().backward()
        assert x.grad.tolist() == [1.0, 1.0]                      # torch 2.13: unchanged
        x2 = tg.tensor([1.0, 2.0], requires_grad=True)
        (G.apply(x2).sum() + x2.sum()).backward()
        assert x2.grad.tolist() == [1.0, 1.0]                     # torch 2.13
        x3 = tg.tensor([1.0, 2.0], requires_grad=True)
        G.apply(x3 * 3).sum().backward()   # through a built-in node: still no gradient
        assert x3.grad is None
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        tg.autograd.grad(G.apply(x).sum(), x)
    assert tg.autograd.grad(G.apply(x).sum(), x, allow_unused=True) == (None,)
    g, = tg.autograd.grad(G.apply(x).sum(), x, create_graph=True, allow_unused=True)
    assert g is None


def test_set_materialize_grads_false(executor):
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x.clone(), x.clone()

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            return g1 if g1 is not None else g2

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    a, _ = F.apply(x)
    a.sum().backward()
    assert seen == [(False, True)] and x.grad.tolist() == [1.0, 1.0]   # torch 2.13


def test_mark_non_differentiable_integer_output_gets_zeros_unless_told_otherwise():
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, x, materialize):
            v, i = x.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            if not materialize:
                ctx._materialize_non_diff_grads = False
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            seen.append(_l(gi))
            i, = ctx.saved_tensors
            r = tg.zeros_like(gv)
            r[i] = gv
            return r, None

    for materialize, expected in ((True, [0, 0, 0]), (False, None)):   # torch 2.13
        x = tg.tensor([3.0, 1.0, 2.0], requires_grad=True)
        v, i = F.apply(x, materialize)
        assert (v.requires_grad, i.requires_grad, i.grad_fn) == (True, False, None)
        (v * tg.tensor([1.0, 2.0, 3.0])).sum().backward()
        assert seen[-1] == expected and x.grad.tolist() == [3.0, 1.0, 2.0]   # torch 2.13


def test_mark_non_differentiable_float_output():
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, x):
            a, b = x * 2, x * 3
            ctx.mark_non_differentiable(b)
            return a, b

        @staticmethod
        def backward(ctx, ga, gb):
            seen.append((_l(ga), _l(gb)))
            return ga * 2

    x = tg.tensor([3.0, 1.0], requires_grad=True)
    a, b = F.apply(x)
    assert (b.requires_grad, b.grad_fn) == (False, None)
    a.sum().backward()
    assert seen == [([1.0, 1.0], [0.0, 0.0])] and x.grad.tolist() == [2.0, 2.0]   # torch 2.13
    with pytest.raises(RuntimeError) as e:
        b.sum().backward()
    # torch 2.13
    # torch 2.13's words, after the op the user called and before the user's line (issue 18)
    assert str(e.value).startswith("backward: element 0 of tensors does not require grad and "
                                   "does not have a grad_fn")


def test_once_differentiable_runs_without_grad_and_cuts_the_graph():
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            seen.append((tg.is_grad_enabled(), g.requires_grad))
            return 2 * x * g

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    g, = tg.autograd.grad(F.apply(x).sum(), x, create_graph=True)
    # torch 2.13: (False, False); [2.0, 4.0] False None
    assert seen == [(False, False)]
    assert (g.tolist(), g.requires_grad, g.grad_fn) == ([2.0, 4.0], False, None)
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        g.sum().backward()


def test_needs_input_grad_in_forward_backward_and_under_no_grad():
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, x, y, k):
            seen.append(("fwd", ctx.needs_input_grad))
            return x * y * k

        @staticmethod
        def backward(ctx, g):
            seen.append(("bw", ctx.needs_input_grad))
            return g, g, None

    x, y = tg.tensor([1.0], requires_grad=True), tg.tensor([2.0])
    F.apply(x, y, 3).sum().backward()
    with tg.no_grad():
        r = F.apply(x, y, 3)
    # torch 2.13: needs_input_grad is the inputs' requires_grad, under no_grad too
    assert seen == [("fwd", (True, False, False)), ("bw", (True, False, False)),
                    ("fwd", (True, False, False))]
    assert r.requires_grad is False and r.grad_fn is None


def test_list_output_is_not_a_tuple_of_outputs():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return [x * 2, x * 3]

        @staticmethod
        def backward(ctx, g):
            return g

    o = F.apply(tg.tensor([3.0, 1.0], requires_grad=True))
    assert type(o) is list and [t.requires_grad for t in o] == [False, False]   # torch 2.13


def test_forward_mode_jvp_of_a_function():
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_forward(x, y)
            return x * y, x + y

        @staticmethod
        def jvp(ctx, tx, ty):
            x, y = ctx.saved_tensors
            seen.append((_l(tx), _l(ty)))
            return tx * y + x * ty, tx + ty

        @staticmethod
        def backward(ctx, ga, gb):
            return ga, gb

    class S(Function):
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def jvp(ctx, tx):
            x, = ctx.saved_tensors
            return (tx * x.cos(),)   # a one-element tuple for one output, as torch allows

    x, y = tg.tensor([1.0, 2.0]), tg.tensor([3.0, 4.0])
    with fwAD.dual_level():
        a, b = F.apply(fwAD.make_dual(x, tg.tensor([1.0, 0.0])), y)
        assert fwAD.unpack_dual(a).tangent.tolist() == [3.0, 0.0]   # torch 2.13
        assert fwAD.unpack_dual(b).tangent.tolist() == [1.0, 0.0]   # torch 2.13
        s = S.apply(fwAD.make_dual(x, tg.tensor([1.0, 1.0])))
        t = [round(v, 5) for v in fwAD.unpack_dual(s).tangent.tolist()]
    assert seen == [([1.0, 0.0], [0.0, 0.0])]   # torch 2.13: zeros for y, which has none
    assert t == [0.5403, -0.41615]               # torch 2.13


def test_a_hooked_leaf_that_gets_only_a_none_gradient(executor):
    class G(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = tg.tensor([3.0, 4.0], requires_grad=True)
    seen = []
    o = G.apply(x, y)
    acc = o.grad_fn.next_functions[1][0]
    acc.register_prehook(lambda g: seen.append(("pre", g)))
    acc.register_hook(lambda gi, go: seen.append(("post", gi, go)))
    y.register_hook(lambda g: seen.append(("y", g)))
    y.register_post_accumulate_grad_hook(lambda p: seen.append("y_post"))
    x.register_post_accumulate_grad_hook(lambda p: seen.append("x_post"))
    o.sum().backward()
    # torch 2.13: AccumulateGrad runs on the undefined gradient: hooks see None, no .grad
    assert seen == ["x_post", ("y", None), ("pre", (None,)), "y_post", ("post", (), (None,))]
    assert x.grad.tolist() == [2.0, 2.0] and y.grad is None
    seen.clear()
    gx, gy = tg.autograd.grad(G.apply(x, y).sum(), [x, y], allow_unused=True)
    assert gx.tolist() == [2.0, 2.0] and gy is None and seen == [("y", None)]   # torch 2.13
