"""The maintainers' review (docs/review.md, annotation/review.py): a reader's verdicts become readings, a round's
readings decide one line per English id (the second reading's disagreement settled by the third), the lines go
through the corrections format's one writer with `review: <round>`, and the independent readings' agreement is
Krippendorff's alpha as the `krippendorff` package computes it."""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest

from annotation import AnnotationError
from annotation.cli import main
from annotation.review import (decide_readings, read_readings, reading_from_verdict, review_agreement, review_lines,
                               write_readings)
from builder.corrections import read_corrections

PACK = [
    {"id": "Lawyer", "english": "Lawyer", "occurs": "query", "route": "reference", "built": ["advogado", "advogada"],
     "verdict": "inflected"},
    {"id": "Loan_Officer", "english": "Loan Officer", "occurs": "corpus", "route": "reference",
     "built": ["oficial de empréstimo", "oficial de empréstimo"], "verdict": "neutral"},
    {"id": "Software_Company", "english": "Software Company", "occurs": "corpus", "route": "mt",
     "built": [None, None], "verdict": "not_a_person"},
    {"id": "Judge", "english": "Judge", "occurs": "corpus", "route": "reference", "built": ["juiz", None],
     "verdict": "unverified"},
]
BUILT = {x["id"]: x["built"] for x in PACK}
FIRST = [{"id": "Lawyer", "a": "keep"},
         {"id": "Loan_Officer", "a": "fix", "m": "agente de crédito", "f": "agente de crédito", "g": "neutral",
          "why": "calque: ads say agente de crédito"},
         {"id": "Software_Company", "a": "drop", "flag": "not_a_job_title", "why": "a company"},
         {"id": "Judge", "a": "fix", "m": "juiz", "f": "juíza", "g": "gendered", "why": "feminine missing"}]
SECOND = [{"id": "Lawyer", "a": "keep"},
          {"id": "Loan_Officer", "a": "fix", "m": "analista de crédito", "f": "analista de crédito", "g": "neutral",
           "why": "ads say analista de crédito"}]


def readings(first=FIRST, second=SECOND, third=()):
    rows = [reading_from_verdict(v, BUILT[v["id"]], "reader-1", "first") for v in first]
    rows += [reading_from_verdict(v, BUILT[v["id"]], "reader-2", "second") for v in second]
    rows += [reading_from_verdict(v, BUILT[v["id"]], "reader-3", "adjudication") for v in third]
    return rows


def test_a_disagreement_is_a_tie_until_the_third_reading_settles_it():
    decided, ties = decide_readings(readings())
    assert ties == ["Loan_Officer"] and set(decided) == {"Lawyer", "Software_Company", "Judge"}
    third = [{"id": "Loan_Officer", "a": "fix", "m": "agente de crédito", "f": "agente de crédito", "g": "neutral",
              "why": "reading A: ads say agente de crédito"}]
    rows = readings(third=third)
    decided, ties = decide_readings(rows)
    assert ties == [] and decided["Loan_Officer"]["reader"] == "reader-3"
    lines = {l["source_id"]: l for l in review_lines(decided, rows, "pt", "0.5.0-r1", "2026-12-03T00:00:00Z")}
    # the texts are written out even for a kept title: the review certifies what it read
    assert (lines["Lawyer"]["masculine"], lines["Lawyer"]["feminine"], lines["Lawyer"]["gender_marking"]) == (
        "advogado", "advogada", "gendered")
    assert lines["Lawyer"]["annotators"] == ["reader-1", "reader-2"] and lines["Lawyer"]["review"] == "0.5.0-r1"
    # every reader whose reading gave the decided outcome is named
    assert lines["Loan_Officer"]["annotators"] == ["reader-1", "reader-3"]
    assert lines["Loan_Officer"]["reason"] == "reading A: ads say agente de crédito"
    assert (lines["Software_Company"]["gender_marking"], lines["Software_Company"]["flag"]) == (None, "not_a_job_title")
    assert (lines["Judge"]["masculine"], lines["Judge"]["feminine"]) == ("juiz", "juíza")


