"""Scores one model on one language of a test set: symmetry, MAP, parity, with intervals.

For each corpus variant (masculine = masculine + neutral titles, feminine = feminine + neutral):

- every query's ranking (``eval.ranking.rank_corpus``) gives AP (relevance restricted to the variant's
  items, and under ``drop`` to the items left in the query's ranking) and accuracy@k; MAP is reported per
  query gender;
- every masculine x feminine query pair (``TestSet.query_pairs``) is ranked over the same items (self-matches
  of either query dropped under ``drop``), and the two rankings give AO, RBO_ext(p) and identical top-1;
- parity: ``MAP_M-MAP_F`` and ``acc@1_M-acc@1_F``, the differences of the per-gender figures above (all
  masculine vs all feminine queries with relevant items; interval from resampling each gender's queries),
  and their paired forms ``paired_AP_M-AP_F`` / ``paired_acc@1_M-acc@1_F``: the mean over query pairs of
  the masculine minus the feminine query's value, with a two-sided paired randomisation test. The two agree
  when every gendered query is in exactly one pair and both queries of every pair have relevant items.

Every figure is ``{"value", "ci95", "n"}`` with a percentile bootstrap over queries or pairs.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

import eval as eval_pkg
from eval.errors import EvalError
from eval.metrics import identical_top1_batch, symmetry_batch
from eval.models import EmbeddingCache, EmbeddingModel
from eval.ranking import (
    SELF_MATCH_DROP,
    SELF_MATCH_RULES,
    TIE_BREAK,
    check_policy,
    id_descending_order,
    rank_rows,
    self_match_columns,
)
from eval.stats import bootstrap_ci, bootstrap_ci_difference, paired_randomization_test
from eval.testset import FEMININE, MASCULINE, NEUTRAL, TestSet, testset_version

CORPORA = (MASCULINE, FEMININE)


@dataclass(frozen=True)
class EvalSettings:
    rbo_p: float = 0.98
    self_match: str = "drop"
    accuracy_k: tuple[int, ...] = (1, 5, 10)
    bootstrap_resamples: int = 1000
    permutation_resamples: int = 10000
    seed: int = 0
    worst_pairs: int = 10
    list_depth: int = 20
    # Working memory for one block of queries (scores, rankings, flags), in MiB; results do not depend on it.
    memory_budget_mb: float = 256

    def __post_init__(self) -> None:
        check_policy(self.self_match)
        if isinstance(self.memory_budget_mb, bool) or not isinstance(self.memory_budget_mb, (int, float)) or not self.memory_budget_mb > 0:
            raise EvalError(f"eval.memory_budget_mb must be a number of MiB > 0 (e.g. 256), got {self.memory_budget_mb!r}")
        if not 0 < self.rbo_p < 1:
            raise EvalError(f"eval.rbo_p must be in (0, 1), got {self.rbo_p}")
        if 1 not in self.accuracy_k or any(k < 1 for k in self.accuracy_k):
            raise EvalError(f"eval.accuracy_k must be cut-offs >= 1 and include 1 (parity uses accuracy@1), got {list(self.accuracy_k)}")
        for name in ("bootstrap_resamples", "permutation_resamples", "list_depth"):
            if getattr(self, name) < 1:
                raise EvalError(f"eval.{name} must be >= 1, got {getattr(self, name)}")
        if self.worst_pairs < 0:
            raise EvalError(f"eval.worst_pairs must be >= 0, got {self.worst_pairs}")

    @property
    def rbo_name(self) -> str:
        return f"RBO(p={self.rbo_p:g})"

    def describe(self) -> dict:
        return {
            # the budget changes how the work is cut into blocks, never a result: left out of results documents
            **{k: v for k, v in asdict(self).items() if k != "memory_budget_mb"},
            "metrics": {
                "AO": "average overlap at full depth: (1/k) sum_d |A[:d] & B[:d]| / d (the paper's 'RBO')",
                self.rbo_name: "RBO_ext, Webber, Moffat & Zobel 2010, eq. 32",
                "AP": "average precision, trec_eval semantics (relevant items never retrieved count)",
                "MAP": "mean AP over queries with >= 1 relevant item in the corpus variant",
                **{f"acc@{k}": f"share of queries with a relevant item in the top {k}" for k in self.accuracy_k},
                "identical_top1": "share of pairs whose masculine and feminine rankings put the same item first",
                "MAP_M-MAP_F": "MAP of masculine queries minus MAP of feminine queries (the MAP figures' difference); "
                "interval: each gender's queries resampled on their own",
                "acc@1_M-acc@1_F": "acc@1 of masculine queries minus acc@1 of feminine queries (same interval)",
                "paired_AP_M-AP_F": "mean over query pairs (both with relevant items) of AP_M - AP_F; "
                "paired randomisation (sign-flip) test, two-sided",
                "paired_acc@1_M-acc@1_F": "mean over query pairs of acc@1_M - acc@1_F; paired randomisation test, two-sided",
            },
            "self_match_rule": SELF_MATCH_RULES[self.self_match],
            "tie_break": TIE_BREAK,
            "interval": f"percentile bootstrap 95% over queries or pairs, {self.bootstrap_resamples} resamples, seed {self.seed}",
        }


@dataclass
class Timing:
    encode_s: float = 0.0
    total_s: float = 0.0
    encoded: int = 0
    texts: int = 0
    extra: dict = field(default_factory=dict)


def _figure(values: np.ndarray, settings: EvalSettings) -> dict:
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return {"value": None, "ci95": [None, None], "n": 0}
    lo, hi = bootstrap_ci(values, resamples=settings.bootstrap_resamples, seed=settings.seed)
    return {"value": float(values.mean()), "ci95": [lo, hi], "n": int(values.size)}


def _difference(masculine: np.ndarray, feminine: np.ndarray, settings: EvalSettings) -> dict:
    """mean(masculine) - mean(feminine) of two independent groups of queries, with its interval."""
    if masculine.size == 0 or feminine.size == 0:
        return {"value": None, "ci95": [None, None], "n": 0, "n_masculine": int(masculine.size), "n_feminine": int(feminine.size)}
    lo, hi = bootstrap_ci_difference(masculine, feminine, resamples=settings.bootstrap_resamples, seed=settings.seed)
    return {
        "value": float(masculine.mean() - feminine.mean()), "ci95": [lo, hi],
        "n": int(masculine.size + feminine.size), "n_masculine": int(masculine.size), "n_feminine": int(feminine.size),
    }


def _paired(differences: np.ndarray, settings: EvalSettings) -> dict:
    if differences.size == 0:  # no pair with relevant items on both sides: no test (and no NaN in the JSON)
        return {**_figure(differences, settings), "p_value": None}
    return {
        **_figure(differences, settings),
        "p_value": paired_randomization_test(differences, resamples=settings.permutation_resamples, seed=settings.seed),
    }


def similarity_scores(q_emb, d_emb) -> np.ndarray:
    """Dot products (queries, docs) as float32, computed once per distinct query embedding.

    BLAS can round the same row differently at different positions of a matrix product; scoring each
    distinct embedding once makes identical query texts rank identically, so a pair whose two forms are
    the same string scores AO = RBO = 1 exactly. ``d_emb`` may be a scipy sparse matrix (tfidf-char):
    then each score is a sparse dot product, which does not depend on the other rows at all.
    """
    if hasattr(q_emb, "toarray"):
        q_emb = q_emb.toarray()
    q_emb = np.ascontiguousarray(q_emb)
    # Distinct rows by their bytes (as np.unique(axis=0) compares them, without its sort of whole rows).
    distinct_id: dict[bytes, int] = {}
    first_rows: list[int] = []
    inverse = np.empty(len(q_emb), dtype=np.int64)
    for i, row in enumerate(q_emb):
        k = distinct_id.setdefault(row.tobytes(), len(first_rows))
        if k == len(first_rows):
            first_rows.append(i)
        inverse[i] = k
    distinct = q_emb[first_rows]
    if hasattr(d_emb, "toarray"):
        by_doc = d_emb @ distinct.T  # sparse x dense: (docs, distinct)
        return np.ascontiguousarray(by_doc.T[inverse], dtype=np.float32)
    return (distinct @ d_emb.T)[inverse]


def _check_testset(ts: TestSet) -> None:
    if ts.queries.height == 0:
        raise EvalError(f"{ts.lang}: the test set has no queries")
    for g in CORPORA:
        if ts.corpus_for(g).height == 0:
            raise EvalError(
                f"{ts.lang}: the {g} corpus (the {g} + neutral titles of corpus.parquet) is empty; "
                "rebuild the language or drop it from --lang"
            )
    rel = ts.qrels.filter(pl.col("relevance") > 0)
    if rel.height == 0:
        raise EvalError(f"{ts.lang}: qrels.tsv has no relevant pair; MAP is undefined")
    without = ts.queries.filter(~pl.col("id").is_in(rel["query_id"].unique().to_list()))
    if without.height == ts.queries.height:
        raise EvalError(f"{ts.lang}: no query id of queries.parquet appears in qrels.tsv")


# Bytes one block holds per (query, document) cell: float32 scores (and the sparse product's copy), the int32
# ranking, the self-match, relevance and hit flags; per (pair, document) cell: the two int32 pair rankings and
# the padding checks of the overlap counting. They size the blocks from eval.memory_budget_mb
# (benchmarks/bench_scale.py measures the peak against the budget).
QUERY_CELL_BYTES = 16
PAIR_CELL_BYTES = 16


def query_blocks(
    unit_of_query: list, m_idx: np.ndarray, n_docs: int, budget_mb: float
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Cut the queries into blocks of ``(query indices, pair indices)`` that fit the budget.

    The queries of one unit (one ``pair_id``) stay in one block, so both forms of every pair are ranked in
    the same block, from the same distinct-embedding product. A unit larger than the budget is a block alone.
    """
    pairs_of_query = np.bincount(m_idx, minlength=len(unit_of_query)) if len(m_idx) else np.zeros(len(unit_of_query), int)
    units: dict = {}
    for i, unit in enumerate(unit_of_query):
        units.setdefault(unit, []).append(i)
    pairs_by_m: dict[int, list[int]] = {}
    for j, m in enumerate(m_idx.tolist()):
        pairs_by_m.setdefault(m, []).append(j)
    budget = budget_mb * 2**20
    blocks, rows, pairs, used = [], [], [], 0
    for members in units.values():
        n_pairs = int(sum(pairs_of_query[i] for i in members))
        cost = (len(members) * QUERY_CELL_BYTES + n_pairs * PAIR_CELL_BYTES) * max(n_docs, 1)
        if rows and used + cost > budget:
            blocks.append((np.array(rows, dtype=np.int64), np.array(pairs, dtype=np.int64)))
            rows, pairs, used = [], [], 0
        rows.extend(members)
        pairs.extend(j for i in members for j in pairs_by_m.get(i, ()))
        used += cost
    if rows:
        blocks.append((np.array(rows, dtype=np.int64), np.array(sorted(pairs), dtype=np.int64)))
    return blocks


