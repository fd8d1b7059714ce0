"""Ops of the autograd engine: `clone`, and the internal marks of hooks and custom Functions.

The internal ops never run as kernels: they mark a forward graph for the
autodiff pass, or call Python hooks / ``Function.backward`` from a backward
program (tracegrad/autograd/hooks.py); tests/api/test_hooks.py and
test_function.py exercise them on both executors.
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

NOT_IN_OPDB = {
    "tensor_hooks": "forward mark of a hooked tensor (engine-internal): tests/api/test_hooks.py",
    "node_hooks": "forward mark of a node with hooks (engine-internal): tests/api/test_hooks.py",
    "host_call": "a Python hook / Function.backward in a backward program: tests/api/test_hooks.py",
    "custom_function": "an autograd.Function application: tests/api/test_function.py",
}
