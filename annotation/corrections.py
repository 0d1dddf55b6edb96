"""The corrections file ``corrections/<lang>.jsonl`` (docs/FORMAT.md): reading, merging, atomic writing."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from annotation import AnnotationError

KIND_TRANSLATION = "translation"
KIND_RELEVANCE = "relevance"
FLAGS = (None, "not_a_job_title", "wrong_sense", "untranslatable")
GENDER_MARKINGS = ("gendered", "neutral", "masculine_only", "feminine_only")  # see translations.GENDER_MARKING_LABELS
REQUIRED = {
    KIND_TRANSLATION: ("lang", "source_id", "record_id", "masculine", "feminine", "gender_marking", "flag",
                       "annotators", "submitted_at"),
    KIND_RELEVANCE: ("lang", "query_source_id", "doc_source_id", "record_id", "relevant", "annotators",
                     "submitted_at"),
}


def key_of(line: dict) -> tuple:
    if line["kind"] == KIND_TRANSLATION:
        return (KIND_TRANSLATION, line["source_id"])
    return (KIND_RELEVANCE, line["query_source_id"], line["doc_source_id"])


def validate_line(line: object, where: str, lang: str | None = None) -> dict:
    if not isinstance(line, dict):
        raise AnnotationError(f"{where}: expected a JSON object")
    if lang is not None and line.get("lang") != lang:
        raise AnnotationError(f"{where}: lang {line.get('lang')!r} in the corrections file of {lang!r}; "
                              f"pass the file of that language (--out)")
    kind = line.get("kind")
    if kind not in REQUIRED:
        raise AnnotationError(f"{where}: kind {kind!r} is neither {KIND_TRANSLATION!r} nor {KIND_RELEVANCE!r}")
    missing = [k for k in REQUIRED[kind] if k not in line]
    if missing:
        raise AnnotationError(f"{where}: missing key(s) {missing} for a {kind} correction (docs/FORMAT.md)")
    if kind == KIND_TRANSLATION:
        if line["flag"] not in FLAGS:
            raise AnnotationError(f"{where}: flag {line['flag']!r} not one of {FLAGS}")
        if line["gender_marking"] not in GENDER_MARKINGS:
            raise AnnotationError(f"{where}: gender_marking {line['gender_marking']!r} not one of {GENDER_MARKINGS}")
    elif not isinstance(line["relevant"], bool):
        raise AnnotationError(f"{where}: relevant must be true or false, got {line['relevant']!r}")
    return line


def read_corrections(path: str | Path, lang: str | None = None) -> list[dict]:
    """The lines of a corrections file ([] when there is none); with ``lang``, every line must be of it."""
    path = Path(path)
    if not path.is_file():
        return []
    lines = []
    with open(path, encoding="utf-8") as fh:
        for lineno, text in enumerate(fh, 1):
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                raise AnnotationError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            lines.append(validate_line(obj, f"{path}:{lineno}", lang))
    return lines


def merge(old: list[dict], new: list[dict]) -> list[dict]:
    """Newly decided lines replace old ones with the same key unless older; keys only in ``old`` stay,
    so a pull that sees less (a deleted dataset, a partial server) never loses what was pulled before."""
    merged = {key_of(line): line for line in old}
    for line in new:
        k = key_of(line)
        if k not in merged or line["submitted_at"] >= merged[k]["submitted_at"]:
            merged[k] = line
    return [merged[k] for k in sorted(merged)]


def write_jsonl_atomic(lines: list[dict], path: str | Path) -> None:
    """Write to a temporary file beside ``path`` and rename it over: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            for line in lines:
                fh.write(json.dumps(line, ensure_ascii=False, sort_keys=False) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
