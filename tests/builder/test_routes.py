"""The decide step's strategies, one at a time (builder/routes.py), and the pipeline's steps (builder/postprocess.py).

Each expected verdict follows from the verdict's definition (builder/verdict.py ``Verdict.meaning``) and the
route's rule, never from a run of the code: a pair whose two checked forms differ is ``gendered``; identical
forms checked masculine are an ``uninflected_feminine``; a person's marking decides over the machine's.
"""

import json

import polars as pl
import pytest

from builder.corrections import Corrections, TranslationCorrection
from builder.gender import F, M, N, U
from builder.params import load_params, strip_pattern_for
from builder.postprocess import ROW_SCHEMA, decide_source, forms_of, process_translations, strip_source, translation_row
from builder.routes import (
    Corrected, GivenTranslation, MTPairByLexicon, MTPairByRules, NoTranslation, Outcome, Source, corrected_verdict,
    decide_pair, make_routes,
)
from builder.strip import Stripped
from builder.translate import RAW_SCHEMA
from builder.verdict import NEEDS_REVIEW, PAIR_VERDICTS, Verdict
from languages import load

BUILD = load_params()["build"]


def mt_row(sid, english, masculine, feminine):
    return {"source_id": sid, "source_text": english, "in_queries": False, "in_corpus": True,
            "sentence_masculine": f"He is a {english}.", "sentence_feminine": f"She is a {english}.",
            "output_masculine": masculine, "output_feminine": feminine, "translator": "fixture",
            "translator_version": "1"}


def given_row(sid, english, title, route="reference"):
    return mt_row(sid, english, title, None) | {"route": route}


def correction(sid="x", masculine=None, feminine=None, marking="gendered", flag=None):
    return TranslationCorrection(sid, masculine, feminine, marking, flag, ("ann",))


def decided(route, rows, corrections=None):
    """Each row through strip → prepare → decide, as process_translations runs them, with its Source."""
    corrections = Corrections(translations={c.source_id: c for c in corrections or ()})
    sources = [strip_source(route, r, corrections) for r in rows]
    route.prepare(sources)
    return [(s, decide_source(route, Corrected(route), s)) for s in sources]


# --- the verdict ----------------------------------------------------------------------------------------------

def test_a_verdict_is_its_word_in_every_file():
    assert Verdict.GENDERED == "gendered" and Verdict("inflected") is Verdict.INFLECTED
    assert json.dumps({Verdict.NEUTRAL: 1}) == '{"neutral": 1}' and f"{Verdict.FAILED}" == "failed"
    assert all(v.meaning for v in Verdict) and set(PAIR_VERDICTS) | set(NEEDS_REVIEW) <= set(Verdict)
    assert not set(PAIR_VERDICTS) & set(NEEDS_REVIEW)


def test_the_verdict_column_is_a_string_column():
    """polars makes a column of Python enum members a pl.Enum: the frame must hold the words (String)."""
    raw = pl.DataFrame([mt_row("Engineer", "Engineer", "Er ist Ingenieur.", "Sie ist Ingenieurin.")], schema=RAW_SCHEMA)
    out = process_translations(raw, "de", strip_pattern_for(BUILD, "de"))
    assert out.schema["verdict"] == pl.String and out["verdict"].to_list() == ["gendered"]
    assert {name: out.schema[name] for name in ROW_SCHEMA} == ROW_SCHEMA


# --- the MT pair by the ending rules: decide_pair ---------------------------------------------------------------

@pytest.mark.parametrize("m, f, mc, fc, verdict", [
    (None, None, U, U, Verdict.FAILED),                          # both outputs failed
    ("ingenieur", None, M, U, Verdict.ONE_FORM_FAILED),           # one output failed
    (None, "ingenieurin", U, F, Verdict.ONE_FORM_FAILED),
    ("analista", "analista", N, N, Verdict.NEUTRAL),              # identical, checked common-gender
    ("ingenieur", "ingenieur", M, M, Verdict.UNINFLECTED_FEMININE),  # identical, checked masculine
    ("caixa", "caixa", N, M, Verdict.UNINFLECTED_FEMININE),       # a feminine output read masculine: never neutral
    ("enfermeira", "enfermeira", F, F, Verdict.MASCULINE_IS_FEMININE),  # identical, checked feminine
    ("xyz", "xyz", U, U, Verdict.UNVERIFIED_IDENTICAL),           # identical, unclassified
    ("advogada", "advogada2", F, F, Verdict.WRONG_GENDER_FORM),   # forms differ, one checked as the other gender
    ("advogado", "advogado2", M, M, Verdict.WRONG_GENDER_FORM),
    ("advogado", "advogada", M, F, Verdict.GENDERED),             # forms differ, checks do not contradict them
    ("advogado", "advogada", U, U, Verdict.GENDERED),
])
def test_decide_pair_follows_the_verdicts_definitions(m, f, mc, fc, verdict):
    assert decide_pair(m, f, mc, fc) is verdict


