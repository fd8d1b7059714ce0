"""torch.nn.functional's spatial transformer pair, composed of registry ops: ``affine_grid``
and ``grid_sample`` (4-D: bilinear or nearest, zeros or border padding, ``align_corners``).

Re-exported by `tracegrad.nn.functional`.  Gradients reach both the input (through the
gather of the four corners) and the grid (through the bilinear weights; the corner indices
are piecewise constant, as in torch), and tracing and the jax lowering come from the ops.
"""
from __future__ import annotations

from tracegrad.ir import types as T

from .. import _creation, _ops
from ..tensor import Tensor


def affine_grid(theta, size, align_corners: bool = False):
    """The sampling grid f32[N, H, W, 2] of the 2-D affine maps `theta` f32[N, 2, 3]
    (torch.nn.functional.affine_grid): normalized (x, y) in [-1, 1] of each output pixel.

    Raises:
        ValueError: `size` is not (N, C, H, W) or `theta` is not (N, 2, 3) (torch's words).
    """
    size = tuple(int(s) for s in size)
    if len(size) != 4:
        raise NotImplementedError(f"affine_grid only supports 4D sizes, for 2D affine "
                                  f"transformations; got size {list(size)} (5-D is not "
                                  "supported in tracegrad yet)")
    n, _, h, w = size
    if not isinstance(theta, Tensor) or not theta.dtype.is_floating_point:
        raise ValueError("Expected theta to have floating point type, but got "
                         f"{getattr(theta, 'dtype', type(theta).__name__)}")
    if tuple(theta.shape) != (n, 2, 3):
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                         f"{list(size)}. Got {list(theta.shape)}.")
    xs = _base(w, align_corners, theta.dtype)
    ys = _base(h, align_corners, theta.dtype)
    gx = _ops.expand(_ops.reshape(xs, (1, w)), (h, w))
    gy = _ops.expand(_ops.reshape(ys, (h, 1)), (h, w))
    base = _ops.stack([gx, gy, _creation.ones((h, w), dtype=theta.dtype)], -1)   # H, W, 3
    grid = _ops.matmul(_ops.reshape(base, (1, h * w, 3)), _ops.transpose(theta, 1, 2))
    return _ops.reshape(grid, (n, h, w, 2))


def _base(steps: int, align_corners: bool, dtype):
    """Pixel centres (or, with align_corners, pixel corners) in [-1, 1]."""
    if align_corners:
        return _creation.linspace(-1.0, 1.0, steps, dtype=dtype) if steps > 1 else \
            _creation.zeros((1,), dtype=dtype)
    return _ops.sub(_ops.div(_ops.add(_ops.mul(_creation.arange(steps, dtype=dtype), 2.0),
                                      1.0), float(steps)), 1.0)


def grid_sample(input, grid, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None):
    """`input` f[N, C, H, W] sampled at `grid` f[N, Ho, Wo, 2] (normalized x, y in [-1, 1]):
    f[N, C, Ho, Wo] (torch.nn.functional.grid_sample, 4-D).

    Modes ``"bilinear"`` and ``"nearest"`` (half-way points round to even, as torch);
    ``padding_mode`` ``"zeros"`` (outside pixels read 0) or ``"border"`` (clamped).
    ``align_corners`` None means False, as torch (which warns about the default).

    Raises:
        ValueError: an unknown mode or padding mode, mismatched batch sizes or a grid whose
            last dim is not 2 (torch's words).
        NotImplementedError: ``"bicubic"``, ``padding_mode="reflection"`` or 5-D input.
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if mode == "bicubic" or padding_mode == "reflection" or input.ndim == 5:
        raise NotImplementedError(
            f"grid_sample(mode={mode!r}, padding_mode={padding_mode!r}) on {input.ndim}-D "
            "input is not supported in tracegrad yet: bilinear/nearest with zeros/border "
            "padding on 4-D input are")
    if input.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2 or \
            grid.shape[0] != input.shape[0]:
        raise ValueError(f"grid_sample: expected input (N, C, H, W) and grid (N, Ho, Wo, 2) "
                         f"with the same N, got input {list(input.shape)} and grid "
                         f"{list(grid.shape)}")
    n, c, h, w = input.shape
    _, ho, wo, _ = grid.shape
    ix = _unnormalize(grid[..., 0], w, bool(align_corners))
    iy = _unnormalize(grid[..., 1], h, bool(align_corners))
    if padding_mode == "border":
        ix, iy = _ops.clamp(ix, 0.0, float(w - 1)), _ops.clamp(iy, 0.0, float(h - 1))
    flat = _ops.reshape(input, (n, c, h * w))
    if mode == "nearest":
        out = _corner(flat, _ops.round(ix), _ops.round(iy), h, w, c)
        # + 0 * ix: the grid gets torch's zero gradient rather than none (rounding cuts it)
        out = _ops.add(out, _ops.mul(_ops.unsqueeze(_ops.reshape(ix, (n, ho * wo)), 1), 0.0))
        return _ops.reshape(out, (n, c, ho, wo))
    x0, y0 = _ops.floor(ix), _ops.floor(iy)
    wx1, wy1 = _ops.sub(ix, x0), _ops.sub(iy, y0)
    wx0, wy0 = _ops.rsub(wx1, 1.0), _ops.rsub(wy1, 1.0)
    x1, y1 = _ops.add(x0, 1.0), _ops.add(y0, 1.0)
    out = None
    for xs, ys, weight in ((x0, y0, _ops.mul(wx0, wy0)), (x1, y0, _ops.mul(wx1, wy0)),
                           (x0, y1, _ops.mul(wx0, wy1)), (x1, y1, _ops.mul(wx1, wy1))):
        term = _ops.mul(_corner(flat, xs, ys, h, w, c),
                        _ops.unsqueeze(_ops.reshape(weight, (n, ho * wo)), 1))
        out = term if out is None else _ops.add(out, term)
    return _ops.reshape(out, (n, c, ho, wo))


def _unnormalize(coord, size: int, align_corners: bool):
    """[-1, 1] -> pixel index space: corners at -1/+1 (align_corners) or pixel edges."""
    if align_corners:
        return _ops.mul(_ops.add(coord, 1.0), (size - 1) / 2.0)
    return _ops.div(_ops.sub(_ops.mul(_ops.add(coord, 1.0), float(size)), 1.0), 2.0)


def _corner(flat, xs, ys, h: int, w: int, c: int):
    """flat f[N, C, H*W] read at integer-valued (xs, ys) f[N, Ho, Wo]: f[N, C, Ho*Wo],
    0 where the point lies outside the image."""
    n = flat.shape[0]
    inside = _ops.logical_and(_ops.logical_and(_ops.ge(xs, 0.0), _ops.le(xs, float(w - 1))),
                              _ops.logical_and(_ops.ge(ys, 0.0), _ops.le(ys, float(h - 1))))
    xi = _ops.clamp(xs, 0.0, float(w - 1)).to(T.int64)
    yi = _ops.clamp(ys, 0.0, float(h - 1)).to(T.int64)
    index = _ops.reshape(_ops.add(_ops.mul(yi, w), xi), (n, 1, -1))
    values = _ops.gather(flat, 2, _ops.expand(index, (n, c, index.shape[-1])))
    mask = _ops.unsqueeze(_ops.reshape(inside, (n, -1)), 1).to(flat.dtype)
    return _ops.mul(values, mask)
