"""The viewer finds a turn by its words, charts latency and compares two turns as a difference."""

from __future__ import annotations

import re
from collections.abc import Iterator

import anyio
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from prefrontal.serving.keys import KeyGrant, KeyRing, Right, hash_key
from prefrontal.serving.ui import ui_router
from prefrontal.serving.ui.chart import latency_chart
from prefrontal.serving.ui.difference import text_diff
from prefrontal.serving.ui.router import HEADERS
from prefrontal.stores.memory.traces import InMemoryTraceStore
from prefrontal.testing.conformance.base import ALICE, BOB, STRANGER, at
from prefrontal.testing.conformance.sessions import trace
from prefrontal.traces.models import SentMessage, TurnEnding, TurnStatus, TurnTrace

ADMIN = "pf_find_admin"
ALICE_ONLY = "pf_find_alice_admin"


def ring() -> KeyRing:
    every = tuple(Right)
    return KeyRing(
        [
            KeyGrant(
                name="admin",
                sha256=hash_key(ADMIN),
                agent_id=ALICE.agent_id,
                users=("*",),
                rights=every,
            ),
            KeyGrant(
                name="alice-admin",
                sha256=hash_key(ALICE_ONLY),
                agent_id=ALICE.agent_id,
                users=(ALICE.user_id,),
                rights=every,
            ),
        ]
    )


def ended(turn: TurnTrace, reply: str) -> TurnTrace:
    return turn.model_copy(update={"ending": TurnEnding(ended_at=turn.started_at, reply=reply)})


def filled() -> InMemoryTraceStore:
    """Alice's, Bob's and a stranger's turns, with messages and replies to search."""
    store = InMemoryTraceStore(keep=None)
    turns = [
        ended(trace("a1", started_at=at(0), user_input="Plan the lighthouse tour"), "Planned."),
        trace(
            "a2",
            started_at=at(1),
            user_input="Move the lighthouse tour to Friday",
            sent=(SentMessage(role="system", content="You are Atlas.\nBe brief."),),
        ),
        trace(
            "a3", started_at=at(2), user_input="Book the <b>ferry</b>", status=TurnStatus.DEGRADED
        ),
        trace("b1", BOB, started_at=at(3), user_input="Bob's lighthouse secret"),
        trace("x1", STRANGER, started_at=at(4), user_input="the stranger's lighthouse"),
    ]
    turns[0] = turns[0].model_copy(
        update={"sent": (SentMessage(role="system", content="You are Atlas.\nBe kind."),)}
    )

    async def put() -> None:
        for t in turns:
            await store.put(t)

    anyio.run(put)
    return store


@pytest.fixture
def client() -> Iterator[TestClient]:
    app = FastAPI()
    store = filled()
    app.include_router(ui_router(lambda: store, ring()))
    with TestClient(app, follow_redirects=False) as c:
        yield c


def listed(client: TestClient, key: str, query: str) -> list[str]:
    answer = client.get(f"/ui?{query}", headers={"Authorization": f"Bearer {key}"})
    assert answer.status_code == 200
    return re.findall(r'href="/ui/turns/([^"]+)" class="mono"', answer.text)


def test_a_search_lists_the_turns_holding_its_words_within_the_agent(client: TestClient) -> None:
    """Words find the agent's turns that said them, newest first, and no other agent's."""
    assert listed(client, ADMIN, "q=lighthouse") == ["b1", "a2", "a1"]
    assert listed(client, ADMIN, "q=lighthouse+friday") == ["a2"]
    assert listed(client, ADMIN, "q=planned") == ["a1"]
    assert listed(client, ADMIN, "q=lighthouse&user=bob") == ["b1"]
    assert listed(client, ADMIN, "q=lighthouse&status=degraded") == []


def test_a_key_bound_to_a_user_finds_only_that_users_turns(client: TestClient) -> None:
    """A key acting for Alice only lists, finds and compares none of Bob's turns."""
    assert listed(client, ALICE_ONLY, "q=lighthouse") == ["a2", "a1"]
    assert listed(client, ALICE_ONLY, "user=bob") == []
    headers = {"Authorization": f"Bearer {ALICE_ONLY}"}
    assert client.get("/ui/turns/b1", headers=headers).status_code == 404
    assert client.get("/ui/compare?a=a1&b=b1", headers=headers).status_code == 404
    assert client.get("/ui/turns/a1", headers=headers).status_code == 200


