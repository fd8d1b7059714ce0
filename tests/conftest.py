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
def _reset_executor(request, monkeypatch):
    """Each test starts on the default executor with grad mode on; every backward program
    the test left in the cache, and every program `tg.compile` traced (forward and backward),
    must print and parse back to an equal graph (DESIGN.md 2).

    A test run once per executor (an ``executor`` parameter) runs its interpreter case with
    cross-check mode off: its jax case runs the same programs on jax, cross-checked against
    the interpreter, so cross-checking the interpreter case too compiled each program for
    XLA twice (~100 s of `make test`)."""
    params = getattr(getattr(request.node, "callspec", None), "params", {})
    if params.get("executor") == "interpreter":
        monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "0")
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


@pytest.fixture(params=[pytest.param(False, id="values"),
                        pytest.param(True, id="crosscheck", marks=pytest.mark.slow)])
def crosscheck_in_test_all(request, monkeypatch):
    """A sweep over the op database checks its values with cross-check mode off in `make
    test`, and again with it on in `make test-all`: the jax compile that cross-checks each
    backward program was four fifths of the finite-difference sweep's time, and the
    executors' agreement per op is `test_executors_agree`'s, which runs in `make test`."""
    monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "1" if request.param else "0")
    return request.param


@pytest.fixture(params=["interpreter", "jax"])
def executor(request):
    """Run the test once per executor (the autouse fixture above restores "auto")."""
    tg.set_executor(request.param)
    return request.param
