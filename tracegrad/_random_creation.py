"""Random tensor creation: randn, rand, randint, randperm and their ``*_like`` forms.

Each draws from a generator's Threefry stream (`_generator.draw`; default: the generator
`tg.manual_seed` seeds) and builds the result with registry ops, so it is traceable and a
compiled step draws what an eager one does; the numbers are not torch's (another stream),
the shapes, dtypes, size forms and errors are.  Split from _creation.py, which re-exports
every name here (``tg.randn`` and ``_creation.randn`` are these functions); the other
samplers (bernoulli, normal, multinomial, the in-place fills) are in _random.py.
"""
from __future__ import annotations

import operator

from tracegrad.ir import types as T

from . import _generator, _ops, _state
from ._args import bool_arg, check_alloc, dtype_arg, leaf
from ._creation import _dim, _invalid, _like, parse_size
from ._device import check_device, creates_on_device
from .dispatch.grad_mode import no_grad
from .tensor import Tensor


def _random(name, args, size, dtype, distribution, requires_grad, generator) -> Tensor:
    dt = dtype_arg(name, dtype, T.DEFAULT_FLOAT)
    size = parse_size(name, args, size, strict=True)
    bool_arg(name, "requires_grad", requires_grad)
    gen = _generator.generator_of(name, generator)
    if not dt.is_floating_point and not dt.is_complex:   # torch 2.13's kernel-dispatch words
        kernel = "check_uniform_bounds" if distribution == "uniform" else "normal_kernel_cpu"
        raise NotImplementedError(f"{name}: \"{kernel}\" not implemented for '{dt.name}'")
    if dt.is_complex:   # real and imaginary parts drawn as the last dim of a real draw
        check_alloc(name, size + (2,), dt.to_real(), copies=4)
        parts = _generator.draw(size + (2,), dt.to_real(), distribution, gen)
        with no_grad():
            if distribution == "normal":   # torch: each part N(0, 1/2), so E|z|^2 = 1
                parts = _ops.mul(parts, 0.5 ** 0.5)
            # cloned: a fresh tensor, not a view of the temporary parts (as torch.randn)
            t = _ops.view_as_complex(parts).clone()
    else:
        check_alloc(name, size, dt, copies=3)   # the random bits, their floats, the result
        t = _generator.draw(size, dt, distribution, gen)
    return leaf(name, t, requires_grad)


@creates_on_device
def randn(*args, size=None, generator=None, dtype=None, device=None,
          requires_grad: bool = False) -> Tensor:
    """Standard normal samples of shape `size` (torch.randn) from `generator` (default: the
    one `tg.manual_seed` seeds); size forms as `zeros`.

    A complex dtype draws the real and imaginary parts each from N(0, 1/2), as torch.
    Raises:
        TypeError: a bad size (torch's messages, as `parse_size`) or generator.
        NotImplementedError: an integer dtype (torch's words).
    """
    check_device("randn", device)
    return _random("randn", args, size, dtype, "normal", requires_grad, generator)


@creates_on_device
def rand(*args, size=None, generator=None, dtype=None, device=None,
         requires_grad: bool = False) -> Tensor:
    """Uniform [0, 1) samples of shape `size` (torch.rand) from `generator`; size forms and
    errors as `randn`.

    A complex dtype draws the real and imaginary parts each uniform in [0, 1), as torch.
    """
    check_device("rand", device)
    return _random("rand", args, size, dtype, "uniform", requires_grad, generator)


randn_like = _like(randn, "randn_like", "torch.randn_like: `randn` of `t`'s shape, in `t`'s "
                   "dtype unless `dtype` is given.")
rand_like = _like(rand, "rand_like", "torch.rand_like: `rand` of `t`'s shape, in `t`'s dtype "
                  "unless `dtype` is given.")