def test_the_strict_re_read_of_a_kept_title_replaces_the_first_reading():
    rows = readings(second=[])
    rows.append(reading_from_verdict({"id": "Lawyer", "a": "fix", "m": "advogado", "f": "advogada", "g": "gendered",
                                      "why": "same"}, BUILT["Lawyer"], "reader-4", "recheck"))
    decided, _ = decide_readings(rows)
    assert decided["Lawyer"]["reader"] == "reader-4" and decided["Lawyer"]["action"] == "keep"  # same forms: a keep


def test_agreement_is_the_krippendorff_packages_alpha():
    first = FIRST
    second = SECOND + [{"id": "Software_Company", "a": "drop", "flag": "not_a_job_title", "why": "a company"},
                       {"id": "Judge", "a": "fix", "m": "juiz", "f": "juíza", "g": "gendered", "why": "feminine"}]
    figures = {f["question"]: f for f in review_agreement(readings(first, second), "0.5.0-r1")}
    # keep/fix/drop per id (sorted: Judge, Lawyer, Loan_Officer, Software_Company): fix/fix, keep/keep, fix/fix,
    # drop/drop -> complete agreement; the text differs on Loan_Officer only
    labels = {"first": ["fix", "keep", "fix", "drop"], "second": ["fix", "keep", "fix", "drop"]}
    codes = {"keep": 0, "fix": 1, "drop": 2}
    expected = krippendorff.alpha(reliability_data=np.array([[codes[x] for x in labels[r]] for r in labels], float),
                                  level_of_measurement="nominal")
    assert figures["keep_fix_drop"]["records"] == 4 and figures["keep_fix_drop"]["alpha"] == round(expected, 4)
    texts = {"first": [1, 0, 2, 3], "second": [1, 0, 4, 3]}  # Loan_Officer: two different texts
    expected_text = krippendorff.alpha(reliability_data=np.array([texts["first"], texts["second"]], float),
                                       level_of_measurement="nominal")
    assert figures["text"]["alpha"] == round(expected_text, 4) and figures["text"]["alpha"] < 1


