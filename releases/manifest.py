"""The release manifest: every file with its SHA-256, size and row count; and its verification.

The manifest proves a folder is complete and unchanged only relative to itself: whoever can edit the
files can re-hash them. `releases.anchor` checks the manifest against the digest recorded in git.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import polars as pl

from eval.testset import RELEASE_FAMILIES, TestSetError, read_testset, sha256_of

from .errors import ReleaseError

MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = "gendered-job-titles-release/1"
# What every language folder of a release holds (releases.make writes exactly these).
LANGUAGE_FILES = ("queries.parquet", "corpus.parquet", "qrels.tsv", "qrels.parquet", "stats.json")
TOP_LEVEL_FILES = ("README.md",)
LANGUAGE_RE = re.compile(r"[a-z]{2,3}(-[A-Za-z0-9]{2,8})*")  # matched whole (fullmatch)
# A second family (``families`` in the manifest: the ESCO sets, eval.testset RELEASE_FAMILIES) is a folder
# ``<family>/`` holding its own card and one folder per language with LANGUAGE_FILES, as the release root does.
FAMILY_CARD = "README.md"


def count_rows(path: Path) -> int | None:
    """Rows of a data file (Parquet rows, non-blank TSV lines); None for files that hold no rows."""
    try:
        if path.suffix == ".parquet":
            # Read whole, not counted from the footer: a file whose pages are damaged (and re-hashed into the
            # manifest) has an intact footer, and verify vouches for what it read.
            return pl.read_parquet(path).height
        if path.suffix == ".tsv":
            with open(path, encoding="utf-8") as fh:
                return sum(1 for line in fh if line.strip())
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError) as exc:
        # A file whose bytes were replaced (and the manifest re-hashed) can be unreadable.
        raise ReleaseError(f"{path}: not a readable {path.suffix[1:]} file ({type(exc).__name__}); "
                           "get the release again (dvc pull)") from None
    return None


def describe_file(root: Path, path: Path) -> dict:
    return {
        "path": path.relative_to(root).as_posix(),
        "sha256": sha256_of(path),
        "bytes": path.stat().st_size,
        "rows": count_rows(path),
    }


def release_files(root: Path) -> list[Path]:
    """Every file under the release folder except the manifest itself, in a stable order."""
    return sorted((p for p in root.rglob("*") if p.is_file() and p.relative_to(root).as_posix() != MANIFEST_NAME),
                  key=lambda p: p.relative_to(root).as_posix())


def write_manifest(root: Path, header: dict) -> dict:
    """Describe every file under root and write manifest.json (header fields first, then files)."""
    manifest = {"format": MANIFEST_FORMAT, **header, "files": [describe_file(root, p) for p in release_files(root)]}
    (root / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def read_json(path: Path, advice: str = "", text: str | None = None) -> object:
    """Parse a JSON file (or its given text); a syntax error names the file, the line and, when given,
    what to do."""
    try:
        return json.loads(path.read_text(encoding="utf-8") if text is None else text)
    except json.JSONDecodeError as exc:
        raise ReleaseError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}){advice}") from None
    except UnicodeDecodeError as exc:
        raise ReleaseError(f"{path}: not UTF-8 text (byte {exc.start}){advice}") from None
    except RecursionError:
        raise ReleaseError(f"{path}: JSON nested too deeply to be a release file{advice}") from None
    except OSError as exc:
        raise ReleaseError(f"{path}: cannot be read ({exc.strerror or exc}){advice}") from None


def read_manifest(root: Path) -> dict:
    """The manifest of a release folder, refused when it cannot describe a complete release."""
    path = Path(root) / MANIFEST_NAME
    if path.is_symlink() or not path.is_file():
        raise ReleaseError(f"{path}: no manifest; is {root} a release folder (made by `python -m releases make`)?")
    manifest = read_json(path, "; get the release again (dvc pull)")
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT \
            or not isinstance(manifest.get("files"), list):
        raise ReleaseError(f"{path}: not a release manifest of format {MANIFEST_FORMAT!r}")
    damaged = "; the manifest was edited or damaged, get the release again (dvc pull)"
    if not isinstance(manifest.get("version"), str) or not re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"]):
        raise ReleaseError(f"{path}: no 'version' of the form X.Y.Z{damaged}")
    languages = manifest.get("languages")
    if not isinstance(languages, list) or not languages \
            or not all(isinstance(lang, str) and LANGUAGE_RE.fullmatch(lang) for lang in languages):
        raise ReleaseError(f"{path}: 'languages' must be a non-empty list of language codes{damaged}")
    if len(set(languages)) != len(languages):
        raise ReleaseError(f"{path}: 'languages' lists a language twice{damaged}")
    families = _families(manifest, path, damaged)
    if not manifest["files"]:
        raise ReleaseError(f"{path}: 'files' is empty: a release lists every file it holds{damaged}")
    seen: set[str] = set()
    for number, entry in enumerate(manifest["files"], start=1):
        problem = _entry_problem(entry, languages, families)
        if problem is None and entry["path"] in seen:
            problem = f"({_shown(entry['path'])}) repeats an earlier entry"
        if problem:
            raise ReleaseError(f"{path}: files entry {number} {problem}{damaged}")
        seen.add(entry["path"])
    expected = set(TOP_LEVEL_FILES) | {f"{lang}/{name}" for lang in languages for name in LANGUAGE_FILES}
    for family, codes in families.items():
        expected |= {f"{family}/{FAMILY_CARD}"} | {f"{family}/{lang}/{name}" for lang in codes for name in LANGUAGE_FILES}
    unlisted = sorted(expected - seen)
    if unlisted:
        raise ReleaseError(f"{path}: 'files' lacks {', '.join(unlisted[:5])}"
                           f"{' …' if len(unlisted) > 5 else ''}, which every release holds{damaged}")
    for entry in manifest["files"]:
        # verify recounts the rows, so a manifest claiming rows for an empty file fails there.
        if entry["path"].endswith((".parquet", ".tsv")) and not entry.get("rows"):
            raise ReleaseError(f"{path}: {_shown(entry['path'])} holds no rows: an empty test set measures nothing; "
                               "this is not a usable release")
    return manifest


def family_languages(manifest: dict) -> dict[str, list[str]]:
    """The second families of a manifest read by ``read_manifest``: family -> its languages (``{}`` for a release
    without one, as every release before the ESCO family)."""
    return {name: family["languages"] for name, family in (manifest.get("families") or {}).items()}


def _families(manifest: dict, path: Path, damaged: str) -> dict[str, list[str]]:
    families = manifest.get("families")
    if families is None:
        return {}
    if not isinstance(families, dict) or not families:
        raise ReleaseError(f"{path}: 'families' must be a non-empty mapping of family to its languages{damaged}")
    for name, family in families.items():
        if name not in RELEASE_FAMILIES:
            raise ReleaseError(f"{path}: 'families' names {_shown(name)}, not a family a release carries "
                               f"({', '.join(RELEASE_FAMILIES)}){damaged}")
        codes = family.get("languages") if isinstance(family, dict) else None
        if not isinstance(codes, list) or not codes \
                or not all(isinstance(c, str) and LANGUAGE_RE.fullmatch(c) for c in codes) or len(set(codes)) != len(codes):
            raise ReleaseError(f"{path}: 'families.{name}.languages' must be a non-empty list of distinct language "
                               f"codes{damaged}")
    return family_languages(manifest)


def _shown(rel: str) -> str:
    """A path for a one-line message: as it is when printable, else quoted with escapes."""
    return rel if rel.isprintable() else repr(rel)


def _entry_problem(entry: object, languages: list[str], families: dict[str, list[str]]) -> str | None:
    if not isinstance(entry, dict):
        return "is not an object"
    rel = entry.get("path")
    if not isinstance(rel, str) or not rel:
        return "has no 'path'"
    shown = _shown(rel)
    parts = PurePosixPath(rel).parts
    if PurePosixPath(rel).is_absolute() or ".." in parts or "." in rel.split("/") or "\\" in rel \
            or "//" in rel or "\x00" in rel:
        return f"({rel!r}) points outside the release folder"
    if rel == MANIFEST_NAME:
        return f"({shown}) lists the manifest itself"
    if len(parts) > 1 and parts[0] in families:
        if rel != f"{parts[0]}/{FAMILY_CARD}" and (len(parts) < 3 or parts[1] not in families[parts[0]]):
            return (f"({shown}) is in a folder that is not one of the {parts[0]} family's languages "
                    f"({', '.join(families[parts[0]])})")
    elif len(parts) > 1 and parts[0] not in languages:
        return (f"({shown}) is in a folder that is not one of the release's languages ({', '.join(languages)})"
                + (f" or families ({', '.join(families)})" if families else ""))
    if not isinstance(entry.get("sha256"), str) or not re.fullmatch(r"[0-9a-f]{64}", entry["sha256"]):
        return f"({shown}) has no valid 'sha256'"
    rows = entry.get("rows")
    if rows is not None and (not isinstance(rows, int) or isinstance(rows, bool) or rows < 0):
        return f"({shown}) has a 'rows' that is not a count"
    return None


@dataclass
class Verification:
    root: Path
    version: str
    checked: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _leaving_links(root: Path) -> list[str]:
    """Symbolic links under root that point outside it (a pulled release holds plain files)."""
    problems = []
    resolved_root = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                target = path.resolve()
                if target != resolved_root and resolved_root not in target.parents:
                    problems.append(f"link: {path.relative_to(root).as_posix()} points outside the folder "
                                    f"(to {os.readlink(path)}); a release holds plain files (if DVC made it, "
                                    "run `dvc config cache.type copy && dvc checkout --relink`)")
    return problems


def verify_release(root: str | Path) -> Verification:
    """Check every file of the manifest (present, SHA-256, row count) and that no other file is there."""
    root = Path(root)
    if not root.is_dir():
        raise ReleaseError(f"{root}: not a folder; pass the release folder (e.g. release after `dvc pull release`)")
    manifest = read_manifest(root)
    result = Verification(root=root, version=manifest["version"])
    links = _leaving_links(root)
    if links:
        # Reading through such a link would hash bytes from elsewhere; nothing else is checked.
        result.problems.extend(links)
        return result
    listed = set()
    for entry in manifest["files"]:
        rel = entry["path"]
        listed.add(rel)
        path = root / rel
        if not path.is_file():
            result.problems.append(f"missing: {rel}")
            continue
        result.checked += 1
        digest = sha256_of(path)
        if digest != entry["sha256"]:
            result.problems.append(f"changed: {rel} (sha256 {digest[:12]}…, manifest says {entry['sha256'][:12]}…)")
            continue
        # Same bytes imply the same rows; counting again guards against a manifest edited by hand.
        rows = count_rows(path)
        if rows != entry.get("rows"):
            result.problems.append(f"changed: {rel} has {rows} rows, manifest says {entry.get('rows')}")
    families = family_languages(manifest)
    if not result.problems:
        # Every file matches the manifest; whoever re-hashed a damaged file into it is caught by reading each test
        # set as eval does (schema, ids, qrels, the set's own stats.json integrity record).
        sets = [(root, lang) for lang in manifest["languages"]]
        sets += [(root / family, lang) for family, codes in families.items() for lang in codes]
        for where, lang in sets:
            try:
                read_testset(where, lang)
            except TestSetError as exc:
                result.problems.append(f"unreadable: {exc}")
    extra_folders = []  # relative paths of folders outside the manifest's languages and families
    for folder, allowed, what in [(root, {*manifest["languages"], *families}, "the manifest's languages"
                                   + (" or families" if families else "")),
                                  *((root / f, set(codes), f"the {f} family's languages") for f, codes in families.items())]:
        if folder.is_dir() and not folder.is_symlink():
            for p in sorted(p for p in folder.iterdir() if p.is_dir() and p.name not in allowed):
                rel = p.relative_to(root).as_posix()
                extra_folders.append(rel)
                result.problems.append(f"extra: {rel}/ (a folder that is not one of {what})")
    for path in release_files(root):
        rel = path.relative_to(root).as_posix()
        if rel not in listed and not any(rel.startswith(folder + "/") for folder in extra_folders):
            result.problems.append(f"extra: {rel} (not in the manifest)")
    return result
