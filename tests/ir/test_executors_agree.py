"""Gradients at NaNs and ties: torch 2.13's values on every call, bit for bit on both executors.

The `auto` executor moves a program to jax on its third run, so a VJP that forms
``inf * 0`` (NaN in NumPy, folded to 0 by XLA) changed results between calls.  Each program
here runs four times on the interpreter, on jax, on `auto` and under `tg.compile`, and every
gradient must equal torch's recorded one byte for byte (NaN payloads and -0.0 included).
"""
import math

import numpy as np
import pytest

import tracegrad as tg

nan = math.nan
X = np.array([[1.0, nan, 3.0], [4.0, -5.0, 5.0], [nan, nan, 0.0]], np.float32)
A = np.array([1.0, nan, 3.0, nan], np.float32)
B = np.array([nan, 2.0, 3.0, nan], np.float32)
T3 = 1 / np.float32(3)

# (program, input, torch 2.13's gradient of x)
CASES = {
    "amax_dim0": (lambda x: x.amax(dim=0).sum(), X,     # torch 2.13
                  [[nan, nan, 0.0], [nan, nan, 1.0], [nan, nan, 0.0]]),
    "amax_dim1": (lambda x: x.amax(dim=1).sum(), X,     # torch 2.13
                  [[nan, nan, nan], [0.0, 0.0, 1.0], [nan, nan, nan]]),
    "amax_all": (lambda x: x.amax(), X, [[nan] * 3] * 3),   # torch 2.13
    "amin_dim0": (lambda x: x.amin(dim=0).sum(), X,     # torch 2.13
                  [[nan, nan, 0.0], [nan, nan, 0.0], [nan, nan, 1.0]]),
    "amin_all": (lambda x: x.amin(), X, [[nan] * 3] * 3),   # torch 2.13
    "max_all": (lambda x: x.max(), X,                   # torch 2.13: the NaNs share it
                [[0.0, T3, 0.0], [0.0, 0.0, 0.0], [T3, T3, 0.0]]),
    "min_all": (lambda x: x.min(), X,                   # torch 2.13
                [[0.0, T3, 0.0], [0.0, 0.0, 0.0], [T3, T3, 0.0]]),
    "max_ties": (lambda x: x.max(), np.array([1.0, 5.0, 5.0, 2.0], np.float32),
                 [0.0, 0.5, 0.5, 0.0]),                 # torch 2.13
    "max_dim1": (lambda x: x.max(dim=1)[0].sum(), X,    # torch 2.13: the first NaN's index
                 [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]),
    "maximum": (lambda x: tg.maximum(x, tg.tensor(B)).sum(), A, [1.0, 1.0, 0.5, 1.0]),
    "minimum": (lambda x: tg.minimum(x, tg.tensor(B)).sum(), A, [1.0, 1.0, 0.5, 1.0]),
    "clamp": (lambda x: tg.clamp(x, 0.0, 2.0).sum(), A, [1.0, 0.0, 0.0, 0.0]),   # torch 2.13
    "relu": (lambda x: tg.relu(x).sum(), X,             # torch 2.13: NaN passes it through
             [[1.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]),
    "inf_norm_dim1": (lambda x: tg.linalg.vector_norm(x, math.inf, dim=1).sum(), X,
                      [[0.0, 0.0, 0.0], [0.0, -0.5, 0.5], [0.0, 0.0, 0.0]]),   # torch 2.13
    "inf_norm_all": (lambda x: tg.linalg.vector_norm(x, math.inf), X,        # torch 2.13
                     [[0.0, 0.0, 0.0], [0.0, -0.0, 0.0], [0.0, 0.0, 0.0]]),
    "norm2": (lambda x: x.norm(), X, [[nan] * 3] * 3),   # torch 2.13
    "softmax": (lambda x: x.softmax(1).sum(), X,        # torch 2.13 (signs of the zeros vary)
                None),
}


def _grads(fn, data, executor, calls=4):
    tg.set_executor(executor)
    out = []
    for _ in range(calls):
        x = tg.tensor(data, requires_grad=True)
        fn(x).backward()
        out.append(x.grad.numpy().copy())
    return out


def _compiled_grads(fn, data, calls=3):
    def step(x):
        loss = fn(x)
        loss.backward()
        return loss
    compiled = tg.compile(step)
    out = []
    for _ in range(calls):
        x = tg.tensor(data, requires_grad=True)
        compiled(x)
        out.append(x.grad.numpy().copy())
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_nan_and_tie_gradients_agree_bitwise_on_every_executor(name):
    fn, data, want = CASES[name]
    ref = _grads(fn, data, "interpreter", 1)[0]
    if want is not None:
        want = np.array(want, np.float32)
        np.testing.assert_array_equal(ref, want)                    # values, NaNs where torch's
        assert (np.signbit(ref) == np.signbit(want))[~np.isnan(want)].all(), (ref, want)
    results = {ex: _grads(fn, data, ex) for ex in ("interpreter", "jax", "auto")}
    results["compile"] = _compiled_grads(fn, data)
    for ex, grads in results.items():
        for call, g in enumerate(grads):
            assert g.tobytes() == ref.tobytes(), f"{name}: {ex} call {call + 1}: {g} vs {ref}"


def test_the_max_of_the_issue_moves_to_jax_and_keeps_torchs_gradient():
    # issue 18: calls 1-2 gave NaN, call 3 on (jax) zeros; torch gives NaN every time
    grads = _grads(lambda x: x.amax(dim=0).sum(), np.array([[nan, 1.0], [2.0, 3.0]], np.float32),
                   "auto", 5)
    for g in grads:
        assert np.isnan(g[:, 0]).all() and g[:, 1].tolist() == [0.0, 1.0]


# ---- sign / sgn at NaN and -0.0 (issue 18) -----------------------------------------------------
SIGN_IN = np.array([0.0, -0.0, nan, -nan, 1.0, -2.0, math.inf, -math.inf], np.float32)
# torch 2.13: torch.sign / torch.sgn of SIGN_IN, +0.0 for both zeros and both NaNs
SIGN_TORCH = np.array([0.0, 0.0, 0.0, 0.0, 1.0, -1.0, 1.0, -1.0], np.float32)
# a cotangent with a NaN, infinities and negatives: torch 2.13's gradient is +0.0 everywhere
SIGN_CT = np.array([-1.0, nan, math.inf, -math.inf, -3.0, nan, 2.0, -0.0], np.float32)


@pytest.mark.parametrize("name", ["sign", "sgn"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_sign_of_nan_and_negative_zero_is_torchs_on_every_executor(name, dtype):
    op = getattr(tg, name)
    dt = getattr(tg, dtype)

    def call(x):
        y = op(x)
        y.backward(tg.tensor(SIGN_CT, dtype=dt))
        return y

    def bits(t):
        return t.detach().to(tg.float32).numpy().tobytes()

    want_out = SIGN_TORCH.tobytes()
    want_grad = np.zeros_like(SIGN_IN).tobytes()
    compiled = tg.compile(call)
    for executor in ("interpreter", "jax", "auto"):
        tg.set_executor(executor)
        for run in range(4):
            x = tg.tensor(SIGN_IN, dtype=dt, requires_grad=True)
            y = call(x)
            assert bits(y) == want_out, f"{executor} call {run + 1}: {y}"
            assert bits(x.grad) == want_grad, f"{executor} call {run + 1}: {x.grad}"
    for run in range(3):
        x = tg.tensor(SIGN_IN, dtype=dt, requires_grad=True)
        assert bits(compiled(x)) == want_out, f"tg.compile call {run + 1}"
        assert bits(x.grad) == want_grad, f"tg.compile call {run + 1}: {x.grad}"


def test_sign_of_bool_and_integers_follows_torch():
    for executor in ("interpreter", "jax"):
        tg.set_executor(executor)
        b = tg.tensor([True, False])
        assert tg.sign(b).dtype == tg.bool and tg.sign(b).tolist() == [True, False]   # torch 2.13
        assert tg.sgn(b).tolist() == [True, False]
        assert tg.sign(tg.tensor([-3, 0, 4])).tolist() == [-1, 0, 1]
        assert tg.sign(tg.tensor([253, 0], dtype=tg.uint8)).tolist() == [1, 0]   # torch 2.13
