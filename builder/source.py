"""The English job-title similarity dataset (Zbib et al.): registry entry, download, validation.

Files (no header lines): ``queries.tsv`` and ``corpus_documents.tsv`` hold ``id<TAB>title``;
``annotations.tsv`` holds trec qrels ``query_id<TAB>0<TAB>doc_id<TAB>1`` (relevant pairs only).
"""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from builder.errors import SourceError
from builder.params import REPO_ROOT

ENV_SOURCE_DIR = "JOBTITLES_SOURCE_DIR"
DEFAULT_SOURCE_DIR = REPO_ROOT.parent / "shared" / "data" / "jobtitlesimilarity" / "dataset" / "en"

# Registry entry in the manner of ir_datasets: where the data lives, its checksums and expected counts.
REGISTRY = {
    "name": "jobtitlesimilarity/en",
    "repository": "Avature/jobtitlesimilarity-dataset",
    "commit": "2b9495dab922de9abe81a33d334e0d3a1d5fffaa",
    "base_url": "https://raw.githubusercontent.com/Avature/jobtitlesimilarity-dataset",
    "path": "dataset/en",
    "licence": "Apache-2.0",
    "files": {
        "queries.tsv": {"sha256": "779dd6c659a362ad9d58d6851ba47ad941a82b4e0416fa758378117a28fc4fa8", "rows": 105},
        "corpus_documents.tsv": {"sha256": "400cff357bfba7d0e749bd94b21677844cf143b8374eef0ddd9658e65dc75a11", "rows": 2619},
        "annotations.tsv": {"sha256": "8e6d60dfc6d8b90329092900ebfd6f27d941bf566fef57492a916617231a7d6a", "rows": 2420},
    },
}
FILES = tuple(REGISTRY["files"])


@dataclass(frozen=True)
class EnglishSource:
    folder: Path
    queries: dict[str, str]  # id -> title, file order
    corpus: dict[str, str]
    qrels: list[tuple[str, str]]  # (query_id, doc_id), relevant pairs

    def titles(self) -> dict[str, str]:
        """Every English id (queries first, then corpus) with its title."""
        return {**self.queries, **{k: v for k, v in self.corpus.items() if k not in self.queries}}


def resolve_source_dir(source: str | Path | None) -> Path:
    if source:
        return Path(source)
    env = os.environ.get(ENV_SOURCE_DIR)
    return Path(env) if env else DEFAULT_SOURCE_DIR


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def _read_lines(path: Path) -> list[str]:
    if not path.is_file():
        raise SourceError(f"{path}: file missing (the source folder needs {', '.join(FILES)})")
    raw = path.read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):
        raise SourceError(f"{path}:1: starts with a UTF-8 byte-order mark; save the file as UTF-8 without BOM")
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = []
    for lineno, line in enumerate(lines, 1):
        if line.endswith(b"\r"):
            raise SourceError(f"{path}:{lineno}: Windows line ending (CRLF); convert the file to LF line endings")
        try:
            out.append(line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise SourceError(f"{path}:{lineno}: not valid UTF-8 ({exc.reason} at byte {exc.start}); re-encode the file as UTF-8") from None
    return out


def _read_titles(path: Path) -> dict[str, str]:
    titles: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for lineno, line in enumerate(_read_lines(path), 1):
        fields = line.split("\t")
        if len(fields) != 2:
            raise SourceError(f"{path}:{lineno}: expected 2 tab-separated columns 'id<TAB>title', found {len(fields)}")
        sid, title = fields[0].strip(), fields[1].strip()
        if not sid or any(c.isspace() for c in sid):
            raise SourceError(f"{path}:{lineno}: id {fields[0]!r} is empty or contains whitespace")
        if not title:
            raise SourceError(f"{path}:{lineno}: empty title for id {sid!r}")
        if sid in titles:
            raise SourceError(f"{path}:{lineno}: duplicate id {sid!r} (first on line {first_line[sid]})")
        titles[sid] = title
        first_line[sid] = lineno
    if not titles:
        raise SourceError(f"{path}: no rows")
    return titles


def _read_qrels(path: Path, queries: dict[str, str], corpus: dict[str, str]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for lineno, line in enumerate(_read_lines(path), 1):
        fields = line.split("\t")
        if len(fields) != 4:
            raise SourceError(f"{path}:{lineno}: expected 4 tab-separated columns 'query_id 0 doc_id relevance', found {len(fields)}")
        qid, _, did, rel = (f.strip() for f in fields)
        if qid not in queries:
            raise SourceError(f"{path}:{lineno}: query id {qid!r} is not in queries.tsv")
        if did not in corpus:
            raise SourceError(f"{path}:{lineno}: document id {did!r} is not in corpus_documents.tsv")
        try:
            relevance = int(rel)
        except ValueError:
            raise SourceError(f"{path}:{lineno}: relevance {rel!r} is not an integer") from None
        if relevance > 0 and (qid, did) not in seen:
            seen.add((qid, did))
            pairs.append((qid, did))
    return pairs


def load_source(folder: str | Path | None = None) -> EnglishSource:
    """Read and validate the three files; every problem is a SourceError naming file and line."""
    folder = resolve_source_dir(folder)
    if not folder.is_dir():
        raise SourceError(
            f"{folder}: source folder not found; pass --source DIR, set ${ENV_SOURCE_DIR}, "
            "or run `python -m builder source --download`"
        )
    queries = _read_titles(folder / "queries.tsv")
    corpus = _read_titles(folder / "corpus_documents.tsv")
    qrels = _read_qrels(folder / "annotations.tsv", queries, corpus)
    return EnglishSource(folder=folder, queries=queries, corpus=corpus, qrels=qrels)


def verify_checksums(folder: Path) -> dict[str, str]:
    sums = {}
    for name, entry in REGISTRY["files"].items():
        got = sha256_of(folder / name)
        if got != entry["sha256"]:
            raise SourceError(
                f"{folder / name}: SHA-256 {got} does not match the pinned {entry['sha256']} "
                f"(commit {REGISTRY['commit']}); the file is corrupt or from another version"
            )
        sums[name] = got
    return sums


def download_source(dest: str | Path, base_url: str | None = None, timeout_s: float = 60.0) -> Path:
    """Download the pinned files into dest (via a temporary name), verify checksums and counts."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    base = (base_url or REGISTRY["base_url"]).rstrip("/")
    for name, entry in REGISTRY["files"].items():
        target = dest / name
        if target.is_file() and sha256_of(target) == entry["sha256"]:
            continue
        url = f"{base}/{REGISTRY['commit']}/{REGISTRY['path']}/{name}"
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as resp:
                data = resp.read()
        except (urllib.error.URLError, OSError) as exc:
            raise SourceError(f"{url}: download failed ({exc}); check the network or pass --source DIR") from None
        got = hashlib.sha256(data).hexdigest()
        if got != entry["sha256"]:
            raise SourceError(f"{url}: SHA-256 {got} does not match the pinned {entry['sha256']}; refusing the file")
        tmp = target.with_suffix(".part")
        tmp.write_bytes(data)
        tmp.replace(target)
    check_counts(load_source(dest))
    return dest


def check_counts(src: EnglishSource) -> None:
    expected = {n: e["rows"] for n, e in REGISTRY["files"].items()}
    got = {"queries.tsv": len(src.queries), "corpus_documents.tsv": len(src.corpus), "annotations.tsv": len(src.qrels)}
    for name, n in expected.items():
        if got[name] != n:
            raise SourceError(f"{src.folder / name}: {got[name]} rows, the registry expects {n}")
