"""How alike two models' per-pair vectors are: Pearson r and Spearman rho (``scipy.stats``), each with a
percentile bootstrap interval over pairs that resamples the same pairs for both vectors (docs/audit.md).

A correlation with a constant vector or fewer than two pairs is undefined: NaN with the reason in words,
never a crash or a warning."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from eval.stats import percentile_interval, resample_indices

CORRELATIONS = ("pearson", "spearman")

__all__ = ["CORRELATIONS", "pearson", "spearman", "correlation_with_ci"]


def _pearson_last_axis(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``scipy.stats.pearsonr`` along the last axis (one r per row of a resample matrix); NaN where a row is
    constant, which a resample of a varying vector can be."""
    from scipy import stats

    with warnings.catch_warnings():  # the NaN is the answer for such a resample; it is counted, not warned
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        warnings.simplefilter("ignore", stats.NearConstantInputWarning)
        return np.asarray(stats.pearsonr(x, y, axis=-1).statistic, dtype=np.float64)


def _ranks_last_axis(x: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return rankdata(x, axis=-1)  # ties get their average rank, as in scipy.stats.spearmanr


def _undefined_reason(x: np.ndarray, y: np.ndarray, names: tuple[str, str]) -> str | None:
    for v, name in ((x, names[0]), (y, names[1])):
        if v.size < 2:
            return f"fewer than 2 pairs ({v.size}): correlation undefined"
        if np.ptp(v) == 0:
            return f"{name} is constant (every pair {v[0]:g}): correlation undefined"
    return None


def _check_vectors(x, y) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"two vectors of the same length are needed, got {x.shape} and {y.shape}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("vectors contain NaN; keep only the pairs every model scores")
    return x, y


def pearson(x: Sequence[float], y: Sequence[float], names: tuple[str, str] = ("x", "y")) -> tuple[float, str | None]:
    """Pearson r (``scipy.stats.pearsonr``) and, when it is undefined (a constant vector, fewer than 2
    values), NaN and the reason."""
    x, y = _check_vectors(x, y)
    reason = _undefined_reason(x, y, names)
    if reason:
        return float("nan"), reason
    return float(_pearson_last_axis(x, y)), None


def spearman(x: Sequence[float], y: Sequence[float], names: tuple[str, str] = ("x", "y")) -> tuple[float, str | None]:
    """Spearman rho (``scipy.stats.spearmanr``: Pearson r of average ranks) and, when undefined, NaN and the
    reason."""
    from scipy import stats

    x, y = _check_vectors(x, y)
    reason = _undefined_reason(x, y, names)
    if reason:
        return float("nan"), reason
    return float(stats.spearmanr(x, y).statistic), None


def correlation_with_ci(
    x: Sequence[float], y: Sequence[float], method: str, *, resamples: int = 1000, seed: int = 0,
    names: tuple[str, str] = ("x", "y"),
) -> dict:
    """``{"value", "ci95", "n", "reason", "undefined_resamples"}``: the correlation and a percentile bootstrap
    over pairs (the same resampled pairs for both vectors); resamples on which it is undefined are left out
    of the interval and counted."""
    if method not in CORRELATIONS:
        raise ValueError(f"method must be one of {CORRELATIONS}, got {method!r}")
    x, y = _check_vectors(x, y)
    value, reason = (pearson if method == "pearson" else spearman)(x, y, names)
    out = {"value": None if reason else value, "ci95": [None, None], "n": int(x.size), "reason": reason,
           "undefined_resamples": None}
    if reason:
        return out
    idx = resample_indices(x.size, resamples=resamples, seed=seed)
    xs, ys = x[idx], y[idx]
    if method == "spearman":
        xs, ys = _ranks_last_axis(xs), _ranks_last_axis(ys)
    estimates = _pearson_last_axis(xs, ys)
    lo, hi = percentile_interval(estimates)
    out["ci95"] = [None if math.isnan(lo) else lo, None if math.isnan(hi) else hi]
    out["undefined_resamples"] = int(np.isnan(estimates).sum())
    return out
