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
    """For each character: an id iff neither a control character nor whitespace; text alike."""
    for code in range(ord(character), ord(character) + 0x100):
        char = chr(code)
        control = unicodedata.category(char) == "Cc"
        assert is_valid_id(char) == (not control and not char.isspace()), f"U+{code:04X}"
        assert _text_ok(char) == (not is_blank(char)), f"U+{code:04X}"


def test_an_id_may_hold_spaces_but_not_only_spaces() -> None:
    assert is_valid_id(" maya ") and not is_valid_id("   ") and not is_valid_id("")
    assert is_valid_id("x" * 256) and not is_valid_id("x" * 257)
    assert not is_valid_id(256)


def test_a_bad_id_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match="item_id must be non-empty text"):
        checked_id("item_id", "a\tb")


def test_a_tenant_follows_the_rule() -> None:
    with pytest.raises(ValidationError, match="user_id"):
        Tenant(agent_id="atlas", user_id=" ")
