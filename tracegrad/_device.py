"""Devices: `tg.device` and the one check of every ``device=`` argument.

tracegrad tensors live on the host: eager values are NumPy arrays, and compiled programs
run through jax on the CPU and hand their results back as host arrays.  So "cpu" is the
only device a tensor can be on; the other torch device names parse (``tg.device("cuda")``
is a valid object, as in torch) but using one for a tensor raises NotImplementedError.
"""
from __future__ import annotations

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


def check_device(name: str, dev) -> None:
    """Accept `dev` as a tensor's device if it is None, "cpu", "cpu:N" or a cpu `device`:
    the one check behind every ``device=`` argument and ``to(device)``.

    Raises:
        NotImplementedError: any other device (tracegrad tensors live on the CPU), naming
            the call `name`.
        RuntimeError / TypeError: `dev` is not a device name at all (from `device`).
    """
    if dev is None or dev is CPU or (type(dev) is str and dev == "cpu"):   # no object built
        return
    if not isinstance(dev, device):
        try:
            dev = device(dev)
        except (RuntimeError, TypeError, NotImplementedError) as e:
            raise type(e)(f"{name}: {e}") from None
    if dev.type != "cpu":
        raise NotImplementedError(f"{name}: device {str(dev)!r} is not supported yet; "
                                  "tracegrad tensors live on the CPU")


def is_device_name(a) -> bool:
    """True for a `device` or a string naming one (``to("cuda:0")``), so `parse_to_args` can
    tell a positional device from a dtype."""
    return isinstance(a, device) or (isinstance(a, str) and a.partition(":")[0] in DEVICE_TYPES)
