"""Measures as named objects: names round-trip, a new measure is one class and one params.yaml line, and
the default measures give the figures stored before measures were objects."""

import json
from pathlib import Path

import numpy as np
import pytest

from eval import measures
from eval.errors import EvalError
from eval.evaluate import evaluate
from eval.measures import DEFAULT_MEASURES, QueryMeasure, parse_measure, register
from eval.models import CharTfidf, EmbeddingCache
from eval.params import EvalSettings, read_eval_settings
from eval.ranking import SCORES
from eval.report import tables_markdown
from eval.testset import write_testset

from .golden import MEASURES_BEFORE_NDCG, assert_json_close
from .testsets import make_testset

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("name", [*DEFAULT_MEASURES, "RBO(p=0.9)", "acc@3", "RBO@20(p=0.9)", "AO@20"])
def test_a_measure_prints_as_its_name(name):
    assert str(parse_measure(name)) == name
    assert parse_measure(name) == parse_measure(name) and len({parse_measure(name), parse_measure(name)}) == 1


@pytest.mark.parametrize("bad, says", [
    ("NDCG@10", "unknown measure 'NDCG'"),
    ("RBO(p=2)", r"RBO persistence p must be in \(0, 1\), got 2"),
    ("RBO(0.9)", "parameters are key=value"),
    ("RBO(p=high)", "p='high' is not a number"),
    ("RBO(q=0.9)", "unexpected keyword argument 'q'"),
    ("acc@0", "acc@k needs a cut-off k >= 1, got 0"),
    ("AO AP", "not a measure name"),
    ("AO@0", "AO@k needs a depth k >= 1, got 0"),
    ("RBO@20(k=3)", "the depth is the number after @"),
    ("RBO@20(p=1)", r"RBO persistence p must be in \(0, 1\), got 1"),
])
def test_a_bad_measure_name_says_what_is_wrong(bad, says):
    with pytest.raises(EvalError, match=says):
        parse_measure(bad)


def test_settings_name_their_measures_and_refuse_repeats():
    settings = EvalSettings(measures=("AO", "RBO(p=0.900)", "AP", "acc@1", "Gap( AP)"))
    assert settings.measures == ("AO", "RBO(p=0.9)", "AP", "acc@1", "Gap(AP)") and settings.rbo_name == "RBO(p=0.9)"
    assert settings.accuracy_k == (1,) and settings.with_measures("acc@1", "acc@10").accuracy_k == (1, 10)
    with pytest.raises(EvalError, match=r"measures \['AO'\] are listed twice"):
        EvalSettings(measures=("AO", "AO", "AP", "acc@1", "Gap(AP)"))
    with pytest.raises(EvalError, match="must include a pair measure"):
        EvalSettings(measures=("AP", "acc@1", "Gap(AP)"))


@pytest.fixture
def reciprocal_rank(monkeypatch):
    """A toy measure as a newcomer writes it: one class, registered; removed again after the test."""
    monkeypatch.setattr(measures, "MEASURES", dict(measures.MEASURES))

    @register
    class ReciprocalRank(QueryMeasure):
        name = "RR"
        definition = "1 / rank of the first relevant item (0 when none is retrieved)"

        def per_query(self, queries):
            retrieved = queries.first_hit < queries.ranking.shape[1]
            with np.errstate(divide="ignore"):
                rr = np.where(retrieved, 1.0 / (queries.first_hit + 1), 0.0)
            return np.where(queries.n_relevant > 0, rr, np.nan)

    return ReciprocalRank


