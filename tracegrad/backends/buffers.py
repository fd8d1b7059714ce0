"""Program outputs as distinct buffers: what a tensor gets from a program is its own.

A program may return one array more than once (CSE merged two equal gradients: an RNN
cell's ``bias_ih`` and ``bias_hh``), or return an input array itself (an output that is
an input, after simplification).  Tensor values are functional, so tracegrad's own
in-place ops never see the sharing; NumPy does: ``p.grad.numpy()`` is the tensor's
buffer (as in torch), and writing through it for one parameter would also change the
other, or the caller's input.  torch gives every ``.grad`` its own buffer, so each
output array that shares memory with an earlier output or with an input is copied.
Read-only arrays (jax's outputs) cannot be written through and are left as they are.
"""
from __future__ import annotations

import numpy as np


def _root(a) -> int:
    """id of the object owning `a`'s memory (the end of its ``.base`` chain)."""
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return id(a)


def distinct(outputs: list, inputs=()) -> list:
    """`outputs` with every writeable array that shares its buffer with an earlier output,
    or with one of `inputs`, replaced by a copy (the list is changed in place and
    returned)."""
    taken = None
    for k, a in enumerate(outputs):
        if not isinstance(a, np.ndarray) or not a.flags.writeable:
            continue
        if taken is None:
            taken = {_root(b) for b in inputs if isinstance(b, np.ndarray)}
        root = _root(a)
        if root in taken:
            outputs[k] = a = a.copy()
            root = id(a)
        taken.add(root)
    return outputs
