"""The shape of the whole tree: no import circle, no import from a higher layer (tests/import_layers.toml), and every
package says what it holds.

Every import counts, wherever it is written: at module level, inside a function, under `if TYPE_CHECKING:`, and
`importlib.import_module("...")` with a literal name. An import inside a function hides a circle from the
interpreter but not from a reader, and a type-only import still ties the two modules' meaning."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("catalogue", "runner", "site_src", "benchmarks", "tools", "tests")
LAYERS_FILE = REPO / "tests" / "import_layers.toml"


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def tree_modules() -> dict[str, Path]:
    """Every Python module of the tree by dotted name."""
    return {module_name(p): p for root in ROOTS for p in sorted((REPO / root).rglob("*.py"))}


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The tree's module that `name` names, or the closest package above it (`catalogue.x.attr` -> catalogue.x)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The tree's modules that a file imports: `from a import b` counts a.b when b is a module, else a."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(filter(None, (_known(alias.name, modules) for alias in node.names)))
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            for alias in node.names:
                target = _known(f"{base}.{alias.name}", modules)
                if target is not None:
                    found.add(target)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            target = _known(node.args[0].value, modules)
            if target is not None:
                found.add(target)
    found.discard(name)
    return found


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted, each as one circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for dep in sorted(graph[node]):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def load_layers(path: Path = LAYERS_FILE) -> list[tuple[str, list[str]]]:
    return [(layer["name"], layer["modules"]) for layer in tomllib.loads(path.read_text())["layers"]]


def layer_of(module: str, layers: list[tuple[str, list[str]]]) -> int | None:
    """The index of the layer naming the longest prefix of `module`, or None."""
    best: tuple[int, int] | None = None
    for i, (_, prefixes) in enumerate(layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (i, len(prefix))
    return best[0] if best else None


def upward(graph: dict[str, set[str]], layers: list[tuple[str, list[str]]]) -> list[str]:
    """`a (layer) -> b (higher layer)` for every import from a lower layer into a higher one."""
    out = []
    for module, deps in sorted(graph.items()):
        mine = layer_of(module, layers)
        for dep in sorted(deps):
            theirs = layer_of(dep, layers)
            if mine is not None and theirs is not None and theirs > mine:
                out.append(f"{module} ({layers[mine][0]}) -> {dep} ({layers[theirs][0]})")
    return out


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(tree_modules())


def test_no_import_circle_anywhere_in_the_tree(graph):
    assert circles(graph) == []


def test_no_module_imports_from_a_higher_layer(graph):
    assert upward(graph, load_layers()) == []


def test_every_module_is_in_a_layer():
    layers = load_layers()
    assert [m for m in tree_modules() if layer_of(m, layers) is None] == []


def test_the_domain_package_never_imports_the_runner(graph):
    offenders = {m: sorted(d for d in deps if d.split(".")[0] == "runner") for m, deps in graph.items()}
    assert {m: d for m, d in offenders.items() if d and m.split(".")[0] == "catalogue"} == {}


def test_every_package_says_what_it_holds_and_imports_nothing_itself():
    """A package's __init__ is its docstring: importing `catalogue.x.y` never runs code of another module."""
    modules = tree_modules()
    for name, path in modules.items():
        if path.name == "__init__.py" and name.split(".")[0] in ("catalogue", "runner"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            assert ast.get_docstring(tree), f"{path.relative_to(REPO)}: no docstring"
            assert imports_of(name, path, modules) == set(), f"{path.relative_to(REPO)} imports modules of the tree"


def test_the_check_sees_a_circle_through_a_function_level_import(tmp_path):
    """The checker itself: a circle hidden in a function and one under TYPE_CHECKING are both found, and an import
    from a higher layer is named."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text('"""A package."""\n')
    (tmp_path / "pkg" / "low.py").write_text("def f():\n    from pkg.high import g\n")
    (tmp_path / "pkg" / "high.py").write_text(
        "from typing import TYPE_CHECKING\nimport pkg.low\nif TYPE_CHECKING:\n    from pkg import other\n"
    )
    (tmp_path / "pkg" / "other.py").write_text("from pkg import high\n")
    modules = {
        ".".join(p.relative_to(tmp_path).with_suffix("").parts).removesuffix(".__init__"): p
        for p in (tmp_path / "pkg").rglob("*.py")
    }
    graph = import_graph(modules)
    assert circles(graph) == [["pkg.high", "pkg.low", "pkg.other"]]
    layers = [("low", ["pkg.low", "pkg"]), ("high", ["pkg.high"])]
    assert upward(graph, layers) == ["pkg.low (low) -> pkg.high (high)", "pkg.other (low) -> pkg.high (high)"]
