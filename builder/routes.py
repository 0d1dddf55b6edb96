"""The decide step: one strategy per route gives each English source its verdict, forms and checks.

builder/postprocess.py ``process_translations`` runs strip → corrections → decide → item over every source;
the route of a source (``raw_translations.parquet`` ``route``; a file without it is all MT) picks its strategy:

- ``mt``: the translator's two template outputs, a pair. ``MTPairByLexicon`` where the pack declares a lexicon
  (the gender layer of builder/inflection.py reads the pair and makes a broken form again); ``MTPairByRules``
  elsewhere (the ending rules of builder/gender.py check each output, ``decide_pair`` gives the verdict);
- ``reference``: the dataset's own translation, one given title (``GivenTranslation``: the pack's gender layer,
  builder/layers.py, reads it and makes the other form);
- ``none``: no confident alignment and no MT route (``NoTranslation``: ``unaligned``, no item);
- a person's correction of any of them (``Corrected``, wrapping the route's strategy: the person's text replaces
  what they were shown, their gender marking decides).

Every strategy has the same signature, ``decide(source) -> Outcome``; a route also strips its raw row
(``strip``), does its batch work once (``prepare``: the lexicon's lookups, the ending rules' spaCy pass), says what
a person was shown (``proposal``, which ``Corrected`` starts from) and which flags follow from a verdict whoever
gave it (``review_flags``). A new route is one class with these five methods and one entry in ``make_routes``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from builder.corrections import TranslationCorrection
from builder.gender import F, M, N, U, check_many, head_word
from builder.inflection import Decision, GenderLayer
from builder.layers import keeps_case as layer_keeps_case, make_layer
from builder.strip import Stripped, compile_pattern, normalise, split_inclusive, strip_template
from builder.verdict import PAIR_VERDICTS, Verdict
from languages import Language

# Flags of a gender layer that leave a decision unconfirmed (check_gender unknown, check_ok false).
UNCHECKED_FLAGS = {"unknown_word", "untranslated", "unknown_head", "not_a_person_noun"}
# A machine translation that kept the English word order or took a verb for a noun (GenderLayer.garbled): on the MT
# route no item (clínic associar professor, anual dando director), whatever its verdict.
GARBLED_FLAGS = {"head_not_a_noun", "verb_form"}


@dataclass
class Source:
    """One English id after the strip step: its raw row, the two titles its route read and a person's correction."""

    row: dict  # the raw_translations.parquet row
    masculine: Stripped
    feminine: Stripped
    correction: TranslationCorrection | None = None

    @property
    def english(self) -> str:
        return self.row["source_text"]


@dataclass
class Outcome:
    """What one source gives: the verdict, the forms the build uses, the gender each was given and by what."""

    verdict: Verdict
    masculine: str | None = None
    feminine: str | None = None
    check_masculine: str = U
    check_feminine: str = U
    method_masculine: str = "none"
    method_feminine: str = "none"
    reason: str = ""
    flags: list[str] = field(default_factory=list)
    # What the route proposed before a person's or the review's correction (the titles annotation shows as the
    # proposal, and compares their answers with); None: the outcome is the route's own, its titles are the proposal.
    proposal: tuple[str | None, str | None] | None = None


class Strategy(Protocol):
    def decide(self, source: Source) -> Outcome: ...


class Route(Strategy, Protocol):
    name: str

    def strip(self, row: dict) -> tuple[Stripped, Stripped]: ...

    def prepare(self, sources: list[Source]) -> None: ...

    def proposal(self, source: Source) -> Outcome: ...

    def review_flags(self, outcome: Outcome) -> list[str]: ...


# --- shared rules of the gender layers' decisions -------------------------------------------------------------

