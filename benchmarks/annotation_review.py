"""What an annotator meets first, and how many answers they must change (issue 27's "measure it").

    .venv/bin/python benchmarks/annotation_review.py [--data data] [--lang pt]
        [--judgements docs/annotation-judgements-pt.jsonl]

Reads the built ``<data>/<lang>/translations.parquet`` and a person's judgements of records (one JSON object
a line: ``list``, ``source_id``, ``error``, ``why`` and, for the records whose edits are counted, ``answer``:
the titles, gender marking and flag the record should get, or ``"drop"`` / ``"as proposed"``). Prints:

- the share of real errors among the first 100 records in doubt order (annotation/doubt.py) and in the order
  of the first push (commit 1dbb0b6: records needing review first, then by source id);
- for the 40 worst records by doubt, the answers an annotator must change or type, with the first push's
  record layout (both title boxes required, marking suggested "masculine / feminine" unless the verdict is
  neutral) and with the present one (an empty box keeps the proposed title, marking from the verdict).

The time a person takes cannot be measured by a script and is not reported.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from annotation import AnnotationError
from annotation.doubt import INFORMATIVE_FLAGS, doubt
from annotation.translations import read_translations, record_specs, suggested_marking

FIRST_PUSH_CLEAN = ("gendered", "neutral", "inflected")  # the first push's CLEAN_VERDICTS


def first_push_review(row: dict) -> bool:
    """The first push's needs_review (its records went first, then the rest, each by source id)."""
    return (row["verdict"] not in FIRST_PUSH_CLEAN or bool(set(row["flags"] or []) - INFORMATIVE_FLAGS)
            or row["title_masculine"] is None or row["title_feminine"] is None)


def edits_first_push(row: dict, answer) -> int:
    """Answers to change or type with the first push's layout: both boxes required, the marking suggested
    'gendered' unless the verdict was neutral. A right drop could only be discarded (one action)."""
    if answer == "drop":
        return 1
    if answer == "as proposed":
        answer = {"masculine": row["title_masculine"], "feminine": row["title_feminine"],
                  "gender_marking": suggested_marking(row), "flag": None}
    marking = answer["gender_marking"]
    edits = 0
    if marking == "feminine_only":
        edits += row["title_masculine"] is None  # required, ignored: something must be typed
    else:
        edits += answer["masculine"] != row["title_masculine"]
    if marking in ("masculine_only", "neutral"):
        edits += row["title_feminine"] is None  # required, ignored (neutral takes the masculine)
    else:
        edits += answer["feminine"] != row["title_feminine"]
    edits += marking != ("neutral" if row["verdict"] == "neutral" else "gendered")
    edits += answer["flag"] is not None
    return edits


def edits_now(row: dict, answer) -> int:
    """Answers to change or type now: an empty box keeps the proposed title, a box the marking ignores needs
    nothing, the marking is suggested from the verdict and the forms."""
    if answer == "drop":
        return 1
    if answer == "as proposed":
        return 0
    marking = answer["gender_marking"]
    edits = 0
    if marking != "feminine_only":
        edits += answer["masculine"] != row["title_masculine"]
    if marking not in ("masculine_only", "neutral"):
        edits += answer["feminine"] != row["title_feminine"]
    edits += marking != suggested_marking(row)
    edits += answer["flag"] is not None
    return edits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data")
    parser.add_argument("--lang", default="pt")
    parser.add_argument("--judgements", default="docs/annotation-judgements-pt.jsonl")
    args = parser.parse_args(argv)
    try:
        df = read_translations(args.data, args.lang)
    except AnnotationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows = {r["source_id"]: r for r in df.iter_rows(named=True)}
    judged, answers = {}, {}
    for lineno, text in enumerate(Path(args.judgements).read_text(encoding="utf-8").splitlines(), 1):
        line = json.loads(text)
        judged[line["source_id"]] = line["error"]
        if "answer" in line:
            answers[line["source_id"]] = line["answer"]
    by_doubt = [s.metadata["source_id"] for s in record_specs(df, args.lang)]
    first_push = sorted(rows, key=lambda sid: (not first_push_review(rows[sid]), sid))
    for name, order in (("doubt order", by_doubt[:100]), ("first push's order", first_push[:100])):
        missing = [sid for sid in order if sid not in judged]
        if missing:
            print(f"error: {args.judgements}: no judgement for {len(missing)} of the first 100 records in {name} "
                  f"(e.g. {missing[:5]}); judge them and add their lines", file=sys.stderr)
            return 2
        errors = sum(judged[sid] for sid in order)
        routine = sum(doubt(rows[sid]).severity == "routine" for sid in order)
        print(f"first 100 in {name}: {errors} real errors, {routine} routine reinflections (severity routine)")
    worst = by_doubt[:40]
    lacking = [sid for sid in worst if sid not in answers]
    if lacking:
        print(f"error: {args.judgements}: no answer for {lacking[:5]} among the 40 worst; add them", file=sys.stderr)
        return 2
    before = [edits_first_push(rows[sid], answers[sid]) for sid in worst]
    after = [edits_now(rows[sid], answers[sid]) for sid in worst]
    print(f"40 worst by doubt: answers to change or type: first push's layout {sum(before)}, now {sum(after)}; "
          f"records needing none: {before.count(0)} then, {after.count(0)} now")
    return 0


if __name__ == "__main__":
    sys.exit(main())
