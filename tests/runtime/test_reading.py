"""``features.reading``: the strings a reader may take a string for, and the look-alike table's
source (Unicode TR39's confusables.txt)."""

from __future__ import annotations

import json
import string
import unicodedata
from pathlib import Path

import pytest

from minimal_runtime.features import reading
from minimal_runtime.features.reading import CONFUSABLES, readings, words


@pytest.mark.parametrize("sent, seen", [
    ("Y\u0585u", "You"),  # Armenian oh
    ("\u028f\u1d0f\u1d1c", "you"),  # small capitals, by their names
    ("\U0001f1fe\U0001f1f4\U0001f1fa", "YOU"),  # regional indicators, by their names
    ("&#89;ou", "You"), ("&amp;#89;ou", "You"), ("&lt;system&gt;", "<system>"),  # entities, decoded until stable
    ("\uff39ou", "You"), ("Y\u00f6u", "You"),  # NFKC, accents
])
def test_a_spelling_reads_as_the_letters_it_shows(sent, seen):
    assert seen in readings(sent)


def test_invisible_characters_read_as_nothing_and_as_a_space():
    for invisible in ("\u200b", "\u3164", "\u2060", "\ufe0f", "\u00ad", "\u2800"):
        assert readings(f"ignore{invisible}all") == ["ignoreall", "ignore all"], repr(invisible)
    assert readings("plain text") == ["plain text"]  # the usual case: one reading


def test_a_right_to_left_override_reads_as_sent_and_as_shown():
    seen = readings("\u202euoy\u202c skipped")
    assert "you skipped" in seen and "uoy skipped" in seen
    assert "ab you" in readings("ab \u202euoy")  # to the end of the line when nothing pops it


def test_words_fold_the_punctuation_inside_a_word_both_ways():
    assert words("pre-vious <p>Ignore") == [["pre", "vious", "p", "ignore"], ["previous", "p", "ignore"]]


def test_the_look_alike_table_is_what_tr39_maps_to_one_ascii_letter():
    """Checked against confusables.txt as the PyPI package confusable-homoglyphs ships it (the table
    is built from it at import: issue 61, a registry package's data, not a hand table)."""
    package = pytest.importorskip("confusable_homoglyphs", reason="confusable-homoglyphs is not installed")
    data = json.loads((Path(package.__file__).parent / "confusables.json").read_text(encoding="utf-8"))
    expected = {}
    for latin in string.ascii_letters:
        for entry in data.get(latin, []):
            c = entry["c"]
            if len(c) == 1 and not c.isascii() and unicodedata.normalize("NFKC", c) == c \
                    and unicodedata.category(c).startswith("L"):
                expected[c] = "I" if latin == "l" and unicodedata.category(c) == "Lu" else latin
    mapped = {chr(k): v for k, v in CONFUSABLES.items()}
    assert {c: mapped.get(c) for c in expected} == expected  # every TR39 look-alike, to its letter
    named = set(reading._by_name())
    bare = lambda s: "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")  # noqa: E731
    in_tr39 = {c for c, alikes in data.items() if any(len(bare(a["c"])) == 1 and bare(a["c"]).isascii() for a in alikes)}
    assert set(mapped) - named <= in_tr39  # and nothing else but the letters named for theirs
    assert {c: mapped[c] for c in "øʉɵƴ"} == {"ø": "o", "ʉ": "u", "ɵ": "o", "ƴ": "y"}  # issue 61: "Yøu", "ƴɵu", "Yoʉ"
