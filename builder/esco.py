"""A second kind of source: ESCO's occupation labels, written by people in both genders (docs/esco.md).

ESCO, the European classification of occupations, publishes per language a CSV of occupations
(``occupations_<lang>.csv``: ``conceptUri``, ``preferredLabel``, ``altLabels`` one per line, …); the MELO
benchmark republishes the labels as two TSV files per language (``MELO``, pinned). One reader per layout
(``read_occupations``, ``read_melo``) gives an ``EscoFile``, and one set builder (``build_esco``) reads it. Romance and
German preferred labels are often written in dual form (es *director técnico/directora técnica*, de
*Medizinisch-technischer Laborassistent/Medizinisch-technische Laborassistentin*), and the alternatives list
both forms. This module turns one language's file into a test set of the same format as the job-title sets
(docs/FORMAT.md), so eval, releases and the report read it unchanged:

- **queries**: per occupation (URI), the pair of its preferred label: the two sides of a dual form, or the
  preferred label and the alternative of the same URI that is its other-gender form; a common-gender preferred
  label gives one neutral query. Every pair is confirmed by the language's gender layer (the lexicon for
  es/fr/it/pt, builder/german.py for de): the feminine must be the masculine's inflection word by word (the
  notebook's ending rule, checked). A pair the layer does not confirm is dropped with its reason (a typo in
  ESCO, *firectora*; a head the lexicon does not know; a label naming a thing), counted in ``stats.json``.
- **corpus** (``labels``, the default): the occupation's *other* labels, its alternatives without the query's own
  texts, paired and confirmed the same way, common-gender ones as neutral items; a gendered label with no
  confirmed partner is left out (a masculine corpus would hold it and a feminine one not). A query's relevant
  documents are its own occupation's other labels: the query's own text is never its relevant document.
  ``preferred``: the notebook's design, one neutral document per occupation, its preferred label as published
  (the dual form); relevant: its own. Every query text is then contained in its relevant document (the
  notebook's tautology), kept for comparison with its figures.
- relevance is one level, the URI (``RELEVANCE``). ESCO's broader/narrower relation is not used: eval's measures
  are binary, so a looser level would count as fully relevant.
- ``--download`` fetches the one public copy found (``PUBLIC_COPY``: an unofficial re-upload of es, fr and en-us,
  pinned to its commit and checksums) through ``builder.source.fetch_pinned``.

Item ``source_ids`` are ESCO ids, ``<uuid>`` for a query, ``<uuid>#<k>`` for its occupation's k-th corpus unit:
eval's self-match rule (a corpus item sharing a source id with the query) then drops nothing, since the
relevant documents are meant to be found.
"""

from __future__ import annotations

import csv
import io
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from builder.errors import SourceError
from config import REPO_ROOT
from builder.verdict import PAIR_VERDICTS, Verdict
from eval.testset import TestSet, sha256_of, table1_counts, write_testset

SOURCE = "esco"
REQUIRED_COLUMNS = ("conceptUri", "preferredLabel", "altLabels")
CORPUS_DESIGNS = {
    "labels": "the occupation's other labels (alternatives without the query's own texts), gendered pairs and "
              "common-gender labels; relevant: the labels of the query's own occupation",
    "preferred": "the notebook's: one neutral document per occupation, its preferred label as published (dual "
                 "form); relevant: the query's own occupation (every query text is inside its relevant document)",
}
# ESCO's download folders are named with their version ("ESCO dataset - v1.1.1 - classification - es - csv").
_VERSION_IN_NAME = re.compile(r"v\d+(?:\.\d+)+")
MAX_CSV_BYTES = 64 << 20  # the largest official occupations file is about 6 MB
EXAMPLES = 10  # dropped labels listed per reason in stats.json


@dataclass(frozen=True)
class Occupation:
    uri: str
    line: int  # the CSV line where its record starts
    preferred: str
    alternatives: tuple[str, ...]

    @property
    def short_id(self) -> str:
        """The URI's last path segment (ESCO's UUID): the item's source id."""
        return self.uri.rstrip("/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class EscoFile:
    """One language's occupations as either layout gives them; the one input of the set builder."""

    path: Path  # the labels file (occupations_<lang>.csv, MELO's corpus_elements.tsv)
    lang: str
    version: str
    sha256: str  # of ``path``
    occupations: tuple[Occupation, ...]
    layout: str = "csv"  # csv: ESCO's portal download; melo: MELO's processed dataset (MELO_LAYOUT)
    files: dict[str, str] = field(default_factory=dict)  # every file read, name -> SHA-256
    origin: str = ""  # where the files come from, as stats.json and the card say it


# The one public copy found of ESCO's occupations CSVs (docs/esco.md "The public copy"): an unofficial re-upload,
# pinned to its commit, each file to the SHA-256 measured from that commit. ESCO's version is not named in it: its
# 2,942 occupations are ESCO v1's count (ESCOpedia), uploaded 19 Oct 2020: "v1.0.x", which release not told.
PUBLIC_COPY = {
    "repository": "emanuellandell/public",
    "commit": "d2764d58d0a3a5ec5a0f5145fc6c2a72c6923d8e",
    "base_url": "https://raw.githubusercontent.com/emanuellandell/public",
    "version": "v1.0.x",
    "files": {
        "occupations_es.csv": {"sha256": "c6177060d18d497a92ac22491952b3416f9d9b0d32e0e9c654d788fd0ea96225", "bytes": 918542},
        "occupations_fr.csv": {"sha256": "dbdc398fdd72278ff304f4501758647abeaf32b63efd2ca3f25fbd147be5237d", "bytes": 854719},
        "occupations_en-us.csv": {"sha256": "d0d763b09ece34ff3a78411ea03c20b2bcf5bf26090de61585a7c8134c1d0245", "bytes": 1216863},
    },
}
# A reply larger than this is no pinned file (the largest is 1.2 MB): refused before or while it is read.
MAX_DOWNLOAD_BYTES = 4 << 20


def public_copy_dir() -> Path:
    """Where ``--download`` puts the public copy when no --esco DIR is given: the user cache, by commit."""
    from builder.source import user_cache_root

    return user_cache_root() / "esco" / PUBLIC_COPY["repository"].replace("/", "+") / PUBLIC_COPY["commit"]


def download_public_copy(dest: Path, base_url: str | None = None, timeout_s: float = 60.0) -> Path:
    """The pinned files of the public copy in ``dest``: a file already there with its SHA-256 is kept, a missing one
    is fetched from ``<base_url>/<commit>/<name>`` and written only when its SHA-256 matches (builder.source's
    ``fetch_pinned``: size cap, checksum, atomic write; one SourceError otherwise). A file there with another
    SHA-256 (an official download, say) is refused, never overwritten."""
    from builder.source import fetch_pinned

    dest = Path(dest)
    base = (base_url or PUBLIC_COPY["base_url"]).rstrip("/")
    for name, entry in PUBLIC_COPY["files"].items():
        target = dest / name
        if target.is_file():
            if sha256_of(target) == entry["sha256"]:
                continue
            raise SourceError(f"{target}: already there and not the pinned public copy (SHA-256 {sha256_of(target)}, "
                              f"pinned {entry['sha256']}); --download does not overwrite it: give --download another "
                              "--esco DIR, or build from this folder without --download")
        fetch_pinned(f"{base}/{PUBLIC_COPY['commit']}/{name}", entry["sha256"], target, timeout_s,
                     local_copy="pass --esco DIR", max_bytes=MAX_DOWNLOAD_BYTES)
    return dest


def occupations_file(folder: Path, lang: str) -> Path:
    return Path(folder) / f"occupations_{lang}.csv"


def esco_version(folder: Path, given: str | None) -> str:
    """The version given, else the one the download folder's name carries; never guessed."""
    if given:
        return given
    found = _VERSION_IN_NAME.search(Path(folder).resolve().name)
    if found:
        return found.group(0)
    raise SourceError(f"{folder}: the ESCO version is not known; give it with --esco-version (or esco.version in "
                      "params.yaml), as the ESCO portal names the download (e.g. v1.1.1)")


def read_occupations(folder: Path, lang: str, version: str | None = None) -> EscoFile:
    """One language's occupations CSV, checked; every problem is one SourceError naming the file and line."""
    path = occupations_file(folder, lang)
    if not Path(folder).is_dir():
        raise SourceError(f"{folder}: no such folder; give the folder of ESCO's CSV download (--esco DIR)")
    if not path.is_file():
        raise SourceError(f"{path}: missing; ESCO's CSV download for {lang} holds occupations_{lang}.csv "
                          "(download the classification for that language, CSV format, from the ESCO portal)")
    version = esco_version(folder, version)
    data = path.read_bytes()
    if len(data) > MAX_CSV_BYTES:
        raise SourceError(f"{path}: {len(data) >> 20} MiB, over the {MAX_CSV_BYTES >> 20} MiB an occupations file may "
                          "hold; is this ESCO's occupations file?")
    try:
        text = data.decode("utf-8-sig")  # ESCO's files may start with a byte-order mark
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise SourceError(f"{path}:{line}: not UTF-8 ({exc.reason}); ESCO's CSV files are UTF-8: download the file "
                          "again") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise SourceError(f"{path}:1: empty file; expected ESCO's occupations CSV (header {', '.join(REQUIRED_COLUMNS)}, ...)") from None
    except csv.Error as exc:
        raise SourceError(f"{path}:1: not CSV ({exc})") from None
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise SourceError(f"{path}:1: missing column(s) {', '.join(missing)}; the header is {', '.join(header)[:200]}; "
                          f"expected ESCO's occupations CSV ({', '.join(REQUIRED_COLUMNS)}, ...)")
    col = {c: header.index(c) for c in REQUIRED_COLUMNS}
    seen: dict[str, int] = {}
    out = []
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise SourceError(f"{path}:{start}: malformed CSV record ({exc}); download the file again") from None
        line, start = start, reader.line_num + 1
        if not any(cell.strip() for cell in row):
            continue  # a blank line between records is no record
        if len(row) != len(header):
            raise SourceError(f"{path}:{line}: {len(row)} fields, the header has {len(header)}; the file is damaged "
                              "(download it again)")
        uri, preferred = row[col["conceptUri"]].strip(), row[col["preferredLabel"]].strip()
        if not uri:
            raise SourceError(f"{path}:{line}: empty conceptUri; every occupation needs its URI")
        if uri in seen:
            raise SourceError(f"{path}:{line}: conceptUri {uri} repeats line {seen[uri]}; one record per occupation "
                              "(a concatenated or damaged file?)")
        seen[uri] = line
        if not preferred:
            raise SourceError(f"{path}:{line}: empty preferredLabel for {uri}; every ESCO occupation has one "
                              "(a damaged file?)")
        alternatives = tuple(a.strip() for a in row[col["altLabels"]].splitlines() if a.strip())
        out.append(Occupation(uri, line, preferred, alternatives))
    if not out:
        raise SourceError(f"{path}: no occupation; expected ESCO's occupations CSV")
    sha = sha256_of(path)
    return EscoFile(path, lang, version, sha, tuple(out), "csv", {path.name: sha}, "ESCO's CSV download")


# --- MELO's layout: ESCO's labels as the MELO benchmark publishes them (docs/esco.md "Two layouts") ----------
# Retyk et al. 2024, public repository Avature/melo-benchmark, MIT (the labels ESCO's). Per language one processed
# dataset, data/processed/melo/<country>_q_<lang>_c_<lang>/: corpus_elements.tsv (``<key>\t<label>``, every
# preferred ``_000`` and alternative label of every occupation and ISCO group) and concept_mapping.tsv
# (``<key>\t<ESCO URI>``). Each dataset was built from one ESCO version, which upstream's
# src/melo_benchmark/data_processing/dataset_builder.py (SUPPORTED_CROSSWALKS, same commit) names: that is the
# version recorded. The SHA-256s were measured from the commit (git show <commit>:<path>), equal to the copy in
# ../shared/data/melo. One dataset per language, its own country's where there are two (de: deu not aut, fr: fra
# not bel, nl: nld not bel).
MELO_LAYOUT = "melo"
MELO_FILES = ("corpus_elements.tsv", "concept_mapping.tsv")
MELO = {
    "repository": "Avature/melo-benchmark",
    "commit": "014982fef0abf5149b16e75b1043bd286ae4c98f",
    "base_url": "https://raw.githubusercontent.com/Avature/melo-benchmark",
    "path": "data/processed/melo",
    "licence": "MIT (the MELO benchmark); the labels are ESCO's",
    "datasets": {
        "de": {"folder": "deu_q_de_c_de", "esco_version": "v1.0.3", "files": {
            "corpus_elements.tsv": "f7685858da8471b65914c43f914ffdfc2df0fed92b3ee8402afa7aafaa56a702",
            "concept_mapping.tsv": "77c7e52fbd3fe4073cd00a3ac4ea9126395109af5aa7294dd2b90e90a6f17768"}},
        "es": {"folder": "esp_q_es_c_es", "esco_version": "v1.0.8", "files": {
            "corpus_elements.tsv": "14cf601ce1972a51ceecf7c36b704df79e22d5db660174dd8243cedc49b70f63",
            "concept_mapping.tsv": "a921a7711e5831f5062b44153b46cd3f3f42b55326e338b1f2a1e81b53cc4588"}},
        "fr": {"folder": "fra_q_fr_c_fr", "esco_version": "v1.0.9", "files": {
            "corpus_elements.tsv": "3d62ebce34031ef7227e208940fdc074dda7f4179a261ed96e104d6dd8012108",
            "concept_mapping.tsv": "5223da51ccf3ee6c17cee24746ec6c347bd754e9bf4688534aecc4fa9c982b84"}},
        "it": {"folder": "ita_q_it_c_it", "esco_version": "v1.0.8", "files": {
            "corpus_elements.tsv": "c7214d5362a1a05706e0b5273ac60def83af99af6fd56c8eff8c268c2594f0af",
            "concept_mapping.tsv": "ac1df577a60108056b1e5ba88abdd9e79361361be41e679ca96bb542ee174f2f"}},
        "pt": {"folder": "prt_q_pt_c_pt", "esco_version": "v1.0.3", "files": {
            "corpus_elements.tsv": "df69cbaf4ae40efdf45a9fd53c59fa1d62a599183e61e5da30d4ccec37758b5f",
            "concept_mapping.tsv": "e33aea07a782e4ad89903ca8edac32dc889d765ddeaee79e75c2d1231ee546d4"}},
        "nl": {"folder": "nld_q_nl_c_nl", "esco_version": "v1.0.3", "files": {
            "corpus_elements.tsv": "3719b20cd1dcc66b02442732d7e3e4ba5b0ad27f5c1efd985e16d3b9661e3c5d",
            "concept_mapping.tsv": "b0891ca5dfe839f9e751096510ac9edbeb259e4297f62646153bd15cba60ecf1"}},
        "pl": {"folder": "pol_q_pl_c_pl", "esco_version": "v1.0.3", "files": {
            "corpus_elements.tsv": "1fd84fe61f142a139e16946d31bbbbb93bf54804a5d6887f9d88301707347079",
            "concept_mapping.tsv": "ba010d963ad05f4afb72045c479f15c5492857c4395be89ed5dcdfbf0ded815b"}},
        "en": {"folder": "usa_q_en_c_en", "esco_version": "v1.1.0", "files": {
            "corpus_elements.tsv": "afe1a64350ff5538e63043bdda08b8bc8d6bebc23f41946f83ec322df9c00ead",
            "concept_mapping.tsv": "d6389b32d09ccc220fbcc6f28d737d0e76f41b9b7090d59c405b87265d5f3815"}},
    },
}
MELO_ENGLISH = "en"  # the dataset of ESCO's English labels, which the job-title dataset's titles are matched to
ENV_MELO_DIR = "GJT_MELO_DIR"  # a MELO copy: the folder holding processed/melo/ (annotation/review.py reads it too)
DEFAULT_MELO_DIR = REPO_ROOT.parent / "shared" / "data" / "melo"
MAX_MELO_BYTES = 8 << 20  # the largest pinned file is 3.0 MB (English concept_mapping.tsv)
_ESCO_URI = "http://data.europa.eu/esco/"
_OCCUPATION_URI = _ESCO_URI + "occupation/"


def melo_dataset(root: Path, lang: str) -> Path:
    """The folder of ``lang``'s pinned MELO dataset inside a MELO copy ``root``."""
    return Path(root) / "processed" / "melo" / _melo_entry(lang)["folder"]


def _melo_entry(lang: str) -> dict:
    entry = MELO["datasets"].get(lang)
    if entry is None:
        raise SourceError(f"MELO: no pinned dataset for {lang!r}; pinned: {', '.join(MELO['datasets'])} (ESCO's other "
                          "languages: give ESCO's CSV download with --esco DIR)")
    return entry


def melo_cache_dir() -> Path:
    """Where the pinned MELO files are downloaded when no copy is here: the user cache, by commit."""
    from builder.source import user_cache_root

    return user_cache_root() / "melo" / MELO["repository"].replace("/", "+") / MELO["commit"]


def _melo_complete(root: Path, lang: str) -> bool:
    folder = melo_dataset(root, lang)
    return all((folder / name).is_file() and sha256_of(folder / name) == sha
               for name, sha in _melo_entry(lang)["files"].items())


def download_melo(root: Path, lang: str, base_url: str | None = None, timeout_s: float = 60.0) -> Path:
    """``lang``'s two pinned MELO files into the copy ``root`` (its processed/melo/<folder>/): a file there with its
    SHA-256 is kept, another is fetched from ``<base_url>/<commit>/data/processed/melo/<folder>/<name>`` and written
    only when its SHA-256 matches (builder.source.fetch_pinned); a file there with other bytes is refused."""
    from builder.source import fetch_pinned

    entry = _melo_entry(lang)
    base = (base_url or MELO["base_url"]).rstrip("/")
    folder = melo_dataset(root, lang)
    for name, sha in entry["files"].items():
        target = folder / name
        if target.is_file():
            if sha256_of(target) == sha:
                continue
            raise SourceError(f"{target}: already there and not the pinned MELO file (SHA-256 {sha256_of(target)}, "
                              f"pinned {sha}); delete it to download it again, or set ${ENV_MELO_DIR} to a good copy")
        fetch_pinned(f"{base}/{MELO['commit']}/{MELO['path']}/{entry['folder']}/{name}", sha, target, timeout_s,
                     local_copy="pass --esco DIR", local_copy_env=f"set ${ENV_MELO_DIR}", max_bytes=MAX_MELO_BYTES)
    return root


def resolve_melo(lang: str, base_url: str | None = None) -> Path:
    """The MELO copy to read, as the English source is found: $GJT_MELO_DIR, else ../shared/data/melo, else the
    user cache, where ``lang``'s pinned files are downloaded (and checked) the first time they are needed."""
    given = os.environ.get(ENV_MELO_DIR)
    if given:
        return Path(given)
    if DEFAULT_MELO_DIR.is_dir():
        return DEFAULT_MELO_DIR
    root = melo_cache_dir()
    if not _melo_complete(root, lang):
        print(f"ESCO labels (MELO) not found locally: downloading {lang} from {MELO['repository']}@"
              f"{MELO['commit'][:12]} into {root}", file=sys.stderr)
        download_melo(root, lang, base_url)
    return root


def is_melo_copy(folder: Path) -> bool:
    return (Path(folder) / "processed" / "melo").is_dir()


def _melo_lines(path: Path) -> list[tuple[int, str, str]]:
    """(line, key, value) of one MELO file, checked: a missing or cut-short file, a line without exactly one tab, an
    empty key or value, a repeated key are one SourceError naming the file and line."""
    from builder.source import read_lines

    if not path.is_file():
        raise SourceError(f"{path}: missing; a MELO dataset folder holds {' and '.join(MELO_FILES)} (fetch the folder "
                          f"again from {MELO['repository']}@{MELO['commit'][:12]}, or set ${ENV_MELO_DIR})")
    if path.stat().st_size > MAX_MELO_BYTES:
        raise SourceError(f"{path}: {path.stat().st_size >> 20} MiB, over the {MAX_MELO_BYTES >> 20} MiB a MELO file "
                          "may hold; is this MELO's file?")
    lines = read_lines(path)
    if not lines:
        raise SourceError(f"{path}:1: empty file; expected MELO's <key><TAB><value> lines")
    with open(path, "rb") as fh:
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) != b"\n":  # every MELO file ends with a newline: a last line without one was cut
            raise SourceError(f"{path}:{len(lines)}: the last line has no line end: the file is cut short (a "
                              "truncated copy?); fetch it again")
    out, seen = [], {}
    for n, line in enumerate(lines, 1):
        parts = line.split("\t")
        if len(parts) != 2:
            raise SourceError(f"{path}:{n}: {len(parts)} tab-separated fields, MELO's lines have 2 (<key><TAB><value>): "
                              "a stray tab, or a damaged line; fetch the file again")
        key, value = parts[0].strip(), parts[1].strip()
        if not key or not value:
            raise SourceError(f"{path}:{n}: empty {'key' if not key else 'value'}; every line is <key><TAB><value>")
        if key in seen:
            raise SourceError(f"{path}:{n}: key {key} repeats line {seen[key]}; one line per key (a damaged file?)")
        seen[key] = n
        out.append((n, key, value))
    return out


