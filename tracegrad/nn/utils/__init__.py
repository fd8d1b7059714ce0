"""torch.nn.utils for tracegrad: gradient clipping; parameters as one vector; `rnn`
(packed sequences); `parametrize` and `parametrizations` (weight_norm, spectral_norm);
the hook form weight_norm / remove_weight_norm."""
from . import parametrizations, parametrize, rnn
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .weight_norm import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm

__all__ = ["rnn", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "parametrizations", "parametrize", "remove_spectral_norm",
           "remove_weight_norm", "spectral_norm", "vector_to_parameters", "weight_norm"]
