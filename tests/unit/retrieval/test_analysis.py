"""The analyser: English as it always was, other languages folded and split so that they match."""

from __future__ import annotations

import itertools
import re
import unicodedata

import snowballstemmer
from hypothesis import given
from hypothesis import strategies as st

from prefrontal.retrieval.analysis import (
    _SPACELESS,
    STOP_WORDS,
    WORD,
    _script_runs,
    _words,
    folded,
    term_set,
    terms,
    terms_of_each,
)

_PORTER = snowballstemmer.stemmer("porter")
_FTS_SAFE = re.compile(r"[^\W_]+")


def english_reference(text: str) -> list[str]:
    """The analysis of ASCII text before other languages were handled: the pin for English."""
    words = re.findall(r"[^\W_]+", text.lower())
    stems = (_PORTER.stemWord(w) for w in words if w not in STOP_WORDS)
    return [s for s in stems if s]


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200))
def test_ascii_text_is_analysed_exactly_as_before(text: str) -> None:
    """Any ASCII text gives the terms of the English analyser: English scores do not move."""
    assert terms(text) == english_reference(text)


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200))
def test_ascii_words_are_the_regular_expressions_words(text: str) -> None:
    """The table split of ASCII text gives ``WORD.findall`` of its lower case, word for word."""
    assert _words(text) == WORD.findall(text.lower())


def test_each_ascii_character_splits_or_joins_as_the_regular_expression_says() -> None:
    """Every ASCII character, alone and between two letters, as ``WORD.findall`` cuts it."""
    for code in range(128):
        for text in (chr(code), f"Ab{chr(code)}Z9", chr(code) * 3):
            assert _words(text) == WORD.findall(text.lower()), code


@given(st.text(max_size=200))
def test_every_term_is_letters_and_digits_only(text: str) -> None:
    """No term is empty or holds a space, quote or punctuation, whatever the text: every index keeps it."""
    for term in terms(text):
        assert _FTS_SAFE.fullmatch(term), term


def test_accents_are_folded_on_both_sides() -> None:
    """``café`` and ``cafe``, ``Größe`` and ``GROSSE``, ``niño`` and ``nino`` analyse alike."""
    assert terms("café") == terms("cafe") == ["cafe"]
    assert terms("Größe") == terms("GROSSE")
    assert terms("niño") == terms("nino")


def test_full_width_forms_are_their_ascii_letters() -> None:
    """Full-width letters and digits analyse as the ASCII ones."""
    assert terms("ＦＥＲＲＹ ２０２６") == terms("ferry 2026")


def test_chinese_and_japanese_are_indexed_by_pairs_of_characters() -> None:
    """A run without spaces gives its overlapping pairs; a lone character is its own term."""
    assert terms("东京大学") == ["东京", "京大", "大学"]
    assert terms("猫") == ["猫"]
    assert "東京" in term_set("東京に行きたい") & term_set("東京へ行く")


def test_japanese_voicing_marks_are_kept() -> None:
    """``が`` is not folded to ``か``: the mark changes the letter."""
    assert folded("が") == "が"
    assert terms("がか") == ["がか"]


def test_a_mixed_word_is_cut_where_the_script_changes() -> None:
    """Latin letters next to Chinese ones form a word of their own."""
    assert terms("iPhone手机") == ["iphon", "手机"]


def test_arabic_article_and_letter_variants_are_unified() -> None:
    """``المكتبة`` and ``مكتبه`` share a term; short vowels are removed."""
    assert terms("المكتبة") == terms("مكتبه")
    assert terms("كَتَبَ") == terms("كتب")


def test_emoji_are_terms_of_their_own() -> None:
    """An emoji is kept as a term spelt with its code point; other punctuation is not."""
    assert terms("I love 🍕!") == ["love", "sym1f355"]
    assert terms("¿qué?") == ["que"]


def test_terms_are_lowercased_stemmed_without_stop_words() -> None:
    """Words are lower-cased, stop words dropped and the rest stemmed."""
    assert terms("The Dogs were RUNNING to the parks") == ["dog", "run", "park"]


def test_possessive_s_leaves_no_empty_term() -> None:
    """A lone "s" stems to nothing and is dropped, never indexed as an empty term."""
    assert terms("the provider's review") == ["provid", "review"]


@given(st.text(max_size=200))
def test_terms_are_never_empty_and_never_hold_spaces(text: str) -> None:
    """Every term is a non-empty run of letters and digits."""
    assert all(term and " " not in term and '"' not in term for term in terms(text))


@given(st.lists(st.one_of(st.text(max_size=80), st.sampled_from(["The dogs ran", "café 東京"]))))
def test_a_batch_is_analysed_as_each_text_alone(texts: list[str]) -> None:
    """``terms_of_each`` gives each text's own terms, repeated words and other scripts included."""
    assert terms_of_each(texts) == [terms(text) for text in texts]


def _folded_reference(text: str) -> str:
    """:func:`folded` spelt out a character at a time: the marks on letters below U+0800 go."""
    decomposed = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text).casefold())
    kept: list[str] = []
    base = 0
    for char in decomposed:
        if unicodedata.combining(char):
            if base >= 0x0800:
                kept.append(char)
            continue
        base = ord(char)
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


def _spaceless_reference(char: str) -> bool:
    return any(low <= ord(char) <= high for low, high in _SPACELESS)


@given(st.text(max_size=120))
def test_folding_equals_its_character_by_character_definition(text: str) -> None:
    """With or without marks to remove (the pass for text without any skips the loop)."""
    assert folded(text) == _folded_reference(text)


@given(st.text(max_size=60) | st.text(alphabet="東京にaé한국ไทย1_", max_size=60))
def test_script_runs_cut_a_word_where_spaceless_scripts_begin_and_end(word: str) -> None:
    """The runs spell the word, each is wholly spaceless or wholly not, and neighbours differ."""
    runs = _script_runs(word)
    assert "".join(run for run, _ in runs) == word
    for run, spaceless in runs:
        assert run and all(_spaceless_reference(char) == spaceless for char in run)
    assert all(a[1] != b[1] for a, b in itertools.pairwise(runs))
