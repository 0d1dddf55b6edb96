"""Fixtures: a real local Argilla stack (session-wide) and tiny inline test sets built from real titles."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from annotation.testing.stack import ArgillaStack
from builder.translate import fill_template
from eval.testset import ITEM_SCHEMA, TestSet, write_testset

from tests.english import english_or_skip, find_english

# The English source (tests/english.py): missing, a test skips with the fix, or fails under CI=true.
ENGLISH = find_english() or Path("/nonexistent-english-source")

# Real English ids/titles with Portuguese forms, as a translator might give them (some deliberately wrong).
# source_id: (english, masculine output title, feminine output title, verdict, flags)
PT_TITLES = {
    "Lawyer": ("Lawyer", "advogado", "advogada", "gendered", []),
    "Attorney": ("Attorney", "procurador", "procuradora", "needs_review", ["template_not_stripped"]),
    "Baker": ("Baker", "padeiro", "padaria", "needs_review", ["wrong_sense"]),
    "Data_Analyst": ("Data Analyst", "analista de dados", "analista de dados", "neutral", []),
    "Waiter": ("Waiter", "garçom", "garçom", "uninflected_feminine", ["uninflected_feminine"]),
    "Nurse": ("Nurse", "enfermeiro", "enfermeira", "gendered", []),
}


def translations_frame(titles: dict = PT_TITLES) -> pl.DataFrame:
    rows = []
    for sid, (en, m, f, verdict, flags) in titles.items():
        rows.append({
            "source_id": sid, "source_text": en, "in_queries": True, "in_corpus": True,
            # the sentences as the builder writes them ("He is an Attorney."): builder/translate.py
            "sentence_masculine": fill_template("He is a {title}.", en),
            "sentence_feminine": fill_template("She is a {title}.", en),
            "output_masculine": f"Ele é um {m}.", "output_feminine": f"Ela é uma {f}.",
            "mt_masculine": m, "mt_feminine": f, "title_masculine": m, "title_feminine": f,
            "reason": f"test verdict {verdict}",
            "check_masculine": "masculine", "check_feminine": "masculine" if m == f else "feminine",
            "check_method": "rule:pt-suffix", "verdict": verdict, "flags": flags,
            "translator": "bergamot", "translator_version": "test", "status": "machine",
        })
    return pl.DataFrame(rows)


def items(titles: dict, side: str) -> pl.DataFrame:
    """Items per FORMAT: a masculine and a feminine item per source, or one neutral item."""
    rows = []
    for sid, (en, m, f, verdict, _flags) in titles.items():
        forms = [("neutral", m)] if m == f else [("masculine", m), ("feminine", f)]
        for gender, text in forms:
            rows.append({
                "id": f"{side}-{sid}-{gender}", "text": text, "gender": gender, "pair_id": f"{side}-{sid}",
                "source_ids": [sid], "source_texts": [en], "check_gender": gender, "check_method": "rule:pt-suffix",
                "check_ok": True, "flags": [], "status": "machine", "provenance": "bergamot:test",
            })
    return pl.DataFrame(rows, schema=ITEM_SCHEMA)


def write_tiny_testset(root: Path, titles: dict = PT_TITLES, relevant=(("Lawyer", "Attorney"),)) -> TestSet:
    """A pt test set over ``titles`` (queries and corpus alike) plus its translations.parquet."""
    queries, corpus = items(titles, "q"), items(titles, "d")
    qrels = []
    for qs, ds in relevant:
        for q in queries.filter(pl.col("source_ids").list.contains(qs))["id"]:
            for d in corpus.filter(pl.col("source_ids").list.contains(ds))["id"]:
                qrels.append((q, d, 1))
    ts = TestSet("pt", queries, corpus,
                 pl.DataFrame(qrels, schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64},
                              orient="row"),
                 {"lang": "pt"})
    folder = write_testset(ts, root)
    translations_frame(titles).write_parquet(folder / "translations.parquet")
    return ts


@pytest.fixture(scope="session")
def argilla_stack(tmp_path_factory):
    stack = ArgillaStack(tmp_path_factory.mktemp("argilla-home")).start()
    yield stack
    stack.stop()


@pytest.fixture
def argilla_env(argilla_stack, monkeypatch):
    monkeypatch.setenv("ARGILLA_API_URL", argilla_stack.api_url)
    monkeypatch.setenv("ARGILLA_API_KEY", argilla_stack.owner_api_key)
    return argilla_stack


def write_params(path: Path, workspace: str, **extra) -> Path:
    section = {"workspace": workspace, "dataset_version": "t1", **extra}
    path.write_text(json.dumps({"annotation": section}), encoding="utf-8")  # JSON is valid YAML
    return path


ROUND_TRIP_QUERIES = ("Baker", "Lawyer", "Airline_Pilot", "Civil_Engineer", "Acupuncturist")


def write_english_source(folder: Path) -> Path:
    """A tiny English source from the real dataset: 5 queries, their first 3 relevant documents (15 corpus
    titles) and those 15 qrels lines."""
    english_or_skip()
    folder.mkdir(parents=True, exist_ok=True)
    queries = dict(line.rstrip("\n").split("\t") for line in open(ENGLISH / "queries.tsv", encoding="utf-8"))
    corpus = dict(line.rstrip("\n").split("\t") for line in open(ENGLISH / "corpus_documents.tsv", encoding="utf-8"))
    qrels = [line.split() for line in open(ENGLISH / "annotations.tsv", encoding="utf-8")]
    chosen = [(q, d) for q in ROUND_TRIP_QUERIES for d in [d for qq, _, d, _ in qrels if qq == q][:3]]
    (folder / "queries.tsv").write_text("".join(f"{q}\t{queries[q]}\n" for q in ROUND_TRIP_QUERIES), encoding="utf-8")
    docs = sorted({d for _, d in chosen})
    (folder / "corpus_documents.tsv").write_text("".join(f"{d}\t{corpus[d]}\n" for d in docs), encoding="utf-8")
    (folder / "annotations.tsv").write_text("".join(f"{q}\t0\t{d}\t1\n" for q, d in chosen), encoding="utf-8")
    return folder
