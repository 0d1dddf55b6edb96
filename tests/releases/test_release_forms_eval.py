"""A release of a test set with extra query forms (doublet, neomorpheme) scores in `eval run` as the data it was
made from. Here, beside the release fixtures it uses (``project``), rather than in tests/eval importing them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from eval.testset import TestSet, table1_counts, write_testset
from releases import make_release, verify_release
from tests.eval.testsets import forms_testset

from .conftest import record_data, small_testset

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "eval", *args], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_a_release_with_forms_round_trips_into_eval_run(tmp_path, project):
    """make -> verify -> `eval run` on the release gives the forms figures of `eval run` on the data it was made from."""
    ts = forms_testset()
    stats = {**small_testset("pt").stats, "queries": table1_counts(ts.queries), "corpus": table1_counts(ts.corpus),
             "qrels": ts.qrels.height}
    write_testset(TestSet("pt", ts.queries, ts.corpus, ts.qrels, stats), project.data)
    record_data(project)
    release = project.root / "release"
    make_release(project.data, "0.1.0", release, project.params)
    verify_release(release)
    figures = {}
    for name, root in (("data", project.data), ("release", release)):
        done = run_cli("run", "--data", str(root), "--lang", "pt", "--model", "tfidf-char", "--out", str(tmp_path / name),
                       "--cache", str(tmp_path / "cache"), "--quiet")
        assert done.returncode == 0, done.stderr
        (path,) = (tmp_path / name).glob("tfidf-char__*.json")
        figures[name] = {c: v["forms"] for c, v in json.loads(path.read_text())["languages"]["pt"]["corpora"].items()}
    assert figures["release"] == figures["data"]
    assert figures["release"]["masculine"]["doublet"]["symmetry"]["vs_M"]["AO"]["n"] == 4
