"""No import cycles: neither between modules nor between packages, function-local imports included.

Imports are read from the source with ``ast`` (every ``import`` statement,
at module level, in functions, under ``TYPE_CHECKING``), so a cycle hidden
by a late import or a type-only import counts like any other.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
ROOT = "prefrontal"


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted((SRC / ROOT).rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The package's modules that ``name`` imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    yield f"{base}.{alias.name}"
                elif base in known:
                    yield base


def graph() -> dict[str, set[str]]:
    """Module -> the modules it imports (itself excluded)."""
    known = modules()
    return {
        name: {target for target in imported(name, path, known) if target != name}
        for name, path in known.items()
    }


def package_of(module: str) -> str:
    """``prefrontal.stores.sqlite.memory`` -> ``prefrontal.stores``: the layer a module is in."""
    return ".".join(module.split(".")[:2])


def package_graph() -> dict[str, set[str]]:
    """Package -> the other packages its modules import."""
    packages: dict[str, set[str]] = {}
    for module, targets in graph().items():
        here = package_of(module)
        packages.setdefault(here, set()).update(
            package_of(t) for t in targets if package_of(t) != here
        )
    return packages


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_itself_in_a_cycle() -> None:
    """No chain of imports between modules comes back to where it started."""
    assert cycles(graph()) == []


def test_no_package_imports_itself_in_a_cycle() -> None:
    """Packages import one way: no chain of imports between them comes back."""
    assert cycles(package_graph()) == []


def test_the_cycle_finder_finds_cycles() -> None:
    """A hidden two-module cycle and a longer one are both reported."""
    edges = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert cycles(edges) == [["a", "b"], ["c", "d", "e"]]
