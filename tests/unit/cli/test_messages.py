"""Messages the command line prints keep their literal text (no terminal markup eats it)."""

from __future__ import annotations

import importlib.util

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from prefrontal.cli import app
from prefrontal.cli.errors import invalid_fields, one_line
from prefrontal.phases.consciousness import governance_text, identity_text
from prefrontal.stores.consciousness import AgentProfile, Governance
from prefrontal.turn import TurnRequest


def test_the_viewer_names_its_extra_with_brackets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without FastAPI, ``prefrontal ui`` prints ``pip install 'prefrontal[server]'`` whole."""
    real = importlib.util.find_spec

    def without_fastapi(name: str, *args: object) -> object:
        return None if name == "fastapi" else real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", without_fastapi)
    result = CliRunner().invoke(app, ["ui", "--db", ":memory:"])
    assert result.exit_code == 2
    assert "pip install 'prefrontal[server]'" in result.output


def test_a_validation_error_is_one_line_per_field() -> None:
    """A pydantic error reads as ``field: message`` pairs, without its documentation link."""
    with pytest.raises(ValidationError) as raised:
        TurnRequest.model_validate({"agent_id": "a", "user_id": "", "session_id": "s"})
    line = one_line(raised.value)
    assert line == invalid_fields(raised.value)
    assert "user_id: String should have at least 1 character" in line
    assert "user_input: Field required" in line
    assert "errors.pydantic.dev" not in line
    assert "\n" not in line


def test_listed_rules_read_without_stray_punctuation() -> None:
    """Entries that end in a full stop are joined without ``.;`` between them."""
    profile = AgentProfile(
        agent_id="atlas",
        name="Atlas",
        values=("Say what you do not know.", "Protect the user's time"),
        governance=Governance(safety_policies=("Never share credentials.",)),
    )
    assert "Values: Say what you do not know. Protect the user's time" in identity_text(profile)
    assert ".;" not in identity_text(profile)
    assert governance_text(profile) == "Safety: Never share credentials."