def read_melo(root: Path, lang: str, version: str | None = None) -> EscoFile:
    """``lang``'s occupations from the MELO copy ``root`` (ISCO groups left out), checked line by line, then the
    files' SHA-256s against the pins (the recorded ESCO version is the pinned dataset's, so other bytes are
    refused: a tampered or another MELO's file has no known version)."""
    entry = _melo_entry(lang)
    if version and version != entry["esco_version"]:
        raise SourceError(f"--esco-version {version}: MELO's {entry['folder']} was built from ESCO "
                          f"{entry['esco_version']} (upstream dataset_builder.py); the version is the dataset's, "
                          "give --esco-version only with ESCO's CSV download")
    folder = melo_dataset(root, lang)
    if not folder.is_dir():
        raise SourceError(f"{folder}: no such folder; a MELO copy holds processed/melo/{entry['folder']}/ (fetch it "
                          f"from {MELO['repository']}@{MELO['commit'][:12]}, or set ${ENV_MELO_DIR})")
    labels_path, mapping_path = folder / MELO_FILES[0], folder / MELO_FILES[1]
    out = melo_occupations(folder, lang)
    files = {}
    for path in (labels_path, mapping_path):
        got, pinned = sha256_of(path), entry["files"][path.name]
        if got != pinned:
            raise SourceError(f"{path}: SHA-256 {got} is not the pinned {pinned} ({MELO['repository']}@"
                              f"{MELO['commit'][:12]}); the file is damaged or from another MELO version, whose ESCO "
                              "version is not known: fetch it again")
        files[f"{entry['folder']}/{path.name}"] = got
    return EscoFile(labels_path, lang, entry["esco_version"], files[f"{entry['folder']}/{labels_path.name}"],
                    tuple(out), MELO_LAYOUT, files,
                    f"MELO benchmark {MELO['repository']}@{MELO['commit'][:12]} {entry['folder']} ({MELO['licence']})")


