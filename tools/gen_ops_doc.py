"""Generate docs/ops.md from the op database (tests/opdb/) and the generic op suite.

    python tools/gen_ops_doc.py            # (re)writes docs/ops.md
    python tools/gen_ops_doc.py --check    # exit status 1 when docs/ops.md is stale

The table counts, per op, the samples each generic check of tests/ops/test_ops.py
runs on; the counts come from the suite's own case lists (CASES, FD_CASES, ...), so
the page says exactly what the tests do.  `test_docs_ops_md_is_up_to_date` fails
when this file's output and docs/ops.md differ.
"""
from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from types import ModuleType

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(ROOT, "docs", "ops.md")

DTYPE_ORDER = ("b1", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "c64", "c128")

COLUMNS = [
    ("forward", "forward vs the NumPy reference; dtype and shape are torch's; each kernel "
                "returns the type its `infer` promised (all samples, all dtypes)"),
    ("FD", "VJP vs central finite differences in random directions (float64)"),
    ("jax", "VJP vs `jax.vjp` of the reference, torch's subgradients at kinks and ties "
            "included"),
    ("executors", "the same backward program on the interpreter and on jax, equal (float32)"),
    ("gradcheck", "`tg.autograd.gradcheck(fast_mode=True)` (float64)"),
    ("gradgradcheck", "`tg.autograd.gradgradcheck(fast_mode=True)`: double backward (float64)"),
    ("compile", "`tg.compile` of a step calling the op and `backward()` equals the eager step "
                "(outputs and leaf gradients), per dtype"),
    ("low precision", "float16 / bfloat16 forward and gradients against float64 on the same "
                      "rounded inputs"),
    ("errors", "bad calls raise the declared error, naming the op, shapes and dtypes"),
]


def load_suite() -> ModuleType:
    """tests/ops/test_ops.py as a module (it imports the op database itself)."""
    for p in (os.path.join(ROOT, "tests"), os.path.join(ROOT, "tests", "ops")):
        if p not in sys.path:
            sys.path.insert(0, p)
    return importlib.import_module("test_ops")


def _families() -> list[tuple[str, str, list]]:
    """(module name, first docstring line, OPS) for core and every family module."""
    import opdb
    out = []
    names = ["core"] + sorted(m.name for m in pkgutil.iter_modules(opdb.__path__)
                              if m.name != "core")
    for name in names:
        mod = importlib.import_module(f"opdb.{name}")
        para = " ".join((mod.__doc__ or name).strip().split("\n\n")[0].split())
        title = "Foundation ops" if name == "core" else para.split(". ")[0].rstrip(".")
        out.append((name, title, list(getattr(mod, "OPS", []))))
    return out


def _dtypes(shorts) -> str:
    return " ".join(sorted(set(shorts), key=lambda s: DTYPE_ORDER.index(s)
                           if s in DTYPE_ORDER else len(DTYPE_ORDER)))


def _count(cases, info) -> int:
    return sum(1 for c in cases if c[0] is info)


def _num(n: int) -> str:
    return str(n) if n else "—"


def _sample_dtypes(suite, info) -> str:
    """Every dtype of an array argument across the op's samples, plus the low-precision ones."""
    shorts = set()
    for c in suite.CASES:
        if c[0] is info:
            for a in c[3].args:
                if hasattr(a, "dtype") and hasattr(a, "shape"):
                    shorts.add(suite.from_numpy(a.dtype).short)
    shorts |= {c[1].short for c in suite.LOW_PRECISION_CASES if c[0] is info}
    return _dtypes(shorts)


def _row(suite, info, skipped: list) -> str:
    def check(name, cases, cell):
        if name in info.skips:
            skipped.append((info.name, name, info.skips[name]))
            return "skip"
        return cell(cases)

    diff = info.differentiable
    gg = ("—" if not diff else
          check("gradgradcheck", suite.GRADGRADCHECK_CASES, lambda cs: _num(_count(cs, info)))
          if info.supports_gradgrad else "no")
    low = [c[1].short for c in suite.LOW_PRECISION_CASES if c[0] is info]
    for key in ("low_precision", "float16", "bfloat16"):
        if key in info.skips:
            skipped.append((info.name, key.replace("_", " "), info.skips[key]))
    low_skipped = any(k in info.skips for k in ("low_precision", "float16", "bfloat16"))
    low_cell = " ".join(low) if low else ("skip" if low_skipped else "—")
    if info.low_precision:
        low_cell += " (tol " + ", ".join(f"{d.short}: {a:g}/{r:g}"
                                         for d, (a, r) in info.low_precision.items()) + ")"
    cells = [
        f"`{info.name}`",
        _sample_dtypes(suite, info),
        _num(_count(suite.CASES, info)),
        _num(_count(suite.FD_CASES, info)) if diff else "—",
        _num(_count(suite.GRAD_CASES, info)) if diff else "—",
        _num(_count(suite.EXECUTOR_CASES, info)) if diff else "—",
        check("gradcheck", suite.GRADCHECK_CASES, lambda cs: _num(_count(cs, info)))
        if diff else "—",
        gg,
        check("compile", suite.COMPILE_CASES,
              lambda cs: _dtypes(c[1].short for c in cs if c[0] is info) or "—"),
        low_cell,
        _num(sum(1 for p in suite.ERROR_CASES if p.values[0] is info)),
    ]
    return "| " + " | ".join(cells) + " |"


