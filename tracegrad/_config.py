"""Process-wide settings with torch's names: the default float dtype, the thread count,
print options and the warn-always flag (torch.set_default_dtype, set_num_threads,
set_printoptions, set_warn_always and their getters)."""
from __future__ import annotations

import os

from tracegrad.ir import builder as _builder
from tracegrad.ir import types as T

# ---- default dtype ------------------------------------------------------------------


def get_default_dtype() -> T.DType:
    """The dtype of Python floats and float factory functions (torch.get_default_dtype)."""
    return T.DEFAULT_FLOAT


def set_default_dtype(d) -> None:
    """Make `d` the dtype of Python floats, ``tg.tensor([1.0])``, ``tg.ones(...)``,
    ``tg.Tensor(...)`` ... (torch.set_default_dtype; the complex default follows it).

    Raises:
        TypeError: `d` is not a floating dtype (torch's message).
    """
    dt = T.as_dtype(d)
    if not dt.is_floating_point or dt not in (T.float16, T.bfloat16, T.float32, T.float64):
        raise TypeError("only floating-point types are supported as the default type")
    if dt is not T.DEFAULT_FLOAT:
        T.DEFAULT_FLOAT = dt
        _builder._PLANS.clear()   # cached plans promoted Python scalars to the old default


# ---- threads ------------------------------------------------------------------------
_THREADS = [os.cpu_count() or 1]


def get_num_threads() -> int:
    """The number set by `set_num_threads` (default: the CPU count; torch.get_num_threads).

    NumPy's and XLA's thread pools are sized when they start, so the number is recorded
    for scripts that read it back, not applied to running pools (set OMP_NUM_THREADS /
    XLA_FLAGS before start-up for that)."""
    return _THREADS[0]


def set_num_threads(n: int) -> None:
    """torch.set_num_threads (see `get_num_threads` for what it changes).

    Raises:
        RuntimeError: `n` is not a positive integer (torch's message).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _THREADS[0] = n


def get_num_interop_threads() -> int:
    return _THREADS[0]


def set_num_interop_threads(n: int) -> None:
    set_num_threads(n)


# ---- warn always --------------------------------------------------------------------
_WARN_ALWAYS = [False]


def set_warn_always(b: bool) -> None:
    """torch.set_warn_always: warnings torch gives once per process are given every time."""
    _WARN_ALWAYS[0] = bool(b)


def is_warn_always_enabled() -> bool:
    """torch.is_warn_always_enabled."""
    return _WARN_ALWAYS[0]


# ---- print options ------------------------------------------------------------------
_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=float("inf"), edgeitems=3, linewidth=80)}
PRINT = dict(_PROFILES["default"], sci_mode=None)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    """torch.set_printoptions: digits after the point, the element count above which a tensor
    prints summarized (`edgeitems` per end), the line width, a `profile` ("default",
    "short", "full") and `sci_mode` (True / False / None: automatic).

    Raises:
        ValueError: an unknown profile.
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: unknown profile {profile!r}; known: "
                             f"{sorted(_PROFILES)}")
        PRINT.update(_PROFILES[profile])
    for key, value in (("precision", precision), ("threshold", threshold),
                       ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            PRINT[key] = value
    PRINT["sci_mode"] = sci_mode


def get_printoptions() -> dict:
    """The current print options (torch._tensor_str.get_printoptions)."""
    return dict(PRINT)
