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
``{"scalar": value, "dtype": ...}`` (a NumPy scalar), and (version 2)
``{"pickle": i}``: an object of any other type (a whole module, a custom class, a set),
pickled into the ``uint8`` array ``t<i>``, with every tensor and NumPy array inside it
stored as an array of the table (a pickle persistent id holding its NODE), never as pickle
bytes.  A document without pickle nodes is written as version 1, as before.

Loading and ``weights_only`` (torch 2.6+'s convention; torch 2.13's default True): the
JSON part never runs code.  A pickle node is read by a restricted unpickler that accepts
only allowlisted globals (`add_safe_globals`, `safe_globals`, and a few builtins such as
OrderedDict, set, complex); any other class raises torch's "Weights only load failed"
UnpicklingError, which says to pass ``weights_only=False`` (for a trusted file: a plain
unpickler, which can run arbitrary code) or to allowlist the class.

Follows ``torch.save`` / ``torch.load``: dtype, shape, requires_grad and
the Parameter class of tensors are kept; a tensor that appears several times (the same
object) loads as one tensor.  Not kept: ``.grad``, autograd history, and storage shared
between *different* tensors (views load as independent tensors).  Writing a path is
atomic: a temporary file in the same directory, then ``os.replace``.
"""
from __future__ import annotations

import builtins
import collections
import contextlib
import io
import json
import math
import os
import pickle
import struct
import uuid
import zipfile
import zlib
from collections import OrderedDict

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.errors import TracegradError

from .tensor import Parameter, Tensor

_FORMAT, _VERSION = "tracegrad.save", 2
_PLAIN_VERSION = 1           # what a document without pickle nodes is written as
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
        self.has_pickle = False

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
        return self.pickled(obj, where)

    def pickled(self, obj, where: str) -> dict:
        """Any other object: pickled, its tensors and arrays kept in the array table."""
        buf = io.BytesIO()
        pickler = pickle.Pickler(buf, protocol=4)
        pickler.persistent_id = lambda o: self.persistent(o, where)
        try:
            pickler.dump(obj)
        except (pickle.PicklingError, TypeError, AttributeError) as e:
            raise TypeError(
                f"tg.save: cannot save the object of type {type(obj).__name__} at {where}: it "
                f"cannot be pickled ({e}); save a module's or optimizer's state_dict() "
                "instead") from None
        self.has_pickle = True
        data = np.frombuffer(buf.getvalue(), dtype=np.uint8)
        node = {"pickle": len(self.arrays)}
        self.arrays.append(data)
        self.keep.append(data)
        return node

    def persistent(self, o, where: str):
        if isinstance(o, (Tensor, np.ndarray)):
            return json.dumps(self.encode(o, where))
        return None

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
            (including OrderedDict state_dicts), lists and tuples, stored without pickle;
            any other picklable object (a whole module, as ``torch.save(model)``) is
            pickled, its tensors still stored as arrays (loading it needs
            ``weights_only=False`` or `safe_globals`, see `load`).
        f: a path (str or os.PathLike; written as given, no suffix added) or an object
            with ``write`` (e.g. ``io.BytesIO``).
    Raises:
        TypeError: an object that cannot be pickled (a lambda, a local class ...) or a
            dict key of an unsupported type, naming where.
        ValueError: a container that contains itself.
        TraceError: a tensor inside a function being compiled (it has no value yet).
    The format is described in the module docstring of tracegrad/serialization.py.
    """
    enc = _Encoder()
    root = enc.encode(obj, "obj")
    doc = {"format": _FORMAT, "version": _VERSION if enc.has_pickle else _PLAIN_VERSION,
           "root": root}
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


# ---- weights_only: the allowlist -------------------------------------------------------------
# globals a pickle node may name under weights_only=True without being allowlisted
_DEFAULT_SAFE = {("collections", "OrderedDict"): collections.OrderedDict,
                 ("collections", "Counter"): collections.Counter,
                 **{("builtins", n): getattr(builtins, n)
                    for n in ("set", "frozenset", "complex", "slice", "range", "bytearray")}}
_SAFE_GLOBALS: dict[tuple[str, str], object] = {}


def _global_key(entry) -> tuple[tuple[str, str], object]:
    if isinstance(entry, tuple):
        obj, name = entry
        module, _, qual = name.rpartition(".")
        return (module, qual), obj
    return (entry.__module__, entry.__qualname__), entry


def add_safe_globals(safe_globals: list) -> None:
    """Allow these classes/functions in a ``weights_only=True`` load
    (torch.serialization.add_safe_globals).

    Args:
        safe_globals: objects, or ``(object, "module.qualname")`` pairs for objects
            pickled under another name.
    """
    for entry in safe_globals:
        key, obj = _global_key(entry)
        _SAFE_GLOBALS[key] = obj


def get_safe_globals() -> list:
    """The objects `add_safe_globals` allowed (torch.serialization.get_safe_globals)."""
    return list(_SAFE_GLOBALS.values())


