"""Complex numbers: conj, real, imag, angle, sgn, complex, polar, view_as_real, view_as_complex.

Gradients follow torch's convention (the conjugate Wirtinger derivative): for a real loss
L of z = x + iy the gradient is dL/dx + i dL/dy, so |z|^2 has gradient 2z.  An op
s(z) with Wirtinger derivatives a = ds/dz and c = ds/d(conj z) sends the cotangent g
back as ``g * conj(a) + conj(g) * c``; each rule below is that formula worked out
(docs/autograd.md, "Complex numbers").

`real`, `imag`, `conj`, `view_as_real` and `view_as_complex` are views, as in torch
(flag VIEW): writing ``z.real[0] = 1`` or ``z.imag.zero_()`` changes z, through the
inverse each view op has in tracegrad/_views.py.  `conj` computes the conjugate values
at once (torch sets a lazy conjugate bit instead); `conj_physical` is the copy.
"""
from __future__ import annotations

import math

import numpy as np

from .. import types as T
from ..errors import DTypeError, ShapeError
from ..registry import CHEAP, COMPLEX, ELEMENTWISE, LINEAR, TO_FLOAT, VIEW, defcomposite, defop
from ._common import broadcast_infer, same_as_first
from .unary import check_operand, sign_kernel, zero_grad

EW = ELEMENTWISE | CHEAP | COMPLEX


def _real_infer(types, **_):
    """A complex operand's real dtype (complex64 -> float32); a real operand's own."""
    t = types[0]
    return T.TensorType(t.shape, t.dtype.to_real())


def _imag_infer(types, **_):
    t = types[0]
    if not t.dtype.is_complex:
        raise DTypeError(f"imag: is not implemented for tensors with non-complex dtypes, got {t}")
    return _real_infer(types)


def _complex_kernel_np(xp, re, im):
    re, im = np.broadcast_arrays(re, im)
    out = np.empty(re.shape, T.from_numpy(re.dtype).to_complex().numpy)
    out.real, out.imag = re, im      # not re + 1j * im: 1j * inf would be nan + inf j
    return out


def _complex_kernel_jax(xp, re, im):
    import jax  # jax loads on first use (start-up time)
    return jax.lax.complex(*xp.broadcast_arrays(re, im))


def _zeros(b, like):
    return b.full(like.shape, 0, like.dtype)


def _real_inverse(ops, parent, child):
    """A write through z.real: the new real part with the old imaginary part (a real parent,
    whose .real is itself: the new value)."""
    return ops.complex(child, ops.imag(parent)) if ops.type_of(parent).dtype.is_complex else child


def _conj_vjp(b, ct, x, out):
    return [b.conj(ct) if ct.dtype.is_complex else ct]


# a view holding the conjugate values (torch: a lazy view with the conjugate bit; for a real
# tensor Tensor.conj() returns the tensor itself)
defop("conj", "input", infer=same_as_first, flags=EW | VIEW,
      ref="torch.conj (a view; its values conjugated eagerly, no conjugate bit)",
      kernel=lambda xp, x: xp.conj(x), vjp=_conj_vjp,
      view_inverse=lambda ops, parent, child: ops.conj(child))
defop("conj_physical", "input", infer=same_as_first, flags=EW, ref="torch.conj_physical",
      kernel=lambda xp, x: xp.conj(x), vjp=_conj_vjp)

# real: d/dz = d/d(conj z) = 1/2, so a real cotangent g gives g + 0j.  torch names the
# backward node of real and imag SelectBackward0 (its real is select(view_as_real(z), -1, 0))
defop("real", "input", infer=_real_infer, flags=EW | VIEW, ref="torch.real (a view)",
      kernel=lambda xp, x: xp.real(x), node_name="SelectBackward0",
      vjp=lambda b, ct, x, out: [b.complex(ct, _zeros(b, ct)) if x.dtype.is_complex else ct],
      view_inverse=_real_inverse)

# imag: d/dz = 1/(2i), d/d(conj z) = -1/(2i), so g gives i g
defop("imag", "input", infer=_imag_infer, flags=EW | VIEW, ref="torch.imag (a view)",
      kernel=lambda xp, x: xp.imag(x), node_name="SelectBackward0",
      vjp=lambda b, ct, x, out: [b.complex(_zeros(b, ct), ct)],
      view_inverse=lambda ops, parent, child: ops.complex(ops.real(parent), child))


def _angle_kernel(xp, x):
    if x.dtype.kind == "c":
        return xp.angle(x)
    # torch: pi for x < 0, 0 for x >= 0 (-0.0 included), nan stays nan
    pi = xp.where(x < 0, x.dtype.type(math.pi), x.dtype.type(0))
    return xp.where(xp.isnan(x), x, pi)


def _angle_vjp(b, ct, x, out):
    # angle = (log z - log conj z) / 2i: g -> i g z / |z|^2; 0 at z = 0 (torch); real: 0
    if not x.dtype.is_complex:
        return zero_grad(b, ct)   # +0.0, even for a NaN cotangent (torch)
    sq = b.real(b.mul(x, b.conj(x)))
    zero = b.eq(sq, 0.0)
    scaled = b.div(b.mul(b.complex(_zeros(b, ct), ct), x), b.where(zero, 1.0, sq))
    return [b.where(zero, 0.0, scaled)]


