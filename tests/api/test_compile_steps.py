"""tg.compile for real training: recompile reasons, the smaller last batch, graph breaks (fullgraph
and the eager fallback), buffer donation, and seeded dropout in a compiled step."""
import inspect
import logging
import warnings

import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn as nn
import tracegrad.nn.functional as F
from helpers import classification_step


def _model_and_opt(momentum=0.9, seed=0, p_drop=0.0):
    tg.manual_seed(seed)
    layers = [nn.Linear(6, 8), nn.ReLU()] + ([nn.Dropout(p_drop)] if p_drop else []) + \
        [nn.Linear(8, 3)]
    model = nn.Sequential(*layers)
    return model, tg.optim.SGD(model.parameters(), lr=0.1, momentum=momentum)


def _batches(sizes, seed=0):
    rng = np.random.default_rng(seed)
    return [(tg.tensor(rng.standard_normal((n, 6)).astype(np.float32)),
             tg.tensor(rng.integers(0, 3, n))) for n in sizes]


def _state(model, opt):
    params = [p.detach().numpy().copy() for p in model.parameters()]
    grads = [p.grad.numpy().copy() for p in model.parameters() if p.grad is not None]
    bufs = [opt.state[p]["momentum_buffer"].numpy().copy() for p in model.parameters()
            if "momentum_buffer" in opt.state[p]]
    return params, grads, bufs


def _assert_same(a, b, rtol=1e-5, atol=1e-6):
    for x, y in zip(a, b):
        assert len(x) == len(y)
        for u, v in zip(x, y):
            np.testing.assert_allclose(u, v, rtol=rtol, atol=atol)


def _line_of(fn, text):
    src, start = inspect.getsourcelines(fn)
    return start + next(i for i, s in enumerate(src) if text in s)


# Compiled steps run on jax; the test suite's cross-check mode runs every such program on the
# interpreter too and compares, so each test below covers both executors.

# ---- guards and recompiles ---------------------------------------------------------------
def test_smaller_last_batch_costs_one_program_and_matches_eager(caplog):
    sizes = [16, 10]                # an epoch whose last batch is smaller, twice
    data = _batches(sizes)
    results = []
    for compiled in (False, True):
        model, opt = _model_and_opt()

        step = classification_step(model, opt)

        step(*data[0])    # eagerly first: .grad and the momentum buffers exist
        fn = tg.compile(step) if compiled else step
        with caplog.at_level(logging.INFO, logger="tracegrad.compile"):
            losses = [fn(x, y).item() for _ in range(2) for x, y in data]
        results.append((losses, *_state(model, opt)))
        if compiled:
            # one program per batch size: the last batch costs exactly one more, reused in
            # the second epoch
            assert fn.traces == 2
            assert len(fn.programs) == 2
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5, atol=1e-6)
    _assert_same(results[1][1:], results[0][1:])
    assert any("argument x: shape (16, 6) -> (10, 6)" in r.message for r in caplog.records)


def test_every_recompile_reason_is_logged_in_words(caplog):
    w = tg.tensor([1.0, 2.0, 3.0])

    @tg.compile
    def f(x, scale, y=None):
        return x * w * scale

    calls = [((tg.ones(3), 2.0), "first call"),
             ((tg.ones(3), 3.0), "argument scale: static value 2.0 -> 3.0"),
             ((tg.ones(3, dtype=tg.float64), 3.0), "argument x: dtype float32 -> float64"),
             ((tg.ones(3, dtype=tg.float64, requires_grad=True), 3.0),
              "argument x: requires_grad False -> True")]
    with caplog.at_level(logging.INFO, logger="tracegrad.compile"):
        for args, _ in calls:
            f(*args)
        with tg.no_grad():
            f(*calls[-1][0])
    messages = [r.message for r in caplog.records if "compiling f" in r.message]
    assert len(messages) == 5
    for message, (_, reason) in zip(messages, calls):
        assert reason in message, message
    assert "grad mode changed to disabled" in messages[4]


def test_cache_bound_drops_the_oldest_program_with_a_warning():
    f = tg.compile(lambda x: x * 2.0, cache_size=2)
    f(tg.ones(1))
    f(tg.ones(2))
    with pytest.warns(UserWarning, match="recompiled more than 2 times"):
        f(tg.ones(3))
    assert len(f.programs) == 2
    with pytest.warns(UserWarning, match="recompiled"):   # evicted: retraced, still right
        np.testing.assert_array_equal(f(tg.ones(1)).numpy(), [2.0])


