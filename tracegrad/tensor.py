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
from tracegrad.ir.errors import TraceError, with_location
from tracegrad.ir.graph import Value
from tracegrad.ir.registry import CREATION, INTERNAL, REGISTRY

from . import _state
from ._device import check_device, check_host
from .backends.device_arrays import ARRAY_TYPES, host, put
from ._legacy import _MISSING, TYPE_NAMES, dtype_of_type_name, legacy_array, type_string
from ._size import Size, make_size
from ._tensor_str import tensor_repr


def _operator(name: str, reflected: bool = False):
    """The Python operator method applying op `name` to ``(self, o)``, or ``(o, self)`` when
    `reflected`; an operand that is not a tensor or a number gives NotImplemented."""
    if reflected:
        def method(self, o):
            if type(o) in _PLAIN_OPERANDS:
                return _DISPATCH.call(name, o, self)
            return _call(name, o, self)
    else:
        def method(self, o):
            if type(o) in _PLAIN_OPERANDS:
                return _DISPATCH.call(name, self, o)
            return _call(name, self, o)
    method.__name__ = method.__qualname__ = f"{'r' if reflected else ''}{name}"
    return method



# the C++ type names torch 2.13 prints for a gradient's dtype in `.grad = ...`'s message
_CPP_NAMES = {T.float32: "float", T.float64: "double", T.float16: "c10::Half",
              T.bfloat16: "c10::BFloat16", T.int64: "long int", T.int32: "int",
              T.int16: "short int", T.int8: "signed char", T.uint8: "unsigned char",
              T.uint32: "unsigned int", T.bool_: "bool", T.complex64: "c10::complex<float>",
              T.complex128: "c10::complex<double>"}


