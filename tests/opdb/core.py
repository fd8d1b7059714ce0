"""Core of the op database: Sample, ErrorInput, OpInfo, input generators, and the foundation ops.

An entry says how to call the op on tensors (`fn`), what it computes
(`ref`, written once against an array namespace `xp`, so the same function is
the NumPy forward reference and, under jax.numpy, the gradient reference via
`jax.vjp`), which inputs to try (`sample_inputs`, float32 and float64,
broadcasting, promotion, kinks and ties marked `fd=False`), and which bad
inputs must raise which error (`error_inputs`).  Modelled on PyTorch's
OpInfo (torch/testing/_internal/opinfo/core.py), kept to a dozen fields.

Conventions: in `Sample.args` a NumPy array becomes a tensor (floating arrays
are the differentiable inputs, with ``requires_grad=True``); anything else
(Python numbers, dims, shapes, index keys, dtypes) is passed to `fn` and
`ref` as it is.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import tracegrad as tg

F32, F64, I64, BOOL = tg.float32, tg.float64, tg.int64, tg.bool
C64, C128 = tg.complex64, tg.complex128


@dataclass(frozen=True)
class Sample:
    """One call of an op.

    Attributes:
        args: positional arguments; NumPy arrays become tensors.
        kwargs: keyword arguments, passed as they are.
        dtype: expected output dtype (torch's promotion result); None means
            the op's `out_dtype`, else the dtype the samples were drawn for.
        fd: central differences are valid here; False at kinks and ties,
            where only the jax reference (written for torch's subgradients)
            compares.
        xfail: a known, reported bug this sample still hits (strict xfail).
    """

    args: tuple
    kwargs: dict = field(default_factory=dict)
    dtype: Any = None
    fd: bool = True
    xfail: str = ""


@dataclass(frozen=True)
class ErrorInput:
    """A bad call: `fn(*args, **kwargs)` raises `exc`, its message holding each of `match`."""

    args: tuple
    exc: type
    match: tuple[str, ...]
    kwargs: dict = field(default_factory=dict)
    xfail: str = ""


# ---- checks at chosen points -------------------------------------------------------------
# Values of an op recorded at points the random samples never hit (kinks, ties, zeros,
# branch points), and derivative checks at fixed complex points.  Each record lives in the
# `point_checks` of its op's entry; its type says which test reads it, its `name` is the
# test id.
INF, NAN = math.inf, math.nan
# the complex points and cotangents of the complex records (tests/ops/test_complex.py)
Z = [1 + 2j, -0.5 + 0.3j, 0.7 - 1.1j]
W = [0.3 - 0.4j, 1.2 + 0.5j, -0.8 + 0.9j]
G = [1 - 0.5j, 0.3 + 0.2j, -0.7 + 1.0j]      # the cotangent of a complex result
G_REAL = [1.0, -2.0, 0.5]                    # ... of a real result
Z00 = [0j, 0j]                               # the complex zero vector (edge records)


@dataclass(frozen=True)
class Subgradient:
    """torch's gradient of ``fn(*args).sum()`` at a point where the op is not differentiable
    (tests/ops/test_ops.py::test_subgradient_matches_torch).

    Attributes:
        name: the test id.
        op: the function's path under `tracegrad` ("relu", "nn.functional.hardtanh"); the
            check is skipped until the op exists.
        fn: the call, on float64 tensors built from `args`.
        args: input values (float64, all differentiated).
        grads: torch 2.13's gradients, one per argument.
        note: the convention in words (listed in docs/ops.md).
    """

    name: str
    op: str
    fn: Callable
    args: tuple
    grads: tuple
    note: str = ""


@dataclass(frozen=True)
class ComplexTorchGrad:
    """torch 2.13's gradients of ``fn`` on the first `n` of the complex points (Z, W) for the
    cotangent G (G_REAL for a real result), complex128 (test_complex.py)."""

    name: str
    fn: Callable
    n: int
    grads: list


@dataclass(frozen=True)
class ComplexEdgeGrad:
    """torch 2.13's gradient of the real scalar ``fn(z)`` at a complex128 point `z` where it is
    a subgradient or a limit (zeros, ties, infinities; test_complex.py)."""

    name: str
    fn: Callable
    z: list
    grads: list


@dataclass(frozen=True)
class ComplexSecondOrder:
    """``fn(z, w)``, whose double backward through the complex rules test_complex.py checks
    against central differences at z = Z + 0.5, w = W."""

    name: str
    fn: Callable


@dataclass(frozen=True)
class ComplexForwardAD:
    """``fn`` on a dual tensor at Z with tangent G; `ref`, the NumPy function whose central
    differences the tangent must match (test_complex.py)."""

    name: str
    fn: Callable
    ref: Callable


@dataclass(frozen=True)
class LinalgTorchGrad:
    """torch 2.13's gradient of the scalar ``fn(a)`` at the point `a` (float64; complex128 for
    `complex`), tests/ops/test_linalg.py."""

    name: str
    fn: Callable
    point: Any
    grads: Any
    complex: bool = False


@dataclass(frozen=True)
class LinalgSecondOrder:
    """``fn(a)`` near a small complex 3x3 matrix a: test_linalg.py checks its double backward
    (the phase checks included) against central differences."""

    name: str
    fn: Callable


@dataclass(frozen=True)
class OpInfo:
    """How to test one op.

    Attributes:
        name: test id; usually the registry op name.
        fn: calls the op on tensors, ``fn(*args, **kwargs) -> Tensor``.
        ref: ``ref(xp, *args, **kwargs)`` with `xp` NumPy or jax.numpy.
        sample_inputs: ``(rng, dtype) -> list[Sample]`` for dtype float32/float64.
        differentiable: False for comparisons (forward only, bool output).
        out_dtype: output dtype when it is not the input dtype (bool for comparisons).
        tols: ``{dtype: (atol, rtol)}`` overriding `DEFAULT_TOLS` per dtype.
        error_inputs: ``() -> list[ErrorInput]``.
        covers: registry ops this entry exercises (for the coverage test).
        executor_samples: which float32 samples also run their backward on the
            jax executor (each is one jit compile, so few).
        supports_gradgrad: second derivatives exist and `gradgradcheck` runs
            (False where the VJP rule is not itself differentiable; say why in `notes`).
        low_precision: ``{dtype: (atol, rtol)}`` for float16/bfloat16 against float64,
            overriding `LOW_PRECISION_TOLS` in tests/ops/test_ops.py (scaled by the
            largest magnitude of the float64 result).
        skips: ``{check: reason}`` for generic checks this op does not run; checks are
            "gradcheck", "gradgradcheck", "compile", "float16", "bfloat16" and
            "low_precision" (both).  The reason is printed in docs/ops.md.
        notes: gradients at non-differentiable points (torch's subgradient) and where
            the gradient is undefined, one short sentence each; listed in docs/ops.md.
            ``note`` is the same field under the other spelling (both are listed).
        complex_samples: complex64/complex128 samples, for an op that takes complex
            tensors (the COMPLEX flag in the registry): an int n takes the first n float
            samples (a tuple: those at its indices; float32 for complex64, float64 for
            complex128) and gives each floating array an imaginary part (`complexify`); a
            callable is ``(rng, dtype) -> list[Sample]``.  None: the op rejects complex
            inputs (tests/ops/test_complex.py checks the error).
        point_checks: records of the op at chosen points (`Subgradient`, `ComplexTorchGrad`,
            `ComplexEdgeGrad`, `ComplexSecondOrder`, `ComplexForwardAD`, `LinalgTorchGrad`,
            `LinalgSecondOrder`), each checked by the test its type names.
        exercised_by: for an op no call from the user API can run on its own (a mark of one
            tape carrying its Python hooks): why, and the tests that run it instead.  Such
            an entry has no samples (`fn` and `ref` are None).
        no_fd: why central differences cannot check a differentiable op at any point (its
            gradient is not its value's derivative by design); its gradients are checked
            against the jax reference's instead.  Empty: at least one `fd` sample.
    """

    name: str
    fn: Callable
    ref: Callable
    sample_inputs: Callable[[np.random.Generator, Any], list[Sample]]
    differentiable: bool = True
    out_dtype: Any = None
    tols: dict = field(default_factory=dict)
    error_inputs: Callable[[], list[ErrorInput]] = lambda: []
    covers: tuple[str, ...] = ()
    dtypes: tuple = (F32, F64)
    executor_samples: tuple[int, ...] = (0,)
    supports_gradgrad: bool = True
    low_precision: dict = field(default_factory=dict)
    skips: dict = field(default_factory=dict)
    notes: str = ""
    note: str = ""
    complex_samples: Any = None
    point_checks: tuple = ()
    exercised_by: str = ""
    no_fd: str = ""

    def tol(self, dtype) -> tuple[float, float]:
        return self.tols.get(dtype, DEFAULT_TOLS.get(dtype, (0.0, 0.0)))

    @property
    def all_dtypes(self) -> tuple:
        """`dtypes`, plus complex64 and complex128 when the op has complex samples."""
        return self.dtypes + ((C64, C128) if self.complex_samples is not None else ())

    def samples(self, rng, dtype) -> list[Sample]:
        """The samples for `dtype`: `sample_inputs`, or the complex ones for a complex dtype."""
        if not dtype.is_complex:
            return self.sample_inputs(rng, dtype)
        if callable(self.complex_samples):
            return self.complex_samples(rng, dtype)
        return complexify(self.sample_inputs, self.complex_samples)(rng, dtype)


# (atol, rtol) by dtype; integer and bool results compare exactly.
DEFAULT_TOLS = {F32: (1e-5, 1e-5), F64: (1e-10, 1e-9), C64: (1e-5, 1e-5), C128: (1e-10, 1e-9)}


# ---- input generators ---------------------------------------------------------------------
def uniform(rng, shape, dtype, low=-2.0, high=2.0) -> np.ndarray:
    return np.asarray(rng.uniform(low, high, shape)).astype(dtype.numpy)


def positive(rng, shape, dtype) -> np.ndarray:
    return uniform(rng, shape, dtype, 0.5, 2.0)


def nonzero(rng, shape, dtype) -> np.ndarray:
    """|x| >= 0.25: well away from the kink of relu/abs at 0."""
    sign = rng.choice([-1.0, 1.0], shape)
    return np.asarray(sign * rng.uniform(0.25, 2.0, shape)).astype(dtype.numpy)


def distinct(rng, shape, dtype) -> np.ndarray:
    """Distinct values at least 0.1 apart (no ties for amax)."""
    n = math.prod(shape)
    vals = np.linspace(-2.0, 2.0, n) if n > 1 else np.array([0.7])
    return rng.permutation(vals).reshape(shape).astype(dtype.numpy)


def grid(rng, shape, dtype, offset=0.0) -> np.ndarray:
    """Multiples of 0.5 plus `offset`: two grids with offsets 0 and 0.25 never tie."""
    return np.asarray(0.5 * rng.integers(-4, 5, shape) + offset).astype(dtype.numpy)


def ints(rng, shape, low=-3, high=4, dtype=np.int64) -> np.ndarray:
    return np.asarray(rng.integers(low, high, shape)).astype(dtype)


def with_imag(rng, x: np.ndarray, dtype, scale: float = 1.0) -> np.ndarray:
    """The real array `x` plus i * uniform(-scale, scale), as complex `dtype`."""
    im = rng.uniform(-scale, scale, np.shape(x))
    return np.asarray(np.asarray(x, np.float64) + 1j * im).astype(dtype.numpy)


def cuniform(rng, shape, dtype, low=-2.0, high=2.0) -> np.ndarray:
    """Complex values, real part uniform in [low, high), imaginary part in [-1, 1)."""
    return with_imag(rng, uniform(rng, shape, F64, low, high), dtype)


def cnonzero(rng, shape, dtype) -> np.ndarray:
    """Complex values with real part 0.25 <= |Re z| < 2: |z| >= 0.25, away from 0."""
    return with_imag(rng, nonzero(rng, shape, F64), dtype)


def cpositive(rng, shape, dtype) -> np.ndarray:
    """Complex values with real part in [0.5, 2): away from the branch cut of log, sqrt and
    pow (the negative real axis)."""
    return with_imag(rng, positive(rng, shape, F64), dtype)


def complexify(sample_inputs, n, real_out=False):
    """Complex samples from the first `n` float ones (or those at the indices in a tuple `n`):
    each floating array gains an imaginary part (uniform in [-1, 1)); float32 samples make
    the complex64 ones, float64 the complex128 ones; Python numbers stay real (so real
    scalars meet complex tensors).  `real_out`: the op's result is real (norms, var): float32
    for complex64, float64 for complex128."""
    def samples(rng, dtype):
        out = []
        real = sample_inputs(rng, dtype.to_real())
        for s in (real[:n] if isinstance(n, int) else [real[i] for i in n]):
            args = tuple(with_imag(rng, a, dtype) if isinstance(a, np.ndarray)
                         and a.dtype.kind == "f" else a for a in s.args)
            if real_out:
                want = s.dtype or dtype.to_real()
            else:
                want = s.dtype.to_complex() if s.dtype is not None and s.dtype.is_floating_point \
                    else s.dtype
            out.append(Sample(args, s.kwargs, want, s.fd, s.xfail))
        return out
    return samples


def _other(dtype):
    return F64 if dtype is F32 else F32


# ---- references ---------------------------------------------------------------------------
def _softmax_ref(xp, x, dim=-1):
    e = xp.exp(x - xp.max(x, axis=dim, keepdims=True))
    return e / xp.sum(e, axis=dim, keepdims=True)


def _log_softmax_ref(xp, x, dim=-1):
    z = x - xp.max(x, axis=dim, keepdims=True)
    return z - xp.log(xp.sum(xp.exp(z), axis=dim, keepdims=True))


def _cross_entropy_ref(xp, x, target):
    logp = _log_softmax_ref(xp, x, 1)
    return -xp.mean(xp.take_along_axis(logp, target[:, None], axis=1))


def _expand_ref(xp, x, size):
    lead = len(size) - x.ndim
    shape = tuple(x.shape[i - lead] if s == -1 else s for i, s in enumerate(size))
    return xp.broadcast_to(x, shape)


def _squeeze_ref(xp, x, *dim):
    if not dim or x.ndim == 0:
        return xp.squeeze(x)
    dims = dim[0] if isinstance(dim[0], tuple) else dim
    return xp.squeeze(x, tuple(d % x.ndim for d in dims if x.shape[d] == 1))


def _sum_to_size_ref(xp, x, size):
    lead = x.ndim - len(size)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(size)
                                      if s == 1 and x.shape[i + lead] != 1)
    return xp.sum(x, axis=dims, keepdims=True).reshape(size)


def _axis(x, dim):
    """torch accepts dim 0 / -1 on a 0-d tensor (NumPy does not)."""
    return None if x.ndim == 0 else dim


def _sum_ref(xp, x, dim=None, keepdim=False):
    # torch.sum: integer and bool inputs sum in int64.
    dtype = None if x.dtype.kind in "fc" else np.int64
    return xp.sum(x, axis=_axis(x, dim), keepdims=keepdim, dtype=dtype)


def _pow_ref(xp, x, y):
    # torch: d/dx x**0 is 0 even at x == 0, where jax computes 0 * 0**-1 = nan
    x_safe = xp.where((xp.asarray(x) == 0) & (xp.asarray(y) == 0), 1.0, x)
    return xp.power(x_safe, y)


def _getitem_ref(xp, x, key):
    # jax.numpy rejects a Python list as an index array; torch and NumPy take it
    return x[np.asarray(key) if isinstance(key, list) else key]


# ---- shared sample sets -------------------------------------------------------------------
BINARY_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((4,), (2, 3, 4)),
                 ((3, 4), ())]


def _binary_samples(gen_x, gen_y=None, scalar=2.5, ints_ok=True):
    """Broadcasting pairs, a Python scalar on either side, and torch's promotion cases."""
    gen_y = gen_y or gen_x

    def samples(rng, dtype):
        out = [Sample((gen_x(rng, a, dtype), gen_y(rng, b, dtype))) for a, b in BINARY_SHAPES]
        if scalar is not None:
            out.append(Sample((gen_x(rng, (3, 4), dtype), scalar)))
            out.append(Sample((scalar, gen_y(rng, (3, 4), dtype))))
        if dtype is F32:
            # torch promotion: dimensioned f32 with f64 -> f64; a 0-d f64 does not lift f32.
            out.append(Sample((gen_x(rng, (3, 4), F32), gen_y(rng, (3, 4), F64)), dtype=F64))
            out.append(Sample((gen_x(rng, (3, 4), F32), gen_y(rng, (), F64)), dtype=F32))
            if ints_ok:
                # an int64 operand is not differentiable and promotes to the float operand
                out.append(Sample((gen_x(rng, (3, 4), F32), ints(rng, (3, 4), 1, 4)), dtype=F32))
        return out
    return samples


def _broadcast_errors(name):
    return lambda: [ErrorInput((np.ones((3, 4), np.float32), np.ones((5,), np.float32)),
                               ValueError, (f"{name}:", "f32[3,4]", "f32[5]", "broadcast"))]


def _not_a_tensor(name, promotes=True):
    return ErrorInput(("abc",), TypeError, (f"{name}()", "str"))


def _complex_binary_samples(gen_x=cuniform, gen_y=None, real_y=uniform, real_x=uniform):
    """Complex pairs (broadcasting too), a real and a complex Python scalar, a real tensor
    meeting a complex one (its gradient is real, as torch), and for complex64 torch's
    promotions: complex64 with float64 -> complex128, float32 with a Python complex ->
    complex64."""
    gen_y = gen_y or gen_x

    def samples(rng, dtype):
        real = dtype.to_real()
        out = [Sample((gen_x(rng, (3, 4), dtype), gen_y(rng, (3, 4), dtype))),
               Sample((gen_x(rng, (2, 1, 4), dtype), gen_y(rng, (3, 1), dtype))),
               Sample((gen_x(rng, (3, 4), dtype), 2.5)),
               Sample((gen_x(rng, (3, 4), dtype), 0.5 - 1.5j)),
               Sample((gen_x(rng, (3, 4), dtype), real_y(rng, (4,), real)))]
        if dtype is C64:
            out.append(Sample((gen_x(rng, (3, 4), C64), real_y(rng, (3, 4), F64)), dtype=C128))
            out.append(Sample((real_x(rng, (3, 4), F32), 0.5 - 1.5j), dtype=C64))
        return out
    return samples


def _binary(name, fn, ref, gen_x=uniform, gen_y=None, scalar=2.5, **kw):
    return OpInfo(name, fn, ref, _binary_samples(gen_x, gen_y, scalar),
                  error_inputs=_broadcast_errors(name), **kw)


# ---- elementwise binary -------------------------------------------------------------------
def _add_samples(rng, dtype):
    out = _binary_samples(uniform)(rng, dtype)
    if dtype is F32:
        out.append(Sample((ints(rng, (3, 4)), ints(rng, (4,))), dtype=I64))
        out.append(Sample((ints(rng, (3, 4)), 2.5), dtype=F32))   # int tensor + float -> f32
        out.append(Sample((uniform(rng, (3,), F32), np.float64(1.5)), dtype=F32))  # weak scalar
        out.append(Sample((np.int64(2), uniform(rng, (3,), F32)), dtype=F32))
    return out


def _rsub_samples(rng, dtype):
    out = _binary_samples(uniform)(rng, dtype)
    if dtype is F32:   # torch.rsub(t, np.float32(2.5)) treats the NumPy scalar as a number
        out.append(Sample((uniform(rng, (3,), F32), np.float32(2.5)), dtype=F32))
    return out


def _div_samples(rng, dtype):
    out = _binary_samples(uniform, nonzero)(rng, dtype)
    if dtype is F32:
        out.append(Sample((ints(rng, (3, 4)), ints(rng, (3, 4), 1, 4)), dtype=F32))  # true div
    return out


def _pow_samples(rng, dtype):
    out = [Sample((positive(rng, a, dtype), uniform(rng, b, dtype))) for a, b in BINARY_SHAPES]
    x = positive(rng, (3, 4), dtype)
    x[0, :2] = 0.0
    # d/dy x**y at x == 0 (y >= 0) is 0 as in torch; d/dx at y == 0 is 0 even where x == 0
    y = rng.uniform(1.5, 2.5, (3, 4)).astype(dtype.numpy)
    y[0, 1] = y[1, 1] = 0.0
    out.append(Sample((x, y), fd=False))
    return out


def _pow_scalar_samples(rng, dtype):
    x, p = uniform(rng, (3, 4), dtype), positive(rng, (3, 4), dtype)
    z = uniform(rng, (2, 3), dtype)
    z[0, 0] = 0.0
    out = [Sample((x, 2.0)), Sample((x, 3)), Sample((p, 0.5)), Sample((p, -1.5)),
           Sample((2.0, x)),                           # __rpow__: d/dx 2**x = 2**x log 2
           Sample((z, 0.0), fd=False),                 # torch: gradient 0, not 0 * 0**-1
           Sample((z, 2), fd=False)]
    if dtype is F32:
        out.append(Sample((ints(rng, (3,), 1, 4), 0.5), dtype=F32))
    return out


def _minmax_samples(rng, dtype):
    out = _binary_samples(lambda r, s, d: grid(r, s, d, 0.25), grid, scalar=None)(rng, dtype)
    x = grid(rng, (3, 4), dtype)
    y = x.copy()
    y[:, ::2] += 0.5
    out.append(Sample((x, y), fd=False))   # ties split the gradient in half (torch)
    return out


def _pow_scalar_complex(rng, dtype):
    z, p = cuniform(rng, (3, 4), dtype), cpositive(rng, (3, 4), dtype)
    return [Sample((z, 2.0)), Sample((z, 3)), Sample((p, 0.5)), Sample((2.0, z)),
            Sample((p, 1.5 - 0.5j))]


BINARY_OPS = [
    OpInfo("add", lambda x, y: x + y, lambda xp, x, y: xp.add(x, y), _add_samples,
           error_inputs=_broadcast_errors("add"), complex_samples=_complex_binary_samples()),
    _binary("sub", lambda x, y: x - y, lambda xp, x, y: xp.subtract(x, y),
            complex_samples=_complex_binary_samples()),
    OpInfo("rsub", tg.rsub, lambda xp, x, y: xp.subtract(y, x), _rsub_samples,
           error_inputs=_broadcast_errors("rsub"), complex_samples=_complex_binary_samples()),
    _binary("mul", lambda x, y: x * y, lambda xp, x, y: xp.multiply(x, y),
            complex_samples=_complex_binary_samples(),
            point_checks=(
                ComplexTorchGrad("mul", lambda a, b: a * b, 2,
                                 [[0.5 + 0.25j, 0.46 + 0.09j, 1.46 - 0.17j],
                           [-2.5j, -0.09 - 0.19j, -1.59 - 0.07j]]),
                ComplexForwardAD("mul", lambda z: z * tg.tensor(np.array(W)),
                                 lambda z: z * np.array(W)),
            )),
    OpInfo("div", lambda x, y: x / y, lambda xp, x, y: xp.true_divide(x, y), _div_samples,
           error_inputs=_broadcast_errors("div"),
           complex_samples=_complex_binary_samples(cuniform, cnonzero, nonzero),
           point_checks=(
               ComplexTorchGrad("div", lambda a, b: a / b, 2,
                                [[0.4 - 2.2j, 0.153846153846 + 0.230769230769j,
                                  -0.234482758621 - 0.986206896552j],
                                 [9.6 - 2.8j, -0.042330450614 + 0.116977696859j,
                                  -0.080618311534 - 1.094649227111j]]),
               ComplexSecondOrder("div", lambda z, w: w / z),
           )),
    # complex base off the negative real axis (pow's branch cut)
    OpInfo("pow", lambda x, y: tg.pow(x, y), _pow_ref, _pow_samples,
           error_inputs=_broadcast_errors("pow"),
           complex_samples=_complex_binary_samples(cpositive, cuniform, real_x=positive),
           point_checks=(
               Subgradient("pow_scalar_zero", "pow", lambda x: tg.pow(x, 0.0), ([0.0, 2.0],),
                           ([0.0, 0.0],), "d/dx x**0 = 0, also at x = 0"),
               Subgradient("pow_scalar_half", "pow", lambda x: tg.pow(x, 0.5), ([0.0, 4.0],),
                           ([INF, 0.25],), "d/dx x**0.5 = inf at 0"),
               Subgradient("pow_tensor", "pow", lambda x, y: tg.pow(x, y),
                           ([0.0, 0.0, 0.0], [0.0, 2.0, 0.5]), ([0.0, 0.0, INF], [0.0, 0.0, 0.0]),
                           "at x = 0: d/dx is 0 where y = 0, d/dy is 0 where y >= 0"),
               ComplexTorchGrad("pow", lambda a, b: a ** b, 2,
                                [[0.005083128307 + 0.495557547635j,
                                  0.114422513148 - 0.006565974927j,
                                  -1.254518635029 - 1.86870861723j],
                                 [0.467134307639 - 2.997299119633j,
                                  -0.085169147122 + 0.106750616685j,
                                  -1.952571246474 + 1.610363783789j]]),
               ComplexSecondOrder("pow", lambda z, w: z ** w),
           )),
    OpInfo("pow_scalar", lambda x, y: x ** y, _pow_ref,
           _pow_scalar_samples, covers=("pow",), complex_samples=_pow_scalar_complex,
           point_checks=(
               ComplexTorchGrad("pow_scalar", lambda a: a ** 2.5, 1,
                                [[-4.913446110984 - 7.950122809463j,
                    -0.395414368792 + 0.068756985445j,
                    -3.88265692635 - 2.359321895744j]]),
           )),
    OpInfo("maximum", tg.maximum, lambda xp, x, y: xp.maximum(x, y), _minmax_samples,
           error_inputs=_broadcast_errors("maximum"),
           point_checks=(
               Subgradient("maximum", "maximum", lambda x, y: tg.maximum(x, y),
                           ([1.0, 2.0, 3.0], [1.0, 3.0, 2.0]), ([0.5, 0.0, 1.0], [0.5, 1.0, 0.0]),
                           "a tie splits the gradient 1/2 each"),
           )),
    OpInfo("minimum", tg.minimum, lambda xp, x, y: xp.minimum(x, y), _minmax_samples,
           error_inputs=_broadcast_errors("minimum"),
           point_checks=(
               Subgradient("minimum", "minimum", lambda x, y: tg.minimum(x, y),
                           ([1.0, 2.0, 3.0], [1.0, 3.0, 2.0]), ([0.5, 1.0, 0.0], [0.5, 0.0, 1.0]),
                           "a tie splits the gradient 1/2 each"),
           )),
]


def _where_samples(rng, dtype):
    c = rng.random((3, 4)) > 0.5
    out = [Sample((c, uniform(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype))),
           Sample((c[:, :1], uniform(rng, (4,), dtype), uniform(rng, (2, 3, 1), dtype))),
           Sample((c, uniform(rng, (3, 4), dtype), 0.0))]
    if dtype is F32:
        out.append(Sample((c, uniform(rng, (3, 4), F32), uniform(rng, (3, 4), F64)), dtype=F64))
    return out


def _where_errors():
    x = np.ones((3,), np.float32)
    return [ErrorInput((x, x, x), TypeError, ("where", "condition must be bool", "f32[3]")),
            ErrorInput((np.ones((3,), bool), x, np.ones((2,), np.float32)), ValueError,
                       ("where", "f32[3]", "f32[2]", "broadcast"))]


def _where_complex(rng, dtype):
    c = rng.random((3, 4)) > 0.5
    return [Sample((c, cuniform(rng, (3, 4), dtype), cuniform(rng, (3, 4), dtype))),
            Sample((c, cuniform(rng, (3, 4), dtype), 0.0)),
            Sample((c, cuniform(rng, (3, 4), dtype), uniform(rng, (4,), dtype.to_real())))]


WHERE = OpInfo("where", tg.where, lambda xp, c, x, y: xp.where(c, x, y), _where_samples,
               complex_samples=_where_complex,
               error_inputs=_where_errors)


# ---- comparisons and logical ops (forward only) ---------------------------------------------
def _compare_samples(rng, dtype):
    # small integer grids: many exact ties, so eq/le/ge are really exercised
    g = lambda r, s, d: grid(r, s, d)  # noqa: E731
    out = [Sample((g(rng, a, dtype), g(rng, b, dtype))) for a, b in BINARY_SHAPES]
    out.append(Sample((g(rng, (3, 4), dtype), 0.5)))
    out.append(Sample((0.5, g(rng, (3, 4), dtype))))
    if dtype is F32:
        out.append(Sample((g(rng, (3, 4), F32), g(rng, (4,), F64))))
        out.append(Sample((ints(rng, (3, 4), -1, 2), g(rng, (3, 4), F32))))
    return out


def _compare_complex(rng, dtype):
    """Complex grids with exact ties in both parts, and ties in one part only."""
    x = (grid(rng, (3, 4), F64) + 1j * grid(rng, (3, 4), F64)).astype(dtype.numpy)
    y = x.copy()
    y[0] += 0.5j
    y[1, :2] += 0.5
    return [Sample((x, y)), Sample((x, complex(x[2, 0])))]


def _compare(name, op, np_name, **kw):
    return OpInfo(name, lambda x, y: op(x, y), lambda xp, x, y: getattr(xp, np_name)(x, y),
                  _compare_samples, differentiable=False, out_dtype=BOOL,
                  error_inputs=_broadcast_errors(name), **kw)


def _bools(rng, dtype):
    a, b = rng.random((3, 4)) > 0.5, rng.random((4,)) > 0.5
    return [Sample((a, b)), Sample((a, a))]


COMPARE_OPS = [
    _compare("eq", lambda x, y: x == y, "equal", complex_samples=_compare_complex),
    _compare("ne", lambda x, y: x != y, "not_equal", complex_samples=_compare_complex),
    _compare("lt", lambda x, y: x < y, "less"),
    _compare("le", tg.le, "less_equal"),
    _compare("gt", lambda x, y: x > y, "greater"),
    _compare("ge", lambda x, y: x >= y, "greater_equal"),
    OpInfo("logical_and", lambda x, y: x & y, lambda xp, x, y: xp.logical_and(x, y), _bools,
           differentiable=False, out_dtype=BOOL, dtypes=(F32,)),
    OpInfo("logical_not", lambda x: ~x, lambda xp, x: xp.logical_not(x),
           lambda rng, dtype: [Sample((rng.random((3, 4)) > 0.5,))],
           differentiable=False, out_dtype=BOOL, dtypes=(F32,)),
]


# ---- elementwise unary --------------------------------------------------------------------
def _unary_samples(gen, int_out=None, kink=None):
    """Shapes (3,4), 0-d and (2,3,1); an int64 input (-> `int_out` dtype); `kink` values, fd off."""
    def samples(rng, dtype):
        out = [Sample((gen(rng, (3, 4), dtype),)), Sample((gen(rng, (), dtype),)),
               Sample((gen(rng, (2, 3, 1), dtype),))]
        if kink is not None:
            x = gen(rng, (5,), dtype)
            x[::2] = kink
            out.append(Sample((x,), fd=False))
        if int_out is not None and dtype is F32:
            out.append(Sample((ints(rng, (3, 4), 1, 4),), dtype=int_out))
        return out
    return samples


def _unary(name, fn, ref, gen=uniform, int_out=F32, kink=None, errors=None, **kw):
    return OpInfo(name, fn, ref, _unary_samples(gen, int_out, kink),
                  error_inputs=errors or (lambda: [_not_a_tensor(name)]), **kw)


def _no_bool(name):
    return lambda: [ErrorInput((np.ones((3,), bool),), TypeError, (name, "bool", "b1[3]"))]


def _sigmoid_samples(rng, dtype):
    out = _unary_samples(uniform, F32)(rng, dtype)
    out.append(Sample((np.array([-30.0, -5.0, 0.0, 5.0, 30.0], dtype.numpy),)))  # no overflow
    return out


def _abs_ref(xp, x):
    if x.dtype.kind != "c":   # x * sign(x): torch's subgradient 0 at x == 0 (jnp.abs gives 1)
        return x * xp.sign(x)
    zero = x == 0             # |z|, gradient 0 at z == 0 as torch (not jax's nan)
    return xp.where(zero, 0.0, xp.abs(xp.where(zero, 1.0, x)))


def _abs_complex(rng, dtype):
    """|z| is real: float32 for complex64; at 0 torch's gradient is 0."""
    real = dtype.to_real()
    return [Sample((cnonzero(rng, (3, 4), dtype),), dtype=real),
            Sample((cnonzero(rng, (), dtype),), dtype=real),
            Sample((np.array([0j, 3 + 4j, -1j], dtype.numpy),), dtype=real, fd=False)]


# complex samples: log and sqrt keep a positive real part (off their branch cut)
UNARY_OPS = [
    _unary("neg", lambda x: -x, lambda xp, x: xp.negative(x), int_out=I64,
           errors=_no_bool("neg"), complex_samples=3),
    _unary("exp", tg.exp, lambda xp, x: xp.exp(x), complex_samples=3,
           point_checks=(
               ComplexTorchGrad("exp", tg.exp, 1,
                                [[-2.367067719759 - 1.906124480126j,
                                  0.20968067448 + 0.062115554428j,
                           -2.434072526575 - 0.34283944635j]]),
               ComplexSecondOrder("exp", lambda z, w: tg.exp(z) * w),
               ComplexForwardAD("exp", tg.exp, np.exp),
           )),
    _unary("log", tg.log, lambda xp, x: xp.log(x), gen=positive, complex_samples=3,
           point_checks=(
               Subgradient("log", "log", lambda x: tg.log(x), ([0.0, 2.0],), ([INF, 0.5],),
                           "log'(0) = inf"),
               ComplexTorchGrad("log", tg.log, 1,
                                [[0.4 + 0.3j, -0.617647058824 - 0.029411764706j,
                           0.358823529412 + 0.864705882353j]]),
           )),
    _unary("sqrt", tg.sqrt, lambda xp, x: xp.sqrt(x), gen=positive, complex_samples=3,
           point_checks=(
               Subgradient("sqrt", "sqrt", lambda x: tg.sqrt(x), ([0.0, 4.0],), ([INF, 0.25],),
                           "sqrt'(0) = inf"),
               ComplexTorchGrad("sqrt", tg.sqrt, 1,
                                [[0.372326636566 + 0.033572671876j,
                                  -0.07377024805 + 0.224265446901j,
                          -0.057982196019 + 0.531349718444j]]),
               ComplexSecondOrder("sqrt", lambda z, w: tg.sqrt(z) * w),
               ComplexForwardAD("sqrt", tg.sqrt, np.sqrt),
           )),
    _unary("tanh", tg.tanh, lambda xp, x: xp.tanh(x), complex_samples=3,
           point_checks=(
               ComplexTorchGrad("tanh", tg.tanh, 1,
                                [[-0.586053108682 - 0.417102221774j,
                                  0.290505997831 + 0.091147549445j,
                          1.413867100893 + 0.665219223035j]]),
           )),
    OpInfo("sigmoid", tg.nn.functional.sigmoid, lambda xp, x: 1.0 / (1.0 + xp.exp(-x)),
           _sigmoid_samples, error_inputs=lambda: [_not_a_tensor("sigmoid")],
           complex_samples=3,
           point_checks=(
               ComplexTorchGrad("sigmoid", tg.sigmoid, 1,
                                [[0.351247947423 + 0.35027387592j,
                       0.075365039753 + 0.042553231973j,
                       -0.072345906069 + 0.349771184962j]]),
               ComplexSecondOrder("sigmoid", lambda z, w: tg.sigmoid(z * w)),
           )),
    # the where() reference has torch's subgradient 0 at x == 0 (jnp.maximum would give 1/2)
    _unary("relu", tg.relu, lambda xp, x: xp.where(x > 0, x, 0.0 * x), gen=nonzero, int_out=I64,
           kink=0.0, errors=_no_bool("relu"),
           point_checks=(
               Subgradient("relu", "relu", lambda x: tg.relu(x), ([-1.0, 0.0, 2.0],),
                           ([0.0, 0.0, 1.0],), "relu'(0) = 0"),
           )),
    _unary("abs", tg.abs, _abs_ref, gen=nonzero, int_out=I64, kink=0.0,
           errors=lambda: [_not_a_tensor("abs", promotes=False)], complex_samples=_abs_complex,
           point_checks=(
               Subgradient("abs", "abs", lambda x: tg.abs(x), ([-1.0, 0.0, 2.0],),
                           ([-1.0, 0.0, 1.0],), "abs'(0) = 0 (sign(0))"),
               ComplexTorchGrad("abs", tg.abs, 1,
                                [[0.4472135955 + 0.894427191j, 1.714985851425 - 1.028991510855j,
                           0.268437746097 - 0.421830743866j]]),
               ComplexSecondOrder("abs", lambda z, w: z.abs() * w),
               ComplexForwardAD("abs", tg.abs, np.abs),
           )),
    _unary("sign", tg.sign, lambda xp, x: xp.sign(x), gen=nonzero, int_out=I64, kink=0.0,
           errors=lambda: [_not_a_tensor("sign", promotes=False)],
           point_checks=(
               Subgradient("sign", "sign", lambda x: tg.sign(x), ([-1.0, 0.0, 2.0],),
                           ([0.0, 0.0, 0.0],), "0 everywhere, also at 0"),
           )),
]


# ---- dtype conversion ---------------------------------------------------------------------
def _to_samples(rng, dtype):
    x, other = uniform(rng, (3, 4), dtype), _other(dtype)
    return [Sample((x, other), dtype=other),             # f32 -> f64 and f64 -> f32
            Sample((x, dtype.name), dtype=dtype),        # same dtype: .to returns self
            Sample((uniform(rng, (), dtype), "float64"), dtype=F64),
            # a float -> int cast is not differentiable: the result does not require grad
            Sample((uniform(rng, (5,), dtype), I64), dtype=I64)]


def _to_errors():
    return [ErrorInput((np.ones((3,), np.float32), "foo"), TypeError, ("dtype", "'foo'"))]


def _to_complex(rng, dtype):
    """complex64 <-> complex128, the same dtype, and real -> complex (the gradient is the
    real part, torch's _to_copy_backward).  complex -> real warns: tests/ops/test_complex.py."""
    other = C128 if dtype is C64 else C64
    return [Sample((cuniform(rng, (3, 4), dtype), other), dtype=other),
            Sample((cuniform(rng, (3, 4), dtype), dtype.name), dtype=dtype),
            Sample((uniform(rng, (3, 4), dtype.to_real()), dtype), dtype=dtype)]


TO = OpInfo("to", lambda x, dtype: x.to(dtype),
            lambda xp, x, dtype: x.astype(tg.ir.types.as_dtype(dtype).numpy), _to_samples,
            error_inputs=_to_errors, covers=("convert",), complex_samples=_to_complex)


# ---- reductions ---------------------------------------------------------------------------
REDUCE_DIMS = [{}, {"dim": 1}, {"dim": -1}, {"dim": (0, 2)}, {"dim": (-1, 0), "keepdim": True},
               {"dim": 1, "keepdim": True}, {"dim": None, "keepdim": True}]


def _reduce_samples(gen, int_dtype=None, tie=False):
    def samples(rng, dtype):
        out = [Sample((gen(rng, (2, 3, 4), dtype),), kw) for kw in REDUCE_DIMS]
        out.append(Sample((gen(rng, (), dtype),)))
        out.append(Sample((gen(rng, (), dtype),), {"dim": 0}))
        if tie:
            x = grid(rng, (3, 4), dtype)
            x[:, 1] = x[:, 3] = 5.0    # two maxima per row: each gets half the gradient
            out.append(Sample((x,), {"dim": 1}, fd=False))
            out.append(Sample((np.full((2, 2), 3.0, dtype.numpy),), fd=False))
        if int_dtype is not None and dtype is F32:
            out.append(Sample((ints(rng, (3, 4), dtype=np.int32),), {"dim": 0}, dtype=int_dtype))
            out.append(Sample((rng.random((3, 4)) > 0.5,), dtype=int_dtype))
        return out
    return samples


def _reduce_errors(name):
    x = np.ones((2, 3, 4), np.float32)
    return lambda: [
        ErrorInput((x,), IndexError, (name, "out of range", "[-3, 2]", "got 3"), {"dim": 3}),
        ErrorInput((x,), ValueError, (name, "twice"), {"dim": (0, -3)})]


def _mean_errors():
    return _reduce_errors("mean")() + [
        ErrorInput((np.ones((3,), np.int64),), TypeError, ("mean", "int64", "floating point"))]


def _amax_errors():
    return _reduce_errors("amax")() + [
        ErrorInput((np.ones((0, 3), np.float32),), ValueError, ("amax", "size 0", "f32[0,3]"),
                   {"dim": 0})]


REDUCE_OPS = [
    OpInfo("sum", lambda x, **kw: x.sum(**kw), _sum_ref, _reduce_samples(uniform, I64),
           error_inputs=_reduce_errors("sum"), complex_samples=3,
           point_checks=(
               ComplexTorchGrad("sum_abs", lambda a: a.abs().sum().reshape(1), 1,
                                [[0.4472135955 + 0.894427191j, -0.857492925713 + 0.514495755428j,
                                  0.536875492193 - 0.843661487732j]]),
           )),
    OpInfo("mean", lambda x, **kw: tg.mean(x, **kw),
           lambda xp, x, dim=None, keepdim=False: xp.mean(x, axis=_axis(x, dim), keepdims=keepdim),
           _reduce_samples(uniform), error_inputs=_mean_errors, complex_samples=3,
           point_checks=(
               ComplexTorchGrad("mean", lambda a: a.mean().reshape(1), 1, [[1 / 3 - 1j / 6] * 3]),
           )),
    # torch.amax splits the gradient evenly among tied maxima, as jnp.max does
    OpInfo("amax", lambda x, **kw: x.amax(**kw),
           lambda xp, x, dim=None, keepdim=False: xp.max(x, axis=_axis(x, dim), keepdims=keepdim),
           _reduce_samples(distinct, tie=True), error_inputs=_amax_errors,
           point_checks=(
               Subgradient("amax", "amax", lambda x: tg.amax(x, dim=1),
                           ([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]],),
                           ([[0.0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]],),
                           "tied maxima share the gradient evenly"),
           )),
    OpInfo("sum_to_size", lambda x, size: x.sum_to_size(size), _sum_to_size_ref,
           lambda rng, dtype: [Sample((uniform(rng, (2, 3, 4), dtype), (3, 1))),
                               Sample((uniform(rng, (2, 3, 4), dtype), (1, 3, 4))),
                               Sample((uniform(rng, (3, 4), dtype), (3, 4)))],
           complex_samples=2),
]


# ---- matmul -------------------------------------------------------------------------------
MATMUL_SHAPES = [((3, 4), (4, 2)),            # 2-D
                 ((2, 3, 4), (2, 4, 5)),      # batched
                 ((2, 1, 3, 4), (5, 4, 2)),   # broadcast batch dims
                 ((3, 4), (2, 4, 5)),         # 2-D @ batched
                 ((4,), (4,)),                # dot -> 0-d
                 ((4,), (4, 3)),              # vector @ matrix
                 ((3, 4), (4,)),              # matrix @ vector
                 ((2, 3, 4), (4,)),           # batched @ vector
                 ((4,), (2, 4, 3))]           # vector @ batched


def _matmul_samples(rng, dtype):
    out = [Sample((uniform(rng, a, dtype, -1, 1), uniform(rng, b, dtype, -1, 1)))
           for a, b in MATMUL_SHAPES]
    return out


def _matmul_errors():
    f = lambda *s: np.ones(s, np.float32)  # noqa: E731
    return [ErrorInput((f(2, 3), f(4, 5)), ValueError, ("matmul", "f32[2,3]", "f32[4,5]")),
            ErrorInput((f(3), f(4)), ValueError, ("matmul", "f32[3]", "f32[4]")),
            ErrorInput((f(2, 3), f(4)), ValueError, ("matmul", "f32[2,3]", "f32[4]")),
            ErrorInput((f(2, 3, 4), f(3, 4, 5)), ValueError,
                       ("matmul", "batch", "f32[2,3,4]", "f32[3,4,5]")),
            ErrorInput((np.ones((), np.float32), f(3)), ValueError,
                       ("matmul", "at least 1 dimension"))]


MATMUL = OpInfo("matmul", lambda x, y: x @ y, lambda xp, x, y: xp.matmul(x, y), _matmul_samples,
                error_inputs=_matmul_errors, covers=("matmul", "batched_matmul"),
                executor_samples=(2, 5), complex_samples=6,
                point_checks=(
                    ComplexTorchGrad("matmul",
                                     lambda a, b: (a.reshape(3, 1) @ b.reshape(1, 3)).sum(0), 2,
                                     [[2.42 + 0.17j] * 3, [0.6 - 1.8j, 0.6 - 0.12j, 0.36 + 2.04j]]),
                    ComplexSecondOrder("matmul", lambda z, w: z.reshape(3, 1) @ z[None]),
                    ComplexForwardAD("matmul", lambda z: z[None] @ z[:, None],
                                     lambda z: np.array([[np.dot(z, z)]])),
                ))


# ---- shape ops ----------------------------------------------------------------------------
def _reshape_samples(rng, dtype):
    x = uniform(rng, (2, 3, 4), dtype)
    return [Sample((x, (6, 4))), Sample((x, (-1,))), Sample((x, (4, -1))),
            Sample((x, (2, 1, 12))), Sample((uniform(rng, (), dtype), (1, 1))),
            Sample((uniform(rng, (1,), dtype), ()))]


def _reshape_errors():
    x = np.ones((2, 3), np.float32)
    return [ErrorInput((x, (5,)), ValueError, ("reshape", "[5]", "f32[2,3]", "size 6")),
            ErrorInput((x, (-1, -1)), ValueError, ("reshape", "only one dimension"))]


def _view_errors():
    x = np.ones((2, 3), np.float32)
    return [ErrorInput((x, (4, -1)), ValueError, ("[4, -1]", "f32[2,3]", "size 6"))]


def _transpose_samples(rng, dtype):
    x = uniform(rng, (2, 3, 4), dtype)
    return [Sample((x, 0, 1)), Sample((x, -1, 0)), Sample((x, 2, 2)),
            Sample((uniform(rng, (3, 4), dtype), 1, 0))]


def _permute_samples(rng, dtype):
    x = uniform(rng, (2, 3, 4), dtype)
    return [Sample((x, (2, 0, 1))), Sample((x, (1, 2, 0))), Sample((x, (-1, 0, 1))),
            Sample((uniform(rng, (3, 4), dtype), (1, 0))), Sample((uniform(rng, (), dtype), ()))]


def _permute_errors():
    x = np.ones((2, 3), np.float32)
    return [ErrorInput((x, (0, 0)), ValueError, ("permute", "not a permutation", "f32[2,3]")),
            ErrorInput((x, (0,)), ValueError, ("permute", "not a permutation", "f32[2,3]")),
            ErrorInput((x, (0, 2)), IndexError, ("permute", "out of range", "got 2"))]


def _expand_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 1), dtype), (3, 4))),
            Sample((uniform(rng, (3, 1), dtype), (2, 3, 4))),
            Sample((uniform(rng, (3, 1), dtype), (2, -1, 4))),
            Sample((uniform(rng, (1,), dtype), (5,))),
            Sample((uniform(rng, (), dtype), (2, 3))),
            Sample((uniform(rng, (2, 3), dtype), (2, 3)))]


