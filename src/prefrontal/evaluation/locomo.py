"""Loading a LoCoMo file: conversations, questions with normalised evidence, what was dropped.

The format is the one of ``data/locomo10.json`` in the public LoCoMo
repository: a list of conversations, each with ``conversation`` (speakers,
``session_N`` turn lists and ``session_N_date_time``), ``qa``,
``observation`` and ``session_summary``. A few evidence lists are malformed
(several ids in one string, ``D:11:26`` for ``D11:26``, ids that do not
exist): ids are re-read with a pattern, and those that name no turn are
dropped and counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prefrontal.errors import DatasetError

CATEGORIES = (1, 2, 3, 4, 5)
"""1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial."""

_DIA_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_SESSION_KEY = re.compile(r"session_(\d+)$")
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%d %B, %Y")


@dataclass(frozen=True, slots=True)
class Turn:
    """One utterance: its id (``D3:12``), speaker, text, session and place in it."""

    dia_id: str
    speaker: str
    text: str
    session: int
    index: int
    date: datetime


@dataclass(frozen=True, slots=True)
class Question:
    """A question, its category and the turns that support its answer."""

    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Note:
    """An LLM-written note: an observation (``source`` = its turn) or a session summary."""

    text: str
    session: int
    date: datetime
    source: str | None


@dataclass(frozen=True, slots=True)
class Conversation:
    """One LoCoMo conversation."""

    sample_id: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    observations: tuple[Note, ...] = ()
    summaries: tuple[Note, ...] = ()


@dataclass
class Drops:
    """What normalisation could not keep."""

    evidence_ids: int = 0
    """Evidence ids that name no turn of their conversation."""
    questions: int = 0
    """Questions left with no evidence at all (not scored)."""
    observations: int = 0
    """Observations whose source names no turn."""


@dataclass
class Dataset:
    """The conversations of a file and what was dropped while reading it."""

    conversations: list[Conversation] = field(default_factory=list)
    drops: Drops = field(default_factory=Drops)

    @property
    def question_count(self) -> int:
        """Questions kept, over every conversation."""
        return sum(len(c.questions) for c in self.conversations)


def parse_date(text: str) -> datetime:
    """A session's ``date_time`` (``1:56 pm on 8 May, 2023``) as a UTC datetime."""
    cleaned = " ".join(text.split())
    for pattern in _DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise ValueError(f"unrecognised LoCoMo date {text!r}")


def dia_ids(raw: str) -> list[str]:
    """Every turn id written in ``raw``, normalised to ``D<session>:<turn>``."""
    return [f"D{int(s)}:{int(t)}" for s, t in _DIA_ID.findall(raw)]


def turn_text(raw: dict[str, Any]) -> str:
    """A turn's text, with the caption of the image it shares when it has one."""
    text = str(raw.get("text", "")).strip()
    caption = raw.get("blip_caption")
    return f"{text} [image: {caption}]" if caption else text


def _sessions(conv: dict[str, Any]) -> Iterator[tuple[int, datetime, list[dict[str, Any]]]]:
    numbers = sorted(
        int(m.group(1))
        for key, value in conv.items()
        if (m := _SESSION_KEY.match(key)) and isinstance(value, list) and value
    )
    for number in numbers:
        yield number, parse_date(conv[f"session_{number}_date_time"]), conv[f"session_{number}"]


def read_turns(conv: dict[str, Any]) -> tuple[Turn, ...]:
    """Every turn of a conversation, session by session, in order."""
    return tuple(
        Turn(
            dia_id=dia_ids(str(raw["dia_id"]))[0],
            speaker=str(raw["speaker"]),
            text=turn_text(raw),
            session=number,
            index=index,
            date=date,
        )
        for number, date, raws in _sessions(conv)
        for index, raw in enumerate(raws)
    )


def read_question(raw: dict[str, Any], known: set[str], drops: Drops) -> Question | None:
    """A question with its evidence normalised (``None`` when no evidence is left)."""
    found = [i for entry in raw.get("evidence", []) for i in dia_ids(str(entry))]
    kept = tuple(dict.fromkeys(i for i in found if i in known))
    drops.evidence_ids += len(found) - len([i for i in found if i in known])
    drops.evidence_ids += sum(1 for entry in raw.get("evidence", []) if not dia_ids(str(entry)))
    if not kept:
        drops.questions += 1
        return None
    return Question(text=str(raw["question"]), category=int(raw["category"]), evidence=kept)


def read_observations(
    raw: dict[str, Any], dates: dict[int, datetime], known: set[str], drops: Drops
) -> tuple[Note, ...]:
    """Observations per session, each with the turn it came from."""
    notes: list[Note] = []
    for key, by_speaker in raw.items():
        session = int(re.findall(r"\d+", key)[0])
        for facts in by_speaker.values():
            for text, source in facts:
                ids = [i for i in dia_ids(str(source)) if i in known]
                if not ids or session not in dates:
                    drops.observations += 1
                    continue
                note = Note(text=str(text), session=session, date=dates[session], source=ids[0])
                notes.append(note)
    return tuple(notes)


def read_summaries(raw: dict[str, Any], dates: dict[int, datetime]) -> tuple[Note, ...]:
    """One summary per session that has turns."""
    notes = []
    for key, text in raw.items():
        session = int(re.findall(r"\d+", key)[0])
        if session in dates and str(text).strip():
            notes.append(Note(text=str(text), session=session, date=dates[session], source=None))
    return tuple(notes)


def read_conversation(raw: dict[str, Any], drops: Drops) -> Conversation:
    """One conversation of the file."""
    conv = raw["conversation"]
    turns = read_turns(conv)
    known = {t.dia_id for t in turns}
    dates = {t.session: t.date for t in turns}
    questions = (read_question(q, known, drops) for q in raw.get("qa", []))
    return Conversation(
        sample_id=str(raw["sample_id"]),
        speakers=(str(conv["speaker_a"]), str(conv["speaker_b"])),
        turns=turns,
        questions=tuple(q for q in questions if q is not None),
        observations=read_observations(raw.get("observation", {}), dates, known, drops),
        summaries=read_summaries(raw.get("session_summary", {}), dates),
    )


def load(path: str | Path) -> Dataset:
    """Read a LoCoMo JSON file.

    Raises :class:`~prefrontal.errors.DatasetError`, naming the file and the
    conversation, when the file cannot be read, is not JSON, or is not a
    list of LoCoMo conversations.
    """
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise DatasetError(f"{path}: cannot read it: {error.strerror or error}") from error
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DatasetError(f"{path}: not a JSON file: {error}") from error
    if not isinstance(raw, list):
        raise DatasetError(f"{path}: expected a list of conversations, found {_kind(raw)}")
    dataset = Dataset()
    for number, entry in enumerate(raw):
        dataset.conversations.append(_conversation(path, number, entry, dataset.drops))
    return dataset


def _conversation(path: str | Path, number: int, entry: object, drops: Drops) -> Conversation:
    """Conversation ``number`` of the file, or a ``DatasetError`` that says what is wrong."""
    where = f"{path}: conversation {number}"
    if not isinstance(entry, dict):
        raise DatasetError(f"{where}: expected an object, found {_kind(entry)}")
    if "sample_id" in entry:
        where += f" ({entry['sample_id']})"
    try:
        return read_conversation(entry, drops)
    except KeyError as error:
        raise DatasetError(f"{where}: missing field {error}") from error
    except (TypeError, ValueError, IndexError, AttributeError) as error:
        raise DatasetError(f"{where}: {error}") from error


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__
