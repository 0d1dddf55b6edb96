"""Speed of eval against the strongest straightforward baselines, in one run.

    .venv/bin/python benchmarks/bench_eval.py [--data data --lang pt] [--rounds 7]

Every comparison alternates the two sides (A, B, A, B, ...) for --rounds rounds and reports the median
ratio with its spread (min-max of the per-round ratios), so a slow moment of this shared machine hits
both sides alike.

1. AO + RBO_ext(p=0.98), 200 pairs of rankings of a 4,700-title corpus, full permutations and as eval ranks
   a pair (self-matches dropped, rows padded with -1): eval.metrics.symmetry_batch vs a plain numpy batch
   (every row at once, no blocking), a per-row numpy loop (the obvious numpy code), and the pure-Python
   `rbo` package (the reference for the values; its ratio measures Python against numpy).
2. MAP, 200 queries x 4,700 documents with tied float32 scores: eval.ranking + eval.metrics (ranking
   included) vs pytrec_eval called directly (evaluate() on prebuilt dicts; and with building the dicts)
   and ir-measures; identical values. In-process and as whole processes (imports included).
3. With --data: m-use on one language, cold cache: share of wall time spent outside encoding (target <= 10%);
   then the re-run time with a warm cache.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


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
    return f"{name_a} {ta * 1000:.1f} ms, {name_b} {tb * 1000:.1f} ms: {name_a} is {med:.2f}x faster (spread {lo:.2f}-{hi:.2f})"


def correlated_scores(rng, n_queries: int, n_docs: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    base = rng.standard_normal((n_queries, n_docs))
    return base + noise * rng.standard_normal(base.shape), base + noise * rng.standard_normal(base.shape)


def symmetry_numpy_batch(a: np.ndarray, b: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    """The straightforward vectorised code: every row at once, padding handled with masks."""
    rows, n = a.shape
    lengths = (a >= 0).sum(axis=1)
    pos_b = np.full((rows, n + 1), n, dtype=np.int64)  # item n (the padding) is never found
    np.put_along_axis(pos_b, np.where(b >= 0, b, n), np.where(b >= 0, np.arange(n), n), axis=1)
    join = np.maximum(np.take_along_axis(pos_b, np.where(a >= 0, a, n), axis=1), np.arange(n))
    join[a < 0] = n
    counts = np.zeros((rows, n + 1), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(rows), n), join.ravel()), 1)
    x = np.cumsum(counts[:, :n], axis=1) / np.arange(1, n + 1)
    valid = np.arange(n)[None, :] < lengths[:, None]
    ao = np.where(valid, x, 0.0).sum(axis=1) / lengths
    w = p ** np.arange(1, n + 1)
    last = x[np.arange(rows), lengths - 1]
    rb = (1 - p) / p * (np.where(valid, x, 0.0) * w).sum(axis=1) + last * p ** lengths.astype(float)
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


def bench_symmetry(n_pairs: int = 200, n_docs: int = 4700, rounds: int = 7) -> None:
    from rbo import RankingSimilarity

    from eval.metrics import symmetry_batch
    from eval.ranking import rank_corpus

    rng = np.random.default_rng(0)
    doc_ids = [f"doc{j:05d}" for j in range(n_docs)]
    s_m, s_f = correlated_scores(rng, n_pairs, n_docs, noise=0.3)
    # As eval ranks a pair: both forms over the same items, one or two self-matches dropped (tail padding).
    drop = np.zeros((n_pairs, n_docs), dtype=bool)
    drop[np.arange(n_pairs), rng.integers(0, n_docs, n_pairs)] = True
    drop[np.arange(0, n_pairs, 2), rng.integers(0, n_docs, n_pairs // 2)] = True
    cases = {
        "full permutations": (rank_corpus(s_m, doc_ids), rank_corpus(s_f, doc_ids)),
        "self-matches dropped (as eval)": (rank_corpus(s_m, doc_ids, self_matches=drop), rank_corpus(s_f, doc_ids, self_matches=drop)),
    }
    for case, (rank_m, rank_f) in cases.items():
        ao, rb = symmetry_batch(rank_m, rank_f, 0.98)

        def reference():
            out_ao, out_rbo = [], []
            for a, b in zip(rank_m.tolist(), rank_f.tolist()):
                rs = RankingSimilarity([x for x in a if x >= 0], [x for x in b if x >= 0])
                out_ao.append(rs.rbo())  # p = 1.0: average overlap
                out_rbo.append(rs.rbo_ext(p=0.98))
            return np.array(out_ao), np.array(out_rbo)

        ref_ao, ref_rbo = reference()
        diffs = {"rbo package": max(np.abs(ao - ref_ao).max(), np.abs(rb - ref_rbo).max())}
        for name, fn in (("numpy batch", symmetry_numpy_batch), ("numpy per-row loop", symmetry_numpy_loop)):
            other_ao, other_rb = fn(rank_m, rank_f, 0.98)
            diffs[name] = max(np.abs(ao - other_ao).max(), np.abs(rb - other_rb).max())
        ours = lambda: symmetry_batch(rank_m, rank_f, 0.98)  # noqa: E731
        as_eval = lambda: symmetry_batch(rank_m, rank_f, 0.98, check=False)  # noqa: E731
        print(f"[symmetry, {case}] {n_pairs} pairs x {n_docs} docs, AO + RBO(p=0.98), {rounds} alternating rounds; "
              f"max |difference| to eval: " + ", ".join(f"{k} {v:.1e}" for k, v in diffs.items()))
        for name, fn in (("numpy batch", symmetry_numpy_batch), ("numpy per-row loop", symmetry_numpy_loop)):
            baseline = lambda fn=fn: fn(rank_m, rank_f, 0.98)  # noqa: E731
            print("    " + ratio_text("eval (checks repeated items)", name, alternate(ours, baseline, rounds)))
            print("    " + ratio_text("eval as evaluate runs it (check=False)", name, alternate(as_eval, baseline, rounds)))
        print("    " + ratio_text("eval", "rbo package (pure Python)", alternate(ours, reference, max(3, rounds // 3))))


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
else:
    import pytrec_eval
    q_ids = [f"q{i:03d}" for i in range(scores.shape[0])]
    qrels = {q: {doc_ids[j]: 1 for j in np.flatnonzero(relevant[i])} for i, q in enumerate(q_ids)}
    run = {q: dict(zip(doc_ids, scores[i].tolist())) for i, q in enumerate(q_ids)}
    value = float(np.mean([v["map"] for v in pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run).values()]))
print(repr(value))
"""


