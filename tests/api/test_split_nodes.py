"""split / split_with_sizes / chunk / unbind record one backward node for all their outputs,
as torch (SplitBackward0 with output_nr 0, 1, ...), and each output stays a view of the
input that writes reach (ir/ops/shape.py `split_pieces`, `OpDef.view_pieces`; issue 14).
Expected values recorded from torch 2.13.0 (CPU) running the same calls."""
from __future__ import annotations

import numpy as np
import pytest

import tracegrad as tg


def _y():
    x = tg.arange(6.).reshape(2, 3).requires_grad_()
    return x, x * 1


# (name, call, torch 2.13's node name, output shapes)
CASES = [
    ("split", lambda y: y.split(1), "SplitBackward0", [(1, 3), (1, 3)]),
    ("split_list", lambda y: y.split([2, 1], 1), "SplitWithSizesBackward0", [(2, 2), (2, 1)]),
    ("chunk", lambda y: y.chunk(2, 1), "SplitBackward0", [(2, 2), (2, 1)]),
    ("unbind", lambda y: y.unbind(1), "UnbindBackward0", [(2,), (2,), (2,)]),
    ("split_with_sizes", lambda y: y.split_with_sizes([1, 1]), "SplitWithSizesBackward0",
     [(1, 3), (1, 3)]),
    ("tg.unbind", lambda y: tg.unbind(y, -1), "UnbindBackward0", [(2,), (2,), (2,)]),
]


@pytest.mark.parametrize("name, call, node, shapes", CASES, ids=[c[0] for c in CASES])
def test_one_node_for_every_output(name, call, node, shapes):
    x, y = _y()
    outs = call(y)
    assert [o.grad_fn.name() for o in outs] == [node] * len(outs)
    assert all(o.grad_fn is outs[0].grad_fn for o in outs)
    assert [o.output_nr for o in outs] == list(range(len(outs)))
    assert [(type(n).__name__, i) for n, i in outs[0].grad_fn.next_functions] == \
        [("MulBackward0", 0)]
    assert [tuple(o.shape) for o in outs] == shapes
    assert all(o._base is y and o._is_view() for o in outs)


def test_unbind_of_a_leaf_is_a_view_of_it_with_its_accumulator_as_edge():
    x = tg.ones(2, 3, requires_grad=True)
    outs = x.unbind(0)
    assert [type(n).__name__ for n, _ in outs[0].grad_fn.next_functions] == ["AccumulateGrad"]
    assert [o._base is x and o._is_view() for o in outs] == [True, True]   # torch 2.13
    r = tg.arange(6.).reshape(2, 3).requires_grad_()   # itself a view (of arange's result)
    assert r.unbind(0)[0]._base is r._base


def test_gradients_reach_only_the_used_pieces():
    x, y = _y()
    a, b, c = y.unbind(1)
    (b * 2 + c * 3).sum().backward()
    assert x.grad.tolist() == [[0.0, 2.0, 3.0], [0.0, 2.0, 3.0]]   # torch 2.13
    p, q = (x * 1).split([2, 1], 1)
    g, = tg.autograd.grad(q.sum() * 5, x)
    assert g.tolist() == [[0.0, 0.0, 5.0], [0.0, 0.0, 5.0]]


def test_double_backward_through_a_piece():
    x, _ = _y()
    g, = tg.autograd.grad((x.split(1)[1] ** 2).sum(), x, create_graph=True)
    assert g.tolist() == [[0.0, 0.0, 0.0], [6.0, 8.0, 10.0]]   # torch 2.13, CatBackward0
    assert tg.autograd.grad(g.sum(), x)[0].tolist() == [[0.0, 0.0, 0.0], [2.0, 2.0, 2.0]]


def test_writes_to_pieces_reach_the_input_and_the_other_views():
    z = tg.zeros(2, 3)
    u = z.unbind(0)
    u[1].add_(7)
    s0, s1 = z.split([1, 2], 1)
    s1.mul_(2)
    # torch 2.13
    assert z.tolist() == [[0.0, 0.0, 0.0], [7.0, 14.0, 14.0]]
    assert u[1].tolist() == [7.0, 14.0, 14.0] and s0.tolist() == [[0.0], [7.0]]


def test_a_hook_on_an_unused_piece_is_called_with_none():
    x, _ = _y()
    seen = []
    s0, s1 = (x * 1).split([1, 1])
    s1.register_hook(lambda g: seen.append(("s1", g)))
    s0.register_hook(lambda g: seen.append(("s0", None if g is None else g.tolist())))
    (s0 * 3).sum().backward()
    # torch 2.13, hooks registered in this order (torch calls them in registration order;
    # we call the unused outputs' first, docs/autograd.md)
    assert seen == [("s1", None), ("s0", [[3.0, 3.0, 3.0]])]
    assert x.grad.tolist() == [[3.0, 3.0, 3.0], [0.0, 0.0, 0.0]]


def test_in_place_on_a_piece_raises_torchs_error_naming_the_node():
    _, y = _y()
    with pytest.raises(RuntimeError, match=r"^Output 1 of Unbind is a view and is being "
                                           r"modified inplace\. This view is the output of a "
                                           r"function that returns multiple views\."):
        y.unbind(1)[1].mul_(2)
    with pytest.raises(RuntimeError, match=r"^Output 0 of Split is a view"):
        y.split(1)[0].mul_(2)


def test_empty_inputs_as_torch():
    assert tg.ones(0, 2, requires_grad=True).unbind(0) == ()
    assert [tuple(t.shape) for t in tg.ones(0, 2).split(1)] == [(0, 2)]
    assert [tuple(t.shape) for t in tg.ones(0, 2).chunk(3)] == [(0, 2)] * 3


@pytest.mark.parametrize("executor", ["interpreter", "jax"])
def test_compiled_split_matches_eager(executor):
    def step(x):
        parts = x.unbind(0) + x.split([1, 2], 1)
        return sum(((p * (i + 1)) ** 2).sum() for i, p in enumerate(parts))

    xv = np.linspace(-1.0, 1.0, 6).reshape(2, 3).astype(np.float32)
    x = tg.tensor(xv, requires_grad=True)
    step(x).backward()
    eager = x.grad.numpy().copy()
    x.grad = None

    @tg.compile(executor=executor)
    def compiled(x):
        loss = step(x)
        loss.backward()
        return loss

    compiled(x)
    np.testing.assert_allclose(x.grad.numpy(), eager, rtol=1e-6)
    # the reference: the same sums in NumPy, differentiated by hand
    want = np.zeros((2, 3))
    for i in range(2):
        want[i] += 2 * (i + 1) ** 2 * xv[i]
    want[:, :1] += 2 * 3 ** 2 * xv[:, :1]
    want[:, 1:] += 2 * 4 ** 2 * xv[:, 1:]
    np.testing.assert_allclose(eager, want, rtol=1e-6)
