"""`TRACEGRAD_DUMP=DIR` and `TRACEGRAD_LOG=recompiles,passes,guards`.

With ``TRACEGRAD_DUMP`` set, every program tracegrad builds is written to DIR
in the IR text format: compiled steps as ``<function>_<hash>.tgir`` with the
reason they were (re)compiled in ``<function>_<hash>.why.txt``, backward
programs as ``backward_<hash>.tgir`` plus one file per pass
(``backward_<hash>.<k>_<pass>.tgir``).  ``<hash>`` is a short structural hash.
``TRACEGRAD_LOG`` turns on `logging` output of the named categories under the
``tracegrad`` logger (recompiles and guards: ``tracegrad.compile``; passes:
``tracegrad.passes``).
"""
from __future__ import annotations

import hashlib
import logging
import os
import re

_LOGGERS = {"recompiles": "tracegrad.compile", "guards": "tracegrad.compile",
            "passes": "tracegrad.passes"}


def short_hash(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def directory() -> str | None:
    return os.environ.get("TRACEGRAD_DUMP") or None


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
    from tracegrad.ir.printer import print_graph
    count = [0]

    def on_pass(name, g) -> None:
        write(f"{prefix}.{count[0]}_{name}.tgir", print_graph(g))
        count[0] += 1
    return on_pass


def configure_logging() -> None:
    """Apply TRACEGRAD_LOG: a stderr handler at INFO for each named category."""
    spec = os.environ.get("TRACEGRAD_LOG")
    if not spec:
        return
    for cat in (c.strip() for c in spec.split(",") if c.strip()):
        if cat not in _LOGGERS:
            raise ValueError(f"TRACEGRAD_LOG: unknown category {cat!r}; known: {sorted(_LOGGERS)}")
        logger = logging.getLogger(_LOGGERS[cat])
        logger.setLevel(logging.INFO)
        if not logger.handlers:
            handler = logging.StreamHandler()
            handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
            logger.addHandler(handler)
