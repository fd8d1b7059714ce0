"""tg.autograd.forward_ad: dual levels, make_dual / unpack_dual, tangents through eager ops,
views and in-place ops, custom Functions, forward-over-reverse, and the tangent programs.

torch values are hard-coded from torch 2.13 (torch.autograd.forward_ad on the same inputs).
"""
from __future__ import annotations

import numpy as np
import pytest

import tracegrad as tg
import tracegrad.autograd.forward_ad as fwAD
from tracegrad.ir.registry import get


def _np(t):
    return t.detach().numpy()


X = np.array([1.0, 2.0, 3.0])
T = np.array([1.0, 0.0, 0.5])


# ---- levels and duals ---------------------------------------------------------------------------
def test_dual_level_make_and_unpack():
    x, t = tg.tensor(X), tg.tensor(T)
    with fwAD.dual_level() as level:
        assert level == 0
        d = fwAD.make_dual(x, t)
        unpacked = fwAD.unpack_dual(d)
        assert type(unpacked).__name__ == "UnpackedDualTensor"
        assert unpacked._fields == ("primal", "tangent")
        assert unpacked.tangent is t                      # torch: the tangent given
        assert fwAD.unpack_dual(unpacked.primal).tangent is None
        np.testing.assert_array_equal(_np(unpacked.primal), X)
        assert fwAD.unpack_dual(x).tangent is None        # the original is not dual
        assert fwAD.unpack_dual(x).primal is x
        y = d.sin()
    assert fwAD.unpack_dual(d).tangent is None            # the level is gone: so are tangents
    assert fwAD.unpack_dual(y) == (y, None)


def test_make_dual_keeps_history_like_torch():
    x = tg.tensor(X, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, tg.tensor(T))
        assert d.grad_fn is not None and d.requires_grad    # torch: ViewBackward0
        (d * d).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * X)


def test_level_errors_are_torchs():
    x = tg.tensor(X)
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(x, tg.tensor(T))
    with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
        fwAD.exit_dual_level()
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match="not the last one that was created"):
            fwAD.exit_dual_level(level=1)
        d = fwAD.make_dual(x, tg.tensor(T))
        with pytest.raises(RuntimeError, match="already has a forward gradient at the same "
                                               "level 0"):
            fwAD.make_dual(d, tg.tensor(T))
        with pytest.raises(RuntimeError, match=r"Tensor is of size \[3\] while the given forward "
                                               r"gradient is of size \[2\]"):
            fwAD.make_dual(x, tg.ones(2, dtype=tg.float64))
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex, "
                                             "but got: int64"):
            fwAD.make_dual(tg.tensor([1, 2]), tg.tensor([1.0, 2.0]))
        with pytest.raises(ValueError, match="Expected tangent to be floating point"):
            fwAD.make_dual(x, tg.tensor([1, 2, 3]))
    level = fwAD.enter_dual_level()
    fwAD.exit_dual_level(level=level)


def test_enter_and_exit_functions():
    level = fwAD.enter_dual_level()
    try:
        d = fwAD.make_dual(tg.tensor(X), tg.tensor(T))
        np.testing.assert_allclose(_np(fwAD.unpack_dual(d.exp()).tangent), np.exp(X) * T)
    finally:
        fwAD.exit_dual_level(level=level)
    assert fwAD.unpack_dual(d).tangent is None


def test_tangent_converted_to_primal_dtype():
    with fwAD.dual_level():
        d = fwAD.make_dual(tg.tensor(X, dtype=tg.float32), tg.tensor(T))
        assert fwAD.unpack_dual(d).tangent.dtype is tg.float32


