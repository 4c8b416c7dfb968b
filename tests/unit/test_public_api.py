"""The public facade stays honest: ``__all__`` lists what exists and what docs rely on."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import prefrontal

PACKAGES = sorted(
    ".".join(path.parent.relative_to(Path(prefrontal.__file__).parents[1]).parts)
    for path in Path(prefrontal.__file__).parent.rglob("__init__.py")
)

FACADES = [
    "prefrontal",
    "prefrontal.stores",
    "prefrontal.testing",
    "prefrontal.budgets",
    "prefrontal.bundle",
    "prefrontal.orchestrator",
    "prefrontal.demo",
    "prefrontal.formation",
]


def isort_key(name: str) -> tuple[int, str]:
    """Constants first, then classes, then functions, each alphabetical (ruff's RUF022 order)."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_has_a_sorted_all(package: str) -> None:
    """Every package says what it exports, in sorted order, and each name exists."""
    module = importlib.import_module(package)
    exported = list(getattr(module, "__all__", ["<no __all__>"]))
    assert exported == sorted(exported, key=isort_key), package
    for name in exported:
        assert hasattr(module, name), f"{package}.{name}"


@pytest.mark.parametrize("module_name", FACADES)
def test_every_name_in_all_exists(module_name: str) -> None:
    """Each name a facade exports can be imported from it."""
    module = importlib.import_module(module_name)
    for name in module.__all__:
        assert hasattr(module, name), f"{module_name}.{name}"


def test_the_names_the_design_promises_are_exported() -> None:
    """Orchestrator, TurnRequest, OrchestratorConfig, Stores and the result types are at the top level."""
    for name in (
        "Orchestrator",
        "TurnRequest",
        "OrchestratorConfig",
        "Stores",
        "TurnResult",
        "ContextBundle",
        "TurnTrace",
        "PhaseStatus",
    ):
        assert name in prefrontal.__all__


def test_stores_replace_refuses_unknown_kinds() -> None:
    """``Stores.replace`` with a misspelt kind says which kinds exist."""
    with pytest.raises(ValueError, match="episodik"):
        prefrontal.Stores.in_memory().replace(episodik=object())
