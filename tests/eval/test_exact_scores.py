"""Exact scores (``eval.ranking.similarity_scores``): the embeddings on a grid of 2^-24, their dot products exact in
float64, so the scores, the rankings and every figure are the same bytes from any BLAS kernel, thread count or
library (docs/eval.md "Exact scores"). The configurations below are chosen to differ: OpenBLAS's Haswell kernels
(FMA) and Sandybridge kernels (no FMA), one thread and two, MKL (torch) beside OpenBLAS (numpy); the float32
products of the same vectors differ between them (asserted, so the comparison is not vacuous)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

from eval.ranking import MAX_ROW_NORM, SCORE_GRID_BITS, grid_scores, score_grid, similarity_scores
from eval.testset import write_testset
from tests.eval.blas_configs import CORE_TYPES, X86, blas_env, english_testset, numpy_simd_features

REPO = Path(__file__).resolve().parents[2]


def unit_rows(rng: np.random.Generator, n: int, dimension: int) -> np.ndarray:
    x = rng.standard_normal((n, dimension))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def test_scores_are_the_integer_products_of_the_grid_values():
    """The golden is the definition computed without floating point: each value as the integer round(x * 2^24),
    dot products in int64 (numpy's integer product does not use BLAS), divided by 2^48 and rounded to float32."""
    rng = np.random.default_rng(0)
    q, d = unit_rows(rng, 40, 384), unit_rows(rng, 700, 384)
    scale = 2 ** SCORE_GRID_BITS
    integers = (np.rint(q.astype(np.float64) * scale).astype(np.int64) @ np.rint(d.astype(np.float64) * scale).astype(np.int64).T)
    expected = (integers / float(scale) ** 2).astype(np.float32)  # integers below 2^53: the division is exact
    scores = similarity_scores(q, d)
    assert scores.dtype == np.float32 and np.array_equal(scores, expected)
    # the grid moves a score by about 2^-25: far below what separates titles, and near float32's own rounding
    assert np.abs(scores - q.astype(np.float64) @ d.astype(np.float64).T).max() < 2e-7


def test_scores_do_not_depend_on_the_rows_around_a_query_or_a_document():
    rng = np.random.default_rng(1)
    q, d = unit_rows(rng, 64, 512), unit_rows(rng, 900, 512)
    whole = similarity_scores(q, d)
    by_row = np.vstack([similarity_scores(q[i : i + 1], d) for i in range(len(q))])  # one-row products (gemv)
    by_doc = np.hstack([similarity_scores(q, d[j : j + 7]) for j in range(0, len(d), 7)])
    assert np.array_equal(whole, by_row) and np.array_equal(whole, by_doc)
    assert not np.array_equal(q @ d.T, np.vstack([q[i : i + 1] @ d.T for i in range(len(q))])), \
        "the float32 products of the same rows no longer differ by place: this test would pass vacuously"


def test_sparse_and_dense_embeddings_give_the_same_scores():
    """tfidf-char scores sparse vectors (scipy, no BLAS); on the grid they score exactly as their dense form."""
    rng = np.random.default_rng(2)
    q, d = unit_rows(rng, 30, 256), unit_rows(rng, 400, 256)
    q[np.abs(q) < 0.08] = 0.0
    d[np.abs(d) < 0.08] = 0.0
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    dense = similarity_scores(q, d)
    assert np.array_equal(similarity_scores(sparse.csr_matrix(q), sparse.csr_matrix(d)), dense)
    assert np.array_equal(similarity_scores(q, sparse.csr_matrix(d)), dense)
    assert np.array_equal(grid_scores(score_grid(sparse.csr_matrix(q)), score_grid(d)), dense)


def test_a_row_too_long_for_exact_scores_is_refused():
    rng = np.random.default_rng(3)
    q, d = unit_rows(rng, 3, 16), unit_rows(rng, 5, 16)
    assert similarity_scores(q * np.float32(MAX_ROW_NORM * 0.999), d).shape == (3, 5)
    for bad in (q * np.float32(MAX_ROW_NORM * 1.01), np.where(np.arange(16) == 2, np.nan, q)):
        with pytest.raises(ValueError, match="scores are exact only for rows of norm up to"):
            similarity_scores(bad, d)
    with pytest.raises(ValueError, match="L2-normalised"):
        similarity_scores(q, sparse.csr_matrix(d * np.float32(5.0)))


# One process per BLAS configuration: OPENBLAS_CORETYPE (and NPY_DISABLE_CPU_FEATURES) are read when the libraries
# load. It prints the digests of the scores, of the float32 products of the same vectors, and the randomisation test
# and bootstrap on fixed values, with the kernel OpenBLAS reports.
CHILD = r"""
import hashlib, json, sys
import numpy as np, threadpoolctl
from eval.ranking import similarity_scores
from eval.stats import bootstrap_ci, paired_randomization_test
threads = int(sys.argv[1])
rng = np.random.default_rng(7)
def unit(n, dim):
    x = rng.standard_normal((n, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
q, d = unit(96, 384), unit(1500, 384)
values = rng.standard_normal(200) * 0.1
digest = lambda a: hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()
with threadpoolctl.threadpool_limits(threads, user_api="blas"):
    info = [(i["internal_api"], i.get("architecture"), i["num_threads"]) for i in threadpoolctl.threadpool_info()]
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:
        from numpy.core._multiarray_umath import __cpu_features__
    print(json.dumps({"blas": info, "numpy_avx2": bool(__cpu_features__.get("AVX2")),
                      "scores": digest(similarity_scores(q, d)), "float32": digest(q @ d.T),
                      "stats": [paired_randomization_test(values), bootstrap_ci(values)]}))
"""


def run_child(threads: int, core_type: str | None, numpy_simd: bool = True) -> dict:
    env = blas_env(core_type, numpy_simd)
    done = subprocess.run([sys.executable, "-c", CHILD, str(threads)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_scores_are_the_same_bytes_from_every_blas_kernel_and_thread_count():
    runs = {(core, threads): run_child(threads, core) for core in CORE_TYPES for threads in (1, 2)}
    if X86 and numpy_simd_features():  # numpy's own sums and elementwise operations on their SSE paths
        plain = runs[("Haswell", "numpy without " + " ".join(numpy_simd_features()))] = run_child(1, "Haswell", numpy_simd=False)
        assert not plain["numpy_avx2"] and runs[("Haswell", 1)]["numpy_avx2"] == ("AVX2" in numpy_simd_features())
    print({k: (v["blas"], v["scores"][:12], v["float32"][:12]) for k, v in runs.items()})
    if X86:  # the kernels really are different ones, and they round float32 products differently
        assert {arch for run in runs.values() for api, arch, _ in run["blas"] if api == "openblas"} >= {"Haswell", "Sandybridge"}
        assert runs[("Haswell", 1)]["float32"] != runs[("Sandybridge", 1)]["float32"]
    assert len({run["scores"] for run in runs.values()}) == 1
    assert len({json.dumps(run["stats"]) for run in runs.values()}) == 1


def test_torch_and_mkl_give_the_scores_numpy_and_openblas_give():
    from tests.english import in_ci

    try:
        import torch
    except ImportError:  # the st extra (CI installs it with `all`)
        (pytest.fail if in_ci() else pytest.skip)("torch is not installed: pip install '.[st]' (CPU: torch==2.13.0)")
    rng = np.random.default_rng(4)
    q, d = unit_rows(rng, 80, 384), unit_rows(rng, 1200, 384)
    raw = (torch.from_numpy(q) @ torch.from_numpy(d).T).numpy()
    if np.array_equal(raw, q @ d.T):
        # A precondition this CPU does not meet (seen on AVX-512 machines): the two libraries round these float32
        # products alike, so equal grids would prove nothing here. A skip with its reason, not a failure (issue 35).
        pytest.skip("MKL (torch) and OpenBLAS (numpy) round these float32 products alike on this CPU: the check "
                    "that the score grid makes them agree would be vacuous")
    q_grid, d_grid = score_grid(q), score_grid(d)
    by_torch = (torch.from_numpy(q_grid) @ torch.from_numpy(d_grid).T).numpy().astype(np.float32)
    assert np.array_equal(by_torch, grid_scores(q_grid, d_grid))


@pytest.mark.slow
def test_the_eval_stage_writes_the_same_bytes_under_two_blas_configurations(tmp_path):
    """`eval run --store-only` (the DVC grid stage) on real titles with m-e5-small-q4, whose C engine does not use
    BLAS (its embeddings are the same bytes in both configurations; the cache is shared all the same), once with
    OpenBLAS's Haswell kernels on one thread and once with its Sandybridge kernels on two: the stored results,
    every figure, interval, p-value, per-query and per-pair row, are the same bytes."""
    write_testset(english_testset(n_queries=60, n_docs=1200), tmp_path / "data")
    configurations = [("Haswell", "1"), ("Sandybridge", "2")] if X86 else [(None, "1"), (None, "2")]
    stored = []
    for k, (core, threads) in enumerate(configurations):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads}
        env.pop("OPENBLAS_CORETYPE", None)
        if core:
            env["OPENBLAS_CORETYPE"] = core
        done = subprocess.run([sys.executable, "-m", "eval", "run", "--data", str(tmp_path / "data"), "--model", "m-e5-small-q4",
                               "--store", str(tmp_path / f"store{k}"), "--store-only", "--cache", str(tmp_path / "cache"),
                               "--quiet"], cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr
        (result,) = (tmp_path / f"store{k}").rglob("pt.json")
        stored.append(result.read_bytes())
    figures = json.loads(stored[0])["figures"]
    assert figures["per_query"] and figures["corpora"]["masculine"]["parity"]["paired_AP_M-AP_F"]["p_value"] is not None
    assert stored[0] == stored[1]
