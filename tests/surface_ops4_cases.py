"""The cases tests/api/test_surface_ops4.py checks against torch 2.13 (issues 14 and 16's
fourth batch: the in-place forms of deg2rad, rad2deg, ldexp, float_power, nextafter, renorm,
addr, index_copy, index_put, put, fill_diagonal_, and hsplit / vsplit / dsplit).

Each case is ``fn(M, *inputs)`` written against a module `M` that is either ``torch`` or
``tracegrad``, so the recording script (tools/record_torch_surface_ops4.py, run under the
torch venv) and the test run the same calls.  The in-place ones write into a clone of a leaf,
or into a view of that clone, so the gradient flows back through the write to the leaf;
run_grad_case / run_value_case are tests/surface_more_cases.py's.
"""
from __future__ import annotations

import numpy as np

R = np.random.default_rng(414)


def _a(*shape, low=-2.0, high=2.0):
    return np.round(R.uniform(low, high, shape), 2).astype(np.float64)


X34, P34, V2, V3, X6 = _a(3, 4), _a(3, 4, low=0.5), _a(2), _a(3), _a(6)
B234, E4 = _a(2, 4, 6), _a(4, low=-1.0, high=1.0)


def _inplace(method, *args, **kwargs):
    """A case: a clone of the leaf takes `method` in place."""
    def fn(M, x, *more):
        y = x.clone()
        getattr(y, method)(*[a(M, more) if callable(a) else a for a in args], **kwargs)
        return y
    return fn


def _on_view(method, key, *args):
    """A case: a basic-indexing view of a clone takes `method` in place (written through)."""
    def fn(M, x, *more):
        y = x.clone()
        getattr(y[key], method)(*[a(M, more) if callable(a) else a for a in args])
        return y
    return fn


def _t(v, dtype="int64"):
    return lambda M, more: M.tensor(v, dtype=getattr(M, dtype))


def _arg(i):
    return lambda M, more: more[i]


# name: (fn(M, *tensors), float64 inputs); every input is differentiated
GRAD_CASES = {
    "deg2rad_": (_inplace("deg2rad_"), (X34,)),
    "rad2deg_view": (_on_view("rad2deg_", (slice(1, 3), 1)), (X34,)),
    "ldexp_": (_inplace("ldexp_", _t([1, 2, 0, 3])), (X34,)),
    "ldexp_float_exponent": (_inplace("ldexp_", _arg(0)), (X34, E4)),
    "float_power_": (_inplace("float_power_", _arg(0)), (P34, E4)),
    "float_power_scalar": (_inplace("float_power_", 2.5), (P34,)),
    "float_power_fn_f32": (lambda M, x: M.float_power(x.float(), 3), (P34,)),
    "float_power_scalar_base": (lambda M, e: M.float_power(2, e), (E4,)),
    "nextafter_": (_inplace("nextafter_", _arg(0)), (X34, E4)),
    "renorm_": (_inplace("renorm_", 2, 0, 2.0), (X34,)),
    "renorm_dim1_p1": (_inplace("renorm_", 1, 1, 1.5), (X34,)),
    "addr_": (lambda M, x, a, b: x.clone()[:2, :3].addr_(a, b, beta=0.5, alpha=2.0),
              (X34, V2, V3)),
    "addr_fn": (lambda M, x, a, b: M.addr(x[:2, :3], a, b), (X34, V2, V3)),
    "index_copy_": (lambda M, x, s: x.clone().index_copy_(1, M.tensor([3, 0]), s),
                    (X34, _a(3, 2))),
    "index_copy_view": (lambda M, x, s: _write(x, lambda y: y[1:].index_copy_(
        0, M.tensor([1]), s)), (X34, _a(1, 4))),
    "index_put_": (lambda M, x, v: x.clone().index_put_(
        (M.tensor([0, 2, 2]), M.tensor([1, 3, 3])), v), (X34, V3)),
    "index_put_accumulate": (lambda M, x, v: x.clone().index_put_(
        (M.tensor([0, 2, 2]), M.tensor([1, 3, 3])), v, accumulate=True), (X34, V3)),
    "index_put_rows": (lambda M, x, v: M.index_put(x, (M.tensor([2, 0]),), v), (X34, _a(4))),
    "index_put_mask_accumulate": (lambda M, x, v: x.clone().index_put_(
        (M.tensor([True, False, True]),), v, accumulate=True), (X34, _a(4))),
    "put_": (lambda M, x, s: x.clone().put_(M.tensor([0, -1, 5]), s), (X34, V3)),
    "put_accumulate": (lambda M, x, s: x.clone().put_(M.tensor([[5, 5], [1, 5]]), s,
                                                      accumulate=True), (X34, _a(2, 2))),
    "fill_diagonal_": (_inplace("fill_diagonal_", 0.5), (X34,)),
    "fill_diagonal_wrap": (lambda M, x: M.cat([x, x]).t().clone().t().fill_diagonal_(
        -1.0, wrap=True), (_a(4, 3),)),
    "fill_diagonal_cube": (_inplace("fill_diagonal_", 3.0), (_a(2, 2, 2),)),
    "hsplit": (lambda M, x: M.hsplit(x, 2), (B234,)),
    "hsplit_indices": (lambda M, x: M.hsplit(x, [1, 3]), (B234,)),
    "hsplit_1d": (lambda M, x: x.hsplit(3), (X6,)),
    "vsplit": (lambda M, x: x.vsplit([1]), (B234,)),
    "dsplit": (lambda M, x: M.dsplit(x, 3), (B234,)),
    "dsplit_indices": (lambda M, x: x.dsplit([2, 2, 5]), (B234,)),
}


