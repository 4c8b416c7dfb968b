"""The ``prefrontal`` command line: ``turn``, ``trace``, ``demo``, ``bench``, ``eval``, ``serve``,
``agent``, ``erase``, ``ui``.

A command that fails says why in one line on standard error and exits with
status 1 (2 for a usage error); ``--debug`` (or ``PREFRONTAL_DEBUG=1``)
shows the traceback instead.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import PackageNotFoundError, version

import typer

import prefrontal.logging
from prefrontal.cli.agent_command import agent_app
from prefrontal.cli.bench_command import bench
from prefrontal.cli.demo_command import demo
from prefrontal.cli.erase_command import erase
from prefrontal.cli.errors import one_line
from prefrontal.cli.eval_command import eval_app
from prefrontal.cli.serve_command import serve_app
from prefrontal.cli.trace_command import trace_app
from prefrontal.cli.turn_command import turn
from prefrontal.cli.ui_command import ui

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)


def _package_version() -> str:
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
    try:
        prefrontal.logging.configure(json=log_json, level=log_level)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--log-level") from None


app.command()(turn)
app.add_typer(trace_app, name="trace")
app.add_typer(eval_app, name="eval")
app.add_typer(serve_app, name="serve")
app.add_typer(agent_app, name="agent")
app.command()(demo)
app.command()(bench)
app.command()(erase)
app.command()(ui)


def _debugging() -> bool:
    return os.environ.get("PREFRONTAL_DEBUG", "").lower() in ("1", "true", "yes")


def main() -> None:
    """Entry point of the ``prefrontal`` script: errors in one line unless ``--debug``."""
    try:
        app()
    except Exception as error:
        if _debugging():
            raise
        print(f"error: {one_line(error)}", file=sys.stderr)
        sys.exit(1)
