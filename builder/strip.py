"""The strip step: from a translator's output (or a given title) to the title text the build reads.

The template is removed with the language's pattern (named groups ``title`` and, optionally, ``article``),
the text lowercased, invisible format characters dropped, spaces collapsed and punctuation trimmed at both ends;
what cannot be used is flagged (``template_not_stripped``, ``empty``, ``echo``: the English came back).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from builder.errors import BuildError
from languages import compile_strip

_KEEP_AT_EDGE = "+#&%$"  # symbols that belong to titles (c++, c#, r&d)


def _is_edge(ch: str) -> bool:
    """Punctuation, separators and symbols trimmed at a title's ends (checked per character: building the whole
    set of such code points took 0.3 s at every import). A letter or digit (categories L and N) never is, and
    most characters asked are: they skip the category lookup."""
    return not ch.isalnum() and ch not in _KEEP_AT_EDGE and (
        ch in " \t" or unicodedata.category(ch).startswith(("P", "Z", "S")))


_CLOSING = {")": "(", "]": "["}


def strip_edges(text: str) -> str:
    """Trim punctuation and spaces at both ends, but a closing bracket whose opening is in the title stays
    (*accompagnateur (musique)*)."""
    start, end = 0, len(text)
    while start < end and _is_edge(text[start]):
        start += 1
    while end > start and _is_edge(text[end - 1]):
        if text[end - 1] in _CLOSING and _CLOSING[text[end - 1]] in text[start:end - 1]:
            break
        end -= 1
    return text[start:end]


def _one_space(text: str) -> str:
    """Runs of white space made one space, none at the ends: ``re.sub(r"\\s+", " ", text).strip()`` at a fifth of
    the cost (str.split and \\s know the same white space; a test checks every code point)."""
    return " ".join(text.split())


# Invisible format characters a copied title may carry (pt *supervisor \u200b\u200bde design gráfico*): the soft
# hyphen, zero-width spaces and joiners, direction marks and embeddings, the word joiner, the byte-order mark.
_INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")


def normalise(text: str | None) -> str:
    """Lowercase, drop invisible format characters, collapse spaces, trim punctuation and spaces at both ends."""
    if text is None:
        return ""
    text = _one_space(_INVISIBLE.sub("", unicodedata.normalize("NFC", text))).lower()
    return strip_edges(text)


@dataclass
class Stripped:
    title: str | None
    article: str | None
    flags: list[str] = field(default_factory=list)


def strip_template(output: str, english_title: str, pattern: re.Pattern) -> Stripped:
    """Remove the template (pronoun, copula, optional article) from one output; flag what fails."""
    clean = strip_edges(_one_space(unicodedata.normalize("NFC", output or "")))
    if not clean:
        return Stripped(None, None, ["empty"])
    m = pattern.fullmatch(clean)
    if not m:
        probe = pattern.fullmatch(clean + " x")
        if probe and probe.group("title") == "x":  # nothing but the template came back
            return Stripped(None, None, ["empty"])
        flags = ["template_not_stripped"]
        if normalise(clean).endswith(normalise(english_title)):
            flags.append("echo")
        return Stripped(None, None, flags)
    title = normalise(m.group("title"))
    article = (m.groupdict().get("article") or "").strip() or None
    if not title:
        return Stripped(None, article, ["empty"])
    if title == normalise(english_title):
        # Kept: a loanword in use (chef, designer) is a title; the gender layer tells it from an untranslated one.
        return Stripped(title, article, ["echo"])
    return Stripped(title, article)


def compile_pattern(pattern: str, code: str) -> re.Pattern:
    try:
        return compile_strip(pattern)  # languages.compile_strip: the one check of a strip pattern
    except ValueError as exc:
        raise BuildError(f"params.yaml: build.strip.{code} {exc}") from None



# Inclusive spellings of the given titles (fr *Caissier·ère*, *Consultant·e*; de *Avioniker/in*, *Ingenieur:in*,
# *Ingenieur\*in*, *IngenieurIn*, *Ingenieur(in)*): the marker is removed and the title read as its masculine;
# the gender layer makes the feminine (flag inclusive_base).
_INCLUSIVE = re.compile(r"(?<=[^\W\d_])(?:[·•](?:[^\W\d_]+)(?:[·•]s)?|\((?:e|in|a)\)|[/:*](?:-?in(?:nen)?|e|a)(?![^\W\d_])"
                        r"|In(?![^\W\d_]))")


def split_inclusive(title: str) -> tuple[str, bool]:
    """(the title with inclusive markers removed, whether there were any)."""
    plain = _INCLUSIVE.sub("", title)
    return plain, plain != title
