"""Term rules: one reviewed fix for every title that holds a term ("de conta" → "de contas").

``python -m annotation rule`` lists the titles of the last build a rule would change (a dry run), and with
``--apply`` appends the rule to ``corrections/<lang>.rules.jsonl`` (through the format's one writer,
builder/corrections.py). It writes no correction line: every build applies every rule of that file
(builder/rules.py) to every title holding the term, also titles that did not exist when the rule was written.
What the build changes is what the dry run lists, by the same function (``builder.rules.rule_result``): only
sources whose verdict the build settled (a pair, a neutral or a single-form title); a doubtful record needs a
person's decision first, and a title a person wrote is kept; both are listed, not changed.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import polars as pl

from annotation import AnnotationError
from annotation.corrections import KIND_TRANSLATION, read_corrections, write_rules
from builder import corrections as corrections_format
from builder.errors import CorrectionsError
from builder.rules import GENDERS, RULE_COLUMNS, RuleResult, rule_result, written_forms

__all__ = ["GENDERS", "run_rule", "next_rule_id"]


def next_rule_id(existing: list[str]) -> str:
    """``r<n>``, one above the highest ``r<n>`` in use (never an id in use)."""
    numbers = [int(m.group(1)) for i in existing if (m := re.fullmatch(r"r(\d+)", i))]
    n = max(numbers, default=0) + 1
    while f"r{n}" in existing:
        n += 1
    return f"r{n}"


def _format(call, *args):
    """A call of the rules format; its refusal is an AnnotationError (one error line)."""
    try:
        return call(*args)
    except CorrectionsError as exc:
        raise AnnotationError(str(exc)) from None


def run_rule(df: pl.DataFrame, lang: str, corrections: Path, find: str, replace: str, english_word: str | None,
             annotator: str | None, apply: bool) -> tuple[RuleResult, Path | None]:
    """What the rule does to the build ``df`` (translations.parquet); with ``apply``, the rule appended to the
    rules file beside ``corrections`` (returned; None on a dry run)."""
    if not " ".join(find.split()):
        raise AnnotationError("--find is empty; give the words to replace, e.g. --find 'de conta'")
    if apply and not annotator:
        raise AnnotationError("--apply needs --annotator NAME: the person who reviewed the rule")
    if corrections.is_dir():  # its rules file would be written beside the folder, as <folder>.rules.jsonl
        raise AnnotationError(f"--out {corrections} is a folder; give the corrections file (e.g. "
                              f"{corrections / f'{lang}.jsonl'}), the rule goes beside it in {lang}.rules.jsonl")
    rules_path = corrections_format.rules_path_of(corrections)
    old = [line for _, line in _format(corrections_format.read_rule_lines, rules_path, lang)] \
        if rules_path.is_file() else []
    line = {"id": next_rule_id([r["id"] for r in old]), "lang": lang, "find": find, "replace": replace,
            "english_word": english_word, "annotators": [annotator or "(dry run)"],
            "submitted_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    _format(corrections_format.check_rule, line, "the rule", lang)
    rule = corrections_format.TermRule(line["id"], find, replace, english_word, tuple(line["annotators"]))
    corrected = {c["source_id"]: written_forms(c["masculine"], c["feminine"])
                 for c in read_corrections(corrections, lang) if c["kind"] == KIND_TRANSLATION}
    result = rule_result(rule, df.select(RULE_COLUMNS).iter_rows(named=True), corrected)
    if not apply:
        return result, None
    same = next((r for r in old if corrections_format.TermRule(r["id"], r["find"], r["replace"], r["english_word"], ())
                 .same_fix(rule)), None)
    if same is not None:
        raise AnnotationError(f"{rules_path}: rule {same['id']} already replaces '{same['find']}' with "
                              f"'{same['replace']}'" + (f" (English word '{same['english_word']}')"
                                                        if same["english_word"] else "") + "; nothing written")
    write_rules(old + [line], rules_path, lang)
    return result, rules_path

