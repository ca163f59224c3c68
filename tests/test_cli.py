"""The command line and the shape of the packages: one-way dependencies, no import cycles."""

from __future__ import annotations

import ast
from pathlib import Path

from catalogue.cli import plugin_commands

REPO = Path(__file__).resolve().parents[1]


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def test_the_domain_package_never_imports_the_runner():
    offenders = {
        module_name(p): sorted(m for m in imports_of(p) if m == "runner" or m.startswith("runner."))
        for p in (REPO / "catalogue").rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_refresh_is_registered_by_the_runner():
    commands = plugin_commands()
    assert commands["refresh"].__name__ == "runner.command"


def test_no_import_cycle_in_the_domain_package():
    modules = {module_name(p): p for p in (REPO / "catalogue").rglob("*.py")}
    graph = {name: {m for m in imports_of(path) if m in modules and m != name} for name, path in modules.items()}
    visiting: list[str] = []
    done: set[str] = set()

    def visit(name: str) -> None:
        assert name not in visiting, " -> ".join([*visiting[visiting.index(name) :], name])
        if name in done:
            return
        visiting.append(name)
        for dep in graph[name]:
            visit(dep)
        visiting.pop()
        done.add(name)

    for name in graph:
        visit(name)
