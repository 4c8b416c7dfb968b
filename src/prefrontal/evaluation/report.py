"""The evaluation's report: a JSON-ready dict and a table, side by side with the baselines."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from prefrontal.evaluation.locomo import CATEGORIES, Dataset
from prefrontal.evaluation.run import Run
from prefrontal.evaluation.scoring import counts, summarise

CATEGORY_NAMES = {
    "1": "multi-hop",
    "2": "temporal",
    "3": "open-domain",
    "4": "single-hop",
    "5": "adversarial",
    "overall_1_4": "overall 1-4",
    "overall_1_5": "overall 1-5",
}


def report(
    dataset: Dataset, run: Run, budget: int, embedder: str | None, stores: str = "memory"
) -> dict[str, Any]:
    """Everything the run measured, as plain data."""
    out: dict[str, Any] = {
        "budget": budget,
        "stores": stores,
        "budget_note": "total context tokens (cl100k); the pipeline reserves nothing for output",
        "embedder": embedder,
        "conversations": len(dataset.conversations),
        "questions": len(run.pipeline),
        "questions_per_category": counts(run.pipeline),
        "recall": summarise(run.pipeline),
        "baselines": {"recency": summarise(run.recency), "bm25": summarise(run.bm25)},
        "context_tokens": _tokens(run.context_tokens),
        "dropped": vars(dataset.drops),
        "seconds": run.seconds,
    }
    if run.with_notes:
        out["with_observations"] = summarise(run.with_notes)
    return out


def _tokens(values: list[int]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "max": 0}
    return {"mean": round(sum(values) / len(values), 1), "max": max(values)}


def table(data: dict[str, Any]) -> Table:
    """The report as a table: one row per category, one column per retriever."""
    title = f"LoCoMo evidence recall at {data['budget']:,} tokens ({data['seconds']} s)"
    grid = Table(title=title)
    columns = [("prefrontal", data["recall"])]
    if "with_observations" in data:
        columns.append(("+ observations", data["with_observations"]))
    columns += [("recent turns", data["baselines"]["recency"]), ("BM25", data["baselines"]["bm25"])]
    grid.add_column("category")
    grid.add_column("questions", justify="right")
    for name, _ in columns:
        grid.add_column(name, justify="right")
    for key in [*map(str, CATEGORIES), "overall_1_4", "overall_1_5"]:
        count = str(data["questions_per_category"][key])
        grid.add_row(CATEGORY_NAMES[key], count, *(f"{values[key]:.3f}" for _, values in columns))
    return grid
