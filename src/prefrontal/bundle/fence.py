"""Text that users, tools, extractors or other users wrote, made safe to render as data.

The rendered context's structure is lines prefrontal writes: a section's
``## Heading``, a group's ``[header]``, and one line per fragment that starts
with prefrontal's own label or with the fragment's text. :func:`as_data`
turns any untrusted text into something that cannot take part in it, nor
in the chat template a model's server wraps it in:

- **one line**: every line break (LF, CR, CRLF, VT, FF, the information
  separators, NEL, U+2028, U+2029) becomes :data:`BREAK_MARK` (blank lines
  are left out), so stored text can never start a line of the context,
  hence never open or close a section, forge a group header or a
  transcript turn, or break out of its section. The break mark cannot be
  forged: the mark itself and the signs a reader takes for it
  (:data:`BREAK_LOOKALIKES`) in the text are line breaks too, so whatever
  follows one is checked like any line;
- **nothing invisible**: default-ignorable code points, format characters,
  controls and surrogates are removed everywhere in the text
  (:mod:`prefrontal.bundle.invisible`), tabs become spaces, so what the
  model reads is what a person reads;
- **no structure at a line's start**: each of the original lines whose
  start, past any run of spacing (Unicode white space of any kind and
  length, stray combining marks), reads after compatibility normalisation
  (NFKC, which folds full-width and other look-alike forms of ``#``, ``<``,
  ``[`` ...) as a heading, group header, tag, fence, quote, rule or table,
  or as a role's label, is escaped with a backslash (every ``#`` of a
  heading is), so it reads as text even where a renderer treats the break
  mark as a new line. A label is a role's name (:data:`ROLE_NAMES`) among
  the first four words before a colon or ``>`` (``system:``, ``System
  prompt:``, ``**System:**``, ``- user:``, ``Note to assistant:``), or
  alone on its line (``ASSISTANT``), past any decoration; the words are
  compared by TR39 skeleton in any case (:mod:`prefrontal.bundle.confusables`:
  Cyrillic, Greek, Cherokee, Lisu, small capitals, mathematical letters);
- **no chat-template tokens**: the control tokens of every widely used
  chat template (ChatML, Llama 2 and 3, Gemma, Mistral, DeepSeek, Phi,
  Cohere, harmony ...; :mod:`prefrontal.bundle.template_tokens`) are
  broken by a backslash (``<\\|im_start|\\>``, ``<\\start_of_turn>``,
  ``[\\INST]``), anywhere in the text.

Pure and deterministic (same text, same result); text with none of these
(the common case: one line of printable ASCII that starts with a word)
comes back unchanged, at no token cost.
"""

from __future__ import annotations

import re
import unicodedata

from prefrontal.bundle.confusables import casings, fold
from prefrontal.bundle.invisible import SPACING, visible
from prefrontal.bundle.template_tokens import CONTROL_TOKEN, break_tokens, might_hold_tokens
from prefrontal.forgetting import remembered

__all__ = [
    "BREAK_LOOKALIKES",
    "BREAK_MARK",
    "LINE_BREAKS",
    "ROLE_NAMES",
    "as_data",
    "is_data_line",
    "opening",
    "speaker_label",
    "starts_structure",
]

BREAK_MARK = " ⏎ "
"""What a line break in untrusted text is rendered as."""

LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
"""Every character a model or renderer may read as the end of a line."""

BREAK_LOOKALIKES = "⏎↵↲↩⤶⮐⮑␤␊␍"
"""The break mark's sign and those a reader takes for it: in untrusted text, line breaks."""

INVISIBLE_TEXT = "(invisible text)"
"""What text made only of invisible characters is rendered as (a fragment is never empty)."""

_TABLE: dict[int, str | None] = {ord(c): "\n" for c in LINE_BREAKS}
_TABLE[ord("\t")] = " "
_FORGED_BREAK = re.compile(f" ?[{BREAK_LOOKALIKES}] ?")
"""A break mark (or look-alike) in untrusted text, with the spaces the fence's own has."""

_STRUCTURE = re.compile(
    r"""[#\[\]<>`|{}]            # heading, group header, tag, fence, quote, table, template
      | ~~~ | --- | === | \*\*\* | ___ | \+\+\+    # fences and rules
    """,
    re.VERBOSE,
)
"""What a line may not start with: it would read as prefrontal's (or a prompt's) structure."""

ROLE_NAMES = frozenset(
    {"system", "developer", "user", "assistant", "tool", "function", "ipython", "human", "ai"}
    | {"model", "bot", "chatbot", "agent", "owner", "operator", "admin", "administrator"}
)
"""Chat roles, and the authorities a prompt names: a line of data may not start with their label."""
RESERVED_SPEAKERS = frozenset({"system", "developer", "tool", "function", "ipython"})
"""Roles no stored speaker may take: a speaker of that name is rendered as ``speaker NAME``."""

_HEAD_CHARS = 48
"""How much of a line's start, past its spacing and decoration, is read for structure."""
_LABEL_WORDS = 4
"""At most this many words before a label's colon."""
_DECORATION = re.compile(r"^[\W_]+")
"""What may stand before a label's first word: ``**``, ``- ``, ``> ``, quotes, brackets."""
_LIST_NUMBER = re.compile(r"[0-9]{1,3}[.)]")
"""A list's number before a label (``1. user:``)."""
_TERMINATOR = re.compile(r"[:>]")
_WORD = re.compile(r"[^\W_]+")


def as_data(text: str, *, opens_line: bool = True) -> str:
    """``text`` as one line of data that cannot read as structure (see the module).

    ``opens_line=False`` is for text rendered after a label prefrontal wrote
    on the same line (``Maya: ``, ``Summary so far: ``): its first line
    cannot start a line of the context, so only the lines after it are
    checked for structure at their start.
    """
    if len(text) > CACHED_CHARS:
        return _unchanged_or_fenced(text, opens_line)
    return _fenced(text, opens_line)


