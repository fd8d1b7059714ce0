"""`tracegrad run` verifies before it runs, and every error is one line with exit status 2."""
import pytest

from tracegrad.cli import main


def _run(tmp_path, capsys, content: bytes, *extra):
    path = tmp_path / "p.tgir"
    path.write_bytes(content)
    with pytest.raises(SystemExit) as e:
        main(["run", str(path), *extra])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert err.startswith("tracegrad: error: ") and "Traceback" not in err
    return err


def test_a_program_the_verifier_rejects_is_not_run(tmp_path, capsys):
    # issue 18: digamma(%0, %1) ran (digamma of %1, written into %0)
    err = _run(tmp_path, capsys, b"graph @g(%0: f32[3], %1: f32[3]) {\n"
                                 b"  %2: f32[3] = digamma(%0, %1)\n  return %2\n}\n")
    assert "digamma takes 1 operand(s) (input), got 2" in err


def test_a_non_utf8_file_is_a_clear_error(tmp_path, capsys):
    err = _run(tmp_path, capsys, b"graph @g(%0: f32[3]) {\n  return %0\xff\n}\n")
    assert "not UTF-8 text (byte 0xff at offset 34)" in err


def test_a_program_with_host_calls_says_it_runs_only_in_its_process(tmp_path, capsys):
    err = _run(tmp_path, capsys, b"graph @g(%0: f32[3]) {\n  %1: f32[3] = host_call(%0) "
                                 b"{kind=\"hook\", node=0, index=0, mask=(), "
                                 b"out_types=(((3,), f32),)}\n  return %1\n}\n")
    assert "holds host_call" in err and "backward()" in err


def test_a_data_dependent_failure_is_one_line(tmp_path, capsys):
    # an index out of range is found only when the values are read
    program = (b"graph @g(%0: f32[3], %1: i64[2]) {\n  %2: f32[2] = index_take(%0, %1) {dim=0}\n"
               b"  return %2\n}\n")
    import numpy as np
    inputs = tmp_path / "in.npz"
    np.savez(inputs, np.zeros(3, np.float32), np.array([0, 7]))
    err = _run(tmp_path, capsys, program, "--inputs", str(inputs))
    assert "IndexError" in err and len(err.strip().splitlines()) == 1
