"""Speed of eval against the strongest straightforward baselines, in one run.

    .venv/bin/python benchmarks/bench_eval.py [--only symmetry|map|exact] [--large] [--data data --lang pt] [--rounds 7]

Every comparison alternates the sides (A, B, A, B, ...) for --rounds rounds and reports the median
ratio with its spread (min-max of the per-round ratios), so a slow moment of this shared machine hits
both sides alike. The command line and the load average (before and after each part) are printed with the
figures.

1. AO + RBO_ext(p=0.98), 200 pairs of rankings of a 4,700-title corpus, full permutations and as eval ranks
   a pair (self-matches dropped, rows padded with -1): eval.metrics.symmetry_batch, checked and as evaluate
   runs it (check=False), vs plain idiomatic numpy (``symmetry_numpy_plain``: a position array, one gather,
   one bincount, one cumsum; every row at once and in row blocks, eval's block size among them), a per-row
   numpy loop, and the pure-Python `rbo` package (the reference for the values; its ratio measures Python
   against numpy). Every baseline's values are checked against eval's in the run. --large adds the padded
   case at 1,000 pairs x 25,000 titles (eval's block there is 2 rows; no `rbo` package: minutes).
2. MAP, 200 queries x 4,700 documents, float32 scores with ties (two decimals) and tie-free (distinct in every
   row): eval (ranking included; AP from the hits' positions as evaluate computes it, and
   average_precision_batch) vs pytrec_eval called directly (evaluate() on prebuilt dicts; and with building the
   dicts), ir-measures, and ranx (needs the ``bench`` extra: pip install -e '.[bench]'): its numba kernel on
   typed lists it has already sorted, ``ranx.evaluate`` on prebuilt Qrels/Run, and with building them. eval,
   pytrec_eval and ir-measures break ties alike (trec_eval's rule: id descending) and give identical values;
   ranx orders tied documents by numba's unstable argsort, so its AP differs on tied input (printed) and must
   agree within 1e-12 on the tie-free input. In-process and as whole processes (imports included).
3. The price of exact scores: eval's product (the block's queries put on the 2^-24 grid, a float64 product,
   rounded once to float32: eval.ranking.score_grid and grid_scores) against the plain float32 BLAS product eval
   ran before it (``q @ d.T``; for tfidf-char's sparse vectors scipy's float32 product and its transposing copy),
   per block of queries; the corpus goes on the grid once per corpus variant, timed apart. Dense: random unit
   vectors of m-use's 512 and m-e5-small-q4's 384 dimensions; sparse (with --data): tfidf-char on the set's own
   titles, and on its corpus copied 10 times. The largest difference of the float32 product to the exact scores
   is printed (float32's rounding, which exact scores remove).
4. With --data: m-use on one language, cold cache: share of wall time spent outside encoding (target <= 10%);
   then the re-run time with a warm cache.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# The tree this script sits in, not whatever the virtual environment's editable install points at (a worktree
# sharing another checkout's .venv would otherwise time that checkout's eval); the header prints which.
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def timed(fn, repeat: int = 1):
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def alternate(a, b, rounds: int) -> tuple[float, float, float, float, float]:
    """Run a and b alternately; (median a s, median b s, median b/a, min b/a, max b/a)."""
    ta, tb = [], []
    for _ in range(rounds):
        for fn, out in ((a, ta), (b, tb)):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    ratios = sorted(y / x for x, y in zip(ta, tb))
    return float(np.median(ta)), float(np.median(tb)), float(np.median(ratios)), ratios[0], ratios[-1]


def ratio_text(name_a: str, name_b: str, result) -> str:
    ta, tb, med, lo, hi = result
    verdict = "faster" if med >= 1 else "SLOWER"
    return f"{name_a} {ta * 1000:.1f} ms, {name_b} {tb * 1000:.1f} ms: ratio {med:.2f}x, {name_a} is {verdict} (spread {lo:.2f}-{hi:.2f})"


def correlated_scores(rng, n_queries: int, n_docs: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    base = rng.standard_normal((n_queries, n_docs))
    return base + noise * rng.standard_normal(base.shape), base + noise * rng.standard_normal(base.shape)


def symmetry_numpy_plain(a: np.ndarray, b: np.ndarray, p: float, block_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Plain idiomatic numpy, written for this comparison (not eval's code): per block of rows (default: every
    row at once), one position array for b, one gather, one bincount and one cumsum; padding (-1) masked."""
    rows, n = a.shape
    step = block_rows or rows
    cols = np.arange(n)
    depths = np.arange(1, n + 1, dtype=np.float64)
    weights = p**depths
    ao, rb = np.empty(rows), np.empty(rows)
    for start in range(0, rows, step):
        x, y = a[start:start + step], b[start:start + step]
        k = len(x)
        r = np.arange(k)[:, None]
        lengths = np.count_nonzero(x >= 0, axis=1)
        pos_b = np.full((k, int(max(x.max(), y.max())) + 2), n)  # n: not in b; the last slot takes y's -1
        pos_b[r, y] = cols
        join = np.maximum(pos_b[r, x], cols)  # an item at i in a and j in b joins at depth max(i, j) + 1
        join[x < 0] = n  # padding never joins
        counts = np.bincount((join + r * (n + 1)).ravel(), minlength=k * (n + 1)).reshape(k, n + 1)[:, :n]
        agreement = np.cumsum(counts, axis=1) / depths
        agreement[cols >= lengths[:, None]] = 0.0
        ao[start:start + k] = agreement.sum(axis=1) / lengths
        last = agreement[np.arange(k), lengths - 1]
        rb[start:start + k] = (1 - p) / p * (agreement * weights).sum(axis=1) + last * p ** lengths.astype(np.float64)
    return ao, rb


