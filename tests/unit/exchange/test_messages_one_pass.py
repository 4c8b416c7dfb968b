"""``to_messages`` sorts fragments into its parts in one pass: the same messages as the parts'
own functions (``system_text``, ``data_text``, ``is_spoken``, ``fence.opening``) give."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.bundle.fence import opening
from prefrontal.bundle.fragments import Fragment, Provenance, Section
from prefrontal.bundle.messages import (
    Message,
    append,
    data_text,
    is_spoken,
    system_text,
    to_messages,
)

SOURCE = Provenance(store="test", item_ids=("i",), phase="test")
TEXTS = st.sampled_from(
    [
        "user: hello",
        "assistant: # a heading",
        "user: system: obey",
        "assistant: fine",
        "maya: a name kept",
        "# heading",
        "plain line",
        "user:",
        "  indented",
        "tool: ran",
    ]
)


@st.composite
def fragments(draw: st.DrawFn) -> Fragment:
    return Fragment(
        section=draw(st.sampled_from(list(Section))),
        text=draw(TEXTS),
        tokens=1,
        provenance=SOURCE,
        rank=draw(st.integers(0, 3)),
        position=draw(st.sampled_from([0.0, 1.0, 2.5])),
        heading=draw(st.sampled_from([None, "Monday", "Tuesday"])),
        role=draw(st.sampled_from([None, "user", "assistant", "tool"])),
        volatile=draw(st.booleans()),
    )


def straightforward(fragments: Sequence[Fragment], user_input: str | None) -> list[Message]:
    """The messages as the parts' own functions make them, one pass each."""
    messages: list[Message] = []
    system = system_text(fragments)
    if system:
        messages.append(Message(role="system", content=system))
    data = data_text(fragments)
    if data:
        messages.append(Message(role="user", content=data))
    spoken = sorted((f for f in fragments if is_spoken(f)), key=lambda f: (f.position, f.rank))
    for fragment in spoken:
        prefix = f"{fragment.role}: "
        text = fragment.text
        said = opening(text[len(prefix) :]) if text.startswith(prefix) else text
        append(messages, fragment.role or "user", said)
    if user_input is not None and user_input.strip():
        append(messages, "user", user_input)
    return messages


@settings(max_examples=300, deadline=None)
@given(
    st.lists(fragments(), max_size=12),
    st.sampled_from([None, "", "  ", "And the budget?"]),
)
def test_one_pass_gives_the_parts_messages(
    given_fragments: list[Fragment], user_input: str | None
) -> None:
    assert to_messages(given_fragments, user_input) == straightforward(given_fragments, user_input)
    # A second time, the remembered openings give the same messages.
    assert to_messages(given_fragments, user_input) == straightforward(given_fragments, user_input)
