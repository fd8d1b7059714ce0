"""Activation checkpointing: recompute a region in backward instead of saving its values
(torch.utils.checkpoint): the non-reentrant variant on saved-tensor hooks, the reentrant
one as a Function."""
from __future__ import annotations

import contextlib
import warnings
import weakref

from .. import _creation, _ops, _state, amp
from ..autograd.engine import _is_checkpoint_valid, backward as autograd_backward, current_graph_task_id
from ..autograd.saved_hooks import saved_tensors_hooks
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..tensor import Tensor


def checkpoint_name(x: Tensor, name: str) -> Tensor:
    """Tag `x` with `name` for the ``"save_names"`` policy (jax.ad_checkpoint.checkpoint_name).

    Returns `x` unchanged in value; under ``tg.explain(..., policy="save_names")``
    tagged values cost nothing to save, so the partitioner keeps them and
    recomputes others.
    """
    return _ops.checkpoint_name(x, str(name))


class _Checkpoint(Function):
    """Runs the region without recording; its backward re-runs it with grad and differentiates."""

    @staticmethod
    def forward(ctx, fn, n_tensors, preserve_rng_state, *args):
        ctx.fn, ctx.n_tensors = fn, n_tensors
        # the recomputation draws the same random numbers (dropout masks) as this run
        ctx.rng_state = _creation.get_rng_state() if preserve_rng_state else None
        tensors = args[:n_tensors]
        ctx.save_for_backward(*tensors)
        ctx.rest = args[n_tensors:]
        with no_grad():
            out = fn(*tensors, *ctx.rest)
        if not isinstance(out, Tensor):
            raise TypeError("tg.utils.checkpoint: the function must return one tensor, got "
                            f"{type(out).__name__}")
        return out

    @staticmethod
    def backward(ctx, grad_out):
        if not _is_checkpoint_valid():   # torch 2.13's error
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        inputs = [t.detach().requires_grad_(t.requires_grad) for t in ctx.saved_tensors]
        outer = None
        if ctx.rng_state is not None:
            outer = _creation.get_rng_state()
            _creation.set_rng_state(ctx.rng_state)
        try:
            with enable_grad():
                out = ctx.fn(*inputs, *ctx.rest)     # the recomputation
        finally:
            if outer is not None:   # the stream goes on as if nothing was recomputed
                _creation.set_rng_state(outer)
        if out.requires_grad:
            # like torch's reentrant checkpoint: parameters the region closes over are
            # leaves of the recomputed graph and get their .grad accumulated here
            autograd_backward(out, grad_out)
        return (None, None, None) + tuple(t.grad for t in inputs)


class CheckpointError(RuntimeError):
    """The recomputation of a non-reentrant checkpoint saved other tensors than the forward
    (torch.utils.checkpoint.CheckpointError): make the region deterministic, or pass
    ``determinism_check="none"``."""


_DEFAULT_DETERMINISM_MODE = "default"
_early_stop = [None]   # set_checkpoint_early_stop's value; None: each call's own argument


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Whether non-reentrant checkpoints made inside stop their recomputation as soon as every
    saved tensor is recomputed (default True; torch.utils.checkpoint.set_checkpoint_early_stop).
    Only needs to be active while the forward runs."""
    prev = _early_stop[0]
    _early_stop[0] = enable
    try:
        yield
    finally:
        _early_stop[0] = prev


def noop_context_fn():
    """The default ``context_fn``: two null contexts (forward, recomputation)."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def _metadata(t: Tensor) -> dict:
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


_CHECKS = {_DEFAULT_DETERMINISM_MODE: _metadata, "none": lambda _: None}


class _StopRecomputation(Exception):
    pass


