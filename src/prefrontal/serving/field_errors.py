"""What is wrong with a field, in words a person or a model can act on.

pydantic's messages are mostly plain (``Input should be a valid integer``),
but a failed pattern quotes the regular expression; these say what the
pattern means instead. Shared by the HTTP API and the MCP tools, so that a
field is explained alike over both. Help links are never included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from prefrontal.ids import ID_PATTERN, MAX_ID_CHARS, NON_BLANK_PATTERN

PATTERNS = {
    ID_PATTERN: f"must be an id: 1 to {MAX_ID_CHARS} characters, not only whitespace, "
    "without control characters or invisible formatting (bidi, zero-width)",
    NON_BLANK_PATTERN: "must hold some text, not only whitespace",
}


def explained(entry: Mapping[str, Any]) -> str:
    """The message of one pydantic error entry, with a pattern said in words."""
    if entry.get("type") == "string_pattern_mismatch":
        pattern = (entry.get("ctx") or {}).get("pattern")
        if pattern in PATTERNS:
            return f"String {PATTERNS[pattern]}"
    return str(entry.get("msg", ""))


def location(entry: Mapping[str, Any]) -> str:
    """Where the error is: the field's path, dotted (``tool_calls.0.name``)."""
    return ".".join(str(part) for part in entry.get("loc", ())) or "input"


def summary(errors: Sequence[Mapping[str, Any]], limit: int = 5) -> str:
    """The errors as one line: ``field: what is wrong; ...`` (at most ``limit`` of them)."""
    parts = [f"{location(e)}: {explained(e)}" for e in errors[:limit]]
    more = len(errors) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
