"""Every field a caller fills is bounded: no way round the size limits, no setting that fails later.

Ten megabytes of tags once blocked the event loop for seconds, and a ten
megabyte profile emptied the bundle; each such field is now refused on the
way in, with a message that names it.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

import pytest
from pydantic import ValidationError

from prefrontal import Orchestrator, OrchestratorConfig, Stores, TurnRequest
from prefrontal.errors import ConfigurationError
from prefrontal.stores.consciousness import AgentProfile, Governance, Mode
from prefrontal.stores.conversation import ConversationTurn, Role
from prefrontal.stores.frontal_cortex import FrontalItem, FrontalKind
from prefrontal.stores.long_term import MemoryItem
from prefrontal.stores.scratch_page import Observation
from prefrontal.stores.tenancy import Tenant
from tests.conftest import FIXED_NOW

OWNED = {"item_id": "x", "agent_id": "a", "user_id": "u", "created_at": FIXED_NOW}
MANY_TAGS = tuple(f"tag-{n}" for n in range(65))
LONG_LABEL = "x" * 257
LONG_LINE = "x" * 2_001


def request(**fields: Any) -> TurnRequest:
    return TurnRequest.model_validate(
        {"agent_id": "a", "user_id": "u", "session_id": "s", "user_input": "hi"} | fields
    )


def memory(**fields: Any) -> MemoryItem:
    return MemoryItem.model_validate(OWNED | {"content": "c"} | fields)


OVERSIZED: list[tuple[str, Any]] = [
    ("focus", lambda: request(focus=MANY_TAGS)),
    ("focus.0", lambda: request(focus=(LONG_LABEL,))),
    ("mode", lambda: request(mode=LONG_LABEL)),
    ("tags", lambda: memory(tags=MANY_TAGS)),
    ("entities.0", lambda: memory(entities=(LONG_LABEL,))),
    ("metadata", lambda: memory(metadata={str(n): n for n in range(65)})),
    ("metadata.note", lambda: memory(metadata={"note": LONG_LINE})),
    ("thread_id", lambda: memory(thread_id=LONG_LABEL)),
    ("embedding", lambda: memory(embedding=(0.0,) * 8_193)),
    (
        "speaker",
        lambda: ConversationTurn.model_validate(
            OWNED | {"session_id": "s", "role": Role.USER, "content": "c", "speaker": LONG_LABEL}
        ),
    ),
    (
        "tags",
        lambda: FrontalItem.model_validate(
            OWNED | {"kind": FrontalKind.GOAL, "title": "t", "tags": MANY_TAGS}
        ),
    ),
    ("tags", lambda: Observation.model_validate(OWNED | {"content": "c", "tags": MANY_TAGS})),
    ("description", lambda: AgentProfile(agent_id="a", name="n", description="x" * 20_001)),
    ("values", lambda: AgentProfile(agent_id="a", name="n", values=("v",) * 101)),
    (
        "safety_policies.0",
        lambda: AgentProfile(
            agent_id="a", name="n", governance=Governance(safety_policies=(LONG_LINE,))
        ),
    ),
    ("constraints", lambda: Mode(name="m", constraints=(LONG_LINE,) * 2)),
    ("current_mode", lambda: AgentProfile(agent_id="a", name="n", current_mode=LONG_LABEL)),
]


@pytest.mark.parametrize(("field", "build"), OVERSIZED, ids=[f for f, _ in OVERSIZED])
def test_an_oversized_field_is_refused_with_its_name(field: str, build: Any) -> None:
    """Each oversized field fails validation, and the message names the field."""
    with pytest.raises(ValidationError) as caught:
        build()
    assert field in str(caught.value)


def test_fields_at_their_bounds_are_accepted() -> None:
    """Exactly 64 tags of 256 characters, 64 metadata keys, a 2,000-character value: all fine."""
    tags = tuple(f"{n:03d}" + "x" * 253 for n in range(64))
    item = memory(tags=tags, metadata={f"k{n}": "v" * 2_000 for n in range(64)})
    assert len(item.tags) == 64
    assert len(request(focus=tags).focus) == 64


@pytest.mark.parametrize(
    "settings",
    [
        {"phase_budgets_ms": {"episodic": -1}},
        {"phase_budgets_ms": {"episodic": math.inf}},
        {"phase_budgets_ms": {"episodic": math.nan}},
        {"conversation": {"recent_window_s": math.inf}},
    ],
    ids=["negative budget", "infinite budget", "nan budget", "infinite window"],
)
def test_settings_that_would_fail_every_turn_are_refused(settings: dict[str, Any]) -> None:
    """A negative or infinite phase budget, or an infinite recent window, fails at construction."""
    with pytest.raises(ValidationError):
        OrchestratorConfig.model_validate(settings)


def test_a_naive_clock_is_refused_when_the_orchestrator_is_built() -> None:
    """A clock that returns naive datetimes is a ConfigurationError at once, not later."""
    naive = FIXED_NOW.replace(tzinfo=None)
    with pytest.raises(ConfigurationError, match="timezone-aware"):
        Orchestrator(Stores.in_memory(), clock=lambda: naive)


def test_an_aware_clock_is_kept() -> None:
    """An aware clock passes the check and is used as given."""
    moments: list[datetime] = []

    def clock() -> datetime:
        moments.append(FIXED_NOW)
        return FIXED_NOW

    Orchestrator(Stores.in_memory(), clock=clock)
    assert moments == [FIXED_NOW]


@pytest.mark.parametrize("bad", ["X\x1fa", "a\x1eb", "nul\x00", "tab\there", "del\x7f"])
def test_ids_never_hold_control_characters(bad: str) -> None:
    """Backends join ids with control characters, so ids may not hold one: no two keys collide."""
    with pytest.raises(ValidationError, match="pattern"):
        Tenant(agent_id=bad, user_id="u")
    with pytest.raises(ValidationError, match="pattern"):
        memory(item_id=bad)
    with pytest.raises(ValidationError, match="pattern"):
        request(session_id=bad)
