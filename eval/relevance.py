"""The relevance labels of a test set, one block of queries at a time.

The qrels are the one input that grows with queries x relevant titles: a set whose queries are copied ten
times has ten times the qrels lines. ``BlockRelevance.spill`` reads them once, a slice at a time
(``TestSet.qrels_slices``), maps each relevant line to an integer (query row, corpus row) cell and appends
it to the file of its query's block in a temporary folder; scoring a block then reads that block's cells
alone. What eval holds of the qrels is one slice while spilling and one block's cells while scoring, however
many lines there are.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from eval.ranking import SELF_MATCH_DROP, SelfMatchColumns


@dataclass(frozen=True)
class BlockRelevance:
    """Relevant cells spilled per block of queries to ``folder`` (``block-<b>.bin``: int32 query row, corpus row
    pairs). ``relevant_lines`` counts the qrels lines with relevance > 0 (repeated lines and unknown ids included,
    as the counts report them); ``known_query_lines`` those of them whose query id the set holds."""

    folder: Path
    n_blocks: int
    n_corpus: int
    relevant_lines: int
    known_query_lines: int

    @classmethod
    def spill(cls, slices: Iterable[pl.DataFrame], query_ids: list[str], corpus_ids: list[str],
              block_of_query: np.ndarray, folder: Path) -> "BlockRelevance":
        """Map every slice's relevant lines to cells and append them to their block's file. Lines naming an id
        the set does not hold, or relevance <= 0, fall out (``read_testset`` refuses unknown ids on disk)."""
        folder.mkdir(parents=True, exist_ok=True)
        q_rows, d_rows = pl.Enum(query_ids), pl.Enum(corpus_ids)
        n_blocks = int(block_of_query.max()) + 1 if len(block_of_query) else 0
        relevant_lines = known_query_lines = 0
        for part in slices:
            relevant = part["relevance"].to_numpy() > 0
            q, d = rows_of(part["query_id"], q_rows), rows_of(part["doc_id"], d_rows)
            relevant_lines += int(relevant.sum())
            known_query_lines += int((relevant & (q >= 0)).sum())
            kept = relevant & (q >= 0) & (d >= 0)
            q, d = q[kept], d[kept]
            block = block_of_query[q]
            order = np.argsort(block, kind="stable")
            cells = np.stack([q[order], d[order]], axis=1)
            starts = np.searchsorted(block[order], np.arange(n_blocks + 1))
            for b in np.flatnonzero(np.diff(starts)):
                with open(folder / f"block-{b}.bin", "ab") as fh:
                    fh.write(cells[starts[b]:starts[b + 1]].tobytes())
        return cls(folder, n_blocks, len(corpus_ids), relevant_lines, known_query_lines)

    def cells(self, block: int) -> tuple[np.ndarray, np.ndarray]:
        """The block's distinct relevant cells as (query rows, corpus rows), int32, sorted by query row then
        corpus row."""
        path = self.folder / f"block-{block}.bin"
        if not path.is_file():
            empty = np.zeros(0, dtype=np.int32)
            return empty, empty
        pairs = np.fromfile(path, dtype=np.int32).reshape(-1, 2)
        keys = np.unique(pairs[:, 0].astype(np.int64) * max(self.n_corpus, 1) + pairs[:, 1])  # sorted, repeats out
        q, d = np.divmod(keys, max(self.n_corpus, 1))
        return q.astype(np.int32), d.astype(np.int32)


def rows_of(ids: pl.Series, rows: pl.Enum) -> np.ndarray:
    """The rows of ``ids`` (Categorical or String) in the Enum ``rows`` (an Enum's code is the id's place in it) as
    int32, -1 for an id the Enum does not hold."""
    return ids.cast(rows, strict=False).to_physical().cast(pl.Int32).fill_null(-1).to_numpy()


def block_relevant_columns(cells: tuple[np.ndarray, np.ndarray], rows: np.ndarray, column_of: np.ndarray,
                           self_cols: SelfMatchColumns, self_match: str) -> list[np.ndarray]:
    """Per query of ``rows`` (one block), its relevant columns of one corpus variant: ``column_of`` maps a corpus
    row to the variant's column, -1 outside the variant (the variant keeps the corpus order, so the columns come
    sorted). Under ``drop`` a query's self-matches leave its relevant set, as they leave its ranking: a title
    merged from the query's own source and a relevant one would otherwise count as relevant and never be
    retrieved."""
    q, d = cells
    col = column_of[d]
    kept = col >= 0
    q, col = q[kept], col[kept]
    starts, ends = np.searchsorted(q, rows, "left"), np.searchsorted(q, rows, "right")
    columns = [col[a:b] for a, b in zip(starts.tolist(), ends.tolist())]
    if self_match == SELF_MATCH_DROP:
        for k, i in enumerate(rows.tolist()):
            own = self_cols[i]
            if len(own) and len(columns[k]):
                columns[k] = columns[k][~np.isin(columns[k], own)]
    return columns
