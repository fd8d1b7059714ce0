"""The op database: `OpInfo` entries gathered from every module in this package.

`core.py` holds the classes (Sample, ErrorInput, OpInfo), the input
generators and the foundation ops; each other module (one per op family)
defines ``OPS: list[OpInfo]``.  Every registry op has an entry (an op no user call
can run says why in its entry, `OpInfo.exercised_by`).  Modules are found
automatically, so families are added without touching a shared file.
"""
from __future__ import annotations

import importlib
import pkgutil

from .core import F32, F64, I64, BOOL, ErrorInput, OpInfo, Sample  # noqa: F401
from . import core

OPS: list[OpInfo] = list(core.OPS)

for _mod in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _mod == "core":
        continue
    _m = importlib.import_module(f"{__name__}.{_mod}")
    OPS.extend(_m.OPS)

_names = [o.name for o in OPS]
_dupes = sorted({n for n in _names if _names.count(n) > 1})
if _dupes:
    raise ValueError(f"op database: entries declared twice: {_dupes}")


def point_checks(kind: type, where=lambda record: True) -> dict:
    """The `kind` records (core.Subgradient, ...) of every entry's ``point_checks`` that
    `where` accepts, by name (the test id); a name given twice is an error."""
    out: dict = {}
    for info in OPS:
        for r in info.point_checks:
            if isinstance(r, kind) and where(r):
                if r.name in out:
                    raise ValueError(f"op database: {kind.__name__} {r.name!r} declared twice")
                out[r.name] = r
    return out
