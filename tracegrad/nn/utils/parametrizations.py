"""torch.nn.utils.parametrizations: `weight_norm` and `spectral_norm` as parametrizations
(parametrize.py).  ``orthogonal`` is refused with what to do instead.

weight_norm: ``weight = g * v / ||v||`` with the norm over every dim but `dim` (over all of
them for ``dim=None``, torch's -1), the originals ``original0`` = g and ``original1`` = v.
spectral_norm: ``weight / sigma``, sigma the largest singular value of the weight read as a
matrix (`dim` first), estimated by power iteration: buffers ``_u`` and ``_v`` start random
(15 iterations at registration, as torch) and take `n_power_iterations` more at each read in
training mode, under no_grad; the gradient flows through ``sigma = u . (W v)`` with u and v
held fixed, as torch's.
"""
from __future__ import annotations

from ... import _creation, _ops
from ...autograd import no_grad
from ...tensor import Tensor
from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of `v` over every dim but `dim`, kept as size-1 dims (torch's
    norm_except_dim); ``dim=-1`` is the norm of the whole tensor, a 0-d value, as torch."""
    if dim == -1:
        return _ops.sqrt((v * v).sum())
    dims = tuple(d for d in range(v.ndim) if d != dim)
    return _ops.sqrt((v * v).sum(dims, keepdim=True)) if dims else v.abs()


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """``module.<name>`` reparametrized as magnitude g (``parametrizations.<name>.original0``)
    times direction v / ||v|| (``original1``) (torch.nn.utils.parametrizations.weight_norm);
    g has v's size along `dim` and 1 elsewhere, or is 0-d for ``dim=None``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, "
                             f"{ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._reshape_weight_to_matrix(weight)
            h, w = mat.shape
            self.register_buffer("_u", F.normalize(_creation.randn(h, dtype=weight.dtype), dim=0,
                                                   eps=eps))
            self.register_buffer("_v", F.normalize(_creation.randn(w, dtype=weight.dtype), dim=0,
                                                   eps=eps))
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, mat: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            mat = mat.detach()
            # in place, as torch's out=: tg.compile carries a buffer's in-place writes from
            # one call to the next (a rebound attribute would be read as a traced constant)
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(_ops.mv(mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(_ops.mv(mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = _ops.dot(u, _ops.mv(mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """``module.<name>`` divided by its largest singular value (torch.nn.utils.
    parametrizations.spectral_norm; power iteration, see the module doc).  `dim` defaults to
    0 (1 for transposed convolutions).  Real weights only.

    Raises:
        ValueError: no parameter or buffer `name`, n_power_iterations < 1.  IndexError: a bad
        dim (torch's messages).
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dtype.is_complex:
        raise NotImplementedError("spectral_norm: complex weights are not supported in "
                                  "tracegrad; use a real weight")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations,
                                                                     dim, eps))
    return module


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Not built: refused with what to do instead."""
    raise NotImplementedError(
        "parametrizations.orthogonal is not built in tracegrad; write the map as a "
        "parametrization module (e.g. forward returning tg.linalg.matrix_exp(A - A.mT) or the "
        "Q of tg.linalg.qr) and register it with nn.utils.parametrize.register_parametrization")