def earned(d: Decision, given: bool = False) -> Decision:
    """Neutral and single-form items must be earned (issue 21): a title the layer cannot vouch for is never
    neutral nor a single form (``unverified``: a review item, no item in the set), and a thing is not a title.
    given: the title is a given translation, whose words after the head are the translators' choice (loans a
    job ad uses: consulente wireless, gerente de compliance): an unknown one is flagged, not disqualifying. On
    the MT route such a word is the engine's (a pivot word: capo di policía; English left in)."""
    unsure = any(x in UNCHECKED_FLAGS for x in d.flags) or (not given and "unknown_modifier" in d.flags)
    if d.verdict == Verdict.FEMININE_ONLY and "not_a_person_noun" in d.flags:
        return replace(d, verdict=Verdict.NOT_A_PERSON, masculine=None, feminine=None)
    if not given and GARBLED_FLAGS & set(d.flags) and d.verdict not in (Verdict.FAILED, Verdict.UNVERIFIED):
        masculine, feminine = decision_titles(d)
        return replace(d, verdict=Verdict.UNVERIFIED, masculine=masculine,
                       feminine=None if d.verdict == Verdict.NEUTRAL else feminine,
                       neutral=None, reason=f"{d.reason}; the translation keeps the English word order or a verb form "
                       "(head_not_a_noun, verb_form): a review item")
    if d.verdict == Verdict.NEUTRAL and unsure:
        return replace(d, verdict=Verdict.UNVERIFIED, masculine=d.neutral, feminine=None, neutral=None,
                       reason=f"{d.reason}: not neutral without a lexicon's or word list's word")
    if d.verdict in (Verdict.REINFLECTED, Verdict.INFLECTED) and "unknown_word" in d.flags:
        # the layer made the other form around a head it does not know (vp dello sviluppo -> vp della sviluppa)
        from_feminine = {"reinflected_masculine", "feminine_base"} & set(d.flags)
        return replace(d, verdict=Verdict.UNVERIFIED, **({"masculine": None} if from_feminine else {"feminine": None}),
                       reason="the head is a word neither the lexicon nor the word list knows: no other form made")
    if d.verdict in (Verdict.MASCULINE_ONLY, Verdict.FEMININE_ONLY) and "declared_single_form" not in d.flags:
        # The lexicon and the word list not knowing the other form is no proof that none exists (juez/jueza,
        # segundo/segunda, plomero/plomera), nor that the title names a person (apoyo técnico): a review item. A
        # single form is kept when a person marks it so, or the pack declares the noun (flag declared_single_form).
        return replace(d, verdict=Verdict.UNVERIFIED,
                       reason=f"{d.reason}; a single form needs a person's confirmation (or the pack's declaration)")
    return d


def decision_titles(d: Decision) -> tuple[str | None, str | None]:
    return (d.neutral, d.neutral) if d.verdict == Verdict.NEUTRAL else (d.masculine, d.feminine)


def decision_checks(d: Decision) -> tuple[str, str]:
    """check_masculine, check_feminine of a gender layer's decision: unknown where it could not confirm the title."""
    if any(x in UNCHECKED_FLAGS for x in d.flags):
        return U, U
    if d.verdict == Verdict.NEUTRAL:
        return N, N
    m_title, f_title = decision_titles(d)
    return (M if m_title else U), (F if f_title else U)


def layer_method(layer, parts: str) -> str:
    """check_method of a gender layer's decision: which resources decided (``lexicon:apertium-es-pt+hunspell:pt_BR``;
    German: ``german-nouns:1.2.5+hunspell:de_DE``)."""
    names = {**layer.method_names, "rule": f"rule:{layer.lang.code}-endings"}
    return "+".join(names[p] for p in parts.split("+") if p in names) or "none"


def layer_outcome(d: Decision, method: str) -> Outcome:
    """A gender layer's decision as an outcome: its forms, their checks, ``method`` for both."""
    masculine, feminine = decision_titles(d)
    mc, fc = decision_checks(d)
    return Outcome(Verdict(d.verdict), masculine, feminine, mc, fc, method, method, d.reason, list(d.flags))


