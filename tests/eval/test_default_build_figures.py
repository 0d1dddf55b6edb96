"""The figures of the default builds do not move when the code changes: `eval run` as the code is now, on the
newest published release, gives the figures the pipeline stored (results/metrics, four decimals) at the commit
that published it. A refactor of eval that changes a number fails here; a deliberate change of a definition
comes with a new release or an updated metrics file, committed by `dvc repro`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]


def newest_published() -> tuple[str, str]:
    """The newest version of published.json (the machine record ``python -m releases publish`` writes) and the
    commit that added it there. The README's table of the same is checked against that record by
    tests/releases/test_published.py; this test reads the record, not the prose."""
    from releases.anchor import publishing_commit, read_published

    entries = read_published(PROJECT)
    assert entries, "published.json records no published release"
    version = entries[-1]["version"]
    commit = publishing_commit(PROJECT, version)
    assert commit, f"no commit added {version} to published.json"
    return version, commit


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> tuple[Path, str]:
    version, commit = newest_published()
    out = tmp_path_factory.mktemp("published") / "release"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    # `dvc get` clones this repository at the commit and reads the release from its committed dvc-storage/
    done = subprocess.run(["dvc", "get", str(PROJECT), "release", "--rev", commit, "-o", str(out)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["version"] == version
    return out, commit


@pytest.mark.parametrize("lang", ["pt", "es"])
def test_tfidf_char_gives_the_stored_figures_of_the_published_release(release, lang, tmp_path):
    from eval.evaluate import evaluate
    from eval.models import CharTfidf, EmbeddingCache
    from eval.params import read_eval_settings

    folder, commit = release
    stored = json.loads(subprocess.run(["git", "-C", str(PROJECT), "show", f"{commit}:results/metrics/tfidf-char.{lang}.json"],
                                       capture_output=True, text=True, check=True).stdout)
    settings = read_eval_settings(PROJECT / "params.yaml")
    doc = evaluate(folder, [lang], CharTfidf(), EmbeddingCache(tmp_path / "cache"), settings, progress=False)
    from eval.__main__ import _rounded  # the metrics file's own rounding
    from eval.report import metrics_row_keys, summary_metrics

    row = summary_metrics([doc])[doc["model"]["name"]][lang]["masculine"]
    computed = _rounded({k: v for k, v in row.items() if k in metrics_row_keys([doc])})
    assert set(computed) == set(stored), "the metrics row names other figures than the published one"
    assert set(stored) <= set(computed), f"figures missing from the result: {sorted(set(stored) - set(computed))}"
    assert {k: computed[k] for k in stored} == stored