def test_dynamic_true_is_not_implemented_and_names_the_alternative():
    with pytest.raises(NotImplementedError, match="pad batches"):
        tg.compile(lambda x: x, dynamic=True)
    tg.compile(lambda x: x, dynamic=False)   # accepted: the default behaviour


# ---- graph breaks ------------------------------------------------------------------------
def _untraceable(kind):
    """A step whose statement marked `# break` needs tensor values."""
    def step(x):
        y = x * 2.0
        if kind == "item":
            y = y * y.sum().item()  # break
        elif kind == "numpy":
            y = y + float(y.detach().numpy().sum())  # break
        elif kind == "bool":
            if y.sum() > 0:  # break
                y = -y
        elif kind == "print":
            print("y is", y)  # break
        elif kind == "nonzero":
            y = y[tg.nonzero(y > 2.0)[:, 0]]  # break
        elif kind == "masked_select":
            y = tg.masked_select(y, y > 2.0)  # break
        return y.sum()
    return step


KINDS = ["item", "numpy", "bool", "print", "nonzero", "masked_select"]
BREAKS = {"item": ".item()", "numpy": ".numpy()", "bool": "if y.sum()", "print": "print(",
          "nonzero": "tg.nonzero", "masked_select": "tg.masked_select"}


@pytest.mark.parametrize("kind", KINDS)
def test_fullgraph_raises_at_the_untraceable_line(kind):
    step = _untraceable(kind)
    with pytest.raises(tg.TraceError) as info:
        tg.compile(step, fullgraph=True)(tg.tensor([1.0, 2.0, 3.0]))
    assert f"test_compile_steps.py:{_line_of(step, BREAKS[kind])}" in str(info.value)


@pytest.mark.parametrize("kind", KINDS)
def test_default_falls_back_to_eager_with_one_warning(kind, capsys):
    step = _untraceable(kind)
    f = tg.compile(step)
    x = tg.tensor([1.0, 2.0, 3.0])
    expected = step(x).item()
    with pytest.warns(UserWarning, match="graph break in step") as record:
        got = [f(x).item() for _ in range(3)]
    assert len([w for w in record if "graph break" in str(w.message)]) == 1
    assert f"test_compile_steps.py:{_line_of(step, BREAKS[kind])}" in str(record[0].message)
    assert got == [expected] * 3
    assert f.traces == 0 and len(f.graph_breaks) == 1 and f.eager_calls == 3
    if kind == "print":   # the side effect happens once per call, with values
        out = capsys.readouterr().out
        assert out.count("y is tensor([2., 4., 6.])") == 4   # 1 eager reference + 3 calls


def test_fallback_after_optimizer_step_rolls_state_back_and_matches_eager():
    # the break comes after opt.step() created momentum buffers inside the trace: they
    # must not survive as traced tensors, and the eager rerun must see a first step
    data = _batches([8, 8, 8])
    results = []
    for compiled in (False, True):
        model, opt = _model_and_opt(momentum=0.9)
        log = []

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            log.append(loss.item())     # a graph break after the update
            return loss

        fn = tg.compile(step) if compiled else step
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            losses = [fn(x, y).item() for x, y in data]
        if compiled:
            assert sum("graph break" in str(w.message) for w in caught) == 1
            assert fn.traces == 0 and fn.eager_calls == 3
        assert log == losses
        results.append((losses, *_state(model, opt)))
    assert results[0][0] == results[1][0]
    _assert_same(results[1][1:], results[0][1:], rtol=0, atol=0)   # both ran eagerly


def test_fallback_retries_the_trace_when_a_guard_changes():
    drop = nn.Dropout(0.5)

    def step(x):
        y = drop(x)
        if drop.training:
            return y.sum().item()     # a break in training mode only
        return y.sum()

    f = tg.compile(step)
    with pytest.warns(UserWarning, match="graph break"):
        f(tg.ones(4))
    drop.eval()
    assert f(tg.ones(4)).item() == 4.0
    assert f.traces == 1 and f.eager_calls == 1
    drop.train()
    f(tg.ones(4))
    assert f.traces == 1 and f.eager_calls == 2 and len(f.graph_breaks) == 1


