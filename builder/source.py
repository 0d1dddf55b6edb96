"""The English job-title similarity dataset (Zbib et al.): registry entry, download, validation.

Files (no header lines): ``queries.tsv`` and ``corpus_documents.tsv`` hold ``id<TAB>title``;
``annotations.tsv`` holds trec qrels ``query_id<TAB>0<TAB>doc_id<TAB>1`` (relevant pairs only).

Where it is read from: ``--source DIR``, else ``$JOBTITLES_SOURCE_DIR``, else the checkout's neighbour
``../shared/data/jobtitlesimilarity/dataset/en``, else the user cache
(``$XDG_CACHE_HOME/gendered-job-titles/...``, default ``~/.cache``), downloaded there at the pinned commit
and checked against the pinned SHA-256s the first time it is needed.

Refused, as ``<file>:<line>: ...``: a header line, a BOM, CRLF, bad UTF-8, control characters (NUL, a
lone CR), titles with no visible character or longer than MAX_TITLE_CHARS, duplicate ids, an id in both
files with different titles, qrels naming unknown ids, no relevant pair at all.
"""

from __future__ import annotations

import hashlib
import os
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from builder.characters import describe, unsafe_character
from builder.errors import SourceError, scrub
from config import check_url
from builder.params import REPO_ROOT
from config.files import write_file_atomically
from eval.testset import sha256_of

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
# The longest English title is 46 characters; a title this long is a broken file, and would stall the build.
MAX_TITLE_CHARS = 300
# The most a downloaded source file may hold (the pinned files are under 100 KiB): a reply announcing more is
# refused before its body is read, and no more than this (plus one byte) of a reply is ever held in memory.
MAX_DOWNLOAD_BYTES = 16 << 20
# First lines that are column names, not data (the format has no header line).
HEADER_IDS = {"id", "_id", "qid", "query_id", "queryid", "doc_id", "docid", "document_id", "corpus_id"}


# Unicode's control characters (category Cc: U+0000-U+001F, U+007F-U+009F) but the tab that separates columns.

def user_cache_root() -> Path:
    """The project's folder in the user cache (``$XDG_CACHE_HOME``, default ``~/.cache``), where downloads are kept."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gendered-job-titles"


def user_cache_dir() -> Path:
    """Where a downloaded source is kept (in the manner of ir_datasets and HF datasets)."""
    return user_cache_root() / "jobtitlesimilarity" / REGISTRY["commit"] / REGISTRY["path"]


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
    """The folder given (argument, then $JOBTITLES_SOURCE_DIR), else the local neighbour, else the user
    cache (which may not exist yet: ``load_source`` downloads it)."""
    if source:
        return Path(source)
    env = os.environ.get(ENV_SOURCE_DIR)
    if env:
        return Path(env)
    return DEFAULT_SOURCE_DIR if DEFAULT_SOURCE_DIR.is_dir() else user_cache_dir()


def cached_source_complete(folder: Path) -> bool:
    return all((folder / name).is_file() and sha256_of(folder / name) == entry["sha256"]
               for name, entry in REGISTRY["files"].items())


def read_lines(path: Path) -> list[str]:
    """A UTF-8 text file's lines, checked (no BOM, CRLF, bad UTF-8, control characters but the tab); every problem
    a SourceError naming the file and line. Also builder/esco.py's reader of MELO's TSV files."""
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
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SourceError(f"{path}:{lineno}: not valid UTF-8 ({exc.reason} at byte {exc.start}); re-encode the file as UTF-8") from None
        control = unsafe_character(text.replace("\t", ""))  # the tab separates the columns
        if control is not None:
            raise SourceError(f"{path}:{lineno}: control character {describe(control)}; remove it (a lone CR, NUL, "
                              "a line separator, a bidi override, ...)")
        out.append(text)
    return out


def _visible(text: str) -> bool:
    """True when text has a character that shows (not only spaces and zero-width or format characters)."""
    return any(not c.isspace() and unicodedata.category(c) not in ("Cf", "Zs", "Zl", "Zp", "Mn", "Me") for c in text)


def _read_titles(path: Path, line_of: dict[str, int] | None = None) -> dict[str, str]:
    """id -> title; ``line_of`` (when given) receives each id's line number."""
    titles: dict[str, str] = {}
    first_line: dict[str, int] = {} if line_of is None else line_of
    for lineno, line in enumerate(read_lines(path), 1):
        fields = line.split("\t")
        if len(fields) != 2:
            raise SourceError(f"{path}:{lineno}: expected 2 tab-separated columns 'id<TAB>title', found {len(fields)}")
        sid, title = fields[0].strip(), fields[1].strip()
        if lineno == 1 and sid.lower() in HEADER_IDS:
            raise SourceError(f"{path}:1: looks like a header line ({line!r}); the format has none, delete the line")
        if not sid or any(c.isspace() for c in sid):
            raise SourceError(f"{path}:{lineno}: id {fields[0]!r} is empty or contains whitespace")
        if not _visible(title):
            raise SourceError(f"{path}:{lineno}: empty title for id {sid!r} (no visible character)")
        if len(title) > MAX_TITLE_CHARS:
            raise SourceError(f"{path}:{lineno}: title of id {sid!r} is {len(title)} characters, over the limit of "
                              f"{MAX_TITLE_CHARS}; shorten it or fix the file")
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
    lines = read_lines(path)
    if not lines:
        raise SourceError(f"{path}: no rows; the qrels file needs at least one relevant pair")
    for lineno, line in enumerate(lines, 1):
        fields = line.split("\t")
        if len(fields) != 4:
            raise SourceError(f"{path}:{lineno}: expected 4 tab-separated columns 'query_id 0 doc_id relevance', found {len(fields)}")
        qid, _, did, rel = (f.strip() for f in fields)
        if lineno == 1 and qid.lower() in HEADER_IDS and qid not in queries:
            raise SourceError(f"{path}:1: looks like a header line ({line!r}); the format has none, delete the line")
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
    if not pairs:
        raise SourceError(f"{path}: no relevant pair (every relevance is 0 or less, {len(lines)} line(s)); "
                          "a test set needs relevance labels")
    return pairs


