"""The gendered test-set format: schema, reader and writer.

This is the one contract between the parts: the builder writes it, annotation and releases read and
rewrite it, eval reads it. It depends only on polars, so researchers can read a release without the
builder's world. The format is documented in docs/FORMAT.md (the dataset card reuses that text).

A test set for one language is a folder ``<root>/<lang>/`` with:

- ``queries.parquet`` and ``corpus.parquet``: one row per unique title per gender (ITEM_SCHEMA);
- ``qrels.tsv``: trec qrels ``query_id 0 doc_id 1`` over item ids of every gender;
- ``stats.json``: the paper's Table-1 counts (``table1_counts``) and the gender-check counts.

A release root (``python -m releases make``) adds a ``manifest.json`` whose ``version`` names the test set
(``read_release_version``; releases/manifest.py writes and verifies it); a family folder of a release
(``<release>/esco``, ``RELEASE_FAMILIES``) is a root too, named by that same manifest. Results name the test set they
scored by ``testset_version``.

A set is written whole or not at all: into a hidden sibling folder, then swapped into place in one
atomic step (``config.files.write_folder_atomically``, the toolkit's one writer of whole folders).
``stats.json`` records the SHA-256 of every other file of the set and a build id derived from them
(``set_integrity``); the reader refuses a folder whose files come from different builds, and a set with no
query, no corpus title or no qrel.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from config.files import write_folder_atomically  # the one whole-or-nothing folder writer (bottom, no project import)

MASCULINE = "masculine"
FEMININE = "feminine"
NEUTRAL = "neutral"
GENDERS = (MASCULINE, FEMININE, NEUTRAL)
# Extra query forms of a pair (docs/FORMAT.md "Forms"): the doublet job ads write (ingeniero/a) and the neutral
# neomorpheme (ingeniere). Their items have gender INCLUSIVE: in neither the masculine nor the feminine corpus.
INCLUSIVE = "inclusive"
DOUBLET = "doublet"
NEOMORPHEME = "neomorpheme"
EXTRA_FORMS = (DOUBLET, NEOMORPHEME)
FORMS = GENDERS + EXTRA_FORMS
ITEM_GENDERS = GENDERS + (INCLUSIVE,)

STATUS_MACHINE = "machine"
STATUS_CORRECTED = "corrected"
# a term rule changed the build's text (docs/FORMAT.md "Term rules"); the maintainers' review read it (docs/review.md)
STATUS_RULE = "rule"
STATUS_REVIEWED = "reviewed"
STATUSES = (STATUS_MACHINE, STATUS_CORRECTED, STATUS_RULE, STATUS_REVIEWED)
# Where an item's text comes from, one kind per item (``item_origins``): the given translation as it is, a form
# the gender layer made from it or from the MT output, the MT output as it is, an ESCO label, a term rule, a
# person's Argilla correction, the maintainers' review.
ORIGINS = ("given", "gender_layer", "machine_translation", "esco", "term_rule", "person", "review")

ITEM_SCHEMA: dict[str, pl.DataType] = {
    # Stable item id: no whitespace, unique within its file, the same for the same gender and text.
    "id": pl.String,
    # Lowercased title without the template.
    "text": pl.String,
    # masculine | feminine | neutral (neutral items belong to both corpora).
    "gender": pl.String,
    # masculine | feminine | neutral (= gender) | doublet | neomorpheme (gender inclusive). Sets written before
    # the column existed are read with form = gender.
    "form": pl.String,
    # Links the forms of one occupation: symmetry compares every masculine x feminine item sharing it.
    "pair_id": pl.String,
    # English ids and titles this item was translated from (several after deduplication).
    "source_ids": pl.List(pl.String),
    "source_texts": pl.List(pl.String),
    # The grammatical-gender check: what it found, which method decided, whether it agrees with `gender`.
    "check_gender": pl.String,
    "check_method": pl.String,
    "check_ok": pl.Boolean,
    # Problems found while building (e.g. "echo", "template_not_stripped", "uninflected_feminine").
    "flags": pl.List(pl.String),
    # machine | rule (a term rule changed it) | corrected (a person's Argilla correction) | reviewed (the
    # maintainers' review, docs/review.md).
    "status": pl.String,
    # Provenance of the text: translator name and version, or "human:<annotator>".
    "provenance": pl.String,
}

QRELS_COLUMNS = ("query_id", "iteration", "doc_id", "relevance")
# The release manifest at the root of a release folder (written and verified by releases/manifest.py).
MANIFEST_NAME = "manifest.json"
# The second families of test sets a release carries in a folder of their own beside its languages
# (``<release>/esco/<lang>/``, the same files): a test-set root of its own, named by the release's manifest.
ESCO_FAMILY = "esco"  # ESCO's occupation labels (builder/esco.py, docs/esco.md)
RELEASE_FAMILIES = (ESCO_FAMILY,)
# stats.json key holding {"build_id": ..., "sha256": {file name: digest}} for the files of one build.
INTEGRITY_KEY = "set_integrity"
REQUIRED_FILES = ("queries.parquet", "corpus.parquet", "qrels.tsv")


class TestSetError(ValueError):
    """A test set on disk does not follow the format; the message names the file and what is wrong."""

    __test__ = False  # not a pytest test class, despite the name


@dataclass(frozen=True)
class TestSet:
    __test__ = False  # not a pytest test class, despite the name

    lang: str
    queries: pl.DataFrame
    corpus: pl.DataFrame
    qrels: pl.DataFrame | None  # columns query_id, doc_id, relevance (int); None: read from qrels_file as needed
    stats: dict
    # The qrels.tsv of a set read with read_testset(..., qrels="stream"): qrels_slices reads it a piece at a time,
    # and checks it against the SHA-256 stats.json records for it (None: the set records none).
    qrels_file: Path | None = None
    qrels_sha256: str | None = None

    def qrels_slices(self, lines: int = 1 << 20):
        """The qrels a slice at a time, as frames of QRELS_SCHEMA's columns: slices of ``lines`` rows of the frame
        held, or ``qrels_file`` parsed 8 MiB at a time, each piece checked as ``read_testset`` checks the whole
        file (TestSetError naming the file, and the line or the ids), so no more than one piece is ever held."""
        if self.qrels is not None:
            for start in range(0, self.qrels.height, lines):
                yield self.qrels.slice(start, lines)
            return
        if self.qrels_file is None:
            raise TestSetError(f"test set {self.lang}: no qrels (neither a frame nor a qrels.tsv to read)")
        q_ids, d_ids = pl.Enum(self.queries["id"].to_list()), pl.Enum(self.corpus["id"].to_list())
        relevant, digest = 0, hashlib.sha256()
        for frame in qrels_pieces(self.qrels_file, digest):
            _refuse_unknown_ids(self.qrels_file, frame, q_ids, d_ids)
            relevant += int((frame["relevance"] > 0).sum())
            yield frame
        if not relevant:
            raise TestSetError(f"{self.qrels_file}: no relevant pair; a test set needs relevance labels (rebuild the language)")
        if self.qrels_sha256 is not None and digest.hexdigest() != self.qrels_sha256:
            raise TestSetError(_mixed_builds(self.qrels_file, None))

    def corpus_for(self, gender: str) -> pl.DataFrame:
        """The masculine corpus is masculine + neutral titles; the feminine corpus feminine + neutral; the
        ``doublet`` corpus (the variant of params.yaml build.forms.corpus) is the corpus as job ads are written:
        every doublet item, every neutral item, and each masculine or feminine item holding a source id no
        doublet item holds (an occupation named in one gender only, or a pair the rules write no doublet for).
        The doublet corpus is empty for a set built without the variant."""
        if gender == DOUBLET:
            return self._doublet_corpus()
        if gender not in (MASCULINE, FEMININE):
            raise ValueError(f"corpus gender must be {MASCULINE!r}, {FEMININE!r} or {DOUBLET!r}, not {gender!r}")
        return self.corpus.filter(pl.col("gender").is_in([gender, NEUTRAL]))

    def queries_of_form(self, form: str) -> pl.DataFrame:
        """The queries of one form (masculine, feminine, neutral, doublet or neomorpheme)."""
        if form not in FORMS:
            raise ValueError(f"query form must be one of {', '.join(FORMS)}, not {form!r}")
        return self.queries.filter(pl.col("form") == form)

    def _doublet_corpus(self) -> pl.DataFrame:
        doublets = self.corpus.filter(pl.col("form") == DOUBLET)
        if doublets.height == 0:
            return doublets
        covered = set(doublets["source_ids"].explode().to_list())
        rest = self.corpus.filter(
            (pl.col("form") == NEUTRAL)
            | (pl.col("form").is_in([MASCULINE, FEMININE])
               & ~pl.col("source_ids").list.eval(pl.element().is_in(list(covered))).list.all()))
        return pl.concat([doublets, rest]).sort("id")

    def query_pairs(self) -> pl.DataFrame:
        """Every (masculine, feminine) query combination that shares a pair_id: columns pair_id, m_id, f_id."""
        m = self.queries.filter(pl.col("gender") == MASCULINE).select("pair_id", m_id="id")
        f = self.queries.filter(pl.col("gender") == FEMININE).select("pair_id", f_id="id")
        return m.join(f, on="pair_id").sort("pair_id", "m_id", "f_id")


def empty_items() -> pl.DataFrame:
    return pl.DataFrame(schema=ITEM_SCHEMA)


def validate_items(df: pl.DataFrame, where: str, *, exact_types: bool = False) -> pl.DataFrame:
    """Check columns, types and values; return the frame with columns in schema order.

    With ``exact_types`` (a file read back: ``read_testset``) every column of ITEM_SCHEMA it holds must have the
    schema's type (or hold no value at all, type Null): a Struct ``text`` is not cast to strings and scored, an
    integer ``gender`` is refused rather than compared as a string. Frames being written are cast to the schema."""
    df = _schema_types(df, where, exact_types)
    if "form" not in df.columns and "gender" in df.columns:
        # A set written before the form column: every item is its gender's form.
        if df.filter(pl.col("gender") == INCLUSIVE).height:
            raise TestSetError(f"{where}: items of gender {INCLUSIVE!r} but no 'form' column saying which form they are")
        df = df.with_columns(form=pl.col("gender"))
    elif "form" in df.columns and "gender" in df.columns:
        # Rows made without a form (frames built before the column): the form of a gendered item is its gender.
        df = df.with_columns(form=pl.coalesce("form", pl.when(pl.col("gender").is_in(GENDERS)).then(pl.col("gender"))))
    missing = [c for c in ITEM_SCHEMA if c not in df.columns]
    if missing:
        raise TestSetError(f"{where}: missing column(s) {', '.join(missing)}; expected {list(ITEM_SCHEMA)}")
    df = _schema_types(df.select(list(ITEM_SCHEMA)), where, exact_types)  # form may have been added
    if df.height == 0:
        return df
    problems = []
    for col in ("id", "text", "gender", "pair_id", "status"):
        n_null = df.select(pl.col(col).is_null().sum()).item()
        if n_null:
            problems.append(f"{n_null} row(s) with empty {col!r}")
    empty = df.filter(pl.col("text").str.strip_chars() == "")
    if empty.height:
        problems.append(f"empty text for id(s) {empty['id'].head(5).to_list()}")
    ws = df.filter(pl.col("id").str.contains(r"\s"))
    if ws.height:
        problems.append(f"whitespace in id(s) {ws['id'].head(5).to_list()}")
    dup = df.group_by("id").len().filter(pl.col("len") > 1)
    if dup.height:
        problems.append(f"duplicate id(s) {dup['id'].head(5).to_list()}")
    bad_gender = df.filter(~pl.col("gender").is_in(ITEM_GENDERS))
    if bad_gender.height:
        problems.append(f"unknown gender value(s) {bad_gender['gender'].unique().to_list()[:5]}, expected {ITEM_GENDERS}")
    problems += _form_problems(df)
    bad_status = df.filter(~pl.col("status").is_in(STATUSES))
    if bad_status.height:
        problems.append(f"unknown status value(s) {bad_status['status'].unique().to_list()[:5]}, expected {STATUSES}")
    for g in (MASCULINE, FEMININE):
        side = df.filter(pl.col("gender").is_in([g, NEUTRAL]))
        dup_text = side.group_by("text").len().filter(pl.col("len") > 1)
        if dup_text.height:
            problems.append(f"the {g} corpus repeats text(s) {dup_text['text'].head(5).to_list()}")
    if problems:
        raise TestSetError(f"{where}: " + "; ".join(problems))
    return df


def _schema_types(df: pl.DataFrame, where: str, exact: bool) -> pl.DataFrame:
    """``df`` with the columns of ITEM_SCHEMA it holds of the schema's types: cast, or (``exact``) checked, the
    first column of another type a TestSetError naming it. Columns not in the schema are left as they are."""
    for name, dtype in ITEM_SCHEMA.items():
        if name not in df.columns or df.schema[name] == dtype:
            continue
        found = df.schema[name]
        fix = "; rebuild the language or re-pull the release (docs/FORMAT.md gives the types)" if exact else ""
        if exact and found != pl.Null:
            raise TestSetError(f"{where}: column {name!r} has type {found}, expected {dtype}{fix}")
        try:
            df = df.with_columns(pl.col(name).cast(dtype))
        except Exception:  # polars raises several error types for casts
            raise TestSetError(f"{where}: column {name!r} has type {found}, expected {dtype}{fix}") from None
    return df


def _form_problems(df: pl.DataFrame) -> list[str]:
    """form agrees with gender; an extra-form item belongs to a pair with a masculine or feminine item; the texts
    of one form are unique."""
    problems = []
    bad = df.filter(~pl.col("form").is_in(FORMS) | pl.col("form").is_null())
    if bad.height:
        problems.append(f"unknown form value(s) {bad['form'].unique().to_list()[:5]}, expected {FORMS}")
    mismatch = df.filter(pl.col("form").is_in(FORMS) & pl.when(pl.col("gender") == INCLUSIVE)
                         .then(~pl.col("form").is_in(EXTRA_FORMS)).otherwise(pl.col("form") != pl.col("gender")))
    if mismatch.height:
        problems.append(f"form disagrees with gender for id(s) {mismatch['id'].head(5).to_list()} (form = gender for "
                        f"{', '.join(GENDERS)}; {', '.join(EXTRA_FORMS)} items have gender {INCLUSIVE!r})")
    extra = df.filter(pl.col("form").is_in(EXTRA_FORMS))
    if extra.height:
        paired = set(df.filter(pl.col("gender").is_in([MASCULINE, FEMININE]))["pair_id"].to_list())
        orphan = extra.filter(~pl.col("pair_id").is_in(list(paired)))
        if orphan.height:
            problems.append(f"{orphan['form'][0]} item(s) {orphan['id'].head(5).to_list()} whose pair_id has no "
                            "masculine or feminine item")
        dup = extra.group_by("form", "text").len().filter(pl.col("len") > 1)
        if dup.height:
            problems.append(f"repeated {dup['form'][0]} text(s) {dup['text'].head(5).to_list()}")
    return problems


def read_qrels(path: Path) -> pl.DataFrame:
    """Read trec qrels (``query_id 0 doc_id relevance``, whitespace-separated); errors name the line.

    The ids come back as ``pl.Categorical`` (4 bytes a line; the distinct ids are few: every query and every
    title), relevance as Int64. polars splits the lines (10^7 qrels lines as Python tuples took gigabytes), a
    slice of the file at a time, so reading holds one slice's strings, never the whole file's (as strings, 6.5
    million lines of long ids took 690 MB held and 720 MB at peak; now about 100 MB)."""
    frames = list(qrels_pieces(path))
    if not frames:
        return pl.DataFrame(schema=QRELS_SCHEMA)
    return pl.concat(frames, rechunk=False)


def qrels_pieces(path: Path, digest=None):
    """qrels.tsv as frames of QRELS_SCHEMA, one per ``QRELS_CHUNK_BYTES`` of the file; errors name the line.
    ``digest`` (a hashlib object) is fed the file's bytes as they are read."""
    first_line = 1
    try:
        with open(path, "rb") as fh:
            for chunk in _line_chunks(fh, QRELS_CHUNK_BYTES):
                if digest is not None:
                    digest.update(chunk)
                frame, first_line = _qrels_chunk(path, chunk, first_line)
                yield frame
    except pl.exceptions.PolarsError as exc:  # e.g. a NUL in a line
        raise TestSetError(f"{path}: not a readable qrels text file ({type(exc).__name__}: "
                           f"{str(exc).splitlines()[0]}); rebuild the language or re-pull the release") from None