CACHED_CHARS = 4_096
"""Texts up to this long are fenced once and remembered (so the cache holds at most
``8,192 x 4,096`` characters); longer ones, rare, are fenced every time."""


@remembered(maxsize=8_192)
def _fenced(text: str, opens_line: bool) -> str:
    return _unchanged_or_fenced(text, opens_line)


def _unchanged_or_fenced(text: str, opens_line: bool) -> str:
    if text.isascii() and text.isprintable() and not _structured_ascii(text, opens_line):
        return text
    return _fence(text, opens_line)


def _fence(text: str, opens_line: bool) -> str:
    text_lf = text.replace("\r\n", "\n")
    if not text_lf.isascii():
        text_lf = _FORGED_BREAK.sub("\n", text_lf)
    lines = visible(text_lf.translate(_TABLE)).split("\n")
    escaped = [_escaped_line(line) if k or opens_line else line for k, line in enumerate(lines)]
    fenced = break_tokens(BREAK_MARK.join(line for line in escaped if not _blank(line)))
    return fenced if fenced.strip() or not text else INVISIBLE_TEXT


def _blank(line: str) -> bool:
    spacing = SPACING.match(line)
    return not line or (spacing is not None and spacing.end() == len(line))


def _structured_ascii(text: str, opens_line: bool) -> bool:
    """True when printable ASCII ``text`` needs fencing: a structured start or a control token."""
    if might_hold_tokens(text) and CONTROL_TOKEN.search(text) is not None:
        return True
    return opens_line and starts_structure(text)


def starts_structure(line: str, *, labels: bool = True) -> bool:
    """True when ``line``, past its spacing, starts with structure or (with ``labels``) a
    role's label."""
    if line[:1].isalnum() and line[:1].isascii():
        body = line  # the common case: no spacing to look past
    else:
        spacing = SPACING.match(line)
        body = line[spacing.end() :] if spacing else line
    head = body[:_HEAD_CHARS]
    if not head.isascii():
        head = _normalized(head)
    return _STRUCTURE.match(head) is not None or (labels and _is_label(body))


def _normalized(head: str) -> str:
    """``head`` in NFKC, past the spacing NFKC may have made."""
    head = unicodedata.normalize("NFKC", head)
    spacing = SPACING.match(head)
    return head[spacing.end() :] if spacing else head


def _is_label(body: str) -> bool:
    """True when ``body`` (a line past its spacing) opens with a role's label (see the module)."""
    rest = _DECORATION.sub("", body, count=1)
    numbered = _LIST_NUMBER.match(rest)
    if numbered is not None:
        rest = rest[numbered.end() :].lstrip()
    head = rest[:_HEAD_CHARS]
    whole = len(rest) <= _HEAD_CHARS
    ascii_head = head.isascii()
    if not ascii_head:  # folded whole first: a look-alike colon folds to one
        head = fold(head)
    end = _TERMINATOR.search(head)
    if end is None and not whole:
        return False  # the common case: no terminator, more to come
    words = _WORD.findall(head[: end.start()] if end else head)
    if not 0 < len(words) <= (_LABEL_WORDS if end else 1):
        return False
    roles = _role_folds()
    return any((fold(w) if ascii_head else w) in roles for w in words)


@remembered(None, holds_text=False)
def _role_folds() -> frozenset[str]:
    return frozenset(form for name in ROLE_NAMES for form in casings(name))


@remembered(None, holds_text=False)
def _reserved_folds() -> frozenset[str]:
    return frozenset(form for name in RESERVED_SPEAKERS for form in casings(name))


def _escaped_line(line: str, *, labels: bool = True) -> str:
    """``line`` with a backslash before it (before each ``#`` of a heading) when it starts
    with structure (or, with ``labels``, a role's label); unchanged otherwise."""
    if not starts_structure(line, labels=labels):
        return line
    spacing = SPACING.match(line)
    body = line[spacing.end() :] if spacing else line
    hashes = len(body) - len(body.lstrip("#"))
    return "\\#" * hashes + body[hashes:] if hashes else "\\" + body


def opening(fenced: str) -> str:
    """Text fenced with ``opens_line=False`` made fit to open a line: its first line escaped
    when it starts with structure (for a message that drops the label it followed)."""
    first, mark, rest = fenced.partition(BREAK_MARK)
    return _escaped_line(first) + mark + rest


def is_data_line(text: str) -> bool:
    """True when ``text`` is what :func:`as_data` gives: one line, nothing to escape."""
    return as_data(text) == text


def speaker_label(name: str) -> str:
    """A speaker's name as data, to open a transcript line (``NAME: text``).

    A name whose words name a reserved role (``system``, in any case, width
    or look-alike letters) is prefixed with ``speaker `` so it cannot pass
    for one; any other name that starts with structure is escaped. A name
    that is a spoken role (``user``, ``assistant``) stays as it is: it says
    no more than prefrontal's own label for that role.

    Remembered by name (a conversation has few speakers, each named on every
    line of theirs); names longer than :data:`CACHED_CHARS` are worked out again.
    """
    if len(name) > CACHED_CHARS:
        return _speaker_label(name)
    return _remembered_speaker_label(name)


@remembered(maxsize=4_096)
def _remembered_speaker_label(name: str) -> str:
    return _speaker_label(name)


def _speaker_label(name: str) -> str:
    label = as_data(name, opens_line=False)
    words = _WORD.findall(fold(label[:_HEAD_CHARS]))
    if any(w in _reserved_folds() for w in words):
        return f"speaker {label}"
    return _escaped_line(label, labels=False)
