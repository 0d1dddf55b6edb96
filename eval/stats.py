"""Uncertainty for every reported figure: percentile bootstrap over queries (or pairs) and a paired
randomisation (sign-flip) test for gender gaps. Seeded, so a re-run gives the same intervals."""

from __future__ import annotations

import numpy as np


def resample_indices(n: int, *, resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """Bootstrap draws (resamples, n) of row indices 0..n-1 with replacement: the draws ``bootstrap_ci``
    makes, so a statistic of several aligned vectors (paired across models) resamples the same rows."""
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def percentile_interval(estimates: np.ndarray, *, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of bootstrap estimates; NaN estimates (undefined on a resample) are left out."""
    estimates = np.asarray(estimates, dtype=np.float64)
    estimates = estimates[~np.isnan(estimates)]
    if estimates.size == 0:
        return (float("nan"), float("nan"))
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(estimates, [tail, 100 - tail])
    return float(lo), float(hi)


def bootstrap_ci(values: np.ndarray, *, resamples: int = 1000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (resampling them with replacement)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return (float("nan"), float("nan"))
    means = values[resample_indices(values.size, resamples=resamples, seed=seed)].mean(axis=1)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return float(lo), float(hi)


def bootstrap_ci_difference(
    a: np.ndarray, b: np.ndarray, *, resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``mean(a) - mean(b)`` for two independent groups (e.g. the
    masculine and the feminine queries of a MAP gap): each group is resampled on its own."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.size == 0 or b.size == 0:
        return (float("nan"), float("nan"))
    draws_a = resample_indices(a.size, resamples=resamples, seed=seed)
    draws_b = resample_indices(b.size, resamples=resamples, seed=seed + 1)
    return percentile_interval(a[draws_a].mean(axis=1) - b[draws_b].mean(axis=1), level=level)


def paired_randomization_test(differences: np.ndarray, *, resamples: int = 10000, seed: int = 0) -> float:
    """Two-sided p-value that the mean paired difference is 0: flip each pair's sign at random and count
    how often the flipped mean is at least as far from 0 as the observed one (with the +1 correction)."""
    d = np.asarray(differences, dtype=np.float64)
    if d.size == 0:
        return float("nan")
    observed = abs(d.mean())
    rng = np.random.default_rng(seed)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(resamples, d.size))
    flipped = np.abs((signs * d).mean(axis=1))
    return float((1 + np.sum(flipped >= observed - 1e-12)) / (1 + resamples))