def test_the_search_text_is_escaped_data(client: TestClient) -> None:
    """The words searched come back escaped in the box and the note, never as markup."""
    answer = client.get(
        "/ui",
        params={"q": '"><script>x</script> ferry'},
        headers={"Authorization": f"Bearer {ADMIN}"},
    )
    assert "<script>x" not in answer.text
    assert "&lt;script&gt;x&lt;/script&gt; ferry" in answer.text
    assert answer.headers["content-security-policy"] == HEADERS["Content-Security-Policy"]


def test_the_list_draws_its_turns_latency_as_inline_svg(client: TestClient) -> None:
    """The chart is SVG in the page: a mark per turn, a triangle for the degraded one."""
    page = client.get("/ui", headers={"Authorization": f"Bearer {ADMIN}"}).text
    chart = page.split('<svg class="chart"', 1)[1].split("</svg>", 1)[0]
    assert chart.count('class="mark ') == 4 and 'data-turn="a3"' in chart
    assert chart.count("<polygon") == 1 and chart.count("<circle") == 3
    assert "<script" not in page and "style=" not in page


def test_chart_geometry_puts_slower_turns_higher_and_later_ones_right() -> None:
    """A slower turn's mark is above a faster one's; a later turn's is to its right."""
    fast = trace("f", started_at=at(0)).model_copy(update={"duration_ms": 5.0})
    slow = trace("s", started_at=at(10), status=TurnStatus.DEGRADED).model_copy(
        update={"duration_ms": 400.0}
    )
    chart = latency_chart([slow, fast])
    assert chart is not None
    first, second = chart.marks
    assert first.turn_id == "f" and second.x > first.x and second.y < first.y
    assert chart.y_ticks[-1][1] == "500 ms" and chart.deadline_label == "deadline 1000 ms, above"
    assert chart.deadline_y is None
    near = latency_chart([slow.model_copy(update={"deadline_ms": 800.0})])
    assert near is not None and near.deadline_y is not None
    assert near.y_ticks[-1][1] == "1000 ms" and near.deadline_label == "deadline 800 ms"
    assert "2 turns" in chart.summary and "1 not ok" in chart.summary
    assert latency_chart([]) is None


def test_text_diff_marks_only_what_changed_and_gives_both_texts_back() -> None:
    """Removed words are A's only, added ones B's only; each side joins back to its text."""
    a, b = "You are Atlas.\nBe kind.\nEnd.", "You are Atlas.\nBe brief.\nEnd."
    left, right = text_diff(a, b)
    assert "".join(t for t, _ in left) == a and "".join(t for t, _ in right) == b
    assert [t for t, k in left if k == "removed"] == ["kind."]
    assert [t for t, k in right if k == "added"] == ["brief."]
    assert text_diff("same", "same") == ((("same", "same"),), (("same", "same"),))


def test_compare_marks_added_and_removed_text_of_inputs_and_context(client: TestClient) -> None:
    """The compare page shows both inputs and both contexts with del and ins marks, escaped."""
    headers = {"Authorization": f"Bearer {ADMIN}"}
    page = client.get("/ui/compare?a=a1&b=a2", headers=headers).text
    said = page.split('class="compare diff said-diff"', 1)[1].split("</table>", 1)[0]
    assert '<del class="removed">Plan</del>' in said
    assert '<ins class="added">Move</ins>' in said
    assert '<ins class="added"> to Friday</ins>' in said
    sent = page.split('class="compare diff sent-diff"', 1)[1].split("</table>", 1)[0]
    assert '<del class="removed">kind.</del>' in sent and '<ins class="added">brief.</ins>' in sent
    escaped = client.get("/ui/compare?a=a1&b=a3", headers=headers).text
    assert "&lt;b&gt;ferry&lt;/b&gt;" in escaped and "<b>ferry" not in escaped