def bench_map(n_queries: int = 200, n_docs: int = 4700, rounds: int = 7) -> None:
    import subprocess
    import sys

    import ir_measures
    import pytrec_eval
    from ir_measures import AP

    from eval.metrics import average_precision_batch
    from eval.ranking import rank_corpus

    rng = np.random.default_rng(1)
    doc_ids = [f"doc{j:05d}" for j in range(n_docs)]
    # float32, as embedding models give them; coarse values: many ties
    scores = np.round(rng.random((n_queries, n_docs)), 2).astype(np.float32)
    relevant = rng.random((n_queries, n_docs)) < 0.005
    relevant[:, 0] = True
    q_ids = [f"q{i:03d}" for i in range(n_queries)]

    def build_dicts():
        qrels = {q: {doc_ids[j]: 1 for j in np.flatnonzero(relevant[i])} for i, q in enumerate(q_ids)}
        run = {q: dict(zip(doc_ids, scores[i].tolist())) for i, q in enumerate(q_ids)}
        return qrels, run

    qrels, run = build_dicts()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map"})

    def ours():
        return float(np.nanmean(average_precision_batch(rank_corpus(scores, doc_ids), relevant)))

    def trec_direct():
        return float(np.mean([v["map"] for v in evaluator.evaluate(run).values()]))

    def trec_with_dicts():
        q, r = build_dicts()
        return float(np.mean([v["map"] for v in pytrec_eval.RelevanceEvaluator(q, {"map"}).evaluate(r).values()]))

    values = {"eval": ours(), "pytrec_eval": trec_direct(), "ir-measures": ir_measures.calc_aggregate([AP], qrels, run)[AP]}
    print(f"[MAP] {n_queries} queries x {n_docs} docs with ties, {rounds} alternating rounds; MAP "
          + ", ".join(f"{k} {v:.12f}" for k, v in values.items()))
    print("    " + ratio_text("eval (ranking included)", "pytrec_eval.evaluate on prebuilt dicts", alternate(ours, trec_direct, rounds)))
    print("    " + ratio_text("eval (ranking included)", "pytrec_eval with building its dicts", alternate(ours, trec_with_dicts, rounds)))
    print("    " + ratio_text("eval (ranking included)", "ir-measures", alternate(ours, lambda: ir_measures.calc_aggregate([AP], qrels, run), max(3, rounds // 2))))
    # Whole processes: interpreter start, imports, loading the same arrays, computing, printing.
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        arrays = f"{tmp}/inputs.npz"
        np.savez(arrays, scores=scores, relevant=relevant)
        outputs = {}

        def process(side):
            out = subprocess.run([sys.executable, "-c", MAP_CHILD, side, arrays], capture_output=True, text=True, check=True)
            outputs[side] = float(out.stdout)

        result = alternate(lambda: process("eval"), lambda: process("pytrec_eval"), max(3, rounds // 2))
        print("    whole process: " + ratio_text("eval", "pytrec_eval", result)
              + f"; values {outputs['eval']:.12f} vs {outputs['pytrec_eval']:.12f}")


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
    print(f"[m-use {lang}] {timing.texts} texts ({timing.encoded} encoded), cold: {cold_wall:.1f} s wall, "
          f"{timing.encode_s:.1f} s encoding, {outside:.2f} s outside encoding = {outside / cold_wall:.1%} "
          f"(target <= 10%); warm-cache re-run {warm_wall:.2f} s ({warm_timing.encoded} encoded)")
    same = warm["corpora"] == cold["corpora"]
    print(f"[m-use {lang}] warm results identical to cold: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, help="a built test-set root (e.g. data) for the m-use timing")
    parser.add_argument("--lang", default="pt")
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds per comparison")
    args = parser.parse_args()
    bench_symmetry(rounds=args.rounds)
    bench_map(rounds=args.rounds)
    if args.data:
        bench_m_use(args.data, args.lang)
    else:
        print("[m-use] skipped: pass --data DIR (a built test set) to time a full evaluation")


if __name__ == "__main__":
    main()
