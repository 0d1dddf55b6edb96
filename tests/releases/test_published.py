"""The published-release paths on clones of this repository, for real (git, DVC, the in-repository remote):

- a maintainer clone runs a small pipeline built from this repository's own `release` and `eval` stages,
  `dvc repro` on a fresh clone of it leaves the tree clean, and `python -m releases publish` puts the
  release into the committed `dvc-storage/` and `published.json`;
- the README's researcher commands on a fresh clone of that maintainer repository, published without a tag
  (the install lines left out: the project's .venv runs them);
- the README's researcher block verbatim, light install included (a new venv, `pip install
  '.[researcher]'`, about a minute with a warm pip cache), on a clone of this repository made without tags,
  for the newest release it publishes.

The repository under test is only read (cloned); nothing is written into its storage folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from eval.testset import write_testset
from releases.anchor import PUBLISHED_NAME, folder_md5, publishing_commit, read_published

from .conftest import ESCO_LANGUAGES, small_esco_testset, small_testset

pytestmark = [pytest.mark.slow]

PROJECT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
TAG_RE = r"testset@v\d+\.\d+\.\d+"
VERSION_RE = r"\b\d+\.\d+\.\d+\b"
INSTALL_LINES = ("python3 -m venv ", "pip install ")  # the light install of the researcher block


def env() -> dict:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "DVC_NO_ANALYTICS": "1",
            "HF_HUB_OFFLINE": "1", "GIT_TERMINAL_PROMPT": "0"}


def sh(cwd: Path, command: str, timeout: int = 900) -> str:
    done = subprocess.run(["bash", "-c", f"set -euo pipefail\n{command}"], cwd=cwd, env=env(), capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, f"in {cwd}:\n{command}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    return done.stdout + done.stderr


def clean(repo: Path) -> None:
    status = sh(repo, "git status --porcelain --untracked-files=all")
    diff = sh(repo, "git diff --unified=4 -- dvc.lock | head -60") if status else ""
    assert status == "", f"the tree is not clean in {repo}:\n{status}\n{diff}"


def readme_block(marker: str) -> str:
    """The fenced bash block of README.md that holds the marker line (the commands a reader copies)."""
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", readme, flags=re.S)
    found = [b for b in blocks if marker in b]
    assert len(found) == 1, f"README.md needs exactly one bash block with {marker!r}"
    return found[0]


def researcher_commands() -> tuple[str, str]:
    """The README's researcher block and the one release version it names."""
    block = readme_block("# researcher")
    versions = set(re.findall(VERSION_RE, block))
    assert len(versions) == 1, f"the researcher block names one release version, not {sorted(versions)}"
    assert re.search(r"^python -m releases checkout \d", block, flags=re.M), "the block checks out a version"
    return block, versions.pop()


def run_researcher_path(repo_url: str, workdir: Path, version: str, install: bool = True) -> tuple[Path, str]:
    """Run the README's researcher block with <repo> and its version replaced; without install, its venv and
    pip lines are left out and the project's .venv (first on PATH) runs the rest."""
    block, readme_version = researcher_commands()
    assert "<repo>" in block
    clone_dir = re.search(r"git clone <repo> (\S+)", block).group(1)
    if not install:
        block = "\n".join(line for line in block.splitlines() if not line.startswith(INSTALL_LINES))
    out = sh(workdir, block.replace("<repo>", repo_url).replace(readme_version, version))
    return workdir / clone_dir, out