def _expand_errors():
    x = np.ones((2, 3), np.float32)
    return [ErrorInput((x, (2, 4)), ValueError, ("expand", "f32[2,3]", "[2, 4]", "(3)")),
            ErrorInput((x, (3,)), ValueError, ("expand", "number of sizes", "f32[2,3]")),
            ErrorInput((x, (-1, 2, 3)), ValueError, ("expand", "-1", "leading"))]


def _squeeze_samples(rng, dtype):
    x = uniform(rng, (2, 1, 3, 1), dtype)
    return [Sample((x,)), Sample((x, 1)), Sample((x, -1)), Sample((x, 0)), Sample((x, (1, 3))),
            Sample((uniform(rng, (1,), dtype),)), Sample((uniform(rng, (), dtype), 0))]


def _unsqueeze_samples(rng, dtype):
    x = uniform(rng, (2, 3), dtype)
    return [Sample((x, 0)), Sample((x, 1)), Sample((x, 2)), Sample((x, -1)), Sample((x, -3)),
            Sample((uniform(rng, (), dtype), 0))]


def _dim_errors(name, args, rng_text):
    return lambda: [ErrorInput(args, IndexError, (name, "out of range", rng_text))]


def _flatten_samples(rng, dtype):
    x = uniform(rng, (2, 3, 4, 1), dtype)
    return [Sample((x,)), Sample((x, 1)), Sample((x, 1, 2)), Sample((x, -3, -2)),
            Sample((uniform(rng, (), dtype),))]


