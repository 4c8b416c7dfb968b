"""JSON merge patch (RFC 7396): change the fields a patch names, keep the rest.

``merge_patch({"a": 1, "b": {"c": 2}}, {"b": {"c": None, "d": 3}})`` is
``{"a": 1, "b": {"d": 3}}``: an object in the patch merges into the target's
object, ``None`` (JSON ``null``) removes a member, anything else (a string,
a number, a list) replaces it whole.
"""

from __future__ import annotations

from typing import Any


def merge_patch(target: Any, patch: Any) -> Any:
    """``target`` with ``patch`` applied by RFC 7396; neither argument is changed."""
    if not isinstance(patch, dict):
        return patch
    merged: dict[str, Any] = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged
