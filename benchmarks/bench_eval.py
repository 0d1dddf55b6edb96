"""Speed of eval against reference libraries, in one run.

    .venv/bin/python benchmarks/bench_eval.py [--data data --lang pt]

1. AO + RBO_ext(p=0.98) for 200 pairs of full rankings of a 4,700-title corpus: eval.metrics' batch
   functions vs the `rbo` package (target >= 20x faster, same values to 1e-9); once for full permutations
   and once as eval ranks a pair (self-matches dropped, rows padded). Best of 3 runs on both sides.
2. MAP for 200 queries x 4,700 documents with tied float32 scores: eval.ranking + eval.metrics vs
   `ir-measures` (target >= 5x faster, identical values).
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


def correlated_scores(rng, n_queries: int, n_docs: int, noise: float) -> tuple[np.ndarray, np.ndarray]:
    base = rng.standard_normal((n_queries, n_docs))
    return base + noise * rng.standard_normal(base.shape), base + noise * rng.standard_normal(base.shape)


def bench_symmetry(n_pairs: int = 200, n_docs: int = 4700, repeat: int = 3) -> None:
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
        "self-matches dropped": (rank_corpus(s_m, doc_ids, self_matches=drop), rank_corpus(s_f, doc_ids, self_matches=drop)),
    }
    for case, (rank_m, rank_f) in cases.items():
        t_ours, (ao, rb) = timed(lambda: symmetry_batch(rank_m, rank_f, 0.98), repeat=repeat)

        def reference():
            out_ao, out_rbo = [], []
            for a, b in zip(rank_m.tolist(), rank_f.tolist()):
                rs = RankingSimilarity([x for x in a if x >= 0], [x for x in b if x >= 0])
                out_ao.append(rs.rbo())  # p = 1.0: average overlap
                out_rbo.append(rs.rbo_ext(p=0.98))
            return np.array(out_ao), np.array(out_rbo)

        t_ref, (ref_ao, ref_rbo) = timed(reference, repeat=repeat)
        diff = max(np.abs(ao - ref_ao).max(), np.abs(rb - ref_rbo).max())
        print(f"[symmetry, {case}] {n_pairs} pairs x {n_docs} docs, AO + RBO(p=0.98), best of {repeat}: "
              f"eval {t_ours * 1000:.1f} ms, rbo package {t_ref * 1000:.0f} ms -> {t_ref / t_ours:.0f}x faster (target >= 20x); "
              f"max |difference| {diff:.2e} (target <= 1e-9); mean AO {ao.mean():.4f}, RBO {rb.mean():.4f}")


def bench_map(n_queries: int = 200, n_docs: int = 4700, repeat: int = 3) -> None:
    import ir_measures
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
    qrels = {q: {doc_ids[j]: 1 for j in np.flatnonzero(relevant[i])} for i, q in enumerate(q_ids)}
    run = {q: dict(zip(doc_ids, scores[i].tolist())) for i, q in enumerate(q_ids)}

    def ours():
        return float(np.nanmean(average_precision_batch(rank_corpus(scores, doc_ids), relevant)))

    t_ours, ours_map = timed(ours, repeat=repeat)
    t_ref, ref = timed(lambda: ir_measures.calc_aggregate([AP], qrels, run)[AP], repeat=repeat)
    print(f"[MAP] {n_queries} queries x {n_docs} docs with ties, best of {repeat}: eval {t_ours * 1000:.1f} ms (ranking included), "
          f"ir-measures {t_ref * 1000:.0f} ms -> {t_ref / t_ours:.1f}x faster (target >= 5x); "
          f"MAP {ours_map:.12f} vs {ref:.12f}, |difference| {abs(ours_map - ref):.1e}")


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
    args = parser.parse_args()
    bench_symmetry()
    bench_map()
    if args.data:
        bench_m_use(args.data, args.lang)
    else:
        print("[m-use] skipped: pass --data DIR (a built test set) to time a full evaluation")


if __name__ == "__main__":
    main()