def tiny_pipeline(repo: Path, version: str) -> None:
    """Turn a clone of this repository into a small pipeline: a `data` stage copying two small committed
    test sets and an `esco` stage copying two small ESCO sets (the family's root, data-esco), then this repository's
    own `release`, `eval` (the model x language grid) and `eval_collect` stages, unchanged."""
    project_stages = yaml.safe_load((PROJECT / "dvc.yaml").read_text())["stages"]
    for lang in ("pt", "es"):
        write_testset(small_testset(lang), repo / "fixtures")
    for lang in ESCO_LANGUAGES:
        write_testset(small_esco_testset(lang), repo / "fixtures-esco")
    names = ("queries.parquet", "corpus.parquet", "qrels.tsv", "stats.json")
    shipped = [f"data/{lang}/{name}" for lang in ("pt", "es") for name in names]
    stages = {
        "data": {"cmd": "python -c \"import shutil; shutil.copytree('fixtures', 'data', dirs_exist_ok=True)\"",
                 "deps": ["fixtures"], "outs": shipped},
        "esco": {"cmd": "python -c \"import shutil; shutil.copytree('fixtures-esco', 'data-esco', dirs_exist_ok=True)\"",
                 "deps": ["fixtures-esco"], "outs": [f"data-esco/{lang}/{name}" for lang in ESCO_LANGUAGES for name in names]},
        "release": project_stages["release"],
        "eval": project_stages["eval"],
        "eval_collect": project_stages["eval_collect"],
    }
    (repo / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}, sort_keys=False))
    params = yaml.safe_load((repo / "params.yaml").read_text())
    params["release"]["version"] = version
    params["languages"] = ["pt", "es"]  # the two small committed test sets
    params["esco"]["languages"] = list(ESCO_LANGUAGES)  # and the two small ESCO sets
    params["eval"].update(models=["tfidf-char"], bootstrap_resamples=50, permutation_resamples=200, worst_pairs=2)
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True))
    sh(repo, "rm -f dvc.lock && git rm -q -r --cached --ignore-unmatch results >/dev/null && rm -rf results data "
             "&& git add -A && git commit -q -m 'a small pipeline of the project stages'")


@pytest.fixture(scope="module")
def maintainer(tmp_path_factory) -> Path:
    """A clone of this repository that has run the small pipeline and published its release."""
    root = tmp_path_factory.mktemp("published")
    repo = root / "maintainer"
    sh(root, f"git clone -q {PROJECT} {repo} && git -C {repo} config user.email m@example.org "
             f"&& git -C {repo} config user.name Maintainer")
    tiny_pipeline(repo, "9.9.0")
    sh(repo, "dvc repro -q && git add -A && git commit -q -m 'pipeline run'")
    return repo


def test_repro_on_a_clean_checkout_and_again_leaves_the_tree_clean(maintainer, tmp_path):
    fresh = tmp_path / "fresh"
    sh(tmp_path, f"git clone -q {maintainer} {fresh}")
    first = sh(fresh, "dvc repro")  # nothing cached here: every stage whose outputs DVC caches runs again
    assert "Running stage 'release'" in first and "Running stage 'eval@" in first
    # eval_collect's outputs are all kept in git (results/pipeline/runs, metrics, plots) and came with the clone;
    # the grid it reads came out as dvc.lock records it, so there is nothing to redo
    assert "Stage 'eval_collect' didn't change, skipping" in first, first
    clean(fresh)
    second = sh(fresh, "dvc repro")
    assert "Running stage" not in second
    clean(fresh)
    # The metrics: small flat files at a fixed precision, one readable row per model and language.
    rows = {p.name: json.loads(p.read_text()) for p in (fresh / "results" / "metrics").glob("*.json")}
    assert set(rows) == {"tfidf-char.pt.json", "tfidf-char.es.json"}
    for figures in rows.values():
        assert {"AO", "MAP_M", "MAP_F", "MAP_M-MAP_F", "paired_AP_M-AP_F_p"} <= set(figures) and len(figures) <= 8
        assert all(isinstance(v, (int, float)) and v == round(v, 4) for v in figures.values())
    table = sh(fresh, "dvc metrics show").splitlines()
    assert table[0].split()[:2] == ["Path", "AO"] and len(table) == 3
    assert all(len(line) < 140 for line in table), table


