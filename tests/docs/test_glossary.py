"""The glossary names every phase, section and store a user meets in traces and commands."""

from __future__ import annotations

import re
from dataclasses import fields

import pytest

from prefrontal.bundle.models import Section
from prefrontal.phases import PHASE_NAMES
from prefrontal.stores.set import Stores
from tests.docs.code_blocks import DOCS

GLOSSARY = (DOCS / "glossary.md").read_text(encoding="utf-8")
NAMES = sorted({*PHASE_NAMES, *(s.value for s in Section), *(f.name for f in fields(Stores))})


@pytest.mark.parametrize("name", NAMES)
def test_every_name_has_an_entry(name: str) -> None:
    """Each phase, section and store name is a row of the glossary's table."""
    assert re.search(rf"^\| `{name}` \|", GLOSSARY, re.MULTILINE), name