def clear_safe_globals() -> None:
    """Forget every `add_safe_globals` entry (torch.serialization.clear_safe_globals)."""
    _SAFE_GLOBALS.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list):
    """``with tg.serialization.safe_globals([Net]): tg.load(path)`` allows `safe_globals`
    inside the block only (torch.serialization.safe_globals)."""
    before = dict(_SAFE_GLOBALS)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _SAFE_GLOBALS.clear()
        _SAFE_GLOBALS.update(before)


def _weights_only_error(module: str, name: str) -> pickle.UnpicklingError:
    g = f"{module}.{name}"
    return pickle.UnpicklingError(
        "Weights only load failed. This file can still be loaded, to do so you have two "
        "options, do those steps only if you trust the source of the checkpoint.\n"
        "\t(1) Re-running `tg.load` with `weights_only` set to `False` will likely succeed, "
        "but it can result in arbitrary code execution. Do it only if you got the file from "
        "a trusted source.\n"
        "\t(2) Alternatively, to load with `weights_only=True` please check the recommended "
        "steps in the following error message.\n"
        f"\tWeightsUnpickler error: Unsupported global: GLOBAL {g} was not an allowed global "
        f"by default. Please use `tg.serialization.add_safe_globals([{g}])` or the "
        f"`tg.serialization.safe_globals([{g}])` context manager to allowlist this global if "
        "you trust this class/function.")


class _Unpickler(pickle.Unpickler):
    """Reads a pickle node: its tensors from the array table (persistent ids); under
    weights_only only allowlisted globals."""

    def __init__(self, data: bytes, decoder, weights_only: bool):
        super().__init__(io.BytesIO(data))
        self.decoder, self.weights_only = decoder, weights_only

    def persistent_load(self, pid):
        if not isinstance(pid, str):
            raise self.decoder.bad(f"unexpected persistent id {pid!r}")
        return self.decoder.decode(json.loads(pid))

    def find_class(self, module, name):
        if not self.weights_only:
            return super().find_class(module, name)
        key = (module, name)
        if key in _SAFE_GLOBALS:
            return _SAFE_GLOBALS[key]
        if key in _DEFAULT_SAFE:
            return _DEFAULT_SAFE[key]
        raise _weights_only_error(module, name)


# ---- load -----------------------------------------------------------------------------------
# what reading a crafted or damaged file can raise anywhere below np.load, zipfile, json and
# the decoder: each becomes a CheckpointError naming the file (never a partial load)
_DAMAGED = (KeyError, TypeError, ValueError, IndexError, OverflowError, RecursionError,
            MemoryError, NotImplementedError, AttributeError, zipfile.BadZipFile, zlib.error,
            struct.error, OSError, EOFError)
_DEFLATE_RATIO = 1100   # deflate expands at most ~1032:1: a member claiming more is forged


def _available_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


class _Decoder:
    def __init__(self, archive, name: str, weights_only: bool = True):
        self.archive, self.name = archive, name
        self.weights_only = weights_only
        self.memo: dict[tuple, object] = {}

    def bad(self, why: str) -> CheckpointError:
        return CheckpointError(f"tg.load: {self.name} is not a valid tracegrad checkpoint: {why}")

    def member(self, key: str) -> np.ndarray:
        """Archive member `key` as an array, its .npy header checked before anything is
        allocated: the magic, a numeric dtype, and a shape whose bytes the member holds."""
        zf = self.archive.zip
        try:
            info = zf.getinfo(f"{key}.npy")
        except KeyError:
            raise self.bad(f"member {key!r} is missing") from None
        with zf.open(info) as fp:
            if fp.read(6) != b"\x93NUMPY":
                raise self.bad(f"member {key!r} is not an .npy array (no NumPy magic)")
            fp.seek(0)
            version = np.lib.format.read_magic(fp)
            read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                    else np.lib.format.read_array_header_2_0)
            shape, _fortran, dtype = read(fp)
            header = fp.tell()
        if dtype.hasobject or dtype.kind not in "biufc" or not all(
                isinstance(d, int) and d >= 0 for d in shape):
            raise self.bad(f"member {key!r} has dtype {dtype} and shape {shape} (numbers only)")
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes != info.file_size - header:
            raise self.bad(f"member {key!r} claims shape {list(shape)} of {dtype} ({nbytes} "
                           f"bytes) but holds {info.file_size - header} bytes")
        if (info.compress_type == zipfile.ZIP_DEFLATED
                and info.file_size > _DEFLATE_RATIO * max(info.compress_size, 1)) \
                or nbytes > _available_bytes():
            raise self.bad(f"member {key!r} claims {nbytes} bytes from {info.compress_size} "
                           "stored bytes")
        return self.archive[key]

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
        arr = self.member(f"t{index}")
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
        if tag == "pickle":
            index = node["pickle"]
            if not isinstance(index, int) or f"t{index}" not in self.archive.files:
                raise self.bad(f"pickled object {index!r} is missing")
            data = self.member(f"t{index}")
            if data.dtype != np.uint8 or data.ndim != 1:
                raise self.bad(f"pickled object t{index} is not a uint8 byte array")
            return _Unpickler(data.tobytes(), self, self.weights_only).load()
        if tag == "scalar":
            dtype = np.dtype(node["dtype"])
            value = node["scalar"]
            if dtype.kind not in "biuf" or isinstance(value, (list, dict, str)) or value is None:
                raise self.bad(f"scalar {value!r} of dtype {dtype} (numeric NumPy scalars only)")
            return dtype.type(value)
        if tag == "tuple":
            return tuple(self.decode(v) for v in node["tuple"])
        if tag in ("dict", "odict"):
            out = OrderedDict() if tag == "odict" else {}
            for k, v in node[tag]:
                out[self.decode(k)] = self.decode(v)
            return out
        raise self.bad(f"unknown node {tag!r}")


