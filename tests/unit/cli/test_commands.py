"""The commands in process, on one shared in-memory store set (no SQLite needed)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from prefrontal import Stores, TurnTrace
from prefrontal.cli import app
from prefrontal.cli import stores as cli_stores
from prefrontal.cli.app import COMMANDS, load_command
from prefrontal.cli.trace_command import when

RUNNER = CliRunner()
WIDE = {"COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"}


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> Stores:
    """Every command of the test opens the same in-memory stores."""
    stores = Stores.in_memory()
    monkeypatch.setattr(cli_stores, "build", lambda db, create=True: stores)
    return stores


def invoke(*args: str) -> str:
    result = RUNNER.invoke(app, list(args), env=WIDE)
    assert result.exit_code == 0, result.output
    return result.stdout


def turn_ids(*messages: str) -> list[str]:
    return [json.loads(invoke("turn", m, "--json"))["trace"]["turn_id"] for m in messages]


def test_trace_list_filters_and_json(shared: Stores) -> None:
    """``--json`` lists the models; ``--parent`` lists the turns that followed; ``--limit`` cuts."""
    first, second, third = turn_ids("one", "two", "three")
    listed = json.loads(invoke("trace", "list", "--json"))
    assert [t["turn_id"] for t in listed] == [third, second, first]
    assert [
        t["turn_id"] for t in json.loads(invoke("trace", "list", "--json", "--limit", "1"))
    ] == [third]
    children = json.loads(invoke("trace", "list", "--json", "--parent", first))
    assert [t["turn_id"] for t in children] == [second]
    assert json.loads(invoke("trace", "list", "--json", "--user", "nobody")) == []
    assert json.loads(invoke("trace", "list", "--json", "--status", "degraded")) == []
    recent = json.loads(invoke("trace", "list", "--json", "--since", "1h"))
    assert len(recent) == 3


def test_trace_list_searches_the_words_of_a_message(shared: Stores) -> None:
    """``--search`` lists the turns whose message holds every word given, and no other."""
    first, second = turn_ids("the lighthouse keeper", "the harbour master")
    found = json.loads(invoke("trace", "list", "--json", "--search", "Lighthouse"))
    assert [t["turn_id"] for t in found] == [first]
    found = json.loads(invoke("trace", "list", "--json", "--search", "harbour"))
    assert [t["turn_id"] for t in found] == [second]
    assert json.loads(invoke("trace", "list", "--json", "--search", "harbour keeper")) == []


def test_trace_show_json_is_the_model_and_names_what_followed(shared: Stores) -> None:
    """``show --json`` prints the TurnTrace; the text view says which turns followed."""
    first, second = turn_ids("one", "two")
    trace = TurnTrace.model_validate_json(invoke("trace", "show", first, "--json"))
    assert trace.turn_id == first
    assert f"followed by: {second}" in invoke("trace", "show", first)
    assert f"turn                   {second}" in invoke("trace", "show", "latest")


def test_trace_show_of_an_unknown_turn_exits_1(shared: Stores) -> None:
    """An unknown id exits with status 1 and says which id it could not find."""
    result = RUNNER.invoke(app, ["trace", "show", "01NOSUCHTURN"], env=WIDE)
    assert result.exit_code == 1
    assert "no trace of turn '01NOSUCHTURN'" in result.stderr


def test_turn_rejects_a_bad_budget_with_a_message(shared: Stores) -> None:
    """A budget below the minimum fails validation with exit status 2 and a clear message."""
    result = RUNNER.invoke(app, ["turn", "hi", "--budget", "10"], env=WIDE)
    assert result.exit_code == 2
    assert "Invalid value for '--budget'" in result.stderr


def test_turn_on_memory_needs_no_database() -> None:
    """``--db :memory:`` runs a turn on fresh seeded stores and prints the bundle."""
    out = invoke("turn", "What is blocking the launch?", "--db", ":memory:")
    assert "Identity and rules (consciousness)" in out
    assert "see `prefrontal trace show" in out


def test_bench_prints_its_headline_figures_as_json() -> None:
    """``bench --json`` reports overhead, the graph/sequential ratio and the load figures."""
    out = invoke(
        "bench",
        "--turns",
        "3",
        "--rounds",
        "1",
        "--concurrent",
        "5",
        "--latency-scale",
        "0.1",
        "--json",
    )
    figures = json.loads(out)
    assert figures["median_ms"] > 0
    assert figures["sequential_ms"] > figures["graph_ms"]
    assert 0 < figures["ratio"] < 1
    assert figures["turns_per_s"] > 0


def test_bench_table() -> None:
    """``bench`` prints its figures in a table."""
    out = invoke(
        "bench", "--turns", "2", "--rounds", "1", "--concurrent", "2", "--latency-scale", "0"
    )
    assert "graph / sequential wall time" in out
    assert "turns at once: throughput" in out


def test_when_reads_iso_dates_and_durations_ago() -> None:
    """``--since``/``--until`` take ISO date-times (UTC by default) or ``30m``, ``2h``, ``7d``."""
    now = datetime(2026, 11, 20, 12, tzinfo=UTC)
    assert when("2h", now) == now - timedelta(hours=2)
    assert when("7d", now) == now - timedelta(days=7)
    assert when("2026-11-20T09:00") == datetime(2026, 11, 20, 9, tzinfo=UTC)
    assert when(None) is None
    with pytest.raises(typer.BadParameter):
        when("yesterday")


def test_log_level_is_validated() -> None:
    """An unknown ``--log-level`` is a usage error."""
    result = RUNNER.invoke(app, ["--log-level", "loud", "bench", "--turns", "1"], env=WIDE)
    assert result.exit_code == 2


def test_demo_runs_one_turn_in_memory() -> None:
    """``demo`` seeds the demo agent in memory and shows the bundle and its phases."""
    out = invoke("demo")
    assert "Context bundle" in out
    assert "finalize" in out
    assert "Timeline" in out
    assert "┬" in out


def test_turn_with_trace_shows_the_timeline_after_the_bundle() -> None:
    """``turn --trace`` prints the bundle, then the trace view with its timeline."""
    out = invoke("turn", "Status?", "--db", ":memory:", "--trace")
    assert out.index("Identity and rules") < out.index("Timeline")
    assert "Budget: " in out


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        ('{"not": "a list"}', [], "expected a list of conversations"),
        ("[]", ["--embedder", "nope"], "unknown embedder 'nope'"),
    ],
)
def test_eval_locomo_reports_bad_input_in_one_line(
    tmp_path: Path, content: str, extra: list[str], message: str
) -> None:
    """A malformed data file or an unknown embedder exits 2 with one error line, no traceback."""
    path = tmp_path / "data.json"
    path.write_text(content, encoding="utf-8")
    # Wide enough that no temporary path, however deep, wraps the one line.
    env = {**WIDE, "COLUMNS": "1000"}
    result = RUNNER.invoke(app, ["eval", "locomo", str(path), *extra], env=env)
    assert result.exit_code == 2
    assert result.output.startswith("error: ")
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_listed_summary_is_the_commands_own(name: str) -> None:
    """``prefrontal --help`` lists each command by the summary the loaded command itself gives."""
    loaded = load_command(name)
    own = " ".join((loaded.help or "").split("\n\n")[0].split())
    assert COMMANDS[name][2] == own