def test_publish_then_the_readme_researcher_path_on_a_fresh_clone(maintainer, tmp_path):
    out = sh(maintainer, "python -m releases publish")
    printed = [line.strip() for line in out.splitlines() if line.startswith("  git ")]
    assert printed[0] == f"git add dvc.lock {PUBLISHED_NAME} dvc-storage", out
    assert printed[2].startswith("git tag -a testset@v9.9.0") and "optional" in printed[2]
    sh(maintainer, "\n".join(printed[:2]))  # add and commit; no tag: the version alone names the release
    clean(maintainer)
    assert not tags_in(maintainer)
    [entry] = [e for e in read_published(maintainer) if e["version"] == "9.9.0"]
    assert entry["tag"] == "testset@v9.9.0" and entry["dvc_md5"] == folder_md5(maintainer / "release")

    # The committed storage holds the release's objects and nothing else of the pipeline.
    listing = json.loads((maintainer / ".dvc/cache/files/md5" / entry["dvc_md5"][:2] / entry["dvc_md5"][2:])
                         .read_text())
    wanted = {entry["dvc_md5"]} | {e["md5"] for e in listing}
    stored = {p.parent.name + p.name for p in (maintainer / "dvc-storage/files/md5").glob("*/*")}
    assert wanted <= stored, "published objects missing from dvc-storage/"
    others = {md5 for md5 in stored - wanted if not _in_project_storage(md5)}  # besides the project's releases
    assert not others, f"dvc-storage/ holds objects of no published release: {sorted(others)[:5]}"

    clone, out = run_researcher_path(str(maintainer), tmp_path, "9.9.0", install=False)
    published = sh(maintainer, "git rev-parse HEAD").strip()
    assert f"release 9.9.0: already at commit {published[:12]}, the commit that added 9.9.0 to published.json" in out
    assert "release: release 9.9.0 verified against 9.9.0" in out
    assert f"manifest.json sha256 {entry['manifest_sha256'][:16]}… = {PUBLISHED_NAME} (release 9.9.0)" in out
    assert f"folder md5 {entry['dvc_md5']} = dvc.lock (stage release)" in out
    for rel in (p.relative_to(maintainer / "release") for p in (maintainer / "release").rglob("*") if p.is_file()):
        assert (clone / "release" / rel).read_bytes() == (maintainer / "release" / rel).read_bytes(), rel
    [result] = (clone / "results" / "runs").rglob("tfidf-char__*.json")  # beside the pipeline's, results/pipeline
    assert set(json.loads(result.read_text())["languages"]) == {"pt", "es"}


def _in_project_storage(md5: str) -> bool:
    return (PROJECT / "dvc-storage/files/md5" / md5[:2] / md5[2:]).is_file()


