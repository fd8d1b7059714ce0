"""Device-resident tensor storage: a tensor on a jax device holds a `jax.Array` (issue 17).

A tensor's ``_data`` is a NumPy array on the host, or, after ``x.to("xla")``,
``tg.zeros(..., device="cuda")`` or ``model.to(device)``, a committed `jax.Array` on that
device.  Devices map onto jax's (`jax_device`): ``"xla"`` / ``"xla:N"`` is jax's default
backend (the CPU here, the GPU or TPU where jax has one, as torch_xla's device is), and
``"cuda"`` / ``"cuda:N"`` is jax's "gpu" backend, which must be present.

What runs where:

- **Compiled steps** (`tg.compile`) take device arrays as they are and their outputs stay
  on the device: parameters, ``.grad`` and optimizer state go into the program and come
  back without a host copy, and the buffers a step overwrites are donated to XLA, so it
  updates them in place (compiler/entry.py).  A NumPy input cannot be donated without a
  copy, which is why host tensors are not donated on the CPU.
- **Eager ops** with a device operand run the op's jax kernel, jitted per op, attributes
  and argument types (`run_op`); their results are on the device.  An op whose jax kernel
  cannot run on its own (a value-dependent shape) runs its NumPy kernel on host copies and
  puts the results back.  Operands must share one device, except 0-dim host tensors (a
  Python scalar, a learning rate), as torch allows.
- **Backward programs** of a tape with device values run on jax (the interpreter is a
  NumPy executor) and give device gradients.

NumPy is materialised only where a host value is asked for: ``.item()``, ``.tolist()``,
printing, ``np.asarray(t)``, ``.cpu()``.  ``.numpy()`` of a device tensor raises, as torch's
does for a CUDA tensor.

`LIVE` stays False until the first device array is made, so a process that never uses a
device pays one list read per eager op for all of this.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from tracegrad.ir.errors import with_location
from tracegrad.ir.jax_caches import programs_evicted

from .. import _state
from .jax_backend import HOST_CHECK_OPS

LIVE = [False]          # has this process made a device array (read on the eager hot path)
ARRAY_TYPES: set = set()   # the concrete jax array type(s), known once one was made
# ops run on host copies: their jax kernels check values on the host (`host_check`, which
# only a whole lowered program collects), or failed to trace alone (value-dependent shapes)
_HOST_ONLY: set = set(HOST_CHECK_OPS)
# (jax kernel, attributes, argument types) -> jitted kernel, least recently used first; one
# jitted function per signature, so a drop frees what jax holds for it (ir/jax_caches.py)
_KERNELS: OrderedDict = OrderedDict()
KERNELS_MAX = 512


def _jax():
    import jax  # jax loads on first use (start-up time)
    return jax


def is_device_array(a) -> bool:
    return type(a) in ARRAY_TYPES


def first_device_array(arrays):
    """The first device array in `arrays`, or None (cheap when none was ever made)."""
    if LIVE[0]:
        for a in arrays:
            if type(a) in ARRAY_TYPES:
                return a
    return None


def jax_device(dev):
    """The `jax.Device` of a tracegrad `device` that is not the host ("xla", "cuda").

    Raises:
        RuntimeError: "cuda" without a jax GPU backend, or an index past the devices.
    """
    jax = _jax()
    if dev.type == "cuda":
        try:
            devices = jax.devices("gpu")
        except RuntimeError:
            raise RuntimeError(f"device {str(dev)!r}: no CUDA GPU is available to jax "
                               f"(platforms present: {jax.default_backend()}); use "
                               "device='xla' for jax's default device") from None
    else:
        devices = jax.devices()
    index = dev.index or 0
    if index >= len(devices):
        raise RuntimeError(f"device {str(dev)!r}: jax has {len(devices)} such device(s)")
    return devices[index]


def gpu_count() -> int:
    """How many GPUs jax has (0 where its "gpu" backend is absent)."""
    try:
        return len(_jax().devices("gpu"))
    except RuntimeError:
        return 0


def torch_name(a) -> str:
    """torch's name of a device array's device: "cuda:N" on a GPU, else "xla:N"."""
    return torch_name_of(a.device)


def torch_name_of(jdev) -> str:
    """torch's name of a `jax.Device`."""
    return f"{'cuda' if jdev.platform == 'gpu' else 'xla'}:{jdev.id}"


