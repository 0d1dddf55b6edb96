"""eval/stats.py draws its resamples in chunks; the results must be exactly those of drawing the whole
(resamples, n) matrix at once, as the code did before chunking (kept here as the reference)."""

from __future__ import annotations

import numpy as np
import pytest

from eval.stats import (
    bootstrap_ci,
    bootstrap_ci_difference,
    paired_randomization_test,
    resample_index_chunks,
    resample_indices,
)


# --- the whole-matrix versions (eval/stats.py before chunking), the reference ---------------------------

def whole_bootstrap_ci(values, resamples, seed, level=0.95):
    values = np.asarray(values, dtype=np.float64)
    means = values[np.random.default_rng(seed).integers(0, values.size, size=(resamples, values.size))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return float(lo), float(hi)


def whole_bootstrap_ci_difference(a, b, resamples, seed, level=0.95):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    draws_a = np.random.default_rng(seed).integers(0, a.size, size=(resamples, a.size))
    draws_b = np.random.default_rng(seed + 1).integers(0, b.size, size=(resamples, b.size))
    estimates = a[draws_a].mean(axis=1) - b[draws_b].mean(axis=1)
    estimates = estimates[~np.isnan(estimates)]
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(estimates, [tail, 100 - tail])
    return float(lo), float(hi)


def whole_randomization_test(differences, resamples, seed):
    d = np.asarray(differences, dtype=np.float64)
    observed = abs(d.mean())
    signs = np.random.default_rng(seed).choice(np.array([-1.0, 1.0]), size=(resamples, d.size))
    flipped = np.abs((signs * d).mean(axis=1))
    return float((1 + np.sum(flipped >= observed - 1e-12)) / (1 + resamples))


# chunk sizes in cells: one row per chunk, rows that do not divide the resamples, and all rows in one chunk
CHUNKS = [1, 3 * 37, 7 * 37 + 5, 1 << 20]


@pytest.mark.parametrize("chunk_cells", CHUNKS)
@pytest.mark.parametrize("seed", [0, 11])
def test_index_chunks_are_the_rows_of_the_whole_matrix(chunk_cells, seed):
    chunks = list(resample_index_chunks(37, resamples=250, seed=seed, chunk_cells=chunk_cells))
    assert sum(len(c) for c in chunks) == 250
    if chunk_cells < 250 * 37:
        assert len(chunks) > 1
    np.testing.assert_array_equal(np.concatenate(chunks), resample_indices(37, resamples=250, seed=seed))


@pytest.mark.parametrize("chunk_cells", CHUNKS)
@pytest.mark.parametrize("seed", [0, 5])
def test_chunked_statistics_equal_the_whole_matrix_ones(chunk_cells, seed):
    rng = np.random.default_rng(1234)
    a = rng.random(37)  # e.g. AP of the masculine queries
    b = rng.random(29) * 0.8
    d = rng.normal(0.05, 0.3, 41)  # paired differences

    assert bootstrap_ci(a, resamples=250, seed=seed, chunk_cells=chunk_cells) == whole_bootstrap_ci(a, 250, seed)
    assert (bootstrap_ci_difference(a, b, resamples=250, seed=seed, chunk_cells=chunk_cells)
            == whole_bootstrap_ci_difference(a, b, 250, seed))
    p = paired_randomization_test(d, resamples=997, seed=seed, chunk_cells=chunk_cells)
    assert p == whole_randomization_test(d, 997, seed)
    assert 0 < p < 1


def test_defaults_equal_the_whole_matrix_ones_and_respond_to_the_data():
    rng = np.random.default_rng(7)
    values = rng.random(500)
    assert bootstrap_ci(values) == whole_bootstrap_ci(values, 1000, 0)
    lo, hi = bootstrap_ci(values)
    assert lo < values.mean() < hi
    d = rng.normal(0.0, 1.0, 300)
    assert paired_randomization_test(d) == whole_randomization_test(d, 10000, 0)
    # a clear shift is significant, no shift is not (with the +1 correction, p is never 0)
    assert paired_randomization_test(d + 1.0) == pytest.approx(1 / 10001)
    assert paired_randomization_test(d - d.mean()) == pytest.approx(1.0)


def test_empty_inputs_give_nan():
    assert all(np.isnan(bootstrap_ci(np.array([]))))
    assert all(np.isnan(bootstrap_ci_difference(np.array([1.0]), np.array([]))))
    assert np.isnan(paired_randomization_test(np.array([])))
