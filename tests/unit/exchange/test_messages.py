"""``bundle.to_messages()``: one system message first, stable part before the clock, input last."""

from __future__ import annotations

from datetime import timedelta
from itertools import pairwise

import pytest

from prefrontal import Stores
from prefrontal.bundle.messages import DATA_FRAMING
from prefrontal.demo import DEMO_AGENT, seed
from tests.conftest import demo_request
from tests.endturn_support import Ticking, build

pytestmark = pytest.mark.anyio


async def demo() -> Stores:
    stores = Stores.in_memory()
    await seed(stores)
    return stores


async def test_one_system_message_leads_and_no_other_follows() -> None:
    """The first message is the only system message; the rest are user and assistant turns."""
    result = await build(await demo()).start_turn(demo_request())
    messages = result.bundle.to_messages("And the budget?")
    assert messages[0]["role"] == "system"
    assert all(m["role"] in ("user", "assistant") for m in messages[1:])
    assert messages[-1] == {"role": "user", "content": "And the budget?"}
    roles = [m["role"] for m in messages[1:]]
    assert all(a != b for a, b in pairwise(roles))


async def test_identity_and_rules_come_first_and_the_clock_last() -> None:
    """The system message opens with identity and rules and ends with today's date."""
    result = await build(await demo()).start_turn(demo_request())
    system = result.bundle.to_messages()[0]["content"]
    assert system.startswith("## Identity and rules\nYou are ")
    assert system.splitlines()[-1].startswith("Today is ")
    assert system.count("Today is ") == 1


async def test_two_turns_at_different_times_share_the_stable_prefix() -> None:
    """A day apart, the system messages agree up to the clock's line of identity and rules."""
    stores = await demo()
    early = await build(stores, clock=Ticking(step=timedelta(days=1))).start_turn(demo_request())
    later = await build(stores, clock=Ticking(step=timedelta(days=2))).start_turn(demo_request())
    first = early.bundle.to_messages()[0]["content"]
    second = later.bundle.to_messages()[0]["content"]
    assert first != second
    identity = first.split("\n\n")[0]
    assert second.startswith(identity)
    assert "Today is" not in identity


async def test_no_internal_id_is_in_the_messages_of_a_turn_after_an_ended_one() -> None:
    """After end_turn, the next turn's messages name neither turn id nor any store id."""
    stores = await demo()
    orchestrator = build(stores)
    first = await orchestrator.start_turn(demo_request(session_id="fresh"))
    await orchestrator.end_turn(first, "It is on track.", outcome="answered")
    second = await orchestrator.start_turn(
        demo_request(session_id="fresh", parent_turn_id=first.context.turn_id)
    )
    text = "\n".join(m["content"] for m in second.bundle.to_messages("Thanks."))
    ids = {i for f in second.bundle.fragments for i in f.provenance.item_ids}
    assert first.context.turn_id not in text and second.context.turn_id not in text
    assert not [i for i in ids if ":" in i and i in text]
    assert "It is on track." in text
    assert f"{DEMO_AGENT}#" not in text


async def test_the_system_message_holds_only_the_owners_profile_and_the_framing() -> None:
    """Identity and rules, the framing line and the clock are the system message; every other
    section opens the first user message, as data."""
    result = await build(await demo()).start_turn(demo_request())
    system, data, *_ = result.bundle.to_messages()
    headings = [line for line in system["content"].split("\n") if line.startswith("## ")]
    assert headings == ["## Identity and rules"]
    assert DATA_FRAMING in system["content"]
    assert data["role"] == "user"
    assert data["content"].startswith("## Goals and pending work\n")
    assert "## Relevant memories" in data["content"]
