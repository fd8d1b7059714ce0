"""torch.utils.tensorboard is not part of tracegrad: importing this module raises ImportError.

TensorBoard logging needs no autograd: keep torch's (``from torch.utils.tensorboard
import SummaryWriter``) or use the tensorboardX package, and log Python numbers or NumPy
arrays from tracegrad tensors (``loss.item()``, ``t.detach().numpy()``).
"""
raise ImportError(
    "tracegrad.utils.tensorboard does not exist: TensorBoard logging is not part of "
    "tracegrad. Use torch.utils.tensorboard or tensorboardX (pip install tensorboardX) and "
    "log values from tracegrad tensors as numbers or NumPy arrays (loss.item(), "
    "t.detach().numpy()).")
