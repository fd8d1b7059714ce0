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
