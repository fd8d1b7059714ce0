"""The reference executor: runs an IR graph node by node on NumPy.

Slow, simple, transparent.  Two memory rules keep its peak low: a value is
dropped right after its last use, and a fusion region (passes/fuse.py) is
evaluated in row blocks, so values interior to the region only ever exist
one block at a time (a region that fits in one block runs node by node).
With ``check_nan`` it stops at the first node whose output holds NaN/Inf and
names it with its source line.  A program run many times (a cached backward
program) is prepared once: `Schedule` numbers its values, looks its kernels
up and finds each value's last use, leaving ~1 us of work per node per run.
"""
from __future__ import annotations

import math

import numpy as np

from tracegrad.ir.graph import Graph, Node
from tracegrad.ir.printer import format_loc
from tracegrad.ir.registry import ELEMENTWISE, get

BLOCK_ELEMENTS = 1 << 16   # elements per row block of a fusion region (256 KiB of f32)


def run(g: Graph, inputs: list, *, check_nan: bool = False, blocked: bool = True) -> list:
    """Execute `g` on NumPy arrays; returns one array per graph output.

    Args:
        blocked: evaluate fusion regions in row blocks (False: node by node; with
            ``check_nan`` always node by node).
    Raises:
        FloatingPointError: with ``check_nan``, at the first node producing NaN/Inf.
    """
    if len(inputs) != len(g.inputs):
        raise ValueError(f"@{g.name} takes {len(g.inputs)} inputs, got {len(inputs)}")
    if not check_nan:
        return Schedule(g, blocked).run(inputs)
    # NaN checks name the node that first produced one: node by node, no row blocks
    env = {id(v): np.asarray(a) for v, a in zip(g.inputs, inputs)}
    last_use = _last_uses(g)
    with np.errstate(all="ignore"):
        for i, n in enumerate(g.nodes):
            _run_node(g, i, n, env, check_nan)
            _drop_dead((n,), env, last_use, i + 1)
    return [env[id(v)] for v in g.outputs]


class Schedule:
    """`g` prepared for repeated runs: values numbered, kernels looked up, the values each
    step leaves dead found once, and each fusion region large enough to need row blocks
    (`_multi_block`, `_blockable`) made one step that `_run_blocked` evaluates.

    `Executable` keeps one per program; `run` builds one per call (anomaly mode's NaN
    checks, ``check_nan``, take the node-by-node path in `run` instead).
    """

    def __init__(self, g: Graph, blocked: bool = True):
        self.name = g.name
        self.n_inputs = len(g.inputs)
        slot = {id(v): i for i, v in enumerate(g.inputs)}
        for n in g.nodes:
            for o in n.outputs:
                slot[id(o)] = len(slot)
        self.n_slots = len(slot)
        self.outputs = [slot[id(v)] for v in g.outputs]
        last_use = _last_uses(g)
        groups = []   # (first node index, nodes): one node, or a blocked region
        i, nodes = 0, g.nodes
        while i < len(nodes):
            j = i + 1
            if blocked and nodes[i].region is not None:
                while j < len(nodes) and nodes[j].region == nodes[i].region:
                    j += 1
            run_ = nodes[i:j]
            if len(run_) > 1 and _multi_block(run_) and _blockable(run_, last_use, j):
                groups.append((i, run_))
            else:   # one step per node
                groups.extend((i + k, [n]) for k, n in enumerate(run_))
            i = j
        keep = set(self.outputs)
        last = {}   # slot -> index of the group reading it last
        for k, (_, run_) in enumerate(groups):
            for n in run_:
                for v in n.inputs:
                    last[slot[id(v)]] = k
        drops: list[list] = [[] for _ in groups]
        for s_, k in last.items():
            if s_ not in keep:
                drops[k].append(s_)
        self.steps = []
        for (first, run_), d in zip(groups, drops):
            if len(run_) == 1:
                n = run_[0]
                self.steps.append((get(n.op).kernel_for("numpy"),
                                   tuple(slot[id(v)] for v in n.inputs), n.attrs,
                                   tuple(slot[id(o)] for o in n.outputs), tuple(d)))
            else:   # a blocked region: what it reads from outside, what it exports
                inside = {id(o) for n in run_ for o in n.outputs}
                reads = {id(v): v for n in run_ for v in n.inputs if id(v) not in inside}
                end = first + len(run_)
                exports = [o for n in run_ for o in n.outputs if last_use.get(id(o), -1) >= end]
                region = (run_, last_use, end, [(k, slot[k]) for k in reads],
                          [(id(o), slot[id(o)]) for o in exports])
                self.steps.append((None, region, None, None, tuple(d)))

    def run(self, inputs: list) -> list:
        if len(inputs) != self.n_inputs:
            raise ValueError(f"@{self.name} takes {self.n_inputs} inputs, got {len(inputs)}")
        env: list = [None] * self.n_slots
        for i, a in enumerate(inputs):
            env[i] = a if type(a) is np.ndarray else np.asarray(a)
        read = env.__getitem__
        with np.errstate(all="ignore"):
            for kernel, ins, attrs, outs, drops in self.steps:
                if kernel is None:
                    run_, last_use, end, reads, exports = ins
                    local = {k: env[s_] for k, s_ in reads}
                    _run_blocked(run_, local, last_use, end)
                    for k, s_ in exports:
                        env[s_] = local[k]
                else:
                    out = kernel(np, *map(read, ins), **attrs)
                    if type(out) is tuple:
                        for k, a in zip(outs, out):
                            env[k] = np.asarray(a)
                    else:
                        env[outs[0]] = out if type(out) is np.ndarray else np.asarray(out)
                for k in drops:   # dead after this step: memory goes back at once
                    env[k] = None
        return [env[k] for k in self.outputs]


