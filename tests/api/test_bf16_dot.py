"""The jax lowering of matrix products for bfloat16 / float16 operands: a dot with float32
results rounded once to the operand dtype (ir/ops/_blas.py `product`), which XLA CPU runs on
its native bf16 GEMM where a plain bf16 dot becomes converts and a float32 dot
(docs/performance.md, "Mixed precision (bf16)"); the values agree with a float32 NumPy
product within bfloat16's precision."""
import re

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import tracegrad as tg
from tracegrad.ir.registry import get

RTOL = {"bfloat16": 2e-2, "float16": 2e-3}   # bf16 keeps 8 significant bits, f16 11


def _operands(dtype, shape_a=(2, 16, 32), shape_b=(32, 24), seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    return a.astype(dtype), b.astype(dtype)


def _close(got, a, b, dtype_name):
    want = a.astype(np.float32) @ b.astype(np.float32)   # the exact product of the operands
    got = np.asarray(got, dtype=np.float32)
    scale = np.abs(a.astype(np.float32)) @ np.abs(b.astype(np.float32))
    assert got.shape == want.shape
    # one rounding of a float32-accumulated sum: |err| <= rtol * sum |a||b| per element
    assert np.all(np.abs(got - want) <= RTOL[dtype_name] * scale + 1e-6), (
        np.max(np.abs(got - want) / scale))
    assert not np.array_equal(got, want)   # it did round to the half-precision dtype


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16], ids=["bf16", "f16"])
def test_half_precision_product_accumulates_in_float32_and_keeps_its_dtype(dtype):
    kernel = get("batched_matmul").kernel_for("jax")
    a, b = _operands(dtype)
    fn = jax.jit(lambda a, b: kernel(jnp, a, b))
    text = fn.lower(a, b).as_text()
    name = np.dtype(dtype).name
    short = {"bfloat16": "bf16", "float16": "f16"}[name]
    # the dot takes the half-precision operands and gives float32, then one convert back
    dot = re.search(r"stablehlo\.dot_general .*: \((tensor<[^)]*)\) -> (tensor<[^>]*>)", text)
    assert dot is not None, text
    assert dot.group(1).count(f"x{short}>") == 2 and dot.group(2).endswith("xf32>"), dot.group(0)
    assert re.search(rf"stablehlo\.convert .*-> tensor<2x16x24x{short}>", text), text
    out = fn(a, b)
    assert out.dtype == np.dtype(dtype) and out.shape == (2, 16, 24)
    _close(out, a, b, name)


def test_float32_product_is_a_plain_float32_dot():
    kernel = get("batched_matmul").kernel_for("jax")
    a, b = _operands(np.float32)
    text = jax.jit(lambda a, b: kernel(jnp, a, b)).lower(a, b).as_text()
    assert "stablehlo.convert" not in text and "xf32>) -> tensor<2x16x24xf32>" in text


def test_compiled_matmul_under_autocast_runs_the_bf16_dot():
    a, b = _operands(np.float32, (64, 32), (32, 48), seed=1)
    x, w = tg.tensor(a), tg.tensor(b)

    # float32 out: the suite's executor cross-check compares bfloat16 outputs bit for bit
    # (ml_dtypes' dtype kind is "V"), and the interpreter's NumPy GEMM sums in another order
    @tg.compile
    def f(x, w):
        with tg.autocast("cpu", dtype=tg.bfloat16):
            y = x @ w
        return y.float(), y.dtype is tg.bfloat16

    y, was_bf16 = f(x, w)
    assert was_bf16 and tuple(y.shape) == (64, 48)
    y = y.numpy()
    bf = ml_dtypes.bfloat16
    np.testing.assert_array_equal(y, y.astype(bf).astype(np.float32))   # rounded to bf16
    _close(y, a.astype(bf), b.astype(bf), "bfloat16")
    # against the float32 product of the unrounded inputs: the inputs' rounding counts too
    np.testing.assert_allclose(y, a @ b, rtol=0.05, atol=0.1)
    entry = next(e for bucket in f._cache.values() for e in bucket)
    inputs = [x._data, w._data] + list(entry.trace.constants)
    compiled = entry._exe.lowered().compiled(inputs).as_text()
    # XLA kept the dot in bf16 x bf16 -> f32 (its native GEMM), not converts to a float32 dot
    dots = re.findall(r"= f32\[64,48\]\{1,0\} dot\(%([\w.\-]+), %([\w.\-]+)\)", compiled)
    types = dict(re.findall(r"%([\w.\-]+) = (\w+)\[", compiled))
    assert dots and all(types[p] == "bf16" for d in dots for p in d), compiled


def test_linear_weight_gradient_of_a_batch_stays_on_the_bf16_dot():
    # the weight gradient of a linear layer over (B, T, K) inputs is one (K, B*T) @ (B*T, N)
    # GEMM; its left operand is built so that XLA does not run it as a float32 dot
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 16, 32)).astype(np.float32)
    wa = (rng.standard_normal((24, 32)) * 0.2).astype(np.float32)
    x, w = tg.tensor(a), tg.tensor(wa, requires_grad=True)

    @tg.compile
    def step(x):
        with tg.autocast("cpu", dtype=tg.bfloat16):
            y = tg.nn.functional.linear(x, w)
        (y.float() ** 2).sum().backward()
        return y.float()   # float32 out: see test_compiled_matmul_under_autocast_runs_the_bf16_dot

    y = step(x)
    assert w.grad.dtype is tg.float32
    bf = ml_dtypes.bfloat16
    xb, yb = a.astype(bf).astype(np.float32), y.detach().numpy()
    # d/dW sum(y^2) = 2 y^T x, the product of the bf16 operands, rounded to bf16, then float32
    want = (2 * yb).reshape(-1, 24).T @ xb.reshape(-1, 32)
    scale = np.abs(2 * yb).reshape(-1, 24).T @ np.abs(xb).reshape(-1, 32)
    assert np.all(np.abs(w.grad.numpy() - want) <= 2e-2 * scale + 1e-6)
    entry = next(e for bucket in step._cache.values() for e in bucket)
    inputs = [x._data] + [ref()._data for ref, *_ in entry.lifted] + list(entry.trace.constants)
    compiled = entry._exe.lowered().compiled(inputs).as_text()
    types = dict(re.findall(r"%([\w.\-]+) = (\w+)\[", compiled))
    dots = re.findall(r" dot\(%([\w.\-]+), %([\w.\-]+)\)", compiled)
    assert len(dots) >= 2 and all(types[p] == "bf16" for d in dots for p in d), compiled
