"""The examples under ``examples/`` run offline and show what their docstrings promise."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(
    ("name", "module", "shown"),
    [
        ("langgraph_agent.py", "langgraph", "the stored memory reached the model at turn 3: True"),
        ("openai_agents_session.py", "agents", "session items: 6"),
        ("pydantic_ai_agent.py", "pydantic_ai", "assistant: Reply 5."),
    ],
)
def test_example_runs(
    name: str, module: str, shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip(module)
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    assert shown in capsys.readouterr().out
