"""Measures as named objects: what ``eval run`` computes, registered in one place.

A measure's printed form carries its parameters and is its key in every result: ``AO``, ``RBO(p=0.98)``,
``identical_top1``, ``AP``, ``acc@1``, ``RBO@20(p=0.9)`` (a pair measure of the top 20 only).
``params.yaml``'s ``eval.measures`` lists them by that name (``parse_measure`` turns a name back into the object), and the results document, the tables and the plots
read the names from there, so a new measure is one class here (or anywhere, with ``@register``) and one
line in ``params.yaml``.

Two kinds, by what one value is computed from (the values themselves come from the vectorised pure
functions of ``eval.metrics``, tested against ``rbo`` and ir-measures):

- a ``PairMeasure`` scores one masculine x feminine query pair from its two rankings over the same items
  (``PairRankings``); its figure per corpus is the mean over pairs, under the results' ``symmetry`` key;
- a ``QueryMeasure`` scores one query from its ranking and its relevant items (``QueryRankings``); its
  figure per corpus and query gender is the mean over the queries with a relevant item. ``AP``'s mean is
  MAP, under the results' ``MAP`` key; the others sit under the measure's ``section`` (``acc@k``:
  ``accuracy``, ``nDCG@k`` and a newcomer's: ``retrieval``). ``location`` says where, ``figures`` reads them.

A third kind wraps a query measure: ``Gap(X)`` is the gender gap of ``X`` (masculine minus feminine), as the
difference of the two genders' means with its interval and as the paired mean over query pairs with a
paired randomisation test; it is what the results' ``parity`` holds, the metrics rows, the report's parity
table and the audit's per-pair gaps read. ``Gap(AP)`` (the headline figure: the gap plot, the summary line)
and ``AP`` itself (per-pair rows, the audit's "served") are required; ``Gap(X)`` needs ``X`` listed.
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
    ndcg_from_hits,
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
    _tops: dict = field(default_factory=dict, repr=False)

    def symmetry(self, p: float) -> tuple[np.ndarray, np.ndarray]:
        if p not in self._symmetry:
            # rankings from one sort each, less some items: permutations, so no check for repeated items
            self._symmetry[p] = symmetry_batch(self.masculine, self.feminine, p, check=False)
        return self._symmetry[p]

    def average_overlap(self) -> np.ndarray:
        return self.symmetry(self.rbo_p[0] if self.rbo_p else 0.5)[0]  # AO does not depend on p

    def top(self, k: int) -> "PairRankings":
        """The two rankings cut to their first ``k`` items (after self-match removal, as eval ranks them): the
        lists the ``@k`` pair measures compare. Cut prefixes stay padded at the tail, of equal length per pair."""
        if k not in self._tops:
            self._tops[k] = PairRankings(self.masculine[:, :k], self.feminine[:, :k], self.rbo_p)
        return self._tops[k]


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
    reported per query gender under ``section``. ``boolean``: its value is yes/no (1.0 / 0.0), as acc@k's; a
    gap of such a measure is shown in tables but is not a graded per-pair asymmetry (the audit's correlations,
    the DVC metrics folder leave it out, as they leave out identical_top1)."""

    section: ClassVar[str] = "retrieval"
    boolean: ClassVar[bool] = False

    def per_query(self, queries: QueryRankings) -> np.ndarray:
        raise NotImplementedError

    @property
    def mean_name(self) -> str:
        """The name of its mean over queries (AP's is MAP): the key stem of its gap's difference."""
        return str(self)

    @property
    def location(self) -> tuple[str, ...]:
        """Where its ``{gender: figure}`` sits in a corpus block of the results."""
        return (self.section, str(self))

    def figures(self, corpus_block: dict) -> dict | None:
        """Its ``{gender: figure}`` in a corpus block of a results document (None where not measured)."""
        node = corpus_block
        for key in self.location:
            node = (node or {}).get(key)
        return node


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


class DepthMeasure(PairMeasure):
    """A pair measure of the two rankings' first ``k`` items only (``<name>@<k>``), for a figure that a study
    reports at a depth (the ESCO notebook's RBO@20). It is the measure of full depth applied to the cut
    lists, so the cut lists' own lengths (k, or fewer for a shorter ranking) are the depth of its formula."""

    def __init__(self, k: int) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise EvalError(f"{self.name} needs a depth k >= 1, got {k!r}")
        self.k = k


