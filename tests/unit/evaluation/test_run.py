"""The whole evaluation on a small conversation: real turns, the report, the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prefrontal.cli.app import app
from prefrontal.evaluation.locomo import load
from prefrontal.evaluation.report import report
from prefrontal.evaluation.run import evaluate

pytestmark = pytest.mark.anyio


async def test_the_pipeline_finds_what_the_questions_need(sample_file: Path) -> None:
    """On a tiny conversation every evidence turn fits, and the bundle stays in budget."""
    dataset = load(sample_file)
    run = await evaluate(dataset, 400)
    assert [s.recall for s in run.pipeline] == [1.0, 1.0, 1.0, 1.0]
    assert max(run.context_tokens) <= 400
    assert len(run.recency) == len(run.bm25) == 4


async def test_a_small_budget_holds_less(sample_file: Path) -> None:
    """With room for a couple of turns, not all evidence fits: the measure can fail."""
    run = await evaluate(load(sample_file), 64)
    assert max(run.context_tokens) <= 64
    assert min(s.recall for s in run.pipeline) < 1.0


async def test_scores_do_not_depend_on_what_the_question_is_scored_against(
    sample_file: Path,
) -> None:
    """Query time reads only the question's text: changing categories leaves contexts alike."""
    dataset = load(sample_file)
    first = await evaluate(dataset, 120)
    conv = dataset.conversations[0]
    shuffled = tuple(q.__class__(q.text, 5, q.evidence) for q in conv.questions)
    dataset.conversations[0] = conv.__class__(
        conv.sample_id, conv.speakers, conv.turns, shuffled, conv.observations, conv.summaries
    )
    second = await evaluate(dataset, 120)
    assert first.context_tokens == second.context_tokens
    assert [s.recall for s in first.pipeline] == [s.recall for s in second.pipeline]


async def test_observations_are_a_separate_figure(sample_file: Path) -> None:
    """With notes the run scores every question twice; the report names both figures."""
    dataset = load(sample_file)
    run = await evaluate(dataset, 400, notes=True)
    assert len(run.with_notes) == len(run.pipeline) == 4
    data = report(dataset, run, 400, None)
    assert set(data["with_observations"]) == set(data["recall"])


def test_the_command_prints_the_report_as_json(sample_file: Path) -> None:
    """``prefrontal eval locomo PATH --format json`` has the figures and both baselines."""
    result = CliRunner().invoke(
        app, ["eval", "locomo", str(sample_file), "--budget", "300", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["budget"] == 300 and data["questions"] == 4
    assert {"1", "2", "3", "4", "5", "overall_1_4", "overall_1_5"} <= set(data["recall"])
    assert "overall_1_4" in data["baselines"]["recency"]
    assert "overall_1_4" in data["baselines"]["bm25"]
    assert data["seconds"] >= 0


def test_the_command_prints_a_table(sample_file: Path) -> None:
    """The default format is a table with one row per category."""
    result = CliRunner().invoke(app, ["eval", "locomo", str(sample_file), "--budget", "300"])
    assert result.exit_code == 0, result.output
    assert "multi-hop" in result.stdout and "BM25" in result.stdout


async def test_sqlite_stores_score_like_the_in_memory_ones(
    sample_file: Path, tmp_path: Path
) -> None:
    """With ``db`` each conversation gets its own SQLite file; the figures agree."""
    dataset = load(sample_file)
    in_memory = await evaluate(dataset, 120)
    on_disk = await evaluate(dataset, 120, db=tmp_path / "eval")
    assert [s.recall for s in on_disk.pipeline] == [s.recall for s in in_memory.pipeline]
    assert (tmp_path / "eval" / "test-1.sqlite").exists()
