"""The code blocks of the documentation site, and how each runs.

The pages are the ones the site's navigation (``mkdocs.yml``) lists. In each
page, in order:

- a ```` ```python ```` block is Python, run alone in a namespace of its own,
  with top-level ``await`` allowed, as a reader pastes it into
  ``python -m asyncio``; a block preceded by ``<!-- test: continues -->``
  runs in the namespace of the block before it instead (it uses what that
  one defined, as a reader pastes both into one session);
- a ```` ```bash ```` block of the tutorial or a how-to guide is shell, run
  with ``bash -euo pipefail`` in the page's working directory (holding a
  copy of the checkout's ``examples/``, as a reader's checkout does) with
  the project's ``prefrontal`` and ``python`` on ``PATH`` (elsewhere, such as the benchmark
  commands, it is shown, not run);
- a block of any other language (``py`` for a fragment that is not whole,
  ``text``, ``toml``, ``json``, ``console`` output) is shown, not run.

A block preceded by ``<!-- test: skip REASON -->`` is not run, and counted
as skipped with its reason; one preceded by ``<!-- test: file NAME -->`` is
written to ``NAME`` in the page's working directory instead of being run
(a configuration file a later block reads).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
RUN_SECTIONS = ("Tutorial", "How-to guides")
CONTINUES = "continues"
_FENCE = re.compile(
    r"(?:<!-- test: (?P<directive>skip|file|continues)(?: (?P<argument>[^>]*?))? -->\s*\n)?"
    r"^(?P<indent>[ ]*)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ ]*$",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """One fenced block of a page: its language, text, line and what the test does with it."""

    page: str
    line: int
    language: str
    source: str
    directive: str | None = None
    argument: str = ""
    guide: bool = False
    """The page is the tutorial or a how-to guide, whose shell blocks run too."""

    @property
    def runs(self) -> bool:
        """True when the test runs this block (Python, or a guide's shell; not skipped)."""
        if self.directive not in (None, CONTINUES):
            return False
        return self.language == "python" or (self.guide and self.language == "bash")

    @property
    def continues(self) -> bool:
        """True when the block runs in the namespace of the block before it."""
        return self.directive == CONTINUES

    @property
    def label(self) -> str:
        """``page:line``, for test ids and failures."""
        return f"{self.page}:{self.line}"


@functools.cache
def site_pages() -> dict[str, str | None]:
    """Every page (relative to ``docs/``) the site's navigation lists, with its section."""
    pages: dict[str, str | None] = {}
    section: str | None = None
    for line in (ROOT / "mkdocs.yml").read_text(encoding="utf-8").splitlines():
        top = re.match(r"^  - ([^:]+):\s*(\S+\.md)?\s*$", line)
        if top:
            section = top.group(1) if top.group(2) is None else None
            if top.group(2):
                pages[top.group(2)] = None
            continue
        entry = re.match(r"^\s+- [^:]+:\s*(\S+\.md)\s*$", line)
        if entry:
            pages[entry.group(1)] = section
    return pages


def pages_to_run() -> list[str]:
    """The pages with a block to run, in the site's order."""
    return [page for page in site_pages() if any(block.runs for block in blocks_of(page))]


def blocks_of(page: str) -> list[CodeBlock]:
    """Every fenced block of ``page``, in order."""
    guide = site_pages().get(page) in RUN_SECTIONS
    text = (DOCS / page).read_text(encoding="utf-8")
    blocks = []
    for match in _FENCE.finditer(text):
        indent = len(match.group("indent"))
        body = "\n".join(line[indent:] for line in match.group("body").splitlines())
        blocks.append(
            CodeBlock(
                page=page,
                line=text.count("\n", 0, match.start("lang")) + 1,
                language=match.group("lang") or "text",
                source=body + "\n",
                directive=match.group("directive"),
                argument=(match.group("argument") or "").strip(),
                guide=guide,
            )
        )
    return blocks


def summary() -> str:
    """How many blocks the tested pages hold, run and skip (``python -m tests.docs.code_blocks``)."""
    pages = list(site_pages())
    blocks = [block for page in pages for block in blocks_of(page)]
    run = [block for block in blocks if block.runs]
    guides = [block for block in run if block.guide]
    skipped = [block for block in blocks if block.directive == "skip"]
    python = [block for block in run if block.language == "python"]
    lines = [
        f"{len(pages)} pages, {len(blocks)} code blocks: {len(run)} run as tests "
        f"({len(guides)} of them in the tutorial and how-to guides, "
        f"on {len({block.page for block in run})} pages); "
        f"{len(python)} Python blocks, {sum(not b.continues for b in python)} of them alone "
        f"and {sum(b.continues for b in python)} continuing the block before"
    ]
    lines += [f"  skipped {block.label}: {block.argument}" for block in skipped]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary())
