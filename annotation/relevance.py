"""The relevance-labelling dataset: query/document pairs without a label, pooled from several models'
rankings (TREC-style pooling: the union of every model's top-k), plus a sample of carried-over labels to
audit. Pairs are kept at the level of English source ids, which is what a relevance label applies to
(docs/FORMAT.md)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import polars as pl
from tqdm import tqdm

from annotation.push import RecordSpec, hash_property
from annotation.server import _rg
from eval.testset import FEMININE, MASCULINE, NEUTRAL, TestSet

ORIGIN_POOL = "pool"
ORIGIN_AUDIT = "audit"
# One question, so a number key answers and submits at once (Argilla auto-submits only a record with a single
# question); the "translation wrong" flag rides on the label instead of a second question.
LABELS = {
    "relevant": "relevant",
    "not_relevant": "not relevant",
    "relevant_translation_wrong": "relevant, but a translation is wrong",
    "not_relevant_translation_wrong": "not relevant, and a translation is wrong",
}
RELEVANT_LABELS = frozenset({"relevant", "relevant_translation_wrong"})
TRANSLATION_WRONG_LABELS = frozenset({"relevant_translation_wrong", "not_relevant_translation_wrong"})

# The vector fields of annotation.vectors (name → title in the UI's "find similar"): the English titles.
VECTOR_TITLES = {"query_vector": "Query (English title)", "document_vector": "Document (English title)"}

# model name -> query item id -> document item ids, best first (at least `depth` long)
Rankings = dict[str, dict[str, list[str]]]


def dataset_name(lang: str, version: str) -> str:
    return f"{lang}-relevance-{version}"


def record_id(lang: str, query_source_id: str, doc_source_id: str) -> str:
    return f"{lang}-relevance-{query_source_id}-{doc_source_id}"


@dataclass
class Candidate:
    query_source_id: str
    doc_source_id: str
    origin: str
    models: set[str] = field(default_factory=set)
    best_rank: int | None = None  # 1-based, over all models and query genders


def _sources(items: pl.DataFrame) -> dict[str, list[str]]:
    return dict(zip(items["id"].to_list(), items["source_ids"].to_list()))


def labelled_source_pairs(ts: TestSet) -> set[tuple[str, str]]:
    """The (query source, doc source) pairs the carried-over qrels mark relevant."""
    q_src, d_src = _sources(ts.queries), _sources(ts.corpus)
    pairs = set()
    for q, d, rel in ts.qrels.select("query_id", "doc_id", "relevance").iter_rows():
        if rel > 0:
            pairs.update((qs, ds) for qs in q_src[q] for ds in d_src[d])
    return pairs


def pool_candidates(ts: TestSet, rankings: Rankings, depth: int,
                    known: set[tuple[str, str]] = frozenset()) -> list[Candidate]:
    """Pairs in some model's top ``depth`` for some query (either gender) that carry no label yet.

    ``known`` adds pairs already decided by people (a previous pull). A document sharing the query's source
    is its own title and never proposed."""
    q_src, d_src = _sources(ts.queries), _sources(ts.corpus)
    labelled = labelled_source_pairs(ts) | set(known)
    pool: dict[tuple[str, str], Candidate] = {}
    for model, per_query in sorted(rankings.items()):
        for q_item, docs in per_query.items():
            if q_item not in q_src:
                raise ValueError(f"ranking of {model} names query {q_item!r}, which is not in the {ts.lang} test set")
            for rank, d_item in enumerate(docs[:depth], 1):
                for qs in q_src[q_item]:
                    for ds in d_src[d_item]:
                        if qs == ds or (qs, ds) in labelled:
                            continue
                        c = pool.setdefault((qs, ds), Candidate(qs, ds, ORIGIN_POOL))
                        c.models.add(model)
                        c.best_rank = rank if c.best_rank is None else min(c.best_rank, rank)
    return sorted(pool.values(), key=lambda c: (c.best_rank, c.query_source_id, c.doc_source_id))


def audit_candidates(ts: TestSet, n: int, seed: int) -> list[Candidate]:
    """A seeded sample of carried-over labels, for people to check independently."""
    labelled = sorted(labelled_source_pairs(ts))
    chosen = random.Random(seed).sample(labelled, min(n, len(labelled)))
    return [Candidate(qs, ds, ORIGIN_AUDIT) for qs, ds in sorted(chosen)]


def model_rankings(ts: TestSet, model_names: list[str], depth: int, *, params: str | Path = "params.yaml") -> Rankings:
    """Top-``depth`` of each model for every query over the corpus of its gender (neutral queries over the
    masculine corpus): the rankings `eval run` scores (``eval.evaluate.rank_testset``: the embedding cache and
    memory budget of params.yaml's eval:, eval's exact scores and tie-break), self-matches dropped."""
    # eval's one public ranking entry point (docs/architecture.md); imported here, where it is used: it loads
    # numpy, scipy and the model records, which push translations, pull and rule never need
    from eval.evaluate import rank_testset

    corpus_of = {MASCULINE: MASCULINE, NEUTRAL: MASCULINE, FEMININE: FEMININE}
    query_gender = dict(zip(ts.queries["id"].to_list(), ts.queries["gender"].to_list()))
    rankings: Rankings = {}
    for name in tqdm(model_names, desc=f"ranking {ts.lang} for the pool", unit="model",
                     disable=None):  # off when stderr is no terminal (a log file, CI)
        ranked = rank_testset(ts, name, depth, params=params, corpora=(MASCULINE, FEMININE), self_match="drop",
                              progress=False)
        rankings[name] = {q: ranked[corpus_of[g]][q] for q, g in query_gender.items() if g in corpus_of}
    return rankings


def _english(items: pl.DataFrame) -> dict[str, str]:
    """English source id -> English title."""
    return {
        sid: text
        for ids, texts in items.select("source_ids", "source_texts").iter_rows()
        for sid, text in zip(ids, texts)
    }


# The forms a judgement reads; the inclusive extra forms (doublet, neomorpheme) repeat the pair and clutter it.
SHOWN_GENDERS = ("masculine", "feminine", "neutral")


def _display(ts_items: pl.DataFrame) -> dict[str, str]:
    """English source id -> its translated forms, e.g. 'advogado (masculine) · advogada (feminine)'."""
    forms: dict[str, list[str]] = {}
    for text, gender, sources in ts_items.select("text", "gender", "source_ids").iter_rows():
        if gender not in SHOWN_GENDERS:
            continue
        for s in sources:
            forms.setdefault(s, []).append(f"{text} ({gender})")
    order = {"masculine": 0, "feminine": 1, "neutral": 2}  # the masculine first, as every form of the toolkit
    return {s: " · ".join(sorted(v, key=lambda x: (order.get(x.rsplit(" (", 1)[-1].rstrip(")"), 3), x)))
            for s, v in forms.items()}


def settings(min_submitted: int = 2):
    rg = _rg()
    guidelines = resources.files(__package__).joinpath("guidelines_relevance.md").read_text(encoding="utf-8")
    return rg.Settings(
        guidelines=guidelines,
        distribution=rg.TaskDistribution(min_submitted=min_submitted),
        fields=[rg.TextField(name="query", title="Query: English title (its translation below)"),
                rg.TextField(name="document", title="Document: English title (its translation below)")],
        questions=[
            rg.LabelQuestion(name="relevant", title="Is the document relevant to the query?", labels=LABELS,
                             description="Judge the English titles. When a translated title does not say what its "
                                         "English says, pick the answer with 'a translation is wrong'. Keys 1-4 "
                                         "answer and submit at once."),
        ],
        metadata=[
            rg.TermsMetadataProperty(name="query_title", title="query (English title)"),
            rg.IntegerMetadataProperty(name="query_number", title="query number (sort: query, then best rank)"),
            rg.IntegerMetadataProperty(name="best_rank", title="best rank"),
            rg.TermsMetadataProperty(name="origin", title="origin (pool / audit)"),
            rg.TermsMetadataProperty(name="models", title="proposed by"),
            rg.TermsMetadataProperty(name="query_source_id", title="query source id", visible_for_annotators=False),
            rg.TermsMetadataProperty(name="doc_source_id", title="document source id", visible_for_annotators=False),
            hash_property(),
        ],
    )


def record_specs(ts: TestSet, candidates: list[Candidate]) -> list[RecordSpec]:
    """One record per pair, grouped by query (its English title's order) and by best rank within a query."""
    q_text, d_text = _english(ts.queries), _english(ts.corpus)
    q_forms, d_forms = _display(ts.queries), _display(ts.corpus)
    number = {sid: i for i, sid in enumerate(sorted({c.query_source_id for c in candidates},
                                                    key=lambda sid: (q_text[sid].lower(), sid)), 1)}
    ordered = sorted(candidates, key=lambda c: (number[c.query_source_id], c.best_rank is None, c.best_rank or 0,
                                                c.doc_source_id))
    specs = []
    for c in ordered:
        metadata: dict[str, object] = {
            "origin": c.origin, "query_source_id": c.query_source_id, "doc_source_id": c.doc_source_id,
            "query_title": q_text[c.query_source_id], "query_number": number[c.query_source_id],
        }
        if c.models:
            metadata["models"] = sorted(c.models)
        if c.best_rank is not None:
            metadata["best_rank"] = c.best_rank
        specs.append(RecordSpec(
            id=record_id(ts.lang, c.query_source_id, c.doc_source_id),
            fields={
                "query": f"{q_text[c.query_source_id]}\n{q_forms.get(c.query_source_id, '(no translated form)')}",
                "document": f"{d_text[c.doc_source_id]}\n{d_forms.get(c.doc_source_id, '(no translated form)')}",
            },
            metadata=metadata,
            # No suggestion, not even on audit records: the check of an old label stays independent of it.
            suggestions={},
            vector_texts={"query_vector": q_text[c.query_source_id], "document_vector": d_text[c.doc_source_id]},
        ))
    return specs
