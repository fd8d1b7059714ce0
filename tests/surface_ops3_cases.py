"""The cases tests/api/test_surface_ops3.py checks against torch 2.13 (issue 16's cov,
corrcoef, gcd, lcm, rot90, take, tensor_split, block_diag, combinations).

Each case is ``fn(M, *inputs)`` written against a module `M` that is either ``torch`` or
``tracegrad``, so the recording script (tools/record_torch_surface_cases.py, run under the
torch venv) and the test run the same calls; run_grad_case / run_value_case are
tests/surface_more_cases.py's.
"""
from __future__ import annotations

import numpy as np

R = np.random.default_rng(163)


def _a(*shape):
    return np.round(R.uniform(-2, 2, shape), 2).astype(np.float64)


X34, X23, V5, M33 = _a(3, 4), _a(2, 3), _a(5), _a(3, 3)
B234 = _a(2, 3, 4)
FW, AW = [1, 2, 0, 3], [0.5, 1.0, 2.0, 0.25]

# name: (fn(M, *tensors), float64 inputs); every input is differentiated
GRAD_CASES = {
    "cov": (lambda M, x: M.cov(x), (X34,)),
    "cov_1d": (lambda M, x: M.cov(x), (V5,)),
    "cov_correction0": (lambda M, x: M.cov(x, correction=0), (X34,)),
    "cov_fweights": (lambda M, x: M.cov(x, fweights=M.tensor(FW)), (X34,)),
    "cov_aweights": (lambda M, x: M.cov(x, aweights=M.tensor(AW, dtype=M.float64)), (X34,)),
    "cov_both_weights": (lambda M, x: M.cov(x, correction=2, fweights=M.tensor(FW),
                                            aweights=M.tensor(AW, dtype=M.float64)), (X34,)),
    "cov_method": (lambda M, x: x.cov(), (X23,)),
    "corrcoef": (lambda M, x: M.corrcoef(x), (X34,)),
    "corrcoef_method": (lambda M, x: x.corrcoef(), (X23,)),
    "rot90": (lambda M, x: M.rot90(x), (X23,)),
    "rot90_k2": (lambda M, x: M.rot90(x, 2), (X23,)),
    "rot90_k3_dims": (lambda M, x: M.rot90(x, -1, [2, 0]), (B234,)),
    "rot90_k4": (lambda M, x: M.rot90(x, 4, (0, 1)), (X23,)),
    "take": (lambda M, x: M.take(x, M.tensor([[0, -1], [5, 2], [2, 2]])), (X23,)),
    "take_method": (lambda M, x: x.take(M.tensor([7, 0, -24])), (B234,)),
    "tensor_split_sections": (lambda M, x: M.tensor_split(x, 3, dim=1), (X34,)),
    "tensor_split_indices": (lambda M, x: M.tensor_split(x, [1, 4, 2]), (V5,)),
    "tensor_split_tensor": (lambda M, x: M.tensor_split(x, M.tensor([1, -1]), dim=-1), (X34,)),
    "tensor_split_kw": (lambda M, x: x.tensor_split(sections=2), (V5,)),
    "block_diag": (lambda M, x, y, v: M.block_diag(x, y[0], v[0]), (X23, M33, V5)),
    "block_diag_one": (lambda M, x: M.block_diag(x), (X23,)),
    "combinations": (lambda M, v: M.combinations(v), (V5[:4],)),
    "combinations_r3_repl": (lambda M, v: M.combinations(v, 3, with_replacement=True),
                             (V5[:3],)),
}

I1, I2 = [-4, 0, 9, 0, 12, 7], [6, 5, -6, 0, 18, -21]
# name: fn(M) -> tensor or tuple of tensors (no gradient)
VALUE_CASES = {
    "gcd": lambda M: M.gcd(M.tensor(I1), M.tensor(I2)),
    "lcm": lambda M: M.lcm(M.tensor(I1), M.tensor(I2)),
    "gcd_broadcast_int8": lambda M: M.gcd(M.tensor([[4], [9]], dtype=M.int8), M.tensor([6, 3])),
    "lcm_int8_wraps": lambda M: M.lcm(M.tensor([100], dtype=M.int8),
                                      M.tensor([3], dtype=M.int8)),
    "lcm_int32": lambda M: M.tensor([4, 6], dtype=M.int32).lcm(M.tensor([6, 4], dtype=M.int32)),
    "gcd_inplace": lambda M: M.tensor([4, 6]).gcd_(M.tensor([6, 9])),
    "lcm_inplace": lambda M: M.tensor([4], dtype=M.int16).lcm_(M.tensor([6])),
    "cov_int": lambda M: M.cov(M.tensor([[0, 1, 2], [2, 1, 5]])),
    "cov_one_row": lambda M: M.cov(M.tensor([[0., 1., 3.]])),
    "corrcoef_constant_row": lambda M: M.corrcoef(M.tensor([[0., 1, 2], [2, 1, 5], [1, 1, 1]])),
    "corrcoef_1d": lambda M: M.corrcoef(M.tensor([0., 1., 5.])),
    "corrcoef_int": lambda M: M.corrcoef(M.tensor([[0, 1, 2], [2, 1, 5]])),
    "tensor_split_int": lambda M: M.tensor_split(M.arange(7), (1, 9, 3)),
    "tensor_split_empty_dim": lambda M: M.tensor_split(M.ones(0, 2), 3),
    "block_diag_promote": lambda M: M.block_diag(M.ones(2, 2, dtype=M.int64), M.tensor([1.5]),
                                                 M.tensor(7.), M.ones(0, 3)),
    "block_diag_int": lambda M: M.block_diag(M.tensor([[1, 2]]), M.tensor([3])),
    "block_diag_none": lambda M: M.block_diag(),
    "combinations_r0": lambda M: M.combinations(M.tensor([1., 2., 3.]), r=0),
    "combinations_r_too_big": lambda M: M.combinations(M.tensor([1, 2, 3]), r=4),
    "combinations_r1": lambda M: M.combinations(M.tensor([1, 2, 3]), r=1),
    "rot90_int": lambda M: M.rot90(M.arange(8).reshape(2, 2, 2), 1, [1, 2]),
    "take_int": lambda M: M.take(M.arange(6).reshape(2, 3), M.tensor(4)),
}
