"""The names of torch 2.13's top-level ``torch`` namespace that tracegrad does not build, and
what to do instead: ``tracegrad.<name>`` for one of them raises NotBuiltError (also an
AttributeError, so ``hasattr`` reads False) through the mechanism of
tracegrad/nn/_not_built.py, never a bare AttributeError a ported script cannot act on.

TORCH_NAMES is ``[n for n in dir(torch) if not n.startswith('_')]`` under torch 2.13.0,
minus the names tracegrad has and the Python modules torch re-exports (os, sys, math ...).
"""
from __future__ import annotations

import re

from .nn._not_built import _COMPOSE, refuse

# torch 2.13.0
TORCH_NAMES = frozenset((
    "AVG AcceleratorError AggregationType AliasDb AnyType Argument ArgumentSpec AwaitType "
    "BFloat16Storage BenchmarkConfig BenchmarkExecutionStats Block BoolStorage BoolType "
    "BufferDict ByteStorage CallStack Capsule CharStorage ClassType Code CompilationUnit "
    "CompleteArgumentSpec ComplexDoubleStorage ComplexFloatStorage ComplexType "
    "ConcreteModuleType ConcreteModuleTypeBuilder DeepCopyMemoTable "
    "DeserializationStorageContext DeviceObjType DictType DisableTorchFunction "
    "DisableTorchFunctionSubclass DispatchKey DispatchKeySet DoubleStorage EnumType "
    "ErrorReport Event ExcludeDispatchKeyGuard ExecutionPlan FatalError FileCheck "
    "FloatStorage FloatType FunctionSchema Future FutureType GradScaler Gradient Graph "
    "GraphExecutorState HalfStorage IODescriptor InferredType IntStorage IntType "
    "InterfaceType JITException ListType LiteScriptModule LockingLogger LoggerBase "
    "LongStorage ModuleDict Node NoneType NoopLogger NumberType OperatorInfo OptionalType "
    "OutOfMemoryError ParameterDict PyObjectType PyTorchFileReader PyTorchFileWriter "
    "QInt32Storage QInt8Storage QUInt2x4Storage QUInt4x2Storage QUInt8Storage RRefType SUM "
    "ScriptClass ScriptClassFunction ScriptDict ScriptDictIterator ScriptDictKeyIterator "
    "ScriptFunction ScriptList ScriptListIterator ScriptMethod ScriptModule "
    "ScriptModuleSerializer ScriptObject ScriptObjectProperty SerializationStorageContext "
    "ShortStorage StaticModule Storage StorageBase Stream StreamObjType StringType SymBool "
    "SymBoolType SymFloat SymInt SymIntType Tag TensorType ThroughputBenchmark TracingState "
    "TupleType Type TypedStorage UnionType UntypedStorage Use Value abs_ acos_ acosh_ "
    "adaptive_avg_pool1d adaptive_max_pool1d addmv_ adjoint affine_grid_generator "
    "alias_copy alpha_dropout alpha_dropout_ aminmax ao arccos_ arccosh_ arcsin_ arcsinh_ "
    "arctan_ arctanh_ are_deterministic_algorithms_enabled argwhere as_strided_ "
    "as_strided_copy as_strided_scatter asarray asin_ asinh_ atan_ atanh_ "
    "autocast_decrement_nesting autocast_increment_nesting avg_pool1d "
    "bartlett_window batch_norm batch_norm_backward_elemt batch_norm_backward_reduce "
    "batch_norm_elemt batch_norm_gather_stats batch_norm_gather_stats_with_counts "
    "batch_norm_stats batch_norm_update_stats bilinear binomial bit bits16 bits1x8 bits2x4 "
    "bits4x2 bits8 blackman_window can_cast ccol_indices_copy ceil_ celu celu_ "
    "chain_matmul chalf channel_shuffle channels_last channels_last_3d cholesky "
    "cholesky_inverse cholesky_solve choose_qparams_optimized clamp_ clamp_max_ clamp_min_ "
    "classes clear_autocast_cache clip_ col_indices_copy "
    "compiled_with_cxx11_abi complex32 cond conj_physical_ constant_pad_nd contiguous_format "
    "conv3d conv_tbc conv_transpose1d conv_transpose3d convolution cos_ "
    "cosh_ cosine_embedding_loss cpp cpu cross crow_indices_copy ctc_loss "
    "cudnn_affine_grid_generator cudnn_batch_norm cudnn_convolution "
    "cudnn_convolution_add_relu cudnn_convolution_relu cudnn_convolution_transpose "
    "cudnn_grid_sampler cudnn_is_acceptable cumulative_trapezoid dequantize "
    "det detach detach_ detach_copy diagflat diagonal_copy diagonal_scatter "
    "dropout dropout_ dsmm eig embedding embedding_bag embedding_renorm_ "
    "empty_permuted empty_quantized empty_strided erf_ erfc_ exp2_ exp_ expand_copy expm1_ "
    "export fake_quantize_per_channel_affine fake_quantize_per_tensor_affine "
    "fbgemm_linear_fp16_weight fbgemm_linear_fp16_weight_fp32_activation "
    "fbgemm_linear_int8_weight fbgemm_linear_int8_weight_fp32_activation "
    "fbgemm_linear_quantize_weight fbgemm_pack_gemm_matrix_fp16 fbgemm_pack_quantized_matrix "
    "feature_alpha_dropout feature_alpha_dropout_ feature_dropout feature_dropout_ fft fill "
    "fill_ fix_ fliplr flipud float4_e2m1fn_x2 float8_e4m3fn float8_e4m3fnuz float8_e5m2 "
    "float8_e5m2fnuz float8_e8m0fnu floor_ fmax fmin fork frac_ frexp "
    "frobenius_norm from_dlpack from_file frombuffer functional "
    "fused_moving_avg_obs_fake_quant futures fx geqrf get_autocast_cpu_dtype "
    "get_autocast_gpu_dtype get_autocast_ipu_dtype get_autocast_xla_dtype get_default_device "
    "get_deterministic_debug_mode get_device get_device_module get_file_path "
    "get_float32_matmul_precision gradient grid_sampler grid_sampler_2d grid_sampler_3d gru "
    "gru_cell hamming_window hann_window hardshrink has_lapack has_mkl has_openmp "
    "has_spectral hash_tensor hinge_embedding_loss histogram histogramdd hsmm "
    "hspmm hub i0 i0_ import_ir_module import_ir_module_from_buffer "
    "index_reduce indices_copy init_num_threads inner "
    "instance_norm int1 int2 int3 int4 int5 int6 int7 int_repr inverse "
    "is_autocast_cache_enabled is_autocast_cpu_enabled is_autocast_ipu_enabled "
    "is_autocast_xla_enabled is_complex is_conj "
    "is_deterministic_algorithms_warn_only_enabled is_distributed is_floating_point is_neg "
    "is_nonzero is_same_size is_signed is_storage is_vulkan_available isneginf isposinf "
    "isreal istft jagged kaiser_window layout "
    "legacy_contiguous_format library lobpcg log10_ log1p_ log2_ log_ logaddexp2 "
    "logdet logit_ logspace lstm lstm_cell lstsq lu lu_solve lu_unpack "
    "margin_ranking_loss masked matrix_exp matrix_power matrix_rank "
    "max_pool1d max_pool1d_with_indices max_pool3d memory_format "
    "merge_type_from_type_comment miopen_batch_norm miopen_convolution "
    "miopen_convolution_add_relu miopen_convolution_relu miopen_convolution_transpose "
    "miopen_ctc_loss miopen_depthwise_convolution miopen_rnn mkldnn_adaptive_avg_pool2d "
    "mkldnn_convolution mkldnn_linear_backward_weights mkldnn_max_pool2d mkldnn_max_pool3d "
    "mkldnn_rnn_layer mode monitor mps msort mtia multiprocessing mvlgamma "
    "nan_to_num_ nanmean nanmedian nanquantile nansum narrow_copy native_batch_norm "
    "native_channel_shuffle native_dropout native_group_norm native_layer_norm native_norm "
    "neg_ negative_ nested newaxis nonzero_static norm_except_dim nuclear_norm "
    "numel ops orgqr ormqr overrides package pairwise_distance parse_ir parse_schema "
    "parse_type_comment pca_lowrank pdist per_channel_affine "
    "per_channel_affine_float_qparams per_channel_symmetric per_tensor_affine "
    "per_tensor_symmetric permute_copy pinverse pixel_shuffle pixel_unshuffle "
    "poisson_nll_loss polygamma positive prelu prepare_multiprocessing_environment "
    "preserve_format profiler profiler_allow_cudagraph_cupti_lazy_reinit_cuda12 "
    "promote_types q_per_channel_axis q_per_channel_scales q_per_channel_zero_points "
    "q_scale q_zero_point qint32 qint8 qr qscheme quantile quantization quantize_per_channel "
    "quantize_per_tensor quantize_per_tensor_dynamic quantized_batch_norm quantized_gru "
    "quantized_gru_cell quantized_lstm quantized_lstm_cell quantized_max_pool1d "
    "quantized_max_pool2d quantized_max_pool3d quantized_rnn_relu_cell "
    "quantized_rnn_tanh_cell quasirandom quint2x4 quint4x2 quint8 random "
    "range reciprocal_ relu_ resize_as_ resize_as_sparse_ resolve_conj "
    "resolve_neg result_type return_types rnn_relu rnn_relu_cell rnn_tanh rnn_tanh_cell "
    "round_ row_indices_copy rrelu rrelu_ rsqrt_ saddmm scalar_tensor segment_reduce "
    "select_copy select_scatter selu selu_ set_anomaly_enabled set_autocast_cache_enabled "
    "set_autocast_cpu_dtype set_autocast_cpu_enabled set_autocast_dtype set_autocast_enabled "
    "set_autocast_gpu_dtype set_autocast_ipu_dtype set_autocast_ipu_enabled "
    "set_autocast_xla_dtype set_autocast_xla_enabled set_default_device "
    "set_default_tensor_type set_deterministic_debug_mode set_float32_matmul_precision "
    "set_flush_denormal short sigmoid_ signal signbit sin_ sinc_ sinh_ slice_copy "
    "slice_inverse slice_scatter slogdet smm solve sparse sparse_bsc sparse_bsc_tensor "
    "sparse_bsr sparse_bsr_tensor sparse_compressed_tensor sparse_coo sparse_coo_tensor "
    "sparse_csc sparse_csc_tensor sparse_csr sparse_csr_tensor split_copy "
    "split_with_sizes_copy sqrt_ square_ squeeze_copy sspaddmm stft storage strided svd "
    "svd_lowrank sym_constrain_range sym_constrain_range_for_size "
    "sym_float sym_fresh_size sym_int sym_ite sym_max sym_min sym_not sym_sqrt sym_sum "
    "symeig t_copy tan_ tanh_ testing thread_safe_generator threshold "
    "threshold_ to_dlpack torch_version transpose_copy trapezoid trapz triangular_solve "
    "triplet_margin_loss trunc_ typename types uint1 uint16 uint2 uint3 uint32 "
    "uint4 uint5 uint6 uint64 uint7 unbind_copy unfold_copy unify_type_list "
    "unravel_index unsafe_chunk unsafe_split unsafe_split_with_sizes "
    "unsqueeze_copy use_deterministic_algorithms values_copy vander version "
    "view_as_complex_copy view_as_real_copy view_copy vmap wait while_loop windows "
    "xlogy_ xpu zero_ ").split())

