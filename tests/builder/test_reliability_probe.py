"""Issue 38's probe of the builder CLI, kept: an output folder is replaced only when it holds nothing but what
the builder writes there (a user's file, the source itself: refused and kept), every URL one check, every params
mistake one `error:` line. Each case failed on main 7194864."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.builder.test_build import tiny_source
from tests.cli_errors import one_error_line

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "builder", *args], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def params(tmp_path: Path) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text("languages: []\n")
    return path


def test_source_into_a_folder_holding_a_users_file_is_refused_and_the_file_kept(tmp_path, params):
    src = tiny_source(tmp_path / "en")
    out = tmp_path / "out"
    out.mkdir()
    (out / "thesis.tex").write_text("\\chapter{Results}\n")
    one_error_line(cli("source", "--source", str(src), "--out", str(out), "--params", str(params)),
                   f"{out}: holds what this command does not write (thesis.tex)")
    assert snapshot(out) == {"thesis.tex": b"\\chapter{Results}\n"}


def test_source_into_the_folder_holding_the_source_is_refused_and_the_source_kept(tmp_path, params):
    src = tiny_source(tmp_path / "X" / "dataset" / "en")
    before = snapshot(tmp_path / "X")
    one_error_line(cli("source", "--source", str(src), "--out", str(tmp_path / "X" / "dataset"), "--params", str(params)),
                   "(en, en/annotations.tsv")
    assert snapshot(tmp_path / "X") == before


def test_source_over_its_own_earlier_copy_is_replaced(tmp_path, params):
    src = tiny_source(tmp_path / "en")
    out = tmp_path / "out"
    for _ in range(2):
        r = cli("source", "--source", str(src), "--out", str(out), "--params", str(params))
        assert r.returncode == 0, r.stderr
    assert sorted(snapshot(out)) == ["annotations.tsv", "corpus_documents.tsv", "manifest.json", "queries.tsv"]


def test_translate_into_a_language_folder_holding_a_users_file_is_refused(tmp_path, params):
    from builder.translators import offline_available

    if not offline_available("apertium", "es"):
        pytest.skip("apertium-eng-spa not installed")
    src = tiny_source(tmp_path / "en")
    (tmp_path / "out" / "es").mkdir(parents=True)
    (tmp_path / "out" / "es" / "notes.md").write_text("mine")
    one_error_line(cli("translate", "--source", str(src), "--lang", "es", "--route", "mt", "--translator", "apertium",
                       "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"), "--params", str(params),
                       "--quiet"), "(notes.md)")
    assert snapshot(tmp_path / "out") == {"es/notes.md": b"mine"}


@pytest.mark.parametrize("url, problem", [
    ("http://127.0.0.1:70000", "Port out of range 1-65535"),
    ("http://127.0.0.1:0", "port 0"),
    ("http://[::1", "Invalid IPv6 URL"),
    ("http://127.0.0.1:5x", "Port could not be cast"),
])
def test_a_libre_url_with_a_bad_port_or_address_is_one_line(tmp_path, params, url, problem):
    src = tiny_source(tmp_path / "en")
    args = ["translate", "--source", str(src), "--lang", "es", "--route", "mt", "--translator", "libre",
            "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"), "--params", str(params), "--quiet"]
    one_error_line(cli(*args, "--libre-url", url), problem)
    one_error_line(cli(*args, env={"LIBRE_URL": url}), problem)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("given", ["missing", "folder", "/dev/zero", "/dev/urandom"])
def test_a_params_file_that_is_missing_a_folder_or_a_device_is_refused(tmp_path, given):
    (tmp_path / "a-folder").mkdir()
    params = {"missing": str(tmp_path / "no-such.yaml"), "folder": str(tmp_path / "a-folder")}.get(given, given)
    one_error_line(cli("source", "--source", str(tiny_source(tmp_path / "en")), "--out", str(tmp_path / "out"),
                       "--params", params), params)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("settings, needle", [
    ({"bulid": {"web": {}}}, "unknown top-level key(s) bulid"),
    ({"build": {"web": {"backoff_s": float("nan")}}}, "build.web.backoff_s is nan; expected a finite number"),
    ({"build": {"web": {"timeout_s": float("inf")}}}, "build.web.timeout_s is inf; expected a finite number"),
    ({"build": {"templates": {"default": {"default": {"masculine": "He is {title}", "feminine": "She is {title}",
                                                        "lowercase": "yes"}}}}},
     "build.templates.default.default.lowercase is 'yes'; expected true or false"),
    ({"source": {"base_url": "https://127.0.0.1:99999/x"}}, "source.base_url is not a usable URL"),
    ({"build": {"web": {"libre_url": "http://[::1/"}}}, "build.web.libre_url is not a usable URL"),
])
def test_a_params_mistake_is_one_line_naming_the_file_and_key(tmp_path, settings, needle):
    params = tmp_path / "p.yaml"
    params.write_text(yaml.safe_dump({"languages": [], **settings}))
    one_error_line(cli("source", "--source", str(tiny_source(tmp_path / "en")), "--out", str(tmp_path / "out"),
                       "--params", str(params)), f"{params}", needle)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("damage", ["drop output_feminine", "in_queries as text"])
def test_postprocess_of_raw_translations_lacking_a_column_or_of_another_type_is_one_line(tmp_path, params, damage):
    import polars as pl

    from builder.translators import offline_available

    if not offline_available("apertium", "es"):
        pytest.skip("apertium-eng-spa not installed")
    src = tiny_source(tmp_path / "en")
    common = ["--source", str(src), "--lang", "es", "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"),
              "--params", str(params), "--quiet"]
    assert cli("translate", *common, "--route", "mt", "--translator", "apertium").returncode == 0
    raw_path = tmp_path / "out" / "es" / "raw_translations.parquet"
    raw = pl.read_parquet(raw_path)
    raw = raw.drop("output_feminine") if damage.startswith("drop") else raw.with_columns(pl.col("in_queries").cast(pl.String))
    raw.write_parquet(raw_path)
    before = snapshot(tmp_path / "out")
    one_error_line(cli("postprocess", *common, "--corrections", str(tmp_path / "none.jsonl")),
                   f"{raw_path}: not raw translations", "output_feminine (missing" if damage.startswith("drop")
                   else "in_queries (String; expected Boolean)")
    assert snapshot(tmp_path / "out") == before


@pytest.mark.parametrize("label", ["juez/jueza", "director técnico/directora técnica"])
def test_an_esco_file_whose_only_record_is_dropped_is_one_line(tmp_path, label):
    from tests.builder.test_esco import write_occupations

    esco = tmp_path / "esco-v1.2.0"
    write_occupations(esco, "es", [("a1", label, [])])
    one_error_line(cli("esco", "--esco", str(esco), "--lang", "es", "--out", str(tmp_path / "out"), "--cache",
                       str(tmp_path / "c"), "--quiet"), "nothing to test")
    assert not (tmp_path / "out" / "es").exists()


@pytest.mark.parametrize("char", ["\u2028", "\u202e", "\u2066"])
def test_the_source_reader_refuses_the_characters_the_corrections_reader_refuses(tmp_path, params, char):
    from builder.corrections import read_corrections
    from builder.errors import CorrectionsError

    src = tiny_source(tmp_path / "en")
    (src / "queries.tsv").write_text((src / "queries.tsv").read_text().replace("\tNurse", f"\tNur{char}se"))
    one_error_line(cli("source", "--source", str(src), "--out", str(tmp_path / "out"), "--params", str(params)),
                   f"queries.tsv:2: control character U+{ord(char):04X}")
    corrections = tmp_path / "pt.jsonl"
    corrections.write_text(json.dumps({
        "kind": "translation", "lang": "pt", "source_id": "Nurse", "record_id": "pt-translation-Nurse",
        "masculine": f"enfer{char}meiro", "feminine": "enfermeira", "gender_marking": "gendered", "flag": None,
        "annotators": ["ana"], "submitted_at": "2026-11-29T15:00:00Z"}) + "\n")
    with pytest.raises(CorrectionsError, match=f"masculine holds the control character U\\+{ord(char):04X}"):
        read_corrections(corrections, "pt")


def test_a_tampered_translation_cache_answer_does_not_reach_the_set(tmp_path, params):
    import sqlite3

    import polars as pl

    from builder.translators import offline_available

    if not offline_available("apertium", "es"):
        pytest.skip("apertium-eng-spa not installed")
    src = tiny_source(tmp_path / "en")
    common = ["--source", str(src), "--lang", "es", "--route", "mt", "--translator", "apertium", "--out",
              str(tmp_path / "out"), "--cache", str(tmp_path / "cache"), "--params", str(params), "--quiet"]
    assert cli("translate", *common).returncode == 0
    clean = pl.read_parquet(tmp_path / "out" / "es" / "raw_translations.parquet")
    db = sqlite3.connect(tmp_path / "cache" / "translations.sqlite")
    db.execute("UPDATE translations SET output = output || ?", ("\u202e\x00",))
    db.commit()
    db.close()
    assert cli("translate", *common).returncode == 0
    again = pl.read_parquet(tmp_path / "out" / "es" / "raw_translations.parquet")
    assert again.equals(clean)  # each tampered answer asked again, none kept


@pytest.mark.parametrize("translator", ["google", "mymemory"])
def test_a_language_pair_the_service_does_not_have_is_one_short_line(tmp_path, params, translator):
    packs = tmp_path / "packs"
    packs.mkdir()
    pack = yaml.safe_load((REPO / "languages" / "packs" / "fr.yaml").read_text(encoding="utf-8"))
    (packs / "xx.yaml").write_text(yaml.safe_dump({**pack, "code": "xx", "web_codes": {}}, allow_unicode=True),
                                   encoding="utf-8")
    r = cli("translate", "--source", str(tiny_source(tmp_path / "en")), "--lang", "xx", "--route", "mt",
            "--translator", translator, "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c"), "--params",
            str(params), "--quiet", env={"GJT_LANGUAGE_PACKS": str(packs)})
    one_error_line(r, f"{translator}: language pair en->xx not supported")
    assert len(r.stderr) < 500, r.stderr
