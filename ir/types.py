"""Dtypes and tensor types of the IR, with PyTorch's type-promotion rules.

A `DType` is the one dtype object used everywhere: `tg.float32 is
tracegrad.ir.types.float32`.  A `TensorType` is a static shape plus a dtype;
every IR value has one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

try:  # ml_dtypes ships with jaxlib; bfloat16 is optional for NumPy-only use
    from ml_dtypes import bfloat16 as _np_bfloat16
except ImportError:  # pragma: no cover - jax always brings ml_dtypes
    _np_bfloat16 = None

BOOL, INT, FLOAT, COMPLEX = 0, 1, 2, 3  # promotion categories, lowest first


@dataclass(frozen=True, eq=False)
class DType:
    """A tensor element type.

    Attributes:
        name: torch name, e.g. ``"float32"``.
        short: IR text name, e.g. ``"f32"``.
        itemsize: bytes per element.
        category: ``BOOL``, ``INT``, ``FLOAT`` or ``COMPLEX`` (torch's promotion categories).
        is_floating_point: a real floating dtype (False for complex, as torch).
        is_complex: complex64 / complex128.
        is_differentiable: floating or complex: a tensor of this dtype can require grad.
    """

    name: str
    short: str
    itemsize: int
    category: int
    np_name: str
    # plain attributes, not properties: read on the per-op hot path
    is_floating_point: bool = field(init=False)
    is_complex: bool = field(init=False)
    is_differentiable: bool = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "is_floating_point", self.category == FLOAT)
        object.__setattr__(self, "is_complex", self.category == COMPLEX)
        object.__setattr__(self, "is_differentiable", self.category >= FLOAT)

    @property
    def numpy(self) -> np.dtype:
        if self.np_name == "bfloat16":
            if _np_bfloat16 is None:
                raise TypeError("bfloat16 needs the ml_dtypes package (installed with jax)")
            return np.dtype(_np_bfloat16)
        return np.dtype(self.np_name)

    def to_complex(self) -> "DType":
        """The complex dtype holding this real dtype's values (torch's toComplexType).

        Raises:
            TypeError: float16 (torch's complex32 has no tracegrad counterpart).
        """
        if self.category == COMPLEX:
            return self
        if self is float64:
            return complex128
        if self is float16:
            raise TypeError("complex32 (the complex counterpart of float16) is not supported; "
                            "convert to float32 or float64 first")
        return complex64

    def to_real(self) -> "DType":
        """The real dtype of a complex dtype's parts (torch's toRealValueType); self if real."""
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def __repr__(self) -> str:
        return f"tracegrad.{self.name}"

    def __reduce__(self):  # pickle / deepcopy keep identity
        return (from_name, (self.name,))


bool_ = DType("bool", "b1", 1, BOOL, "bool")
uint8 = DType("uint8", "u8", 1, INT, "uint8")
uint32 = DType("uint32", "u32", 4, INT, "uint32")   # PRNG keys (no torch counterpart in use)
int8 = DType("int8", "i8", 1, INT, "int8")
int16 = DType("int16", "i16", 2, INT, "int16")
int32 = DType("int32", "i32", 4, INT, "int32")
int64 = DType("int64", "i64", 8, INT, "int64")
float16 = DType("float16", "f16", 2, FLOAT, "float16")
bfloat16 = DType("bfloat16", "bf16", 2, FLOAT, "bfloat16")
float32 = DType("float32", "f32", 4, FLOAT, "float32")
float64 = DType("float64", "f64", 8, FLOAT, "float64")
complex64 = DType("complex64", "c64", 8, COMPLEX, "complex64")
complex128 = DType("complex128", "c128", 16, COMPLEX, "complex128")

ALL_DTYPES = (bool_, uint8, uint32, int8, int16, int32, int64, float16, bfloat16, float32, float64,
              complex64, complex128)
_BY_NAME = ({d.name: d for d in ALL_DTYPES} | {d.short: d for d in ALL_DTYPES}
            | {"cfloat": complex64, "cdouble": complex128})   # torch's aliases
_BY_NUMPY = {d.np_name: d for d in ALL_DTYPES}

DEFAULT_FLOAT = float32  # torch.get_default_dtype()
DEFAULT_INT = int64


def from_name(name: str) -> DType:
    """The dtype named ``name`` (torch name like "float32" or IR name like "f32")."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise TypeError(f"unknown dtype {name!r}; known: {sorted(d.name for d in ALL_DTYPES)}") from None


_BY_NP_DTYPE: dict = {}  # np.dtype -> DType; np.dtype.name is slow on the per-op hot path


def from_numpy(dt) -> DType:
    """The dtype of a NumPy dtype (or anything `np.dtype` accepts)."""
    hit = _BY_NP_DTYPE.get(dt)
    if hit is not None:
        return hit
    key = np.dtype(dt).name
    if key in _BY_NUMPY:
        _BY_NP_DTYPE[np.dtype(dt)] = _BY_NUMPY[key]
    try:
        return _BY_NUMPY[key]
    except KeyError:
        raise TypeError(f"NumPy dtype {key} has no tracegrad equivalent; "
                        f"supported: {sorted(_BY_NUMPY)}") from None


