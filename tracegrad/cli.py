"""The `tracegrad` command: dump the IR of a function's compiled program.

    tracegrad dump examples/train_digits.py::train_step
    tracegrad dump model.py::step --args "f32[64,784], i64[64]"

`dump` imports the script as a module (its `if __name__ == "__main__"` block
does not run), builds example arguments from the script's `example_args()`
or from `--args`, calls the function once through `tg.compile` (so it runs
one real step on those arguments) and prints the program in the IR text
format: every value typed, every node with its source line.
"""
from __future__ import annotations

import argparse
import os
import re
import runpy
import sys

_SPEC = re.compile(r"\s*([a-z]+\d*)\[([\d,\s]*)\]\s*")


def parse_args_spec(spec: str) -> list:
    """``"f32[64,784], i64[64]"`` -> zero tensors of those types."""
    import tracegrad as tg
    from tracegrad.ir.types import from_name
    out = []
    for m in re.finditer(r"[a-z]+\d*\[[\d,\s]*\]", spec):
        name, dims = _SPEC.fullmatch(m.group(0)).groups()
        shape = tuple(int(d) for d in dims.split(",") if d.strip())
        out.append(tg.zeros(shape, dtype=from_name(name)))
    if not out:
        raise SystemExit(f"tracegrad: --args {spec!r} names no tensor types like 'f32[64,784]'")
    return out


def _load(target: str):
    if "::" not in target:
        raise SystemExit(f"tracegrad: expected SCRIPT.py::FUNC, got {target!r}")
    path, func = target.rsplit("::", 1)
    if not os.path.exists(path):
        raise SystemExit(f"tracegrad: no such script: {path}")
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    namespace = runpy.run_path(path, run_name="__tracegrad_dump__")
    if func not in namespace:
        raise SystemExit(f"tracegrad: {path} defines no {func!r}")
    return namespace, namespace[func]


def cmd_dump(ns: argparse.Namespace) -> int:
    import tracegrad as tg
    from tracegrad.compiler.compile import CompiledFunction
    from tracegrad.ir.printer import print_graph

    namespace, fn = _load(ns.target)
    if ns.args:
        args = parse_args_spec(ns.args)
    elif "example_args" in namespace:
        args = namespace["example_args"]()
    else:
        raise SystemExit("tracegrad: give --args \"f32[...], ...\" or define example_args() "
                         "next to the function")
    compiled = fn if isinstance(fn, CompiledFunction) else tg.compile(fn)
    compiled(*args)
    text = print_graph(compiled.programs()[0])
    if ns.output:
        os.makedirs(ns.output, exist_ok=True)
        out = os.path.join(ns.output, f"{compiled.__name__}.tgir")
        with open(out, "w") as f:
            f.write(text + "\n")
        print(f"wrote {out}")
    else:
        print(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tracegrad", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    dump = sub.add_parser("dump", help="print the IR program of SCRIPT.py::FUNC")
    dump.add_argument("target", help="SCRIPT.py::FUNC")
    dump.add_argument("--args", help='argument types, e.g. "f32[64,784], i64[64]"')
    dump.add_argument("-o", "--output", help="write FUNC.tgir into this folder instead of stdout")
    dump.set_defaults(run=cmd_dump)
    ns = parser.parse_args(argv)
    return ns.run(ns)


if __name__ == "__main__":
    sys.exit(main())
