"""Mitigation by normalisation: map feminine job titles to a canonical (masculine) form, per language.

The rules are declared in each language pack's ``mitigation:`` section (languages/packs/<code>.yaml) and
applied by ``normalise(text, language)``, documented in docs/audit.md. Each one rewrites the words of the title's head phrase, word by word:

1. an exact lexicon (irregular pairs: ``jefa -> jefe``, ``ärztin -> arzt``);
2. words that are not feminine forms stay as they are (epicene words and masculine nouns in -a:
   ``analista``, ``dentista``, ``guarda``, ``sistema``; abstract nouns in -ia: ``engenharia``);
3. the first matching suffix rule, longest suffix first (``-ora -> -or`` before ``-a -> -o``).

The head phrase ends at the first preposition: in ``chefe de cozinha`` or ``gerente de loja`` the words
after ``de`` are feminine nouns, not feminine forms of the occupation, and are never touched. It also ends
after a grammatically feminine noun (``gerente planificación estratégica``): the adjectives after it agree
with that noun, whoever holds the job.

Applied to the queries and the corpus of a test set (``normalise_testset``), the same model re-ranks the
normalised texts. A pair whose two normalised forms are the same string gets symmetry 1.0 by
construction (one string, one embedding, one ranking); ``split_pairs`` separates those pairs from the
ones that still differ, which alone measure a real effect.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import polars as pl

from eval.errors import EvalError
from eval.testset import FEMININE, MASCULINE, NEUTRAL, TestSet
from languages import AdjectiveBeforeHead, Language, LanguageError, resolve

__all__ = [
    "LanguageRules",
    "rules_for",
    "normalise",
    "normalise_testset",
    "split_pairs",
]

# Hyphenated compounds are one word (porta-voz, salva-vidas): their parts are not separate forms.
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


@dataclass(frozen=True)
class LanguageRules:
    lang: str
    suffixes: tuple[tuple[str, str], ...]  # (feminine suffix, canonical suffix), tried longest first
    lexicon: Mapping[str, str] = field(default_factory=dict)  # exact feminine word -> canonical word
    keep_words: frozenset[str] = frozenset()  # words that look feminine but are not a feminine form
    keep_suffixes: tuple[str, ...] = ()  # word endings that are never a feminine form (-ista, -ia)
    stop_words: frozenset[str] = frozenset()  # prepositions: the head phrase ends before them
    # Nouns that are grammatically feminine whatever the person's gender (empresa, comunicação, guida): kept,
    # and a title that starts with one is left whole, since its adjectives agree with that noun.
    feminine_nouns: frozenset[str] = frozenset()
    feminine_noun_suffixes: tuple[str, ...] = ()
    min_stem: int = 2  # a suffix rule leaves at least this many letters, so 'ora' or 'in' stay words
    remove_pattern: re.Pattern | None = None
    adjective_before_changed_head: AdjectiveBeforeHead | None = None

    def is_feminine_noun(self, w: str) -> bool:
        return w in self.feminine_nouns or w.endswith(self.feminine_noun_suffixes)

    def word(self, w: str) -> str:
        if w in self.lexicon:
            return self.lexicon[w]
        if w in self.keep_words or w.endswith(self.keep_suffixes) or self.is_feminine_noun(w):
            return w
        for suffix, canonical in sorted(self.suffixes, key=lambda s: -len(s[0])):
            if w.endswith(suffix) and len(w) - len(suffix) >= self.min_stem:
                return w[: len(w) - len(suffix)] + canonical
        return w


def rules_for(language: Language) -> LanguageRules:
    """The normalisation rules the language pack declares (``mitigation:``); an EvalError when it has none."""
    m = language.mitigation
    if m is None:
        raise EvalError(f"no normalisation rules for language {language.code!r}: its pack {language.path} has no "
                        "mitigation: section; add one (docs/new-language.md) or audit with --no-mitigation")
    return LanguageRules(language.code, m.suffixes, m.lexicon, m.keep_words, m.keep_suffixes, m.stop_words,
                         m.feminine_nouns, m.feminine_noun_suffixes, m.min_stem,
                         re.compile(m.remove_pattern) if m.remove_pattern else None, m.adjective_before_changed_head)


def _apply(text: str, rules: LanguageRules) -> tuple[str, list[int]]:
    """The normalised text and the indices (in word order) of the words the rules changed."""
    words = list(_WORD.finditer(text))
    if words and rules.is_feminine_noun(words[0].group(0)):
        return text, []
    out, last, changed = [], 0, []
    for i, match in enumerate(words):
        w = match.group(0)
        if w in rules.stop_words:
            break
        if rules.is_feminine_noun(w):
            # Later words agree with this noun, not with the person: 'gerente planificación estratégica',
            # 'responsabile progettazione meccanica'. The noun itself is kept by ``word``.
            out.append(text[last:match.end()])
            last = match.end()
            break
        new = rules.word(w)
        if new != w:
            changed.append(i)
        out.append(text[last:match.start()] + new)
        last = match.end()
    out.append(text[last:])
    return "".join(out), changed


def normalise(text: str, lang: "Language | str") -> str:
    """The normalisation of ``lang`` (its declaration; a code is resolved here) applied to one lowercased title.

    Optional steps a pack may declare (German): ``remove_pattern`` is removed first (inclusive spellings
    ``ingenieur*in``, ``:in``, ``/-in``, ``_in``); with ``adjective_before_changed_head``, an adjective with that
    ending before the first changed word takes the masculine ending (``leitende ärztin -> leitender arzt``)."""
    return _normalise(text, _rules(lang))


def _normalise(text: str, rules: LanguageRules) -> str:
    if rules.remove_pattern is not None:
        text = rules.remove_pattern.sub("", text)
    normalised, changed = _apply(text, rules)
    adjective = rules.adjective_before_changed_head
    if not changed or adjective is None:
        return normalised
    words = list(_WORD.finditer(normalised))
    first_changed = changed[0]
    pieces, last = [], 0
    for i, match in enumerate(words[:first_changed]):
        w = match.group(0)
        grown = w + adjective.append if w.endswith(adjective.ending) and len(w) >= adjective.min_length else w
        pieces.append(normalised[last:match.start()] + grown)
        last = match.end()
    pieces.append(normalised[last:])
    return "".join(pieces)


def _rules(lang: "Language | str") -> LanguageRules:
    try:
        return rules_for(resolve(lang))
    except LanguageError as exc:
        raise EvalError(f"no normalisation rules for language {lang!r}: {exc}") from None


def normalise_testset(ts: TestSet, language: "Language | None" = None) -> tuple[TestSet, dict]:
    """The test set with every query and corpus text normalised (ids, genders, pairs and qrels kept).

    Also returns what changed, per file and gender, and the texts that now occur more than once in a
    corpus variant (they rank as ties, broken by id). The result is held in memory only: it is a
    measurement device, not a test set to publish. language: the test set's declaration (default: the pack
    of ``ts.lang``).
    """
    rules = _rules(language or ts.lang)
    report: dict = {"rules": ts.lang}
    parts = {}
    for name, frame in (("queries", ts.queries), ("corpus", ts.corpus)):
        new_text = [_normalise(t, rules) for t in frame["text"].to_list()]
        changed = [a != b for a, b in zip(frame["text"].to_list(), new_text)]
        genders = frame["gender"].to_list()
        report[name] = {
            g: {"items": sum(1 for x in genders if x == g), "changed": sum(1 for x, c in zip(genders, changed) if x == g and c)}
            for g in (MASCULINE, FEMININE, NEUTRAL)
        }
        parts[name] = frame.with_columns(pl.Series("text", new_text, dtype=pl.String))
    collisions = {}
    for g in (MASCULINE, FEMININE):
        side = parts["corpus"].filter(pl.col("gender").is_in([g, NEUTRAL]))
        collisions[g] = int(side.height - side["text"].n_unique())
    report["corpus_duplicate_texts"] = collisions
    return replace(ts, queries=parts["queries"], corpus=parts["corpus"]), report


def split_pairs(ts: TestSet, language: "Language | None" = None) -> pl.DataFrame:
    """Every query pair (``TestSet.query_pairs``) with its texts before and after normalisation and
    ``identical_after``: the two normalised forms are the same string (symmetry 1.0 by construction)."""
    rules = _rules(language or ts.lang)
    text = dict(zip(ts.queries["id"].to_list(), ts.queries["text"].to_list()))
    pairs = ts.query_pairs()
    m_text = [text[i] for i in pairs["m_id"].to_list()]
    f_text = [text[i] for i in pairs["f_id"].to_list()]
    m_norm = [_normalise(t, rules) for t in m_text]
    f_norm = [_normalise(t, rules) for t in f_text]
    return pairs.with_columns(
        pl.Series("masculine", m_text, dtype=pl.String),
        pl.Series("feminine", f_text, dtype=pl.String),
        pl.Series("masculine_normalised", m_norm, dtype=pl.String),
        pl.Series("feminine_normalised", f_norm, dtype=pl.String),
        pl.Series("identical_before", [a == b for a, b in zip(m_text, f_text)], dtype=pl.Boolean),
        pl.Series("identical_after", [a == b for a, b in zip(m_norm, f_norm)], dtype=pl.Boolean),
    )
