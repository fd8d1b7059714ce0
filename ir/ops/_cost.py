"""FLOP rules of the ops whose cost their flags do not give, as `Cost` values to declare with
``defop(..., cost=...)``; ir/summary.py reads the declared field.

Each rule reads only the node's static types and attributes:

- MATMUL, ``[..., M, K] @ [..., K, N]``: ``2 * numel(out) * K`` (one multiply and one
  add per term, as XLA's cost analysis counts);
- CONV, weight ``[O, I/groups, *kernel]``: ``2 * numel(out) * I/groups * prod(kernel)``;
- POOL: ``numel(out) * prod(kernel_size)`` comparisons;
- FACTORIZATION (solve, inverse, decompositions, det on ``[..., m, n]``):
  ``numel(A) * min(m, n)``, the order of an LU/QR factorization;
- SCAN (linear_scan, the cumulative ops): ``2 * numel(input)``, and NORM (the linalg
  norms, square then sum: a "reduction") the same;
- SOFTMAX (softmax, log_softmax): ``5 * numel(out)`` (max, subtract, exp, sum, divide).
"""
from __future__ import annotations

import math

from ..registry import Cost


def _numel(v) -> int:
    return math.prod(v.shape)


def _matmul(n) -> int:
    return 2 * _numel(n.outputs[0]) * n.inputs[0].shape[-1]


def _conv(n) -> int:
    return 2 * _numel(n.outputs[0]) * math.prod(n.inputs[1].shape[1:])


def _cubic(n) -> int:
    a = n.inputs[0]
    m, k = (a.shape[-2], a.shape[-1]) if len(a.shape) >= 2 else (1, 1)
    return _numel(a) * min(m, k)


def _pool(n) -> int:
    return _numel(n.outputs[0]) * math.prod(n.attrs.get("kernel_size", (1,)))


def _scan(n) -> int:
    return 2 * _numel(n.inputs[-1])


def _softmax(n) -> int:
    return 5 * _numel(n.outputs[0])   # max, subtract, exp, sum, divide (or log and subtract)


MATMUL = Cost("matmul", _matmul)
CONV = Cost("conv", _conv)
POOL = Cost("pool", _pool)
FACTORIZATION = Cost("linalg", _cubic)
SCAN = Cost("scan", _scan)
NORM = Cost("reduction", _scan)
SOFTMAX = Cost("softmax", _softmax)