class Tensor:
    """A multi-dimensional array with PyTorch's autograd semantics.

    Build one with `tracegrad.tensor`, `zeros`, `randn` ...  ``_data`` is a NumPy array
    eagerly, an IR ``Value`` while ``tg.compile`` traces.  Called with a NumPy array or
    an IR value the constructor is internal (the array is taken as it is); torch's legacy
    forms build a tensor of the default float dtype (torch.Tensor's constructor):
    ``Tensor([1, 2])`` (data), ``Tensor(2, 3)`` / ``Tensor(Size)`` (zeros of that shape:
    torch leaves it uninitialized), ``Tensor()`` (shape (0,)).
    """

    __slots__ = ("_data", "_requires_grad", "_grad", "grad_fn", "_out_index", "_vc", "_base",
                 "_view_ops", "_views", "_accumulator", "_retains_grad", "_hooks", "_inference",
                 "_fw", "__weakref__")   # _hooks, _inference, _fw (a forward-AD tangent,
    # autograd/forward_ad.py): set only when used
    __array_priority__ = 1000  # numpy scalars defer to our reflected operators

    def __init__(self, data=_MISSING, *sizes, requires_grad: bool = False, grad_fn=None,
                 out_index: int = 0, base: "Tensor | None" = None, view_ops: tuple = (),
                 device=None):
        if sizes or type(data) in _LEGACY_DATA:   # torch.Tensor([...]) / Tensor(2, 3)
            check_host("Tensor", device)
            data = legacy_array("Tensor", T.DEFAULT_FLOAT, data, sizes)
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
        state = _state.local.__dict__   # one thread-local read (views are made per op)
        if state["inference"]:   # made in inference mode: an inference tensor
            self._inference = True
        tracer = state["_tracer"]
        if tracer is not None:
            tracer.created(self)

    # ---- metadata -----------------------------------------------------------------
    @property
    def shape(self) -> "Size":
        """The sizes as a `tg.Size` (a tuple subclass printing as ``torch.Size([2, 3])``)."""
        return make_size(self._data.shape)

    def size(self, dim: int | None = None):
        """`shape` (a `tg.Size`), or the size of dimension `dim` (torch.Tensor.size)."""
        return make_size(self._data.shape) if dim is None else self._data.shape[dim]

    def type(self, dtype=None, non_blocking: bool = False, **kwargs):
        """torch.Tensor.type: without `dtype`, torch's type string (``'torch.FloatTensor'``,
        the ``torch.`` prefix kept as torch prints it); with a dtype, a type string
        (``'torch.LongTensor'``) or a legacy class (``tg.LongTensor``), this tensor in that
        dtype (`self` when it already has it).

        Raises:
            ValueError: an unknown type string (torch's ``invalid type: '...'``).
        """
        if dtype is None:
            return type_string(self.dtype)
        if isinstance(dtype, str) and ("Tensor" in dtype or "." in dtype):
            dtype = dtype_of_type_name(dtype)
        dtype = getattr(dtype, "_legacy_dtype", dtype)
        return self.to(dtype)

    def __format__(self, spec: str) -> str:
        # torch: a 0-d tensor formats as its Python number (f"{loss:.4f}"); any other tensor
        # takes object.__format__, which refuses a non-empty spec
        if type(self) is Tensor and not self._data.shape and not isinstance(self._data, Value):
            return self.item().__format__(spec)
        if spec:
            raise TypeError(f"unsupported format string passed to {type(self).__name__}"
                            ".__format__")
        return str(self)

    # torch.Tensor's device flags; is_cpu / is_cuda / is_xla and `device` read the storage
    # (_tensor_methods.py)
    is_xpu = is_mps = is_meta = is_sparse = is_quantized = is_mkldnn = False

    @property
    def output_nr(self) -> int:
        """Which output of its `grad_fn` this tensor is (0 for a leaf; torch.Tensor.output_nr)."""
        return self._out_index

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

    nelement = numel   # torch's older spelling (makemore counts parameters with it)

    def __len__(self) -> int:
        if not self.shape:
            raise with_location(TypeError("len() of a 0-d tensor"), _state.user_location())
        return self.shape[0]

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None:   # torch 2.13's two texts: the hint only for False
            raise RuntimeError("you can only change requires_grad flags of leaf variables." + (
                "" if value else " If you want to use a computed variable in a subgraph that "
                "doesn't require differentiation use var_no_grad = var.detach()."))
        if value and not self.dtype.is_differentiable:
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               f"gradients, got {self.dtype.name}")
        if value and getattr(self, "_inference", False) and not _state.local.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = bool(value)
        tracer = _state.local.tracer
        if value and tracer is not None:   # tg.compile: a new leaf (compiler/trace.py)
            tracer.made_leaf(self)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if requires_grad and self.grad_fn is not None:   # a non-leaf requires grad: a no-op
            return self
        try:
            self.requires_grad = requires_grad
        except RuntimeError as e:   # an integer tensor, a non-leaf: the user's line
            raise with_location(_state.located_error(e, "requires_grad_"),
                                _state.user_location()) from None
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

    @grad.deleter
    def grad(self) -> None:   # ``del x.grad`` (torch: same as ``x.grad = None``)
        self._set_grad(None)

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value.dtype is not self.dtype:   # torch 2.13 checks the dtype first
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_CPP_NAMES.get(value.dtype, value.dtype.name)}' "
                    f"to a tensor with grad_dtype '{TYPE_NAMES.get(self.dtype, 'UInt32Tensor')[:-6]}'. The gradient "
                    "must match the tensor's grad_dtype (defaults to the tensor's dtype). You "
                    "can set the tensor's grad_dtype attribute with a specific dtype, or None "
                    "to allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a "
                    "tensor and its gradient may break downstream systems that assume they "
                    "match.")
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                    f"of size '{list(self.shape)}'. Please ensure that the gradient and the "
                    "tensor are the same size")
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
        return host(self._data)   # a device tensor's value: copied to the host

    def numpy(self) -> np.ndarray:
        """The value as a NumPy array (shares memory; raises if it requires grad, as torch).

        Raises:
            RuntimeError: the tensor requires grad.
            TypeError: the tensor is on a device (torch's refusal for a CUDA tensor): use
                ``.cpu().numpy()``.
        """
        if type(self._data) in ARRAY_TYPES:
            raise with_location(TypeError(
                f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() "
                "to copy the tensor to host memory first."), _state.user_location())
        data = self._concrete(".numpy()")
        if self._requires_grad:
            raise with_location(RuntimeError("Can't call numpy() on Tensor that requires grad. "
                                             "Use tensor.detach().numpy() instead."),
                                _state.user_location())
        return data

    def item(self):
        """The single element as a Python number.

        Raises:
            RuntimeError: the tensor has more than one element.
            TraceError: called on an abstract tensor inside `tg.compile`.
        """
        data = self._concrete(".item()")
        if data.size != 1:
            raise with_location(RuntimeError(
                f"item(): a Tensor with {data.size} elements cannot be converted to Scalar "
                f"(.item() needs exactly one element; shape {tuple(self.shape)})"),
                _state.user_location())
        return data.reshape(()).item()

    def tolist(self):
        return self._concrete(".tolist()").tolist()

    def __bool__(self) -> bool:
        data = self._concrete("bool(tensor)")
        if data.size != 1:
            raise with_location(RuntimeError(f"bool(): Boolean value of Tensor with {data.size} "
                                             "elements is ambiguous"), _state.user_location())
        return bool(data.reshape(()))

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
        return tensor_repr(self)


    # ---- autograd (``data``: _tensor_methods.py) ------------------------------------
    def __reduce_ex__(self, protocol):
        """Pickling (torch's rules): the value, ``requires_grad`` and ``.grad``; the graph is
        not kept (a non-leaf comes back as a leaf that requires grad, as torch's)."""
        data = np.array(self._concrete("pickle"))
        if type(self._data) in ARRAY_TYPES:   # a device tensor comes back on its device
            return (_rebuild_tensor, (type(self), data, self._requires_grad, self._grad,
                                      str(self.device)))
        return (_rebuild_tensor, (type(self), data, self._requires_grad, self._grad))

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

    def is_inference(self) -> bool:
        """True for a tensor made inside `tg.inference_mode` (torch.Tensor.is_inference)."""
        return getattr(self, "_inference", False)

    # ---- operators ------------------------------------------------------------------
    __add__ = _operator("add")
    __radd__ = _operator("add", reflected=True)
    __sub__ = _operator("sub")
    __rsub__ = _operator("sub", reflected=True)
    __mul__ = _operator("mul")
    __rmul__ = _operator("mul", reflected=True)
    __truediv__ = _operator("div")
    __rtruediv__ = _operator("div", reflected=True)
    __pow__ = _operator("pow")   # wrapped by `_int_pow_checked` below the class
    __rpow__ = _operator("pow", reflected=True)
    __matmul__ = _operator("matmul")
    __rmatmul__ = _operator("matmul", reflected=True)
    __mod__ = _operator("remainder")    # Python's %: sign of the divisor (torch.remainder)
    __rmod__ = _operator("remainder", reflected=True)

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
    __lshift__ = _operator("bitwise_left_shift")
    __rlshift__ = _operator("bitwise_left_shift", reflected=True)
    __rshift__ = _operator("bitwise_right_shift")
    __rrshift__ = _operator("bitwise_right_shift", reflected=True)
    __eq__ = _operator("eq")
    __ne__ = _operator("ne")
    __lt__ = _operator("lt")
    __le__ = _operator("le")
    __gt__ = _operator("gt")
    __ge__ = _operator("ge")
    __hash__ = object.__hash__


