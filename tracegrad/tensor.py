"""`Tensor`: a NumPy array (or, while tracing, an IR value) plus autograd state.

Follows torch.Tensor: ``requires_grad``, ``grad``, ``grad_fn``, ``is_leaf``,
``detach()``, ``backward()``, a version counter bumped by in-place ops, and
the torch-named op methods, which all go through the op registry.
"""
from __future__ import annotations

import warnings
import weakref

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.errors import TraceError
from tracegrad.ir.graph import Value

from . import _state
from ._device import CPU, check_device, is_device_name


def _operator(name: str, reflected: bool = False):
    """The Python operator method applying op `name` to ``(self, o)``, or ``(o, self)`` when
    `reflected`; an operand that is not a tensor or a number gives NotImplemented."""
    if reflected:
        def method(self, o):
            if type(o) in _PLAIN_OPERANDS:
                return (_EAGER or _eager()).call(name, o, self)
            return _call(name, o, self)
    else:
        def method(self, o):
            if type(o) in _PLAIN_OPERANDS:
                return (_EAGER or _eager()).call(name, self, o)
            return _call(name, self, o)
    method.__name__ = method.__qualname__ = f"{'r' if reflected else ''}{name}"
    return method



def parse_to_args(name: str, args: tuple, kwargs: dict, extra: tuple = ()):
    """The one parser of torch's ``to(...)`` forms, shared by `Tensor.to` and `Module.to`:
    ``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other_tensor)`` and the keywords
    ``dtype``, ``device``, ``non_blocking`` (ignored) and those in `extra` (e.g. ``copy``).

    Returns ``(dtype or None, *extra values)``.
    Raises:
        TypeError: an unknown keyword or dtype.
        NotImplementedError: a device other than "cpu" (tracegrad tensors live on the CPU;
            `_device.check_device`, the check every ``device=`` argument goes through).
    """
    kwargs = dict(kwargs)
    dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
    extras = [kwargs.pop(k, False) for k in extra]
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"{name}() got unexpected keyword argument(s) {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif is_device_name(a):
            device = a
        elif a is not None:
            dtype = a
    check_device(name, device)
    return (None if dtype is None else T.as_dtype(dtype), *extras)

