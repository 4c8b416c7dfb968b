"""``prefrontal`` in a subprocess: ``turn``, ``trace list``, ``trace show`` on one database."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

TURN_LINE = re.compile(r"^turn (\w+): ok in [\d.]+ ms", re.MULTILINE)


def prefrontal(*args: str, db: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``python -m prefrontal ARGS --db DB`` at 120 columns without colour."""
    env = os.environ | {"COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"}
    return subprocess.run(
        [sys.executable, "-m", "prefrontal", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=check,
    )


@pytest.fixture(scope="module")
def turns(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, str]:
    """Two turns of one session on a fresh database (the first seeds it): db, ids, output."""
    db = tmp_path_factory.mktemp("cli") / "prefrontal.db"
    first = prefrontal("turn", "Can we still make the December 3 launch?", db=db)
    assert "seeded the demo data" in first.stderr
    match = TURN_LINE.search(first.stdout)
    assert match, first.stdout
    second = prefrontal("turn", "And the Lisbon offsite?", "--budget", "600", "--json", db=db)
    result = json.loads(second.stdout)
    assert result["trace"]["parent_turn_id"] == match.group(1)
    assert result["bundle"]["total_tokens"] <= 600
    return db, match.group(1), result["trace"]["turn_id"], first.stdout


def test_turn_shows_each_section_with_sources_and_tokens(
    turns: tuple[Path, str, str, str],
) -> None:
    """``turn`` prints the bundle section by section, each fragment with its source and tokens."""
    out = turns[3]
    for heading in ("Identity and rules (consciousness)", "Goals and pending work"):
        assert heading in out
    assert re.search(r"consciousness:atlas#identity\s+│\s+\d+ │ You are Atlas", out)
    assert re.search(r"of \d+ tokens in \d+ fragments; checksum [0-9a-f]{16}", out)


def test_trace_list_shows_both_turns_newest_first(turns: tuple[Path, str, str, str]) -> None:
    """``trace list`` has one row per turn, the newest first, with its status and session."""
    db, first, second, _ = turns
    out = prefrontal("trace", "list", db=db).stdout
    assert out.index(second) < out.index(first)
    assert re.search(rf"{second}\s+\d\d-\d\d [\d:]+\s+ok\s+[\d.]+\s+\d+/600", out)
    assert "2026-11-20-launch" in out


def test_trace_show_draws_the_timeline_budget_and_drops(
    turns: tuple[Path, str, str, str],
) -> None:
    """``trace show`` prints the header, a timeline of all eleven phases, the budget and drops."""
    db, first, second, _ = turns
    out = prefrontal("trace", "show", second, db=db).stdout
    assert f"turn                   {second}" in out
    assert f"parent                 {first}" in out
    timeline = out[out.index("Timeline") : out.index("Phases")]
    bars = re.findall(r"^\s*\d+ \w+ +█+ *[\d.]+ ms \w+", timeline, re.MULTILINE)
    assert len(bars) == 11
    assert "┬" in timeline
    assert "Budget: " in out
    assert "Dropped: " in out
    assert "Phase details" not in out
    detailed = prefrontal("trace", "show", second, "--details", db=db).stdout
    assert re.search(r"working_memory_init +│ admitted +│ \d+", detailed)
    assert "over budget" in out
