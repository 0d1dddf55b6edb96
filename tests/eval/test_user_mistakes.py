"""python -m eval: a user's mistake is one `error:` line and exit status 2, Ctrl-C exit 130, never a traceback."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "eval", *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def one_error_line(r: subprocess.CompletedProcess, *needles: str) -> None:
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and r.stderr.startswith("error: "), r.stderr
    for needle in needles:
        assert needle in r.stderr, r.stderr


def test_out_that_is_a_file(tmp_path, small_data):
    out = tmp_path / "afile"
    out.write_text("x")
    one_error_line(run_cli("run", "--data", str(small_data), "--model", "tfidf-char", "--out", str(out),
                           "--cache", str(tmp_path / "c"), "--quiet"), f"{out}: --out is a file")


def test_empty_models_list(tmp_path, small_data):
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"eval": {"models": []}}))
    one_error_line(run_cli("run", "--data", str(small_data), "--out", str(tmp_path / "o"), "--params", str(params),
                           "--cache", str(tmp_path / "c"), "--quiet"), "eval.models is []")


def test_qrels_without_a_relevant_line(tmp_path):
    """Streamed a slice at a time (as `eval run` reads them), qrels without a relevant line are refused, naming
    the file, before anything is scored or written."""
    from dataclasses import replace

    import polars as pl

    from eval.testset import write_testset

    from .testsets import make_testset

    ts = make_testset("pt")
    write_testset(replace(ts, qrels=ts.qrels.with_columns(relevance=pl.lit(0, dtype=pl.Int64))), tmp_path / "data")
    one_error_line(run_cli("run", "--data", str(tmp_path / "data"), "--model", "tfidf-char", "--out", str(tmp_path / "o"),
                           "--cache", str(tmp_path / "c"), "--quiet"),
                   f"{tmp_path / 'data' / 'pt' / 'qrels.tsv'}: no relevant pair; a test set needs relevance labels")
    assert not (tmp_path / "o").exists()


def _figures(stdout: str) -> str:
    """The summary lines without how many texts were encoded (that differs when part of the cache was usable)."""
    import re

    return re.sub(r"; encoded \d+ of \d+ texts", "", stdout)


def _model_db(cache: Path) -> Path:
    (db,) = cache.glob("*.sqlite")
    return db


def test_corrupt_and_truncated_embedding_caches(tmp_path, small_data):
    args = ["run", "--data", str(small_data), "--model", "m-use", "--out", str(tmp_path / "o"), "--quiet"]
    cache = tmp_path / "c"
    first = run_cli(*args, "--cache", str(cache))
    if first.returncode != 0 and "not installed" in first.stderr:
        import pytest

        pytest.skip(first.stderr.strip())
    assert first.returncode == 0, first.stderr
    db = _model_db(cache)
    # 10% NaN vectors (once MAP 0.414 -> 0.027 with exit 0): checked when read back, re-encoded, same figures.
    with sqlite3.connect(db) as con:
        con.execute("UPDATE embedding SET vector = ? WHERE rowid % 10 = 0", (b"\xff\xff\xff\x7f" * 512,))
        spoiled = con.execute("SELECT count(*) FROM embedding WHERE rowid % 10 = 0").fetchone()[0]
    assert spoiled > 0
    again = run_cli(*args, "--cache", str(cache), "--force")
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    assert _figures(again.stdout) == _figures(first.stdout)
    assert f"note: {db}: " in again.stderr and "encoded again" in again.stderr, again.stderr
    # Truncated vectors (a killed writer, a foreign tool): re-encoded, the results are unchanged.
    with sqlite3.connect(db) as con:
        con.execute("UPDATE embedding SET vector = substr(vector, 1, 7)")
    again = run_cli(*args, "--cache", str(cache), "--force")  # --force: scored again, not taken from the store
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    assert again.stdout == first.stdout  # every vector was unusable, so every text was encoded again: same figures
    # A file that is not SQLite at all: one error line naming the cache.
    db.write_bytes(b"not a database\n" * 200)
    one_error_line(run_cli(*args, "--cache", str(cache), "--force"), f"{cache}: the embedding cache is corrupt", "delete it")


def test_ctrl_c_exits_130_without_a_traceback(tmp_path, small_data):
    proc = subprocess.Popen([sys.executable, "-m", "eval", "run", "--data", str(small_data), "--model", "m-use",
                             "--out", str(tmp_path / "o"), "--cache", str(tmp_path / "c")],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The embedding cache appears when encoding starts: the command is running, not Python's own start-up (its
    # progress bars draw only on a terminal, so stderr says nothing here).
    import time

    deadline = time.monotonic() + 120
    while not (tmp_path / "c").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    started = (tmp_path / "c").exists() and proc.poll() is None
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert started, "the run ended (or never started encoding) before it could be interrupted"
    assert proc.returncode == 130 and "Traceback" not in err and "interrupted" in err, err


def test_column_types_against_the_format(tmp_path):
    """A Struct `text` (once cast and scored, exit 0) and an Int `gender` (once a traceback): one error line naming
    the file and the column, exit 2, nothing written."""
    import json

    import polars as pl

    from eval.testset import write_testset

    from .testsets import make_testset

    for column, value in (("text", pl.struct(pl.col("text"))), ("gender", pl.lit(1, dtype=pl.Int32))):
        data = tmp_path / column / "data"
        folder = write_testset(make_testset("pt"), data)
        path = folder / "queries.parquet"
        pl.read_parquet(path).with_columns(value.alias(column)).write_parquet(path)
        stats = json.loads((folder / "stats.json").read_text())
        stats.pop("set_integrity")
        (folder / "stats.json").write_text(json.dumps(stats))
        out = tmp_path / column / "o"
        r = run_cli("run", "--data", str(data), "--model", "tfidf-char", "--out", str(out),
                    "--cache", str(tmp_path / "c"), "--quiet")
        one_error_line(r, f"{path}: column {column!r} has type")
        assert len(r.stderr.splitlines()) == 1 and not out.exists()


def _run_with_stdout_closed(args: list[str], cwd: Path = REPO) -> tuple[int, str]:
    """Run ``python <args>`` with its stdout a pipe whose reader has already gone (as `| head -0`, or `| head -1`
    after its line): every write to stdout meets EPIPE. Returns the exit status and stderr."""
    proc = subprocess.Popen([sys.executable, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    proc.stdout.close()
    err = proc.stderr.read()
    return proc.wait(timeout=600), err


def test_a_closed_stdout_changes_neither_the_outputs_nor_the_status(tmp_path, small_data):
    """`eval run ... | head -1` aborted with "Broken pipe" and wrote none of --out."""
    common = ["--data", str(small_data), "--model", "tfidf-char", "--cache", str(tmp_path / "c"), "--quiet"]
    assert run_cli("run", *common, "--out", str(tmp_path / "open")).returncode == 0
    rc, err = _run_with_stdout_closed(["-m", "eval", "run", *common, "--out", str(tmp_path / "closed")])
    assert rc == 0 and err == "", err
    written = sorted(p.relative_to(tmp_path / "open") for p in (tmp_path / "open").rglob("*") if p.is_file())
    assert written and written == sorted(p.relative_to(tmp_path / "closed")
                                         for p in (tmp_path / "closed").rglob("*") if p.is_file())
    for rel in written:
        if rel.suffix in (".json", ".md", ".tsv"):
            assert (tmp_path / "closed" / rel).read_bytes() == (tmp_path / "open" / rel).read_bytes(), rel
    # A real error is still one line and exit status 2 with stdout closed.
    rc, err = _run_with_stdout_closed(["-m", "eval", "run", *common, "--data", str(tmp_path / "nothing"),
                                       "--out", str(tmp_path / "x")])
    assert rc == 2 and err.startswith("error: ") and len(err.splitlines()) == 1, err
