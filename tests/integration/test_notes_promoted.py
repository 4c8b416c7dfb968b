"""Through the orchestrator, under the default settings: a note left idle past its fade time
is promoted to episodic memory and leaves the working notes of the next turn."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import pytest

from prefrontal import Stores
from prefrontal.buffer import NewItem
from prefrontal.bundle.models import Fragment, Section
from prefrontal.formation import open_session, originals, promoted_id
from prefrontal.stores import SessionKey
from tests.conftest import FIXED_NOW
from tests.endturn_support import AGENT, SESSION, TENANT, USER, Ticking, ask, build

pytestmark = pytest.mark.anyio
KEY = SessionKey(agent_id=AGENT, user_id=USER, session_id=SESSION)
NOTE = "Ada's locker code is 4417."


async def test_a_note_idle_past_its_fade_time_leaves_the_next_turns_notes_promoted() -> None:
    """A note shown by the turn after it was taken is, 400 s later (fade time 300 s), no
    working note of the next turn: that turn's trace counts it faded and names the episodic
    item it was promoted to, which holds the note."""
    stores = Stores.in_memory()
    clock = Ticking(FIXED_NOW)
    orchestrator = build(stores, clock=clock)
    await orchestrator.end_turn(await orchestrator.start_turn(ask("Hello.")), "Hi.")
    session = await open_session(stores, KEY, clock=clock)
    added = await session.add(NewItem(content=NOTE, item_id="locker", priority=0.9))
    assert added.outcome.value == "admitted", added.reason
    await session.save()
    shown = await orchestrator.start_turn(ask("What was the code?"))
    assert NOTE in working_notes(shown.bundle.fragments)
    await orchestrator.end_turn(shown, "It is 4417.")
    clock.now += timedelta(seconds=400)
    later = await orchestrator.start_turn(ask("Anything else?"))
    assert NOTE not in working_notes(later.bundle.fragments)
    [phase] = [p for p in later.trace.phases if p.name == "turn_context"]
    target = promoted_id(KEY, ("locker",))
    assert phase.detail["faded"] >= 1
    assert phase.detail["promoted"] == [target]
    [stored] = await stores.episodic.get(TENANT, [target])
    assert (stored.content, originals(stored)) == (NOTE, ("locker",))


def working_notes(fragments: Sequence[Fragment]) -> str:
    """The text of a bundle's working-notes section."""
    return "\n".join(f.text for f in fragments if f.section is Section.WORKING_MEMORY)
