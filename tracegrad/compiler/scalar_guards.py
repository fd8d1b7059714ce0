"""Guards on the Python numbers a traced function may have baked into its program.

A trace records ops on tensors; a Python float it reads along the way (a module-level
``lr`` that the script anneals, ``args.clip``, ``group["lr"]`` in a hand-written
optimizer's ``step()``, a module's ``self.p``) becomes a constant of the program.  When
that number changes later, reusing the program would compute with the old value,
silently.  `ScalarGuards.collect` snapshots the numbers a call can reach the way the
function's code names them, and a cached program runs only while the snapshot still
holds; a change retraces with the reason in words (``global lr changed: 0.1 -> 0.025``),
as torch.compile's guards do.

What is watched (a number is a ``bool``, ``int`` or ``float``, NumPy scalars included):
- the globals the function's code names (and the code of nested functions, and of the
  plain Python functions it calls by a global name, three levels deep, outside
  tracegrad), and one level of attributes of a global object that the code names
  (``args.lr``); the function's closure cells likewise;
- the numbers of each param group of an optimizer whose parameters the trace lifted,
  when the optimizer's class has its own ``step()`` (tracegrad's optimizers read their
  hyper-parameters as program inputs instead: optim/optimizer.py);
- the numeric attributes of the modules the trace ran (``Dropout.p``, ``eps``);
- the numbers directly inside a list or dict that a global or closure variable the code
  names holds (``lr[0]``, ``cfg["clip"]``; their first `_MAX_ITEMS` entries), and a
  tuple of numbers held there as one value (``betas = (0.9, 0.99)`` rebound).

A number the traced call itself changed is the function's own state (a step counter),
not an input of the program: it is left unguarded, so such a function does not retrace
on every call.  Numbers reached in other ways (an entry of a list inside a dict, an
attribute two levels down) are not watched: pass them as arguments (static arguments
are part of the call key) or keep them in tensors.
"""
from __future__ import annotations

import numbers
import types

from .. import _state
from .guards import GuardFailure

_DEPTH = 3          # how many calls deep global functions are followed
_MAX_WATCHED = 512  # a bound on the snapshot (a check runs on every call)
_MAX_ITEMS = 64     # entries watched per list or dict


def is_number(v) -> bool:
    return isinstance(v, numbers.Number) and not isinstance(v, complex)


def _watched_value(v) -> bool:
    """A number, or a (short) tuple of numbers: a value a trace can bake in, compared whole."""
    return is_number(v) or (isinstance(v, tuple) and 0 < len(v) <= _MAX_ITEMS
                            and all(is_number(e) for e in v))


def _codes(code: types.CodeType):
    """`code` and the code objects nested in it (lambdas, inner functions, comprehensions)."""
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _codes(c)


def _user_function(f) -> bool:
    """A plain Python function of the user's (not of tracegrad, NumPy, jax or the stdlib)."""
    if not isinstance(f, types.FunctionType):
        return False
    filename = f.__code__.co_filename
    return not (filename.startswith(_state._package_dirs()) or "site-packages" in filename
                or filename.startswith("<frozen"))


def _plain_object(v) -> bool:
    """An object whose attributes a script keeps settings in (argparse.Namespace, a config
    class instance): not a module, class, function, tensor or container."""
    return (hasattr(v, "__dict__") and not isinstance(
        v, (types.ModuleType, type, types.FunctionType, types.MethodType,
            types.BuiltinFunctionType)) and not hasattr(v, "_data")
            and not hasattr(v, "parameters"))


