"""The OpenAPI document of the HTTP API, with what the framework leaves out.

FastAPI derives the paths, bodies, field limits and security schemes from
the routes; this adds the schema of the error bodies (``Problem``) that the
responses of :mod:`.responses` refer to, and drops the framework's own
validation-error schemas, which the API never returns.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from prefrontal.serving.http.responses import PROBLEM_SCHEMA

UNUSED = ("HTTPValidationError", "ValidationError")


def truthful_openapi(app: FastAPI) -> None:
    """Make ``app.openapi()`` return the document described in the module (built once)."""

    def document() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                summary=app.summary,
                description=app.description,
                routes=app.routes,
            )
            schemas = schema.setdefault("components", {}).setdefault("schemas", {})
            for name in UNUSED:
                schemas.pop(name, None)
            schemas["Problem"] = PROBLEM_SCHEMA
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = document  # type: ignore[method-assign]
