"""tg.compiler.set_persistent_cache / TRACEGRAD_COMPILATION_CACHE: compiled programs on disk
(jax's persistent compilation cache), read back by later compiles (issue 17: compile time)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import tracegrad as tg


@pytest.fixture
def jax_cache_config():
    import jax
    from jax.experimental.compilation_cache import compilation_cache
    before = (jax.config.jax_compilation_cache_dir,
              jax.config.jax_persistent_cache_min_compile_time_secs)
    yield
    jax.config.update("jax_compilation_cache_dir", before[0])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", before[1])
    compilation_cache.reset_cache()


def _cache_events():
    """Counts of jax's persistent-cache events from now on."""
    import jax
    seen = {"hits": 0, "misses": 0}

    def listen(event, **kwargs):
        if event == "/jax/compilation_cache/cache_hits":
            seen["hits"] += 1
        elif event == "/jax/compilation_cache/cache_misses":
            seen["misses"] += 1
    jax.monitoring.register_event_listener(listen)
    return seen, listen


def _step():
    def f(x, w):
        return ((x @ w).tanh() * 3.0 + 0.25).sum()
    return f


def test_a_second_compile_of_the_same_program_reads_the_executable_from_disk(
        tmp_path, jax_cache_config):
    from jax._src import monitoring
    tg.compiler.set_persistent_cache(tmp_path / "xla")
    seen, listen = _cache_events()
    try:
        x = tg.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
        w = tg.tensor(np.linspace(0.5, -0.5, 8, dtype=np.float32).reshape(4, 2))
        first = tg.compile(_step(), executor="jax")(x, w)
        files = os.listdir(tmp_path / "xla")
        assert files, "nothing written"
        assert seen["misses"] >= 1 and seen["hits"] == 0, seen
        # a new tg.compile of the same function: a new jitted program, the same StableHLO
        second = tg.compile(_step(), executor="jax")(x, w)
        assert seen["hits"] >= 1, seen
        # the reference: NumPy in float64
        xn, wn = x.numpy().astype(np.float64), w.numpy().astype(np.float64)
        want = (np.tanh(xn @ wn) * 3.0 + 0.25).sum()
        np.testing.assert_allclose(first.item(), want, rtol=1e-6)
        assert second.item() == first.item()
    finally:
        monitoring._event_listeners.remove(listen)   # jax has no public unregister
    tg.compiler.set_persistent_cache(None)
    n = len(os.listdir(tmp_path / "xla"))
    tg.compile(lambda x: (x * 7.0).sum(), executor="jax")(tg.ones(5))
    assert len(os.listdir(tmp_path / "xla")) == n   # off: nothing more written


def test_the_environment_variable_turns_it_on_at_import(tmp_path):
    code = ("import tracegrad as tg\n"
            "f = tg.compile(lambda x: (x.exp() * 2.0).sum(), executor='jax')\n"
            "print(f(tg.ones(3)).item())\n")
    env = dict(os.environ, TRACEGRAD_COMPILATION_CACHE=str(tmp_path / "env"))
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) == pytest.approx(6 * np.e, rel=1e-6)
    assert os.listdir(tmp_path / "env"), "nothing written"


def test_bad_arguments_say_which(tmp_path):
    with pytest.raises(TypeError, match="argument 'path' must be str, os.PathLike or None, "
                                        "not int"):
        tg.compiler.set_persistent_cache(3)
    with pytest.raises(TypeError, match="'min_compile_time_s' must be a non-negative number"):
        tg.compiler.set_persistent_cache(tmp_path, min_compile_time_s=-1)
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match="is a file, not a directory"):
        tg.compiler.set_persistent_cache(tmp_path / "f")
