"""A griffe extension: the docstrings' Sphinx roles become the reference's own cross-references.

prefrontal's docstrings name other objects with Sphinx roles
(``:class:`~prefrontal.errors.NotFoundError```, ``:meth:`start_turn```).
mkdocstrings renders them as written, so this extension rewrites each one,
before the docstring is parsed, into an optional cross-reference of
mkdocs-autorefs: a link where the target is on a reference page, its name in
code where it is not (a private module, say). No raw role reaches a page.

A role's target is taken as written when it is dotted; a bare name is looked
up first among the members of the class the docstring belongs to, then of
its module. ``~`` shows only the last part of the name, as in Sphinx.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|mod|meth|func|attr|data|obj|exc|const|type):`(~?)([^`]+)`")
"""A Sphinx role of the Python domain: ``:kind:`target``` or ``:kind:`~target```."""


def _owner(obj: griffe.Object) -> griffe.Object | None:
    """The class whose members bare names are looked up in first: the object or its parent."""
    if obj.is_class:
        return obj
    parent = obj.parent
    return parent if parent is not None and parent.is_class else None


def _target(name: str, obj: griffe.Object) -> str:
    """The full path ``name`` stands for in ``obj``'s docstring."""
    name = name.removesuffix("()")
    if "." in name:
        return name
    for scope in (_owner(obj), obj.module):
        if scope is not None and name in scope.members:
            return f"{scope.path}.{name}"
    return name


def cross_references(text: str, obj: griffe.Object) -> str:
    """``text`` with every Sphinx role replaced by an optional autorefs cross-reference."""

    def replace(match: re.Match[str]) -> str:
        short, written = match.group(1) == "~", match.group(2).strip()
        target = _target(written, obj)
        shown = written.removesuffix("()").rsplit(".", 1)[-1] if short else written
        return (
            f'<autoref identifier="{html.escape(target)}" optional>'
            f"<code>{html.escape(shown)}</code></autoref>"
        )

    return ROLE.sub(replace, text)


class SphinxRoles(griffe.Extension):
    """Rewrites the Sphinx roles of every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **_: Any) -> None:
        """Rewrite ``obj``'s docstring, if it has one, before anything parses it."""
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = cross_references(obj.docstring.value, obj)
