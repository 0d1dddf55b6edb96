"""The corrections file ``corrections/<lang>.jsonl`` (docs/FORMAT.md): reading, merging, writing (through the
format's one reader and writer, builder/corrections.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from annotation import AnnotationError
from builder import corrections as corrections_format
from builder.errors import CorrectionsError
from config.files import write_file_atomically

# The one reader and writer of the format is the builder's (builder/corrections.py), which applies these files:
# what pull writes and what a build accepts cannot drift apart. Annotation comes after the builder in the flow,
# so may use it.
FLAGS = corrections_format.FLAGS
GENDER_MARKINGS = corrections_format.MARKINGS  # see translations.GENDER_MARKING_LABELS
KIND_TRANSLATION = corrections_format.KIND_TRANSLATION
KIND_RELEVANCE = corrections_format.KIND_RELEVANCE
REQUIRED = corrections_format.FIELDS


def key_of(line: dict) -> tuple:
    if line["kind"] == KIND_TRANSLATION:
        return (KIND_TRANSLATION, line["source_id"])
    return (KIND_RELEVANCE, line["query_source_id"], line["doc_source_id"])


def validate_line(line: object, where: str, lang: str | None = None) -> dict:
    """``line`` when it follows docs/FORMAT.md (``builder.corrections.check_line``), else an AnnotationError."""
    try:
        return corrections_format.check_line(line, where, lang)
    except CorrectionsError as exc:
        raise AnnotationError(str(exc)) from None


def read_corrections(path: str | Path, lang: str | None = None) -> list[dict]:
    """The lines of a corrections file ([] when there is none); with ``lang``, every line must be of it."""
    path = Path(path)
    if not path.is_file():
        return []
    try:
        return [line for _, line in corrections_format.read_lines(path, lang)]
    except CorrectionsError as exc:
        raise AnnotationError(str(exc)) from None


@dataclass
class Merged:
    """The lines a pull writes, and what it did with the lines it decided."""

    lines: list[dict]
    new: int = 0  # keys the file did not hold
    changed: int = 0  # newer answers replacing a line
    kept: int = 0  # the same answers as the line already pulled (the line kept as it was)
    older: int = 0  # answers older than the line in the file (the file's kept: a newer review or correction)


def _same_answers(a: dict, b: dict) -> bool:
    """The same people's answers at the same time: the line already pulled."""
    return a["submitted_at"] == b["submitted_at"] and a["annotators"] == b["annotators"]


def merge(old: list[dict], new: list[dict]) -> Merged:
    """Newly decided lines replace old ones with the same key when their answers are newer. A line decided from
    the same answers as the one already in the file keeps that one: a re-pushed record shows the person's own
    correction as its proposal, and comparing their unchanged answer with it again would turn their text into
    null (issue 35). Keys only in ``old`` stay, so a pull that sees less (a deleted dataset, a partial server)
    never loses what was pulled before."""
    merged = {key_of(line): line for line in old}
    out = Merged([])
    for line in new:
        k = key_of(line)
        if k not in merged:
            merged[k] = line
            out.new += 1
        elif _same_answers(line, merged[k]):
            out.kept += 1
        elif line["submitted_at"] >= merged[k]["submitted_at"]:
            merged[k] = line
            out.changed += 1
        else:
            out.older += 1
    out.lines = [merged[k] for k in sorted(merged)]
    return out


def write_corrections(lines: list[dict], path: str | Path, lang: str | None = None) -> None:
    """The corrections file ``path``, written by the format's one writer (``builder.corrections.write_lines``:
    every line checked by the reader's own check first, the file replaced whole or not at all)."""
    _through_format(corrections_format.write_lines, lines, path, lang)


def write_rules(lines: list[dict], path: str | Path, lang: str) -> None:
    """The term-rules file ``path`` (``corrections/<lang>.rules.jsonl``), written by the format's one writer of it
    (``builder.corrections.write_rules``), as ``write_corrections`` writes the corrections."""
    _through_format(corrections_format.write_rules, lines, path, lang)


def _through_format(write, lines: list[dict], path: str | Path, lang: str | None) -> None:
    # the format's refusal and the filesystem's, each one error line; the file is replaced whole or not at all
    try:
        write(path, lines, lang)
    except CorrectionsError as exc:
        raise AnnotationError(f"{exc}; nothing was written") from None
    except OSError as exc:
        raise AnnotationError(_not_written(path, exc)) from None


def write_jsonl_atomic(lines: list[dict], path: str | Path) -> None:
    """A side file of a pull (ties, agreement: not the corrections format), one JSON object a
    line, replaced whole or not at all (``config.files.write_file_atomically``)."""
    try:
        write_file_atomically(path, "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    except OSError as exc:
        raise AnnotationError(_not_written(path, exc)) from None


def _not_written(path: str | Path, exc: OSError) -> str:
    return (f"{exc.filename or path}: cannot write ({exc.strerror or exc}); check the folder's permissions and the "
            "free space (the file was left as it was)")
