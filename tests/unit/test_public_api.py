"""The public facade stays honest: ``__all__`` lists what exists and what docs rely on."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime

import pytest

import prefrontal

FACADES = [
    "prefrontal",
    "prefrontal.stores",
    "prefrontal.testing",
    "prefrontal.budgets",
    "prefrontal.bundle",
    "prefrontal.orchestrator",
    "prefrontal.demo",
    "prefrontal.serving",
    "prefrontal.serving.http",
    "prefrontal.formation",
    "prefrontal.memory",
]


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