def melo_occupations(folder: Path, lang: str) -> list[Occupation]:
    """The occupations of one MELO dataset folder (ISCO groups left out), in file order, checked line by line but
    not against a pin: ``read_melo`` adds the pin; the horizon (languages/horizon.yaml) counts the datasets of
    languages without a pack, which are not pinned."""
    labels_path, mapping_path = Path(folder) / MELO_FILES[0], Path(folder) / MELO_FILES[1]
    labels, mapping = _melo_lines(labels_path), _melo_lines(mapping_path)
    key_shape = re.compile(rf"[A-Za-z0-9]+_{re.escape(lang)}_\d+")
    uri_of: dict[str, str] = {}
    for n, key, uri in mapping:
        if not uri.startswith(_ESCO_URI):
            raise SourceError(f"{mapping_path}:{n}: key {key} maps to {uri[:80]!r}, not an ESCO URI ({_ESCO_URI}...)")
        uri_of[key] = uri
    grouped: dict[str, dict] = {}
    for n, key, label in labels:
        if not key_shape.fullmatch(key):
            raise SourceError(f"{labels_path}:{n}: key {key!r} is not MELO's <concept>_{lang}_<n>; is this the {lang} "
                              "dataset?")
        uri = uri_of.pop(key, None)
        if uri is None:
            raise SourceError(f"{labels_path}:{n}: key {key} has no URI in {mapping_path.name}; the two files do not "
                              "belong together (a truncated or damaged mapping?)")
        if not uri.startswith(_OCCUPATION_URI):
            continue  # an ISCO group: a class of occupations, not an occupation's label
        occ = grouped.setdefault(uri, {"first": n, "line": None, "preferred": None, "alternatives": []})
        if key.endswith("_000"):
            occ["line"], occ["preferred"] = n, label
        else:
            occ["alternatives"].append(label)
    if uri_of:
        key = next(iter(uri_of))
        line = next(n for n, k, _ in mapping if k == key)
        raise SourceError(f"{mapping_path}:{line}: key {key} has no label in {labels_path.name}; the two files do not "
                          "belong together (a truncated labels file?)")
    out = []
    for uri, occ in grouped.items():
        if occ["preferred"] is None:
            raise SourceError(f"{labels_path}:{occ['first']}: occupation {uri} has no preferred label (no _000 key "
                              "among its labels); a damaged file?")
        out.append(Occupation(uri, occ["line"], occ["preferred"], tuple(occ["alternatives"])))
    if not out:
        raise SourceError(f"{labels_path}: no occupation; expected MELO's ESCO labels")
    out.sort(key=lambda o: o.line)
    return out


