"""docs/getting-started.md shows the whole agent loop in at most 25 lines (test_docs runs it)."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).parents[3] / "docs" / "getting-started.md"


def loop_example() -> str:
    """The code block under the page's ``## The agent loop`` heading."""
    section = PAGE.read_text(encoding="utf-8").split("## The agent loop", 1)[1]
    found = re.search(r"^```python\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert found is not None
    return found.group(1)


def test_the_agent_loop_fits_in_twenty_five_lines() -> None:
    """The example starts a turn, calls a stand-in model and ends the turn, in 25 lines or fewer."""
    code = loop_example()
    assert len(code.splitlines()) <= 25
    for call in ("start_turn(", "def model(", "end_turn("):
        assert call in code
