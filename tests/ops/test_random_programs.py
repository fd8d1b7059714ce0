"""Property test: random small programs of registry ops, differentiated end to end.

Hypothesis draws programs of 3-8 ops from a safe subset of the registry (`RULES`: which
operands each op accepts and how it bounds its result, so `exp` only sees bounded values
and `div` only divides by values away from zero), on float64 leaves.  Each program is
built twice from one description, as an IR graph (`Builder`) and eagerly on tensors, and
checked:

- the eager result equals the IR graph run on the interpreter;
- the VJP (``tg.autograd.grad`` with a random cotangent) matches central finite
  differences of the graph along a random direction;
- the backward program gives the same gradients on the interpreter and on jax;
- the graph fused and run in tiny row blocks (`BlockedRegion`) equals it run node by node,
  and so do the backward programs' fused regions (the interpreter's gradients above).

A failure shrinks to a short program; the message shows it as IR text
(`tracegrad.ir.print_graph`) and as a `Program(...)` literal: add that to `REGRESSIONS`
so it runs on every test run.  Runs derandomized (the same programs every time).
"""
from __future__ import annotations

import math
import os
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracegrad as tg
from tracegrad.dispatch.frontend import EAGER
from tracegrad.autograd import engine
from tracegrad.backends import interpreter
from tracegrad.ir import Builder, Graph, TensorType, print_graph, verify
from tracegrad.passes import fuse

F64 = tg.float64
LOW, HIGH = 0.5, 1.5          # |leaf value| is in [LOW, HIGH]: leaves are safe divisors
MAX_BOUND = 1e4               # no op may make |value| larger than this (by the bounds below)
MAX_NUMEL = 24
FD_EPS = 1e-6


@dataclass(frozen=True)
class Program:
    """A straight-line program: float64 leaves of `inputs` shapes, then `steps`.

    Each step is ``(op, operands, attrs)``; an operand is ``("in", k)`` (leaf k),
    ``("v", k)`` (the result of step k) or a Python float.  The program's result is
    the last step's.  Leaf values come from `seed`.
    """

    inputs: tuple
    steps: tuple
    seed: int = 0

    def emit(self, ops, leaves):
        """Run the steps through a frontend (`EAGER` on tensors, a `Builder` on IR values)."""
        vals = []
        for op, operands, attrs in self.steps:
            args = [r if isinstance(r, float) else (leaves if r[0] == "in" else vals)[r[1]]
                    for r in operands]
            vals.append(ops.call(op, *args, **dict(attrs)))
        return vals[-1]

    def leaf_values(self) -> list[np.ndarray]:
        rng = np.random.default_rng(self.seed)
        return [rng.choice([-1.0, 1.0], s) * rng.uniform(LOW, HIGH, s) for s in self.inputs]

    def graph(self) -> Graph:
        g = Graph(name="random_program")
        leaves = [g.add_input(TensorType(tuple(s), F64)) for s in self.inputs]
        g.outputs = [self.emit(Builder(g), leaves)]
        verify(g)
        return g


# ---- generation ---------------------------------------------------------------------------
@dataclass
class _Val:
    ref: tuple
    shape: tuple
    bound: float        # an upper bound on |value|
    leaf: bool


def _broadcast(a: tuple, b: tuple):
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def _numel(shape) -> int:
    return math.prod(shape)


@st.composite
def _shapes(draw, max_ndim=3):
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=max_ndim)))
    return shape


class _Gen:
    """State while drawing one program: leaves, values with shapes and bounds, steps."""

    def __init__(self, draw):
        self.draw = draw
        self.inputs: list[tuple] = []
        self.vals: list[_Val] = []
        self.steps: list[tuple] = []

    def leaf(self, shape) -> _Val:
        self.inputs.append(tuple(shape))
        return _Val(("in", len(self.inputs) - 1), tuple(shape), HIGH, True)

    def pick(self, ok=lambda v: True) -> _Val | None:
        """A value for an operand: mostly the newest result that fits (so ops chain rather
        than leave dead code; also what shrinking moves to), else any value that fits."""
        cands = [v for v in reversed(self.vals) if ok(v)]
        if not cands:
            return None
        newest = [v for v in cands if not v.leaf][:1] or cands[:1]
        if not self.draw(st.integers(0, 3)):
            return cands[self.draw(st.integers(0, len(cands) - 1))]
        return newest[0]

    def push(self, op, operands, attrs, shape, bound):
        self.steps.append((op, tuple(operands), tuple(sorted(attrs.items()))))
        self.vals.append(_Val(("v", len(self.steps) - 1), tuple(shape), bound, False))


