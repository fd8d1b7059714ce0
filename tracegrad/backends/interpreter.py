"""The reference executor: runs an IR graph node by node on NumPy.

Slow, simple, transparent.  Two memory rules keep its peak low: a value is
dropped right after its last use, and a large fusion region (passes/fuse.py)
is evaluated in row blocks (`BlockedRegion`), so values interior to the region
only ever exist one block at a time and stay in the CPU cache between the
nodes that make and read them (smaller regions run node by node).
With ``check_nan`` it stops at the first node whose output holds NaN/Inf and
names it with its source line.  A program run many times (a cached backward
program) is prepared once: `Schedule` numbers its values, looks its kernels
up and finds each value's last use, leaving ~1 us of work per node per run.
"""
from __future__ import annotations

import math
from functools import partial

import ml_dtypes
import numpy as np

from tracegrad.ir.graph import Graph, Node
from tracegrad.ir.printer import format_loc
from tracegrad.ir.registry import Fusion, get

BLOCK_ELEMENTS = 1 << 16   # elements per row block of a fusion region (256 KiB of f32)
MIN_BLOCKED_ELEMENTS = 1 << 19   # smaller regions run node by node (see docs/passes.md)
_REDUCTIONS = (Fusion.REDUCE_SUM, Fusion.REDUCE_MAX)
# a sum across row blocks accumulates these in float32: adding block partials in float16
# loses what NumPy's own float16 sum (float32 inside) keeps (4096 ones summed to 2048)
_LOW_FLOATS = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


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
    step leaves dead found once, and each fusion region large enough to gain from row
    blocks made one step, a `BlockedRegion`.

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
        groups = []   # (nodes, BlockedRegion or None): one node, or a blocked region
        i, nodes = 0, g.nodes
        while i < len(nodes):
            j = i + 1
            if blocked and nodes[i].region is not None:
                while j < len(nodes) and nodes[j].region == nodes[i].region:
                    j += 1
            run_ = nodes[i:j]
            exported = [o for n in run_ for o in n.outputs if last_use.get(id(o), -1) >= j]
            region = BlockedRegion.plan(run_, exported, slot) if len(run_) > 1 else None
            if region is not None:
                groups.append((run_, region))
            else:   # one step per node
                groups.extend(([n], None) for n in run_)
            i = j
        keep = set(self.outputs)
        last = {}   # slot -> index of the group reading it last
        for k, (run_, _) in enumerate(groups):
            for n in run_:
                for v in n.inputs:
                    last[slot[id(v)]] = k
        drops: list[list] = [[] for _ in groups]
        for s_, k in last.items():
            if s_ not in keep:
                drops[k].append(s_)
        self.steps = []
        for (run_, region), d in zip(groups, drops):
            if region is None:
                n = run_[0]
                self.steps.append((get(n.op).kernel_for("numpy"),
                                   tuple(slot[id(v)] for v in n.inputs), n.attrs,
                                   tuple(slot[id(o)] for o in n.outputs), tuple(d)))
            else:
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
                    ins.run(env)
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


