"""`tg.save` / `tg.load`: checkpoints that never execute code when loaded.

    tg.save({"model": model.state_dict(), "optim": opt.state_dict(),
             "sched": sched.state_dict(), "step": 3}, "ckpt.tg")
    ckpt = tg.load("ckpt.tg")

The file is a NumPy ``.npz`` archive (a zip of ``.npy`` files; written by ``np.savez``,
read with ``allow_pickle=False``, so loading runs no pickle and no code):

- ``__tracegrad__``: the object's structure as UTF-8 JSON (a ``uint8`` array);
- ``t0``, ``t1``, ...: one array per distinct tensor or NumPy array.  Dtypes NumPy cannot
  name portably (bfloat16) are stored as their raw bits (``uint16``); the JSON records
  the dtype.

JSON document: ``{"format": "tracegrad.save", "version": 1, "root": NODE}`` where a NODE is
``null``, a bool, an int, a float (NaN/Infinity in Python's json spelling), a string, a
JSON list (a Python list), or one of the tagged objects ``{"tuple": [NODE...]}``,
``{"dict": [[KEY, NODE]...]}``, ``{"odict": [[KEY, NODE]...]}`` (OrderedDict; keys may be
str, int, float, bool, None or tuples of them), ``{"tensor": i, "dtype": ...,
"requires_grad": bool, "parameter": bool}``, ``{"ndarray": i, "dtype": ...}``,
``{"scalar": value, "dtype": ...}`` (a NumPy scalar).

Follows ``torch.save`` / ``torch.load(weights_only=True)``: dtype, shape, requires_grad and
the Parameter class of tensors are kept; a tensor that appears several times (the same
object) loads as one tensor.  Not kept: ``.grad``, autograd history, and storage shared
between *different* tensors (views load as independent tensors).  Writing a path is
atomic: a temporary file in the same directory, then ``os.replace``.
"""
from __future__ import annotations

import json
import os
import uuid
import zipfile
from collections import OrderedDict

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.errors import TracegradError

from .tensor import Parameter, Tensor

_FORMAT, _VERSION = "tracegrad.save", 1
_KEY = "__tracegrad__"
_RAW_BITS = {"bfloat16": np.uint16}   # stored as raw bits: np.savez loses ml_dtypes' types


class CheckpointError(TracegradError, RuntimeError):
    """`tg.load` was given a file that is not a (readable) tracegrad checkpoint.

    Fix: check the path; files from ``torch.save`` or other tools are not readable.
    """


