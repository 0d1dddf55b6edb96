"""``python -m annotation rule``: one reviewed term fix for every proposed title holding it, written as ordinary
corrections the builder applies (the end-to-end test rebuilds with them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from annotation.cli import main
from builder.corrections import read_lines
from eval.testset import read_testset
from tests.annotation.conftest import write_english_source, write_tiny_testset

REPO = Path(__file__).resolve().parents[2]


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
    assert "rule 'de conta' → 'de contas': 2 record(s) would change" in out
    assert "Lawyer (Lawyer): advogado de conta → advogado de contas · advogada de conta → advogada de contas" in out
    assert "1 record(s) doubtful" in out and "Waiter" in out
    assert "Data_Analyst" not in out  # 'contabilidade' holds 'conta' but not as a word
    assert not (tmp_path / "c").exists()


def test_apply_writes_corrections_the_builder_reads_and_the_rule_with_what_it_touched(data, tmp_path, capsys):
    corrections = tmp_path / "c" / "pt.jsonl"
    corrections.parent.mkdir()
    earlier = {"kind": "translation", "lang": "pt", "source_id": "Nurse", "record_id": "pt-translation-Nurse",
               "masculine": None, "feminine": None, "gender_marking": "gendered", "flag": None,
               "annotators": ["rui"], "submitted_at": "2026-01-01T00:00:00Z"}
    corrections.write_text(json.dumps(earlier) + "\n", encoding="utf-8")
    rc, out, err = rule(tmp_path, capsys, "--find", "De Conta", "--replace", "de contas", "--english", "lawyer")
    assert rc == 0 and "--apply" in out  # the English word keeps it to Lawyer; a dry run first
    rc, out, err = rule(tmp_path, capsys, "--find", "de conta", "--replace", "de contas", "--apply")
    assert rc == 2 and err.startswith("error: --apply needs --annotator NAME")
    rc, out, err = rule(tmp_path, capsys, "--find", "de conta", "--replace", "de contas", "--apply", "--annotator", "ana")
    assert rc == 0, err
    assert "1 record(s) changed" in out and "already corrected by a person, not changed" in out
    lines = {line["source_id"]: line for _, line in read_lines(corrections, "pt")}  # the builder's own reader
    assert lines["Nurse"] == earlier  # a person's answer stays
    lawyer = lines["Lawyer"]
    assert (lawyer["masculine"], lawyer["feminine"], lawyer["gender_marking"], lawyer["annotators"]) == (
        "advogado de contas", "advogada de contas", "gendered", ["ana"])
    [kept] = [json.loads(l) for l in corrections.with_suffix(".rules.jsonl").read_text().splitlines()]
    assert (kept["find"], kept["replace"], kept["touched"], kept["annotators"]) == (
        "de conta", "de contas", ["Lawyer"], ["ana"])


@pytest.mark.slow
def test_the_next_build_applies_the_rule(tmp_path, capsys):
    source = write_english_source(tmp_path / "en")
    data, cache = tmp_path / "data", tmp_path / "cache"
    build = [sys.executable, "-m", "builder", "build", "--source", str(source), "--lang", "pt",
             "--translator", "bergamot", "--out", str(data), "--cache", str(cache), "--quiet"]
    subprocess.run(build, cwd=REPO, check=True, capture_output=True)
    lawyer = pl.read_parquet(data / "pt" / "translations.parquet").filter(pl.col("source_id") == "Lawyer").row(0, named=True)
    head = lawyer["title_masculine"].split()[0]  # whatever the offline translator made of it
    rc = main(["rule", "--data", str(data), "--lang", "pt", "--out", str(tmp_path / "c" / "pt.jsonl"),
               "--find", head, "--replace", "jurista", "--english", "lawyer", "--apply", "--annotator", "ana"])
    assert rc == 0, capsys.readouterr()
    subprocess.run([*build, "--corrections", str(tmp_path / "c" / "pt.jsonl")], cwd=REPO, check=True, capture_output=True)
    rebuilt = read_testset(data, "pt")
    items = rebuilt.queries.filter(pl.col("source_ids").list.contains("Lawyer"))
    expected = " ".join(["jurista", *lawyer["title_masculine"].split()[1:]])
    assert expected in items.filter(pl.col("gender").is_in(["masculine", "neutral"]))["text"].to_list(), items
    assert set(items["status"]) == {"corrected"} and set(items["provenance"]) == {"human:ana"}
