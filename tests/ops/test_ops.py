"""Every op in tests/opdb.py, checked the same way (STYLE.md, "Tests").

- forward: values match the NumPy reference; dtype and shape are exactly
  torch's; every recorded kernel returned the type its `infer` promised;
  ``requires_grad`` of the result is torch's.
- VJP vs central finite differences in float64, in random directions.
- VJP vs ``jax.vjp`` of the same reference written with jax.numpy.
- the interpreter and the jax executor agree on the backward program.
- every cached backward program passes the IR verifier.
- bad inputs raise the declared error, naming the op and the shapes.
- ``tg.autograd.gradcheck`` / ``gradgradcheck`` (fast mode, float64) on a few samples.
- ``tg.compile`` of a step calling the op and backward() equals the eager step.
- float16 / bfloat16 forward and gradients against float64 on the same rounded values.
- gradients at non-differentiable points are torch's (`Subgradient` records of the entries).
- docs/ops.md is what tools/gen_ops_doc.py generates from all of the above.
"""
from __future__ import annotations

import gc
import os
import sys
import zlib

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.autograd import engine
from tracegrad.ir import verify
from tracegrad.ir.registry import INTERNAL, REGISTRY
from tracegrad.ir.types import from_numpy

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from opdb import F32, F64, OPS, point_checks  # noqa: E402
from opdb.core import C64, C128, Subgradient  # noqa: E402

FD_EPS = 1e-6
FD_TOL = (1e-6, 1e-5)  # (atol, rtol) on the directional derivative


@pytest.fixture(autouse=True)
def _fresh_programs(monkeypatch):
    """An empty backward-program cache and the interpreter per test, restored to "auto" after.

    Cross-check mode (tests/conftest.py) stays on: every backward program
    built here also runs on jax and must agree with the interpreter.
    """
    engine.clear_cache()
    tg.set_executor("interpreter")
    yield
    tg.set_executor("auto")
    engine.clear_cache()


# ---- cases --------------------------------------------------------------------------------
def _seed(*parts) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())


def _expected_dtype(info, dtype, sample):
    return sample.dtype or info.out_dtype or dtype


def _diff_positions(sample) -> list[int]:
    return [i for i, a in enumerate(sample.args)
            if isinstance(a, np.ndarray) and a.dtype.kind in "fc"]


def _cases():
    out = []
    for info in OPS:
        for dtype in info.all_dtypes:   # complex64/complex128 too where the op takes them
            rng = np.random.default_rng(_seed(info.name, dtype.name))
            for i, s in enumerate(info.samples(rng, dtype)):
                out.append((info, dtype, i, s))
    return out


CASES = _cases()


def _xfail(reason: str) -> list:
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


# The three checks that cost a jax trace or compile per case (~0.2-0.5 s each, most of
# `make test`'s op sweep) run in `make test` on a third of the ops each, `make test-all` on
# all: an op runs check k there when (crc32(name) + k) % 3 == 0, so every op keeps one of
# them (unless it skips that one) and each check runs on a third of the ops.  Forward
# values, finite differences, gradcheck, low precision and the error inputs run on every op.
SPLIT_CHECKS = ("jax", "compile", "executors")


def in_make_test(info, check: str) -> bool:
    """Does `make test` run `check` (one of `SPLIT_CHECKS`) on `info`'s samples?"""
    return (zlib.crc32(info.name.encode()) + SPLIT_CHECKS.index(check)) % 3 == 0


def _params(cases, keep: int | None = None, keep_complex: dict | None = None,
            check: str | None = None):
    """pytest params; with `keep`, samples past the first `keep` of each op and dtype are
    marked slow (`make test` skips them to stay inside its time budget; `make test-all`
    runs everything); `keep_complex` overrides `keep` for complex dtypes; with `check`
    (one of `SPLIT_CHECKS`), every sample of an op outside that check's half is slow."""
    def marks(info, i, dtype, s):
        n = keep_complex.get(dtype, keep) if keep_complex and dtype.is_complex else keep
        slow = (n is not None and i >= n) or (check is not None and not in_make_test(info, check))
        return _xfail(s.xfail) + ([pytest.mark.slow] if slow else [])
    return [pytest.param(info, dtype, s, id=f"{info.name}-{dtype.short}-{i}",
                         marks=marks(info, i, dtype, s))
            for info, dtype, i, s in cases]


