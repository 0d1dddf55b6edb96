"""The normalisation mitigation measured before and after (definitions in docs/audit.md): symmetry, MAP and
accuracy of one model and corpus variant on the original and on the normalised test set (``eval.mitigation``),
over the pairs that still differ after normalisation; the pairs made identical are counted apart."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from eval.errors import AuditError
from eval.stats import mean_figure

if TYPE_CHECKING:
    from eval.audit import AuditSettings

__all__ = ["TAUTOLOGY_NOTE", "mitigation_corpus"]


def _nan(v) -> float:
    return float("nan") if v is None else float(v)


def _mean(values: np.ndarray, settings: AuditSettings) -> dict:
    return mean_figure(values, resamples=settings.bootstrap_resamples, seed=settings.seed)


TAUTOLOGY_NOTE = (
    "pairs whose normalised masculine and feminine forms are the same string get symmetry 1.0 by construction "
    "(one string, one embedding, one ranking): a tautology, not an effect; they are reported apart and left out "
    "of the effect estimate, which uses only the pairs that still differ after normalisation"
)


def mitigation_corpus(before: dict, after: dict, split: pl.DataFrame, corpus: str, rbo_name: str,
                      settings: AuditSettings) -> dict:
    """Symmetry, MAP and accuracy of one model and corpus variant before and after normalisation.

    ``before``/``after``: ``evaluate_language`` blocks on the original and the normalised test set;
    ``split``: ``eval.mitigation.split_pairs`` of the original test set."""
    identical = {(p, m, f): bool(x) for p, m, f, x in split.select("pair_id", "m_id", "f_id", "identical_after").iter_rows()}
    rows_b = {(r["pair_id"], r["m_id"], r["f_id"]): r for r in before["per_pair"] if r["corpus"] == corpus}
    rows_a = {(r["pair_id"], r["m_id"], r["f_id"]): r for r in after["per_pair"] if r["corpus"] == corpus}
    if set(rows_b) != set(rows_a) or set(rows_b) - set(identical):
        raise AuditError("before/after results cover different query pairs; run both on the same test set")
    keys = sorted(rows_b)
    same = np.array([identical[k] for k in keys], dtype=bool)

    def vec(rows, metric, mask):
        return np.array([_nan(rows[k][metric]) for k, keep in zip(keys, mask) if keep])

    def before_after(metric: str, mask: np.ndarray) -> dict:
        b, a = vec(rows_b, metric, mask), vec(rows_a, metric, mask)
        ok = ~(np.isnan(b) | np.isnan(a))
        return {"before": _mean(b[ok], settings), "after": _mean(a[ok], settings),
                "change": _mean(a[ok] - b[ok], settings)}

    out: dict = {
        "note": TAUTOLOGY_NOTE,
        "pairs": len(keys),
        "identical_after_normalisation": {
            "n": int(same.sum()),
            "symmetry_by_construction": True,
            "AO_after": _mean(vec(rows_a, "AO", same), settings),
            rbo_name + "_after": _mean(vec(rows_a, rbo_name, same), settings),
        },
        "still_different": {"n": int((~same).sum())},
    }
    for metric in ("AO", rbo_name, "identical_top1"):
        out["still_different"][metric] = before_after(metric, ~same)
    gap_b = vec(rows_b, "AP_M", ~same) - vec(rows_b, "AP_F", ~same)
    gap_a = vec(rows_a, "AP_M", ~same) - vec(rows_a, "AP_F", ~same)
    ok = ~(np.isnan(gap_b) | np.isnan(gap_a))
    out["still_different"]["AP_M-AP_F"] = {"before": _mean(gap_b[ok], settings), "after": _mean(gap_a[ok], settings)}
    # MAP and acc@1 of each form restricted to the pairs that still differ: the identical pairs would add the
    # same query twice after normalisation and pull the feminine figures to the masculine ones by construction.
    query_b = {r["query_id"]: r for r in before["per_query"] if r["corpus"] == corpus}
    query_a = {r["query_id"]: r for r in after["per_query"] if r["corpus"] == corpus}
    diff_keys = [k for k, keep in zip(keys, ~same) if keep]
    for side, pos in (("F", 2), ("M", 1)):
        for name, field in (("MAP", "AP"), ("acc@1", "acc@1")):
            b = np.array([_nan(query_b[k[pos]][field]) for k in diff_keys])
            a = np.array([_nan(query_a[k[pos]][field]) for k in diff_keys])
            keep = ~(np.isnan(b) | np.isnan(a))
            out["still_different"][f"{name}_{side}"] = {"before": _mean(b[keep], settings), "after": _mean(a[keep], settings),
                                                        "change": _mean(a[keep] - b[keep], settings)}
    out["all_pairs_including_tautology"] = {
        metric: {"before": _mean(vec(rows_b, metric, np.ones_like(same)), settings),
                 "after": _mean(vec(rows_a, metric, np.ones_like(same)), settings)}
        for metric in ("AO", rbo_name)
    }
    cb, ca = before["corpora"][corpus], after["corpora"][corpus]
    out["MAP"] = {g: {"before": cb["MAP"][g], "after": ca["MAP"][g]} for g in ("feminine", "masculine", "neutral")}
    out["accuracy"] = {
        key: {g: {"before": cb["accuracy"][key][g], "after": ca["accuracy"][key][g]} for g in ("feminine", "masculine", "neutral")}
        for key in cb["accuracy"]
    }
    return out
