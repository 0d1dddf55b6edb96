"""Digests recorded in git, the anchors a release is checked against.

A manifest only proves a folder agrees with itself: whoever edits the files can re-hash them. What git
records at a commit cannot be edited in the release folder: the DVC outputs with their MD5 (`dvc.lock`,
`*.dvc`) and, for each published version, the SHA-256 of its manifest (`published.json`).

DVC's digest of a folder (``<md5>.dir``) is the MD5 of the JSON list of its files' MD5s sorted by
relative path (dvc-data, `Tree.as_bytes`); `folder_md5` computes it the same way, so a folder can be
compared with `dvc.lock` without DVC or its cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from config import load_yaml, yaml_error_where
from config.files import write_file_atomically

from .manifest import MANIFEST_NAME, ReleaseError, read_json, read_manifest, sha256_of, verify_release

PUBLISHED_NAME = "published.json"
PUBLISHED_FORMAT = "gendered-job-titles-published/1"
TAG_PREFIX = "testset@v"
# A release named by its version: 0.3.1, v0.3.1 or testset@v0.3.1 (its tag, which a clone may not have).
VERSION_NAME_RE = re.compile(r"^(?:testset@v|v)?((?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*))$")


def md5_of(path: Path) -> str:
    """DVC's digest of one file."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "md5").hexdigest()


def folder_md5(root: Path) -> str:
    """DVC 3's digest of a folder: md5 of json.dumps([{"md5", "relpath"}...] sorted by relpath, sort_keys)."""
    entries = []
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            entries.append({"md5": md5_of(path), "relpath": path.relative_to(root).as_posix()})
    entries.sort(key=lambda e: e["relpath"])
    return hashlib.md5(json.dumps(entries, sort_keys=True).encode("utf-8")).hexdigest() + ".dir"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise ReleaseError(f"git {' '.join(args)} failed in {repo}: {done.stderr.strip()}")
    return done.stdout


def git_root(path: Path) -> Path:
    done = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if done.returncode != 0:
        raise ReleaseError(f"{path} is not inside a git repository; run this in a clone of the project")
    return Path(done.stdout.strip())


def relative_to_repo(path: Path, repo: Path) -> str | None:
    try:
        return path.resolve().relative_to(repo.resolve()).as_posix()
    except ValueError:
        return None


def _file_at(repo: Path, rev: str | None, rel: str) -> str | None:
    """A file's text in the work tree (rev None) or at a commit; None when it does not exist there."""
    if rev is None:
        path = repo / rel
        return path.read_text(encoding="utf-8") if path.is_file() else None
    done = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{rel}"], capture_output=True)
    if done.returncode != 0:
        return None
    try:
        return done.stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise ReleaseError(f"{rel} at {rev}: not UTF-8 text") from None


def _yaml(text: str, where: str) -> object:
    try:
        return load_yaml(text)  # the one YAML reader (config.load_yaml: caps, libyaml, the line of an error)
    except yaml.YAMLError as exc:
        line, problem = yaml_error_where(exc)
        raise ReleaseError(f"{where}{line}: not valid YAML ({problem}); restore it from git") from None


@dataclass(frozen=True)
class RecordedOut:
    """One DVC output as git records it: repo-relative path, md5 (``….dir`` for a folder), where recorded."""
    path: str
    md5: str
    source: str


def recorded_outs(repo: Path, rev: str | None = None) -> list[RecordedOut]:
    """Every output of the root dvc.lock and of the git-tracked .dvc files, in the work tree or at rev."""
    outs = []
    lock_text = _file_at(repo, rev, "dvc.lock")
    if lock_text is not None:
        lock = _yaml(lock_text, "dvc.lock")
        stages = lock.get("stages") if isinstance(lock, dict) else None
        for stage, body in (stages or {}).items():
            for out in (body or {}).get("outs") or []:
                if isinstance(out, dict) and isinstance(out.get("path"), str) and isinstance(out.get("md5"), str):
                    outs.append(RecordedOut(PurePosixPath(out["path"]).as_posix(), out["md5"],
                                            f"dvc.lock (stage {stage})"))
    listing = git(repo, "ls-files", "-z", "--", "*.dvc") if rev is None else \
        git(repo, "ls-tree", "-r", "-z", "--name-only", rev)
    for rel in (p for p in listing.split("\0") if p.endswith(".dvc")):
        text = _file_at(repo, rev, rel)
        body = _yaml(text, rel) if text is not None else None
        base = PurePosixPath(rel).parent
        for out in (body.get("outs") or []) if isinstance(body, dict) else []:
            if isinstance(out, dict) and isinstance(out.get("path"), str) and isinstance(out.get("md5"), str):
                outs.append(RecordedOut((base / out["path"]).as_posix().removeprefix("./"), out["md5"], rel))
    return outs