def _values_only(crosscheck: bool, dtype) -> None:
    """Complex samples check gradient values on the interpreter alone (cross-check off, in
    `make test-all` too): the executors' agreement on complex programs is
    `test_executors_agree`'s, and each jax run would be one more jit compile.  Real samples
    are cross-checked in `make test-all` (the `crosscheck_in_test_all` fixture)."""
    if crosscheck and dtype.is_complex:
        pytest.skip("complex: the executors' agreement is test_executors_agree's")


def _has_grad(info, dtype, s) -> bool:
    return (info.differentiable and bool(_diff_positions(s))
            and _expected_dtype(info, dtype, s).is_differentiable)


GRAD_CASES = [c for c in CASES if _has_grad(c[0], c[1], c[3])]
FD_CASES = [c for c in GRAD_CASES
            if c[3].fd and _expected_dtype(c[0], c[1], c[3]) in (F64, C128)
            and all(c[3].args[i].dtype in (np.float64, np.complex128)
                    for i in _diff_positions(c[3]))]
EXECUTOR_CASES = [c for c in GRAD_CASES if c[1] in (F32, C64) and c[2] in c[0].executor_samples]
ERROR_CASES = [pytest.param(info, e, id=f"{info.name}-{k}", marks=_xfail(e.xfail))
               for info in OPS for k, e in enumerate(info.error_inputs())]


# ---- helpers ------------------------------------------------------------------------------
def _tensors(args, requires_grad=True) -> list:
    """Arrays -> tensors (floating ones require grad); other arguments unchanged."""
    return [tg.tensor(a, requires_grad=requires_grad and a.dtype.kind in "fc")
            if isinstance(a, np.ndarray) else a for a in args]


def _upcast(args) -> list:
    """Floating arrays in float64 (complex in complex128), for references more accurate
    than the op under test."""
    wide = {"f": np.float64, "c": np.complex128}
    return [a.astype(wide[a.dtype.kind]) if isinstance(a, np.ndarray) and a.dtype.kind in wide
            else a for a in args]


def _cotangent(rng, out) -> np.ndarray:
    u = rng.standard_normal(out.shape)
    if out.dtype.is_complex:
        u = u + 1j * rng.standard_normal(out.shape)
    return np.asarray(u).astype(out.dtype.numpy)


def _joined(out, xp=None):
    """What the gradient checks differentiate: a single output as it is; of a multi-output
    op (a tuple), the floating outputs flattened and joined (tensors, or `xp` arrays)."""
    if not isinstance(out, (tuple, list)):
        return out
    if xp is None:
        flat = [o.reshape(-1) for o in out if o.dtype.is_differentiable]
        return flat[0] if len(flat) == 1 else tg.cat(flat)
    flat = [xp.ravel(o) for o in out if np.issubdtype(o.dtype, np.inexact)]
    return flat[0] if len(flat) == 1 else xp.concatenate(flat)


def _tg_vjp(info, sample, u=None, rng=None):
    """(output, cotangent, gradients as arrays) through tg.autograd.grad."""
    args = _tensors(sample.args)
    diff = _diff_positions(sample)
    out = _joined(info.fn(*args, **sample.kwargs))
    if u is None:
        u = _cotangent(rng, out)
    grads = tg.autograd.grad(out, [args[i] for i in diff], grad_outputs=tg.tensor(u))
    for i, g in zip(diff, grads):
        assert g.shape == args[i].shape, f"gradient of argument {i}: shape {g.shape}"
        assert g.dtype is args[i].dtype, f"gradient of argument {i}: dtype {g.dtype}"
        assert not g.requires_grad
    return out, u, [g.numpy() for g in grads]


