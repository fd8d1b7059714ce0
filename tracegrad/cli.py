"""The `tracegrad` command: dump, run and diff the IR programs tracegrad builds.

    tracegrad dump examples/train_digits.py::train_step
    tracegrad dump model.py::step --args "f32[64,784], i64[64]" --format html -o out/
    tracegrad run out/train_step.tgir --executor jax
    tracegrad diff before.tgir after.tgir

`dump` imports the script as a module (its `if __name__ == "__main__"` block
does not run), builds example arguments from the script's `example_args()`
or from `--args`, calls the function once through `tg.compile` (so it runs
one real step on those arguments) and writes the program in the IR text
format (every value typed, every node with its source line), DOT, JSON or
one self-contained HTML report, plus a summary: ops by kind, nodes, fusion
regions, estimated FLOPs, and the saved-tensor table of every backward
program (`summary.txt` with -o, else on stderr).
"""
from __future__ import annotations

import argparse
import os
import re
import runpy
import sys
import tempfile
import tracegrad as tg
from tracegrad.ir.types import from_name
from tracegrad import _dump
from tracegrad.autograd import engine
from tracegrad.compiler.compile import CompiledFunction
from tracegrad.ir.errors import TracegradError
from tracegrad.passes import settings
from tracegrad.ir import parse
from tracegrad.ir.summary import ProgramReport, saved_rows
from tracegrad.passes import format_records
from tracegrad.ir.export import to_dot, to_json
from tracegrad.ir.printer import print_graph
from tracegrad.ir.summary import format_report
from tracegrad.ir.html_report import render_html
from tracegrad.ir import IRParseError, parse
from tracegrad.ir.errors import IRError
from tracegrad.ir.verifier import verify
from tracegrad.backends import jax_backend
from tracegrad.backends import interpreter
from tracegrad.ir import print_graph

_SPEC = re.compile(r"\s*([a-z]+\d*)\[([\d,\s]*)\]\s*")
_EXT = {"text": "tgir", "dot": "dot", "json": "json", "html": "html"}


def parse_args_spec(spec: str) -> list:
    """``"f32[64,784], i64[64]"`` -> zero tensors of those types."""
    out = []
    for m in re.finditer(r"[a-z]+\d*\[[\d,\s]*\]", spec):
        name, dims = _SPEC.fullmatch(m.group(0)).groups()
        shape = tuple(int(d) for d in dims.split(",") if d.strip())
        try:
            out.append(tg.zeros(shape, dtype=from_name(name)))
        except TypeError as e:
            _fail(f"--args {spec!r}: {e}")
    if not out:
        _fail(f"--args {spec!r} names no tensor types like 'f32[64,784]'")
    return out


def _load(target: str):
    if "::" not in target:
        _fail(f"expected SCRIPT.py::FUNC, got {target!r}")
    path, func = target.rsplit("::", 1)
    if not os.path.isfile(path):
        _fail(f"no such script: {path}")
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        namespace = runpy.run_path(path, run_name="__tracegrad_dump__")
    except SystemExit:
        raise
    except BaseException as e:   # the user's script failed: show its own frames, then one line
        import traceback
        frames = [f for f in traceback.extract_tb(e.__traceback__)
                  if os.path.abspath(f.filename) != os.path.abspath(__file__)
                  and "runpy" not in os.path.basename(f.filename)]
        sys.stderr.writelines(traceback.format_list(frames))
        _fail(f"importing {path} raised {type(e).__name__}: {e}")
    if func not in namespace:
        known = sorted(k for k, v in namespace.items() if callable(v) and not k.startswith("_")
                       and getattr(v, "__module__", None) in (None, "__tracegrad_dump__"))
        _fail(f"{path} defines no {func!r}" + (f"; functions there: {', '.join(known)}"
                                                 if known else ""))
    if not callable(namespace[func]):
        _fail(f"{path}: {func!r} is a {type(namespace[func]).__name__}, not a function")
    return namespace, namespace[func]


def _example_args(ns, namespace) -> list:
    if ns.args:
        return parse_args_spec(ns.args)
    if "example_args" in namespace:
        args = namespace["example_args"]()
        return list(args) if isinstance(args, (tuple, list)) else [args]
    _fail("give --args \"f32[...], ...\" or define example_args() next to the function")


