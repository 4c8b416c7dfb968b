"""One rule for ids and text (``prefrontal.ids``): the regular expressions agree with Python."""

from __future__ import annotations

import unicodedata
from typing import Annotated

import pytest
from pydantic import TypeAdapter, ValidationError

from prefrontal.ids import checked_id, is_blank, is_valid_id, non_blank
from prefrontal.stores.tenancy import Tenant

TEXT: TypeAdapter[str] = TypeAdapter(Annotated[str, non_blank(100)])
CHARACTERS = [chr(code) for code in range(0x3100)]


def _text_ok(value: str) -> bool:
    try:
        TEXT.validate_python(value)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("character", CHARACTERS[::0x100], ids=lambda c: f"U+{ord(c):04X}")
def test_ids_and_text_agree_with_python_for_every_character_of_a_block(character: str) -> None:
    """For each character: an id iff neither a control character, a format character nor
    whitespace; text alike."""
    for code in range(ord(character), ord(character) + 0x100):
        char = chr(code)
        refused = unicodedata.category(char) in ("Cc", "Cf")
        assert is_valid_id(char) == (not refused and not char.isspace()), f"U+{code:04X}"
        assert _text_ok(char) == (not is_blank(char)), f"U+{code:04X}"


def test_an_id_may_hold_spaces_but_not_only_spaces() -> None:
    assert is_valid_id(" maya ") and not is_valid_id("   ") and not is_valid_id("")
    assert is_valid_id("x" * 256) and not is_valid_id("x" * 257)
    assert not is_valid_id(256)


@pytest.mark.parametrize("code", [0x202E, 0x202D, 0x2066, 0x200E, 0x061C, 0x200B, 0x200D, 0xFEFF])
def test_an_id_with_a_bidi_control_or_a_zero_width_character_is_refused(code: int) -> None:
    """``maya`` with a bidi override, mark or isolate or a zero-width character anywhere in it
    is not an id (each was accepted, and printed like another id)."""
    for value in (f"maya{chr(code)}", f"{chr(code)}maya", f"ma{chr(code)}ya", chr(code)):
        assert not is_valid_id(value), value
    with pytest.raises(ValidationError, match="user_id"):
        Tenant(agent_id="atlas", user_id=f"eve{chr(code)}gnp.exe")


def test_every_format_character_of_the_basic_plane_is_refused() -> None:
    """The pattern refuses all of the Basic Multilingual Plane's format characters (``Cf``)."""
    for code in range(0x3100, 0x10000):
        char = chr(code)
        if unicodedata.category(char) == "Cf":
            assert not is_valid_id(f"a{char}b"), f"U+{code:04X}"


def test_a_bad_id_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match="item_id must be non-empty text"):
        checked_id("item_id", "a\tb")


def test_a_tenant_follows_the_rule() -> None:
    with pytest.raises(ValidationError, match="user_id"):
        Tenant(agent_id="atlas", user_id=" ")
