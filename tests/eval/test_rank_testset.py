"""``eval.evaluate.rank_testset``, eval's one public ranking entry point (docs/architecture.md): the top documents
of every query over each corpus variant, by `eval run`'s own path. Checked against the ranking's definition
(dot products of the unit vectors rounded to float32, score descending, then document id descending;
self-matches dropped), computed here by plain sorting, and for every memory budget (blocks change no ranking)."""

from __future__ import annotations

import numpy as np
import pytest

from eval.errors import EvalError
from eval.evaluate import rank_testset
from eval.models import load_model
from eval.testset import FEMININE, MASCULINE

from .testsets import forms_testset

DEPTH = 6


def params_file(tmp_path, **eval_keys) -> str:
    lines = ["eval:", f"  cache: {tmp_path / 'cache'}"] + [f"  {k}: {v}" for k, v in eval_keys.items()]
    path = tmp_path / "params.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def by_definition(ts, corpus_gender: str, depth: int) -> dict[str, list[str]]:
    """Each query's top ``depth`` over the corpus variant by sorting (score, id) pairs: the model fitted on the
    masculine, feminine and neutral titles (the items eval encodes), float64 dot products rounded to float32."""
    model = load_model("tfidf-char")
    model.fit(ts.corpus["text"].to_list())
    docs = ts.corpus_for(corpus_gender)
    d = model.encode_sparse(docs["text"].to_list(), role="passage").toarray().astype(np.float64)
    q = model.encode_sparse(ts.queries["text"].to_list(), role="query").toarray().astype(np.float64)
    scores = (q @ d.T).astype(np.float32)
    top = {}
    for i, (qid, q_sources) in enumerate(zip(ts.queries["id"].to_list(), ts.queries["source_ids"].to_list())):
        kept = [(float(scores[i, j]), doc_id) for j, (doc_id, d_sources) in
                enumerate(zip(docs["id"].to_list(), docs["source_ids"].to_list())) if not set(q_sources) & set(d_sources)]
        # score descending, then id descending: sort by (score, id) and reverse
        top[qid] = [doc_id for _, doc_id in sorted(kept, reverse=True)[:depth]]
    return top


def test_rank_testset_is_the_defined_ranking_in_any_number_of_blocks(tmp_path):
    ts = forms_testset()  # masculine, feminine, neutral and extra-form queries
    whole = rank_testset(ts, "tfidf-char", DEPTH, params=params_file(tmp_path), progress=False)
    assert set(whole) == {MASCULINE, FEMININE}
    for corpus_gender, top in whole.items():
        assert top == by_definition(ts, corpus_gender, DEPTH), corpus_gender
        assert set(top) == set(ts.queries["id"].to_list())
        allowed = set(ts.corpus_for(corpus_gender)["id"].to_list())
        assert all(set(docs) <= allowed and len(docs) == DEPTH for docs in top.values())
    # a budget of a few bytes: every query is a block of its own
    tiny = rank_testset(ts, "tfidf-char", DEPTH, params=params_file(tmp_path, memory_budget_mb="0.000001"), progress=False)
    assert tiny == whole


def test_rank_testset_overrides_and_refusals(tmp_path):
    ts = forms_testset()
    params = params_file(tmp_path)
    kept = rank_testset(ts, "tfidf-char", DEPTH, params=params, corpora=(FEMININE,), self_match="keep", progress=False)
    assert set(kept) == {FEMININE}
    nurse = ts.queries.filter(ts.queries["text"] == "enfermeira")["id"][0]
    assert ts.corpus.filter(ts.corpus["id"] == kept[FEMININE][nurse][0])["text"][0] == "enfermeira"  # its own title
    with pytest.raises(EvalError, match="unknown model 'no-such-model'"):
        rank_testset(ts, "no-such-model", DEPTH, params=params, progress=False)
    with pytest.raises(EvalError, match="memory_budget_mb"):
        rank_testset(ts, "tfidf-char", DEPTH, params=params_file(tmp_path, memory_budget_mb=-1), progress=False)
