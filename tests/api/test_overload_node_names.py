"""grad_fn names that torch 2.13 takes from the call's overload (tracegrad/_surface_names.py,
_surface_ops.median) or that differ from ``<Op>Backward0`` (node_name in ir/ops: norm,
convert); each recorded from torch 2.13 beside it."""
import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn.functional as F  # noqa: F401

X = np.array([[0.5, -1.2, 2.0], [1.5, 0.3, -0.7]], np.float32)


def _x():
    return tg.tensor(X, requires_grad=True)


CASES = {   # expression: torch 2.13's type(grad_fn).__name__
    "x ** 3": (lambda x: x ** 3, "PowBackward0"),
    "x ** 2.5": (lambda x: x ** 2.5, "PowBackward0"),
    "x.pow(2)": (lambda x: x.pow(2), "PowBackward0"),
    "tg.pow(x, 2)": (lambda x: tg.pow(x, 2), "PowBackward0"),
    "2 ** x": (lambda x: 2 ** x, "PowBackward2"),
    "tg.pow(2, x)": (lambda x: tg.pow(2, x), "PowBackward2"),
    "x.pow(x)": (lambda x: x.pow(x), "PowBackward1"),
    "x ** x": (lambda x: x ** x, "PowBackward1"),
    "x ** tensor(2.)": (lambda x: x ** tg.tensor(2.0), "PowBackward1"),
    "tg.pow(x, x)": (lambda x: tg.pow(x, x), "PowBackward1"),
    "x.square()": (lambda x: x.square(), "PowBackward0"),
    "x.max()": (lambda x: x.max(), "MaxBackward1"),
    "x.min()": (lambda x: x.min(), "MinBackward1"),
    "tg.max(x)": (lambda x: tg.max(x), "MaxBackward1"),
    "x.max(1)": (lambda x: x.max(1)[0], "MaxBackward0"),
    "x.min(dim=1)": (lambda x: x.min(dim=1).values, "MinBackward0"),
    "tg.max(x, 2x)": (lambda x: tg.max(x, x * 2), "MaximumBackward0"),
    "tg.min(x, 2x)": (lambda x: tg.min(x, x * 2), "MinimumBackward0"),
    "x.amax()": (lambda x: x.amax(), "AmaxBackward0"),
    "x.amax(1)": (lambda x: x.amax(1), "AmaxBackward0"),
    "x.amin()": (lambda x: x.amin(), "AminBackward0"),
    "x.norm()": (lambda x: x.norm(), "LinalgVectorNormBackward0"),
    "x.norm(dim=1)": (lambda x: x.norm(dim=1), "LinalgVectorNormBackward0"),
    "x.norm(p=1)": (lambda x: x.norm(p=1), "LinalgVectorNormBackward0"),
    "x.norm(p='fro')": (lambda x: x.norm(p="fro"), "LinalgVectorNormBackward0"),
    "x.norm(inf)": (lambda x: x.norm(float("inf")), "LinalgVectorNormBackward0"),
    "tg.norm(x, dim=(0, 1))": (lambda x: tg.norm(x, dim=(0, 1)), "LinalgVectorNormBackward0"),
    "linalg.vector_norm": (lambda x: tg.linalg.vector_norm(x), "LinalgVectorNormBackward0"),
    "x.double()": (lambda x: x.double(), "ToCopyBackward0"),
    "x.to(float64)": (lambda x: x.to(tg.float64), "ToCopyBackward0"),
    "x.to(dtype=float64)": (lambda x: x.to(dtype=tg.float64), "ToCopyBackward0"),
    "x.half()": (lambda x: x.half(), "ToCopyBackward0"),
    "x.type(DoubleTensor)": (lambda x: x.type(tg.DoubleTensor), "ToCopyBackward0"),
    "x.type('torch.DoubleTensor')": (lambda x: x.type("torch.DoubleTensor"), "ToCopyBackward0"),
    "x.type(float64)": (lambda x: x.type(tg.float64), "ToCopyBackward0"),
    "x.double().float()": (lambda x: x.double().float(), "ToCopyBackward0"),
    "x.mean()": (lambda x: x.mean(), "MeanBackward0"),
    "x.mean(1)": (lambda x: x.mean(1), "MeanBackward1"),
    "x.mean((0, 1))": (lambda x: x.mean((0, 1)), "MeanBackward1"),
    "tg.mean(x, dim=1)": (lambda x: tg.mean(x, dim=1), "MeanBackward1"),
    "x.sum()": (lambda x: x.sum(), "SumBackward0"),
    "x.sum(1)": (lambda x: x.sum(1), "SumBackward1"),
    "x.sum(1, keepdim=True)": (lambda x: x.sum(1, keepdim=True), "SumBackward1"),
    "tg.sum(x, 0)": (lambda x: tg.sum(x, 0), "SumBackward1"),
    "x.prod()": (lambda x: x.prod(), "ProdBackward0"),
    "x.prod(1)": (lambda x: x.prod(1), "ProdBackward1"),
    "x.median()": (lambda x: x.median(), "MedianBackward0"),
    "x.median(1)": (lambda x: x.median(1)[0], "MedianBackward1"),
    "1 - x": (lambda x: 1 - x, "RsubBackward1"),
    "x - 1": (lambda x: x - 1, "SubBackward0"),
    "x.std(1)": (lambda x: x.std(1), "StdBackward0"),
    "x.var()": (lambda x: x.var(), "VarBackward0"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_node_name_is_torchs(case):
    fn, name = CASES[case]
    y = fn(_x())
    assert type(y.grad_fn).__name__ == name
    assert y.grad_fn.name() == name


def test_same_dtype_conversions_record_nothing():   # torch 2.13: x.float() is x
    x = _x()
    assert x.float() is x and x.to(tg.float32) is x


@pytest.mark.parametrize("case", ["2 ** x", "x.pow(x)", "x.max()", "tg.max(x, 2x)", "x.mean(1)",
                                  "x.sum(1)", "x.prod(1)", "1 - x", "x.double()", "x.norm()"])
def test_renamed_nodes_keep_their_gradients(case):
    fn, _ = CASES[case]
    x = tg.tensor(X.astype(np.float64), requires_grad=True)
    assert tg.autograd.gradcheck(lambda a: fn(a.abs() + 0.1 if "pow" in case or "**" in case
                                              else a), (x,))


def test_without_grad_nothing_is_renamed():
    x = tg.tensor(X)
    assert (2 ** x).grad_fn is None and x.max().grad_fn is None and x.sum(1).grad_fn is None
    assert x.max().item() == pytest.approx(2.0)
    assert tg.max(x, 1).indices.tolist() == [2, 0]
