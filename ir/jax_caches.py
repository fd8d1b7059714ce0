"""What jax keeps for the programs our caches drop, and how it is released.

Every cache of programs above the IR (tg.compile's entries, the eager backward programs,
the forward-mode jacobian programs, ops/_xla_handoff.py's kernels) owns the only
reference to each program's ``jax.jit`` function.  jax keys its caches of jaxprs,
lowerings and executables by that function, weakly, so they go with the program.

What does not go with it: most of jax.numpy is itself jitted, and tracing a program calls
those functions as nested jitted functions, whose jaxprs jax caches per argument shape under
the module-level ``jnp`` functions, which never die.  All of those caches are bounded
(2,048 or 4,096 entries) but one: ``partial_eval.trace_to_jaxpr``'s, unbounded.  A loop
that made a new program every step (a new batch size) grew it by ~45 jaxprs per program
however few programs our caches kept (issue 18).  So each cache that drops a program calls
`programs_evicted`, which empties that one cache.  Emptying a cache never changes a
result (jax traces the same function again on a miss).

The bounded caches still fill: jax canonicalizes, traces and lowers every jitted call
through Python caches of 2,048-4,096 entries each, keyed by argument shapes and shardings
(``get_sharding``, ``_check_and_canonicalize_out_shardings``, the jaxprs of nested
jax.numpy calls ...), so a new batch size every step grew the heap by ~10 MB per 100
steps (tracemalloc) for ~2,000 steps before the last of them was full.  So a drop empties
all of jax's Python-level caches (``util.clear_all_caches``, the first half of
``jax.clear_caches()``).  Not the second half: the C++ caches of compiled executables,
which serve every call of a live program, stay, so live programs do not recompile (the
soak's step time was unchanged; the next new program traces its nested jax.numpy calls
afresh).  A call that misses them (arguments of another kind: other dtypes, a sharding)
traces and compiles again, as after ``jax.clear_caches()``.  Measured (tests/api/_soak.py, compile, a new
batch size every step, after 500 steps): RSS 334.5 MiB at +100 steps, 345.0 at +600,
where only emptying ``trace_to_jaxpr``'s cache grew from 376.1 to 389.5 in the first
300 steps.

One more table of jax's is neither a registered cache nor bounded: ``pjit._seen_qdds``,
keyed weakly by each jitted function (the module-level jax.numpy ones never die), which
records per argument type which "quantified" states (mutable arrays) a trace saw.  Its
index is part of ``trace_to_jaxpr``'s key, so it must only be emptied with that cache,
as here.  With both caches emptied, a new batch size every step still added ~38 entries
to it per step (76 lists, 22 tuples, 11 ShapedArrays, 7 NamedShardings: +17,000 objects
per 100 steps, all of the loop's remaining growth of live objects); emptied with them,
the live objects of 80 such steps grew by 2, and the soak's 1,500 steps after its
warm-up stayed within +10.7 MiB of RSS (issue 18's bound: 50).

A dropped program's XLA executable is native memory that glibc's allocator keeps in its
arenas after the free, fragmented among what later compiles allocate: a loop of new
shapes under tg.compile sat ~33 MiB higher after 250 steps than with the freed pages
returned (measured with tests/api/_soak.py's MLP).  So a drop also calls glibc's
``malloc_trim(0)`` (where the C library has it), which hands those pages back.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import sys

# how many times a dropped program emptied jax's unbounded trace cache (tests read it)
releases = [0]


def _unbounded_trace_cache():
    """jax's ``trace_to_jaxpr`` cache (``maxsize=None``), or None when this jax has none.

    A private attribute of jax (checked by tests/api/test_soak.py, so that a jax upgrade
    that moves it fails there, not silently)."""
    jax_pe = sys.modules.get("jax._src.interpreters.partial_eval")
    fn = getattr(jax_pe, "trace_to_jaxpr", None)
    return fn if hasattr(fn, "cache_clear") else None


def _seen_qdds():
    """jax's per-function table of traced "quantified" states (``pjit._seen_qdds``: a
    WeakKeyDictionary, unbounded), or None when this jax has none (a private attribute,
    checked by tests/api/test_soak.py)."""
    table = getattr(sys.modules.get("jax._src.pjit"), "_seen_qdds", None)
    return table if hasattr(table, "clear") else None


def _malloc_trim():
    """glibc's ``malloc_trim`` (returns freed heap pages to the system), or None elsewhere."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError, TypeError):   # not glibc (macOS, musl, Windows)
        return None


_TRIM = _malloc_trim()


def programs_evicted() -> None:
    """Called by every cache of programs when it drops one: empties jax's unbounded
    cache of traced jaxprs, which would otherwise keep the nested jax.numpy jaxprs of
    every program ever traced, its bounded Python caches and its unbounded table of
    traced states, and hands the freed heap pages back to the system (see the module
    docstring)."""
    cache = _unbounded_trace_cache()
    if cache is not None:
        cache.cache_clear()
        jax_util = sys.modules.get("jax._src.util")
        clear_all = getattr(jax_util, "clear_all_caches", None)
        if clear_all is not None:
            clear_all()
        seen = _seen_qdds()
        if seen is not None:
            seen.clear()
        releases[0] += 1
    if _TRIM is not None:
        _TRIM(0)
