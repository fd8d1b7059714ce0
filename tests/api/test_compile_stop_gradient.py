"""tg.compile cuts gradients where autograd does (issue 15): ``detach()``, ``.data``,
``detach_()``, ``no_grad`` blocks, ``requires_grad_(False)`` and in-place writes autograd does
not see.  Each program runs eagerly and compiled (both executors), with ``backward()`` outside
the compiled function (the static backward program of its result differentiates the traced
graph) and inside it (the tape), and must give torch 2.13's recorded loss and gradient.
Also: ``x.data = v``, leaves made inside the function (a graph break when they outlive the
call), ``enable_grad()`` inside a call under ``no_grad``, and hand-written IR through the
passes (the ``stop_gradient`` / ``untracked_write`` marks survive CSE and simplify).
"""
import warnings

import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn as nn
from tracegrad import passes
from tracegrad.backends.executable import Executable
from tracegrad.ir.graph import Graph
from tracegrad.ir.parser import parse

EXECUTORS = ["interpreter", "jax"]


def detach(L, w):
    return (w * w.detach()).sum()


def detach_then_base_written(L, w):
    x = w * 1
    d = x.detach()
    x.mul_(3)              # the alias sees the new value; only x's history goes to w
    return (w * d).sum()


def detach_in_place(L, w):
    x = w * 2
    y = w * 2
    y.detach_()
    return (w * y + x).sum()


def data(L, w):
    return (w * w.data).sum()


def write_through_data(L, w):
    x = w * 1
    x.data.mul_(2)         # x's value doubles; its gradient to w stays 1
    return (x * w).sum()


def no_grad_block(L, w):
    with L.no_grad():
        y = w * w
    return (w * y).sum()


def no_grad_in_place(L, w):
    x = w * 1
    with L.no_grad():
        x.mul_(2)
    return (x * x).sum()


def requires_grad_false(L, w):
    y = (w * 2).detach()
    y.requires_grad_(False)
    return (w * y).sum()


def detached_then_written_with_grad(L, w):
    d = w.detach().clone()
    d.add_(w)              # d now has w's history once, not twice
    return (d * w).sum()


def write_through_detach(L, w):
    x = w * 1
    x.detach().mul_(2)
    return (x * w).sum()


def equal_ops_one_detached(L, w):
    return (w.exp() * w.exp().detach()).sum()   # CSE must not merge the two reads


def detached_twice(L, w):
    return (w * w.detach() + w.detach() * w.detach()).sum()


# torch 2.13, w = tensor([1., 2.], requires_grad=True): (loss, w.grad) after loss.backward()
TORCH = {
    detach: (5.0, [1.0, 2.0]),
    detach_then_base_written: (15.0, [3.0, 6.0]),
    detach_in_place: (16.0, [4.0, 6.0]),
    data: (5.0, [1.0, 2.0]),
    write_through_data: (10.0, [3.0, 6.0]),
    no_grad_block: (9.0, [1.0, 4.0]),
    no_grad_in_place: (20.0, [4.0, 8.0]),
    requires_grad_false: (10.0, [2.0, 4.0]),
    detached_then_written_with_grad: (10.0, [3.0, 6.0]),
    write_through_detach: (10.0, [3.0, 6.0]),
    equal_ops_one_detached: (61.98720932006836, [7.3890557289123535, 54.59815216064453]),
    detached_twice: (10.0, [1.0, 2.0]),
}
HOW = ["eager", "interpreter", "jax"]


def _run(case, how, inside: bool):
    w = tg.tensor([1.0, 2.0], requires_grad=True)

    def step(w):
        loss = case(tg, w)
        if inside:
            loss.backward()
            return loss.detach()
        return loss

    fn = step if how == "eager" else tg.compile(step, executor=how, fullgraph=True)
    loss = fn(w)
    if not inside:
        loss.backward()
    return loss.item(), w.grad.numpy()


@pytest.mark.parametrize("inside", [False, True], ids=["backward_outside", "backward_inside"])
@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("case", list(TORCH), ids=lambda c: c.__name__)
def test_gradient_stops_where_eager_stops(case, how, inside):
    want_loss, want_grad = TORCH[case]
    for _ in range(2):   # the tracing call and the cached program
        loss, grad = _run(case, how, inside)
        np.testing.assert_allclose(loss, want_loss, rtol=1e-6)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-6)


