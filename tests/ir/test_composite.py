"""CompositeDef / defcomposite: declarations checked at registration, tensor parameters kept
apart from attributes, and a composite that runs eagerly, traced and in a Builder."""
import contextlib

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.dispatch.frontend import EAGER
from tracegrad.ir import Builder, Graph, TensorType, types as T
from tracegrad.ir.errors import IRError
from tracegrad.ir.registry import REGISTRY, REQUIRED, CompositeDef, OpDef, defcomposite, defop


def _scaled_add(ops, input, other, alpha=1.0, weight=None):
    """input + alpha * other, times weight when given."""
    out = ops.add(input, ops.mul(other, alpha))
    return out if weight is None else ops.mul(out, weight)


@contextlib.contextmanager
def _registered(name, params, decomp, **kw):
    op = defcomposite(name, params, decomp, **kw)
    try:
        yield op
    finally:
        del REGISTRY[name]


SPEC = "input: Tensor, other: Tensor, alpha=1.0, weight: Tensor | None = None"


def test_declaration_keeps_tensors_apart_from_attributes():
    with _registered("scaled_add_t", SPEC, _scaled_add) as op:
        assert isinstance(op, CompositeDef) and isinstance(op, OpDef)
        assert op.inputs == ("input", "other")
        assert op.attrs == (("alpha", 1.0),)          # plain data only
        assert op.tensor_params == ("input", "other", "weight")
        assert op.trailing == (("alpha", 1.0), ("weight", None))
        assert op.signature == SPEC
        assert [p.name for p in op.params] == ["input", "other", "alpha", "weight"]
        assert op.params[3].accepts == {"Tensor", "None"} and op.params[3].is_tensor
        assert not op.params[2].is_tensor


def test_composite_runs_eagerly_with_a_tensor_parameter_and_its_gradient():
    with _registered("scaled_add_e", SPEC, _scaled_add):
        x = tg.tensor([1.0, 2.0], requires_grad=True)
        y = tg.tensor([3.0, 4.0])
        w = tg.tensor([2.0, 0.5], requires_grad=True)
        out = EAGER.call("scaled_add_e", x, y, 2.0, weight=w)
        np.testing.assert_allclose(out.detach().numpy(), [14.0, 5.0])
        out.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [2.0, 0.5])
        np.testing.assert_allclose(w.grad.numpy(), [7.0, 10.0])
        # the decomposition's last node takes the composite's torch-style name
        assert out.grad_fn.name() == "ScaledAddEBackward0"
        np.testing.assert_allclose(EAGER.call("scaled_add_e", x, y).detach().numpy(), [4.0, 6.0])


def test_composite_in_a_builder_emits_only_primitives():
    with _registered("scaled_add_b", SPEC, _scaled_add):
        g = Graph("f")
        b = Builder(g)
        x = g.add_input(TensorType((2,), T.float32))
        w = g.add_input(TensorType((2,), T.float32))
        out = b.call("scaled_add_b", x, x, 3.0, w)
        assert out.type == TensorType((2,), T.float32)
        assert [n.op for n in g.nodes] == ["full", "mul", "add", "mul"]   # full: the scalar 3.0


def test_binding_errors_are_torchs():
    with _registered("scaled_add_x", SPEC, _scaled_add):
        x = tg.tensor([1.0])
        with pytest.raises(TypeError, match=r"missing required argument 'other'"):
            EAGER.call("scaled_add_x", x)
        with pytest.raises(TypeError, match=r"takes at most 4 arguments \(5 given\)"):
            EAGER.call("scaled_add_x", x, x, 1.0, None, 7)
        with pytest.raises(TypeError, match=r"multiple values for argument 'alpha'"):
            EAGER.call("scaled_add_x", x, x, 1.0, alpha=2.0)
        with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['beta'\]"):
            EAGER.call("scaled_add_x", x, x, beta=1.0)


@pytest.mark.parametrize("params, decomp, message", [
    ("input: Tensor, alpha=1.0", lambda ops, x, beta=1.0: x, "cannot take the declared"),
    ("input: Tensor, alpha=1.0", lambda ops, x, alpha=2.0: x, "alpha defaults to 1.0"),
    ("input: Tensor, alpha=", lambda ops, x, alpha: x, "not a Python parameter list"),
    ("input: Tensor, alpha=math.pi", lambda ops, x, alpha: x, "must be a literal"),
    ("input: Tensor, w: Tensor = 1", lambda ops, x, w: x, "must be None"),
    ("input: Tensor, w: Array", lambda ops, x, w: x, "annotation declares a tensor"),
    ("input: Tensor, **kw", lambda ops, x, **kw: x, "'/' and '\\*\\*'"),
    ("dim, input: Tensor", lambda ops, d, x: x, "no tensor input first"),
    ("x: Tensor, *rest: Tensor", lambda ops, *r: r, "variadic op takes its tensor list first"),
    ("*xs, dim=0", lambda ops, *xs, dim=0: xs, "must be annotated Tensor"),
    ("input: Tensor", "not a function", "decomp must be a function"),
])
def test_malformed_declarations_are_rejected_at_registration(params, decomp, message):
    with pytest.raises(IRError, match=message):
        defcomposite("bad_composite", params, decomp)
    assert "bad_composite" not in REGISTRY


def test_defop_refuses_a_decomposition_and_duplicates():
    with pytest.raises(IRError, match="declared with defcomposite"):
        defop("bad_composite", "input", decomp=lambda ops, x: x)
    with pytest.raises(IRError, match="declared twice"):
        defcomposite("layer_norm", "input: Tensor", lambda ops, x: x)


def test_variadic_composite():
    op = REGISTRY["stack"]
    assert isinstance(op, CompositeDef) and op.variadic and op.inputs == ("*tensors",)
    assert op.signature == "*tensors: Tensor, dim=0"
    out = tg.stack([tg.tensor([1.0]), tg.tensor([2.0])], dim=1)
    np.testing.assert_allclose(out.numpy(), [[1.0, 2.0]])


# every registry op that used to carry a tensor among its attributes declares it as a tensor
@pytest.mark.parametrize("name, tensors", [
    ("layer_norm", ("input", "weight", "bias")),
    ("index_select", ("input", "index")),
    ("scatter", ("input", "index", "src", "value")),
    ("scatter_add", ("input", "index", "src")),
    ("gather", ("input", "index")),
    ("index_add", ("input", "index", "source")),
    ("linear", ("input", "weight", "bias")),
    ("conv2d", ("input", "weight", "bias")),
    ("batch_norm", ("input", "running_mean", "running_var", "weight", "bias")),
    ("cross_entropy", ("input", "target", "weight")),
    ("binary_cross_entropy_with_logits", ("input", "target", "weight", "pos_weight")),
    ("scaled_dot_product_attention", ("query", "key", "value", "attn_mask")),
    ("clamp", ("input", "min", "max")),
    ("masked_fill", ("input", "mask", "value")),
])
def test_tensor_parameters_are_declared(name, tensors):
    op = REGISTRY[name]
    assert isinstance(op, CompositeDef)
    assert op.tensor_params == tensors
    assert not set(tensors) & {a for a, _ in op.attrs}


def test_every_decomposition_is_a_composite_declaration():
    composites = [op for op in REGISTRY.values() if op.decomp is not None]
    assert len(composites) >= 83
    assert all(isinstance(op, CompositeDef) for op in composites)
    for op in composites:   # attributes are the non-tensor parameters, in call order
        assert [a for a, _ in op.attrs] == [p.name for p in op.params if not p.is_tensor]
        assert all(d is REQUIRED or not isinstance(d, tg.Tensor) for _, d in op.attrs)
