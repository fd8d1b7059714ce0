"""The wiring of a reachable tape: which nodes, which leaves, the cache key, and typed
references to where each value lives (`NodeRef`, `LeafRef`, `CONSTANT`).

References are NamedTuples: they sit in the backward-program cache key, which is hashed
and compared on every ``backward()``, and tuples hash and compare fastest; their lengths
differ (2 and 1), so a node output and a leaf never compare equal.
"""
from __future__ import annotations

from operator import attrgetter
from typing import NamedTuple

from ..tensor import Tensor
from . import graph as graph_mod
from . import hooks
from .graph import AccumulateGrad, TapeNode


class NodeRef(NamedTuple):
    """Output `output` of the tape node at position `node` (recording order)."""

    node: int
    output: int


class LeafRef(NamedTuple):
    """Leaf number `leaf`: an AccumulateGrad, numbered in order of first use."""

    leaf: int


class _Constant(NamedTuple):
    """An input no gradient flows into: the backward program reads its saved value."""


CONSTANT = _Constant()


def _collect(roots: list[Tensor]) -> list[TapeNode]:
    """The tape nodes reachable from `roots`, in recording order."""
    seen: set[TapeNode] = set()   # tape nodes hash by identity
    nodes = []
    stack = [r.grad_fn for r in roots if r.grad_fn is not None]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        nodes.append(n)
        for e in n.edges:
            if e is not None:
                p = e[0]
                if p not in seen and isinstance(p, TapeNode):
                    stack.append(p)
    nodes.sort(key=_SEQ)
    return nodes


_SEQ = attrgetter("seq")


def _entry(n: TapeNode) -> tuple:
    """What a node contributes to the cache key when it has no `TapeNode.sig`."""
    return (n.op.name, tuple(n.attrs.values()), n.in_types)


class _Hooked:
    def __repr__(self) -> str:   # stable: dump file names hash the key's repr
        return "HOOKED"


_HOOKED = _Hooked()   # key marker: the node's hook signature follows


class _Wiring:
    """The structure of a reachable tape: the cache key and what to feed where.

    The key is one flat tuple, built in a single pass: per node its signature
    (`TapeNode.sig`, or `_entry`), then its hook signature when it has hooks, then one
    entry per input edge: -1 no gradient, ``-2 - i`` leaf i, ``j`` output 0 of node
    j, ``(j, k)`` output k of node j.  The node's signature fixes how many inputs
    follow, so the encoding reads back unambiguously.  On a 200-op chain: built in
    0.3 us per node and looked up in 0.03 us per node; the nested per-node tuples it
    replaces took 0.7 and 0.15 us.
    """

    def __init__(self, nodes: list[TapeNode], roots: list[Tensor], targets: list[Tensor] | None):
        self.nodes = nodes
        # position of each node / leaf; tape nodes and AccumulateGrads hash by identity
        self.index = pos = {n: i for i, n in enumerate(nodes)}
        self.leaves: list[AccumulateGrad] = []
        self.leaf_index = leaf_pos = {}
        self.hooks: dict[int, tuple] = {}   # node position -> NodeExtra.hook_signature()
        self.leaf_hooked: list[int] = []    # leaves with hooks (hooks.leaf_marked)
        self.packed = False                 # some saved value is held by a pack hook
        self.retained = False               # some node has outputs that called retain_grad()
        self._refs = None
        leaf_hooks_used = graph_mod.LEAF_HOOKS_USED[0]
        key = []
        add = key.append
        for i, n in enumerate(nodes):
            add(n.sig if n.sig is not None else _entry(n))
            if n.retained:
                self.retained = True
            if n.extra is not None:
                self.packed = self.packed or bool(n.extra.packed)
                sig = n.extra.hook_signature()
                if sig is not None:
                    self.hooks[i] = sig
                    add(_HOOKED)
                    add(sig)
            for e in n.edges:
                if e is None:
                    add(-1)
                    continue
                p = e[0]
                j = pos.get(p)
                if j is not None:
                    add(j if e[1] == 0 else (j, e[1]))
                    continue
                li = leaf_pos.get(p)   # every other producer is an AccumulateGrad
                if li is None:
                    li = leaf_pos[p] = len(self.leaves)
                    self.leaves.append(p)
                    if leaf_hooks_used and hooks.leaf_marked(p):
                        self.leaf_hooked.append(li)
                add(-2 - li)
        self.nodes_key = tuple(key)
        self.roots = tuple(_ref_of(r, pos, leaf_pos) for r in roots)
        if targets is not None:
            self.set_targets(targets)

    def set_targets(self, targets: list[Tensor]) -> None:
        """The tensors gradients are wanted for (may be set after construction)."""
        self.targets = tuple(_ref_of(t, self.index, self.leaf_index) for t in targets)
        self.rekey()

    @property
    def pos(self) -> dict[int, int]:
        """``id(node) -> position`` (hooks.BackwardRun's view of `index`)."""
        return {id(n): i for n, i in self.index.items()}

    @property
    def leaf_pos(self) -> dict[int, int]:
        """``id(AccumulateGrad) -> leaf position``."""
        return {id(a): i for a, i in self.leaf_index.items()}

    @property
    def refs(self) -> list[tuple]:
        """Per node, per input: `CONSTANT` (no gradient flows in), a `LeafRef` or a `NodeRef`
        (what `_build_program` wires; made only on a cache miss)."""
        if self._refs is None:
            pos, leaf_pos = self.index, self.leaf_index
            self._refs = [tuple(CONSTANT if e is None
                                else NodeRef(pos[e[0]], e[1]) if e[0] in pos
                                else LeafRef(leaf_pos[e[0]]) for e in n.edges)
                          for n in self.nodes]
        return self._refs

    def rekey(self) -> None:
        self.key = (self.nodes_key, self.roots, self.targets, tuple(self.leaf_hooked))


def _ref_of(t: Tensor, index: dict, leaf_index: dict) -> NodeRef | LeafRef | None:
    """Where tensor `t` lives in the wiring, or None when it is not reached."""
    if t.grad_fn is not None:
        i = index.get(t.grad_fn)
        return None if i is None else NodeRef(i, t._out_index)
    acc = t._accumulator() if t._accumulator is not None else None
    li = leaf_index.get(acc) if acc is not None else None
    return None if li is None else LeafRef(li)
