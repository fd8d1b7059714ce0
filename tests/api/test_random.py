"""The Threefry stream: seeded, identical eagerly and compiled, and distributed as promised."""
import numpy as np
import pytest

import tracegrad as tg
from tracegrad.ir.ops.random import threefry2x32


def test_threefry_known_answer():
    # Known-answer vector of Threefry-2x32 (20 rounds) from the Random123 distribution:
    # key = (0x13198a2e, 0x03707344), counter = (0x243f6a88, 0x85a308d3)
    key = np.array([0x13198A2E, 0x03707344], np.uint32)
    x0, x1 = threefry2x32(np, key, np.array([0x243F6A88], np.uint32),
                          np.array([0x85A308D3], np.uint32))
    assert (int(x0[0]), int(x1[0])) == (0xC4923A9C, 0x483DF7A0)


def test_seed_reproduces_and_stream_advances():
    tg.manual_seed(123)
    a, b = tg.rand(5).numpy(), tg.rand(5).numpy()
    tg.manual_seed(123)
    np.testing.assert_array_equal(tg.rand(5).numpy(), a)
    assert not np.array_equal(a, b)


def test_distributions():
    tg.manual_seed(0)
    u = tg.rand(200_000).numpy()
    z = tg.randn(200_000, dtype=tg.float64).numpy()
    assert u.dtype == np.float32 and 0.0 <= u.min() and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    assert z.dtype == np.float64 and abs(z.mean()) < 0.01 and abs(z.std() - 1.0) < 0.01
    r = tg.randint(-3, 4, (50_000,)).numpy()
    assert r.dtype == np.int64 and set(np.unique(r)) == set(range(-3, 4))


@pytest.mark.parametrize("executor", ["jax", "interpreter"])
def test_compiled_draws_equal_eager_draws(executor):
    def step(x):
        return x * tg.rand(4) + tg.randn(4)

    compiled = tg.compile(step, executor=executor)
    tg.manual_seed(7)
    eager = [step(tg.ones(4)).numpy() for _ in range(3)]
    tg.manual_seed(7)
    comp = [compiled(tg.ones(4)).numpy() for _ in range(3)]
    np.testing.assert_allclose(comp, eager, rtol=1e-6, atol=1e-7)
    assert compiled.traces == 1
    assert not np.allclose(comp[0], comp[1])   # the key is written back: new numbers each call


def test_rng_state_round_trip_resumes_the_stream():
    tg.manual_seed(3)
    state = tg.get_rng_state()
    a = tg.randn(4)
    tg.randn(2)
    tg.set_rng_state(state)
    np.testing.assert_array_equal(tg.randn(4).numpy(), a.numpy())
    with pytest.raises(TypeError, match="set_rng_state"):
        tg.set_rng_state(tg.zeros(2))


# ---- creation signatures (torch 2.13's forms and TypeErrors) ------------------------------

def test_size_forms_as_torch():
    for make in (tg.zeros, tg.ones, tg.empty, tg.rand, tg.randn):
        assert make(2, 3).shape == make((2, 3)).shape == make([2, 3]).shape == (2, 3)
        assert make(size=(2, 3)).shape == (2, 3) and make(()).shape == ()
        assert make(np.int64(2)).shape == make(tg.tensor(2)).shape == (2,)
    assert tg.full([2], 1.0).shape == (2,)
    assert tg.randint(10, (3,)).shape == (3,)          # nanoGPT's get_batch form
    assert tg.randint(2, 5, (4,)).shape == (4,) and tg.randint(5, size=(2,)).shape == (2,)
    assert tg.randint(low=2, high=5, size=(2,)).shape == (2,)
    assert tg.randint(3, (2,), dtype=tg.float32).dtype is tg.float32
    assert tg.randint(0, 2 ** 40, (2,)).dtype is tg.int64
    r = tg.randint(5, 8, (2000,)).numpy()
    assert set(np.unique(r)) == {5, 6, 7}