_new = object.__new__
# data types that mean torch's legacy constructor (tensor.py's callers pass arrays or Values)
_LEGACY_DATA = frozenset({list, tuple, Size, int, float, bool, type(_MISSING), Tensor, str,
                          dict, bytes, set})


def _rebuild_tensor(cls, data, requires_grad, grad, device=None):
    """Unpickle a tensor (`Tensor.__reduce_ex__`); `device`: the name of the jax device it
    was on (``copy.deepcopy`` of a model on "xla" stays there).

    Raises:
        NotImplementedError: that device is not here (a "cuda" pickle without a GPU).
    """
    t = cls(data, requires_grad=requires_grad)
    if device is not None:
        t._data = put(data, check_device("unpickling a tensor", device))
    t._grad = grad
    return t


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


def _varargs(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _wrap_like(value, like: Tensor) -> Tensor:
    return Tensor(np.asarray(value, dtype=like.dtype.numpy))



def _operand(a):
    """An operator's operand as a Tensor or Python number; NotImplemented for anything else."""
    if isinstance(a, (Tensor, bool, int, float, complex)):
        return a
    if isinstance(a, np.ndarray):
        return Tensor(a)
    if isinstance(a, np.generic) and a.dtype.kind in "biufc":
        return a.item()   # NumPy scalars act as Python scalars, as in torch
    return NotImplemented


_DISPATCH = None   # tracegrad.dispatch.frontend.DISPATCHER, which sets it (it imports this module)


def _call(name, *args):
    """A Python operator: Tensor op Tensor/number, else NotImplemented (Python's TypeError)."""
    eager = _DISPATCH
    for a in args:   # the common case: tensors and Python numbers, passed on as they are
        if not isinstance(a, (Tensor, bool, int, float)):
            break
    else:
        return eager.call(name, *args)
    args = tuple(_operand(a) for a in args)
    if any(a is NotImplemented for a in args):
        return NotImplemented
    return eager.call(name, *args)


def attach(methods: type) -> type:
    """Class decorator: install what class `methods` defines (methods, properties, class
    attributes) on `Tensor`.  Modules that build on Tensor (in-place ops, conversions,
    autograd's ``backward``) define its methods this way, so tensor.py imports none of them."""
    for name, value in vars(methods).items():
        if name in ("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__"):
            continue
        if callable(value) and hasattr(value, "__qualname__"):
            value.__qualname__ = f"Tensor.{name}"
        setattr(Tensor, name, value)
    return methods


def _add_registry_methods() -> None:
    """Every registered op is a Tensor method unless the class spells it itself."""
    for name, op in REGISTRY.items():
        if op.flags & (CREATION | INTERNAL) or hasattr(Tensor, name) or op.variadic:
            continue
        setattr(Tensor, name, (lambda n: lambda self, *a, **k: _call_kw(n, self, *a, **k))(name))


def _call_kw(name, *args, **kwargs):
    return _DISPATCH.call(name, *args, **kwargs)


class Parameter(Tensor):
    """A leaf tensor that requires grad and that `nn.Module` registers (torch.nn.Parameter)."""

    __slots__ = ()

    def __init__(self, data=None, requires_grad: bool = True):
        """Raises:
            RuntimeError: ``requires_grad`` (the default) on an integer or bool tensor, as
                torch 2.13 ("Only Tensors of floating point and complex dtype can require
                gradients"); ``Parameter(t, requires_grad=False)`` holds any dtype.
        """
        if data is None:   # torch: Parameter() is an empty float32 tensor
            data = np.empty((0,), np.float32)
        if isinstance(data, Tensor):
            data = data._data
        data = np.asarray(data) if not isinstance(data, Value) else data
        super().__init__(data, requires_grad=False)
        if requires_grad:
            if not self.dtype.is_differentiable:
                raise with_location(RuntimeError(
                    f"Parameter: only Tensors of floating point and complex dtype can require "
                    f"gradients, got {self.dtype.name} (pass requires_grad=False to hold it)"),
                    _state.user_location())
            self._requires_grad = True

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


# exact types an operator passes on without `_operand` (other operands take the slow path)
_PLAIN_OPERANDS = frozenset({Tensor, Parameter, bool, int, float, complex})
