"""Complex numbers: conj, real, imag, angle, sgn, complex, polar, view_as_real, view_as_complex.

Gradients follow torch's convention (the conjugate Wirtinger derivative): for a real loss
L of z = x + iy the gradient is dL/dx + i dL/dy, so |z|^2 has gradient 2z.  An op
s(z) with Wirtinger derivatives a = ds/dz and c = ds/d(conj z) sends the cotangent g
back as ``g * conj(a) + conj(g) * c``; each rule below is that formula worked out
(docs/autograd.md, "Complex numbers").

`real` and `imag` are views in torch (writing ``z.real[0] = 1`` changes z); here they
are ops returning new tensors, so an in-place change of their result does not reach z.
`conj` is a copy too (torch sets a lazy conjugate bit instead).
"""
from __future__ import annotations

import math

import numpy as np

from .. import types as T
from ..errors import DTypeError, ShapeError
from ..registry import CHEAP, COMPLEX, ELEMENTWISE, TO_FLOAT, defop
from ._common import broadcast_infer, same_as_first
from .unary import check_operand

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
    import jax
    return jax.lax.complex(*xp.broadcast_arrays(re, im))


def _zeros(b, like):
    return b.full(like.shape, 0, like.dtype)


# torch.conj of a real tensor is the tensor itself
defop("conj", "input", infer=same_as_first, flags=EW, ref="torch.conj (a copy, not a lazy view)",
      kernel=lambda xp, x: xp.conj(x),
      vjp=lambda b, ct, x, out: [b.conj(ct) if ct.dtype.is_complex else ct])

# real: d/dz = d/d(conj z) = 1/2, so a real cotangent g gives g + 0j
defop("real", "input", infer=_real_infer, flags=EW, ref="torch.real (a copy, not a view)",
      kernel=lambda xp, x: xp.real(x),
      vjp=lambda b, ct, x, out: [b.complex(ct, _zeros(b, ct)) if x.dtype.is_complex else ct])

# imag: d/dz = 1/(2i), d/d(conj z) = -1/(2i), so g gives i g
defop("imag", "input", infer=_imag_infer, flags=EW, ref="torch.imag (a copy, not a view)",
      kernel=lambda xp, x: xp.imag(x),
      vjp=lambda b, ct, x, out: [b.complex(_zeros(b, ct), ct)])


def _angle_kernel(xp, x):
    if x.dtype.kind == "c":
        return xp.angle(x)
    # torch: pi for x < 0, 0 for x >= 0 (-0.0 included), nan stays nan
    pi = xp.where(x < 0, x.dtype.type(math.pi), x.dtype.type(0))
    return xp.where(xp.isnan(x), x, pi)


def _angle_vjp(b, ct, x, out):
    # angle = (log z - log conj z) / 2i: g -> i g z / |z|^2; 0 at z = 0 (torch); real: 0
    if not x.dtype.is_complex:
        return [b.mul(ct, 0.0)]
    sq = b.real(b.mul(x, b.conj(x)))
    zero = b.eq(sq, 0.0)
    scaled = b.div(b.mul(b.complex(_zeros(b, ct), ct), x), b.where(zero, 1.0, sq))
    return [b.where(zero, 0.0, scaled)]


# integers promote to float32, as torch.angle
defop("angle", "input", infer=_real_infer, flags=EW | TO_FLOAT, ref="torch.angle",
      kernel=_angle_kernel, vjp=_angle_vjp)


def _sgn_kernel(xp, x):
    if x.dtype.kind != "c":
        return xp.sign(x)
    a = xp.abs(x)
    zero = a == 0
    return xp.where(zero, xp.zeros_like(x), x / xp.where(zero, xp.ones_like(a), a))


def _sgn_vjp(b, ct, x, out):
    # s = z / |z|: ds/dz = 1 / 2|z|, ds/d(conj z) = -s^2 / 2|z|, so
    # g -> (g - conj(g) s^2) / 2|z|; 0 at z = 0 (torch's sgn_backward); real: sign, gradient 0
    if not x.dtype.is_complex:
        return [b.mul(ct, 0.0)]
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


defop("polar", "abs, angle", decomp=_polar, ref="torch.polar (abs * (cos angle + i sin angle))")


def _view_as_real(ops, input):
    check_operand(ops, "view_as_real", input)
    if not input.dtype.is_complex:
        raise DTypeError(f"view_as_real: is only supported for complex tensors, got "
                         f"{ops.type_of(input)}").add_location(ops.location())
    return ops.stack([ops.real(input), ops.imag(input)], -1)


def _view_as_complex(ops, input):
    check_operand(ops, "view_as_complex", input)
    t = ops.type_of(input)
    if not t.shape or t.shape[-1] != 2:
        raise ShapeError(f"view_as_complex: Tensor must have a last dimension of size 2, got "
                         f"{t}").add_location(ops.location())
    re, im = ops.unbind(input, -1)
    return ops.complex(re, im)


# copies, not views (torch shares storage)
defop("view_as_real", "input", decomp=_view_as_real, flags=COMPLEX,
      ref="torch.view_as_real (a copy: (..., 2) real and imaginary parts)")
defop("view_as_complex", "input", decomp=_view_as_complex,
      ref="torch.view_as_complex (a copy: last dim of size 2 -> complex)")
defop("conj_physical", "input", flags=COMPLEX, ref="torch.conj_physical",
      decomp=lambda ops, x: ops.conj(check_operand(ops, "conj_physical", x)))