def decide_pair(m_title: str | None, f_title: str | None, m_check: str, f_check: str) -> Verdict:
    """The verdict of a pair of titles from the checks of their gender (the ending rules' route; a missing title
    is a failed output)."""
    if m_title is None and f_title is None:
        return Verdict.FAILED
    if m_title is None or f_title is None:
        return Verdict.ONE_FORM_FAILED
    if m_title == f_title:
        # The shared text's own markers decide (the two checks of one text differ only through the article:
        # pt "um caixa" / "uma caixa" is a common-gender noun); a feminine output read masculine is never neutral.
        if m_check == N and f_check == M:
            return Verdict.UNINFLECTED_FEMININE
        return {N: Verdict.NEUTRAL, M: Verdict.UNINFLECTED_FEMININE,
                F: Verdict.MASCULINE_IS_FEMININE}.get(m_check, Verdict.UNVERIFIED_IDENTICAL)
    if m_check == F or f_check == M:
        return Verdict.WRONG_GENDER_FORM
    return Verdict.GENDERED


def corrected_texts(c: TranslationCorrection | None, masculine: str | None,
                    feminine: str | None) -> tuple[str | None, str | None]:
    """A person's text where they wrote one, else the text given."""
    if c is None:
        return masculine, feminine
    return (normalise(c.masculine) if c.masculine else masculine, normalise(c.feminine) if c.feminine else feminine)


def corrected_verdict(c: TranslationCorrection, m_title: str | None, f_title: str | None, mc: str,
                      fc: str) -> tuple[Verdict, str | None, str | None]:
    """The verdict a person's correction gives (their gender marking decides), with the titles it keeps."""
    if c.drops:  # a flag and no title: every flag says the title is wrong (builder/corrections.py FLAG_MEANINGS)
        return Verdict.DROPPED_BY_ANNOTATOR, m_title, f_title
    # The gender markings are the correction format's words (builder/corrections.py MARKINGS).
    if c.gender_marking == "neutral":
        m_title = f_title = m_title or f_title
        return (Verdict.NEUTRAL if m_title else Verdict.FAILED), m_title, f_title
    if c.gender_marking == "masculine_only":
        return (Verdict.MASCULINE_ONLY if m_title else Verdict.FAILED), m_title, f_title
    if c.gender_marking == "feminine_only":
        return (Verdict.FEMININE_ONLY if f_title else Verdict.FAILED), m_title, f_title
    if m_title and f_title and m_title != f_title:
        return Verdict.GENDERED, m_title, f_title
    return decide_pair(m_title, f_title, mc, fc), m_title, f_title


# --- the strategies ---------------------------------------------------------------------------------------------

class Corrected:
    """A person's correction: their text replaces what the route proposed to them, their gender marking decides
    (``corrected_verdict``); the route's checks, method, reason and flags stay, with the person's flag added."""

    def __init__(self, route: Route):
        self.route = route

    def decide(self, source: Source) -> Outcome:
        c = source.correction
        shown = self.route.proposal(source)
        masculine, feminine = corrected_texts(c, shown.masculine, shown.feminine)
        verdict, masculine, feminine = corrected_verdict(c, masculine, feminine, shown.check_masculine,
                                                         shown.check_feminine)
        return replace(shown, verdict=verdict, masculine=masculine, feminine=feminine,
                       flags=shown.flags + ([c.flag] if c.flag else []), proposal=(shown.masculine, shown.feminine))


