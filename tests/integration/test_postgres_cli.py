"""``prefrontal demo --db postgresql://...`` runs on PostgreSQL, and a second run sees the first."""

from __future__ import annotations

from pathlib import Path

from tests.integration.test_demo_persists import demo


def test_demo_on_postgres_continues_from_the_first_run(postgres_dsn: str, tmp_path: Path) -> None:
    """The first run seeds the database; the second finds the agent and its turn there, no file written."""
    first = demo(tmp_path, "--db", postgres_dsn)
    assert "seeded the demo agent" in " ".join(first.stderr.split())
    second = demo(tmp_path, "--db", postgres_dsn)
    assert "seeded" not in second.stderr
    assert "1 earlier turn(s)" in " ".join(second.stderr.split())
    assert not (tmp_path / ".prefrontal").exists()
