"""No note the agent takes is lost to time: a two-hour session under every overflow policy.

A simulated session (the orchestrator's clock is the test's) of 24 turns,
with pauses of 1 to 30 minutes between them; on every third turn the agent
adds a note to the session's working memory between ``start_turn`` and
``end_turn`` (loaded with the session's episodic keeper, as a turn loads it).
The buffer lets notes go by its policy (fading after five idle minutes), each
promoted to episodic memory first: at the end every note is either still in
the session's buffer or found by a long-term search of episodic memory.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from prefrontal import Orchestrator, Stores
from prefrontal.buffer import ItemSource, NewItem, OverflowPolicy, SessionBuffer
from prefrontal.formation import open_session
from prefrontal.stores import MemoryQuery, SessionKey, sqlite
from tests.conftest import FIXED_NOW
from tests.endturn_support import AGENT, SESSION, TENANT, USER, ask, build

pytestmark = pytest.mark.anyio

TURNS = 24
SEED = 35
KEY = SessionKey(agent_id=AGENT, user_id=USER, session_id=SESSION)


class Settable:
    """A clock the test moves: each reading is a millisecond later than the last."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


def key_sentence(n: int) -> str:
    return f"Note {n}: the vendor code for shipment {n} is QX{n}-locker."


def note_text(n: int) -> str:
    """A long note (about 200 tokens): not every note fits the working-notes section, so
    the ones not shown go cold and are promoted."""
    detail = " ".join(f"Pallet {n}-{k} was checked at dock {k}." for k in range(25))
    return f"{key_sentence(n)} {detail}"


async def session(stores: Stores, orchestrator: Orchestrator, clock: Settable) -> list[int]:
    """Run the 24 turns; the numbers of the notes taken."""
    pauses = random.Random(SEED)
    notes: list[int] = []
    for number in range(TURNS):
        turn = await orchestrator.start_turn(ask(f"Turn {number}: how is the shipment going?"))
        if number % 3 == 0:
            buffer = await open_session(stores, KEY, clock=clock)
            result = await buffer.add(
                NewItem(content=note_text(number), source=ItemSource.REFLECTION, priority=0.9)
            )
            assert result.outcome.value == "admitted", result.reason
            await buffer.save()
            notes.append(number)
        await orchestrator.end_turn(turn, f"Reply {number}: it is on its way.")
        clock.now += timedelta(minutes=pauses.uniform(1, 30))
    return notes


async def where_kept(stores: Stores, notes: list[int]) -> tuple[int, int]:
    """How many notes the buffer holds and how many a long-term search finds; asserts all are."""
    held = {item.content for item in (await SessionBuffer.load(stores.working_memory, KEY)).items}
    in_buffer = found = 0
    for n in notes:
        if note_text(n) in held:
            in_buffer += 1
            continue
        text = key_sentence(n)
        query = MemoryQuery(text=text, limit=5, now=FIXED_NOW + timedelta(days=1))
        hits = await stores.episodic.search(TENANT, query)
        assert any(text in hit.item.content for hit in hits), f"lost: {text!r}"
        found += 1
    return in_buffer, found


@pytest.mark.parametrize("policy", list(OverflowPolicy))
async def test_every_note_of_a_two_hour_session_is_kept(policy: OverflowPolicy) -> None:
    stores = Stores.in_memory()
    clock = Settable(FIXED_NOW)
    orchestrator = build(stores, clock=clock, buffer={"policy": policy.value})
    notes = await session(stores, orchestrator, clock)
    assert clock.now - FIXED_NOW >= timedelta(hours=2)
    in_buffer, found = await where_kept(stores, notes)
    print(f"{policy.value}: {len(notes)} notes taken, {in_buffer} in the buffer, {found} promoted")
    assert in_buffer + found == len(notes) == TURNS // 3


async def test_every_note_is_kept_on_a_sqlite_file(tmp_path: Path) -> None:
    stores = sqlite.open_stores(tmp_path / "prefrontal.db")
    try:
        clock = Settable(FIXED_NOW)
        notes = await session(stores, build(stores, clock=clock), clock)
        in_buffer, found = await where_kept(stores, notes)
        assert in_buffer + found == len(notes) == TURNS // 3
        assert found >= 1  # the pauses are long enough for some notes to be promoted
    finally:
        await stores.aclose()


async def test_working_notes_render_by_priority_then_recency() -> None:
    """Notes added at priorities 0.3, 0.9, 0.6 (and a second 0.6, later) render high, the two
    mid ones newest first, then low."""
    stores = Stores.in_memory()
    clock = Settable(FIXED_NOW)
    orchestrator = build(stores, clock=clock)
    await orchestrator.end_turn(await orchestrator.start_turn(ask("Hello.")), "Hi.")
    buffer = await SessionBuffer.load(stores.working_memory, KEY, clock=clock)
    for n, priority in enumerate((0.3, 0.9, 0.6, 0.6)):
        clock.now += timedelta(seconds=1)
        new = NewItem(content=f"Working note {n}.", priority=priority, pinned=True)
        assert (await buffer.add(new)).outcome.value == "admitted"
    await buffer.save()
    turn = await orchestrator.start_turn(ask("What now?"))
    text = turn.bundle.text
    order = sorted(range(4), key=lambda n: text.index(f"Working note {n}."))
    assert order == [1, 3, 2, 0]
