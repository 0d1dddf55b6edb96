"""The builder stages of the project's own dvc.yaml under real DVC: `dvc repro` rebuilds only what changed.

A temporary copy of the pipeline (dvc.yaml, params.yaml, the builder and languages packages, corrections/) is built for
Spanish only (apertium, fast), then a builder parameter read only by postprocess is changed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
ENGLISH = REPO.parent / "shared" / "data" / "jobtitlesimilarity" / "dataset" / "en"
BUILDER_STAGES = {"source", "translate@es", "postprocess@es"}


def dvc(cwd: Path, *args: str) -> str:
    # the stage commands run `python`: the interpreter of this test, with the project installed
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "JOBTITLES_SOURCE_DIR": str(ENGLISH)}
    done = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"dvc {' '.join(args)} failed:\n{done.stdout}{done.stderr}"
    return done.stdout + done.stderr


def ran_stages(output: str) -> set[str]:
    return set(re.findall(r"Running stage '([^']+)'", output))


def skipped_stages(output: str) -> set[str]:
    return set(re.findall(r"Stage '([^']+)' didn't change, skipping", output))


@pytest.mark.slow
def test_repro_rebuilds_only_the_stages_whose_inputs_changed(tmp_path):
    if not ENGLISH.is_dir():
        pytest.skip(f"English source folder absent: {ENGLISH}")
    if shutil.which("apertium") is None:
        pytest.skip("apertium is not installed (Debian packages apertium + apertium-eng-spa)")

    repo = tmp_path / "repo"
    repo.mkdir()
    for name in ("dvc.yaml", "params.yaml"):
        shutil.copy(REPO / name, repo / name)
    for folder in ("builder", "corrections", "languages"):
        shutil.copytree(REPO / folder, repo / folder, ignore=shutil.ignore_patterns("__pycache__"))
    params = yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))
    params["languages"] = ["es"]
    (repo / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    dvc(repo, "init", "--no-scm", "-q")

    first = dvc(repo, "repro", "postprocess")
    assert ran_stages(first) == BUILDER_STAGES, first
    assert (repo / "data" / "es" / "queries.parquet").is_file()
    assert json.loads(dvc(repo, "status", "--json", "--with-deps", "postprocess")) == {}

    second = dvc(repo, "repro", "postprocess")
    assert ran_stages(second) == set(), second
    assert skipped_stages(second) == BUILDER_STAGES, second

    policy = params["build"]["self_match_policy"]
    params["build"]["self_match_policy"] = {"keep_derived": "drop_identical_text"}.get(policy, "keep_derived")
    (repo / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    status = json.loads(dvc(repo, "status", "--json", "--with-deps", "postprocess"))
    assert set(status) == {"postprocess@es"}, status
    assert {"changed deps": {"params.yaml": {"build.self_match_policy": "modified"}}} in status["postprocess@es"], status

    third = dvc(repo, "repro", "postprocess")
    assert ran_stages(third) == {"postprocess@es"}, third
    assert skipped_stages(third) == {"source", "translate@es"}, third
    stats = json.loads((repo / "data" / "es" / "stats.json").read_text(encoding="utf-8"))
    assert params["build"]["self_match_policy"] in json.dumps(stats), stats
    assert json.loads(dvc(repo, "status", "--json", "--with-deps", "postprocess")) == {}