class Tensor:
    """A multi-dimensional array with PyTorch's autograd semantics.

    Build one with `tracegrad.tensor`, `zeros`, `randn` ...; the constructor
    is internal.  ``_data`` is a NumPy array eagerly, an IR ``Value`` while
    ``tg.compile`` traces.
    """

    __slots__ = ("_data", "_requires_grad", "_grad", "grad_fn", "_out_index", "_vc", "_base",
                 "_view_ops", "_views", "_accumulator", "_retains_grad", "_hooks", "_inference",
                 "_fw", "__weakref__")   # _hooks, _inference, _fw (a forward-AD tangent,
    # autograd/forward_ad.py): set only when used
    __array_priority__ = 1000  # numpy scalars defer to our reflected operators

    def __init__(self, data, requires_grad: bool = False, grad_fn=None, out_index: int = 0,
                 base: "Tensor | None" = None, view_ops: tuple = ()):
        self._data = data
        self._requires_grad = requires_grad
        self._grad = None
        self.grad_fn = grad_fn
        self._out_index = out_index
        self._base = base             # the tensor owning the storage this view aliases
        self._view_ops = view_ops     # view ops from `_base` to this tensor (see _views.py)
        self._vc = base._vc if base is not None else [0]   # shared with views, as torch
        self._views = None
        self._accumulator = None
        self._retains_grad = False   # a new field here goes into `_new_tensor` too
        local = _state.local
        if local.inference:   # made in inference mode: an inference tensor
            self._inference = True
        tracer = local.tracer
        if tracer is not None:
            tracer.created(self)

    # ---- metadata -----------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._data.shape)

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[dim]

    @property
    def dtype(self) -> T.DType:
        d = self._data
        return d.type.dtype if isinstance(d, Value) else T.from_numpy(d.dtype)

    @property
    def _type(self) -> T.TensorType:
        d = self._data
        return d.type if isinstance(d, Value) else T.TensorType(d.shape, T.from_numpy(d.dtype))

    @property
    def ndim(self) -> int:
        return len(self._data.shape)

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        n = 1
        for s in self._data.shape:
            n *= s
        return n

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                               "want to use a computed variable in a subgraph that doesn't require "
                               "differentiation use var_no_grad = var.detach().")
        if value and not self.dtype.is_differentiable:
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               f"gradients, got {self.dtype.name}")
        if value and getattr(self, "_inference", False) and not _state.local.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        self.requires_grad = requires_grad
        return self

    @property
    def _version(self) -> int:
        return self._vc[0]

    @property
    def grad(self):
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being "
                          "accessed. Its .grad attribute won't be populated during backward(). "
                          "Use .retain_grad() on the non-leaf Tensor if you want its gradient.",
                          UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got "
                                f"{type(value).__name__}")
            if value.shape != self.shape or value.dtype is not self.dtype:
                raise RuntimeError(f"assigned grad has data of a different size or type: "
                                   f"{value._type} for a tensor {self._type}")
        self._set_grad(value)

    def _set_grad(self, value) -> None:
        tracer = _state.local.tracer
        if tracer is not None:
            tracer.grad_changing(self)
        self._grad = value

    def retain_grad(self) -> None:
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is not None and not self._retains_grad:
            self._retains_grad = True
            if self.grad_fn.retained is None:
                self.grad_fn.retained = {}
            self.grad_fn.retained[self._out_index] = weakref.ref(self)

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    # ---- values -------------------------------------------------------------------
    def _concrete(self, what: str) -> np.ndarray:
        if isinstance(self._data, Value):
            loc = _state.user_location(2)
            raise TraceError(f"{what} needs the tensor's value, but tg.compile is tracing with "
                             f"abstract tensors ({self._type}); Python control flow that "
                             "depends on tensor values cannot be compiled").add_location(loc)
        return self._data

    def numpy(self) -> np.ndarray:
        """The value as a NumPy array (shares memory; raises if it requires grad, as torch)."""
        data = self._concrete(".numpy()")
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        return data

    def item(self):
        """The single element as a Python number.

        Raises:
            RuntimeError: the tensor has more than one element.
            TraceError: called on an abstract tensor inside `tg.compile`.
        """
        data = self._concrete(".item()")
        if data.size != 1:
            raise RuntimeError(f"a Tensor with {data.size} elements cannot be converted to "
                               f"Scalar (.item() needs exactly one element; shape {self.shape})")
        return data.reshape(()).item()

    def tolist(self):
        return self._concrete(".tolist()").tolist()

    def __bool__(self) -> bool:
        data = self._concrete("bool(tensor)")
        if data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {data.size} elements is ambiguous")
        return bool(data.reshape(()))

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def is_complex(self) -> bool:
        """True for complex64 / complex128 (torch.Tensor.is_complex)."""
        return self.dtype.is_complex

    def is_floating_point(self) -> bool:
        """True for float16/bfloat16/float32/float64, False for complex (as torch)."""
        return self.dtype.is_floating_point

    @property
    def real(self) -> "Tensor":
        """The real part as a view (torch.Tensor.real): float32 of complex64, float64 of
        complex128; writing into it (``z.real.mul_(2)``, ``z.real[0] = 1``) changes `self`,
        and gradients flow through it (``SelectBackward0``, as torch).  A real tensor's
        ``.real`` is the tensor itself, as in torch.  Assigning (``z.real = v``) copies `v`
        into the real part, as torch's setter (RuntimeError where ``copy_`` would raise)."""
        if not self.dtype.is_complex:
            return self
        return _call_kw("real", self)

    @real.setter
    def real(self, value) -> None:
        # torch: ``z.real = v`` copies v into the real part (``z.real += 1`` lands here too,
        # after the in-place add, and bumps the version a second time, as torch's)
        self.real.copy_(value)

    @property
    def imag(self) -> "Tensor":
        """The imaginary part of a complex tensor as a view (torch.Tensor.imag), like `real`.

        Raises:
            RuntimeError: `self` is not complex (torch's message).
        """
        if not self.dtype.is_complex:
            raise RuntimeError(f"imag: is not implemented for tensors with non-complex dtypes, "
                               f"got {self._type}")
        return _call_kw("imag", self)

    @imag.setter
    def imag(self, value) -> None:
        self.imag.copy_(value)

    def conj(self) -> "Tensor":
        """The complex conjugate as a view (torch.Tensor.conj): writing into it writes the
        conjugate into `self`.  Its values are conjugated at once (torch sets a lazy
        conjugate bit instead; `conj_physical` is the copy).  A real tensor's ``conj()`` is
        the tensor itself, as in torch."""
        if not self.dtype.is_complex:
            return self
        return _call_kw("conj", self)

    def __index__(self) -> int:
        if self.dtype.category != T.INT or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __array__(self, dtype=None, copy=None):
        data = self._concrete("np.asarray(tensor)")
        return data if dtype is None else data.astype(dtype)

    def __str__(self) -> str:
        # print(t) / f"{t}" want the values: a graph break inside tg.compile; repr() (debuggers,
        # error messages) still shows the traced placeholder
        if isinstance(self._data, Value):
            self._concrete("print(tensor) / str(tensor)")
        return self.__repr__()

    def __repr__(self) -> str:
        if isinstance(self._data, Value):
            return f"tensor(<traced {self._type}>)"
        data = self._data
        if self.dtype.is_floating_point:
            data = np.asarray(data, dtype=np.float64)
            body = np.array2string(data, separator=", ", prefix="tensor(", max_line_width=80,
                                   formatter={"float_kind": _float_formatter(data)})
        else:
            body = np.array2string(data, separator=", ", prefix="tensor(", max_line_width=80)
        extra = ""
        if self.dtype not in (T.float32, T.int64, T.bool_, T.complex64):   # torch's defaults
            extra += f", dtype={self.dtype!r}"
        if self.grad_fn is not None:
            extra += f", grad_fn=<{self.grad_fn.name()}>"
        elif self._requires_grad:
            extra += ", requires_grad=True"
        if getattr(self, "_fw", None) is not None:   # a dual tensor shows its tangent, as torch
            from .autograd.forward_ad import jvp_of
            tangent = jvp_of(self)
            if tangent is not None:
                extra += f", tangent={tangent!r}"
        return f"tensor({body}{extra})"

    # ---- autograd -----------------------------------------------------------------
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
        tracer = _state.local.tracer
        if tracer is not None:
            tracer.overwriting(self)
        self._data = value._data if isinstance(value, Tensor) else value

    def detach(self) -> "Tensor":
        """A tensor sharing this value, cut from the graph (torch.Tensor.detach).

        In-place changes to either show in the other; they share the version counter.
        """
        from ._views import ALIAS
        tracer = _state.local.tracer
        data = self._data if tracer is None else tracer.value_of(self)
        base = self._base if self._base is not None else self
        out = Tensor(data, base=base, view_ops=self._view_ops + (ALIAS,))
        if base._views is None:
            base._views = []
        base._views.append(weakref.ref(out))
        return out

    def detach_(self) -> "Tensor":
        """Cut this tensor from the graph in place: it becomes a leaf that does not require
        grad (torch.Tensor.detach_).

        Raises:
            RuntimeError: on a view (torch: "Can't detach views in-place").
        """
        if self._base is not None and any(op != "alias" for op, _ in self._view_ops):
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._out_index = 0
        self._requires_grad = False
        self._retains_grad = False
        return self

    def clone(self, *, memory_format=None) -> "Tensor":
        """A differentiable copy with its own storage (torch.Tensor.clone; ``CloneBackward0``)."""
        from ._dispatch import EAGER
        return EAGER.call("clone", self, memory_format=memory_format)

    def is_inference(self) -> bool:
        """True for a tensor made inside `tg.inference_mode` (torch.Tensor.is_inference)."""
        return getattr(self, "_inference", False)

    def register_hook(self, hook):
        """Run ``hook(grad)`` when this tensor's gradient is computed (torch.Tensor.register_hook).

        On a non-leaf it runs once the gradient is complete, before the node
        that produced the tensor uses it; on a leaf, before the gradient is
        accumulated into ``.grad`` (also for ``autograd.grad``).  A returned
        tensor (same shape and dtype) replaces the gradient.  Hooks run in
        registration order; see tracegrad/autograd/hooks.py for how they run
        inside the compiled backward program.

        Returns:
            a handle whose ``remove()`` removes the hook.
        Raises:
            RuntimeError: the tensor does not require grad.
        """
        from .autograd.hooks import register_tensor_hook
        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Run ``hook(tensor)`` after ``backward()`` accumulated into this leaf's ``.grad``
        (torch.Tensor.register_post_accumulate_grad_hook).

        Raises:
            RuntimeError: on a non-leaf tensor, or one that does not require grad.
        """
        from .autograd.hooks import register_post_accumulate_grad_hook
        return register_post_accumulate_grad_hook(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into each leaf's ``.grad`` (torch.Tensor.backward).

        Args:
            gradient: cotangent of the same shape as self; may be omitted for a
                one-element tensor.
            retain_graph: keep saved values for another backward (default: create_graph).
        Raises:
            RuntimeError: non-scalar output without ``gradient``, a tensor that
                does not require grad, or a second backward through freed values.
        """
        from .autograd import backward
        backward([self], None if gradient is None else [gradient], retain_graph, create_graph,
                 inputs=inputs)

    # ---- in-place (recorded functionally) -------------------------------------------
    def _inplace(self, result: "Tensor", name: str, mark: int | None = None) -> "Tensor":
        """Make `result` this tensor's new value, keeping identity (torch's in-place ops).

        On a view the new value is written through to the base (see _views.py);
        every live view of the base is regenerated; the shared version counter
        is bumped once.  Tape nodes recorded since `mark` (default: the node
        that produced `result`) belong to this in-place op; their saved copies
        of the old value stay valid (see `_views.rebase_saved_versions`).
        """
        from . import _views
        if getattr(self, "_inference", False) and not _state.local.inference:
            raise RuntimeError(f"{name}: Inplace update to inference tensor outside "
                               "InferenceMode is not allowed. You can make a clone to get a "
                               "normal tensor before doing inplace update.")
        grad_on = _state.local.grad_enabled
        if self._requires_grad and self.grad_fn is None and grad_on:
            raise RuntimeError(f"{name}: a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        base = self._base
        if (base is not None and grad_on and base._requires_grad and base.grad_fn is None
                and not any(op == "alias" for op, _ in self._view_ops)):
            raise RuntimeError(f"{name}: a view of a leaf Variable that requires grad is being "
                               "used in an in-place operation.")
        if result.shape != self.shape:
            raise RuntimeError(f"{name}: output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(result.shape)}")
        if result.dtype is not self.dtype:
            if result.dtype.is_complex and not self.dtype.is_complex:   # torch refuses too
                raise RuntimeError(f"{name}: result type {result.dtype.name} can't be cast to "
                                   f"the desired output type {self.dtype.name}")
            result = result.to(self.dtype)
        if mark is None and result.grad_fn is not None:
            mark = result.grad_fn.seq
        old = self._vc[0]
        owner = self if base is None else base
        if base is None:
            self._assign(result)
        else:
            base._assign(_views.write_through(self, result), track=not any(
                op == "alias" for op, _ in self._view_ops), box=self._vc)
        if mark is not None and owner.grad_fn is not None:
            _views.rebase_saved_versions(owner.grad_fn, self._vc, old, self._vc[0], mark)
        if owner._views:
            _views.refresh(owner)
        return self

    def _inplace_apply(self, name: str, compute) -> "Tensor":
        """Run `compute()` (the out-of-place op) and take its result in place."""
        from .autograd.graph import next_mark
        mark = next_mark()
        return self._inplace(compute(), name, mark)

    def _assign(self, value: "Tensor", track: bool = True, box: list | None = None) -> None:
        """Take `value` as this tensor's new value (and its history, when `track`).

        Bumps the version counter `box` (default: own; `.data` aliases have their own).
        """
        tracer = _state.local.tracer
        if tracer is not None:   # tg.compile: lift a tensor overwritten unread (zero_, copy_)
            tracer.overwriting(self)
        self._data = value._data
        if track and value.grad_fn is not None:
            self.grad_fn, self._out_index, self._requires_grad = value.grad_fn, value._out_index, True
        if getattr(value, "_fw", None) is not None or getattr(self, "_fw", None) is not None:
            from .autograd.forward_ad import copy_tangent   # the tangent goes with the value
            copy_tangent(self, value)
        (self._vc if box is None else box)[0] += 1

    def add_(self, other, alpha=1):
        return self._inplace_apply("add_", lambda: self + (other if alpha == 1 else other * alpha))

    def sub_(self, other, alpha=1):
        return self._inplace_apply("sub_", lambda: self - (other if alpha == 1 else other * alpha))

    def mul_(self, other):
        return self._inplace_apply("mul_", lambda: self * other)

    def div_(self, other):
        return self._inplace_apply("div_", lambda: self / other)

    def copy_(self, src):
        from ._ops import expand, convert
        src = src if isinstance(src, Tensor) else _wrap_like(src, self)
        return self._inplace(expand(convert(src, self.dtype), self.shape), "copy_")

    def zero_(self):
        return self.fill_(0)

    def fill_(self, value):
        from ._ops import full
        return self._inplace(full(self.shape, value, self.dtype), "fill_")

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_

    # ---- conversions ----------------------------------------------------------------
    def to(self, *args, **kwargs) -> "Tensor":
        """This tensor in another dtype (torch.Tensor.to); self when nothing changes.

        Accepts torch's forms ``to(dtype)``, ``to(device, dtype)``, ``to(other)`` (other's
        dtype) and the keywords ``dtype``, ``device``, ``copy`` (always a new tensor) and
        ``non_blocking`` (ignored). A cast between floating dtypes is differentiable; a cast
        to or from an integer or bool dtype ends the graph, as in torch.

        Raises:
            TypeError: an unknown dtype or argument.
            NotImplementedError: a device other than "cpu".
        """
        dtype, copy = parse_to_args("to", args, kwargs, ("copy",))
        dtype = self.dtype if dtype is None else dtype
        if dtype is self.dtype and not copy:
            return self
        from ._ops import convert
        return convert(self, dtype)

    # devices: tracegrad tensors always live on the host (see _device.py)
    @property
    def device(self):
        """``tg.device("cpu")``: where the tensor lives (torch.Tensor.device)."""
        return CPU

    is_cuda = False   # torch.Tensor.is_cuda
    is_cpu = True     # torch.Tensor.is_cpu

    def get_device(self) -> int:
        """-1, torch's answer for a CPU tensor (torch.Tensor.get_device)."""
        return -1

    def cpu(self, memory_format=None) -> "Tensor":
        """`self`: the tensor is on the CPU already (torch.Tensor.cpu)."""
        return self

    def cuda(self, device=None, non_blocking: bool = False, memory_format=None) -> "Tensor":
        """torch.Tensor.cuda; always raises NotImplementedError (tracegrad tensors live on
        the CPU), as ``to("cuda")`` does."""
        check_device("Tensor.cuda", "cuda")

    def contiguous(self, memory_format=None) -> "Tensor":
        """`self` (torch.Tensor.contiguous): tracegrad tensors are always contiguous."""
        return self

    def is_contiguous(self, memory_format=None) -> bool:
        return True

    # ---- new_* : tensors with this tensor's dtype (and device) by default --------------
    def new_tensor(self, data, *, dtype=None, device=None, requires_grad: bool = False):
        """``tg.tensor(data)`` in `self`'s dtype unless `dtype` is given, whatever the data
        (``int_tensor.new_tensor([1.7])`` truncates to 1, as torch.Tensor.new_tensor)."""
        from ._creation import tensor
        check_device("Tensor.new_tensor", device)
        return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None,
                 requires_grad: bool = False) -> "Tensor":
        """``tg.full(size, fill_value)`` in `self`'s dtype unless `dtype` is given
        (torch.Tensor.new_full; a float fill for an int tensor is truncated, as torch)."""
        from ._creation import full
        check_device("Tensor.new_full", device)
        return full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad: bool = False):
        """torch.Tensor.new_zeros: zeros of `size` in `self`'s dtype unless `dtype` is given."""
        check_device("Tensor.new_zeros", device)
        return self.new_full(_varargs(size), 0, dtype=dtype, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad: bool = False):
        """torch.Tensor.new_ones: ones of `size` in `self`'s dtype unless `dtype` is given."""
        check_device("Tensor.new_ones", device)
        return self.new_full(_varargs(size), 1, dtype=dtype, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad: bool = False):
        """torch.Tensor.new_empty; its values are zeros here (see `tg.empty`)."""
        check_device("Tensor.new_empty", device)
        return self.new_zeros(*size, dtype=dtype, requires_grad=requires_grad)

    # ---- comparisons of whole tensors (composed of registry ops, see _composite.py) -----
    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08,
                equal_nan: bool = False) -> "Tensor":
        from ._composite import isclose
        return isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08,
                 equal_nan: bool = False) -> bool:
        from ._composite import allclose
        return allclose(self, other, rtol, atol, equal_nan)

    def equal(self, other) -> bool:
        from ._composite import equal
        return equal(self, other)

    def floor_divide(self, other) -> "Tensor":
        from ._composite import floor_divide
        return floor_divide(self, other)

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

    def type_as(self, other):
        return self.to(other.dtype)

    # ---- torch method spellings that differ from the op signatures ------------------
    def view(self, *shape):
        from ._ops import reshape
        return reshape(self, _varargs(shape))

    def reshape(self, *shape):
        from ._ops import reshape
        return reshape(self, _varargs(shape))

    def permute(self, *dims):
        from ._ops import permute
        return permute(self, _varargs(dims))

    def expand(self, *sizes):
        from ._ops import expand
        return expand(self, _varargs(sizes))

    def expand_as(self, other):
        return self.expand(other.shape)

    def view_as(self, other):
        return self.view(other.shape)

    def repeat(self, *repeats):
        from ._ops import repeat
        return repeat(self, _varargs(repeats))

    def tile(self, *dims):
        from ._ops import tile
        return tile(self, _varargs(dims))

    def flip(self, *dims):
        from ._ops import flip
        return flip(self, _varargs(dims))

    def where(self, condition, other):
        """torch.Tensor.where: `self` where `condition` holds, else `other`."""
        from ._ops import where
        return where(condition, self, other)

    def nonzero(self, *, as_tuple: bool = False):
        from ._indexing import nonzero
        return nonzero(self, as_tuple=as_tuple)

    def masked_select(self, mask):
        from ._indexing import masked_select
        return masked_select(self, mask)

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

    def scatter_add_(self, dim, index, src):
        return self._inplace_apply("scatter_add_", lambda: _call_kw(
            "scatter_add", self, dim, index, src))

    @property
    def T(self):
        return self.permute(tuple(reversed(range(self.ndim))))

    @property
    def mT(self):
        if self.ndim < 2:
            from tracegrad.ir.errors import ShapeError
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

    def __getitem__(self, key):
        from ._indexing import getitem
        return getitem(self, key)

    def __setitem__(self, key, value) -> None:
        """``self[key] = value`` (torch's index_put_/copy_ into a view), recorded functionally.

        `key` is anything `__getitem__` takes; `value` (a number or a tensor, cast to
        self's dtype) broadcasts to the indexed shape.  With repeated indices one of
        the writes wins (which one is unspecified, as in torch).
        """
        from ._indexing import setitem_value
        self._inplace_apply("__setitem__", lambda: setitem_value(self, key, value))

    # ---- operators ------------------------------------------------------------------
    __add__ = _operator("add")
    __radd__ = _operator("add", reflected=True)
    __sub__ = _operator("sub")
    __rsub__ = _operator("sub", reflected=True)
    __mul__ = _operator("mul")
    __rmul__ = _operator("mul", reflected=True)
    __truediv__ = _operator("div")
    __rtruediv__ = _operator("div", reflected=True)
    __pow__ = _operator("pow")
    __rpow__ = _operator("pow", reflected=True)
    __matmul__ = _operator("matmul")
    __rmatmul__ = _operator("matmul", reflected=True)
    __mod__ = _operator("remainder")    # Python's %: sign of the divisor (torch.remainder)
    __rmod__ = _operator("remainder", reflected=True)

    def __floordiv__(self, o):
        """``self // o``: torch.floor_divide (no op of its own; see _composite.py)."""
        o = _operand(o)
        if o is NotImplemented:
            return o
        from ._composite import floor_divide
        return floor_divide(self, o)

    def __rfloordiv__(self, o):
        o = _operand(o)
        if o is NotImplemented:
            return o
        from ._composite import floor_divide
        return floor_divide(o, self)

    def __neg__(self): return _call("neg", self)
    def __pos__(self): return self
    def __abs__(self): return _call("abs", self)
    def __invert__(self): return _call("bitwise_not", self)
    __and__ = _operator("bitwise_and")
    __rand__ = _operator("bitwise_and", reflected=True)
    __or__ = _operator("bitwise_or")
    __ror__ = _operator("bitwise_or", reflected=True)
    __xor__ = _operator("bitwise_xor")
    __rxor__ = _operator("bitwise_xor", reflected=True)
    __eq__ = _operator("eq")
    __ne__ = _operator("ne")
    __lt__ = _operator("lt")
    __le__ = _operator("le")
    __gt__ = _operator("gt")
    __ge__ = _operator("ge")
    __hash__ = object.__hash__


