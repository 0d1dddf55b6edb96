"""The term-rules step: a reviewed fix of a term, applied by every build to every title that holds it.

An annotator fixes a term once (``python -m annotation rule --apply``: *de conta* → *de contas*); the rule is a
line of ``corrections/<lang>.rules.jsonl`` (format: builder/corrections.py, docs/FORMAT.md). Each build, after
the item step of ``process_translations`` (strip → corrections → decide → item), runs every rule in the file's
order over the titles the build decided (``title_masculine``, ``title_feminine``), so a title that first appears
in a later build gets the fix too:

- a rule matches ``find`` as whole words of the lowercased title, and with ``english_word`` only sources whose
  English title holds that word;
- it changes only sources whose verdict the build settled: the severity (builder/verdict.py ``severity``) is
  neither ``serious`` nor ``check`` (a pair, a neutral or a single-form title nobody doubts); a doubtful source is
  listed, not changed: a person decides it first in Argilla;
- a source a person corrected keeps the person's answer: a title they wrote, or a source they dropped, is listed,
  not changed; a title they left as proposed (null in the correction) is the build's proposal, which the rule
  fixes (a person who accepted a title the rule had fixed keeps the fix);
- the verdict, the checks and their method stay the build's (a rule changes words; the annotator who wrote it
  vouches for them); the source's ``status`` in translations.parquet becomes ``rule``, its ``reason`` names the
  rule, and the items it gives carry ``rule:<id>`` in their provenance. A rule that empties a title removes that
  form's item; one that writes the other gender's word gives what any such pair gives (the annotator's call).

``annotation rule`` lists, with the same function, what the next build will change.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import polars as pl

from builder.corrections import TermRule
from builder.verdict import Verdict, severity

GENDERS = ("masculine", "feminine")
DOUBTFUL = ("serious", "check")  # severities a rule leaves to a person
STATUS_RULE = "rule"  # translations.parquet status of a source a rule changed (besides machine and corrected)
# The columns a rule reads of a processed source (translations.parquet has them all).
RULE_COLUMNS = ["source_id", "source_text", "verdict", "flags", "title_masculine", "title_feminine"]


@dataclass(frozen=True)
class Touch:
    """One source a rule would change: its titles before and after."""

    source_id: str
    english: str
    before: dict[str, str | None]
    after: dict[str, str | None]

    def as_json(self) -> dict:
        return {"source_id": self.source_id, "english": self.english, "before": self.before, "after": self.after}


@dataclass
class RuleResult:
    rule: TermRule
    changed: list[Touch] = field(default_factory=list)
    doubtful: list[Touch] = field(default_factory=list)  # would change, but the build has not settled the source
    corrected: list[Touch] = field(default_factory=list)  # would change, but a person corrected the source

    @property
    def matched(self) -> int:
        return len(self.changed) + len(self.doubtful) + len(self.corrected)


def term_pattern(rule: TermRule) -> re.Pattern:
    """The rule's term as whole words (titles are lowercased; so is the term)."""
    return re.compile(rf"(?<!\w){re.escape(rule.term)}(?!\w)")


def rewrite(pattern: re.Pattern, replacement: str, title: str | None) -> str | None:
    """``title`` with every match replaced, spaces made single; None when nothing is left."""
    if title is None:
        return None
    # A function, not the string: a backslash in the replacement is text, not a group reference.
    return " ".join(pattern.sub(lambda _: replacement, title).split()) or None


def holds_word(english: str, word: str | None) -> bool:
    """Whether the English title holds ``word`` (no word: every title)."""
    return word is None or word in english.lower().replace(",", " ").split()


def doubtful(row: dict) -> bool:
    return severity(row["verdict"], row["flags"] or [], row["title_masculine"] is not None,
                    row["title_feminine"] is not None) in DOUBTFUL


def written_forms(masculine: str | None, feminine: str | None) -> frozenset[str]:
    """The genders whose title a person wrote in a correction (null keeps the build's proposal)."""
    return frozenset(g for g, text in zip(GENDERS, (masculine, feminine)) if text is not None)


def rule_result(rule: TermRule, rows: Iterable[dict], corrected: dict[str, frozenset[str]]) -> RuleResult:
    """What ``rule`` does to ``rows`` (the columns of ``RULE_COLUMNS``). ``corrected``: per source a person
    corrected, the genders whose title they wrote (``written_forms``). The person's answer wins: a rule that would
    change a title they wrote, or a source they dropped, leaves the source as it is; a title they kept as proposed
    (null) is the build's proposal, which the rule fixes as it fixes the machine's (a person who accepted a title
    a rule had fixed keeps the fix). The rows are not changed."""
    pattern, replacement, word = term_pattern(rule), rule.replacement, rule.word
    result = RuleResult(rule)
    for row in rows:
        if not holds_word(row["source_text"], word):
            continue
        before = {g: row[f"title_{g}"] for g in GENDERS}
        after = {g: rewrite(pattern, replacement, t) for g, t in before.items()}
        if after == before:
            continue
        touch = Touch(row["source_id"], row["source_text"], before, after)
        sid = row["source_id"]
        if sid in corrected:  # a person decided the source: their verdict is settled, their text is theirs
            mine = corrected[sid]
            if row["verdict"] == Verdict.DROPPED_BY_ANNOTATOR or any(after[g] != before[g] for g in mine):
                result.corrected.append(touch)
            else:
                result.changed.append(touch)
        elif doubtful(row):
            result.doubtful.append(touch)
        else:
            result.changed.append(touch)
    return result


