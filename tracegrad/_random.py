"""Sampling functions beyond rand/randn: multinomial, bernoulli, normal, poisson, and the
in-place random fills (``uniform_``, ``normal_``, ``bernoulli_``, ``exponential_``,
``random_``, ``geometric_``, ``log_normal_``, ``cauchy_``).

Each one transforms uniform or normal draws of a generator's Threefry stream
(`_generator.draw`) with registry ops, so it is traceable and a compiled step draws
what an eager one does (poisson excepted: NumPy's sampler, eager only).  The numbers are
not torch's (another stream); the distributions, shapes, dtypes and errors are.  Value
checks (probabilities in range ...) run eagerly only: a traced tensor has no values.
"""
from __future__ import annotations

import math

import numpy as np

from tracegrad.ir import types as T

from . import _ops
from ._device import creates_on_device
from ._creation import parse_size
from ._generator import draw, generator_of
from .dispatch.grad_mode import no_grad
from .tensor import Tensor, attach


def _values(t: Tensor) -> np.ndarray | None:
    """`t`'s array when it has one (eager), None while tracing."""
    return t._data if isinstance(t._data, np.ndarray) else None


def _uniform(shape, dtype, generator) -> Tensor:
    return draw(shape, dtype, "uniform", generator_of("random", generator))


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator=None) -> Tensor:
    """`num_samples` category indices per row of the (unnormalized) probabilities `input`
    (torch.multinomial).

    Args:
        input: float (C,) or (N, C) non-negative weights, each row with a positive sum.
        replacement: False draws distinct categories (Gumbel top-k, i.e. sequential
            sampling without replacement, as torch); once a row's positive-weight
            categories are used up, its zero-weight ones follow in index order.
    Returns: int64 (num_samples,) or (N, num_samples).
    Raises:
        RuntimeError: a non-float input, not 1-D or 2-D, num_samples <= 0, num_samples >
            C without replacement, a negative/inf/NaN weight or a zero row (torch's words).
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{input.dtype.name}")
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    n = int(num_samples)
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    c = input.shape[-1]
    if not replacement and n > c:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    p = _values(input)
    if p is not None:
        if not np.isfinite(p).all() or (p < 0).any():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (p.sum(axis=-1) <= 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    gen = generator_of("multinomial", generator)
    with no_grad():
        w = _ops.convert(input.detach(), T.float64)
        rows = w if input.ndim == 2 else _ops.reshape(w, (1, c))
        if replacement:   # inverse CDF: the number of cumulative weights <= u * total
            u = draw((rows.shape[0], n), T.float64, "uniform", gen)
            cdf = _ops.cumsum(rows, 1)
            target = _ops.mul(u, _ops.sum(rows, (1,), True))
            below = _ops.le(_ops.unsqueeze(cdf, 1), _ops.unsqueeze(target, 2))
            out = _ops.sum(_ops.convert(below, T.int64), (2,), False)
            # u < 1 keeps the index below C; rounding of the cdf's last entry cannot pass it
            out = _ops.minimum(out, c - 1)
        else:   # Gumbel top-k: log w - log(-log u) sorted descending; log 0 = -inf goes last
            u = draw(rows.shape, T.float64, "uniform", gen)
            gumbel = _ops.neg(_ops.log(_ops.neg(_ops.log1p(_ops.neg(u)))))
            keys = _ops.add(_ops.log(rows), gumbel)
            order = _ops.argsort(keys, 1, True, True)
            out = order[:, :n]
    return out if input.ndim == 2 else _ops.reshape(out, (n,))


def bernoulli(input: Tensor, p=None, *, generator=None) -> Tensor:
    """1 with probability `input` (or the scalar `p`), else 0, in `input`'s dtype
    (torch.bernoulli).

    Raises:
        NotImplementedError: a non-floating input (torch's words).
        RuntimeError: a probability outside [0, 1].
    """
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for "
                                  f"'{input.dtype.name}'")
    gen = generator_of("bernoulli", generator)
    if p is None:
        probs = _values(input)
        if probs is not None and ((probs < 0) | (probs > 1) | np.isnan(probs)).any():
            raise RuntimeError("bernoulli: Expected p_in >= 0 && p_in <= 1 to be true, but "
                               "got false.")
        prob = input.detach()
    else:
        _check_p("bernoulli", p)
        prob = float(p)
    with no_grad():
        u = draw(input.shape, T.float64, "uniform", gen)
        return _ops.convert(_ops.lt(u, prob), input.dtype)


def _check_p(name: str, p) -> None:
    if not 0.0 <= float(p) <= 1.0:
        raise RuntimeError(f"{name} expects p to be in [0, 1], but got p={p}")


def _normal_std(std) -> None:
    if isinstance(std, Tensor):
        v = _values(std)
        bad = v is not None and (v < 0).any()
        shown = float(v.min()) if bad else 0
    else:
        bad, shown = std < 0, std
    if bad:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(shown)}")


def _num(v) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


@creates_on_device
def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """Normal samples (torch.normal), in torch's four forms: ``normal(mean_t, std_t)``
    (broadcast shapes), ``normal(mean_t, std=1.0)``, ``normal(mean, std_t)``, and
    ``normal(mean, std, size)`` for float mean and std.

    Raises:
        RuntimeError: a negative std, or mean and std shapes that do not broadcast.
        TypeError: two floats without a size (torch's "invalid combination").
    """
    gen = generator_of("normal", generator)
    tensors = [a for a in (mean, std) if isinstance(a, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got "
                            f"({type(mean).__name__}, {type(std).__name__}), but expected one "
                            "of:\n * (Tensor mean, Tensor std)\n * (Tensor mean, float std = 1)"
                            "\n * (float mean, Tensor std)\n * (float mean, float std, tuple of "
                            "ints size)")
        _normal_std(std)
        z = draw(parse_size("normal", (size,)), T.as_dtype(dtype or T.DEFAULT_FLOAT), "normal",
                 gen)
        with no_grad():
            t = _ops.add(_ops.mul(z, float(std)), float(mean))
        return t.requires_grad_(True) if requires_grad else t
    _normal_std(std)
    shape = np.broadcast_shapes(*(t.shape for t in tensors)) if len(tensors) == 2 else \
        tensors[0].shape
    dt = T.result_type([], [t.dtype for t in tensors], [])
    with no_grad():
        z = draw(tuple(shape), dt, "normal", gen)
        m = mean.detach() if isinstance(mean, Tensor) else float(mean)
        s = std.detach() if isinstance(std, Tensor) else float(std)
        return _ops.add(_ops.mul(z, s), m)


def poisson(input: Tensor, generator=None) -> Tensor:
    """Poisson samples with rates `input`, in its dtype (torch.poisson).  Eager only: NumPy's
    sampler, seeded by two draws of the generator's stream (so `tg.manual_seed` repeats it).

    Raises:
        NotImplementedError: a non-floating input (torch's words).
        RuntimeError: a negative rate.
    """
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{input.dtype.name}'")
    rates = input._concrete("poisson")
    if (rates < 0).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    words = draw((2,), T.float64, "uniform", generator_of("poisson", generator))._data
    rng = np.random.default_rng([int(w * 2 ** 24) for w in words])
    return Tensor(rng.poisson(rates).astype(input.dtype.numpy))


@attach
class _RandomMethods:
    """Tensor's random methods: multinomial, bernoulli and the in-place fills."""

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        return multinomial(self, num_samples, replacement, generator=generator)

    def bernoulli(self, p=None, *, generator=None):
        return bernoulli(self, p, generator=generator)

    def _fill_random(self, name: str, make) -> "Tensor":
        return self._inplace_apply(name, lambda: _ops.convert(make(), self.dtype))

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        """Fill with U[a, b) (torch.Tensor.uniform_; RuntimeError when a > b)."""
        if a > b:
            raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                               f"from={_num(a)} > to={_num(b)}")
        return self._fill_random("uniform_", lambda: _ops.add(_ops.mul(
            _uniform(self.shape, _work(self), generator), float(b - a)), float(a)))

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Fill with N(mean, std^2) (torch.Tensor.normal_; RuntimeError when std < 0)."""
        _normal_std(std)
        return self._fill_random("normal_", lambda: _ops.add(_ops.mul(draw(
            self.shape, _work(self), "normal", generator_of("normal_", generator)),
            float(std)), float(mean)))

    def bernoulli_(self, p=0.5, *, generator=None):
        """Fill with 1 with probability `p` (a float or a tensor), else 0."""
        if isinstance(p, Tensor):
            return self._fill_random("bernoulli_", lambda: _ops.lt(
                _uniform(self.shape, T.float64, generator), p.detach()))
        if not 0.0 <= float(p) <= 1.0:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        return self._fill_random("bernoulli_", lambda: _ops.lt(
            _uniform(self.shape, T.float64, generator), float(p)))

    def exponential_(self, lambd=1.0, *, generator=None):
        """Fill with Exp(lambd) samples, -log(1 - u) / lambd (RuntimeError when lambd <= 0)."""
        if not lambd > 0:
            raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
        return self._fill_random("exponential_", lambda: _ops.div(_ops.neg(_ops.log1p(
            _ops.neg(_uniform(self.shape, T.float64, generator)))), float(lambd)))

    def geometric_(self, p, *, generator=None):
        """Fill with the trial count of the first success, ceil(log(1 - u) / log(1 - p)), >= 1
        (RuntimeError unless 0 < p < 1, as torch)."""
        if not 0.0 < p < 1.0:
            raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
        return self._fill_random("geometric_", lambda: _ops.maximum(_ops.ceil(_ops.div(
            _ops.log1p(_ops.neg(_uniform(self.shape, T.float64, generator))),
            math.log1p(-p))), 1.0))

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        """Fill with exp(N(mean, std^2)) (RuntimeError when std <= 0)."""
        if not std > 0:
            raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
        return self._fill_random("log_normal_", lambda: _ops.exp(_ops.add(_ops.mul(draw(
            self.shape, T.float64, "normal", generator_of("log_normal_", generator)),
            float(std)), float(mean))))

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        """Fill with median + sigma * tan(pi (u - 1/2)) (torch.Tensor.cauchy_)."""
        return self._fill_random("cauchy_", lambda: _ops.add(_ops.mul(_ops.tan(_ops.mul(
            _ops.sub(_uniform(self.shape, T.float64, generator), 0.5), math.pi)),
            float(sigma)), float(median)))

    def random_(self, from_=None, to=None, *, generator=None):
        """Fill with integers uniform in [from, to) (torch.Tensor.random_): ``random_(to)`` is
        [0, to); ``random_()`` is [0, 2**mantissa] for floats (2**24 for float32) and [0, max]
        for integers.

        Raises:
            RuntimeError: from >= to (torch's message).
        """
        if to is None:
            low, high = (0, from_) if from_ is not None else (0, _random_top(self.dtype) + 1)
        else:
            low, high = from_, to
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={low} >= to={high}")
        span = high - low
        # two 24-bit draws make a 48-bit uniform integer; wider spans (the int64 default)
        # scale it, which leaves gaps: documented, not torch's exact full-range stream
        return self._fill_random("random_", lambda: _ops.add(_ops.floor(_ops.mul(_u48(
            self.shape, generator), float(span))), float(low)))


def _work(t: Tensor) -> T.DType:
    return t.dtype if t.dtype.is_floating_point else T.float64


def _u48(shape, generator) -> Tensor:
    u = _uniform(tuple(shape) + (2,), T.float64, generator)
    return _ops.add(u[..., 0], _ops.mul(u[..., 1], 2.0 ** -24))


def _random_top(dt: T.DType) -> int:
    """torch's ``random_()`` upper bound: the largest integer a float dtype holds exactly
    (2**24 for float32), the integer dtype's maximum, 1 for bool."""
    if dt is T.bool_:
        return 1
    if dt.is_floating_point:
        return 2 ** (np.finfo(dt.numpy).nmant + 1)
    return int(np.iinfo(dt.numpy).max)
