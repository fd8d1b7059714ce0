"""The op facts other layers read live in the declarations (`OpDef` fields): autocast class
per device type, profiler name, cost, fusion role, the write-back rule of a view.  Each is
validated when the op is declared, and the layers read them from the registry."""
import numpy as np
import pytest

import tracegrad as tg
from tracegrad.autograd import profiler
from tracegrad.ir import IRError
from tracegrad.ir.registry import (AUTOCAST_FP32, AUTOCAST_LOWER, REGISTRY, VIEW, CompositeDef,
                                   Cost, Fusion, NONDIFF, defcomposite, defop)

_ok = dict(infer=lambda types: types[0], kernel=lambda xp, x: x, vjp=NONDIFF)


@pytest.mark.parametrize("kw,match", [
    ({"autocast": {"tpu": AUTOCAST_LOWER}}, "autocast maps a device type"),
    ({"autocast": {"cpu": "bf16"}}, "autocast maps a device type"),
    ({"cost": ("matmul", len)}, "cost must be a Cost"),
    ({"cost": Cost("matmul", 3)}, "cost must be a Cost"),
    ({"fusion": "ew"}, "fusion must be a Fusion or None"),
    ({"view_inverse": lambda ops, parent, child: child}, "only a VIEW op has one"),
    ({"simplify": "identity"}, "simplify must be a rule"),
])
def test_bad_facts_are_rejected_at_declaration(kw, match):
    with pytest.raises(IRError, match=match):
        defop("test_op_facts_probe", "input", **_ok, **kw)
    assert "test_op_facts_probe" not in REGISTRY


@pytest.mark.parametrize("kw,match", [
    ({"autocast": {"tpu": AUTOCAST_LOWER}}, "autocast maps a device type"),
    ({"autocast": {"cuda": "half"}}, "autocast maps a device type"),
    ({"cost": ("matmul", len)}, "cost must be a Cost"),
])
def test_bad_composite_facts_are_rejected_at_declaration(kw, match):
    with pytest.raises(IRError, match=match):
        defcomposite("test_op_facts_probe", "input: Tensor", lambda ops, x: x, **kw)
    assert "test_op_facts_probe" not in REGISTRY


def test_composites_declare_their_facts():
    # a composite's own autocast class, cost and profiler name (not its inner ops')
    for name in ("matmul", "linear", "conv2d", "scaled_dot_product_attention"):
        assert isinstance(REGISTRY[name], CompositeDef)
        assert REGISTRY[name].autocast == {"cpu": AUTOCAST_LOWER, "cuda": AUTOCAST_LOWER}, name
    assert REGISTRY["cross_entropy"].autocast == {"cpu": AUTOCAST_FP32, "cuda": AUTOCAST_FP32}
    assert REGISTRY["rsqrt"].autocast == {"cuda": AUTOCAST_FP32}
    assert REGISTRY["linalg_solve"].cost.kind == "linalg"
    assert REGISTRY["linalg_norm"].cost is REGISTRY["linalg_matrix_norm"].cost is not None
    assert REGISTRY["isclose"].autocast == {} and REGISTRY["isclose"].aten_name == "aten::isclose"


def test_declared_facts():
    assert REGISTRY["matmul"].autocast == {"cpu": AUTOCAST_LOWER, "cuda": AUTOCAST_LOWER}
    assert REGISTRY["softmax"].autocast == {"cuda": AUTOCAST_FP32}   # not on the CPU list
    assert REGISTRY["mul"].aten_name == "aten::mul" == profiler.aten_name("mul")
    assert REGISTRY["batched_matmul"].aten_name == "aten::matmul"
    assert REGISTRY["conv"].cost.kind == "conv" and REGISTRY["add"].cost is None
    # fusion: a non-random elementwise op by default; the tag and the random draws never
    assert REGISTRY["add"].fusion is Fusion.ELEMENTWISE
    assert REGISTRY["checkpoint_name"].fusion is None and REGISTRY["random"].fusion is None
    assert REGISTRY["sum"].fusion is Fusion.REDUCE_SUM
    assert REGISTRY["amax"].fusion is Fusion.REDUCE_MAX
    assert REGISTRY["expand"].fusion is Fusion.BROADCAST
    for name, op in REGISTRY.items():
        assert op.view_inverse is None or op.flags & VIEW, name
        assert op.fusion is None or isinstance(op.fusion, Fusion), name


def test_view_inverse_writes_back_through_views():
    """Each declared view_inverse, through an in-place write of the view (torch's values)."""
    z = tg.tensor(np.array([1 + 2j, 3 - 1j]))
    z.real.mul_(2)
    z.imag.add_(1)
    np.testing.assert_allclose(z.numpy(), [2 + 3j, 6 + 0j])
    x = tg.arange(6, dtype=tg.float64)
    x.reshape(2, 3).permute(1, 0)[0].fill_(-1)      # reshape, permute, slice
    np.testing.assert_allclose(x.numpy(), [-1, 1, 2, -1, 4, 5])
    m = tg.zeros(2, 2)
    m.diagonal().add_(1)
    np.testing.assert_allclose(m.numpy(), np.eye(2))
    with pytest.raises(RuntimeError, match="expanded view"):
        tg.zeros(1).expand(3).add_(1)


def test_simplify_rules_are_declared_by_their_ops():
    """passes/simplify.py keys no rule by op name: each op's algebra is its declaration's."""
    declared = {name for name, op in REGISTRY.items() if getattr(op, "simplify", None)}
    assert {"add", "sub", "mul", "div", "neg", "reshape", "permute", "expand", "convert",
            "slice", "sum"} <= declared
    assert "rsub" not in declared and "pow" not in declared   # 0 - x and x ** 1: no rule


def test_an_error_inside_a_decomposition_names_the_op_the_user_called():
    a, b = tg.ones(3, 4), tg.ones(5)
    with pytest.raises(ValueError) as info:
        tg.floor_divide(a, b)     # decomposes into fmod, sub, div: fmod's broadcast fails
    msg = str(info.value)
    assert msg.startswith("floor_divide: ") and "f32[3,4]" in msg and "f32[5]" in msg
    assert "test_op_facts.py" in msg   # the user's line, once
    assert msg.count("\n  at ") == 1