def _flatten_ref(xp, x, start=0, end=-1):
    if x.ndim == 0:
        return xp.reshape(x, (1,))
    s, e = start % x.ndim, end % x.ndim
    return xp.reshape(x, x.shape[:s] + (-1,) + x.shape[e + 1:])


def _cat_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype)  # noqa: E731
    out = [Sample((u(2, 3), u(2, 1), u(2, 4)), {"dim": 1}),
           Sample((u(2, 3), u(4, 3))),
           Sample((u(2, 3, 2), u(2, 3, 1)), {"dim": -1}),
           Sample((u(3),))]
    if dtype is F32:
        out.append(Sample((u(2, 3), uniform(rng, (1, 3), F64)), dtype=F64))  # torch.cat promotes
    return out


def _cat_errors():
    f = lambda *s: np.ones(s, np.float32)  # noqa: E731
    return [ErrorInput((f(2, 3), f(2, 4)), ValueError, ("cat", "f32[2,3]", "f32[2,4]")),
            ErrorInput((f(2, 3), f(3)), ValueError, ("cat", "f32[2,3]", "f32[3]")),
            ErrorInput((f(2, 3), f(2, 3)), IndexError, ("cat", "out of range", "got 2"),
                       {"dim": 2}),
            ErrorInput((), ValueError, ("cat", "non-empty"))]