_new = object.__new__


def _new_tensor(data, inference: bool) -> Tensor:
    """``Tensor(data)`` for the op dispatcher, which has read the thread state already
    (``inference``: made in inference mode); not while tracing (the tracer must see every
    new tensor).  Field for field what `Tensor.__init__` sets."""
    t = _new(Tensor)
    t._data = data
    t._requires_grad = False
    t._grad = None
    t.grad_fn = None
    t._out_index = 0
    t._base = None
    t._view_ops = ()
    t._vc = [0]
    t._views = None
    t._accumulator = None
    t._retains_grad = False
    if inference:
        t._inference = True
    return t


def _float_formatter(data: np.ndarray):
    """torch's print format for floats (torch/_tensor_str.py): ``2.`` when every value is
    integral, else 4 decimals (``0.2500``), scientific when magnitudes span more than
    1000x or leave [1e-4, 1e8]; all values right-aligned to one width."""
    finite = np.abs(data[np.isfinite(data) & (data != 0)])
    if finite.size == 0:
        int_mode, sci = True, False
    else:
        lo, hi = finite.min(), finite.max()
        int_mode = bool(np.all(finite == np.ceil(finite)))
        sci = hi / lo > 1000.0 or hi > 1.0e8 or (not int_mode and lo < 1.0e-4)

    def fmt(v) -> str:
        if sci:
            return f"{v:.4e}"
        if int_mode:
            return f"{v:.0f}" + ("." if np.isfinite(v) else "")
        return f"{v:.4f}"

    vals = data[np.isfinite(data) & (data != 0)] if finite.size else data.reshape(-1)[:0]
    width = max([1] + [len(fmt(v)) for v in vals.reshape(-1)])
    return lambda v: fmt(v).rjust(width)