def _trace(ns, fn, args):
    """Compile and call `fn` once, recording every backward program built meanwhile."""
    plain = fn.fn if isinstance(fn, CompiledFunction) else fn
    # a fresh cache; fullgraph: a graph break is an error naming the line, not an eager run
    compiled = tg.compile(plain, executor=getattr(fn, "executor", None), fullgraph=True)
    engine.clear_cache()   # so each backward program the call needs is built, and recorded
    with tempfile.TemporaryDirectory() as tmp:
        where = ns.output if ns.after_each_pass else (settings.dump_directory() or tmp)
        with _dump.recording(where) as recorded:
            try:
                compiled(*args)
            except TracegradError as e:   # one line, the user's source line included
                message = " ".join(part.strip() for part in str(e).splitlines())
                _fail(f"{ns.target}: {type(e).__name__}: {message}")
    programs = compiled.programs
    if not programs:
        _fail(f"{ns.target} could not be traced into one program")
    return compiled, programs[-1], recorded


def _reports(name: str, program, recorded, stage: str) -> list:
    """The programs `stage` selects, as `ProgramReport`s: the traced program and the backward
    programs built while tracing it (inlined into it), and/or the backward program of
    returned tensors that require grad."""
    out = []
    if stage in ("forward", "all"):
        out.append(ProgramReport(name, program.forward))
        for rec in recorded:
            if rec.partition is None:
                continue
            part = rec.partition
            label = f"{name} backward (inlined, {rec.prefix.split('_')[-1]})"
            out.append(ProgramReport(
                label, part.backward, [(p, parse(text)) for p, text in rec.passes],
                saved_rows(part.backward, part.saved, part.reasons), part.saved_bytes))
    if stage in ("backward", "all") and program.backward is not None:
        out.append(ProgramReport(f"{name}_backward", program.backward, [], list(program.saved),
                                 program.saved_bytes))
    return out


def _pass_reports(name: str, program, recorded, stage: str) -> str:
    """The summary's pass tables: per program, each pass with its time, nodes before and
    after, and what it did (`passes.PassRecord`)."""
    tables = []
    if stage in ("forward", "all"):
        tables.append((name, program.passes))
        tables += [(f"{name} backward (inlined, {rec.prefix.split('_')[-1]})",
                    rec.partition.passes) for rec in recorded if rec.partition is not None]
    if stage in ("backward", "all") and program.backward is not None:
        tables.append((f"{name}_backward", program.backward_passes))
    return "".join(f"\n\n== {label}: passes\n{format_records(records)}"
                   for label, records in tables if records)


def _write(folder: str, filename: str, text: str) -> str:
    path = os.path.join(folder, filename)
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
    except OSError as e:
        _fail(f"cannot write {path}: {e.strerror}")
    print(f"wrote {path}")
    return path


def cmd_dump(ns: argparse.Namespace) -> int:

    namespace, fn = _load(ns.target)
    args = _example_args(ns, namespace)
    if ns.after_each_pass and not ns.output:
        _fail("--after-each-pass writes files: give -o DIR")
    if ns.output:
        try:
            os.makedirs(ns.output, exist_ok=True)
        except OSError as e:
            _fail(f"cannot create the output folder {ns.output}: {e.strerror}")
    compiled, program, recorded = _trace(ns, fn, args)
    name = compiled.__name__
    if ns.stage == "backward" and program.backward is None:
        _fail("the function returns nothing that needs a backward program (its backward, "
              "if any, is inside the step's program: use --stage forward)")
    reports = _reports(name, program, recorded, ns.stage)
    summary = format_report(reports) + _pass_reports(name, program, recorded, ns.stage)
    if ns.format == "html":
        subtitle = (f"tracegrad dump {ns.target}: program {program.hash}, arguments "
                    + ", ".join(str(v.type) for v in program.forward.inputs[:len(args)]))
        try:
            texts = [(name, render_html(reports, title=f"{name}: tracegrad report",
                                        subtitle=subtitle, layout=ns.layout))]
        except RuntimeError as e:
            _fail(str(e))
    else:
        render = {"text": print_graph, "dot": to_dot, "json": to_json}[ns.format]
        graphs = []
        if ns.stage in ("forward", "all"):
            graphs.append((name, program.forward))
        if ns.stage in ("backward", "all") and program.backward is not None:
            graphs.append((f"{name}_backward", program.backward))
        texts = [(n, render(g)) for n, g in graphs]
    if ns.output:
        for n, text in texts:
            _write(ns.output, f"{n}.{_EXT[ns.format]}", text)
        _write(ns.output, "summary.txt", summary)
    else:
        for _, text in texts:
            print(text)
        print(summary, file=sys.stderr)
    return 0