# ---- values -------------------------------------------------------------------------------------
def test_tangents_through_a_program_match_the_chain_rule():
    w = tg.tensor([[1.0, -1.0], [0.5, 2.0], [0.0, 1.0]], dtype=tg.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(tg.tensor(X), tg.tensor(T))
        h = (d.reshape(1, 3) @ w).tanh()
        y = (h * h).sum() + d.amax() / d.sum()
        _, ty = fwAD.unpack_dual(y)
    h0 = np.tanh(X @ w.numpy())
    dh = (1 - h0 ** 2) * (T @ w.numpy())
    # d/dt [max/sum]: the max is X[2], so (T[2] * sum - max * sum(T)) / sum^2
    expected = np.sum(2 * h0 * dh) + (T[2] * X.sum() - X.max() * T.sum()) / X.sum() ** 2
    np.testing.assert_allclose(_np(ty), expected, rtol=1e-12)


def test_tangents_propagate_under_no_grad():
    with fwAD.dual_level():
        d = fwAD.make_dual(tg.tensor(X), tg.tensor(T))
        with tg.no_grad():
            y = d.sin()
        # torch 2.13 gives tensor([ 0.5403, -0.0000, -0.4950])
        np.testing.assert_allclose(_np(fwAD.unpack_dual(y).tangent), [0.5403, -0.0, -0.4950],
                                   atol=1e-4)


def test_integer_and_boolean_results_have_no_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(tg.tensor(X), tg.tensor(T))
        values, indices = tg.sort(d)
        assert fwAD.unpack_dual(indices).tangent is None
        np.testing.assert_array_equal(_np(fwAD.unpack_dual(values).tangent), T)
        assert fwAD.unpack_dual(d.argmax()).tangent is None
        assert fwAD.unpack_dual(d > 1).tangent is None
        assert fwAD.unpack_dual(d.to(tg.int64)).tangent is None
        assert fwAD.unpack_dual(d.double()).tangent.dtype is tg.float64


def test_views_share_the_tangent_and_in_place_ops_update_it():
    with fwAD.dual_level():
        d = fwAD.make_dual(tg.tensor(X), tg.tensor(T))
        v = d[1:]
        np.testing.assert_array_equal(_np(fwAD.unpack_dual(v).tangent), T[1:])
        z = d.clone()
        z.mul_(2)      # torch 2.13: tangent([2., 0., 1.])
        np.testing.assert_array_equal(_np(fwAD.unpack_dual(z).tangent), [2.0, 0.0, 1.0])
        z.fill_(0)     # torch 2.13: tangent([0., 0., 0.])
        np.testing.assert_array_equal(_np(fwAD.unpack_dual(z).tangent), [0.0, 0.0, 0.0])
        w = tg.zeros(3, dtype=tg.float64)
        w.copy_(d)     # torch 2.13: tangent([1.0000, 0.0000, 0.5000])
        np.testing.assert_array_equal(_np(fwAD.unpack_dual(w).tangent), T)
        w = tg.zeros(3, dtype=tg.float64)
        w[1:] = d[:2]  # torch 2.13: tangent([0., 1., 0.])
        np.testing.assert_array_equal(_np(fwAD.unpack_dual(w).tangent), [0.0, 1.0, 0.0])
        u = d.clone()
        view = u[:2]
        u.add_(d)      # the live view is regenerated from the new value, tangent included
        np.testing.assert_array_equal(_np(fwAD.unpack_dual(view).tangent), 2 * T[:2])


def test_tangents_are_differentiable():
    x = tg.tensor(X, requires_grad=True)
    t = tg.tensor(T, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        tan = fwAD.unpack_dual((d * d * d).sum()).tangent     # 3 x^2 . t
        assert tan.grad_fn is not None
        gx, gt = tg.autograd.grad(tan, (x, t))
    np.testing.assert_allclose(gx.numpy(), 6 * X * T)
    np.testing.assert_allclose(gt.numpy(), 3 * X ** 2)


@pytest.mark.parametrize("create_graph", [False, True])
def test_forward_over_reverse_gives_hessian_vector_products(create_graph):
    # f = sum(x^2 sin x): grad = 2x sin x + x^2 cos x,
    # Hessian diagonal 2 sin x + 4x cos x - x^2 sin x
    x = tg.tensor(X, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, tg.tensor(T))
        y = (d.sin() * d * d).sum()
        (g,) = tg.autograd.grad(y, d, create_graph=create_graph)
        hv = fwAD.unpack_dual(g).tangent
    np.testing.assert_allclose(_np(g), 2 * X * np.sin(X) + X ** 2 * np.cos(X), rtol=1e-12)
    expected = (2 * np.sin(X) + 4 * X * np.cos(X) - X ** 2 * np.sin(X)) * T
    np.testing.assert_allclose(_np(hv), expected, rtol=1e-12)


# ---- custom Functions ---------------------------------------------------------------------------
class Scale(tg.autograd.Function):
    @staticmethod
    def forward(ctx, x, y, k):
        ctx.save_for_forward(x, y)
        ctx.save_for_backward(x, y)
        return x * y * k

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y * 2, g * x * 2, None

    @staticmethod
    def jvp(ctx, tx, ty, tk):
        x, y = ctx.saved_tensors
        assert tk is None                    # torch: None for a non-tensor argument
        return (tx * y + x * ty) * 2         # ty: zeros when y has no tangent (torch)


def test_custom_function_jvp():
    y = tg.tensor([3.0, 4.0, 5.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(tg.tensor(X), tg.tensor(T))
        out = Scale.apply(d, y, 2)
        np.testing.assert_allclose(_np(fwAD.unpack_dual(out).tangent), 2 * T * y.numpy())


def test_custom_function_without_jvp_raises_torchs_error():
    class NoJvp(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with fwAD.dual_level():
        d = fwAD.make_dual(tg.tensor(X), tg.tensor(T))
        with pytest.raises(NotImplementedError, match="You must implement the jvp function for "
                                                      "custom autograd.Function"):
            NoJvp.apply(d)
        np.testing.assert_array_equal(_np(NoJvp.apply(tg.tensor(X))), 2 * X)   # no dual: fine


# ---- tangent programs ---------------------------------------------------------------------------
F64 = tg.ir.types.TensorType((3,), tg.float64)
S64 = tg.ir.types.TensorType((), tg.float64)


@pytest.mark.parametrize("name,attrs,ins,outs,source", [
    ("mul", {}, (F64, F64), (F64,), "rule"),
    ("sum", {"dim": (0,), "keepdim": False}, (F64,), (S64,), "linear"),
    ("erf", {}, (F64,), (F64,), "elementwise"),
    ("amax", {"dim": (0,), "keepdim": False}, (F64,), (S64,), "transpose"),
])
def test_how_each_tangent_program_is_made(name, attrs, ins, outs, source):
    from tracegrad.ir import verify
    prog = fwAD.op_jvp(get(name), attrs, ins, outs, (True,) * len(ins))
    assert prog.source == source
    verify(prog.graph)
    assert [v.type for v in prog.graph.inputs] == list(ins) + list(outs) + list(ins)


def test_transposed_vjp_is_the_ops_jvp():
    """amax has no JVP rule: its program comes from transposing its VJP, and splits the tangent
    evenly among tied maxima, as torch's amax JVP does."""
    x = np.array([1.0, 3.0, 3.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(tg.tensor(x), tg.tensor([5.0, 1.0, 2.0]))
        np.testing.assert_allclose(_np(fwAD.unpack_dual(d.amax()).tangent), 1.5)


def test_jvp_graph_of_a_whole_program():
    from tracegrad.ir import Builder, Graph, verify
    from tracegrad.backends import interpreter
    g = Graph(name="f")
    x = g.add_input(F64)
    b = Builder(g)
    g.outputs = [b.sum(b.mul(b.exp(x), x), (0,), False), b.cos(x)]
    jg = fwAD.jvp_graph(g, [x])
    verify(jg)
    tx, ty = interpreter.run(jg, [X, T])
    np.testing.assert_allclose(tx, np.sum((np.exp(X) * X + np.exp(X)) * T), rtol=1e-12)
    np.testing.assert_allclose(ty, -np.sin(X) * T, rtol=1e-12)


def test_repr_shows_the_tangent_like_torch():
    with fwAD.dual_level():
        d = fwAD.make_dual(tg.tensor([1.0, 2.0]), tg.ones(2))
        # torch 2.13: tensor([1., 2.], tangent=tensor([1., 1.])) (plus its grad_fn, if any)
        assert repr(d) == "tensor([1., 2.], tangent=tensor([1., 1.]))"
    assert repr(d) == "tensor([1., 2.])"


def test_compiled_function_runs_eagerly_inside_a_dual_level():
    @tg.compile
    def f(x):
        return (x.sin() * x).sum()

    x = tg.tensor(X)
    np.testing.assert_allclose(f(x).numpy(), np.sum(np.sin(X) * X))
    with fwAD.dual_level():
        y = f(fwAD.make_dual(x, tg.tensor(T)))
        np.testing.assert_allclose(_np(fwAD.unpack_dual(y).tangent),
                                   np.sum((np.cos(X) * X + np.sin(X)) * T), rtol=1e-12)


def test_complex_tangents_are_the_holomorphic_derivative():
    """Complex ops use the transposed VJP (torch's VJPs conjugate): the tangent of exp is
    exp(z) t, not conj(exp(z)) t; |z| is not holomorphic: Re(conj(z) t) / |z|."""
    z = np.array([1 + 2j, -0.5 + 0.3j])
    t = np.array([0.2 - 1j, 1.5 + 0.5j])
    with fwAD.dual_level():
        d = fwAD.make_dual(tg.tensor(z), tg.tensor(t))
        np.testing.assert_allclose(_np(fwAD.unpack_dual(d.exp()).tangent), np.exp(z) * t)
        np.testing.assert_allclose(_np(fwAD.unpack_dual(d * d).tangent), 2 * z * t)
        np.testing.assert_allclose(_np(fwAD.unpack_dual(d.abs()).tangent),
                                   np.real(np.conj(z) * t) / np.abs(z))