def test_a_new_measure_is_one_class_and_one_params_line(tmp_path, reciprocal_rank):
    data = tmp_path / "data"
    write_testset(make_testset("pt"), data)
    params = tmp_path / "params.yaml"
    params.write_text("eval:\n  measures: [AO, RBO(p=0.98), AP, acc@1, acc@5, acc@10, identical_top1, Gap(AP), Gap(acc@1), RR]\n", encoding="utf-8")
    settings = read_eval_settings(params)
    doc = evaluate(data, ["pt"], CharTfidf(), EmbeddingCache(tmp_path / "c"), settings, progress=False)
    block = doc["languages"]["pt"]
    assert doc["settings"]["metrics"]["RR"].startswith("1 / rank")
    rows = [r for r in block["per_query"] if r["corpus"] == "masculine"]
    scored = [r for r in rows if r["RR"] is not None]
    assert scored and len(scored) == sum(r["AP"] is not None for r in rows)
    for r in scored:  # RR from its definition against the first relevant position that acc@k sees
        first = 1 if r["acc@1"] else 5 if r["acc@5"] else 10 if r["acc@10"] else None
        assert r["RR"] == 1.0 if first == 1 else (1 / 5 <= r["RR"] < 1 / 1 if first == 5 else
                                                  1 / 10 <= r["RR"] < 1 / 5 if first == 10 else r["RR"] < 1 / 10)
    for gender in ("feminine", "masculine"):
        fig = block["corpora"]["masculine"]["retrieval"]["RR"][gender]
        values = [r["RR"] for r in scored if r["gender"] == gender]
        assert fig["n"] == len(values) and fig["value"] == pytest.approx(np.mean(values), abs=1e-12)
    table = tables_markdown([doc])
    assert "## RR over masculine corpora" in table and f"| tfidf-char | {block['corpora']['masculine']['retrieval']['RR']['feminine']['value']:.3f}" in table
    # the figures of the other measures do not move when one is added
    plain = evaluate(data, ["pt"], CharTfidf(), EmbeddingCache(tmp_path / "c"), EvalSettings(), progress=False)
    for key in ("symmetry", "MAP", "accuracy", "parity"):
        assert plain["languages"]["pt"]["corpora"]["masculine"][key] == block["corpora"]["masculine"][key]


def test_default_measures_give_the_figures_stored_before_they_were_objects(tmp_path):
    """tests/eval/fixtures/results-v1-tfidf-char-small.json was written by `python -m eval run --model tfidf-char`
    on testsets.py's pt and es sets before measures were objects (commit 3610dcf)."""
    data = tmp_path / "data"
    for lang in ("pt", "es"):
        write_testset(make_testset(lang), data)
    stored = json.loads((FIXTURES / "results-v1-tfidf-char-small.json").read_text(encoding="utf-8"))
    doc = evaluate(data, ["es", "pt"], CharTfidf(), EmbeddingCache(tmp_path / "c"), EvalSettings(measures=MEASURES_BEFORE_NDCG),
                   progress=False)
    doc = json.loads(json.dumps(doc))
    for block in doc["languages"].values():
        del block["timing"]
    doc["testset"]["root"] = stored["testset"]["root"]
    # That toolkit did not name how scores are made (they were not exact yet): every figure is the same.
    assert doc["settings"].pop("scores") == SCORES
    # The content digests name the files' bytes, which changed when the format gained the `form` column
    # (same items, same qrels): the figures are what must not change.
    def without_digests(d: dict) -> dict:
        d = json.loads(json.dumps(d))
        d["testset"].pop("version"), d["testset"].pop("languages")
        for block in d["languages"].values():
            block.pop("testset_version")
        return d

    assert doc.pop("schema_version") == 2 and "schema_version" not in stored
    assert_json_close(without_digests(doc), without_digests(stored))
    doc["testset"] = stored["testset"]
    for lang, block in doc["languages"].items():
        block["testset_version"] = stored["languages"][lang]["testset_version"]
    assert (FIXTURES / "results-v1-tfidf-char-small.tables.md").read_text(encoding="utf-8") == tables_markdown([doc])


