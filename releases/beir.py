"""BEIR/MTEB-shaped copies of a language's test set, beside the release's own files (``release.beir``).

A BEIR loader (``beir.datasets.data_loader.GenericDataLoader``) or MTEB's retrieval loaders read a folder of
``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl`` (``_id``, ``text``) and ``qrels/test.tsv``
(``query-id``, ``corpus-id``, ``score``, with that header). Such a folder holds one query form ranked over one
corpus, so a language gets one folder, one configuration, per query form and corpus variant:
``<lang>/beir/<query form>-queries_<corpus>-corpus/``: the masculine, feminine and neutral queries (and the
doublet and neomorpheme queries of a set that has them) over the masculine corpus (masculine + neutral titles),
the feminine corpus (feminine + neutral) and, when built, the doublet corpus, exactly as ``eval`` assembles them
(``TestSet.queries_of_form``, ``TestSet.corpus_for``). Each folder's qrels are the set's pairs between its queries
and its corpus; a query without a relevant title there is left out of it (BEIR drops it; eval's MAP skips it).

The ids are the test set's; every corpus title is ranked, so a harness's figures on these folders are those of
``eval run --self-match keep`` (eval's default ``drop`` takes a query's own translated title out of its ranking,
which no BEIR file can say)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from eval.testset import DOUBLET, FEMININE, FORMS, MASCULINE, TestSet, beir_config_name

# The paths under <lang>/ that write_beir writes (the release folder's check of what it may replace)
BEIR_PATHS = re.compile(r"beir(/[a-z]+-queries_[a-z]+-corpus(/(corpus\.jsonl|queries\.jsonl|qrels(/test\.tsv)?))?)?")
CORPORA = (MASCULINE, FEMININE, DOUBLET)


def beir_configs(ts: TestSet) -> list[tuple[str, pl.DataFrame, pl.DataFrame, pl.DataFrame]]:
    """``(name, queries, corpus, qrels)`` of every configuration of ``ts`` that has a query with a relevant title:
    queries and corpus as eval reads them, qrels (``query_id``, ``doc_id``, ``relevance`` > 0) between the two."""
    qrels = ts.qrels.filter(pl.col("relevance") > 0).select(pl.col("query_id", "doc_id").cast(pl.String), "relevance")
    configs = []
    for corpus_form in CORPORA:
        corpus = ts.corpus_for(corpus_form)
        if corpus.height == 0:  # the doublet corpus of a set built without it
            continue
        for form in FORMS:
            queries = ts.queries_of_form(form)
            pairs = qrels.filter(pl.col("query_id").is_in(queries["id"].implode()) & pl.col("doc_id").is_in(corpus["id"].implode()))
            if pairs.height == 0:
                continue
            queries = queries.filter(pl.col("id").is_in(pairs["query_id"].unique().implode()))
            configs.append((beir_config_name(form, corpus_form), queries, corpus, pairs.sort("query_id", "doc_id")))
    return configs


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def write_beir(ts: TestSet, folder: Path) -> list[str]:
    """Write ``folder/<config>/{corpus.jsonl, queries.jsonl, qrels/test.tsv}`` for every configuration of ``ts``,
    rows sorted by id (the same set gives the same bytes); returns the configuration names."""
    names = []
    for name, queries, corpus, qrels in beir_configs(ts):
        out = folder / name
        (out / "qrels").mkdir(parents=True)
        (out / "corpus.jsonl").write_text(_jsonl([{"_id": i, "title": "", "text": t}
                                                  for i, t in corpus.sort("id").select("id", "text").iter_rows()]), encoding="utf-8")
        (out / "queries.jsonl").write_text(_jsonl([{"_id": i, "text": t}
                                                   for i, t in queries.sort("id").select("id", "text").iter_rows()]), encoding="utf-8")
        (out / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
            f"{q}\t{d}\t{r}\n" for q, d, r in qrels.iter_rows()), encoding="utf-8")
        names.append(name)
    return names