def test_fallback_refuses_when_traced_tensors_escaped_into_python_state():
    kept = []

    @tg.compile
    def step(x):
        y = x * 2.0
        kept.append(y)               # stored outside the function: cannot be rolled back
        return y.sum().item()

    with pytest.raises(tg.TraceError, match="cannot fall back to eager") as info:
        step(tg.ones(2))
    assert "test_compile_steps.py" in str(info.value)


# ---- donation ----------------------------------------------------------------------------
def test_overwritten_inputs_are_donated_and_alias_their_outputs():
    x, y = _batches([8])[0]
    stats, states = {}, {}
    for donate in (True, False):
        model, opt = _model_and_opt(momentum=0.9)

        def step(x, y):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()

        step(x, y)          # eagerly first: the momentum buffers exist, one stable trace
        f = tg.compile(step, donate=donate)
        f(x, y)
        assert f.traces == 1
        stats[donate] = f.memory_analysis(x, y)
        states[donate] = _state(model, opt)
    # parameters and momentum buffers are updated in place: their buffers become the outputs'
    state_bytes = sum(p.numel() * 4 for p in model.parameters()) * 2
    assert stats[False].alias_size_in_bytes == 0
    assert stats[True].alias_size_in_bytes == state_bytes
    _assert_same(states[True], states[False], rtol=0, atol=0)


def test_donation_leaves_arrays_held_elsewhere_intact():
    w = tg.tensor([1.0, 2.0])
    before = w.numpy()               # shares the array w held before the call
    snapshot = before.copy()

    @tg.compile(donate=True)   # the default donates on accelerators only
    def step():
        w.add_(1.0)

    step()
    step()
    np.testing.assert_array_equal(before, snapshot)
    np.testing.assert_array_equal(w.numpy(), [3.0, 4.0])


def test_tensors_overwritten_without_being_read_are_written_back():
    # zero_grad(set_to_none=False) zeroes the old .grad in place without reading it: the
    # tensor must still be an input written back, not left holding a traced value
    data = _batches([8, 8])
    results = []
    for compiled in (False, True):
        model, opt = _model_and_opt(momentum=0.0)

        def step(x, y):
            opt.zero_grad(set_to_none=False)
            F.cross_entropy(model(x), y).backward()
            opt.step()

        step(*data[0])        # .grad exists from here on
        fn = tg.compile(step) if compiled else step
        for x, y in data:
            fn(x, y)
        results.append(_state(model, opt))
    _assert_same(results[1], results[0])
    t = tg.ones(3)
    tg.compile(lambda: t.zero_())()
    np.testing.assert_array_equal(t.numpy(), [0.0, 0.0, 0.0])


# ---- randomness --------------------------------------------------------------------------
def test_dropout_training_step_compiled_equals_eager_with_the_same_seed():
    data = _batches([8, 8, 8])
    results = []
    for compiled in (False, True):
        model, opt = _model_and_opt(momentum=0.0, p_drop=0.5)

        step = classification_step(model, opt)

        tg.manual_seed(123)
        step(*data[0])    # eagerly first: .grad exists, so one trace
        fn = tg.compile(step) if compiled else step
        losses = [fn(x, y).item() for x, y in data]
        assert not compiled or fn.traces == 1
        results.append((losses, *_state(model, opt)))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5, atol=1e-6)
    _assert_same(results[1][1:], results[0][1:])
    assert len(set(results[1][0])) == 3


def test_replacing_a_grad_tensor_between_calls_retraces():
    """The program reads the .grad tensor object it lifted; a .grad replaced by another
    tensor (the old one still alive) must not be read stale."""
    w = tg.ones(3, requires_grad=True)

    @tg.compile(executor="interpreter")
    def step():
        with tg.no_grad():
            w.sub_(w.grad * 0.1)

    w.grad = tg.ones(3)
    step()
    old = w.grad  # noqa: F841  (kept alive on purpose)
    w.grad = tg.full((3,), 10.0)
    step()
    np.testing.assert_allclose(w.detach().numpy(), [1 - 0.1 - 1.0] * 3, rtol=1e-6)
    assert step.traces == 2


def test_donation_default_is_off_on_the_cpu():
    w = tg.tensor([1.0, 2.0])

    @tg.compile
    def step():
        w.add_(1.0)

    step()
    (entry,) = [e for bucket in step._cache.values() for e in bucket]
    assert entry.donate == ()
