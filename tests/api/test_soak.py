"""Memory over many steps (issue 18): programs our caches evict leave nothing behind in jax.

A training step whose batch size changes every step grew without bound, though our caches
held their sizes: jax kept the jaxprs of jax.numpy's own nested jitted functions per
argument shape in its one unbounded cache (emptied now by every cache that drops a
program, ir/jax_caches.py), and the collections every trace runs with older objects
frozen kept the collector's full passes from ever reaching cyclic garbage made between
traces (compile._collect_if_grown).  The fast tests here check each mechanism directly; the
slow ones (``make test-all``) run the loops in a subprocess of their own
(tests/api/_soak.py) and bound its resident set size.
"""
import gc
import importlib
import json
import os
import subprocess
import sys
import weakref

import numpy as np
import pytest

from helpers import classification_step

import tracegrad as tg
import tracegrad.nn.functional as F
from tracegrad.autograd import backward_program, jacobian_batched
from tracegrad.backends import crosscheck
from tracegrad.ir import jax_caches
from tracegrad.ir.ops import _xla_handoff as handoff

# the module (tracegrad.compiler re-exports its `compile` function under the same name)
compile_module = importlib.import_module("tracegrad.compiler.compile")


def _traced_jaxprs() -> int:
    """Entries of jax's unbounded trace cache (what issue 18's loop grew)."""
    import jax  # noqa: F401  (the cache exists once jax is imported)
    return jax_caches._unbounded_trace_cache().cache_info().currsize


def _mlp_step():
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.ReLU(), tg.nn.Linear(8, 3))
    return classification_step(model, tg.optim.SGD(model.parameters(), lr=0.1))


def _batch(n):
    return tg.randn(n, 4), tg.randint(0, 3, (n,))


# ---- fast: the mechanisms ----------------------------------------------------------------------
def test_this_jax_has_the_unbounded_trace_cache_we_empty():
    # a private attribute of jax: a jax that moves it must fail here, not leak silently
    import jax  # noqa: F401
    cache = jax_caches._unbounded_trace_cache()
    assert cache is not None and cache.cache_info().maxsize in (None, -1)


def test_new_batch_sizes_leave_jaxs_table_of_traced_states_bounded():
    # pjit._seen_qdds: unbounded, a private attribute (a jax that moves it fails here).
    # Without emptying it, each new batch size added ~38 entries for good (issue 18: 4,581
    # after 120 steps of tests/api/_soak.py's loop, 7,621 after 200; emptied: 55 and 55)
    import jax  # noqa: F401
    assert jax_caches._seen_qdds() is not None
    step = tg.compile(_mlp_step(), executor="jax", cache_size=2)
    sizes = []
    with pytest.warns(UserWarning, match="recompiled more than 2 times"):
        for n in range(2, 14):
            step(*_batch(n))
            sizes.append(sum(len(v) for v in jax_caches._seen_qdds().values()))
    # what the last trace made, however many programs came before
    assert max(sizes[3:]) <= max(sizes[:3]) + 5, sizes


def _xla_executables() -> int:
    """XLA executables jax's compilation cache holds (keyed weakly: what something keeps)."""
    from jax._src.interpreters import pxla
    return pxla._cached_compilation.cache_info().currsize


def test_programs_tg_compile_evicts_leave_no_jaxpr_or_executable_behind():
    step = tg.compile(_mlp_step(), executor="jax", cache_size=2)
    # the collector off: a dropped program must go by reference counting alone, since its
    # XLA executable is native memory that never hastens a collection (issue 18: a closure
    # on each entry over the entry itself kept 13 dropped executables alive at step 30,
    # and the soak's RSS grew ~45 MiB per 50 steps instead of ~19 while jax's bounded
    # caches fill)
    gc.collect()
    gc.disable()
    try:
        with pytest.warns(UserWarning, match="recompiled more than 2 times"):
            for n in (2, 3, 4):   # the cache is full
                step(*_batch(n))
            released, refs, sizes = jax_caches.releases[0], [], []
            executables = _xla_executables()
            for n in range(5, 11):
                step(*_batch(n))
                refs += [weakref.ref(e._exe.lowered()) for bucket in step._cache.values()
                         for e in bucket]
                sizes.append(_traced_jaxprs())
        kept = {id(e._exe.lowered()) for bucket in step._cache.values() for e in bucket}
        assert len(kept) == 2
        assert all(ref() is None or id(ref()) in kept for ref in refs), "an evicted program lives"
        # jax's compilation cache: no more executables than before the six new programs
        # (each drop empties jax's Python caches, this one too; the live programs' calls
        # are served by the C++ caches)
        assert _xla_executables() <= executables, (executables, _xla_executables())
    finally:
        gc.enable()
    assert jax_caches.releases[0] - released == 6   # one per dropped program
    # issue 18: each new batch size left ~41 jaxprs in that cache for good; emptied on
    # every drop, it holds what the last trace made (52-53 here: with jax's other caches
    # emptied too, every nested call is traced again), however many programs came before
    assert max(sizes) <= 60, sizes   # without the release, in a fresh process: 174, 215, ... 378


