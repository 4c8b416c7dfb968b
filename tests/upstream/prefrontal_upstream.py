"""A pytest plugin that runs the frameworks' own store tests, unmodified, against prefrontal.

Loaded with ``-p prefrontal_upstream`` (this folder on ``PYTHONPATH``) by
``make upstream`` (:mod:`run_upstream`), in the folder of a framework's
extracted sdist. Before the tests are collected it swaps in prefrontal's
seats where the tests name the framework's own:

- ``langgraph.store.memory.InMemoryStore``: a :class:`PrefrontalStore` over
  in-memory stores (the store's ``index`` and ``ttl`` configurations kept);
- ``langgraph.store.sqlite.SqliteStore`` (when langgraph-checkpoint-sqlite
  is installed): a :class:`PrefrontalStore` over a SQLite file of
  prefrontal's, opened by ``from_conn_string`` as the tests do.

A test listed in :data:`NOT_APPLICABLE` is skipped with its reason (it
tests the framework store's own machinery, not the ``BaseStore``
contract; ``PREFRONTAL_UPSTREAM_SUITE`` names the package whose tests
run). Each test's outcome is written, as JSON lines, to the file named
by ``PREFRONTAL_UPSTREAM_REPORT``.
"""

from __future__ import annotations

import importlib
import json
import os
import tempfile
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, ClassVar

import pytest

from prefrontal.integrations.langgraph import PrefrontalStore
from prefrontal.stores import Stores, sqlite

NOT_APPLICABLE: dict[tuple[str, str, str], str] = {
    (
        "openai-agents",
        "test_session.py",
        "test_sqlite_session_close_closes_worker_thread_connections",
    ): ("SQLiteSession's per-thread connections"),
    (
        "openai-agents",
        "test_session.py",
        "test_sqlite_session_reaps_connections_from_exited_worker_threads",
    ): ("SQLiteSession's per-thread connections"),
    (
        "openai-agents",
        "test_session.py",
        "test_sqlite_session_closes_retired_connections_before_the_next_allocation",
    ): ("SQLiteSession's per-thread connections"),
    (
        "openai-agents",
        "test_session.py",
        "test_sqlite_session_keeps_connections_of_live_worker_threads",
    ): ("SQLiteSession's per-thread connections"),
    (
        "openai-agents",
        "test_session.py",
        "test_sqlite_session_close_retries_quarantined_connection",
    ): ("SQLiteSession's connection quarantine"),
    (
        "openai-agents",
        "test_session.py",
        "test_sqlite_session_rollback_failure_evicts_connection",
    ): ("SQLiteSession's connection eviction on a failed rollback"),
    (
        "openai-agents",
        "test_session.py",
        "test_sqlite_session_failed_add_items_releases_write_lock",
    ): ("SQLiteSession's write lock (monkeypatched SQL failure)"),
    (
        "openai-agents",
        "test_session.py",
        "test_sqlite_session_failed_pop_item_releases_write_lock",
    ): ("SQLiteSession's write lock (monkeypatched SQL failure)"),
    ("openai-agents", "test_session.py", "test_sqlite_session_failed_clear_session_rolls_back"): (
        "SQLiteSession's SQL rollback (monkeypatched SQL failure)"
    ),
    (
        "openai-agents",
        "test_session.py",
        "test_sqlite_session_file_lock_is_shared_across_instances",
    ): ("SQLiteSession's file lock registry"),
    (
        "openai-agents",
        "test_session.py",
        "test_sqlite_session_post_commit_cancellation_propagates_after_known_outcome",
    ): ("SQLiteSession's worker-thread commit (_await_mutation)"),
    ("openai-agents", "test_session.py", "test_sqlite_session_closed_rejects_empty_add_items"): (
        "SQLiteSession's closed connection"
    ),
    (
        "openai-agents",
        "test_session.py",
        "test_sqlite_session_get_items_limit_skips_corrupt_newest_rows",
    ): ("corrupt rows written straight into SQLiteSession's table"),
    (
        "openai-agents",
        "test_session.py",
        "test_sqlite_session_get_items_session_settings_limit_skips_corrupt_rows",
    ): ("corrupt rows written straight into SQLiteSession's table"),
    (
        "openai-agents",
        "test_session.py",
        "test_sqlite_session_pop_item_skips_corrupt_most_recent",
    ): ("corrupt rows written straight into SQLiteSession's table"),
    (
        "openai-agents",
        "test_session.py",
        "test_sqlite_session_pop_item_returns_none_after_dropping_only_corrupt_rows",
    ): ("corrupt rows written straight into SQLiteSession's table"),
    ("langgraph-checkpoint-sqlite", "test_store.py", "test_nonnull_migrations"): (
        "SqliteStore's SQL migrations (its MIGRATIONS list); prefrontal's SQLite store has its own"
    ),
    ("langgraph-checkpoint-sqlite", "test_store.py", "test_vector_store_initialization"): (
        "reads SqliteStore's connection (store.conn) to inspect its vector tables; the "
        "configuration part (index_config, embeddings) holds for PrefrontalStore too"
    ),
    ("langgraph-checkpoint-sqlite", "test_store.py", "test_sql_injection_vulnerability"): (
        "SqliteStore's check of filter keys before it builds SQL from them ('Invalid filter key'); "
        "prefrontal evaluates a filter on the value in Python, so any key is only a key"
    ),
    ("langgraph-checkpoint-sqlite", "test_ttl.py", "test_ttl_refresh"): (
        "counts the rows SqliteStore's sweeper deletes (sweep_ttl); prefrontal never reads or "
        "searches an expired item and keeps it until erasure, so it sweeps nothing"
    ),
    ("langgraph-checkpoint-sqlite", "test_async_store.py", "test_no_running_loop"): (
        "AsyncSqliteStore refuses its sync methods on the event loop's thread; PrefrontalStore "
        "serves sync calls from any thread on its own loop"
    ),
}
"""The frameworks' tests that do not apply, keyed by ``(package, test file, test function)``.

Only tests of a framework store's own machinery (its SQL, its migrations,
the loop rules of its async-only class); a test of the ``BaseStore``
contract is never listed here: it passes or it counts as failed.
"""

