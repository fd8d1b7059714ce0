"""The code paths behind the benchmark figures (docs/performance.md): values, not timings.

- the cyclic garbage collector is paused while a program is built, and restored after;
- the version checks of saved values (built in one pass over the backward program);
- a ``tg.compile`` retrace that produces the same program reuses its executable.
"""
import gc

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.passes import gc_paused


def test_gc_paused_restores_the_collector():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()      # the outer pause holds
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()      # a collector the user turned off stays off
    finally:
        gc.enable()
    with pytest.raises(ValueError):
        with gc_paused():
            raise ValueError("boom")
    assert gc.isenabled()


def test_backward_builds_with_the_collector_paused_and_leaves_it_on():
    from tracegrad import passes
    seen = []
    original = passes.optimized_joint

    def spy(*a, **k):
        seen.append(gc.isenabled())
        return original(*a, **k)
    passes.optimized_joint = spy
    try:
        x = tg.randn(3, requires_grad=True)
        (x * 2.5).exp().sum().backward()
    finally:
        passes.optimized_joint = original
    assert seen == [False] and gc.isenabled()
    np.testing.assert_allclose(x.grad.numpy(), 2.5 * np.exp(2.5 * x.detach().numpy()),
                               rtol=1e-5)


def test_saved_value_version_checks_name_every_reader():
    # x is saved by both muls; modifying it in place must fail backward, naming a reader
    x = tg.randn(4, requires_grad=True)
    y = x * 1.0
    z = (y * y).sum() + (y * 3.0).sum()
    y.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_a_retrace_to_the_same_program_reuses_its_executable():
    tg.manual_seed(0)
    model = tg.nn.Linear(4, 2)
    opt = tg.optim.SGD(model.parameters(), lr=0.1)

    @tg.compile
    def step(x):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()

    x = tg.randn(3, 4)
    for _ in range(3):
        step(x)
    assert step.traces == 2   # the second call sees .grad tensors: one retrace
    entries = [e for bucket in step._cache.values() for e in bucket if e._exe is not None]
    assert len(entries) == 2 and entries[0].text == entries[1].text
    assert entries[0]._exe is entries[1]._exe


def test_tracing_freezes_older_objects_only_for_the_trace():
    import gc
    seen = []
    w = tg.tensor([1.0, 2.0])

    @tg.compile
    def step():
        seen.append(gc.get_freeze_count() > 0)
        w.add_(1.0)

    step()
    assert seen == [True] and gc.get_freeze_count() == 0
    gc.freeze()   # the program's own freeze is left alone
    try:
        tg.compile(lambda: w.mul_(2.0))()
        assert gc.get_freeze_count() > 0   # not unfrozen by the trace
    finally:
        gc.unfreeze()
    np.testing.assert_array_equal(w.numpy(), [4.0, 6.0])