# torch 2.13.0's public torch.Tensor attributes that tracegrad's Tensor lacks
# (``[n for n in dir(torch.Tensor) if not n.startswith('_')]`` minus ours): reading one raises
# NotBuiltError (tracegrad/_surface_misc.py `install_not_built`), never a bare AttributeError
TORCH_TENSOR_NAMES = frozenset((
    "aminmax apply_ argwhere as_strided_ as_strided_scatter as_subclass ccol_indices chalf "
    "cholesky cholesky_inverse cholesky_solve coalesce col_indices const_data_ptr cross "
    "crow_indices data_ptr dense_dim dequantize diagflat diagonal_scatter dim_order eig "
    "fliplr flipud fmax fmin frexp geqrf ger grad_dtype hardshrink hash_tensor histogram i0 "
    "i0_ index index_reduce index_reduce_ indices inner int_repr ipu is_coalesced "
    "is_distributed is_ipu is_maia is_mtia is_nested is_nonzero is_pinned is_same_size "
    "is_set_to is_shared is_sparse_csr is_vulkan isneginf isposinf isreal istft layout "
    "logaddexp2 logdet lstsq lu lu_solve map2_ map_ matrix_exp matrix_power mode module_load "
    "msort mtia mvlgamma mvlgamma_ name nanmean nanmedian nanquantile nansum narrow_copy new "
    "new_empty_strided nonzero_static orgqr ormqr pin_memory pinverse polygamma polygamma_ "
    "prelu q_per_channel_axis q_per_channel_scales q_per_channel_zero_points q_scale "
    "q_zero_point qr qscheme quantile record_stream reinforce resize resize_as resize_as_ "
    "resize_as_sparse_ row_indices select_scatter set_ share_memory_ signbit slice_inverse "
    "slice_scatter smm solve sparse_dim sparse_mask sparse_resize_ sparse_resize_and_clear_ "
    "sspaddmm stft storage storage_offset storage_type svd symeig to_dense to_mkldnn "
    "to_padded_tensor to_sparse to_sparse_bsc to_sparse_bsr to_sparse_coo to_sparse_csc "
    "to_sparse_csr triangular_solve unsafe_chunk unsafe_split unsafe_split_with_sizes "
    "untyped_storage values volatile xpu "
).split())


