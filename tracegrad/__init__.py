"""tracegrad: PyTorch's autograd semantics, with every backward pass a compiled static program.

    import tracegrad as tg
    x = tg.randn(3, requires_grad=True)
    (x * x).sum().backward()      # x.grad == 2 * x

jax is not imported here; it loads when the first program is lowered.
"""
from tracegrad.backends import blas_idle as _blas_idle
from tracegrad.backends import xla_flags as _xla_flags

_xla_flags.apply()   # XLA CPU options, before jax starts a backend (backends/xla_flags.py)
_blas_idle.apply()   # OpenBLAS's idle threads sleep, not spin (backends/blas_idle.py)

from tracegrad import ir  # noqa: F401  (registers the ops)
from tracegrad.ir.errors import (AllocationError, DTypeError, IRError, ShapeError, TraceError,
                                 TracegradError)
from tracegrad.ir.types import (DType, bfloat16, complex64, complex128, float16, float32, float64,
                                int8, int16, int32, int64, uint8)
from tracegrad.ir.types import bool_ as bool  # noqa: A001  (torch.bool)

from . import autograd
from ._ops import *  # noqa: F401,F403  (torch-named functions generated from the registry)
from ._indexing import masked_select, nonzero, where  # value-dependent shapes: eager only
from ._creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like,
                        get_rng_state, linspace, manual_seed, ones, ones_like, rand, rand_like,
                        randint, randint_like, randn, randn_like, randperm, set_rng_state,
                        tensor, zeros, zeros_like)
from ._generator import Generator, default_generator, initial_seed, seed
from ._random import bernoulli, multinomial, normal, poisson
from ._composite import allclose, equal, floor_divide, is_tensor, isclose
from ._device import device
from ._state import get_executor, set_executor
from .autograd import (enable_grad, inference_mode, is_anomaly_check_nan_enabled,
                       is_anomaly_enabled, is_grad_enabled, is_inference, is_inference_mode_enabled,
                       no_grad, set_grad_enabled)
from .tensor import Parameter, Tensor, _add_registry_methods
from . import _inplace, _tensor_methods  # noqa: E402,F401  (install Tensor's methods)
from . import _inplace_math, _surface_ops  # noqa: E402,F401  (more of Tensor's methods)
from ._strided import as_strided  # noqa: E402  (a view of the input's storage)
from ._surface_ops import (add, broadcast_to, flatten, heaviside, isin, median,  # noqa: E402
                           nextafter, ravel, repeat_interleave, reshape, select, spmm,
                           squeeze, sub, subtract, trace)
from ._surface_more import (atleast_1d, atleast_2d, atleast_3d, bincount,  # noqa: E402
                            block_diag, cartesian_prod, combinations, gcd_, lcm_, meshgrid,
                            tensor_split,
                            tril_indices, triu_indices, unique, unique_consecutive)
from ._surface_ops4 import (deg2rad_, float_power, index_put, index_put_,  # noqa: E402
                            ldexp_, rad2deg_)
from ._surface_names import max, mean, min, pow, prod, sum  # noqa: E402,A004  (node names)
from . import _surface_misc  # noqa: E402,F401  (_is_view, is_conj, resize_, sum_to_size(*size))

_add_registry_methods()   # after the methods Tensor spells itself (they take precedence)
_inplace_math.install()   # after the registry methods: it wraps them

float = float32  # noqa: A001  (torch.float)
double = float64
cfloat = complex64
cdouble = complex128
half = float16
long = int64
int = int32  # noqa: A001

from . import cuda, func, nn, optim, utils  # noqa: E402  (func: tg.func.jvp / vjp / grad)
from .compiler import compile  # noqa: E402,A001
from . import amp  # noqa: E402
from .amp import autocast, get_autocast_dtype, is_autocast_enabled  # noqa: E402
from .linalg import einsum  # noqa: E402  (torch.einsum; this import also binds tg.linalg)
from . import special  # noqa: E402  (torch.special's functions)
from .compiler.explain import explain  # noqa: E402
from .utils import checkpoint_name  # noqa: E402
from .serialization import load, save  # noqa: E402  (torch.save / torch.load)

# ---- torch's everyday namespace surface (issue 16): Size, dtype, settings, legacy types,
# device/backends queries, one-process distributed, refused extras (onnx)
import math as _math  # noqa: E402
from tracegrad.ir.types import DType as dtype  # noqa: E402  (torch.dtype: the dtypes' type)
from ._size import Size  # noqa: E402
from ._config import (get_default_dtype, get_num_interop_threads, get_num_threads,  # noqa: E402
                      get_printoptions, is_warn_always_enabled, set_default_dtype,
                      set_num_interop_threads, set_num_threads, set_printoptions,
                      set_warn_always)
from ._tensor_types import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor,  # noqa: E402
                            DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor,
                            ShortTensor)
from . import accelerator, backends, distributed, jit, onnx  # noqa: E402
from ._type_info import broadcast_shapes, broadcast_tensors, finfo, iinfo  # noqa: E402
from . import distributions  # noqa: E402  (torch.distributions' everyday part)
inf, nan, pi, e = _math.inf, _math.nan, _math.pi, _math.e

# torch's alias names of ops tracegrad has: the Tensor methods' table, plus torch.* only ones
for _alias, _op in {**_inplace_math.ALIASES, "concat": "cat", "concatenate": "cat",
                    "row_stack": "vstack", "ger": "outer"}.items():
    globals()[_alias] = globals()[_op]
del _alias, _op

from ._dump import configure_logging as _configure_logging  # noqa: E402
from ._torch_names import torch_getattr as _torch_getattr  # noqa: E402


def __getattr__(name: str):
    """A torch 2.13 name tracegrad does not build: NotBuiltError saying what to use instead
    (an AttributeError too); any other name: AttributeError (tracegrad/_torch_names.py)."""
    _torch_getattr(name, globals())

_configure_logging()   # TRACEGRAD_LOG
_surface_misc.install_not_built()   # last: every Tensor method is attached by now

__version__ = "0.1.0"