def test_mt_pair_by_rules_checks_each_output_and_flags_the_verdict():
    de = load("de")  # no lexicon declared: the ending rules decide the MT route
    route = make_routes(["mt"], de, strip_pattern_for(BUILD, "de"), None)["mt"]
    assert isinstance(route, MTPairByRules)
    (s1, pair), (s2, same), (s3, echo) = decided(route, [
        mt_row("a", "Engineer", "Er ist Ingenieur.", "Sie ist Ingenieurin."),
        mt_row("b", "Engineer", "Er ist Ingenieur.", "Sie ist Ingenieur."),
        mt_row("c", "Airline Pilot", "Er ist Pilot.", "Sie ist Airline Pilot."),
    ])
    assert (pair.verdict, pair.masculine, pair.feminine, pair.check_masculine, pair.check_feminine) == \
        (Verdict.GENDERED, "ingenieur", "ingenieurin", M, F)
    assert pair.method_masculine == "rule:de-suffix" and pair.flags == []
    assert same.verdict is Verdict.UNINFLECTED_FEMININE and same.flags == ["uninflected_feminine"]
    # an echo cannot be told from a loanword without a lexicon: the output fails, its flag stays
    assert s3.feminine.title is None and echo.verdict is Verdict.ONE_FORM_FAILED
    assert echo.flags == ["feminine:echo"]


def test_mt_pair_by_rules_checks_the_persons_text():
    de = load("de")
    route = MTPairByRules(de, strip_pattern_for(BUILD, "de"), None)
    # The translator gave the masculine twice; the person wrote the feminine: checked, a pair.
    [(source, outcome)] = decided(route, [mt_row("a", "Engineer", "Er ist Ingenieur.", "Sie ist Ingenieur.")],
                                  [correction("a", feminine="Ingenieurin")])
    assert (outcome.verdict, outcome.masculine, outcome.feminine) == (Verdict.GENDERED, "ingenieur", "ingenieurin")
    assert outcome.check_feminine == F and source.feminine.title == "ingenieur"  # the machine's text stays in mt_*


# --- the MT pair by the lexicon ---------------------------------------------------------------------------------

def test_mt_pair_by_lexicon_confirms_or_remakes_the_feminine():
    pt = load("pt")
    route = make_routes(["mt"], pt, strip_pattern_for(BUILD, "pt"), None)["mt"]
    assert isinstance(route, MTPairByLexicon)
    (_, lawyer), (_, waiter) = decided(route, [
        mt_row("Lawyer", "Lawyer", "Ele é um advogado.", "Ela é uma advogada."),
        mt_row("Waiter", "Waiter", "Ele é um garçom.", "Ela é uma garçom."),  # still masculine: made again
    ])
    assert (lawyer.verdict, lawyer.masculine, lawyer.feminine, lawyer.check_masculine, lawyer.check_feminine) == \
        (Verdict.GENDERED, "advogado", "advogada", M, F)
    assert lawyer.method_masculine.startswith("lexicon:") or "apertium" in lawyer.method_masculine
    assert waiter.verdict is Verdict.REINFLECTED and waiter.feminine != "garçom"
    assert "reinflected_feminine" in waiter.flags


def test_a_correction_on_the_lexicon_route_starts_from_the_layers_suggestion():
    """pt Baker: the person was shown the layer's padeira (made from padeiro), not the translator's padaria; a
    person who marks the pair gendered without typing keeps that suggestion, unchecked."""
    pt = load("pt")
    route = MTPairByLexicon(pt, strip_pattern_for(BUILD, "pt"), None)
    [(source, outcome)] = decided(route, [mt_row("Baker", "Baker", "Ele é um padeiro.", "Ela é uma padaria.")],
                                  [correction("Baker", marking="gendered")])
    assert source.feminine.title == "padaria"
    assert (outcome.verdict, outcome.masculine, outcome.feminine) == (Verdict.GENDERED, "padeiro", "padeira")
    assert (outcome.check_masculine, outcome.check_feminine, outcome.method_masculine) == (U, U, "none")


# --- the given translation and no translation -------------------------------------------------------------------

def test_given_translation_makes_the_other_form():
    pt = load("pt")
    route = make_routes(["reference"], pt, strip_pattern_for(BUILD, "pt"), None)["reference"]
    assert isinstance(route, GivenTranslation)
    (s, lawyer), (_, nurse) = decided(route, [given_row("Lawyer", "Lawyer", "Advogado"),
                                              given_row("Nurse", "Nurse", "Enfermeira")])
    assert (lawyer.verdict, lawyer.masculine, lawyer.feminine) == (Verdict.INFLECTED, "advogado", "advogada")
    assert "masculine_base" in lawyer.flags and (s.masculine.title, s.feminine.title) == ("advogado", None)
    assert (nurse.verdict, nurse.masculine, nurse.feminine) == (Verdict.INFLECTED, "enfermeiro", "enfermeira")
    assert "feminine_base" in nurse.flags
    assert route.review_flags(lawyer) == []  # the MT pair's flags are not the given route's