def prepare(g: Graph):
    """A function running `g` (``inputs -> outputs``), as `run` with its defaults would,
    with the per-graph work done once."""
    return Schedule(g).run


def _multi_block(run_) -> bool:
    shape = max((o.shape for n in run_ for o in n.outputs), key=len)
    if not shape:
        return False
    return shape[0] > max(1, BLOCK_ELEMENTS // max(1, math.prod(shape[1:])))


def _drop_dead(ran, env: dict, last_use: dict, next_index: int) -> None:
    """Forget the inputs of `ran` that no node from `next_index` on reads."""
    for m in ran:
        for v in m.inputs:
            if last_use.get(id(v), -1) < next_index:
                env.pop(id(v), None)


def _last_uses(g: Graph) -> dict[int, int]:
    """id(value) -> index of the last node reading it (graph outputs: never dropped)."""
    last = {}
    for i, n in enumerate(g.nodes):
        for v in n.inputs:
            last[id(v)] = i
    for v in g.outputs:
        last[id(v)] = len(g.nodes)
    return last


def _run_node(g: Graph, i: int, n: Node, env: dict, check_nan: bool) -> None:
    out = get(n.op).kernel_for("numpy")(np, *[env[id(v)] for v in n.inputs], **n.attrs)
    outs = out if isinstance(out, tuple) else (out,)
    for o, a in zip(n.outputs, outs):
        a = np.asarray(a)
        if check_nan and a.dtype.kind in "fc" and not np.isfinite(a).all():
            where = format_loc(n.loc) or "unknown source"
            raise FloatingPointError(f"node {i} ({n.op} -> {o.type}) of @{g.name} produced "
                                     f"NaN/Inf; recorded at {where}")
        env[id(o)] = a


def _blockable(run_: list[Node], last_use: dict, end: int) -> bool:
    """Every node works row-wise over one leading dim, and exported values keep that dim."""
    shape = max((o.shape for n in run_ for o in n.outputs), key=len)
    if not shape or shape[0] < 2:
        return False
    rows = shape[0]
    read_inside = {id(v) for n in run_ for v in n.inputs}
    for n in run_:
        flags = get(n.op).flags
        out = n.outputs[0]
        if n.op in ("sum", "amax"):
            if len(n.inputs[0].shape) != len(shape):
                return False
            if 0 in n.attrs["dim"]:     # accumulated across blocks: must end the run
                if id(out) in read_inside:
                    return False
                continue
        elif not (flags & ELEMENTWISE or n.op == "expand"):
            return False
        if len(out.shape) != len(shape) and not (n.op in ("sum", "amax")
                                                 and not n.attrs["keepdim"]):
            return False
        if out.shape[0] != rows:
            return False
    return True


def _rows_of(v, rows: int, ndim: int) -> bool:
    """Does value `v` carry the block dim (dim 0 of the region's shape)?"""
    return len(v.shape) == ndim and v.shape and v.shape[0] == rows


def _run_blocked(run_: list[Node], env: dict, last_use: dict, end: int) -> None:
    shape = max((o.shape for n in run_ for o in n.outputs), key=len)
    rows, ndim = shape[0], len(shape)
    inside = {id(o) for n in run_ for o in n.outputs}
    exports = [o for n in run_ for o in n.outputs if last_use.get(id(o), -1) >= end]
    results = {id(o): np.empty(o.shape, o.dtype.numpy) for o in exports}
    step = max(1, BLOCK_ELEMENTS // max(1, math.prod(shape[1:])))
    across = {id(n.outputs[0]): n.op for n in run_       # reductions over the block dim
              if n.op in ("sum", "amax") and 0 in n.attrs["dim"]}
    for start in range(0, rows, step):
        stop = min(rows, start + step)
        local: dict[int, np.ndarray] = {}
        for n in run_:
            args = []
            for v in n.inputs:
                if id(v) in inside:
                    args.append(local[id(v)])
                else:
                    a = env[id(v)]
                    args.append(a[start:stop] if _rows_of(v, rows, ndim) else a)
            attrs = n.attrs
            if n.op == "expand":
                attrs = {"size": (stop - start,) + tuple(attrs["size"][1:])}
            out = np.asarray(get(n.op).kernel_for("numpy")(np, *args, **attrs))
            local[id(n.outputs[0])] = out
        for o in exports:
            part = local[id(o)]
            if id(o) not in across:
                results[id(o)][start:stop] = part
            elif start == 0:
                results[id(o)][...] = part
            elif across[id(o)] == "sum":
                results[id(o)] += part
            else:
                np.maximum(results[id(o)], part, out=results[id(o)])
    env.update(results)
