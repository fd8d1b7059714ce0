"""tracegrad.passes: autodiff, pruning, partitioning and the pass manager.

`build_backward` is the pipeline every backward program goes through:
autodiff -> prune -> simplify -> cse -> prune -> partition -> fuse (-> verify).
"""
from __future__ import annotations

from tracegrad.ir.graph import Graph, Value
from tracegrad.ir.verifier import verify

import dataclasses
import os

from .autodiff import Joint, autodiff
from .cse import cse
from .fuse import fuse
from .manager import PassManager, gc_paused
from .partition import Partition, clone_nodes, partition
from .prune import prune
from .simplify import simplify


OPTIONAL_PASSES = ("prune", "simplify", "cse", "fuse")


def disabled_passes() -> frozenset:
    """The optional passes turned off by ``TRACEGRAD_DISABLE_PASSES`` (comma-separated names
    from `OPTIONAL_PASSES`): for bisecting a suspected pass bug; gradients never change."""
    names = frozenset(filter(None, os.environ.get("TRACEGRAD_DISABLE_PASSES", "").split(",")))
    unknown = names - set(OPTIONAL_PASSES)
    if unknown:
        raise ValueError(f"TRACEGRAD_DISABLE_PASSES: unknown pass(es) {sorted(unknown)}; "
                         f"the optional passes are {OPTIONAL_PASSES}")
    return names


def optimized_joint(fwd: Graph, wrt: list[Value], *, disable: frozenset | None = None,
                    verify_each: bool | None = None, on_pass=None) -> Joint:
    """autodiff, then prune -> simplify -> cse -> prune on the backward nodes of the joint graph
    (forward nodes keep their identity: the partition needs it). `disable` names optional passes
    to skip (default: the ``TRACEGRAD_DISABLE_PASSES`` environment variable)."""
    if disable is None:
        disable = disabled_passes()
    joint = autodiff(fwd, wrt)
    frozen = joint.forward   # forward values are fed from the tape: rewrite backward nodes only
    steps = [("prune", prune),
             ("simplify", lambda g: simplify(g, frozen=frozen)),
             ("cse", lambda g: cse(g, frozen=frozen)),
             ("prune", prune)]
    manager = PassManager([s for s in steps if s[0] not in disable], on_pass=on_pass)
    if verify_each is not None:
        manager.verify_each = verify_each
    if on_pass is not None:
        on_pass("autodiff", joint.graph)
    g, _ = manager.run(joint.graph)
    # `joint` keeps the original nodes alive, so no id in `frozen` was reused by a new node
    return Joint(g, frozenset(id(n) for n in g.nodes if id(n) in frozen), joint.cotangents)


@gc_paused()
def build_backward(fwd: Graph, wrt: list[Value], *, verify_each: bool | None = None,
                   on_pass=None, disable: frozenset | None = None,
                   policy: str = "save_all") -> Partition:
    """The static backward program of `fwd` with respect to `wrt`.

    Returns a Partition whose ``backward`` graph takes one cotangent per
    forward output, then the saved forward values, and returns one gradient
    per `wrt` value. `disable` names optional passes to skip (default: the
    ``TRACEGRAD_DISABLE_PASSES`` environment variable); autodiff and the
    partition always run, since they make the program. `policy` is the
    partition's (passes/partition.py): the eager engine keeps ``save_all``
    because the tape already holds every forward value; `tg.compile` uses
    ``min_bytes`` for the programs behind returned tensors.
    """
    if disable is None:
        disable = disabled_passes()
    if verify_each is None:
        verify_each = os.environ.get("TRACEGRAD_VERIFY") == "1"
    joint = optimized_joint(fwd, wrt, disable=disable, verify_each=verify_each, on_pass=on_pass)
    result = partition(joint, policy=policy)
    if on_pass is not None:
        on_pass("partition", result.backward)
    if "fuse" not in disable:
        fused, _ = fuse(result.backward)
        result = dataclasses.replace(result, backward=fused)
        if on_pass is not None:
            on_pass("fuse", result.backward)
    if verify_each:
        verify(result.backward)
    return result


__all__ = ["OPTIONAL_PASSES", "Joint", "PassManager", "Partition", "autodiff", "build_backward",
           "clone_nodes", "cse", "disabled_passes", "fuse", "gc_paused", "optimized_joint",
           "partition", "prune", "simplify"]
