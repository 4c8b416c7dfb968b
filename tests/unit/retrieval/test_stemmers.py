"""Snowball's Porter stemmer in C (``pystemmer``) stems as the pure-Python one does.

snowballstemmer hands out the C stemmers when they are installed (the
``stemming`` extra), so which one analyses text depends on the install: an
index written with one must read with the other. Every word of the
documentation, of the source and of the synthetic memories, and words built
to reach each of Porter's suffix rules, stem alike.
"""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path

import pytest

from prefrontal.stores.tenancy import Tenant
from prefrontal.testing.synthetic import memories

Stemmer = pytest.importorskip("Stemmer")
porter_stemmer = pytest.importorskip("snowballstemmer.porter_stemmer")

ROOT = Path(__file__).resolve().parents[3]
SUFFIXES = (  # noqa: SIM905 - Porter's suffixes, as the paper lists them
    "s sses ies ss eed ed ing at bl iz y ational tional enci anci izer abli alli entli eli "
    "ousli ization ation ator alism iveness fulness ousness aliti iviti biliti icate ative "
    "alize iciti ical ful ness al ance ence er ic able ible ant ement ment ent ion ou ism "
    "ate iti ous ive ize e l"
).split()


def vocabulary() -> set[str]:
    words: set[str] = set()
    for path in itertools.chain(ROOT.glob("docs/**/*.md"), ROOT.glob("src/**/*.py")):
        words.update(re.findall(r"[^\W_]+", path.read_text(encoding="utf-8").lower()))
    tenant = Tenant(agent_id="a", user_id="u")
    for item in memories(2_000, tenant=tenant):
        words.update(re.findall(r"[^\W_]+", item.content.lower()))
    rng = random.Random(5)
    stems = [w for w in sorted(words) if w.isalpha() and len(w) > 2]
    words.update(f"{stem}{suffix}" for stem in rng.sample(stems, 300) for suffix in SUFFIXES)
    return words


def test_c_and_python_porter_stem_alike() -> None:
    fast, python = Stemmer.Stemmer("porter"), porter_stemmer.PorterStemmer()
    words = sorted(vocabulary())
    assert len(words) > 20_000
    assert [w for w in words if fast.stemWord(w) != python.stemWord(w)] == []
