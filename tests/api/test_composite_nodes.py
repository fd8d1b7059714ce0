"""Composite ops torch records as one backward node (`CompositeDef.node_inputs`): the node
of the result shows torch's name and edges to the op's operands (``AddcmulBackward0`` over
its three inputs), while backward runs the decomposition's own nodes.

Each case's structure, ``Name(child, ...)`` down to the leaves (``Acc<k>``: the
AccumulateGrad of input k; ``None``: a ``(None, 0)`` edge; ``:i`` an output index other
than 0; ``|`` between the nodes of several outputs), was recorded from the same call under
torch 2.13 (float32 inputs; the structure does not depend on the values).  Gradients are
checked against finite differences in float64.
"""
import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn.functional as F

_R = np.random.RandomState(0)


def f(*shape, lo=-1.0, hi=1.0):
    return _R.uniform(lo, hi, size=shape)


def pos(*shape):
    return f(*shape, lo=0.5, hi=2.0)


def idx(*v, shape=None):
    a = np.array(v, dtype=np.int64)
    return a if shape is None else a.reshape(shape)


def mask(*v):
    return np.array(v, dtype=bool)


G, N = True, False   # the input requires grad, or not
X34 = f(3, 4)
IX = idx(0, 2, 1, 0, 1, 1, shape=(3, 2))
IX_UNIQUE = idx(0, 2, 1, 0, 3, 1, shape=(3, 2))   # scatter: one source per place