def _write(x, write):
    y = x.clone()
    write(y)
    return y


# name: fn(M) -> tensor(s): dtypes and integer forms
VALUE_CASES = {
    "deg2rad_int": lambda M: M.deg2rad(M.tensor([0, 90, 180])),
    "rad2deg_bool": lambda M: M.rad2deg(M.tensor([True, False])),
    "ldexp_int_int": lambda M: M.ldexp(M.tensor([1, 2, 3]), M.tensor([1, 2, 3])),
    "ldexp_f16_int": lambda M: M.ldexp(M.ones(2, dtype=M.float16), M.tensor([1, 2])),
    "ldexp_f32_f64": lambda M: M.ldexp(M.tensor([1.0, 3.0]), M.tensor([1.0, -1.0],
                                                                       dtype=M.float64)),
    "ldexp_inplace_f32_by_f64": lambda M: M.tensor([1.0, 3.0]).ldexp_(
        M.tensor([1.0, -1.0], dtype=M.float64)),
    "float_power_int": lambda M: M.float_power(M.tensor([1, 2, 3]), 2),
    "float_power_complex_exp": lambda M: M.float_power(M.tensor([1.0, 4.0]), 0.5j),
    "float_power_inplace_c128": lambda M: M.tensor([1.0, 2.0], dtype=M.complex128
                                                   ).float_power_(2),
    "nextafter_up": lambda M: M.nextafter(M.tensor([1.0, 0.0]), M.tensor([2.0, -1.0])),
    "addr_int": lambda M: M.addr(M.ones(2, 3, dtype=M.int64), M.tensor([1, 2]),
                                 M.tensor([1, 2, 3]), beta=2, alpha=3),
    "addr_beta0_nan": lambda M: M.addr(M.full((2, 2), float("nan")), M.tensor([1.0, 2.0]),
                                       M.tensor([3.0, 4.0]), beta=0),
    "index_copy_int": lambda M: M.zeros(2, 3, dtype=M.int64).index_copy_(
        1, M.tensor([2, 0]), M.tensor([[1, 2], [3, 4]])),
    "index_copy_0d": lambda M: M.index_copy(M.tensor(1.0), 0, M.tensor([0]), M.tensor(5.0)),
    "put_int_accumulate": lambda M: M.zeros(5, dtype=M.int64).put_(
        M.tensor([1, 1, -1]), M.tensor([2, 3, 4]), accumulate=True),
    "fill_diagonal_int_float_value": lambda M: M.zeros(3, 3, dtype=M.int64
                                                       ).fill_diagonal_(2.5),
    "fill_diagonal_bool": lambda M: M.zeros(2, 3, dtype=M.bool).fill_diagonal_(1),
    "fill_diagonal_tall": lambda M: M.zeros(5, 2).fill_diagonal_(7.0),
    "hsplit_int": lambda M: M.hsplit(M.arange(8).reshape(2, 4), [3]),
}
