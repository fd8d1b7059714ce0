"""Shared test set-up: verifier after every pass, jax-vs-interpreter cross-checks."""
import os

os.environ.setdefault("TRACEGRAD_VERIFY", "1")
# every program that runs on jax is re-run on the interpreter and compared
os.environ.setdefault("TRACEGRAD_CROSSCHECK", "1")

import pytest  # noqa: E402

import tracegrad as tg  # noqa: E402


@pytest.fixture(autouse=True)
def _reset_executor():
    """Each test starts on the default executor with grad mode on; every backward program
    the test left in the cache must print and parse back to an equal graph (DESIGN.md 2)."""
    from tracegrad.autograd import engine
    from tracegrad.ir import parse, print_graph
    tg.set_executor("auto")
    yield
    tg.set_executor("auto")
    tg.set_grad_enabled(True)
    for prog in list(engine._cache.values()):
        text = print_graph(prog.graph)
        assert parse(text) == prog.graph, f"IR text does not round-trip:\n{text}"


@pytest.fixture(params=["interpreter", "jax"])
def executor(request):
    """Run the test once per executor (the autouse fixture above restores "auto")."""
    tg.set_executor(request.param)
    return request.param