# torch 2.13: g = grad(loss, w, create_graph=True), then g.sum().backward()
CREATE_GRAPH = [
    (lambda w: (w ** 3 * w.detach()).sum(), [3.0, 24.0], [6.0, 24.0]),
    (lambda w: _no_grad_doubled(w * w) * w, [4.0, 16.0], [6.0, 12.0]),
]


def _no_grad_doubled(x):
    with tg.no_grad():
        x.mul_(2)
    return x


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("k", range(len(CREATE_GRAPH)))
def test_create_graph_through_a_cut(executor, k):
    f, want_g, want_gg = CREATE_GRAPH[k]
    fn = tg.compile(lambda w: f(w).sum(), executor=executor, fullgraph=True)
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    g, = tg.autograd.grad(fn(w), w, create_graph=True)
    assert g.requires_grad
    np.testing.assert_allclose(g.detach().numpy(), want_g, rtol=1e-6)
    g.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), want_gg, rtol=1e-6)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_module_output_against_its_detached_self(executor):
    """A loss against a detached target made from the module's own output (target-network
    style): only the live branch is differentiated."""
    lin = nn.Linear(2, 1)
    with tg.no_grad():
        lin.weight.copy_(tg.tensor([[0.5, -1.0]]))
        lin.bias.fill_(0.25)
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]])

    def loss_of(x):
        y = lin(x)
        return ((y - y.detach() * 0.5) ** 2).mean()

    fn = tg.compile(loss_of, executor=executor, fullgraph=True)
    for _ in range(2):
        lin.zero_grad()
        loss = fn(x)
        loss.backward()
        # torch 2.13: 0.828125, weight.grad [[-4.0, -5.75]], bias.grad [-1.75]
        np.testing.assert_allclose(loss.item(), 0.828125, rtol=1e-6)
        np.testing.assert_allclose(lin.weight.grad.numpy(), [[-4.0, -5.75]], rtol=1e-6)
        np.testing.assert_allclose(lin.bias.grad.numpy(), [-1.75], rtol=1e-6)


def test_a_program_that_returns_no_gradient_keeps_no_cut():
    """The cuts are for the graph's own backward: a training step that returns only a
    detached loss gets the program it traced, without stop_gradient / untracked_write."""
    w = tg.tensor([1.0, 2.0], requires_grad=True)

    @tg.compile(executor="interpreter")
    def step(x):
        loss = (w * w.detach() * x).sum()
        loss.backward()
        with tg.no_grad():
            w.sub_(0.1 * w.grad)
        w.grad = None
        return loss.detach()

    loss = step(tg.tensor([1.0, 1.0]))
    ops = {n.op for n in step.programs[0].forward.nodes}
    assert not ops & {"stop_gradient", "untracked_write"}, ops
    # torch 2.13: loss 5.0, then w = [1, 2] - 0.1 * [1, 2]
    np.testing.assert_allclose(loss.item(), 5.0)
    np.testing.assert_allclose(w.detach().numpy(), [0.9, 1.8], rtol=1e-6)


# ---- x.data = v: x keeps its history, later uses read v ----------------------------------------
@pytest.mark.parametrize("how", HOW)
def test_data_assignment_keeps_the_history_and_reads_the_new_value(how):
    def f(x):
        y = x * 2
        y.data = tg.tensor([10.0, 20.0])
        return (y * x).sum()

    fn = f if how == "eager" else tg.compile(f, executor=how, fullgraph=True)
    for _ in range(2):
        x = tg.tensor([1.0, 2.0], requires_grad=True)
        loss = fn(x)
        loss.backward()
        # torch 2.13: 50.0, x.grad [12.0, 24.0] (y's new value directly, 2 * x through y)
        assert loss.item() == 50.0
        assert x.grad.tolist() == [12.0, 24.0]


# ---- a leaf made inside the function ------------------------------------------------------------
@pytest.mark.parametrize("how", HOW)
def test_a_detached_copy_made_a_leaf_cuts_the_gradient(how):
    """The new leaf's gradient would go to a leaf the compiled call cannot hand a .grad: a
    graph break (the warning), then eager's values."""
    def f(x):
        y = x.detach().requires_grad_()
        return (y * x).sum()

    fn = f if how == "eager" else tg.compile(f, executor=how)
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(x).backward()
    assert x.grad.tolist() == [1.0, 2.0]   # torch 2.13 (not [2, 4]: y is a new leaf)
    assert [("becomes a leaf that requires grad" in str(w.message)) for w in caught] == (
        [] if how == "eager" else [True])


