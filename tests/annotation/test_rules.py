"""``python -m annotation rule``: one reviewed term fix for every title holding it, written as a rule that every
build applies (builder/rules.py; the end-to-end test rebuilds with it, from a source with titles new since)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from annotation.cli import main
from builder.corrections import read_rule_lines, read_rules
from eval.testset import read_testset
from tests.annotation.conftest import write_tiny_testset
from tests.builder.test_rules import TITLES, write_stage
from tests.read_only import read_only


def with_titles(root: Path, titles: dict[str, tuple[str | None, str | None]]) -> None:
    path = root / "pt" / "translations.parquet"
    df = pl.read_parquet(path)
    for sid, (m, f) in titles.items():
        row = pl.col("source_id") == sid
        df = df.with_columns(pl.when(row).then(pl.lit(m)).otherwise(pl.col("title_masculine")).alias("title_masculine"),
                             pl.when(row).then(pl.lit(f)).otherwise(pl.col("title_feminine")).alias("title_feminine"))
    df.write_parquet(path)


def rule(tmp_path, capsys, *extra) -> tuple[int, str, str]:
    rc = main(["rule", "--data", str(tmp_path / "data"), "--lang", "pt", "--out", str(tmp_path / "c" / "pt.jsonl"),
               *extra])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture
def data(tmp_path):
    write_tiny_testset(tmp_path / "data")
    # the term in a settled pair (Lawyer, Nurse), a review record (Waiter) and a word that merely contains it
    with_titles(tmp_path / "data", {"Lawyer": ("advogado de conta", "advogada de conta"),
                                    "Nurse": ("enfermeiro de conta", "enfermeira de conta"),
                                    "Waiter": ("garçom de conta", "garçom de conta"),
                                    "Data_Analyst": ("analista de contabilidade", "analista de contabilidade")})
    return tmp_path / "data"


def test_dry_run_lists_the_records_and_writes_nothing(data, tmp_path, capsys):
    rc, out, err = rule(tmp_path, capsys, "--find", "de conta", "--replace", "de contas")
    assert rc == 0, err
    # the review record (Waiter) is changed too, and said to stay a review item (issue 35)
    assert "rule 'de conta' → 'de contas': 3 record(s) of this build would change" in out
    assert "Lawyer (Lawyer): advogado de conta → advogado de contas · advogada de conta → advogada de contas" in out
    waiter = next(line for line in out.splitlines() if line.startswith("  Waiter (Waiter): garçom de conta → garçom de contas"))
    assert waiter.endswith("(still a review item: a person decides it in Argilla, shown the fixed title)")
    assert "Data_Analyst" not in out  # 'contabilidade' holds 'conta' but not as a word
    assert not (tmp_path / "c").exists()


def test_apply_writes_only_the_rule_checked_by_the_builders_reader(data, tmp_path, capsys):
    corrections = tmp_path / "c" / "pt.jsonl"
    corrections.parent.mkdir()
    # a person wrote Nurse's titles (a title they left null would be the build's proposal, which a rule fixes)
    earlier = {"kind": "translation", "lang": "pt", "source_id": "Nurse", "record_id": "pt-translation-Nurse",
               "masculine": "enfermeiro de conta", "feminine": "enfermeira de conta", "gender_marking": "gendered",
               "flag": None, "annotators": ["rui"], "submitted_at": "2026-01-01T00:00:00Z"}
    corrections.write_text(json.dumps(earlier) + "\n", encoding="utf-8")
    before = corrections.read_bytes()
    rc, out, err = rule(tmp_path, capsys, "--find", "De Conta", "--replace", "de contas", "--english", "lawyer")
    assert rc == 0 and "--apply" in out  # the English word keeps it to Lawyer; a dry run first
    rc, out, err = rule(tmp_path, capsys, "--find", "de conta", "--replace", "de contas", "--apply")
    assert rc == 2 and err.startswith("error: --apply needs --annotator NAME")
    rc, out, err = rule(tmp_path, capsys, "--find", "de conta", "--replace", "de contas", "--apply", "--annotator", "ana")
    assert rc == 0, err
    assert "2 record(s) of this build will change in the next build" in out and "Lawyer (Lawyer)" in out
    assert "already corrected by a person, not changed" in out and "Nurse" in out  # the person's answer stays
    rules_file = corrections.with_suffix(".rules.jsonl")
    assert f"rule r1 written to {rules_file}" in out
    assert corrections.read_bytes() == before  # no correction line: the build applies the rule
    [(lineno, kept)] = read_rule_lines(rules_file, "pt")  # the builder's own reader
    assert (kept["id"], kept["lang"], kept["find"], kept["replace"], kept["english_word"], kept["annotators"]) == (
        "r1", "pt", "de conta", "de contas", None, ["ana"])
    # the same fix again is refused; another gets the next id
    rc, out, err = rule(tmp_path, capsys, "--find", "DE  conta", "--replace", "de contas", "--apply", "--annotator", "rui")
    assert rc == 2 and err.startswith(f"error: {rules_file}: rule r1 already replaces 'de conta'"), err
    rc, out, err = rule(tmp_path, capsys, "--find", "astronauta", "--replace", "cosmonauta", "--apply", "--annotator", "rui")
    assert rc == 0 and "no title of this build holds the term" in out and "rule r2 written" in out
    assert [r.id for r in read_rules(rules_file, "pt")] == ["r1", "r2"]


def test_a_bad_rules_file_is_one_error_line_and_nothing_is_written(data, tmp_path, capsys):
    rules_file = tmp_path / "c" / "pt.rules.jsonl"
    rules_file.parent.mkdir()
    rules_file.write_text('{"find": "de conta", "replace": "de contas"}\n', encoding="utf-8")
    rc, out, err = rule(tmp_path, capsys, "--find", "x", "--replace", "y", "--apply", "--annotator", "ana")
    assert rc == 2 and err.startswith(f"error: {rules_file}:1: missing field(s)") and len(err.splitlines()) == 1
    assert rules_file.read_text() == '{"find": "de conta", "replace": "de contas"}\n'
    rules_file.unlink()
    rc, out, err = rule(tmp_path, capsys, "--find", "de conta", "--replace", "x", "--english", "two words")
    assert rc == 2 and "english_word 'two words' is not one word" in err


def test_an_unwritable_rules_folder_is_one_error_line_and_the_file_stays(data, tmp_path, capsys):
    rc, out, err = rule(tmp_path, capsys, "--find", "de conta", "--replace", "de contas", "--apply", "--annotator", "ana")
    assert rc == 0, err
    rules_file = tmp_path / "c" / "pt.rules.jsonl"
    before = rules_file.read_bytes()
    with read_only(tmp_path / "c"):
        rc, out, err = rule(tmp_path, capsys, "--find", "astronauta", "--replace", "cosmonauta", "--apply",
                            "--annotator", "ana")
        assert rules_file.read_bytes() == before
    assert rc == 2 and err.startswith(f"error: {rules_file}: cannot write") and "Traceback" not in err, err
    assert len(err.splitlines()) == 1


def test_the_next_build_applies_the_rule_also_to_titles_new_since(tmp_path, capsys):
    """The real postprocess stage builds a set; `annotation rule --apply` writes the rule against it; the next build,
    from a source with more titles, applies it to every settled title holding the term, new ones too."""
    from builder.__main__ import main as builder

    then = tmp_path / "then"
    src, data = write_stage(then, ("Lawyer", "Account_Clerk"))
    corrections = tmp_path / "c" / "pt.jsonl"
    corrections.parent.mkdir()
    corrections.write_text("", encoding="utf-8")
    args = ["postprocess", "--lang", "pt", "--corrections", str(corrections), "--cache", str(tmp_path / "cache"), "--quiet"]
    assert builder([*args, "--source", str(src), "--out", str(data)]) == 0
    rc = main(["rule", "--data", str(data), "--lang", "pt", "--out", str(corrections), "--find", "de conta",
               "--replace", "de contas", "--apply", "--annotator", "ana"])
    out = capsys.readouterr().out
    assert rc == 0 and "Account_Clerk (Account Clerk): escriturário de conta → escriturário de contas" in out, out
    src, data = write_stage(tmp_path / "now", tuple(TITLES))  # Account_Manager, _Lawyer, _Executive are new
    assert builder([*args, "--source", str(src), "--out", str(data)]) == 0
    rebuilt = read_testset(data, "pt")
    changed = rebuilt.stats["corrections"]["rules"]["rules"][0]
    # every source holding the term, the doubtful Executive too, fixed on its input before the layer read it
    assert sorted(t["source_id"] for t in changed["input_records"]) == [
        "Account_Agent", "Account_Clerk", "Account_Executive", "Account_Lawyer", "Account_Manager"]
    manager = rebuilt.corpus.filter(pl.col("source_ids").list.contains("Account_Manager")).row(0, named=True)
    assert (manager["text"], manager["status"], manager["provenance"]) == ("gerente de contas", "rule",
                                                                          "fixture:1+rule:r1")
    # the dry run on the new build: the rule has done its work
    assert main(["rule", "--data", str(data), "--lang", "pt", "--out", str(corrections), "--find", "de conta",
                 "--replace", "de contas"]) == 0
    assert "0 record(s) of this build would change" in capsys.readouterr().out