def put(a, jdev):
    """`a` (a NumPy array, a scalar or a device array) as a committed array on `jdev`; dtypes
    are kept (float64 stays float64: jax's x64 mode is on around the transfer)."""
    jax = _jax()
    with jax.enable_x64(True):
        out = jax.device_put(a if type(a) in ARRAY_TYPES else np.asarray(a), jdev)
    if not LIVE[0]:
        ARRAY_TYPES.add(type(out))
        LIVE[0] = True
    return out


def host(a):
    """`a` as a NumPy array: a device array is copied to the host (on the CPU backend a
    read-only view of its buffer); anything else is returned as it is."""
    return np.asarray(a) if type(a) in ARRAY_TYPES else a


def placed_like(a, like):
    """Host array `a` on the device of `like` when `like` is a device array (the result of
    a value-dependent op computed on the host: nonzero, masked_select's index)."""
    return put(a, like.device) if type(like) in ARRAY_TYPES else a


def astype(a, dtype):
    """`a` cast to the NumPy dtype `dtype` (a device array keeps float64 / int64 here)."""
    if type(a) not in ARRAY_TYPES:
        return a.astype(dtype)
    with _jax().enable_x64(True):
        return a.astype(dtype)


def copy(a):
    """A device array with a buffer of its own (to donate while `a` stays readable)."""
    jax = _jax()
    with jax.enable_x64(True):
        return jax.numpy.array(a, copy=True)


def _same_device(op, operands, arrays):
    dev = None
    for t, a in zip(operands, arrays):
        if type(a) in ARRAY_TYPES:
            d = a.device
            if dev is None:
                dev = d
            elif d != dev:
                _mixed(op, torch_name(a), torch_name_of(dev))
    return dev


def _mixed(op, a: str, b: str):
    raise with_location(RuntimeError(
        f"{op.name}: Expected all tensors to be on the same device, but found at least two "
        f"devices, {a} and {b}! (move them with .to(device))"),
        _state.user_location())


def run_op(op, operands, arrays: tuple, attrs: dict, host_kernel) -> tuple:
    """`op` on `arrays`, some of them device arrays: its jax kernel jitted (results on the
    device), or `host_kernel` on host copies with the results put back on the device when
    the jax kernel cannot run alone (`host_kernel` returns a list of arrays).  Returns the
    output arrays as a tuple."""
    dev = _same_device(op, operands, arrays)
    jax = _jax()
    if op.name not in _HOST_ONLY:
        try:
            key = (op.name, tuple(attrs.items()), tuple((a.shape, a.dtype) for a in arrays))
            fn = _KERNELS.get(key)
        except TypeError:   # an unhashable attribute: no cache key, run it on the host
            fn, key = None, None
        if key is not None:
            if fn is None:
                fn = _jitted(op, attrs, key)
            else:
                _KERNELS.move_to_end(key)
            try:
                with jax.enable_x64(True):
                    out = fn(*arrays)
                return out if isinstance(out, tuple) else (out,)
            except Exception as e:   # noqa: BLE001  (the host kernel runs it instead, and
                _KERNELS.pop(key, None)   # raises its own error if the input is bad)
                if isinstance(e, _tracer_errors()):   # value-dependent: always on the host
                    _HOST_ONLY.add(op.name)
    return tuple(put(o, dev) for o in host_kernel(*map(host, arrays)))


def _tracer_errors() -> tuple:
    errors = _jax().errors
    return (errors.ConcretizationTypeError, errors.TracerArrayConversionError,
            errors.TracerBoolConversionError, errors.TracerIntegerConversionError,
            errors.NonConcreteBooleanIndexError)


def _jitted(op, attrs: dict, key):
    jax = _jax()
    kernel = op.kernel_for("jax")
    fn = _KERNELS[key] = jax.jit(lambda *a: kernel(jax.numpy, *a, **attrs))
    if len(_KERNELS) > KERNELS_MAX:
        _KERNELS.popitem(last=False)
        programs_evicted()
    return fn
