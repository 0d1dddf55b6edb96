"""The characters no title of a test set holds, in one definition: the source reader, the corrections reader, the
web translators' answers and the translation cache's stored answers all refuse the same ones (issue 38: the
source reader let U+2028 and U+202E through, and a tampered cache put control characters into a set).

Control characters (C0 with NUL, tab and newline, DEL, C1), the line and paragraph separators U+2028/U+2029,
lone surrogates, and the bidi embeddings, overrides and isolates (U+202A-202E, U+2066-2069) and marks (U+200E,
U+200F, U+061C). Stored, they reached item ids, qrels.tsv lines and the page of a report.
"""

from __future__ import annotations

import unicodedata

BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def unsafe_character(text: str) -> str | None:
    """The first character of ``text`` no title holds, else None."""
    for ch in text:
        if ch in BIDI or unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp"):
            return ch
    return None


def describe(ch: str) -> str:
    """``U+202E (RIGHT-TO-LEFT OVERRIDE)``: a character for a one-line message."""
    return f"U+{ord(ch):04X} ({unicodedata.name(ch, 'a control or unassigned character')})"
