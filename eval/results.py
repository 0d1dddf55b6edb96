"""Typed results: one model on one language (``LanguageResult``, stored as mteb stores its results,
``<store>/<model>/<revision>/<lang>.json``) and one model over several languages (``RunResult``, the
``<model>__<version>.json`` document that ``eval run`` writes and ``eval report``/``eval audit`` read).

Both carry ``schema_version``. Version 1 is the document as written before the field existed (the same
keys, no ``schema_version``): ``RunResult.from_disk`` reads it unchanged. A file of a newer schema than this
toolkit knows is refused with the version to upgrade to.

The store lets ``eval run`` skip a model x language combination whose stored result was made on the same
test-set version, with the same settings (``EvalSettings.describe()``) and the same model revision, so adding
a model or a language runs only the new combinations (``--force`` reruns them all).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from config.files import slug, write_file_atomically  # slug: the one file-name-safe form of a name
from eval.errors import EvalError
from eval.testset import combined_version

_encode_string = json.encoder.encode_basestring  # json's own string encoder (C), non-ASCII kept

SCHEMA_VERSION = 2
KNOWN_SCHEMAS = (1, 2)
RUN_KEYS = ("toolkit", "model", "testset", "settings", "languages")

__all__ = ["SCHEMA_VERSION", "LanguageResult", "ResultRows", "RunResult", "find_stored", "read_store", "slug"]


def _schema(doc: dict, where) -> int:
    version = doc.get("schema_version", 1)
    if version not in KNOWN_SCHEMAS:
        raise EvalError(f"{where}: results schema version {version!r}; this toolkit reads {list(KNOWN_SCHEMAS)}: "
                        "upgrade gendered-job-titles (pip install -U) to read it")
    return version


def read_json(path: str | Path, what: str = "results JSON") -> dict:
    """The JSON object in ``path``: the one reader of the results, stored results and audit files (eval run,
    collect, compare, report). Unreadable, not UTF-8, not JSON, nested too deep for the parser (a crafted file
    of 100,000 brackets) or not an object: one EvalError naming the file."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvalError(f"{path}: not a readable {what} ({exc})") from None
    except RecursionError:
        raise EvalError(f"{path}: not a readable {what} (nested too deep to parse); give files written by "
                        "python -m eval") from None
    if not isinstance(doc, dict):
        raise EvalError(f"{path}: not a results file (a JSON object expected)")
    return doc


