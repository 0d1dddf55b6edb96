"""Record building, pooling and the corrections file, without a server."""

import json

import polars as pl
import pytest

from annotation import AnnotationError
from annotation.corrections import merge, read_corrections, write_jsonl_atomic
from annotation.push import RecordSpec, Suggested
from annotation.relevance import audit_candidates, labelled_source_pairs, pool_candidates, record_specs
from annotation.translations import read_translations, record_specs as translation_specs
from eval.testset import read_testset
from tests.annotation.conftest import write_tiny_testset


def test_translation_records_in_doubt_order_with_suggestions_from_the_verdict(tmp_path):
    write_tiny_testset(tmp_path)
    specs = translation_specs(read_translations(tmp_path, "pt"), "pt")
    assert [(s.id, s.metadata["severity"]) for s in specs] == [
        ("pt-translation-Attorney", "serious"),  # template_not_stripped
        ("pt-translation-Baker", "check"), ("pt-translation-Waiter", "check"),  # a flag not in the table; a review verdict
        ("pt-translation-Data_Analyst", "none"), ("pt-translation-Lawyer", "none"), ("pt-translation-Nurse", "none"),
    ]
    # worst first, and the metadata Argilla sorts by rises along that order (the UI sorts ascending first)
    assert [s.metadata["confidence"] for s in specs] == sorted(s.metadata["confidence"] for s in specs)
    baker = specs[1]
    assert {q: s.value for q, s in baker.suggestions.items()} == {
        "masculine": "padeiro", "feminine": "padaria", "gender_marking": "gendered"}
    # every suggestion says who made it and how sure it is (1 - doubt)
    assert baker.suggestions["feminine"].agent == "MT" and baker.suggestions["feminine"].score == baker.metadata["confidence"]
    assert baker.metadata["flags"] == ["wrong_sense"] and baker.metadata["needs_review"] == "yes"
    assert "She is a Baker. → Ela é uma padaria." in baker.fields["source"]
    assert baker.fields["titles"] == ("Proposed: padeiro (masculine) · padaria (feminine)\n"
                                      "The translation's own: padeiro (masculine) · padaria (feminine)")
    assert (baker.metadata["proposed_masculine"], baker.metadata["proposed_feminine"]) == ("padeiro", "padaria")
    assert specs[3].suggestions["gender_marking"].value == "neutral"
    assert "flags" not in specs[4].metadata  # no flag: no value to filter on


def test_marking_suggested_from_the_verdict_and_forms():
    from annotation.translations import suggested_marking

    def row(verdict, m, f):
        return {"verdict": verdict, "title_masculine": m, "title_feminine": f}

    assert suggested_marking(row("masculine_only", "bombeiro", None)) == "masculine_only"
    assert suggested_marking(row("feminine_only", None, "parteira")) == "feminine_only"
    assert suggested_marking(row("unverified", "pessoal da cozinha", None)) == "masculine_only"
    assert suggested_marking(row("neutral", "analista", "analista")) == "neutral"
    assert suggested_marking(row("inflected", "diretor", "diretora")) == "gendered"
    # a thing, not a person: the drop is pre-selected, confirmed with one click (issue 35)
    assert suggested_marking(row("not_a_person", None, None)) == "no_title"
    assert suggested_marking(row("failed", None, None)) is None


def test_reinflected_record_shows_the_machines_title_and_what_the_lexicon_changed(tmp_path):
    from annotation.doubt import doubt

    write_tiny_testset(tmp_path)
    path = tmp_path / "pt" / "translations.parquet"
    df = pl.read_parquet(path).with_columns(
        pl.when(pl.col("source_id") == "Nurse").then(pl.lit("rede de enfermeiro")).otherwise(pl.col("mt_feminine"))
        .alias("mt_feminine"),
        pl.when(pl.col("source_id") == "Nurse").then(pl.lit("reinflected")).otherwise(pl.col("verdict")).alias("verdict"),
        pl.when(pl.col("source_id") == "Nurse").then(pl.lit(["reinflected_feminine"])).otherwise(pl.col("flags"))
        .alias("flags"))
    df.write_parquet(path)
    nurse = next(s for s in translation_specs(read_translations(tmp_path, "pt"), "pt") if s.id.endswith("Nurse"))
    assert nurse.fields["titles"] == ("Proposed: enfermeiro (masculine) · enfermeira (feminine)\n"
                                      "The translation's own: enfermeiro (masculine) · rede de enfermeiro (feminine)")
    assert "The feminine title was changed by the ending rule: 'rede de enfermeiro' → 'enfermeira'." in nurse.fields["check"]
    assert nurse.suggestions["feminine"].agent == "ending rule" and nurse.suggestions["masculine"].agent == "MT"
    # routine, lifted by the outputs' word difference: "rede" and "de" have no counterpart, 2 of 3 words
    d = doubt(df.filter(pl.col("source_id") == "Nurse").row(0, named=True))
    assert d.severity == "routine" and d.signal == round(2 / 3, 4) and nurse.metadata["confidence"] == round(1 - round(0.1 + 0.5 * 2 / 3, 4), 4)


