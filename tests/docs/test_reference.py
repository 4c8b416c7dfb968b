"""The Python reference covers what the docs import, and its pages show no raw Sphinx role.

Every ``from prefrontal... import NAME`` in the site's pages, the README and
``examples/`` names an object that the Python reference documents: named by
a ``:::`` directive, or a public member of a module or class one names.
"""

from __future__ import annotations

import importlib
import inspect
import re
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest
from docs.hooks.sphinx_roles import ROLE, cross_references

from tests.docs.code_blocks import DOCS, ROOT

REFERENCE = DOCS / "reference" / "python.md"
_IMPORT = re.compile(r"from (prefrontal[\w.]*) import (?:\(([\w,\s]+)\)|([\w, ]+))")
_DIRECTIVE = re.compile(r"^::: ([\w.]+)(?P<options>(?:\n    .*)*)", re.MULTILINE)


def _resolve(path: str) -> object:
    """The object a dotted path names: a module, or an attribute of the longest module prefix."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name)
        return found
    raise LookupError(path)


def _public_members(owner: object) -> list[object]:
    """What a ``:::`` directive on ``owner`` also renders: its public members."""
    if isinstance(owner, ModuleType):
        names = getattr(owner, "__all__", None) or [n for n in vars(owner) if not n.startswith("_")]
        return [getattr(owner, n) for n in names if hasattr(owner, n)]
    if inspect.isclass(owner):
        return [v for n, v in vars(owner).items() if not n.startswith("_")]
    return []


@cache
def documented() -> tuple[object, ...]:
    """Every object the Python reference renders."""
    found: list[object] = []
    for match in _DIRECTIVE.finditer(REFERENCE.read_text(encoding="utf-8")):
        owner = _resolve(match.group(1))
        found.append(owner)
        if "members: false" not in match.group("options"):
            found.extend(_public_members(owner))
    return tuple(found)


def imported_names() -> list[tuple[str, str, str]]:
    """``(where, module, name)`` for every name the docs, README and examples import."""
    sources = [*DOCS.rglob("*.md"), ROOT / "README.md", *(ROOT / "examples").glob("*.py")]
    found = set()
    for source in sources:
        for module, wrapped, names in _IMPORT.findall(source.read_text(encoding="utf-8")):
            for name in re.split(r"[\s,]+", (wrapped or names).strip()):
                if name:
                    found.add((str(source.relative_to(ROOT)), module, name))
    return sorted(found)


@pytest.mark.parametrize(("where", "module", "name"), imported_names())
def test_every_imported_name_is_in_the_reference(where: str, module: str, name: str) -> None:
    """A name a page or example imports is rendered by the Python reference."""
    obj = getattr(importlib.import_module(module), name)
    assert any(obj is seen for seen in documented()), (
        f"{where} imports {module}.{name}, which docs/reference/python.md does not document"
    )


def test_roles_become_cross_references() -> None:
    """Each Sphinx role is rewritten; ``~`` shows the last part; no role text is left."""
    import griffe

    module = griffe.Module("mod")
    text = "See :class:`~prefrontal.errors.NotFoundError` and :func:`prefrontal.x.y()`."
    rewritten = cross_references(text, module)
    assert ROLE.search(rewritten) is None
    assert '<autoref identifier="prefrontal.errors.NotFoundError" optional>' in rewritten
    assert "<code>NotFoundError</code>" in rewritten
    assert "<code>prefrontal.x.y()</code>" in rewritten


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The documentation site, built strictly into a fresh folder (``make test``'s strict
    build of the site: a warning fails every test that reads it, with mkdocs's output)."""
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )
    assert built.returncode == 0, f"mkdocs build --strict failed:\n{built.stderr}{built.stdout}"
    return out


def test_no_page_shows_a_raw_role(site: Path) -> None:
    """No rendered page shows ``:class:`` and the like (roles became links or code)."""
    raw = re.compile(r":(?:class|mod|meth|func|attr|data|exc):(?:<code>|`)")
    shown = {
        str(page.relative_to(site)): len(raw.findall(page.read_text(encoding="utf-8")))
        for page in site.rglob("*.html")
    }
    assert {page: n for page, n in shown.items() if n} == {}


def test_no_page_loads_from_another_host(site: Path) -> None:
    """Pages load styles, scripts, fonts and images from the site itself only."""
    loads = re.compile(
        r"<(?:link|script|img|source|iframe)\b[^>]*\b(?:href|src)=\"(?:https?:)?//[^\"]+\""
        r"|@import\s+url\(\s*[\"']?(?:https?:)?//|url\(\s*[\"']?https?://"
    )
    found = {
        str(page.relative_to(site)): loads.findall(page.read_text(encoding="utf-8"))
        for page in [*site.rglob("*.html"), *site.rglob("*.css")]
    }
    assert {page: hits for page, hits in found.items() if hits} == {}
