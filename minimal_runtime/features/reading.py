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
3. look-alike letters folded to the Latin letter they pass for (``CONFUSABLES``, from Unicode
   TR39), small capitals and regional-indicator letters to theirs (by their Unicode names);
4. invisible characters (``INVISIBLE``: zero-width spaces and joiners, bidi controls, the Hangul
   fillers, variation selectors ...) read both ways: as nothing ("Y\\u200bou" is "You") and as a
   space ("ignore\\u200ball" is "ignore all"), since a reader cannot tell which was meant;
5. a right-to-left override read both ways too: as sent, and as shown (the run after U+202E is
   displayed reversed, so "\\u202euoy" shows "you");
6. and each of those re-spelled (``respelled``): base64 text decoded in place ("SWdub3Jl..." is
   "Ignore ..."), a digit inside a word read as the letter it stands for ("Y0u" is "You"), and
   letters spelled apart read as one word ("Y O U", "Y-o-u" are "YOU", "You").

``words`` gives the word sequence a six-word quote check compares, with the punctuation inside a
word read both ways as well ("pre-vious" is "previous", and "pre vious").
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import unicodedata

# Look-alike letters, per Unicode TR39 (confusables.txt, the "skeleton" data): every letter (a code
# point of category L, unchanged by NFKC) that the file maps to one ASCII letter. Derived from
# confusables.txt as the PyPI package confusable-homoglyphs 3.3.1 (2024-01) ships it; NFKC folds
# the mathematical and full-width forms before this table is read, so they are not in it. TR39
# maps I-like letters to "l" (its skeleton does not tell I from l); the upper-case ones (category Lu)
# are read as "I" here, since that is how the words a filter looks for spell them.
_LOOK_ALIKES = {
    "a": "ɑαа", "b": "ƄЬᏏᑲᖯ", "c": "сᴄⲥꮯ𐐽", "d": "ԁᏧᑯꓒ", "e": "еҽꬲ", "f": "քẝꞙꬵ", "g": "ƍɡցᶃ", "h": "һհᏂ",
    "i": "ıɩɪιіӏᎥꙇꭵ𑣃", "j": "ϳј", "l": "ǀᛁⵏꓲ𐊊𐌉𖼨", "I": "ƖΙІӀⲒ", "n": "ոռ", "o": "οσоօഠဝჿᴏᴑⲟꬽ𐐬𐓪𑣈𑣗",
    "p": "ρрⲣ", "q": "ԛգզ", "r": "гᴦⲅꭇꭈꮁ", "s": "ƽѕꜱꮪ𐑈𑣁", "u": "ʋυսᴜꞟꭎꭒ𐓶𑣘", "v": "νѵᴠꮩ𑜆𑣀",
    "w": "ɯѡԝաᴡꮃ𑜊𑜎𑜏", "x": "хᕁᕽ", "y": "ɣʏγуүყᶌỿꭚ𑣜", "z": "ᴢꮓ𑣄",
    "A": "ΑАᎪᗅꓮ𐊠𖽀", "B": "ΒВᏴᗷꓐꞴ𐊂𐊡𐌁", "C": "СᏟⲤꓚ𐊢𐌂𐐕𐔜", "D": "Ꭰᗞᗪꓓ", "E": "ΕЕᎬⴹꓰ𐊆𑢦𑢮",
    "F": "ϜᖴꓝꞘ𐊇𐊥𐔥𑢢𑣂", "G": "ԌᏀᏳꓖ", "H": "ΗНᎻᕼⲎꓧ𐋏", "J": "ͿЈᎫᒍꓙꞲ", "K": "ΚКᏦᛕⲔꓗ𐔘",
    "L": "ᏞᒪⳐꓡ𐐛𐔦𑢣𑢲𖼖", "M": "ΜϺМᎷᗰᛖⲘꓟ𐊰𐌑", "N": "ΝⲚꓠ𐔓", "O": "ΟОՕଠዐⲞⵔꓳ𐊒𐊫𐐄𐓂𐔖𑢵",
    "P": "ΡРᏢᑭⲢꓑ𐊕", "Q": "ⵕ", "R": "ƦᎡᏒᖇꓣ𐒴𖼵", "S": "ЅՏᏕᏚꓢ𐊖𐐠𖼺", "T": "ΤТᎢⲦꓔ𐊗𐊱𐌕𑢼𖼊",
    "U": "Սሀᑌꓴ𐓎𑢸𖽂", "V": "ѴᏙᐯⴸꓦꛟ𐔝𑢠𖼈", "W": "ԜᎳᏔꓪ", "X": "ΧХᚷⲬⵝꓫꞳ𐊐𐊴𐌗𐔧",
    "Y": "ΥУҮᎩᎽⲨꓬ𐊲𑢤𖽃", "Z": "ΖᏃꓜ𑢩",
}


def _by_name() -> dict[str, str]:
    """Letters whose Unicode name says which Latin letter they show: the small capitals
    ("LATIN LETTER SMALL CAPITAL Y") and the regional indicators ("REGIONAL INDICATOR SYMBOL
    LETTER Y", shown as a boxed Y where no flag pairs them). TR39 lists only a few of these."""
    out = {}
    for start, end in ((0x0250, 0x02B0), (0x1D00, 0x1D30), (0xA720, 0xA800), (0xAB30, 0xAB70), (0x1F1E6, 0x1F200)):
        for point in range(start, end):
            name = unicodedata.name(chr(point), "")
            found = re.fullmatch(r"LATIN LETTER SMALL CAPITAL ([A-Z])|REGIONAL INDICATOR SYMBOL LETTER ([A-Z])", name)
            if found:
                out[chr(point)] = (found.group(1) or "").lower() or found.group(2)
    return out


CONFUSABLES = str.maketrans({**{c: latin for latin, chars in _LOOK_ALIKES.items() for c in chars}, **_by_name()})

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


# A token of 16 or more base64 characters (standard or URL-safe alphabet, padding optional).
BASE64 = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{16,}={0,2}(?![\w+/=-])")
# A digit (or @, $) standing for a letter inside a word: next to a letter ("Y0u", "SYST3M", "@dmin").
DIGIT_LETTERS = str.maketrans("0134579@$", "oieastgas")
IN_A_WORD = re.compile(r"(?<=[^\W\d_])[0134579@$]+|[0134579@$]+(?=[^\W\d_])")
# Two or more single letters with a separator between each ("Y O U", "Y-o-u", "Y.o.u", "Y _ o _ u").
SPELLED_APART = re.compile(r"(?<![^\W\d_])[^\W\d_](?:[ \t\-_.\u00b7*]{1,3}[^\W\d_](?![^\W\d_]))+")


def _decoded(token: str) -> str | None:
    """The text a base64 token encodes, or None when it is not text (most words are not base64 of
    anything printable)."""
    core = token.rstrip("=").replace("-", "+").replace("_", "/")
    try:
        data = base64.b64decode(core + "=" * (-len(core) % 4), validate=True)
        text = data.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return text if text.isprintable() and sum(c.isalpha() or c == " " for c in text) >= 0.8 * len(text) else None


def respelled(text: str) -> str:
    """``text`` with base64 decoded in place, digits inside words as letters, letters spelled apart
    joined: what a reader who decodes, or reads "Y0u" and "Y O U" as words, takes it for."""
    text = BASE64.sub(lambda m: _decoded(m.group()) or m.group(), text)
    text = IN_A_WORD.sub(lambda m: m.group().translate(DIGIT_LETTERS), text)
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
