"""The release manifest: every file with its SHA-256, size and row count; and its verification."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import polars as pl

MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = "gendered-job-titles-release/1"


class ReleaseError(ValueError):
    """A release cannot be made, read or verified; the message says what and what to do."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def count_rows(path: Path) -> int | None:
    """Rows of a data file (Parquet rows, non-blank TSV lines); None for files that hold no rows."""
    if path.suffix == ".parquet":
        return pl.scan_parquet(path).select(pl.len()).collect().item()
    if path.suffix == ".tsv":
        with open(path, encoding="utf-8") as fh:
            return sum(1 for line in fh if line.strip())
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


def read_json(path: Path, advice: str = "") -> object:
    """Parse a JSON file; a syntax error names the file, the line and, when given, what to do."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ReleaseError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}){advice}") from None


def read_manifest(root: Path) -> dict:
    path = Path(root) / MANIFEST_NAME
    if not path.is_file():
        raise ReleaseError(f"{path}: no manifest; is {root} a release folder (made by `python -m releases make`)?")
    manifest = read_json(path)
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT \
            or not isinstance(manifest.get("files"), list):
        raise ReleaseError(f"{path}: not a release manifest of format {MANIFEST_FORMAT!r}")
    for number, entry in enumerate(manifest["files"], start=1):
        problem = _entry_problem(entry)
        if problem:
            raise ReleaseError(f"{path}: files entry {number} {problem}; the manifest was edited or damaged, "
                               "get the release again (dvc pull)")
    return manifest


def _entry_problem(entry: object) -> str | None:
    if not isinstance(entry, dict):
        return "is not an object"
    rel = entry.get("path")
    if not isinstance(rel, str) or not rel:
        return "has no 'path'"
    parts = PurePosixPath(rel).parts
    if PurePosixPath(rel).is_absolute() or ".." in parts or "\\" in rel:
        return f"({rel!r}) points outside the release folder"
    if not isinstance(entry.get("sha256"), str) or not re.fullmatch(r"[0-9a-f]{64}", entry["sha256"]):
        return f"({rel}) has no valid 'sha256'"
    if "rows" in entry and entry["rows"] is not None and not isinstance(entry["rows"], int):
        return f"({rel}) has a 'rows' that is not a number"
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


def verify_release(root: str | Path) -> Verification:
    """Check every file of the manifest (present, SHA-256, row count) and that no other file is there."""
    root = Path(root)
    manifest = read_manifest(root)
    result = Verification(root=root, version=str(manifest.get("version")))
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
    for path in release_files(root):
        rel = path.relative_to(root).as_posix()
        if rel not in listed:
            result.problems.append(f"extra: {rel} (not in the manifest)")
    return result
