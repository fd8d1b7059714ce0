"""A walk over bad inputs on the public API, part 1: dims out of range, indexing, shapes.

Each case asserts the exception type, that the message names first the op the user
called (``view``, not the ``reshape`` it runs), the shapes or values involved, and that it
ends with the user's source line (the case's own line here); see tests/api/_bad_input.py.
``torch=`` is torch 2.13's error for the same call (recorded by running it).  tracegrad
raises its `ShapeError` (a ValueError) and `DTypeError` (a TypeError) where torch raises
RuntimeError, as docs/architecture.md says; other types follow torch.
"""
import pytest

import tracegrad as tg
from tracegrad import ShapeError

from _bad_input import E, V, case_id, check

CASES = [
# ---- dims out of range ---------------------------------------------------------------
    E(lambda: tg.ones(2, 3).transpose(0, 5), IndexError, 'transpose', '[-2, 1]', '5',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '5)'),
    E(lambda: tg.ones(2, 3).transpose(-3, 0), IndexError, 'transpose', '[-2, 1]', '-3',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '-3)'),
    E(lambda: tg.ones(2, 3).mean(dim=3), IndexError, 'mean', '[-2, 1]', '3',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '3)'),
    E(lambda: tg.ones(2, 3).mean(dim=(0, 2)), IndexError, 'mean', '[-2, 1]', '2',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).sum(dim=5), IndexError, 'sum', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '5)'),
    E(lambda: tg.ones(2, 3).sum(dim=-3), IndexError, 'sum', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '-3)'),
    E(lambda: tg.ones(2, 3).squeeze(4), IndexError, 'squeeze', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '4)'),
    E(lambda: tg.ones(2, 3).unsqueeze(4), IndexError, 'unsqueeze', '[-3, 2]',
      torch='IndexError: Dimension out of range (expected to be in range of [-3, 2], but got '
            '4)'),
    E(lambda: tg.ones(2, 3).unsqueeze(-4), IndexError, 'unsqueeze', '[-3, 2]',
      torch='IndexError: Dimension out of range (expected to be in range of [-3, 2], but got '
            '-4)'),
    E(lambda: tg.ones(2, 3).flatten(0, 4), IndexError, 'flatten', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '4)'),
    E(lambda: tg.ones(2, 3).flatten(3), IndexError, 'flatten', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '3)'),
    E(lambda: tg.ones(2, 3).softmax(dim=5), IndexError, 'softmax', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '5)'),
    E(lambda: tg.ones(2, 3).log_softmax(dim=2), IndexError, 'log_softmax', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).argmax(dim=5), IndexError, 'argmax', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '5)'),
    E(lambda: tg.ones(2, 3).argmin(dim=-3), IndexError, 'argmin', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '-3)'),
    E(lambda: tg.ones(2, 3).max(dim=5), IndexError, 'max', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '5)'),
    E(lambda: tg.ones(2, 3).min(dim=2), IndexError, 'min', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).cumsum(dim=5), IndexError, 'cumsum', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '5)'),
    E(lambda: tg.ones(2, 3).cumprod(dim=2), IndexError, 'cumprod', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).prod(dim=2), IndexError, 'prod', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).amax(dim=2), IndexError, 'amax', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).amin(dim=-3), IndexError, 'amin', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '-3)'),
    E(lambda: tg.ones(2, 3).logsumexp(dim=2), IndexError, 'logsumexp', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).var(dim=2), IndexError, 'var', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).std(dim=2), IndexError, 'std', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).all(dim=2), IndexError, 'all', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).any(dim=2), IndexError, 'any', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).sort(dim=2), IndexError, 'sort', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).argsort(dim=2), IndexError, 'argsort', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).topk(1, dim=2), IndexError, 'topk', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).flip(2), IndexError, 'flip', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).roll(1, 2), IndexError, 'roll', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).movedim(0, 2), IndexError, 'movedim', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).permute(0, 5), IndexError, 'permute', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '5)'),
    E(lambda: tg.ones(2, 3).select(2, 0), IndexError, 'select', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).narrow(2, 0, 1), IndexError, 'narrow', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).unbind(2), IndexError, 'unbind', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).chunk(2, dim=2), IndexError, 'chunk', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).split(1, dim=2), IndexError, 'split', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.cat([tg.ones(2, 3), tg.ones(2, 3)], dim=2), IndexError, 'cat', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.stack([tg.ones(2, 3), tg.ones(2, 3)], dim=4), IndexError, 'stack', '[-3, 2]',
      torch='IndexError: Dimension out of range (expected to be in range of [-3, 2], but got '
            '4)'),
    E(lambda: tg.ones(2, 3).gather(2, tg.zeros(2, 3, dtype=tg.int64)),
      IndexError, 'gather', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).index_select(2, tg.tensor([0])), IndexError, 'index_select', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(()).sum(dim=1), IndexError, 'sum', '[-1, 0]',
      torch='IndexError: Dimension out of range (expected to be in range of [-1, 0], but got '
            '1)'),
    E(lambda: tg.ones(()).softmax(dim=1), IndexError, 'softmax', '[-1, 0]',
      torch='IndexError: Dimension out of range (expected to be in range of [-1, 0], but got '
            '1)'),
    E(lambda: tg.ones(2, 3).diagonal(0, 0, 2), IndexError, 'diagonal', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).norm(dim=2), IndexError, 'norm', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).median(dim=2), IndexError, 'median', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).cummax(dim=2), IndexError, 'cummax', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
    E(lambda: tg.ones(2, 3).count_nonzero(dim=2), IndexError, 'count_nonzero', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '2)'),
# ---- indexing ------------------------------------------------------------------------
    E(lambda: tg.ones(2, 3)[5], IndexError, 'getitem', 'index 5', 'size 2',
      torch='IndexError: index 5 is out of bounds for dimension 0 with size 2'),
    E(lambda: tg.ones(2, 3)[-3], IndexError, 'getitem', 'index -3', 'size 2',
      torch='IndexError: index -3 is out of bounds for dimension 0 with size 2'),
    E(lambda: tg.ones(2, 3)[0, 5], IndexError, 'getitem', 'index 5', 'size 3',
      torch='IndexError: index 5 is out of bounds for dimension 1 with size 3'),
    E(lambda: tg.ones(2, 3)[:, 3], IndexError, 'getitem', 'index 3', 'size 3',
      torch='IndexError: index 3 is out of bounds for dimension 1 with size 3'),
    E(lambda: tg.ones(2, 3)[0, 0, 0], IndexError, 'getitem', 'too many indices', 'dimension 2',
      torch='IndexError: too many indices for tensor of dimension 2'),
    E(lambda: tg.ones(2, 3)[..., 0, 0, 0], IndexError, 'getitem', 'too many indices',
      torch='IndexError: too many indices for tensor of dimension 2'),
    E(lambda: tg.ones(2, 3)[tg.tensor([5])], IndexError, 'getitem', '5', '2',
      torch='IndexError: index 5 is out of bounds for dimension 0 with size 2'),
    E(lambda: tg.ones(2, 3)[tg.tensor([0, 1]), tg.tensor([0, 1, 2])],
      ShapeError, 'getitem', 'shape',
      torch='IndexError: shape mismatch: indexing tensors could not be broadcast together wit'
            'h shapes [2], [3]'),
    E(lambda: tg.ones(2, 3)[tg.tensor([True, False, True])], IndexError, 'getitem', 'mask',
      torch='IndexError: The shape of the mask [3] at index 0 does not match the shape of the'
            ' indexed tensor [2, 3] at index 0'),
    E(lambda: tg.ones(2, 3)[tg.tensor([0.5])],
      IndexError, 'getitem', 'tensors used as indices must be long',
      torch='IndexError: tensors used as indices must be long, int, byte or bool tensors'),
    E(lambda: tg.ones(2, 3)['a'], TypeError, 'getitem', 'str',
      torch="TypeError: new(): invalid data type 'str'"),
    E(lambda: tg.ones(2, 3)[1.5], IndexError, 'getitem', 'float',
      torch='IndexError: only integers, slices (`:`), ellipsis (`...`), None and long or byte'
            ' Variables are valid indices (got float)'),
    E(lambda: tg.ones(())[0], IndexError, 'getitem', '0-dim', 'item()',
      torch='IndexError: invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `t'
            'ensor.item<T>()` in C++ to convert a 0-...'),
    E(lambda: tg.ones(2, 3).__setitem__(5, 1.0), IndexError, 'setitem', 'index 5', 'size 2',
      torch='IndexError: index 5 is out of bounds for dimension 0 with size 2'),
    E(lambda: tg.ones(2, 3).__setitem__((0, 0, 0), 1.0), IndexError, 'setitem', 'too many indices',
      torch='IndexError: too many indices for tensor of dimension 2'),
    E(lambda: tg.ones(2, 3).__setitem__(0, tg.ones(4)), ShapeError, 'setitem', '[4]', '[3]',
      torch='RuntimeError: The expanded size of the tensor (3) must match the existing size ('
            '4) at non-singleton dimension 0.  Target ...'),
    E(lambda: tg.ones(2, 3).select(0, 5), IndexError, 'select', 'index 5', '[2, 3]',
      torch='IndexError: select(): index 5 out of range for tensor of size [2, 3] at dimensio'
            'n 0'),
    E(lambda: tg.ones(2, 3).narrow(0, 1, 5), ValueError, 'narrow', 'start (1)', 'length (5)',
      torch='RuntimeError: start (1) + length (5) exceeds dimension size (2).'),
    E(lambda: tg.ones(2, 3).index_select(0, tg.tensor([5])), IndexError, 'index_select', '5',
      torch='IndexError: index out of range in self'),
    E(lambda: tg.ones(2, 3).gather(0, tg.tensor([[5, 0, 0]])), IndexError, 'gather', '5',
      torch='RuntimeError: index 5 is out of bounds for dimension 0 with size 2'),
    E(lambda: tg.nn.functional.embedding(tg.tensor([4]), tg.ones(4, 2)),
      IndexError, 'embedding', '4',
      torch='IndexError: index out of range in self'),
    E(lambda: tg.nn.functional.one_hot(tg.tensor([3]), 3), ValueError, 'one_hot', '3',
      torch='RuntimeError: Class values must be smaller than num_classes.'),