def test_a_tampered_copy_fails_against_the_tag_but_passes_its_own_manifest(maintainer, tmp_path):
    if not (maintainer / PUBLISHED_NAME).is_file() or not read_published(maintainer):
        sh(maintainer, "python -m releases publish && git add dvc.lock published.json dvc-storage "
                       "&& git commit -q -m 'testset v9.9.0' && git tag -a testset@v9.9.0 -m 9.9.0")
    copy = tmp_path / "copy"
    sh(maintainer, f"cp -r release {copy}")
    stats_path = copy / "pt" / "stats.json"
    stats = json.loads(stats_path.read_text())
    stats["needs_review"] = 0  # a quiet edit, re-hashed into the manifest below
    stats_path.write_text(json.dumps(stats))
    manifest = json.loads((copy / "manifest.json").read_text())
    for entry in manifest["files"]:
        entry["sha256"] = hashlib.sha256((copy / entry["path"]).read_bytes()).hexdigest()
        entry["bytes"] = (copy / entry["path"]).stat().st_size
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2))
    shipped = len(manifest["files"])  # the shipped files and, with release.beir (params.yaml), their BEIR copies
    assert f"verified, {shipped} files match the manifest" in sh(maintainer, f"python -m releases verify {copy}")
    done = subprocess.run([sys.executable, "-m", "releases", "verify", str(copy), "--against", "testset@v9.9.0"],
                          cwd=maintainer, env=env(), capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.startswith("error: ") and "Traceback" not in done.stderr
    assert "manifest.json: sha256" in done.stderr and "published.json at testset@v9.9.0" in done.stderr


def tags_in(repo: Path) -> bool:
    return bool(subprocess.run(["git", "-C", str(repo), "tag", "-l"], capture_output=True, text=True).stdout.strip())


def test_the_readme_lists_every_published_version_with_its_tag_commit():
    published = read_published(PROJECT)
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    rows = re.findall(rf"^\| `?(\d+\.\d+\.\d+)`? \| `({TAG_RE})` \| `([0-9a-f]{{40}})` \|", readme, flags=re.M)
    assert [(e["version"], e["tag"]) for e in published] == [(v, t) for v, t, _ in rows]
    for version, tag, commit in rows:
        # Without tags, the version resolves through published.json's history to the commit the README gives.
        assert publishing_commit(PROJECT, version) == commit, \
            f"README gives {version} commit {commit}, the commit that added it to published.json is another"
        # The commit is part of this history and holds the release's published.json entry, tags or not.
        assert subprocess.run(["git", "-C", str(PROJECT), "merge-base", "--is-ancestor", commit, "HEAD"]).returncode == 0, \
            f"README gives {tag} commit {commit}, which is not in this branch's history"
        at_commit = json.loads(subprocess.run(["git", "-C", str(PROJECT), "show", f"{commit}:published.json"],
                                              capture_output=True, text=True, check=True).stdout)
        assert tag in [e["tag"] for e in at_commit["releases"]], f"{commit}:published.json does not record {tag}"
        done = subprocess.run(["git", "-C", str(PROJECT), "rev-parse", "-q", "--verify", f"{tag}^{{commit}}"],
                              capture_output=True, text=True)
        if done.returncode != 0 and not tags_in(PROJECT):
            continue  # a clone made without tags (hosting or CI that keeps none): the commit above is the anchor
        assert done.returncode == 0, f"README lists {tag}, but the repository has no such tag"
        assert done.stdout.strip() == commit, f"README gives {tag} commit {commit}, the tag is on {done.stdout}"


def test_the_readme_researcher_block_verbatim_on_a_clone_without_tags(tmp_path):
    """Done means (issue 23): a clone that carries no tag runs the README's researcher block as written, its
    light install included (a new .venv in the clone and `pip install '.[researcher]'` from the package index,
    not the project's .venv), for the newest published version; `pip install .` leaves no build/ behind."""
    published = read_published(PROJECT)
    assert published, ("no release is published in this repository (published.json lists none): publish one "
                       "with the maintainer commands of docs/releases.md")
    block, version = researcher_commands()
    assert version == published[-1]["version"], (f"the README's researcher commands name {version}, the newest "
                                                 f"release is {published[-1]['version']}")
    origin = tmp_path / "origin.git"  # what a host serves when tags are not pushed or not fetched
    subprocess.run(["git", "clone", "-q", "--bare", "--no-tags", str(PROJECT), str(origin)], check=True)
    for tag in filter(None, sh(origin, "git tag -l").split()):
        sh(origin, f"git tag -d {tag} >/dev/null")
    (tmp_path / "work").mkdir()
    # the block, with the project's .venv off PATH: every command runs from the light install it creates
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != BIN)
    done = subprocess.run(["bash", "-c", "set -euo pipefail\n" + block.replace("<repo>", str(origin))],
                          cwd=tmp_path / "work", env={**env(), "PATH": path, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
                          capture_output=True, text=True, timeout=1200)
    out = done.stdout + done.stderr
    assert done.returncode == 0, f"the researcher block failed:\n{block}\n--- output\n{out[-6000:]}"
    clone = tmp_path / "work" / re.search(r"git clone <repo> (\S+)", block).group(1)
    assert sh(clone, "git tag -l").strip() == "", "the clone carries tags; the test must run without"
    commit = publishing_commit(clone, version)
    assert f"release {version}: checked out commit {commit[:12]}, the commit that added {version}" in out, out
    assert f"verified against {version}" in out and "= published.json" in out and "= dvc.lock (stage release)" in out
    assert sh(clone, "git rev-parse HEAD").strip() == commit
    assert not (clone / "build").exists(), "pip install . left build/ in the work tree"
    assert sh(clone, "git status --porcelain --untracked-files=all") == "", "the block left the tree unclean"
    assert list((clone / "results").rglob("tfidf-char__*.json"))