def _fail(msg: str) -> "NoReturn":
    print(f"tracegrad: error: {msg}", file=sys.stderr)
    raise SystemExit(2)


def _read_program(path: str, check: bool = False):
    """The program in `path`, parsed (and verified with ``check``); every problem is the
    one-line error with exit status 2."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        _fail(f"cannot read {path}: {e.strerror}")
    except UnicodeDecodeError as e:
        _fail(f"{path}: not UTF-8 text (byte {e.object[e.start]:#04x} at offset {e.start}); "
              "IR programs are written by `tracegrad dump` as UTF-8")
    try:
        g = parse(text)
        if check:
            verify(g)
    except IRError as e:
        _fail(f"{path}:{e}")
    return g


# ops whose kernels call back into the recording process (hooks, autograd.Function): a
# dumped program holding one cannot run on its own
_ENGINE_ONLY = ("tensor_hooks", "node_hooks", "host_call", "custom_function")


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
    g = _read_program(ns.program, check=True)
    held = sorted({n.op for n in g.nodes if n.op in _ENGINE_ONLY})
    if held:
        _fail(f"{ns.program}: @{g.name} holds {', '.join(held)}: these nodes call Python hooks "
              "or an autograd.Function of the process that recorded them, so the program "
              "runs only there (through backward())")
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
    try:
        if ns.executor == "jax":
            outs = jax_backend.run(g, arrays)
        else:
            outs = interpreter.run(g, arrays, check_nan=ns.check_nan)
    except FloatingPointError as e:
        print(f"tracegrad: NaN/Inf: {e}")
        return 1
    except (TracegradError, IndexError, MemoryError, ValueError, RuntimeError) as e:
        # a data-dependent failure (an index out of range, a singular matrix, too little
        # memory): the verified program is fine, the values or the machine are not
        _fail(f"{ns.program}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
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
    parser = argparse.ArgumentParser(
        prog="tracegrad", description=__doc__.split("\n\n")[0],
        epilog="examples:\n  tracegrad dump examples/train_digits.py::train_step --format html "
               "-o out/\n  tracegrad run out/train_step.tgir --executor jax\n"
               "  tracegrad diff before.tgir after.tgir\n\n"
               "`tracegrad COMMAND --help` explains each command.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
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
    dump = sub.add_parser(
        "dump", help="write the IR programs of SCRIPT.py::FUNC and a summary",
        description="Trace SCRIPT.py::FUNC through tg.compile on example arguments (the "
                    "script's example_args() or --args) and write its programs, a summary (ops "
                    "by kind, nodes, fusion regions, estimated FLOPs) and the saved-tensor table "
                    "of each backward program.",
        epilog="examples:\n  tracegrad dump examples/train_digits.py::train_step\n"
               "  tracegrad dump examples/train_digits.py::train_step --format html -o out/\n"
               "  tracegrad dump model.py::step --args 'f32[64,64], i64[64]' "
               "--after-each-pass -o out/",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    dump.add_argument("target", help="SCRIPT.py::FUNC")
    dump.add_argument("--args", help='argument types, e.g. "f32[64,784], i64[64]"')
    dump.add_argument("-o", "--output", help="write FUNC.<format> and summary.txt into this "
                                             "folder (default: programs on stdout, the "
                                             "summary on stderr)")
    dump.add_argument("--format", choices=tuple(_EXT), default="text",
                      help="IR text (default), Graphviz DOT, JSON, or one self-contained HTML "
                           "report (graphs, pass-by-pass views, saved tensors, source lines)")
    dump.add_argument("--layout", choices=("auto", "graphviz", "builtin"), default="auto",
                      help="--format html: draw graphs with Graphviz `dot` (auto: when it is on "
                           "PATH) or with the built-in layered layout")
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
