"""MkDocs hooks: reference pages generated from prefrontal itself.

Two markers are replaced in a page's Markdown before it is rendered:

``<!-- prefrontal:openapi -->``
    Every route of the HTTP API, from the OpenAPI document the application
    publishes: its parameters, body fields (with their limits), responses
    and statuses.
``<!-- prefrontal:config dotted.path.Model -->``
    A table of every field of a configuration model: its type, its default
    and the docstring written under it in the source.
``<!-- prefrontal:rights -->``
    The table of rights the HTTP routes and MCP tools enforce
    (:func:`prefrontal.serving.rights.rights_markdown`).

The pages therefore cannot drift from the code: a renamed field or a new
route shows on the next build.
"""

from __future__ import annotations

import ast
import dataclasses
import html
import importlib
import inspect
import itertools
import json
import re
import textwrap
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

_CONFIG = re.compile(r"<!-- prefrontal:config ([\w.]+) -->")
_OPENAPI = "<!-- prefrontal:openapi -->"
_RIGHTS = "<!-- prefrontal:rights -->"
_METHODS = ("get", "post", "put", "patch", "delete", "head")


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Expand the reference markers of one page."""
    if _OPENAPI in markdown:
        markdown = markdown.replace(_OPENAPI, _openapi_markdown())
    if _RIGHTS in markdown:
        from prefrontal.serving.rights import rights_markdown

        markdown = markdown.replace(_RIGHTS, rights_markdown())
    return _CONFIG.sub(lambda match: _config_markdown(match.group(1)), markdown)


# ------------------------------------------------------------------ config


def _config_markdown(dotted: str) -> str:
    module_name, _, name = dotted.rpartition(".")
    model = getattr(importlib.import_module(module_name), name)
    notes = _attribute_docstrings(model)
    lines = [f"## `{name}`", "", _first_paragraph(model.__doc__), ""]
    lines += ["| field | type | default | meaning |", "|---|---|---|---|"]
    for field_name, annotation, default, description in _fields(model):
        note = description or notes.get(field_name, "")
        lines.append(
            f"| `{field_name}` | {_type_name(annotation)} "
            f"| {_cell(default)} | {_cell(_first_paragraph(note))} |"
        )
    return "\n".join(lines) + "\n"


def _fields(model: type) -> list[tuple[str, Any, str, str | None]]:
    """Each field's name, type, default (as shown) and description."""
    if isinstance(model, type) and issubclass(model, BaseModel):
        return [
            (name, field.annotation, _default(field), field.description)
            for name, field in model.model_fields.items()
        ]
    if dataclasses.is_dataclass(model):
        hints = typing.get_type_hints(model)
        return [
            (field.name, hints.get(field.name, field.type), _dataclass_default(field), None)
            for field in dataclasses.fields(model)
        ]
    raise TypeError(f"{model!r} is neither a pydantic model nor a dataclass")


def _dataclass_default(field: dataclasses.Field[Any]) -> str:
    if field.default is not dataclasses.MISSING:
        return f"`{field.default!r}`"
    if field.default_factory is not dataclasses.MISSING:
        return "(computed)"
    return "required"


