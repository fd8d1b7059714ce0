"""`tg.load` of crafted or damaged files: always a `CheckpointError` naming the file.

Each test builds its file byte by byte (a zip of .npy members, as `tg.save` writes),
then checks that loading raises CheckpointError (never RecursionError, MemoryError,
NotImplementedError, AttributeError, zlib.error, or a partial result) and that the
message names the path.
"""
import io
import json
import struct
import zipfile

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.serialization import CheckpointError


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def _doc(root) -> bytes:
    text = json.dumps({"format": "tracegrad.save", "version": 1, "root": root})
    return _npy(np.frombuffer(text.encode(), dtype=np.uint8))


def _write(path, members: dict, compression=zipfile.ZIP_STORED) -> None:
    with zipfile.ZipFile(path, "w", compression) as z:
        for name, data in members.items():
            z.writestr(name, data)


def _assert_refused(path, *words):
    with pytest.raises(CheckpointError) as exc:
        tg.load(path)
    msg = str(exc.value)
    assert str(path) in msg, msg
    for w in words:
        assert w in msg, msg
    return msg


def _valid(path) -> bytes:
    tg.save({"w": tg.arange(6.0).reshape(2, 3), "step": 3}, path)
    return path.read_bytes()


def test_valid_file_still_loads(tmp_path):
    p = tmp_path / "ok.tg"
    _valid(p)
    out = tg.load(p)
    np.testing.assert_array_equal(out["w"].numpy(), np.arange(6.0, dtype=np.float32).reshape(2, 3))
    assert out["step"] == 3


@pytest.mark.parametrize("depth", [3000, 200_000])
def test_deeply_nested_json_lists(tmp_path, depth):
    # json.loads (or the decoder's walk) recurses once per level: RecursionError before
    p = tmp_path / "deep.tg"
    text = ('{"format": "tracegrad.save", "version": 1, "root": ' + "[" * depth + "]" * depth
            + "}").encode()
    _write(p, {"__tracegrad__.npy": _npy(np.frombuffer(text, dtype=np.uint8))})
    _assert_refused(p, "nested too deeply")


def test_deeply_nested_tuple_nodes(tmp_path):
    n = 5000   # within json's own limit, past the decoder's recursion limit
    text = ('{"format": "tracegrad.save", "version": 1, "root": ' + '{"tuple": [' * n + "1"
            + "]}" * n + "}").encode()
    p = tmp_path / "deep_tuples.tg"
    _write(p, {"__tracegrad__.npy": _npy(np.frombuffer(text, dtype=np.uint8))})
    _assert_refused(p, "nested too deeply")


def test_npy_header_claiming_a_huge_shape(tmp_path):
    # a header for 2**40 float32 values followed by 16 bytes: MemoryError before
    header = {"descr": "<f4", "fortran_order": False, "shape": (2 ** 40,)}
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    p = tmp_path / "huge.tg"
    _write(p, {"__tracegrad__.npy": _doc({"tensor": 0, "dtype": "float32",
                                          "requires_grad": False, "parameter": False}),
               "t0.npy": buf.getvalue() + b"\0" * 16})
    _assert_refused(p, "'t0'", "4398046511104 bytes", "holds 16 bytes")


def test_npy_header_of_an_object_dtype(tmp_path):
    header = {"descr": "|O", "fortran_order": False, "shape": (2,)}
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    p = tmp_path / "obj.tg"
    _write(p, {"__tracegrad__.npy": _doc({"ndarray": 0, "dtype": "object"}),
               "t0.npy": buf.getvalue() + b"\0" * 16})
    _assert_refused(p, "dtype object", "numbers only")


def test_member_without_npy_magic(tmp_path):
    # NumPy hands back the raw bytes of such a member: AttributeError (.tobytes) before
    p = tmp_path / "nomagic.tg"
    _write(p, {"__tracegrad__.npy": b"this is not an npy file"})
    _assert_refused(p, "'__tracegrad__'", "no NumPy magic")
    q = tmp_path / "nomagic_t0.tg"
    _write(q, {"__tracegrad__.npy": _doc({"tensor": 0, "dtype": "float32",
                                          "requires_grad": False, "parameter": False}),
               "t0.npy": b"\0\1\2\3"})
    _assert_refused(q, "'t0'", "no NumPy magic")


