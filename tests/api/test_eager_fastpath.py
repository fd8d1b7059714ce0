"""The caches and shortcuts of the eager op path give the answers the slow path gives.

`Frontend.call` reuses a plan per (op, attributes, operand types), scalar
operands become shared read-only constants, tape nodes format their source
line lazily, the engine keys backward programs on a flat tuple, the
interpreter runs a prepared schedule and jax gets small inputs stacked.
Each test checks values against NumPy or a hand-derived gradient.
"""
import enum
import inspect
import threading
import warnings

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.autograd import engine
from tracegrad.backends import interpreter, jax_backend
from tracegrad.ir import Graph, builder
from tracegrad.ir import types as T


def _leaf(values, dtype=np.float32):
    return tg.tensor(np.asarray(values, dtype=dtype), requires_grad=True)


def test_signed_zero_and_nan_scalars_are_not_confused():
    x = _leaf([1.0, -2.0])
    neg, pos = (x * -0.0).detach().numpy(), (x * 0.0).detach().numpy()
    assert list(np.signbit(neg)) == [True, False] and list(np.signbit(pos)) == [False, True]
    assert np.isnan((x + float("nan")).detach().numpy()).all()
    assert np.array_equal((x * 2.0).detach().numpy(), [2.0, -4.0])


def test_scalar_type_is_part_of_the_plan():
    i = tg.tensor(np.array([1, 2], np.int64))
    # torch: int tensor + int -> int64, + float -> float32, + bool -> int64
    assert (i + 1).dtype is tg.int64 and (i + 1.0).dtype is tg.float32
    assert (i + True).dtype is tg.int64
    assert np.array_equal((i + 1.5).numpy(), [2.5, 3.5])
    assert (i * np.float32(2)).dtype is tg.float32   # NumPy scalars act as Python numbers
    assert np.array_equal((i * np.int64(3)).numpy(), [3, 6])

    class Three(enum.IntEnum):
        A = 3
    assert np.array_equal((i * Three.A).numpy(), [3, 6])   # an int subclass is an int
    assert (i * Three.A).dtype is tg.int64


def test_attribute_types_are_part_of_the_plan():
    m = tg.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert np.array_equal(m.sum(1).numpy(), [3.0, 12.0])
    with pytest.raises(TypeError, match="dim must be an int"):   # True is not the dim 1
        m.sum(True)
    assert m.sum(1, keepdim=True).shape == (2, 1) and m.sum(1).shape == (2,)


def test_shared_constant_survives_a_view_written_in_place():
    v = tg.reshape(2.0, (1,))   # a view of a scalar constant
    v.add_(1.0)
    assert v.numpy().tolist() == [3.0]
    assert tg.reshape(2.0, (1,)).numpy().tolist() == [2.0]
    x = _leaf([1.0])
    assert (x * 2.0).detach().numpy().tolist() == [2.0]


def test_pack_hooks_never_see_a_python_scalar():
    # torch 2.13: `x * 5.0` packs nothing (its backward reads only the scalar, saved as a
    # scalar), so a pack hook cannot write into the shared constant the next `* 5.0` reads
    x = _leaf([1.0, 2.0])
    packed = []
    with tg.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        y = x * 5.0
    assert packed == []
    z = x * 5.0
    z.sum().backward()
    assert x.grad.numpy().tolist() == [5.0, 5.0]
    del y


def test_cached_backward_program_reads_new_constants():
    x = _leaf([1.0, 2.0, 3.0])
    for c in (1.5, -2.0, 4.0, 0.5):   # interpreter twice, then jax: one program
        x.grad = None
        ((x * c + 1.0) * x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * c * np.array([1.0, 2.0, 3.0]) + 1.0)


def test_gradient_accumulates_in_place():
    x = _leaf([1.0, 2.0])
    (x * 2.0).sum().backward()
    g, version = x.grad, x.grad._version
    (x * 3.0).sum().backward()
    assert x.grad is g and g._version == version + 1
    assert g.numpy().tolist() == [5.0, 5.0]


def test_tape_node_points_at_the_users_line():
    x = _leaf([1.0])
    y, here = x * 3.0, inspect.currentframe().f_lineno
    z = tg.exp(y)   # an _ops function, not an operator
    assert (y.grad_fn.loc.file, y.grad_fn.loc.line) == (__file__, here)
    assert y.grad_fn.loc.func == "test_tape_node_points_at_the_users_line"
    assert z.grad_fn.loc.line == here + 1


