"""Character data for the examples: the standard library's own docstrings as int64 ids.

Shared by `train_char_transformer.py`, `train_char_lstm.py` and `train_nanogpt.py`.  The
text: every docstring (module, class, function, at least 40 characters) of the pure-Python
modules of the running interpreter's standard library, read with `ast` (nothing is
imported), files in sorted order, non-printable-ASCII characters dropped; nothing is
downloaded.  Only NumPy is used, so the torch twin of the examples' first-loss test
(`tools/torch_example_losses.py`) reads the same data.
"""
from __future__ import annotations

import ast
import os
import sysconfig

import numpy as np

# Directories of the stdlib whose docstrings are tests, generated tables or tool scripts.
SKIP_DIRS = {"test", "tests", "idlelib", "lib2to3", "encodings", "turtledemo", "site-packages",
             "dist-packages", "__pycache__", "unittest", "__phello__"}
MIN_DOCSTRING = 40      # characters: shorter ones are mostly "Return x."-style fragments


# ---- data ------------------------------------------------------------------------------------
def stdlib_docstrings(max_chars: int) -> str:
    """The docstrings of the stdlib's pure-Python modules, deterministically ordered.

    Files are visited in sorted path order; in each file `ast.walk` order (module first).
    Characters outside printable ASCII are dropped and tabs become spaces; reading stops
    once `max_chars` characters are gathered (the result is cut to exactly that length
    when the stdlib has enough).
    """
    root = sysconfig.get_paths()["stdlib"]
    paths = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in SKIP_DIRS and not d.startswith(("test", "config-")))
        paths += [os.path.join(dirpath, f) for f in filenames
                  if f.endswith(".py") and not f.startswith("test")]
    keep = {chr(c) for c in range(32, 127)} | {"\n"}
    parts, total = [], 0
    for path in sorted(paths):
        try:
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue            # a few stdlib files are templates or in other encodings
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                     ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node)
            if doc and len(doc) >= MIN_DOCSTRING:
                doc = "".join(c for c in doc.replace("\t", "    ") if c in keep)
                parts.append(doc + "\n\n")
                total += len(parts[-1])
        if total >= max_chars:
            break
    return "".join(parts)[:max_chars]


class CharData:
    """The text as int64 character ids, split by position into train and validation.

    `text` must be ASCII (`stdlib_docstrings` keeps printable ASCII and newlines).
    `vocab` is the sorted set of characters of the whole text (so every validation
    character has an id); `train` and `val` are i64[N] arrays.
    """

    def __init__(self, text: str, val_fraction: float = 0.1):
        self.text = text
        self.vocab = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.vocab)}
        ids = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        lookup = np.zeros(128, dtype=np.int64)
        lookup[[ord(c) for c in self.vocab]] = np.arange(len(self.vocab))
        ids = lookup[ids]
        n_train = int(len(ids) * (1.0 - val_fraction))
        self.train, self.val = ids[:n_train], ids[n_train:]

    def decode(self, ids) -> str:
        return "".join(self.vocab[int(i)] for i in ids)

    def unigram_baseline(self) -> float:
        """Cross-entropy (nats) of the train split's character frequencies on validation.

        Add-one smoothed, so a character absent from the train split costs a finite amount.
        This is what a model that ignores the context entirely can reach.
        """
        counts = np.bincount(self.train, minlength=len(self.vocab)) + 1.0
        logp = np.log(counts / counts.sum())
        return float(-logp[self.val].mean())

    def batch(self, split: np.ndarray, batch: int, block: int, rng: np.random.Generator):
        """(x, y): i64[batch, block] windows at random offsets and the next characters."""
        starts = rng.integers(0, len(split) - block - 1, batch)
        rows = starts[:, None] + np.arange(block + 1)
        windows = split[rows]
        return windows[:, :-1], windows[:, 1:]


def apply_quick(parser, args, **values) -> None:
    """``--quick``: set each of `values` on `args` where the user left it at its default."""
    for k, v in values.items():
        if getattr(args, k) == parser.get_default(k):
            setattr(args, k, v)