def _jax_vjp(info, sample, u) -> list[np.ndarray]:
    """Gradients of `info.ref` under jax.numpy, in float64, for cotangent `u`."""
    import jax
    import jax.numpy as jnp

    args = _upcast(sample.args)
    diff = _diff_positions(sample)

    def f(*primals):
        a = list(args)
        for i, p in zip(diff, primals):
            a[i] = p
        return _joined(info.ref(jnp, *a, **sample.kwargs), jnp)

    # jax's complex convention is the conjugate of torch's: torch's VJP of u is
    # conj(jax's VJP of conj(u)) (for real values conj changes nothing)
    with jax.enable_x64(True):
        out, pullback = jax.vjp(f, *[jnp.asarray(args[i]) for i in diff])
        grads = pullback(jnp.conj(jnp.asarray(u, dtype=out.dtype)))
        return [np.conj(np.asarray(g)) for g in grads]


def _verify_cached_programs(out) -> None:
    """The IR verifier on every cached backward program (there is one unless `out` is a leaf)."""
    programs = list(engine._cache.values())
    if out.grad_fn is not None:
        assert programs, "no backward program was cached"
    for prog in programs:
        verify(prog.graph)


def _tol(info, *dtypes) -> tuple[float, float]:
    """The loosest tolerance among the dtypes a result went through."""
    tols = [info.tol(d) for d in dtypes if d.is_differentiable]
    return max(t[0] for t in tols), max(t[1] for t in tols)


def _float_dtypes(sample) -> list:
    return [from_numpy(sample.args[i].dtype) for i in _diff_positions(sample)]


def _assert_close(actual, expected, dtype, tols, what=""):
    if dtype.is_differentiable:
        atol, rtol = tols
        np.testing.assert_allclose(actual, expected, atol=atol, rtol=rtol, err_msg=what,
                                   equal_nan=False)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


# ---- tests --------------------------------------------------------------------------------
@pytest.mark.parametrize("info,dtype,sample", _params(CASES))
def test_forward_matches_reference(info, dtype, sample):
    args = _tensors(sample.args)
    outs = _outputs(info.fn(*args, **sample.kwargs))
    refs = _outputs(info.ref(np, *_upcast(sample.args), **sample.kwargs))
    assert len(outs) == len(refs), f"{len(outs)} outputs, the reference has {len(refs)}"
    for k, (out, expected) in enumerate(zip(outs, refs)):
        expected = np.asarray(expected)
        want = _expected_dtype(info, dtype, sample)
        if len(outs) > 1 and expected.dtype.kind not in "fc":   # indices: the reference's
            want = from_numpy(expected.dtype)
        elif len(outs) > 1 and expected.dtype.kind == "f" and want.is_complex:
            want = want.to_real()    # a real output of a complex op (var_mean's var)
        assert isinstance(out, tg.Tensor)
        assert out.dtype is want, f"output {k}: dtype {out.dtype}, torch gives {want}"
        assert out.shape == expected.shape, f"output {k}"
        _assert_close(out.detach().numpy(), expected, want, info.tol(want), f"output {k}")
        # torch: only float results of differentiable ops on inputs that require grad do
        assert out.requires_grad == (want.is_differentiable and _has_grad(info, dtype, sample))
    # each recorded kernel returned exactly the shape and dtype its `infer` promised
    for node in engine._collect(list(outs)):
        for t, a in zip(node.out_types, node.saved_outputs):
            assert (t.shape, t.dtype) == (a.shape, from_numpy(a.dtype)), node.op.name


# complex: the finite differences below pin torch's convention; the conjugated jax.vjp
# comparison runs in `make test-all` only (one jax trace per op and dtype).  `make test`
# compares each op's first sample per real dtype (a jax trace each; the second sample cost
# 60 s of the budget): the finite differences still check three samples in float64
@pytest.mark.parametrize("info,dtype,sample", _params(GRAD_CASES, keep=1,
                                                      keep_complex={C64: 0, C128: 0},
                                                      check="jax"))