@register
class AverageOverlapAtDepth(DepthMeasure):
    """AO of the top-k lists: ``(1/k) sum_{d<=k} X_d / d``; what the ``rbo`` package's ``RankingSimilarity(a, b)
    .rbo(k=k)`` computes with its default p = 1."""

    name = "AO@k"

    def __str__(self) -> str:
        return f"AO@{self.k}"

    def describe(self) -> str:
        return f"average overlap of the two rankings' top {self.k}: (1/{self.k}) sum_(d<={self.k}) |A[:d] & B[:d]| / d"

    def per_pair(self, pairs: PairRankings) -> np.ndarray:
        return pairs.top(self.k).average_overlap()


@register
class RankBiasedOverlapAtDepth(DepthMeasure):
    """RBO_ext (eq. 32, lists of equal length) of the top-k lists: the point estimate from what the top k show,
    ``(1-p)/p sum_{d<=k} X_d/d p^d + X_k/k p^k``. The ``rbo`` package computes the same from the cut lists with
    ``rbo_ext(p)`` and with ``rbo(p=p, ext=True)``; its ``rbo(p=p)`` without ``ext`` is the bare prefix sum
    ``(1-p) sum_{d<=k} p^(d-1) X_d/d``, a lower bound not above RBO_min (identical top-k lists score 1 - p^k there)."""

    name = "RBO@k"

    def __init__(self, k: int, p: float = 0.98) -> None:
        super().__init__(k)
        self.p = RankBiasedOverlap(p).p  # the same check of p

    def __str__(self) -> str:
        return f"RBO@{self.k}(p={self.p:g})"

    def describe(self) -> str:
        return f"RBO_ext (Webber, Moffat & Zobel 2010, eq. 32) of the two rankings' top {self.k}, p = {self.p:g}"

    def per_pair(self, pairs: PairRankings) -> np.ndarray:
        return pairs.top(self.k).symmetry(self.p)[1]


@register
class IdenticalTop1(PairMeasure):
    name = "identical_top1"
    definition = "share of pairs whose masculine and feminine rankings put the same item first"
    boolean = True

    def per_pair(self, pairs: PairRankings) -> np.ndarray:
        return identical_top1_batch(pairs.masculine, pairs.feminine)


class CutoffMeasure(QueryMeasure):
    """A query measure of the top k (``<name>@<k>``): the cut-off checked and named once for all of them."""

    default_k = 1

    def __init__(self, k: int | None = None) -> None:
        k = self.default_k if k is None else k
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise EvalError(f"{self.name}@k needs a cut-off k >= 1, got {k!r}")
        self.k = k

    def __str__(self) -> str:
        return f"{self.name}@{self.k}"


@register
class AveragePrecision(QueryMeasure):
    name = "AP"
    definition = "average precision, trec_eval semantics (relevant items never retrieved count)"
    section = "MAP"  # its mean is MAP, reported as MAP: {gender: figure}

    def definitions(self) -> dict[str, str]:
        return {"AP": self.definition, "MAP": "mean AP over queries with >= 1 relevant item in the corpus variant"}

    @property
    def mean_name(self) -> str:
        return "MAP"

    @property
    def location(self) -> tuple[str, ...]:
        return ("MAP",)

    def per_query(self, queries: QueryRankings) -> np.ndarray:
        return average_precision_from_hits(queries.hit_rows, queries.hit_positions, queries.n_relevant)


@register
class Accuracy(CutoffMeasure):
    """Success@k: a relevant item in the top k (named ``acc@k`` in this project's results)."""

    name = "acc"
    section = "accuracy"
    boolean = True
    default_k = 1

    def describe(self) -> str:
        return f"share of queries with a relevant item in the top {self.k}"

    def per_query(self, queries: QueryRankings) -> np.ndarray:
        return accuracy_from_first_hit(queries.first_hit, queries.n_relevant > 0, self.k)


