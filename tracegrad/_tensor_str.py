"""How a tensor prints: torch's ``tensor([...], dtype=..., grad_fn=<...>)``."""
from __future__ import annotations

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.graph import Value

from ._config import PRINT
from .backends.device_arrays import host, is_device_array, torch_name
from .dispatch.hooks import HOOKS


def tensor_repr(self) -> str:
    """torch's repr of a tensor: values, non-default dtype, grad_fn / requires_grad, tangent."""
    if isinstance(self._data, Value):
        return f"tensor(<traced {self._type}>)"
    data = host(self._data)
    # tg.set_printoptions: summarize above `threshold` elements, `edgeitems` per end
    opts = dict(separator=", ", prefix="tensor(", max_line_width=PRINT["linewidth"],
                threshold=min(PRINT["threshold"], np.iinfo(np.int64).max),
                edgeitems=PRINT["edgeitems"])
    if self.dtype.is_floating_point:
        data = np.asarray(data, dtype=np.float64)
        body = np.array2string(data, formatter={"float_kind": _float_formatter(data)}, **opts)
    else:
        body = np.array2string(data, **opts)
    extra = ""
    if is_device_array(self._data):   # torch: tensor([...], device='cuda:0')
        extra += f", device='{torch_name(self._data)}'"
    if self.dtype not in (T.float32, T.int64, T.bool_, T.complex64):   # torch's defaults
        extra += f", dtype={self.dtype!r}"
    if self.grad_fn is not None:
        # torch prints the node's class: <CopySlices> for name() torch::autograd::CopySlices
        extra += f", grad_fn=<{self.grad_fn.name().rpartition('::')[2]}>"
    elif self._requires_grad:
        extra += ", requires_grad=True"
    if getattr(self, "_fw", None) is not None:   # a dual tensor shows its tangent, as torch
        tangent = HOOKS.tangent_of(self)
        if tangent is not None:
            extra += f", tangent={tangent!r}"
    return f"tensor({body}{extra})"


def _float_formatter(data: np.ndarray):
    """torch's print format for floats (torch/_tensor_str.py): ``2.`` when every value is
    integral, else `precision` decimals (``0.2500``; `tg.set_printoptions`), scientific
    when magnitudes span more than 1000x or leave [1e-4, 1e8] (or as ``sci_mode`` says);
    all values right-aligned to one width."""
    finite = np.abs(data[np.isfinite(data) & (data != 0)])
    precision, sci_mode = PRINT["precision"], PRINT["sci_mode"]
    if finite.size == 0:
        int_mode, sci = True, False
    else:
        lo, hi = finite.min(), finite.max()
        int_mode = bool(np.all(finite == np.ceil(finite)))
        sci = hi / lo > 1000.0 or hi > 1.0e8 or (not int_mode and lo < 1.0e-4)
    if sci_mode is not None:
        sci = bool(sci_mode)

    def fmt(v) -> str:
        if sci:
            return f"{v:.{precision}e}"
        if int_mode:
            return f"{v:.0f}" + ("." if np.isfinite(v) else "")
        return f"{v:.{precision}f}"

    vals = data[np.isfinite(data) & (data != 0)] if finite.size else data.reshape(-1)[:0]
    width = max([1] + [len(fmt(v)) for v in vals.reshape(-1)])
    return lambda v: fmt(v).rjust(width)