def test_non_gender_difference_counts_words_that_are_not_inflections():
    from annotation.doubt import non_gender_difference

    assert non_gender_difference("diretor de contas", "diretora de contas") == 0.0
    assert non_gender_difference("engenheiro de rede", "rede de engenheiro") == 1 / 3  # same words, other order
    assert non_gender_difference("padeiro", "padaria") == 1.0  # a bakery is no inflection of a baker
    assert non_gender_difference("assistente cozinheiro", "cozinheira assistente") == 1 / 2
    assert non_gender_difference(None, "x") == 0.0


def test_severity_order_and_the_alignment_signal():
    from annotation.doubt import doubt

    base = {"title_masculine": "a", "title_feminine": "b", "mt_masculine": "a", "mt_feminine": None,
            "route": "reference"}
    unsure = doubt({**base, "verdict": "inflected", "flags": ["masculine_base"], "alignment_margin": 0.06})
    sure = doubt({**base, "verdict": "inflected", "flags": ["masculine_base"], "alignment_margin": 0.45})
    plain = doubt({**base, "verdict": "neutral", "flags": [], "alignment_margin": 0.0})
    serious = doubt({**base, "verdict": "unverified", "flags": ["untranslated"], "alignment_margin": 0.9})
    assert (sure.severity, sure.score) == ("routine", 0.1)
    assert unsure.score == round(0.1 + 0.5 * (1 - 0.06 / 0.3), 4) and "margin 0.06" in unsure.why
    assert plain.score == 0.6 and serious.score == 0.8  # an unflagged doubt never above a flagged problem
    assert doubt({**base, "verdict": "unverified", "flags": ["no_feminine_form"], "title_feminine": None,
                  "alignment_margin": 0.3}).severity == "check"


def test_content_hash_changes_with_content_only():
    a = RecordSpec("r", {"f": "x"}, {"m": 1}, {"q": Suggested("y", 0.5, "MT")})
    assert a.content_hash() == RecordSpec("r", {"f": "x"}, {"m": 1}, {"q": Suggested("y", 0.5, "MT")}).content_hash()
    assert a.content_hash() != RecordSpec("r", {"f": "x"}, {"m": 1}, {"q": Suggested("z", 0.5, "MT")}).content_hash()
    # a new score or agent is a change to push too
    assert a.content_hash() != RecordSpec("r", {"f": "x"}, {"m": 1}, {"q": Suggested("y", 0.6, "MT")}).content_hash()


def test_missing_translations_file_and_column(tmp_path):
    with pytest.raises(AnnotationError, match="translations.parquet: file missing"):
        read_translations(tmp_path, "pt")
    write_tiny_testset(tmp_path)
    path = tmp_path / "pt" / "translations.parquet"
    pl.read_parquet(path).drop("verdict").write_parquet(path)
    with pytest.raises(AnnotationError, match=r"missing column\(s\) \['verdict'\]"):
        read_translations(tmp_path, "pt")


def test_the_columns_annotation_reads_have_the_types_the_builder_writes():
    from annotation.translations import REQUIRED_COLUMNS
    from builder.postprocess import ROW_SCHEMA, TRANSLATIONS_COLUMNS
    from builder.translate import RAW_SCHEMA

    written = {**RAW_SCHEMA, **ROW_SCHEMA}
    assert set(REQUIRED_COLUMNS) <= set(TRANSLATIONS_COLUMNS)
    assert {name: written[name] for name in REQUIRED_COLUMNS} == REQUIRED_COLUMNS


