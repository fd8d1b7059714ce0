"""tracegrad.distributions against torch 2.13's values (recorded with torch 2.13.0+cpu from
the same calls): log_prob, entropy, cdf/icdf, gradients, kl_divergence, shapes, reprs and
validation messages; samples checked by their frequencies; the rest refused clearly."""
import math

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.distributions import (Bernoulli, Categorical, Normal, Uniform, kl_divergence,
                                     register_kl)


def vals(t):
    return t.detach().numpy().ravel().tolist()


def test_categorical_log_prob_entropy_and_grad_match_torch():
    logits = tg.tensor([[0.5, -1.0, 2.0], [0.0, 0.3, -0.7]], requires_grad=True)
    c = Categorical(logits=logits)
    lp = c.log_prob(tg.tensor([2, 1]))
    # torch 2.13
    assert vals(lp) == pytest.approx([-0.24131131, -0.74607056], rel=1e-6)
    assert vals(c.entropy()) == pytest.approx([0.62158465, 1.02592337], rel=1e-6)
    assert vals(c.probs) == pytest.approx([0.17529039, 0.03911257, 0.78559703, 0.35131553,
                                           0.47422636, 0.17445813], rel=1e-6)
    (lp.sum() + c.entropy().sum()).backward()
    assert vals(logits.grad) == pytest.approx([0.02098694, 0.06335168, -0.08433862,
                                               -0.34423751, 0.39306009, -0.04882258],
                                              rel=1e-5)


def test_categorical_zero_probability_and_broadcast_log_prob_match_torch():
    c = Categorical(probs=tg.tensor([0.1, 0.0, 0.9]))
    assert vals(c.entropy()) == pytest.approx([0.32508299], rel=1e-6)       # torch 2.13
    assert vals(c.logits) == pytest.approx([-2.30258512, -15.94238472, -0.10536054], rel=1e-6)
    c = Categorical(probs=tg.tensor([[0.2, 0.8], [0.6, 0.4]]))
    lp = c.log_prob(tg.tensor([[1], [0], [1]]))
    assert tuple(lp.shape) == (3, 2)
    assert vals(lp) == pytest.approx([-0.22314353, -0.9162907, -1.60943794, -0.51082557,
                                      -0.22314353, -0.9162907], rel=1e-6)


def test_categorical_shapes_mode_perplexity_support():
    c = Categorical(tg.tensor([[0.2, 0.8], [0.5, 0.5]]))
    assert c.batch_shape == tg.Size([2]) and c.event_shape == tg.Size([])
    assert c.expand((3, 2)).batch_shape == tg.Size([3, 2])
    assert tuple(c.sample((4,)).shape) == (4, 2) and c.sample().dtype == tg.int64
    assert c.mode.tolist() == [1, 0]
    assert vals(c.perplexity()) == pytest.approx([1.64938486, 2.0], rel=1e-6)  # torch 2.13
    assert c.enumerate_support().tolist() == [[0, 0], [1, 1]]
    assert c.enumerate_support(False).tolist() == [[0], [1]]
    assert repr(c.support) == "IntegerInterval(lower_bound=0, upper_bound=1)"
    assert math.isnan(Categorical(tg.tensor([0.2, 0.8])).mean.item())


def test_categorical_sample_frequencies():
    tg.manual_seed(0)
    draws = Categorical(tg.tensor([0.1, 0.6, 0.3])).sample((20000,)).numpy()
    freq = np.bincount(draws, minlength=3) / draws.size
    assert freq == pytest.approx([0.1, 0.6, 0.3], abs=0.015)   # ~4.5 sigma at n = 20000


def test_bernoulli_matches_torch():
    pr = tg.tensor([0.2, 0.7, 0.5], requires_grad=True)
    b = Bernoulli(pr)
    lp = b.log_prob(tg.tensor([1., 0., 1.]))
    # torch 2.13
    assert vals(lp) == pytest.approx([-1.60943794, -1.20397282, -0.69314718], rel=1e-6)
    assert vals(b.entropy()) == pytest.approx([0.50040245, 0.61086428, 0.69314718], rel=1e-6)
    assert vals(b.logits) == pytest.approx([-1.38629436, 0.84729785, 0.0], abs=1e-6)
    lp.sum().backward()
    assert vals(pr.grad) == pytest.approx([5.0, -3.33333325, 2.0], rel=1e-5)
    lp = Bernoulli(logits=tg.tensor([-1.0, 3.0])).log_prob(tg.tensor([0., 1.]))
    assert vals(lp) == pytest.approx([-0.31326175, -0.04858735], rel=1e-6)
    assert Bernoulli(0.3).mode.item() == 0.0 and math.isnan(Bernoulli(0.5).mode.item())
    tg.manual_seed(1)
    assert Bernoulli(tg.full((20000,), 0.3)).sample().mean().item() == pytest.approx(0.3, abs=0.015)


