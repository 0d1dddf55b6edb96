"""The builder stages of the project's own dvc.yaml under real DVC: `dvc repro` rebuilds only what changed.

A temporary copy of the pipeline (dvc.yaml, params.yaml, the code its builder stages list, corrections/) is built
for Catalan and Galician (apertium, fast; Galician never annotated: no corrections file), then a builder parameter
read only by postprocess is changed, then one language's corrections file.
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

from tests.import_trace import imported_files, uncovered

REPO = Path(__file__).resolve().parents[2]
ENGLISH = REPO.parent / "shared" / "data" / "jobtitlesimilarity" / "dataset" / "en"
LANGS = ("ca", "gl")
BUILDER_STAGES = {"source"} | {f"{stage}@{lang}" for stage in ("translate", "corrections", "postprocess") for lang in LANGS}


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
        pytest.skip("apertium is not installed (Debian packages apertium, apertium-eng-cat, apertium-en-gl)")

    repo = tmp_path / "repo"
    repo.mkdir()
    # the eval files the builder's stages borrow, as dvc.yaml lists them (a stage of the copy needs each one)
    borrowed = [d for d in yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))["stages"]["source"]["deps"]
                if d.startswith("eval/")]
    for name in ("dvc.yaml", "params.yaml", *borrowed):
        (repo / name).parent.mkdir(exist_ok=True)
        shutil.copy(REPO / name, repo / name)
    for folder in ("builder", "config", "corrections", "languages"):
        shutil.copytree(REPO / folder, repo / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (repo / "corrections" / "gl.jsonl").unlink()  # a language nobody has annotated yet
    params = yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))
    params["languages"] = list(LANGS)
    (repo / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    dvc(repo, "init", "--no-scm", "-q")

    first = dvc(repo, "repro", "postprocess")
    assert ran_stages(first) == BUILDER_STAGES, first
    assert all((repo / "data" / lang / "queries.parquet").is_file() for lang in LANGS)
    assert (repo / "corrections" / "gl.jsonl").read_bytes() == b""  # created by corrections@gl: no corrections
    assert json.loads(dvc(repo, "status", "--json", "--with-deps", "postprocess")) == {}

    second = dvc(repo, "repro", "postprocess")
    assert ran_stages(second) == set(), second
    assert skipped_stages(second) == BUILDER_STAGES, second

    policy = params["build"]["self_match_policy"]
    params["build"]["self_match_policy"] = {"keep_derived": "drop_identical_text"}.get(policy, "keep_derived")
    (repo / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    status = json.loads(dvc(repo, "status", "--json", "--with-deps", "postprocess"))
    assert set(status) == {"postprocess@ca", "postprocess@gl"}, status
    assert {"changed deps": {"params.yaml": {"build.self_match_policy": "modified"}}} in status["postprocess@ca"], status

    third = dvc(repo, "repro", "postprocess")
    assert ran_stages(third) == {"postprocess@ca", "postprocess@gl"}, third
    assert skipped_stages(third) == BUILDER_STAGES - ran_stages(third), third
    stats = json.loads((repo / "data" / "ca" / "stats.json").read_text(encoding="utf-8"))
    assert params["build"]["self_match_policy"] in json.dumps(stats), stats
    assert json.loads(dvc(repo, "status", "--json", "--with-deps", "postprocess")) == {}

    # One language's corrections (what `annotation pull --lang ca` writes) rerun that language's postprocess only.
    title = (repo / "data" / "source" / "queries.tsv").read_text(encoding="utf-8").split("\n")[0].split("\t")[0]
    gl_stats = (repo / "data" / "gl" / "stats.json").read_bytes()
    (repo / "corrections" / "ca.jsonl").write_text(json.dumps({
        "kind": "translation", "lang": "ca", "source_id": title, "record_id": f"ca-translation-{title}",
        "masculine": None, "feminine": None, "gender_marking": "gendered", "flag": "not_a_job_title",
        "annotators": ["ana"], "submitted_at": "2026-11-29T15:00:00Z"}) + "\n", encoding="utf-8")
    status = json.loads(dvc(repo, "status", "--json", "--with-deps", "postprocess"))
    assert set(status) == {"corrections@ca", "postprocess@ca"}, status
    fourth = dvc(repo, "repro", "postprocess")
    assert ran_stages(fourth) == {"corrections@ca", "postprocess@ca"}, fourth
    assert skipped_stages(fourth) == BUILDER_STAGES - ran_stages(fourth), fourth
    ca = json.loads((repo / "data" / "ca" / "stats.json").read_text(encoding="utf-8"))["corrections"]
    assert (ca["file"], ca["translations"], ca["dropped_sources"]) == ("corrections/ca.jsonl", 1, 1), ca
    assert (repo / "data" / "gl" / "stats.json").read_bytes() == gl_stats
    assert json.loads(dvc(repo, "status", "--json", "--with-deps", "postprocess")) == {}


def test_each_builder_stage_depends_on_every_module_its_command_imports(tmp_path):
    """A module a stage imports but does not depend on (as a file or inside a listed folder) would leave its
    outputs stale after a change; every stage's command is run here, on a tiny English source, under an
    import tracer."""
    if shutil.which("apertium") is None or shutil.which("lt-proc") is None:
        pytest.skip("apertium / lt-proc are not installed (Debian packages apertium, apertium-eng-cat, lttoolbox)")
    from tests.builder.test_build import tiny_source

    english = tiny_source(tmp_path / "en")
    work = tmp_path / "work"
    (work / "corrections").mkdir(parents=True)
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    version = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))["release"]["version"]
    env = {**os.environ, "JOBTITLES_SOURCE_DIR": str(english)}
    for name in ("source", "translate", "corrections", "postprocess"):  # the pipeline's order
        stage = stages[name].get("do", stages[name])
        cmd = stage["cmd"].replace("${item}", "ca").replace("${release.version}", str(version)).split()
        assert cmd[:3] == ["python", "-m", "builder"], cmd
        imported = imported_files(cmd, work, tmp_path / f"{name}.imports", env)
        deps = [d.replace("${item}", "ca") for d in stage["deps"]]
        assert "builder/__main__.py" in imported and not uncovered(imported, deps), \
            f"{name} imports modules dvc.yaml's deps do not cover: {uncovered(imported, deps)}"
        assert all((REPO / d).exists() for d in deps if not d.startswith("data")), name
    # The ESCO family's stage (data-esco/<lang>), on MELO's real Spanish files where this checkout has them.
    from builder.esco import DEFAULT_MELO_DIR, melo_dataset

    if not melo_dataset(DEFAULT_MELO_DIR, "es").is_dir():
        pytest.skip(f"no MELO copy at {DEFAULT_MELO_DIR}")
    stage = stages["esco"]["do"]
    cmd = stage["cmd"].replace("${item}", "es").split()
    imported = imported_files(cmd, work, tmp_path / "esco.imports", env)
    assert "builder/esco.py" in imported and not uncovered(imported, stage["deps"]), uncovered(imported, stage["deps"])
    assert (work / "data-esco" / "es" / "stats.json").is_file()
