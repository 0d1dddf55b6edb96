"""The scores and the one ranking function every metric uses.

``similarity_scores`` gives the scores a ranking sorts: exact dot products of the embeddings rounded to a grid,
the same bytes from every BLAS kernel, thread count and order of summation (docs/eval.md "Exact scores").

``rank_corpus`` orders the whole corpus for a batch of queries:

- tie-break (``TIE_BREAK``): score descending, then document id descending, as trec_eval sorts a run;
  the order is therefore total and does not depend on the input order of the corpus;
- self-matches (``SELF_MATCH_POLICIES``): a corpus item whose ``source_ids`` share an English id with the
  query's ``source_ids`` is the query's own title translated. ``drop`` (default, as BEIR drops a query's own
  document) removes it from that query's ranking; ``keep`` ranks it like any other item.

A ranking is an integer array (queries, n) of corpus row indices, best first, padded at the tail with -1
where items were dropped: the shape every ``eval.metrics.*_batch`` function takes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

TIE_BREAK = "score descending, then document id descending (trec_eval)"
# How a score is computed (``similarity_scores``), as results record it.
SCORES = ("dot product of the embeddings with every value rounded to a multiple of 2^-24, exact in float64 "
          "(the same from any BLAS), rounded to float32")
SELF_MATCH_DROP = "drop"
SELF_MATCH_KEEP = "keep"
SELF_MATCH_POLICIES = (SELF_MATCH_DROP, SELF_MATCH_KEEP)
SELF_MATCH_RULES = {
    SELF_MATCH_DROP: "a corpus item sharing an English source id with the query (its own title translated) leaves "
    "that query's ranking and relevant set; a pair is ranked without the self-matches of either form",
    SELF_MATCH_KEEP: "a query's own translated title is ranked like any other item",
}

__all__ = [
    "SCORE_GRID_BITS",
    "score_grid",
    "grid_scores",
    "similarity_scores",
    "SCORES",
    "TIE_BREAK",
    "SELF_MATCH_POLICIES",
    "SELF_MATCH_RULES",
    "SELF_MATCH_DROP",
    "SELF_MATCH_KEEP",
    "rank_corpus",
    "rank_rows",
    "id_descending_order",
    "self_match_mask",
    "self_match_columns",
    "SelfMatchColumns",
    "check_policy",
]


# Scores are exact. Every embedding value is rounded to the nearest multiple of 2^-SCORE_GRID_BITS (``score_grid``):
# a product of two such values is a multiple of 2^-48, and every partial sum of those products over a dimension,
# in any order, is a multiple of 2^-48 no larger than |q| |d| (Cauchy-Schwarz): below 2^53 of them, so exact in
# float64, for rows of norm up to MAX_ROW_NORM (unit vectors: 5 bits to spare). The float64 product is therefore the same
# bytes from any BLAS kernel, thread count or blocking (float32 products of the raw vectors were not: OpenBLAS's
# Haswell, SkylakeX and Sandybridge kernels, and 1 vs 2 threads, each rounded them differently), and rounding it
# to float32 (what the ranking sorts) is one IEEE rounding. 24 bits is the precision float32 gives a value near 1:
# each value moves by at most 2^-25 and a score by about 2^-25 (random walk over the dimension), below the float32
# spacing of scores near 1 (2^-24).
SCORE_GRID_BITS = 24
# The longest row ``score_grid`` accepts: two rows of at most this norm keep every partial sum below 2^53 units of
# 2^-48 (4 x 4 = 16 < 2^(53 - 48) = 32). eval's embeddings have unit length (the cache normalises and checks them).
MAX_ROW_NORM = 4.0


def score_grid(x):
    """``x`` (dense rows, or a scipy sparse matrix: tfidf-char) in float64 with every value rounded to the nearest
    multiple of 2^-SCORE_GRID_BITS, ties to even. A row longer than ``MAX_ROW_NORM`` is refused (ValueError):
    its scores could not be exact."""
    scale = float(2**SCORE_GRID_BITS)
    if hasattr(x, "tocsr"):
        out = x.tocsr().astype(np.float64)  # a copy: the caller's matrix keeps its values
        out.data = np.rint(out.data * scale) / scale
        # squared row norms without a second matrix: the running sum of squares read at the row ends
        ends = np.concatenate([[0.0], np.cumsum(np.square(out.data))])[out.indptr]
        squared = np.diff(ends)
    else:
        out = np.array(x, dtype=np.float64)  # a copy
        out *= scale
        np.rint(out, out=out)
        out /= scale
        squared = np.einsum("ij,ij->i", out, out)  # row by row, no temporary matrix
    longest = float(np.sqrt(squared.max())) if len(squared) else 0.0
    if not longest <= MAX_ROW_NORM:  # also NaN
        raise ValueError(f"an embedding of norm {longest:.4g}: scores are exact only for rows of norm up to "
                         f"{MAX_ROW_NORM:g}, and eval ranks L2-normalised embeddings (a sparse model's encode_sparse "
                         "must return unit rows)")
    return out


def grid_scores(q_grid, d_grid) -> np.ndarray:
    """Dot products (queries, docs) of embeddings already on the grid (``score_grid``; either may be sparse),
    exact in float64 and rounded once to float32. The float64 product is made for half the documents at a time,
    so it holds no more than the float32 result it fills."""
    n_queries, n_docs = q_grid.shape[0], d_grid.shape[0]
    sparse_docs = hasattr(d_grid, "tocsr")
    if sparse_docs:  # scipy multiplies by the columns of a C-ordered dense array: the queries' transpose, made once
        q_dense = q_grid.T.toarray(order="C") if hasattr(q_grid, "toarray") else np.ascontiguousarray(q_grid.T)
    else:
        q_dense = q_grid.toarray() if hasattr(q_grid, "toarray") else q_grid
    out = np.empty((n_queries, n_docs), dtype=np.float32)
    half = max(1, (n_docs + 1) // 2)
    for start in range(0, n_docs, half):
        docs = slice(start, start + half)
        out[:, docs] = (d_grid[docs] @ q_dense).T if sparse_docs else q_dense @ d_grid[docs].T
    return out


def similarity_scores(q_emb, d_emb) -> np.ndarray:
    """Dot products (queries, docs) of the embeddings on the grid, as float32: the same bytes whatever BLAS,
    threads, blocks of queries or row positions computed them, so identical query embeddings score identically
    and a pair whose two forms are the same string scores AO = RBO = 1 exactly. ``q_emb`` and ``d_emb`` may be
    scipy sparse matrices (tfidf-char). Callers that score many blocks against one corpus put the corpus on the
    grid once (``score_grid``) and call ``grid_scores``."""
    return grid_scores(score_grid(q_emb), score_grid(d_emb))


def check_policy(policy: str) -> str:
    if policy not in SELF_MATCH_POLICIES:
        raise ValueError(f"self-match policy must be one of {SELF_MATCH_POLICIES}, got {policy!r}")
    return policy


@dataclass(frozen=True)
class SelfMatchColumns:
    """Per query, the sorted corpus columns that share an English source id with it: query ``i``'s are
    ``columns[offsets[i]:offsets[i + 1]]``. A few per query, so two flat arrays instead of a (queries, docs)
    matrix that grows with the catalogue, or an array object per query."""

    offsets: np.ndarray  # int64, queries + 1
    columns: np.ndarray  # int64

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> np.ndarray:
        return self.columns[self.offsets[i]:self.offsets[i + 1]]

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def self_match_columns(
    query_source_ids: Sequence[Collection[str]], doc_source_ids: Sequence[Collection[str]]
) -> SelfMatchColumns:
    """Per query, the sorted corpus columns that share an English source id with it. Either argument may be a
    polars Series of lists of ids (a test set's ``source_ids``) or any sequence of collections of ids."""
    import polars as pl

    def exploded(source_ids, row: str) -> pl.DataFrame:
        ids = source_ids if isinstance(source_ids, pl.Series) else \
            pl.Series([list(ids) for ids in source_ids], dtype=pl.List(pl.String))
        return pl.DataFrame({"sid": ids}).with_row_index(row).explode("sid")

    n_queries = len(query_source_ids)
    cells = (exploded(query_source_ids, "q").join(exploded(doc_source_ids, "d"), on="sid")  # nulls never join
             .select("q", "d").unique().sort("q", "d"))
    counts = np.bincount(cells["q"].to_numpy().astype(np.int64), minlength=n_queries)
    offsets = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return SelfMatchColumns(offsets, cells["d"].to_numpy().astype(np.int64))


def self_match_mask(
    query_source_ids: Sequence[Collection[str]], doc_source_ids: Sequence[Collection[str]]
) -> np.ndarray:
    """Boolean (queries, docs): True where a document shares an English source id with the query."""
    mask = np.zeros((len(query_source_ids), len(doc_source_ids)), dtype=bool)
    for i, cols in enumerate(self_match_columns(query_source_ids, doc_source_ids)):
        mask[i, cols] = True
    return mask


def id_descending_order(doc_ids: Sequence[str], dtype=np.int64) -> np.ndarray:
    """Corpus columns in document-id-descending order (the tie-break); ids must be unique."""
    if len(set(doc_ids)) != len(doc_ids):
        raise ValueError("document ids must be unique for a deterministic tie-break")
    return np.argsort(np.asarray(doc_ids, dtype=object), kind="stable")[::-1].astype(dtype)


# The one-key sort runs on row blocks of about this many cells: its keys (8 bytes a cell) then stay in the
# CPU cache and the kernel maps far fewer fresh pages than for one sort over the whole matrix
# (benchmarks/bench_scale.py measures both; the order is the same).
_SORT_BLOCK_CELLS = 1 << 18


def _order_float32(scores: np.ndarray, by_id_descending: np.ndarray | None, dropped: np.ndarray | None = None) -> np.ndarray:
    """The trec_eval order of float32 scores with one plain sort of unique 64-bit keys (10x faster than a
    two-key lexsort): the high 32 bits rank the score (descending), the low 32 bits are the column in
    id-descending order, so equal scores fall into id-descending order and the column is read back.
    Dropped cells get the largest score part (no finite score has it), so they sort to the tail and the
    order of the others is unchanged; their slots are then padded with -1.
    ``by_id_descending=None``: the columns are already in id-descending order (no gather, int32 result)."""
    n_rows, n_docs = scores.shape
    out = np.empty((n_rows, n_docs), dtype=np.int32 if by_id_descending is None else by_id_descending.dtype)
    columns = np.arange(n_docs, dtype=np.uint64)
    step = max(1, _SORT_BLOCK_CELLS // max(n_docs, 1))
    for start in range(0, n_rows, step):
        rows = slice(start, start + step)
        block = scores[rows] if by_id_descending is None else scores[rows][:, by_id_descending]
        bits = (block + np.float32(0.0)).view(np.uint32)  # + 0.0 makes -0.0 equal +0.0 (and copies)
        # Descending float order as unsigned integers: a non-negative float's bits flipped below the sign bit,
        # a negative float's bits as they are (its sign bit puts it after every non-negative one).
        high = bits >> np.uint32(31)
        high -= np.uint32(1)
        high &= np.uint32(0x7FFFFFFF)
        high ^= bits
        keys = high.astype(np.uint64)
        keys <<= np.uint64(32)
        keys |= columns
        if dropped is not None:
            flags = dropped[rows] if by_id_descending is None else dropped[rows][:, by_id_descending]
            keys[flags] |= np.uint64(0xFFFFFFFF00000000)
        keys.sort(axis=1)
        low = keys.astype(np.uint32)  # the low 32 bits: the column
        out[rows] = low if by_id_descending is None else by_id_descending[low]
        if dropped is not None:
            n_kept = n_docs - dropped[rows].sum(axis=1)
            for r in np.flatnonzero(n_kept < n_docs):
                out[start + r, n_kept[r]:] = -1
    return out


def rank_rows(
    scores: np.ndarray, by_id_descending: np.ndarray | None, dropped: np.ndarray | None = None
) -> np.ndarray:
    """``rank_corpus`` without its checks, for callers that rank many blocks of one corpus: the id order
    (``id_descending_order``) is computed once, and the ranking takes its integer type. With
    ``by_id_descending=None`` the columns are already in id-descending order and the ranking is int32."""
    if scores.dtype in (np.float16, np.float32):  # what embedding models give
        return _order_float32(scores.astype(np.float32, copy=False), by_id_descending, dropped)
    if by_id_descending is None:
        by_id_descending = np.arange(scores.shape[1], dtype=np.int32)
    id_rank = np.empty(len(by_id_descending), dtype=np.int64)
    id_rank[by_id_descending[::-1]] = np.arange(len(by_id_descending))
    # lexsort: last key is primary. Negated keys turn ascending sorts into descending ones.
    order = np.lexsort((np.broadcast_to(-id_rank, scores.shape), -scores), axis=1).astype(by_id_descending.dtype)
    if dropped is None:
        return order
    dropped_in_order = np.take_along_axis(dropped, order, axis=1)
    # A stable sort on the drop flag moves dropped items to the tail and keeps the others' order.
    order = np.take_along_axis(order, np.argsort(dropped_in_order, axis=1, kind="stable"), axis=1)
    n_kept = scores.shape[1] - dropped_in_order.sum(axis=1)
    order[np.arange(scores.shape[1])[None, :] >= n_kept[:, None]] = -1
    return order


def rank_corpus(
    scores: np.ndarray,
    doc_ids: Sequence[str],
    *,
    self_matches: np.ndarray | None = None,
    policy: str = SELF_MATCH_DROP,
) -> np.ndarray:
    """Rank every corpus item for every query.

    scores: (queries, docs) similarity, higher is better. doc_ids: the corpus ids (unique), used for the
    tie-break. self_matches: boolean (queries, docs) from ``self_match_mask``; with ``policy="drop"``
    those items leave the query's ranking (its row is padded with -1 at the tail).
    Returns int64 (queries, docs) of corpus row indices, best first.
    """
    check_policy(policy)
    scores = np.asarray(scores)
    if scores.ndim != 2:
        raise ValueError(f"scores must be 2-D (queries, docs), got shape {scores.shape}")
    n_queries, n_docs = scores.shape
    if len(doc_ids) != n_docs:
        raise ValueError(f"{len(doc_ids)} document ids for {n_docs} score columns")
    if np.isnan(scores).any():
        raise ValueError("scores contain NaN; a model returned invalid embeddings")
    by_id_descending = id_descending_order(doc_ids)
    if policy == SELF_MATCH_KEEP or self_matches is None:
        return rank_rows(scores, by_id_descending)
    self_matches = np.asarray(self_matches, dtype=bool)
    if self_matches.shape != scores.shape:
        raise ValueError(f"self_matches has shape {self_matches.shape}, scores {scores.shape}")
    return rank_rows(scores, by_id_descending, self_matches)
