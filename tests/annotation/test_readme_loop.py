"""The README's "Try annotation locally" block, run as written on a temporary copy of the project: build a small
pt set, push, one answer submitted through the API the annotation UI uses (signed in as the owner `argilla`, as
the README says), pull, `git add` + `git commit`, `dvc repro` → the corrected item has status `corrected` and
provenance `human:argilla`.

The commands are read from README.md, so the test fails when the README drifts. What differs from a person's
run, and why: the stack is the session's test stack (`annotation serve` itself is tested in test_serve.py) and
its URL and key replace the export line's; `.venv/bin/python` is this interpreter; the English source is a
5-query slice of the real dataset (JOBTITLES_SOURCE_DIR) built on the MT route with bergamot (params.yaml
`build.route.pt: mt`, `languages: [pt]`), to keep it fast; and `dvc repro` is given the target
`postprocess@pt` (the stage that applies the corrections; the release and eval stages after it are tested
elsewhere).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from eval.testset import read_testset
from tests.annotation.conftest import write_english_source
from tests.annotation.test_argilla_server import Annotator, suggestion_values

pytestmark = [pytest.mark.server, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
COPIED = ("annotation", "builder", "config", "corrections", "eval", "languages", "dvc.yaml", "params.yaml")


def readme_block(heading: str) -> str:
    """The first ```bash block after ``heading`` in README.md."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    after = text[text.index(heading):]
    return re.search(r"```bash\n(.*?)```", after, re.S)[1]


def commands(block: str) -> list[str]:
    """The block's command lines, without their trailing comments."""
    out = []
    for line in block.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            out.append(re.sub(r"\s+#\s.*$", "", line).strip())
    return out


def project_copy(root: Path) -> Path:
    root.mkdir()
    for name in COPIED:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(src, root / name)
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    params["languages"] = ["pt"]
    params["build"]["route"] = {"pt": "mt"}
    (root / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True, sort_keys=False), encoding="utf-8")
    for extra in (root / "corrections").glob("*.jsonl"):
        if extra.name != "pt.jsonl":
            extra.unlink()
    (root / "corrections" / "pt.jsonl").write_bytes(b"")  # nobody has annotated this copy yet
    return root


def test_readme_try_annotation_locally_ends_in_a_corrected_rebuild(argilla_env, tmp_path):
    stack = argilla_env
    block = readme_block("### Try annotation locally")
    cmds = commands(block)
    # the block as a person reads it: serve, export, build, push, (browser), pull, commit, repro
    assert cmds[0].startswith(".venv/bin/python -m annotation serve"), cmds
    assert cmds[1].startswith("export ARGILLA_API_URL=") and "ARGILLA_API_KEY=" in cmds[1], cmds
    build, push, pull, commit, repro = cmds[2:]
    assert " -m builder build " in build and " -m annotation push translations " in push, cmds
    assert " -m annotation pull " in pull and commit.startswith("git add corrections/pt.jsonl"), cmds
    assert "git commit" in commit and repro == "dvc repro", cmds
    dataset, workspace = re.search(r"open (\S+)\s*\n#\s*\(workspace (\S+)\)", block).groups()

    repo = project_copy(tmp_path / "repo")
    english = write_english_source(tmp_path / "en")
    env = {**os.environ, "ARGILLA_API_URL": stack.api_url, "ARGILLA_API_KEY": stack.owner_api_key,
           "JOBTITLES_SOURCE_DIR": str(english), "DVC_NO_ANALYTICS": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "GIT_AUTHOR_NAME": "ana", "GIT_AUTHOR_EMAIL": "ana@example.org",
           "GIT_COMMITTER_NAME": "ana", "GIT_COMMITTER_EMAIL": "ana@example.org"}
    env.pop("PYTHONPATH", None)  # the copy's packages, from its own folder (python -m puts it first)

    def sh(line: str) -> str:
        line = line.replace(".venv/bin/python", sys.executable)
        done = subprocess.run(["bash", "-c", line], cwd=repo, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
        return done.stdout + done.stderr

    sh("git init -q && git add . && git commit -q -m 'the project' && "
       "python -m dvc init -q && git add .dvc && git commit -q -m 'dvc init'")

    sh(build)
    assert (repo / "data" / "pt" / "translations.parquet").is_file()
    out = sh(push)
    assert f"{dataset}: " in out and " new, " in out, out
    assert "Warning" not in out, out  # a first push creates the workspace and dataset: no "not found" warning
    assert "Sending records" not in out and "\r" not in out, out  # the SDK's bar stays out of a log (not a terminal)

    # the browser step, signed in as argilla (the owner): sort by confidence (worst first), correct a title, Submit
    me = Annotator(stack, stack.owner_api_key)
    ds_id = me.dataset_id(dataset)
    assert me.http.get(f"/api/v1/datasets/{ds_id}").json()["workspace_id"] in {
        w["id"] for w in me.http.get("/api/v1/me/workspaces").json()["items"] if w["name"] == workspace}
    queue = me.pending(dataset, sort=[{"scope": {"entity": "metadata", "metadata_property": "confidence"},
                                       "order": "asc"}])
    assert queue, "nothing to annotate"
    record = next((r for r in queue if r["external_id"] == "pt-translation-Baker"), queue[0])
    record = me.queue(dataset)[record["external_id"]]  # with its suggestions
    values = suggestion_values(me, record)
    values.update({"masculine": "padeiro", "feminine": "padeira", "gender_marking": "gendered"}
                  if record["external_id"] == "pt-translation-Baker" else {})
    me.submit(record, values)
    source_id = record["external_id"].removeprefix("pt-translation-")

    out = sh(pull)
    assert "Warning" not in out, out  # no relevance dataset was pushed: nothing to read, no warning
    assert "\r" not in out, out  # no progress bar's updates in a log
    pulled = (repo / "corrections" / "pt.jsonl").read_text(encoding="utf-8")
    assert f'"source_id": "{source_id}"' in pulled and '"annotators": ["argilla"]' in pulled, pulled
    sh(commit)
    assert sh("git status --porcelain corrections") == ""
    out = sh(f"{repro} postprocess@pt")
    assert "Running stage 'postprocess@pt'" in out, out

    rebuilt = read_testset(repo / "data", "pt")
    items = pl.concat([rebuilt.queries, rebuilt.corpus]).filter(pl.col("source_ids").list.contains(source_id))
    assert items.height, f"{source_id} gave no item"
    assert set(items["status"]) == {"corrected"}, items
    assert all(p.startswith("human:") for p in items["provenance"]) and set(items["provenance"]) == {"human:argilla"}
    if source_id == "Baker":
        assert set(items.filter(pl.col("gender") == "feminine")["text"]) == {"padeira"}
