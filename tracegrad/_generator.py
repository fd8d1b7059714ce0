"""Random generators (torch.Generator) and the draws every random function makes from them.

A generator is a Threefry-2x32 key, a ``u32[2]`` tensor advanced in place by each draw
(ir/ops/random.py), so `tg.compile` lifts it like any other state: compiled and eager
runs with the same seed draw the same numbers.  The default generator (torch's
``default_generator``, what `tg.manual_seed` seeds) is one such key; a `Generator` object
passed as ``generator=`` draws from its own key instead.

Not torch's Philox/MT19937 stream: the same seed gives other numbers than torch, and a
state (`get_state`) is the ``u32[2]`` key, not torch's 5,056-byte ``uint8`` tensor.
"""
from __future__ import annotations

import os

import numpy as np

from . import _ops, _state
from ._device import check_device
from ._device import device as _device
from .dispatch.grad_mode import no_grad
from .tensor import Tensor

_TORCH_DEFAULT_SEED = 67280421310721   # torch's seed of a new torch.Generator()
_GLOBAL_DEFAULT_SEED = 0x5EED          # tracegrad's default key [0, 0x5EED] before any seeding


def _check_seed(seed) -> int:
    """`seed` as the unsigned 64-bit value torch keeps (negative ones wrap, as torch)."""
    try:
        seed = int(seed)   # as torch: a float truncates, a string of digits parses
    except (TypeError, ValueError) as e:   # torch 2.13 says only "invalid literal for int() ..."
        raise type(e)(f"manual_seed: the seed must be an integer, got {type(seed).__name__} "
                      f"{seed!r} ({e})") from None
    if not -2 ** 63 <= seed < 2 ** 64:   # torch 2.13's words for a seed out of int64/uint64
        raise ValueError("Overflow when unpacking long long")
    return seed & 0xFFFFFFFFFFFFFFFF


def _key_of(seed: int) -> np.ndarray:
    return np.array([seed >> 32, seed & 0xFFFFFFFF], dtype=np.uint32)


class Generator:
    """A random-number generator object (torch.Generator): pass it as ``generator=`` to
    rand, randn, randint, randperm, normal, bernoulli, multinomial, the in-place fills,
    samplers and DataLoader to draw from its own stream.

    Args:
        device: "cpu" (or a `tg.device`); tracegrad generators live on the CPU.
    Raises:
        NotImplementedError: a device other than "cpu".
    """

    def __init__(self, device="cpu"):
        check_device("Generator", device)
        self._initial = _TORCH_DEFAULT_SEED
        self._key = Tensor(_key_of(_TORCH_DEFAULT_SEED))

    @property
    def device(self):
        return _device("cpu")

    @_state.located
    def manual_seed(self, seed) -> "Generator":
        """Reseed (torch.Generator.manual_seed); returns the generator.

        Raises:
            ValueError: a seed outside [-2**63, 2**64) (torch's message).
        """
        seed = _check_seed(seed)
        self._initial = seed
        with no_grad():
            self._key.copy_(Tensor(_key_of(seed)))
        return self

    def seed(self) -> int:
        """Reseed from the OS's entropy (torch.Generator.seed); returns the new seed."""
        seed = int.from_bytes(os.urandom(8), "little") & 0x7FFFFFFFFFFFFFFF
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed last set (torch.Generator.initial_seed); 67280421310721 for a new one."""
        return self._initial

    def get_state(self) -> Tensor:
        """The current key as a new ``uint32`` tensor of shape (2,) (torch.Generator.get_state;
        torch's state is a ``uint8`` tensor of its own generator)."""
        return Tensor(self._key._data.copy())

    def set_state(self, new_state: Tensor) -> "Generator":
        """Restore a state `get_state` returned (torch.Generator.set_state); returns self.

        Raises:
            TypeError: `new_state` is not a ``uint32`` tensor of shape (2,).
        """
        if not isinstance(new_state, Tensor) or new_state.shape != (2,) or \
                new_state._data.dtype != np.uint32:
            what = new_state._type if isinstance(new_state, Tensor) else type(new_state).__name__
            raise TypeError(f"set_state: RNG state must be the uint32[2] tensor get_state "
                            f"returns, got {what}")
        with no_grad():
            self._key.copy_(new_state)
        return self

    def __repr__(self) -> str:
        return "<tracegrad.Generator object (cpu)>"


default_generator = Generator()
default_generator._initial = _GLOBAL_DEFAULT_SEED
default_generator._key = Tensor(_key_of(_GLOBAL_DEFAULT_SEED))


def generator_of(name: str, generator) -> Generator:
    """`generator`, or the default generator for None.

    Raises:
        TypeError: anything else (torch's ``invalid combination of arguments``, shortened).
    """
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"{name}(): argument 'generator' must be torch.Generator, not "
                        f"{type(generator).__name__}")
    return generator


def draw(size, dtype, distribution: str, generator: Generator | None = None) -> Tensor:
    """`size` values ("uniform" in [0, 1) or "normal") of floating `dtype` from `generator`'s
    stream (the default one for None); advances its key in place (traced under tg.compile)."""
    key = (generator or default_generator)._key
    with no_grad():
        out = _ops.random(key, tuple(size), dtype, distribution)
        key.copy_(_ops.rng_next_key(key))
    return out


@_state.located
def manual_seed(seed) -> Generator:
    """Seed the default generator behind rand/randn/randint/dropout (torch.manual_seed);
    returns it, as torch.

    The stream is Threefry-2x32, identical on the interpreter and on jax, but
    not torch's Philox/MT19937 stream: the same seed gives other numbers than torch.
    """
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from the OS's entropy (torch.seed); returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's last seed (torch.initial_seed); 24301 (0x5EED) before any."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The generator's state as a new uint32 tensor of shape (2,) (torch.get_rng_state; torch's
    is a uint8 byte tensor of its own generator). Save it with `tg.save` to resume a stream."""
    return Tensor(default_generator._key._data.copy())


def set_rng_state(new_state: Tensor) -> None:
    """Restore a state `get_rng_state` returned (torch.set_rng_state).

    Raises:
        TypeError: `new_state` is not a uint32 tensor of shape (2,).
    """
    if not isinstance(new_state, Tensor) or new_state.shape != (2,) or \
            new_state._data.dtype != np.uint32:
        what = new_state._type if isinstance(new_state, Tensor) else type(new_state).__name__
        raise TypeError(f"set_rng_state: expected the uint32[2] tensor get_rng_state returns, "
                        f"got {what}")
    with no_grad():
        default_generator._key.copy_(new_state)