def test_pooling_union_of_top_k_without_labelled_pairs_or_self_matches(tmp_path):
    ts = write_tiny_testset(tmp_path)
    assert labelled_source_pairs(ts) == {("Lawyer", "Attorney")}
    rankings = {
        "model-a": {"q-Lawyer-masculine": ["d-Lawyer-masculine", "d-Attorney-masculine", "d-Nurse-masculine",
                                           "d-Baker-masculine"]},
        "model-b": {"q-Lawyer-feminine": ["d-Baker-feminine", "d-Nurse-feminine", "d-Waiter-neutral"]},
    }
    pooled = pool_candidates(ts, rankings, depth=2)
    # model-a top 2: Lawyer (self), Attorney (labelled) -> nothing; model-b top 2: Baker, Nurse
    assert [(c.query_source_id, c.doc_source_id, c.best_rank, c.models) for c in pooled] == [
        ("Lawyer", "Baker", 1, {"model-b"}), ("Lawyer", "Nurse", 2, {"model-b"}),
    ]
    pooled3 = pool_candidates(ts, rankings, depth=3)
    assert {(c.doc_source_id, c.best_rank) for c in pooled3} == {("Baker", 1), ("Nurse", 2), ("Waiter", 3)}
    assert {c.doc_source_id: c.models for c in pooled3}["Nurse"] == {"model-a", "model-b"}
    # pairs people already decided are not proposed again
    assert [c.doc_source_id for c in pool_candidates(ts, rankings, 2, known={("Lawyer", "Baker")})] == ["Nurse"]
    with pytest.raises(ValueError, match="not in the pt test set"):
        pool_candidates(ts, {"m": {"nope": []}}, 2)


def test_audit_sample_is_seeded_and_records_show_translations(tmp_path):
    ts = write_tiny_testset(tmp_path, relevant=(("Lawyer", "Attorney"), ("Nurse", "Waiter"), ("Baker", "Nurse")))
    a, b = audit_candidates(ts, 2, seed=0), audit_candidates(ts, 2, seed=0)
    assert [(c.query_source_id, c.doc_source_id) for c in a] == [(c.query_source_id, c.doc_source_id) for c in b]
    assert len(a) == 2 and all(c.origin == "audit" for c in a)
    assert len(audit_candidates(ts, 10, seed=0)) == 3
    spec = record_specs(read_testset(tmp_path, "pt"), a[:1])[0]
    assert spec.id == f"pt-relevance-{a[0].query_source_id}-{a[0].doc_source_id}"
    assert spec.metadata["origin"] == "audit" and spec.suggestions == {}


def _t(sid, when, m="x"):
    return {"kind": "translation", "lang": "pt", "source_id": sid, "record_id": f"pt-translation-{sid}",
            "masculine": m, "feminine": None, "gender_marking": "gendered", "flag": None,
            "annotators": ["ana"], "submitted_at": when}


def test_corrections_merge_keeps_old_lines_and_newest_wins(tmp_path):
    old = [_t("A", "2026-01-01T00:00:00Z", "old-a"), _t("B", "2026-01-01T00:00:00Z")]
    new = [_t("A", "2026-02-01T00:00:00Z", "new-a")]
    result = merge(old, new)
    merged = result.lines
    assert [(x["source_id"], x["masculine"]) for x in merged] == [("A", "new-a"), ("B", "x")]
    assert (result.new, result.changed, result.kept) == (0, 1, 0)
    older = merge(new, [_t("A", "2025-12-01T00:00:00Z", "older")])
    assert older.lines[0]["masculine"] == "new-a" and older.older == 1


def test_the_same_answers_pulled_again_keep_the_line_already_pulled():
    """Issue 35: after a rebuild and re-push the proposal is the person's own text, so their unchanged answer,
    compared with it again, would read as "no correction" (null). The same annotators at the same time are the
    answers already pulled: the line in the file stays as it is, whatever the new comparison gives."""
    first = _t("A", "2026-01-01T00:00:00Z", "professora emérita")
    again = dict(first, masculine=None)
    result = merge([first], [again])
    assert result.lines == [first] and (result.new, result.changed, result.kept) == (0, 0, 1)
    # a second annotator's newer answer is news: it replaces the line
    newer = dict(again, annotators=["ana", "rui"], submitted_at="2026-01-02T00:00:00Z")
    assert merge([first], [newer]).lines == [newer]


