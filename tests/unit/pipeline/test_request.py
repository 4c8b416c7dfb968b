"""Request and configuration validation: bad input fails with a message that says what is wrong."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from prefrontal import OrchestratorConfig, TurnRequest
from prefrontal.phases import PHASES
from prefrontal.turn import MAX_INPUT_CHARS

GOOD = {"agent_id": "a", "user_id": "u", "session_id": "s", "user_input": "hello"}


@pytest.mark.parametrize("field", ["agent_id", "user_id", "session_id", "user_input"])
@pytest.mark.parametrize("value", ["", "   "])
def test_empty_ids_and_input_are_refused(field: str, value: str) -> None:
    """An empty or blank id or input is an error naming the field."""
    with pytest.raises(ValidationError, match=field):
        TurnRequest.model_validate(GOOD | {field: value})


@pytest.mark.parametrize("budget", [-1, 0, 63, 1_000_001])
def test_negative_or_absurd_budgets_are_refused(budget: int) -> None:
    """A budget below 64 or above a million tokens is an error that gives the bound."""
    bound = "greater than or equal to 64|less than or equal to 1000000"
    with pytest.raises(ValidationError, match=f"token_budget(.|\n)*({bound})"):
        TurnRequest.model_validate(GOOD | {"token_budget": budget})


@pytest.mark.parametrize("budget", ["2000", True, 2000.5])
def test_a_budget_that_is_not_a_number_is_refused(budget: object) -> None:
    """A string or a boolean is not a budget, nor is a fraction; 2000.0 is the integer 2000."""
    with pytest.raises(ValidationError, match="token_budget"):
        TurnRequest.model_validate(GOOD | {"token_budget": budget})
    assert TurnRequest.model_validate(GOOD | {"token_budget": 2000.0}).token_budget == 2000


@pytest.mark.parametrize("value", ["a\x00b", "a\nb", "\u3000", "x" * 257, "a\x85"])
def test_an_id_follows_the_one_rule(value: str) -> None:
    """Control characters, only whitespace or over 256 characters: refused in every id."""
    with pytest.raises(ValidationError, match="session_id"):
        TurnRequest.model_validate(GOOD | {"session_id": value})


def test_an_input_too_long_for_any_budget_is_refused() -> None:
    """Input longer than the maximum is refused with the limit in the message."""
    with pytest.raises(ValidationError, match=str(MAX_INPUT_CHARS)):
        TurnRequest.model_validate(GOOD | {"user_input": "x" * (MAX_INPUT_CHARS + 1)})


def test_requests_are_frozen() -> None:
    """A request is a value: it cannot be changed after validation."""
    request = TurnRequest.model_validate(GOOD)
    with pytest.raises(ValidationError):
        request.user_input = "changed"  # type: ignore[misc]


def test_unknown_fields_are_refused() -> None:
    """A misspelt field is an error, not silently ignored."""
    with pytest.raises(ValidationError, match="user_inptu"):
        TurnRequest.model_validate(GOOD | {"user_inptu": "x"})


def test_config_refuses_unknown_phases_and_bad_modes() -> None:
    """Phase budgets must name real phases; concurrency is graph or sequential."""
    with pytest.raises(ValidationError, match=r"phase_budgets_ms\.episodik"):
        OrchestratorConfig.model_validate({"phase_budgets_ms": {"episodik": 10}})
    with pytest.raises(ValidationError, match="concurrency"):
        OrchestratorConfig.model_validate({"concurrency": "threads"})


def test_config_defaults_are_the_specification() -> None:
    """4,000 tokens, 1,000 ms, graph concurrency, and the spec's phase budgets."""
    config = OrchestratorConfig()
    assert (config.total_token_budget, config.deadline_ms, config.concurrency) == (
        4_000,
        1_000,
        "graph",
    )
    budgets = {phase.name: phase.budget_ms for phase in PHASES}
    assert (budgets["episodic"], budgets["scratch_page"]) == (150, 50)
    assert config.phase_budgets_ms == {}
