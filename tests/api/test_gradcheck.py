"""tg.autograd.gradcheck / gradgradcheck: passing cases, and wrong gradients caught with
torch's messages (a wrong VJP is simulated by detaching part of the computation, or by a
throwaway op registered with a deliberately wrong rule)."""
import contextlib
import warnings

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.dispatch.frontend import EAGER
from tracegrad.autograd import GradcheckError, gradcheck, gradgradcheck
from tracegrad.ir.ops._common import same_as_first
from tracegrad.ir.registry import ELEMENTWISE, REGISTRY, defop


def _t(*shape, seed=0, low=-1.0, high=1.0):
    rng = np.random.default_rng(seed)
    return tg.tensor(rng.uniform(low, high, shape), requires_grad=True)


@contextlib.contextmanager
def _op(name, kernel, vjp):
    """A throwaway elementwise op (not in tg.*), removed from the registry afterwards."""
    defop(name, "input", infer=same_as_first, kernel=kernel, vjp=vjp, flags=ELEMENTWISE)
    try:
        yield lambda x: EAGER.call(name, x)
    finally:
        del REGISTRY[name]


# ---- passing --------------------------------------------------------------------------------
@pytest.mark.parametrize("fast_mode", [False, True])
def test_correct_gradients_pass(fast_mode):
    x, y = _t(3, 4), _t(4, seed=1)
    assert gradcheck(lambda a, b: (a * b).tanh(), (x, y), fast_mode=fast_mode)
    assert gradcheck(lambda a, b: a @ b, (x, y), fast_mode=fast_mode)
    # a single tensor instead of a tuple; non-tensor arguments pass through untouched
    assert gradcheck(lambda a: a.sum(dim=1), x, fast_mode=fast_mode)
    assert gradcheck(lambda a, d: a.amax(dim=d), (x, 0), fast_mode=fast_mode)
    # several outputs (each checked, and each left out of backward once)
    assert gradcheck(lambda a: (a * 2.0, a.exp().sum()), (x,), fast_mode=fast_mode)


def test_only_inputs_that_require_grad_are_checked():
    x = _t(2, 3)
    c = tg.tensor(np.ones((2, 3)))                # constant: not perturbed, not differentiated
    calls = []

    def f(a, b):
        calls.append(1)
        return a * b
    assert gradcheck(f, (x, c))
    assert len(calls) == 1 + 2 * 6                # the first call, then +-eps per element of x