def test_vjp_matches_jax(info, dtype, sample, crosscheck_in_test_all):
    _values_only(crosscheck_in_test_all, dtype)
    rng = np.random.default_rng(_seed("jax", info.name))
    out, u, grads = _tg_vjp(info, sample, rng=rng)
    expected = _jax_vjp(info, sample, u)
    tol = _tol(info, out.dtype, *_float_dtypes(sample))
    for i, g, e in zip(_diff_positions(sample), grads, expected):
        _assert_close(g, e, from_numpy(g.dtype), tol, f"gradient of argument {i}")
    _verify_cached_programs(out)


@pytest.mark.parametrize("info,dtype,sample", _params(FD_CASES, keep=3, keep_complex={C128: 1}))
def test_vjp_matches_finite_differences(info, dtype, sample, crosscheck_in_test_all):
    _values_only(crosscheck_in_test_all, dtype)
    rng = np.random.default_rng(_seed("fd", info.name))
    out, u, grads = _tg_vjp(info, sample, rng=rng)
    consts = _tensors(sample.args, requires_grad=False)

    def f(i, xi):
        a = list(consts)
        a[i] = tg.tensor(xi)
        with tg.no_grad():
            return _joined(info.fn(*a, **sample.kwargs)).numpy()

    for i, g in zip(_diff_positions(sample), grads):
        x = sample.args[i]
        v = np.asarray(rng.standard_normal(x.shape))
        # a complex input is perturbed along its real part, then along its imaginary part
        # (torch's complex gradcheck); with the gradient g = dL/dRe + i dL/dIm of the real
        # loss L = Re <u, f>, <g, v> is Re sum(conj(g) v)
        for part, d in (("real", v), ("imaginary", 1j * v))[:2 if x.dtype.kind == "c" else 1]:
            jvp = (f(i, x + FD_EPS * d) - f(i, x - FD_EPS * d)) / (2 * FD_EPS)
            numeric = np.real(np.sum(np.conj(u) * jvp))
            analytic = np.real(np.sum(np.conj(g) * d))
            np.testing.assert_allclose(analytic, numeric, atol=FD_TOL[0], rtol=FD_TOL[1],
                                       err_msg=f"<vjp, v> vs finite differences, argument {i} "
                                               f"({part} part)")
    _verify_cached_programs(out)


@pytest.mark.parametrize("info,dtype,sample", _params(EXECUTOR_CASES, check="executors"))
def test_executors_agree(info, dtype, sample, monkeypatch):
    """One backward program, run by the interpreter and by the jax lowering: same gradients
    (the test is the cross-check: cross-check mode off, so that each executor runs once)."""
    monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "0")
    args = _tensors(sample.args)
    diff = _diff_positions(sample)
    out = _joined(info.fn(*args, **sample.kwargs))
    u = tg.tensor(_cotangent(np.random.default_rng(0), out))
    grads = {}
    for executor in ("interpreter", "jax"):
        tg.set_executor(executor)
        for i in diff:
            args[i].grad = None
        out.backward(u, retain_graph=True)
        grads[executor] = [args[i].grad.numpy() for i in diff]
    (prog,) = engine._cache.values()            # one program, run twice
    assert prog.runs == 2 and prog._exe._lowered is not None, "the jax executor did not run"
    tol = _tol(info, out.dtype, *_float_dtypes(sample))
    for i, a, b in zip(diff, grads["interpreter"], grads["jax"]):
        assert a.dtype == b.dtype == sample.args[i].dtype
        assert a.shape == b.shape == sample.args[i].shape
        _assert_close(b, a, from_numpy(a.dtype), tol, f"jax vs interpreter, argument {i}")
    _verify_cached_programs(out)


@pytest.mark.parametrize("info,err", ERROR_CASES)
def test_error_inputs(info, err):
    args = _tensors(err.args, requires_grad=False)
    with pytest.raises(err.exc) as exc_info:
        info.fn(*args, **err.kwargs)
    message = str(exc_info.value)
    for part in err.match:
        assert part in message, f"{part!r} missing from the message: {message!r}"


