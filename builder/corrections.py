"""Reads ``corrections/<lang>.jsonl`` (written by ``python -m annotation pull``; format in docs/FORMAT.md).

Every language in ``params.yaml`` has that file, empty until its first pull: ``prepare_corrections`` (the
``corrections@<lang>`` stage of dvc.yaml) creates it, so ``postprocess@<lang>`` can depend on its own
language's file alone (DVC refuses a dependency that does not exist).

The one reader and writer of that format: ``check_line`` and ``read_lines`` check every line as docs/FORMAT.md
gives it, and ``write_lines`` writes only lines ``check_line`` accepts, so a file annotation writes is always one
the builder reads (``annotation/corrections.py`` reads and writes the file through them).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from builder.errors import CorrectionsError
from config.files import write_file_atomically

FLAGS = (None, "not_a_job_title", "wrong_sense", "untranslatable")
MARKINGS = ("gendered", "neutral", "masculine_only", "feminine_only")
KIND_TRANSLATION = "translation"
KIND_RELEVANCE = "relevance"
# The fields of a line of each kind (docs/FORMAT.md), besides "kind": every one required, no other allowed.
FIELDS = {
    KIND_TRANSLATION: ("lang", "source_id", "record_id", "masculine", "feminine", "gender_marking", "flag",
                       "annotators", "submitted_at"),
    KIND_RELEVANCE: ("lang", "query_source_id", "doc_source_id", "record_id", "relevant", "annotators",
                     "submitted_at"),
}


@dataclass(frozen=True)
class TranslationCorrection:
    source_id: str
    masculine: str | None
    feminine: str | None
    gender_marking: str
    flag: str | None
    annotators: tuple[str, ...]


@dataclass
class Corrections:
    translations: dict[str, TranslationCorrection] = field(default_factory=dict)
    relevance: dict[tuple[str, str], bool] = field(default_factory=dict)  # (query_source_id, doc_source_id)
    path: Path | None = None
    # The line each correction came from: source_id, or (query_source_id, doc_source_id), -> line number.
    lines: dict = field(default_factory=dict)


def _text(obj: dict, key: str, where: str, *, nullable: bool = False) -> str | None:
    """``obj[key]``: a string with a visible character and no control character, line separator or lone
    surrogate (None allowed when ``nullable``)."""
    value = obj[key]
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        raise CorrectionsError(f"{where}: {key} is {value!r}; expected a string{' or null' if nullable else ''} "
                               "(docs/FORMAT.md)")
    for ch in value:
        category = unicodedata.category(ch)
        if category == "Cs":
            raise CorrectionsError(f"{where}: {key} holds a lone surrogate (\\u{ord(ch):04x}), which is no character; "
                                   "write the character itself (the file is UTF-8)")
        if category in ("Cc", "Zl", "Zp"):
            raise CorrectionsError(f"{where}: {key} holds the control character U+{ord(ch):04X}; remove it")
    if not any(not ch.isspace() and unicodedata.category(ch) != "Cf" for ch in value):
        fix = "give the title, or null to keep the machine text" if nullable else "give a value"
        raise CorrectionsError(f"{where}: {key} {value!r} has no visible character; {fix}")
    return value


def check_line(obj: object, where: str, lang: str | None = None) -> dict:
    """``obj`` when it is a correction line as docs/FORMAT.md gives it (with ``lang``, of that language), else a
    CorrectionsError naming ``where``: the one check of the corrections format, for the builder and annotation."""
    if not isinstance(obj, dict):
        raise CorrectionsError(f"{where}: expected a JSON object")
    kind = obj.get("kind")
    if not isinstance(kind, str) or kind not in FIELDS:  # a list or a mapping there is refused too, not a TypeError
        raise CorrectionsError(f"{where}: kind {kind!r}; expected {KIND_TRANSLATION!r} or {KIND_RELEVANCE!r}")
    fields = FIELDS[kind]
    unknown = [k for k in obj if k != "kind" and k not in fields]
    if unknown:
        raise CorrectionsError(f"{where}: unknown field(s) {unknown} in a {kind} correction; its fields are "
                               f"{['kind', *fields]} (docs/FORMAT.md)")
    missing = [k for k in fields if k not in obj]
    if missing:
        raise CorrectionsError(f"{where}: missing field(s) {missing} for a {kind} correction (docs/FORMAT.md)")
    _text(obj, "lang", where)
    if lang is not None and obj["lang"] != lang:
        raise CorrectionsError(f"{where}: lang {obj['lang']!r} in the corrections file of {lang!r}; give the file of "
                               "that language")
    for key in ("record_id", "submitted_at"):
        _text(obj, key, where)
    annotators = obj["annotators"]
    if not isinstance(annotators, list) or not annotators:
        raise CorrectionsError(f"{where}: annotators is {annotators!r}; expected a list of one or more names, "
                               'e.g. ["ana"]')
    for i, name in enumerate(annotators):
        _text({f"annotators[{i}]": name}, f"annotators[{i}]", where)
    if kind == KIND_TRANSLATION:
        _text(obj, "source_id", where)
        _text(obj, "masculine", where, nullable=True)
        _text(obj, "feminine", where, nullable=True)
        if obj["gender_marking"] not in MARKINGS:
            raise CorrectionsError(f"{where}: gender_marking {obj['gender_marking']!r} not one of {MARKINGS}")
        if obj["flag"] not in FLAGS:
            raise CorrectionsError(f"{where}: flag {obj['flag']!r} not one of {FLAGS}")
    else:
        _text(obj, "query_source_id", where)
        _text(obj, "doc_source_id", where)
        if not isinstance(obj["relevant"], bool):
            raise CorrectionsError(f"{where}: relevant must be true or false, got {obj['relevant']!r}")
    return obj


def read_lines(path: Path, lang: str | None = None) -> list[tuple[int, dict]]:
    """``(line number, line)`` of every correction of the file ``path``, each checked by ``check_line``."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CorrectionsError(f"{path}: cannot read the corrections file ({exc.strerror or exc})") from None
    out = []
    # Split on b"\n" only: str.splitlines would also split on a lone CR or U+2028 and shift the line numbers.
    for lineno, raw_line in enumerate(raw.split(b"\n"), 1):
        where = f"{path}:{lineno}"
        try:
            line = raw_line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorrectionsError(f"{where}: not valid UTF-8 ({exc.reason} at byte {exc.start}); re-encode the file "
                                   "as UTF-8 (python -m annotation pull writes it so)") from None
        if lineno == 1 and line.startswith("\ufeff"):
            raise CorrectionsError(f"{where}: starts with a UTF-8 byte-order mark; save the file as UTF-8 without BOM")
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorrectionsError(f"{where}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise CorrectionsError(f"{where}: JSON nested too deep; one flat object per line expected") from None
        out.append((lineno, check_line(obj, where, lang)))
    return out


def write_lines(path: str | Path, lines: list[dict], lang: str | None = None) -> Path:
    """Replace the corrections file ``path`` with ``lines`` (one JSON object a line, UTF-8, keys in the order
    given), whole or not at all. Every line is checked by ``check_line`` before anything is written: a line the
    reader would refuse is a CorrectionsError naming it, and the file stays as it was."""
    path = Path(path)
    for i, line in enumerate(lines, 1):
        check_line(line, f"{path}: line {i} to write", lang)
    return write_file_atomically(path, "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))


def read_corrections(path: str | Path | None, lang: str) -> Corrections:
    if path is None:
        return Corrections()
    path = Path(path)
    if not path.is_file():
        raise CorrectionsError(f"{path}: corrections file not found")
    out = Corrections(path=path)
    for lineno, obj in read_lines(path, lang):
        if obj["kind"] == KIND_TRANSLATION:
            sid = obj["source_id"]
            out.translations[sid] = TranslationCorrection(
                source_id=sid, masculine=obj["masculine"], feminine=obj["feminine"],
                gender_marking=obj["gender_marking"], flag=obj["flag"], annotators=tuple(obj["annotators"]),
            )
            out.lines[sid] = lineno
        else:
            key = (obj["query_source_id"], obj["doc_source_id"])
            out.relevance[key] = obj["relevant"]
            out.lines[key] = lineno
    return out


def check_source_ids(corrections: Corrections, queries: Iterable[str], corpus: Iterable[str]) -> None:
    """A CorrectionsError naming file:line for the first correction whose English id is not in the source: a
    translation's ``source_id`` must be a query or corpus id, a label's ``query_source_id`` a query id and its
    ``doc_source_id`` a corpus id. Such a line would change nothing yet be counted as applied in stats.json."""
    queries, corpus = set(queries), set(corpus)
    found = []
    for sid in corrections.translations:
        if sid not in queries and sid not in corpus:
            found.append((corrections.lines.get(sid, 0), f"source_id {sid!r} is no id of the English source"))
    for q, d in corrections.relevance:
        if q not in queries:
            found.append((corrections.lines.get((q, d), 0), f"query_source_id {q!r} is no query id of the English source"))
        elif d not in corpus:
            found.append((corrections.lines.get((q, d), 0), f"doc_source_id {d!r} is no corpus id of the English source"))
    if found:
        lineno, problem = min(found)
        raise CorrectionsError(f"{corrections.path}:{lineno}: {problem}; remove the line, or build from the English "
                               "source it was made for")


def prepare_corrections(path: str | Path, lang: str) -> tuple[Corrections, bool]:
    """Check the language's corrections file; create it empty (no corrections) when it does not exist yet.
    Returns what it holds and whether it was created."""
    path = Path(path)
    if path.exists():
        return read_corrections(path, lang), False
    if not path.parent.is_dir():
        raise CorrectionsError(f"{path.parent}: the corrections folder does not exist; run from the repository root "
                               "(it holds corrections/) or pass --corrections")
    path.touch()
    return Corrections(path=path), True
