"""The phase contract, checked: what a phase reads, some phase it waits for has written.

:func:`check` runs when :mod:`prefrontal.phases` is imported, so a graph that
breaks the contract fails at once, not on the one turn whose timing exposes
it. The rules:

- the phases are the ones :data:`~prefrontal.config.PhaseName` names, in its order;
- a phase waits only for phases before it in the tuple (so running the
  tuple in order, the ``sequential`` mode, respects every wait);
- a loading phase waits only for loading phases (assembly runs after the deadline);
- every field a phase reads is written by some phase, and every phase that
  writes it is one the reader waits for, directly or through others: the
  value it reads is then the same in graph and sequential mode;
- two phases that write the same field are ordered, unless the field is
  keyed by the writer (``loads``: each loading phase fills its own sections).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import get_args

from prefrontal.config import PhaseName
from prefrontal.errors import ConfigurationError
from prefrontal.phases.spec import PhaseSpec, StateField

__all__ = ["KEYED_FIELDS", "ancestors", "check"]

KEYED_FIELDS: frozenset[StateField] = frozenset({"loads"})
"""Fields each writer fills under its own keys, so concurrent writers never collide."""


def ancestors(phases: Sequence[PhaseSpec]) -> dict[PhaseName, frozenset[PhaseName]]:
    """Every phase's waits, direct and indirect."""
    found: dict[PhaseName, frozenset[PhaseName]] = {}
    for phase in phases:
        above: set[PhaseName] = set(phase.needs)
        for need in phase.needs:
            above |= found.get(need, frozenset())
        found[phase.name] = frozenset(above)
    return found


def check(phases: Sequence[PhaseSpec]) -> None:
    """Raise :class:`~prefrontal.errors.ConfigurationError` naming every broken rule."""
    problems = [*_order(phases), *_reads(phases), *_writes(phases)]
    if problems:
        raise ConfigurationError("phase contract broken:\n- " + "\n- ".join(problems))


def _order(phases: Sequence[PhaseSpec]) -> list[str]:
    names = tuple(p.name for p in phases)
    problems = []
    if names != get_args(PhaseName):
        problems.append(f"the phases {names} are not PhaseName's {get_args(PhaseName)}")
    loading = {p.name for p in phases if p.loads}
    for position, phase in enumerate(phases):
        for need in phase.needs:
            if need not in names[:position]:
                problems.append(f"{phase.name} waits for {need}, which does not come before it")
            if phase.loads and need in names and need not in loading:
                problems.append(f"{phase.name} loads but waits for {need}, which does not")
    return problems


def _reads(phases: Sequence[PhaseSpec]) -> list[str]:
    above = ancestors(phases)
    problems = []
    for phase in phases:
        for field in sorted(phase.reads):
            writers = [p.name for p in phases if field in p.writes and p.name != phase.name]
            if not writers:
                problems.append(f"{phase.name} reads {field}, which no phase writes")
            problems.extend(
                f"{phase.name} reads {field}, which {writer} writes, "
                f"but {phase.name} does not wait for {writer}"
                for writer in writers
                if writer not in above[phase.name]
            )
    return problems


def _writes(phases: Sequence[PhaseSpec]) -> list[str]:
    above = ancestors(phases)
    problems = []
    for position, first in enumerate(phases):
        for second in phases[position + 1 :]:
            shared = (first.writes & second.writes) - KEYED_FIELDS
            if shared and first.name not in above[second.name]:
                problems.append(
                    f"{first.name} and {second.name} both write {', '.join(sorted(shared))} "
                    "and may run at the same time"
                )
    return problems