def _dir_listing(repo: Path, md5: str) -> dict[str, str] | None:
    """relpath -> md5 of a recorded folder, from the local DVC cache (None when the cache lacks it)."""
    path = repo / ".dvc" / "cache" / "files" / "md5" / md5[:2] / md5[2:]
    if not path.is_file():
        return None
    entries = read_json(path, "; the DVC cache is damaged, run `dvc fetch`")
    if not isinstance(entries, list):
        raise ReleaseError(f"{path}: not a DVC folder listing; the DVC cache is damaged, run `dvc fetch`")
    return {e["relpath"]: e["md5"] for e in entries if isinstance(e, dict) and "relpath" in e and "md5" in e}


def recorded_md5(repo: Path, rel: str, outs: list[RecordedOut]) -> tuple[str, str] | None:
    """(md5, where it is recorded) of the repo-relative file rel, as an output or inside a recorded folder."""
    for out in outs:
        if out.path == rel:
            return out.md5, out.source
    for out in outs:
        if out.md5.endswith(".dir") and rel.startswith(out.path.rstrip("/") + "/"):
            listing = _dir_listing(repo, out.md5.removesuffix(".dir") + ".dir")
            if listing is None:
                raise ReleaseError(f"{rel}: {out.source} records the folder {out.path} ({out.md5}) but the DVC "
                                   "cache lacks its listing; run `dvc fetch` (or `dvc commit`) and retry")
            inner = rel[len(out.path.rstrip("/")) + 1:]
            if inner in listing:
                return listing[inner], f"{out.source}, folder {out.path}"
            return None
    return None


# --- published.json: the versions whose bytes are in the project's DVC remote --------------------------

def read_published(repo: Path, rev: str | None = None) -> list[dict]:
    """The entries of published.json (work tree or at rev); [] when the file does not exist there."""
    text = _file_at(repo, rev, PUBLISHED_NAME)
    if text is None:
        return []
    where = Path(PUBLISHED_NAME) if rev is None else Path(f"{PUBLISHED_NAME} at {rev}")
    doc = read_json(where, "; restore it from git", text=text)
    releases = doc.get("releases") if isinstance(doc, dict) and doc.get("format") == PUBLISHED_FORMAT else None
    if not isinstance(releases, list) or not all(
            isinstance(e, dict) and all(isinstance(e.get(k), str) for k in ("version", "tag", "folder",
                                                                            "manifest_sha256", "dvc_md5"))
            for e in releases):
        raise ReleaseError(f"{where}: not a list of published releases of format {PUBLISHED_FORMAT!r} "
                           "(version, tag, folder, manifest_sha256, dvc_md5); restore it from git")
    return releases


def write_published(repo: Path, entries: list[dict]) -> None:
    doc = {"format": PUBLISHED_FORMAT,
           "about": "Published releases: each version's tag, release folder, the SHA-256 of its manifest.json "
                    "and DVC's md5 of the folder. `python -m releases verify DIR --against X.Y.Z` checks a folder "
                    "against the entry recorded by the commit that published X.Y.Z (its tag, or the commit that "
                    "added it here). Written by `python -m releases "
                    "publish`; docs/releases.md.",
           "releases": entries}
    path = repo / PUBLISHED_NAME
    write_file_atomically(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


# --- a published version, named by its version alone ----------------------------------------------------

@dataclass(frozen=True)
class ResolvedRelease:
    """What a name given on the command line (a version, a tag, a commit) stands for."""
    name: str
    version: str | None  # None for a plain commit or other git revision
    commit: str
    how: str             # how the commit was found, for the messages


def _versions_at(repo: Path, commit: str) -> set[str]:
    """Versions published.json records at commit; an unreadable file there records none."""
    try:
        return {e["version"] for e in read_published(repo, commit)}
    except ReleaseError:
        return set()


def publishing_commit(repo: Path, version: str) -> str | None:
    """The commit that added version to published.json: the oldest commit touching published.json whose copy
    records it, on HEAD's history first, then on every branch and remote branch. Needs no tag."""
    for scope in (["HEAD"], ["--branches", "--remotes"]):
        done = subprocess.run(["git", "-C", str(repo), "log", "--reverse", "--topo-order", "--format=%H", *scope,
                               "--", PUBLISHED_NAME], capture_output=True, text=True)
        for commit in done.stdout.split() if done.returncode == 0 else []:
            if version in _versions_at(repo, commit):
                return commit
    return None


def resolve_release(repo: Path, name: str) -> ResolvedRelease:
    """A version (0.3.1, v0.3.1, testset@v0.3.1) is its tag when this clone has it, else the commit that added
    it to published.json (tags do not travel with a clone); anything else is a git revision (a commit)."""
    match = VERSION_NAME_RE.match(name.strip())
    if match is None:
        done = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "-q", f"{name}^{{commit}}"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise ReleaseError(f"{name}: neither a version (X.Y.Z, as README.md lists them) nor a commit of {repo}; "
                               f"{PUBLISHED_NAME} records {_known(repo)}")
        return ResolvedRelease(name, None, done.stdout.strip(), "commit")
    version = match.group(1)
    tag = f"{TAG_PREFIX}{version}"
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "-q", f"refs/tags/{tag}^{{commit}}"],
                          capture_output=True, text=True)
    if done.returncode == 0:
        return ResolvedRelease(name, version, done.stdout.strip(), f"tag {tag}")
    shallow = git(repo, "rev-parse", "--is-shallow-repository").strip() == "true"
    if shallow:
        raise ReleaseError(f"{name}: this clone is shallow (git clone --depth), so its history may not reach the "
                           f"commit that published {version}; run `git fetch --unshallow` and retry")
    commit = publishing_commit(repo, version)
    if commit is None:
        raise ReleaseError(f"{name}: no published release {version} in the history of {PUBLISHED_NAME} "
                           f"(it records {_known(repo)}) and no tag {tag}; `git pull` if it is newer than this clone")
    return ResolvedRelease(name, version, commit, f"the commit that added {version} to {PUBLISHED_NAME}")


