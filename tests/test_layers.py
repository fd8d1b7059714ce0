"""The package's layers, read from every module's imports (``ast``, function-level ones too).

    ir < passes < core (dispatch, backends, _state, the tensor) < autograd < compiler
       < nn / optim / utils / cli / the ``tracegrad`` package itself

A module may import from its own layer and the ones below, never from one above:
the layer above extends the one below through registration (hook slots in
tracegrad/dispatch/hooks.py, ``register_kernel`` in ir/registry.py,
``compiler.compile.register_module_type``) instead.  An import inside a function
(a lazy one) of a project module or of jax must say why on its line or the line
above: laziness is kept only where it is the point (jax's start-up time, a
cycle that cannot be cut).
"""
from __future__ import annotations

import ast
import functools
import io
import pathlib
import tokenize

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# package name -> directory (ir/ and passes/ install inside tracegrad, see pyproject.toml)
PACKAGES = {"tracegrad": ROOT / "tracegrad", "tracegrad.ir": ROOT / "ir",
            "tracegrad.passes": ROOT / "passes"}

# layer order, lowest first; a module belongs to the longest prefix that names it
LAYERS = {
    "ir": ["tracegrad.ir"],
    "passes": ["tracegrad.passes"],
    "core": ["tracegrad.dispatch", "tracegrad.backends", "tracegrad._state", "tracegrad.tensor",
             "tracegrad._tensor_str", "tracegrad._tensor_methods", "tracegrad._inplace",
             "tracegrad._views", "tracegrad._device", "tracegrad._ops", "tracegrad._creation",
             "tracegrad._random_creation",
             "tracegrad._generator", "tracegrad._random", "tracegrad._args", "tracegrad._pow",
             "tracegrad._indexing", "tracegrad._composite", "tracegrad.amp", "tracegrad._dump",
             "tracegrad.grad_scaler",
             "tracegrad._size", "tracegrad._legacy", "tracegrad._tensor_types",
             "tracegrad._config", "tracegrad._inplace_math", "tracegrad._surface_ops",
             "tracegrad._out", "tracegrad._strided", "tracegrad._view_names"],
    "autograd": ["tracegrad.autograd", "tracegrad.func", "tracegrad.linalg", "tracegrad.special",
                 "tracegrad.serialization", "tracegrad.cuda", "tracegrad.accelerator",
                 "tracegrad.distributed", "tracegrad.onnx", "tracegrad.jit"],
    "compiler": ["tracegrad.compiler"],
    "top": ["tracegrad.nn", "tracegrad.optim", "tracegrad.utils", "tracegrad.distributions",
            "tracegrad.cli", "tracegrad"],
}
ORDER = list(LAYERS)
LAZY_CHECKED = ("tracegrad", "jax")   # lazy imports of these need a comment saying why


def _modules() -> dict[str, pathlib.Path]:
    mods = {}
    for pkg, root in PACKAGES.items():
        for path in root.rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join([pkg] + parts)] = path
    return mods


MODULES = _modules()


def layer_of(module: str) -> str | None:
    best = None
    for name, prefixes in LAYERS.items():
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and (best is None or len(p) > best[1]):
                best = (name, len(p))
    return best[0] if best else None


def _targets(module: str, is_package: bool, node) -> list[str]:
    """The modules an import statement names, relative imports resolved; ``from pkg import
    name`` names ``pkg.name`` when that is a module, else ``pkg``."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module
    out = []
    for a in node.names:
        full = f"{target}.{a.name}"
        out.append(full if full in MODULES else target)
    return out


def _comment_lines(source: str) -> set[int]:
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            lines.add(tok.start[0])
    return lines


def _imports(path: pathlib.Path):
    """``(node, inside a function)`` for every import statement of the file."""
    tree = ast.parse(path.read_text())
    out = []

    def visit(node, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                out.append((child, in_function))
            visit(child, in_function or isinstance(child, (ast.FunctionDef,
                                                           ast.AsyncFunctionDef, ast.Lambda)))
    visit(tree, False)
    return out


@functools.lru_cache(maxsize=None)
def _scan():
    """(upward imports, uncommented lazy imports); run by the tests that need it, not at
    collection (~3 s in every pytest-xdist worker)."""
    upward, uncommented = [], []
    for module, path in sorted(MODULES.items()):
        mine = layer_of(module)
        source = path.read_text()
        comments = _comment_lines(source)
        for node, lazy in _imports(path):
            targets = _targets(module, path.name == "__init__.py", node)
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            for target in targets:
                theirs = layer_of(target) if target.startswith("tracegrad") else None
                if theirs is not None and ORDER.index(theirs) > ORDER.index(mine):
                    upward.append(f"{where} ({mine}) imports {target} ({theirs})")
            checked = any(t.split(".")[0] in LAZY_CHECKED for t in targets)
            said = any(n in comments for n in range(node.lineno - 1, node.end_lineno + 1))
            if lazy and checked and not said:
                uncommented.append(f"{where} imports {', '.join(targets)} inside a function")
    return upward, uncommented


def test_every_module_has_a_layer():
    assert MODULES, "no modules found"
    missing = sorted(m for m in MODULES if layer_of(m) is None)
    assert missing == []


def test_no_upward_import():
    upward, _ = _scan()
    assert upward == [], "\n".join(upward)


def test_lazy_imports_say_why():
    _, uncommented = _scan()
    assert uncommented == [], "\n".join(uncommented)


@pytest.mark.parametrize("module, layer", [
    ("tracegrad.ir.ops.index", "ir"), ("tracegrad.dispatch.frontend", "core"),
    ("tracegrad.autograd.engine", "autograd"), ("tracegrad.compiler.compile", "compiler"),
    ("tracegrad.nn.modules.module", "top"), ("tracegrad", "top")])
def test_layer_table(module, layer):
    assert layer_of(module) == layer


def test_the_scan_sees_upward_and_lazy_imports(tmp_path):
    # the checker itself: an upward import and an uncommented lazy one are both found
    src = ("from tracegrad.autograd import engine\n"
           "def f():\n"
           "    from tracegrad import nn\n"
           "    from tracegrad import cli  # lazy: cli imports this module\n")
    path = tmp_path / "mod.py"
    path.write_text(src)
    comments = _comment_lines(src)
    found = [(n.lineno, lazy, _targets("tracegrad.dispatch.x", False, n)) for n, lazy in
             _imports(path)]
    assert found == [(1, False, ["tracegrad.autograd.engine"]), (3, True, ["tracegrad.nn"]),
                     (4, True, ["tracegrad.cli"])]
    assert 4 in comments and 3 not in comments
    assert ORDER.index(layer_of("tracegrad.autograd.engine")) > ORDER.index("core")
