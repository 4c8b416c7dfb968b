"""The ``prefrontal`` command line: ``turn``, ``trace``, ``demo``, ``bench``, ``eval``, ``serve``,
``agent``, ``erase``, ``ui``.

A command that fails says why in one line on standard error and exits with
status 1 (2 for a usage error); ``--debug`` (or ``PREFRONTAL_DEBUG=1``)
shows the traceback instead.
"""

from __future__ import annotations

import importlib
import os
import sys
from difflib import get_close_matches

import typer
import typer.main

# typer (0.29 on) runs on its own copy of click: its commands, contexts and errors.
from typer._click.core import Command, Context
from typer._click.exceptions import UsageError
from typer._click.formatting import HelpFormatter
from typer.core import TyperCommand, TyperGroup

COMMANDS: dict[str, tuple[str, str, str]] = {
    "turn": (
        "prefrontal.cli.turn_command",
        "turn",
        "Run one turn on the store (seeding the demo agent into a new one) and show the bundle.",
    ),
    "demo": (
        "prefrontal.cli.demo_command",
        "demo",
        "Run one real turn of the demo agent on the store, and show the bundle and its phases.",
    ),
    "bench": (
        "prefrontal.cli.bench_command",
        "bench",
        "Measure turn overhead, the concurrency gain and many turns at once (a few seconds).",
    ),
    "erase": (
        "prefrontal.cli.erase_command",
        "erase",
        "Remove every record of one user of one agent; print what was removed, as JSON.",
    ),
    "ui": (
        "prefrontal.cli.ui_command",
        "ui",
        "Serve the trace viewer on http://127.0.0.1:PORT/ui (loopback only, no key needed).",
    ),
    "trace": (
        "prefrontal.cli.trace_command",
        "trace_app",
        "List, show and prune turn traces.",
    ),
    "eval": (
        "prefrontal.cli.eval_command",
        "eval_app",
        "Evaluate the assembled context: LoCoMo evidence recall within a token budget.",
    ),
    "doctor": (
        "prefrontal.cli.doctor_command",
        "doctor",
        "Say what vector search runs on (pgvector or the cache), the index, replicas and lag.",
    ),
    "serve": ("prefrontal.cli.serve_command", "serve_app", "Serve prefrontal over HTTP or MCP."),
    "agent": (
        "prefrontal.cli.agent_command",
        "agent_app",
        "Set up an agent from a file; show its state.",
    ),
}
"""Each command by name: the module and attribute defining it, the summary ``--help`` lists."""


def load_command(name: str) -> Command:
    """The click command ``name`` as typer builds it, importing its module now."""
    module_name, attribute, _ = COMMANDS[name]
    defined = getattr(importlib.import_module(module_name), attribute)
    holder = typer.Typer()
    if isinstance(defined, typer.Typer):
        holder.add_typer(defined, name=name)
    else:
        holder.command(name=name)(defined)
    return typer.main.get_group(holder).commands[name]


class LazyGroup(TyperGroup):
    """The root group: lists its commands from :data:`COMMANDS` and imports one only to run it.

    ``prefrontal --help`` shows each command's summary without importing its
    module, so the command answers before the stores, servers or models load.
    """

    listing = False

    def list_commands(self, ctx: Context) -> list[str]:
        """Every command's name, in the order ``--help`` lists them."""
        return [
            *super().list_commands(ctx),
            *(name for name in COMMANDS if name not in self.commands),
        ]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        """The command ``cmd_name``: a summary while listing, else the real one, loaded once."""
        if cmd_name in self.commands or cmd_name not in COMMANDS:
            return super().get_command(ctx, cmd_name)
        if self.listing:
            summary = COMMANDS[cmd_name][2]
            return TyperCommand(cmd_name, help=summary, short_help=summary)
        self.commands[cmd_name] = load_command(cmd_name)
        return self.commands[cmd_name]

    def resolve_command(
        self, ctx: Context, args: list[str]
    ) -> tuple[str | None, Command | None, list[str]]:
        """The command ``args`` names; a misspelt name fails suggesting the closest ones."""
        try:
            return super().resolve_command(ctx, args)
        except UsageError as error:
            matches = get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if matches and "Did you mean" not in error.message:
                suggestions = ", ".join(repr(match) for match in matches)
                error.message = f"{error.message.rstrip('.')}. Did you mean {suggestions}?"
            raise

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        """The group's help, listing the commands by their summaries."""
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False


app = typer.Typer(
    cls=LazyGroup, no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False
)


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("prefrontal")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(f"prefrontal {_package_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    log_level: str = typer.Option(
        "warning", envvar="PREFRONTAL_LOG_LEVEL", help="Log events at this level and above."
    ),
    log_json: bool | None = typer.Option(
        None, "--log-json/--log-console", help="Log format (default: JSON off a terminal)."
    ),
    debug: bool = typer.Option(
        False, "--debug", envvar="PREFRONTAL_DEBUG", help="Show the traceback of an error."
    ),
    show_version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """prefrontal: an LLM agent's working memory, assembled at the start of every turn."""
    if debug:
        os.environ["PREFRONTAL_DEBUG"] = "1"
    import prefrontal.logging

    try:
        prefrontal.logging.configure(json=log_json, level=log_level)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--log-level") from None


def _debugging() -> bool:
    return os.environ.get("PREFRONTAL_DEBUG", "").lower() in ("1", "true", "yes")


def main() -> None:
    """Entry point of the ``prefrontal`` script: errors in one line unless ``--debug``."""
    try:
        app()
    except Exception as error:
        if _debugging():
            raise
        from prefrontal.cli.errors import one_line

        print(f"error: {one_line(error)}", file=sys.stderr)
        sys.exit(1)
