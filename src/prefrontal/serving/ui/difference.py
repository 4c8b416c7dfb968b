"""Two turns as a difference: their texts side by side, removed and added words marked.

Pure functions, no HTML (the compare page draws ``removed`` pieces as
``<del>``, ``added`` ones as ``<ins>``). Texts are compared line by line
with :mod:`difflib`, and the lines that changed word by word, so a long
system message that differs in one word shows that word, not the message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal

from prefrontal.serving.ui.views import fragments
from prefrontal.traces.models import TurnTrace

Kind = Literal["same", "removed", "added"]
Piece = tuple[str, Kind]
_TOKENS = re.compile(r"\s+|[^\s]+")


@dataclass(frozen=True)
class SideBySide:
    """One text of turn A beside the same text of turn B."""

    label: str
    a: tuple[Piece, ...]
    """A's text: pieces ``same`` or ``removed`` (not in B)."""
    b: tuple[Piece, ...]
    """B's text: pieces ``same`` or ``added`` (not in A)."""
    a_missing: str | None = None
    """Why A has no such text (``None`` when it has one)."""
    b_missing: str | None = None

    @property
    def changed(self) -> bool:
        """True when the two texts differ."""
        return any(kind != "same" for _, kind in (*self.a, *self.b))


def _merged(pieces: list[Piece]) -> tuple[Piece, ...]:
    """Adjacent pieces of a kind joined; a space alone between two changes joins them."""
    kept = [p for p in pieces if p[0]]
    for n in range(1, len(kept) - 1):
        text, kind = kept[n]
        before, after = kept[n - 1][1], kept[n + 1][1]
        if kind == "same" and text.isspace() and before == after != "same":
            kept[n] = (text, before)
    merged: list[Piece] = []
    for text, kind in kept:
        if merged and merged[-1][1] == kind:
            merged[-1] = (merged[-1][0] + text, kind)
        else:
            merged.append((text, kind))
    return tuple(merged)


def _by_words(a: str, b: str, left: list[Piece], right: list[Piece]) -> None:
    ta, tb = _TOKENS.findall(a), _TOKENS.findall(b)
    for op, i1, i2, j1, j2 in SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if op == "equal":
            left.append(("".join(ta[i1:i2]), "same"))
            right.append(("".join(tb[j1:j2]), "same"))
            continue
        left.append(("".join(ta[i1:i2]), "removed"))
        right.append(("".join(tb[j1:j2]), "added"))


def text_diff(a: str, b: str) -> tuple[tuple[Piece, ...], tuple[Piece, ...]]:
    """``a`` and ``b`` as pieces: what both hold, what only ``a`` holds, what only ``b`` does.

    Joining either side's pieces gives that text back exactly.
    """
    left: list[Piece] = []
    right: list[Piece] = []
    la, lb = a.splitlines(keepends=True), b.splitlines(keepends=True)
    for op, i1, i2, j1, j2 in SequenceMatcher(None, la, lb, autojunk=False).get_opcodes():
        old, new = "".join(la[i1:i2]), "".join(lb[j1:j2])
        if op == "equal":
            left.append((old, "same"))
            right.append((new, "same"))
        elif op == "replace":
            _by_words(old, new, left, right)
        else:
            left.append((old, "removed"))
            right.append((new, "added"))
    return _merged(left), _merged(right)


def _side(label: str, a: str | None, b: str | None, missing: str) -> SideBySide:
    pieces_a, pieces_b = text_diff(a or "", b or "")
    return SideBySide(
        label,
        pieces_a,
        pieces_b,
        a_missing=missing if a is None else None,
        b_missing=missing if b is None else None,
    )


def _reply(trace: TurnTrace) -> str | None:
    return None if trace.ending is None else trace.ending.reply


def said(a: TurnTrace, b: TurnTrace) -> list[SideBySide]:
    """The user's messages and the replies of ``a`` and ``b``, side by side."""
    return [
        _side("User said", a.user_input, b.user_input, "not recorded, or forgotten since"),
        _side("Reply", _reply(a), _reply(b), "the turn has not ended"),
    ]


def sent(a: TurnTrace, b: TurnTrace) -> list[SideBySide]:
    """Each message of the contexts as sent, paired by position, side by side.

    Empty when either turn did not record its context.
    """
    if not a.sent or not b.sent:
        return []
    pairs = []
    for n in range(max(len(a.sent), len(b.sent))):
        ma = a.sent[n] if n < len(a.sent) else None
        mb = b.sent[n] if n < len(b.sent) else None
        message = ma if ma is not None else mb
        label = f"Message {n + 1} ({'' if message is None else message.role})"
        pairs.append(
            _side(
                label,
                None if ma is None else ma.content,
                None if mb is None else mb.content,
                "no such message",
            )
        )
    return pairs


@dataclass(frozen=True)
class FragmentRow:
    """A fragment of the bundle (a section's items) in A, in B, or in both."""

    section: str
    items: str
    tokens_a: int | None
    tokens_b: int | None

    @property
    def kind(self) -> Kind:
        """``removed``: only in A; ``added``: only in B; ``same``: in both."""
        if self.tokens_b is None:
            return "removed"
        if self.tokens_a is None:
            return "added"
        return "same"


def _keyed(trace: TurnTrace) -> dict[tuple[str, str], dict[str, Any]]:
    keyed: dict[tuple[str, str], dict[str, Any]] = {}
    for f in fragments(trace):
        key = (str(f.get("section", "")), ", ".join(str(i) for i in f.get("item_ids", [])))
        keyed.setdefault(key, f)
    return keyed


def fragment_rows(a: TurnTrace, b: TurnTrace) -> list[FragmentRow]:
    """Every fragment of either bundle, A's order first, each with its tokens in A and in B."""
    in_a, in_b = _keyed(a), _keyed(b)
    keys = list(in_a) + [k for k in in_b if k not in in_a]

    def tokens(found: dict[str, Any] | None) -> int | None:
        return None if found is None else int(found.get("tokens", 0))

    return [
        FragmentRow(section, items, tokens(in_a.get(key)), tokens(in_b.get(key)))
        for key in keys
        for section, items in (key,)
    ]