def apply_rules(processed: pl.DataFrame, rules: list[TermRule],
                corrected: dict[str, frozenset[str]]) -> tuple[pl.DataFrame, list[RuleResult]]:
    """The processed sources with every rule applied in order (each sees the titles the ones before it left), and
    a column ``rules`` (the ids of the rules that changed each source); with what each rule did."""
    no_rules = pl.lit([], dtype=pl.List(pl.String))
    if not rules:
        return processed.with_columns(rules=no_rules), []
    rows = processed.select(RULE_COLUMNS).to_dicts()
    index = {row["source_id"]: i for i, row in enumerate(rows)}
    applied: list[list[str]] = [[] for _ in rows]
    results = []
    for rule in rules:
        result = rule_result(rule, rows, corrected)
        for touch in result.changed:
            i = index[touch.source_id]
            rows[i].update({f"title_{g}": touch.after[g] for g in GENDERS})
            applied[i].append(rule.id)
        results.append(result)
    said = {rule.id: f"term rule {rule.id} ('{rule.find}' → '{rule.replace}')" for rule in rules}

    def reason_with_rules(reason: str | None, ids: list[str]) -> str | None:
        return "; ".join([x for x in (reason, *(said[i] for i in ids)) if x]) if ids else reason

    changed = pl.Series([bool(ids) for ids in applied])
    return processed.with_columns(
        title_masculine=pl.Series([r["title_masculine"] for r in rows], dtype=pl.String),
        title_feminine=pl.Series([r["title_feminine"] for r in rows], dtype=pl.String),
        # a corrected source stays corrected (a person decided it; the reason names the rule)
        status=pl.when(changed & (pl.col("status") != "corrected")).then(pl.lit(STATUS_RULE)).otherwise(pl.col("status")),
        reason=pl.Series([reason_with_rules(reason, ids) for reason, ids in zip(processed["reason"].to_list(), applied)],
                         dtype=pl.String),
        rules=pl.Series(applied, dtype=pl.List(pl.String)),
    ), results


def item_provenance(corrected: bool, annotators: set[str], origins: set[str], default: str) -> str:
    """An item's provenance: ``human:<annotators>`` for a corrected item, else its origins (translator or given
    translation, ``+``-joined when several meet); then ``rule:<id>`` of each term rule that changed a title of one
    of its sources (for a corrected item: a title the person kept as proposed)."""
    if corrected:
        rules = sorted(o for o in origins if o.startswith("rule:"))
        return "+".join([f"human:{','.join(sorted(annotators)) or 'unknown'}", *rules])
    return "+".join(sorted(origins)) or default


def rules_stats(results: list[RuleResult], path) -> dict:
    """stats.json ``corrections.rules``: per rule what it matched, changed, and left to a person."""
    return {
        "file": str(path),
        "sources_changed": len({t.source_id for r in results for t in r.changed}),
        "matching_nothing": [r.rule.id for r in results if not r.matched],
        "rules": [{
            "id": r.rule.id, "line": r.rule.line, "find": r.rule.find, "replace": r.rule.replace,
            "english_word": r.rule.english_word, "annotators": list(r.rule.annotators),
            "changed": len(r.changed), "doubtful": len(r.doubtful), "kept_corrected": len(r.corrected),
            "changed_records": [t.as_json() for t in r.changed],
            "doubtful_records": [t.as_json() for t in r.doubtful],
            "kept_corrected_records": [t.as_json() for t in r.corrected],
        } for r in results],
    }


def describe_rules(stats: dict) -> str | None:
    """The build summary's line on the term rules (None when the language has none)."""
    rules = (stats.get("corrections") or {}).get("rules")
    if not rules:
        return None
    parts = []
    for r in rules["rules"]:
        what = (f"{r['id']} '{r['find']}' → '{r['replace']}': " +
                (f"{r['changed']} changed, {r['doubtful']} doubtful (left to a person), {r['kept_corrected']} kept "
                 "as a person corrected them" if r["changed"] + r["doubtful"] + r["kept_corrected"]
                 else "matches no title in this build"))
        parts.append(what)
    return f"{stats['lang']}: term rules ({rules['file']}): " + "; ".join(parts)
