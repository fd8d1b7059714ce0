"""Custom differentiable ops: tg.autograd.Function (torch.autograd.Function).

A Function's backward is one host call in the backward program (split there
on jax), or, when backward runs on tensors (create_graph, tg.compile), is
called on those tensors and so recorded / inlined.  Both executors run every
behaviour; expected values and messages are torch 2.13's (checked by hand)
or the seeds'.
"""
import numpy as np
import pytest

import tracegrad as tg
from tracegrad.autograd import Function, engine, hooks
from tracegrad.autograd.function import once_differentiable


def _vals(t):
    return np.asarray(t.detach().numpy()).tolist()


class Exp(Function):
    """The seeds' example (seed 000 and 004)."""

    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


def test_seed_exp_function(executor):
    x = tg.tensor([0.0, 1.0, -1.0], requires_grad=True)
    output = Exp.apply(x)        # "Use it by calling the apply method"
    np.testing.assert_allclose(_vals(output), np.exp([0.0, 1.0, -1.0]), rtol=1e-6)
    assert output.grad_fn.name() == "ExpBackward"
    assert type(output.grad_fn).__name__ == "ExpBackward"
    assert output.grad_fn.needs_input_grad == (True,)      # seed 004: ctx.needs_input_grad
    assert isinstance(output.grad_fn, tg.autograd.graph.Node)
    assert output.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    (output * 2).sum().backward()
    np.testing.assert_allclose(_vals(x.grad), 2 * np.exp([0.0, 1.0, -1.0]), rtol=1e-6)
    if executor == "jax":   # the backward program is split at the Function's host call
        prog = next(p for p in reversed(engine._cache.values()) if p.host)
        assert any(isinstance(s, hooks.Segment) and s._exe._lowered is not None for s in prog._steps)


def test_needs_input_grad_and_non_tensor_arguments(executor):
    seen = []

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k, y):
            ctx.k = k
            ctx.save_for_backward(x, y)
            return x * k + y

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            return g * ctx.k, None, (g if ctx.needs_input_grad[2] else None)

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = tg.tensor([3.0, 4.0])
    Scale.apply(x, 3.0, y).sum().backward()
    assert seen == [(True, False, False)] and _vals(x.grad) == [3.0, 3.0] and y.grad is None


def test_setup_context_form(executor):
    class SC(Function):
        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.k = k
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * ctx.k, None

    a = tg.tensor([1.0, 2.0], requires_grad=True)
    y = SC.apply(a, 4.0)
    # torch 2.13: tensor([4., 8.], grad_fn=<SCBackward>), needs_input_grad (True, False)
    assert repr(y) == "tensor([4., 8.], grad_fn=<SCBackward>)"
    assert y.grad_fn.needs_input_grad == (True, False)
    y.sum().backward()
    assert _vals(a.grad) == [4.0, 4.0]


def test_apply_binds_keyword_arguments(executor):
    class KW(Function):
        @staticmethod
        def forward(ctx, x, scale=1.0):
            ctx.scale = scale
            return x * scale

        @staticmethod
        def backward(ctx, g):
            return g * ctx.scale, None

    a = tg.tensor([1.0, 2.0], requires_grad=True)
    KW.apply(a, scale=3.0).sum().backward()
    assert _vals(a.grad) == [3.0, 3.0]


def test_materialize_grads_false_gives_none(executor):
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            out = 0
            if g1 is not None:
                out = out + g1 * 2
            if g2 is not None:
                out = out + g2 * 3
            return out

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    a, b = Two.apply(x)
    a.sum().backward()
    # torch 2.13: backward gets (tensor([1., 1.]), None); x.grad == [2, 2]
    assert seen == [(False, True)] and _vals(x.grad) == [2.0, 2.0]


def test_unused_output_gets_zeros_by_default(executor):
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(_vals(g2))
            return g1 * 2 + g2 * 3

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    a, _ = Two.apply(x)
    a.sum().backward()
    assert seen == [[0.0, 0.0]] and _vals(x.grad) == [2.0, 2.0]


