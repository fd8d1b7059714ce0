"""Attribute kinds: what each attribute of an op may hold, declared with the op.

Every primitive declares its attributes as ``(name, default, kind)`` triples
(`registry.defop` refuses a pair); the verifier checks each node's attribute
values against their kinds before it asks the op to infer types, so a program
it accepts never hands a kernel a tuple where a dim belongs, a float bound to
a slice, or a shape that is not a tuple of sizes.  The kinds describe the
canonical attribute values that sit in graphs (after the op's ``canon``):
``sum``'s dims are a tuple there, ``argmax``'s dim an int or none.

docs/ir.md lists the kinds with the literals they accept.
"""
from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

from . import types as T

# The largest size or index an attribute may hold: an element count past it could not be
# allocated, and the bound keeps Python's big integers out of NumPy (OverflowError there)
MAX_SIZE = 2 ** 62


class AttrKind(NamedTuple):
    """One attribute kind: ``name`` (shown in errors and docs/ir.md), ``check(value) ->
    bool`` and ``text``, what it accepts in words."""

    name: str
    check: Callable[[Any], bool]
    text: str

    def __repr__(self) -> str:
        return self.name


def _is_int(v) -> bool:
    return type(v) is int and -MAX_SIZE <= v <= MAX_SIZE


def _is_size(v) -> bool:
    return type(v) is int and 0 <= v <= MAX_SIZE


def _is_real(v) -> bool:
    return type(v) is float or _is_int(v)


def _ints(v, item=_is_int) -> bool:
    return type(v) is tuple and all(item(x) for x in v)


def _optional(kind: AttrKind) -> AttrKind:
    return AttrKind(kind.name + "?", lambda v: v is None or kind.check(v), kind.text + " or none")


def enum(*values) -> AttrKind:
    """A kind holding one of `values` (strings, numbers, none)."""
    shown = ", ".join("none" if v is None else repr(v) for v in values)
    return AttrKind(f"enum({shown})",
                    lambda v: any(type(v) is type(w) and v == w for w in values),
                    f"one of {shown}")


def _literal(v, depth=0) -> bool:
    """Plain IR literal data: numbers, bools, strings, none, dtypes, nested tuples."""
    if depth > 32:
        return False
    if v is None or type(v) in (bool, str, complex) or isinstance(v, T.DType) or _is_real(v):
        return True
    return isinstance(v, tuple) and all(_literal(x, depth + 1) for x in v)   # TensorTypes too


def _type_pair(v) -> bool:
    return (isinstance(v, tuple) and len(v) == 2 and _ints(tuple(v[0]), _is_size)
            and isinstance(v[1], T.DType))


INT = AttrKind("int", _is_int, "an integer (at most 2**62 in magnitude)")
SIZE = AttrKind("size", _is_size, "a non-negative integer")
BOOL = AttrKind("bool", lambda v: type(v) is bool, "true or false")
FLOAT = AttrKind("float", _is_real, "a number (float or integer)")
NUMBER = AttrKind("number", lambda v: type(v) in (bool, complex) or _is_real(v),
                  "a bool, integer, float or complex(re, im)")
STRING = AttrKind("string", lambda v: type(v) is str, "a string")
DTYPE = AttrKind("dtype", lambda v: isinstance(v, T.DType), "a dtype (f32, i64 ...)")
DIM = AttrKind("dim", _is_int, "one dim (an integer)")
DIMS = AttrKind("dims", _ints, "a tuple of dims, e.g. (0, 1)")
SHAPE = AttrKind("shape", lambda v: _ints(v, _is_size) and math.prod(v) <= MAX_SIZE,
                 "a tuple of non-negative sizes, e.g. (2, 3)")
INTS = AttrKind("ints", _ints, "a tuple of integers")
TYPES = AttrKind("types", lambda v: type(v) is tuple and all(_type_pair(x) for x in v),
                 "a tuple of ((sizes...), dtype) pairs")
LITERAL = AttrKind("literal", _literal, "any literal (host ops' bookkeeping)")
BOOLS = AttrKind("bools", lambda v: type(v) is tuple and all(type(x) is bool for x in v),
                 "a tuple of true/false")

INT_OPT, FLOAT_OPT, DTYPE_OPT = _optional(INT), _optional(FLOAT), _optional(DTYPE)
DIM_OPT, DIMS_OPT, SHAPE_OPT, NUMBER_OPT = (_optional(DIM), _optional(DIMS), _optional(SHAPE),
                                            _optional(NUMBER))
BOOL_OPT = _optional(BOOL)

# every kind by name, for docs/ir.md and the registry's check of declarations
KINDS = {k.name: k for k in (INT, SIZE, BOOL, FLOAT, NUMBER, STRING, DTYPE, DIM, DIMS, SHAPE,
                             INTS, TYPES, LITERAL, BOOLS, INT_OPT, FLOAT_OPT, DTYPE_OPT,
                             DIM_OPT, DIMS_OPT, SHAPE_OPT, NUMBER_OPT, BOOL_OPT)}


def describe(v) -> str:
    """A short, never-raising description of an attribute value for error messages."""
    try:
        text = repr(v)
    except Exception:   # noqa: BLE001 - an error message must never raise itself
        text = f"<{type(v).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."

# torch.norm's p: "fro", "nuc" or a number
NORM_P = AttrKind("norm_p", lambda v: v in ("fro", "nuc") if type(v) is str else _is_real(v),
                  '"fro", "nuc" or a number')
KINDS[NORM_P.name] = NORM_P

# conv / pool padding: per spatial dim an integer or a (low, high) pair
PADDING = AttrKind("padding", lambda v: type(v) is tuple and all(
    _is_int(x) or type(x) is tuple and len(x) == 2 and _ints(x) for x in v),
    "a tuple of integers or (low, high) pairs")
KINDS[PADDING.name] = PADDING
