"""A throwaway PostgreSQL server for the tests: initdb, start on a Unix socket, stop.

The server listens on a socket in its own temporary directory and on no TCP
port, with durability off (``fsync``, ``synchronous_commit`` and
``full_page_writes``): the data is thrown away when the tests end. PostgreSQL
refuses to run as root, so as root the server runs as the ``postgres``
system user (``runuser``) in a directory handed to it; as anyone else it
runs directly.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

SEARCH_DIRS = ("/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/pgsql-15/bin")
"""Where distributions put the server binaries, when they are not on ``PATH``."""

SETTINGS = (
    "listen_addresses=''",
    "fsync=off",
    "synchronous_commit=off",
    "full_page_writes=off",
    "max_connections=200",
)


def binaries() -> Path | None:
    """The directory holding ``initdb``, ``pg_ctl``, ``postgres`` and ``psql``, or ``None``."""
    found = shutil.which("pg_ctl")
    candidates = [Path(found).resolve().parent] if found else []
    candidates += [Path(d) for d in SEARCH_DIRS]
    for directory in candidates:
        if all((directory / name).exists() for name in ("initdb", "pg_ctl", "postgres", "psql")):
            return directory
    return None


def missing_reason() -> str | None:
    """Why no server can be started here (``None`` when one can)."""
    if binaries() is None:
        return "PostgreSQL binaries (initdb, pg_ctl, postgres, psql) not found"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
        if shutil.which("runuser") is None:
            return "running as root and runuser is not available"
    return None


@dataclass
class Server:
    """A running server: its socket directory and a counter for fresh database names."""

    root: Path
    bin: Path
    _names: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def socket_dir(self) -> Path:
        """The directory holding the server's Unix socket."""
        return self.root / "socket"

    def dsn(self, database: str = "postgres") -> str:
        """A connection string for ``database`` over the Unix socket."""
        return f"postgresql://postgres@/{database}?host={self.socket_dir}"

    def create_database(self, prefix: str = "test") -> str:
        """A new, empty database; returns its DSN."""
        name = f"{prefix}_{next(self._names)}"
        self._psql(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def _psql(self, sql: str) -> None:
        subprocess.run(
            [str(self.bin / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql, self.dsn()],
            check=True,
            capture_output=True,
        )


def _run_as_server_user(*command: str, check: bool = True) -> None:
    """Run ``command`` as the server's user: ``postgres`` when we are root, else ourselves."""
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    done = subprocess.run([*prefix, *command], check=False, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise RuntimeError(f"{Path(command[0]).name} failed: {done.stderr or done.stdout}")


@contextlib.contextmanager
def running_server() -> Iterator[Server]:
    """Start a fresh server for the duration of the block, then stop it and delete its files."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL binaries not found")
    root = Path(tempfile.mkdtemp(prefix="prefrontal-pg-"))
    data, socket_dir, log = root / "data", root / "socket", root / "server.log"
    socket_dir.mkdir()
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        for path in (root, socket_dir):
            os.chown(path, user.pw_uid, user.pw_gid)
    initdb, pg_ctl = str(bin_dir / "initdb"), str(bin_dir / "pg_ctl")
    options = " ".join(["-k", str(socket_dir), *(f"-c {s}" for s in SETTINGS)])
    try:
        _run_as_server_user(
            initdb, "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
            "--locale=C", "--no-sync", "--no-instructions",
        )  # fmt: skip
        _run_as_server_user(pg_ctl, "-D", str(data), "-l", str(log), "-o", options, "-w", "start")
        try:
            yield Server(root=root, bin=bin_dir)
        finally:
            _run_as_server_user(pg_ctl, "-D", str(data), "-m", "immediate", "stop", check=False)
    finally:
        shutil.rmtree(root, ignore_errors=True)
