"""Optimizer base class (torch.optim.Optimizer): param groups, per-parameter state,
``zero_grad``, ``add_param_group``, ``state_dict`` / ``load_state_dict``.

Hyper-parameters as data
------------------------
A param group is a dict, and ``group["lr"]`` is a Python float as in torch: users and lr
schedulers assign it.  The hyper-parameters a schedule may change every step (the
optimizer's ``_data_keys``: lr, momentum, betas, weight_decay) are mirrored in 0-d float64
tensors the group holds; every ``group[key] = value`` writes the new value into them on the
host, and `step()` reads only the tensors.  Under `tg.compile` those tensors are lifted
program inputs (by identity), so a new learning rate is new input data, not a new constant,
and one trace serves a whole schedule (torch.compile instead guards on the Python float and
recompiles).  What a traced step bakes in as constants (flags such as nesterov or amsgrad,
eps, whether momentum or weight decay is zero, the parameter lists, which state tensors
exist) is checked by a guard the optimizer registers with the tracer: a change retraces.
Assigning a data hyper-parameter *inside* a compiled function raises a TraceError, since
the assignment would run at trace time only.
"""
from __future__ import annotations

import copy
import functools
import warnings
import weakref
from collections import defaultdict

import numpy as np

from tracegrad.ir.errors import TraceError

from .. import _state
from .._ops import view_as_real
from ..autograd.grad_mode import enable_grad, no_grad
from ..compiler.guards import GuardFailure
from ..tensor import Tensor


def _host_scalar(key: str, value, owner: str) -> np.ndarray:
    if isinstance(value, Tensor):
        raise NotImplementedError(
            f"{owner}: {key} given as a Tensor is not supported; pass a Python float "
            "(tracegrad already feeds it to compiled steps as data)")
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{owner}: {key} must be a real number, got {type(value).__name__}")
    return np.asarray(float(value), dtype=np.float64)


def check_hyper(owner: str, **values) -> None:
    """Constructor check: each value a real number >= 0 (torch's "Invalid ..." ValueErrors).

    Raises:
        NotImplementedError: a Tensor (torch allows a tensor lr; tracegrad passes floats to
            compiled steps as data already).
        TypeError: not a real number.  ValueError: negative.
    """
    for key, v in values.items():
        _host_scalar(key, v, owner)
        if not v >= 0:
            raise ValueError(f"{owner}: invalid {key}: {v} (must be >= 0)")


def check_impl(owner: str, foreach=None, fused=None, capturable: bool = False,
               differentiable: bool = False) -> None:
    """torch's implementation switches, accepted where they change nothing here.

    ``foreach`` (any value) and ``capturable`` are accepted and ignored: tracegrad has one
    per-parameter update, `tg.compile` fuses a whole training step into one program, and
    the step count is already a tensor read as data.  They are not stored in the param
    groups (torch stores them; a deviation ``state_dict()`` shows).

    Raises:
        NotImplementedError: ``fused=True`` (torch's fused kernels; compile the training
            step with `tg.compile` instead) or ``differentiable=True`` (step() runs under
            no_grad; autograd through an optimizer step is out of scope).
    """
    if fused:
        raise NotImplementedError(
            f"{owner}: fused=True (torch's fused CUDA/CPU kernels) is not supported; pass "
            "fused=None or False, and compile the whole training step with tg.compile to "
            "get one fused program")
    if differentiable:
        raise NotImplementedError(
            f"{owner}: differentiable=True (autograd through the optimizer step) is not "
            "supported: step() runs under no_grad; write the update with tensor ops (or "
            "tg.func) to differentiate through it")


class _ParamGroup(dict):
    """A param group: a plain dict to the user (as torch's) whose `_data_keys` entries are
    mirrored in 0-d float64 tensors that `Optimizer.step` reads (see the module docstring)."""

    def __init__(self, group: dict, data_keys: tuple, owner: str):
        super().__init__()
        self._data_keys = data_keys
        self._owner = owner
        self._tensors: dict = {}
        for k, v in group.items():
            self._store(k, v)

    def _store(self, key, value) -> None:
        if key in self._data_keys:
            old = self._tensors.get(key)
            values = value if isinstance(value, (tuple, list)) else None
            arrays = ([_host_scalar(f"{key}[{i}]", v, self._owner) for i, v in enumerate(values)]
                      if values is not None else [_host_scalar(key, value, self._owner)])
            olds = (list(old) if isinstance(old, tuple) else [old]) if old is not None else []
            if len(olds) == len(arrays) and isinstance(old, tuple) == (values is not None):
                for t, a in zip(olds, arrays):    # in place: a compiled step keeps reading t
                    t._data = a
                    t._vc[0] += 1
            else:
                # made outside any trace (a group wrapped inside one, see Optimizer.step):
                # a compiled step must lift them as inputs, not bake them in as constants
                tracer, _state.local.tracer = _state.local.tracer, None
                try:
                    ts = [Tensor(a) for a in arrays]
                finally:
                    _state.local.tracer = tracer
                self._tensors[key] = tuple(ts) if values is not None else ts[0]
        super().__setitem__(key, value)

    def __setitem__(self, key, value) -> None:
        if key in self._data_keys and _state.local.tracer is not None:
            raise TraceError(
                f"{self._owner}: param_group[{key!r}] was assigned inside a function being "
                "compiled by tg.compile; the assignment would run only while tracing. Change "
                "hyper-parameters (e.g. scheduler.step()) outside the compiled function: the "
                "compiled step reads the new value as data, without retracing")
        self._store(key, value)

    def __delitem__(self, key) -> None:
        self._tensors.pop(key, None)
        super().__delitem__(key)

    def update(self, *args, **kwargs) -> None:
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key, *default):
        self._tensors.pop(key, None)
        return super().pop(key, *default)


