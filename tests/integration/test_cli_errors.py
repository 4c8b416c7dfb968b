"""``prefrontal`` fails in one line: the path or DSN named, exit status 1, no traceback.

Each case runs the real command in a subprocess, as a user would.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


def prefrontal(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``python -m prefrontal ARGS`` in ``cwd`` without colour."""
    env = os.environ | {"COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"}
    env.pop("PREFRONTAL_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "prefrontal", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
        check=False,
    )


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single ``error:`` line the command printed, after checking there is nothing else."""
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def test_a_corrupt_file_is_named_in_one_line(tmp_path: Path) -> None:
    """A file that is not a SQLite database: one line naming the store and the cause."""
    (tmp_path / "corrupt.db").write_bytes(b"not a database, " * 400)
    line = one_error_line(prefrontal("turn", "hello", "--db", "corrupt.db", cwd=tmp_path))
    assert line == "error: --db corrupt.db: consciousness store: sqlite: file is not a database"


@contextlib.contextmanager
def read_only(directory: Path) -> Iterator[None]:
    """``directory`` made unwritable (``chattr +i`` where permission bits do not bind, as root)."""
    directory.chmod(0o555)
    immutable = os.access(directory, os.W_OK)
    if immutable:
        chattr = shutil.which("chattr")
        made = chattr and subprocess.run([chattr, "+i", str(directory)], check=False).returncode
        if made != 0:
            directory.chmod(0o755)
            pytest.skip("no way to make a directory read-only here")
    try:
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(directory)], check=True)
        directory.chmod(0o755)


def test_a_read_only_directory_is_named_in_one_line(tmp_path: Path) -> None:
    """A database that cannot be created in a read-only directory: one line naming the file."""
    (tmp_path / "locked").mkdir()
    with read_only(tmp_path / "locked"):
        result = prefrontal("turn", "hello", "--db", "locked/x.db", cwd=tmp_path)
    line = one_error_line(result)
    assert line.startswith("error: --db locked/x.db: ")
    assert "unable to open database file" in line


def test_a_path_that_cannot_be_created_is_named(tmp_path: Path) -> None:
    """A database whose directory cannot be made (a file is in the way) names that directory."""
    (tmp_path / "taken").write_text("a file, not a directory")
    line = one_error_line(prefrontal("turn", "hello", "--db", "taken/x.db", cwd=tmp_path))
    assert line == "error: --db: cannot create taken: a file is in the way"


def test_an_unreachable_server_is_one_line(tmp_path: Path) -> None:
    """A PostgreSQL URL nobody answers at (loopback, port 1): one line, nothing created."""
    dsn = "postgresql://nobody@127.0.0.1:1/prefrontal"
    line = one_error_line(prefrontal("turn", "hello", "--db", dsn, cwd=tmp_path))
    assert "Connect call failed" in line or "refused" in line
    assert list(tmp_path.iterdir()) == []


def test_a_bad_dsn_is_named_without_its_password(tmp_path: Path) -> None:
    """A PostgreSQL URL that fails names the URL with its password masked."""
    dsn = "postgresql://nobody:hunter2@127.0.0.1:1/prefrontal"
    line = one_error_line(prefrontal("turn", "hello", "--db", dsn, cwd=tmp_path))
    assert line.startswith("error: --db postgresql://nobody:***@127.0.0.1:1/prefrontal: ")
    assert "hunter2" not in line


def test_an_unknown_scheme_is_refused_and_no_file_is_made(tmp_path: Path) -> None:
    """``postgresql+asyncpg://`` is not taken for a path: no directory holds the password."""
    dsn = "postgresql+asyncpg://user:secret@host/db"
    line = one_error_line(prefrontal("turn", "hello", "--db", dsn, cwd=tmp_path))
    assert "unknown scheme 'postgresql+asyncpg'" in line
    assert "secret" not in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["trace", "show", "latest"], ["trace", "list"]])
def test_read_only_commands_never_create_a_database(tmp_path: Path, command: list[str]) -> None:
    """``trace show`` and ``trace list`` on a missing file say so and leave the disk alone."""
    line = one_error_line(prefrontal(*command, "--db", "typo/x.db", cwd=tmp_path))
    assert line == "error: --db: no database at typo/x.db"
    assert list(tmp_path.iterdir()) == []


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    """``--debug`` trades the one line for the whole traceback."""
    (tmp_path / "corrupt.db").write_bytes(b"not a database, " * 400)
    result = prefrontal("--debug", "turn", "hello", "--db", "corrupt.db", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" in result.stderr


def test_another_agent_is_not_seeded_with_the_demo_data(tmp_path: Path) -> None:
    """``turn --agent mybot`` on an empty store runs without the demo agent's identity."""
    result = prefrontal("turn", "hello", "--agent", "mybot", "--db", "x.db", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "seeded" not in result.stderr
    assert "no profile of agent 'mybot'" in " ".join(result.stderr.split())
    assert "You are Atlas" not in result.stdout


def test_no_seed_leaves_an_empty_store_empty(tmp_path: Path) -> None:
    """``--no-seed`` runs the demo agent's turn on an empty store without seeding it."""
    result = prefrontal("turn", "hello", "--no-seed", "--json", "--db", "x.db", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "seeded" not in result.stderr
    assert '"total_tokens": 0' in result.stdout


def test_version_prints_the_package_version(tmp_path: Path) -> None:
    """``--version`` prints ``prefrontal`` and the installed version, and exits 0."""
    result = prefrontal("--version", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.startswith("prefrontal ")


def test_trace_prune_keeps_the_newest_and_says_how_many_went(tmp_path: Path) -> None:
    """``trace prune --keep 1`` after two turns removes one trace; ``trace list`` shows the other."""
    for message in ("first", "second"):
        assert prefrontal("turn", message, "--db", "x.db", cwd=tmp_path).returncode == 0
    pruned = prefrontal("trace", "prune", "--keep", "1", "--db", "x.db", cwd=tmp_path)
    assert pruned.stdout.strip() == "removed 1 trace(s)"
    listed = prefrontal("trace", "list", "--json", "--db", "x.db", cwd=tmp_path)
    assert len(json.loads(listed.stdout)) == 1


def test_trace_prune_needs_a_bound(tmp_path: Path) -> None:
    """``trace prune`` with neither ``--older-than`` nor ``--keep`` is a usage error."""
    result = prefrontal("trace", "prune", "--db", "x.db", cwd=tmp_path)
    assert result.returncode == 2
    assert "--older-than, --keep, or both" in result.stderr


def test_an_empty_message_is_one_line_naming_the_field(tmp_path: Path) -> None:
    """``prefrontal turn ""`` says which field is wrong in one line, with no link or input dump."""
    result = prefrontal("turn", "", "--db", "x.db", cwd=tmp_path)
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert lines == ["error: user_input: String should have at least 1 character"]
    assert not (tmp_path / "x.db").exists()
