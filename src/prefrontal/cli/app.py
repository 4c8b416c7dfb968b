"""The ``prefrontal`` command: ``turn``, ``trace``, ``demo``, ``bench``, ``eval`` and ``serve``."""

from __future__ import annotations

import typer

import prefrontal.logging
from prefrontal.cli.bench_command import bench
from prefrontal.cli.demo_command import demo
from prefrontal.cli.eval_command import eval_app
from prefrontal.cli.serve_command import serve_app
from prefrontal.cli.trace_command import trace_app
from prefrontal.cli.turn_command import turn

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_show_locals=False)


@app.callback()
def _root(
    log_level: str = typer.Option(
        "warning", envvar="PREFRONTAL_LOG_LEVEL", help="Log events at this level and above."
    ),
    log_json: bool | None = typer.Option(
        None, "--log-json/--log-console", help="Log format (default: JSON off a terminal)."
    ),
) -> None:
    """prefrontal: an LLM agent's working memory, assembled at the start of every turn."""
    try:
        prefrontal.logging.configure(json=log_json, level=log_level)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--log-level") from None


app.command()(turn)
app.add_typer(trace_app, name="trace")
app.add_typer(eval_app, name="eval")
app.add_typer(serve_app, name="serve")
app.command()(demo)
app.command()(bench)


def main() -> None:
    """Entry point of the ``prefrontal`` script."""
    app()
