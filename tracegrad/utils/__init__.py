"""torch.utils-shaped helpers: checkpoint, checkpoint_name."""
from .checkpoint import checkpoint, checkpoint_name

__all__ = ["checkpoint", "checkpoint_name"]
