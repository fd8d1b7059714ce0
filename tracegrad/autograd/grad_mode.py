"""torch.autograd.grad_mode's names; the modes live in the dispatch core
(tracegrad/dispatch/grad_mode.py), which reads them per op."""
from ..dispatch.grad_mode import (  # noqa: F401
    _set_mode, enable_grad, inference_mode, is_grad_enabled, is_inference, is_inference_mode_enabled,
    no_grad, set_grad_enabled)
