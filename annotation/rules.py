"""Term rules: one reviewed fix for every title that holds a term ("de conta" → "de contas").

``python -m annotation rule`` lists the proposed titles a rule would change (a dry run), and with
``--apply`` writes one ordinary translation correction per touched record into ``corrections/<lang>.jsonl``
(the builder applies them on the next build, as any pulled answer) and appends the rule, with the records
it touched, to ``corrections/<lang>.rules.jsonl``. A rule only touches records whose verdict the build
settled (a pair, a neutral or a single-form title): a doubtful record needs a person's decision first, and
a record a person already corrected keeps that person's answer; both are listed, not changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import polars as pl

from annotation import AnnotationError
from annotation.corrections import (KIND_TRANSLATION, merge, read_corrections, validate_line, write_corrections,
                                    write_jsonl_atomic)
from annotation.doubt import doubt
from annotation.translations import record_id, suggested_marking

GENDERS = ("masculine", "feminine")


@dataclass(frozen=True)
class Touch:
    source_id: str
    english: str
    before: dict[str, str | None]
    after: dict[str, str | None]


@dataclass
class RuleResult:
    changed: list[Touch]
    doubtful: list[Touch]  # would change, but the build has not settled the record
    corrected: list[Touch]  # would change, but a person already corrected the record


def term_pattern(find: str) -> re.Pattern:
    """``find`` as whole words (titles are lowercased; so is the term)."""
    term = " ".join(find.lower().split())
    if not term:
        raise AnnotationError("--find is empty; give the words to replace, e.g. --find 'de conta'")
    return re.compile(rf"(?<!\w){re.escape(term)}(?!\w)")


def apply_rule(df: pl.DataFrame, find: str, replace: str, english_word: str | None,
               corrected: set[str]) -> RuleResult:
    pattern, replacement = term_pattern(find), " ".join(replace.lower().split())
    word = english_word.lower() if english_word else None
    result = RuleResult([], [], [])
    for row in df.iter_rows(named=True):
        if word and word not in row["source_text"].lower().replace(",", " ").split():
            continue
        before = {g: row[f"title_{g}"] for g in GENDERS}
        after = {g: (" ".join(pattern.sub(replacement, t).split()) if t is not None else None) for g, t in before.items()}
        if after == before:
            continue
        touch = Touch(row["source_id"], row["source_text"], before, after)
        if row["source_id"] in corrected:
            result.corrected.append(touch)
        elif doubt(row).severity in ("serious", "check") or suggested_marking(row) is None:
            result.doubtful.append(touch)
        else:
            result.changed.append(touch)
    return result


def correction_lines(df: pl.DataFrame, lang: str, touches: list[Touch], annotator: str, when: str) -> list[dict]:
    rows = {r["source_id"]: r for r in df.iter_rows(named=True)}
    lines = []
    for t in touches:
        line = {"kind": KIND_TRANSLATION, "lang": lang, "source_id": t.source_id,
                "record_id": record_id(lang, t.source_id),
                **{g: (t.after[g] if t.after[g] != t.before[g] else None) for g in GENDERS},
                "gender_marking": suggested_marking(rows[t.source_id]), "flag": None,
                "annotators": [annotator], "submitted_at": when}
        lines.append(validate_line(line, f"rule for {t.source_id}", lang))
    return lines


def run_rule(df: pl.DataFrame, lang: str, corrections: Path, find: str, replace: str, english_word: str | None,
             annotator: str | None, apply: bool) -> RuleResult:
    old = read_corrections(corrections, lang)
    corrected = {line["source_id"] for line in old if line["kind"] == KIND_TRANSLATION}
    result = apply_rule(df, find, replace, english_word, corrected)
    if not apply or not result.changed:
        return result
    if not annotator:
        raise AnnotationError("--apply needs --annotator NAME: the person who reviewed the rule")
    when = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = correction_lines(df, lang, result.changed, annotator, when)
    rules_path = corrections.with_suffix(".rules.jsonl")
    rules = read_rules(rules_path)
    rules.append({"find": find, "replace": replace, "english_word": english_word, "annotators": [annotator],
                  "submitted_at": when, "touched": [t.source_id for t in result.changed]})
    write_corrections(merge(old, lines), corrections, lang)
    write_jsonl_atomic(rules, rules_path)
    return result


def read_rules(path: Path) -> list[dict]:
    import json

    if not path.is_file():
        return []
    out = []
    for lineno, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        try:
            out.append(json.loads(text))
        except json.JSONDecodeError as exc:
            raise AnnotationError(f"{path}:{lineno}: not valid JSON ({exc.msg}); fix or remove that line") from None
    return out
