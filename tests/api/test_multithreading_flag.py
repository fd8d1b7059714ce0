"""tg.autograd.set_multithreading_enabled / is_multithreading_enabled, as torch 2.13's.

tracegrad runs every backward on the calling thread, so the flag is only recorded; what it
reads back, when it is set and restored, and its errors are torch 2.13's (recorded with the
same calls, "torch 2.13").
"""
import threading

import numpy as np
import pytest

import tracegrad as tg

A = tg.autograd


@pytest.fixture(autouse=True)
def _restore():
    yield
    A.set_multithreading_enabled(True)


def test_context_manager_and_function():
    # torch 2.13: True by default; False inside the block, True after; as a function it sets
    # the flag until set again
    assert A.is_multithreading_enabled() is True
    with A.set_multithreading_enabled(False):
        assert A.is_multithreading_enabled() is False
    assert A.is_multithreading_enabled() is True
    flag = A.set_multithreading_enabled(False)
    assert isinstance(flag, A.set_multithreading_enabled)
    assert A.is_multithreading_enabled() is False
    assert A.grad_mode.set_multithreading_enabled is A.set_multithreading_enabled


def test_decorator_sets_it_when_made():
    # torch 2.13: @set_multithreading_enabled(False) sets the flag at once (its __init__) and
    # leaves it False; the call runs with False (a clone) and restores the value it found
    @A.set_multithreading_enabled(False)
    def f():
        return A.is_multithreading_enabled()
    assert A.is_multithreading_enabled() is False
    assert f() is False
    assert A.is_multithreading_enabled() is False

    def gen():
        yield A.is_multithreading_enabled()
    A.set_multithreading_enabled(True)
    wrapped = A.set_multithreading_enabled(False)(gen)
    assert list(wrapped()) == [False]


def test_thread_local():
    # torch 2.13: another thread starts with True
    A.set_multithreading_enabled(False)
    seen = []
    t = threading.Thread(target=lambda: seen.append(A.is_multithreading_enabled()))
    t.start()
    t.join()
    assert seen == [True] and A.is_multithreading_enabled() is False


def test_backward_is_unchanged():
    x = tg.ones(2, requires_grad=True)
    with A.set_multithreading_enabled(False):
        (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2])


def test_errors():
    # torch 2.13's TypeErrors
    with pytest.raises(TypeError, match=r"set_multithreading_enabled\(\): argument 'enabled' "
                                        r"\(position 1\) must be bool, not str"):
        A.set_multithreading_enabled("x")
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'mode'"):
        A.set_multithreading_enabled()