def test_import_writes_lines_the_builders_reader_takes_and_refuses_ties(tmp_path, capsys):
    readings_path = write_readings(readings(), tmp_path / "review" / "0.5.0-r1" / "pt.jsonl")
    out = tmp_path / "corrections" / "pt.jsonl"
    out.parent.mkdir()
    person = {"kind": "translation", "lang": "pt", "source_id": "Judge", "record_id": "pt-translation-Judge",
              "masculine": "magistrado", "feminine": "magistrada", "gender_marking": "gendered", "flag": None,
              "annotators": ["ana"], "submitted_at": "2027-01-01T00:00:00Z"}  # a native speaker's, newer
    out.write_text(json.dumps(person) + "\n", encoding="utf-8")
    args = ["review", "import", "--lang", "pt", "--round", "0.5.0-r1", "--readings", str(readings_path), "--out",
            str(out), "--submitted-at", "2026-12-03T00:00:00Z"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "1 id(s) whose readings disagree" in err and "Loan_Officer" in err and "nothing was written" in err
    assert out.read_text(encoding="utf-8") == json.dumps(person) + "\n"
    ties = [json.loads(l) for l in (out.parent / "pt.review-ties.jsonl").read_text().splitlines()]
    assert [t["id"] for t in ties] == ["Loan_Officer"] and len(ties[0]["readings"]) == 2
    third = [{"id": "Loan_Officer", "a": "fix", "m": "analista de crédito", "f": "analista de crédito",
              "g": "neutral", "why": "reading B"}]
    write_readings(readings(third=third), readings_path)
    assert main(args) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert "4 English ids decided (1 kept as built, 2 corrected, 1 dropped)" in printed
    assert "agreement review 0.5.0-r1/keep_fix_drop: 2 ids read twice" in printed
    c = read_corrections(out, "pt")
    assert c.translations["Judge"].masculine == "magistrado"  # the person's newer answer wins over the review
    assert (c.translations["Loan_Officer"].review, c.translations["Loan_Officer"].masculine) == (
        "0.5.0-r1", "analista de crédito")
    assert not (out.parent / "pt.review-ties.jsonl").exists()
    figures = [json.loads(l) for l in (out.parent / "pt.review-agreement.jsonl").read_text().splitlines()]
    assert {f["question"] for f in figures} == {"keep_fix_drop", "text"} and all(
        (f["kind"], f["round"]) == ("review", "0.5.0-r1") for f in figures)


def test_a_later_round_writes_only_what_it_changes(tmp_path, capsys):
    """Round 2 reads the build round 1 made: the titles it keeps keep round 1's lines (round, readers, reason);
    the one it corrects gets a line of round 2 that the builder's reader takes."""
    out = tmp_path / "corrections" / "pt.jsonl"
    first = write_readings(readings(second=()), tmp_path / "review" / "0.5.0-r1" / "pt.jsonl")
    common = ["--out", str(out), "--lang", "pt"]
    assert main(["review", "import", "--round", "0.5.0-r1", "--readings", str(first), "--submitted-at",
                 "2026-12-03T00:00:00Z", *common]) == 0, capsys.readouterr().err
    capsys.readouterr()
    before = {l["source_id"]: l for l in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    built = {"Lawyer": ["advogado", "advogada"], "Loan_Officer": ["agente de crédito", "agente de crédito"],
             "Judge": ["juiz", "juíza"]}  # what round 1 made of them
    again = [reading_from_verdict({"id": "Lawyer", "a": "keep"}, built["Lawyer"], "reader-4", "first"),
             reading_from_verdict({"id": "Judge", "a": "keep"}, built["Judge"], "reader-4", "first"),
             reading_from_verdict({"id": "Loan_Officer", "a": "fix", "m": "analista de crédito",
                                   "f": "analista de crédito", "g": "neutral", "why": "calque: ads say analista"},
                                  built["Loan_Officer"], "reader-4", "first")]
    again += [reading_from_verdict({"id": "Lawyer", "a": "keep"}, built["Lawyer"], "reader-5", "second")]
    second = write_readings(again, tmp_path / "review" / "0.6.0-r2" / "pt.jsonl")
    assert main(["review", "import", "--round", "0.6.0-r2", "--readings", str(second), "--submitted-at",
                 "2026-12-04T00:00:00Z", *common]) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert "0 new line(s), 1 replaced" in printed and "2 confirming the file's line (left as it is)" in printed
    after = {l["source_id"]: l for l in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert after["Lawyer"] == before["Lawyer"] and after["Judge"] == before["Judge"]
    assert (after["Loan_Officer"]["review"], after["Loan_Officer"]["annotators"]) == ("0.6.0-r2", ["reader-4"])
    # one agreement file for every round: round 2's figures beside round 1's (which had no second reading)
    figures = [json.loads(l) for l in (out.parent / "pt.review-agreement.jsonl").read_text().splitlines()]
    assert [(f["round"], f["question"], f["records"]) for f in figures] == [
        ("0.6.0-r2", "keep_fix_drop", 1), ("0.6.0-r2", "text", 1)]
    c = read_corrections(out, "pt")
    assert c.translations["Loan_Officer"].masculine == "analista de crédito"
    assert c.translations["Judge"].review == "0.5.0-r1"


@pytest.mark.parametrize("line, message", [
    ('{"id": "Lawyer"}', "missing field(s)"),
    ('not json', "not valid JSON"),
    (json.dumps({"id": "Lawyer", "reader": "r", "pass": "fifth", "action": "keep", "masculine": "a", "feminine": "b",
                 "gender_marking": "gendered", "flag": None, "reason": None, "built": ["a", "b"]}), "pass 'fifth'"),
    (json.dumps({"id": "Lawyer", "reader": "r", "pass": "first", "action": "fix", "masculine": "a", "feminine": "b",
                 "gender_marking": "gendered", "flag": None, "reason": None, "built": ["a", "c"]}), "needs its reason"),
    (json.dumps({"id": "Lawyer", "reader": "r", "pass": "first", "action": "fix", "masculine": "a\x07", "feminine": "b",
                 "gender_marking": "gendered", "flag": None, "reason": "x", "built": ["a", "c"]}), "control character"),
])
def test_a_broken_readings_file_is_one_error_naming_file_and_line(tmp_path, capsys, line, message):
    path = tmp_path / "pt.jsonl"
    path.write_text(json.dumps(readings()[0]) + "\n" + line + "\n", encoding="utf-8")
    rc = main(["review", "agreement", "--lang", "pt", "--readings", str(path)])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith(f"error: {path}:2: ") and message in err and len(err.splitlines()) == 1, err
    with pytest.raises(AnnotationError):
        read_readings(path)


def test_a_readers_verdicts_are_checked_against_the_pack(tmp_path, capsys):
    pack = tmp_path / "pack.jsonl"
    pack.write_text("".join(json.dumps(x) + "\n" for x in PACK), encoding="utf-8")
    verdicts = tmp_path / "verdicts-01.jsonl"
    verdicts.write_text(json.dumps({"id": "Software_Company", "a": "keep"}) + "\n", encoding="utf-8")
    rc = main(["review", "reading", "--lang", "pt", "--pack", str(pack), "--verdicts", str(verdicts), "--reader", "r1",
               "--pass", "first", "--readings", str(tmp_path / "r.jsonl")])
    err = capsys.readouterr().err
    assert rc == 2 and "keep, but the build has no title for 'Software_Company'" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "r.jsonl").exists()
    verdicts.write_text("".join(json.dumps(v) + "\n" for v in FIRST), encoding="utf-8")
    assert main(["review", "reading", "--lang", "pt", "--pack", str(pack), "--verdicts", str(verdicts), "--reader",
                 "r1", "--pass", "first", "--readings", str(tmp_path / "r.jsonl")]) == 0
    assert len(read_readings(tmp_path / "r.jsonl", "pt")) == 4


def test_a_bad_round_name_is_one_error_before_any_server_is_asked(capsys, monkeypatch):
    monkeypatch.delenv("ARGILLA_API_URL", raising=False)
    rc = main(["pull", "--lang", "pt", "--review", "round one!", "--out", "/nonexistent/pt.jsonl"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: --review 'round one!'; expected the round's name") and len(err.splitlines()) == 1


def test_esco_hints_read_melo_through_the_builders_one_reader(tmp_path, monkeypatch):
    """The review pack's ESCO hints: an English title that is an ESCO English label (any case) gets its occupation's
    labels in the language, read from a MELO copy by builder/esco.py's checked reader; a damaged file is one
    AnnotationError naming file and line, not a traceback."""
    from annotation import AnnotationError
    from annotation.review import esco_hints
    from builder import esco
    from tests.builder.test_esco import SPANISH, URI, pin_melo, write_melo

    root = tmp_path / "melo"
    write_melo(root, "en", [("aaa1", "technical director", ["chief technical officer"]), ("ccc3", "data analyst", [])])
    write_melo(root, "es", SPANISH)
    for lang in ("en", "es"):
        pin_melo(monkeypatch, root, lang)
    monkeypatch.setenv("GJT_MELO_DIR", str(root))
    hints = esco_hints("es", ["Technical Director", "Data Analyst", "Gardener"])
    assert hints == {"Technical Director": ["director técnico/directora técnica", "directora técnica",
                                            "director técnico", "jefe técnico", "jefa técnica", "gerente técnico"],
                     "Data Analyst": ["analista de datos", "especialista en datos"]}
    assert esco_hints("ca", ["Technical Director"]) == {}  # ESCO has no Catalan: no pinned MELO dataset
    mapping = esco.melo_dataset(root, "es") / "concept_mapping.tsv"
    mapping.write_text(mapping.read_text(encoding="utf-8").replace(f"\t{URI}aaa1\n", "\t\n", 1), encoding="utf-8")
    with pytest.raises(AnnotationError, match=rf"{mapping}:2: empty value"):
        esco_hints("es", ["Technical Director"])


def test_esco_agreement_counts_built_forms_among_escos_labels():
    from annotation.review import esco_agreement

    pack = [{"esco": ["director técnico/directora técnica", "jefe técnico"], "built": ["Director  técnico", "directora técnica"]},
            {"esco": ["jefe de obra/jefa de obra"], "built": ["jefe de obra", "jefa del obra"]},  # the feminine is not ESCO's
            {"esco": ["analista de datos"], "built": ["analista", "analista"]},
            {"built": ["jardinero", "jardinera"]}]  # no ESCO label for its English title: not counted
    assert esco_agreement(pack) == {"ids": 4, "with_esco": 3, "masculine": 2, "feminine": 1, "both": 1}
