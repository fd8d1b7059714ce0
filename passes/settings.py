"""Every ``TRACEGRAD_*`` environment setting, parsed in this one module.

==========================  =======================================================
``TRACEGRAD_DISABLE_PASSES``  comma-separated optional passes to skip (`OPTIONAL_PASSES`):
                              for bisecting a suspected pass bug; gradients never change
``TRACEGRAD_VERIFY``          ``1``: run the IR verifier after every pass
``TRACEGRAD_EXECUTOR``        initial executor of backward programs: ``auto`` (default),
                              ``jax`` or ``interpreter`` (``tg.set_executor`` changes it)
``TRACEGRAD_HOT_AFTER``       an int N: the ``auto`` executor moves a backward program to
                              jax on its run N + 1 (default: unset, when its interpreter
                              time reaches its estimated compile time)
``TRACEGRAD_CROSSCHECK``      ``1``: run every program on both executors and compare
``TRACEGRAD_DUMP``            a folder: write every program (and each pass) there as IR text
``TRACEGRAD_LOG``             comma-separated `LOG_CATEGORIES` to log to stderr
==========================  =======================================================

Why here: the readers are the pass manager (verify, disabled passes), the runtime
(executor, cross-check, dump, log) and the compiler, and layers import only downward
(ir < passes < dispatch/runtime < autograd < compiler), so the lowest layer with a
reader, `tracegrad.passes`, is the one every reader can import; `ir/` reads no setting.

Each variable is parsed on its first read and again only when its text in
``os.environ`` changed (the test suite switches some with ``monkeypatch.setenv``);
a read costs one ``os.environ`` lookup, as the scattered reads it replaces did.  A bad
value raises ValueError naming the variable when that setting is first read.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

OPTIONAL_PASSES = ("prune", "simplify", "cse", "fuse")
EXECUTORS = ("auto", "jax", "interpreter")
# TRACEGRAD_LOG category -> the logger it turns on
LOG_CATEGORIES = {"recompiles": "tracegrad.compile", "guards": "tracegrad.compile",
                  "passes": "tracegrad.passes"}

_UNREAD = object()


class _Variable:
    """One environment variable and its parsed value, re-parsed when its text changes."""

    __slots__ = ("name", "parse", "_raw", "_value")

    def __init__(self, name: str, parse: Callable[[str | None], object]):
        self.name, self.parse = name, parse
        self._raw, self._value = _UNREAD, None

    def get(self):
        raw = os.environ.get(self.name)
        if raw != self._raw:
            self._value = self.parse(raw)   # may raise: then the next read tries again
            self._raw = raw
        return self._value


def _names(raw: str | None) -> list[str]:
    return [s.strip() for s in (raw or "").split(",") if s.strip()]


def _disabled(raw: str | None) -> frozenset:
    names = frozenset(_names(raw))
    unknown = names - set(OPTIONAL_PASSES)
    if unknown:
        raise ValueError(f"TRACEGRAD_DISABLE_PASSES: unknown pass(es) {sorted(unknown)}; "
                         f"the optional passes are {OPTIONAL_PASSES}")
    return names


def _executor(raw: str | None) -> str:
    value = "auto" if raw is None else raw
    if value not in EXECUTORS:
        raise ValueError(f"TRACEGRAD_EXECUTOR={value!r} is not one of {EXECUTORS}")
    return value


def _hot_after(raw: str | None) -> int | None:
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"TRACEGRAD_HOT_AFTER={raw!r} is not a run count (an int >= 0)")
    return value


def _log(raw: str | None) -> tuple[str, ...]:
    cats = tuple(_names(raw))
    for cat in cats:
        if cat not in LOG_CATEGORIES:
            raise ValueError(f"TRACEGRAD_LOG: unknown category {cat!r}; known: "
                             f"{sorted(LOG_CATEGORIES)}")
    return cats


_DISABLE_PASSES = _Variable("TRACEGRAD_DISABLE_PASSES", _disabled)
_VERIFY = _Variable("TRACEGRAD_VERIFY", lambda raw: raw == "1")
_EXECUTOR = _Variable("TRACEGRAD_EXECUTOR", _executor)
_HOT_AFTER = _Variable("TRACEGRAD_HOT_AFTER", _hot_after)
_CROSSCHECK = _Variable("TRACEGRAD_CROSSCHECK", lambda raw: raw == "1")
_DUMP = _Variable("TRACEGRAD_DUMP", lambda raw: raw or None)
_LOG = _Variable("TRACEGRAD_LOG", _log)


def disabled_passes() -> frozenset:
    """``TRACEGRAD_DISABLE_PASSES``: names from `OPTIONAL_PASSES`. Raises ValueError on others."""
    return _DISABLE_PASSES.get()


def verify() -> bool:
    """``TRACEGRAD_VERIFY=1``: verify the IR after every pass (the test suite turns it on)."""
    return _VERIFY.get()


def executor() -> str:
    """``TRACEGRAD_EXECUTOR``: one of `EXECUTORS`. Raises ValueError on another name."""
    return _EXECUTOR.get()


def hot_after() -> int | None:
    """``TRACEGRAD_HOT_AFTER``: the ``auto`` executor's run count, or None (its cost rule)."""
    return _HOT_AFTER.get()


def crosscheck() -> bool:
    """``TRACEGRAD_CROSSCHECK=1``: every program also runs on the other executor."""
    return _CROSSCHECK.get()


def dump_directory() -> str | None:
    """``TRACEGRAD_DUMP``: the folder programs are written to, or None."""
    return _DUMP.get()


def log_categories() -> tuple[str, ...]:
    """``TRACEGRAD_LOG``: the `LOG_CATEGORIES` named. Raises ValueError on others."""
    return _LOG.get()


@dataclass(frozen=True)
class Settings:
    """All settings at one moment (for reports and debugging)."""

    disabled_passes: frozenset
    verify: bool
    executor: str
    hot_after: int | None
    crosscheck: bool
    dump: str | None
    log: tuple


def snapshot() -> Settings:
    return Settings(disabled_passes(), verify(), executor(), hot_after(), crosscheck(),
                    dump_directory(), log_categories())