# id: (inputs as (array, requires grad), call, torch 2.13's structure)
CASES = {
    "rsqrt": ([(pos(3), G)], lambda a: tg.rsqrt(a), "RsqrtBackward0(Acc0)"),
    "square": ([(f(3), G)], lambda a: tg.square(a), "PowBackward0(Acc0)"),
    "frac": ([(f(3, lo=-3, hi=3), G)], lambda a: tg.frac(a), "FracBackward0(Acc0)"),
    "silu": ([(f(3), G)], lambda a: F.silu(a), "SiluBackward0(Acc0)"),
    "mish": ([(f(3), G)], lambda a: F.mish(a), "MishBackward0(Acc0)"),
    "clamp-scalars": ([(f(4), G)], lambda a: tg.clamp(a, -0.5, 0.5), "ClampBackward1(Acc0)"),
    "clamp-tensors": ([(f(4), G), (f(4, lo=-1, hi=-0.3), G), (f(4, lo=0.3, hi=1), G)],
                      lambda a, b, c: tg.clamp(a, b, c), "ClampBackward0(Acc0, Acc1, Acc2)"),
    "clamp-min-tensor": ([(f(4), G), (f(4, lo=-1, hi=-0.3), N)], lambda a, b: tg.clamp(a, min=b),
                         "ClampBackward0(Acc0, None, None)"),
    "clip-scalars": ([(f(4), G)], lambda a: tg.clip(a, -0.5, 0.5), "ClampBackward1(Acc0)"),
    "clip-tensors": ([(f(4), G), (f(4, lo=-1, hi=-0.3), G), (f(4, lo=0.3, hi=1), G)],
                     lambda a, b, c: tg.clip(a, b, c), "ClampBackward0(Acc0, Acc1, Acc2)"),
    "lerp-scalar": ([(f(3), G), (f(3), G)], lambda a, b: tg.lerp(a, b, 0.3),
                    "LerpBackward0(Acc0, Acc1)"),
    "lerp-tensor": ([(f(3), G), (f(3), G), (f(3), G)], lambda a, b, c: tg.lerp(a, b, c),
                    "LerpBackward1(Acc0, Acc1, Acc2)"),
    "lerp-end-no-grad": ([(f(3), G), (f(3), N), (f(3), G)], lambda a, b, c: tg.lerp(a, b, c),
                         "LerpBackward1(Acc0, None, Acc2)"),
    "addcmul": ([(f(3), G), (f(3), G), (f(3), G)], lambda a, b, c: tg.addcmul(a, b, c, value=0.5),
                "AddcmulBackward0(Acc0, Acc1, Acc2)"),
    "addcmul-t1-no-grad": ([(f(3), G), (f(3), N), (f(3), G)], lambda a, b, c: tg.addcmul(a, b, c),
                           "AddcmulBackward0(Acc0, None, Acc2)"),
    "addcdiv": ([(f(3), G), (f(3), G), (pos(3), G)], lambda a, b, c: tg.addcdiv(a, b, c, value=0.5),
                "AddcdivBackward0(Acc0, Acc1, Acc2)"),
    "polar": ([(pos(3), G), (f(3), G)], lambda a, b: tg.polar(a, b), "PolarBackward0(Acc0, Acc1)"),
    "conv1d": ([(f(1, 2, 5), G), (f(3, 2, 2), G), (f(3), G)], lambda a, w, b: F.conv1d(a, w, b),
               "ConvolutionBackward0(Acc0, Acc1, Acc2)"),
    "conv1d-nobias": ([(f(1, 2, 5), G), (f(3, 2, 2), G)], lambda a, w: F.conv1d(a, w),
                      "ConvolutionBackward0(Acc0, Acc1, None)"),
    "conv2d": ([(f(1, 2, 4, 4), G), (f(3, 2, 2, 2), G), (f(3), G)],
               lambda a, w, b: F.conv2d(a, w, b), "ConvolutionBackward0(Acc0, Acc1, Acc2)"),
    "conv_transpose2d": ([(f(1, 2, 3, 3), G), (f(2, 3, 2, 2), G), (f(3), G)],
                         lambda a, w, b: F.conv_transpose2d(a, w, b),
                         "ConvolutionBackward0(Acc0, Acc1, Acc2)"),
    "avg_pool2d": ([(f(1, 1, 4, 4), G)], lambda a: F.avg_pool2d(a, 2), "AvgPool2DBackward0(Acc0)"),
    "adaptive_avg_pool2d": ([(f(1, 1, 4, 4), G)], lambda a: F.adaptive_avg_pool2d(a, (2, 2)),
                            "AdaptiveAvgPool2DBackward0(Acc0)"),
    "index_select": ([(X34, G), (idx(2, 0), N)], lambda a, i: tg.index_select(a, 0, i),
                     "IndexSelectBackward0(Acc0)"),
    "index_add": ([(X34, G), (idx(2, 0), N), (f(2, 4), G)],
                  lambda a, i, s: tg.index_add(a, 0, i, s, alpha=2), "IndexAddBackward0(Acc0, Acc2)"),
    "masked_fill-scalar": ([(f(4), G), (mask(1, 0, 1, 0), N)], lambda a, k: tg.masked_fill(a, k, 0.5),
                           "MaskedFillBackward0(Acc0)"),
    "masked_fill-tensor": ([(f(4), G), (mask(1, 0, 1, 0), N), (np.float64(0.5), G)],
                           lambda a, k, v: tg.masked_fill(a, k, v), "MaskedFillBackward1(Acc0, Acc2)"),
    "index_fill-scalar": ([(X34, G), (idx(1), N)], lambda a, i: tg.index_fill(a, 0, i, 0.5),
                          "IndexFillBackward0(Acc0)"),
    "index_fill-tensor": ([(X34, G), (idx(1), N), (np.float64(0.5), G)],
                          lambda a, i, v: tg.index_fill(a, 0, i, v), "IndexFillBackward1(Acc0, Acc2)"),
    "masked_scatter": ([(f(4), G), (mask(1, 0, 1, 0), N), (f(4), G)],
                       lambda a, k, s: tg.masked_scatter(a, k, s), "MaskedScatterBackward0(Acc0, Acc2)"),
    "matmul-1d1d": ([(f(3), G), (f(3), G)], lambda a, b: tg.matmul(a, b), "DotBackward0(Acc0, Acc1)"),
    "matmul-2d1d": ([(f(2, 3), G), (f(3), G)], lambda a, b: tg.matmul(a, b), "MvBackward0(Acc0, Acc1)"),
    "mv": ([(f(2, 3), G), (f(3), G)], lambda a, b: tg.mv(a, b), "MvBackward0(Acc0, Acc1)"),
    "dot": ([(f(3), G), (f(3), G)], lambda a, b: tg.dot(a, b), "DotBackward0(Acc0, Acc1)"),
    "vdot": ([(f(3), G), (f(3), G)], lambda a, b: tg.vdot(a, b), "VdotBackward0(Acc0, Acc1)"),
    "linalg_solve": ([(f(3, 3) + 3 * np.eye(3), G), (f(3, 2), G)], lambda a, b: tg.linalg.solve(a, b),
                     "LinalgSolveExBackward0(Acc0, Acc1)"),
    "nll_loss": ([(f(2, 3), G), (idx(0, 2), N)], lambda a, t: F.nll_loss(a, t), "NllLossBackward0(Acc0)"),
    "mse_loss": ([(f(3), G), (f(3), G)], lambda a, b: F.mse_loss(a, b), "MseLossBackward0(Acc0, Acc1)"),
    "mse_loss-target-no-grad": ([(f(3), G), (f(3), N)], lambda a, b: F.mse_loss(a, b),
                                "MseLossBackward0(Acc0, None)"),
    "mse_loss-none": ([(f(3), G), (f(3), N)], lambda a, b: F.mse_loss(a, b, reduction="none"),
                      "MseLossBackward0(Acc0, None)"),
    "smooth_l1_loss": ([(f(3), G), (f(3), N)], lambda a, b: F.smooth_l1_loss(a, b),
                       "SmoothL1LossBackward0(Acc0, None)"),
    "huber_loss": ([(f(3), G), (f(3), N)], lambda a, b: F.huber_loss(a, b),
                   "HuberLossBackward0(Acc0, None)"),
    "binary_cross_entropy": ([(f(3, lo=0.1, hi=0.9), G), (f(3, lo=0, hi=1), N)],
                             lambda a, b: F.binary_cross_entropy(a, b),
                             "BinaryCrossEntropyBackward0(Acc0, None)"),
    "binary_cross_entropy-weight": ([(f(3, lo=0.1, hi=0.9), G), (f(3, lo=0, hi=1), N), (pos(3), N)],
                                    lambda a, b, w: F.binary_cross_entropy(a, b, w),
                                    "BinaryCrossEntropyBackward0(Acc0, None)"),
    "binary_cross_entropy_with_logits": ([(f(3), G), (f(3, lo=0, hi=1), N)],
                                         lambda a, b: F.binary_cross_entropy_with_logits(a, b),
                                         "BinaryCrossEntropyWithLogitsBackward0(Acc0, None)"),
    "l1_loss": ([(f(3), G), (f(3), N)], lambda a, b: F.l1_loss(a, b),   # mean's node, over abs
                "MeanBackward0(AbsBackward0(SubBackward0(Acc0, None)))"),
    "layer_norm": ([(f(2, 3), G), (pos(3), G), (f(3), G)], lambda a, w, b: F.layer_norm(a, (3,), w, b),
                   "NativeLayerNormBackward0(Acc0, Acc1, Acc2)"),
    "layer_norm-noaffine": ([(f(2, 3), G)], lambda a: F.layer_norm(a, (3,)),
                            "NativeLayerNormBackward0(Acc0, None, None)"),
    "group_norm": ([(f(2, 4, 3), G), (pos(4), G), (f(4), G)], lambda a, w, b: F.group_norm(a, 2, w, b),
                   "NativeGroupNormBackward0(Acc0, Acc1, Acc2)"),
    "batch_norm": ([(f(3, 2), G), (f(2), N), (pos(2), N), (pos(2), G), (f(2), G)],
                   lambda a, rm, rv, w, b: F.batch_norm(a, rm, rv, w, b, training=True),
                   "NativeBatchNormBackward0(Acc0, Acc3, Acc4)"),
    "batch_norm-eval": ([(f(3, 2), G), (f(2), N), (pos(2), N), (pos(2), G), (f(2), G)],
                        lambda a, rm, rv, w, b: F.batch_norm(a, rm, rv, w, b, training=False),
                        "NativeBatchNormBackward0(Acc0, Acc3, Acc4)"),
    "gather": ([(X34, G), (IX, N)], lambda a, i: tg.gather(a, 1, i), "GatherBackward0(Acc0)"),
    "scatter-src": ([(X34, G), (IX_UNIQUE, N), (f(3, 2), G)], lambda a, i, s: tg.scatter(a, 1, i, s),
                    "ScatterBackward0(Acc0, Acc2)"),
    "scatter-value": ([(X34, G), (IX, N)], lambda a, i: tg.scatter(a, 1, i, 0.5),
                      "ScatterBackward1(Acc0)"),
    "scatter_add": ([(X34, G), (IX, N), (f(3, 2), G)], lambda a, i, s: tg.scatter_add(a, 1, i, s),
                    "ScatterAddBackward0(Acc0, Acc2)"),
    "scatter_reduce": ([(X34, G), (IX, N), (f(3, 2), G)],
                       lambda a, i, s: tg.scatter_reduce(a, 1, i, s, "sum"),
                       "ScatterReduceBackward0(Acc0, Acc2)"),
    "topk": ([(f(4), G)], lambda a: tg.topk(a, 2), "TopkBackward0(Acc0) | None"),
    "var_mean": ([(X34, G)], lambda a: tg.var_mean(a, 1),
                 "VarMeanBackward0(Acc0) | VarMeanBackward0(Acc0)"),
    "std_mean": ([(X34, G)], lambda a: tg.std_mean(a, 1),
                 "StdMeanBackward0(Acc0) | StdMeanBackward0(Acc0)"),
    "mean": ([(X34, G)], lambda a: tg.mean(a), "MeanBackward0(Acc0)"),
    "mean-dim": ([(X34, G)], lambda a: tg.mean(a, 1), "MeanBackward1(Acc0)"),
    "mean-of-product": ([(X34, G)], lambda a: (a * 2).mean(), "MeanBackward0(MulBackward0(Acc0, None))"),
    "unbind": ([(X34, G)], lambda a: tg.unbind(a, 0),
               "UnbindBackward0(Acc0) | UnbindBackward0(Acc0) | UnbindBackward0(Acc0)"),
    "stack": ([(f(3), G), (f(3), N), (f(3), G)], lambda a, b, c: tg.stack([a, b, c]),
              "StackBackward0(Acc0, None, Acc2)"),
    "diag_embed": ([(f(3), G)], lambda a: tg.diag_embed(a), "DiagEmbedBackward0(Acc0)"),
    "diag-1d": ([(f(3), G)], lambda a: tg.diag(a), "DiagEmbedBackward0(Acc0)"),
    "diag-2d": ([(X34, G)], lambda a: tg.diag(a), "DiagonalBackward0_copy(Acc0)"),
    "pad-constant": ([(X34, G)], lambda a: F.pad(a, (1, 1)), "ConstantPadNdBackward0(Acc0)"),
    "pad-reflect": ([(f(1, 3, 4), G)], lambda a: F.pad(a, (1, 1), mode="reflect"),
                    "ReflectionPad1DBackward0(Acc0)"),
    "pad-replicate": ([(f(1, 3, 4), G)], lambda a: F.pad(a, (1, 1), mode="replicate"),
                      "ReplicationPad1DBackward0(Acc0)"),
    "addmm": ([(f(2, 2), G), (f(2, 3), G), (f(3, 2), G)],
              lambda a, b, c: tg.addmm(a, b, c, beta=0.5, alpha=2), "AddmmBackward0(Acc0, Acc1, Acc2)"),
    "addmm-bias1d": ([(f(2), G), (f(2, 3), G), (f(3, 2), G)], lambda a, b, c: tg.addmm(a, b, c),
                     "AddmmBackward0(Acc0, Acc1, Acc2)"),
    "addmv": ([(f(2), G), (f(2, 3), G), (f(3), G)], lambda a, b, c: tg.addmv(a, b, c),
              "AddmvBackward0(Acc0, Acc1, Acc2)"),
    "baddbmm": ([(f(2, 2, 2), G), (f(2, 2, 3), G), (f(2, 3, 2), G)], lambda a, b, c: tg.baddbmm(a, b, c),
                "BaddbmmBackward0(Acc0, Acc1, Acc2)"),
    "addbmm": ([(f(2, 2), G), (f(2, 2, 3), G), (f(2, 3, 2), G)], lambda a, b, c: tg.addbmm(a, b, c),
               "AddbmmBackward0(Acc0, Acc1, Acc2)"),
    "cdist": ([(f(2, 3), G), (f(4, 3), G)], lambda a, b: tg.cdist(a, b), "CdistBackward0(Acc0, Acc1)"),
    "rot90": ([(X34, G)], lambda a: tg.rot90(a), "Rot90Backward0(Acc0)"),
    "take": ([(X34, G), (idx(0, 5, 11), N)], lambda a, i: tg.take(a, i), "TakeBackward0(Acc0)"),
    "block_diag": ([(f(2, 2), G), (f(1, 3), G)], lambda a, b: tg.block_diag(a, b),
                   "BlockDiagBackward0(Acc0, Acc1)"),
    "index_copy": ([(X34, G), (idx(2, 0), N), (f(2, 4), G)], lambda a, i, s: tg.index_copy(a, 0, i, s),
                   "IndexCopyBackward0(Acc0, Acc2)"),
    "put": ([(X34, G), (idx(0, 5), N), (f(2), G)], lambda a, i, s: tg.put(a, i, s),
            "PutBackward0(Acc0, Acc2)"),
    "deg2rad": ([(f(3), G)], lambda a: tg.deg2rad(a), "Deg2RadBackward0(Acc0)"),
    "rad2deg": ([(f(3), G)], lambda a: tg.rad2deg(a), "Rad2DegBackward0(Acc0)"),
    "renorm": ([(X34, G)], lambda a: tg.renorm(a, 2, 0, 1.0), "RenormBackward0(Acc0)"),
    "addr": ([(f(2, 3), G), (f(2), G), (f(3), G)], lambda a, b, c: tg.addr(a, b, c),
             "AddrBackward0(Acc0, Acc1, Acc2)"),
}

