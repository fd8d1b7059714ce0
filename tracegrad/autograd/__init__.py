"""torch.autograd-shaped namespace: backward, grad, grad modes, the tape's Node."""
from . import graph  # noqa: F401  (tg.autograd.graph.saved_tensors_hooks ...)
from . import profiler  # noqa: F401  (tg.autograd.profiler.profile, record_function)
from . import forward_ad, functional  # noqa: F401  (tg.autograd.forward_ad.make_dual ...)
from .anomaly import (detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                      set_detect_anomaly)
from .engine import _is_checkpoint_valid, backward, grad  # noqa: F401  (torch's private name)
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference,
                        is_inference_mode_enabled, is_multithreading_enabled, no_grad,
                        set_grad_enabled, set_multithreading_enabled)
from .graph import AccumulateGrad, Node
from . import record, tensor_methods  # noqa: F401  (record-time extras; Tensor.backward ...)
from . import device_copy  # noqa: F401  (x.to(device) of a tensor that requires grad)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401
from .variable import Variable  # noqa: F401  (torch.autograd.Variable, deprecated alias)

__all__ = ["AccumulateGrad", "Function", "FunctionCtx", "Node", "backward", "detect_anomaly",
           "enable_grad", "grad", "inference_mode", "is_anomaly_check_nan_enabled",
           "is_anomaly_enabled", "is_grad_enabled", "is_inference_mode_enabled",
           "is_multithreading_enabled", "no_grad", "once_differentiable", "set_detect_anomaly",
           "set_grad_enabled", "set_multithreading_enabled"]
