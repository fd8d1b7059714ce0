"""tg.utils.data against torch 2.13: what is deterministic is compared with torch's recorded
values (sequential order, batch shapes, collate structure and dtypes, drop_last lengths,
random_split's fraction rounding, option errors); random orders are checked for torch's
semantics (a permutation, a new one per epoch, repeated under tg.manual_seed)."""
import collections
import random
import warnings

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset,
                                  IterableDataset, RandomSampler, SequentialSampler, Subset,
                                  SubsetRandomSampler, TensorDataset, WeightedRandomSampler,
                                  default_collate, default_convert, get_worker_info,
                                  random_split)

P = collections.namedtuple("P", "a b")


def _ds():
    return TensorDataset(tg.arange(10), tg.arange(10) * 2)


def _lists(batches):
    return [[t.tolist() for t in b] for b in batches]


class _Stream(IterableDataset):
    def __iter__(self):
        return iter(range(5))


class _Squares(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return np.full(3, i * i, np.float32), i


def test_sequential_batches_and_drop_last():
    # torch 2.13: [[0..3],[0,2,4,6]], [[4..7],[8..14]], [[8,9],[16,18]]; len 3, 2 with drop_last
    assert _lists(DataLoader(_ds(), batch_size=4)) == [
        [[0, 1, 2, 3], [0, 2, 4, 6]], [[4, 5, 6, 7], [8, 10, 12, 14]], [[8, 9], [16, 18]]]
    assert [len(b[0]) for b in DataLoader(_ds(), batch_size=4, drop_last=True)] == [4, 4]
    assert len(DataLoader(_ds(), batch_size=4)) == 3
    assert len(DataLoader(_ds(), batch_size=4, drop_last=True)) == 2
    # batch_size=None: samples one by one through default_convert (torch: [0, 1, 2, 3, 4])
    assert list(DataLoader(range(5), batch_size=None)) == [0, 1, 2, 3, 4]


def test_loader_attributes_as_torch():
    dl = DataLoader(_ds(), batch_size=3)   # torch 2.13: 3 False 0 False 0 None
    assert (dl.batch_size, dl.drop_last, dl.num_workers, dl.pin_memory, dl.timeout,
            dl.prefetch_factor) == (3, False, 0, False, 0, None)
    assert type(dl.sampler) is SequentialSampler and type(dl.batch_sampler) is BatchSampler
    assert dl.collate_fn is default_collate
    assert DataLoader(_ds(), num_workers=2).prefetch_factor == 2
    bs = BatchSampler(SequentialSampler(range(10)), 4, False)
    dl = DataLoader(range(10), batch_sampler=bs)
    assert (dl.batch_size, dl.drop_last, len(dl)) == (None, False, 3)
    assert [b.tolist() for b in dl] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_shuffle_is_a_new_permutation_per_epoch_and_seeded():
    dl = DataLoader(range(50), batch_size=10, shuffle=True)
    tg.manual_seed(5)
    e1 = [b.tolist() for b in dl]
    e2 = [b.tolist() for b in dl]
    assert sorted(sum(e1, [])) == list(range(50)) and sorted(sum(e2, [])) == list(range(50))
    assert e1 != e2 and sum(e1, []) != list(range(50))
    tg.manual_seed(5)
    assert [b.tolist() for b in dl] == e1
    g = tg.Generator().manual_seed(1)
    first = [b.tolist() for b in DataLoader(range(50), batch_size=10, shuffle=True, generator=g)]
    g.manual_seed(1)
    tg.manual_seed(99)   # the global stream is not what a loader with a generator reads
    assert [b.tolist() for b in DataLoader(range(50), batch_size=10, shuffle=True,
                                           generator=g)] == first


def test_numpy_dataset_and_collate_structure():
    x = np.arange(24, dtype=np.float32).reshape(8, 3)
    dl = DataLoader(x, batch_size=3)
    batches = list(dl)
    assert [b.shape for b in batches] == [(3, 3), (3, 3), (2, 3)]
    assert batches[0].dtype is tg.float32
    np.testing.assert_array_equal(batches[2].numpy(), x[6:])
    xb, yb = next(iter(DataLoader(_Squares(), batch_size=4)))
    assert xb.shape == (4, 3) and xb.dtype is tg.float32 and yb.dtype is tg.int64
    assert xb[:, 0].tolist() == [0.0, 1.0, 4.0, 9.0] and yb.tolist() == [0, 1, 2, 3]


def test_default_collate_types_as_torch():
    sample = {"x": tg.ones(2), "y": 1, "z": 2.5, "s": "a", "n": np.ones(3, np.float32),
              "t": (1, tg.zeros(1)), "p": P(1, 2.0), "l": [1, 2], "b": True,
              "ns": np.float64(1.5)}
    b = default_collate([sample] * 3)
    # torch 2.13: x f32 (3, 2); y i64 (3,); z f64 (3,); s list; n f32 (3, 3); t list of
    # [i64 (3,), f32 (3, 1)]; p P(i64, f64); l list of two i64 (3,); b bool; ns f64
    assert (b["x"].dtype, b["x"].shape) == (tg.float32, (3, 2))
    assert (b["y"].dtype, b["z"].dtype, b["b"].dtype, b["ns"].dtype) == (
        tg.int64, tg.float64, tg.bool, tg.float64)
    assert b["s"] == ["a", "a", "a"]
    assert (b["n"].dtype, b["n"].shape) == (tg.float32, (3, 3))
    assert isinstance(b["t"], list) and b["t"][0].tolist() == [1, 1, 1]
    assert b["t"][1].shape == (3, 1)
    assert isinstance(b["p"], P) and b["p"].b.dtype is tg.float64 and b["p"].a.tolist() == [1] * 3
    assert isinstance(b["l"], list) and [t.tolist() for t in b["l"]] == [[1, 1, 1], [2, 2, 2]]
    # torch 2.13: numpy int32 scalars and arrays keep int32; Python ints int64, floats f64
    assert default_collate([np.int32(1), np.int32(2)]).dtype is tg.int32
    assert default_collate([np.ones(2, np.int32)]).dtype is tg.int32
    assert default_collate([1, 2]).dtype is tg.int64
    assert default_collate([1.0, 2.0]).dtype is tg.float64


def test_default_collate_errors_as_torch():
    with pytest.raises(RuntimeError, match=r"^stack expects each tensor to be equal size, but "
                                           r"got \[2\] at entry 0 and \[3\] at entry 1$"):
        default_collate([tg.zeros(2), tg.zeros(3)])
    with pytest.raises(TypeError, match=r"^default_collate: batch must contain tensors, numpy "
                                        r"arrays, numbers, dicts or lists; found <class "
                                        r"'object'>$"):
        default_collate([object(), object()])
    with pytest.raises(RuntimeError, match="^each element in list of batch should be of equal "
                                           "size$"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="found <U1$"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_default_convert_as_torch():
    # torch 2.13: tensor([0, 1, 2]) 5 x {'a': tensor([1.], f64)} ['a'] tensor(2.)
    assert default_convert(np.arange(3)).tolist() == [0, 1, 2]
    assert default_convert(5) == 5 and default_convert("x") == "x"
    assert default_convert({"a": np.ones(1)})["a"].dtype is tg.float64
    assert default_convert(np.float32(2)).dtype is tg.float32


def test_random_split_fraction_lengths_as_torch():
    lens = lambda n, f: [len(s) for s in random_split(range(n), f)]   # noqa: E731
    # torch 2.13's values
    assert lens(10, [0.3, 0.3, 0.4]) == [3, 3, 4]
    assert lens(11, [0.5, 0.5]) == [6, 5]
    assert lens(7, [0.1, 0.2, 0.7]) == [1, 2, 4]
    assert lens(10, [0.34, 0.33, 0.33]) == [4, 3, 3]
    with pytest.warns(UserWarning, match="Length of split at index 3 is 0"):
        assert lens(3, [0.25] * 4) == [1, 1, 1, 0]
    parts = random_split(range(10), [3, 7], generator=tg.Generator().manual_seed(0))
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    again = random_split(range(10), [3, 7], generator=tg.Generator().manual_seed(0))
    assert list(again[0]) == list(parts[0])
    with pytest.raises(ValueError, match="^Sum of input lengths does not equal the length of "
                                         "the input dataset!$"):
        random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="^Fraction at index 1 is not between 0 and 1$"):
        random_split(range(10), [0.5, -0.5, 1.0])


def test_option_errors_as_torch():
    ds = _ds()
    seq = SequentialSampler(ds)
    cases = [
        (dict(batch_size=4, shuffle=True, sampler=seq),
         "sampler option is mutually exclusive with shuffle"),
        (dict(batch_sampler=BatchSampler(seq, 3, False), batch_size=2),
         "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
         "drop_last"),
        (dict(batch_size=None, drop_last=True),
         "batch_size=None option disables auto-batching and is mutually exclusive with "
         "drop_last"),
        (dict(num_workers=-1), "num_workers option should be non-negative; use num_workers=0 "
                               "to disable multiprocessing."),
        (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
        (dict(timeout=-1), "timeout option should be non-negative"),
        (dict(batch_size=0), "batch_size should be a positive integer value, but got "
                             "batch_size=0"),
    ]
    for kwargs, msg in cases:
        with pytest.raises(ValueError) as err:
            DataLoader(ds, **kwargs)
        assert str(err.value) == msg
    with pytest.raises(ValueError, match="^DataLoader with IterableDataset: expected "
                                         "unspecified shuffle option, but got shuffle=True$"):
        DataLoader(_Stream(), shuffle=True)


def test_samplers_as_torch():
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert (len(BatchSampler(range(7), 3, False)), len(BatchSampler(range(7), 3, True))) == (3, 2)
    ds = _ds()
    assert (len(RandomSampler(ds)), len(RandomSampler(ds, num_samples=25))) == (10, 25)
    tg.manual_seed(0)
    twice = list(RandomSampler(range(4), num_samples=10))   # whole permutations, then part
    assert sorted(twice[:4]) == sorted(twice[4:8]) == [0, 1, 2, 3] and len(twice) == 10
    drawn = list(RandomSampler(range(3), replacement=True, num_samples=300))
    assert set(drawn) == {0, 1, 2}
    assert list(SubsetRandomSampler([5])) == [5] and len(SubsetRandomSampler([1, 2, 3])) == 3
    assert sorted(SubsetRandomSampler([7, 8, 9])) == [7, 8, 9]
    w = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 4000))
    counts = np.bincount(w, minlength=4)
    assert counts[0] == counts[2] == 0 and abs(counts[3] / 4000 - 0.75) < 0.03
    assert sorted(WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False)) == [0, 1, 2]
    for make, kind, msg in [
        (lambda: BatchSampler(range(3), 2, 3), ValueError,
         "drop_last should be a boolean value, but got drop_last=3"),
        (lambda: RandomSampler(ds, num_samples=0), ValueError,
         "num_samples should be a positive integer value, but got num_samples=0"),
        (lambda: RandomSampler(ds, replacement=1), TypeError,
         "replacement should be a boolean value, but got replacement=1"),
        (lambda: WeightedRandomSampler([[1.0, 2.0]], 2), ValueError,
         "weights should be a 1d sequence but given weights have shape (1, 2)")]:
        with pytest.raises(kind) as err:
            make()
        assert str(err.value) == msg