# ---- save -----------------------------------------------------------------------------------
class _Encoder:
    def __init__(self):
        self.arrays: list[np.ndarray] = []
        self.memo: dict[int, dict] = {}     # id(tensor or array) -> its node
        self.keep: list = []                # the memo's objects stay alive during the walk
        self.open: set[int] = set()         # containers being encoded (cycle check)

    def array(self, obj, arr: np.ndarray, tag: str, dtype: str, **extra) -> dict:
        if id(obj) not in self.memo:
            if dtype in _RAW_BITS:
                arr = arr.view(_RAW_BITS[dtype])
            self.memo[id(obj)] = {tag: len(self.arrays), "dtype": dtype, **extra}
            # (not np.ascontiguousarray: it turns a 0-d array into shape (1,))
            self.arrays.append(arr if arr.flags.c_contiguous else arr.copy(order="C"))
            self.keep.append(obj)
        return self.memo[id(obj)]

    def encode(self, obj, where: str):
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return obj
        if isinstance(obj, Tensor):
            arr = np.asarray(obj._concrete("tg.save"))
            return self.array(obj, arr, "tensor", obj.dtype.name, requires_grad=obj.requires_grad,
                              parameter=isinstance(obj, Parameter))
        if isinstance(obj, np.ndarray):
            if obj.dtype.kind not in "biufc" and obj.dtype.name not in _RAW_BITS:
                raise TypeError(f"tg.save: cannot save a NumPy array of dtype {obj.dtype} at "
                                f"{where} (numbers and bools only)")
            return self.array(obj, obj, "ndarray", obj.dtype.name)
        if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
            return {"scalar": obj.item(), "dtype": obj.dtype.name}
        if isinstance(obj, (list, tuple, dict)):
            if id(obj) in self.open:
                raise ValueError(f"tg.save: {where} contains itself (a reference cycle)")
            self.open.add(id(obj))
            try:
                if isinstance(obj, list):
                    return [self.encode(v, f"{where}[{i}]") for i, v in enumerate(obj)]
                if isinstance(obj, tuple):
                    return {"tuple": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(obj)]}
                items = [[self.key(k, where), self.encode(v, f"{where}[{k!r}]")]
                         for k, v in obj.items()]
                return {"odict" if isinstance(obj, OrderedDict) else "dict": items}
            finally:
                self.open.discard(id(obj))
        raise TypeError(
            f"tg.save: cannot save an object of type {type(obj).__name__} at {where}; tg.save "
            "writes tensors, NumPy arrays, Python numbers, strings and None in dicts, lists "
            "and tuples (save a module's or optimizer's state_dict(), not the object)")

    def key(self, k, where: str):
        if k is None or isinstance(k, (bool, int, float, str)):
            return k
        if isinstance(k, tuple):
            return {"tuple": [self.key(i, where) for i in k]}
        raise TypeError(f"tg.save: cannot save the dict key {k!r} (type {type(k).__name__}) in "
                        f"{where}; keys must be str, int, float, bool, None or tuples of them")


def save(obj, f) -> None:
    """Write `obj` to `f` (torch.save): a path (written atomically) or a binary file object.

    Args:
        obj: tensors, NumPy arrays, Python scalars, strings and None, nested in dicts
            (including OrderedDict state_dicts), lists and tuples.
        f: a path (str or os.PathLike; written as given, no suffix added) or an object
            with ``write`` (e.g. ``io.BytesIO``).
    Raises:
        TypeError: an object of another type (a module, a function ...), naming where.
        ValueError: a container that contains itself.
        TraceError: a tensor inside a function being compiled (it has no value yet).
    The format is described in the module docstring of tracegrad/serialization.py.
    """
    enc = _Encoder()
    doc = {"format": _FORMAT, "version": _VERSION, "root": enc.encode(obj, "obj")}
    payload = {_KEY: np.frombuffer(json.dumps(doc).encode("utf-8"), dtype=np.uint8)}
    payload.update({f"t{i}": a for i, a in enumerate(enc.arrays)})
    if hasattr(f, "write"):
        np.savez(f, **payload)
        return
    path = os.fspath(f)
    folder, base = os.path.split(os.path.abspath(path))
    tmp = os.path.join(folder, f".{base}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        with open(tmp, "xb") as fh:      # the umask applies, as for a plain open()
            np.savez(fh, **payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)            # readers see the old file or the new one, never half
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ---- load -----------------------------------------------------------------------------------
class _Decoder:
    def __init__(self, archive, name: str):
        self.archive, self.name = archive, name
        self.memo: dict[tuple, object] = {}

    def bad(self, why: str) -> CheckpointError:
        return CheckpointError(f"tg.load: {self.name} is not a valid tracegrad checkpoint: {why}")

    def array(self, index, dtype_name, tensor: bool):
        if not isinstance(index, int) or f"t{index}" not in self.archive.files:
            raise self.bad(f"array {index!r} is missing")
        try:
            if tensor or dtype_name in _RAW_BITS:
                dtype = T.from_name(dtype_name).numpy
            else:
                dtype = np.dtype(dtype_name)
        except TypeError:
            raise self.bad(f"unknown dtype {dtype_name!r}") from None
        arr = self.archive[f"t{index}"]
        stored = np.dtype(_RAW_BITS.get(dtype_name, dtype))
        if arr.dtype != stored:
            raise self.bad(f"array t{index} has dtype {arr.dtype}, expected {stored}")
        return arr.view(dtype) if dtype_name in _RAW_BITS else arr

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict) or not node:
            raise self.bad(f"unexpected JSON value {node!r}")
        tag = next(iter(node))
        if tag in ("tensor", "ndarray"):
            key = (tag, node[tag])
            if key not in self.memo:
                arr = self.array(node[tag], node.get("dtype"), tag == "tensor")
                if tag == "ndarray":
                    self.memo[key] = arr
                else:
                    cls = Parameter if node.get("parameter") else Tensor
                    rg = bool(node.get("requires_grad"))
                    if rg and not T.from_numpy(arr.dtype).is_floating_point:
                        raise self.bad(f"tensor t{node[tag]} of dtype {arr.dtype} requires grad")
                    self.memo[key] = (Parameter(arr, requires_grad=rg) if cls is Parameter
                                      else Tensor(arr, requires_grad=rg))
            return self.memo[key]
        if tag == "scalar":
            return np.dtype(node["dtype"]).type(node["scalar"])
        if tag == "tuple":
            return tuple(self.decode(v) for v in node["tuple"])
        if tag in ("dict", "odict"):
            out = OrderedDict() if tag == "odict" else {}
            for k, v in node[tag]:
                out[self.decode(k)] = self.decode(v)
            return out
        raise self.bad(f"unknown node {tag!r}")