def test_opdb_covers_the_registry():
    """Every registry op, primitive or composite, INTERNAL ones included, has an entry."""
    covered = {op for info in OPS for op in (info.covers or (info.name,))}
    missing = set(REGISTRY) - covered
    assert not missing, f"registry ops without an OpInfo in tests/opdb: {sorted(missing)}"
    stale = covered - set(REGISTRY)
    assert not stale, f"opdb names ops the registry lacks: {sorted(stale)}"
    assert len({info.name for info in OPS}) == len(OPS)


def test_entries_run_elsewhere_say_where():
    """An entry without samples is an INTERNAL op no user call runs alone, with the reason and
    the tests that run it (`OpInfo.exercised_by`); every other entry has a call."""
    for info in OPS:
        if info.exercised_by:
            assert info.fn is None and not any(c[0] is info for c in CASES), info.name
            assert all(REGISTRY[op].flags & INTERNAL for op in (info.covers or (info.name,))), \
                f"{info.name}: a public op must be callable by its entry"
            assert "tests/" in info.exercised_by, f"{info.name}: name the tests that run it"
        else:
            assert callable(info.fn) and callable(info.ref), info.name


def test_every_op_has_samples_in_each_dtype():
    for info in OPS:
        if info.exercised_by:      # no samples, by declaration (test above)
            continue
        for dtype in info.all_dtypes:
            n = sum(1 for c in CASES if c[0] is info and c[1] is dtype)
            assert n >= 1, f"{info.name} has no {dtype.name} samples"
        if info.differentiable and not info.no_fd:
            assert any(c[0] is info for c in FD_CASES), f"{info.name}: no finite-difference case"
            if info.complex_samples is not None:
                assert any(c[0] is info and c[1] is C128 for c in FD_CASES), \
                    f"{info.name}: no complex128 finite-difference case"
            assert any(c[0] is info for c in EXECUTOR_CASES), f"{info.name}: no executor case"


# ---- gradcheck, compile, low precision, subgradients ----------------------------------------
# Generic checks over every OpInfo, each on a few samples to keep `make test` short.  Which
# samples run which check is decided here, once; tools/gen_ops_doc.py reads these lists to
# write docs/ops.md, so the table there is exactly what runs.

CHECKS = ("gradcheck", "gradgradcheck", "compile", "float16", "bfloat16", "low_precision")
GRADCHECK_SAMPLES = 2        # first finite-difference samples per op through gradcheck
GRADGRADCHECK_SAMPLES = 1    # ... and through gradgradcheck (double backward: dearer)
LOW_DTYPES = (tg.float16, tg.bfloat16)
# (atol, rtol) of a float16/bfloat16 result against float64 on the same (rounded) inputs;
# atol is scaled by the largest magnitude of the float64 result (OpInfo.low_precision
# overrides per dtype)
LOW_PRECISION_TOLS = {tg.float16: (1e-2, 1e-2), tg.bfloat16: (5e-2, 5e-2)}


def _skipped(info, check: str) -> bool:
    low = check in ("float16", "bfloat16") and "low_precision" in info.skips
    return check in info.skips or low


def _first(cases, n: int, key=lambda c: (c[0].name, c[1])) -> list:
    """The first `n` cases per op (and dtype)."""
    seen: dict = {}
    out = []
    for c in cases:
        k = key(c)
        if seen.get(k, 0) < n:
            seen[k] = seen.get(k, 0) + 1
            out.append(c)
    return out


# (tg.autograd.gradcheck is real-only: complex samples have their real/imaginary finite
# differences in test_vjp_matches_finite_differences)
GRADCHECK_CASES = _first([c for c in FD_CASES if not _skipped(c[0], "gradcheck")
                          and not c[3].xfail and not c[1].is_complex],
                         GRADCHECK_SAMPLES)
GRADGRADCHECK_CASES = _first([c for c in GRADCHECK_CASES if c[0].supports_gradgrad
                              and not _skipped(c[0], "gradgradcheck")], GRADGRADCHECK_SAMPLES)
