"""What prefrontal creates on disk is its owner's only, whatever the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from prefrontal import Orchestrator
from prefrontal.files import create_private, private_directory, write_private
from prefrontal.serving.keys import append_entry, key_entry
from prefrontal.stores import Tenant, sqlite

pytestmark = pytest.mark.anyio


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture(params=[0o000, 0o022, 0o077])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The process's umask set to each of an open, the usual and a strict one."""
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def test_files_are_created_0600_and_directories_0700(tmp_path: Path, umask: int) -> None:
    directory = tmp_path / "a" / "b"
    private_directory(directory)
    create_private(directory / "empty")
    write_private(directory / "text", "secret\n")
    write_private(directory / "text", "replaced\n")
    assert (mode(tmp_path / "a"), mode(directory)) == (0o700, 0o700)
    assert (mode(directory / "empty"), mode(directory / "text")) == (0o600, 0o600)
    assert (directory / "text").read_text(encoding="utf-8") == "replaced\n"
    assert sorted(p.name for p in directory.iterdir()) == ["empty", "text"]
    with pytest.raises(FileExistsError):
        private_directory(directory / "text")


def test_an_existing_file_keeps_its_mode(tmp_path: Path, umask: int) -> None:
    path = tmp_path / "chosen"
    path.write_text("kept", encoding="utf-8")
    os.chmod(path, 0o640)
    create_private(path)
    assert (mode(path), path.read_text(encoding="utf-8")) == (0o640, "kept")


def test_a_keys_file_is_written_0600(tmp_path: Path, umask: int) -> None:
    path = tmp_path / "keys.json"
    append_entry(path, key_entry("k" * 40, name="maya", agent_id="atlas", users=["maya"]))
    assert mode(path) == 0o600
    assert not path.with_name("keys.json.tmp").exists()


async def test_the_database_and_its_logs_are_0600_under_any_umask(
    tmp_path: Path, umask: int
) -> None:
    path = tmp_path / "new" / "stores.db"
    clock = lambda: datetime(2026, 3, 2, tzinfo=UTC)  # noqa: E731
    async with Orchestrator(sqlite.open_stores(path), clock=clock) as orchestrator:
        await orchestrator.memory.remember(Tenant(agent_id="a", user_id="u"), "a private note")
        logs = [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]
        modes = [mode(p) for p in (path, *logs)]
    assert modes == [0o600, 0o600, 0o600]
    assert mode(path.parent) == 0o700
