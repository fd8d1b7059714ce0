"""`tg.Size`: the type of ``tensor.shape`` and ``tensor.size()`` (torch.Size).

A tuple subclass, so every tuple use of a shape keeps working; it prints as torch's
``torch.Size([2, 3])`` (the ``torch.`` prefix is kept on purpose: ported scripts and
their tests compare with torch's strings), slices and concatenations stay `Size`, and
``numel()`` is the product of the sizes.
"""
from __future__ import annotations


class Size(tuple):
    """A tensor's shape (torch.Size): a tuple of ints.

    ``Size([2, 3])`` or ``Size((2, 3))``; ``repr`` is ``torch.Size([2, 3])``.

    Raises:
        TypeError: an element is not an int (torch's message).
    """

    __slots__ = ()

    def __new__(cls, sizes=()):
        t = tuple.__new__(cls, sizes)
        for i, s in enumerate(t):
            if not isinstance(s, int) and not hasattr(s, "__index__"):
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} "
                                f"is '{type(s).__name__}')")
        return t

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(int(s)) for s in self)}])"

    __str__ = __repr__

    def __getitem__(self, key):
        out = tuple.__getitem__(self, key)
        return Size(out) if isinstance(key, slice) else out

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def numel(self) -> int:
        """The number of elements of a tensor of this shape (torch.Size.numel)."""
        n = 1
        for s in self:
            n *= s
        return n

    def __reduce__(self):
        return (Size, (tuple(self),))


def make_size(shape) -> Size:
    """`shape` (a tuple of ints) as a `Size`, without re-checking its elements."""
    return tuple.__new__(Size, shape)
