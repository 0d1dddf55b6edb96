"""The ``eval:`` and ``audit:`` sections of params.yaml as typed settings, with their defaults here only.

``read_eval_settings(path)`` / ``read_audit_settings(path)`` read them through ``config`` (the one reader
of params.yaml): an unknown key, a wrong type or a refused value stops the run with the file and the
dotted key in the message. ``EvalSettings`` is also what ``eval.evaluate`` computes with; its
``describe()`` is the ``settings`` block of every results document (what shapes a result, not where the
inputs come from).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from config import ConfigError, read_params, section
from eval.errors import AuditError, EvalError
from eval.measures import (
    DEFAULT_MEASURES,
    Accuracy,
    Gap,
    Measure,
    PairMeasure,
    QueryMeasure,
    RankBiasedOverlap,
    gap_definitions,
    parse_measure,
    parse_measures,
)
from eval.ranking import SCORES, SELF_MATCH_RULES, TIE_BREAK, check_policy

__all__ = ["EvalSettings", "AuditSettings", "read_eval_settings", "read_audit_settings"]

# The models scored when params.yaml names none: the paper's model, a small multilingual e5 and the lexical
# floor (eval/models.py declares each).
DEFAULT_MODELS = ("m-use", "m-e5-small-q4", "tfidf-char")
DEFAULT_CORPORA = ("masculine", "feminine")
KNOWN_CORPORA = ("masculine", "feminine", "doublet")


@dataclass(frozen=True)
class EvalSettings:
    """params.yaml ``eval:``. ``models``: built-in names, sentence-transformers folders or Hugging Face ids
    (``eval.models``); ``languages``: None for every language under --data; ``cache``: the embedding cache
    folder; ``measures``: names of ``eval.measures`` objects, in report order; the rest shapes the figures."""

    models: tuple[str, ...] = DEFAULT_MODELS
    languages: tuple[str, ...] | None = None
    self_match: str = "drop"
    measures: tuple[str, ...] = DEFAULT_MEASURES
    bootstrap_resamples: int = 1000
    permutation_resamples: int = 10000
    seed: int = 0
    worst_pairs: int = 10
    list_depth: int = 20
    cache: str = "cache/embeddings"
    # Working memory for one block of queries (scores, rankings, flags), in MiB; results do not depend on it.
    memory_budget_mb: float = 256
    # Corpus variants scored (TestSet.corpus_for): masculine, feminine, and doublet (the corpus as job ads are
    # written; needs a build with build.forms.corpus: true).
    corpora: tuple[str, ...] = DEFAULT_CORPORA

    def __post_init__(self) -> None:
        try:
            check_policy(self.self_match)
        except ValueError as exc:
            raise EvalError(f"eval.self_match: {exc}") from None
        if isinstance(self.memory_budget_mb, bool) or not isinstance(self.memory_budget_mb, (int, float)) or not self.memory_budget_mb > 0:
            raise EvalError(f"eval.memory_budget_mb must be a number of MiB > 0 (e.g. 256), got {self.memory_budget_mb!r}")
        try:
            parsed = parse_measures(self.measures)
        except EvalError as exc:
            raise EvalError(f"eval.measures: {exc}") from None
        object.__setattr__(self, "measures", tuple(str(m) for m in parsed))
        corpora = tuple(self.corpora) if isinstance(self.corpora, (list, tuple)) else ()
        if not corpora or any(c not in KNOWN_CORPORA for c in corpora) or len(set(corpora)) < len(corpora):
            raise EvalError(f"eval.corpora is {self.corpora!r}; list corpus variants from {list(KNOWN_CORPORA)}, each once "
                            "(default [masculine, feminine]; doublet needs a build with build.forms.corpus: true)")
        object.__setattr__(self, "corpora", corpora)
        if not self.models or not all(isinstance(m, str) and m.strip() for m in self.models):
            raise EvalError(f"eval.models is {list(self.models)!r}; list at least one model name")
        for name in ("bootstrap_resamples", "permutation_resamples", "list_depth"):
            if getattr(self, name) < 1:
                raise EvalError(f"eval.{name} must be >= 1, got {getattr(self, name)}")
        if self.worst_pairs < 0:
            raise EvalError(f"eval.worst_pairs must be >= 0, got {self.worst_pairs}")
        if self.seed < 0:  # numpy's generators take no negative seed: refused here, not as a traceback mid-run
            raise EvalError(f"eval.seed must be >= 0, got {self.seed}")

    def with_measures(self, *extra: str) -> "EvalSettings":
        """These settings with ``extra`` measures added (those already listed are kept once)."""
        return replace(self, measures=self.measures + tuple(m for m in extra if m not in self.measures))

    @property
    def measure_objects(self) -> tuple[Measure, ...]:
        return tuple(parse_measure(m) for m in self.measures)

    @property
    def pair_measures(self) -> tuple[PairMeasure, ...]:
        return tuple(m for m in self.measure_objects if isinstance(m, PairMeasure))

    @property
    def query_measures(self) -> tuple[QueryMeasure, ...]:
        return tuple(m for m in self.measure_objects if isinstance(m, QueryMeasure))

    @property
    def gaps(self) -> tuple[Gap, ...]:
        return tuple(m for m in self.measure_objects if isinstance(m, Gap))

    @property
    def rbo_p(self) -> float | None:
        """The persistence of the first RBO measure (None without one)."""
        return next((m.p for m in self.measure_objects if isinstance(m, RankBiasedOverlap)), None)

    @property
    def rbo_name(self) -> str | None:
        return None if self.rbo_p is None else f"RBO(p={self.rbo_p:g})"

    @property
    def accuracy_k(self) -> tuple[int, ...]:
        return tuple(m.k for m in self.measure_objects if isinstance(m, Accuracy))

    @property
    def worst_by(self) -> str:
        """The pair measure the worst pairs are sorted by: RBO when measured, else the first graded one."""
        graded = [str(m) for m in self.pair_measures if not m.boolean]
        return self.rbo_name or (graded[0] if graded else str(self.pair_measures[0]))

    def describe(self) -> dict:
        """The results document's ``settings``: what shapes the figures. The memory budget changes how the work
        is cut into blocks, never a result, and models, languages and cache say what was run, not how: left out."""
        metrics: dict[str, str] = {}
        for m in self.measure_objects:
            if not isinstance(m, Gap):
                metrics.update(m.definitions())
        # The corpus variants are named only when not the default, so a default run's settings (and the stored
        # results keyed by them) are those of the toolkit before the doublet corpus existed.
        corpora = {} if self.corpora == DEFAULT_CORPORA else {"corpora": list(self.corpora)}
        return {
            "rbo_p": self.rbo_p, "self_match": self.self_match, "accuracy_k": list(self.accuracy_k), **corpora,
            "bootstrap_resamples": self.bootstrap_resamples, "permutation_resamples": self.permutation_resamples,
            "seed": self.seed, "worst_pairs": self.worst_pairs, "list_depth": self.list_depth,
            "metrics": {**metrics, **gap_definitions(self.gaps)},
            "self_match_rule": SELF_MATCH_RULES[self.self_match],
            "scores": SCORES,
            "tie_break": TIE_BREAK,
            "interval": f"percentile bootstrap 95% over queries or pairs, {self.bootstrap_resamples} resamples, seed {self.seed}",
        }


@dataclass(frozen=True)
class AuditSettings:
    """params.yaml ``audit:`` (models, languages, k, rho, tau, rho_grid, most_excluded, mitigation); the
    interval settings ``bootstrap_resamples`` and ``seed`` come from ``eval:`` (``read_audit_settings``)."""

    models: tuple[str, ...] = DEFAULT_MODELS
    languages: tuple[str, ...] | None = None
    k: int = 10
    rho: float = 0.1
    tau: int = 2
    rho_grid: tuple[float, ...] = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
    most_excluded: int = 15
    mitigation: bool = True
    bootstrap_resamples: int = 1000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.k < 1:
            raise AuditError(f"audit.k must be >= 1, got {self.k}")
        for r in (self.rho, *self.rho_grid):
            if not 0.0 <= r <= 1.0:
                raise AuditError(f"audit rho must be in [0, 1] (AP threshold), got {r}")
        if not self.rho_grid:
            raise AuditError("audit.rho_grid needs at least one rho for the exclusion heatmap")
        if self.most_excluded < 0:
            raise AuditError(f"audit.most_excluded must be >= 0, got {self.most_excluded}")

    def served_definition(self, n_models: int) -> str:
        return (
            f"a query is served by a model when at least one relevant title is in its top k={self.k} and its "
            f"AP >= rho={self.rho:g}, and fails otherwise; a pair is feminine-excluded when at least tau={self.tau} "
            f"of the {n_models} models fail its feminine form while serving its masculine form (each model judged on "
            "both forms), masculine-excluded the reverse; pairs whose forms have no relevant title in the corpus "
            "variant are left out"
        )

    def describe(self, n_models: int) -> dict:
        return {"k": self.k, "rho": self.rho, "tau": self.tau, "rho_grid": list(self.rho_grid),
                "most_excluded": self.most_excluded, "bootstrap_resamples": self.bootstrap_resamples, "seed": self.seed,
                "served": self.served_definition(n_models),
                "interval": f"percentile bootstrap 95% over query pairs, {self.bootstrap_resamples} resamples, seed "
                            f"{self.seed}; the same resampled pairs for every model"}


def _section(cls, params: dict, name: str, where: Path):
    try:
        return section(cls, params, name, where=where)
    except EvalError as exc:  # the section's own checks (__post_init__) name their key
        raise EvalError(f"{where}: {exc}") from None


def read_eval_settings(path: str | Path, *, required: bool = False) -> EvalSettings:
    """params.yaml's ``eval:`` section (a missing file or section: the defaults)."""
    try:
        return _section(EvalSettings, read_params(path, required=required), "eval", Path(path))
    except ConfigError as exc:
        raise EvalError(str(exc)) from None


def read_audit_settings(path: str | Path, eval_settings: EvalSettings | None = None, *, required: bool = False) -> AuditSettings:
    """params.yaml's ``audit:`` section, with ``bootstrap_resamples`` and ``seed`` from ``eval:``."""
    try:
        params = read_params(path, required=required)
        audit = params.get("audit") or {}
        shared = sorted({"bootstrap_resamples", "seed"} & set(audit))
        if shared:
            raise EvalError(f"{path}: audit.{shared[0]} is set in eval: (eval.{shared[0]}), not in audit:")
        eval_settings = eval_settings or _section(EvalSettings, params, "eval", Path(path))
        settings = _section(AuditSettings, params, "audit", Path(path))
    except ConfigError as exc:
        raise EvalError(str(exc)) from None
    return replace(settings, bootstrap_resamples=eval_settings.bootstrap_resamples, seed=eval_settings.seed)
