"""Ops the compiler and the PRNG add: `checkpoint_name` (an identity tag), and the
Threefry ops behind rand/randn (not differentiable; tests/api/test_random.py
checks their stream, distributions and eager/compiled agreement)."""
from __future__ import annotations

import tracegrad as tg

from .core import I64, OpInfo, _unary_samples, uniform

OPS = [
    OpInfo("checkpoint_name", lambda x: tg.checkpoint_name(x, "tag"), lambda xp, x: xp.asarray(x) * 1,
           _unary_samples(uniform, I64), complex_samples=2),
]

NOT_IN_OPDB = {
    "random": "Threefry draws (no gradient, no NumPy reference stream): tests/api/test_random.py",
    "rng_next_key": "advances the PRNG key (no gradient): tests/api/test_random.py",
}