def load_source(folder: str | Path | None = None, base_url: str | None = None) -> EnglishSource:
    """Read and validate the three files; every problem is a SourceError naming file and line.
    With no folder given and none found locally, the pinned source is downloaded into the user cache."""
    explicit = bool(folder or os.environ.get(ENV_SOURCE_DIR))
    folder = resolve_source_dir(folder)
    if not explicit and folder == user_cache_dir() and not cached_source_complete(folder):
        print(f"English source not found locally: downloading {REGISTRY['repository']}@{REGISTRY['commit'][:12]} "
              f"into {folder}", file=sys.stderr)
        download_source(folder, base_url=base_url)
    if not folder.is_dir():
        raise SourceError(
            f"{folder}: source folder not found; pass --source DIR, set ${ENV_SOURCE_DIR}, "
            "or run `python -m builder source --download`"
        )
    queries_lines: dict[str, int] = {}
    queries = _read_titles(folder / "queries.tsv", queries_lines)
    corpus_lines: dict[str, int] = {}
    corpus = _read_titles(folder / "corpus_documents.tsv", corpus_lines)
    for sid, title in corpus.items():
        if sid in queries and queries[sid] != title:
            raise SourceError(
                f"{folder / 'corpus_documents.tsv'}:{corpus_lines[sid]}: id {sid!r} has title {title!r}, but "
                f"queries.tsv:{queries_lines[sid]} gives it {queries[sid]!r}; one id must name one title")
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
        fetch_pinned(f"{base}/{REGISTRY['commit']}/{REGISTRY['path']}/{name}", entry["sha256"], target, timeout_s,
                     local_copy="pass --source DIR", local_copy_env=f"set ${ENV_SOURCE_DIR}")
    check_counts(load_source(dest))
    return dest


def fetch_pinned(url: str, sha256: str, target: Path, timeout_s: float, *, local_copy: str, local_copy_env: str | None = None,
                 max_bytes: int = MAX_DOWNLOAD_BYTES) -> None:
    """Fetch one pinned file to ``target`` (written via a temporary name, only when its SHA-256 is ``sha256``).
    A reply over ``max_bytes`` is refused (announced: before its body is read; else after reading one byte more);
    a failed fetch and a checksum mismatch are a SourceError whose remedy names ``local_copy`` (the option that
    reads a local copy instead, e.g. ``pass --source DIR``) and ``local_copy_env`` (its environment variable)."""
    import urllib.error
    import urllib.request  # here: it imports http and ssl, 8 ms of every build that downloads nothing

    over = f"over the {max_bytes >> 20} MiB a source file may hold; refusing it (check --base-url, or {local_copy} to a local copy)"
    check_url(url, "the download URL (--base-url, else source.base_url)", SourceError)
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp:
            announced = resp.headers.get("Content-Length")
            if announced and announced.strip().isdigit() and int(announced) > max_bytes:
                raise SourceError(f"{scrub(url)}: the server announces {int(announced)} bytes, {over}")
            data = resp.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise SourceError(f"{scrub(url)}: the reply is {over}")
    except (urllib.error.URLError, OSError) as exc:
        env = f" (or {local_copy_env})" if local_copy_env else ""
        raise SourceError(f"{scrub(url)}: download failed ({scrub(exc)}); check the network, or {local_copy}{env} "
                          "to a local copy") from None
    got = hashlib.sha256(data).hexdigest()
    if got != sha256:
        raise SourceError(f"{scrub(url)}: SHA-256 {got} does not match the pinned {sha256}; refusing the file")
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    write_file_atomically(target, data)


def check_counts(src: EnglishSource) -> None:
    expected = {n: e["rows"] for n, e in REGISTRY["files"].items()}
    got = {"queries.tsv": len(src.queries), "corpus_documents.tsv": len(src.corpus), "annotations.tsv": len(src.qrels)}
    for name, n in expected.items():
        if got[name] != n:
            raise SourceError(f"{src.folder / name}: {got[name]} rows, the registry expects {n}")
