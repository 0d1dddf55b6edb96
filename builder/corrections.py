"""Reads ``corrections/<lang>.jsonl`` (written by ``python -m annotation pull``; format in docs/FORMAT.md).

Every language in ``params.yaml`` has that file, empty until its first pull: ``prepare_corrections`` (the
``corrections@<lang>`` stage of dvc.yaml) creates it, so ``postprocess@<lang>`` can depend on its own
language's file alone (DVC refuses a dependency that does not exist).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from builder.errors import CorrectionsError

FLAGS = (None, "not_a_job_title", "wrong_sense", "untranslatable")
MARKINGS = ("gendered", "neutral", "masculine_only", "feminine_only")


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


def _need(obj: dict, key: str, where: str, kinds: tuple[type, ...] = (str,), nullable: bool = False):
    if key not in obj:
        raise CorrectionsError(f"{where}: missing field {key!r}")
    value = obj[key]
    if value is None and nullable:
        return None
    if not isinstance(value, kinds):
        raise CorrectionsError(f"{where}: field {key!r} is {value!r}; expected {'/'.join(k.__name__ for k in kinds)}")
    return value


def read_corrections(path: str | Path | None, lang: str) -> Corrections:
    if path is None:
        return Corrections()
    path = Path(path)
    if not path.is_file():
        raise CorrectionsError(f"{path}: corrections file not found")
    out = Corrections(path=path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CorrectionsError(f"{path}: cannot read the corrections file ({exc.strerror or exc})") from None
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
        if not isinstance(obj, dict):
            raise CorrectionsError(f"{where}: expected a JSON object")
        if obj.get("lang") != lang:
            raise CorrectionsError(f"{where}: lang {obj.get('lang')!r} in a file used for {lang!r}")
        kind = obj.get("kind")
        if kind == "translation":
            marking = _need(obj, "gender_marking", where)
            if marking not in MARKINGS:
                raise CorrectionsError(f"{where}: gender_marking {marking!r}; expected one of {MARKINGS}")
            flag = _need(obj, "flag", where, nullable=True)
            if flag not in FLAGS:
                raise CorrectionsError(f"{where}: flag {flag!r}; expected one of {FLAGS}")
            sid = _need(obj, "source_id", where)
            out.translations[sid] = TranslationCorrection(
                source_id=sid,
                masculine=_need(obj, "masculine", where, nullable=True),
                feminine=_need(obj, "feminine", where, nullable=True),
                gender_marking=marking,
                flag=flag,
                annotators=tuple(obj.get("annotators") or ()),
            )
        elif kind == "relevance":
            key = (_need(obj, "query_source_id", where), _need(obj, "doc_source_id", where))
            out.relevance[key] = _need(obj, "relevant", where, (bool,))
        else:
            raise CorrectionsError(f"{where}: kind {kind!r}; expected 'translation' or 'relevance'")
    return out


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
