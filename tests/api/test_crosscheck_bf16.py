"""The suite's executor cross-check compares bfloat16 outputs with the bf16 tolerance: NumPy
knows ml_dtypes' bfloat16 as kind "V", which an exact comparison used to catch."""
import numpy as np
import pytest

import tracegrad as tg
from tracegrad.backends import crosscheck
from tracegrad.ir import types as T


def test_bf16_outputs_within_bf16_rounding_pass_and_far_ones_fail():
    x = np.linspace(-2, 2, 64).astype(T.bfloat16.numpy)
    f = tg.compile(lambda t: (t * 3.3 + 1).exp())
    np.testing.assert_allclose(f(tg.tensor(x)).float().numpy(),
                               np.exp(x.astype(np.float32) * 3.3 + 1), rtol=5e-2)
    e = tg.compile(lambda t: t.exp())
    e(tg.tensor(x))
    g = e.programs[0].forward    # one input, x; one output, exp(x) in bfloat16
    ref = np.exp(x.astype(np.float32))
    crosscheck.compare(g, [x], [(ref * (1 + 2 ** -8)).astype(T.bfloat16.numpy)])
    with pytest.raises(RuntimeError, match="differ"):
        crosscheck.compare(g, [x], [(ref * 1.5).astype(T.bfloat16.numpy)])