@pytest.mark.parametrize("call, kind, message", [
    # torch 2.13's messages (the "invalid combination" ones: their first line)
    (lambda: tg.randint(10), TypeError,
     "randint() received an invalid combination of arguments - got (int), but expected one of:"),
    (lambda: tg.randint(10, 3), TypeError,
     "randint(): argument 'size' (position 2) must be tuple of ints, not int"),
    (lambda: tg.randint(3.5, (2,)), TypeError,
     "randint(): argument 'high' (position 1) must be int, not float"),
    (lambda: tg.randint(5, 2, (3,)), RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=2"),
    (lambda: tg.rand(2, (3,)), TypeError,
     "rand(): argument 'size' failed to unpack the object at pos 2 with error \"type must be "
     "tuple of ints,but got tuple\""),
    (lambda: tg.rand("a"), TypeError,
     "rand(): argument 'size' (position 1) must be tuple of ints, not str"),
    (lambda: tg.rand(2.0), TypeError,
     "rand(): argument 'size' (position 1) must be tuple of ints, not float"),
    (lambda: tg.rand(True), TypeError,
     "rand(): argument 'size' (position 1) must be tuple of ints, not bool"),
    (lambda: tg.rand(), TypeError,
     "rand() received an invalid combination of arguments - got (), but expected one of:"),
    (lambda: tg.randn((2,), 3), TypeError,
     "randn() received an invalid combination of arguments - got (tuple, int), but expected "
     "one of:"),
    (lambda: tg.zeros(2.5), TypeError,
     "zeros(): argument 'size' (position 1) must be tuple of ints, not float"),
    (lambda: tg.zeros((2.5,)), TypeError,
     "zeros(): argument 'size' (position 1) must be tuple of ints, but found element of type "
     "float at pos 0"),
    (lambda: tg.zeros(2, None), TypeError,
     "zeros(): argument 'size' failed to unpack the object at pos 2 with error \"type must be "
     "tuple of ints,but got NoneType\""),
    (lambda: tg.zeros((2,), 3), TypeError, "zeros() takes 1 positional argument but 2 were given"),
    (lambda: tg.zeros(), TypeError, "zeros() missing 1 required positional arguments: \"size\""),
    (lambda: tg.zeros(2, size=(3,)), TypeError, "zeros() got multiple values for argument 'size'"),
    (lambda: tg.zeros(-1), RuntimeError, "zeros: Dimension size must be non-negative."),
    (lambda: tg.ones(-1), RuntimeError, "Trying to create tensor with negative dimension -1: [-1]"),
    (lambda: tg.full(2, 1.0), TypeError,
     "full(): argument 'size' (position 1) must be tuple of ints, not int"),
    (lambda: tg.rand(2, dtype=tg.int64), NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'int64'"),
    (lambda: tg.randn(2, dtype=tg.int64), NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'int64'"),
])
def test_creation_errors_as_torch(call, kind, message):
    with pytest.raises(kind) as err:
        call()
    assert message in str(err.value)


# ---- Generator ------------------------------------------------------------------------

def test_generator_objects():
    g = tg.Generator()
    assert g.initial_seed() == 67280421310721      # torch 2.13's seed of a new Generator
    assert g.manual_seed(3) is g and g.initial_seed() == 3 and str(g.device) == "cpu"
    a = tg.rand(4, generator=g)
    b = tg.randn(4, generator=g)
    state = g.get_state()
    c = tg.randint(10, (5,), generator=g)
    g.set_state(state)
    np.testing.assert_array_equal(tg.randint(10, (5,), generator=g).numpy(), c.numpy())
    tg.manual_seed(3)    # the global stream with the same seed draws what g drew
    np.testing.assert_array_equal(tg.rand(4).numpy(), a.numpy())
    g.manual_seed(3)
    tg.manual_seed(0)    # ... and g's stream is its own: reseeding the global one leaves it
    np.testing.assert_array_equal(tg.rand(4, generator=g).numpy(), a.numpy())
    np.testing.assert_array_equal(tg.randn(4, generator=g).numpy(), b.numpy())
    perm = tg.randperm(20, generator=tg.Generator().manual_seed(1)).tolist()
    assert sorted(perm) == list(range(20))
    assert tg.randperm(20, generator=tg.Generator().manual_seed(1)).tolist() == perm
    # torch 2.13: a negative seed wraps to uint64; 2**64 overflows
    assert tg.Generator().manual_seed(-1).initial_seed() == 18446744073709551615
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        tg.Generator().manual_seed(2 ** 64)
    with pytest.raises(TypeError, match="RNG state"):
        g.set_state(tg.zeros(3))
    with pytest.raises(TypeError, match="generator"):
        tg.rand(2, generator=5)
    s = g.seed()
    assert g.initial_seed() == s and tg.manual_seed(7).initial_seed() == tg.initial_seed() == 7


def test_generator_draws_compile_like_eager():
    g = tg.Generator().manual_seed(11)

    def step(x):
        return x + tg.rand(3, generator=g)

    eager = [step(tg.zeros(3)).numpy() for _ in range(2)]
    g.manual_seed(11)
    compiled = tg.compile(step)
    np.testing.assert_allclose([compiled(tg.zeros(3)).numpy() for _ in range(2)], eager,
                               rtol=1e-6)


# ---- multinomial, bernoulli, normal, poisson ------------------------------------------

def test_multinomial_as_torch():
    # torch 2.13: deterministic cases
    assert tg.multinomial(tg.tensor([0.0, 1.0, 0.0]), 4, replacement=True).tolist() == [1] * 4
    assert tg.multinomial(tg.tensor([[0.0, 1.0, 0.0], [0, 0, 2.0]]), 1).tolist() == [[1], [2]]
    assert tg.multinomial(tg.tensor([1.0, 0.0, 0.0]), 3).tolist() == [0, 1, 2]
    assert tg.tensor([1.0, 1.0]).multinomial(1).shape == (1,)
    assert tg.multinomial(tg.ones(2, 3), 2).dtype is tg.int64
    tg.manual_seed(0)
    w = tg.tensor([1.0, 2.0, 3.0, 4.0])
    freq = np.bincount(tg.multinomial(w, 40_000, True).numpy(), minlength=4) / 40_000
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.3, 0.4], atol=0.01)
    firsts = tg.multinomial(w.expand(40_000, 4), 2).numpy()
    assert (firsts[:, 0] != firsts[:, 1]).all()
    np.testing.assert_allclose(np.bincount(firsts[:, 0], minlength=4) / 40_000,
                               [0.1, 0.2, 0.3, 0.4], atol=0.01)
    g = tg.Generator().manual_seed(4)
    a = tg.multinomial(w, 5, True, generator=g)
    g.manual_seed(4)
    assert tg.multinomial(w, 5, True, generator=g).tolist() == a.tolist()


@pytest.mark.parametrize("args, message", [
    # torch 2.13's messages
    ((tg.tensor([0.5, 0.5]), 3),
     "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
    ((tg.tensor([-0.5, 0.5]), 1), "probability tensor contains either `inf`, `nan` or element < 0"),
    ((tg.tensor([float("nan"), 1.0]), 1),
     "probability tensor contains either `inf`, `nan` or element < 0"),
    ((tg.tensor([0.0, 0.0]), 1), "invalid multinomial distribution (sum of probabilities <= 0)"),
    ((tg.ones(2, 2, 2), 1), "prob_dist must be 1 or 2 dim"),
    ((tg.ones(3), 0), "cannot sample n_sample <= 0 samples"),
    ((tg.ones(3, dtype=tg.int64), 1), "multinomial only supports floating-point dtypes for input"),
])
def test_multinomial_errors_as_torch(args, message):
    with pytest.raises(RuntimeError) as err:
        tg.multinomial(*args)
    assert message in str(err.value)


def test_bernoulli_normal_poisson():
    # torch 2.13: bernoulli([1, 0]) == [1, 0]; p=0 gives zeros; keeps float64
    assert tg.bernoulli(tg.tensor([1.0, 0.0])).tolist() == [1.0, 0.0]
    assert tg.bernoulli(tg.ones(2), p=0.0).tolist() == [0.0, 0.0]
    assert tg.bernoulli(tg.ones(2, dtype=tg.float64)).dtype is tg.float64
    tg.manual_seed(1)
    assert abs(tg.bernoulli(tg.full((50_000,), 0.3)).numpy().mean() - 0.3) < 0.01
    with pytest.raises(RuntimeError, match="p_in >= 0 && p_in <= 1"):
        tg.bernoulli(tg.tensor([1.5]))
    with pytest.raises(NotImplementedError, match="bernoulli_tensor_cpu_p_"):
        tg.bernoulli(tg.ones(2, dtype=tg.int64))
    # torch 2.13's shapes of the four forms
    assert tg.normal(tg.zeros(2, 3), 1.0).shape == (2, 3)
    assert tg.normal(0.0, tg.ones(3)).shape == (3,)
    assert tg.normal(0.0, 1.0, (2,)).shape == (2,)
    assert tg.normal(tg.zeros(3), tg.ones(2, 3)).shape == (2, 3)
    z = tg.normal(tg.full((50_000,), 3.0), 2.0).numpy()
    assert abs(z.mean() - 3.0) < 0.05 and abs(z.std() - 2.0) < 0.05
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -1"):
        tg.normal(0.0, -1.0, (2,))
    with pytest.raises(TypeError, match="normal\\(\\) received an invalid combination"):
        tg.normal(0.0, 1.0)
    p = tg.poisson(tg.full((50_000,), 4.0)).numpy()
    assert abs(p.mean() - 4.0) < 0.05 and (p == np.round(p)).all()
    assert tg.poisson(tg.zeros(3)).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-neg"):
        tg.poisson(tg.tensor([-1.0]))


def test_in_place_fills():
    tg.manual_seed(2)
    n = 50_000
    u = tg.zeros(n).uniform_(2, 3).numpy()
    assert 2 <= u.min() and u.max() < 3 and abs(u.mean() - 2.5) < 0.01
    z = tg.zeros(n).normal_(1, 2).numpy()
    assert abs(z.mean() - 1) < 0.05 and abs(z.std() - 2) < 0.05
    assert abs(tg.zeros(n).bernoulli_(0.25).numpy().mean() - 0.25) < 0.01
    assert abs(tg.zeros(n).exponential_(2.0).numpy().mean() - 0.5) < 0.01
    geo = tg.zeros(n).geometric_(0.5).numpy()
    assert geo.min() == 1 and abs(geo.mean() - 2.0) < 0.03
    ln = tg.zeros(n, dtype=tg.float64).log_normal_(0.0, 0.5).numpy()
    assert abs(np.log(ln).std() - 0.5) < 0.01
    c = tg.zeros(n).cauchy_(1.0, 2.0).numpy()
    assert abs(np.median(c) - 1.0) < 0.05
    r = tg.zeros(n, dtype=tg.int64).random_(3, 6).numpy()
    assert set(np.unique(r)) == {3, 4, 5}
    assert tg.zeros(3, dtype=tg.int64).random_(3, 4).tolist() == [3, 3, 3]   # torch 2.13
    f = tg.zeros(n).random_().numpy()
    assert f.min() >= 0 and f.max() <= 2 ** 24 and f.max() > 2 ** 23 and (f == np.round(f)).all()
    assert tg.zeros(3, dtype=tg.uint8).random_().dtype is tg.uint8
    t = tg.zeros(3)
    assert t.uniform_() is t
    g = tg.Generator().manual_seed(9)
    a = tg.zeros(4).normal_(generator=g)
    g.manual_seed(9)
    assert tg.zeros(4).normal_(generator=g).tolist() == a.tolist()


@pytest.mark.parametrize("call, message", [
    # torch 2.13's messages
    (lambda t: t.uniform_(3, 2), "uniform_ expects to return a [from, to) range, but found "
                                 "from=3 > to=2"),
    (lambda t: t.normal_(0, -1), "normal expects std >= 0.0, but found std -1"),
    (lambda t: t.exponential_(-1), "exponential_ expects lambda > 0.0, but found lambda=-1"),
    (lambda t: t.geometric_(0), "geometric_ expects p to be in (0, 1), but got p=0"),
    (lambda t: t.geometric_(1.5), "geometric_ expects p to be in (0, 1), but got p=1.5"),
    (lambda t: t.bernoulli_(1.5), "bernoulli_ expects p to be in [0, 1], but got p=1.5"),
    (lambda t: t.log_normal_(1, 0), "log_normal_ expects std > 0.0, but found std=0"),
    (lambda t: t.random_(5, 2), "random_ expects 'from' to be less than 'to', but got from=5 "
                                ">= to=2"),
])
def test_in_place_fill_errors_as_torch(call, message):
    with pytest.raises(RuntimeError) as err:
        call(tg.zeros(3))
    assert message in str(err.value)


# ---- dropout inside scaled_dot_product_attention -----------------------------------------

def test_sdpa_dropout_drops_attention_weights():
    F = tg.nn.functional
    rng = np.random.default_rng(0)
    q, k, v = (tg.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
               for s in ((2, 3, 4), (2, 5, 4), (2, 5, 6)))
    tg.manual_seed(8)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.4, is_causal=False)
    with tg.no_grad():
        weights = F.softmax(q @ k.transpose(-2, -1) * 0.5, -1)
        tg.manual_seed(8)
        expect = F.dropout(weights, 0.4) @ v
    np.testing.assert_allclose(out.detach().numpy(), expect.numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    assert q.grad is not None and np.isfinite(q.grad.numpy()).all()
    zero = F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    assert not zero.detach().numpy().any()
    with pytest.raises(ValueError, match="dropout_p has to be between 0 and 1, but got 1.5"):
        F.scaled_dot_product_attention(q, k, v, dropout_p=1.5)
    with pytest.raises(NotImplementedError, match="call tg.nn.functional.scaled_dot_product"):
        tg._ops.scaled_dot_product_attention(q, k, v, None, 0.1)   # the registry op itself


def test_sdpa_dropout_compiles_like_eager():
    F = tg.nn.functional
    q = tg.tensor(np.random.default_rng(1).standard_normal((1, 4, 8)).astype(np.float32))

    def attend(x):
        return F.scaled_dot_product_attention(x, x, x, dropout_p=0.25, is_causal=True)

    tg.manual_seed(4)
    eager = [attend(q).numpy() for _ in range(2)]
    compiled = tg.compile(attend)
    tg.manual_seed(4)
    np.testing.assert_allclose([compiled(q).numpy() for _ in range(2)], eager, rtol=1e-5,
                               atol=1e-6)
