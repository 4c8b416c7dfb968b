"""``prefrontal eval``: evaluations of the assembled context.

``prefrontal eval locomo PATH`` measures how much of the evidence that
LoCoMo's questions need the context of a turn holds, within a token budget,
beside two baselines on the same budget.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import anyio
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

from prefrontal.errors import ConfigurationError, DatasetError
from prefrontal.evaluation.locomo import load
from prefrontal.evaluation.report import report, table
from prefrontal.evaluation.run import Run, evaluate
from prefrontal.retrieval.dense import EMBEDDERS, load_embedder

eval_app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Evaluate the assembled context: LoCoMo evidence recall within a token budget.",
)


class Format(StrEnum):
    """How the report is printed."""

    JSON = "json"
    TABLE = "table"


@eval_app.command()
def locomo(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="A LoCoMo JSON file.")],
    budget: Annotated[int, typer.Option("--budget", min=64, help="Total context tokens.")] = 4_000,
    output: Annotated[Format, typer.Option("--format", help="json or table.")] = Format.TABLE,
    embedder: Annotated[
        str | None,
        typer.Option(
            "--embedder", help=f"Dense embedder for memory search: {', '.join(EMBEDDERS)}."
        ),
    ] = None,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db", file_okay=False, help="Use SQLite stores: one file per conversation in DIR."
        ),
    ] = None,
    observations: Annotated[
        bool,
        typer.Option("--observations", help="Also score with LoCoMo's observations and summaries."),
    ] = False,
    feedback: Annotated[
        bool,
        typer.Option("--feedback", help="Turn on the pseudo-relevance feedback query."),
    ] = False,
) -> None:
    """Evidence recall of the assembled context on LoCoMo, beside two baselines."""
    stderr = Console(stderr=True)
    try:
        dataset = load(path)
        model = load_embedder(embedder) if embedder else None
    except (DatasetError, ConfigurationError) as error:
        stderr.print(f"error: {error}", markup=False, highlight=False)
        raise typer.Exit(2) from None
    total = dataset.question_count * (2 if observations else 1)
    columns = (*Progress.get_default_columns()[:2], BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeElapsedColumn(), console=stderr, transient=True) as bar:
        task = bar.add_task("questions", total=total)

        async def go() -> Run:
            return await evaluate(
                dataset,
                budget,
                embedder=model,
                notes=observations,
                db=db,
                progress=lambda n: bar.advance(task, n),
                feedback=feedback,
            )

        run = anyio.run(go)
    data = report(dataset, run, budget, model.name if model else None, "sqlite" if db else "memory")
    if output is Format.JSON:
        typer.echo(json.dumps(data, indent=2))
    else:
        Console().print(table(data))