def symmetry_numpy_loop(a: np.ndarray, b: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    """The obvious per-row numpy code: one scatter, one bincount, one cumsum per pair."""
    ao, rb = np.empty(len(a)), np.empty(len(a))
    for r, (ra, rb_row) in enumerate(zip(a, b)):
        ra, rb_row = ra[ra >= 0], rb_row[rb_row >= 0]
        k = len(ra)
        pos_b = np.full(max(ra.max(), rb_row.max()) + 1, k)
        pos_b[rb_row] = np.arange(k)
        x = np.cumsum(np.bincount(np.maximum(pos_b[ra], np.arange(k)), minlength=k + 1)[:k]) / np.arange(1, k + 1)
        ao[r] = x.mean()
        rb[r] = (1 - p) / p * (x @ p ** np.arange(1, k + 1)) + x[-1] * p**k
    return ao, rb


def alternate_many(sides: dict, rounds: int) -> dict[str, list[float]]:
    """Run every side once per round, in turn (A, B, C, A, B, C, ...); seconds per side and round."""
    times = {name: [] for name in sides}
    for _ in range(rounds):
        for name, fn in sides.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def round_ratio(times: dict[str, list[float]], ours: str, other: str) -> tuple[float, float, float, float, float]:
    """As ``alternate`` returns it: medians of both sides and the median, min and max of the per-round ratios."""
    ratios = sorted(y / x for x, y in zip(times[ours], times[other]))
    return float(np.median(times[ours])), float(np.median(times[other])), float(np.median(ratios)), ratios[0], ratios[-1]


def pair_rankings(rng, n_pairs: int, n_docs: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Two rankings per pair as eval makes them: full permutations, and with one or two self-matches dropped
    from both forms' rankings (tail padding)."""
    from eval.ranking import rank_corpus

    doc_ids = [f"doc{j:05d}" for j in range(n_docs)]
    s_m, s_f = correlated_scores(rng, n_pairs, n_docs, noise=0.3)
    drop = np.zeros((n_pairs, n_docs), dtype=bool)
    drop[np.arange(n_pairs), rng.integers(0, n_docs, n_pairs)] = True
    drop[np.arange(0, n_pairs, 2), rng.integers(0, n_docs, n_pairs // 2)] = True
    return {
        "full permutations": (rank_corpus(s_m, doc_ids), rank_corpus(s_f, doc_ids)),
        "self-matches dropped (as eval)": (rank_corpus(s_m, doc_ids, self_matches=drop), rank_corpus(s_f, doc_ids, self_matches=drop)),
    }


def bench_symmetry(n_pairs: int = 200, n_docs: int = 4700, rounds: int = 7, cases: tuple[str, ...] | None = None,
                   rbo_package: bool = True) -> None:
    """eval (checked, and with check=False as evaluate runs it) against plain numpy over every row at once, plain
    numpy in row blocks (eval's block size and two others), and the per-row numpy loop, all in turn each round.
    Every baseline's values are checked against eval's before timing (max |difference| <= 1e-12)."""
    from eval.metrics import _BLOCK_POSITIONS, symmetry_batch

    eval_rows = max(1, _BLOCK_POSITIONS // n_docs)  # eval's rows per block
    blocks = sorted({eval_rows, 16, 64} - {n_pairs})
    for case, (rank_m, rank_f) in pair_rankings(np.random.default_rng(0), n_pairs, n_docs).items():
        if cases is not None and case not in cases:
            continue
        ao, rb = symmetry_batch(rank_m, rank_f, 0.98)
        baselines = {"plain numpy, all rows at once": lambda: symmetry_numpy_plain(rank_m, rank_f, 0.98)}
        for k in blocks:
            label = f"plain numpy, blocks of {k} rows" + (" (eval's block)" if k == eval_rows else "")
            baselines[label] = lambda k=k: symmetry_numpy_plain(rank_m, rank_f, 0.98, block_rows=k)
        baselines["numpy per-row loop"] = lambda: symmetry_numpy_loop(rank_m, rank_f, 0.98)
        diffs = {}
        for name, fn in baselines.items():
            other_ao, other_rb = fn()
            diffs[name] = max(np.abs(ao - other_ao).max(), np.abs(rb - other_rb).max())
            assert diffs[name] <= 1e-12, f"{name} disagrees with eval by {diffs[name]:.1e}"
        unchecked = symmetry_batch(rank_m, rank_f, 0.98, check=False)
        assert unchecked[0].tobytes() == ao.tobytes() and unchecked[1].tobytes() == rb.tobytes()
        sides = {"eval": lambda: symmetry_batch(rank_m, rank_f, 0.98),
                 "eval check=False": lambda: symmetry_batch(rank_m, rank_f, 0.98, check=False), **baselines}
        print(f"[symmetry, {case}] {n_pairs} pairs x {n_docs} docs, AO + RBO(p=0.98), {rounds} rounds, all sides in "
              f"turn; load {load()} before; max |difference| to eval: " + ", ".join(f"{k} {v:.1e}" for k, v in diffs.items()))
        times = alternate_many(sides, rounds)
        for name in baselines:
            print("    " + ratio_text("eval (checks repeated items)", name, round_ratio(times, "eval", name)))
            print("    " + ratio_text("eval as evaluate runs it (check=False)", name, round_ratio(times, "eval check=False", name)))
        if rbo_package:
            from rbo import RankingSimilarity

            def reference():
                out_ao, out_rbo = [], []
                for a, b in zip(rank_m.tolist(), rank_f.tolist()):
                    rs = RankingSimilarity([x for x in a if x >= 0], [x for x in b if x >= 0])
                    out_ao.append(rs.rbo())  # p = 1.0: average overlap
                    out_rbo.append(rs.rbo_ext(p=0.98))
                return np.array(out_ao), np.array(out_rbo)

            ref_ao, ref_rbo = reference()
            diff = max(np.abs(ao - ref_ao).max(), np.abs(rb - ref_rbo).max())
            print("    " + ratio_text("eval", f"rbo package (pure Python; max |difference| {diff:.1e})",
                                      alternate(sides["eval"], reference, max(3, rounds // 3))))
        print(f"    load {load()} after")


def load() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


MAP_CHILD = """
import sys, time, numpy as np
start = time.perf_counter()
z = np.load(sys.argv[2])
scores, relevant = z["scores"], z["relevant"]
doc_ids = [f"doc{j:05d}" for j in range(scores.shape[1])]
if sys.argv[1] == "eval":
    from eval.metrics import average_precision_batch
    from eval.ranking import rank_corpus
    value = float(np.nanmean(average_precision_batch(rank_corpus(scores, doc_ids), relevant)))
elif sys.argv[1] == "ranx":
    import ranx
    q_ids = [f"q{i:03d}" for i in range(scores.shape[0])]
    qrels = {q: {doc_ids[j]: 1 for j in np.flatnonzero(relevant[i])} for i, q in enumerate(q_ids)}
    run = {q: dict(zip(doc_ids, scores[i].tolist())) for i, q in enumerate(q_ids)}
    value = float(ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "map"))
else:
    import pytrec_eval
    q_ids = [f"q{i:03d}" for i in range(scores.shape[0])]
    qrels = {q: {doc_ids[j]: 1 for j in np.flatnonzero(relevant[i])} for i, q in enumerate(q_ids)}
    run = {q: dict(zip(doc_ids, scores[i].tolist())) for i, q in enumerate(q_ids)}
    value = float(np.mean([v["map"] for v in pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run).values()]))
print(repr(value))
"""


def ranx_or_exit():
    """ranx, the benchmark-only baseline of MAP (the ``bench`` extra), or one error line with the install command."""
    try:
        import ranx
    except ImportError:
        raise SystemExit("error: the MAP comparison needs ranx (a benchmark-only dependency); "
                         "pip install -e '.[bench]' (or: pip install ranx), or run --only symmetry") from None
    return ranx


def map_inputs(rng, n_queries: int, n_docs: int, ties: bool) -> tuple[np.ndarray, np.ndarray]:
    """float32 scores, as embedding models give them. ``ties``: coarse values (two decimals), so most documents
    share their score with others; else a permutation of n_docs distinct values per query (no tie at all)."""
    if ties:
        scores = np.round(rng.random((n_queries, n_docs)), 2).astype(np.float32)
    else:
        scores = (rng.permuted(np.tile(np.arange(n_docs), (n_queries, 1)), axis=1) / n_docs).astype(np.float32)
        assert all(len(np.unique(row)) == n_docs for row in scores), "tie-free scores must be distinct in every row"
    relevant = rng.random((n_queries, n_docs)) < 0.005
    relevant[:, 0] = True  # every query has a relevant document (ranx and trec_eval drop queries without)
    return scores, relevant


def bench_map(n_queries: int = 200, n_docs: int = 4700, rounds: int = 7) -> None:
    """MAP of eval against pytrec_eval (trec_eval's C code), ir-measures and ranx (numba kernels), on scores with
    ties and on tie-free scores. Tie rules differ: eval and trec_eval order tied documents by id descending; ranx
    by numba's np.argsort of the negated scores (quicksort: an order the data decides, not a rule), so on tied
    input ranx's AP may differ and only the tie-free input compares values (to 1e-12)."""
    import subprocess
    import sys

    import ir_measures
    import pytrec_eval
    from ir_measures import AP

    ranx = ranx_or_exit()
    from ranx.metrics import average_precision as ranx_average_precision

    from eval.metrics import average_precision_batch, average_precision_from_hits
    from eval.ranking import rank_corpus

    doc_ids = [f"doc{j:05d}" for j in range(n_docs)]
    q_ids = [f"q{i:03d}" for i in range(n_queries)]
    for ties in (True, False):
        scores, relevant = map_inputs(np.random.default_rng(1), n_queries, n_docs, ties)
        n_relevant = relevant.sum(axis=1)

        def build_dicts():
            qrels = {q: {doc_ids[j]: 1 for j in np.flatnonzero(relevant[i])} for i, q in enumerate(q_ids)}
            run = {q: dict(zip(doc_ids, scores[i].tolist())) for i, q in enumerate(q_ids)}
            return qrels, run

        qrels, run = build_dicts()
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map"})

        def eval_batch():  # ranking included
            return average_precision_batch(rank_corpus(scores, doc_ids), relevant)

        def eval_as_evaluate():  # ranking included; AP from the hits' positions, as evaluate_language computes it
            ranking = rank_corpus(scores, doc_ids)
            hit_row, hit_pos = np.nonzero(np.take_along_axis(relevant, ranking, axis=1))
            return average_precision_from_hits(hit_row, hit_pos, n_relevant)

        def trec_direct():
            return evaluator.evaluate(run)

        def trec_with_dicts():
            q, r = build_dicts()
            return pytrec_eval.RelevanceEvaluator(q, {"map"}).evaluate(r)

        ranx_qrels, ranx_run = ranx.Qrels(qrels), ranx.Run(run)  # Run sorts by score when built
        typed_qrels, typed_run = ranx_qrels.to_typed_list(), ranx_run.to_typed_list()

        def ranx_kernel():  # the numba kernel alone, on typed lists already sorted (ranx's sort not timed)
            return ranx_average_precision(typed_qrels, typed_run)

        def ranx_evaluate():  # what a ranx user calls, on Qrels and Run built beforehand
            return ranx.evaluate(ranx_qrels, ranx_run, "map", return_mean=False, save_results_in_run=False)

        def ranx_with_building():  # from the same Python dicts as pytrec_eval's: Qrels, Run (its sort), evaluate
            return ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "map", return_mean=False, save_results_in_run=False)

        ours = eval_as_evaluate()
        assert np.abs(ours - eval_batch()).max() <= 1e-12  # the same AP, summed in another order
        trec = trec_direct()
        per_query = {
            "pytrec_eval": np.array([trec[q]["map"] for q in q_ids]),
            "ranx kernel": np.asarray(ranx_kernel()),  # ranx orders queries by id: q000, q001, ... as q_ids
            "ranx evaluate": np.asarray(ranx_evaluate()),
        }
        diffs = {name: float(np.abs(ours - values).max()) for name, values in per_query.items()}
        means = {"eval": float(np.mean(ours)), **{name: float(np.mean(v)) for name, v in per_query.items()},
                 "ir-measures": float(ir_measures.calc_aggregate([AP], qrels, run)[AP])}
        differing = int(np.count_nonzero(np.abs(ours - per_query["ranx evaluate"]) > 1e-12))
        case = "with ties (two-decimal scores)" if ties else "tie-free (distinct scores in every row)"
        print(f"[MAP, {case}] {n_queries} queries x {n_docs} docs, {rounds} alternating rounds, load {load()} before; MAP "
              + ", ".join(f"{k} {v:.12f}" for k, v in means.items()))
        print(f"    max |AP difference| per query to eval: " + ", ".join(f"{k} {v:.1e}" for k, v in diffs.items())
              + f"; queries whose ranx AP differs from eval's by > 1e-12: {differing} of {n_queries}")
        assert diffs["pytrec_eval"] <= 1e-12, "eval must agree with trec_eval (its tie rule is trec_eval's)"
        if not ties:
            assert max(diffs.values()) <= 1e-12, "without ties eval and ranx must agree"
        sides = {"pytrec_eval.evaluate on prebuilt dicts": trec_direct, "pytrec_eval with building its dicts": trec_with_dicts,
                 "ranx numba kernel on sorted typed lists (ranx's sort not timed)": ranx_kernel,
                 "ranx.evaluate on prebuilt Qrels/Run": ranx_evaluate,
                 "ranx building Qrels/Run from the dicts, then evaluate": ranx_with_building}
        for name, fn in sides.items():
            print("    " + ratio_text("eval as evaluate runs it (ranking included)", name, alternate(eval_as_evaluate, fn, rounds)))
        print("    " + ratio_text("eval average_precision_batch (ranking included)", "ranx numba kernel",
                                  alternate(eval_batch, ranx_kernel, rounds)))
        if ties:
            print("    " + ratio_text("eval as evaluate runs it", "ir-measures",
                                      alternate(eval_as_evaluate, lambda: ir_measures.calc_aggregate([AP], qrels, run), max(3, rounds // 2))))
    print(f"    (ranx's kernels run in numba's threads: {ranx_threads()}; eval in one thread)")
    # Whole processes: interpreter start, imports, loading the same arrays, computing, printing.
    import tempfile

    scores, relevant = map_inputs(np.random.default_rng(1), n_queries, n_docs, ties=True)
    with tempfile.TemporaryDirectory() as tmp:
        arrays = f"{tmp}/inputs.npz"
        np.savez(arrays, scores=scores, relevant=relevant)
        outputs = {}

        def process(side):
            out = subprocess.run([sys.executable, "-c", MAP_CHILD, side, arrays], capture_output=True, text=True, check=True, cwd=REPO)
            outputs[side] = float(out.stdout)

        for other in ("pytrec_eval", "ranx"):
            result = alternate(lambda: process("eval"), lambda: process(other), max(3, rounds // 2))
            print(f"    whole process, with ties: " + ratio_text("eval", other, result)
                  + f"; values {outputs['eval']:.12f} vs {outputs[other]:.12f}")
    print(f"    load {load()} after")


def ranx_threads() -> int:
    import numba

    return numba.get_num_threads()


def exact_against_float32(name: str, queries, docs, sparse: bool, rounds: int) -> None:
    """One case of ``bench_exact``: eval's exact scores of a block against the plain float32 product, alternating."""
    from eval.ranking import grid_scores, score_grid

    start = time.perf_counter()
    d_grid = score_grid(docs)  # once per corpus variant in eval (score_corpus), not per block
    corpus_grid_s = time.perf_counter() - start
    if sparse:
        q32, d32 = queries.astype(np.float32), docs.astype(np.float32)

        def plain():  # eval's product before exact scores: scipy's float32 product, then a transposing copy
            by_doc = d32 @ np.ascontiguousarray(q32.toarray().T)
            return np.ascontiguousarray(by_doc.T)
    else:
        q32, d32 = np.ascontiguousarray(queries, dtype=np.float32), np.ascontiguousarray(docs, dtype=np.float32)

        def plain():  # eval's product before exact scores: one float32 BLAS call
            return q32 @ d32.T

    def exact():  # as score_corpus runs it per block
        return grid_scores(score_grid(queries), d_grid)

    ours, theirs = exact(), plain()
    assert ours.dtype == theirs.dtype == np.float32 and ours.shape == theirs.shape
    assert np.array_equal(ours, grid_scores(score_grid(queries), score_grid(docs)))  # the corpus's grid made once: same
    diff = float(np.abs(ours.astype(np.float64) - theirs).max())
    print(f"[exact, {name}] {queries.shape[0]} queries x {docs.shape[0]} titles x {queries.shape[1]} dims, {rounds} "
          f"rounds, load {load()}; the corpus on the grid once: {corpus_grid_s * 1000:.1f} ms; max |float32 product - "
          f"exact| {diff:.1e}")
    print("    " + ratio_text("exact (score_grid + grid_scores)", "plain float32 product", alternate(exact, plain, rounds)))


def bench_exact(data: Path | None, lang: str, rounds: int = 7) -> None:
    """The price of exact scores (docs/eval.md "Exact scores"): eval's product of a block of queries against the
    float32 product it replaced, dense at the default sets' size and at a block of the default budget at 10x10,
    and (with ``data``) tfidf-char's sparse product on a real set and on its corpus copied 10 times. A ratio
    below 1 is the price: how much longer exactness takes than the product eval ran before."""
    rng = np.random.default_rng(3)

    def unit_rows(n: int, dim: int) -> np.ndarray:
        x = rng.standard_normal((n, dim)).astype(np.float32)
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    # (queries, titles): a default set's queries and one corpus variant in one block; about the largest block the
    # default budget (256 MiB, eval.evaluate.block_cost) gives a dense model at 10x10 (40,000 titles)
    for n_queries, n_docs in ((320, 4_000), (700, 40_000)):
        for model, dim in (("m-use", 512), ("m-e5-small-q4", 384)):
            exact_against_float32(f"dense, {model}'s {dim} dims", unit_rows(n_queries, dim), unit_rows(n_docs, dim),
                                  sparse=False, rounds=rounds)
    if data is None:
        print("[exact, tfidf-char] skipped: pass --data DIR (a built test set) for the sparse product on real titles")
        return
    from eval.evaluate import SPARSE_BLOCK_CELLS
    from eval.models import CharTfidf
    from eval.testset import read_testset

    ts = read_testset(data, lang)
    queries, corpus = ts.queries["text"].to_list(), ts.corpus_for("masculine")["text"].to_list()
    for copies in (1, 10):
        texts = [t if k == 0 else f"{t} {k}" for k in range(copies) for t in corpus]  # as bench_scale.py copies
        model = CharTfidf()
        model.fit(texts)
        block = queries[:max(1, SPARSE_BLOCK_CELLS // len(texts))]  # eval's block of a sparse model: <= 2^22 cells
        exact_against_float32(f"tfidf-char, {lang} masculine corpus" + (f" x{copies}" if copies > 1 else ""),
                              model.encode_sparse(block, "query"), model.encode_sparse(texts, "passage"),
                              sparse=True, rounds=rounds)


def bench_m_use(data: Path, lang: str) -> None:
    from eval.evaluate import EvalSettings, evaluate_language
    from eval.models import EmbeddingCache, load_model
    from eval.testset import read_testset

    ts = read_testset(data, lang)
    model = load_model("m-use")
    settings = EvalSettings()
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(tmp)
        start = time.perf_counter()
        cold, timing = evaluate_language(ts, model, cache, settings, progress=False)
        cold_wall = time.perf_counter() - start
        start = time.perf_counter()
        warm, warm_timing = evaluate_language(ts, model, cache, settings, progress=False)
        warm_wall = time.perf_counter() - start
    outside = cold_wall - timing.encode_s
    print(f"[m-use {lang}] load {load()} after; {timing.texts} texts ({timing.encoded} encoded), cold: {cold_wall:.1f} s wall, "
          f"{timing.encode_s:.1f} s encoding, {outside:.2f} s outside encoding = {outside / cold_wall:.1%} "
          f"(target <= 10%); warm-cache re-run {warm_wall:.2f} s ({warm_timing.encoded} encoded)")
    same = warm["corpora"] == cold["corpora"]
    print(f"[m-use {lang}] warm results identical to cold: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, help="a built test-set root (e.g. data) for the m-use timing")
    parser.add_argument("--lang", default="pt")
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds per comparison")
    parser.add_argument("--only", choices=("symmetry", "map", "exact"), help="run one part (and --data's, if given)")
    parser.add_argument("--large", action="store_true",
                        help="also AO/RBO at 1,000 pairs x 25,000 titles, self-matches dropped (about 1 GiB, a minute)")
    args = parser.parse_args()
    import eval

    print(f"$ {' '.join([Path(sys.executable).name, *sys.argv])}  (eval from {Path(eval.__file__).parent}, numpy "
          f"{np.__version__}, {os.cpu_count()} CPUs, load {load()})")
    if args.only in (None, "symmetry"):
        bench_symmetry(rounds=args.rounds)
        if args.large:
            bench_symmetry(n_pairs=1000, n_docs=25_000, rounds=args.rounds, cases=("self-matches dropped (as eval)",),
                           rbo_package=False)
    if args.only in (None, "map"):
        bench_map(rounds=args.rounds)
    if args.only in (None, "exact"):
        bench_exact(args.data, args.lang, rounds=args.rounds)
    if args.data:
        bench_m_use(args.data, args.lang)
    else:
        print("[m-use] skipped: pass --data DIR (a built test set) to time a full evaluation")


if __name__ == "__main__":
    main()
