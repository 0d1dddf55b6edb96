"""Systemic exclusion (definitions in docs/audit.md): a query is **served** by a model when a relevant title
is in its top k and its AP >= rho, and **fails** otherwise. A pair is **feminine-excluded** when at least tau
models fail the feminine form while serving the masculine form (each model judged on both forms), and
masculine-excluded the reverse."""

from __future__ import annotations

import numpy as np

from eval.errors import AuditError

__all__ = ["check_tau", "served", "exclusion"]


def check_tau(tau: int, n_models: int) -> int:
    if not isinstance(tau, (int, np.integer)) or isinstance(tau, bool):
        raise AuditError(f"tau must be a whole number of models, got {tau!r}")
    if tau < 1:
        raise AuditError(f"tau must be at least 1 model, got {tau}")
    if tau > n_models:
        raise AuditError(
            f"tau = {tau} is larger than the number of models ({n_models}): no pair could ever be excluded by "
            f"{tau} models; use a tau between 1 and {n_models} or audit more models"
        )
    return int(tau)


def served(hit_at_k: np.ndarray, ap: np.ndarray, rho: float) -> np.ndarray:
    """True where a query is served: a relevant title in the top k (``hit_at_k`` 1) and AP >= rho."""
    hit_at_k = np.asarray(hit_at_k, dtype=np.float64)
    ap = np.asarray(ap, dtype=np.float64)
    if hit_at_k.shape != ap.shape:
        raise ValueError(f"hit_at_k {hit_at_k.shape} and ap {ap.shape} must have the same shape")
    if np.isnan(hit_at_k).any() or np.isnan(ap).any():
        raise ValueError("served is undefined for a query without relevant titles (NaN); leave those pairs out first")
    return (hit_at_k > 0) & (ap >= rho)


def exclusion(served_m: np.ndarray, served_f: np.ndarray, tau: int) -> dict[str, np.ndarray]:
    """Per pair (rows) over models (columns): how many models fail one form while serving the other, and
    whether at least ``tau`` do. ``both_failed``: at least tau models fail both forms (not a gender gap)."""
    served_m = np.asarray(served_m, dtype=bool)
    served_f = np.asarray(served_f, dtype=bool)
    if served_m.shape != served_f.shape or served_m.ndim != 2:
        raise ValueError(f"served_m {served_m.shape} and served_f {served_f.shape} must be the same (pairs, models) shape")
    check_tau(tau, served_m.shape[1])
    count_f = (served_m & ~served_f).sum(axis=1)
    count_m = (served_f & ~served_m).sum(axis=1)
    count_both = (~served_m & ~served_f).sum(axis=1)
    return {
        "feminine_count": count_f, "masculine_count": count_m, "both_failed_count": count_both,
        "feminine": count_f >= tau, "masculine": count_m >= tau, "both_failed": count_both >= tau,
    }
