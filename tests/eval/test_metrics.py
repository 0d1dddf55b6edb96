"""Metrics against their definitions (DESIGN §3), their properties, and independent libraries."""

import math

import numpy as np
import pytest
from rbo import RankingSimilarity

from eval.metrics import (
    accuracy_at_k,
    accuracy_at_k_batch,
    average_overlap,
    average_overlap_batch,
    average_precision,
    average_precision_batch,
    cumulative_overlap,
    identical_top1,
    identical_top1_batch,
    mean_average_precision,
    rbo,
    rbo_batch,
    symmetry_batch,
)


def harmonic(n: int) -> float:
    return sum(1 / i for i in range(1, n + 1))


# --- golden values from the definitions ----------------------------------------------------------------

def test_webber_example_values():
    a, b = list("abcdefg"), list("zcavwxy")
    assert average_overlap(a, b) == pytest.approx(153 / 490, abs=1e-12)
    assert rbo(a, b, 0.9) == pytest.approx(0.288217, abs=1e-6)


def test_cumulative_overlap_by_hand():
    # depth: 1 {a}/{z}=0, 2 {a,b}/{z,c}=0, 3 {a,b,c}/{z,c,a}=2, 4 +d/+v =2
    assert cumulative_overlap(list("abcd"), list("zcav")).tolist() == [0, 0, 2, 2]


