"""Scores one model on one language of a test set: symmetry, MAP, parity, with intervals.

For each corpus variant (masculine = masculine + neutral titles, feminine = feminine + neutral):

- every query's ranking (``eval.ranking.rank_corpus``) gives AP (relevance restricted to the variant's
  items, and under ``drop`` to the items left in the query's ranking) and accuracy@k; MAP is reported per
  query gender;
- every masculine x feminine query pair (``TestSet.query_pairs``) is ranked over the same items (self-matches
  of either query dropped under ``drop``), and the two rankings give AO, RBO_ext(p) and identical top-1;
- parity: every gap of ``settings.measures`` (``Gap(X)``, ``eval.measures.Gap``; by default ``Gap(AP)`` and
  ``Gap(acc@1)``): ``MAP_M-MAP_F``, the difference of the per-gender figures above (all masculine vs all
  feminine queries with relevant items; interval from resampling each gender's queries), and its paired form
  ``paired_AP_M-AP_F``: the mean over query pairs of the masculine minus the feminine query's value, with a
  two-sided paired randomisation test. The two agree when every gendered query is in exactly one pair and
  both queries of every pair have relevant items.

Every figure is ``{"value", "ci95", "n"}`` with a percentile bootstrap over queries or pairs.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import polars as pl

from eval import __version__ as toolkit_version
from eval.errors import EvalError
from eval.measures import PairRankings, QueryRankings, RankBiasedOverlap
from eval.memory import release_freed_memory
from eval.metrics import first_hit_positions
from eval.models import EmbeddingCache, EmbeddingModel, check_model
from eval.params import EvalSettings
from eval.results import LanguageResult, ResultRows, RunResult
from eval.relevance import BlockRelevance, block_relevant_columns, rows_of
from eval.ranking import (
    SELF_MATCH_DROP,
    SelfMatchColumns,
    grid_scores,
    id_descending_order,
    rank_rows,
    score_grid,
    self_match_columns,
)
from eval.stats import bootstrap_ci, bootstrap_ci_difference, paired_randomization_test
from eval.testset import (DOUBLET, EXTRA_FORMS, FEMININE, INCLUSIVE, MASCULINE, NEUTRAL, TestSet, testset_digest,
                           testset_source, testset_version)

CORPORA = (MASCULINE, FEMININE)
# The gendered forms an extra form (doublet, neomorpheme) is compared with, and their short names in the keys
# of a form's figures (``symmetry.vs_M``, ``paired_AP_doublet-AP_F``).
FORM_REFERENCES = ((MASCULINE, "M"), (FEMININE, "F"))


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


def _check_testset(ts: TestSet, corpora: tuple[str, ...] = CORPORA) -> None:
    if ts.queries.height == 0:
        raise EvalError(f"{ts.lang}: the test set has no queries")
    for g in corpora:
        if g == DOUBLET and ts.corpus_for(g).height == 0:
            raise EvalError(
                f"{ts.lang}: eval.corpora asks for the doublet corpus, but corpus.parquet has no doublet items; "
                "build the test set with params.yaml build.forms.corpus: true (python -m builder postprocess), "
                "or drop doublet from eval.corpora"
            )
        if ts.corpus_for(g).height == 0:
            raise EvalError(
                f"{ts.lang}: the {g} corpus (the {g} + neutral titles of corpus.parquet) is empty; "
                "rebuild the language or drop it from --lang"
            )


def _check_relevance(ts: TestSet, relevance: BlockRelevance) -> None:
    if relevance.relevant_lines == 0:
        raise EvalError(f"{ts.lang}: qrels.tsv has no relevant pair; MAP is undefined")
    if relevance.known_query_lines == 0:
        raise EvalError(f"{ts.lang}: no query id of queries.parquet appears in qrels.tsv")


# The bytes a block holds at each of its three peaks, per (query, document) cell, per (pair, document) cell and
# per query and embedding dimension (measured, traced and as RSS: tests/eval/test_evaluate.py, docs/eval.md):
# - scoring: the float32 scores and the float64 product of half the documents (8, ``grid_scores``); the query
#   vectors as read, dense, and on the float64 grid (12 a dimension);
# - ranking: the scores, the int32 ranking and the self-match flags (9);
# - pairs: the ranking and the relevance flags (5), the two int32 pair rankings and the overlap counting's
#   flags (9 a pair cell).
# A block costs its largest peak, so a block of unpaired queries and a block of pairs reach the same peak, and
# the peak does not depend on how a test set mixes them.
SCORING_QUERY_CELL_BYTES = 8
QUERY_VECTOR_BYTES_PER_DIMENSION = 12
RANKING_QUERY_CELL_BYTES = 9
PAIRS_QUERY_CELL_BYTES = 5
PAIR_CELL_BYTES = 9


def block_cost(n_queries: int, n_pairs: int, n_docs: int, dimension: int = 0) -> int:
    """The bytes of working memory a block of ``n_queries`` queries and ``n_pairs`` pairs holds at its peak, over
    ``n_docs`` titles and embeddings of ``dimension``."""
    n_docs = max(n_docs, 1)
    scoring = n_queries * (SCORING_QUERY_CELL_BYTES * n_docs + QUERY_VECTOR_BYTES_PER_DIMENSION * dimension)
    ranking = n_queries * RANKING_QUERY_CELL_BYTES * n_docs
    pairs = (n_queries * PAIRS_QUERY_CELL_BYTES + n_pairs * PAIR_CELL_BYTES) * n_docs
    return max(scoring, ranking, pairs)


# At most this many (query, title) cells per block of a sparse model (tfidf-char), whatever the budget: a block of
# 2^22 cells (16 MiB of float32 scores) keeps its scores, ranking and flags near the CPU cache from the product to
# the measures, where a block of the default budget's size (about 30 million cells) sends each step's arrays to
# memory and back (benchmarks/bench_run.py, the whole eval run against its floor at 10x10; docs/eval.md). No score
# depends on the block (``eval.ranking.similarity_scores`` is exact); a dense model's blocks stay as the budget cuts
# them (its product is the larger cost there).
SPARSE_BLOCK_CELLS = 1 << 22


def query_blocks(
    unit_of_query: np.ndarray, m_idx: np.ndarray, n_docs: int, budget_mb: float, dimension: int = 0,
    max_cells: int | None = None,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Cut the queries into blocks of ``(query indices, pair indices)`` that fit the budget and, given
    ``max_cells``, hold at most that many (query, title) cells (a unit larger is a block alone).

    The queries of one unit (one ``pair_id``) stay in one block, so the rankings of every pair (its two forms,
    and its extra forms) are in the same block. A unit larger than the budget is a block alone. How the queries
    are cut changes no score (``eval.ranking.similarity_scores`` is exact) and so no result.
    """
    pairs_of_query = np.bincount(m_idx, minlength=len(unit_of_query)) if len(m_idx) else np.zeros(len(unit_of_query), int)
    units: dict = {}
    unit_of = np.asarray(unit_of_query).tolist()
    for i in range(len(unit_of)):
        units.setdefault(unit_of[i], []).append(i)
    pairs_by_m: dict[int, list[int]] = {}
    for j, m in enumerate(m_idx.tolist()):
        pairs_by_m.setdefault(m, []).append(j)
    budget = budget_mb * 2**20
    blocks, rows, pairs = [], [], []
    for members in units.values():
        n_pairs = int(sum(pairs_of_query[i] for i in members))
        if rows and (block_cost(len(rows) + len(members), len(pairs) + n_pairs, n_docs, dimension) > budget
                     or (max_cells is not None and (len(rows) + len(members)) * n_docs > max_cells)):
            blocks.append((np.array(rows, dtype=np.int64), np.array(pairs, dtype=np.int64)))
            rows, pairs = [], []
        rows.extend(members)
        pairs.extend(j for i in members for j in pairs_by_m.get(i, ()))
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