def preferred_dual_form(occupations) -> int:
    """How many preferred labels are written in dual form (a "/" between two forms, *Altenpfleger/Altenpflegerin*):
    the count stats.json and docs/esco.md give per language."""
    return sum("/" in o.preferred for o in occupations)


def load_esco(folder: Path | None, lang: str, version: str | None = None, base_url: str | None = None) -> EscoFile:
    """One language's occupations: from ``folder`` in its layout (a MELO copy, holding processed/melo/, or ESCO's
    CSV download), else from MELO found as ``resolve_melo`` finds it."""
    if folder is None:
        return read_melo(resolve_melo(lang, base_url), lang, version)
    if is_melo_copy(folder):
        return read_melo(folder, lang, version)
    if (Path(folder) / MELO_FILES[0]).is_file():  # one dataset folder of a MELO copy, not the copy
        raise SourceError(f"{folder}: a MELO dataset folder; give the MELO copy, the folder holding processed/melo/ "
                          "(its dataset of each language is pinned)")
    return read_occupations(folder, lang, version)


def dual_sides(label: str) -> tuple[list[str], str | None]:
    """The forms a label writes: one, or the two sides of a dual form (*director técnico/directora técnica*;
    *comprador/compradora de café verde*, whose first side takes the second's words after its head). A side
    repeated is written once (ESCO has *X/Y/X*); more than two distinct sides is no dual form: (forms, problem)."""
    if "/" not in label:
        return [label], None
    sides = list(dict.fromkeys(s.strip() for s in label.split("/") if s.strip()))
    if len(sides) == 1:
        return sides, None
    if len(sides) > 2:
        return [], "more_than_two_sides"
    a, b = sides
    wa, wb = a.split(), b.split()
    if len(wa) == 1 and len(wb) > 1:
        a = " ".join([wa[0], *wb[1:]])
    return [a, b], None


