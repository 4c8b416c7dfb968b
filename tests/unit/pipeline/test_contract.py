"""The phase contract: the graph is checked on import, and each phase keeps to what it declares."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, get_args

import pytest

from prefrontal import ConfigurationError, Stores
from prefrontal.phases import PHASE_INDEX, PHASES, PhaseOutcome, PhaseSpec, StateField, TurnState
from prefrontal.phases.contract import ancestors, check
from tests.conftest import demo_request, orchestrator

FIELDS = frozenset(get_args(StateField))


def replaced(name: str, **changes: Any) -> tuple[PhaseSpec, ...]:
    return tuple(dataclasses.replace(p, **changes) if p.name == name else p for p in PHASES)


def test_the_phases_keep_their_contract() -> None:
    """The shipped graph passes the check, and the episodic query waits for the agent's mode."""
    check(PHASES)
    assert {"consciousness", "frontal_cortex", "conversation"} <= ancestors(PHASES)["episodic"]
    assert list(PHASE_INDEX.values()) == list(range(1, len(PHASES) + 1))


def test_a_phase_reading_an_output_it_does_not_wait_for_fails_the_check() -> None:
    """Phase 5 reading the profile without waiting for phase 2 is refused, naming both."""
    broken = replaced("episodic", needs=("frontal_cortex", "conversation"))
    with pytest.raises(ConfigurationError, match="episodic reads profile, which consciousness"):
        check(broken)


def test_reading_a_field_no_phase_writes_fails_the_check() -> None:
    """A read that nothing produces is refused."""
    broken = replaced("consciousness", writes=frozenset({"loads"}))
    with pytest.raises(ConfigurationError, match="reads profile, which no phase writes"):
        check(broken)


def test_waiting_for_a_later_phase_or_an_assembly_phase_fails_the_check() -> None:
    """Waits point backwards in the tuple, and loading phases wait only for loading phases."""
    with pytest.raises(ConfigurationError, match="does not come before it"):
        check(replaced("consciousness", needs=("episodic",)))
    late = replaced("semantic", needs=("budget_allocation",))
    with pytest.raises(ConfigurationError, match="semantic loads but waits for budget_allocation"):
        check(late)


def test_two_concurrent_writers_of_one_field_fail_the_check() -> None:
    """Phases that may run at once cannot both write a field (``loads`` is keyed, so it may)."""
    broken = replaced("scratch_page", writes=frozenset({"loads", "profile"}))
    with pytest.raises(ConfigurationError, match="consciousness and scratch_page both write"):
        check(broken)


def test_the_phases_must_be_the_ones_phase_name_names() -> None:
    """A tuple that leaves a phase out is refused."""
    with pytest.raises(ConfigurationError, match="not PhaseName's"):
        check(PHASES[:-1])


class Watched:
    """A turn that notes which of the phases' fields are read and written through it."""

    def __init__(self, turn: TurnState, seen: set[tuple[str, str]]) -> None:
        object.__setattr__(self, "_turn", turn)
        object.__setattr__(self, "_seen", seen)

    def __getattr__(self, name: str) -> Any:
        self._seen.add(("reads", name))
        return getattr(self._turn, name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._seen.add(("writes", name))
        setattr(self._turn, name, value)


def watching(
    phase: PhaseSpec, seen: dict[str, set[tuple[str, str]]]
) -> Callable[[TurnState], Awaitable[PhaseOutcome]]:
    async def run(turn: TurnState) -> PhaseOutcome:
        watched: Any = Watched(turn, seen.setdefault(phase.name, set()))
        return await phase.run(watched)

    return run


async def test_each_phase_touches_only_the_fields_it_declares(
    demo_stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a demo turn every phase reads only what it declares and writes only what it declares."""
    seen: dict[str, set[tuple[str, str]]] = {}
    watched = tuple(dataclasses.replace(p, run=watching(p, seen)) for p in PHASES)
    monkeypatch.setattr("prefrontal.orchestrator.orchestrator.PHASES", watched)
    result = await orchestrator(demo_stores).start_turn(demo_request())
    assert result.ready_for_router
    for phase in PHASES:
        touched = {name for _, name in seen[phase.name]} & FIELDS
        written = {name for how, name in seen[phase.name] if how == "writes"} & FIELDS
        assert touched <= phase.reads | phase.writes, phase.name
        assert written <= phase.writes, phase.name


pytestmark = pytest.mark.anyio
