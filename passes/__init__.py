"""tracegrad.passes: autodiff, pruning, partitioning and the pass manager.

Every program tracegrad builds goes through one of three pipelines, each run by a
`PassManager` (so each step is verified under ``TRACEGRAD_VERIFY=1``, timed, dumped under
``TRACEGRAD_DUMP`` and recorded as a `PassRecord`):

- backward programs (`build_backward`: the eager engine, and the backward program behind
  a `tg.compile` result that requires grad):
  autodiff -> prune -> simplify -> cse -> prune (`optimized_joint`) -> partition -> fuse;
- compiled programs (`optimize_program`, `tg.compile`): prune -> simplify -> cse -> prune;
- `tg.explain`: prune on the traced forward, then `optimized_joint` -> partition.

The optional passes (`OPTIONAL_PASSES`) can be turned off with
``TRACEGRAD_DISABLE_PASSES`` (settings.py); autodiff, the partition and the compiled
program's pruning always run, since they make the program.
"""
from __future__ import annotations

import dataclasses

from tracegrad.ir.graph import Graph, Value

from . import settings
from .autodiff import Joint, autodiff, autodiff_pass
from .cse import cse
from .fuse import fuse
from .manager import PassManager, PassRecord, format_records, gc_paused
from .partition import Partition, clone_nodes, partition
from .prune import prune
from .settings import OPTIONAL_PASSES, disabled_passes
from .simplify import simplify


def _manager(steps: list, disable: frozenset, verify_each: bool | None, on_pass) -> PassManager:
    """A PassManager of `steps` less the optional ones in `disable`."""
    manager = PassManager([s for s in steps if s[0] not in disable], on_pass=on_pass)
    if verify_each is not None:
        manager.verify_each = verify_each
    return manager


def optimized_joint(fwd: Graph, wrt: list[Value], *, disable: frozenset | None = None,
                    verify_each: bool | None = None, on_pass=None) -> Joint:
    """autodiff, then prune -> simplify -> cse -> prune on the backward nodes of the joint graph
    (forward nodes keep their identity: the partition needs it). `disable` names optional passes
    to skip (default: the ``TRACEGRAD_DISABLE_PASSES`` environment variable).  The Joint's
    ``passes`` holds the PassRecords."""
    if disable is None:
        disable = disabled_passes()
    made: list[Joint] = []   # autodiff's Joint: its forward node ids are frozen below

    def frozen() -> frozenset:   # forward values are fed from the tape: rewrite backward only
        return made[0].forward

    steps = [("autodiff", autodiff_pass(wrt, made)),
             ("prune", prune),
             ("simplify", lambda g: simplify(g, frozen=frozen())),
             ("cse", lambda g: cse(g, frozen=frozen())),
             ("prune", prune)]
    g, records = _manager(steps, disable, verify_each, on_pass).run(fwd)
    joint = made[0]
    # `joint` keeps the original nodes alive, so no id in `frozen` was reused by a new node
    return Joint(g, frozenset(id(n) for n in g.nodes if id(n) in joint.forward),
                 joint.cotangents, tuple(records))


def partition_joint(joint: Joint, *, policy: str = "save_all", recompute: frozenset = frozenset(),
                    fused: bool = True, disable: frozenset | None = None,
                    verify_each: bool | None = None, on_pass=None) -> Partition:
    """partition (-> fuse when `fused`) of an `optimized_joint`, through a PassManager; the
    Partition's ``passes`` are the joint's records followed by these."""
    if disable is None:
        disable = disabled_passes()
    made: list[Partition] = []

    def run_partition(g: Graph):
        part = partition(joint, policy=policy, recompute=recompute)
        made.append(part)
        return part.backward, part.report(policy)

    steps = [("partition", run_partition)] + ([("fuse", fuse)] if fused else [])
    g, records = _manager(steps, disable, verify_each, on_pass).run(joint.graph)
    return dataclasses.replace(made[0], backward=g, passes=joint.passes + tuple(records))


@gc_paused()
def build_backward(fwd: Graph, wrt: list[Value], *, verify_each: bool | None = None,
                   on_pass=None, disable: frozenset | None = None,
                   policy: str = "save_all") -> Partition:
    """The static backward program of `fwd` with respect to `wrt`.

    Returns a Partition whose ``backward`` graph takes one cotangent per
    forward output, then the saved forward values, and returns one gradient
    per `wrt` value; its ``passes`` record every pass that built it.  `disable`
    names optional passes to skip (default: the ``TRACEGRAD_DISABLE_PASSES``
    environment variable); autodiff and the partition always run, since they
    make the program. `policy` is the partition's (passes/partition.py): the
    eager engine keeps ``save_all`` because the tape already holds every
    forward value; `tg.compile` uses ``min_bytes`` for the programs behind
    returned tensors.
    """
    if disable is None:
        disable = disabled_passes()
    joint = optimized_joint(fwd, wrt, disable=disable, verify_each=verify_each, on_pass=on_pass)
    return partition_joint(joint, policy=policy, disable=disable, verify_each=verify_each,
                           on_pass=on_pass)


@gc_paused()
def optimize_program(g: Graph, *, disable: frozenset | None = None,
                     verify_each: bool | None = None,
                     on_pass=None) -> tuple[Graph, list[PassRecord]]:
    """The pipeline of a traced (`tg.compile`) program: prune -> simplify -> cse -> prune.

    Inputs keep their identity and outputs their order, so what the compiler recorded by
    position (lifted inputs, written-back outputs) stays valid; the values computed are
    the same (simplify's rules are exact, CSE never merges random ops).  Pruning always
    runs (traced programs hold dead nodes); `disable` as in `build_backward`.
    """
    if disable is None:
        disable = disabled_passes()
    steps = [("prune", prune), ("simplify", simplify), ("cse", cse), ("prune", prune)]
    manager = _manager([s for s in steps if s[0] not in disable or s[0] == "prune"], frozenset(),
                       verify_each, on_pass)
    return manager.run(g)


__all__ = ["OPTIONAL_PASSES", "Joint", "PassManager", "PassRecord", "Partition", "autodiff",
           "build_backward", "clone_nodes", "cse", "disabled_passes", "format_records", "fuse",
           "gc_paused", "optimize_program", "optimized_joint", "partition", "partition_joint",
           "prune", "settings", "simplify"]