def _candidates(a: str, b: str) -> bool:
    """Two labels that may be one occupation's two forms: the same number of words, and each word that differs
    shares its first letters with its counterpart (the notebook's masculine->feminine ending, before the gender
    layer checks it)."""
    wa, wb = a.split(), b.split()
    if len(wa) != len(wb) or wa == wb:
        return False
    return all(x == y or x[:3].lower() == y[:3].lower() for x, y in zip(wa, wb))


@dataclass
class _Unit:
    """One row of the processed frame (builder.postprocess.build_items reads it): a pair or a neutral label."""

    source_id: str
    source_text: str
    role: str  # queries | corpus
    verdict: Verdict  # GENDERED | NEUTRAL
    masculine: str | None
    feminine: str | None
    check: tuple[str, str]
    method: str
    flags: list[str]


@dataclass
class _Dropped:
    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, reason: str, what: str) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1
        shown = self.examples.setdefault(reason, [])
        if len(shown) < EXAMPLES:
            shown.append(what)


class _Judge:
    """The gender layer's word on ESCO's labels: a confirmed masculine/feminine pair, a common-gender label."""

    def __init__(self, lang, cache: Path | None):
        from builder.layers import keeps_case, layer_info, make_layer

        self.layer = make_layer(lang, cache)
        self.keeps_case = keeps_case(lang)  # German tells nouns from adjectives by their capital
        self.info = layer_info(lang)

    def text(self, label: str) -> str:
        from builder.strip import normalise

        return label if self.keeps_case else normalise(label)

    def prepare(self, labels: list[str]) -> None:
        """One batch of lexicon and word-list lookups for every word the decisions will ask about."""
        self.layer.prepare_labels([self.text(x) for x in labels])

    def _method(self, d) -> str:
        from builder.routes import layer_method

        return layer_method(self.layer, d.method)

    def pair(self, a: str, b: str):
        """(masculine, feminine, method, flags) when the layer confirms a and b as one title's two forms (either
        order), else (None, reason)."""
        from builder.strip import normalise

        first = None
        for m, f in ((a, b), (b, a)):
            d = self.layer.decide(self.text(m), self.text(f), "")
            if d.verdict == Verdict.GENDERED and d.masculine and d.feminine and \
                    {normalise(d.masculine), normalise(d.feminine)} == {normalise(a), normalise(b)}:
                return normalise(d.masculine), normalise(d.feminine), self._method(d), list(d.flags)
            first = first or d
        unknown = "unknown_word" in first.flags or "unknown_head" in first.flags
        reason = ("unknown_word" if unknown else "not_a_person" if "not_a_person_noun" in first.flags
                  else "neutral_head" if first.verdict == Verdict.NEUTRAL else "not_the_inflection")
        return None, reason

    def neutral(self, label: str):
        """(text, method) of a common-gender label (earned as in the builder: a head the resources know)."""
        from builder.routes import earned
        from builder.strip import normalise

        d = earned(self.layer.decide(self.text(label), None, ""))
        if d.verdict == Verdict.NEUTRAL and d.neutral:
            return normalise(d.neutral), self._method(d)
        return None, d.verdict


