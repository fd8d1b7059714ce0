"""Ops of the autograd engine: `clone`.  The internal marks of hooks and custom Functions
(which never run as kernels of a user call) have their entries in program_ops.py.
"""
from __future__ import annotations

import tracegrad as tg

from .core import I64, OpInfo, _not_a_tensor, _unary_samples, uniform

OPS = [
    # Tensor.clone() calls this op; the generic checks call tg.clone
    OpInfo("clone", lambda x: tg.clone(x), lambda xp, x: xp.asarray(x) * 1,
           _unary_samples(uniform, I64), error_inputs=lambda: [_not_a_tensor("clone")],
           complex_samples=2),
]