SHAPE_OPS = [
    OpInfo("reshape", lambda x, shape: x.reshape(*shape), lambda xp, x, shape: xp.reshape(x, shape),
           _reshape_samples, error_inputs=_reshape_errors, complex_samples=2),
    OpInfo("view", lambda x, shape: x.view(shape), lambda xp, x, shape: xp.reshape(x, shape),
           _reshape_samples, error_inputs=_view_errors, complex_samples=2),
    OpInfo("transpose", lambda x, d0, d1: x.transpose(d0, d1),
           lambda xp, x, d0, d1: xp.swapaxes(x, d0, d1), _transpose_samples,
           error_inputs=_dim_errors("transpose", (np.ones((2, 3), np.float32), 0, 2), "got 2"),
           complex_samples=2),
    OpInfo("permute", lambda x, dims: x.permute(*dims), lambda xp, x, dims: xp.transpose(x, dims),
           _permute_samples, error_inputs=_permute_errors, complex_samples=2),
    OpInfo("expand", lambda x, size: x.expand(*size), _expand_ref, _expand_samples,
           error_inputs=_expand_errors, complex_samples=2),
    OpInfo("squeeze", lambda x, *dim: x.squeeze(*dim), _squeeze_ref, _squeeze_samples,
           error_inputs=_dim_errors("squeeze", (np.ones((2, 1), np.float32), 2), "[-2, 1]"),
           complex_samples=2),
    OpInfo("unsqueeze", lambda x, d: tg.unsqueeze(x, d), lambda xp, x, d: xp.expand_dims(x, d),
           _unsqueeze_samples,
           error_inputs=_dim_errors("unsqueeze", (np.ones((2, 3), np.float32), 3), "[-3, 2]"),
           complex_samples=2),
    OpInfo("flatten", lambda x, *a: x.flatten(*a), _flatten_ref, _flatten_samples,
           error_inputs=_dim_errors("flatten", (np.ones((2, 3), np.float32), 2), "got 2"),
           complex_samples=2),
    OpInfo("cat", lambda *xs, **kw: tg.cat(list(xs), **kw),
           lambda xp, *xs, dim=0: xp.concatenate(xs, axis=dim), _cat_samples,
           error_inputs=_cat_errors, complex_samples=2),
]


