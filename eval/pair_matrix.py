"""Several models' evaluation results side by side: per query pair and model, the asymmetry ``1-AO`` and
``1-RBO(p)`` of the masculine and feminine rankings, the gap ``AP_M-AP_F``, and each form's AP and top-k hit.

Inputs are the language blocks of ``eval.evaluate.evaluate`` results (their ``per_pair`` and ``per_query``
rows), one per model, over the same test set."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from eval.errors import AuditError

MEASURES = ("1-AO", "1-RBO", "AP_M-AP_F")  # "1-RBO" is named with its p in every output

__all__ = ["MEASURES", "PairMatrix", "pair_matrix"]


@dataclass
class PairMatrix:
    """Aligned (pairs, models) arrays for one language and corpus variant."""

    corpus: str
    models: list[str]
    pairs: list[tuple[str, str, str]]  # (pair_id, m_id, f_id)
    values: dict[str, np.ndarray]  # measure name -> (pairs, models); NaN where a form has no relevant title
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


def pair_matrix(blocks: Mapping[str, dict], corpus: str, k: int, rbo_name: str) -> PairMatrix:
    """Per-pair measures of several models from their language blocks (model name -> block, same test set)."""
    models = list(blocks)
    keys: list[tuple[str, str, str]] | None = None
    cols: dict[str, list[np.ndarray]] = {m: [] for m in ("1-AO", "1-RBO", "AP_M-AP_F", "ap_m", "ap_f", "hit_m", "hit_f")}
    for name in models:
        block = blocks[name]
        rows = [r for r in block["per_pair"] if r["corpus"] == corpus]
        these = [(r["pair_id"], r["m_id"], r["f_id"]) for r in rows]
        if keys is None:
            keys = these
        elif these != keys:
            raise AuditError(f"model {name!r} was scored on other query pairs than {models[0]!r}; audit results of one test set")
        queries = {r["query_id"]: r for r in block["per_query"] if r["corpus"] == corpus}
        acc_key = f"acc@{k}"
        if queries and acc_key not in next(iter(queries.values())):
            raise AuditError(f"model {name!r}: results hold no {acc_key}; evaluate with accuracy_k including {k}")
        if rbo_name not in (rows[0] if rows else {rbo_name: 0}):
            raise AuditError(f"model {name!r}: results hold no {rbo_name}; evaluate with the same RBO p")
        cols["1-AO"].append(np.array([1.0 - r["AO"] for r in rows]))
        cols["1-RBO"].append(np.array([1.0 - r[rbo_name] for r in rows]))
        ap_m = np.array([_nan(r["AP_M"]) for r in rows])
        ap_f = np.array([_nan(r["AP_F"]) for r in rows])
        cols["AP_M-AP_F"].append(ap_m - ap_f)
        cols["ap_m"].append(ap_m)
        cols["ap_f"].append(ap_f)
        cols["hit_m"].append(np.array([_nan(queries[m][acc_key]) for _, m, _ in these]))
        cols["hit_f"].append(np.array([_nan(queries[f][acc_key]) for _, _, f in these]))
    stack = {name: (np.stack(v, axis=1) if v and len(v[0]) else np.zeros((0, len(models)))) for name, v in cols.items()}
    return PairMatrix(
        corpus, models, keys or [],
        {"1-AO": stack["1-AO"], "1-RBO": stack["1-RBO"], "AP_M-AP_F": stack["AP_M-AP_F"]},
        stack["ap_m"], stack["ap_f"], stack["hit_m"], stack["hit_f"],
    )