class CorpusRanker:
    """One corpus on the score grid, ranked for block after block of queries (``eval.ranking.rank_rows``): the
    corpus rows are permuted once into document-id-descending columns (``by_id_descending``), so the sort's
    tie-break is the column itself and no block is gathered into that order. A ranking holds those columns;
    ``by_id_descending[column]`` is the corpus row, ``column_of[row]`` the column."""

    def __init__(self, d_emb, doc_ids: list[str]) -> None:
        self.n_docs = len(doc_ids)
        self.by_id_descending = id_descending_order(doc_ids)
        self.column_of = np.empty(self.n_docs, dtype=np.int64)
        self.column_of[self.by_id_descending] = np.arange(self.n_docs)
        self.d_grid = score_grid(d_emb[self.by_id_descending])  # on the score grid once, for every block

    def rank(self, q_emb, dropped_columns: list[np.ndarray] | None = None) -> np.ndarray:
        """The ranking (queries, n_docs) of columns, best first; each query's ``dropped_columns`` (its
        self-matches under ``drop``) leave its ranking, padded with -1 at the tail."""
        dropped = None if dropped_columns is None else _flags(len(dropped_columns), self.n_docs, dropped_columns)
        return rank_rows(grid_scores(score_grid(q_emb), self.d_grid), None, dropped)