class BlockedRegion:
    """A fusion region compiled to run in row blocks, one pass over the region per block.

    The region's leading ``k`` dims are merged into one row dim (``rows`` = their product;
    the region's values are reshaped, which costs nothing on contiguous arrays) and the
    region is evaluated ``step`` rows at a time, each block of about `BLOCK_ELEMENTS`
    elements.  A block's values stay in the CPU cache from the node that makes them to the
    nodes that read them, where node-by-node evaluation streams every whole intermediate
    through memory; and a block's arrays are small enough for the allocator to hand back
    warm memory instead of fresh pages.  Values read after the region (exports) are
    written block by block into whole arrays; a reduction over the row dim is accumulated
    across blocks.  `plan` returns None for a region this scheme cannot split.

    Per block the work is one flat loop: every value the region touches has an index in
    one list (broadcast inputs, the current block of each rowed input, the block's
    intermediates), and each instruction is ``(kernel with its attrs bound, argument
    indices, result index)``, so there is no dict or shape logic per node per block.
    """

    def __init__(self, k, rows, step, n_vals, consts, rowed, instrs, last_instrs, exports):
        self.k, self.rows, self.step = k, rows, step
        self.n_vals, self.consts, self.rowed = n_vals, consts, rowed
        self.instrs, self.last_instrs, self.exports = instrs, last_instrs, exports

    @staticmethod
    def plan(run_: list[Node], exported: list, slot: dict) -> "BlockedRegion | None":
        """Compile `run_` (a region's nodes in order) whose values in `exported` are read
        after it; `slot` numbers the program's values.  None: run it node by node."""
        shape = tuple(max((n.inputs[0].shape if get(n.op).fusion in _REDUCTIONS
                           else n.outputs[0].shape for n in run_), key=len))
        if len(run_) < 2 or math.prod(shape) < MIN_BLOCKED_ELEMENTS:
            return None
        for k in range(len(shape), 0, -1):   # merge as many leading dims as the region allows
            lead = shape[:k]
            rows = math.prod(lead)
            step = max(1, BLOCK_ELEMENTS // max(1, math.prod(shape[k:])))
            if rows <= step:
                continue
            r = BlockedRegion._compile(run_, exported, slot, shape, k, rows, step)
            if r is not None:
                return r
        return None

    @staticmethod
    def _compile(run_, exported, slot, shape, k, rows, step):
        R = len(shape)
        lead = shape[:k]

        def layout(s):   # how a value of shape s meets the merged rows
            s = tuple(s)
            if len(s) == R and s[:k] == lead:
                return "rowed", (rows,) + s[k:]
            m = len(s) - (R - k)       # how many of its dims fall on merged dims
            if m <= 0:
                return "bcast", s
            if all(d == 1 for d in s[:m]):
                return "bcast", (1,) + s[m:]
            return None, None

        index: dict[int, int] = {}
        consts, rowed, instrs, last_instrs = [], [], [], []
        inside = {id(n.outputs[0]) for n in run_}
        read_inside = {id(v) for n in run_ for v in n.inputs}
        exported_ids = {id(v) for v in exported}
        across: dict[int, str] = {}
        for n in run_:
            if len(n.outputs) != 1:
                return None
            args = []
            for v in n.inputs:
                if id(v) not in index:
                    if id(v) in inside:
                        return None          # read before it is made: not a plain chain
                    kind, flat = layout(v.shape)
                    if kind is None:
                        return None
                    index[id(v)] = len(index)
                    (rowed if kind == "rowed" else consts).append((index[id(v)], slot[id(v)], flat))
                args.append(index[id(v)])
            out = n.outputs[0]
            attrs = dict(n.attrs)
            tail = attrs
            role = get(n.op).fusion
            if role in _REDUCTIONS:
                dims = sorted(d % R for d in n.attrs["dim"])
                merged = [d for d in dims if d < k]
                if merged and merged != list(range(k)):
                    return None              # reduces some merged dims but not others
                if not attrs["keepdim"] and id(out) in read_inside:
                    return None
                if merged:
                    if id(out) not in exported_ids:
                        return None          # a partial sum is only valid once accumulated
                    across[id(out)] = role.value   # "sum" or "max": how block partials combine
                    attrs["dim"] = (0,) + tuple(d - k + 1 for d in dims if d >= k)
                    attrs["keepdim"] = True
                else:
                    attrs["dim"] = tuple(d - k + 1 for d in dims)
            elif role is Fusion.BROADCAST:
                size = tuple(attrs["size"])
                if layout(size)[0] != "rowed":
                    return None
                attrs = {**attrs, "size": (step,) + size[k:]}
                tail = {**attrs, "size": ((rows - 1) % step + 1,) + size[k:]}
            elif role is not Fusion.ELEMENTWISE or layout(out.shape)[0] != "rowed":
                return None
            index[id(out)] = len(index)
            kernel = get(n.op).kernel_for("numpy")
            instrs.append((partial(kernel, np, **attrs), tuple(args), index[id(out)]))
            last_instrs.append((partial(kernel, np, **tail), tuple(args), index[id(out)]))
        exports = []
        for o in exported:
            if id(o) not in index:
                return None
            if id(o) in across:
                exports.append((index[id(o)], slot[id(o)], across[id(o)], tuple(o.shape),
                                o.dtype.numpy))
            else:   # rowed (a reduction within rows may have dropped trailing dims)
                if tuple(o.shape[:k]) != lead:
                    return None
                exports.append((index[id(o)], slot[id(o)], "rows", tuple(o.shape),
                                o.dtype.numpy))
        return BlockedRegion(k, rows, step, len(index), consts, rowed, instrs, last_instrs,
                             exports)

    def run(self, env: list) -> None:
        """Read the region's inputs from `env` (by slot), write its exports into it."""
        vals: list = [None] * self.n_vals
        for i, s_, flat in self.consts:
            vals[i] = env[s_].reshape(flat)
        rowed = [(i, env[s_].reshape(flat)) for i, s_, flat in self.rowed]
        results = []
        for i, s_, kind, shape, dtype in self.exports:
            if kind == "rows":
                flat = (self.rows,) + shape[self.k:]
                results.append((i, np.empty(flat, dtype), kind))
            else:
                results.append((i, None, kind))
        step, rows, instrs = self.step, self.rows, self.instrs
        for start in range(0, rows, step):
            stop = start + step
            for i, a in rowed:
                vals[i] = a[start:stop]
            if stop >= rows:
                instrs = self.last_instrs
            for f, args, o in instrs:
                vals[o] = f(*[vals[j] for j in args])
            for n, (i, res, kind) in enumerate(results):
                part = vals[i]
                if kind == "rows":
                    res[start:stop] = part
                elif res is None:   # float16/bfloat16 partial sums add up in float32
                    acc = np.float32 if kind == "sum" and part.dtype in _LOW_FLOATS else None
                    results[n] = (i, np.array(part, dtype=acc), kind)
                elif kind == "sum":
                    res += part
                else:
                    np.maximum(res, part, out=res)
        for (i, res, kind), (_, s_, _, shape, dtype) in zip(results, self.exports):
            env[s_] = res.reshape(shape).astype(dtype, copy=False)

