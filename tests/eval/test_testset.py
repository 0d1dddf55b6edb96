"""The shared test-set format: round trip, corpus views, pairs, and a clear error for each malformed file."""

import polars as pl
import pytest

from eval.testset import (
    ITEM_SCHEMA,
    TestSet as _TestSet,
    TestSetError,
    list_languages,
    read_testset,
    write_testset,
)


def item(id, text, gender, pair_id, sources=("S",)):
    return dict(id=id, text=text, gender=gender, pair_id=pair_id, source_ids=list(sources),
                source_texts=[s.lower() for s in sources], check_gender=gender, check_method="rule:test",
                check_ok=True, flags=[], status="machine", provenance="test:1")


def small() -> _TestSet:
    queries = pl.DataFrame([
        item("q-m-lawyer", "abogado", "masculine", "p1", ["Lawyer"]),
        item("q-f-lawyer", "abogada", "feminine", "p1", ["Lawyer"]),
        item("q-n-analyst", "analista", "neutral", "p2", ["Analyst"]),
    ], schema=ITEM_SCHEMA)
    corpus = pl.DataFrame([
        item("d-m-attorney", "procurador", "masculine", "c1", ["Attorney"]),
        item("d-f-attorney", "procuradora", "feminine", "c1", ["Attorney"]),
        item("d-n-clerk", "asistente judicial", "neutral", "c2", ["Clerk"]),
    ], schema=ITEM_SCHEMA)
    qrels = pl.DataFrame({"query_id": ["q-m-lawyer", "q-f-lawyer", "q-f-lawyer"],
                          "doc_id": ["d-m-attorney", "d-f-attorney", "d-n-clerk"], "relevance": [1, 1, 1]})
    return _TestSet(lang="es", queries=queries, corpus=corpus, qrels=qrels, stats={"queries": {"pairs": 1}})


def test_round_trip_and_views(tmp_path):
    folder = write_testset(small(), tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == ["corpus.parquet", "qrels.tsv", "queries.parquet", "stats.json"]
    assert (folder / "qrels.tsv").read_text().splitlines()[0] == "q-f-lawyer\t0\td-f-attorney\t1"
    ts = read_testset(tmp_path, "es")
    assert ts.queries.height == 3 and ts.corpus.height == 3 and ts.qrels.height == 3
    assert ts.stats == {"queries": {"pairs": 1}}
    assert sorted(ts.corpus_for("masculine")["text"]) == ["asistente judicial", "procurador"]
    assert sorted(ts.corpus_for("feminine")["text"]) == ["asistente judicial", "procuradora"]
    assert ts.query_pairs().rows() == [("p1", "q-m-lawyer", "q-f-lawyer")]
    assert list_languages(tmp_path) == ["es"]
    with pytest.raises(ValueError, match="corpus gender must be"):
        ts.corpus_for("neutral")


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda q: q.drop("pair_id"), "missing column"),
        (lambda q: q.with_columns(pl.lit("q-m-lawyer").alias("id")), "duplicate id"),
        (lambda q: q.with_columns(pl.lit("a b").alias("id")), "whitespace in id"),
        (lambda q: q.with_columns(pl.when(pl.col("gender") == "neutral").then(pl.lit(" ")).otherwise(pl.col("text")).alias("text")), "empty text"),
        (lambda q: q.with_columns(pl.lit("female").alias("gender")), "unknown gender"),
        (lambda q: q.with_columns(pl.lit("draft").alias("status")), "unknown status"),
        (lambda q: q.with_columns(pl.lit("same").alias("text")), "repeats text"),
    ],
)
def test_malformed_items_name_the_file_and_problem(tmp_path, change, message):
    folder = write_testset(small(), tmp_path)
    change(pl.read_parquet(folder / "queries.parquet")).write_parquet(folder / "queries.parquet")
    with pytest.raises(TestSetError, match=message) as err:
        read_testset(tmp_path, "es")
    assert "queries.parquet" in str(err.value)


def test_qrels_problems_name_the_line(tmp_path):
    folder = write_testset(small(), tmp_path)
    (folder / "qrels.tsv").write_text("q-m-lawyer\t0\td-m-attorney\t1\nq-m-lawyer 0 d-n-clerk\n")
    with pytest.raises(TestSetError, match=r"qrels.tsv:2: expected 4 fields"):
        read_testset(tmp_path, "es")
    (folder / "qrels.tsv").write_text("q-m-lawyer\t0\td-m-attorney\tyes\n")
    with pytest.raises(TestSetError, match=r"qrels.tsv:1: relevance 'yes' is not an integer"):
        read_testset(tmp_path, "es")
    (folder / "qrels.tsv").write_text("q-m-lawyer\t0\td-unknown\t1\n")
    with pytest.raises(TestSetError, match=r"names ids that are not in the test set.*d-unknown"):
        read_testset(tmp_path, "es")


def test_missing_pieces_and_bad_stats(tmp_path):
    with pytest.raises(TestSetError, match="no test set for language 'es'"):
        read_testset(tmp_path, "es")
    folder = write_testset(small(), tmp_path)
    (folder / "stats.json").write_text('{"queries":\n  {"pairs": }\n}')
    with pytest.raises(TestSetError, match=r"stats.json: not valid JSON .*line 2"):
        read_testset(tmp_path, "es")
    (folder / "corpus.parquet").unlink()
    with pytest.raises(TestSetError, match=r"corpus.parquet: file missing"):
        read_testset(tmp_path, "es")