# ---- shapes --------------------------------------------------------------------------
    E(lambda: tg.ones(2, 3) + tg.ones(2, 4), ShapeError, 'add', '[2,3]', '[2,4]',
      torch='RuntimeError: The size of tensor a (3) must match the size of tensor b (4) at no'
            'n-singleton dimension 1'),
    E(lambda: tg.ones(2, 3) * tg.ones(4), ShapeError, 'mul', '[2,3]', '[4]',
      torch='RuntimeError: The size of tensor a (3) must match the size of tensor b (4) at no'
            'n-singleton dimension 1'),
    E(lambda: tg.maximum(tg.ones(2, 3), tg.ones(3, 2)), ShapeError, 'maximum', '[2,3]', '[3,2]',
      torch='RuntimeError: The size of tensor a (3) must match the size of tensor b (2) at no'
            'n-singleton dimension 1'),
    E(lambda: tg.where(tg.ones(2, dtype=tg.bool), tg.ones(2, 3), 0.0),
      ShapeError, 'where', '[2]', '[2,3]',
      torch='RuntimeError: The size of tensor a (2) must match the size of tensor b (3) at no'
            'n-singleton dimension 1'),
    E(lambda: tg.ones(2, 3) @ tg.ones(2, 3), ShapeError, 'matmul', '[2,3]', '3 != 2',
      torch='RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)'),
    E(lambda: tg.matmul(tg.ones(()), tg.ones(())), ShapeError, 'matmul', '()',
      torch='RuntimeError: both arguments to matmul need to be at least 1D, but they are 0D a'
            'nd 0D'),
    E(lambda: tg.ones(()) @ tg.ones(3), ShapeError, 'matmul', '()', '(3,)',
      torch='RuntimeError: both arguments to matmul need to be at least 1D, but they are 0D a'
            'nd 1D'),
    E(lambda: tg.ones(3) @ tg.ones(4), ShapeError, 'matmul', '[3]', '[4]',
      torch='RuntimeError: inconsistent tensor size, expected tensor [3] and src [4] to have '
            'the same number of elements, but got 3 an...'),
    E(lambda: tg.mm(tg.ones(3), tg.ones(3, 2)), ShapeError, 'mm', '[3]',
      torch='RuntimeError: self must be a matrix'),
    E(lambda: tg.bmm(tg.ones(2, 3), tg.ones(2, 3)), ShapeError, 'bmm', '[2,3]',
      torch='RuntimeError: batch1 must be a 3D tensor'),
    E(lambda: tg.dot(tg.ones(2, 2), tg.ones(2, 2)), ShapeError, 'dot', '[2,2]',
      torch='RuntimeError: 1D tensors expected, but got 2D and 2D tensors'),
    E(lambda: tg.dot(tg.ones(2), tg.ones(3)), ShapeError, 'dot', '[2]', '[3]',
      torch='RuntimeError: inconsistent tensor size, expected tensor [2] and src [3] to have '
            'the same number of elements, but got 2 an...'),
    E(lambda: tg.outer(tg.ones(2, 2), tg.ones(2)), ShapeError, 'outer', '[2,2]',
      torch='RuntimeError: outer: Expected 1-D argument self, but got 2-D'),
    E(lambda: tg.ones(2, 3).expand(4, 3), ShapeError, 'expand', '[4, 3]', '[2,3]',
      torch='RuntimeError: The expanded size of the tensor (4) must match the existing size ('
            '2) at non-singleton dimension 0.  Target ...'),
    E(lambda: tg.ones(2, 3).expand(3), ShapeError, 'expand', '(1)', '[2,3]',
      torch='RuntimeError: expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes p'
            'rovided (1) must be greater or equal to t...'),
    E(lambda: tg.ones(2, 3).reshape(4, 2), ShapeError, 'reshape', '[4, 2]', 'size 6',
      torch="RuntimeError: shape '[4, 2]' is invalid for input of size 6"),
    E(lambda: tg.ones(2, 3).reshape(-1, -1),
      ShapeError, 'reshape', 'only one dimension can be inferred',
      torch='RuntimeError: only one dimension can be inferred'),
    E(lambda: tg.ones(2, 3).view(7), ShapeError, 'view', '[7]', 'size 6',
      torch="RuntimeError: shape '[7]' is invalid for input of size 6"),
    E(lambda: tg.ones(2, 3).view(4, -1), ShapeError, 'view', '[4, -1]', 'size 6',
      torch="RuntimeError: shape '[4, -1]' is invalid for input of size 6"),
    E(lambda: tg.ones(2, 3).t().view(-1), RuntimeError, 'view', '[3,2]', '[6]', '.reshape',
      torch="RuntimeError: view size is not compatible with input tensor's size and stride (a"
            't least one dimension spans across two co...'),
    E(lambda: tg.ones(2, 3)[:, ::2].view(-1), RuntimeError, 'view', '[2,2]', '[4]',
      torch="RuntimeError: view size is not compatible with input tensor's size and stride (a"
            't least one dimension spans across two co...'),
    E(lambda: tg.ones(4, 1).expand(4, 3).view(12), RuntimeError, 'view', '[4,3]', '[12]',
      torch="RuntimeError: view size is not compatible with input tensor's size and stride (a"
            't least one dimension spans across two co...'),
    E(lambda: tg.ones(2, 3).permute(0), ShapeError, 'permute', '(0,)', '[2,3]',
      torch='RuntimeError: permute(sparse_coo): number of dimensions in the tensor input does'
            ' not match the length of the desired orde...'),
    E(lambda: tg.ones(2, 3).permute(0, 0), ShapeError, 'permute', '[2,3]',
      torch='RuntimeError: permute(): duplicate dims are not allowed.'),
    E(lambda: tg.ones(2, 3).repeat(2), ShapeError, 'repeat', '[2,3]',
      torch='RuntimeError: Number of dimensions of repeat dims can not be smaller than number'
            ' of dimensions of tensor'),
    E(lambda: tg.cat([tg.ones(2, 3), tg.ones(2, 4)]), ShapeError, 'cat', '[2,3]', '[2,4]',
      torch='RuntimeError: Sizes of tensors must match except in dimension 0. Expected size 3'
            ' but got size 4 for tensor number 1 in th...'),
    E(lambda: tg.cat([tg.ones(()), tg.ones(())]),
      ShapeError, 'cat', 'zero-dimensional', 'position 0',
      torch='RuntimeError: zero-dimensional tensor (at position 0) cannot be concatenated'),
    E(lambda: tg.cat([tg.ones(2), tg.ones(())]),
      ShapeError, 'cat', 'zero-dimensional', 'position 1',
      torch='RuntimeError: zero-dimensional tensor (at position 1) cannot be concatenated'),
    E(lambda: tg.cat([]), ValueError, 'cat', 'non-empty',
      torch='ValueError: torch.cat(): expected a non-empty list of Tensors'),
    E(lambda: tg.cat([tg.ones(2, 3), tg.ones(2, 3, 1)]), ShapeError, 'cat', '[2,3]', '[2,3,1]',
      torch='RuntimeError: Tensors must have same number of dimensions: got 2 and 3'),
    E(lambda: tg.stack([tg.ones(2), tg.ones(3)]), ShapeError, 'stack', '[2]', '[3]',
      torch='RuntimeError: stack expects each tensor to be equal size, but got [2] at entry 0'
            ' and [3] at entry 1'),
    E(lambda: tg.stack([]), ValueError, 'stack', 'non-empty',
      torch='RuntimeError: stack expects a non-empty TensorList'),
    E(lambda: tg.ones(2, 3).split([1, 1], dim=1), ShapeError, 'split', '[1, 1]', '3',
      torch='RuntimeError: split_with_sizes expects split_sizes to sum exactly to 3 (input te'
            "nsor's size at dimension 1), but got spli..."),
    E(lambda: tg.nn.functional.linear(tg.ones(4, 5), tg.ones(2, 3)),
      ShapeError, 'linear', '[4,5]', '5 != 3',
      torch='RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x5 and 3x2)'),
    E(lambda: tg.nn.functional.conv2d(tg.ones(1, 2, 5, 5), tg.ones(4, 3, 3, 3)),
      ShapeError, 'conv2d', '[1,2,5,5]', '[4,3,3,3]',
      torch='RuntimeError: Given groups=1, weight of size [4, 3, 3, 3], expected input[1, 2, '
            '5, 5] to have 3 channels, but got 2 chann...'),
    E(lambda: tg.nn.functional.conv2d(tg.ones(2, 5, 5), tg.ones(4, 2, 7, 7)),
      ShapeError, 'conv2d', '[1,2,5,5]', '(7, 7)',
      torch='RuntimeError: Calculated padded input size per channel: (5 x 5). Kernel size: (7'
            " x 7). Kernel size can't be greater than ..."),
    V(lambda: tg.nn.functional.conv1d(tg.ones(1, 5), tg.ones(2, 1, 3)),
      [[3.0, 3.0, 3.0], [3.0, 3.0, 3.0]], 'float32'),
    E(lambda: tg.nn.functional.max_pool2d(tg.ones(1, 1, 2, 2), 3),
      ShapeError, 'max_pool2d', '[1,1,2,2]',
      torch='RuntimeError: Given input size: (1x2x2). Calculated output size: (1x0x0). Output'
            ' size is too small'),
    E(lambda: tg.nn.functional.cross_entropy(tg.ones(2, 3), tg.tensor([0, 1, 2])),
      ShapeError, 'cross_entropy', '(2, 3)', '(3,)',
      torch='ValueError: Expected input batch_size (2) to match target batch_size (3).'),
    E(lambda: tg.nn.functional.cross_entropy(tg.ones(2, 3), tg.tensor([3, 0])),
      IndexError, 'cross_entropy', '3',
      torch='IndexError: Target 3 is out of bounds.'),
    E(lambda: tg.nn.functional.nll_loss(tg.ones(2, 3), tg.tensor([0, -5])),
      IndexError, 'nll_loss', '-5',
      torch='IndexError: Target -5 is out of bounds.'),
    E(lambda: tg.nn.functional.layer_norm(tg.ones(2, 4), (3,)),
      ShapeError, 'layer_norm', '[2,4]', '[3]',
      torch='RuntimeError: Given normalized_shape=[3], expected input with shape [*, 3], but '
            'got input of size[2, 4]'),
    E(lambda: tg.nn.functional.batch_norm(tg.ones(2, 4), tg.zeros(3), tg.ones(3)),
      ShapeError, 'batch_norm', '4 elements', 'f32[3]',
      torch='RuntimeError: running_mean should contain 4 elements not 3'),
    E(lambda: tg.nn.functional.mse_loss(tg.ones(2, 3), tg.ones(2, 4)),
      ShapeError, 'mse_loss', '[2,3]', '[2,4]',
      torch='RuntimeError: The size of tensor a (3) must match the size of tensor b (4) at no'
            'n-singleton dimension 1'),
    E(lambda: tg.nn.functional.binary_cross_entropy(tg.ones(2), tg.ones(3)),
      ShapeError, 'binary_cross_entropy', '(2,)', '(3,)',
      torch='ValueError: Using a target size (torch.Size([3])) that is different to the input'
            ' size (torch.Size([2])) is deprecated. ...'),
    E(lambda: tg.nn.functional.softmax(tg.ones(2, 3), dim=3), IndexError, 'softmax', '[-2, 1]',
      torch='IndexError: Dimension out of range (expected to be in range of [-2, 1], but got '
            '3)'),
    E(lambda: tg.nn.functional.pad(tg.ones(2, 3), (1, 1, 1)), ValueError, 'pad', '(1, 1, 1)',
      torch='RuntimeError: Padding length must be divisible by 2'),
    E(lambda: tg.nn.Linear(3, 2)(tg.ones(4, 5)), ShapeError, 'linear', '[4,5]', '5 != 3',
      torch='RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x5 and 3x2)'),
    E(lambda: tg.nn.Embedding(4, 2)(tg.tensor([5])), IndexError, 'embedding', '5',
      torch='IndexError: index out of range in self'),
    E(lambda: tg.nn.Conv2d(3, 4, 3)(tg.ones(1, 2, 5, 5)), ShapeError, 'conv2d', '[1,2,5,5]',
      torch='RuntimeError: Given groups=1, weight of size [4, 3, 3, 3], expected input[1, 2, '
            '5, 5] to have 3 channels, but got 2 chann...'),
    E(lambda: tg.nn.BatchNorm1d(3)(tg.ones(2, 4)), ShapeError, 'batch_norm', '4 elements', 'f32[3]',
      torch='RuntimeError: running_mean should contain 4 elements not 3'),
    E(lambda: tg.nn.LayerNorm(3)(tg.ones(2, 4)), ShapeError, 'layer_norm', '[2,4]',
      torch='RuntimeError: Given normalized_shape=[3], expected input with shape [*, 3], but '
            'got input of size[2, 4]'),
]


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_bad_input(case):
    state = tg.get_rng_state()   # (manual_seed cases reseed the default generator)
    try:
        check(case)
    finally:
        tg.set_rng_state(state)


def test_the_walk_is_long_enough():
    assert len(CASES) >= 119