def test_backward_programs_the_eager_cache_evicts_release_their_jax_executables(monkeypatch):
    monkeypatch.setattr(backward_program, "CACHE_SIZE", 2)
    backward_program.clear_cache()
    tg.set_executor("jax")
    step = _mlp_step()
    for n in (20, 21, 22):
        step(*_batch(n))
    released, refs = jax_caches.releases[0], []
    for n in range(23, 29):
        step(*_batch(n))
        refs += [weakref.ref(p._exe._lowered) for p in backward_program._cache.values()
                 if p._exe._lowered is not None]
    gc.collect()
    kept = {id(p._exe._lowered) for p in backward_program._cache.values()}
    assert all(ref() is None or id(ref()) in kept for ref in refs)
    assert len(backward_program._cache) == 2
    assert jax_caches.releases[0] - released >= 6


def test_thirty_new_batch_sizes_leave_the_eager_caches_at_their_bounds(monkeypatch):
    # the cheap twin of the slow loops (30 steps, ~1.5 s): every step a new batch size, the collector off, so
    # that what counts is what reference counting frees (a dropped program in a cycle would
    # stay among gc.get_objects() until a full collection)
    monkeypatch.setattr(backward_program, "CACHE_SIZE", 4)
    backward_program.clear_cache()
    tg.set_executor("auto")   # new programs stay on the interpreter: no XLA compile here,
    monkeypatch.setattr(crosscheck, "enabled", lambda: False)   # not even the tests' check
    step = _mlp_step()

    def live_programs():
        return sum(type(o) is backward_program.BackwardProgram for o in gc.get_objects())

    gc.collect()
    gc.disable()
    try:
        counts = []
        for n in range(1, 31):
            step(*_batch(n))
            if n % 10 == 0:
                counts.append((len(backward_program._cache), live_programs()))
    finally:
        gc.enable()
    assert counts == [(4, 4)] * 3, counts


def test_on_xla_kernels_are_one_jitted_function_per_signature_and_evicted_lru(monkeypatch):
    monkeypatch.setattr(handoff, "KERNELS", type(handoff.KERNELS)())
    monkeypatch.setattr(handoff, "KERNELS_MAX", 2)

    def kernel(xp, a, *, k):
        return a * k

    released, jitted = jax_caches.releases[0], {}
    for n in (1, 2, 1, 3):   # size 1 is used again before size 3 comes: size 2 is dropped
        out = handoff.run(kernel, [np.full(n, 2.0)], {"k": 3.0})
        np.testing.assert_array_equal(out, np.full(n, 6.0))
        jitted.setdefault(n, [weakref.ref(f) for f in handoff.KERNELS.values()][-1])
    assert [key[2][0][0] for key in handoff.KERNELS] == [(1,), (3,)]
    gc.collect()
    assert jitted[2]() is None and jitted[1]() is not None   # and its executable with it
    assert jax_caches.releases[0] - released == 1


def test_forward_mode_jacobian_programs_release_what_jax_kept(monkeypatch):
    monkeypatch.setattr(jacobian_batched, "_JVP_PROGRAMS", type(jacobian_batched._JVP_PROGRAMS)())
    monkeypatch.setattr(jacobian_batched, "_JVP_CACHE_SIZE", 1)
    tg.set_executor("jax")
    released = jax_caches.releases[0]
    for n in (2, 3, 4):
        x = tg.arange(float(n))
        jac = tg.autograd.functional.jacobian(lambda t: t * t, x, vectorize=True,
                                              strategy="forward-mode")
        np.testing.assert_array_equal(jac.numpy(), np.diag(2 * np.arange(float(n))))
    assert len(jacobian_batched._JVP_PROGRAMS) == 1
    assert jax_caches.releases[0] - released == 2


