"""Out-of-range indices raise the same IndexError eagerly, in a compiled program on jax, and on
the interpreter; in-range negative indices keep working where torch allows them.

jax itself fills an out-of-range gather with NaN and drops an out-of-range scatter, and NumPy
wraps negative indices, so each op routes a traced index through an `index_check` node
(ir/ops/index.py).  Messages follow torch 2.13's wording ("index 9 is out of bounds for
dimension 0 with size 4", "Target 5 is out of bounds"), prefixed with the op; the error
types are IndexError throughout (torch raises RuntimeError for gather / scatter).
"""
import re

import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn.functional as F

X = np.arange(4, dtype=np.float32) * 1.5 + 1.0       # f32[4]
Y = np.arange(12, dtype=np.float32).reshape(3, 4)    # f32[3,4]
W = np.arange(8, dtype=np.float32).reshape(4, 2)     # embedding weight: 4 rows
LOGITS = np.linspace(-1, 1, 10, dtype=np.float32).reshape(2, 5)
A = np.array


def _setitem(x, i):
    x = x.clone()
    x[i] = 7.0
    return x


def _log_softmax(z):
    z = z - z.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


def _ce_ref(target, ignore=-100):
    """Mean cross-entropy over the targets that are not `ignore` (NumPy)."""
    keep = target != ignore
    logp = _log_softmax(LOGITS.astype(np.float64))
    return -logp[np.arange(len(target))[keep], target[keep]].mean()


def _scatter_ref(i, add):
    out = X.copy()
    if add:
        np.add.at(out, i, 1.0)
    else:
        out[i] = 2.0
    return out


# name: (function, data, bad index -> message, good index -> NumPy reference)
CASES = {
    "getitem": (lambda x, i: x[i], X,
                {(0, 9): "getitem: index 9 is out of bounds for dimension 0 with size 4",
                 (-5,): "getitem: index -5 is out of bounds for dimension 0 with size 4"},
                {(0, -4, -1, 2): X[[0, 0, 3, 2]]}),
    # the second index alone is out of range: the merged flat index 0 * 4 + 5 would not be
    "getitem_2d": (lambda y, j: y[tg.tensor([0, -1]), j], Y,
                   {(1, 5): "getitem: index 5 is out of bounds for dimension 1 with size 4"},
                   {(1, -2): Y[[0, 2], [1, 2]]}),
    "setitem": (_setitem, X,
                {(9,): "setitem: index 9 is out of bounds for dimension 0 with size 4"},
                {(-1, 0): np.r_[7.0, X[1:3], 7.0]}),
    "index_select": (lambda x, i: x.index_select(0, i), X,
                     {(7,): "index_select: index 7 is out of bounds for dimension 0 with size 4",
                      (-1,): "index_select: index -1 is out of bounds for dimension 0 with size "
                             "4"},
                     {(3, 0): X[[3, 0]]}),
    "index_add": (lambda x, i: x.index_add(0, i, tg.ones(2)), X,
                  {(0, 4): "index_add: index 4 is out of bounds for dimension 0 with size 4"},
                  {(1, 1): X + [0, 2, 0, 0]}),
    "gather": (lambda x, i: x.gather(0, i), X,
               {(-1,): "gather: index -1 is out of bounds for dimension 0 with size 4"},
               {(2,): X[[2]]}),
    "scatter": (lambda x, i: x.scatter(0, i, value=2.0), X,
                {(7,): "scatter: index 7 is out of bounds for dimension 0 with size 4"},
                {(1,): _scatter_ref([1], False)}),
    "scatter_add": (lambda x, i: x.scatter_add(0, i, tg.ones(2)), X,
                    {(3, 8): "scatter_add: index 8 is out of bounds for dimension 0 with size 4"},
                    {(3, 3): _scatter_ref([3, 3], True)}),
    "take_along_dim": (lambda y, i: tg.take_along_dim(y, i), Y,
                       {(12,): "take_along_dim: index 12 is out of bounds for dimension 0 with "
                               "size 12"},
                       {(11,): Y.reshape(-1)[[11]]}),
    "embedding": (lambda w, i: F.embedding(i, w), W,
                  {(7,): "embedding: index 7 is out of bounds for dimension 0 with size 4",
                   (-1,): "embedding: index -1 is out of bounds for dimension 0 with size 4"},
                  {(3, 0): W[[3, 0]]}),
    # ignore_index targets are legal, whatever their value; others must be classes
    "cross_entropy": (lambda z, t: F.cross_entropy(z, t), LOGITS,
                      {(0, 5): "cross_entropy: Target 5 is out of bounds for 5 classes",
                       (-1, 0): "cross_entropy: Target -1 is out of bounds for 5 classes"},
                      {(4, -100): _ce_ref(A([4, -100]))}),
    "nll_loss_ignore_index": (lambda z, t: F.nll_loss(z, t, ignore_index=9), LOGITS,
                              {(9, 5): "nll_loss: Target 5 is out of bounds for 5 classes"},
                              {(9, 1): -LOGITS[1, 1]}),
}


