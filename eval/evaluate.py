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
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

import eval as eval_pkg
from eval.errors import EvalError
from eval.metrics import (
    accuracy_at_k_batch,
    average_precision_batch,
    identical_top1_batch,
    symmetry_batch,
)
from eval.models import EmbeddingCache, EmbeddingModel
from eval.ranking import SELF_MATCH_DROP, SELF_MATCH_RULES, TIE_BREAK, check_policy, rank_corpus, self_match_mask
from eval.stats import bootstrap_ci, bootstrap_ci_difference, paired_randomization_test
from eval.testset import FEMININE, MASCULINE, NEUTRAL, TestSet

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

    def __post_init__(self) -> None:
        check_policy(self.self_match)
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
            **asdict(self),
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


def similarity_scores(q_emb: np.ndarray, d_emb: np.ndarray) -> np.ndarray:
    """Dot products (queries, docs), computed once per distinct query embedding.

    BLAS can round the same row differently at different positions of a matrix product; scoring each
    distinct embedding once makes identical query texts rank identically, so a pair whose two forms are
    the same string scores AO = RBO = 1 exactly.
    """
    distinct, inverse = np.unique(q_emb, axis=0, return_inverse=True)
    return (distinct @ d_emb.T)[inverse.reshape(-1)]


def testset_digest(root: str | Path, lang: str) -> str:
    """Content digest of a language folder's three scored files (the version when stats.json has none)."""
    h = hashlib.sha256()
    for name in ("queries.parquet", "corpus.parquet", "qrels.tsv"):
        h.update((Path(root) / lang / name).read_bytes())
    return h.hexdigest()[:12]


def testset_version(ts: TestSet, root: str | Path) -> str:
    """The release's version (its manifest.json), else stats.json's, else a content digest."""
    manifest = Path(root) / "manifest.json"
    if manifest.is_file():
        try:
            version = json.loads(manifest.read_text(encoding="utf-8")).get("version")
        except (json.JSONDecodeError, AttributeError):
            raise EvalError(f"{manifest}: not a valid release manifest (run `python -m releases verify {root}`)") from None
        if version:
            return f"v{version}"
    return str(ts.stats.get("version") or f"sha-{testset_digest(root, ts.lang)}")


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
    relevant_pairs = ts.qrels.filter(pl.col("relevance") > 0)
    q_texts = queries["text"].to_list()
    q_pair_ids = queries["pair_id"].to_list()
    pair_ids, pair_m, pair_f = pairs["pair_id"].to_list(), pairs["m_id"].to_list(), pairs["f_id"].to_list()

    result: dict = {
        "lang": ts.lang,
        "counts": {
            "queries": {g: int((q_gender == g).sum()) for g in (MASCULINE, FEMININE, NEUTRAL)},
            "query_pairs": int(pairs.height),
            "corpus": {g: int(ts.corpus.filter(pl.col("gender") == g).height) for g in (MASCULINE, FEMININE, NEUTRAL)},
            "qrels_relevant": int(relevant_pairs.height),
        },
        "corpora": {},
    }
    per_query: list[dict] = []
    per_pair: list[dict] = []
    worst: dict[str, list[dict]] = {}

    for corpus_gender in CORPORA:
        docs = ts.corpus.with_row_index("row").filter(pl.col("gender").is_in([corpus_gender, NEUTRAL]))
        doc_ids = docs["id"].to_list()
        doc_texts = docs["text"].to_list()
        doc_index = {d: j for j, d in enumerate(doc_ids)}
        scores = similarity_scores(q_emb, d_emb[docs["row"].to_numpy()])
        self_matches = self_match_mask(queries["source_ids"].to_list(), docs["source_ids"].to_list())

        relevant = np.zeros(scores.shape, dtype=bool)
        for q, d in relevant_pairs.select("query_id", "doc_id").iter_rows():
            if q in q_index and d in doc_index:
                relevant[q_index[q], doc_index[d]] = True
        if settings.self_match == SELF_MATCH_DROP:
            # A dropped self-match leaves the query's corpus, so it leaves its relevant set too: a title merged
            # from the query's own source and a relevant one would otherwise count as a relevant item that can
            # never be retrieved.
            relevant &= ~self_matches
        has_relevant = relevant.any(axis=1)

        ranking = rank_corpus(scores, doc_ids, self_matches=self_matches, policy=settings.self_match)
        ap = average_precision_batch(ranking, relevant)
        acc = {k: np.where(has_relevant, accuracy_at_k_batch(ranking, relevant, k), np.nan) for k in settings.accuracy_k}

        # Both forms of a pair are ranked over the same items: drop the self-matches of either query.
        pair_drop = self_matches[m_idx] | self_matches[f_idx]
        rank_m = rank_corpus(scores[m_idx], doc_ids, self_matches=pair_drop, policy=settings.self_match)
        rank_f = rank_corpus(scores[f_idx], doc_ids, self_matches=pair_drop, policy=settings.self_match)
        if len(m_idx):
            ao, rbo_values = symmetry_batch(rank_m, rank_f, settings.rbo_p)
            same_top1 = identical_top1_batch(rank_m, rank_f).astype(np.float64)
        else:
            ao = rbo_values = same_top1 = np.zeros(0)

        scored = has_relevant[m_idx] & has_relevant[f_idx]
        ap_gap = ap[m_idx][scored] - ap[f_idx][scored]
        acc1_gap = acc[1][m_idx][scored] - acc[1][f_idx][scored]

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

        def top(row: np.ndarray, qi: int) -> list[dict]:
            return [{"text": doc_texts[d], "relevant": bool(relevant[qi, d])} for d in row[: settings.list_depth] if d >= 0]

        worst[corpus_gender] = [
            {
                "pair_id": pair_ids[j],
                "masculine": q_texts[m_idx[j]], "feminine": q_texts[f_idx[j]],
                "AO": float(ao[j]), settings.rbo_name: float(rbo_values[j]),
                "AP_M": None if np.isnan(ap[m_idx[j]]) else float(ap[m_idx[j]]),
                "AP_F": None if np.isnan(ap[f_idx[j]]) else float(ap[f_idx[j]]),
                "top_masculine": top(rank_m[j], int(m_idx[j])), "top_feminine": top(rank_f[j], int(f_idx[j])),
            }
            for j in np.argsort(rbo_values, kind="stable")[: settings.worst_pairs]
        ]

    result["per_query"] = per_query
    result["per_pair"] = per_pair
    result["worst_pairs"] = worst
    timing.total_s = time.perf_counter() - start
    result["timing"] = {"encode_s": timing.encode_s, "total_s": timing.total_s, "texts": timing.texts, "encoded": timing.encoded}
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