def _ranked_block(rng, n_queries=15, n_docs=40, k_max=16):
    """Queries over one corpus with tied scores (rounded), as eval ranks them, and the ir-measures inputs."""
    from eval.measures import QueryRankings
    from eval.metrics import first_hit_positions
    from eval.ranking import rank_corpus

    doc_ids = [f"d{j:03d}" for j in range(n_docs)]
    scores = np.round(rng.random((n_queries, n_docs)), 1)
    relevant = np.zeros((n_queries, n_docs), dtype=bool)
    for i in range(n_queries - 1):  # the last query has no relevant item: NaN, as AP gives
        relevant[i, rng.choice(n_docs, size=rng.integers(1, k_max), replace=False)] = True
    ranking = rank_corpus(scores, doc_ids)
    hits = np.take_along_axis(relevant, ranking, axis=1)
    rows, positions = np.nonzero(hits)
    block = QueryRankings(ranking, relevant, relevant.sum(axis=1), rows, positions,
                          first_hit_positions(rows, positions, n_queries, n_docs))
    qrels = {f"q{i}": {doc_ids[j]: 1 for j in np.flatnonzero(relevant[i])} for i in range(n_queries)}
    run = {f"q{i}": {d: float(scores[i, j]) for j, d in enumerate(doc_ids)} for i in range(n_queries)}
    return block, qrels, run


@pytest.mark.parametrize("k", [1, 3, 10])
def test_ndcg_equals_ir_measures_with_ties(k):
    """nDCG@k per query against ir-measures (trec_eval's ndcg_cut), on rankings with many tied scores."""
    import ir_measures

    block, qrels, run = _ranked_block(np.random.default_rng(11))
    ours = parse_measure(f"nDCG@{k}").per_query(block)
    expected = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.nDCG @ k], qrels, run)}
    for i, value in enumerate(ours[:-1]):
        assert value == pytest.approx(expected[f"q{i}"], abs=1e-12), i
    assert np.isnan(ours[-1])
    # not a vacuous match: some queries score 0, some 1 or in between
    assert np.nanmin(ours) == 0 and 0 < np.nanmax(ours) <= 1 and len(set(ours[:-1].round(12))) > 1


def test_a_gap_wraps_any_query_measure():
    gap = parse_measure("Gap(nDCG@10)")
    assert str(gap) == "Gap(nDCG@10)" and parse_measure(str(gap)) == gap
    assert (gap.difference_key, gap.paired_key, gap.pair_key) == (
        "nDCG@10_M-nDCG@10_F", "paired_nDCG@10_M-nDCG@10_F", "nDCG@10_M-nDCG@10_F")
    ap = parse_measure("Gap(AP)")  # the keys the results have always had
    assert (ap.difference_key, ap.paired_key, ap.form_key("doublet", "masculine")) == (
        "MAP_M-MAP_F", "paired_AP_M-AP_F", "paired_AP_doublet-AP_M")
    with pytest.raises(EvalError, match="Gap wraps a query measure"):
        parse_measure("Gap(identical_top1)")
    with pytest.raises(EvalError, match="unknown measure 'nope'"):
        parse_measure("Gap(nope)")


NDCG_PARAMS = "eval:\n  measures: [AO, RBO(p=0.98), AP, acc@1, acc@5, acc@10, identical_top1, Gap(AP), Gap(acc@1), nDCG@10, Gap(nDCG@10)]\n"