AGENT = "upstream"
USER = "upstream"


class InMemoryPrefrontalStore(PrefrontalStore):
    """``InMemoryStore(index=..., ttl=...)`` as a PrefrontalStore over in-memory stores."""

    def __init__(
        self, *, index: Mapping[str, Any] | None = None, ttl: Any = None, **_: Any
    ) -> None:
        super().__init__(Stores.in_memory(), agent_id=AGENT, user_id=USER, index=index, ttl=ttl)


class SqlitePrefrontalStore(PrefrontalStore):
    """``SqliteStore.from_conn_string(...)`` as a PrefrontalStore over a SQLite file of prefrontal's."""

    def __init__(
        self, stores: Stores, *, index: Mapping[str, Any] | None = None, ttl: Any = None
    ) -> None:
        super().__init__(stores, agent_id=AGENT, user_id=USER, index=index, ttl=ttl)
        self._stores = stores

    @classmethod
    @contextmanager
    def from_conn_string(
        cls, conn_string: str, *, index: Mapping[str, Any] | None = None, ttl: Any = None, **_: Any
    ) -> Iterator[SqlitePrefrontalStore]:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "store.db" if conn_string == ":memory:" else Path(conn_string)
            stores = sqlite.open_stores(path)
            store = cls(stores, index=index, ttl=ttl)
            try:
                yield store
            finally:
                store.run(stores.aclose)
                store.close()

    def setup(self) -> None:
        """Nothing to migrate: prefrontal's stores create their schema when opened."""

    def sweep_ttl(self) -> int:
        """Nothing to sweep: prefrontal never reads or searches an expired item (0 removed)."""
        return 0

    def start_ttl_sweeper(self, *_: Any, **__: Any) -> Any:
        """Nothing to sweep (see :meth:`sweep_ttl`)."""
        return None

    def stop_ttl_sweeper(self, *_: Any, **__: Any) -> bool:
        """Nothing was started."""
        return True