@pytest.mark.parametrize("n", [2, 3, 4, 10, 101, 4700])
def test_average_overlap_of_reverse_list(n):
    items = list(range(n))
    expected = 2 * math.ceil(n / 2) / n - (harmonic(n) - harmonic(n // 2))
    assert average_overlap(items, items[::-1]) == pytest.approx(expected, abs=1e-12)


def test_reverse_is_half_only_for_short_lists():
    assert average_overlap([1, 2], [2, 1]) == 0.5
    assert average_overlap([1, 2, 3], [3, 2, 1]) == 0.5
    assert average_overlap(list(range(4700)), list(range(4700))[::-1]) == pytest.approx(1 - math.log(2), abs=1e-3)


def test_rbo_ext_closed_form_for_a_single_swap_at_the_top():
    # [a b c] vs [b a c]: X = 0, 2, 3; eq. 30: (1-p)/p (0 + 2/2 p^2 + 3/3 p^3) + 1 * p^3
    p = 0.9
    expected = (1 - p) / p * (p**2 + p**3) + p**3
    assert rbo(list("abc"), list("bac"), p) == pytest.approx(expected, abs=1e-15)


# --- properties -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("metric", [average_overlap, lambda a, b: rbo(a, b, 0.98), lambda a, b: rbo(a, b, 0.5)])
def test_properties(metric):
    rng = np.random.default_rng(1)
    for _ in range(20):
        a = list(rng.permutation(60)[: rng.integers(1, 60)])
        b = list(rng.permutation(60)[: rng.integers(1, 60)])
        value = metric(a, b)
        assert 0.0 <= value <= 1.0 + 1e-12
        assert metric(b, a) == pytest.approx(value, abs=1e-12)
        assert metric(a, a) == pytest.approx(1.0, abs=1e-12)
    assert metric(list("abc"), list("xyz")) == 0.0
    base = list("abcdefghij")
    swap_top = list("bacdefghij")
    swap_below = list("abcdefghji")
    assert metric(base, swap_top) < metric(base, swap_below) < 1.0


def test_empty_lists():
    assert average_overlap([], []) == 1.0 and rbo([], [], 0.9) == 1.0
    assert average_overlap([], ["a"]) == 0.0 and rbo(["a"], [], 0.9) == 0.0


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="repeats item 'a'"):
        average_overlap(["a", "b", "a"], ["a", "b", "c"])
    with pytest.raises(ValueError, match=r"p must be in \(0, 1\)"):
        rbo(["a"], ["a"], 1.0)
    with pytest.raises(ValueError, match="depth"):
        average_overlap(["a", "b"], ["a"], depth=2)


# --- agreement with the `rbo` package -------------------------------------------------------------------

def test_agreement_with_rbo_package_on_random_permutations():
    rng = np.random.default_rng(2)
    for n in (5, 50, 500):
        for _ in range(5):
            a, b = list(rng.permutation(n)), list(rng.permutation(n))
            ref = RankingSimilarity(a, b)
            assert average_overlap(a, b) == pytest.approx(ref.rbo(), abs=1e-9)  # p = 1.0 is AO
            for p in (0.9, 0.98):
                assert rbo(a, b, p) == pytest.approx(ref.rbo_ext(p=p), abs=1e-9)
                # for equal lengths, eq. 30 = the package's extrapolated prefix sum
                assert rbo(a, b, p) == pytest.approx(ref.rbo(p=p, ext=True), abs=1e-9)


def test_agreement_with_rbo_package_on_top_k_lists():
    rng = np.random.default_rng(3)
    for _ in range(30):
        a = list(rng.permutation(100)[: rng.integers(1, 40)])
        b = list(rng.permutation(100)[: rng.integers(1, 40)])
        ref = RankingSimilarity(a, b)
        assert average_overlap(a, b) == pytest.approx(ref.rbo(), abs=1e-9)
        assert rbo(a, b, 0.9) == pytest.approx(ref.rbo_ext(p=0.9), abs=1e-9)


def test_batch_equals_scalar_and_handles_padding():
    rng = np.random.default_rng(4)
    n, rows = 200, 6
    a = np.array([rng.permutation(n) for _ in range(rows)])
    b = np.array([rng.permutation(n) for _ in range(rows)])
    # Row 5 ranks only 150 items (both sides drop the same 50), padded with -1.
    keep = rng.permutation(n)[:150]
    a[5] = np.concatenate([[x for x in a[5] if x in set(keep)], -np.ones(50, int)])
    b[5] = np.concatenate([[x for x in b[5] if x in set(keep)], -np.ones(50, int)])
    ao = average_overlap_batch(a, b)
    r = rbo_batch(a, b, 0.98)
    for i in range(rows):
        x, y = [v for v in a[i] if v >= 0], [v for v in b[i] if v >= 0]
        assert ao[i] == pytest.approx(average_overlap(x, y), abs=1e-12)
        assert r[i] == pytest.approx(RankingSimilarity(x, y).rbo_ext(p=0.98), abs=1e-9)
    with pytest.raises(ValueError, match="different lengths"):
        average_overlap_batch(a[5:6], np.arange(n)[None, :])


# --- retrieval metrics ----------------------------------------------------------------------------------

def test_average_precision_by_hand():
    # relevant a, c, x (x never retrieved): (1/1 + 2/3) / 3
    assert average_precision(list("abcd"), {"a", "c", "x"}) == pytest.approx((1 + 2 / 3) / 3)
    with pytest.raises(ValueError, match="undefined"):
        average_precision(list("abc"), set())


def test_accuracy_and_identical_top1():
    assert accuracy_at_k(list("abc"), {"c"}, 2) == 0.0
    assert accuracy_at_k(list("abc"), {"c"}, 3) == 1.0
    assert identical_top1(list("abc"), list("acb")) and not identical_top1(list("abc"), list("bac"))
    ranking = np.array([[0, 1, 2], [2, 1, -1]])
    relevant = np.array([[False, False, True], [False, False, True]])
    assert accuracy_at_k_batch(ranking, relevant, 1).tolist() == [0.0, 1.0]
    assert identical_top1_batch(ranking, np.array([[0, 2, 1], [1, 2, -1]])).tolist() == [True, False]


def _ir_measures_inputs(rng, n_queries=12, n_docs=40):
    """A run whose scores tie often (rounded), some queries missing, relevant docs never retrieved."""
    doc_ids = [f"d{j:03d}" for j in range(n_docs)]
    qrels, run = {}, {}
    for q in range(n_queries):
        rel = rng.choice(n_docs, size=rng.integers(1, 8), replace=False)
        qrels[f"q{q}"] = {doc_ids[j]: 1 for j in rel}
        if q % 4 == 3:
            continue  # missing from the run: scores 0
        retrieved = rng.choice(n_docs, size=rng.integers(5, n_docs), replace=False)
        run[f"q{q}"] = {doc_ids[j]: float(np.round(rng.random(), 1)) for j in retrieved}
    return doc_ids, qrels, run


def _rank_run(run: dict[str, dict[str, float]]) -> dict[str, list[str]]:
    """Each query's retrieved documents in eval.ranking's order (the tie-break under test)."""
    from eval.ranking import rank_corpus

    ranked = {}
    for q, scores in run.items():
        ids = list(scores)
        ranked[q] = [ids[i] for i in rank_corpus(np.array([[scores[d] for d in ids]]), ids)[0]]
    return ranked


def test_map_equals_ir_measures_with_ties_and_missing_queries():
    import ir_measures
    from ir_measures import AP

    from eval.ranking import rank_corpus

    rng = np.random.default_rng(5)
    doc_ids, qrels, run = _ir_measures_inputs(rng)
    ranked = _rank_run(run)
    expected = {m.query_id: m.value for m in ir_measures.iter_calc([AP], qrels, run)}
    relevant = {q: set(d) for q, d in qrels.items()}
    for q in run:
        assert average_precision(ranked[q], relevant[q]) == pytest.approx(expected[q], abs=1e-12)
    assert mean_average_precision(ranked, relevant) == pytest.approx(
        ir_measures.calc_aggregate([AP], qrels, run)[AP], abs=1e-12
    )

    # The batch form over the whole corpus, with the same scores (unretrieved docs lowest).
    queries = sorted(run)
    scores = np.full((len(queries), len(doc_ids)), -1.0)
    rel = np.zeros((len(queries), len(doc_ids)), dtype=bool)
    for i, q in enumerate(queries):
        for d, s in run[q].items():
            scores[i, doc_ids.index(d)] = s
        for d in qrels[q]:
            rel[i, doc_ids.index(d)] = True
    full_run = {q: {d: float(scores[i, j]) for j, d in enumerate(doc_ids)} for i, q in enumerate(queries)}
    full_expected = {m.query_id: m.value for m in ir_measures.iter_calc([AP], {q: qrels[q] for q in queries}, full_run)}
    batch = average_precision_batch(rank_corpus(scores, doc_ids), rel)
    assert batch == pytest.approx([full_expected[q] for q in queries], abs=1e-12)


def test_map_equals_pytrec_eval():
    import pytrec_eval

    rng = np.random.default_rng(6)
    doc_ids, qrels, run = _ir_measures_inputs(rng)
    ranked = _rank_run(run)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)
    for q in run:
        assert average_precision(ranked[q], set(qrels[q])) == pytest.approx(per_query[q]["map"], abs=1e-12)