def test_datasets_as_torch():
    assert list(Subset(range(10), [3, 1])) == [3, 1]
    cat = ConcatDataset([range(3), range(4)])
    assert (len(cat), cat[4], cat[-1], cat.cumulative_sizes) == (7, 1, 3, [3, 7])
    assert isinstance(_ds() + _ds(), ConcatDataset)
    with pytest.raises(ValueError, match="absolute value of index should not exceed"):
        ConcatDataset([range(3)])[-7]
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(tg.zeros(3), tg.zeros(4))
    with pytest.raises(NotImplementedError, match="should implement __getitem__"):
        Dataset()[0]
    with pytest.raises(TypeError, match="Can't instantiate abstract class IterableDataset"):
        IterableDataset()
    # torch 2.13: [0, 1], [2, 3], [4]; drop_last drops [4]
    assert [b.tolist() for b in DataLoader(_Stream(), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert [b.tolist() for b in DataLoader(_Stream(), batch_size=2, drop_last=True)] == [
        [0, 1], [2, 3]]


class _WhoLoads(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        w = get_worker_info()
        return (i, w.id, w.num_workers, w.seed, tg.initial_seed() == w.seed,
                random.random(), float(np.random.rand()))


class _Split(IterableDataset):
    def __iter__(self):
        w = get_worker_info()
        return iter(range(w.id, 7, w.num_workers))


def test_workers_keep_order_and_seed_per_worker():
    assert get_worker_info() is None
    # torch 2.13: [[0,1],[2,3],[4,5],[6,7]] with two workers, as with none
    assert [b.tolist() for b in DataLoader(range(8), batch_size=2, num_workers=2)] == [
        [0, 1], [2, 3], [4, 5], [6, 7]]
    tg.manual_seed(3)
    rows = list(DataLoader(_WhoLoads(), batch_size=None, num_workers=2))
    # torch 2.13: worker ids alternate, seed = base_seed + id, initial_seed() is that seed
    assert [r[0] for r in rows] == list(range(6)) and [r[1] for r in rows] == [0, 1] * 3
    assert all(r[2] == 2 and r[4] for r in rows) and rows[1][3] == rows[0][3] + 1
    assert rows[0][5] != rows[1][5] and rows[0][6] != rows[1][6]   # per-worker streams
    tg.manual_seed(3)
    assert [r[3:] for r in DataLoader(_WhoLoads(), batch_size=None, num_workers=2)] == \
        [r[3:] for r in rows]
    got = sorted(b.tolist() for b in DataLoader(_Split(), batch_size=2, num_workers=2))
    assert got == [[0, 2], [1, 3], [4, 6], [5]]


def _fail_on_three(i):
    if i == 3:
        raise KeyError("no three")
    return i


class _Failing(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return _fail_on_three(i)


def test_worker_errors_and_init_fn():
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 1"):
        list(DataLoader(_Failing(), batch_size=None, num_workers=2))
    def init(worker_id):   # runs in the worker: its effect shows in the samples
        np.random.seed(100 + worker_id)

    class Draw(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return float(np.random.rand())

    out = list(DataLoader(Draw(), batch_size=None, num_workers=2, worker_init_fn=init))
    assert out == [float(np.random.RandomState(100).rand()),
                   float(np.random.RandomState(101).rand())]


def test_tensor_dataset_loader_in_a_training_loop():
    tg.manual_seed(0)
    x = tg.randn(64, 3)
    y = x @ tg.tensor([[1.0], [-2.0], [0.5]])
    model = tg.nn.Linear(3, 1)
    opt = tg.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
    for _ in range(30):
        for xb, yb in loader:
            opt.zero_grad()
            loss = tg.nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
    np.testing.assert_allclose(model.weight.detach().numpy(), [[1.0, -2.0, 0.5]], atol=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(loader) == 4
