"""The benchmarks page stays short, opens with its summary table and names no scratch path."""

from __future__ import annotations

import re

from tests.docs.code_blocks import DOCS, blocks_of

PAGE = DOCS / "performance.md"
MAX_LINES = 400
SCRATCH_PARTS = {"tmp", "base", "old", "work"}
"""Path parts of temporary folders and scratch checkouts, which a reader does not have."""


def scratch_paths(command: str) -> list[str]:
    """The arguments of ``command`` that name a temporary path or a scratch checkout."""
    found = []
    for word in command.split():
        if word.startswith("-") or ("/" not in word and word.lower() not in SCRATCH_PARTS):
            continue
        parts = {part.lower() for part in re.split(r"[/=]", word.strip("'\"")) if part}
        if parts & SCRATCH_PARTS or word.startswith("/work"):
            found.append(word)
    return found


def test_the_page_is_at_most_400_lines() -> None:
    """The benchmarks page holds at most 400 lines, summary and detail together."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"{len(lines)} lines"


def test_the_page_opens_with_one_summary_table() -> None:
    """The first section is the summary table, which names the machine's two cores above it."""
    text = PAGE.read_text(encoding="utf-8")
    first = text.split("\n## ", 2)
    assert first[1].startswith("What to expect")
    assert "two-core" in first[0]
    assert first[1].count("\n| what | figure | command") == 1


def test_no_command_names_a_scratch_path() -> None:
    """No command of the page names ``/tmp``, ``/work`` or a checkout called ``base`` or ``old``."""
    commands = [block for block in blocks_of("performance.md") if block.language == "bash"]
    assert commands
    named = {block.label: scratch_paths(block.source) for block in commands}
    assert not {label: paths for label, paths in named.items() if paths}
    assert not re.search(r"/tmp/|/work/", PAGE.read_text(encoding="utf-8"))


def test_scratch_paths_are_recognised() -> None:
    """The check finds the paths it is for and leaves placeholders and flags alone."""
    assert scratch_paths("x --against /tmp/base --rounds 1") == ["/tmp/base"]
    assert scratch_paths("x --base base/src") == ["base/src"]
    assert scratch_paths("PYTHONPATH=OLD/src python -m y") == ["PYTHONPATH=OLD/src"]
    assert scratch_paths("x --base BEFORE/src --store STORE --db .benchmarks/a.db") == []