def _step_bits(monkeypatch, make_step, batches):
    """Losses and final parameters of a freshly traced compiled step, as bytes."""
    from tracegrad.compiler import entry
    # no program shared with an earlier trace
    monkeypatch.setattr(entry, "_SHARED", weakref.WeakValueDictionary())
    step, params = make_step()
    out = [step(*b).numpy().tobytes() for b in batches]
    return out + [p.detach().numpy().tobytes() for p in params]


def _mlp_adamw():
    tg.manual_seed(1)
    model = tg.nn.Sequential(tg.nn.Linear(5, 7), tg.nn.GELU(), tg.nn.LayerNorm(7),
                             tg.nn.Linear(7, 3))
    opt = tg.optim.AdamW(model.parameters(), lr=0.01)

    @tg.compile(executor="jax")
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x).log_softmax(-1), y, label_smoothing=0.1)
        loss.backward()
        opt.step()
        return loss
    return step, list(model.parameters())


def _lstm():
    tg.manual_seed(2)
    lstm = tg.nn.LSTM(3, 5)
    opt = tg.optim.SGD(lstm.parameters(), lr=0.1)

    @tg.compile(executor="jax")
    def step(x):   # a lax.scan on jax: a release must not change how it is traced
        opt.zero_grad()
        out, _ = lstm(x)
        loss = (out * out).mean()
        loss.backward()
        opt.step()
        return loss
    return step, list(lstm.parameters())


@pytest.mark.parametrize("make_step", [_mlp_adamw, _lstm])
def test_programs_traced_after_a_release_compute_the_same_bits(monkeypatch, make_step):
    # a release only empties a cache: jax traces the same functions again, XLA gets the same
    # computation.  (Tracing under jax.disable_jit() instead, tried first, unrolled the
    # LSTM's lax.scan: other bits, and a 64-step LSTM took 137 s to compile instead of 1.5.)
    monkeypatch.setattr(compile_module, "_collect_if_grown", lambda: None)
    tg.manual_seed(3)
    batches = ([(tg.randn(6, 5), tg.randint(0, 3, (6,)))] * 3 if make_step is _mlp_adamw
               else [(tg.randn(4, 2, 3),)] * 3)
    kept = _step_bits(monkeypatch, make_step, batches)
    jax_caches.programs_evicted()
    assert _traced_jaxprs() == 0
    assert _step_bits(monkeypatch, make_step, batches) == kept