# The columns read_qrels gives (and the dtypes of TestSet.qrels read from disk).
QRELS_SCHEMA = {"query_id": pl.Categorical, "doc_id": pl.Categorical, "relevance": pl.Int64}
# Bytes of qrels.tsv parsed at a time: what reading holds beyond the compact result is a few times this (polars'
# allocator keeps about 12 times a piece: 8 MiB pieces held about 100 MB more than 2 MiB ones, which parse 1.6x slower).
QRELS_CHUNK_BYTES = 1 << 21


def _line_chunks(fh, size: int):
    """The file in pieces of about ``size`` bytes, each ending at a line end (a longer line: one piece)."""
    rest = b""
    while block := fh.read(size):
        block = rest + block
        cut = block.rfind(b"\n") + 1
        rest = block[cut:]
        if cut:
            yield block[:cut]
    if rest:
        yield rest


def _qrels_chunk(path: Path, chunk: bytes, first_line: int) -> tuple[pl.DataFrame, int]:
    """One piece of qrels.tsv (whole lines, the first numbered ``first_line``) as compact rows, and the number
    of the line after it; the first bad line raises, named by its number."""
    tabbed = _tab_separated_chunk(chunk)
    if tabbed is not None:
        table, n_lines = tabbed
        return table, first_line + n_lines
    return _any_whitespace_chunk(path, chunk, first_line)


