"""Synthetic but realistic agent memories and queries, the same for the same seed.

For benchmarks and cross-backend checks: sentences an assistant would
remember about its user (people, places, plans, preferences, orders, tickets,
tool results) and questions a user would ask about them. Word frequencies
are skewed the way real text is: the user's own name and a few verbs and
adjectives are very common (Zipf-distributed), fifty topics are equally
likely, and thousands of surnames, companies and products form a long tail.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

from prefrontal.stores.long_term import MemoryItem, MemoryKind
from prefrontal.stores.tenancy import Scope, Tenant


def _words(text: str, sep: str | None = None) -> tuple[str, ...]:
    return tuple(text.split(sep))


PEOPLE = _words(
    "Alice Bob Carol Dmitri Elena Farid Grace Hiro Ines Jamal Kenji Lena Marco Nadia Omar "
    "Priya Quentin Rosa Sven Tariq Uma Victor Wen Ximena Yusuf Zoe Aiko Bruno Chloe Diego"
)
PLACES = _words(
    "Lisbon, Porto, Berlin, Kyoto, Nairobi, Toronto, Austin, Oslo, Lima, Seoul, Dublin, "
    "Prague, Cairo, Denver, Lyon, Hanoi, Quito, Perth, Tallinn, Bilbao, the office, the gym, "
    "the bakery, the clinic, the airport, the library, the park, the warehouse, the school, "
    "the station",
    ", ",
)
_SYLLABLES = _words(
    "ka ren to mi sa lo vi da ne ru pa ko lin mar tes bel or an dre gu fi zo hal ven qui"
)
_COMPANY_KINDS = _words("Labs Corp GmbH Studio Foods Health")


def _name(rng: random.Random, syllables: int) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(syllables)).capitalize()


_ENTITY_RNG = random.Random(2026)
SURNAMES = tuple(sorted({_name(_ENTITY_RNG, 3) for _ in range(6_000)}))
"""Thousands of surnames: real memories are full of specific people."""
COMPANIES = tuple(
    sorted({f"{_name(_ENTITY_RNG, 2)} {_ENTITY_RNG.choice(_COMPANY_KINDS)}" for _ in range(3_000)})
)
PRODUCTS = tuple(
    sorted({_name(_ENTITY_RNG, 2) + str(_ENTITY_RNG.randint(1, 99)) for _ in range(4_000)})
)
TOPICS = _words(
    "budget review, quarterly report, product launch, hiring plan, database migration, "
    "security audit, marketing campaign, customer churn, pricing change, vendor contract, "
    "travel itinerary, dentist appointment, birthday party, wedding venue, tax return, "
    "mortgage renewal, car insurance, gym membership, piano lessons, school pickup, "
    "team offsite, board meeting, code freeze, incident postmortem, design sprint, "
    "onboarding checklist, sales forecast, server outage, api deprecation, release notes, "
    "flight booking, hotel reservation, visa application, conference talk, grant proposal, "
    "research paper, garden project, kitchen renovation, dog training, running plan, "
    "allergy medication, blood test, vacation days, parental leave, salary negotiation, "
    "performance review, mentoring session, reading list, podcast episode, recipe swap",
    ", ",
)
VERBS = _words(
    "mentioned, asked about, confirmed, cancelled, postponed, approved, rejected, scheduled, "
    "reviewed, finished, started, forgot, remembered, shared, booked, paid, planned, "
    "discussed, complained about, praised, moved, updated, requested, signed, declined, "
    "delegated",
    ", ",
)
ADJECTIVES = _words(
    "urgent late early tentative final new revised expensive cheaper quick detailed "
    "rough annual weekly monthly shared private important minor risky overdue"
)
DAYS = _words("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")
FILLER = (
    "because the numbers did not add up",
    "after a long call with the team",
    "and wants a reminder the day before",
    "but only if the weather holds",
    "so the deadline slips by a week",
    "which needs sign-off from finance",
    "and prefers email over chat for this",
    "since the last attempt failed twice",
    "with a note to double-check the totals",
    "pending a reply from the vendor",
)
TEMPLATES = (
    "{person} {verb} the {adj} {topic} on {day} at {place}.",
    "{person} {surname} {verb} the {topic} {filler}.",
    "Order {order} from {company} for {product} came to {amount} euros; {person} {verb} it.",
    "{person} from {company} {verb} the {adj} {topic} with {other} {surname} on {day}.",
    "Ticket {order}: {product} failed during the {topic}; {person} {verb} a fix {filler}.",
    "Reminder: the {adj} {topic} with {other} is on {day}, {filler}.",
    "{person} said the {topic} in {place} was {adj}; {other} {verb} it {filler}.",
    "Tool result: found {n} results for {topic} near {place}; {person} {verb} the {adj} one.",
    "User prefers {adj} updates about the {topic} and {topic2} on {day}s.",
)
QUESTIONS = (
    "what did {person} say about the {topic}",
    "when is the {topic} with {other}",
    "what happened with order {order}",
    "who is {person} {surname}",
    "how much did the {product} from {company} cost",
    "{company} {topic}",
    "{topic} {place}",
    "remind me about the {adj} {topic}",
    "did {person} {verb} the {topic2} in {place}",
)


def _zipf(rng: random.Random, words: Sequence[str]) -> str:
    """A word with probability proportional to 1/rank: a few common, most rare."""
    cumulative = _CUMULATIVE.get(len(words))
    if cumulative is None:
        weights = [1.0 / (rank + 1) for rank in range(len(words))]
        cumulative = _CUMULATIVE[len(words)] = list(itertools.accumulate(weights))
    return rng.choices(words, cum_weights=cumulative)[0]


_CUMULATIVE: dict[int, list[float]] = {}
"""Cumulative Zipf weights per vocabulary size: ``choices`` then draws the
same words as with ``weights=`` without summing them on every call."""


def _fields(rng: random.Random) -> dict[str, str]:
    return {
        "person": _zipf(rng, PEOPLE),
        "other": _zipf(rng, PEOPLE),
        "place": _zipf(rng, PLACES),
        "topic": rng.choice(TOPICS),
        "topic2": rng.choice(TOPICS),
        "verb": _zipf(rng, VERBS),
        "adj": _zipf(rng, ADJECTIVES),
        "day": rng.choice(DAYS),
        "filler": rng.choice(FILLER),
        "n": str(rng.randint(2, 40)),
        "surname": _zipf(rng, SURNAMES),
        "company": _zipf(rng, COMPANIES),
        "product": _zipf(rng, PRODUCTS),
        "order": str(rng.randint(10_000, 999_999)),
        "amount": f"{rng.randint(5, 5_000)}.{rng.randint(0, 99):02d}",
    }


def sentence(rng: random.Random) -> str:
    """One memory-like sentence (sometimes two)."""
    text = rng.choice(TEMPLATES).format(**_fields(rng))
    if rng.random() < 0.3:
        text += " " + rng.choice(TEMPLATES).format(**_fields(rng))
    return text


def memories(
    count: int,
    *,
    tenant: Tenant,
    seed: int = 7,
    start: datetime = datetime(2026, 1, 1, tzinfo=UTC),
    prefix: str = "m",
) -> Iterator[MemoryItem]:
    """``count`` episodic items for ``tenant``, a minute apart, some shared, in threads of 20."""
    rng = random.Random(seed)
    for i in range(count):
        yield MemoryItem(
            item_id=f"{prefix}{i:07d}",
            agent_id=tenant.agent_id,
            user_id=tenant.user_id,
            scope=Scope.SHARED if rng.random() < 0.1 else Scope.PRIVATE,
            kind=MemoryKind.EVENT if rng.random() < 0.8 else MemoryKind.TOOL_RESULT,
            content=sentence(rng),
            importance=round(rng.random(), 2),
            created_at=start + timedelta(minutes=i),
            thread_id=f"session-{i // 20}",
            position=i % 20,
        )


def questions(count: int, *, seed: int = 11) -> list[str]:
    """``count`` questions a user might ask about such memories."""
    rng = random.Random(seed)
    return [rng.choice(QUESTIONS).format(**_fields(rng)) for _ in range(count)]


FEW_WORDS = ("harbour", "ferry", "ticket", "lisbon", "invoice", "dentist", "piano", "garden")
"""Eight words: items made of them match most searches made of them."""


def worded(
    count: int,
    *,
    tenant: Tenant,
    prefix: str,
    start: datetime,
    step: timedelta = timedelta(minutes=1),
    seed: int | None = None,
    words: Sequence[str] = FEW_WORDS,
) -> Iterator[MemoryItem]:
    """``count`` episodic items of ``tenant`` made of ``words`` only, for candidate checks.

    Item ``n`` has the id ``f"{prefix}{n}"`` and was created at ``start + n * step``
    (``step`` may be negative). With a ``seed``, each holds one to six of the words
    drawn with repeats (the same for the same seed) and every fifth item, from the
    first, is shared; without one, every item is private and holds every word once,
    in order: a crowd that every search of those words matches.
    """
    rng = random.Random(seed)
    for n in range(count):
        if seed is None:
            content, scope = " ".join(words), Scope.PRIVATE
        else:
            content = " ".join(rng.choices(words, k=rng.randint(1, 6)))
            scope = Scope.SHARED if n % 5 == 0 else Scope.PRIVATE
        yield MemoryItem(
            item_id=f"{prefix}{n}",
            agent_id=tenant.agent_id,
            user_id=tenant.user_id,
            scope=scope,
            content=content,
            created_at=start + n * step,
        )
