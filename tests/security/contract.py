"""The rendering contract as one check: what a test asserts of every bundle whatever the stores hold."""

from __future__ import annotations

import unicodedata
from itertools import pairwise

from prefrontal.budgets.tokens import default_counter
from prefrontal.bundle.fence import BREAK_MARK, LINE_BREAKS
from prefrontal.bundle.fragments import SECTION_ORDER, Section
from prefrontal.bundle.messages import Message
from prefrontal.bundle.models import ContextBundle
from tests.security.templates import unbroken

INVISIBLE: tuple[str, ...] = ("\u200b", "\u200d", "\u2060", "\ufeff", "\u202e", "\u202d", "\t")
INVISIBLE += ("\U000e0073", "\U0001bca0", "\U0001bca3", "\U00016fe4", "\u3164", "\u2066", "\u00ad")
"""Characters no rendered context may hold (a sample of what the fence removes)."""
STRUCTURE_STARTS = ("#", "[", "<", ">", "`", "|", "{", "~~~", "---", "===")
"""What no line of data may start with, past its spacing and in NFKC."""


def forged_starts(text: str) -> list[str]:
    """The pieces of a fragment's ``text`` after a break mark that start with structure."""
    heads = (unicodedata.normalize("NFKC", p.lstrip()).lstrip() for p in text.split(BREAK_MARK))
    return [head for k, head in enumerate(heads) if k and head.startswith(STRUCTURE_STARTS)]


def check_structure(bundle: ContextBundle) -> None:
    """The text's sections, headers and lines, and the messages' roles, are prefrontal's own."""
    text = bundle.text
    lines = text.split("\n")
    present = [s for s in SECTION_ORDER if bundle.section(s)]
    assert [line for line in lines if line.startswith("#")] == [f"## {s.heading}" for s in present]
    groups = {f"[{f.heading}]" for f in bundle.fragments if f.heading}
    assert all(line in groups for line in lines if line.startswith("["))
    assert not [c for c in LINE_BREAKS if c != "\n" and c in text]
    assert not [c for c in INVISIBLE if c in text]
    for fragment in bundle.fragments:
        if fragment.section is not Section.CONSCIOUSNESS:
            assert "\n" not in fragment.text, fragment.text
            assert not fragment.text.lstrip().startswith(("#", "<", "`", "~~~")), fragment.text
            assert not forged_starts(fragment.text), fragment.text
            assert not unbroken(fragment.text), fragment.text
    assert bundle.total_tokens <= bundle.budget
    assert default_counter().count(text) == bundle.total_tokens


def check_messages(messages: list[Message], system: str) -> None:
    """One system message, first, exactly ``system``; then user and assistant turns alternating."""
    assert messages[0] == {"role": "system", "content": system}
    roles = [m["role"] for m in messages[1:]]
    assert set(roles) <= {"user", "assistant"}
    assert all(a != b for a, b in pairwise(roles))


def delivered(messages: list[Message], marker: str) -> bool:
    """True when ``marker`` reaches the model as data: outside the system message."""
    return (
        any(marker in m["content"] for m in messages[1:]) and marker not in messages[0]["content"]
    )
