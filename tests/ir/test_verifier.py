"""The verifier rejects what a kernel would run wrongly: operand counts, slice bounds."""
import numpy as np
import pytest

from tracegrad.backends.interpreter import run as run_graph
from tracegrad.ir import IRError, parse
from tracegrad.ir.verifier import verify


def _program(node: str, inputs: str = "%0: f32[3], %1: f32[3]") -> str:
    return f"graph @g({inputs}) {{\n  {node}\n  return %2\n}}"


@pytest.mark.parametrize("node, message", [
    # issue 18: digamma(%0, %1) computed digamma of %1 and wrote into %0
    ("%2: f32[3] = digamma(%0, %1)", "digamma takes 1 operand(s) (input), got 2"),
    ("%2: f32[3] = add(%0)", "add takes 2 operand(s)"),
    ("%2: f32[3] = where(%0, %1)", "where takes 3 operand(s)"),
])
def test_operand_counts_are_checked_against_the_declaration(node, message):
    with pytest.raises(IRError, match=message.replace("(", r"\(").replace(")", r"\)")):
        verify(parse(_program(node)))


def test_slice_types_are_what_the_kernel_returns():
    # issue 18: stops past the end are clipped by the kernel, so the type must be clipped too
    bad = _program("%2: f32[3,3] = slice(%0) {starts=(1, 0), stops=(5, 3), steps=(1, 1)}",
                   "%0: f32[3,3]").replace("return %2", "return %2")
    with pytest.raises(IRError, match=r"inferred \['f32\[2,3\]'\]"):
        verify(parse(bad))
    good = parse(bad.replace("%2: f32[3,3] = slice", "%2: f32[2,3] = slice"))
    verify(good)
    x = np.arange(9, dtype=np.float32).reshape(3, 3)
    (out,) = run_graph(good, [x])
    assert out.shape == (2, 3) and out.tolist() == x[1:].tolist()


@pytest.mark.parametrize("steps", ["(0, 1)", "(-1, 1)"])
def test_slice_steps_must_be_positive(steps):
    text = _program(f"%2: f32[3,3] = slice(%0) {{starts=(0, 0), stops=(3, 3), steps={steps}}}",
                    "%0: f32[3,3]")
    with pytest.raises(IRError, match="steps must be positive"):
        verify(parse(text))


def test_slice_backward_checks_its_gradient_against_the_slice():
    text = _program("%2: f32[3,3] = slice_backward(%0) {shape=(3, 3), starts=(0, 0), "
                    "stops=(2, 3), steps=(1, 1)}", "%0: f32[3,3]")
    with pytest.raises(IRError, match=r"grad must be f32\[2,3\]"):
        verify(parse(text))


# ---- attribute kinds (ir/attr_kinds.py) -------------------------------------------------
@pytest.mark.parametrize("node, message", [
    ("%2: f32[] = sum(%0) {dim=1.5, keepdim=false}", "attribute dim=1.5: expected a tuple of dims"),
    ("%2: f32[3] = softmax(%0) {dim=(0,)}", r"attribute dim=\(0,\): expected one dim"),
    ("%2: f32[3] = reshape(%0) {shape=(1.0, 3)}", "expected a tuple of non-negative sizes"),
    ("%2: f32[3] = reshape(%0) {shape=(4,)}", "reshape rejects its inputs"),
    ("%2: f32[3] = sum(%0) {dim=(0,), keepdim=1}", "keepdim=1: expected true or false"),
    ("%2: f32[3] = softmax(%0) {dim=3}", "softmax rejects its inputs"),
    ("%2: f32[3] = softmax(%0) {dim=-1}", "dim=-1 is not canonical"),
    ("%2: f32[3] = linalg_qr(%0) {mode=\"fast\"}", "expected one of 'reduced'"),
    ("%2: f32[3] = convert(%0) {dtype=3}", r"expected a dtype \(f32, i64 ...\) or none"),
])
def test_attribute_values_are_checked_against_their_declared_kind(node, message):
    with pytest.raises(IRError, match=message):
        verify(parse(_program(node, "%0: f32[3]")))


def test_full_with_a_shape_of_the_wrong_kind_is_rejected_before_its_kernel():
    text = ("graph @g() {\n  %0: f32[2] = full() {size=2, fill_value=0.0, dtype=f32}\n"
            "  return %0\n}")
    with pytest.raises(IRError, match="full attribute size=2: expected a tuple of non-negative"):
        verify(parse(text))


def test_every_primitive_attribute_has_a_kind():
    from tracegrad.ir.attr_kinds import AttrKind
    from tracegrad.ir.registry import REGISTRY
    for op in REGISTRY.values():
        if op.decomp is None:
            assert set(op.attr_kinds) == {a for a, _ in op.attrs}, op.name
            for name, default in op.attrs:
                kind = op.attr_kinds[name]
                assert isinstance(kind, AttrKind)


def test_an_attribute_without_a_kind_is_a_registration_error():
    from tracegrad.ir import attr_kinds as K
    from tracegrad.ir.registry import NONDIFF, REGISTRY, defop
    ok = dict(infer=lambda types, **_: types[0], kernel=lambda xp, x, **_: x, vjp=NONDIFF)
    with pytest.raises(IRError, match=r"attribute \('dim', 0\) must be declared as \(name, "
                                      r"default, kind\)"):
        defop("test_kind_probe", "input", attrs=(("dim", 0),), **ok)
    with pytest.raises(IRError, match="must be declared as"):
        defop("test_kind_probe", "input", attrs=(("dim", 0, "int"),), **ok)
    assert "test_kind_probe" not in REGISTRY
    assert K.DIMS_OPT.check(None) and K.DIMS_OPT.check((0, 1)) and not K.DIMS_OPT.check(1.0)
    assert not K.INT.check(True) and not K.INT.check(2 ** 70) and K.INT.check(-3)


def test_error_messages_for_malformed_types_never_raise():
    from tracegrad.ir import types as T
    assert "malformed" in str(T.TensorType(3, "f32"))
    assert "malformed" in str(T.TensorType((2,), None))