def _tab_separated_chunk(chunk: bytes) -> tuple[pl.DataFrame, int] | None:
    """A piece written as write_qrels writes (four tab-separated fields, no blank line, no whitespace inside a
    field, an integer relevance) in one CSV pass, several times faster than splitting each line on whitespace;
    None for anything else, which the general reader then takes (and names the bad line)."""
    n_lines = chunk.count(b"\n") + (not chunk.endswith(b"\n"))
    try:
        table = pl.read_csv(chunk, has_header=False, separator="\t", quote_char=None, encoding="utf8",
                            schema={"query_id": pl.String, "iteration": pl.String, "doc_id": pl.String, "relevance": pl.Int64})
    except pl.exceptions.PolarsError:
        return None
    if table.height != n_lines or table.null_count().sum_horizontal().item() \
            or table.select(pl.any_horizontal(pl.col("query_id", "iteration", "doc_id").str.contains(r"\s")).any()).item():
        return None
    return table.select(pl.col("query_id", "doc_id").cast(pl.Categorical), "relevance"), n_lines


def _any_whitespace_chunk(path: Path, chunk: bytes, first_line: int) -> tuple[pl.DataFrame, int]:
    # One column per line: the separator is a NUL, which no qrels line holds. Bytes that are not UTF-8
    # become U+FFFD, so that such a line is found by its number. Blank lines (empty or whitespace only) are
    # skipped, but counted.
    lines = pl.read_csv(chunk, has_header=False, separator="\x00", quote_char=None, schema={"line": pl.String},
                        encoding="utf8-lossy")
    next_line = first_line + lines.height
    lines = lines.with_row_index("lineno", offset=first_line).filter(pl.col("line").str.contains(r"\S"))
    fields = pl.col("line").str.extract_all(r"\S+")
    bad = (fields.list.len() != 4) | fields.list.get(3, null_on_oob=True).cast(pl.Int64, strict=False).is_null() \
        | pl.col("line").str.contains("\ufffd", literal=True)
    table = lines.select(query_id=fields.list.get(0, null_on_oob=True).cast(pl.Categorical),
                         doc_id=fields.list.get(2, null_on_oob=True).cast(pl.Categorical),
                         relevance=fields.list.get(3, null_on_oob=True).cast(pl.Int64, strict=False), bad=bad)
    if table["bad"].any():
        lineno, line = lines.filter(table["bad"]).row(0)
        parts = line.split()
        if "\ufffd" in line:
            raise TestSetError(f"{path}:{lineno}: not UTF-8 text; write the qrels as UTF-8")
        if len(parts) != 4:
            raise TestSetError(f"{path}:{lineno}: expected 4 fields 'query_id 0 doc_id relevance', got {len(parts)}")
        raise TestSetError(f"{path}:{lineno}: relevance {parts[3]!r} is not an integer")
    return table.drop("bad"), next_line


