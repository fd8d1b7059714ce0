"""Automatic mixed precision: `tg.autocast` (torch.autocast); `tg.amp.GradScaler` is in
tracegrad/grad_scaler.py.

    with tg.autocast("cpu", dtype=tg.bfloat16):
        loss = F.cross_entropy(model(x), y)   # linear in bfloat16, the loss in float32
    loss.backward()                          # float32 .grad for the float32 weights

Inside the region an op whose declaration gives it an autocast class for the
device type (``defop(..., autocast={"cpu": ..., "cuda": ...})``, `OpDef.autocast`)
casts its floating-point tensor arguments before running:

- ``lower``: matmul-like ops (linear, matmul, conv, bmm, einsum ...) run in
  the autocast dtype (bfloat16 or float16);
- ``fp32``: ops that lose too much in low precision (losses, ``prod``,
  matrix inverses; on "cuda"/"gpu" also softmax, layer_norm, sum, exp, log ...)
  run in float32;
- ``promote``: ops that need one dtype (cat, stack, addcmul ...) run in the
  widest floating dtype of their arguments.

float64 arguments are never cast, as in torch.  The declared classes are
torch 2.13's CPU and CUDA autocast lists restricted to the ops tracegrad has
(the CPU one checked op by op against torch).  A cast is an ordinary recorded `convert`
op: eagerly it is on the tape, inside `tg.compile` it is a node of the
program, and its VJP casts the gradient back, so float32 master weights get
float32 ``.grad``.  Autocast applies to the op the user calls: a composite op
(``mv`` and ``avg_pool2d`` are built on the matmul and convolution
primitives here, but are kernels of their own in torch) runs its
decomposition with autocast off, as torch runs an autocast-wrapped op.
Backward programs never autocast (their dtypes are fixed when they are built),
so call ``backward()`` inside the region or after it.  torch caches the cast
of each weight within a region; here each use emits its own cast (XLA merges
the duplicates in compiled steps).

``device_type`` chooses the class ("cpu", or "cuda"/"gpu", which share one);
it does not move data: eager tensors are NumPy arrays and compiled programs
run on jax's default device.
"""
from __future__ import annotations

import functools
import threading
import warnings

from tracegrad.ir import types as T
from tracegrad.ir.registry import AUTOCAST_FP32, AUTOCAST_LOWER, CompositeDef

from .dispatch.frontend import TensorFrontend
from .dispatch.hooks import register
from .grad_scaler import GradScaler  # noqa: F401  (tg.amp.GradScaler, as torch.amp)

# device types -> the `OpDef.autocast` key whose classes apply ("gpu" is torch's CUDA list)
_CLASS_KEY = {"cpu": "cpu", "cuda": "cuda", "gpu": "cuda"}
_DEFAULT_DTYPE = {"cpu": T.bfloat16, "cuda": T.float16, "gpu": T.float16}


class _Local(threading.local):
    def __init__(self):
        self.region = None   # the innermost enabled autocast on this thread, or None


_local = _Local()
_lock = threading.Lock()
_active = [0]                # enabled regions on all threads: the dispatcher's cheap check


def _set_region(region) -> None:
    """Make `region` (or None) current on this thread; keep the global flag in step."""
    before = _local.region is not None
    _local.region = region
    after = region is not None
    if before != after:
        with _lock:
            _active[0] += 1 if after else -1
            TensorFrontend.autocast_active = _active[0] > 0


