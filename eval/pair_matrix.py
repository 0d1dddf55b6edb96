"""Several models' evaluation results side by side: per query pair and model, the asymmetry ``1-X`` of each
graded pair measure (``1-AO``, ``1-RBO(p=0.98)``), the pair's gap ``X_M-X_F`` of each graded ``Gap(X)``
(``AP_M-AP_F``, ``nDCG@10_M-nDCG@10_F``), and each form's AP and top-k hit.

Inputs are the language blocks of ``eval.evaluate.evaluate`` results (their ``per_pair`` and ``per_query``
rows), one per model, over the same test set, and the measures they were scored with."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from eval.errors import AuditError
from eval.measures import Gap, Measure, PairMeasure

__all__ = ["PairMatrix", "pair_matrix", "per_pair_vectors"]


def per_pair_vectors(measures: Sequence[Measure]) -> list[tuple[str, Measure]]:
    """The per-pair vectors the audit compares between models, named as in its outputs: ``1-X`` of each graded
    pair measure, then ``X_M-X_F`` of each gap of a graded query measure (a yes/no measure's pair gap takes three
    values; like identical_top1 it is not a graded asymmetry)."""
    return [(f"1-{m}", m) for m in measures if isinstance(m, PairMeasure) and not m.boolean] + \
           [(m.pair_key, m) for m in measures if isinstance(m, Gap) and not m.measure.boolean]


@dataclass
class PairMatrix:
    """Aligned (pairs, models) arrays for one language and corpus variant."""

    corpus: str
    models: list[str]
    pairs: list[tuple[str, str, str]]  # (pair_id, m_id, f_id)
    values: dict[str, np.ndarray]  # per_pair_vectors name -> (pairs, models); NaN where a form has no relevant title
    ap_m: np.ndarray
    ap_f: np.ndarray
    hit_m: np.ndarray  # relevant title in the top k (1.0 / 0.0), NaN without relevant titles
    hit_f: np.ndarray

    @property
    def scorable(self) -> np.ndarray:
        """Pairs whose two forms have relevant titles in the corpus variant (the same for every model)."""
        return ~(np.isnan(self.ap_m).any(axis=1) | np.isnan(self.ap_f).any(axis=1))


def _nan(v) -> float:
    return float("nan") if v is None else float(v)


def pair_matrix(blocks: Mapping[str, dict], corpus: str, k: int, measures: Sequence[Measure]) -> PairMatrix:
    """Per-pair vectors (``per_pair_vectors(measures)``) of several models from their language blocks (model name
    -> block, same test set)."""
    models = list(blocks)
    vectors = per_pair_vectors(measures)
    keys: list[tuple[str, str, str]] | None = None
    cols: dict[str, list[np.ndarray]] = {m: [] for m in (*(name for name, _ in vectors), "ap_m", "ap_f", "hit_m", "hit_f")}
    for name in models:
        block = blocks[name]
        rows = [r for r in block["per_pair"] if r["corpus"] == corpus]
        these = [(r["pair_id"], r["m_id"], r["f_id"]) for r in rows]
        if keys is None:
            keys = these
        elif these != keys:
            raise AuditError(f"model {name!r} was scored on other query pairs than {models[0]!r}; audit results of one test set")
        queries = {r["query_id"]: r for r in block["per_query"] if r["corpus"] == corpus}
        first_query = next(iter(queries.values()), None)
        acc_key = f"acc@{k}"
        if first_query is not None and acc_key not in first_query:
            raise AuditError(f"model {name!r}: results hold no {acc_key}; evaluate with accuracy_k including {k}")
        for vector, m in vectors:
            if isinstance(m, Gap):
                if first_query is not None and str(m.measure) not in first_query:
                    raise AuditError(f"model {name!r}: results hold no {m.measure}; evaluate every model with the same measures")
                column = str(m.measure)
                cols[vector].append(np.array([_nan(queries[mq][column]) - _nan(queries[fq][column]) for _, mq, fq in these]))
            else:
                if rows and str(m) not in rows[0]:
                    raise AuditError(f"model {name!r}: results hold no {m}; evaluate every model with the same measures")
                cols[vector].append(np.array([1.0 - r[str(m)] for r in rows]))
        cols["ap_m"].append(np.array([_nan(r["AP_M"]) for r in rows]))
        cols["ap_f"].append(np.array([_nan(r["AP_F"]) for r in rows]))
        cols["hit_m"].append(np.array([_nan(queries[m][acc_key]) for _, m, _ in these]))
        cols["hit_f"].append(np.array([_nan(queries[f][acc_key]) for _, _, f in these]))
    stack = {name: (np.stack(v, axis=1) if v and len(v[0]) else np.zeros((0, len(models)))) for name, v in cols.items()}
    return PairMatrix(
        corpus, models, keys or [], {name: stack[name] for name, _ in vectors},
        stack["ap_m"], stack["ap_f"], stack["hit_m"], stack["hit_f"],
    )