class _MTPair:
    """The MT route's common part: the two template outputs stripped, and the pair's review flags."""

    name = "mt"
    layer: GenderLayer | None = None

    def __init__(self, lang: Language, pattern: str, lexicon_cache: Path | None):
        self.lang, self.lexicon_cache = lang, lexicon_cache
        self.rx = compile_pattern(pattern, lang.code)

    def strip(self, row: dict) -> tuple[Stripped, Stripped]:
        return (strip_template(row["output_masculine"], row["source_text"], self.rx),
                strip_template(row["output_feminine"], row["source_text"], self.rx))

    @staticmethod
    def output_flags(source: Source) -> list[str]:
        return [f"masculine:{x}" for x in source.masculine.flags] + [f"feminine:{x}" for x in source.feminine.flags]

    def review_flags(self, outcome: Outcome) -> list[str]:
        """The verdicts of identical outputs named as flags too; ``different_words``: a pair whose feminine is not
        the masculine's inflection (pt advogado / procuradora)."""
        flags = [outcome.verdict.value] if outcome.verdict in (Verdict.UNINFLECTED_FEMININE,
                                                              Verdict.MASCULINE_IS_FEMININE) else []
        if outcome.verdict in PAIR_VERDICTS and self.different_words(outcome.masculine, outcome.feminine):
            flags.append("different_words")
        return flags

    def different_words(self, m: str | None, f: str | None) -> bool:
        """With a lexicon: word by word through the gender layer; without one: heads sharing fewer than 3 leading
        letters."""
        if not m or not f:
            return False
        if self.layer is not None:
            return not self.layer.consistent(m, f, "f")
        hm, hf = head_word(self.lang, m) or "", head_word(self.lang, f) or ""
        return len(hm) >= 3 and len(hf) >= 3 and hm[:3] != hf[:3]


class MTPairByLexicon(_MTPair):
    """The MT route where the pack declares a lexicon: the gender layer reads the pair, confirms the feminine word
    by word or makes it again (``reinflected``), and the decision must be earned (``earned``)."""

    def prepare(self, sources: list[Source]) -> None:
        self.layer = GenderLayer(self.lang, self.lexicon_cache)
        self._methods: dict[str, str] = {}  # layer_method of each decision's method: a few values, asked once each
        texts = [corrected_texts(s.correction, s.masculine.title, s.feminine.title) for s in sources]
        self.layer.prepare([t for pair in texts for t in pair if t]
                           + [x.title for s in sources for x in (s.masculine, s.feminine) if x.title])

    def decide(self, source: Source) -> Outcome:
        d = self.layer.decide(source.masculine.title, source.feminine.title, source.english)
        d.flags += [x for x in self.layer.garbled(d.neutral or d.masculine or d.feminine or "") if x not in d.flags]
        d = earned(d)
        method = self._methods.get(d.method) or self._methods.setdefault(d.method, layer_method(self.layer, d.method))
        outcome = layer_outcome(d, method)
        flags = self.output_flags(source)
        outcome.flags = flags + [x for x in d.flags if x not in flags]
        return outcome

    def proposal(self, source: Source) -> Outcome:
        """What annotation suggested: the layer's forms of the machine text (pt Baker: padeira, made from padeiro,
        not the translator's padaria), unchecked (the person's marking decides)."""
        d = self.layer.decide(source.masculine.title, source.feminine.title, source.english)
        masculine, feminine = decision_titles(d)
        return Outcome(Verdict(d.verdict), masculine, feminine, flags=self.output_flags(source))


class MTPairByRules(_MTPair):
    """The MT route where the pack declares no lexicon: the ending rules of builder/gender.py check each title
    (a person's text where there is one) and ``decide_pair`` gives the verdict. An echoed English title cannot be
    told from a loanword here: it fails."""

    def strip(self, row: dict) -> tuple[Stripped, Stripped]:
        pair = super().strip(row)
        for s in pair:
            if "echo" in s.flags:
                s.title = None
        return pair

    def prepare(self, sources: list[Source]) -> None:
        batch = []
        for s in sources:
            masculine, feminine = corrected_texts(s.correction, s.masculine.title, s.feminine.title)
            batch += [(masculine, s.masculine.article), (feminine, s.feminine.article)]
        checks = check_many(self.lang, batch)
        self._checks = {id(s): (checks[2 * i], checks[2 * i + 1]) for i, s in enumerate(sources)}

    def decide(self, source: Source) -> Outcome:
        (mc, m_method), (fc, f_method) = self._checks[id(source)]
        masculine, feminine = source.masculine.title, source.feminine.title
        return Outcome(decide_pair(masculine, feminine, mc, fc), masculine, feminine, mc, fc, m_method, f_method,
                       flags=self.output_flags(source))

    proposal = decide  # its checks already read the person's text (prepare)