def score_corpus(
    query_vectors: Callable[[np.ndarray], object], d_emb, doc_ids: list[str], self_cols: SelfMatchColumns,
    relevant_of: Callable[[int, np.ndarray], list[np.ndarray]],
    m_idx: np.ndarray, f_idx: np.ndarray, blocks: list[tuple[np.ndarray, np.ndarray]], settings: EvalSettings,
    ranked_pairs: int | None = None,
) -> dict:
    """Per-query values of every query measure and per-pair values of every pair measure (``settings.measures``)
    and the pairs' top lists over one corpus, computed block by block of queries so memory is bounded by
    ``settings.memory_budget_mb``.

    ``query_vectors(rows)``: the embeddings of those queries (read or made per block, ``_embed``).
    ``self_cols``: per query, the corpus columns of its self-matches; ``relevant_of(b, rows)``: per query of block
    ``b`` (``blocks``, ``query_blocks``), the columns of its relevant items (self-matches already removed under
    ``drop``), read block by block so no list of every query's relevant items is held. Each pair's rankings are its two queries' rankings,
    less the other form's self-matches under ``drop``: the same order a fresh sort would give, without one.
    ``ranked_pairs``: the first this many pairs (default all) compete for the least symmetric ones (``worst_pairs``),
    whose top lists are kept as the blocks go (the ``settings.worst_pairs`` lowest by ``settings.worst_by``, ties by
    pair order, as a stable sort of all of them would pick), not every pair's.
    Returns ``{"query": {name: (queries,)}, "pair": {name: (pairs,)}, "has_relevant", "top": {pair: top lists}, "blocks"}``.
    """
    n_queries, n_docs, n_pairs = len(self_cols), len(doc_ids), len(m_idx)
    drop = settings.self_match == SELF_MATCH_DROP
    query_measures, pair_measures = settings.query_measures, settings.pair_measures
    rbo_p = tuple(m.p for m in pair_measures if isinstance(m, RankBiasedOverlap))
    # Work in id-descending column order (CorpusRanker); columns map back to corpus rows at the end.
    ranker = CorpusRanker(d_emb, doc_ids)
    by_id_descending, column_of = ranker.by_id_descending, ranker.column_of
    del d_emb
    # self_cols map to id-descending columns a block at a time (``own``): no second list over every query
    n_relevant = np.zeros(n_queries, dtype=np.int64)
    per_query = {str(m): np.full(n_queries, np.nan) for m in query_measures}
    per_pair = {str(m): np.zeros(n_pairs, dtype=bool if m.boolean else np.float64) for m in pair_measures}
    depth = settings.list_depth
    ranked_pairs = n_pairs if ranked_pairs is None else ranked_pairs
    top: dict[int, tuple] = {}  # pair -> (top_m, top_m_relevant, top_f, top_f_relevant), the worst pairs so far
    for b, (rows, pairs) in enumerate(blocks):
        release_freed_memory()
        n_rows = len(rows)
        own = [np.sort(column_of[self_cols[i]]) for i in rows.tolist()]
        ranking = ranker.rank(query_vectors(rows), own if drop else None)
        relevant_cols = relevant_of(b, rows)
        n_relevant[rows] = [len(c) for c in relevant_cols]
        relevant = _flags(n_rows, n_docs, [column_of[c] for c in relevant_cols])  # this block's only
        del relevant_cols
        hits = np.take_along_axis(relevant, ranking, axis=1)  # padding (-1) reads the last column: masked next
        if drop:
            hits &= ranking >= 0
        hit_row, hit_pos = np.nonzero(hits)
        del hits
        block = QueryRankings(ranking, relevant, n_relevant[rows], hit_row, hit_pos,
                              first_hit_positions(hit_row, hit_pos, n_rows, n_docs))
        for m in query_measures:
            per_query[str(m)][rows] = m.per_query(block)
        if len(pairs):
            local = np.empty(n_queries, dtype=np.int64)
            local[rows] = np.arange(n_rows)
            pm, pf = local[m_idx[pairs]], local[f_idx[pairs]]
            rank_m, rank_f = ranking[pm], ranking[pf]
            if drop:  # both forms of a pair are ranked without the self-matches of either
                for k, j in enumerate(pairs):
                    m, f = m_idx[j], f_idx[j]
                    if not np.array_equal(self_cols[m], self_cols[f]):
                        rank_m[k] = _without(rank_m[k], own[pf[k]])
                        rank_f[k] = _without(rank_f[k], own[pm[k]])
            pair_block = PairRankings(rank_m, rank_f, rbo_p)
            for m in pair_measures:
                per_pair[str(m)][pairs] = m.per_pair(pair_block)
            top = _keep_worst(top, pairs, per_pair[settings.worst_by], settings.worst_pairs, ranked_pairs,
                              lambda k: _top_lists(rank_m[k], rank_f[k], relevant[pm[k]], relevant[pf[k]], depth, by_id_descending))
        del ranking, relevant, block  # and the pair rankings: the next block starts from nothing of this one
        rank_m = rank_f = pair_block = pm = pf = local = None
    return {"query": per_query, "pair": per_pair, "has_relevant": n_relevant > 0, "top": top, "blocks": len(blocks)}


def _keep_worst(top: dict[int, tuple], pairs: np.ndarray, values: np.ndarray, k: int, ranked_pairs: int, lists) -> dict[int, tuple]:
    """The ``k`` pairs with the lowest ``values`` (ties: the lower pair index) among those kept so far and this
    block's ``pairs`` below ``ranked_pairs``, with their top lists (``lists(position in pairs)`` for a new one)."""
    fresh = np.flatnonzero(pairs < ranked_pairs)
    if not k or not len(fresh):
        return top
    candidates = np.concatenate([np.fromiter(top, dtype=np.int64, count=len(top)), pairs[fresh]])
    chosen = candidates[np.lexsort((candidates, values[candidates]))[:k]]
    position = dict(zip(pairs[fresh].tolist(), fresh.tolist()))
    return {j: top[j] if j in top else lists(position[j]) for j in chosen.tolist()}


def _top_lists(rank_m: np.ndarray, rank_f: np.ndarray, relevant_m: np.ndarray, relevant_f: np.ndarray, depth: int,
               corpus_row: np.ndarray) -> tuple:
    """One pair's two top-``depth`` lists as corpus rows (-1 past a short ranking) and their relevance flags."""
    out = []
    for ranks, relevant in ((rank_m, relevant_m), (rank_f, relevant_f)):
        head = ranks[:depth]
        out += [np.where(head >= 0, corpus_row[np.maximum(head, 0)], -1), relevant[np.maximum(head, 0)] & (head >= 0)]
    return tuple(out)


