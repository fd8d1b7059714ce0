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
        _fail(f"--args {spec!r} names no tensor types like 'f32[64,784]'")
    return out


def _load(target: str):
    if "::" not in target:
        _fail(f"expected SCRIPT.py::FUNC, got {target!r}")
    path, func = target.rsplit("::", 1)
    if not os.path.exists(path):
        _fail(f"no such script: {path}")
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    namespace = runpy.run_path(path, run_name="__tracegrad_dump__")
    if func not in namespace:
        _fail(f"{path} defines no {func!r}")
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
        _fail("give --args \"f32[...], ...\" or define example_args() next to the function")
    if ns.after_each_pass:
        if not ns.output:
            _fail("--after-each-pass writes files: give -o DIR")
        os.environ["TRACEGRAD_DUMP"] = ns.output   # backward programs after every pass
    compiled = fn if isinstance(fn, CompiledFunction) else tg.compile(fn)
    compiled(*args)
    programs = [(compiled.__name__, compiled.programs()[0])]
    entry = next(e for bucket in compiled._cache.values() for e in bucket)
    if entry.grad_plan is not None and ns.stage in ("backward", "all"):
        programs.append((f"{compiled.__name__}_backward", entry.grad_plan.backward))
    if ns.stage == "backward":
        programs = programs[1:]
        if not programs:
            _fail("the function returns nothing that needs a backward program (its backward, "
                  "if any, is inside the step's program: use --stage forward)")
    from tracegrad.ir.export import to_dot, to_json
    render = {"text": print_graph, "dot": to_dot, "json": to_json}[ns.format]
    ext = {"text": "tgir", "dot": "dot", "json": "json"}[ns.format]
    for name, g in programs:
        text = render(g)
        if ns.output:
            os.makedirs(ns.output, exist_ok=True)
            out = os.path.join(ns.output, f"{name}.{ext}")
            with open(out, "w") as f:
                f.write(text + "\n")
            print(f"wrote {out}")
        else:
            print(text)
    return 0


def _fail(msg: str) -> "NoReturn":
    print(f"tracegrad: error: {msg}", file=sys.stderr)
    raise SystemExit(2)


def _read_program(path: str):
    from tracegrad.ir import IRParseError, parse
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        _fail(f"cannot read {path}: {e.strerror}")
    try:
        return parse(text)
    except IRParseError as e:
        _fail(f"{path}:{e}")


def _example_inputs(g, seed: int = 0) -> list:
    """Random values of each input's type: normal floats, zero integers, random bools."""
    import numpy as np
    rng = np.random.default_rng(seed)
    out = []
    for v in g.inputs:
        dt = v.dtype
        if dt.is_floating_point:
            out.append(rng.standard_normal(v.shape).astype(dt.numpy))
        elif dt.name == "bool":
            out.append(rng.random(v.shape) < 0.5)
        else:
            out.append(np.zeros(v.shape, dt.numpy))
    return out


def cmd_run(ns: argparse.Namespace) -> int:
    import numpy as np
    g = _read_program(ns.program)
    if ns.inputs:
        try:
            with np.load(ns.inputs) as data:
                arrays = [data[k] for k in sorted(data.files, key=_natural)]
        except (OSError, ValueError) as e:
            _fail(f"cannot read inputs {ns.inputs}: {e}")
        if len(arrays) != len(g.inputs):
            _fail(f"{ns.inputs} holds {len(arrays)} arrays; @{g.name} takes {len(g.inputs)}")
        for i, (a, v) in enumerate(zip(arrays, g.inputs)):
            if tuple(a.shape) != v.shape:
                _fail(f"input {i}: {ns.inputs} gives shape {list(a.shape)}, the program "
                      f"expects {v.type}")
            arrays[i] = a.astype(v.dtype.numpy)
    else:
        arrays = _example_inputs(g)
    if ns.executor == "jax":
        from tracegrad.backends import jax_backend
        outs = jax_backend.run(g, arrays)
    else:
        from tracegrad.backends import interpreter
        try:
            outs = interpreter.run(g, arrays, check_nan=ns.check_nan)
        except FloatingPointError as e:
            print(f"tracegrad: NaN/Inf: {e}")
            return 1
    for i, (o, v) in enumerate(zip(outs, g.outputs)):
        o = np.asarray(o)
        stats = ""
        if o.size and o.dtype.kind in "fiub":
            f = o.astype(np.float64)
            stats = f"  min {f.min():.6g}  max {f.max():.6g}  mean {f.mean():.6g}"
        print(f"output {i}: {v.type}{stats}")
    if ns.save:
        np.savez(ns.save, *[np.asarray(o) for o in outs])
        print(f"wrote {ns.save}")
    return 0


