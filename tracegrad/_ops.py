"""torch-named functions for every op in the registry, generated, not hand-written.

``tracegrad._ops.mul(x, y)`` is ``x * y`` (``out=`` as torch's: `_out`); composites (mean, matmul,
cross_entropy ...) run their registry decomposition on tensors.
"""
from __future__ import annotations

import inspect
import re

from tracegrad.ir.registry import INTERNAL, REGISTRY, VIEW, CompositeDef

from . import _out

from .dispatch.frontend import EAGER


def _make(name: str, op):
    # torch has no out= on views; a composite whose signature has `out` handles it itself
    if op.flags & VIEW or (isinstance(op, CompositeDef) and re.search(r"\bout\b", op.signature)):
        def fn(*args, **kwargs):
            return EAGER.call(name, *args, **kwargs)
    else:
        def fn(*args, out=None, **kwargs):
            if out is None:
                return EAGER.call(name, *args, **kwargs)
            return _out.write(name, EAGER.call(name, *args, **kwargs), out)
    fn.__name__ = fn.__qualname__ = name
    params = (op.signature if isinstance(op, CompositeDef)
              else ", ".join(list(op.inputs) + [f"{a}={d!r}" for a, d in op.attrs]))
    # a composite's decomposition documents the op where it has a docstring (isclose ...)
    about = (inspect.getdoc(op.decomp) if isinstance(op, CompositeDef) else None) or \
        f"Follows {op.ref or name}; see the op registry for its rules."
    fn.__doc__ = f"{name}({params})\n\n{about}"
    return fn


for _name, _op in REGISTRY.items():
    globals()[_name] = _make(_name, _op)

# IR-level ops (batched_matmul, slice, convert ...) stay out of `tg.*`; the rest is torch's surface.
__all__ = sorted(n for n, op in REGISTRY.items() if not op.flags & INTERNAL)