def decide_given(layer, title: str, english: str, keeps_case: bool) -> Decision:
    """The decision for one given title: read as the masculine base unless the layer finds it feminine; the
    verdicts of the MT route's pair logic renamed for a single base (``inflected``: the other form made)."""
    plain, inclusive = split_inclusive(title)
    d: Decision = layer.decide(plain if keeps_case else normalise(plain), None, english)
    flags = [f for f in d.flags if f not in ("masculine_is_feminine", "reinflected_feminine", "reinflected_masculine",
                                             "feminine_output_read", "from_feminine_output")]
    if inclusive:
        flags.append("inclusive_base")
    if d.verdict == Verdict.UNVERIFIED:  # a title the layer cannot vouch for (de, nl, pl): the given text, for review
        d = replace(d, verdict=Verdict.UNVERIFIED, masculine=d.masculine or normalise(plain), feminine=None,
                    neutral=None)
    if d.verdict == Verdict.REINFLECTED:
        base = "feminine_base" if "reinflected_masculine" in d.flags else "masculine_base"
        d = replace(d, verdict=Verdict.INFLECTED, flags=flags + [base],
                    reason="the given title is feminine; the masculine made by the gender layer" if base == "feminine_base"
                    else "the given title is masculine; the feminine made by the gender layer")
    else:
        d = replace(d, flags=flags)
    d = earned(d, given=True)
    if keeps_case:  # the texts of the set are lowercase, as the MT route's (the paper's step 3)
        d = replace(d, **{k: normalise(getattr(d, k)) if getattr(d, k) else getattr(d, k)
                          for k in ("masculine", "feminine", "neutral")})
    return d


class GivenTranslation:
    """The reference route (builder/reference.py): one given title per source, read by the pack's gender layer
    (builder/layers.py), which makes the other form (``decide_given``). A person is shown this decision."""

    name = "reference"

    def __init__(self, lang: Language, lexicon_cache: Path | None):
        self.lang, self.lexicon_cache = lang, lexicon_cache

    def strip(self, row: dict) -> tuple[Stripped, Stripped]:
        given = row["output_masculine"]
        return Stripped(normalise(given) if given else None, None), Stripped(None, None)

    def prepare(self, sources: list[Source]) -> None:
        self.layer = make_layer(self.lang, self.lexicon_cache)
        self.keeps_case = layer_keeps_case(self.lang)  # German tells nouns from adjectives by their capital
        self.layer.prepare([self._read(s) for s in sources])

    def _read(self, source: Source) -> str:
        given = source.row["output_masculine"]
        return given if self.keeps_case else normalise(given)

    def decide(self, source: Source) -> Outcome:
        d = decide_given(self.layer, source.row["output_masculine"], source.english, self.keeps_case)
        return layer_outcome(d, layer_method(self.layer, d.method))

    proposal = decide

    def review_flags(self, outcome: Outcome) -> list[str]:
        return []


class NoTranslation:
    """Route ``none``: no confident alignment to the given translation and no MT route for the language."""

    name = "none"

    def strip(self, row: dict) -> tuple[Stripped, Stripped]:
        given = row["output_masculine"]
        return Stripped(normalise(given) if given else None, None), Stripped(None, None)

    def prepare(self, sources: list[Source]) -> None:
        pass

    def decide(self, source: Source) -> Outcome:
        return Outcome(Verdict.UNALIGNED, reason="no confident alignment and no MT route", flags=["unaligned"])

    proposal = decide

    def review_flags(self, outcome: Outcome) -> list[str]:
        return []


def make_routes(names: list[str], lang: Language, pattern: str, lexicon_cache: Path | None) -> dict[str, Route]:
    """The strategy of each route named (only those: the MT route's pattern is compiled, a layer loaded, only when
    a source takes it)."""
    routes: dict[str, Route] = {}
    for name in names:
        if name == "mt":
            routes[name] = (MTPairByLexicon if lang.lexicon else MTPairByRules)(lang, pattern, lexicon_cache)
        elif name == GivenTranslation.name:
            routes[name] = GivenTranslation(lang, lexicon_cache)
        else:
            routes[name] = NoTranslation()
    return routes
