"""An item's ``status`` and ``provenance`` from the sources it was built from (docs/FORMAT.md): the one definition,
for the masculine, feminine and neutral items (builder/postprocess.py) and the extra forms (builder/forms.py).

A source (a row of translations.parquet) is ``machine`` (the build's own text), ``rule`` (a term rule changed it,
builder/rules.py), ``corrected`` (a person's Argilla answer) or ``reviewed`` (the maintainers' review,
docs/review.md). An item is the strongest of its sources' statuses (corrected > reviewed > rule > machine); its
provenance names every origin of its text, ``+``-joined:

- ``human:<annotators>`` for a person's correction (their text, or the proposal they kept);
- ``review:<round>`` for the review's; a title the review kept as the build proposed it also names the build's
  origin (``reference:de+review:0.5.0-r1``), a title the review wrote does not (``review:0.5.0-r1``);
- the translator and version (``bergamot:tiny-1.0``) or the given translation (``reference:<lang>``);
- ``rule:<id>`` of each term rule that changed a title of one of its sources.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The statuses are the format's (eval/testset.py STATUSES: what the reader accepts).
from eval.testset import STATUS_CORRECTED, STATUS_MACHINE, STATUS_REVIEWED, STATUS_RULE
# The strongest status of an item's sources is the item's.
_STRENGTH = {STATUS_MACHINE: 0, STATUS_RULE: 1, STATUS_REVIEWED: 2, STATUS_CORRECTED: 3}


@dataclass
class ItemSources:
    """What the sources of one item say about its origin, gathered with ``add``."""

    status: str = STATUS_MACHINE
    annotators: set[str] = field(default_factory=set)
    reviews: set[str] = field(default_factory=set)
    origins: set[str] = field(default_factory=set)  # translator:version, reference:<lang>, rule:<id>

    def add(self, row: dict, gender: str | None, origin: str) -> None:
        """One source ``row`` (translations.parquet columns ``status``, ``annotators``, ``review``, ``rules``,
        ``title_*``, ``proposal_*``) giving this item's form ``gender`` (masculine, feminine; None: an extra form
        of the pair); ``origin``: the source's translator or given translation."""
        status = row.get("status") or STATUS_MACHINE
        if _STRENGTH.get(status, 0) > _STRENGTH[self.status]:
            self.status = status
        if status == STATUS_CORRECTED:
            self.annotators.update(row.get("annotators") or [])
        elif status == STATUS_REVIEWED:
            self.reviews.add(row.get("review") or "unknown")
            genders = ("masculine", "feminine") if gender is None else (gender,)
            if all(row.get(f"title_{g}") == row.get(f"proposal_{g}") for g in genders):
                self.origins.add(origin)  # the review kept the build's text
        else:
            self.origins.add(origin)
        self.origins.update(f"rule:{rule_id}" for rule_id in row.get("rules") or [])

    def merge(self, other: "ItemSources") -> None:
        if _STRENGTH[other.status] > _STRENGTH[self.status]:
            self.status = other.status
        self.annotators |= other.annotators
        self.reviews |= other.reviews
        self.origins |= other.origins

    def provenance(self, default: str) -> str:
        rules = sorted(o for o in self.origins if o.startswith("rule:"))
        reviews = [f"review:{r}" for r in sorted(self.reviews)]
        if self.status == STATUS_CORRECTED:
            # a person's answer: their names, the review rounds of other sources, the rules (of a kept proposal)
            return "+".join([f"human:{','.join(sorted(self.annotators)) or 'unknown'}", *reviews, *rules])
        texts = sorted(o for o in self.origins if not o.startswith("rule:"))
        return "+".join([*texts, *reviews, *rules]) or default