def _natural(key: str):
    m = re.search(r"(\d+)$", key)
    return (int(m.group(1)) if m else -1, key)


def cmd_diff(ns: argparse.Namespace) -> int:
    import difflib
    from collections import Counter
    from tracegrad.ir import print_graph
    a, b = _read_program(ns.a), _read_program(ns.b)
    ca, cb = Counter(n.op for n in a.nodes), Counter(n.op for n in b.nodes)
    print(f"nodes: {len(a.nodes)} -> {len(b.nodes)}; inputs: {len(a.inputs)} -> "
          f"{len(b.inputs)}; outputs: {len(a.outputs)} -> {len(b.outputs)}")
    for op in sorted(set(ca) | set(cb)):
        if ca[op] != cb[op]:
            print(f"  {op}: {ca[op]} -> {cb[op]}")
    if a == b:
        print("programs are structurally equal")
        return 0

    def lines(g):   # compare code, not provenance comments
        return [ln.split("  #")[0].rstrip() for ln in print_graph(g).splitlines()]
    sys.stdout.writelines(ln + "\n" for ln in difflib.unified_diff(
        lines(a), lines(b), ns.a, ns.b, lineterm="", n=1))
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tracegrad", description=__doc__.split("\n\n")[0],
                                     epilog="example: tracegrad dump "
                                            "examples/train_digits.py::train_step")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="execute a dumped .tgir program",
                         epilog="example: tracegrad run out/train_step.tgir --check-nan")
    run.add_argument("program", help="a file in the IR text format")
    run.add_argument("--inputs", help=".npz with one array per program input, in order "
                                      "(default: random values of the right types)")
    run.add_argument("--executor", choices=("interpreter", "jax"), default="interpreter")
    run.add_argument("--check-nan", action="store_true",
                     help="stop at the first node producing NaN/Inf and name its source line")
    run.add_argument("--save", help="write the outputs to this .npz")
    run.set_defaults(run=cmd_run)
    diff = sub.add_parser("diff", help="structural diff of two .tgir programs",
                          epilog="example: tracegrad diff before.tgir after.tgir")
    diff.add_argument("a")
    diff.add_argument("b")
    diff.set_defaults(run=cmd_diff)
    dump = sub.add_parser("dump", help="print the IR program of SCRIPT.py::FUNC",
                          epilog="example: tracegrad dump examples/train_digits.py::train_step "
                                 "--args 'f32[64,64], i64[64]'")
    dump.add_argument("target", help="SCRIPT.py::FUNC")
    dump.add_argument("--args", help='argument types, e.g. "f32[64,784], i64[64]"')
    dump.add_argument("-o", "--output", help="write FUNC.tgir into this folder instead of stdout")
    dump.add_argument("--format", choices=("text", "dot", "json"), default="text",
                      help="IR text (default), Graphviz DOT, or JSON")
    dump.add_argument("--stage", choices=("forward", "backward", "all"), default="all",
                      help="the traced program, the backward program of a returned tensor "
                           "that needs grad, or both")
    dump.add_argument("--after-each-pass", action="store_true",
                      help="also write every backward program after each pass into -o DIR")
    dump.set_defaults(run=cmd_dump)
    ns = parser.parse_args(argv)
    return ns.run(ns)


if __name__ == "__main__":
    sys.exit(main())
