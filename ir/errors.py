"""Error classes of tracegrad; every user-facing error is one of these.

Each message starts with the op, says what is wrong with shapes and dtypes,
then where (the user's source line) and, when there is one, a hint.
"""
from __future__ import annotations


class TracegradError(Exception):
    """Base class. `add_location` appends the user's source line once."""

    def add_location(self, loc) -> "TracegradError":
        if loc is not None and not getattr(self, "_located", False):
            self.args = (f"{self.args[0]}\n  at {loc}",) + self.args[1:]
            self._located = True
        return self

    def within(self, op: str) -> "TracegradError":
        """Name the op the user called first when the error was raised by one of the ops
        its decomposition emits (``floor_divide: fmod: shapes ... cannot broadcast``)."""
        msg = self.args[0] if self.args and isinstance(self.args[0], str) else None
        if msg is not None and not msg.startswith(f"{op}:") and not msg.startswith(f"{op}("):
            self.args = (f"{op}: {msg}",) + self.args[1:]
        return self


def with_location(e: Exception, loc) -> Exception:
    """`e` with the user's source line appended to its message (once); any exception type,
    so NumPy's and Python's errors raised for bad operands carry the line too."""
    if isinstance(e, TracegradError):
        return e.add_location(loc)
    if loc is not None and e.args and isinstance(e.args[0], str) and "\n  at " not in e.args[0]:
        e.args = (f"{e.args[0]}\n  at {loc}",) + e.args[1:]
    return e


def named(e: Exception, op: str) -> Exception:
    """`e` (not a TracegradError) with its message starting with `op` (``mean: ...``), the
    op the user called, unless it names it already."""
    msg = e.args[0] if e.args and isinstance(e.args[0], str) else None
    if msg is not None and not msg.startswith((f"{op}:", f"{op}(")):
        e.args = (f"{op}: {msg}",) + e.args[1:]
    return e


class ShapeError(TracegradError, ValueError):
    """Operand shapes do not fit the op (broadcasting, matmul inner dims, reshape sizes).

    Fix: check the shapes named in the message; `x.shape` shows a tensor's shape.
    """


class DTypeError(TracegradError, TypeError):
    """An operand dtype the op does not accept (e.g. `mean` of an integer tensor).

    Fix: cast with `.float()` / `.to(dtype)` first.
    """


class AllocationError(TracegradError, MemoryError):
    """A tensor larger than memory, or than any array can hold, refused before allocating;
    the message names the op, the shape, the dtype and the bytes.

    Fix: a smaller shape, or a smaller dtype (float16 / bfloat16 halve the bytes).
    """


class IRError(TracegradError, ValueError):
    """A malformed IR program (found by the verifier) or unknown op/attribute."""


class TraceError(TracegradError, RuntimeError):
    """`tg.compile` met Python that depends on tensor values (`x.item()`, `if x > 0`).

    Fix: keep value-dependent control flow outside the compiled function, or
    pass the value as a static (non-tensor) argument.
    """


class LinAlgError(TracegradError, RuntimeError):
    """A linear-algebra kernel failed on the values: a singular matrix (inv, solve) or one
    that is not positive-definite (cholesky); torch.linalg.LinAlgError.

    Fix: check the matrix named in the message (its batch element when batched), e.g.
    regularize it by adding a small multiple of the identity.
    """
