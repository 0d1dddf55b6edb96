"""Issue 38's probe of the eval CLI, kept: no version writes outside --out, no stale stored result, every
--params mistake refused, every mistake one `error:` line. Each case failed on main 7194864."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from eval.testset import read_testset, write_testset
from tests.cli_errors import one_error_line

from .testsets import make_testset

REPO = Path(__file__).resolve().parents[2]
TRAVERSAL = "1/../../../../../../elsewhere/PWNED"


def run_cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "eval", *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def files_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def run_args(data: Path, out: Path, tmp_path: Path) -> list[str]:
    return ["run", "--data", str(data), "--model", "tfidf-char", "--out", str(out), "--cache", str(tmp_path / "c"),
            "--quiet"]


def test_a_version_in_stats_json_that_is_a_path_writes_nothing_outside_out(tmp_path):
    ts = make_testset("pt")
    write_testset(replace(ts, stats={**ts.stats, "version": TRAVERSAL}), tmp_path / "a" / "b" / "data")
    before = files_under(tmp_path)
    r = run_cli(*run_args(tmp_path / "a" / "b" / "data", tmp_path / "a" / "b" / "out", tmp_path))
    one_error_line(r, "pt/stats.json: version", "not a release version")
    assert not (tmp_path / "elsewhere").exists() and not list(tmp_path.rglob("PWNED*"))
    assert files_under(tmp_path) == before


def test_a_version_in_a_release_manifest_that_is_a_path_writes_nothing_outside_out(tmp_path):
    data = tmp_path / "a" / "data"
    write_testset(make_testset("pt"), data)
    (data / "manifest.json").write_text(json.dumps({"version": TRAVERSAL}))
    r = run_cli(*run_args(data, tmp_path / "a" / "out", tmp_path))
    one_error_line(r, "manifest.json: version")
    assert not list(tmp_path.rglob("PWNED*"))


def test_collect_of_a_stored_result_naming_a_path_as_version_writes_nothing_outside_out(tmp_path, small_data):
    store = tmp_path / "store"
    assert run_cli("run", "--data", str(small_data), "--model", "tfidf-char", "--lang", "pt", "--store", str(store),
                   "--store-only", "--cache", str(tmp_path / "c"), "--quiet").returncode == 0
    (stored,) = store.rglob("pt.json")
    doc = json.loads(stored.read_text())
    doc["testset"]["version"] = TRAVERSAL
    stored.write_text(json.dumps(doc))
    r = run_cli("collect", str(store), "--out", str(tmp_path / "a" / "b" / "out"))
    one_error_line(r, "is not a plain file name")
    assert not list(tmp_path.rglob("PWNED*")) and not (tmp_path / "a" / "b" / "out").exists()


def _map(out: Path) -> float:
    (doc,) = [json.loads(p.read_text()) for p in out.glob("tfidf-char__*.json")]
    return doc["languages"]["pt"]["corpora"]["masculine"]["MAP"]["masculine"]["value"]


def test_a_set_changed_under_the_same_version_is_scored_again_not_answered_from_the_store(tmp_path):
    data = tmp_path / "data"
    ts = make_testset("pt")
    stamped = replace(ts, stats={**ts.stats, "version": "0.9.0"})
    write_testset(stamped, data)
    out = tmp_path / "out"
    first = run_cli(*run_args(data, out, tmp_path))
    assert first.returncode == 0, first.stderr
    before = _map(out)
    # half the relevance labels removed, the version kept (as a set rebuilt after corrections keeps it)
    qrels = stamped.qrels.filter(stamped.qrels["query_id"].is_in(stamped.qrels["query_id"].unique().sort()[::2]))
    write_testset(replace(stamped, qrels=qrels), data)
    second = run_cli(*run_args(data, out, tmp_path))
    assert second.returncode == 0, second.stderr
    assert "not rerun" not in second.stdout, second.stdout
    after = _map(out)
    assert after != before
    # and the unchanged set is still answered from the store
    third = run_cli(*run_args(data, out, tmp_path))
    assert "not rerun" in third.stdout and _map(out) == after


@pytest.mark.parametrize("command", ["run", "collect", "audit"])
@pytest.mark.parametrize("given", ["missing", "folder", "/dev/zero", "/dev/urandom"])
def test_a_params_file_that_is_missing_a_folder_or_a_device_is_refused(tmp_path, small_data, command, given):
    (tmp_path / "a-folder").mkdir()
    params = {"missing": str(tmp_path / "no-such.yaml"), "folder": str(tmp_path / "a-folder")}.get(given, given)
    args = {"run": run_args(small_data, tmp_path / "out", tmp_path),
            "collect": ["collect", str(tmp_path), "--out", str(tmp_path / "out")],
            "audit": ["audit", "--data", str(small_data), "--models", "tfidf-char,m-use", "--out",
                      str(tmp_path / "out"), "--cache", str(tmp_path / "c"), "--quiet"]}[command]
    r = run_cli(*args, "--params", params)
    one_error_line(r, params)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("text, needle", [
    ("bulid:\n  web: {}\n", "unknown top-level key(s) bulid"),
    ("eval:\n  memory_budget_mb: .nan\n", "eval.memory_budget_mb is nan; expected a finite number"),
    ("eval:\n  seed: -1\n", "eval.seed must be >= 0"),
])
def test_a_params_mistake_is_one_line_before_any_work(tmp_path, small_data, text, needle):
    params = tmp_path / "p.yaml"
    params.write_text(text)
    r = run_cli(*run_args(small_data, tmp_path / "out", tmp_path), "--params", str(params))
    one_error_line(r, needle)
    assert not (tmp_path / "out").exists()


def test_the_default_params_yaml_may_be_absent(tmp_path, small_data):
    """Outside a checkout, without --params, eval runs on the defaults (as before)."""
    r = run_cli(*run_args(small_data, tmp_path / "out", tmp_path), cwd=tmp_path)
    assert r.returncode == 0, r.stderr


def test_a_results_file_nested_100k_deep_is_one_line(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    one_error_line(run_cli("compare", str(deep)), str(deep))
    one_error_line(run_cli("report", str(deep), "--out", str(tmp_path / "site")), str(deep))
    assert not (tmp_path / "site").exists()


def test_a_summary_folder_holding_a_users_file_is_refused_and_kept(tmp_path, small_data):
    summary = tmp_path / "metrics"
    summary.mkdir()
    (summary / "thesis.tex").write_text("mine")
    r = run_cli(*run_args(small_data, tmp_path / "out", tmp_path), "--summary", str(summary))
    one_error_line(r, "thesis.tex")
    assert (summary / "thesis.tex").read_text() == "mine"


@pytest.fixture
def results_file(tmp_path, small_data) -> Path:
    out = tmp_path / "runs"
    assert run_cli("run", "--data", str(small_data), "--model", "tfidf-char", "--out", str(out), "--cache",
                   str(tmp_path / "c"), "--quiet").returncode == 0
    (path,) = out.glob("tfidf-char__*.json")
    return path


def test_a_nan_map_is_refused_by_compare_and_report_not_printed_as_nan(tmp_path, results_file):
    doc = json.loads(results_file.read_text())
    doc["languages"]["pt"]["corpora"]["masculine"]["MAP"]["feminine"]["value"] = float("nan")
    results_file.write_text(json.dumps(doc))  # json writes NaN, as a damaged or hand-edited file may hold
    compare = run_cli("compare", str(results_file))
    one_error_line(compare, str(results_file), "nan")
    assert "nan" not in compare.stdout
    one_error_line(run_cli("report", str(results_file), "--out", str(tmp_path / "site")), str(results_file))
    assert not (tmp_path / "site").exists()


def test_a_language_key_that_is_markup_is_refused_by_compare_as_by_report(tmp_path, results_file):
    doc = json.loads(results_file.read_text())
    doc["languages"]["<img src=x onerror=alert(1)>"] = doc["languages"].pop("pt")
    results_file.write_text(json.dumps(doc))
    for command in (["compare", str(results_file)], ["report", str(results_file), "--out", str(tmp_path / "site")]):
        r = run_cli(*command)
        one_error_line(r, "is not a language code")
        assert "<img" not in r.stdout


def test_a_full_disk_under_the_embedding_cache_is_named_as_such_not_as_a_corrupt_cache(tmp_path, small_data):
    from tests.builder.test_cache_storage import tmpfs

    with tmpfs(tmp_path / "disk", "32k") as disk:
        (disk / "cache").mkdir()
        try:  # the disk filled up to its last block, the cache folder there
            with open(disk / "filler", "wb") as fh:
                while True:
                    fh.write(b"\0" * 4096)
                    fh.flush()
        except OSError:
            pass
        r = run_cli("run", "--data", str(small_data), "--model", "m-use", "--out", str(tmp_path / "out"),
                    "--cache", str(disk / "cache"), "--quiet")
        one_error_line(r, f"{disk / 'cache'}: the embedding cache cannot be written: the disk holding")
        assert "corrupt" not in r.stderr and "delete it" not in r.stderr, r.stderr
