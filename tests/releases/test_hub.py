"""--push-to-hub, exercised offline: the plan is built and printed, nothing is sent."""

import hashlib
import json
import os
import subprocess
import sys

import pytest

from releases import ReleaseError, make_release
from releases.hub import plan_hub_upload, push_to_hub


@pytest.fixture
def release(project):
    out = project.root / "release"
    make_release(project.data, "0.1.0", out, project.params)
    return out


def test_plan_lists_every_release_file_with_its_checksum(release):
    plan = plan_hub_upload(release, "example-org/gendered-job-titles", revision="main").describe()
    manifest = json.loads((release / "manifest.json").read_text())
    assert plan["repo_id"] == "example-org/gendered-job-titles" and plan["repo_type"] == "dataset"
    assert plan["revision"] == "main" and plan["tag"] == "v0.1.0"
    assert [f["path_in_repo"] for f in plan["files"]] == sorted([f["path"] for f in manifest["files"]] + ["manifest.json"])
    for f in plan["files"]:
        assert f["sha256"] == hashlib.sha256((release / f["path_in_repo"]).read_bytes()).hexdigest()


def test_cli_dry_run_makes_the_release_and_prints_the_plan_offline(project, tmp_path):
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    env.pop("HF_TOKEN", None)
    done = subprocess.run([sys.executable, "-m", "releases", "make", "--params", str(project.params),
                           "--data", str(project.data), "--version", "0.1.0", "--out", str(project.root / "release"),
                           "--push-to-hub", "example-org/gendered-job-titles", "--dry-run"],
                          cwd=project.root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout[done.stdout.index("{"):])
    assert plan["dry_run"] is True and len(plan["files"]) == 12


def test_a_tampered_release_is_not_uploaded(release):
    (release / "pt" / "stats.json").write_text("{}\n")
    with pytest.raises(ReleaseError, match=r"fails verification.*changed: pt/stats\.json"):
        plan_hub_upload(release, "example-org/gendered-job-titles")


def test_an_invalid_repo_id_is_refused(release):
    with pytest.raises(ReleaseError, match="not a valid Hub repository id"):
        plan_hub_upload(release, "not a repo id")


def test_a_push_without_token_is_refused_before_any_request(release, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(ReleaseError, match="set HF_TOKEN"):
        push_to_hub(plan_hub_upload(release, "example-org/gendered-job-titles"))


def test_the_dry_run_never_prints_the_token(project, tmp_path):
    secret = "hf_" + "x7Qk2" * 6
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "HF_TOKEN": secret}
    done = subprocess.run([sys.executable, "-m", "releases", "make", "--params", str(project.params),
                           "--data", str(project.data), "--version", "0.1.0", "--out", str(project.root / "release"),
                           "--push-to-hub", "example-org/gendered-job-titles", "--dry-run"],
                          cwd=project.root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert secret not in done.stdout + done.stderr and secret[:8] not in done.stdout + done.stderr
    assert not any(secret in p.read_text(errors="ignore") for p in (project.root / "release").rglob("*") if p.is_file())
