"""The floor of `eval run --model tfidf-char`: the same values and the same output files, computed with nothing else.

    .venv/bin/python benchmarks/floor_eval.py --data DIR --out OUT [--lang pt ...] [--params params.yaml]

Writes what ``python -m eval run --data DIR --model tfidf-char --out OUT --force --quiet`` writes (the results
document, its tables and worst pairs, tables.md, the four plots and the store's language results) with the same
bytes, the straightest way: each language read whole (qrels included) and encoded once, the queries taken in
fixed steps of whole pair_ids (about 2^22 query x title cells, so a step's arrays stay small), each step scored,
ranked and measured over every title of the corpus variant, and each pair measured from its two queries'
rankings. What it leaves out is what eval does beyond the values: blocks cut to a memory budget, the qrels
streamed, checked against their SHA-256 and spilled per block to disk, the store looked up, the test set and the
model checked, the query vectors encoded per block and corpus variant, progress and summary lines.

It shares eval's kernels, the fastest way this project knows to compute each value and write each file, so that
eval / floor is what eval's own machinery costs: the format reader (``eval.testset``), the model
(``CharTfidf``), the exact scores (``eval.ranking.grid_scores`` on ``score_grid``), the tie rule and its sort
(``id_descending_order``, ``rank_rows``), the measures (``eval.measures``, ``eval.metrics``), the figures and
their resampling (``eval.evaluate``'s figure functions, ``eval.stats``), the document layout and writer
(``eval.results``) and the tables and plots (``eval.report``). benchmarks/bench_run.py times it against
``eval run`` and checks the files are the same bytes after every round.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


# Queries per step: whole units (a pair_id's queries, so a pair's two rankings are in one step) up to about 2^22
# (query, title) cells, so a step's matrices stay small and their memory is reused; every row's values are its
# own, whatever the step (no budget computed, nothing spilled).
STEP_CELLS = 1 << 22


def steps_of(unit: list[int], n_docs: int) -> list[list[int]]:
    """The queries cut into steps of whole units (``unit``: each query's pair_id code), in order of first appearance."""
    members: dict[int, list[int]] = {}
    for i, u in enumerate(unit):
        members.setdefault(u, []).append(i)
    steps, rows = [], []
    for queries in members.values():
        rows += queries
        if len(rows) * n_docs >= STEP_CELLS:
            steps.append(rows)
            rows = []
    return steps + ([rows] if rows else [])


def score_variant(ts, docs, q_vectors, d_vectors, qrels_rows, settings, unit, m_idx, f_idx, ranked: int):
    """One corpus variant: per query every query measure, per pair every pair measure, and the top lists of the
    least symmetric of the first ``ranked`` pairs (the masculine x feminine ones), as
    ``eval.evaluate.score_corpus`` returns them."""
    import numpy as np

    from eval.ranking import grid_scores, score_grid
    from eval.measures import PairRankings, QueryRankings, RankBiasedOverlap
    from eval.metrics import first_hit_positions
    from eval.ranking import SELF_MATCH_DROP, id_descending_order, rank_rows, self_match_columns

    n_queries, n_docs = ts.queries.height, docs.height
    drop = settings.self_match == SELF_MATCH_DROP
    order = id_descending_order(docs["id"].to_list())  # columns in id-descending order: the sort breaks ties by column
    d_vectors = score_grid(d_vectors[order])  # eval's exact scores: embeddings on the grid once
    column_of = np.empty(n_docs, dtype=np.int64)
    column_of[order] = np.arange(n_docs)
    own = [np.sort(column_of[c]) for c in self_match_columns(ts.queries["source_ids"], docs["source_ids"])]
    # relevance: the qrels' (query row, corpus row) cells inside this variant
    q_rows, d_rows = qrels_rows
    variant_col = np.full(ts.corpus.height, -1, dtype=np.int64)
    variant_col[docs["row"].to_numpy()] = column_of
    col = variant_col[d_rows]
    q_cells, col_cells = q_rows[col >= 0], col[col >= 0]
    per_query = {str(m): np.empty(n_queries) for m in settings.query_measures}
    per_pair = {str(m): np.empty(len(m_idx), dtype=bool if m.boolean else np.float64) for m in settings.pair_measures}
    n_relevant = np.zeros(n_queries, dtype=np.int64)
    rbo_p = tuple(m.p for m in settings.pair_measures if isinstance(m, RankBiasedOverlap))
    depth = settings.list_depth
    heads = {}  # every ranked pair's two top lists; the least symmetric are picked at the end
    pairs_of_query = {}
    for j, m in enumerate(m_idx.tolist()):
        pairs_of_query.setdefault(m, []).append(j)
    for rows in steps_of(unit, n_docs):
        n = len(rows)
        local = np.full(n_queries, -1, dtype=np.int64)
        local[rows] = np.arange(n)
        dropped = np.zeros((n, n_docs), dtype=bool)
        if drop:
            dropped[np.repeat(np.arange(n), [len(own[i]) for i in rows]), np.concatenate([own[i] for i in rows])] = True
        relevant = np.zeros((n, n_docs), dtype=bool)
        in_step = local[q_cells] >= 0
        relevant[local[q_cells[in_step]], col_cells[in_step]] = True
        if drop:  # a query's self-matches leave its relevant set as they leave its ranking
            relevant &= ~dropped
        n_relevant[rows] = relevant.sum(axis=1)
        scores = grid_scores(score_grid(q_vectors[rows]), d_vectors)  # (queries, titles) float32, exact
        # the tie rule's one sort: score descending, then id descending; dropped items at the tail as -1
        ranking = rank_rows(scores, None, dropped if drop else None)
        del scores, dropped
        hit_row, hit_pos = np.nonzero(np.take_along_axis(relevant, ranking, axis=1) & (ranking >= 0))
        queries = QueryRankings(ranking, relevant, n_relevant[rows], hit_row, hit_pos, first_hit_positions(hit_row, hit_pos, n, n_docs))
        for m in settings.query_measures:
            per_query[str(m)][rows] = m.per_query(queries)
        pairs = np.array([j for i in rows for j in pairs_of_query.get(i, ())], dtype=np.int64)
        if not len(pairs):
            continue
        pm, pf = local[m_idx[pairs]], local[f_idx[pairs]]
        rank_m, rank_f = ranking[pm], ranking[pf]
        if drop:  # each pair ranked without the self-matches of either form: the query's ranking less the other's
            for k, j in enumerate(pairs.tolist()):
                m, f = m_idx[j], f_idx[j]
                if not np.array_equal(own[m], own[f]):
                    for ranks, other in ((rank_m, own[f]), (rank_f, own[m])):
                        kept = ranks[k][(ranks[k] >= 0) & ~np.isin(ranks[k], other)]
                        ranks[k] = -1
                        ranks[k][:len(kept)] = kept
        symmetry = PairRankings(rank_m, rank_f, rbo_p)
        for m in settings.pair_measures:
            per_pair[str(m)][pairs] = m.per_pair(symmetry)
        for k, j in enumerate(pairs.tolist()):
            if j < ranked:
                lists = []
                for ranks, rel in ((rank_m[k, :depth], relevant[pm[k]]), (rank_f[k, :depth], relevant[pf[k]])):
                    lists += [np.where(ranks >= 0, order[np.maximum(ranks, 0)], -1), rel[np.maximum(ranks, 0)] & (ranks >= 0)]
                heads[j] = tuple(lists)
    # the least symmetric masculine x feminine pairs (ties: the lower pair) keep their top lists
    worst = np.argsort(per_pair[settings.worst_by][:ranked], kind="stable")[:settings.worst_pairs].tolist()
    return {"query": per_query, "pair": per_pair, "has_relevant": n_relevant > 0, "top": {j: heads[j] for j in worst}, "blocks": 1}


def floor_language(data: Path, lang: str, model, revision: str, settings):
    """One language's result (``LanguageResult``); ``revision``: the model's revision before any fit (the store's key)."""
    from types import SimpleNamespace

    import numpy as np
    import polars as pl

    from eval import __version__ as toolkit_version
    from eval.evaluate import (QueryIndex, corpus_figures, form_figures, form_pairs, per_form_pair_rows, per_pair_rows,
                               per_query_rows, split_pairs, worst_pairs, _counts)
    from eval.relevance import rows_of
    from eval.results import LanguageResult, ResultRows
    from eval.testset import read_testset, testset_digest, testset_source, testset_version

    ts = read_testset(data, lang)  # the qrels whole
    corpus = ts.corpus.with_row_index("row")
    variants = {g: corpus.filter(pl.col("id").is_in(ts.corpus_for(g)["id"].implode())) for g in settings.corpora}
    used = np.unique(np.concatenate([d["row"].to_numpy() for d in variants.values()]))
    texts = ts.corpus["text"].to_list()
    model.fit([texts[i] for i in used.tolist()])
    d_vectors_used = model.encode_sparse([texts[i] for i in used.tolist()], "passage")
    q_vectors = model.encode_sparse(ts.queries["text"].to_list(), "query").toarray()
    emb_row = np.full(ts.corpus.height, -1, dtype=np.int64)
    emb_row[used] = np.arange(len(used))
    qi = QueryIndex.of(ts)
    extra = form_pairs(qi)
    m_all = np.concatenate([qi.m_idx, *(p.form_idx for p in extra)])
    f_all = np.concatenate([qi.f_idx, *(p.reference_idx for p in extra)])
    qrels = ts.qrels.filter(pl.col("relevance") > 0)
    q_rows = rows_of(qrels["query_id"], pl.Enum(qi.ids)).astype(np.int64)
    d_rows = rows_of(qrels["doc_id"], pl.Enum(ts.corpus["id"])).astype(np.int64)
    known = (q_rows >= 0) & (d_rows >= 0)

    result = {"lang": lang, "counts": None, "corpora": {}}
    if testset_source(ts.stats):
        result["source"] = testset_source(ts.stats)
    rows = {"per_query": [], "per_pair": [], "per_form_pair": []}
    worst = {}
    for gender, docs in variants.items():
        scored = score_variant(ts, docs, q_vectors, d_vectors_used[emb_row[docs["row"].to_numpy()]],
                               (q_rows[known], d_rows[known]), settings, qi.unit.tolist(), m_all, f_all, len(qi.m_idx))
        scored, extra_values = split_pairs(scored, len(qi.m_idx), extra)
        result["corpora"][gender] = corpus_figures(scored, qi, docs.height, settings)
        if extra:
            result["corpora"][gender]["forms"] = form_figures(scored, qi, extra, extra_values, settings)
            rows["per_form_pair"].append(per_form_pair_rows(gender, scored, qi, extra, extra_values))
        rows["per_query"].append(per_query_rows(gender, scored, qi))
        rows["per_pair"].append(per_pair_rows(gender, scored, qi))
        worst[gender] = worst_pairs(scored, qi, docs["text"].to_list(), settings)
    result["counts"] = _counts(ts, qi, extra, SimpleNamespace(relevant_lines=qrels.height))  # all it reads
    result["per_query"] = ResultRows(pl.concat(rows["per_query"]), omit_none=("form",))  # a row names its form
    result["per_pair"] = ResultRows(pl.concat(rows["per_pair"]))                           # only where it has one
    if extra:
        result["per_form_pair"] = ResultRows(pl.concat(rows["per_form_pair"]))
    result["worst_pairs"] = worst
    return LanguageResult(
        toolkit={"name": "gendered-job-titles eval", "version": toolkit_version}, model=model.meta.to_dict(),
        model_revision=revision, lang=lang, testset_root=str(data), testset_version=testset_version(ts, data),
        testset_digest=testset_digest(data, lang),
        settings=settings.describe(), figures=result)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--lang", action="append", help="default: every language under --data")
    parser.add_argument("--params", default=str(REPO / "params.yaml"))
    args = parser.parse_args()
    from dataclasses import replace

    from eval.models import CharTfidf
    from eval.params import read_eval_settings
    from eval.report import tables_markdown, worst_pairs_markdown, write_plots
    from eval.results import RunResult, write_json
    from eval.testset import list_languages

    settings = replace(read_eval_settings(args.params), models=("tfidf-char",))
    langs = args.lang or list_languages(args.data)
    model = CharTfidf()
    revision = model.meta.revision
    results = [floor_language(args.data, lang, model, revision, settings) for lang in langs]
    for r in results:
        write_json(args.out / "store" / r.relative_path(), r.to_dict())
    doc = RunResult.from_languages(results, args.data).to_document(streamed_rows=True)
    stem = f"tfidf-char__{doc['testset']['version']}"
    write_json(args.out / f"{stem}.json", doc)
    (args.out / f"{stem}.md").write_text(tables_markdown([doc]), encoding="utf-8")
    (args.out / f"{stem}.worst_pairs.md").write_text(worst_pairs_markdown(doc), encoding="utf-8")
    (args.out / "tables.md").write_text(tables_markdown([doc]), encoding="utf-8")
    write_plots([doc], args.out / "plots")


if __name__ == "__main__":
    main()
