"""``prefrontal.testing.synthetic.worded``: the items candidate checks are built from."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from prefrontal.stores import Tenant
from prefrontal.stores.tenancy import Scope
from prefrontal.testing.synthetic import FEW_WORDS, worded

TENANT = Tenant(agent_id="atlas", user_id="someone")
START = datetime(2026, 3, 1, tzinfo=UTC)


def test_seeded_items_draw_the_words_and_share_every_fifth() -> None:
    made = list(worded(12, tenant=TENANT, prefix="b", start=START, seed=3))
    assert [item.item_id for item in made] == [f"b{n}" for n in range(12)]
    assert [item.created_at for item in made] == [START + timedelta(minutes=n) for n in range(12)]
    assert [n for n, item in enumerate(made) if item.scope is Scope.SHARED] == [0, 5, 10]
    assert all(1 <= len(item.content.split()) <= 6 for item in made)
    assert all(set(item.content.split()) <= set(FEW_WORDS) for item in made)
    assert {(item.agent_id, item.user_id) for item in made} == {("atlas", "someone")}
    again = list(worded(12, tenant=TENANT, prefix="b", start=START, seed=3))
    assert [item.content for item in again] == [item.content for item in made]


def test_unseeded_items_are_private_and_hold_every_word_going_back() -> None:
    step = timedelta(seconds=-1)
    made = list(worded(3, tenant=TENANT, prefix="c", start=START, step=step, words=("a", "b")))
    assert [item.content for item in made] == ["a b"] * 3
    assert {item.scope for item in made} == {Scope.PRIVATE}
    assert [item.created_at for item in made] == [START, START + step, START + 2 * step]
