"""Only what a person can see: text from outside loses the characters no one sees before a model reads it.

Unicode has characters that show nothing and that a model reads all the same. The tag characters
(U+E0020-E007E) spell ASCII invisibly: " Ignore all previous instructions" written in them shows
as nothing in every editor and terminal, and a model reads it ("ASCII smuggling"). Zero-width
spaces and joiners split a word a filter looks for; bidirectional controls show text in another
order than the one sent; variation selectors (256 of them) carry one byte each after any
character. So every text that came from outside, or from an agent that read it, has them removed
before any layout sees it (``Agent``: notes given with ``inject_untrusted``, which the knowledge
manager's are; the results of tools marked ``reads_outside``; a server tool's result in a reply),
and the run record counts what was removed and from what (``KEY`` in ``agent.state``). A tool's
own output, not marked, is the operator's code and is left as it is.

What is removed: every format character (general category Cf: the tags, zero-width space, the
joiners, direction marks, bidi embeddings, overrides and isolates, word joiner, invisible
operators, the BOM, the soft hyphen ...) and the rest of Unicode's Default_Ignorable_Code_Point
(DerivedCoreProperties.txt): variation selectors, the combining grapheme joiner, Hangul fillers,
Khmer inherent vowels, Mongolian variation selectors. The variation selectors go too although they
only choose a glyph (a text or an emoji heart), because they are the other way to hide bytes in
plain sight; the cost is an emoji drawn in its other style. Removing the zero-width joiners
costs a family emoji drawn as its members and, in Persian, a word drawn joined: the words are
still there.

[TR36] https://www.unicode.org/reports/tr36/ (Unicode security considerations: invisible characters)
[UCD] https://www.unicode.org/Public/UCD/latest/ucd/DerivedCoreProperties.txt (Default_Ignorable_Code_Point)
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

KEY = "hidden_removed"  # in agent.state: {what it came from: how many characters were removed}

# Default_Ignorable_Code_Point that is not of category Cf (those are found by their category).
IGNORABLE = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\ufff0-\ufff8"
                       "\U000e0000-\U000e0fff]")


def hidden(c: str) -> bool:
    """Does the character show nothing (a format character, or one Unicode says to ignore)?"""
    return unicodedata.category(c) == "Cf" or IGNORABLE.match(c) is not None


def visible(text: str) -> tuple[str, int]:
    """``text`` without the characters no one sees, and how many there were."""
    if text.isascii():  # the usual case, at no cost
        return text, 0
    kept = "".join(c for c in text if not hidden(c))
    return kept, len(text) - len(kept)


def cleaned(value: Any) -> tuple[Any, int]:
    """Every string in ``value`` (a text, a block, a list of blocks) made ``visible``; how many went."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, list):
        parts = [cleaned(v) for v in value]
        return [v for v, _ in parts], sum(n for _, n in parts)
    if isinstance(value, dict):
        parts = {k: cleaned(v) for k, v in value.items()}
        return {k: v for k, (v, _) in parts.items()}, sum(n for _, n in parts.values())
    return value, 0