def _complex_paragraph() -> list[str]:
    return [
        "Complex: an op whose dtypes include `c64 c128` takes complex tensors, with torch's "
        "gradient convention (docs/autograd.md, \"Complex numbers\"); its complex samples "
        "count in every column (finite differences along the real and the imaginary part in "
        "complex128, executors in complex64, `make test-all` adds the conjugated jax.vjp "
        "comparison; gradcheck is real-only).  Every other op rejects complex tensors with "
        "`DTypeError`, as torch rejects them there (tests/ops/test_complex.py).", ""]


def _subgradient_section(suite) -> list[str]:
    lines = ["## Gradients at non-differentiable points", "",
             "torch 2.13's values, checked by `test_subgradient_matches_torch` (the gradient "
             "of `fn(*args).sum()`); an entry whose op does not exist yet is skipped.", "",
             "| case | op | at | gradient | convention |", "|---|---|---|---|---|"]
    for name in sorted(suite.SUBGRADIENTS):
        e = suite.SUBGRADIENTS[name]
        status = "" if suite._resolve(e.op) is not None else " (not implemented yet)"
        at = "; ".join(_fmt(a) for a in e.args)
        grads = "; ".join(_fmt(g) for g in e.grads)
        lines.append(f"| {name} | `{e.op}`{status} | {at} | {grads} | {_cell(e.note)} |")
    return lines


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|")


def _fmt(v) -> str:
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return f"{v:.4g}"


def render(suite: ModuleType) -> str:
    """The text of docs/ops.md for the op database as `suite` (test_ops) sees it."""
    low_tols = ", ".join(f"{d.name} atol {a:g} rtol {r:g}"
                         for d, (a, r) in suite.LOW_PRECISION_TOLS.items())
    lines = [
        "# Ops and how each is tested", "",
        "Generated by `python tools/gen_ops_doc.py` from the op database (`tests/opdb/`) and "
        "the generic op suite (`tests/ops/test_ops.py`); do not edit by hand. "
        "`test_docs_ops_md_is_up_to_date` fails when this page is stale.", "",
        "Each number is how many samples of the op run that check (— : not applicable, "
        "skip: the op opts out, with the reason under its table; gradgradcheck \"no\": the "
        "op declares no second derivative). dtypes lists every dtype an argument takes in "
        "the samples. The counts are `make test-all`'s; `make test` runs the first samples "
        "of each op and check, and the jax.vjp, executor and compile checks on a third of "
        "the ops each (tests/README.md).", "",
        "| column | check |", "|---|---|",
    ]
    lines += [f"| {name} | {text} |" for name, text in COLUMNS]
    lines += ["", f"Low-precision tolerance (atol scaled by the largest magnitude of the float64 "
                  f"result): {low_tols}; an op may override it (shown in its cell).", ""]
    lines += _complex_paragraph()
    header = ("| op | dtypes | " + " | ".join(name for name, _ in COLUMNS) + " |")
    rule = "|---|---|" + "---:|" * len(COLUMNS)
    notes, xfails = [], []
    for module, title, ops in _families():
        if not ops:
            continue
        lines += [f"## {title} (`tests/opdb/{module}.py`)", "", header, rule]
        skipped: list = []
        for info in ops:
            if info.exercised_by:    # no samples: listed under "Ops no user call runs alone"
                continue
            lines.append(_row(suite, info, skipped))
            text = " ".join(t for t in (info.notes, info.note) if t)
            if text:
                notes.append(f"- `{info.name}`: {text}")
            for c in suite.CASES:
                if c[0] is info and c[3].xfail:
                    xfails.append(f"- `{info.name}` ({c[1].short} sample {c[2]}): {c[3].xfail}")
        if skipped:
            lines += ["", "Skipped checks:", ""]
            lines += [f"- `{op}` {check}: {reason}" for op, check, reason in skipped]
        lines.append("")
    lines += ["## Gradient notes", "",
              "Subgradients and undefined gradients, from each entry's `notes`.", ""]
    lines += notes or ["(none yet)"]
    lines.append("")
    lines += _subgradient_section(suite)
    lines.append("")
    if xfails:
        lines += ["## Known failures", "", "Samples that run as strict xfail (a reported bug).",
                  ""] + xfails + [""]
    elsewhere = sorted((i.name, i.exercised_by) for i in suite.OPS if i.exercised_by)
    if elsewhere:
        lines += ["## Ops no user call runs alone", "",
                  "Their entries have no samples (`OpInfo.exercised_by`): why, and the tests "
                  "that run them.", ""]
        lines += [f"- `{k}`: {v}" for k, v in elsewhere]
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if docs/ops.md is stale")
    args = parser.parse_args(argv)
    text = render(load_suite())
    if args.check:
        with open(OUTPUT, encoding="utf-8") as f:
            if f.read() != text:
                print("docs/ops.md is stale; run `python tools/gen_ops_doc.py`", file=sys.stderr)
                return 1
        return 0
    with open(OUTPUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(OUTPUT, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