def _flags(rows: int, n_docs: int, columns: list[np.ndarray]) -> np.ndarray:
    """Dense boolean (rows, n_docs) from each row's column indices."""
    out = np.zeros((rows, n_docs), dtype=bool)
    lengths = [len(c) for c in columns]
    if sum(lengths):
        out[np.repeat(np.arange(rows), lengths), np.concatenate(columns)] = True
    return out


def _without(ranking: np.ndarray, items: np.ndarray) -> np.ndarray:
    """A -1-padded ranking row with ``items`` removed; the others keep their order."""
    kept = ranking[(ranking >= 0) & ~np.isin(ranking, items)]
    out = np.full_like(ranking, -1)
    out[: len(kept)] = kept
    return out


def score_corpus(
    q_emb, d_emb, doc_ids: list[str], self_cols: list[np.ndarray], relevant_cols: list[np.ndarray],
    m_idx: np.ndarray, f_idx: np.ndarray, unit_of_query: list, settings: EvalSettings,
) -> dict:
    """Per-query AP, first-hit position and per-pair AO, RBO, identical top-1 and top lists over one corpus,
    computed block by block of queries so memory is bounded by ``settings.memory_budget_mb``.

    ``self_cols``/``relevant_cols``: per query, the corpus columns of its self-matches and of its relevant
    items (self-matches already removed under ``drop``). Each pair's rankings are its two queries' rankings,
    less the other form's self-matches under ``drop``: the same order a fresh sort would give, without one.
    """
    n_queries, n_docs, n_pairs = len(self_cols), len(doc_ids), len(m_idx)
    drop = settings.self_match == SELF_MATCH_DROP
    # Work in id-descending column order: the corpus rows are permuted once, so the sort's tie-break is the
    # column itself and no block is gathered into that order; columns map back to corpus rows at the end.
    by_id_descending = id_descending_order(doc_ids)
    column_of = np.empty(n_docs, dtype=np.int64)
    column_of[by_id_descending] = np.arange(n_docs)
    d_emb = d_emb[by_id_descending]
    self_cols = [np.sort(column_of[c]) for c in self_cols]
    relevant_cols = [column_of[c] for c in relevant_cols]
    n_relevant = np.array([len(c) for c in relevant_cols], dtype=np.int64)
    ap = np.full(n_queries, np.nan)
    first_hit = np.full(n_queries, n_docs, dtype=np.int64)  # n_docs: no relevant item retrieved
    ao, rbo_values, same_top1 = np.zeros(n_pairs), np.zeros(n_pairs), np.zeros(n_pairs)
    depth = settings.list_depth
    top = {name: np.full((n_pairs, depth), -1, dtype=np.int64) for name in ("top_m", "top_f")}
    top_relevant = {name: np.zeros((n_pairs, depth), dtype=bool) for name in ("top_m_relevant", "top_f_relevant")}
    blocks = query_blocks(unit_of_query, m_idx, n_docs, settings.memory_budget_mb)
    for rows, pairs in blocks:
        n_rows = len(rows)
        dropped = _flags(n_rows, n_docs, [self_cols[i] for i in rows]) if drop else None
        ranking = rank_rows(similarity_scores(q_emb[rows], d_emb), None, dropped)
        del dropped
        relevant = _flags(n_rows, n_docs, [relevant_cols[i] for i in rows])
        hits = np.take_along_axis(relevant, ranking, axis=1)  # padding (-1) reads the last column: masked next
        if drop:
            hits &= ranking >= 0
        hit_row, hit_pos = np.nonzero(hits)
        del hits
        # AP = sum over hits of (hits so far / position) / relevant items; np.nonzero lists hits row by row,
        # left to right, so a hit's count within its row is its index minus the row's first index, plus 1.
        row_start = np.searchsorted(hit_row, np.arange(n_rows))
        hits_so_far = np.arange(len(hit_row)) - row_start[hit_row] + 1
        ap_sums = np.bincount(hit_row, weights=hits_so_far / (hit_pos + 1), minlength=n_rows)
        with np.errstate(invalid="ignore", divide="ignore"):
            ap[rows] = np.where(n_relevant[rows] > 0, ap_sums / n_relevant[rows], np.nan)
        has_hit = row_start < len(hit_row)
        has_hit[has_hit] &= hit_row[row_start[has_hit]] == np.flatnonzero(has_hit)
        first_hit[rows[has_hit]] = hit_pos[row_start[has_hit]]
        if len(pairs):
            local = np.empty(n_queries, dtype=np.int64)
            local[rows] = np.arange(n_rows)
            pm, pf = local[m_idx[pairs]], local[f_idx[pairs]]
            rank_m, rank_f = ranking[pm], ranking[pf]
            if drop:  # both forms of a pair are ranked without the self-matches of either
                for k, j in enumerate(pairs):
                    m, f = m_idx[j], f_idx[j]
                    if not np.array_equal(self_cols[m], self_cols[f]):
                        rank_m[k] = _without(rank_m[k], self_cols[f])
                        rank_f[k] = _without(rank_f[k], self_cols[m])
            # rankings from one sort each, less some items: permutations, so no check for repeated items
            ao[pairs], rbo_values[pairs] = symmetry_batch(rank_m, rank_f, settings.rbo_p, check=False)
            same_top1[pairs] = identical_top1_batch(rank_m, rank_f)
            for name, flags, ranks, pos in (("top_m", "top_m_relevant", rank_m, pm), ("top_f", "top_f_relevant", rank_f, pf)):
                head = ranks[:, :depth]
                top[name][pairs, : head.shape[1]] = np.where(head >= 0, by_id_descending[head], -1)
                top_relevant[flags][pairs, : head.shape[1]] = np.take_along_axis(relevant[pos], np.maximum(head, 0), axis=1) & (head >= 0)
        del ranking, relevant
    return {"AP": ap, "has_relevant": n_relevant > 0, "first_hit": first_hit, "AO": ao, "RBO": rbo_values,
            "identical_top1": same_top1, **top, **top_relevant, "blocks": len(blocks)}


