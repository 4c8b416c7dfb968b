"""Reading LoCoMo files: turns, dates, evidence normalisation and the count of drops."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from prefrontal.errors import DatasetError
from prefrontal.evaluation.locomo import dia_ids, load, parse_date
from tests.unit.evaluation.conftest import sample


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


def broken(change: str) -> Any:
    """The sample file's contents with one thing wrong."""
    data = sample()
    conv = data[0]
    if change == "top-level object":
        return {"conversations": data}
    if change == "entry not an object":
        return [*data, "conv-2"]
    if change == "no conversation":
        del conv["conversation"]
    elif change == "bad date":
        conv["conversation"]["session_1_date_time"] = "sometime in spring"
    elif change == "question without text":
        del conv["qa"][0]["question"]
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("top-level object", "expected a list of conversations, found dict"),
        ("entry not an object", "conversation 1: expected an object, found str"),
        ("no conversation", r"conversation 0 \(test-1\): missing field 'conversation'"),
        ("bad date", r"conversation 0 \(test-1\): unrecognised LoCoMo date"),
        ("question without text", "missing field 'question'"),
    ],
)
def test_a_file_not_in_the_format_says_where(tmp_path: Path, change: str, message: str) -> None:
    """Each way a file can be wrong is a DatasetError naming the file and the conversation."""
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken(change)), encoding="utf-8")
    with pytest.raises(DatasetError, match=message) as caught:
        load(path)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize("content", [b"not json", b"", b"\xff\xfe{"])
def test_a_file_that_is_not_json_is_refused(tmp_path: Path, content: bytes) -> None:
    """Text that is not JSON (or not UTF-8) is a DatasetError, not a decoder traceback."""
    path = tmp_path / "data.json"
    path.write_bytes(content)
    with pytest.raises(DatasetError, match="not a JSON file"):
        load(path)


def test_a_directory_cannot_be_read(tmp_path: Path) -> None:
    """A path that cannot be read as a file is a DatasetError that says so."""
    with pytest.raises(DatasetError, match="cannot read it"):
        load(tmp_path)