class ResultRows(Sequence):
    """The rows of a results document that come one per query or per pair (``per_query``, ``per_pair``,
    ``per_form_pair``), held as the columns of a polars DataFrame and made into dicts one at a time when read.

    As dicts, a row per query costs about a kilobyte: at 32,500 queries and two corpus variants the rows alone
    held 180 MB, more than a block of scoring. A row is the frame's row as a dict, less the keys of ``omit_none``
    whose value is None (``form`` is named only on an extra-form query's row). It reads and compares like the
    list of dicts it stands for, and is written to JSON as that list (``write_json``)."""

    def __init__(self, frame, omit_none: tuple[str, ...] = ()):
        self.frame = frame
        self.omit_none = tuple(k for k in omit_none if k in frame.columns)

    def _row(self, row: dict) -> dict:
        for key in self.omit_none:
            if row[key] is None:
                del row[key]
        return row

    def __len__(self) -> int:
        return self.frame.height

    def __iter__(self) -> Iterator[dict]:
        return (self._row(row) for row in self.frame.iter_rows(named=True))

    def __getitem__(self, index):
        if isinstance(index, slice):
            return list(ResultRows(self.frame[index], self.omit_none))
        if not -len(self) <= index < len(self):
            raise IndexError(f"row {index} of {len(self)}")
        return self._row(self.frame.row(index, named=True))

    def __eq__(self, other) -> bool:
        if isinstance(other, (ResultRows, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return f"ResultRows({len(self)} rows, columns {self.frame.columns})"


# Rows encoded per slice: their text is written before the next slice is encoded.
_ROWS_PER_SLICE = 4096


def _float_text(value: float) -> str:
    """A float as json's encoder writes it (allow_nan: NaN and the infinities by their JavaScript names)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _column_texts(column, nested_indent: str) -> list[str]:
    """Each value of a polars column as json.dumps(indent=1, ensure_ascii=False) writes it as a row's value; a value
    that is not a scalar (a list, a struct) is written by json at level 0 and indented to its place
    (``nested_indent`` after each line break: a JSON string holds no raw line break)."""
    import polars as pl

    values = column.to_list()
    dtype = column.dtype
    if dtype == pl.String or isinstance(dtype, (pl.Categorical, pl.Enum)):
        return ["null" if v is None else _encode_string(v) for v in values]
    if dtype == pl.Boolean:
        return ["null" if v is None else "true" if v else "false" for v in values]
    if dtype.is_float():
        return ["null" if v is None else _float_text(v) for v in values]
    if dtype.is_integer():
        return ["null" if v is None else int.__repr__(v) for v in values]
    return [json.dumps(v, indent=1, ensure_ascii=False).replace("\n", nested_indent) for v in values]


def _rows_text(rows: ResultRows, level: int) -> Iterator[str]:
    """``rows`` as the JSON list of their row dicts that json.dumps(indent=1, ensure_ascii=False) writes at nesting
    ``level``, a slice of rows at a time: each value encoded column by column (one call a value, where json's
    Python encoder takes a dozen generator steps), the same characters."""
    frame = rows.frame
    if frame.height == 0:
        return iter(["[]"])
    return _row_slices(rows, level)


def _row_slices(rows: ResultRows, level: int) -> Iterator[str]:
    frame, names = rows.frame, rows.frame.columns
    row_indent, field_indent = "\n" + " " * (level + 1), "\n" + " " * (level + 2)
    if not names:  # rows without keys
        yield "[" + ",".join([row_indent + "{}"] * frame.height) + "\n" + " " * level + "]"
        return
    prefixes = [field_indent + _encode_string(name) + ": " for name in names]
    omitted = [name in rows.omit_none for name in names]
    close = row_indent + "}"
    yield "["
    for start in range(0, frame.height, _ROWS_PER_SLICE):
        part = frame.slice(start, _ROWS_PER_SLICE)
        columns = [_column_texts(part[name], field_indent) for name in names]
        pieces = []
        for i, values in enumerate(zip(*columns)):
            fields = [prefix + text for prefix, text, omit in zip(prefixes, values, omitted) if not (omit and text == "null")]
            pieces.append(("," if start or i else "") + row_indent + ("{" + ",".join(fields) + close if fields else "{}"))
        yield "".join(pieces)
    yield "\n" + " " * level + "]"


def _key_text(key) -> str:
    """A dict key as json writes it: a string as it is; a float, int, bool or None as its JSON text, quoted."""
    if isinstance(key, str):
        return _encode_string(key)
    if isinstance(key, float):
        text = _float_text(key)
    elif key is True or key is False or key is None:
        text = "true" if key is True else "false" if key is False else "null"
    elif isinstance(key, int):
        text = int.__repr__(key)
    else:
        raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")
    return _encode_string(text)


def _scalar_text(value) -> str | None:
    """A string, None, bool, int or float as json writes it (json's order of checks); None for anything else."""
    if isinstance(value, str):
        return _encode_string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float_text(value)
    return None


def _json_pieces(doc, level: int = 0) -> Iterator[str]:
    """The text of json.dumps(doc, indent=1, ensure_ascii=False), every ``ResultRows`` written as the list of its
    rows (``_rows_text``), in pieces: json's order of checks (str, None, True, False, int, float, list or tuple,
    dict), a call a container and a value where json's Python encoder takes a dozen generator steps a value."""
    text = _scalar_text(doc)
    if text is not None:
        yield text
    elif isinstance(doc, (list, tuple, dict)):
        is_dict = isinstance(doc, dict)
        if not doc:
            yield "{}" if is_dict else "[]"
            return
        inner = "\n" + " " * (level + 1)
        pieces = ["{" if is_dict else "["]
        for n, item in enumerate(doc.items() if is_dict else doc):
            pieces.append("," + inner if n else inner)
            if is_dict:
                pieces.append(_key_text(item[0]) + ": ")
                item = item[1]
            text = _scalar_text(item)
            if text is not None:
                pieces.append(text)
            else:
                yield "".join(pieces)
                pieces = []
                yield from _json_pieces(item, level + 1)
        pieces.append("\n" + " " * level + ("}" if is_dict else "]"))
        yield "".join(pieces)
    elif isinstance(doc, ResultRows):
        yield from _rows_text(doc, level)
    else:
        raise TypeError(f"Object of type {doc.__class__.__name__} is not JSON serializable")


def figures_by_path(node, path: str = "") -> Iterator[tuple[str, int | float]]:
    """(path, value) of every number under a results document's ``node`` (``.key`` and ``[i]`` steps, booleans
    left out): how two results of the same set are compared figure by figure."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from figures_by_path(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from figures_by_path(value, f"{path}[{i}]")
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield path, node


def write_json(path: Path, doc: dict) -> Path:
    """Written whole or not at all (``config.files.write_file_atomically``): an interrupted run leaves no half
    file in the store. The same bytes as ``json.dumps(doc, indent=1, ensure_ascii=False)`` of the document with
    its rows as lists, written in pieces (``_json_pieces``): the ``ResultRows`` a slice of rows at a time, never
    all as dicts or as one string. (json.dump with an indent runs json's pure-Python encoder, a dozen generator steps a value: 1.7 million
    calls for the default sets' documents.)"""

    def fill(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            for piece in _json_pieces(doc):
                fh.write(piece)
            fh.write("\n")

    write_file_atomically(path, fill)
    return path


@dataclass
class LanguageResult:
    """One model scored on one language. ``model``: the model's metadata after scoring (``ModelMeta``; a
    model fitted on the corpus names it in its revision); ``model_revision``: its revision when loaded, the
    one the store is keyed by; ``figures``: the language block of the results document."""

    toolkit: dict
    model: dict
    model_revision: str
    lang: str
    testset_root: str
    testset_version: str
    settings: dict
    figures: dict
    testset_digest: str = ""  # eval.testset.testset_digest of the set scored; "" in a result stored before it
    schema_version: int = SCHEMA_VERSION

    def relative_path(self) -> Path:
        return Path(slug(self.model["name"])) / slug(self.model_revision) / f"{self.lang}.json"

    def matches(self, testset_version: str, testset_digest: str, settings: dict, model_revision: str) -> bool:
        """Whether this stored result is the one a run would make now. Keyed on the set's content digest: a set
        rebuilt (after corrections, or edited) keeps its version, and must not be answered with the old figures;
        the version too, since the result names it."""
        return (self.testset_version, self.testset_digest, self.settings, self.model_revision) == (
            testset_version, testset_digest, settings, model_revision)

    def to_dict(self) -> dict:
        return {"schema_version": self.schema_version, "kind": "language-result", "toolkit": self.toolkit,
                "model": self.model, "model_revision": self.model_revision, "lang": self.lang,
                "testset": {"root": self.testset_root, "version": self.testset_version,
                            "digest": self.testset_digest},
                "settings": self.settings, "figures": self.figures}

    def to_disk(self, store: str | Path) -> Path:
        return write_json(Path(store) / self.relative_path(), self.to_dict())

    @classmethod
    def from_disk(cls, path: str | Path) -> "LanguageResult":
        doc = read_json(path)
        _schema(doc, path)
        if doc.get("kind") != "language-result":
            raise EvalError(f"{path}: not a stored language result (written by `python -m eval run` into its --store)")
        try:
            return cls(toolkit=doc["toolkit"], model=doc["model"], model_revision=doc["model_revision"], lang=doc["lang"],
                       testset_root=doc["testset"]["root"], testset_version=doc["testset"]["version"],
                       testset_digest=doc["testset"].get("digest", ""), settings=doc["settings"],
                       figures=doc["figures"], schema_version=doc["schema_version"])
        except (KeyError, TypeError, AttributeError) as exc:
            raise EvalError(f"{path}: stored language result without {exc}; rerun `python -m eval run --force`") from None


@dataclass
class RunResult:
    """One model over the languages of one test-set root: the document ``eval run`` writes per model."""

    toolkit: dict
    model: dict
    testset: dict
    settings: dict
    languages: dict = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    @classmethod
    def from_languages(cls, results: list[LanguageResult], root: str | Path) -> "RunResult":
        """The run of one model from its language results, in the order given (the model's metadata is the
        last one's, as a model fitted per language leaves it)."""
        if not results:
            raise EvalError(f"{root}: no language results to put together")
        names = {r.model["name"] for r in results}
        if len(names) > 1:
            raise EvalError(f"language results of different models {sorted(names)} cannot make one run")
        settings = {json.dumps(r.settings, sort_keys=True) for r in results}
        if len(settings) > 1:
            raise EvalError(f"{root}: the language results of {results[0].model['name']} were made with different "
                            "settings; rerun them with `python -m eval run --force`")
        versions = {r.lang: r.testset_version for r in results}
        return cls(
            toolkit=results[-1].toolkit, model=results[-1].model,
            testset={"root": str(root), "version": combined_version(versions), "languages": versions},
            settings=results[-1].settings,
            languages={r.lang: {**r.figures, "testset_version": r.testset_version} for r in results},
        )

    def to_document(self, *, streamed_rows: bool = False) -> dict:
        """The document as plain JSON data (its rows as lists of dicts). ``streamed_rows``: the per-query and
        per-pair rows stay ``ResultRows``, for ``write_json`` to write one at a time."""
        languages = self.languages if streamed_rows else {
            lang: {k: list(v) if isinstance(v, ResultRows) else v for k, v in block.items()}
            for lang, block in self.languages.items()}
        return {"schema_version": self.schema_version, "toolkit": self.toolkit, "model": self.model,
                "testset": self.testset, "settings": self.settings, "languages": languages}

    def to_disk(self, path: str | Path) -> Path:
        return write_json(Path(path), self.to_document(streamed_rows=True))

    @classmethod
    def from_document(cls, doc: dict, where: str | Path = "results") -> "RunResult":
        missing = [k for k in RUN_KEYS if not isinstance(doc, dict) or k not in doc]
        if missing:
            raise EvalError(f"{where}: not an eval results file (no {missing}); pass files written by `python -m eval run`")
        return cls(**{k: doc[k] for k in RUN_KEYS}, schema_version=_schema(doc, where))

    @classmethod
    def from_disk(cls, path: str | Path) -> "RunResult":
        return cls.from_document(read_json(path), path)


def read_store(store: str | Path) -> list[LanguageResult]:
    """Every language result under ``store`` (any depth), in path order."""
    return [LanguageResult.from_disk(p) for p in sorted(Path(store).rglob("*.json")) if not p.name.startswith(".")]


def find_stored(store: str | Path, model_name: str, model_revision: str, lang: str) -> LanguageResult | None:
    path = Path(store) / slug(model_name) / slug(model_revision) / f"{lang}.json"
    return LanguageResult.from_disk(path) if path.is_file() else None