@pytest.fixture(params=["eager", "jax", "interpreter"])
def mode(request, monkeypatch):
    # the jax run alone: cross-check mode would also run the interpreter after it
    monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "0")
    return request.param


def _runner(mode, fn):
    return fn if mode == "eager" else tg.compile(fn, executor=mode)


@pytest.mark.parametrize("name", list(CASES))
def test_bad_index_raises_and_good_negative_index_works(mode, name):
    fn, data, bad, good = CASES[name]
    run = _runner(mode, fn)
    for index, want in good.items():
        got = run(tg.tensor(data), tg.tensor(A(index)))
        np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-6)
    for index, message in bad.items():   # same shape: one compiled program for all
        with pytest.raises(IndexError, match=re.escape(message)):
            run(tg.tensor(data), tg.tensor(A(index)))
    if mode != "eager":   # one check per op and call (getitem_2d's constant index: at trace)
        entry = next(e for bucket in run._cache.values() for e in bucket)
        assert sum(n.op == "index_check" for n in entry.graph.nodes) == 1


def test_compiled_step_with_a_bad_target_raises_and_leaves_the_state(monkeypatch):
    import jax
    if jax.default_backend() != "cpu":   # donated parameter buffers are gone after the call
        pytest.skip("on an accelerator the step donates its state (compile.py write-back)")
    monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "0")
    tg.manual_seed(0)
    emb, head = tg.nn.Embedding(6, 3), tg.nn.Linear(3, 4)
    opt = tg.optim.SGD(list(emb.parameters()) + list(head.parameters()), lr=0.5)

    @tg.compile
    def step(i, t):
        opt.zero_grad()
        loss = F.cross_entropy(head(emb(i)), t)
        loss.backward()
        opt.step()
        return loss

    i, t = tg.tensor([0, 5, 2]), tg.tensor([1, 3, 0])
    step(i, t)
    step(i, t)
    before = [p.detach().numpy().copy() for p in opt.param_groups[0]["params"]]
    for bad_i, bad_t, message in [([0, 6, 1], [1, 3, 0], "embedding: index 6"),
                                  ([0, 1, 2], [1, 4, 0], "cross_entropy: Target 4")]:
        with pytest.raises(IndexError, match=message):
            step(tg.tensor(bad_i), tg.tensor(bad_t))
    for b, p in zip(before, opt.param_groups[0]["params"]):
        np.testing.assert_array_equal(p.detach().numpy(), b)
    step(i, t)   # the program still runs
    assert not np.array_equal(before[0], opt.param_groups[0]["params"][0].detach().numpy())


def test_backward_of_negative_and_repeated_indices(executor, monkeypatch):
    """The gradient of x[i] adds into the rows i names, -1 being the last; the backward
    program runs on the executor under test (eagerly: from a compiled forward too)."""
    monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "0")
    i = A([-1, 0, 3, -1])
    c = A([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    want = np.zeros(4, np.float32)
    np.add.at(want, i % 4, c)
    for fn in (lambda x, i: (x[i] * tg.tensor(c)).sum(), tg.compile(
            lambda x, i: (x[i] * tg.tensor(c)).sum())):
        for _ in range(3):   # "auto" would move a backward program to jax on its third run
            x = tg.tensor(X, requires_grad=True)
            fn(x, tg.tensor(i)).backward()
            np.testing.assert_allclose(x.grad.numpy(), want)