# ---- indexing -----------------------------------------------------------------------------
A = np.array
GETITEM_KEYS = [
    1, -1, slice(1, 3), slice(None, None, 2), (slice(1, None), slice(None, None, 2), 1),
    (None, 0), (Ellipsis, 1), (Ellipsis, None, slice(1, None)), (1, Ellipsis, None),
    (slice(0, 4, 3), -2, slice(None, 1)), (slice(3, 1),),                  # empty slice
    A([0, 2, 2, 1]),                                # duplicate indices accumulate
    A([[0, 1], [3, 3]]),                            # 2-D index array
    (slice(None), A([4, -1, 0])),                   # negative index on dim 1
    (A([0, 1, 3]), A([4, 4, 0])),                   # two index arrays (pairs)
    (A([0, 3]), A([[1], [2]])),                     # two index arrays that broadcast
    [0, 2],                                         # a Python list is an index array
    (slice(1, 3), A([0, 0, 2])),
    (A([1, 2]), slice(2, None)),
    (Ellipsis, A([2, 0, 2])),
    (0, A([1, -2])),                                # int next to an array: one advanced group
    (None, A([1, 3]), slice(None, None, 2)),
]


def _getitem_samples(rng, dtype):
    x = uniform(rng, (4, 5, 3), dtype)
    out = [Sample((x, k)) for k in GETITEM_KEYS]
    v = uniform(rng, (5,), dtype)
    out += [Sample((v, 2)), Sample((v, A([[0, 4], [4, 0]]))), Sample((v, Ellipsis))]
    return out