def _attribute_docstrings(model: type) -> dict[str, str]:
    """The docstrings written under each field, read from the class's source."""
    found: dict[str, str] = {}
    for klass in reversed(model.__mro__):
        if klass in (object, BaseModel) or klass.__module__.startswith("pydantic"):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for statement, following in itertools.pairwise(body):
            if (
                isinstance(statement, ast.AnnAssign)
                and isinstance(statement.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                found[statement.target.id] = inspect.cleandoc(following.value.value)
    return found


def _type_name(annotation: Any) -> str:
    text = html.escape(_type_text(annotation)).replace("|", "&#124;")
    return f"<code>{text}</code>"


def _type_text(annotation: Any) -> str:
    """A type as a reader writes it: ``float | None``, ``Mapping[str, float]``."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_text(args[0])
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_text(arg) for arg in args)
    if origin is typing.Literal:
        return " | ".join(repr(arg) for arg in args)
    if annotation is type(None):
        return "None"
    if origin is not None:
        name = getattr(origin, "__name__", repr(origin))
        inner = ", ".join("..." if arg is Ellipsis else _type_text(arg) for arg in args)
        return f"{name}[{inner}]" if inner else name
    return getattr(annotation, "__name__", repr(annotation))


def _default(field: Any) -> str:
    if field.default is PydanticUndefined:
        return "required" if field.default_factory is None else "(computed)"
    value = field.default
    if isinstance(value, BaseModel):
        return f"`{type(value).__name__}()`"
    return f"`{value!r}`"


_ROLE = re.compile(r":\w+:`(~?)([\w.]+)`")


def _first_paragraph(text: str | None) -> str:
    """The first paragraph of a docstring on one line, its Sphinx roles as code."""
    if not text:
        return ""
    paragraph = inspect.cleandoc(text).split("\n\n", 1)[0].replace("\n", " ")
    return _ROLE.sub(_role_as_code, paragraph).replace("``", "`")


def _role_as_code(match: re.Match[str]) -> str:
    short, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if short else target}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


# ----------------------------------------------------------------- openapi


def _openapi_document() -> dict[str, Any]:
    from prefrontal.serving.http import create_app
    from prefrontal.serving.keys import KeyRing
    from prefrontal.serving.service import Service
    from prefrontal.stores.set import Stores

    app = create_app(Service.build(Stores.in_memory()), KeyRing(()))
    document: dict[str, Any] = json.loads(json.dumps(app.openapi()))
    return document


def _openapi_markdown() -> str:
    document = _openapi_document()
    schemas = document.get("components", {}).get("schemas", {})
    out: list[str] = []
    for path, operations in document["paths"].items():
        for method in _METHODS:
            if method in operations:
                out += _operation(method, path, operations[method], schemas)
    return "\n".join(out) + "\n"


def _operation(method: str, path: str, op: dict[str, Any], schemas: dict[str, Any]) -> list[str]:
    lines = [f"## `{method.upper()} {path}`", "", op.get("summary", ""), ""]
    if op.get("description"):
        lines += [op["description"].strip(), ""]
    params = op.get("parameters", [])
    if params:
        lines += ["| parameter | in | type | required | meaning |", "|---|---|---|---|---|"]
        for param in params:
            schema = param.get("schema", {})
            meaning = _first_paragraph(param.get("description") or schema.get("description"))
            required = "yes" if param.get("required") else "no"
            lines.append(
                f"| `{param['name']}` | {param['in']} | {_cell(_schema_type(schema, schemas))} "
                f"| {required} | {_cell(meaning)} |"
            )
        lines.append("")
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body:
        lines += _body_fields(body, schemas)
    responses = op.get("responses", {})
    for status, response in responses.items():
        schema = response.get("content", {}).get("application/json", {}).get("schema")
        if status.startswith("2") and schema:
            lines += _response_fields(status, schema, schemas)
    lines += ["| status | meaning |", "|---|---|"]
    for status, response in sorted(responses.items()):
        lines.append(f"| {status} | {_cell(response.get('description', ''))} |")
    return [*lines, ""]


def _response_fields(status: str, schema: dict[str, Any], schemas: dict[str, Any]) -> list[str]:
    """The success body's fields, then those of each model a field holds (one level down)."""
    listed = schema.get("type") == "array"
    name, resolved = _resolve(schema.get("items", {}) if listed else schema, schemas)
    title = f"list of `{name}`" if listed else f"`{name}`"
    lines = [f"Response {status}: {title}", "", *_fields_table(resolved, schemas)]
    for held in _held_models(resolved):
        lines += [f"`{held}`:", "", *_fields_table(schemas.get(held, {}), schemas)]
    return lines


def _held_models(schema: dict[str, Any]) -> list[str]:
    """The models the fields of ``schema`` hold, directly or as a list, in field order."""
    found: list[str] = []
    for spec in schema.get("properties", {}).values():
        for option in [spec, *spec.get("anyOf", ())]:
            ref = option.get("$ref") or option.get("items", {}).get("$ref")
            if ref and ref.rsplit("/", 1)[-1] not in found:
                found.append(ref.rsplit("/", 1)[-1])
    return found


def _fields_table(schema: dict[str, Any], schemas: dict[str, Any]) -> list[str]:
    lines = ["| field | type | meaning |", "|---|---|---|"]
    for field, spec in schema.get("properties", {}).items():
        lines.append(
            f"| `{field}` | {_cell(_schema_type(spec, schemas))} "
            f"| {_cell(_first_paragraph(spec.get('description')))} |"
        )
    return [*lines, ""]


def _body_fields(schema: dict[str, Any], schemas: dict[str, Any]) -> list[str]:
    name, resolved = _resolve(schema, schemas)
    lines = [f"Body: `{name}`" if name else "Body:", ""]
    lines += ["| field | type | required | meaning |", "|---|---|---|---|"]
    required = set(resolved.get("required", ()))
    for field, spec in resolved.get("properties", {}).items():
        needed = "yes" if field in required else "no"
        lines.append(
            f"| `{field}` | {_cell(_schema_type(spec, schemas))} | {needed} "
            f"| {_cell(_first_paragraph(spec.get('description')))} |"
        )
    return [*lines, ""]


def _resolve(schema: dict[str, Any], schemas: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    ref = schema.get("$ref")
    if not ref:
        return "", schema
    name = ref.rsplit("/", 1)[-1]
    return name, schemas.get(name, {})


def _schema_type(spec: dict[str, Any], schemas: dict[str, Any]) -> str:
    if "$ref" in spec:
        return f"`{spec['$ref'].rsplit('/', 1)[-1]}`"
    if "anyOf" in spec:
        return " or ".join(_schema_type(option, schemas) for option in spec["anyOf"])
    kind = spec.get("type", "any")
    if kind == "array":
        return f"list of {_schema_type(spec.get('items', {}), schemas)}"
    limits = [
        f"{label} {spec[key]}"
        for key, label in (
            ("minLength", "≥"),
            ("maxLength", "≤"),
            ("minimum", "≥"),
            ("exclusiveMinimum", ">"),
            ("maximum", "≤"),
            ("exclusiveMaximum", "<"),
        )
        if key in spec
    ]
    if "enum" in spec:
        limits.append("one of " + ", ".join(f"`{value}`" for value in spec["enum"]))
    suffix = f" ({'; '.join(limits)})" if limits else ""
    return f"`{kind}`{suffix}"