def test_normal_matches_torch():
    loc = tg.tensor([0.0, 1.5], requires_grad=True)
    sc = tg.tensor([1.0, 0.5], requires_grad=True)
    n = Normal(loc, sc)
    lp = n.log_prob(tg.tensor([0.3, 2.0]))
    # torch 2.13
    assert vals(lp) == pytest.approx([-0.96393853, -0.72579134], rel=1e-6)
    assert vals(n.entropy()) == pytest.approx([1.41893852, 0.72579134], rel=1e-6)
    assert vals(n.cdf(tg.tensor([0.3, 2.0]))) == pytest.approx([0.61791146, 0.84134471], rel=1e-6)
    assert vals(n.icdf(tg.tensor([0.3, 0.9]))) == pytest.approx([-0.52440047, 2.14077568], rel=1e-5)
    lp.sum().backward()
    assert vals(loc.grad) == pytest.approx([0.3, 2.0], rel=1e-6)
    assert vals(sc.grad) == pytest.approx([-0.91, 0.0], abs=1e-6)
    assert Normal(tg.zeros(2, 1), tg.ones(3)).batch_shape == tg.Size([2, 3])
    assert Normal(0., 2.).stddev.item() == 2.0 and Normal(0., 2.).variance.item() == 4.0


def test_normal_rsample_carries_gradient_and_has_right_moments():
    tg.manual_seed(2)
    loc, scale = tg.tensor(1.0, requires_grad=True), tg.tensor(2.0, requires_grad=True)
    x = Normal(loc, scale).rsample((20000,))
    assert x.mean().item() == pytest.approx(1.0, abs=0.06)
    assert x.std().item() == pytest.approx(2.0, abs=0.06)
    x.sum().backward()
    assert loc.grad.item() == 20000.0       # d(loc + scale * eps)/d loc, summed
    assert Normal(loc, scale).sample().requires_grad is False


def test_uniform_matches_torch():
    u = Uniform(tg.tensor([0.0, -1.0]), tg.tensor([2.0, 3.0]))
    # torch 2.13
    assert vals(u.log_prob(tg.tensor([1.0, 2.5]))) == pytest.approx([-0.69314718, -1.38629436])
    assert vals(u.entropy()) == pytest.approx([0.69314718, 1.38629436])
    assert vals(u.cdf(tg.tensor([1.0, 2.5]))) == pytest.approx([0.5, 0.875])
    assert vals(u.mean) + vals(u.variance) == pytest.approx([1.0, 1.0, 0.33333334, 1.33333337])
    tg.manual_seed(3)
    s = u.sample((5000,))
    assert tuple(s.shape) == (5000, 2)
    assert bool(((s >= u.low) & (s < u.high)).all())


def test_kl_divergence_matches_torch():
    # torch 2.13
    kl = kl_divergence(Normal(tg.tensor([0.0, 1.5]), tg.tensor([1.0, 0.5])),
                       Normal(tg.tensor([1.0, 1.0]), tg.tensor([2.0, 0.5])))
    assert vals(kl) == pytest.approx([0.44314718, 0.5], rel=1e-6)
    kl = kl_divergence(Categorical(logits=tg.tensor([[0.5, -1.0, 2.0], [0.0, 0.3, -0.7]])),
                       Categorical(probs=tg.tensor([0.3, 0.3, 0.4])))
    assert vals(kl) == pytest.approx([0.35638601, 0.12786096], rel=1e-5)
    kl = kl_divergence(Bernoulli(tg.tensor([0.2, 0.7])), Bernoulli(tg.tensor([0.5, 0.1])))
    assert vals(kl) == pytest.approx([0.19274475, 1.03255343], rel=1e-5)
    kl = kl_divergence(Uniform(0.0, 1.0), Uniform(tg.tensor([-1.0, 0.5]), tg.tensor([2.0, 3.0])))
    assert vals(kl) == pytest.approx([1.09861231, math.inf], rel=1e-6)
    with pytest.raises(NotImplementedError, match="No KL"):
        kl_divergence(Normal(0., 1.), Bernoulli(0.5))


def test_register_kl_is_used():
    class Mine(Normal):
        pass

    @register_kl(Mine, Bernoulli)
    def _kl(p, q):
        return tg.tensor(7.0)
    assert kl_divergence(Mine(0., 1.), Bernoulli(0.5)).item() == 7.0


def test_reprs_match_torch():
    assert repr(Normal(tg.zeros(2), 1.0)) == "Normal(loc: torch.Size([2]), scale: torch.Size([2]))"
    assert repr(Uniform(0., 1.)) == "Uniform(low: 0.0, high: 1.0)"
    assert repr(Bernoulli(logits=tg.zeros(3))) == "Bernoulli(logits: torch.Size([3]))"


