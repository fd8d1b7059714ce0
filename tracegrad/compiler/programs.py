"""`CompiledFunction.programs`: each cached program of a `tg.compile`d function, readable.

    step = tg.compile(train_step)
    step(x, y)
    for p in step.programs:
        print(p)            # guards, sizes, run count
        p.forward           # the traced program (an IR Graph)
        p.backward          # the static backward program of returned tensors, or None
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

from tracegrad.ir import types as T
from tracegrad.ir.graph import Graph
from tracegrad.ir.summary import saved_rows


@dataclass(frozen=True)
class CompiledProgram:
    """One cached program of a compiled function (a snapshot taken when `.programs` is read).

    Attributes:
        name: the function's name.
        hash: short structural hash of the program text (the ``TRACEGRAD_DUMP`` file name).
        guards: readable conditions a call must meet to reuse this program.
        forward: the traced program: forward ops, any inlined backward and
            optimizer update; its inputs are the tensor arguments, then the
            lifted tensors (parameters, state), then constants.
        backward: the static backward program run by the ``grad_fn`` of
            returned tensors that require grad (None when there are none).
        saved: `tracegrad.ir.summary.SavedRow` per value `backward` reads
            from the forward, with where it was computed and why it is saved.
        saved_bytes: bytes of those values that are not program inputs.
        runs: how many calls ran this program (the call that traced it included).
        passes: the `passes.PassRecord`s of the compiled pipeline that made `forward`.
        backward_passes: those of the pipeline that made `backward` (autodiff ... fuse).
    """

    name: str
    hash: str
    guards: tuple
    forward: Graph
    backward: Graph | None
    saved: tuple
    saved_bytes: int
    runs: int
    passes: tuple = ()
    backward_passes: tuple = ()

    def __str__(self) -> str:
        bwd = (f", backward {len(self.backward.nodes)} nodes reading {len(self.saved)} saved "
               "values" if self.backward is not None else "")
        head = (f"program {self.name} [{self.hash}]: {len(self.forward.nodes)} nodes{bwd}; "
                f"ran {self.runs} time{'s' if self.runs != 1 else ''}")
        return "\n".join([head, "  reused when:"] + [f"    {g}" for g in self.guards])


def _describe_args(key, path: str, out: list) -> None:
    kind = key[0]
    if kind == "T":
        _, shape, dtype, requires_grad, first = key
        out.append(f"{path} is a tensor {T.from_numpy(dtype).short}"
                   f"[{','.join(map(str, shape))}] with "
                   f"requires_grad={requires_grad} (program input %{first})")
    elif kind == "S":
        out.append(f"{path} == {key[2]!r} ({key[1]}, static)")
    elif kind == "dict":
        out.append(f"{path} is a dict with keys {[k for k, _ in key[1]]}")
        for k, v in key[1]:
            _describe_args(v, f"{path}[{k!r}]", out)
    else:
        out.append(f"{path} is a {kind} of length {len(key[1])}")
        for i, v in enumerate(key[1]):
            _describe_args(v, f"{path}[{i}]", out)


def _param_names(fn) -> list:
    try:
        return [p.name for p in inspect.signature(fn).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return []


def describe_guards(fn, key, entry) -> tuple:
    """The guards of cache entry `entry` of compiled `fn`, stored under cache key `key`
    (`compile._arg_key` of the arguments, of the keyword arguments, grad mode, then the
    autocast region), as sentences; arguments are named as `fn` names them."""
    (_, args), (_, kwargs), grad_enabled, *more = key
    params = _param_names(fn)
    out: list = []
    for i, a in enumerate(args):
        _describe_args(a, f"argument {params[i] if i < len(params) else f'args[{i}]'}", out)
    for k, v in kwargs:
        _describe_args(v, f"keyword argument {k}", out)
    out.append(f"grad mode is {'enabled' if grad_enabled else 'disabled'}")
    if more:   # the autocast region: None, or (op table, low-precision dtype)
        region = more[0]
        out.append("outside tg.autocast" if region is None else
                   f"inside tg.autocast with dtype {region[1]} (table {region[0]})")
        out += [f"cache key entry {k} is {m!r}" for k, m in enumerate(more[1:], start=4)]
    names = _parameter_names(entry.trace.module_guards)
    position = {}
    for j, (ref, typ, rg, hooks, *_) in enumerate(entry.lifted):
        t = ref()
        position[id(t)] = k = entry.n_args + j
        what = f" ({names[id(t)]})" if id(t) in names else ""
        hooked = "with the same hooks" if any(hooks) else "with no hooks"
        out.append(f"program input %{k}{what} is the same {typ} tensor object as at trace "
                   f"time, requires_grad={rg}, {hooked}")
    for ref, training in entry.trace.module_guards:
        m = ref()
        name = type(m).__name__ if m is not None else "a (freed) module"
        out.append(f"{name}.training is {training}")
    for ref, grad_ref in entry.trace.grad_guards:
        t = ref()
        if t is None:
            what = "a freed tensor"
        elif id(t) in position:
            what = f"program input %{position[id(t)]}"
        else:
            what = f"a {t._type} tensor"
        out.append(f".grad of {what} is "
                   f"{'None' if grad_ref is None else 'the same tensor object as at trace time'}")
    for check in getattr(entry.trace, "guards", ()):
        doc = (getattr(check, "__doc__", None) or "").strip().splitlines()
        owner = str(getattr(check, "__qualname__", type(check).__name__)).split(".")[0]
        out.append(doc[0] if doc else
                   f"the check {owner} registered while tracing still passes")
    return tuple(out)


def _parameter_names(module_guards) -> dict:
    """id(tensor) -> its name in the outermost module that holds it (``0.weight``)."""
    names: dict = {}
    for ref, _ in module_guards:
        m = ref()
        if m is not None and hasattr(m, "named_parameters"):
            for name, t in m.named_parameters():
                names.setdefault(id(t), f"{type(m).__name__} {name}")
    return names


def describe(compiled, key, entry) -> CompiledProgram:
    plan = entry.grad_plan
    backward = plan.backward if plan is not None else None
    saved, nbytes, backward_passes = (), 0, ()
    if plan is not None:
        part = plan.partition
        saved, nbytes = tuple(saved_rows(backward, part.saved, part.reasons)), part.saved_bytes
        backward_passes = part.passes
    return CompiledProgram(compiled.__name__, entry.hash, describe_guards(compiled.fn, key, entry),
                           entry.graph, backward, saved, nbytes, entry.runs,
                           tuple(entry.trace.passes), backward_passes)