def _embed(ts: TestSet, model: EmbeddingModel, cache: EmbeddingCache, timing: Timing, progress: bool):
    """The corpus embeddings, and a function giving the embeddings of a block of queries (rows of ts.queries).

    The queries' embeddings are not held for all queries at once: a cached model's are encoded once into the
    cache and read back per block; tfidf-char encodes a block's texts when asked (its vectors are row by row, the
    same whatever the other rows). A model that is neither is encoded whole, as before. The model's declared
    capabilities (``fits_corpus``, ``cacheable``, ``sparse``: the ``EmbeddingModel`` protocol) choose the way."""
    corpus_texts = ts.corpus["text"].to_list()
    query_texts = ts.queries["text"]  # a Series: the closure below keeps it, and a list of 10^5 strings is 10 MB
    start = time.perf_counter()
    if model.fits_corpus:
        model.fit(corpus_texts)
    cacheable = model.cacheable
    if cacheable:
        n_q = cache.store(model, query_texts.to_list(), "query", progress=progress)
    elif model.sparse:
        n_q = query_texts.n_unique()
    else:
        held, n_q = cache.encode(model, query_texts.to_list(), "query", progress=progress)
    d, n_d = cache.encode(model, corpus_texts, "passage", progress=progress)
    timing.encode_s += time.perf_counter() - start
    timing.encoded += n_q + n_d
    timing.texts += len(query_texts) + len(corpus_texts)
    if not cacheable and not model.sparse:
        return (lambda rows: held[rows]), d

    def query_vectors(rows: np.ndarray):
        began = time.perf_counter()
        vectors, _ = cache.encode(model, query_texts.gather(rows).to_list(), "query", progress=False)
        timing.encode_s += time.perf_counter() - began
        return vectors

    return query_vectors, d


def _embed_variants(ts: TestSet, model: EmbeddingModel, cache: EmbeddingCache, corpora: tuple[str, ...], timing: Timing,
                    progress: bool):
    """``(variant_docs, query_vectors, d_emb, emb_row)``: each corpus variant's rows of corpus.parquet (with their
    ``row``), in the file's order; the queries' embeddings by block (``_embed``); the embeddings of the items of
    the variants asked for, which alone are encoded (and fit a model fitted on the corpus: by default every
    masculine, feminine and neutral item, as before the doublet corpus existed); ``emb_row[row]``: the row of
    ``d_emb`` of a corpus row (-1 for an item of no variant)."""
    whole = ts.corpus.with_row_index("row")
    variant_docs = {g: whole.filter(pl.col("id").is_in(ts.corpus_for(g)["id"].implode())) for g in corpora}
    used_rows = np.unique(np.concatenate([d["row"].to_numpy() for d in variant_docs.values()]))
    query_vectors, d_emb = _embed(ts if len(used_rows) == ts.corpus.height else replace(ts, corpus=ts.corpus[used_rows]),
                                  model, cache, timing, progress)
    emb_row = np.full(ts.corpus.height, -1, dtype=np.int64)
    emb_row[used_rows] = np.arange(len(used_rows))
    return variant_docs, query_vectors, d_emb, emb_row


@dataclass(frozen=True)
class QueryIndex:
    """The queries of a test set as row numbers: ids, genders, forms, units (``pair_id``, and as integer codes),
    texts, and the masculine and feminine row of every query pair (``TestSet.query_pairs``). Strings stay in
    polars Series: as Python lists they were the largest state that grows with the queries."""

    ids: pl.Series
    gender: np.ndarray
    form: np.ndarray
    pair_of: pl.Series
    unit: np.ndarray  # per query, its pair_id as a code (0, 1, ... in order of first appearance)
    texts: pl.Series  # read for the few pairs shown (worst_pairs)
    m_idx: np.ndarray
    f_idx: np.ndarray
    pair_ids: pl.Series
    pair_m: pl.Series
    pair_f: pl.Series

    @classmethod
    def of(cls, ts: TestSet) -> "QueryIndex":
        queries, pairs = ts.queries, ts.query_pairs()
        ids, units = queries["id"], queries["pair_id"]
        row = pl.Enum(ids)
        return cls(
            ids=ids, gender=queries["gender"].to_numpy().astype(str), form=queries["form"].to_numpy().astype(str),
            pair_of=units, unit=rows_of(units, pl.Enum(units.unique(maintain_order=True))).astype(np.int64),
            texts=queries["text"], m_idx=rows_of(pairs["m_id"], row).astype(np.int64),
            f_idx=rows_of(pairs["f_id"], row).astype(np.int64),
            pair_ids=pairs["pair_id"], pair_m=pairs["m_id"], pair_f=pairs["f_id"],
        )


def _counts(ts: TestSet, qi: QueryIndex, form_pairs: list["FormPairs"], relevance: BlockRelevance) -> dict:
    counts = {
        "queries": {g: int((qi.gender == g).sum()) for g in (MASCULINE, FEMININE, NEUTRAL)},
        "query_pairs": len(qi.m_idx),
        "corpus": {g: int(ts.corpus.filter(pl.col("gender") == g).height) for g in (MASCULINE, FEMININE, NEUTRAL)},
        "qrels_relevant": relevance.relevant_lines,
    }
    forms = [f for f in EXTRA_FORMS if (qi.form == f).any()]
    if forms:  # only for a set with extra forms: an older set's counts stay as they were
        counts["forms"] = {
            f: {"queries": int((qi.form == f).sum()),
                **{f"pairs_vs_{short}": sum(len(p.form_idx) for p in form_pairs if p.form == f and p.reference == g)
                   for g, short in FORM_REFERENCES}}
            for f in forms
        }
    return counts


