"""Measures as named objects: what ``eval run`` computes, registered in one place.

A measure's printed form carries its parameters and is its key in every result: ``AO``, ``RBO(p=0.98)``,
``identical_top1``, ``AP``, ``acc@1``. ``params.yaml``'s ``eval.measures`` lists them by that name
(``parse_measure`` turns a name back into the object), and the results document, the tables and the plots
read the names from there, so a new measure is one class here (or anywhere, with ``@register``) and one
line in ``params.yaml``.

Two kinds, by what one value is computed from (the values themselves come from the vectorised pure
functions of ``eval.metrics``, tested against ``rbo`` and ir-measures):

- a ``PairMeasure`` scores one masculine x feminine query pair from its two rankings over the same items
  (``PairRankings``); its figure per corpus is the mean over pairs, under the results' ``symmetry`` key;
- a ``QueryMeasure`` scores one query from its ranking and its relevant items (``QueryRankings``); its
  figure per corpus and query gender is the mean over the queries with a relevant item. ``AP``'s mean is
  MAP, under the results' ``MAP`` key; the others sit under the measure's ``section`` (``acc@k``:
  ``accuracy``).

Parity (``MAP_M-MAP_F``, ``acc@1_M-acc@1_F`` and their paired forms) is built on ``AP`` and ``acc@1``, so
both are required.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from eval.errors import EvalError
from eval.metrics import (
    accuracy_from_first_hit,
    average_precision_from_hits,
    identical_top1_batch,
    symmetry_batch,
)


@dataclass
class QueryRankings:
    """One block of queries: each row's ranking (corpus columns, -1 padded) and its relevant items.

    ``hit_rows``/``hit_positions``: the relevant items retrieved, row by row, left to right (as
    ``np.nonzero`` lists them); ``first_hit``: each row's first relevant position, ``n_docs`` when none.
    """

    ranking: np.ndarray
    relevant: np.ndarray  # bool (rows, n_docs) in the ranking's column space
    n_relevant: np.ndarray  # relevant items per row (retrieved or not)
    hit_rows: np.ndarray
    hit_positions: np.ndarray
    first_hit: np.ndarray


@dataclass
class PairRankings:
    """One block of query pairs: the masculine and the feminine query's rankings over the same items.

    ``rbo_p``: the persistences of the block's RBO measures, so AO and every RBO come from one pass of
    overlap counting (``symmetry_batch``)."""

    masculine: np.ndarray
    feminine: np.ndarray
    rbo_p: tuple[float, ...] = ()
    _symmetry: dict = field(default_factory=dict, repr=False)

    def symmetry(self, p: float) -> tuple[np.ndarray, np.ndarray]:
        if p not in self._symmetry:
            # rankings from one sort each, less some items: permutations, so no check for repeated items
            self._symmetry[p] = symmetry_batch(self.masculine, self.feminine, p, check=False)
        return self._symmetry[p]

    def average_overlap(self) -> np.ndarray:
        return self.symmetry(self.rbo_p[0] if self.rbo_p else 0.5)[0]  # AO does not depend on p


class Measure:
    """A named measure. ``name``: the registry key (the printed form without parameters); ``definition``:
    one line for the results document's ``settings.metrics``."""

    name: ClassVar[str]
    definition: ClassVar[str] = ""

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return str(self)

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def definitions(self) -> dict[str, str]:
        """``{key: definition}`` entries of the results' ``settings.metrics`` for this measure."""
        return {str(self): self.describe()}

    def describe(self) -> str:
        return self.definition


class PairMeasure(Measure):
    """A value per query pair from its two rankings; reported as the mean over pairs under ``symmetry``."""

    # per-pair values are booleans in the per-pair rows (e.g. identical_top1), else floats
    boolean: ClassVar[bool] = False

    def per_pair(self, pairs: PairRankings) -> np.ndarray:
        raise NotImplementedError


class QueryMeasure(Measure):
    """A value per query from its ranking and relevant items (NaN for a query without a relevant item);
    reported per query gender under ``section``."""

    section: ClassVar[str] = "retrieval"

    def per_query(self, queries: QueryRankings) -> np.ndarray:
        raise NotImplementedError


MEASURES: dict[str, type[Measure]] = {}


def register(cls: type[Measure]) -> type[Measure]:
    """Class decorator: make ``cls`` available to ``parse_measure`` (and params.yaml) under ``cls.name``."""
    if cls.name in MEASURES and MEASURES[cls.name] is not cls:
        raise EvalError(f"measure name {cls.name!r} is taken by {MEASURES[cls.name].__qualname__}")
    MEASURES[cls.name] = cls
    return cls


@register
class AverageOverlap(PairMeasure):
    name = "AO"
    definition = "average overlap at full depth: (1/k) sum_d |A[:d] & B[:d]| / d (the paper's 'RBO')"

    def per_pair(self, pairs: PairRankings) -> np.ndarray:
        return pairs.average_overlap()


