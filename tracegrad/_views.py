"""View aliasing on top of functional values (torch's views, recorded functionally).

A tensor made by a view op (reshape, permute, expand, slice, detach, real, imag,
conj, view_as_real ...) remembers its base (the tensor that owns the storage) and
the chain of view ops from the base to itself, and shares the base's version
counter.  Values are immutable arrays, so aliasing is kept by rewriting:

- an in-place op on a view computes the view's new value, scatters it back
  through the inverse of each view op into a new value of the base (recorded
  like any op: the base's `grad_fn` becomes the scatter's, torch's
  CopySlices), then
- every live view of that base is regenerated from the new base value by
  replaying its chain (so `v = b[0]; b.add_(1)` changes `v`, and `b[0] = 5`
  changes `b`).

`alias` is the identity view made by `detach()` / `.data`: it shares the value
but never carries history.
"""
from __future__ import annotations

import math
import weakref

import numpy as np

from tracegrad.ir.registry import get

from . import _view_names
from .dispatch import view_meta
from .dispatch.frontend import EAGER
from .dispatch.grad_mode import enable_grad, no_grad
from .dispatch.hooks import HOOKS
from .dispatch.record import edge
from .dispatch.tape import TapeNode
from .tensor import Tensor

ALIAS = ("alias", None)   # detach() / .data


def replay(base: Tensor, chain: tuple) -> Tensor:
    """The view `chain` applied to `base` (recorded like the original view ops)."""
    out = base
    for op, attrs in chain:
        if op == "alias":
            out = Tensor(out._data)
        else:
            out = EAGER.call(op, out, **attrs)
    return out


def inverse(op: str, attrs: dict, parent: Tensor, child: Tensor) -> Tensor:
    """The new value of `parent` after its view `op(parent)` took the value `child`: the
    op's declared `OpDef.view_inverse`, run on tensors."""
    if op == "alias":
        return Tensor(child._data)   # writes through detach()/.data carry no history
    rule = get(op).view_inverse
    if rule is None:
        raise NotImplementedError(f"in-place update of a view made by {op!r} is not supported; "
                                  "clone() the view first")
    return rule(EAGER, parent, child, **attrs)