_LINALG = {"det": "det", "inverse": "inv", "cholesky": "cholesky", "qr": "qr", "svd": "svd",
           "solve": "solve", "slogdet": "slogdet", "logdet": "slogdet (logabsdet, with sign)",
           "symeig": "eigh", "eig": "eigh (symmetric matrices)",
           "frobenius_norm": "norm", "nuclear_norm": "norm"}
_SPECIFIC = {
    "GradScaler": "tg.amp.GradScaler",
    "fft": "numpy.fft / jax.numpy.fft on x.numpy() (no gradient)",
    "vmap": "tg.func has grad / jvp / vjp; batch over a leading dim with ordinary tensor ops",
    "asarray": "tg.as_tensor", "scalar_tensor": "tg.tensor(value)", "numel": "x.numel()",
    "is_floating_point": "x.is_floating_point() / x.dtype.is_floating_point",
    "is_complex": "x.dtype.is_complex", "detach": "x.detach()",
    "set_default_device": "tracegrad has one device (CPU eagerly, jax/XLA when compiled)",
    "get_default_device": "tracegrad has one device: tg.device('cpu')",
    "use_deterministic_algorithms": "tracegrad's kernels are deterministic; nothing to set",
    "are_deterministic_algorithms_enabled": "tracegrad's kernels are deterministic",
    "set_float32_matmul_precision": "tracegrad computes float32 matmuls in float32",
    "get_float32_matmul_precision": "tracegrad computes float32 matmuls in float32",
    "histogram": "tg.histc (counts of equal-width bins)",
    "export": "tg.compile and jax.export of the program it lowers to (see tg.onnx)",
    "OutOfMemoryError": "tg.AllocationError (what tracegrad raises when memory runs out)",
    "Event": "work runs synchronously: a result is ready when the call returns",
    "Stream": "work runs synchronously: a result is ready when the call returns",
    "ModuleDict": "tg.nn.ModuleDict", "ParameterDict": "tg.nn.ParameterDict",
}
_DTYPES = ("tracegrad's dtypes are bool, uint8, int8/16/32/64, float16, bfloat16, float32, "
           "float64, complex64 and complex128")