def test_map_skips_queries_without_relevant_items_and_rejects_all_empty():
    assert mean_average_precision({"q": ["a"]}, {"q": {"a"}, "empty": set()}) == 1.0
    with pytest.raises(ValueError, match="no query has a relevant item"):
        mean_average_precision({"q": ["a"]}, {"q": set()})
    ap = average_precision_batch(np.array([[0, 1]]), np.array([[False, False]]))
    assert np.isnan(ap[0])


def test_symmetry_batch_is_ao_and_rbo_together():
    from eval.metrics import symmetry_batch

    rng = np.random.default_rng(7)
    a = np.array([rng.permutation(100) for _ in range(4)])
    b = np.array([rng.permutation(100) for _ in range(4)])
    ao, r = symmetry_batch(a, b, 0.9)
    assert ao == pytest.approx(average_overlap_batch(a, b), abs=1e-15)
    assert r == pytest.approx(rbo_batch(a, b, 0.9), abs=1e-15)
    b[0, 1] = b[0, 0]
    with pytest.raises(ValueError, match="repeats an item"):
        symmetry_batch(a, b, 0.9)


def test_batch_on_top_k_lists_of_different_items():
    """Rows that are not permutations of one item set (top-k lists from a larger universe, some padded):
    the batch path equals the scalar definitions and the `rbo` package."""
    rng = np.random.default_rng(8)
    k, rows = 30, 12
    a = np.full((rows, k), -1)
    b = np.full((rows, k), -1)
    for i in range(rows):
        length = k if i % 3 else int(rng.integers(1, k))  # every third row is padded
        a[i, :length] = rng.permutation(1000)[:length]
        b[i, :length] = np.concatenate([rng.permutation(a[i, :length])[: length // 2],
                                        rng.permutation(np.arange(1000, 2000))[: length - length // 2]])
    ao, r = average_overlap_batch(a, b), rbo_batch(a, b, 0.9)
    for i in range(rows):
        x, y = [v for v in a[i] if v >= 0], [v for v in b[i] if v >= 0]
        assert ao[i] == pytest.approx(average_overlap(x, y), abs=1e-12)
        assert r[i] == pytest.approx(RankingSimilarity(x, y).rbo_ext(p=0.9), abs=1e-9)
    a[4, 7] = a[4, 3]
    with pytest.raises(ValueError, match="a: a row repeats an item"):
        average_overlap_batch(a, b)


def test_identical_batch_rankings_score_exactly_one():
    rng = np.random.default_rng(9)
    a = np.array([rng.permutation(4700) for _ in range(3)])
    a[2, 4000:] = -1  # a padded row
    ao, r = average_overlap_batch(a, a.copy()), rbo_batch(a, a.copy(), 0.98)
    assert np.all(ao == 1.0)
    assert r == pytest.approx(np.ones(3), abs=1e-12)


def test_batch_spanning_several_row_blocks_equals_scalar():
    """Batches are scored in blocks of rows; rows on both sides of a block boundary, padded or not, keep
    their values, and an error names the row in the whole batch."""
    rng = np.random.default_rng(10)
    rows, n = 30, 3000  # 21 rows per block at n = 3000
    a = np.array([rng.permutation(n) for _ in range(rows)])
    b = np.array([np.concatenate([x[:100], rng.permutation(x[100:])]) for x in a])
    for i in (20, 25):  # drop the same 7 items from both rankings of a row
        gone = set(rng.permutation(n)[:7].tolist())
        a[i] = np.concatenate([[x for x in a[i] if x not in gone], -np.ones(7, int)])
        b[i] = np.concatenate([[x for x in b[i] if x not in gone], -np.ones(7, int)])
    ao, r = symmetry_batch(a, b, 0.98)
    for i in (0, 20, 21, 25, 29):
        x, y = [v for v in a[i] if v >= 0], [v for v in b[i] if v >= 0]
        assert ao[i] == pytest.approx(average_overlap(x, y), abs=1e-12)
        assert r[i] == pytest.approx(rbo(x, y, 0.98), abs=1e-12)
    assert r[25] == pytest.approx(RankingSimilarity([v for v in a[25] if v >= 0], [v for v in b[25] if v >= 0]).rbo_ext(p=0.98), abs=1e-9)
    b[27, -1] = -1
    with pytest.raises(ValueError, match="row 27: rankings have different lengths"):
        symmetry_batch(a, b, 0.98)


def test_metrics_from_hits_agree_with_the_batch_definitions():
    """AP and acc@k from the retrieved relevant items only (what eval's blocks compute) equal the batch
    functions over whole rankings, padded rows and rows without relevant items included."""
    from eval.metrics import accuracy_from_first_hit, average_precision_from_hits, first_hit_positions

    rng = np.random.default_rng(3)
    rows, n = 40, 30
    ranking = np.array([rng.permutation(n) for _ in range(rows)])
    for r in range(0, rows, 4):
        ranking[r, n - 3:] = -1  # padded tail
    relevant = rng.random((rows, n)) < 0.15
    relevant[5] = False
    hits = np.take_along_axis(relevant, np.maximum(ranking, 0), axis=1) & (ranking >= 0)
    hit_rows, hit_pos = np.nonzero(hits)
    n_relevant = relevant.sum(axis=1)
    np.testing.assert_allclose(average_precision_from_hits(hit_rows, hit_pos, n_relevant),
                               average_precision_batch(ranking, relevant), rtol=1e-12, equal_nan=True)
    first = first_hit_positions(hit_rows, hit_pos, rows, n)
    for k in (1, 3, 10):
        expected = np.where(n_relevant > 0, accuracy_at_k_batch(ranking, relevant, k), np.nan)
        np.testing.assert_array_equal(accuracy_from_first_hit(first, n_relevant > 0, k), expected)


def test_rbo_weights_are_cached_with_the_bits_of_a_fresh_computation():
    """The powers p ** d are computed once per (p, n), not per block of rows: the same bits as the expression
    each block used to evaluate, and RBO over several blocks unchanged bit for bit."""
    from eval.metrics import _overlap_counts, _rbo_from_agreement, _rbo_weights, _zero_beyond_lengths

    for p, n in ((0.98, 1), (0.98, 25_000), (0.9, 4_700), (np.float64(0.5), 300)):
        fresh = p ** np.arange(1, n + 1, dtype=np.float64)
        cached = _rbo_weights(p, n)
        assert cached.tobytes() == fresh.tobytes() and _rbo_weights(p, n) is cached
        assert not cached.flags.writeable
    rng = np.random.default_rng(11)
    rows, n, p = 30, 3000, 0.98  # 21 rows per block: two blocks
    a = np.array([rng.permutation(n) for _ in range(rows)])
    b = np.array([np.concatenate([x[:100], rng.permutation(x[100:])]) for x in a])
    gone = set(rng.permutation(n)[:5].tolist())  # row 3 drops the same 5 items from both rankings
    a[3] = np.concatenate([[x for x in a[3] if x not in gone], -np.ones(5, int)])
    b[3] = np.concatenate([[x for x in b[3] if x not in gone], -np.ones(5, int)])
    lengths = np.where(np.arange(rows) == 3, n - 5, n)
    agreement = _overlap_counts(a, b, lengths) / np.arange(1, n + 1, dtype=np.float64)
    _zero_beyond_lengths(agreement, lengths)
    weights = p ** np.arange(1, n + 1, dtype=np.float64)  # the code before the cache, verbatim
    total = (agreement * weights).sum(axis=1)
    last = agreement[np.arange(rows), np.maximum(lengths, 1) - 1]
    before = np.where(lengths > 0, (1 - p) / p * total + last * p ** lengths.astype(np.float64), 1.0)
    assert _rbo_from_agreement(agreement, lengths, p).tobytes() == before.tobytes()
    assert _rbo_from_agreement(agreement[:21], lengths[:21], p).tobytes() == before[:21].tobytes()
    for check in (True, False):
        assert symmetry_batch(a, b, p, check=check)[1].tobytes() == before.tobytes()


def test_unchecked_lengths_come_from_the_padded_tail_alone():
    """``check=False`` reads row lengths from the padded tail columns only: the lengths and the values are those
    of the checked path, whatever the padding (none, one slot, a wide tail, a row of padding); rows of different
    lengths are still refused, and padding inside a row is what it no longer looks for."""
    from eval.metrics import _lengths, _tail_lengths

    rng = np.random.default_rng(12)
    n = 500
    for pads in ([n, n], [0, 0, 0], [0, 1, 0, 2], [0, 3, 70, 1, 0], [n, 0, 5]):
        a = np.array([rng.permutation(n) for _ in pads])
        b = np.array([rng.permutation(n) for _ in pads])
        for r, k in enumerate(pads):
            gone = set(rng.permutation(n)[:k].tolist())
            a[r] = np.concatenate([[x for x in a[r] if x not in gone], -np.ones(k, int)])
            b[r] = np.concatenate([[x for x in b[r] if x not in gone], -np.ones(k, int)])
        assert _tail_lengths(a, "a").tolist() == _lengths(a, "a").tolist() == [n - k for k in pads]
        checked, unchecked = symmetry_batch(a, b, 0.98), symmetry_batch(a, b, 0.98, check=False)
        assert all(x.tobytes() == y.tobytes() for x, y in zip(checked, unchecked))
    b[1, -1] = -1
    with pytest.raises(ValueError, match="row 1: rankings have different lengths"):
        symmetry_batch(a, b, 0.98, check=False)
    inside = np.array([[3, -1, 1, 2, 0]])
    with pytest.raises(ValueError, match="padding"):
        symmetry_batch(inside, inside.copy(), 0.98)
    assert _tail_lengths(inside, "a").tolist() == [5]  # not looked for without the check
    with pytest.raises(ValueError, match="2-D integer array"):
        symmetry_batch(a.astype(float), b, 0.98, check=False)