def test_floating_point_errors_are_ignored_whatever_numpy_is_set_to():
    x = _leaf([3e38, 1.0, 0.0])
    old = np.seterr(all="raise")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y = x * 10.0 / x.detach()
            np.testing.assert_array_equal(y.detach().numpy(), [np.inf, 10.0, np.nan])
            assert tg.log(x).detach().numpy()[2] == -np.inf
        with pytest.raises(FloatingPointError):   # the caller's own NumPy state is untouched
            np.float32(3e38) * np.float32(10.0)
    finally:
        np.seterr(**old)


def test_threads_record_and_differentiate_independently():
    errors = []

    def work(c):
        try:
            for _ in range(10):
                t = _leaf([1.0, 2.0])
                (t * c + c).sum().backward()
                assert t.grad.numpy().tolist() == [c, c]
        except Exception as e:   # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(c,)) for c in (2.0, 3.0, 4.0)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors


def test_structural_key_separates_wiring():
    # same ops and types, different wiring: y * y versus y * z
    x = _leaf([1.0, 2.0])
    y = x * 1.0
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    x.grad = None
    y, z = x * 1.0, x * 1.0
    (y * z).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    x.grad = None
    w = tg.tensor(np.array([5.0, 6.0], np.float32))
    y = x * 1.0
    (y * (w * 1.0)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 6.0])


def test_plan_cache_stays_bounded():
    builder._PLANS.clear()
    for n in range(1, builder.PLAN_CACHE_SIZE + 10):
        builder._PLANS[("fake", n)] = None
    x = tg.tensor(np.ones(2, np.float32))
    assert (x + 1.0).numpy().tolist() == [2.0, 2.0]
    assert len(builder._PLANS) <= builder.PLAN_CACHE_SIZE
    builder._PLANS.clear()


def _small_inputs_graph():
    """out = sum of 6 scalars * a + b * c[...]: inputs of three types, two packable groups."""
    g = Graph(name="packing")
    b = builder.Builder(g)
    scalars = [g.add_input(T.TensorType((), T.float32)) for _ in range(6)]
    a = g.add_input(T.TensorType((3,), T.float32))
    vecs = [g.add_input(T.TensorType((3,), T.float64)) for _ in range(2)]
    big = g.add_input(T.TensorType((2000,), T.float32))
    total = scalars[0]
    for s in scalars[1:]:
        total = b.add(total, s)
    out = b.mul(a, total)
    g.outputs = [out, b.mul(vecs[0], vecs[1]), b.sum(big)]
    return g


def test_jax_packing_of_small_inputs_matches_the_interpreter():
    g = _small_inputs_graph()
    rng = np.random.default_rng(0)
    arrays = ([np.asarray(rng.standard_normal(), np.float32) for _ in range(6)]
              + [rng.standard_normal(3).astype(np.float32)]
              + [rng.standard_normal(3) for _ in range(2)]
              + [rng.standard_normal(2000).astype(np.float32)])
    packing = jax_backend._packing(g)
    rest, groups = packing
    assert sorted(len(ix) for _, ix in groups) == [2, 6]   # f32[] x6; f64[3] x2
    assert rest == (6, 9)   # the lone f32[3] and the 2000-element input pass as they are
    got = [np.asarray(a) for a in jax_backend.lower(g, pack_small=True)(arrays)]
    want = interpreter.run(g, arrays)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_schedule_matches_the_node_by_node_interpreter():
    g = _small_inputs_graph()
    rng = np.random.default_rng(1)
    arrays = ([np.asarray(rng.standard_normal(), np.float32) for _ in range(6)]
              + [rng.standard_normal(3).astype(np.float32)]
              + [rng.standard_normal(3) for _ in range(2)]
              + [rng.standard_normal(2000).astype(np.float32)])
    slow = interpreter.run(g, arrays, check_nan=True)   # the unprepared loop
    fast = interpreter.Schedule(g).run(arrays)
    for a, b in zip(fast, slow):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    with pytest.raises(ValueError, match="takes 10 inputs"):
        interpreter.Schedule(g).run(arrays[:3])


def test_interpreter_executor_uses_one_schedule_per_program(monkeypatch):
    monkeypatch.delenv("TRACEGRAD_CROSSCHECK", raising=False)   # the interpreter alone
    tg.set_executor("interpreter")
    x = _leaf([1.0, 2.0])
    for c in (2.0, 3.0):
        x.grad = None
        (x * c).sum().backward()
        assert x.grad.numpy().tolist() == [c, c]
    prog = next(p for p in engine._cache.values() if p._exe._interpret is not None)
    assert isinstance(getattr(prog._exe._interpret, "__self__", None), interpreter.Schedule)