def _pair_units(labels: list[str], judge: _Judge, occ: Occupation, role: str, start: int,
                dropped: _Dropped) -> list[_Unit]:
    """The labels of one occupation as units: confirmed pairs first (greedily, in ESCO's order), then the
    common-gender labels; a gendered label left without a partner is dropped."""
    from builder.strip import normalise

    units, used = [], set()
    for i, a in enumerate(labels):
        if i in used:
            continue
        for j in range(i + 1, len(labels)):
            if j in used or not _candidates(normalise(a), normalise(labels[j])):
                continue
            found = judge.pair(a, labels[j])
            if found[0] is None:
                dropped.add(f"corpus_candidate:{found[1]}", f"{a} / {labels[j]}")
                continue
            m, f, method, flags = found
            units.append(_Unit(f"{occ.short_id}#{start + len(units)}", occ.preferred, role, Verdict.GENDERED, m, f,
                               ("masculine", "feminine"), method, ["esco_alternative_labels", *flags]))
            used |= {i, j}
            break
    for i, a in enumerate(labels):
        if i in used:
            continue
        text, method = judge.neutral(a)
        if text is None:
            dropped.add(f"corpus_label:{_single_reason(method)}", a)
            continue
        units.append(_Unit(f"{occ.short_id}#{start + len(units)}", occ.preferred, role, Verdict.NEUTRAL, text, text,
                           ("neutral", "neutral"), method, ["esco_common_gender"]))
    return units


def _single_reason(verdict: str) -> str:
    """Why a label alone gives no item: gendered with no confirmed partner among its occupation's labels, or
    what the layer could not vouch for."""
    return "no_partner" if verdict in PAIR_VERDICTS else verdict


def _query_unit(occ: Occupation, judge: _Judge, alternatives: list[str], dropped: _Dropped) -> _Unit | None:
    """The occupation's query: the pair of its preferred label, or its common-gender preferred label."""
    sides, problem = dual_sides(occ.preferred)
    if problem:
        dropped.add(f"query:{problem}", occ.preferred)
        return None
    if len(sides) == 2:
        found = judge.pair(*sides)
        if found[0] is None:
            dropped.add(f"query:{found[1]}", occ.preferred)
            return None
        m, f, method, flags = found
        return _Unit(occ.short_id, occ.preferred, "queries", Verdict.GENDERED, m, f, ("masculine", "feminine"), method,
                     ["esco_dual_form", *flags])
    text, method = judge.neutral(sides[0])
    if text is not None:
        return _Unit(occ.short_id, occ.preferred, "queries", Verdict.NEUTRAL, text, text, ("neutral", "neutral"), method,
                     ["esco_common_gender"])
    from builder.strip import normalise

    base = normalise(sides[0])
    for alt in alternatives:
        if _candidates(base, normalise(alt)):
            found = judge.pair(sides[0], alt)
            if found[0] is not None:
                m, f, method, flags = found
                return _Unit(occ.short_id, occ.preferred, "queries", Verdict.GENDERED, m, f, ("masculine", "feminine"),
                             method, ["esco_alternative_labels", *flags])
    dropped.add("query:no_confirmed_partner", occ.preferred)
    return None


def esco_units(esco: EscoFile, judge: _Judge, corpus_design: str) -> tuple[list[_Unit], list[tuple[str, str]], _Dropped]:
    """Units of every occupation, the (query source id, document source id) relevant pairs, the drops."""
    from builder.strip import normalise

    dropped = _Dropped()
    # The alternatives' drops count only where they would have been corpus documents.
    label_drops = dropped if corpus_design == "labels" else _Dropped()
    forms = {occ.uri: [s for a in occ.alternatives for s in _forms(a, label_drops)] for occ in esco.occupations}
    judge.prepare([s for occ in esco.occupations for s in dual_sides(occ.preferred)[0]]
                  + [s for v in forms.values() for s in v])
    units, relevant = [], []
    for occ in esco.occupations:
        query = _query_unit(occ, judge, forms[occ.uri], dropped)
        if query is not None:
            units.append(query)
        if corpus_design == "preferred":
            doc = _Unit(f"{occ.short_id}#0", occ.preferred, "corpus", Verdict.NEUTRAL, normalise(occ.preferred),
                        normalise(occ.preferred), ("neutral", "neutral"), "esco:preferred-label", ["esco_preferred_label"])
            docs = [doc]
        else:
            own = {normalise(occ.preferred)} | ({query.masculine, query.feminine} if query else set())
            rest = list(dict.fromkeys(a for a in forms[occ.uri] if normalise(a) not in own))
            docs = _pair_units(rest, judge, occ, "corpus", 0, dropped)
        units += docs
        if query is not None:
            relevant += [(query.source_id, d.source_id) for d in docs]
    return units, relevant, dropped


def _forms(label: str, dropped: _Dropped) -> list[str]:
    sides, problem = dual_sides(label)
    if problem:
        dropped.add(f"corpus_label:{problem}", label)
    return sides


def processed_frame(units: list[_Unit]) -> pl.DataFrame:
    """The units as the rows builder.postprocess.build_items reads (one definition of items, dedup and pair ids)."""
    return pl.DataFrame({
        "source_id": [u.source_id for u in units],
        "source_text": [u.source_text for u in units],
        "in_queries": [u.role == "queries" for u in units],
        "in_corpus": [u.role == "corpus" for u in units],
        "verdict": [u.verdict.value for u in units],  # the word (a list of members would make a pl.Enum column)
        "status": ["machine"] * len(units),
        "flags": [u.flags for u in units],
        "annotators": [[] for _ in units],
        "title_masculine": [u.masculine for u in units],
        "title_feminine": [u.feminine for u in units],
        "check_masculine": [u.check[0] for u in units],
        "check_feminine": [u.check[1] for u in units],
        "check_method_masculine": [u.method for u in units],
        "check_method_feminine": [u.method for u in units],
    }, schema_overrides={"flags": pl.List(pl.String), "annotators": pl.List(pl.String)})


