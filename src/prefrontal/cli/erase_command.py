"""``prefrontal erase --user U --agent A [--db DB] [--vacuum]``: everything of one user removed.

Runs :meth:`~prefrontal.memory.MemoryAPI.erase` on the stores ``--db``
names and prints its report as JSON (what each store removed). With
``--vacuum``, the database is then rewritten so that deleted rows leave its
files: ``VACUUM`` on SQLite, ``VACUUM FULL`` of every table and a
``CHECKPOINT`` on PostgreSQL (each table locked while it is rewritten);
SQLite memory stores' vector files are compacted too (``vectors_compacted``:
the stores whose files were).
See docs/privacy.md for what stays in logs and backups.
"""

from __future__ import annotations

import json

import anyio
import typer

from prefrontal.cli.stores import DbOption, opened
from prefrontal.memory import MemoryAPI
from prefrontal.stores.set import Stores
from prefrontal.stores.sqlite.compaction import compact_vectors


async def _vacuum(stores: Stores) -> bool:
    """Vacuum the database of the episodic store, if it has one; whether it did."""
    database = getattr(stores.episodic, "database", None)
    vacuum = getattr(database, "vacuum", None)
    if vacuum is None:
        return False
    await vacuum(store="episodic")
    return True


async def _erase(db: str, agent: str, user: str, vacuum: bool) -> dict[str, object]:
    async with opened(db, create=False) as stores:
        report = await MemoryAPI(stores).erase(agent, user)
        out: dict[str, object] = report.model_dump()
        out["vacuumed"] = await _vacuum(stores) if vacuum else False
        out["vectors_compacted"] = await compact_vectors(stores) if vacuum else []
        return out


def erase(
    user: str = typer.Option(..., "--user", help="The user whose records are removed."),
    agent: str = typer.Option(..., "--agent", help="The agent the user belongs to."),
    db: str = DbOption,
    vacuum: bool = typer.Option(
        False, "--vacuum", help="Then rewrite the database so deleted rows leave its files."
    ),
) -> None:
    """Remove every record of one user of one agent; print what was removed, as JSON."""
    report = anyio.run(_erase, db, agent, user, vacuum)
    typer.echo(json.dumps(report, indent=2))