@register
class NDCG(CutoffMeasure):
    """nDCG@k with binary gains, trec_eval's ``ndcg_cut.k`` (tested against ir-measures): the discounted gain of
    the relevant items in the top k over that of an ideal ranking."""

    name = "nDCG"
    default_k = 10

    def describe(self) -> str:
        return (f"normalised discounted cumulative gain at {self.k}, binary gains, 1/log2(rank + 1) discount, "
                "ideal ranking from every relevant item (trec_eval ndcg_cut)")

    def per_query(self, queries: QueryRankings) -> np.ndarray:
        return ndcg_from_hits(queries.hit_rows, queries.hit_positions, queries.n_relevant, self.k)


GENDER_SHORT = {"masculine": "M", "feminine": "F"}


@register
class Gap(Measure):
    """The gender gap of a query measure ``X``, masculine minus feminine, in two forms computed from the same
    per-query values: the difference of the two genders' means (``MAP_M-MAP_F``: independent groups, each
    gender's queries resampled on their own for the interval) and the paired mean over query pairs
    (``paired_AP_M-AP_F``, both queries with relevant items) with a two-sided paired randomisation test. Its
    keys are named from ``X`` so the results of ``Gap(AP)`` and ``Gap(acc@1)`` are those published before the
    gap was a measure."""

    name = "Gap"

    def __init__(self, measure: "QueryMeasure | str") -> None:
        measure = parse_measure(measure) if isinstance(measure, str) else measure
        if not isinstance(measure, QueryMeasure):
            raise EvalError(f"Gap wraps a query measure (AP, acc@k, nDCG@k, ...), not {measure}: a pair measure already "
                            "compares the masculine and the feminine ranking")
        self.measure = measure

    def __str__(self) -> str:
        return f"Gap({self.measure})"

    @property
    def difference_key(self) -> str:
        """The difference of the two genders' means: ``MAP_M-MAP_F``, ``acc@1_M-acc@1_F``."""
        return f"{self.measure.mean_name}_M-{self.measure.mean_name}_F"

    @property
    def paired_key(self) -> str:
        """The paired mean over query pairs: ``paired_AP_M-AP_F``."""
        return f"paired_{self.measure}_M-{self.measure}_F"

    @property
    def pair_key(self) -> str:
        """Its value for one query pair (the audit's per-pair vectors): ``AP_M-AP_F``."""
        return f"{self.measure}_M-{self.measure}_F"

    def form_key(self, form: str, reference: str) -> str:
        """An extra query form's paired gap against the masculine or feminine query: ``paired_AP_doublet-AP_M``."""
        return f"paired_{self.measure}_{form}-{self.measure}_{GENDER_SHORT[reference]}"

    def definitions(self) -> dict[str, str]:
        return gap_definitions((self,))


def gap_definitions(gaps) -> dict[str, str]:
    """The results' ``settings.metrics`` entries of the gaps: every difference, then every paired form; the first
    of each kind says its interval or test in full, the others refer to it (the texts results have held since the
    parity block was written by hand, so a default run's settings and the results stored under them stay)."""
    out: dict[str, str] = {}
    for i, g in enumerate(gaps):
        mean = g.measure.mean_name
        out[g.difference_key] = (
            f"{mean} of masculine queries minus {mean} of feminine queries "
            + (f"(the {mean} figures' difference); interval: each gender's queries resampled on their own" if i == 0
               else "(same interval)"))
    for i, g in enumerate(gaps):
        m = g.measure
        out[g.paired_key] = (
            f"mean over query pairs (both with relevant items) of {m}_M - {m}_F; paired randomisation (sign-flip) test, two-sided"
            if i == 0 else f"mean over query pairs of {m}_M - {m}_F; paired randomisation test, two-sided")
    return out


_PAIRED_KEY = re.compile(r"paired_(?P<measure>.+)_M-(?P=measure)_F")


def gaps_in(parity: dict) -> list[Gap]:
    """The gaps of a results document's ``parity`` block, in its order (read back from their paired keys)."""
    return [Gap(m["measure"]) for key in parity if (m := _PAIRED_KEY.fullmatch(key))]


# The default figures, in the order their definitions appear in results documents; nDCG@10 is the score BEIR and
# MTEB report first (the golden files of earlier toolkits were made without it: tests/eval/golden.py).
DEFAULT_MEASURES = ("AO", "RBO(p=0.98)", "AP", "acc@1", "acc@5", "acc@10", "nDCG@10", "identical_top1", "Gap(AP)", "Gap(acc@1)")

