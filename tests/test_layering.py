"""Layering: no import cycle between tinyhost's packages, nor between its modules.

Every import counts, the ones inside functions too: a lazy import hides a cycle from Python's
loader, not from the reader. The order the packages may depend on each other is the data
flow of ARCHITECTURE.md (tflite -> IR -> passes -> quantize -> plan -> codegen -> deploy -> cli).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "host" / "tinyhost"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The tinyhost modules `path` imports (anywhere in it), resolved to known modules."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name.startswith("tinyhost.") or name == "tinyhost":
                found.add(name)
    return found


def _graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(files)
    graph = {}
    for name, path in files.items():
        deps = _imports(path, modules) - {name}
        # A module importing its own package's __init__ (e.g. for a sibling) is not a cycle.
        graph[name] = {d for d in deps if not name.startswith(d + ".")}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def _package_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


def test_no_module_cycle() -> None:
    cycle = _cycle(_graph())
    assert cycle is None, "module import cycle: " + " -> ".join(cycle or [])


def test_no_package_cycle() -> None:
    packages: dict[str, set[str]] = {}
    for module, deps in _graph().items():
        src = _package_of(module)
        packages.setdefault(src, set()).update(
            _package_of(d) for d in deps if _package_of(d) != src and d != "tinyhost"
        )
    cycle = _cycle(packages)
    assert cycle is None, "package import cycle: " + " -> ".join(cycle or [])


def test_no_private_names_across_packages() -> None:
    """`from tinyhost.x import _name` only inside package x."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        here = _package_of(_module_name(path))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                there = _package_of(node.module)
                private = [a.name for a in node.names
                           if a.name.startswith("_") and not a.name.startswith("__")]
                if private and there != here:
                    where = path.relative_to(PACKAGE)
                    offenders += [f"{where}: {node.module}.{n}" for n in private]
    assert not offenders, offenders


def test_the_walker_sees_a_cycle() -> None:
    """The check itself can fail: a made-up two-module cycle is found."""
    assert _cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("lower", ["tinyhost.ir", "tinyhost.arith", "tinyhost.plan",
                                   "tinyhost.boards"])
def test_lower_layers_do_not_import_deploy_or_cli(lower: str) -> None:
    for module, deps in _graph().items():
        if module == lower or module.startswith(lower + "."):
            bad = {d for d in deps if d.startswith(("tinyhost.deploy", "tinyhost.cli"))}
            assert not bad, f"{module} imports {sorted(bad)}"


# Packages depend downwards only (../shared/STYLE.md, ARCHITECTURE.md "Layers"): a package may
# import its own layer and the layers below it.
LAYERS = [
    {"tinyhost.errors", "tinyhost.paths", "tinyhost"},
    {"tinyhost.tflite", "tinyhost.ir"},
    {"tinyhost.passes"},
    {"tinyhost.arith", "tinyhost.reference", "tinyhost.quantize", "tinyhost.boards"},
    {"tinyhost.plan"},
    {"tinyhost.codegen"},
    {"tinyhost.deploy"},
    {"tinyhost.report", "tinyhost.evaluate"},
    {"tinyhost.demo", "tinyhost.cli"},
]


def _layer(package: str) -> int:
    for rank, members in enumerate(LAYERS):
        if package in members:
            return rank
    raise AssertionError(f"{package} is in no layer: add it to LAYERS and ARCHITECTURE.md")


def test_packages_depend_downwards() -> None:
    upward = []
    for module, deps in _graph().items():
        src = _package_of(module)
        for dep in deps:
            dst = _package_of(dep)
            if _layer(dst) > _layer(src):
                upward.append(f"{module} -> {dep}")
    assert not upward, upward