def load(f, map_location=None, weights_only: bool = True):
    """Read an object written by `save` (torch.load).

    Args:
        f: a path or a binary file object with ``read`` and ``seek``.
        map_location: None or "cpu" (tracegrad tensors live on the CPU).
        weights_only: accepted for torch compatibility; the format holds only data, so
            loading never runs code whatever its value.
    Returns:
        the saved object: tensors come back as leaf tensors (``Parameter`` where one was
        saved) with their dtype, shape and requires_grad; tuples, dicts, OrderedDicts,
        dict keys and NumPy scalars keep their types.
    Raises:
        FileNotFoundError: no such file.
        CheckpointError (a RuntimeError): the file is not a tracegrad checkpoint, is
            truncated or corrupt, or was written by a newer format version.
        NotImplementedError: a map_location other than None / "cpu".
    """
    if map_location is not None and str(map_location).split(":")[0] != "cpu":
        raise NotImplementedError(f"tg.load: map_location={map_location!r} is not supported; "
                                  "tracegrad tensors live on the CPU (use None or 'cpu')")
    name = repr(os.fspath(f)) if isinstance(f, (str, os.PathLike)) else "the file object"
    try:
        archive = np.load(f, allow_pickle=False)
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as e:
        raise CheckpointError(f"tg.load: {name} is not a tracegrad checkpoint (it is not a "
                              f"readable .npz archive: {e})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise CheckpointError(f"tg.load: {name} is not a tracegrad checkpoint (a bare .npy "
                              "array, not an archive written by tg.save)")
    with archive:
        dec = _Decoder(archive, name)
        if _KEY not in archive.files:
            raise dec.bad("no '__tracegrad__' entry (an .npz file not written by tg.save)")
        try:
            raw = archive[_KEY]
            doc = json.loads(raw.tobytes().decode("utf-8"))
        except (ValueError, UnicodeDecodeError, zipfile.BadZipFile, OSError, EOFError) as e:
            raise dec.bad(f"unreadable structure ({e})") from None
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT or "root" not in doc:
            raise dec.bad("the structure entry is not a tracegrad.save document")
        if not isinstance(doc.get("version"), int) or doc["version"] > _VERSION:
            raise dec.bad(f"format version {doc.get('version')!r} is newer than this "
                          f"tracegrad reads ({_VERSION}); upgrade tracegrad")
        try:
            return dec.decode(doc["root"])
        except (KeyError, TypeError, ValueError, zipfile.BadZipFile, OSError, EOFError) as e:
            raise dec.bad(f"{type(e).__name__}: {e}") from None