def _varargs(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _wrap_like(value, like: Tensor) -> Tensor:
    return Tensor(np.asarray(value, dtype=like.dtype.numpy))


_OPERANDS = (Tensor, bool, int, float, complex)   # what operators pass on unchanged


def _operand(a):
    """An operator's operand as a Tensor or Python number; NotImplemented for anything else."""
    if isinstance(a, (Tensor, bool, int, float, complex)):
        return a
    if isinstance(a, np.ndarray):
        return Tensor(a)
    if isinstance(a, np.generic) and a.dtype.kind in "biufc":
        return a.item()   # NumPy scalars act as Python scalars, as in torch
    return NotImplemented


_EAGER = None   # tracegrad._dispatch.EAGER, bound on first use (_dispatch imports this module)


def _eager():
    global _EAGER
    from ._dispatch import EAGER
    _EAGER = EAGER
    return EAGER


def _call(name, *args):
    """A Python operator: Tensor op Tensor/number, else NotImplemented (Python's TypeError)."""
    eager = _EAGER or _eager()
    for a in args:   # the common case: tensors and Python numbers, passed on as they are
        if not isinstance(a, (Tensor, bool, int, float)):
            break
    else:
        return eager.call(name, *args)
    args = tuple(_operand(a) for a in args)
    if any(a is NotImplemented for a in args):
        return NotImplemented
    return eager.call(name, *args)


def _add_registry_methods() -> None:
    """Every registered op is a Tensor method unless the class spells it itself."""
    from tracegrad.ir.registry import CREATION, INTERNAL, REGISTRY
    for name, op in REGISTRY.items():
        if op.flags & (CREATION | INTERNAL) or hasattr(Tensor, name) or op.variadic:
            continue
        setattr(Tensor, name, (lambda n: lambda self, *a, **k: _call_kw(n, self, *a, **k))(name))


def _call_kw(name, *args, **kwargs):
    return (_EAGER or _eager()).call(name, *args, **kwargs)


class Parameter(Tensor):
    """A leaf tensor that requires grad and that `nn.Module` registers (torch.nn.Parameter)."""

    __slots__ = ()

    def __init__(self, data=None, requires_grad: bool = True):
        if isinstance(data, Tensor):
            data = data._data
        super().__init__(np.asarray(data) if not isinstance(data, Value) else data,
                         requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


# exact types an operator passes on without `_operand` (other operands take the slow path)
_PLAIN_OPERANDS = frozenset({Tensor, Parameter, bool, int, float, complex})
