"""torch.nn.utils.parameters_to_vector / vector_to_parameters: all parameters as one flat
vector (for line searches, second-order methods, weight averaging) and back."""
from __future__ import annotations

from ... import _ops, _state
from ...autograd.grad_mode import no_grad
from ...tensor import Tensor


@_state.located
def parameters_to_vector(parameters) -> Tensor:
    """The parameters flattened and concatenated in iteration order, a 1-D tensor of their
    common dtype (torch.nn.utils.parameters_to_vector).  Differentiable: it is a `cat`, so
    a gradient of the vector reaches each parameter.

    Raises:
        TypeError: an entry that is not a tensor.  ValueError: no parameters.
    """
    params = list(parameters)
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            raise TypeError(f"parameters_to_vector: expected an iterable of tensors, got "
                            f"{type(p).__name__} at entry {i}")
    if not params:
        raise ValueError("parameters_to_vector: no parameters (torch: 'cat(): expected a "
                         "non-empty list of Tensors')")
    return _ops.cat([_ops.reshape(p, (-1,)) for p in params], 0)


@_state.located
def vector_to_parameters(vec, parameters) -> None:
    """Write consecutive slices of the 1-D `vec` into the parameters, in iteration order, in
    place and outside autograd (torch.nn.utils.vector_to_parameters, which assigns
    ``param.data``); the parameters stay leaves.

    Raises:
        TypeError: `vec` is not a tensor (torch's message).  RuntimeError: `vec` is not 1-D
        or its length is not the parameters' total size.
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.shape[0] != total:
        raise RuntimeError(f"vector_to_parameters: vec must be 1-D with one element per "
                           f"parameter element ({total} in all), got {vec._type}")
    start = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.copy_(_ops.reshape(_ops.narrow(vec, 0, start, n), tuple(p.shape)))
            start += n
