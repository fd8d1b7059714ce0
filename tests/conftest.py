"""Shared test set-up: verifier after every pass, jax-vs-interpreter cross-checks."""
import os

os.environ.setdefault("TRACEGRAD_VERIFY", "1")
# every program that runs on jax is re-run on the interpreter and compared
os.environ.setdefault("TRACEGRAD_CROSSCHECK", "1")

import weakref  # noqa: E402

import pytest  # noqa: E402

import tracegrad as tg  # noqa: E402

_ROUND_TRIPPED = weakref.WeakSet()   # backward programs and tg.compile entries already checked


@pytest.fixture(autouse=True)
def _reset_executor():
    """Each test starts on the default executor with grad mode on; every backward program
    the test left in the cache, and every program `tg.compile` traced (forward and backward),
    must print and parse back to an equal graph (DESIGN.md 2)."""
    from tracegrad.autograd import engine
    from tracegrad.compiler.compile import LIVE as compiled_functions
    from tracegrad.ir import parse, print_graph
    tg.set_executor("auto")
    yield
    tg.set_executor("auto")
    tg.set_grad_enabled(True)
    # each program once: re-printing the whole cache (up to 512 programs) at every
    # teardown was two thirds of `make test`'s time
    for prog in [p for p in list(engine._cache.values()) if p not in _ROUND_TRIPPED]:
        _ROUND_TRIPPED.add(prog)
        text = print_graph(prog.graph)
        assert parse(text) == prog.graph, f"IR text does not round-trip:\n{text}"
    for fn in list(compiled_functions):
        for entry in [e for bucket in list(fn._cache.values()) for e in bucket]:
            if entry in _ROUND_TRIPPED or not hasattr(entry, "graph"):   # eager (graph break)
                continue
            _ROUND_TRIPPED.add(entry)
            plan = entry.grad_plan
            for g in [entry.graph] + ([plan.backward] if plan is not None else []):
                text = print_graph(g)
                assert parse(text) == g, f"a compiled program does not round-trip:\n{text}"


@pytest.fixture(params=["interpreter", "jax"])
def executor(request):
    """Run the test once per executor (the autouse fixture above restores "auto")."""
    tg.set_executor(request.param)
    return request.param
