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
