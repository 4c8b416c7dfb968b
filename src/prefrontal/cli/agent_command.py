"""``prefrontal agent apply FILE``, ``agent export`` and ``agent show``: an agent as a file.

``apply`` reads a TOML agent file (:mod:`prefrontal.agents.file`) and brings
the database in line with it; applying the same file again changes nothing.
``--dry-run`` prints what would change, field by field, and changes nothing;
``--prune`` also retires the agent's open items the file no longer lists.
``export`` prints the agent's current profile and own items as a file that
``apply`` reproduces exactly. An invalid file fails with one line naming the
file, the line and the field.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import typer

from prefrontal.agents import AgentStateAPI
from prefrontal.agents.api import agent_tenant
from prefrontal.agents.file import AgentFile, ApplyReport, apply, export, load
from prefrontal.agents.handles import handle_of
from prefrontal.cli.stores import DbOption, opened
from prefrontal.errors import NotFoundError
from prefrontal.phases.frontal_cortex import describe
from prefrontal.serving.service import Service
from prefrontal.stores.frontal_cortex import FrontalQuery
from prefrontal.stores.records import utc_now
from prefrontal.stores.tenancy import Tenant

agent_app = typer.Typer(no_args_is_help=True, help="Set up an agent from a file; show its state.")
FileArgument = typer.Argument(..., help="The agent file (TOML), e.g. examples/agent.toml.")


async def _apply(db: str, path: Path, prune: bool, dry_run: bool) -> ApplyReport:
    agent_file = load(path)
    async with opened(db) as stores:
        return await apply(AgentStateAPI(stores), agent_file, prune=prune, dry_run=dry_run)


@agent_app.command("apply")
def apply_file(
    path: Path = FileArgument,
    db: str = DbOption,
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print what would change, field by field; change nothing."
    ),
    prune: bool = typer.Option(
        False, "--prune", help="Also retire (cancel) the agent's open items the file omits."
    ),
) -> None:
    """Apply an agent file: its identity, rules, modes, capabilities, goals and actions."""
    report = anyio.run(_apply, db, path, prune, dry_run)
    if dry_run:
        typer.echo(f"dry run (nothing changed): {report.summary()}")
        for line in report.diff:
            typer.echo(f"  {line}")
        return
    typer.echo(report.summary())
    for verb, names in (
        ("created", report.created),
        ("updated", report.updated),
        ("retired", report.retired),
    ):
        for name in names:
            typer.echo(f"  {verb} {name}")


OutputOption = typer.Option(None, "--output", "-o", help="Write the file here (default: print it).")


async def _export(db: str, agent_id: str) -> str:
    async with opened(db, create=False) as stores:
        return await export(AgentStateAPI(stores), agent_id)


@agent_app.command("export")
def export_file(
    agent: str = typer.Option(..., "--agent", help="The agent's id."),
    db: str = DbOption,
    output: Path | None = OutputOption,
) -> None:
    """Print the agent's profile and own items as an agent file that `apply` reproduces."""
    try:
        text = anyio.run(_export, db, agent)
    except NotFoundError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")


async def _show(db: str, tenant: Tenant) -> list[str]:
    async with opened(db, create=False) as stores:
        api = AgentStateAPI(stores)
        profile = await api.get_profile(tenant)
        items = await stores.frontal_cortex.query(tenant, FrontalQuery(limit=200))
        entries = await stores.scratch_page.active(tenant, now=utc_now(), limit=200)
    whose = "the agent" if tenant == agent_tenant(tenant.agent_id) else tenant.user_id
    if profile is None:
        return [f"agent {tenant.agent_id}: no profile (apply an agent file first)"]
    g = profile.governance
    return [
        f"agent {profile.agent_id}: {profile.name} (profile version {profile.version})",
        *([profile.description] if profile.description else []),
        *(f"value: {v}" for v in profile.values),
        *(f"mandate: {m}" for m in profile.mandates),
        *(f"rule: {r}" for r in (*g.safety_policies, *g.access_control, *g.escalation)),
        f"modes: {', '.join(m.name for m in profile.modes) or '-'}"
        f" (current: {profile.current_mode or '-'})",
        f"capabilities: {', '.join(c.name for c in profile.capabilities) or '-'}",
        f"items of {whose} ({len(items)}):",
        *(f"  [{i.item_id} v{i.version} {i.status.value}] {describe(i)}" for i in items),
        f"scratch page ({len(entries)} active):",
        *(
            f"  [{e.item_id} v{e.version}] {handle_of(e)} {e.kind.value}: {e.content}"
            for e in entries
        ),
    ]


@agent_app.command("show")
def show(
    agent: str = typer.Option(..., "--agent", help="The agent's id."),
    user: str | None = typer.Option(
        None, "--user", help="Also show this user's own goals and scratch page."
    ),
    db: str = DbOption,
) -> None:
    """Print the agent's profile, goals, actions, questions and scratch page."""
    tenant = agent_tenant(agent) if user is None else Tenant(agent_id=agent, user_id=user)
    for line in anyio.run(_show, db, tenant):
        typer.echo(line)


AgentFileOption = typer.Option(
    None, "--agent-file", help="Apply this agent file (TOML) at start, before serving."
)


def checked_file(path: Path | None) -> AgentFile | None:
    """The agent file at ``path`` read and checked before a server starts (``None``: none)."""
    return None if path is None else load(path)


async def applied_then(
    service: Service, agent_file: AgentFile | None, main: Callable[[], Awaitable[None]]
) -> None:
    """Apply ``agent_file`` over the service's stores, then run ``main`` (the server)."""
    if agent_file is not None:
        report = await apply(service.orchestrator.agents, agent_file)
        print(report.summary(), file=sys.stderr)
    await main()
