"""Shared by the ported programs' runs: the same starting weights in torch and tracegrad."""
import numpy as np


def reference_weights(seed: int, std: float = 0.1):
    """An `init(model)` that sets every parameter from a seeded NumPy generator: norm-layer
    style ``*.weight`` vectors 1, everything else normal with standard deviation `std`."""
    def init(model):
        rng = np.random.default_rng(seed)
        for name, p in model.named_parameters():
            shape = tuple(p.shape)
            if len(shape) == 1 and name.endswith("weight"):
                value = np.ones(shape, np.float32)
            else:
                value = (std * rng.standard_normal(shape)).astype(np.float32)
            p.data.copy_(p.new_tensor(value))
    return init
