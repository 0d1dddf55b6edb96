"""The term-rules step: a reviewed fix of a term, applied by every build to every title that holds it.

An annotator (or the maintainers' review, docs/review.md) fixes a term once (``python -m annotation rule --apply``:
*de conta* → *de contas*; German *techniker* → *ingenieur* inside compounds where the English says Engineer); the
rule is a line of ``corrections/<lang>.rules.jsonl`` (format: builder/corrections.py, docs/FORMAT.md). Each build
applies every rule in the file's order, so a title that first appears in a later build gets the fix too, twice:

- **on the route's input** (``rewrite_inputs``, before the decide step): the given title or the two machine
  outputs, so the gender layer decides the fixed text (a misspelling the rule fixes no longer flags the title,
  the feminine is made from the fixed word);
- **on the decided titles** (``apply_rules``, after the item step): a form the gender layer made that still holds
  the term.

A rule matches ``find`` as whole words of the title (``part_of_word``: anywhere, the German compound
*bohrtechniker*), case-insensitively, and with ``english_word`` only sources whose English title holds that word.
It reaches every source holding the term, flagged or doubtful ones too (a review item keeps its verdict, with the
fixed text for the person who decides it). A source a person corrected keeps the person's answer: a title they
wrote, or a source they dropped, is listed, not changed; a title they left as proposed (null in the correction)
is the build's proposal, which the rule fixes. The source's ``status`` in translations.parquet becomes ``rule``
(a corrected or reviewed source keeps its status), its ``reason`` names the rule, and the items it gives carry
``rule:<id>`` in their provenance (builder/provenance.py). A rule that empties a title removes that form's item.

``annotation rule`` lists, with the same function, what the next build will change.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import polars as pl

from builder.corrections import TermRule
from builder.verdict import Verdict, severity
from eval.testset import STATUS_CORRECTED, STATUS_REVIEWED, STATUS_RULE

GENDERS = ("masculine", "feminine")
DOUBTFUL = ("serious", "check")  # severities of a source the build has not settled (still a review item)
# STATUS_RULE: the translations.parquet status of a source a rule changed; a person's or the review's keeps its own
KEEP_STATUS = (STATUS_CORRECTED, STATUS_REVIEWED)
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
    # of the changed, those the build has not settled (still review items, with the fixed text)
    review_items: list[Touch] = field(default_factory=list)
    corrected: list[Touch] = field(default_factory=list)  # would change, but a person corrected the source
    input_sources: list[str] = field(default_factory=list)  # sources whose input it changed (rewrite_inputs)
    input_touches: list[Touch] = field(default_factory=list)  # those sources: input before, titles after

    @property
    def inputs_changed(self) -> int:
        return len(self.input_sources)

    @property
    def matched(self) -> int:
        return len(self.changed) + len(self.corrected)


def term_pattern(rule: TermRule) -> re.Pattern:
    """The rule's term as whole words, or anywhere with ``part_of_word``; case-insensitive (a given German title
    keeps its capitals until the gender layer has read it)."""
    term = r"\s+".join(re.escape(w) for w in rule.term.split())
    return re.compile(term if rule.part_of_word else rf"(?<!\w){term}(?!\w)", re.IGNORECASE)


def rewrite(pattern: re.Pattern, replacement: str, title: str | None) -> str | None:
    """``title`` with every match replaced, spaces made single; None when nothing is left. A match that starts
    with a capital gets the replacement capitalised (German *Bohrtechniker* → *Bohringenieur*)."""
    if title is None:
        return None

    # A function, not the string: a backslash in the replacement is text, not a group reference.
    def replace(m: re.Match) -> str:
        return replacement[:1].upper() + replacement[1:] if m.group(0)[:1].isupper() else replacement

    return " ".join(pattern.sub(replace, title).split()) or None


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
    (null) is the build's proposal, which the rule fixes as it fixes the machine's. Every other source holding the
    term is changed, doubtful ones too (listed among ``review_items``). The rows are not changed."""
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
        mine = corrected.get(sid)
        if mine is not None and (row["verdict"] == Verdict.DROPPED_BY_ANNOTATOR
                                 or any(after[g] != before[g] for g in mine)):
            result.corrected.append(touch)  # a person decided the source: their text is theirs
            continue
        result.changed.append(touch)
        if mine is None and doubtful(row):
            result.review_items.append(touch)
    return result


def rewrite_inputs(sources: list, rules: list[TermRule]) -> dict[str, "InputChange"]:
    """The term rules on each source's input before the decide step (builder/postprocess.py): the given title
    (``row["output_masculine"]`` and the stripped title) or the two stripped machine outputs, so the gender layer
    decides the fixed text. Returns, per source changed, the rules that changed it and its titles before them. A
    person's written
    title is not an input (builder/routes.py ``Corrected`` puts it in place of the proposal)."""
    touched: dict[str, list[str]] = {}
    before: dict[str, tuple[str | None, str | None]] = {}
    for rule in rules:
        pattern, word = term_pattern(rule), rule.word
        for source in sources:
            if not holds_word(source.english, word) or _written_whole(source.correction):
                continue
            changed = False
            first = (source.masculine.title, source.feminine.title)
            for stripped in (source.masculine, source.feminine):
                new = rewrite(pattern, rule.replacement, stripped.title)
                if new != stripped.title:
                    stripped.title, changed = new, True
            given = source.row.get("output_masculine")
            if source.row.get("route") in ("reference", "none") and given:
                new = rewrite(pattern, rule.replacement, given)
                if new != given:
                    source.row = {**source.row, "output_masculine": new}
                    changed = True
            if changed:
                touched.setdefault(source.row["source_id"], []).append(rule.id)
                before.setdefault(source.row["source_id"], first)
    return {sid: InputChange(ids, before[sid]) for sid, ids in touched.items()}