def _getitem_errors():
    x = np.ones((4, 3), np.float32)
    return [
        ErrorInput((x, 4), IndexError, ("index 4", "out of bounds", "dimension 0", "size 4")),
        ErrorInput((x, (0, -4)), IndexError, ("index -4", "dimension 1", "size 3")),
        ErrorInput((x, A([0, 5])), IndexError, ("index 5", "dimension 0", "size 4")),
        ErrorInput((x, (0, 1, 2)), IndexError, ("too many indices", "[4, 3]")),
        ErrorInput((x, (Ellipsis, Ellipsis)), IndexError, ("single ellipsis",)),
        ErrorInput((x, slice(None, None, -1)), ValueError, ("step", "greater than zero")),
        # torch 2.13: IndexError "only integers, slices (`:`), ... are valid indices (got float)"
        ErrorInput((x, 1.5), IndexError, ("float", "valid indices")),
        ErrorInput((x, A([0.5])), IndexError, ("indices", "float64")),
        ErrorInput((x, A([True, False, True])), IndexError, ("mask [3]", "[4, 3]", "index 0"))]


# the jax executor has its own slice_backward / index_take_backward kernels (scatter with .at[])
GETITEM = OpInfo("getitem", lambda x, key: x[key], _getitem_ref, _getitem_samples,
                 error_inputs=_getitem_errors, covers=("slice", "index_take"),
                 executor_samples=(4, 11, 15), complex_samples=12)