class _Frame:
    """One non-reentrant checkpoint call: what its pack hook handed out (one `_Holder` per
    saved tensor, with the tensor's metadata) and, per backward call, the recomputed values."""

    def __init__(self, fn, args, kwargs, early_stop: bool, metadata_fn, restore):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        # the tensor arguments are saved variables, as torch's: version-checked on recompute
        self.versions = [(a._vc, a._vc[0]) if isinstance(a, Tensor) else None for a in args]
        self.early_stop, self.metadata_fn, self.restore = early_stop, metadata_fn, restore
        self.holders: list = []        # weak references: a freed node drops its holder
        self.metas: list = []
        self.task = None               # the backward call the values below were recomputed for
        self.recomputed: dict = {}     # id(holder) -> tensor
        self.count = 0
        self.forward_done = False

    def pack(self, t: Tensor):
        holder = _Holder()
        self.holders.append(weakref.ref(holder))
        if self.metadata_fn is not None:
            self.metas.append(self.metadata_fn(t))
        return holder

    def unpack(self, holder):
        task = current_graph_task_id()
        if task == -1 or task != self.task:   # -1: read outside a backward, recompute each time
            self._recompute(task)
        value = self.recomputed.get(id(holder))
        if value is None:
            raise CheckpointError("torch.utils.checkpoint: the recomputation did not save this "
                                  "tensor again (the region ran differently).")
        return value

    def _recompute(self, task) -> None:
        self._check_versions()
        self.task, self.recomputed, self.count = task, {}, 0
        try:   # the early stop leaves through the contexts, as torch's
            with saved_tensors_hooks(self._pack_recomputed, lambda x: x), enable_grad(), \
                    self.restore():
                self.fn(*self.args, **self.kwargs)
        except _StopRecomputation:
            pass
        self._check()

    def _check_versions(self) -> None:
        for a, v in zip(self.args, self.versions):
            if v is not None and v[0][0] != v[1]:
                where = (f", which is output {a._out_index} of {a.grad_fn.name()}"
                         if a.grad_fn is not None else "")
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: [{a._type}]{where}, is at version {v[0][0]}; "
                    f"expected version {v[1]} instead. Hint: the checkpointed function's input "
                    "was modified in place after the forward; clone it first.")

    def _pack_recomputed(self, t: Tensor):
        t = t.detach() if t.requires_grad else t
        k = self.count
        self.count += 1
        if k >= len(self.holders):
            if not self.forward_done:   # a backward inside the checkpointed function
                return t
            raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during "
                                  "recomputation than during the original forward pass.")
        holder = self.holders[k]()
        if holder is not None:
            self.recomputed[id(holder)] = t
        if self.early_stop and self.count == len(self.holders):
            raise _StopRecomputation
        return t

    def _check(self) -> None:
        if self.count != len(self.holders):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.holders)}\n"
                f"Number of tensors saved during recomputation: {self.count}.")
        if self.metadata_fn is None:
            return
        wrong = ""
        for k, ref in enumerate(self.holders):
            holder = ref()
            if holder is None or id(holder) not in self.recomputed:
                continue
            got = self.metadata_fn(self.recomputed[id(holder)])
            if got != self.metas[k]:
                wrong += (f"tensor at position {k}:\nsaved metadata: {self.metas[k]}\n"
                          f"recomputed metadata: {got}\n")
        if wrong:
            raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following "
                                  "tensors have different metadata than during the forward "
                                  f"pass.\n{wrong}.")


class _Holder:
    """What the forward's pack hook saves in place of a tensor."""

    __slots__ = ("__weakref__",)


def _restorer(preserve_rng_state: bool, recompute_context):
    """A context for the recomputation: the forward's RNG state (put back afterwards, so the
    stream goes on as if nothing was recomputed) and autocast region, then ``context_fn``'s
    recomputation context."""
    rng = _creation.get_rng_state() if preserve_rng_state else None
    region = amp._local.region

    @contextlib.contextmanager
    def restore():
        outer = None
        if rng is not None:
            outer = _creation.get_rng_state()
            _creation.set_rng_state(rng)
        cast = (amp.autocast(region.device_type, region.fast_dtype) if region is not None
                else amp.autocast(enabled=False))
        try:
            with cast, recompute_context:
                yield
        finally:
            if outer is not None:
                _creation.set_rng_state(outer)
    return restore


def _checkpoint_without_reentrant(fn, args, kwargs, preserve_rng_state, context_fn,
                                  determinism_check, early_stop):
    if determinism_check not in _CHECKS:
        raise ValueError(f"determinism_check should be one of {list(_CHECKS)}, but got "
                         f"{determinism_check}")
    forward_context, recompute_context = context_fn()
    stop = _early_stop[0] if _early_stop[0] is not None else early_stop
    frame = _Frame(fn, args, kwargs, stop, _CHECKS[determinism_check],
                   _restorer(preserve_rng_state, recompute_context))
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        out = fn(*args, **kwargs)
    frame.forward_done = True
    return out


