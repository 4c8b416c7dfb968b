"""What a valid id, piece of text and number are: one rule, for the library and both servers.

An id (of an agent, a user, a session, a turn, an item) is 1 to
:data:`MAX_ID_CHARS` characters, holds no control character (backends may
join ids with one, logs print them) nor invisible formatting character (a
bidi override such as U+202E shows ``eve\u202egnp.exe`` as
``eveexe.png``, a zero-width space makes two ids that print alike: the
Basic Multilingual Plane's format characters, Unicode category ``Cf``), and
is not only whitespace. Text a
person or a model wrote (a message, a reply, a memory, a query) must hold at
least one character that is not whitespace.

The rules are regular expressions in pydantic's annotated types, so that
the library's models, the HTTP bodies, the path parameters, the MCP tool
arguments and the OpenAPI document all state and enforce the same thing:
nothing the server lets through can be refused deeper down as a 500. The
same expressions mean the same in Rust (pydantic), Python and ECMAScript
(JSON Schema): whitespace is spelled out rather than left to ``\\s``, whose
meaning differs between them.

A number is a JSON number: ``"2000"`` and ``false`` are refused where a
number is asked for (:data:`NUMBER_ONLY`), while ``2000.0`` is the integer
2000, as JSON Schema has it.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, StringConstraints, TypeAdapter, ValidationError

MAX_ID_CHARS = 256

_CONTROL = r"\x00-\x1f\x7f-\x9f"
"""C0 controls, DEL and C1 controls."""

_FORMAT = (
    r"\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    r"\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
)
"""Every format character (Unicode category ``Cf``) of the Basic Multilingual Plane: bidi
marks, embeddings, overrides and isolates, zero-width spaces and joiners, the byte order
mark, the soft hyphen. (The patterns must mean the same in JSON Schema, whose regular
expressions read no escape past U+FFFF.)"""

_SPACE = r"\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
"""Every character Python's ``str.isspace`` or Unicode's ``White_Space`` calls whitespace."""

ID_PATTERN = rf"^[^{_CONTROL}{_FORMAT}]*[^{_CONTROL}{_FORMAT}{_SPACE}][^{_CONTROL}{_FORMAT}]*$"
"""No control nor format character anywhere, and one character at least that is not
whitespace."""

NON_BLANK_PATTERN = rf"[^{_SPACE}]"
"""Some character that is not whitespace (searched for, not matched against the whole)."""

Id = Annotated[
    str,
    StringConstraints(strict=True, min_length=1, max_length=MAX_ID_CHARS, pattern=ID_PATTERN),
]
"""An agent, user, session, turn or item id (see the module's docstring)."""


def non_blank(max_chars: int) -> StringConstraints:
    """The constraints of text of 1 to ``max_chars`` characters that is not only whitespace.

    Use it as ``Annotated[str, non_blank(N)]``.
    """
    return StringConstraints(
        strict=True, min_length=1, max_length=max_chars, pattern=NON_BLANK_PATTERN
    )


_ID: TypeAdapter[str] = TypeAdapter(Id)


def is_valid_id(value: object) -> bool:
    """Whether ``value`` is an id by the rule of :data:`Id`."""
    try:
        _ID.validate_python(value)
    except ValidationError:
        return False
    return True


def checked_id(name: str, value: Any) -> str:
    """``value`` when it is a valid id; otherwise ``ValueError`` naming ``name`` and why."""
    if not is_valid_id(value):
        raise ValueError(
            f"{name} must be non-empty text: 1 to {MAX_ID_CHARS} characters, not only "
            "whitespace, without control characters or invisible formatting (bidi, "
            "zero-width)"
        )
    return str(value)


def is_blank(text: object) -> bool:
    """Whether ``text`` is not a string or only whitespace (the rule of :func:`non_blank`)."""
    return not isinstance(text, str) or not text.strip()


def _number_only(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a number, not a string or a boolean")
    return value


NUMBER_ONLY = BeforeValidator(_number_only)
"""Refuses strings and booleans where a number is asked for.

Use it after the constraints, so that the schema shows them:
``Annotated[int, Field(ge=1), NUMBER_ONLY]``.
"""