# ---- neural-network ops -------------------------------------------------------------------
def _softmax_samples(rng, dtype):
    x = uniform(rng, (2, 3, 4), dtype, -3, 3)
    return [Sample((x, -1)), Sample((x, 0)), Sample((x, 1)),
            Sample((uniform(rng, (5,), dtype, -3, 3), 0)),
            Sample((np.array([[100.0, 0.0, -100.0]], dtype.numpy), 1))]   # no overflow


def _softmax_errors(name):
    return lambda: [
        ErrorInput((np.ones((3,), np.int64), 0), TypeError, (name, "floating-point", "i64[3]")),
        ErrorInput((np.ones((2, 3), np.float32), 2), IndexError, (name, "out of range", "got 2"))]


def _cross_entropy_samples(rng, dtype):
    return [Sample((uniform(rng, (4, 5), dtype, -3, 3), ints(rng, (4,), 0, 5))),
            Sample((uniform(rng, (1, 3), dtype), A([2]))),
            Sample((uniform(rng, (3, 2), dtype), A([1, 1, 0])))]


def _cross_entropy_errors():
    x = np.ones((3, 4), np.float32)
    return [ErrorInput((x, A([0, 1])), ValueError, ("cross_entropy", "(3, 4)", "(2,)")),
            ErrorInput((x, np.zeros((3,), np.float32)), TypeError, ("cross_entropy", "float32")),
            ErrorInput((x, A([0, 4, 1])), IndexError, ("cross_entropy", "4", "out of bounds")),
            ErrorInput((x, A([0, -1, 1])), IndexError, ("cross_entropy", "-1", "out of bounds"))]


