"""The given-translation route: the alignment of a translated copy to the English ids (builder/align.py), the
translated folder's refusals, and whole builds from it (builder/reference.py), with the real encoder (m-use, a
package's model) and the real gender layers."""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl
import pytest

from builder.__main__ import main
from builder.align import Aligned, Alignment, Relevance, agreed, align, trigram_similarity
from builder.errors import SourceError
from builder.reference import load_reference, reference_folder
from builder.strip import split_inclusive
from builder.source import load_source
from eval.testset import read_testset
from languages import load as load_language

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "jobtitlesimilarity" / "dataset"

# A small English set and its French copy as the dataset writes it: ids are the translated text, files sorted by
# it, and Lawyer and Attorney merged into one title (the same translation).
EN_QUERIES = {"Lawyer": "Lawyer", "Nurse": "Nurse", "Baker": "Baker", "Tax_Accountant": "Tax Accountant",
              "Private_Investigator": "Private Investigator"}
EN_CORPUS = {"Attorney": "Attorney", "Paralegal": "Paralegal", "Judge": "Judge", "Registered_Nurse": "Registered Nurse",
             "Midwife": "Midwife", "Pastry_Chef": "Pastry Chef", "Bread_Maker": "Bread Maker",
             "Accountant": "Accountant", "Auditor": "Auditor", "Detective": "Detective", "Security_Guard": "Security Guard",
             "Lawyer": "Lawyer", "Nurse": "Nurse", "Gardener": "Gardener"}
EN_QRELS = [("Lawyer", "Attorney"), ("Lawyer", "Paralegal"), ("Lawyer", "Judge"), ("Nurse", "Registered_Nurse"),
            ("Nurse", "Midwife"), ("Baker", "Pastry_Chef"), ("Baker", "Bread_Maker"), ("Tax_Accountant", "Accountant"),
            ("Tax_Accountant", "Auditor"), ("Private_Investigator", "Detective"),
            ("Private_Investigator", "Security_Guard"), ("Private_Investigator", "Lawyer")]
FRENCH = {"Lawyer": "Avocat", "Attorney": "Avocat", "Nurse": "Infirmier", "Baker": "Boulanger",
          "Tax_Accountant": "Comptable fiscaliste", "Private_Investigator": "Détective privé", "Paralegal": "Parajuriste",
          "Judge": "Juge", "Registered_Nurse": "Infirmier diplômé", "Midwife": "Sage-femme",
          "Pastry_Chef": "Chef pâtissier", "Bread_Maker": "Fabricant de pain", "Accountant": "Comptable",
          "Auditor": "Auditeur", "Detective": "Détective", "Security_Guard": "Agent de sécurité",
          "Gardener": "Jardinier"}


def tid(text: str) -> str:
    return text.replace(" ", "_")


def french_copy() -> Relevance:
    queries = {tid(FRENCH[q]): FRENCH[q] for q in EN_QUERIES}
    corpus = {tid(FRENCH[d]): FRENCH[d] for d in EN_CORPUS}
    qrels = sorted({(tid(FRENCH[q]), tid(FRENCH[d])) for q, d in EN_QRELS})
    return Relevance(dict(sorted(queries.items())), dict(sorted(corpus.items())), qrels)


@pytest.fixture(scope="module")
def muse():
    from builder.reference import ALIGN_ENCODER
    from eval.models import load_model

    model = load_model(ALIGN_ENCODER)  # the encoder builder/reference.py aligns with

    def encode(texts):
        import numpy as np

        vectors = model.encode(list(texts))
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    return encode


def test_alignment_finds_every_id_merges_included(muse):
    english = Relevance(EN_QUERIES, EN_CORPUS, EN_QRELS)
    result = align(english, french_copy(), muse)
    for sid in EN_QUERIES:
        assert result.queries[sid].target_id == tid(FRENCH[sid]), sid
    for sid in EN_CORPUS:
        assert result.corpus[sid].target_id == tid(FRENCH[sid]), sid
    # Lawyer (query and corpus) and Attorney share the one French title Avocat
    assert result.queries["Lawyer"].target_id == result.corpus["Attorney"].target_id == "Avocat"
    assert result.edges_preserved == result.edges_checked > 0
    assert result.edges_total == len(EN_QRELS)