def _set_compression(data: bytes, method: int) -> bytes:
    """`data` (a zip) with every member's compression method field set to `method`."""
    out = bytearray(data)
    for sig, offset in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):   # local, central headers
        i = out.find(sig)
        while i != -1:
            out[i + offset:i + offset + 2] = struct.pack("<H", method)
            i = out.find(sig, i + 4)
    return bytes(out)


@pytest.mark.parametrize("method", [99, 12, 14])   # unknown, bzip2/lzma on stored bytes
def test_bad_compression_byte(tmp_path, method):
    # zipfile raises NotImplementedError for an unknown method (before: escaped tg.load)
    p = tmp_path / "ok.tg"
    p.write_bytes(_set_compression(_valid(p), method))
    _assert_refused(p)


@pytest.mark.parametrize("keep", [0.0, 0.1, 0.5, 0.9, 0.99])
def test_truncated_file(tmp_path, keep):
    p = tmp_path / "trunc.tg"
    data = _valid(p)
    p.write_bytes(data[:int(len(data) * keep)])
    _assert_refused(p)


def test_truncated_deflated_member(tmp_path):
    # a deflate stream cut short inside a member (zlib.error / EOFError underneath)
    p = tmp_path / "deflate.tg"
    arr = np.arange(5000, dtype=np.float32)
    _write(p, {"__tracegrad__.npy": _doc({"ndarray": 0, "dtype": "float32"}),
               "t0.npy": _npy(arr)}, zipfile.ZIP_DEFLATED)
    data = p.read_bytes()
    start = data.find(b"t0.npy") + len("t0.npy")
    p.write_bytes(data[:start + 200] + data[start + 400:])
    _assert_refused(p)


def test_flipped_byte_in_tensor_data(tmp_path):
    p = tmp_path / "flip.tg"
    data = bytearray(_valid(p))
    i = data.find(b"t0.npy")
    i = data.find(b"\x93NUMPY", i) + 140   # inside t0's values (stored, not compressed)
    data[i] ^= 0xFF
    p.write_bytes(bytes(data))
    _assert_refused(p, "CRC")


def test_json_scalar_with_object_dtype_is_refused(tmp_path):
    # before: np.dtype("object").type("rm -rf") loaded as a str; numeric scalars only
    p = tmp_path / "objscalar.tg"
    _write(p, {"__tracegrad__.npy": _doc({"scalar": "x", "dtype": "object"})})
    _assert_refused(p, "dtype object", "numeric NumPy scalars only")
    q = tmp_path / "strscalar.tg"
    _write(q, {"__tracegrad__.npy": _doc({"scalar": "12", "dtype": "int64"})})
    _assert_refused(q, "'12'")


def test_json_scalar_out_of_range(tmp_path):
    # np.int8(1000) raises OverflowError
    p = tmp_path / "overflow.tg"
    _write(p, {"__tracegrad__.npy": _doc({"scalar": 1000, "dtype": "int8"})})
    _assert_refused(p, "OverflowError")


def test_numeric_json_scalar_still_loads(tmp_path):
    p = tmp_path / "scalar.tg"
    _write(p, {"__tracegrad__.npy": _doc({"scalar": 2.5, "dtype": "float32"})})
    out = tg.load(p)
    assert type(out) is np.float32 and out == 2.5


def test_member_shape_disagreeing_with_its_bytes(tmp_path):
    # a header for 3 values over 4 values' bytes
    header = {"descr": "<f4", "fortran_order": False, "shape": (3,)}
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    p = tmp_path / "short.tg"
    _write(p, {"__tracegrad__.npy": _doc({"ndarray": 0, "dtype": "float32"}),
               "t0.npy": buf.getvalue() + b"\0" * 16})
    _assert_refused(p, "12 bytes", "holds 16 bytes")


def test_no_partial_load_when_a_later_tensor_is_damaged(tmp_path):
    p = tmp_path / "partial.tg"
    tg.save([tg.ones(3), tg.zeros(4)], p)
    data = bytearray(p.read_bytes())
    i = data.find(b"t1.npy")
    j = data.find(b"\x93NUMPY", i)
    data[j:j + 6] = b"XXXXXX"   # the second tensor's magic (its CRC fails first)
    p.write_bytes(bytes(data))
    _assert_refused(p, "t1")


def test_file_object_is_named(tmp_path):
    with pytest.raises(CheckpointError, match="the file object"):
        tg.load(io.BytesIO(b"PK\x03\x04 not really"))
