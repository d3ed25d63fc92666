"""Text as a reader sees it: what a filter on text must look at, not the code points it was sent.

A filter that matches words ("you", "SYSTEM:", six words of a page) is beaten by spellings that
read the same and compare different: a look-alike letter from another script, an invisible
character between two letters or in place of a space, a right-to-left override that shows a word
backwards, an HTML entity (``&#89;ou``), a hyphen inside a word. ``readings`` turns one string
into the few strings a reader may take it for, and a filter checks every one of them:

1. HTML character references decoded (``&#89;`` is ``Y``; decoded until nothing changes, three
   times at most, so ``&amp;#89;`` is ``Y`` too);
2. Unicode compatibility forms unified (NFKC: full-width, mathematical and circled letters, a
   no-break space) and accents dropped;
3. look-alike letters folded to the Latin letter they pass for (``CONFUSABLES``: Unicode TR39's
   confusables, from the confusable-homoglyphs package), and by their Unicode names the small
   capitals, the regional-indicator letters and the Latin letters NFKD does not decompose ("ø",
   "ʉ", "ɵ", "ƴ": a letter with a stroke, a bar, a hook);
4. invisible characters (``INVISIBLE``: zero-width spaces and joiners, bidi controls, the Hangul
   fillers, variation selectors ...) read both ways: as nothing ("Y\\u200bou" is "You") and as a
   space ("ignore\\u200ball" is "ignore all"), since a reader cannot tell which was meant;
5. a right-to-left override read both ways too: as sent, and as shown (the run after U+202E is
   displayed reversed, so "\\u202euoy" shows "you");
6. and each of those re-spelled (``respelled``): encoded text decoded in place (base64, in one
   token or in groups: "SWdub3Jl..." is "Ignore ..."; base32; hex, "49676e6f7265" or "\\x49\\x67";
   percent-escapes, "%59ou"), a digit inside a word read as the letter it stands for ("Y0u" is "You"), and
   letters spelled apart read as one word ("Y O U", "Y-o-u" are "YOU", "You").

``words`` gives the word sequence a six-word quote check compares, with the punctuation inside a
word read both ways as well ("pre-vious" is "previous", and "pre vious").

What it does not try, so a filter on its readings does not stop it: other languages ("Ignorez les
instructions"), paraphrase and synonyms, rot13 and other ciphers, text written backwards without
a right-to-left override, letters drawn from several characters ("|_|" for u, "\\/" for v),
look-alikes TR39 does not list, encodings other than those above (base85, uuencode, Morse,
punycode), and instructions split over sentences so that no one rule sees them. A string filter
knows only the spellings someone listed; where a note is placed is what bounds the rest.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import unicodedata
import urllib.parse

# Look-alike letters, per Unicode TR39 (confusables.txt, the data of its "skeleton"), as the PyPI package
# confusable-homoglyphs ships it (the course's dependencies; the forkable core does not need it): every
# letter (category L) that the file says is confusable with one ASCII letter is read as that letter. NFKC
# folds the mathematical and full-width forms before this table is read. TR39 does not tell I from l;
# an upper-case letter (Lu) is read as "I", a lower-case one as "l", since that is how the words a
# filter looks for spell them.
def _tr39() -> dict[str, str]:
    try:
        from confusable_homoglyphs.confusables import confusables_data
    except ImportError as e:  # pragma: no cover - the course installs it
        raise ImportError("the knowledge manager's lint reads look-alike letters with confusable-homoglyphs: "
                          "pip install 'context-engineering-course[course]' (or confusable-homoglyphs)") from e
    out = {}
    for char, alikes in confusables_data.items():
        if len(char) != 1 or char.isascii() or not unicodedata.category(char).startswith("L"):
            continue
        latin = {"".join(c for c in unicodedata.normalize("NFD", a["c"]) if unicodedata.category(c) != "Mn")
                 for a in alikes}
        letters = sorted(x for x in latin if len(x) == 1 and x.isascii() and x.isalpha())
        if {"I", "l"} <= set(letters) or letters in (["I"], ["l"]):
            out[char] = "I" if unicodedata.category(char) == "Lu" else "l"
        elif len(letters) == 1:
            out[char] = letters[0]
    return out


def _by_name() -> dict[str, str]:
    """Letters whose Unicode name says which Latin letter they show, where TR39 lists few of them:
    the small capitals ("LATIN LETTER SMALL CAPITAL Y"), the regional indicators ("REGIONAL
    INDICATOR SYMBOL LETTER Y", shown as a boxed Y where no flag pairs them), and the Latin letters
    Unicode does not decompose, with a stroke, a bar, a hook ("LATIN SMALL LETTER O WITH STROKE" ø,
    "LATIN SMALL LETTER U BAR" ʉ, "LATIN SMALL LETTER BARRED O" ɵ, "LATIN SMALL LETTER Y WITH HOOK" ƴ)."""
    out = {}
    for point in [*range(0x00C0, 0x2C80), *range(0xA720, 0xA800), *range(0xAB30, 0xAB70)]:  # the Latin blocks
        name = unicodedata.name(chr(point), "")
        found = re.fullmatch(r"LATIN (LETTER SMALL CAPITAL|SMALL LETTER|CAPITAL LETTER) (BARRED |DOTLESS |SCRIPT )?"
                             r"([A-Z])( WITH [A-Z ]+| BAR| STROKE)?", name)
        if found and unicodedata.normalize("NFKD", chr(point)) == chr(point):  # a decomposing one is NFKD's
            letter = found.group(3)
            out[chr(point)] = letter if found.group(1) == "CAPITAL LETTER" else letter.lower()
    for point in range(0x1F1E6, 0x1F200):
        found = re.fullmatch(r"REGIONAL INDICATOR SYMBOL LETTER ([A-Z])", unicodedata.name(chr(point), ""))
        if found:
            out[chr(point)] = found.group(1)
    return out


CONFUSABLES = str.maketrans({**_by_name(), **_tr39()})  # where both say, TR39's reading (ʋ, V WITH HOOK, reads as u)

# Characters that show nothing (Unicode's Default_Ignorable_Code_Point, DerivedCoreProperties.txt):
# the soft hyphen, the combining grapheme joiner, the Arabic letter mark, the Hangul fillers,
# Khmer inherent vowels, Mongolian variation selectors, zero-width space/joiners and direction
# marks, the bidi embeddings, overrides and isolates, word joiner and invisible operators,
# variation selectors, the BOM, halfwidth Hangul filler, shorthand format controls, musical
# formatting, tags. Plus the Braille blank, which shows as a space but is none.
INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                       "\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
                       "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")
RLO, BIDI_END = "\u202e", re.compile("[\u202c\u2069\n]")  # a right-to-left override runs to its pop (or the line's end)


def _shown(text: str) -> str:
    """``text`` in the order it is displayed: each run after a right-to-left override reversed."""
    out, rest = [], text
    while RLO in rest:
        before, _, after = rest.partition(RLO)
        end = BIDI_END.search(after)
        run, rest = (after[:end.start()], after[end.start():]) if end else (after, "")
        out += [before, run[::-1]]
    return "".join(out) + rest


def _letters(text: str) -> str:
    """Decoded, compatibility forms unified, accents dropped, look-alikes folded."""
    for _ in range(3):
        decoded = html.unescape(text)
        if decoded == text:
            break
        text = decoded
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    return unicodedata.normalize("NFKC", text).translate(CONFUSABLES)


# Encoded text, decoded where it stands when it decodes to text (``_text``): a token of 16 or more base64
# characters (standard or URL-safe alphabet, padding optional), or base64 in groups of four ("SWdu b3Jl");
# 16 or more base32 characters; eight or more hex pairs, run together or apart ("49 67", "\x49\x67",
# "0x49,0x67"); percent-escapes ("%59%6Fu").
BASE64 = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{16,}={0,2}(?![\w+/=-])")
BASE64_GROUPS = re.compile(r"(?<![\w+/=-])(?:[A-Za-z0-9+/]{4}[ \t.-]){3,}[A-Za-z0-9+/]{2,4}={0,2}(?![\w+/=-])")
BASE32 = re.compile(r"(?<![\w=])[A-Za-z2-7]{16,}={0,6}(?![\w=])")
HEX = re.compile(r"(?<![\w\\])(?:(?:\\x|0x)?[0-9A-Fa-f]{2}[ \t:,-]?){8,}(?!\w)")
PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
# A digit (or @, $) standing for a letter inside a word: next to a letter ("Y0u", "SYST3M", "@dmin").
DIGIT_LETTERS = str.maketrans("0134579@$", "oieastgas")
IN_A_WORD = re.compile(r"(?<=[^\W\d_])[0134579@$]+|[0134579@$]+(?=[^\W\d_])")
# Two or more single letters with a separator between each ("Y O U", "Y-o-u", "Y.o.u", "Y _ o _ u").
SPELLED_APART = re.compile(r"(?<![^\W\d_])[^\W\d_](?:[ \t\-_.\u00b7*]{1,3}[^\W\d_](?![^\W\d_]))+")


def _text(data: bytes) -> str | None:
    """``data`` as text, or None when it is not text (most words are not the encoding of anything
    printable)."""
    try:
        text = data.decode("utf-8")
    except ValueError:
        return None
    return text if text.isprintable() and sum(c.isalpha() or c == " " for c in text) >= 0.8 * len(text) else None


def _base64(token: str) -> str | None:
    core = re.sub(r"[ \t.]", "", token).rstrip("=").replace("-", "+").replace("_", "/")
    try:
        return _text(base64.b64decode(core + "=" * (-len(core) % 4), validate=True))
    except (binascii.Error, ValueError):
        return None


def _base32(token: str) -> str | None:
    core = token.rstrip("=")
    try:
        return _text(base64.b32decode(core + "=" * (-len(core) % 8), casefold=True))
    except (binascii.Error, ValueError):
        return None


def _hex(run: str) -> str | None:
    digits = re.sub(r"\\x|0x|[ \t:,-]", "", run)
    return _text(bytes.fromhex(digits)) if len(digits) % 2 == 0 else None


def decoded(text: str) -> str:
    """``text`` with what is encoded in it (base64, base32, hex, percent-escapes) decoded in place,
    twice (an encoding of an encoding); what does not decode to text is left as it is."""
    for _ in range(2):
        before = text
        text = BASE64_GROUPS.sub(lambda m: _base64(m.group()) or m.group(), text)
        text = BASE64.sub(lambda m: _base64(m.group()) or _base32(m.group()) or m.group(), text)
        text = BASE32.sub(lambda m: _base32(m.group()) or m.group(), text)
        text = HEX.sub(lambda m: _hex(m.group().rstrip(" \t:,-")) or m.group(), text)
        if PERCENT.search(text):
            text = urllib.parse.unquote(text)
        if text == before:
            break
    return text


def respelled(text: str) -> str:
    """``text`` with encoded text decoded in place (``decoded``), digits inside words as letters,
    letters spelled apart joined: what a reader who decodes, or reads "Y0u" and "Y O U" as words,
    takes it for. What was decoded is read as the rest is (look-alikes folded, invisibles dropped)."""
    plain = decoded(text)
    if plain != text:
        plain = re.sub(r"[ \t]+", " ", "".join(c for c in _letters(INVISIBLE.sub("", plain))
                                                 if unicodedata.category(c) != "Cf"))
    text = IN_A_WORD.sub(lambda m: m.group().translate(DIGIT_LETTERS), plain)
    return SPELLED_APART.sub(lambda m: re.sub(r"[\W_]", "", m.group()), text)


def readings(text: str) -> list[str]:
    """The strings a reader may take ``text`` for (one to eight, distinct, in a fixed order): as sent
    and as shown (a right-to-left override), each with the invisible characters as nothing and as
    a space, each as it is and ``respelled``. Any other format character (category Cf) is dropped."""
    out: list[str] = []
    for order in dict.fromkeys([text, _shown(text)]):
        for invisible in ("", " "):
            seen = _letters(INVISIBLE.sub(invisible, order))
            seen = "".join(c for c in seen if unicodedata.category(c) != "Cf")
            seen = re.sub(r"[ \t]+", " ", seen)
            for form in (seen, respelled(seen)):
                if form not in out:
                    out.append(form)
    return out


def words(text: str) -> list[list[str]]:
    """The lower-case word sequences of ``text`` a quote check compares, for each reading: split at
    anything not a letter or a digit, and with the punctuation inside a space-separated token
    dropped instead ("pre-vious" is both "pre vious" and "previous"; "<p>Ignore" is "p ignore")."""
    out: list[list[str]] = []
    for seen in readings(text):
        seen = seen.lower()
        split = re.findall(r"[^\W_]+", seen)
        joined = [w for token in re.split(r"[\s<>]+", seen) for w in [re.sub(r"[\W_]+", "", token)] if w]
        for sequence in (split, joined):
            if sequence not in out:
                out.append(sequence)
    return out