def write_qrels(qrels: pl.DataFrame, path: Path) -> None:
    qrels = qrels.select(pl.col("query_id", "doc_id").cast(pl.String), "relevance").sort("query_id", "doc_id")
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for q, d, r in qrels.select("query_id", "doc_id", "relevance").iter_rows():
            fh.write(f"{q}\t0\t{d}\t{r}\n")


def read_testset(root: str | Path, lang: str, *, qrels: str = "memory") -> TestSet:
    """Read and validate ``<root>/<lang>/``. Every error names the file and the problem.

    ``qrels="stream"`` leaves qrels.tsv on disk (``TestSet.qrels`` is None): ``TestSet.qrels_slices`` reads and
    checks it a piece at a time, so a reader that needs one pass (eval) never holds the whole qrels."""
    folder = Path(root) / lang
    if not folder.is_dir():
        available = sorted(p.name for p in Path(root).iterdir() if p.is_dir()) if Path(root).is_dir() else []
        raise TestSetError(f"{folder}: no test set for language {lang!r} (found: {available or 'nothing'})")
    parts = {}
    for name in ("queries", "corpus"):
        path = folder / f"{name}.parquet"
        if not path.is_file():
            raise TestSetError(f"{path}: file missing")
        try:
            frame = pl.read_parquet(path)
        except Exception as exc:  # polars raises several error types for unreadable files
            raise TestSetError(
                f"{path}: not a readable Parquet file ({type(exc).__name__}: {exc}); rebuild the language or re-pull the release"
            ) from None
        parts[name] = validate_items(frame, str(path), exact_types=True)
        if parts[name].height == 0:
            raise TestSetError(f"{path}: no items; an empty test set measures nothing (rebuild the language and "
                               "check its translations)")
    qrels_path = folder / "qrels.tsv"
    if not qrels_path.is_file():
        raise TestSetError(f"{qrels_path}: file missing")
    if qrels not in ("memory", "stream"):
        raise ValueError(f"read_testset: qrels must be 'memory' or 'stream', not {qrels!r}")
    frame = None
    if qrels == "memory":
        frame = read_qrels(qrels_path)
        if not frame.filter(pl.col("relevance") > 0).height:
            raise TestSetError(f"{qrels_path}: no relevant pair; a test set needs relevance labels (rebuild the language)")
        _refuse_unknown_ids(qrels_path, frame, pl.Enum(parts["queries"]["id"].to_list()),
                            pl.Enum(parts["corpus"]["id"].to_list()))
    stats_path = folder / "stats.json"
    try:
        stats = json.loads(stats_path.read_text(encoding="utf-8")) if stats_path.is_file() else {}
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise TestSetError(f"{stats_path}: not valid JSON ({exc}); rebuild the language or re-pull the release") from None
    if not isinstance(stats, dict):
        raise TestSetError(f"{stats_path}: expected a JSON object of counts; rebuild the language or re-pull the release")
    # Streamed, qrels.tsv is checked as it is read (TestSet.qrels_slices): one pass over a file that can be gigabytes.
    recorded = check_integrity(folder, stats, skip=() if frame is not None else ("qrels.tsv",))
    stats = {k: v for k, v in stats.items() if k != INTEGRITY_KEY}  # what the writer was given: round trips
    if frame is not None:
        return TestSet(lang=lang, queries=parts["queries"], corpus=parts["corpus"], qrels=frame, stats=stats)
    return TestSet(lang=lang, queries=parts["queries"], corpus=parts["corpus"], qrels=None, stats=stats,
                   qrels_file=qrels_path, qrels_sha256=recorded.get("qrels.tsv"))