def _structural(value, is_data: bool, branches: bool):
    """What a traced step bakes in for one hyper-parameter."""
    if not is_data:
        return value
    if not branches:   # pure data (lr, betas): nothing about it is baked in
        return None
    return value != 0  # data, but step() skips work when it is zero (momentum, weight_decay)


class Optimizer:
    """Base class of the optimizers (torch.optim.Optimizer).

    Args:
        params: an iterable of leaf tensors, or of dicts (param groups) with a
            ``"params"`` entry and per-group hyper-parameter overrides.
        defaults: the hyper-parameters every group gets unless it sets them.
    Raises:
        TypeError: `params` is a single Tensor, a set, or holds a non-Tensor.
        ValueError: an empty parameter list, a non-leaf tensor, or a tensor in two groups.

    Subclasses implement ``_update_group(group, hyper)``; `step` runs it for each group
    with ``hyper`` mapping each of ``_data_keys`` to its 0-d float64 tensor(s); a data
    key whose zero-ness changes what step() does must be listed in ``_branch_keys``.
    """

    _data_keys: tuple = ("lr",)
    _branch_keys: tuple = ("momentum", "weight_decay")   # data keys step() tests against 0

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:   # bad hyper-parameters: named, at the user's line
            cls.__init__ = _state.located(cls.__init__, name=cls.__name__)
        if "step" in cls.__dict__:   # a custom step(): still tell schedulers it ran
            own = cls.step

            @functools.wraps(own)
            def step(self, *args, **kw):
                self._opt_called = True
                return own(self, *args, **kw)
            cls.step = step

    def __init__(self, params, defaults: dict):
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type(params).__name__}")
        self.defaults = defaults
        self.state: dict = defaultdict(dict)
        self.param_groups: list = []
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(params[0], dict):
            params = [{"params": params}]
        for group in params:
            self.add_param_group(group)
        self._opt_called = False    # for the lr schedulers' call-order warning
        from ..compiler.trace import register_stateful
        register_stateful(self)     # a trace abandoned at a graph break rolls our state back

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {g[k]}" for k in sorted(g) if k != "params"]
        return "\n".join(lines + [")"])

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters, with its own hyper-parameters (torch's
        Optimizer.add_param_group); keys it leaves out take the optimizer's defaults.

        Raises:
            TypeError: `param_group` is not a dict, its params are a set or hold a non-Tensor.
            ValueError: a non-leaf tensor, or a tensor already in another group.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error", stacklevel=3)
        group = dict(param_group, params=params)
        for k, v in self.defaults.items():
            group.setdefault(k, v)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(_ParamGroup(group, self._data_keys, type(self).__name__))

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset gradients: to None by default (torch >= 2.0), else to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    with no_grad():
                        p.grad.zero_()

    # ---- step -------------------------------------------------------------------------
    def step(self, closure=None):
        """One update of every parameter that has a ``.grad`` (torch's Optimizer.step).

        Args:
            closure: optional callable that re-evaluates the model and returns the loss
                (run with grad enabled before the update).
        Returns:
            the closure's loss, or None.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._opt_called = True
        with no_grad():
            for i, group in enumerate(self.param_groups):
                if not isinstance(group, _ParamGroup):   # the user replaced the dict
                    group = self.param_groups[i] = _ParamGroup(group, self._data_keys,
                                                                type(self).__name__)
                self._update_group(group, group._tensors)
        tracer = _state.local.tracer
        if tracer is not None:
            tracer.guard(("optimizer", id(self)), self._make_guard())
        return loss

    def _update_group(self, group: dict, hyper: dict) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement _update_group")

    @staticmethod
    def _grads(group: dict):
        """``(param, gradient)`` for each param of `group` that has a ``.grad``; the gradient
        negated under ``maximize`` (torch's maximize: ascend the objective)."""
        for p in group["params"]:
            if p.grad is not None:
                yield p, (-p.grad if group["maximize"] else p.grad)

    # ---- what a traced step bakes in ----------------------------------------------------
    def _signature(self) -> tuple:
        groups = []
        for g in self.param_groups:
            flags = tuple((k, _structural(g[k], k in self._data_keys, k in self._branch_keys))
                          for k in self.defaults if k in g)
            tensors = tuple(id(t) for v in getattr(g, "_tensors", {}).values()
                            for t in (v if isinstance(v, tuple) else (v,)))
            groups.append((id(g), tuple(id(p) for p in g["params"]), flags, tensors))
        state = tuple((id(p), tuple((k, id(v) if isinstance(v, Tensor) else v)
                                    for k, v in s.items()))
                      for p, s in self.state.items())
        return tuple(groups), id(self.state), state

    def _make_guard(self):
        ref, name, expected = weakref.ref(self), type(self).__name__, self._signature()

        def check() -> str | GuardFailure | None:
            opt = ref()
            if opt is None:   # the program can never run again: the cache drops it
                return GuardFailure(f"the {name} optimizer the program updates was freed", True)
            now = opt._signature()
            if now == expected:
                return None
            if len(now[0]) != len(expected[0]) or any(
                    a[:2] != b[:2] or a[3] != b[3] for a, b in zip(now[0], expected[0])):
                return f"{name}: param_groups, their parameters or their hyper-parameter " \
                       "tensors changed"
            for i, (a, b) in enumerate(zip(now[0], expected[0])):
                for (k, new), (_, old) in zip(a[2], b[2]):
                    if new != old:
                        return (f"{name}: param_groups[{i}][{k!r}] changed in a way the "
                                f"program bakes in ({old} -> {new})")
            return f"{name}: the optimizer state tensors were replaced"
        return check

    # ---- state_dict ----------------------------------------------------------------------
    def state_dict(self) -> dict:
        """The optimizer's state in torch's format::

            {"state": {param_index: {"step": Tensor, "exp_avg": Tensor, ...}},
             "param_groups": [{"lr": 0.001, ..., "params": [0, 1, ...]}, ...]}

        Parameters are numbered in group order.  The tensors are the live state tensors,
        as in torch; `tg.save` writes a copy.
        """
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            for p in g["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in g["params"]]
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a `state_dict()` (torch's Optimizer.load_state_dict).

        Hyper-parameters of each group are replaced by the saved ones; floating state
        tensors are cast to their parameter's dtype (except ``step``, as torch).  Values are
        written into existing state tensors where shapes and dtypes allow, so a compiled
        step that lifted them keeps working without a retrace.

        Raises:
            ValueError: a different number of groups or of parameters in a group.
            KeyError: the dict lacks ``"state"`` or ``"param_groups"``.
        """
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for g, sg in zip(self.param_groups, saved_groups):
            if len(g["params"]) != len(sg["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        id_map = {}
        for g, sg in zip(self.param_groups, saved_groups):
            id_map.update(zip(sg["params"], g["params"]))
        loaded = {}
        for k, values in state_dict["state"].items():
            if k not in id_map:
                raise ValueError(f"{type(self).__name__}.load_state_dict: state for parameter "
                                 f"index {k!r}, which no param group lists")
            loaded[id(id_map[k])] = (id_map[k], values)
        for p in [p for p in self.state if id(p) not in loaded]:
            del self.state[p]
        for p, values in loaded.values():
            s = self.state[p]
            for key in [key for key in s if key not in values]:
                del s[key]
            for key, v in values.items():
                s[key] = _load_state_value(s.get(key), v, p, key)
        for g, sg in zip(self.param_groups, saved_groups):
            for k in [k for k in g if k != "params" and k not in sg]:
                del g[k]
            for k, v in sg.items():
                if k != "params":
                    g[k] = copy.deepcopy(v)


def real_views(*tensors) -> list:
    """The (..., 2) real views (`tg.view_as_real`) of complex tensors (None stays None):
    torch's Adam, RMSprop and Adagrad update a complex parameter as its real view, so their
    moments are per real and imaginary component (a squared gradient is ``(re**2, im**2)``,
    not ``|g|**2``).  In-place updates of the views write through into the complex
    parameter and state tensors."""
    return [None if t is None else view_as_real(t) for t in tensors]


def _load_state_value(current, value, param: Tensor, key: str):
    if not isinstance(value, Tensor):
        return copy.deepcopy(value)
    arr = np.array(value._concrete("Optimizer.load_state_dict"))   # a copy: no aliasing
    if key != "step" and value.dtype.is_floating_point and param.dtype.is_floating_point:
        arr = arr.astype(param.dtype.numpy)
    if (isinstance(current, Tensor) and current.shape == arr.shape
            and current.dtype.numpy == arr.dtype):
        current._data = arr      # in place: keeps the identity a compiled step lifted
        current._vc[0] += 1
        return current
    return Tensor(arr)
