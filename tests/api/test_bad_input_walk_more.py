"""A walk over bad inputs on the public API, part 2: dtypes, creation functions (sizes
checked before allocating), the remaining argument checks, and inputs torch accepts.

As part 1 (tests/api/test_bad_input_walk.py): type, op named first, the values involved
and the user's line; ``torch=`` is torch 2.13's error.  Departures: `AllocationError` (a
MemoryError naming op, shape, dtype and bytes) where torch's allocator raises RuntimeError;
ZeroDivisionError for an integer division by zero, where torch raises RuntimeError
"ZeroDivisionError"; `DTypeError` (a TypeError) where torch says "not implemented for".
The `V` cases are inputs torch accepts: the same values and dtype (torch 2.13's, recorded).
"""
import numpy as np
import pytest

import tracegrad as tg
from tracegrad import AllocationError, DTypeError, ShapeError

from _bad_input import E, V, case_id, check

CASES = [
# ---- dtypes --------------------------------------------------------------------------
    E(lambda: tg.tensor([1, 2]).mean(), DTypeError, 'mean', 'int64',
      torch='RuntimeError: mean(): could not infer output dtype. Input dtype must be either a'
            ' floating point or complex dtype. Got: Long'),
    E(lambda: tg.tensor([1, 2]).softmax(0), DTypeError, 'softmax', 'i64[2]',
      torch='NotImplementedError: "softmax_lastdim_kernel_impl" not implemented for \'Long\''),
    E(lambda: tg.bitwise_and(tg.ones(2, 3), tg.ones(2, 3)), DTypeError, 'bitwise_and', 'f32[2,3]',
      torch='NotImplementedError: "bitwise_and_cpu" not implemented for \'Float\''),
    E(lambda: tg.ones(2, dtype=tg.int64).requires_grad_(), RuntimeError, 'requires_grad_', 'int64',
      torch='RuntimeError: only Tensors of floating point dtype can require gradients'),
    E(lambda: tg.tensor([1, 2], requires_grad=True), RuntimeError, 'tensor', 'int64',
      torch='RuntimeError: Only Tensors of floating point and complex dtype can require gradi'
            'ents'),
    E(lambda: tg.ones(2, dtype=tg.int64, requires_grad=True), RuntimeError, 'ones', 'int64',
      torch='RuntimeError: Only Tensors of floating point and complex dtype can require gradi'
            'ents'),
    E(lambda: tg.nn.Parameter(tg.tensor([1, 2])), RuntimeError, 'Parameter', 'int64',
      torch='RuntimeError: Only Tensors of floating point and complex dtype can require gradi'
            'ents'),
    E(lambda: tg.nn.functional.cross_entropy(tg.ones(2, 3), tg.ones(2, 3, dtype=tg.int64)),
      DTypeError, 'cross_entropy', 'i64[2,3]',
      torch='RuntimeError: Expected floating point type for target with class probabilities, '
            'got Long'),
    E(lambda: tg.nn.functional.embedding(tg.tensor([0.5]), tg.ones(4, 2)),
      DTypeError, 'embedding', 'f32[1]',
      torch="RuntimeError: Expected tensor for argument #1 'indices' to have one of the follo"
            'wing scalar types: Long, Int; but got tor...'),
# ---- creation ------------------------------------------------------------------------
    E(lambda: tg.zeros(-1), RuntimeError, 'zeros', 'non-negative',
      torch='RuntimeError: zeros: Dimension size must be non-negative.'),
    E(lambda: tg.ones(-2, 3), RuntimeError, 'ones', '-2',
      torch='RuntimeError: Trying to create tensor with negative dimension -2: [-2, 3]'),
    E(lambda: tg.empty(2, -1), RuntimeError, 'empty', '-1',
      torch='RuntimeError: Trying to create tensor with negative dimension -1: [2, -1]'),
    E(lambda: tg.full((-1,), 1.0), RuntimeError, 'full', '-1',
      torch='RuntimeError: Trying to create tensor with negative dimension -1: [-1]'),
    E(lambda: tg.randn(-2), RuntimeError, 'randn', '-2',
      torch='RuntimeError: Trying to create tensor with negative dimension -2: [-2]'),
    E(lambda: tg.rand(3, -1), RuntimeError, 'rand', '-1',
      torch='RuntimeError: Trying to create tensor with negative dimension -1: [3, -1]'),
    E(lambda: tg.randint(5, (-1,)), RuntimeError, 'randint', '-1',
      torch='RuntimeError: Trying to create tensor with negative dimension -1: [-1]'),
    E(lambda: tg.randperm(-1), RuntimeError, 'randperm', '-1',
      torch='RuntimeError: Trying to create tensor with negative dimension -1: [-1]'),
    E(lambda: tg.eye(-1), RuntimeError, 'eye', '-1',
      torch='RuntimeError: n must be greater or equal to 0, got -1'),
    E(lambda: tg.linspace(0, 1, -1), RuntimeError, 'linspace', 'non-negative',
      torch='RuntimeError: number of steps must be non-negative'),
    E(lambda: tg.arange(0, 5, 0), RuntimeError, 'arange', 'nonzero',
      torch='RuntimeError: step must be nonzero'),
    E(lambda: tg.arange(5, 0), RuntimeError, 'arange', 'inconsistent with step sign',
      torch='RuntimeError: upper bound and lower bound inconsistent with step sign'),
    E(lambda: tg.arange('a'), TypeError, 'arange', 'str',
      torch="TypeError: arange(): argument 'end' (position 1) must be Number, not str"),
    E(lambda: tg.randint(5, 2, (3,)), RuntimeError, 'randint', 'from=5', 'to=2',
      torch="RuntimeError: random_ expects 'from' to be less than 'to', but got from=5 >= to="
            '2'),
    E(lambda: tg.ones('3'), TypeError, 'ones', 'size', 'str',
      torch="TypeError: ones(): argument 'size' (position 1) must be tuple of ints, not str"),
    E(lambda: tg.zeros(2, '3'), TypeError, 'zeros', 'size', 'str',
      torch="TypeError: zeros(): argument 'size' failed to unpack the object at pos 2 with er"
            'ror "type must be tuple of ints,but go...'),
    E(lambda: tg.zeros((2, 3.5)), TypeError, 'zeros', 'size', 'float',
      torch="TypeError: zeros(): argument 'size' failed to unpack the object at pos 2 with er"
            'ror "type must be tuple of ints,but go...'),
    E(lambda: tg.randn(2.5), TypeError, 'randn', 'float',
      torch="TypeError: randn(): argument 'size' (position 1) must be tuple of ints, not floa"
            't'),
    E(lambda: tg.zeros(2, dtype='float32'), TypeError, 'zeros', 'dtype', 'str',
      torch="TypeError: zeros(): argument 'dtype' must be torch.dtype, not str"),
    E(lambda: tg.tensor([1.0], dtype='float32'), TypeError, 'tensor', 'dtype', 'str',
      torch="TypeError: tensor(): argument 'dtype' must be torch.dtype, not str"),
    E(lambda: tg.full((2,), 1.0, dtype='int64'), TypeError, 'full', 'dtype', 'str',
      torch="TypeError: full(): argument 'dtype' must be torch.dtype, not str"),
    E(lambda: tg.arange(3, dtype='int64'), TypeError, 'arange', 'dtype', 'str',
      torch='TypeError: arange() received an invalid combination of arguments - got (int, dty'
            'pe=str), but expected one of:'),
    E(lambda: tg.ones(2, requires_grad='yes'), TypeError, 'ones', 'requires_grad', 'str',
      torch="TypeError: ones(): argument 'requires_grad' must be bool, not str"),
    E(lambda: tg.tensor([1.0], requires_grad='yes'), TypeError, 'tensor', 'requires_grad', 'str',
      torch="TypeError: tensor(): argument 'requires_grad' must be bool, not str"),
    E(lambda: tg.randn(2, requires_grad=1), TypeError, 'randn', 'requires_grad', 'int',
      torch='TypeError: randn() received an invalid combination of arguments - got (int, requ'
            'ires_grad=int), but expected one of:'),
    E(lambda: tg.tensor([[1, 2], [3]]), TypeError, 'tensor', 'rectangular',
      torch='ValueError: expected sequence of length 2 at dim 1 (got 1)'),
    E(lambda: tg.tensor('abc'), TypeError, 'tensor', 'str',
      torch="TypeError: new(): invalid data type 'str'"),
    E(lambda: tg.tensor([1, 'a']), TypeError, 'tensor',
      torch="TypeError: new(): invalid data type 'str'"),
    E(lambda: tg.zeros(2 ** 40, 2 ** 20),
      AllocationError, 'zeros', '[1099511627776, 1048576]', 'float32', 'bytes',
      torch='RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator:'
            " can't allocate memory: you tried to allo..."),
    E(lambda: tg.ones(2 ** 40, 2 ** 20),
      AllocationError, 'ones', '[1099511627776, 1048576]', 'bytes',
      torch='RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator:'
            " can't allocate memory: you tried to allo..."),
    E(lambda: tg.empty(2 ** 36, 2 ** 10), AllocationError, 'empty', '[68719476736, 1024]', 'bytes',
      torch='RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator:'
            " can't allocate memory: you tried to allo..."),
    E(lambda: tg.full((2 ** 40, 2 ** 20), 1.0),
      AllocationError, 'full', '[1099511627776, 1048576]', 'bytes',
      torch='RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator:'
            " can't allocate memory: you tried to allo..."),
    E(lambda: tg.randn(2 ** 40, 2 ** 20),
      AllocationError, 'randn', '[1099511627776, 1048576]', 'bytes',
      torch='RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator:'
            " can't allocate memory: you tried to allo..."),
    E(lambda: tg.rand(2 ** 36, 2 ** 10), AllocationError, 'rand', '[68719476736, 1024]', 'bytes',
      torch='RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator:'
            " can't allocate memory: you tried to allo..."),
    E(lambda: tg.randint(0, 5, (2 ** 40, 2 ** 20)),
      AllocationError, 'randint', '[1099511627776, 1048576]', 'bytes',
      torch='RuntimeError: Storage size calculation overflowed with sizes=[1099511627776, 104'
            '8576]'),
    E(lambda: tg.eye(2 ** 30), AllocationError, 'eye', '[1073741824, 1073741824]', 'bytes',
      torch='RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator:'
            " can't allocate memory: you tried to allo..."),
    E(lambda: tg.arange(0, 2 ** 50), AllocationError, 'arange', '[1125899906842624]', 'bytes',
      torch='RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator:'
            " can't allocate memory: you tried to allo..."),
    E(lambda: tg.linspace(0, 1, 2 ** 45), AllocationError, 'linspace', '[35184372088832]', 'bytes',
      torch='RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator:'
            " can't allocate memory: you tried to allo..."),
    E(lambda: tg.randperm(2 ** 45), AllocationError, 'randperm', 'bytes',
      torch='RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator:'
            " can't allocate memory: you tried to allo..."),
    E(lambda: tg.zeros(2 ** 62, 4), AllocationError, 'zeros', '[4611686018427387904, 4]', 'bytes',
      torch='RuntimeError: Storage size calculation overflowed with sizes=[461168601842738790'
            '4, 4]'),
    E(lambda: tg.zeros_like(tg.ones(2), dtype='int64'), TypeError, 'zeros_like', 'dtype', 'str',
      torch="TypeError: zeros_like(): argument 'dtype' must be torch.dtype, not str"),
    E(lambda: tg.from_numpy(np.arange(4.0)[::-1]), ValueError, 'from_numpy', 'negative',
      torch='ValueError: At least one stride in the given numpy array is negative, and tensor'
            's with negative strides are not current...'),
    E(lambda: tg.from_numpy([1.0, 2.0]), TypeError, 'from_numpy', 'list',
      torch='TypeError: expected np.ndarray (got list)'),
    E(lambda: tg.from_numpy(np.array(['a'])), TypeError, 'from_numpy',
      torch="TypeError: can't convert np.ndarray of type numpy.str_. The only supported types"
            ' are: float64, float32, float16, compl...'),
# ---- misc ----------------------------------------------------------------------------
    E(lambda: tg.manual_seed('x'), ValueError, 'manual_seed', "'x'",
      torch="ValueError: invalid literal for int() with base 10: 'x'"),
    E(lambda: tg.manual_seed(None), TypeError, 'manual_seed', 'None',
      torch='TypeError: int() argument must be a string, a bytes-like object or a real number'
            ", not 'NoneType'"),
    E(lambda: tg.manual_seed(2 ** 70), ValueError, 'manual_seed', 'Overflow',
      torch='ValueError: Overflow when unpacking long long'),
    E(lambda: list(tg.tensor(1.0)), TypeError, 'iteration', '0-d',
      torch='TypeError: iteration over a 0-d tensor'),
    E(lambda: len(tg.tensor(1.0)), TypeError, 'len', '0-d',
      torch='TypeError: len() of a 0-d tensor'),
    E(lambda: tg.ones(2, 3).item(), RuntimeError, 'item', '6 elements',
      torch='RuntimeError: a Tensor with 6 elements cannot be converted to Scalar'),
    E(lambda: bool(tg.ones(2)), RuntimeError, 'bool', '2 elements',
      torch='RuntimeError: Boolean value of Tensor with more than one value is ambiguous'),
    E(lambda: float(tg.ones(2, 3)), ValueError, 'float', 'f32[2,3]',
      torch='ValueError: only one element tensors can be converted to Python scalars'),
    E(lambda: tg.tensor([1, 2]) ** -1, RuntimeError, 'pow', 'negative integer powers', 'i64[2]',
      torch='RuntimeError: Integers to negative integer powers are not allowed.'),
    E(lambda: tg.tensor([1, 2]).pow(-2), RuntimeError, 'pow', 'negative integer powers',
      torch='RuntimeError: Integers to negative integer powers are not allowed.'),
    E(lambda: tg.pow(tg.tensor([1, 2]), -1), RuntimeError, 'pow', 'negative integer powers',
      torch='RuntimeError: Integers to negative integer powers are not allowed.'),
    E(lambda: tg.tensor([1, 2]).pow_(-1), RuntimeError, 'pow', 'negative integer powers',
      torch='RuntimeError: Integers to negative integer powers are not allowed.'),
    E(lambda: tg.tensor([1, 2]) // tg.tensor([0, 1]),
      ZeroDivisionError, 'floor_divide', 'division by zero',
      torch='RuntimeError: ZeroDivisionError'),
    E(lambda: tg.tensor([1, 2]) % 0, ZeroDivisionError, 'remainder', 'division by zero',
      torch='RuntimeError: ZeroDivisionError'),
    E(lambda: tg.remainder(tg.tensor([1, 2]), tg.tensor([1, 0])),
      ZeroDivisionError, 'remainder', 'division by zero',
      torch='RuntimeError: ZeroDivisionError'),
    E(lambda: tg.fmod(tg.tensor([1, 2]), 0), ZeroDivisionError, 'fmod', 'division by zero',
      torch='RuntimeError: ZeroDivisionError'),
    E(lambda: (tg.ones(2, requires_grad=True) * 2).backward(tg.ones(3)),
      RuntimeError, 'backward', '[3]', '[2]',
      torch='RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([3]) a'
            'nd output[0] has a shape of torch.Size([2]).'),
    E(lambda: (tg.ones(2, requires_grad=True) * 2).backward(),
      RuntimeError, 'backward', 'scalar outputs', '[2]',
      torch='RuntimeError: grad can be implicitly created only for scalar outputs'),
    E(lambda: tg.ones(()).backward(), RuntimeError, 'backward', 'does not require grad',
      torch='RuntimeError: element 0 of tensors does not require grad and does not have a gra'
            'd_fn'),
    E(lambda: tg.ones(2, requires_grad=True).numpy(), RuntimeError, 'numpy', 'requires grad',
      torch="RuntimeError: Can't call numpy() on Tensor that requires grad. Use tensor.detach"
            '().numpy() instead.'),
    E(lambda: tg.ones(2, 3) + 'a', TypeError, '', 'unsupported operand', loc=False,
      torch="TypeError: unsupported operand type(s) for +: 'Tensor' and 'str'"),
    E(lambda: tg.ones(2, 3) @ None, TypeError, '', 'unsupported operand', loc=False,
      torch="TypeError: unsupported operand type(s) for @: 'Tensor' and 'NoneType'"),
    E(lambda: tg.optim.SGD([tg.ones(2, requires_grad=True)], lr=-1.0), ValueError, 'SGD', '-1.0',
      torch='ValueError: Invalid learning rate: -1.0'),
    E(lambda: tg.optim.Adam([tg.ones(2, requires_grad=True)], betas=(1.5, 0.9)),
      ValueError, 'Adam', '1.5',
      torch='ValueError: Invalid beta parameter at index 0: 1.5'),
    E(lambda: tg.optim.SGD([], lr=0.1), ValueError, 'SGD', 'empty parameter list',
      torch='ValueError: optimizer got an empty parameter list'),
    E(lambda: tg.nn.Linear(3, -2), RuntimeError, 'Linear', '-2',
      torch='RuntimeError: Trying to create tensor with negative dimension -2: [-2, 3]'),
# ---- accepted by torch: the same values ----------------------------------------------
    V(lambda: tg.tensor([0, 1, -1, 2]) ** tg.tensor([-1, -1, -1, -1]),
      [0, 1, -1, 0], 'int64'),
    V(lambda: tg.tensor([5, -1, 1]) ** tg.tensor([-2, -3, -4]),
      [0, -1, 1], 'int64'),
    V(lambda: 2 ** tg.tensor([-1, 1, 3]),
      [0, 2, 8], 'int64'),
    V(lambda: tg.ones(2, 3).t().view(3, 2),
      [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]], 'float32'),
    V(lambda: tg.ones(2, 3).t().contiguous().view(-1),
      [1.0, 1.0, 1.0, 1.0, 1.0, 1.0], 'float32'),
    V(lambda: tg.ones(2, 3)[:, :2][0].view(-1),
      [1.0, 1.0], 'float32'),
    V(lambda: tg.ones(2, 3).t().reshape(-1),
      [1.0, 1.0, 1.0, 1.0, 1.0, 1.0], 'float32'),
    V(lambda: tg.ones(2, 3).unsqueeze(0).expand(4, 2, 3).reshape(8, 3).sum(0),
      [8.0, 8.0, 8.0], 'float32'),
    V(lambda: tg.manual_seed(1.7).initial_seed(),
      1, None),
    V(lambda: tg.ones(()).sum(dim=0),
      1.0, 'float32'),
    V(lambda: tg.ones(()).softmax(dim=-1),
      1.0, 'float32'),
    V(lambda: tg.tensor([1, 2]).sqrt(),
      [1.0, 1.4142135381698608], 'float32'),
    V(lambda: tg.ones(2, 3).sum(dim=-2),
      [2.0, 2.0, 2.0], 'float32'),
]


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_bad_input(case):
    state = tg.get_rng_state()   # (manual_seed cases reseed the default generator)
    try:
        check(case)
    finally:
        tg.set_rng_state(state)


def test_the_walk_is_long_enough():
    assert len(CASES) >= 87
