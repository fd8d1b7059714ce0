"""NumPy kernels that hand large inputs to XLA: ``run(kernel, arrays, attrs)`` runs the
op's jax kernel jitted on NumPy arrays and returns NumPy arrays (read-only views of XLA's
buffers, as the jax executor's outputs).  Used by conv and max_pool (ir/ops/conv.py),
uniform draws (random.py) and GELU (special.py), each above its own measured size.

Every caller asks `usable()` first: not in a forked child (a DataLoader worker), where jax,
started by the parent, does not survive ``fork()`` and would hang.
"""
from __future__ import annotations

import os
from collections import OrderedDict

import numpy as np

from ..jax_caches import programs_evicted

# The float dtypes the callers hand off (half precision stays on the NumPy kernels).
FLOATS = frozenset({np.dtype(np.float32), np.dtype(np.float64)})

# (kernel, attributes, input shapes and dtypes) -> its jitted kernel, least recently used
# first.  One jitted function per input signature, so that dropping one drops everything jax
# holds for it (its executable, ~1-3 MiB on the CPU, and its jaxpr: jax's caches key them by
# the function, weakly): per (kernel, attributes) with jax caching per shape inside, a batch
# size that changed every step grew the process by ~3.5 MiB per step (issue 18).
KERNELS: OrderedDict = OrderedDict()
KERNELS_MAX = 256

_forked = [False]   # set in a forked child (os.register_at_fork below)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _forked.__setitem__(0, True))


def usable() -> bool:
    """Whether a NumPy kernel may hand its work to XLA: not in a forked child."""
    return not _forked[0]


def run(kernel, arrays, attrs: dict):
    """``kernel(jnp, *arrays, **attrs)`` jitted, on NumPy arrays; NumPy arrays come back."""
    import jax  # function-level: jax loads on first use (start-up time)
    key = (kernel, tuple(attrs.items()), tuple((a.shape, a.dtype) for a in arrays))
    fn = KERNELS.get(key)
    if fn is None:
        fn = KERNELS[key] = jax.jit(lambda *a: kernel(jax.numpy, *a, **attrs))
        if len(KERNELS) > KERNELS_MAX:
            KERNELS.popitem(last=False)
            programs_evicted()
    else:
        KERNELS.move_to_end(key)
    with jax.enable_x64(True):   # float64 stays float64, indices int64 (as the jax executor)
        out = fn(*arrays)
        return tuple(map(np.asarray, out)) if isinstance(out, tuple) else np.asarray(out)