_CALL = re.compile(r"(?P<name>[A-Za-z_][\w-]*)(?:\((?P<args>[^()]*)\))?")
_AT = re.compile(r"(?P<name>[A-Za-z_][\w-]*)@(?P<k>\d+)(?:\((?P<args>[^()]*)\))?")
_GAP = re.compile(r"Gap\((?P<inner>.*)\)")


def _parameters(text: str, args: str | None) -> dict:
    """The ``key=value`` numbers inside a measure name's parentheses."""
    kwargs: dict = {}
    for part in filter(None, (a.strip() for a in (args or "").split(","))):
        key, sep, value = part.partition("=")
        if not sep:
            raise EvalError(f"measure {text!r}: parameters are key=value (e.g. RBO(p=0.98)), got {part!r}")
        try:
            kwargs[key.strip()] = int(value) if re.fullmatch(r"-?\d+", value.strip()) else float(value)
        except ValueError:
            raise EvalError(f"measure {text!r}: {key.strip()}={value.strip()!r} is not a number") from None
    return kwargs


def parse_measure(text: str) -> Measure:
    """The measure named ``text``: ``AO``, ``RBO(p=0.98)``, ``acc@5``, ``RBO@20(p=0.9)`` (``name@k(...)`` is the
    class registered as ``name@k`` with ``k=k``, else ``name(k=k, ...)``)."""
    if not isinstance(text, str):
        raise EvalError(f"a measure is named by a string such as 'AO' or 'RBO(p=0.98)', got {text!r}")
    text = text.strip()
    if m := _GAP.fullmatch(text):  # a measure of a measure: Gap(nDCG@10)
        try:
            return Gap(m["inner"])
        except EvalError as exc:
            raise EvalError(f"measure {text!r}: {exc}") from None
    if m := _AT.fullmatch(text):
        # NAME@k(...) is the class registered as "NAME@k" (a measure of the top k: RBO@20(p=0.9)), else NAME's (acc@5)
        name = f"{m['name']}@k" if f"{m['name']}@k" in MEASURES else m["name"]
        kwargs = _parameters(text, m["args"])
        if "k" in kwargs:
            raise EvalError(f"measure {text!r}: the depth is the number after @ ({m['name']}@{m['k']}); leave k= out")
        kwargs["k"] = int(m["k"])
    elif m := _CALL.fullmatch(text):
        name, kwargs = m["name"], _parameters(text, m["args"])
    else:
        raise EvalError(f"measure {text!r}: not a measure name; write NAME, NAME(key=value) or NAME@k (known: {sorted(MEASURES)})")
    if name not in MEASURES:
        raise EvalError(f"unknown measure {name!r} in {text!r}; known: {sorted(MEASURES)} (eval/measures.py registers them)")
    try:
        return MEASURES[name](**kwargs)
    except TypeError as exc:
        raise EvalError(f"measure {text!r}: {exc}") from None


def parse_measures(names) -> tuple[Measure, ...]:
    """The measures of ``eval.measures``, checked: no repeats, ``AP`` and ``Gap(AP)`` present, every ``Gap(X)``
    with its ``X`` listed, and at least one pair measure."""
    measures = tuple(parse_measure(n) for n in names)
    seen = [str(m) for m in measures]
    repeated = sorted({n for n in seen if seen.count(n) > 1})
    if repeated:
        raise EvalError(f"measures {repeated} are listed twice")
    for needed, why in (("AP", "per-pair rows and the audit's 'served' use AP"),
                        ("Gap(AP)", "the gap plot and the summary line show it")):
        if needed not in seen:
            raise EvalError(f"measures must include {needed} ({why}), got {seen}")
    for gap in (m for m in measures if isinstance(m, Gap)):
        if str(gap.measure) not in seen:
            raise EvalError(f"{gap} needs {gap.measure} among the measures too, got {seen}")
    if not any(isinstance(m, PairMeasure) for m in measures):
        raise EvalError(f"measures must include a pair measure such as AO or RBO(p=0.98), got {seen}")
    return measures
