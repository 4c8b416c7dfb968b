"""``prefrontal turn --reply`` records the exchange; the next turn of the session shows it."""

from __future__ import annotations

from pathlib import Path

from tests.integration.test_cli import prefrontal


def test_a_recorded_reply_is_shown_by_the_next_turn(tmp_path: Path) -> None:
    """After ``turn "..." --reply "..."``, ``turn "What did I just ask?"`` shows the question and reply."""
    db = tmp_path / "prefrontal.db"
    first = prefrontal(
        "turn", "Is the payment review on track?", "--reply", "Yes, Lena signs on Friday.", db=db
    )
    assert "reply recorded: 2 messages, 2 episodic items" in first.stdout
    second = prefrontal("turn", "What did I just ask?", db=db)
    assert "user: Is the payment review on track?" in second.stdout
    assert "assistant: Yes, Lena signs on Friday." in second.stdout
    assert "Previous turn" not in second.stdout


def test_trace_show_includes_the_end_of_the_turn(tmp_path: Path) -> None:
    """``trace show`` of an ended turn lists the reply and the end-of-turn steps."""
    db = tmp_path / "prefrontal.db"
    prefrontal("turn", "Book the room.", "--reply", "Booked for Tuesday.", db=db)
    shown = prefrontal("trace", "show", "latest", db=db)
    assert "reply: Booked for Tuesday." in shown.stdout
    for step in ("exchange", "summary", "buffer", "consolidation"):
        assert step in shown.stdout


def test_an_empty_reply_is_a_usage_error(tmp_path: Path) -> None:
    """``--reply ""`` exits with status 2 and says why."""
    done = prefrontal("turn", "Hello", "--reply", " ", db=tmp_path / "p.db", check=False)
    assert done.returncode == 2
    assert "--reply must not be empty" in done.stderr