COMPILE_CASES = _first([c for c in CASES if not _skipped(c[0], "compile") and not c[3].xfail
                        and c[1] is not C128],   # complex: complex64 (one trace per op)
                       1)

# Reported bugs these checks found: (check, op, dtype) -> reason.  Each runs as a strict
# xfail, so a fix shows up as an XPASS: then delete its line.
KNOWN_FAILURES: dict[tuple[str, str, str], str] = {
}


@pytest.fixture
def interpreter_only(monkeypatch):
    """Backward programs run on the interpreter alone (cross-check mode off): these checks
    are about values, the executors' agreement is `test_executors_agree`'s, and each jax
    run would be one more jit compile."""
    monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "0")


@pytest.fixture(scope="module")
def frozen_heap():
    """The objects alive now (the op database, the collected tests) moved out of the
    garbage collector's sight while the compile tests run: the tracer calls gc.collect()
    once per trace, and that is most of a small trace's cost in this big process."""
    gc.freeze()
    yield
    gc.unfreeze()


def _check_params(check: str, cases, slow=lambda info, dtype: False) -> list:
    """pytest params of a check; cases for which `slow(info, dtype)` holds run in
    `make test-all` only."""
    return [pytest.param(info, dtype, s, id=f"{info.name}-{dtype.short}-{i}",
                         marks=_xfail(KNOWN_FAILURES.get((check, info.name, dtype.short), ""))
                         + ([pytest.mark.slow] if slow(info, dtype) else []))
            for info, dtype, i, s in cases]


# eager vs tg.compile does not depend on the float width: float64 runs in `make test-all`
# where the op also has a float32 case (one trace each; 25 s of `make test`)
_COMPILED_F32 = {c[0].name for c in COMPILE_CASES if c[1] is F32}


def _compile_is_slow(info, dtype) -> bool:
    return (dtype is F64 and info.name in _COMPILED_F32) or not in_make_test(info, "compile")


def _all_float32(sample) -> bool:
    return all(sample.args[i].dtype == np.float32 for i in _diff_positions(sample))


def _low_precision_cases():
    """Per op, the first float32 finite-difference sample (all floating inputs float32),
    once in each low-precision dtype the op does not skip."""
    out = []
    for info in OPS:
        for info_, dtype, i, s in CASES:
            if info_ is info and dtype is F32 and s.fd and not s.xfail and _all_float32(s) \
                    and _diff_positions(s):
                out += [(info, low, i, s) for low in LOW_DTYPES if not _skipped(info, low.name)]
                break
    return out


LOW_PRECISION_CASES = _low_precision_cases()


def _outputs(out) -> tuple:
    """An op's result as a tuple of tensors (multi-output ops return tuples)."""
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _problem(info, sample):
    """`info.fn` as a function of the differentiable tensors only, and those tensors."""
    args = _tensors(sample.args)
    diff = _diff_positions(sample)

    def func(*xs):
        a = list(args)
        for i, x in zip(diff, xs):
            a[i] = x
        return info.fn(*a, **sample.kwargs)
    return func, tuple(args[i] for i in diff)


@pytest.mark.parametrize("info,dtype,sample", _check_params("gradcheck", GRADCHECK_CASES))
@pytest.mark.usefixtures("interpreter_only")
def test_gradcheck(info, dtype, sample):
    func, inputs = _problem(info, sample)
    assert tg.autograd.gradcheck(func, inputs, fast_mode=True)


@pytest.mark.parametrize("info,dtype,sample", _check_params("gradgradcheck", GRADGRADCHECK_CASES))
@pytest.mark.usefixtures("interpreter_only")
def test_gradgradcheck(info, dtype, sample):
    func, inputs = _problem(info, sample)
    assert tg.autograd.gradgradcheck(func, inputs, fast_mode=True)


@pytest.mark.parametrize("info,dtype,sample", _check_params("compile", COMPILE_CASES,
                                                             _compile_is_slow))
