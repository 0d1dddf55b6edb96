"""How doubtful a translation record is: a severity (what kind of problem the build found) and a doubt score
in [0, 1] that orders records for review, worst first, flagged or not.

severity    what it means                                             doubt
serious     the title is likely wrong: English left in, a word no     0.80 + 0.20 × signal
            lexicon or word list knows, a thing and not a person,
            a failed or echoed output
check       the build could not vouch for it: no form of the other    0.60 + 0.20 × signal
            gender known, an unconfirmed single form, an unknown
            word after the head (a loanword or a misspelling)
routine     the lexicon made a form (reinflected, or the other form   0.10 + 0.50 × signal
            of a given title): usually right
none        nothing flagged                                           0.00 + 0.60 × signal

The signal (0..1) is evidence beyond the flags: on the MT route, how far the translator's two outputs differ
in words that are not gender inflections of each other (a stable translation differs only in gender); on the
given-translation route, how unsure the alignment to the given title was (its margin over the runner-up,
builder/align.py: margin 0 → 1, ``SURE_MARGIN`` or more → 0). Unflagged records thus rank above routine
reinflections when the evidence says so, and never above a flagged problem.
"""

from __future__ import annotations

from dataclasses import dataclass

# The severity of a record is the builder's (builder/verdict.py): the build's term rules skip the records it
# finds doubtful, and `annotation rule` lists what the build will do.
from builder.verdict import (CHECK_FLAGS, CHECK_VERDICTS, INFORMATIVE_FLAGS, ROUTINE_FLAGS, ROUTINE_VERDICTS,
                             SERIOUS_FLAGS, SERIOUS_VERDICTS, SEVERITIES, severity)

__all__ = ["CHECK_FLAGS", "CHECK_VERDICTS", "INFORMATIVE_FLAGS", "ROUTINE_FLAGS", "ROUTINE_VERDICTS", "SERIOUS_FLAGS",
           "SERIOUS_VERDICTS", "SEVERITIES", "FLOOR_SPAN", "SURE_MARGIN", "Doubt", "severity", "non_gender_difference",
           "route_of", "doubt"]

FLOOR_SPAN = {"serious": (0.80, 0.20), "check": (0.60, 0.20), "routine": (0.10, 0.50), "none": (0.00, 0.60)}
SURE_MARGIN = 0.3  # an alignment margin this wide or wider is no doubt (about the upper quartile in pt)


@dataclass(frozen=True)
class Doubt:
    severity: str
    score: float  # 0..1, higher first
    signal: float
    why: str  # the signal in words, "" when there is none


def _inflections(a: str, b: str) -> bool:
    """Two words that differ at most in a gender ending (engenheiro/engenheira, do/da, diretor/diretora)."""
    if a == b:
        return True
    common = 0
    for x, y in zip(a, b):
        if x != y:
            break
        common += 1
    return common >= 1 and common >= max(len(a), len(b)) - 3


def non_gender_difference(masculine: str | None, feminine: str | None) -> float:
    """Share of words (of the longer output) without a gender counterpart in the other, one more word's worth
    when the matched words come in another order ("engenheiro de rede" / "rede de engenheiro": 1/3)."""
    if not masculine or not feminine:
        return 0.0
    m, f = masculine.split(), feminine.split()
    unmatched, order, free = 0, [], list(range(len(f)))
    for word in m:
        hit = next((j for j in free if _inflections(word, f[j])), None)
        if hit is None:
            unmatched += 1
        else:
            free.remove(hit)
            order.append(hit)
    unmatched += len(free)
    reordered = 1 if order != sorted(order) else 0
    return min(1.0, (unmatched + reordered) / max(len(m), len(f)))


def route_of(row: dict) -> str:
    """``reference`` (a given title) or ``mt``: the route column, or for builds before it the translator's
    provenance (``reference:<lang>`` for a given title, docs/FORMAT.md)."""
    if row.get("route"):
        return row["route"]
    return "reference" if str(row.get("translator") or "").startswith("reference:") else "mt"


def doubt(row: dict) -> Doubt:
    """The doubt of one row of translations.parquet (with ``route`` and ``alignment_margin`` when known)."""
    sev = severity(row["verdict"], row["flags"] or [], row["title_masculine"] is not None,
                   row["title_feminine"] is not None)
    signal, why = 0.0, ""
    if route_of(row) == "reference":
        margin = row.get("alignment_margin")
        if margin is not None:
            signal = 1.0 - min(max(margin, 0.0), SURE_MARGIN) / SURE_MARGIN
            if signal > 0:
                why = f"the alignment to the given title was unsure (margin {margin:.2f} over the next candidate)"
    else:
        signal = non_gender_difference(row.get("mt_masculine"), row.get("mt_feminine"))
        if signal > 0:
            why = (f"the translator's two outputs differ in more than gender ('{row.get('mt_masculine')}' / "
                   f"'{row.get('mt_feminine')}')")
    floor, span = FLOOR_SPAN[sev]
    return Doubt(sev, round(floor + span * signal, 4), round(signal, 4), why)