def _written_whole(c) -> bool:
    """A correction whose titles are all the person's (or that drops the source): the input is not used."""
    if c is None:
        return False
    if c.drops or (c.masculine and c.feminine):
        return True
    return bool({"neutral": c.masculine or c.feminine, "masculine_only": c.masculine,
                 "feminine_only": c.feminine}.get(c.gender_marking))


@dataclass(frozen=True)
class InputChange:
    """The rules that changed one source's input (``rewrite_inputs``), and its titles before any of them."""

    rules: list[str]
    before: tuple[str | None, str | None]


def apply_rules(processed: pl.DataFrame, rules: list[TermRule], corrected: dict[str, frozenset[str]],
                inputs: dict[str, list[str]] | None = None) -> tuple[pl.DataFrame, list[RuleResult]]:
    """The processed sources with every rule applied in order (each sees the titles the ones before it left), and
    a column ``rules`` (the ids of the rules that changed each source, on its input, ``inputs`` of
    ``rewrite_inputs``, or on its titles); with what each rule did to the titles."""
    no_rules = pl.lit([], dtype=pl.List(pl.String))
    if not rules:
        return processed.with_columns(rules=no_rules), []
    rows = processed.select(RULE_COLUMNS).to_dicts()
    index = {row["source_id"]: i for i, row in enumerate(rows)}
    if inputs is None and "input_rules" in processed.columns:
        inputs = {sid: ids for sid, ids in zip(processed["source_id"], processed["input_rules"].to_list()) if ids}
        before = {sid: (m, f) for sid, m, f in processed.select("source_id", "input_before_masculine",
                                                                  "input_before_feminine").iter_rows()}
    else:
        before = {}
    inputs = inputs or {}
    applied: list[list[str]] = [list(inputs.get(row["source_id"], [])) for row in rows]
    results = []
    for rule in rules:
        result = rule_result(rule, rows, corrected)
        for touch in result.changed:
            i = index[touch.source_id]
            rows[i].update({f"title_{g}": touch.after[g] for g in GENDERS})
            if rule.id not in applied[i]:
                applied[i].append(rule.id)
        result.input_sources = sorted(sid for sid, ids in inputs.items() if rule.id in ids)
        for sid in result.input_sources:  # the input before the rules, the titles after every rule
            row = rows[index[sid]]
            m, f = before.get(sid, (None, None))
            result.input_touches.append(Touch(sid, row["source_text"], {"masculine": m, "feminine": f},
                                              {g: row[f"title_{g}"] for g in GENDERS}))
        results.append(result)
    said = {rule.id: f"term rule {rule.id} ('{rule.find}' → '{rule.replace}')" for rule in rules}

    def reason_with_rules(reason: str | None, ids: list[str]) -> str | None:
        return "; ".join([x for x in (reason, *(said[i] for i in ids)) if x]) if ids else reason

    changed = pl.Series([bool(ids) for ids in applied])
    return processed.with_columns(
        title_masculine=pl.Series([r["title_masculine"] for r in rows], dtype=pl.String),
        title_feminine=pl.Series([r["title_feminine"] for r in rows], dtype=pl.String),
        # a corrected source stays corrected (a person decided it; the reason names the rule)
        status=pl.when(changed & ~pl.col("status").is_in(KEEP_STATUS)).then(pl.lit(STATUS_RULE)).otherwise(pl.col("status")),
        reason=pl.Series([reason_with_rules(reason, ids) for reason, ids in zip(processed["reason"].to_list(), applied)],
                         dtype=pl.String),
        rules=pl.Series(applied, dtype=pl.List(pl.String)),
    ), results


def rules_stats(results: list[RuleResult], path) -> dict:
    """stats.json ``corrections.rules``: per rule what it matched, changed, and left to a person."""
    return {
        "file": str(path),
        "sources_changed": len({t.source_id for r in results for t in r.changed} | {
            sid for r in results for sid in r.input_sources}),
        "matching_nothing": [r.rule.id for r in results if not r.matched and not r.inputs_changed],
        "rules": [{
            "id": r.rule.id, "line": r.rule.line, "find": r.rule.find, "replace": r.rule.replace,
            "english_word": r.rule.english_word, "part_of_word": r.rule.part_of_word,
            "annotators": list(r.rule.annotators), "inputs_changed": r.inputs_changed,
            "changed": len(r.changed), "review_items": len(r.review_items), "kept_corrected": len(r.corrected),
            "input_records": [t.as_json() for t in r.input_touches],
            "changed_records": [t.as_json() for t in r.changed],
            "review_item_records": [t.as_json() for t in r.review_items],
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
                (f"{r['inputs_changed']} input(s) and {r['changed']} title(s) changed ({r['review_items']} still review "
                 f"items), {r['kept_corrected']} kept as a person corrected them"
                 if r["inputs_changed"] + r["changed"] + r["kept_corrected"] else "matches no title in this build"))
        parts.append(what)
    return f"{stats['lang']}: term rules ({rules['file']}): " + "; ".join(parts)
