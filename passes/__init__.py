"""tracegrad.passes: autodiff, pruning, partitioning and the pass manager.

`build_backward` is the pipeline every backward program goes through:
autodiff -> prune -> simplify -> cse -> prune -> partition -> fuse (-> verify).
"""
from __future__ import annotations

from tracegrad.ir.graph import Graph, Value
from tracegrad.ir.verifier import verify

import dataclasses

from .autodiff import Joint, autodiff
from .cse import cse
from .fuse import fuse
from .manager import PassManager
from .partition import Partition, clone_nodes, partition
from .prune import prune
from .simplify import simplify


def build_backward(fwd: Graph, wrt: list[Value], *, verify_each: bool | None = None,
                   on_pass=None) -> Partition:
    """The static backward program of `fwd` with respect to `wrt`.

    Returns a Partition whose ``backward`` graph takes one cotangent per
    forward output, then the saved forward values, and returns one gradient
    per `wrt` value.
    """
    joint = autodiff(fwd, wrt)
    frozen = joint.forward   # forward values are fed from the tape: rewrite backward nodes only
    manager = PassManager([("prune", prune),
                           ("simplify", lambda g: simplify(g, frozen=frozen)),
                           ("cse", lambda g: cse(g, frozen=frozen)),
                           ("prune", prune)], on_pass=on_pass)
    if verify_each is not None:
        manager.verify_each = verify_each
    if on_pass is not None:
        on_pass("autodiff", joint.graph)
    pruned, _ = manager.run(joint.graph)
    result = partition(Joint(pruned, joint.forward, joint.cotangents))
    if on_pass is not None:
        on_pass("partition", result.backward)
    fused, _ = fuse(result.backward)
    result = dataclasses.replace(result, backward=fused)
    if manager.verify_each:
        verify(result.backward)
    if on_pass is not None:
        on_pass("fuse", result.backward)
    return result


__all__ = ["Joint", "PassManager", "Partition", "autodiff", "build_backward", "clone_nodes",
           "cse", "fuse", "partition", "prune", "simplify"]
