"""Uncertainty for every reported figure: percentile bootstrap over queries (or pairs) and a paired
randomisation (sign-flip) test for gender gaps. Seeded, so a re-run gives the same intervals.

The bootstrap of a mean is ``scipy.stats.bootstrap``'s resampling (one seeded generator, ``batch`` rows of
draws at a time), drawn with numpy exactly as scipy draws it; the interval is read from its bootstrap distribution by ``percentile_interval``, the one
percentile rule of every interval here (also the correlation intervals, which resample pairs with
``resample_indices`` so that both vectors draw the same rows). scipy's own percentile differs from
``np.percentile`` in the last bit, which would change the stored figures without changing their definition.

Draws come in chunks of rows (``CHUNK_CELLS`` draws at a time), one generator across the chunks: numpy's
generator continues its stream from one call to the next, so the draws, and every result, are those of one
(resamples, n) matrix, while memory stays at one chunk whatever n is (at 17,100 queries the whole matrices
were 1,000 x 17,100 int64 indices and 10,000 x 8,550 float64 signs, 684 MB)."""

from __future__ import annotations

import numpy as np

# Draws per chunk: 2^20 int64 indices (8 MiB, plus the gathered float64 values), small beside eval's budget.
CHUNK_CELLS = 1 << 20


def _chunk_rows(n: int, chunk_cells: int) -> int:
    return max(1, chunk_cells // max(n, 1))


def resample_indices(n: int, *, resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """Bootstrap draws (resamples, n) of row indices 0..n-1 with replacement: the draws ``bootstrap_ci``
    makes, so a statistic of several aligned vectors (paired across models) resamples the same rows."""
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def resampled_means(values: np.ndarray, *, resamples: int = 1000, seed: int = 0,
                    chunk_cells: int = CHUNK_CELLS) -> np.ndarray:
    """Mean of ``values`` on each bootstrap resample: ``scipy.stats.bootstrap``'s distribution (percentile
    method, ``batch`` = ``chunk_cells`` draws), whose draws are the rows of ``resample_indices``, made here
    with numpy as scipy makes them (tests/eval/test_stats.py compares the two to the bit). Importing
    ``scipy.stats`` took about 2 s of every eval run, more than scoring a small set."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 1:  # scipy refuses a single observation; each of its resamples is that value
        return np.full(resamples, values[0])
    rng = np.random.default_rng(seed)
    rows = _chunk_rows(values.size, chunk_cells)
    return np.concatenate([
        values[rng.integers(0, values.size, size=(min(rows, resamples - start), values.size))].mean(axis=-1)
        for start in range(0, resamples, rows)
    ]) if resamples else np.zeros(0)


def percentile_interval(estimates: np.ndarray, *, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of bootstrap estimates; NaN estimates (undefined on a resample) are left out."""
    estimates = np.asarray(estimates, dtype=np.float64)
    estimates = estimates[~np.isnan(estimates)]
    if estimates.size == 0:
        return (float("nan"), float("nan"))
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(estimates, [tail, 100 - tail])
    return float(lo), float(hi)


def bootstrap_ci(values: np.ndarray, *, resamples: int = 1000, seed: int = 0, level: float = 0.95,
                 chunk_cells: int = CHUNK_CELLS) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (resampling them with replacement)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return (float("nan"), float("nan"))
    return percentile_interval(resampled_means(values, resamples=resamples, seed=seed, chunk_cells=chunk_cells),
                               level=level)


def mean_figure(values: np.ndarray, *, resamples: int = 1000, seed: int = 0) -> dict:
    """``{"value", "ci95", "n"}``: the mean of ``values`` with its ``bootstrap_ci``; NaN values (undefined,
    e.g. AP without relevant titles) are left out, and without any value the figure is None."""
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return {"value": None, "ci95": [None, None], "n": 0}
    lo, hi = bootstrap_ci(values, resamples=resamples, seed=seed)
    return {"value": float(values.mean()), "ci95": [lo, hi], "n": int(values.size)}


def bootstrap_ci_difference(
    a: np.ndarray, b: np.ndarray, *, resamples: int = 1000, seed: int = 0, level: float = 0.95,
    chunk_cells: int = CHUNK_CELLS,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``mean(a) - mean(b)`` for two independent groups (e.g. the
    masculine and the feminine queries of a MAP gap): each group is resampled on its own."""
    # Each group with its own generator (seed, seed + 1): scipy's two-sample form draws both groups from one
    # generator, batch by batch, the same definition with other draws, which would move every stored interval.
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.size == 0 or b.size == 0:
        return (float("nan"), float("nan"))
    means_a = resampled_means(a, resamples=resamples, seed=seed, chunk_cells=chunk_cells)
    means_b = resampled_means(b, resamples=resamples, seed=seed + 1, chunk_cells=chunk_cells)
    return percentile_interval(means_a - means_b, level=level)


def paired_randomization_test(differences: np.ndarray, *, resamples: int = 10000, seed: int = 0,
                              chunk_cells: int = CHUNK_CELLS) -> float:
    """Two-sided p-value that the mean paired difference is 0: flip each pair's sign at random and count
    how often the flipped mean is at least as far from 0 as the observed one (with the +1 correction)."""
    d = np.asarray(differences, dtype=np.float64)
    if d.size == 0:
        return float("nan")
    observed = abs(d.mean())
    rng = np.random.default_rng(seed)
    sign_values = np.array([-1.0, 1.0])
    rows = _chunk_rows(d.size, chunk_cells)
    at_least = 0
    for start in range(0, resamples, rows):
        # rng.choice of a 2-element array draws integers(0, 2) and gathers: the same stream chunk by chunk
        signs = rng.choice(sign_values, size=(min(rows, resamples - start), d.size))
        flipped = np.abs((signs * d).mean(axis=1))
        at_least += int(np.sum(flipped >= observed - 1e-12))
    return float((1 + at_least) / (1 + resamples))