class autocast:
    """Run ops in mixed precision inside the region (context manager or decorator).

    Args:
        device_type: "cpu", "cuda" or "gpu": which of the ops' declared autocast classes
            apply (see the module docstring); "cuda" and "gpu" share torch's CUDA list.
        dtype: the low-precision dtype, `tg.bfloat16` or `tg.float16`; default
            bfloat16 for "cpu", float16 for "cuda"/"gpu".
        enabled: False turns autocast off inside the region (also inside an enabled one).
        cache_enabled: accepted for torch compatibility; there is no cast cache.
    Raises:
        ValueError: an unknown ``device_type``.
    Warns:
        UserWarning: a ``dtype`` other than bfloat16/float16; autocast is then disabled,
            as torch does.
    Follows ``torch.autocast``.
    """

    def __init__(self, device_type: str = "cpu", dtype: T.DType | None = None,
                 enabled: bool = True, cache_enabled: bool | None = None):
        if device_type not in _CLASS_KEY:
            raise ValueError(f"tg.autocast: device_type must be one of {sorted(_CLASS_KEY)}, "
                             f"got {device_type!r}")
        if dtype is None:
            dtype = _DEFAULT_DTYPE[device_type]
        if enabled and dtype not in (T.bfloat16, T.float16):
            warnings.warn(f"tg.autocast: dtype {dtype} is not supported (bfloat16 or float16); "
                          "disabling autocast", UserWarning, stacklevel=2)
            enabled = False
        self.device_type = device_type
        self.fast_dtype = dtype
        self.enabled = bool(enabled)
        self.table_name = _CLASS_KEY[device_type]   # the key of `OpDef.autocast`
        self._saved = []

    def __enter__(self):
        self._saved.append(_local.region)
        _set_region(self if self.enabled else None)
        return self

    def __exit__(self, *exc):
        _set_region(self._saved.pop())
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self.enabled):
                return fn(*args, **kwargs)
        return wrapper


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an enabled `autocast` region (for `device_type`, if given) is current."""
    region = _local.region
    return region is not None and (device_type is None or region.device_type == device_type
                                   or {device_type, region.device_type} <= {"cuda", "gpu"})


def state_key() -> tuple | None:
    """(table, dtype) of the current region, or None: part of `tg.compile`'s cache key."""
    region = _local.region
    return None if region is None else (region.table_name, region.fast_dtype.name)


def get_autocast_dtype(device_type: str = "cpu") -> T.DType:
    """The low-precision dtype of the current region, else the device type's default."""
    region = _local.region
    if region is not None and is_autocast_enabled(device_type):
        return region.fast_dtype
    return _DEFAULT_DTYPE[device_type]


def call(frontend, op, args: tuple, kwargs: dict):
    """`frontend.call(op.name, ...)` under the current region: None for a primitive op
    without an autocast class for the region's device type (the caller goes on as usual),
    else its result with the arguments cast as the class says and autocast off for the op's
    own decomposition."""
    region = _local.region
    if region is None:       # off on this thread, or inside a decomposition
        return None
    rule = op.autocast.get(region.table_name)
    if rule is None:
        if not isinstance(op, CompositeDef):   # a primitive without a class: as usual
            return None
        target = None
    elif rule == AUTOCAST_LOWER:
        target = region.fast_dtype
    elif rule == AUTOCAST_FP32:
        target = T.float32
    else:
        target = _widest(frontend, args, kwargs)
    if target is not None:
        cast = functools.partial(_cast, frontend, target)
        args = tuple(_map(cast, a) for a in args)
        kwargs = {k: _map(cast, v) for k, v in kwargs.items()}
    _local.region = None     # off for the decomposition (the global flag stays: cheap)
    try:
        return frontend.call(op.name, *args, **kwargs)
    finally:
        _local.region = region


def _eligible(frontend, x) -> bool:
    # torch casts floating tensors other than float64
    if not frontend.is_operand(x):
        return False
    dt = frontend.type_of(x).dtype
    return dt.is_floating_point and dt is not T.float64


def _cast(frontend, target, x):
    if _eligible(frontend, x) and frontend.type_of(x).dtype is not target:
        return frontend.call("convert", x, target)
    return x


def _map(fn, x):
    if isinstance(x, (list, tuple)):
        return type(x)(fn(i) for i in x)
    return fn(x)


def _widest(frontend, args, kwargs):
    """float32 when the eligible arguments mix dtypes (any two of float32, float16 and
    bfloat16 promote to float32), else None (nothing to cast)."""
    dtypes = {frontend.type_of(x).dtype for a in (*args, *kwargs.values())
              for x in (a if isinstance(a, (list, tuple)) else (a,)) if _eligible(frontend, x)}
    return T.float32 if len(dtypes) > 1 else None


register("autocast", call)   # the dispatcher's entry point calls it inside a region