@pytest.mark.usefixtures("interpreter_only", "frozen_heap")
def test_compile_matches_eager(info, dtype, sample):
    """`tg.compile` of a step calling the op, weighting its outputs, calling backward():
    the same outputs and the same leaf gradients as running the step eagerly."""
    pos = [i for i, a in enumerate(sample.args) if isinstance(a, np.ndarray)]
    grad = _has_grad(info, dtype, sample)
    with tg.no_grad():
        probe = _outputs(info.fn(*_tensors(sample.args, requires_grad=False), **sample.kwargs))
    rng = np.random.default_rng(_seed("compile", info.name))
    weights = [tg.tensor(_cotangent(rng, o)) for o in probe if o.dtype.is_differentiable]

    def step(*tensors):
        a = list(sample.args)
        for i, t in zip(pos, tensors):
            a[i] = t
        out = info.fn(*a, **sample.kwargs)
        if grad:
            floats = [o for o in _outputs(out) if o.dtype.is_differentiable]
            terms = [(o * w).sum() for o, w in zip(floats, tensors[len(pos):]) if o.requires_grad]
            terms = [t.real if t.is_complex() else t for t in terms]   # a real loss
            if terms:
                sum(terms[1:], terms[0]).backward()
        return out

    eager_args = [t for t in _tensors(sample.args) if isinstance(t, tg.Tensor)]
    compiled_args = [t for t in _tensors(sample.args) if isinstance(t, tg.Tensor)]
    expected = _outputs(step(*eager_args, *weights))
    actual = _outputs(tg.compile(step)(*compiled_args, *weights))
    assert len(actual) == len(expected)
    for k, (a, e) in enumerate(zip(actual, expected)):
        assert (a.dtype, a.shape) == (e.dtype, e.shape), f"output {k}"
        _assert_same(a.numpy(), e.detach().numpy(), info.tol(e.dtype), f"output {k}")
    for i, (a, e) in enumerate(zip(compiled_args, eager_args)):
        if e.grad is None:
            assert a.grad is None, f"argument {pos[i]}: compiled step set a gradient"
            continue
        assert a.grad is not None, f"argument {pos[i]}: no gradient from the compiled step"
        _assert_same(a.grad.numpy(), e.grad.numpy(), _tol(info, e.dtype),
                     f"gradient of argument {pos[i]}")


