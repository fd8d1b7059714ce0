"""Data parallelism for `tg.compile(step, mesh=..., data_axis=...)`.

The compiled program is one SPMD program over a `jax.sharding.Mesh`: every
tensor argument is split along its leading (batch) dimension over the mesh
axis ``data_axis``; parameters, optimizer state and every other lifted tensor
are replicated.  XLA's SPMD partitioner propagates the shardings through the
program and inserts the collectives, so the gradient of a replicated parameter
computed from a sharded batch is all-reduced where it is needed; the results
equal the single-device program up to float rounding of the summation order.
Outputs come back to the host as whole arrays (NumPy), like every compiled
program's outputs.  Follows `jax.jit(in_shardings=...)` with
`jax.sharding.NamedSharding`.
"""
from __future__ import annotations

from tracegrad.ir.graph import Graph


def check_mesh(mesh, data_axis) -> None:
    """Raise a clear error for a mesh/axis combination `tg.compile` cannot use."""
    if mesh is None:
        if data_axis is not None:
            raise ValueError("tg.compile: data_axis given without a mesh; pass "
                             "mesh=jax.sharding.Mesh(...) as well")
        return
    names = getattr(mesh, "axis_names", None)
    if names is None or not hasattr(mesh, "shape"):
        raise TypeError(f"tg.compile: mesh must be a jax.sharding.Mesh, got {type(mesh).__name__}")
    if data_axis is None:
        raise ValueError("tg.compile: a mesh needs data_axis=<mesh axis name> to shard the batch "
                         f"over (the mesh has axes {tuple(names)})")
    if data_axis not in names:
        raise ValueError(f"tg.compile: data_axis {data_axis!r} is not an axis of the mesh "
                         f"(axes {tuple(names)})")


def input_shardings(graph: Graph, n_args: int, mesh, data_axis: str, arg_names: list[str]):
    """One `NamedSharding` per program input: batch-split for the first `n_args` inputs (the
    tensor arguments) with at least one dim, replicated for the rest.

    Raises:
        ValueError: a tensor argument whose leading dim the mesh axis size does not divide.
    """
    from jax.sharding import NamedSharding, PartitionSpec  # jax loads on first use (start-up time)

    size = mesh.shape[data_axis]
    split = NamedSharding(mesh, PartitionSpec(data_axis))
    replicated = NamedSharding(mesh, PartitionSpec())
    out = []
    for i, v in enumerate(graph.inputs):
        if i < n_args and v.type.shape:
            n = v.type.shape[0]
            if n % size:
                raise ValueError(f"tg.compile: tensor argument {arg_names[i]} ({v.type}) has "
                                 f"leading dim {n}, which mesh axis {data_axis!r} of size {size} "
                                 "does not divide; data parallelism splits the batch evenly "
                                 "(drop or pad the last batch)")
            out.append(split)
        else:
            out.append(replicated)
    return tuple(out)
