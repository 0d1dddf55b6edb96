"""The shared test-set format: round trip, corpus views, pairs, and a clear error for each malformed file."""

from pathlib import Path

import polars as pl
import pytest

from eval import testset
from eval.testset import (
    ITEM_SCHEMA,
    TestSet as _TestSet,
    TestSetError,
    list_languages,
    read_qrels,
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


def python_qrels(path):
    """The line-by-line reader read_qrels replaced (Python tuples), as the reference on good files."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                q, _, d, r = line.split()
                rows.append((q, d, int(r)))
    return rows


@pytest.mark.parametrize("chunk_bytes", [1 << 23, 64, 7])  # one piece; many; pieces shorter than a line
def test_qrels_read_like_the_line_by_line_reader(tmp_path, monkeypatch, chunk_bytes):
    monkeypatch.setattr(testset, "QRELS_CHUNK_BYTES", chunk_bytes)
    path = tmp_path / "qrels.tsv"
    lines = [f"q{i % 97}\t0\td-{i}~{'x' * (i % 23)}\t{i % 3 - (i % 7 == 0)}" for i in range(5000)]
    lines[10] = "  q1   0 \t d-é-ação  2  "  # any whitespace around and between the fields
    lines[20] = ""
    lines[30] = " \t "
    path.write_text("\r\n".join(lines))  # CRLF, no newline at the end
    expected = python_qrels(path)
    got = read_qrels(path)
    assert dict(got.schema) == {"query_id": pl.Categorical, "doc_id": pl.Categorical, "relevance": pl.Int64}
    assert got.rows() == expected and len(expected) == 4998 and ("q1", "d-é-ação", 2) in expected
    assert got.filter(pl.col("query_id") == "q1")["doc_id"].to_list() == [d for q, d, _ in expected if q == "q1"]
    path.write_text("\n\n")
    assert read_qrels(path).height == 0


def test_qrels_written_back_byte_for_byte(tmp_path, monkeypatch):
    """Categorical ids write (sorted as strings) exactly what String ids write."""
    monkeypatch.setattr(testset, "QRELS_CHUNK_BYTES", 50)
    rows = [(f"q{i % 13}", f"d{(i * 7919) % 1000}", 1) for i in range(3000)]
    as_strings = pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64},
                              orient="row").unique(maintain_order=True)
    testset.write_qrels(as_strings, tmp_path / "a.tsv")
    testset.write_qrels(read_qrels(tmp_path / "a.tsv").reverse(), tmp_path / "b.tsv")
    assert (tmp_path / "a.tsv").read_bytes() == (tmp_path / "b.tsv").read_bytes()
    assert (tmp_path / "a.tsv").read_text().splitlines() == [f"{q}\t0\t{d}\t{r}" for q, d, r in sorted(set(rows))]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\n\nq 0 d 1\n\n  \nq 0 d\n", r"qrels.tsv:6: expected 4 fields 'query_id 0 doc_id relevance', got 3"),
        (b"q 0 d 1\nq 0 d 1 1\n", r"qrels.tsv:2: expected 4 fields .*got 5"),
        (b"q 0 d 1\r\nq 0 d 1.0\r\n", r"qrels.tsv:2: relevance '1.0' is not an integer"),
        (b"q 0 d 1\nq 0 d\xe9 1\n", r"qrels.tsv:2: not UTF-8 text"),
        (b"q 0 d\x00x 1\n", r"qrels.tsv: not a readable qrels text file"),
    ],
)
@pytest.mark.parametrize("chunk_bytes", [1 << 23, 5])
def test_bad_qrels_lines_are_named(tmp_path, monkeypatch, content, message, chunk_bytes):
    monkeypatch.setattr(testset, "QRELS_CHUNK_BYTES", chunk_bytes)  # line numbers carried across pieces
    path = tmp_path / "qrels.tsv"
    path.write_bytes(content)
    with pytest.raises(TestSetError, match=message):
        read_qrels(path)


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


# --- Table-1 counts and versions: computed once, here, for the builder, releases and eval ---------------------

def test_table1_counts_by_hand():
    from eval.testset import table1_counts

    # queries of small(): lawyer m+f (one pair), analyst neutral; plus an occupation named in the feminine only,
    # made by the lexicon from the other form, whose check disagrees
    extra = pl.DataFrame([{**item("q-f-nurse", "enfermera", "feminine", "p3", ["Nurse"]),
                           "flags": ["reinflected_feminine"], "check_ok": False, "check_method": "lexicon"}],
                         schema=ITEM_SCHEMA)
    counts = table1_counts(pl.concat([small().queries, extra]))
    assert counts == {"pairs": 1, "neutral": 1, "titles": 4, "masculine": 1, "feminine": 2, "masculine_only": 0,
                      "feminine_only": 1, "reinflected": 1, "check_ok": 3,
                      "check_methods": {"lexicon": 1, "rule:test": 3}, "forms": {"doublet": 0, "neomorpheme": 0},
                      # each item's origin once: three machine titles, the feminine the lexicon made
                      "origins": {"given": 0, "gender_layer": 1, "machine_translation": 3, "esco": 0, "term_rule": 0,
                                  "person": 0, "review": 0}}
    # the extra forms are no titles of Table 1: counted apart, the rest unchanged
    with_extra = table1_counts(with_forms().queries)
    assert with_extra["forms"] == {"doublet": 1, "neomorpheme": 1}
    assert {k: v for k, v in with_extra.items() if k != "forms"} == {
        k: v for k, v in table1_counts(small().queries).items() if k != "forms"}


def test_testset_version_release_manifest_then_stats_then_content_digest(tmp_path):
    import hashlib
    import json

    from eval.testset import read_release_version, testset_digest, testset_version

    write_testset(small(), tmp_path)
    ts = read_testset(tmp_path, "es")
    h = hashlib.sha256()
    for name in ("queries.parquet", "corpus.parquet", "qrels.tsv"):
        h.update((tmp_path / "es" / name).read_bytes())
    assert testset_digest(tmp_path, "es") == h.hexdigest()[:12]
    assert read_release_version(tmp_path) is None
    assert testset_version(ts, tmp_path) == f"sha-{h.hexdigest()[:12]}"
    stamped = _TestSet(ts.lang, ts.queries, ts.corpus, ts.qrels, {"version": "0.7.0"})  # builder postprocess --version
    assert testset_version(stamped, tmp_path) == "v0.7.0"
    (tmp_path / "manifest.json").write_text(json.dumps({"version": "1.2.3", "files": []}))
    assert read_release_version(tmp_path) == "1.2.3"
    assert testset_version(stamped, tmp_path) == "v1.2.3"
    for broken in ("{not json", "[1, 2]", '"0.1.0"'):
        (tmp_path / "manifest.json").write_text(broken)
        with pytest.raises(TestSetError, match=r"manifest.json: not a valid release manifest \(run `python -m releases verify"):
            testset_version(ts, tmp_path)


def test_combined_version_of_several_languages():
    import hashlib

    from eval.testset import combined_version

    assert combined_version({"es": "v0.2.0", "pt": "v0.2.0"}) == "v0.2.0"
    mixed = {"pt": "v0.2.0", "es": "sha-abc"}
    assert combined_version(mixed) == "sha-" + hashlib.sha256(b"es-sha-abc+pt-v0.2.0").hexdigest()[:12]
    assert combined_version({"es": "sha-abc"}) == "sha-" + hashlib.sha256(b"es-sha-abc").hexdigest()[:12]


def with_forms() -> _TestSet:
    """small() with a doublet and a neomorpheme query of the pair p1, and a doublet document of c1."""
    ts = small()
    extra = [{**item("q-d-lawyer", "abogado/a", "inclusive", "p1", ["Lawyer"]), "form": "doublet"},
             {**item("q-x-lawyer", "abogade", "inclusive", "p1", ["Lawyer"]), "form": "neomorpheme"}]
    doc = [{**item("d-d-attorney", "procurador/a", "inclusive", "c1", ["Attorney"]), "form": "doublet"}]
    queries = pl.concat([ts.queries, pl.DataFrame(extra, schema=ITEM_SCHEMA)])
    corpus = pl.concat([ts.corpus, pl.DataFrame(doc, schema=ITEM_SCHEMA)])
    qrels = pl.concat([ts.qrels, pl.DataFrame({"query_id": ["q-d-lawyer", "q-x-lawyer"], "doc_id": ["d-d-attorney"] * 2,
                                               "relevance": [1, 1]})])
    return _TestSet(lang="es", queries=queries, corpus=corpus, qrels=qrels, stats={})


def test_forms_round_trip_and_views(tmp_path):
    write_testset(with_forms(), tmp_path)
    ts = read_testset(tmp_path, "es")
    assert ts.queries.columns == list(ITEM_SCHEMA) and "form" in ts.corpus.columns
    assert dict(ts.queries.select("id", "form").iter_rows()) == {
        "q-m-lawyer": "masculine", "q-f-lawyer": "feminine", "q-n-analyst": "neutral",
        "q-d-lawyer": "doublet", "q-x-lawyer": "neomorpheme"}
    assert ts.queries_of_form("doublet")["text"].to_list() == ["abogado/a"]
    assert ts.queries_of_form("masculine")["id"].to_list() == ["q-m-lawyer"]
    # The extra forms are in neither gendered corpus; the doublet corpus holds the ad's form of each title.
    assert sorted(ts.corpus_for("masculine")["text"]) == ["asistente judicial", "procurador"]
    assert sorted(ts.corpus_for("doublet")["text"]) == ["asistente judicial", "procurador/a"]
    assert ts.query_pairs().rows() == [("p1", "q-m-lawyer", "q-f-lawyer")]
    with pytest.raises(ValueError, match="query form must be one of"):
        ts.queries_of_form("inclusive")


def test_a_set_written_before_the_form_column_reads_with_form_from_gender(tmp_path):
    import json

    folder = write_testset(small(), tmp_path)
    for name in ("queries", "corpus"):
        pl.read_parquet(folder / f"{name}.parquet").drop("form").write_parquet(folder / f"{name}.parquet")
    stats = json.loads((folder / "stats.json").read_text())
    stats.pop("set_integrity")
    (folder / "stats.json").write_text(json.dumps(stats))
    ts = read_testset(tmp_path, "es")
    assert ts.queries["form"].to_list() == ts.queries["gender"].to_list()
    assert ts.corpus_for("doublet").height == 0  # no corpus variant in an old set


@pytest.mark.parametrize("change, message", [
    (lambda q: q.with_columns(form=pl.when(pl.col("id") == "q-d-lawyer").then(pl.lit("slash")).otherwise("form")),
     "unknown form value"),
    (lambda q: q.with_columns(form=pl.when(pl.col("id") == "q-m-lawyer").then(pl.lit("feminine")).otherwise("form")),
     r"form disagrees with gender for id\(s\) \['q-m-lawyer'\]"),
    (lambda q: q.with_columns(pair_id=pl.when(pl.col("id") == "q-x-lawyer").then(pl.lit("p9")).otherwise("pair_id")),
     r"neomorpheme item\(s\) \['q-x-lawyer'\] whose pair_id has no masculine or feminine item"),
    (lambda q: q.drop("form"), "items of gender 'inclusive' but no 'form' column"),
])
def test_malformed_forms_name_the_file_and_problem(tmp_path, change, message):
    folder = write_testset(with_forms(), tmp_path)
    change(pl.read_parquet(folder / "queries.parquet")).write_parquet(folder / "queries.parquet")
    with pytest.raises(TestSetError, match=message) as err:
        read_testset(tmp_path, "es")
    assert "queries.parquet" in str(err.value)


@pytest.mark.parametrize("listed", ["/etc/hostname", "../outside.bin", "sub/../../outside.bin", "..", "outside-link"])
def test_set_integrity_names_are_files_of_the_folder(tmp_path, monkeypatch, listed):
    """A crafted stats.json must not make a reader hash a file outside the set (it hashed /etc/hostname)."""
    import json

    folder = write_testset(small(), tmp_path / "data")
    (tmp_path / "data" / "outside.bin").write_bytes(b"x" * 1000)
    (folder / "outside-link").symlink_to(tmp_path / "data" / "outside.bin")
    stats = json.loads((folder / "stats.json").read_text())
    stats["set_integrity"]["sha256"][listed] = "0" * 64
    (folder / "stats.json").write_text(json.dumps(stats))
    hashed = []
    real = testset.sha256_of
    monkeypatch.setattr(testset, "sha256_of", lambda p: hashed.append(Path(p)) or real(p))
    with pytest.raises(TestSetError, match="set_integrity lists .*(not a file name of the folder|outside the folder)") as err:
        read_testset(tmp_path / "data", "es")
    assert str(folder / "stats.json") in str(err.value) and "rebuild the language or re-pull the release" in str(err.value)
    assert all(p.parent == folder and not p.is_symlink() for p in hashed), hashed


@pytest.mark.parametrize("column, value, found", [
    ("text", pl.struct(pl.col("text")), "Struct"),  # was cast to strings and scored (AO 0.8573 vs 0.8529)
    ("gender", pl.lit(1, dtype=pl.Int32), "Int32"),  # was a polars traceback
    ("form", pl.lit(0, dtype=pl.Int64), "Int64"),
    ("check_ok", pl.lit("yes"), "String"),
    ("source_ids", pl.lit("Lawyer"), "String"),
    ("flags", pl.lit([1], dtype=pl.List(pl.Int64)), "List(Int64)"),
    ("id", pl.col("id").cast(pl.Categorical), "Categorical"),
])
@pytest.mark.parametrize("file", ["queries", "corpus"])
def test_column_types_are_checked_against_the_format(tmp_path, column, value, found, file):
    """A file read back must have the types of ITEM_SCHEMA (docs/FORMAT.md): refused with one error naming the
    file and the column, never cast into something that is scored, never a traceback."""
    import json

    folder = write_testset(small(), tmp_path)
    path = folder / f"{file}.parquet"
    pl.read_parquet(path).with_columns(value.alias(column)).write_parquet(path)
    stats = json.loads((folder / "stats.json").read_text())
    stats.pop("set_integrity")  # so that only the types can refuse it
    (folder / "stats.json").write_text(json.dumps(stats))
    with pytest.raises(TestSetError) as err:
        read_testset(tmp_path, "es")
    expected = ITEM_SCHEMA[column]
    assert str(err.value).startswith(f"{path}: column {column!r} has type {found}")
    assert f"expected {expected}" in str(err.value) and "rebuild the language or re-pull the release" in str(err.value)


def test_a_column_with_no_value_reads_as_the_schema_type(tmp_path):
    """A column of type Null (no value at all) casts without loss; the null check then names it if it matters."""
    import json

    folder = write_testset(small(), tmp_path)
    path = folder / "queries.parquet"
    pl.read_parquet(path).with_columns(check_ok=pl.lit(None)).write_parquet(path)
    stats = json.loads((folder / "stats.json").read_text())
    stats.pop("set_integrity")
    (folder / "stats.json").write_text(json.dumps(stats))
    assert read_testset(tmp_path, "es").queries.schema["check_ok"] == pl.Boolean


def test_item_origins_count_each_item_once_by_its_origin():
    from eval.testset import item_origins

    rows = [item("a", "x", "masculine", "p1") | {"provenance": "reference:de", "flags": ["masculine_base"]},
            item("b", "xin", "feminine", "p1") | {"provenance": "reference:de", "flags": ["masculine_base"]},
            item("c", "y", "neutral", "p2") | {"provenance": "esco:v1.2.0:de"},
            item("d", "z", "masculine", "p3") | {"status": "rule", "provenance": "bergamot:1+rule:r1"},
            item("e", "w", "masculine", "p4") | {"status": "corrected", "provenance": "human:ana"},
            item("f", "v", "feminine", "p5") | {"status": "reviewed", "provenance": "reference:de+review:r1"},
            item("g", "u", "masculine", "p6")]
    assert item_origins(pl.DataFrame(rows, schema=ITEM_SCHEMA)) == {
        "given": 1, "gender_layer": 1, "machine_translation": 1, "esco": 1, "term_rule": 1, "person": 1, "review": 1}
