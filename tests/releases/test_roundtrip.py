"""The whole release round trip, for real: a maintainer makes a release with `dvc repro`, tags it and
`dvc push`es it to a local remote; a researcher clones the repository into a new folder, `dvc pull`s over
HTTP from a server on 127.0.0.1, verifies the release and evaluates it, and gets the same results."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from eval.testset import write_testset

from .conftest import git, init_repo, small_testset

pytestmark = [pytest.mark.slow, pytest.mark.server]

BIN = Path(sys.executable).parent
DVC_YAML = """stages:
  release:
    cmd: python -m releases make --data ${release.data} --version ${release.version} --out ${release.out}
    deps:
      - ${release.data}
    params:
      - languages
      - release
    outs:
      - ${release.out}
"""


def env() -> dict:
    # The stage command's `python` must be this interpreter; DVC must not phone home.
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "DVC_NO_ANALYTICS": "1",
            "HF_HUB_OFFLINE": "1"}


def run(cwd: Path, *cmd: str, timings: list | None = None) -> str:
    start = time.perf_counter()
    done = subprocess.run(list(cmd), cwd=cwd, env=env(), capture_output=True, text=True, timeout=600)
    if timings is not None:
        timings.append((" ".join(cmd).replace(str(BIN) + "/", ""), time.perf_counter() - start))
    assert done.returncode == 0, f"{' '.join(cmd)} failed in {cwd}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def dvc(cwd: Path, *args: str, timings: list | None = None) -> str:
    return run(cwd, str(BIN / "dvc"), *args, timings=timings)


def maintainer_repo(root: Path) -> Path:
    init_repo(root)
    dvc(root, "init", "-q")
    params = {"languages": ["pt", "es"],
              "release": {"data": "data", "out": "release", "version": "0.1.0",
                          "tracked_inputs": ["params.yaml", "dvc.yaml"]}}
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    (root / "dvc.yaml").write_text(DVC_YAML)
    for lang in ("pt", "es"):
        write_testset(small_testset(lang), root / "data")
    dvc(root, "add", "-q", "data")  # in the project the builder's stages produce data/; here it is a tracked input
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "inputs of release 0.1.0")
    return root


class HttpServer:
    """python -m http.server over a folder on 127.0.0.1, on a port the OS picks; stopped by PID. Its log goes
    to a file (a pipe nobody reads while DVC pulls could fill up and stall the server)."""

    def __init__(self, folder: Path, log: Path):
        self.log = log
        with open(log, "w") as fh:
            self.proc = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1",
                                          "--directory", str(folder)], stdout=fh, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not (match := re.search(r"port (\d+)", log.read_text())):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"http.server did not start: {log.read_text()!r}")
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{match.group(1)}/"

    def stop(self) -> str:
        """Stop the server; return its request log."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.log.read_text()


def evaluate(repo: Path, timings: list) -> dict:
    """`python -m eval run` on the release with the lexical baseline; each folder has its own cache."""
    run(repo, str(BIN / "python"), "-m", "eval", "run", "--data", "release", "--model", "tfidf-char",
        "--lang", "pt", "--lang", "es", "--out", "results", "--cache", "cache/embeddings", "--timing", "--quiet",
        timings=timings)
    [path] = (repo / "results").glob("*.json")
    return json.loads(path.read_text())


def without_timings(doc: dict) -> dict:
    """Wall-clock timings are the only fields that may differ between two runs on the same bytes."""
    doc = json.loads(json.dumps(doc))
    for block in doc["languages"].values():
        assert set(block.pop("timing")) >= {"encode_s", "total_s"}
    return doc


def test_release_round_trip_through_a_dvc_remote_over_http(tmp_path):
    timings: list[tuple[str, float]] = []
    repo = maintainer_repo(tmp_path / "maintainer")
    remote = tmp_path / "dvc-remote"

    # Maintainer: make the release as a pipeline stage, commit the lock, tag, push.
    dvc(repo, "repro", "release", timings=timings)
    run(repo, str(BIN / "python"), "-m", "releases", "verify", "release", timings=timings)
    dvc(repo, "remote", "add", "-d", "storage", str(remote))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "release 0.1.0")
    git(repo, "tag", "testset@v0.1.0")
    dvc(repo, "push", timings=timings)
    results_maintainer = evaluate(repo, timings)
    assert not (repo / "release" / "README.md").is_symlink()

    # Researcher: clone, point DVC at the HTTP server, pull, verify.
    clone = tmp_path / "researcher"
    run(tmp_path, "git", "clone", "-q", "--branch", "testset@v0.1.0", str(repo), str(clone), timings=timings)
    assert not (clone / "release").exists()
    # Only the HTTP server can give the bytes: the folder the committed config names is moved away.
    served = tmp_path / "served"
    remote.rename(served)
    server = HttpServer(served, tmp_path / "http.log")
    try:
        dvc(clone, "remote", "add", "--local", "-d", "http", server.url)
        dvc(clone, "pull", "release", timings=timings)
    finally:
        requests = server.stop()
    assert not remote.exists()
    assert re.search(r'"GET /files/md5/[0-9a-f]{2}/[0-9a-f]+\.dir HTTP/1\.[01]" 200', requests), requests
    out = run(clone, str(BIN / "python"), "-m", "releases", "verify", "release", timings=timings)
    assert "release 0.1.0 verified, 11 files match the manifest" in out
    manifest = json.loads((clone / "release" / "manifest.json").read_text())
    assert "git" not in manifest
    for path in sorted(p.relative_to(repo / "release") for p in (repo / "release").rglob("*") if p.is_file()):
        assert (clone / "release" / path).read_bytes() == (repo / "release" / path).read_bytes(), path
    # The commit is the tag's (git records it); the release folder holds no per-commit data.
    anchored = run(clone, str(BIN / "python"), "-m", "releases", "verify", "release", "--against", "testset@v0.1.0")
    assert re.search(r"release 0\.1\.0 verified against testset@v0\.1\.0 \(commit [0-9a-f]{12}\)", anchored)
    assert re.search(r"checked: folder md5 [0-9a-f]{32}\.dir = dvc\.lock \(stage release\), output release", anchored)

    results_researcher = evaluate(clone, timings)
    assert without_timings(results_researcher) == without_timings(results_maintainer)
    assert set(results_researcher["languages"]) == {"pt", "es"}


    print("\nround trip timings:")
    for cmd, seconds in timings:
        print(f"  {seconds:6.2f} s  {cmd}")


def test_refuses_dvc_tracked_data_changed_since_it_was_recorded(tmp_path):
    repo = maintainer_repo(tmp_path / "maintainer")
    stats = repo / "data" / "pt" / "stats.json"
    stats.write_text(stats.read_text().replace('"lang": "pt"', '"lang": "pt", "note": "edited"'))
    done = subprocess.run([sys.executable, "-m", "releases", "make"], cwd=repo, env=env(), capture_output=True, text=True)
    assert done.returncode == 2
    assert re.search(r"data/pt/stats\.json: md5 [0-9a-f]{32}, but data\.dvc, folder data records [0-9a-f]{32}",
                     done.stderr), done.stderr
