"""`dvc repro` picks the corrections file up: with the project's own dvc.yaml, real DVC sees a new or
changed corrections/<lang>.jsonl as a changed dependency of that language's postprocess stage."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from annotation.cli import corrections_path
from annotation.params import load_params

REPO = Path(__file__).resolve().parents[2]


def dvc(cwd: Path, *args: str) -> str:
    env = {**os.environ, "DVC_NO_ANALYTICS": "1"}
    done = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.slow
def test_postprocess_stage_reruns_when_the_pulled_corrections_file_changes(tmp_path):
    from dvc.repo import Repo

    repo = tmp_path / "repo"
    repo.mkdir()
    for name in ("dvc.yaml", "params.yaml"):
        shutil.copy(REPO / name, repo / name)
    dvc(repo, "init", "--no-scm", "-q")
    (repo / "corrections").mkdir()
    (repo / "corrections" / ".gitkeep").write_text("")
    stage = next(s for s in Repo(str(repo)).index.stages if s.name == "postprocess@pt")
    # placeholders for every other dependency and output: the stage is committed, never run
    for out in [*stage.deps, *stage.outs]:
        path = repo / str(out.def_path)
        if path.exists() or out.def_path == "params.yaml":
            continue
        if out.def_path == "data/source":
            path.mkdir(parents=True)
            (path / "queries.tsv").write_text("Lawyer\tLawyer\n")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("placeholder\n")
    dvc(repo, "commit", "-f", "-q", "postprocess@pt")
    assert json.loads(dvc(repo, "status", "--json", "postprocess@pt")) == {}

    # what `python -m annotation pull --lang pt` writes by default, per the project's params.yaml
    pulled = repo / corrections_path(load_params(repo / "params.yaml"), "pt")
    pulled.write_text(json.dumps({"kind": "relevance", "lang": "pt", "query_source_id": "Lawyer",
                                  "doc_source_id": "Paralegal", "record_id": "pt-relevance-Lawyer-Paralegal",
                                  "relevant": True, "annotators": ["ana"],
                                  "submitted_at": "2026-11-29T15:00:00Z"}) + "\n", encoding="utf-8")
    status = json.loads(dvc(repo, "status", "--json", "postprocess@pt"))
    assert {"changed deps": {"corrections/pt.jsonl": "modified"}} in status["postprocess@pt"], status
    # a term rule (what `python -m annotation rule --apply` writes beside it) reruns the stage too
    dvc(repo, "commit", "-f", "-q", "postprocess@pt")
    rules = pulled.with_suffix(".rules.jsonl")
    rules.write_text(json.dumps({"id": "r1", "lang": "pt", "find": "de conta", "replace": "de contas",
                                 "english_word": None, "annotators": ["ana"],
                                 "submitted_at": "2026-12-01T10:00:00Z"}) + "\n", encoding="utf-8")
    status = json.loads(dvc(repo, "status", "--json", "postprocess@pt"))
    assert {"changed deps": {"corrections/pt.rules.jsonl": "modified"}} in status["postprocess@pt"], status

    # and the builder, run by that stage, reads exactly that file
    assert f"--corrections {pulled.relative_to(repo).as_posix()}" in stage.cmd, stage.cmd