def hint(name: str, namespace=frozenset()) -> str:
    """What to use instead of torch's `name`; `namespace`: tracegrad's top-level names (for
    the ``*_copy`` and in-place ``*_`` forms of ops it has)."""
    if name in _SPECIFIC:
        return _SPECIFIC[name]
    if name in _LINALG:
        return f"tg.linalg.{_LINALG[name]}"
    if re.fullmatch(r"(float8_\w+|float4_\w+|complex32|u?int[1-7]|uint(16|32|64)|bits\w+|"
                    r"q?u?int\d+|quint\w+|qint\w+)", name):
        return _DTYPES
    if "Storage" in name or name in ("storage", "is_storage", "from_file", "frombuffer"):
        return "tensors have no separate storage objects; use tg.from_numpy / x.numpy()"
    if name.startswith(("sparse", "smm", "dsmm", "hsmm", "hspmm", "sspaddmm", "saddmm")):
        return "dense tensors (index_add / scatter_add for sparse updates)"
    if re.match(r"(q_|quantiz|dequantize|fake_quantize|per_(channel|tensor)|qscheme|"
                r"int_repr|choose_qparams|fused_moving_avg)", name):
        return "no quantization: train in float32 / bfloat16 (tg.autocast)"
    if re.match(r"(cudnn_|miopen_|mkldnn_|fbgemm_|native_|batch_norm_|_?quantized_)", name):
        return ("a backend kernel of torch's; call the public op (conv2d, batch_norm, "
                "layer_norm, linear ...)")
    if name[:1].isupper() or name in ("jit", "fx", "classes", "library", "ops", "fork", "wait",
                                      "parse_ir", "parse_schema", "import_ir_module",
                                      "import_ir_module_from_buffer", "cpp"):
        return "a TorchScript / dispatcher internal; tg.compile traces plain Python instead"
    if name.endswith("_copy") and name[:-5] in namespace:
        return f"tg.{name[:-5]}(...).clone()"
    if name.endswith("_") and name[:-1] in namespace:
        return f"the in-place Tensor method x.{name}(...), or tg.{name[:-1]}(x, out=x)"
    return _COMPOSE


def torch_getattr(name: str, namespace):
    """tracegrad's module ``__getattr__`` (`namespace`: its globals()): NotBuiltError for
    torch's names, else AttributeError."""
    refuse("tracegrad", name, TORCH_NAMES, lambda n: hint(n, namespace))