def _assert_same(actual, expected, tols, what):
    """Two runs of the same computation: close, NaN where the other has NaN."""
    if expected.dtype.kind in "fcV":
        wide = np.complex128 if expected.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(actual.astype(wide), expected.astype(wide),
                                   atol=tols[0], rtol=tols[1], err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


def _assert_close_low(actual, expected, tols, what):
    """|actual - expected| <= atol * max(1, max|expected|) + rtol * |expected|."""
    actual = np.asarray(actual, np.float64)
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(actual, expected, atol=tols[0] * scale, rtol=tols[1],
                               err_msg=what)


@pytest.mark.parametrize("info,dtype,sample", _check_params("low_precision", LOW_PRECISION_CASES))
@pytest.mark.usefixtures("interpreter_only")
def test_low_precision_matches_float64(info, dtype, sample):
    """float16/bfloat16 forward and gradients against float64 on the same rounded values."""
    low = [a.astype(dtype.numpy) if i in _diff_positions(sample) else a
           for i, a in enumerate(sample.args)]
    wide = [a.astype(np.float64) if i in _diff_positions(sample) else a
            for i, a in enumerate(low)]
    diff = _diff_positions(sample)
    # (bfloat16 arrays have NumPy kind "V", so `_tensors` would not mark them)
    args_low = [tg.tensor(a, requires_grad=i in diff) if isinstance(a, np.ndarray) else a
                for i, a in enumerate(low)]
    args_64 = _tensors(wide)
    outs_low = _outputs(info.fn(*args_low, **sample.kwargs))
    outs_64 = _outputs(info.fn(*args_64, **sample.kwargs))
    # the result follows the input dtype when float32 gives float32 and float64 float64
    # (not for casts like .float() or .to(float64), whose result dtype is fixed)
    want = _expected_dtype(info, F32, sample)
    want = dtype if want is F32 and outs_64[0].dtype is F64 else want
    assert outs_low[0].dtype is want, f"dtype {outs_low[0].dtype}, torch gives {want}"
    tols = info.low_precision.get(dtype, LOW_PRECISION_TOLS[dtype])
    for k, (a, e) in enumerate(zip(outs_low, outs_64)):
        if e.dtype.is_floating_point:
            _assert_close_low(a.detach().numpy(), e.detach().numpy(), tols, f"output {k}")
        else:
            np.testing.assert_array_equal(a.numpy(), e.numpy(), err_msg=f"output {k}")
    if not _has_grad(info, F32, sample):
        return
    rng = np.random.default_rng(_seed("low", info.name))
    roots = [(a, e) for a, e in zip(outs_low, outs_64) if a.requires_grad]
    cts = [_cotangent(rng, a) for a, _ in roots]      # in the low dtype: exact in float64
    g_low = tg.autograd.grad([a for a, _ in roots], [args_low[i] for i in diff],
                             [tg.tensor(c) for c in cts], allow_unused=True)
    g_64 = tg.autograd.grad([e for _, e in roots], [args_64[i] for i in diff],
                            [tg.tensor(c.astype(np.float64)) for c in cts], allow_unused=True)
    for i, a, e in zip(diff, g_low, g_64):
        if e is None:
            assert a is None, f"gradient of argument {i}"
            continue
        assert a.dtype is dtype, f"gradient of argument {i}: dtype {a.dtype}"
        _assert_close_low(a.numpy(), e.numpy(), tols, f"gradient of argument {i}")


# ---- subgradients at non-differentiable points ---------------------------------------------


# torch 2.13 gives each `grads` (torch.autograd.grad of fn(*args).sum()); each record is
# declared with its op's entry in tests/opdb/ (`OpInfo.point_checks`)
SUBGRADIENTS = point_checks(Subgradient)


def _resolve(path: str):
    obj = tg
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=_xfail(KNOWN_FAILURES.get(("subgradient", n, "f64"), "")))
    for n in sorted(SUBGRADIENTS)])
@pytest.mark.usefixtures("interpreter_only")
def test_subgradient_matches_torch(name):
    entry = SUBGRADIENTS[name]
    if _resolve(entry.op) is None:
        pytest.skip(f"tracegrad.{entry.op} does not exist yet")
    args = [tg.tensor(np.array(a, dtype=np.float64), requires_grad=True) for a in entry.args]
    out = entry.fn(*args)
    grads = tg.autograd.grad(out.sum(), args, allow_unused=True)
    for i, (g, want) in enumerate(zip(grads, entry.grads)):
        got = np.zeros(args[i].shape) if g is None else g.numpy()
        np.testing.assert_allclose(got, np.array(want, dtype=np.float64), rtol=1e-12, atol=0,
                                   err_msg=f"{name}: gradient of argument {i} at {entry.args[i]}"
                                           f" (torch 2.13 gives {want}; {entry.note})")


def test_opinfo_check_fields_are_valid():
    for info in OPS:
        unknown = set(info.skips) - set(CHECKS)
        assert not unknown, f"{info.name}: unknown checks in skips: {sorted(unknown)}"
        assert all(isinstance(r, str) and r for r in info.skips.values()), \
            f"{info.name}: every skip needs a reason"
        assert set(info.low_precision) <= set(LOW_DTYPES), f"{info.name}: low_precision keys"


def test_docs_ops_md_is_up_to_date():
    gen = _doc_generator()
    with open(gen.OUTPUT, encoding="utf-8") as f:
        current = f.read()
    assert current == gen.render(sys.modules[__name__]), (
        "docs/ops.md is out of date with the op database; regenerate it with "
        "`python tools/gen_ops_doc.py`")


def _doc_generator():
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "tools", "gen_ops_doc.py")
    spec = importlib.util.spec_from_file_location("gen_ops_doc", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