def test_ndcg_and_its_gap_are_one_class_and_one_params_line(tmp_path):
    """nDCG@10 is one class (eval/measures.py) and Gap(nDCG@10) wraps it; one params.yaml line turns both on, and
    they appear in the results, the tables, the DVC metrics rows, the report site and the audit, with the
    figures of AP, acc@1, AO and RBO exactly those of a run without them."""
    import subprocess
    import sys
    from dataclasses import replace

    from eval.audit import AuditSettings, run_audit
    from eval.audit_report import audit_markdown
    from eval.stats import paired_randomization_test

    repo = Path(__file__).resolve().parents[2]
    data = tmp_path / "data"
    for lang in ("pt", "es"):
        write_testset(make_testset(lang), data)
    params = tmp_path / "params.yaml"
    params.write_text(NDCG_PARAMS, encoding="utf-8")
    settings = read_eval_settings(params)
    assert [str(g) for g in settings.gaps] == ["Gap(AP)", "Gap(acc@1)", "Gap(nDCG@10)"]

    def cli(*args):
        done = subprocess.run([sys.executable, "-m", "eval", *args], cwd=repo, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        return done

    runs = {}
    for name, extra in (("plain", ()), ("ndcg", ("--params", str(params)))):
        cli("run", "--data", str(data), "--model", "tfidf-char", "--out", str(tmp_path / name), "--cache", str(tmp_path / "c"),
            "--summary", str(tmp_path / name / "metrics"), "--quiet", *extra)
        (path,) = (tmp_path / name).glob("tfidf-char__*.json")
        runs[name] = json.loads(path.read_text(encoding="utf-8"))
    doc = runs["ndcg"]
    pt = doc["languages"]["pt"]
    block = pt["corpora"]["masculine"]
    # the results: the measure's means per gender and its gap, from the per-query values
    rows = {r["query_id"]: r for r in pt["per_query"] if r["corpus"] == "masculine"}
    for gender in ("feminine", "masculine"):
        values = [r["nDCG@10"] for r in rows.values() if r["gender"] == gender and r["nDCG@10"] is not None]
        assert block["retrieval"]["nDCG@10"][gender]["value"] == pytest.approx(np.mean(values), abs=1e-12)
    pairs = [p for p in pt["per_pair"] if p["corpus"] == "masculine"]
    diffs = np.array([rows[p["m_id"]]["nDCG@10"] - rows[p["f_id"]]["nDCG@10"] for p in pairs
                      if rows[p["m_id"]]["nDCG@10"] is not None and rows[p["f_id"]]["nDCG@10"] is not None])
    paired = block["parity"]["paired_nDCG@10_M-nDCG@10_F"]
    assert paired["n"] == len(diffs) > 0 and paired["value"] == pytest.approx(diffs.mean(), abs=1e-12)
    assert paired["p_value"] == paired_randomization_test(diffs, resamples=10000, seed=0)
    assert block["parity"]["nDCG@10_M-nDCG@10_F"]["value"] == pytest.approx(
        block["retrieval"]["nDCG@10"]["masculine"]["value"] - block["retrieval"]["nDCG@10"]["feminine"]["value"], abs=1e-12)
    assert "paired_nDCG@10_M-nDCG@10_F" in doc["settings"]["metrics"]
    # the other figures do not move, nor does the metrics row of a run without nDCG
    plain = runs["plain"]["languages"]["pt"]["corpora"]["masculine"]
    for key in ("symmetry", "MAP", "accuracy"):
        assert block[key] == plain[key]
    assert {k: v for k, v in block["parity"].items() if "nDCG" not in k} == plain["parity"]
    # the tables: its own table and the parity table's columns
    tables = (tmp_path / "ndcg" / "tables.md").read_text(encoding="utf-8")
    assert "## nDCG@10 over masculine corpora" in tables
    assert "| nDCG@10_M − nDCG@10_F | paired nDCG@10_M − nDCG@10_F | p |" in tables
    # the DVC metrics rows: the graded gap's row entries beside AP's, AP's entries unchanged
    row = json.loads((tmp_path / "ndcg" / "metrics" / "tfidf-char.pt.json").read_text(encoding="utf-8"))
    plain_row = json.loads((tmp_path / "plain" / "metrics" / "tfidf-char.pt.json").read_text(encoding="utf-8"))
    assert set(row) - set(plain_row) == {"nDCG@10_M", "nDCG@10_F", "nDCG@10_M-nDCG@10_F", "paired_nDCG@10_M-nDCG@10_F",
                                         "paired_nDCG@10_M-nDCG@10_F_p"}
    assert {k: row[k] for k in plain_row} == plain_row
    assert row["paired_nDCG@10_M-nDCG@10_F"] == round(paired["value"], 4) + 0.0
    # the report site
    cli("report", str(tmp_path / "ndcg"), "--out", str(tmp_path / "site"))
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "paired nDCG@10_M − nDCG@10_F" in html and "nDCG@10 over masculine corpora" in html
    # the audit: the gap's per-pair vector is correlated between models and averaged like AP's
    class CharTfidf512(CharTfidf):  # a second model for the audit: fewer hash buckets, its own name
        def __init__(self):
            super().__init__(dimension=512)

        def _make_meta(self):
            return replace(super()._make_meta(), name="tfidf-char-512")

    audit, _ = run_audit(data, ["pt"], [CharTfidf(), CharTfidf512()], EmbeddingCache(tmp_path / "c"),
                         settings.with_measures("acc@10"), AuditSettings(tau=1, bootstrap_resamples=100), mitigation=False,
                         progress=False)
    corpus = audit["languages"]["pt"]["corpora"]["masculine"]
    assert list(corpus["correlation"]) == ["1-AO", "1-RBO(p=0.98)", "AP_M-AP_F", "nDCG@10_M-nDCG@10_F"]
    first = next(p for p in corpus["per_pair"] if p["scored"])
    m, f = rows[first["m_id"]]["nDCG@10"], rows[first["f_id"]]["nDCG@10"]
    assert first["models"]["tfidf-char"]["nDCG@10_M-nDCG@10_F"] == pytest.approx(m - f, abs=1e-12)
    assert "nDCG@10_M-nDCG@10_F" in audit_markdown(audit)


def test_the_golden_comparison_allows_an_ulp_not_a_change():
    assert_json_close({"a": 0.1 + 0.2, "b": [1, None, "x"]}, {"a": 0.3, "b": [1, None, "x"]})  # 0.30000000000000004
    for actual, expected in (({"a": 0.3 + 1e-9}, {"a": 0.3}), ({"b": 1, "a": 2}, {"a": 2, "b": 1}),
                             ({"a": True}, {"a": 1}), ({"a": [1]}, {"a": [1, 2]}), ({"a": None}, {"a": 0.0})):
        with pytest.raises(AssertionError):
            assert_json_close(actual, expected)


def test_rbo_at_depth_is_rbo_ext_of_the_top_k_as_the_rbo_package_computes_it():
    """RBO@k(p) and AO@k of each pair from the two rankings' first k items, against the independent ``rbo`` package
    on the cut lists: ``rbo_ext(p)`` (eq. 32) and ``rbo(p=p, ext=True)`` for RBO, ``rbo()`` (p = 1) for AO; rows
    shortened by self-match removal (padded with -1) are cut at their own length."""
    from rbo import RankingSimilarity

    from eval.measures import PairRankings

    rng = np.random.default_rng(7)
    n, rows, k = 60, 8, 20
    a = np.array([rng.permutation(n) for _ in range(rows)])
    b = np.array([rng.permutation(n) for _ in range(rows)])
    b[1] = a[1]  # identical rankings
    b[2, :k] = a[2, :k][::-1]  # the same top k, reversed
    for r, length in ((6, 12), (7, 30)):  # rankings shorter than k and longer, as self-match removal leaves them
        keep = set(rng.permutation(n)[:length].tolist())
        a[r] = [x for x in a[r] if x in keep] + [-1] * (n - length)
        b[r] = [x for x in b[r] if x in keep] + [-1] * (n - length)
    pairs = PairRankings(a, b, (0.98,))
    rbo_k, ao_k = parse_measure(f"RBO@{k}(p=0.9)").per_pair(pairs), parse_measure(f"AO@{k}").per_pair(pairs)
    for i in range(rows):
        x, y = [int(v) for v in a[i] if v >= 0][:k], [int(v) for v in b[i] if v >= 0][:k]
        ref = RankingSimilarity(x, y)
        assert rbo_k[i] == pytest.approx(ref.rbo_ext(p=0.9), abs=1e-12), i
        assert rbo_k[i] == pytest.approx(ref.rbo(p=0.9, ext=True), abs=1e-12), i
        assert ao_k[i] == pytest.approx(ref.rbo(), abs=1e-12), i
    assert rbo_k[1] == pytest.approx(1.0, abs=1e-12) and 0 < rbo_k[2] < 1 and ao_k[2] < 1  # same items, other order
    # not the package's bare prefix sum (rbo without ext), which scores identical top-k lists 1 - p^k
    assert RankingSimilarity(list(a[1, :k]), list(b[1, :k])).rbo(p=0.9) == pytest.approx(1 - 0.9**k)
    # at a depth beyond every ranking, the full-depth measures
    full = PairRankings(a, b, (0.9,))
    assert np.allclose(parse_measure(f"RBO@{n}(p=0.9)").per_pair(pairs), parse_measure("RBO(p=0.9)").per_pair(full), atol=1e-12)
    assert np.allclose(parse_measure(f"AO@{n}").per_pair(pairs), parse_measure("AO").per_pair(full), atol=1e-12)


def test_rbo_at_depth_is_one_params_line_and_moves_no_other_figure(tmp_path):
    """RBO@5(p=0.9) and AO@5 listed in eval.measures: each pair's value is the rbo package's on the top-5 lists the
    results show for the least symmetric pairs, the means are over the pairs, and the other figures are those of a
    run without them."""
    from rbo import RankingSimilarity

    data = tmp_path / "data"
    write_testset(make_testset("pt"), data)
    params = tmp_path / "params.yaml"
    params.write_text("eval:\n  measures: [AO, RBO(p=0.98), AO@5, RBO@5(p=0.9), AP, acc@1, acc@5, acc@10, identical_top1, "
                      "Gap(AP), Gap(acc@1), Gap(acc@5)]\n", encoding="utf-8")
    settings = read_eval_settings(params)
    doc = evaluate(data, ["pt"], CharTfidf(), EmbeddingCache(tmp_path / "c"), settings, progress=False)
    block = doc["languages"]["pt"]
    assert doc["settings"]["metrics"]["RBO@5(p=0.9)"].startswith("RBO_ext") and "top 5" in doc["settings"]["metrics"]["AO@5"]
    checked = 0
    for corpus, worst in block["worst_pairs"].items():
        for w in worst:
            m, f = [t["text"] for t in w["top_masculine"]][:5], [t["text"] for t in w["top_feminine"]][:5]
            ref = RankingSimilarity(m, f)
            assert w["RBO@5(p=0.9)"] == pytest.approx(ref.rbo_ext(p=0.9), abs=1e-12)
            assert w["AO@5"] == pytest.approx(ref.rbo(), abs=1e-12)
            checked += 1
    assert checked > 0
    for corpus in ("masculine", "feminine"):
        values = [r["RBO@5(p=0.9)"] for r in block["per_pair"] if r["corpus"] == corpus]
        fig = block["corpora"][corpus]["symmetry"]["RBO@5(p=0.9)"]
        assert fig["n"] == len(values) and fig["value"] == pytest.approx(np.mean(values), abs=1e-12)
        assert "acc@5_M-acc@5_F" in block["corpora"][corpus]["parity"]  # acc@k parity: Gap(acc@k)
    tables = tables_markdown([doc])
    assert "RBO@5(p=0.9) (pair measure), feminine vs masculine queries over masculine corpora" in tables
    assert f"| tfidf-char | {block['corpora']['masculine']['symmetry']['RBO@5(p=0.9)']['value']:.3f} [" in tables
    plain = evaluate(data, ["pt"], CharTfidf(), EmbeddingCache(tmp_path / "c"), EvalSettings(), progress=False)
    for corpus in ("masculine", "feminine"):
        mine, theirs = block["corpora"][corpus], plain["languages"]["pt"]["corpora"][corpus]
        assert {k: v for k, v in mine["symmetry"].items() if "@" not in k} == theirs["symmetry"]
        for key in ("MAP", "accuracy"):
            assert mine[key] == theirs[key]
        assert {k: v for k, v in mine["parity"].items() if "acc@5" not in k} == theirs["parity"]