def _check_map_location(map_location) -> None:
    if map_location is None or callable(map_location):
        return       # a function of (storage, location): tensors load on the CPU anyway
    targets = map_location.values() if isinstance(map_location, dict) else [map_location]
    for t in targets:
        if str(t).split(":")[0] != "cpu":
            raise NotImplementedError(
                f"tg.load: map_location={map_location!r} is not supported; tracegrad tensors "
                "live on the CPU (use None, 'cpu', tg.device('cpu'), a dict mapping to "
                "'cpu', or a function)")


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None,
         mmap=None, **pickle_load_args):
    """Read an object written by `save` (torch.load).

    Args:
        f: a path or a binary file object with ``read`` and ``seek``.
        map_location: None, "cpu", ``tg.device("cpu")``, a dict whose values are "cpu", or
            a function (ignored: tracegrad tensors always load on the CPU).
        pickle_module: None or the `pickle` module (torch's argument).
        weights_only: None (the default) means True, as torch 2.13.  Tensors, arrays and
            plain data load either way without running code; a pickled object (a whole
            module saved with ``tg.save(model)``) loads under True only when its classes
            are allowlisted (`add_safe_globals` / `safe_globals`), under False with a plain
            unpickler (only for files you trust: it can run arbitrary code).
        mmap: None or False (memory-mapped loading is not supported).
    Returns:
        the saved object: tensors come back as leaf tensors (``Parameter`` where one was
        saved) with their dtype, shape and requires_grad; tuples, dicts, OrderedDicts,
        dict keys and NumPy scalars keep their types.
    Raises:
        FileNotFoundError: no such file.
        CheckpointError (a RuntimeError): the file is not a tracegrad checkpoint, is
            truncated or corrupt (a bad CRC, an unknown compression method, a member that
            is not .npy, a header whose shape its bytes do not hold, JSON nested too
            deeply, a non-numeric scalar), or was written by a newer format version; the
            message names the file, and nothing is returned.
        pickle.UnpicklingError: under weights_only, a pickled object naming a class that
            is not allowlisted (torch's "Weights only load failed" message, which says what
            to do).
        NotImplementedError: a map_location naming another device, another pickle_module,
            mmap=True, or extra pickle_load_args.
    """
    _check_map_location(map_location)
    if pickle_module not in (None, pickle):
        raise NotImplementedError("tg.load: pickle_module other than the standard pickle "
                                  "module is not supported")
    if mmap:
        raise NotImplementedError("tg.load: mmap=True is not supported; the arrays are read "
                                  "into memory")
    if pickle_load_args:
        raise NotImplementedError(f"tg.load: pickle_load_args {sorted(pickle_load_args)} "
                                  "are not supported")
    weights_only = True if weights_only is None else bool(weights_only)
    name = repr(os.fspath(f)) if isinstance(f, (str, os.PathLike)) else "the file object"
    try:
        archive = np.load(f, allow_pickle=False)
    except FileNotFoundError:
        raise
    except _DAMAGED as e:
        raise CheckpointError(f"tg.load: {name} is not a tracegrad checkpoint (it is not a "
                              f"readable .npz archive: {e})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise CheckpointError(f"tg.load: {name} is not a tracegrad checkpoint (a bare .npy "
                              "array, not an archive written by tg.save)")
    with archive:
        dec = _Decoder(archive, name, weights_only)
        if _KEY not in archive.files:
            raise dec.bad("no '__tracegrad__' entry (an .npz file not written by tg.save)")
        try:
            raw = dec.member(_KEY)
            doc = json.loads(raw.tobytes().decode("utf-8"))
        except CheckpointError:
            raise
        except RecursionError:
            raise dec.bad("the structure is nested too deeply") from None
        except _DAMAGED as e:
            raise dec.bad(f"unreadable structure ({type(e).__name__}: {e})") from None
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT or "root" not in doc:
            raise dec.bad("the structure entry is not a tracegrad.save document")
        if not isinstance(doc.get("version"), int) or doc["version"] > _VERSION:
            raise dec.bad(f"format version {doc.get('version')!r} is newer than this "
                          f"tracegrad reads ({_VERSION}); upgrade tracegrad")
        try:
            return dec.decode(doc["root"])
        except RecursionError:
            raise dec.bad("the structure is nested too deeply") from None
        except _DAMAGED as e:
            raise dec.bad(f"{type(e).__name__}: {e}") from None
