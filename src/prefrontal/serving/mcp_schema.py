"""The MCP tool list as a model reads it: what it needs to call a tool right, and no more.

The SDK publishes each tool's full pydantic schemas; a model pays for every
token of them on every request. :func:`compact` keeps what a call needs (the
arguments, their types, ranges, lengths, choices, defaults and
descriptions, which are required, and that no other argument is taken) and
drops what it does not:

* the regular expressions of ids and text (about a thousand tokens) and the
  length limits of strings and lists: the server still enforces them, and
  its error names the argument and why;
* the indentation and line breaks of docstrings;
* a ``$defs`` entry used once (inlined where it is used);
* pydantic's generated ``title`` of every argument (its name, again);
* ``anyOf [X, null]`` of an optional argument: it is ``X``, not required;
* ``"default": null`` (an argument left out);
* the output schemas: the result of every tool is JSON text (and
  ``structuredContent``), whose fields the tool's description names.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from mcp.types import Tool

DROPPED = frozenset({"title", "pattern"})
LIMITS = frozenset({"maxLength", "minLength", "maxItems"})


def compact(tool: Tool) -> Tool:
    """``tool`` with its input schema compacted and no output schema (see the module)."""
    schema = _walk(_inlined(tool.input_schema)) | {"additionalProperties": False}
    description = _flat(tool.description) if tool.description else tool.description
    return tool.model_copy(
        update={"input_schema": schema, "output_schema": None, "description": description}
    )


def _flat(text: str) -> str:
    """A docstring as one line per paragraph, without its indentation."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n".join(" ".join(p.split()) for p in paragraphs)


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each ``$defs`` entry that is referred to once put in its place."""
    defs = schema.get("$defs")
    if not isinstance(defs, dict):
        return schema
    text = json.dumps(schema)
    once = {n for n in defs if text.count(f'"#/$defs/{n}"') == 1}

    def put(node: Any) -> Any:
        if isinstance(node, list):
            return [put(item) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.removeprefix("#/$defs/") in once:
            target = dict(defs[ref.removeprefix("#/$defs/")])
            target.pop("description", None)
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return put(target) | rest
        return {k: put(v) for k, v in node.items()}

    body = {k: v for k, v in schema.items() if k != "$defs"}
    kept = {n: d for n, d in defs.items() if n not in once}
    inlined: dict[str, Any] = put(body)
    return inlined | ({"$defs": put(kept)} if kept else {})


def _walk(node: Any) -> Any:
    if isinstance(node, list):
        return [_walk(item) for item in node]
    if not isinstance(node, dict):
        return node
    alternatives = node.get("anyOf")
    if isinstance(alternatives, list):
        kept = [a for a in alternatives if a != {"type": "null"}]
        if len(kept) == 1 and isinstance(kept[0], dict):
            rest = {k: v for k, v in node.items() if k != "anyOf"}
            return _walk(kept[0] | rest)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _walk(sub) for name, sub in value.items()}
        elif (
            (key in DROPPED and isinstance(value, str))
            or (key in LIMITS and isinstance(value, int))
            or (key == "default" and value is None)
        ):
            continue
        else:
            out[key] = _walk(value)
    return out
