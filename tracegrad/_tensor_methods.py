"""Tensor methods that compose ops: conversions, devices, ``new_*``, torch's method spellings
(``view(*shape)``, ``permute(*dims)``), indexing, ``detach`` and ``clone``.

Installed on `Tensor` (tensor.py `attach`) when tracegrad is imported: they call the op
functions (_ops.py, _indexing.py, _creation.py), which are built on Tensor, so tensor.py
itself cannot import them.  The torch-named op methods generated from the registry are
added after these (`_add_registry_methods`).
"""
from __future__ import annotations

import warnings
import weakref

from tracegrad.ir import types as T
from tracegrad.ir.errors import ShapeError, with_location
from tracegrad.ir.graph import Value

from . import _composite, _creation, _indexing, _ops, _state, _view_names, _views
from ._device import CPU, check_device, device, is_device_name, is_on, placed
from .backends.device_arrays import ARRAY_TYPES, torch_name
from .dispatch import view_meta
from .dispatch.frontend import DISPATCHER
from .dispatch.hooks import HOOKS
from .tensor import Tensor, _call_kw, _operand, _varargs, attach

_MISSING = object()   # a required argument not given (torch's own TypeError)


def parse_to_args(name: str, args: tuple, kwargs: dict, extra: tuple = ()):
    """The one parser of torch's ``to(...)`` forms, shared by `Tensor.to` and `Module.to`:
    ``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other_tensor)`` and the keywords
    ``dtype``, ``device``, ``non_blocking`` (ignored) and those in `extra` (e.g. ``copy``).

    Returns ``(dtype or None, target, *extra values)``: `target` is None (no device given),
    `CPU` (the host) or the `jax.Device` of an "xla" / "cuda" device; ``to(other)`` takes
    other's dtype and device.
    Raises:
        TypeError: an unknown keyword or dtype.
        NotImplementedError: a device tracegrad does not have (`_device.check_device`, the
            check every ``device=`` argument goes through).
    """
    kwargs = dict(kwargs)
    dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
    extras = [kwargs.pop(k, False) for k in extra]
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"{name}() got unexpected keyword argument(s) {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif is_device_name(a):
            device = a
        elif a is not None:
            dtype = a
    target = None if device is None else (check_device(name, device) or CPU)
    return (None if dtype is None else T.as_dtype(dtype), target, *extras)