def _known(repo: Path) -> str:
    try:
        versions = [e["version"] for e in read_published(repo)]
    except ReleaseError:
        versions = []
    return ", ".join(versions) if versions else "no version"


def published_entry(repo: Path, resolved: ResolvedRelease) -> dict | None:
    """The published.json entry of resolved's version at its commit (None for a plain commit)."""
    if resolved.version is None:
        return None
    entries = [e for e in read_published(repo, resolved.commit) if e["version"] == resolved.version]
    return entries[-1] if entries else None


# --- verification against git ------------------------------------------------------------------------

@dataclass
class AnchoredVerification:
    version: str
    rev: str
    commit: str
    checked: list[str]
    files: int
    how: str = "commit"


def verify_against(release_dir: Path, rev: str, repo: Path) -> AnchoredVerification:
    """Verify release_dir against the digests git records at rev (a version such as 0.3.1, its tag, or a
    commit; see resolve_release); raise ReleaseError on any mismatch."""
    release_dir = Path(release_dir)
    resolved = resolve_release(repo, rev)
    commit = resolved.commit
    manifest = read_manifest(release_dir)
    version = manifest["version"]
    if resolved.version is not None and resolved.version != version:
        raise ReleaseError(f"{release_dir}: the manifest says version {version}, but {rev} is release "
                           f"{resolved.version}; verify against {version}, or get {resolved.version} with "
                           f"`python -m releases checkout {resolved.version}`")
    at = f"{rev} ({commit[:12]})"
    checked = []
    published = [e for e in read_published(repo, commit) if e["version"] == version]
    entry = published[-1] if published else None
    if entry is not None:
        digest = sha256_of(release_dir / MANIFEST_NAME)
        if digest != entry["manifest_sha256"]:
            raise ReleaseError(f"{release_dir}/{MANIFEST_NAME}: sha256 {digest[:16]}…, but {PUBLISHED_NAME} at {at} "
                               f"records {entry['manifest_sha256'][:16]}… for release {version}: the manifest was "
                               "changed; get the release again (`dvc pull`)")
        checked.append(f"manifest.json sha256 {digest[:16]}… = {PUBLISHED_NAME} (release {version}) at {at}")
    folder_rel = entry["folder"] if entry is not None else relative_to_repo(release_dir, repo)
    recorded = next((o for o in recorded_outs(repo, commit) if o.path == folder_rel), None) if folder_rel else None
    if recorded is not None:
        digest = folder_md5(release_dir)
        if digest != recorded.md5:
            raise ReleaseError(f"{release_dir}: DVC md5 {digest}, but {recorded.source} at {at} records {recorded.md5} "
                               f"for {folder_rel}: the folder differs from the release recorded there (a file "
                               "changed, added or removed); get it again (`dvc pull`)")
        checked.append(f"folder md5 {digest} = {recorded.source}, output {folder_rel}, at {at}")
    if not checked:
        raise ReleaseError(f"{rev} records no digest of release {version} ({PUBLISHED_NAME} has no entry for it and "
                           f"dvc.lock no output {folder_rel or release_dir}); pass a published version (X.Y.Z)")
    result = verify_release(release_dir)
    if not result.ok:
        raise ReleaseError(f"{release_dir}: " + "; ".join(result.problems))
    checked.append(f"{result.checked} files: sha256 and rows = manifest.json")
    return AnchoredVerification(version=version, rev=rev, commit=commit, checked=checked, files=result.checked,
                                how=resolved.how)
