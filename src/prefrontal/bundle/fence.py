"""Text that users, tools, extractors or other users wrote, made safe to render as data.

The rendered context's structure is lines prefrontal writes: a section's
``## Heading``, a group's ``[header]``, and one line per fragment that starts
with prefrontal's own label or with the fragment's text. :func:`as_data`
turns any untrusted text into something that cannot take part in it:

- **one line**: every line break (LF, CR, CRLF, VT, FF, the information
  separators, NEL, U+2028, U+2029) becomes :data:`BREAK_MARK` (blank lines
  are left out), so stored
  text can never start a line of the context, hence never open or close a
  section, forge a group header or a transcript turn, or break out of its
  section;
- **nothing invisible**: C0/C1 controls, zero-width characters, bidi
  overrides, variation selectors and Unicode tag characters are removed,
  tabs become spaces, so what the model reads is what a person reads;
- **no structure at a line's start**: each of the original lines whose
  start reads, after compatibility normalisation (NFKC, which folds
  full-width and other look-alike forms of ``#``, ``<``, ``[`` and so on),
  as a heading, group header, tag, fence, quote, rule, table or a role's
  label (``system:``, ``Assistant:``, in any case, width or Cyrillic and
  Greek look-alike letters; :data:`ROLE_NAMES`) is escaped with a
  backslash (every ``#`` of a heading is), so it reads as text even where
  a renderer treats the break mark as a new line;
- **no chat-template tokens**: ``<|`` and ``|>`` are split by a backslash,
  so ``<|im_start|>`` and its kin are plain characters.

Pure and deterministic (same text, same result); text with none of these
(the common case: one line of printable ASCII that starts with a word)
comes back unchanged, at no token cost.
"""

from __future__ import annotations

import re
import unicodedata

from prefrontal.forgetting import remembered

__all__ = ["BREAK_MARK", "as_data", "is_data_line", "speaker_label"]

BREAK_MARK = " ⏎ "
"""What a line break in untrusted text is rendered as."""

LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
"""Every character a model or renderer may read as the end of a line."""

INVISIBLE_TEXT = "(invisible text)"
"""What text made only of invisible characters is rendered as (a fragment is never empty)."""

_INVISIBLE_RANGES = (
    (0x00, 0x08),
    (0x0E, 0x1B),
    (0x1F, 0x1F),
    (0x7F, 0x84),
    (0x86, 0x9F),
    (0xAD, 0xAD),
    (0x34F, 0x34F),
    (0x61C, 0x61C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF9, 0xFFFB),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE007F),
    (0xE0100, 0xE01EF),
)
"""Controls and format characters that print nothing (or steer the text's direction)."""

_TABLE: dict[int, str | None] = {
    code: None for first, last in _INVISIBLE_RANGES for code in range(first, last + 1)
}
_TABLE.update({ord(c): "\n" for c in LINE_BREAKS})
_TABLE[ord("\t")] = " "

_STRUCTURE = re.compile(
    r"""[#\[\]<>`|{}]            # heading, group header, tag, fence, quote, table, template
      | ~~~ | --- | === | \*\*\* | ___ | \+\+\+    # fences and rules
    """,
    re.VERBOSE,
)
"""What a line may not start with: it would read as prefrontal's (or a prompt's) structure."""

ROLE_NAMES = frozenset(
    {"system", "developer", "user", "assistant", "tool", "function", "ipython", "human", "ai"}
    | {"model", "bot"}
)
"""Chat roles: a line of data may not start with one of them as a label."""
RESERVED_SPEAKERS = frozenset({"system", "developer", "tool", "function", "ipython"})
"""Roles no stored speaker may take: a speaker of that name is rendered as ``speaker NAME``."""

_HEAD_CHARS = 48
"""How much of a line's start is normalised to look for structure."""


def as_data(text: str, *, opens_line: bool = True) -> str:
    """``text`` as one line of data that cannot read as structure (see the module).

    ``opens_line=False`` is for text rendered after a label prefrontal wrote
    on the same line (``Maya: ``, ``Summary so far: ``): its first line
    cannot start a line of the context, so only the lines after it are
    checked for structure at their start.
    """
    if text.isascii() and text.isprintable() and not _structured_ascii(text, opens_line):
        return text
    if len(text) > CACHED_CHARS:
        return _fence(text, opens_line)
    return _fenced(text, opens_line)


CACHED_CHARS = 4_096
"""Texts up to this long are fenced once and remembered (so the cache holds at most
``8,192 x 4,096`` characters); longer ones, rare, are fenced every time."""


@remembered(maxsize=8_192)
def _fenced(text: str, opens_line: bool) -> str:
    return _fence(text, opens_line)


def _fence(text: str, opens_line: bool) -> str:
    lines = text.replace("\r\n", "\n").translate(_TABLE).split("\n")
    escaped = [_escaped_line(line) if k or opens_line else line for k, line in enumerate(lines)]
    fenced = BREAK_MARK.join(line for line in escaped if line.strip())
    fenced = fenced.replace("<|", "<\\|").replace("|>", "|\\>")
    return fenced if fenced.strip() or not text else INVISIBLE_TEXT


def _structured_ascii(text: str, opens_line: bool) -> bool:
    """True when printable ASCII ``text`` needs fencing: a structured start or a template token."""
    return "<|" in text or "|>" in text or (opens_line and _starts_structure(text))


_LABEL = re.compile(r"([^\W\d_]+)[ ]*:")
"""A word and a colon: a role label when the word is a role's name (:data:`ROLE_NAMES`)."""


def _starts_structure(line: str) -> bool:
    head = line.lstrip(" ")[:_HEAD_CHARS]
    if not head.isascii():
        head = unicodedata.normalize("NFKC", head).lstrip()
    if _STRUCTURE.match(head) is not None:
        return True
    label = _LABEL.match(head)
    return label is not None and _skeleton(label.group(1)) in ROLE_NAMES


def _escaped_line(line: str) -> str:
    """``line`` with a backslash before it (before each ``#`` of a heading) when it starts
    with structure; unchanged otherwise."""
    if not _starts_structure(line):
        return line
    body = line.lstrip(" ")
    hashes = len(body) - len(body.lstrip("#"))
    return "\\#" * hashes + body[hashes:] if hashes else "\\" + body


def is_data_line(text: str) -> bool:
    """True when ``text`` is what :func:`as_data` gives: one line, nothing to escape."""
    return as_data(text) == text


_SKELETON = str.maketrans(
    "аеорсухѕіјԁһӏոѵԝɡαεορτυνχιΑΕΟΡΤΥΝΧΙΜΗΚВЅІЈΒSԌ",
    "aeopcyxsijdhlnvwgaeoptuvxiaeoptynximhkbsijbsg",
)
"""Cyrillic and Greek letters that look like Latin ones, to compare a name with a role's."""


def speaker_label(name: str) -> str:
    """A speaker's name as data; one that reads as a reserved role (``system``, in any case,
    width or look-alike letters) is prefixed with ``speaker `` so it cannot pass for one."""
    label = as_data(name)
    return f"speaker {label}" if _skeleton(label.lstrip("\\")) in RESERVED_SPEAKERS else label


def _skeleton(word: str) -> str:
    """``word`` folded for comparison with a role's name: NFKC, look-alikes to Latin, casefold."""
    return unicodedata.normalize("NFKC", word).translate(_SKELETON).casefold().strip()
