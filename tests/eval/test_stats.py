"""eval/stats.py: the bootstrap of a mean is scipy.stats.bootstrap's (its percentile interval, to the last
bits), drawn in chunks; the results must be exactly those of drawing the whole (resamples, n) matrix at once,
as the code did before chunking and before scipy (kept here as the reference), so stored figures stay."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scipy import stats

from eval.stats import (
    bootstrap_ci,
    bootstrap_ci_difference,
    mean_figure,
    paired_randomization_test,
    resample_indices,
    resampled_means,
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
def test_resampled_means_are_those_of_the_rows_of_resample_indices(chunk_cells, seed):
    # scipy's draws are the shared paired resampling's (the correlation intervals): the same rows, chunk or not
    values = np.random.default_rng(3).random(37)
    means = resampled_means(values, resamples=250, seed=seed, chunk_cells=chunk_cells)
    np.testing.assert_array_equal(means, values[resample_indices(37, resamples=250, seed=seed)].mean(axis=1))


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


@pytest.mark.parametrize("n", [2, 40, 997])
def test_bootstrap_ci_is_scipys_percentile_bootstrap(n):
    values = np.random.default_rng(n).gamma(2.0, 0.1, n)
    expected = stats.bootstrap((values,), np.mean, n_resamples=1000, method="percentile", confidence_level=0.9,
                               rng=np.random.default_rng(4)).confidence_interval
    # scipy's quantile and np.percentile may round the same interpolation differently in the last bit
    assert bootstrap_ci(values, seed=4, level=0.9) == (pytest.approx(expected.low, abs=1e-15),
                                                         pytest.approx(expected.high, abs=1e-15))


@pytest.mark.parametrize("chunk_cells", CHUNKS)
@pytest.mark.parametrize("n", [2, 37, 997])
def test_resampled_means_are_scipys_bootstrap_distribution_to_the_bit(n, chunk_cells):
    values = np.random.default_rng(n).gamma(2.0, 0.1, n)
    expected = stats.bootstrap((values,), np.mean, n_resamples=1000, method="percentile", vectorized=True,
                               batch=max(1, chunk_cells // n), rng=np.random.default_rng(5)).bootstrap_distribution
    assert np.array_equal(resampled_means(values, seed=5, chunk_cells=chunk_cells), expected)


def test_eval_run_does_not_import_scipy_stats(tmp_path, small_data):
    """scipy.stats costs about 2 s to import; the bootstrap draws with numpy, so scoring never loads it."""
    import subprocess
    import sys

    code = ("import sys, tempfile; from eval.evaluate import evaluate; from eval.models import CharTfidf, EmbeddingCache; "
            "from eval.params import EvalSettings; "
            f"evaluate({str(small_data)!r}, ['pt'], CharTfidf(), EmbeddingCache(tempfile.mkdtemp()), EvalSettings(), progress=False); "
            "print('scipy.stats' in sys.modules)")
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=repo)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_one_observation_is_its_own_interval():  # scipy.stats.bootstrap refuses a single observation
    assert bootstrap_ci(np.array([0.4])) == (0.4, 0.4)
    lo, hi = bootstrap_ci_difference(np.array([0.9]), np.array([0.1, 0.3]), resamples=500)
    assert lo == pytest.approx(0.6) and hi == pytest.approx(0.8) and lo < hi


def test_mean_figure_leaves_undefined_values_out():
    fig = mean_figure(np.array([np.nan, 1.0, 3.0]), resamples=200)
    assert fig["value"] == 2.0 and fig["n"] == 2
    assert fig["ci95"] == list(bootstrap_ci(np.array([1.0, 3.0]), resamples=200))
    assert mean_figure(np.array([np.nan])) == {"value": None, "ci95": [None, None], "n": 0}