class AsyncSqlitePrefrontalStore(SqlitePrefrontalStore):
    """``AsyncSqliteStore.from_conn_string(...)``: the same store, opened and set up with ``await``."""

    @classmethod
    @asynccontextmanager
    async def from_conn_string(  # type: ignore[override]
        cls, conn_string: str, *, index: Mapping[str, Any] | None = None, ttl: Any = None, **_: Any
    ) -> AsyncIterator[AsyncSqlitePrefrontalStore]:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "store.db" if conn_string == ":memory:" else Path(conn_string)
            stores = sqlite.open_stores(path)
            try:
                yield cls(stores, index=index, ttl=ttl)
            finally:
                await stores.aclose()

    async def setup(self) -> None:  # type: ignore[override]
        """Nothing to migrate."""

    async def sweep_ttl(self) -> int:  # type: ignore[override]
        """Nothing to sweep (0 removed)."""
        return 0

    async def start_ttl_sweeper(self, *_: Any, **__: Any) -> Any:
        """Nothing to sweep."""
        return None

    async def stop_ttl_sweeper(self, *_: Any, **__: Any) -> bool:  # type: ignore[override]
        """Nothing was started."""
        return True


class SQLitePrefrontalSession:
    """``SQLiteSession(session_id, db_path, ...)`` as a PrefrontalSession over prefrontal's stores.

    ``":memory:"``: in-memory stores of the session's own; a file path:
    prefrontal's SQLite stores in that file, one orchestrator per file in
    this process, so every session of the file shares them. The table names
    are SQLiteSession's and mean nothing here; ``session_settings`` is
    passed on.
    """

    _opened: ClassVar[dict[str, Any]] = {}

    def __new__(
        cls,
        session_id: str,
        db_path: str | Path = ":memory:",
        sessions_table: str = "agent_sessions",
        messages_table: str = "agent_messages",
        session_settings: Any = None,
    ) -> Any:
        from prefrontal.integrations.openai_agents import PrefrontalSession
        from prefrontal.orchestrator import Orchestrator

        path = str(db_path)
        if path == ":memory:":
            orchestrator = Orchestrator(Stores.in_memory())
        else:
            if path not in cls._opened:
                cls._opened[path] = Orchestrator(sqlite.open_stores(Path(path)))
            orchestrator = cls._opened[path]
        return PrefrontalSession(
            orchestrator,
            agent_id=AGENT,
            user_id=USER,
            session_id=str(session_id),
            session_settings=session_settings,
        )


def _swap_agents() -> None:
    try:
        importlib.import_module("agents")
    except ImportError:
        return
    for name in ("agents", "agents.memory", "agents.memory.sqlite_session"):
        importlib.import_module(name).SQLiteSession = SQLitePrefrontalSession  # type: ignore[attr-defined]


def _swap() -> None:
    if os.environ.get("PREFRONTAL_UPSTREAM_SUITE") == "openai-agents":
        _swap_agents()
        return
    import langgraph.store.memory as memory

    memory.InMemoryStore = InMemoryPrefrontalStore  # type: ignore[misc,assignment]
    try:
        sqlite_store = importlib.import_module("langgraph.store.sqlite")
        sqlite_aio = importlib.import_module("langgraph.store.sqlite.aio")
    except ImportError:
        return
    setattr(sqlite_store, "SqliteStore", SqlitePrefrontalStore)  # noqa: B010
    setattr(sqlite_store, "AsyncSqliteStore", AsyncSqlitePrefrontalStore)  # noqa: B010
    setattr(sqlite_aio, "AsyncSqliteStore", AsyncSqlitePrefrontalStore)  # noqa: B010


def pytest_configure(config: pytest.Config) -> None:
    """Swap prefrontal's seats in before any test module imports the framework's."""
    _swap()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip each test that does not apply, with its reason."""
    for item in items:
        reason = not_applicable(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"n.a.: {reason}"))


def not_applicable(nodeid: str) -> str | None:
    """The reason ``nodeid`` does not apply to prefrontal, or ``None``."""
    suite = os.environ.get("PREFRONTAL_UPSTREAM_SUITE", "")
    path, _, name = nodeid.partition("::")
    function = name.split("[")[0]
    for (package, file, test), reason in NOT_APPLICABLE.items():
        if package == suite and path.endswith(file) and function == test:
            return reason
    return None


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Append each test's outcome (passed, failed, n.a. with its reason) to the report file."""
    target = os.environ.get("PREFRONTAL_UPSTREAM_REPORT")
    if not target or (report.when != "call" and report.passed):
        return
    outcome: str = report.outcome
    reason = ""
    if report.skipped:
        reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""
        outcome = "n.a." if "n.a.: " in reason else "skipped"
        reason = reason.split("n.a.: ", 1)[-1]
    with open(target, "a", encoding="utf-8") as out:
        out.write(json.dumps({"test": report.nodeid, "outcome": outcome, "reason": reason}))
        out.write("\n")