# torch 2.13's messages; ours start with the name called and end with the caller's line
@pytest.mark.parametrize("make, message", [
    (lambda: Categorical(tg.tensor([0.2, -0.1])),
     "Expected parameter probs (Tensor of shape (2,)) of distribution Categorical(probs: "
     "torch.Size([2])) to satisfy the constraint Simplex(), but found invalid values:\n"
     "tensor([ 2., -1.])"),
    (lambda: Categorical(tg.tensor([1., 2.]), logits=tg.tensor([1.])),
     "Either `probs` or `logits` must be specified, but not both."),
    (lambda: Categorical(tg.tensor(1.)), "`probs` parameter must be at least one-dimensional."),
    (lambda: Categorical(tg.tensor([0.2, 0.8])).log_prob(tg.tensor([0, 2])),
     "Expected value argument (Tensor of shape (2,)) to be within the support "
     "(IntegerInterval(lower_bound=0, upper_bound=1)) of the distribution Categorical(probs: "
     "torch.Size([2])), but found invalid values:\ntensor([0, 2])"),
    (lambda: Categorical(tg.tensor([0.2, 0.8])).log_prob([0]),
     "The value argument to log_prob must be a Tensor"),
    (lambda: Normal(0., -1.),
     "Expected parameter scale (Tensor of shape ()) of distribution Normal(loc: 0.0, scale: "
     "-1.0) to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid "
     "values:\n-1.0"),
    (lambda: Normal(tg.tensor([0.0, math.nan]), 1.0),
     "Expected parameter loc (Tensor of shape (2,)) of distribution Normal(loc: "
     "torch.Size([2]), scale: torch.Size([2])) to satisfy the constraint Real(), but found "
     "invalid values:\ntensor([0., nan])"),
    (lambda: Uniform(1., 0.),
     "Expected parameter low (Tensor of shape ()) of distribution Uniform(low: 1.0, high: "
     "0.0) to satisfy the constraint LessThan(upper_bound=0.0), but found invalid values:\n1.0"),
    (lambda: Uniform(0., 1.).log_prob(tg.tensor(2.)),
     "Expected value argument (Tensor of shape ()) to be within the support "
     "(Interval(lower_bound=0.0, upper_bound=1.0)) of the distribution Uniform(low: 0.0, "
     "high: 1.0), but found invalid values:\n2.0"),
    (lambda: Bernoulli(tg.tensor([0.2, 1.5])),
     "Expected parameter probs (Tensor of shape (2,)) of distribution Bernoulli(probs: "
     "torch.Size([2])) to satisfy the constraint Interval(lower_bound=0.0, upper_bound=1.0), "
     "but found invalid values:\ntensor([0.2000, 1.5000])"),
])
def test_validation_errors_match_torch(make, message):
    with pytest.raises(ValueError) as err:
        make()
    head, _, where = str(err.value).partition("\n  at ")
    called, _, torch_message = head.partition(": ")
    assert torch_message == message
    assert called in ("Categorical", "Categorical.log_prob", "Normal", "Uniform",
                      "Uniform.log_prob", "Bernoulli")
    assert "test_distributions.py" in where


def test_validate_args_false_skips_checks():
    assert Normal(0., -1., validate_args=False).scale.item() == -1.0


def test_mismatched_shapes_raise_torch_message():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match the size of "
                                           r"tensor b \(3\) at non-singleton dimension 0"):
        Normal(tg.zeros(2), tg.ones(3))


def test_log_prob_under_compile_matches_eager():
    logits = tg.tensor([[0.5, -1.0, 2.0], [0.0, 0.3, -0.7]])
    value = tg.tensor([2, 1])

    def f(lg, v):
        c = Categorical(logits=lg)
        return c.log_prob(v) + c.entropy() + Normal(lg[:, 0], 1.0).log_prob(lg[:, 1])
    assert vals(tg.compile(f)(logits, value)) == pytest.approx(vals(f(logits, value)), rel=1e-6)


def test_unbuilt_distributions_are_refused_by_name():
    import tracegrad.distributions as D
    with pytest.raises(NotImplementedError, match="tracegrad.distributions.Beta is not built"):
        D.Beta
    with pytest.raises(AttributeError):
        D.NoSuchThing


def test_compiled_samples_draw_what_eager_draws():
    """Categorical.sample (multinomial) and Normal.rsample trace: same seed, same draws."""
    def f(lg):
        c = Categorical(logits=lg)
        a = c.sample()
        return a, c.log_prob(a), Normal(lg, 1.0).rsample()
    tg.manual_seed(0)
    eager = f(tg.zeros(3, 4))
    tg.manual_seed(0)
    compiled = tg.compile(f)(tg.zeros(3, 4))
    assert eager[0].tolist() == compiled[0].tolist()
    assert vals(eager[1]) == pytest.approx(vals(compiled[1]), rel=1e-6)
    assert vals(eager[2]) == pytest.approx(vals(compiled[2]), rel=1e-6, abs=1e-6)