def _mse_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype))),
            Sample((uniform(rng, (5,), dtype), uniform(rng, (5,), dtype)))]


def _mse_errors():
    return [ErrorInput((np.ones((3, 4), np.float32), np.ones((5,), np.float32)), ValueError,
                       ("mse_loss", "f32[3,4]", "f32[5]"))]


NN_OPS = [
    OpInfo("softmax", lambda x, dim: x.softmax(dim), _softmax_ref, _softmax_samples,
           error_inputs=_softmax_errors("softmax")),
    OpInfo("log_softmax", lambda x, dim: tg.nn.functional.log_softmax(x, dim), _log_softmax_ref,
           _softmax_samples, error_inputs=_softmax_errors("log_softmax")),
    OpInfo("cross_entropy", tg.nn.functional.cross_entropy, _cross_entropy_ref,
           _cross_entropy_samples, error_inputs=_cross_entropy_errors),
    OpInfo("mse_loss", tg.nn.functional.mse_loss,
           lambda xp, x, y: xp.mean((x - y) * (x - y)), _mse_samples, error_inputs=_mse_errors),
]


OPS: list[OpInfo] = (BINARY_OPS + [WHERE] + COMPARE_OPS + UNARY_OPS + [TO] + REDUCE_OPS
                     + [MATMUL] + SHAPE_OPS + [GETITEM] + NN_OPS)
