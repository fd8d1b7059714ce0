"""ir/ops/_blas.py: small products on one BLAS thread, the library's count restored after."""
import numpy as np
import pytest

from tracegrad.ir.ops import _blas


def _counts():
    return [lib.num_threads for lib in _blas._blas()]


@pytest.mark.parametrize("shape_a, shape_b", [((32, 64), (64, 256)), ((3, 8, 16), (16, 4)),
                                              ((2, 3, 5), (2, 5, 7)), ((1024, 1024), (1024, 8))])
def test_products_equal_numpys_and_leave_the_thread_count_as_it_was(shape_a, shape_b):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    before = _counts()
    np.testing.assert_array_equal(_blas.matmul(a, b), np.matmul(a, b))
    assert _counts() == before


def test_a_small_product_runs_on_one_thread(monkeypatch):
    seen = []

    class FakeLib:                      # stands in for threadpoolctl's controller
        num_threads = 4

        def set_num_threads(self, n):
            seen.append(n)
            self.num_threads = n

    lib = FakeLib()
    monkeypatch.setattr(_blas, "_libs", [lib])
    _blas.matmul(np.ones((4, 4)), np.ones((4, 4)))
    assert seen == [1, 4] and lib.num_threads == 4
    seen.clear()
    _blas.matmul(np.ones((256, 256)), np.ones((256, 256)))   # 16.8M multiply-adds: left alone
    assert seen == []


def test_a_count_raised_after_discovery_is_seen(monkeypatch):
    """A BLAS on one thread when first found (threadpool_limits(1) around the first product)
    and raised later is still switched for small products: counts are read per product."""
    seen = []

    class FakeLib:
        num_threads = 1

        def set_num_threads(self, n):
            seen.append(n)
            self.num_threads = n

    lib = FakeLib()
    monkeypatch.setattr(_blas, "_libs", None)
    monkeypatch.setattr("threadpoolctl.ThreadpoolController",
                        lambda: type("C", (), {"lib_controllers": [lib]})())
    lib.user_api = "blas"
    _blas.matmul(np.ones((4, 4)), np.ones((4, 4)))
    assert seen == []                   # already one thread: nothing to switch
    lib.num_threads = 3
    _blas.matmul(np.ones((4, 4)), np.ones((4, 4)))
    assert seen == [1, 3] and lib.num_threads == 3