def test_no_translation_is_unaligned_and_gives_no_item_until_a_person_writes_one():
    route = NoTranslation()
    (_, none), (_, fixed) = decided(route, [given_row("a", "Pilot", None, "none"), given_row("b", "Baker", None, "none")],
                                    [correction("b", "Padeiro", "Padeira")])
    assert (none.verdict, none.masculine, none.feminine, none.flags) == (Verdict.UNALIGNED, None, None, ["unaligned"])
    assert (fixed.verdict, fixed.masculine, fixed.feminine) == (Verdict.GENDERED, "padeiro", "padeira")


# --- people's corrections ---------------------------------------------------------------------------------------

class _Shown:
    """A route whose proposal is fixed: what the person was shown."""

    def __init__(self, outcome):
        self.outcome = outcome

    def proposal(self, source):
        return Outcome(**vars(self.outcome) | {"flags": list(self.outcome.flags)})


SHOWN = Outcome(Verdict.REINFLECTED, "advogado", "advogada", M, F, "lexicon", "lexicon", "made", ["reinflected_feminine"])


@pytest.mark.parametrize("fix, verdict, titles", [
    (correction(marking="gendered"), Verdict.GENDERED, ("advogado", "advogada")),   # confirmed as shown
    (correction(feminine="Advogada Sênior"), Verdict.GENDERED, ("advogado", "advogada sênior")),  # text normalised
    (correction(marking="neutral", masculine="Analista"), Verdict.NEUTRAL, ("analista", "analista")),
    (correction(marking="masculine_only"), Verdict.MASCULINE_ONLY, ("advogado", "advogada")),
    (correction(marking="feminine_only"), Verdict.FEMININE_ONLY, ("advogado", "advogada")),
    (correction(flag="not_a_job_title"), Verdict.DROPPED_BY_ANNOTATOR, ("advogado", "advogada")),
    (correction(flag="untranslatable"), Verdict.DROPPED_BY_ANNOTATOR, ("advogado", "advogada")),
    # every flag without a title drops (the UI's and FORMAT's word, issue 35: wrong sense once kept the title)
    (correction(flag="wrong_sense"), Verdict.DROPPED_BY_ANNOTATOR, ("advogado", "advogada")),
    (correction(flag="wrong_sense", feminine="padeira"), Verdict.GENDERED, ("advogado", "padeira")),
])
def test_a_persons_marking_decides(fix, verdict, titles):
    source = Source({}, Stripped("advogado", None), Stripped("advogada", None), fix)
    out = Corrected(_Shown(SHOWN)).decide(source)
    assert (out.verdict, (out.masculine, out.feminine)) == (verdict, titles)
    # the route's checks, method and reason stay; the person's flag is added
    assert (out.check_masculine, out.method_masculine, out.reason) == (M, "lexicon", "made")
    assert out.flags == ["reinflected_feminine"] + ([fix.flag] if fix.flag else [])


def test_a_single_form_or_neutral_marking_without_its_form_fails():
    assert corrected_verdict(correction(marking="feminine_only"), "advogado", None, M, U)[0] is Verdict.FAILED
    assert corrected_verdict(correction(marking="neutral"), None, None, U, U)[0] is Verdict.FAILED
    # equal texts marked gendered: the checks decide as on the rules route (identical, checked masculine)
    assert corrected_verdict(correction(), "juiz", "juiz", M, M)[0] is Verdict.UNINFLECTED_FEMININE


# --- the item step ----------------------------------------------------------------------------------------------

def test_the_row_and_its_items():
    source = Source({"source_id": "a"}, Stripped("advogado", "um"), Stripped("advogada", "uma"), None)
    outcome = Outcome(Verdict.GENDERED, "advogado", "advogada", M, F, "rule:pt-suffix", "spacy:x")
    row = translation_row(source, outcome)
    assert set(row) == set(ROW_SCHEMA) and row["verdict"] == "gendered" and type(row["verdict"]) is str
    assert (row["status"], row["check_method"], row["article_feminine"]) == ("machine", "rule:pt-suffix|spacy:x", "uma")
    items = forms_of(row)
    assert [(g, t) for g, t, _, _ in items] == [(M, "advogado"), (F, "advogada")]
    corrected = translation_row(Source({}, Stripped(None, None), Stripped(None, None), correction(marking="neutral")),
                                Outcome(Verdict.NEUTRAL, "analista", "analista", N, N))
    assert corrected["status"] == "corrected" and corrected["annotators"] == ["ann"]
    assert forms_of(corrected) == [(N, "analista", N, "human")]