_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
    "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")


def checkpoint(function, *args, use_reentrant: bool | None = None,
               context_fn=noop_context_fn, determinism_check: str = _DEFAULT_DETERMINISM_MODE,
               debug: bool = False, early_stop: bool = True, **kwargs):
    """``function(*args, **kwargs)`` whose intermediate values are not saved but recomputed in
    backward (torch.utils.checkpoint.checkpoint).

    ``use_reentrant=False`` (recommended, as torch): the forward runs normally and records
    its graph, but every tensor an op would save is replaced by a placeholder (a
    saved-tensor pack hook); the first backward that reads one re-runs `function` (grad
    mode on, the forward's RNG state and autocast region restored) and hands out the
    recomputed values, stopping as soon as all are there (``early_stop``,
    `set_checkpoint_early_stop`).  Outputs may be any structure, `function` may take
    keywords, ``autograd.grad`` works, and a tensor used inside and outside the region gets
    one gradient (its hooks run once, with the total).  ``determinism_check="default"``
    compares shape, dtype and device of each recomputed value with the forward's
    (`CheckpointError`); ``"none"`` skips that.  ``context_fn`` returns two context managers,
    for the forward and the recomputation.

    ``use_reentrant=True``: torch's reentrant variant: only the tensor arguments are kept;
    backward re-runs `function` and backpropagates through it inside the outer backward,
    accumulating into the ``.grad`` of parameters it closes over, so use ``backward()``,
    not ``autograd.grad``; `function` must return one tensor; no keywords.  Without
    ``use_reentrant`` a warning says to pass it and the reentrant variant runs (torch 2.13).

    ``preserve_rng_state`` (a keyword, default True) restores the RNG state for the
    recomputation, so dropout draws the same mask.  While tracing (`tg.explain`,
    `tg.compile`) the region's nodes are marked instead, and the min-cut partitioner
    recomputes them rather than saving their values.
    Raises:
        ValueError: keywords, ``context_fn`` or ``debug`` with the reentrant variant (torch's
            messages); an unknown ``determinism_check``.
        CheckpointError: the recomputation saved other tensors than the forward.
        NotImplementedError: ``debug=True`` with the non-reentrant variant.
    """
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant and (context_fn is not noop_context_fn or debug is not False):
        raise ValueError("Passing `context_fn` or `debug` is only supported when "
                         "use_reentrant=False.")
    if debug:
        raise NotImplementedError("checkpoint(debug=True): the operator logs of torch's debug "
                                  "mode are not recorded; the CheckpointError says what differs")
    local = _state.local
    if local.tracer is not None:
        # traced (tg.explain, tg.compile): mark the region's nodes; the partitioner
        # recomputes them in backward instead of saving their values
        local.checkpoint_depth += 1
        try:
            return function(*args, **kwargs)
        finally:
            local.checkpoint_depth -= 1
    if not use_reentrant:
        return _checkpoint_without_reentrant(function, args, kwargs, preserve_rng_state,
                                             context_fn, determinism_check, early_stop)
    n = 0
    while n < len(args) and isinstance(args[n], Tensor):
        n += 1
    if local.grad_enabled and not any(t.requires_grad for t in args[:n]):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None "
                      "(the reentrant checkpoint: a tensor argument must require grad)",
                      UserWarning, stacklevel=2)
    return _Checkpoint.apply(function, n, preserve_rng_state, *args)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run `functions` (a `nn.Sequential` or a list of modules / functions) on `input`, each
    of the first ``segments - 1`` chunks under `checkpoint`, the last one normally
    (torch.utils.checkpoint.checkpoint_sequential).

    Raises:
        ValueError: keywords other than ``preserve_rng_state`` (torch's message).
    """
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING.replace("checkpoint:", "checkpoint."
                                                     "checkpoint_sequential:"),
                      UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))

    def run(start: int, end: int):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
