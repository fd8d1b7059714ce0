"""Anomaly detection: forward tracebacks for failing backward nodes, NaN checks.

Anomaly mode runs every backward program on the NumPy interpreter, whatever
the executor; the tests run under both settings to show that.  Messages are
torch 2.13's (seed 000's MyFunc example; the rest checked by hand).
"""
import inspect
import warnings

import numpy as np
import pytest

import tracegrad as tg
from tracegrad import autograd

ENABLED = "Anomaly Detection has been enabled"


@pytest.fixture(autouse=True)
def _anomaly_off():
    yield
    autograd.set_detect_anomaly(False)


class MyFunc(autograd.Function):
    @staticmethod
    def forward(ctx, inp):
        return inp.clone()

    @staticmethod
    def backward(ctx, gO):
        # Error during the backward pass
        raise RuntimeError("Some error in backward")
        return gO.clone()


def run_fn(a):
    out = MyFunc.apply(a)
    return out.sum()


def test_seed000_error_in_backward_without_anomaly_mode(executor):
    inp = tg.rand(10, 10, requires_grad=True)
    out = run_fn(inp)
    with pytest.raises(RuntimeError, match="Some error in backward"):
        out.backward()


def test_seed000_error_in_backward_shows_the_forward_traceback(executor):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="Some error in backward") as info:
            with autograd.detect_anomaly():
                inp = tg.rand(10, 10, requires_grad=True)
                out = run_fn(inp)
                out.backward()
    messages = [str(w.message) for w in caught]
    assert any(ENABLED in m for m in messages)
    detected = [m for m in messages if m.startswith("Error detected in MyFuncBackward. "
                                                    "Traceback of forward call that caused the "
                                                    "error:")]
    assert len(detected) == 1
    # the seed's traceback: the call of run_fn, then the apply inside it
    assert "out = run_fn(inp)" in detected[0] and "out = MyFunc.apply(a)" in detected[0]
    assert detected[0].index("out = run_fn(inp)") < detected[0].index("MyFunc.apply(a)")
    assert "tracegrad/autograd" not in detected[0]     # our own frames are left out
    notes = "".join(getattr(info.value, "__notes__", []))
    assert "MyFuncBackward" in notes and "out = MyFunc.apply(a)" in notes


class NanF(autograd.Function):
    @staticmethod
    def forward(ctx, inp):
        return inp.clone()

    @staticmethod
    def backward(ctx, gO):
        return gO * float("nan")


def test_function_returning_nan(executor):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd.detect_anomaly():
            inp = tg.rand(3, requires_grad=True)
            y = NanF.apply(inp).sum()
            with pytest.raises(RuntimeError, match=r"^Function 'NanFBackward' returned nan values "
                                                   r"in its 0th output\.$"):
                y.backward()


def test_builtin_op_returning_nan_names_op_and_line(executor):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with autograd.detect_anomaly():
            inp = tg.tensor([0.0, 1.0], requires_grad=True)
            y = (inp.sqrt() * 0).sum()     # sqrt's backward: 0 / (2 sqrt(0)) = nan
            line = inspect.currentframe().f_lineno - 1
            with pytest.raises(RuntimeError) as info:
                y.backward()
    msg = str(info.value)
    assert msg.startswith("Function 'SqrtBackward0' returned nan values in its 0th output.")
    assert f"test_anomaly.py:{line}" in msg
    detected = [str(w.message) for w in caught
                if "Error detected in SqrtBackward0" in str(w.message)]
    assert detected and "y = (inp.sqrt() * 0).sum()" in detected[0]


def test_inf_is_not_an_anomaly_and_check_nan_false_lets_nan_through(executor):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd.detect_anomaly():
            x = tg.tensor([0.0, 1.0], requires_grad=True)
            x.sqrt().sum().backward()          # torch 2.13: tensor([inf, 0.5000])
            assert x.grad.numpy()[0] == np.inf and x.grad.numpy()[1] == 0.5
        with autograd.detect_anomaly(check_nan=False):
            x = tg.tensor([0.0, 1.0], requires_grad=True)
            (x.sqrt() * 0).sum().backward()    # torch 2.13: tensor([nan, 0.])
            assert np.isnan(x.grad.numpy()[0]) and x.grad.numpy()[1] == 0.0


def test_error_in_a_hook_names_the_node(executor):
    # torch 2.13 attributes a tensor hook's error to the node that made the tensor
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with autograd.detect_anomaly():
            x = tg.tensor([1.0, 2.0], requires_grad=True)
            y = x * 2

            def bad(g):
                raise ValueError("hook failed")

            y.register_hook(bad)
            with pytest.raises(ValueError, match="hook failed"):
                y.sum().backward()
    assert any("Error detected in MulBackward0" in str(w.message) for w in caught)


def test_nan_with_create_graph(executor):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd.detect_anomaly():
            x = tg.tensor([0.0, 1.0], requires_grad=True)
            with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan"):
                tg.autograd.grad((x.sqrt() * 0).sum(), x, create_graph=True)


def test_set_detect_anomaly_as_function_and_context_manager():
    assert not tg.is_anomaly_enabled() and tg.is_anomaly_check_nan_enabled()
    autograd.set_detect_anomaly(True)
    assert tg.is_anomaly_enabled()
    autograd.set_detect_anomaly(False)
    assert not tg.is_anomaly_enabled()
    with autograd.set_detect_anomaly(True, check_nan=False):
        assert tg.is_anomaly_enabled() and not tg.is_anomaly_check_nan_enabled()
    assert not tg.is_anomaly_enabled() and tg.is_anomaly_check_nan_enabled()
    with pytest.warns(UserWarning, match=ENABLED):
        with autograd.detect_anomaly():
            assert tg.is_anomaly_enabled()
    assert not tg.is_anomaly_enabled()


def test_forward_stack_is_kept_only_in_anomaly_mode():
    x = tg.tensor([1.0], requires_grad=True)
    y = x.exp()
    assert y.grad_fn.extra is None            # the normal path stores nothing extra
    with autograd.set_detect_anomaly(True):
        z = x.exp()
    assert "z = x.exp()" in "".join(z.grad_fn.extra.stack)


def test_anomaly_mode_runs_the_interpreter_and_gives_the_same_gradients(executor):
    x = tg.tensor([0.5, 1.5], requires_grad=True)
    with autograd.set_detect_anomaly(True):
        (x.exp() * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, 1.5]) * (1 + np.array([0.5, 1.5])),
                               rtol=1e-6)