def _refuse_unknown_ids(path: Path, qrels: pl.DataFrame, query_ids: pl.Enum, corpus_ids: pl.Enum) -> None:
    """TestSetError when the qrels name a query or corpus id the set does not hold (the first five of each)."""
    unknown = {}
    for column, ids in (("query_id", query_ids), ("doc_id", corpus_ids)):
        names = qrels[column].cast(pl.String)
        unknown[column] = sorted(names.filter(names.cast(ids, strict=False).is_null()).unique().to_list())[:5]
    if unknown["query_id"] or unknown["doc_id"]:
        raise TestSetError(f"{path}: names ids that are not in the test set: "
                           f"queries {unknown['query_id']} docs {unknown['doc_id']}")


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file, read in blocks: the one digest the source registry, test sets and releases use."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def check_integrity(folder: Path, stats: dict, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """Refuse a folder mixing files of different builds (sets written before ``set_integrity`` pass); the files
    in ``skip`` are left to the caller. Returns the recorded digests ({} for a set without a record)."""
    integrity = stats.get(INTEGRITY_KEY)
    if integrity is None:
        return {}
    digests = integrity.get("sha256") if isinstance(integrity, dict) else None
    if not isinstance(digests, dict) or any(name not in digests for name in REQUIRED_FILES):
        raise TestSetError(f"{folder / 'stats.json'}: {INTEGRITY_KEY} does not list {', '.join(REQUIRED_FILES)}; "
                           "rebuild the language or re-pull the release")
    for name, digest in sorted(digests.items()):
        path = _confined(folder, name)
        if name not in skip and path.is_file() and sha256_of(path) != digest:
            raise TestSetError(_mixed_builds(path, integrity.get("build_id")))
    return dict(digests)


def _confined(folder: Path, name: str) -> Path:
    """``folder / name`` when ``name`` (a file name listed in stats.json's set_integrity) is a file of the folder
    itself: no absolute path, no ``..`` or sub-path, no symlink leading out of the folder; else a TestSetError.
    A crafted stats.json must not make a reader hash /etc/hostname or an 8 GiB file elsewhere."""
    where = f"{folder / 'stats.json'}: {INTEGRITY_KEY} lists {str(name)[:80]!r}"
    if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\\" in name or "\0" in name \
            or Path(name).name != name:
        raise TestSetError(f"{where}, which is not a file name of the folder (an absolute path or one with .. or /); "
                           "rebuild the language or re-pull the release")
    path = folder / name
    if path.is_symlink() and path.resolve().parent != folder.resolve():
        raise TestSetError(f"{where}, a symlink to {path.resolve()} outside the folder; replace it with the file "
                           "itself, or rebuild the language or re-pull the release")
    return path


def _mixed_builds(path: Path, build_id: str | None) -> str:
    build = f" (build {build_id})" if build_id else ""
    return (f"{path}: not from the build recorded in stats.json{build}; the folder mixes files of two "
            "builds (an interrupted or partial copy?): rebuild the language or re-pull the release")


# What write_testset writes into <root>/<lang>/ (a writer adding working files with ``extra`` names its own).
TESTSET_FOLDER = re.compile("|".join(map(re.escape, (*REQUIRED_FILES, "stats.json"))))


def write_testset(ts: TestSet, root: str | Path, extra: Callable[[Path], None] | None = None, *,
                  ours: re.Pattern = TESTSET_FOLDER) -> Path:
    """Write a test set (validated first) to ``<root>/<lang>/``, replacing the folder whole; returns it.
    ``extra(tmp)`` may add working files (they join the set's integrity record); ``ours``: every name the folder
    may hold, the set's and those files' (``config.files.write_folder_atomically`` refuses a folder holding
    anything else)."""
    folder = Path(root) / ts.lang
    queries = validate_items(ts.queries, f"queries of {ts.lang}").sort("id")
    corpus = validate_items(ts.corpus, f"corpus of {ts.lang}").sort("id")
    for name, frame in (("queries", queries), ("corpus", corpus), ("qrels", ts.qrels)):
        if frame.height == 0:
            raise TestSetError(f"{folder}: the {name} of {ts.lang} are empty; refusing to write an empty test set "
                               "(check the translations and the source)")

    def fill(tmp: Path) -> None:
        queries.write_parquet(tmp / "queries.parquet")
        corpus.write_parquet(tmp / "corpus.parquet")
        write_qrels(ts.qrels, tmp / "qrels.tsv")
        if extra is not None:
            extra(tmp)
        digests = {p.name: sha256_of(p) for p in sorted(tmp.iterdir()) if p.name != "stats.json"}
        build_id = hashlib.sha256("".join(f"{n} {d}\n" for n, d in digests.items()).encode()).hexdigest()[:16]
        stats = {**ts.stats, INTEGRITY_KEY: {"build_id": build_id, "sha256": digests}}
        (tmp / "stats.json").write_text(json.dumps(stats, indent=2, ensure_ascii=False, sort_keys=True) + "\n",
                                        encoding="utf-8")

    return write_folder_atomically(folder, fill, ours=ours)


def list_languages(root: str | Path) -> list[str]:
    """Languages present under root (folders holding a queries.parquet; hidden folders are a writer's temporaries).
    The format imports no project package: callers check the names with ``languages.check_code`` (the eval
    CLI's and release's ``languages_under``) before a name reaches a file name, a dataset name or HTML."""
    root = Path(root)
    return sorted(p.name for p in root.iterdir()
                  if not p.name.startswith(".") and (p / "queries.parquet").is_file()) if root.is_dir() else []


def table1_counts(items: pl.DataFrame) -> dict:
    """The paper's Table-1 counts of queries or corpus items: pairs (occupations with both a masculine and a
    feminine item), neutral items, unique titles T (= all items), items per gender; then occupations named in
    one gender only, items the lexicon made from the other form, and the gender check's counts. The extra
    forms (doublet, neomorpheme: items of gender ``inclusive``) are not titles of Table 1: counted apart, per
    form, under ``forms`` (empty for a set without the ``form`` column)."""
    forms = {}
    if "form" in items.columns:
        per_form = dict(items.filter(pl.col("form").is_in(EXTRA_FORMS)).group_by("form").len().iter_rows())
        forms = {f: int(per_form.get(f, 0)) for f in EXTRA_FORMS}
    items = items.filter(pl.col("gender") != INCLUSIVE)
    per = dict(items.group_by("gender").len().iter_rows())
    gendered = items.filter(pl.col("gender") != NEUTRAL).group_by("pair_id").agg(
        pl.col("gender").n_unique().alias("g"), pl.col("gender").first().alias("only"))
    single = gendered.filter(pl.col("g") == 1)
    reinflected = items.filter(
        ((pl.col("gender") == FEMININE) & pl.col("flags").list.contains("reinflected_feminine"))
        | ((pl.col("gender") == MASCULINE) & pl.col("flags").list.contains("reinflected_masculine")))
    return {
        "pairs": gendered.filter(pl.col("g") == 2).height,
        "neutral": per.get(NEUTRAL, 0),
        "titles": items.height,
        MASCULINE: per.get(MASCULINE, 0),
        FEMININE: per.get(FEMININE, 0),
        "masculine_only": single.filter(pl.col("only") == MASCULINE).height,
        "feminine_only": single.filter(pl.col("only") == FEMININE).height,
        "reinflected": reinflected.height,
        "check_ok": int(items["check_ok"].sum()),
        "check_methods": dict(sorted(items.group_by("check_method").len().iter_rows())),
        "forms": forms,
        "origins": item_origins(items),
    }


def item_origins(items: pl.DataFrame) -> dict[str, int]:
    """Items per origin of their text (``ORIGINS``), each counted once, decided by its status, provenance and flags:
    a person's correction, the review, a term rule by their status; otherwise an ESCO label (provenance ``esco:``),
    the given translation (``reference:``) or the MT output, unless the gender layer made this form from the other
    one (flags ``reinflected_<gender>``, or the given title was the other gender's: ``masculine_base`` on a
    feminine item, ``feminine_base`` on a masculine one)."""
    made = (((pl.col("gender") == FEMININE)
             & (pl.col("flags").list.contains("reinflected_feminine") | pl.col("flags").list.contains("masculine_base")))
            | ((pl.col("gender") == MASCULINE)
               & (pl.col("flags").list.contains("reinflected_masculine") | pl.col("flags").list.contains("feminine_base"))))
    kind = (pl.when(pl.col("status") == STATUS_CORRECTED).then(pl.lit("person"))
            .when(pl.col("status") == STATUS_REVIEWED).then(pl.lit("review"))
            .when(pl.col("status") == STATUS_RULE).then(pl.lit("term_rule"))
            .when(pl.col("provenance").str.starts_with("esco:")).then(pl.lit("esco"))
            .when(made).then(pl.lit("gender_layer"))
            .when(pl.col("provenance").str.contains("reference:")).then(pl.lit("given"))
            .otherwise(pl.lit("machine_translation")))
    counts = dict(items.select(kind.alias("k")).group_by("k").len().iter_rows()) if items.height else {}
    return {k: int(counts.get(k, 0)) for k in ORIGINS}


def testset_source(stats: dict) -> dict | None:
    """Where a set's titles come from, when it is not the translated job-title dataset: ``{"name", "version",
    "corpus_design"}`` of ``stats.json``'s ``source`` (``esco``: builder/esco.py, docs/esco.md); None for a
    job-title set. Results carry it so reports keep the sources apart and set the paper's values beside the
    job-title figures only."""
    name = stats.get("source")
    if not name:
        return None
    block = stats.get(name) if isinstance(stats.get(name), dict) else {}
    return {"name": str(name), "version": str(block.get("version", "")),
            "corpus_design": str(block.get("corpus_design", ""))}


# The BEIR/MTEB-shaped copies of a language (releases/beir.py writes them, eval.mteb_tasks reads them):
# ``<lang>/beir/<query form>-queries_<corpus>-corpus/`` holding corpus.jsonl, queries.jsonl and qrels/test.tsv.
BEIR_FOLDER = "beir"


def beir_config_name(form: str, corpus: str) -> str:
    """The folder (and configuration) of one query form ranked over one corpus variant."""
    return f"{form}-queries_{corpus}-corpus"

# A release version, X.Y.Z without leading zeros, matched whole (fullmatch): what `releases make --version` takes
# and what `builder postprocess --version` stamps into stats.json.
VERSION_RE = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")


def read_release_version(root: str | Path) -> str | None:
    """The ``version`` of the release manifest at ``root`` (for a family folder ``<release>/esco``, the manifest of
    ``<release>`` that lists the family); None when ``root`` is not a release folder (no manifest.json) or the
    manifest names no version."""
    path = Path(root) / MANIFEST_NAME
    family = Path(root).resolve().name
    if not path.is_file() and family in RELEASE_FAMILIES:
        # <release>/esco: the release's manifest one folder up names it, when it lists that family
        path = Path(root).resolve().parent / MANIFEST_NAME
    else:
        family = None
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        manifest = None
    if not isinstance(manifest, dict):
        raise TestSetError(f"{path}: not a valid release manifest (run `python -m releases verify {path.parent}`)")
    if family is not None and not (isinstance(manifest.get("families"), dict) and family in manifest["families"]):
        return None  # a folder named esco beside some other release's files: not one of its families
    version = manifest.get("version")
    return str(version) if version else None


def testset_digest(root: str | Path, lang: str) -> str:
    """Content digest of a language folder's three scored files (the version when nothing names one)."""
    h = hashlib.sha256()
    for name in REQUIRED_FILES:
        with open(Path(root) / lang / name, "rb") as fh:  # in blocks: a qrels.tsv can be gigabytes
            while block := fh.read(1 << 20):
                h.update(block)
    return h.hexdigest()[:12]


def testset_version(ts: TestSet, root: str | Path) -> str:
    """The version of one language's test set, ``v`` + X.Y.Z: the release's (its manifest's), else the version
    the set was built as (stats.json ``version``: the pipeline's build, which ``builder postprocess --version``
    stamps with params.yaml's ``release.version``); ``sha-`` + a content digest only for a set that no version
    names."""
    release = read_release_version(root)
    version = release or ts.stats.get("version")
    if version and not (isinstance(version, str) and VERSION_RE.fullmatch(version)):
        # it names results files and the result store's records: only a release version, never a path
        where = Path(root) / (MANIFEST_NAME if release else f"{ts.lang}/stats.json")
        raise TestSetError(f"{where}: version {str(version)[:80]!r} is not a release version X.Y.Z (e.g. 0.4.1); "
                           "rebuild the language or re-pull the release")
    return f"v{version}" if version else f"sha-{testset_digest(root, ts.lang)}"


def combined_version(versions: dict[str, str]) -> str:
    """The version of several languages scored together: their common release version, else ``sha-`` + a
    digest of every language's version."""
    values = set(versions.values())
    if len(values) == 1 and not next(iter(values)).startswith("sha-"):
        return next(iter(values))
    combined = "+".join(f"{lang}-{v}" for lang, v in sorted(versions.items()))
    return "sha-" + hashlib.sha256(combined.encode()).hexdigest()[:12]