def _other_operand(g: _Gen, x: _Val, *, divisor: bool):
    """(operand ref, shape, bound) for the second operand of a binary op with `x`."""
    kind = g.draw(st.sampled_from(["leaf", "scalar", "value"]))
    if kind == "scalar":
        c = g.draw(st.sampled_from([0.5, -0.75, 1.5, 2.0]))
        return c, (), abs(c)
    if kind == "value" and not divisor:
        y = g.pick(lambda v: (_broadcast(v.shape, x.shape) is not None
                              and _numel(_broadcast(v.shape, x.shape)) <= MAX_NUMEL))
        if y is not None:
            return y.ref, y.shape, y.bound
    if kind == "value" and divisor:    # only leaves are known to stay away from zero
        y = g.pick(lambda v: v.leaf and _broadcast(v.shape, x.shape) == x.shape)
        if y is not None:
            return y.ref, y.shape, y.bound
    cut = g.draw(st.integers(0, len(x.shape)))          # a trailing part of x's shape
    y = g.leaf(x.shape[cut:])
    g.vals.append(y)
    return y.ref, y.shape, y.bound


def _binary(op):
    def rule(g: _Gen):
        x = g.pick()
        ref, shape, bound = _other_operand(g, x, divisor=op == "div")
        out = _broadcast(x.shape, shape)
        if op == "div":
            b = x.bound / (abs(ref) if isinstance(ref, float) else LOW)
        elif op == "mul":
            b = x.bound * bound
        else:
            b = x.bound + bound
        operands = (x.ref, ref) if g.draw(st.booleans()) or op == "div" else (ref, x.ref)
        return op, operands, {}, out, b
    return rule


def _unary(op, bound):
    def rule(g: _Gen):
        x = g.pick(lambda v: op != "exp" or v.bound <= 2.0)
        if x is None:
            return None
        return op, (x.ref,), {}, x.shape, bound(x.bound)
    return rule


def _reduce(op):
    def rule(g: _Gen):
        x = g.pick(lambda v: len(v.shape) >= 1)
        if x is None:
            return None
        dim = g.draw(st.integers(0, len(x.shape) - 1))
        keepdim = g.draw(st.booleans())
        shape = tuple(1 if i == dim else s for i, s in enumerate(x.shape)) if keepdim else \
            x.shape[:dim] + x.shape[dim + 1:]
        bound = x.bound * (x.shape[dim] if op == "sum" else 1)
        return op, (x.ref,), {"dim": (dim,), "keepdim": keepdim}, shape, bound
    return rule


