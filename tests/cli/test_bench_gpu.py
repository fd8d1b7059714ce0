"""`python -m benchmarks.gpu`, issue 17's GPU check, refuses to run without a jax GPU."""
from benchmarks import gpu


def test_gpu_check_says_so_without_a_gpu(capsys):
    assert gpu.main(["--steps", "1"]) == 2
    assert "not a GPU" in capsys.readouterr().err
