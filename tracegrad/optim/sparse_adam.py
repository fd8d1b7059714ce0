"""torch.optim.SparseAdam, refused: tracegrad has no sparse gradients."""
from __future__ import annotations

from .optimizer import Optimizer


class SparseAdam(Optimizer):
    """torch.optim.SparseAdam is out of scope: it updates only the rows a sparse gradient
    (``nn.Embedding(sparse=True)``) touches, and tracegrad's gradients are always dense.

    Raises:
        NotImplementedError: always, saying to use `Adam` (or AdamW) instead.
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False):
        raise NotImplementedError(
            "SparseAdam is not supported: tracegrad has no sparse gradients (every gradient, "
            "including nn.Embedding's, is dense). Use tg.optim.Adam (or AdamW) instead; with "
            "dense gradients it is the same algorithm except that SparseAdam's lazy moment "
            "updates touch only the rows a batch uses")