def check_leaf_write(t: Tensor, name: str, grad_on: bool) -> None:
    """torch's refusal of an in-place op `name` with grad mode on on a leaf that requires
    grad, or on a view of one (``.data`` / ``detach()`` aliases excepted)."""
    if not grad_on:
        return
    if t._requires_grad and t.grad_fn is None:
        raise RuntimeError(f"{name}: a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    base = t._base
    if (base is not None and base._requires_grad and base.grad_fn is None
            and not any(op == "alias" for op, _ in t._view_ops)):
        raise RuntimeError(f"{name}: a view of a leaf Variable that requires grad is being "
                           "used in an in-place operation.")


def write_through(view: Tensor, value: Tensor, name: str | None = None,
                  dirty: bool = False, mark: int | None = None) -> Tensor:
    """The base's new value after the view `view` took `value` in place (op `name`, whose
    nodes are those from `mark` on; `dirty`: `value` is a custom Function's dirty output,
    whose node took the view as its input)."""
    base, chain = view._base, view._view_ops
    base_edge, view_edge = edge(base), edge(view)
    parents = [base]
    for op, attrs in chain[:-1]:
        parents.append(replay(parents[-1], ((op, attrs),)))
    child = value
    for (op, attrs), parent in zip(reversed(chain), reversed(parents)):
        child = inverse(op, attrs, parent, child)
    if child.grad_fn is not None:   # torch's node for "the base, with a slice copied in"
        ex = child.grad_fn._extra()
        ex.name = "torch::autograd::CopySlices"
        ex.edges = _copy_slices_edges(base_edge, view_edge, value, name, dirty, mark)
    return child


def _copy_slices_edges(base_edge, view_edge, value: Tensor, name, dirty: bool, mark) -> tuple:
    """What torch's CopySlices shows as its next_functions: the base's old edge, then the
    edges of the in-place op's node but its first (the view it wrote): `y[1:].mul_(2)`
    (base, None), `.exp_()` (base,), `.addcmul_(w, w)` (base, w, w).  A value not computed
    from the view (`copy_(w)`) shows (base, w); one of no history (`fill_`, `zero_`) (base,).
    The engine follows the scatter's real edges."""
    fn = value.grad_fn if value._requires_grad else None
    if fn is not None and isinstance(fn, TapeNode) and fn.edges and (
            dirty or _same_edge(fn.edges[0], view_edge)):
        shown = fn.extra.edges if fn.extra is not None and fn.extra.edges is not None else fn.edges
        return (base_edge,) + tuple(shown[1:])
    if not value._requires_grad and _same_edge(view_edge, None) and name not in (
            "fill_", "zero_", "copy_"):   # an op on a view of no history: its operands' edges
        return (base_edge, None)
    if name in ("fill_", "zero_"):
        return (base_edge,)
    src = edge(value)
    if name == "copy_" and mark is not None:   # copy_'s own convert / expand: its source's edge
        while (src is not None and isinstance(src[0], TapeNode) and src[0].seq >= mark
               and src[0].op.name in ("convert", "expand")):
            src = src[0].edges[0]
    return (base_edge, src)


def _same_edge(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return a[0] is b[0] and a[1] == b[1]


def live_views(base: Tensor) -> list[Tensor]:
    if not base._views:
        return []
    alive = [t for t in (r() for r in base._views) if t is not None]
    base._views = [weakref.ref(t) for t in alive]
    return alive


def refresh(base: Tensor) -> None:
    """Regenerate every live view of `base` from its current value.

    A view of a base that requires grad keeps requiring grad even when the write ran under
    ``no_grad`` (torch regenerates its grad_fn from the base's), so the chain is replayed
    with grad mode on; a view that called ``retain_grad()`` retains it on its new grad_fn.
    """
    with (enable_grad() if base._requires_grad else no_grad()):
        for v in live_views(base):
            _refresh_view(base, v)
            if view_meta.MARKS:   # views torch refuses after such a write (view_meta.py)
                view_meta.refuse_after_rebase(v, base)
            if isinstance(v.grad_fn, TapeNode) and v.grad_fn is not base.grad_fn:
                # torch regenerates the view as an as_strided of its base
                _view_names.rename(v, "AsStridedBackward0", base)


def _refresh_view(base: Tensor, v: Tensor) -> None:
    new = replay(base, v._view_ops)
    v._data = new._data
    if getattr(new, "_fw", None) is not None or getattr(v, "_fw", None) is not None:
        HOOKS.copy_tangent(v, new)
    if any(op == "alias" for op, _ in v._view_ops):
        return   # detached aliases keep no history
    v.grad_fn, v._out_index, v._requires_grad = new.grad_fn, new._out_index, new._requires_grad
    if v._retains_grad and v.grad_fn is not None:   # torch moves the retains-grad hook too
        v._retains_grad = False
        v.retain_grad()


def rebase_saved_versions(root, box: list, old: int, new: int, mark: int,
                          result_box: list | None = None, written=None) -> None:
    """After an in-place op bumped `box` from `old` to `new`: the nodes that op itself
    recorded (seq >= `mark`, reachable from `root`) read the pre-mutation value, which
    stays valid (values are immutable) whatever later writes do, so their records move to a
    counter of their own at `new` that nothing bumps (``y.sin_(); y.mul_(2)`` then backprops,
    as in torch, which saves the original value of an in-place op's input).

    `result_box` is the counter of the op's result, a fresh tensor whose value the written
    tensor took: what those nodes recorded of it (an output ``sigmoid_`` / ``exp_`` saves)
    is the written tensor at `new`, so it moves to `box` at `new`, and a later write raises
    torch's version error when a backward needs it (``y.sigmoid_(); y.tanh_()``).

    `written`: the written tensor's value before the write.  A saved input on the same
    counter that is another value (another view of the same base: ``y[0:2] *= y[2:4]``)
    keeps its record, so a later write to it raises torch's version error.
    """
    private = [new]
    stack, seen = [root], set()
    while stack:
        n = stack.pop()
        if not isinstance(n, TapeNode) or n.seq < mark or id(n) in seen:
            continue
        seen.add(id(n))
        saved = n.saved_inputs
        n_in = len(n.in_types)
        n.versions = tuple(
            (b, v) if (b is box and v == old and written is not None and saved is not None
                       and i < n_in and saved[i] is not None and saved[i] is not written) else
            (private, new) if b is box and v == old else
            (box, new) if b is result_box else (b, v)
            for i, (b, v) in enumerate(n.versions))
        stack.extend(e[0] for e in n.edges if e is not None)


def replace_output(node, index: int, value) -> None:
    """An untracked in-place write (under ``no_grad``) to output `index` of `node`: the tensor
    keeps `node` as its grad_fn (as torch) and later ops read `value`, so the tape's value of
    that output becomes `value` and gradients pass through unchanged.  torch gets this for
    free (the write changes the one buffer); with immutable arrays the node's saved output
    is swapped.  The node's own version record of the output stays at the old version, so a
    backward that needs the old output (``exp``'s result) raises torch's in-place error."""
    saved = node.saved_outputs
    if saved is None or not isinstance(node, TapeNode):
        return
    node.saved_outputs = saved[:index] + (value,) + saved[index + 1:]


# torch's node for an in-place op that overwrites every element with a value of no history
_OVERWRITE_NAMES = {"fill_": "FillBackward2", "zero_": "ZeroBackward0",
                    "copy_": "torch::autograd::CopyBackwards",
                    "__setitem__": "torch::autograd::CopySlices"}


def cut_history(old: Tensor, new: Tensor, name: str) -> Tensor:
    """`new` (no history) as the value an in-place op `name` gave `old` (which requires
    grad), with grad mode on: still a tensor that requires grad, whose gradient to `old` is
    zero (torch: ``y = x + 2; y[0] = 2`` or ``y.fill_(2)`` gives x.grad 0).  A `where` with a
    constant true condition: the value is `new` exactly, the gradient to `old` is 0."""
    out = EAGER.call("where", True, new, old)
    out.grad_fn._extra().name = _OVERWRITE_NAMES.get(name, "torch::autograd::CopySlices")
    return out


def _view_strides(shape: tuple, strides: tuple, new_shape: tuple) -> bool:
    """Can a tensor of `shape` and element `strides` be viewed as `new_shape` without a
    copy?  torch's rule (``computeStride``): the old dims are cut into chunks that are
    contiguous among themselves (a size-1 dim joins any chunk), and every chunk must be
    exactly a run of whole new dims."""
    if not shape or 0 in shape:
        return True
    view_d = len(new_shape) - 1
    base_stride = strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * base_stride):
            # a chunk ends here: the new dims from view_d down must tile it exactly
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return False
            if d > 0:
                base_stride = strides[d - 1]
                tensor_numel = view_numel = 1
    return view_d == -1


def is_viewable(t: Tensor, new_shape: tuple) -> bool:
    """torch.Tensor.view's check that `t` can take `new_shape` as a view (see
    `_view_strides`).  A view here is a NumPy view with the strides torch's view would
    have (a transpose's, a step slice's, an expand's zeros), so those are read; a tensor
    that is not a view (an op's result, a copy) counts as contiguous, as does a traced
    value (no strides: tg.compile's view is as lenient as reshape)."""
    data = t._data
    if t._base is None or not isinstance(data, np.ndarray) or data.flags.c_contiguous:
        return True
    item = data.itemsize
    return _view_strides(data.shape, tuple(s // item for s in data.strides), tuple(new_shape))


def strides(t: Tensor) -> tuple[int, ...]:
    """torch.Tensor.stride() of `t`, in elements: a view's NumPy strides (the ones torch's view
    would have, see `is_viewable`), else row-major (op results, copies and traced values
    are laid out contiguously here)."""
    data = t._data
    if t._base is not None and isinstance(data, np.ndarray):
        return tuple(s // data.itemsize for s in data.strides)
    shape, out, step = tuple(t.shape), [], 1
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return tuple(reversed(out))


def is_contiguous(t: Tensor) -> bool:
    """torch's ``is_contiguous``: row-major strides, size-1 dims skipped (their stride is
    free), and any empty tensor."""
    data = t._data
    if t._base is None or not isinstance(data, np.ndarray) or data.flags.c_contiguous:
        return True
    shape = tuple(t.shape)
    if 0 in shape:
        return True
    want = 1
    for n, st in zip(reversed(shape), reversed(strides(t))):
        if n != 1:
            if st != want:
                return False
            want *= n
    return True


def _resolved(shape, numel: int):
    """`shape` with its one -1 filled in, or None where it is not a plain valid shape (the
    reshape op then raises its own error)."""
    try:
        dims = [int(d) for d in shape]
    except (TypeError, ValueError):
        return None
    if dims.count(-1) == 1:
        known = math.prod(d for d in dims if d != -1)
        if known <= 0 or numel % known:
            return None
        dims[dims.index(-1)] = numel // known
    return tuple(dims) if all(d >= 0 for d in dims) and math.prod(dims) == numel else None


def torch_reshape(t: Tensor, shape, out: Tensor | None = None,
                  copy_name: str = "UnsafeViewBackward0") -> Tensor:
    """What torch's ``reshape`` of `t` to `shape` gives (`out`: that reshape already made,
    the IR op's view): a view where the strides of `t` allow one (ViewBackward0, or
    ReshapeAliasBackward0 for a non-contiguous `t`, as torch names it), else a view of a
    copy (torch's clone then ``_unsafe_view``: `copy_name` over CloneBackward0), so that
    writes to the result do not reach `t` (they did before: a silent wrong answer)."""
    new = tuple(out.shape) if out is not None else _resolved(shape, t.numel())
    if new is None or is_viewable(t, new):
        if out is None:
            out = EAGER.call("reshape", t, shape)
        if not is_contiguous(t):
            _view_names.rename(out, "ReshapeAliasBackward0", t)
        return out
    copy = EAGER.call("reshape", EAGER.call("clone", t), new)
    return _view_names.rename(copy, copy_name, t)