# integers promote to float32, as torch.angle
defop("angle", "input", infer=_real_infer, flags=EW | TO_FLOAT, ref="torch.angle",
      kernel=_angle_kernel, vjp=_angle_vjp)


def _sgn_kernel(xp, x):
    if x.dtype.kind != "c":
        return sign_kernel(xp, x)
    a = xp.abs(x)
    zero = a == 0
    return xp.where(zero, xp.zeros_like(x), x / xp.where(zero, xp.ones_like(a), a))


def _sgn_vjp(b, ct, x, out):
    # s = z / |z|: ds/dz = 1 / 2|z|, ds/d(conj z) = -s^2 / 2|z|, so
    # g -> (g - conj(g) s^2) / 2|z|; 0 at z = 0 (torch's sgn_backward); real: sign, gradient 0
    if not x.dtype.is_complex:
        return zero_grad(b, ct)   # +0.0, even for a NaN cotangent (torch)
    a = b.abs(x)
    zero = b.eq(a, 0.0)
    num = b.sub(ct, b.mul(b.conj(ct), b.mul(out, out)))
    return [b.where(zero, 0.0, b.div(num, b.mul(b.where(zero, 1.0, a), 2.0)))]


# z / |z| for complex (0 at 0); sign(x) for real
defop("sgn", "input", infer=same_as_first, flags=EW, ref="torch.sgn", kernel=_sgn_kernel,
      vjp=_sgn_vjp)


def _check_parts(name, re, im):
    """torch.complex / torch.polar: float32 or float64 tensors of one dtype."""
    for t in (re, im):
        if t.dtype not in (T.float32, T.float64):
            raise DTypeError(f"{name}: expected both inputs to be float32 or float64 tensors, "
                             f"got {re} and {im}")
    if re.dtype is not im.dtype:
        raise DTypeError(f"{name}: both inputs must have the same dtype, got {re} and {im}")


def _complex_infer(types, **_):
    _check_parts("complex", *types)
    t = broadcast_infer("complex")(types)
    return T.TensorType(t.shape, t.dtype.to_complex())


# re + i im: dL/dre = Re(g), dL/dim = Im(g)
defop("complex", "real, imag", infer=_complex_infer, flags=ELEMENTWISE | CHEAP,
      ref="torch.complex", kernel=_complex_kernel_np, kernels={"jax": _complex_kernel_jax},
      vjp=lambda b, ct, re, im, out: [b.real(ct), b.imag(ct)])


def _polar(ops, abs, angle):
    check_operand(ops, "polar", abs, arg="abs")
    check_operand(ops, "polar", angle, arg="angle")
    try:
        _check_parts("polar", ops.type_of(abs), ops.type_of(angle))
    except DTypeError as e:
        raise e.add_location(ops.location()) from None
    return ops.complex(ops.mul(abs, ops.cos(angle)), ops.mul(abs, ops.sin(angle)))


defcomposite("polar", "abs: Tensor, angle: Tensor", _polar,
             ref="torch.polar (abs * (cos angle + i sin angle))", node_inputs=("abs", "angle"))


def _view_as_real_infer(types, **_):
    t = types[0]
    if not t.dtype.is_complex:
        raise DTypeError(f"view_as_real: is only supported for complex tensors, got {t}")
    return T.TensorType(t.shape + (2,), t.dtype.to_real())


def _view_as_complex_infer(types, **_):
    t = types[0]
    if t.dtype not in (T.float32, T.float64):
        raise DTypeError(f"view_as_complex: is only supported for float32 and float64 tensors, "
                         f"got {t}")
    if not t.shape or t.shape[-1] != 2:
        raise ShapeError(f"view_as_complex: Tensor must have a last dimension of size 2, got {t}")
    return T.TensorType(t.shape[:-1], t.dtype.to_complex())


# views, as torch's: x[..., 0] is the real part, x[..., 1] the imaginary part.  Both are
# R-linear and each one's VJP is the other (dL/dx + i dL/dy is torch's complex gradient)
defop("view_as_real", "input", infer=_view_as_real_infer, flags=VIEW | CHEAP | COMPLEX,
      ref="torch.view_as_real (a view: (..., 2) real and imaginary parts)",
      kernel=lambda xp, x: xp.stack([xp.real(x), xp.imag(x)], axis=-1),
      vjp=lambda b, ct, x, out: [b.view_as_complex(ct)], jvp=LINEAR,
      view_inverse=lambda ops, parent, child: ops.view_as_complex(child))
defop("view_as_complex", "input", infer=_view_as_complex_infer, flags=VIEW | CHEAP,
      ref="torch.view_as_complex (a view: last dim of size 2 -> complex)",
      kernel=lambda xp, x: _complex_kernel_np(xp, x[..., 0], x[..., 1]),
      kernels={"jax": lambda xp, x: _complex_kernel_jax(xp, x[..., 0], x[..., 1])},
      vjp=lambda b, ct, x, out: [b.view_as_real(ct)], jvp=LINEAR,
      view_inverse=lambda ops, parent, child: ops.view_as_real(child))
