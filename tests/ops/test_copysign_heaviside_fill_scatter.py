"""copysign, heaviside, index_fill, masked_scatter and their in-place forms (issue 14).

The op database (tests/opdb) checks values against NumPy and gradients by finite
differences; here are torch 2.13's recorded results for the cases it cannot express.
"""
import math

import numpy as np
import pytest

import tracegrad as tg


def test_copysign_values_dtypes_and_gradients():
    # torch 2.13: integers give floats; the sign bit of -0.0 and NaN counts
    out = tg.copysign(tg.tensor([1, -2, 0]), tg.tensor([-1, 1, -1]))
    assert out.dtype is tg.float32 and out.tolist() == [-1.0, 2.0, -0.0]
    assert math.copysign(1, out.tolist()[2]) == -1
    out = tg.copysign(tg.tensor([1.0, -2, 0, 3]), tg.tensor([-0.0, 0.0, -1, math.nan]))
    assert out.tolist() == [-1.0, 2.0, -0.0, 3.0]
    assert tg.copysign(tg.tensor([1.0], dtype=tg.float16), tg.tensor([-1.0], dtype=tg.float64)
                       ).dtype is tg.float64
    x = tg.tensor([1.0, -2.0, 0.0, 3.0], dtype=tg.float64, requires_grad=True)
    y = tg.tensor([-1.0, -1.0, -1.0, 2.0], dtype=tg.float64, requires_grad=True)
    tg.copysign(x, y).sum().backward()
    assert x.grad.tolist() == [-1.0, 1.0, 0.0, 1.0] and y.grad.tolist() == [0.0] * 4


def test_copysign_in_place_keeps_the_dtype_rule():
    a = tg.tensor([1.0, -2.0])
    assert a.copysign_(tg.tensor([-1.0, 1.0])) is a and a.tolist() == [-1.0, 2.0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):   # torch 2.13's words
        tg.ones(2, dtype=tg.int64).copysign_(tg.tensor([-1.0, 1.0]))


def test_heaviside_values_and_no_derivative():
    # torch 2.13: [0, 0.5, 1, 0] (NaN gives 0), integers stay integers, no promotion
    out = tg.heaviside(tg.tensor([-1.0, 0.0, 2.0, math.nan]), tg.tensor(0.5))
    assert out.tolist() == [0.0, 0.5, 1.0, 0.0]
    assert tg.heaviside(tg.tensor([-1, 0, 2]), tg.tensor([7])).tolist() == [0, 7, 1]
    with pytest.raises(RuntimeError, match="heaviside is not yet implemented for tensors with "
                                           "different dtypes"):
        tg.heaviside(tg.tensor([-1.0, 0.0]), tg.tensor([7]))
    x = tg.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    y = tg.heaviside(x, tg.tensor([0.5]))
    assert y.requires_grad   # torch: a node whose backward raises
    with pytest.raises(RuntimeError, match="derivative for 'heaviside' is not implemented"):
        y.sum().backward()
    h = tg.tensor([-1.0, 0.0, 2.0])
    assert h.heaviside_(tg.tensor([0.5])) is h and h.tolist() == [0.0, 0.5, 1.0]


def test_index_fill_values_and_gradients():
    x = tg.tensor([[1.0, 2, 3], [4, 5, 6]])
    assert x.index_fill(1, tg.tensor([0, 2]), -1).tolist() == [[-1, 2, -1], [-1, 5, -1]]
    assert x.index_fill(1, tg.tensor([-1]), -1).tolist() == [[1, 2, -1], [4, 5, -1]]
    assert x.index_fill(0, tg.tensor(1), tg.tensor(9.0)).tolist() == [[1, 2, 3], [9, 9, 9]]
    assert tg.tensor(5.0).index_fill(0, tg.tensor([0]), 1).tolist() == 1.0
    assert tg.tensor([1, 2, 3]).index_fill(0, tg.tensor([0]), 2.5).tolist() == [2, 2, 3]
    # torch 2.13: x.grad [[0, 2, 0], [0, 5, 0]]; v.grad 14 (a repeated index counts once)
    xs = tg.tensor([[1.0, 2, 3], [4, 5, 6]], requires_grad=True)
    v = tg.tensor(2.0, requires_grad=True)
    w = tg.tensor([[1.0, 2, 3], [4, 5, 6]])
    (xs.index_fill(1, tg.tensor([0, 2, 0]), v) * w).sum().backward()
    assert xs.grad.tolist() == [[0, 2, 0], [0, 5, 0]] and v.grad.item() == 14.0
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        x.index_fill(1, tg.tensor([3]), -1)
    with pytest.raises(IndexError, match="int64"):
        x.index_fill(0, tg.tensor([1], dtype=tg.int32), 9)
    y = x * 1
    assert y.index_fill_(1, tg.tensor([1]), 0) is y and y.tolist() == [[1, 0, 3], [4, 0, 6]]


def test_masked_scatter_values_and_gradients():
    # torch 2.13 values
    x = tg.tensor([[1.0, 2], [3, 4]])
    src = tg.tensor([[10.0, 20, 30], [40, 50, 60]])
    assert x.masked_scatter(tg.tensor([True, False]), src).tolist() == [[10, 2], [20, 4]]
    assert tg.tensor([1.0, 2]).masked_scatter(
        tg.tensor([[True, False], [False, True]]), src).tolist() == [[10, 2], [1, 20]]
    assert x.masked_scatter(tg.zeros(2, 2, dtype=tg.bool), tg.zeros(0)).tolist() == x.tolist()
    with pytest.raises(RuntimeError, match="number of elements of source"):
        x.masked_scatter(tg.tensor([True, True]), tg.tensor([10.0]))
    # torch 2.13: x.grad [[0, 2], [0, 0]]; source.grad [[1, 3, 4], [0, 0, 0]]
    xs = tg.tensor([[1.0, 2], [3, 4]], requires_grad=True)
    s = tg.tensor([[10.0, 20, 30], [40, 50, 60]], requires_grad=True)
    m = tg.tensor([[True, False], [True, True]])
    (xs.masked_scatter(m, s) * tg.tensor([[1.0, 2], [3, 4]])).sum().backward()
    assert xs.grad.tolist() == [[0, 2], [0, 0]]
    assert s.grad.tolist() == [[1, 3, 4], [0, 0, 0]]
    y = x * 1
    assert y.masked_scatter_(m, s.detach()) is y and y.tolist() == [[10, 2], [20, 30]]


def test_compiled_masked_scatter_and_index_fill_equal_eager():
    f = tg.compile(lambda x, m, s: x.masked_scatter(m, s).index_fill(1, tg.tensor([0]), -1.0))
    x = tg.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    m = tg.tensor([[True, False, True], [False, True, False]])
    s = tg.tensor([10.0, 20, 30, 40])
    want = [[-1.0, 1, 20], [-1.0, 30, 5]]
    assert f(x, m, s).tolist() == want and f(x, m, s).tolist() == want


def test_subtract_in_place_is_sub_():
    # torch 2.13: [3, 2], the tensor itself returned
    a = tg.tensor([5.0, 6.0])
    assert a.subtract_(tg.tensor([1.0, 2.0]), alpha=2) is a and a.tolist() == [3.0, 2.0]
