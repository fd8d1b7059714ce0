"""Devices: `tg.device` and the one check of every ``device=`` argument.

A tensor lives on the host (its value a NumPy array) or on a jax device: "xla" (jax's
default backend, the CPU here) or "cuda" (jax's GPU backend, where present), whose tensors
hold `jax.Array`s (backends/device_arrays.py).  The other torch device names parse
(``tg.device("mps")`` is a valid object, as in torch) but using one for a tensor raises
NotImplementedError.
"""
from __future__ import annotations

import functools

import numpy as np

from .backends.device_arrays import ARRAY_TYPES, host, jax_device, put

# the device types torch.device parses (torch/csrc: c10::DeviceType names)
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")


builtin_type = type   # `device.__init__` names its first argument `type`, as torch


class device:  # noqa: N801  (torch.device)
    """A device name: ``device("cpu")``, ``device("cpu:0")``, ``device("cpu", 0)`` or a copy
    of another device (torch.device).

    Attributes:
        type: the device type, e.g. "cpu".
        index: the device ordinal, or None when not given.
    Equality and hashing follow torch: two devices are equal when type and index are;
    a device never equals a string (``device("cpu") != "cpu"``, as in torch).

    Raises:
        RuntimeError: an unknown type or malformed string ("foo", "cpu:x", "cuda:-1").
        TypeError: arguments that are not a string / device plus an optional int index.
        NotImplementedError: a bare int (torch reads it as an accelerator ordinal).
    """

    __slots__ = ("type", "index")

    def __init__(self, type, index: int | None = None):  # noqa: A002  (torch's name)
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): an index cannot be given with a device object")
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            raise NotImplementedError(f"device({type}): an integer names an accelerator "
                                      "ordinal; tracegrad tensors live on the CPU")
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a string or a device, got "
                            f"{builtin_type(type).__name__}")
        name, sep, ordinal = type.partition(":")
        if name not in DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at "
                               f"start of device string: {type}")
        if sep:
            if index is not None or not ordinal.isdigit():   # isdigit: no sign, no space
                raise RuntimeError(f"Invalid device string: {type!r}")
            index = int(ordinal)
        elif index is not None:
            if not isinstance(index, int) or isinstance(index, bool):
                raise TypeError(f"device(): argument 'index' must be int, not "
                                f"{builtin_type(index).__name__}")
            if index < 0:
                raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type, self.index = name, index

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type={self.type!r})"
        return f"device(type={self.type!r}, index={self.index})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):   # pickles (tg.save of a dict holding a device)
        return (device, (self.type, self.index))


CPU = device("cpu")
JAX_DEVICE_TYPES = ("xla", "cuda")   # device types whose tensors hold jax arrays


def check_device(name: str, dev):
    """The jax device a ``device=`` argument or ``to(device)`` names, or None for the host:
    the one check behind every device argument.

    None, "cpu", "cpu:N" and cpu `device`s are the host (NumPy storage).  "xla" / "xla:N"
    is jax's default backend and "cuda" / "cuda:N" its GPU backend; tensors there hold
    `jax.Array`s (backends/device_arrays.py).

    Raises:
        NotImplementedError: any other device type, or "cuda" where jax has no GPU (a
            RuntimeError too, as torch's "No CUDA GPUs are available"), naming the call `name`.
        RuntimeError / TypeError: `dev` is not a device name at all (from `device`).
    """
    if dev is None or dev is CPU or (type(dev) is str and dev == "cpu"):   # no object built
        return None
    if not isinstance(dev, device):
        try:
            dev = device(dev)
        except (RuntimeError, TypeError, NotImplementedError) as e:
            raise type(e)(f"{name}: {e}") from None
    if dev.type == "cpu":
        return None
    if dev.type in JAX_DEVICE_TYPES:
        try:
            return jax_device(dev)
        except RuntimeError as e:
            raise NotImplementedError(f"{name}: {e}") from None
    raise NotImplementedError(f"{name}: device {str(dev)!r} is not supported yet; tracegrad "
                              "tensors live on the CPU or on a jax device ('xla', 'cuda')")


def check_host(name: str, dev) -> None:
    """`check_device` for the calls that make host tensors only (legacy typed constructors):
    any device but the CPU raises NotImplementedError naming `name`."""
    if check_device(name, dev) is not None:
        raise NotImplementedError(f"{name}: only device='cpu' is supported here; make the "
                                  "tensor on the CPU and move it with .to(device)")


def is_device_name(a) -> bool:
    """True for a `device` or a string naming one (``to("cuda:0")``), so `parse_to_args` can
    tell a positional device from a dtype."""
    return isinstance(a, device) or (isinstance(a, str) and a.partition(":")[0] in DEVICE_TYPES)


def creates_on_device(fn):
    """Decorator of a creation function taking ``device=``: the host tensor it makes is put
    on that device (its storage a jax array, backends/device_arrays.py).  A ``*_like`` form
    (its first argument a tensor) defaults to that tensor's device, as torch's.  The
    function itself checks the argument (`check_device`, raising with its name)."""
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        dev = kwargs.get("device")
        if dev is None and args and type(getattr(args[0], "_data", None)) in ARRAY_TYPES:
            target = args[0]._data.device   # zeros_like(x) of a device tensor x
        else:
            target = check_device(name, dev)   # None for the host: nothing to move
        if target is not None and type(out._data) is np.ndarray:   # not while tracing
            out._data = put(out._data, target)
        return out
    return wrapper


def placed(a, target):
    """Array `a` on `target`, `CPU` (a NumPy array) or a `jax.Device`: `a` itself when it
    is there already.  The one move of a storage between devices (`Tensor.to`,
    `Module.to`, the gradient of a device copy)."""
    if is_on(a, target):
        return a
    return host(a) if target is CPU else put(a, target)


def is_on(a, target) -> bool:
    """Is array `a` on `target` (`CPU` or a `jax.Device`)?"""
    if type(a) in ARRAY_TYPES:
        return target is not CPU and a.device == target
    return target is CPU