def build_esco(folder: Path | None, lang, out: Path, version: str | None = None, corpus_design: str = "labels",
               cache: Path | None = None, base_url: str | None = None) -> dict:
    """One language's ESCO test set written to ``<out>/<lang>/`` (whole or not at all); returns its stats.json.
    ``folder``: ESCO's CSV download or a MELO copy; None: MELO as ``resolve_melo`` finds it (``load_esco``)."""
    from builder.errors import BuildError
    from builder.postprocess import build_items, derive_qrels
    from languages import resolve

    if corpus_design not in CORPUS_DESIGNS:
        raise BuildError(f"ESCO corpus design {corpus_design!r}; expected one of {', '.join(CORPUS_DESIGNS)}")
    lang = resolve(lang)
    esco = load_esco(Path(folder) if folder is not None else None, lang.code, version, base_url)
    judge = _Judge(lang, cache)
    units, relevant, dropped = esco_units(esco, judge, corpus_design)
    nothing = BuildError(f"{esco.path}: no confirmed pair, corpus document or relevant pair; nothing to test "
                         f"(dropped: {dropped.counts})")
    if not units:  # every record dropped: no frame to build items from (its columns would have no type)
        raise nothing
    processed = processed_frame(units)
    provenance = f"{SOURCE}:{esco.version}:{lang.code}"
    queries = build_items(processed, "queries", provenance)
    corpus = build_items(processed, "corpus", provenance)
    qrels, info = derive_qrels(queries, corpus, relevant)
    if queries.height == 0 or corpus.height == 0 or qrels.height == 0:
        raise nothing
    query_units = [u for u in units if u.role == "queries"]
    with_relevant = {q for q, _ in relevant}
    stats = {
        "lang": lang.code,
        "source": SOURCE,
        "route": SOURCE,
        "translator": None,
        "translator_version": None,
        "templates": {},
        "esco": {
            "version": esco.version,
            "layout": esco.layout,
            "origin": esco.origin,
            "file": esco.path.name,
            "sha256": esco.sha256,
            "files": esco.files,
            "occupations": len(esco.occupations),
            "preferred_dual_form": preferred_dual_form(esco.occupations),
            "query_pairs": sum(u.verdict == Verdict.GENDERED for u in query_units),
            "query_neutral": sum(u.verdict == Verdict.NEUTRAL for u in query_units),
            "queries_without_relevant": len(query_units) - len(with_relevant),
            "corpus_design": corpus_design,
            "corpus_design_meaning": CORPUS_DESIGNS[corpus_design],
            "relevance": RELEVANCE,
            "dropped": dict(sorted(dropped.counts.items())),
            "dropped_examples": dict(sorted(dropped.examples.items())),
            "licence": LICENCE,
        },
        "self_match_policy": "keep_derived",
        "self_match_policy_meaning": "queries and documents carry distinct ESCO ids (<uuid>, <uuid>#<k>): eval's "
                                     "self-match rule drops nothing; a query's own texts are never its documents",
        "queries": table1_counts(queries),
        "corpus": table1_counts(corpus),
        "qrels": qrels.height,
        "qrels_identical_text": info["identical_text_pairs"],
        "verdicts": dict(sorted(processed.group_by("verdict").len().iter_rows())),
        "needs_review": 0,
        "gender_layer": judge.info,
    }
    write_testset(TestSet(lang=lang.code, queries=queries, corpus=corpus, qrels=qrels, stats=stats), out)
    return stats


# As issue 24 states it, with the Commission's open licence under that decision; docs/esco.md says what was and was
# not checked (ESCO's own legal notice was not reachable from here).
LICENCE = ("ESCO is published by the European Commission. Its reuse is governed by Commission Decision 2011/833/EU "
           "on the reuse of Commission documents, under which the Commission adopted CC BY 4.0 as its open licence "
           "(Decision C(2019) 1655): reuse is allowed provided the source is acknowledged. This set is "
           "derived from ESCO (European Skills, Competences, Qualifications and Occupations), © European Union, "
           "https://esco.ec.europa.eu")
RELEVANCE = ("one level: a query's relevant documents are the labels of its own occupation (URI). ESCO's broader/narrower "
             "relation between occupations (broaderRelationsOccPillar.csv) is not used: eval's relevance is binary "
             "(any level above 0 counts in full), so a looser second level would count a neighbouring occupation as "
             "fully relevant")


def describe_esco(st: dict, out) -> str:
    e = st["esco"]
    return (f"{st['lang']}: ESCO {e['version']} ({e['occupations']} occupations, {e['preferred_dual_form']} preferred "
            f"labels in dual form): {e['query_pairs']} query pairs and {e['query_neutral']} neutral queries confirmed "
            f"by {st['gender_layer'].get('lexicon', st['gender_layer'].get('method'))}; corpus "
            f"({e['corpus_design']}) {st['corpus']['pairs']} pairs, {st['corpus']['neutral']} neutral; {st['qrels']} "
            f"qrels; {e['queries_without_relevant']} queries without a relevant document; dropped "
            f"{sum(e['dropped'].values())} ({', '.join(f'{k} {v}' for k, v in e['dropped'].items())}); written to {out}")