def _embed(ts: TestSet, model: EmbeddingModel, cache: EmbeddingCache, timing: Timing, progress: bool):
    corpus_texts = ts.corpus["text"].to_list()
    query_texts = ts.queries["text"].to_list()
    start = time.perf_counter()
    if hasattr(model, "fit"):
        model.fit(corpus_texts)
    q, n_q = cache.encode(model, query_texts, "query", progress=progress)
    d, n_d = cache.encode(model, corpus_texts, "passage", progress=progress)
    timing.encode_s += time.perf_counter() - start
    timing.encoded += n_q + n_d
    timing.texts += len(query_texts) + len(corpus_texts)
    return q, d


def evaluate_language(
    ts: TestSet, model: EmbeddingModel, cache: EmbeddingCache, settings: EvalSettings, *, progress: bool = True
) -> tuple[dict, Timing]:
    """All figures for one language; also per-query and per-pair rows (for audits) and the worst pairs."""
    _check_testset(ts)
    timing = Timing()
    start = time.perf_counter()
    q_emb, d_emb = _embed(ts, model, cache, timing, progress)

    queries = ts.queries
    q_ids = queries["id"].to_list()
    q_index = {q: i for i, q in enumerate(q_ids)}
    q_gender = np.array(queries["gender"].to_list())
    is_m, is_f = q_gender == MASCULINE, q_gender == FEMININE
    pairs = ts.query_pairs()
    m_idx = np.array([q_index[q] for q in pairs["m_id"].to_list()], dtype=np.int64)
    f_idx = np.array([q_index[q] for q in pairs["f_id"].to_list()], dtype=np.int64)
    q_texts = queries["text"].to_list()
    q_pair_ids = queries["pair_id"].to_list()
    pair_ids, pair_m, pair_f = pairs["pair_id"].to_list(), pairs["m_id"].to_list(), pairs["f_id"].to_list()

    result: dict = {
        "lang": ts.lang,
        "counts": {
            "queries": {g: int((q_gender == g).sum()) for g in (MASCULINE, FEMININE, NEUTRAL)},
            "query_pairs": int(pairs.height),
            "corpus": {g: int(ts.corpus.filter(pl.col("gender") == g).height) for g in (MASCULINE, FEMININE, NEUTRAL)},
            "qrels_relevant": int((ts.qrels["relevance"] > 0).sum()),
        },
        "corpora": {},
    }
    per_query: list[dict] = []
    per_pair: list[dict] = []
    worst: dict[str, list[dict]] = {}
    q_source_ids = queries["source_ids"].to_list()
    # Relevant cells as (query row, corpus column) integers from lazy joins, not Python loops over the qrels,
    # which grow with queries times catalogue; repeated qrels lines fall out with np.unique below.
    query_rows = pl.LazyFrame({"query_id": q_ids, "q": np.arange(len(q_ids), dtype=np.int64)})

    for corpus_gender in CORPORA:
        docs = ts.corpus.with_row_index("row").filter(pl.col("gender").is_in([corpus_gender, NEUTRAL]))
        doc_ids = docs["id"].to_list()
        doc_texts = docs["text"].to_list()
        self_cols = self_match_columns(q_source_ids, docs["source_ids"].to_list())
        cells = (ts.qrels.lazy().filter(pl.col("relevance") > 0).select("query_id", "doc_id")
                 .join(query_rows, on="query_id")
                 .join(pl.LazyFrame({"doc_id": doc_ids, "d": np.arange(len(doc_ids), dtype=np.int64)}), on="doc_id")
                 .select("q", "d").collect().to_numpy().reshape(-1, 2))
        keys = np.unique(cells[:, 0] * len(doc_ids) + cells[:, 1])  # sorted by query, then column
        if settings.self_match == SELF_MATCH_DROP:
            # A dropped self-match leaves the query's corpus, so it leaves its relevant set too: a title merged
            # from the query's own source and a relevant one would otherwise count as a relevant item that can
            # never be retrieved.
            self_keys = np.concatenate([i * len(doc_ids) + c for i, c in enumerate(self_cols)] or [np.zeros(0, np.int64)])
            keys = keys[~np.isin(keys, self_keys)]
        bounds = np.searchsorted(keys // max(len(doc_ids), 1), np.arange(len(q_ids) + 1))
        relevant_cols = [keys[bounds[i]:bounds[i + 1]] % len(doc_ids) for i in range(len(q_ids))]
        scored = score_corpus(q_emb, d_emb[docs["row"].to_numpy()], doc_ids, self_cols, relevant_cols,
                              m_idx, f_idx, q_pair_ids, settings)
        ap, has_relevant, ao, rbo_values, same_top1 = (
            scored["AP"], scored["has_relevant"], scored["AO"], scored["RBO"], scored["identical_top1"])
        acc = {k: np.where(has_relevant, (scored["first_hit"] < k).astype(np.float64), np.nan) for k in settings.accuracy_k}

        both_scored = has_relevant[m_idx] & has_relevant[f_idx]
        ap_gap = ap[m_idx][both_scored] - ap[f_idx][both_scored]
        acc1_gap = acc[1][m_idx][both_scored] - acc[1][f_idx][both_scored]

        block: dict = {
            "documents": len(doc_ids),
            "symmetry": {
                "AO": _figure(ao, settings),
                settings.rbo_name: _figure(rbo_values, settings),
                "identical_top1": _figure(same_top1, settings),
            },
            "MAP": {g: _figure(ap[(q_gender == g) & has_relevant], settings) for g in (FEMININE, MASCULINE, NEUTRAL)},
            "accuracy": {
                f"acc@{k}": {g: _figure(v[(q_gender == g) & has_relevant], settings) for g in (FEMININE, MASCULINE, NEUTRAL)}
                for k, v in acc.items()
            },
            "parity": {
                "MAP_M-MAP_F": _difference(ap[is_m & has_relevant], ap[is_f & has_relevant], settings),
                "acc@1_M-acc@1_F": _difference(acc[1][is_m & has_relevant], acc[1][is_f & has_relevant], settings),
                "paired_AP_M-AP_F": _paired(ap_gap, settings),
                "paired_acc@1_M-acc@1_F": _paired(acc1_gap, settings),
            },
            "queries_without_relevant": int((~has_relevant).sum()),
        }
        result["corpora"][corpus_gender] = block
        timing.extra[f"query_blocks_{corpus_gender}"] = scored["blocks"]

        for i, q in enumerate(q_ids):
            per_query.append({
                "corpus": corpus_gender, "query_id": q, "gender": str(q_gender[i]), "pair_id": q_pair_ids[i],
                "AP": None if np.isnan(ap[i]) else float(ap[i]),
                **{f"acc@{k}": None if np.isnan(v[i]) else float(v[i]) for k, v in acc.items()},
            })
        for j in range(len(m_idx)):
            per_pair.append({
                "corpus": corpus_gender, "pair_id": pair_ids[j], "m_id": pair_m[j], "f_id": pair_f[j],
                "AO": float(ao[j]), settings.rbo_name: float(rbo_values[j]), "identical_top1": bool(same_top1[j]),
                "AP_M": None if np.isnan(ap[m_idx[j]]) else float(ap[m_idx[j]]),
                "AP_F": None if np.isnan(ap[f_idx[j]]) else float(ap[f_idx[j]]),
            })

        def top(items: np.ndarray, flags: np.ndarray) -> list[dict]:
            return [{"text": doc_texts[d], "relevant": bool(r)} for d, r in zip(items, flags) if d >= 0]

        worst[corpus_gender] = [
            {
                "pair_id": pair_ids[j],
                "masculine": q_texts[m_idx[j]], "feminine": q_texts[f_idx[j]],
                "AO": float(ao[j]), settings.rbo_name: float(rbo_values[j]),
                "AP_M": None if np.isnan(ap[m_idx[j]]) else float(ap[m_idx[j]]),
                "AP_F": None if np.isnan(ap[f_idx[j]]) else float(ap[f_idx[j]]),
                "top_masculine": top(scored["top_m"][j], scored["top_m_relevant"][j]),
                "top_feminine": top(scored["top_f"][j], scored["top_f_relevant"][j]),
            }
            for j in np.argsort(rbo_values, kind="stable")[: settings.worst_pairs]
        ]

    result["per_query"] = per_query
    result["per_pair"] = per_pair
    result["worst_pairs"] = worst
    timing.total_s = time.perf_counter() - start
    result["timing"] = {"encode_s": timing.encode_s, "total_s": timing.total_s, "texts": timing.texts, "encoded": timing.encoded,
                        **timing.extra}
    return result, timing


def evaluate(
    data: str | Path,
    langs: list[str],
    model: EmbeddingModel,
    cache: EmbeddingCache,
    settings: EvalSettings,
    *,
    progress: bool = True,
) -> dict:
    """The results document of one model over several languages of one test-set root."""
    from eval.testset import read_testset

    if not langs:
        raise EvalError(f"{data}: no language to evaluate (no <lang>/queries.parquet found)")
    languages: dict[str, dict] = {}
    versions: dict[str, str] = {}
    for lang in langs:
        ts = read_testset(data, lang)
        versions[lang] = testset_version(ts, data)
        languages[lang], _ = evaluate_language(ts, model, cache, settings, progress=progress)
        languages[lang]["testset_version"] = versions[lang]
    combined = "+".join(f"{lang}-{v}" for lang, v in sorted(versions.items()))
    version = (
        next(iter(versions.values())) if len(set(versions.values())) == 1 and not next(iter(versions.values())).startswith("sha-")
        else "sha-" + hashlib.sha256(combined.encode()).hexdigest()[:12]
    )
    return {
        "toolkit": {"name": "gendered-job-titles eval", "version": eval_pkg.__version__},
        "model": model.meta.to_dict(),
        "testset": {"root": str(data), "version": version, "languages": versions},
        "settings": settings.describe(),
        "languages": languages,
    }