# the edges match torch's, the node's name not: torch names the node by the overload (or the
# input's rank) called, we by the op (docs/autograd.md, deviations)
OVERLOAD_NAMES = {"clamp-tensors", "clamp-min-tensor", "clip-tensors", "lerp-tensor",
                  "lerp-end-no-grad", "masked_fill-tensor", "index_fill-tensor", "matmul-1d1d",
                  "matmul-2d1d", "scatter-value", "diag-2d", "pad-reflect",
                  "pad-replicate"}


def _inputs(specs, dtype=tg.float32):
    return [tg.tensor(a, dtype=dtype if a.dtype.kind == "f" else None,
                      requires_grad=g and a.dtype.kind == "f") for a, g in specs]


def _struct(fn, leaves) -> str:
    if fn is None:
        return "None"
    if fn.name() == "torch::autograd::AccumulateGrad":
        return f"Acc{next(k for k, t in enumerate(leaves) if t is fn.variable)}"
    kids = ", ".join(_struct(f, leaves) + (f":{i}" if i else "") for f, i in fn.next_functions)
    return f"{fn.name()}({kids})"


def _structure(case: str) -> str:
    specs, call, _ = CASES[case]
    ts = _inputs(specs)
    out = call(*ts)
    outs = out if isinstance(out, (tuple, list)) else [out]
    return " | ".join(_struct(o.grad_fn, ts) for o in outs)