def _randint_args(args, low, high, size):
    """torch's two randint forms, ``(high, size)`` and ``(low, high, size)``, positional or
    keyword: (low, high, size)."""
    bounds = list(args)
    if size is None and bounds and isinstance(bounds[-1], (tuple, list)):
        size = bounds.pop()
    if size is None:
        if len(args) == 2 and low is None and high is None and _dim(args[1]) is not None:
            raise TypeError("randint(): argument 'size' (position 2) must be tuple of ints, "
                            "not int")
        raise _invalid("randint", args, "randint")
    if len(bounds) == 2 and low is None and high is None:
        (low, high), positions = bounds, {"low": 1, "high": 2}
    elif len(bounds) == 1 and high is None:
        low, high, positions = (0 if low is None else low), bounds[0], {"low": 1, "high": 1}
    elif len(bounds) == 1 and low is None:
        low, positions = bounds[0], {"low": 1, "high": 2}
    elif not bounds and high is not None:
        low, positions = (0 if low is None else low), {"low": 1, "high": 2}
    else:
        raise _invalid("randint", args, "randint")
    for arg, v in (("low", low), ("high", high)):
        if _dim(v) is None:
            raise TypeError(f"randint(): argument '{arg}' (position {positions[arg]}) must be "
                            f"int, not {type(v).__name__}")
    return operator.index(low), operator.index(high), parse_size("randint", (size,))


@creates_on_device
def randint(*args, low=None, high=None, size=None, generator=None, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """Integers uniform in [low, high) (torch.randint), int64 by default, from `generator`
    (default: the one `tg.manual_seed` seeds).  torch's two forms: ``randint(high, size)``
    draws from [0, high), ``randint(low, high, size)``; each argument may be a keyword.

    Raises:
        TypeError: a missing size, a size that is an int, non-int bounds (torch's messages).
        RuntimeError: low >= high (torch's ``random_`` message).
    """
    check_device("randint", device)
    low, high, size = _randint_args(args, low, high, size)
    dt = dtype_arg("randint", dtype, T.int64)
    bool_arg("randint", "requires_grad", requires_grad)
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    check_alloc("randint", size, T.float64, copies=3)   # float64 draws, their products, ints
    gen = _generator.generator_of("randint", generator)
    u = _generator.draw(size, T.float64, "uniform", gen)
    with no_grad():
        span = _ops.convert(_ops.mul(u, float(high - low)), T.int64)   # u >= 0: truncation floors
        t = _ops.add(span, int(low)).to(dt)
    return leaf("randint", t, requires_grad)


@creates_on_device
def randint_like(t: Tensor, low, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad: bool = False, memory_format=None) -> Tensor:
    """torch.randint_like: `randint` of `t`'s shape, in `t`'s dtype unless `dtype` is given;
    ``randint_like(t, high)`` draws from [0, high)."""
    check_device("randint_like", device)
    if high is None:
        low, high = 0, low
    return randint(low, high, t.shape, generator=generator,
                   dtype=dtype_arg("randint_like", dtype, t.dtype),
                   requires_grad=requires_grad)


@creates_on_device
def randperm(n: int, *, generator=None, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (torch.randperm), int64 unless `dtype` is given,
    from `generator` (default: the one `tg.manual_seed` seeds; the Threefry stream, so
    other permutations than torch's).

    Sorts `n` uniform keys on a 2**-48 grid, so ties (which would favour the identity
    order) are negligible for any practical `n`.  Traceable: a compiled step shuffles from
    the same stream as eager.

    Raises:
        RuntimeError: a negative `n` (torch's message).
    """
    check_device("randperm", device)
    if _dim(n) is None:
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    n = operator.index(n)
    dt = dtype_arg("randperm", dtype, T.int64)
    bool_arg("randperm", "requires_grad", requires_grad)
    if n < 0:
        raise RuntimeError(f"randperm: n must be non-negative, got {n} (torch 2.13: Trying to "
                           f"create tensor with negative dimension {n}: [{n}])")
    check_alloc("randperm", (n, 2), T.float64, copies=3)
    gen = _generator.generator_of("randperm", generator)
    u = _generator.draw((n, 2), T.float64, "uniform", gen)   # two 24-bit draws per key
    with no_grad():
        keys = _ops.add(u[:, 0], _ops.mul(u[:, 1], 2.0 ** -24))
        t = _ops.convert(_ops.argsort(keys, 0, False, True), dt)
    return leaf("randperm", t, requires_grad)


# the public functions, each raising its argument errors at the user's line (as _creation's;
# wrapped last, so randint_like calls the wrapped randint and randn_like wraps the bare randn)
for _name in ("randn", "rand", "randn_like", "rand_like", "randint", "randint_like", "randperm"):
    globals()[_name] = _state.located(globals()[_name])