@attach
class _TensorMethods:
    def detach(self) -> "Tensor":
        """A tensor sharing this value, cut from the graph (torch.Tensor.detach).

        In-place changes to either show in the other; they share the version counter.
        """
        tracer = _state.local.tracer
        data = self._data if tracer is None else tracer.value_of(self)
        base = self._base if self._base is not None else self
        out = Tensor(data, base=base, view_ops=self._view_ops + (_views.ALIAS,))
        if base._views is None:
            base._views = []
        base._views.append(weakref.ref(out))
        return out

    @property
    def data(self) -> "Tensor":
        """The value as a tensor cut from the graph (torch.Tensor.data).

        Shares the value with `self` (in-place changes through it show in
        `self`), but has its own version counter, so autograd does not see
        changes made through it: torch's semantics, footgun included.
        """
        t = self.detach()
        t._vc = [0]
        return t

    @data.setter
    def data(self, value: "Tensor") -> None:
        """``x.data = v``: `x` takes `v`'s value and keeps its history (torch: later uses
        read `v`, the gradient still flows through `x`'s grad_fn)."""
        if (isinstance(value, Tensor) and self._requires_grad
                and not value.dtype.is_differentiable):   # torch's check and message
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        tracer = _state.local.tracer
        new = value._data if isinstance(value, Tensor) else value
        before = None
        if tracer is not None:
            tracer.overwriting(self)
            before = tracer.value_of(self) if self._requires_grad else None
            if isinstance(value, Tensor):   # a concrete tensor made in the call: an input
                new = tracer.value_of(value)
        self._data = new
        if before is not None:   # the history stays: the graph's gradient goes to `before`
            tracer.untracked_write(self, before)
        if self.grad_fn is not None:   # backward reads the node's output: now the new value
            _views.replace_output(self.grad_fn, self._out_index, self._data)

    def clone(self, *, memory_format=None) -> "Tensor":
        """A differentiable copy with its own storage (torch.Tensor.clone; ``CloneBackward0``)."""
        return DISPATCHER.call("clone", self, memory_format=memory_format)

    # ---- conversions ----------------------------------------------------------------
    def to(self, *args, **kwargs) -> "Tensor":
        """This tensor in another dtype and/or on another device (torch.Tensor.to); self
        when nothing changes.

        Accepts torch's forms ``to(dtype)``, ``to(device)``, ``to(device, dtype)``,
        ``to(other)`` (other's dtype and device) and the keywords ``dtype``, ``device``,
        ``copy`` (always a new tensor) and ``non_blocking`` (ignored). A cast between
        floating dtypes is differentiable; a cast to or from an integer or bool dtype ends
        the graph, as in torch.  A device move gives a tensor whose storage is on the target
        ("cpu": NumPy; "xla" / "cuda": a jax array, backends/device_arrays.py); inside
        ``tg.compile`` it is the identity (the program runs where its inputs are).

        A move of a tensor that requires grad is differentiable (``ToCopyBackward0``: the
        gradient goes back to the source device), as torch's.

        Raises:
            TypeError: an unknown dtype or argument.
            NotImplementedError: a device tracegrad does not have.
        """
        dtype, target, copy = parse_to_args("to", args, kwargs, ("copy",))
        out = self if target is None else _moved(self, target)
        dtype = out.dtype if dtype is None else dtype
        if dtype is out.dtype and not (copy and out is self):
            return out
        return _ops.convert(out, dtype)

    # devices: the host, or a jax device (_device.py, backends/device_arrays.py)
    @property
    def device(self):
        """Where the tensor lives (torch.Tensor.device): ``device(type='cpu')``, or
        ``device(type='xla', index=0)`` / ``device(type='cuda', index=0)`` for a tensor
        whose storage is a jax array."""
        a = self._data
        return device(torch_name(a)) if type(a) in ARRAY_TYPES else CPU

    @property
    def is_cpu(self) -> bool:
        return type(self._data) not in ARRAY_TYPES

    @property
    def is_cuda(self) -> bool:
        """True on jax's GPU backend (``device="cuda"``)."""
        a = self._data
        return type(a) in ARRAY_TYPES and a.device.platform == "gpu"

    @property
    def is_xla(self) -> bool:
        """True on a jax device that is not a GPU (``device="xla"``)."""
        a = self._data
        return type(a) in ARRAY_TYPES and a.device.platform != "gpu"

    def get_device(self) -> int:
        """The device index, or -1 for a CPU tensor (torch.Tensor.get_device)."""
        a = self._data
        return a.device.id if type(a) in ARRAY_TYPES else -1

    def cpu(self, memory_format=None) -> "Tensor":
        """This tensor on the host: `self` when it is there (torch.Tensor.cpu); see `to`."""
        return self if type(self._data) not in ARRAY_TYPES else self.to(CPU)

    def cuda(self, device=None, non_blocking: bool = False, memory_format=None) -> "Tensor":
        """This tensor on jax's GPU (torch.Tensor.cuda; ``device`` an index or a name).

        Raises:
            NotImplementedError: jax has no GPU here (use ``to("xla")``); see `to`.
        """
        name = device if isinstance(device, (str, type(CPU))) else (
            "cuda" if device is None else f"cuda:{device}")
        target = check_device("Tensor.cuda", name)
        return _moved(self, target)

    def contiguous(self, memory_format=None) -> "Tensor":
        """torch.Tensor.contiguous: `self` when it is contiguous, else a copy that is (a
        transposed or step-sliced view; see `is_contiguous`)."""
        return self if self.is_contiguous() else self.clone()

    def is_contiguous(self, memory_format=None) -> bool:
        """torch.Tensor.is_contiguous: False for a view whose strides are not row-major
        (a transpose, a slice of the inner dim, an expand; size-1 dims do not count); op
        results count as contiguous here."""
        return _views.is_contiguous(self)

    def stride(self, dim=None):
        """torch.Tensor.stride: the strides in elements, a tuple (an int for `dim`).  Those a
        view would have in torch (a transpose's, a slice's, an expand's zeros); op results
        and copies are row-major here, and so is every value under tg.compile.

        Raises:
            IndexError: `dim` out of range (torch's message).
        """
        out = _views.strides(self)
        if dim is None:
            return out
        lo, hi = (-1, 0) if not out else (-len(out), len(out) - 1)
        if isinstance(dim, bool) or not isinstance(dim, int) or not lo <= dim <= hi:
            raise with_location(IndexError(
                f"stride: Dimension out of range (expected to be in range of [{lo}, {hi}], "
                f"but got {dim})"), _state.user_location())
        return out[dim] if out else 1

    # ---- new_* : tensors with this tensor's dtype (and device) by default --------------
    def new_tensor(self, data, *, dtype=None, device=None, requires_grad: bool = False):
        """``tg.tensor(data)`` in `self`'s dtype unless `dtype` is given, whatever the data
        (``int_tensor.new_tensor([1.7])`` truncates to 1, as torch.Tensor.new_tensor)."""
        check_device("Tensor.new_tensor", device)   # raises naming this method
        return _creation.tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad,
                                device=self.device if device is None else device)

    def new_full(self, size, fill_value, *, dtype=None, device=None,
                 requires_grad: bool = False) -> "Tensor":
        """``tg.full(size, fill_value)`` in `self`'s dtype unless `dtype` is given
        (torch.Tensor.new_full; a float fill for an int tensor is truncated, as torch)."""
        check_device("Tensor.new_full", device)   # raises naming this method
        return _creation.full(size, fill_value, dtype=dtype or self.dtype,
                              requires_grad=requires_grad,
                              device=self.device if device is None else device)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad: bool = False):
        """torch.Tensor.new_zeros: zeros of `size` in `self`'s dtype unless `dtype` is given."""
        check_device("Tensor.new_zeros", device)   # raises naming this method
        return self.new_full(_varargs(size), 0, dtype=dtype, device=device,
                             requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad: bool = False):
        """torch.Tensor.new_ones: ones of `size` in `self`'s dtype unless `dtype` is given."""
        check_device("Tensor.new_ones", device)   # raises naming this method
        return self.new_full(_varargs(size), 1, dtype=dtype, device=device,
                             requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad: bool = False):
        """torch.Tensor.new_empty; its values are zeros here (see `tg.empty`)."""
        check_device("Tensor.new_empty", device)   # raises naming this method
        return self.new_zeros(*size, dtype=dtype, device=device,
                             requires_grad=requires_grad)

    # ---- comparisons of whole tensors (composed of registry ops, see _composite.py) -----
    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08,
                equal_nan: bool = False) -> "Tensor":
        return _composite.isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08,
                 equal_nan: bool = False) -> bool:
        return _composite.allclose(self, other, rtol, atol, equal_nan)

    def equal(self, other) -> bool:
        return _composite.equal(self, other)

    def floor_divide(self, other) -> "Tensor":
        return _composite.floor_divide(self, other)

    def float(self):
        return self.to(T.float32)

    def double(self):
        return self.to(T.float64)

    def half(self):
        return self.to(T.float16)

    def bfloat16(self):
        return self.to(T.bfloat16)

    def long(self):
        return self.to(T.int64)

    def int(self):
        return self.to(T.int32)

    def bool(self):
        return self.to(T.bool_)

    def byte(self):   # out-of-range floats wrap as torch's cast does on this CPU (-2.0 -> 254)
        return self.to(T.uint8)

    def char(self):
        return self.to(T.int8)

    def short(self):
        return self.to(T.int16)

    def cfloat(self):
        return self.to(T.complex64)

    def cdouble(self):
        return self.to(T.complex128)

    def type_as(self, other):
        return self.to(other.dtype)

    # ---- torch method spellings that differ from the op signatures ------------------
    def view(self, *shape, dtype=None):
        """torch.Tensor.view: `self` with another shape, sharing its storage (one dim may
        be -1); or ``view(dtype)``: its bytes read as `dtype` (the last dim scaled by the
        ratio of the element sizes when they differ; never requires grad, as torch).

        Raises:
            ShapeError: a shape of another size (named `view`, with the user's line); for
                a dtype, a 0-d tensor or a last dim the sizes do not divide (torch's text).
            RuntimeError: a view whose strides no shape change can keep (a transpose viewed
                flat): torch's message; ``reshape`` copies instead.  For a dtype of another
                element size, a last dim whose stride is not 1.
        """
        if dtype is None and len(shape) == 1 and isinstance(shape[0], T.DType):
            dtype = shape[0]
        if dtype is not None:
            return self._view_dtype(dtype)
        shape = _varargs(shape)
        try:
            out = _ops.reshape(self, shape)
        except ShapeError as e:
            raise _renamed(e, "reshape", "view") from None
        if not _views.is_viewable(self, out.shape):
            raise with_location(RuntimeError(
                f"view: {self._type} to {list(out.shape)}: view size is not compatible with "
                "input tensor's size and stride (at least one dimension spans across two "
                "contiguous subspaces). Use .reshape(...) instead."),
                _state.user_location()) from None
        return out

    def _view_dtype(self, dtype):
        if not isinstance(dtype, T.DType):
            raise with_location(TypeError(f"view(): argument 'dtype' must be torch.dtype, not "
                                          f"{type(dtype).__name__}"), _state.user_location())
        strides = _views.strides(self)
        if dtype.itemsize != self.dtype.itemsize and self.ndim and strides[-1] != 1:
            from tracegrad.ir.ops.index_more import torch_dtype_name  # noqa: PLC0415
            raise with_location(RuntimeError(
                f"view: self.stride(-1) must be 1 to view {torch_dtype_name(self.dtype)} as "
                f"{torch_dtype_name(dtype)} (different element sizes), but got "
                f"{strides[-1]}"), _state.user_location())
        from tracegrad.ir.ops.bitcast import out_shape  # noqa: PLC0415
        try:
            out_shape(tuple(self.shape), self.dtype, dtype)
        except ShapeError as e:   # torch raises these as RuntimeError
            raise with_location(RuntimeError(str(e)), _state.user_location()) from None
        return _ops.view_dtype(self, dtype)

    def reshape(self, *shape):
        """torch.Tensor.reshape: a view where the strides allow one, else a copy (see
        `_views.torch_reshape`)."""
        return _views.torch_reshape(self, _varargs(shape))

    def permute(self, *dims):
        return _ops.permute(self, _varargs(dims))

    def expand(self, *sizes):
        return _ops.expand(self, _varargs(sizes))

    def expand_as(self, other):
        return self.expand(other.shape)

    def view_as(self, other):
        return self.view(other.shape)

    def repeat(self, *repeats):
        return _ops.repeat(self, _varargs(repeats))

    def tile(self, *dims):
        return _ops.tile(self, _varargs(dims))

    def flip(self, *dims):
        return _ops.flip(self, _varargs(dims))

    def where(self, condition, other):
        """torch.Tensor.where: `self` where `condition` holds, else `other`."""
        return _ops.where(condition, self, other)

    def nonzero(self, *, as_tuple: bool = False):
        return _indexing.nonzero(self, as_tuple=as_tuple)

    def masked_select(self, mask):
        return _indexing.masked_select(self, mask)

    # in-place forms of indexing ops: the out-of-place op's result taken in place
    def masked_fill_(self, mask, value):
        return self._inplace_apply("masked_fill_", lambda: _call_kw(
            "masked_fill", self, mask, value))

    def index_add_(self, dim, index, source, *, alpha=1):
        return self._inplace_apply("index_add_", lambda: _call_kw(
            "index_add", self, dim, index, source, alpha=alpha))

    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        return self._inplace_apply("scatter_", lambda: _call_kw(
            "scatter", self, dim, index, src, value=value, reduce=reduce))

    def scatter_reduce(self, dim, index, src, reduce=_MISSING, *, include_self=True):
        _method_args("scatter_reduce", src, reduce)
        return _call_kw("scatter_reduce", self, dim, index, src, reduce,
                        include_self=include_self)

    def scatter_reduce_(self, dim, index, src, reduce=_MISSING, *, include_self=True):
        _method_args("scatter_reduce_", src, reduce)
        return self._inplace_apply("scatter_reduce_", lambda: _call_kw(
            "scatter_reduce", self, dim, index, src, reduce, include_self=include_self))

    def scatter_add_(self, dim, index, src):
        return self._inplace_apply("scatter_add_", lambda: _call_kw(
            "scatter_add", self, dim, index, src))

    @property
    def T(self):
        return self.permute(tuple(reversed(range(self.ndim))))

    @property
    def H(self):
        """The conjugate transpose of a matrix (torch.Tensor.H), a view; a 0-d tensor is
        itself (torch 2.13 warns that this is deprecated there).

        Raises:
            RuntimeError: a 1-D or more than 2-D tensor (torch's message; ``mH`` takes
                batches of matrices).
        """
        if self.ndim not in (0, 2):
            hint = " For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""
            raise with_location(RuntimeError(
                f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D "
                f"tensor.{hint}"), _state.user_location())
        if not self.ndim:
            warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                          UserWarning, stacklevel=2)
            return self.conj()
        return self.transpose(0, 1).conj()

    @property
    def mT(self):
        if self.ndim < 2:
            raise ShapeError(f"mT: tensor.mT is only supported on matrices or batches of "
                             f"matrices, got a {self.ndim}-D tensor {self._type}")
        return self.transpose(-2, -1)

    @property
    def mH(self):
        """The conjugate transpose of the last two dims (torch.Tensor.mH), a view; for a
        real tensor equal to `mT`.

        Raises:
            ShapeError: fewer than 2 dims.
        """
        return self.mT.conj()

    def adjoint(self):
        """torch.Tensor.adjoint: the same as `mH`."""
        return self.mH

    def __iter__(self):
        """The sub-tensors along dim 0, as torch (``self[i]`` each).

        Raises:
            TypeError: a 0-d tensor (torch 2.13: "iteration over a 0-d tensor").
        """
        n = self._data.shape
        if not n:
            raise with_location(TypeError("iteration over a 0-d tensor"), _state.user_location())
        return (self[i] for i in range(n[0]))

    def _python_scalar(self, kind: str):
        """torch's ``float(t)`` / ``int(t)`` / ``complex(t)``: ValueError past one element."""
        data = self._concrete(f"{kind}(tensor)")
        if data.size != 1:
            raise with_location(ValueError(
                f"{kind}(): only one element tensors can be converted to Python scalars (got "
                f"{self._type})"), _state.user_location())
        return data.reshape(()).item()

    def __float__(self) -> float:
        return float(self._python_scalar("float"))

    def __int__(self) -> int:
        return int(self._python_scalar("int"))

    def __complex__(self) -> complex:
        return complex(self._python_scalar("complex"))

    def __getitem__(self, key):
        try:
            return _indexing.getitem(self, key)
        except (IndexError, TypeError, ValueError) as e:   # bounds, too many indices: the line
            raise with_location(_state.located_error(e, "getitem"),
                                _state.user_location()) from None

    def __setitem__(self, key, value) -> None:
        """``self[key] = value`` (torch's index_put_/copy_ into a view), recorded functionally.

        `key` is anything `__getitem__` takes; `value` (a number or a tensor, cast to
        self's dtype) broadcasts to the indexed shape.  With repeated indices one of
        the writes wins (which one is unspecified, as in torch).
        """
        try:
            if view_meta.MARKS and (view := view_meta.setitem_view(key)) is not None:
                owner = self if self._base is None else self._base
                view_meta.check(self, owner, _state.local.grad_enabled,
                                isinstance(value, Tensor) and value._requires_grad, view)
            self._inplace_apply("__setitem__", lambda: _indexing.setitem_value(self, key, value))
        except view_meta.ViewInplaceError as e:   # torch's text names the view, not the op
            raise with_location(e, _state.user_location()) from None
        except (IndexError, TypeError, ValueError, RuntimeError) as e:
            raise with_location(_state.located_error(e, "setitem"),
                                _state.user_location()) from None

    def __floordiv__(self, o):
        """``self // o``: torch.floor_divide (no op of its own; see _composite.py)."""
        o = _operand(o)
        if o is NotImplemented:
            return o
        return _composite.floor_divide(self, o)

    def __rfloordiv__(self, o):
        o = _operand(o)
        if o is NotImplemented:
            return o
        return _composite.floor_divide(o, self)