def test_the_graph_overrules_the_text(muse):
    """Bread Maker is relevant to Baker; in a copy whose Fabricant de pain is relevant to no query, the text's
    best match contradicts the graph: it is never a confident alignment there."""
    english = Relevance(EN_QUERIES, EN_CORPUS, EN_QRELS)
    french = french_copy()
    broken = Relevance(french.queries, french.corpus,
                       [p for p in french.qrels if p != ("Boulanger", "Fabricant_de_pain")])
    result = align(english, broken, muse)
    bread = result.corpus["Bread_Maker"]
    assert not (bread.target_id == "Fabricant_de_pain" and bread.confident), bread
    assert result.corpus["Accountant"].target_id == "Comptable" and result.corpus["Accountant"].confident


def test_an_alignment_with_mt_drafts_is_used_where_both_readings_agree():
    """builder.align.agreed: the draft reading decides the title; confident only where the reading without
    drafts put the id on the same title and one of the two is confident."""
    english = Relevance({"Q": "Lawyer"}, {"A": "Attorney", "B": "Bread Maker", "C": "Accountant", "D": "Detective"},
                        [("Q", "A"), ("Q", "B")])
    french = Relevance({"Avocat": "Avocat"}, {"Avocat": "Avocat", "Boulanger": "Boulanger", "Comptable": "Comptable",
                                              "Détective": "Détective", "Juge": "Juge"},
                       [("Avocat", "Avocat"), ("Avocat", "Boulanger")])

    def at(sid, role, target, confident):
        return Aligned(sid, role, target, 1.0, 0.1 if confident else 0.0, confident, "r")

    q = {"Q": at("Q", "query", "Avocat", True)}
    plain = Alignment(q, {"A": at("A", "corpus", "Avocat", True), "B": at("B", "corpus", "Boulanger", False),
                          "C": at("C", "corpus", "Comptable", True), "D": at("D", "corpus", "Détective", False)}, 0, 0, 2)
    drafted = Alignment(q, {"A": at("A", "corpus", "Avocat", False), "B": at("B", "corpus", "Boulanger", True),
                            "C": at("C", "corpus", "Juge", True), "D": at("D", "corpus", "Détective", False)}, 0, 0, 2)
    result = agreed(plain, drafted, english, french)
    got = {d: (a.target_id, a.confident) for d, a in result.corpus.items()}
    assert got == {"A": ("Avocat", True), "B": ("Boulanger", True), "C": ("Juge", False), "D": ("Détective", False)}
    assert "without it 'Comptable'" in result.corpus["C"].reason
    # both edges of Q now have two confident ids and land on the copy's relevant pairs
    assert (result.edges_preserved, result.edges_checked, result.edges_total) == (2, 2, 2)


def test_trigram_similarity_folds_case_and_accents():
    sim = trigram_similarity(["Développeur iOS", "Chef"], ["developpeur ios", "Jardinier"])
    assert sim[0, 0] == pytest.approx(1.0)
    assert sim[0, 1] < 0.2 and sim.shape == (2, 2)


@pytest.mark.parametrize("title, plain, inclusive", [
    ("Caissier·ère", "Caissier", True), ("Consultant·e en style", "Consultant en style", True),
    ("Avioniker/in", "Avioniker", True), ("Ingenieur:in", "Ingenieur", True), ("Ingenieur*in", "Ingenieur", True),
    ("IngenieurIn", "Ingenieur", True), ("Ingenieur/-in", "Ingenieur", True),
    ("Copywriter / Rédacteur publicitaire", "Copywriter / Rédacteur publicitaire", False),
    ("Analyst/Entwickler", "Analyst/Entwickler", False), ("Innenarchitektin", "Innenarchitektin", False),
])
def test_inclusive_markers_are_removed(title, plain, inclusive):
    assert split_inclusive(title) == (plain, inclusive)