@dataclass(frozen=True)
class FormPairs:
    """Every (extra-form query, ``reference``-gender query) combination sharing a ``pair_id``: e.g. each doublet
    query with each masculine query of its pair. They are scored as pairs beside the masculine x feminine ones
    (``score_corpus``), from the same rankings."""

    form: str
    reference: str
    form_idx: np.ndarray
    reference_idx: np.ndarray


def form_pairs(qi: QueryIndex) -> list[FormPairs]:
    """The extra-form pairs of a test set, per form present (doublet, neomorpheme) and reference gender."""
    by_unit: dict[tuple[str, int], list[int]] = {}
    for i, (g, unit) in enumerate(zip(qi.gender.tolist(), qi.unit.tolist())):
        by_unit.setdefault((g, unit), []).append(i)
    out = []
    for form in EXTRA_FORMS:
        rows = np.flatnonzero(qi.form == form)
        if not len(rows):
            continue
        for gender, _ in FORM_REFERENCES:
            combos = [(x, r) for x in rows.tolist() for r in by_unit.get((gender, int(qi.unit[x])), ())]
            out.append(FormPairs(form, gender, np.array([c[0] for c in combos], dtype=np.int64),
                                 np.array([c[1] for c in combos], dtype=np.int64)))
    return out


def _by_gender(values: np.ndarray, qi: QueryIndex, has_relevant: np.ndarray, settings: EvalSettings) -> dict:
    return {g: _figure(values[(qi.gender == g) & has_relevant], settings) for g in (FEMININE, MASCULINE, NEUTRAL)}


def _place(block: dict, measure, figures) -> None:
    """Put a query measure's figures at its ``location`` in a corpus block."""
    *parents, last = measure.location
    for key in parents:
        block = block.setdefault(key, {})
    block[last] = figures


def corpus_figures(scored: dict, qi: QueryIndex, n_docs: int, settings: EvalSettings) -> dict:
    """The figures of one corpus variant: the pair measures' means (``symmetry``), the query measures' means
    per query gender (AP's as ``MAP``, the others under their section), and every gap (``parity``)."""
    has_relevant = scored["has_relevant"]
    is_m, is_f, m_idx, f_idx = qi.gender == MASCULINE, qi.gender == FEMININE, qi.m_idx, qi.f_idx
    both_scored = has_relevant[m_idx] & has_relevant[f_idx]
    block: dict = {
        "documents": n_docs,
        "symmetry": {name: _figure(values, settings) for name, values in scored["pair"].items()},
    }
    for m in settings.query_measures:
        _place(block, m, _by_gender(scored["query"][str(m)], qi, has_relevant, settings))
    parity: dict = {}
    for gap in settings.gaps:  # the differences first, then the paired forms: the order results have held
        v = scored["query"][str(gap.measure)]
        parity[gap.difference_key] = _difference(v[is_m & has_relevant], v[is_f & has_relevant], settings)
    for gap in settings.gaps:
        v = scored["query"][str(gap.measure)]
        parity[gap.paired_key] = _paired(v[m_idx][both_scored] - v[f_idx][both_scored], settings)
    block["parity"] = parity
    # the masculine, feminine and neutral queries (the extra forms count theirs in their own block)
    block["queries_without_relevant"] = int((~has_relevant & (qi.gender != INCLUSIVE)).sum())
    return block


def form_figures(scored: dict, qi: QueryIndex, pairs: list[FormPairs], pair_values: list[dict],
                 settings: EvalSettings) -> dict:
    """The figures of every extra form over one corpus variant, from the rankings already scored:

    - ``symmetry``: ``vs_M`` / ``vs_F``, each pair measure's mean over (form query, masculine / feminine query)
      pairs of one ``pair_id`` (the form's ranking against the gendered form's);
    - ``MAP`` and each other query measure's figure (under its section) over the form's queries with relevant items;
    - ``parity``: each gap's paired form against the masculine and the feminine query, ``paired_AP_<form>-AP_M``,
      ``paired_AP_<form>-AP_F`` (``Gap.form_key``), the mean over those pairs (both queries with relevant items)
      with the paired randomisation test.
    ``pair_values``: per entry of ``pairs``, its per-pair values of every pair measure."""
    has_relevant = scored["has_relevant"]
    out: dict = {}
    for form in EXTRA_FORMS:
        rows = qi.form == form
        if not rows.any():
            continue
        block: dict = {"queries": int(rows.sum()), "queries_without_relevant": int((rows & ~has_relevant).sum()),
                       "symmetry": {}}
        for m in settings.query_measures:
            _place(block, m, _figure(scored["query"][str(m)][rows & has_relevant], settings))
        parity: dict = {}
        for p, values in zip(pairs, pair_values):
            if p.form != form:
                continue
            short = dict(FORM_REFERENCES)[p.reference]
            block["symmetry"][f"vs_{short}"] = {name: _figure(v, settings) for name, v in values.items()}
            both = has_relevant[p.form_idx] & has_relevant[p.reference_idx]
            for gap in settings.gaps:
                v = scored["query"][str(gap.measure)]
                parity[gap.form_key(form, p.reference)] = _paired(v[p.form_idx][both] - v[p.reference_idx][both], settings)
        block["parity"] = parity
        out[form] = block
    return out