def test_corrections_merge_file_round_trip(tmp_path):
    merged = merge([_t("A", "2026-01-01T00:00:00Z", "old-a"), _t("B", "2026-01-01T00:00:00Z")], []).lines
    path = tmp_path / "c" / "pt.jsonl"
    write_jsonl_atomic(merged, path)
    assert read_corrections(path) == merged
    assert [p.name for p in path.parent.iterdir()] == ["pt.jsonl"]  # no temporary file left


def test_corrections_errors_name_the_line(tmp_path):
    path = tmp_path / "pt.jsonl"
    bad = dict(_t("A", "2026-01-01T00:00:00Z"), flag="typo")
    path.write_text(json.dumps(_t("B", "2026")) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(AnnotationError, match=r"pt.jsonl:2: flag 'typo'"):
        read_corrections(path)
    path.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(AnnotationError, match=r"pt.jsonl:1: not valid JSON"):
        read_corrections(path)


def test_model_rankings_with_tfidf_char_feed_the_pool(tmp_path):
    from annotation.relevance import model_rankings

    ts = write_tiny_testset(tmp_path)
    rankings = model_rankings(ts, ["tfidf-char"], depth=3)["tfidf-char"]
    assert set(rankings) == set(ts.queries["id"].to_list())
    # every list is the corpus of the query's gender, without the query's own title
    assert rankings["q-Nurse-feminine"][0] != "d-Nurse-feminine" and len(rankings["q-Nurse-feminine"]) == 3
    assert all(not d.endswith("-masculine") for d in rankings["q-Nurse-feminine"])
    assert all(not d.startswith("d-Nurse-") for d in rankings["q-Nurse-masculine"])


def test_gender_marking_offers_the_issues_three_values_and_the_file_carries_them(tmp_path):
    from annotation.corrections import GENDER_MARKINGS
    from annotation.translations import GENDER_MARKING_LABELS

    # masculine / feminine (a pair), neutral, and a title in one gender only; the file carries the same keys
    # the UI offers the file's markings and "no title", which confirms a drop (null in the file)
    assert tuple(GENDER_MARKING_LABELS) == (*GENDER_MARKINGS, "no_title")
    assert set(GENDER_MARKINGS) == {"gendered", "neutral", "masculine_only", "feminine_only"}
    path = tmp_path / "pt.jsonl"
    lines = [dict(_t("A", "2026-01-01T00:00:00Z"), gender_marking="masculine_only"),
             dict(_t("B", "2026-01-01T00:00:00Z"), gender_marking="feminine_only")]
    write_jsonl_atomic(lines, path)
    assert [x["gender_marking"] for x in read_corrections(path, "pt")] == ["masculine_only", "feminine_only"]
    write_jsonl_atomic([dict(lines[0], gender_marking="masculine")], path)
    with pytest.raises(AnnotationError, match=r"pt.jsonl:1: gender_marking 'masculine' not one of"):
        read_corrections(path)


def test_pull_line_carries_the_marking_and_nulls_unchanged_titles():
    from annotation.pull import PulledRecord, Vote, decide, translation_answers, translation_line

    record = PulledRecord("pt-translation-Midwife", {"source": "…"},
                          {"source_id": "Midwife", "proposed_masculine": "parteiro", "proposed_feminine": "parteira"}, [
                              Vote("ana", {"masculine": "parteiro", "feminine": " Parteira", "gender_marking": "feminine_only"},
                                   "2026-01-01T10:00:00Z"),
                              Vote("rui", {"masculine": "Parteiro", "feminine": "parteira", "gender_marking": "feminine_only"},
                                   "2026-01-02T10:00:00Z"),
                          ])
    decided, tied = decide(record, translation_answers)
    assert tied == []
    line = translation_line(record, "pt", decided)
    assert (line["masculine"], line["feminine"], line["gender_marking"]) == (None, None, "feminine_only")
    assert line["annotators"] == ["ana", "rui"] and line["submitted_at"] == "2026-01-02T10:00:00Z"


def test_corrections_file_of_another_language_is_refused(tmp_path):
    path = tmp_path / "pt.jsonl"
    write_jsonl_atomic([dict(_t("A", "2026-01-01T00:00:00Z"), lang="es")], path)
    assert read_corrections(path)[0]["lang"] == "es"
    with pytest.raises(AnnotationError, match=r"pt.jsonl:1: lang 'es' in the corrections file of 'pt'"):
        read_corrections(path, "pt")


def test_an_empty_title_box_keeps_the_proposed_title_and_old_datasets_still_pull():
    from annotation.pull import PulledRecord, Vote, decide, translation_answers, translation_line

    def line(fields, values, metadata=None):
        record = PulledRecord("pt-translation-Firefighter", fields, {"source_id": "Firefighter", **(metadata or {})},
                              [Vote("ana", values, "2026-01-01T10:00:00Z")])
        return translation_line(record, "pt", decide(record, translation_answers)[0])

    proposed = {"proposed_masculine": "bombeiro", "proposed_feminine": "bombeira"}
    # boxes left empty (no value sent): null, the build keeps its proposed titles
    empty = line({"source": "…"}, {"gender_marking": "masculine_only"}, proposed)
    assert (empty["masculine"], empty["feminine"], empty["gender_marking"]) == (None, None, "masculine_only")
    kept = line({"source": "…"}, {"masculine": "Bombeiro", "feminine": "bombeira civil", "gender_marking": "gendered"},
                proposed)
    assert (kept["masculine"], kept["feminine"]) == (None, "bombeira civil")
    # a dataset pushed with the first layout: its machine_<gender> fields held the proposed titles
    old = {"template_sentences": "…", "machine_masculine": "bombeiro", "machine_feminine": "bombeira"}
    assert line(old, {"masculine": "bombeiro", "feminine": "bombeira", "gender_marking": "gendered"})[
        "masculine"] is None


def test_suggestion_agents_are_what_argilla_server_accepts():
    """argilla-server 2.8 refuses an agent outside ^[a-zA-Z0-9-_:./\\s]*[a-zA-Z0-9][a-zA-Z0-9-_:./\\s]*$ (422)."""
    import re

    from annotation.translations import _form_agent

    accepted = re.compile(r"^[a-zA-Z0-9\-_:\.\/\s]*[a-zA-Z0-9][a-zA-Z0-9\-_:\.\/\s]*$")
    row = {"title_masculine": "a", "title_feminine": "b", "mt_masculine": "x", "mt_feminine": "y", "route": "mt",
           "translator": "bergamot"}
    for method in ("lexicon:apertium-es-pt+rule:pt-endings+hunspell:pt_BR+pt_PT", "spacy:fr_core_news_sm(agreement)",
                   "forms:es-doublet", ""):
        agent = _form_agent({**row, "check_method": method}, "feminine")
        assert accepted.match(agent), agent
    assert _form_agent({**row, "check_method": "lexicon:apertium-es-pt+rule:pt-endings+hunspell:pt_BR+pt_PT"},
                       "feminine") == "lexicon and ending rule and word list"


def test_annotators_see_the_sentence_the_builder_sent_with_its_article(tmp_path):
    # A real tiny build (Apertium EN->ES): the record's source field shows the builder's template sentences, so an
    # annotator reads "He is an accountant." where the English needs "an", and "He is a lawyer." elsewhere.
    from builder.__main__ import main
    from builder.translators import offline_available
    from tests.builder.test_build import tiny_source

    if not offline_available("apertium", "es"):
        pytest.skip("apertium-eng-spa not installed")
    src = tiny_source(tmp_path / "en")
    assert main(["build", "--source", str(src), "--lang", "es", "--route", "mt", "--translator", "apertium",
                 "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"), "--quiet"]) == 0
    specs = {s.id: s for s in translation_specs(read_translations(tmp_path / "out", "es"), "es")}
    shown = {sid: specs[f"es-translation-{sid}"].fields["source"] for sid in ("Accountant", "Engineer", "Lawyer")}
    assert "He is an Accountant. → " in shown["Accountant"] and "She is an Accountant. → " in shown["Accountant"]
    assert "He is an Engineer. → " in shown["Engineer"]
    assert "He is a Lawyer. → " in shown["Lawyer"] and "She is a Lawyer. → " in shown["Lawyer"]
