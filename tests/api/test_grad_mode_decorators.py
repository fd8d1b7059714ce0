"""Grad modes as torch's decorators: generators keep the mode across yields, bare
``@tg.no_grad``, ``inference_mode(mode=...)``, ``tg.is_inference`` (issue 14).

Every expected value was printed by the same program under torch 2.13.
"""
import asyncio

import pytest

import tracegrad as tg


def test_no_grad_generator_keeps_its_mode_across_yields():
    @tg.no_grad()
    def gen():
        for _ in range(2):
            yield tg.is_grad_enabled()

    g = gen()
    # torch 2.13: False inside, True for the caller between steps, False again
    assert (next(g), tg.is_grad_enabled(), next(g)) == (False, True, False)


def test_enable_grad_generator_inside_no_grad():
    @tg.enable_grad()
    def gen():
        yield tg.is_grad_enabled()
        yield tg.is_grad_enabled()

    with tg.no_grad():
        g = gen()
        first = next(g)
        caller = tg.is_grad_enabled()
    assert (first, caller, next(g)) == (True, False, True)   # torch 2.13


def test_inference_mode_and_set_grad_enabled_generators():
    @tg.inference_mode()
    def gen():
        yield tg.is_inference_mode_enabled()
        yield tg.is_inference_mode_enabled()

    g = gen()
    assert (next(g), tg.is_inference_mode_enabled(), next(g)) == (True, False, True)  # torch 2.13

    @tg.set_grad_enabled(False)
    def gen2():
        yield tg.is_grad_enabled()

    g = gen2()
    assert (next(g), tg.is_grad_enabled()) == (False, True)   # torch 2.13


def test_generator_send_throw_close_run_inside_the_mode():
    seen = []

    @tg.no_grad()
    def gen():
        try:
            got = yield 1
            seen.append(("sent", got, tg.is_grad_enabled()))
            yield 2
        except ValueError:
            seen.append(("thrown", tg.is_grad_enabled()))
            yield 3
        finally:
            seen.append(("closed", tg.is_grad_enabled()))

    g = gen()
    assert next(g) == 1 and g.send("x") == 2 and g.throw(ValueError("v")) == 3
    g.close()
    assert seen == [("sent", "x", False), ("thrown", False), ("closed", False)]
    assert tg.is_grad_enabled()


def test_generator_return_value_passes_through():
    @tg.no_grad()
    def gen():
        yield 1
        return "done"

    def outer():
        result = yield from gen()
        yield result

    assert list(outer()) == [1, "done"]


def test_bare_decorators_without_parentheses():
    @tg.no_grad
    def f(x):
        return x * 2

    @tg.enable_grad
    def g():
        return tg.is_grad_enabled()

    @tg.inference_mode
    def h():
        return tg.is_inference_mode_enabled()

    assert f(tg.ones(1, requires_grad=True)).requires_grad is False   # torch 2.13: False
    with tg.no_grad():
        assert g() is True                                             # torch 2.13: True
    assert h() is True                                                 # torch 2.13: True
    assert tg.no_grad()(lambda x: x * 2)(tg.ones(1, requires_grad=True)).requires_grad is False


def test_decorating_a_class_warns_as_torch():
    with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):   # torch 2.13
        @tg.no_grad()
        class C:
            def __init__(self):
                self.mode = tg.is_grad_enabled()

    assert C().mode is False


def test_coroutine_as_torch_keeps_the_mode_only_while_created():
    @tg.no_grad()
    async def co():
        await asyncio.sleep(0)
        return tg.is_grad_enabled()

    assert asyncio.run(co()) is True   # torch 2.13: True (torch wraps only the call)


def test_inference_mode_keyword_and_is_inference():
    with tg.inference_mode(mode=False):
        assert (tg.is_inference_mode_enabled(), tg.is_grad_enabled()) == (False, True)
    with tg.inference_mode(mode=True):
        t = tg.ones(2)
        # torch 2.13: True False True True
        assert (tg.is_inference_mode_enabled(), tg.is_grad_enabled(), tg.is_inference(t),
                t.is_inference()) == (True, False, True, True)
    assert tg.is_inference(tg.ones(1)) is False
    with pytest.raises(TypeError) as e:
        tg.is_inference(1)
    # torch 2.13
    assert str(e.value) == "is_inference(): argument 'input' (position 1) must be Tensor, not int"

    @tg.inference_mode(False)
    def f():
        return tg.is_inference_mode_enabled()

    with tg.inference_mode():
        assert f() is False   # torch 2.13


def test_set_grad_enabled_as_function_context_and_decorator():
    tg.set_grad_enabled(False)
    try:
        assert not tg.is_grad_enabled()
    finally:
        tg.set_grad_enabled(True)
    with tg.set_grad_enabled(False):
        assert not tg.is_grad_enabled()
    assert tg.is_grad_enabled()

    @tg.set_grad_enabled(False)
    def f():
        return tg.is_grad_enabled()

    assert tg.is_grad_enabled() and f() is False and tg.is_grad_enabled()