class ScalarGuards:
    """A snapshot of the numbers a call can reach; see the module docstring.

    ``watched``: ``(kind, owner, key, value, label)`` rows; kind ``"global"``/``"item"``
    read ``owner[key]``, ``"attr"`` reads ``getattr(owner, key)``, ``"cell"`` reads
    ``owner.cell_contents``.
    """

    __slots__ = ("watched",)

    def __init__(self, watched: list):
        self.watched = watched

    @classmethod
    def collect(cls, fn, modules=(), optimizers=()) -> ScalarGuards:
        """The numbers `fn`'s code names, the numeric attributes of `modules` and the numbers
        in the param groups of `optimizers`, with their values now."""
        rows: list = []
        seen: set = set()

        def watch(kind, owner, key, value, label):
            k = (kind, id(owner), key)
            if k not in seen and len(rows) < _MAX_WATCHED:
                seen.add(k)
                rows.append((kind, owner, key, value, label))

        def attrs_of(obj, names, label):
            d = getattr(obj, "__dict__", None)
            if not isinstance(d, dict):
                return
            for name in names:
                v = d.get(name)
                if v is not None and is_number(v):
                    watch("attr", obj, name, v, f"{label}.{name}")

        def items_of(container, label):
            # a list or dict mutated in place keeps its identity, so its entries are watched
            # one by one (the script's ``lr[0] /= 4``, ``cfg["clip"] = 0.5``)
            if isinstance(container, dict):
                pairs = [(k, v) for k, v in list(container.items())[:_MAX_ITEMS]
                         if isinstance(k, (str, int))]
            elif isinstance(container, list):
                pairs = list(enumerate(container[:_MAX_ITEMS]))
            else:
                return
            for k, v in pairs:
                if _watched_value(v):
                    watch("item", container, k, v, f"{label}[{k!r}]")

        def scan(f, depth):
            code = getattr(f, "__code__", None)
            if code is None or depth > _DEPTH:
                return
            names = set()
            for c in _codes(code):
                names.update(c.co_names)
            g = f.__globals__
            for name in names:
                if name not in g:
                    continue
                v = g[name]
                if _watched_value(v):
                    watch("global", g, name, v, f"global {name}")
                elif _user_function(v) and v is not f:
                    scan(v, depth + 1)
                elif _plain_object(v):
                    attrs_of(v, names, name)
                else:
                    items_of(v, f"global {name}")
            for var, cell in zip(code.co_freevars, f.__closure__ or ()):
                try:
                    v = cell.cell_contents
                except ValueError:     # an empty cell (assigned later)
                    continue
                if _watched_value(v):
                    watch("cell", cell, None, v, f"closure variable {var}")
                elif _plain_object(v):
                    attrs_of(v, names, var)
                else:
                    items_of(v, f"closure variable {var}")

        target = fn
        if not hasattr(fn, "__code__"):          # a callable object (an nn.Module): its call
            target = getattr(type(fn), "forward", None) or getattr(type(fn), "__call__", None)
        if hasattr(target, "__func__"):          # a bound method
            target = target.__func__
        if target is not None:
            scan(target, 0)
        for m in modules:
            attrs_of(m, [k for k in vars(m) if k != "training"], type(m).__name__)
        for opt in optimizers:
            name = type(opt).__name__
            for i, group in enumerate(getattr(opt, "param_groups", ())):
                for k, v in group.items():
                    if is_number(v):
                        watch("item", group, k, v, f"{name}.param_groups[{i}][{k!r}]")
        return cls(rows)

    @classmethod
    def of_modules(cls, snapshots) -> ScalarGuards:
        """Rows of ``(module, {attribute: value before it ran})`` snapshots (the tracer's)."""
        return cls([("attr", m, k, v, f"{type(m).__name__}.{k}")
                    for m, numbers_ in snapshots for k, v in numbers_.items()])

    def __add__(self, other: ScalarGuards) -> ScalarGuards:
        return ScalarGuards(self.watched + other.watched)

    def unchanged_in(self, other: ScalarGuards) -> ScalarGuards:
        """The rows whose value `other` (a later snapshot) still has: what the traced call
        itself changed is its own state, not an input."""
        later = {(kind, id(owner), key): value for kind, owner, key, value, _ in other.watched}
        return ScalarGuards([r for r in self.watched
                             if _same(later.get((r[0], id(r[1]), r[2]), _MISSING), r[3])])

    def __call__(self) -> GuardFailure | None:
        """None while every watched number holds its value, else why not (a trace guard)."""
        for kind, owner, key, value, label in self.watched:
            if kind == "cell":
                try:
                    now = owner.cell_contents
                except ValueError:
                    now = _MISSING
            elif kind == "attr":
                now = vars(owner).get(key, _MISSING)
            else:   # a dict's entry or a list's item
                try:
                    now = owner[key]
                except (KeyError, IndexError):
                    now = _MISSING
            if not _same(now, value):
                shown = "deleted" if now is _MISSING else repr(now)
                return GuardFailure(f"{label} changed: {value!r} -> {shown} (a Python number "
                                    "the program baked in)")
        return None

    def __len__(self) -> int:
        return len(self.watched)


_MISSING = object()


def _same(a, b) -> bool:
    # the same type and value: 1 -> 1.0 or True -> 1 changes what a trace computes
    return type(a) is type(b) and (a == b or a != a and b != b)


def own_step_optimizers(candidates) -> list:
    """The optimizers among `candidates` whose class has its own ``step()``: it reads its
    param groups' Python numbers while tracing (tracegrad's optimizers read tensors)."""
    out = []
    for opt in candidates:
        step = getattr(type(opt), "step", None)
        if (getattr(opt, "param_groups", None) is not None and step is not None
                and not getattr(step, "__module__", "").startswith("tracegrad.")):
            out.append(opt)
    return out


def lifting(optimizers, lifted_ids: set) -> list:
    """The optimizers with a parameter among the lifted tensors (`lifted_ids`: their ids)."""
    return [opt for opt in optimizers
            if any(id(p) in lifted_ids for g in opt.param_groups for p in g.get("params", ()))]