def _returns_new_leaf(x):
    y = tg.ones(2, requires_grad=True)
    return (y * x).sum(), y


def _backward_into_new_leaf(x):
    y = x.detach().requires_grad_()
    (y * x).sum().backward()
    return y


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("fn", [_returns_new_leaf, _backward_into_new_leaf],
                         ids=["returned", "backward_inside"])
def test_a_new_leaf_that_outlives_the_call_runs_eagerly_or_raises(fn, executor):
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    strict = tg.compile(fn, executor=executor, fullgraph=True)
    with pytest.raises(tg.TraceError,
                       match=r"a tensor made inside the compiled function becomes a leaf that "
                             r"requires grad at .*test_compile_stop_gradient\.py:\d+ .*make it "
                             r"outside the function and pass it in"):
        strict(x)
    lenient = tg.compile(fn, executor=executor)
    with pytest.warns(UserWarning, match="graph break in"):
        out = lenient(x)
    if isinstance(out, tuple):
        out[0].backward()
        out = out[1]
    assert out.is_leaf and out.requires_grad
    assert out.grad.tolist() == [1.0, 2.0]   # torch 2.13: the new leaf's own gradient (x)


# ---- grad mode entered inside the function ------------------------------------------------------
@pytest.mark.parametrize("how", HOW)
def test_enable_grad_inside_a_call_made_under_no_grad(how):
    def f(x):
        with tg.enable_grad():
            return (x * x).sum()

    fn = f if how == "eager" else tg.compile(f, executor=how, fullgraph=True)
    for _ in range(2):
        x = tg.tensor([1.0, 2.0], requires_grad=True)
        with tg.no_grad():
            loss = fn(x)
        assert loss.requires_grad   # torch 2.13: True, x.grad [2.0, 4.0]
        loss.backward()
        assert x.grad.tolist() == [2.0, 4.0]


# ---- the passes keep both marks ---------------------------------------------------------------
_MARKED = """graph @marked(%0: f32[2]) {
  %1: f32[2] = exp(%0)
  %2: f32[2] = exp(%0)
  %3: f32[2] = stop_gradient(%2)
  %4: f32[2] = mul(%1, %3)
  %5: f32[2] = mul(%0, %0)
  %6: f32[2] = untracked_write(%5, %4)
  %7: f32[] = sum(%6) {dim=(0,), keepdim=false}
  return %7
}"""


@pytest.mark.parametrize("executor", EXECUTORS)
def test_cse_and_simplify_never_merge_a_mark_with_its_input(executor):
    """exp(x) * stop_gradient(exp(x)) written back over x * x without autograd seeing it:
    the value is sum(exp(2x)), the gradient that of sum(x * x), 2x (NumPy reference)."""
    g, _ = passes.optimize_program(parse(_MARKED))
    ops = [n.op for n in g.nodes]
    assert ops.count("exp") == 1 and "stop_gradient" in ops and "untracked_write" in ops
    part = passes.build_backward(g, [g.inputs[0]], policy="min_bytes")
    x = np.array([0.5, -1.0], np.float32)
    value, = Executable(g).run([x], executor)
    np.testing.assert_allclose(value, np.exp(2 * x).sum(), rtol=1e-6)
    saved = {id(v): a for v, a in zip(g.inputs, [x])}
    env = _forward_values(g, x, executor)
    grad, = Executable(part.backward).run([np.float32(1.0)] + [saved.get(id(v), env.get(id(v)))
                                                               for v in part.saved], executor)
    np.testing.assert_allclose(grad, 2 * x, rtol=1e-6)


def _forward_values(g, x, executor):
    """id(value) -> array for every node output of `g` at `x` (the saved values)."""
    values = [o for n in g.nodes for o in n.outputs]
    arrays = Executable(Graph("all", list(g.inputs), list(g.nodes), values)).run([x], executor)
    return {id(v): a for v, a in zip(values, arrays)}
