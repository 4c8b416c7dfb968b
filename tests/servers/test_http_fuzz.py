"""schemathesis against the HTTP API in process: every check, a fixed seed, bounded examples.

The API is generated from its own OpenAPI document: bodies, paths and
queries that fit it (each must be accepted or answered as documented, never
with a 500) and that do not (each must be refused with a documented 4xx).
The stores are in memory, seeded with the demo agent; the key may act for
every user of that agent.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import CHECKS, CheckFunction, load_all_checks
from schemathesis.config import SchemathesisConfig
from schemathesis.generation import GenerationMode

from prefrontal.demo import DEMO_AGENT, seed
from prefrontal.serving.http import create_app
from prefrontal.serving.keys import KeyGrant, KeyRing, hash_key
from prefrontal.serving.service import Service
from prefrontal.stores.set import Stores
from prefrontal.turn import OrchestratorConfig

KEY = "pf_test_fuzz_every_user"
EXAMPLES = 40
"""Generated examples per operation (valid and invalid alike). The coverage phase's cases
(each documented boundary and each kind of bad part) are explicit examples that this does
not bound: they all run whatever it is. 40 cost the module 51 s of CPU where 80 cost 70 s."""
SEED = 36


def _app() -> object:
    stores = Stores.in_memory()
    anyio.run(seed, stores)
    service = Service.build(stores, OrchestratorConfig(deadline_ms=60_000))
    grant = KeyGrant(name="fuzz", sha256=hash_key(KEY), agent_id=DEMO_AGENT, users=("*",))
    return create_app(service, KeyRing([grant]))


CONFIG = SchemathesisConfig.from_dict(
    {
        "seed": SEED,
        "generation": {
            "mode": "all",
            "max-examples": EXAMPLES,
            "deterministic": True,
        },
        # A body over the size limit is refused with 413 before it is read.
        "checks": {
            "negative_data_rejection": {
                "expected-statuses": ["400", "401", "403", "404", "405", "413", "415", "422"]
            }
        },
    }
)


@pytest.fixture
def api_schema() -> schemathesis.BaseSchema:
    """The API's schema, loaded when the test runs: only the worker that runs it builds the
    cases (their coverage phase, every documented boundary, is built with the test)."""
    return schemathesis.openapi.from_asgi("/openapi.json", _app(), config=CONFIG)


@pytest.fixture(autouse=True)
def _node_id_for_schemathesis(request: pytest.FixtureRequest) -> None:
    """schemathesis's lazy tests read and set the node's ``_nodeid``, which pytest 9.2's nodes
    no longer have; give them one (pytest itself reads ``nodeid``)."""
    request.node._nodeid = request.node.nodeid


schema = schemathesis.pytest.from_fixture("api_schema")
load_all_checks()
EVERY_CHECK: list[CheckFunction] = [
    check for check in CHECKS.get_all() if not isinstance(check, type)
]
"""Every check that judges one response (the check classes judge whole runs of the engine)."""


def _negative_if_any_part_is(case: schemathesis.Case[Any]) -> None:
    """Mark a case negative when one of its parts is: a request with a bad part is a bad request.

    schemathesis's coverage phase can mark a case positive while its body is
    generated negative (a valid path with a body of ``0``), and would then
    require the API to accept it.
    """
    meta = case.meta
    if meta is None or meta.generation.mode is GenerationMode.NEGATIVE:
        return
    if any(part.mode is GenerationMode.NEGATIVE for part in meta.components.values()):
        meta.generation = dataclasses.replace(meta.generation, mode=GenerationMode.NEGATIVE)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_the_api_answers_every_generated_request_as_documented(
    case: schemathesis.Case[Any],
) -> None:
    _negative_if_any_part_is(case)
    case.call_and_validate(headers={"Authorization": f"Bearer {KEY}"}, checks=EVERY_CHECK)