def test_mark_non_differentiable(executor):
    seen = []

    class SortLike(Function):
        @staticmethod
        def forward(ctx, x):
            idx = tg.tensor([1.0, 2.0, 0.0])
            ctx.mark_non_differentiable(idx)
            return x * 1, idx

        @staticmethod
        def backward(ctx, gv, gi):
            seen.append(_vals(gi))       # torch: always a zero gradient
            return gv

    x = tg.tensor([3.0, 1.0, 2.0], requires_grad=True)
    v, i = SortLike.apply(x)
    assert v.requires_grad and not i.requires_grad and i.grad_fn is None
    (v * tg.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert seen == [[0.0, 0.0, 0.0]] and _vals(x.grad) == [1.0, 2.0, 3.0]


def test_mark_dirty(executor):
    class Inplace(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    c = Inplace.apply(b)
    # torch 2.13: c is b, b.grad_fn is InplaceBackward, b._version == 2
    assert c is b and b.grad_fn.name() == "InplaceBackward" and b._version == 2
    assert repr(c) == "tensor([2., 4.], grad_fn=<InplaceBackward>)"
    c.sum().backward()
    assert _vals(a.grad) == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in "
                                           "an in-place operation"):
        Inplace.apply(a)


def test_returning_an_input_gives_a_new_tensor(executor):
    class Ident(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    a = tg.tensor([1.0, 2.0], requires_grad=True)
    y = Ident.apply(a)
    assert y is not a and y.grad_fn.name() == "IdentBackward"
    y.sum().backward()
    assert _vals(a.grad) == [5.0, 5.0]


def test_backward_result_checks(executor):
    a = tg.tensor([1.0, 2.0], requires_grad=True)

    def fn(backward):
        return type("Bad", (Function,), {"forward": staticmethod(lambda ctx, x, k: x * k),
                                         "backward": staticmethod(backward)})

    with pytest.raises(RuntimeError, match=r"function BadBackward returned an incorrect number "
                                           r"of gradients \(expected 2, got 1\)"):
        fn(lambda ctx, g: g).apply(a, 2).sum().backward()
    with pytest.raises(RuntimeError, match="returned a gradient different than None at position "
                                           "2, but the corresponding forward input was not a "
                                           "Variable"):
        fn(lambda ctx, g: (g, g)).apply(a, 2).sum().backward()
    with pytest.raises(RuntimeError, match=r"Function BadBackward returned an invalid gradient "
                                           r"at index 0 - got \[3\] but expected shape "
                                           r"compatible with \[2\]"):
        fn(lambda ctx, g: (tg.ones(3), None)).apply(a, 2).sum().backward()
    # a broadcastable gradient is summed to the input's shape (torch 2.13: tensor([3., 3.]))
    fn(lambda ctx, g: (tg.ones(3, 2), None)).apply(a, 2).sum().backward()
    assert _vals(a.grad) == [3.0, 3.0]


def test_double_backward_through_a_function(executor):
    x = tg.tensor([0.0, 1.0], requires_grad=True)
    (g,) = tg.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    assert g.grad_fn is not None
    np.testing.assert_allclose(_vals(g), np.exp([0.0, 1.0]), rtol=1e-6)
    g.sum().backward()                      # d/dx exp(x) = exp(x) again
    np.testing.assert_allclose(_vals(x.grad), np.exp([0.0, 1.0]), rtol=1e-6)


class Once(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g


def test_once_differentiable(executor):
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    Once.apply(a).sum().backward()
    assert _vals(a.grad) == [2.0, 4.0]
    # grad outputs that require grad: the result gets torch's error node
    v = tg.tensor([1.0, 1.0], requires_grad=True)
    (g,) = tg.autograd.grad(Once.apply(a), a, grad_outputs=v, create_graph=True)
    assert _vals(g) == [2.0, 4.0] and g.requires_grad and g.grad_fn.name() == "Error"
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was "
                                           "marked with @once_differentiable"):
        g.sum().backward()


def test_saved_tensors_are_freed_and_version_checked(executor):
    a = tg.tensor([0.0, 1.0], requires_grad=True)
    y = Exp.apply(a)
    y.sum().backward(retain_graph=True)
    y.sum().backward()                       # retained once: works twice
    np.testing.assert_allclose(_vals(a.grad), 2 * np.exp([0.0, 1.0]), rtol=1e-6)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()
    y = Exp.apply(a)
    y.add_(1)
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation "
                                           "has been modified by an inplace operation"):
        y.sum().backward()


def test_function_without_grad_records_nothing():
    x = tg.tensor([1.0], requires_grad=True)
    with tg.no_grad():
        y = Exp.apply(x)
    assert y.grad_fn is None and not y.requires_grad
    assert Exp.apply(tg.tensor([1.0])).grad_fn is None


def test_ctx_is_the_grad_fn_and_keeps_metadata():
    class Meta(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.metadata["made"] = "in forward"
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    y = Meta.apply(tg.tensor([1.0], requires_grad=True))
    assert y.grad_fn.metadata == {"made": "in forward"}


def test_function_is_inlined_in_a_compiled_step():
    w = tg.tensor([0.5, -1.0, 2.0], requires_grad=True)

    def step(x):
        loss = Exp.apply(w * x).sum()
        loss.backward()
        return loss

    x = tg.tensor([1.0, 2.0, 0.5])
    eager_loss = step(x).item()
    eager = _vals(w.grad)
    w.grad = None
    compiled = tg.compile(step)
    assert compiled(x).item() == pytest.approx(eager_loss, rel=1e-6)
    np.testing.assert_allclose(_vals(w.grad), eager, rtol=1e-6)
    np.testing.assert_allclose(eager, [1.0, 2.0, 0.5] * np.exp([0.5, -2.0, 1.0]), rtol=1e-6)
    # backward was traced into the compiled program: no host calls left
    assert not any(n.op == hooks.HOST for p in compiled.programs for n in p.forward.nodes)


def test_hooks_on_a_function_node(executor):
    calls = []
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = Exp.apply(x)
    y.grad_fn.register_prehook(lambda go: calls.append("pre") or (go[0] * 2,))
    y.grad_fn.register_hook(lambda gi, go: calls.append("post"))
    y.sum().backward()
    assert calls == ["pre", "post"]
    np.testing.assert_allclose(_vals(x.grad), 2 * np.exp([1.0, 2.0]), rtol=1e-6)


def test_legacy_call_raises():
    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        Exp()(tg.ones(1))
