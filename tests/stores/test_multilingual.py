"""Search finds items in other languages than English, on every backend.

Each item is written in one language; a question in that language, worded
differently, finds it first among all of them. Accents need not be typed,
Chinese and Japanese need no spaces, and an emoji is searchable.
"""

from __future__ import annotations

import pytest

from prefrontal.stores import MemoryItem, MemoryQuery, Stores, Tenant
from prefrontal.testing.conformance.base import at
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id="agent-ml", user_id="user-ml")

ITEMS = {
    "fr": "La bibliothèque municipale ferme à dix-huit heures le samedi.",
    "de": "Der Zahnarzttermin wurde auf nächsten Donnerstag verschoben.",
    "es": "Mi hermana vive en Valparaíso y trabaja como enfermera.",
    "zh": "我的护照下个月在北京到期。",
    "ja": "来週の水曜日に東京で歯医者の予約があります。",
    "ar": "موعد الطبيب يوم الخميس في المستشفى الجامعي.",
    "cafe": "We met at the café near the station.",
    "emoji": "Favourite food: 🍕 with extra cheese.",
    "en": "The quarterly payment review is due next week.",
}

QUESTIONS = [
    ("fr", "À quelle heure ferme la bibliotheque ?"),
    ("de", "Wann ist der Zahnarzttermin?"),
    ("es", "¿Dónde vive tu hermana? ¿En Valparaiso?"),
    ("zh", "护照什么时候到期？"),
    ("ja", "歯医者の予約はいつですか"),
    ("ar", "متى موعد الطبيب؟"),
    ("cafe", "cafe"),
    ("emoji", "🍕"),
    ("en", "payment review"),
]


async def _filled(stores: Stores) -> None:
    await stores.episodic.put_many(
        [
            MemoryItem(
                item_id=key,
                agent_id=TENANT.agent_id,
                user_id=TENANT.user_id,
                content=content,
                created_at=at(n),
            )
            for n, (key, content) in enumerate(ITEMS.items())
        ]
    )


@pytest.mark.parametrize(("expected", "question"), QUESTIONS, ids=[q[0] for q in QUESTIONS])
async def test_a_question_finds_its_item_first(
    stores: Stores, expected: str, question: str
) -> None:
    """The question's own item ranks first, on every backend."""
    await _filled(stores)
    hits = await stores.episodic.search(TENANT, MemoryQuery(text=question, limit=3, now=FIXED_NOW))
    assert hits, question
    assert hits[0].item.item_id == expected