@register
class RankBiasedOverlap(PairMeasure):
    name = "RBO"
    definition = "RBO_ext, Webber, Moffat & Zobel 2010, eq. 32"

    def __init__(self, p: float = 0.98) -> None:
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1:
            raise EvalError(f"RBO persistence p must be in (0, 1), got {p!r}")
        self.p = float(p)

    def __str__(self) -> str:
        return f"RBO(p={self.p:g})"

    def per_pair(self, pairs: PairRankings) -> np.ndarray:
        return pairs.symmetry(self.p)[1]


@register
class IdenticalTop1(PairMeasure):
    name = "identical_top1"
    definition = "share of pairs whose masculine and feminine rankings put the same item first"
    boolean = True

    def per_pair(self, pairs: PairRankings) -> np.ndarray:
        return identical_top1_batch(pairs.masculine, pairs.feminine)


@register
class AveragePrecision(QueryMeasure):
    name = "AP"
    definition = "average precision, trec_eval semantics (relevant items never retrieved count)"
    section = "MAP"  # its mean is MAP, reported as MAP: {gender: figure}

    def definitions(self) -> dict[str, str]:
        return {"AP": self.definition, "MAP": "mean AP over queries with >= 1 relevant item in the corpus variant"}

    def per_query(self, queries: QueryRankings) -> np.ndarray:
        return average_precision_from_hits(queries.hit_rows, queries.hit_positions, queries.n_relevant)


@register
class Accuracy(QueryMeasure):
    """Success@k: a relevant item in the top k (named ``acc@k`` in this project's results)."""

    name = "acc"
    section = "accuracy"

    def __init__(self, k: int = 1) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise EvalError(f"acc@k needs a cut-off k >= 1, got {k!r}")
        self.k = k

    def __str__(self) -> str:
        return f"acc@{self.k}"

    def describe(self) -> str:
        return f"share of queries with a relevant item in the top {self.k}"

    def per_query(self, queries: QueryRankings) -> np.ndarray:
        return accuracy_from_first_hit(queries.first_hit, queries.n_relevant > 0, self.k)


# Today's figures, in the order their definitions appear in results documents.
DEFAULT_MEASURES = ("AO", "RBO(p=0.98)", "AP", "acc@1", "acc@5", "acc@10", "identical_top1")

_CALL = re.compile(r"(?P<name>[A-Za-z_][\w-]*)(?:\((?P<args>[^()]*)\))?")
_AT = re.compile(r"(?P<name>[A-Za-z_][\w-]*)@(?P<k>\d+)")


def parse_measure(text: str) -> Measure:
    """The measure named ``text``: ``AO``, ``RBO(p=0.98)``, ``acc@5`` (``name@k`` is ``name(k=k)``)."""
    if not isinstance(text, str):
        raise EvalError(f"a measure is named by a string such as 'AO' or 'RBO(p=0.98)', got {text!r}")
    text = text.strip()
    kwargs: dict = {}
    if m := _AT.fullmatch(text):
        name, kwargs = m["name"], {"k": int(m["k"])}
    elif m := _CALL.fullmatch(text):
        name = m["name"]
        for part in filter(None, (a.strip() for a in (m["args"] or "").split(","))):
            key, sep, value = part.partition("=")
            if not sep:
                raise EvalError(f"measure {text!r}: parameters are key=value (e.g. RBO(p=0.98)), got {part!r}")
            try:
                kwargs[key.strip()] = int(value) if re.fullmatch(r"-?\d+", value.strip()) else float(value)
            except ValueError:
                raise EvalError(f"measure {text!r}: {key.strip()}={value.strip()!r} is not a number") from None
    else:
        raise EvalError(f"measure {text!r}: not a measure name; write NAME, NAME(key=value) or NAME@k (known: {sorted(MEASURES)})")
    if name not in MEASURES:
        raise EvalError(f"unknown measure {name!r} in {text!r}; known: {sorted(MEASURES)} (eval/measures.py registers them)")
    try:
        return MEASURES[name](**kwargs)
    except TypeError as exc:
        raise EvalError(f"measure {text!r}: {exc}") from None


def parse_measures(names) -> tuple[Measure, ...]:
    """The measures of ``eval.measures``, checked: no repeats, ``AP`` and ``acc@1`` (parity) and at least
    one pair measure present."""
    measures = tuple(parse_measure(n) for n in names)
    seen = [str(m) for m in measures]
    repeated = sorted({n for n in seen if seen.count(n) > 1})
    if repeated:
        raise EvalError(f"measures {repeated} are listed twice")
    for needed in ("AP", "acc@1"):
        if needed not in seen:
            raise EvalError(f"measures must include {needed} (parity is built on AP and acc@1), got {seen}")
    if not any(isinstance(m, PairMeasure) for m in measures):
        raise EvalError(f"measures must include a pair measure such as AO or RBO(p=0.98), got {seen}")
    return measures
