"""A context as chat messages, in the shape chat APIs accept.

:func:`to_messages` gives:

1. **one system message, first** (some APIs refuse a system message
   anywhere else): every fragment but the spoken conversation, section by
   section in the fixed order, so the part that rarely changes (identity
   and rules) opens the prompt; fragments that change every turn whatever
   the stores hold (``volatile``: the clock) come last, after a blank line,
   so that providers' prompt caches can reuse everything before them;
2. **the recent conversation**, one message per turn with its role
   (``user`` or ``assistant``), messages of one role in a row joined into
   one; a line's ``user:`` or ``assistant:`` prefix is left out (a
   speaker's name is kept);
3. with ``user_input``, **the current user message, last** (joined to a
   user message just before it).

No text holds an internal id: ids live in each fragment's provenance.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from prefrontal.bundle.fragments import Fragment, Section
from prefrontal.bundle.render import SECTION_SEPARATOR, render_sections

SPOKEN = ("user", "assistant")


class Message(TypedDict):
    """One chat message: ``role`` is ``system``, ``user`` or ``assistant``."""

    role: str
    content: str


def is_spoken(fragment: Fragment) -> bool:
    """True for a conversation turn said by the user or the assistant."""
    return fragment.section is Section.CONVERSATION and fragment.role in SPOKEN


def system_text(fragments: Sequence[Fragment]) -> str:
    """Everything but the spoken turns: stable sections first, volatile fragments last."""
    stable = [f for f in fragments if not is_spoken(f) and not f.volatile]
    changing = [f.text for f in fragments if not is_spoken(f) and f.volatile]
    parts = [render_sections(stable)] if stable else []
    if changing:
        parts.append("\n".join(changing))
    return SECTION_SEPARATOR.join(parts)


def spoken_text(fragment: Fragment) -> str:
    """A turn's text without a ``role:`` prefix that only repeats its role."""
    prefix = f"{fragment.role}: "
    return fragment.text[len(prefix) :] if fragment.text.startswith(prefix) else fragment.text


def append(messages: list[Message], role: str, content: str) -> None:
    """Add a message, joining it to the last one when that has the same role."""
    if messages and messages[-1]["role"] == role and role != "system":
        messages[-1] = Message(role=role, content=f"{messages[-1]['content']}\n\n{content}")
    else:
        messages.append(Message(role=role, content=content))


def to_messages(fragments: Sequence[Fragment], user_input: str | None = None) -> list[Message]:
    """The fragments as chat messages (see the module for the shape)."""
    messages: list[Message] = []
    system = system_text(fragments)
    if system:
        messages.append(Message(role="system", content=system))
    spoken = sorted((f for f in fragments if is_spoken(f)), key=lambda f: (f.position, f.rank))
    for fragment in spoken:
        append(messages, fragment.role or "user", spoken_text(fragment))
    if user_input is not None and user_input.strip():
        append(messages, "user", user_input)
    return messages
