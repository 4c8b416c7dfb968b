"""The public facade stays honest: ``__all__`` lists what exists and what docs rely on."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime
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
    "prefrontal.exchange",
    "prefrontal.serving",
    "prefrontal.serving.http",
    "prefrontal.formation",
    "prefrontal.memory",
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
        "EndTurnResult",
        "ToolCall",
        "NotFoundError",
        "Summarizer",
        "Extractor",
    ):
        assert name in prefrontal.__all__


def test_the_memory_api_names_are_exported() -> None:
    """MemoryAPI, ErasureReport and NotFoundError are at the top level, the API on the orchestrator."""
    for name in ("MemoryAPI", "ErasureReport", "NotFoundError"):
        assert name in prefrontal.__all__
    assert issubclass(prefrontal.NotFoundError, prefrontal.PrefrontalError)
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    orchestrator = prefrontal.Orchestrator(prefrontal.Stores.in_memory(), clock=lambda: moment)
    assert isinstance(orchestrator.memory, prefrontal.MemoryAPI)


def test_stores_replace_refuses_unknown_kinds() -> None:
    """``Stores.replace`` with a misspelt kind says which kinds exist."""
    with pytest.raises(ValueError, match="episodik"):
        prefrontal.Stores.in_memory().replace(episodik=object())


def test_each_durable_backend_package_builds_its_own_stores(tmp_path: Path) -> None:
    """SQLite and PostgreSQL packages export ``open_stores``; ``Stores`` builds only the reference."""
    from prefrontal.stores import postgres, sqlite

    assert "open_stores" in sqlite.__all__
    assert "open_stores" in postgres.__all__
    assert not hasattr(prefrontal.Stores, "sqlite")
    assert not hasattr(prefrontal.Stores, "postgres")
    assert isinstance(sqlite.open_stores(tmp_path / "x.db"), prefrontal.Stores)


def test_the_search_capabilities_are_exported() -> None:
    """A backend author finds the capability Protocols and the core's search in ``prefrontal.stores``."""
    from prefrontal import retrieval, stores

    for name in ("KeyedItems", "LexicalSearch", "VectorSearch", "ranked_search"):
        assert name in stores.__all__
    for name in ("Candidate", "Corpus", "LexicalMatches"):
        assert name in retrieval.__all__


def test_the_agent_state_api_is_public_and_on_the_orchestrator() -> None:
    """AgentStateAPI and AgentFileError are at the top level; the API is ``orchestrator.agents``."""
    orchestrator = prefrontal.Orchestrator(
        prefrontal.Stores.in_memory(), clock=lambda: datetime(2026, 1, 1, tzinfo=UTC)
    )
    assert isinstance(orchestrator.agents, prefrontal.AgentStateAPI)
    assert issubclass(prefrontal.AgentFileError, prefrontal.ConfigurationError)
