"""torch.distributions' everyday part: Categorical, Bernoulli, Normal, Uniform,
kl_divergence / register_kl, constraints.

Built on registry ops, so log_prob and entropy have gradients and trace under
`tg.compile`; samples use tracegrad's random stream (not torch's numbers).  torch's other
distributions and transforms are not built: using one raises NotImplementedError naming
what exists here and how to write the rest.
"""
from ..nn._not_built import NotBuiltError
from . import constraints
from .categorical import Bernoulli, Categorical
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .normal import Normal, Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal", "Uniform", "constraints",
           "kl_divergence", "register_kl"]

# the rest of torch.distributions.__all__ (torch 2.13): refused by name, never AttributeError
_NOT_BUILT = frozenset(
    "Beta Binomial Cauchy Chi2 ContinuousBernoulli Dirichlet Exponential ExponentialFamily "
    "FisherSnedecor Gamma GeneralizedPareto Geometric Gumbel HalfCauchy HalfNormal "
    "Independent InverseGamma Kumaraswamy LKJCholesky Laplace LogNormal LogisticNormal "
    "LowRankMultivariateNormal MixtureSameFamily Multinomial MultivariateNormal "
    "NegativeBinomial OneHotCategorical OneHotCategoricalStraightThrough Pareto Poisson "
    "RelaxedBernoulli RelaxedOneHotCategorical StudentT VonMises Weibull Wishart "
    "TransformedDistribution biject_to transform_to AbsTransform AffineTransform "
    "CatTransform ComposeTransform CorrCholeskyTransform CumulativeDistributionTransform "
    "ExpTransform IndependentTransform LowerCholeskyTransform PositiveDefiniteTransform "
    "PowerTransform ReshapeTransform SigmoidTransform SoftplusTransform TanhTransform "
    "SoftmaxTransform StackTransform StickBreakingTransform Transform "
    "identity_transform".split())


def __getattr__(name: str):
    if name in _NOT_BUILT:
        raise NotBuiltError(
            f"tracegrad.distributions.{name} is not built; this module has {', '.join(__all__)}. "
            f"Write its log_prob with tracegrad ops (tg.lgamma, tg.special, ...) and sample "
            f"with tg.rand/tg.randn, or subclass Distribution")
    raise AttributeError(f"module 'tracegrad.distributions' has no attribute '{name}'")
