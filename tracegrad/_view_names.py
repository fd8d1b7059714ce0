"""torch's names for the backward nodes of views whose name depends on the call, not the op.

The registry gives each op one node name (``reshape`` -> ``ViewBackward0``); torch names
some views by how they were asked for, which only the caller knows:

- ``x[key]``: the last view torch's indexing applies (`getitem_name`);
- ``reshape`` that has to copy: ``UnsafeViewBackward0``; ``select``: ``SelectBackward0``;
- ``squeeze()`` / ``squeeze(dim)`` / ``squeeze(dims)``: ``SqueezeBackward0/1/2``;
- a live view regenerated after a write to its base: ``AsStridedBackward0`` (torch
  rebuilds such a view as an as_strided of the base).
"""
from __future__ import annotations

from .dispatch.tape import TapeNode, node_class


def rename(out, name: str, *operands):
    """`out` with its backward node called `name` (torch's), when `out` has a node of its own
    (not one of `operands`', and not torch's CopySlices); returns `out`."""
    node = getattr(out, "grad_fn", None)
    if not isinstance(node, TapeNode) or any(node is getattr(x, "grad_fn", None)
                                             for x in operands):
        return out
    if node.extra is None:   # the class carries the name: no NodeExtra made per call
        node.__class__ = node_class(name)
    elif not (node.extra.name or "").startswith("torch::"):
        node.extra.name = name
    return out


def _trivial(k: slice, size: int) -> bool:
    start, stop, step = k.indices(size)
    return start == 0 and stop >= size and step == 1


def getitem_name(shape: tuple, key) -> str:
    """The node torch's ``x[key]`` ends with (torch/csrc/autograd/python_variable_indexing.cpp
    applies the key left to right): an int's select, a slice other than the whole dim
    (a lone non-tuple slice always slices), a None's unsqueeze; any tensor, list or bool
    index makes an ``IndexBackward0``; a key that changes nothing is an alias."""
    from ._indexing import _tokens   # noqa: PLC0415 (_indexing imports tensor machinery)
    if isinstance(key, slice):
        return "SliceBackward0"
    tokens = _tokens(key)
    if any(kind in ("index", "mask", "bool") for kind, _ in tokens):
        return "IndexBackward0"
    consumed = sum(1 if kind in ("int", "slice") else 0 for kind, _ in tokens)
    name, d = "AliasBackward0", 0
    for kind, k in tokens:
        if kind == "ellipsis":
            d += len(shape) - consumed
        elif kind == "new":
            name = "UnsqueezeBackward0"
        elif kind == "int":
            name, d = "SelectBackward0", d + 1
        else:
            if not _trivial(k, shape[d]):
                name = "SliceBackward0"
            d += 1
    return name


def squeeze_name(dim) -> str:
    """torch's overloads: ``squeeze()`` 0, ``squeeze(int)`` 1, ``squeeze(dims)`` 2."""
    return ("SqueezeBackward0" if dim is None else
            "SqueezeBackward1" if isinstance(dim, int) else "SqueezeBackward2")
