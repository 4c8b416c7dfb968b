"""``prefrontal erase --user U --agent A --db DB [--vacuum]`` in a subprocess on a SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.test_cli import prefrontal


def test_erase_removes_the_users_turns_and_vacuums(tmp_path: Path) -> None:
    """A user's turn is erased: the report counts it, and no byte of the input stays."""
    db = tmp_path / "prefrontal.db"
    prefrontal("turn", "Remember qzxerasablemark please", "--reply", "Noted.", db=db)
    assert b"erasablemark" in db.read_bytes() + _wal(db)
    done = prefrontal("erase", "--user", "maya", "--agent", "atlas", "--vacuum", db=db)
    report = json.loads(done.stdout)
    assert report["removed"]["traces"] == 1
    assert report["removed"]["conversation"] >= 2
    assert report["vacuumed"] is True
    assert b"erasablemark" not in db.read_bytes() + _wal(db)


def _wal(db: Path) -> bytes:
    wal = db.with_name(db.name + "-wal")
    return wal.read_bytes() if wal.exists() else b""
