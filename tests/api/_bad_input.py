"""The checks of the bad-input walk (tests/api/test_bad_input_walk*.py).

`E` is one bad input: a lambda making the call, the exception type tracegrad raises, the
op the message must name first (the one the user called: ``zeros``, not the ``full`` it
runs), words the message must hold (shapes, dtypes, the bad value) and torch 2.13's
error, recorded by running the same call there.  The user's source line is the lambda's
own line in the test file: the message must end with it.  `V` is an input torch 2.13
accepts: tracegrad gives torch's recorded values and dtype.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
import pytest


class E:
    """A bad input: ``E(lambda: call, ErrorType, "op", *words, torch="...")``."""

    __slots__ = ("fn", "error", "op", "words", "torch", "loc")

    def __init__(self, fn: Callable, error: type, op: str, *words: str, torch: str,
                 loc: bool = True):
        self.fn, self.error, self.op, self.words = fn, error, op, words
        self.torch, self.loc = torch, loc   # loc=False: Python itself raises (no op ran)


class V(NamedTuple):
    fn: Callable
    value: object
    dtype: str | None


def case_id(case) -> str:
    """The call's source text, as the test id."""
    import inspect   # (only for ids)
    src = inspect.getsource(case.fn).strip()
    start = src.index("lambda:") + len("lambda:")
    depth, end = 0, len(src)
    for i in range(start, len(src)):
        ch = src[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                end = i
                break
            depth -= 1
        elif ch == "," and depth == 0:
            end = i
            break
    return src[start:end].strip()


def check(case) -> None:
    if isinstance(case, V):
        out = case.fn()
        if case.dtype is None:
            assert out == case.value
            return
        assert out.dtype.name == case.dtype
        np.testing.assert_array_equal(np.asarray(out.tolist()), np.asarray(case.value))
        assert out.tolist() == case.value
        return
    with pytest.raises(case.error) as exc:
        case.fn()
    assert type(exc.value) is case.error, (type(exc.value), str(exc.value))
    msg = str(exc.value)
    first = msg.split("\n")[0]
    if case.op:   # named first (``op:`` or ``op(``), or as torch's own text names it (``numpy()``)
        assert first.startswith((f"{case.op}:", f"{case.op}(", f"{case.op} ")) \
            or f"{case.op}()" in first, msg
    for w in case.words:
        assert w in msg, (w, msg)
    if case.loc:   # the user's line, once
        code = case.fn.__code__
        where = f"{code.co_filename}:{code.co_firstlineno}"
        assert msg.count("\n  at ") == 1 and msg.rstrip().split("\n  at ")[1].startswith(where), msg
