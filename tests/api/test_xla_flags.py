"""The XLA CPU options `import tracegrad` sets (tracegrad/backends/xla_flags.py): which flags,
when they are left out, and that the running process's convolutions use them."""
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import tracegrad as tg
from tracegrad.backends import xla_flags


def test_flag_added_for_the_measured_jaxlib_only():
    assert xla_flags.flags_to_add({}, "0.10.2") == [xla_flags.YNN_CONV]
    assert xla_flags.flags_to_add({}, "0.4.30") == []      # unknown to that XLA: it would abort
    assert xla_flags.flags_to_add({}, "0.11.0") == []


def test_the_users_choice_wins():
    mine = {"XLA_FLAGS": "--xla_cpu_experimental_ynn_fusion_type=dot"}
    assert xla_flags.flags_to_add(mine, "0.10.2") == []
    assert xla_flags.flags_to_add({"TRACEGRAD_XLA_FLAGS": "0"}, "0.10.2") == []
    other = {"XLA_FLAGS": "--xla_cpu_enable_fast_math=false"}
    assert xla_flags.flags_to_add(other, "0.10.2") == [xla_flags.YNN_CONV]


def test_apply_does_nothing_once_the_backends_started(monkeypatch):
    jnp.zeros(1).block_until_ready()   # a backend is running in this process
    monkeypatch.setenv("XLA_FLAGS", "")
    assert xla_flags.apply() == []
    assert os.environ["XLA_FLAGS"] == ""


@pytest.mark.skipif(not xla_flags.flags_to_add({}, None), reason="flag not used on this jaxlib")
def test_this_process_convolutions_leave_ynnpack():
    # set at `import tracegrad`, before this process's first jax computation
    if "xla_cpu_experimental_ynn_fusion_type" not in os.environ.get("XLA_FLAGS", ""):
        pytest.skip("the user's XLA_FLAGS or TRACEGRAD_XLA_FLAGS=0 decided")
    # (YNNPACK takes convs from about this size on: 2x8x8x16 stays on XLA's either way)
    x, w = jnp.ones((4, 10, 10, 32)), jnp.ones((3, 3, 32, 32))
    f = jax.jit(lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")))
    hlo = f.lower(x, w).compile().as_text()
    assert "convolution(" in hlo and "__ynn_fusion" not in hlo
    # and the values are XLA's convolution's: every output sums a 3x3x32 window of ones
    np.testing.assert_array_equal(np.asarray(f(x, w)), np.full((4, 8, 8, 32), 288.0))


def test_conv_values_unchanged_under_the_flag():
    # the same conv and its gradients against a NumPy reference (direct sums)
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    wa = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    x, w = tg.tensor(xa, requires_grad=True), tg.tensor(wa, requires_grad=True)
    y = tg.nn.functional.conv2d(x, w, padding=1)
    y.sum().backward()
    xp = np.pad(xa, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((2, 4, 6, 6), np.float64)
    for i in range(3):
        for j in range(3):
            ref += np.einsum("nchw,oc->nohw", xp[:, :, i:i + 6, j:j + 6], wa[:, :, i, j])
    np.testing.assert_allclose(y.detach().numpy(), ref, rtol=1e-4, atol=1e-4)
    ones = np.ones((2, 4, 6, 6))
    dw = np.zeros(wa.shape)
    for i in range(3):
        for j in range(3):
            dw[:, :, i, j] = np.einsum("nchw,nohw->oc", xp[:, :, i:i + 6, j:j + 6], ones)
    np.testing.assert_allclose(w.grad.numpy(), dw, rtol=1e-4, atol=1e-4)
