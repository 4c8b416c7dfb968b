"""Reading LoCoMo files: turns, dates, evidence normalisation and the count of drops."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from prefrontal.evaluation.locomo import dia_ids, load, parse_date


def test_session_dates_are_read_as_utc() -> None:
    """LoCoMo's ``1:56 pm on 8 May, 2023`` becomes an aware datetime."""
    assert parse_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def test_an_unknown_date_format_is_refused() -> None:
    """A date nobody can read fails loudly rather than guessing."""
    with pytest.raises(ValueError, match="unrecognised"):
        parse_date("sometime in spring")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("D3:12", ["D3:12"]),
        ("D8:6; D9:17", ["D8:6", "D9:17"]),
        ("D:11:26", ["D11:26"]),
        ("D", []),
    ],
)
def test_evidence_ids_are_normalised(raw: str, expected: list[str]) -> None:
    """Several ids in one string are split; a stray colon is forgiven; junk yields nothing."""
    assert dia_ids(raw) == expected


def test_turns_keep_session_order_and_image_captions(sample_file: Path) -> None:
    """Turns come session by session; a shared image's caption is part of the turn's text."""
    conv = load(sample_file).conversations[0]
    assert [t.dia_id for t in conv.turns][:2] == ["D1:1", "D1:2"]
    assert len(conv.turns) == 9
    assert "red tulips" in conv.turns[4].text
    assert conv.turns[5].session == 2 and conv.turns[5].index == 0


def test_unknown_evidence_is_dropped_and_counted(sample_file: Path) -> None:
    """Ids naming no turn are dropped; a question left with none is not scored."""
    dataset = load(sample_file)
    questions = dataset.conversations[0].questions
    assert [q.evidence for q in questions] == [
        ("D1:2",),
        ("D1:2", "D1:4"),
        ("D2:1",),
        ("D1:5",),
    ]
    assert dataset.drops.evidence_ids == 2
    assert dataset.drops.questions == 1
    assert dataset.question_count == 4


def test_notes_name_their_source(sample_file: Path) -> None:
    """Observations keep the turn they came from; summaries name none; orphans are counted."""
    dataset = load(sample_file)
    conv = dataset.conversations[0]
    assert sorted(n.source or "" for n in conv.observations) == ["D1:2", "D1:5", "D2:1"]
    assert [n.source for n in conv.summaries] == [None, None]
    assert dataset.drops.observations == 1
