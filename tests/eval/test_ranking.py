"""The ranking function: trec_eval tie-break and the self-match policy."""

import numpy as np
import pytest

from eval.ranking import TIE_BREAK, rank_corpus, self_match_mask


def test_ties_break_by_document_id_descending():
    doc_ids = ["b", "a", "d", "c"]
    scores = np.array([[0.5, 0.5, 0.9, 0.5], [0.1, 0.1, 0.1, 0.1]])
    order = rank_corpus(scores, doc_ids)
    assert [[doc_ids[i] for i in row] for row in order] == [["d", "c", "b", "a"], ["d", "c", "b", "a"]]
    assert "id descending" in TIE_BREAK


def test_order_does_not_depend_on_corpus_order():
    rng = np.random.default_rng(0)
    ids = [f"t{j}" for j in range(30)]
    scores = np.round(rng.random((3, 30)), 1)
    perm = rng.permutation(30)
    a = rank_corpus(scores, ids)
    b = rank_corpus(scores[:, perm], [ids[j] for j in perm])
    assert [[ids[i] for i in row] for row in a] == [[ids[perm[i]] for i in row] for row in b]


def test_self_match_drop_and_keep():
    doc_ids = ["x", "y", "z"]
    mask = self_match_mask([["Lawyer"], ["Nurse", "Attorney"]], [["Lawyer", "Attorney"], ["Judge"], ["Nurse"]])
    assert mask.tolist() == [[True, False, False], [True, False, True]]
    scores = np.array([[0.9, 0.5, 0.1], [0.9, 0.5, 0.1]])
    assert rank_corpus(scores, doc_ids, self_matches=mask).tolist() == [[1, 2, -1], [1, -1, -1]]
    assert rank_corpus(scores, doc_ids, self_matches=mask, policy="keep").tolist() == [[0, 1, 2], [0, 1, 2]]


def test_bad_input():
    with pytest.raises(ValueError, match="self-match policy"):
        rank_corpus(np.zeros((1, 2)), ["a", "b"], policy="ignore")
    with pytest.raises(ValueError, match="unique"):
        rank_corpus(np.zeros((1, 2)), ["a", "a"])
    with pytest.raises(ValueError, match="NaN"):
        rank_corpus(np.array([[np.nan, 1.0]]), ["a", "b"])
    with pytest.raises(ValueError, match="2 document ids for 3"):
        rank_corpus(np.zeros((1, 3)), ["a", "b"])


def test_float32_scores_rank_exactly_as_the_two_key_sort():
    """float32 scores (what models give) take a one-key sort; it must equal the float64 lexsort order,
    with ties (also -0.0 vs 0.0), negative scores and dropped self-matches."""
    rng = np.random.default_rng(1)
    ids = [f"d{j:04d}" for j in rng.permutation(3000)]
    scores = (np.round(rng.standard_normal((40, 3000)), 1) * 0.3).astype(np.float32)
    scores[0, :10] = -0.0
    scores[0, 10:20] = 0.0
    scores[1, :] = scores[1, 0]  # one row all tied
    mask = rng.random(scores.shape) < 0.01
    for kw in ({}, {"self_matches": mask}):
        fast = rank_corpus(scores, ids, **kw)
        slow = rank_corpus(scores.astype(np.float64), ids, **kw)
        assert np.array_equal(fast, slow)
    top = rank_corpus(scores[:1], ids)[0]
    zeros = [ids[j] for j in top if scores[0, j] == 0]
    assert zeros == sorted(zeros, reverse=True)  # -0.0 and 0.0 tie, broken by id descending
    small = ["b", "a", "d", "c"]
    assert [small[i] for i in rank_corpus(np.float32([[0.5, 0.5, 0.9, 0.5]]), small)[0]] == ["d", "c", "b", "a"]
