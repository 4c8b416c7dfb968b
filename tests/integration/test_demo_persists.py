"""``prefrontal demo`` runs on a SQLite file by default, and a second run sees the first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def demo(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m prefrontal demo`` in ``cwd`` at 120 columns without colour."""
    env = os.environ | {"COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"}
    return subprocess.run(
        [sys.executable, "-m", "prefrontal", "demo", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
        check=True,
    )


def test_second_demo_run_continues_from_the_first(tmp_path: Path) -> None:
    """The first run seeds .prefrontal/prefrontal.db; the second finds the agent and its turn."""
    first = demo(tmp_path)
    assert "seeded the demo agent" in first.stderr
    assert (tmp_path / ".prefrontal" / "prefrontal.db").is_file()
    second = demo(tmp_path)
    assert "seeded" not in second.stderr
    assert "1 earlier turn(s)" in " ".join(second.stderr.split())


def test_demo_in_memory_keeps_nothing(tmp_path: Path) -> None:
    """With ``--db :memory:`` every run starts fresh and writes no file."""
    demo(tmp_path, "--db", ":memory:")
    second = demo(tmp_path, "--db", ":memory:")
    assert "seeded the demo agent" in second.stderr
    assert not (tmp_path / ".prefrontal").exists()
