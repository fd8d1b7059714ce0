"""torch.nn.functional.pad (constant, reflect, replicate, circular) as a decomposition onto
slices, cat and slice_scatter."""
from __future__ import annotations

from ..errors import ShapeError
from ..registry import COMPLEX, defcomposite
from .index import located
from .shape import _narrow_to


# ---- pad -----------------------------------------------------------------------------------
def _pad_pairs(ops, x, pad, mode):
    """[(dim, before, after)], last dim first as torch's pad tuple; checks torch's limits."""
    if not all(isinstance(p, int) for p in pad):
        raise located(ops, TypeError(f"pad(): pad must be a tuple of ints, got {pad!r}"))
    nd = len(x.shape)
    if len(pad) % 2:
        raise located(ops, ValueError(f"pad: padding length must be divisible by 2, got {pad}"))
    n = len(pad) // 2
    if n > nd:
        raise located(ops, ValueError(f"pad: padding length ({len(pad)}) should be at most two "
                                      f"times the number of dimensions of {ops.type_of(x)}"))
    if mode != "constant" and nd not in (n + 1, n + 2):
        raise located(ops, NotImplementedError(
            f"pad: mode={mode!r} with padding length {len(pad)} is not supported for a "
            f"{nd}-D input {ops.type_of(x)} (pads the last {n} dims of a {n + 1}-D or "
            f"{n + 2}-D input, as torch)"))
    pairs = [(nd - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(n)]
    for d, lo, hi in pairs:
        if x.shape[d] + lo + hi < 0:
            raise located(ops, ShapeError(f"pad: padding ({lo}, {hi}) leaves dimension {d} of "
                                          f"{ops.type_of(x)} with a negative size"))
    return pairs


def _pad_constant(ops, x, pairs, value):
    shape, starts, stops = list(x.shape), [0] * len(x.shape), list(x.shape)
    place = [0] * len(x.shape)
    for d, lo, hi in pairs:   # negative padding crops
        starts[d], stops[d] = max(-lo, 0), x.shape[d] - max(-hi, 0)
        shape[d], place[d] = x.shape[d] + lo + hi, max(lo, 0)
    ones = (1,) * len(shape)
    if (tuple(starts), tuple(stops)) != ((0,) * len(shape), tuple(x.shape)):
        x = ops.slice(x, tuple(starts), tuple(stops), ones)
    out = ops.full(tuple(shape), value, x.dtype)
    end = tuple(p + s for p, s in zip(place, x.shape))
    return ops.slice_scatter(out, x, tuple(place), end, ones)


def _pad_edges(ops, x, pairs, mode):
    """reflect / replicate: pieces of x (flipped or expanded) on each side, then crop."""
    for d, lo, hi in pairs:
        if mode == "circular" and (lo < 0 or hi < 0):   # torch crops first, then wraps
            x = _narrow_to(ops, x, d, max(-lo, 0), x.shape[d] - max(-hi, 0))
            lo, hi = max(lo, 0), max(hi, 0)
        n = x.shape[d]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise located(ops, ValueError(
                f"pad: padding size should be less than the corresponding input dimension, "
                f"but got padding ({lo}, {hi}) at dimension {d} of {ops.type_of(x)}"))
        if mode == "circular" and (lo > n or hi > n):   # torch's message
            raise located(ops, ValueError(
                f"pad: Padding value causes wrapping around more than once: padding "
                f"({lo}, {hi}) at dimension {d} of {ops.type_of(x)}"))
        if mode == "replicate" and n == 0:
            raise located(ops, ValueError(f"pad: mode='replicate' needs a non-empty dimension "
                                          f"{d}, got {ops.type_of(x)}"))
        parts = [x]
        if lo > 0:
            parts.insert(0, _pad_piece(ops, x, d, 1, lo + 1, 0, lo, mode))
        if hi > 0:
            parts.append(_pad_piece(ops, x, d, n - 1 - hi, n - 1, n - 1, hi, mode))
        if len(parts) > 1:
            x = ops.cat(parts, d)
        if lo < 0 or hi < 0:
            x = _narrow_to(ops, x, d, max(-lo, 0), x.shape[d] - max(-hi, 0))
    return x


def _pad_piece(ops, x, d, start, stop, edge, size, mode):
    if mode == "circular":   # the other end of the dim wraps around
        n = x.shape[d]
        return _narrow_to(ops, x, d, n - size, n) if edge == 0 else _narrow_to(ops, x, d, 0, size)
    if mode == "reflect":
        return ops.flip(_narrow_to(ops, x, d, start, stop), (d,))
    shape = list(x.shape)
    shape[d] = size
    return ops.expand(_narrow_to(ops, x, d, edge, edge + 1), tuple(shape))


def _pad(ops, x, pad, mode="constant", value=None):
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise located(ops, NotImplementedError(
            f"pad: mode={mode!r} is not supported (constant, reflect, replicate and circular "
            "are)"))
    if mode != "constant" and value is not None:
        raise located(ops, ValueError(f"pad: mode={mode!r} doesn't take a value argument"))
    pairs = _pad_pairs(ops, x, tuple(pad), mode)
    if mode == "constant":
        return _pad_constant(ops, x, pairs, 0 if value is None else value)
    out = _pad_edges(ops, x, pairs, mode)
    return out if out is not x else ops.clone(x)   # a copy, as torch


def _ONE_NODE_MODES(args):   # node_inputs: torch's circular pad writes slices (CopySlices)
    return None if args["mode"] == "circular" else ("input",)


defcomposite("pad", "input: Tensor, pad, mode='constant', value=None", _pad,
             ref="torch.nn.functional.pad (constant, reflect, replicate, circular)", flags=COMPLEX,
             node_name="ConstantPadNdBackward0", node_inputs=_ONE_NODE_MODES)
