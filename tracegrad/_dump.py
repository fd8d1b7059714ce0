"""`TRACEGRAD_DUMP=DIR` and `TRACEGRAD_LOG=recompiles,passes,guards`.

With ``TRACEGRAD_DUMP`` set, every program tracegrad builds is written to DIR
in the IR text format: compiled steps as ``<function>_<hash>.tgir`` with the
reason they were (re)compiled in ``<function>_<hash>.why.txt``, backward
programs as ``backward_<hash>.tgir`` plus one file per pass
(``backward_<hash>.<k>_<pass>.tgir``).  ``<hash>`` is a short structural hash.
The pass report of each program (per pass: time, nodes before and after, what it
did; `passes.PassRecord`) goes to ``<program>.passes.txt``.
``TRACEGRAD_LOG`` turns on `logging` output of the named categories under the
``tracegrad`` logger (recompiles and guards: ``tracegrad.compile``; passes:
``tracegrad.passes``).

`recording` (used by ``tracegrad dump``) also keeps, in memory, the text of
every backward program built inside it after each pass, and its partition
(the saved values and why each is saved), for the summary and HTML report.
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
from dataclasses import dataclass, field

from tracegrad.ir.printer import print_graph
from tracegrad.passes import format_records, settings


def short_hash(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:10]


@dataclass
class RecordedBackward:
    """A backward program built while `recording`: its text after each pass, its partition."""

    prefix: str
    passes: list = field(default_factory=list)   # (pass name, IR text)
    partition: object = None                     # passes.Partition (None until built)


_recording: dict | None = None     # prefix -> RecordedBackward while `recording` is active
_directory: str | None = None      # overrides TRACEGRAD_DUMP while `recording` is active


@contextlib.contextmanager
def recording(directory: str):
    """Dump into `directory` and record every backward program built inside the block.

    Yields the list of `RecordedBackward`, filled in build order.  Not thread-safe: meant for
    the `tracegrad dump` command, which builds its programs on one thread.
    """
    global _recording, _directory
    saved = _recording, _directory
    _recording, _directory = {}, directory
    out: list = []
    try:
        yield out
    finally:
        out.extend(_recording.values())
        _recording, _directory = saved


def directory() -> str | None:
    return _directory or settings.dump_directory()


def write(name: str, text: str) -> None:
    """Write DIR/name (when TRACEGRAD_DUMP is set); odd characters in `name` become '_'."""
    d = directory()
    if d is None:
        return
    os.makedirs(d, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    with open(os.path.join(d, safe), "w") as f:
        f.write(text if text.endswith("\n") else text + "\n")


def pass_writer(prefix: str):
    """A PassManager `on_pass` callback writing each pass's program, or None when not dumping."""
    if directory() is None:
        return None
    count = [0]

    def on_pass(name, g) -> None:
        text = print_graph(g)
        write(f"{prefix}.{count[0]}_{name}.tgir", text)
        if _recording is not None:
            _recording.setdefault(prefix, RecordedBackward(prefix)).passes.append((name, text))
        count[0] += 1
    return on_pass


def backward_built(prefix: str, part) -> None:
    """The engine built backward program `prefix` (a `passes.Partition`): write it, record it."""
    write(f"{prefix}.tgir", print_graph(part.backward))
    write(f"{prefix}.passes.txt", format_records(part.passes))
    if _recording is not None:
        _recording.setdefault(prefix, RecordedBackward(prefix)).partition = part


def configure_logging() -> None:
    """Apply TRACEGRAD_LOG: a stderr handler at INFO for each named category."""
    for cat in settings.log_categories():   # ValueError on an unknown category
        logger = logging.getLogger(settings.LOG_CATEGORIES[cat])
        logger.setLevel(logging.INFO)
        if not logger.handlers:
            handler = logging.StreamHandler()
            handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
            logger.addHandler(handler)