def _value(x) -> float | None:
    return None if np.isnan(x) else float(x)


def _nullable(name: str, values: np.ndarray) -> pl.Series:
    """A float column whose NaN (a query without relevant items) is written as null, as ``_value`` writes it."""
    return pl.Series(name, values, dtype=pl.Float64).fill_nan(None)


def _measure_columns(values: dict[str, np.ndarray]) -> list[pl.Series]:
    """Pair measures as columns: booleans as booleans, the others as floats (NaN kept, as ``float`` keeps it)."""
    return [pl.Series(name, v, dtype=pl.Boolean if v.dtype == bool else pl.Float64) for name, v in values.items()]


def _constant(name: str, value: str, n: int) -> pl.Series:
    return pl.repeat(value, n, dtype=pl.String, eager=True).alias(name)


def per_query_rows(corpus: str, scored: dict, qi: QueryIndex) -> pl.DataFrame:
    """One row per query; an extra-form query's row (gender ``inclusive``) also names its ``form`` (null on the
    others, which ``ResultRows`` leaves out)."""
    inclusive = qi.gender == INCLUSIVE
    return pl.DataFrame([
        _constant("corpus", corpus, len(qi.ids)), qi.ids.alias("query_id"),
        pl.Series("gender", qi.gender, dtype=pl.String),
        pl.Series("form", qi.form, dtype=pl.String).scatter(np.flatnonzero(~inclusive), None), qi.pair_of.alias("pair_id"),
        *(_nullable(name, values) for name, values in scored["query"].items()),
    ])


def per_form_pair_rows(corpus: str, scored: dict, qi: QueryIndex, pairs: list[FormPairs], pair_values: list[dict]) -> pl.DataFrame:
    """One row per (extra-form query, masculine or feminine query) pair: its pair measures and both APs."""
    ap = scored["query"]["AP"]
    frames = [
        pl.DataFrame([
            _constant("corpus", corpus, len(p.form_idx)), _constant("form", p.form, len(p.form_idx)),
            _constant("reference", p.reference, len(p.form_idx)),
            qi.pair_of.gather(p.form_idx).alias("pair_id"), qi.ids.gather(p.form_idx).alias("form_id"),
            qi.ids.gather(p.reference_idx).alias("reference_id"), *_measure_columns(values),
            _nullable("AP_form", ap[p.form_idx]), _nullable("AP_reference", ap[p.reference_idx]),
        ])
        for p, values in zip(pairs, pair_values)
    ]
    return pl.concat(frames)


def split_pairs(scored: dict, n_pairs: int, pairs: list[FormPairs]) -> tuple[dict, list[dict]]:
    """``score_corpus`` scored the masculine x feminine pairs followed by the extra-form pairs: the first
    part as the corpus's own scored block, and per entry of ``pairs`` its per-pair values."""
    if not pairs:
        return scored, []
    main = {**scored, "pair": {name: v[:n_pairs] for name, v in scored["pair"].items()}}
    values, start = [], n_pairs
    for p in pairs:
        end = start + len(p.form_idx)
        values.append({name: v[start:end] for name, v in scored["pair"].items()})
        start = end
    return main, values


def per_pair_rows(corpus: str, scored: dict, qi: QueryIndex) -> pl.DataFrame:
    ap = scored["query"]["AP"]
    return pl.DataFrame([
        _constant("corpus", corpus, len(qi.m_idx)), qi.pair_ids.alias("pair_id"),
        qi.pair_m.alias("m_id"), qi.pair_f.alias("f_id"), *_measure_columns(scored["pair"]),
        _nullable("AP_M", ap[qi.m_idx]), _nullable("AP_F", ap[qi.f_idx]),
    ])


def worst_pairs(scored: dict, qi: QueryIndex, doc_texts: list[str], settings: EvalSettings) -> list[dict]:
    """The least symmetric pairs (by ``settings.worst_by``) with their two top lists (the paper's Table 6)."""
    ap = scored["query"]["AP"]
    graded = {name: v for name, v in scored["pair"].items() if v.dtype != bool}

    def top(items: np.ndarray, flags: np.ndarray) -> list[dict]:
        return [{"text": doc_texts[d], "relevant": bool(r)} for d, r in zip(items, flags) if d >= 0]

    return [
        {
            "pair_id": qi.pair_ids[int(j)],
            "masculine": qi.texts[int(qi.m_idx[j])], "feminine": qi.texts[int(qi.f_idx[j])],
            **{name: float(v[j]) for name, v in graded.items()},
            "AP_M": _value(ap[qi.m_idx[j]]), "AP_F": _value(ap[qi.f_idx[j]]),
            "top_masculine": top(*scored["top"][j][:2]),
            "top_feminine": top(*scored["top"][j][2:]),
        }
        for j in np.argsort(scored["pair"][settings.worst_by], kind="stable")[: settings.worst_pairs]
    ]