def as_dtype(dt) -> DType:
    """Accept a DType, a torch/IR name, a NumPy dtype or a Python type."""
    if isinstance(dt, DType):
        return dt
    if dt is float:
        return DEFAULT_FLOAT
    if dt is int:
        return DEFAULT_INT
    if dt is bool:
        return bool_
    if dt is complex:
        return DEFAULT_FLOAT.to_complex()   # torch.get_default_dtype's complex counterpart
    if isinstance(dt, str):
        return from_name(dt)   # "unknown dtype 'foo'; known: [...]", not NumPy's message
    return from_numpy(dt)


def promote_types(a: DType, b: DType) -> DType:
    """torch.promote_types for the dtypes tracegrad supports."""
    if a is b:
        return a
    if a.category != b.category:
        if COMPLEX in (a.category, b.category):   # complex64 with float64 -> complex128
            c, r = (a, b) if a.category == COMPLEX else (b, a)
            return complex128 if complex128 in (c, r) or r is float64 else c
        return a if a.category > b.category else b
    if a.category in (FLOAT, COMPLEX):
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize >= b.itemsize else b
    if a.category == INT:
        if {a, b} == {uint8, int8}:
            return int16
        if uint8 in (a, b):
            return b if a is uint8 else a
        return a if a.itemsize >= b.itemsize else b
    return a


def scalar_category(x) -> int:
    if isinstance(x, (bool, np.bool_)):
        return BOOL
    if isinstance(x, (int, np.integer)):
        return INT
    if isinstance(x, (float, np.floating)):
        return FLOAT
    if isinstance(x, (complex, np.complexfloating)):
        return COMPLEX
    raise TypeError(f"expected a Python number, got {type(x).__name__}")


def _combine(higher: DType | None, lower: DType) -> DType:
    """A lower tier's dtype joining the result so far (torch's combine_categories).

    The lower tier only counts when its category is higher; a complex lower tier
    keeps a floating result's precision (float64 dims + a complex64 0-d -> complex128).
    """
    if higher is None:
        return lower
    if lower.category <= higher.category:
        return higher
    if lower.category == COMPLEX and higher.category == FLOAT:
        return higher.to_complex()
    return lower


def result_type(dims: list[DType], zero_dims: list[DType], scalars: list) -> DType:
    """torch.result_type: dimensioned tensors > zero-dim tensors > Python scalars.

    A lower tier only changes the result when its category is higher; a
    Python float then gives the default float dtype, an int gives int64, a
    complex the default float's complex dtype (complex64), or the complex
    dtype of a floating result (float64 tensor * 1j -> complex128).

    Raises:
        TypeError: a float16 result made complex (torch's complex32 is not supported).
    """
    result = None
    for tier in (dims, zero_dims):
        if not tier:
            continue
        tier_type = tier[0]
        for d in tier[1:]:
            tier_type = promote_types(tier_type, d)
        result = _combine(result, tier_type)
    for s in scalars:
        cat = scalar_category(s)
        result = _combine(result, {BOOL: bool_, INT: DEFAULT_INT, FLOAT: DEFAULT_FLOAT,
                                   COMPLEX: DEFAULT_FLOAT.to_complex()}[cat])
    if result is None:
        raise TypeError("result_type needs at least one operand")
    return result


class TensorType(NamedTuple):
    """Static shape and dtype of an IR value: ``f32[32,10]``.

    A named tuple rather than a dataclass: one is built per operand on the
    per-op hot path, and tuple construction is several times cheaper.
    """

    shape: tuple[int, ...]
    dtype: DType

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def nbytes(self) -> int:
        return self.numel * self.dtype.itemsize

    def __str__(self) -> str:
        try:
            return f"{self.dtype.short}[{','.join(map(str, self.shape))}]"
        except (AttributeError, TypeError, ValueError):   # a malformed type read from text:
            # error messages print it, and must never raise themselves
            return f"<malformed type shape={_safe_repr(self.shape)} dtype={_safe_repr(self.dtype)}>"

    __repr__ = __str__


def _safe_repr(v) -> str:
    try:
        text = repr(v)
    except Exception:   # noqa: BLE001 - only for error messages
        text = f"<{type(v).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    """NumPy/torch broadcasting of shapes; None when they do not broadcast."""
    first = shapes[0]
    if all(s == first for s in shapes):
        return tuple(first)
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(-ndim, 0):
        size = 1
        for s in shapes:
            if -i > len(s):
                continue
            d = s[i]
            if d == 1:
                continue
            if size != 1 and d != size:
                return None
            size = d
        out.append(size)
    return tuple(out)
