"""Publish a made release: push its bytes to the DVC remote and record its digests in published.json.

The maintainer then commits dvc.lock, published.json and (for the in-repository remote) the storage folder
together: that commit, the one that adds the version to published.json, holds everything `dvc pull release`
and `releases verify --against X.Y.Z` need, and `releases checkout X.Y.Z` finds it in any clone. A tag on it
is a convenience (clones need not carry tags).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .anchor import (PUBLISHED_NAME, folder_md5, git_root, read_published, recorded_outs, relative_to_repo,
                     write_published)
from .make import release_tag
from .manifest import MANIFEST_NAME, ReleaseError, read_manifest, sha256_of, verify_release


def _dvc(repo: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=repo, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "; ".join(line for line in (done.stderr or done.stdout).strip().splitlines()[-3:] if line.strip())
        raise ReleaseError(f"dvc {' '.join(args)} failed in {repo}: {tail}")
    return done.stdout


def _remote_folder(repo: Path, remote: str | None) -> str | None:
    """The remote's folder relative to the repository when it lies inside it (the committed storage)."""
    name = remote or _dvc(repo, "remote", "default").strip()
    for line in _dvc(repo, "remote", "list").splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == name and "://" not in parts[1]:
            url = Path(parts[1])
            path = url if url.is_absolute() else (repo / ".dvc" / url)
            return relative_to_repo(path, repo)
    return None


def publish_release(release_dir: Path, remote: str | None = None) -> tuple[dict, list[str]]:
    """Push release_dir (the DVC output dvc.lock records) and add its entry to published.json.

    Returns the entry and the git commands that record the publication. Safe to run again after an
    interruption: `dvc push` skips what the remote has, and an identical entry is kept as it is.
    """
    repo = git_root(Path.cwd())
    rel = relative_to_repo(release_dir, repo)
    if rel is None:
        raise ReleaseError(f"{release_dir} lies outside the repository {repo}; publish the pipeline's release folder")
    result = verify_release(release_dir)
    if not result.ok:
        raise ReleaseError(f"{release_dir} fails verification, refusing to publish: " + "; ".join(result.problems))
    manifest = read_manifest(release_dir)
    version, tag = manifest["version"], release_tag(manifest["version"])
    recorded = next((o for o in recorded_outs(repo) if o.path == rel), None)
    if recorded is None:
        raise ReleaseError(f"{rel}: not an output in dvc.lock; make the release with `dvc repro release`")
    digest = folder_md5(release_dir)
    if digest != recorded.md5:
        raise ReleaseError(f"{rel}: DVC md5 {digest}, but {recorded.source} records {recorded.md5}; run "
                           "`dvc repro release` (or `dvc checkout release`) so the folder is the recorded output")
    tagged = subprocess.run(["git", "-C", str(repo), "rev-parse", "-q", "--verify", f"refs/tags/{tag}"],
                            capture_output=True, text=True)
    if tagged.returncode == 0:
        raise ReleaseError(f"git tag {tag} exists already: version {version} was published; bump release.version")
    entry = {"version": version, "tag": tag, "folder": rel, "manifest_sha256": sha256_of(release_dir / MANIFEST_NAME),
             "dvc_md5": digest, "languages": manifest["languages"], "files": result.checked}
    entries = read_published(repo)
    same = [e for e in entries if e["version"] == version]
    if same and same[0] != entry:
        raise ReleaseError(f"{PUBLISHED_NAME} already records release {version} with other digests; a published "
                           "version never changes: bump release.version and make a new release")
    _dvc(repo, "push", *(["-r", remote] if remote else []), rel)
    if not same:
        write_published(repo, [*entries, entry])
    storage = _remote_folder(repo, remote)
    commands = [f"git add dvc.lock {PUBLISHED_NAME}" + (f" {storage}" if storage else ""),
                f'git commit -m "testset v{version}"',
                f'git tag -a {tag} -m "gendered job titles {version}"   # optional: clones may carry no tags, '
                f"and `--against {version}` finds the commit above through {PUBLISHED_NAME} without one",
                f"# README.md, Releases: add the row | {version} | `{tag}` | `$(git rev-parse HEAD)` | (the commit "
                f"above), put {version} in the researcher commands, commit, then git push origin main (and the tag)"]
    return entry, commands