def write_copy(root: Path, lang: str, rel: Relevance) -> Path:
    folder = root / lang
    folder.mkdir(parents=True)
    (folder / "queries.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in rel.queries.items()), encoding="utf-8")
    (folder / "corpus_documents.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in rel.corpus.items()), encoding="utf-8")
    (folder / "annotations.tsv").write_text("".join(f"{q}\t0\t{d}\t1\n" for q, d in rel.qrels), encoding="utf-8")
    return folder


def write_english(root: Path) -> Path:
    folder = root / "en"
    folder.mkdir(parents=True)
    (folder / "queries.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in EN_QUERIES.items()), encoding="utf-8")
    (folder / "corpus_documents.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in EN_CORPUS.items()), encoding="utf-8")
    (folder / "annotations.tsv").write_text("".join(f"{q}\t0\t{d}\t1\n" for q, d in EN_QRELS), encoding="utf-8")
    return folder


@pytest.mark.parametrize("damage, message", [
    (lambda f: (f / "annotations.tsv").unlink(), "annotations.tsv: file missing"),
    (lambda f: (f / "queries.tsv").write_text("Avocat\tAvocat\tx\n", encoding="utf-8"), "queries.tsv:1: expected 2"),
    (lambda f: (f / "annotations.tsv").write_text("Avocat\t0\tNo_such\t1\n", encoding="utf-8"),
     "annotations.tsv:1: document id 'No_such' is not in corpus_documents.tsv"),
    (lambda f: (f / "annotations.tsv").write_text("Avocat\t0\tJuge\t1\n", encoding="utf-8"),
     "queries have no relevant title"),
])
def test_a_bad_translated_folder_is_one_error_naming_the_file(tmp_path, damage, message):
    english = write_english(tmp_path)
    folder = write_copy(tmp_path, "fr", french_copy())
    damage(folder)
    with pytest.raises(SourceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_reference(load_source(english), load_language("fr"))


def test_a_missing_translated_folder_names_the_fix(tmp_path, capsys):
    english = write_english(tmp_path)
    rc = main(["translate", "--source", str(english), "--lang", "fr", "--route", "reference", "--out",
               str(tmp_path / "out"), "--cache", str(tmp_path / "cache"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and err.startswith("error: ")
    assert "--route mt" in err and "Traceback" not in err
    assert not (tmp_path / "out" / "fr").exists()


def test_reference_folder_is_the_copy_or_the_datasets_sibling(tmp_path):
    assert reference_folder(tmp_path / "dataset" / "en", "fr") == tmp_path / "dataset" / "fr"
    assert reference_folder(tmp_path / "source", "fr") == tmp_path / "source" / "reference" / "fr"


def test_french_build_from_the_given_titles(tmp_path):
    """fr offline: the given titles decided by the lexicon layer, their feminine made; an id the alignment cannot
    vouch for takes the MT route (here: a title the copy lacks), counted and flagged by its provenance."""
    english = write_english(tmp_path)
    french = french_copy()
    # The copy lacks Gardener: its English id cannot be placed with confidence.
    corpus = {k: v for k, v in french.corpus.items() if v != "Jardinier"}
    write_copy(tmp_path, "fr", Relevance(french.queries, corpus, french.qrels))
    rc = main(["build", "--source", str(english), "--lang", "fr", "--route", "reference", "--translator", "apertium>apertium",
               "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"), "--quiet"])
    assert rc == 0
    ts = read_testset(tmp_path / "out", "fr")
    by_text = {r["text"]: r for r in pl.concat([ts.queries, ts.corpus]).iter_rows(named=True)}
    assert by_text["avocate"]["gender"] == "feminine" and by_text["avocat"]["gender"] == "masculine"
    assert set(by_text["avocat"]["source_ids"]) >= {"Lawyer"}
    assert by_text["boulangère"]["provenance"] == "reference:fr"
    assert by_text["détective privée"]["pair_id"] == by_text["détective privé"]["pair_id"]
    assert by_text["juge"]["gender"] == "neutral"
    stats = ts.stats
    assert stats["route"] == "reference" and stats["alignment"]["translated_by"] == "people"
    # the offline translator translated every title first: drafts for the alignment
    assert stats["alignment"]["mt_drafts"] >= 15
    assert stats["routes"]["reference"] >= 15 and stats["routes"].get("mt", 0) >= 1
    translations = pl.read_parquet(tmp_path / "out" / "fr" / "translations.parquet")
    gardener = translations.filter(pl.col("source_id") == "Gardener").row(0, named=True)
    assert gardener["translator"].startswith("apertium")  # the MT route's row, not a given title
    alignment = pl.read_parquet(tmp_path / "out" / "fr" / "alignment.parquet")
    assert alignment.filter(pl.col("source_id") == "Tax_Accountant")["reference_id"].to_list() == ["Comptable_fiscaliste"]


def test_german_build_without_any_translator(tmp_path):
    """de offline: the given German titles, the German layer makes the feminine (Ärztin, Köchin, Anwältin);
    with no translator an id without a confident alignment gives no item and is counted."""
    en_q = {"Doctor": "Doctor", "Cook": "Cook", "Lawyer": "Lawyer", "Cashier": "Cashier"}
    en_c = {"Physician": "Physician", "Surgeon": "Surgeon", "Chef": "Chef", "Kitchen_Helper": "Kitchen Helper",
            "Attorney": "Attorney", "Notary": "Notary", "Store_Clerk": "Store Clerk", "Doctor": "Doctor",
            "Cleaning_Staff": "Cleaning Staff", "Travel_Agency": "Travel Agency"}
    en_r = [("Doctor", "Physician"), ("Doctor", "Surgeon"), ("Cook", "Chef"), ("Cook", "Kitchen_Helper"),
            ("Lawyer", "Attorney"), ("Lawyer", "Notary"), ("Cashier", "Store_Clerk"), ("Cook", "Doctor")]
    german = {"Doctor": "Arzt", "Cook": "Koch", "Lawyer": "Rechtsanwalt", "Cashier": "Kassiererin",
              "Physician": "Arzt für Allgemeinmedizin", "Surgeon": "Chirurg", "Chef": "Küchenchef",
              "Kitchen_Helper": "Küchenhilfe", "Attorney": "Anwalt", "Notary": "Notar", "Store_Clerk": "Verkäufer",
              "Cleaning_Staff": "Reinigungskraft", "Travel_Agency": "Reisebüro"}
    root = tmp_path / "dataset"
    (root / "en").mkdir(parents=True)
    (root / "en" / "queries.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in en_q.items()), encoding="utf-8")
    (root / "en" / "corpus_documents.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in en_c.items()), encoding="utf-8")
    (root / "en" / "annotations.tsv").write_text("".join(f"{q}\t0\t{d}\t1\n" for q, d in en_r), encoding="utf-8")
    copy = Relevance({tid(german[q]): german[q] for q in en_q},
                     {tid(german[d]): german[d] for d in en_c if d != "Cleaning_Staff"},  # one title the copy lacks
                     sorted({(tid(german[q]), tid(german[d])) for q, d in en_r}))
    write_copy(root, "de", copy)
    rc = main(["build", "--source", str(root / "en"), "--lang", "de", "--out", str(tmp_path / "out"),
               "--cache", str(tmp_path / "cache"), "--quiet"])
    assert rc == 0
    ts = read_testset(tmp_path / "out", "de")
    texts = {r["text"]: r["gender"] for r in pl.concat([ts.queries, ts.corpus]).iter_rows(named=True)}
    for masculine, feminine in (("arzt", "ärztin"), ("koch", "köchin"), ("rechtsanwalt", "rechtsanwältin"),
                                ("kassierer", "kassiererin"), ("chirurg", "chirurgin")):
        assert (texts.get(masculine), texts.get(feminine)) == ("masculine", "feminine"), (masculine, feminine)
    assert texts.get("küchenhilfe") == "neutral"
    assert "reisebüro" not in texts  # a thing, not a person: not a title of the set
    translations = pl.read_parquet(tmp_path / "out" / "de" / "translations.parquet")
    verdict = dict(zip(translations["source_id"], translations["verdict"]))
    assert verdict["Travel_Agency"] == "not_a_person"
    assert verdict["Cleaning_Staff"] == "unaligned" and ts.stats["routes"]["none"] == 1
    assert ts.stats["gender_layer"]["module"] == "builder/german.py"
    assert ts.stats["translator"] is None and ts.stats["route"] == "reference"


@pytest.mark.skipif(not (SHARED / "fr").is_dir(), reason="the dataset's translations are not in ../shared")
@pytest.mark.parametrize("lang", ["fr", "de"])
def test_real_alignment_keeps_the_relevance_graph(lang, tmp_path):
    """On the dataset itself: every query aligned, no confident pair breaking a relevance edge, most corpus
    titles confident, and a few hand-known queries where they belong."""
    from builder.reference import align_reference

    source = load_source(SHARED / "en")
    reference = load_reference(source, load_language(lang))
    result = align_reference(source, reference, tmp_path / "cache")
    assert all(a.confident for a in result.queries.values())
    assert result.edges_preserved == result.edges_checked >= 0.7 * result.edges_total
    assert sum(a.confident for a in result.corpus.values()) >= 0.7 * len(result.corpus)
    known = {"fr": {"Tax_Accountant": "Comptable_fiscaliste", "Private_Investigator": "Détective_privé",
                    "Lawyer": "Avocat", "Attorney": "Avocat", "Cashier": "Caissier·ère"},
             "de": {"Tax_Accountant": "Steuerberater", "Lawyer": "Rechtsanwalt", "Firefighter": "Feuerwehrmann",
                    "Registered_Nurse": "Registrierte_Krankenschwester", "Cashier": "Kassiererin"}}[lang]
    for sid, target in known.items():
        assert result.queries[sid].target_id == target, sid
    random.seed(0)
    assert json.dumps({k: v.target_id for k, v in result.queries.items()})  # every query has an id


def test_a_persons_correction_overrides_the_given_title(tmp_path):
    """Corrections from Argilla win over the reference route as over the MT route: the corrected text, status
    corrected, provenance human:<annotators>; the other given titles stay reference:fr."""
    english = write_english(tmp_path)
    write_copy(tmp_path, "fr", french_copy())
    corrections = tmp_path / "fr.jsonl"
    corrections.write_text(json.dumps({
        "kind": "translation", "lang": "fr", "source_id": "Baker", "record_id": "fr-translation-Baker",
        "masculine": "Boulanger-pâtissier", "feminine": "Boulangère-pâtissière", "gender_marking": "gendered",
        "flag": None, "annotators": ["ana"], "submitted_at": "2026-12-01T15:00:00Z"}) + "\n", encoding="utf-8")
    rc = main(["build", "--source", str(english), "--lang", "fr", "--route", "reference", "--out", str(tmp_path / "out"),
               "--cache", str(tmp_path / "cache"), "--corrections", str(corrections), "--quiet"])
    assert rc == 0
    ts = read_testset(tmp_path / "out", "fr")
    by_text = {r["text"]: r for r in ts.queries.iter_rows(named=True)}
    assert "boulanger" not in by_text and "boulangère" not in by_text
    assert by_text["boulangère-pâtissière"]["status"] == "corrected"
    assert by_text["boulangère-pâtissière"]["provenance"] == "human:ana"
    assert by_text["avocate"]["provenance"] == "reference:fr"
    assert ts.stats["corrections"]["translations"] == 1


def test_the_mt_route_without_a_translator_names_the_fix(tmp_path, capsys):
    """German has no offline translator: `--route mt` alone is one error line saying how to give one."""
    english = write_english(tmp_path)
    rc = main(["translate", "--source", str(english), "--lang", "de", "--route", "mt", "--out", str(tmp_path / "out"),
               "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "no translator for 'de' on the MT route" in err
    assert "--translator" in err and not (tmp_path / "out" / "de").exists()