def evaluate_language(
    ts: TestSet, model: EmbeddingModel, cache: EmbeddingCache, settings: EvalSettings, *, progress: bool = True
) -> tuple[dict, Timing]:
    """All figures for one language; also per-query and per-pair rows (for audits) and the worst pairs."""
    corpora = settings.corpora
    check_model(model)
    _check_testset(ts, corpora)
    timing = Timing()
    start = time.perf_counter()
    variant_docs, query_vectors, d_emb, emb_row = _embed_variants(ts, model, cache, corpora, timing, progress)
    qi = QueryIndex.of(ts)
    extra_pairs = form_pairs(qi)
    m_all = np.concatenate([qi.m_idx, *(p.form_idx for p in extra_pairs)]) if extra_pairs else qi.m_idx
    f_all = np.concatenate([qi.f_idx, *(p.reference_idx for p in extra_pairs)]) if extra_pairs else qi.f_idx
    # One cut of the queries for every variant (sized for the largest), so the relevance labels are spilled once,
    # by block. The extra-form pairs ride along with the masculine x feminine ones: the same rankings, the same
    # blocks (a pair's forms share a pair_id, so one block holds them all).
    blocks = query_blocks(qi.unit, m_all, max(d.height for d in variant_docs.values()), settings.memory_budget_mb,
                          dimension=d_emb.shape[1], max_cells=SPARSE_BLOCK_CELLS if model.sparse else None)
    block_of_query = np.empty(len(qi.ids), dtype=np.int64)
    for b, (rows, _) in enumerate(blocks):
        block_of_query[rows] = b
    scored_by_variant = {}
    release_freed_memory()  # what encoding and the query index left free in the heap
    with tempfile.TemporaryDirectory(prefix="gjt-relevance-") as spill:
        relevance = BlockRelevance.spill(ts.qrels_slices(), qi.ids, ts.corpus["id"], block_of_query, Path(spill))
        _check_relevance(ts, relevance)
        release_freed_memory()
        for corpus_gender in corpora:
            docs = variant_docs[corpus_gender]
            self_cols = self_match_columns(ts.queries["source_ids"], docs["source_ids"])
            column_of = np.full(ts.corpus.height, -1, dtype=np.int32)
            column_of[docs["row"].to_numpy()] = np.arange(docs.height, dtype=np.int32)

            def relevant_of(b: int, rows: np.ndarray, column_of=column_of, self_cols=self_cols) -> list[np.ndarray]:
                return block_relevant_columns(relevance.cells(b), rows, column_of, self_cols, settings.self_match)

            scored = score_corpus(query_vectors, d_emb[emb_row[docs["row"].to_numpy()]], docs["id"].to_list(), self_cols,
                                  relevant_of, m_all, f_all, blocks, settings, ranked_pairs=len(qi.m_idx))
            scored_by_variant[corpus_gender] = split_pairs(scored, len(qi.m_idx), extra_pairs)
            del self_cols, scored  # not held while the next variant builds its own
    result: dict = {"lang": ts.lang, "counts": _counts(ts, qi, extra_pairs, relevance), "corpora": {}}
    if testset_source(ts.stats):  # a job-title set's result keeps its bytes: only another source is named
        result["source"] = testset_source(ts.stats)
    per_query: list[pl.DataFrame] = []
    per_pair: list[pl.DataFrame] = []
    per_form_pair: list[pl.DataFrame] = []
    worst: dict[str, list[dict]] = {}
    # The rows of every variant are made once all are scored, as columns (ResultRows): the scoring holds per
    # query a few numbers, and so do the rows.
    for corpus_gender, (scored, extra_values) in scored_by_variant.items():
        docs = variant_docs[corpus_gender]
        result["corpora"][corpus_gender] = corpus_figures(scored, qi, docs.height, settings)
        if extra_pairs:
            result["corpora"][corpus_gender]["forms"] = form_figures(scored, qi, extra_pairs, extra_values, settings)
            per_form_pair.append(per_form_pair_rows(corpus_gender, scored, qi, extra_pairs, extra_values))
        timing.extra[f"query_blocks_{corpus_gender}"] = scored["blocks"]
        per_query.append(per_query_rows(corpus_gender, scored, qi))
        per_pair.append(per_pair_rows(corpus_gender, scored, qi))
        worst[corpus_gender] = worst_pairs(scored, qi, docs["text"].to_list(), settings)
    result["per_query"] = ResultRows(pl.concat(per_query), omit_none=("form",))
    result["per_pair"] = ResultRows(pl.concat(per_pair))
    if extra_pairs:
        result["per_form_pair"] = ResultRows(pl.concat(per_form_pair))
    result["worst_pairs"] = worst
    timing.total_s = time.perf_counter() - start
    result["timing"] = {"encode_s": timing.encode_s, "total_s": timing.total_s, "texts": timing.texts, "encoded": timing.encoded,
                        **timing.extra}
    return result, timing