def test_a_full_collection_runs_once_the_heap_has_grown_between_traces(monkeypatch):
    # the collections a trace runs see only its own objects (the older ones are frozen) and
    # reset CPython's count for a full pass: tracing on every call, garbage that reached
    # the oldest generation between traces was never collected (issue 18)
    class Cycle:
        pass

    fn = tg.compile(lambda x: x * 2)
    fn(tg.ones(1))
    c = Cycle()
    c.me = c
    ref = weakref.ref(c)
    gc.collect()      # c survives into the oldest generation, then becomes cyclic garbage
    del c
    monkeypatch.setattr(compile_module, "_blocks_after_full",
                        [sys.getallocatedblocks() // 2])   # "the heap doubled since"
    fn(tg.ones(2))    # a new shape: one more trace
    assert ref() is None
    after = compile_module._blocks_after_full[0]
    assert after > sys.getallocatedblocks() // 2   # the new baseline: the heap just now


# ---- slow: the loops, in a process of their own -----------------------------------------------
SCRIPT = os.path.join(os.path.dirname(__file__), "_soak.py")


def _soak(mode: str, shapes: str, warmup: int, steps: int, every: int,
          timeout: int = 1800, **env_extra: str) -> dict:
    env = dict(os.environ, TRACEGRAD_CROSSCHECK="0", TRACEGRAD_VERIFY="0", **env_extra)
    out = subprocess.run([sys.executable, SCRIPT, mode, shapes, str(warmup), str(steps),
                          str(every)], env=env, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["compile", "auto"])
def test_one_shape_training_keeps_its_memory(mode):
    # ~10 s each: after 300 steps, 3,000 more grow the RSS by under 1 MiB per 1,000 steps.
    # `auto` moves the step's programs to jax once their interpreted time reaches the
    # compile estimate, which for this small MLP took ~1,000 steps (importing jax and
    # compiling: +186 MiB at once, inside the measured window); promoted after 50 runs
    # they are on jax before the warm-up ends, as a long run's would be
    r = _soak(mode, "fixed", 300, 3000, 500, TRACEGRAD_HOT_AFTER="50")
    rss = r["rss_mib"]
    assert max(rss) - rss[0] < 3.0, rss
    assert r["objects"][1] - r["objects"][0] < 500, r["objects"]


# RSS growth allowed from the end of the warm-up on, MiB.  Compiled, measured (2,000 steps,
# tests/api/_soak.py's loop, 2 shared cores, after the Entry cycle fix): 338 MiB at step
# 50, 376 at 500, 397 at 1,000, 420 at 1,500, 437 at 2,000, i.e. +61 MiB after the
# warm-up, still ~4 MiB per 100 steps: jax objects keyed by shape (lists, tuples,
# ShapedArray, NamedSharding, ~100 per new shape) keep accumulating, so the 50 MiB
# was not met; 80 MiB guarded what was fixed (before it: +82 MiB in 100 steps, 401 ->
# 483 MiB at steps 50-150, 21 XLA executables alive for 8 programs at step 30).
# The eager jax executor (240 steps after 60): 342.6 -> 364.3 MiB, 32 executables.
# Tried on 2026-12-03 (issue 18's note): emptying only jax's shape-keyed bounded caches on
# each drop gained nothing (+34 vs +26 MiB over 600 steps); glibc's malloc_trim on each drop
# lowers the level by ~33 MiB (kept); tracemalloc put the growth (~10 MB per 100 steps)
# inside jax's Python caches, and emptying all of them (kept) halves the slope, which a
# 150-step comparison was too short to show.
# Since each drop empties all of jax's Python caches (ir/jax_caches.py, 2026-12-03): 334.5
# MiB at +100 steps, 341.0, 339.9, 335.5, 345.9, 345.0, 352.0, 354.7, 356.6, 358.9 at +1,000 (~2.7
# MiB per 100 steps, from ~4-6 before; the run was stopped there).  The full run after it
# (500 + 1,500 steps, 0.65-0.85 s each, no trend): 323.3 MiB after the warm-up, a maximum of
# 375.2 at +1,400 (+51.9), 370.2 at the end (+46.9), 1 executable, +206,737 objects: just
# over the 50, so 60 guarded it.
# Since each drop also empties pjit._seen_qdds (2026-12-03, the same full run): 321.6 MiB
# after the warm-up, 315.6, 315.1, 317.0, 319.3, 316.4, 321.6, 323.1, 323.9, 332.2, 322.0,
# 323.5, 320.1, 325.5, 323.9, 326.3 at +100 ... +1,500: at most +10.7, +4.7 at the end;
# live objects 166,007 -> 158,994; 1 executable.  The bound holds with room.
GROWTH_MIB = {"compile": 50.0, "jax": 50.0, "auto": 50.0}


@pytest.mark.slow
@pytest.mark.parametrize("mode, warmup, steps, every, programs", [
    # issue 18's loop: 2,000 new batch sizes under tg.compile, a trace and an XLA compile
    # each: 0.55-0.9 s of CPU per step, flat over the 2,000 (~25-40 min on the shared cores)
    ("compile", 500, 1500, 100, 8),
    ("jax", 60, 240, 40, 32),        # ~3 min: a backward program built and compiled per step
    ("auto", 100, 1000, 100, 32),    # ~45 s: new programs stay on the interpreter (never hot)
])
def test_a_new_batch_size_every_step_keeps_memory_bounded(mode, warmup, steps, every,
                                                          programs):
    # a batch size never seen before on every step; our caches (8 compiled programs, 32
    # backward programs here) are full after the warm-up
    r = _soak(mode, "change", warmup, steps, every, timeout=3600)
    rss = r["rss_mib"]
    assert max(rss) - rss[0] < GROWTH_MIB[mode], rss
    grown = r["objects"][1] - r["objects"][0]
    assert grown < 200 * steps, r["objects"]
    # what jax still holds: the executables of the programs our caches keep, no more
    # (-1: jax never imported, as on `auto` when no program gets hot)
    assert r["executables"] <= programs, r["executables"]