def _edges_only(structure: str) -> list:
    # each output's root name dropped: what its next_functions lead to
    return [s.partition("(")[2] for s in structure.split(" | ")]


@pytest.mark.parametrize("case", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True, reason="torch names the node by overload"))
    if c in OVERLOAD_NAMES else c for c in CASES])
def test_node_is_torchs(case):
    assert _structure(case) == CASES[case][2]


@pytest.mark.parametrize("case", sorted(OVERLOAD_NAMES))
def test_edges_are_torchs_where_the_name_is_not(case):
    assert _edges_only(_structure(case)) == _edges_only(CASES[case][2])


@pytest.mark.parametrize("case", list(CASES))
def test_gradients_unchanged(case):
    """The decomposition's nodes still run the backward: finite differences agree."""
    specs, call, _ = CASES[case]
    ts = _inputs(specs, tg.float64)
    grad_at = [k for k, t in enumerate(ts) if t.requires_grad]

    def fn(*xs):
        args = list(ts)
        for k, x in zip(grad_at, xs):
            args[k] = x
        return call(*args)

    assert tg.autograd.gradcheck(fn, [ts[k] for k in grad_at], eps=1e-6, atol=1e-5)


def test_backward_follows_the_decomposition_not_the_shown_edges():
    # the shown edge of mean is its operand's node; backward runs sum then div all the same
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 2
    m = y.mean()
    assert m.grad_fn.next_functions == ((y.grad_fn, 0),)
    (g,) = tg.autograd.grad(m, x)
    np.testing.assert_allclose(g.numpy(), np.full((2, 2), 0.5))


def test_post_hook_sees_the_last_step():
    # docs/autograd.md, deviations: a node post-hook of such a node receives the last
    # primitive's grad_inputs (mean: div's, (d sum, None)); torch: (d input,)
    x = tg.ones(2, 2, requires_grad=True)
    m = x.mean()
    seen = []
    m.grad_fn.register_prehook(lambda go: seen.append(("pre", [tuple(g.shape) for g in go])))
    m.grad_fn.register_hook(lambda gi, go: seen.append(
        ("post", [None if g is None else tuple(g.shape) for g in gi])))
    m.backward()
    assert seen == [("pre", [()]), ("post", [(), None])]   # torch 2.13: ("post", [(2, 2)])