def test_inputs_keep_their_values():
    x = _t(2, 3)
    before = x.detach().numpy().copy()
    gradcheck(lambda a: a.exp(), (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x.grad is None                         # gradcheck returns gradients, never accumulates


def test_no_differentiable_outputs_means_zero_numerical_gradient():
    x = _t(4)
    # torch: a function without differentiable outputs passes when it is locally constant
    assert gradcheck(lambda a: a > 0.0, (x,))
    assert gradcheck(lambda a: (a > 0.0).to(tg.float64), (x,), fast_mode=True)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradgradcheck_passes(fast_mode):
    x, y = _t(3, 2), _t(3, 2, seed=1)
    assert gradgradcheck(lambda a, b: a * b * b, (x, y), fast_mode=fast_mode)
    assert gradgradcheck(lambda a: a.tanh().sum(dim=0), (x,), fast_mode=fast_mode)
    assert gradgradcheck(lambda a: tg.nn.functional.softmax(a, 1), (x,), fast_mode=fast_mode)


def test_gradgradcheck_grad_outputs():
    x = _t(3, 2)
    go = tg.tensor(np.full((3, 2), 0.5), requires_grad=True)
    assert gradgradcheck(lambda a: a.sigmoid(), (x,), (go,))
    assert gradgradcheck(lambda a: a.sigmoid(), (x,), gen_non_contig_grad_outputs=True)


# ---- failing --------------------------------------------------------------------------------
def test_detached_input_gives_torch_message():
    x, y = _t(2, 2), _t(2, 2, seed=1)
    with pytest.raises(GradcheckError) as e:
        gradcheck(lambda a, b: a * b.detach(), (x, y))      # d/db is lost: analytical 0
    msg = str(e.value)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 1,\nnumerical:")
    assert "analytical:tensor([[0., 0., 0., 0.]," in msg
    # the numerical Jacobian d(a*b)/db = diag(a), as a (numel_in, numel_out) matrix
    numerical = msg.split("numerical:")[1].split("analytical:")[0]
    for v in x.detach().numpy().reshape(-1):
        assert f"{v:.4f}" in numerical
    assert isinstance(e.value, RuntimeError)
    assert gradcheck(lambda a, b: a * b.detach(), (x, y), raise_exception=False) is False


def test_wrong_vjp_fails_in_fast_mode_with_slow_jacobians():
    x = _t(3)
    # value x*x, but the gradient reaching x is x, not 2x
    with pytest.raises(GradcheckError) as e:
        gradcheck(lambda a: a * a.detach(), (x,), fast_mode=True)
    msg = str(e.value)
    assert "Jacobian mismatch for output 0 with respect to input 0" in msg
    assert "recompute numerical and analytical jacobians in slow mode" in msg
    assert "The max per-element difference (slow mode) is: " in msg
    diff = float(msg.split("(slow mode) is: ")[1].split(".\n")[0].rstrip("."))
    np.testing.assert_allclose(diff, np.abs(x.detach().numpy()).max(), rtol=1e-6)
    assert gradcheck(lambda a: a * a.detach(), (x,), fast_mode=True,
                     raise_exception=False) is False


def test_wrong_registered_vjp_is_caught():
    with _op("gradcheck_bad_scale", lambda xp, x: x * 2.0,
             lambda b, ct, x, out: [b.mul(ct, 3.0)]) as bad:
        x = _t(2, 3)
        with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect "
                                                 "to input 0"):
            gradcheck(bad, (x,))
        assert not gradcheck(bad, (x,), fast_mode=True, raise_exception=False)


def test_vjp_not_multiplied_by_the_cotangent_is_caught():
    # gradient 2*ct + 1: off by a constant, inside a loose atol, so only the zero-cotangent
    # check (torch's "backward not multiplied by grad_output") sees it
    with _op("gradcheck_bad_offset", lambda xp, x: x * 2.0,
             lambda b, ct, x, out: [b.add(b.mul(ct, 2.0), 1.0)]) as bad:
        with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
            gradcheck(bad, (_t(4),), fast_mode=True, atol=10.0)


def test_gradgradcheck_catches_a_wrong_second_derivative():
    # value and first derivative of x**3 are right, but the gradient 3 x^2 is computed from a
    # detached x, so its own derivative (6x) is lost
    def cube(a):
        d = a.detach()
        return d ** 3 + 3.0 * d ** 2 * (a - d)

    x = _t(3, seed=2, low=0.5, high=1.5)
    assert gradcheck(cube, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0"):
        gradgradcheck(cube, (x,))
    assert gradgradcheck(cube, (x,), fast_mode=True, raise_exception=False) is False
    assert gradgradcheck(lambda a: a ** 3, (x,))


def test_function_with_zero_gradient_but_changing_value_fails():
    x = _t(3)
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda a: a.detach() * 2.0, (x,))


# ---- arguments ------------------------------------------------------------------------------
def test_non_double_input_warns_as_torch():
    x = tg.tensor(np.ones(3, np.float32), requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double "
                                         "precision floating point"):
        assert gradcheck(lambda a: a * 2.0, (x,), eps=1e-2, atol=1e-2, rtol=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradcheck(lambda a: a * 2.0, (_t(3),))     # float64: no warning


def test_no_input_requiring_grad_is_an_error():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2.0, (tg.tensor(np.ones(3)),))


# check_batched_grad and check_forward_ad (and gradgradcheck's check_fwd_over_rev) are
# supported since issue 14: tests/api/test_gradcheck_modes.py
@pytest.mark.parametrize("arg", ["check_batched_forward_grad", "masked"])
def test_unsupported_arguments_raise_naming_the_argument(arg):
    with pytest.raises(NotImplementedError, match=f"gradcheck: {arg}=True"):
        gradcheck(lambda a: a * 2.0, (_t(3),), **{arg: True})
    if arg != "check_batched_forward_grad":
        with pytest.raises(NotImplementedError, match=f"gradgradcheck: {arg}=True"):
            gradgradcheck(lambda a: a * 2.0, (_t(3),), **{arg: True})


def test_tolerances_are_torch_allclose():
    # d/dx (1.001 x) checked against a function whose gradient is claimed to be x: the
    # analytical Jacobian is 1.0 where the numerical one is 1.001 (relative error 1e-3)
    def f(a):
        return a + 0.001 * a.detach()
    x = _t(3)
    assert not gradcheck(f, (x,), atol=0.0, rtol=1e-4, raise_exception=False)
    assert gradcheck(f, (x,), atol=0.0, rtol=1.1e-3)
    assert gradcheck(f, (x,), atol=1.1e-3, rtol=0.0)