def _reshape(g: _Gen):
    x = g.pick()
    n = _numel(x.shape)
    targets = [(n,), (1, n)] + [(a, n // a) for a in (2, 3) if n % a == 0 and n > a]
    targets += [()] if n == 1 else []
    shape = g.draw(st.sampled_from(targets))
    return "reshape", (x.ref,), {"shape": shape}, shape, x.bound


def _permute(g: _Gen):
    x = g.pick(lambda v: len(v.shape) >= 2)
    if x is None:
        return None
    dims = tuple(g.draw(st.permutations(range(len(x.shape)))))
    return "permute", (x.ref,), {"dims": dims}, tuple(x.shape[d] for d in dims), x.bound


def _matmul(g: _Gen):
    x = g.pick(lambda v: len(v.shape) >= 1)
    if x is None:
        return None
    k = x.shape[-1]
    m = g.draw(st.sampled_from([0, 1, 2, 3]))        # 0: a vector right operand
    y = g.leaf((k, m) if m else (k,))
    g.vals.append(y)
    shape = x.shape[:-1] + ((m,) if m else ())
    return "matmul", (x.ref, y.ref), {}, shape, x.bound * y.bound * k


# The safe subset: op -> rule drawing its operands (None when nothing fits).
RULES = {
    "add": _binary("add"), "sub": _binary("sub"), "mul": _binary("mul"), "div": _binary("div"),
    "exp": _unary("exp", math.exp), "tanh": _unary("tanh", lambda b: 1.0),
    "sigmoid": _unary("sigmoid", lambda b: 1.0),
    "sum": _reduce("sum"), "mean": _reduce("mean"),
    "reshape": _reshape, "permute": _permute, "matmul": _matmul,
}


@st.composite
def programs(draw) -> Program:
    g = _Gen(draw)
    g.vals.append(g.leaf(draw(_shapes())))
    n_steps = draw(st.integers(3, 8))
    while len(g.steps) < n_steps:
        op = draw(st.sampled_from(sorted(RULES)))
        mark = (len(g.inputs), len(g.vals))
        drawn = RULES[op](g)
        if drawn is None or drawn[4] > MAX_BOUND or _numel(drawn[3]) > MAX_NUMEL:
            del g.inputs[mark[0]:]              # undo leaves the rejected op added
            del g.vals[mark[1]:]
            continue
        g.push(*drawn)
    return Program(tuple(g.inputs), tuple(g.steps), draw(st.integers(0, 2**16)))


# ---- checks -------------------------------------------------------------------------------
@contextmanager
def _executor(name: str):
    """Run backward programs on exactly one executor (cross-check mode off meanwhile)."""
    old = os.environ.get("TRACEGRAD_CROSSCHECK")
    os.environ["TRACEGRAD_CROSSCHECK"] = "0"
    tg.set_executor(name)
    try:
        yield
    finally:
        tg.set_executor("auto")
        if old is None:
            del os.environ["TRACEGRAD_CROSSCHECK"]
        else:
            os.environ["TRACEGRAD_CROSSCHECK"] = old


@contextmanager
def _tiny_blocks():
    """Every fusion region of two or more nodes runs in row blocks of a few elements (the
    defaults block only regions of 2^19 elements and more, which these programs never
    reach), so the interpreter's `BlockedRegion` sees every region shape drawn here."""
    old = interpreter.BLOCK_ELEMENTS, interpreter.MIN_BLOCKED_ELEMENTS
    interpreter.BLOCK_ELEMENTS, interpreter.MIN_BLOCKED_ELEMENTS = 4, 0
    try:
        yield
    finally:
        interpreter.BLOCK_ELEMENTS, interpreter.MIN_BLOCKED_ELEMENTS = old


def _check(p: Program) -> None:
    engine.clear_cache()
    g = p.graph()
    xs = p.leaf_values()
    leaves = [tg.tensor(x, requires_grad=True) for x in xs]
    out = p.emit(EAGER, leaves)
    assert out.dtype is F64 and out.shape == g.outputs[0].type.shape
    np.testing.assert_allclose(out.detach().numpy(), interpreter.run(g, xs)[0], rtol=1e-12,
                               atol=1e-12, err_msg="eager vs the IR graph on the interpreter")
    with _tiny_blocks():
        blocked = interpreter.run(fuse(g)[0], xs)[0]
    np.testing.assert_allclose(blocked, interpreter.run(g, xs, blocked=False)[0], rtol=1e-12,
                               atol=1e-12, err_msg="fused in row blocks vs node by node")

    rng = np.random.default_rng(p.seed + 1)
    u = rng.standard_normal(out.shape)
    grads = {}
    for name in ("interpreter", "jax"):   # the interpreter runs fused regions in row blocks
        with _executor(name), _tiny_blocks():
            gs = tg.autograd.grad(out, leaves, tg.tensor(u), retain_graph=True, allow_unused=True)
        grads[name] = [np.zeros(x.shape) if gr is None else gr.numpy() for x, gr in zip(xs, gs)]
    assert any(prog._exe._lowered is not None for prog in engine._cache.values()), \
        "the jax executor did not run the backward program"
    for k, (a, b) in enumerate(zip(grads["interpreter"], grads["jax"])):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-9,
                                   err_msg=f"gradient of leaf {k}: jax vs interpreter")

    vs = [rng.standard_normal(x.shape) for x in xs]
    hi = interpreter.run(g, [x + FD_EPS * v for x, v in zip(xs, vs)])[0]
    lo = interpreter.run(g, [x - FD_EPS * v for x, v in zip(xs, vs)])[0]
    numeric = float(np.sum(u * (hi - lo) / (2 * FD_EPS)))
    analytic = float(sum(np.sum(gr * v) for gr, v in zip(grads["interpreter"], vs)))
    scale = 1.0 + float(sum(np.sum(np.abs(gr * v)) for gr, v in zip(grads["interpreter"], vs)))
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6 * scale,
                               err_msg="<vjp, v> vs central finite differences")


def _check_and_show(p: Program) -> None:
    try:
        _check(p)
    except Exception as e:   # noqa: BLE001  (any failure: show the program, let hypothesis shrink)
        try:
            text = print_graph(p.graph())
        except Exception as pe:   # noqa: BLE001
            text = f"(the program does not build: {pe})"
        raise AssertionError(f"{type(e).__name__}: {e}\n\nprogram (add to REGRESSIONS in "
                             f"tests/ops/test_random_programs.py):\n{p!r}\n\n{text}") from e


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(programs())
def test_random_programs_differentiate_correctly(program):
    _check_and_show(program)


# Programs that once failed (as the failure message prints them), plus one that uses every
# op of the subset; each runs on every test run.
REGRESSIONS = [
    Program(inputs=((2, 3), (3,), (3, 2)), seed=7, steps=(
        ("mul", (("in", 0), ("in", 1)), ()),
        ("tanh", (("v", 0),), ()),
        ("div", (("v", 1), ("in", 1)), ()),
        ("exp", (("v", 1),), ()),
        ("sub", (("v", 3), ("v", 2)), ()),
        ("sigmoid", (("v", 4),), ()),
        ("matmul", (("v", 5), ("in", 2)), ()),
        ("permute", (("v", 6),), (("dims", (1, 0)),)),
        ("reshape", (("v", 7),), (("shape", (4,)),)),
        ("add", (("v", 8), 0.5), ()),
        ("mean", (("v", 9),), (("dim", (0,)), ("keepdim", True))),
        ("sum", (("v", 4),), (("dim", (1,)), ("keepdim", False))),
        ("mul", (("v", 11), ("v", 10)), ()),
    )),
]


@pytest.mark.parametrize("program", REGRESSIONS, ids=lambda p: f"seed{p.seed}-{len(p.steps)}ops")
def test_regression_programs(program):
    _check_and_show(program)