def _renamed(e: Exception, internal: str, op: str) -> Exception:
    """`e` raised by op `internal` as the user's `op` saw it (``view:``, not ``reshape:``)."""
    if e.args and isinstance(e.args[0], str) and e.args[0].startswith(f"{internal}:"):
        e.args = (op + e.args[0][len(internal):],) + e.args[1:]
    return e


def _method_args(name: str, src, reduce) -> None:
    """torch's argument types of Tensor.scatter_reduce(_), positions counted as a method's."""
    if reduce is _MISSING:
        raise with_location(TypeError(f'{name}() missing 1 required positional arguments: '
                                      f'"reduce"'), _state.user_location())
    if not isinstance(src, Tensor):
        raise with_location(TypeError(f"{name}(): argument 'src' (position 3) must be Tensor, "
                                      f"not {type(src).__name__}"), _state.user_location())
    if not isinstance(reduce, str):
        raise with_location(TypeError(f"{name}(): argument 'reduce' (position 4) must be str, "
                                      f"not {type(reduce).__name__}"), _state.user_location())


def _moved(t: Tensor, target) -> Tensor:
    """`t` with its storage on `target` (`CPU` or a `jax.Device`): a new tensor (with a
    ToCopyBackward0 node when `t` requires grad), or `t` itself when it is there already.
    Inside ``tg.compile`` `t` itself."""
    a = t._data
    if isinstance(a, Value):   # traced: the program runs where its inputs are
        return t
    if is_on(a, target):
        return t   # there already (`to(copy=True)` then copies it differentiably)
    if t._requires_grad and _state.local.grad_enabled:   # differentiable, as torch's copy
        return HOOKS.device_copy(t, target)   # ToCopyBackward0 (autograd/device_copy.py)
    moved = Tensor(placed(a, target))
    if getattr(t, "_inference", False):
        moved._inference = True
    return moved