def rank_testset(ts: TestSet, model: str, depth: int, *, params: str | Path = "params.yaml",
                 corpora: tuple[str, ...] | None = None, self_match: str | None = None,
                 progress: bool = True) -> dict[str, dict[str, list[str]]]:
    """eval's ranking of a test set, as document ids: the one entry point for a caller outside eval that needs
    the rankings `eval run` scores (annotation pools its relevance candidates from them).

    ``model``: a model name (``eval.models.load_model``). For each corpus variant of params.yaml
    ``eval.corpora`` (masculine = masculine + neutral titles, feminine = feminine + neutral), every query's top
    ``depth`` corpus ids, best first: ``{corpus gender: {query id: [doc id, ...]}}``. It is `eval run`'s own
    path (``evaluate_language``): encoded through the embedding cache (``eval.cache``), queries ranked block by
    block within ``eval.memory_budget_mb``, exact scores and the trec_eval tie-break (``eval.ranking``),
    self-matches dropped under ``eval.self_match: drop``; ``corpora`` and ``self_match`` given replace those two
    settings. Bad settings or an unknown model: EvalError."""
    from eval.models import load_model
    from eval.params import read_eval_settings

    settings = read_eval_settings(params)
    overrides = {key: value for key, value in (("corpora", corpora), ("self_match", self_match)) if value is not None}
    settings = replace(settings, **overrides)  # checked again (EvalSettings.__post_init__)
    loaded = load_model(model)
    check_model(loaded)
    _check_testset(ts, settings.corpora)
    drop = settings.self_match == SELF_MATCH_DROP
    variant_docs, query_vectors, d_emb, emb_row = _embed_variants(ts, loaded, EmbeddingCache(settings.cache),
                                                                  settings.corpora, Timing(), progress)
    query_ids = ts.queries["id"].to_list()
    # each query its own unit (no pair is scored); one cut of the queries for every variant, as evaluate_language
    blocks = query_blocks(np.arange(len(query_ids)), np.zeros(0, dtype=np.int64),
                          max(d.height for d in variant_docs.values()), settings.memory_budget_mb,
                          dimension=d_emb.shape[1], max_cells=SPARSE_BLOCK_CELLS if loaded.sparse else None)
    ranked: dict[str, dict[str, list[str]]] = {}
    for corpus_gender, docs in variant_docs.items():
        doc_ids = docs["id"].to_list()
        self_cols = self_match_columns(ts.queries["source_ids"], docs["source_ids"])
        ranker = CorpusRanker(d_emb[emb_row[docs["row"].to_numpy()]], doc_ids)
        top: dict[str, list[str]] = {}
        for rows, _ in blocks:
            release_freed_memory()
            own = [np.sort(ranker.column_of[self_cols[i]]) for i in rows.tolist()] if drop else None
            head = ranker.rank(query_vectors(rows), own)[:, :depth]
            for i, columns in zip(rows.tolist(), head.tolist()):
                top[query_ids[i]] = [doc_ids[ranker.by_id_descending[c]] for c in columns if c >= 0]
        ranked[corpus_gender] = top
    return ranked


def embed_texts(model: str, texts: Sequence[str], *, params: str | Path = "params.yaml"):
    """``(vectors, meta)``: unit-length dense embeddings of ``texts`` (role "passage", one row per text, float32)
    by the model `eval run` would load, through the embedding cache of params.yaml's ``eval.cache``, and the
    model's ``ModelMeta``: the one entry point for a caller outside eval that needs vectors (annotation's
    "find similar" vectors). A model fitted on its corpus (tfidf-char) is fitted on ``texts``. With no texts the
    model is only loaded (an unknown name is an EvalError). Bad settings or an unknown model: EvalError."""
    from eval.models import load_model
    from eval.params import read_eval_settings

    settings = read_eval_settings(params)
    loaded = check_model(load_model(model))
    texts = list(texts)
    if not texts:
        return np.zeros((0, loaded.meta.dimension), dtype=np.float32), loaded.meta
    if loaded.fits_corpus:
        loaded.fit(texts)
    if loaded.sparse:  # its dense form (a caller wants lists of floats), made unit length as the cache makes them
        from eval.models import unit_rows

        return unit_rows(np.asarray(loaded.encode(texts, role="passage"), dtype=np.float32)), loaded.meta
    vectors, _ = EmbeddingCache(settings.cache).encode(loaded, texts, "passage", progress=False)
    return np.asarray(vectors, dtype=np.float32), loaded.meta


def evaluate_one(
    data: str | Path, ts: TestSet, model: EmbeddingModel, cache: EmbeddingCache, settings: EvalSettings, *,
    model_revision: str | None = None, progress: bool = True,
) -> LanguageResult:
    """One model on one language, as a typed result. ``model_revision``: the revision the model had when
    loaded (the store's key), default its revision now."""
    revision = model_revision or model.meta.revision
    figures, _ = evaluate_language(ts, model, cache, settings, progress=progress)
    return LanguageResult(
        toolkit={"name": "gendered-job-titles eval", "version": toolkit_version}, model=model.meta.to_dict(),
        model_revision=revision, lang=ts.lang, testset_root=str(data), testset_version=testset_version(ts, data),
        testset_digest=testset_digest(data, ts.lang), settings=settings.describe(), figures=figures,
    )


def evaluate(
    data: str | Path,
    langs: list[str],
    model: EmbeddingModel,
    cache: EmbeddingCache,
    settings: EvalSettings,
    *,
    progress: bool = True,
) -> dict:
    """The results document of one model over several languages of one test-set root
    (``RunResult.to_document()``)."""
    from eval.testset import read_testset

    if not langs:
        raise EvalError(f"{data}: no language to evaluate (no <lang>/queries.parquet found)")
    revision = model.meta.revision
    results = [evaluate_one(data, read_testset(data, lang, qrels="stream"), model, cache, settings, model_revision=revision, progress=progress)
               for lang in langs]
    return RunResult.from_languages(results, data).to_document()
